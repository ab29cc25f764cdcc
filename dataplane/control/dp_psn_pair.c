/* SPDX-License-Identifier: BSD-3-Clause */
/* Pairs of learned halves told by their PSNs (dp_psn_pair.h). */
#include <stdlib.h>

#include "dp_psn_pair.h"
#include "roce_hdr.h"

static int
key_cmp(uint32_t ta, uint32_t fa, uint32_t oa, const struct dp_psn_half *b)
{
	if (ta != b->tenant)
		return ta < b->tenant ? -1 : 1;
	if (fa != b->from)
		return fa < b->from ? -1 : 1;
	if (oa != b->to)
		return oa < b->to ? -1 : 1;
	return 0;
}

static int
half_cmp(const void *x, const void *y)
{
	const struct dp_psn_half *a = x;

	return key_cmp(a->tenant, a->from, a->to, y);
}

void
dp_psn_sort(struct dp_psn_half *h, uint32_t n)
{
	qsort(h, n, sizeof(*h), half_cmp);
}

/* Does @ans's acknowledged PSN answer one of the requests @req carried? */
static bool
answers(const struct dp_psn_half *ans, const struct dp_psn_half *req)
{
	return ans->ack_valid && req->req_valid && roce_psn_diff(ans->acked, req->req_first) >= 0 &&
	       roce_psn_diff(req->req_newest, ans->acked) >= 0;
}

const struct dp_psn_half *
dp_psn_match(const struct dp_psn_half *h, uint32_t n, const struct dp_psn_half *a)
{
	const struct dp_psn_half *found = NULL;
	uint32_t lo = 0, hi = n;

	/* The first half of the other way, (tenant, a->to, a->from). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (key_cmp(a->tenant, a->to, a->from, &h[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t i = lo; i < n && !key_cmp(a->tenant, a->to, a->from, &h[i]); i++) {
		if (!answers(&h[i], a) && !answers(a, &h[i]))
			continue;
		if (found)
			return NULL;    /* two would: neither is told */
		found = &h[i];
	}
	return found;
}
