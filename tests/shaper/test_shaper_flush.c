/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of shaper_flush() on a virtual clock (nanoseconds): every held
 * item comes back exactly once, in each connection's FIFO order, counted;
 * time does not move (buckets, pacing times and deadlines stay where they
 * were); and the instance is empty and usable afterwards, with its whole
 * item pool, its wheel and its tenants' lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cu_run.h"

#include "shaper.h"
#include "sim.h"

#define US		1000ull
#define MS		1000000ull
#define GBPS		1000000000ull
#define N_ITEMS		64u
#define N_CONNS		3u

struct seen {
	uint32_t n;
	uint64_t cookie[N_ITEMS];
	uint32_t conn[N_ITEMS];
	uint32_t queued[N_ITEMS];
	uint16_t flags[N_ITEMS];
};

static void
collect(const struct shaper_out *o, void *arg)
{
	struct seen *s = arg;

	CU_ASSERT_FATAL(s->n < N_ITEMS);
	s->cookie[s->n] = o->cookie;
	s->conn[s->n] = o->conn;
	s->queued[s->n] = o->conn_queued;
	s->flags[s->n] = o->flags;
	s->n++;
}

/* Cookies: conn << 16 | sequence, so each item names its place. */
static enum shaper_verdict
post(struct shaper *sh, uint32_t conn, uint32_t seq, uint16_t flags,
	uint32_t charge, uint64_t now)
{
	struct shaper_pkt p = {
		.cookie = (uint64_t)conn << 16 | seq, .conn = conn,
		.bytes = 1000, .charge = charge, .flags = flags,
	};

	return shaper_enqueue(sh, &p, now);
}

/* A capped tenant with three connections, one of them paced. */
static struct shaper *
setup(void)
{
	struct shaper_params p = sim_params(N_CONNS, 1, N_ITEMS);
	struct shaper_tenant_params tp = {
		.rate_bps = 1 * GBPS, .burst_bytes = 4000, .qlimit_bytes = 1u << 20,
	};
	struct shaper *sh = shaper_create(&p, 0);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	CU_ASSERT_EQUAL(shaper_tenant_config(sh, 0, &tp, 0), 0);
	CU_ASSERT_EQUAL(shaper_conn_attach(sh, 0, 0, 100000000ull, 0), 0);
	CU_ASSERT_EQUAL(shaper_conn_attach(sh, 1, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(shaper_conn_attach(sh, 2, 0, 0, 0), 0);
	return sh;
}

/* Every held item once, in FIFO order per connection, counted. */
static void
test_flush_hands_back_all(void)
{
	struct shaper *sh = setup();
	struct shaper_tenant_stats before, after;
	struct shaper_stats st;
	struct shaper_out o[N_ITEMS];
	struct seen s = { 0 };
	uint32_t next[N_CONNS] = { 0 }, posted = 0, sent = 0;
	uint64_t now = 10 * US, n;

	/* Ten-packet messages on 0 and 1; on 2 a message whose Last never came. */
	for (uint32_t i = 0; i < 10; i++) {
		uint16_t f = (uint16_t)((i == 0 ? SHAPER_PKT_FIRST : 0) | (i == 9 ? SHAPER_PKT_LAST : 0));

		CU_ASSERT_EQUAL(post(sh, 0, i, f, i == 0 ? 10000 : 0, now), SHAPER_OK);
		CU_ASSERT_EQUAL(post(sh, 1, i, f, i == 0 ? 10000 : 0, now), SHAPER_OK);
		posted += 2;
	}
	for (uint32_t i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(post(sh, 2, i, i == 0 ? SHAPER_PKT_FIRST : 0,
			i == 0 ? 100000 : 0, now), SHAPER_OK);
		posted++;
	}
	/* Some leave: the burst allows four packets at most. */
	n = shaper_dequeue(sh, now, o, N_ITEMS);
	CU_ASSERT(n > 0 && n <= 4);
	for (uint32_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(o[i].cookie & 0xffff, next[o[i].conn]);
		next[o[i].conn]++;
	}
	sent = (uint32_t)n;
	shaper_tenant_stats(sh, 0, now, &before);
	CU_ASSERT_EQUAL(before.queued_bytes, (uint64_t)(posted - sent) * 1000);

	n = shaper_flush(sh, now, collect, &s);
	CU_ASSERT_EQUAL(n, posted - sent);
	CU_ASSERT_EQUAL(s.n, posted - sent);
	for (uint32_t i = 0; i < s.n; i++) {
		uint32_t c = s.conn[i];

		CU_ASSERT_FATAL(c < N_CONNS);
		CU_ASSERT_EQUAL(s.cookie[i] >> 16, c);
		CU_ASSERT_EQUAL(s.cookie[i] & 0xffff, next[c]);
		next[c]++;
		/* What the connection holds behind this item. */
		CU_ASSERT_EQUAL(s.queued[i], ((c == 2 ? 5u : 10u) - next[c]) * 1000u);
		if ((s.cookie[i] & 0xffff) == 9)
			CU_ASSERT(s.flags[i] & SHAPER_PKT_LAST);
	}
	CU_ASSERT_EQUAL(next[0], 10);
	CU_ASSERT_EQUAL(next[1], 10);
	CU_ASSERT_EQUAL(next[2], 5);

	shaper_stats(sh, &st);
	CU_ASSERT_EQUAL(st.items_used, 0);
	CU_ASSERT_EQUAL(st.flushed, posted - sent);
	shaper_tenant_stats(sh, 0, now, &after);
	CU_ASSERT_EQUAL(after.flush_pkts, posted - sent);
	CU_ASSERT_EQUAL(after.queued_bytes, 0);
	CU_ASSERT_FALSE(after.full);
	/* No time passed: the bucket is what it was, not refilled. */
	CU_ASSERT_EQUAL(after.tokens, before.tokens);
	CU_ASSERT_EQUAL(after.charged_bytes, before.charged_bytes);
	CU_ASSERT_EQUAL(after.deq_pkts, before.deq_pkts);
	/* Nothing is left to send, now or ever. */
	CU_ASSERT_EQUAL(shaper_next_deadline(sh, now), UINT64_MAX);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, now + 3600000 * MS, o, N_ITEMS), 0);
	/* A second flush finds nothing. */
	CU_ASSERT_EQUAL(shaper_flush(sh, now, NULL, NULL), 0);
	shaper_free(sh);
}

