/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA-CM connections as the learner sees them (dp_learner_int.h): which
 * halves a REQ and a REP made it learn, and their removal when the
 * connection ends (docs/learning.md, "RDMA-CM").
 *
 * Every CM message of a learning tenant's VM on this host passes its switch
 * once, sent or delivered (dp_cm_learn()).  A connection is known by its
 * tenant, its two vips and the two ends' Communication IDs: the REQ names
 * the active side's (and its QPN), the REP both (and the passive side's QPN).
 * It ends
 *
 *   - at a REJ, of the REQ (from the passive side: the active side's ID must
 *     match, the passive side's is new) or of the REP (both must match);
 *   - at a DREP that answers a DREQ of the other side (both IDs, both
 *     messages).  A DREQ alone removes nothing: its DREP may be lost and the
 *     DREQ sent again, and a DREQ is one side's word; a DREQ never answered
 *     leaves the records to idle expiry (qp_idle_s).
 *
 * Then the records of the connection's two halves that this learner wrote
 * (one on each host, both on a host that runs both VMs) go, through the
 * same batched delete or etcd delete as idle ones.  A QPN alone never
 * matches: a REJ, DREQ or DREP that names no connection of its tenant by
 * vips and IDs (forged, from another tenant, or of a connection set up
 * before this switch started) removes nothing and counts cm_unmatched.
 *
 * Bounds: CM_PER_TENANT connections a tenant slot; a REQ beyond them is not
 * followed (its end then counts unmatched, its records expire idle).  A
 * connection never answered goes after CM_IDLE_S without a message, one set
 * up once neither of its halves is in force here (idle expiry took them) and
 * as long has passed; the sweep costs two hash lookups a connection.
 */
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_learner_int.h"
#include "roce_cm.h"

#define CM_PER_TENANT 4096
#define CM_IDLE_S 30

struct cm_conn {
	struct cm_conn *next;
	uint32_t tslot;
	struct ovl_ip vip[2];     /* [0] the active side (the REQ's sender), [1] the passive side */
	uint32_t id[2];           /* their Communication IDs */
	uint32_t qpn[2];          /* their QPNs (the REQ's, the REP's Local QPN); 0: not seen */
	uint8_t known;            /* bit k: id[k] is known */
	uint8_t dreq;             /* bit k: side k sent a DREQ */
	uint64_t last;            /* TSC of its last message */
};

/* Per tenant slot, so that one tenant's messages search its own connections only. */
static struct {
	struct cm_conn *list[DP_MAX_TENANTS];
	uint32_t n[DP_MAX_TENANTS];
} cm;

static bool
ip_eq(const struct ovl_ip *a, const struct ovl_ip *b)
{
	return a->ver == b->ver && !memcmp(a->b, b->b, sizeof(a->b));
}

/*
 * The connection of @tslot in which @from, with ID @lid, sends to @to, whose
 * ID is @rid, and @from's side in @side: the receiver's ID must be known and
 * equal, the sender's too unless @new_lid allows one not seen yet.
 */
static struct cm_conn **
cm_find(uint32_t tslot, const struct ovl_ip *from, const struct ovl_ip *to, uint32_t lid, uint32_t rid, bool new_lid,
	int *side)
{
	if (tslot >= DP_MAX_TENANTS)
		return NULL;
	for (struct cm_conn **pc = &cm.list[tslot]; *pc; pc = &(*pc)->next) {
		struct cm_conn *c = *pc;

		for (int k = 0; k < 2; k++)
			if (ip_eq(&c->vip[k], from) && ip_eq(&c->vip[1 - k], to) && (c->known & (2 >> k)) &&
			    c->id[1 - k] == rid && ((c->known & (1 << k)) ? c->id[k] == lid : new_lid)) {
				*side = k;
				return pc;
			}
	}
	return NULL;
}

static struct cm_conn *
cm_open(uint32_t tslot, const struct ovl_ip *active, const struct ovl_ip *passive)
{
	struct cm_conn *c;

	if (tslot >= DP_MAX_TENANTS || cm.n[tslot] >= CM_PER_TENANT || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->tslot = tslot;
	c->vip[0] = *active;
	c->vip[1] = *passive;
	c->next = cm.list[tslot];
	cm.list[tslot] = c;
	cm.n[tslot]++;
	return c;
}

static void
cm_close(struct cm_conn **pc)
{
	struct cm_conn *c = *pc;

	*pc = c->next;
	cm.n[c->tslot]--;
	free(c);
}

/* Is @l one of @c's halves: side k sending to side 1-k's QPN? */
static bool
cm_half(const struct cm_conn *c, const struct learned *l)
{
	if (l->tslot != c->tslot)
		return false;
	for (int k = 0; k < 2; k++)
		if (c->qpn[1 - k] && l->dqpn == c->qpn[1 - k] && ip_eq(&l->src, &c->vip[k]) &&
		    ip_eq(&l->dst, &c->vip[1 - k]))
			return true;
	return false;
}

/* The connection at @pc ends: its halves move from @list to @out, then it is forgotten. */
static void
cm_end(struct cm_conn **pc, struct learned **list, struct learned **out)
{
	for (struct learned **pl = list; *pl;) {
		struct learned *l = *pl;

		if (cm_half(*pc, l)) {
			*pl = l->next;
			l->next = *out;
			*out = l;
			dp_learn_st.cm_removed++;
		} else {
			pl = &l->next;
		}
	}
	cm_close(pc);
}

void
dp_learner_cm(const struct dp_learn_req *r, struct learned **list, struct learned **out, uint64_t now)
{
	struct ovl_ip a, b;
	const struct ovl_ip *from = &a, *to = &b;
	const struct dp_learn_cm *m = &r->cm;
	struct cm_conn **pc, *c;
	int k = 0;

	/* The request names the local VM first: the sender is it when the message went out. */
	dp_learner_ip_of(&a, m->out ? r->src : r->dst, r->alen);
	dp_learner_ip_of(&b, m->out ? r->dst : r->src, r->alen);
	switch (m->attr) {
	case ROCE_CM_REQ:
		/* A REQ names the passive side's ID as 0: look it up by the active side's alone. */
		for (c = r->tslot < DP_MAX_TENANTS ? cm.list[r->tslot] : NULL; c; c = c->next)
			if ((c->known & 1) && c->id[0] == m->local_id && ip_eq(&c->vip[0], from) && ip_eq(&c->vip[1], to))
				break;
		c = c ? c : cm_open(r->tslot, from, to);
		if (c) {
			c->id[0] = m->local_id;
			c->known |= 1;
			c->qpn[0] = m->qpn;
			c->last = now;
		}
		return;
	case ROCE_CM_REP:
		/* From the passive side: the active side's ID must be known; its own may be new. */
		pc = cm_find(r->tslot, from, to, m->local_id, m->remote_id, true, &k);
		c = pc && k == 1 ? *pc : cm_open(r->tslot, to, from);
		if (c) {
			c->id[0] = m->remote_id;
			c->id[1] = m->local_id;
			c->known = 3;
			c->qpn[1] = m->qpn;
			c->last = now;
		}
		return;
	case ROCE_CM_REJ:
		pc = cm_find(r->tslot, from, to, m->local_id, m->remote_id, true, &k);
		break;
	case ROCE_CM_DREQ:
		pc = cm_find(r->tslot, from, to, m->local_id, m->remote_id, false, &k);
		if (pc) {
			(*pc)->dreq |= (uint8_t)(1 << k);
			(*pc)->last = now;
			return;
		}
		break;
	case ROCE_CM_DREP:
		pc = cm_find(r->tslot, from, to, m->local_id, m->remote_id, false, &k);
		/* Only the answer to the other side's DREQ ends it. */
		if (pc && !((*pc)->dreq & (1 << (1 - k))))
			pc = NULL;
		break;
	default:
		return;
	}
	if (pc)
		cm_end(pc, list, out);
	else
		dp_learn_st.cm_unmatched++;
}

/* Is a half of @c in force on this switch (an outgoing half, whoever wrote it)? One lookup a side. */
static bool
cm_in_force(const struct ovl *o, const struct cm_conn *c)
{
	struct learned h = { .tslot = c->tslot };
	uint32_t t;

	for (int k = 0; k < 2; k++) {
		if (!c->qpn[1 - k])
			continue;
		h.src = c->vip[k];
		h.dst = c->vip[1 - k];
		h.dqpn = c->qpn[1 - k];
		if (dp_learner_in_force(o, &h, &t) != OVL_NONE)
			return true;
	}
	return false;
}

void
dp_learner_cm_expire(uint64_t now)
{
	uint64_t idle = (uint64_t)CM_IDLE_S * rte_get_tsc_hz();

	pthread_mutex_lock(&dp.ctl_lock);
	for (uint32_t s = 0; s < DP_MAX_TENANTS; s++)
		for (struct cm_conn **pc = &cm.list[s]; *pc;) {
			struct cm_conn *c = *pc;

			if (now > c->last && now - c->last > idle && !(c->known == 3 && cm_in_force(dp.ovl, c)))
				cm_close(pc);
			else
				pc = &c->next;
		}
	pthread_mutex_unlock(&dp.ctl_lock);
}

void
dp_learner_cm_free(void)
{
	for (uint32_t s = 0; s < DP_MAX_TENANTS; s++)
		while (cm.list[s])
			cm_close(&cm.list[s]);
}
