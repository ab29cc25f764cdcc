/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of dcqcn/: every rule against a closed form computed by hand
 * (the derivations are in the comments and in docs/dcqcn.md), driven by a
 * virtual clock in nanoseconds.
 *
 * Notation: Rc the current rate, Rt the target rate, alpha in 1/1024 units
 * as NVIDIA documents it (the library keeps 10 more fractional bits).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "dcqcn.h"

#define US(x) ((uint64_t)(x) * 1000u)
#define GBPS(x) ((uint64_t)(x) * 1000000000u)
#define MBPS(x) ((uint64_t)(x) * 1000000u)
#define LINE GBPS(100)
#define Q10(a) ((uint32_t)(a) << 10)    /* 1/1024 units to the library's 2^-20 */

static struct dcqcn_profile
profile(const char *name, const char *const *sets)
{
	struct dcqcn_params p;
	struct dcqcn_profile prof;

	CU_ASSERT_EQUAL_FATAL(dcqcn_params_default(&p, name), 0);
	for (; sets != NULL && sets[0] != NULL; sets += 2)
		CU_ASSERT_EQUAL_FATAL(dcqcn_params_set(&p, sets[0], sets[1]), 0);
	CU_ASSERT_EQUAL_FATAL(dcqcn_profile_build(&prof, &p, LINE), 0);
	return prof;
}

/* Parameters. */

static void
test_params_defaults(void)
{
	struct dcqcn_params p;
	char buf[32];

	CU_ASSERT_EQUAL(dcqcn_params_default(&p, "nvidia"), 0);
	CU_ASSERT_EQUAL(p.model, DCQCN_MODEL_NVIDIA);
	CU_ASSERT_EQUAL(p.rpg_time_reset, 300);
	CU_ASSERT_EQUAL(p.rpg_byte_reset, 32767);
	CU_ASSERT_EQUAL(p.rpg_threshold, 1);
	CU_ASSERT_EQUAL(p.rpg_ai_rate, 5);
	CU_ASSERT_EQUAL(p.rpg_hai_rate, 50);
	CU_ASSERT_EQUAL(p.rpg_gd, 11);
	CU_ASSERT_EQUAL(p.rpg_min_dec_fac, 50);
	CU_ASSERT_EQUAL(p.rpg_min_rate, 1);
	CU_ASSERT_EQUAL(p.dce_tcp_g, 1019);
	CU_ASSERT_EQUAL(p.dce_tcp_rtt, 1);
	CU_ASSERT_EQUAL(p.rate_reduce_monitor_period, 4);
	CU_ASSERT_EQUAL(p.initial_alpha_value, 1023);
	CU_ASSERT_EQUAL(p.min_time_between_cnps, 4);
	CU_ASSERT_EQUAL(p.cnp_dscp, 48);
	CU_ASSERT_EQUAL(p.cnp_802p_prio, 6);
	CU_ASSERT_EQUAL(p.cnp_mode, DCQCN_CNP_SUPPRESS);
	CU_ASSERT_EQUAL(dcqcn_params_default(&p, NULL), 0);
	CU_ASSERT_EQUAL(p.model, DCQCN_MODEL_NVIDIA);

	CU_ASSERT_EQUAL(dcqcn_params_default(&p, "paper"), 0);
	CU_ASSERT_EQUAL(p.model, DCQCN_MODEL_PAPER);
	CU_ASSERT_EQUAL(p.rpg_time_reset, 55);
	CU_ASSERT_EQUAL(p.rpg_threshold, 5);
	CU_ASSERT_EQUAL(p.dce_tcp_rtt, 55);
	CU_ASSERT_EQUAL(p.dce_tcp_g, 1020);
	CU_ASSERT_EQUAL(p.min_time_between_cnps, 50);
	CU_ASSERT_EQUAL(p.cnp_mode, DCQCN_CNP_DEFER);
	CU_ASSERT_EQUAL(dcqcn_params_get(&p, "cnp_mode", buf, sizeof(buf)), 5);
	CU_ASSERT_STRING_EQUAL(buf, "defer");

	CU_ASSERT_EQUAL(dcqcn_params_default(&p, "mellanox"), -ENOENT);
}

