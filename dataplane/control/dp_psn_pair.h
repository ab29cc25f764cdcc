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
 * half that more than one other half would match is left alone, and so is
 * a span of more than DP_PSN_SPAN_MAX requests outstanding.
 *
 * The halves are indexed twice, by their acknowledged PSNs and by the first
 * PSNs of their spans, so that a match costs two binary searches and a walk
 * over the few entries within a span, however many QPs two endpoints share.
 */
#ifndef DP_PSN_PAIR_H
#define DP_PSN_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#define DP_PSN_SPAN_MAX 16384u

struct dp_psn_half {
	uint32_t tenant, from, to;  /* the endpoints (indices) whose frames it carries, from -> to */
	uint32_t vqpn;              /* its QP's (to's) */
	uint32_t req_first, req_newest; /* the requests it carried, when req_valid */
	uint32_t acked;             /* the PSN its latest acknowledgement answered, when ack_valid */
	bool req_valid, ack_valid;
	uint32_t id;                /* the caller's */
};

struct dp_psn_index {
	struct dp_psn_half *ack, *req;  /* by (tenant, from, to, acked) and (..., req_first) */
	uint32_t n_ack, n_req;
};

/* Index the @n halves of @h (copied). 0, or -1 out of memory. */
int dp_psn_index(struct dp_psn_index *x, const struct dp_psn_half *h, uint32_t n);
void dp_psn_index_free(struct dp_psn_index *x);

/*
 * The half of @x that goes the other way from @a's and answers @a's
 * requests, or whose requests @a answers, when exactly one does; else NULL.
 */
const struct dp_psn_half *dp_psn_match(const struct dp_psn_index *x, const struct dp_psn_half *a);

#endif /* DP_PSN_PAIR_H */
