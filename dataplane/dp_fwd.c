/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The forwarding path: rx burst, classify and rename, buffered tx with a TSC
 * drain.  See DESIGN.md "Packet paths" for what each direction does.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_prefetch.h>

#include "dp.h"
#include "dp_acl.h"
#include "dp_offload.h"
#include "dp_rate.h"

struct dp dp;

const char *const dp_drop_names[DP_DROP_MAX] = {
	[DP_DROP_NONE] = "none",
#define DP_X_PARSE(e, n, d) [DP_DROP_##e] = n,
	ROCE_PARSE_ERRORS(DP_X_PARSE)
#undef DP_X_PARSE
#define DP_X_SW(e, n) [DP_DROP_##e] = n,
	DP_SWITCH_DROPS(DP_X_SW)
#undef DP_X_SW
};

/* Where the addresses sit in the IP header. */
static inline unsigned
ip_addr_len(const struct roce_pkt *pkt)
{
	return pkt->ip_ver == 6 ? 16 : 4;
}

static inline uint8_t *
ip_src(uint8_t *data, const struct roce_pkt *pkt)
{
	return data + pkt->l3_off + (pkt->ip_ver == 6 ? 8 : 12);
}

static inline uint8_t *
ip_dst(uint8_t *data, const struct roce_pkt *pkt)
{
	return ip_src(data, pkt) + ip_addr_len(pkt);
}

/* True when the BTH sits where an option-less IP header puts it. */
static inline bool
ip_standard(const struct roce_pkt *pkt)
{
	return (unsigned)(pkt->bth_off - pkt->l3_off) == (pkt->ip_ver == 6 ? 48u : 28u);
}

static inline void
ipv4_csum_adjust(uint8_t *data, const struct roce_pkt *pkt, uint32_t diff)
{
	uint8_t *c = data + pkt->l3_off + 10;
	uint16_t v = roce_csum_adjust((uint16_t)(c[0] << 8 | c[1]), diff);

	c[0] = (uint8_t)(v >> 8);
	c[1] = (uint8_t)v;
}

/*
 * A non-zero UDP checksum is recomputed in full after every other change.
 * RoCEv2 senders leave it zero, so this is off the common path.
 */
static void
udp_csum_fix(uint8_t *data, const struct roce_pkt *pkt)
{
	uint8_t *udp = data + pkt->l4_off;
	uint32_t ulen = pkt->frame_len - pkt->l4_off, sum;
	unsigned alen = ip_addr_len(pkt);
	uint16_t v;

	if (udp[6] == 0 && udp[7] == 0)
		return;
	udp[6] = udp[7] = 0;
	sum = roce_csum_partial(ip_src(data, pkt), 2 * alen, 0);
	sum += 17 + ulen;
	sum = roce_csum_partial(udp, ulen, sum);
	v = (uint16_t)~roce_csum_fold(sum);
	if (v == 0)
		v = 0xffff;
	udp[6] = (uint8_t)(v >> 8);
	udp[7] = (uint8_t)v;
}

/*
 * Apply a connection's rewrite and start the ICRC difference @d with it.
 * The caller has checked that the frame's addresses and DestQP are the ones
 * the template was built from, so the precomputed differences hold.
 */
static inline void
rewrite_apply(uint8_t *data, const struct roce_pkt *pkt, const struct ovl_rewrite *rw,
	      struct roce_icrc_delta *d)
{
	struct roce_bth *bth = (struct roce_bth *)(data + pkt->bth_off);
	unsigned alen = ip_addr_len(pkt);
	uint8_t *src = ip_src(data, pkt);

	rte_memcpy(data, rw->eth, 12);
	if (!rw->changes_icrc)
		return;
	if (likely(ip_standard(pkt))) {
		rte_memcpy(src, rw->src_ip, alen);
		rte_memcpy(src + alen, rw->dst_ip, alen);
		roce_bth_set_dqpn(bth, rw->dqpn);
		d->acc = rw->icrc_crc0;
		d->end = pkt->bth_off + 8;
	} else {
		/* IPv4 options move the BTH: account for each field on its own. */
		uint8_t old[8];

		memcpy(old, src, 8);
		rte_memcpy(src, rw->src_ip, 4);
		rte_memcpy(src + 4, rw->dst_ip, 4);
		roce_icrc_delta_add(d, (uint32_t)(src - data), old, src, 8);
		memcpy(old, (uint8_t *)bth + 5, 3);
		roce_bth_set_dqpn(bth, rw->dqpn);
		roce_icrc_delta_add(d, pkt->bth_off + 5, old, (uint8_t *)bth + 5, 3);
	}
	if (pkt->ip_ver == 4)
		ipv4_csum_adjust(data, pkt, rw->ip_csum_diff);
}

