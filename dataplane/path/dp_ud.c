/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD frames, both ways: no connection, so each frame is checked and renamed
 * on its own, the DETH source QPN included.
 */
#include "dp_acl.h"
#include "dp_gsi.h"
#include "dp_hold.h"
#include "dp_ud.h"
#include "dp_rate.h"
#include "dp_rewrite.h"
#include "dp_vlan.h"

/*
 * UD: rename the addresses, DestQP and the DETH source QPN (none for a CNP:
 * @srcqp UINT32_MAX), field by field.
 */
static void
ud_rename(uint8_t *data, const struct roce_pkt *pkt, const uint8_t *eth, const uint8_t *new_src,
	  const uint8_t *new_dst, uint32_t dqpn, uint32_t srcqp, struct roce_icrc_delta *d)
{
	struct roce_bth *bth = roce_pkt_bth(pkt, data);
	struct roce_deth *deth = roce_pkt_ext(pkt, data, ROCE_EXT_DETH);
	unsigned alen = ip_addr_len(pkt);
	uint8_t *src = ip_src(data, pkt), old[32];

	rte_memcpy(data, eth, 12);
	memcpy(old, src, 2 * alen);
	memcpy(src, new_src, alen);
	memcpy(src + alen, new_dst, alen);
	if (memcmp(old, src, 2 * alen)) {
		roce_icrc_delta_add(d, (uint32_t)(src - data), old, src, 2 * alen);
		if (pkt->ip_ver == 4)
			ipv4_csum_adjust(data, pkt, roce_csum_diff(old, src, 8));
	}
	memcpy(old, (uint8_t *)bth + 5, 3);
	roce_bth_set_dqpn(bth, dqpn);
	roce_icrc_delta_add(d, pkt->bth_off + 5, old, (uint8_t *)bth + 5, 3);
	if (srcqp == UINT32_MAX)
		return;
	memcpy(old, (uint8_t *)deth + 5, 3);
	roce_deth_set_srcqp(deth, srcqp);
	roce_icrc_delta_add(d, (uint32_t)((uint8_t *)deth - data) + 5, old, (uint8_t *)deth + 5, 3);
}

/*
 * A CNP from a tenant to a UD QP @r (its DestQP is the sender of the
 * traffic that was marked).  A CNP has no DETH, so its sender is checked by
 * address: an endpoint of the tenant on this port, with its MAC.  It leaves
 * like the UD frames of that endpoint, without a DETH to rename.
 */
/* A tenant's frame forwarded toward @local (a hairpin) or the fabric, @len bytes. */
static inline void
count_egress(struct dp_lcore *lc, struct dp_tenant_stats *ts, uint32_t len, bool local)
{
	ts->egress_pkts++;
	ts->egress_bytes += len;
	if (local) {
		ts->ingress_pkts++;
		ts->ingress_bytes += len;
		lc->stats.fwd_hairpin++;
	} else {
		lc->stats.fwd_egress++;
	}
}

static enum dp_drop
ud_cnp_egress(struct dp_lcore *lc, const struct ovl *o, uint16_t in_port, struct dp_pkt *p,
	      const struct ovl_qp *r, const struct ovl_endpoint *re)
{
	uint8_t *data = p->data;
	uint32_t ei = ovl_lookup_endpoint(o, r->tenant, ip_src(data, &p->pkt), ip_addr_len(&p->pkt));
	const struct ovl_endpoint *le = ei == OVL_NONE ? NULL : &o->endpoints[ei];
	struct dp_tenant_stats *ts = &lc->tenant_stats[o->tenants[r->tenant].slot];
	struct roce_icrc_delta d;
	uint32_t len; /* the frame as it arrived, for the tenant counters */

	if (le == NULL || !le->local || le->port != in_port || !dp_mac_eq(data + 6, le->mac))
		return DP_DROP_SPOOFED_SOURCE;
	if (!re->reachable)
		return DP_DROP_NO_CONNECTION;
	roce_icrc_delta_init(&d);
	if (r->local)
		rte_memcpy(data, re->eth, 12);
	else
		ud_rename(data, &p->pkt, re->eth, le->host.b, re->host.b, r->pqpn, UINT32_MAX, &d);
	frame_finish(data, &p->pkt, &d);
	len = p->pkt.frame_len;
	if (!dp_vlan_out(o, r->tenant, re->out_port, p))
		return DP_DROP_TX_FAILED;
	p->out = re->out_port;
	count_egress(lc, ts, len, r->local);
	lc->stats.cnp_forwarded++;
	return DP_DROP_NONE;
}

