/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Templates that change the IP version (dp_xlate.c), for stage 4.
 */
#ifndef DP_XLATE_H
#define DP_XLATE_H

#include "dp_path.h"

/*
 * Stage 4 for a template that changes the IP version (rw->xlate_from): the
 * IP header replaced (the mbuf grows or shrinks by 20 bytes, p->data and
 * p->pkt follow), DestQP, noted translations and ECMP port written, padding
 * to 60 bytes, the ICRC carried over (path/dp_xlate.c).  False: the mbuf
 * had no room for it.
 */
bool dp_xlate_frame(struct dp_pkt *p, const struct ovl_rewrite *rw, uint64_t *mr_translated);

#endif /* DP_XLATE_H */
