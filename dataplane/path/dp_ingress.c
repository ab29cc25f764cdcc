/* SPDX-License-Identifier: BSD-3-Clause */
/* Fabric to tenant port: DESIGN.md "Packet paths". */
#include "dp_acl.h"
#include "dp_decide.h"
#include "dp_offload.h"
#include "dp_path.h"
#include "dp_rate.h"
#include "dp_rewrite.h"

/* Fabric to tenant port. */
enum dp_drop
dp_process_ingress(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf *m, uint16_t *out_port)
{
	const struct ovl *o = lc->ovl;
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
	struct roce_pkt pkt;
	struct roce_icrc_delta d;
	enum dp_drop verdict;
	unsigned alen;
	uint32_t v, dqpn;

	RTE_SET_USED(in_port);
	if (unlikely(m->nb_segs != 1))
		return DP_DROP_NONLINEAR;
	verdict = (enum dp_drop)roce_parse_inline(data, m->data_len, o->udp_port, &pkt);
	if (unlikely(verdict != DP_DROP_NONE))
		return verdict;
	alen = ip_addr_len(&pkt);
	dqpn = roce_bth_dqpn(roce_pkt_bth(&pkt, data));
	/* A rule's MARK names the connection; a match is our host and not the GSI. */
	v = dp_mark_ingress(m, o, ip_dst(data, &pkt), alen, dqpn);
	if (v != OVL_NONE) {
		lc->stats.mark_hits++;
	} else {
		if (unlikely(ovl_host_index(o, ip_dst(data, &pkt), alen) < 0))
			return DP_DROP_NOT_OUR_HOST;
		if (unlikely(dqpn == ROCE_QPN_GSI))
			return DP_DROP_GSI;
		v = ovl_lookup_fabric(o, ip_dst(data, &pkt), alen, dqpn);
		if (unlikely(v == OVL_NONE))
			return DP_DROP_NO_CONNECTION;
	}
	if (v & OVL_V_QP)
		return dp_ud_ingress(lc, o, data, &pkt, OVL_V_IDX(v), out_port);

	uint32_t ci = OVL_V_IDX(v);
	const struct ovl_conn *c = &o->conns[ci];
	struct dp_conn_state *st = dp_conn_state(c->state);
	struct dp_dir_state *s = &st->ingress;

	lc->cur_tenant = o->tenants[c->tenant].slot;
	/*
	 * Only R's host speaks for R, and a local R never speaks through the
	 * fabric: traffic between two QPs of this host is the switch's own
	 * hairpin, so a fabric frame claiming it is forged.
	 */
	if (unlikely(c->hairpin || !dp_addr_eq(ip_src(data, &pkt), c->r_host, alen)))
		return DP_DROP_SPOOFED_SOURCE;
	if (unlikely(!transport_ok(pkt.opcode, c->l_type)))
		return DP_DROP_TYPE_MISMATCH;
	dp_acl_seen(s, lc->now);
	verdict = dp_acl_conn_check(c, s);
	if (unlikely(verdict != DP_DROP_NONE))
		return verdict;

	/* DCQCN: CE marks answered with CNPs, CNPs taken by the reaction point. */
	if (unlikely(lc->rate.cc_any) && dp_cc_ingress(lc, o, ci, data, &pkt)) {
		s->pkts++;
		s->bytes += pkt.frame_len;
		*out_port = DP_PORT_NONE;
		return DP_DROP_NONE;
	}
	roce_icrc_delta_init(&d);
	rewrite_apply(data, &pkt, &c->ingress, &d);
	if (msg_first(&pkt)) {
		if (unlikely(!dp_acl_msg_allowed(c, OVL_DIR_R2L, pkt.flags)))
			verdict = DP_DROP_ACL_DENIED;
		else
			verdict = dp_mr_translate(lc, o, c->tenant, c->l_vip, alen, data, &pkt, &d);
		msg_open(s, &pkt, verdict);
	} else if (pkt.flags & ROCE_OPF_REQ) {
		verdict = msg_continue(s, &pkt);
	}
	if (unlikely(verdict != DP_DROP_NONE))
		return verdict;
	frame_finish(data, &pkt, &d);

	dp_acl_track(s, &st->egress, &pkt, data);
	s->pkts++;
	s->bytes += pkt.frame_len;
	lc->tenant_stats[lc->cur_tenant].ingress_pkts++;
	lc->tenant_stats[lc->cur_tenant].ingress_bytes += pkt.frame_len;
	lc->stats.fwd_ingress++;
	if (pkt.opcode == ROCE_OP_CNP)
		lc->stats.cnp_forwarded++;
	*out_port = c->ingress.port;
	return DP_DROP_NONE;
}
