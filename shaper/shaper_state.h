/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's internal state.  Not part of the API: the tests and the data
 * plane use shaper.h only.  The public types come from shaper_types.h, not
 * shaper.h, so that the library's lower files (flush, the shared bucket, the
 * scheduling steps) stand below shaper.c, which calls them.
 *
 * Time.  `now` is in ticks.  Timestamps that accumulate packet times carry
 * 32 more bits of fraction (a tick in 32.32 fixed point, held in 128 bits
 * where it is computed), so that pacing at 100 Gbit/s on a nanosecond clock
 * does not drift: 4096 bytes last 327.68 ns.  A rate becomes a profile:
 * `cpb`, ticks per byte in 32.32 fixed point, and a packet's time is
 * bytes * cpb, one multiplication.
 *
 * Token buckets are kept as virtual times (GCRA): a bucket with rate r and
 * depth B is the time `ts` at which its tokens would be zero.  Tokens =
 * (now - ts) / cpb, and they are >= 0 when ts <= now.  Charging n bytes is
 * ts = max(ts, now - B * cpb) + n * cpb.  No refill arithmetic per packet.
 */
#ifndef SHAPER_STATE_H
#define SHAPER_STATE_H

#include <stdint.h>

#include "shaper_types.h"
#include "shaper_wheel.h"

__extension__ typedef unsigned __int128 shaper_u128;

#define SHAPER_NIL		UINT32_MAX
#define SHAPER_FQ_BUCKETS	64	/* Fair-share calendar; one bitmap word. */
#define SHAPER_FQ_WINDOW_MIN	16	/* Least admission window, in quanta. */
#define SHAPER_MAX_TENANTS	65535u

/*
 * A connection's transmission state (state bits 0-1).  Transmission sends
 * the FIFO's head; admission runs ahead of it at `cursor`, the first item
 * not yet admitted.  Every item before the cursor is admitted.
 */
enum shaper_conn_state {
	SHAPER_CONN_IDLE,	/* Empty queue. */
	SHAPER_CONN_WHEEL,	/* Head admitted, waiting for its pacing time. */
	SHAPER_CONN_RUN,	/* Head admitted and due: in the tenant's run list. */
	SHAPER_CONN_HOLD,	/* Head not admitted yet (head == cursor). */
};

#define SHAPER_CS_TX_MASK	0x03u
#define SHAPER_CS_FAIR		0x04u	/* In the tenant's fair calendar. */

/* Connection flags. */
#define SHAPER_CF_ATTACHED	0x01u
#define SHAPER_CF_MSG_OPEN	0x02u	/* Admission side: items are pre-paid until LAST. */
#define SHAPER_CF_ENQ_OPEN	0x04u	/* Enqueue side: a message was accepted and goes on. */
#define SHAPER_CF_ENQ_REFUSE	0x08u	/* Enqueue side: a message was refused and goes on. */
#define SHAPER_CF_REASON_SHIFT	4	/* Bits 4-6: the refusal's verdict. */
#define SHAPER_CF_REASON_MASK	0x70u

/* Item flags besides the caller's SHAPER_PKT_* (which take the low bits). */
#define SHAPER_IF_CALLER	0x00ffu
#define SHAPER_IF_ADMITTED	0x8000u	/* Charged, or pre-paid, or exempt. */

/*
 * Per-connection state: one cache line, so a million connections take
 * 64 MB.  Written by the owning lcore only.
 */
struct shaper_conn {
	uint64_t next_ts;	/* Pacing: earliest send of the head, ticks... */
	uint64_t cpb;		/* Pacing profile: ticks per byte, 32.32; 0 = unpaced. */
	uint64_t vfinish;	/* Fair share: bytes admitted, in the tenant's virtual time. */
	uint32_t next_frac;	/* ...and its fraction. */
	uint32_t head;		/* FIFO of items, SHAPER_NIL when empty. */
	uint32_t tail;
	uint32_t cursor;	/* First item not admitted, or SHAPER_NIL. */
	uint32_t qbytes;
	uint32_t qitems;
	uint32_t ahead;		/* Bytes admitted and not sent yet. */
	uint32_t link;		/* Next in the run list; the wheel position in WHEEL. */
	uint32_t unused;
	uint16_t tenant;
	uint8_t state;		/* SHAPER_CONN_* | SHAPER_CS_*. */
	uint8_t flags;		/* SHAPER_CF_*. */
};

