/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the two halves of a delta share: cfg_delta.c parses the request and
 * merges its records into copies of the running ones; cfg_delta_check.c
 * drops what was deleted, checks the result between records and builds the
 * new configuration. cfg_delta_rec.c, below both, holds what they and the
 * incremental path share about a record: its key, its hash, its errors.
 * Private to config/.
 */
#ifndef CFG_DELTA_INT_H
#define CFG_DELTA_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg_ctx.h"
#include "cfg_delta.h"

/*
 * The records of one kind while a batch is merged: the running ones first
 * (copies; index i is the running record i), then those the request adds.
 * A put that replaces a running record takes its index.
 */
struct cfg_dl_set {
	char *rec;              /* n records of sz bytes; room for n_run + the puts */
	size_t sz;
	uint32_t n, n_run;
	int32_t *origin;        /* index under "put", or -1: as it runs */
	int32_t *del;           /* index under "delete" that removed it, or -1 */
	struct cfg_htab idx;    /* by key: see cfg_dl_key_hash() */
};

/* A batch being merged. */
struct cfg_dl {
	struct cfg_ld ld;       /* messages; ld.c is &s, whose tenants are set[0]'s */
	const struct cfg *run;
	struct cfg s;           /* the merged tenants and the running ports, for name lookups */
	struct cfg_dl_set set[CFG_DK_N];
	struct cfg_delta_summary sum;
	uint32_t *tback;        /* new tenant index -> merged index, while finishing */
};

/* The key of a delete entry. */
struct dl_key {
	int tenant;
	struct cfg_ip vip;
	uint32_t id;
	char *name;             /* tenants */
};

/* The key of record @i of the set of kind @k (not tenants). */
void cfg_dl_rec_key(const struct cfg_dl_set *s, int k, uint32_t i, struct dl_key *key);

/* The kinds' names, as in the schema: "tenants", "endpoints", "qps", "mrs". */
extern const char *const cfg_dl_kind_names[CFG_DK_N];

/* The key of a record of kind @k at @r: tenant, vip and id (vqpn, rkey, or 0). */
uint32_t cfg_dl_key_hash(int tenant, const struct cfg_ip *vip, uint32_t id);

/*
 * The key of the delete entry @e (at @p) of kind @k (not tenants): true
 * when it is an object with every key field valid, else reported in @dg
 * (whose ref_ctx resolves the tenant).
 */
bool cfg_dl_key_parse(struct cfg_diag *dg, const struct cfg_jv *e, const struct cfg_path *p, int k, int *tenant,
		      struct cfg_ip *vip, uint32_t *id);

/*
 * Report @msg about the field @field (NULL: the whole record) of record @i
 * of kind @k: by its path in the request if it came from it, else by its
 * key as it runs.
 */
void cfg_dl_rec_err(struct cfg_dl *d, int k, uint32_t i, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * Drop the deleted records, renumber the references, check the result
 * between records and return it as a new configuration, or NULL (reported).
 */
struct cfg *cfg_dl_finish(struct cfg_dl *d);

#endif /* CFG_DELTA_INT_H */
