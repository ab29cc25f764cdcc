/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's cost per packet, from 1 000 to 1 000 000 active connections,
 * and the data behind the pictures in docs/.
 *
 *   bench_shaper [--min N] [--max N] [--iters P] [--mode pacing|tenant]
 *	One JSON line per (mode, connection count):
 *	{"bench": "shaper", "mode": "pacing", "connections": N,
 *	 "cycles_per_packet": X, "ns_per_packet": Y,
 *	 "cycles_per_packet_min": Z}
 *	Every connection is backlogged (two packets queued) and paced at
 *	100 Gb/s / N; for each packet dequeued the loop queues one more on the
 *	same connection, so one packet costs one shaper_enqueue() and its share
 *	of shaper_dequeue().  "pacing": one uncapped tenant, the wheel alone.
 *	"tenant": the same under a 50 Gb/s tenant (admission, fair calendar and
 *	both buckets on every packet).  The virtual clock advances by 32
 *	packet times per dequeue, so each call finds about 32 packets due
 *	whatever N: the work per packet is the same and only the memory
 *	footprint grows.  Cycles come from the TSC (__rdtsc).  The shapers of
 *	all sizes are built first, then measured in 15 rounds of one window
 *	each, interleaved, so that other jobs on a shared machine disturb every
 *	size alike; cycles_per_packet is the median window, the fastest is
 *	given beside it.  The shaper
 *	lives in transparent huge pages (madvise), as the data plane's lives in
 *	DPDK's hugepages: with 4 KiB pages every connection touched at random
 *	would also be a TLB miss.
 *
 *   bench_shaper --mode open,cut [--sizes 1000,1000000]
 *	Cut-through against the queues on a shaper that does not bind: a
 *	tenant capped at 200 Gb/s (1 MiB burst) whose connections are capped
 *	at twice what they carry (200 Gb/s / N) and receive 100 Gb/s in
 *	turn, 32 packets per 32 packet times, each connection one packet in
 *	N.  "open" queues every packet with shaper_enqueue() and takes it back
 *	with shaper_dequeue() (wheel, calendar, both buckets); "cut" offers it
 *	to shaper_send_now() first and queues it only when that refuses
 *	("cut_share" says how many went at once).  "tenant-cut" is "tenant"
 *	with shaper_send_now() tried before every shaper_enqueue(): the cost
 *	of a refusal where the tenant binds.  "cut-burst" is "cut" with the
 *	32 packets of a step offered to shaper_send_now_burst() together (and
 *	those it leaves one by one).  Modes given together, comma
 *	separated, are measured in the same interleaved rounds.
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

#define ROUNDS		15
#define MAX_SIZES	8
#define MAX_MODES	6

enum bench_mode { M_PACING, M_TENANT, M_OPEN, M_CUT, M_TENANT_CUT, M_CUT_BURST };

static const char *const mode_names[MAX_MODES] = {
	"pacing", "tenant", "open", "cut", "tenant-cut", "cut-burst",
};

/* One shaper of n connections and its virtual clock. */
struct bench {
	uint32_t n;
	enum bench_mode mode;
	struct shaper *sh;
	void *mem;
	size_t len;
	uint64_t now, seq, step;
	uint32_t *perm;		/* Arrival order (open, cut). */
	uint32_t next;
	uint64_t cut, pkts;
	double cyc[ROUNDS], ns[ROUNDS];
};

static inline bool
mode_cut(enum bench_mode m)
{
	return m == M_CUT || m == M_TENANT_CUT || m == M_CUT_BURST;
}

/* A packet arrives: at once if the mode and the shaper allow, else queued.
 * Returns true if it left at once. */
static inline bool
arrive(struct bench *b, uint32_t conn)
{
	struct shaper_pkt p = {
		.cookie = b->seq++, .conn = conn, .bytes = PKT,
		.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
	};
	struct shaper_out o;

	if (mode_cut(b->mode) && shaper_send_now(b->sh, &p, b->now, &o)) {
		b->cut++;
		return true;
	}
	if (shaper_enqueue(b->sh, &p, b->now) != SHAPER_OK) {
		fprintf(stderr, "bench_shaper: enqueue refused\n");
		exit(1);
	}
	return false;
}

/* The 32 packets of a step offered to shaper_send_now_burst(), and those it
 * leaves one by one as arrive() offers them; returns how many left at once. */
