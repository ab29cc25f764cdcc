/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hierarchical shaper (docs/shaper.md): creation, configuration and
 * telemetry.  The per-packet paths are in shaper_enqueue.c and
 * shaper_dequeue.c, the state transitions they share in shaper_sched.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shaper.h"
#include "shaper_sched.h"

static const char *const shaper_drop_names[] = {
	"ok",
#define SHAPER_X_NAME(e, n, d) #n,
	SHAPER_DROP_REASONS(SHAPER_X_NAME)
#undef SHAPER_X_NAME
};

static const char *const shaper_drop_descs[] = {
	"accepted",
#define SHAPER_X_DESC(e, n, d) d,
	SHAPER_DROP_REASONS(SHAPER_X_DESC)
#undef SHAPER_X_DESC
};

const char *
shaper_drop_name(enum shaper_verdict v)
{
	return (unsigned int)v < SHAPER_DROP_MAX ? shaper_drop_names[v] : "?";
}

const char *
shaper_drop_desc(enum shaper_verdict v)
{
	return (unsigned int)v < SHAPER_DROP_MAX ? shaper_drop_descs[v] : "?";
}

static inline unsigned int
log2_floor(uint64_t v)
{
	return v == 0 ? 0 : 63u - (unsigned int)__builtin_clzll(v);
}

/* The profile of a rate: ticks per byte in 32.32 fixed point, 0 for none. */
static uint64_t
cpb_of(uint64_t hz, uint64_t bps)
{
	shaper_u128 q;

	if (bps == 0)
		return 0;
	q = ((SHAPER_FP(hz) * 8) + bps / 2) / bps;
	if (q > UINT64_MAX)
		return UINT64_MAX;
	return q == 0 ? 1 : (uint64_t)q;
}

static inline uint32_t
kbps_of(uint64_t bps)
{
	uint64_t k;

	if (bps == 0)
		return 0;
	k = (bps + 500) / 1000;
	if (k == 0)
		k = 1;
	return k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
}

/* Memory layout. */

struct shaper_layout {
	size_t conns, cfg, items, tenants, head, bm0, bm1, chunks, fq_chunks, total;
	uint32_t nslots, nchunks, nfq_chunks;
};

static size_t
align64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static bool
shaper_layout(const struct shaper_params *p, struct shaper_layout *l)
{
	uint32_t nslots;
	size_t off;

	if (p == NULL)
		return false;
	nslots = p->wheel_slots ? p->wheel_slots : 4096;
	if (p->hz == 0 || p->n_conns == 0 || p->n_tenants == 0 ||
	    p->n_tenants > SHAPER_MAX_TENANTS || p->n_items == 0 ||
	    p->n_items >= SHAPER_NIL || nslots < 64 || (nslots & (nslots - 1)) != 0 ||
	    nslots > (1u << 24) ||
	    (uint64_t)p->n_conns + p->n_tenants >= (1ull << 28) / 2)
		return false;
	l->nslots = nslots;
	l->nchunks = shw_nchunks(p->n_conns + p->n_tenants, nslots);
	if (l->nchunks >= (1u << 28))
		return false;
	/* A calendar bucket holding k connections spans at most k / 13 + 2
	 * chunks (a partly read first one, a partly written last one), and at
	 * most min(64 per tenant, one per connection) buckets are non-empty. */
	{
		uint64_t buckets = (uint64_t)SHAPER_FQ_BUCKETS * p->n_tenants;

		if (buckets > p->n_conns)
			buckets = p->n_conns;
		l->nfq_chunks = (uint32_t)((p->n_conns + SHW_IDS - 1) / SHW_IDS + 2 * buckets + 2);
	}
	off = align64(sizeof(struct shaper));
	l->conns = off;
	off = align64(off + (size_t)p->n_conns * sizeof(struct shaper_conn));
	l->cfg = off;
	off = align64(off + (size_t)p->n_conns * sizeof(struct shaper_conn_cfg));
	l->items = off;
	off = align64(off + (size_t)p->n_items * sizeof(struct shaper_item));
	l->tenants = off;
	off = align64(off + (size_t)p->n_tenants * sizeof(struct shaper_tenant));
	l->head = off;
	off = align64(off + (size_t)nslots * sizeof(uint32_t));
	l->bm0 = off;
	off = align64(off + (size_t)(nslots / 64) * sizeof(uint64_t));
	l->bm1 = off;
	off = align64(off + (size_t)((nslots + 4095) / 4096) * sizeof(uint64_t));
	l->chunks = off;
	off = align64(off + (size_t)l->nchunks * sizeof(struct shw_chunk));
	l->fq_chunks = off;
	off = align64(off + (size_t)l->nfq_chunks * sizeof(struct shw_chunk));
	l->total = off;
	return true;
}

