/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental changes to a running overlay (ovl_inc.h).
 *
 * The plan: every table key the batch touches gets one final value (a slot,
 * or OVL_NONE for a key that goes), kept in a private map per table, so a key
 * that is removed and put again in one batch (a connection whose peer
 * changed its pqpn) only has its value swapped at commit, and is never
 * missing.  New records are written into free slots before any key reaches
 * them; a record a key no longer reaches is retired, not touched, until the
 * grace period has passed.
 *
 * The phases follow the references: endpoints deleted, endpoints added, QPs
 * removed (deleted, or replaced: a replacement is a new record in a new
 * slot), QPs added, their peers resolved, the connections of every local QP
 * whose own record or peer changed rebuilt, MRs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl_inc_int.h"

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); goto fail; } while (0)

static struct ovl_key
ep_key(uint32_t tenant, const struct ovl_ip *vip)
{
	return ovl_key_make(vip->b, ovl_ip_len(vip), tenant, 0);
}

static struct ovl_key
ep_host_key(const struct ovl_endpoint *e)
{
	return ovl_key_make(e->host.b, ovl_ip_len(&e->host), e->tenant, OVL_EP_HOST);
}

static struct ovl_key
qp_key_cfg(const struct cfg_qp *q)
{
	struct ovl_ip vip;

	ovl_ip_from_cfg(&vip, &q->vip);
	return ovl_qp_key((uint32_t)q->tenant, &vip, q->vqpn);
}

static uint32_t
ep_slot_cfg(struct priv *p, struct ovl *h, int tenant, const struct cfg_ip *cvip)
{
	struct ovl_ip vip;
	struct ovl_key k;

	ovl_ip_from_cfg(&vip, cvip);
	k = ep_key((uint32_t)tenant, &vip);
	return oi_planned(p, h, T_EP, &k);
}

/* The keys of the SRQs of endpoint @e at slot @q (the fabric one only when local). */
static void
srq_keys(const struct ovl_endpoint *e, const struct ovl_srq *q, struct ovl_key *kv, struct ovl_key *kp)
{
	*kv = ovl_key_make(e->vip.b, ovl_ip_len(&e->vip), e->tenant, q->vsrqn);
	*kp = ovl_key_make(e->host.b, ovl_ip_len(&e->host), OVL_SPACE_SRQ, q->psrqn);
}

/* Endpoint @id goes: its keys, its SRQs, and who speaks for its host. */
static int
endpoint_remove(struct priv *p, struct ovl *h, uint32_t id)
{
	const struct ovl_endpoint *e = &h->endpoints[id];
	struct ovl_key k = ep_key(e->tenant, &e->vip), hk = ep_host_key(e), kv, kp;
	uint32_t next = OVL_NONE;

	if (oi_plan(p, T_EP, &k, OVL_NONE) || oi_retire(p, K_EP, id))
		return -1;
	if (oi_planned(p, h, T_EP, &hk) == id) {
		for (uint32_t i = 0; i < h->n_endpoints && next == OVL_NONE; i++) {
			const struct ovl_endpoint *o = &h->endpoints[i];

			if (i != id && ovl_live(o) && !oi_retiring(p, K_EP, i) && o->tenant == e->tenant &&
			    o->host.ver == e->host.ver && !memcmp(o->host.b, e->host.b, ovl_ip_len(&e->host)))
				next = i;
		}
		if (oi_plan(p, T_EP, &hk, next))
			return -1;
	}
	for (uint32_t i = 0; i < h->n_srqs; i++) {
		const struct ovl_srq *q = &h->srqs[i];

		if (!ovl_live(q) || q->endpoint != id)
			continue;
		srq_keys(e, q, &kv, &kp);
		if (oi_plan(p, T_SRQ, &kv, OVL_NONE) || (e->local && oi_plan(p, T_SRQ, &kp, OVL_NONE)) || oi_retire(p, K_SRQ, i))
			return -1;
	}
	h->live_endpoints--;
	return 0;
}

