/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 2, look up: probe the slot stage 1 prefetched for every frame, then
 * prefetch what stage 3 reads of the connection found (its record and its
 * direction's half of the dynamic state).  Two passes, so that each miss of
 * a burst overlaps the others instead of waiting on its own.
 */
#include <rte_prefetch.h>

#include "dp_estats.h"

#include "dp_hold.h"
#include "dp_s2_lookup.h"
#include "dp_rewrite.h"

/*
 * A tenant frame that matches nothing: to no endpoint of its tenant, or to
 * no QP of it, which a learning tenant's frame waits for (dp_learn.h).
 */
static enum dp_drop
egress_miss(struct dp_lcore *lc, const struct dp_burst *b, struct dp_pkt *p)
{
	const struct ovl *o = lc->ovl;

	if (ovl_lookup_endpoint(o, b->tenant, ip_dst(p->data, &p->pkt), ip_addr_len(&p->pkt)) == OVL_NONE)
		return DP_DROP_WRONG_TENANT;
	return o->tenants[b->tenant].qp_learning ? dp_hold_take(lc, b, p) : DP_DROP_NO_CONNECTION;
}

void
dp_s2_lookup(struct dp_lcore *lc, struct dp_burst *b)
{
	const struct ovl *o = lc->ovl;
	const struct ovl_table *t = b->uplink ? &o->by_fabric : &o->by_tenant;
	uint64_t mark_hits = 0;

	/* Pass 1: the probes; a connection's record is prefetched as it is found. */
	for (uint16_t i = 0; i < b->n; i++) {
		struct dp_pkt *p = &b->p[i];

		if (!dp_pkt_live(p))
			continue;
		if (p->mark) {
			mark_hits++;
		} else {
			p->v = ovl_table_probe(t, &p->key, p->sig);
			/* Found, but with frames held before it: behind them. */
			if (unlikely(lc->hold.n_conns) && !b->uplink && p->v != OVL_NONE && dp_hold_has(lc, b, p))
				p->v = OVL_NONE;
			/* RDMA-CM (stage 1 let it come): the sender's QP1 must be known as well as the receiver's. */
			if (unlikely(p->dqpn == ROCE_GSI_QPN) && !b->uplink && p->v != OVL_NONE &&
			    ovl_lookup_tenant(o, b->tenant, ip_src(p->data, &p->pkt), ip_addr_len(&p->pkt),
					      ROCE_GSI_QPN) == OVL_NONE)
				p->v = OVL_NONE;
			if (unlikely(p->v == OVL_NONE)) {
				p->drop = b->uplink ? DP_DROP_NO_CONNECTION : egress_miss(lc, b, p);
				continue;
			}
		}
		if (likely(!(p->v & OVL_V_QP))) {
			const uint8_t *c = (const uint8_t *)&o->conns[OVL_V_IDX(p->v)];

			rte_prefetch0(c);
			rte_prefetch0(c + RTE_CACHE_LINE_SIZE);
			if (b->uplink)
				rte_prefetch0(c + 2 * RTE_CACHE_LINE_SIZE);
		}
	}
	lc->stats.mark_hits += mark_hits;
	/* Pass 2: the half of the dynamic state this direction writes. */
	for (uint16_t i = 0; i < b->n; i++) {
		const struct dp_pkt *p = &b->p[i];
		struct dp_conn_state *st;

		if (!dp_pkt_live(p) || (p->v & OVL_V_QP))
			continue;
		st = dp_conn_state(o->conns[OVL_V_IDX(p->v)].state);
		rte_prefetch0(b->uplink ? (void *)&st->ingress : (void *)&st->egress);
		dp_estats_prefetch(o->conns[OVL_V_IDX(p->v)].state, b->uplink);
	}
}
