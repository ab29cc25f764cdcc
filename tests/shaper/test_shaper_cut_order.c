/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the shaper's cut-through (shaper_send_now()), continued:
 * order and consistency when connections go back and forth between
 * cut-through and the queues, the data plane's two DCQCN stages, and the
 * message, backpressure, watchdog and charging rules packet by packet.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "shaper.h"
#include "shaper_state.h"
#include "sim.h"
#include "check.h"
#include "flows.h"

#define MS		1000000ull	/* Nanoseconds. */
#define US		1000ull
#define GBPS		1000000000ull

/* Check the shapers' structures every 16th poll. */
static unsigned int poll_bad;

static void
poll_check(struct drv *d)
{
	if (d->polls % 16 == 0) {
		poll_bad += check_invariants(d->sh);
		if (d->sh2 != NULL)
			poll_bad += check_invariants(d->sh2);
	}
}

/*
 * Connections that go back and forth between cut-through and the queues,
 * under a capped and an uncapped tenant, with QP caps, per-message and
 * per-packet charging, an exempt connection, DCQCN rate changes every
 * 100 us and two reloads of the tenant's rate: no packet out of order, the
 * structures consistent throughout, everything drained at the end, and the
 * bytes charged equal to the bytes sent (less the exempt ones).
 */
static void
test_cut_alternate(void)
{
	struct shaper_params p = sim_params(16, 2, 1u << 16);
	struct shaper *sh = shaper_create(&p, 0);
	struct shaper_tenant_params tp = {
		.rate_bps = 10 * GBPS, .burst_bytes = 65536, .qlimit_bytes = 16u << 20,
	};
	struct shaper_tenant_stats st;
	struct shaper_stats ss;
	uint64_t exempt = 0;
	struct drv d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	drv_init(&d, sh, NULL, 16, 2);
	d.cut = true;
	d.on_poll = poll_check;
	poll_bad = 0;
	shaper_tenant_config(sh, 0, &tp, 0);
	for (uint32_t i = 0; i < 16; i++) {
		uint64_t cap = i < 8 ? (i % 2) * 3 * GBPS : (2 + i % 3) * GBPS;

		shaper_conn_attach(sh, i, i / 8, cap, 0);
		drv_src(&d, i, i / 8, 4096u << (i % 7), 8 * GBPS,
			i < 8 ? 875000000 : cap * 9 / 10, 0);
		d.src[i].per_packet = i % 5 == 0;
	}
	d.src[11].xflags = SHAPER_PKT_EXEMPT;
	for (int k = 0; k < 1000; k++) {
		uint32_t ci = (uint32_t)(drv_unif(&d) * 16);
		uint64_t r = (uint64_t)(drv_unif(&d) * 10);

		drv_run(&d, d.now + 100 * US);
		/* 2 to 10 Gb/s, or released. */
		CU_ASSERT_EQUAL(shaper_conn_set_rate(sh, ci, r ? (r + 1) * GBPS : 0, d.now), 0);
		if (k == 300 || k == 600) {
			tp.rate_bps = k == 300 ? 8 * GBPS : 10 * GBPS;
			shaper_tenant_config(sh, 0, &tp, d.now);
		}
	}
	for (uint32_t i = 0; i < 16; i++) {
		drv_stop(&d, i);
		shaper_conn_set_rate(sh, i, 0, d.now);
	}
	drv_run(&d, d.now + 100 * MS);
	for (uint32_t t = 0; t < 2; t++) {
		struct tot a = drv_tot(&d, t);

		printf("\n    tenant %u: %llu packets, %.1f %% cut through, %llu switches",
		       t, (unsigned long long)a.pkts, 100.0 * (double)a.cut / (double)a.pkts,
		       (unsigned long long)a.switches);
		CU_ASSERT_EQUAL(a.reorders + a.refused, 0);
		CU_ASSERT(a.switches >= 1000);
		check_tenant_totals(&d, sh, t, true);
	}
	exempt = d.src[11].sent;
	shaper_tenant_stats(sh, 0, d.now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, st.deq_bytes);
	shaper_tenant_stats(sh, 1, d.now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, st.deq_bytes - exempt);
	shaper_stats(sh, &ss);
	CU_ASSERT_EQUAL(ss.items_used, 0);
	printf("; %u invariant violations in %llu polls\n", poll_bad,
	       (unsigned long long)d.polls);
	CU_ASSERT_EQUAL(poll_bad, 0);
	CU_ASSERT_EQUAL(check_invariants(sh), 0);
	drv_fini(&d);
	shaper_free(sh);
}

