/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VLAN policies of an overlay: copied from the configuration and
 * checked once more, for configurations that did not come through the
 * file loader's checks (deltas).
 */
#include <stdio.h>

#include "ovl.h"

static struct ovl_vlan
vlan_from_cfg(const struct cfg_vlan *cv)
{
	struct ovl_vlan v = { .mode = CFG_VLAN_KEEP };

	if (cv->set) {
		v.mode = (uint8_t)cv->mode;
		v.pcp = (uint8_t)cv->pcp;
		v.vid = (uint16_t)cv->vid;
	}
	return v;
}

int
ovl_vlan_build(struct ovl *o, const struct cfg *c, char *err, size_t err_len)
{
	for (uint32_t i = 0; i < o->n_ports; i++) {
		o->ports[i].vlan = vlan_from_cfg(&c->ports[i].vlan);
		o->vlan_any |= o->ports[i].vlan.mode != CFG_VLAN_KEEP;
	}
	for (uint32_t t = 0; t < o->n_tenants; t++) {
		o->tenants[t].has_vlan = c->tenants[t].vlan.set;
		o->tenants[t].vlan = vlan_from_cfg(&c->tenants[t].vlan);
		o->vlan_any |= o->tenants[t].vlan.mode != CFG_VLAN_KEEP;
	}
	/* Every side a tenant's frames take with "vni" needs its vni to be a VID. */
	for (uint32_t i = 0; i < o->n_ports; i++) {
		const struct ovl_port *p = &o->ports[i];

		for (uint32_t t = 0; t < o->n_tenants; t++) {
			const struct ovl_tenant *tn = &o->tenants[t];
			uint8_t mode = p->uplink && tn->has_vlan ? tn->vlan.mode : p->vlan.mode;

			if ((p->uplink || p->tenant == t) && mode == CFG_VLAN_VNI &&
			    (tn->vni == 0 || tn->vni > CFG_VID_MAX)) {
				snprintf(err, err_len,
					 "tenant \"%s\": vlan mode \"vni\" on port %s, but its vni %u is not a VID (1 to 4094)",
					 tn->name, p->name, tn->vni);
				return -1;
			}
		}
	}
	return 0;
}
