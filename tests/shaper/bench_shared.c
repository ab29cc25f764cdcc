/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a tenant bucket shared by several shapers costs (struct
 * shaper_shared), against each shaper's own bucket: TSC cycles per packet
 * of shaper_send_now() (cut-through, the switch's path when the shaper does
 * not bind) with every packet charged to the tenant's bucket, on the TSC as
 * the shapers' clock, under a cap that never binds (10 Tb/s).
 *
 *   bench_shared [--packets N] [--rounds R]
 *	{"bench": "shared_bucket", "threads": T, "bucket": "own" | "shared",
 *	 "cycles_per_packet": X, "runs": [...]}
 *	T threads (1 or 2, pinned to CPUs 0 and 1), each with its own shaper
 *	and connection; "shared": their tenant's admission bucket is one
 *	shaper_shared (a compare-and-swap a charge, the sharers' fairness
 *	reads); "own": each its own.  The median of R rounds of N packets per
 *	thread; "refused": how often shaper_send_now() said not yet (then
 *	tried again at once: counted in the cycles).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "shaper.h"

struct worker {
	pthread_t th;
	int cpu;
	struct shaper *sh;
	uint64_t packets, cycles, refused;
	volatile int *go;
};

static uint64_t
tsc_hz(void)
{
	struct timespec a, b;
	uint64_t t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = __rdtsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 100000000L);
	t1 = __rdtsc();
	return (t1 - t0) * 10;
}

static void *
run(void *arg)
{
	struct worker *w = arg;
	struct shaper_out o;
	cpu_set_t set;
	uint64_t t0;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!*w->go)
		;
	t0 = __rdtsc();
	for (uint64_t i = 0; i < w->packets; i++) {
		struct shaper_pkt p = { .cookie = i, .conn = 0, .bytes = 1024,
					.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST };

		/* Shared: a sharer may find the other's charges ahead of its clock, or leave it a turn. */
		while (!shaper_send_now(w->sh, &p, __rdtsc(), &o))
			w->refused++;
	}
	w->cycles = __rdtsc() - t0;
	return NULL;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	uint64_t packets = 5000000, hz = tsc_hz();
	int rounds = 5;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--packets") == 0)
			packets = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[i + 1]);
	}
	if (rounds < 1 || rounds > 64)
		rounds = 5;
	for (int threads = 1; threads <= 2; threads++) {
		for (int shared = 0; shared <= 1; shared++) {
			double runs[64];
			uint64_t refs[64];

			for (int r = 0; r < rounds; r++) {
				struct shaper_params p = { .hz = hz, .n_conns = 1, .n_tenants = 1, .n_items = 64 };
				struct shaper_shared *sb = aligned_alloc(64, sizeof(*sb));
				struct worker w[2];
				volatile int go = 0;
				double sum = 0;
				uint64_t refused = 0;

				shaper_shared_init(sb, __rdtsc(), hz);
				for (int t = 0; t < threads; t++) {
					struct shaper_tenant_params tp = {
						.rate_bps = 10000000000000ull, .burst_bytes = 1u << 20,
						.shared = shared ? sb : NULL, .shared_id = (uint32_t)t,
					};

					w[t] = (struct worker){ .cpu = t, .packets = packets, .go = &go };
					w[t].sh = shaper_create(&p, __rdtsc());
					if (!w[t].sh || shaper_tenant_config(w[t].sh, 0, &tp, __rdtsc()) ||
					    shaper_conn_attach(w[t].sh, 0, 0, 0, __rdtsc()))
						return 1;
					pthread_create(&w[t].th, NULL, run, &w[t]);
				}
				go = 1;
				for (int t = 0; t < threads; t++) {
					pthread_join(w[t].th, NULL);
					sum += (double)w[t].cycles / (double)packets;
					refused += w[t].refused;
					shaper_free(w[t].sh);
				}
				free(sb);
				runs[r] = sum / threads;
				refs[r] = refused;
			}
			double sorted[64];

			memcpy(sorted, runs, sizeof(double) * (size_t)rounds);
			qsort(sorted, (size_t)rounds, sizeof(double), cmp);
			printf("{\"bench\": \"shared_bucket\", \"threads\": %d, \"bucket\": \"%s\", "
			       "\"cycles_per_packet\": %.1f, \"runs\": [", threads, shared ? "shared" : "own",
			       sorted[rounds / 2]);
			for (int r = 0; r < rounds; r++)
				printf("%s%.1f", r ? ", " : "", runs[r]);
			printf("], \"refused\": [");
			for (int r = 0; r < rounds; r++)
				printf("%s%lu", r ? ", " : "", (unsigned long)refs[r]);
			printf("]}\n");
			fflush(stdout);
		}
	}
	return 0;
}
