/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The decisions a frame needs before it is renamed: whether its opcode fits
 * the QP, the message it belongs to, and (for the owner of the memory) the
 * translation and check of an advertised RETH or AtomicETH.
 */
#ifndef DP_DECIDE_H
#define DP_DECIDE_H

#include "dp_path.h"
#include "dp_rewrite.h"

/*
 * Message-level bookkeeping of requests.  A First or Only opens a message
 * and its decisions are made once (@decide); Middle and Last reuse them.  A
 * Middle or Last with no open message (a go-back-N retransmission) forwards.
 */
static inline bool
msg_first(const struct roce_pkt *pkt)
{
	return (pkt->flags & (ROCE_OPF_REQ | ROCE_OPF_FIRST)) == (ROCE_OPF_REQ | ROCE_OPF_FIRST) ||
	       (pkt->flags & (ROCE_OPF_REQ | ROCE_OPF_ONLY)) == (ROCE_OPF_REQ | ROCE_OPF_ONLY);
}

static inline enum dp_drop
msg_continue(struct dp_dir_state *s, const struct roce_pkt *pkt)
{
	bool denied = s->msg_open && s->msg_denied;

	if (pkt->flags & ROCE_OPF_LAST)
		s->msg_open = s->msg_denied = 0;
	return denied ? DP_DROP_MESSAGE_DENIED : DP_DROP_NONE;
}

static inline void
msg_open(struct dp_dir_state *s, const struct roce_pkt *pkt, enum dp_drop verdict)
{
	s->msg_open = !!(pkt->flags & ROCE_OPF_FIRST);
	s->msg_denied = verdict != DP_DROP_NONE;
}

/* Does the opcode's transport fit the QP's type? CNPs fit any. */
static inline bool
transport_ok(uint8_t opcode, uint8_t qp_type)
{
	unsigned tr = roce_opcode_transport(opcode);

	if (opcode == ROCE_OP_CNP)
		return true;
	switch (qp_type) {
	case CFG_QP_RC:
		return tr == ROCE_TR_RC;
	case CFG_QP_UC:
		return tr == ROCE_TR_UC;
	case CFG_QP_XRC_INI:
	case CFG_QP_XRC_TGT:
		return tr == ROCE_TR_XRC;
	default:
		return tr == ROCE_TR_UD;
	}
}

/* What stage 3 found to translate at the owner's host (dp_pkt.xl). */
#define DP_XL_MR 1u   /* a RETH or AtomicETH: mr_rkey, mr_va */
#define DP_XL_INV 2u  /* an IETH: inv_rkey */
#define DP_XL_SRQ 4u  /* an XRCETH: srqn */
/* The translations of memory keys (mr_translated counts them). */
#define DP_XL_KEYS (DP_XL_MR | DP_XL_INV)

/*
 * The owner's side of memory, in two steps.  dp_mr_check() (stage 3) finds
 * the window an advertised RETH or AtomicETH of @p names among @tenant's
 * memory regions owned by @owner_vip, checks bounds and access when the
 * tenant enforces them, and notes the translation in @p (p->mr); a frame
 * without either header, or an unknown window of a tenant that does not
 * enforce, passes untranslated.  dp_mr_apply() (stage 4) writes the noted
 * translation and adds its change to the ICRC difference @d.
 */
enum dp_drop dp_mr_check(const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip, unsigned vip_len,
			 struct dp_pkt *p);

/*
 * A SEND with Invalidate names an R_Key of the receiver, the owner: as
 * advertised, so it is translated like a RETH's (the same tenant, the same
 * owner; under mr_check "enforce" a key the owner never registered is
 * mr_unknown).  Checked on every packet that carries an IETH.
 */
enum dp_drop dp_inv_check(const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip, unsigned vip_len,
			  struct dp_pkt *p);

/*
 * An XRC connection's frame (docs/xrc.md): requests go from the initiator to
 * the target only, responses back (type_mismatch otherwise; CNPs either
 * way).  A request's XRCETH names an SRQ of the target's endpoint: toward
 * the fabric (@egress) its vsrqn, renamed to the psrqn; from the fabric a
 * psrqn of this host, which must be an SRQ of L's endpoint, renamed to its
 * vsrqn; a hairpin keeps it.  Anything else is xrc_srq_unknown.  Noted in
 * @p (DP_XL_SRQ) for dp_xl_apply().
 */
enum dp_drop dp_xrc_check(const struct ovl *o, const struct ovl_conn *c, struct dp_pkt *p, bool egress);

/*
 * Stage 4: write what the checks noted (p->xl) and add the changes to the
 * ICRC difference @d.  True when memory keys were translated (what
 * mr_translated counts; an XRC SRQ rename alone is not).
 */
bool dp_xl_apply(struct dp_pkt *p, struct roce_icrc_delta *d);

#endif /* DP_DECIDE_H */
