/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ground of the overlay (ovl.h): addresses from the configuration, the
 * single writer's operations on the open-addressing tables, and the memory
 * check of the owner's side.  The build is ovl_build.c.
 */
#include <stdlib.h>
#include <string.h>

#include "ovl.h"

void
ovl_ip_from_cfg(struct ovl_ip *dst, const struct cfg_ip *src)
{
	dst->ver = src->ver;
	memcpy(dst->b, src->b, sizeof(dst->b));
}

int
ovl_tab_init(struct ovl_table *t, uint32_t n, unsigned load_pct)
{
	uint32_t cap = 16;

	while ((uint64_t)cap * load_pct < (uint64_t)n * 100 + 100)
		cap <<= 1;
	t->slots = calloc(cap, sizeof(*t->slots));
	t->mask = cap - 1;
	t->n = t->used = 0;
	return t->slots ? 0 : -1;
}

/* The slot holding @k, or NULL. */
struct ovl_slot *
ovl_tab_find(const struct ovl_table *t, const struct ovl_key *k)
{
	uint32_t sig = ovl_key_hash(k) | 1u;

	for (uint32_t i = sig & t->mask;; i = (i + 1) & t->mask) {
		struct ovl_slot *s = &t->slots[i];

		if (s->sig == 0)
			return NULL;
		if (s->sig == sig && ovl_key_eq(&s->key, k))
			return s;
	}
}

/*
 * Store @val under @k while lcores may be probing: a present key has its
 * value swapped with one store; a new key takes the first tombstone or
 * empty slot of its probe, written before its signature (release).
 */
void
ovl_tab_set(struct ovl_table *t, const struct ovl_key *k, uint32_t val)
{
	uint32_t sig = ovl_key_hash(k) | 1u;
	struct ovl_slot *s = ovl_tab_find(t, k);

	if (s) {
		__atomic_store_n(&s->val, val, __ATOMIC_RELEASE);
		return;
	}
	for (uint32_t i = sig & t->mask;; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		if (s->sig == OVL_SIG_TOMB || s->sig == 0)
			break;
	}
	if (s->sig == 0)
		t->used++;
	s->key = *k;
	s->val = val;
	__atomic_store_n(&s->sig, sig, __ATOMIC_RELEASE);
	t->n++;
}

/* Remove @k (a tombstone stays); false when it is not there. */
bool
ovl_tab_del(struct ovl_table *t, const struct ovl_key *k)
{
	struct ovl_slot *s = ovl_tab_find(t, k);

	if (!s)
		return false;
	__atomic_store_n(&s->sig, OVL_SIG_TOMB, __ATOMIC_RELEASE);
	t->n--;
	return true;
}

int
ovl_mr_translate(const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip, unsigned vip_len,
		 uint32_t rkey, uint64_t va, uint64_t len, uint32_t access, uint32_t *new_rkey,
		 uint64_t *new_va)
{
	uint32_t idx = ovl_lookup_mr(o, tenant, owner_vip, vip_len, rkey);
	const struct ovl_mr *m;

	if (idx == OVL_NONE)
		return OVL_MR_UNKNOWN;
	m = &o->mrs[idx];
	/* [va, va + len) inside [addr, addr + length), without overflow. */
	if (va < m->addr || len > m->length || va - m->addr > m->length - len)
		return OVL_MR_BOUNDS;
	if ((m->access & access) != access)
		return OVL_MR_ACCESS;
	*new_rkey = m->target_rkey;
	*new_va = m->target_addr + (va - m->addr);
	return OVL_MR_OK;
}
