/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of estats/, second part: the histogram alone, parameters and
 * layout, and the two halves written by two threads while a third reads.
 * test_estats.c registers them (estats_hist_tests_add()).
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "estats.h"
#include "test_estats.h"

/* The histogram alone. */

static void
test_hist_bounds(void)
{
	unsigned i;

	CU_ASSERT_EQUAL(estats_hist_upper(15), 1024);
	CU_ASSERT_EQUAL(estats_hist_upper(ESTATS_HIST_BUCKETS - 1), ESTATS_HIST_INF);
	CU_ASSERT(estats_hist_lower(ESTATS_HIST_BUCKETS - 1) > MS(10000));
	CU_ASSERT_EQUAL(estats_hist_index(0), 0);
	for (i = 0; i + 1 < ESTATS_HIST_BUCKETS; i++) {
		uint64_t up = estats_hist_upper(i);

		CU_ASSERT_EQUAL(estats_hist_lower(i + 1), up);
		CU_ASSERT(up > estats_hist_lower(i));
		/* Prometheus' le: the upper bound is in the bucket, one more is not. */
		CU_ASSERT_EQUAL(estats_hist_index(up), i);
		CU_ASSERT_EQUAL(estats_hist_index(up + 1), i + 1);
		if (estats_hist_lower(i) >= 1000)
			CU_ASSERT((double)(up - estats_hist_lower(i)) <= estats_hist_lower(i) / 16.0);
	}
	CU_ASSERT_EQUAL(estats_hist_index(UINT64_MAX), ESTATS_HIST_BUCKETS - 1);
}

static void
test_hist_error(void)
{
	/* Every value from 1 us to 10 s comes back from its bucket within 3.2 %. */
	double worst = 0;

	for (double v = 1000; v <= 1e10; v *= 1.0007) {
		struct estats_hist h;
		uint64_t ns = (uint64_t)v, got;

		estats_hist_reset(&h);
		estats_hist_record(&h, ns);
		estats_hist_record(&h, 20000000000ull); /* max elsewhere: no clamping help */
		estats_hist_record(&h, 0);              /* nor from min */
		got = estats_hist_quantile(&h, 0.5);
		if (fabs((double)got - (double)ns) / (double)ns > worst)
			worst = fabs((double)got - (double)ns) / (double)ns;
	}
	printf(" (worst relative error %.4f) ", worst);
	CU_ASSERT(worst <= 0.032);
}

static void
test_hist_percentiles(void)
{
	struct estats_hist h;
	struct estats_pct p;
	unsigned i;

	estats_hist_reset(&h);
	estats_hist_percentiles(&h, &p);
	CU_ASSERT_EQUAL(p.count, 0);
	CU_ASSERT_EQUAL(p.p99, 0);
	/* 1 us .. 10000 us, uniformly. */
	for (i = 1; i <= 10000; i++)
		estats_hist_record(&h, US(i));
	estats_hist_percentiles(&h, &p);
	CU_ASSERT_EQUAL(p.count, 10000);
	CU_ASSERT(close_to(p.p50, US(5000), 0.05));
	CU_ASSERT(close_to(p.p90, US(9000), 0.05));
	CU_ASSERT(close_to(p.p99, US(9900), 0.05));
	CU_ASSERT(close_to(p.p999, US(9990), 0.05));
	CU_ASSERT_EQUAL(p.max, US(10000));
	CU_ASSERT_EQUAL(p.mean, US(5000.5));
	CU_ASSERT_EQUAL(h.min_ns, US(1));
}

static void
test_hist_merge_snapshot(void)
{
	static struct estats_hist a, b, all, m, s;
	unsigned i;

	estats_hist_reset(&a);
	estats_hist_reset(&b);
	estats_hist_reset(&all);
	for (i = 0; i < 5000; i++) {
		uint64_t v = US(3) + (uint64_t)i * 7919u % 900000u;

		estats_hist_record(i % 3 ? &a : &b, v);
		estats_hist_record(&all, v);
	}
	estats_hist_reset(&m);
	estats_hist_merge(&m, &a);
	estats_hist_merge(&m, &b);
	CU_ASSERT_EQUAL(memcmp(&m, &all, sizeof(m)), 0);
	/* A torn read: a bucket counted, the header not yet. */
	a.b[estats_hist_index(MS(50))]++;
	estats_hist_snapshot(&s, &a);
	CU_ASSERT_EQUAL(s.count, a.count + 1);
	CU_ASSERT(s.max_ns > estats_hist_lower(estats_hist_index(MS(50))));
	CU_ASSERT(s.max_ns <= estats_hist_upper(estats_hist_index(MS(50))));
}

/*
 * The two sides on two threads.  The egress thread sends request k at
 * virtual time k * 1000 ns; the ingress thread acknowledges each request it
 * has seen sent at its send time plus 500 ns.  Every sample must then be
 * 500 ns plus whole microseconds: a mixed-up probe shows as another value.
 * A third thread reads meanwhile and must see counts that never go back.
 */
