/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 4, rewrite, with stage 3 (dp_s3_decide.h) frame by frame before it:
 * apply the connection's template for its direction (MACs,
 * addresses, DestQP, the IPv4 checksum difference and the ICRC difference
 * precomputed for it), the memory translation stage 3 noted, and seal the
 * frame with its new ICRC.  Then the bookkeeping of a forwarded frame:
 * request and answer tracking, counters, what the shaper needs, and the
 * output port.  Counters are summed in locals and written once per run of
 * frames of one connection, and once per burst for the lcore.
 */
#include "dp_acl.h"
#include "dp_decide.h"
#include "dp_s3_decide.h"
#include "dp_estats.h"
#include "dp_s4_rewrite.h"
#include "dp_xlate.h"
#include "dp_rewrite.h"
#include "dp_vlan.h"

/* A run of frames of one connection half: its packet and byte counts, written when the run ends. */
struct run {
	struct dp_dir_state *s;
	uint64_t pkts, bytes;
};

static inline void
run_add(struct run *r, struct dp_dir_state *s, uint32_t bytes)
{
	if (r->s != s) {
		if (r->s) {
			r->s->pkts += r->pkts;
			r->s->bytes += r->bytes;
		}
		r->s = s;
		r->pkts = r->bytes = 0;
	}
	r->pkts++;
	r->bytes += bytes;
}

static inline void
run_end(struct run *r)
{
	if (r->s) {
		r->s->pkts += r->pkts;
		r->s->bytes += r->bytes;
	}
}

/* The template and the noted translation applied, the frame sealed. */
static __rte_always_inline void
rename_frame(struct dp_pkt *p, const struct ovl_rewrite *rw, uint64_t *mr_translated)
{
	struct roce_icrc_delta d;

	if (unlikely(rw->xlate_from)) {
		/* Another IP version on the other side: a new IP header, a new ICRC. */
		if (unlikely(!dp_xlate_frame(p, rw, mr_translated)))
			p->drop = DP_DROP_NONLINEAR;
		return;
	}
	roce_icrc_delta_init(&d);
	rewrite_apply(p->data, &p->pkt, rw, &d);
	if (unlikely(p->xl))
		*mr_translated += dp_xl_apply(p, &d);
	frame_finish(p->data, &p->pkt, &d);
}

static void
rewrite_egress(struct dp_lcore *lc, struct dp_burst *b)
{
	const struct ovl *o = lc->ovl;
	uint32_t slot = o->tenants[b->tenant].slot;
	/* One port, one tenant: whether its frames are shaped is the burst's. */
	const bool shaped = lc->rate.sh && lc->rate.tenants[slot].shaped;
	uint64_t fwd = 0, hairpin = 0, cnp = 0, mr = 0, bytes = 0, hp_bytes = 0;
	struct run run = { 0 };
	/* Estats: whether it records, and its clock, once a burst. */
	const bool es = dp_estats_recording();
	const uint64_t es_ns = es ? dp_estats_ns(lc->rx_tsc) : 0;

	for (uint16_t i = 0; i < b->n; i++) {
		struct dp_pkt *p = &b->p[i];

		/* A held frame (dp_hold.c) is done already. */
		if (!dp_pkt_live(p) || p->done)
			continue;
		dp_decide_egress(lc, o, b, p);
		if (!dp_pkt_live(p) || p->done)
			continue;

		const struct ovl_conn *c = &o->conns[OVL_V_IDX(p->v)];
		struct dp_conn_state *st = dp_conn_state(c->state);
		uint32_t len = p->pkt.frame_len;

		rename_frame(p, &c->egress, &mr);
		if (unlikely(!dp_vlan_out(o, c->tenant, c->egress.port, p))) {
			p->drop = DP_DROP_TX_FAILED;
			continue;
		}
		/* The half's bookkeeping is its owner's (dp_s3_decide.h). */
		if (likely(!p->foreign)) {
			/* A request forwarded: a later refusal gets its NAK again (dp_nak.c). */
			if (unlikely(st->egress.nak_sent) && (p->pkt.flags & ROCE_OPF_REQ))
				st->egress.nak_sent = 0;
			/* Answers to L's requests come back on the ingress half, or on R's own connection for a hairpin. */
			dp_acl_track(&st->egress, likely(!c->hairpin) ? &st->ingress : dp_acl_answers_to_l(o, c),
				     &p->pkt, p->data);
			if (es && likely(!c->hairpin))
				dp_estats_egress_at(c->state, p->data, &p->pkt, es_ns);
			run_add(&run, &st->egress, len);
		}
		bytes += len;
		if (c->hairpin) {
			/* Delivered to the same tenant's other endpoint: ingress too. */
			hairpin++;
			hp_bytes += len;
		} else {
			fwd++;
		}
		cnp += p->pkt.opcode == ROCE_OP_CNP;
		if (shaped) {
			dp_rate_note(lc, &p->note, c->state, slot, p->data, &p->pkt, c->hairpin);
			p->note.foreign = p->foreign;
		}
		p->out = c->egress.port;
	}
	run_end(&run);
	if (fwd + hairpin) {
		struct dp_tenant_stats *ts = &lc->tenant_stats[slot];

		ts->egress_pkts += fwd + hairpin;
		ts->egress_bytes += bytes;
		ts->ingress_pkts += hairpin;
		ts->ingress_bytes += hp_bytes;
		lc->stats.fwd_egress += fwd;
		lc->stats.fwd_hairpin += hairpin;
		lc->stats.cnp_forwarded += cnp;
		lc->stats.mr_translated += mr;
	}
}

