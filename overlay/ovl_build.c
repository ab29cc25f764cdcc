/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The whole build of an overlay from a configuration (ovl_build()): the
 * header over a new store, the records, their tables and the connections,
 * on top of the fill functions (ovl_header.c, ovl_fill.c); and the store's
 * end (ovl_free()) and its writer's lookup of any QP (ovl_lookup_qp()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl_int.h"

static int
table_init(struct ovl_table *t, uint32_t n)
{
	return ovl_tab_init(t, n, 50);
}

static void
table_free(struct ovl_table *t)
{
	free(t->slots);
}

/* Insert into a table nobody reads yet; returns the value already stored under @k, or OVL_NONE. */
static uint32_t
table_insert(struct ovl_table *t, const struct ovl_key *k, uint32_t val)
{
	uint32_t sig = ovl_key_hash(k) | 1u;

	for (uint32_t i = sig & t->mask;; i = (i + 1) & t->mask) {
		struct ovl_slot *s = &t->slots[i];

		if (s->sig == 0) {
			s->sig = sig;
			s->val = val;
			s->key = *k;
			t->n++;
			t->used++;
			return OVL_NONE;
		}
		if (s->sig == sig && ovl_key_eq(&s->key, k))
			return s->val;
	}
}

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); goto fail; } while (0)

/*
 * Room for the records of @n, with as many to spare for incremental changes.
 * A batch that finds no room takes the whole path, which builds again with
 * this room: doubling keeps the rebuilds of a growing table (learned
 * connections arriving by the thousand) to a constant amortised cost per
 * record, where a quarter to spare rebuilt every record about five times.
 * The spare slots are calloc'ed and never written before use.
 */
uint32_t
ovl_room(uint32_t n)
{
	return n + (n > 64 ? n : 64);
}

int
ovl_xrc_build(struct ovl *o, char *err, size_t err_len)
{
	const struct cfg *c = o->cfg;
	uint32_t n = 0, local = 0;
	struct ovl_key k;

	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		n += c->endpoints[i].n_xrc_srqs;
		local += o->endpoints[i].local ? c->endpoints[i].n_xrc_srqs : 0;
	}
	o->store->srqs.cap = ovl_room(n);
	o->srqs = calloc(o->store->srqs.cap, sizeof(*o->srqs));
	if (!o->srqs || table_init(&o->by_srq, n + local))
		FAIL("out of memory");
	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		const struct ovl_endpoint *e = &o->endpoints[i];

		for (uint32_t j = 0; j < c->endpoints[i].n_xrc_srqs; j++) {
			struct ovl_srq *q = &o->srqs[o->n_srqs];

			q->endpoint = i;
			q->vsrqn = c->endpoints[i].xrc_srqs[j].vsrqn;
			q->psrqn = c->endpoints[i].xrc_srqs[j].psrqn;
			k = ovl_key_make(e->vip.b, ovl_ip_len(&e->vip), e->tenant, q->vsrqn);
			if (table_insert(&o->by_srq, &k, o->n_srqs) != OVL_NONE)
				FAIL("endpoints[%u].xrc_srqs[%u].vsrqn: duplicate", i, j);
			k = ovl_key_make(e->host.b, ovl_ip_len(&e->host), OVL_SPACE_SRQ, q->psrqn);
			if (e->local && table_insert(&o->by_srq, &k, o->n_srqs) != OVL_NONE)
				FAIL("endpoints[%u].xrc_srqs[%u].psrqn: duplicate on this host", i, j);
			o->n_srqs++;
		}
	}
	return 0;
fail:
	return -1;
}

/*
 * The endpoint that sends to the half @cq: its peer's vip, when that
 * endpoint or the half's own is on this host (it has a connection here);
 * else OVL_NONE.  The endpoints are indexed already.
 */
static uint32_t
half_source(const struct ovl *o, const struct cfg_qp *cq)
{
	uint32_t se = ovl_lookup_endpoint(o, (uint32_t)cq->tenant, cq->peer_vip.b,
					  cq->peer_vip.ver == 6 ? 16 : 4);

	if (se == OVL_NONE || (!o->endpoints[se].local && !o->endpoints[cq->endpoint].local))
		return OVL_NONE;
	return se;
}

