/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's state transitions shared by enqueue, dequeue and
 * configuration: tenants entering and leaving the active round robin,
 * queue limits, the run list of due connections, a connection joining its
 * tenant's fair calendar, admission charging, and a connection whose head is
 * admitted going to the wheel or to the run list.  All inline: they run per
 * packet.  Internal, like shaper_state.h.
 */
#ifndef SHAPER_SCHED_H
#define SHAPER_SCHED_H

#include "shaper_state.h"

/* Wheel entities: connection ids, then tenants after them. */

static inline uint32_t *
entity_pos(struct shaper *sh, uint32_t id)
{
	if (id < sh->n_conns)
		return &sh->conns[id].link;
	return &sh->tenants[id - sh->n_conns].wpos;
}

static inline void
wheel_remove(struct shaper *sh, uint32_t pos)
{
	uint32_t moved_pos = 0;
	uint32_t moved = shw_remove(&sh->wheel, pos, &moved_pos);

	if (moved != SHW_NIL)
		*entity_pos(sh, moved) = moved_pos;
}

/* Tenants. */

static inline void
tenant_activate(struct shaper *sh, struct shaper_tenant *t)
{
	uint32_t tid = (uint32_t)(t - sh->tenants);

	t->state = SHAPER_TENANT_ACTIVE;
	t->anext = SHAPER_NIL;
	if (sh->active_tail == SHAPER_NIL)
		sh->active_head = tid;
	else
		sh->tenants[sh->active_tail].anext = tid;
	sh->active_tail = tid;
}

/*
 * A connection of tenant `t` became due.  An idle tenant becomes active.  A
 * tenant blocked on admission may now have something pre-paid to send, so it
 * is woken to look; one blocked on transmission stays blocked.  A tenant
 * whose slot is being popped (wpos is SHW_NIL) is no longer in the wheel's
 * lists; its entry is skipped when reached.
 */
static inline void
tenant_kick(struct shaper *sh, struct shaper_tenant *t)
{
	if (t->state == SHAPER_TENANT_IDLE) {
		tenant_activate(sh, t);
	} else if (t->state == SHAPER_TENANT_WHEEL && t->block == SHAPER_BLOCK_ADM) {
		if (t->wpos != SHW_NIL)
			wheel_remove(sh, t->wpos);
		tenant_activate(sh, t);
	}
}

/* Queue limits, backpressure and watchdog, evaluated at `now`. */
static inline void
tenant_bp_update(struct shaper *sh, struct shaper_tenant *t, uint64_t now)
{
	bool full = t->qbytes >= t->qlimit;

	if (full != t->full) {
		if (full)
			t->full_since = now;
		else if (now > t->full_since)
			t->bp_ticks += now - t->full_since;
		t->full = full;
	}
	if (t->full && !t->dropping && now >= t->full_since &&
	    now - t->full_since >= sh->wd_ticks) {
		t->dropping = true;
		t->wd_trips++;
	}
	if (t->dropping && t->qbytes <= t->qlimit / 2)
		t->dropping = false;
}

static inline void
tenant_ewma_tick(struct shaper *sh, struct shaper_tenant *t, uint64_t now)
{
	if (now >= t->win_start && now - t->win_start >= sh->ewma_ticks) {
		t->ewma_bps = shaper_ewma_fold(sh, t, now, &t->ewma_valid);
		t->win_start = now;
		t->win_bytes = 0;
	}
}

/* The run list: FIFO of due connections, threaded through conn.link. */

static inline void
run_push(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	sh->conns[ci].link = SHAPER_NIL;
	conn_tx_set(&sh->conns[ci], SHAPER_CONN_RUN);
	if (t->run_tail == SHAPER_NIL)
		t->run_head = ci;
	else
		sh->conns[t->run_tail].link = ci;
	t->run_tail = ci;
}


/*
 * The fair calendar.  Each connection has a virtual finish time: the bytes
 * it was admitted.  Connections with something to admit wait in the bucket
 * of their finish time; the tenant admits from the earliest non-empty
 * bucket, FIFO within it.  That is deficit round robin with a quantum of
 * 1 << qshift bytes, except that rounds in which nobody could send are
 * skipped in one step instead of being walked.
 *
 * A connection (re)joins no earlier than the tenant's virtual time fq_v, so
 * time spent out of the calendar earns no credit.  It is out of the calendar
 * only when it has nothing to admit (idle, as far as admission goes) or has
 * a whole window admitted ahead of what it sent, that is when its own pace
 * (cap, DCQCN) is what holds it back: then it is not owed anything, and
 * what it leaves goes to the others.
 */
