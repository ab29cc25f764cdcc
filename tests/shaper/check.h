/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's internal consistency, checked from outside: shared by the
 * unit tests (test_shaper.c, test_shaper_cut.c).  Reads shaper_state.h.
 */
#ifndef SHAPER_TEST_CHECK_H
#define SHAPER_TEST_CHECK_H

#include <stdio.h>

#include "shaper_state.h"

/*
 * Walk every internal structure and check that they agree: each
 * connection's FIFO, cursor and admitted bytes against its state; run lists
 * and fair calendars against the connections in those states; the wheel's
 * positions; byte and item totals; and liveness (whatever is queued can be
 * reached by some scheduler path).  Returns the number of violations.
 */
static inline unsigned int
check_invariants(const struct shaper *sh)
{
	unsigned int bad = 0;
	uint32_t used = 0, in_run = 0, in_fair = 0, in_wheel = 0;
	uint32_t want_run = 0, want_fair = 0, want_wheel = 0;
	const struct shaper_wheel *w = &sh->wheel;

#define INV(cond) do { if (!(cond)) { bad++; if (bad < 5) \
	printf("\n    invariant broken at %s:%d: %s", __FILE__, __LINE__, #cond); } } while (0)
	for (uint32_t t = 0; t < sh->n_tenants; t++) {
		const struct shaper_tenant *tn = &sh->tenants[t];
		uint64_t qbytes = 0;
		uint32_t n = 0;

		for (uint32_t ci = tn->run_head; ci != SHAPER_NIL; ci = sh->conns[ci].link) {
			INV((sh->conns[ci].state & SHAPER_CS_TX_MASK) == SHAPER_CONN_RUN);
			INV(sh->conns[ci].tenant == t);
			INV(++n <= sh->n_conns);
			if (n > sh->n_conns)
				break;
			in_run++;
		}
		n = 0;
		for (unsigned int b = 0; b < SHAPER_FQ_BUCKETS; b++) {
			uint32_t last = SHW_NIL;

			INV(((tn->fq_map >> b) & 1) == (tn->fq_head[b] != SHW_NIL));
			for (uint32_t k = tn->fq_head[b]; k != SHW_NIL; k = sh->fq_chunks[k].next) {
				const struct shw_chunk *ch = &sh->fq_chunks[k];

				INV(ch->rd < ch->n && ch->n <= SHW_IDS);
				for (unsigned int i = ch->rd; i < ch->n; i++) {
					uint32_t ci = ch->id[i];

					INV(sh->conns[ci].state & SHAPER_CS_FAIR);
					INV(sh->conns[ci].tenant == t);
					INV(sh->conns[ci].cursor != SHAPER_NIL);
					in_fair++;
				}
				last = k;
				if (++n > sh->n_conns)
					break;
			}
			INV(last == tn->fq_tail[b]);
		}
		if (tn->run_head != SHAPER_NIL || tn->fq_map != 0)
			INV(tn->state != SHAPER_TENANT_IDLE);
		for (uint32_t ci = 0; ci < sh->n_conns; ci++)
			if ((sh->conns[ci].flags & SHAPER_CF_ATTACHED) && sh->conns[ci].tenant == t)
				qbytes += sh->conns[ci].qbytes;
		INV(qbytes == tn->qbytes);
	}
	for (uint32_t ci = 0; ci < sh->n_conns; ci++) {
		const struct shaper_conn *c = &sh->conns[ci];
		unsigned int tx = c->state & SHAPER_CS_TX_MASK;
		uint64_t bytes = 0, ahead = 0;
		uint32_t items = 0;
		bool before = true;

		for (uint32_t ii = c->head; ii != SHAPER_NIL; ii = sh->items[ii].next) {
			const struct shaper_item *it = &sh->items[ii];

			if (ii == c->cursor)
				before = false;
			INV(before == ((it->flags & SHAPER_IF_ADMITTED) != 0));
			if (before)
				ahead += it->bytes;
			bytes += it->bytes;
			if (++items > sh->n_items)
				break;
		}
		INV(before || c->cursor != SHAPER_NIL);
		INV(c->cursor == SHAPER_NIL || !before);
		INV(items == c->qitems);
		INV(bytes == c->qbytes);
		INV(ahead == c->ahead);
		used += items;
		INV((tx == SHAPER_CONN_IDLE) == (c->qitems == 0));
		if (tx == SHAPER_CONN_HOLD)
			INV(c->head == c->cursor);
		if (tx == SHAPER_CONN_WHEEL || tx == SHAPER_CONN_RUN)
			INV(c->head != c->cursor);
		/* Liveness: a head waiting for admission is in the calendar. */
		if (tx == SHAPER_CONN_HOLD)
			INV(c->state & SHAPER_CS_FAIR);
		if (c->state & SHAPER_CS_FAIR)
			want_fair++;
		if (tx == SHAPER_CONN_RUN)
			want_run++;
		if (tx == SHAPER_CONN_WHEEL)
			want_wheel++;
	}
	INV(in_run == want_run);
	INV(in_fair == want_fair);
	INV(used == sh->items_used);
	for (uint32_t slot = 0; slot < w->nslots; slot++) {
		INV(((w->bm0[slot >> 6] >> (slot & 63)) & 1) == (w->head[slot] != SHW_NIL));
		for (uint32_t k = w->head[slot]; k != SHW_NIL; k = w->chunks[k].next) {
			const struct shw_chunk *ch = &w->chunks[k];

			INV(ch->slot == slot);
			INV(ch->n > 0 && ch->n <= SHW_IDS);
			if (k != w->head[slot])
				INV(ch->n == SHW_IDS);
			for (unsigned int i = 0; i < ch->n; i++) {
				uint32_t id = ch->id[i];

				if (id < sh->n_conns) {
					INV((sh->conns[id].state & SHAPER_CS_TX_MASK) ==
					    SHAPER_CONN_WHEEL);
					INV(sh->conns[id].link == (k << 4 | i));
					in_wheel++;
				} else {
					const struct shaper_tenant *tn = &sh->tenants[id - sh->n_conns];

					INV(tn->state == SHAPER_TENANT_WHEEL);
					INV(tn->wpos == (k << 4 | i));
				}
			}
		}
	}
	INV(in_wheel == want_wheel);
#undef INV
	return bad;
}

#endif /* SHAPER_TEST_CHECK_H */
