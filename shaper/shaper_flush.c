/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shaper_flush(): empty an instance without sending anything.  Every held
 * item goes back to the caller once, and the scheduling structures (the
 * wheel, the tenants' run lists and fair calendars, the active list) are
 * rebuilt empty.  Time does not move: pacing times, buckets and the
 * fair-share virtual times stay where they were, so the instance goes on
 * as if the flushed packets had never been offered.
 */
#include <string.h>

#include "shaper_state.h"

void
shaper_pools_reset(struct shaper *sh)
{
	struct shaper_wheel *w = &sh->wheel;

	for (uint32_t i = 0; i < sh->n_items; i++)
		sh->items[i].next = i + 1 < sh->n_items ? i + 1 : SHAPER_NIL;
	sh->free_item = 0;
	sh->items_used = 0;
	for (uint32_t i = 0; i < w->nslots; i++)
		w->head[i] = SHW_NIL;
	memset(w->bm0, 0, (w->nslots / 64) * sizeof(uint64_t));
	memset(w->bm1, 0, ((w->nslots + 4095) / 4096) * sizeof(uint64_t));
	for (uint32_t i = 0; i < w->nchunks; i++)
		w->chunks[i].next = i + 1 < w->nchunks ? i + 1 : SHW_NIL;
	w->free_chunk = 0;
	for (uint32_t i = 0; i < sh->n_fq_chunks; i++)
		sh->fq_chunks[i].next = i + 1 < sh->n_fq_chunks ? i + 1 : SHW_NIL;
	sh->fq_free = 0;
}

uint64_t
shaper_flush(struct shaper *sh, uint64_t now, shaper_flush_fn fn, void *arg)
{
	uint64_t n = 0;

	if (sh == NULL)
		return 0;
	for (uint32_t ci = 0; ci < sh->n_conns; ci++) {
		struct shaper_conn *c = &sh->conns[ci];
		uint32_t left = c->qbytes;

		for (uint32_t i = c->head; i != SHAPER_NIL; i = sh->items[i].next) {
			const struct shaper_item *it = &sh->items[i];
			struct shaper_out o = {
				.cookie = it->cookie,
				.conn = ci,
				.bytes = it->bytes,
				.flags = (uint16_t)(it->flags & SHAPER_IF_CALLER),
			};

			left -= it->bytes;
			o.conn_queued = left;
			if (fn != NULL)
				fn(&o, arg);
			if (c->flags & SHAPER_CF_ATTACHED)
				sh->tenants[c->tenant].flush_pkts++;
			n++;
		}
		c->head = SHAPER_NIL;
		c->tail = SHAPER_NIL;
		c->cursor = SHAPER_NIL;
		c->link = SHAPER_NIL;
		c->qbytes = 0;
		c->qitems = 0;
		c->ahead = 0;
		c->state = SHAPER_CONN_IDLE;
		/* A message cut short ends here: the next packet starts afresh. */
		c->flags &= SHAPER_CF_ATTACHED;
	}
	for (uint32_t ti = 0; ti < sh->n_tenants; ti++) {
		struct shaper_tenant *t = &sh->tenants[ti];

		if (t->full && now > t->full_since)
			t->bp_ticks += now - t->full_since;
		t->full = false;
		t->dropping = false;
		shaper_tenant_queues_clear(t);
	}
	sh->active_head = SHAPER_NIL;
	sh->active_tail = SHAPER_NIL;

	/* Every item is free again, and so is every chunk of the calendars. */
	shaper_pools_reset(sh);
	sh->flushed += n;
	return n;
}
