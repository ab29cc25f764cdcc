/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A log-linear latency histogram of fixed size, for RDMA Estats.
 *
 * Values are nanoseconds.  They are counted in units of 64 ns; below 16 units
 * (1024 ns) each unit has its own bucket, above it every power of two is split
 * into 16 equal sub-buckets (the HdrHistogram layout with 4 significant bits).
 * A bucket's width is therefore at most 1/16 of its lower bound: reporting a
 * bucket's midpoint is within 3.2 % of any value in it from 1 us up, and its
 * upper bound within 6.3 %.  The last of the 400 buckets holds everything
 * above 16.6 s; 10 s is still inside the log-linear range.
 *
 * Bucket i holds the values v with lower(i) < v <= upper(i) (0 goes to bucket
 * 0), the convention of Prometheus' "le" label, so that any subset of the
 * upper bounds gives exact cumulative counts.
 *
 * Concurrency.  A histogram has one writer (the lcore that records into it)
 * and any number of readers on other threads.  The writer updates each field
 * with a relaxed atomic store (a plain mov on x86-64, no lock prefix); readers
 * load each field with a relaxed atomic load.  A reader can thus see a sample
 * counted in its bucket and not yet in the sum: estats_hist_snapshot() takes
 * the count from the buckets so that a snapshot is self-consistent in what
 * Prometheus checks (the +Inf bucket equals _count), and tolerates the rest.
 */
#ifndef ESTATS_HIST_H
#define ESTATS_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ESTATS_HIST_UNIT_SHIFT 6u       /* a unit is 64 ns */
#define ESTATS_HIST_SUB_BITS 4u         /* 16 sub-buckets per power of two */
#define ESTATS_HIST_SUB (1u << ESTATS_HIST_SUB_BITS)
#define ESTATS_HIST_BUCKETS 400u
/* The upper bound of the last bucket: no limit. */
#define ESTATS_HIST_INF UINT64_MAX

/* Single-writer field updates and their torn-tolerant reads. */
#define ESTATS_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define ESTATS_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ESTATS_INC(p) ESTATS_STORE((p), ESTATS_LOAD(p) + 1u)

struct estats_hist {
	uint64_t count;                  /* samples recorded */
	uint64_t sum_ns;                 /* their sum */
	uint64_t min_ns;                 /* meaningful when count > 0 */
	uint64_t max_ns;
	uint64_t b[ESTATS_HIST_BUCKETS]; /* samples per bucket */
};

/* Percentiles read from the buckets, in nanoseconds (all 0 when empty). */
struct estats_pct {
	uint64_t count;
	uint64_t p50, p90, p99, p999, max;
	uint64_t mean;
};

/* The bucket of value @ns: a handful of instructions, no branch on the data beyond one. */
static inline unsigned
estats_hist_index(uint64_t ns)
{
	uint64_t v = (ns - (ns != 0)) >> ESTATS_HIST_UNIT_SHIFT;
	unsigned e, i;

	if (v < ESTATS_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	i = (e - ESTATS_HIST_SUB_BITS + 1u) * ESTATS_HIST_SUB +
		(unsigned)((v >> (e - ESTATS_HIST_SUB_BITS)) & (ESTATS_HIST_SUB - 1u));
	return i < ESTATS_HIST_BUCKETS ? i : ESTATS_HIST_BUCKETS - 1u;
}

/*
 * Record one sample of @ns into @h.  Only the histogram's one writer may
 * call it; it costs one bucket and one header line.
 */
static inline void
estats_hist_record(struct estats_hist *h, uint64_t ns)
{
	uint64_t n = ESTATS_LOAD(&h->count);

	ESTATS_INC(&h->b[estats_hist_index(ns)]);
	ESTATS_STORE(&h->sum_ns, ESTATS_LOAD(&h->sum_ns) + ns);
	if (n == 0 || ns < ESTATS_LOAD(&h->min_ns))
		ESTATS_STORE(&h->min_ns, ns);
	if (ns > ESTATS_LOAD(&h->max_ns))
		ESTATS_STORE(&h->max_ns, ns);
	ESTATS_STORE(&h->count, n + 1u);
}

/* The exclusive lower and inclusive upper bound of bucket @i, in ns (upper of the last: ESTATS_HIST_INF). */
uint64_t estats_hist_lower(unsigned i);
uint64_t estats_hist_upper(unsigned i);

/* Empty @h. */
void estats_hist_reset(struct estats_hist *h);

/*
 * Copy @src, which its writer may be updating, into @dst with relaxed loads.
 * dst->count is the sum of the copied buckets, and min and max are clamped
 * to the buckets that hold samples, so the copy is self-consistent.
 */
void estats_hist_snapshot(struct estats_hist *dst, const struct estats_hist *src);

/* Add @src into @dst (both quiescent, or @src a snapshot): the histogram of both sample sets. */
void estats_hist_merge(struct estats_hist *dst, const struct estats_hist *src);

/*
 * The value at quantile @q (0 < q <= 1) of a quiescent histogram: the
 * midpoint of the bucket that holds the ceil(q * count)-th smallest sample,
 * clamped to [min, max].  0 for an empty histogram.
 */
uint64_t estats_hist_quantile(const struct estats_hist *h, double q);

/* p50, p90, p99, p99.9, max and mean of a quiescent histogram. */
void estats_hist_percentiles(const struct estats_hist *h, struct estats_pct *out);

#ifdef __cplusplus
}
#endif

#endif /* ESTATS_HIST_H */