/* Every poll: each stage's queue, as the shaper counts it, holds exactly
 * what the test put in it and has not seen leave. */
static uint64_t stage_mismatch;

static void
stage_check(struct drv *d)
{
	for (int k = 0; k < 2; k++) {
		struct shaper_tenant_stats st;
		uint64_t held = 0;

		for (uint32_t i = 0; i < d->n; i++)
			held += d->src[i].held[k];
		shaper_tenant_stats(k ? d->sh2 : d->sh, 0, d->now, &st);
		if (st.queued_bytes != held)
			stage_mismatch++;
	}
	poll_check(d);
}

/*
 * The data plane's two stages with DCQCN: stage 1 paces each connection at
 * its congestion-control rate (changed every 50 us) under an uncapped
 * tenant, stage 2 holds the tenant's 20 Gb/s bucket; a packet that leaves
 * stage 1, at once or from its queue, is offered to stage 2 the same way.
 * A packet that cuts through is never counted in either stage's queue, the
 * tenant's bucket holds at stage 2, and nothing is reordered or lost.
 */
static void
test_cut_two_stages(void)
{
	struct shaper_params p = sim_params(8, 1, 1u << 16);
	struct shaper *s1 = shaper_create(&p, 0), *s2 = shaper_create(&p, 0);
	struct shaper_tenant_params tp1 = { .qlimit_bytes = 4u << 20 };
	struct shaper_tenant_params tp2 = {
		.rate_bps = 20 * GBPS, .burst_bytes = 65536, .qlimit_bytes = 4u << 20,
	};
	struct shaper_tenant_stats a, b;
	struct drv d;
	struct tot t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
	shaper_tenant_config(s1, 0, &tp1, 0);
	shaper_tenant_config(s2, 0, &tp2, 0);
	drv_init(&d, s1, s2, 8, 1);
	d.cut = true;
	d.on_poll = stage_check;
	poll_bad = 0;
	stage_mismatch = 0;
	env_init(&d.tenv[0], 20 * GBPS, 65536, 0);
	for (uint32_t i = 0; i < 8; i++) {
		shaper_conn_attach(s1, i, 0, 0, 0);
		shaper_conn_attach(s2, i, 0, 0, 0);
		drv_src(&d, i, 0, 16384u << (i % 3), 10 * GBPS, 2 * GBPS, 0);
	}
	for (int k = 0; k < 2000; k++) {
		uint32_t ci = (uint32_t)(drv_unif(&d) * 8);
		uint64_t r = (uint64_t)(drv_unif(&d) * 10);

		drv_run(&d, d.now + 50 * US);
		/* 2 to 10 Gb/s, or released. */
		shaper_conn_set_rate(s1, ci, r ? (r + 1) * GBPS : 0, d.now);
	}
	for (uint32_t i = 0; i < 8; i++) {
		drv_stop(&d, i);
		shaper_conn_set_rate(s1, i, 0, d.now);
	}
	drv_run(&d, d.now + 100 * MS);
	t = drv_tot(&d, 0);
	shaper_tenant_stats(s1, 0, d.now, &a);
	shaper_tenant_stats(s2, 0, d.now, &b);
	printf("\n    %llu packets: %.1f %% through stage 1 at once, %.1f %% through stage 2 at "
	       "once; %llu queue mismatches, %llu bucket violations, %u invariant violations\n",
	       (unsigned long long)t.pkts, 100.0 * (double)a.cut_pkts / (double)a.enq_pkts,
	       100.0 * (double)b.cut_pkts / (double)b.enq_pkts,
	       (unsigned long long)stage_mismatch, (unsigned long long)d.tenv[0].violations,
	       poll_bad);
	CU_ASSERT_EQUAL(stage_mismatch, 0);
	CU_ASSERT_EQUAL(d.tenv[0].violations, 0);
	CU_ASSERT_EQUAL(poll_bad, 0);
	CU_ASSERT_EQUAL(t.reorders + t.refused, 0);
	CU_ASSERT(a.cut_pkts > 0 && a.cut_pkts < a.enq_pkts);
	CU_ASSERT(b.cut_pkts > 0 && b.cut_pkts < b.enq_pkts);
	CU_ASSERT_EQUAL(a.enq_pkts, t.pkts);
	CU_ASSERT_EQUAL(a.deq_pkts, a.enq_pkts);
	CU_ASSERT_EQUAL(b.enq_pkts, a.deq_pkts);
	CU_ASSERT_EQUAL(b.deq_bytes, t.posted);
	CU_ASSERT_EQUAL(b.charged_bytes, b.deq_bytes);
	CU_ASSERT_EQUAL(a.queued_bytes + b.queued_bytes, 0);
	drv_fini(&d);
	shaper_free(s1);
	shaper_free(s2);
}

