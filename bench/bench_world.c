/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"

static char name_port0[] = "fabric0", name_port1[] = "vm", dev0[] = "net_null0", dev1[] = "net_null1";
static char name_tenant[] = "blue";

static void
ip4(struct cfg_ip *ip, uint32_t host_order)
{
	memset(ip, 0, sizeof(*ip));
	ip->ver = 4;
	ip->b[0] = (uint8_t)(host_order >> 24);
	ip->b[1] = (uint8_t)(host_order >> 16);
	ip->b[2] = (uint8_t)(host_order >> 8);
	ip->b[3] = (uint8_t)host_order;
}

struct cfg *
bench_cfg_make_learned(uint32_t n)
{
	struct cfg *c = bench_cfg_make(n);

	/* R's records alone, as halves from L's vip: the same tenant-side keys, learned. */
	c->tenants[0].qp_learning = true;
	c->tenants[0].qp_idle_s = CFG_DEFAULT_QP_IDLE_S;
	for (uint32_t i = 0; i < n; i++) {
		struct cfg_qp *r = &c->qps[i];

		*r = c->qps[2 * i + 1];
		r->peer = -1;
		r->peer_vip = c->endpoints[0].vip;
		r->has_peer_vqpn = false;
	}
	c->n_qps = n;
	return c;
}

struct cfg *
bench_cfg_make(uint32_t n)
{
	struct cfg *c = calloc(1, sizeof(*c));
	uint32_t n_remote = (n + 249) / 250;

	c->version = 1;
	c->udp_port = CFG_DEFAULT_UDP_PORT;
	c->n_ports = 2;
	c->ports = calloc(2, sizeof(*c->ports));
	c->ports[0] = (struct cfg_port){ .name = name_port0, .device = dev0, .role = CFG_ROLE_UPLINK,
					 .has_ip = true, .mac = { 2, 0, 0, 0, 0, 1 },
					 .has_gateway_mac = true, .gateway_mac = { 2, 0, 0, 0, 0, 0xfe },
					 .tenant = -1 };
	ip4(&c->ports[0].ip, 0x0a000001);
	c->ports[1] = (struct cfg_port){ .name = name_port1, .device = dev1, .role = CFG_ROLE_TENANT,
					 .mac = { 2, 0, 0, 0, 1, 1 }, .tenant = 0 };
	c->n_tenants = 1;
	c->tenants = calloc(1, sizeof(*c->tenants));
	c->tenants[0] = (struct cfg_tenant){ .name = name_tenant, .vni = 100, .max_qps = 2 * n };
	c->n_endpoints = 1 + n_remote;
	c->endpoints = calloc(c->n_endpoints, sizeof(*c->endpoints));
	c->endpoints[0] = (struct cfg_endpoint){ .tenant = 0, .port = 1, .has_mac = true,
						 .mac = { 2, 0, 0, 0, 0xaa, 0x10 } };
	ip4(&c->endpoints[0].vip, 0xc0a8000a);
	ip4(&c->endpoints[0].host, 0x0a000001);
	for (uint32_t r = 0; r < n_remote; r++) {
		struct cfg_endpoint *e = &c->endpoints[1 + r];

		e->tenant = 0;
		e->port = -1;
		ip4(&e->vip, 0xc0a80100 + r);
		ip4(&e->host, 0x0a000002);
	}
	c->n_qps = 2 * n;
	c->qps = calloc(c->n_qps, sizeof(*c->qps));
	for (uint32_t i = 0; i < n; i++) {
		struct cfg_qp *l = &c->qps[2 * i], *r = &c->qps[2 * i + 1];
		uint32_t re = 1 + i / 250;

		*l = (struct cfg_qp){ .tenant = 0, .vqpn = 16 + i, .pqpn = 16 + i, .type = CFG_QP_RC,
				      .has_peer = true, .peer = (int)(2 * i + 1), .endpoint = 0 };
		l->vip = c->endpoints[0].vip;
		*r = (struct cfg_qp){ .tenant = 0, .vqpn = 16 + i % 250, .pqpn = 16 + i, .type = CFG_QP_RC,
				      .has_peer = true, .peer = (int)(2 * i), .endpoint = (int)re };
		r->vip = c->endpoints[re].vip;
	}
	return c;
}

void
bench_cfg_free(struct cfg *c)
{
	free(c->ports);
	free(c->tenants);
	free(c->endpoints);
	free(c->qps);
	free(c);
}
