/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental deltas (cfg_inc.h): a checked batch applied to the running
 * configuration in place.
 *
 * The record arrays stay compact: an added record is appended, a deleted
 * one is replaced by the last record of its array (swap-remove), and every
 * reference to the moved record follows it: its entries in the indexes, the
 * "peer" of its peer QP, its place in its endpoint's list and, when an
 * endpoint moves, the "endpoint" of the QPs and MRs that name it (found
 * through that list).  Everything costs O(1) per change, but for the moved
 * endpoint's own records.  Nothing can fail: cfg_inc_reserve() made room.
 */
#include <string.h>

#include "cfg_inc_int.h"

static int
rec_endpoint(const struct cfg *c, int k, uint32_t i)
{
	return k == CFG_DK_QPS ? c->qps[i].endpoint : c->mrs[i].endpoint;
}

static void
list_del(struct cfg_inc_ix *x, int k, uint32_t ep, uint32_t i)
{
	struct cfg_inc_link *l = cfg_inc_links(x, k);

	if (l[i].prev >= 0)
		l[l[i].prev].next = l[i].next;
	else
		*cfg_inc_head(x, k, ep) = l[i].next;
	if (l[i].next >= 0)
		l[l[i].next].prev = l[i].prev;
	if (k == CFG_DK_QPS)
		x->ep[ep].nq--;
	else
		x->ep[ep].nm--;
}

/* The record at @from (in the list of endpoint @ep) is now at @to. */
static void
list_move(struct cfg_inc_ix *x, int k, uint32_t ep, uint32_t from, uint32_t to)
{
	struct cfg_inc_link *l = cfg_inc_links(x, k);

	l[to] = l[from];
	if (l[to].prev >= 0)
		l[l[to].prev].next = (int32_t)to;
	else
		*cfg_inc_head(x, k, ep) = (int32_t)to;
	if (l[to].next >= 0)
		l[l[to].next].prev = (int32_t)to;
}

static uint32_t
qp_pq_hash(const struct cfg *c, const struct cfg_qp *q)
{
	return cfg_inc_pqpn_hash(&c->endpoints[q->endpoint].host, q->pqpn);
}

static void
rec_key_hash(const struct cfg *c, int k, uint32_t i, uint32_t *h)
{
	struct cfg_inc_key key;

	cfg_inc_rec_key(c, k, i, &key);
	*h = cfg_inc_key_hash(&key);
}

/* Delete QP or MR @i of kind @k: unindex it, then fill its place with the last one. */
static void
rec_delete(struct cfg *c, int k, uint32_t i)
{
	struct cfg_inc_ix *x = c->inc;
	uint32_t *n = k == CFG_DK_QPS ? &c->n_qps : &c->n_mrs;
	uint32_t last = *n - 1, h;
	int ep = rec_endpoint(c, k, i);

	rec_key_hash(c, k, i, &h);
	cfg_htab_remove(&x->key[k], h, i);
	list_del(x, k, (uint32_t)ep, i);
	if (k == CFG_DK_QPS) {
		struct cfg_qp *q = &c->qps[i];

		cfg_htab_remove(&x->pq, qp_pq_hash(c, q), i);
		if (q->peer >= 0)
			c->qps[q->peer].peer = -1;
		c->tenants[q->tenant].n_qps--;
	}
	if (i != last) {
		rec_key_hash(c, k, last, &h);
		cfg_htab_move(&x->key[k], h, last, i);
		list_move(x, k, (uint32_t)rec_endpoint(c, k, last), last, i);
		if (k == CFG_DK_QPS) {
			struct cfg_qp *m = &c->qps[last];

			cfg_htab_move(&x->pq, qp_pq_hash(c, m), last, i);
			if (m->peer >= 0)
				c->qps[m->peer].peer = (int)i;
			c->qps[i] = *m;
		} else {
			c->mrs[i] = c->mrs[last];
		}
	}
	(*n)--;
}

