/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of a tenant bucket shared by several shapers (struct
 * shaper_shared: one shaper per lcore, one tenant's traffic on all of them),
 * on a virtual clock in nanoseconds.  Each shaper holds one connection of
 * the tenant, kept overloaded with 4 KiB packets; every microsecond the
 * shapers are served in a fixed order, the first always first (the race a
 * real lcore may win every time).
 *
 * - the cap holds over all the shapers together (+-0.5 %), where each
 *   shaper's own bucket would let each of them send the whole rate;
 * - the shapers share it fairly, although the first always comes first;
 * - a shaper that is not served (its lcore does not run) stalls nobody: the
 *   others take the whole rate, and it rejoins later without a burst beyond
 *   the bucket.
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
#define PKT		4096u
#define N_ITEMS		256u
#define MAX_SH		4

struct group {
	struct shaper *sh[MAX_SH];
	struct shaper_shared shared;
	unsigned n;
	uint64_t sent[MAX_SH];	/* bytes out of each shaper */
	uint64_t seq;
};

/* @n shapers, tenant 0 at @gbps sharing one bucket (or each its own: @share false), connection 0 each. */
static void
group_init(struct group *g, unsigned n, uint64_t gbps, bool share)
{
	struct shaper_params p = sim_params(1, 1, N_ITEMS);

	memset(g, 0, sizeof(*g));
	g->n = n;
	shaper_shared_init(&g->shared, 0, p.hz);
	for (unsigned i = 0; i < n; i++) {
		struct shaper_tenant_params tp = {
			.rate_bps = gbps * GBPS, .burst_bytes = 64 * 1024, .qlimit_bytes = 1u << 30,
			.shared = share ? &g->shared : NULL, .shared_id = i,
		};

		g->sh[i] = shaper_create(&p, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(g->sh[i]);
		CU_ASSERT_EQUAL(shaper_tenant_config(g->sh[i], 0, &tp, 0), 0);
		CU_ASSERT_EQUAL(shaper_conn_attach(g->sh[i], 0, 0, 0, 0), 0);
	}
}

static void
group_free(struct group *g)
{
	for (unsigned i = 0; i < g->n; i++)
		shaper_free(g->sh[i]);
}

/* From @t0 to @t1, every microsecond: top up and serve the shapers in @served, in order. */
static void
group_run(struct group *g, uint64_t t0, uint64_t t1, const bool *served)
{
	struct shaper_out o[32];
	struct shaper_stats st;

	for (uint64_t t = t0; t < t1; t += US) {
		for (unsigned i = 0; i < g->n; i++) {
			if (!served[i])
				continue;
			shaper_stats(g->sh[i], &st);
			while (st.items_used < N_ITEMS / 2) {
				struct shaper_pkt pk = {
					.cookie = ++g->seq, .conn = 0, .bytes = PKT,
					.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
				};
				struct shaper_out now_out;

				if (shaper_send_now(g->sh[i], &pk, t, &now_out))
					g->sent[i] += now_out.bytes;
				else
					CU_ASSERT_EQUAL_FATAL(shaper_enqueue(g->sh[i], &pk, t), SHAPER_OK);
				shaper_stats(g->sh[i], &st);
			}
			unsigned n = shaper_dequeue(g->sh[i], t, o, 32);

			for (unsigned k = 0; k < n; k++)
				g->sent[i] += o[k].bytes;
		}
	}
}

static uint64_t
group_total(const struct group *g)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < g->n; i++)
		s += g->sent[i];
	return s;
}

/* The cap over all shapers: rate x time + the bucket, within 0.5 %. */
static void
expect_rate(uint64_t bytes, uint64_t gbps, uint64_t ns, const char *what)
{
	double want = (double)gbps * GBPS / 8 * (double)ns / 1e9 + 64 * 1024;
	double err = ((double)bytes - want) / want;

	printf("\n    %s: %.4f Gb/s over %.0f ms (%+.3f %%)", what, (double)bytes * 8 / ((double)ns / 1e9) / 1e9,
	       (double)ns / 1e6, err * 100);
	CU_ASSERT(err <= 0.005 && err >= -0.005);
}

static void
test_cap_over_shapers(void)
{
	static const bool all[MAX_SH] = { true, true, true, true };
	struct group g;

	for (unsigned n = 2; n <= 4; n++) {
		group_init(&g, n, 10, true);
		group_run(&g, 0, 100 * MS, all);
		expect_rate(group_total(&g), 10, 100 * MS, "shared, all shapers");
		/* Fair: each within 10 % of its share, although shaper 0 always comes first. */
		for (unsigned i = 0; i < n; i++)
			CU_ASSERT(g.sent[i] * n >= group_total(&g) * 9 / 10 && g.sent[i] * n <= group_total(&g) * 11 / 10);
		group_free(&g);
	}
	/* The control: each shaper's own bucket lets each send the whole rate. */
	group_init(&g, 2, 10, false);
	group_run(&g, 0, 100 * MS, all);
	printf("\n    own buckets, 2 shapers: %.4f Gb/s", (double)group_total(&g) * 8 / 0.1 / 1e9);
	CU_ASSERT(group_total(&g) > 2 * 10 * GBPS / 8 / 10 * 99 / 100);
	group_free(&g);
}

static void
test_stalled_sharer(void)
{
	static const bool all[2] = { true, true }, first[2] = { true, false };
	struct group g;
	uint64_t before;

	group_init(&g, 2, 10, true);
	group_run(&g, 0, 20 * MS, all);
	/* Shaper 1 is not served for 50 ms: shaper 0 takes the whole rate. */
	before = g.sent[0];
	group_run(&g, 20 * MS, 70 * MS, first);
	expect_rate(g.sent[0] - before, 10, 50 * MS, "shaper 0 while shaper 1 stalls");
	/* Back: the two together stay at the cap, with no catch-up burst beyond the bucket. */
	before = group_total(&g);
	group_run(&g, 70 * MS, 120 * MS, all);
	expect_rate(group_total(&g) - before, 10, 50 * MS, "both again");
	group_free(&g);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("shaper shared bucket", NULL, NULL);
	CU_add_test(s, "a tenant cap over 2-4 shapers, fair", test_cap_over_shapers);
	CU_add_test(s, "a stalled sharer stalls nobody", test_stalled_sharer);
	return cu_run_all();
}