size_t
shaper_memsize(const struct shaper_params *p)
{
	struct shaper_layout l;

	return p != NULL && shaper_layout(p, &l) ? l.total : 0;
}

static void
tenant_reset(struct shaper *sh, struct shaper_tenant *t, uint64_t now)
{
	memset(t, 0, sizeof(*t));
	t->qlimit = 4u << 20;
	t->qlimit_hard = 2 * t->qlimit;
	shaper_tenant_queues_clear(t);
	t->win_start = now;
	t->fq_window = (uint64_t)SHAPER_FQ_WINDOW_MIN << sh->qshift;
}

struct shaper *
shaper_init(void *mem, size_t len, const struct shaper_params *p, uint64_t now)
{
	struct shaper_layout l;
	struct shaper *sh = mem;
	struct shaper_wheel *w;
	uint8_t *base = mem;
	uint64_t g, slack_ns, quantum;

	if (mem == NULL || ((uintptr_t)mem & 63) != 0 || p == NULL ||
	    !shaper_layout(p, &l) || len < l.total)
		return NULL;
	memset(sh, 0, sizeof(*sh));
	sh->hz = p->hz;
	sh->n_conns = p->n_conns;
	sh->n_tenants = p->n_tenants;
	sh->n_items = p->n_items;
	quantum = p->fair_quantum ? p->fair_quantum : 4096;
	sh->qshift = log2_floor(quantum);
	sh->visit_pkts = p->tenant_visit_pkts ? p->tenant_visit_pkts : 8;
	shaper_set_watchdog(sh, p->watchdog_ms);
	sh->ewma_ticks = (uint64_t)((shaper_u128)(p->ewma_window_us ? p->ewma_window_us :
		1000) * p->hz / 1000000);
	if (sh->ewma_ticks == 0)
		sh->ewma_ticks = 1;

	sh->conns = (struct shaper_conn *)(base + l.conns);
	sh->cfg = (struct shaper_conn_cfg *)(base + l.cfg);
	memset(sh->cfg, 0, (size_t)p->n_conns * sizeof(struct shaper_conn_cfg));
	sh->items = (struct shaper_item *)(base + l.items);
	sh->tenants = (struct shaper_tenant *)(base + l.tenants);
	for (uint32_t i = 0; i < p->n_conns; i++) {
		struct shaper_conn *c = &sh->conns[i];

		memset(c, 0, sizeof(*c));
		c->head = SHAPER_NIL;
		c->tail = SHAPER_NIL;
		c->cursor = SHAPER_NIL;
		c->link = SHAPER_NIL;
		c->next_ts = now;
	}
	for (uint32_t i = 0; i < p->n_tenants; i++)
		tenant_reset(sh, &sh->tenants[i], now);
	sh->active_head = SHAPER_NIL;
	sh->active_tail = SHAPER_NIL;

	w = &sh->wheel;
	w->nslots = l.nslots;
	w->mask = l.nslots - 1;
	g = (uint64_t)((shaper_u128)(p->wheel_slot_ns ? p->wheel_slot_ns : 1000) *
		p->hz / 1000000000u);
	w->gshift = log2_floor(g ? g : 1);
	w->cur = now >> w->gshift;
	w->head = (uint32_t *)(base + l.head);
	w->bm0 = (uint64_t *)(base + l.bm0);
	w->bm1 = (uint64_t *)(base + l.bm1);
	w->chunks = (struct shw_chunk *)(base + l.chunks);
	w->nchunks = l.nchunks;
	sh->fq_chunks = (struct shw_chunk *)(base + l.fq_chunks);
	sh->n_fq_chunks = l.nfq_chunks;
	shaper_pools_reset(sh);

	/* Catch-up: 20 us or four slots, whichever is longer. */
	slack_ns = p->conn_slack_ns ? p->conn_slack_ns : 20000;
	sh->slack_fp = SHAPER_FP((shaper_u128)slack_ns * p->hz / 1000000000u);
	if (p->conn_slack_ns == 0 && sh->slack_fp < SHAPER_FP(4ull << w->gshift))
		sh->slack_fp = SHAPER_FP(4ull << w->gshift);
	sh->cut_slack_fp = SHAPER_FP((shaper_u128)p->cut_slack_ns * p->hz / 1000000000u);
	return sh;
}

