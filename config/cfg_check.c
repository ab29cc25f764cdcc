/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checks between records (see cfg_check.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_check.h"
#include "cfg_rec.h"
#include "cfg_util.h"

/*
 * Keys of the hash indexes, and how each compares with a record. The
 * context of every match function is the struct cfg_ld.
 */
struct ep_key {
	int tenant;
	const struct cfg_ip *vip;
};

struct qp_key {
	int tenant;
	const struct cfg_ip *vip;
	uint32_t qpn;           /* vqpn, or rkey for the MR index */
};

struct host_key {
	const struct cfg_ip *host;
	uint32_t pqpn;
};

static uint64_t
hash_ip(uint64_t h, const struct cfg_ip *ip)
{
	h = cfg_hash_bytes(h, &ip->ver, 1);
	return cfg_hash_bytes(h, ip->b, ip->ver == CFG_IPV4 ? 4 : 16);
}

static uint32_t
hash_u32(uint32_t x)
{
	return cfg_hash_final(cfg_hash_bytes(CFG_HASH_SEED, &x, sizeof(x)));
}

static uint32_t
hash_ip_only(const struct cfg_ip *ip)
{
	return cfg_hash_final(hash_ip(CFG_HASH_SEED, ip));
}

static uint32_t
hash_host_pqpn(const struct cfg_ip *host, uint32_t pqpn)
{
	return cfg_hash_final(cfg_hash_bytes(hash_ip(CFG_HASH_SEED, host), &pqpn, sizeof(pqpn)));
}

static uint32_t
hash_tenant_ip(int tenant, const struct cfg_ip *ip, uint32_t x)
{
	uint64_t h = cfg_hash_bytes(CFG_HASH_SEED, &tenant, sizeof(tenant));

	h = hash_ip(h, ip);
	return cfg_hash_final(cfg_hash_bytes(h, &x, sizeof(x)));
}

static bool
tenant_vni_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return ld->c->tenants[idx].vni == *(const uint32_t *)key;
}

static bool
port_device_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return strcmp(ld->c->ports[idx].device, key) == 0;
}

static bool
port_ip_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return cfg_ip_equal(&ld->c->ports[idx].ip, key);
}

static bool
ep_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_endpoint *e = &((const struct cfg_ld *)ctx)->c->endpoints[idx];
	const struct ep_key *k = key;

	return e->tenant == k->tenant && cfg_ip_equal(&e->vip, k->vip);
}

static bool
qp_vqpn_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_qp *q = &((const struct cfg_ld *)ctx)->c->qps[idx];
	const struct qp_key *k = key;

	return q->vqpn == k->qpn && q->tenant == k->tenant && cfg_ip_equal(&q->vip, k->vip);
}

static bool
qp_pqpn_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg *c = ((const struct cfg_ld *)ctx)->c;
	const struct cfg_qp *q = &c->qps[idx];
	const struct host_key *k = key;

	return q->pqpn == k->pqpn && cfg_ip_equal(&c->endpoints[q->endpoint].host, k->host);
}

static bool
mr_rkey_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_mr *m = &((const struct cfg_ld *)ctx)->c->mrs[idx];
	const struct qp_key *k = key;

	return m->rkey == k->qpn && m->tenant == k->tenant && cfg_ip_equal(&m->vip, k->vip);
}

static bool
nb_ip_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return cfg_ip_equal(&ld->c->neighbors[idx].ip, key);
}

static long
ep_find(const struct cfg_ld *ld, int tenant, const struct cfg_ip *vip)
{
	struct ep_key k = { .tenant = tenant, .vip = vip };

	return (long)cfg_htab_lookup(&ld->ep_by_vip, hash_tenant_ip(tenant, vip, 0), ep_match, ld,
				     &k);
}

