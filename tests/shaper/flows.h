/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An event-driven driver for the shaper on a virtual clock, for the
 * cut-through tests.  Unlike sim.h, whose connections post whole messages at
 * poll times, each source here posts packet by packet at the line rate of
 * its tenant's port, messages separated by random idle gaps (so that a
 * connection's queue empties and fills again), or keeps `target` bytes
 * queued (backlogged).  Between packets a poll loop dequeues at jittered
 * intervals.  With `cut` set every packet is first offered to
 * shaper_send_now() and queued only when that refuses.  With a second
 * shaper `sh2` the driver plays the data plane's two DCQCN stages: what
 * leaves stage 1 (at once or from its queue) enters stage 2 the same way,
 * and stage 1 is dequeued only as far as stage 2 has free items.
 *
 * Every packet that leaves is checked: its connection's sequence, its
 * tenant's token bucket (a GCRA of the tenant's rate and burst, the bound
 * the transmission bucket enforces) and its connection's pacing (rate, the
 * catch-up slack as depth, one wheel slot early at most).  The totals at
 * the end assert with CUnit.
 */
#ifndef SHAPER_TEST_FLOWS_H
#define SHAPER_TEST_FLOWS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "shaper.h"
#include "sim.h"

/*
 * The envelope of a rate and a depth (a GCRA): a packet conforms when the
 * theoretical arrival time is not later than its departure (plus
 * `early_ns`).  No rate means no check.
 */
struct env {
	double ns_per_byte;
	double depth_ns;
	double early_ns;
	double tat;		/* Theoretical arrival time, ns. */
	uint64_t violations;
	double worst_ns;
};

static inline void
env_init(struct env *e, uint64_t bps, uint64_t depth_bytes, double early_ns)
{
	memset(e, 0, sizeof(*e));
	if (bps == 0)
		return;
	e->ns_per_byte = 8e9 / (double)bps;
	e->depth_ns = (double)depth_bytes * e->ns_per_byte;
	e->early_ns = early_ns;
	e->tat = -1e18;
}

static inline void
env_send(struct env *e, uint64_t now, uint32_t bytes)
{
	double t = (double)now;

	if (e->ns_per_byte == 0)
		return;
	if (e->tat < t - e->depth_ns)
		e->tat = t - e->depth_ns;
	if (e->tat > t + e->early_ns + 1.0) {
		e->violations++;
		if (e->tat - t > e->worst_ns)
			e->worst_ns = e->tat - t;
	}
	e->tat += (double)bytes * e->ns_per_byte;
}

struct src {
	uint32_t tenant;
	uint32_t msg;		/* Payload bytes per message. */
	uint16_t xflags;	/* Added to every packet (SHAPER_PKT_EXEMPT). */
	bool per_packet;	/* No message charge. */
	bool silent;
	bool stopping;		/* Goes silent at the end of its message. */
	uint64_t target;	/* Backlogged: bytes kept queued; 0: gaps. */
	double ns_per_byte;	/* Line rate. */
	double mean_gap_ns;	/* Idle time between messages, uniform in [0, 2x]. */
	double next;		/* Arrival of the next packet, ns; HUGE_VAL: none. */
	uint32_t pkt, npkts;
	uint64_t seq_enq, seq_deq, reorders;
	uint64_t cut, queued, refused, switches;
	bool last_cut;
	uint64_t held[2];	/* Bytes in stage 1 and stage 2 (as the test sees them). */
	uint64_t posted, sent, win_sent;
	uint64_t charge;	/* What the shaper should have charged for it. */
	struct env pace;
};

struct drv {
	struct shaper *sh, *sh2;
	uint64_t now;
	bool cut;
	struct src *src;	/* By connection id. */
	uint32_t n;
	uint32_t *heap, *pos;	/* Sources by next arrival. */
	double next_poll;
	uint32_t step_min, step_max;
	uint64_t rng;
	uint64_t t0, t1;
	uint32_t n_tenants;
	struct env *tenv;	/* Per tenant, at the last stage. */
	uint64_t *twin;		/* Per tenant: bytes sent in the window. */
	uint32_t max_items;	/* Most items queued at any poll. */
	uint64_t polls;
	/* Called after every poll, for checks. */
	void (*on_poll)(struct drv *d);
};