static inline unsigned int
arrive_burst(struct bench *b)
{
	struct shaper_pkt p[32];
	unsigned int k, done;

	for (unsigned int i = 0; i < 32; i++) {
		p[i] = (struct shaper_pkt){
			.cookie = b->seq++, .conn = b->perm[b->next], .bytes = PKT,
			.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
		};
		if (++b->next == b->n)
			b->next = 0;
	}
	k = shaper_send_now_burst(b->sh, p, 32, b->now);
	b->cut += k;
	done = k;
	for (unsigned int i = k; i < 32; i++) {
		struct shaper_out o;

		if (shaper_send_now(b->sh, &p[i], b->now, &o)) {
			b->cut++;
			done++;
		} else if (shaper_enqueue(b->sh, &p[i], b->now) != SHAPER_OK) {
			fprintf(stderr, "bench_shaper: enqueue refused\n");
			exit(1);
		}
	}
	return done;
}

/* Advance the clock by one step, send what is due and queue as many (or,
 * not binding, let 32 packets arrive and send them); returns the number of
 * packets. */
static uint64_t
bench_run_step(struct bench *b)
{
	struct shaper_out out[32];
	uint64_t done = 0;
	unsigned int k;

	b->now += b->step;
	if (b->mode == M_OPEN || b->mode == M_CUT || b->mode == M_CUT_BURST) {
		/* The burst's connections are known before any is shaped. */
		for (unsigned int i = 0, k = b->next; i < 32; i++) {
			shaper_prefetch(b->sh, b->perm[k]);
			if (++k == b->n)
				k = 0;
		}
		if (b->mode == M_CUT_BURST) {
			done += arrive_burst(b);
		} else {
			for (unsigned int i = 0; i < 32; i++) {
				done += arrive(b, b->perm[b->next]);
				if (++b->next == b->n)
					b->next = 0;
			}
		}
		do {
			k = shaper_dequeue(b->sh, b->now, out, 32);
			done += k;
		} while (k == 32);
		b->pkts += done;
		return done;
	}
	do {
		k = shaper_dequeue(b->sh, b->now, out, 32);
		for (unsigned int i = 0; i < k; i++)
			arrive(b, out[i].conn);
		done += k;
	} while (k == 32);
	b->pkts += done;
	return done;
}

/* Move `pkts` packets; returns them. */
static uint64_t
bench_run(struct bench *b, uint64_t pkts)
{
	uint64_t done = 0;

	while (done < pkts)
		done += bench_run_step(b);
	return done;
}

