/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental deltas (cfg_inc.h): a reloaded file compared with the running
 * configuration.  When everything but endpoints, QPs and MRs is equal (field
 * by field, names by string, in the same order, so that tenant and port
 * indexes mean the same in both), the change list that turns one into the
 * other is made with hash lookups in linear time.
 */
#include <string.h>

#include "cfg_inc_int.h"
#include "cfg_util.h"

static bool
str_equal(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool
vlan_equal(const struct cfg_vlan *a, const struct cfg_vlan *b)
{
	return a->set == b->set && a->mode == b->mode && a->has_vid == b->has_vid && a->vid == b->vid &&
	       a->has_pcp == b->has_pcp && a->pcp == b->pcp;
}

static bool
dcqcn_params_equal(const struct dcqcn_params *a, const struct dcqcn_params *b)
{
#define F(f) (a->f == b->f)
	return F(model) && F(rp_enable) && F(clamp_tgt_rate) && F(clamp_tgt_rate_after_time_inc) &&
	       F(rpg_time_reset) && F(rpg_byte_reset) && F(rpg_threshold) && F(rpg_max_rate) && F(rpg_ai_rate) &&
	       F(rpg_hai_rate) && F(rpg_gd) && F(rpg_min_dec_fac) && F(rpg_min_rate) &&
	       F(rate_to_set_on_first_cnp) && F(dce_tcp_g) && F(dce_tcp_rtt) && F(rate_reduce_monitor_period) &&
	       F(initial_alpha_value) && F(np_enable) && F(min_time_between_cnps) && F(cnp_mode) && F(cnp_dscp) &&
	       F(cnp_802p_prio) && F(kmin) && F(kmax) && F(pmax);
#undef F
}

static bool
port_equal(const struct cfg_port *a, const struct cfg_port *b)
{
	return str_equal(a->name, b->name) && str_equal(a->device, b->device) && a->role == b->role &&
	       a->has_ip == b->has_ip && (!a->has_ip || cfg_ip_equal(&a->ip, &b->ip)) && !memcmp(a->mac, b->mac, 6) &&
	       a->has_gateway_mac == b->has_gateway_mac &&
	       (!a->has_gateway_mac || !memcmp(a->gateway_mac, b->gateway_mac, 6)) && a->tenant == b->tenant &&
	       vlan_equal(&a->vlan, &b->vlan) && a->rx_queues == b->rx_queues;
}

static bool
tenant_equal(const struct cfg_tenant *a, const struct cfg_tenant *b)
{
	return str_equal(a->name, b->name) && a->vni == b->vni && a->max_qps == b->max_qps &&
	       cfg_inc_rate_equal(&a->rate, &b->rate) && a->mr_check == b->mr_check &&
	       dcqcn_params_equal(&a->dcqcn, &b->dcqcn) && a->dcqcn_override == b->dcqcn_override &&
	       a->privileged_qkey == b->privileged_qkey && vlan_equal(&a->vlan, &b->vlan) &&
	       a->qp_learning == b->qp_learning && a->qp_idle_s == b->qp_idle_s &&
	       a->gsi_pps == b->gsi_pps;
}

static bool
cidr_equal(bool has, const struct cfg_cidr *a, const struct cfg_cidr *b)
{
	return !has || (a->len == b->len && cfg_ip_equal(&a->ip, &b->ip));
}

static bool
acl_equal(const struct cfg_acl *a, const struct cfg_acl *b)
{
	if (a->tenant != b->tenant || a->def != b->def || a->n_rules != b->n_rules)
		return false;
	for (uint32_t i = 0; i < a->n_rules; i++) {
		const struct cfg_acl_rule *x = &a->rules[i], *y = &b->rules[i];

		if (x->action != y->action || x->has_src != y->has_src || x->has_dst != y->has_dst ||
		    !cidr_equal(x->has_src, &x->src, &y->src) || !cidr_equal(x->has_dst, &x->dst, &y->dst) ||
		    x->types != y->types || x->ops != y->ops)
			return false;
	}
	return true;
}

/* Everything but endpoints, QPs and MRs (and the file's name) is equal. */
static bool
rest_equal(const struct cfg *a, const struct cfg *b)
{
	const struct cfg_dcqcn *d = &a->dcqcn, *e = &b->dcqcn;

	if (a->version != b->version || a->udp_port != b->udp_port || a->n_ports != b->n_ports ||
	    a->n_tenants != b->n_tenants || a->n_neighbors != b->n_neighbors || a->n_acls != b->n_acls ||
	    d->enabled != e->enabled || !str_equal(d->profile, e->profile) || d->line_rate_bps != e->line_rate_bps ||
	    d->ce_keep != e->ce_keep || d->cnp_pass != e->cnp_pass || !dcqcn_params_equal(&d->params, &e->params) ||
	    a->offload.enabled != b->offload.enabled || a->offload.steady_ms != b->offload.steady_ms ||
	    a->offload.min_rate_mbps != b->offload.min_rate_mbps ||
	    a->shaping.watchdog_ms != b->shaping.watchdog_ms || a->shaping.queue_bytes != b->shaping.queue_bytes ||
	    a->ecmp.udp_sport != b->ecmp.udp_sport)
		return false;
	for (uint32_t i = 0; i < a->n_ports; i++)
		if (!port_equal(&a->ports[i], &b->ports[i]))
			return false;
	for (uint32_t i = 0; i < a->n_tenants; i++)
		if (!tenant_equal(&a->tenants[i], &b->tenants[i]))
			return false;
	for (uint32_t i = 0; i < a->n_neighbors; i++)
		if (!cfg_ip_equal(&a->neighbors[i].ip, &b->neighbors[i].ip) ||
		    memcmp(a->neighbors[i].mac, b->neighbors[i].mac, 6))
			return false;
	for (uint32_t i = 0; i < a->n_acls; i++)
		if (!acl_equal(&a->acls[i], &b->acls[i]))
			return false;
	return true;
}

static const void *
rec_at(const struct cfg *c, int k, uint32_t i)
{
	return k == CFG_DK_ENDPOINTS ? (const void *)&c->endpoints[i] :
	       k == CFG_DK_QPS ? (const void *)&c->qps[i] : (const void *)&c->mrs[i];
}

static uint32_t
rec_count(const struct cfg *c, int k)
{
	return k == CFG_DK_ENDPOINTS ? c->n_endpoints : k == CFG_DK_QPS ? c->n_qps : c->n_mrs;
}

/* An endpoint of a learning tenant, whose delete takes the whole path (cfg_inc_prepare() says why). */
static bool
learning_ep(const struct cfg *c, int k, const void *r)
{
	const struct cfg_endpoint *e = r;

	return k == CFG_DK_ENDPOINTS && e->tenant >= 0 && c->tenants[e->tenant].qp_learning;
}

/* Records of kind @k in @file and not in @run (ADD) or different (REPLACE), or the reverse (DELETE). */
static int
diff_kind(const struct cfg *run, const struct cfg *file, int k, int op, struct cfg_inc *inc)
{
	const struct cfg *from = op == CFG_INC_DELETE ? run : file, *other = op == CFG_INC_DELETE ? file : run;

	for (uint32_t i = 0; i < rec_count(from, k); i++) {
		const void *r = rec_at(from, k, i), *o;
		struct cfg_inc_key key;
		int64_t j;
		bool eq;

		cfg_inc_rec_key(from, k, i, &key);
		j = cfg_inc_find(other, k, &key);
		if (op == CFG_INC_DELETE) {
			if (j < 0 && learning_ep(from, k, r))
				return 0;
			if (j < 0 && cfg_inc_push(inc, k, op, r, NULL) < 0)
				return -1;
			inc->sum.deleted[k] += j < 0;
			continue;
		}
		if (j < 0) {
			if (op == CFG_INC_ADD && !cfg_learning_remote && learning_ep(from, k, r))
				return 0;       /* its host is checked by the whole path */
			if (op == CFG_INC_ADD && cfg_inc_push(inc, k, op, NULL, r) < 0)
				return -1;
			inc->sum.put[k] += op == CFG_INC_ADD;
			continue;
		}
		o = rec_at(other, k, (uint32_t)j);
		eq = k == CFG_DK_ENDPOINTS ? cfg_inc_ep_equal(o, r) : k == CFG_DK_QPS ? cfg_inc_qp_equal(o, r) :
										   cfg_inc_mr_equal(o, r);
		if (eq || op != CFG_INC_REPLACE)
			continue;
		if (k == CFG_DK_ENDPOINTS)
			return 0;       /* an endpoint modified: not for this path */
		if (cfg_inc_push(inc, k, op, o, r) < 0)
			return -1;
		inc->sum.put[k]++;
	}
	return 1;
}

int
cfg_inc_diff(const struct cfg *run, struct cfg *file, struct cfg_inc *inc)
{
	static const struct {
		int8_t k, op;
	} order[] = {
		{ CFG_DK_ENDPOINTS, CFG_INC_REPLACE }, { CFG_DK_ENDPOINTS, CFG_INC_ADD },
		{ CFG_DK_QPS, CFG_INC_DELETE }, { CFG_DK_MRS, CFG_INC_DELETE }, { CFG_DK_QPS, CFG_INC_REPLACE },
		{ CFG_DK_MRS, CFG_INC_REPLACE }, { CFG_DK_QPS, CFG_INC_ADD }, { CFG_DK_MRS, CFG_INC_ADD },
		{ CFG_DK_ENDPOINTS, CFG_INC_DELETE },
	};

	memset(inc, 0, sizeof(*inc));
	if (!rest_equal(run, file))
		return 0;
	/* @run's records are only read; its indexes, kept beside them, are built on first use. */
	if (!cfg_inc_index((struct cfg *)run) || !cfg_inc_index(file))
		return -1;
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		int r = diff_kind(run, file, order[o].k, order[o].op, inc);

		if (r != 1) {
			cfg_inc_release(inc);
			return r;
		}
	}
	return 1;
}
