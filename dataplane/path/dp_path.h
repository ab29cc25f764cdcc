/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-packet path of one lcore, in the order a frame meets it: rx, the
 * direction's processing (dp_egress.c, dp_ingress.c, dp_ud.c), the shaper
 * (dp_shape.c) or the tx buffers (dp_tx.c).  dp_loop.c runs it.
 */
#ifndef DP_PATH_H
#define DP_PATH_H

#include "dp.h"

/* UD frames (dp_ud.c): @qi is the QP the lookup found. */
enum dp_drop dp_ud_egress(struct dp_lcore *lc, const struct ovl *o, uint16_t in_port, uint8_t *data,
			  const struct roce_pkt *pkt, uint32_t qi, uint16_t *out_port);
enum dp_drop dp_ud_ingress(struct dp_lcore *lc, const struct ovl *o, uint8_t *data, const struct roce_pkt *pkt,
			   uint32_t qi, uint16_t *out_port);

/* A small tx buffer per (lcore, port), flushed when full or on the drain tick (dp_tx.c). */
struct dp_txq {
	uint16_t n;
	struct rte_mbuf *pkts[DP_BURST];
};

void dp_tx_flush(struct dp_lcore *lc, uint16_t p, struct dp_txq *q);
void dp_tx_flush_all(struct dp_lcore *lc, struct dp_txq *tq);

static inline void
dp_tx_enqueue(struct dp_lcore *lc, struct dp_txq *tq, uint16_t p, struct rte_mbuf *m)
{
	struct dp_txq *q = &tq[p];

	q->pkts[q->n++] = m;
	if (q->n == DP_BURST)
		dp_tx_flush(lc, p, q);
}

/* The NAKs the control plane asked for (dp_acl.h), on this lcore's own tx queues. */
void dp_tx_naks(struct dp_lcore *lc, struct dp_txq *tq);

/* Frames the shapers release now, and the CNPs built during the burst. */
void dp_tx_rate(struct dp_lcore *lc, struct dp_txq *tq, uint64_t now);

#endif /* DP_PATH_H */
