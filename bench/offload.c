/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MARK fast path: cycles per packet of the path (dp_process_frame, on
 * the tenant side and on the fabric side) when the frame carries an rte_flow MARK naming its
 * connection (RTE_MBUF_F_RX_FDIR_ID, hash.fdir.hi = state id + 1: what a NIC
 * with a partial-offload rule delivers) and when it does not (the hash
 * lookups; on the fabric side also the host-IP check).
 *
 * For N in 1 000, 100 000 and 1 000 000 connections (built in memory, as
 * bench/rename.c does) it renames 62-byte ACKs spread over A active
 * connections, A = 1 000 (fits the caches) and A = N (uniformly at random:
 * the lookups miss the caches), in both directions, with and without MARK.
 * Both modes store the same mbuf fields per packet, so the difference is the
 * lookup alone.  Each figure is the median of RUNS runs (the two modes
 * alternating) minus the cost of restoring the frame.  Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
 * in TSC cycles, so that time the core spent on other processes (these
 * machines are shared) is not counted.  Prints JSON lines:
 *   {"bench": "mark_fastpath", "direction": D, "connections": N, "active": A,
 *    "lookup_cycles": X, "mark_cycles": Y, "saved_cycles": X - Y, "saved_pct": P}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench_world.h"
#include "dp_loop.h"
#include "dp_offload.h"

#define FRAMES 4096   /* distinct frames cycled through */
#define ITERS 1000000
#define RUNS 9

/* An ACK of connection @conn: L to R on the tenant port, or R's host to L's on the uplink. */
static size_t
make_frame(uint8_t *buf, uint32_t conn, bool ingress)
{
	struct roce_frame_spec s = {
		.src_mac = { 2, 0, 0, 0, 0xaa, 0x10 }, .dst_mac = { 2, 0, 0, 0, 1, 1 },
		.ip_ver = 4, .src_ip = { 192, 168, 0, 10 }, .ttl = 64, .udp_sport = 49152,
		.opcode = ROCE_OP_RC_ACK, .pkey = 0xffff, .dqpn = 16 + conn % 250, .psn = conn,
	};
	uint8_t aeth[4] = { 0, 0, 0, 1 };
	uint32_t re = 0xc0a80100 + conn / 250;

	if (ingress) {
		static const uint8_t h1[4] = { 10, 0, 0, 1 }, h2[4] = { 10, 0, 0, 2 };

		memcpy(s.src_ip, h2, 4);
		memcpy(s.dst_ip, h1, 4);
		s.dqpn = 16 + conn;
	} else {
		s.dst_ip[0] = (uint8_t)(re >> 24);
		s.dst_ip[1] = (uint8_t)(re >> 16);
		s.dst_ip[2] = (uint8_t)(re >> 8);
		s.dst_ip[3] = (uint8_t)re;
	}
	return roce_build_frame(buf, 128, &s, aeth, 4, NULL, 0);
}

/* The thread's CPU time in TSC cycles. */
static uint64_t
cpu_cycles(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)((double)ts.tv_sec * rte_get_tsc_hz() + (double)ts.tv_nsec * rte_get_tsc_hz() / 1e9);
}

static uint8_t frames[FRAMES][128];
static uint16_t lens[FRAMES];
static uint32_t marks[FRAMES];

