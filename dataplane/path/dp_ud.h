/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD frames (dp_ud.c), from stage 3.
 */
#ifndef DP_UD_H
#define DP_UD_H

#include "dp_path.h"

/* From stage 3: checked, renamed and counted at once. */
enum dp_drop dp_ud_egress(struct dp_lcore *lc, const struct ovl *o, uint16_t in_port, struct dp_pkt *p,
			  uint32_t qi);
enum dp_drop dp_ud_ingress(struct dp_lcore *lc, const struct ovl *o, struct dp_pkt *p, uint32_t qi);

#endif /* DP_UD_H */
