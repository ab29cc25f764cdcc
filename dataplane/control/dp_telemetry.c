/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry commands under /roce/ and the JSON summary printed at exit.
 * Both read the per-lcore counters while the lcores run; totals may be a
 * burst apart, never torn within one 64-bit counter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "dp.h"
#include "dp_acl.h"
#include "dp_rate.h"
#include "dp_tel_util.h"
#include "dp_telemetry_cc.h"

static void
ip_text(const uint8_t *b, uint8_t ver, char *buf, size_t len)
{
	struct cfg_ip ip = { .ver = ver };

	memcpy(ip.b, b, ver == 6 ? 16 : 4);
	cfg_ip_format(&ip, buf, len);
}

static uint64_t
drops_total(const struct dp_stats *s)
{
	uint64_t t = 0;

	for (int i = 1; i < DP_DROP_MAX; i++)
		t += s->drops[i];
	return t;
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_stats s;
	uint64_t rx = 0, tx = 0;
	char key[RTE_TEL_MAX_STRING_LEN];

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	dp_stats_sum(&s);
	for (uint16_t p = 0; p < dp.n_ports; p++) {
		rx += s.rx_pkts[p];
		tx += s.tx_pkts[p];
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx_packets", rx);
	rte_tel_data_add_dict_u64(d, "tx_packets", tx);
	rte_tel_data_add_dict_u64(d, "forwarded_egress", s.fwd_egress);
	rte_tel_data_add_dict_u64(d, "forwarded_ingress", s.fwd_ingress);
	rte_tel_data_add_dict_u64(d, "forwarded_hairpin", s.fwd_hairpin);
	rte_tel_data_add_dict_u64(d, "cnp_forwarded", s.cnp_forwarded);
	rte_tel_data_add_dict_u64(d, "mr_translated", s.mr_translated);
	rte_tel_data_add_dict_u64(d, "revocations", dp_acl_revocations());
	rte_tel_data_add_dict_u64(d, "naks_sent", s.naks_sent);
	rte_tel_data_add_dict_u64(d, "naks_refused", s.naks_refused);
	rte_tel_data_add_dict_u64(d, "mark_hits", s.mark_hits);
	rte_tel_data_add_dict_u64(d, "shaped", s.shaped);
	rte_tel_data_add_dict_u64(d, "backpressure_skips", s.bp_skips);
	rte_tel_data_add_dict_u64(d, "cnp_sent", s.cnp_sent);
	rte_tel_data_add_dict_u64(d, "cnp_consumed", s.cnp_consumed);
	rte_tel_data_add_dict_u64(d, "ce_cleared", s.ce_cleared);
	rte_tel_data_add_dict_u64(d, "conn_foreign", s.conn_foreign);
	rte_tel_data_add_dict_u64(d, "dropped", drops_total(&s));
	for (uint16_t p = 0; p < dp.n_ports; p++) {
		struct rte_tel_data *pd = rte_tel_data_alloc();

		if (!pd)
			return -ENOMEM;
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_string(pd, "name", dp.ports[p].name);
		rte_tel_data_add_dict_string(pd, "device", dp.ports[p].device);
		rte_tel_data_add_dict_u64(pd, "rx_packets", s.rx_pkts[p]);
		rte_tel_data_add_dict_u64(pd, "rx_bytes", s.rx_bytes[p]);
		rte_tel_data_add_dict_u64(pd, "tx_packets", s.tx_pkts[p]);
		rte_tel_data_add_dict_u64(pd, "tx_bytes", s.tx_bytes[p]);
		if (rte_tel_data_add_dict_container(d, dp_tel_key(dp.ports[p].name, key, sizeof(key)), pd, 0))
			rte_tel_data_free(pd);
	}
	return 0;
}

static int
tel_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_stats s;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	dp_stats_sum(&s);
	rte_tel_data_start_dict(d);
	for (int i = 1; i < DP_DROP_MAX; i++)
		rte_tel_data_add_dict_u64(d, dp_drop_names[i], s.drops[i]);
	return 0;
}