/* The connections of the halves (struct ovl_conn), after the configured ones. */
static int
halves_build(struct ovl *o, const struct cfg *c, char *where, size_t where_len, char *err, size_t err_len)
{
	for (uint32_t i = 0; i < c->n_qps; i++) {
		const struct cfg_qp *cq = &c->qps[i];
		struct ovl_conn *cn = &o->conns[o->n_conns];
		uint32_t se = cfg_qp_alone(cq) ? half_source(o, cq) : OVL_NONE;
		struct ovl_key k;

		if (se == OVL_NONE)
			continue;
		snprintf(where, where_len, "qps[%u]", i);
		if (ovl_half_fill(o, i, se, cq->rate.set ? cq->rate.bps : 0, cn, where, err, err_len) < 0)
			return -1;
		o->qps[i].conn = o->n_conns++;
		if (cn->rate_bps)
			o->tenants[cn->tenant].n_capped++;
		ovl_half_key(o, cn, &k);
		if (table_insert(cn->half == OVL_HALF_OUT ? &o->by_tenant : &o->by_fabric, &k,
				 OVL_V_CONN | o->qps[i].conn) != OVL_NONE) {
			snprintf(err, err_len, "%s: %s", where, cn->half == OVL_HALF_OUT ?
				 "its vip and vqpn are a configured connection's peer" : "pqpn: duplicate on this host");
			return -1;
		}
	}
	return 0;
}

struct ovl *
ovl_build(const struct cfg *c, char *err, size_t err_len)
{
	struct ovl *o = calloc(1, sizeof(*o));
	struct ovl_store *st = calloc(1, sizeof(*st));
	char where[48];
	struct ovl_key k, kf;

	if (!o || !st) {
		free(o);
		free(st);
		return NULL;
	}
	o->store = st;
	st->owner = o;
	o->cfg = c;
	o->n_endpoints = c->n_endpoints;
	o->n_qps = c->n_qps;
	st->eps.cap = ovl_room(c->n_endpoints);
	st->qps.cap = ovl_room(c->n_qps);
	st->mrs.cap = ovl_room(c->n_mrs);
	o->tenants = calloc(c->n_tenants + 1, sizeof(*o->tenants));
	o->ports = calloc(c->n_ports + 1, sizeof(*o->ports));
	o->endpoints = calloc(st->eps.cap, sizeof(*o->endpoints));
	o->qps = calloc(st->qps.cap, sizeof(*o->qps));
	o->mrs = calloc(st->mrs.cap, sizeof(*o->mrs));
	if (!o->tenants || !o->ports || !o->endpoints || !o->qps || !o->mrs)
		FAIL("out of memory");
	for (uint32_t i = 0; i < c->n_tenants; i++)
		o->tenants[i].slot = OVL_NONE;
	if (ovl_header_fill(o, c, err, err_len) < 0)
		goto fail;

	/*
	 * by_ep holds two keys per endpoint: its vip, and its host (OVL_EP_HOST).
	 * The tables are built at most half full: changes in place fill them up
	 * to three quarters (ovl_inc.c).
	 */
	if (table_init(&o->by_ep, 2 * c->n_endpoints) || table_init(&o->by_tenant, c->n_qps) ||
	    table_init(&o->by_fabric, c->n_qps) || table_init(&o->by_mr, c->n_mrs) ||
	    ovl_tab_init(&st->by_qp, c->n_qps, OVL_BY_QP_LOAD))
		FAIL("out of memory");

	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		struct ovl_endpoint *e = &o->endpoints[i];

		snprintf(where, sizeof(where), "endpoints[%u]", i);
		if (ovl_endpoint_fill(o, c, &c->endpoints[i], e, where, err, err_len) < 0)
			goto fail;
		k = ovl_key_make(e->vip.b, ovl_ip_len(&e->vip), e->tenant, 0);
		if (table_insert(&o->by_ep, &k, i) != OVL_NONE)
			FAIL("endpoints[%u]: duplicate vip", i);
		/* The first of the tenant's endpoints on each host speaks for the host (UD CNPs). */
		k = ovl_key_make(e->host.b, ovl_ip_len(&e->host), e->tenant, OVL_EP_HOST);
		table_insert(&o->by_ep, &k, i);
	}

	for (uint32_t i = 0; i < c->n_qps; i++) {
		const struct cfg_qp *cq = &c->qps[i];
		struct ovl_qp *q = &o->qps[i];

		ovl_qp_fill(o, cq, (uint32_t)cq->endpoint,
			    cq->has_peer ? ovl_lookup_endpoint(o, (uint32_t)cq->tenant, cq->peer_vip.b,
							       cq->peer_vip.ver == 6 ? 16 : 4) : OVL_NONE, q);
		q->peer = cq->peer >= 0 ? (uint32_t)cq->peer : OVL_NONE;
		o->tenants[q->tenant].n_qps++;
		if (q->local)
			o->tenants[q->tenant].n_local_qps++;
		k = ovl_qp_key(q->tenant, &o->endpoints[q->endpoint].vip, q->vqpn);
		table_insert(&st->by_qp, &k, i);
	}

	if (ovl_xrc_build(o, err, err_len) < 0)
		goto fail;

	/* Connections: each local QP with a peer, and each half with a local end. */
	uint32_t n_conns = 0;

	for (uint32_t i = 0; i < c->n_qps; i++)
		n_conns += (o->qps[i].local && o->qps[i].peer != OVL_NONE) ||
			   (cfg_qp_alone(&c->qps[i]) && half_source(o, &c->qps[i]) != OVL_NONE);
	st->conns.cap = ovl_room(n_conns);
	if (!(o->conns = calloc(st->conns.cap, sizeof(*o->conns))))
		FAIL("out of memory");
	for (uint32_t i = 0; i < c->n_qps; i++) {
		struct ovl_qp *l = &o->qps[i];
		struct ovl_conn *cn = &o->conns[o->n_conns];

		if (!l->local || l->peer == OVL_NONE)
			continue;
		snprintf(where, sizeof(where), "qps[%u]", i);
		if (ovl_conn_fill(o, i, l->peer, c->qps[i].rate.set ? c->qps[i].rate.bps : 0, cn, where, err,
				  err_len) < 0)
			goto fail;
		l->conn = o->n_conns++;
		if (cn->rate_bps)
			o->tenants[cn->tenant].n_capped++;
		ovl_conn_keys(o, cn, &k, &kf);
		if (table_insert(&o->by_tenant, &k, OVL_V_CONN | l->conn) != OVL_NONE)
			FAIL("qps[%u]: peer qp is the peer of two local QPs", i);
		if (table_insert(&o->by_fabric, &kf, OVL_V_CONN | l->conn) != OVL_NONE)
			FAIL("qps[%u].pqpn: duplicate on this host", i);
	}
	if (halves_build(o, c, where, sizeof(where), err, err_len) < 0)
		goto fail;

	/* UD QPs resolve to QP records, on both sides. */
	for (uint32_t i = 0; i < c->n_qps; i++) {
		struct ovl_qp *q = &o->qps[i];
		const struct ovl_endpoint *e = &o->endpoints[q->endpoint];

		if (q->type != CFG_QP_UD)
			continue;
		if (e->vip.ver != e->host.ver)
			FAIL("qps[%u].type: a UD QP on an endpoint whose vip and host are of different IP versions "
			     "is not supported", i);
		ovl_qp_ud_keys(o, q, &k, &kf);
		if (table_insert(&o->by_tenant, &k, OVL_V_QP | i) != OVL_NONE)
			FAIL("qps[%u]: duplicate vqpn", i);
		if (table_insert(&o->by_fabric, &kf, OVL_V_QP | i) != OVL_NONE)
			FAIL("qps[%u].pqpn: duplicate on host", i);
	}

	for (uint32_t i = 0; i < c->n_mrs; i++) {
		const struct cfg_mr *cm = &c->mrs[i];
		const struct ovl_endpoint *e = &o->endpoints[cm->endpoint];
		struct ovl_mr *m;

		if (!e->local)
			continue;
		m = &o->mrs[o->n_mrs];
		ovl_mr_fill(cm, (uint32_t)cm->endpoint, m);
		k = ovl_key_make(e->vip.b, ovl_ip_len(&e->vip), m->tenant, m->rkey);
		if (table_insert(&o->by_mr, &k, o->n_mrs) != OVL_NONE)
			FAIL("mrs[%u].rkey: duplicate", i);
		o->n_mrs++;
	}
	o->live_conns = o->n_conns;
	o->live_qps = o->n_qps;
	o->live_mrs = o->n_mrs;
	o->live_endpoints = o->n_endpoints;
	return o;
