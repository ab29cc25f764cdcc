/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the shaper on a virtual clock (nanoseconds): rate accuracy
 * per cap and message size, fairness among 512 connections, the tenant cap
 * binding, work conservation, FIFO order, invariants under random
 * operations, telemetry and scale.  Message-granularity admission,
 * backpressure, the watchdog, rate changes and deadlines are in
 * test_shaper_rules.c.
 *
 * Every figure is measured from the dequeued items over a window that
 * starts after the initial burst, and compared with a bound that the test
 * states; the bounds are tight enough that a broken pacer, bucket or
 * fair-share calendar fails them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "shaper.h"
#include "shaper_state.h"
#include "sim.h"
#include "check.h"

#define MS		1000000ull	/* Nanoseconds. */
#define US		1000ull
#define GBPS		1000000000ull

static const uint64_t caps[] = { 1 * GBPS, 10 * GBPS, 25 * GBPS, 40 * GBPS, 100 * GBPS };
static const uint32_t sizes[] = { 4096, 16384, 65536, 262144, 1048576 };

/*
 * Accuracy.  `tenant_cap`: the tenant's bucket is the cap and four uncapped
 * connections share it; otherwise a single connection carries the cap as its
 * QP rate under an uncapped tenant.  Returns achieved / cap.
 */
static double
run_accuracy(uint64_t cap, uint32_t msg, bool tenant_cap)
{
	struct shaper_params p = sim_params(8, 1, 1u << 16);
	uint64_t wire = shaper_msg_wire_bytes(msg, SIM_MTU, SIM_HDR, SIM_RETH);
	uint32_t n = tenant_cap ? 4 : 1;
	struct sim s;
	double r;

	sim_init(&s, &p);
	s.target = 2 * wire > 65536 ? 2 * wire : 65536;
	if (tenant_cap)
		sim_tenant(&s, 0, cap, 262144, 64u << 20);
	else
		sim_tenant(&s, 0, 0, 0, 64u << 20);
	for (uint32_t i = 0; i < n; i++)
		sim_conn(&s, i, 0, tenant_cap ? 0 : cap, msg);
	sim_window(&s, 20 * MS, 220 * MS);
	sim_run(&s, 220 * MS);
	r = sim_bps(s.tenant_win[0], 20 * MS, 220 * MS) / (double)cap;
	for (uint32_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(s.c[i].reorders, 0);
	sim_fini(&s);
	return r;
}

static void
test_accuracy(bool tenant_cap)
{
	double worst = 0;

	for (unsigned int i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		for (unsigned int j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
			double r = run_accuracy(caps[i], sizes[j], tenant_cap);
			double err = (r - 1.0) * 100.0;

			printf("\n    %s cap %3llu Gb/s, %7u B messages: achieved %+.4f %%",
			       tenant_cap ? "tenant" : "QP", (unsigned long long)(caps[i] / GBPS),
			       sizes[j], err);
			if (fabs(err) > fabs(worst))
				worst = err;
			CU_ASSERT(fabs(err) <= 1.0);
		}
	}
	printf("\n    worst %+.4f %%\n", worst);
}

static void
test_accuracy_tenant(void)
{
	test_accuracy(true);
}

static void
test_accuracy_qp(void)
{
	test_accuracy(false);
}

/* Jain's index of 512 connections with equal 1 Gb/s caps under a 25 Gb/s
 * tenant, for a message size (0: mixed, 4 KiB to 256 KiB by connection). */
static double
run_fairness(uint32_t msg, uint64_t window, double *total)
{
	enum { N = 512 };
	struct shaper_params p = sim_params(N, 1, 1u << 20);
	double x[N];
	struct sim s;
	double j;

	sim_init(&s, &p);
	s.target = 2 * SIM_MTU;
	sim_tenant(&s, 0, 25 * GBPS, 262144, 1ull << 30);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t m = msg ? msg : 4096u << (i % 7);

		sim_conn(&s, i, 0, 1 * GBPS, m);
		if (2ull * m + 4096 > s.target)
			s.target = 2ull * m + 4096;
	}
	sim_window(&s, 20 * MS, 20 * MS + window);
	sim_run(&s, 20 * MS + window);
	for (uint32_t i = 0; i < N; i++) {
		x[i] = sim_bps(s.c[i].win_bytes, 20 * MS, 20 * MS + window);
		CU_ASSERT_EQUAL(s.c[i].reorders, 0);
	}
	j = sim_jain(x, N);
	*total = sim_bps(s.tenant_win[0], 20 * MS, 20 * MS + window);
	sim_fini(&s);
	return j;
}