/* Describe qps[@j] as "qps[5] (192.168.1.20 qp 33)" for messages. */
static const char *
qp_str(const struct cfg *c, uint32_t j, char *buf, size_t len)
{
	char ips[CFG_IP_STRLEN];

	snprintf(buf, len, "qps[%" PRIu32 "] (%s qp %" PRIu32 ")", j,
		 cfg_ip_str(&c->qps[j].vip, ips), c->qps[j].vqpn);
	return buf;
}

/* Check the peer of qps[@i], once every QP is indexed. */
static void
qp_peer_check(struct cfg_ld *ld, const struct cfg_path *p, uint32_t i)
{
	const struct cfg *c = ld->c;
	struct cfg_qp *q = &c->qps[i];
	uint32_t need = CFG_QP_KEY_OK | CFG_BIT(CFG_Q_TYPE) | CFG_BIT(CFG_Q_PEER);
	struct cfg_path rp = { .up = p, .key = NULL, .idx = i };
	char ips[CFG_IP_STRLEN], qs[96];
	const char *field, *why;
	const struct cfg_qp *r;
	struct qp_key k;
	long j;

	if ((ld->qp_ok[i] & need) != need || !q->has_peer || q->type == CFG_QP_UD)
		return;
	ld->dg.rec = i;
	k.tenant = q->tenant;
	k.vip = &q->peer_vip;
	k.qpn = q->peer_vqpn;
	j = cfg_qp_half(q) ? -1 : (long)cfg_htab_lookup(&ld->qp_by_vqpn, hash_tenant_ip(k.tenant, k.vip, k.qpn),
							qp_vqpn_match, ld, &k);
	r = j >= 0 ? &c->qps[j] : NULL;
	switch (cfg_qp_peer(c, q, r)) {
	case CFG_PEER_PAIR:
		q->peer = (int)j;
		break;
	case CFG_PEER_ALONE:
		/* Checked alone, linked to none. */
		if ((why = cfg_half_check(c, q, ep_find(ld, q->tenant, &q->peer_vip) >= 0, ips, &field)))
			CFG_REC_ERR(ld, &rp, field, "%s", why);
		break;
	case CFG_PEER_SELF:
		CFG_REC_ERR(ld, &rp, "peer", "a QP cannot be its own peer");
		break;
	case CFG_PEER_MISSING:
		CFG_REC_ERR(ld, &rp, "peer", "no QP %s qp %" PRIu32 " in tenant \"%.64s\"",
			cfg_ip_str(&q->peer_vip, ips), q->peer_vqpn, c->tenants[q->tenant].name);
		break;
	case CFG_PEER_TYPE:
		/* Say nothing about a peer whose own type or peer is already reported. */
		if (ld->qp_ok[j] & CFG_BIT(CFG_Q_TYPE))
			CFG_REC_ERR(ld, &rp, "peer", "%s is %s, not %s",
				qp_str(c, (uint32_t)j, qs, sizeof(qs)), cfg_qp_type_names[r->type],
				cfg_qp_type_names[cfg_qp_peer_type(q->type)]);
		break;
	case CFG_PEER_NOT_BACK:
		if ((ld->qp_ok[j] & CFG_BIT(CFG_Q_TYPE)) && (ld->qp_ok[j] & CFG_BIT(CFG_Q_PEER)))
			CFG_REC_ERR(ld, &rp, "peer", "%s does not point back", qp_str(c, (uint32_t)j, qs, sizeof(qs)));
		break;
	}
}

void
cfg_check_tenants_begin(struct cfg_ld *ld)
{
	cfg_ld_htab_init(ld, &ld->tenant_by_name, ld->c->n_tenants);
	cfg_ld_htab_init(ld, &ld->tenant_by_vni, ld->c->n_tenants);
}