/* The stage profile summed over lcores: cycles per frame of each stage, false when off or empty. */
static bool
stages_sum(double *per_pkt, uint64_t *bursts, uint64_t *pkts)
{
	uint64_t cyc[DP_STAGE_MAX] = { 0 };

	*bursts = *pkts = 0;
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const struct dp_stage_prof *p = &dp.lcores[l].prof;

		for (int s = 0; s < DP_STAGE_MAX; s++)
			cyc[s] += p->cycles[s];
		*bursts += p->bursts;
		*pkts += p->pkts;
	}
	for (int s = 0; s < DP_STAGE_MAX; s++)
		per_pkt[s] = *pkts ? (double)cyc[s] / (double)*pkts : 0;
	return dp.prof_every && *pkts;
}

static int
tel_stages(const char *cmd, const char *params, struct rte_tel_data *d)
{
	double per_pkt[DP_STAGE_MAX], total = 0;
	uint64_t bursts, pkts;
	struct rte_tel_data *c = rte_tel_data_alloc();

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (!c)
		return -1;
	stages_sum(per_pkt, &bursts, &pkts);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "every", dp.prof_every);
	rte_tel_data_add_dict_u64(d, "bursts", bursts);
	rte_tel_data_add_dict_u64(d, "packets", pkts);
	for (int s = 0; s < DP_STAGE_MAX; s++)
		total += per_pkt[s];
	/* Telemetry dictionaries hold no doubles in 22.11: thousandths of a cycle. */
	rte_tel_data_start_dict(c);
	for (int s = 0; s < DP_STAGE_MAX; s++)
		rte_tel_data_add_dict_u64(c, dp_stage_names[s], (uint64_t)(per_pkt[s] * 1000 + 0.5));
	rte_tel_data_add_dict_u64(c, "total", (uint64_t)(total * 1000 + 0.5));
	rte_tel_data_add_dict_container(d, "millicycles_per_packet", c, 0);
	return 0;
}

/* A tenant's rate control: its "shaping" object in /roce/tenants. */
static int
shaping_add(const struct ovl *o, uint32_t t, struct rte_tel_data *td)
{
	struct rte_tel_data *sd = rte_tel_data_alloc(), *dd;
	struct shaper_tenant_stats st;
	uint64_t cp_queued;

	if (!sd)
		return -ENOMEM;
	dd = rte_tel_data_alloc();
	if (!dd) {
		rte_tel_data_free(sd);
		return -ENOMEM;
	}
	dp_rate_tenant_stats(o, t, &st, &cp_queued);
	rte_tel_data_start_dict(sd);
	rte_tel_data_add_dict_u64(sd, "configured_bps", st.rate_bps);
	rte_tel_data_add_dict_u64(sd, "burst_bytes", st.burst_bytes);
	rte_tel_data_add_dict_u64(sd, "achieved_bps", st.achieved_bps);
	rte_tel_data_add_dict_int(sd, "tokens", (int)RTE_MAX(RTE_MIN(st.tokens, (int64_t)INT32_MAX), (int64_t)INT32_MIN));
	rte_tel_data_add_dict_u64(sd, "queued_bytes", st.queued_bytes);
	rte_tel_data_add_dict_u64(sd, "cp_queued_bytes", cp_queued);
	rte_tel_data_add_dict_u64(sd, "queue_limit_bytes", st.queued_limit);
	rte_tel_data_add_dict_u64(sd, "backpressured", st.full);
	rte_tel_data_add_dict_u64(sd, "backpressure_us", st.backpressure_ns / 1000);
	rte_tel_data_add_dict_u64(sd, "watchdog_dropping", st.dropping);
	rte_tel_data_add_dict_u64(sd, "watchdog_trips", st.watchdog_trips);
	rte_tel_data_add_dict_u64(sd, "connections", st.conns);
	rte_tel_data_add_dict_u64(sd, "queued_packets_total", st.enq_pkts);
	rte_tel_data_add_dict_u64(sd, "sent_packets", st.deq_pkts);
	rte_tel_data_add_dict_u64(sd, "cut_through_packets", st.cut_pkts);
	rte_tel_data_add_dict_u64(sd, "sent_bytes", st.deq_bytes);
	rte_tel_data_add_dict_u64(sd, "charged_bytes", st.charged_bytes);
	rte_tel_data_start_dict(dd);
	for (int v = SHAPER_DROP_WATCHDOG; v < SHAPER_DROP_MAX; v++) {
		char k[64];

		snprintf(k, sizeof(k), "%s_packets", shaper_drop_name((enum shaper_verdict)v));
		rte_tel_data_add_dict_u64(dd, k, st.drop_pkts[v]);
		snprintf(k, sizeof(k), "%s_messages", shaper_drop_name((enum shaper_verdict)v));
		rte_tel_data_add_dict_u64(dd, k, st.drop_msgs[v]);
	}
	rte_tel_data_add_dict_container(sd, "drops", dd, 0);
	rte_tel_data_add_dict_container(td, "shaping", sd, 0);
	return 0;
}

