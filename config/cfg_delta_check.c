/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deltas, second half (see cfg_delta.h): the merged records lose what was
 * deleted and are renumbered into a new configuration, which is then checked
 * between records as the file loader checks a file: a record's tenant and
 * endpoint exist, an endpoint's port is a tenant port of its tenant, a pqpn
 * is used once per host (and a psrqn), an RC, UC or XRC QP's peer exists with its type and
 * points back, no tenant exceeds max_qps, and nothing is left that names a
 * deleted tenant. Linear in the size of the result.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_delta_int.h"
#include "cfg_rec.h"
#include "cfg_util.h"
#include "cfg_xrc.h"

#define NONE UINT32_MAX

/* Lookups over the new configuration; ctx is the struct cfg. */
struct key3 {
	int tenant;
	const struct cfg_ip *ip;
	uint32_t id;
};

static bool
ep_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_endpoint *e = &((const struct cfg *)ctx)->endpoints[idx];
	const struct key3 *k = key;

	return e->tenant == k->tenant && cfg_ip_equal(&e->vip, k->ip);
}

static bool
qp_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_qp *q = &((const struct cfg *)ctx)->qps[idx];
	const struct key3 *k = key;

	return q->tenant == k->tenant && q->vqpn == k->id && cfg_ip_equal(&q->vip, k->ip);
}

static bool
pqpn_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg *c = ctx;
	const struct cfg_qp *q = &c->qps[idx];
	const struct key3 *k = key;

	return q->pqpn == k->id && cfg_ip_equal(&c->endpoints[q->endpoint].host, k->ip);
}

static bool
vni_match(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct cfg *)ctx)->tenants[idx].vni == *(const uint32_t *)key;
}

static uint32_t
vni_hash(uint32_t vni)
{
	return cfg_hash_final(cfg_hash_bytes(CFG_HASH_SEED, &vni, sizeof(vni)));
}

/* The tenant of a deleted tenant's record: report it on the record. */
static bool
tenant_gone(struct cfg_dl *d, int k, uint32_t i, int tenant)
{
	const struct cfg_dl_set *ts = &d->set[CFG_DK_TENANTS];

	if (ts->del[tenant] < 0)
		return false;
	cfg_dl_rec_err(d, k, i, "tenant", "tenant \"%.64s\" is deleted by delete.tenants[%d] and this record "
		       "still names it", d->s.tenants[tenant].name, ts->del[tenant]);
	return true;
}

/* The kept records of set @k, renumbered: @map[merged] = new index or NONE. */
static void *
compact(struct cfg_dl *d, int k, uint32_t *n_out, uint32_t **back)
{
	const struct cfg_dl_set *s = &d->set[k];
	char *out = calloc(s->n ? s->n : 1, s->sz);
	uint32_t n = 0;

	*back = malloc(sizeof(**back) * (s->n ? s->n : 1));
	if (!out || !*back) {
		free(out);
		d->ld.dg.oom = true;
		return NULL;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->del[i] >= 0)
			continue;
		memcpy(out + (size_t)n * s->sz, s->rec + (size_t)i * s->sz, s->sz);
		(*back)[n++] = i;
	}
	*n_out = n;
	return out;
}

static void
finish_tenants(struct cfg_dl *d, struct cfg *c, uint32_t *tmap)
{
	struct cfg_htab vni;
	uint32_t *back;

	c->tenants = compact(d, CFG_DK_TENANTS, &c->n_tenants, &back);
	if (!c->tenants || cfg_htab_init(&vni, c->n_tenants) < 0) {
		d->ld.dg.oom = true;
		free(back);
		return;
	}
	d->tback = back;
	for (uint32_t i = 0; i < d->set[0].n; i++)
		tmap[i] = NONE;
	for (uint32_t t = 0; t < c->n_tenants; t++) {
		struct cfg_tenant *ct = &c->tenants[t];
		int64_t j;

		tmap[back[t]] = t;
		ct->name = strdup(ct->name);
		ct->n_qps = 0;
		if (!ct->name)
			d->ld.dg.oom = true;
		j = cfg_htab_lookup(&vni, vni_hash(ct->vni), vni_match, c, &ct->vni);
		if (j >= 0)
			cfg_dl_rec_err(d, CFG_DK_TENANTS, back[t], "vni", "%" PRIu32 " is already the vni of "
				       "tenant \"%.64s\"", ct->vni, c->tenants[j].name);
		else if (cfg_htab_add(&vni, vni_hash(ct->vni), t) < 0)
			d->ld.dg.oom = true;
	}
	cfg_htab_free(&vni);
}

