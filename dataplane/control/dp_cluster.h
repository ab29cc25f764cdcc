/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cluster on etcd (--etcd URL[,URL...], --etcd-prefix PREFIX): the
 * switch follows tenants, endpoints, QPs and memory regions held in etcd v3
 * under PREFIX/tenants/<tenant>, PREFIX/endpoints/<tenant>/<vip>,
 * PREFIX/qps/<tenant>/<vip>/<vqpn> and PREFIX/mrs/<tenant>/<vip>/<rkey>,
 * each value a JSON record of the configuration schema.
 *
 * One thread of its own talks to etcd's JSON gateway (libcurl, HTTP/1.1):
 * a range of the prefix at one revision, then a watch from the next one.
 * Every change it sees is reconciled into the running configuration as a
 * delta (dp_delta.h): what etcd holds and the switch does not, or holds
 * otherwise, is put; what the switch holds from etcd and etcd no longer
 * does is deleted.  A record the delta rejects is left out, reported by its
 * key and reason and counted, and tried again with the change that touches
 * what it waits on (a QP whose peer is not in etcd yet is applied once the
 * peer arrives; dp_cluster_apply.c).  A tenant or endpoint etcd deletes takes
 * what hangs off it out with it; that waits for it.  A QP
 * record without "pqpn" whose endpoint is on this host gets one from this
 * switch: a free pqpn on the host, written back in a transaction that
 * compares the key's mod revision.
 *
 * Forwarding never waits for etcd: the thread only publishes deltas, as the
 * control socket does.  When etcd cannot be reached the switch keeps its last
 * state, reports "disconnected" with the time since, retries with backoff
 * over the URLs, resumes the watch from the last revision seen, and reads
 * the prefix again when etcd answers that the revision was compacted.
 *
 * Ownership: the thread's record map is its own; /roce/cluster reads its
 * counters under the module's mutex.
 */
#ifndef DP_CLUSTER_H
#define DP_CLUSTER_H

#include <stdbool.h>

/* TLS to etcd (--etcd-cacert, --etcd-cert, --etcd-key): NULL members are not used. */
struct dp_cluster_tls {
	const char *cacert, *cert, *key;
};

/*
 * Follow etcd at @urls (comma-separated) under @prefix (NULL: "/roce") once
 * dp_control_start() runs.  Copies its arguments.  Returns 0, or -1 when the
 * arguments are malformed.
 */
int dp_cluster_configure(const char *urls, const char *prefix, const struct dp_cluster_tls *tls);

/*
 * --etcd-idle-s: a watch that etcd leaves silent for @s seconds (default 30)
 * is renewed on the same member at once, not counted as a loss; a member that
 * does not answer the renewal is given up as disconnected.
 */
void dp_cluster_idle(unsigned s);

/* The prefix of the records followed (keys PREFIX/qps/...), or NULL without --etcd. */
const char *dp_cluster_prefix(void);

/* Start and stop the thread (called by dp_control_start() and dp_control_stop()). */
int dp_cluster_start(void);
void dp_cluster_stop(void);

/*
 * Ask the follower to apply again everything etcd holds: a file reload has
 * replaced the running records by the file's.  Returns at once; the thread
 * reads the prefix again.  Safe from any thread.
 */
void dp_cluster_resync(void);

/* Register /roce/cluster. */
int dp_cluster_telemetry_init(void);

#endif /* DP_CLUSTER_H */
