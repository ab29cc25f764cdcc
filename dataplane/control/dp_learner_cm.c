/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA-CM connections as the learner sees them (dp_learner_int.h): which
 * halves a REQ and a REP made it learn, and their removal when the
 * connection ends (docs/learning.md, "RDMA-CM"; the rules in dp_cm_track.h).
 *
 * Every CM message of a learning tenant's VM on this host passes its switch
 * once, sent or delivered (dp_cm_learn()).  When a connection ends (a REJ, a
 * DREP that answers a DREQ), the records of its two halves that this learner
 * wrote (one on each host, both on a host that runs both VMs) go, through
 * the same batched delete or etcd delete as idle ones (cm_removed).  A
 * DREQ never answered leaves them to idle expiry (qp_idle_s).  A REJ, DREQ
 * or DREP that names no connection of its tenant by vips and IDs (forged,
 * from another tenant, or of a connection set up before this switch
 * started) removes nothing and counts cm_unmatched.
 *
 * Bounds: DP_CM_PER_SLOT connections a tenant slot; a REQ beyond them is not
 * followed (its end then counts unmatched, its records expire idle).  A
 * connection never answered goes after CM_IDLE_S without a message, one set
 * up once neither of its halves is in force here (idle expiry took them) and
 * as long has passed; the sweep costs two hash lookups a connection.
 */
#include <assert.h>
#include <string.h>

#include "dp.h"
#include "dp_cm_track.h"
#include "dp_learner_int.h"
#include "roce_cm.h"

#define CM_IDLE_S 30

static_assert(DP_CM_SLOTS == DP_MAX_TENANTS, "one CM list per tenant slot");

static struct dp_cm_table cm;

/* The connection at @pc ends: its halves move from @list to @out, then it is forgotten. */
static void
cm_end(struct dp_cm_conn **pc, struct learned **list, struct learned **out)
{
	for (struct learned **pl = list; *pl;) {
		struct learned *l = *pl;

		if (dp_cm_half(*pc, l->tslot, &l->src, &l->dst, l->dqpn)) {
			*pl = l->next;
			l->next = *out;
			*out = l;
			dp_learn_st.cm_removed++;
		} else {
			pl = &l->next;
		}
	}
	dp_cm_close(&cm, pc);
}

/*
 * A REP noted: the half its sender (the passive side) sends on, to the
 * active side's QPN, if this learner wrote it (at the REQ's delivery), is
 * written again naming the REP's QPN, the sender's own.
 */
static void
cm_pair_sender(const struct dp_cm_msg *m, struct learned *list, bool *due)
{
	uint32_t qa = dp_cm_active_qpn(&cm, m->tslot, &m->to, &m->from, m->remote_id);

	if (!qa || !m->qpn)
		return;
	for (struct learned *l = list; l; l = l->next)
		if (l->tslot == m->tslot && l->dqpn == qa && !l->pair && !memcmp(&l->src, &m->from, sizeof(l->src)) &&
		    !memcmp(&l->dst, &m->to, sizeof(l->dst))) {
			l->pair = m->qpn;
			dp_learner_pair_write(l);
			*due |= !l->paired;
			return;
		}
}

uint32_t
dp_learner_cm_pair(const struct dp_learn_req *r)
{
	struct ovl_ip active, passive;

	/* A REP delivered: its receiver, whose half is learned now, is the active side. */
	if (r->cm.attr != ROCE_CM_REP || !r->cm.learn)
		return 0;
	dp_learner_ip_of(&active, r->src, r->alen);
	dp_learner_ip_of(&passive, r->dst, r->alen);
	return dp_cm_active_qpn(&cm, r->tslot, &active, &passive, r->cm.remote_id);
}

/* The message of @r as the tracker takes it. */
static struct dp_cm_msg
cm_msg(const struct dp_learn_req *r)
{
	struct dp_cm_msg m = {
		.tslot = r->tslot, .attr = r->cm.attr, .local_id = r->cm.local_id, .remote_id = r->cm.remote_id,
		.qpn = r->cm.qpn,
	};

	/* The request names the local VM first: the sender is it when the message went out. */
	dp_learner_ip_of(&m.from, r->cm.out ? r->src : r->dst, r->alen);
	dp_learner_ip_of(&m.to, r->cm.out ? r->dst : r->src, r->alen);
	return m;
}

static bool
sets_up(const struct dp_learn_req *r)
{
	return r->cm.attr == ROCE_CM_REQ || r->cm.attr == ROCE_CM_REP;
}

void
dp_learner_cm_note(const struct dp_learn_req *r, uint64_t now)
{
	struct dp_cm_msg m = cm_msg(r);
	struct dp_cm_conn **ended;

	if (sets_up(r))
		dp_cm_track(&cm, &m, now, &ended);     /* a REQ or REP ends nothing */
}

void
dp_learner_cm(const struct dp_learn_req *r, struct learned **list, struct learned **out, bool *due, uint64_t now)
{
	struct dp_cm_msg m = cm_msg(r);
	struct dp_cm_conn **ended;

	/* A REQ or REP was noted before the burst's records (dp_learner_cm_note()). */
	if (sets_up(r)) {
		if (m.attr == ROCE_CM_REP)
			cm_pair_sender(&m, *list, due);
		return;
	}
	switch (dp_cm_track(&cm, &m, now, &ended)) {
	case DP_CM_ENDS:
		cm_end(ended, list, out);
		break;
	case DP_CM_UNMATCHED:
		dp_learn_st.cm_unmatched++;
		break;
	default:
		break;
	}
}

/* Is a half of @c in force on this switch (an outgoing half, whoever wrote it)? One lookup a side. */
static bool
cm_in_force(const struct dp_cm_conn *c, void *arg)
{
	const struct ovl *o = arg;
	struct learned h = { .tslot = c->tslot };
	uint32_t t;

	if (c->known != 3)
		return false;
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
	pthread_mutex_lock(&dp.ctl_lock);
	dp_cm_expire(&cm, now, (uint64_t)CM_IDLE_S * rte_get_tsc_hz(), cm_in_force, (void *)(uintptr_t)dp.ovl);
	pthread_mutex_unlock(&dp.ctl_lock);
}

void
dp_learner_cm_free(void)
{
	dp_cm_free(&cm);
}
