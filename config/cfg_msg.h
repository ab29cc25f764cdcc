/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bottom of the loader: JSON paths and the messages of one load.
 *
 * Every message is collected under two sort keys, the position of its
 * top-level key in the file (rank) and its record index in that section
 * (rec), and the order in which it was found. cfg_diag_deliver() sorts them
 * back into file order, so that a section may be checked in several passes
 * and still report each record's problems together. Nothing here knows the
 * schema.
 */
#ifndef CFG_MSG_H
#define CFG_MSG_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"

/*
 * A JSON path, built on the stack as the loader descends and rendered only
 * when a message needs it: a key (".key", or "key" at the top) or, when
 * key is NULL, an array element ("[idx]").
 */
struct cfg_path {
	const struct cfg_path *up;
	const char *key;
	uint32_t idx;
};

/* One collected message and the place in the file it sorts by. */
struct cfg_msg {
	int rank;               /* position of the top-level key in the file */
	int64_t rec;            /* record index in that array, -1 for the key itself */
	uint64_t seq;           /* order of detection, to keep the sort stable */
	char *text;
};

/*
 * The messages of one load. Zero it, set name, and release it with
 * cfg_diag_release(). ref_ctx is what field rows that name other records
 * resolve names against (struct cfg_ref); NULL when there are none.
 */
struct cfg_diag {
	const char *name;       /* FILE in messages */
	bool oom;               /* an allocation failed: the load fails */
	int rank;               /* sort keys given to the next message */
	int64_t rec;
	struct cfg_msg *msg;
	uint64_t n_msg;
	uint64_t cap_msg;
	const void *ref_ctx;
};

/* Collect "NAME: PATH: message" under the current rank and record. */
void cfg_err(struct cfg_diag *dg, const struct cfg_path *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Collect a message that is already complete, without the NAME prefix. */
void cfg_err_raw(struct cfg_diag *dg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Add "NAME: out of memory" if an allocation failed, sort the messages into
 * file order and move them to @errs (which may be NULL), keeping at most
 * CFG_ERRORS_MAX and one line that counts the rest.
 */
void cfg_diag_deliver(struct cfg_diag *dg, struct cfg_errors *errs);

/* Free the messages that cfg_diag_deliver() did not move. */
void cfg_diag_release(struct cfg_diag *dg);

#endif /* CFG_MSG_H */
