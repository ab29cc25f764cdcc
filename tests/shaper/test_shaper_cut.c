/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the shaper's cut-through (shaper_send_now()) on a virtual
 * clock (nanoseconds): taken for every packet when the shaper does not bind;
 * never taken against a cap (every packet that leaves is checked against its
 * tenant's token bucket and its connection's pacing, and the caps hold within
 * 1 %); fairness, and no credit for idle time through cut-through.  Order,
 * the DCQCN stages and the rules packet by packet: test_shaper_cut_order.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "shaper.h"
#include "shaper_state.h"
#include "sim.h"
#include "check.h"
#include "flows.h"

#define MS		1000000ull	/* Nanoseconds. */
#define US		1000ull
#define GBPS		1000000000ull

static const uint64_t caps[] = { 1 * GBPS, 10 * GBPS, 25 * GBPS, 40 * GBPS, 100 * GBPS };
static const uint32_t sizes[] = { 4096, 16384, 65536, 262144, 1048576 };

/*
 * Not binding: a capped tenant whose offered load (32 Gb/s) is below its
 * cap (40 Gb/s, 1 MiB burst), its connections capped at 10 Gb/s and sending
 * at 8 Gb/s; an uncapped tenant with unpaced connections, a paced one
 * charged per packet and an exempt one.  Every packet cuts through, nothing
 * is ever queued, and every counter reads as if it had been queued and sent.
 */
static void
test_cut_not_binding(void)
{
	struct shaper_params p = sim_params(16, 2, 1u << 16);
	struct shaper *sh = shaper_create(&p, 0);
	struct shaper_tenant_params tp = {
		.rate_bps = 40 * GBPS, .burst_bytes = 1u << 20, .qlimit_bytes = 64u << 20,
	};
	struct drv d;
	struct tot t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	drv_init(&d, sh, NULL, 16, 2);
	d.cut = true;
	shaper_tenant_config(sh, 0, &tp, 0);
	env_init(&d.tenv[0], 40 * GBPS, 1u << 20, 0);
	for (uint32_t i = 0; i < 8; i++) {
		shaper_conn_attach(sh, i, 0, 10 * GBPS, 0);
		drv_src(&d, i, 0, 4096u << (i % 5), 8 * GBPS, 4 * GBPS, 10 * GBPS);
	}
	for (uint32_t i = 8; i < 14; i++) {
		uint64_t cap = i == 12 ? 5 * GBPS : 0;

		shaper_conn_attach(sh, i, 1, cap, 0);
		drv_src(&d, i, 1, 16384, i == 12 ? 4 * GBPS : 25 * GBPS,
			i == 13 ? 1 * GBPS : 2 * GBPS, cap);
	}
	d.src[12].per_packet = true;
	d.src[13].xflags = SHAPER_PKT_EXEMPT;
	drv_run(&d, 50 * MS);
	for (uint32_t i = 0; i < 14; i++)
		drv_stop(&d, i);
	drv_run(&d, 51 * MS);
	t = drv_tot(&d, UINT32_MAX);
	printf("\n    %llu packets, %llu cut through, %llu queued; most items queued %u\n",
	       (unsigned long long)t.pkts, (unsigned long long)t.cut,
	       (unsigned long long)t.queued, d.max_items);
	CU_ASSERT(t.pkts > 50000);
	CU_ASSERT_EQUAL(t.cut, t.pkts);
	CU_ASSERT_EQUAL(t.queued, 0);
	CU_ASSERT_EQUAL(t.reorders, 0);
	CU_ASSERT_EQUAL(d.max_items, 0);
	CU_ASSERT_EQUAL(d.tenv[0].violations, 0);
	for (uint32_t i = 0; i < 14; i++)
		CU_ASSERT_EQUAL(d.src[i].pace.violations, 0);
	check_tenant_totals(&d, sh, 0, true);
	check_tenant_totals(&d, sh, 1, true);
	CU_ASSERT_EQUAL(check_invariants(sh), 0);
	drv_fini(&d);
	shaper_free(sh);
}

/*
 * One run of the cap matrix: `tenant_cap` puts the cap on the tenant (four
 * uncapped connections share it), otherwise on one connection.  Sources
 * send at twice the cap, `load` times the cap on average.  Returns achieved
 * / cap over [20, 120) ms; counts violations of the caps and reorders.
 */
static double
run_cut_cap(uint64_t cap, uint32_t msg, bool tenant_cap, double load,
	uint64_t *viol, struct tot *t)
{
	struct shaper_params p = sim_params(8, 1, 1u << 16);
	struct shaper *sh = shaper_create(&p, 0);
	uint32_t n = tenant_cap ? 4 : 1;
	struct shaper_tenant_params tp = {
		.rate_bps = tenant_cap ? cap : 0, .burst_bytes = 262144,
		.qlimit_bytes = 16u << 20,
	};
	struct drv d;
	double r;

	drv_init(&d, sh, NULL, n, 1);
	d.cut = true;
	shaper_tenant_config(sh, 0, &tp, 0);
	env_init(&d.tenv[0], tp.rate_bps, 262144, 0);
	for (uint32_t i = 0; i < n; i++) {
		shaper_conn_attach(sh, i, 0, tenant_cap ? 0 : cap, 0);
		drv_src(&d, i, 0, msg, 2 * cap, (uint64_t)(load * (double)cap / n),
			tenant_cap ? 0 : cap);
	}
	d.t0 = 20 * MS;
	d.t1 = 120 * MS;
	drv_run(&d, 120 * MS);
	r = sim_bps(d.twin[0], 20 * MS, 120 * MS) / (double)cap;
	*viol = d.tenv[0].violations;
	for (uint32_t i = 0; i < n; i++)
		*viol += d.src[i].pace.violations;
	*t = drv_tot(&d, 0);
	drv_fini(&d);
	shaper_free(sh);
	return r;
}

