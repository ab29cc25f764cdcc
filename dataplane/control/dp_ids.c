/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stable ids of connections' dynamic state (dp_conn_state): handed out to
 * new connections, given back when a removed connection's queue has
 * drained, under ctl_lock.  Reloads and incremental changes share them.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "dp.h"
#include "dp_ids.h"

#define STATE_CHUNK (1u << DP_STATE_CHUNK_SHIFT)

/* A zeroed connection state id, or OVL_NONE when all are in use. */
uint32_t
dp_state_alloc(void)
{
	uint32_t id;

	if (dp.n_free_states) {
		id = dp.free_states[--dp.n_free_states];
	} else {
		uint32_t chunk = dp.n_states >> DP_STATE_CHUNK_SHIFT;

		/* The shapers have room for --max-connections ids. */
		if (chunk >= DP_STATE_CHUNKS || (dp.conn_cap && dp.n_states >= dp.conn_cap))
			return OVL_NONE;
		if (!dp.conn_chunks[chunk]) {
			dp.conn_chunks[chunk] = rte_zmalloc("conn_state", sizeof(struct dp_conn_state) * STATE_CHUNK,
							    RTE_CACHE_LINE_SIZE);
			if (!dp.conn_chunks[chunk])
				return OVL_NONE;
		}
		/* The free stack can hold every id handed out. */
		if ((dp.n_states & (STATE_CHUNK - 1)) == 0) {
			uint32_t *f = realloc(dp.free_states, sizeof(*f) * (dp.n_states + STATE_CHUNK));

			if (!f)
				return OVL_NONE;
			dp.free_states = f;
		}
		id = dp.n_states++;
	}
	memset(dp_conn_state(id), 0, sizeof(struct dp_conn_state));
	/* Its DCQCN state starts afresh too, before any lcore can see the id (chunks allocated later are zeroed). */
	if (dp.cc_chunks[id >> DP_STATE_CHUNK_SHIFT])
		memset(dp_cc_state(id), 0, sizeof(struct dp_cc_state));
	return id;
}

void
dp_state_release(uint32_t id)
{
	dp.free_states[dp.n_free_states++] = id;
}

/* Ids of removed connections whose frames are still queued (dp_rate.h). */
static struct {
	uint32_t *id;
	uint32_t n, cap;
} draining;

void
dp_state_release_when_drained(uint32_t id)
{
	if (!__atomic_load_n(&dp_conn_state(id)->egress.draining, __ATOMIC_ACQUIRE)) {
		dp_state_release(id);
		return;
	}
	if (draining.n == draining.cap) {
		uint32_t cap = draining.cap ? draining.cap * 2 : 256, *p = realloc(draining.id, sizeof(*p) * cap);

		if (!p)
			return; /* the id is lost, not reused while in use */
		draining.id = p;
		draining.cap = cap;
	}
	draining.id[draining.n++] = id;
}

void
dp_state_drained_release(void)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < draining.n; i++) {
		if (__atomic_load_n(&dp_conn_state(draining.id[i])->egress.draining, __ATOMIC_ACQUIRE))
			draining.id[k++] = draining.id[i];
		else
			dp_state_release(draining.id[i]);
	}
	draining.n = k;
}

void
dp_state_free_all(void)
{
	for (uint32_t i = 0; i < DP_STATE_CHUNKS; i++) {
		rte_free(dp.conn_chunks[i]);
		dp.conn_chunks[i] = NULL;
	}
	free(dp.free_states);
	dp.free_states = NULL;
	dp.n_free_states = dp.n_states = 0;
}
