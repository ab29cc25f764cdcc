/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental overlay changes (overlay/ovl_inc.h) against the whole build:
 * a seeded random walk of configurations (RC pairs local-remote, hairpin and
 * remote-remote, UD QPs, learned halves from any endpoint to any other, paired
 * by RDMA-CM or naming a QPN alone and coming apart again, MRs, a
 * pqpn or rate changed on one side, endpoints with XRC SRQs coming and going) is applied step by step to one overlay in
 * place, and after every step each lookup the lcores make (by_tenant,
 * by_fabric, by_mr, by_ep, by_srq) must give what ovl_build() of the same
 * configuration gives: the same connection record (rewrites, ACL verdicts,
 * cap), QP, MR, endpoint and SRQ, and no key more.  Slots are reclaimed
 * between steps, as after the data plane's grace period, so freed slots and
 * tombstones are reused; when the store has no room the step is rebuilt, as
 * the data plane does.  The change lists are made here, by key, from the two
 * configurations.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cu_run.h"
#include "ovl_inc.h"

#define N_EP 8          /* fixed endpoints: 0-3 local (10.0.0.1), 4-7 remote (10.0.0.2) */
#define MAX_PAIRS 48
#define MAX_UD 12
#define MAX_MR 16
#define MAX_HALF 16

struct pair {
	int a, b;               /* endpoints */
	unsigned va, vb, pa, pb;
	unsigned rate_mbps;     /* on a, 0: none */
	bool live;
};

struct ud {
	int ep;
	unsigned v, p;
	bool live;
};

/*
 * A learned QP: endpoint src sends to (dst, v), whose host gave it pqpn p;
 * pv, when not 0, is src's own QPN, which the record names (a pair when
 * src's record (src, pv) names this one back, else alone).
 */
struct half {
	int src, dst;
	unsigned v, p, rate_mbps, pv;
	bool live;
};

struct mr {
	int ep;
	unsigned rkey, taddr;
	bool live;
};

static struct {
	struct pair pair[MAX_PAIRS];
	struct ud ud[MAX_UD];
	struct mr mr[MAX_MR];
	struct half half[MAX_HALF];
	bool extra_ep[2];       /* 192.168.1.50 local with an XRC SRQ, 192.168.1.60 remote */
	unsigned next_v, next_p;
	unsigned rnd;
} w;

static unsigned
rnd(unsigned n)
{
	w.rnd = w.rnd * 1103515245u + 12345u;
	return (w.rnd >> 8) % n;
}

static void
ep_vip(int e, char *buf)
{
	sprintf(buf, "192.168.1.%d", e < 4 ? e + 1 : e + 7);
}