/* Seal the frame: the new ICRC, and the UDP checksum if the sender set one. */
static inline void
frame_finish(uint8_t *data, const struct roce_pkt *pkt, const struct roce_icrc_delta *d)
{
	if (d->end)
		roce_icrc_put(data, pkt->icrc_off,
			      roce_icrc_delta_apply(d, roce_icrc_get(data, pkt), pkt->icrc_off));
	if (unlikely(data[pkt->l4_off + 6] | data[pkt->l4_off + 7]))
		udp_csum_fix(data, pkt);
}

/*
 * The owner's side of memory: translate an advertised RETH or AtomicETH to
 * the window the owner registered, checking bounds and access when the
 * tenant enforces them.
 */
static enum dp_drop
mr_translate(struct dp_lcore *lc, const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip,
	     unsigned alen, uint8_t *data, const struct roce_pkt *pkt, struct roce_icrc_delta *d)
{
	uint8_t *hdr, old[12];
	uint32_t rkey, access, new_rkey;
	uint64_t va, len, new_va;
	int r;

	if (pkt->exts & ROCE_EXT_RETH) {
		struct roce_reth *reth = roce_pkt_ext(pkt, data, ROCE_EXT_RETH);

		hdr = (uint8_t *)reth;
		rkey = roce_reth_rkey(reth);
		va = roce_reth_va(reth);
		len = roce_reth_dmalen(reth);
		access = (pkt->flags & ROCE_OPF_READ) ? CFG_ACC_REMOTE_READ : CFG_ACC_REMOTE_WRITE;
	} else if (pkt->exts & ROCE_EXT_ATMETH) {
		struct roce_atmeth *a = roce_pkt_ext(pkt, data, ROCE_EXT_ATMETH);

		hdr = (uint8_t *)a;
		rkey = roce_atmeth_rkey(a);
		va = roce_atmeth_va(a);
		len = 8;
		access = CFG_ACC_REMOTE_ATOMIC;
	} else {
		return DP_DROP_NONE;
	}
	r = ovl_mr_translate(o, tenant, owner_vip, alen, rkey, va, len, access, &new_rkey, &new_va);
	if (r != OVL_MR_OK) {
		if (!o->tenants[tenant].mr_enforce)
			return DP_DROP_NONE;
		return r == OVL_MR_UNKNOWN ? DP_DROP_MR_UNKNOWN :
		       r == OVL_MR_BOUNDS ? DP_DROP_MR_OUT_OF_BOUNDS : DP_DROP_MR_ACCESS_DENIED;
	}
	/* VA and R_Key lead both headers: the same 12 bytes. */
	memcpy(old, hdr, 12);
	((struct roce_reth *)hdr)->va_hi = htonl((uint32_t)(new_va >> 32));
	((struct roce_reth *)hdr)->va_lo = htonl((uint32_t)new_va);
	((struct roce_reth *)hdr)->rkey = htonl(new_rkey);
	roce_icrc_delta_add(d, (uint32_t)(hdr - data), old, hdr, 12);
	lc->stats.mr_translated++;
	return DP_DROP_NONE;
}

/*
 * Message-level bookkeeping of requests.  A First or Only opens a message
 * and its decisions are made once (@decide); Middle and Last reuse them.  A
 * Middle or Last with no open message (a go-back-N retransmission) forwards.
 */
static inline bool
msg_first(const struct roce_pkt *pkt)
{
	return (pkt->flags & (ROCE_OPF_REQ | ROCE_OPF_FIRST)) == (ROCE_OPF_REQ | ROCE_OPF_FIRST) ||
	       (pkt->flags & (ROCE_OPF_REQ | ROCE_OPF_ONLY)) == (ROCE_OPF_REQ | ROCE_OPF_ONLY);
}

static inline enum dp_drop
msg_continue(struct dp_dir_state *s, const struct roce_pkt *pkt)
{
	bool denied = s->msg_open && s->msg_denied;

	if (pkt->flags & ROCE_OPF_LAST)
		s->msg_open = s->msg_denied = 0;
	return denied ? DP_DROP_MESSAGE_DENIED : DP_DROP_NONE;
}

