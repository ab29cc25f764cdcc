/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The forwarding loop of one lcore: rx burst, each frame through its
 * direction's processing, then the shaper or the tx buffers, with a drain on
 * a TSC deadline.  See DESIGN.md "Packet paths" for what each direction does.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_prefetch.h>

#include "dp_path.h"
#include "dp_rate.h"

/*
 * A dropped frame is charged to the tenant whose port it came from, or on
 * the fabric side to the tenant of the connection it was found to belong to.
 */
static inline void
count_drop(struct dp_lcore *lc, uint16_t in_port, enum dp_drop why)
{
	lc->stats.drops[why]++;
	if (!dp.ports[in_port].uplink)
		lc->tenant_stats[lc->ovl->tenants[lc->ovl->ports[in_port].tenant].slot].drops++;
	else if (lc->cur_tenant != OVL_NONE)
		lc->tenant_stats[lc->cur_tenant].drops++;
}

int
dp_lcore_main(void *arg)
{
	struct dp_lcore *lc = arg;
	struct dp_txq tq[DP_MAX_PORTS];
	struct rte_mbuf *pkts[DP_BURST];
	const uint64_t drain_tsc = (rte_get_tsc_hz() + 9999) / 10000; /* 100 us */
	uint64_t prev_tsc = rte_rdtsc();
	const bool is_main = lc->lcore_id == rte_get_main_lcore();

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
		if (lc->rate.sh)
			dp_tx_rate(lc, tq, now);
		for (uint16_t i = 0; i < lc->n_rx; i++) {
			uint16_t p = lc->rx_ports[i];
			bool uplink = dp.ports[p].uplink;
			uint16_t nb;

			/* Backpressure: a tenant whose queues are full is not polled. */
			if (!uplink && lc->rate.sh &&
			    dp_rate_port_blocked(lc, lc->ovl->tenants[lc->ovl->ports[p].tenant].slot, now)) {
				lc->stats.bp_skips++;
				continue;
			}
			nb = rte_eth_rx_burst(dp.ports[p].port_id, 0, pkts, DP_BURST);
			if (nb == 0)
				continue;
			lc->last_rx_tsc = now;
			dp.traffic_seen = true;
			lc->stats.rx_pkts[p] += nb;
			for (uint16_t k = 0; k < nb; k++) {
				struct rte_mbuf *m = pkts[k];
				uint16_t out = 0;
				enum dp_drop why;

				if (k + 1 < nb)
					rte_prefetch0(rte_pktmbuf_mtod(pkts[k + 1], void *));
				lc->stats.rx_bytes[p] += m->pkt_len;
				lc->cur_tenant = OVL_NONE;
				lc->rate.sp_shaped = false;
				why = uplink ? dp_process_ingress(lc, p, m, &out) : dp_process_egress(lc, p, m, &out);
				if (likely(why == DP_DROP_NONE)) {
					if (lc->rate.sp_shaped)
						why = dp_rate_enqueue(lc, m, out);
					else if (out == DP_PORT_NONE)
						rte_pktmbuf_free(m);
					else
						dp_tx_enqueue(lc, tq, out, m);
				}
				if (unlikely(why != DP_DROP_NONE)) {
					count_drop(lc, p, why);
					rte_pktmbuf_free(m);
				}
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
	if (dp.qsv) {
		rte_rcu_qsbr_thread_offline(dp.qsv, lc->idx);
		rte_rcu_qsbr_thread_unregister(dp.qsv, lc->idx);
	}
	return 0;
}
