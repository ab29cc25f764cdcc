/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 5, shape: each frame of the burst goes to its tenant's shaper or
 * straight to the tx buffer of its port; the drops of every stage are
 * counted and their mbufs freed, once per burst.  Also the rest of the
 * shapers' per-packet work: what a frame is charged, and what leaves the
 * shapers (stage 2 of a DCQCN tenant, the congestion point's marks, removed
 * connections' frames).  dp_rate.h explains the shapers' stages.
 */
#include <rte_ring.h>

#include "dp_hold.h"
#include "dp_nak.h"
#include "dp_s5_shape.h"
#include "dp_rate_int.h"

/* A READ response is counted as packets of this many payload bytes. */
#define READ_RESP_MTU 4096
/* AETH and ICRC of a READ response packet, beyond its BTH. */
#define READ_RESP_TRAILER (4 + 4)

/* ---- The frame in hand ---- */

void
dp_rate_note(struct dp_lcore *lc, struct dp_shape_note *n, uint32_t conn, uint32_t slot, uint8_t *data,
	     const struct roce_pkt *pkt, bool hairpin)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct shaper_pkt *sp = &n->sp;
	uint32_t f = pkt->flags;

	if (!r->sh || !r->tenants[slot].shaped)
		return;
	n->shaped = true;
	n->cut = false;
	sp->conn = conn;
	sp->charge = 0;
	sp->flags = 0;
	if (f & (ROCE_OPF_FIRST | ROCE_OPF_ONLY) || !(f & (ROCE_OPF_MIDDLE | ROCE_OPF_LAST)))
		sp->flags |= SHAPER_PKT_FIRST;
	if (!(f & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)))
		sp->flags |= SHAPER_PKT_LAST;
	/* Answers were paid for by the request that pulled them; CNPs are not traffic. */
	if (f & (ROCE_OPF_RESP | ROCE_OPF_CNP))
		sp->flags |= SHAPER_PKT_EXEMPT;
	else if ((f & (ROCE_OPF_REQ | ROCE_OPF_FIRST)) == (ROCE_OPF_REQ | ROCE_OPF_FIRST) &&
		 (pkt->exts & ROCE_EXT_RETH)) {
		/* A WRITE First: the whole message, in packets the size of this one's payload. */
		const struct roce_reth *reth = roce_pkt_ext(pkt, data, ROCE_EXT_RETH);
		uint32_t hdr = pkt->frame_len - pkt->payload_len - (uint32_t)sizeof(struct roce_reth);

		if (pkt->payload_len)
			sp->charge = (uint32_t)RTE_MIN(shaper_msg_wire_bytes(roce_reth_dmalen(reth),
						pkt->payload_len, hdr, sizeof(struct roce_reth)), UINT32_MAX);
	} else if ((f & ROCE_OPF_READ) && (pkt->exts & ROCE_EXT_RETH)) {
		/* A READ request pays here for the response it pulls toward its tenant. */
		const struct roce_reth *reth = roce_pkt_ext(pkt, data, ROCE_EXT_RETH);

		sp->charge = (uint32_t)RTE_MIN(shaper_msg_wire_bytes(roce_reth_dmalen(reth), READ_RESP_MTU,
					pkt->bth_off + (uint32_t)sizeof(struct roce_bth) + READ_RESP_TRAILER, 0) +
					pkt->frame_len, UINT32_MAX);
	}
	n->l3 = (uint8_t)pkt->l3_off;
	n->mf = (uint8_t)((pkt->ip_ver == 6 ? MF_V6 : 0) |
			     (r->tenants[slot].cc ? MF_CC | (hairpin ? 0 : MF_CP) : 0));
	n->tenant = (uint16_t)slot;
}


