/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the record parsers of several kinds share, below all of them: the
 * names of the QP types (a QP's "type", an ACL rule's "types") and the
 * table of a "rate" (a tenant's and a QP's). See cfg_rec.h.
 */
#include "cfg_rec.h"

const char *const cfg_qp_type_names[] = { "rc", "uc", "ud", "xrc_ini", "xrc_tgt", NULL };

/* An ACL rule's "types": bit i is names[i]; "xrc" is CFG_ACL_TYPE_XRC. */
const char *const cfg_acl_type_names[] = { "rc", "uc", "ud", "xrc", NULL };

const struct cfg_field cfg_rate_fields[CFG_RATE_FIELDS] = {
	CFG_FIELD(struct cfg_rate, "gbps", CFG_F_GBPS, CFG_REQUIRED, bps),
	CFG_FIELD(struct cfg_rate, "burst_bytes", CFG_F_UINT, CFG_OPTIONAL, burst_bytes,
		  .min = 1),
};