static int
endpoint_add(struct priv *p, struct ovl *h, const struct cfg *c, const struct cfg_endpoint *ce, char *err,
	     size_t err_len)
{
	uint32_t id = oi_slot_take(p, h, K_EP);
	struct ovl_endpoint *e;
	struct ovl_key k, kv, kp;

	if (id == OVL_NONE)
		FAIL("no room for another endpoint");
	e = &h->endpoints[id];
	if (ovl_endpoint_fill(h, c, ce, e, "endpoint", err, err_len) < 0)
		goto fail;
	k = ep_key(e->tenant, &e->vip);
	if (oi_plan(p, T_EP, &k, id))
		FAIL("out of memory");
	k = ep_host_key(e);
	if (oi_planned(p, h, T_EP, &k) == OVL_NONE && oi_plan(p, T_EP, &k, id))
		FAIL("out of memory");
	for (uint32_t j = 0; j < ce->n_xrc_srqs; j++) {
		uint32_t s = oi_slot_take(p, h, K_SRQ);
		struct ovl_srq *q;

		if (s == OVL_NONE)
			FAIL("no room for another XRC SRQ");
		q = &h->srqs[s];
		*q = (struct ovl_srq){ .endpoint = id, .vsrqn = ce->xrc_srqs[j].vsrqn, .psrqn = ce->xrc_srqs[j].psrqn };
		srq_keys(e, q, &kv, &kp);
		if (oi_plan(p, T_SRQ, &kv, s) || (e->local && oi_plan(p, T_SRQ, &kp, s)))
			FAIL("out of memory");
	}
	h->live_endpoints++;
	return 0;
fail:
	return -1;
}

static void
tenant_count(struct ovl *h, uint32_t t, int qps, int local, int capped)
{
	h->tenants[t].n_qps += (uint32_t)qps;
	h->tenants[t].n_local_qps += (uint32_t)local;
	h->tenants[t].n_capped += (uint32_t)capped;
}

/* Connection @id goes, and its keys, unless what is built later puts them again. */
static int
conn_drop(struct priv *p, struct ovl *h, uint32_t id)
{
	const struct ovl_conn *cn = &h->conns[id];
	struct ovl_key kt, kf;

	if (cn->half) {
		ovl_half_key(h, cn, &kt);
		return oi_plan(p, cn->half == OVL_HALF_OUT ? T_TENANT : T_FABRIC, &kt, OVL_NONE) ||
		       oi_retire(p, K_CONN, id);
	}
	ovl_conn_keys(h, cn, &kt, &kf);
	return oi_plan(p, T_TENANT, &kt, OVL_NONE) || oi_plan(p, T_FABRIC, &kf, OVL_NONE) || oi_retire(p, K_CONN, id);
}

/* QP @id goes (deleted, or replaced by a new record): its keys and its connection's. */
static int
qp_remove(struct priv *p, struct ovl *h, uint32_t id)
{
	const struct ovl_qp *q = &h->qps[id];
	struct ovl_key k = ovl_qp_key(q->tenant, &h->endpoints[q->endpoint].vip, q->vqpn), kt, kf;

	if (oi_plan(p, T_QP, &k, OVL_NONE) || oi_retire(p, K_QP, id))
		return -1;
	if (q->type == CFG_QP_UD) {
		ovl_qp_ud_keys(h, q, &kt, &kf);
		if (oi_plan(p, T_TENANT, &kt, OVL_NONE) || oi_plan(p, T_FABRIC, &kf, OVL_NONE))
			return -1;
	}
	if (q->conn != OVL_NONE && conn_drop(p, h, q->conn))
		return -1;
	tenant_count(h, q->tenant, -1, q->local ? -1 : 0, 0);
	h->live_qps--;
	return 0;
}

