/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus exporter's text (dp_metrics.h; the HTTP side is
 * dp_metrics_http.c, on libmicrohttpd).  Every metric
 * family is written whole (HELP, TYPE, then its samples), as the text
 * format requires; histograms give cumulative counts at every fourth bucket
 * bound of estats/ from 1.024 us (about 4 bounds per octave, 96 in all) and
 * +Inf, so each "le" count is exact.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <rte_rcu_qsbr.h>

#include "dp.h"
#include "dp_estats.h"
#include "dp_metrics.h"

struct out {
	char *p;
	size_t len, cap;
	bool oom;
	char *lab;                /* esc()'s result, grown to fit */
	size_t lab_cap;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
			return;
		}
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		size_t cap = o->cap * 2 + (size_t)n;
		char *p = realloc(o->p, cap);

		if (!p) {
			o->oom = true;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
}

static void
family(struct out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * A label value with \, " and newline escaped, as the text format wants,
 * whole whatever its length (two long tenant names must stay two series): in
 * @o's buffer, valid until the next call.  "" once out of memory.
 */
static const char *
esc(struct out *o, const char *s)
{
	size_t k = 0, need = 2 * strlen(s) + 1;
	char *buf;

	if (need > o->lab_cap) {
		char *p = realloc(o->lab, need);

		if (!p) {
			o->oom = true;
			return "";
		}
		o->lab = p;
		o->lab_cap = need;
	}
	buf = o->lab;
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') {
			buf[k++] = '\\';
			buf[k++] = *s;
		} else if (*s == '\n') {
			buf[k++] = '\\';
			buf[k++] = 'n';
		} else {
			buf[k++] = *s;
		}
	}
	buf[k] = 0;
	return buf;
}

/* Nanoseconds as seconds, exactly: "0.000001024". */
static const char *
seconds(uint64_t ns, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);

	while (n > 1 && buf[n - 1] == '0')
		buf[--n] = 0;
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = 0;
	return buf;
}

/* One histogram's samples; @labels are the series' labels without braces ("" for none). */
static void
hist_put(struct out *o, const char *name, const char *labels, const struct estats_hist *h)
{
	const char *sep = *labels ? "," : "";
	uint64_t cum = 0;
	char le[32];

	for (unsigned i = 0; i + 1 < ESTATS_HIST_BUCKETS; i++) {
		cum += h->b[i];
		if (i >= 15 && (i + 1) % 4 == 0)
			put(o, "%s_bucket{%s%sle=\"%s\"} %" PRIu64 "\n", name, labels, sep,
			    seconds(estats_hist_upper(i), le, sizeof(le)), cum);
	}
	cum += h->b[ESTATS_HIST_BUCKETS - 1];
	put(o, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, sep, cum);
	put(o, "%s_sum{%s} %s\n", name, labels, seconds(h->sum_ns, le, sizeof(le)));
	put(o, "%s_count{%s} %" PRIu64 "\n", name, labels, cum);
}

static const struct {
	const char *name, *help;
	size_t off;
} switch_counters[] = {
	{ "roce_cnp_forwarded_total", "CNPs passed to tenants", offsetof(struct dp_stats, cnp_forwarded) },
	{ "roce_mr_translated_total", "RETH and AtomicETH translated to target memory",
	  offsetof(struct dp_stats, mr_translated) },
	{ "roce_revocation_naks_sent_total", "NAKs built for revoked connections", offsetof(struct dp_stats, naks_sent) },
	{ "roce_offload_mark_hits_total", "frames whose rte_flow MARK spared the lookups",
	  offsetof(struct dp_stats, mark_hits) },
	{ "roce_shaped_packets_total", "frames that went through the shaper", offsetof(struct dp_stats, shaped) },
	{ "roce_backpressure_skips_total", "polls of a tenant port skipped because its queues were full",
	  offsetof(struct dp_stats, bp_skips) },
	{ "roce_cnp_sent_total", "CNPs built by the notification point", offsetof(struct dp_stats, cnp_sent) },
	{ "roce_cnp_consumed_total", "CNPs from the fabric taken by the reaction point",
	  offsetof(struct dp_stats, cnp_consumed) },
	{ "roce_ce_cleared_total", "CE marks removed before delivery to a tenant", offsetof(struct dp_stats, ce_cleared) },
};

