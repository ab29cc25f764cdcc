/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Changes in place (dp_inc.c), under ctl_lock: a delta batch or a file
 * reload whose difference is only endpoints, QPs and MRs, applied to the
 * running overlay without a whole build (docs/control.md).
 */
#ifndef DP_INC_H
#define DP_INC_H

#include "dp.h"

struct cfg_jv;

/*
 * 1 when the batch @root (checked and found valid) or the reload to @file
 * (taken) was applied in place; 0 when it must take the whole path (nothing
 * changed).
 */
int dp_inc_delta_locked(const struct cfg_jv *root, struct dp_delta_report *rep);
int dp_inc_reload_locked(struct cfg *file, struct dp_reload_report *rep);

/* At exit, once the lcores have stopped: what dp_inc.c still holds. */
void dp_inc_fini(void);

#endif /* DP_INC_H */