static int
qp_add(struct priv *p, struct ovl *h, const struct cfg_qp *cq, uint32_t *out, char *err, size_t err_len)
{
	uint32_t ep = ep_slot_cfg(p, h, cq->tenant, &cq->vip), id;
	struct ovl_key k = qp_key_cfg(cq), kt, kf;
	struct ovl_qp *q;

	if (ep == OVL_NONE)
		FAIL("a QP of an endpoint the overlay does not hold");
	if ((id = oi_slot_take(p, h, K_QP)) == OVL_NONE)
		FAIL("no room for another QP");
	q = &h->qps[id];
	ovl_qp_fill(h, cq, ep, cq->has_peer ? ep_slot_cfg(p, h, cq->tenant, &cq->peer_vip) : OVL_NONE, q);
	if (oi_plan(p, T_QP, &k, id))
		FAIL("out of memory");
	if (q->type == CFG_QP_UD) {
		const struct ovl_endpoint *e = &h->endpoints[ep];

		if (e->vip.ver != e->host.ver)
			FAIL("a UD QP on an endpoint whose vip and host are of different IP versions");
		ovl_qp_ud_keys(h, q, &kt, &kf);
		if (oi_plan(p, T_TENANT, &kt, OVL_V_QP | id) || oi_plan(p, T_FABRIC, &kf, OVL_V_QP | id))
			FAIL("out of memory");
	}
	tenant_count(h, q->tenant, 1, q->local ? 1 : 0, 0);
	h->live_qps++;
	*out = id;
	return 0;
fail:
	return -1;
}

/* Same R (by key) on both sides: the connection of @a and @b is one connection, changed. */
static bool
same_peer(const struct ovl *h, const struct ovl_conn *a, const struct ovl_conn *b)
{
	const struct ovl_qp *ra = &h->qps[a->r], *rb = &h->qps[b->r];
	const struct ovl_ip *va = &h->endpoints[ra->endpoint].vip, *vb = &h->endpoints[rb->endpoint].vip;

	return ra->vqpn == rb->vqpn && va->ver == vb->ver && !memcmp(va->b, vb->b, ovl_ip_len(va));
}

/* The connection of local QP @l toward @r, in a new slot; @old its previous one or OVL_NONE. */
static int
conn_build(struct priv *p, struct ovl_inc *oi, struct ovl *h, uint32_t l, uint32_t r, uint64_t rate, uint32_t old,
	   uint32_t *out, char *err, size_t err_len)
{
	uint32_t id = oi_slot_take(p, h, K_CONN);
	struct ovl_conn *cn;
	struct ovl_key kt, kf;

	if (id == OVL_NONE)
		FAIL("no room for another connection");
	cn = &h->conns[id];
	if (ovl_conn_fill(h, l, r, rate, cn, "qp", err, err_len) < 0)
		goto fail;
	ovl_conn_keys(h, cn, &kt, &kf);
	if (oi_plan(p, T_TENANT, &kt, OVL_V_CONN | id) || oi_plan(p, T_FABRIC, &kf, OVL_V_CONN | id))
		FAIL("out of memory");
	if (old != OVL_NONE && !same_peer(h, &h->conns[old], cn))
		old = OVL_NONE;
	if (old != OVL_NONE)
		oi_mark(p, M_CARRIED, old);
	if (oi_conn_push(oi, old, id))
		FAIL("out of memory");
	tenant_count(h, cn->tenant, 0, 0, (rate ? 1 : 0) - (old != OVL_NONE && h->conns[old].rate_bps ? 1 : 0));
	h->live_conns++;
	*out = id;
	return 0;
fail:
	return -1;
}

/*
 * The connection of QP @hq alone (a half, cfg_qp_alone()), if one of its
 * ends is on this host, into *@out (else OVL_NONE); @old the connection its
 * record had, carried on when it is the same half (the same kind, from the
 * same source).
 */
static int
half_build(struct priv *p, struct ovl_inc *oi, struct ovl *h, uint32_t hq, uint32_t old, uint32_t *out, char *err,
	   size_t err_len)
{
	const struct ovl_qp *q = &h->qps[hq];
	uint32_t se = q->peer_ep, id;
	struct ovl_conn *cn;
	struct ovl_key k;

	*out = OVL_NONE;
	if (se == OVL_NONE)
		FAIL("a half's source endpoint not found");
	if (!h->endpoints[se].local && !q->local)
		return 0;
	if ((id = oi_slot_take(p, h, K_CONN)) == OVL_NONE)
		FAIL("no room for another connection");
	cn = &h->conns[id];
	if (ovl_half_fill(h, hq, se, q->rate_bps, cn, "qp", err, err_len) < 0)
		goto fail;
	ovl_half_key(h, cn, &k);
	if (oi_plan(p, cn->half == OVL_HALF_OUT ? T_TENANT : T_FABRIC, &k, OVL_V_CONN | id))
		FAIL("out of memory");
	if (old != OVL_NONE && (h->conns[old].half != cn->half || h->conns[old].src_ep != se))
		old = OVL_NONE;
	if (old != OVL_NONE)
		oi_mark(p, M_CARRIED, old);
	if (oi_conn_push(oi, old, id))
		FAIL("out of memory");
	tenant_count(h, cn->tenant, 0, 0, (cn->rate_bps ? 1 : 0) - (old != OVL_NONE && h->conns[old].rate_bps ? 1 : 0));
	h->live_conns++;
	*out = id;
	return 0;
fail:
	return -1;
}

