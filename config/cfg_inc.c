/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental deltas (cfg_inc.h): a batch parsed by the file's own record
 * parsers and checked against the running configuration's indexes, at a
 * cost in the size of the batch.
 *
 * The checks are those of cfg_delta_check.c, made only for what the batch
 * can affect: the records it puts, the running records it deletes or
 * replaces, and the peers and endpoints of those.  A running record that
 * the batch does not touch stays valid unless something it names goes away
 * or changes; what a record names is its endpoint, its peer and (through
 * the host of its endpoint) its pqpn or psrqn, and each is checked below
 * from the side of the record that changes.  Any doubt answers 0, and the
 * caller takes the full path (cfg_delta_apply_root()), which reports.
 */
#include <stdlib.h>
#include <string.h>

#include "cfg_delta_int.h"
#include "cfg_inc_int.h"
#include "cfg_util.h"
#include "cfg_rec.h"

/* A key that the batch deletes or puts. */
struct bent {
	struct cfg_inc_key key;
	int32_t run;            /* its running index, or -1 */
	int32_t put;            /* index under put.KIND, or -1 */
	int32_t del;            /* index under delete.KIND, or -1 */
	uint32_t gone[CFG_DK_N]; /* an endpoint deleted: its QPs and MRs that the batch deletes */
};

struct bset {
	struct bent *e;
	uint32_t n;
	struct cfg_htab h;
};

struct prep {
	struct cfg *run;
	struct cfg_inc_ix *x;
	struct cfg_ld ld;
	struct cfg s;           /* run's tenants and ports for the parsers; the put records */
	void *put[CFG_DK_N];    /* the put records of each kind */
	struct bset b[CFG_DK_N];
	struct cfg_htab bpq;    /* put QPs by (host, pqpn) */
	const struct cfg_ip **host; /* per put QP: the host of its endpoint */
	struct cfg_htab bsrq;   /* added endpoints' SRQs by (host, psrqn) */
	uint32_t *touched;      /* tenants whose tdelta is in use */
	uint32_t n_touched;
};

static bool
bent_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_inc_key *a = &((const struct bset *)ctx)->e[idx].key, *b = key;

	return a->tenant == b->tenant && a->id == b->id && cfg_ip_equal(&a->vip, &b->vip);
}

static struct bent *
bfind(struct prep *p, int k, const struct cfg_inc_key *key)
{
	int64_t j = cfg_htab_lookup(&p->b[k].h, cfg_inc_key_hash(key), bent_match, &p->b[k], key);

	return j < 0 ? NULL : &p->b[k].e[j];
}

/* A new entry; the set has room for every entry of the batch. */
static struct bent *
badd(struct prep *p, int k, const struct cfg_inc_key *key, int64_t run)
{
	struct bset *s = &p->b[k];
	struct bent *e = &s->e[s->n];

	*e = (struct bent){ .key = *key, .run = (int32_t)run, .put = -1, .del = -1 };
	if (cfg_htab_add(&s->h, cfg_inc_key_hash(key), s->n) < 0) {
		p->ld.dg.oom = true;
		return NULL;
	}
	s->n++;
	return e;
}

static const void *
put_rec(const struct prep *p, int k, int32_t i)
{
	if (k == CFG_DK_ENDPOINTS)
		return &((const struct cfg_endpoint *)p->put[k])[i];
	if (k == CFG_DK_QPS)
		return &((const struct cfg_qp *)p->put[k])[i];
	return &((const struct cfg_mr *)p->put[k])[i];
}

/* The record of kind @k with @key in the result, or NULL. */
static const void *
res_find(struct prep *p, int k, const struct cfg_inc_key *key)
{
	const struct bent *b = bfind(p, k, key);
	int64_t j;

	if (b)
		return b->put >= 0 ? put_rec(p, k, b->put) : NULL;
	j = cfg_inc_find(p->run, k, key);
	if (j < 0)
		return NULL;
	return k == CFG_DK_ENDPOINTS ? (const void *)&p->run->endpoints[j] : (const void *)&p->run->qps[j];
}

