/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of estats/ on synthetic timelines: a virtual clock in
 * nanoseconds, frames given as the plain values the data plane would pass
 * (role flags, PSN, AETH syndrome), delays injected by choosing when each
 * answer "arrives".  The histogram's own tests are in test_estats_hist.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "estats.h"
#include "test_estats.h"

/* The profile every timeline uses (a 20 s sample timeout), built in main(). */
struct estats_profile prof;

/* Timelines. */

/* L sends WRITE_ONLY requests every @period; R's ACK arrives @delay later. */
static void
run_network(struct estats_conn *c, uint32_t psn0, unsigned n, uint64_t period, uint64_t delay, uint64_t t0)
{
	for (unsigned k = 0; k < n; k++) {
		uint64_t t = t0 + k * period;

		estats_egress(c, &prof, WRITE_ONLY, psn0 + k, 0, t);
		estats_ingress(c, &prof, ACK, psn0 + k, 0x1f, t + delay);
	}
}

static void
test_network_rtt(void)
{
	static const uint64_t delays[] = { US(1), US(3.3), US(47), US(1250), MS(80), MS(2500), MS(9900) };

	for (unsigned i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
		struct estats_conn *c = conn_new();
		struct estats_conn_stats *s;
		struct estats_pct p;

		run_network(c, 1000, 200, delays[i] * 2 + 1, delays[i], MS(1));
		s = stats_of(c);
		estats_hist_percentiles(&s->hist[ESTATS_NET], &p);
		CU_ASSERT_EQUAL(p.count, 200);
		CU_ASSERT(close_to(p.p50, delays[i], 0.05));
		CU_ASSERT(close_to(p.p99, delays[i], 0.05));
		CU_ASSERT_EQUAL(p.mean, delays[i]);
		CU_ASSERT_EQUAL(s->hist[ESTATS_HOST].count, 0);
		/* Single-packet messages: completion is the round trip. */
		CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].count, 200);
		CU_ASSERT_EQUAL(s->retrans, 0);
		free(c);
	}
}

static void
test_one_in_flight(void)
{
	struct estats_conn *c = conn_new();

	/* Ten requests 1 us apart, one coalesced ACK: one sample, from the first. */
	for (unsigned k = 0; k < 10; k++)
		estats_egress(c, &prof, SEND_ONLY, 50 + k, 0, US(100 + k));
	estats_ingress(c, &prof, ACK, 59, 0, US(130));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 1);
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].sum_ns, US(30));
	/* An answer before the sampled PSN does not complete it. */
	estats_egress(c, &prof, SEND_ONLY, 60, 0, US(200));
	estats_egress(c, &prof, SEND_ONLY, 61, 0, US(201));
	estats_ingress(c, &prof, ACK, 59, 0, US(210));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 1);
	estats_ingress(c, &prof, ACK, 60, 0, US(220));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 2);
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].sum_ns, US(50));
	/* A READ response covers the READ request. */
	estats_egress(c, &prof, READ_REQ, 62, 0, US(300));
	estats_ingress(c, &prof, READ_RESP_ONLY, 62, 0, US(305));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 3);
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].min_ns, US(5));
	/* Middles ask for no answer: not sampled. */
	estats_egress(c, &prof, WRITE_FIRST, 63, 0, US(400));
	estats_egress(c, &prof, WRITE_MIDDLE, 64, 0, US(401));
	estats_ingress(c, &prof, ACK, 64, 0, US(402));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 3);
	/* ... unless they carry AckReq. */
	estats_egress(c, &prof, WRITE_MIDDLE | ESTATS_F_ACKREQ, 65, 0, US(410));
	estats_ingress(c, &prof, ACK, 65, 0, US(417));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 4);
	free(c);
}

