/* SPDX-License-Identifier: BSD-3-Clause */
/* Tenant port to fabric, or hairpin to another tenant port: DESIGN.md "Packet paths". */
#include "dp_acl.h"
#include "dp_decide.h"
#include "dp_offload.h"
#include "dp_path.h"
#include "dp_rate.h"
#include "dp_rewrite.h"

/*
 * Where the answers to L's requests on the hairpin @c are recorded: R's
 * frames travel on R's own connection, whose egress half records them.
 */
static struct dp_dir_state *
answers_of_hairpin(const struct ovl *o, const struct ovl_conn *c, struct dp_conn_state *st)
{
	uint32_t pc = o->qps[c->r].conn;

	return pc == OVL_NONE ? &st->ingress : &dp_conn_state(o->conns[pc].state)->egress;
}

/* Tenant port to fabric (or hairpin to another tenant port). */
enum dp_drop
dp_process_egress(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf *m, uint16_t *out_port)
{
	const struct ovl *o = lc->ovl;
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t tenant = o->ports[in_port].tenant;
	struct roce_pkt pkt;
	struct roce_icrc_delta d;
	enum dp_drop verdict = DP_DROP_NONE;
	unsigned alen;
	uint32_t v, dqpn;

	if (unlikely(m->nb_segs != 1))
		return DP_DROP_NONLINEAR;
	verdict = (enum dp_drop)roce_parse_inline(data, m->data_len, o->udp_port, &pkt);
	if (unlikely(verdict != DP_DROP_NONE))
		return verdict;
	alen = ip_addr_len(&pkt);
	dqpn = roce_bth_dqpn(roce_pkt_bth(&pkt, data));
	if (unlikely(dqpn == ROCE_QPN_GSI))
		return DP_DROP_GSI;
	/* A rule's MARK names the connection: no lookup when the frame is its own. */
	v = dp_mark_egress(m, o, tenant, ip_dst(data, &pkt), alen, dqpn);
	if (v != OVL_NONE)
		lc->stats.mark_hits++;
	else
		v = ovl_lookup_tenant(o, tenant, ip_dst(data, &pkt), alen, dqpn);
	if (unlikely(v == OVL_NONE))
		return ovl_lookup_endpoint(o, tenant, ip_dst(data, &pkt), alen) == OVL_NONE ?
		       DP_DROP_WRONG_TENANT : DP_DROP_NO_CONNECTION;
	if (v & OVL_V_QP)
		return dp_ud_egress(lc, o, in_port, data, &pkt, OVL_V_IDX(v), out_port);

	uint32_t ci = OVL_V_IDX(v);
	const struct ovl_conn *c = &o->conns[ci];
	struct dp_conn_state *st = dp_conn_state(c->state);
	struct dp_dir_state *s = &st->egress;
	struct dp_tenant_stats *ts = &lc->tenant_stats[o->tenants[tenant].slot];

	/* Anti-spoofing: only L, from its own port and MAC, speaks for L. */
	if (unlikely(c->l_port != in_port || !dp_addr_eq(ip_src(data, &pkt), c->l_vip, alen) ||
		     !dp_mac_eq(data + 6, c->l_mac)))
		return DP_DROP_SPOOFED_SOURCE;
	if (unlikely(!transport_ok(pkt.opcode, c->l_type)))
		return DP_DROP_TYPE_MISMATCH;
	dp_acl_seen(s, lc->now);
	verdict = dp_acl_conn_check(c, s);
	if (unlikely(verdict != DP_DROP_NONE))
		return verdict;

	roce_icrc_delta_init(&d);
	rewrite_apply(data, &pkt, &c->egress, &d);
	if (msg_first(&pkt)) {
		/* The ACL, then (hairpin: this host owns R's memory too) the memory check. */
		if (unlikely(!dp_acl_msg_allowed(c, OVL_DIR_L2R, pkt.flags)))
			verdict = DP_DROP_ACL_DENIED;
		else if (c->hairpin)
			verdict = dp_mr_translate(lc, o, c->tenant, ip_dst(data, &pkt), alen, data, &pkt, &d);
		msg_open(s, &pkt, verdict);
	} else if (pkt.flags & ROCE_OPF_REQ) {
		verdict = msg_continue(s, &pkt);
	}
	if (unlikely(verdict != DP_DROP_NONE))
		return verdict;
	frame_finish(data, &pkt, &d);

	/* Answers to L's requests come back on the ingress half, or on R's own connection for a hairpin. */
	dp_acl_track(s, likely(!c->hairpin) ? &st->ingress : answers_of_hairpin(o, c, st), &pkt, data);
	s->pkts++;
	s->bytes += pkt.frame_len;
	ts->egress_pkts++;
	ts->egress_bytes += pkt.frame_len;
	if (c->hairpin) {
		/* Delivered to the same tenant's other endpoint: ingress too. */
		ts->ingress_pkts++;
		ts->ingress_bytes += pkt.frame_len;
		lc->stats.fwd_hairpin++;
	} else {
		lc->stats.fwd_egress++;
	}
	if (pkt.opcode == ROCE_OP_CNP)
		lc->stats.cnp_forwarded++;
	dp_rate_note(lc, c->state, o->tenants[tenant].slot, data, &pkt, c->hairpin);
	*out_port = c->egress.port;
	return DP_DROP_NONE;
}
