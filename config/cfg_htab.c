/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include "cfg_htab.h"

/* The table is kept at most half full, so linear probing stays short. */
static uint32_t
htab_size_for(uint32_t expect)
{
	uint64_t want = (uint64_t)expect * 2;
	uint64_t size = 16;

	while (size < want)
		size <<= 1;
	return size > (1ull << 31) ? 0 : (uint32_t)size;
}

int
cfg_htab_init(struct cfg_htab *h, uint32_t expect)
{
	uint32_t size = htab_size_for(expect);

	h->n = 0;
	h->mask = 0;
	h->slot = size ? calloc(size, sizeof(*h->slot)) : NULL;
	if (h->slot == NULL)
		return -1;
	h->mask = size - 1;
	return 0;
}

void
cfg_htab_free(struct cfg_htab *h)
{
	free(h->slot);
	h->slot = NULL;
	h->mask = 0;
	h->n = 0;
}

int64_t
cfg_htab_lookup(const struct cfg_htab *h, uint32_t hash, cfg_htab_match_t match,
		const void *ctx, const void *key)
{
	uint32_t i;

	if (h->slot == NULL)
		return -1;
	for (i = hash & h->mask; h->slot[i].val != 0; i = (i + 1) & h->mask) {
		if (h->slot[i].hash == hash && match(ctx, h->slot[i].val - 1, key))
			return h->slot[i].val - 1;
	}
	return -1;
}

static void
htab_place(struct cfg_hslot *slot, uint32_t mask, uint32_t hash, uint32_t val)
{
	uint32_t i = hash & mask;

	while (slot[i].val != 0)
		i = (i + 1) & mask;
	slot[i].hash = hash;
	slot[i].val = val;
}

int
cfg_htab_reserve(struct cfg_htab *h, uint32_t n)
{
	if (h->slot == NULL || (uint64_t)n * 2 > (uint64_t)h->mask + 1) {
		uint32_t size = htab_size_for(n);
		struct cfg_hslot *ns;

		if (size == 0 || (ns = calloc(size, sizeof(*ns))) == NULL)
			return -1;
		if (h->slot != NULL) {
			for (uint32_t i = 0; i <= h->mask; i++)
				if (h->slot[i].val != 0)
					htab_place(ns, size - 1, h->slot[i].hash, h->slot[i].val);
			free(h->slot);
		}
		h->slot = ns;
		h->mask = size - 1;
	}
	return 0;
}

int
cfg_htab_add(struct cfg_htab *h, uint32_t hash, uint32_t idx)
{
	if (cfg_htab_reserve(h, h->n + 1) < 0)
		return -1;
	htab_place(h->slot, h->mask, hash, idx + 1);
	h->n++;
	return 0;
}

/* The slot that holds @idx under @hash, or -1. */
static int64_t
htab_slot_of(const struct cfg_htab *h, uint32_t hash, uint32_t idx)
{
	if (h->slot == NULL)
		return -1;
	for (uint32_t i = hash & h->mask; h->slot[i].val != 0; i = (i + 1) & h->mask)
		if (h->slot[i].val == idx + 1 && h->slot[i].hash == hash)
			return i;
	return -1;
}

int
cfg_htab_remove(struct cfg_htab *h, uint32_t hash, uint32_t idx)
{
	int64_t s = htab_slot_of(h, hash, idx);
	uint32_t hole, j;

	if (s < 0)
		return -1;
	/*
	 * Backward-shift deletion: an entry after the hole moves into it when
	 * its home slot is not between the hole and itself (cyclically), so
	 * every probe sequence stays unbroken.
	 */
	hole = (uint32_t)s;
	for (j = (hole + 1) & h->mask; h->slot[j].val != 0; j = (j + 1) & h->mask) {
		uint32_t home = h->slot[j].hash & h->mask;

		if (((j - home) & h->mask) >= ((j - hole) & h->mask)) {
			h->slot[hole] = h->slot[j];
			hole = j;
		}
	}
	h->slot[hole].val = 0;
	h->slot[hole].hash = 0;
	h->n--;
	return 0;
}

int
cfg_htab_move(struct cfg_htab *h, uint32_t hash, uint32_t idx, uint32_t to)
{
	int64_t s = htab_slot_of(h, hash, idx);

	if (s < 0)
		return -1;
	h->slot[s].val = to + 1;
	return 0;
}

uint64_t
cfg_hash_bytes(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint32_t
cfg_hash_final(uint64_t h)
{
	/* The murmur3 finaliser: FNV alone leaves the low bits weak. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}