static int
tenants_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct ovl *o = dp.ovl;
	char key[RTE_TEL_MAX_STRING_LEN];

	RTE_SET_USED(cmd);
	rte_tel_data_start_dict(d);
	for (uint32_t t = 0; t < o->n_tenants; t++) {
		struct dp_tenant_stats s;
		struct rte_tel_data *td;

		if (params && *params && strcmp(params, o->tenants[t].name))
			continue;
		td = rte_tel_data_alloc();
		if (!td)
			return -ENOMEM;
		dp_tenant_stats_sum(o->tenants[t].slot, &s);
		rte_tel_data_start_dict(td);
		rte_tel_data_add_dict_string(td, "name", o->tenants[t].name);
		rte_tel_data_add_dict_u64(td, "vni", o->tenants[t].vni);
		rte_tel_data_add_dict_u64(td, "qps", o->tenants[t].n_qps);
		rte_tel_data_add_dict_u64(td, "max_qps", o->tenants[t].max_qps);
		rte_tel_data_add_dict_u64(td, "local_qps", o->tenants[t].n_local_qps);
		rte_tel_data_add_dict_u64(td, "rate_bps", o->tenants[t].rate.set ? o->tenants[t].rate.bps : 0);
		rte_tel_data_add_dict_string(td, "mr_check", o->tenants[t].mr_enforce ? "enforce" : "off");
		rte_tel_data_add_dict_u64(td, "egress_packets", s.egress_pkts);
		rte_tel_data_add_dict_u64(td, "egress_bytes", s.egress_bytes);
		rte_tel_data_add_dict_u64(td, "ingress_packets", s.ingress_pkts);
		rte_tel_data_add_dict_u64(td, "ingress_bytes", s.ingress_bytes);
		rte_tel_data_add_dict_u64(td, "dropped", s.drops);
		if (shaping_add(o, t, td) < 0)
			return -ENOMEM;
		if (rte_tel_data_add_dict_container(d, dp_tel_key(o->tenants[t].name, key, sizeof(key)), td, 0))
			rte_tel_data_free(td);
	}
	return 0;
}

/* When a connection was first seen, either way: TSC, 0 if never. */
static uint64_t
seen_first(const struct dp_conn_state *st)
{
	uint64_t e = st->egress.first_seen, i = st->ingress.first_seen;

	return !e ? i : !i ? e : RTE_MIN(e, i);
}

/*
 * /roce/connections[,TENANT[,START]]: at most TEL_CONN_PAGE connections
 * from START (default 0), optionally of one tenant; "total" and "next" say
 * how to page on.
 */