static void
test_host_response(void)
{
	static const uint64_t delays[] = { US(2), US(15), US(700), MS(30), MS(4000) };

	for (unsigned i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
		struct estats_conn *c = conn_new();
		struct estats_pct p;

		for (unsigned k = 0; k < 100; k++) {
			uint64_t t = MS(5) + k * (delays[i] * 3);

			estats_ingress(c, &prof, SEND_ONLY, 7 + k, 0, t);
			estats_egress(c, &prof, ACK, 7 + k, 0, t + delays[i]);
		}
		estats_hist_percentiles(&stats_of(c)->hist[ESTATS_HOST], &p);
		CU_ASSERT_EQUAL(p.count, 100);
		CU_ASSERT(close_to(p.p50, delays[i], 0.05));
		CU_ASSERT(close_to(p.p999, delays[i], 0.05));
		CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 0);
		free(c);
	}
}

static void
test_message_completion(void)
{
	struct estats_conn *c = conn_new();
	struct estats_conn_stats *s;

	/* FIRST at 0, LAST 40 us later, its ACK 12 us after that. */
	for (unsigned m = 0; m < 20; m++) {
		uint64_t t = MS(1) * (m + 1);
		uint32_t psn = 100 + m * 5;

		estats_egress(c, &prof, WRITE_FIRST, psn, 0, t);
		for (unsigned k = 1; k < 4; k++)
			estats_egress(c, &prof, WRITE_MIDDLE, psn + k, 0, t + US(10 * k));
		estats_egress(c, &prof, WRITE_LAST, psn + 4, 0, t + US(40));
		estats_ingress(c, &prof, ACK, psn + 4, 0, t + US(52));
	}
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].count, 20);
	CU_ASSERT(close_to(estats_hist_quantile(&s->hist[ESTATS_MSG], 0.5), US(52), 0.05));
	CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].sum_ns, 20 * US(52));
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 20);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].sum_ns, 20 * US(12));
	/* A READ is no message of this kind. */
	estats_egress(c, &prof, READ_REQ, 300, 0, MS(50));
	estats_ingress(c, &prof, READ_RESP_ONLY, 300, 0, MS(51));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_MSG].count, 20);
	free(c);
}

static void
test_retransmission(void)
{
	struct estats_conn *c = conn_new();
	struct estats_conn_stats *s;

	estats_egress(c, &prof, WRITE_ONLY, 10, 0, US(0));  /* sampled */
	estats_egress(c, &prof, WRITE_ONLY, 11, 0, US(1));
	/* Timeout at the sender: go-back-N from 10. */
	estats_egress(c, &prof, WRITE_ONLY, 10, 0, US(100));
	estats_egress(c, &prof, WRITE_ONLY, 11, 0, US(101));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->retrans, 2);
	/* The ACK is ambiguous (first transmission or second?): not a sample. */
	estats_ingress(c, &prof, ACK, 11, 0, US(110));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 0);
	/* Single-packet messages complete when acknowledged, recovery included. */
	CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].count, 1);
	CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].sum_ns, US(110));
	/* The next new PSN is sampled again. */
	estats_egress(c, &prof, WRITE_ONLY, 12, 0, US(200));
	estats_ingress(c, &prof, ACK, 12, 0, US(209));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 1);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].sum_ns, US(9));
	CU_ASSERT_EQUAL(s->retrans, 2);
	/* A retransmission is never itself sampled, even with no sample in flight. */
	estats_egress(c, &prof, WRITE_ONLY, 12, 0, US(300));
	estats_ingress(c, &prof, ACK, 12, 0, US(301));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 1);
	CU_ASSERT_EQUAL(s->retrans, 3);
	/* R retransmits a request to L: counted, and L's answer is not a host sample. */
	estats_ingress(c, &prof, SEND_ONLY, 500, 0, US(400));
	estats_ingress(c, &prof, SEND_ONLY, 500, 0, US(450));
	estats_egress(c, &prof, ACK, 500, 0, US(451));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->dup, 1);
	CU_ASSERT_EQUAL(s->hist[ESTATS_HOST].count, 0);
	free(c);
}

