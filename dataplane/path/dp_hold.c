/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames of learning tenants held while their destination resolves (and
 * RDMA-CM MADs from the fabric while their sender's QP1 record comes)
 * (dp_learn.h says how the lcores and the learner meet).  Written by the
 * owning lcore only; the entries are few (DP_HOLD_CONNS) and looked at only
 * while something is held, so a linear scan does.
 */
#include <stdbool.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "dp_learn.h"
#include "dp_hold.h"
#include "dp_rewrite.h"

uint64_t dp_hold_tsc;
struct rte_ring *dp_learn_ring;
struct dp_learn_stats dp_learn_st;

static struct dp_hold_conn *
hold_find(struct dp_hold *h, uint16_t port, const uint8_t *dst, unsigned alen, uint32_t dqpn)
{
	for (uint32_t i = 0, seen = 0; i < DP_HOLD_CONNS && seen < h->n_conns; i++) {
		struct dp_hold_conn *c = &h->c[i];

		if (!c->alen)
			continue;
		seen++;
		if (c->dqpn == dqpn && c->port == port && c->alen == alen && dp_addr_eq(c->dst, dst, alen))
			return c;
	}
	return NULL;
}

bool
dp_hold_has(struct dp_lcore *lc, const struct dp_burst *b, const struct dp_pkt *p)
{
	return hold_find(&lc->hold, b->in_port, ip_dst(p->data, &p->pkt), ip_addr_len(&p->pkt), p->dqpn) != NULL;
}

/*
 * The QP type a first frame tells: RC and UC are learned, and UD to QP1 (the
 * GSI records of both ends, for RDMA-CM); anything else is not.
 */
static int
learn_type(uint8_t opcode, uint32_t dqpn)
{
	switch (roce_opcode_transport(opcode)) {
	case ROCE_TR_RC:
		return CFG_QP_RC;
	case ROCE_TR_UC:
		return CFG_QP_UC;
	case ROCE_TR_UD:
		return dqpn == ROCE_GSI_QPN ? CFG_QP_UD : -1;
	default:
		return -1;
	}
}

/* The request of a new destination; false when the ring is full (asked again at the next flush). */
static bool
ask(const struct dp_lcore *lc, const struct dp_hold_conn *c, const struct dp_pkt *p, uint32_t tenant)
{
	struct dp_learn_req r = { 0 };

	r.tslot = lc->ovl->tenants[tenant].slot;
	r.dqpn = c->dqpn;
	r.port = c->port;
	r.alen = c->alen;
	r.type = (uint8_t)learn_type(p->pkt.opcode, c->dqpn);
	memcpy(r.src, ip_src(p->data, &p->pkt), c->alen);
	memcpy(r.dst, c->dst, c->alen);
	return rte_ring_mp_enqueue_elem(dp_learn_ring, &r, sizeof(r)) == 0;
}

/* A free entry (the caller has checked there is one) for (@port, @dst, @dqpn), empty. */
static struct dp_hold_conn *
entry_open(struct dp_lcore *lc, uint16_t port, const uint8_t *dst, unsigned alen, uint32_t dqpn)
{
	struct dp_hold *h = &lc->hold;
	struct dp_hold_conn *c = h->c;

	while (c->alen)
		c++;
	memcpy(c->dst, dst, alen);
	c->alen = (uint8_t)alen;
	c->dqpn = dqpn;
	c->port = port;
	c->n = 0;
	c->since = lc->now;
	c->asked = 1;
	c->fabric = 0;
	h->n_conns++;
	return c;
}

/* A new destination's entry, after the checks that make its first frame worth learning from. */
static enum dp_drop
hold_open(struct dp_lcore *lc, const struct dp_burst *b, struct dp_pkt *p, struct dp_hold_conn **out)
{
	const struct ovl *o = lc->ovl;
	struct dp_hold *h = &lc->hold;
	unsigned alen = ip_addr_len(&p->pkt);
	uint32_t ep = ovl_lookup_endpoint(o, b->tenant, ip_src(p->data, &p->pkt), alen);
	struct dp_hold_conn *c = NULL;

	/* Only an endpoint of this port may make the switch learn, and only what learn_type() takes. */
	if (ep == OVL_NONE || !o->endpoints[ep].local || o->endpoints[ep].port != b->in_port ||
	    !dp_mac_eq(p->data + 6, o->endpoints[ep].mac))
		return DP_DROP_SPOOFED_SOURCE;
	if (learn_type(p->pkt.opcode, p->dqpn) < 0)
		return DP_DROP_NO_CONNECTION;
	if (h->n_conns == DP_HOLD_CONNS || !dp_learn_ring)
		return DP_DROP_UNRESOLVED;
	c = entry_open(lc, b->in_port, ip_dst(p->data, &p->pkt), alen, p->dqpn);
	memcpy(c->src, ip_src(p->data, &p->pkt), alen);
	c->asked = ask(lc, c, p, b->tenant);
	*out = c;
	return DP_DROP_NONE;
}

static enum dp_drop
hold_put(struct dp_hold *h, struct dp_hold_conn *c, struct dp_lcore *lc, struct dp_pkt *p)
{
	c->m[c->n++] = p->m;
	h->n_frames++;
	lc->stats.held++;
	p->out = DP_PORT_HELD;
	p->done = 1;
	return DP_DROP_NONE;
}

enum dp_drop
dp_hold_fabric(struct dp_lcore *lc, struct dp_pkt *p, const uint8_t *host, unsigned alen, uint32_t qpn)
{
	struct dp_hold *h = &lc->hold;
	uint16_t port = dp.port_index[p->m->port];
	struct dp_hold_conn *c = hold_find(h, port, host, alen, qpn);

	/* Only where the learner runs (the fuzzer and the benchmarks have none). */
	if (!dp_learn_ring || h->n_frames >= DP_HOLD_FRAMES || (c && c->n == DP_HOLD_PER_CONN) ||
	    (!c && h->n_conns == DP_HOLD_CONNS))
		return DP_DROP_SPOOFED_SOURCE;
	if (!c) {
		c = entry_open(lc, port, host, alen, qpn);
		c->fabric = 1;
	}
	return hold_put(h, c, lc, p);
}

enum dp_drop
dp_hold_take(struct dp_lcore *lc, const struct dp_burst *b, struct dp_pkt *p)
{
	struct dp_hold *h = &lc->hold;
	struct dp_hold_conn *c = hold_find(h, b->in_port, ip_dst(p->data, &p->pkt), ip_addr_len(&p->pkt), p->dqpn);
	enum dp_drop why;

	if (h->n_frames >= DP_HOLD_FRAMES || (c && c->n == DP_HOLD_PER_CONN))
		return DP_DROP_UNRESOLVED;
	if (!c && (why = hold_open(lc, b, p, &c)) != DP_DROP_NONE)
		return why;
	return hold_put(h, c, lc, p);
}

static void
hold_close(struct dp_hold *h, struct dp_hold_conn *c)
{
	h->n_frames -= c->n;
	h->n_conns--;
	c->alen = 0;
	c->n = 0;
}

uint16_t
dp_hold_ready(struct dp_lcore *lc, struct rte_mbuf **pkts, uint16_t *port)
{
	const struct ovl *o = lc->ovl;
	struct dp_hold *h = &lc->hold;

	/* Set while what this returns runs through the stages; the caller's last call (0) clears it. */
	h->releasing = false;
	for (uint32_t i = 0, seen = 0, n = h->n_conns; i < DP_HOLD_CONNS && seen < n; i++) {
		struct dp_hold_conn *c = &h->c[i];
		uint32_t tenant;
		struct ovl_key k, ks;
		uint16_t got;

		if (!c->alen)
			continue;
		seen++;
		if (c->fabric) {
			/* A fabric frame to QP1 waits for its sender's QP1 record (dp_ud.c). */
			k = ovl_key_make(c->dst, c->alen, OVL_SPACE_FABRIC, c->dqpn);
			if (ovl_table_lookup(&o->by_fabric, &k) != OVL_NONE)
				goto release;
			if (lc->now - c->since <= dp_hold_tsc)
				continue;
			lc->stats.drops[DP_DROP_UNRESOLVED] += c->n;
			rte_pktmbuf_free_bulk(c->m, c->n);
			hold_close(h, c);
			continue;
		}
		tenant = o->ports[c->port].tenant;
		k = ovl_key_make(c->dst, c->alen, tenant, c->dqpn);
		ks = ovl_key_make(c->src, c->alen, tenant, ROCE_GSI_QPN);
		/* To QP1 the sender's own QP1 record is needed too: it names the sender on the fabric. */
		if (ovl_table_lookup(&o->by_tenant, &k) == OVL_NONE ||
		    (c->dqpn == ROCE_GSI_QPN && ovl_table_lookup(&o->by_tenant, &ks) == OVL_NONE)) {
			if (lc->now - c->since <= dp_hold_tsc && o->tenants[tenant].qp_learning)
				continue;
			/* Too long, or the tenant no longer learns: unresolved. */
			lc->stats.drops[DP_DROP_UNRESOLVED] += c->n;
			lc->tenant_stats[o->tenants[tenant].slot].drops += c->n;
			rte_pktmbuf_free_bulk(c->m, c->n);
			hold_close(h, c);
			continue;
		}
release:
		got = c->n;
		memcpy(pkts, c->m, got * sizeof(*pkts));
		*port = c->port;
		lc->stats.hold_released += got;
		hold_close(h, c);
		h->releasing = true;
		return got;
	}
	return 0;
}

void
dp_hold_ask_again(struct dp_lcore *lc)
{
	struct dp_hold *h = &lc->hold;

	for (uint32_t i = 0; i < DP_HOLD_CONNS; i++) {
		struct dp_hold_conn *c = &h->c[i];
		struct dp_pkt p;

		if (!c->alen || c->asked)
			continue;
		/* The request is rebuilt from the first frame held. */
		p.m = c->m[0];
		p.data = rte_pktmbuf_mtod(p.m, uint8_t *);
		if (roce_parse_fast(p.data, p.m->data_len, lc->ovl->udp_port, &p.pkt) != 0)
			continue;
		c->asked = ask(lc, c, &p, lc->ovl->ports[c->port].tenant);
	}
}

void
dp_hold_free(struct dp_lcore *lc)
{
	struct dp_hold *h = &lc->hold;

	for (uint32_t i = 0; i < DP_HOLD_CONNS; i++)
		if (h->c[i].alen) {
			lc->stats.drops[DP_DROP_SHUTDOWN] += h->c[i].n;
			rte_pktmbuf_free_bulk(h->c[i].m, h->c[i].n);
			hold_close(h, &h->c[i]);
		}
}

void
dp_cm_learn(struct dp_lcore *lc, const struct ovl *o, uint32_t tenant, const struct ovl_endpoint *local,
	    const struct ovl_endpoint *remote, bool out, const uint8_t *mad, uint32_t len)
{
	struct dp_learn_req r = { 0 };
	struct roce_cm cm;
	unsigned alen = local->vip.ver == 6 ? 16 : 4;

	if (!dp_learn_ring || roce_cm_parse(mad, len, &cm) != ROCE_CM_OK)
		return;
	switch (cm.attr_id) {
	case ROCE_CM_REQ:
	case ROCE_CM_REP:
		/* Delivered: the local VM will send to the QP its peer named, the half of that direction. */
		r.cm.learn = !out && cm.local_qpn >= 2 &&
			     (cm.attr_id == ROCE_CM_REP || cm.transport == ROCE_CM_RC || cm.transport == ROCE_CM_UC);
		break;
	case ROCE_CM_REJ:
	case ROCE_CM_DREQ:
	case ROCE_CM_DREP:
		break;
	default:
		return;
	}
	r.tslot = o->tenants[tenant].slot;
	r.dqpn = cm.local_qpn;
	r.port = local->port;
	r.alen = (uint8_t)alen;
	r.type = cm.attr_id == ROCE_CM_REQ && cm.transport == ROCE_CM_UC ? CFG_QP_UC : CFG_QP_RC;
	memcpy(r.src, local->vip.b, alen);
	memcpy(r.dst, remote->vip.b, alen);
	r.cm.attr = cm.attr_id;
	r.cm.out = out;
	r.cm.local_id = cm.local_comm_id;
	r.cm.remote_id = cm.remote_comm_id;
	r.cm.qpn = cm.local_qpn;
	if (rte_ring_mp_enqueue_elem(dp_learn_ring, &r, sizeof(r)) == 0 && r.cm.learn)
		lc->stats.cm_learn++;
}