static int
connections_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct ovl *o = dp.ovl;
	char tenant[64] = "";
	struct dp_tel_page pg = { 0 };

	RTE_SET_USED(cmd);
	if (dp_tel_page_params(params, tenant, sizeof(tenant), &pg.start) < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];
		const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
		const struct ovl_endpoint *le, *re;
		const struct dp_conn_state *st = dp_conn_state(c->state);
		uint32_t lei, rei;
		struct rte_tel_data *cd;
		struct shaper_conn_stats sh;
		char ip[64], rule[RTE_TEL_MAX_STRING_LEN], ops[32];

		if (!ovl_live(c) || (*tenant && strcmp(tenant, o->tenants[c->tenant].name)))
			continue;
		if (!dp_tel_page_take(&pg))
			continue;
		cd = rte_tel_data_alloc();
		if (!cd)
			return -ENOMEM;
		rte_tel_data_start_dict(cd);
		rte_tel_data_add_dict_string(cd, "tenant", o->tenants[c->tenant].name);
		/* A half knows one QP: the source's (OVL_HALF_OUT, local) or the remote's QPN is left out. */
		if (c->half)
			rte_tel_data_add_dict_string(cd, "half", ovl_half_name(c->half));
		ovl_conn_ends(o, c, &lei, &rei);
		le = &o->endpoints[lei];
		re = &o->endpoints[rei];
		ip_text(le->vip.b, le->vip.ver, ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "local_vip", ip);
		if (c->half != OVL_HALF_OUT) {
			rte_tel_data_add_dict_u64(cd, "local_vqpn", l->vqpn);
			rte_tel_data_add_dict_u64(cd, "local_pqpn", l->pqpn);
		}
		ip_text(re->vip.b, re->vip.ver, ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "remote_vip", ip);
		if (c->half != OVL_HALF_IN) {
			rte_tel_data_add_dict_u64(cd, "remote_vqpn", r->vqpn);
			rte_tel_data_add_dict_u64(cd, "remote_pqpn", r->pqpn);
		}
		ip_text(re->host.b, re->host.ver, ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "remote_host", ip);
		rte_tel_data_add_dict_string(cd, "type", l->type == CFG_QP_UC ? "uc" : l->type == CFG_QP_XRC_INI ?
					     "xrc_ini" : l->type == CFG_QP_XRC_TGT ? "xrc_tgt" : "rc");
		rte_tel_data_add_dict_u64(cd, "hairpin", c->hairpin);
		rte_tel_data_add_dict_u64(cd, "rate_bps", c->rate_bps);
		dp_rate_conn_stats(o, i, &sh);
		rte_tel_data_add_dict_u64(cd, "pacing_bps", sh.pacing_bps);
		rte_tel_data_add_dict_u64(cd, "dcqcn_bps", sh.cc_bps);
		rte_tel_data_add_dict_u64(cd, "queued_bytes", sh.queued_bytes);
		rte_tel_data_add_dict_u64(cd, "queued_packets", sh.queued_items);
		rte_tel_data_add_dict_u64(cd, "egress_packets", st->egress.pkts);
		rte_tel_data_add_dict_u64(cd, "egress_bytes", st->egress.bytes);
		rte_tel_data_add_dict_u64(cd, "ingress_packets", st->ingress.pkts);
		rte_tel_data_add_dict_u64(cd, "ingress_bytes", st->ingress.bytes);
		rte_tel_data_add_dict_u64(cd, "first_seen_ns", dp_acl_tsc_to_ns(seen_first(st)));
		rte_tel_data_add_dict_u64(cd, "last_seen_ns",
					  dp_acl_tsc_to_ns(RTE_MAX(st->egress.last_seen, st->ingress.last_seen)));
		rte_tel_data_add_dict_string(cd, "verdict", dp_acl_verdict(o, c, st, rule, sizeof(rule)));
		rte_tel_data_add_dict_string(cd, "rule", rule);
		rte_tel_data_add_dict_string(cd, "allowed_l_to_r", dp_acl_ops_text(c->acl_allow[OVL_DIR_L2R] &
					     ovl_type_ops(c->l_type), ops, sizeof(ops)));
		rte_tel_data_add_dict_string(cd, "allowed_r_to_l", dp_acl_ops_text(c->acl_allow[OVL_DIR_R2L] &
					     ovl_type_ops(c->l_type), ops, sizeof(ops)));
		dp_tel_page_add(d, i, cd, &pg);
	}
	dp_tel_page_end(d, &pg);
	return 0;
}

