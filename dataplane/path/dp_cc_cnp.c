/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What DCQCN's two notification points share, below both: the connections'
 * (dp_cc.c) and the UD senders' (dp_cc_ud.c).  A CNP is built into an mbuf
 * and queued for after the burst (dp_cc_cnp_emit()); a deferred one waits in
 * the lcore's heap of timers (dp_cc_timer_push(); dp_cc_timers_run() in
 * dp_cc.c pops and sends them).
 */
#include "dp_rate_int.h"

bool
dp_cc_cnp_emit(struct dp_lcore *lc, const struct dp_tenant_rate *tr, const struct roce_frame_spec *spec,
	       uint32_t dqpn, uint16_t port)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct rte_mbuf *m;
	size_t len;

	if (r->n_cnp == DP_BURST || (m = rte_pktmbuf_alloc(dp.pool)) == NULL)
		return false;
	len = roce_build_cnp(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), spec, dqpn,
			     tr->prof.cnp_dscp, tr->prof.cnp_802p_prio);
	if (!len) {
		rte_pktmbuf_free(m);
		return false;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	r->cnp[r->n_cnp] = m;
	r->cnp_port[r->n_cnp++] = port;
	lc->stats.cnp_sent++;
	return true;
}

void
dp_cc_timer_push(struct dp_rate_lcore *r, struct dp_cnp_timer t)
{
	uint32_t i;

	if (r->n_timers == r->max_timers)
		return;
	for (i = r->n_timers++; i > 0 && r->timers[(i - 1) / 2].due > t.due; i = (i - 1) / 2)
		r->timers[i] = r->timers[(i - 1) / 2];
	r->timers[i] = t;
}