/*
 * A CNP from the fabric to the local UD QP @l.  Its sender is named by its
 * host alone: in the tenant's view it comes from the tenant's first endpoint
 * on that host, and a host with none of the tenant's endpoints does not
 * speak for it.  The tenant's RNIC, whose QP it names, reacts to it.
 */
static enum dp_drop
ud_cnp_ingress(struct dp_lcore *lc, const struct ovl *o, struct dp_pkt *p, const struct ovl_qp *l,
	       const struct ovl_endpoint *le)
{
	uint8_t *data = p->data;
	uint32_t ei = ovl_lookup_tenant_host(o, l->tenant, ip_src(data, &p->pkt), ip_addr_len(&p->pkt));
	struct roce_icrc_delta d;
	uint32_t len; /* the frame as it arrived, for the tenant counters */

	if (ei == OVL_NONE || o->endpoints[ei].local)
		return DP_DROP_SPOOFED_SOURCE;
	roce_icrc_delta_init(&d);
	ud_rename(data, &p->pkt, le->eth, o->endpoints[ei].vip.b, le->vip.b, l->vqpn, UINT32_MAX, &d);
	frame_finish(data, &p->pkt, &d);
	len = p->pkt.frame_len;
	if (!dp_vlan_out(o, l->tenant, le->out_port, p))
		return DP_DROP_TX_FAILED;
	p->out = le->out_port;
	lc->tenant_stats[p->tslot].ingress_pkts++;
	lc->tenant_stats[p->tslot].ingress_bytes += len;
	lc->stats.fwd_ingress++;
	lc->stats.cnp_forwarded++;
	return DP_DROP_NONE;
}

enum dp_drop
dp_ud_egress(struct dp_lcore *lc, const struct ovl *o, uint16_t in_port, struct dp_pkt *p, uint32_t qi)
{
	uint8_t *data = p->data;
	const struct roce_pkt *pkt = &p->pkt;
	const struct ovl_qp *r = &o->qps[qi], *l;
	const struct ovl_endpoint *re = &o->endpoints[r->endpoint], *le;
	const struct roce_deth *deth = roce_pkt_ext(pkt, data, ROCE_EXT_DETH);
	unsigned alen = ip_addr_len(pkt);
	struct roce_icrc_delta d;
	uint32_t len; /* the frame as it arrived, for the tenant counters */
	uint32_t v;

	if (unlikely(pkt->opcode == ROCE_OP_CNP))
		return ud_cnp_egress(lc, o, in_port, p, r, re);
	if (!deth)
		return DP_DROP_TYPE_MISMATCH;
	v = ovl_lookup_tenant(o, r->tenant, ip_src(data, pkt), alen, roce_deth_srcqp(deth));
	if (v == OVL_NONE || !(v & OVL_V_QP))
		return DP_DROP_SPOOFED_SOURCE;
	l = &o->qps[OVL_V_IDX(v)];
	le = &o->endpoints[l->endpoint];
	if (!l->local || le->port != in_port || !dp_mac_eq(data + 6, le->mac))
		return DP_DROP_SPOOFED_SOURCE;
	if (!re->reachable)
		return DP_DROP_NO_CONNECTION;
	/* A controlled Q_Key (bit 31) is the privileged QPs' (IBTA 10.2.4): not a tenant's to send. */
	if (unlikely((roce_deth_qkey(deth) & 0x80000000u) && !o->tenants[r->tenant].privileged_qkey) &&
	    !(r->vqpn == ROCE_GSI_QPN && roce_deth_qkey(deth) == ROCE_GSI_QKEY))
		return DP_DROP_PRIVILEGED_QKEY;     /* but the GSI's own, to QP1 (RDMA-CM of learning tenants) */
	if (unlikely(!dp_acl_ud_allowed(&o->tenants[r->tenant], &le->vip, &re->vip)))
		return DP_DROP_ACL_DENIED;
	roce_icrc_delta_init(&d);
	if (r->local) {
		/* Hairpin: the receiver sees the same virtual view (and learns from the CM, as from the fabric). */
		if (unlikely(r->vqpn == ROCE_GSI_QPN))
			dp_cm_learn(lc, o, r->tenant, re, le, false, data + pkt->payload_off, pkt->payload_len);
		rte_memcpy(data, re->eth, 12);
	} else {
		/* To the fabric: the learner reads its VM's CM messages too (the IDs of a REP, a DREQ). */
		if (unlikely(r->vqpn == ROCE_GSI_QPN))
			dp_cm_learn(lc, o, r->tenant, le, re, true, data + pkt->payload_off, pkt->payload_len);
		ud_rename(data, pkt, re->eth, le->host.b, re->host.b, r->pqpn, l->pqpn, &d);
	}
	frame_finish(data, pkt, &d);
	len = p->pkt.frame_len;
	if (!dp_vlan_out(o, r->tenant, re->out_port, p))
		return DP_DROP_TX_FAILED;
	p->out = re->out_port;

	uint32_t slot = o->tenants[r->tenant].slot;
	struct dp_tenant_stats *ts = &lc->tenant_stats[slot];

	/* A tenant's UD frames share one shaper queue: dp_rate.h. */
	dp_rate_note(lc, &p->note, dp.conn_cap + slot, slot, p->data, pkt, r->local);

	count_egress(lc, ts, len, r->local);
	return DP_DROP_NONE;
}

