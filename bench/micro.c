/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro-benchmark of the wire library: TSC cycles per frame for parse, full
 * ICRC (slice-by-8 and rte_net_crc) and incremental ICRC, at the three frame
 * sizes the switch cares about.  Prints one JSON line per figure:
 *   {"bench": "...", "frame_bytes": N, "cycles_per_frame": X, ...}
 * Each figure is the median of --runs runs of --iters frames.  The data
 * plane's two parsers (roce_parse_inline() and the common-shape
 * roce_parse_fast(), impl "inline" and "fast") are measured in alternating
 * runs, so that other load on the machine weighs on both alike.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_net_crc.h>
#include <rte_vect.h>

#include "rocev2.h"

static volatile uint32_t sink;
static unsigned iters = 200000, runs = 15;

static uint32_t
net_crc_sse42(const void *buf, uint32_t len)
{
	return rte_net_crc_calc(buf, len, RTE_NET_CRC32_ETH);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct frame {
	uint8_t buf[4200];
	uint32_t len;
	struct roce_pkt pkt;
	const char *name;
};

typedef uint32_t (*bench_fn)(struct frame *f);

static uint32_t
b_parse(struct frame *f)
{
	struct roce_pkt p;

	return roce_parse(f->buf, f->len, ROCE_UDP_PORT, &p) + p.icrc_off;
}

static uint32_t
b_parse_inline(struct frame *f)
{
	struct roce_pkt p;

	return roce_parse_inline(f->buf, f->len, ROCE_UDP_PORT, &p) + p.icrc_off;
}

static uint32_t
b_parse_fast(struct frame *f)
{
	struct roce_pkt p;

	return roce_parse_fast(f->buf, f->len, ROCE_UDP_PORT, &p) + p.icrc_off;
}

static uint32_t
b_full(struct frame *f)
{
	return roce_icrc_compute(f->buf, &f->pkt);
}

/* The generic API: three changed fields (both IPs, DestQP). */
static uint32_t
b_incr_fields(struct frame *f)
{
	static const uint8_t new_ips[8] = { 10, 0, 0, 1, 10, 0, 0, 2 };
	static const uint8_t new_qpn[3] = { 0, 0x10, 0x01 };
	struct roce_icrc_delta d;
	const uint8_t *ip = f->buf + f->pkt.l3_off + 12;

	roce_icrc_delta_init(&d);
	roce_icrc_delta_add(&d, f->pkt.l3_off + 12, ip, new_ips, 8);
	roce_icrc_delta_add(&d, f->pkt.bth_off + 5, f->buf + f->pkt.bth_off + 5, new_qpn, 3);
	return roce_icrc_delta_apply(&d, roce_icrc_get(f->buf, &f->pkt), f->pkt.icrc_off);
}

/*
 * What the switch does per packet: the connection's rename is constant, so
 * its difference (crc0 up to the end of the DestQP) is computed once per
 * connection and each frame pays a single shift by its own length.
 */
static struct roce_icrc_delta conn_delta;

static uint32_t
b_incr_template(struct frame *f)
{
	return roce_icrc_delta_apply(&conn_delta, roce_icrc_get(f->buf, &f->pkt), f->pkt.icrc_off);
}

/* One run of --iters calls: cycles per call. */
static double
run_once(bench_fn fn, struct frame *f)
{
	uint64_t t0 = rte_rdtsc_precise();
	uint32_t acc = 0;

	for (unsigned i = 0; i < iters; i++) {
		acc += fn(f);
		/* Make each call depend on the frame, not a cached result. */
		f->buf[f->pkt.icrc_off - 1] ^= (uint8_t)acc;
	}
	sink += acc;
	return (double)(rte_rdtsc_precise() - t0) / iters;
}

static double
median(double *samples)
{
	qsort(samples, runs, sizeof(samples[0]), cmp_double);
	return samples[runs / 2];
}

static double
measure(bench_fn fn, struct frame *f)
{
	double samples[64];

	for (unsigned r = 0; r < runs; r++)
		samples[r] = run_once(fn, f);
	return median(samples);
}

/* Two functions in alternating runs: the median of each into *a and *b. */
static void
measure_pair(bench_fn fa, bench_fn fb, struct frame *f, double *a, double *b)
{
	double sa[64], sb[64];

	for (unsigned r = 0; r < runs; r++) {
		sa[r] = run_once(fa, f);
		sb[r] = run_once(fb, f);
	}
	*a = median(sa);
	*b = median(sb);
}

static void
make(struct frame *f, uint8_t op, uint32_t payload, const char *name)
{
	struct roce_frame_spec s = {
		.src_mac = { 2, 0, 0, 0, 1, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 1 },
		.ip_ver = 4, .src_ip = { 192, 168, 1, 10 }, .dst_ip = { 192, 168, 1, 20 },
		.ttl = 64, .udp_sport = 49152, .opcode = op, .pkey = 0xffff, .dqpn = 33, .psn = 100,
	};
	uint8_t aeth[4] = { 0, 0, 0, 1 };

	f->len = (uint32_t)roce_build_frame(f->buf, sizeof(f->buf), &s, op == ROCE_OP_RC_ACK ? aeth : NULL,
					    op == ROCE_OP_RC_ACK ? 4 : 0, NULL, payload);
	f->name = name;
	if (roce_parse(f->buf, f->len, ROCE_UDP_PORT, &f->pkt) != ROCE_OK) {
		fprintf(stderr, "bench frame %s does not parse\n", name);
		exit(1);
	}
}

static void
report(const char *bench, const char *impl, struct frame *f, double c)
{
	printf("{\"bench\": \"%s\", \"impl\": \"%s\", \"frame_bytes\": %u, \"cycles_per_frame\": %.1f}\n",
	       bench, impl, f->len, c);
}

int
main(int argc, char **argv)
{
	static struct frame frames[3];
	int opt;

	while ((opt = getopt(argc, argv, "i:r:")) != -1) {
		if (opt == 'i')
			iters = (unsigned)atoi(optarg);
		else if (opt == 'r')
			runs = (unsigned)atoi(optarg);
		else {
			fprintf(stderr, "usage: %s [-i iterations] [-r runs]\n", argv[0]);
			return 2;
		}
	}
	if (runs == 0 || runs > 64 || iters == 0) {
		fprintf(stderr, "runs must be 1..64, iterations > 0\n");
		return 2;
	}
	make(&frames[0], ROCE_OP_RC_ACK, 0, "rc_ack");
	make(&frames[1], ROCE_OP_RC_WRITE_MIDDLE, 1024, "write_middle_1k");
	make(&frames[2], ROCE_OP_RC_WRITE_MIDDLE, 4096, "write_middle_4k");
	{
		static const uint8_t old[11], new_b[11] = { 10, 0, 0, 1, 10, 0, 0, 2, 0, 0x10, 1 };

		/* IPs (8 bytes), UDP (8, unchanged), BTH up to DestQP (8 bytes). */
		roce_icrc_delta_init(&conn_delta);
		roce_icrc_delta_add(&conn_delta, 34 + 12, old, new_b, 8);
		roce_icrc_delta_add(&conn_delta, 42 + 5, old, new_b + 8, 3);
	}

	/* The CRC implementations on offer, fastest last. */
	struct { const char *name; roce_crc32_fn fn; int alg; } impls[] = {
		{ "slice-by-8", NULL, -1 },
		{ "rte_net_crc-sse42", net_crc_sse42, RTE_NET_CRC_SSE42 },
		{ "rte_net_crc-avx512", net_crc_sse42, RTE_NET_CRC_AVX512 },
	};

	/* rte_net_crc picks AVX-512 only when the SIMD width allows it. */
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	for (int k = 0; k < 3; k++) {
		struct frame *f = &frames[k];

		double c_inline, c_fast;

		report("parse", "rocev2", f, measure(b_parse, f));
		measure_pair(b_parse_inline, b_parse_fast, f, &c_inline, &c_fast);
		report("parse", "inline", f, c_inline);
		report("parse", "fast", f, c_fast);
		for (size_t m = 0; m < sizeof(impls) / sizeof(impls[0]); m++) {
			if (impls[m].alg == RTE_NET_CRC_AVX512 &&
			    (!rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) ||
			     !rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ))) {
				printf("{\"bench\": \"icrc_full\", \"impl\": \"%s\", \"frame_bytes\": %u, "
				       "\"skipped\": \"CPU lacks AVX-512F or VPCLMULQDQ\"}\n", impls[m].name, f->len);
				continue;
			}
			if (impls[m].alg >= 0)
				rte_net_crc_set_alg((enum rte_net_crc_alg)impls[m].alg);
			roce_crc32_set_impl(impls[m].fn, impls[m].name);
			report("icrc_full", impls[m].name, f, measure(b_full, f));
		}
		roce_crc32_set_impl(NULL, NULL);
		report("icrc_incremental_fields", "rocev2", f, measure(b_incr_fields, f));
		report("icrc_incremental", "rocev2", f, measure(b_incr_template, f));
	}
	return 0;
}
