/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA-CM connections followed by their messages, for the learner
 * (dp_learner_cm.c; docs/learning.md, "RDMA-CM").  Pure: plain vips and
 * integers, time passed in; no EAL.  Used by one thread.
 *
 * A connection is known by its tenant slot, its two vips and the two ends'
 * Communication IDs: the REQ names the active side's (and its QPN), the REP
 * both (and the passive side's QPN).  It ends
 *
 *   - at a REJ, of the REQ (from the passive side: the active side's ID must
 *     match, the passive side's is new) or of the REP (both must match);
 *   - at a DREP that answers a DREQ of the other side (both IDs, both
 *     messages).  A DREQ alone ends nothing: its DREP may be lost and the
 *     DREQ sent again, and a DREQ is one side's word.
 *
 * A QPN alone never matches: a REJ, DREQ or DREP that names no connection of
 * its tenant slot by vips and both IDs is unmatched.
 */
#ifndef DP_CM_TRACK_H
#define DP_CM_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "ovl.h"

/* Tenant slots (DP_MAX_TENANTS) and the connections followed in each. */
#define DP_CM_SLOTS 4096
#define DP_CM_PER_SLOT 4096

struct dp_cm_conn {
	struct dp_cm_conn *next;
	uint32_t tslot;
	struct ovl_ip vip[2];     /* [0] the active side (the REQ's sender), [1] the passive side */
	uint32_t id[2];           /* their Communication IDs */
	uint32_t qpn[2];          /* their QPNs (the REQ's, the REP's Local QPN); 0: not seen */
	uint8_t known;            /* bit k: id[k] is known */
	uint8_t dreq;             /* bit k: side k sent a DREQ */
	uint64_t last;            /* time of its last message */
};

struct dp_cm_table {
	struct dp_cm_conn *list[DP_CM_SLOTS];
	uint32_t n[DP_CM_SLOTS];
};

/* One CM message: @from sent it to @to (REQ, REP, REJ, DREQ or DREP; others are ignored). */
struct dp_cm_msg {
	uint32_t tslot;
	uint16_t attr;            /* enum roce_cm_attr */
	struct ovl_ip from, to;
	uint32_t local_id, remote_id; /* the sender's and the receiver's Communication IDs */
	uint32_t qpn;             /* REQ, REP: the sender's Local QPN */
};

enum dp_cm_verdict {
	DP_CM_NOTED,              /* a REQ, a REP, a DREQ of a connection: followed */
	DP_CM_ENDS,               /* a REJ, a DREP that answers a DREQ: *ended is the connection */
	DP_CM_UNMATCHED,          /* a REJ, DREQ or DREP that names no connection */
	DP_CM_IGNORED,            /* another attribute, or a REQ or REP beyond DP_CM_PER_SLOT */
};

/*
 * Follow @m at @now.  DP_CM_ENDS: *@ended points at the link to the
 * connection that ends; the caller takes its halves away (dp_cm_half()),
 * then closes it (dp_cm_close()) before it calls anything else here.
 */
enum dp_cm_verdict dp_cm_track(struct dp_cm_table *t, const struct dp_cm_msg *m, uint64_t now,
			       struct dp_cm_conn ***ended);
void dp_cm_close(struct dp_cm_table *t, struct dp_cm_conn **pc);
/* Is src -> (dst, dqpn) of @tslot one of @c's halves (side k sending to side 1-k's QPN)? */
bool dp_cm_half(const struct dp_cm_conn *c, uint32_t tslot, const struct ovl_ip *src, const struct ovl_ip *dst,
		uint32_t dqpn);
/*
 * The QPN that the REQ of the connection of @tslot from @active (its
 * Communication ID @active_id) to @passive named, or 0: what a REP, which
 * names the passive side's QPN and both IDs, pairs with.
 */
uint32_t dp_cm_active_qpn(const struct dp_cm_table *t, uint32_t tslot, const struct ovl_ip *active,
			  const struct ovl_ip *passive, uint32_t active_id);
/* Forget the connections of which @keep(c, arg) is false and that had no message for @idle. */
void dp_cm_expire(struct dp_cm_table *t, uint64_t now, uint64_t idle,
		  bool (*keep)(const struct dp_cm_conn *c, void *arg), void *arg);
void dp_cm_free(struct dp_cm_table *t);

#endif /* DP_CM_TRACK_H */