static void
test_fairness(void)
{
	double total;
	double j = run_fairness(65536, 200 * MS, &total);

	printf("\n    512 x 64 KiB messages: Jain %.5f, total %.3f Gb/s", j, total / 1e9);
	CU_ASSERT(j >= 0.99);
	CU_ASSERT(fabs(total / (25.0 * GBPS) - 1.0) <= 0.01);
	j = run_fairness(4096, 200 * MS, &total);
	printf("\n    512 x 4 KiB messages: Jain %.5f, total %.3f Gb/s", j, total / 1e9);
	CU_ASSERT(j >= 0.99);
	CU_ASSERT(fabs(total / (25.0 * GBPS) - 1.0) <= 0.01);
	j = run_fairness(0, 1000 * MS, &total);
	printf("\n    512 x mixed 4 KiB..256 KiB messages (1 s): Jain %.5f, total %.3f Gb/s\n",
	       j, total / 1e9);
	CU_ASSERT(j >= 0.99);
	CU_ASSERT(fabs(total / (25.0 * GBPS) - 1.0) <= 0.01);
}

/*
 * Four connections under a 20 Gb/s tenant.  `caps_g` gives their caps in
 * Gb/s and `msg` their message sizes (0: silent).  Fills `got` (Gb/s).
 */
static double
run_share(const uint64_t *caps_g, const uint32_t *msg, double *got)
{
	struct shaper_params p = sim_params(4, 1, 1u << 16);
	struct sim s;
	double total;

	sim_init(&s, &p);
	s.target = 2u << 20;
	sim_tenant(&s, 0, 20 * GBPS, 262144, 64u << 20);
	for (uint32_t i = 0; i < 4; i++)
		sim_conn(&s, i, 0, caps_g[i] * GBPS, msg[i]);
	sim_window(&s, 20 * MS, 220 * MS);
	sim_run(&s, 220 * MS);
	for (uint32_t i = 0; i < 4; i++) {
		got[i] = sim_bps(s.c[i].win_bytes, 20 * MS, 220 * MS) / 1e9;
		CU_ASSERT_EQUAL(s.c[i].reorders, 0);
	}
	total = sim_bps(s.tenant_win[0], 20 * MS, 220 * MS) / 1e9;
	sim_fini(&s);
	return total;
}

static void
test_tenant_binds(void)
{
	const uint64_t c[4] = { 10, 10, 10, 10 };
	const uint32_t m[4] = { 65536, 1048576, 4096, 262144 };
	double got[4];
	double total = run_share(c, m, got);

	printf("\n    QP caps 4 x 10 Gb/s, tenant 20 Gb/s: total %.3f, each %.3f %.3f %.3f %.3f\n",
	       total, got[0], got[1], got[2], got[3]);
	CU_ASSERT(fabs(total / 20.0 - 1.0) <= 0.01);
	for (int i = 0; i < 4; i++)
		CU_ASSERT(fabs(got[i] / 5.0 - 1.0) <= 0.02);
}

