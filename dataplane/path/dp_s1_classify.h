/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 1 (dp_s1_classify.c): parse, first verdicts, the lookup key hashed
 * and its table slot prefetched; dp_path.h has the stages in order.
 */
#ifndef DP_S1_CLASSIFY_H
#define DP_S1_CLASSIFY_H

#include "dp_path.h"

void dp_s1_classify(struct dp_lcore *lc, struct dp_burst *b);

#endif /* DP_S1_CLASSIFY_H */
