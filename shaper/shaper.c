/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hierarchical shaper (docs/shaper.md).  Each connection's FIFO has two
 * positions: the head, which transmission sends, and the cursor, the first
 * item admission has not charged yet.
 *
 *   enqueue: append to the FIFO.  The rest of an open message and exempt
 *     packets are admitted on arrival; a packet that needs a charge becomes
 *     the cursor and puts the connection in its tenant's fair calendar.
 *   dequeue: advance the timing wheel to `now`: connections whose pacing
 *     time has come join their tenant's run list.  Serve the active tenants
 *     in round robin.  A tenant first admits, while its admission bucket has
 *     tokens, the connection earliest in the fair calendar (charging a whole
 *     message at its first packet); then it sends the heads of its run list
 *     while its transmission bucket allows.  After a send the connection's
 *     pacing time advances by bytes / rate and it goes back on the wheel.
 *
 * Each step is O(1) whatever the number of connections.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shaper_priv.h"

#define SHAPER_FP(ticks)	((shaper_u128)(ticks) << 32)
/*
 * Tenant buckets run on a biased clock, so that "now - burst" never goes
 * below zero (a full bucket at now = 0 is representable).  Times in ticks
 * are below 2^64, so biased 32.32 times stay below 2^97.
 */
#define SHAPER_TBIAS		((shaper_u128)1 << 96)
#define SHAPER_TNOW(ticks)	(SHAPER_FP(ticks) + SHAPER_TBIAS)

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

/* Small helpers. */

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