static void
test_idle_share(void)
{
	const uint64_t c[4] = { 10, 10, 10, 10 };
	const uint32_t m[4] = { 65536, 65536, 65536, 0 };
	const uint64_t c2[4] = { 2, 10, 10, 10 };
	const uint32_t m2[4] = { 65536, 65536, 65536, 65536 };
	double got[4];
	double total = run_share(c, m, got);

	printf("\n    one of four idle: total %.3f, each %.3f %.3f %.3f %.3f",
	       total, got[0], got[1], got[2], got[3]);
	CU_ASSERT(fabs(total / 20.0 - 1.0) <= 0.01);
	for (int i = 0; i < 3; i++)
		CU_ASSERT(fabs(got[i] / (20.0 / 3) - 1.0) <= 0.02);
	CU_ASSERT_EQUAL(got[3], 0);

	/* One connection capped at 2 Gb/s: the others share the rest. */
	total = run_share(c2, m2, got);
	printf("\n    caps 2,10,10,10: total %.3f, each %.3f %.3f %.3f %.3f\n",
	       total, got[0], got[1], got[2], got[3]);
	CU_ASSERT(fabs(total / 20.0 - 1.0) <= 0.01);
	CU_ASSERT(fabs(got[0] / 2.0 - 1.0) <= 0.01);
	for (int i = 1; i < 4; i++)
		CU_ASSERT(fabs(got[i] / 6.0 - 1.0) <= 0.02);
}

/* A connection that wakes up after 100 ms gets its share from then on, not
 * 100 ms of credit that would starve the other one. */
static void
test_idle_no_credit(void)
{
	struct shaper_params p = sim_params(2, 1, 1u << 16);
	struct sim s;
	double a, b;

	sim_init(&s, &p);
	s.target = 256 * 1024;
	sim_tenant(&s, 0, 10 * GBPS, 65536, 64u << 20);
	sim_conn(&s, 0, 0, 0, 65536);
	sim_conn(&s, 1, 0, 0, 0);
	sim_run(&s, 100 * MS);
	s.c[1].msg_bytes = 65536;
	s.c[1].dirty = true;
	s.dirty[s.n_dirty++] = 1;
	sim_window(&s, 101 * MS, 111 * MS);
	sim_run(&s, 111 * MS);
	a = sim_bps(s.c[0].win_bytes, 101 * MS, 111 * MS) / 1e9;
	b = sim_bps(s.c[1].win_bytes, 101 * MS, 111 * MS) / 1e9;
	printf("\n    after 100 ms alone, then two: %.3f and %.3f Gb/s\n", a, b);
	CU_ASSERT(fabs(a / 5.0 - 1.0) <= 0.03);
	CU_ASSERT(fabs(b / 5.0 - 1.0) <= 0.03);
	sim_fini(&s);
}

/*
 * Fair in bytes, not in packets: two connections of single-packet messages,
 * 1 KiB and 4 KiB, under a binding 10 Gb/s tenant get 5 Gb/s each (a
 * round robin of admissions would give them 2 and 8).
 */
static void
test_fair_bytes(void)
{
	struct shaper_params p = sim_params(2, 1, 1u << 16);
	struct sim s;
	double a, b;

	sim_init(&s, &p);
	s.target = 256 * 1024;
	sim_tenant(&s, 0, 10 * GBPS, 65536, 64u << 20);
	sim_conn(&s, 0, 0, 0, 1024);
	sim_conn(&s, 1, 0, 0, 4096);
	sim_window(&s, 20 * MS, 120 * MS);
	sim_run(&s, 120 * MS);
	a = sim_bps(s.c[0].win_bytes, 20 * MS, 120 * MS) / 1e9;
	b = sim_bps(s.c[1].win_bytes, 20 * MS, 120 * MS) / 1e9;
	printf("\n    1 KiB and 4 KiB packets under 10 Gb/s: %.3f and %.3f Gb/s\n", a, b);
	CU_ASSERT(fabs(a / 5.0 - 1.0) <= 0.02);
	CU_ASSERT(fabs(b / 5.0 - 1.0) <= 0.02);
	sim_fini(&s);
}

/* Several tenants, each holding its own cap side by side. */
static void
test_tenant_isolation(void)
{
	struct shaper_params p = sim_params(12, 3, 1u << 16);
	const uint64_t rate[3] = { 5 * GBPS, 10 * GBPS, 30 * GBPS };
	struct sim s;

	sim_init(&s, &p);
	s.target = 256 * 1024;
	for (uint32_t t = 0; t < 3; t++) {
		sim_tenant(&s, t, rate[t], 262144, 64u << 20);
		for (uint32_t i = 0; i < 4; i++)
			sim_conn(&s, t * 4 + i, t, 0, 16384u << i);
	}
	sim_window(&s, 20 * MS, 220 * MS);
	sim_run(&s, 220 * MS);
	for (uint32_t t = 0; t < 3; t++) {
		double r = sim_bps(s.tenant_win[t], 20 * MS, 220 * MS) / (double)rate[t];

		printf("%s tenant %u: %.4f of its cap", t ? "," : "\n   ", t, r);
		CU_ASSERT(fabs(r - 1.0) <= 0.01);
	}
	printf("\n");
	sim_fini(&s);
}

