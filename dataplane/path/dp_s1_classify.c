/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 1, classify: parse every frame of the burst, take the verdicts that
 * need no table (a multi-segment mbuf, a parse error, the GSI, a fabric frame
 * to another host), build the key that stage 2 looks up and prefetch its
 * table slot, so that the probes of a whole burst wait for memory together.
 */
#include <rte_prefetch.h>

#include "dp_gsi.h"
#include "dp_offload.h"
#include "dp_s1_classify.h"
#include "dp_rewrite.h"
#include "dp_vlan.h"

/* How many frames ahead the headers are prefetched. */
#define PREFETCH_AHEAD 4

static inline void
key_prefetch(struct dp_pkt *p, const struct ovl_table *t)
{
	p->sig = ovl_key_hash(&p->key) | 1u;
	rte_prefetch0(&t->slots[p->sig & t->mask]);
}

/* Parse one frame; false when it is dropped (its reason in p->drop). */
static inline bool
parse_one(const struct ovl *o, struct dp_pkt *p)
{
	struct rte_mbuf *m = p->m;
	enum dp_drop why;

	p->data = rte_pktmbuf_mtod(m, uint8_t *);
	p->v = OVL_NONE;
	p->sig = 0;
	p->done = 0;
	p->xl = 0;
	p->mark = 0;
	p->note.shaped = false;
	if (unlikely(m->nb_segs != 1)) {
		p->drop = DP_DROP_NONLINEAR;
		return false;
	}
	why = (enum dp_drop)roce_parse_fast(p->data, m->data_len, o->udp_port, &p->pkt);
	p->drop = (uint8_t)why;
	if (unlikely(why != DP_DROP_NONE))
		return false;
	p->dqpn = roce_bth_dqpn(roce_pkt_bth(&p->pkt, p->data));
	return true;
}

/* Tenant port: the key is (tenant, destination vIP, DestQP). */
static void
classify_egress(struct dp_lcore *lc, struct dp_burst *b)
{
	const struct ovl *o = lc->ovl;
	uint32_t slot = o->tenants[b->tenant].slot;

	for (uint16_t i = 0; i < b->n; i++) {
		struct dp_pkt *p = &b->p[i];

		if (i + PREFETCH_AHEAD < b->n)
			rte_prefetch0(rte_pktmbuf_mtod(b->p[i + PREFETCH_AHEAD].m, void *));
		p->tslot = slot;
		if (!parse_one(o, p))
			continue;
		if (unlikely(!dp_vlan_ok(o, b->tenant, b->in_port, &p->pkt))) {
			p->drop = DP_DROP_VLAN_MISMATCH;
			continue;
		}
		dp_vlan_prefetch(o, p);
		/* A MAD the hold releases passed here once: its token was taken then. */
		if (unlikely(p->dqpn == ROCE_QPN_GSI) && !lc->hold.releasing && !dp_gsi_passes(lc, o, b->tenant, p)) {
			p->drop = DP_DROP_GSI;
			continue;
		}
		/* A rule's MARK names the connection: no lookup when the frame is its own. */
		p->v = dp_mark_egress(p->m, o, b->tenant, ip_dst(p->data, &p->pkt), ip_addr_len(&p->pkt), p->dqpn);
		if (p->v != OVL_NONE) {
			p->mark = 1;
			continue;
		}
		p->key = ovl_key_make(ip_dst(p->data, &p->pkt), ip_addr_len(&p->pkt), b->tenant, p->dqpn);
		key_prefetch(p, &o->by_tenant);
	}
}

/* Uplink: the key is (destination host IP, DestQP); a MARKed frame needs none. */
static void
classify_ingress(struct dp_lcore *lc, struct dp_burst *b)
{
	const struct ovl *o = lc->ovl;

	for (uint16_t i = 0; i < b->n; i++) {
		struct dp_pkt *p = &b->p[i];
		unsigned alen;

		if (i + PREFETCH_AHEAD < b->n)
			rte_prefetch0(rte_pktmbuf_mtod(b->p[i + PREFETCH_AHEAD].m, void *));
		p->tslot = OVL_NONE;
		if (!parse_one(o, p))
			continue;
		dp_vlan_prefetch(o, p);
		alen = ip_addr_len(&p->pkt);
		/* A rule's MARK names the connection; a match is our host and not the GSI. */
		p->v = dp_mark_ingress(p->m, o, ip_dst(p->data, &p->pkt), alen, p->dqpn);
		if (p->v != OVL_NONE) {
			p->mark = 1;
			continue;
		}
		if (unlikely(ovl_host_index(o, ip_dst(p->data, &p->pkt), alen) < 0)) {
			p->drop = DP_DROP_NOT_OUR_HOST;
			continue;
		}
		if (unlikely(p->dqpn == ROCE_QPN_GSI)) {
			p->drop = DP_DROP_GSI;
			continue;
		}
		p->key = ovl_key_make(ip_dst(p->data, &p->pkt), alen, OVL_SPACE_FABRIC, p->dqpn);
		key_prefetch(p, &o->by_fabric);
	}
}

void
dp_s1_classify(struct dp_lcore *lc, struct dp_burst *b)
{
	for (uint16_t i = 0; i < RTE_MIN(b->n, (uint16_t)PREFETCH_AHEAD); i++)
		rte_prefetch0(rte_pktmbuf_mtod(b->p[i].m, void *));
	if (b->uplink)
		classify_ingress(lc, b);
	else
		classify_egress(lc, b);
}