static void
switch_put(struct out *o, const struct dp_stats *s)
{
	static const char *const port_m[4][2] = {
		{ "roce_port_rx_packets_total", "frames received by port" },
		{ "roce_port_rx_bytes_total", "bytes received by port" },
		{ "roce_port_tx_packets_total", "frames sent by port" },
		{ "roce_port_tx_bytes_total", "bytes sent by port" },
	};
	for (int m = 0; m < 4; m++) {
		const uint64_t *v = m == 0 ? s->rx_pkts : m == 1 ? s->rx_bytes : m == 2 ? s->tx_pkts : s->tx_bytes;

		family(o, port_m[m][0], "counter", port_m[m][1]);
		for (uint16_t p = 0; p < dp.n_ports; p++)
			put(o, "%s{port=\"%s\"} %" PRIu64 "\n", port_m[m][0],
			    esc(o, dp.ports[p].name ? dp.ports[p].name : ""), v[p]);
	}
	family(o, "roce_forwarded_packets_total", "counter", "frames forwarded, by path");
	put(o, "roce_forwarded_packets_total{path=\"egress\"} %" PRIu64 "\n", s->fwd_egress);
	put(o, "roce_forwarded_packets_total{path=\"ingress\"} %" PRIu64 "\n", s->fwd_ingress);
	put(o, "roce_forwarded_packets_total{path=\"hairpin\"} %" PRIu64 "\n", s->fwd_hairpin);
	family(o, "roce_dropped_packets_total", "counter", "frames dropped, by reason");
	for (int i = 1; i < DP_DROP_MAX; i++)
		put(o, "roce_dropped_packets_total{reason=\"%s\"} %" PRIu64 "\n", dp_drop_names[i], s->drops[i]);
	for (size_t k = 0; k < sizeof(switch_counters) / sizeof(switch_counters[0]); k++) {
		family(o, switch_counters[k].name, "counter", switch_counters[k].help);
		put(o, "%s %" PRIu64 "\n", switch_counters[k].name,
		    *(const uint64_t *)((const char *)s + switch_counters[k].off));
	}
}