/* The endpoint that the QP or MR with @key names, in the result, or NULL. */
static const struct cfg_endpoint *
res_endpoint(struct prep *p, const struct cfg_inc_key *key)
{
	struct cfg_inc_key ek = { key->tenant, key->vip, 0 };

	return res_find(p, CFG_DK_ENDPOINTS, &ek);
}

/* The QP @q, as it will run, and its peer name each other with the right types, or @q may run alone. */
static bool
peer_ok(struct prep *p, const struct cfg_qp *q)
{
	struct cfg_inc_key pk = { q->tenant, q->peer_vip, q->peer_vqpn }, ek = { q->tenant, q->peer_vip, 0 };

	if (!q->has_peer)
		return true;
	switch (cfg_qp_peer(p->run, q, cfg_qp_half(q) ? NULL : res_find(p, CFG_DK_QPS, &pk))) {
	case CFG_PEER_PAIR:
		return true;
	case CFG_PEER_ALONE:
		/* Its tenant learns and its source is an endpoint of it (cfg_half_check()). */
		return p->run->tenants[q->tenant].qp_learning && res_find(p, CFG_DK_ENDPOINTS, &ek);
	default:
		return false;
	}
}

static void
tenant_count(struct prep *p, int t, int d)
{
	if (!p->x->tmark[t]) {
		p->x->tmark[t] = 1;
		p->touched[p->n_touched++] = (uint32_t)t;
	}
	p->x->tdelta[t] += d;
}

/* The request's shape: only op, id, put and delete, and no tenants. */
static bool
shape_ok(const struct cfg_jv *root, const struct cfg_jv **put, const struct cfg_jv **del)
{
	*put = *del = NULL;
	if (!cfg_j_is_obj(root))
		return false;
	for (uint32_t m = 0; m < root->n; m++) {
		const struct cfg_jv *e = cfg_j_at(root, m);
		const struct cfg_jv **sec = !strcmp(e->key, "put") ? put : !strcmp(e->key, "delete") ? del : NULL;

		if (!sec) {
			if (strcmp(e->key, "op") && strcmp(e->key, "id"))
				return false;
			continue;
		}
		if (!cfg_j_is_obj(e))
			return false;
		*sec = e;
		for (uint32_t i = 0; i < e->n; i++) {
			const struct cfg_jv *v = cfg_j_at(e, i);
			int k;

			for (k = 0; k < CFG_DK_N; k++)
				if (!strcmp(v->key, cfg_dl_kind_names[k]))
					break;
			if (k == CFG_DK_N || !cfg_j_is_arr(v) || (k == CFG_DK_TENANTS && v->n))
				return false;
		}
	}
	return true;
}

static const struct cfg_jv *
section(const struct cfg_jv *top, int k)
{
	return top ? cfg_j_get(top, cfg_dl_kind_names[k]) : NULL;
}

/* "delete.KIND": keys of running records, each once. */
static bool
parse_deletes(struct prep *p, const struct cfg_jv *del, struct cfg_inc *inc)
{
	struct cfg_path top = { .key = "delete" };

	for (int k = CFG_DK_ENDPOINTS; k < CFG_DK_N; k++) {
		const struct cfg_jv *v = section(del, k);
		struct cfg_path sp = { .up = &top, .key = cfg_dl_kind_names[k] };

		for (uint32_t i = 0; v && i < v->n; i++) {
			struct cfg_path ep = { .up = &sp, .idx = i };
			struct cfg_inc_key key;
			struct bent *b;
			int64_t j;

			if (!cfg_dl_key_parse(&p->ld.dg, cfg_j_at(v, i), &ep, k, &key.tenant, &key.vip, &key.id))
				return false;
			inc->sum.deleted[k]++;
			j = cfg_inc_find(p->run, k, &key);
			if (j < 0 || bfind(p, k, &key) || !(b = badd(p, k, &key, j)))
				return false;
			b->del = (int32_t)i;
		}
	}
	return true;
}

