/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay's records from their configuration (ovl_int.h): endpoints,
 * QPs, MRs, and each connection with its rewrite templates (the ICRC and
 * checksum differences of a rename, computed once per connection), used by
 * the whole build (ovl_build.c) and by changes in place (ovl_inc.c).
 */
#include <stdio.h>
#include <string.h>

#include "ovl_int.h"

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); goto fail; } while (0)

void
ovl_acl_conn(const struct ovl *o, struct ovl_conn *cn)
{
	const struct ovl_endpoint *le, *re;
	const struct cfg_acl *a = o->tenants[cn->tenant].acl;
	uint32_t lei, rei;

	ovl_conn_ends(o, cn, &lei, &rei);
	le = &o->endpoints[lei];
	re = &o->endpoints[rei];
	unsigned possible = ovl_type_ops(cn->l_type);

	for (unsigned d = 0; d < 2; d++) {
		const struct ovl_ip *src = d == OVL_DIR_L2R ? &le->vip : &re->vip;
		const struct ovl_ip *dst = d == OVL_DIR_L2R ? &re->vip : &le->vip;
		unsigned allow = 0;

		for (unsigned k = 0; k < 4; k++)
			if (ovl_acl_decide(a, src->ver, src->b, dst->b, cfg_acl_type(cn->l_type), 1u << k,
					   &cn->acl_rule[d][k]))
				allow |= 1u << k;
		cn->acl_allow[d] = (uint8_t)allow;
	}
	cn->acl_block = !(cn->acl_allow[OVL_DIR_L2R] & possible) && !(cn->acl_allow[OVL_DIR_R2L] & possible);
}

/* Byte offsets, from the IP header of an option-less frame. */
struct ip_layout {
	unsigned src, dst, len, bth;
};

static struct ip_layout
layout(uint8_t ver)
{
	if (ver == 6)
		return (struct ip_layout){ .src = 8, .dst = 24, .len = 16, .bth = 48 };
	return (struct ip_layout){ .src = 12, .dst = 16, .len = 4, .bth = 28 };
}

/* An option-less IP header of @src's version from @src to @dst, UDP, every per-packet field zero. */
static unsigned
ip_base(uint8_t *h, const struct ovl_ip *src, const struct ovl_ip *dst, bool out)
{
	struct ip_layout lo = layout(src->ver);

	memset(h, 0, 40);
	memcpy(h + lo.src, src->b, lo.len);
	memcpy(h + lo.dst, dst->b, lo.len);
	if (src->ver == 6) {
		h[0] = 0x60;
		h[6] = 17;
		return 40;
	}
	h[0] = 0x45;
	h[9] = 17;
	/* The switch's own IPv4 headers have DF set, a constant (path/dp_xlate.c). */
	if (out)
		h[6] = 0x40;
	return 20;
}

/* ovl_rewrite.xlate_crc of a translation from @old_src -> @old_dst to @new_src -> @new_dst. */
static uint32_t
xlate_crc_init(const struct ovl_ip *old_src, const struct ovl_ip *old_dst, const struct ovl_ip *new_src,
	       const struct ovl_ip *new_dst)
{
	uint8_t a[40], b[40];
	unsigned al = ip_base(a, old_src, old_dst, false), bl = ip_base(b, new_src, new_dst, true);

	return roce_icrc_ip_swap(0, a, al, old_src->ver, b, bl, new_src->ver, 0);
}

/*
 * Precompute the constant parts of a rename: addresses @old_src/@old_dst to
 * @new_src/@new_dst and DestQP @old_qpn to @new_qpn.
 */
