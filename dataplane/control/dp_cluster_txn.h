/* SPDX-License-Identifier: BSD-3-Clause */
/* The etcd follower's transaction thread (dp_cluster_txn.c). */
#ifndef DP_CLUSTER_TXN_H
#define DP_CLUSTER_TXN_H

#include <stdint.h>

/* Put @val at @key if its mod revision is still @mod_rev, later, from the thread; -1 when out of memory. */
int dp_cluster_txn_queue(const char *key, const char *val, int64_t mod_rev);
int dp_cluster_txn_start(void);
void dp_cluster_txn_stop(void);

#endif /* DP_CLUSTER_TXN_H */
