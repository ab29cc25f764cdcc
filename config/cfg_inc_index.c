/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental deltas (cfg_inc.h): the indexes kept beside a running
 * configuration, built once in linear time, and the records compared.
 *
 * Endpoints, QPs and MRs are indexed by key, QPs by (host, pqpn) and XRC
 * SRQs by (host, psrqn), all in cfg_htab tables that hold array indexes.
 * Each endpoint also keeps the list of the QPs and of the MRs that name it
 * (threaded through per-record links), so that an endpoint moved inside its
 * array can fix their "endpoint" fields without a scan.
 *
 * cfg_free() is here too: a configuration's end frees its index.
 */
#include <stdlib.h>
#include <string.h>

#include "cfg_delta_int.h"
#include "cfg_inc_int.h"

void
cfg_inc_rec_key(const struct cfg *c, int k, uint32_t i, struct cfg_inc_key *key)
{
	if (k == CFG_DK_ENDPOINTS)
		*key = (struct cfg_inc_key){ c->endpoints[i].tenant, c->endpoints[i].vip, 0 };
	else if (k == CFG_DK_QPS)
		*key = (struct cfg_inc_key){ c->qps[i].tenant, c->qps[i].vip, c->qps[i].vqpn };
	else
		*key = (struct cfg_inc_key){ c->mrs[i].tenant, c->mrs[i].vip, c->mrs[i].rkey };
}

uint32_t
cfg_inc_key_hash(const struct cfg_inc_key *key)
{
	return cfg_dl_key_hash(key->tenant, &key->vip, key->id);
}

uint32_t
cfg_inc_pqpn_hash(const struct cfg_ip *host, uint32_t pqpn)
{
	return cfg_dl_key_hash(0, host, pqpn);
}

uint32_t
cfg_inc_psrqn_hash(const struct cfg_ip *host, uint32_t psrqn)
{
	return cfg_dl_key_hash(-1, host, psrqn);
}

/* The match functions; their context is the struct cfg. */
struct match_ctx {
	const struct cfg *c;
	int k;
};

static bool
key_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct match_ctx *m = ctx;
	const struct cfg_inc_key *want = key;
	struct cfg_inc_key have;

	cfg_inc_rec_key(m->c, m->k, idx, &have);
	return have.tenant == want->tenant && have.id == want->id && cfg_ip_equal(&have.vip, &want->vip);
}

static bool
pqpn_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg *c = ctx;
	const struct cfg_inc_key *want = key;   /* vip is the host, id the pqpn */
	const struct cfg_qp *q = &c->qps[idx];

	return q->pqpn == want->id && cfg_ip_equal(&c->endpoints[q->endpoint].host, &want->vip);
}

static bool
psrqn_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg *c = ctx;
	const struct cfg_inc_key *want = key;
	const struct cfg_endpoint *e = &c->endpoints[idx / CFG_XRC_SRQS_MAX];

	return e->xrc_srqs[idx % CFG_XRC_SRQS_MAX].psrqn == want->id && cfg_ip_equal(&e->host, &want->vip);
}

int64_t
cfg_inc_find(const struct cfg *c, int k, const struct cfg_inc_key *key)
{
	const struct cfg_inc_ix *x = c->inc;
	struct match_ctx m = { c, k };

	return cfg_htab_lookup(&x->key[k], cfg_inc_key_hash(key), key_match, &m, key);
}

int64_t
cfg_inc_find_pqpn(const struct cfg *c, const struct cfg_ip *host, uint32_t pqpn)
{
	const struct cfg_inc_ix *x = c->inc;
	struct cfg_inc_key key = { 0, *host, pqpn };

	return cfg_htab_lookup(&x->pq, cfg_inc_pqpn_hash(host, pqpn), pqpn_match, c, &key);
}

int64_t
cfg_inc_find_psrqn(const struct cfg *c, const struct cfg_ip *host, uint32_t psrqn)
{
	const struct cfg_inc_ix *x = c->inc;
	struct cfg_inc_key key = { 0, *host, psrqn };

	return cfg_htab_lookup(&x->srq, cfg_inc_psrqn_hash(host, psrqn), psrqn_match, c, &key);
}

