/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The offload manager across configuration changes (dp_offload.h): a reload
 * or a delta withdraws the rules of the connections it removed or changed,
 * and publishes the MARK index (state id -> connection) the lcores read.
 * The rules themselves are installed and withdrawn by dp_offload.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_offload_int.h"

static void
entry_fill(const struct ovl *o, uint32_t ci, struct dp_mark_entry *e)
{
	const struct ovl_conn *c = &o->conns[ci];
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	memset(e, 0, sizeof(*e));
	e->conn = ci;
	e->tenant = c->tenant;
	e->e_qpn = r->vqpn;
	e->e_alen = (uint8_t)ip_len(re->vip.ver);
	memcpy(e->e_dst, re->vip.b, e->e_alen);
	e->i_qpn = l->pqpn;
	if (!c->hairpin) {
		/* A hairpin has no fabric side: its fabric frames are forged. */
		e->i_alen = (uint8_t)ip_len(le->host.ver);
		memcpy(e->i_dst, le->host.b, e->i_alen);
	}
}

void
dp_offload_index_publish(const struct ovl *o)
{
	uint32_t n = dp.n_states;
	struct dp_mark_index *x = rte_zmalloc("mark_index", sizeof(*x) + sizeof(x->e[0]) * (n ? n : 1),
					     RTE_CACHE_LINE_SIZE);

	/* An index not yet freed by a previous reload goes now: nobody reads it. */
	rte_free(ofl.retired);
	ofl.retired = dp_mark_index;
	if (x) {
		x->ovl = o;
		x->n = n;
		for (uint32_t s = 0; s < n; s++)
			x->e[s].conn = OVL_NONE;
		for (uint32_t i = 0; i < o->n_conns; i++)
			if (ovl_live(&o->conns[i]) && !o->conns[i].half && o->conns[i].state < n)
				entry_fill(o, i, &x->e[o->conns[i].state]);
	} else {
		fprintf(stderr, "offload: no memory for the mark index; MARKed frames take the lookups\n");
	}
	__atomic_store_n(&dp_mark_index, x, __ATOMIC_RELEASE);
}

/* Does anything a rule of @a depends on differ in @b? */
static bool
conn_changed(const struct ovl *oa, const struct ovl_conn *a, const struct ovl *ob, const struct ovl_conn *b)
{
	struct dp_mark_entry ea, eb;

	entry_fill(oa, (uint32_t)(a - oa->conns), &ea);
	entry_fill(ob, (uint32_t)(b - ob->conns), &eb);
	ea.conn = eb.conn = 0;
	return memcmp(&a->egress, &b->egress, sizeof(a->egress)) ||
	       memcmp(&a->ingress, &b->ingress, sizeof(a->ingress)) || memcmp(a->l_vip, b->l_vip, 16) ||
	       memcmp(a->l_mac, b->l_mac, 6) || memcmp(a->r_host, b->r_host, 16) || a->l_port != b->l_port ||
	       a->l_type != b->l_type || a->hairpin != b->hairpin || a->rate_bps != b->rate_bps ||
	       memcmp(&ea, &eb, sizeof(ea)) || ofl_fabric_port(oa, a) != ofl_fabric_port(ob, b) ||
	       oa->udp_port != ob->udp_port;
}

/* A connection removed: its rules go, and its state id may be handed out again. */
static void
ofl_conn_removed(struct ofl_conn *oc, const char *why)
{
	ofl_conn_withdraw(oc, why);
	for (int s = 0; s < SIDES; s++)
		ofl_side_clear_texts(&oc->side[s]);
	memset(oc, 0, sizeof(*oc));
}

/* A connection changed: its rules go, and it is steady again steady_ms later with new ones. */
static void
ofl_conn_changed(struct ofl_conn *oc, const char *why)
{
	ofl_conn_withdraw(oc, why);
	/* Refusals are tried again: the rule is a new one. */
	for (int s = 0; s < SIDES; s++)
		if (oc->side[s].state == DP_OFL_REFUSED)
			ofl_side_withdraw(&oc->side[s], NULL);
	oc->since = ofl.now;
	oc->seen = true;
}

/* A kept connection's forward rule also depends on its tenant's MRs and rate and the ports' VLAN policies. */
static void
ofl_forward_check(const struct ovl *o, const struct ovl_conn *c, struct ofl_conn *oc)
{
	if (oc->side[SIDE_TENANT].state == DP_OFL_INSTALLED && oc->side[SIDE_TENANT].kind == DP_OFL_FORWARD &&
	    !ofl_forward_eligible(o, c)) {
		ofl_side_withdraw(&oc->side[SIDE_TENANT], "no longer forwardable (tenant memory or rate changed)");
		oc->since = ofl.now;
	}
}