/* Ports and ACLs are the running ones; a deleted tenant may not keep either. */
static void
finish_ports_acls(struct cfg_dl *d, struct cfg *c, const uint32_t *tmap)
{
	const struct cfg *run = d->run;
	const struct cfg_dl_set *ts = &d->set[CFG_DK_TENANTS];
	struct cfg_path top = { .key = "delete" }, sec = { .up = &top, .key = "tenants" };

	c->ports = calloc(run->n_ports + 1, sizeof(*c->ports));
	c->acls = calloc(run->n_acls + 1, sizeof(*c->acls));
	if (!c->ports || !c->acls) {
		d->ld.dg.oom = true;
		return;
	}
	for (uint32_t i = 0; i < run->n_ports; i++) {
		struct cfg_port *p = &c->ports[i];

		*p = run->ports[i];
		p->name = strdup(p->name);
		p->device = strdup(p->device);
		c->n_ports++;
		if (!p->name || !p->device)
			d->ld.dg.oom = true;
		if (p->tenant < 0)
			continue;
		if (tmap[p->tenant] == NONE) {
			struct cfg_path ep = { .up = &sec, .idx = (uint32_t)ts->del[p->tenant] };

			d->ld.dg.rank = 0;
			cfg_err(&d->ld.dg, &ep, "tenant \"%.64s\" still has port \"%.64s\" (ports[%u])",
				d->s.tenants[p->tenant].name, p->name, i);
		}
		p->tenant = (int)tmap[p->tenant];
	}
	for (uint32_t i = 0; i < run->n_acls; i++) {
		struct cfg_acl *a = &c->acls[i];

		*a = run->acls[i];
		a->rules = malloc(sizeof(*a->rules) * (a->n_rules + 1));
		c->n_acls++;
		if (!a->rules) {
			a->n_rules = 0;
			d->ld.dg.oom = true;
			continue;
		}
		memcpy(a->rules, run->acls[i].rules, sizeof(*a->rules) * a->n_rules);
		if (tmap[a->tenant] == NONE) {
			struct cfg_path ep = { .up = &sec, .idx = (uint32_t)ts->del[a->tenant] };

			d->ld.dg.rank = 0;
			cfg_err(&d->ld.dg, &ep, "tenant \"%.64s\" still has an ACL (acls[%u])",
				d->s.tenants[a->tenant].name, i);
		}
		a->tenant = (int)tmap[a->tenant];
	}
}

/* A psrqn is used once per host. */
static void
check_srqs(struct cfg_dl *d, const struct cfg *c, const uint32_t *back)
{
	struct cfg_srq_index x;
	char ips[CFG_IP_STRLEN], hv[CFG_IP_STRLEN];

	if (cfg_srq_index_init(&x, c) < 0) {
		d->ld.dg.oom = true;
		return;
	}
	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		const struct cfg_endpoint *e = &c->endpoints[i];

		for (uint32_t s = 0; s < e->n_xrc_srqs; s++) {
			uint32_t hep, hs;
			int r = cfg_srq_index_claim(&x, i, s, &hep, &hs);

			if (r < 0)
				d->ld.dg.oom = true;
			else if (r > 0)
				cfg_dl_rec_err(d, CFG_DK_ENDPOINTS, back[i], "xrc_srqs", "psrqn %" PRIu32 " is already "
					       "used on host %s by the endpoint %s (its xrc_srqs[%" PRIu32 "])",
					       e->xrc_srqs[s].psrqn, cfg_ip_str(&e->host, ips),
					       cfg_ip_str(&c->endpoints[hep].vip, hv), hs);
		}
	}
	cfg_srq_index_free(&x);
}