/* Does QP @q run alone (a half, or a learning tenant's end its peer does not name back)? */
static bool
alone(const struct ovl_qp *q)
{
	return q->peer_ep != OVL_NONE && q->peer == OVL_NONE;
}

/* Is running QP @q among the fixups, the running QPs whose peer changes? */
static bool
fixed(const struct priv *p, uint32_t q)
{
	for (uint32_t f = 0; f < p->n_fix; f++)
		if (p->fix[f].qp == q)
			return true;
	return false;
}

static int
fix_push(struct priv *p, uint32_t q, uint32_t peer)
{
	if (oi_grow((void **)&p->fix, &p->cap_fix, p->n_fix, sizeof(*p->fix)))
		return -1;
	p->fix[p->n_fix++] = (struct fixup){ .qp = q, .peer = peer };
	return 0;
}

/*
 * The QPs of the batch: removed (deleted, or replaced: a replacement is a new
 * record in a new slot), added, their peers resolved (a new QP and the record
 * it names pair when they name each other; a learning tenant's end that is
 * not named back runs alone), the running QPs whose pair comes or goes found
 * (the fixups), their old connections dropped, then the connections of the
 * new QPs and of the fixups built.
 */
static int
qps_change(struct priv *p, struct ovl_inc *oi, struct ovl *h, const struct cfg_inc *ci, char *err, size_t err_len)
{
	uint32_t *new_qp = calloc(ci->n + 1, sizeof(*new_qp)), *old_conn = calloc(ci->n + 1, sizeof(*old_conn));
	uint32_t *old_peer = calloc(ci->n + 1, sizeof(*old_peer)), *fix_old = NULL, *new_conn = NULL, id;
	int rc = -1;

	if (!new_qp || !old_conn || !old_peer)
		FAIL("out of memory");
	for (uint32_t i = 0; i < ci->n; i++) {
		const struct cfg_inc_change *ch = &ci->ch[i];
		struct ovl_key k;

		old_conn[i] = old_peer[i] = OVL_NONE;
		if (ch->kind != CFG_DK_QPS || ch->op == CFG_INC_ADD)
			continue;
		k = qp_key_cfg(&ch->old.qp);
		id = oi_planned(p, h, T_QP, &k);
		if (id == OVL_NONE)
			FAIL("qp to remove not found");
		old_conn[i] = h->qps[id].conn;
		old_peer[i] = h->qps[id].peer;
		if (qp_remove(p, h, id))
			FAIL("out of memory");
	}
	for (uint32_t i = 0; i < ci->n; i++) {
		const struct cfg_inc_change *ch = &ci->ch[i];

		new_qp[i] = OVL_NONE;
		if (ch->kind != CFG_DK_QPS || ch->op == CFG_INC_DELETE)
			continue;
		if (qp_add(p, h, &ch->new.qp, &new_qp[i], err, err_len))
			goto fail;
	}
	/* Peers: a new QP and the record it names, when that names it back (a configured pair always does). */
	for (uint32_t i = 0; i < ci->n; i++) {
		const struct cfg_inc_change *ch = &ci->ch[i];
		struct ovl_qp *q;
		struct ovl_key k;
		struct ovl_ip pv;
		uint32_t r;

		if (new_qp[i] == OVL_NONE || !ch->new.qp.has_peer || cfg_qp_half(&ch->new.qp))
			continue;
		q = &h->qps[new_qp[i]];
		ovl_ip_from_cfg(&pv, &ch->new.qp.peer_vip);
		k = ovl_qp_key(q->tenant, &pv, ch->new.qp.peer_vqpn);
		r = oi_planned(p, h, T_QP, &k);
		if (r == OVL_NONE || !ovl_qp_names_back(h, new_qp[i], r)) {
			if (h->tenants[q->tenant].qp_learning)
				continue;       /* alone */
			FAIL("a QP's peer not found");
		}
		q->peer = r;
		/* A running peer points at this record now (the one it replaces, or none before). */
		if (!oi_marked(p, M_NEW_QP, r) && fix_push(p, r, new_qp[i]))
			FAIL("out of memory");
	}
	/* Running QPs whose peer went, and that no new record pairs with: alone. */
	for (uint32_t i = 0; i < ci->n; i++)
		if (old_peer[i] != OVL_NONE && !oi_retiring(p, K_QP, old_peer[i]) && !fixed(p, old_peer[i]) &&
		    fix_push(p, old_peer[i], OVL_NONE))
			FAIL("out of memory");
	/* Their connections go first, keys included, so that what is built below keeps its keys. */
	fix_old = calloc(p->n_fix + 1, sizeof(*fix_old));
	new_conn = calloc(p->n_fix + 1, sizeof(*new_conn));
	if (!fix_old || !new_conn)
		FAIL("out of memory");
	for (uint32_t f = 0; f < p->n_fix; f++) {
		fix_old[f] = h->qps[p->fix[f].qp].conn;
		if (fix_old[f] != OVL_NONE && conn_drop(p, h, fix_old[f]))
			FAIL("out of memory");
	}
	/* Connections: new QPs alone or local with a peer, then the fixups. */
	for (uint32_t i = 0; i < ci->n; i++) {
		struct ovl_qp *q;
		uint32_t old = ci->ch[i].op == CFG_INC_REPLACE ? old_conn[i] : OVL_NONE;

		if (new_qp[i] == OVL_NONE)
			continue;
		q = &h->qps[new_qp[i]];
		if (alone(q) ? half_build(p, oi, h, new_qp[i], old, &q->conn, err, err_len) :
		    q->local && q->peer != OVL_NONE &&
		    conn_build(p, oi, h, new_qp[i], q->peer, q->rate_bps, old, &q->conn, err, err_len))
			goto fail;
	}
	for (uint32_t f = 0; f < p->n_fix; f++) {
		uint32_t qi = p->fix[f].qp, peer = p->fix[f].peer;
		const struct ovl_qp *q = &h->qps[qi];

		new_conn[f] = OVL_NONE;
		if (peer == OVL_NONE ? half_build(p, oi, h, qi, fix_old[f], &new_conn[f], err, err_len) :
		    q->local && conn_build(p, oi, h, qi, peer, q->rate_bps, fix_old[f], &new_conn[f], err, err_len))
			goto fail;
	}
	p->conn_of_new = new_conn;
	new_conn = NULL;
	rc = 0;
fail:
	free(new_qp);
	free(old_conn);
	free(old_peer);
	free(fix_old);
	free(new_conn);
	return rc;
}

