/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timing wheel (Carousel, SIGCOMM'17): one wheel of time slots, each a
 * bucket of entity ids (connections and tenants) whose timestamp falls in
 * it.  Insertion and removal are O(1); advancing the clock pops whole slots.
 * Nothing in here depends on the number of entities.
 *
 * A slot holds a list of 64-byte chunks of 13 ids, so that popping a slot
 * reads ids in sequence and the caller can prefetch the entities ahead of
 * using them (a list threaded through the entities would be a chain of
 * dependent cache misses).  Only a slot's first chunk is ever partly full:
 * removal moves that chunk's last id into the hole.  Each entity is at most
 * once in the wheel, so the chunk pool is bounded by
 * entities / 13 + slots, and the wheel never allocates.
 *
 * Entities later than the horizon (slots x slot width) are filed in the last
 * slot of the horizon and re-filed when it comes round.  A two-level bitmap
 * of non-empty slots lets the clock skip empty slots and answers "when is the
 * next event" without scanning.
 *
 * The owner stores each entity's position (chunk << 4 | index) and gives it
 * back for removal; removal says which other entity moved and where.
 */
#ifndef SHAPER_WHEEL_H
#define SHAPER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#define SHW_NIL		UINT32_MAX
#define SHW_IDS		13

struct shw_chunk {
	uint32_t next;		/* Next chunk of the slot, or SHW_NIL. */
	uint16_t n;		/* Ids used. */
	uint16_t rd;		/* As a FIFO (shaper.c): ids already taken. */
	uint32_t slot;		/* Slot this chunk belongs to. */
	uint32_t id[SHW_IDS];
};

_Static_assert(sizeof(struct shw_chunk) == 64, "a chunk is one cache line");

struct shaper_wheel {
	uint64_t cur;		/* Absolute index of the first slot not yet popped. */
	uint32_t nslots;	/* A power of two, at least 64. */
	uint32_t mask;
	uint32_t gshift;	/* A slot is 1 << gshift ticks wide. */
	uint32_t free_chunk;	/* Free list of chunks. */
	uint32_t *head;		/* Per slot: its first chunk or SHW_NIL. */
	uint64_t *bm0;		/* Bit per slot: non-empty. */
	uint64_t *bm1;		/* Bit per bm0 word: non-zero. */
	struct shw_chunk *chunks;
	uint32_t nchunks;
};

/* Chunks needed for `entities` entities in a wheel of `nslots` slots. */
static inline uint32_t
shw_nchunks(uint32_t entities, uint32_t nslots)
{
	return (entities + SHW_IDS - 1) / SHW_IDS + nslots + 2;
}

static inline void
shw_mark(struct shaper_wheel *w, uint32_t slot)
{
	w->bm0[slot >> 6] |= 1ull << (slot & 63);
	w->bm1[slot >> 12] |= 1ull << ((slot >> 6) & 63);
}

static inline void
shw_unmark(struct shaper_wheel *w, uint32_t slot)
{
	w->bm0[slot >> 6] &= ~(1ull << (slot & 63));
	if (w->bm0[slot >> 6] == 0)
		w->bm1[slot >> 12] &= ~(1ull << ((slot >> 6) & 63));
}

/* True if a timestamp falls in a slot already popped: it is due now. */
static inline bool
shw_due(const struct shaper_wheel *w, uint64_t ts)
{
	return (ts >> w->gshift) < w->cur;
}

/*
 * File entity `id` at time `ts` (ticks): in its slot, in the current slot if
 * that one has passed, in the horizon's last slot if it is further.  Writes
 * the entity's position to *pos.
 */
static inline void
shw_insert(struct shaper_wheel *w, uint32_t id, uint64_t ts, uint32_t *pos)
{
	uint64_t idx = ts >> w->gshift;
	uint32_t slot, h;
	struct shw_chunk *c;

	if (idx < w->cur)
		idx = w->cur;
	else if (idx - w->cur >= w->nslots)
		idx = w->cur + w->nslots - 1;
	slot = (uint32_t)idx & w->mask;
	h = w->head[slot];
	if (h == SHW_NIL || w->chunks[h].n == SHW_IDS) {
		uint32_t k = w->free_chunk;

		/* The pool is sized so that this cannot fail (see above). */
		c = &w->chunks[k];
		w->free_chunk = c->next;
		c->next = h;
		c->n = 0;
		c->slot = slot;
		if (h == SHW_NIL)
			shw_mark(w, slot);
		w->head[slot] = k;
		h = k;
	} else {
		c = &w->chunks[h];
	}
	*pos = h << 4 | c->n;
	c->id[c->n++] = id;
}

/*
 * Remove the entity at position `pos`.  If another entity moved into its
 * place, returns that entity's id and its new position in *moved_pos;
 * otherwise returns SHW_NIL.
 */
static inline uint32_t
shw_remove(struct shaper_wheel *w, uint32_t pos, uint32_t *moved_pos)
{
	uint32_t k = pos >> 4, i = pos & 15;
	struct shw_chunk *c = &w->chunks[k];
	uint32_t slot = c->slot;
	uint32_t h = w->head[slot];
	struct shw_chunk *hc = &w->chunks[h];
	uint32_t last = hc->id[--hc->n];
	uint32_t moved = SHW_NIL;

	if (k != h || i != hc->n) {
		c->id[i] = last;
		moved = last;
		*moved_pos = pos;
	}
	if (hc->n == 0) {
		w->head[slot] = hc->next;
		hc->next = w->free_chunk;
		w->free_chunk = h;
		if (w->head[slot] == SHW_NIL)
			shw_unmark(w, slot);
	}
	return moved;
}

/* Take a slot's chunk list out of the wheel; the caller walks and frees it. */
static inline uint32_t
shw_detach(struct shaper_wheel *w, uint64_t idx)
{
	uint32_t slot = (uint32_t)idx & w->mask;
	uint32_t h = w->head[slot];

	if (h != SHW_NIL) {
		w->head[slot] = SHW_NIL;
		shw_unmark(w, slot);
	}
	return h;
}

static inline void
shw_chunk_free(struct shaper_wheel *w, uint32_t k)
{
	w->chunks[k].next = w->free_chunk;
	w->free_chunk = k;
}

/* First non-empty slot position >= p, or UINT32_MAX. */
static inline uint32_t
shw_next_set(const struct shaper_wheel *w, uint32_t p)
{
	uint32_t wi = p >> 6;
	uint32_t nw0 = w->nslots >> 6;
	uint64_t word = w->bm0[wi] & (~0ull << (p & 63));

	if (word != 0)
		return (wi << 6) + (uint32_t)__builtin_ctzll(word);
	wi++;
	while (wi < nw0) {
		uint32_t bi = wi >> 6;
		uint64_t b1 = w->bm1[bi] & (~0ull << (wi & 63));

		if (b1 != 0) {
			wi = (bi << 6) + (uint32_t)__builtin_ctzll(b1);
			return (wi << 6) + (uint32_t)__builtin_ctzll(w->bm0[wi]);
		}
		wi = (bi + 1) << 6;
	}
	return UINT32_MAX;
}

/*
 * The first non-empty slot with absolute index in [from, to] (to - from <
 * nslots), in *found.  Returns false if there is none.
 */
static inline bool
shw_find(const struct shaper_wheel *w, uint64_t from, uint64_t to,
	uint64_t *found)
{
	uint32_t p = (uint32_t)from & w->mask;
	uint64_t span = to - from;
	uint32_t s = shw_next_set(w, p);
	uint64_t dist;

	if (s != UINT32_MAX) {
		dist = s - p;
	} else {
		s = shw_next_set(w, 0);
		if (s == UINT32_MAX)
			return false;
		dist = (uint64_t)(w->nslots - p) + s;
	}
	if (dist > span)
		return false;
	*found = from + dist;
	return true;
}

#endif /* SHAPER_WHEEL_H */