/* The learner's (dp_learn.h); its unresolved frames are roce_dropped_packets_total{reason="unresolved"}. */
static void
learn_put(struct out *o, const struct dp_stats *s)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} m[] = {
		{ "roce_learn_requests_total", "first frames of unknown destinations the learner took",
		  offsetof(struct dp_learn_stats, requests) },
		{ "roce_learn_learned_total", "half QP records the learner wrote", offsetof(struct dp_learn_stats, learned) },
		{ "roce_learn_expired_total", "learned records taken away after qp_idle_s without a frame",
		  offsetof(struct dp_learn_stats, expired) },
		{ "roce_learn_stale_total", "learned records taken away because they never came in force",
		  offsetof(struct dp_learn_stats, stale) },
		{ "roce_learn_cm_removed_total", "learned records taken away at an RDMA-CM DREP or REJ",
		  offsetof(struct dp_learn_stats, cm_removed) },
		{ "roce_learn_cm_unmatched_total", "RDMA-CM REJ, DREQ and DREP that named no connection of their tenant",
		  offsetof(struct dp_learn_stats, cm_unmatched) },
		{ "roce_learn_paired_total", "learned records written naming their source's QPN, which a REP or the PSNs told",
		  offsetof(struct dp_learn_stats, paired) },
		{ "roce_learn_leases_revoked_total",
		  "leases of this host's earlier switch revoked at start, with every learned record on them",
		  offsetof(struct dp_learn_stats, leases_revoked) },
	};
	static const char *const why[4] = { "quota", "rate", "no_etcd", "other" };
	const struct dp_learn_stats *l = &dp_learn_st;
	const uint64_t refused[4] = { l->refused_quota, l->refused_rate, l->refused_no_etcd, l->refused_other };
	uint64_t held = 0;

	for (size_t k = 0; k < RTE_DIM(m); k++) {
		family(o, m[k].name, "counter", m[k].help);
		put(o, "%s %" PRIu64 "\n", m[k].name, *(const uint64_t *)((const char *)l + m[k].off));
	}
	family(o, "roce_learn_refused_total", "counter", "resolutions refused, by reason");
	for (int k = 0; k < 4; k++)
		put(o, "roce_learn_refused_total{reason=\"%s\"} %" PRIu64 "\n", why[k], refused[k]);
	family(o, "roce_learn_connections", "gauge", "learned records the learner holds now");
	put(o, "roce_learn_connections %" PRIu64 "\n", l->learned_now);
	for (uint16_t i = 0; i < dp.n_lcores; i++)
		held += dp.lcores[i].hold.n_frames;
	family(o, "roce_learn_frames_held", "gauge", "frames waiting for their destination to resolve");
	put(o, "roce_learn_frames_held %" PRIu64 "\n", held);
	family(o, "roce_learn_frames_held_total", "counter", "frames held while their destination resolved");
	put(o, "roce_learn_frames_held_total %" PRIu64 "\n", s->held);
	family(o, "roce_learn_frames_released_total", "counter", "held frames forwarded once it had");
	put(o, "roce_learn_frames_released_total %" PRIu64 "\n", s->hold_released);
	family(o, "roce_learn_gsi_forwarded_total", "counter", "RDMA-CM MADs of learning tenants let through to QP1");
	put(o, "roce_learn_gsi_forwarded_total %" PRIu64 "\n", s->gsi_forwarded);
	family(o, "roce_learn_gsi_dropped_class_total", "counter",
	       "a learning tenant's QP1 frames of another management class or form (dropped as gsi)");
	put(o, "roce_learn_gsi_dropped_class_total %" PRIu64 "\n", s->gsi_class_dropped);
	family(o, "roce_learn_gsi_dropped_rate_total", "counter",
	       "a learning tenant's RDMA-CM MADs over its gsi_pps (dropped as gsi)");
	put(o, "roce_learn_gsi_dropped_rate_total %" PRIu64 "\n", s->gsi_rate_dropped);
}

static void
tenants_put(struct out *o, const struct ovl *ov, const struct dp_tenant_stats *ts)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} m[] = {
		{ "roce_tenant_egress_packets_total", "frames sent by the tenant and forwarded",
		  offsetof(struct dp_tenant_stats, egress_pkts) },
		{ "roce_tenant_egress_bytes_total", "bytes sent by the tenant and forwarded",
		  offsetof(struct dp_tenant_stats, egress_bytes) },
		{ "roce_tenant_ingress_packets_total", "frames delivered to the tenant",
		  offsetof(struct dp_tenant_stats, ingress_pkts) },
		{ "roce_tenant_ingress_bytes_total", "bytes delivered to the tenant",
		  offsetof(struct dp_tenant_stats, ingress_bytes) },
		{ "roce_tenant_dropped_packets_total", "frames dropped and attributed to the tenant",
		  offsetof(struct dp_tenant_stats, drops) },
	};
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		family(o, m[k].name, "counter", m[k].help);
		for (uint32_t t = 0; t < ov->n_tenants; t++)
			put(o, "%s{tenant=\"%s\"} %" PRIu64 "\n", m[k].name, esc(o, ov->tenants[t].name),
			    *(const uint64_t *)((const char *)&ts[t] + m[k].off));
	}
}

static const char *const hist_names[ESTATS_KINDS][2] = {
	[ESTATS_NET] = { "network_rtt_seconds", "from a request sent to the fabric to the first answer covering it" },
	[ESTATS_HOST] = { "host_response_seconds", "from a request delivered to the tenant to its answer covering it" },
	[ESTATS_MSG] = { "message_completion_seconds", "from a SEND or WRITE's first packet to the answer covering its last" },
};

