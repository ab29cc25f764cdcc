/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Changes to the running configuration while the switch forwards: deltas
 * (config/cfg_delta.h) and the local control channel that takes them.
 *
 * Ownership.  Every change is made by the thread that holds dp.ctl_lock
 * (the control socket's thread, the SIGHUP thread or telemetry): it reads
 * dp.cfg, builds the new overlay off the lcores and publishes it with one
 * atomic store of dp.ovl (dp_config_publish_locked(), shared with the
 * whole-file reload).  The lcores take no lock: they read dp.ovl once per
 * loop iteration and report an RCU quiescent state after it; the old overlay
 * and configuration are freed after rte_rcu_qsbr_synchronize().  So a batch
 * is in force, whole, for every frame of the iterations that begin after
 * the publishing store, and for no frame before it.  A connection the batch
 * does not touch keeps its state id, and with it its dynamic state (open
 * message, shaper queue and tokens, DCQCN, counters, offload rule).
 */
#ifndef DP_DELTA_H
#define DP_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "cfg_delta.h"
#include "dp.h"

/*
 * Publish @c (taken: kept as dp.cfg, or freed on failure) as dp_config_apply()
 * does after loading a file.  The caller holds dp.ctl_lock.
 */
struct cfg_jv;
struct dp_delta_report;
int dp_config_publish_locked(struct cfg *c, struct dp_reload_report *rep);

/*
 * Connection state ids (dp_ids.c), under ctl_lock: a zeroed id or OVL_NONE
 * when all are in use; an id given back now; an id given back once the
 * shapers have dropped its queued frames; the ids whose queues drained since.
 */
uint32_t dp_state_alloc(void);
void dp_state_release(uint32_t id);
void dp_state_release_when_drained(uint32_t id);
void dp_state_drained_release(void);

/*
 * Incremental changes (dp_inc.c), under ctl_lock: 1 when the batch @root
 * (checked and found valid) or the reload to @file (taken) was applied in
 * place; 0 when it must take the whole path (nothing changed).
 */
int dp_inc_delta_locked(const struct cfg_jv *root, struct dp_delta_report *rep);
int dp_inc_reload_locked(struct cfg *file, struct dp_reload_report *rep);

/* At exit, once the lcores have stopped: what dp_inc.c still holds. */
void dp_inc_fini(void);

/* What one batch did. */
struct dp_delta_report {
	struct dp_reload_report rr;   /* connections and tenants added, removed, kept; errors */
	struct cfg_delta_summary sum;
	double check_us, build_us, publish_us;
};

/*
 * Apply the delta request in the @len bytes at @buf (modified) to the running
 * configuration, atomically: the whole batch is published, or nothing changes
 * and @rep holds every error.  Takes dp.ctl_lock.  Returns 0 or -1.
 */
int dp_delta_apply(char *buf, size_t len, struct dp_delta_report *rep);
/* As dp_delta_apply(), from a request already parsed (cfg_json.h). */
struct cfg_jv;
int dp_delta_apply_root(const struct cfg_jv *root, struct dp_delta_report *rep);
void dp_delta_report_free(struct dp_delta_report *rep);

/* Totals since start: batches applied and rejected (under ctl_lock). */
struct dp_delta_totals {
	uint64_t applied, rejected;
	uint64_t changes;             /* records put or deleted by applied batches */
};
extern struct dp_delta_totals dp_delta_totals;

/*
 * The control socket (--control PATH): a Unix stream socket, mode 0600,
 * taking newline-delimited JSON requests and answering each with one JSON
 * line (docs/control.md), served by a control thread of its own.  A stale
 * socket at @path is replaced; any other file there is an error.  Returns 0,
 * or -1 with a message in @err.
 */
int dp_ctl_sock_start(const char *path, char *err, size_t err_len);
/*
 * The path dp_control_start() opens the control socket at (--control), or
 * NULL for none; set before dp_control_start().  dp_control_stop() closes it.
 */
void dp_ctl_sock_configure(const char *path);
/* Close the socket and its connections, remove its path, join the thread. */
void dp_ctl_sock_stop(void);

#endif /* DP_DELTA_H */
