/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory translation at the owner's host (dp_decide.h). */
#include "dp_decide.h"

enum dp_drop
dp_mr_translate(struct dp_lcore *lc, const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip,
	     unsigned alen, uint8_t *data, const struct roce_pkt *pkt, struct roce_icrc_delta *d)
{
	uint8_t *hdr, old[12];
	uint32_t rkey, access, new_rkey;
	uint64_t va, len, new_va;
	int r;

	if (pkt->exts & ROCE_EXT_RETH) {
		struct roce_reth *reth = roce_pkt_ext(pkt, data, ROCE_EXT_RETH);

		hdr = (uint8_t *)reth;
		rkey = roce_reth_rkey(reth);
		va = roce_reth_va(reth);
		len = roce_reth_dmalen(reth);
		access = (pkt->flags & ROCE_OPF_READ) ? CFG_ACC_REMOTE_READ : CFG_ACC_REMOTE_WRITE;
	} else if (pkt->exts & ROCE_EXT_ATMETH) {
		struct roce_atmeth *a = roce_pkt_ext(pkt, data, ROCE_EXT_ATMETH);

		hdr = (uint8_t *)a;
		rkey = roce_atmeth_rkey(a);
		va = roce_atmeth_va(a);
		len = 8;
		access = CFG_ACC_REMOTE_ATOMIC;
	} else {
		return DP_DROP_NONE;
	}
	r = ovl_mr_translate(o, tenant, owner_vip, alen, rkey, va, len, access, &new_rkey, &new_va);
	if (r != OVL_MR_OK) {
		if (!o->tenants[tenant].mr_enforce)
			return DP_DROP_NONE;
		return r == OVL_MR_UNKNOWN ? DP_DROP_MR_UNKNOWN :
		       r == OVL_MR_BOUNDS ? DP_DROP_MR_OUT_OF_BOUNDS : DP_DROP_MR_ACCESS_DENIED;
	}
	/* VA and R_Key lead both headers: the same 12 bytes. */
	memcpy(old, hdr, 12);
	((struct roce_reth *)hdr)->va_hi = htonl((uint32_t)(new_va >> 32));
	((struct roce_reth *)hdr)->va_lo = htonl((uint32_t)new_va);
	((struct roce_reth *)hdr)->rkey = htonl(new_rkey);
	roce_icrc_delta_add(d, (uint32_t)(hdr - data), old, hdr, 12);
	lc->stats.mr_translated++;
	return DP_DROP_NONE;
}