int
ovl_inc_prepare(struct ovl *o, const struct cfg *c, const struct cfg_inc *ci, struct ovl_inc *oi, char *err,
		size_t err_len)
{
	struct priv *p = calloc(1, sizeof(*p));
	struct ovl *h = malloc(sizeof(*h));

	memset(oi, 0, sizeof(*oi));
	oi->priv = p;
	if (h)
		*h = *o;
	oi->hdr = h;
	if (!p || !h)
		FAIL("out of memory");
	h->tenants = malloc(sizeof(*h->tenants) * (c->n_tenants + 1));
	h->ports = malloc(sizeof(*h->ports) * (c->n_ports + 1));
	if (!h->tenants || !h->ports)
		FAIL("out of memory");
	if (c->n_tenants != o->n_tenants || c->n_ports != o->n_ports)
		FAIL("tenants or ports changed");
	memcpy(h->tenants, o->tenants, sizeof(*h->tenants) * o->n_tenants);
	memcpy(h->ports, o->ports, sizeof(*h->ports) * o->n_ports);
	if (ovl_header_fill(h, c, err, err_len) < 0)
		goto fail;
	/* A batch the store has no room for is known at once (a reload that changes everything). */
	uint32_t puts = 0;

	for (uint32_t i = 0; i < ci->n; i++)
		puts += ci->ch[i].kind == CFG_DK_QPS && ci->ch[i].op != CFG_INC_DELETE;
	if (puts > h->store->qps.n_free + (h->store->qps.cap - h->n_qps))
		FAIL("no room for %u more QPs", puts);
	if (oi_priv_init(p, h, ci->n))
		FAIL("out of memory");

	/* Endpoints deleted, then added (a key deleted and put again ends put). */
	for (uint32_t i = 0; i < ci->n; i++) {
		const struct cfg_inc_change *ch = &ci->ch[i];
		uint32_t id;

		if (ch->kind != CFG_DK_ENDPOINTS || ch->op != CFG_INC_DELETE)
			continue;
		id = ep_slot_cfg(p, h, ch->old.ep.tenant, &ch->old.ep.vip);
		if (id == OVL_NONE || endpoint_remove(p, h, id))
			FAIL("endpoint to delete not found");
	}
	for (uint32_t i = 0; i < ci->n; i++) {
		const struct cfg_inc_change *ch = &ci->ch[i];

		if (ch->kind == CFG_DK_ENDPOINTS && ch->op == CFG_INC_REPLACE)
			FAIL("an endpoint modified");
		if (ch->kind == CFG_DK_ENDPOINTS && ch->op == CFG_INC_ADD && endpoint_add(p, h, c, &ch->new.ep, err, err_len))
			goto fail;
	}
	if (qps_change(p, oi, h, ci, err, err_len))
		goto fail;
	/* Connections of removed QPs that no new record carries on: removed. */
	for (uint32_t i = 0; i < p->n_retire[K_CONN]; i++) {
		uint32_t from = p->retire[K_CONN][i];

		if (!oi_marked(p, M_CARRIED, from)) {
			if (oi_conn_push(oi, from, OVL_NONE))
				FAIL("out of memory");
			tenant_count(h, h->conns[from].tenant, 0, 0, h->conns[from].rate_bps ? -1 : 0);
		}
		h->live_conns--;
	}
	/* MRs: only those of local endpoints are in the overlay. */
	for (uint32_t i = 0; i < ci->n; i++) {
		const struct cfg_inc_change *ch = &ci->ch[i];
		struct ovl_key k;

		if (ch->kind != CFG_DK_MRS)
			continue;
		if (ch->op != CFG_INC_ADD) {
			const struct cfg_mr *m = &ch->old.mr;
			struct ovl_ip vip;
			uint32_t ep, id;

			ovl_ip_from_cfg(&vip, &m->vip);
			k = ep_key((uint32_t)m->tenant, &vip);
			ep = ovl_table_lookup(&o->by_ep, &k);
			if (ep == OVL_NONE)
				FAIL("an MR's endpoint not found");
			if (h->endpoints[ep].local) {
				k = ovl_key_make(vip.b, ovl_ip_len(&vip), (uint32_t)m->tenant, m->rkey);
				id = oi_planned(p, h, T_MR, &k);
				if (id == OVL_NONE || oi_plan(p, T_MR, &k, OVL_NONE) || oi_retire(p, K_MR, id))
					FAIL("an MR to remove not found");
				h->live_mrs--;
			}
		}
		if (ch->op != CFG_INC_DELETE) {
			const struct cfg_mr *m = &ch->new.mr;
			uint32_t ep = ep_slot_cfg(p, h, m->tenant, &m->vip), id;

			if (ep == OVL_NONE)
				FAIL("an MR's endpoint not found");
			if (!h->endpoints[ep].local)
				continue;
			if ((id = oi_slot_take(p, h, K_MR)) == OVL_NONE)
				FAIL("no room for another MR");
			ovl_mr_fill(m, ep, &h->mrs[id]);
			k = ovl_key_make(h->endpoints[ep].vip.b, ovl_ip_len(&h->endpoints[ep].vip), (uint32_t)m->tenant, m->rkey);
			if (oi_plan(p, T_MR, &k, id))
				FAIL("out of memory");
			h->live_mrs++;
		}
	}
	if (p->marks_full || oi_tables_full(p, h))
		FAIL("a table would be too full");
	return 0;
fail:
	ovl_inc_abort(oi);
	return -1;
}