static void
estats_tenants_put(struct out *o, const struct ovl *ov, const struct estats_conn_stats *es)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} m[] = {
		{ "roce_estats_retransmissions_total", "requests of local QPs sent again",
		  offsetof(struct estats_conn_stats, retrans) },
		{ "roce_estats_out_of_sequence_total", "requests from the fabric ahead of the expected PSN",
		  offsetof(struct estats_conn_stats, oos) },
		{ "roce_estats_duplicate_requests_total", "requests from the fabric behind the expected PSN",
		  offsetof(struct estats_conn_stats, dup) },
		{ "roce_estats_cnp_received_total", "CNPs from the fabric", offsetof(struct estats_conn_stats, cnp_rx) },
		{ "roce_estats_cnp_sent_total", "CNPs sent to the fabric", offsetof(struct estats_conn_stats, cnp_tx) },
	};
	char name[96], help[160];
	const char *lv;

	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		family(o, m[k].name, "counter", m[k].help);
		for (uint32_t t = 0; t < ov->n_tenants; t++)
			put(o, "%s{tenant=\"%s\"} %" PRIu64 "\n", m[k].name, esc(o, ov->tenants[t].name),
			    *(const uint64_t *)((const char *)&es[t] + m[k].off));
	}
	family(o, "roce_estats_ecn_marked_total", "counter", "frames with CE, by direction");
	for (uint32_t t = 0; t < ov->n_tenants; t++) {
		lv = esc(o, ov->tenants[t].name);
		put(o, "roce_estats_ecn_marked_total{tenant=\"%s\",direction=\"egress\"} %" PRIu64 "\n", lv,
		    es[t].ce_egress);
		put(o, "roce_estats_ecn_marked_total{tenant=\"%s\",direction=\"ingress\"} %" PRIu64 "\n", lv,
		    es[t].ce_ingress);
	}
	family(o, "roce_estats_naks_total", "counter",
	       "NAKs by kind; sender remote: from the fabric to a local QP, local: by a local QP");
	for (uint32_t t = 0; t < ov->n_tenants; t++) {
		lv = esc(o, ov->tenants[t].name);
		for (unsigned k = 0; k < ESTATS_NAK_MAX; k++) {
			put(o, "roce_estats_naks_total{tenant=\"%s\",sender=\"remote\",kind=\"%s\"} %" PRIu64 "\n", lv,
			    estats_nak_names[k], es[t].naks_received[k]);
			put(o, "roce_estats_naks_total{tenant=\"%s\",sender=\"local\",kind=\"%s\"} %" PRIu64 "\n", lv,
			    estats_nak_names[k], es[t].naks_sent[k]);
		}
	}
	for (unsigned k = 0; k < ESTATS_KINDS; k++) {
		snprintf(name, sizeof(name), "roce_estats_%s", hist_names[k][0]);
		snprintf(help, sizeof(help), "per tenant, %s", hist_names[k][1]);
		family(o, name, "histogram", help);
		for (uint32_t t = 0; t < ov->n_tenants; t++) {
			char *labels;

			if (asprintf(&labels, "tenant=\"%s\"", esc(o, ov->tenants[t].name)) < 0) {
				o->oom = true;
				return;
			}
			hist_put(o, name, labels, &es[t].hist[k]);
			free(labels);
		}
	}
}

/* Per-connection series: the three histograms and the retransmissions, labelled by L's identity. */
static void
estats_conns_put(struct out *o, const struct ovl *ov, struct estats_conn_stats *s)
{
	char ip[64], name[96], *labels;

	for (unsigned k = 0; k <= ESTATS_KINDS; k++) {
		if (k < ESTATS_KINDS) {
			snprintf(name, sizeof(name), "roce_estats_connection_%s", hist_names[k][0]);
			family(o, name, "histogram", hist_names[k][1]);
		} else {
			snprintf(name, sizeof(name), "roce_estats_connection_retransmissions_total");
			family(o, name, "counter", "requests of the local QP sent again");
		}
		for (uint32_t i = 0; i < ov->n_conns; i++) {
			const struct ovl_conn *c = &ov->conns[i];
			const struct ovl_endpoint *e = &ov->endpoints[ov->qps[c->l].endpoint];
			const struct estats_conn *ec = dp_estats_state(c->state);
			struct cfg_ip cip = { .ver = e->vip.ver };

			/* Series are named by the local QP: an outgoing half knows none. */
			if (!ec || !ovl_live(c) || c->half == OVL_HALF_OUT)
				continue;
			memcpy(cip.b, e->vip.b, sizeof(cip.b));
			cfg_ip_format(&cip, ip, sizeof(ip));
			if (asprintf(&labels, "tenant=\"%s\",vip=\"%s\",vqpn=\"%u\"",
				     esc(o, ov->tenants[c->tenant].name), ip, ov->qps[c->l].vqpn) < 0) {
				o->oom = true;
				return;
			}
			if (k == ESTATS_NET || k == ESTATS_MSG)
				estats_hist_snapshot(&s->hist[k], k == ESTATS_NET ? &ec->ingress.cold->net :
						     &ec->ingress.cold->msg);
			else if (k == ESTATS_HOST)
				estats_hist_snapshot(&s->hist[k], &ec->egress.cold->host);
			if (k < ESTATS_KINDS)
				hist_put(o, name, labels, &s->hist[k]);
			else
				put(o, "%s{%s} %" PRIu64 "\n", name, labels, ESTATS_LOAD(&ec->egress.retrans));
			free(labels);
		}
	}
}