static void
test_nak_kinds(void)
{
	/* Syndromes (IBTA 9.7.5.2.1) and the kind each must count as. */
	static const struct {
		unsigned syn;
		int kind;
	} t[] = {
		{ 0x00, -1 }, { 0x1f, -1 }, { 0x0a, -1 },
		{ 0x60, ESTATS_NAK_PSN_SEQ }, { 0x61, ESTATS_NAK_INV_REQ },
		{ 0x62, ESTATS_NAK_REM_ACCESS }, { 0x63, ESTATS_NAK_REM_OP },
		{ 0x64, ESTATS_NAK_INV_RD_REQ }, { 0x20, ESTATS_NAK_RNR }, { 0x3f, ESTATS_NAK_RNR },
		{ 0x2e, ESTATS_NAK_RNR }, { 0x65, ESTATS_NAK_RESERVED }, { 0x7f, ESTATS_NAK_RESERVED },
		{ 0x40, ESTATS_NAK_RESERVED }, { 0x80, ESTATS_NAK_RESERVED }, { 0xe0, ESTATS_NAK_RESERVED },
	};
	static const char *const names[ESTATS_NAK_MAX] = {
		"psn_sequence_error", "rnr", "remote_access_error", "remote_operational_error",
		"invalid_request", "invalid_rd_request", "reserved",
	};
	uint64_t want[ESTATS_NAK_MAX] = { 0 };
	struct estats_conn *c = conn_new();
	struct estats_conn_stats *s;
	unsigned i, k;

	for (k = 0; k < ESTATS_NAK_MAX; k++)
		CU_ASSERT_STRING_EQUAL(estats_nak_names[k], names[k]);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CU_ASSERT_EQUAL(estats_aeth_nak(t[i].syn), t[i].kind);
		/* Row i is sent i + 1 times, by R (ingress) and by L (egress). */
		for (k = 0; k <= i; k++) {
			estats_ingress(c, &prof, ACK, 5, t[i].syn, US(i));
			estats_egress(c, &prof, ACK, 9, t[i].syn, US(i));
		}
		if (t[i].kind >= 0)
			want[t[i].kind] += i + 1;
	}
	s = stats_of(c);
	for (k = 0; k < ESTATS_NAK_MAX; k++) {
		CU_ASSERT_EQUAL(s->naks_received[k], want[k]);
		CU_ASSERT_EQUAL(s->naks_sent[k], want[k]);
	}
	free(c);
}

static void
test_nak_samples(void)
{
	struct estats_conn *c = conn_new();
	struct estats_conn_stats *s;

	/* An RNR NAK at the sampled PSN cancels the round trip; the message waits for recovery. */
	estats_egress(c, &prof, SEND_ONLY, 40, 0, US(0));
	estats_ingress(c, &prof, ACK, 40, 0x2c, US(8));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 0);
	CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].count, 0);
	CU_ASSERT_EQUAL(s->naks_received[ESTATS_NAK_RNR], 1);
	estats_egress(c, &prof, SEND_ONLY, 40, 0, US(500));
	estats_ingress(c, &prof, ACK, 40, 0, US(507));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 0);
	CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].count, 1);
	CU_ASSERT_EQUAL(s->hist[ESTATS_MSG].sum_ns, US(507));
	/* A sequence NAK after the sampled PSN acknowledges it. */
	estats_egress(c, &prof, SEND_ONLY, 41, 0, US(600));
	estats_egress(c, &prof, SEND_ONLY, 43, 0, US(601));
	estats_ingress(c, &prof, ACK, 42, 0x60, US(606));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 1);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].sum_ns, US(6));
	free(c);
}

static void
test_out_of_sequence(void)
{
	struct estats_conn *c = conn_new();
	struct estats_profile p4 = prof;
	unsigned k;

	/* 0, 1, 2, (3 lost), 4, 5, 6, then R goes back to 3. */
	for (k = 0; k < 7; k++)
		if (k != 3)
			estats_ingress(c, &prof, WRITE_ONLY, k, 0, US(k));
	CU_ASSERT_EQUAL(stats_of(c)->oos, 3);
	for (k = 3; k < 7; k++)
		estats_ingress(c, &prof, WRITE_ONLY, k, 0, US(10 + k));
	CU_ASSERT_EQUAL(stats_of(c)->oos, 3);
	CU_ASSERT_EQUAL(stats_of(c)->dup, 0);
	estats_ingress(c, &prof, WRITE_ONLY, 5, 0, US(20));
	CU_ASSERT_EQUAL(stats_of(c)->dup, 1);
	/* A READ reserves PSNs for its responses: the next request is no gap. */
	estats_ingress(c, &prof, READ_REQ, 7, 0, US(30));
	estats_ingress(c, &prof, WRITE_ONLY, 23, 0, US(31));
	estats_ingress(c, &prof, WRITE_ONLY, 24, 0, US(32));
	CU_ASSERT_EQUAL(stats_of(c)->oos, 3);
	/* A peer that jumped for good is followed after oos_resync requests. */
	p4.oos_resync = 4;
	for (k = 0; k < 6; k++)
		estats_ingress(c, &p4, WRITE_ONLY, 1000 + k, 0, US(40 + k));
	CU_ASSERT_EQUAL(stats_of(c)->oos, 7);
	free(c);
}

