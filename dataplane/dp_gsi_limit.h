/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-tenant limit on a learning tenant's RDMA-CM MADs to QP1 (the
 * tenant field "gsi_pps"; docs/learning.md).  One bucket per tenant, shared
 * by every lcore that sees the tenant's frames (several rx queues of one
 * port included), so it is one atomic word updated by compare-and-swap: the
 * generic cell rate algorithm (GCRA, ITU-T I.371), a token bucket written as
 * the theoretical arrival time of the next frame.  A frame conforms when,
 * after it, the bucket runs at most one second ahead of @now: up to @pps
 * frames at once, then @pps a second.  GSI frames are rare, so the CAS is
 * not on any hot path.  Pure: the time (any clock, in ticks of @hz a second)
 * is an argument, so it tests without EAL.
 */
#ifndef DP_GSI_LIMIT_H
#define DP_GSI_LIMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct dp_gsi_bucket {
	_Atomic uint64_t tat;     /* when the bucket is full again (ticks); 0: full */
};

/*
 * Take one frame's token from @b at @now (ticks of @hz a second) for a rate
 * of @pps frames a second (and a burst of as many): true when the frame
 * conforms; false (the bucket unchanged) when it is over the rate, or @pps
 * is 0.  Any number of threads may call it at once on one bucket; a caller
 * whose @now is a little older than another's only sees less room.
 */
static inline bool
dp_gsi_take(struct dp_gsi_bucket *b, uint64_t now, uint64_t hz, uint32_t pps)
{
	uint64_t t = pps ? hz / pps : 0, tat, next;

	if (t == 0)
		return pps != 0;          /* more frames a second than ticks: no limit to keep */
	tat = atomic_load_explicit(&b->tat, memory_order_relaxed);
	do {
		next = (tat > now ? tat : now) + t;
		if (next - now > hz)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&b->tat, &tat, next, memory_order_relaxed,
							memory_order_relaxed));
	return true;
}

#endif /* DP_GSI_LIMIT_H */