static void
finish_endpoints(struct cfg_dl *d, struct cfg *c, const uint32_t *tmap, struct cfg_htab *ep_idx)
{
	uint32_t *back;

	c->endpoints = compact(d, CFG_DK_ENDPOINTS, &c->n_endpoints, &back);
	if (!c->endpoints || cfg_htab_init(ep_idx, c->n_endpoints) < 0) {
		d->ld.dg.oom = true;
		free(back);
		return;
	}
	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		struct cfg_endpoint *e = &c->endpoints[i];

		if (tenant_gone(d, CFG_DK_ENDPOINTS, back[i], e->tenant))
			continue;
		if (e->port >= 0) {
			const struct cfg_port *pt = &d->run->ports[e->port];

			if (pt->role != CFG_ROLE_TENANT)
				cfg_dl_rec_err(d, CFG_DK_ENDPOINTS, back[i], "port",
					       "\"%.64s\" is an uplink port, not a tenant port", pt->name);
			else if (pt->tenant >= 0 && pt->tenant != e->tenant)
				cfg_dl_rec_err(d, CFG_DK_ENDPOINTS, back[i], "port",
					       "port \"%.64s\" belongs to tenant \"%.64s\", not \"%.64s\"", pt->name,
					       d->s.tenants[pt->tenant].name, d->s.tenants[e->tenant].name);
		}
		e->tenant = (int)tmap[e->tenant];

		char ips[CFG_IP_STRLEN];
		const char *why = cfg_learning_host_check(c, e, ips);

		if (why)
			cfg_dl_rec_err(d, CFG_DK_ENDPOINTS, back[i], "host", "%s", why);

		struct key3 k = { e->tenant, &e->vip, 0 };

		if (cfg_htab_add(ep_idx, cfg_dl_key_hash(k.tenant, k.ip, 0), i) < 0)
			d->ld.dg.oom = true;
	}
	check_srqs(d, c, back);
	free(back);
}

static void
check_peers(struct cfg_dl *d, struct cfg *c, const uint32_t *back, const struct cfg_htab *qp_idx,
	    const struct cfg_htab *ep_idx)
{
	char ips[CFG_IP_STRLEN];

	for (uint32_t i = 0; i < c->n_qps; i++) {
		struct cfg_qp *q = &c->qps[i];
		struct key3 k = { q->tenant, &q->peer_vip, q->peer_vqpn };
		const char *why, *field;
		const struct cfg_qp *p;
		int64_t j;

		if (!q->has_peer || q->tenant < 0)
			continue;
		j = cfg_qp_half(q) ? -1 : cfg_htab_lookup(qp_idx, cfg_dl_key_hash(k.tenant, k.ip, k.id), qp_match, c, &k);
		p = j >= 0 ? &c->qps[j] : NULL;
		switch (cfg_qp_peer(c, q, p)) {
		case CFG_PEER_PAIR:
			q->peer = (int)j;
			break;
		case CFG_PEER_ALONE:
			/* Its source must be an endpoint; a deleted one is reported here, by the record's key. */
			k.id = 0;
			j = cfg_htab_lookup(ep_idx, cfg_dl_key_hash(k.tenant, k.ip, 0), ep_match, c, &k);
			if ((why = cfg_half_check(c, q, j >= 0, ips, &field)))
				cfg_dl_rec_err(d, CFG_DK_QPS, back[i], field, "%s", why);
			break;
		case CFG_PEER_SELF:
			cfg_dl_rec_err(d, CFG_DK_QPS, back[i], "peer", "a qp cannot be its own peer");
			break;
		case CFG_PEER_MISSING:
			cfg_dl_rec_err(d, CFG_DK_QPS, back[i], "peer", "%s qp %" PRIu32 " is not a qp of tenant "
				       "\"%.64s\"", cfg_ip_str(&q->peer_vip, ips), q->peer_vqpn,
				       c->tenants[q->tenant].name);
			break;
		case CFG_PEER_TYPE:
			cfg_dl_rec_err(d, CFG_DK_QPS, back[i], "peer", "the peer is a qp of type %s, not %s",
				       cfg_qp_type_names[p->type], cfg_qp_type_names[cfg_qp_peer_type(q->type)]);
			break;
		case CFG_PEER_NOT_BACK:
			cfg_dl_rec_err(d, CFG_DK_QPS, back[i], "peer", "the peer %s qp %" PRIu32 " does not name "
				       "this qp as its peer", cfg_ip_str(&p->vip, ips), p->vqpn);
			break;
		}
	}
}