void
dp_offload_reload(const struct ovl *old, const struct ovl *o)
{
	uint32_t n = dp.n_states, *map;
	bool enabled = dp.cfg && dp.cfg->offload.enabled;

	rte_free(ofl.retired);
	ofl.retired = NULL;
	if (!old)
		return;
	/* Without room for new ids, the ids the manager already tracks are still handled. */
	ofl_conns_reserve(n);
	map = malloc(sizeof(*map) * (n ? n : 1));
	if (map) {
		memset(map, 0xff, sizeof(*map) * (n ? n : 1));
		for (uint32_t i = 0; i < o->n_conns; i++)
			if (ovl_live(&o->conns[i]) && o->conns[i].state < n)
				map[o->conns[i].state] = i;
	}
	for (uint32_t i = 0; i < old->n_conns; i++) {
		const struct ovl_conn *a = &old->conns[i];
		struct ofl_conn *oc;
		uint32_t ni = map && a->state < n ? map[a->state] : OVL_NONE;

		if (!ovl_live(a) || a->state >= ofl.n_conns)
			continue; /* never seen by a poll: it has no rule */
		oc = &ofl.conns[a->state];

		if (ni == OVL_NONE) {
			/* Removed (or no memory to tell). */
			ofl_conn_removed(oc, map ? "connection removed by a reload" : "reload (no memory to compare)");
			continue;
		}
		const struct ovl_conn *b = &o->conns[ni];

		if (conn_changed(old, a, o, b)) {
			ofl_conn_changed(oc, "connection changed by a reload");
			continue;
		}
		ofl_forward_check(o, b, oc);
		if (!enabled)
			ofl_conn_withdraw(oc, "offload disabled by a reload");
	}
	free(map);
}

void
dp_offload_index_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n)
{
	const struct dp_mark_index *was = dp_mark_index;
	uint32_t ns = dp.n_states;
	struct dp_mark_index *x = NULL;

	rte_free(ofl.retired);
	ofl.retired = dp_mark_index;
	/* Without offload no frame is MARKed: no index to keep. */
	if (dp.cfg && dp.cfg->offload.enabled && was)
		x = rte_malloc("mark_index", sizeof(*x) + sizeof(x->e[0]) * (ns ? ns : 1), RTE_CACHE_LINE_SIZE);
	if (x) {
		uint32_t keep = RTE_MIN(was->n, ns);

		x->ovl = o;
		x->n = ns;
		memcpy(x->e, was->e, sizeof(x->e[0]) * keep);
		for (uint32_t s = keep; s < ns; s++)
			x->e[s].conn = OVL_NONE;
		for (uint32_t i = 0; i < n; i++) {
			if (ch[i].from != OVL_NONE && old->conns[ch[i].from].state < ns)
				x->e[old->conns[ch[i].from].state].conn = OVL_NONE;
		}
		for (uint32_t i = 0; i < n; i++)
			if (ch[i].to != OVL_NONE && !o->conns[ch[i].to].half && o->conns[ch[i].to].state < ns)
				entry_fill(o, ch[i].to, &x->e[o->conns[ch[i].to].state]);
	}
	__atomic_store_n(&dp_mark_index, x, __ATOMIC_RELEASE);
}

void
dp_offload_changes(const struct ovl *old, const struct ovl *o, const struct ovl_inc_conn *ch, uint32_t n,
		   bool mrs_changed)
{
	bool enabled = dp.cfg && dp.cfg->offload.enabled;

	rte_free(ofl.retired);
	ofl.retired = NULL;
	ofl_conns_reserve(dp.n_states);
	for (uint32_t i = 0; i < n; i++) {
		const struct ovl_conn *a = ch[i].from == OVL_NONE ? NULL : &old->conns[ch[i].from];

		if (!a || a->state >= ofl.n_conns)
			continue; /* new, or never seen by a poll: no rule */
		if (ch[i].to == OVL_NONE)
			ofl_conn_removed(&ofl.conns[a->state], "connection removed by a delta");
		else
			ofl_conn_changed(&ofl.conns[a->state], "connection changed by a delta");
	}
	/* A forward rule also depends on its tenant's MRs: those a change left are checked again. */
	for (uint32_t i = 0; enabled && mrs_changed && i < o->n_conns; i++)
		if (ovl_live(&o->conns[i]) && !o->conns[i].half && o->conns[i].state < ofl.n_conns)
			ofl_forward_check(o, &o->conns[i], &ofl.conns[o->conns[i].state]);
}