/* The congestion point: mark an ECN-capable frame from the depth of its queue at stage 2. */
static inline void
cp_mark(struct dp_lcore *lc, const struct shaper_out *so, struct rte_mbuf *m, const struct dp_mbuf_meta *mm)
{
	const struct dp_tenant_rate *tr = &lc->rate.tenants[mm->tenant];
	uint8_t *l3 = rte_pktmbuf_mtod(m, uint8_t *) + mm->l3_off;
	bool v6 = mm->flags & MF_V6;
	uint8_t ecn = ecn_get(l3, v6), now;
	struct dcqcn_counters *ctr = so->conn < dp.conn_cap && !(mm->flags & MF_FOREIGN) ?
				     &dp_cc_state(so->conn)->rp.ctr : NULL;

	if (ecn != DCQCN_ECN_ECT0 && ecn != DCQCN_ECN_ECT1)
		return;
	now = dcqcn_cp_mark(&tr->prof, ecn, (uint64_t)so->conn_queued + so->bytes, rnd32(&lc->rate), ctr);
	if (now != ecn)
		ecn_set(l3, v6, now);
}

/*
 * Stage 1 of a DCQCN tenant let a frame go: the reaction point counts it,
 * and stage 2 takes it, at once when it can (true: the caller sends @m now,
 * marked by the congestion point as it leaves) or into its queue (false; a
 * refusal is counted and @m freed).
 */
static bool
stage2_enqueue(struct dp_lcore *lc, const struct shaper_out *so, struct rte_mbuf *m, struct dp_mbuf_meta *mm)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct dp_tenant_rate *tr = &r->tenants[mm->tenant];
	struct shaper_pkt p = {
		.cookie = so->cookie, .conn = so->conn, .bytes = so->bytes, .charge = mm->charge,
		.flags = (uint16_t)(so->flags & (SHAPER_PKT_FIRST | SHAPER_PKT_LAST | SHAPER_PKT_EXEMPT)),
	};
	struct shaper_out now_out;
	enum shaper_verdict v;

	if (so->conn < dp.conn_cap && tr->cc && !(mm->flags & MF_FOREIGN)) {
		struct dp_cc_state *cs = dp_cc_state(so->conn);

		rp_ready(cs, tr);
		dcqcn_rp_on_tx(&cs->rp.rp, &tr->prof, so->bytes, r->now_ns);
		rp_apply(r, cs, so->conn, lc->now);
	}
	mm->flags &= (uint8_t)~MF_CC;
	if (shaper_send_now(r->sh2, &p, lc->now, &now_out)) {
		if (mm->flags & MF_CP)
			cp_mark(lc, &now_out, m, mm);
		return true;
	}
	v = shaper_enqueue(r->sh2, &p, lc->now);
	if (v != SHAPER_OK) {
		lc->stats.drops[verdict_drop(v)]++;
		lc->tenant_stats[mm->tenant].drops++;
		rte_pktmbuf_free(m);
	}
	return false;
}

/* Stage 2 has an item free: what stage 1 lets go can always go on (PFC, as it were). */
static inline bool
stage2_room(const struct dp_rate_lcore *r)
{
	struct shaper_stats st;

	shaper_stats(r->sh2, &st);
	return st.items > st.items_used;
}

enum dp_drop
dp_rate_enqueue(struct dp_lcore *lc, const struct dp_shape_note *n, struct rte_mbuf *m, uint16_t out_port,
		bool *send_now)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct dp_mbuf_meta *mm = meta_of(m);
	struct shaper_pkt sp = n->sp;
	struct shaper_out so;
	enum shaper_verdict v;

	sp.cookie = (uintptr_t)m;
	sp.bytes = m->pkt_len;
	mm->charge = sp.charge;
	mm->out_port = out_port;
	mm->tenant = n->tenant;
	mm->l3_off = n->l3;
	mm->flags = (uint8_t)(n->mf | (n->foreign ? MF_FOREIGN : 0));
	*send_now = false;
	/* Cut-through: a frame that would leave at once does not queue. */
	if ((!(mm->flags & MF_CC) || stage2_room(r)) && shaper_send_now(r->sh, &sp, lc->now, &so)) {
		lc->stats.shaped++;
		*send_now = !(mm->flags & MF_CC) || stage2_enqueue(lc, &so, m, mm);
		return DP_DROP_NONE;
	}
	/* With DCQCN, stage 1's tenant has no bucket: the charge is kept for stage 2. */
	v = shaper_enqueue(r->sh, &sp, lc->now);
	if (v == SHAPER_OK)
		lc->stats.shaped++;
	return verdict_drop(v);
}