static void
test_params_set(void)
{
	struct dcqcn_params p, before;
	char buf[32];
	unsigned int n;

	dcqcn_params_default(&p, "nvidia");
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_ai_rate", "40"), 0);
	CU_ASSERT_EQUAL(p.rpg_ai_rate, 40);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "clamp_tgt_rate", "true"), 0);
	CU_ASSERT_EQUAL(p.clamp_tgt_rate, 1);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "cnp_mode", "defer"), 0);
	CU_ASSERT_EQUAL(p.cnp_mode, DCQCN_CNP_DEFER);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "pmax", "2.5"), 0);
	CU_ASSERT_DOUBLE_EQUAL(p.pmax, 2.5, 1e-12);
	CU_ASSERT_EQUAL(dcqcn_params_get(&p, "rpg_ai_rate", buf, sizeof(buf)), 2);
	CU_ASSERT_STRING_EQUAL(buf, "40");

	before = p;
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_foo", "1"), -ENOENT);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "RPG_AI_RATE", "1"), -ENOENT);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_ai_rate", ""), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_ai_rate", "-1"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_ai_rate", " 5"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_ai_rate", "5x"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_ai_rate", "4294967296"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "dce_tcp_g", "1024"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_min_dec_fac", "101"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_time_reset", "0"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_threshold", "32"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_gd", "9"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "cnp_dscp", "64"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "cnp_802p_prio", "8"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "clamp_tgt_rate", "2"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "cnp_mode", "drop"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "pmax", "100.5"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "pmax", "nan"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "pmax", "-0"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_params_set(&p, "rpg_ai_rate", NULL), -EINVAL);
	CU_ASSERT_EQUAL(memcmp(&p, &before, sizeof(p)), 0);

	/* Every listed name can be read back and set to what it reads. */
	for (n = 0; dcqcn_param_name(n) != NULL; n++) {
		const char *name = dcqcn_param_name(n);

		CU_ASSERT_TRUE(dcqcn_params_get(&p, name, buf, sizeof(buf)) > 0);
		CU_ASSERT_EQUAL(dcqcn_params_set(&p, name, buf), 0);
		CU_ASSERT_PTR_NOT_NULL(dcqcn_param_unit(name));
	}
	CU_ASSERT_EQUAL(n, 25);
	CU_ASSERT_EQUAL(memcmp(&p, &before, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(dcqcn_param_unit("rpg_time_reset"), "us");
	CU_ASSERT_STRING_EQUAL(dcqcn_param_unit("rpg_hai_rate"), "Mb/s");
	CU_ASSERT_PTR_NULL(dcqcn_param_unit("nope"));
}

static void
test_profile_build(void)
{
	struct dcqcn_params p;
	struct dcqcn_profile prof;

	dcqcn_params_default(&p, "nvidia");
	CU_ASSERT_EQUAL(dcqcn_profile_build(&prof, &p, LINE), 0);
	CU_ASSERT_EQUAL(prof.line_bps, LINE);
	CU_ASSERT_EQUAL(prof.max_bps, LINE);            /* rpg_max_rate 0 */
	CU_ASSERT_EQUAL(prof.min_bps, MBPS(1));
	CU_ASSERT_EQUAL(prof.ai_bps, MBPS(5));
	CU_ASSERT_EQUAL(prof.hai_bps, MBPS(50));
	CU_ASSERT_EQUAL(prof.time_reset_ns, US(300));
	CU_ASSERT_EQUAL(prof.alpha_period_ns, US(1));
	CU_ASSERT_EQUAL(prof.monitor_ns, US(4));
	CU_ASSERT_EQUAL(prof.cnp_window_ns, US(4));
	CU_ASSERT_EQUAL(prof.alpha_init, Q10(1023));
	CU_ASSERT_EQUAL(prof.pmax_q32, 42949673u);      /* 1 % of 2^32, rounded */

	dcqcn_params_set(&p, "rpg_max_rate", "40000");
	CU_ASSERT_EQUAL(dcqcn_profile_build(&prof, &p, LINE), 0);
	CU_ASSERT_EQUAL(prof.max_bps, GBPS(40));
	dcqcn_params_set(&p, "rpg_max_rate", "400000");  /* above the line: the line */
	CU_ASSERT_EQUAL(dcqcn_profile_build(&prof, &p, LINE), 0);
	CU_ASSERT_EQUAL(prof.max_bps, LINE);

	CU_ASSERT_EQUAL(dcqcn_profile_build(&prof, &p, 0), -EINVAL);
	dcqcn_params_set(&p, "rpg_min_rate", "100001");
	CU_ASSERT_EQUAL(dcqcn_profile_build(&prof, &p, LINE), -EINVAL);
	dcqcn_params_default(&p, "nvidia");
	dcqcn_params_set(&p, "kmin", "300000");
	CU_ASSERT_EQUAL(dcqcn_profile_build(&prof, &p, LINE), -EINVAL);
}

/* Congestion point. */

static void
test_cp_curve(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);    /* 5000, 200000, 1 % */
	uint64_t pmax = prof.pmax_q32;

	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 0), 0);
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 5000), 0);
	/* One byte above Kmin: pmax * 1 / 195000. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 5001), pmax / 195000);
	/* Halfway, (102500 - 5000) / 195000 = 1/2: pmax / 2. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 102500), pmax / 2);
	CU_ASSERT_DOUBLE_EQUAL(dcqcn_cp_mark_prob(&prof, 102500), 0.005, 1e-9);
	/* A quarter: 53750. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 53750), pmax / 4);
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 200000), pmax);
	CU_ASSERT_DOUBLE_EQUAL(dcqcn_cp_mark_prob(&prof, 200000), 0.01, 1e-9);
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 200001), UINT64_C(1) << 32);
	CU_ASSERT_DOUBLE_EQUAL(dcqcn_cp_mark_prob(&prof, 1u << 30), 1.0, 0);

	/* Kmin = Kmax is a step from 0 to 1. */
	prof = profile("nvidia", (const char *const[]){ "kmin", "1000", "kmax", "1000", NULL });
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 1000), 0);
	CU_ASSERT_EQUAL(dcqcn_cp_mark_prob_q32(&prof, 1001), UINT64_C(1) << 32);
}

