/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reaction point: the DCQCN rate machine, evaluated lazily.
 *
 * Rates are bits per second.  Rc is the current rate, Rt the target rate.
 * Alpha has DCQCN_ALPHA_SHIFT fractional bits; the NVIDIA formulas work on a
 * 10-bit fraction, and the extra bits only keep small alphas from sticking.
 *
 * Cut (both models), at time t:
 *   Rt = Rc            if clamp_tgt_rate, or an increase came from the byte
 *                      counter since the last cut, or one came from the timer
 *                      and clamp_tgt_rate_after_time_inc is set;
 *   dec = min(Rc * alpha >> rpg_gd, Rc * (100 - rpg_min_dec_fac) / 100)
 *                      (alpha in 1/1024, so rpg_gd = 11 is Rc * alpha / 2);
 *   Rc = max(Rc - dec, rpg_min_rate);
 *   the stage counters, the byte counter and the timer restart at t.
 *
 * Increase, on a timer expiry (every rpg_time_reset since the last cut) or a
 * byte-counter expiry (every rpg_byte_reset bytes sent), with T and BC the
 * expiries of each kind since the last cut, counted before this one, and
 * F = rpg_threshold:
 *   FR if max(T, BC) < F:   Rt unchanged;
 *   HI if min(T, BC) >= F:  Rt += i * rpg_hai_rate, i = min(T, BC) - F + 1;
 *   AI otherwise:           Rt += rpg_ai_rate;
 *   then Rt = min(Rt, max rate) and Rc = ceil((Rt + Rc) / 2).
 * The rounding up lets Rc reach Rt exactly.
 *
 * NVIDIA model.  The first CNP of a flow allocates a rate limiter: alpha =
 * initial_alpha_value, Rc = Rt = rate_to_set_on_first_cnp if that is set
 * (and no cut), else the cut applies at once.  Alpha is then updated every
 * dce_tcp_rtt, alpha = alpha * g / 1024 + (CNP in the period ? (1024 - g) : 0)
 * with g = dce_tcp_g.  A CNP cuts at once if no cut happened in the last
 * rate_reduce_monitor_period; otherwise one cut happens when that period
 * ends.  When Rc reaches rpg_max_rate (the line rate when 0) the limiter is
 * released: Rc is the line rate again and nothing runs until the next CNP.
 *
 * Paper model (Zhu et al., SIGCOMM 2015).  Each CNP cuts (subject to the
 * same monitor period, 0 in the paper profile) and then updates alpha =
 * (1 - g) alpha + g; after K = dce_tcp_rtt without a CNP alpha decays,
 * alpha = (1 - g) alpha, again every K.  Alpha starts at initial_alpha_value
 * with the flow and is never reset.  The machine sleeps once Rc = Rt = the
 * maximum rate and alpha has decayed to zero, where no event changes anything.
 */
#include <string.h>

#include "dcqcn.h"

enum rp_source {
	RP_BY_TIMER,
	RP_BY_BYTES,
};

static inline uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* One alpha step: alpha * g / 1024, plus (1024 - g) / 1024 on a CNP. */
static inline uint32_t
alpha_step(uint32_t alpha, uint32_t g_keep, bool cnp)
{
	uint64_t v = (uint64_t)alpha * g_keep;

	if (cnp)
		v += (uint64_t)(1024 - g_keep) << DCQCN_ALPHA_SHIFT;
	return (uint32_t)(v >> 10);
}

/* Rc * alpha >> (gd_shift + 10) without overflow for rates below 2^44. */
static inline uint64_t
alpha_cut(uint64_t rc, uint32_t alpha, uint32_t gd_shift)
{
	uint64_t hi = rc >> DCQCN_ALPHA_SHIFT;
	uint64_t lo = rc & (DCQCN_ALPHA_ONE - 1);
	uint64_t prod = hi * alpha + ((lo * alpha) >> DCQCN_ALPHA_SHIFT);

	return prod >> (gd_shift - 10);
}

void
dcqcn_rp_init(struct dcqcn_rp *rp, const struct dcqcn_profile *prof)
{
	memset(rp, 0, sizeof(*rp));
	rp->rc_bps = prof->line_bps;
	rp->rt_bps = prof->line_bps;
	rp->next_alpha_ns = DCQCN_NEVER;
	rp->next_timer_ns = DCQCN_NEVER;
	/* The paper's alpha belongs to the flow; NVIDIA's to the rate limiter. */
	rp->alpha = prof->model == DCQCN_MODEL_PAPER ? prof->alpha_init : 0;
}

