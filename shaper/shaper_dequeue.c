/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's dequeue side (docs/shaper.md): advance the timing wheel to
 * `now`, so that connections whose pacing time has come join their
 * tenant's run list and blocked tenants whose tokens are back become
 * active; then serve the active tenants in round robin.  A tenant first
 * admits, while its admission bucket has tokens, the connection earliest in
 * the fair calendar (charging a whole message at its first packet); then it
 * sends the heads of its run list while its transmission bucket allows.
 * After a send the connection's pacing time advances by bytes / rate and it
 * goes back on the wheel.
 *
 * Each step is O(1) whatever the number of connections.
 */
#include "shaper.h"
#include "shaper_sched.h"

/* A biased tenant time, rounded up to ticks. */
static inline uint64_t
tnow_ceil_ticks(shaper_u128 v)
{
	return (uint64_t)((v - SHAPER_TBIAS + 0xffffffffu) >> 32);
}

static inline uint32_t
run_pop(struct shaper *sh, struct shaper_tenant *t)
{
	uint32_t ci = t->run_head;

	t->run_head = sh->conns[ci].link;
	if (t->run_head == SHAPER_NIL)
		t->run_tail = SHAPER_NIL;
	else
		__builtin_prefetch(&sh->conns[t->run_head]);
	return ci;
}

/* How many connections ahead admission prefetches; half as far for their
 * cursor items, which need the connection first. */
#define SHAPER_FQ_PREFETCH	8

/* The id `ahead` places after the first of a bucket, or SHAPER_NIL. */
static inline uint32_t
fair_peek(const struct shaper *sh, uint32_t k, unsigned int ahead)
{
	const struct shw_chunk *ch = &sh->fq_chunks[k];
	unsigned int i = ch->rd + ahead;

	if (i < ch->n)
		return ch->id[i];
	if (ch->next == SHW_NIL)
		return SHAPER_NIL;
	i -= ch->n;
	ch = &sh->fq_chunks[ch->next];
	return i < ch->n ? ch->id[i] : SHAPER_NIL;
}

/*
 * The next connection to admit, or SHAPER_NIL after re-filing a far one.
 * A bucket is a FIFO of chunks of ids, so the connections to come can be
 * prefetched before they are needed: threaded through the connections,
 * each pop would wait for one cold cache line after another.
 */
static inline uint32_t
fair_pop(struct shaper *sh, struct shaper_tenant *t)
{
	unsigned int base = (unsigned int)t->fq_v & (SHAPER_FQ_BUCKETS - 1);
	uint64_t rot = base ? (t->fq_map >> base) | (t->fq_map << (64 - base)) : t->fq_map;
	struct shw_chunk *ch;
	struct shaper_conn *c;
	unsigned int slot;
	uint32_t ci, k, pf;

	t->fq_v += (unsigned int)__builtin_ctzll(rot);
	slot = (unsigned int)t->fq_v & (SHAPER_FQ_BUCKETS - 1);
	k = t->fq_head[slot];
	ch = &sh->fq_chunks[k];
	ci = ch->id[ch->rd++];
	if (ch->rd == ch->n) {
		/* Chunk used up: free it (a last chunk too; it is empty). */
		t->fq_head[slot] = ch->next;
		if (ch->next == SHW_NIL) {
			t->fq_tail[slot] = SHW_NIL;
			t->fq_map &= ~(1ull << slot);
		}
		ch->next = sh->fq_free;
		sh->fq_free = k;
	} else {
		pf = fair_peek(sh, k, SHAPER_FQ_PREFETCH - 1);
		if (pf != SHAPER_NIL)
			__builtin_prefetch(&sh->conns[pf]);
		pf = fair_peek(sh, k, SHAPER_FQ_PREFETCH / 2 - 1);
		if (pf != SHAPER_NIL && sh->conns[pf].cursor != SHAPER_NIL)
			__builtin_prefetch(&sh->items[sh->conns[pf].cursor]);
	}
	c = &sh->conns[ci];
	c->state &= ~SHAPER_CS_FAIR;
	if ((c->vfinish >> sh->qshift) > t->fq_v) {
		if (t->fq_map == 0) {
			/* Alone: the virtual time moves to it. */
			t->fq_v = c->vfinish >> sh->qshift;
			return ci;
		}
		fair_push(sh, t, ci);
		return SHAPER_NIL;
	}
	return ci;
}

/* Admit the unit at the cursor of connection ci and what follows it free. */
static void
conn_admit(struct shaper *sh, struct shaper_tenant *t, uint32_t ci, shaper_u128 tnow)
{
	struct shaper_conn *c = &sh->conns[ci];
	uint32_t x = c->cursor;

	item_charge(t, c, &sh->items[x], tnow);
	x = sh->items[x].next;
	while (x != SHAPER_NIL && item_prepaid(c, &sh->items[x]))
		x = sh->items[x].next;
	c->cursor = x;
	if (conn_tx(c) == SHAPER_CONN_HOLD)
		conn_schedule(sh, t, ci);
	fair_offer(sh, t, ci);
}

