/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small open-addressing hash index used while validating a configuration.
 *
 * The table stores only a 32-bit hash and an array index per entry; the
 * records themselves stay in their arrays, and the caller says how a key
 * compares with the record at an index. That keeps one implementation for
 * every kind of key (names, (tenant, vip), (tenant, vip, vqpn), (host, pqpn))
 * and lets a million QPs be checked in linear time.
 */
#ifndef CFG_HTAB_H
#define CFG_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfg_hslot {
	uint32_t hash;
	uint32_t val;           /* index + 1; 0 marks an empty slot */
};

struct cfg_htab {
	struct cfg_hslot *slot;
	uint32_t mask;          /* number of slots - 1, a power of two minus 1 */
	uint32_t n;             /* entries in use */
};

/* True if @key equals the key of the record at @idx. @ctx is the caller's. */
typedef bool (*cfg_htab_match_t)(const void *ctx, uint32_t idx, const void *key);

/* Prepare an empty table sized for @expect entries. Returns 0 or -1 (ENOMEM). */
int cfg_htab_init(struct cfg_htab *h, uint32_t expect);

/* Release the slots. The table may be initialised again afterwards. */
void cfg_htab_free(struct cfg_htab *h);

/* Index of the record whose key matches @key, or -1 if there is none. */
int64_t cfg_htab_lookup(const struct cfg_htab *h, uint32_t hash, cfg_htab_match_t match,
			const void *ctx, const void *key);

/*
 * Add the record at @idx under @hash. The caller has checked with
 * cfg_htab_lookup() that its key is not present. Returns 0 or -1 (ENOMEM).
 */
int cfg_htab_add(struct cfg_htab *h, uint32_t hash, uint32_t idx);

/* Make room for @n entries in all, so that adding up to them cannot fail. Returns 0 or -1. */
int cfg_htab_reserve(struct cfg_htab *h, uint32_t n);

/*
 * Remove the entry of the record at @idx, added under @hash. Returns 0, or
 * -1 if there is none. The entries after it move back (no tombstones).
 */
int cfg_htab_remove(struct cfg_htab *h, uint32_t hash, uint32_t idx);

/*
 * The record at @idx, added under @hash, is now at @to: its entry follows.
 * Returns 0, or -1 if there is no such entry.
 */
int cfg_htab_move(struct cfg_htab *h, uint32_t hash, uint32_t idx, uint32_t to);

/* 64-bit FNV-1a over @len bytes, continuing from @h (start with CFG_HASH_SEED). */
#define CFG_HASH_SEED 0xcbf29ce484222325ull
uint64_t cfg_hash_bytes(uint64_t h, const void *p, size_t len);

/* Fold a running hash into the 32 well-mixed bits that the table uses. */
uint32_t cfg_hash_final(uint64_t h);

#endif /* CFG_HTAB_H */