static void
test_psn_wrap(void)
{
	struct estats_conn *c = conn_new();
	struct estats_conn_stats *s;

	CU_ASSERT_TRUE(estats_psn_ge(0, 0xffffff));
	CU_ASSERT_FALSE(estats_psn_ge(0xffffff, 0));
	CU_ASSERT_TRUE(estats_psn_ge(5, 5));
	/* Sampled at 0xffffff, acknowledged by a coalesced ACK of PSN 1. */
	estats_egress(c, &prof, SEND_ONLY, 0xfffffe, 0, US(0));
	estats_ingress(c, &prof, ACK, 0xfffffe, 0, US(3));
	estats_egress(c, &prof, SEND_ONLY, 0xffffff, 0, US(10));
	estats_egress(c, &prof, SEND_ONLY, 0, 0, US(11));
	estats_ingress(c, &prof, ACK, 0xfffff0, 0, US(12)); /* older: not covering */
	estats_egress(c, &prof, SEND_ONLY, 1, 0, US(13));
	estats_ingress(c, &prof, ACK, 1, 0, US(30));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].count, 2);
	CU_ASSERT_EQUAL(s->hist[ESTATS_NET].max_ns, US(20));
	CU_ASSERT_EQUAL(s->retrans, 0);
	/* 0xffffff again after 1 is a retransmission. */
	estats_egress(c, &prof, SEND_ONLY, 0xffffff, 0, US(40));
	CU_ASSERT_EQUAL(stats_of(c)->retrans, 1);
	/* PSNs wider than 24 bits are taken modulo 2^24. */
	estats_egress(c, &prof, SEND_ONLY, 0x1000002, 0, US(50));
	CU_ASSERT_EQUAL(stats_of(c)->retrans, 1);
	CU_ASSERT_EQUAL(c->egress.nxt_psn, 3);
	/* Ingress: in order across the wrap, then a gap and a duplicate. */
	estats_ingress(c, &prof, SEND_ONLY, 0xfffffe, 0, US(60));
	estats_ingress(c, &prof, SEND_ONLY, 0xffffff, 0, US(61));
	estats_ingress(c, &prof, SEND_ONLY, 0, 0, US(62));
	estats_ingress(c, &prof, SEND_ONLY, 2, 0, US(63));
	estats_ingress(c, &prof, SEND_ONLY, 0xffffff, 0, US(64));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->oos, 1);
	CU_ASSERT_EQUAL(s->dup, 1);
	free(c);
}

static void
test_timeout(void)
{
	struct estats_conn *c = conn_new();

	/* No answer to 7: after the timeout a new sample replaces it. */
	estats_egress(c, &prof, SEND_ONLY, 7, 0, US(0));
	estats_egress(c, &prof, SEND_ONLY, 8, 0, prof.timeout_ns - 1);
	estats_egress(c, &prof, SEND_ONLY, 9, 0, prof.timeout_ns + 1);
	estats_ingress(c, &prof, ACK, 9, 0, prof.timeout_ns + US(26));
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 1);
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].sum_ns, US(26) - 1);
	/* An answer later than the timeout is not recorded. */
	estats_egress(c, &prof, SEND_ONLY, 10, 0, MS(20000));
	estats_ingress(c, &prof, ACK, 10, 0, MS(20000) + prof.timeout_ns + 1);
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 1);
	/* Clocks of the two sides a little apart: a "negative" round trip counts as 0. */
	estats_egress(c, &prof, SEND_ONLY, 11, 0, MS(40000));
	estats_ingress(c, &prof, ACK, 11, 0, MS(40000) - 100);
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].count, 2);
	CU_ASSERT_EQUAL(stats_of(c)->hist[ESTATS_NET].min_ns, 0);
	free(c);
}

