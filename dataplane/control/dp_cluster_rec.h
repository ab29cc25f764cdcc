/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's record map (dp_cluster_rec.c): every key seen under the
 * prefix, reconciled into the running configuration as deltas.  Used by the
 * watch thread (full reads) and the apply thread (watch messages), one at a
 * time under a lock of dp_cluster.c.
 */
#ifndef DP_CLUSTER_REC_H
#define DP_CLUSTER_REC_H

#include <stddef.h>
#include <stdint.h>

/* The record map. */
void dp_cluster_rec_init(const char *prefix);
void dp_cluster_rec_free(void);
/* Record the value of @key (NUL-terminated, @len bytes; NULL: deleted) at @mod_rev. */
void dp_cluster_rec_put(const char *key, const char *val, size_t len, int64_t mod_rev);
void dp_cluster_rec_del(const char *key);
/* A full read is starting: every record not seen again before dp_cluster_rec_sweep() is deleted. */
void dp_cluster_rec_mark(void);
void dp_cluster_rec_sweep(void);
/* The running configuration holds none of the records any more (a file reload replaced them). */
void dp_cluster_rec_forget(void);
/* Apply what changed as deltas; may ask for pqpns through dp_cluster_txn_queue(). */
void dp_cluster_rec_reconcile(void);

#endif /* DP_CLUSTER_REC_H */
