/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the etcd follower's record map (dp_cluster_rec.h), shared by its
 * three files: dp_cluster_rec.c (the map: keys, values, what changed, what
 * waits on what), dp_cluster_pqpn.c (pqpns chosen by this switch, learned
 * write-backs) and dp_cluster_apply.c (the reconcile into deltas).  All of it
 * runs under the follower's rec_lock (dp_cluster.c), one thread at a time.
 */
#ifndef DP_CLUSTER_REC_INT_H
#define DP_CLUSTER_REC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

enum { K_TENANTS, K_ENDPOINTS, K_QPS, K_MRS, K_N };
extern const char *const dp_rec_kind_names[K_N];
/* The mod_rev of a record etcd no longer holds. */
#define MOD_DELETED (-2)
/* The subscriptions of one record left out (dp_rec_pending()). */
#define REC_SUBS 4

struct rec {
	char *key;
	int kind;
	char *part[3];            /* the key's components after the kind */
	json_t *want, *applied;   /* NULL: absent */
	int64_t mod_rev;
	int64_t rejected_rev;     /* the mod revision whose rejection was counted, -1 none */
	int64_t pqpn_rev;         /* the mod revision a pqpn was asked for, -1 none */
	uint32_t pqpn_asked;      /* the pqpn written back for pqpn_rev (0: none) */
	bool seen;                /* during a full read */
	bool waiting;             /* left out of the last batch for a record etcd does not hold (yet) */
	bool dirty;               /* changed in etcd since the last reconcile (in rs.dirty) */
	bool cand;                /* in the reconcile in progress */
	char field[24];           /* the field its last error named ("pqpn", "peer"; "": none) */
	char *subs[REC_SUBS];     /* left out: what it waits on (rs.subs), NULL-terminated */
	char *write_back;         /* a learned QP's pqpn, applied here first: written to etcd once in force */
};

struct rec_map {
	char *prefix;
	struct rec *r;
	uint32_t n, cap;
	json_t *idx;              /* key -> index into r */
	uint32_t *dirty, n_dirty, cap_dirty;
	json_t *subs;             /* what can change -> {key of a record left out that waits on it: null} */
	bool all;                 /* look at every record at the next reconcile (a full read, a file reload) */
	uint64_t deltas_seen;     /* dp_delta_totals.applied when this follower last applied or looked */
};
extern struct rec_map rs;

/* Count @r's current value as rejected once, and make the reason the last error. */
void dp_rec_reject(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The record of @key; made if new and @make; NULL when @key is not a record key (reported). */
struct rec *dp_rec_get(const char *key, bool make);
/* The endpoint record of @r's tenant and vip, or NULL. */
struct rec *dp_rec_endpoint(const struct rec *r);
bool dp_rec_ip_eq(json_t *v, const char *s);
/* True when @r's value differs from what the running configuration holds from it. */
bool dp_rec_needs(const struct rec *r);
/* What a change of @r can make valid again, by name, into the set @ev (rs.subs' keys). */
void dp_rec_events(const struct rec *r, json_t *ev);
/* @r left out (or not any more, @out false): waits on what its kind and @r->field say. */
void dp_rec_pending(struct rec *r, bool out);
/* Forget the records etcd deleted that the running configuration no longer holds, among @i[@n]. */
void dp_rec_compact(const uint32_t *i, uint32_t n);

/* dp_cluster_pqpn.c: a QP without "pqpn" on this host; true when it joins the batch (learned). */
bool dp_rec_pqpn_allocate(struct rec *r);
/* The write-backs of learned QPs among the records @i[@n] whose records are in force now. */
void dp_rec_write_backs(const uint32_t *i, uint32_t n);

#endif /* DP_CLUSTER_REC_INT_H */
