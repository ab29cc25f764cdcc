/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deltas, first half (see cfg_delta.h): the request is parsed, its deletes
 * mark running records and its puts replace or join them, in copies; the
 * running configuration is only read. cfg_delta_check.c finishes.
 *
 * Cost: the running records are copied and indexed once per batch (linear
 * in the configuration), the request's records are parsed by the file's
 * own field tables (linear in the request).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_delta_int.h"
#include "cfg_rec.h"
#include "cfg_util.h"

static const struct cfg_field tenant_key_fields[] = {
	CFG_FIELD(struct dl_key, "name", CFG_F_STR, CFG_REQUIRED, name),
};
static const struct cfg_field ep_key_fields[] = {
	CFG_FIELD(struct dl_key, "tenant", CFG_F_REF, CFG_REQUIRED, tenant, .ref = &cfg_ref_tenant),
	CFG_FIELD(struct dl_key, "vip", CFG_F_IP, CFG_REQUIRED, vip),
};
static const struct cfg_field qp_key_fields[] = {
	CFG_FIELD(struct dl_key, "tenant", CFG_F_REF, CFG_REQUIRED, tenant, .ref = &cfg_ref_tenant),
	CFG_FIELD(struct dl_key, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	/* QP1, the GSI QP of a learning tenant's endpoint, has a record of its own: it may be deleted. */
	CFG_FIELD(struct dl_key, "vqpn", CFG_F_QPN, CFG_REQUIRED, id, .min = ROCE_QPN_GSI_CFG),
};
static const struct cfg_field mr_key_fields[] = {
	CFG_FIELD(struct dl_key, "tenant", CFG_F_REF, CFG_REQUIRED, tenant, .ref = &cfg_ref_tenant),
	CFG_FIELD(struct dl_key, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	CFG_FIELD(struct dl_key, "rkey", CFG_F_UINT, CFG_REQUIRED, id),
};

struct set_ctx {
	const struct cfg_dl_set *s;
	int k;
};

static bool
key_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct set_ctx *c = ctx;
	const struct dl_key *want = key;
	struct dl_key have;

	cfg_dl_rec_key(c->s, c->k, idx, &have);
	return have.tenant == want->tenant && have.id == want->id && cfg_ip_equal(&have.vip, &want->vip);
}

static int64_t
set_find(struct cfg_dl *d, int k, const struct dl_key *key)
{
	struct set_ctx c = { &d->set[k], k };

	return cfg_htab_lookup(&d->set[k].idx, cfg_dl_key_hash(key->tenant, &key->vip, key->id), key_match,
			       &c, key);
}

/* Copy the @n running records at @src into set @k with room for @extra more, and index them. */
static int
set_init(struct cfg_dl *d, int k, const void *src, uint32_t n, size_t sz, uint32_t extra)
{
	struct cfg_dl_set *s = &d->set[k];
	uint32_t cap = n + extra;

	s->sz = sz;
	s->n = s->n_run = n;
	s->rec = calloc(cap ? cap : 1, sz);
	s->origin = malloc(sizeof(*s->origin) * (cap ? cap : 1));
	s->del = malloc(sizeof(*s->del) * (cap ? cap : 1));
	if (!s->rec || !s->origin || !s->del || cfg_htab_init(&s->idx, cap) < 0)
		return -1;
	if (n)
		memcpy(s->rec, src, (size_t)n * sz);
	for (uint32_t i = 0; i < cap; i++)
		s->origin[i] = s->del[i] = -1;
	if (k == CFG_DK_TENANTS)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		struct dl_key key;

		cfg_dl_rec_key(s, k, i, &key);
		if (cfg_htab_add(&s->idx, cfg_dl_key_hash(key.tenant, &key.vip, key.id), i) < 0)
			return -1;
	}
	return 0;
}

static void
set_free(struct cfg_dl_set *s)
{
	free(s->rec);
	free(s->origin);
	free(s->del);
	cfg_htab_free(&s->idx);
}

/* The array @v under "put" or "delete" at @p, or NULL (reported when not an array). */
static const struct cfg_jv *
section(struct cfg_dl *d, const struct cfg_jv *top, const struct cfg_path *tp, int k, struct cfg_path *p)
{
	const struct cfg_jv *v = top ? cfg_j_get(top, cfg_dl_kind_names[k]) : NULL;

	*p = (struct cfg_path){ .up = tp, .key = cfg_dl_kind_names[k] };
	if (v && !cfg_j_is_arr(v)) {
		cfg_err(&d->ld.dg, p, "expected an array");
		return NULL;
	}
	return v;
}