/* ---- Leaving the shapers ---- */

/* Backpressure on every shaped port before the item pools run out. */
static inline bool
pool_low(const struct dp_rate_lcore *r, unsigned n_rx)
{
	struct shaper_stats a, b;
	uint32_t room = (uint32_t)DP_BURST * (n_rx + 1);

	shaper_stats(r->sh, &a);
	shaper_stats(r->sh2, &b);
	return a.items - a.items_used < room || b.items - b.items_used < room;
}

void
dp_rate_unshape_check(struct dp_lcore *lc, uint64_t now)
{
	struct dp_rate_lcore *r = &lc->rate;

	for (uint32_t s = 0; s < DP_MAX_TENANTS && r->n_unshape; s++) {
		struct shaper_tenant_stats a, b;

		if (!r->tenants[s].unshape_pending)
			continue;
		shaper_tenant_stats(r->sh, s, now, &a);
		shaper_tenant_stats(r->sh2, s, now, &b);
		if (a.queued_bytes || b.queued_bytes)
			continue;
		r->tenants[s].unshape_pending = false;
		r->tenants[s].shaped = false;
		r->n_unshape--;
		r->n_shaped--;
	}
}

unsigned
dp_rate_dequeue(struct dp_lcore *lc, uint64_t now, struct rte_mbuf **pkts, uint16_t *ports, unsigned max)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct shaper_out out[DP_BURST];
	unsigned n, k = 0;
	void *msg;

	if (!r->sh)
		return 0;
	if (r->cc_any) {
		r->now_ns = tsc_ns(now);
		while (rte_ring_dequeue(r->cc_ring, &msg) == 0)
			dp_cc_rp_cnp(lc, (uint32_t)((uintptr_t)msg >> 32), (uint32_t)(uintptr_t)msg);
		if (r->n_timers)
			dp_cc_timers_run(lc);
	}
	r->pool_low = pool_low(r, lc->n_rx);
	max = RTE_MIN(max, (unsigned)DP_BURST);
	for (int stage = 1; stage <= 2 && k < max; stage++) {
		unsigned lim = max - k;

		/* Stage 1 holds what stage 2 has no room for: no loss between the two (PFC, as it were). */
		if (stage == 1 && r->cc_any) {
			struct shaper_stats st;

			shaper_stats(r->sh2, &st);
			lim = RTE_MIN(lim, st.items - st.items_used);
		}
		n = lim ? shaper_dequeue(stage == 1 ? r->sh : r->sh2, now, out, lim) : 0;
		for (unsigned i = 0; i < n; i++) {
			struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)out[i].cookie;
			struct dp_mbuf_meta *mm = meta_of(m);

			if (unlikely(r->n_draining) && out[i].conn < dp.conn_cap &&
			    __atomic_load_n(&dp_conn_state(out[i].conn)->egress.draining, __ATOMIC_RELAXED)) {
				lc->stats.drops[DP_DROP_CONN_REMOVED]++;
				lc->tenant_stats[mm->tenant].drops++;
				rte_pktmbuf_free(m);
				if (conn_empty(r, out[i].conn)) {
					conn_drained(r, out[i].conn);
					r->n_draining--;
				}
				continue;
			}
			if ((mm->flags & MF_CC) && !stage2_enqueue(lc, &out[i], m, mm))
				continue;
			if (stage == 2 && (mm->flags & MF_CP))
				cp_mark(lc, &out[i], m, mm);
			pkts[k] = m;
			ports[k++] = mm->out_port;
		}
	}
	return k;
}

bool
dp_rate_idle(const struct dp_lcore *lc)
{
	struct shaper_stats a, b;

	if (!lc->rate.sh)
		return true;
	shaper_stats(lc->rate.sh, &a);
	shaper_stats(lc->rate.sh2, &b);
	return a.items_used == 0 && b.items_used == 0;
}

/*
 * The shaped frames of a burst of a tenant without DCQCN offered to the
 * shaper's cut-through together (shaper_send_now_burst()): the tenant's
 * buckets and counters are updated once for all that go, not once a frame.
 * Those are marked (note.cut) for dp_s5_shape() to send; it offers the rest
 * to dp_rate_enqueue() one by one, in their order, as it would have.
 */