/* FIFO per connection under rate changes (tenants capped, uncapped and back;
 * DCQCN rates set and released), several tenants, mixed sizes, per-packet
 * and per-message charging; then everything drains. */
static void
test_no_reorder(void)
{
	struct shaper_params p = sim_params(64, 4, 1u << 18);
	struct shaper_tenant_stats st;
	uint64_t enq = 0, deq = 0;
	struct sim s;

	sim_init(&s, &p);
	s.target = 128 * 1024;
	for (uint32_t t = 0; t < 4; t++)
		sim_tenant(&s, t, (t + 1) * 5 * GBPS, 65536, 64u << 20);
	for (uint32_t i = 0; i < 64; i++) {
		sim_conn(&s, i, i % 4, (i % 3) * 4 * GBPS, 4096u << (i % 6));
		s.c[i].per_packet = (i % 5) == 0;
	}
	for (int k = 0; k < 100; k++) {
		uint32_t ci = (uint32_t)(sim_rand(&s) % 64);

		sim_run(&s, s.now + 500 * US);
		/* DCQCN rates from 0.5 to 10 Gb/s, or released (0). */
		CU_ASSERT_EQUAL(shaper_conn_set_rate(s.sh, ci,
			(sim_rand(&s) % 21) * GBPS / 2, s.now), 0);
		/* Reloads, some of them to uncapped (0) and back. */
		if (k % 5 == 0)
			sim_tenant(&s, (uint32_t)k / 5 % 4, (sim_rand(&s) % 31) * GBPS,
				   65536, 64u << 20);
	}
	/* Stop posting and drain. */
	for (uint32_t i = 0; i < 64; i++)
		s.c[i].msg_bytes = 0;
	sim_run(&s, s.now + 200 * MS);
	for (uint32_t i = 0; i < 64; i++) {
		CU_ASSERT_EQUAL(s.c[i].reorders, 0);
		CU_ASSERT_EQUAL(s.c[i].queued, 0);
		CU_ASSERT_EQUAL(s.c[i].seq_deq, s.c[i].seq_enq);
	}
	for (uint32_t t = 0; t < 4; t++) {
		shaper_tenant_stats(s.sh, t, s.now, &st);
		enq += st.enq_pkts;
		deq += st.deq_pkts;
		CU_ASSERT_EQUAL(st.queued_bytes, 0);
	}
	CU_ASSERT_EQUAL(enq, deq);
	CU_ASSERT(enq > 100000);
	CU_ASSERT_EQUAL(s.sh->items_used, 0);
	CU_ASSERT_EQUAL(shaper_next_deadline(s.sh, s.now), UINT64_MAX);
	sim_fini(&s);
}

/* Random operations, and after each one every invariant.  64 connections in
 * 2 tenants, so that calendar buckets span several chunks. */
#define NC 64

