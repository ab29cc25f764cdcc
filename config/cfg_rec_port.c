/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Record parsers of ports and endpoints (see cfg_rec.h).
 */
#include <assert.h>

#include "cfg_rec.h"

/* CFG_F_ENUM stores an int; every enum it stores into must be int-sized. */
static_assert(sizeof(enum cfg_port_role) == sizeof(int), "enum size");

static const char *const role_names[] = { "uplink", "tenant", NULL };

static const struct cfg_field port_fields[] = {
	[CFG_P_NAME] = CFG_FIELD(struct cfg_port, "name", CFG_F_STR, CFG_REQUIRED, name),
	[CFG_P_DEVICE] = CFG_FIELD(struct cfg_port, "device", CFG_F_STR, CFG_REQUIRED, device),
	[CFG_P_ROLE] = CFG_FIELD(struct cfg_port, "role", CFG_F_ENUM, CFG_REQUIRED, role,
				 .names = role_names),
	/* Which of these a port needs depends on its role: see cfg_port_role_check(). */
	[CFG_P_IP] = CFG_FIELD(struct cfg_port, "ip", CFG_F_IP, CFG_OPTIONAL, ip,
			       CFG_HAS(struct cfg_port, has_ip)),
	[CFG_P_MAC] = CFG_FIELD(struct cfg_port, "mac", CFG_F_MAC, CFG_REQUIRED, mac),
	[CFG_P_GATEWAY_MAC] = CFG_FIELD(struct cfg_port, "gateway_mac", CFG_F_MAC, CFG_OPTIONAL,
					gateway_mac, CFG_HAS(struct cfg_port, has_gateway_mac)),
	[CFG_P_TENANT] = CFG_FIELD(struct cfg_port, "tenant", CFG_F_REF, CFG_OPTIONAL, tenant,
				   .ref = &cfg_ref_tenant),
	[CFG_P_VLAN] = CFG_FIELD(struct cfg_port, "vlan", CFG_F_OBJECT, CFG_OPTIONAL, vlan,
				 CFG_HAS(struct cfg_port, vlan.set), CFG_SUB(cfg_vlan_fields)),
	/* Checked against what the device offers when the switch starts (dataplane/dp_ports.c). */
	[CFG_P_RX_QUEUES] = CFG_FIELD(struct cfg_port, "rx_queues", CFG_F_UINT, CFG_OPTIONAL, rx_queues,
				      .min = 1, .max = CFG_MAX_RX_QUEUES),
};

static const struct cfg_field endpoint_fields[] = {
	[CFG_E_TENANT] = CFG_FIELD(struct cfg_endpoint, "tenant", CFG_F_REF, CFG_REQUIRED, tenant,
				   .ref = &cfg_ref_tenant),
	[CFG_E_VIP] = CFG_FIELD(struct cfg_endpoint, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	[CFG_E_HOST] = CFG_FIELD(struct cfg_endpoint, "host", CFG_F_IP, CFG_REQUIRED, host),
	[CFG_E_PORT] = CFG_FIELD(struct cfg_endpoint, "port", CFG_F_REF, CFG_OPTIONAL, port,
				 .ref = &cfg_ref_port),
	[CFG_E_MAC] = CFG_FIELD(struct cfg_endpoint, "mac", CFG_F_MAC, CFG_OPTIONAL, mac,
				CFG_HAS(struct cfg_endpoint, has_mac)),
	/* Walked by cfg_endpoint_srqs_parse(). */
	[CFG_E_XRC_SRQS] = { .key = "xrc_srqs", .kind = CFG_F_ARRAY, .off = 0 },
};

/* Per-record masks of valid fields are kept in 32 bits. */
static_assert(CFG_DIM(port_fields) < 32 && CFG_DIM(endpoint_fields) < 32, "mask width");

void
cfg_ports_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;

	if (!cfg_records_alloc(ld, v, p, sizeof(*c->ports), (void **)&c->ports, &c->n_ports))
		ld->quiet_ports = true;
	ld->port_ok = cfg_ld_masks_alloc(ld, c->n_ports);
}

bool
cfg_port_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p, uint32_t i,
	       struct cfg_rec *r)
{
	struct cfg_port *pt = &ld->c->ports[i];

	pt->tenant = -1;
	if (!cfg_rec_begin(ld, v, i, p, r))
		return false;
	r->ok = cfg_obj_parse(&ld->dg, r->obj, &r->path, port_fields, CFG_DIM(port_fields), pt,
			      &r->present);
	ld->port_ok[i] = (uint32_t)r->ok;
	return true;
}

void
cfg_port_role_check(struct cfg_ld *ld, const struct cfg_rec *r)
{
	struct cfg_port *pt = &ld->c->ports[r->i];
	const struct cfg_path *rp = &r->path;

	if (!(r->ok & CFG_BIT(CFG_P_ROLE)))
		return;
	if (pt->role == CFG_ROLE_UPLINK) {
		if (!(r->present & CFG_BIT(CFG_P_IP)))
			CFG_REC_ERR(ld, rp, "ip", "missing required key (uplink ports need an ip)");
		if (r->present & CFG_BIT(CFG_P_TENANT))
			CFG_REC_ERR(ld, rp, "tenant", "not allowed on uplink ports");
		pt->tenant = -1;
	} else {
		if (!(r->present & CFG_BIT(CFG_P_TENANT)))
			CFG_REC_ERR(ld, rp, "tenant",
				    "missing required key (tenant ports need a tenant)");
		if (r->present & CFG_BIT(CFG_P_IP))
			CFG_REC_ERR(ld, rp, "ip", "not allowed on tenant ports");
		if (r->present & CFG_BIT(CFG_P_GATEWAY_MAC))
			CFG_REC_ERR(ld, rp, "gateway_mac", "not allowed on tenant ports");
	}
	if (!(r->ok & CFG_BIT(CFG_P_VLAN)))
		pt->vlan.set = false;
	else if (pt->role == CFG_ROLE_UPLINK || (r->ok & CFG_BIT(CFG_P_TENANT)))
		cfg_vlan_check(ld, rp, &pt->vlan, pt->role == CFG_ROLE_UPLINK ? -1 : pt->tenant);
}

void
cfg_endpoints_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;

	cfg_records_alloc(ld, v, p, sizeof(*c->endpoints), (void **)&c->endpoints,
			  &c->n_endpoints);
	ld->ep_ok = cfg_ld_masks_alloc(ld, c->n_endpoints);
}

bool
cfg_endpoint_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		   uint32_t i, struct cfg_rec *r)
{
	struct cfg_endpoint *e = &ld->c->endpoints[i];

	e->tenant = -1;
	e->port = -1;
	if (!cfg_rec_begin(ld, v, i, p, r))
		return false;
	r->ok = cfg_obj_parse(&ld->dg, r->obj, &r->path, endpoint_fields,
			      CFG_DIM(endpoint_fields), e, &r->present);
	ld->ep_ok[i] = (uint32_t)r->ok;
	cfg_endpoint_srqs_parse(ld, r);
	return true;
}

void
cfg_endpoint_mac_check(struct cfg_ld *ld, const struct cfg_rec *r)
{
	if ((r->present & CFG_BIT(CFG_E_PORT)) && !(r->present & CFG_BIT(CFG_E_MAC)))
		CFG_REC_ERR(ld, &r->path, "mac",
			    "missing required key (an endpoint with a port needs a mac)");
}
