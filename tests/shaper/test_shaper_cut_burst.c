/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of shaper_send_now_burst() on a virtual clock (nanoseconds):
 * two shapers configured alike are driven with the same random bursts, one
 * through shaper_send_now_burst() (then shaper_send_now() or
 * shaper_enqueue() for what it leaves), the other packet by packet through
 * shaper_send_now() or shaper_enqueue().  The burst must let through exactly
 * the packets that the single calls let through before the first that
 * queues, and leave every bucket, pacing time, fair-share time, message
 * state, counter and queue as they do; what both dequeue must be the same.
 * Tenants: capped with its own bucket, capped with a shared bucket, and
 * uncapped; rates low enough that the buckets and pacing bind in some bursts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cu_run.h"

#include "shaper.h"
#include "shaper_state.h"
#include "sim.h"

#define US		1000ull
#define GBPS		1000000000ull
#define N_CONNS		12u
#define N_TENANTS	3u
#define BURST		32u
#define ROUNDS		20000u

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static struct shaper *
make(struct shaper_shared *shared)
{
	struct shaper_params p = sim_params(N_CONNS, N_TENANTS, 4096);
	struct shaper *sh;
	struct shaper_tenant_params own = { .rate_bps = 100 * GBPS, .burst_bytes = 65536 };
	struct shaper_tenant_params sha = { .rate_bps = 50 * GBPS, .burst_bytes = 32768, .shared = shared };
	struct shaper_tenant_params none = { 0 };

	p.cut_slack_ns = 2000;
	sh = shaper_create(&p, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	shaper_shared_init(shared, 0, p.hz);
	CU_ASSERT_EQUAL(shaper_tenant_config(sh, 0, &own, 0), 0);
	CU_ASSERT_EQUAL(shaper_tenant_config(sh, 1, &sha, 0), 0);
	CU_ASSERT_EQUAL(shaper_tenant_config(sh, 2, &none, 0), 0);
	/* Connection i of tenant i % 3; every other one paced. */
	for (uint32_t i = 0; i < N_CONNS; i++)
		CU_ASSERT_EQUAL(shaper_conn_attach(sh, i, i % N_TENANTS, i % 2 ? 40 * GBPS : 0, 0), 0);
	return sh;
}

/* A random packet of one of @tenant's connections. */
static struct shaper_pkt
pkt_make(uint32_t tenant, uint64_t cookie)
{
	static const uint32_t bytes[] = { 62, 1082, 4154 };
	struct shaper_pkt p = {
		.cookie = cookie,
		.conn = tenant + N_TENANTS * rnd(N_CONNS / N_TENANTS),
		.bytes = bytes[rnd(3)],
	};
	uint32_t r = rnd(8);

	if (r == 0)
		p.flags = SHAPER_PKT_EXEMPT | SHAPER_PKT_FIRST | SHAPER_PKT_LAST;
	else if (r == 1)
		p.flags = SHAPER_PKT_FIRST, p.charge = 16384;
	else if (r == 2)
		p.flags = SHAPER_PKT_LAST;
	else if (r == 3)
		p.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST;
	return p;
}

static void
same_state(const struct shaper *a, const struct shaper *b)
{
	for (uint32_t i = 0; i < N_TENANTS; i++) {
		const struct shaper_tenant *x = &a->tenants[i], *y = &b->tenants[i];

		CU_ASSERT(x->tx_ts == y->tx_ts);
		CU_ASSERT(x->adm_ts == y->adm_ts);
		CU_ASSERT_EQUAL(x->fq_v, y->fq_v);
		CU_ASSERT_EQUAL(x->fq_window, y->fq_window);
		CU_ASSERT_EQUAL(x->qbytes, y->qbytes);
		CU_ASSERT_EQUAL(x->charged, y->charged);
		CU_ASSERT_EQUAL(x->enq_pkts, y->enq_pkts);
		CU_ASSERT_EQUAL(x->enq_bytes, y->enq_bytes);
		CU_ASSERT_EQUAL(x->deq_pkts, y->deq_pkts);
		CU_ASSERT_EQUAL(x->deq_bytes, y->deq_bytes);
		CU_ASSERT_EQUAL(x->cut_pkts, y->cut_pkts);
		CU_ASSERT_EQUAL(x->cut_bytes, y->cut_bytes);
		CU_ASSERT_EQUAL(x->win_start, y->win_start);
		CU_ASSERT_EQUAL(x->win_bytes, y->win_bytes);
		CU_ASSERT(x->ewma_bps == y->ewma_bps);
	}
	for (uint32_t i = 0; i < N_CONNS; i++) {
		const struct shaper_conn *x = &a->conns[i], *y = &b->conns[i];

		CU_ASSERT_EQUAL(x->next_ts, y->next_ts);
		CU_ASSERT_EQUAL(x->next_frac, y->next_frac);
		CU_ASSERT_EQUAL(x->vfinish, y->vfinish);
		CU_ASSERT_EQUAL(x->flags, y->flags);
		CU_ASSERT_EQUAL(x->qitems, y->qitems);
		CU_ASSERT_EQUAL(x->state, y->state);
	}
}

static void
test_burst_as_single(void)
{
	static struct shaper_shared sa, sb;
	struct shaper *a = make(&sa), *b = make(&sb);
	struct shaper_out oa[BURST], ob[BURST];
	uint64_t now = 0, cookie = 1, cut = 0, queued = 0, stopped = 0, partial = 0;

	for (uint32_t round = 0; round < ROUNDS; round++) {
		struct shaper_pkt p[BURST];
		uint32_t n = 1 + rnd(BURST), tenant = rnd(N_TENANTS), k, single = n, na, nb;

		/* Sometimes right after the last burst, sometimes after a gap: buckets bind and refill. */
		now += rnd(4) == 0 ? rnd(50 * US) : rnd(5 * US);
		for (uint32_t i = 0; i < n; i++)
			p[i] = pkt_make(tenant, cookie++);
		k = shaper_send_now_burst(a, p, n, now);
		for (uint32_t i = 0; i < n; i++) {
			struct shaper_out o;

			if (shaper_send_now(b, &p[i], now, &o)) {
				cut++;
				continue;
			}
			if (single == n)
				single = i;
			shaper_enqueue(b, &p[i], now);
			queued++;
		}
		CU_ASSERT_EQUAL_FATAL(k, single);
		stopped += k < n;
		partial += k > 1 && k < n;
		for (uint32_t i = k; i < n; i++) {
			struct shaper_out o;

			if (!shaper_send_now(a, &p[i], now, &o))
				shaper_enqueue(a, &p[i], now);
		}
		na = shaper_dequeue(a, now, oa, BURST);
		nb = shaper_dequeue(b, now, ob, BURST);
		CU_ASSERT_EQUAL_FATAL(na, nb);
		for (uint32_t i = 0; i < na; i++)
			CU_ASSERT_EQUAL(oa[i].cookie, ob[i].cookie);
		same_state(a, b);
	}
	printf("\n    %llu packets cut through, %llu queued; %llu of %u bursts stopped early, %llu after two or more\n",
	       (unsigned long long)cut, (unsigned long long)queued, (unsigned long long)stopped, ROUNDS,
	       (unsigned long long)partial);
	/* The drive must exercise both outcomes, or it proves nothing. */
	CU_ASSERT(cut > ROUNDS);
	CU_ASSERT(stopped > ROUNDS / 20);
	CU_ASSERT(stopped < ROUNDS);
	CU_ASSERT(partial > ROUNDS / 50);
	shaper_free(a);
	shaper_free(b);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("shaper cut-through by the burst", NULL, NULL);
	CU_add_test(s, "a burst as its packets one by one", test_burst_as_single);
	return cu_run_all();
}