static void
finish_qps(struct cfg_dl *d, struct cfg *c, const uint32_t *tmap, const struct cfg_htab *ep_idx)
{
	struct cfg_htab qp_idx, pq_idx;
	char ips[CFG_IP_STRLEN];
	uint32_t *back, *last_put;

	c->qps = compact(d, CFG_DK_QPS, &c->n_qps, &back);
	last_put = malloc(sizeof(*last_put) * (c->n_tenants + 1));
	if (!c->qps || !last_put || cfg_htab_init(&qp_idx, c->n_qps) < 0 || cfg_htab_init(&pq_idx, c->n_qps) < 0) {
		d->ld.dg.oom = true;
		free(back);
		free(last_put);
		return;
	}
	for (uint32_t t = 0; t < c->n_tenants; t++)
		last_put[t] = NONE;
	for (uint32_t i = 0; i < c->n_qps; i++) {
		struct cfg_qp *q = &c->qps[i];
		int64_t j;

		q->peer = -1;
		q->endpoint = -1;
		if (tenant_gone(d, CFG_DK_QPS, back[i], q->tenant)) {
			q->tenant = -1;
			continue;
		}
		q->tenant = (int)tmap[q->tenant];
		c->tenants[q->tenant].n_qps++;
		if (d->set[CFG_DK_QPS].origin[back[i]] >= 0)
			last_put[q->tenant] = i;

		struct key3 k = { q->tenant, &q->vip, q->vqpn };

		if (cfg_htab_add(&qp_idx, cfg_dl_key_hash(k.tenant, k.ip, k.id), i) < 0)
			d->ld.dg.oom = true;
		j = cfg_htab_lookup(ep_idx, cfg_dl_key_hash(k.tenant, k.ip, 0), ep_match, c, &k);
		if (j < 0) {
			cfg_dl_rec_err(d, CFG_DK_QPS, back[i], "vip", "%s is not an endpoint of tenant \"%.64s\"",
				       cfg_ip_str(&q->vip, ips), c->tenants[q->tenant].name);
			continue;
		}
		q->endpoint = (int)j;

		struct key3 h = { 0, &c->endpoints[j].host, q->pqpn };
		uint32_t hh = cfg_dl_key_hash(0, h.ip, h.id);

		j = cfg_htab_lookup(&pq_idx, hh, pqpn_match, c, &h);
		if (j >= 0)
			cfg_dl_rec_err(d, CFG_DK_QPS, back[i], "pqpn", "%" PRIu32 " is already used on host %s by "
				       "the qp %s %" PRIu32 " of tenant \"%.64s\"", q->pqpn, cfg_ip_str(h.ip, ips),
				       cfg_ip_str(&c->qps[j].vip, (char[CFG_IP_STRLEN]){ 0 }), c->qps[j].vqpn,
				       c->tenants[c->qps[j].tenant].name);
		else if (cfg_htab_add(&pq_idx, hh, i) < 0)
			d->ld.dg.oom = true;
	}
	for (uint32_t t = 0; t < c->n_tenants; t++) {
		const struct cfg_tenant *ct = &c->tenants[t];

		if (ct->n_qps <= ct->max_qps)
			continue;
		if (last_put[t] != NONE)
			cfg_dl_rec_err(d, CFG_DK_QPS, back[last_put[t]], "tenant", "tenant \"%.64s\" exceeds max_qps "
				       "%" PRIu32 " (%" PRIu32 " qps)", ct->name, ct->max_qps, ct->n_qps);
		else
			cfg_dl_rec_err(d, CFG_DK_TENANTS, d->tback[t], "max_qps", "%" PRIu32 " is below the tenant's %" PRIu32
				       " qps", ct->max_qps, ct->n_qps);
	}
	check_peers(d, c, back, &qp_idx, ep_idx);
	cfg_htab_free(&qp_idx);
	cfg_htab_free(&pq_idx);
	free(back);
	free(last_put);
}

