/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the tests of config/cfg_inc share: canonical forms of a
 * configuration's records (to compare two configurations as sets), a check
 * of the indexes kept beside a configuration, and one batch run through
 * both paths.
 */
#ifndef TEST_CFG_INC_H
#define TEST_CFG_INC_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "cfg_delta.h"
#include "cfg_inc.h"

/* Sorted canonical lines of @c's records, one per endpoint, QP and MR. */
struct canon {
	char **line;
	uint32_t n;
};

/*
 * @c's records as canonical lines. With @refs, a QP's line also names its
 * peer and its endpoint by their keys, resolved through the index fields
 * ("peer", "endpoint"), and an MR's its endpoint.
 */
void canon_build(const struct cfg *c, bool refs, struct canon *out);
void canon_free(struct canon *cn);
/* The line of one record of kind @k (CFG_DK_*), without references, into @buf. */
void canon_rec(const struct cfg *c, int k, const void *rec, char *buf, size_t len);
/* True if @a and @b hold the same lines; prints the first difference. */
bool canon_equal(const struct canon *a, const struct canon *b);

/*
 * Apply @inc's changes to the lines of @c (canon_build(@c, false)) as the
 * overlay sees them, by key, and sort them again. False if a change does
 * not find the record it replaces or deletes.
 */
bool apply_lines(const struct cfg *c, const struct cfg_inc *inc, struct canon *cn);

/*
 * cfg_inc_diff(@run, @file) checked: 1 if it gave the change list and
 * @run's records with it applied are @file's; 0 if it declined and an
 * endpoint differs between the two, one of a learning tenant is gone, or a
 * tenant's "qp_learning" differs (in these tests nothing else declines); -1
 * otherwise.
 */
int diff_agrees(const struct cfg *run, struct cfg *file);

/* True if the indexes beside @c find every record of @c where it is. */
bool index_consistent(const struct cfg *c);

/* What a batch did on each path; BOTH_SYNTAX: the request is not JSON. */
enum both_path { BOTH_INC, BOTH_FULL, BOTH_REJECTED, BOTH_MISMATCH, BOTH_SYNTAX };

/*
 * Run the request @json against *@run through cfg_inc_prepare() and through
 * cfg_delta_apply_root() (which never changes *@run), and check that they
 * agree: when the incremental path takes the batch, the full path accepts
 * it, the summaries are equal, and after cfg_inc_commit() *@run equals the
 * full path's result as a set of records. When only the full path accepts,
 * *@run becomes its result. @ch, if not NULL, receives the change list (the
 * caller releases it).
 */
enum both_path run_both(struct cfg **run, const char *json, struct cfg_inc *ch);

/* The differential test (test_cfg_inc_rand.c). */
void test_inc_random(void);

#endif /* TEST_CFG_INC_H */
