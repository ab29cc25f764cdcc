/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's cost per packet, from 1 000 to 1 000 000 active connections,
 * and the data behind the pictures in docs/.
 *
 *   bench_shaper [--min N] [--max N] [--iters P] [--mode pacing|tenant]
 *	One JSON line per (mode, connection count):
 *	{"bench": "shaper", "mode": "pacing", "connections": N,
 *	 "cycles_per_packet": X, "ns_per_packet": Y,
 *	 "cycles_per_packet_median": Z}
 *	Every connection is backlogged (two packets queued) and paced at
 *	100 Gb/s / N; for each packet dequeued the loop queues one more on the
 *	same connection, so one packet costs one shaper_enqueue() and its share
 *	of shaper_dequeue().  "pacing": one uncapped tenant, the wheel alone.
 *	"tenant": the same under a 50 Gb/s tenant (admission, fair calendar and
 *	both buckets on every packet).  The virtual clock advances by 32
 *	packet times per dequeue, so each call finds about 32 packets due
 *	whatever N: the work per packet is the same and only the memory
 *	footprint grows.  Cycles come from the TSC (__rdtsc).  The run is cut
 *	in 9 windows; cycles_per_packet is the fastest window (the one least
 *	disturbed when the machine is shared), the median is given beside it.  The shaper
 *	lives in transparent huge pages (madvise), as the data plane's lives in
 *	DPDK's hugepages: with 4 KiB pages every connection touched at random
 *	would also be a TLB miss.
 *
 *   bench_shaper --csv accuracy
 *	cap_gbps,msg_bytes,where,achieved_gbps: the accuracy runs of the tests.
 *   bench_shaper --csv fairness
 *	conn,msg_bytes,gbps: 512 connections with 1 Gb/s caps under a 25 Gb/s
 *	tenant, 64 KiB messages and mixed 4 KiB to 256 KiB ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_RDTSC 1
#endif

#include "shaper.h"
#include "sim.h"

#define PKT	(SIM_MTU + SIM_HDR)

static uint64_t
cycles(void)
{
#ifdef HAVE_RDTSC
	return __rdtsc();
#else
	return 0;
#endif
}