/* "put.KIND": records parsed and checked alone as cfg_delta.c does, then each key once. */
static bool
parse_puts(struct prep *p, const struct cfg_jv *put, struct cfg_inc *inc)
{
	struct cfg_path top = { .key = "put" };
	struct cfg_ld *ld = &p->ld;

	for (int k = CFG_DK_ENDPOINTS; k < CFG_DK_N; k++) {
		const struct cfg_jv *v = section(put, k);
		struct cfg_path sp = { .up = &top, .key = cfg_dl_kind_names[k] };
		uint32_t n;
		struct cfg_rec r;

		if (!v)
			continue;
		if (k == CFG_DK_ENDPOINTS)
			cfg_endpoints_alloc(ld, v, &sp);
		else if (k == CFG_DK_QPS)
			cfg_qps_alloc(ld, v, &sp);
		else
			cfg_records_alloc(ld, v, &sp, sizeof(*p->s.mrs), (void **)&p->s.mrs, &p->s.n_mrs);
		n = k == CFG_DK_ENDPOINTS ? p->s.n_endpoints : k == CFG_DK_QPS ? p->s.n_qps : p->s.n_mrs;
		p->put[k] = k == CFG_DK_ENDPOINTS ? (void *)p->s.endpoints :
			    k == CFG_DK_QPS ? (void *)p->s.qps : (void *)p->s.mrs;
		ld->dg.rank = 2;
		for (uint32_t i = 0; i < n && !ld->dg.oom && !ld->dg.n_msg; i++) {
			if (k == CFG_DK_ENDPOINTS && cfg_endpoint_parse(ld, v, &sp, i, &r))
				cfg_endpoint_mac_check(ld, &r);
			else if (k == CFG_DK_QPS && cfg_qp_parse(ld, v, &sp, i, &r))
				cfg_qp_type_check(ld, &r);
			else if (k == CFG_DK_MRS && cfg_mr_parse(ld, v, &sp, i, &r))
				cfg_mr_window_check(ld, &r);
		}
		free(ld->ep_ok);
		free(ld->qp_ok);
		ld->ep_ok = ld->qp_ok = NULL;
		if (ld->dg.oom || ld->dg.n_msg)
			return false;
		inc->sum.put[k] = n;
		for (uint32_t i = 0; i < n; i++) {
			struct cfg_inc_key key;
			struct bent *b;

			cfg_inc_rec_key(&p->s, k, i, &key);
			b = bfind(p, k, &key);
			if (b && b->put >= 0)
				return false;   /* the same key twice */
			if (!b && !(b = badd(p, k, &key, cfg_inc_find(p->run, k, &key))))
				return false;
			b->put = (int32_t)i;
		}
	}
	return true;
}

static bool
host_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct prep *p = ctx;
	const struct cfg_inc_key *k = key;

	return ((const struct cfg_qp *)p->put[CFG_DK_QPS])[idx].pqpn == k->id &&
	       cfg_ip_equal(p->host[idx], &k->vip);
}

static bool
srq_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_endpoint *e = &((const struct cfg_endpoint *)((const struct prep *)ctx)->put[CFG_DK_ENDPOINTS])
					       [idx / CFG_XRC_SRQS_MAX];
	const struct cfg_inc_key *k = key;

	return e->xrc_srqs[idx % CFG_XRC_SRQS_MAX].psrqn == k->id && cfg_ip_equal(&e->host, &k->vip);
}