enum dcqcn_stage
dcqcn_rp_stage(const struct dcqcn_rp *rp, const struct dcqcn_profile *prof)
{
	uint32_t hi = rp->t_stage > rp->bc_stage ? rp->t_stage : rp->bc_stage;
	uint32_t lo = rp->t_stage < rp->bc_stage ? rp->t_stage : rp->bc_stage;

	if (hi < prof->threshold)
		return DCQCN_STAGE_FR;
	if (lo >= prof->threshold)
		return DCQCN_STAGE_HI;
	return DCQCN_STAGE_AI;
}

const char *
dcqcn_stage_name(enum dcqcn_stage s)
{
	switch (s) {
	case DCQCN_STAGE_FR:
		return "FR";
	case DCQCN_STAGE_AI:
		return "AI";
	case DCQCN_STAGE_HI:
		return "HI";
	}
	return "?";
}

/* Stop the machine: the rate is the line rate and no timer runs. */
static void
rp_release(struct dcqcn_rp *rp, const struct dcqcn_profile *prof)
{
	rp->active = 0;
	rp->cut_pending = 0;
	rp->alpha_cnp = 0;
	rp->next_alpha_ns = DCQCN_NEVER;
	rp->next_timer_ns = DCQCN_NEVER;
	rp->t_stage = 0;
	rp->bc_stage = 0;
	rp->bytes = 0;
	if (prof->model == DCQCN_MODEL_NVIDIA) {
		/* The rate limiter is freed, and its alpha with it. */
		rp->rc_bps = prof->line_bps;
		rp->rt_bps = prof->line_bps;
		rp->alpha = 0;
	}
}

/*
 * The paper machine has nothing left to do once it runs at the maximum rate
 * with alpha at zero: increases cannot raise the rate and decay cannot lower
 * alpha.  Sleeping there keeps a quiet flow from costing timer steps.
 */
static void
rp_maybe_sleep(struct dcqcn_rp *rp, const struct dcqcn_profile *prof)
{
	if (prof->model == DCQCN_MODEL_PAPER && rp->alpha == 0 && !rp->cut_pending &&
	    rp->rc_bps >= prof->max_bps && rp->rt_bps >= prof->max_bps)
		rp_release(rp, prof);
}

static void
rp_cut(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, uint64_t t)
{
	uint64_t rc = rp->rc_bps, dec, bound;

	if (prof->clamp_tgt_rate || rp->bc_stage > 0 ||
	    (prof->clamp_after_time_inc && rp->t_stage > 0))
		rp->rt_bps = rc;
	dec = alpha_cut(rc, rp->alpha, prof->gd_shift);
	bound = rc * (100 - prof->min_dec_fac) / 100;
	dec = min_u64(dec, bound);
	rc -= dec;
	if (rc < prof->min_bps)
		rc = prof->min_bps;
	rp->rc_bps = rc;
	if (rp->rt_bps < rc)
		rp->rt_bps = rc;
	rp->t_stage = 0;
	rp->bc_stage = 0;
	rp->bytes = 0;
	rp->next_timer_ns = t + prof->time_reset_ns;
	rp->last_cut_ns = t;
	rp->cut_pending = 0;
}

static void
rp_increase(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, enum rp_source src)
{
	uint64_t rt = rp->rt_bps;

	switch (dcqcn_rp_stage(rp, prof)) {
	case DCQCN_STAGE_FR:
		break;
	case DCQCN_STAGE_AI:
		rt += prof->ai_bps;
		break;
	case DCQCN_STAGE_HI: {
		uint32_t lo = rp->t_stage < rp->bc_stage ? rp->t_stage : rp->bc_stage;

		rt += (uint64_t)(lo - prof->threshold + 1) * prof->hai_bps;
		break;
	}
	}
	if (rt > prof->max_bps)
		rt = prof->max_bps;
	if (rt < rp->rc_bps)
		rt = rp->rc_bps;
	rp->rt_bps = rt;
	rp->rc_bps = (rt + rp->rc_bps + 1) / 2;
	if (src == RP_BY_TIMER) {
		if (rp->t_stage < UINT16_MAX)
			rp->t_stage++;
	} else {
		if (rp->bc_stage < UINT16_MAX)
			rp->bc_stage++;
	}
	if (prof->model == DCQCN_MODEL_NVIDIA && rp->rc_bps >= prof->max_bps)
		rp_release(rp, prof);
	else
		rp_maybe_sleep(rp, prof);
}

