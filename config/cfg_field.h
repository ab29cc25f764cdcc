/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table-driven field parser: values of the schema's keys, with nothing
 * known of the records they belong to.
 *
 * Every JSON object of the schema is described by an array of struct
 * cfg_field, one row per key: the key, what kind of value it holds, whether
 * it is required, and where in the destination struct the value goes.
 * cfg_obj_parse() walks an object against such a table, reports unknown,
 * missing and malformed keys, fills the struct and says which keys were
 * present and valid. Adding a key to the schema is therefore one row in a
 * table of a record parser (cfg_rec_*.c), plus a few lines if it takes part
 * in a cross check (cfg_check.c).
 */
#ifndef CFG_FIELD_H
#define CFG_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "cfg_json.h"
#include "cfg_msg.h"

/* Kinds of value a field can hold, and what the destination is. */
enum cfg_fkind {
	CFG_F_STR,      /* char *, a non-empty string; one of names[] if given */
	CFG_F_ENUM,     /* int-sized enum (or bool): the index of the string in names[] */
	CFG_F_BOOL,     /* bool */
	CFG_F_UINT,     /* unsigned integer of size bytes, within [min, max] */
	CFG_F_QPN,      /* uint32_t: a 24-bit QPN other than 0 and 1 */
	CFG_F_GBPS,     /* uint64_t bits/s from a positive number of Gbit/s, <= max if not 0 */
	CFG_F_IP,       /* struct cfg_ip */
	CFG_F_MAC,      /* uint8_t[6] */
	CFG_F_FLAGS,    /* uint32_t: non-empty array of names[], bit i = names[i] */
	CFG_F_REF,      /* int: the name of another record, resolved to its index by ref */
	CFG_F_OBJECT,   /* a nested object described by sub[]; off may be 0 */
	CFG_F_CIDR,     /* struct cfg_cidr: "ADDR/LEN", or "ADDR" for one host */
	CFG_F_ARRAY,    /* an array, walked by the section itself; nothing stored */
	/* A CFG_F_OBJECT without sub[] is, like an array, walked by the section itself. */
};

/* What lookup() returns for a name that names no record. */
#define CFG_REF_UNKNOWN (-1)
/* ... and when that is so because the records' section was reported already. */
#define CFG_REF_QUIET (-2)

/*
 * How a CFG_F_REF field resolves a name: lookup() gets the ref_ctx of the
 * struct cfg_diag the field is parsed with and returns the index of the
 * record named @name, CFG_REF_UNKNOWN (reported as "unknown WHAT \"NAME\"")
 * or CFG_REF_QUIET (a failure without a message of its own).
 */
struct cfg_ref {
	const char *what;
	int (*lookup)(const void *ctx, const char *name);
};

struct cfg_field {
	const char *key;
	enum cfg_fkind kind;
	bool required;
	uint8_t size;           /* bytes of the destination, for CFG_F_UINT and CFG_F_ENUM */
	size_t off;             /* destination, from the start of the struct */
	size_t has;             /* offset + 1 of a bool set when present; 0 if none */
	uint64_t min;           /* CFG_F_UINT bounds; max 0 means the type's */
	uint64_t max;
	const char *const *names;       /* NULL-terminated, for STR, ENUM, FLAGS */
	const struct cfg_field *sub;    /* for CFG_F_OBJECT */
	unsigned n_sub;
	const struct cfg_ref *ref;      /* for CFG_F_REF */
};

#define CFG_MEMBER_SIZE(st, m) sizeof(((st *)0)->m)

/* A row for key @k of kind @kd stored in member @m of struct @st. */
#define CFG_FIELD(st, k, kd, req, m, ...) \
	{ .key = (k), .kind = (kd), .required = (req), .off = offsetof(st, m), \
	  .size = CFG_MEMBER_SIZE(st, m), __VA_ARGS__ }

/* The optional part of a row: a presence flag in member @m of struct @st. */
#define CFG_HAS(st, m) .has = offsetof(st, m) + 1

/* The optional part of a row: a nested table. */
#define CFG_SUB(tab) .sub = (tab), .n_sub = sizeof(tab) / sizeof((tab)[0])

#define CFG_REQUIRED true
#define CFG_OPTIONAL false

#define CFG_BIT(i) (1ull << (i))

#define CFG_DIM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Walk the object @obj (at @path) against @n rows of @tab, filling @dst.
 * Reports unknown keys, missing required keys and bad values. Returns the
 * bit mask (CFG_BIT(row)) of rows present and valid; *present, if not NULL,
 * receives the mask of rows present at all.
 */
uint64_t cfg_obj_parse(struct cfg_diag *dg, const struct cfg_jv *obj, const struct cfg_path *path,
		       const struct cfg_field *tab, unsigned n, void *dst, uint64_t *present);

/* Parse one value @v at @path as described by @f into @dst + f->off. */
bool cfg_value_parse(struct cfg_diag *dg, const struct cfg_field *f, const struct cfg_jv *v,
		     const struct cfg_path *path, void *dst);

/*
 * Parse an unsigned number: a non-negative JSON integer or a "0x" string.
 * Reports and returns false otherwise.
 */
bool cfg_num_parse(struct cfg_diag *dg, const struct cfg_jv *v, const struct cfg_path *path,
		   uint64_t *out);

#endif /* CFG_FIELD_H */
