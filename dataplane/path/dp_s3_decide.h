/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DP_S3_DECIDE_H
#define DP_S3_DECIDE_H

#include "dp_acl.h"
#include "dp_decide.h"
#include "dp_estats.h"
#include "dp_path.h"
#include "dp_ud.h"
#include "dp_rewrite.h"

/*
 * Half @s of the connection of @p, to decide on: @s itself when this lcore
 * owns it (or takes it now, on its first frame); else a copy, so that the
 * frame is checked against the owner's state without writing it (a PMD
 * that spreads one QP over queues), and p->foreign tells the later stages
 * to leave the half, its Estats and DCQCN state alone.  Counted.
 */
static __rte_always_inline struct dp_dir_state *
half_for(struct dp_lcore *lc, struct dp_dir_state *s, struct dp_pkt *p)
{
	if (likely(dp_half_own(s, lc->idx)))
		return s;
	p->foreign = 1;
	lc->stats.conn_foreign++;
	lc->foreign_half = *s;
	return &lc->foreign_half;
}

/* The first packet of a request message: its decisions, kept on half @s. */
static __rte_always_inline enum dp_drop
msg_decide(const struct ovl *o, const struct ovl_conn *c, struct dp_dir_state *s, struct dp_pkt *p,
	   unsigned dir, bool owner, const uint8_t *owner_vip)
{
	enum dp_drop verdict = DP_DROP_NONE;
	/* The owner's vip is in L's view: of the fabric frame's IP version unless the connection translates. */
	unsigned vlen = dir == OVL_DIR_R2L ? c->ingress.addr_len : ip_addr_len(&p->pkt);

	if (msg_first(&p->pkt)) {
		if (unlikely(!dp_acl_msg_allowed(c, dir, p->pkt.flags)))
			verdict = DP_DROP_ACL_DENIED;
		else if (owner)
			verdict = dp_mr_check(o, c->tenant, owner_vip, vlen, p);
		msg_open(s, &p->pkt, verdict);
	} else if (p->pkt.flags & ROCE_OPF_REQ) {
		verdict = msg_continue(s, &p->pkt);
	}
	/* The IETH of a SEND with Invalidate rides on its Last or Only packet. */
	if (unlikely(p->pkt.flags & ROCE_OPF_INV) && owner && verdict == DP_DROP_NONE)
		verdict = dp_inv_check(o, c->tenant, owner_vip, vlen, p);
	return verdict;
}

/* A live frame from a tenant port: its verdict into p->drop, or p->done when it is finished. */
static __rte_always_inline void
dp_decide_egress(struct dp_lcore *lc, const struct ovl *o, const struct dp_burst *b, struct dp_pkt *p)
{
	if (unlikely(p->v & OVL_V_QP)) {
		p->drop = (uint8_t)dp_ud_egress(lc, o, b->in_port, p, OVL_V_IDX(p->v));
		p->done = 1;
		return;
	}

	const struct ovl_conn *c = &o->conns[OVL_V_IDX(p->v)];
	struct dp_dir_state *s = &dp_conn_state(c->state)->egress;
	unsigned alen = ip_addr_len(&p->pkt);
	enum dp_drop verdict;

	p->foreign = 0;

	if (unlikely(c->l_port != b->in_port || !dp_addr_eq(ip_src(p->data, &p->pkt), c->l_vip, alen) ||
		     !dp_mac_eq(p->data + 6, c->l_mac))) {
		p->drop = DP_DROP_SPOOFED_SOURCE;
		return;
	}
	if (unlikely(!transport_ok(p->pkt.opcode, c->l_type))) {
		p->drop = DP_DROP_TYPE_MISMATCH;
		return;
	}
	s = half_for(lc, s, p);
	dp_acl_seen(s, lc->now);
	verdict = dp_acl_conn_check(c, s);
	if (unlikely(cfg_qp_is_xrc(c->l_type)) && verdict == DP_DROP_NONE)
		verdict = dp_xrc_check(o, c, p, true);
	/* A hairpin's memory owner is this host too: R's window is checked here. */
	if (likely(verdict == DP_DROP_NONE))
		verdict = msg_decide(o, c, s, p, OVL_DIR_L2R, c->hairpin, ip_dst(p->data, &p->pkt));
	p->drop = (uint8_t)verdict;
}

/* A live frame from the fabric: its verdict into p->drop, or p->done when it is finished. */
static __rte_always_inline void
dp_decide_ingress(struct dp_lcore *lc, const struct ovl *o, struct dp_pkt *p)
{
	if (unlikely(p->v & OVL_V_QP)) {
		p->drop = (uint8_t)dp_ud_ingress(lc, o, p, OVL_V_IDX(p->v));
		p->done = 1;
		return;
	}

	uint32_t ci = OVL_V_IDX(p->v);
	const struct ovl_conn *c = &o->conns[ci];
	struct dp_dir_state *s = &dp_conn_state(c->state)->ingress;
	enum dp_drop verdict;

	p->foreign = 0;
	p->tslot = o->tenants[c->tenant].slot;
	/*
	 * Only R's host speaks for R, and a local R never speaks through the
	 * fabric: traffic between two QPs of this host is the switch's own
	 * hairpin, so a fabric frame claiming it is forged.
	 */
	if (unlikely(c->hairpin || !dp_addr_eq(ip_src(p->data, &p->pkt), c->r_host, ip_addr_len(&p->pkt)))) {
		p->drop = DP_DROP_SPOOFED_SOURCE;
		return;
	}
	if (unlikely(!transport_ok(p->pkt.opcode, c->l_type))) {
		p->drop = DP_DROP_TYPE_MISMATCH;
		return;
	}
	s = half_for(lc, s, p);
	dp_acl_seen(s, lc->now);
	verdict = dp_acl_conn_check(c, s);
	if (unlikely(verdict != DP_DROP_NONE)) {
		p->drop = (uint8_t)verdict;
		return;
	}
	/* Estats: the CE mark and the CNP, before DCQCN clears or consumes them. */
	if (likely(!p->foreign))
		dp_estats_ingress_marks(c->state, p->data, &p->pkt);
	/*
	 * DCQCN: CE marks answered with CNPs, CNPs taken by the reaction point
	 * (on its own lcore).  The notification point's state is the owner's:
	 * elsewhere a CE mark reaches the tenant, whose RNIC answers it.
	 */
	if (unlikely(lc->rate.cc_any) && (!p->foreign || p->pkt.opcode == ROCE_OP_CNP) &&
	    dp_cc_ingress(lc, o, ci, p->data, &p->pkt)) {
		s->pkts++;
		s->bytes += p->pkt.frame_len;
		p->out = DP_PORT_NONE;
		p->done = 1;
		return;
	}
	if (unlikely(cfg_qp_is_xrc(c->l_type)) && (verdict = dp_xrc_check(o, c, p, false)) != DP_DROP_NONE) {
		p->drop = (uint8_t)verdict;
		return;
	}
	p->drop = (uint8_t)msg_decide(o, c, s, p, OVL_DIR_R2L, true, c->l_vip);
}

#endif /* DP_S3_DECIDE_H */