static void
rewrite_init(struct ovl_rewrite *rw, const struct ovl_ip *old_src, const struct ovl_ip *old_dst,
	     uint32_t old_qpn, const struct ovl_ip *new_src, const struct ovl_ip *new_dst, uint32_t new_qpn)
{
	struct ip_layout lo = layout(new_src->ver);
	uint8_t a[64] = { 0 }, b[64] = { 0 }, x[64];
	unsigned end = lo.bth + 8;

	rw->ip_ver = new_src->ver;
	rw->addr_len = (uint8_t)lo.len;
	memcpy(rw->src_ip, new_src->b, lo.len);
	memcpy(rw->dst_ip, new_dst->b, lo.len);
	rw->dqpn = new_qpn;
	if (old_src->ver != new_src->ver) {
		/* A new IP header: nothing of the old one's differences applies. */
		rw->xlate_from = old_src->ver;
		rw->changes_icrc = true;
		rw->xlate_crc = xlate_crc_init(old_src, old_dst, new_src, new_dst);
		return;
	}
	rw->changes_icrc = !(ovl_ip_eq(old_src, new_src) && ovl_ip_eq(old_dst, new_dst) && old_qpn == new_qpn);

	memcpy(a + lo.src, old_src->b, lo.len);
	memcpy(a + lo.dst, old_dst->b, lo.len);
	memcpy(b + lo.src, new_src->b, lo.len);
	memcpy(b + lo.dst, new_dst->b, lo.len);
	for (int i = 0; i < 3; i++) {
		a[lo.bth + 5 + i] = (uint8_t)(old_qpn >> (16 - 8 * i));
		b[lo.bth + 5 + i] = (uint8_t)(new_qpn >> (16 - 8 * i));
	}
	for (unsigned i = 0; i < end; i++)
		x[i] = a[i] ^ b[i];
	/* crc0 of the difference from the source address to the end of DestQP. */
	rw->icrc_crc0 = roce_crc32_update(0, x + lo.src, end - lo.src);
	rw->ip_csum_diff = lo.len == 4 ? roce_csum_diff(a + lo.src, b + lo.src, 8) : 0;
}

/*
 * The fabric's entropy for a connection between physical QPNs @lp and @rp:
 * a UDP source port in 0xC000-0xFFFF (the range RoCEv2 RNICs use) and an
 * IPv6 flow label, from a mix of both QPNs.  Two tenants that reuse the same
 * vIPs and vQPNs between two hosts have different pqpns, so their flows
 * hash apart.
 */
static void
ecmp_init(struct ovl_rewrite *rw, uint32_t lp, uint32_t rp)
{
	uint32_t h = (lp * 0x9e3779b1u) ^ (rp * 0x85ebca6bu);

	h ^= h >> 15;
	h *= 0xc2b2ae35u;
	h ^= h >> 13;
	rw->udp_sport = (uint16_t)(0xc000u | (h & 0x3fffu));
	rw->flow_label = (h >> 12) & 0xfffffu;
}

/* The IPv6 flow label of ecmp_init(), the UDP source port left as the sender's. */
static void
xlate_flow_init(struct ovl_rewrite *rw, uint32_t lp, uint32_t rp)
{
	ecmp_init(rw, lp, rp);
	rw->udp_sport = 0;
}

static const uint8_t *
neighbor_mac(const struct cfg *c, const struct ovl_ip *host, const struct ovl_port *uplink)
{
	for (uint32_t i = 0; i < c->n_neighbors; i++) {
		struct ovl_ip ip;

		ovl_ip_from_cfg(&ip, &c->neighbors[i].ip);
		if (ovl_ip_eq(&ip, host))
			return c->neighbors[i].mac;
	}
	return uplink->has_gateway ? uplink->gateway_mac : NULL;
}

int
ovl_endpoint_fill(const struct ovl *o, const struct cfg *c, const struct cfg_endpoint *ce, struct ovl_endpoint *e,
		  const char *where, char *err, size_t err_len)
{
	memset(e, 0, sizeof(*e));
	e->tenant = (uint32_t)ce->tenant;
	ovl_ip_from_cfg(&e->vip, &ce->vip);
	ovl_ip_from_cfg(&e->host, &ce->host);
	e->local = ovl_host_index(o, e->host.b, ovl_ip_len(&e->host)) >= 0;
	if (e->local && ce->port < 0)
		FAIL("%s.port: the endpoint is on this host (%s) but names no port", where,
		     c->ports[o->host_port[ovl_host_index(o, e->host.b, ovl_ip_len(&e->host))]].name);
	if (e->local) {
		e->port = (uint16_t)ce->port;
		memcpy(e->mac, ce->mac, 6);
		memcpy(e->eth, e->mac, 6);
		memcpy(e->eth + 6, o->ports[e->port].mac, 6);
		e->out_port = e->port;
		e->reachable = true;
		return 0;
	}
	/* Out of the first uplink of the host's IP version. */
	for (uint32_t h = 0; h < o->n_host_ips && !e->reachable; h++) {
		const struct ovl_port *up = &o->ports[o->host_port[h]];
		const uint8_t *nmac;

		if (up->ip.ver != e->host.ver || !(nmac = neighbor_mac(c, &e->host, up)))
			continue;
		memcpy(e->eth, nmac, 6);
		memcpy(e->eth + 6, up->mac, 6);
		e->out_port = o->host_port[h];
		e->reachable = true;
	}
	return 0;
fail:
	return -1;
}

