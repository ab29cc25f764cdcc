/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC SRQs of endpoints: a physical SRQ number is used once per host. The
 * file loader (cfg_load.c) and the delta (cfg_delta_check.c) share this
 * index and word their messages each in their own style.
 */
#ifndef CFG_XRC_H
#define CFG_XRC_H

#include <stdint.h>

#include "cfg.h"
#include "cfg_ctx.h"
#include "cfg_htab.h"

/* SRQs of the endpoints of @c, by (host, psrqn). */
struct cfg_srq_index {
	struct cfg_htab h;
	const struct cfg *c;
};

/* Prepare @x over @c's endpoints. Returns 0 or -1 (ENOMEM). */
int cfg_srq_index_init(struct cfg_srq_index *x, const struct cfg *c);

void cfg_srq_index_free(struct cfg_srq_index *x);

/*
 * Claim the psrqn of SRQ @s of endpoints[@ep] on its host. Returns 0 if it
 * was free (it is now held), 1 with the holder in *@hep and *@hs if another
 * SRQ of the host has it, -1 on ENOMEM.
 */
int cfg_srq_index_claim(struct cfg_srq_index *x, uint32_t ep, uint32_t s, uint32_t *hep, uint32_t *hs);

/*
 * The file's cross check, once the endpoints section (at @p) is loaded: no
 * psrqn twice on one host, reported at the later SRQ's "psrqn".
 */
void cfg_check_endpoint_srqs(struct cfg_ld *ld, const struct cfg_path *p);

#endif /* CFG_XRC_H */