static void
test_events(void)
{
	struct estats_conn *c = conn_new();
	struct estats_conn_stats *s;

	estats_ingress(c, &prof, CNP, 0, 0, US(1));
	estats_ingress(c, &prof, CNP, 0, 0, US(2));
	estats_ingress(c, &prof, SEND_ONLY | ESTATS_F_CE, 1, 0, US(3));
	estats_ingress_cnp_sent(c);
	estats_egress(c, &prof, SEND_ONLY | ESTATS_F_CE, 1, 0, US(4));
	estats_egress(c, &prof, ACK | ESTATS_F_CE, 1, 0, US(5));
	s = stats_of(c);
	CU_ASSERT_EQUAL(s->cnp_rx, 2);
	CU_ASSERT_EQUAL(s->cnp_tx, 1);
	CU_ASSERT_EQUAL(s->ce_ingress, 1);
	CU_ASSERT_EQUAL(s->ce_egress, 2);
	free(c);
}

static void
test_tenant_sum(void)
{
	static struct estats_conn_stats tenant, direct_stats;
	struct estats_hist *direct = &direct_stats.hist[ESTATS_NET];
	struct estats_conn *c[3];
	unsigned i, k;

	estats_conn_stats_reset(&tenant);
	estats_conn_stats_reset(&direct_stats);
	for (i = 0; i < 3; i++) {
		c[i] = conn_new();
		for (k = 0; k < 300 * (i + 1); k++) {
			uint64_t d = US(4 + 30 * i) + k * 37u;

			estats_egress(c[i], &prof, SEND_ONLY, k, 0, MS(k));
			estats_ingress(c[i], &prof, ACK, k, 0, MS(k) + d);
			estats_hist_record(direct, d);
			if (k % 50 == 0)
				estats_egress(c[i], &prof, SEND_ONLY, k, 0, MS(k) + US(900));
		}
	}
	for (i = 0; i < 3; i++) {
		estats_conn_stats_merge(&tenant, stats_of(c[i]));
		free(c[i]);
	}
	CU_ASSERT_EQUAL(tenant.hist[ESTATS_NET].count, 1800);
	CU_ASSERT_EQUAL(memcmp(&tenant.hist[ESTATS_NET], direct, sizeof(*direct)), 0);
	CU_ASSERT_EQUAL(tenant.retrans, 6 + 12 + 18);
}

int
main(void)
{
	struct estats_params p;
	CU_pSuite s;
	unsigned fails;

	estats_params_default(&p);
	p.sample_timeout_ms = 20000;
	if (estats_profile_build(&prof, &p) != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("estats", NULL, NULL);
	estats_hist_tests_add(s);
	CU_add_test(s, "network round trip recovers injected delays", test_network_rtt);
	CU_add_test(s, "one sample in flight; what completes it", test_one_in_flight);
	CU_add_test(s, "host response recovers injected delays", test_host_response);
	CU_add_test(s, "message completion, FIRST to the ACK of LAST", test_message_completion);
	CU_add_test(s, "retransmissions counted, never sampled (Karn)", test_retransmission);
	CU_add_test(s, "every NAK kind counted under its name", test_nak_kinds);
	CU_add_test(s, "NAKs cancel or complete samples", test_nak_samples);
	CU_add_test(s, "out-of-sequence and duplicate requests", test_out_of_sequence);
	CU_add_test(s, "PSN wrap-around", test_psn_wrap);
	CU_add_test(s, "sample timeout and clock skew", test_timeout);
	CU_add_test(s, "CNPs and ECN marks", test_events);
	CU_add_test(s, "tenant histogram is the sum of its connections'", test_tenant_sum);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