static inline void
msg_open(struct dp_dir_state *s, const struct roce_pkt *pkt, enum dp_drop verdict)
{
	s->msg_open = !!(pkt->flags & ROCE_OPF_FIRST);
	s->msg_denied = verdict != DP_DROP_NONE;
}

/* Does the opcode's transport fit the QP's type? CNPs fit any. */
static inline bool
transport_ok(uint8_t opcode, uint8_t qp_type)
{
	unsigned tr = roce_opcode_transport(opcode);

	if (opcode == ROCE_OP_CNP)
		return true;
	switch (qp_type) {
	case CFG_QP_RC:
		return tr == ROCE_TR_RC;
	case CFG_QP_UC:
		return tr == ROCE_TR_UC;
	default:
		return tr == ROCE_TR_UD;
	}
}

/* UD: rename the addresses, DestQP and the DETH source QPN, field by field. */
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
	memcpy(old, (uint8_t *)deth + 5, 3);
	roce_deth_set_srcqp(deth, srcqp);
	roce_icrc_delta_add(d, (uint32_t)((uint8_t *)deth - data) + 5, old, (uint8_t *)deth + 5, 3);
}

static enum dp_drop
ud_egress(struct dp_lcore *lc, const struct ovl *o, uint16_t in_port, uint8_t *data, const struct roce_pkt *pkt,
	  uint32_t qi, uint16_t *out_port)
{
	const struct ovl_qp *r = &o->qps[qi], *l;
	const struct ovl_endpoint *re = &o->endpoints[r->endpoint], *le;
	const struct roce_deth *deth = roce_pkt_ext(pkt, data, ROCE_EXT_DETH);
	unsigned alen = ip_addr_len(pkt);
	struct roce_icrc_delta d;
	uint32_t v;

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
	if (unlikely(!dp_acl_ud_allowed(&o->tenants[r->tenant], &le->vip, &re->vip)))
		return DP_DROP_ACL_DENIED;
	roce_icrc_delta_init(&d);
	if (r->local) {
		/* Hairpin: the receiver sees the same virtual view. */
		rte_memcpy(data, re->eth, 12);
	} else {
		ud_rename(data, pkt, re->eth, le->host.b, re->host.b, r->pqpn, l->pqpn, &d);
	}
	frame_finish(data, pkt, &d);
	*out_port = re->out_port;

	uint32_t slot = o->tenants[r->tenant].slot;
	struct dp_tenant_stats *ts = &lc->tenant_stats[slot];

	/* A tenant's UD frames share one shaper queue: dp_rate.h. */
	dp_rate_note(lc, dp.conn_cap + slot, slot, data, pkt, r->local);

	ts->egress_pkts++;
	ts->egress_bytes += pkt->frame_len;
	if (r->local) {
		ts->ingress_pkts++;
		ts->ingress_bytes += pkt->frame_len;
		lc->stats.fwd_hairpin++;
	} else {
		lc->stats.fwd_egress++;
	}
	return DP_DROP_NONE;
}

static enum dp_drop
ud_ingress(struct dp_lcore *lc, const struct ovl *o, uint8_t *data, const struct roce_pkt *pkt, uint32_t qi,
	   uint16_t *out_port)
{
	const struct ovl_qp *l = &o->qps[qi], *r;
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re;
	const struct roce_deth *deth = roce_pkt_ext(pkt, data, ROCE_EXT_DETH);
	struct roce_icrc_delta d;
	uint32_t v;

	if (!l->local)
		return DP_DROP_NO_CONNECTION;
	lc->cur_tenant = o->tenants[l->tenant].slot;
	if (!deth)
		return DP_DROP_TYPE_MISMATCH;
	/* The sender is a remote QP of the same tenant; local ones use the hairpin. */
	v = ovl_lookup_fabric(o, ip_src(data, pkt), ip_addr_len(pkt), roce_deth_srcqp(deth));
	if (v == OVL_NONE || !(v & OVL_V_QP) || o->qps[OVL_V_IDX(v)].tenant != l->tenant ||
	    o->qps[OVL_V_IDX(v)].local)
		return DP_DROP_SPOOFED_SOURCE;
	r = &o->qps[OVL_V_IDX(v)];
	re = &o->endpoints[r->endpoint];
	if (unlikely(!dp_acl_ud_allowed(&o->tenants[l->tenant], &re->vip, &le->vip)))
		return DP_DROP_ACL_DENIED;
	roce_icrc_delta_init(&d);
	ud_rename(data, pkt, le->eth, re->vip.b, le->vip.b, l->vqpn, r->vqpn, &d);
	frame_finish(data, pkt, &d);
	*out_port = le->out_port;
	lc->tenant_stats[lc->cur_tenant].ingress_pkts++;
	lc->tenant_stats[lc->cur_tenant].ingress_bytes += pkt->frame_len;
	lc->stats.fwd_ingress++;
	return DP_DROP_NONE;
}

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
		return ud_egress(lc, o, in_port, data, &pkt, OVL_V_IDX(v), out_port);

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
			verdict = mr_translate(lc, o, c->tenant, ip_dst(data, &pkt), alen, data, &pkt, &d);
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
		return ud_ingress(lc, o, data, &pkt, OVL_V_IDX(v), out_port);

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
			verdict = mr_translate(lc, o, c->tenant, c->l_vip, alen, data, &pkt, &d);
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