static struct shaper_pkt
pkt(uint32_t conn, uint64_t cookie, uint32_t bytes, uint16_t flags, uint32_t charge)
{
	struct shaper_pkt p = {
		.cookie = cookie, .conn = conn, .bytes = bytes, .flags = flags, .charge = charge,
	};

	return p;
}

/*
 * A message whose first packet cuts through: charged whole, once; its next
 * packets cut through while the transmission bucket has tokens, then queue
 * behind (never ahead of one queued), accepted past the hard limit because
 * the message was; backpressure keeps others from cutting through; the next
 * message waits for the debt; pacing is exact; and the watchdog refuses
 * whole messages whether or not a packet could cut through.
 */
static void
test_cut_messages(void)
{
	struct shaper_params p = sim_params(4, 1, 1u << 16);
	struct shaper *sh = shaper_create(&p, 0);
	struct shaper_tenant_params tp = {
		.rate_bps = 10 * GBPS, .burst_bytes = 65536, .qlimit_bytes = 256 * 1024,
	};
	uint64_t wire = shaper_msg_wire_bytes(1u << 20, SIM_MTU, SIM_HDR, SIM_RETH);
	struct shaper_tenant_stats st;
	struct shaper_stats ss;
	struct shaper_out o[32];
	struct shaper_pkt pk;
	unsigned int n_cut = 1, late_cut = 0, bad_order = 0, refused = 0;
	uint64_t now = 0, next = 0, t_last = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	shaper_tenant_config(sh, 0, &tp, 0);
	for (uint32_t i = 0; i < 4; i++)
		shaper_conn_attach(sh, i, 0, i == 3 ? 1 * GBPS : 0, 0);
	pk = pkt(0, 0, SIM_MTU + SIM_HDR + SIM_RETH, SHAPER_PKT_FIRST, (uint32_t)wire);
	CU_ASSERT_FATAL(shaper_send_now(sh, &pk, now, &o[0]));
	CU_ASSERT_EQUAL(o[0].cookie, 0);
	CU_ASSERT_EQUAL(o[0].bytes, pk.bytes);
	CU_ASSERT_EQUAL(o[0].conn_queued, 0);
	CU_ASSERT_EQUAL(o[0].flags, SHAPER_PKT_FIRST);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, wire);
	CU_ASSERT_EQUAL(st.tokens, 65536 - (int64_t)wire);
	CU_ASSERT_EQUAL(st.cut_pkts, 1);
	CU_ASSERT_EQUAL(st.enq_pkts, 1);
	CU_ASSERT_EQUAL(st.deq_pkts, 1);
	CU_ASSERT_EQUAL(st.queued_bytes, 0);
	for (uint32_t i = 1; i < 256; i++) {
		pk = pkt(0, i, SIM_MTU + SIM_HDR, i == 255 ? SHAPER_PKT_LAST : 0, 0);
		if (shaper_send_now(sh, &pk, now, &o[0])) {
			if (n_cut != i)
				late_cut++;
			n_cut++;
		} else if (shaper_enqueue(sh, &pk, now) != SHAPER_OK) {
			refused++;
		}
	}
	/* 64 KiB of tokens less the first packet: 15 more packets. */
	printf("\n    1 MiB WRITE: %u packets cut through, then queued", n_cut);
	CU_ASSERT_EQUAL(n_cut, 16);
	CU_ASSERT_EQUAL(late_cut, 0);
	CU_ASSERT_EQUAL(refused, 0);
	CU_ASSERT(shaper_tenant_full(sh, 0, now));
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT(st.queued_bytes > 2 * 256 * 1024);
	CU_ASSERT_EQUAL(st.charged_bytes, wire);
	/* Backpressure: an empty connection does not cut through, and a new
	 * message above the hard limit is refused. */
	pk = pkt(1, 0, 100, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
	CU_ASSERT(!shaper_send_now(sh, &pk, now, &o[0]));
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_DROP_OVERFLOW);
	/* The rest leaves in order at 10 Gb/s; the charge never moves. */
	next = n_cut;
	while (next < 256 && now < 2 * MS) {
		unsigned int n;

		now += 1 * US;
		n = shaper_dequeue(sh, now, o, 32);
		for (unsigned int k = 0; k < n; k++)
			if (o[k].cookie != next++)
				bad_order++;
		if (n > 0)
			t_last = now;
	}
	CU_ASSERT_EQUAL(next, 256);
	CU_ASSERT_EQUAL(bad_order, 0);
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, wire);
	/* The next message waits for the debt: (wire - 64 KiB) at 10 Gb/s is
	 * 798 us after the first packet. */
	pk = pkt(1, 1, 100, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
	while (!shaper_send_now(sh, &pk, now, &o[0]) && now < 2 * MS)
		now += 1 * US;
	printf(", last one sent by %llu us; the next message cut through at %llu us",
	       (unsigned long long)(t_last / US), (unsigned long long)(now / US));
	CU_ASSERT(now >= 797 * US && now <= 800 * US);

	/* Pacing is exact: 1250 B at 1 Gb/s is one packet every 10 us. */
	now = 1 * MS;
	pk = pkt(3, 0, 1250, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
	CU_ASSERT(shaper_send_now(sh, &pk, now, &o[0]));
	pk.cookie = 1;
	CU_ASSERT(!shaper_send_now(sh, &pk, now + 9999, &o[0]));
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now + 9999), SHAPER_OK);
	pk.cookie = 2;
	CU_ASSERT(!shaper_send_now(sh, &pk, now + 30 * US, &o[0]));
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now + 30 * US), SHAPER_OK);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, now + 30 * US, o, 32), 2);
	CU_ASSERT(o[0].cookie == 1 && o[1].cookie == 2);
	/* Idle time earns no credit: after 1 ms idle, one packet, not two. */
	pk.cookie = 3;
	CU_ASSERT(shaper_send_now(sh, &pk, now + 1 * MS, &o[0]));
	pk.cookie = 4;
	CU_ASSERT(!shaper_send_now(sh, &pk, now + 1 * MS + 5 * US, &o[0]));
	CU_ASSERT(shaper_send_now(sh, &pk, now + 1 * MS + 10 * US, &o[0]));
	/* A detached connection is shaper_enqueue()'s to refuse and count. */
	pk.conn = 7;
	CU_ASSERT(!shaper_send_now(sh, &pk, now, &o[0]));
	shaper_stats(sh, &ss);
	CU_ASSERT_EQUAL(ss.drops_detached, 0);
	CU_ASSERT_EQUAL(check_invariants(sh), 0);

	/* A message whose first packet cut through goes on past the hard
	 * limit: the rest of it is accepted, as for one accepted by enqueue. */
	now = 5 * MS;
	pk = pkt(2, 0, SIM_MTU + SIM_HDR, SHAPER_PKT_FIRST, 4 * (SIM_MTU + SIM_HDR));
	CU_ASSERT(shaper_send_now(sh, &pk, now, &o[0]));
	refused = 0;
	for (uint32_t i = 0; i < 200; i++) {
		struct shaper_pkt q = pkt(1, 10 + i, SIM_MTU + SIM_HDR,
			SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);

		if (!shaper_send_now(sh, &q, now, &o[0]) &&
		    shaper_enqueue(sh, &q, now) != SHAPER_OK)
			refused++;
	}
	CU_ASSERT(refused > 0);
	for (uint32_t i = 1; i < 4; i++) {
		pk = pkt(2, i, SIM_MTU + SIM_HDR, i == 3 ? SHAPER_PKT_LAST : 0, 0);
		CU_ASSERT(!shaper_send_now(sh, &pk, now, &o[0]));
		CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_OK);
	}
	next = 1;
	for (int k = 0; k < 10000 && sh->items_used > 0; k++) {
		unsigned int n;

		now += 1 * US;
		n = shaper_dequeue(sh, now, o, 32);
		for (unsigned int x = 0; x < n; x++)
			if (o[x].conn == 2 && o[x].cookie != next++)
				bad_order++;
	}
	CU_ASSERT_EQUAL(next, 4);
	CU_ASSERT_EQUAL(bad_order, 0);
	CU_ASSERT_EQUAL(sh->items_used, 0);
	CU_ASSERT_EQUAL(check_invariants(sh), 0);
	printf("\n");
	shaper_free(sh);
}

