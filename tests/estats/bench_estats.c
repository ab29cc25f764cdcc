/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-packet cost of estats/ in TSC cycles, on the mix the switch sees:
 * for each connection, L's WRITE messages of @msg packets toward the fabric
 * and R's coalesced ACK for each, plus R's SEND requests delivered to L and
 * L's ACKs (both halves of the state in use).  Connections are visited
 * round-robin, so with many of them every call misses the cache as it
 * would on a busy switch.  A baseline loop walks the same frames and calls
 * nothing; the difference, divided by the frames, is the cost.
 *
 * Usage: bench_estats [CONNECTIONS [FRAMES_MILLIONS [MSG_PACKETS]]]
 * One line of output: connections, frames, cycles per frame off, on, and the
 * difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "estats.h"

#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t
cycles(void)
{
	return __rdtsc();
}
#else
static inline uint64_t
cycles(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* One frame of the mix: which side, which call's arguments. */
struct frame {
	uint32_t conn;
	uint32_t flags;
	uint32_t psn;
	uint8_t egress;
};

#define WR(f) (ESTATS_F_REQ | ESTATS_F_WRITE | (f))
#define ACK (ESTATS_F_RESP | ESTATS_F_ONLY | ESTATS_F_ACK)
#define SEND_ONLY (ESTATS_F_REQ | ESTATS_F_ONLY | ESTATS_F_SEND)

/* The mix, built once: a message of @msg packets and its ACK, then a SEND and its ACK, per connection in turn. */
static struct frame *
mix_build(uint32_t conns, uint64_t n, unsigned msg, uint64_t *n_out)
{
	struct frame *f = malloc(sizeof(*f) * n);
	uint32_t *psn_l = calloc(conns, sizeof(uint32_t)), *psn_r = calloc(conns, sizeof(uint32_t));
	uint64_t i = 0;
	uint32_t c = 0;

	if (!f || !psn_l || !psn_r)
		exit(1);
	while (i + msg + 3 <= n) {
		for (unsigned k = 0; k < msg; k++) {
			uint32_t fl = msg == 1 ? ESTATS_F_ONLY : k == 0 ? ESTATS_F_FIRST :
				      k + 1 == msg ? ESTATS_F_LAST : ESTATS_F_MIDDLE;

			f[i++] = (struct frame){ c, WR(fl), psn_l[c]++, 1 };
		}
		f[i++] = (struct frame){ c, ACK, psn_l[c] - 1, 0 };
		f[i++] = (struct frame){ c, SEND_ONLY, psn_r[c], 0 };
		f[i++] = (struct frame){ c, ACK, psn_r[c]++, 1 };
		c = (c + 1) % conns;
	}
	free(psn_l);
	free(psn_r);
	*n_out = i;
	return f;
}

static volatile uint64_t sink;

int
main(int argc, char **argv)
{
	uint32_t conns = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1024;
	uint64_t want = (argc > 2 ? strtoull(argv[2], NULL, 0) : 20) * 1000000u;
	unsigned msg = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 4;
	struct estats_params par;
	struct estats_profile prof;
	struct estats_conn *st;
	struct estats_conn_cold *cold;
	struct frame *f;
	uint64_t n, t0, off = 0, on = 0, now, acc = 0;

	estats_params_default(&par);
	if (conns == 0 || msg == 0 || estats_profile_build(&prof, &par) != 0)
		return 2;
	st = aligned_alloc(64, sizeof(*st) * conns);
	cold = aligned_alloc(64, sizeof(*cold) * conns);
	if (!st || !cold)
		return 1;
	for (uint32_t c = 0; c < conns; c++)
		estats_conn_init(&st[c], &cold[c]);
	f = mix_build(conns, want, msg, &n);

	/* Two passes; the second is reported (page faults and branch history warmed). */
	for (int pass = 0; pass < 2; pass++) {
		now = 0;
		t0 = cycles();
		for (uint64_t i = 0; i < n; i++) {
			acc += f[i].psn ^ f[i].flags ^ ((uintptr_t)&st[f[i].conn] >> 6);
			now += 100;
		}
		off = cycles() - t0;
		/* Fresh states: the second pass must not see the first's PSNs as retransmissions. */
		for (uint32_t c = 0; c < conns; c++)
			estats_conn_reset(&st[c]);
		now = 0;
		t0 = cycles();
		for (uint64_t i = 0; i < n; i++) {
			struct estats_conn *c = &st[f[i].conn];

			acc += f[i].psn ^ f[i].flags ^ ((uintptr_t)c >> 6);
			if (f[i].egress)
				estats_egress(c, &prof, f[i].flags, f[i].psn, 0, now);
			else
				estats_ingress(c, &prof, f[i].flags, f[i].psn, 0, now);
			now += 100;
		}
		on = cycles() - t0;
	}
	sink = acc;
	{
		struct estats_conn_stats *s = malloc(sizeof(*s));

		estats_conn_read(&st[0], s);
		printf("connections %u frames %lu bytes/conn %zu+%zu cycles/frame off %.2f on %.2f cost %.2f"
		       " (conn 0: %lu rtt samples)\n",
		       conns, (unsigned long)n, sizeof(struct estats_conn), sizeof(struct estats_conn_cold), (double)off / (double)n,
		       (double)on / (double)n, ((double)on - (double)off) / (double)n,
		       (unsigned long)s->hist[ESTATS_NET].count);
		free(s);
	}
	free(f);
	free(st);
	free(cold);
	return 0;
}