static void
bench_setup(struct bench *b, uint32_t n, enum bench_mode mode)
{
	bool tenant_cap = mode == M_TENANT || mode == M_TENANT_CUT;
	bool open = mode == M_OPEN || mode == M_CUT || mode == M_CUT_BURST;
	const uint64_t agg_bps = 100000000000ull;
	struct shaper_params p;
	struct shaper_tenant_params tp;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ n;
	uint32_t *perm;
	void *base;

	memset(b, 0, sizeof(*b));
	b->n = n;
	b->mode = mode;
	memset(&p, 0, sizeof(p));
	p.hz = 1000000000ull;
	p.n_conns = n;
	p.n_tenants = 1;
	p.n_items = 2 * n + 1024;
	/* Slots of 4 us; the horizon (0.54 s) covers a packet every 332 ms
	 * per connection at N = 1 000 000. */
	p.wheel_slots = 131072;
	p.wheel_slot_ns = 4096;
	/* 2 MiB aligned, so that huge pages can back all of it. */
	b->len = ((shaper_memsize(&p) + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1)) + (2u << 20);
	b->mem = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->mem == MAP_FAILED) {
		perror("bench_shaper: mmap");
		exit(1);
	}
	base = (void *)(((uintptr_t)b->mem + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
	madvise(base, b->len - (2u << 20), MADV_HUGEPAGE);
	b->sh = shaper_init(base, b->len - (2u << 20), &p, 0);
	if (b->sh == NULL) {
		fprintf(stderr, "bench_shaper: cannot create a shaper of %u connections\n", n);
		exit(1);
	}
	memset(&tp, 0, sizeof(tp));
	tp.rate_bps = tenant_cap ? agg_bps / 2 : open ? 2 * agg_bps : 0;
	tp.burst_bytes = open ? 1u << 20 : 262144;
	tp.qlimit_bytes = (uint64_t)3 * n * PKT;
	shaper_tenant_config(b->sh, 0, &tp, 0);
	/* Connections start in a random order: served in the order of their
	 * ids they would walk memory in sequence, and the hardware prefetcher
	 * would hide what a switch, whose connections come in any order, pays. */
	perm = malloc((size_t)n * sizeof(*perm));
	if (perm == NULL)
		exit(1);
	for (uint32_t i = 0; i < n; i++) {
		shaper_conn_attach(b->sh, i, 0, (open ? 2 : 1) * agg_bps / n, 0);
		perm[i] = i;
	}
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j, x;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		j = (uint32_t)(rng % (i + 1));
		x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
	/* 32 packet times at the aggregate rate, in ns. */
	b->step = (uint64_t)PKT * 8 * 32 * 1000000000ull / (tenant_cap ? agg_bps / 2 : agg_bps);
	if (open) {
		/* Packets arrive; nothing is backlogged. */
		b->perm = perm;
		return;
	}
	/* They also start one per packet time, not all at once: started
	 * together they would stay together, the whole population due in
	 * the same slot once per interval. */
	for (uint32_t i = 0; i < n; i++) {
		post(b->sh, perm[i], b->seq++, b->now);
		post(b->sh, perm[i], b->seq++, b->now);
		if (i % 32 == 31)
			bench_run_step(b);
	}
	free(perm);
}

/*
 * All sizes of one mode side by side: each is warmed up until every
 * connection has sent three times, then the measurement windows of the
 * sizes are interleaved, ROUNDS rounds of one window each, so that whatever
 * else runs on the machine disturbs every size alike.
 */
static void
bench_modes(const uint32_t *sizes, unsigned int nsizes, const enum bench_mode *modes,
	unsigned int nmodes, uint64_t pkts)
{
	static struct bench b[MAX_SIZES * MAX_MODES];
	unsigned int nb = 0;

	for (unsigned int m = 0; m < nmodes; m++) {
		for (unsigned int i = 0; i < nsizes; i++) {
			bench_setup(&b[nb], sizes[i], modes[m]);
			bench_run(&b[nb], 3ull * sizes[i] + 100000);
			nb++;
		}
	}
	for (int r = 0; r < ROUNDS; r++) {
		for (unsigned int i = 0; i < nb; i++) {
			uint64_t c0 = cycles(), t0 = wall_ns();
			uint64_t done = bench_run(&b[i], pkts / ROUNDS);

			b[i].cyc[r] = (double)(cycles() - c0) / (double)done;
			b[i].ns[r] = (double)(wall_ns() - t0) / (double)done;
		}
	}
	for (unsigned int i = 0; i < nb; i++) {
		qsort(b[i].cyc, ROUNDS, sizeof(double), cmp_double);
		qsort(b[i].ns, ROUNDS, sizeof(double), cmp_double);
		printf("{\"bench\": \"shaper\", \"mode\": \"%s\", \"connections\": %u, "
		       "\"cycles_per_packet\": %.1f, \"ns_per_packet\": %.1f, "
		       "\"cycles_per_packet_min\": %.1f",
		       mode_names[b[i].mode], b[i].n, b[i].cyc[ROUNDS / 2],
		       b[i].ns[ROUNDS / 2], b[i].cyc[0]);
		if (mode_cut(b[i].mode))
			printf(", \"cut_share\": %.4f", (double)b[i].cut / (double)b[i].pkts);
		printf("}\n");
		fflush(stdout);
		munmap(b[i].mem, b[i].len);
		free(b[i].perm);
	}
}

/* Parse a comma-separated list of modes; returns how many, 0 on error. */
static unsigned int
parse_modes(char *arg, enum bench_mode *modes)
{
	unsigned int n = 0;

	for (char *tok = strtok(arg, ","); tok != NULL; tok = strtok(NULL, ",")) {
		unsigned int m;

		for (m = 0; m < MAX_MODES; m++)
			if (strcmp(tok, mode_names[m]) == 0)
				break;
		if (m == MAX_MODES || n == MAX_MODES)
			return 0;
		modes[n++] = (enum bench_mode)m;
	}
	return n;
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
	enum bench_mode modes[MAX_MODES];
	unsigned int nmodes = 0;
	uint32_t sizes[MAX_SIZES];
	unsigned int nsizes = 0;

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
			nmodes = parse_modes(argv[++i], modes);
			if (nmodes == 0)
				goto usage;
		} else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
			for (char *tok = strtok(argv[++i], ","); tok != NULL;
			     tok = strtok(NULL, ","))
				if (nsizes < MAX_SIZES)
					sizes[nsizes++] = (uint32_t)strtoul(tok, NULL, 0);
		} else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
			pkts = strtoull(argv[++i], NULL, 0);
		} else {
			goto usage;
		}
	}
	if (nsizes == 0)
		for (uint32_t n = min; n <= max && nsizes < MAX_SIZES; n *= 10)
			sizes[nsizes++] = n;
	if (nmodes > 0) {
		bench_modes(sizes, nsizes, modes, nmodes, pkts);
	} else {
		/* pacing, then tenant, each measured on its own. */
		for (unsigned int m = M_PACING; m <= M_TENANT; m++) {
			modes[0] = (enum bench_mode)m;
			bench_modes(sizes, nsizes, modes, 1, pkts);
		}
	}
	return 0;
usage:
	fprintf(stderr, "usage: bench_shaper [--min N] [--max N] [--sizes N,N...] [--iters P] "
		"[--mode M[,M...]] | --csv accuracy|fairness\n"
		"  modes: pacing, tenant, open, cut, tenant-cut, cut-burst\n");
	return 2;
}
