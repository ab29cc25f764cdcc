/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A virtual-clock driver for the shaper, shared by the unit tests and the
 * CSV mode of bench_shaper.  It plays the data plane: connections that always
 * have data (backlogged) post RDMA WRITE messages, packetised at a 4096-byte
 * MTU with RoCEv2 headers, and charged whole at their first packet; a poll
 * loop advances the clock by a jittered step, dequeues everything due and
 * stops posting for a tenant while shaper_tenant_full() says so.  With
 * `cut` set, the caller first offers each packet to shaper_send_now() and
 * queues it only when that refuses, as a data plane with cut-through does;
 * a connection then posts at most `target` bytes per poll, its line rate.
 */
#ifndef SHAPER_TEST_SIM_H
#define SHAPER_TEST_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shaper.h"

#define SIM_MTU		4096u
/* Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4, and a RETH at the first. */
#define SIM_HDR		58u
#define SIM_RETH	16u
#define SIM_BURST	32u

struct sim_conn {
	uint32_t msg_bytes;	/* Payload per message; 0: silent. */
	bool per_packet;	/* Charge packet by packet (no message length). */
	uint32_t tenant;
	uint64_t seq_enq;	/* Sequence of the next packet posted. */
	uint64_t seq_deq;	/* Sequence expected next at dequeue. */
	uint64_t queued;	/* Bytes posted and not yet dequeued. */
	uint64_t win_bytes;	/* Dequeued inside the window. */
	uint64_t all_bytes;
	uint64_t reorders;	/* Packets out of sequence. */
	bool dirty;
};

struct sim {
	struct shaper *sh;
	uint64_t now;		/* Nanoseconds. */
	uint32_t n_conns;
	uint32_t n_tenants;
	struct sim_conn *c;
	uint32_t *dirty;
	uint32_t n_dirty;
	uint64_t t0, t1;	/* Measurement window [t0, t1). */
	uint64_t *tenant_win;	/* Per tenant: bytes in the window. */
	uint64_t rng;
	uint32_t step_min, step_max;	/* Poll interval, ns. */
	uint64_t refused;
	uint64_t target;	/* Bytes to keep queued per connection. */
	bool cut;		/* Try shaper_send_now() before shaper_enqueue(). */
	uint64_t cut_pkts;	/* Packets sent at once, with `cut`. */
	uint64_t queued_pkts;	/* Packets queued, with `cut`. */
	/* Optional: called for every dequeued item. */
	void (*on_out)(struct sim *s, const struct shaper_out *o);
	void *arg;
};

static inline uint64_t
sim_rand(struct sim *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ull;
}

/* Default instance parameters for n connections and t tenants. */
static inline struct shaper_params
sim_params(uint32_t n_conns, uint32_t n_tenants, uint32_t n_items)
{
	struct shaper_params p;

	memset(&p, 0, sizeof(p));
	p.hz = 1000000000ull;
	p.n_conns = n_conns;
	p.n_tenants = n_tenants;
	p.n_items = n_items;
	p.wheel_slots = 4096;
	p.wheel_slot_ns = 1024;
	return p;
}

static inline void
sim_init(struct sim *s, const struct shaper_params *p)
{
	memset(s, 0, sizeof(*s));
	s->sh = shaper_create(p, 0);
	s->n_conns = p->n_conns;
	s->n_tenants = p->n_tenants;
	s->c = calloc(p->n_conns, sizeof(*s->c));
	s->dirty = calloc(p->n_conns, sizeof(*s->dirty));
	s->tenant_win = calloc(p->n_tenants, sizeof(*s->tenant_win));
	s->rng = 0x9e3779b97f4a7c15ull;
	s->step_min = 200;
	s->step_max = 800;
	s->target = 64 * 1024;
	s->t1 = UINT64_MAX;
}

static inline void
sim_fini(struct sim *s)
{
	shaper_free(s->sh);
	free(s->c);
	free(s->dirty);
	free(s->tenant_win);
}

/* Attach connection ci to tenant t with a cap and a message size. */
static inline int
sim_conn(struct sim *s, uint32_t ci, uint32_t t, uint64_t cap_bps, uint32_t msg_bytes)
{
	s->c[ci].tenant = t;
	s->c[ci].msg_bytes = msg_bytes;
	if (!s->c[ci].dirty && msg_bytes != 0) {
		s->c[ci].dirty = true;
		s->dirty[s->n_dirty++] = ci;
	}
	return shaper_conn_attach(s->sh, ci, t, cap_bps, s->now);
}

static inline int
sim_tenant(struct sim *s, uint32_t t, uint64_t rate_bps, uint64_t burst, uint64_t qlimit)
{
	struct shaper_tenant_params tp;

	memset(&tp, 0, sizeof(tp));
	tp.rate_bps = rate_bps;
	tp.burst_bytes = burst;
	tp.qlimit_bytes = qlimit;
	return shaper_tenant_config(s->sh, t, &tp, s->now);
}

static inline void sim_account(struct sim *s, const struct shaper_out *o);