static void
test_cp_mark(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);
	struct dcqcn_counters c = { 0 };
	uint32_t thr = (uint32_t)(prof.pmax_q32 / 2);  /* at 102500 bytes */

	/* Not-ECT is never marked, even above Kmax with the smallest number. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_NOT_ECT, 1u << 30, 0, &c), DCQCN_ECN_NOT_ECT);
	/* CE stays CE and is not counted again. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_CE, 0, 0, &c), DCQCN_ECN_CE);
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_CE, 1u << 30, 0, &c), DCQCN_ECN_CE);
	CU_ASSERT_EQUAL(c.cp_ecn_marked, 0);
	/* Below Kmin nothing is marked. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_ECT0, 5000, 0, &c), DCQCN_ECN_ECT0);
	/* Above Kmax every ECT packet is marked, whatever the number. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_ECT0, 200001, UINT32_MAX, &c), DCQCN_ECN_CE);
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_ECT1, 200001, UINT32_MAX, &c), DCQCN_ECN_CE);
	CU_ASSERT_EQUAL(c.cp_ecn_marked, 2);
	/* In between: marked exactly when the number is below the probability. */
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_ECT0, 102500, thr - 1, &c), DCQCN_ECN_CE);
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_ECT1, 102500, thr, &c), DCQCN_ECN_ECT1);
	CU_ASSERT_EQUAL(c.cp_ecn_marked, 3);
	CU_ASSERT_EQUAL(dcqcn_cp_mark(&prof, DCQCN_ECN_ECT1, 102500, 0, NULL), DCQCN_ECN_CE);
}

/* Notification point. */

static void
test_np_suppress(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);    /* 4 us, suppress */
	struct dcqcn_counters c = { 0 };
	struct dcqcn_np np;

	dcqcn_np_init(&np);
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, US(100), &c));        /* first: at once */
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(101), &c));
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(104) - 1, &c));
	/* Suppressed marks leave nothing behind. */
	CU_ASSERT_EQUAL(dcqcn_np_next_deadline(&np, &prof), DCQCN_NEVER);
	CU_ASSERT_FALSE(dcqcn_np_poll(&np, &prof, US(200), &c));
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, US(204), &c));
	/* The window counts from the last CNP (204), not from the last mark. */
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(207), &c));
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, US(208), &c));
	CU_ASSERT_EQUAL(c.np_ecn_marked_roce_packets, 6);
	CU_ASSERT_EQUAL(c.np_cnp_sent, 3);

	/* A zero window sends for every mark. */
	prof = profile("nvidia", (const char *const[]){ "min_time_between_cnps", "0", NULL });
	dcqcn_np_init(&np);
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, 0, NULL));
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, 0, NULL));
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, 1, NULL));

	/* Disabled: marks are counted, no CNP leaves. */
	prof = profile("nvidia", (const char *const[]){ "np_enable", "0", NULL });
	memset(&c, 0, sizeof(c));
	dcqcn_np_init(&np);
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, 0, &c));
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(100), &c));
	CU_ASSERT_EQUAL(c.np_ecn_marked_roce_packets, 2);
	CU_ASSERT_EQUAL(c.np_cnp_sent, 0);
}

static void
test_np_defer(void)
{
	struct dcqcn_profile prof = profile("paper", NULL);     /* 50 us, defer */
	struct dcqcn_counters c = { 0 };
	struct dcqcn_np np;

	dcqcn_np_init(&np);
	CU_ASSERT_EQUAL(dcqcn_np_next_deadline(&np, &prof), DCQCN_NEVER);
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, US(0), &c));  /* first: at once */
	CU_ASSERT_FALSE(dcqcn_np_poll(&np, &prof, US(60), &c)); /* nothing pending */
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(10), &c));
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(20), &c));
	/* Two marks in the window make one CNP at its end. */
	CU_ASSERT_EQUAL(dcqcn_np_next_deadline(&np, &prof), US(50));
	CU_ASSERT_FALSE(dcqcn_np_poll(&np, &prof, US(50) - 1, &c));
	CU_ASSERT_TRUE(dcqcn_np_poll(&np, &prof, US(50), &c));
	CU_ASSERT_FALSE(dcqcn_np_poll(&np, &prof, US(50), &c));
	CU_ASSERT_EQUAL(dcqcn_np_next_deadline(&np, &prof), DCQCN_NEVER);
	/* The next window starts at 50: a mark at 60 waits until 100. */
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(60), &c));
	CU_ASSERT_EQUAL(dcqcn_np_next_deadline(&np, &prof), US(100));
	/* A late poll sends at once, and the window restarts when it leaves. */
	CU_ASSERT_TRUE(dcqcn_np_poll(&np, &prof, US(130), &c));
	CU_ASSERT_FALSE(dcqcn_np_on_ce(&np, &prof, US(179), &c));
	CU_ASSERT_EQUAL(dcqcn_np_next_deadline(&np, &prof), US(180));
	/* A mark that finds the window over sends at once and clears the wait. */
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, US(180), &c));
	CU_ASSERT_EQUAL(dcqcn_np_next_deadline(&np, &prof), DCQCN_NEVER);
	/* After a quiet spell the first mark sends at once. */
	CU_ASSERT_TRUE(dcqcn_np_on_ce(&np, &prof, US(1000), &c));
	CU_ASSERT_EQUAL(c.np_ecn_marked_roce_packets, 7);
	CU_ASSERT_EQUAL(c.np_cnp_sent, 5);
}

