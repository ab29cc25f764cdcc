/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Offload rules: a description (struct rule_spec), the rte_flow arrays built
 * from it, the testpmd command that creates the same rule, and the probe of
 * what each port accepts.  See dp_offload.c for which rule a connection gets.
 */
#include "dp_offload_int.h"


void
ofl_rule_build(struct rule *r, const struct rule_spec *s)
{
	int ni = 0, na = 0;

	memset(r, 0, sizeof(*r));
	if (s->transfer) {
		r->attr.transfer = 1;
		r->rep.port_id = dp.ports[s->port_idx].port_id;
		r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_PORT_REPRESENTOR,
							 .spec = &r->rep, .mask = &rte_flow_item_ethdev_mask };
		memcpy(&r->eth.hdr.src_addr, s->src_mac, 6);
		memset(&r->eth_mask.hdr.src_addr, 0xff, 6);
		r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &r->eth,
							 .mask = &r->eth_mask };
	} else {
		r->attr.ingress = 1;
		r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_ETH };
	}
	if (s->alen == 4) {
		memcpy(&r->ip4.hdr.src_addr, s->src, 4);
		memcpy(&r->ip4.hdr.dst_addr, s->dst, 4);
		memset(&r->ip4_mask.hdr.src_addr, 0xff, 4);
		memset(&r->ip4_mask.hdr.dst_addr, 0xff, 4);
		r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &r->ip4,
							 .mask = &r->ip4_mask };
	} else {
		memcpy(&r->ip6.hdr.src_addr, s->src, 16);
		memcpy(&r->ip6.hdr.dst_addr, s->dst, 16);
		memset(&r->ip6_mask.hdr.src_addr, 0xff, 16);
		memset(&r->ip6_mask.hdr.dst_addr, 0xff, 16);
		r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_IPV6, .spec = &r->ip6,
							 .mask = &r->ip6_mask };
	}
	r->udp.hdr.dst_port = rte_cpu_to_be_16(s->udp_port);
	r->udp_mask.hdr.dst_port = RTE_BE16(0xffff);
	r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &r->udp,
						 .mask = &r->udp_mask };
#ifdef DP_HAVE_IB_BTH
	r->bth.hdr.dst_qp[0] = (uint8_t)(s->dqpn >> 16);
	r->bth.hdr.dst_qp[1] = (uint8_t)(s->dqpn >> 8);
	r->bth.hdr.dst_qp[2] = (uint8_t)s->dqpn;
	memset(r->bth_mask.hdr.dst_qp, 0xff, 3);
	if (s->transfer) {
		r->bth.hdr.opcode = (uint8_t)(s->opclass << 5);
		r->bth_mask.hdr.opcode = 0xe0;
	}
	r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_IB_BTH, .spec = &r->bth,
						 .mask = &r->bth_mask };
#else
	/*
	 * The BTH right after the UDP header: DestQP is bytes 5..7.  A forward
	 * rule also matches the opcode's top three bits (the transport), so
	 * that only the QP's own transport (and no CNP) bypasses software.
	 */
	r->raw.relative = 1;
	r->raw_mask.relative = 1;
	r->raw_mask.search = 1;
	r->raw_mask.offset = -1;
	r->raw_mask.limit = 0xffff;
	r->raw_mask.length = 0xffff;
	if (s->transfer) {
		r->raw.offset = 0;
		r->raw.length = 8;
		r->raw_pat[0] = (uint8_t)(s->opclass << 5);
		r->raw_pat_mask[0] = 0xe0;
		r->raw_pat[5] = (uint8_t)(s->dqpn >> 16);
		r->raw_pat[6] = (uint8_t)(s->dqpn >> 8);
		r->raw_pat[7] = (uint8_t)s->dqpn;
		memset(r->raw_pat_mask + 5, 0xff, 3);
	} else {
		r->raw.offset = 5;
		r->raw.length = 3;
		r->raw_pat[0] = (uint8_t)(s->dqpn >> 16);
		r->raw_pat[1] = (uint8_t)(s->dqpn >> 8);
		r->raw_pat[2] = (uint8_t)s->dqpn;
		memset(r->raw_pat_mask, 0xff, 3);
	}
	r->raw.pattern = r->raw_pat;
	r->raw_mask.pattern = r->raw_pat_mask;
	r->items[ni++] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_RAW, .spec = &r->raw,
						 .mask = &r->raw_mask };