fail:
	ovl_free(o);
	return NULL;
}

void
ovl_free(struct ovl *o)
{
	if (!o)
		return;
	free(o->tenants);
	free(o->ports);
	/* An older header over the newest's store frees only its own part. */
	if (o->store && o->store->owner == o) {
		table_free(&o->by_tenant);
		table_free(&o->by_fabric);
		table_free(&o->by_mr);
		table_free(&o->by_ep);
		table_free(&o->by_srq);
		free(o->srqs);
		free(o->endpoints);
		free(o->qps);
		free(o->conns);
		free(o->mrs);
		ovl_store_free(o->store);
	}
	free(o);
}

void
ovl_store_free(struct ovl_store *st)
{
	struct ovl_slots *all[] = { &st->eps, &st->qps, &st->conns, &st->mrs, &st->srqs };

	for (unsigned i = 0; i < 5; i++) {
		free(all[i]->free);
		free(all[i]->retired);
	}
	free(st->by_qp.slots);
	free(st);
}

uint32_t
ovl_lookup_qp(const struct ovl *o, uint32_t tenant, const struct ovl_ip *vip, uint32_t vqpn)
{
	struct ovl_key k = ovl_qp_key(tenant, vip, vqpn);

	return ovl_table_lookup(&o->store->by_qp, &k);
}
