/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /roce/dcqcn: DCQCN's settings, its counters per tenant and per
 * connection (dp_telemetry_cc.h).
 */
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "dp.h"
#include "dp_rate.h"
#include "dp_tel_util.h"
#include "dp_telemetry_cc.h"

static void
cc_counters_add(struct rte_tel_data *d, const struct dcqcn_counters *c)
{
	rte_tel_data_add_dict_u64(d, "np_ecn_marked_roce_packets", c->np_ecn_marked_roce_packets);
	rte_tel_data_add_dict_u64(d, "np_cnp_sent", c->np_cnp_sent);
	rte_tel_data_add_dict_u64(d, "rp_cnp_handled", c->rp_cnp_handled);
	rte_tel_data_add_dict_u64(d, "rp_cnp_ignored", c->rp_cnp_ignored);
	rte_tel_data_add_dict_u64(d, "cp_ecn_marked", c->cp_ecn_marked);
}

static void
cc_counters_sum(struct dcqcn_counters *a, const struct dcqcn_counters *b)
{
	a->np_ecn_marked_roce_packets += b->np_ecn_marked_roce_packets;
	a->np_cnp_sent += b->np_cnp_sent;
	a->rp_cnp_handled += b->rp_cnp_handled;
	a->rp_cnp_ignored += b->rp_cnp_ignored;
	a->cp_ecn_marked += b->cp_ecn_marked;
}

/*
 * The vQPNs of @c's ends; a learned half has its QP's only (its congestion
 * point marks, but without the sender's pqpn no CNP reaches or leaves it).
 */
static void
conn_vqpns_add(struct rte_tel_data *cd, const struct ovl *o, const struct ovl_conn *c)
{
	if (c->half)
		rte_tel_data_add_dict_string(cd, "half", ovl_half_name(c->half));
	if (c->half != OVL_HALF_OUT)
		rte_tel_data_add_dict_u64(cd, "local_vqpn", o->qps[c->l].vqpn);
	if (c->half != OVL_HALF_IN)
		rte_tel_data_add_dict_u64(cd, "remote_vqpn", o->qps[c->r].vqpn);
}

/*
 * /roce/dcqcn: the settings and, per tenant, the DCQCN counters summed over
 * its connections with the lowest current rate.  /roce/dcqcn,TENANT[,START]:
 * that tenant's connections, 32 a page, each with its counters, rate,
 * target, alpha and next increase stage.
 */
static int
dcqcn_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct ovl *o = dp.ovl;
	const struct cfg *c = dp.cfg;
	char tenant[64] = "", key[RTE_TEL_MAX_STRING_LEN], buf[32];
	struct dp_tel_page pg = { 0 };

	RTE_SET_USED(cmd);
	if (dp_tel_page_params(params, tenant, sizeof(tenant), &pg.start) < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	if (*tenant) {
		for (uint32_t i = 0; i < o->n_conns; i++) {
			struct dp_cc_snapshot sn;
			struct rte_tel_data *cd;

			if (!ovl_live(&o->conns[i]) || strcmp(tenant, o->tenants[o->conns[i].tenant].name))
				continue;
			if (!dp_tel_page_take(&pg))
				continue;
			if (!dp_cc_conn_snapshot(o, i, &sn) || !(cd = rte_tel_data_alloc()))
				continue;
			rte_tel_data_start_dict(cd);
			conn_vqpns_add(cd, o, &o->conns[i]);
			cc_counters_add(cd, &sn.ctr);
			rte_tel_data_add_dict_u64(cd, "rate_limited", sn.limited);
			rte_tel_data_add_dict_u64(cd, "rate_bps", sn.rate_bps);
			rte_tel_data_add_dict_u64(cd, "target_bps", sn.target_bps);
			snprintf(buf, sizeof(buf), "%.6f", (double)sn.alpha / DCQCN_ALPHA_ONE);
			rte_tel_data_add_dict_string(cd, "alpha", buf);
			rte_tel_data_add_dict_string(cd, "stage", dcqcn_stage_name(sn.stage));
			dp_tel_page_add(d, i, cd, &pg);
		}
		dp_tel_page_end(d, &pg);
		return 0;
	}
	rte_tel_data_add_dict_u64(d, "enabled", c->dcqcn.enabled);
	rte_tel_data_add_dict_string(d, "profile", c->dcqcn.profile);
	rte_tel_data_add_dict_u64(d, "line_rate_bps", c->dcqcn.line_rate_bps);
	rte_tel_data_add_dict_string(d, "ce_to_tenant", c->dcqcn.ce_keep ? "keep" : "clear");
	rte_tel_data_add_dict_u64(d, "cnp_to_tenant", c->dcqcn.cnp_pass);
	for (uint32_t t = 0; t < o->n_tenants; t++) {
		struct dcqcn_counters sum = { 0 };
		uint64_t min_rate = 0, limited = 0, conns = 0;
		struct rte_tel_data *td = rte_tel_data_alloc();

		if (!td)
			return -ENOMEM;
		for (uint32_t i = 0; i < o->n_conns; i++) {
			struct dp_cc_snapshot sn;

			if (!ovl_live(&o->conns[i]) || o->conns[i].tenant != t || !dp_cc_conn_snapshot(o, i, &sn))
				continue;
			conns++;
			cc_counters_sum(&sum, &sn.ctr);
			if (sn.limited) {
				limited++;
				min_rate = min_rate ? RTE_MIN(min_rate, sn.rate_bps) : sn.rate_bps;
			}
		}
		rte_tel_data_start_dict(td);
		rte_tel_data_add_dict_string(td, "name", o->tenants[t].name);
		cc_counters_add(td, &sum);
		rte_tel_data_add_dict_u64(td, "connections", conns);
		rte_tel_data_add_dict_u64(td, "rate_limited_connections", limited);
		rte_tel_data_add_dict_u64(td, "min_rate_bps", min_rate);
		if (rte_tel_data_add_dict_container(d, dp_tel_key(o->tenants[t].name, key, sizeof(key)), td, 0))
			rte_tel_data_free(td);
	}
	return 0;
}

TEL_LOCKED(tel_dcqcn, dcqcn_locked)

int
dp_dcqcn_telemetry_init(void)
{
	return rte_telemetry_register_cmd("/roce/dcqcn", tel_dcqcn,
					  "DCQCN settings and counters per tenant. Parameters: [tenant[,start]] for its connections.");
}
