/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 6, tx: the tx buffers of an lcore, one per port, sent when they hold
 * a burst (after each rx burst) or on the drain tick; the NAKs of a
 * revocation and what the shapers release (dp_tx_rate(), in
 * dp_s5_shape.c) join them.
 */
#include <rte_ethdev.h>

#include "dp_acl.h"
#include "dp_s6_tx.h"
#include "dp_rate.h"

void
dp_tx_flush(struct dp_lcore *lc, uint16_t p, struct dp_txq *q)
{
	uint16_t sent = 0;

	/* Retry a bounded number of times: a slow peer is backpressure, not loss. */
	for (int tries = 0; sent < q->n && tries < 64; tries++)
		sent += rte_eth_tx_burst(dp.ports[p].port_id, lc->idx, q->pkts + sent, q->n - sent);
	uint64_t bytes = 0;

	for (uint16_t i = 0; i < sent; i++)
		bytes += q->pkts[i]->pkt_len;
	lc->stats.tx_bytes[p] += bytes;
	lc->stats.tx_pkts[p] += sent;
	if (unlikely(sent < q->n)) {
		lc->stats.drops[DP_DROP_TX_FAILED] += q->n - sent;
		rte_pktmbuf_free_bulk(q->pkts + sent, q->n - sent);
	}
	q->n = 0;
}

void
dp_s6_tx(struct dp_lcore *lc, struct dp_txq *tq)
{
	for (uint16_t p = 0; p < dp.n_ports; p++)
		if (tq[p].n >= DP_BURST)
			dp_tx_flush(lc, p, &tq[p]);
}

void
dp_tx_flush_all(struct dp_lcore *lc, struct dp_txq *tq)
{
	for (uint16_t p = 0; p < dp.n_ports; p++)
		if (tq[p].n)
			dp_tx_flush(lc, p, &tq[p]);
}

/* Send the NAKs the control plane asked for (dp_acl.h) on this lcore's own tx queues. */
void
dp_tx_naks(struct dp_lcore *lc, struct dp_txq *tq)
{
	struct rte_mbuf *m[DP_BURST];
	uint16_t port[DP_BURST];
	unsigned n = dp_acl_nak_poll(lc, m, port, DP_BURST);

	for (unsigned i = 0; i < n; i++)
		dp_tx_enqueue(lc, tq, port[i], m[i]);
}