void
cfg_check_tenant(struct cfg_ld *ld, const struct cfg_rec *r)
{
	struct cfg_tenant *t = &ld->c->tenants[r->i];
	long j;

	if (r->ok & CFG_BIT(CFG_T_NAME)) {
		j = cfg_ld_tenant_claim(ld, r->i);
		if (j >= 0)
			CFG_REC_ERR(ld, &r->path, "name",
				    "\"%.64s\" is already defined by tenants[%ld]", t->name, j);
	}
	if (r->ok & CFG_BIT(CFG_T_VNI)) {
		/* Two tenants on one VNI could not be told apart on the wire. */
		j = cfg_ld_index_claim(ld, &ld->tenant_by_vni, hash_u32(t->vni), tenant_vni_match,
				       &t->vni, r->i);
		if (j >= 0)
			CFG_REC_ERR(ld, &r->path, "vni", "%" PRIu32 " is already used by "
				    "tenants[%ld]", t->vni, j);
	}
}

void
cfg_check_ports_begin(struct cfg_ld *ld)
{
	cfg_ld_htab_init(ld, &ld->port_by_name, ld->c->n_ports);
	cfg_ld_htab_init(ld, &ld->port_by_device, ld->c->n_ports);
	cfg_ld_htab_init(ld, &ld->port_by_ip, ld->c->n_ports);
}

void
cfg_check_port_names(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_port *pt = &ld->c->ports[r->i];
	long j;

	if (r->ok & CFG_BIT(CFG_P_NAME)) {
		j = cfg_ld_port_claim(ld, r->i);
		if (j >= 0)
			CFG_REC_ERR(ld, &r->path, "name",
				    "\"%.64s\" is already defined by ports[%ld]", pt->name, j);
	}
	if (r->ok & CFG_BIT(CFG_P_DEVICE)) {
		j = cfg_ld_index_claim(ld, &ld->port_by_device, cfg_hash_str(pt->device),
				       port_device_match, pt->device, r->i);
		if (j >= 0)
			CFG_REC_ERR(ld, &r->path, "device",
				    "\"%.64s\" is already used by ports[%ld]", pt->device, j);
	}
}

void
cfg_check_port_ip(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_port *pt = &ld->c->ports[r->i];
	char ips[CFG_IP_STRLEN];
	long j;

	if (!(r->ok & CFG_BIT(CFG_P_ROLE)) || pt->role != CFG_ROLE_UPLINK ||
	    !(r->ok & CFG_BIT(CFG_P_IP)))
		return;
	j = cfg_ld_index_claim(ld, &ld->port_by_ip, hash_ip_only(&pt->ip), port_ip_match,
			       &pt->ip, r->i);
	if (j >= 0)
		CFG_REC_ERR(ld, &r->path, "ip", "%s is already the ip of ports[%ld]",
			    cfg_ip_str(&pt->ip, ips), j);
}

void
cfg_check_endpoints_begin(struct cfg_ld *ld)
{
	cfg_ld_htab_init(ld, &ld->ep_by_vip, ld->c->n_endpoints);
}

void
cfg_check_endpoint_vip(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_endpoint *e = &ld->c->endpoints[r->i];
	char ips[CFG_IP_STRLEN];
	struct ep_key k;
	long j;

	if (!(r->ok & CFG_BIT(CFG_E_TENANT)) || !(r->ok & CFG_BIT(CFG_E_VIP)))
		return;
	k.tenant = e->tenant;
	k.vip = &e->vip;
	j = cfg_ld_index_claim(ld, &ld->ep_by_vip, hash_tenant_ip(e->tenant, &e->vip, 0),
			       ep_match, &k, r->i);
	if (j >= 0)
		CFG_REC_ERR(ld, &r->path, "vip", "%s is already an endpoint of tenant "
			    "\"%.64s\" (endpoints[%ld])", cfg_ip_str(&e->vip, ips),
			    ld->c->tenants[e->tenant].name, j);
}