/* Append the new QP or MR @r of kind @k; its endpoint exists. */
static void
rec_add(struct cfg *c, int k, const void *r)
{
	struct cfg_inc_ix *x = c->inc;
	uint32_t i = k == CFG_DK_QPS ? c->n_qps++ : c->n_mrs++, h;
	struct cfg_inc_key key;
	int64_t ep;

	if (k == CFG_DK_QPS)
		memcpy(&c->qps[i], r, sizeof(c->qps[i]));
	else
		memcpy(&c->mrs[i], r, sizeof(c->mrs[i]));
	cfg_inc_rec_key(c, k, i, &key);
	h = cfg_inc_key_hash(&key);
	key.id = 0;
	ep = cfg_inc_find(c, CFG_DK_ENDPOINTS, &key);
	cfg_htab_add(&x->key[k], h, i);
	cfg_inc_list_add(x, k, (uint32_t)ep, i);
	if (k == CFG_DK_QPS) {
		struct cfg_qp *q = &c->qps[i];

		q->endpoint = (int)ep;
		q->peer = -1;
		cfg_htab_add(&x->pq, qp_pq_hash(c, q), i);
		c->tenants[q->tenant].n_qps++;
	} else {
		c->mrs[i].endpoint = (int)ep;
	}
}

static int64_t
find_rec(const struct cfg *c, int k, const struct cfg_inc_change *ch)
{
	struct cfg_inc_key key;

	if (k == CFG_DK_ENDPOINTS)
		key = (struct cfg_inc_key){ ch->old.ep.tenant, ch->old.ep.vip, 0 };
	else if (k == CFG_DK_QPS)
		key = (struct cfg_inc_key){ ch->old.qp.tenant, ch->old.qp.vip, ch->old.qp.vqpn };
	else
		key = (struct cfg_inc_key){ ch->old.mr.tenant, ch->old.mr.vip, ch->old.mr.rkey };
	return cfg_inc_find(c, k, &key);
}

static void
ep_add(struct cfg *c, const struct cfg_endpoint *e)
{
	struct cfg_inc_ix *x = c->inc;
	uint32_t i = c->n_endpoints++;
	struct cfg_inc_key key = { e->tenant, e->vip, 0 };

	c->endpoints[i] = *e;
	x->ep[i] = (struct cfg_inc_eprefs){ -1, -1, 0, 0 };
	cfg_htab_add(&x->key[CFG_DK_ENDPOINTS], cfg_inc_key_hash(&key), i);
	for (uint32_t s = 0; s < e->n_xrc_srqs; s++)
		cfg_htab_add(&x->srq, cfg_inc_psrqn_hash(&e->host, e->xrc_srqs[s].psrqn), i * CFG_XRC_SRQS_MAX + s);
}

/* Delete endpoint @i, which no QP or MR names, and fill its place with the last one. */
static void
ep_delete(struct cfg *c, uint32_t i)
{
	struct cfg_inc_ix *x = c->inc;
	uint32_t last = c->n_endpoints - 1, h;
	const struct cfg_endpoint *e = &c->endpoints[i], *m = &c->endpoints[last];

	rec_key_hash(c, CFG_DK_ENDPOINTS, i, &h);
	cfg_htab_remove(&x->key[CFG_DK_ENDPOINTS], h, i);
	for (uint32_t s = 0; s < e->n_xrc_srqs; s++)
		cfg_htab_remove(&x->srq, cfg_inc_psrqn_hash(&e->host, e->xrc_srqs[s].psrqn), i * CFG_XRC_SRQS_MAX + s);
	if (i != last) {
		rec_key_hash(c, CFG_DK_ENDPOINTS, last, &h);
		cfg_htab_move(&x->key[CFG_DK_ENDPOINTS], h, last, i);
		for (uint32_t s = 0; s < m->n_xrc_srqs; s++)
			cfg_htab_move(&x->srq, cfg_inc_psrqn_hash(&m->host, m->xrc_srqs[s].psrqn),
				      last * CFG_XRC_SRQS_MAX + s, i * CFG_XRC_SRQS_MAX + s);
		x->ep[i] = x->ep[last];
		for (int32_t q = x->ep[i].qhead; q >= 0; q = x->ql[q].next)
			c->qps[q].endpoint = (int)i;
		for (int32_t r = x->ep[i].mhead; r >= 0; r = x->ml[r].next)
			c->mrs[r].endpoint = (int)i;
		c->endpoints[i] = *m;
	}
	c->n_endpoints--;
}

