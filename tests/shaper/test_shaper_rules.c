/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the shaper on a virtual clock (nanoseconds), continued:
 * message-granularity admission, READ requests, exempt packets and
 * shaper_charge(), backpressure and the watchdog, rate changes without
 * burst or stall, pacing beyond the wheel's horizon, and deadlines.
 *
 * Every figure is compared with a bound that the test states; the bounds
 * are tight enough that a broken pacer, bucket or limit fails them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "shaper.h"
#include "shaper_state.h"
#include "sim.h"

#define MS		1000000ull	/* Nanoseconds. */
#define US		1000ull
#define GBPS		1000000000ull

static struct shaper *
one_tenant(uint64_t rate, uint64_t burst, uint64_t qlimit, uint32_t n_conns)
{
	struct shaper_params p = sim_params(n_conns, 1, 1u << 16);
	struct shaper_tenant_params tp = {
		.rate_bps = rate, .burst_bytes = burst, .qlimit_bytes = qlimit,
	};
	struct shaper *sh = shaper_create(&p, 0);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	CU_ASSERT_EQUAL(shaper_tenant_config(sh, 0, &tp, 0), 0);
	for (uint32_t i = 0; i < n_conns; i++)
		CU_ASSERT_EQUAL(shaper_conn_attach(sh, i, 0, 0, 0), 0);
	return sh;
}

/* Post a WRITE of `len` payload bytes on `conn`; returns its wire bytes. */
static uint64_t
post_write(struct shaper *sh, uint32_t conn, uint32_t len, uint64_t now,
	enum shaper_verdict *v)
{
	uint64_t wire = shaper_msg_wire_bytes(len, SIM_MTU, SIM_HDR, SIM_RETH);
	uint32_t n = (len + SIM_MTU - 1) / SIM_MTU;

	for (uint32_t i = 0; i < n; i++) {
		struct shaper_pkt p = {
			.cookie = i, .conn = conn,
			.bytes = SIM_MTU + SIM_HDR + (i == 0 ? SIM_RETH : 0),
			.charge = i == 0 ? (uint32_t)wire : 0,
			.flags = (uint16_t)((i == 0 ? SHAPER_PKT_FIRST : 0) |
				(i + 1 == n ? SHAPER_PKT_LAST : 0)),
		};

		v[i] = shaper_enqueue(sh, &p, now);
	}
	return wire;
}

/* A 1 MiB WRITE is charged once, whole, when its first packet leaves. */
static void
test_message_admission(void)
{
	struct shaper *sh = one_tenant(10 * GBPS, 262144, 64u << 20, 3);
	enum shaper_verdict v[256];
	struct shaper_tenant_stats st;
	struct shaper_out o[32];
	uint64_t wire, now = 0, t_other = 0;
	unsigned int n, sent = 0;

	wire = post_write(sh, 0, 1u << 20, now, v);
	for (int i = 0; i < 256; i++)
		CU_ASSERT_EQUAL(v[i], SHAPER_OK);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, 0);
	CU_ASSERT_EQUAL(st.tokens, 262144);

	n = shaper_dequeue(sh, now, o, 1);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT(o[0].flags & SHAPER_PKT_FIRST);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, wire);
	CU_ASSERT_EQUAL(st.tokens, 262144 - (int64_t)wire);

	/* The rest of the message is pre-paid: the charge does not move while
	 * it flows, at the tenant's rate. */
	sent = 1;
	while (sent < 256) {
		now += 1 * US;
		n = shaper_dequeue(sh, now, o, 32);
		sent += n;
		shaper_tenant_stats(sh, 0, now, &st);
		CU_ASSERT_EQUAL(st.charged_bytes, wire);
	}
	/* 1 MiB at 10 Gb/s is 843 us, less the 256 KiB burst (210 us). */
	printf("\n    1 MiB WRITE: charged %llu B once, finished at %llu us",
	       (unsigned long long)st.charged_bytes, (unsigned long long)(now / US));
	CU_ASSERT(now >= 600 * US && now <= 680 * US);

	/* A single packet on another connection waits until the bucket has
	 * paid the message off: tokens >= 0 again. */
	{
		struct shaper_pkt p = {
			.cookie = 7, .conn = 1, .bytes = 100,
			.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
		};

		CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, now), SHAPER_OK);
		while (shaper_dequeue(sh, now, o, 32) == 0) {
			CU_ASSERT(now < 2 * MS);
			if (now >= 2 * MS)
				break;
			now += 1 * US;
		}
		t_other = now;
		shaper_tenant_stats(sh, 0, now, &st);
		CU_ASSERT_EQUAL(st.charged_bytes, wire + 100);
	}
	printf(", next packet admitted at %llu us\n", (unsigned long long)(t_other / US));
	CU_ASSERT(t_other >= 630 * US && t_other <= 690 * US);
	shaper_free(sh);
}

