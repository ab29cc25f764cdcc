/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairs of learned halves told by their PSNs (dataplane/control/dp_psn_pair.c):
 * the half whose acknowledged PSN lies in the span of another's requests,
 * going the other way between the same endpoints, is its pair; in either
 * role; across the 24-bit wrap; never when two halves would match, or from
 * another tenant or another pair of endpoints.
 */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "cu_run.h"
#include "dp_psn_pair.h"

/* A half from @from to @to of tenant 0 with QP @vqpn. */
static struct dp_psn_half
half(uint32_t from, uint32_t to, uint32_t vqpn, uint32_t id)
{
	return (struct dp_psn_half){ .tenant = 0, .from = from, .to = to, .vqpn = vqpn, .id = id };
}

static void
requests(struct dp_psn_half *h, uint32_t first, uint32_t newest)
{
	h->req_valid = true;
	h->req_first = first;
	h->req_newest = newest;
}

static void
acked(struct dp_psn_half *h, uint32_t psn)
{
	h->ack_valid = true;
	h->acked = psn;
}

/* The id of what the half @id of @h matches among @h, or -1. */
static int
match_of(struct dp_psn_half *h, uint32_t n, uint32_t id)
{
	const struct dp_psn_half *m;
	struct dp_psn_index x;
	int r = -2;

	CU_ASSERT_FATAL(dp_psn_index(&x, h, n) == 0);
	for (uint32_t i = 0; i < n; i++)
		if (h[i].id == id)
			r = (m = dp_psn_match(&x, &h[i])) ? (int)m->id : -1;
	dp_psn_index_free(&x);
	return r;
}

static void
test_requester_and_responder(void)
{
	/* Endpoint 1's QPs 17 and 18 send to 2's QP 33 and 34 (halves 0, 1); 2's answers come back on 2, 3. */
	struct dp_psn_half h[6] = { half(1, 2, 33, 0), half(1, 2, 34, 1), half(2, 1, 17, 2), half(2, 1, 18, 3),
				    half(3, 2, 33, 4), half(2, 3, 40, 5) };

	requests(&h[0], 1000, 1010);
	requests(&h[1], 500000, 500002);
	acked(&h[2], 1007);     /* 33 answers 17's requests up to 1007 */
	acked(&h[3], 500002);   /* 34 answers 18's */
	acked(&h[5], 1005);     /* endpoint 3, not 1: never 1's pair */
	CU_ASSERT_EQUAL(match_of(h, 6, 0), 2);
	CU_ASSERT_EQUAL(match_of(h, 6, 2), 0);
	CU_ASSERT_EQUAL(match_of(h, 6, 1), 3);
	CU_ASSERT_EQUAL(match_of(h, 6, 3), 1);
	CU_ASSERT_EQUAL(match_of(h, 6, 4), -1);
	CU_ASSERT_EQUAL(match_of(h, 6, 5), -1);
}

static void
test_edges(void)
{
	struct dp_psn_half h[3] = { half(1, 2, 33, 0), half(2, 1, 17, 1), half(2, 1, 18, 2) };

	/* Across the wrap of 24 bits: requests 0xfffffe .. 0x000002, answered up to 0x000001. */
	requests(&h[0], 0xfffffe, 0x000002);
	acked(&h[1], 0x000001);
	CU_ASSERT_EQUAL(match_of(h, 3, 0), 1);
	/* Outside the span: not an answer. */
	acked(&h[1], 0x000003);
	CU_ASSERT_EQUAL(match_of(h, 3, 0), -1);
	/* Two halves would match: neither is told. */
	acked(&h[1], 0x000001);
	acked(&h[2], 0xffffff);
	CU_ASSERT_EQUAL(match_of(h, 3, 0), -1);
	/* Nothing forwarded yet: nothing told. */
	h[0].req_valid = false;
	h[2].ack_valid = false;
	CU_ASSERT_EQUAL(match_of(h, 3, 0), -1);
	/* Another tenant's half with the same endpoints and PSNs is not a pair. */
	requests(&h[0], 10, 20);
	acked(&h[1], 15);
	h[1].tenant = 1;
	CU_ASSERT_EQUAL(match_of(h, 3, 0), -1);
	/* A span longer than DP_PSN_SPAN_MAX tells nothing. */
	h[1].tenant = 0;
	requests(&h[0], 10, 10 + DP_PSN_SPAN_MAX);
	CU_ASSERT_EQUAL(match_of(h, 3, 0), -1);
	CU_ASSERT_EQUAL(match_of(h, 3, 1), -1);
}

/*
 * Many QPs between two endpoints (the set-up bench's 100 000 to one VM):
 * each request span finds its one answer among them, and the answering
 * halves find theirs by the span that holds their PSN.
 */
static void
test_many(void)
{
	enum { N = 20000 };
	struct dp_psn_half *h = calloc(2 * N, sizeof(*h));
	const struct dp_psn_half *m;
	struct dp_psn_index x;
	uint32_t right = 0, seed = 1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t first;

		seed = seed * 1103515245u + 12345u;
		first = (seed >> 4) & 0xffffff;
		h[i] = half(1, 2, 100000 + i, i);
		requests(&h[i], first, (first + 8) & 0xffffff);
		h[N + i] = half(2, 1, 200000 + i, N + i);
		acked(&h[N + i], (first + 5) & 0xffffff);
	}
	CU_ASSERT_FATAL(dp_psn_index(&x, h, 2 * N) == 0);
	for (uint32_t i = 0; i < N; i++) {
		right += (m = dp_psn_match(&x, &h[i])) && m->id == N + i;
		right += (m = dp_psn_match(&x, &h[N + i])) && m->id == i;
	}
	/* Random spans of 9 PSNs among 20 000 in 2^24 meet now and then: those are left alone. */
	CU_ASSERT(right > 2 * N * 98 / 100);
	printf("\n  %u of %u halves told their pair\n", right, 2 * N);
	dp_psn_index_free(&x);
	free(h);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("psn_pair", NULL, NULL);
	CU_add_test(s, "a requester's half and the half that answers it", test_requester_and_responder);
	CU_add_test(s, "the 24-bit wrap, spans, two candidates, tenants", test_edges);
	CU_add_test(s, "20 000 QPs between two endpoints", test_many);
	return cu_run_all();
}
