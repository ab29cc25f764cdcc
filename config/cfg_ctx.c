/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader context (see cfg_ctx.h): its life cycle, the name indexes of
 * tenants and ports, and the walking of sections and records.
 */
#include <stdlib.h>
#include <string.h>

#include "cfg_ctx.h"

uint32_t
cfg_hash_str(const char *s)
{
	return cfg_hash_final(cfg_hash_bytes(CFG_HASH_SEED, s, strlen(s)));
}

/* The match functions of the name indexes; their context is the struct cfg_ld. */
static bool
tenant_name_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return strcmp(ld->c->tenants[idx].name, key) == 0;
}

static bool
port_name_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return strcmp(ld->c->ports[idx].name, key) == 0;
}

int
cfg_ld_tenant_lookup(const struct cfg_ld *ld, const char *name)
{
	return (int)cfg_htab_lookup(&ld->tenant_by_name, cfg_hash_str(name), tenant_name_match,
				    ld, name);
}

int
cfg_ld_port_lookup(const struct cfg_ld *ld, const char *name)
{
	return (int)cfg_htab_lookup(&ld->port_by_name, cfg_hash_str(name), port_name_match, ld,
				    name);
}

long
cfg_ld_index_claim(struct cfg_ld *ld, struct cfg_htab *h, uint32_t hash,
		   cfg_htab_match_t match, const void *key, uint32_t idx)
{
	long j = cfg_htab_lookup(h, hash, match, ld, key);

	if (j < 0 && cfg_htab_add(h, hash, idx) < 0)
		ld->dg.oom = true;
	return j;
}

long
cfg_ld_tenant_claim(struct cfg_ld *ld, uint32_t i)
{
	const char *name = ld->c->tenants[i].name;

	return cfg_ld_index_claim(ld, &ld->tenant_by_name, cfg_hash_str(name), tenant_name_match,
				  name, i);
}

long
cfg_ld_port_claim(struct cfg_ld *ld, uint32_t i)
{
	const char *name = ld->c->ports[i].name;

	return cfg_ld_index_claim(ld, &ld->port_by_name, cfg_hash_str(name), port_name_match,
				  name, i);
}

/* CFG_F_REF lookups: a section that was reported already makes every miss quiet. */
static int
ref_tenant_lookup(const void *ctx, const char *name)
{
	const struct cfg_ld *ld = ctx;
	int k = cfg_ld_tenant_lookup(ld, name);

	if (k >= 0)
		return k;
	return ld->quiet_tenants ? CFG_REF_QUIET : CFG_REF_UNKNOWN;
}

static int
ref_port_lookup(const void *ctx, const char *name)
{
	const struct cfg_ld *ld = ctx;
	int k = cfg_ld_port_lookup(ld, name);

	if (k >= 0)
		return k;
	return ld->quiet_ports ? CFG_REF_QUIET : CFG_REF_UNKNOWN;
}

const struct cfg_ref cfg_ref_tenant = { .what = "tenant", .lookup = ref_tenant_lookup };
const struct cfg_ref cfg_ref_port = { .what = "port", .lookup = ref_port_lookup };

void
cfg_ld_init(struct cfg_ld *ld, const char *name)
{
	memset(ld, 0, sizeof(*ld));
	ld->dg.name = name;
	ld->dg.rec = -1;
	ld->dg.ref_ctx = ld;
}

void
cfg_ld_release(struct cfg_ld *ld)
{
	struct cfg_htab *tabs[] = {
		&ld->tenant_by_name, &ld->tenant_by_vni, &ld->port_by_name, &ld->port_by_device,
		&ld->port_by_ip, &ld->ep_by_vip, &ld->qp_by_vqpn, &ld->qp_by_pqpn,
		&ld->mr_by_rkey, &ld->nb_by_ip,
	};

	for (size_t i = 0; i < CFG_DIM(tabs); i++)
		cfg_htab_free(tabs[i]);
	free(ld->port_ok);
	free(ld->ep_ok);
	free(ld->qp_ok);
	free(ld->acl_of);
	cfg_diag_release(&ld->dg);
}

uint32_t *
cfg_ld_masks_alloc(struct cfg_ld *ld, uint32_t n)
{
	uint32_t *m = calloc(n ? n : 1, sizeof(*m));

	if (m == NULL)
		ld->dg.oom = true;
	return m;
}

void
cfg_ld_htab_init(struct cfg_ld *ld, struct cfg_htab *h, uint32_t n)
{
	if (cfg_htab_init(h, n) < 0)
		ld->dg.oom = true;
}

bool
cfg_records_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		  size_t size, void **arr, uint32_t *n)
{
	size_t k;

	*arr = NULL;
	*n = 0;
	if (!cfg_j_is_arr(v)) {
		cfg_err(&ld->dg, p, "expected an array");
		return false;
	}
	k = v->n;
	if (k == 0)
		return true;
	if (k > INT32_MAX) {
		cfg_err(&ld->dg, p, "too many records (%zu)", k);
		return false;
	}
	*arr = calloc(k, size);
	if (*arr == NULL) {
		ld->dg.oom = true;
		return false;
	}
	*n = (uint32_t)k;
	return true;
}

bool
cfg_rec_begin(struct cfg_ld *ld, const struct cfg_jv *v, uint32_t i, const struct cfg_path *p,
	      struct cfg_rec *r)
{
	r->i = i;
	r->path.up = p;
	r->path.key = NULL;
	r->path.idx = i;
	r->obj = cfg_j_at(v, i);
	r->ok = 0;
	r->present = 0;
	ld->dg.rec = i;
	if (!cfg_j_is_obj(r->obj)) {
		cfg_err(&ld->dg, &r->path, "expected an object");
		r->obj = NULL;
		return false;
	}
	return true;
}