/* "delete.tenants": names, or {"name": N}. */
static void
delete_tenants(struct cfg_dl *d, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_dl_set *s = &d->set[CFG_DK_TENANTS];

	for (uint32_t i = 0; v && i < v->n; i++) {
		struct cfg_path ep = { .up = p, .key = NULL, .idx = i };
		const struct cfg_jv *e = cfg_j_at(v, i);
		struct dl_key key = { 0 };
		int t;

		d->ld.dg.rank = 0;
		d->ld.dg.rec = i;
		if (cfg_j_is_str(e)) {
			key.name = strdup(e->v.s);
		} else if (cfg_j_is_obj(e)) {
			if (cfg_obj_parse(&d->ld.dg, e, &ep, tenant_key_fields, 1, &key, NULL) != 1)
				continue;
		} else {
			cfg_err(&d->ld.dg, &ep, "expected a tenant name or {\"name\": ...}");
			continue;
		}
		if (!key.name) {
			d->ld.dg.oom = true;
			return;
		}
		t = cfg_ld_tenant_lookup(&d->ld, key.name);
		if (t < 0)
			cfg_err(&d->ld.dg, &ep, "no tenant \"%.64s\"", key.name);
		else if (s->del[t] >= 0)
			cfg_err(&d->ld.dg, &ep, "tenant \"%.64s\" is deleted already by delete.tenants[%d]", key.name,
				s->del[t]);
		else
			s->del[t] = (int32_t)i;
		free(key.name);
		d->sum.deleted[CFG_DK_TENANTS]++;
	}
}

bool
cfg_dl_key_parse(struct cfg_diag *dg, const struct cfg_jv *e, const struct cfg_path *p, int k, int *tenant,
		 struct cfg_ip *vip, uint32_t *id)
{
	static const struct {
		const struct cfg_field *tab;
		unsigned n;
	} kinds[CFG_DK_N] = {
		[CFG_DK_ENDPOINTS] = { ep_key_fields, CFG_DIM(ep_key_fields) },
		[CFG_DK_QPS] = { qp_key_fields, CFG_DIM(qp_key_fields) },
		[CFG_DK_MRS] = { mr_key_fields, CFG_DIM(mr_key_fields) },
	};
	struct dl_key key = { .tenant = -1 };

	if (!cfg_j_is_obj(e)) {
		cfg_err(dg, p, "expected an object");
		return false;
	}
	if (cfg_obj_parse(dg, e, p, kinds[k].tab, kinds[k].n, &key, NULL) != CFG_BIT(kinds[k].n) - 1)
		return false;
	*tenant = key.tenant;
	*vip = key.vip;
	*id = key.id;
	return true;
}

/* "delete.endpoints", "delete.qps" or "delete.mrs": keys of running records. */
static void
delete_records(struct cfg_dl *d, int k, const struct cfg_jv *v, const struct cfg_path *p)
{
	static const char *const what[CFG_DK_N] = { NULL, "endpoint", "qp", "mr" };
	struct cfg_dl_set *s = &d->set[k];

	for (uint32_t i = 0; v && i < v->n; i++) {
		struct cfg_path ep = { .up = p, .key = NULL, .idx = i };
		const struct cfg_jv *e = cfg_j_at(v, i);
		struct dl_key key = { .tenant = -1 };
		int64_t j;

		d->ld.dg.rank = 1;
		d->ld.dg.rec = i;
		if (!cfg_dl_key_parse(&d->ld.dg, e, &ep, k, &key.tenant, &key.vip, &key.id))
			continue;
		d->sum.deleted[k]++;
		j = set_find(d, k, &key);
		if (j < 0)
			cfg_err(&d->ld.dg, &ep, "no such %s", what[k]);
		else if (s->del[j] >= 0)
			cfg_err(&d->ld.dg, &ep, "deleted already by delete.%s[%d]", cfg_dl_kind_names[k], s->del[j]);
		else
			s->del[j] = (int32_t)i;
	}
}

