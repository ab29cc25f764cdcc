/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental changes to a running overlay, the bookkeeping (ovl_inc_int.h):
 * the batch's plan of table keys, the slots it takes and gives up, the marks
 * it keeps, and the commit that makes the plan.  ovl_inc.c decides what the
 * records are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl_inc_int.h"

static struct ovl_key
oi_mark_key(int what, uint32_t id)
{
	return (struct ovl_key){ { id, 0, (uint64_t)what } };
}

void
oi_mark(struct priv *p, int what, uint32_t id)
{
	struct ovl_key k = oi_mark_key(what, id);

	/* A full set only makes oi_marked() say no: the batch then takes the whole build. */
	if (p->marks.used * 4 < (p->marks.mask + 1) * 3)
		ovl_tab_set(&p->marks, &k, 1);
	else
		p->marks_full = true;
}

bool
oi_marked(struct priv *p, int what, uint32_t id)
{
	struct ovl_key k = oi_mark_key(what, id);

	return ovl_tab_find(&p->marks, &k) != NULL;
}

int
oi_grow(void **p, uint32_t *cap, uint32_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	uint32_t c = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, c * sz);

	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

struct ovl_table *
oi_table_of(struct ovl *h, int t)
{
	switch (t) {
	case T_TENANT: return &h->by_tenant;
	case T_FABRIC: return &h->by_fabric;
	case T_MR: return &h->by_mr;
	case T_EP: return &h->by_ep;
	case T_SRQ: return &h->by_srq;
	default: return &h->store->by_qp;
	}
}

/* Plan @k of table @t to hold @val (OVL_NONE: to go). */
int
oi_plan(struct priv *p, int t, const struct ovl_key *k, uint32_t val)
{
	struct ovl_slot *s = ovl_tab_find(&p->map[t], k);

	if (s) {
		p->ops[s->val].val = val;
		return 0;
	}
	if (p->map[t].used * 4 >= (p->map[t].mask + 1) * 3 || oi_grow((void **)&p->ops, &p->cap_ops, p->n_ops,
								     sizeof(*p->ops)))
		return -1;
	p->ops[p->n_ops] = (struct plan_op){ .t = (uint8_t)t, .k = *k, .val = val };
	ovl_tab_set(&p->map[t], k, p->n_ops++);
	return 0;
}

/* The value @k of table @t will have: planned, else as it runs. */
uint32_t
oi_planned(struct priv *p, struct ovl *h, int t, const struct ovl_key *k)
{
	struct ovl_slot *s = ovl_tab_find(&p->map[t], k);

	if (s)
		return p->ops[s->val].val;
	s = ovl_tab_find(oi_table_of(h, t), k);
	return s ? s->val : OVL_NONE;
}

struct ovl_slots *
oi_slots_of(struct ovl *h, int kind)
{
	struct ovl_store *st = h->store;

	return kind == K_EP ? &st->eps : kind == K_QP ? &st->qps : kind == K_CONN ? &st->conns :
	       kind == K_MR ? &st->mrs : &st->srqs;
}

static uint32_t *
oi_count_of(struct ovl *h, int kind)
{
	return kind == K_EP ? &h->n_endpoints : kind == K_QP ? &h->n_qps : kind == K_CONN ? &h->n_conns :
	       kind == K_MR ? &h->n_mrs : &h->n_srqs;
}

/* A slot of @kind nobody reaches, or OVL_NONE when the store is full. */
uint32_t
oi_slot_take(struct priv *p, struct ovl *h, int kind)
{
	struct ovl_slots *s = oi_slots_of(h, kind);
	uint32_t *n = oi_count_of(h, kind), id;

	if (s->n_free)
		id = s->free[--s->n_free];
	else if (*n < s->cap)
		id = *n;
	else
		return OVL_NONE;
	if (id >= *n)
		*n = id + 1;
	if (oi_grow((void **)&p->alloc[kind], &p->cap_alloc[kind], p->n_alloc[kind], sizeof(uint32_t)))
		return OVL_NONE;
	p->alloc[kind][p->n_alloc[kind]++] = id;
	if (kind == K_QP)
		oi_mark(p, M_NEW_QP, id);
	return id;
}

/* Slot @id of @kind is given up: every walk skips it from now on. */
void
oi_set_retired(struct ovl *h, int kind, uint32_t id)
{
	switch (kind) {
	case K_EP: h->endpoints[id].retired = true; break;
	case K_QP: h->qps[id].retired = true; break;
	case K_CONN: h->conns[id].retired = true; break;
	case K_MR: h->mrs[id].retired = true; break;
	default: h->srqs[id].retired = true; break;
	}
}

/* @id joins the free list (room for every slot of the store). */
void
oi_free_push(struct ovl_slots *s, uint32_t id)
{
	if (!s->free && !(s->free = malloc(sizeof(*s->free) * (s->cap ? s->cap : 1))))
		return; /* the slot is lost, never reused */
	s->free[s->n_free++] = id;
}

/* Each slot is retired once: by its record's own removal, or by its L's peer changing. */
int
oi_retire(struct priv *p, int kind, uint32_t id)
{
	if (oi_grow((void **)&p->retire[kind], &p->cap_retire[kind], p->n_retire[kind], sizeof(uint32_t)))
		return -1;
	p->retire[kind][p->n_retire[kind]++] = id;
	return 0;
}

