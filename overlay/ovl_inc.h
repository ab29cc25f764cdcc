/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental changes to a running overlay: the records a batch of
 * configuration changes (config/cfg_inc.h) touches are rebuilt, and only
 * they; the rest of the overlay, and every lookup the lcores make in it, is
 * left as it is.
 *
 *   ovl_inc_prepare()  builds the new records in free slots and plans the
 *                      table changes; nothing an lcore can reach changes, and
 *                      a failure (no room, or a record the whole build would
 *                      refuse) leaves the overlay as it was.
 *   ovl_inc_commit()   makes the change: every table key takes its new value
 *                      with one store (a connection that changes is never
 *                      missing from its tables), and returns the new header
 *                      over the same store, to be published.
 *   ovl_inc_reclaim()  once no lcore can hold a slot given up by a commit (an
 *                      RCU grace period after its publication), makes those
 *                      slots free for later changes.
 *
 * One writer at a time (the data plane's ctl_lock); lcores read through
 * the published header without locks, before, during and after.
 */
#ifndef OVL_INC_H
#define OVL_INC_H

#include "cfg_inc.h"
#include "ovl.h"

/* A connection a batch touched: its slot before and after (OVL_NONE: none). */
struct ovl_inc_conn {
	uint32_t from, to;
};

struct ovl_inc {
	/* Removed (to OVL_NONE), added (from OVL_NONE) and changed connections. */
	struct ovl_inc_conn *conns;
	uint32_t n_conns, cap_conns;
	struct ovl *hdr;        /* the new header, published by the caller after commit */
	void *priv;
};

/*
 * Prepare the changes @ci (checked against the running configuration) on
 * @o, whose records it describes, with @c the configuration as it will run
 * (the new header's tenants, ports and ACLs come from it).  0, or -1 with a
 * message in @err: the caller then builds the whole overlay instead.
 */
int ovl_inc_prepare(struct ovl *o, const struct cfg *c, const struct cfg_inc *ci, struct ovl_inc *oi, char *err,
		    size_t err_len);

/* Make the prepared change; returns oi->hdr, which now owns the store. */
struct ovl *ovl_inc_commit(struct ovl_inc *oi);

/* Give back what a prepared change took, without making it. */
void ovl_inc_abort(struct ovl_inc *oi);

/* After ovl_inc_commit() (or ovl_inc_abort()): free @oi's own memory. */
void ovl_inc_release(struct ovl_inc *oi);

/* @h, a copy of the newest header, becomes the one that frees the store. */
void ovl_inc_own(struct ovl *h);

/* The slots given up by commits published more than a grace period ago become free. */
void ovl_inc_reclaim(struct ovl *o);

#endif /* OVL_INC_H */