/* Endpoints: added ones are checked; one put that differs from the running one is not for this path. */
static bool
check_endpoints(struct prep *p)
{
	const struct cfg *run = p->run;

	for (uint32_t i = 0; i < p->b[CFG_DK_ENDPOINTS].n; i++) {
		const struct bent *b = &p->b[CFG_DK_ENDPOINTS].e[i];
		const struct cfg_endpoint *e;

		if (b->put < 0)
			continue;
		e = put_rec(p, CFG_DK_ENDPOINTS, b->put);
		if (b->run >= 0) {
			if (!cfg_inc_ep_equal(e, &run->endpoints[b->run]))
				return false;
			continue;
		}
		if (e->port >= 0 && (run->ports[e->port].role != CFG_ROLE_TENANT ||
				     (run->ports[e->port].tenant >= 0 && run->ports[e->port].tenant != e->tenant)))
			return false;
		for (uint32_t s = 0; s < e->n_xrc_srqs; s++) {
			struct cfg_inc_key hk = { 0, e->host, e->xrc_srqs[s].psrqn };
			uint32_t h = cfg_inc_psrqn_hash(&e->host, hk.id);
			int64_t j = cfg_inc_find_psrqn(run, &e->host, hk.id);

			if (j >= 0) {
				struct cfg_inc_key ok;
				const struct bent *hb;

				cfg_inc_rec_key(run, CFG_DK_ENDPOINTS, (uint32_t)(j / CFG_XRC_SRQS_MAX), &ok);
				hb = bfind(p, CFG_DK_ENDPOINTS, &ok);
				if (!hb || hb->put >= 0)
					return false;   /* the holder stays */
			}
			if (cfg_htab_lookup(&p->bsrq, h, srq_match, p, &hk) >= 0)
				return false;
			if (cfg_htab_add(&p->bsrq, h, (uint32_t)b->put * CFG_XRC_SRQS_MAX + s) < 0) {
				p->ld.dg.oom = true;
				return false;
			}
		}
	}
	return true;
}

/* Deleted QPs and MRs; then no deleted endpoint keeps one. */
static bool
check_deleted(struct prep *p)
{
	const struct cfg *run = p->run;

	for (int k = CFG_DK_QPS; k < CFG_DK_N; k++) {
		for (uint32_t i = 0; i < p->b[k].n; i++) {
			const struct bent *b = &p->b[k].e[i];
			struct cfg_inc_key ek = { b->key.tenant, b->key.vip, 0 };
			struct bent *eb;

			if (b->run < 0)
				continue;
			if (k == CFG_DK_QPS) {
				const struct cfg_qp *r = &run->qps[b->run];

				/* The running peer of a QP that goes or changes: it stays valid or changes too. */
				if (r->peer >= 0) {
					const struct cfg_qp *o = &run->qps[r->peer];
					struct cfg_inc_key ok = { o->tenant, o->vip, o->vqpn };

					if (!bfind(p, CFG_DK_QPS, &ok) && !peer_ok(p, o))
						return false;
				}
				if (b->put < 0)
					tenant_count(p, r->tenant, -1);
			}
			if (b->put < 0 && (eb = bfind(p, CFG_DK_ENDPOINTS, &ek)) && eb->put < 0)
				eb->gone[k]++;
		}
	}
	for (uint32_t i = 0; i < p->b[CFG_DK_ENDPOINTS].n; i++) {
		const struct bent *b = &p->b[CFG_DK_ENDPOINTS].e[i];

		if (b->put < 0 && (p->x->ep[b->run].nq != b->gone[CFG_DK_QPS] ||
				   p->x->ep[b->run].nm != b->gone[CFG_DK_MRS]))
			return false;
	}
	return true;
}