_Static_assert(sizeof(struct shaper_conn) == 64, "connection state is one cache line");

/* A connection's configured rates: read only when a rate changes. */
struct shaper_conn_cfg {
	uint32_t cap_kbps;	/* Configured cap, 0 = none. */
	uint32_t cc_kbps;	/* Congestion-control rate, 0 = none. */
};

/* An item: one queued packet. */
struct shaper_item {
	uint64_t cookie;
	uint32_t bytes;
	uint32_t charge;
	uint32_t next;		/* Next item of the connection, or of the free list. */
	uint16_t flags;		/* SHAPER_PKT_* | SHAPER_IF_*. */
	uint16_t unused;
};

_Static_assert(sizeof(struct shaper_item) == 24, "items are small");

enum shaper_tenant_state {
	SHAPER_TENANT_IDLE,	/* Nothing due. */
	SHAPER_TENANT_ACTIVE,	/* In the active round robin. */
	SHAPER_TENANT_WHEEL,	/* Blocked by a bucket, until `wake`. */
};

enum shaper_block {
	SHAPER_BLOCK_TX,	/* Transmission bucket empty. */
	SHAPER_BLOCK_ADM,	/* Admission bucket empty and nothing admitted is due. */
};

struct shaper_tenant {
	/* Profile, from struct shaper_tenant_params. */
	uint64_t rate_bps;	/* 0: uncapped. */
	uint64_t burst_bytes;
	uint64_t cpb;		/* 0: uncapped. */
	shaper_u128 burst_fp;	/* burst_bytes * cpb. */
	uint64_t qlimit;
	uint64_t qlimit_hard;

	/* Buckets as virtual times (32.32 ticks). */
	shaper_u128 adm_ts;	/* Admission: charged per message (a copy of shared's, if any). */
	struct shaper_shared *shared; /* The admission bucket, when shared (shaper.h); NULL: adm_ts. */
	uint32_t shared_id;	/* Ours among its sharers. */
	shaper_u128 tx_ts;	/* Transmission: charged per packet sent. */

	/* Connections whose admitted head is due, in round robin. */
	uint32_t run_head;
	uint32_t run_tail;
	/* Connections with something to admit, by virtual finish time in
	 * quanta: a calendar of SHAPER_FQ_BUCKETS FIFOs from fq_v on, each a
	 * list of chunks of ids (first and last chunk). */
	uint64_t fq_v;
	uint64_t fq_map;
	/* A connection asks for admission while it has fewer bytes than this
	 * admitted ahead of what it sent: the largest charge seen (up to
	 * 16 MiB), at least SHAPER_FQ_WINDOW_MIN quanta. */
	uint64_t fq_window;
	uint32_t fq_head[SHAPER_FQ_BUCKETS];
	uint32_t fq_tail[SHAPER_FQ_BUCKETS];

	/* Scheduling among tenants. */
	uint32_t anext;		/* Next in the active list. */
	uint32_t wpos;		/* Position in the wheel. */
	uint64_t wake;		/* Ticks; when blocked. */
	uint8_t state;		/* enum shaper_tenant_state. */
	uint8_t block;		/* enum shaper_block. */
	uint32_t n_conns;

	/* Queues, backpressure and watchdog. */
	uint64_t qbytes;
	uint64_t full_since;
	uint64_t bp_ticks;
	uint64_t wd_trips;
	bool full;
	bool dropping;