bool
oi_retiring(const struct priv *p, int kind, uint32_t id)
{
	for (uint32_t i = 0; i < p->n_retire[kind]; i++)
		if (p->retire[kind][i] == id)
			return true;
	return false;
}

int
oi_conn_push(struct ovl_inc *oi, uint32_t from, uint32_t to)
{
	if (oi_grow((void **)&oi->conns, &oi->cap_conns, oi->n_conns, sizeof(*oi->conns)))
		return -1;
	oi->conns[oi->n_conns++] = (struct ovl_inc_conn){ from, to };
	return 0;
}

int
oi_priv_init(struct priv *p, const struct ovl *h, uint32_t n)
{
	for (int t = 0; t < T_N; t++)
		if (ovl_tab_init(&p->map[t], 4 * n + 16, 50))
			return -1;
	(void)h;
	return ovl_tab_init(&p->marks, 4 * n + 16, 50);
}

/* Would the planned keys overfill a table?  The lcores' tables stay at most 3/4 full, by_qp 7/8. */
bool
oi_tables_full(struct priv *p, struct ovl *h)
{
	uint32_t add[T_N] = { 0 };

	for (uint32_t i = 0; i < p->n_ops; i++)
		add[p->ops[i].t] += p->ops[i].val != OVL_NONE;
	for (int t = 0; t < T_N; t++) {
		const struct ovl_table *tb = oi_table_of(h, t);
		uint64_t cap = (uint64_t)tb->mask + 1;

		if ((uint64_t)(tb->used + add[t]) * 8 > cap * (t == T_QP ? 7 : 6))
			return true;
	}
	return false;
}

struct ovl *
ovl_inc_commit(struct ovl_inc *oi)
{
	struct priv *p = oi->priv;
	struct ovl *h = oi->hdr;

	/* New records are complete: their keys go in, old keys go, shared keys swap values. */
	for (uint32_t i = 0; i < p->n_ops; i++) {
		struct ovl_table *t = oi_table_of(h, p->ops[i].t);

		if (p->ops[i].val == OVL_NONE)
			ovl_tab_del(t, &p->ops[i].k);
		else
			ovl_tab_set(t, &p->ops[i].k, p->ops[i].val);
	}
	for (uint32_t f = 0; f < p->n_fix; f++) {
		struct ovl_qp *q = &h->qps[p->fix[f].qp];

		/* Its pair came (a new connection, or none when it is remote) or went (its half, or none). */
		__atomic_store_n(&q->peer, p->fix[f].peer, __ATOMIC_RELEASE);
		__atomic_store_n(&q->conn, p->conn_of_new[f], __ATOMIC_RELEASE);
	}
	for (int kind = 0; kind < 5; kind++) {
		struct ovl_slots *s = oi_slots_of(h, kind);

		for (uint32_t i = 0; i < p->n_retire[kind]; i++) {
			uint32_t id = p->retire[kind][i];

			oi_set_retired(h, kind, id);
			if (oi_grow((void **)&s->retired, &s->cap_retired, s->n_retired, sizeof(uint32_t)) == 0)
				s->retired[s->n_retired++] = id;
			/* else the slot is lost, not reused while it may be read */
		}
		p->n_alloc[kind] = 0;   /* taken for good */
	}
	h->store->owner = h;
	oi->hdr = NULL;
	return h;
}

void
ovl_inc_abort(struct ovl_inc *oi)
{
	struct priv *p = oi->priv;
	struct ovl *h = oi->hdr;

	if (p && h && h->store) {
		for (int kind = 0; kind < 5; kind++) {
			struct ovl_slots *s = oi_slots_of(h, kind);

			/* Back to the free list, skipped by walks until taken again. */
			for (uint32_t i = 0; i < p->n_alloc[kind]; i++) {
				uint32_t id = p->alloc[kind][i];

				oi_set_retired(h, kind, id);
				oi_free_push(s, id);
			}
			p->n_alloc[kind] = 0;
		}
	}
	if (h) {
		free(h->tenants);
		free(h->ports);
		free(h);
	}
	oi->hdr = NULL;
}

void
ovl_inc_release(struct ovl_inc *oi)
{
	struct priv *p = oi->priv;

	if (p) {
		for (int t = 0; t < T_N; t++)
			free(p->map[t].slots);
		for (int k = 0; k < 5; k++) {
			free(p->alloc[k]);
			free(p->retire[k]);
		}
		free(p->ops);
		free(p->fix);
		free(p->conn_of_new);
		free(p->marks.slots);
		free(p);
	}
	free(oi->conns);
	memset(oi, 0, sizeof(*oi));
}

void
ovl_inc_own(struct ovl *h)
{
	h->store->owner = h;
}

void
ovl_inc_reclaim(struct ovl *o)
{
	for (int kind = 0; kind < 5; kind++) {
		struct ovl_slots *s = oi_slots_of(o, kind);

		for (uint32_t i = 0; i < s->n_retired; i++)
			oi_free_push(s, s->retired[i]);
		s->n_retired = 0;
	}
}
