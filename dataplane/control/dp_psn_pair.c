/* SPDX-License-Identifier: BSD-3-Clause */
/* Pairs of learned halves told by their PSNs (dp_psn_pair.h). */
#include <stdlib.h>
#include <string.h>

#include "dp_psn_pair.h"
#include "roce_hdr.h"

/* Order by (tenant, from, to, psn): @psn is acked in the one index, req_first in the other. */
static int
cmp4(uint32_t t, uint32_t f, uint32_t o, uint32_t psn, const struct dp_psn_half *b, uint32_t b_psn)
{
	if (t != b->tenant)
		return t < b->tenant ? -1 : 1;
	if (f != b->from)
		return f < b->from ? -1 : 1;
	if (o != b->to)
		return o < b->to ? -1 : 1;
	return psn == b_psn ? 0 : psn < b_psn ? -1 : 1;
}

static int
ack_cmp(const void *x, const void *y)
{
	const struct dp_psn_half *a = x, *b = y;

	return cmp4(a->tenant, a->from, a->to, a->acked, b, b->acked);
}

static int
req_cmp(const void *x, const void *y)
{
	const struct dp_psn_half *a = x, *b = y;

	return cmp4(a->tenant, a->from, a->to, a->req_first, b, b->req_first);
}

int
dp_psn_index(struct dp_psn_index *x, const struct dp_psn_half *h, uint32_t n)
{
	memset(x, 0, sizeof(*x));
	x->ack = malloc(sizeof(*x->ack) * (n + 1));
	x->req = malloc(sizeof(*x->req) * (n + 1));
	if (!x->ack || !x->req) {
		dp_psn_index_free(x);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (h[i].ack_valid)
			x->ack[x->n_ack++] = h[i];
		if (h[i].req_valid)
			x->req[x->n_req++] = h[i];
	}
	qsort(x->ack, x->n_ack, sizeof(*x->ack), ack_cmp);
	qsort(x->req, x->n_req, sizeof(*x->req), req_cmp);
	return 0;
}

void
dp_psn_index_free(struct dp_psn_index *x)
{
	free(x->ack);
	free(x->req);
	memset(x, 0, sizeof(*x));
}

/* Is @psn within the span of requests of @r? */
static bool
in_span(const struct dp_psn_half *r, uint32_t psn)
{
	return roce_psn_diff(psn, r->req_first) >= 0 && roce_psn_diff(r->req_newest, psn) >= 0;
}

/*
 * Note the entries of @v (sorted by @psn_of) in the group (t, f, o) whose PSN
 * is in [@lo, @hi] (no wrap) and that @ok accepts, into *@found; false when
 * a second one turns up.
 */
static bool
scan(const struct dp_psn_half *v, uint32_t n, bool by_ack, uint32_t t, uint32_t f, uint32_t o, uint32_t lo,
     uint32_t hi, bool (*ok)(const struct dp_psn_half *e, uint32_t arg), uint32_t arg,
     const struct dp_psn_half **found)
{
	uint32_t a = 0, b = n;

	while (a < b) {
		uint32_t mid = a + (b - a) / 2;

		if (cmp4(t, f, o, lo, &v[mid], by_ack ? v[mid].acked : v[mid].req_first) > 0)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < n && cmp4(t, f, o, hi, &v[a], by_ack ? v[a].acked : v[a].req_first) >= 0; a++) {
		if (!ok(&v[a], arg))
			continue;
		if (*found && (*found)->id != v[a].id)
			return false;
		*found = &v[a];
	}
	return true;
}

/* The same over [@lo, @hi] of the 24-bit circle, which may wrap. */
static bool
scan_wrapped(const struct dp_psn_half *v, uint32_t n, bool by_ack, uint32_t t, uint32_t f, uint32_t o, uint32_t lo,
	     uint32_t hi, bool (*ok)(const struct dp_psn_half *e, uint32_t arg), uint32_t arg,
	     const struct dp_psn_half **found)
{
	if (lo <= hi)
		return scan(v, n, by_ack, t, f, o, lo, hi, ok, arg, found);
	return scan(v, n, by_ack, t, f, o, lo, ROCE_PSN_MASK, ok, arg, found) &&
	       scan(v, n, by_ack, t, f, o, 0, hi, ok, arg, found);
}

static bool
any(const struct dp_psn_half *e, uint32_t arg)
{
	(void)e;
	(void)arg;
	return true;
}

/* A span of requests that holds @psn (not too long to be told by). */
static bool
holds(const struct dp_psn_half *e, uint32_t psn)
{
	return ((e->req_newest - e->req_first) & ROCE_PSN_MASK) < DP_PSN_SPAN_MAX && in_span(e, psn);
}

const struct dp_psn_half *
dp_psn_match(const struct dp_psn_index *x, const struct dp_psn_half *a)
{
	const struct dp_psn_half *found = NULL;

	/* Halves the other way whose acknowledgement answers one of @a's requests. */
	if (a->req_valid && ((a->req_newest - a->req_first) & ROCE_PSN_MASK) < DP_PSN_SPAN_MAX &&
	    !scan_wrapped(x->ack, x->n_ack, true, a->tenant, a->to, a->from, a->req_first, a->req_newest, any, 0,
			  &found))
		return NULL;
	/* Halves the other way whose span of requests holds what @a acknowledged. */
	if (a->ack_valid &&
	    !scan_wrapped(x->req, x->n_req, false, a->tenant, a->to, a->from,
			  (a->acked - (DP_PSN_SPAN_MAX - 1)) & ROCE_PSN_MASK, a->acked, holds, a->acked, &found))
		return NULL;
	return found;
}