/*
 * Cut-through never breaks a cap.  For caps of 1 to 100 Gb/s and messages of
 * 4 KiB to 1 MiB, on the tenant and on a QP: overloaded (twice the cap on
 * average), the cap holds within 1 %; at 0.8 of the cap on average, with
 * bursts at twice the cap, connections go back and forth between cut-through
 * and the queues, and no packet leaves outside its tenant's bucket or its
 * connection's pacing.
 */
static void
test_cut_caps(void)
{
	double worst = 0;
	uint64_t cut_light = 0, pkts_light = 0, cut_over = 0, pkts_over = 0, switches = 0;

	for (int w = 0; w < 2; w++) {
		for (unsigned int i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			for (unsigned int j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
				uint64_t viol;
				struct tot t;
				double r = run_cut_cap(caps[i], sizes[j], w == 0, 2.0, &viol, &t);
				double err = (r - 1.0) * 100.0;

				if (fabs(err) > fabs(worst))
					worst = err;
				CU_ASSERT(fabs(err) <= 1.0);
				CU_ASSERT_EQUAL(viol, 0);
				CU_ASSERT_EQUAL(t.reorders + t.refused, 0);
				cut_over += t.cut;
				pkts_over += t.pkts;

				r = run_cut_cap(caps[i], sizes[j], w == 0, 0.8, &viol, &t);
				printf("\n    %s cap %3llu Gb/s, %7u B: overloaded %+.4f %%; at 0.8 "
				       "%.3f, %5.1f %% cut through, %llu switches, %llu violations",
				       w == 0 ? "tenant" : "QP",
				       (unsigned long long)(caps[i] / GBPS), sizes[j], err, r,
				       100.0 * (double)t.cut / (double)t.pkts,
				       (unsigned long long)t.switches, (unsigned long long)viol);
				CU_ASSERT_EQUAL(viol, 0);
				CU_ASSERT_EQUAL(t.reorders + t.refused, 0);
				cut_light += t.cut;
				pkts_light += t.pkts;
				switches += t.switches;
			}
		}
	}
	printf("\n    worst overloaded %+.4f %%; cut through: %.1f %% overloaded, %.1f %% "
	       "at 0.8\n", worst, 100.0 * (double)cut_over / (double)pkts_over,
	       100.0 * (double)cut_light / (double)pkts_light);
	/* Both paths were taken, and often in turn: the checks above saw
	 * cut-through next to a binding cap. */
	CU_ASSERT(cut_light * 10 >= pkts_light && cut_light * 10 <= 9 * pkts_light);
	CU_ASSERT(switches >= 100000);
}

/* Jain's index of 512 connections under a 25 Gb/s tenant, as in
 * test_shaper.c, with the caller trying cut-through first. */
static double
run_fairness_cut(uint32_t msg, uint64_t window, double *total, uint64_t *cut)
{
	enum { N = 512 };
	struct shaper_params p = sim_params(N, 1, 1u << 20);
	double x[N];
	struct sim s;
	double j;

	sim_init(&s, &p);
	s.cut = true;
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
	*cut = s.cut_pkts;
	sim_fini(&s);
	return j;
}

/*
 * Fairness with cut-through: the three runs of test_shaper.c (512
 * backlogged connections), and 512 connections of which half send below
 * their fair share (20 Mb/s in bursts at 1 Gb/s) and half are backlogged:
 * the light ones get what they send, the heavy ones share the rest evenly.
 */