/* Reaction point. */

/*
 * First cut from 100 Gb/s, default profile: alpha = initial_alpha_value =
 * 1023/1024, rpg_gd = 11, so dec = Rc * 1023 / 2048 = 49 951 171 875 b/s
 * (exact: 10^11 = 2^11 * 48 828 125), within the 50 % bound of
 * rpg_min_dec_fac, and Rc = 50 048 828 125 b/s.
 */
static void
test_rp_first_cut(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);
	struct dcqcn_counters c = { 0 };
	struct dcqcn_rp rp;

	dcqcn_rp_init(&rp, &prof);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), LINE);
	CU_ASSERT_EQUAL(dcqcn_rp_next_event(&rp, &prof), DCQCN_NEVER);
	dcqcn_rp_on_cnp(&rp, &prof, US(7), &c);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(50048828125));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), LINE);
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), Q10(1023));
	CU_ASSERT_EQUAL(dcqcn_rp_stage(&rp, &prof), DCQCN_STAGE_FR);
	CU_ASSERT_EQUAL(c.rp_cnp_handled, 1);
	/* The next event is the alpha update, one dce_tcp_rtt later. */
	CU_ASSERT_EQUAL(dcqcn_rp_next_event(&rp, &prof), US(8));

	/* The paper: alpha = 1, Rc = Rc / 2, then alpha = (1 - g) + g = 1. */
	prof = profile("paper", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(50));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), LINE);
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), DCQCN_ALPHA_ONE);
	/* Alpha decay and the first increase are both due at K = T = 55 us. */
	CU_ASSERT_EQUAL(dcqcn_rp_next_event(&rp, &prof), US(55));
}

/*
 * Recovery after one CNP, timer only (no tx, so the byte counter never
 * fires), default profile.  Rt stays 100 Gb/s (AI adds 5 Mb/s but Rt is
 * capped at the line rate), and each step does Rc = ceil((Rt + Rc) / 2), so
 * the gap d = Rt - Rc halves with the floor: d_k = d_0 >> k, with
 * d_0 = 49 951 171 875.  Step k happens at k * 300 us.
 *   k = 1: 75 024 414 063 (fast recovery, since F = 1)
 *   k = 5: 98 439 025 879
 *   k = 6: 99 219 512 940, the first within 1 % of the line rate (1800 us)
 *   k = 36: d_0 < 2^36, so Rc = Rt: the limiter is released (10 800 us).
 */
static void
test_rp_recovery_nvidia(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);
	const uint64_t d0 = UINT64_C(49951171875);
	struct dcqcn_rp rp;
	unsigned int k;

	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	for (k = 1; k <= 35; k++) {
		dcqcn_rp_advance(&rp, &prof, US(300 * k) - 1);
		CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), LINE - (d0 >> (k - 1)));
		dcqcn_rp_advance(&rp, &prof, US(300 * k));
		CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), LINE - (d0 >> k));
		CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), LINE);
		/* One fast-recovery step (F = 1), then additive increase. */
		CU_ASSERT_EQUAL(dcqcn_rp_stage(&rp, &prof), DCQCN_STAGE_AI);
		if (k == 5)
			CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(98439025879));
		if (k == 5)
			CU_ASSERT_TRUE(dcqcn_rp_rate(&rp) < LINE / 100 * 99);
		if (k == 6)
			CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(99219512940));
	}
	CU_ASSERT_EQUAL(LINE - dcqcn_rp_rate(&rp), 1);
	CU_ASSERT_EQUAL(dcqcn_rp_next_event(&rp, &prof), US(10800));
	dcqcn_rp_advance(&rp, &prof, US(10800));
	/* Released: line rate, no alpha, no timer. */
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), LINE);
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), 0);
	CU_ASSERT_EQUAL(dcqcn_rp_next_event(&rp, &prof), DCQCN_NEVER);
	/* The next CNP is a first CNP again: the same cut as at the start. */
	dcqcn_rp_on_cnp(&rp, &prof, US(20000), NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(50048828125));
}

/*
 * The paper after one CNP: Rc = 50 Gb/s, Rt = 100 Gb/s.  F = 5 fast-recovery
 * steps every T = 55 us (Rc = 75, 87.5, 93.75, 96.875, 98.4375 Gb/s), then
 * additive increase (Rt would be 100.04, capped at 100): 99.21875 Gb/s at
 * 330 us.
 */
