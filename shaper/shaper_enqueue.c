/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's enqueue side (docs/shaper.md): append a packet to its
 * connection's FIFO.  A message is accepted or refused whole at its first
 * packet (queue limits, watchdog).  The rest of an open message and exempt
 * packets are admitted on arrival; a packet that needs a charge becomes the
 * cursor and puts the connection in its tenant's fair calendar.
 */
#include "shaper.h"
#include "shaper_sched.h"

enum shaper_verdict
shaper_enqueue(struct shaper *sh, const struct shaper_pkt *pkt, uint64_t now)
{
	struct shaper_conn *c;
	struct shaper_tenant *t;
	struct shaper_item *it;
	enum shaper_verdict v = SHAPER_OK;
	uint16_t f = pkt->flags & SHAPER_IF_CALLER;
	uint32_t ii;
	bool starts, was_idle;

	if (pkt->conn >= sh->n_conns ||
	    !(sh->conns[pkt->conn].flags & SHAPER_CF_ATTACHED)) {
		sh->drops_unattached++;
		return SHAPER_DROP_DETACHED;
	}
	c = &sh->conns[pkt->conn];
	t = &sh->tenants[c->tenant];

	/* A message is accepted or refused as a whole, at its first packet
	 * (or at whichever packet arrives when none is open). */
	starts = !(c->flags & (SHAPER_CF_ENQ_OPEN | SHAPER_CF_ENQ_REFUSE)) ||
		(f & SHAPER_PKT_FIRST);
	if (starts) {
		c->flags &= ~(SHAPER_CF_ENQ_OPEN | SHAPER_CF_ENQ_REFUSE | SHAPER_CF_REASON_MASK);
		tenant_bp_update(sh, t, now);
		if (t->dropping)
			v = SHAPER_DROP_WATCHDOG;
		else if (t->qbytes + pkt->bytes > t->qlimit_hard)
			v = SHAPER_DROP_OVERFLOW;
		else if (sh->free_item == SHAPER_NIL)
			v = SHAPER_DROP_NOBUFS;
		if (v != SHAPER_OK) {
			t->drop_msgs[v]++;
			t->drop_pkts[v]++;
			if (!(f & SHAPER_PKT_LAST))
				c->flags |= SHAPER_CF_ENQ_REFUSE |
					(uint8_t)(v << SHAPER_CF_REASON_SHIFT);
			return v;
		}
		if (!(f & SHAPER_PKT_LAST))
			c->flags |= SHAPER_CF_ENQ_OPEN;
	} else if (c->flags & SHAPER_CF_ENQ_REFUSE) {
		v = (enum shaper_verdict)((c->flags & SHAPER_CF_REASON_MASK) >>
			SHAPER_CF_REASON_SHIFT);
		t->drop_pkts[v]++;
		if (f & SHAPER_PKT_LAST)
			c->flags &= ~(SHAPER_CF_ENQ_REFUSE | SHAPER_CF_REASON_MASK);
		return v;
	} else {
		if (sh->free_item == SHAPER_NIL) {
			/* The message is broken anyway: refuse its rest. */
			v = SHAPER_DROP_NOBUFS;
			t->drop_msgs[v]++;
			t->drop_pkts[v]++;
			c->flags &= ~SHAPER_CF_ENQ_OPEN;
			if (!(f & SHAPER_PKT_LAST))
				c->flags |= SHAPER_CF_ENQ_REFUSE |
					(uint8_t)(v << SHAPER_CF_REASON_SHIFT);
			return v;
		}
		if (f & SHAPER_PKT_LAST)
			c->flags &= ~SHAPER_CF_ENQ_OPEN;
	}

	ii = sh->free_item;
	it = &sh->items[ii];
	sh->free_item = it->next;
	sh->items_used++;
	it->cookie = pkt->cookie;
	it->bytes = pkt->bytes;
	it->charge = pkt->charge;
	it->flags = f;
	it->next = SHAPER_NIL;
	was_idle = c->qitems == 0;
	if (c->tail == SHAPER_NIL)
		c->head = ii;
	else
		sh->items[c->tail].next = ii;
	c->tail = ii;
	c->qbytes += pkt->bytes;
	c->qitems++;
	t->qbytes += pkt->bytes;
	t->enq_pkts++;
	t->enq_bytes += pkt->bytes;
	if (!t->full && t->qbytes >= t->qlimit)
		tenant_bp_update(sh, t, now);

	/* Admission: items behind the cursor wait for it; otherwise this one
	 * is pre-paid, or charged now (uncapped tenant), or becomes the
	 * cursor. */
	if (c->cursor == SHAPER_NIL && !item_prepaid(c, it)) {
		if (t->cpb == 0 && t->fq_map == 0) {
			item_charge(t, c, it, SHAPER_TNOW(now));
		} else {
			c->cursor = ii;
			fair_offer(sh, t, pkt->conn);
		}
	}

	if (was_idle) {
		/* Idle time earns no pacing credit. */
		if (c->cpb != 0 && conn_ts(c) < SHAPER_FP(now))
			conn_ts_set(c, SHAPER_FP(now));
		if (it->flags & SHAPER_IF_ADMITTED)
			conn_schedule(sh, t, pkt->conn);
		else
			conn_tx_set(c, SHAPER_CONN_HOLD);
	}
	return SHAPER_OK;
}