void
cfg_check_endpoint_port(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg *c = ld->c;
	const struct cfg_endpoint *e = &c->endpoints[r->i];
	const struct cfg_port *pt;

	/* Say nothing about a port whose role is already reported. */
	if (!(r->ok & CFG_BIT(CFG_E_PORT)) || !(ld->port_ok[e->port] & CFG_BIT(CFG_P_ROLE)))
		return;
	pt = &c->ports[e->port];
	if (pt->role != CFG_ROLE_TENANT)
		CFG_REC_ERR(ld, &r->path, "port",
			    "\"%.64s\" is an uplink port, not a tenant port", pt->name);
	else if ((r->ok & CFG_BIT(CFG_E_TENANT)) && pt->tenant >= 0 && pt->tenant != e->tenant)
		CFG_REC_ERR(ld, &r->path, "port",
			    "port \"%.64s\" belongs to tenant \"%.64s\", not \"%.64s\"",
			    pt->name, c->tenants[pt->tenant].name, c->tenants[e->tenant].name);
}

void
cfg_check_endpoint_learning(struct cfg_ld *ld, const struct cfg_rec *r)
{
	char ips[CFG_IP_STRLEN];
	const char *why;

	if ((r->ok & CFG_BIT(CFG_E_TENANT)) && (r->ok & CFG_BIT(CFG_E_HOST)) &&
	    (why = cfg_learning_host_check(ld->c, &ld->c->endpoints[r->i], ips)))
		CFG_REC_ERR(ld, &r->path, "host", "%s", why);
}

void
cfg_check_qps_begin(struct cfg_ld *ld)
{
	cfg_ld_htab_init(ld, &ld->qp_by_vqpn, ld->c->n_qps);
	cfg_ld_htab_init(ld, &ld->qp_by_pqpn, ld->c->n_qps);
}

void
cfg_check_qp(struct cfg_ld *ld, struct cfg_rec *r)
{
	struct cfg *c = ld->c;
	struct cfg_qp *q = &c->qps[r->i];
	struct cfg_tenant *t;
	char ips[CFG_IP_STRLEN];
	long j;

	if (!(r->ok & CFG_BIT(CFG_Q_TENANT)))
		return;
	t = &c->tenants[q->tenant];
	if (++t->n_qps > t->max_qps)
		CFG_REC_ERR(ld, &r->path, "tenant", "tenant \"%.64s\" exceeds max_qps %" PRIu32,
			    t->name, t->max_qps);
	if (r->ok & CFG_BIT(CFG_Q_VIP)) {
		j = ep_find(ld, q->tenant, &q->vip);
		if (j < 0)
			CFG_REC_ERR(ld, &r->path, "vip",
				    "%s is not an endpoint of tenant \"%.64s\"",
				    cfg_ip_str(&q->vip, ips), t->name);
		else
			q->endpoint = (int)j;
	}
	if ((r->ok & CFG_BIT(CFG_Q_VIP)) && (r->ok & CFG_BIT(CFG_Q_VQPN))) {
		struct qp_key k = { .tenant = q->tenant, .vip = &q->vip, .qpn = q->vqpn };

		r->ok |= CFG_QP_KEY_OK;
		j = cfg_ld_index_claim(ld, &ld->qp_by_vqpn, hash_tenant_ip(k.tenant, k.vip, k.qpn),
				       qp_vqpn_match, &k, r->i);
		if (j >= 0)
			CFG_REC_ERR(ld, &r->path, "vqpn", "%s qp %" PRIu32 " in tenant \"%.64s\" "
				    "is already defined by qps[%ld]", cfg_ip_str(&q->vip, ips),
				    q->vqpn, t->name, j);
	}
	if (q->endpoint >= 0 && (ld->ep_ok[q->endpoint] & CFG_BIT(CFG_E_HOST)) &&
	    (r->ok & CFG_BIT(CFG_Q_PQPN))) {
		const struct cfg_ip *host = &c->endpoints[q->endpoint].host;
		struct host_key k = { .host = host, .pqpn = q->pqpn };

		j = cfg_ld_index_claim(ld, &ld->qp_by_pqpn, hash_host_pqpn(host, q->pqpn),
				       qp_pqpn_match, &k, r->i);
		if (j >= 0)
			CFG_REC_ERR(ld, &r->path, "pqpn", "%" PRIu32 " is already used on host %s "
				    "by qps[%ld]", q->pqpn, cfg_ip_str(host, ips), j);
	}
}