static void
test_rp_recovery_paper(void)
{
	struct dcqcn_profile prof = profile("paper", NULL);
	static const uint64_t want[] = {
		UINT64_C(75000000000), UINT64_C(87500000000), UINT64_C(93750000000),
		UINT64_C(96875000000), UINT64_C(98437500000), UINT64_C(99218750000),
	};
	struct dcqcn_rp rp;

	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	for (unsigned int k = 1; k <= 6; k++) {
		CU_ASSERT_EQUAL(dcqcn_rp_stage(&rp, &prof),
				k <= 5 ? DCQCN_STAGE_FR : DCQCN_STAGE_AI);
		dcqcn_rp_advance(&rp, &prof, US(55 * k));
		CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), want[k - 1]);
		CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), LINE);
	}

	/* With the target below the line, AI adds R_AI = 40 Mb/s to it. */
	prof = profile("paper", (const char *const[]){ "rate_to_set_on_first_cnp", "10000", NULL });
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(10));
	dcqcn_rp_advance(&rp, &prof, US(55 * 5));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(10));
	dcqcn_rp_advance(&rp, &prof, US(55 * 6));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), GBPS(10) + MBPS(40));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(10) + MBPS(20));
	/* No tx: the byte counter never reaches F, so never hyper increase. */
	dcqcn_rp_advance(&rp, &prof, US(55 * 100));
	CU_ASSERT_EQUAL(dcqcn_rp_stage(&rp, &prof), DCQCN_STAGE_AI);
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), GBPS(10) + 95 * MBPS(40));
}

/*
 * Alpha decay.  NVIDIA: every dce_tcp_rtt = 1 us without a CNP,
 * alpha = alpha * 1019 / 1024, starting from 1023/1024; with a CNP in the
 * period alpha = alpha * 1019 / 1024 + 5 / 1024.  The library truncates
 * each step at 2^-20, so it must equal the same recurrence in integers and
 * stay within n * 2^-20 of the real closed form (1019/1024)^n * 1023/1024.
 */
static void
test_rp_alpha_nvidia(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);
	struct dcqcn_rp rp;
	uint64_t ref = Q10(1023);
	unsigned int n;

	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	for (n = 1; n <= 250; n++) {
		double exact = pow(1019.0 / 1024.0, n) * 1023.0 / 1024.0;

		ref = ref * 1019 >> 10;
		dcqcn_rp_advance(&rp, &prof, US(n));
		CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), ref);
		CU_ASSERT_TRUE(fabs((double)dcqcn_rp_alpha(&rp) / DCQCN_ALPHA_ONE - exact) <=
			       n / (double)DCQCN_ALPHA_ONE);
	}
	/* A CNP at 250.5 us is in the period that ends at 251 us. */
	dcqcn_rp_on_cnp(&rp, &prof, US(250) + 500, NULL);
	dcqcn_rp_advance(&rp, &prof, US(251));
	ref = (ref * 1019 + (UINT64_C(5) << 20)) >> 10;
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), ref);
	/* The period after it has no CNP: plain decay again. */
	dcqcn_rp_advance(&rp, &prof, US(252));
	ref = ref * 1019 >> 10;
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), ref);
}

/*
 * Paper: alpha = (1 - g) alpha + g at each CNP, g = 1/256, and
 * alpha = (1 - g) alpha after K = 55 us without a CNP, then every K.
 */
static void
test_rp_alpha_paper(void)
{
	struct dcqcn_profile prof = profile("paper", NULL);
	const uint64_t one = DCQCN_ALPHA_ONE;
	struct dcqcn_rp rp;
	uint64_t a;

	dcqcn_rp_init(&rp, &prof);
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), one);      /* the flow starts at 1 */
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), one);
	dcqcn_rp_advance(&rp, &prof, US(55) - 1);
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), one);
	dcqcn_rp_advance(&rp, &prof, US(55));
	a = one * 255 / 256;
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), a);
	dcqcn_rp_advance(&rp, &prof, US(110));
	a = a * 1020 >> 10;
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), a);
	/* A CNP at 120 us: the cut uses alpha, then alpha rises. */
	dcqcn_rp_on_cnp(&rp, &prof, US(120), NULL);
	a = (a * 1020 + (UINT64_C(4) << 20)) >> 10;
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), a);
	/* The decay timer restarted: nothing at 165 us, a decay at 175 us. */
	dcqcn_rp_advance(&rp, &prof, US(175) - 1);
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), a);
	dcqcn_rp_advance(&rp, &prof, US(175));
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), a * 1020 >> 10);
}

/*
 * rate_reduce_monitor_period = 4 us: a CNP at 0 cuts; CNPs at 1, 2 and
 * 3 us cut once, when the period ends at 4 us, with alpha as it is then:
 * the tick at 1 us has no CNP in its period (the CNP at 1 us comes after
 * the tick), the ticks at 2, 3 and 4 us each have one.  Rt is not clamped
 * (no increase since the first cut), so it stays 100 Gb/s.
 */
