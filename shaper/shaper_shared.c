/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tenant's admission bucket shared by several shapers (shaper.h, struct
 * shaper_shared): its set-up and its rate changes.  Charges and the
 * sharers' fairness are in shaper_sched.h and shaper_state.h, on the path.
 */
#include <string.h>

#include "shaper_state.h"

/*
 * A shared admission bucket takes rate @cpb (0: none): the first shaper to
 * configure it rescales its time as ts_rescale() does (a new rate starts
 * full), the others find it done.
 */
void
shared_config(struct shaper_shared *s, shaper_u128 tnow, uint64_t cpb, uint64_t burst)
{
	uint64_t old, nv;

	while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE) != 0)
		;
	if (s->cpb != cpb && cpb != 0) {
		old = __atomic_load_n(&s->ts, __ATOMIC_RELAXED);
		do
			nv = shared_from_fp(s, s->cpb == 0 ? tnow - (shaper_u128)burst * cpb :
					    ts_rescale(shared_to_fp(s, old), tnow, s->cpb, cpb, burst));
		while (!__atomic_compare_exchange_n(&s->ts, &old, nv, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	}
	s->cpb = cpb;
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

void
shaper_shared_init(struct shaper_shared *s, uint64_t now, uint64_t hz)
{
	memset(s, 0, sizeof(*s));
	s->base = now;
	s->late = hz / 20000;	/* 50 us: lcores look every microsecond or so */
}
