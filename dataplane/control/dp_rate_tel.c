/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rate control, what telemetry reads: a tenant's shaper figures summed over
 * the lcores' shapers, a connection's pacing and queues, its DCQCN state.
 * dp_rate.h explains the stages and who owns what.
 */
#include <string.h>

#include <rte_cycles.h>

#include "dp_rate_int.h"

/* Tenant slot @slot in the shapers of @r (both stages, as one); *cp_queued: what waits in stage 2. */
static void
tenant_stats_lcore(const struct dp_rate_lcore *r, uint32_t slot, uint64_t now, struct shaper_tenant_stats *st,
		   uint64_t *cp_queued)
{
	struct shaper_tenant_stats b;

	shaper_tenant_stats(r->sh, slot, now, st);
	*cp_queued = 0;
	if (!r->tenants[slot].cc)
		return;
	/* With DCQCN the bucket, its rate and what left are stage 2's; queues add up. */
	shaper_tenant_stats(r->sh2, slot, now, &b);
	st->rate_bps = b.rate_bps;
	st->burst_bytes = b.burst_bytes;
	st->achieved_bps = b.achieved_bps;
	st->tokens = b.tokens;
	*cp_queued = b.queued_bytes;
	st->queued_bytes += b.queued_bytes;
	st->full |= b.full;
	st->deq_pkts = b.deq_pkts;
	st->deq_bytes = b.deq_bytes;
	st->charged_bytes = b.charged_bytes;
	for (int d = 0; d < SHAPER_DROP_MAX; d++) {
		st->drop_pkts[d] += b.drop_pkts[d];
		st->drop_msgs[d] += b.drop_msgs[d];
	}
}

void
dp_rate_tenant_stats(const struct ovl *o, uint32_t t, struct shaper_tenant_stats *st, uint64_t *cp_queued)
{
	uint32_t slot = o->tenants[t].slot;
	uint64_t now = rte_rdtsc();

	memset(st, 0, sizeof(*st));
	*cp_queued = 0;
	/*
	 * A tenant's frames may be shaped on every lcore: the figures of all
	 * shapers add up, but for the configuration and the bucket (one, shared
	 * when there are several lcores).
	 */
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const struct dp_rate_lcore *r = &dp.lcores[l].rate;
		struct shaper_tenant_stats a;
		uint64_t cq;

		if (!r->sh)
			return;
		tenant_stats_lcore(r, slot, now, &a, &cq);
		*cp_queued += cq;
		if (l == 0) {
			*st = a;
			continue;
		}
		st->achieved_bps += a.achieved_bps;
		st->queued_bytes += a.queued_bytes;
		st->full |= a.full;
		st->dropping |= a.dropping;
		st->backpressure_ns += a.backpressure_ns;
		st->watchdog_trips += a.watchdog_trips;
		st->enq_pkts += a.enq_pkts;
		st->enq_bytes += a.enq_bytes;
		st->deq_pkts += a.deq_pkts;
		st->deq_bytes += a.deq_bytes;
		st->cut_pkts += a.cut_pkts;
		st->cut_bytes += a.cut_bytes;
		st->charged_bytes += a.charged_bytes;
		st->flush_pkts += a.flush_pkts;
		for (int d = 0; d < SHAPER_DROP_MAX; d++) {
			st->drop_pkts[d] += a.drop_pkts[d];
			st->drop_msgs[d] += a.drop_msgs[d];
		}
	}
}

/* The lcore that runs connection @c's reaction point: its egress half's owner. */
static const struct dp_rate_lcore *
conn_rate_lcore(const struct ovl_conn *c)
{
	return &dp.lcores[dp_half_owner(&dp_conn_state(c->state)->egress, dp.ports[c->l_port].lcore_idx)].rate;
}

bool
dp_rate_conn_stats(const struct ovl *o, uint32_t ci, struct shaper_conn_stats *st)
{
	const struct ovl_conn *c = &o->conns[ci];
	struct shaper_conn_stats a, b;

	memset(st, 0, sizeof(*st));
	if (!dp.lcores[0].rate.sh || c->state >= dp.conn_cap)
		return false;
	/* Pacing as its owner applies it; what waits, in every lcore's shapers. */
	shaper_conn_stats(conn_rate_lcore(c)->sh, c->state, st);
	st->queued_bytes = st->queued_items = 0;
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		shaper_conn_stats(dp.lcores[l].rate.sh, c->state, &a);
		shaper_conn_stats(dp.lcores[l].rate.sh2, c->state, &b);
		st->queued_bytes += a.queued_bytes + b.queued_bytes;
		st->queued_items += a.queued_items + b.queued_items;
	}
	return true;
}

bool
dp_cc_conn_snapshot(const struct ovl *o, uint32_t ci, struct dp_cc_snapshot *snap)
{
	const struct ovl_conn *c = &o->conns[ci];
	const struct dp_rate_lcore *r = conn_rate_lcore(c);
	const struct dp_tenant_rate *tr;
	const struct dp_cc_state *cs;
	struct dcqcn_rp rp;

	memset(snap, 0, sizeof(*snap));
	if (!r->sh || c->state >= dp.conn_cap || !dp.cc_chunks[c->state >> DP_STATE_CHUNK_SHIFT])
		return false;
	tr = &r->tenants[o->tenants[c->tenant].slot];
	if (!tr->cc)
		return false;
	cs = dp_cc_state(c->state);
	/* A copy, brought to now: the lcore evaluates its timers lazily. */
	rp = cs->rp.rp;
	if (cs->rp.ready)
		dcqcn_rp_advance(&rp, &tr->prof, tsc_ns(rte_rdtsc()));
	else
		dcqcn_rp_init(&rp, &tr->prof);
	snap->limited = rp.active;
	snap->rate_bps = dcqcn_rp_rate(&rp);
	snap->target_bps = dcqcn_rp_target(&rp);
	snap->alpha = dcqcn_rp_alpha(&rp);
	snap->stage = dcqcn_rp_stage(&rp, &tr->prof);
	snap->ctr = cs->rp.ctr;
	snap->ctr.np_ecn_marked_roce_packets += cs->np.ctr.np_ecn_marked_roce_packets;
	snap->ctr.np_cnp_sent += cs->np.ctr.np_cnp_sent;
	return true;
}