/* Post one message of connection ci.  Returns false if refused. */
static inline bool
sim_post_msg(struct sim *s, uint32_t ci)
{
	struct sim_conn *c = &s->c[ci];
	uint32_t m = c->msg_bytes;
	uint32_t npkts = m == 0 ? 1 : (m + SIM_MTU - 1) / SIM_MTU;
	uint64_t wire = shaper_msg_wire_bytes(m, SIM_MTU, SIM_HDR, SIM_RETH);
	bool ok = true;

	for (uint32_t i = 0; i < npkts; i++) {
		uint32_t pay = m - i * SIM_MTU < SIM_MTU ? m - i * SIM_MTU : SIM_MTU;
		struct shaper_pkt p = {
			.cookie = (uint64_t)ci << 40 | c->seq_enq,
			.conn = ci,
			.bytes = pay + SIM_HDR + (i == 0 ? SIM_RETH : 0),
			.charge = 0,
			.flags = 0,
		};

		if (i == 0) {
			p.flags |= SHAPER_PKT_FIRST;
			p.charge = c->per_packet ? 0 : (uint32_t)wire;
		}
		if (i + 1 == npkts)
			p.flags |= SHAPER_PKT_LAST;
		if (s->cut) {
			struct shaper_out o;

			if (shaper_send_now(s->sh, &p, s->now, &o)) {
				c->seq_enq++;
				c->queued += p.bytes;
				s->cut_pkts++;
				sim_account(s, &o);
				continue;
			}
			s->queued_pkts++;
		}
		if (shaper_enqueue(s->sh, &p, s->now) != SHAPER_OK) {
			s->refused++;
			ok = false;
			continue;
		}
		c->seq_enq++;
		c->queued += p.bytes;
	}
	return ok;
}

/* Keep every connection that sent something backlogged. */
static inline void
sim_refill(struct sim *s)
{
	uint32_t keep = 0;

	for (uint32_t i = 0; i < s->n_dirty; i++) {
		uint32_t ci = s->dirty[i];
		struct sim_conn *c = &s->c[ci];
		uint64_t posted = 0;

		/* Without cut-through `posted` never reaches `target` first. */
		while (c->msg_bytes != 0 && c->queued < s->target && posted < s->target &&
		       !shaper_tenant_full(s->sh, c->tenant, s->now)) {
			if (!sim_post_msg(s, ci))
				break;
			posted += shaper_msg_wire_bytes(c->msg_bytes, SIM_MTU, SIM_HDR, SIM_RETH);
		}
		if (c->msg_bytes != 0 && c->queued < s->target) {
			/* Backpressured: try again next step. */
			s->dirty[keep++] = ci;
		} else {
			c->dirty = false;
		}
	}
	s->n_dirty = keep;
}

static inline void
sim_account(struct sim *s, const struct shaper_out *o)
{
	uint32_t ci = o->conn;
	struct sim_conn *c = &s->c[ci];
	uint64_t seq = o->cookie & ((1ull << 40) - 1);

	if ((o->cookie >> 40) != ci || seq != c->seq_deq)
		c->reorders++;
	c->seq_deq = seq + 1;
	c->queued -= o->bytes;
	c->all_bytes += o->bytes;
	if (s->now >= s->t0 && s->now < s->t1) {
		c->win_bytes += o->bytes;
		s->tenant_win[c->tenant] += o->bytes;
	}
	if (!c->dirty) {
		c->dirty = true;
		s->dirty[s->n_dirty++] = ci;
	}
	if (s->on_out != NULL)
		s->on_out(s, o);
}

/* One poll: dequeue everything due at the current time. */
static inline uint64_t
sim_poll(struct sim *s)
{
	struct shaper_out out[SIM_BURST];
	uint64_t bytes = 0;
	unsigned int n;

	do {
		n = shaper_dequeue(s->sh, s->now, out, SIM_BURST);
		for (unsigned int i = 0; i < n; i++) {
			sim_account(s, &out[i]);
			bytes += out[i].bytes;
		}
	} while (n == SIM_BURST);
	return bytes;
}

/* Run until `end` (ns): refill, poll, step. */
static inline void
sim_run(struct sim *s, uint64_t end)
{
	while (s->now < end) {
		uint32_t span = s->step_max - s->step_min + 1;

		sim_refill(s);
		sim_poll(s);
		s->now += s->step_min + (uint32_t)(sim_rand(s) % span);
	}
}

/*
 * Run until `end`, sleeping between polls until shaper_next_deadline() (at
 * most `max_sleep`), as a caller with nothing else to do would.  Returns the
 * number of polls.
 */
static inline uint64_t
sim_run_deadline(struct sim *s, uint64_t end, uint64_t max_sleep)
{
	uint64_t polls = 0;

	while (s->now < end) {
		uint64_t d;

		sim_refill(s);
		sim_poll(s);
		polls++;
		d = shaper_next_deadline(s->sh, s->now);
		if (d <= s->now)
			d = s->now + 1;
		if (d > s->now + max_sleep)
			d = s->now + max_sleep;
		s->now = d;
	}
	return polls;
}

static inline void
sim_window(struct sim *s, uint64_t t0, uint64_t t1)
{
	s->t0 = t0;
	s->t1 = t1;
	for (uint32_t i = 0; i < s->n_conns; i++)
		s->c[i].win_bytes = 0;
	memset(s->tenant_win, 0, s->n_tenants * sizeof(*s->tenant_win));
}

static inline double
sim_bps(uint64_t bytes, uint64_t t0, uint64_t t1)
{
	return (double)bytes * 8.0 * 1e9 / (double)(t1 - t0);
}

/* Jain's index over x[0..n). */
static inline double
sim_jain(const double *x, uint32_t n)
{
	double s = 0, s2 = 0;

	for (uint32_t i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return s2 == 0 ? 0 : s * s / ((double)n * s2);
}

#endif /* SHAPER_TEST_SIM_H */