static void
test_cut_fairness(void)
{
	enum { N = 512 };
	struct shaper_params p = sim_params(N, 1, 1u << 20);
	struct shaper_tenant_params tp = {
		.rate_bps = 25 * GBPS, .burst_bytes = 262144, .qlimit_bytes = 1ull << 30,
	};
	static const uint32_t msg[3] = { 65536, 4096, 0 };
	double x[N / 2], total, j;
	uint64_t light_posted = 0, light_sent = 0, cut;
	struct shaper *sh;
	struct drv d;
	struct tot t;

	for (int k = 0; k < 3; k++) {
		j = run_fairness_cut(msg[k], k == 2 ? 1000 * MS : 200 * MS, &total, &cut);
		printf("\n    512 x %s messages: Jain %.5f, total %.3f Gb/s, %llu cut through",
		       k == 0 ? "64 KiB" : k == 1 ? "4 KiB" : "mixed", j, total / 1e9,
		       (unsigned long long)cut);
		CU_ASSERT(j >= 0.99);
		CU_ASSERT(fabs(total / (25.0 * GBPS) - 1.0) <= 0.01);
	}

	sh = shaper_create(&p, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	shaper_tenant_config(sh, 0, &tp, 0);
	drv_init(&d, sh, NULL, N, 1);
	d.cut = true;
	env_init(&d.tenv[0], 25 * GBPS, 262144, 0);
	for (uint32_t i = 0; i < N; i++) {
		shaper_conn_attach(sh, i, 0, 1 * GBPS, 0);
		drv_src(&d, i, 0, i % 2 ? 65536 : 4096, 1 * GBPS, i % 2 ? 0 : 20000000,
			1 * GBPS);
	}
	d.t0 = 20 * MS;
	d.t1 = 220 * MS;
	drv_run(&d, 20 * MS);
	for (uint32_t i = 0; i < N; i += 2)
		light_posted -= d.src[i].posted;
	drv_run(&d, 220 * MS);
	for (uint32_t i = 0; i < N; i++) {
		if (i % 2) {
			x[i / 2] = sim_bps(d.src[i].win_sent, 20 * MS, 220 * MS);
		} else {
			light_posted += d.src[i].posted;
			light_sent += d.src[i].win_sent;
		}
	}
	j = sim_jain(x, N / 2);
	total = sim_bps(d.twin[0], 20 * MS, 220 * MS);
	t = drv_tot(&d, 0);
	printf("\n    256 light + 256 heavy: light sent %.4f of what they posted, heavy Jain "
	       "%.5f at %.2f Mb/s each, total %.3f Gb/s, %llu of %llu cut through\n",
	       (double)light_sent / (double)light_posted, j, sim_bps(d.twin[0], 20 * MS,
	       220 * MS) / 1e6 / 256 - sim_bps(light_sent, 20 * MS, 220 * MS) / 1e6 / 256,
	       total / 1e9, (unsigned long long)t.cut, (unsigned long long)t.pkts);
	CU_ASSERT(j >= 0.99);
	CU_ASSERT(fabs((double)light_sent / (double)light_posted - 1.0) <= 0.02);
	CU_ASSERT(fabs(total / (25.0 * GBPS) - 1.0) <= 0.01);
	CU_ASSERT_EQUAL(t.reorders + t.refused, 0);
	CU_ASSERT_EQUAL(d.tenv[0].violations, 0);
	drv_fini(&d);
	shaper_free(sh);
}

/*
 * No credit for idle time through cut-through: a connection that was idle
 * while another had the tenant for 100 ms starts with a message that cuts
 * through (the tenant is empty for a moment); from then on the two share
 * the tenant evenly instead of the newcomer catching up 100 ms.
 */
static void
test_cut_idle_no_credit(void)
{
	struct shaper_params p = sim_params(2, 1, 1u << 16);
	uint64_t cut;
	struct sim s;
	double a, b;

	sim_init(&s, &p);
	s.cut = true;
	s.target = 256 * 1024;
	sim_tenant(&s, 0, 10 * GBPS, 65536, 64u << 20);
	sim_conn(&s, 0, 0, 0, 65536);
	sim_conn(&s, 1, 0, 0, 0);
	sim_run(&s, 100 * MS);
	/* Connection 0 pauses and the tenant drains. */
	s.c[0].msg_bytes = 0;
	sim_run(&s, 101 * MS);
	cut = s.cut_pkts;
	s.c[1].msg_bytes = 65536;
	s.c[1].dirty = true;
	s.dirty[s.n_dirty++] = 1;
	sim_run(&s, s.now + 1);
	cut = s.cut_pkts - cut;
	s.c[0].msg_bytes = 65536;
	if (!s.c[0].dirty) {
		s.c[0].dirty = true;
		s.dirty[s.n_dirty++] = 0;
	}
	sim_window(&s, 102 * MS, 112 * MS);
	sim_run(&s, 112 * MS);
	a = sim_bps(s.c[0].win_bytes, 102 * MS, 112 * MS) / 1e9;
	b = sim_bps(s.c[1].win_bytes, 102 * MS, 112 * MS) / 1e9;
	printf("\n    newcomer cut through %llu packets; then %.3f and %.3f Gb/s\n",
	       (unsigned long long)cut, a, b);
	CU_ASSERT(cut > 0);
	CU_ASSERT(fabs(a / 5.0 - 1.0) <= 0.03);
	CU_ASSERT(fabs(b / 5.0 - 1.0) <= 0.03);
	CU_ASSERT_EQUAL(s.c[0].reorders + s.c[1].reorders, 0);
	sim_fini(&s);
}

int
main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("shaper cut-through", NULL, NULL);
	CU_add_test(s, "cut-through for every packet when not binding", test_cut_not_binding);
	CU_add_test(s, "caps hold with cut-through, 1-100 Gb/s x 4 KiB-1 MiB", test_cut_caps);
	CU_add_test(s, "fairness with cut-through", test_cut_fairness);
	CU_add_test(s, "idle time earns no credit through cut-through", test_cut_idle_no_credit);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