/* A READ request pays for the response it pulls; exempt packets do not pay;
 * shaper_charge() pays for bytes seen elsewhere. */
static void
test_read_and_charge(void)
{
	struct shaper *sh = one_tenant(8 * GBPS, 65536, 64u << 20, 2);
	struct shaper_tenant_stats st;
	struct shaper_out o[4];
	struct shaper_pkt rd = {
		.cookie = 1, .conn = 0, .bytes = 74, .charge = 1u << 20,
		.flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
	};
	struct shaper_pkt ex = {
		.cookie = 2, .conn = 1, .bytes = 1000, .flags = SHAPER_PKT_EXEMPT |
			SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
	};
	struct shaper_pkt ack = {
		.cookie = 3, .conn = 1, .bytes = 62, .flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
	};
	uint64_t now = 0;
	int64_t tokens;

	CU_ASSERT_EQUAL(shaper_enqueue(sh, &rd, now), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, now, o, 4), 1);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, 1u << 20);
	CU_ASSERT_EQUAL(st.deq_bytes, 74);
	CU_ASSERT_EQUAL(st.tokens, 65536 - (1 << 20));

	/* Exempt: leaves at once although the bucket is in debt. */
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &ex, now), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, now + 2 * US, o, 4), 1);
	shaper_tenant_stats(sh, 0, now + 2 * US, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, 1u << 20);

	/* An ACK waits for the debt: (1 MiB - 64 KiB) at 8 Gb/s = 983 us. */
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &ack, now), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, 900 * US, o, 4), 0);
	CU_ASSERT(shaper_next_deadline(sh, 900 * US) > 900 * US);
	CU_ASSERT(shaper_next_deadline(sh, 900 * US) <= 985 * US);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, 986 * US, o, 4), 1);

	/* shaper_charge(): 80 KB seen on the receive path takes 80 KB of
	 * tokens, 80 us at 8 Gb/s. */
	shaper_tenant_stats(sh, 0, 986 * US, &st);
	tokens = st.tokens;
	shaper_charge(sh, 0, 80000, 986 * US);
	shaper_tenant_stats(sh, 0, 986 * US, &st);
	CU_ASSERT_EQUAL(st.tokens, tokens - 80000);
	CU_ASSERT_EQUAL(st.charged_bytes, (1u << 20) + 62 + 80000);
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &ack, 986 * US), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, 1050 * US, o, 4), 0);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, 1070 * US, o, 4), 1);
	shaper_free(sh);
}

/* Queue limit: backpressure while full, with its time; refusal above the
 * hard limit, whole messages only. */