void
cfg_inc_index_free(struct cfg *c)
{
	struct cfg_inc_ix *x = c ? c->inc : NULL;

	if (!x)
		return;
	for (int k = 0; k < CFG_DK_N; k++)
		cfg_htab_free(&x->key[k]);
	cfg_htab_free(&x->pq);
	cfg_htab_free(&x->srq);
	cfg_htab_free(&x->tname);
	cfg_htab_free(&x->pname);
	free(x->ep);
	free(x->ql);
	free(x->ml);
	free(x->tdelta);
	free(x->tmark);
	free(x);
	c->inc = NULL;
}

void
cfg_free(struct cfg *c)
{
	if (c == NULL)
		return;
	for (uint32_t i = 0; i < c->n_ports; i++) {
		free(c->ports[i].name);
		free(c->ports[i].device);
	}
	for (uint32_t i = 0; i < c->n_tenants; i++)
		free(c->tenants[i].name);
	free(c->ports);
	free(c->tenants);
	free(c->endpoints);
	free(c->qps);
	free(c->mrs);
	free(c->neighbors);
	for (uint32_t i = 0; i < c->n_acls; i++)
		free(c->acls[i].rules);
	free(c->acls);
	free(c->dcqcn.profile);
	free(c->path);
	cfg_inc_index_free(c);
	free(c);
}

struct cfg_inc_link *
cfg_inc_links(struct cfg_inc_ix *x, int k)
{
	return k == CFG_DK_QPS ? x->ql : x->ml;
}

int32_t *
cfg_inc_head(struct cfg_inc_ix *x, int k, uint32_t ep)
{
	return k == CFG_DK_QPS ? &x->ep[ep].qhead : &x->ep[ep].mhead;
}

void
cfg_inc_list_add(struct cfg_inc_ix *x, int k, uint32_t ep, uint32_t i)
{
	struct cfg_inc_link *l = cfg_inc_links(x, k);
	int32_t *h = cfg_inc_head(x, k, ep);

	l[i] = (struct cfg_inc_link){ *h, -1 };
	if (*h >= 0)
		l[*h].prev = (int32_t)i;
	*h = (int32_t)i;
	if (k == CFG_DK_QPS)
		x->ep[ep].nq++;
	else
		x->ep[ep].nm++;
}

/* Index @c's records into @x, which has room for them. */
static int
index_build(struct cfg *c, struct cfg_inc_ix *x)
{
	uint32_t n_srq = 0;

	for (uint32_t i = 0; i < c->n_endpoints; i++)
		n_srq += c->endpoints[i].n_xrc_srqs;
	if (cfg_htab_init(&x->key[CFG_DK_ENDPOINTS], c->n_endpoints) < 0 ||
	    cfg_htab_init(&x->key[CFG_DK_QPS], c->n_qps) < 0 || cfg_htab_init(&x->key[CFG_DK_MRS], c->n_mrs) < 0 ||
	    cfg_htab_init(&x->pq, c->n_qps) < 0 || cfg_htab_init(&x->srq, n_srq) < 0 ||
	    cfg_htab_init(&x->tname, c->n_tenants) < 0 || cfg_htab_init(&x->pname, c->n_ports) < 0)
		return -1;
	for (uint32_t t = 0; t < c->n_tenants; t++)
		if (cfg_htab_add(&x->tname, cfg_hash_str(c->tenants[t].name), t) < 0)
			return -1;
	for (uint32_t i = 0; i < c->n_ports; i++)
		if (cfg_htab_add(&x->pname, cfg_hash_str(c->ports[i].name), i) < 0)
			return -1;
	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		const struct cfg_endpoint *e = &c->endpoints[i];
		struct cfg_inc_key key;

		x->ep[i] = (struct cfg_inc_eprefs){ -1, -1, 0, 0 };
		cfg_inc_rec_key(c, CFG_DK_ENDPOINTS, i, &key);
		if (cfg_htab_add(&x->key[CFG_DK_ENDPOINTS], cfg_inc_key_hash(&key), i) < 0)
			return -1;
		for (uint32_t s = 0; s < e->n_xrc_srqs; s++)
			if (cfg_htab_add(&x->srq, cfg_inc_psrqn_hash(&e->host, e->xrc_srqs[s].psrqn),
					 i * CFG_XRC_SRQS_MAX + s) < 0)
				return -1;
	}
	for (uint32_t i = 0; i < c->n_qps; i++) {
		const struct cfg_qp *q = &c->qps[i];
		struct cfg_inc_key key;

		cfg_inc_rec_key(c, CFG_DK_QPS, i, &key);
		if (cfg_htab_add(&x->key[CFG_DK_QPS], cfg_inc_key_hash(&key), i) < 0 ||
		    cfg_htab_add(&x->pq, cfg_inc_pqpn_hash(&c->endpoints[q->endpoint].host, q->pqpn), i) < 0)
			return -1;
		cfg_inc_list_add(x, CFG_DK_QPS, (uint32_t)q->endpoint, i);
	}
	for (uint32_t i = 0; i < c->n_mrs; i++) {
		struct cfg_inc_key key;

		cfg_inc_rec_key(c, CFG_DK_MRS, i, &key);
		if (cfg_htab_add(&x->key[CFG_DK_MRS], cfg_inc_key_hash(&key), i) < 0)
			return -1;
		cfg_inc_list_add(x, CFG_DK_MRS, (uint32_t)c->mrs[i].endpoint, i);
	}
	return 0;
}