/*
 * A replaced QP leaves its (host, pqpn) and its peer first, for every QP of
 * the batch, so that two QPs may trade pqpns.
 */
static void
qp_unlink(struct cfg *c, uint32_t i)
{
	struct cfg_qp *q = &c->qps[i];

	cfg_htab_remove(&((struct cfg_inc_ix *)c->inc)->pq, qp_pq_hash(c, q), i);
	if (q->peer >= 0)
		c->qps[q->peer].peer = -1;
	q->peer = -1;
}

/* Overwrite the QP or MR @i of kind @k with @r; its key and endpoint stay. */
static void
rec_replace(struct cfg *c, int k, uint32_t i, const void *r)
{
	if (k == CFG_DK_QPS) {
		struct cfg_qp *q = &c->qps[i];
		int ep = q->endpoint;

		memcpy(q, r, sizeof(*q));
		q->endpoint = ep;
		q->peer = -1;
		cfg_htab_add(&((struct cfg_inc_ix *)c->inc)->pq, qp_pq_hash(c, q), i);
	} else {
		int ep = c->mrs[i].endpoint;

		memcpy(&c->mrs[i], r, sizeof(c->mrs[i]));
		c->mrs[i].endpoint = ep;
	}
}

/* A QP added or replaced and its peer name each other. */
static void
qp_link_peer(struct cfg *c, const struct cfg_qp *r)
{
	struct cfg_inc_key key = { r->tenant, r->vip, r->vqpn };
	int64_t i = cfg_inc_find(c, CFG_DK_QPS, &key), j;

	if (i < 0 || !r->has_peer || !r->has_peer_vqpn)
		return;         /* a half has no peer record */
	key = (struct cfg_inc_key){ r->tenant, r->peer_vip, r->peer_vqpn };
	j = cfg_inc_find(c, CFG_DK_QPS, &key);
	if (j < 0 || !cfg_qp_names_back(&c->qps[i], &c->qps[j]))
		return;         /* a learning tenant's end alone (cfg_qp_alone()) */
	c->qps[i].peer = (int)j;
	c->qps[j].peer = (int)i;
}

void
cfg_inc_commit(struct cfg *run, struct cfg_inc *inc)
{
	const struct cfg_inc_change *ch = inc->ch;
	uint32_t n = inc->n;

	cfg_inc_grow_apply(run, inc);
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].kind == CFG_DK_ENDPOINTS && ch[i].op == CFG_INC_ADD)
			ep_add(run, &ch[i].new.ep);
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].kind != CFG_DK_ENDPOINTS && ch[i].op == CFG_INC_DELETE)
			rec_delete(run, ch[i].kind, (uint32_t)find_rec(run, ch[i].kind, &ch[i]));
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].kind == CFG_DK_QPS && ch[i].op == CFG_INC_REPLACE)
			qp_unlink(run, (uint32_t)find_rec(run, CFG_DK_QPS, &ch[i]));
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].kind != CFG_DK_ENDPOINTS && ch[i].op == CFG_INC_REPLACE)
			rec_replace(run, ch[i].kind, (uint32_t)find_rec(run, ch[i].kind, &ch[i]), &ch[i].new);
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].kind != CFG_DK_ENDPOINTS && ch[i].op == CFG_INC_ADD)
			rec_add(run, ch[i].kind, &ch[i].new);
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].kind == CFG_DK_QPS && ch[i].op != CFG_INC_DELETE)
			qp_link_peer(run, &ch[i].new.qp);
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].kind == CFG_DK_ENDPOINTS && ch[i].op == CFG_INC_DELETE)
			ep_delete(run, (uint32_t)find_rec(run, CFG_DK_ENDPOINTS, &ch[i]));
}