/* "put.tenants": each replaces the tenant of its name, or joins. */
static void
put_tenants(struct cfg_dl *d, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_dl_set *s = &d->set[CFG_DK_TENANTS];
	struct cfg pc = { 0 };
	struct cfg_rec r;

	if (!v)
		return;
	pc.dcqcn = d->run->dcqcn;
	d->ld.c = &pc;
	if (!cfg_records_alloc(&d->ld, v, p, sizeof(*pc.tenants), (void **)&pc.tenants, &pc.n_tenants)) {
		d->ld.c = &d->s;
		return;
	}
	d->ld.dg.rank = 2;
	for (uint32_t i = 0; i < pc.n_tenants; i++) {
		d->ld.c = &pc;
		if (!cfg_tenant_parse(&d->ld, v, p, i, &r))
			continue;
		cfg_tenant_dcqcn_parse(&d->ld, &r);
		d->ld.c = &d->s;
		d->sum.put[CFG_DK_TENANTS]++;
		if (!(r.ok & CFG_BIT(CFG_T_NAME)))
			continue;

		struct cfg_tenant *t = &pc.tenants[i];
		int j = cfg_ld_tenant_lookup(&d->ld, t->name);

		if (j >= 0 && s->origin[j] >= 0) {
			CFG_REC_ERR(&d->ld, &r.path, "name", "tenant \"%.64s\" is put already by put.tenants[%d]",
				    t->name, s->origin[j]);
			continue;
		}
		if (j < 0) {
			j = (int)s->n++;
			d->s.n_tenants = s->n;
		} else {
			free(((struct cfg_tenant *)(s->rec + (size_t)j * s->sz))->name);
		}
		memcpy(s->rec + (size_t)j * s->sz, t, sizeof(*t));
		t->name = NULL;
		((struct cfg_tenant *)(s->rec + (size_t)j * s->sz))->n_qps = 0;
		s->origin[j] = (int32_t)i;
		/* A put after a delete of the same name: the tenant stays, as put. */
		s->del[j] = -1;
		if ((uint32_t)j >= s->n_run)
			cfg_ld_tenant_claim(&d->ld, (uint32_t)j);
	}
	d->ld.c = &d->s;
	for (uint32_t i = 0; i < pc.n_tenants; i++)
		free(pc.tenants[i].name);
	free(pc.tenants);
}

/* "put.endpoints", "put.qps" or "put.mrs". */
static void
put_records(struct cfg_dl *d, int k, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_dl_set *s = &d->set[k];
	const struct cfg_dl_set *ts = &d->set[CFG_DK_TENANTS];
	void **arr = k == CFG_DK_ENDPOINTS ? (void **)&d->s.endpoints :
		     k == CFG_DK_QPS ? (void **)&d->s.qps : (void **)&d->s.mrs;
	uint32_t n = 0;
	struct cfg_rec r;

	if (!v)
		return;
	if (k == CFG_DK_ENDPOINTS) {
		cfg_endpoints_alloc(&d->ld, v, p);
		n = d->s.n_endpoints;
	} else if (k == CFG_DK_QPS) {
		cfg_qps_alloc(&d->ld, v, p);
		n = d->s.n_qps;
	} else {
		cfg_records_alloc(&d->ld, v, p, sizeof(*d->s.mrs), (void **)&d->s.mrs, &d->s.n_mrs);
		n = d->s.n_mrs;
	}
	d->ld.dg.rank = 2;
	for (uint32_t i = 0; i < n && !d->ld.dg.oom; i++) {
		uint64_t need;
		bool parsed;
		int tenant;

		if (k == CFG_DK_ENDPOINTS) {
			parsed = cfg_endpoint_parse(&d->ld, v, p, i, &r);
			if (parsed) {
				cfg_endpoint_mac_check(&d->ld, &r);
				/* Ports are tenant ports of the right tenant: checked on the result. */
			}
			need = CFG_BIT(CFG_E_TENANT) | CFG_BIT(CFG_E_VIP);
			tenant = d->s.endpoints[i].tenant;
		} else if (k == CFG_DK_QPS) {
			parsed = cfg_qp_parse(&d->ld, v, p, i, &r);
			if (parsed)
				cfg_qp_type_check(&d->ld, &r);
			need = CFG_BIT(CFG_Q_TENANT) | CFG_BIT(CFG_Q_VIP) | CFG_BIT(CFG_Q_VQPN);
			tenant = d->s.qps[i].tenant;
		} else {
			parsed = cfg_mr_parse(&d->ld, v, p, i, &r);
			if (parsed)
				cfg_mr_window_check(&d->ld, &r);
			need = CFG_BIT(CFG_M_TENANT) | CFG_BIT(CFG_M_VIP) | CFG_BIT(CFG_M_RKEY);
			tenant = d->s.mrs[i].tenant;
		}
		if (!parsed)
			continue;
		d->sum.put[k]++;
		if ((r.ok & need) != need)
			continue;
		if (ts->del[tenant] >= 0) {
			CFG_REC_ERR(&d->ld, &r.path, "tenant", "tenant \"%.64s\" is deleted by delete.tenants[%d]",
				    d->s.tenants[tenant].name, ts->del[tenant]);
			continue;
		}

		const void *src = (const char *)*arr + (size_t)i * s->sz;
		struct dl_key key;
		int64_t j;

		memcpy(s->rec + (size_t)s->n * s->sz, src, s->sz);
		cfg_dl_rec_key(s, k, s->n, &key);
		j = set_find(d, k, &key);
		if (j >= 0 && s->origin[j] >= 0) {
			cfg_err(&d->ld.dg, &r.path, "the same key as put.%s[%d]", cfg_dl_kind_names[k], s->origin[j]);
			continue;
		}
		if (j < 0) {
			j = s->n++;
			if (cfg_htab_add(&s->idx, cfg_dl_key_hash(key.tenant, &key.vip, key.id), (uint32_t)j) < 0)
				d->ld.dg.oom = true;
		} else {
			memcpy(s->rec + (size_t)j * s->sz, src, s->sz);
			/* A put after a delete of the same key: the record stays, as put. */
			s->del[j] = -1;
		}
		s->origin[j] = (int32_t)i;
	}
	free(*arr);
	*arr = NULL;
	d->s.n_endpoints = d->s.n_qps = d->s.n_mrs = 0;
	free(d->ld.ep_ok);
	free(d->ld.qp_ok);
	d->ld.ep_ok = d->ld.qp_ok = NULL;
}