struct cfg_inc_ix *
cfg_inc_index(struct cfg *c)
{
	struct cfg_inc_ix *x;

	if (c->inc)
		return c->inc;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	c->inc = x;
	x->cap[CFG_DK_TENANTS] = c->n_tenants;
	x->cap[CFG_DK_ENDPOINTS] = c->n_endpoints;
	x->cap[CFG_DK_QPS] = c->n_qps;
	x->cap[CFG_DK_MRS] = c->n_mrs;
	x->ep = malloc(sizeof(*x->ep) * (c->n_endpoints + 1));
	x->ql = malloc(sizeof(*x->ql) * (c->n_qps + 1));
	x->ml = malloc(sizeof(*x->ml) * (c->n_mrs + 1));
	x->tdelta = calloc(c->n_tenants + 1, sizeof(*x->tdelta));
	x->tmark = calloc(c->n_tenants + 1, sizeof(*x->tmark));
	if (!x->ep || !x->ql || !x->ml || !x->tdelta || !x->tmark || index_build(c, x) < 0) {
		cfg_inc_index_free(c);
		return NULL;
	}
	return x;
}

bool
cfg_inc_rate_equal(const struct cfg_rate *a, const struct cfg_rate *b)
{
	return a->set == b->set && a->bps == b->bps && a->burst_bytes == b->burst_bytes;
}

bool
cfg_inc_ep_equal(const struct cfg_endpoint *a, const struct cfg_endpoint *b)
{
	if (a->tenant != b->tenant || !cfg_ip_equal(&a->vip, &b->vip) || !cfg_ip_equal(&a->host, &b->host) ||
	    a->port != b->port || a->has_mac != b->has_mac || (a->has_mac && memcmp(a->mac, b->mac, 6)) ||
	    a->n_xrc_srqs != b->n_xrc_srqs)
		return false;
	for (uint32_t s = 0; s < a->n_xrc_srqs; s++)
		if (a->xrc_srqs[s].vsrqn != b->xrc_srqs[s].vsrqn || a->xrc_srqs[s].psrqn != b->xrc_srqs[s].psrqn)
			return false;
	return true;
}

bool
cfg_inc_qp_equal(const struct cfg_qp *a, const struct cfg_qp *b)
{
	return a->tenant == b->tenant && cfg_ip_equal(&a->vip, &b->vip) && a->vqpn == b->vqpn &&
	       a->pqpn == b->pqpn && a->type == b->type && a->has_peer == b->has_peer &&
	       a->has_peer_vqpn == b->has_peer_vqpn &&
	       (!a->has_peer || (cfg_ip_equal(&a->peer_vip, &b->peer_vip) &&
				 (!a->has_peer_vqpn || a->peer_vqpn == b->peer_vqpn))) &&
	       cfg_inc_rate_equal(&a->rate, &b->rate);
}

bool
cfg_inc_mr_equal(const struct cfg_mr *a, const struct cfg_mr *b)
{
	return a->tenant == b->tenant && cfg_ip_equal(&a->vip, &b->vip) && a->rkey == b->rkey &&
	       a->addr == b->addr && a->length == b->length && a->target_rkey == b->target_rkey &&
	       a->target_addr == b->target_addr && a->access == b->access;
}