/* Put QPs and MRs: endpoint, pqpn on its host, peer, quota. */
static bool
check_puts(struct prep *p)
{
	const struct cfg *run = p->run;

	for (uint32_t i = 0; i < p->b[CFG_DK_MRS].n; i++) {
		const struct bent *b = &p->b[CFG_DK_MRS].e[i];

		if (b->put >= 0 && !res_endpoint(p, &b->key))
			return false;
	}
	for (uint32_t i = 0; i < p->b[CFG_DK_QPS].n; i++) {
		const struct bent *b = &p->b[CFG_DK_QPS].e[i];
		const struct cfg_qp *q;
		const struct cfg_endpoint *e;
		struct cfg_inc_key hk;
		uint32_t h;
		int64_t j;

		if (b->put < 0)
			continue;
		q = put_rec(p, CFG_DK_QPS, b->put);
		if (!(e = res_endpoint(p, &b->key)) || !peer_ok(p, q))
			return false;
		hk = (struct cfg_inc_key){ 0, e->host, q->pqpn };
		h = cfg_inc_pqpn_hash(&e->host, q->pqpn);
		j = cfg_inc_find_pqpn(run, &e->host, q->pqpn);
		if (j >= 0) {
			struct cfg_inc_key ok;

			cfg_inc_rec_key(run, CFG_DK_QPS, (uint32_t)j, &ok);
			if (!bfind(p, CFG_DK_QPS, &ok))
				return false;   /* a running QP that stays holds it */
		}
		p->host[b->put] = &e->host;
		if (cfg_htab_lookup(&p->bpq, h, host_match, p, &hk) >= 0)
			return false;
		if (cfg_htab_add(&p->bpq, h, (uint32_t)b->put) < 0) {
			p->ld.dg.oom = true;
			return false;
		}
		if (b->run < 0)
			tenant_count(p, q->tenant, 1);
	}
	for (uint32_t i = 0; i < p->n_touched; i++) {
		const struct cfg_tenant *t = &run->tenants[p->touched[i]];

		if ((int64_t)t->n_qps + p->x->tdelta[p->touched[i]] > (int64_t)t->max_qps)
			return false;
	}
	return true;
}

static bool
rec_equal(int k, const void *a, const void *b)
{
	return k == CFG_DK_ENDPOINTS ? cfg_inc_ep_equal(a, b) : k == CFG_DK_QPS ? cfg_inc_qp_equal(a, b) :
										 cfg_inc_mr_equal(a, b);
}

static const void *
run_rec(const struct cfg *run, int k, int32_t i)
{
	return k == CFG_DK_ENDPOINTS ? (const void *)&run->endpoints[i] :
	       k == CFG_DK_QPS ? (const void *)&run->qps[i] : (const void *)&run->mrs[i];
}

/* The change list, in the order of cfg_inc.h, and room for it. */
static int
emit(struct prep *p, struct cfg_inc *inc)
{
	static const struct {
		int8_t k, op;
	} order[] = {
		{ CFG_DK_ENDPOINTS, CFG_INC_ADD }, { CFG_DK_QPS, CFG_INC_DELETE }, { CFG_DK_MRS, CFG_INC_DELETE },
		{ CFG_DK_QPS, CFG_INC_REPLACE }, { CFG_DK_MRS, CFG_INC_REPLACE }, { CFG_DK_QPS, CFG_INC_ADD },
		{ CFG_DK_MRS, CFG_INC_ADD }, { CFG_DK_ENDPOINTS, CFG_INC_DELETE },
	};
	uint32_t add[CFG_DK_N] = { 0 };

	for (size_t o = 0; o < CFG_DIM(order); o++) {
		int k = order[o].k;

		for (uint32_t i = 0; i < p->b[k].n; i++) {
			const struct bent *b = &p->b[k].e[i];
			const void *old = b->run >= 0 ? run_rec(p->run, k, b->run) : NULL;
			const void *new = b->put >= 0 ? put_rec(p, k, b->put) : NULL;
			int op = !old ? CFG_INC_ADD : !new ? CFG_INC_DELETE : CFG_INC_REPLACE;

			if (op != order[o].op || (op == CFG_INC_REPLACE && rec_equal(k, old, new)))
				continue;
			if (cfg_inc_push(inc, k, op, old, new) < 0)
				return -1;
			add[k] += op == CFG_INC_ADD;
		}
	}
	return cfg_inc_reserve(p->run, inc, add) < 0 ? -1 : 1;
}

/*
 * An endpoint of a learning tenant may be the source of halves, which name
 * it by its vip alone and are not indexed by it: its delete takes the whole
 * path, whose checks see every half.
 */