/*
 * Cut-through.  The conditions are those under which shaper_enqueue()
 * followed by shaper_dequeue() at the same `now` would hand the packet back
 * at once, checked before anything is changed; the accounting then mirrors
 * both halves.  Pacing is checked against the exact timestamp, not against
 * the wheel's slot, so cut-through never releases early.
 *
 * What a run of cut-throughs at one `now` changes of their tenant (its
 * buckets' times and its counters) is kept in a struct cut_run and written
 * once at its end, so that a burst updates the tenant once.
 */

/*
 * A tenant bucket (a virtual time, GCRA: shaper_state.h) charged by a run at
 * one `now`.  Its first charge finds tokens while ts <= now; after charges
 * of `charged` bytes its time is base + charged * cpb, base = max(ts, now -
 * burst), so it finds tokens while charged <= room = (now - base) / cpb:
 * one division a run, taken at its second charge, and no 128-bit
 * arithmetic a packet.
 */
struct cut_bucket {
	shaper_u128 ts;		/* Its time when the run began. */
	shaper_u128 base;
	uint64_t charged;
	uint64_t room;		/* Valid once charged != 0 and room_set. */
	bool room_set;
};

static inline void
cut_bucket_begin(struct cut_bucket *b, shaper_u128 ts)
{
	b->ts = ts;
	b->base = 0;
	b->charged = 0;
	b->room = 0;
	b->room_set = false;
}

static inline bool
cut_bucket_ready(struct cut_bucket *b, const struct shaper_tenant *t, shaper_u128 tnow)
{
	if (b->charged == 0)
		return b->ts <= tnow;
	if (!b->room_set) {
		b->base = u128_max(b->ts, tnow - t->burst_fp);
		b->room = (uint64_t)((tnow - b->base) / t->cpb);
		b->room_set = true;
	}
	return b->charged <= b->room;
}

/* The bucket's time after the run, as each charge's own max and add would have left it. */
static inline shaper_u128
cut_bucket_end(const struct cut_bucket *b, const struct shaper_tenant *t, shaper_u128 tnow)
{
	return u128_max(b->ts, tnow - t->burst_fp) + (shaper_u128)b->charged * t->cpb;
}

struct cut_run {
	struct cut_bucket tx;	/* Transmission, when the tenant is capped. */
	struct cut_bucket adm;	/* Admission, when capped and not shared (a shared one is charged at once). */
	uint64_t pkts;
	uint64_t bytes;
	uint32_t first_bytes;	/* The first packet's, for the achieved-rate window. */
};