/* One scrape at a time: the exporter has one RCU reader id. */
static pthread_mutex_t render_lock = PTHREAD_MUTEX_INITIALIZER;

int
dp_metrics_render(bool per_conn, char **out, size_t *len)
{
	struct out o = { .cap = 65536 };
	struct dp_tenant_stats *ts = NULL;
	struct estats_conn_stats *es = NULL;
	struct dp_stats s;
	const struct ovl *ov;

	o.p = malloc(o.cap);
	if (!o.p)
		return -ENOMEM;
	dp_stats_sum(&s);
	/*
	 * The overlay as the lcores read it: a reader of the data plane's RCU
	 * (its own id, one scrape at a time), so that a scrape never waits for a
	 * change holding ctl_lock; the change waits for the scrape's end before
	 * it frees what the scrape reads.  Without that reader (tools and tests
	 * that build no lcores), under ctl_lock.
	 */
	pthread_mutex_lock(&render_lock);
	if (dp.qs_exporter)
		rte_rcu_qsbr_thread_online(dp.qsv, dp.n_lcores);
	else
		pthread_mutex_lock(&dp.ctl_lock);
	ov = __atomic_load_n(&dp.ovl, __ATOMIC_ACQUIRE);
	switch_put(&o, &s);
	learn_put(&o, &s);
	family(&o, "roce_estats_enabled", "gauge", "1 while RDMA Estats are recorded (--estats, not paused)");
	put(&o, "roce_estats_enabled %d\n", __atomic_load_n(&dp_estats.enabled, __ATOMIC_RELAXED) ? 1 : 0);
	family(&o, "roce_estats_memory_bytes", "gauge", "memory held by per-connection Estats state");
	put(&o, "roce_estats_memory_bytes %" PRIu64 "\n", dp_estats.bytes);
	if (ov && ov->n_tenants) {
		ts = calloc(ov->n_tenants, sizeof(*ts));
		if (!ts)
			o.oom = true;
		for (uint32_t t = 0; ts && t < ov->n_tenants; t++)
			dp_tenant_stats_sum(ov->tenants[t].slot, &ts[t]);
		if (ts)
			tenants_put(&o, ov, ts);
		if (dp_estats.started) {
			es = malloc(sizeof(*es) * ov->n_tenants);
			if (!es)
				o.oom = true;
			for (uint32_t t = 0; es && t < ov->n_tenants; t++)
				dp_estats_tenant_read(ov, t, &es[t]);
			if (es)
				estats_tenants_put(&o, ov, es);
			if (es && per_conn) {
				struct estats_conn_stats *scratch = malloc(sizeof(*scratch));

				if (scratch)
					estats_conns_put(&o, ov, scratch);
				else
					o.oom = true;
				free(scratch);
			}
		}
	}
	if (dp.qs_exporter)
		rte_rcu_qsbr_thread_offline(dp.qsv, dp.n_lcores);
	else
		pthread_mutex_unlock(&dp.ctl_lock);
	pthread_mutex_unlock(&render_lock);
	free(ts);
	free(es);
	free(o.lab);
	if (o.oom) {
		free(o.p);
		return -ENOMEM;
	}
	*out = o.p;
	*len = o.len;
	return 0;
}