struct shaper *
shaper_create(const struct shaper_params *p, uint64_t now)
{
	size_t len = shaper_memsize(p);
	struct shaper *sh;
	void *mem;

	if (len == 0)
		return NULL;
	mem = aligned_alloc(64, len);
	if (mem == NULL)
		return NULL;
	sh = shaper_init(mem, len, p, now);
	if (sh == NULL) {
		free(mem);
		return NULL;
	}
	sh->alloc = mem;
	return sh;
}

void
shaper_free(struct shaper *sh)
{
	if (sh != NULL)
		free(sh->alloc);
}

/* Configuration. */

int
shaper_tenant_config(struct shaper *sh, uint32_t tenant,
	const struct shaper_tenant_params *tp, uint64_t now)
{
	struct shaper_tenant *t;
	shaper_u128 tnow = SHAPER_TNOW(now);
	uint64_t cpb, burst;

	if (sh == NULL || tp == NULL || tenant >= sh->n_tenants)
		return -EINVAL;
	t = &sh->tenants[tenant];
	cpb = cpb_of(sh->hz, tp->rate_bps);
	burst = tp->burst_bytes;
	if (burst == 0) {
		burst = tp->rate_bps / 8 / 100000;	/* 10 us at the rate. */
		if (burst < (1ull << sh->qshift))
			burst = 1ull << sh->qshift;
	}
	if (cpb != 0) {
		if (t->cpb == 0) {
			/* Newly capped: start with a full bucket. */
			t->adm_ts = tnow - (shaper_u128)burst * cpb;
			t->tx_ts = t->adm_ts;
		} else {
			t->adm_ts = ts_rescale(t->adm_ts, tnow, t->cpb, cpb, burst);
			t->tx_ts = ts_rescale(t->tx_ts, tnow, t->cpb, cpb, burst);
		}
	}
	t->shared = cpb != 0 ? tp->shared : NULL;
	t->shared_id = tp->shared_id < SHAPER_SHARED_MAX ? tp->shared_id : 0;
	if (t->shared != NULL) {
		uint32_t n = __atomic_load_n(&t->shared->n, __ATOMIC_RELAXED);

		/* The sharers' count: the highest id, plus one. */
		while (n <= t->shared_id && !__atomic_compare_exchange_n(&t->shared->n, &n, t->shared_id + 1, true,
									 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
	if (tp->shared != NULL)
		shared_config(tp->shared, tnow, cpb, burst);
	t->rate_bps = tp->rate_bps;
	t->cpb = cpb;
	t->burst_bytes = burst;
	t->burst_fp = (shaper_u128)burst * cpb;
	t->qlimit = tp->qlimit_bytes ? tp->qlimit_bytes : 4u << 20;
	t->qlimit_hard = tp->qlimit_hard_bytes ? tp->qlimit_hard_bytes : 2 * t->qlimit;
	if (t->qlimit_hard < t->qlimit)
		t->qlimit_hard = t->qlimit;
	tenant_bp_update(sh, t, now);
	/* A blocked tenant re-evaluates its buckets at the next dequeue. */
	if (t->state == SHAPER_TENANT_WHEEL) {
		wheel_remove(sh, t->wpos);
		tenant_activate(sh, t);
	}
	return 0;
}

int
shaper_conn_attach(struct shaper *sh, uint32_t conn, uint32_t tenant,
	uint64_t cap_bps, uint64_t now)
{
	struct shaper_conn *c;

	if (sh == NULL || conn >= sh->n_conns || tenant >= sh->n_tenants)
		return -EINVAL;
	c = &sh->conns[conn];
	if (c->qitems != 0)
		return -EBUSY;
	if (c->flags & SHAPER_CF_ATTACHED)
		sh->tenants[c->tenant].n_conns--;
	c->tenant = (uint16_t)tenant;
	c->flags = SHAPER_CF_ATTACHED;
	c->state = SHAPER_CONN_IDLE;
	c->cursor = SHAPER_NIL;
	sh->cfg[conn].cap_kbps = kbps_of(cap_bps);
	sh->cfg[conn].cc_kbps = 0;
	c->cpb = sh->cfg[conn].cap_kbps ?
		cpb_of(sh->hz, (uint64_t)sh->cfg[conn].cap_kbps * 1000) : 0;
	c->ahead = 0;
	c->next_ts = now;
	c->next_frac = 0;
	c->vfinish = 0;
	sh->tenants[tenant].n_conns++;
	return 0;
}

int
shaper_conn_detach(struct shaper *sh, uint32_t conn)
{
	struct shaper_conn *c;

	if (sh == NULL || conn >= sh->n_conns)
		return -EINVAL;
	c = &sh->conns[conn];
	if (!(c->flags & SHAPER_CF_ATTACHED))
		return -EINVAL;
	if (c->qitems != 0)
		return -EBUSY;
	sh->tenants[c->tenant].n_conns--;
	c->flags = 0;
	return 0;
}

/* Apply a new pacing rate: the wait for the next packet is kept in bytes. */
static void
conn_rate_apply(struct shaper *sh, uint32_t ci, uint64_t now)
{
	struct shaper_conn *c = &sh->conns[ci];
	const struct shaper_conn_cfg *cf = &sh->cfg[ci];
	uint32_t k = cf->cap_kbps;
	uint64_t cpb;
	shaper_u128 now_fp = SHAPER_FP(now);
	shaper_u128 ts = conn_ts(c);

	if (cf->cc_kbps != 0 && (k == 0 || cf->cc_kbps < k))
		k = cf->cc_kbps;
	cpb = k ? cpb_of(sh->hz, (uint64_t)k * 1000) : 0;
	if (cpb == c->cpb)
		return;
	if (cpb == 0 || c->cpb == 0 || ts <= now_fp)
		ts = now_fp;	/* No credit: no burst. */
	else
		ts = now_fp + (ts - now_fp) / c->cpb * cpb;
	c->cpb = cpb;
	conn_ts_set(c, ts);
	if (conn_tx(c) == SHAPER_CONN_WHEEL) {
		wheel_remove(sh, c->link);
		conn_schedule(sh, &sh->tenants[c->tenant], ci);
	}
}

int
shaper_conn_set_cap(struct shaper *sh, uint32_t conn, uint64_t cap_bps,
	uint64_t now)
{
	if (sh == NULL || conn >= sh->n_conns ||
	    !(sh->conns[conn].flags & SHAPER_CF_ATTACHED))
		return -EINVAL;
	sh->cfg[conn].cap_kbps = kbps_of(cap_bps);
	conn_rate_apply(sh, conn, now);
	return 0;
}

int
shaper_conn_set_rate(struct shaper *sh, uint32_t conn, uint64_t rate_bps,
	uint64_t now)
{
	if (sh == NULL || conn >= sh->n_conns ||
	    !(sh->conns[conn].flags & SHAPER_CF_ATTACHED))
		return -EINVAL;
	sh->cfg[conn].cc_kbps = kbps_of(rate_bps);
	conn_rate_apply(sh, conn, now);
	return 0;
}

void
shaper_set_watchdog(struct shaper *sh, uint32_t watchdog_ms)
{
	sh->wd_ticks = (uint64_t)((shaper_u128)(watchdog_ms ? watchdog_ms : 100) * sh->hz / 1000);
}

void
shaper_charge(struct shaper *sh, uint32_t tenant, uint64_t bytes, uint64_t now)
{
	struct shaper_tenant *t;
	shaper_u128 tnow = SHAPER_TNOW(now);

	if (sh == NULL || tenant >= sh->n_tenants)
		return;
	t = &sh->tenants[tenant];
	t->charged += bytes;
	if (t->cpb != 0)
		tenant_adm_charge(t, bytes, tnow);
}

bool
shaper_tenant_full(struct shaper *sh, uint32_t tenant, uint64_t now)
{
	struct shaper_tenant *t;

	if (sh == NULL || tenant >= sh->n_tenants)
		return false;
	t = &sh->tenants[tenant];
	tenant_bp_update(sh, t, now);
	return t->full && !t->dropping;
}

/* Telemetry. */

void
shaper_tenant_stats(const struct shaper *sh, uint32_t tenant, uint64_t now,
	struct shaper_tenant_stats *st)
{
	const struct shaper_tenant *t;
	shaper_u128 tnow = SHAPER_TNOW(now);
	bool valid;
	double e;

	memset(st, 0, sizeof(*st));
	if (sh == NULL || tenant >= sh->n_tenants)
		return;
	t = &sh->tenants[tenant];
	st->rate_bps = t->rate_bps;
	st->burst_bytes = t->cpb ? t->burst_bytes : 0;
	e = shaper_ewma_fold(sh, t, now, &valid);
	st->achieved_bps = valid && e > 0 ? (uint64_t)(e + 0.5) : 0;
	if (t->cpb != 0) {
		shaper_u128 adm = t->shared ? shared_to_fp(t->shared, __atomic_load_n(&t->shared->ts,
						__ATOMIC_RELAXED)) : t->adm_ts;

		if (adm <= tnow) {
			shaper_u128 b = (tnow - adm) / t->cpb;

			st->tokens = b > t->burst_bytes ? (int64_t)t->burst_bytes : (int64_t)b;
		} else {
			st->tokens = -(int64_t)((adm - tnow) / t->cpb);
		}
	}
	st->queued_bytes = t->qbytes;
	st->queued_limit = t->qlimit;
	st->full = t->full;
	st->dropping = t->dropping ||
		(t->full && now >= t->full_since && now - t->full_since >= sh->wd_ticks);
	st->backpressure_ns = t->bp_ticks;
	if (t->full && now > t->full_since)
		st->backpressure_ns += now - t->full_since;
	st->backpressure_ns = (uint64_t)((shaper_u128)st->backpressure_ns * 1000000000u /
		sh->hz);
	st->watchdog_trips = t->wd_trips;
	st->conns = t->n_conns;
	st->enq_pkts = t->enq_pkts;
	st->enq_bytes = t->enq_bytes;
	st->deq_pkts = t->deq_pkts;
	st->deq_bytes = t->deq_bytes;
	st->cut_pkts = t->cut_pkts;
	st->cut_bytes = t->cut_bytes;
	st->charged_bytes = t->charged;
	memcpy(st->drop_pkts, t->drop_pkts, sizeof(st->drop_pkts));
	memcpy(st->drop_msgs, t->drop_msgs, sizeof(st->drop_msgs));
	st->flush_pkts = t->flush_pkts;
}

void
shaper_stats(const struct shaper *sh, struct shaper_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (sh == NULL)
		return;
	st->items = sh->n_items;
	st->items_used = sh->items_used;
	st->drops_detached = sh->drops_unattached;
	st->flushed = sh->flushed;
}

void
shaper_conn_stats(const struct shaper *sh, uint32_t conn,
	struct shaper_conn_stats *st)
{
	const struct shaper_conn *c;
	const struct shaper_conn_cfg *cf;
	uint32_t k;

	memset(st, 0, sizeof(*st));
	if (sh == NULL || conn >= sh->n_conns)
		return;
	c = &sh->conns[conn];
	cf = &sh->cfg[conn];
	st->attached = (c->flags & SHAPER_CF_ATTACHED) != 0;
	st->tenant = c->tenant;
	st->cap_bps = (uint64_t)cf->cap_kbps * 1000;
	st->cc_bps = (uint64_t)cf->cc_kbps * 1000;
	k = cf->cap_kbps;
	if (cf->cc_kbps != 0 && (k == 0 || cf->cc_kbps < k))
		k = cf->cc_kbps;
	st->pacing_bps = (uint64_t)k * 1000;
	st->queued_bytes = c->qbytes;
	st->queued_items = c->qitems;
}
