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

#endif /* DP_DELTA_H */