static void
test_backpressure(void)
{
	struct shaper *sh = one_tenant(1 * GBPS, 65536, 1u << 20, 4);
	struct shaper_tenant_stats st;
	enum shaper_verdict v[256];
	struct shaper_out o[32];
	uint64_t now = 0;
	int posted = 0;

	/* Post 64 KiB writes until the tenant says stop. */
	while (!shaper_tenant_full(sh, 0, now)) {
		post_write(sh, (uint32_t)posted % 4, 65536, now, v);
		posted++;
	}
	CU_ASSERT_EQUAL(posted, 16);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT(st.full);
	CU_ASSERT(!st.dropping);
	CU_ASSERT(st.queued_bytes >= 1u << 20);

	/* A caller that ignores it may still add until the hard limit (2 MiB);
	 * the message that crosses it is accepted whole, the next is refused
	 * whole. */
	for (int i = 0; i < 15; i++) {
		post_write(sh, 0, 65536, now, v);
		CU_ASSERT_EQUAL(v[0], SHAPER_OK);
		CU_ASSERT_EQUAL(v[15], SHAPER_OK);
	}
	post_write(sh, 1, 65536, now, v);
	CU_ASSERT_EQUAL(v[0], SHAPER_OK);
	post_write(sh, 2, 65536, now, v);
	for (int i = 0; i < 16; i++)
		CU_ASSERT_EQUAL(v[i], SHAPER_DROP_OVERFLOW);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.drop_msgs[SHAPER_DROP_OVERFLOW], 1);
	CU_ASSERT_EQUAL(st.drop_pkts[SHAPER_DROP_OVERFLOW], 16);

	/* Drain at 1 Gb/s after a 64 KiB burst; backpressure ends when the
	 * queue (2 127 360 B) falls under 1 MiB: (1 078 784 - 65 536) * 8 ns =
	 * 8.1 ms. */
	while (shaper_tenant_full(sh, 0, now)) {
		now += 10 * US;
		shaper_dequeue(sh, now, o, 32);
	}
	shaper_tenant_stats(sh, 0, now, &st);
	printf("\n    backpressured for %.3f ms, queue %llu B\n", st.backpressure_ns / 1e6,
	       (unsigned long long)st.queued_bytes);
	CU_ASSERT(!st.full);
	CU_ASSERT(st.backpressure_ns >= 8050 * US && st.backpressure_ns <= 8200 * US);
	CU_ASSERT_EQUAL(st.watchdog_trips, 0);
	shaper_free(sh);
}

/* Stuck longer than the watchdog: whole messages refused and counted. */
static void
test_watchdog(void)
{
	struct shaper *sh = one_tenant(1 * GBPS, 65536, 1u << 20, 4);
	struct shaper_tenant_stats st;
	enum shaper_verdict v[256];
	struct shaper_out o[32];
	uint64_t now = 0;

	while (!shaper_tenant_full(sh, 0, now))
		post_write(sh, 0, 65536, now, v);
	/* A message on connection 1 is half posted when the port stops. */
	for (uint32_t i = 0; i < 8; i++) {
		struct shaper_pkt p = {
			.conn = 1, .bytes = SIM_MTU + SIM_HDR,
			.charge = 16 * (SIM_MTU + SIM_HDR),
			.flags = i == 0 ? SHAPER_PKT_FIRST : 0,
		};

		CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, now), SHAPER_OK);
	}
	/* The egress is stuck (nothing dequeued, as under a PFC storm) for
	 * 99 ms: backpressure, no drops. */
	now = 99 * MS;
	CU_ASSERT(shaper_tenant_full(sh, 0, now));
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT(!st.dropping);
	/* After 100 ms the watchdog trips: poll again, refuse new messages. */
	now = 100 * MS + 1;
	CU_ASSERT(!shaper_tenant_full(sh, 0, now));
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT(st.dropping);
	CU_ASSERT_EQUAL(st.watchdog_trips, 1);
	post_write(sh, 2, 65536, now, v);
	for (int i = 0; i < 16; i++)
		CU_ASSERT_EQUAL(v[i], SHAPER_DROP_WATCHDOG);
	/* The message that was accepted before goes on, past the limit. */
	for (uint32_t i = 8; i < 16; i++) {
		struct shaper_pkt p = {
			.conn = 1, .bytes = SIM_MTU + SIM_HDR,
			.flags = i == 15 ? SHAPER_PKT_LAST : 0,
		};

		CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, now), SHAPER_OK);
	}
	/* A refused message started before a drain is refused to its end,
	 * even once the queue has room again. */
	{
		struct shaper_pkt p = {
			.conn = 3, .bytes = SIM_MTU + SIM_HDR, .charge = 3 * SIM_MTU,
			.flags = SHAPER_PKT_FIRST,
		};

		CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, now), SHAPER_DROP_WATCHDOG);
	}
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.drop_msgs[SHAPER_DROP_WATCHDOG], 2);
	CU_ASSERT_EQUAL(st.drop_pkts[SHAPER_DROP_WATCHDOG], 17);

	/* The egress resumes; once the queue is half empty new messages pass. */
	while (st.dropping) {
		now += 10 * US;
		shaper_dequeue(sh, now, o, 32);
		shaper_tenant_stats(sh, 0, now, &st);
		CU_ASSERT(now < 200 * MS);
		if (now >= 200 * MS)
			break;
	}
	CU_ASSERT(st.queued_bytes <= 512 * 1024);
	{
		struct shaper_pkt mid = { .conn = 3, .bytes = SIM_MTU + SIM_HDR };
		struct shaper_pkt last = {
			.conn = 3, .bytes = SIM_MTU + SIM_HDR, .flags = SHAPER_PKT_LAST,
		};

		CU_ASSERT_EQUAL(shaper_enqueue(sh, &mid, now), SHAPER_DROP_WATCHDOG);
		CU_ASSERT_EQUAL(shaper_enqueue(sh, &last, now), SHAPER_DROP_WATCHDOG);
	}
	post_write(sh, 2, 65536, now, v);
	for (int i = 0; i < 16; i++)
		CU_ASSERT_EQUAL(v[i], SHAPER_OK);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.drop_msgs[SHAPER_DROP_WATCHDOG], 2);
	CU_ASSERT_EQUAL(st.drop_pkts[SHAPER_DROP_WATCHDOG], 19);
	CU_ASSERT(st.backpressure_ns >= 100 * MS);
	printf("\n    watchdog: %llu messages, %llu packets refused; backpressured %.1f ms\n",
	       (unsigned long long)st.drop_msgs[SHAPER_DROP_WATCHDOG],
	       (unsigned long long)st.drop_pkts[SHAPER_DROP_WATCHDOG],
	       st.backpressure_ns / 1e6);
	shaper_free(sh);
}

