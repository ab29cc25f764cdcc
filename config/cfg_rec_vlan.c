/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "vlan" policy of ports and tenants (struct cfg_vlan, cfg.h): its field
 * table and the checks that need its record and the tenants (see cfg_rec.h).
 */
#include <assert.h>

#include "cfg_rec.h"

/* CFG_F_ENUM stores an int; every enum it stores into must be int-sized. */
static_assert(sizeof(enum cfg_vlan_mode) == sizeof(int), "enum size");
static_assert(sizeof(enum cfg_vlan_pcp) == sizeof(int), "enum size");

static const char *const mode_names[] = { "keep", "untagged", "tagged", "vni", NULL };
static const char *const pcp_names[] = { "dscp", "keep", NULL };

const struct cfg_field cfg_vlan_fields[CFG_VLAN_FIELDS] = {
	CFG_FIELD(struct cfg_vlan, "mode", CFG_F_ENUM, CFG_REQUIRED, mode, .names = mode_names),
	CFG_FIELD(struct cfg_vlan, "vid", CFG_F_UINT, CFG_OPTIONAL, vid, .min = 1, .max = CFG_VID_MAX,
		  CFG_HAS(struct cfg_vlan, has_vid)),
	CFG_FIELD(struct cfg_vlan, "pcp", CFG_F_ENUM, CFG_OPTIONAL, pcp, .names = pcp_names,
		  CFG_HAS(struct cfg_vlan, has_pcp)),
};

/* Why the vni of @t cannot be a VID, or NULL when it can. */
static const char *
vni_unfit(const struct cfg_tenant *t)
{
	if (t->vni == 0)
		return "is 0 (VID 0 is a priority tag, not a VLAN)";
	if (t->vni > CFG_VID_MAX)
		return "is above 4094 (a VID has 12 bits and 4095 is reserved)";
	return NULL;
}

void
cfg_vlan_check(struct cfg_ld *ld, const struct cfg_path *rp, const struct cfg_vlan *vl, int tenant)
{
	struct cfg_path vp = { .up = rp, .key = "vlan" };
	const struct cfg *c = ld->c;
	const char *why;

	if (!vl->set)
		return;
	if (vl->mode == CFG_VLAN_TAGGED && !vl->has_vid)
		CFG_REC_ERR(ld, &vp, "vid", "missing required key (mode \"tagged\" needs a vid)");
	if (vl->mode != CFG_VLAN_TAGGED && vl->has_vid)
		CFG_REC_ERR(ld, &vp, "vid", "only allowed with mode \"tagged\"");
	if ((vl->mode == CFG_VLAN_KEEP || vl->mode == CFG_VLAN_UNTAGGED) && vl->has_pcp)
		CFG_REC_ERR(ld, &vp, "pcp", "only allowed with mode \"tagged\" or \"vni\"");
	if (vl->mode != CFG_VLAN_VNI)
		return;
	if (tenant >= 0) {
		if (c->tenants[tenant].name && (why = vni_unfit(&c->tenants[tenant])) != NULL)
			CFG_REC_ERR(ld, &vp, "mode", "\"vni\": the vni %u of tenant \"%s\" %s",
				    c->tenants[tenant].vni, c->tenants[tenant].name, why);
		return;
	}
	/* An uplink's policy applies to every tenant without one of its own. */
	for (uint32_t t = 0; t < c->n_tenants; t++)
		if (c->tenants[t].name && !c->tenants[t].vlan.set && (why = vni_unfit(&c->tenants[t])) != NULL)
			CFG_REC_ERR(ld, &vp, "mode", "\"vni\": the vni %u of tenant \"%s\" %s", c->tenants[t].vni,
				    c->tenants[t].name, why);
}