#endif
	r->items[ni] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_END };

	if (s->actions & CAP(FORWARD)) {
		r->mf_dst.operation = RTE_FLOW_MODIFY_SET;
		r->mf_dst.dst.field = RTE_FLOW_FIELD_MAC_DST;
		r->mf_dst.src.field = RTE_FLOW_FIELD_VALUE;
		memcpy(r->mf_dst.src.value, s->new_eth, 6);
		r->mf_dst.width = 48;
		r->mf_src = r->mf_dst;
		r->mf_src.dst.field = RTE_FLOW_FIELD_MAC_SRC;
		memcpy(r->mf_src.src.value, s->new_eth + 6, 6);
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_MODIFY_FIELD,
							     .conf = &r->mf_dst };
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_MODIFY_FIELD,
							     .conf = &r->mf_src };
	}
	if (s->actions & CAP(MARK)) {
		r->mark.id = s->mark;
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_MARK, .conf = &r->mark };
	}
	if (s->actions & CAP(QUEUE)) {
		/* The queue polled by the lcore that owns the connection's half. */
		r->queue.index = s->queue;
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_QUEUE,
							     .conf = &r->queue };
	}
	if (s->actions & CAP(COUNT))
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_COUNT,
							     .conf = &r->count };
	if (s->actions & CAP(AGE)) {
		r->age.timeout = RULE_AGE_S;
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_AGE, .conf = &r->age };
	}
	if (s->actions & CAP(DROP))
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_DROP };
	if (s->actions & CAP(FORWARD)) {
		r->out.port_id = dp.ports[s->out_port_idx].port_id;
		r->actions[na++] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT,
							     .conf = &r->out };
	}
	r->actions[na] = (struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_END };
}

