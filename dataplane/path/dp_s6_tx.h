/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 6 (dp_s6_tx.c): the tx buffers that stage 5 fills (and the frames
 * the shapers release, dp_tx_rate() in dp_s5_shape.c), and the NAKs the
 * control plane asked for.
 */
#ifndef DP_S6_TX_H
#define DP_S6_TX_H

#include "dp_path.h"

/*
 * A tx buffer per (lcore, port) (dp_s6_tx.c): stage 5 fills it, stage 6
 * sends every buffer that holds a burst, the drain tick sends the rest.  It
 * holds two bursts, so that stage 5 never has to send in the middle of one.
 */
#define DP_TXQ_CAP (2 * DP_BURST)

struct dp_txq {
	uint16_t n;
	struct rte_mbuf *pkts[DP_TXQ_CAP];
};

void dp_tx_flush(struct dp_lcore *lc, uint16_t p, struct dp_txq *q);
void dp_tx_flush_all(struct dp_lcore *lc, struct dp_txq *tq);

static inline void
dp_tx_enqueue(struct dp_lcore *lc, struct dp_txq *tq, uint16_t p, struct rte_mbuf *m)
{
	struct dp_txq *q = &tq[p];

	q->pkts[q->n++] = m;
	if (unlikely(q->n == DP_TXQ_CAP))
		dp_tx_flush(lc, p, q);
}

/* Stage 6: send every buffer that holds at least a burst. */
void dp_s6_tx(struct dp_lcore *lc, struct dp_txq *tq);

/* The NAKs the control plane asked for (dp_acl.h), on this lcore's own tx queues. */
void dp_tx_naks(struct dp_lcore *lc, struct dp_txq *tq);

#endif /* DP_S6_TX_H */