static size_t
emit(char *j, size_t n, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static size_t
emit(char *j, size_t n, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	n += (size_t)vsnprintf(j + n, cap - n, fmt, ap);
	va_end(ap);
	return n;
}

static size_t
qp_json(char *j, size_t n, size_t cap, int ep, unsigned v, unsigned p, const char *type, int peer, unsigned pv,
	unsigned rate)
{
	char vip[32], pvip[32];

	ep_vip(ep, vip);
	n = emit(j, n, cap, "%s{\"tenant\": \"blue\", \"vip\": \"%s\", \"vqpn\": %u, \"pqpn\": %u, \"type\": \"%s\"",
		 j[n - 1] == '[' ? "" : ", ", vip, v, p, type);
	if (peer >= 0) {
		ep_vip(peer, pvip);
		if (pv)
			n = emit(j, n, cap, ", \"peer\": {\"vip\": \"%s\", \"vqpn\": %u}", pvip, pv);
		else    /* a half */
			n = emit(j, n, cap, ", \"peer\": {\"vip\": \"%s\"}", pvip);
	}
	if (rate)
		n = emit(j, n, cap, ", \"rate\": {\"gbps\": %u.%03u}", rate / 1000, rate % 1000);
	return emit(j, n, cap, "}");
}

static struct cfg *
world_cfg(void)
{
	size_t cap = 1 << 16, n = 0;
	char *j = malloc(cap), vip[32];
	struct cfg_errors errs = { 0 };
	struct cfg *c;

	n = emit(j, n, cap, "{\"version\": 1, \"ports\": ["
		 "{\"name\": \"up\", \"device\": \"net_null0\", \"role\": \"uplink\", \"ip\": \"10.0.0.1\", "
		 "\"mac\": \"02:00:00:00:00:01\"},"
		 "{\"name\": \"vm\", \"device\": \"net_null1\", \"role\": \"tenant\", \"tenant\": \"blue\", "
		 "\"mac\": \"02:00:00:00:01:01\"}],"
		 "\"tenants\": [{\"name\": \"blue\", \"vni\": 100, \"qp_learning\": true}],"
		 "\"acls\": [{\"tenant\": \"blue\", \"rules\": [{\"action\": \"deny\", \"src\": \"192.168.1.3/32\", "
		 "\"ops\": [\"write\"]}]}],"
		 "\"endpoints\": [");
	for (int e = 0; e < N_EP; e++) {
		ep_vip(e, vip);
		if (e < 4)
			n = emit(j, n, cap, "%s{\"tenant\": \"blue\", \"vip\": \"%s\", \"host\": \"10.0.0.1\", "
				 "\"port\": \"vm\", \"mac\": \"02:00:00:00:aa:%02x\"}", e ? ", " : "", vip, e);
		else
			n = emit(j, n, cap, ", {\"tenant\": \"blue\", \"vip\": \"%s\", \"host\": \"10.0.0.2\"}", vip);
	}
	if (w.extra_ep[0])
		n = emit(j, n, cap, ", {\"tenant\": \"blue\", \"vip\": \"192.168.1.50\", \"host\": \"10.0.0.1\", "
			 "\"port\": \"vm\", \"mac\": \"02:00:00:00:aa:50\", \"xrc_srqs\": [{\"vsrqn\": 7, \"psrqn\": 9007}]}");
	if (w.extra_ep[1])
		n = emit(j, n, cap, ", {\"tenant\": \"blue\", \"vip\": \"192.168.1.60\", \"host\": \"10.0.0.2\", "
			 "\"xrc_srqs\": [{\"vsrqn\": 8, \"psrqn\": 9008}]}");
	n = emit(j, n, cap, "], \"qps\": [");
	for (int i = 0; i < MAX_PAIRS; i++) {
		const struct pair *p = &w.pair[i];

		if (!p->live)
			continue;
		n = qp_json(j, n, cap, p->a, p->va, p->pa, "rc", p->b, p->vb, p->rate_mbps);
		n = qp_json(j, n, cap, p->b, p->vb, p->pb, "rc", p->a, p->va, 0);
	}
	for (int i = 0; i < MAX_UD; i++)
		if (w.ud[i].live)
			n = qp_json(j, n, cap, w.ud[i].ep, w.ud[i].v, w.ud[i].p, "ud", -1, 0, 0);
	for (int i = 0; i < MAX_HALF; i++)
		if (w.half[i].live)
			n = qp_json(j, n, cap, w.half[i].dst, w.half[i].v, w.half[i].p, "rc", w.half[i].src, w.half[i].pv,
				    w.half[i].rate_mbps);
	n = emit(j, n, cap, "], \"mrs\": [");
	for (int i = 0, first = 1; i < MAX_MR; i++) {
		if (!w.mr[i].live)
			continue;
		ep_vip(w.mr[i].ep, vip);
		n = emit(j, n, cap, "%s{\"tenant\": \"blue\", \"vip\": \"%s\", \"rkey\": %u, \"addr\": 4096, "
			 "\"length\": 65536, \"target_rkey\": %u, \"target_addr\": %u, \"access\": [\"remote_read\"]}",
			 first ? "" : ", ", vip, w.mr[i].rkey, w.mr[i].rkey + 1000, w.mr[i].taddr);
		first = 0;
	}
	n = emit(j, n, cap, "], \"neighbors\": [{\"ip\": \"10.0.0.2\", \"mac\": \"02:00:00:00:00:02\"}]}");
	CU_ASSERT_FATAL(n < cap);
	c = cfg_load_string(j, "world.json", &errs);
	if (!c)
		cfg_errors_print(&errs, stderr);
	free(j);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	return c;
}

/* One random step of the world. */
static void
world_step(void)
{
	unsigned ops = 1 + rnd(6);

	for (unsigned k = 0; k < ops; k++) {
		unsigned what = rnd(13), i, j;

		switch (what) {
		case 0: case 1: /* add a pair: local-remote, hairpin or remote-remote */
			i = rnd(MAX_PAIRS);
			if (w.pair[i].live)
				break;
			w.pair[i] = (struct pair){ .a = (int)rnd(N_EP), .b = (int)rnd(N_EP), .va = w.next_v++,
						   .vb = w.next_v++, .pa = w.next_p++, .pb = w.next_p++,
						   .rate_mbps = rnd(3) ? 0 : 100 + rnd(900), .live = true };
			break;
		case 2: /* delete a pair */
			w.pair[rnd(MAX_PAIRS)].live = false;
			break;
		case 3: /* one side's pqpn changes */
			i = rnd(MAX_PAIRS);
			if (rnd(2))
				w.pair[i].pa = w.next_p++;
			else
				w.pair[i].pb = w.next_p++;
			break;
		case 4: /* a cap */
			w.pair[rnd(MAX_PAIRS)].rate_mbps = rnd(2) ? 0 : 100 + rnd(900);
			break;
		case 5: /* a UD QP comes or goes */
			i = rnd(MAX_UD);
			if (w.ud[i].live)
				w.ud[i].live = false;
			else
				w.ud[i] = (struct ud){ .ep = (int)rnd(N_EP), .v = w.next_v++, .p = w.next_p++, .live = true };
			break;
		case 6: case 7: /* an MR comes, goes or moves */
			i = rnd(MAX_MR);
			if (w.mr[i].live && rnd(2))
				w.mr[i].live = false;
			else if (w.mr[i].live)
				w.mr[i].taddr += 4096;
			else
				w.mr[i] = (struct mr){ .ep = (int)rnd(N_EP), .rkey = 0x100 + i, .taddr = 8192, .live = true };
			break;
		case 8: /* a half comes, goes, or its owner gives it another pqpn */
			i = rnd(MAX_HALF);
			if (w.half[i].live && rnd(2))
				w.half[i].live = false;
			else if (w.half[i].live)
				w.half[i].p = w.next_p++;
			else
				w.half[i] = (struct half){ .src = (int)rnd(N_EP), .dst = (int)rnd(N_EP), .v = w.next_v++,
							   .p = w.next_p++, .rate_mbps = rnd(3) ? 0 : 100 + rnd(900),
							   .live = true };
			break;
		case 11: /* a half gets its reverse, both naming each other (a pair), or only one of them (alone) */
			i = rnd(MAX_HALF);
			j = rnd(MAX_HALF);
			if (!w.half[i].live || w.half[j].live || i == j)
				break;
			w.half[j] = (struct half){ .src = w.half[i].dst, .dst = w.half[i].src, .v = w.next_v++,
						   .p = w.next_p++, .pv = rnd(4) ? w.half[i].v : 0, .live = true };
			w.half[i].pv = rnd(4) ? w.half[j].v : w.next_v++;
			break;
		case 12: /* a record no longer names its source's QPN: its pair, if any, comes apart */
			w.half[rnd(MAX_HALF)].pv = 0;
			break;
		default: /* an endpoint (with an XRC SRQ, no QPs) comes or goes */
			i = rnd(2);
			w.extra_ep[i] = !w.extra_ep[i];
			break;
		}
	}
}

/* Records by key across two configurations: the change list of A -> B. */
static bool
ep_same_key(const struct cfg_endpoint *a, const struct cfg_endpoint *b)
{
	return a->tenant == b->tenant && cfg_ip_equal(&a->vip, &b->vip);
}

static bool
qp_same_key(const struct cfg_qp *a, const struct cfg_qp *b)
{
	return a->tenant == b->tenant && a->vqpn == b->vqpn && cfg_ip_equal(&a->vip, &b->vip);
}

static bool
mr_same_key(const struct cfg_mr *a, const struct cfg_mr *b)
{
	return a->tenant == b->tenant && a->rkey == b->rkey && cfg_ip_equal(&a->vip, &b->vip);
}

static bool
qp_same(const struct cfg_qp *a, const struct cfg_qp *b)
{
	return a->pqpn == b->pqpn && a->type == b->type && a->has_peer == b->has_peer &&
	       a->has_peer_vqpn == b->has_peer_vqpn &&
	       (!a->has_peer || (a->peer_vqpn == b->peer_vqpn && cfg_ip_equal(&a->peer_vip, &b->peer_vip))) &&
	       a->rate.set == b->rate.set && a->rate.bps == b->rate.bps;
}

static bool
mr_same(const struct cfg_mr *a, const struct cfg_mr *b)
{
	return a->addr == b->addr && a->length == b->length && a->target_rkey == b->target_rkey &&
	       a->target_addr == b->target_addr && a->access == b->access;
}

static void
push(struct cfg_inc *ci, int kind, int op, const void *old, const void *new, size_t sz)
{
	struct cfg_inc_change *ch;

	if (ci->n == ci->cap) {
		ci->cap = ci->cap ? 2 * ci->cap : 64;
		ci->ch = realloc(ci->ch, sizeof(*ci->ch) * ci->cap);
	}
	ch = &ci->ch[ci->n++];
	memset(ch, 0, sizeof(*ch));
	ch->kind = (uint8_t)kind;
	ch->op = (uint8_t)op;
	if (old)
		memcpy(&ch->old, old, sz);
	if (new)
		memcpy(&ch->new, new, sz);
}

static void
diff(const struct cfg *a, const struct cfg *b, struct cfg_inc *ci)
{
	memset(ci, 0, sizeof(*ci));
	for (uint32_t i = 0; i < b->n_endpoints; i++) {
		bool found = false;

		for (uint32_t k = 0; k < a->n_endpoints && !found; k++)
			found = ep_same_key(&a->endpoints[k], &b->endpoints[i]);
		if (!found)
			push(ci, CFG_DK_ENDPOINTS, CFG_INC_ADD, NULL, &b->endpoints[i], sizeof(b->endpoints[i]));
	}
	for (uint32_t i = 0; i < a->n_qps; i++) {
		const struct cfg_qp *m = NULL;

		for (uint32_t k = 0; k < b->n_qps && !m; k++)
			if (qp_same_key(&a->qps[i], &b->qps[k]))
				m = &b->qps[k];
		if (!m)
			push(ci, CFG_DK_QPS, CFG_INC_DELETE, &a->qps[i], NULL, sizeof(*m));
		else if (!qp_same(&a->qps[i], m))
			push(ci, CFG_DK_QPS, CFG_INC_REPLACE, &a->qps[i], m, sizeof(*m));
	}
	for (uint32_t i = 0; i < b->n_qps; i++) {
		bool found = false;

		for (uint32_t k = 0; k < a->n_qps && !found; k++)
			found = qp_same_key(&a->qps[k], &b->qps[i]);
		if (!found)
			push(ci, CFG_DK_QPS, CFG_INC_ADD, NULL, &b->qps[i], sizeof(b->qps[i]));
	}
	for (uint32_t i = 0; i < a->n_mrs; i++) {
		const struct cfg_mr *m = NULL;

		for (uint32_t k = 0; k < b->n_mrs && !m; k++)
			if (mr_same_key(&a->mrs[i], &b->mrs[k]))
				m = &b->mrs[k];
		if (!m)
			push(ci, CFG_DK_MRS, CFG_INC_DELETE, &a->mrs[i], NULL, sizeof(*m));
		else if (!mr_same(&a->mrs[i], m))
			push(ci, CFG_DK_MRS, CFG_INC_REPLACE, &a->mrs[i], m, sizeof(*m));
	}
	for (uint32_t i = 0; i < b->n_mrs; i++) {
		bool found = false;

		for (uint32_t k = 0; k < a->n_mrs && !found; k++)
			found = mr_same_key(&a->mrs[k], &b->mrs[i]);
		if (!found)
			push(ci, CFG_DK_MRS, CFG_INC_ADD, NULL, &b->mrs[i], sizeof(b->mrs[i]));
	}
	for (uint32_t i = 0; i < a->n_endpoints; i++) {
		bool found = false;

		for (uint32_t k = 0; k < b->n_endpoints && !found; k++)
			found = ep_same_key(&a->endpoints[i], &b->endpoints[k]);
		if (!found)
			push(ci, CFG_DK_ENDPOINTS, CFG_INC_DELETE, &a->endpoints[i], NULL, sizeof(a->endpoints[i]));
	}
}

static unsigned checks;

#define SAME(cond) do { checks++; CU_ASSERT(cond); if (!(cond)) return false; } while (0)

static bool
conn_equal(const struct ovl *x, const struct ovl_conn *a, const struct ovl *y, const struct ovl_conn *b)
{
	SAME(!memcmp(&a->egress, &b->egress, sizeof(a->egress)));
	SAME(!memcmp(&a->ingress, &b->ingress, sizeof(a->ingress)));
	SAME(!memcmp(a->l_vip, b->l_vip, 16) && !memcmp(a->l_mac, b->l_mac, 6) && !memcmp(a->r_host, b->r_host, 16));
	SAME(a->l_port == b->l_port && a->l_type == b->l_type && a->hairpin == b->hairpin && a->tenant == b->tenant);
	SAME(!memcmp(a->acl_allow, b->acl_allow, 2) && a->acl_block == b->acl_block &&
	     !memcmp(a->acl_rule, b->acl_rule, sizeof(a->acl_rule)) && a->rate_bps == b->rate_bps);
	SAME(x->qps[a->l].vqpn == y->qps[b->l].vqpn && x->qps[a->l].pqpn == y->qps[b->l].pqpn);
	SAME(x->qps[a->r].vqpn == y->qps[b->r].vqpn && x->qps[a->r].pqpn == y->qps[b->r].pqpn);
	SAME(x->qps[a->l].conn == (uint32_t)(a - x->conns) && ovl_live(a));
	SAME(a->half == b->half);
	if (a->half) {
		/* A half: l and r are its QP; its source endpoint is the other end. */
		SAME(a->l == a->r && x->qps[a->l].peer == OVL_NONE && ovl_live(&x->qps[a->l]));
		SAME(!memcmp(&x->endpoints[a->src_ep].vip, &y->endpoints[b->src_ep].vip, sizeof(struct ovl_ip)));
		return true;
	}
	SAME(x->qps[a->l].peer == a->r && ovl_live(&x->qps[a->l]) && ovl_live(&x->qps[a->r]));
	return true;
}

/* Every key of @y's table @ty is in @x's table @tx with an equal record, and no key more. */
static bool
tables_equal(const struct ovl *x, const struct ovl_table *tx, const struct ovl *y, const struct ovl_table *ty,
	     int kind)
{
	uint32_t live = 0;

	for (uint32_t i = 0; i <= ty->mask; i++) {
		const struct ovl_slot *s = &ty->slots[i];
		uint32_t v;

		if (!(s->sig & 1))
			continue;
		v = ovl_table_lookup(tx, &s->key);
		SAME(v != OVL_NONE);
		if (kind == 0 && !(s->val & OVL_V_QP)) {
			SAME(!(v & OVL_V_QP));
			if (!conn_equal(x, &x->conns[OVL_V_IDX(v)], y, &y->conns[OVL_V_IDX(s->val)]))
				return false;
		} else if (kind == 0) {
			const struct ovl_qp *a = &x->qps[OVL_V_IDX(v)], *b = &y->qps[OVL_V_IDX(s->val)];

			SAME((v & OVL_V_QP) && a->vqpn == b->vqpn && a->pqpn == b->pqpn && a->local == b->local &&
			     ovl_live(a));
			SAME(!memcmp(&x->endpoints[a->endpoint].vip, &y->endpoints[b->endpoint].vip, sizeof(struct ovl_ip)));
		} else if (kind == 1) {
			const struct ovl_mr *a = &x->mrs[v], *b = &y->mrs[s->val];

			SAME(a->rkey == b->rkey && a->addr == b->addr && a->length == b->length && ovl_live(a) &&
			     a->target_rkey == b->target_rkey && a->target_addr == b->target_addr && a->access == b->access);
		} else if (kind == 2) {
			const struct ovl_endpoint *a = &x->endpoints[v], *b = &y->endpoints[s->val];

			SAME(!memcmp(a->eth, b->eth, 12) && a->out_port == b->out_port && a->local == b->local &&
			     a->reachable == b->reachable && !memcmp(&a->vip, &b->vip, sizeof(a->vip)) && ovl_live(a));
		} else {
			const struct ovl_srq *a = &x->srqs[v], *b = &y->srqs[s->val];

			SAME(a->vsrqn == b->vsrqn && a->psrqn == b->psrqn && ovl_live(a));
			SAME(!memcmp(&x->endpoints[a->endpoint].vip, &y->endpoints[b->endpoint].vip, sizeof(struct ovl_ip)));
		}
		live++;
	}
	SAME(tx->n == live);
	return true;
}

static bool
overlay_equal(const struct ovl *x, const struct ovl *y)
{
	uint32_t live = 0;

	if (!tables_equal(x, &x->by_tenant, y, &y->by_tenant, 0) || !tables_equal(x, &x->by_fabric, y, &y->by_fabric, 0) ||
	    !tables_equal(x, &x->by_mr, y, &y->by_mr, 1) || !tables_equal(x, &x->by_ep, y, &y->by_ep, 2) ||
	    !tables_equal(x, &x->by_srq, y, &y->by_srq, 3))
		return false;
	for (uint32_t i = 0; i < x->n_conns; i++)
		live += ovl_live(&x->conns[i]);
	SAME(live == y->n_conns && x->live_conns == y->n_conns && x->live_qps == y->n_qps && x->live_mrs == y->n_mrs);
	SAME(x->tenants[0].n_qps == y->tenants[0].n_qps && x->tenants[0].n_local_qps == y->tenants[0].n_local_qps &&
	     x->tenants[0].n_capped == y->tenants[0].n_capped && x->live_endpoints == y->n_endpoints);
	return true;
}

/* Do two live halves of the world name each other (a learned pair)? */
static bool
world_paired(void)
{
	for (int i = 0; i < MAX_HALF; i++)
		for (int j = 0; j < MAX_HALF; j++)
			if (w.half[i].live && w.half[j].live && w.half[i].pv == w.half[j].v && w.half[j].pv == w.half[i].v &&
			    w.half[i].src == w.half[j].dst && w.half[j].src == w.half[i].dst)
				return true;
	return false;
}

static void
test_random_walk(void)
{
	char err[256];
	struct cfg *ca, *cb;
	struct ovl *x;
	unsigned applied = 0, rebuilt = 0, paired = 0, steps = 3000;

	memset(&w, 0, sizeof(w));
	w.rnd = 20261125;
	w.next_v = 100;
	w.next_p = 4096;
	ca = world_cfg();
	x = ovl_build(ca, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(x);
	for (unsigned s = 0; s < steps; s++) {
		struct cfg_inc ci;
		struct ovl_inc oi;
		struct ovl *y;

		world_step();
		cb = world_cfg();
		diff(ca, cb, &ci);
		if (ovl_inc_prepare(x, cb, &ci, &oi, err, sizeof(err)) == 0) {
			struct ovl *h = ovl_inc_commit(&oi);

			ovl_free(x);    /* the old header only: the store is the new one's */
			x = h;
			ovl_inc_reclaim(x);
			applied++;
		} else {
			/* Only for want of room, as the data plane rebuilds then. */
			CU_ASSERT(strstr(err, "no room") != NULL || strstr(err, "too full") != NULL);
			ovl_free(x);
			x = ovl_build(cb, err, sizeof(err));
			CU_ASSERT_PTR_NOT_NULL_FATAL(x);
			rebuilt++;
		}
		ovl_inc_release(&oi);
		free(ci.ch);
		y = ovl_build(cb, err, sizeof(err));
		CU_ASSERT_PTR_NOT_NULL_FATAL(y);
		if (!overlay_equal(x, y)) {
			fprintf(stderr, "step %u: the overlay changed in place differs from the whole build\n", s);
			ovl_free(y);
			break;
		}
		ovl_free(y);
		cfg_free(ca);
		ca = cb;
		paired += world_paired();
	}
	printf("\n  %u steps: %u in place, %u rebuilt (no room), %u with a learned pair, %u checks\n", steps, applied,
	       rebuilt, paired, checks);
	CU_ASSERT(paired > steps / 4);
	/* Most steps fit: the store has room for a quarter more than it was built with. */
	CU_ASSERT(applied > steps * 9 / 10);
	ovl_free(x);
	cfg_free(ca);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("ovl_inc", NULL, NULL);
	CU_add_test(s, "random walk: in place equals the whole build", test_random_walk);
	return cu_run_all();
}
