/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NAKs built on an lcore: those of a revocation, on the lcore that forwards
 * the revoked requests, from the outstanding-request state it writes itself
 * (dp_acl.h); and those that answer an RC or XRC request the switch refuses (an
 * R_Key, bounds, access or ACL reason), so that the requester fails at once
 * with a remote access error instead of retrying until its retry count runs
 * out.  UC and UD requests are refused silently, as a responder would.
 */
#include <stdlib.h>

#include <rte_ring.h>

#include "dp_acl.h"
#include "dp_nak.h"
#include "dp_vlan.h"

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
			static const uint16_t untagged[2];

			/*
			 * As the responder would answer the latest request: its DSCP
			 * and P_Key, and the side's tags (none under "keep": the
			 * requests' own tags are not kept).
			 */
			r->spec.dscp = rq->dscp;
			r->spec.pkey = rq->pkey;
			ovl_vlan_tags(&r->vlan, 0, untagged, rq->dscp, &r->spec.n_vlan, r->spec.vlan_tci);
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


/*
 * A NAK for a refused RC or XRC request (an XRC ACKNOWLEDGE on XRC), as the
 * responder would send it.  The
 * frame takes the request's own path back: its VLAN tags (the outer TPID
 * as the builder writes it), its DSCP and its P_Key; it is padded to the
 * Ethernet minimum.  Addressed from the other end of the connection to the
 * requester, in the requester's view: a fabric request (@uplink) is
 * answered toward R's host with the template of L's frames (c->egress), a
 * tenant's request toward L's port with that of R's frames (c->ingress).
 */
static struct rte_mbuf *
nak_refusal_build(const struct ovl *o, const struct ovl_conn *c, const struct dp_pkt *p, bool uplink,
		  uint8_t syndrome, uint16_t *out)
{
	const struct ovl_rewrite *rw = uplink ? &c->egress : &c->ingress;
	const struct roce_bth *bth = roce_pkt_bth(&p->pkt, p->data);
	const uint8_t *l3 = p->data + p->pkt.l3_off;
	struct dp_conn_state *st = dp_conn_state(c->state);
	const struct ovl_ack_track *ak;
	struct roce_frame_spec spec;
	struct roce_aeth aeth;
	struct rte_mbuf *m;
	size_t len;

	/* The answers to these requests: L's to R's on the egress half; R's to L's. */
	ak = uplink ? &st->egress.ack : &dp_acl_answers_to_l(o, c)->ack;
	ovl_nak_spec(&spec, rw->eth, rw->ip_ver, rw->src_ip, rw->dst_ip, rw->dqpn);
	spec.opcode = ovl_nak_opcode(c->l_type);
	spec.dscp = ovl_ip_dscp(l3, p->pkt.ip_ver);
	/* The tags of the requester's side: under "keep", the request's own. */
	dp_vlan_spec(o, c->tenant, rw->port, p->pkt.n_vlan, p->pkt.vlan_tci, spec.dscp, &spec);
	spec.pkey = roce_bth_pkey(bth);
	spec.psn = roce_bth_psn(bth);
	spec.min_frame_len = ROCE_ETH_MIN_LEN;
	roce_aeth_set(&aeth, syndrome, ovl_track_msn(ak));
	if ((m = rte_pktmbuf_alloc(dp.pool)) == NULL)
		return NULL;
	len = roce_build_frame(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), &spec, &aeth,
			       sizeof(aeth), NULL, 0);
	if (!len) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	*out = rw->port;
	return m;
}

struct rte_mbuf *
dp_nak_refusal(struct dp_lcore *lc, const struct dp_burst *b, const struct dp_pkt *p, enum dp_drop why,
	       uint16_t *out)
{
	const struct ovl *o = lc->ovl;
	const struct ovl_conn *c;
	struct dp_dir_state *half;
	struct rte_mbuf *m;

	if (p->v == OVL_NONE || (p->v & OVL_V_QP) || !(p->pkt.flags & ROCE_OPF_REQ) ||
	    !ovl_track_opcode(p->pkt.opcode))
		return NULL;
	c = &o->conns[OVL_V_IDX(p->v)];
	/* A learned half has no rewrite back to the requester (it knows no requester's QPN). */
	if ((c->l_type != CFG_QP_RC && !cfg_qp_is_xrc(c->l_type)) || c->half)
		return NULL;
	/* Another lcore owns the half and its NAK state (dp_s3_decide.h): the refusal stays silent. */
	if (p->foreign)
		return NULL;
	/*
	 * One NAK until the requester sends a request that is forwarded: its
	 * QP is in error once it has the NAK, and what it sent meanwhile needs
	 * no answer of its own.
	 */
	half = b->uplink ? &dp_conn_state(c->state)->ingress : &dp_conn_state(c->state)->egress;
	if (half->nak_sent)
		return NULL;
	m = nak_refusal_build(o, c, p, b->uplink, why == DP_DROP_ACL_DENIED || why == DP_DROP_MR_ACCESS_DENIED ||
			      why == DP_DROP_MR_UNKNOWN || why == DP_DROP_MR_OUT_OF_BOUNDS ?
			      ROCE_AETH_NAK_REM_ACC_ERR : ROCE_AETH_NAK_INV_REQ, out);
	if (m) {
		half->nak_sent = 1;
		lc->stats.naks_refused++;
	}
	return m;
}
