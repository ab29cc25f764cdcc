/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental deltas: a batch that changes only endpoints, QPs and memory
 * regions is checked against indexes kept beside the running configuration
 * and applied to it in place, at a cost in the size of the batch, not of the
 * configuration (cfg_delta.c copies and checks the whole configuration).
 *
 * Two steps, so that the caller (the data plane) can prepare its own share
 * between them and give up before anything has changed:
 *
 *   cfg_inc_prepare()  parses and checks the batch; the configuration is only read.
 *   cfg_inc_commit()   applies it to the configuration in place; cannot fail.
 *
 * The answer is the same as cfg_delta_apply_root()'s, by construction:
 * cfg_inc_prepare() accepts only what it has checked completely, and says
 * "not here" for anything else (a tenant change, an endpoint modified, any
 * error): the caller then runs the batch through cfg_delta_apply_root(),
 * which rejects it with every error by its JSON path, or applies it.
 *
 * The file reload uses the same change list: cfg_inc_diff() compares a
 * freshly loaded file with the running configuration.
 *
 * Nothing here depends on DPDK.
 */
#ifndef CFG_INC_H
#define CFG_INC_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "cfg_delta.h"

enum cfg_inc_op { CFG_INC_ADD, CFG_INC_REPLACE, CFG_INC_DELETE };

/*
 * One record changed.  @old is the running record (REPLACE, DELETE), @new
 * the record as it will run (ADD, REPLACE).  Tenant indexes are the running
 * configuration's (a batch here never changes tenants).  The index fields
 * (cfg_qp.peer and .endpoint, cfg_mr.endpoint) of @old and @new are not
 * meaningful: the overlay finds records by key.
 */
struct cfg_inc_change {
	uint8_t kind;           /* CFG_DK_ENDPOINTS, CFG_DK_QPS or CFG_DK_MRS */
	uint8_t op;             /* enum cfg_inc_op */
	union {
		struct cfg_endpoint ep;
		struct cfg_qp qp;
		struct cfg_mr mr;
	} old, new;
};

/*
 * A checked batch.  The changes are ordered: endpoints added, then QPs and
 * MRs deleted, replaced and added, then endpoints deleted.  A put whose
 * record equals the running one is not a change (it is counted in @sum).
 */
struct cfg_inc {
	struct cfg_inc_change *ch;
	uint32_t n, cap;
	struct cfg_delta_summary sum;   /* as cfg_delta_apply_root() counts the request */
	void *priv;                     /* cfg_inc.c's own */
};

/*
 * Check the request @root (parsed, cfg_json.h) against @run.  1: the batch
 * is valid and @inc holds it (release it with cfg_inc_release()); 0: not a
 * batch for this path, or not valid: use cfg_delta_apply_root(); -1: out of
 * memory.  @run is only read, but its indexes are built on first use (so
 * the first call costs as much as the configuration).
 */
struct cfg_jv;
int cfg_inc_prepare(struct cfg *run, const struct cfg_jv *root, struct cfg_inc *inc);

/*
 * The changes that turn @run into @file (a configuration just loaded and
 * checked), when they are only endpoints, QPs and MRs: 1 with @inc filled;
 * the caller then runs @file in place of @run (do not cfg_inc_commit() it).
 * @file's indexes are built here, so the next cfg_inc_prepare() on it is
 * quick.  0 when something else differs (ports, tenants, neighbors, ACLs,
 * top-level sections); -1: out of memory.  @run's records are only read;
 * its indexes are built on first use, as by cfg_inc_prepare().  @inc->sum
 * counts the records of @file added or replaced as put, and those of @run
 * that @file does not hold as deleted.
 */
int cfg_inc_diff(const struct cfg *run, struct cfg *file, struct cfg_inc *inc);

/*
 * Apply @inc, prepared against @run, to @run in place; its indexes follow.
 * Records stay compact: an add appends, a delete moves the last record of
 * its array into the hole, and an array that must grow is reallocated, so
 * pointers and indexes into @run's records are not kept across a commit
 * (the "peer" and "endpoint" fields are kept right).
 */
void cfg_inc_commit(struct cfg *run, struct cfg_inc *inc);

void cfg_inc_release(struct cfg_inc *inc);

/* The indexes kept beside @c (cfg_free() calls it). */
void cfg_inc_index_free(struct cfg *c);

#endif /* CFG_INC_H */