static void
cut_burst(struct dp_lcore *lc, struct dp_burst *b)
{
	struct shaper_pkt sp[DP_BURST];
	uint16_t idx[DP_BURST];
	unsigned n = 0, k;

	for (uint16_t i = 0; i < b->n; i++) {
		struct dp_pkt *p = &b->p[i];

		if (!dp_pkt_live(p) || !p->note.shaped)
			continue;
		/* Stage 2 follows stage 1 of a DCQCN tenant's frame: frame by frame. */
		if (p->note.mf & MF_CC)
			break;
		sp[n] = p->note.sp;
		sp[n].cookie = (uintptr_t)p->m;
		sp[n].bytes = p->m->pkt_len;
		idx[n++] = i;
	}
	k = shaper_send_now_burst(lc->rate.sh, sp, n, lc->now);
	for (unsigned j = 0; j < k; j++)
		b->p[idx[j]].note.cut = true;
	lc->stats.shaped += k;
}

void
dp_s5_shape(struct dp_lcore *lc, struct dp_burst *b, struct dp_txq *tq)
{
	struct rte_mbuf *dead[DP_BURST];
	uint16_t n_dead = 0;

	/* Only a tenant's port's bursts are shaped (stage 4, dp_rate_note()). */
	if (!b->uplink && lc->rate.sh && lc->rate.tenants[lc->ovl->tenants[b->tenant].slot].shaped)
		cut_burst(lc, b);
	for (uint16_t i = 0; i < b->n; i++) {
		struct dp_pkt *p = &b->p[i];
		enum dp_drop why = (enum dp_drop)p->drop;

		if (likely(why == DP_DROP_NONE)) {
			if (p->note.shaped) {
				bool send_now;

				if (p->note.cut) {
					dp_tx_enqueue(lc, tq, p->out, p->m);
					continue;
				}

				why = dp_rate_enqueue(lc, &p->note, p->m, p->out, &send_now);
				if (send_now)
					dp_tx_enqueue(lc, tq, p->out, p->m);
				if (likely(why == DP_DROP_NONE))
					continue;
			} else if (likely(p->out < DP_PORT_HELD)) {
				dp_tx_enqueue(lc, tq, p->out, p->m);
				continue;
			} else {
				/* Consumed; a held frame is the hold's now. */
				if (p->out == DP_PORT_NONE)
					dead[n_dead++] = p->m;
				continue;
			}
		}
		/*
		 * A drop is charged to the tenant whose port the frame came from, or
		 * on the fabric side to the tenant of the connection it was found to
		 * belong to.
		 */
		lc->stats.drops[why]++;
		if (p->tslot != OVL_NONE)
			lc->tenant_stats[p->tslot].drops++;
		if (unlikely(dp_nak_refusable(why))) {
			uint16_t nak_port;
			struct rte_mbuf *nak = dp_nak_refusal(lc, b, p, why, &nak_port);

			if (nak)
				dp_tx_enqueue(lc, tq, nak_port, nak);
		}
		dead[n_dead++] = p->m;
	}
	if (n_dead)
		rte_pktmbuf_free_bulk(dead, n_dead);
}

/* Frames the shapers release now, and the CNPs built during the burst. */
void
dp_tx_rate(struct dp_lcore *lc, struct dp_txq *tq, uint64_t now)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct rte_mbuf *m[DP_BURST];
	uint16_t port[DP_BURST];
	unsigned n = dp_rate_dequeue(lc, now, m, port, DP_BURST);

	for (unsigned i = 0; i < n; i++)
		dp_tx_enqueue(lc, tq, port[i], m[i]);
	for (uint16_t i = 0; i < r->n_cnp; i++)
		dp_tx_enqueue(lc, tq, r->cnp_port[i], r->cnp[i]);
	/*
	 * Paced frames leave when the shaper says, not up to 100 us later with
	 * the next drain, and a CNP at once: both are DCQCN's feedback loop.
	 */
	if (n || r->n_cnp)
		dp_tx_flush_all(lc, tq);
	r->n_cnp = 0;
}