/* A biased tenant time, rounded up to ticks. */
static inline uint64_t
tnow_ceil_ticks(shaper_u128 v)
{
	return (uint64_t)((v - SHAPER_TBIAS + 0xffffffffu) >> 32);
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

/* Rescale a bucket's virtual time from one rate to another: a debt is kept
 * in bytes, a credit is kept in bytes up to the new burst. */
static shaper_u128
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
	t->run_head = SHAPER_NIL;
	t->run_tail = SHAPER_NIL;
	for (unsigned int b = 0; b < SHAPER_FQ_BUCKETS; b++) {
		t->fq_head[b] = SHAPER_NIL;
		t->fq_tail[b] = SHAPER_NIL;
	}
	t->anext = SHAPER_NIL;
	t->state = SHAPER_TENANT_IDLE;
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
	for (uint32_t i = 0; i < p->n_items; i++)
		sh->items[i].next = i + 1 < p->n_items ? i + 1 : SHAPER_NIL;
	sh->free_item = 0;
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
	for (uint32_t i = 0; i < l.nslots; i++)
		w->head[i] = SHW_NIL;
	memset(w->bm0, 0, (l.nslots / 64) * sizeof(uint64_t));
	memset(w->bm1, 0, ((l.nslots + 4095) / 4096) * sizeof(uint64_t));
	for (uint32_t i = 0; i < l.nchunks; i++)
		w->chunks[i].next = i + 1 < l.nchunks ? i + 1 : SHW_NIL;
	w->free_chunk = 0;
	sh->fq_chunks = (struct shw_chunk *)(base + l.fq_chunks);
	for (uint32_t i = 0; i < l.nfq_chunks; i++)
		sh->fq_chunks[i].next = i + 1 < l.nfq_chunks ? i + 1 : SHW_NIL;
	sh->fq_free = 0;

	/* Catch-up: 20 us or four slots, whichever is longer. */
	slack_ns = p->conn_slack_ns ? p->conn_slack_ns : 20000;
	sh->slack_fp = SHAPER_FP((shaper_u128)slack_ns * p->hz / 1000000000u);
	if (p->conn_slack_ns == 0 && sh->slack_fp < SHAPER_FP(4ull << w->gshift))
		sh->slack_fp = SHAPER_FP(4ull << w->gshift);
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

/* Wheel entities: connection ids, then tenants after them. */

static inline uint32_t *
entity_pos(struct shaper *sh, uint32_t id)
{
	if (id < sh->n_conns)
		return &sh->conns[id].link;
	return &sh->tenants[id - sh->n_conns].wpos;
}

static void
wheel_remove(struct shaper *sh, uint32_t pos)
{
	uint32_t moved_pos = 0;
	uint32_t moved = shw_remove(&sh->wheel, pos, &moved_pos);

	if (moved != SHW_NIL)
		*entity_pos(sh, moved) = moved_pos;
}

/* Tenants. */

static inline void
tenant_activate(struct shaper *sh, struct shaper_tenant *t)
{
	uint32_t tid = (uint32_t)(t - sh->tenants);

	t->state = SHAPER_TENANT_ACTIVE;
	t->anext = SHAPER_NIL;
	if (sh->active_tail == SHAPER_NIL)
		sh->active_head = tid;
	else
		sh->tenants[sh->active_tail].anext = tid;
	sh->active_tail = tid;
}

/*
 * A connection of tenant `t` became due.  An idle tenant becomes active.  A
 * tenant blocked on admission may now have something pre-paid to send, so it
 * is woken to look; one blocked on transmission stays blocked.  A tenant
 * whose slot is being popped (wpos is SHW_NIL) is no longer in the wheel's
 * lists; its entry is skipped when reached.
 */
static inline void
tenant_kick(struct shaper *sh, struct shaper_tenant *t)
{
	if (t->state == SHAPER_TENANT_IDLE) {
		tenant_activate(sh, t);
	} else if (t->state == SHAPER_TENANT_WHEEL && t->block == SHAPER_BLOCK_ADM) {
		if (t->wpos != SHW_NIL)
			wheel_remove(sh, t->wpos);
		tenant_activate(sh, t);
	}
}

/* Queue limits, backpressure and watchdog, evaluated at `now`. */
static void
tenant_bp_update(struct shaper *sh, struct shaper_tenant *t, uint64_t now)
{
	bool full = t->qbytes >= t->qlimit;

	if (full != t->full) {
		if (full)
			t->full_since = now;
		else if (now > t->full_since)
			t->bp_ticks += now - t->full_since;
		t->full = full;
	}
	if (t->full && !t->dropping && now >= t->full_since &&
	    now - t->full_since >= sh->wd_ticks) {
		t->dropping = true;
		t->wd_trips++;
	}
	if (t->dropping && t->qbytes <= t->qlimit / 2)
		t->dropping = false;
}

static double
ewma_fold(const struct shaper *sh, const struct shaper_tenant *t, uint64_t now,
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

static inline void
tenant_ewma_tick(struct shaper *sh, struct shaper_tenant *t, uint64_t now)
{
	if (now >= t->win_start && now - t->win_start >= sh->ewma_ticks) {
		t->ewma_bps = ewma_fold(sh, t, now, &t->ewma_valid);
		t->win_start = now;
		t->win_bytes = 0;
	}
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

/* The run list: FIFO of due connections, threaded through conn.link. */

static inline void
run_push(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	sh->conns[ci].link = SHAPER_NIL;
	conn_tx_set(&sh->conns[ci], SHAPER_CONN_RUN);
	if (t->run_tail == SHAPER_NIL)
		t->run_head = ci;
	else
		sh->conns[t->run_tail].link = ci;
	t->run_tail = ci;
}

static inline uint32_t
run_pop(struct shaper *sh, struct shaper_tenant *t)
{
	uint32_t ci = t->run_head;

	t->run_head = sh->conns[ci].link;
	if (t->run_head == SHAPER_NIL)
		t->run_tail = SHAPER_NIL;
	else
		__builtin_prefetch(&sh->conns[t->run_head]);
	return ci;
}

/*
 * The fair calendar.  Each connection has a virtual finish time: the bytes
 * it was admitted.  Connections with something to admit wait in the bucket
 * of their finish time; the tenant admits from the earliest non-empty
 * bucket, FIFO within it.  That is deficit round robin with a quantum of
 * 1 << qshift bytes, except that rounds in which nobody could send are
 * skipped in one step instead of being walked.
 *
 * A connection (re)joins no earlier than the tenant's virtual time fq_v, so
 * time spent out of the calendar earns no credit.  It is out of the calendar
 * only when it has nothing to admit (idle, as far as admission goes) or has
 * a whole window admitted ahead of what it sent, that is when its own pace
 * (cap, DCQCN) is what holds it back: then it is not owed anything, and
 * what it leaves goes to the others.
 */
static inline void
fair_push(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	struct shaper_conn *c = &sh->conns[ci];
	uint64_t floor = t->fq_v << sh->qshift;
	struct shw_chunk *ch;
	uint32_t slot, k;
	uint64_t b;

	if (c->vfinish < floor)
		c->vfinish = floor;
	b = c->vfinish >> sh->qshift;
	if (b - t->fq_v >= SHAPER_FQ_BUCKETS)
		b = t->fq_v + SHAPER_FQ_BUCKETS - 1;
	slot = (uint32_t)b & (SHAPER_FQ_BUCKETS - 1);
	c->state |= SHAPER_CS_FAIR;
	k = t->fq_tail[slot];
	if (k == SHW_NIL || sh->fq_chunks[k].n == SHW_IDS) {
		/* The pool is sized so that this cannot fail (shaper_layout). */
		uint32_t nk = sh->fq_free;

		ch = &sh->fq_chunks[nk];
		sh->fq_free = ch->next;
		ch->next = SHW_NIL;
		ch->n = 0;
		ch->rd = 0;
		if (k == SHW_NIL)
			t->fq_head[slot] = nk;
		else
			sh->fq_chunks[k].next = nk;
		t->fq_tail[slot] = nk;
		k = nk;
	}
	ch = &sh->fq_chunks[k];
	ch->id[ch->n++] = ci;
	t->fq_map |= 1ull << slot;
}

/* How many connections ahead admission prefetches; half as far for their
 * cursor items, which need the connection first. */
#define SHAPER_FQ_PREFETCH	8

/* The id `ahead` places after the first of a bucket, or SHAPER_NIL. */
static inline uint32_t
fair_peek(const struct shaper *sh, uint32_t k, unsigned int ahead)
{
	const struct shw_chunk *ch = &sh->fq_chunks[k];
	unsigned int i = ch->rd + ahead;

	if (i < ch->n)
		return ch->id[i];
	if (ch->next == SHW_NIL)
		return SHAPER_NIL;
	i -= ch->n;
	ch = &sh->fq_chunks[ch->next];
	return i < ch->n ? ch->id[i] : SHAPER_NIL;
}

/*
 * The next connection to admit, or SHAPER_NIL after re-filing a far one.
 * A bucket is a FIFO of chunks of ids, so the connections to come can be
 * prefetched before they are needed: threaded through the connections,
 * each pop would wait for one cold cache line after another.
 */
static inline uint32_t
fair_pop(struct shaper *sh, struct shaper_tenant *t)
{
	unsigned int base = (unsigned int)t->fq_v & (SHAPER_FQ_BUCKETS - 1);
	uint64_t rot = base ? (t->fq_map >> base) | (t->fq_map << (64 - base)) : t->fq_map;
	struct shw_chunk *ch;
	struct shaper_conn *c;
	unsigned int slot;
	uint32_t ci, k, pf;

	t->fq_v += (unsigned int)__builtin_ctzll(rot);
	slot = (unsigned int)t->fq_v & (SHAPER_FQ_BUCKETS - 1);
	k = t->fq_head[slot];
	ch = &sh->fq_chunks[k];
	ci = ch->id[ch->rd++];
	if (ch->rd == ch->n) {
		/* Chunk used up: free it (a last chunk too; it is empty). */
		t->fq_head[slot] = ch->next;
		if (ch->next == SHW_NIL) {
			t->fq_tail[slot] = SHW_NIL;
			t->fq_map &= ~(1ull << slot);
		}
		ch->next = sh->fq_free;
		sh->fq_free = k;
	} else {
		pf = fair_peek(sh, k, SHAPER_FQ_PREFETCH - 1);
		if (pf != SHAPER_NIL)
			__builtin_prefetch(&sh->conns[pf]);
		pf = fair_peek(sh, k, SHAPER_FQ_PREFETCH / 2 - 1);
		if (pf != SHAPER_NIL && sh->conns[pf].cursor != SHAPER_NIL)
			__builtin_prefetch(&sh->items[sh->conns[pf].cursor]);
	}
	c = &sh->conns[ci];
	c->state &= ~SHAPER_CS_FAIR;
	if ((c->vfinish >> sh->qshift) > t->fq_v) {
		if (t->fq_map == 0) {
			/* Alone: the virtual time moves to it. */
			t->fq_v = c->vfinish >> sh->qshift;
			return ci;
		}
		fair_push(sh, t, ci);
		return SHAPER_NIL;
	}
	return ci;
}

/* Can connection c ask for admission?  Then make sure it is in the calendar. */
static inline void
fair_offer(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	struct shaper_conn *c = &sh->conns[ci];

	if (c->cursor == SHAPER_NIL || (c->state & SHAPER_CS_FAIR) ||
	    c->ahead >= t->fq_window)
		return;
	fair_push(sh, t, ci);
	if (t->state == SHAPER_TENANT_IDLE)
		tenant_activate(sh, t);
}

/* Admission. */

/*
 * Admit what needs no charge at item ii: the rest of an open message (up to
 * its LAST), and exempt packets.  Returns false at an item that needs a
 * charge.  A first packet while a message is open starts a new one (a
 * retransmission from its start): the open one is over.
 */
static inline bool
item_prepaid(struct shaper_conn *c, struct shaper_item *it)
{
	if ((c->flags & SHAPER_CF_MSG_OPEN) && !(it->flags & SHAPER_PKT_FIRST)) {
		if (it->flags & SHAPER_PKT_LAST)
			c->flags &= ~SHAPER_CF_MSG_OPEN;
	} else {
		c->flags &= ~SHAPER_CF_MSG_OPEN;
		if (!(it->flags & SHAPER_PKT_EXEMPT))
			return false;
	}
	it->flags |= SHAPER_IF_ADMITTED;
	c->ahead += it->bytes;
	return true;
}

/* Charge an item that needs it: the whole message at its first packet,
 * else the packet. */
static inline void
item_charge(struct shaper_tenant *t, struct shaper_conn *c, struct shaper_item *it,
	shaper_u128 tnow)
{
	uint64_t charge = it->bytes;

	if ((it->flags & SHAPER_PKT_FIRST) && it->charge != 0) {
		charge = it->charge;
		if (!(it->flags & SHAPER_PKT_LAST))
			c->flags |= SHAPER_CF_MSG_OPEN;
		if (charge > t->fq_window)
			t->fq_window = charge < (16u << 20) ? charge : 16u << 20;
	}
	it->flags |= SHAPER_IF_ADMITTED;
	c->ahead += it->bytes;
	if (t->cpb != 0)
		t->adm_ts = u128_max(t->adm_ts, tnow - t->burst_fp) +
			(shaper_u128)charge * t->cpb;
	c->vfinish += charge;
	t->charged += charge;
}

static inline void conn_schedule(struct shaper *sh, struct shaper_tenant *t,
	uint32_t ci);

/* Admit the unit at the cursor of connection ci and what follows it free. */
static void
conn_admit(struct shaper *sh, struct shaper_tenant *t, uint32_t ci, shaper_u128 tnow)
{
	struct shaper_conn *c = &sh->conns[ci];
	uint32_t x = c->cursor;

	item_charge(t, c, &sh->items[x], tnow);
	x = sh->items[x].next;
	while (x != SHAPER_NIL && item_prepaid(c, &sh->items[x]))
		x = sh->items[x].next;
	c->cursor = x;
	if (conn_tx(c) == SHAPER_CONN_HOLD)
		conn_schedule(sh, t, ci);
	fair_offer(sh, t, ci);
}

/* Connections. */

/* A connection whose head is admitted is due at its timestamp. */
static inline void
conn_schedule(struct shaper *sh, struct shaper_tenant *t, uint32_t ci)
{
	struct shaper_conn *c = &sh->conns[ci];

	if (c->cpb != 0 && !shw_due(&sh->wheel, c->next_ts)) {
		conn_tx_set(c, SHAPER_CONN_WHEEL);
		shw_insert(&sh->wheel, ci, c->next_ts, &c->link);
		return;
	}
	run_push(sh, t, ci);
	tenant_kick(sh, t);
}

/* Hand the head item of connection `ci` to the caller. */
static inline void
conn_send(struct shaper *sh, struct shaper_tenant *t, uint32_t ci, uint64_t now,
	shaper_u128 now_fp, shaper_u128 tnow, struct shaper_out *o)
{
	struct shaper_conn *c = &sh->conns[ci];
	uint32_t ii = c->head;
	struct shaper_item *it = &sh->items[ii];
	uint32_t bytes = it->bytes;

	if (it->next != SHAPER_NIL)
		__builtin_prefetch(&sh->items[it->next]);
	c->head = it->next;
	if (c->head == SHAPER_NIL)
		c->tail = SHAPER_NIL;
	c->qbytes -= bytes;
	c->qitems--;
	t->qbytes -= bytes;
	o->cookie = it->cookie;
	o->conn = ci;
	o->bytes = bytes;
	o->conn_queued = c->qbytes;
	o->flags = it->flags & SHAPER_IF_CALLER;
	c->ahead -= bytes;
	it->next = sh->free_item;
	sh->free_item = ii;
	sh->items_used--;

	if (t->cpb != 0)
		t->tx_ts = u128_max(t->tx_ts, tnow - t->burst_fp) +
			(shaper_u128)bytes * t->cpb;
	t->deq_pkts++;
	t->deq_bytes += bytes;
	t->win_bytes += bytes;
	if (t->full || t->dropping)
		tenant_bp_update(sh, t, now);

	if (c->cpb != 0)
		conn_ts_set(c, u128_max(conn_ts(c), u128_sub_sat(now_fp, sh->slack_fp)) +
			(shaper_u128)bytes * c->cpb);
	if (c->qitems == 0) {
		conn_tx_set(c, SHAPER_CONN_IDLE);
	} else if (c->head == c->cursor) {
		/* Everything before the cursor is admitted, nothing after. */
		conn_tx_set(c, SHAPER_CONN_HOLD);
	} else if (c->cpb == 0 || shw_due(&sh->wheel, c->next_ts)) {
		run_push(sh, t, ci);
	} else {
		conn_tx_set(c, SHAPER_CONN_WHEEL);
		shw_insert(&sh->wheel, ci, c->next_ts, &c->link);
	}
	/* Room, perhaps, to admit more. */
	fair_offer(sh, t, ci);
}

enum serve_result {
	SERVE_STAY,		/* Visit over, more to send. */
	SERVE_IDLE,		/* Nothing due. */
	SERVE_BLOCK,		/* A bucket is empty until t->wake. */
};

/*
 * One visit of a tenant.  Admission and transmission are two buckets with
 * the same rate.  Admission comes first and runs ahead: whenever its bucket
 * has tokens, the connection first in fair order is charged for its next
 * message (or packet), while it has less than fq_window bytes admitted
 * ahead of what it has sent.  Were admission to wait for transmission, it
 * would starve while pre-paid packets keep the transmission bucket busy
 * (its tokens would overflow and be lost), and a connection would lose its
 * turn while its previous message is still on its way.  The window is the
 * largest charge seen, so that a connection of small messages can take as
 * many bytes per turn as one of large messages.  Transmission then sends the
 * heads of the run list in round robin, each as the transmission bucket
 * allows.
 */
static enum serve_result
tenant_serve(struct shaper *sh, struct shaper_tenant *t, uint64_t now,
	struct shaper_out *out, unsigned int *np, unsigned int max)
{
	shaper_u128 now_fp = SHAPER_FP(now);
	shaper_u128 tnow = SHAPER_TNOW(now);
	unsigned int n = *np;
	unsigned int budget = sh->visit_pkts;
	bool capped = t->cpb != 0;
	enum serve_result r;

	for (;;) {
		uint32_t ci;

		if (n == max || budget == 0) {
			r = SERVE_STAY;
			break;
		}
		if (t->fq_map != 0 && (!capped || t->adm_ts <= tnow)) {
			ci = fair_pop(sh, t);
			if (ci != SHAPER_NIL)
				conn_admit(sh, t, ci, tnow);
			continue;
		}
		if (t->run_head == SHAPER_NIL) {
			if (t->fq_map == 0) {
				r = SERVE_IDLE;
			} else {
				t->wake = tnow_ceil_ticks(t->adm_ts);
				t->block = SHAPER_BLOCK_ADM;
				r = SERVE_BLOCK;
			}
			break;
		}
		if (capped && t->tx_ts > tnow) {
			t->wake = tnow_ceil_ticks(t->tx_ts);
			t->block = SHAPER_BLOCK_TX;
			r = SERVE_BLOCK;
			break;
		}
		ci = run_pop(sh, t);
		conn_send(sh, t, ci, now, now_fp, tnow, &out[n++]);
		budget--;
	}
	*np = n;
	return r;
}

/* A wheel entry whose slot has come. */
static inline void
wheel_fire(struct shaper *sh, uint32_t id, uint64_t now_idx)
{
	struct shaper_wheel *w = &sh->wheel;

	if (id < sh->n_conns) {
		struct shaper_conn *c = &sh->conns[id];
		struct shaper_tenant *t;

		if ((c->next_ts >> w->gshift) > now_idx) {
			/* Filed at the horizon; not due yet. */
			shw_insert(w, id, c->next_ts, &c->link);
			return;
		}
		__builtin_prefetch(&sh->items[c->head]);
		t = &sh->tenants[c->tenant];
		run_push(sh, t, id);
		tenant_kick(sh, t);
	} else {
		struct shaper_tenant *t = &sh->tenants[id - sh->n_conns];

		if (t->state != SHAPER_TENANT_WHEEL)
			return;		/* Kicked while its slot was popped. */
		if ((t->wake >> w->gshift) > now_idx) {
			shw_insert(w, id, t->wake, &t->wpos);
			return;
		}
		tenant_activate(sh, t);
	}
}

/* Due entities are gathered in batches of this many before they are used. */
#define SHAPER_FIRE_BATCH	64

static void
wheel_fire_batch(struct shaper *sh, const uint32_t *ids, unsigned int n,
	uint64_t now_idx)
{
	for (unsigned int i = 0; i < n; i++)
		wheel_fire(sh, ids[i], now_idx);
}

/*
 * Pop every slot up to `now`.  The ids of due entities are copied out of the
 * chunks first, each entity prefetched as it is copied, and only then used:
 * a slot's entities are unrelated cache lines, and this way their misses
 * overlap instead of following one another.
 */
static void
wheel_advance(struct shaper *sh, uint64_t now)
{
	struct shaper_wheel *w = &sh->wheel;
	uint64_t now_idx = now >> w->gshift;
	uint32_t batch[SHAPER_FIRE_BATCH];
	unsigned int nb = 0;
	uint64_t idx;

	if (now_idx < w->cur)
		return;
	if (now_idx - w->cur >= w->nslots)
		w->cur = now_idx - w->nslots + 1;
	while (w->cur <= now_idx && shw_find(w, w->cur, now_idx, &idx)) {
		uint32_t k;

		w->cur = idx + 1;
		k = shw_detach(w, idx);
		/* The slot's tenants are out of the wheel's lists from now on:
		 * a connection fired before them may kick them (tenant_kick). */
		for (uint32_t x = k; x != SHW_NIL; x = w->chunks[x].next)
			for (unsigned int i = 0; i < w->chunks[x].n; i++)
				if (w->chunks[x].id[i] >= sh->n_conns)
					sh->tenants[w->chunks[x].id[i] - sh->n_conns].wpos = SHW_NIL;
		while (k != SHW_NIL) {
			struct shw_chunk *ch = &w->chunks[k];
			uint32_t next = ch->next;

			for (unsigned int i = 0; i < ch->n; i++) {
				uint32_t id = ch->id[i];

				if (id < sh->n_conns)
					__builtin_prefetch(&sh->conns[id]);
				if (nb == SHAPER_FIRE_BATCH) {
					wheel_fire_batch(sh, batch, nb, now_idx);
					nb = 0;
				}
				batch[nb++] = id;
			}
			shw_chunk_free(w, k);
			k = next;
		}
	}
	wheel_fire_batch(sh, batch, nb, now_idx);
	w->cur = now_idx + 1;
}

unsigned int
shaper_dequeue(struct shaper *sh, uint64_t now, struct shaper_out *out,
	unsigned int max)
{
	unsigned int n = 0;

	wheel_advance(sh, now);
	while (n < max && sh->active_head != SHAPER_NIL) {
		uint32_t tid = sh->active_head;
		struct shaper_tenant *t = &sh->tenants[tid];
		enum serve_result r;

		sh->active_head = t->anext;
		if (sh->active_head == SHAPER_NIL)
			sh->active_tail = SHAPER_NIL;
		r = tenant_serve(sh, t, now, out, &n, max);
		tenant_ewma_tick(sh, t, now);
		if (r == SERVE_STAY) {
			tenant_activate(sh, t);
		} else if (r == SERVE_BLOCK) {
			t->state = SHAPER_TENANT_WHEEL;
			shw_insert(&sh->wheel, sh->n_conns + tid, t->wake, &t->wpos);
		} else {
			t->state = SHAPER_TENANT_IDLE;
		}
	}
	return n;
}

uint64_t
shaper_next_deadline(const struct shaper *sh, uint64_t now)
{
	const struct shaper_wheel *w = &sh->wheel;
	uint64_t idx, at;

	if (sh->active_head != SHAPER_NIL)
		return now;
	if (!shw_find(w, w->cur, w->cur + w->nslots - 1, &idx))
		return UINT64_MAX;
	at = idx << w->gshift;
	return at < now ? now : at;
}

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
		t->adm_ts = u128_max(t->adm_ts, tnow - t->burst_fp) +
			(shaper_u128)bytes * t->cpb;
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
	e = ewma_fold(sh, t, now, &valid);
	st->achieved_bps = valid && e > 0 ? (uint64_t)(e + 0.5) : 0;
	if (t->cpb != 0) {
		if (t->adm_ts <= tnow) {
			shaper_u128 b = (tnow - t->adm_ts) / t->cpb;

			st->tokens = b > t->burst_bytes ? (int64_t)t->burst_bytes : (int64_t)b;
		} else {
			st->tokens = -(int64_t)((t->adm_ts - tnow) / t->cpb);
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
	st->charged_bytes = t->charged;
	memcpy(st->drop_pkts, t->drop_pkts, sizeof(st->drop_pkts));
	memcpy(st->drop_msgs, t->drop_msgs, sizeof(st->drop_msgs));
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
