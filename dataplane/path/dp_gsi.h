/* SPDX-License-Identifier: BSD-3-Clause */
/* The GSI frames' check (dp_gsi.c). */
#ifndef DP_GSI_H
#define DP_GSI_H

#include "dp_path.h"

/* May this tenant frame to QP1 go on (an RDMA-CM MAD of a learning tenant)?  Counts it. */
bool dp_gsi_passes(struct dp_lcore *lc, const struct ovl *o, uint32_t tenant, const struct dp_pkt *p);

#endif /* DP_GSI_H */
