/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NAKs that answer refused requests (dp_nak.c), for stage 5.
 */
#ifndef DP_NAK_H
#define DP_NAK_H

#include "dp_path.h"

/*
 * Stage 5, for a frame dropped for @why: the NAK that answers it, if it is
 * an RC request refused for an access reason and its half of the
 * connection has sent no NAK since it last forwarded a request (dp_nak.c);
 * NULL otherwise.  *out: its port.
 */
struct rte_mbuf *dp_nak_refusal(struct dp_lcore *lc, const struct dp_burst *b, const struct dp_pkt *p,
				enum dp_drop why, uint16_t *out);

/* Drops answered with a NAK: access refused at the memory's owner, or by the ACL. */
static inline bool
dp_nak_refusable(enum dp_drop why)
{
	return why == DP_DROP_MR_UNKNOWN || why == DP_DROP_MR_OUT_OF_BOUNDS || why == DP_DROP_MR_ACCESS_DENIED ||
	       why == DP_DROP_ACL_DENIED;
}

#endif /* DP_NAK_H */
