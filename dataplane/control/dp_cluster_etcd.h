/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's ground floor (dp_cluster_etcd.c), which its other parts
 * stand on: dp_cluster.c talks to etcd (the range, the watch and the apply
 * thread), dp_cluster_rec.c keeps the records seen and reconciles them into
 * the running configuration, dp_cluster_txn.c sends pqpn transactions.  The
 * counters (struct dp_cluster_stats) are read by telemetry and the threads
 * under their mutex.
 */
#ifndef DP_CLUSTER_ETCD_H
#define DP_CLUSTER_ETCD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dp_cluster_stats {
	pthread_mutex_t lock;
	bool connected;
	double since;                 /* CLOCK_MONOTONIC seconds of the last change of connected */
	int64_t revision;             /* the last revision applied */
	uint64_t applied, rejected;   /* records applied; rejections (a record counts once per value) */
	uint64_t waiting;             /* QPs left out, now, for a peer etcd does not hold (yet) */
	uint64_t records;             /* keys the record map holds: etcd's, and those still applied */
	uint64_t events, resyncs;     /* watch events seen; full reads after a compaction or at start */
	uint64_t reconnects;          /* connected again after etcd was lost */
	uint64_t watch_renewals;      /* watches renewed after --etcd-idle-s of silence */
	uint64_t pqpn_allocated;
	/* The learner's records: put, found there already, failed; deleted; its lease and leases lost. */
	uint64_t learn_puts, learn_exists, learn_failed, learn_deletes;
	int64_t lease;
	uint64_t lease_lost;
	uint64_t txn_batches;         /* transactions that carried several puts */
	/* Watch messages with events, and the time from reading one to its changes in force
	 * (the reconcile, pqpn transactions included), in microseconds. */
	uint64_t apply_n, apply_us_total, apply_us_max, apply_us_last;
	char last_error[512];
	char url[256];                /* the member in use */
	unsigned member;              /* its index in the --etcd list */
};
extern struct dp_cluster_stats dp_cluster_st;

/* Set @fmt as the last error (and print it on stderr). */
void dp_cluster_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double dp_cluster_mono_s(void);
/* The transactions' own connection to the members @urls; @stop ends a request in progress. */
int dp_cluster_txn_conn_init(const char *urls, const char *cacert, const char *cert, const char *key,
			     volatile bool *stop);
void dp_cluster_txn_conn_free(void);
/* Put @val at @key if its mod revision is still @mod_rev, on the member in use; 0 when it was written. */
int dp_cluster_txn_put(const char *key, const char *val, int64_t mod_rev);

/*
 * The learner's records (dp_learn.c), on the same connection, from the
 * transaction thread: a lease of @ttl_s seconds (its ID, or -1) and its
 * keepalive (0, 1 when etcd no longer has it, -1 no answer); a put of @val at @key
 * on @lease only where etcd has no such key (0 written, 1 the key exists, -1
 * no answer); a delete of @key while it is still on @lease (0, 1 it is not,
 * -1 no answer).
 */
int64_t dp_cluster_lease_grant(long ttl_s);
int dp_cluster_lease_keepalive(int64_t id);
int dp_cluster_txn_create(const char *key, const char *val, int64_t lease);
int dp_cluster_txn_delete(const char *key, int64_t lease);
/* @val put at @key, keeping its lease, while it is on @lease (a learner's record paired). */
int dp_cluster_txn_replace(const char *key, const char *val, int64_t lease);
/* Revoke lease @id, which deletes every key on it at once: 0, 1 etcd has no such lease, -1 no answer. */
int dp_cluster_lease_revoke(int64_t id);
/* Whether @key exists (1, with its lease in *@lease, 0 for none), 0 it does not, -1 no answer. */
int dp_cluster_key_lease(const char *key, int64_t *lease);

/*
 * Several puts in one transaction (one raft round and fsync for all), each
 * on the compare its one-by-one form makes: @lease set, where etcd has no
 * such key, on that lease (dp_cluster_txn_create()); else while the key's
 * mod revision is @mod_rev, keeping its lease (dp_cluster_txn_put()).  All
 * are written or none: 0 written, 1 a compare failed, -1 no answer.
 */
struct dp_txn_op {
	const char *key, *val;
	int64_t mod_rev, lease;
};
int dp_cluster_txn_batch(const struct dp_txn_op *ops, unsigned n);

/* Base64 (etcd's JSON gateway carries keys and values so). The result is malloc'ed. */
char *dp_b64_enc(const char *s, size_t n);
char *dp_b64_dec(const char *s, size_t *n);

#endif /* DP_CLUSTER_ETCD_H */
