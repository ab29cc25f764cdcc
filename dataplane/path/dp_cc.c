/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN on the per-packet path: the notification point answers CE marks from
 * the fabric with CNPs (at once or deferred), the reaction point takes CNPs.
 * The congestion point marks as frames leave the shaper (dp_shape.c).
 */
#include <rte_ring.h>

#include "dp_rate_int.h"
#include "dp_estats.h"
#include "dp_vlan.h"

/* ---- DCQCN: reaction point ---- */


void
dp_cc_rp_cnp(struct dp_lcore *lc, uint32_t slot, uint32_t id)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct dp_tenant_rate *tr = &r->tenants[slot];
	struct dp_cc_state *cs;

	if (!tr->cc)
		return;
	cs = dp_cc_state(id);
	rp_ready(cs, tr);
	dcqcn_rp_on_cnp(&cs->rp.rp, &tr->prof, r->now_ns, &cs->rp.ctr);
	rp_apply(r, cs, id, lc->now);
}

/* ---- DCQCN: notification point ---- */

/* A CNP for connection @c to the sender (R's host and pqpn), queued for after the burst. */
static void
cnp_send(struct dp_lcore *lc, const struct ovl *o, const struct ovl_conn *c, const struct dp_tenant_rate *tr,
	 uint16_t sport, uint8_t n_vlan, const uint16_t tci[2])
{
	const struct ovl_rewrite *w = &c->egress;
	struct roce_frame_spec spec = {
		.ip_ver = w->ip_ver,
		.ttl = 64,
		.udp_sport = sport,
		.udp_dport = o->udp_port,
	};

	memcpy(spec.dst_mac, w->eth, 6);
	memcpy(spec.src_mac, w->eth + 6, 6);
	memcpy(spec.src_ip, w->src_ip, w->addr_len);
	memcpy(spec.dst_ip, w->dst_ip, w->addr_len);
	/* The tenant's tags on the fabric; under "keep" the marked frame's (its PCP is cnp_802p_prio). */
	dp_vlan_spec(o, c->tenant, w->port, n_vlan, tci, tr->prof.cnp_dscp, &spec);
	if (dp_cc_cnp_emit(lc, tr, &spec, w->dqpn, w->port))
		dp_estats_cnp_sent(c->state);
}

static void
timer_pop(struct dp_rate_lcore *r)
{
	struct dp_cnp_timer last = r->timers[--r->n_timers];
	uint32_t i = 0, k;

	while ((k = 2 * i + 1) < r->n_timers) {
		if (k + 1 < r->n_timers && r->timers[k + 1].due < r->timers[k].due)
			k++;
		if (r->timers[k].due >= last.due)
			break;
		r->timers[i] = r->timers[k];
		i = k;
	}
	r->timers[i] = last;
}

/* Deferred CNPs whose window ended; those of a replaced configuration are forgotten. */
void
dp_cc_timers_run(struct dp_lcore *lc)
{
	struct dp_rate_lcore *r = &lc->rate;

	while (r->n_timers && r->timers[0].due <= r->now_ns && r->n_cnp < DP_BURST) {
		struct dp_cnp_timer t = r->timers[0];
		const struct ovl *o = lc->ovl;

		timer_pop(r);
		if (t.conn == DP_CNP_TIMER_UD) {
			dp_cc_ud_timer(lc, &t);
			continue;
		}
		if (t.ovl != o) {
			/* A reload since: the connection, if it stayed, under its index in this overlay. */
			uint32_t v = ovl_lookup_fabric(o, t.host, t.alen, t.pqpn);

			if (v == OVL_NONE || (v & OVL_V_QP))
				continue;
			t.conn = OVL_V_IDX(v);
		}
		/* The same connection: a state id is its own until the connection goes. */
		if (o->conns[t.conn].state != t.state)
			continue;

		const struct ovl_conn *c = &o->conns[t.conn];
		const struct dp_tenant_rate *tr = &r->tenants[o->tenants[c->tenant].slot];
		struct dp_cc_state *cs = dp_cc_state(t.state);

		if (tr->cc && dcqcn_np_poll(&cs->np.np, &tr->prof, r->now_ns, &cs->np.ctr))
			cnp_send(lc, o, c, tr, t.sport, t.n_vlan, t.tci);
	}
}

bool
dp_cc_ingress(struct dp_lcore *lc, const struct ovl *o, uint32_t ci, uint8_t *data, const struct roce_pkt *pkt)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct ovl_conn *c = &o->conns[ci];
	uint32_t slot = o->tenants[c->tenant].slot;
	const struct dp_tenant_rate *tr = &r->tenants[slot];
	uint8_t *l3 = data + pkt->l3_off;
	bool v6 = pkt->ip_ver == 6;

	/*
	 * A learned half does not know the sender's pqpn a CNP must name: its CE
	 * marks and CNPs reach the tenant, whose RNICs answer them end to end.
	 */
	if (!tr->cc || c->half)
		return false;
	if (pkt->opcode == ROCE_OP_CNP) {
		/* The reaction point runs where the connection's egress half is owned. */
		uint16_t owner = dp_half_owner(&dp_conn_state(c->state)->egress, dp.ports[c->l_port].lcore_idx);

		if (owner == lc->idx)
			dp_cc_rp_cnp(lc, slot, c->state);
		else
			rte_ring_enqueue(dp.lcores[owner].rate.cc_ring,
					 (void *)(uintptr_t)((uint64_t)slot << 32 | c->state));
		if (tr->cnp_pass)
			return false;
		lc->stats.cnp_consumed++;
		return true;
	}
	if (ecn_get(l3, v6) != DCQCN_ECN_CE)
		return false;

	struct dp_cc_state *cs = dp_cc_state(c->state);
	uint16_t sport = (uint16_t)(data[pkt->l4_off] << 8 | data[pkt->l4_off + 1]);
	/* Both tags of a QinQ frame: the CNP goes back the way the marked frame came. */
	const uint16_t *tci = pkt->vlan_tci;
	bool was_pending = cs->np.np.pending;

	if (dcqcn_np_on_ce(&cs->np.np, &tr->prof, r->now_ns, &cs->np.ctr)) {
		cnp_send(lc, o, c, tr, sport, pkt->n_vlan, tci);
	} else if (cs->np.np.pending && !was_pending) {
		struct dp_cnp_timer t = { .due = dcqcn_np_next_deadline(&cs->np.np, &tr->prof),
					  .state = c->state, .conn = ci, .ovl = o, .sport = sport,
					  .n_vlan = pkt->n_vlan, .tci = { tci[0], tci[1] },
					  .alen = c->egress.addr_len, .pqpn = o->qps[c->l].pqpn };

		memcpy(t.host, c->egress.src_ip, c->egress.addr_len);
		dp_cc_timer_push(r, t);
	}
	if (!tr->ce_keep) {
		ecn_set(l3, v6, DCQCN_ECN_ECT0);
		lc->stats.ce_cleared++;
	}
	return false;
}

