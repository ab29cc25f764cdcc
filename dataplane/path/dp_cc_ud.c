/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's notification point for UD.  A CE-marked UD frame from the fabric
 * is answered with a CNP to its sender, as an RNIC answers one (IBTA Annex
 * A17.9.2; rxe and ConnectX address it the same way): the CNP's DestQP is
 * the sending QP, which for UD is the DETH's source QPN, here still the
 * sender's physical QPN as the fabric carries it; it goes from the address
 * the marked frame came to, to the sender's host.  A UD QP has no
 * connection, so the pacing (min_time_between_cnps, suppress or defer) is
 * kept per sender QP in the lcore's dp_ud_np table.
 */
#include <rte_hash_crc.h>

#include "dp_rate_int.h"
#include "dp_vlan.h"

static void
ud_cnp_send(struct dp_lcore *lc, const struct ovl *o, const struct dp_tenant_rate *tr,
	    const struct ovl_qp *r, const uint8_t *local, uint8_t alen, uint16_t sport, uint8_t n_vlan,
	    const uint16_t tci[2])
{
	const struct ovl_endpoint *re = &o->endpoints[r->endpoint];
	struct roce_frame_spec spec = {
		.ip_ver = alen == 16 ? 6 : 4,
		.ttl = 64,
		.udp_sport = sport,
		.udp_dport = o->udp_port,
	};

	if (!re->reachable)
		return;
	memcpy(spec.dst_mac, re->eth, 6);
	memcpy(spec.src_mac, re->eth + 6, 6);
	memcpy(spec.src_ip, local, alen);
	memcpy(spec.dst_ip, re->host.b, alen);
	/* The tenant's tags on the fabric; under "keep" the marked frame's (its PCP is cnp_802p_prio). */
	dp_vlan_spec(o, r->tenant, re->out_port, n_vlan, tci, tr->prof.cnp_dscp, &spec);
	dp_cc_cnp_emit(lc, tr, &spec, r->pqpn, re->out_port);
}

static bool
ud_np_is(const struct dp_ud_np *e, const uint8_t *host, uint8_t alen, uint32_t pqpn)
{
	return e->alen == alen && e->pqpn == pqpn && memcmp(e->host, host, alen) == 0;
}

void
dp_cc_ud_ingress(struct dp_lcore *lc, const struct ovl *o, uint8_t *data, const struct roce_pkt *pkt,
		 const struct ovl_qp *r)
{
	struct dp_rate_lcore *rl = &lc->rate;
	uint32_t slot = o->tenants[r->tenant].slot;
	const struct dp_tenant_rate *tr = &rl->tenants[slot];
	const struct ovl_endpoint *re = &o->endpoints[r->endpoint];
	uint8_t *l3 = data + pkt->l3_off;
	bool v6 = pkt->ip_ver == 6;
	uint8_t alen = v6 ? 16 : 4;
	uint32_t i;
	struct dp_ud_np *e;
	bool was_pending;
	uint16_t sport;

	if (!tr->cc || ecn_get(l3, v6) != DCQCN_ECN_CE)
		return;
	i = rte_hash_crc(re->host.b, alen, r->pqpn) & (DP_UD_NP_SLOTS - 1);
	e = &rl->ud_np[i];
	if (!ud_np_is(e, re->host.b, alen, r->pqpn)) {
		memset(e, 0, sizeof(*e));
		dcqcn_np_init(&e->np);
		e->alen = alen;
		e->pqpn = r->pqpn;
		memcpy(e->host, re->host.b, alen);
	}
	memcpy(e->local, l3 + (v6 ? 24 : 16), alen);
	sport = (uint16_t)(data[pkt->l4_off] << 8 | data[pkt->l4_off + 1]);
	was_pending = e->np.pending;
	if (dcqcn_np_on_ce(&e->np, &tr->prof, rl->now_ns, &e->ctr)) {
		ud_cnp_send(lc, o, tr, r, e->local, alen, sport, pkt->n_vlan, pkt->vlan_tci);
	} else if (e->np.pending && !was_pending) {
		struct dp_cnp_timer t = { .due = dcqcn_np_next_deadline(&e->np, &tr->prof),
					  .state = i, .conn = DP_CNP_TIMER_UD, .ovl = o, .sport = sport,
					  .n_vlan = pkt->n_vlan, .tci = { pkt->vlan_tci[0], pkt->vlan_tci[1] },
					  .alen = alen, .pqpn = r->pqpn };

		memcpy(t.host, re->host.b, alen);
		dp_cc_timer_push(rl, t);
	}
	if (!tr->ce_keep) {
		ecn_set(l3, v6, DCQCN_ECN_ECT0);
		lc->stats.ce_cleared++;
	}
}

void
dp_cc_ud_timer(struct dp_lcore *lc, const struct dp_cnp_timer *t)
{
	struct dp_rate_lcore *rl = &lc->rate;
	struct dp_ud_np *e = &rl->ud_np[t->state];
	const struct ovl *o = lc->ovl;
	const struct dp_tenant_rate *tr;
	const struct ovl_qp *r;
	uint32_t v;

	/* Another sender took the slot since: its own window decides. */
	if (!ud_np_is(e, t->host, t->alen, t->pqpn))
		return;
	/* The sender as the current configuration knows it; gone, nothing is sent. */
	v = ovl_lookup_fabric(o, t->host, t->alen, t->pqpn);
	if (v == OVL_NONE || !(v & OVL_V_QP) || (r = &o->qps[OVL_V_IDX(v)])->local) {
		e->np.pending = 0;
		return;
	}
	tr = &rl->tenants[o->tenants[r->tenant].slot];
	if (tr->cc && dcqcn_np_poll(&e->np, &tr->prof, rl->now_ns, &e->ctr))
		ud_cnp_send(lc, o, tr, r, e->local, t->alen, t->sport, t->n_vlan, t->tci);
}