static void
test_rp_monitor_period(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);
	struct dcqcn_counters c = { 0 };
	uint64_t rc1 = UINT64_C(50048828125), a = Q10(1023), rc2;
	struct dcqcn_rp rp;

	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, &c);
	dcqcn_rp_on_cnp(&rp, &prof, US(1), &c);
	dcqcn_rp_on_cnp(&rp, &prof, US(2), &c);
	dcqcn_rp_on_cnp(&rp, &prof, US(3), &c);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), rc1);
	CU_ASSERT_EQUAL(dcqcn_rp_next_event(&rp, &prof), US(4));
	dcqcn_rp_advance(&rp, &prof, US(4) - 1);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), rc1);
	a = a * 1019 >> 10;                                     /* 1 us */
	a = (a * 1019 + (UINT64_C(5) << 20)) >> 10;             /* 2 us */
	a = (a * 1019 + (UINT64_C(5) << 20)) >> 10;             /* 3 us */
	a = (a * 1019 + (UINT64_C(5) << 20)) >> 10;             /* 4 us */
	dcqcn_rp_advance(&rp, &prof, US(4));
	CU_ASSERT_EQUAL(dcqcn_rp_alpha(&rp), a);
	/* Rc * alpha / 2 in 2^-20 units: (Rc * alpha) >> 21. */
	rc2 = rc1 - (uint64_t)(((double)rc1 * (double)a) / (double)(1u << 21));
	CU_ASSERT_TRUE(dcqcn_rp_rate(&rp) == rc2 || dcqcn_rp_rate(&rp) == rc2 + 1 ||
		       dcqcn_rp_rate(&rp) + 1 == rc2);
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), LINE);
	CU_ASSERT_EQUAL(c.rp_cnp_handled, 4);
	/* Later CNPs in the same period are absorbed into that one cut. */
	dcqcn_rp_advance(&rp, &prof, US(7));
	rc2 = dcqcn_rp_rate(&rp);
	dcqcn_rp_on_cnp(&rp, &prof, US(7), &c);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), rc2);
	dcqcn_rp_advance(&rp, &prof, US(8));
	CU_ASSERT_TRUE(dcqcn_rp_rate(&rp) < rc2);

	/* The paper profile (period 0) cuts at every CNP: 100, 50, 25. */
	prof = profile("paper", NULL);
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	dcqcn_rp_on_cnp(&rp, &prof, US(1), NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(25));
	/* RT = RC at each cut. */
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), GBPS(50));
}

/*
 * The floor: with rpg_min_dec_fac = 50 each cut at most halves Rc, and 30
 * cuts would go below 100 Gb/s / 2^29 < 1 Mb/s, so Rc stops at rpg_min_rate.
 */
static void
test_rp_min_rate(void)
{
	struct dcqcn_profile prof = profile("nvidia", NULL);
	struct dcqcn_rp rp;

	dcqcn_rp_init(&rp, &prof);
	for (unsigned int i = 0; i < 30; i++)
		dcqcn_rp_on_cnp(&rp, &prof, US(4 * i), NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), MBPS(1));

	prof = profile("nvidia", (const char *const[]){ "rpg_min_rate", "20000", NULL });
	dcqcn_rp_init(&rp, &prof);
	for (unsigned int i = 0; i < 30; i++)
		dcqcn_rp_on_cnp(&rp, &prof, US(4 * i), NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(20));
}

/*
 * The rpg_min_dec_fac bound.  rpg_gd = 10 makes the cut Rc * alpha, 1023/1024
 * of Rc, which the bound limits to Rc - Rc * min_dec_fac / 100:
 * 50 -> 50 Gb/s, 80 -> 80 Gb/s, 100 -> no cut at all, 0 -> 100/1024 Gb/s.
 */
