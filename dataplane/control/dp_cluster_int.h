/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the two halves of the etcd follower share: dp_cluster.c talks to
 * etcd, dp_cluster_rec.c keeps the records seen and reconciles them into the
 * running configuration.  The record map is used by the watch thread (full
 * reads) and the apply thread (watch messages), one at a time under a lock of
 * dp_cluster.c; the counters (struct dp_cluster_stats) are read by telemetry
 * and the transaction thread under their mutex.
 */
#ifndef DP_CLUSTER_INT_H
#define DP_CLUSTER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "dp_cluster.h"

struct dp_cluster_stats {
	pthread_mutex_t lock;
	bool connected;
	double since;                 /* CLOCK_MONOTONIC seconds of the last change of connected */
	int64_t revision;             /* the last revision applied */
	uint64_t applied, rejected;   /* records applied; rejections (a record counts once per value) */
	uint64_t events, resyncs;     /* watch events seen; full reads after a compaction or at start */
	uint64_t pqpn_allocated;
	/* Watch messages with events, and the time from reading one to its changes in force
	 * (the reconcile, pqpn transactions included), in microseconds. */
	uint64_t apply_n, apply_us_total, apply_us_max, apply_us_last;
	char last_error[512];
	char url[256];                /* the member in use */
};
extern struct dp_cluster_stats dp_cluster_st;

/* Set @fmt as the last error (and print it on stderr). */
void dp_cluster_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

/* Put @val at @key if its mod revision is still @mod_rev; 0 when it was written. */
int dp_cluster_txn_put(const char *key, const char *val, int64_t mod_rev);
/* The same, sent later by the transaction thread (dp_cluster_txn.c); -1 when out of memory. */
int dp_cluster_txn_queue(const char *key, const char *val, int64_t mod_rev);
int dp_cluster_txn_start(void);
void dp_cluster_txn_stop(void);

/* Base64 (etcd's JSON gateway carries keys and values so). The result is malloc'ed. */
char *dp_b64_enc(const char *s, size_t n);
char *dp_b64_dec(const char *s, size_t *n);

#endif /* DP_CLUSTER_INT_H */