/* The tenant-wide conditions, which no cut-through changes. */
static inline bool
cut_tenant_open(const struct shaper_tenant *t)
{
	/* Limits, backpressure and the watchdog are shaper_enqueue()'s. */
	if (t->full || t->dropping)
		return false;
	/* Nothing of a capped tenant waits: no fair share or order to keep. */
	return t->cpb == 0 || (t->qbytes == 0 && t->fq_map == 0 && t->run_head == SHAPER_NIL);
}

static inline void
cut_run_begin(struct cut_run *run, const struct shaper_tenant *t)
{
	cut_bucket_begin(&run->tx, t->tx_ts);
	cut_bucket_begin(&run->adm, t->adm_ts);
	run->pkts = 0;
	run->bytes = 0;
	run->first_bytes = 0;
}

/* May the tenant admit a unit now (tenant_adm_ready(), over the run)? */
static inline bool
cut_adm_ready(struct shaper_tenant *t, struct cut_run *run, shaper_u128 tnow)
{
	if (t->shared != NULL)
		return tenant_adm_ready(t, tnow);
	return cut_bucket_ready(&run->adm, t, tnow);
}

/*
 * Packet @pkt of connection @c, whose tenant @t is open (cut_tenant_open()),
 * through at once if it may (true: accounted, its tenant's share in @run),
 * else nothing changed (false).
 */
static inline bool
cut_one(struct shaper *sh, struct shaper_conn *c, struct shaper_tenant *t, struct cut_run *run,
	const struct shaper_pkt *pkt, shaper_u128 now_fp, shaper_u128 tnow)
{
	uint16_t f = pkt->flags & SHAPER_IF_CALLER;
	bool starts, cont, prepaid;

	/* Its own queue first: nothing overtakes an earlier packet. */
	if (!(c->flags & SHAPER_CF_ATTACHED) || c->qitems != 0)
		return false;
	if (c->cpb != 0 && conn_ts(c) > now_fp + sh->cut_slack_fp)
		return false;
	starts = !(c->flags & (SHAPER_CF_ENQ_OPEN | SHAPER_CF_ENQ_REFUSE)) ||
		(f & SHAPER_PKT_FIRST);
	if (starts ? t->qbytes + pkt->bytes > t->qlimit_hard :
	    (c->flags & SHAPER_CF_ENQ_REFUSE) != 0)
		return false;
	/* As item_prepaid() would find it at an empty queue. */
	cont = (c->flags & SHAPER_CF_MSG_OPEN) && !(f & SHAPER_PKT_FIRST);
	prepaid = cont || (f & SHAPER_PKT_EXEMPT);
	if (t->cpb != 0) {
		if (!cut_bucket_ready(&run->tx, t, tnow) || (!prepaid && !cut_adm_ready(t, run, tnow)))
			return false;
	} else if (!prepaid && t->fq_map != 0) {
		/* shaper_enqueue() would leave it to the calendar. */
		return false;
	}

	/* It goes.  Enqueue's message bookkeeping. */
	if (starts) {
		c->flags &= ~(SHAPER_CF_ENQ_OPEN | SHAPER_CF_ENQ_REFUSE | SHAPER_CF_REASON_MASK);
		if (!(f & SHAPER_PKT_LAST))
			c->flags |= SHAPER_CF_ENQ_OPEN;
	} else if (f & SHAPER_PKT_LAST) {
		c->flags &= ~SHAPER_CF_ENQ_OPEN;
	}
	/* Admission, as item_prepaid() or the charge would do it. */
	if (!cont || (f & SHAPER_PKT_LAST))
		c->flags &= ~SHAPER_CF_MSG_OPEN;
	if (!prepaid) {
		uint64_t charge;

		if (t->cpb != 0) {
			/* fair_push() then fair_pop() on an empty calendar: the
			 * connection joins no earlier than the virtual time, which
			 * moves to it. */
			uint64_t floor = t->fq_v << sh->qshift;

			if (c->vfinish < floor)
				c->vfinish = floor;
			t->fq_v = c->vfinish >> sh->qshift;
		}
		charge = unit_account(t, c, f, pkt->bytes, pkt->charge);
		if (t->cpb != 0) {
			if (t->shared != NULL)
				tenant_adm_charge(t, charge, tnow);
			else
				run->adm.charged += charge;
		}
	}
	/* Transmission, as conn_send() would do it; an idle connection
	 * restarts at `now` (no credit for idle time), one let through within
	 * the cut-through tolerance goes on from its own pacing time. */
	run->tx.charged += pkt->bytes;
	if (c->cpb != 0)
		conn_ts_set(c, u128_max(conn_ts(c), now_fp) + (shaper_u128)pkt->bytes * c->cpb);
	if (run->pkts++ == 0)
		run->first_bytes = pkt->bytes;
	run->bytes += pkt->bytes;
	return true;
}