/* The alpha event due at rp->next_alpha_ns. */
static void
rp_alpha_event(struct dcqcn_rp *rp, const struct dcqcn_profile *prof)
{
	uint64_t period = prof->alpha_period_ns;

	if (prof->model == DCQCN_MODEL_NVIDIA) {
		rp->alpha = alpha_step(rp->alpha, prof->g_keep, rp->alpha_cnp != 0);
		rp->alpha_cnp = 0;
		/*
		 * At zero, updates change nothing until a CNP arrives: stop
		 * them, and let the CNP restart them on the same grid.
		 */
		rp->next_alpha_ns = rp->alpha == 0 ? DCQCN_NEVER : rp->next_alpha_ns + period;
		return;
	}
	rp->alpha = alpha_step(rp->alpha, prof->g_keep, false);
	/* The paper's decay timer stops at zero; the next CNP restarts it. */
	rp->next_alpha_ns = rp->alpha == 0 ? DCQCN_NEVER : rp->next_alpha_ns + period;
	rp_maybe_sleep(rp, prof);
}

uint64_t
dcqcn_rp_next_event(const struct dcqcn_rp *rp, const struct dcqcn_profile *prof)
{
	uint64_t t;

	if (!rp->active)
		return DCQCN_NEVER;
	t = min_u64(rp->next_alpha_ns, rp->next_timer_ns);
	if (rp->cut_pending)
		t = min_u64(t, rp->last_cut_ns + prof->monitor_ns);
	return t;
}

void
dcqcn_rp_advance(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, uint64_t now)
{
	if (now < rp->clock_ns)
		return;
	while (rp->active) {
		uint64_t ta = rp->next_alpha_ns;
		uint64_t tc = rp->cut_pending ? rp->last_cut_ns + prof->monitor_ns : DCQCN_NEVER;
		uint64_t tt = rp->next_timer_ns;
		uint64_t t = min_u64(ta, min_u64(tc, tt));

		if (t > now)
			break;
		/* At equal times: alpha first, then the cut, then the increase. */
		if (ta == t)
			rp_alpha_event(rp, prof);
		else if (tc == t)
			rp_cut(rp, prof, t);
		else {
			rp->next_timer_ns += prof->time_reset_ns;
			rp_increase(rp, prof, RP_BY_TIMER);
		}
	}
	rp->clock_ns = now;
}

void
dcqcn_rp_on_cnp(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, uint64_t now,
		struct dcqcn_counters *ctr)
{
	bool paper = prof->model == DCQCN_MODEL_PAPER;

	if (!prof->rp_enable || now < rp->clock_ns) {
		if (ctr != NULL)
			ctr->rp_cnp_ignored++;
		return;
	}
	dcqcn_rp_advance(rp, prof, now);
	if (ctr != NULL)
		ctr->rp_cnp_handled++;

	if (!rp->active) {
		/* The first CNP of the flow, or the first since the release. */
		rp->active = 1;
		rp->t_stage = 0;
		rp->bc_stage = 0;
		rp->bytes = 0;
		rp->cut_pending = 0;
		rp->alpha_cnp = 0;
		rp->next_timer_ns = now + prof->time_reset_ns;
		rp->next_alpha_ns = DCQCN_NEVER;
		if (!paper) {
			rp->alpha = prof->alpha_init;
			rp->alpha_grid_ns = now;
			rp->next_alpha_ns = now + prof->alpha_period_ns;
		}
		if (prof->first_cnp_bps != 0) {
			/* The rate set on the first CNP stands in for the cut. */
			rp->rc_bps = prof->first_cnp_bps;
			rp->rt_bps = prof->first_cnp_bps;
			rp->last_cut_ns = now;
		} else {
			rp_cut(rp, prof, now);
		}
	} else {
		if (!paper) {
			rp->alpha_cnp = 1;
			/*
			 * Updates stopped at alpha zero resume with the first
			 * tick after @now: a tick at @now ran before this CNP.
			 */
			if (rp->next_alpha_ns == DCQCN_NEVER)
				rp->next_alpha_ns = rp->alpha_grid_ns +
					((now - rp->alpha_grid_ns) / prof->alpha_period_ns + 1) *
					prof->alpha_period_ns;
		}
		if (now - rp->last_cut_ns >= prof->monitor_ns)
			rp_cut(rp, prof, now);
		else
			rp->cut_pending = 1;
	}
	if (paper) {
		rp->alpha = alpha_step(rp->alpha, prof->g_keep, true);
		rp->next_alpha_ns = now + prof->alpha_period_ns;
	}
}

void
dcqcn_rp_on_tx(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, uint32_t bytes,
	       uint64_t now)
{
	dcqcn_rp_advance(rp, prof, now);
	if (!rp->active || prof->byte_reset == 0)
		return;
	rp->bytes += bytes;
	while (rp->active && rp->bytes >= prof->byte_reset) {
		rp->bytes -= prof->byte_reset;
		rp_increase(rp, prof, RP_BY_BYTES);
	}
}
