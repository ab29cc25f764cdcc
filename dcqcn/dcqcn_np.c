/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Notification point: at most one CNP per min_time_between_cnps for each
 * connection.
 *
 * suppress: a CE mark that arrives less than a window after the last CNP is
 *           dropped; the next mark after the window sends at once.  This is
 *           what NVIDIA NICs do.
 * defer:    such a mark is remembered, and one CNP leaves when the window
 *           ends (the caller learns it from dcqcn_np_poll()).  This is the
 *           NP of the DCQCN paper: "at most one CNP every N microseconds, if
 *           any packet that arrives within that time window was marked".
 *
 * In both modes the first mark after a quiet window sends a CNP at once.
 */
#include <string.h>

#include "dcqcn.h"

void
dcqcn_np_init(struct dcqcn_np *np)
{
	memset(np, 0, sizeof(*np));
}

/* True when a CNP may leave at @now: none sent yet, or the window is over. */
static inline bool
np_window_open(const struct dcqcn_np *np, const struct dcqcn_profile *prof, uint64_t now)
{
	return !np->sent_any ||
	       (now >= np->last_cnp_ns && now - np->last_cnp_ns >= prof->cnp_window_ns);
}

static inline void
np_send(struct dcqcn_np *np, uint64_t now, struct dcqcn_counters *ctr)
{
	np->last_cnp_ns = now;
	np->sent_any = 1;
	np->pending = 0;
	if (ctr != NULL)
		ctr->np_cnp_sent++;
}

bool
dcqcn_np_on_ce(struct dcqcn_np *np, const struct dcqcn_profile *prof, uint64_t now,
	       struct dcqcn_counters *ctr)
{
	if (ctr != NULL)
		ctr->np_ecn_marked_roce_packets++;
	if (!prof->np_enable)
		return false;
	if (np_window_open(np, prof, now)) {
		np_send(np, now, ctr);
		return true;
	}
	if (prof->cnp_mode == DCQCN_CNP_DEFER)
		np->pending = 1;
	return false;
}

bool
dcqcn_np_poll(struct dcqcn_np *np, const struct dcqcn_profile *prof, uint64_t now,
	      struct dcqcn_counters *ctr)
{
	if (!np->pending || !np_window_open(np, prof, now))
		return false;
	np_send(np, now, ctr);
	return true;
}

uint64_t
dcqcn_np_next_deadline(const struct dcqcn_np *np, const struct dcqcn_profile *prof)
{
	if (!np->pending)
		return DCQCN_NEVER;
	return np->last_cnp_ns + prof->cnp_window_ns;
}
