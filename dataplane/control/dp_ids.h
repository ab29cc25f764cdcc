/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection state ids (dp_ids.c), under ctl_lock: a connection keeps its id
 * across changes, and with it its dynamic state (open message, shaper queue
 * and tokens, DCQCN, counters, offload rule).
 */
#ifndef DP_IDS_H
#define DP_IDS_H

#include <stdint.h>

/* A zeroed id, or OVL_NONE when all are in use. */
uint32_t dp_state_alloc(void);
/* Give @id back now. */
void dp_state_release(uint32_t id);
/* Give @id back once the shapers have dropped its queued frames. */
void dp_state_release_when_drained(uint32_t id);
/* Give back the ids whose queues drained since. */
void dp_state_drained_release(void);

#endif /* DP_IDS_H */