static void
rewrite_ingress(struct dp_lcore *lc, struct dp_burst *b)
{
	const struct ovl *o = lc->ovl;
	uint64_t fwd = 0, cnp = 0, mr = 0, t_pkts = 0, t_bytes = 0;
	uint32_t t_slot = OVL_NONE;
	struct run run = { 0 };
	const bool es = dp_estats_recording();
	const uint64_t es_ns = es ? dp_estats_ns(lc->rx_tsc) : 0;

	for (uint16_t i = 0; i < b->n; i++) {
		struct dp_pkt *p = &b->p[i];

		if (!dp_pkt_live(p))
			continue;
		dp_vlan_ingress_check(o, b, p);
		if (unlikely(!dp_pkt_live(p)))
			continue;
		dp_decide_ingress(lc, o, p);
		if (!dp_pkt_live(p) || p->done)
			continue;

		const struct ovl_conn *c = &o->conns[OVL_V_IDX(p->v)];
		struct dp_conn_state *st = dp_conn_state(c->state);
		uint32_t len = p->pkt.frame_len;

		rename_frame(p, &c->ingress, &mr);
		if (unlikely(!dp_vlan_out(o, c->tenant, c->ingress.port, p))) {
			p->drop = DP_DROP_TX_FAILED;
			continue;
		}
		if (likely(!p->foreign)) {
			if (unlikely(st->ingress.nak_sent) && (p->pkt.flags & ROCE_OPF_REQ))
				st->ingress.nak_sent = 0;
			dp_acl_track(&st->ingress, &st->egress, &p->pkt, p->data);
			if (es)
				dp_estats_ingress_at(c->state, p->data, &p->pkt, es_ns);
			run_add(&run, &st->ingress, len);
		}
		if (p->tslot != t_slot) {
			if (t_pkts) {
				lc->tenant_stats[t_slot].ingress_pkts += t_pkts;
				lc->tenant_stats[t_slot].ingress_bytes += t_bytes;
			}
			t_slot = p->tslot;
			t_pkts = t_bytes = 0;
		}
		t_pkts++;
		t_bytes += len;
		fwd++;
		cnp += p->pkt.opcode == ROCE_OP_CNP;
		p->out = c->ingress.port;
	}
	run_end(&run);
	if (t_pkts) {
		lc->tenant_stats[t_slot].ingress_pkts += t_pkts;
		lc->tenant_stats[t_slot].ingress_bytes += t_bytes;
	}
	lc->stats.fwd_ingress += fwd;
	lc->stats.cnp_forwarded += cnp;
	lc->stats.mr_translated += mr;
}

void
dp_s4_rewrite(struct dp_lcore *lc, struct dp_burst *b)
{
	if (b->uplink)
		rewrite_ingress(lc, b);
	else
		rewrite_egress(lc, b);
}
