/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro-benchmark of the tenant-to-fabric rename path (stages 1 to 4 of the
 * path over bursts of 32 frames, dp_path_run: parse, lookup, checks,
 * rewrite, IPv4 checksum, incremental ICRC) against the number of configured
 * connections.
 *
 * For each N in 1 000, 10 000, 100 000 and 1 000 000 it builds a host with N
 * connections (the configuration is made in memory, not parsed), then
 * renames 62-byte ACKs spread over A active connections, where A is 1 000
 * (a working set that fits the caches) and N (every connection, uniformly
 * at random: the worst case for the caches).  Each figure is the median of
 * RUNS runs, minus the cost of restoring the frame, which is measured alone.
 * Each N is measured with configured connections and then with the same
 * connections learned (halves, bench_cfg_make_learned()).  Prints JSON lines:
 *   {"bench": "rename_egress", "connections": N, "active": A, "cycles_per_packet": X,
 *    "restore_cycles": Y, "kind": "configured" | "learned"}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include "bench_world.h"
#include "dp_loop.h"

#define FRAMES 4096   /* distinct frames cycled through */
#define ITERS 2000000
#define RUNS 5

static size_t
make_frame(uint8_t *buf, uint32_t conn)
{
	struct roce_frame_spec s = {
		.src_mac = { 2, 0, 0, 0, 0xaa, 0x10 }, .dst_mac = { 2, 0, 0, 0, 1, 1 },
		.ip_ver = 4, .src_ip = { 192, 168, 0, 10 }, .ttl = 64, .udp_sport = 49152,
		.opcode = ROCE_OP_RC_ACK, .pkey = 0xffff, .dqpn = 16 + conn % 250, .psn = conn,
	};
	uint8_t aeth[4] = { 0, 0, 0, 1 };
	uint32_t re = 0xc0a80100 + conn / 250;

	s.dst_ip[0] = (uint8_t)(re >> 24);
	s.dst_ip[1] = (uint8_t)(re >> 16);
	s.dst_ip[2] = (uint8_t)(re >> 8);
	s.dst_ip[3] = (uint8_t)re;
	return roce_build_frame(buf, 128, &s, aeth, 4, NULL, 0);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	static uint8_t frames[FRAMES][128];
	static uint16_t lens[FRAMES];
	struct rte_mempool *pool;
	struct rte_mbuf *mb[DP_BURST];
	enum dp_drop why[DP_BURST];
	uint16_t out[DP_BURST];
	struct dp_lcore *lc = &dp.lcores[0];
	char err[256];

	if (rte_eal_init(argc, argv) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("bench", 2 * DP_BURST, 0, 0, 2048, rte_socket_id());
	if (!pool || rte_pktmbuf_alloc_bulk(pool, mb, DP_BURST) != 0)
		return 1;
	/* BENCH_RENAME_MAX stops at fewer connections (a profile of the small case, say). */
	const char *max_env = getenv("BENCH_RENAME_MAX");
	uint32_t max_n = max_env ? (uint32_t)strtoul(max_env, NULL, 10) : 1000000;

	srand(1);
	for (uint32_t n = 1000; n <= max_n; n *= 10)
	for (int learned = 0; learned < 2; learned++) {
		struct cfg *c = learned ? bench_cfg_make_learned(n) : bench_cfg_make(n);

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
		dp.ovl->tenants[0].slot = 0;
		dp.n_ports = 2;
		dp.ports[1] = (struct dp_port){ .uplink = false };
		dp.ports[0] = (struct dp_port){ .uplink = true };
		lc->tenant_stats = calloc(DP_MAX_TENANTS, sizeof(*lc->tenant_stats));
		lc->ovl = dp.ovl;

		uint32_t actives[2] = { n < 1000 ? n : 1000, n };

		for (int a = 0; a < 2; a++) {
			uint64_t t[RUNS], base[RUNS];

			for (int f = 0; f < FRAMES; f++)
				lens[f] = (uint16_t)make_frame(frames[f], (uint32_t)rand() % actives[a]);
			for (int r = 0; r < RUNS; r++) {
				uint64_t t0 = rte_rdtsc_precise();
				uint32_t bad = 0;

				for (int i = 0; i < ITERS; i += DP_BURST) {
					for (int k = 0; k < DP_BURST; k++) {
						int f = (i + k) & (FRAMES - 1);

						memcpy(rte_pktmbuf_mtod(mb[k], uint8_t *), frames[f], 64);
						mb[k]->data_len = mb[k]->pkt_len = lens[f];
					}
					dp_path_run(lc, 1, mb, DP_BURST, why, out);
					for (int k = 0; k < DP_BURST; k++)
						if (why[k] != DP_DROP_NONE && !bad++)
							fprintf(stderr, "drop: %s\n", dp_drop_names[why[k]]);
				}
				t[r] = rte_rdtsc_precise() - t0;
				t0 = rte_rdtsc_precise();
				for (int i = 0; i < ITERS; i += DP_BURST) {
					for (int k = 0; k < DP_BURST; k++) {
						int f = (i + k) & (FRAMES - 1);
						uint8_t *d = rte_pktmbuf_mtod(mb[k], uint8_t *);

						memcpy(d, frames[f], 64);
						mb[k]->data_len = mb[k]->pkt_len = lens[f];
						__asm__ volatile("" : : "r"(d) : "memory");
					}
				}
				base[r] = rte_rdtsc_precise() - t0;
				if (bad) {
					fprintf(stderr, "%u frames dropped: the benchmark is wrong\n", bad);
					return 1;
				}
			}
			qsort(t, RUNS, sizeof(t[0]), cmp_u64);
			qsort(base, RUNS, sizeof(base[0]), cmp_u64);
			printf("{\"bench\": \"rename_egress\", \"connections\": %u, \"active\": %u, "
			       "\"cycles_per_packet\": %.1f, \"restore_cycles\": %.1f, \"kind\": \"%s\"}\n",
			       n, actives[a], (double)(t[RUNS / 2] - base[RUNS / 2]) / ITERS,
			       (double)base[RUNS / 2] / ITERS, learned ? "learned" : "configured");
			fflush(stdout);
		}
		free(lc->tenant_stats);
		for (uint32_t i = 0; i < DP_STATE_CHUNKS; i++) {
			free(dp.conn_chunks[i]);
			dp.conn_chunks[i] = NULL;
		}
		ovl_free(dp.ovl);
		bench_cfg_free(c);
	}
	rte_pktmbuf_free_bulk(mb, DP_BURST);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}