static inline double
drv_unif(struct drv *d)
{
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return (double)((d->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static inline bool
heap_less(const struct drv *d, uint32_t a, uint32_t b)
{
	return d->src[d->heap[a]].next < d->src[d->heap[b]].next;
}

static inline void
heap_swap(struct drv *d, uint32_t a, uint32_t b)
{
	uint32_t x = d->heap[a];

	d->heap[a] = d->heap[b];
	d->heap[b] = x;
	d->pos[d->heap[a]] = a;
	d->pos[d->heap[b]] = b;
}

/* Restore the heap after source i's arrival time changed. */
static inline void
heap_fix(struct drv *d, uint32_t i)
{
	uint32_t k = d->pos[i];

	while (k > 0 && heap_less(d, k, (k - 1) / 2)) {
		heap_swap(d, k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
	for (;;) {
		uint32_t l = 2 * k + 1, m = k;

		if (l < d->n && heap_less(d, l, m))
			m = l;
		if (l + 1 < d->n && heap_less(d, l + 1, m))
			m = l + 1;
		if (m == k)
			break;
		heap_swap(d, k, m);
		k = m;
	}
}

static inline void
drv_init(struct drv *d, struct shaper *sh, struct shaper *sh2, uint32_t n,
	uint32_t n_tenants)
{
	memset(d, 0, sizeof(*d));
	d->sh = sh;
	d->sh2 = sh2;
	d->n = n;
	d->n_tenants = n_tenants;
	d->src = calloc(n, sizeof(*d->src));
	d->heap = calloc(n, sizeof(*d->heap));
	d->pos = calloc(n, sizeof(*d->pos));
	d->tenv = calloc(n_tenants, sizeof(*d->tenv));
	d->twin = calloc(n_tenants, sizeof(*d->twin));
	d->step_min = 200;
	d->step_max = 800;
	d->rng = 0x2545f4914f6cdd1dull;
	d->t1 = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		d->src[i].silent = true;
		d->src[i].next = HUGE_VAL;
		d->heap[i] = i;
		d->pos[i] = i;
	}
}

static inline void
drv_fini(struct drv *d)
{
	free(d->src);
	free(d->heap);
	free(d->pos);
	free(d->tenv);
	free(d->twin);
}

/*
 * Source i of tenant t: messages of `msg` payload bytes at `line_bps`,
 * `offered_bps` on average (0: backlogged, `target` bytes kept queued).
 * Its output must keep pacing at `pace_bps` (0: not checked), with the
 * shaper's default catch-up (20 us) and one wheel slot (1024 ns) early.
 */
static inline void
drv_src(struct drv *d, uint32_t i, uint32_t t, uint32_t msg, uint64_t line_bps,
	uint64_t offered_bps, uint64_t pace_bps)
{
	struct src *s = &d->src[i];
	double wire = (double)shaper_msg_wire_bytes(msg, SIM_MTU, SIM_HDR, SIM_RETH);

	s->tenant = t;
	s->msg = msg;
	s->silent = false;
	s->ns_per_byte = 8e9 / (double)line_bps;
	s->npkts = msg == 0 ? 1 : (msg + SIM_MTU - 1) / SIM_MTU;
	if (offered_bps == 0) {
		s->target = 2 * (uint64_t)wire > 65536 ? 2 * (uint64_t)wire : 65536;
		s->next = (double)d->now;
	} else {
		s->mean_gap_ns = wire * 8e9 / (double)offered_bps - wire * s->ns_per_byte;
		if (s->mean_gap_ns < 0)
			s->mean_gap_ns = 0;
		s->next = (double)d->now + drv_unif(d) * wire * 8e9 / (double)offered_bps;
	}
	/* Catch-up of 20 us, one 1024 ns slot early (sim_params()). */
	env_init(&s->pace, pace_bps, pace_bps / 8 * 20000 / 1000000000, 1024);
	heap_fix(d, i);
}

/* Source i stops at the end of its current message. */
static inline void
drv_stop(struct drv *d, uint32_t i)
{
	d->src[i].stopping = true;
	if (d->src[i].pkt == 0) {
		d->src[i].silent = true;
		d->src[i].next = HUGE_VAL;
		heap_fix(d, i);
	}
}

static inline void
drv_deliver(struct drv *d, const struct shaper_out *o)
{
	struct src *s = &d->src[o->conn];
	uint64_t seq = o->cookie & ((1ull << 40) - 1);

	if ((o->cookie >> 40) != o->conn || seq != s->seq_deq)
		s->reorders++;
	s->seq_deq = seq + 1;
	s->held[d->sh2 != NULL] -= o->bytes;
	s->sent += o->bytes;
	if (d->now >= d->t0 && d->now < d->t1) {
		s->win_sent += o->bytes;
		d->twin[s->tenant] += o->bytes;
	}
	env_send(&d->tenv[s->tenant], d->now, o->bytes);
	env_send(&s->pace, d->now, o->bytes);
	if (s->target != 0 && !s->silent && s->held[0] + s->held[1] < s->target &&
	    s->next == HUGE_VAL) {
		s->next = (double)d->now;
		heap_fix(d, o->conn);
	}
}

/* The charge a packet carries: a whole message at its first packet. */
static inline uint32_t
drv_charge(const struct src *s, uint16_t flags)
{
	if (!(flags & SHAPER_PKT_FIRST) || s->per_packet)
		return 0;
	return (uint32_t)shaper_msg_wire_bytes(s->msg, SIM_MTU, SIM_HDR, SIM_RETH);
}

/* Offer a packet to stage `stage` (0 or 1): at once if it may, else queued. */
static inline bool
drv_offer(struct drv *d, int stage, const struct shaper_pkt *p, bool *cut)
{
	struct shaper *sh = stage ? d->sh2 : d->sh;
	struct src *s = &d->src[p->conn];
	struct shaper_out o;

	s->held[stage] += p->bytes;
	if (d->cut && shaper_send_now(sh, p, d->now, &o)) {
		*cut = true;
		if (stage == 0 && d->sh2 != NULL) {
			s->held[0] -= p->bytes;
			return drv_offer(d, 1, p, cut);
		}
		drv_deliver(d, &o);
		return true;
	}
	*cut = false;
	if (shaper_enqueue(sh, p, d->now) == SHAPER_OK)
		return true;
	s->held[stage] -= p->bytes;
	return false;
}

/* The next packet of source i arrives. */
static inline void
drv_post(struct drv *d, uint32_t i)
{
	struct src *s = &d->src[i];
	uint32_t off = s->pkt * SIM_MTU;
	uint32_t pay = s->msg - off < SIM_MTU ? s->msg - off : SIM_MTU;
	struct shaper_pkt p = {
		.cookie = (uint64_t)i << 40 | s->seq_enq, .conn = i,
		.bytes = pay + SIM_HDR + (s->pkt == 0 ? SIM_RETH : 0),
		.flags = s->xflags,
	};
	bool cut;

	if (s->pkt == 0) {
		/* Backpressure holds the port until the next poll; a
		 * backlogged source waits for room. */
		if (shaper_tenant_full(d->sh, s->tenant, d->now) ||
		    (d->sh2 != NULL && shaper_tenant_full(d->sh2, s->tenant, d->now))) {
			s->next = d->next_poll;
			heap_fix(d, i);
			return;
		}
		if (s->target != 0 && s->held[0] + s->held[1] >= s->target) {
			s->next = HUGE_VAL;
			heap_fix(d, i);
			return;
		}
		p.flags |= SHAPER_PKT_FIRST;
	}
	if (s->pkt + 1 == s->npkts)
		p.flags |= SHAPER_PKT_LAST;
	p.charge = drv_charge(s, p.flags);
	/* What the shaper charges: a message at its first packet, each
	 * packet without a message charge, nothing when exempt. */
	if (!(p.flags & SHAPER_PKT_EXEMPT))
		s->charge += s->per_packet ? p.bytes : p.charge;
	if (drv_offer(d, 0, &p, &cut)) {
		s->seq_enq++;
		s->posted += p.bytes;
		if (cut)
			s->cut++;
		else
			s->queued++;
		if (s->cut + s->queued > 1 && cut != s->last_cut)
			s->switches++;
		s->last_cut = cut;
	} else {
		s->refused++;
	}
	s->next += (double)p.bytes * s->ns_per_byte;
	if (++s->pkt == s->npkts) {
		s->pkt = 0;
		if (s->target == 0)
			s->next += 2.0 * drv_unif(d) * s->mean_gap_ns;
		if (s->stopping)
			s->silent = true;
	}
	if (s->silent)
		s->next = HUGE_VAL;
	heap_fix(d, i);
}

static inline void
drv_poll(struct drv *d)
{
	struct shaper_out out[SIM_BURST];
	struct shaper_stats st;
	unsigned int n;

	if (d->sh2 != NULL) {
		do {
			bool cut;

			shaper_stats(d->sh2, &st);
			n = st.items - st.items_used;
			n = n < SIM_BURST ? n : SIM_BURST;
			n = n ? shaper_dequeue(d->sh, d->now, out, n) : 0;
			for (unsigned int i = 0; i < n; i++) {
				const struct src *s = &d->src[out[i].conn];
				struct shaper_pkt p = {
					.cookie = out[i].cookie, .conn = out[i].conn,
					.bytes = out[i].bytes, .flags = out[i].flags,
					.charge = drv_charge(s, out[i].flags),
				};

				d->src[out[i].conn].held[0] -= out[i].bytes;
				if (!drv_offer(d, 1, &p, &cut))
					d->src[out[i].conn].refused++;
			}
		} while (n == SIM_BURST);
	}
	do {
		n = shaper_dequeue(d->sh2 ? d->sh2 : d->sh, d->now, out, SIM_BURST);
		for (unsigned int i = 0; i < n; i++)
			drv_deliver(d, &out[i]);
	} while (n == SIM_BURST);
	shaper_stats(d->sh, &st);
	if (st.items_used > d->max_items)
		d->max_items = st.items_used;
	d->polls++;
	if (d->on_poll != NULL)
		d->on_poll(d);
}

/* Run until `end` (ns): packets as they arrive, polls in between. */
static inline void
drv_run(struct drv *d, uint64_t end)
{
	if (d->next_poll < (double)d->now)
		d->next_poll = (double)d->now;
	while (d->now < end) {
		uint32_t i = d->heap[0];

		if (d->src[i].next < d->next_poll) {
			if ((uint64_t)d->src[i].next > d->now)
				d->now = (uint64_t)d->src[i].next;
			drv_post(d, i);
		} else {
			if ((uint64_t)d->next_poll > d->now)
				d->now = (uint64_t)d->next_poll;
			drv_poll(d);
			d->next_poll += d->step_min +
				drv_unif(d) * (double)(d->step_max - d->step_min);
		}
	}
}

/* Totals of a driver's sources: posted packets, cut through, queued... */
struct tot {
	uint64_t pkts, cut, queued, refused, reorders, switches, posted, sent, charge;
};

static inline struct tot
drv_tot(const struct drv *d, uint32_t tenant)
{
	struct tot t = { 0 };

	for (uint32_t i = 0; i < d->n; i++) {
		const struct src *s = &d->src[i];

		if (tenant != UINT32_MAX && s->tenant != tenant)
			continue;
		t.pkts += s->cut + s->queued + s->refused;
		t.cut += s->cut;
		t.queued += s->queued;
		t.refused += s->refused;
		t.reorders += s->reorders;
		t.switches += s->switches;
		t.posted += s->posted;
		t.sent += s->sent;
		t.charge += s->charge;
	}
	return t;
}

/* The tenant's counters agree with what the test sent and expects charged. */
static inline void
check_tenant_totals(const struct drv *d, struct shaper *sh, uint32_t tenant,
	bool drained)
{
	struct shaper_tenant_stats st;
	struct tot t = drv_tot(d, tenant);

	shaper_tenant_stats(sh, tenant, d->now, &st);
	CU_ASSERT_EQUAL(st.cut_pkts, t.cut);
	CU_ASSERT_EQUAL(st.enq_pkts, t.cut + t.queued);
	CU_ASSERT_EQUAL(st.deq_bytes, t.sent);
	if (drained) {
		CU_ASSERT_EQUAL(st.deq_pkts, st.enq_pkts);
		CU_ASSERT_EQUAL(st.deq_bytes, t.posted);
		CU_ASSERT_EQUAL(st.queued_bytes, 0);
		CU_ASSERT_EQUAL(st.charged_bytes, t.charge);
	}
}

#endif /* SHAPER_TEST_FLOWS_H */