static size_t
hex_text(char *buf, size_t len, const uint8_t *b, unsigned n)
{
	size_t k = 0;

	for (unsigned i = 0; i < n && k + 2 < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%02x", b[i]);
	return k;
}

/* The testpmd command that creates the rule of @s (DPDK's testpmd flow syntax). */
void
ofl_rule_testpmd(const struct rule_spec *s, char *buf, size_t len)
{
	char a[CFG_IP_STRLEN], b[CFG_IP_STRLEN];
#ifndef DP_HAVE_IB_BTH
	char hex[40];
#endif
	size_t n;
	uint16_t pid = dp.ports[s->port_idx].port_id;

#define OUT(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	n = 0;
	OUT("flow create %u %s pattern ", pid, s->transfer ? "transfer" : "ingress");
	if (s->transfer)
		OUT("port_representor port_id is %u / eth src is %02x:%02x:%02x:%02x:%02x:%02x / ", pid,
		    s->src_mac[0], s->src_mac[1], s->src_mac[2], s->src_mac[3], s->src_mac[4], s->src_mac[5]);
	else
		OUT("eth / ");
	ip_text(s->src, s->alen, a, sizeof(a));
	ip_text(s->dst, s->alen, b, sizeof(b));
	OUT("%s src is %s dst is %s / udp dst is %u / ", s->alen == 4 ? "ipv4" : "ipv6", a, b, s->udp_port);
#ifdef DP_HAVE_IB_BTH
	if (s->transfer)
		OUT("ib_bth opcode spec %u opcode mask 0xe0 dst_qp is %u / ", s->opclass << 5, s->dqpn);
	else
		OUT("ib_bth dst_qp is %u / ", s->dqpn);
#else
	if (s->transfer) {
		uint8_t p[8] = { (uint8_t)(s->opclass << 5), 0, 0, 0, 0, (uint8_t)(s->dqpn >> 16),
				 (uint8_t)(s->dqpn >> 8), (uint8_t)s->dqpn };

		hex_text(hex, sizeof(hex), p, 8);
		OUT("raw relative is 1 search is 0 offset is 0 limit is 0 pattern_hex spec %s "
		    "pattern_hex mask e000000000ffffff / ", hex);
	} else {
		uint8_t p[3] = { (uint8_t)(s->dqpn >> 16), (uint8_t)(s->dqpn >> 8), (uint8_t)s->dqpn };

		hex_text(hex, sizeof(hex), p, 3);
		OUT("raw relative is 1 search is 0 offset is 5 limit is 0 pattern_hex spec %s "
		    "pattern_hex mask ffffff / ", hex);
	}
#endif
	OUT("end actions ");
	if (s->actions & CAP(FORWARD)) {
		hex_text(a, sizeof(a), s->new_eth, 6);
		hex_text(b, sizeof(b), s->new_eth + 6, 6);
		OUT("modify_field op set dst_type mac_dst src_type value src_value 0x%s width 48 / ", a);
		OUT("modify_field op set dst_type mac_src src_type value src_value 0x%s width 48 / ", b);
	}
	if (s->actions & CAP(MARK))
		OUT("mark id %u / ", s->mark);
	if (s->actions & CAP(QUEUE))
		OUT("queue index %u / ", s->queue);
	if (s->actions & CAP(COUNT))
		OUT("count / ");
	if (s->actions & CAP(AGE))
		OUT("age timeout %u / ", RULE_AGE_S);
	if (s->actions & CAP(DROP))
		OUT("drop / ");
	if (s->actions & CAP(FORWARD))
		OUT("represented_port ethdev_port_id %u / ", dp.ports[s->out_port_idx].port_id);
	OUT("end");
#undef OUT
}

/*
 * ------------------------------------------------------------------------
 * The probe: what each port accepts, one action at a time, on a rule of the
 * shape this port will carry.
 */
static void
probe_spec(uint16_t pi, struct rule_spec *s)
{
	const struct ovl *o = dp.ovl;

	memset(s, 0, sizeof(*s));
	s->port_idx = pi;
	s->udp_port = o ? o->udp_port : ROCE_UDP_PORT;
	s->dqpn = 0x12;
	s->mark = 1;
	if (o && o->ports[pi].uplink) {
		/* From a documentation address to this uplink's own. */
		s->alen = (uint8_t)ip_len(o->ports[pi].ip.ver);
		memcpy(s->dst, o->ports[pi].ip.b, s->alen);
		if (s->alen == 4) {
			s->src[0] = 192, s->src[1] = 0, s->src[2] = 2, s->src[3] = 1;
		} else {
			s->src[0] = 0x20, s->src[1] = 0x01, s->src[2] = 0x0d, s->src[3] = 0xb8, s->src[15] = 1;
		}
	} else {
		s->alen = 4;
		s->src[0] = 192, s->src[1] = 0, s->src[2] = 2, s->src[3] = 1;
		s->dst[0] = 192, s->dst[1] = 0, s->dst[2] = 2, s->dst[3] = 2;
	}
}

static void
probe_port(uint16_t pi)
{
	struct ofl_port *p = &ofl.ports[pi];
	uint16_t pid = dp.ports[pi].port_id;
	struct rule_spec s;
	struct rule r;

	p->caps = 0;
	for (int c = 0; c < DP_OFL_CAP_MAX; c++) {
		struct rte_flow_error err;
		int rc;

		if (c == DP_OFL_CAP_METER) {
			struct rte_mtr_capabilities mcap;
			struct rte_mtr_error merr;

			memset(&mcap, 0, sizeof(mcap));
			memset(&merr, 0, sizeof(merr));
			rc = rte_mtr_capabilities_get(pid, &mcap, &merr);
			if (rc == 0 && mcap.n_max > 0) {
				p->caps |= CAP(METER);
				textf(p->why[c], sizeof(p->why[c]), "accepted: %u meters (probed only: the switch "
					 "shapes and does not police)", mcap.n_max);
			} else {
				char msg[96];

				text_copy(msg, sizeof(msg), merr.message ? merr.message : "no message");
				textf(p->why[c], sizeof(p->why[c]), "refused: rte_mtr_capabilities_get: %s (%s)",
					 msg, rc ? rte_strerror(-rc) : "no meters");
			}
			continue;
		}
		probe_spec(pi, &s);
		s.actions = 1u << c;
		if (c == DP_OFL_CAP_FORWARD) {
			s.transfer = true;
			s.out_port_idx = pi;
			s.opclass = 0;
		}
		ofl_rule_build(&r, &s);
		memset(&err, 0, sizeof(err));
		rc = rte_flow_validate(pid, &r.attr, r.items, r.actions, &err);
		if (rc == 0) {
			p->caps |= 1u << c;
			textf(p->why[c], sizeof(p->why[c]), "accepted");
		} else {
			char t[140];

			flow_error_text(rc, &err, t, sizeof(t));
			textf(p->why[c], sizeof(p->why[c]), "refused: %s", t);
		}
	}
	p->probed = true;
}

void
dp_offload_init(void)
{
	char caps[96];

	pthread_mutex_lock(&dp.ctl_lock);
	for (uint16_t pi = 0; pi < dp.n_ports; pi++) {
		probe_port(pi);
		caps_text(ofl.ports[pi].caps, caps, sizeof(caps));
		fprintf(stderr, "offload: port %s (%s, ethdev %u) accepts: %s\n", dp.ports[pi].name,
			dp.ports[pi].device, dp.ports[pi].port_id, *caps ? caps : "nothing");
	}
	ofl.started = true;
	ofl.pending = true;
	memset(&ofl.totals, 0, sizeof(ofl.totals));
	pthread_mutex_unlock(&dp.ctl_lock);
}

uint32_t
dp_offload_port_caps(uint16_t port_idx)
{
	return port_idx < DP_MAX_PORTS ? ofl.ports[port_idx].caps : 0;
}


/* Try one rule: validate, then create.  0 when installed; else the reason in @why. */
int
ofl_try_rule(const struct rule_spec *s, struct ofl_side *sd, char *why, size_t why_len)
{
	uint16_t pid = dp.ports[s->port_idx].port_id;
	struct rte_flow_error err;
	struct rte_flow *f;
	struct rule r;
	char t[160];
	int rc;

	ofl_rule_build(&r, s);
	memset(&err, 0, sizeof(err));
	rc = rte_flow_validate(pid, &r.attr, r.items, r.actions, &err);
	if (rc != 0) {
		flow_error_text(rc, &err, t, sizeof(t));
		textf(why, why_len, "rte_flow_validate: %s", t);
		return -1;
	}
	memset(&err, 0, sizeof(err));
	f = rte_flow_create(pid, &r.attr, r.items, r.actions, &err);
	if (!f) {
		flow_error_text(rte_errno ? rte_errno : EIO, &err, t, sizeof(t));
		textf(why, why_len, "rte_flow_create: %s", t);
		ofl.totals.create_failed++;
		return -1;
	}
	sd->flow = f;
	return 0;
}
