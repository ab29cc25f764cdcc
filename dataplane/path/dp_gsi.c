/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tenant frames to the GSI QP (QP1): which go on, for stage 1 and for the
 * UD path (dp_ud.c).
 */
#include "dp_gsi.h"
#include "dp_gsi_limit.h"

/* Each tenant slot's limit on its MADs, shared by all lcores (dp_gsi_limit.h). */
static struct {
	struct dp_gsi_bucket b;
} __rte_cache_aligned gsi_buckets[DP_MAX_TENANTS];

/*
 * A tenant's frame to the GSI QP (QP1) goes on only from a learning tenant,
 * as a UD SEND Only carrying a MAD of the connection manager's class: the
 * switch forwards RDMA-CM, not the subnet's other management (docs/learning.md);
 * and at most the tenant's "gsi_pps" of them a second, over all lcores, so
 * that a tenant flooding QP1 loads neither the learner nor other tenants.
 */
bool
dp_gsi_passes(struct dp_lcore *lc, const struct ovl *o, uint32_t tenant, const struct dp_pkt *p)
{
	const struct ovl_tenant *t = &o->tenants[tenant];

	if (!t->qp_learning)
		return false;
	if (p->pkt.opcode != ROCE_OP_UD_SEND_ONLY || p->pkt.payload_len < 2 ||
	    p->data[p->pkt.payload_off + 1] != ROCE_MAD_CLASS_CM) {
		lc->stats.gsi_class_dropped++;
		return false;
	}
	if (!dp_gsi_take(&gsi_buckets[t->slot].b, lc->now, rte_get_tsc_hz(), t->gsi_pps)) {
		lc->stats.gsi_rate_dropped++;
		return false;
	}
	lc->stats.gsi_forwarded++;
	return true;
}