TEL_LOCKED(tel_tenants, tenants_locked)
TEL_LOCKED(tel_connections, connections_locked)

/*
 * /roce/reload[,PATH]: re-read the configuration (or load PATH) and answer
 * with the outcome, as a reload by SIGHUP would log it.
 */
static int
tel_reload(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_reload_report rep;
	char path[4096];

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&dp.ctl_lock);
	snprintf(path, sizeof(path), "%s", params && *params ? params : dp.config_path);
	pthread_mutex_unlock(&dp.ctl_lock);
	dp_config_apply(path, &rep);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "result", rep.applied ? "applied" : "rejected");
	rte_tel_data_add_dict_string(d, "config", path);
	if (!rep.applied) {
		struct rte_tel_data *e = rte_tel_data_alloc();

		if (!e) {
			dp_reload_report_free(&rep);
			return -ENOMEM;
		}
		rte_tel_data_start_array(e, RTE_TEL_STRING_VAL);
		for (uint32_t i = 0; i < rep.errs.n; i++)
			rte_tel_data_add_array_string(e, rep.errs.msg[i]);
		rte_tel_data_add_dict_container(d, "errors", e, 0);
	} else {
		rte_tel_data_add_dict_u64(d, "connections_added", rep.conns_added);
		rte_tel_data_add_dict_u64(d, "connections_removed", rep.conns_removed);
		rte_tel_data_add_dict_u64(d, "connections_changed", rep.conns_changed);
		rte_tel_data_add_dict_u64(d, "connections_kept", rep.conns_kept);
		rte_tel_data_add_dict_u64(d, "tenants_added", rep.tenants_added);
		rte_tel_data_add_dict_u64(d, "tenants_removed", rep.tenants_removed);
		rte_tel_data_add_dict_u64(d, "qps_before", rep.qps_before);
		rte_tel_data_add_dict_u64(d, "qps_after", rep.qps_after);
		rte_tel_data_add_dict_u64(d, "mrs_before", rep.mrs_before);
		rte_tel_data_add_dict_u64(d, "mrs_after", rep.mrs_after);
		rte_tel_data_add_dict_u64(d, "load_us", (uint64_t)(rep.load_ms * 1000));
		rte_tel_data_add_dict_u64(d, "build_us", (uint64_t)(rep.build_ms * 1000));
		rte_tel_data_add_dict_u64(d, "publish_us", (uint64_t)(rep.publish_ms * 1000));
		rte_tel_data_add_dict_u64(d, "read_us", (uint64_t)(rep.load.read_ms * 1000));
		rte_tel_data_add_dict_u64(d, "parse_us", (uint64_t)(rep.load.parse_ms * 1000));
		rte_tel_data_add_dict_u64(d, "check_us", (uint64_t)(rep.load.check_ms * 1000));
		rte_tel_data_add_dict_u64(d, "incremental", rep.incremental);
	}
	dp_reload_report_free(&rep);
	return 0;
}

int
dp_telemetry_init(void)
{
	int rc = 0;

	rc |= rte_telemetry_register_cmd("/roce/stats", tel_stats,
					 "Switch totals and per-port counters. No parameters.");
	rc |= rte_telemetry_register_cmd("/roce/drops", tel_drops,
					 "Dropped frames by named reason. No parameters.");
	rc |= rte_telemetry_register_cmd("/roce/tenants", tel_tenants,
					 "Per-tenant counters and quota. Parameter: optional tenant name.");
	rc |= rte_telemetry_register_cmd("/roce/connections", tel_connections,
					 "Connections, 32 a page. Parameters: [tenant[,start]].");
	rc |= dp_dcqcn_telemetry_init();
	rc |= rte_telemetry_register_cmd("/roce/stages", tel_stages,
					 "TSC cycles per frame of each stage of the path (--stage-cycles). No parameters.");
	rc |= dp_acl_telemetry_init();
	rc |= dp_lcores_telemetry_init();
	rc |= rte_telemetry_register_cmd("/roce/reload", tel_reload,
					 "Re-read the configuration, or load another. Parameter: optional path.");
	return rc ? -1 : 0;
}

