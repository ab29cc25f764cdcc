/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 5 (dp_s5_shape.c): each frame to the shaper or to a tx buffer;
 * drops counted and freed, once per burst.
 */
#ifndef DP_S5_SHAPE_H
#define DP_S5_SHAPE_H

#include "dp_s6_tx.h"

void dp_s5_shape(struct dp_lcore *lc, struct dp_burst *b, struct dp_txq *tq);

/* Frames the shapers release now, and the CNPs built during the burst. */
void dp_tx_rate(struct dp_lcore *lc, struct dp_txq *tq, uint64_t now);

#endif /* DP_S5_SHAPE_H */