	/* Achieved rate. */
	uint64_t win_start;
	uint64_t win_bytes;
	double ewma_bps;
	bool ewma_valid;

	/* Counters. */
	uint64_t enq_pkts;
	uint64_t enq_bytes;
	uint64_t deq_pkts;
	uint64_t deq_bytes;
	uint64_t cut_pkts;	/* Of enq and deq: sent at once by shaper_send_now(). */
	uint64_t cut_bytes;
	uint64_t charged;
	uint64_t drop_pkts[SHAPER_DROP_MAX];
	uint64_t drop_msgs[SHAPER_DROP_MAX];
	uint64_t flush_pkts;	/* Handed back by shaper_flush(). */
};

struct shaper {
	uint64_t hz;
	uint32_t n_conns;
	uint32_t n_tenants;
	uint32_t n_items;
	uint32_t qshift;	/* Fair quantum = 1 << qshift bytes. */
	uint32_t visit_pkts;
	shaper_u128 slack_fp;	/* Connection catch-up, 32.32 ticks. */
	shaper_u128 cut_slack_fp; /* Cut-through pacing tolerance, 32.32 ticks. */
	uint64_t wd_ticks;
	uint64_t ewma_ticks;

	struct shaper_conn *conns;
	struct shaper_conn_cfg *cfg;
	struct shaper_item *items;
	struct shaper_tenant *tenants;
	uint32_t free_item;
	uint32_t items_used;

	uint32_t active_head;
	uint32_t active_tail;

	struct shaper_wheel wheel;
	/* Chunks of the tenants' fair calendars (their own pool). */
	struct shw_chunk *fq_chunks;
	uint32_t fq_free;
	uint32_t n_fq_chunks;
	uint64_t flushed;	/* Items handed back by shaper_flush(). */

	uint64_t drops_unattached;
	void *alloc;		/* Set by shaper_create(). */
};

#define SHAPER_FP(ticks)	((shaper_u128)(ticks) << 32)
/*
 * Tenant buckets run on a biased clock, so that "now - burst" never goes
 * below zero (a full bucket at now = 0 is representable).  Times in ticks
 * are below 2^64, so biased 32.32 times stay below 2^97.
 */
#define SHAPER_TBIAS		((shaper_u128)1 << 96)
#define SHAPER_TNOW(ticks)	(SHAPER_FP(ticks) + SHAPER_TBIAS)
/* Small helpers. */

/*
 * The shared admission bucket's time (shaper.h, struct shaper_shared): 1/256
 * tick from SHAPER_SHARED_OFF ticks before its base, so that a full bucket
 * at the base (now - burst) is representable.
 */
#define SHAPER_SHARED_OFF	((uint64_t)1 << 40)
#define SHAPER_SHARED_SHIFT	24	/* 32.32 to 56.8 */

static inline shaper_u128
shared_origin(const struct shaper_shared *s)
{
	return SHAPER_TNOW(s->base) - SHAPER_FP(SHAPER_SHARED_OFF);
}

static inline uint64_t
shared_from_fp(const struct shaper_shared *s, shaper_u128 v)
{
	shaper_u128 o = shared_origin(s);

	return v > o ? (uint64_t)((v - o) >> SHAPER_SHARED_SHIFT) : 0;
}

static inline shaper_u128
shared_to_fp(const struct shaper_shared *s, uint64_t v)
{
	return ((shaper_u128)v << SHAPER_SHARED_SHIFT) + shared_origin(s);
}

/*
 * Sharer @id admitted @bytes: it no longer waits, and its count goes on
 * from at most two quanta behind the sharer furthest ahead (after idle).
 */
static inline void
shared_account(struct shaper_shared *s, uint32_t id, uint64_t bytes)
{
	uint64_t top = 0, vt = s->by[id].vt;

	for (uint32_t j = 0, n = __atomic_load_n(&s->n, __ATOMIC_RELAXED); j < n; j++) {
		uint64_t v = __atomic_load_n(&s->by[j].vt, __ATOMIC_RELAXED);

		top = v > top ? v : top;
	}
	if (vt + 2 * SHAPER_SHARED_QUANTUM < top)
		vt = top - 2 * SHAPER_SHARED_QUANTUM;
	__atomic_store_n(&s->by[id].vt, vt + bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&s->by[id].due, 0, __ATOMIC_RELAXED);
}