/* Hand the head item of connection `ci` to the caller. */
static inline void
conn_send(struct shaper *sh, struct shaper_tenant *t, uint32_t ci, uint64_t now,
	shaper_u128 now_fp, shaper_u128 tnow, struct shaper_out *o)
{
	struct shaper_conn *c = &sh->conns[ci];
	uint32_t ii = c->head;
	struct shaper_item *it = &sh->items[ii];
	uint32_t bytes = it->bytes;

	if (it->next != SHAPER_NIL)
		__builtin_prefetch(&sh->items[it->next]);
	c->head = it->next;
	if (c->head == SHAPER_NIL)
		c->tail = SHAPER_NIL;
	c->qbytes -= bytes;
	c->qitems--;
	t->qbytes -= bytes;
	o->cookie = it->cookie;
	o->conn = ci;
	o->bytes = bytes;
	o->conn_queued = c->qbytes;
	o->flags = it->flags & SHAPER_IF_CALLER;
	c->ahead -= bytes;
	it->next = sh->free_item;
	sh->free_item = ii;
	sh->items_used--;

	if (t->cpb != 0)
		t->tx_ts = u128_max(t->tx_ts, tnow - t->burst_fp) +
			(shaper_u128)bytes * t->cpb;
	t->deq_pkts++;
	t->deq_bytes += bytes;
	t->win_bytes += bytes;
	if (t->full || t->dropping)
		tenant_bp_update(sh, t, now);

	if (c->cpb != 0)
		conn_ts_set(c, u128_max(conn_ts(c), u128_sub_sat(now_fp, sh->slack_fp)) +
			(shaper_u128)bytes * c->cpb);
	if (c->qitems == 0) {
		conn_tx_set(c, SHAPER_CONN_IDLE);
	} else if (c->head == c->cursor) {
		/* Everything before the cursor is admitted, nothing after. */
		conn_tx_set(c, SHAPER_CONN_HOLD);
	} else if (c->cpb == 0 || shw_due(&sh->wheel, c->next_ts)) {
		run_push(sh, t, ci);
	} else {
		conn_tx_set(c, SHAPER_CONN_WHEEL);
		shw_insert(&sh->wheel, ci, c->next_ts, &c->link);
	}
	/* Room, perhaps, to admit more. */
	fair_offer(sh, t, ci);
}

enum serve_result {
	SERVE_STAY,		/* Visit over, more to send. */
	SERVE_IDLE,		/* Nothing due. */
	SERVE_BLOCK,		/* A bucket is empty until t->wake. */
};

/*
 * One visit of a tenant.  Admission and transmission are two buckets with
 * the same rate.  Admission comes first and runs ahead: whenever its bucket
 * has tokens, the connection first in fair order is charged for its next
 * message (or packet), while it has less than fq_window bytes admitted
 * ahead of what it has sent.  Were admission to wait for transmission, it
 * would starve while pre-paid packets keep the transmission bucket busy
 * (its tokens would overflow and be lost), and a connection would lose its
 * turn while its previous message is still on its way.  The window is the
 * largest charge seen, so that a connection of small messages can take as
 * many bytes per turn as one of large messages.  Transmission then sends the
 * heads of the run list in round robin, each as the transmission bucket
 * allows.
 */
static enum serve_result
tenant_serve(struct shaper *sh, struct shaper_tenant *t, uint64_t now,
	struct shaper_out *out, unsigned int *np, unsigned int max)
{
	shaper_u128 now_fp = SHAPER_FP(now);
	shaper_u128 tnow = SHAPER_TNOW(now);
	unsigned int n = *np;
	unsigned int budget = sh->visit_pkts;
	bool capped = t->cpb != 0;
	enum serve_result r;

	for (;;) {
		uint32_t ci;

		if (n == max || budget == 0) {
			r = SERVE_STAY;
			break;
		}
		if (t->fq_map != 0 && (!capped || tenant_adm_ready(t, tnow))) {
			ci = fair_pop(sh, t);
			if (ci != SHAPER_NIL)
				conn_admit(sh, t, ci, tnow);
			continue;
		}
		if (t->run_head == SHAPER_NIL) {
			if (t->fq_map == 0) {
				r = SERVE_IDLE;
			} else {
				t->wake = tnow_ceil_ticks(t->adm_ts);
				t->block = SHAPER_BLOCK_ADM;
				r = SERVE_BLOCK;
			}
			break;
		}
		if (capped && t->tx_ts > tnow) {
			t->wake = tnow_ceil_ticks(t->tx_ts);
			t->block = SHAPER_BLOCK_TX;
			r = SERVE_BLOCK;
			break;
		}
		ci = run_pop(sh, t);
		conn_send(sh, t, ci, now, now_fp, tnow, &out[n++]);
		budget--;
	}
	*np = n;
	return r;
}