static void
test_rp_min_dec_fac(void)
{
	static const struct {
		const char *fac;
		uint64_t rate;
	} cases[] = {
		{ "50", GBPS(50) },
		{ "80", GBPS(80) },
		{ "100", GBPS(100) },
		{ "0", UINT64_C(97656250) },    /* 10^11 - 10^11 * 1023 / 1024 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const sets[] = { "rpg_gd", "10", "rpg_min_dec_fac", cases[i].fac, NULL };
		struct dcqcn_profile prof = profile("nvidia", sets);
		struct dcqcn_rp rp;

		dcqcn_rp_init(&rp, &prof);
		dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
		CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), cases[i].rate);
	}
}

/*
 * Byte counter against timer, default profile but Rc = Rt = 10 Gb/s set by
 * the first CNP (rate_to_set_on_first_cnp), so that increases are visible
 * in Rt.  F = 1, rpg_byte_reset = 32767 bytes, rpg_time_reset = 300 us.
 *   32767 B at 1 us:  byte event, T=0 BC=0: FR, Rc = Rt = 10 G
 *   32766 B at 2 us:  no event
 *   1 B at 3 us:      byte event, T=0 BC=1: AI, Rt = 10.005, Rc = 10.0025
 *   timer at 300 us:  T=0 BC=2: AI, Rt = 10.010, Rc = 10.00625
 *   32767 B at 301:   T=1 BC=2: HI, i = 1: Rt = 10.060, Rc = 10.033125
 *   timer at 600 us:  T=1 BC=3: HI, i = 1: Rt = 10.110, Rc = 10.0715625
 *   32767 B at 601:   T=2 BC=3: HI, i = 2: Rt = 10.210, Rc = 10.14078125
 */
static void
test_rp_byte_counter(void)
{
	const char *const sets[] = { "rate_to_set_on_first_cnp", "10000", NULL };
	struct dcqcn_profile prof = profile("nvidia", sets);
	struct dcqcn_rp rp;

	dcqcn_rp_init(&rp, &prof);
	/* Bytes before the first CNP do not count: there is no limiter. */
	dcqcn_rp_on_tx(&rp, &prof, 100000, 0);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(10));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), GBPS(10));
	dcqcn_rp_on_tx(&rp, &prof, 32767, US(1));
	CU_ASSERT_EQUAL(rp.bc_stage, 1);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), GBPS(10));
	CU_ASSERT_EQUAL(dcqcn_rp_stage(&rp, &prof), DCQCN_STAGE_AI);
	dcqcn_rp_on_tx(&rp, &prof, 32766, US(2));
	CU_ASSERT_EQUAL(rp.bc_stage, 1);
	dcqcn_rp_on_tx(&rp, &prof, 1, US(3));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), UINT64_C(10005000000));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(10002500000));
	dcqcn_rp_advance(&rp, &prof, US(300));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), UINT64_C(10010000000));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(10006250000));
	CU_ASSERT_EQUAL(dcqcn_rp_stage(&rp, &prof), DCQCN_STAGE_HI);
	dcqcn_rp_on_tx(&rp, &prof, 32767, US(301));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), UINT64_C(10060000000));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(10033125000));
	dcqcn_rp_advance(&rp, &prof, US(600));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), UINT64_C(10110000000));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(10071562500));
	dcqcn_rp_on_tx(&rp, &prof, 32767, US(601));
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), UINT64_C(10210000000));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(10140781250));

	/* One large send fires once per rpg_byte_reset bytes. */
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	dcqcn_rp_on_tx(&rp, &prof, 3 * 32767 + 5, US(1));
	CU_ASSERT_EQUAL(rp.bc_stage, 3);
	CU_ASSERT_EQUAL(rp.bytes, 5);

	/* rpg_byte_reset = 0 disables the byte counter. */
	prof = profile("nvidia", (const char *const[]){ "rpg_byte_reset", "0", NULL });
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	dcqcn_rp_on_tx(&rp, &prof, 1u << 30, US(1));
	CU_ASSERT_EQUAL(rp.bc_stage, 0);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), UINT64_C(50048828125));
}

/*
 * Target clamping on a cut.  After one timer increase (T = 1):
 * clamp_tgt_rate_after_time_inc = 1 (default) sets Rt = Rc, = 0 keeps Rt;
 * clamp_tgt_rate = 1 sets Rt = Rc even with no increase at all.
 */
static void
test_rp_clamp(void)
{
	const uint64_t rc1 = UINT64_C(75024414063);    /* after one FR step */
	struct dcqcn_profile prof = profile("nvidia", NULL);
	struct dcqcn_rp rp;

	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	dcqcn_rp_advance(&rp, &prof, US(300));
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), rc1);
	dcqcn_rp_on_cnp(&rp, &prof, US(300), NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), rc1);

	prof = profile("nvidia", (const char *const[]){ "clamp_tgt_rate_after_time_inc", "0", NULL });
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	dcqcn_rp_advance(&rp, &prof, US(300));
	dcqcn_rp_on_cnp(&rp, &prof, US(300), NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), LINE);

	prof = profile("nvidia", (const char *const[]){ "clamp_tgt_rate", "1", NULL });
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, NULL);
	dcqcn_rp_on_cnp(&rp, &prof, US(10), NULL);
	CU_ASSERT_EQUAL(dcqcn_rp_target(&rp), UINT64_C(50048828125));
}

static void
test_rp_ignored(void)
{
	struct dcqcn_profile prof = profile("nvidia", (const char *const[]){ "rp_enable", "0", NULL });
	struct dcqcn_counters c = { 0 };
	struct dcqcn_rp rp;

	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, 0, &c);
	CU_ASSERT_EQUAL(dcqcn_rp_rate(&rp), LINE);
	CU_ASSERT_EQUAL(c.rp_cnp_ignored, 1);
	CU_ASSERT_EQUAL(c.rp_cnp_handled, 0);

	/* A CNP stamped before the time already processed is stale. */
	prof = profile("nvidia", NULL);
	memset(&c, 0, sizeof(c));
	dcqcn_rp_init(&rp, &prof);
	dcqcn_rp_on_cnp(&rp, &prof, US(10), &c);
	dcqcn_rp_on_cnp(&rp, &prof, US(9), &c);
	CU_ASSERT_EQUAL(c.rp_cnp_handled, 1);
	CU_ASSERT_EQUAL(c.rp_cnp_ignored, 1);
}