#define CONC_N 1000000u
#define CONC_WINDOW 64u
static volatile uint32_t conc_sent, conc_acked;
static volatile int conc_stop;

static void *
conc_egress(void *arg)
{
	struct estats_conn *c = arg;

	for (uint32_t k = 0; k < CONC_N; k++) {
		/* At most a window of requests outstanding, as a QP has. */
		while (k - __atomic_load_n(&conc_acked, __ATOMIC_ACQUIRE) > CONC_WINDOW)
			sched_yield();
		estats_egress(c, &prof, SEND_ONLY, k, 0, (uint64_t)k * 1000u);
		__atomic_store_n(&conc_sent, k + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *
conc_ingress(void *arg)
{
	struct estats_conn *c = arg;
	uint32_t k = 0;

	while (k < CONC_N) {
		uint32_t n = __atomic_load_n(&conc_sent, __ATOMIC_ACQUIRE);

		for (; k < n; k++)
			estats_ingress(c, &prof, ACK, k, 0, (uint64_t)k * 1000u + 500u);
		__atomic_store_n(&conc_acked, k, __ATOMIC_RELEASE);
		if (k == n)
			sched_yield();
	}
	return NULL;
}

static void *
conc_reader(void *arg)
{
	struct estats_conn *c = arg;
	static struct estats_conn_stats s;
	uint64_t last = 0;
	long bad = 0;

	while (!conc_stop) {
		estats_conn_read(c, &s);
		if (s.hist[ESTATS_NET].count < last)
			bad++;
		last = s.hist[ESTATS_NET].count;
	}
	return (void *)bad;
}

static void
test_two_threads(void)
{
	struct estats_conn *c = conn_new();
	struct estats_conn_stats *s;
	pthread_t te, ti, tr;
	void *bad;
	uint64_t odd = 0;

	CU_ASSERT_EQUAL_FATAL(pthread_create(&tr, NULL, conc_reader, c), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&te, NULL, conc_egress, c), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&ti, NULL, conc_ingress, c), 0);
	pthread_join(te, NULL);
	pthread_join(ti, NULL);
	conc_stop = 1;
	pthread_join(tr, &bad);
	CU_ASSERT_EQUAL((long)bad, 0);
	s = stats_of(c);
	CU_ASSERT(s->hist[ESTATS_NET].count > 1000);
	CU_ASSERT(s->hist[ESTATS_NET].min_ns >= 500);
	/* Each sample is 500 + j * 1000 ns: the sum says so. */
	CU_ASSERT_EQUAL((s->hist[ESTATS_NET].sum_ns - 500 * s->hist[ESTATS_NET].count) % 1000, 0);
	for (unsigned i = 0; i < ESTATS_HIST_BUCKETS; i++)
		if (s->hist[ESTATS_NET].b[i] && estats_hist_upper(i) < 500)
			odd++;
	CU_ASSERT_EQUAL(odd, 0);
	printf(" (%lu samples) ", (unsigned long)s->hist[ESTATS_NET].count);
	free(c);
}

static void
test_profile(void)
{
	struct estats_params p;
	struct estats_profile pr;

	estats_params_default(&p);
	CU_ASSERT_EQUAL(estats_profile_build(&pr, &p), 0);
	CU_ASSERT_EQUAL(pr.timeout_ns, MS(10000));
	p.sample_timeout_ms = 0;
	CU_ASSERT_NOT_EQUAL(estats_profile_build(&pr, &p), 0);
	p.sample_timeout_ms = 200001;
	CU_ASSERT_NOT_EQUAL(estats_profile_build(&pr, &p), 0);
	p.sample_timeout_ms = 10;
	p.oos_resync = 0;
	CU_ASSERT_NOT_EQUAL(estats_profile_build(&pr, &p), 0);
	/* Two halves, each on lines of its own. */
	CU_ASSERT_EQUAL(offsetof(struct estats_conn, ingress) % 64, 0);
	CU_ASSERT_EQUAL(offsetof(struct estats_egress, msg_t0), 64);
	CU_ASSERT_EQUAL(offsetof(struct estats_ingress, exp_psn), 64);
	/* The per-frame state: two lines each way. */
	CU_ASSERT_EQUAL(sizeof(struct estats_conn), 256);
	printf(" (%zu + %zu bytes per connection) ", sizeof(struct estats_conn), sizeof(struct estats_conn_cold));
}


void
estats_hist_tests_add(CU_pSuite s)
{
	CU_add_test(s, "histogram: bounds follow Prometheus le", test_hist_bounds);
	CU_add_test(s, "histogram: 3.2 % from 1 us to 10 s", test_hist_error);
	CU_add_test(s, "histogram: percentiles of a uniform set", test_hist_percentiles);
	CU_add_test(s, "histogram: merge and torn snapshot", test_hist_merge_snapshot);
	CU_add_test(s, "params and profile; layout", test_profile);
	CU_add_test(s, "two writer threads and a reader", test_two_threads);
}
