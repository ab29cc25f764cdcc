/* SPDX-License-Identifier: BSD-3-Clause */
/* RDMA-CM connections followed by their messages (dp_cm_track.h). */
#include <stdlib.h>
#include <string.h>

#include "dp_cm_track.h"
#include "roce_cm.h"

static bool
ip_eq(const struct ovl_ip *a, const struct ovl_ip *b)
{
	return a->ver == b->ver && !memcmp(a->b, b->b, sizeof(a->b));
}

/*
 * The connection of @m's slot in which @m's sender sends to its receiver,
 * and the sender's side in @side: the receiver's ID must be known and
 * equal, the sender's too unless @new_lid allows one not seen yet.
 */
static struct dp_cm_conn **
cm_find(struct dp_cm_table *t, const struct dp_cm_msg *m, bool new_lid, int *side)
{
	for (struct dp_cm_conn **pc = &t->list[m->tslot]; *pc; pc = &(*pc)->next) {
		struct dp_cm_conn *c = *pc;

		for (int k = 0; k < 2; k++)
			if (ip_eq(&c->vip[k], &m->from) && ip_eq(&c->vip[1 - k], &m->to) && (c->known & (2 >> k)) &&
			    c->id[1 - k] == m->remote_id &&
			    ((c->known & (1 << k)) ? c->id[k] == m->local_id : new_lid)) {
				*side = k;
				return pc;
			}
	}
	return NULL;
}

static struct dp_cm_conn *
cm_open(struct dp_cm_table *t, uint32_t tslot, const struct ovl_ip *active, const struct ovl_ip *passive)
{
	struct dp_cm_conn *c;

	if (t->n[tslot] >= DP_CM_PER_SLOT || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->tslot = tslot;
	c->vip[0] = *active;
	c->vip[1] = *passive;
	c->next = t->list[tslot];
	t->list[tslot] = c;
	t->n[tslot]++;
	return c;
}

void
dp_cm_close(struct dp_cm_table *t, struct dp_cm_conn **pc)
{
	struct dp_cm_conn *c = *pc;

	*pc = c->next;
	t->n[c->tslot]--;
	free(c);
}

bool
dp_cm_half(const struct dp_cm_conn *c, uint32_t tslot, const struct ovl_ip *src, const struct ovl_ip *dst,
	   uint32_t dqpn)
{
	if (tslot != c->tslot)
		return false;
	for (int k = 0; k < 2; k++)
		if (c->qpn[1 - k] && dqpn == c->qpn[1 - k] && ip_eq(src, &c->vip[k]) && ip_eq(dst, &c->vip[1 - k]))
			return true;
	return false;
}

uint32_t
dp_cm_active_qpn(const struct dp_cm_table *t, uint32_t tslot, const struct ovl_ip *active, const struct ovl_ip *passive,
		 uint32_t active_id)
{
	for (const struct dp_cm_conn *c = t->list[tslot]; c; c = c->next)
		if ((c->known & 1) && c->id[0] == active_id && ip_eq(&c->vip[0], active) && ip_eq(&c->vip[1], passive))
			return c->qpn[0];
	return 0;
}

enum dp_cm_verdict
dp_cm_track(struct dp_cm_table *t, const struct dp_cm_msg *m, uint64_t now, struct dp_cm_conn ***ended)
{
	struct dp_cm_conn **pc = NULL, *c;
	int k = 0;

	if (m->tslot >= DP_CM_SLOTS)
		return DP_CM_IGNORED;
	switch (m->attr) {
	case ROCE_CM_REQ:
		/* A REQ names no passive ID: its connection is found by the active side's alone. */
		for (c = t->list[m->tslot]; c; c = c->next)
			if ((c->known & 1) && c->id[0] == m->local_id && ip_eq(&c->vip[0], &m->from) &&
			    ip_eq(&c->vip[1], &m->to))
				break;
		if (!c && !(c = cm_open(t, m->tslot, &m->from, &m->to)))
			return DP_CM_IGNORED;
		c->id[0] = m->local_id;
		c->known |= 1;
		c->qpn[0] = m->qpn;
		c->last = now;
		return DP_CM_NOTED;
	case ROCE_CM_REP:
		/* From the passive side: the active side's ID must be known; its own may be new. */
		pc = cm_find(t, m, true, &k);
		c = pc && k == 1 ? *pc : cm_open(t, m->tslot, &m->to, &m->from);
		if (!c)
			return DP_CM_IGNORED;
		c->id[0] = m->remote_id;
		c->id[1] = m->local_id;
		c->known = 3;
		c->qpn[1] = m->qpn;
		c->last = now;
		return DP_CM_NOTED;
	case ROCE_CM_REJ:
		pc = cm_find(t, m, true, &k);
		break;
	case ROCE_CM_DREQ:
		if (!(pc = cm_find(t, m, false, &k)))
			return DP_CM_UNMATCHED;
		(*pc)->dreq |= (uint8_t)(1 << k);
		(*pc)->last = now;
		return DP_CM_NOTED;
	case ROCE_CM_DREP:
		pc = cm_find(t, m, false, &k);
		/* Only the answer to the other side's DREQ ends it. */
		if (pc && !((*pc)->dreq & (1 << (1 - k))))
			pc = NULL;
		break;
	default:
		return DP_CM_IGNORED;
	}
	if (!pc)
		return DP_CM_UNMATCHED;
	*ended = pc;
	return DP_CM_ENDS;
}

void
dp_cm_expire(struct dp_cm_table *t, uint64_t now, uint64_t idle, bool (*keep)(const struct dp_cm_conn *c, void *arg),
	     void *arg)
{
	for (uint32_t s = 0; s < DP_CM_SLOTS; s++)
		for (struct dp_cm_conn **pc = &t->list[s]; *pc;) {
			struct dp_cm_conn *c = *pc;

			if (now > c->last && now - c->last > idle && !keep(c, arg))
				dp_cm_close(t, pc);
			else
				pc = &c->next;
		}
}

void
dp_cm_free(struct dp_cm_table *t)
{
	for (uint32_t s = 0; s < DP_CM_SLOTS; s++)
		while (t->list[s])
			dp_cm_close(t, &t->list[s]);
}