/*
 * A dropped frame is charged to the tenant whose port it came from, or on
 * the fabric side to the tenant of the connection it was found to belong to.
 */
static inline void
count_drop(struct dp_lcore *lc, uint16_t in_port, enum dp_drop why)
{
	lc->stats.drops[why]++;
	if (!dp.ports[in_port].uplink)
		lc->tenant_stats[lc->ovl->tenants[lc->ovl->ports[in_port].tenant].slot].drops++;
	else if (lc->cur_tenant != OVL_NONE)
		lc->tenant_stats[lc->cur_tenant].drops++;
}

/* A small tx buffer per (lcore, port), flushed when full or on the drain tick. */
struct txq {
	uint16_t n;
	struct rte_mbuf *pkts[DP_BURST];
};

static void
tx_flush(struct dp_lcore *lc, uint16_t p, struct txq *q)
{
	uint16_t sent = 0;

	/* Retry a bounded number of times: a slow peer is backpressure, not loss. */
	for (int tries = 0; sent < q->n && tries < 64; tries++)
		sent += rte_eth_tx_burst(dp.ports[p].port_id, lc->idx, q->pkts + sent, q->n - sent);
	for (uint16_t i = 0; i < sent; i++)
		lc->stats.tx_bytes[p] += q->pkts[i]->pkt_len;
	lc->stats.tx_pkts[p] += sent;
	if (unlikely(sent < q->n)) {
		lc->stats.drops[DP_DROP_TX_FAILED] += q->n - sent;
		rte_pktmbuf_free_bulk(q->pkts + sent, q->n - sent);
	}
	q->n = 0;
}

static inline void
tx_enqueue(struct dp_lcore *lc, struct txq *tq, uint16_t p, struct rte_mbuf *m)
{
	struct txq *q = &tq[p];

	q->pkts[q->n++] = m;
	if (q->n == DP_BURST)
		tx_flush(lc, p, q);
}

static void
tx_flush_all(struct dp_lcore *lc, struct txq *tq)
{
	for (uint16_t p = 0; p < dp.n_ports; p++)
		if (tq[p].n)
			tx_flush(lc, p, &tq[p]);
}

/* Send the NAKs the control plane asked for (dp_acl.h) on this lcore's own tx queues. */
static void
nak_send(struct dp_lcore *lc, struct txq *tq)
{
	struct rte_mbuf *m[DP_BURST];
	uint16_t port[DP_BURST];
	unsigned n = dp_acl_nak_poll(lc, m, port, DP_BURST);

	for (unsigned i = 0; i < n; i++)
		tx_enqueue(lc, tq, port[i], m[i]);
}

/* Frames the shapers release now, and the CNPs built during the burst. */
static void
rate_send(struct dp_lcore *lc, struct txq *tq, uint64_t now)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct rte_mbuf *m[DP_BURST];
	uint16_t port[DP_BURST];
	unsigned n = dp_rate_dequeue(lc, now, m, port, DP_BURST);

	for (unsigned i = 0; i < n; i++)
		tx_enqueue(lc, tq, port[i], m[i]);
	for (uint16_t i = 0; i < r->n_cnp; i++)
		tx_enqueue(lc, tq, r->cnp_port[i], r->cnp[i]);
	/*
	 * Paced frames leave when the shaper says, not up to 100 us later with
	 * the next drain, and a CNP at once: both are DCQCN's feedback loop.
	 */
	if (n || r->n_cnp)
		tx_flush_all(lc, tq);
	r->n_cnp = 0;
}

