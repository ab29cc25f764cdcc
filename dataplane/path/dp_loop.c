/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The forwarding loop of one lcore: for each of its rx queues, an rx burst
 * through the stages of dp_path.h, then the buffers that hold a burst sent;
 * between polls, the NAKs and the frames the shapers release; on a 100 us
 * TSC deadline, the rest of the tx buffers.  See DESIGN.md "Packet paths"
 * for what each direction does.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dp_hold.h"
#include "dp_loop.h"
#include "dp_s1_classify.h"
#include "dp_s2_lookup.h"
#include "dp_s4_rewrite.h"
#include "dp_s5_shape.h"
#include "dp_s6_tx.h"
#include "dp_rate.h"
#include "dp_estats.h"

/* The rate changes of a newer configuration, taken between bursts. */
static inline void
dp_rate_check_sync(struct dp_lcore *lc)
{
	if (unlikely(lc->ovl->seq != lc->rate.synced_seq))
		dp_rate_sync(lc);
}

/* Stage 1 to 4 over @b, for dp_path_run(). */
static inline void
dp_path_stages(struct dp_lcore *lc, struct dp_burst *b)
{
	dp_s1_classify(lc, b);
	dp_s2_lookup(lc, b);
	dp_s4_rewrite(lc, b);   /* stage 3 inside, frame by frame */
}

/*
 * One rx burst of port @port through every stage.  With @timed (a constant
 * at each call site, so the untimed copy carries no clock reads) the TSC is
 * read between stages and the profile of the lcore (--stage-cycles) gains
 * the differences.
 */
static __rte_always_inline void
burst_stages(struct dp_lcore *lc, struct dp_burst *b, struct dp_txq *tq, uint64_t *t, const bool timed)
{
	dp_s1_classify(lc, b);
	if (timed)
		t[DP_STAGE_CLASSIFY + 1] = rte_rdtsc();
	dp_s2_lookup(lc, b);
	if (timed)
		t[DP_STAGE_LOOKUP + 1] = rte_rdtsc();
	dp_s4_rewrite(lc, b);  /* and stage 3, frame by frame */
	if (timed)
		t[DP_STAGE_REWRITE + 1] = rte_rdtsc();
	dp_s5_shape(lc, b, tq);
	if (timed)
		t[DP_STAGE_SHAPE + 1] = rte_rdtsc();
	dp_s6_tx(lc, tq);
}

static __rte_always_inline void
burst_run(struct dp_lcore *lc, struct dp_rxq *rxq, struct dp_txq *tq, uint64_t now, const bool timed)
{
	const uint16_t port = rxq->port;
	struct rte_mbuf *pkts[DP_BURST];
	struct dp_burst b;
	uint64_t t[DP_STAGE_MAX + 1], bytes = 0;
	uint16_t nb;

	if (timed)
		t[0] = rte_rdtsc();
	nb = rte_eth_rx_burst(dp.ports[port].port_id, rxq->queue, pkts, DP_BURST);
	if (nb == 0)
		return;
	/* Estats times a burst after its rx: a stall before it must not shorten a sample. */
	if (dp_estats.enabled)
		lc->rx_tsc = rte_rdtsc();
	lc->last_rx_tsc = now;
	dp.traffic_seen = true;
	b.n = nb;
	b.in_port = port;
	b.uplink = dp.ports[port].uplink;
	b.tenant = b.uplink ? 0 : lc->ovl->ports[port].tenant;
	for (uint16_t k = 0; k < nb; k++) {
		b.p[k].m = pkts[k];
		bytes += pkts[k]->pkt_len;
	}
	lc->stats.rx_pkts[port] += nb;
	rxq->pkts += nb;
	lc->stats.rx_bytes[port] += bytes;
	if (timed)
		t[DP_STAGE_RX + 1] = rte_rdtsc();
	burst_stages(lc, &b, tq, t, timed);
	if (timed) {
		t[DP_STAGE_TX + 1] = rte_rdtsc();
		for (int s = 0; s < DP_STAGE_MAX; s++)
			lc->prof.cycles[s] += t[s + 1] - t[s];
		lc->prof.pkts += nb;
		lc->prof.bursts++;
	}
}

/*
 * What the hold kept for destinations found since (dp_learn.h): each one's
 * frames as a burst of their port, before any frame polled after them.
 */