/*
 * What every connection starts from: the checks between L's endpoint @le
 * and R's @re, and the fields they give.
 */
static int
conn_begin(const struct ovl_endpoint *le, const struct ovl_endpoint *re, uint32_t tenant, uint8_t type,
	   struct ovl_conn *cn, const char *where, char *err, size_t err_len)
{
	if (le->vip.ver != re->vip.ver)
		FAIL("%s.peer: the peer's vip is of another IP version", where);
	/* The fabric frame has one IP version from host to host. */
	if (!re->local && le->host.ver != re->host.ver)
		FAIL("%s.peer: the peer's host is IPv%u and this endpoint's host IPv%u: no frame goes "
		     "between them", where, re->host.ver, le->host.ver);
	if (!re->reachable)
		FAIL("%s.peer: no neighbor entry for the peer's host and no uplink gateway_mac", where);
	memset(cn, 0, sizeof(*cn));
	cn->tenant = tenant;
	cn->l_port = le->port;
	cn->hairpin = re->local;
	cn->l_type = type;
	cn->state = OVL_NONE;
	cn->src_ep = OVL_NONE;
	memcpy(cn->l_vip, le->vip.b, ovl_ip_len(&le->vip));
	memcpy(cn->l_mac, le->mac, 6);
	memcpy(cn->r_host, re->host.b, ovl_ip_len(&re->host));
	return 0;
fail:
	return -1;
}

int
ovl_half_fill(const struct ovl *o, uint32_t hi, uint32_t src_ep, uint64_t rate_bps, struct ovl_conn *cn,
	      const char *where, char *err, size_t err_len)
{
	const struct ovl_qp *h = &o->qps[hi];
	const struct ovl_endpoint *se = &o->endpoints[src_ep], *de = &o->endpoints[h->endpoint];
	bool out = se->local;

	if (conn_begin(out ? se : de, out ? de : se, h->tenant, h->type, cn, where, err, err_len) < 0)
		return -1;
	cn->l = cn->r = hi;
	cn->src_ep = src_ep;
	if (!out) {
		/* The fabric's view (the source's host to this one, the pqpn) to the QP's, from the source's vip. */
		cn->half = OVL_HALF_IN;
		rewrite_init(&cn->ingress, &se->host, &de->host, h->pqpn, &se->vip, &de->vip, h->vqpn);
		if (cn->ingress.xlate_from == 4)
			xlate_flow_init(&cn->ingress, h->pqpn, 0);
		memcpy(cn->ingress.eth, de->eth, 12);
		cn->ingress.port = de->port;
		ovl_acl_conn(o, cn);
		return 0;
	}
	/* The source's frames to the QP: its host and pqpn, or straight to its port (a hairpin). */
	cn->half = OVL_HALF_OUT;
	cn->rate_bps = rate_bps;
	if (cn->hairpin)
		rewrite_init(&cn->egress, &se->vip, &de->vip, h->vqpn, &se->vip, &de->vip, h->vqpn);
	else
		rewrite_init(&cn->egress, &se->vip, &de->vip, h->vqpn, &se->host, &de->host, h->pqpn);
	/* The sender's pqpn is unknown: "ecmp" keeps the sender's UDP source port. */
	if (cn->egress.xlate_from == 4)
		xlate_flow_init(&cn->egress, 0, h->pqpn);
	memcpy(cn->egress.eth, de->eth, 12);
	cn->egress.port = de->out_port;
	ovl_acl_conn(o, cn);
	return 0;
}

int
ovl_conn_fill(const struct ovl *o, uint32_t li, uint32_t ri, uint64_t rate_bps, struct ovl_conn *cn,
	      const char *where, char *err, size_t err_len)
{
	const struct ovl_qp *l = &o->qps[li], *r = &o->qps[ri];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	if (conn_begin(le, re, l->tenant, l->type, cn, where, err, err_len) < 0)
		return -1;
	cn->l = li;
	cn->r = ri;
	cn->rate_bps = rate_bps;

	/* Ingress: the fabric view (R's host to L's host, L's pqpn) to L's view. */
	rewrite_init(&cn->ingress, &re->host, &le->host, l->pqpn, &re->vip, &le->vip, l->vqpn);
	if (cn->ingress.xlate_from == 4)
		xlate_flow_init(&cn->ingress, l->pqpn, r->pqpn);
	memcpy(cn->ingress.eth, le->eth, 12);
	cn->ingress.port = le->port;

	if (cn->hairpin)
		/* Straight to R's port: the virtual view is already R's. */
		rewrite_init(&cn->egress, &le->vip, &re->vip, r->vqpn, &le->vip, &re->vip, r->vqpn);
	else
		rewrite_init(&cn->egress, &le->vip, &re->vip, r->vqpn, &le->host, &re->host, r->pqpn);
	if (!r->local && o->cfg->ecmp.udp_sport == CFG_SPORT_QPN)
		ecmp_init(&cn->egress, l->pqpn, r->pqpn);
	else if (cn->egress.xlate_from == 4)
		/* An IPv4 frame has no flow label to keep: the connection's own. */
		xlate_flow_init(&cn->egress, l->pqpn, r->pqpn);
	memcpy(cn->egress.eth, re->eth, 12);
	cn->egress.port = re->out_port;
	ovl_acl_conn(o, cn);
	return 0;
}

