/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The header's own part of an overlay (struct ovl): its tenants, with their
 * ACLs and VLAN policies, its ports and this host's IPs, filled from the
 * configuration by the whole build (ovl_build.c) and by changes in place
 * (ovl_inc.c).  The VLAN policies are checked once more here, for
 * configurations that did not come through the file loader's checks (deltas).
 */
#include <stdio.h>
#include <string.h>

#include "ovl_int.h"

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); goto fail; } while (0)

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

void
ovl_acl_tenants(struct ovl *o)
{
	const struct cfg *c = o->cfg;

	for (uint32_t t = 0; t < o->n_tenants; t++) {
		o->tenants[t].acl = NULL;
		o->tenants[t].acl_index = OVL_NONE;
		o->tenants[t].ud_acl = false;
	}
	for (uint32_t i = 0; i < c->n_acls; i++) {
		const struct cfg_acl *a = &c->acls[i];
		struct ovl_tenant *t = &o->tenants[a->tenant];

		t->acl = a;
		t->acl_index = i;
		/* UD frames are checked one by one only where a deny could apply to them. */
		t->ud_acl = a->def == CFG_ACL_DENY;
		for (uint32_t r = 0; r < a->n_rules; r++)
			if (a->rules[r].action == CFG_ACL_DENY && (a->rules[r].types & (1u << CFG_QP_UD)) &&
			    (a->rules[r].ops & CFG_OP_SEND))
				t->ud_acl = true;
	}
}

/* The tenants' and ports' part of @o from @c (a header's own copies). */
int
ovl_header_fill(struct ovl *o, const struct cfg *c, char *err, size_t err_len)
{
	o->cfg = c;
	o->udp_port = c->udp_port ? c->udp_port : ROCE_UDP_PORT;
	o->n_tenants = c->n_tenants;
	o->n_ports = c->n_ports;
	o->n_host_ips = 0;
	o->vlan_any = false;
	for (uint32_t i = 0; i < c->n_tenants; i++) {
		struct ovl_tenant *t = &o->tenants[i];

		t->name = c->tenants[i].name;
		t->vni = c->tenants[i].vni;
		t->max_qps = c->tenants[i].max_qps;
		t->rate = c->tenants[i].rate;
		t->mr_enforce = c->tenants[i].mr_check == CFG_MR_CHECK_ENFORCE;
		t->privileged_qkey = c->tenants[i].privileged_qkey;
		t->qp_learning = c->tenants[i].qp_learning;
		t->qp_idle_s = c->tenants[i].qp_idle_s;
		t->gsi_pps = c->tenants[i].gsi_pps;
	}
	for (uint32_t i = 0; i < c->n_ports; i++) {
		const struct cfg_port *cp = &c->ports[i];
		struct ovl_port *p = &o->ports[i];

		p->name = cp->name;
		p->uplink = cp->role == CFG_ROLE_UPLINK;
		p->tenant = cp->tenant >= 0 ? (uint32_t)cp->tenant : OVL_NONE;
		memcpy(p->mac, cp->mac, 6);
		if (p->uplink) {
			ovl_ip_from_cfg(&p->ip, &cp->ip);
			p->has_gateway = cp->has_gateway_mac;
			memcpy(p->gateway_mac, cp->gateway_mac, 6);
			if (o->n_host_ips == sizeof(o->host_ips) / sizeof(o->host_ips[0]))
				FAIL("ports[%u]: more than 8 uplinks", i);
			o->host_ips[o->n_host_ips] = p->ip;
			o->host_port[o->n_host_ips++] = (uint16_t)i;
		}
	}
	if (ovl_vlan_build(o, c, err, err_len) < 0)
		return -1;
	ovl_acl_tenants(o);
	return 0;
fail:
	return -1;
}
