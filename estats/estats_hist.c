/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The histogram's bounds, snapshots, merges and percentiles: everything off
 * the per-packet path.
 */
#include <math.h>
#include <string.h>

#include "estats_hist.h"

/* Bucket bounds in units: the first 16 are one unit wide, then 16 per octave. */
static uint64_t
bound_units(unsigned i)
{
	unsigned o, s;

	if (i <= ESTATS_HIST_SUB)
		return i;
	o = i / ESTATS_HIST_SUB;
	s = i % ESTATS_HIST_SUB;
	return (uint64_t)(ESTATS_HIST_SUB + s) << (o - 1u);
}

uint64_t
estats_hist_lower(unsigned i)
{
	if (i >= ESTATS_HIST_BUCKETS)
		return ESTATS_HIST_INF;
	return bound_units(i) << ESTATS_HIST_UNIT_SHIFT;
}

uint64_t
estats_hist_upper(unsigned i)
{
	if (i >= ESTATS_HIST_BUCKETS - 1u)
		return ESTATS_HIST_INF;
	return bound_units(i + 1u) << ESTATS_HIST_UNIT_SHIFT;
}

void
estats_hist_reset(struct estats_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void
estats_hist_snapshot(struct estats_hist *dst, const struct estats_hist *src)
{
	uint64_t n = 0;
	unsigned i, lo = ESTATS_HIST_BUCKETS, hi = 0;

	for (i = 0; i < ESTATS_HIST_BUCKETS; i++) {
		dst->b[i] = ESTATS_LOAD(&src->b[i]);
		if (dst->b[i] != 0) {
			n += dst->b[i];
			if (lo == ESTATS_HIST_BUCKETS)
				lo = i;
			hi = i;
		}
	}
	dst->count = n;
	dst->sum_ns = ESTATS_LOAD(&src->sum_ns);
	dst->min_ns = ESTATS_LOAD(&src->min_ns);
	dst->max_ns = ESTATS_LOAD(&src->max_ns);
	if (n == 0) {
		dst->sum_ns = dst->min_ns = dst->max_ns = 0;
		return;
	}
	/* A torn read can pair new buckets with an old min or max: keep them in the buckets' range. */
	if (dst->min_ns <= estats_hist_lower(lo) && lo != 0)
		dst->min_ns = estats_hist_lower(lo) + 1u;
	if (dst->min_ns > estats_hist_upper(lo))
		dst->min_ns = estats_hist_upper(lo);
	if (dst->max_ns <= estats_hist_lower(hi) && hi != 0)
		dst->max_ns = estats_hist_lower(hi) + 1u;
	if (dst->max_ns > estats_hist_upper(hi))
		dst->max_ns = estats_hist_upper(hi);
}

void
estats_hist_merge(struct estats_hist *dst, const struct estats_hist *src)
{
	unsigned i;

	if (src->count == 0)
		return;
	for (i = 0; i < ESTATS_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	if (dst->count == 0 || src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (dst->count == 0 || src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
}

uint64_t
estats_hist_quantile(const struct estats_hist *h, double q)
{
	uint64_t rank, cum = 0, lo, hi, mid;
	unsigned i;

	if (h->count == 0)
		return 0;
	if (q >= 1.0)
		return h->max_ns;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank == 0)
		rank = 1;
	for (i = 0; i < ESTATS_HIST_BUCKETS; i++) {
		cum += h->b[i];
		if (cum >= rank)
			break;
	}
	if (i == ESTATS_HIST_BUCKETS)
		return h->max_ns;
	lo = estats_hist_lower(i);
	hi = estats_hist_upper(i);
	mid = hi == ESTATS_HIST_INF ? h->max_ns : lo + (hi - lo) / 2u;
	if (mid < h->min_ns)
		mid = h->min_ns;
	if (mid > h->max_ns)
		mid = h->max_ns;
	return mid;
}

void
estats_hist_percentiles(const struct estats_hist *h, struct estats_pct *out)
{
	out->count = h->count;
	out->p50 = estats_hist_quantile(h, 0.50);
	out->p90 = estats_hist_quantile(h, 0.90);
	out->p99 = estats_hist_quantile(h, 0.99);
	out->p999 = estats_hist_quantile(h, 0.999);
	out->max = h->count ? h->max_ns : 0;
	out->mean = h->count ? h->sum_ns / h->count : 0;
}
