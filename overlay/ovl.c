/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl.h"
#include "ovl_int.h"

void
ovl_ip_from_cfg(struct ovl_ip *dst, const struct cfg_ip *src)
{
	dst->ver = src->ver;
	memcpy(dst->b, src->b, sizeof(dst->b));
}

static unsigned
ip_len(const struct ovl_ip *ip)
{
	return ip->ver == 6 ? 16 : 4;
}

static bool
ip_eq(const struct ovl_ip *a, const struct ovl_ip *b)
{
	return a->ver == b->ver && memcmp(a->b, b->b, ip_len(a)) == 0;
}

int
ovl_tab_init(struct ovl_table *t, uint32_t n, unsigned load_pct)
{
	uint32_t cap = 16;

	while ((uint64_t)cap * load_pct < (uint64_t)n * 100 + 100)
		cap <<= 1;
	t->slots = calloc(cap, sizeof(*t->slots));
	t->mask = cap - 1;
	t->n = t->used = 0;
	return t->slots ? 0 : -1;
}

static int
table_init(struct ovl_table *t, uint32_t n)
{
	return ovl_tab_init(t, n, 50);
}

static void
table_free(struct ovl_table *t)
{
	free(t->slots);
}

/* The slot holding @k, or NULL. */
struct ovl_slot *
ovl_tab_find(const struct ovl_table *t, const struct ovl_key *k)
{
	uint32_t sig = ovl_key_hash(k) | 1u;

	for (uint32_t i = sig & t->mask;; i = (i + 1) & t->mask) {
		struct ovl_slot *s = &t->slots[i];

		if (s->sig == 0)
			return NULL;
		if (s->sig == sig && ovl_key_eq(&s->key, k))
			return s;
	}
}

/*
 * Store @val under @k while lcores may be probing: a present key has its
 * value swapped with one store; a new key takes the first tombstone or
 * empty slot of its probe, written before its signature (release).
 */
void
ovl_tab_set(struct ovl_table *t, const struct ovl_key *k, uint32_t val)
{
	uint32_t sig = ovl_key_hash(k) | 1u;
	struct ovl_slot *s = ovl_tab_find(t, k);

	if (s) {
		__atomic_store_n(&s->val, val, __ATOMIC_RELEASE);
		return;
	}
	for (uint32_t i = sig & t->mask;; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		if (s->sig == OVL_SIG_TOMB || s->sig == 0)
			break;
	}
	if (s->sig == 0)
		t->used++;
	s->key = *k;
	s->val = val;
	__atomic_store_n(&s->sig, sig, __ATOMIC_RELEASE);
	t->n++;
}

/* Remove @k (a tombstone stays); false when it is not there. */
bool
ovl_tab_del(struct ovl_table *t, const struct ovl_key *k)
{
	struct ovl_slot *s = ovl_tab_find(t, k);

	if (!s)
		return false;
	__atomic_store_n(&s->sig, OVL_SIG_TOMB, __ATOMIC_RELEASE);
	t->n--;
	return true;
}

/* Insert into a table nobody reads yet; returns the value already stored under @k, or OVL_NONE. */
static uint32_t
table_insert(struct ovl_table *t, const struct ovl_key *k, uint32_t val)
{
	uint32_t sig = ovl_key_hash(k) | 1u;

	for (uint32_t i = sig & t->mask;; i = (i + 1) & t->mask) {
		struct ovl_slot *s = &t->slots[i];

		if (s->sig == 0) {
			s->sig = sig;
			s->val = val;
			s->key = *k;
			t->n++;
			t->used++;
			return OVL_NONE;
		}
		if (s->sig == sig && ovl_key_eq(&s->key, k))
			return s->val;
	}
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
	rw->changes_icrc = !(ip_eq(old_src, new_src) && ip_eq(old_dst, new_dst) && old_qpn == new_qpn);

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
		if (ip_eq(&ip, host))
			return c->neighbors[i].mac;
	}
	return uplink->has_gateway ? uplink->gateway_mac : NULL;
}

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); goto fail; } while (0)

/* Room for the records of @n, with some to spare for incremental changes. */
uint32_t
ovl_room(uint32_t n)
{
	return n + (n / 4 > 64 ? n / 4 : 64);
}