/* Count the elements of the array @k under @top, 0 if absent or not an array. */
static uint32_t
count(const struct cfg_jv *top, int k)
{
	const struct cfg_jv *v = top ? cfg_j_get(top, cfg_dl_kind_names[k]) : NULL;

	return cfg_j_is_arr(v) ? v->n : 0;
}

static struct cfg *
delta_run(struct cfg_dl *d, const struct cfg_jv *root)
{
	static const char *const top_keys[] = { "op", "id", "put", "delete" };
	const struct cfg *run = d->run;
	const struct cfg_jv *put = NULL, *del = NULL, *v;
	struct cfg_path tp_put = { .key = "put" }, tp_del = { .key = "delete" }, p;

	if (!cfg_j_is_obj(root)) {
		cfg_err(&d->ld.dg, NULL, "expected a JSON object at the top level");
		return NULL;
	}
	for (uint32_t m = 0; m < root->n; m++) {
		const struct cfg_jv *e = cfg_j_at(root, m);
		struct cfg_path kp = { .key = e->key };
		size_t t;

		for (t = 0; t < CFG_DIM(top_keys); t++)
			if (!strcmp(e->key, top_keys[t]))
				break;
		if (t == CFG_DIM(top_keys))
			cfg_err(&d->ld.dg, &kp, "unknown key (a request has op, id, put and delete)");
		else if (t >= 2 && !cfg_j_is_obj(e))
			cfg_err(&d->ld.dg, &kp, "expected an object");
		else if (t == 2)
			put = e;
		else if (t == 3)
			del = e;
	}
	for (int k = 0; k < CFG_DK_N; k++) {
		struct cfg_path kp = { .up = &tp_put };

		for (uint32_t m = 0; put && m < put->n; m++)
			if (!(kp.key = cfg_j_at(put, m)->key) || (strcmp(kp.key, "tenants") && strcmp(kp.key, "endpoints") &&
								  strcmp(kp.key, "qps") && strcmp(kp.key, "mrs")))
				if (k == 0)
					cfg_err(&d->ld.dg, &kp, "unknown key (put holds tenants, endpoints, qps, mrs)");
		kp.up = &tp_del;
		for (uint32_t m = 0; del && m < del->n; m++)
			if (!(kp.key = cfg_j_at(del, m)->key) || (strcmp(kp.key, "tenants") && strcmp(kp.key, "endpoints") &&
								  strcmp(kp.key, "qps") && strcmp(kp.key, "mrs")))
				if (k == 0)
					cfg_err(&d->ld.dg, &kp, "unknown key (delete holds tenants, endpoints, qps, mrs)");
	}
	if (set_init(d, CFG_DK_TENANTS, run->tenants, run->n_tenants, sizeof(*run->tenants),
		     count(put, CFG_DK_TENANTS)) < 0 ||
	    set_init(d, CFG_DK_ENDPOINTS, run->endpoints, run->n_endpoints, sizeof(*run->endpoints),
		     count(put, CFG_DK_ENDPOINTS)) < 0 ||
	    set_init(d, CFG_DK_QPS, run->qps, run->n_qps, sizeof(*run->qps), count(put, CFG_DK_QPS)) < 0 ||
	    set_init(d, CFG_DK_MRS, run->mrs, run->n_mrs, sizeof(*run->mrs), count(put, CFG_DK_MRS)) < 0) {
		d->ld.dg.oom = true;
		return NULL;
	}
	/* The tenants' names are the merged set's own copies. */
	for (uint32_t t = 0; t < run->n_tenants; t++) {
		struct cfg_tenant *mt = (struct cfg_tenant *)(d->set[0].rec + t * d->set[0].sz);

		mt->n_qps = 0;
		if (!(mt->name = strdup(run->tenants[t].name)))
			d->ld.dg.oom = true;
	}
	d->s = *run;
	d->s.tenants = (struct cfg_tenant *)d->set[0].rec;
	d->s.endpoints = NULL;
	d->s.qps = NULL;
	d->s.mrs = NULL;
	d->s.n_endpoints = d->s.n_qps = d->s.n_mrs = 0;
	d->ld.c = &d->s;
	cfg_ld_htab_init(&d->ld, &d->ld.tenant_by_name, run->n_tenants + count(put, CFG_DK_TENANTS));
	cfg_ld_htab_init(&d->ld, &d->ld.port_by_name, run->n_ports);
	for (uint32_t t = 0; t < run->n_tenants && !d->ld.dg.oom; t++)
		cfg_ld_tenant_claim(&d->ld, t);
	for (uint32_t i = 0; i < run->n_ports && !d->ld.dg.oom; i++)
		cfg_ld_port_claim(&d->ld, i);
	if (d->ld.dg.oom)
		return NULL;

	delete_tenants(d, section(d, del, &tp_del, CFG_DK_TENANTS, &p), &p);
	for (int k = CFG_DK_ENDPOINTS; k < CFG_DK_N; k++)
		delete_records(d, k, section(d, del, &tp_del, k, &p), &p);
	v = section(d, put, &tp_put, CFG_DK_TENANTS, &p);
	put_tenants(d, v, &p);
	for (int k = CFG_DK_ENDPOINTS; k < CFG_DK_N && !d->ld.dg.oom; k++)
		put_records(d, k, section(d, put, &tp_put, k, &p), &p);
	/* The checks between records run even after errors: every error is reported. */
	if (d->ld.dg.oom)
		return NULL;
	return cfg_dl_finish(d);
}

