/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage 2 (dp_s2_lookup.c): the tables probed (or an rte_flow MARK read),
 * the connection's record and state prefetched.
 */
#ifndef DP_S2_LOOKUP_H
#define DP_S2_LOOKUP_H

#include "dp_path.h"

void dp_s2_lookup(struct dp_lcore *lc, struct dp_burst *b);

#endif /* DP_S2_LOOKUP_H */