static inline shaper_u128
u128_max(shaper_u128 a, shaper_u128 b)
{
	return a > b ? a : b;
}

/* now - d, floored at zero. */
static inline shaper_u128
u128_sub_sat(shaper_u128 a, shaper_u128 b)
{
	return a > b ? a - b : 0;
}

static inline shaper_u128
conn_ts(const struct shaper_conn *c)
{
	return SHAPER_FP(c->next_ts) | c->next_frac;
}

static inline void
conn_ts_set(struct shaper_conn *c, shaper_u128 v)
{
	c->next_ts = (uint64_t)(v >> 32);
	c->next_frac = (uint32_t)v;
}

/* Connection state bits. */

static inline unsigned int
conn_tx(const struct shaper_conn *c)
{
	return c->state & SHAPER_CS_TX_MASK;
}

static inline void
conn_tx_set(struct shaper_conn *c, unsigned int tx)
{
	c->state = (uint8_t)((c->state & ~SHAPER_CS_TX_MASK) | tx);
}


/*
 * The achieved-rate EWMA of tenant t folded with its current window, if
 * that window is complete at `now`.  *valid says whether the
 * result holds a sample.
 */
static inline double
shaper_ewma_fold(const struct shaper *sh, const struct shaper_tenant *t, uint64_t now,
	bool *valid)
{
	uint64_t el;
	double s, e;

	*valid = t->ewma_valid;
	if (now < t->win_start)
		return t->ewma_bps;
	el = now - t->win_start;
	if (el < sh->ewma_ticks)
		return t->ewma_bps;
	s = (double)t->win_bytes * 8.0 * (double)sh->hz / (double)el;
	e = t->ewma_valid ? t->ewma_bps + (s - t->ewma_bps) * 0.25 : s;
	*valid = true;
	return e;
}

/* @t's queues empty and unscheduled: no run list, no fair calendar, not active. */
static inline void
shaper_tenant_queues_clear(struct shaper_tenant *t)
{
	t->qbytes = 0;
	t->run_head = SHAPER_NIL;
	t->run_tail = SHAPER_NIL;
	t->fq_map = 0;
	for (unsigned int b = 0; b < SHAPER_FQ_BUCKETS; b++) {
		t->fq_head[b] = SHAPER_NIL;
		t->fq_tail[b] = SHAPER_NIL;
	}
	t->anext = SHAPER_NIL;
	t->state = SHAPER_TENANT_IDLE;
}

/*
 * Every item, wheel chunk and fair-calendar chunk free, every wheel slot
 * empty (shaper_flush.c): the pools as shaper_init() leaves them.
 */
void shaper_pools_reset(struct shaper *sh);

/* Rescale a bucket's virtual time from one rate to another: a debt is kept
 * in bytes, a credit is kept in bytes up to the new burst. */
static inline shaper_u128
ts_rescale(shaper_u128 ts, shaper_u128 now_fp, uint64_t cpb_old, uint64_t cpb_new,
	uint64_t burst_new)
{
	shaper_u128 bytes;

	if (ts > now_fp) {
		bytes = (ts - now_fp) / cpb_old;
		return now_fp + bytes * cpb_new;
	}
	bytes = (now_fp - ts) / cpb_old;
	if (bytes > burst_new)
		bytes = burst_new;
	return u128_sub_sat(now_fp, bytes * cpb_new);
}

/* A shared admission bucket takes a rate (shaper_shared.c). */
void shared_config(struct shaper_shared *s, shaper_u128 tnow, uint64_t cpb, uint64_t burst);

#endif /* SHAPER_STATE_H */
