/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the learner (dp_learner.h): what its files share.  Everything
 * here belongs to the learner's thread, "roce-learn", but last_error, which
 * /roce/learn reads (torn text tolerated).
 *
 *   dp_learner.c      the thread: requests, resolutions, expiry, telemetry;
 *   dp_learner_rec.c  the records as JSON, batches through the apply path,
 *                     records taken away (a delete here, or in etcd);
 *   dp_learner_cm.c   RDMA-CM connections: which records a REQ and REP
 *                     installed, taken away at a REJ or a DREP (the rules:
 *                     dp_cm_track.c, pure), and the pair a REP tells;
 *   dp_learner_psn.c  the pair the PSNs tell, without RDMA-CM (the rule:
 *                     dp_psn_pair.c, pure).
 */
#ifndef DP_LEARNER_INT_H
#define DP_LEARNER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg_util.h"
#include "dp_learn.h"
#include "ovl.h"

/* A record the learner wrote: the half src -> (dst, dqpn) of tenant slot tslot. */
struct learned {
	struct learned *next;
	uint32_t tslot;
	struct ovl_ip dst, src;
	uint32_t dqpn;
	bool remote;              /* in etcd, on the lease */
	uint64_t since;           /* TSC it was written; idle time counts from here before any frame */
	char *key;                /* its etcd key (remote) */
	/*
	 * The source's own QPN, once RDMA-CM told it (0: not known): the record
	 * is written again naming it ("peer": {"vip", "vqpn"}), and with the
	 * record its pair's host wrote the other way it makes a connection
	 * (docs/learning.md, "Pairs").  @paired once that is written.
	 */
	uint32_t pair;
	bool paired;
};

/* Records (JSON texts, comma-separated) gathered for one batch. */
struct batch {
	char *txt;
	size_t len, cap;
	uint32_t n;
};

/* The apply path's last error of the learner's batches (/roce/learn's last_error). */
extern char dp_learner_last_error[256];

/* The tenant of stable slot @slot in @o, or OVL_NONE. */
uint32_t dp_learner_tenant_of_slot(const struct ovl *o, uint32_t slot);
void dp_learner_ip_of(struct ovl_ip *ip, const uint8_t *b, uint8_t alen);
const char *dp_learner_ip_str(const struct ovl_ip *ip, char buf[CFG_IP_STRLEN]);
/*
 * The half record as JSON text (malloc'ed): @pqpn 0 for none (its owner
 * chooses), @src_qpn the source's QPN when known (else 0), @key_only for a
 * delete.
 */
char *dp_learner_half_json(const char *tenant, const struct ovl_ip *dst, uint32_t dqpn, uint32_t pqpn, uint8_t type,
			   const struct ovl_ip *src, uint32_t src_qpn, bool key_only);
/* The UD record of @vip's GSI QP (QP1): @pqpn 0 for none (its owner chooses). */
char *dp_learner_gsi_json(const char *tenant, const struct ovl_ip *vip, uint32_t pqpn);
int dp_learner_batch_add(struct batch *b, const char *rec);
/* One batch through the apply path: 0, or -1 with the first error in last_error (and quota told apart). */
int dp_learner_apply(const char *op, const struct batch *b, bool *quota);
int dp_learner_apply_one(const char *op, const char *rec, bool *quota);
/*
 * The connection of @l in @o (caller holds dp.ctl_lock), and its tenant in
 * @t: its overlay value, or OVL_NONE when it is not in force as the learner
 * wrote it (not yet, or taken away, or replaced by another source's record).
 */
uint32_t dp_learner_in_force(const struct ovl *o, const struct learned *l, uint32_t *t);
/*
 * Take the records of the list @out away and free them: the local ones still
 * in force as one delete batch, those in etcd by a delete that compares the
 * lease (a record someone else wrote since stays).  Takes dp.ctl_lock.
 */
void dp_learner_forget(struct learned *out);
/*
 * Write @l's record again naming its pair (l->pair), once it is in force
 * here with its pqpn: a local one through the apply path, one in etcd while
 * it is on the switch's lease.  Sets l->paired when written (or when the
 * record is no longer this learner's).  Takes dp.ctl_lock.
 */
void dp_learner_pair_write(struct learned *l);

/*
 * RDMA-CM (dp_learner_cm.c): one message (@r->cm.attr set); what it removes
 * moves from @list to @out; *@due is set when a pair it told could not be
 * written yet.
 */
void dp_learner_cm(const struct dp_learn_req *r, struct learned **list, struct learned **out, bool *due,
		   uint64_t now);
/*
 * A REQ or REP noted before the records of its burst are written, so that a
 * REP in the same burst as its REQ finds it (dp_learner_cm_pair()); what
 * the REP pairs and what a REJ or DREP ends come after, in dp_learner_cm().
 */
void dp_learner_cm_note(const struct dp_learn_req *r, uint64_t now);
/*
 * Give the unpaired halves of @list the QPN of the half in force here that
 * answers them or that they answer, told by PSNs (dp_psn_pair.h;
 * dp_learner_psn.c); dp_learner_pair_write() writes them.  Takes dp.ctl_lock.
 */
void dp_learner_psn_pair(struct learned *list);
/*
 * The QPN that a REP delivered here pairs the half it makes the learner
 * learn with (its receiver's, which the REQ named), or 0.
 */
uint32_t dp_learner_cm_pair(const struct dp_learn_req *r);
/* CM connections never answered, and those whose halves are no longer in force, forgotten (takes dp.ctl_lock). */
void dp_learner_cm_expire(uint64_t now);
/* Forget every CM connection (at stop). */
void dp_learner_cm_free(void);

#endif /* DP_LEARNER_INT_H */
