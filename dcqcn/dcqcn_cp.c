/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion point: the RED-like marking curve of the DCQCN paper, applied
 * to a queue's depth when a packet leaves it.
 */
#include "dcqcn.h"

#define PROB_ONE (UINT64_C(1) << 32)

uint64_t
dcqcn_cp_mark_prob_q32(const struct dcqcn_profile *prof, uint64_t queue_bytes)
{
	if (queue_bytes <= prof->kmin)
		return 0;
	if (queue_bytes > prof->kmax)
		return PROB_ONE;
	/*
	 * Here kmin < queue_bytes <= kmax, so the span is not zero.  The
	 * product stays below 2^63: pmax_q32 <= 2^32 and kmax < 2^31.
	 */
	return prof->pmax_q32 * (queue_bytes - prof->kmin) / (prof->kmax - prof->kmin);
}

double
dcqcn_cp_mark_prob(const struct dcqcn_profile *prof, uint64_t queue_bytes)
{
	return (double)dcqcn_cp_mark_prob_q32(prof, queue_bytes) / (double)PROB_ONE;
}

uint8_t
dcqcn_cp_mark(const struct dcqcn_profile *prof, uint8_t ecn, uint64_t queue_bytes,
	      uint32_t rnd, struct dcqcn_counters *ctr)
{
	ecn &= 3;
	/* Not-ECT traffic cannot carry a mark, and CE is already marked. */
	if (ecn == DCQCN_ECN_NOT_ECT || ecn == DCQCN_ECN_CE)
		return ecn;
	if ((uint64_t)rnd >= dcqcn_cp_mark_prob_q32(prof, queue_bytes))
		return ecn;
	if (ctr != NULL)
		ctr->cp_ecn_marked++;
	return DCQCN_ECN_CE;
}