int
ovl_xrc_build(struct ovl *o, char *err, size_t err_len)
{
	const struct cfg *c = o->cfg;
	uint32_t n = 0, local = 0;
	struct ovl_key k;

	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		n += c->endpoints[i].n_xrc_srqs;
		local += o->endpoints[i].local ? c->endpoints[i].n_xrc_srqs : 0;
	}
	o->store->srqs.cap = ovl_room(n);
	o->srqs = calloc(o->store->srqs.cap, sizeof(*o->srqs));
	if (!o->srqs || table_init(&o->by_srq, n + local))
		FAIL("out of memory");
	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		const struct ovl_endpoint *e = &o->endpoints[i];

		for (uint32_t j = 0; j < c->endpoints[i].n_xrc_srqs; j++) {
			struct ovl_srq *q = &o->srqs[o->n_srqs];

			q->endpoint = i;
			q->vsrqn = c->endpoints[i].xrc_srqs[j].vsrqn;
			q->psrqn = c->endpoints[i].xrc_srqs[j].psrqn;
			k = ovl_key_make(e->vip.b, ip_len(&e->vip), e->tenant, q->vsrqn);
			if (table_insert(&o->by_srq, &k, o->n_srqs) != OVL_NONE)
				FAIL("endpoints[%u].xrc_srqs[%u].vsrqn: duplicate", i, j);
			k = ovl_key_make(e->host.b, ip_len(&e->host), OVL_SPACE_SRQ, q->psrqn);
			if (e->local && table_insert(&o->by_srq, &k, o->n_srqs) != OVL_NONE)
				FAIL("endpoints[%u].xrc_srqs[%u].psrqn: duplicate on this host", i, j);
			o->n_srqs++;
		}
	}
	return 0;
fail:
	return -1;
}

