/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_gsi_limit.h: the per-tenant limit on RDMA-CM MADs ("gsi_pps"), on a
 * fake clock of 1 000 000 ticks a second: the burst, the rate after it, no
 * frame at 0, a caller with an older clock, and several threads on one
 * bucket (what several lcores seeing one tenant do) taking what one would.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <CUnit/Basic.h>

#include "cu_run.h"
#include "dp_gsi_limit.h"

#define HZ 1000000u

static unsigned
take_n(struct dp_gsi_bucket *b, uint64_t now, uint32_t pps, unsigned n)
{
	unsigned got = 0;

	for (unsigned i = 0; i < n; i++)
		got += dp_gsi_take(b, now, HZ, pps);
	return got;
}

static void
test_burst_then_rate(void)
{
	struct dp_gsi_bucket b = { 0 };
	uint64_t t0 = 5 * (uint64_t)HZ;

	/* Full at first: the burst is one second's worth. */
	CU_ASSERT_EQUAL(take_n(&b, t0, 10, 100), 10);
	/* A tenth of a second later, one more; not before. */
	CU_ASSERT_EQUAL(take_n(&b, t0 + HZ / 10 - 1, 10, 5), 0);
	CU_ASSERT_EQUAL(take_n(&b, t0 + HZ / 10, 10, 5), 1);
	/* Idle for long: full again, never more than the burst. */
	CU_ASSERT_EQUAL(take_n(&b, t0 + 100 * (uint64_t)HZ, 10, 100), 10);
	/* A steady flood over 10 s: the burst and then 10 a second. */
	{
		struct dp_gsi_bucket f = { 0 };
		unsigned got = 0;

		for (uint64_t t = t0; t < t0 + 10 * (uint64_t)HZ; t += HZ / 1000)
			got += take_n(&f, t, 10, 3);
		CU_ASSERT(got >= 10 + 99 && got <= 10 + 100);
	}
}

static void
test_zero_and_old_clock(void)
{
	struct dp_gsi_bucket b = { 0 };

	CU_ASSERT_EQUAL(take_n(&b, 1000, 0, 10), 0);
	/* A lcore whose clock was read a little earlier gets no extra room. */
	CU_ASSERT_EQUAL(take_n(&b, 10 * (uint64_t)HZ, 4, 4), 4);
	CU_ASSERT_EQUAL(take_n(&b, 10 * (uint64_t)HZ - 1000, 4, 4), 0);
	CU_ASSERT_EQUAL(take_n(&b, 10 * (uint64_t)HZ + HZ / 4, 4, 4), 1);
	/* More frames a second than ticks: nothing to limit. */
	CU_ASSERT_EQUAL(take_n(&b, 0, HZ + 1, 50), 50);
}

struct worker {
	struct dp_gsi_bucket *b;
	pthread_barrier_t *go;
	unsigned got;
};

/* 200 000 tries, each 10 ticks after the last: 2 s of a flood at 1000 a second. */
static void *
work(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->go);
	for (uint64_t i = 0; i < 200000; i++)
		w->got += dp_gsi_take(w->b, 7 * (uint64_t)HZ + i * 10, HZ, 1000);
	return NULL;
}

static void
test_threads(void)
{
	struct dp_gsi_bucket b = { 0 };
	pthread_barrier_t go;
	struct worker w[4];
	pthread_t t[4];
	unsigned sum = 0;

	pthread_barrier_init(&go, NULL, 4);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ .b = &b, .go = &go };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		sum += w[i].got;
	}
	pthread_barrier_destroy(&go);
	/* Four threads over the same 2 s take what one would: the burst and 2 s of the rate. */
	CU_ASSERT(sum >= 2990 && sum <= 3001);
	printf("\n  four threads: %u frames over 2 s at gsi_pps 1000 (bound 3000)\n", sum);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("gsi_limit", NULL, NULL);
	CU_add_test(s, "the burst, then the rate", test_burst_then_rate);
	CU_add_test(s, "gsi_pps 0, an older clock, a rate above the clock", test_zero_and_old_clock);
	CU_add_test(s, "four threads on one bucket take what one would", test_threads);
	return cu_run_all();
}
