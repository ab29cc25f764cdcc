/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NAKs of a revocation, built on the lcore that forwards the revoked
 * requests, from the outstanding-request state it writes itself (dp_acl.h).
 */
#include <stdlib.h>

#include <rte_ring.h>

#include "dp_acl.h"

static inline struct dp_dir_state *
half_of(uint32_t state, unsigned half)
{
	struct dp_conn_state *st = dp_conn_state(state);

	return half ? &st->ingress : &st->egress;
}

unsigned
dp_acl_nak_poll(struct dp_lcore *lc, struct rte_mbuf **pkts, uint16_t *ports, unsigned max)
{
	unsigned n = 0;
	void *p;

	while (n < max && rte_ring_dequeue(lc->nak_ring, &p) == 0) {
		struct dp_nak_req *r = p;
		struct ovl_req_track *rq = &half_of(r->req_state, r->req_half)->req;
		const struct ovl_ack_track *ak = &half_of(r->ack_state, r->ack_half)->ack;
		struct rte_mbuf *m;
		uint32_t psn;
		size_t len;

		if (ovl_track_oldest(rq, ak, &psn) && (m = rte_pktmbuf_alloc(dp.pool)) != NULL) {
			len = ovl_nak_build(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), &r->spec, psn,
					    ovl_track_msn(ak));
			if (len) {
				m->data_len = (uint16_t)len;
				m->pkt_len = (uint32_t)len;
				pkts[n] = m;
				ports[n] = r->out_port;
				n++;
				lc->stats.naks_sent++;
				/* This lcore writes @rq: the requests are answered now, in error. */
				ovl_track_clear(rq);
			} else {
				rte_pktmbuf_free(m);
			}
		}
		free(r);
		__atomic_store_n(&lc->naks_done, lc->naks_done + 1, __ATOMIC_RELEASE);
	}
	return n;
}