/*
 * What shaper_enqueue() would refuse or hold never cuts through: a new
 * message while the watchdog drops (capped and uncapped tenants), the rest
 * of a refused message, a packet while an uncapped tenant is backpressured,
 * and a packet that needs a charge while a READ's response is being paid off.
 * A message that ends closes: a packet retransmitted alone after it is
 * charged again.
 */
static void
test_cut_refusals(void)
{
	struct shaper_params p = sim_params(6, 2, 1u << 16);
	struct shaper *sh = shaper_create(&p, 0);
	struct shaper_tenant_params tp = {
		.rate_bps = 10 * GBPS, .burst_bytes = 65536, .qlimit_bytes = 256 * 1024,
	};
	struct shaper_tenant_stats st;
	struct shaper_out o[32];
	struct shaper_pkt pk;
	uint64_t now = 10 * MS, charged;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	shaper_tenant_config(sh, 0, &tp, 0);
	tp.rate_bps = 0;
	shaper_tenant_config(sh, 1, &tp, 0);
	for (uint32_t i = 0; i < 6; i++)
		shaper_conn_attach(sh, i, i / 4, i == 4 ? 1000000 : 0, 0);

	/* The watchdog: stuck for 100 ms above the limit. */
	for (uint32_t i = 0; i < 80; i++) {
		pk = pkt(2, i, SIM_MTU + SIM_HDR, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
		if (!shaper_send_now(sh, &pk, now, &o[0]))
			CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_OK);
	}
	now += 100 * MS + 1;
	CU_ASSERT(!shaper_tenant_full(sh, 0, now));
	pk = pkt(1, 2, SIM_MTU + SIM_HDR, SHAPER_PKT_FIRST, 4 * (SIM_MTU + SIM_HDR));
	CU_ASSERT(!shaper_send_now(sh, &pk, now, &o[0]));
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_DROP_WATCHDOG);
	/* Drained: its connection is empty and the tenant has tokens, yet the
	 * refused message's next packet stays refused. */
	while (shaper_dequeue(sh, now, o, 32) > 0 || sh->items_used > 0)
		now += 10 * US;
	now += 1 * MS;
	pk = pkt(1, 3, SIM_MTU + SIM_HDR, 0, 0);
	CU_ASSERT(!shaper_send_now(sh, &pk, now, &o[0]));
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_DROP_WATCHDOG);
	pk = pkt(1, 4, SIM_MTU + SIM_HDR, SHAPER_PKT_LAST, 0);
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_DROP_WATCHDOG);
	/* A new message passes at once. */
	pk = pkt(1, 5, SIM_MTU + SIM_HDR, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
	CU_ASSERT(shaper_send_now(sh, &pk, now, &o[0]));
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.drop_msgs[SHAPER_DROP_WATCHDOG], 1);
	CU_ASSERT_EQUAL(st.drop_pkts[SHAPER_DROP_WATCHDOG], 3);
	CU_ASSERT_EQUAL(st.watchdog_trips, 1);
	CU_ASSERT_EQUAL(st.enq_pkts, st.deq_pkts);
	CU_ASSERT_EQUAL(check_invariants(sh), 0);
	CU_ASSERT_EQUAL(st.enq_pkts, st.deq_pkts);

	/* An uncapped tenant: backpressured by a slow connection (1 Mb/s),
	 * its other, empty and unpaced connection does not cut through. */
	for (uint32_t i = 0; i < 80; i++) {
		pk = pkt(4, i, SIM_MTU + SIM_HDR, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
		if (!shaper_send_now(sh, &pk, now, &o[0]))
			CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_OK);
	}
	CU_ASSERT(shaper_tenant_full(sh, 1, now));
	pk = pkt(5, 0, 100, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
	CU_ASSERT(!shaper_send_now(sh, &pk, now, &o[0]));
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_OK);
	now += 100 * MS + 1;
	CU_ASSERT(!shaper_tenant_full(sh, 1, now));
	pk = pkt(5, 1, 100, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
	CU_ASSERT_EQUAL(shaper_dequeue(sh, now, o, 32), 2);
	CU_ASSERT(!shaper_send_now(sh, &pk, now, &o[0]));
	CU_ASSERT_EQUAL(shaper_enqueue(sh, &pk, now), SHAPER_DROP_WATCHDOG);
	shaper_tenant_stats(sh, 1, now, &st);
	CU_ASSERT(st.dropping);

	/* A READ request cut through pays for its 1 MiB response; an ACK of
	 * another connection then waits for the debt, (1 MiB - 64 KiB) at
	 * 10 Gb/s = 786 us, while an exempt packet passes. */
	now = 1000 * MS;
	pk = pkt(0, 100, 74, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 1u << 20);
	CU_ASSERT(shaper_send_now(sh, &pk, now, &o[0]));
	pk = pkt(1, 100, 62, SHAPER_PKT_FIRST | SHAPER_PKT_LAST, 0);
	CU_ASSERT(!shaper_send_now(sh, &pk, now + 1 * US, &o[0]));
	pk.flags |= SHAPER_PKT_EXEMPT;
	CU_ASSERT(shaper_send_now(sh, &pk, now + 1 * US, &o[0]));
	pk.flags &= (uint16_t)~SHAPER_PKT_EXEMPT;
	CU_ASSERT(!shaper_send_now(sh, &pk, now + 780 * US, &o[0]));
	CU_ASSERT(shaper_send_now(sh, &pk, now + 790 * US, &o[0]));

	/* Four packets of a message cut through, charged once; a packet
	 * retransmitted alone afterwards (no FIRST) is charged itself. */
	now += 10 * MS;
	shaper_tenant_stats(sh, 0, now, &st);
	charged = st.charged_bytes;
	for (uint32_t i = 0; i < 4; i++) {
		pk = pkt(2, 200 + i, 1000, (uint16_t)((i == 0 ? SHAPER_PKT_FIRST : 0) |
			(i == 3 ? SHAPER_PKT_LAST : 0)), i == 0 ? 4000 : 0);
		CU_ASSERT(shaper_send_now(sh, &pk, now, &o[0]));
	}
	pk = pkt(2, 204, 1000, 0, 0);
	CU_ASSERT(shaper_send_now(sh, &pk, now, &o[0]));
	shaper_tenant_stats(sh, 0, now, &st);
	CU_ASSERT_EQUAL(st.charged_bytes, charged + 5000);
	CU_ASSERT_EQUAL(check_invariants(sh), 0);
	shaper_free(sh);
}

int
main(void)
{
	CU_pSuite s;
	unsigned int fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("shaper cut-through, order and rules", NULL, NULL);
	CU_add_test(s, "alternating between cut-through and queues", test_cut_alternate);
	CU_add_test(s, "two DCQCN stages", test_cut_two_stages);
	CU_add_test(s, "a message cut through, then queued", test_cut_messages);
	CU_add_test(s, "what enqueue refuses never cuts through", test_cut_refusals);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