/* Bytes dequeued in [a, b) by a recording callback. */
struct rec {
	uint64_t a, b, bytes;
};

static void
rec_out(struct sim *s, const struct shaper_out *o)
{
	struct rec *r = s->arg;

	if (s->now >= r->a && s->now < r->b)
		r->bytes += o->bytes;
}

/*
 * A change of rate, at `at`: the bytes of the following millisecond must
 * stay within new rate x 1 ms + `slack` (no burst) and above 95 % of new
 * rate x 1 ms (no stall).
 */
static void
check_change(struct sim *s, struct rec *r, uint64_t at, uint64_t new_bps,
	uint64_t slack, const char *what)
{
	double budget = (double)new_bps / 8 * 1e-3;

	r->a = at;
	r->b = at + 1 * MS;
	r->bytes = 0;
	sim_run(s, at + 2 * MS);
	printf("\n    %s -> %llu Gb/s: %llu B in the next ms (rate x 1 ms = %.0f, bound %.0f)",
	       what, (unsigned long long)(new_bps / GBPS), (unsigned long long)r->bytes,
	       budget, budget + (double)slack);
	CU_ASSERT((double)r->bytes <= budget + (double)slack);
	CU_ASSERT((double)r->bytes >= 0.95 * budget);
}

static void
test_rate_change(void)
{
	struct shaper_params p = sim_params(8, 1, 1u << 16);
	struct sim s;
	struct rec r = { 0, 0, 0 };
	const uint64_t pkt = SIM_MTU + SIM_HDR + SIM_RETH;

	/* DCQCN on one connection with 1 MiB messages in flight: the QP's own
	 * pacing has no burst, at most one packet early (a wheel slot). */
	sim_init(&s, &p);
	s.on_out = rec_out;
	s.arg = &r;
	s.target = 2u << 20;
	sim_tenant(&s, 0, 0, 0, 64u << 20);
	sim_conn(&s, 0, 0, 40 * GBPS, 1u << 20);
	sim_run(&s, 50 * MS);
	shaper_conn_set_rate(s.sh, 0, 4 * GBPS, s.now);
	check_change(&s, &r, s.now, 4 * GBPS, 2 * pkt, "QP 40 Gb/s, DCQCN");
	shaper_conn_set_rate(s.sh, 0, 0, s.now);
	check_change(&s, &r, s.now, 40 * GBPS, 2 * pkt, "QP, DCQCN released");
	shaper_conn_set_cap(s.sh, 0, 10 * GBPS, s.now);
	check_change(&s, &r, s.now, 10 * GBPS, 2 * pkt, "QP cap reload");
	CU_ASSERT_EQUAL(s.c[0].reorders, 0);
	sim_fini(&s);

	/* Released from a low DCQCN rate just after a packet: the wait for the
	 * next one (3.3 ms at 10 Mb/s) shrinks with the rate (3.3 us at
	 * 10 Gb/s) instead of stalling the connection. */
	{
		struct shaper *sh = one_tenant(0, 0, 64u << 20, 1);
		struct shaper_out o[4];
		enum shaper_verdict v[256];
		uint64_t now = 0;

		CU_ASSERT_EQUAL(shaper_conn_set_rate(sh, 0, 10000000, now), 0);
		post_write(sh, 0, 65536, now, v);
		CU_ASSERT_EQUAL(shaper_dequeue(sh, now, o, 4), 1);
		now = 10 * US;
		CU_ASSERT_EQUAL(shaper_dequeue(sh, now, o, 4), 0);
		CU_ASSERT_EQUAL(shaper_conn_set_rate(sh, 0, 10 * GBPS, now), 0);
		CU_ASSERT(shaper_next_deadline(sh, now) <= now + 5 * US);
		CU_ASSERT_EQUAL(shaper_dequeue(sh, now + 5 * US, o, 4), 1);
		shaper_free(sh);
	}

	/* A reload that shrinks an idle tenant's burst from 1 MiB to 64 KiB:
	 * the tokens shrink with it. */
	{
		struct shaper *sh = one_tenant(10 * GBPS, 1u << 20, 64u << 20, 1);
		struct shaper_tenant_params tp = {
			.rate_bps = 10 * GBPS, .burst_bytes = 65536, .qlimit_bytes = 64u << 20,
		};
		struct shaper_tenant_stats st;
		struct shaper_out o[32];
		enum shaper_verdict v[256];
		uint64_t now = 10 * MS, sent = 0;

		CU_ASSERT_EQUAL(shaper_tenant_config(sh, 0, &tp, now), 0);
		shaper_tenant_stats(sh, 0, now, &st);
		CU_ASSERT_EQUAL(st.tokens, 65536);
		for (int i = 0; i < 4; i++)
			post_write(sh, 0, 65536, now, v);
		for (unsigned int n = 32; n == 32;) {
			n = shaper_dequeue(sh, now, o, 32);
			for (unsigned int i = 0; i < n; i++)
				sent += o[i].bytes;
		}
		printf("\n    burst cut to 64 KiB while idle: %llu B sent at once",
		       (unsigned long long)sent);
		CU_ASSERT(sent <= 65536 + SIM_MTU + SIM_HDR + SIM_RETH);
		shaper_free(sh);
	}

	/* Tenant reload with eight connections, messages in flight: within the
	 * new rate plus the bucket's burst. */
	sim_init(&s, &p);
	s.on_out = rec_out;
	s.arg = &r;
	s.target = 2u << 20;
	sim_tenant(&s, 0, 40 * GBPS, 262144, 64u << 20);
	for (uint32_t i = 0; i < 8; i++)
		sim_conn(&s, i, 0, 0, 65536u << (i % 5));
	sim_run(&s, 50 * MS);
	sim_tenant(&s, 0, 5 * GBPS, 262144, 64u << 20);
	check_change(&s, &r, s.now, 5 * GBPS, 262144, "tenant 40 Gb/s reload");
	sim_tenant(&s, 0, 40 * GBPS, 262144, 64u << 20);
	check_change(&s, &r, s.now, 40 * GBPS, 262144, "tenant 5 Gb/s reload");
	printf("\n");
	for (uint32_t i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(s.c[i].reorders, 0);
	sim_fini(&s);
}

/* Pacing slower than the wheel's horizon (5 Mb/s: 6.6 ms per packet, 4.2 ms
 * horizon) re-files entries and still holds the rate. */
static void
test_far_horizon(void)
{
	struct shaper_params p = sim_params(2, 1, 1024);
	struct sim s;
	double r;

	sim_init(&s, &p);
	s.target = 3 * (SIM_MTU + SIM_HDR + SIM_RETH);
	s.step_min = 5000;
	s.step_max = 20000;
	sim_tenant(&s, 0, 0, 0, 64u << 20);
	sim_conn(&s, 0, 0, 5000000, 4096);
	sim_window(&s, 100 * MS, 2100 * MS);
	sim_run(&s, 2100 * MS);
	r = sim_bps(s.tenant_win[0], 100 * MS, 2100 * MS) / 5e6;
	printf("\n    5 Mb/s over a 4.2 ms horizon: %.4f of the cap\n", r);
	CU_ASSERT(fabs(r - 1.0) <= 0.01);
	sim_fini(&s);
}

/* A caller that sleeps until shaper_next_deadline() loses nothing: two
 * tenants, paced and unpaced connections, rates held within 1 %. */
static void
test_deadline_driven(void)
{
	struct shaper_params p = sim_params(6, 2, 1u << 16);
	struct sim s;
	uint64_t polls;
	double r0, r1, q;

	sim_init(&s, &p);
	s.target = 256 * 1024;
	sim_tenant(&s, 0, 3 * GBPS, 65536, 64u << 20);
	sim_tenant(&s, 1, 0, 0, 64u << 20);
	for (uint32_t i = 0; i < 3; i++)
		sim_conn(&s, i, 0, 0, 16384u << i);
	sim_conn(&s, 3, 1, 2 * GBPS, 65536);
	sim_conn(&s, 4, 1, 500000000, 4096);
	sim_window(&s, 20 * MS, 220 * MS);
	polls = sim_run_deadline(&s, 220 * MS, 1 * MS);
	r0 = sim_bps(s.tenant_win[0], 20 * MS, 220 * MS) / (3.0 * GBPS);
	r1 = sim_bps(s.c[3].win_bytes, 20 * MS, 220 * MS) / (2.0 * GBPS);
	q = sim_bps(s.c[4].win_bytes, 20 * MS, 220 * MS) / (0.5 * GBPS);
	printf("\n    deadline-driven (%llu polls): tenant %.4f, QP 2 Gb/s %.4f, "
	       "QP 0.5 Gb/s %.4f of their caps\n", (unsigned long long)polls, r0, r1, q);
	CU_ASSERT(fabs(r0 - 1.0) <= 0.01);
	CU_ASSERT(fabs(r1 - 1.0) <= 0.01);
	CU_ASSERT(fabs(q - 1.0) <= 0.01);
	for (uint32_t i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(s.c[i].reorders, 0);
	sim_fini(&s);
}

static void
test_deadline(void)
{
	struct shaper *sh = one_tenant(0, 0, 1u << 20, 2);
	struct shaper_out o[4];
	struct shaper_pkt p = {
		.conn = 0, .bytes = 1250, .flags = SHAPER_PKT_FIRST | SHAPER_PKT_LAST,
	};
	uint64_t d;

	CU_ASSERT_EQUAL(shaper_next_deadline(sh, 0), UINT64_MAX);
	/* 1250 B at 1 Gb/s: one packet every 10 us. */
	CU_ASSERT_EQUAL(shaper_conn_set_cap(sh, 0, 1 * GBPS, 0), 0);
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, 0), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, 0), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_next_deadline(sh, 0), 0);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, 0, o, 4), 1);
	d = shaper_next_deadline(sh, 0);
	CU_ASSERT(d > 0 && d <= 10 * US);
	CU_ASSERT(d >= 10 * US - 1024);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, d - 1, o, 4), 0);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, 10 * US, o, 4), 1);
	CU_ASSERT_EQUAL(shaper_next_deadline(sh, 10 * US), UINT64_MAX);
	/* Busy connections cannot move; unknown ones are refused. */
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, 10 * US), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_conn_detach(sh, 0), -EBUSY);
	CU_ASSERT_EQUAL(shaper_conn_attach(sh, 0, 0, 0, 10 * US), -EBUSY);
	p.conn = 5;
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &p, 10 * US), SHAPER_DROP_DETACHED);
	{
		struct shaper_stats st;

		shaper_stats(sh, &st);
		CU_ASSERT_EQUAL(st.drops_detached, 1);
		CU_ASSERT_EQUAL(st.items_used, 1);
		CU_ASSERT_EQUAL(st.items, 1u << 16);
	}
	CU_ASSERT_STRING_EQUAL(shaper_drop_name(SHAPER_DROP_WATCHDOG), "watchdog");
	shaper_free(sh);
}

int
main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("shaper rules", NULL, NULL);
	CU_add_test(s, "message admission charged once", test_message_admission);
	CU_add_test(s, "READ, exempt and shaper_charge", test_read_and_charge);
	CU_add_test(s, "backpressure and hard limit", test_backpressure);
	CU_add_test(s, "watchdog drops whole messages", test_watchdog);
	CU_add_test(s, "rate change without burst or stall", test_rate_change);
	CU_add_test(s, "pacing beyond the wheel horizon", test_far_horizon);
	CU_add_test(s, "next deadline and errors", test_deadline);
	CU_add_test(s, "a caller sleeping until the deadline", test_deadline_driven);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