static inline void
fair_push(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	struct shaper_conn *c = &sh->conns[ci];
	uint64_t floor = t->fq_v << sh->qshift;
	struct shw_chunk *ch;
	uint32_t slot, k;
	uint64_t b;

	if (c->vfinish < floor)
		c->vfinish = floor;
	b = c->vfinish >> sh->qshift;
	if (b - t->fq_v >= SHAPER_FQ_BUCKETS)
		b = t->fq_v + SHAPER_FQ_BUCKETS - 1;
	slot = (uint32_t)b & (SHAPER_FQ_BUCKETS - 1);
	c->state |= SHAPER_CS_FAIR;
	k = t->fq_tail[slot];
	if (k == SHW_NIL || sh->fq_chunks[k].n == SHW_IDS) {
		/* The pool is sized so that this cannot fail (shaper_layout). */
		uint32_t nk = sh->fq_free;

		ch = &sh->fq_chunks[nk];
		sh->fq_free = ch->next;
		ch->next = SHW_NIL;
		ch->n = 0;
		ch->rd = 0;
		if (k == SHW_NIL)
			t->fq_head[slot] = nk;
		else
			sh->fq_chunks[k].next = nk;
		t->fq_tail[slot] = nk;
		k = nk;
	}
	ch = &sh->fq_chunks[k];
	ch->id[ch->n++] = ci;
	t->fq_map |= 1ull << slot;
}

/* Can connection c ask for admission?  Then make sure it is in the calendar. */
static inline void
fair_offer(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	struct shaper_conn *c = &sh->conns[ci];

	if (c->cursor == SHAPER_NIL || (c->state & SHAPER_CS_FAIR) ||
	    c->ahead >= t->fq_window)
		return;
	fair_push(sh, t, ci);
	if (t->state == SHAPER_TENANT_IDLE)
		tenant_activate(sh, t);
}

/* Admission. */

/*
 * Admit what needs no charge at item ii: the rest of an open message (up to
 * its LAST), and exempt packets.  Returns false at an item that needs a
 * charge.  A first packet while a message is open starts a new one (a
 * retransmission from its start): the open one is over.
 */
static inline bool
item_prepaid(struct shaper_conn *c, struct shaper_item *it)
{
	if ((c->flags & SHAPER_CF_MSG_OPEN) && !(it->flags & SHAPER_PKT_FIRST)) {
		if (it->flags & SHAPER_PKT_LAST)
			c->flags &= ~SHAPER_CF_MSG_OPEN;
	} else {
		c->flags &= ~SHAPER_CF_MSG_OPEN;
		if (!(it->flags & SHAPER_PKT_EXEMPT))
			return false;
	}
	it->flags |= SHAPER_IF_ADMITTED;
	c->ahead += it->bytes;
	return true;
}

/* The tenant's admission time: the shared bucket's, if it has one (taken into adm_ts). */
static inline shaper_u128
tenant_adm(struct shaper_tenant *t)
{
	if (t->shared != NULL)
		t->adm_ts = shared_to_fp(t->shared, __atomic_load_n(&t->shared->ts, __ATOMIC_RELAXED));
	return t->adm_ts;
}

/*
 * May the tenant admit now?  Its bucket has tokens and, when shared, no
 * other sharer that waits for them is a quantum behind this one (shaper.h).
 * A refusal notes that this sharer waits.
 */