void
cfg_check_qp_peers(struct cfg_ld *ld, const struct cfg_path *p)
{
	for (uint32_t i = 0; i < ld->c->n_qps && !ld->dg.oom; i++)
		qp_peer_check(ld, p, i);
}

void
cfg_check_mrs_begin(struct cfg_ld *ld)
{
	cfg_ld_htab_init(ld, &ld->mr_by_rkey, ld->c->n_mrs);
}

void
cfg_check_mr(struct cfg_ld *ld, const struct cfg_rec *r)
{
	struct cfg *c = ld->c;
	struct cfg_mr *m = &c->mrs[r->i];
	char ips[CFG_IP_STRLEN];
	long j;

	if (!(r->ok & CFG_BIT(CFG_M_TENANT)) || !(r->ok & CFG_BIT(CFG_M_VIP)))
		return;
	j = ep_find(ld, m->tenant, &m->vip);
	if (j < 0)
		CFG_REC_ERR(ld, &r->path, "vip", "%s is not an endpoint of tenant \"%.64s\"",
			    cfg_ip_str(&m->vip, ips), c->tenants[m->tenant].name);
	else
		m->endpoint = (int)j;
	if (r->ok & CFG_BIT(CFG_M_RKEY)) {
		struct qp_key k = { .tenant = m->tenant, .vip = &m->vip, .qpn = m->rkey };

		j = cfg_ld_index_claim(ld, &ld->mr_by_rkey, hash_tenant_ip(k.tenant, k.vip, k.qpn),
				       mr_rkey_match, &k, r->i);
		if (j >= 0)
			CFG_REC_ERR(ld, &r->path, "rkey", "0x%08" PRIx32 " of %s in tenant "
				    "\"%.64s\" is already defined by mrs[%ld]", m->rkey,
				    cfg_ip_str(&m->vip, ips), c->tenants[m->tenant].name, j);
	}
}

void
cfg_check_neighbors_begin(struct cfg_ld *ld)
{
	cfg_ld_htab_init(ld, &ld->nb_by_ip, ld->c->n_neighbors);
}

void
cfg_check_neighbor(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_neighbor *nb = &ld->c->neighbors[r->i];
	char ips[CFG_IP_STRLEN];
	long j;

	if (!(r->ok & CFG_BIT(CFG_N_IP)))
		return;
	j = cfg_ld_index_claim(ld, &ld->nb_by_ip, hash_ip_only(&nb->ip), nb_ip_match, &nb->ip,
			       r->i);
	if (j >= 0)
		CFG_REC_ERR(ld, &r->path, "ip", "%s is already defined by neighbors[%ld]",
			    cfg_ip_str(&nb->ip, ips), j);
}

bool
cfg_check_acls_begin(struct cfg_ld *ld)
{
	const struct cfg *c = ld->c;

	free(ld->acl_of);
	ld->acl_of = calloc(c->n_tenants + 1, sizeof(*ld->acl_of));
	if (ld->acl_of == NULL) {
		ld->dg.oom = true;
		return false;
	}
	for (uint32_t t = 0; t < c->n_tenants; t++)
		ld->acl_of[t] = -1;
	return true;
}

void
cfg_check_acl_tenant(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_acl *a = &ld->c->acls[r->i];

	if (!(r->ok & CFG_BIT(CFG_A_TENANT)))
		return;
	if (ld->acl_of[a->tenant] >= 0)
		CFG_REC_ERR(ld, &r->path, "tenant",
			    "tenant \"%.64s\" already has an ACL (acls[%d])",
			    ld->c->tenants[a->tenant].name, ld->acl_of[a->tenant]);
	else
		ld->acl_of[a->tenant] = (int32_t)r->i;
}
