/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the loader: the load context, error collection, JSON paths and the
 * table-driven field parser. Not part of the library's interface.
 *
 * Every JSON object of the schema is described by an array of struct
 * cfg_field, one row per key: the key, what kind of value it holds, whether
 * it is required, and where in the destination struct the value goes.
 * cfg_obj_parse() walks an object against such a table, reports unknown,
 * missing and malformed keys, fills the struct and says which keys were
 * present and valid. Adding a key to the schema is therefore one row in a
 * table in cfg_load.c, plus a few lines if it takes part in a cross check.
 */
#ifndef CFG_PRIV_H
#define CFG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "cfg_htab.h"
#include "cfg_json.h"

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

/* Everything a load needs besides the struct cfg being filled. */
struct cfg_ld {
	struct cfg *c;
	const char *name;       /* FILE in messages */
	bool oom;               /* an allocation failed: the load fails */
	/*
	 * The tenants or ports section is missing or not an array: references
	 * to them fail without a message of their own, as one was given already.
	 */
	bool quiet_tenants;
	bool quiet_ports;
	/* The top-level "dcqcn" is invalid: the tenants that inherit it are not checked again. */
	bool quiet_dcqcn;

	struct cfg_msg *msg;
	uint64_t n_msg;
	uint64_t cap_msg;
	int rank;               /* sort keys given to the next message */
	int64_t rec;

	struct cfg_htab tenant_by_name;
	struct cfg_htab tenant_by_vni;
	struct cfg_htab port_by_name;
	struct cfg_htab port_by_device;
	struct cfg_htab port_by_ip;
	struct cfg_htab ep_by_vip;      /* (tenant, vip) */
	struct cfg_htab qp_by_vqpn;     /* (tenant, vip, vqpn) */
	struct cfg_htab qp_by_pqpn;     /* (host, pqpn) */
	struct cfg_htab mr_by_rkey;     /* (tenant, vip, rkey) */
	struct cfg_htab nb_by_ip;

	/* Per record: bit mask of the fields that were present and valid. */
	uint32_t *port_ok;
	uint32_t *ep_ok;
	uint32_t *qp_ok;
};

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
	CFG_F_TENANT,   /* int: the name of a tenant, resolved to its index */
	CFG_F_PORT,     /* int: the name of a port, resolved to its index */
	CFG_F_OBJECT,   /* a nested object described by sub[]; off may be 0 */
	CFG_F_CIDR,     /* struct cfg_cidr: "ADDR/LEN", or "ADDR" for one host */
	CFG_F_ARRAY,    /* an array, walked by the section itself; nothing stored */
	/* A CFG_F_OBJECT without sub[] is, like an array, walked by the section itself. */
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

/*
 * Walk the object @obj (at @path) against @n rows of @tab, filling @dst.
 * Reports unknown keys, missing required keys and bad values. Returns the
 * bit mask (CFG_BIT(row)) of rows present and valid; *present, if not NULL,
 * receives the mask of rows present at all.
 */
uint64_t cfg_obj_parse(struct cfg_ld *ld, const struct cfg_jv *obj, const struct cfg_path *path,
		       const struct cfg_field *tab, unsigned n, void *dst, uint64_t *present);

/* Parse one value @v at @path as described by @f into @dst + f->off. */
bool cfg_value_parse(struct cfg_ld *ld, const struct cfg_field *f, const struct cfg_jv *v,
		     const struct cfg_path *path, void *dst);

/*
 * Parse an unsigned number: a non-negative JSON integer or a "0x" string.
 * Reports and returns false otherwise.
 */
bool cfg_num_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *path,
		   uint64_t *out);

/* Collect "NAME: PATH: message" under the current rank and record. */
void cfg_err(struct cfg_ld *ld, const struct cfg_path *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Collect a message that is already complete, without the NAME prefix. */
void cfg_err_raw(struct cfg_ld *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Resolvers used by CFG_F_TENANT and CFG_F_PORT (cfg_load.c). */
int cfg_ld_tenant_lookup(const struct cfg_ld *ld, const char *name);
int cfg_ld_port_lookup(const struct cfg_ld *ld, const char *name);

/* The address as text, for messages; always NUL-terminated. */
const char *cfg_ip_str(const struct cfg_ip *ip, char buf[CFG_IP_STRLEN]);

/* The value of a hexadecimal digit, or -1. */
int cfg_hex_digit(char ch);

#endif /* CFG_PRIV_H */
