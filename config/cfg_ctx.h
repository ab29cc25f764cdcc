/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader context: the configuration being filled, the hash indexes over
 * its records, and what the record parsers share (section and record
 * walking, and the name lookups behind CFG_F_REF fields). It sits above the
 * field parser and below the record parsers (cfg_rec_*.c), the cross checks
 * (cfg_check.c) and the loader that drives them (cfg_load.c); it reports
 * nothing about the schema itself.
 */
#ifndef CFG_CTX_H
#define CFG_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "cfg_field.h"
#include "cfg_htab.h"
#include "cfg_json.h"
#include "cfg_msg.h"

/* Everything a load needs besides the struct cfg being filled. */
struct cfg_ld {
	struct cfg_diag dg;     /* messages; its ref_ctx is this struct */
	struct cfg *c;
	/*
	 * The tenants or ports section is missing or not an array: references
	 * to them fail without a message of their own, as one was given already.
	 */
	bool quiet_tenants;
	bool quiet_ports;
	/* The top-level "dcqcn" is invalid: the tenants that inherit it are not checked again. */
	bool quiet_dcqcn;

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

	/*
	 * Per record: bit mask of the fields that were present and valid. The
	 * cross checks add CFG_QP_KEY_OK to qp_ok.
	 */
	uint32_t *port_ok;
	uint32_t *ep_ok;
	uint32_t *qp_ok;
	/* Per tenant: the index of its ACL, or -1 (cfg_check_acls_begin()). */
	int32_t *acl_of;
};

/* Bit of ld->qp_ok beyond the field rows: the QP is in qp_by_vqpn's key space. */
#define CFG_QP_KEY_OK CFG_BIT(31)

/* One element of a section while it is loaded. */
struct cfg_rec {
	uint32_t i;             /* its index in the section */
	struct cfg_path path;   /* "section[i]" */
	const struct cfg_jv *obj;
	uint64_t ok;            /* rows of the record's table present and valid */
	uint64_t present;       /* rows present */
};

/* Report @fmt at the field @k of the record at the path @rp. */
#define CFG_REC_ERR(ld, rp, k, ...) \
	do { \
		struct cfg_path fp_ = { .up = (rp), .key = (k) }; \
		cfg_err(&(ld)->dg, &fp_, __VA_ARGS__); \
	} while (0)

/* Resolvers of CFG_F_REF fields: a tenant or a port by its name. */
extern const struct cfg_ref cfg_ref_tenant;
extern const struct cfg_ref cfg_ref_port;

/* Prepare @ld for a load whose messages name @name; c is set by the caller. */
void cfg_ld_init(struct cfg_ld *ld, const char *name);

/* Release the indexes, masks and undelivered messages of @ld (not ld->c). */
void cfg_ld_release(struct cfg_ld *ld);

/* One zeroed mask per record of @n (at least one), or NULL with ld->dg.oom set. */
uint32_t *cfg_ld_masks_alloc(struct cfg_ld *ld, uint32_t n);

/* Initialise @h for @n entries; a failure sets ld->dg.oom. */
void cfg_ld_htab_init(struct cfg_ld *ld, struct cfg_htab *h, uint32_t n);

/*
 * Look @key up in @h (@match gets @ld as its context). If it is absent, add
 * the record @idx under it and return -1; otherwise return the index of the
 * record that holds it.
 */
long cfg_ld_index_claim(struct cfg_ld *ld, struct cfg_htab *h, uint32_t hash,
			cfg_htab_match_t match, const void *key, uint32_t idx);

/* The index of the tenant or port named @name so far, or -1. */
int cfg_ld_tenant_lookup(const struct cfg_ld *ld, const char *name);
int cfg_ld_port_lookup(const struct cfg_ld *ld, const char *name);

/*
 * Index tenants[@i] or ports[@i] under its name, which is valid. Returns -1,
 * or the index of the record that has the name already (nothing is added).
 */
long cfg_ld_tenant_claim(struct cfg_ld *ld, uint32_t i);
long cfg_ld_port_claim(struct cfg_ld *ld, uint32_t i);

/* The 32-bit index hash of the string @s. */
uint32_t cfg_hash_str(const char *s);

/*
 * Start an array section: check that @v (at @p) is an array and allocate
 * one zeroed record of @size bytes per element into *@arr, *@n. Returns
 * false, with nothing allocated, if @v is not an array (reported) or on
 * failure.
 */
bool cfg_records_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		       size_t size, void **arr, uint32_t *n);

/*
 * Element @i of the section @v (at @p): sets the record sort key and fills
 * @r with its index, path and object, its masks cleared. Returns false
 * (reported) if the element is not an object.
 */
bool cfg_rec_begin(struct cfg_ld *ld, const struct cfg_jv *v, uint32_t i,
		   const struct cfg_path *p, struct cfg_rec *r);

#endif /* CFG_CTX_H */
