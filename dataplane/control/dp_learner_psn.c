/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairs told by PSNs (dp_learner_int.h): for a connection that RDMA-CM did
 * not set up, the learner's sweep looks at the halves in force, the span of
 * requests and the acknowledged PSN that each direction's state records
 * (struct dp_dir_state, written by the lcores), and gives each of its own
 * unpaired halves the QPN of the half that answers it, or that it answers
 * (the rule: dp_psn_pair.h).  The record is then written again naming it,
 * as at a REP (dp_learner_pair_write()).
 */
#include <stdlib.h>

#include "dp.h"
#include "dp_learner_int.h"
#include "dp_psn_pair.h"

/* The half connection @ci of @o as dp_psn_pair.h sees it; false when it carried nothing to tell by. */
static bool
half_of(const struct ovl *o, uint32_t ci, struct dp_psn_half *x)
{
	const struct ovl_conn *cn = &o->conns[ci];
	const struct dp_dir_state *s;

	if (!ovl_live(cn) || !cn->half || !o->tenants[cn->tenant].qp_learning)
		return false;
	/* The direction that carries its frames: out of a local source, or in from the fabric. */
	s = cn->half == OVL_HALF_OUT ? &dp_conn_state(cn->state)->egress : &dp_conn_state(cn->state)->ingress;
	*x = (struct dp_psn_half){
		.tenant = cn->tenant, .from = cn->src_ep, .to = o->qps[cn->l].endpoint, .vqpn = o->qps[cn->l].vqpn,
		.req_valid = OVL_LD(&s->req.valid), .req_first = OVL_LD(&s->req.first),
		.req_newest = OVL_LD(&s->req.newest), .ack_valid = (OVL_LD(&s->ack.valid) & OVL_ACK_PSN) != 0,
		.acked = OVL_LD(&s->ack.acked), .id = ci,
	};
	return x->req_valid || x->ack_valid;
}

/*
 * Under ctl_lock only what reads the overlay: every half's PSNs, and which
 * of them are the learner's own unpaired ones; the index and the matches
 * after it, so that deltas and telemetry do not wait for them.
 */
void
dp_learner_psn_pair(struct learned *list)
{
	struct dp_psn_half *h = NULL;
	struct dp_psn_index x = { 0 };
	struct learned **mine = NULL;
	uint32_t n = 0, n_mine = 0, *at = NULL, t, v;
	const struct ovl *o;

	for (const struct learned *l = list; l && !n_mine; l = l->next)
		n_mine = !l->pair;
	if (!n_mine)
		return;
	n_mine = 0;
	pthread_mutex_lock(&dp.ctl_lock);
	o = dp.ovl;
	if (!o || !(h = malloc(sizeof(*h) * (o->n_conns + 1))) || !(at = malloc(sizeof(*at) * (o->n_conns + 1))) ||
	    !(mine = malloc(sizeof(*mine) * (o->n_conns + 1)))) {
		pthread_mutex_unlock(&dp.ctl_lock);
		goto out;
	}
	for (uint32_t i = 0; i < o->n_conns; i++)
		n += half_of(o, i, &h[n]);
	/* @h is in slot order: the learner's halves found in it by their slot. */
	for (struct learned *l = list; l; l = l->next) {
		uint32_t lo = 0, hi = n;

		if (l->pair || (v = dp_learner_in_force(o, l, &t)) == OVL_NONE || !o->conns[OVL_V_IDX(v)].half)
			continue;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (h[mid].id < OVL_V_IDX(v))
				lo = mid + 1;
			else
				hi = mid;
		}
		/* Room for one entry a slot of @h: two entries may lead to one half (a key taken by another source). */
		if (lo < n && h[lo].id == OVL_V_IDX(v) && n_mine <= o->n_conns) {
			mine[n_mine] = l;
			at[n_mine++] = lo;
		}
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	if (dp_psn_index(&x, h, n) < 0)
		goto out;
	for (uint32_t i = 0; i < n_mine; i++) {
		const struct dp_psn_half *m = dp_psn_match(&x, &h[at[i]]);

		if (m)
			mine[i]->pair = m->vqpn;
	}
out:
	dp_psn_index_free(&x);
	free(h);
	free(at);
	free(mine);
}
