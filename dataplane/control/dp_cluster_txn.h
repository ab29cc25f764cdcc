/* SPDX-License-Identifier: BSD-3-Clause */
/* The etcd follower's transaction thread (dp_cluster_txn.c). */
#ifndef DP_CLUSTER_TXN_H
#define DP_CLUSTER_TXN_H

#include <stdint.h>

/* Put @val at @key if its mod revision is still @mod_rev, later, from the thread; -1 when out of memory. */
int dp_cluster_txn_queue(const char *key, const char *val, int64_t mod_rev);
/*
 * The learner's records (dp_learn.c), later, from the thread: @val put at
 * @key on the switch's lease where etcd has no such key; @key deleted while
 * it is on that lease.  -1 when the thread does not run or out of memory.
 */
int dp_cluster_learn_put(const char *key, const char *val);
int dp_cluster_learn_delete(const char *key);
/* @val put at @key, keeping the lease, while @key is on the switch's lease (a record paired). */
int dp_cluster_learn_replace(const char *key, const char *val);
/* The learner's lease (seconds): a switch that dies leaves its records this long. */
#define DP_LEARN_LEASE_S 10
/*
 * The keys the learner's lease is claimed under: @prefix/learn-leases/<ip>
 * for each of this host's @n uplink IPs (before dp_cluster_txn_start()).
 */
int dp_cluster_txn_claims(const char *prefix, char **host_ips, unsigned n);
/* Wait, @max_s at most, until the thread has looked at (and revoked) an earlier incarnation's claims. */
void dp_cluster_txn_wait_start(double max_s);
int dp_cluster_txn_start(void);
void dp_cluster_txn_stop(void);

#endif /* DP_CLUSTER_TXN_H */