static void
finish_mrs(struct cfg_dl *d, struct cfg *c, const uint32_t *tmap, const struct cfg_htab *ep_idx)
{
	char ips[CFG_IP_STRLEN];
	uint32_t *back;

	c->mrs = compact(d, CFG_DK_MRS, &c->n_mrs, &back);
	if (!c->mrs) {
		free(back);
		return;
	}
	for (uint32_t i = 0; i < c->n_mrs; i++) {
		struct cfg_mr *m = &c->mrs[i];
		int64_t j;

		if (tenant_gone(d, CFG_DK_MRS, back[i], m->tenant)) {
			m->tenant = -1;
			continue;
		}
		m->tenant = (int)tmap[m->tenant];

		struct key3 k = { m->tenant, &m->vip, 0 };

		j = cfg_htab_lookup(ep_idx, cfg_dl_key_hash(k.tenant, k.ip, 0), ep_match, c, &k);
		if (j < 0)
			cfg_dl_rec_err(d, CFG_DK_MRS, back[i], "vip", "%s is not an endpoint of tenant \"%.64s\"",
				       cfg_ip_str(&m->vip, ips), c->tenants[m->tenant].name);
		else
			m->endpoint = (int)j;
	}
	free(back);
}

struct cfg *
cfg_dl_finish(struct cfg_dl *d)
{
	const struct cfg *run = d->run;
	struct cfg *c = calloc(1, sizeof(*c));
	uint32_t *tmap = malloc(sizeof(*tmap) * (d->set[0].n + 1));
	struct cfg_htab ep_idx = { 0 };

	if (!c || !tmap) {
		free(c);
		free(tmap);
		d->ld.dg.oom = true;
		return NULL;
	}
	*c = *run;
	c->inc = NULL;
	c->tenants = NULL;
	c->ports = NULL;
	c->endpoints = NULL;
	c->qps = NULL;
	c->mrs = NULL;
	c->acls = NULL;
	c->n_tenants = c->n_ports = c->n_endpoints = c->n_qps = c->n_mrs = c->n_acls = 0;
	c->neighbors = malloc(sizeof(*c->neighbors) * (run->n_neighbors + 1));
	c->path = strdup(run->path);
	c->dcqcn.profile = run->dcqcn.profile ? strdup(run->dcqcn.profile) : NULL;
	if (!c->neighbors || !c->path || (run->dcqcn.profile && !c->dcqcn.profile)) {
		c->n_neighbors = 0;
		d->ld.dg.oom = true;
		goto out;
	}
	if (run->n_neighbors)   /* run->neighbors may be NULL then */
		memcpy(c->neighbors, run->neighbors, sizeof(*c->neighbors) * run->n_neighbors);
	finish_tenants(d, c, tmap);
	if (d->ld.dg.oom)
		goto out;
	finish_ports_acls(d, c, tmap);
	finish_endpoints(d, c, tmap, &ep_idx);
	if (d->ld.dg.oom)
		goto out;
	finish_qps(d, c, tmap, &ep_idx);
	finish_mrs(d, c, tmap, &ep_idx);
out:
	cfg_htab_free(&ep_idx);
	free(tmap);
	free(d->tback);
	d->tback = NULL;
	if (d->ld.dg.n_msg || d->ld.dg.oom) {
		cfg_free(c);
		return NULL;
	}
	return c;
}