static void
test_invariants(void)
{
	struct shaper_params p = sim_params(NC, 2, 8192);
	struct shaper_out o[16];
	struct shaper *sh;
	uint64_t now = 0, rng = 12345, seq[NC] = { 0 }, next_seq[NC] = { 0 };
	unsigned int bad = 0, reorders = 0;
	bool open[NC] = { false };

	p.wheel_slots = 64;	/* A short horizon: entries get re-filed. */
	sh = shaper_create(&p, now);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	for (uint32_t i = 0; i < NC; i++)
		shaper_conn_attach(sh, i, i % 2, (i % 4) * GBPS, now);
	for (int step = 0; step < 60000 && bad == 0; step++) {
		uint64_t r;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		r = rng;
		switch (r % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5: {
			uint32_t ci = (uint32_t)(r >> 8) % NC;
			struct shaper_pkt pk = {
				.cookie = (uint64_t)ci << 40 | seq[ci], .conn = ci,
				.bytes = 64 + (uint32_t)(r >> 16) % 4096,
			};
			unsigned int kind = (unsigned int)(r >> 32) % 5;

			if (kind == 0 || !open[ci]) {
				pk.flags = SHAPER_PKT_FIRST;
				pk.charge = (r >> 40) & 1 ? (uint32_t)(r >> 41) % 300000 : 0;
				open[ci] = true;
			}
			if (kind == 1)
				pk.flags |= SHAPER_PKT_EXEMPT;
			if (kind == 2 || kind == 0) {
				pk.flags |= SHAPER_PKT_LAST;
				open[ci] = false;
			}
			if (shaper_enqueue(sh, &pk, now) == SHAPER_OK)
				seq[ci]++;
			break;
		}
		case 6: case 7: case 8: case 9: case 10: {
			unsigned int n;

			now += (r >> 8) % 20000;
			n = shaper_dequeue(sh, now, o, 1 + (unsigned int)(r >> 24) % 16);
			for (unsigned int i = 0; i < n; i++) {
				uint32_t ci = o[i].conn;

				if ((o[i].cookie & ((1ull << 40) - 1)) != next_seq[ci])
					reorders++;
				next_seq[ci] = (o[i].cookie & ((1ull << 40) - 1)) + 1;
			}
			break;
		}
		case 11:
			shaper_conn_set_rate(sh, (uint32_t)(r >> 8) % 24,
				((r >> 16) % 8) * GBPS / 4, now);
			break;
		case 12:
			shaper_conn_set_cap(sh, (uint32_t)(r >> 8) % 24, ((r >> 16) % 5) * GBPS, now);
			break;
		case 13: {
			struct shaper_tenant_params tp = {
				.rate_bps = ((r >> 8) % 6) * GBPS,
				.burst_bytes = 4096 + (r >> 16) % 200000,
				.qlimit_bytes = 64 * 1024 + (r >> 24) % (1u << 20),
			};

			shaper_tenant_config(sh, (uint32_t)(r >> 40) % 2, &tp, now);
			break;
		}
		case 14:
			shaper_charge(sh, (uint32_t)(r >> 8) % 2, (r >> 16) % 100000, now);
			break;
		default: {
			/* Re-attach an empty connection elsewhere. */
			uint32_t ci = (uint32_t)(r >> 8) % NC;
			struct shaper_conn_stats cs;

			shaper_conn_stats(sh, ci, &cs);
			if (cs.queued_items == 0 && shaper_conn_attach(sh, ci, (uint32_t)(r >> 16) % 2,
					((r >> 24) % 3) * GBPS, now) == 0)
				open[ci] = false;
			break;
		}
		}
		bad += check_invariants(sh);
	}
	/* Drain: everything queued must leave. */
	for (int i = 0; i < 200000 && sh->items_used > 0; i++) {
		unsigned int n;

		now += 5000;
		n = shaper_dequeue(sh, now, o, 16);
		for (unsigned int k = 0; k < n; k++) {
			uint32_t ci = o[k].conn;

			if ((o[k].cookie & ((1ull << 40) - 1)) != next_seq[ci])
				reorders++;
			next_seq[ci] = (o[k].cookie & ((1ull << 40) - 1)) + 1;
		}
	}
	bad += check_invariants(sh);
	printf("\n    60 000 random operations: %u invariant violations, %u out of order, "
	       "%u items left\n", bad, reorders, sh->items_used);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(reorders, 0);
	CU_ASSERT_EQUAL(sh->items_used, 0);
	shaper_free(sh);
}
#undef NC