int
dp_lcore_main(void *arg)
{
	struct dp_lcore *lc = arg;
	struct txq tq[DP_MAX_PORTS];
	struct rte_mbuf *pkts[DP_BURST];
	const uint64_t drain_tsc = (rte_get_tsc_hz() + 9999) / 10000; /* 100 us */
	uint64_t prev_tsc = rte_rdtsc();
	const bool is_main = lc->lcore_id == rte_get_main_lcore();

	memset(tq, 0, sizeof(tq));
	if (dp.qsv) {
		rte_rcu_qsbr_thread_register(dp.qsv, lc->idx);
		rte_rcu_qsbr_thread_online(dp.qsv, lc->idx);
	}
	while (!dp.quit) {
		uint64_t now = rte_rdtsc();

		/* One overlay for the whole iteration; see the quiescent report below. */
		lc->ovl = __atomic_load_n(&dp.ovl, __ATOMIC_ACQUIRE);
		dp_rate_check_sync(lc);
		if (unlikely(now - prev_tsc > drain_tsc)) {
			tx_flush_all(lc, tq);
			prev_tsc = now;
			if (unlikely(lc->rate.n_unshape))
				dp_rate_unshape_check(lc, now);
			if (is_main && dp.housekeep)
				dp.housekeep();
		}
		lc->now = now;
		if (unlikely(lc->nak_ring && !rte_ring_empty(lc->nak_ring)))
			nak_send(lc, tq);
		if (lc->rate.sh)
			rate_send(lc, tq, now);
		for (uint16_t i = 0; i < lc->n_rx; i++) {
			uint16_t p = lc->rx_ports[i];
			bool uplink = dp.ports[p].uplink;
			uint16_t nb;

			/* Backpressure: a tenant whose queues are full is not polled. */
			if (!uplink && lc->rate.sh &&
			    dp_rate_port_blocked(lc, lc->ovl->tenants[lc->ovl->ports[p].tenant].slot, now)) {
				lc->stats.bp_skips++;
				continue;
			}
			nb = rte_eth_rx_burst(dp.ports[p].port_id, 0, pkts, DP_BURST);
			if (nb == 0)
				continue;
			lc->last_rx_tsc = now;
			dp.traffic_seen = true;
			lc->stats.rx_pkts[p] += nb;
			for (uint16_t k = 0; k < nb; k++) {
				struct rte_mbuf *m = pkts[k];
				uint16_t out = 0;
				enum dp_drop why;

				if (k + 1 < nb)
					rte_prefetch0(rte_pktmbuf_mtod(pkts[k + 1], void *));
				lc->stats.rx_bytes[p] += m->pkt_len;
				lc->cur_tenant = OVL_NONE;
				lc->rate.sp_shaped = false;
				why = uplink ? dp_process_ingress(lc, p, m, &out) : dp_process_egress(lc, p, m, &out);
				if (likely(why == DP_DROP_NONE)) {
					if (lc->rate.sp_shaped)
						why = dp_rate_enqueue(lc, m, out);
					else if (out == DP_PORT_NONE)
						rte_pktmbuf_free(m);
					else
						tx_enqueue(lc, tq, out, m);
				}
				if (unlikely(why != DP_DROP_NONE)) {
					count_drop(lc, p, why);
					rte_pktmbuf_free(m);
				}
			}
		}
		if (unlikely(lc->rate.n_cnp))
			rate_send(lc, tq, now);
		if (dp.qsv)
			rte_rcu_qsbr_quiescent(dp.qsv, lc->idx);
	}
	/* Draining: what the shapers release within 100 ms still leaves; dp_rate_fini() counts the rest. */
	for (uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 10; !dp_rate_idle(lc) && rte_rdtsc() < end;)
		rate_send(lc, tq, rte_rdtsc());
	tx_flush_all(lc, tq);
	if (dp.qsv) {
		rte_rcu_qsbr_thread_offline(dp.qsv, lc->idx);
		rte_rcu_qsbr_thread_unregister(dp.qsv, lc->idx);
	}
	return 0;
}

void
dp_stats_sum(struct dp_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const uint64_t *src = (const uint64_t *)&dp.lcores[l].stats;
		uint64_t *dst = (uint64_t *)sum;

		for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
			dst[i] += src[i];
	}
}

void
dp_tenant_stats_sum(uint32_t tenant, struct dp_tenant_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const struct dp_tenant_stats *t = &dp.lcores[l].tenant_stats[tenant];

		sum->egress_pkts += t->egress_pkts;
		sum->egress_bytes += t->egress_bytes;
		sum->ingress_pkts += t->ingress_pkts;
		sum->ingress_bytes += t->ingress_bytes;
		sum->drops += t->drops;
	}
}