static inline bool
tenant_adm_ready(struct shaper_tenant *t, shaper_u128 tnow)
{
	struct shaper_shared *s = t->shared;
	shaper_u128 adm = tenant_adm(t);
	bool ready = adm <= tnow;
	uint64_t now, me;

	if (s == NULL)
		return ready;
	now = (uint64_t)((tnow - SHAPER_TBIAS) >> 32);
	me = s->by[t->shared_id].vt;
	for (uint32_t j = 0, n = __atomic_load_n(&s->n, __ATOMIC_RELAXED); ready && j < n; j++) {
		uint64_t due = __atomic_load_n(&s->by[j].due, __ATOMIC_RELAXED);

		if (j != t->shared_id && due != 0 && now < due + s->late &&
		    __atomic_load_n(&s->by[j].vt, __ATOMIC_RELAXED) + SHAPER_SHARED_QUANTUM < me)
			ready = false;
	}
	/* Waiting: when this sharer looks again (the bucket's refill, or its next dequeue). */
	if (!ready)
		__atomic_store_n(&s->by[t->shared_id].due,
				 (adm > tnow ? (uint64_t)((adm - SHAPER_TBIAS) >> 32) + 1 : now) | 1, __ATOMIC_RELAXED);
	return ready;
}

/*
 * Charge @bytes (times cpb) to the admission bucket: ts = max(ts, now -
 * burst) + add, in one compare-and-swap when the bucket is shared.
 */
static inline void
tenant_adm_charge(struct shaper_tenant *t, uint64_t bytes, shaper_u128 tnow)
{
	struct shaper_shared *s = t->shared;
	shaper_u128 add = (shaper_u128)bytes * t->cpb;
	uint64_t floor, inc, old, nv;

	if (s == NULL) {
		t->adm_ts = u128_max(t->adm_ts, tnow - t->burst_fp) + add;
		return;
	}
	floor = shared_from_fp(s, tnow - t->burst_fp);
	/* Rounded up: a shared bucket never admits more than its rate. */
	inc = (uint64_t)((add + (((shaper_u128)1 << SHAPER_SHARED_SHIFT) - 1)) >> SHAPER_SHARED_SHIFT);
	old = __atomic_load_n(&s->ts, __ATOMIC_RELAXED);
	do
		nv = (old > floor ? old : floor) + inc;
	while (!__atomic_compare_exchange_n(&s->ts, &old, nv, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	t->adm_ts = shared_to_fp(s, nv);
	shared_account(s, t->shared_id, bytes);
}

/*
 * A unit that needs a charge, all but the admission bucket's: the whole
 * message (`charge`) at a first packet that carries one, which opens the
 * message unless it is also the last, else the packet's `bytes`, added to
 * the connection's virtual finish time and the tenant's count.  Returns what
 * the bucket is to be charged.
 */
static inline uint64_t
unit_account(struct shaper_tenant *t, struct shaper_conn *c, uint16_t flags,
	uint32_t bytes, uint32_t msg_charge)
{
	uint64_t charge = bytes;

	if ((flags & SHAPER_PKT_FIRST) && msg_charge != 0) {
		charge = msg_charge;
		if (!(flags & SHAPER_PKT_LAST))
			c->flags |= SHAPER_CF_MSG_OPEN;
		if (charge > t->fq_window)
			t->fq_window = charge < (16u << 20) ? charge : 16u << 20;
	}
	c->vfinish += charge;
	t->charged += charge;
	return charge;
}

/*
 * Charge a unit that needs it to the tenant's admission bucket and the
 * connection's virtual finish time (unit_account()).
 */
static inline void
unit_charge(struct shaper_tenant *t, struct shaper_conn *c, uint16_t flags,
	uint32_t bytes, uint32_t msg_charge, shaper_u128 tnow)
{
	uint64_t charge = unit_account(t, c, flags, bytes, msg_charge);

	if (t->cpb != 0)
		tenant_adm_charge(t, charge, tnow);
}

/* Charge an item that needs it: the whole message at its first packet,
 * else the packet. */
static inline void
item_charge(struct shaper_tenant *t, struct shaper_conn *c, struct shaper_item *it,
	shaper_u128 tnow)
{
	unit_charge(t, c, it->flags, it->bytes, it->charge, tnow);
	it->flags |= SHAPER_IF_ADMITTED;
	c->ahead += it->bytes;
}

/* Connections. */

/* A connection whose head is admitted is due at its timestamp. */
static inline void
conn_schedule(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	struct shaper_conn *c = &sh->conns[ci];

	if (c->cpb != 0 && !shw_due(&sh->wheel, c->next_ts)) {
		conn_tx_set(c, SHAPER_CONN_WHEEL);
		shw_insert(&sh->wheel, ci, c->next_ts, &c->link);
		return;
	}
	run_push(sh, t, ci);
	tenant_kick(sh, t);
}

#endif /* SHAPER_SCHED_H */
