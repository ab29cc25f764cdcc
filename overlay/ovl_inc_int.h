/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What ovl_inc.c (the records a batch changes) and ovl_inc_plan.c (the plan
 * of table keys, the slots, the commit) share.  Private to overlay/.
 */
#ifndef OVL_INC_INT_H
#define OVL_INC_INT_H

#include "ovl_inc.h"
#include "ovl_int.h"

enum { T_TENANT, T_FABRIC, T_MR, T_EP, T_SRQ, T_QP, T_N };

struct plan_op {
	uint8_t t;
	struct ovl_key k;
	uint32_t val;
};

/* A running local QP whose connection is rebuilt because its peer changed slot. */
struct fixup {
	uint32_t qp, peer;
};

struct priv {
	struct plan_op *ops;
	uint32_t n_ops, cap_ops;
	struct ovl_table map[T_N];      /* key -> index in ops */
	uint32_t *alloc[5], n_alloc[5], cap_alloc[5];   /* slots taken, by kind */
	uint32_t *retire[5], n_retire[5], cap_retire[5]; /* slots to give up at commit */
	struct fixup *fix;
	uint32_t n_fix, cap_fix;
	uint32_t *conn_of_new;          /* for fixups: the new conn slot, by fixup index */
	struct ovl_table marks;         /* QP slots of this batch, connections carried on (mark()) */
	bool marks_full;
};

enum { K_EP, K_QP, K_CONN, K_MR, K_SRQ };

/* Slots the batch marks, in a set the size of the batch. */
enum { M_NEW_QP = 1, M_CARRIED = 2 };

/* Grow the array *@p of *@cap elements of @sz bytes to hold more than @n; -1 without memory. */
int oi_grow(void **p, uint32_t *cap, uint32_t n, size_t sz);

/* Mark slot @id for @what; is it marked? */
void oi_mark(struct priv *p, int what, uint32_t id);
bool oi_marked(struct priv *p, int what, uint32_t id);

/* The table @t (T_*) of header @h, and the slots of record kind @kind (K_*). */
struct ovl_table *oi_table_of(struct ovl *h, int t);
struct ovl_slots *oi_slots_of(struct ovl *h, int kind);

/* Plan @k of table @t to hold @val (OVL_NONE: to go); the value it will have. */
int oi_plan(struct priv *p, int t, const struct ovl_key *k, uint32_t val);
uint32_t oi_planned(struct priv *p, struct ovl *h, int t, const struct ovl_key *k);

/* A slot of @kind nobody reaches, or OVL_NONE; one given up at commit; is it? */
uint32_t oi_slot_take(struct priv *p, struct ovl *h, int kind);
int oi_retire(struct priv *p, int kind, uint32_t id);
bool oi_retiring(const struct priv *p, int kind, uint32_t id);
void oi_set_retired(struct ovl *h, int kind, uint32_t id);
void oi_free_push(struct ovl_slots *s, uint32_t id);

/* A connection the batch touched (ovl_inc.conns). */
int oi_conn_push(struct ovl_inc *oi, uint32_t from, uint32_t to);

/* The batch's own state for @n changes; would the plan overfill a table? */
int oi_priv_init(struct priv *p, const struct ovl *h, uint32_t n);
bool oi_tables_full(struct priv *p, struct ovl *h);

#endif /* OVL_INC_INT_H */