/* The instance goes on: pacing where it was, the whole pool, new messages. */
static void
test_flush_then_reuse(void)
{
	struct shaper *sh = setup();
	struct shaper_out o[N_ITEMS], one;
	struct shaper_conn_stats cs;
	struct shaper_pkt p = { .cookie = 7, .conn = 0, .bytes = 1000,
		.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST };
	uint64_t now = 10 * US, n;
	uint32_t got = 0;

	/* Connection 0 at 100 Mbit/s: 1000 bytes are 80 us. */
	for (uint32_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(post(sh, 0, i, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0, now), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, now, o, N_ITEMS), 1);
	CU_ASSERT_EQUAL(shaper_flush(sh, now, NULL, NULL), 2);
	shaper_conn_stats(sh, 0, &cs);
	CU_ASSERT_EQUAL(cs.queued_items, 0);
	CU_ASSERT_EQUAL(cs.queued_bytes, 0);
	CU_ASSERT(cs.attached);
	/* The packet sent at `now` still holds the connection's pace. */
	CU_ASSERT_FALSE(shaper_send_now(sh, &p, now + 40 * US, &one));
	CU_ASSERT_TRUE(shaper_send_now(sh, &p, now + 81 * US, &one));

	/* Every item of the pool is free again, and the queues work. */
	now += 1 * MS;
	for (uint32_t i = 0; i < N_ITEMS; i++)
		CU_ASSERT_EQUAL(post(sh, 1 + i % 2, i, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0, now), SHAPER_OK);
	CU_ASSERT_EQUAL(post(sh, 1, 99, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0, now), SHAPER_DROP_NOBUFS);
	for (uint64_t t = now; got < N_ITEMS && t < now + 10 * MS; t += 10 * US)
		while ((n = shaper_dequeue(sh, t, o, N_ITEMS)) > 0)
			got += (uint32_t)n;
	CU_ASSERT_EQUAL(got, N_ITEMS);
	shaper_free(sh);
}

/* A backpressured tenant is released, and its backpressure time is closed. */
static void
test_flush_backpressure(void)
{
	struct shaper_params p = sim_params(1, 1, N_ITEMS);
	struct shaper_tenant_params tp = {
		.rate_bps = 1 * GBPS, .burst_bytes = 1000, .qlimit_bytes = 8000,
	};
	struct shaper *sh = shaper_create(&p, 0);
	struct shaper_tenant_stats st;
	uint32_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	CU_ASSERT_EQUAL(shaper_tenant_config(sh, 0, &tp, 0), 0);
	CU_ASSERT_EQUAL(shaper_conn_attach(sh, 0, 0, 0, 0), 0);
	for (i = 0; i < 20 && !shaper_tenant_full(sh, 0, 0); i++)
		CU_ASSERT_EQUAL(post(sh, 0, i, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0, 0), SHAPER_OK);
	CU_ASSERT_TRUE(shaper_tenant_full(sh, 0, 0));
	CU_ASSERT_EQUAL(shaper_flush(sh, 50 * US, NULL, NULL), i);
	CU_ASSERT_FALSE(shaper_tenant_full(sh, 0, 50 * US));
	shaper_tenant_stats(sh, 0, 1 * MS, &st);
	CU_ASSERT_FALSE(st.full);
	CU_ASSERT_EQUAL(st.backpressure_ns, 50 * US);
	shaper_free(sh);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("shaper flush", NULL, NULL);
	CU_add_test(s, "every held item handed back once, counted", test_flush_hands_back_all);
	CU_add_test(s, "usable after a flush, pacing kept", test_flush_then_reuse);
	CU_add_test(s, "backpressure released", test_flush_backpressure);
	return cu_run_all();
}