int
cfg_inc_push(struct cfg_inc *inc, int kind, int op, const void *old, const void *new)
{
	static const size_t sz[CFG_DK_N] = { 0, sizeof(struct cfg_endpoint), sizeof(struct cfg_qp),
					     sizeof(struct cfg_mr) };
	struct cfg_inc_change *ch;

	if (inc->n == inc->cap) {
		uint32_t cap = inc->cap ? inc->cap * 2 : 16;

		ch = realloc(inc->ch, sizeof(*ch) * cap);
		if (!ch)
			return -1;
		inc->ch = ch;
		inc->cap = cap;
	}
	ch = &inc->ch[inc->n++];
	memset(ch, 0, sizeof(*ch));
	ch->kind = (uint8_t)kind;
	ch->op = (uint8_t)op;
	if (old)
		memcpy(&ch->old, old, sz[kind]);
	if (new)
		memcpy(&ch->new, new, sz[kind]);
	return 0;
}

/* Arrays allocated by cfg_inc_reserve() for cfg_inc_commit(). */
struct inc_grow {
	void *rec[CFG_DK_N];
	uint32_t cap[CFG_DK_N];
};

/* Grow the per-record array *@p of @sz bytes each to @cap records. */
static int
side_grow(void **p, size_t sz, uint32_t cap)
{
	void *n = realloc(*p, sz * ((size_t)cap + 1));

	if (!n)
		return -1;
	*p = n;
	return 0;
}

int
cfg_inc_reserve(struct cfg *c, struct cfg_inc *inc, const uint32_t add[CFG_DK_N])
{
	static const size_t sz[CFG_DK_N] = { 0, sizeof(struct cfg_endpoint), sizeof(struct cfg_qp),
					     sizeof(struct cfg_mr) };
	const uint32_t n[CFG_DK_N] = { 0, c->n_endpoints, c->n_qps, c->n_mrs };
	struct cfg_inc_ix *x = c->inc;
	struct inc_grow *g = inc->priv;
	uint32_t n_srq = x->srq.n + add[CFG_DK_ENDPOINTS] * CFG_XRC_SRQS_MAX;

	for (int k = CFG_DK_ENDPOINTS; k < CFG_DK_N; k++) {
		uint64_t need = (uint64_t)n[k] + add[k];
		uint32_t cap;

		if (need > INT32_MAX)
			return -1;
		if (cfg_htab_reserve(&x->key[k], (uint32_t)need) < 0)
			return -1;
		if (need <= x->cap[k])
			continue;
		cap = x->cap[k] * 2 > need ? x->cap[k] * 2 : (uint32_t)need;
		if (cap < 16)
			cap = 16;
		if (!g && !(g = inc->priv = calloc(1, sizeof(*g))))
			return -1;
		if (!(g->rec[k] = malloc(sz[k] * cap)))
			return -1;
		g->cap[k] = cap;
		if ((k == CFG_DK_ENDPOINTS && side_grow((void **)&x->ep, sizeof(*x->ep), cap) < 0) ||
		    (k == CFG_DK_QPS && side_grow((void **)&x->ql, sizeof(*x->ql), cap) < 0) ||
		    (k == CFG_DK_MRS && side_grow((void **)&x->ml, sizeof(*x->ml), cap) < 0))
			return -1;
	}
	if (cfg_htab_reserve(&x->pq, c->n_qps + add[CFG_DK_QPS]) < 0 || cfg_htab_reserve(&x->srq, n_srq) < 0)
		return -1;
	return 0;
}

/* Move @c's records into the arrays that cfg_inc_reserve() allocated. */
void
cfg_inc_grow_apply(struct cfg *c, struct cfg_inc *inc)
{
	void **arr[CFG_DK_N] = { NULL, (void **)&c->endpoints, (void **)&c->qps, (void **)&c->mrs };
	static const size_t sz[CFG_DK_N] = { 0, sizeof(struct cfg_endpoint), sizeof(struct cfg_qp),
					     sizeof(struct cfg_mr) };
	const uint32_t n[CFG_DK_N] = { 0, c->n_endpoints, c->n_qps, c->n_mrs };
	struct cfg_inc_ix *x = c->inc;
	struct inc_grow *g = inc->priv;

	for (int k = CFG_DK_ENDPOINTS; g && k < CFG_DK_N; k++) {
		if (!g->rec[k])
			continue;
		if (n[k])
			memcpy(g->rec[k], *arr[k], sz[k] * n[k]);
		free(*arr[k]);
		*arr[k] = g->rec[k];
		x->cap[k] = g->cap[k];
		g->rec[k] = NULL;
	}
}

void
cfg_inc_release(struct cfg_inc *inc)
{
	struct inc_grow *g = inc->priv;

	for (int k = 0; g && k < CFG_DK_N; k++)
		free(g->rec[k]);
	free(g);
	free(inc->ch);
	memset(inc, 0, sizeof(*inc));
}