void
dp_summary_write(FILE *f, const char *extra_json)
{
	struct dp_stats s;
	uint64_t rx = 0, tx = 0;
	const struct ovl *o = dp.ovl;

	dp_stats_sum(&s);
	for (uint16_t p = 0; p < dp.n_ports; p++) {
		rx += s.rx_pkts[p];
		tx += s.tx_pkts[p];
	}
	fprintf(f, "{\"rx_packets\": %lu, \"tx_packets\": %lu, ", rx, tx);
	fprintf(f, "\"forwarded\": {\"egress\": %lu, \"ingress\": %lu, \"hairpin\": %lu}, ", s.fwd_egress,
		s.fwd_ingress, s.fwd_hairpin);
	fprintf(f, "\"cnp_forwarded\": %lu, \"mr_translated\": %lu, \"mark_hits\": %lu, ", s.cnp_forwarded,
		s.mr_translated, s.mark_hits);
	fprintf(f, "\"revocations\": %lu, \"naks_sent\": %lu, \"naks_refused\": %lu, ", dp_acl_revocations(),
		s.naks_sent, s.naks_refused);
	fprintf(f, "\"shaped\": %lu, \"backpressure_skips\": %lu, \"cnp_sent\": %lu, \"cnp_consumed\": %lu, "
		"\"ce_cleared\": %lu, ", s.shaped, s.bp_skips, s.cnp_sent, s.cnp_consumed, s.ce_cleared);
	fprintf(f, "\"dropped\": %lu, \"drops\": {", drops_total(&s));
	for (int i = 1; i < DP_DROP_MAX; i++)
		fprintf(f, "%s\"%s\": %lu", i > 1 ? ", " : "", dp_drop_names[i], s.drops[i]);
	fprintf(f, "}, \"ports\": {");
	for (uint16_t p = 0; p < dp.n_ports; p++)
		fprintf(f, "%s\"%s\": {\"device\": \"%s\", \"rx_packets\": %lu, \"rx_bytes\": %lu, "
			"\"tx_packets\": %lu, \"tx_bytes\": %lu}", p ? ", " : "", dp.ports[p].name,
			dp.ports[p].device, s.rx_pkts[p], s.rx_bytes[p], s.tx_pkts[p], s.tx_bytes[p]);
	fprintf(f, "}, \"tenants\": {");
	for (uint32_t t = 0; t < o->n_tenants; t++) {
		struct dp_tenant_stats ts;

		dp_tenant_stats_sum(o->tenants[t].slot, &ts);
		fprintf(f, "%s\"%s\": {\"egress_packets\": %lu, \"egress_bytes\": %lu, \"ingress_packets\": %lu, "
			"\"ingress_bytes\": %lu, \"dropped\": %lu, \"qps\": %u, \"max_qps\": %u}",
			t ? ", " : "", o->tenants[t].name, ts.egress_pkts, ts.egress_bytes, ts.ingress_pkts,
			ts.ingress_bytes, ts.drops, o->tenants[t].n_qps, o->tenants[t].max_qps);
	}
	fprintf(f, "}, \"conn_foreign\": %lu, ", s.conn_foreign);
	dp_lcores_summary(f);
	double per_pkt[DP_STAGE_MAX];
	uint64_t bursts, pkts;

	if (stages_sum(per_pkt, &bursts, &pkts)) {
		fprintf(f, ", \"stage_cycles\": {\"bursts\": %lu, \"packets\": %lu", bursts, pkts);
		for (int st = 0; st < DP_STAGE_MAX; st++)
			fprintf(f, ", \"%s\": %.1f", dp_stage_names[st], per_pkt[st]);
		fprintf(f, "}");
	}
	fprintf(f, "%s%s}\n", extra_json ? ", " : "", extra_json ? extra_json : "");
	fflush(f);
}