void
ovl_conn_keys(const struct ovl *o, const struct ovl_conn *cn, struct ovl_key *by_tenant, struct ovl_key *by_fabric)
{
	const struct ovl_qp *l = &o->qps[cn->l], *r = &o->qps[cn->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	/* L's frames are found by their destination, R; R's by L's host and pqpn. */
	*by_tenant = ovl_key_make(re->vip.b, ovl_ip_len(&re->vip), r->tenant, r->vqpn);
	*by_fabric = ovl_key_make(le->host.b, ovl_ip_len(&le->host), OVL_SPACE_FABRIC, l->pqpn);
}

void
ovl_half_key(const struct ovl *o, const struct ovl_conn *cn, struct ovl_key *k)
{
	const struct ovl_qp *h = &o->qps[cn->l];
	const struct ovl_endpoint *e = &o->endpoints[h->endpoint];

	/* The source's frames are found by the QP's key; the fabric's by its host and pqpn. */
	if (cn->half == OVL_HALF_OUT)
		*k = ovl_key_make(e->vip.b, ovl_ip_len(&e->vip), h->tenant, h->vqpn);
	else
		*k = ovl_key_make(e->host.b, ovl_ip_len(&e->host), OVL_SPACE_FABRIC, h->pqpn);
}

void
ovl_qp_ud_keys(const struct ovl *o, const struct ovl_qp *q, struct ovl_key *by_tenant, struct ovl_key *by_fabric)
{
	const struct ovl_endpoint *e = &o->endpoints[q->endpoint];

	*by_tenant = ovl_key_make(e->vip.b, ovl_ip_len(&e->vip), q->tenant, q->vqpn);
	*by_fabric = ovl_key_make(e->host.b, ovl_ip_len(&e->host), OVL_SPACE_FABRIC, q->pqpn);
}

struct ovl_key
ovl_qp_key(uint32_t tenant, const struct ovl_ip *vip, uint32_t vqpn)
{
	return ovl_key_make(vip->b, ovl_ip_len(vip), tenant, vqpn);
}

/* A QP of the configuration as the overlay holds it; the peer is resolved by the caller. */
void
ovl_qp_fill(const struct ovl *o, const struct cfg_qp *cq, uint32_t endpoint, uint32_t peer_ep, struct ovl_qp *q)
{
	memset(q, 0, sizeof(*q));
	q->peer_ep = cq->has_peer ? peer_ep : OVL_NONE;
	q->peer_vqpn = cq->has_peer && cq->has_peer_vqpn ? cq->peer_vqpn : 0;
	q->rate_bps = cq->rate.set ? cq->rate.bps : 0;
	q->tenant = (uint32_t)cq->tenant;
	q->endpoint = endpoint;
	q->vqpn = cq->vqpn;
	q->pqpn = cq->pqpn;
	q->type = (uint8_t)cq->type;
	q->peer = OVL_NONE;
	q->conn = OVL_NONE;
	q->local = o->endpoints[endpoint].local;
}

bool
ovl_qp_names_back(const struct ovl *o, uint32_t x, uint32_t r)
{
	const struct ovl_qp *a = &o->qps[x], *b = &o->qps[r];

	return b->peer_ep == a->endpoint && b->peer_vqpn == a->vqpn && a->peer_vqpn &&
	       (int)b->type == cfg_qp_peer_type(a->type);
}

void
ovl_mr_fill(const struct cfg_mr *cm, uint32_t endpoint, struct ovl_mr *m)
{
	memset(m, 0, sizeof(*m));
	m->tenant = (uint32_t)cm->tenant;
	m->endpoint = endpoint;
	m->rkey = cm->rkey;
	m->addr = cm->addr;
	m->length = cm->length;
	m->target_rkey = cm->target_rkey;
	m->target_addr = cm->target_addr;
	m->access = cm->access;
}