enum dp_drop
dp_ud_ingress(struct dp_lcore *lc, const struct ovl *o, struct dp_pkt *p, uint32_t qi)
{
	uint8_t *data = p->data;
	const struct roce_pkt *pkt = &p->pkt;
	const struct ovl_qp *l = &o->qps[qi], *r;
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re;
	const struct roce_deth *deth = roce_pkt_ext(pkt, data, ROCE_EXT_DETH);
	struct roce_icrc_delta d;
	uint32_t len; /* the frame as it arrived, for the tenant counters */
	uint32_t v;

	if (!l->local)
		return DP_DROP_NO_CONNECTION;
	p->tslot = o->tenants[l->tenant].slot;
	if (unlikely(pkt->opcode == ROCE_OP_CNP))
		return ud_cnp_ingress(lc, o, p, l, le);
	if (!deth)
		return DP_DROP_TYPE_MISMATCH;
	/* To QP1 from the fabric: only the connection manager's MADs (dp_gsi_passes()). */
	if (unlikely(l->vqpn == ROCE_GSI_QPN) && (pkt->payload_len < 2 || data[pkt->payload_off + 1] != ROCE_MAD_CLASS_CM))
		return DP_DROP_GSI;
	/* The sender is a remote QP of the same tenant; local ones use the hairpin. */
	v = ovl_lookup_fabric(o, ip_src(data, pkt), ip_addr_len(pkt), roce_deth_srcqp(deth));
	/* RDMA-CM: the sender's QP1 record can be newer than the frame (etcd's watch): it waits. */
	if (unlikely(v == OVL_NONE && l->vqpn == ROCE_GSI_QPN && o->tenants[l->tenant].qp_learning))
		return dp_hold_fabric(lc, p, ip_src(data, pkt), ip_addr_len(pkt), roce_deth_srcqp(deth));
	if (v == OVL_NONE || !(v & OVL_V_QP) || o->qps[OVL_V_IDX(v)].tenant != l->tenant ||
	    o->qps[OVL_V_IDX(v)].local)
		return DP_DROP_SPOOFED_SOURCE;
	r = &o->qps[OVL_V_IDX(v)];
	re = &o->endpoints[r->endpoint];
	if (unlikely(!dp_acl_ud_allowed(&o->tenants[l->tenant], &re->vip, &le->vip)))
		return DP_DROP_ACL_DENIED;
	/* DCQCN: a CE mark answered with a CNP to the sender's QP. */
	if (unlikely(lc->rate.cc_any))
		dp_cc_ud_ingress(lc, o, data, pkt, r);
	roce_icrc_delta_init(&d);
	if (unlikely(l->vqpn == ROCE_GSI_QPN))
		dp_cm_learn(lc, o, l->tenant, le, re, false, data + pkt->payload_off, pkt->payload_len);
	ud_rename(data, pkt, le->eth, re->vip.b, le->vip.b, l->vqpn, r->vqpn, &d);
	frame_finish(data, pkt, &d);
	len = p->pkt.frame_len;
	if (!dp_vlan_out(o, l->tenant, le->out_port, p))
		return DP_DROP_TX_FAILED;
	p->out = le->out_port;
	lc->tenant_stats[p->tslot].ingress_pkts++;
	lc->tenant_stats[p->tslot].ingress_bytes += len;
	lc->stats.fwd_ingress++;
	return DP_DROP_NONE;
}