struct cfg *
cfg_delta_apply_root(const struct cfg *run, const struct cfg_jv *root, const char *name, struct cfg_errors *errs,
		     struct cfg_delta_summary *sum)
{
	struct cfg_dl d;
	struct cfg *c;

	memset(&d, 0, sizeof(d));
	cfg_ld_init(&d.ld, name);
	d.run = run;
	c = delta_run(&d, root);
	if (!c)
		cfg_diag_deliver(&d.ld.dg, errs);
	if (sum)
		*sum = d.sum;
	for (uint32_t t = 0; d.set[0].rec && t < d.set[0].n; t++)
		free(((struct cfg_tenant *)(d.set[0].rec + t * d.set[0].sz))->name);
	for (int k = 0; k < CFG_DK_N; k++)
		set_free(&d.set[k]);
	cfg_ld_release(&d.ld);
	return c;
}

struct cfg *
cfg_delta_apply(const struct cfg *run, char *buf, size_t len, const char *name, struct cfg_errors *errs,
		struct cfg_delta_summary *sum)
{
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	struct cfg *c;

	if (sum)
		memset(sum, 0, sizeof(*sum));
	if (cfg_json_parse(buf, len, &doc, &je) < 0) {
		struct cfg_diag dg;

		memset(&dg, 0, sizeof(dg));
		dg.name = name;
		cfg_err_raw(&dg, "%s:%d:%d: syntax error: %s", name, je.line, je.col, je.text);
		cfg_diag_deliver(&dg, errs);
		cfg_diag_release(&dg);
		return NULL;
	}
	c = cfg_delta_apply_root(run, doc.root, name, errs, sum);
	cfg_json_free(&doc);
	return c;
}

struct cfg *
cfg_dup(const struct cfg *run)
{
	char empty[] = "{}";

	return cfg_delta_apply(run, empty, 2, run->path, NULL, NULL);
}
