/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairs of learned halves told by their PSNs, for applications that
 * exchange their QPNs out of band, not through RDMA-CM (docs/learning.md,
 * "Pairs").  Pure: plain integers; no EAL.
 *
 * A half carries one direction's frames of one QP: from the endpoint that
 * sends to the endpoint that owns the QP.  The switch already records, per
 * direction, the span of requests forwarded (the oldest outstanding and the
 * newest PSN) and the PSN that the latest acknowledgement answered (its
 * AETH's).  An RC responder acknowledges the PSN of a request it received
 * (IBTA 9.7.5.1), so a half whose acknowledged PSN lies within the span of
 * requests of a half going the other way between the same two endpoints
 * answers that half's QP: the two are one connection.  A QP's initial PSN
 * is chosen at random in 24 bits, so two spans meet by chance rarely; a
 * half that more than one other half would match is left alone.
 */
#ifndef DP_PSN_PAIR_H
#define DP_PSN_PAIR_H

#include <stdbool.h>
#include <stdint.h>

struct dp_psn_half {
	uint32_t tenant, from, to;  /* the endpoints (indices) whose frames it carries, from -> to */
	uint32_t vqpn;              /* its QP's (to's) */
	uint32_t req_first, req_newest; /* the requests it carried, when req_valid */
	uint32_t acked;             /* the PSN its latest acknowledgement answered, when ack_valid */
	bool req_valid, ack_valid;
	uint32_t id;                /* the caller's */
};

/* Sort @h by (tenant, from, to), as dp_psn_match() wants it. */
void dp_psn_sort(struct dp_psn_half *h, uint32_t n);

/*
 * The half of @h (sorted) that goes the other way from @a's and answers @a's
 * requests, or whose requests @a answers, when exactly one does; else NULL.
 */
const struct dp_psn_half *dp_psn_match(const struct dp_psn_half *h, uint32_t n, const struct dp_psn_half *a);

#endif /* DP_PSN_PAIR_H */