int
ovl_endpoint_fill(const struct ovl *o, const struct cfg *c, const struct cfg_endpoint *ce, struct ovl_endpoint *e,
		  const char *where, char *err, size_t err_len)
{
	memset(e, 0, sizeof(*e));
	e->tenant = (uint32_t)ce->tenant;
	ovl_ip_from_cfg(&e->vip, &ce->vip);
	ovl_ip_from_cfg(&e->host, &ce->host);
	e->local = ovl_host_index(o, e->host.b, ip_len(&e->host)) >= 0;
	if (e->local && ce->port < 0)
		FAIL("%s.port: the endpoint is on this host (%s) but names no port", where,
		     c->ports[o->host_port[ovl_host_index(o, e->host.b, ip_len(&e->host))]].name);
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

int
ovl_conn_fill(const struct ovl *o, uint32_t li, uint32_t ri, uint64_t rate_bps, struct ovl_conn *cn,
	      const char *where, char *err, size_t err_len)
{
	const struct ovl_qp *l = &o->qps[li], *r = &o->qps[ri];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	if (le->vip.ver != re->vip.ver)
		FAIL("%s.peer: the peer's vip is of another IP version", where);
	/* The fabric frame has one IP version from host to host. */
	if (!r->local && le->host.ver != re->host.ver)
		FAIL("%s.peer: the peer's host is IPv%u and this endpoint's host IPv%u: no frame goes "
		     "between them", where, re->host.ver, le->host.ver);
	if (!re->reachable)
		FAIL("%s.peer: no neighbor entry for the peer's host and no uplink gateway_mac", where);
	memset(cn, 0, sizeof(*cn));
	cn->tenant = l->tenant;
	cn->l = li;
	cn->r = ri;
	cn->l_port = le->port;
	cn->hairpin = r->local;
	cn->l_type = l->type;
	cn->state = OVL_NONE;
	cn->rate_bps = rate_bps;
	memcpy(cn->l_vip, le->vip.b, ip_len(&le->vip));
	memcpy(cn->l_mac, le->mac, 6);
	memcpy(cn->r_host, re->host.b, ip_len(&re->host));

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
fail:
	return -1;
}

void
ovl_conn_keys(const struct ovl *o, const struct ovl_conn *cn, struct ovl_key *by_tenant, struct ovl_key *by_fabric)
{
	const struct ovl_qp *l = &o->qps[cn->l], *r = &o->qps[cn->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	/* L's frames are found by their destination, R; R's by L's host and pqpn. */
	*by_tenant = ovl_key_make(re->vip.b, ip_len(&re->vip), r->tenant, r->vqpn);
	*by_fabric = ovl_key_make(le->host.b, ip_len(&le->host), OVL_SPACE_FABRIC, l->pqpn);
}

void
ovl_qp_ud_keys(const struct ovl *o, const struct ovl_qp *q, struct ovl_key *by_tenant, struct ovl_key *by_fabric)
{
	const struct ovl_endpoint *e = &o->endpoints[q->endpoint];

	*by_tenant = ovl_key_make(e->vip.b, ip_len(&e->vip), q->tenant, q->vqpn);
	*by_fabric = ovl_key_make(e->host.b, ip_len(&e->host), OVL_SPACE_FABRIC, q->pqpn);
}

struct ovl_key
ovl_qp_key(uint32_t tenant, const struct ovl_ip *vip, uint32_t vqpn)
{
	return ovl_key_make(vip->b, ip_len(vip), tenant, vqpn);
}

/* A QP of the configuration as the overlay holds it; the peer is resolved by the caller. */
void
ovl_qp_fill(const struct ovl *o, const struct cfg_qp *cq, uint32_t endpoint, struct ovl_qp *q)
{
	memset(q, 0, sizeof(*q));
	q->tenant = (uint32_t)cq->tenant;
	q->endpoint = endpoint;
	q->vqpn = cq->vqpn;
	q->pqpn = cq->pqpn;
	q->type = (uint8_t)cq->type;
	q->peer = OVL_NONE;
	q->conn = OVL_NONE;
	q->local = o->endpoints[endpoint].local;
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

struct ovl *
ovl_build(const struct cfg *c, char *err, size_t err_len)
{
	struct ovl *o = calloc(1, sizeof(*o));
	struct ovl_store *st = calloc(1, sizeof(*st));
	char where[48];
	struct ovl_key k, kf;

	if (!o || !st) {
		free(o);
		free(st);
		return NULL;
	}
	o->store = st;
	st->owner = o;
	o->cfg = c;
	o->n_endpoints = c->n_endpoints;
	o->n_qps = c->n_qps;
	st->eps.cap = ovl_room(c->n_endpoints);
	st->qps.cap = ovl_room(c->n_qps);
	st->mrs.cap = ovl_room(c->n_mrs);
	o->tenants = calloc(c->n_tenants + 1, sizeof(*o->tenants));
	o->ports = calloc(c->n_ports + 1, sizeof(*o->ports));
	o->endpoints = calloc(st->eps.cap, sizeof(*o->endpoints));
	o->qps = calloc(st->qps.cap, sizeof(*o->qps));
	o->mrs = calloc(st->mrs.cap, sizeof(*o->mrs));
	if (!o->tenants || !o->ports || !o->endpoints || !o->qps || !o->mrs)
		FAIL("out of memory");
	for (uint32_t i = 0; i < c->n_tenants; i++)
		o->tenants[i].slot = OVL_NONE;
	if (ovl_header_fill(o, c, err, err_len) < 0)
		goto fail;

	/*
	 * by_ep holds two keys per endpoint: its vip, and its host (OVL_EP_HOST).
	 * The tables are built at most half full: changes in place fill them up
	 * to three quarters (ovl_inc.c).
	 */
	if (table_init(&o->by_ep, 2 * c->n_endpoints) || table_init(&o->by_tenant, c->n_qps) ||
	    table_init(&o->by_fabric, c->n_qps) || table_init(&o->by_mr, c->n_mrs) ||
	    ovl_tab_init(&st->by_qp, c->n_qps, OVL_BY_QP_LOAD))
		FAIL("out of memory");

	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		struct ovl_endpoint *e = &o->endpoints[i];

		snprintf(where, sizeof(where), "endpoints[%u]", i);
		if (ovl_endpoint_fill(o, c, &c->endpoints[i], e, where, err, err_len) < 0)
			goto fail;
		k = ovl_key_make(e->vip.b, ip_len(&e->vip), e->tenant, 0);
		if (table_insert(&o->by_ep, &k, i) != OVL_NONE)
			FAIL("endpoints[%u]: duplicate vip", i);
		/* The first of the tenant's endpoints on each host speaks for the host (UD CNPs). */
		k = ovl_key_make(e->host.b, ip_len(&e->host), e->tenant, OVL_EP_HOST);
		table_insert(&o->by_ep, &k, i);
	}

	for (uint32_t i = 0; i < c->n_qps; i++) {
		const struct cfg_qp *cq = &c->qps[i];
		struct ovl_qp *q = &o->qps[i];

		ovl_qp_fill(o, cq, (uint32_t)cq->endpoint, q);
		q->peer = cq->peer >= 0 ? (uint32_t)cq->peer : OVL_NONE;
		o->tenants[q->tenant].n_qps++;
		if (q->local)
			o->tenants[q->tenant].n_local_qps++;
		k = ovl_qp_key(q->tenant, &o->endpoints[q->endpoint].vip, q->vqpn);
		table_insert(&st->by_qp, &k, i);
	}

	if (ovl_xrc_build(o, err, err_len) < 0)
		goto fail;

	/* Connections: each local QP with a peer. */
	uint32_t n_conns = 0;

	for (uint32_t i = 0; i < c->n_qps; i++)
		n_conns += o->qps[i].local && o->qps[i].peer != OVL_NONE;
	st->conns.cap = ovl_room(n_conns);
	if (!(o->conns = calloc(st->conns.cap, sizeof(*o->conns))))
		FAIL("out of memory");
	for (uint32_t i = 0; i < c->n_qps; i++) {
		struct ovl_qp *l = &o->qps[i];
		struct ovl_conn *cn = &o->conns[o->n_conns];

		if (!l->local || l->peer == OVL_NONE)
			continue;
		snprintf(where, sizeof(where), "qps[%u]", i);
		if (ovl_conn_fill(o, i, l->peer, c->qps[i].rate.set ? c->qps[i].rate.bps : 0, cn, where, err,
				  err_len) < 0)
			goto fail;
		l->conn = o->n_conns++;
		if (cn->rate_bps)
			o->tenants[cn->tenant].n_capped++;
		ovl_conn_keys(o, cn, &k, &kf);
		if (table_insert(&o->by_tenant, &k, OVL_V_CONN | l->conn) != OVL_NONE)
			FAIL("qps[%u]: peer qp is the peer of two local QPs", i);
		if (table_insert(&o->by_fabric, &kf, OVL_V_CONN | l->conn) != OVL_NONE)
			FAIL("qps[%u].pqpn: duplicate on this host", i);
	}

	/* UD QPs resolve to QP records, on both sides. */
	for (uint32_t i = 0; i < c->n_qps; i++) {
		struct ovl_qp *q = &o->qps[i];
		const struct ovl_endpoint *e = &o->endpoints[q->endpoint];

		if (q->type != CFG_QP_UD)
			continue;
		if (e->vip.ver != e->host.ver)
			FAIL("qps[%u].type: a UD QP on an endpoint whose vip and host are of different IP versions "
			     "is not supported", i);
		ovl_qp_ud_keys(o, q, &k, &kf);
		if (table_insert(&o->by_tenant, &k, OVL_V_QP | i) != OVL_NONE)
			FAIL("qps[%u]: duplicate vqpn", i);
		if (table_insert(&o->by_fabric, &kf, OVL_V_QP | i) != OVL_NONE)
			FAIL("qps[%u].pqpn: duplicate on host", i);
	}

	for (uint32_t i = 0; i < c->n_mrs; i++) {
		const struct cfg_mr *cm = &c->mrs[i];
		const struct ovl_endpoint *e = &o->endpoints[cm->endpoint];
		struct ovl_mr *m;

		if (!e->local)
			continue;
		m = &o->mrs[o->n_mrs];
		ovl_mr_fill(cm, (uint32_t)cm->endpoint, m);
		k = ovl_key_make(e->vip.b, ip_len(&e->vip), m->tenant, m->rkey);
		if (table_insert(&o->by_mr, &k, o->n_mrs) != OVL_NONE)
			FAIL("mrs[%u].rkey: duplicate", i);
		o->n_mrs++;
	}
	o->live_conns = o->n_conns;
	o->live_qps = o->n_qps;
	o->live_mrs = o->n_mrs;
	o->live_endpoints = o->n_endpoints;
	return o;
fail:
	ovl_free(o);
	return NULL;
}

void
ovl_free(struct ovl *o)
{
	if (!o)
		return;
	free(o->tenants);
	free(o->ports);
	/* An older header over the newest's store frees only its own part. */
	if (o->store && o->store->owner == o) {
		table_free(&o->by_tenant);
		table_free(&o->by_fabric);
		table_free(&o->by_mr);
		table_free(&o->by_ep);
		table_free(&o->by_srq);
		free(o->srqs);
		free(o->endpoints);
		free(o->qps);
		free(o->conns);
		free(o->mrs);
		ovl_store_free(o->store);
	}
	free(o);
}

int
ovl_mr_translate(const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip, unsigned vip_len,
		 uint32_t rkey, uint64_t va, uint64_t len, uint32_t access, uint32_t *new_rkey,
		 uint64_t *new_va)
{
	uint32_t idx = ovl_lookup_mr(o, tenant, owner_vip, vip_len, rkey);
	const struct ovl_mr *m;

	if (idx == OVL_NONE)
		return OVL_MR_UNKNOWN;
	m = &o->mrs[idx];
	/* [va, va + len) inside [addr, addr + length), without overflow. */
	if (va < m->addr || len > m->length || va - m->addr > m->length - len)
		return OVL_MR_BOUNDS;
	if ((m->access & access) != access)
		return OVL_MR_ACCESS;
	*new_rkey = m->target_rkey;
	*new_va = m->target_addr + (va - m->addr);
	return OVL_MR_OK;
}