static bool
no_source_deleted(const struct prep *p)
{
	const struct cfg *run = p->run;

	for (uint32_t i = 0; i < p->b[CFG_DK_ENDPOINTS].n; i++) {
		const struct bent *b = &p->b[CFG_DK_ENDPOINTS].e[i];

		if (b->run >= 0 && b->put < 0 && run->endpoints[b->run].tenant >= 0 &&
		    run->tenants[run->endpoints[b->run].tenant].qp_learning)
			return false;
		/* A learning tenant's endpoint put without etcd: the whole path checks its host. */
		if (!cfg_learning_remote && b->put >= 0) {
			int t = ((const struct cfg_endpoint *)p->put[CFG_DK_ENDPOINTS])[b->put].tenant;

			if (t >= 0 && run->tenants[t].qp_learning)
				return false;
		}
	}
	return true;
}

static int
prep_run(struct prep *p, const struct cfg_jv *root, struct cfg_inc *inc)
{
	const struct cfg_jv *put, *del;
	uint32_t n = 0;

	if (!shape_ok(root, &put, &del))
		return 0;
	for (int k = CFG_DK_ENDPOINTS; k < CFG_DK_N; k++) {
		const struct cfg_jv *a = section(put, k), *b = section(del, k);
		uint32_t m = (a ? a->n : 0) + (b ? b->n : 0);

		if (!(p->b[k].e = malloc(sizeof(*p->b[k].e) * (m + 1))) || cfg_htab_init(&p->b[k].h, m) < 0)
			return -1;
		n += m;
	}
	if (!(p->touched = malloc(sizeof(*p->touched) * (n + 1))) ||
	    !(p->host = malloc(sizeof(*p->host) * (n + 1))) || cfg_htab_init(&p->bpq, n) < 0 ||
	    cfg_htab_init(&p->bsrq, n) < 0)
		return -1;
	p->s = *p->run;
	p->s.inc = NULL;
	p->s.endpoints = NULL;
	p->s.qps = NULL;
	p->s.mrs = NULL;
	p->s.n_endpoints = p->s.n_qps = p->s.n_mrs = 0;
	p->ld.c = &p->s;
	p->ld.tenant_by_name = p->x->tname;
	p->ld.port_by_name = p->x->pname;
	if (!parse_deletes(p, del, inc) || !parse_puts(p, put, inc) || !no_source_deleted(p) || !check_endpoints(p) ||
	    !check_deleted(p) || !check_puts(p))
		return p->ld.dg.oom ? -1 : 0;
	return emit(p, inc);
}

static void
prep_free(struct prep *p)
{
	for (uint32_t i = 0; i < p->n_touched; i++) {
		p->x->tdelta[p->touched[i]] = 0;
		p->x->tmark[p->touched[i]] = 0;
	}
	/* The name indexes are the configuration's own. */
	memset(&p->ld.tenant_by_name, 0, sizeof(p->ld.tenant_by_name));
	memset(&p->ld.port_by_name, 0, sizeof(p->ld.port_by_name));
	cfg_ld_release(&p->ld);
	for (int k = 0; k < CFG_DK_N; k++) {
		free(p->put[k]);
		free(p->b[k].e);
		cfg_htab_free(&p->b[k].h);
	}
	cfg_htab_free(&p->bpq);
	cfg_htab_free(&p->bsrq);
	free(p->host);
	free(p->touched);
}

int
cfg_inc_prepare(struct cfg *run, const struct cfg_jv *root, struct cfg_inc *inc)
{
	struct prep p;
	int r;

	memset(inc, 0, sizeof(*inc));
	memset(&p, 0, sizeof(p));
	cfg_ld_init(&p.ld, run->path ? run->path : "delta");
	p.run = run;
	if (!(p.x = cfg_inc_index(run))) {
		cfg_ld_release(&p.ld);
		return -1;
	}
	r = prep_run(&p, root, inc);
	prep_free(&p);
	if (r != 1)
		cfg_inc_release(inc);
	return r;
}