/* A wheel entry whose slot has come. */
static inline void
wheel_fire(struct shaper *sh, uint32_t id, uint64_t now_idx)
{
	struct shaper_wheel *w = &sh->wheel;

	if (id < sh->n_conns) {
		struct shaper_conn *c = &sh->conns[id];
		struct shaper_tenant *t;

		if ((c->next_ts >> w->gshift) > now_idx) {
			/* Filed at the horizon; not due yet. */
			shw_insert(w, id, c->next_ts, &c->link);
			return;
		}
		__builtin_prefetch(&sh->items[c->head]);
		t = &sh->tenants[c->tenant];
		run_push(sh, t, id);
		tenant_kick(sh, t);
	} else {
		struct shaper_tenant *t = &sh->tenants[id - sh->n_conns];

		if (t->state != SHAPER_TENANT_WHEEL)
			return;		/* Kicked while its slot was popped. */
		if ((t->wake >> w->gshift) > now_idx) {
			shw_insert(w, id, t->wake, &t->wpos);
			return;
		}
		tenant_activate(sh, t);
	}
}

/* Due entities are gathered in batches of this many before they are used. */
#define SHAPER_FIRE_BATCH	64

static void
wheel_fire_batch(struct shaper *sh, const uint32_t *ids, unsigned int n,
	uint64_t now_idx)
{
	for (unsigned int i = 0; i < n; i++)
		wheel_fire(sh, ids[i], now_idx);
}

/*
 * Pop every slot up to `now`.  The ids of due entities are copied out of the
 * chunks first, each entity prefetched as it is copied, and only then used:
 * a slot's entities are unrelated cache lines, and this way their misses
 * overlap instead of following one another.
 */
static void
wheel_advance(struct shaper *sh, uint64_t now)
{
	struct shaper_wheel *w = &sh->wheel;
	uint64_t now_idx = now >> w->gshift;
	uint32_t batch[SHAPER_FIRE_BATCH];
	unsigned int nb = 0;
	uint64_t idx;

	if (now_idx < w->cur)
		return;
	if (now_idx - w->cur >= w->nslots)
		w->cur = now_idx - w->nslots + 1;
	while (w->cur <= now_idx && shw_find(w, w->cur, now_idx, &idx)) {
		uint32_t k;

		w->cur = idx + 1;
		k = shw_detach(w, idx);
		/* The slot's tenants are out of the wheel's lists from now on:
		 * a connection fired before them may kick them (tenant_kick). */
		for (uint32_t x = k; x != SHW_NIL; x = w->chunks[x].next)
			for (unsigned int i = 0; i < w->chunks[x].n; i++)
				if (w->chunks[x].id[i] >= sh->n_conns)
					sh->tenants[w->chunks[x].id[i] - sh->n_conns].wpos = SHW_NIL;
		while (k != SHW_NIL) {
			struct shw_chunk *ch = &w->chunks[k];
			uint32_t next = ch->next;

			for (unsigned int i = 0; i < ch->n; i++) {
				uint32_t id = ch->id[i];

				if (id < sh->n_conns)
					__builtin_prefetch(&sh->conns[id]);
				if (nb == SHAPER_FIRE_BATCH) {
					wheel_fire_batch(sh, batch, nb, now_idx);
					nb = 0;
				}
				batch[nb++] = id;
			}
			shw_chunk_free(w, k);
			k = next;
		}
	}
	wheel_fire_batch(sh, batch, nb, now_idx);
	w->cur = now_idx + 1;
}

unsigned int
shaper_dequeue(struct shaper *sh, uint64_t now, struct shaper_out *out,
	unsigned int max)
{
	unsigned int n = 0;

	wheel_advance(sh, now);
	while (n < max && sh->active_head != SHAPER_NIL) {
		uint32_t tid = sh->active_head;
		struct shaper_tenant *t = &sh->tenants[tid];
		enum serve_result r;

		sh->active_head = t->anext;
		if (sh->active_head == SHAPER_NIL)
			sh->active_tail = SHAPER_NIL;
		r = tenant_serve(sh, t, now, out, &n, max);
		tenant_ewma_tick(sh, t, now);
		if (r == SERVE_STAY) {
			tenant_activate(sh, t);
		} else if (r == SERVE_BLOCK) {
			t->state = SHAPER_TENANT_WHEEL;
			shw_insert(&sh->wheel, sh->n_conns + tid, t->wake, &t->wpos);
		} else {
			t->state = SHAPER_TENANT_IDLE;
		}
	}
	return n;
}

uint64_t
shaper_next_deadline(const struct shaper *sh, uint64_t now)
{
	const struct shaper_wheel *w = &sh->wheel;
	uint64_t idx, at;

	if (sh->active_head != SHAPER_NIL)
		return now;
	if (!shw_find(w, w->cur, w->cur + w->nslots - 1, &idx))
		return UINT64_MAX;
	at = idx << w->gshift;
	return at < now ? now : at;
}