/* A small deterministic generator for the event-order test. */
static uint32_t
lcg(uint64_t *s)
{
	*s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (uint32_t)(*s >> 33);
}

static int
rp_equal(const struct dcqcn_rp *a, const struct dcqcn_rp *b)
{
	return a->rc_bps == b->rc_bps && a->rt_bps == b->rt_bps && a->alpha == b->alpha &&
	       a->t_stage == b->t_stage && a->bc_stage == b->bc_stage && a->bytes == b->bytes &&
	       a->active == b->active && a->cut_pending == b->cut_pending &&
	       a->last_cut_ns == b->last_cut_ns && a->alpha_cnp == b->alpha_cnp;
}

/*
 * advance() processes timer events in the order they would have fired: one
 * call across a long gap must leave the same state as stepping through
 * every event one by one (next_event()), and as advancing every 250 ns.
 * 2000 random CNPs and sends over 40 ms, for both profiles, with bursts of
 * CNPs (monitor-period and alpha ties) and long quiet gaps (releases).
 */
static void
test_rp_advance_order(void)
{
	static const char *const names[] = { "nvidia", "paper" };

	for (size_t p = 0; p < 2; p++) {
		struct dcqcn_profile prof = profile(names[p], NULL);
		struct dcqcn_rp lazy, stepped, fine;
		uint64_t seed = 12345 + p, t = 0, f = 0, next;
		unsigned int mismatches = 0;

		dcqcn_rp_init(&lazy, &prof);
		dcqcn_rp_init(&stepped, &prof);
		dcqcn_rp_init(&fine, &prof);
		for (int i = 0; i < 2000; i++) {
			uint32_t r = lcg(&seed);
			uint32_t bytes = lcg(&seed) % 70000;

			/* Mostly short gaps, some exact multiples of 1 us, a few long. */
			if (r % 50 == 0)
				t += US(2000 + r % 3000);
			else if (r % 3 == 0)
				t += US(r % 7);
			else
				t += r % 40000;
			while ((next = dcqcn_rp_next_event(&stepped, &prof)) <= t)
				dcqcn_rp_advance(&stepped, &prof, next);
			for (; f + 250 <= t; f += 250)
				dcqcn_rp_advance(&fine, &prof, f + 250);
			if (r % 4 == 0) {
				dcqcn_rp_on_cnp(&lazy, &prof, t, NULL);
				dcqcn_rp_on_cnp(&stepped, &prof, t, NULL);
				dcqcn_rp_on_cnp(&fine, &prof, t, NULL);
			} else {
				dcqcn_rp_on_tx(&lazy, &prof, bytes, t);
				dcqcn_rp_on_tx(&stepped, &prof, bytes, t);
				dcqcn_rp_on_tx(&fine, &prof, bytes, t);
			}
			if (!rp_equal(&lazy, &stepped) || !rp_equal(&lazy, &fine))
				mismatches++;
		}
		CU_ASSERT_EQUAL(mismatches, 0);
		/* The scenario did exercise the machine. */
		CU_ASSERT_TRUE(t > US(40000));
	}
}

int
main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("dcqcn", NULL, NULL);
	CU_add_test(s, "named profiles hold the documented defaults", test_params_defaults);
	CU_add_test(s, "params_set: names, ranges, errors", test_params_set);
	CU_add_test(s, "profile_build: units and consistency", test_profile_build);
	CU_add_test(s, "CP: RED curve points", test_cp_curve);
	CU_add_test(s, "CP: only ECT is marked, CE stays CE", test_cp_mark);
	CU_add_test(s, "NP: suppress timing", test_np_suppress);
	CU_add_test(s, "NP: defer timing", test_np_defer);
	CU_add_test(s, "RP: first cut from 100 Gb/s", test_rp_first_cut);
	CU_add_test(s, "RP: rate after each recovery step (nvidia)", test_rp_recovery_nvidia);
	CU_add_test(s, "RP: fast recovery, then AI (paper)", test_rp_recovery_paper);
	CU_add_test(s, "RP: alpha update and decay (nvidia)", test_rp_alpha_nvidia);
	CU_add_test(s, "RP: alpha update and decay after K (paper)", test_rp_alpha_paper);
	CU_add_test(s, "RP: one cut per monitor period", test_rp_monitor_period);
	CU_add_test(s, "RP: rpg_min_rate floor", test_rp_min_rate);
	CU_add_test(s, "RP: rpg_min_dec_fac bound", test_rp_min_dec_fac);
	CU_add_test(s, "RP: byte counter against timer, FR/AI/HI", test_rp_byte_counter);
	CU_add_test(s, "RP: target clamping", test_rp_clamp);
	CU_add_test(s, "RP: ignored CNPs", test_rp_ignored);
	CU_add_test(s, "RP: advance() equals step-by-step evaluation", test_rp_advance_order);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails == 0 ? 0 : 1;
}