static uint64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
post(struct shaper *sh, uint32_t conn, uint64_t seq, uint64_t now)
{
	struct shaper_pkt p = {
		.cookie = seq, .conn = conn, .bytes = PKT,
		.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
	};

	if (shaper_enqueue(sh, &p, now) != SHAPER_OK) {
		fprintf(stderr, "bench_shaper: enqueue refused\n");
		exit(1);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define WINDOWS	9

/* Run `pkts` packets through a shaper of n backlogged connections. */
static void
bench_one(uint32_t n, bool tenant_cap, uint64_t pkts)
{
	const uint64_t agg_bps = 100000000000ull;
	struct shaper_params p;
	struct shaper_tenant_params tp;
	struct shaper_out out[32];
	struct shaper *sh;
	uint64_t now = 0, seq = 0, step;
	double cyc[WINDOWS], ns[WINDOWS];
	size_t len;
	void *mem;

	memset(&p, 0, sizeof(p));
	p.hz = 1000000000ull;
	p.n_conns = n;
	p.n_tenants = 1;
	p.n_items = 2 * n + 1024;
	/* Slots of 4 us; the horizon (0.54 s) covers a packet every 332 ms
	 * per connection at N = 1 000 000. */
	p.wheel_slots = 131072;
	p.wheel_slot_ns = 4096;
	len = (shaper_memsize(&p) + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("bench_shaper: mmap");
		exit(1);
	}
	madvise(mem, len, MADV_HUGEPAGE);
	sh = shaper_init(mem, len, &p, now);
	if (sh == NULL) {
		fprintf(stderr, "bench_shaper: cannot create a shaper of %u connections\n", n);
		exit(1);
	}
	memset(&tp, 0, sizeof(tp));
	tp.rate_bps = tenant_cap ? agg_bps / 2 : 0;
	tp.burst_bytes = 262144;
	tp.qlimit_bytes = (uint64_t)3 * n * PKT;
	shaper_tenant_config(sh, 0, &tp, now);
	for (uint32_t i = 0; i < n; i++) {
		shaper_conn_attach(sh, i, 0, agg_bps / n, now);
		post(sh, i, seq++, now);
		post(sh, i, seq++, now);
	}
	/* One packet time at the aggregate rate, in ns, times 32. */
	step = (uint64_t)PKT * 8 * 32 * 1000000000ull / (tenant_cap ? agg_bps / 2 : agg_bps);
	/* Warm up until every connection has sent three times: the wheel is
	 * then spread as in the steady state.  Then WINDOWS measured windows. */
	for (int w = -1; w < WINDOWS; w++) {
		uint64_t goal = w < 0 ? 3ull * n : pkts / WINDOWS;
		uint64_t done = 0, c0 = cycles(), t0 = wall_ns();

		while (done < goal) {
			unsigned int k;

			now += step;
			do {
				k = shaper_dequeue(sh, now, out, 32);
				for (unsigned int i = 0; i < k; i++)
					post(sh, out[i].conn, seq++, now);
				done += k;
			} while (k == 32);
		}
		if (w >= 0) {
			cyc[w] = (double)(cycles() - c0) / (double)done;
			ns[w] = (double)(wall_ns() - t0) / (double)done;
		}
	}
	qsort(cyc, WINDOWS, sizeof(cyc[0]), cmp_double);
	qsort(ns, WINDOWS, sizeof(ns[0]), cmp_double);
	printf("{\"bench\": \"shaper\", \"mode\": \"%s\", \"connections\": %u, "
	       "\"cycles_per_packet\": %.1f, \"ns_per_packet\": %.1f, "
	       "\"cycles_per_packet_median\": %.1f}\n",
	       tenant_cap ? "tenant" : "pacing", n, cyc[0], ns[0], cyc[WINDOWS / 2]);
	fflush(stdout);
	munmap(mem, len);
}

static void
csv_accuracy(void)
{
	static const uint64_t caps[] = { 1, 10, 25, 40, 100 };
	static const uint32_t sizes[] = { 4096, 65536, 1048576 };

	printf("cap_gbps,msg_bytes,where,achieved_gbps\n");
	for (int w = 0; w < 2; w++) {
		for (unsigned int i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			for (unsigned int j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
				struct shaper_params p = sim_params(8, 1, 1u << 16);
				uint64_t cap = caps[i] * 1000000000ull;
				uint64_t wire = shaper_msg_wire_bytes(sizes[j], SIM_MTU, SIM_HDR,
					SIM_RETH);
				uint32_t n = w == 0 ? 4 : 1;
				struct sim s;

				sim_init(&s, &p);
				s.target = 2 * wire > 65536 ? 2 * wire : 65536;
				sim_tenant(&s, 0, w == 0 ? cap : 0, 262144, 64u << 20);
				for (uint32_t c = 0; c < n; c++)
					sim_conn(&s, c, 0, w == 0 ? 0 : cap, sizes[j]);
				sim_window(&s, 20000000, 220000000);
				sim_run(&s, 220000000);
				printf("%llu,%u,%s,%.6f\n", (unsigned long long)caps[i], sizes[j],
				       w == 0 ? "tenant" : "qp",
				       sim_bps(s.tenant_win[0], 20000000, 220000000) / 1e9);
				sim_fini(&s);
			}
		}
	}
}

static void
csv_fairness(void)
{
	printf("conn,msg_bytes,gbps\n");
	for (int mixed = 0; mixed < 2; mixed++) {
		struct shaper_params p = sim_params(512, 1, 1u << 20);
		uint64_t window = mixed ? 1000000000ull : 200000000ull;
		struct sim s;

		sim_init(&s, &p);
		s.target = 2 * SIM_MTU;
		sim_tenant(&s, 0, 25000000000ull, 262144, 1ull << 30);
		for (uint32_t i = 0; i < 512; i++) {
			uint32_t m = mixed ? 4096u << (i % 7) : 65536;

			sim_conn(&s, i, 0, 1000000000ull, m);
			if (2ull * m + 4096 > s.target)
				s.target = 2ull * m + 4096;
		}
		sim_window(&s, 20000000, 20000000 + window);
		sim_run(&s, 20000000 + window);
		for (uint32_t i = 0; i < 512; i++)
			printf("%u,%s%u,%.6f\n", i, mixed ? "mixed:" : "", s.c[i].msg_bytes,
			       sim_bps(s.c[i].win_bytes, 20000000, 20000000 + window) / 1e9);
		sim_fini(&s);
	}
}

int
main(int argc, char **argv)
{
	uint32_t min = 1000, max = 1000000;
	uint64_t pkts = 4000000;
	int mode_lo = 0, mode_hi = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
			if (strcmp(argv[i + 1], "accuracy") == 0)
				csv_accuracy();
			else if (strcmp(argv[i + 1], "fairness") == 0)
				csv_fairness();
			else
				goto usage;
			return 0;
		} else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
			max = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--min") == 0 && i + 1 < argc) {
			min = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
			i++;
			if (strcmp(argv[i], "pacing") == 0)
				mode_hi = 0;
			else if (strcmp(argv[i], "tenant") == 0)
				mode_lo = 1;
			else
				goto usage;
		} else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
			pkts = strtoull(argv[++i], NULL, 0);
		} else {
			goto usage;
		}
	}
	for (int mode = mode_lo; mode <= mode_hi; mode++)
		for (uint32_t n = min; n <= max; n *= 10)
			bench_one(n, mode == 1, pkts);
	return 0;
usage:
	fprintf(stderr, "usage: bench_shaper [--min N] [--max N] [--iters P] "
		"[--mode pacing|tenant] | --csv accuracy|fairness\n");
	return 2;
}