/* Telemetry: configured and achieved rates, pacing rates, queue. */
static void
test_telemetry(void)
{
	struct shaper_params p = sim_params(4, 1, 1u << 16);
	struct shaper_tenant_stats st;
	struct shaper_conn_stats cs;
	struct sim s;

	sim_init(&s, &p);
	s.target = 256 * 1024;
	sim_tenant(&s, 0, 10 * GBPS, 262144, 64u << 20);
	sim_conn(&s, 0, 0, 40 * GBPS, 65536);
	sim_conn(&s, 1, 0, 0, 65536);
	shaper_conn_set_rate(s.sh, 0, 3 * GBPS, 0);
	sim_run(&s, 30 * MS);
	shaper_tenant_stats(s.sh, 0, s.now, &st);
	printf("\n    tenant: configured %llu, achieved %llu b/s, tokens %lld, queued %llu B\n",
	       (unsigned long long)st.rate_bps, (unsigned long long)st.achieved_bps,
	       (long long)st.tokens, (unsigned long long)st.queued_bytes);
	CU_ASSERT_EQUAL(st.rate_bps, 10 * GBPS);
	CU_ASSERT(fabs((double)st.achieved_bps / (10.0 * GBPS) - 1.0) <= 0.05);
	CU_ASSERT(st.tokens <= 262144);
	CU_ASSERT(st.queued_bytes > 0);
	CU_ASSERT_EQUAL(st.conns, 2);
	shaper_conn_stats(s.sh, 0, &cs);
	CU_ASSERT_EQUAL(cs.cap_bps, 40 * GBPS);
	CU_ASSERT_EQUAL(cs.cc_bps, 3 * GBPS);
	CU_ASSERT_EQUAL(cs.pacing_bps, 3 * GBPS);
	CU_ASSERT_EQUAL(cs.queued_bytes, s.c[0].queued);
	CU_ASSERT(cs.queued_items > 0);
	/* Connection 0 is held to 3 Gb/s; connection 1 takes the rest. */
	CU_ASSERT(fabs(sim_bps(s.c[0].all_bytes, 0, s.now) / (3.0 * GBPS) - 1.0) < 0.02);
	sim_fini(&s);
}

/* A million connections fit: one cache line of state each. */
static void
test_scale(void)
{
	struct shaper_params p = sim_params(1000000, 1024, 1u << 21);
	size_t sz = shaper_memsize(&p);
	size_t items = (size_t)p.n_items * sizeof(struct shaper_item);
	size_t tenants = (size_t)p.n_tenants * sizeof(struct shaper_tenant);

	/* The state the per-packet path touches is one cache line; the
	 * configured rates (8 B) sit apart; the wheel's and the calendars'
	 * chunks add 64 / 13 bytes each, plus reserves that never fail (per
	 * wheel slot, and two per calendar bucket: 8 MB for 1 024 tenants):
	 * at most 96 bytes per connection in all, items aside. */
	CU_ASSERT_EQUAL(sizeof(struct shaper_conn), 64);
	CU_ASSERT(sz > 0);
	printf("\n    1M connections: %.1f MB in all, %.1f B per connection besides items "
	       "and tenants\n", sz / 1e6, (double)(sz - items - tenants) / 1e6);
	CU_ASSERT((sz - items - tenants) / 1000000 <= 96);
	p.n_tenants = 70000;
	CU_ASSERT_EQUAL(shaper_memsize(&p), 0);
	p.n_tenants = 1;
	p.wheel_slots = 1000;
	CU_ASSERT_EQUAL(shaper_memsize(&p), 0);
}

int
main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("shaper", NULL, NULL);
	CU_add_test(s, "accuracy, tenant cap, 1-100 Gb/s x 4 KiB-1 MiB", test_accuracy_tenant);
	CU_add_test(s, "accuracy, QP cap, 1-100 Gb/s x 4 KiB-1 MiB", test_accuracy_qp);
	CU_add_test(s, "fairness of 512 connections (Jain)", test_fairness);
	CU_add_test(s, "tenant cap binds over QP caps", test_tenant_binds);
	CU_add_test(s, "idle share goes to the others", test_idle_share);
	CU_add_test(s, "idle time earns no credit", test_idle_no_credit);
	CU_add_test(s, "fair in bytes, not packets", test_fair_bytes);
	CU_add_test(s, "tenants isolated", test_tenant_isolation);
	CU_add_test(s, "no reordering, everything drains", test_no_reorder);
	CU_add_test(s, "invariants under random operations", test_invariants);
	CU_add_test(s, "telemetry", test_telemetry);
	CU_add_test(s, "a million connections", test_scale);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
