/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory translation at the owner's host and XRC SRQ renaming (dp_decide.h):
 * checked in stage 3, written in stage 4.
 */
#include "dp_decide.h"

/* The RETH or AtomicETH of @pkt (VA and R_Key lead both: the same 12 bytes), or NULL. */
static inline uint8_t *
mr_header(const struct roce_pkt *pkt, uint8_t *data)
{
	if (pkt->exts & ROCE_EXT_RETH)
		return roce_pkt_ext(pkt, data, ROCE_EXT_RETH);
	if (pkt->exts & ROCE_EXT_ATMETH)
		return roce_pkt_ext(pkt, data, ROCE_EXT_ATMETH);
	return NULL;
}

enum dp_drop
dp_mr_check(const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip, unsigned vip_len, struct dp_pkt *p)
{
	const struct roce_pkt *pkt = &p->pkt;
	uint32_t rkey, access, new_rkey;
	uint64_t va, len, new_va;
	int r;

	if (pkt->exts & ROCE_EXT_RETH) {
		const struct roce_reth *reth = roce_pkt_ext(pkt, p->data, ROCE_EXT_RETH);

		rkey = roce_reth_rkey(reth);
		va = roce_reth_va(reth);
		len = roce_reth_dmalen(reth);
		/*
		 * C9-88: a zero-length RDMA WRITE or READ names no memory; its
		 * R_Key and VA are not checked, and it goes through untranslated.
		 */
		if (len == 0 && (pkt->flags & (ROCE_OPF_WRITE | ROCE_OPF_READ)) &&
		    !(pkt->flags & ROCE_OPF_ATOMIC_WRITE))
			return DP_DROP_NONE;
		/* As rxe checks them: ATOMIC WRITE is a write; FLUSH needs its own right. */
		access = (pkt->flags & ROCE_OPF_READ) ? CFG_ACC_REMOTE_READ :
			 (pkt->flags & ROCE_OPF_FLUSH) ? CFG_ACC_FLUSH : CFG_ACC_REMOTE_WRITE;
	} else if (pkt->exts & ROCE_EXT_ATMETH) {
		const struct roce_atmeth *a = roce_pkt_ext(pkt, p->data, ROCE_EXT_ATMETH);

		rkey = roce_atmeth_rkey(a);
		va = roce_atmeth_va(a);
		len = 8;
		access = CFG_ACC_REMOTE_ATOMIC;
	} else {
		return DP_DROP_NONE;
	}
	r = ovl_mr_translate(o, tenant, owner_vip, vip_len, rkey, va, len, access, &new_rkey, &new_va);
	if (r != OVL_MR_OK) {
		if (!o->tenants[tenant].mr_enforce)
			return DP_DROP_NONE;
		return r == OVL_MR_UNKNOWN ? DP_DROP_MR_UNKNOWN :
		       r == OVL_MR_BOUNDS ? DP_DROP_MR_OUT_OF_BOUNDS : DP_DROP_MR_ACCESS_DENIED;
	}
	p->xl |= DP_XL_MR;
	p->mr_rkey = new_rkey;
	p->mr_va = new_va;
	return DP_DROP_NONE;
}

enum dp_drop
dp_inv_check(const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip, unsigned vip_len, struct dp_pkt *p)
{
	const struct roce_ieth *ieth = roce_pkt_ext(&p->pkt, p->data, ROCE_EXT_IETH);
	uint32_t idx = ovl_lookup_mr(o, tenant, owner_vip, vip_len, roce_ieth_rkey(ieth));

	if (idx == OVL_NONE)
		return o->tenants[tenant].mr_enforce ? DP_DROP_MR_UNKNOWN : DP_DROP_NONE;
	p->xl |= DP_XL_INV;
	p->inv_rkey = o->mrs[idx].target_rkey;
	return DP_DROP_NONE;
}

static void
mr_apply(struct dp_pkt *p, struct roce_icrc_delta *d)
{
	uint8_t *hdr = mr_header(&p->pkt, p->data), old[12];
	struct roce_reth *h = (struct roce_reth *)hdr;

	memcpy(old, hdr, 12);
	h->va_hi = htonl((uint32_t)(p->mr_va >> 32));
	h->va_lo = htonl((uint32_t)p->mr_va);
	h->rkey = htonl(p->mr_rkey);
	roce_icrc_delta_add(d, (uint32_t)(hdr - p->data), old, hdr, 12);
}

enum dp_drop
dp_xrc_check(const struct ovl *o, const struct ovl_conn *c, struct dp_pkt *p, bool egress)
{
	const struct roce_pkt *pkt = &p->pkt;
	bool req = !!(pkt->flags & ROCE_OPF_REQ);
	unsigned alen = ip_addr_len(pkt);
	uint32_t i, srqn, to;

	if (pkt->opcode == ROCE_OP_CNP)
		return DP_DROP_NONE;
	/* The sender is L toward the fabric, R from it; only an initiator requests. */
	if (req != (egress == (c->l_type == CFG_QP_XRC_INI)))
		return DP_DROP_TYPE_MISMATCH;
	if (!req)
		return DP_DROP_NONE;
	srqn = roce_xrceth_srq(roce_pkt_ext(pkt, p->data, ROCE_EXT_XRCETH));
	if (egress) {
		/* The destination vIP is R's: the SRQ is one of R's endpoint. */
		i = ovl_lookup_srq_tenant(o, c->tenant, ip_dst(p->data, pkt), alen, srqn);
		if (i == OVL_NONE)
			return DP_DROP_XRC_SRQ_UNKNOWN;
		to = c->hairpin ? srqn : o->srqs[i].psrqn;
	} else {
		/* The destination is L's host: the SRQ must be L's endpoint's, never another's. */
		i = ovl_lookup_srq_fabric(o, ip_dst(p->data, pkt), alen, srqn);
		if (i == OVL_NONE || o->srqs[i].endpoint != o->qps[c->l].endpoint)
			return DP_DROP_XRC_SRQ_UNKNOWN;
		to = o->srqs[i].vsrqn;
	}
	if (to != srqn) {
		p->xl |= DP_XL_SRQ;
		p->srqn = to;
	}
	return DP_DROP_NONE;
}

bool
dp_xl_apply(struct dp_pkt *p, struct roce_icrc_delta *d)
{
	if (p->xl & DP_XL_MR)
		mr_apply(p, d);
	if (p->xl & DP_XL_INV)
		roce_pkt_set_ieth_rkey(&p->pkt, p->data, p->inv_rkey, d);
	if (p->xl & DP_XL_SRQ)
		roce_pkt_set_xrc_srqn(&p->pkt, p->data, p->srqn, d);
	return (p->xl & DP_XL_KEYS) != 0;
}