/* Cycles per packet of one run of one direction and mode, net of restoring the frame. */
static double
run_once(struct dp_lcore *lc, struct rte_mbuf *m, bool ingress, bool mark, uint64_t *hits)
{
	const uint64_t flags = mark ? RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID : 0;
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	uint64_t t0 = cpu_cycles(), h0 = lc->stats.mark_hits, t, base;
	uint16_t out = 0;
	uint32_t bad = 0;

	for (int i = 0; i < ITERS; i++) {
		int f = i & (FRAMES - 1);
		enum dp_drop why;

		memcpy(d, frames[f], 64);
		m->data_len = m->pkt_len = lens[f];
		m->ol_flags = flags;
		m->hash.fdir.hi = marks[f];
		why = dp_process_frame(lc, ingress ? 0 : 1, m, &out);
		if (why != DP_DROP_NONE && !bad++)
			fprintf(stderr, "drop: %s\n", dp_drop_names[why]);
	}
	t = cpu_cycles() - t0;
	*hits = lc->stats.mark_hits - h0;
	t0 = cpu_cycles();
	for (int i = 0; i < ITERS; i++) {
		int f = i & (FRAMES - 1);

		memcpy(d, frames[f], 64);
		m->data_len = m->pkt_len = lens[f];
		m->ol_flags = flags;
		m->hash.fdir.hi = marks[f];
		__asm__ volatile("" : : "r"(d) : "memory");
	}
	base = cpu_cycles() - t0;
	if (bad) {
		fprintf(stderr, "%u frames dropped: the benchmark is wrong\n", bad);
		exit(1);
	}
	return (double)(t > base ? t - base : 0) / ITERS;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Median cycles per packet without and with MARK.  The runs alternate, so
 * that whatever else the machine does weighs on both modes alike.
 */
static void
measure(struct dp_lcore *lc, struct rte_mbuf *m, bool ingress, double *lookup, double *mark)
{
	double l[RUNS], k[RUNS];
	uint64_t hits;

	for (int r = 0; r < RUNS; r++) {
		l[r] = run_once(lc, m, ingress, false, &hits);
		if (hits != 0) {
			fprintf(stderr, "%lu mark hits without marks: the benchmark is wrong\n", hits);
			exit(1);
		}
		k[r] = run_once(lc, m, ingress, true, &hits);
		if (hits != ITERS) {
			fprintf(stderr, "%lu mark hits of %d: the benchmark is wrong\n", hits, ITERS);
			exit(1);
		}
	}
	qsort(l, RUNS, sizeof(l[0]), cmp_double);
	qsort(k, RUNS, sizeof(k[0]), cmp_double);
	*lookup = l[RUNS / 2];
	*mark = k[RUNS / 2];
}

int
main(int argc, char **argv)
{
	struct rte_mempool *pool;
	struct rte_mbuf *m;
	struct dp_lcore *lc = &dp.lcores[0];
	char err[256];

	if (rte_eal_init(argc, argv) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("bench", 64, 0, 0, 2048, rte_socket_id());
	m = pool ? rte_pktmbuf_alloc(pool) : NULL;
	if (!m)
		return 1;
	pthread_mutex_init(&dp.ctl_lock, NULL);
	srand(1);
	for (uint32_t n = 1000; n <= 1000000; n *= (n == 1000 ? 100 : 10)) {
		struct cfg *c = bench_cfg_make(n);

		dp.ovl = ovl_build(c, err, sizeof(err));
		if (!dp.ovl) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		/* Stable ids as the switch hands them out: state i for connection i. */
		for (uint32_t i = 0; i < dp.ovl->n_conns; i++) {
			uint32_t chunk = i >> DP_STATE_CHUNK_SHIFT;

			if (!dp.conn_chunks[chunk])
				dp.conn_chunks[chunk] = calloc(1u << DP_STATE_CHUNK_SHIFT, sizeof(struct dp_conn_state));
			dp.ovl->conns[i].state = i;
		}
		dp.n_states = dp.ovl->n_conns;
		dp.ovl->tenants[0].slot = 0;
		dp.n_ports = 2;
		dp.ports[1] = (struct dp_port){ .uplink = false };
		dp.ports[0] = (struct dp_port){ .uplink = true };
		lc->tenant_stats = calloc(DP_MAX_TENANTS, sizeof(*lc->tenant_stats));
		lc->ovl = dp.ovl;
		/* The index a reload publishes with the overlay. */
		dp_offload_index_publish(dp.ovl);
		if (!dp_mark_index) {
			fprintf(stderr, "no mark index\n");
			return 1;
		}

		uint32_t actives[2] = { n < 1000 ? n : 1000, n };

		for (int a = 0; a < (n == 1000 ? 1 : 2); a++)
			for (int ingress = 0; ingress < 2; ingress++) {
				double lookup, mark;

				for (int f = 0; f < FRAMES; f++) {
					uint32_t conn = (uint32_t)rand() % actives[a];

					lens[f] = (uint16_t)make_frame(frames[f], conn, ingress);
					marks[f] = conn + 1;
				}
				measure(lc, m, ingress, &lookup, &mark);
				printf("{\"bench\": \"mark_fastpath\", \"direction\": \"%s\", \"connections\": %u, "
				       "\"active\": %u, \"lookup_cycles\": %.1f, \"mark_cycles\": %.1f, "
				       "\"saved_cycles\": %.1f, \"saved_pct\": %.1f}\n",
				       ingress ? "ingress" : "egress", n, actives[a], lookup, mark, lookup - mark,
				       100.0 * (lookup - mark) / lookup);
				fflush(stdout);
			}
		rte_free(dp_mark_index);
		dp_mark_index = NULL;
		free(lc->tenant_stats);
		for (uint32_t i = 0; i < DP_STATE_CHUNKS; i++) {
			free(dp.conn_chunks[i]);
			dp.conn_chunks[i] = NULL;
		}
		ovl_free(dp.ovl);
		bench_cfg_free(c);
	}
	rte_pktmbuf_free(m);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}
