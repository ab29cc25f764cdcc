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
 */
bool
shaper_send_now(struct shaper *sh, const struct shaper_pkt *pkt, uint64_t now,
	struct shaper_out *out)
{
	struct shaper_conn *c;
	struct shaper_tenant *t;
	uint16_t f = pkt->flags & SHAPER_IF_CALLER;
	shaper_u128 now_fp = SHAPER_FP(now);
	shaper_u128 tnow = SHAPER_TNOW(now);
	bool starts, cont, prepaid;

	if (pkt->conn >= sh->n_conns)
		return false;
	c = &sh->conns[pkt->conn];
	/* Its own queue first: nothing overtakes an earlier packet. */
	if (!(c->flags & SHAPER_CF_ATTACHED) || c->qitems != 0)
		return false;
	if (c->cpb != 0 && conn_ts(c) > now_fp + sh->cut_slack_fp)
		return false;
	t = &sh->tenants[c->tenant];
	/* Limits, backpressure and the watchdog are shaper_enqueue()'s. */
	if (t->full || t->dropping)
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
		/* Nothing of the tenant waits: no fair share or order to keep. */
		if (t->qbytes != 0 || t->fq_map != 0 || t->run_head != SHAPER_NIL ||
		    t->tx_ts > tnow || (!prepaid && !tenant_adm_ready(t, tnow)))
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
		if (t->cpb != 0) {
			/* fair_push() then fair_pop() on an empty calendar: the
			 * connection joins no earlier than the virtual time, which
			 * moves to it. */
			uint64_t floor = t->fq_v << sh->qshift;

			if (c->vfinish < floor)
				c->vfinish = floor;
			t->fq_v = c->vfinish >> sh->qshift;
		}
		unit_charge(t, c, f, pkt->bytes, pkt->charge, tnow);
	}
	/* Transmission, as conn_send() would do it; an idle connection
	 * restarts at `now` (no credit for idle time), one let through within
	 * the cut-through tolerance goes on from its own pacing time. */
	if (t->cpb != 0)
		t->tx_ts = u128_max(t->tx_ts, tnow - t->burst_fp) +
			(shaper_u128)pkt->bytes * t->cpb;
	if (c->cpb != 0)
		conn_ts_set(c, u128_max(conn_ts(c), now_fp) + (shaper_u128)pkt->bytes * c->cpb);
	t->enq_pkts++;
	t->enq_bytes += pkt->bytes;
	t->deq_pkts++;
	t->deq_bytes += pkt->bytes;
	t->cut_pkts++;
	t->cut_bytes += pkt->bytes;
	t->win_bytes += pkt->bytes;
	tenant_ewma_tick(sh, t, now);
	out->cookie = pkt->cookie;
	out->conn = pkt->conn;
	out->bytes = pkt->bytes;
	out->conn_queued = 0;
	out->flags = f;
	return true;
}

void
shaper_prefetch(const struct shaper *sh, uint32_t conn)
{
	if (conn < sh->n_conns)
		__builtin_prefetch(&sh->conns[conn]);
}