static void
hold_release(struct dp_lcore *lc, struct dp_txq *tq)
{
	struct rte_mbuf *pkts[DP_HOLD_PER_CONN];
	struct dp_burst b;
	uint16_t n, port;

	RTE_BUILD_BUG_ON(DP_HOLD_PER_CONN > DP_BURST);
	dp_hold_ask_again(lc);
	while ((n = dp_hold_ready(lc, pkts, &port)) != 0) {
		b.n = n;
		b.in_port = port;
		b.uplink = dp.ports[port].uplink;
		b.tenant = b.uplink ? 0 : lc->ovl->ports[port].tenant;
		for (uint16_t k = 0; k < n; k++)
			b.p[k].m = pkts[k];
		burst_stages(lc, &b, tq, NULL, false);
	}
}

int
dp_lcore_main(void *arg)
{
	struct dp_lcore *lc = arg;
	struct dp_txq tq[DP_MAX_PORTS];
	const uint64_t drain_tsc = (rte_get_tsc_hz() + 9999) / 10000; /* 100 us */
	uint64_t prev_tsc = rte_rdtsc();
	const bool is_main = lc->lcore_id == rte_get_main_lcore();
	const uint32_t prof_every = dp.prof_every;
	uint32_t prof_tick = 0;

	memset(tq, 0, sizeof(tq));
	if (dp.qsv) {
		rte_rcu_qsbr_thread_register(dp.qsv, lc->idx);
		rte_rcu_qsbr_thread_online(dp.qsv, lc->idx);
	}
	while (!dp.quit) {
		uint64_t now = rte_rdtsc();

		/* One overlay for the whole iteration; see the quiescent report below. */
		lc->ovl = __atomic_load_n(&dp.ovl, __ATOMIC_ACQUIRE);
		dp_rate_check_sync(lc);
		if (unlikely(now - prev_tsc > drain_tsc)) {
			dp_tx_flush_all(lc, tq);
			prev_tsc = now;
			if (unlikely(lc->rate.n_unshape))
				dp_rate_unshape_check(lc, now);
			if (is_main && dp.housekeep)
				dp.housekeep();
		}
		lc->now = now;
		if (unlikely(lc->nak_ring && !rte_ring_empty(lc->nak_ring)))
			dp_tx_naks(lc, tq);
		/* The shapers hold nothing while no tenant is shaped and no removed connection drains. */
		if (lc->rate.n_shaped | lc->rate.n_draining)
			dp_tx_rate(lc, tq, now);
		if (unlikely(lc->hold.n_conns))
			hold_release(lc, tq);
		for (uint16_t i = 0; i < lc->n_rx; i++) {
			struct dp_rxq *rxq = &lc->rx[i];
			uint16_t p = rxq->port;

			/* Backpressure: a tenant whose queues are full is not polled. */
			if (!dp.ports[p].uplink && lc->rate.sh &&
			    dp_rate_port_blocked(lc, lc->ovl->tenants[lc->ovl->ports[p].tenant].slot, now)) {
				lc->stats.bp_skips++;
				continue;
			}
			if (unlikely(prof_every) && ++prof_tick >= prof_every) {
				prof_tick = 0;
				burst_run(lc, rxq, tq, now, true);
			} else {
				burst_run(lc, rxq, tq, now, false);
			}
		}
		if (unlikely(lc->rate.n_cnp))
			dp_tx_rate(lc, tq, now);
		if (dp.qsv)
			rte_rcu_qsbr_quiescent(dp.qsv, lc->idx);
	}
	/* Draining: what the shapers release within 100 ms still leaves; dp_rate_fini() counts the rest. */
	for (uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 10; !dp_rate_idle(lc) && rte_rdtsc() < end;)
		dp_tx_rate(lc, tq, rte_rdtsc());
	dp_tx_flush_all(lc, tq);
	dp_hold_free(lc);
	if (dp.qsv) {
		rte_rcu_qsbr_thread_offline(dp.qsv, lc->idx);
		rte_rcu_qsbr_thread_unregister(dp.qsv, lc->idx);
	}
	return 0;
}

void
dp_path_run(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf **pkts, uint16_t n, enum dp_drop *why,
	    uint16_t *out)
{
	struct dp_burst b;

	b.n = n;
	b.in_port = in_port;
	/* The overlay's port table: callers without ports of their own (the fuzzer) have only that. */
	b.uplink = lc->ovl->ports[in_port].uplink;
	b.tenant = b.uplink ? 0 : lc->ovl->ports[in_port].tenant;
	for (uint16_t k = 0; k < n; k++)
		b.p[k].m = pkts[k];
	dp_path_stages(lc, &b);
	for (uint16_t k = 0; k < n; k++) {
		why[k] = (enum dp_drop)b.p[k].drop;
		out[k] = b.p[k].out;
	}
}