/*
 * The tenant's share of the cut-throughs in @run, as each one's own would
 * have left it: the buckets' times, the counters, and the achieved-rate
 * window, which may close after the first packet (every one has the same
 * `now`), the others counting in the next.
 */
static inline void
cut_run_end(struct shaper *sh, struct shaper_tenant *t, const struct cut_run *run, uint64_t now)
{
	shaper_u128 tnow = SHAPER_TNOW(now);

	if (run->pkts == 0)
		return;
	if (t->cpb != 0) {
		t->tx_ts = cut_bucket_end(&run->tx, t, tnow);
		if (run->adm.charged != 0)
			t->adm_ts = cut_bucket_end(&run->adm, t, tnow);
	}
	t->enq_pkts += run->pkts;
	t->enq_bytes += run->bytes;
	t->deq_pkts += run->pkts;
	t->deq_bytes += run->bytes;
	t->cut_pkts += run->pkts;
	t->cut_bytes += run->bytes;
	t->win_bytes += run->first_bytes;
	tenant_ewma_tick(sh, t, now);
	t->win_bytes += run->bytes - run->first_bytes;
}

bool
shaper_send_now(struct shaper *sh, const struct shaper_pkt *pkt, uint64_t now,
	struct shaper_out *out)
{
	struct shaper_conn *c;
	struct shaper_tenant *t;
	struct cut_run run;

	if (pkt->conn >= sh->n_conns)
		return false;
	c = &sh->conns[pkt->conn];
	t = &sh->tenants[c->tenant];
	cut_run_begin(&run, t);
	if (!cut_tenant_open(t) ||
	    !cut_one(sh, c, t, &run, pkt, SHAPER_FP(now), SHAPER_TNOW(now)))
		return false;
	cut_run_end(sh, t, &run, now);
	out->cookie = pkt->cookie;
	out->conn = pkt->conn;
	out->bytes = pkt->bytes;
	out->conn_queued = 0;
	out->flags = pkt->flags & SHAPER_IF_CALLER;
	return true;
}

unsigned int
shaper_send_now_burst(struct shaper *sh, const struct shaper_pkt *pkts, unsigned int n,
	uint64_t now)
{
	shaper_u128 now_fp = SHAPER_FP(now), tnow = SHAPER_TNOW(now);
	struct shaper_tenant *t;
	struct cut_run run;
	uint32_t tid;
	unsigned int k;

	if (n == 0 || pkts[0].conn >= sh->n_conns)
		return 0;
	tid = sh->conns[pkts[0].conn].tenant;
	t = &sh->tenants[tid];
	if (!cut_tenant_open(t))
		return 0;
	cut_run_begin(&run, t);
	for (k = 0; k < n; k++) {
		const struct shaper_pkt *pkt = &pkts[k];
		struct shaper_conn *c;

		if (pkt->conn >= sh->n_conns)
			break;
		c = &sh->conns[pkt->conn];
		if (c->tenant != tid || !cut_one(sh, c, t, &run, pkt, now_fp, tnow))
			break;
	}
	cut_run_end(sh, t, &run, now);
	return k;
}

void
shaper_prefetch(const struct shaper *sh, uint32_t conn)
{
	if (conn < sh->n_conns)
		__builtin_prefetch(&sh->conns[conn]);
}
