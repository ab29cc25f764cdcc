/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 4 (dp_s4_rewrite.c), with stage 3 (dp_s3_decide.h) in its loop:
 * decisions, the template, memory translation, checksums and the ICRC.
 */
#ifndef DP_S4_REWRITE_H
#define DP_S4_REWRITE_H

#include "dp_path.h"

void dp_s4_rewrite(struct dp_lcore *lc, struct dp_burst *b);

#endif /* DP_S4_REWRITE_H */
