/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addresses, error lists and lookups on a loaded configuration (cfg_free(),
 * which also frees the incremental index, is cfg_inc_index.c).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "cfg_util.h"

int
cfg_ip_parse(const char *s, struct cfg_ip *ip)
{
	struct cfg_ip r;

	memset(&r, 0, sizeof(r));
	if (s == NULL)
		return -1;
	if (inet_pton(AF_INET, s, r.b) == 1)
		r.ver = CFG_IPV4;
	else if (inet_pton(AF_INET6, s, r.b) == 1)
		r.ver = CFG_IPV6;
	else
		return -1;
	*ip = r;
	return 0;
}

int
cfg_ip_format(const struct cfg_ip *ip, char *buf, size_t len)
{
	char tmp[CFG_IP_STRLEN];
	size_t n;

	if (ip->ver == CFG_IPV4) {
		if (inet_ntop(AF_INET, ip->b, tmp, sizeof(tmp)) == NULL)
			return -1;
	} else if (ip->ver == CFG_IPV6) {
		if (inet_ntop(AF_INET6, ip->b, tmp, sizeof(tmp)) == NULL)
			return -1;
	} else {
		return -1;
	}
	n = strlen(tmp);
	if (buf == NULL || n >= len)
		return -1;
	memcpy(buf, tmp, n + 1);
	return (int)n;
}

bool
cfg_ip_equal(const struct cfg_ip *a, const struct cfg_ip *b)
{
	if (a->ver != b->ver)
		return false;
	return memcmp(a->b, b->b, a->ver == CFG_IPV4 ? 4 : 16) == 0;
}

bool
cfg_qp_names_back(const struct cfg_qp *q, const struct cfg_qp *r)
{
	return (int)r->type == cfg_qp_peer_type(q->type) && r->has_peer && r->has_peer_vqpn &&
	       r->peer_vqpn == q->vqpn && cfg_ip_equal(&r->peer_vip, &q->vip);
}

enum cfg_peer_verdict
cfg_qp_peer(const struct cfg *c, const struct cfg_qp *q, const struct cfg_qp *r)
{
	if (cfg_qp_half(q))
		return CFG_PEER_ALONE;
	if (q->peer_vqpn == q->vqpn && cfg_ip_equal(&q->peer_vip, &q->vip))
		return CFG_PEER_SELF;
	if (r && cfg_qp_names_back(q, r))
		return CFG_PEER_PAIR;
	if (c->tenants[q->tenant].qp_learning)
		return CFG_PEER_ALONE;
	if (!r)
		return CFG_PEER_MISSING;
	return (int)r->type != cfg_qp_peer_type(q->type) ? CFG_PEER_TYPE : CFG_PEER_NOT_BACK;
}

const char *
cfg_ip_str(const struct cfg_ip *ip, char buf[CFG_IP_STRLEN])
{
	if (cfg_ip_format(ip, buf, CFG_IP_STRLEN) < 0)
		snprintf(buf, CFG_IP_STRLEN, "(invalid address)");
	return buf;
}

int
cfg_hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int
cfg_mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	if (s == NULL || strlen(s) != 17)
		return -1;
	for (int i = 0; i < 6; i++) {
		int hi = cfg_hex_digit(s[3 * i]);
		int lo = cfg_hex_digit(s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -1;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(mac, m, 6);
	return 0;
}

void
cfg_errors_clear(struct cfg_errors *e)
{
	if (e == NULL)
		return;
	for (uint32_t i = 0; i < e->n; i++)
		free(e->msg[i]);
	free(e->msg);
	e->msg = NULL;
	e->n = 0;
}

void
cfg_errors_print(const struct cfg_errors *e, FILE *f)
{
	if (e == NULL)
		return;
	for (uint32_t i = 0; i < e->n; i++)
		fprintf(f, "%s\n", e->msg[i]);
}

const struct cfg_port *
cfg_port_by_name(const struct cfg *c, const char *name)
{
	if (c == NULL || name == NULL)
		return NULL;
	for (uint32_t i = 0; i < c->n_ports; i++)
		if (c->ports[i].name != NULL && strcmp(c->ports[i].name, name) == 0)
			return &c->ports[i];
	return NULL;
}

int
cfg_tenant_index(const struct cfg *c, const char *name)
{
	if (c == NULL || name == NULL)
		return -1;
	for (uint32_t i = 0; i < c->n_tenants; i++)
		if (c->tenants[i].name != NULL && strcmp(c->tenants[i].name, name) == 0)
			return (int)i;
	return -1;
}

const char *
cfg_half_check(const struct cfg *c, const struct cfg_qp *q, bool peer_ep, char buf[CFG_IP_STRLEN],
	       const char **field)
{
	static __thread char msg[CFG_IP_STRLEN + 160];
	const char *t = c->tenants[q->tenant].name;

	if (!c->tenants[q->tenant].qp_learning) {
		*field = "peer.vqpn";
		snprintf(msg, sizeof(msg), "missing required key (tenant \"%.64s\" does not learn its QPs: "
			 "\"qp_learning\")", t);
	} else if (!peer_ep) {
		*field = "peer.vip";
		snprintf(msg, sizeof(msg), "%s is not an endpoint of tenant \"%.64s\"", cfg_ip_str(&q->peer_vip, buf), t);
	} else {
		return NULL;
	}
	return msg;
}

bool cfg_learning_remote = true;

const char *
cfg_learning_host_check(const struct cfg *c, const struct cfg_endpoint *e, char buf[CFG_IP_STRLEN])
{
	static __thread char msg[CFG_IP_STRLEN + 200];

	if (cfg_learning_remote || e->tenant < 0 || !c->tenants[e->tenant].qp_learning)
		return NULL;
	for (uint32_t i = 0; i < c->n_ports; i++)
		if (c->ports[i].role == CFG_ROLE_UPLINK && c->ports[i].has_ip && cfg_ip_equal(&c->ports[i].ip, &e->host))
			return NULL;
	snprintf(msg, sizeof(msg), "%s is another host's, and tenant \"%.64s\" learns its QPs (\"qp_learning\"): "
		 "learning across hosts needs --etcd", cfg_ip_str(&e->host, buf), c->tenants[e->tenant].name);
	return msg;
}
