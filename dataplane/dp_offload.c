/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The offload manager: probe the ports, install rte_flow rules for steady
 * connections, read their counters back, withdraw them on reloads and at
 * shutdown.  See dp_offload.h for the contract and the ownership rules.
 *
 * Rules.  Each connection has two sides, each with at most one rule:
 *   tenant side, on L's port:  L's frames to R
 *       eth / ipv4|ipv6 src is L.vip dst is R.vip / udp dst is 4791 / BTH DestQP is R.vqpn
 *   fabric side, on the uplink of L's host:  R's frames to L
 *       eth / ipv4|ipv6 src is R.host dst is L.host / udp dst is 4791 / BTH DestQP is L.pqpn
 * The BTH is matched by a RAW item at the UDP payload (DPDK 22.11), or by
 * the IB_BTH item where the DPDK built against has it (23.07 and later).
 * Which rule a side gets, richest first, among those the port accepts:
 *   drop     DROP (+ COUNT): a connection denied by dp_offload_drop_conn();
 *   forward  (tenant side of a hairpin only, where nothing ICRC-covered
 *            changes and software has nothing else to do: no MR translation,
 *            no MR enforcement, no rate cap) transfer rule matching also L's
 *            port, MAC and the opcode's transport, rewriting both MACs
 *            (MODIFY_FIELD) and sending to R's port (REPRESENTED_PORT)
 *            (+ COUNT, AGE);
 *   partial  MARK (state id + 1) + QUEUE 0 + COUNT + AGE, degrading to fewer
 *            of the optional actions until one validates and creates.
 * The wire stays correct in every case: a partial rule only tells software
 * which connection a frame belongs to (and software checks that), so the
 * output is the software path's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_malloc.h>
#include <rte_mtr.h>
#include <rte_telemetry.h>

#include "dp_offload.h"

#define RULE_AGE_S 60          /* AGE timeout: an idle rule is withdrawn after this */
#define QUERY_BUDGET 4096      /* counter reads per sample, round robin */
#define REFUSALS_LOGGED 8      /* per port, on stderr; the rest only in /roce/offload */
#define TEL_PAGE 8             /* connections per /roce/offload page */

enum { SIDE_TENANT, SIDE_FABRIC, SIDES };
static const char *const side_names[SIDES] = { "egress", "ingress" };

static const char *const cap_names[DP_OFL_CAP_MAX] = {
	[DP_OFL_CAP_MARK] = "mark",
	[DP_OFL_CAP_QUEUE] = "queue",
	[DP_OFL_CAP_COUNT] = "count",
	[DP_OFL_CAP_AGE] = "age",
	[DP_OFL_CAP_DROP] = "drop",
	[DP_OFL_CAP_FORWARD] = "forward",
	[DP_OFL_CAP_METER] = "meter",
};

static const char *const kind_names[] = {
	[DP_OFL_PARTIAL] = "partial",
	[DP_OFL_FORWARD] = "forward",
	[DP_OFL_DROP] = "drop",
};

#define CAP(c) (1u << DP_OFL_CAP_##c)

/* One side of a connection. */
struct ofl_side {
	enum dp_offload_rule_state state;
	enum dp_offload_rule_kind kind;
	uint32_t actions;           /* CAP bits of the rule installed or refused */
	uint16_t port;              /* port index */
	struct rte_flow *flow;
	uint64_t hits, bytes;       /* this rule's COUNT */
	uint64_t hits_before, bytes_before; /* earlier rules' */
	bool age_valid;
	uint32_t age_sec;
	uint32_t installs, withdrawals, refusals;
	uint64_t last_bytes;        /* software counter at the last sample */
	uint64_t rate_bps;
	char *reason;               /* refusal, malloc'ed */
	char *testpmd;              /* installed rule, malloc'ed */
};

/* By stable state id. */
struct ofl_conn {
	bool seen;
	bool deny;
	uint64_t since;             /* TSC: rewrite unchanged since */
	struct ofl_side side[SIDES];
};

struct ofl_port {
	bool probed;
	uint32_t caps;
	char why[DP_OFL_CAP_MAX][160]; /* "accepted" or the refusal */
	uint32_t installed, refused;   /* rules now installed; refusals so far */
	uint32_t refusals_logged;
};

static struct {
	bool started;
	bool pending;               /* run the next poll even within the sample period */
	uint64_t now;               /* TSC of the last poll */
	uint64_t last_sample;
	uint64_t query_cursor;
	struct ofl_conn *conns;     /* [n_conns], by state id */
	uint32_t n_conns;
	struct ofl_port ports[DP_MAX_PORTS];
	struct dp_mark_index *retired; /* replaced index, freed after the grace period */
	struct dp_offload_totals totals;
} ofl;

struct dp_mark_index *dp_mark_index;

static inline unsigned
ip_len(uint8_t ver)
{
	return ver == 6 ? 16 : 4;
}

static uint64_t
ms_tsc(uint64_t ms)
{
	return ms * rte_get_tsc_hz() / 1000;
}

static void
ip_text(const uint8_t *b, unsigned alen, char *buf, size_t len)
{
	struct cfg_ip ip = { .ver = alen == 16 ? 6 : 4 };

	memcpy(ip.b, b, alen);
	cfg_ip_format(&ip, buf, len);
}

/* snprintf that may cut: every text here is a bounded report line. */
static void textf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
textf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* Telemetry strings may not hold quotes or backslashes; messages are copied through this. */
static void
text_copy(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (src[i] == '"' || src[i] == '\\' || (unsigned char)src[i] < 0x20) ? '\'' : src[i];
	dst[i] = 0;
}

static void
caps_text(uint32_t caps, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < DP_OFL_CAP_MAX && n < len; i++)
		if (caps & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", cap_names[i]);
}

/* The rte_flow refusal as one line: the error's message, errno text and type. */
static void
flow_error_text(int rc, const struct rte_flow_error *err, char *buf, size_t len)
{
	const char *e = rte_strerror(rc < 0 ? -rc : rc);
	char msg[128];

	text_copy(msg, sizeof(msg), err->message ? err->message : "no message");
	if (strcmp(msg, e))
		textf(buf, len, "%s (%s, error type %d)", msg, e, (int)err->type);
	else
		textf(buf, len, "%s (error type %d)", msg, (int)err->type);
}

/*
 * ------------------------------------------------------------------------
 * Rules: a description, the rte_flow arrays built from it, and the testpmd
 * command that creates the same rule.
 */
struct rule_spec {
	uint16_t port_idx;
	uint8_t alen;               /* 4 or 16 */
	uint8_t src[16], dst[16];
	uint16_t udp_port;
	uint32_t dqpn;
	uint32_t actions;           /* CAP bits */
	uint32_t mark;
	/* forward only */
	bool transfer;
	uint8_t src_mac[6];         /* matched */
	uint8_t opclass;            /* opcode >> 5 matched: the QP's transport */
	uint8_t new_eth[12];        /* destination and source MAC written */
	uint16_t out_port_idx;
};

struct rule {
	struct rte_flow_attr attr;
	struct rte_flow_item items[8];
	struct rte_flow_action actions[10];
	struct rte_flow_item_ethdev rep;
	struct rte_flow_item_eth eth, eth_mask;
	struct rte_flow_item_ipv4 ip4, ip4_mask;
	struct rte_flow_item_ipv6 ip6, ip6_mask;
	struct rte_flow_item_udp udp, udp_mask;
#ifdef DP_HAVE_IB_BTH
	struct rte_flow_item_ib_bth bth, bth_mask;
#else
	struct rte_flow_item_raw raw, raw_mask;
	uint8_t raw_pat[8], raw_pat_mask[8];
#endif
	struct rte_flow_action_mark mark;
	struct rte_flow_action_queue queue;
	struct rte_flow_action_count count;
	struct rte_flow_action_age age;
	struct rte_flow_action_modify_field mf_dst, mf_src;
	struct rte_flow_action_ethdev out;
};

static void
rule_build(struct rule *r, const struct rule_spec *s)
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
		/* Each port has one rx queue, polled by the lcore that owns the port. */
		r->queue.index = 0;
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
static void
rule_testpmd(const struct rule_spec *s, char *buf, size_t len)
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
		OUT("queue index 0 / ");
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
		rule_build(&r, &s);
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

/*
 * ------------------------------------------------------------------------
 * Connections: which rule fits, installing and withdrawing it.
 */
static int
conns_reserve(uint32_t n)
{
	struct ofl_conn *c;
	uint32_t cap;

	if (n <= ofl.n_conns)
		return 0;
	cap = RTE_MAX(n, ofl.n_conns * 2);
	c = realloc(ofl.conns, sizeof(*c) * cap);
	if (!c)
		return -1;
	memset(c + ofl.n_conns, 0, sizeof(*c) * (cap - ofl.n_conns));
	ofl.conns = c;
	ofl.n_conns = cap;
	return 0;
}

/* The uplink that receives the fabric's frames for L's host. */
static int
fabric_port(const struct ovl *o, const struct ovl_conn *c)
{
	const struct ovl_endpoint *le = &o->endpoints[o->qps[c->l].endpoint];
	int h = ovl_host_index(o, le->host.b, ip_len(le->host.ver));

	return h < 0 ? -1 : o->host_port[h];
}

/*
 * May the tenant side of @c be forwarded by hardware without software?
 * Only a hairpin (nothing ICRC-covered changes: only the MACs), and only
 * where software would do nothing else to its frames: no rate cap to shape
 * to, no ACL, no memory check, and no translation of R's memory windows.
 */
static bool
forward_eligible(const struct ovl *o, const struct ovl_conn *c)
{
	const struct ovl_tenant *t = &o->tenants[c->tenant];
	uint32_t re = o->qps[c->r].endpoint;

	/* An ACL is checked per message in software: such a tenant keeps its frames there. */
	if (!c->hairpin || c->egress.changes_icrc || c->rate_bps || t->rate.set || t->mr_enforce || t->acl)
		return false;
	for (uint32_t i = 0; i < o->n_mrs; i++) {
		const struct ovl_mr *m = &o->mrs[i];

		if (m->tenant == c->tenant && m->endpoint == re &&
		    (m->target_rkey != m->rkey || m->target_addr != m->addr))
			return false;
	}
	return true;
}

/* The match half of a side's rule. */
static int
side_spec(const struct ovl *o, const struct ovl_conn *c, int side, struct rule_spec *s)
{
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	memset(s, 0, sizeof(*s));
	s->alen = (uint8_t)ip_len(le->vip.ver);
	s->udp_port = o->udp_port;
	s->mark = c->state + 1;
	if (side == SIDE_TENANT) {
		s->port_idx = c->l_port;
		memcpy(s->src, le->vip.b, s->alen);
		memcpy(s->dst, re->vip.b, s->alen);
		s->dqpn = r->vqpn;
		memcpy(s->src_mac, c->l_mac, 6);
		s->opclass = l->type == CFG_QP_UC ? 1 : 0;
		memcpy(s->new_eth, c->egress.eth, 12);
		s->out_port_idx = c->egress.port;
	} else {
		int fp = fabric_port(o, c);

		if (fp < 0)
			return -1;
		s->port_idx = (uint16_t)fp;
		s->alen = (uint8_t)ip_len(le->host.ver);
		memcpy(s->src, re->host.b, s->alen);
		memcpy(s->dst, le->host.b, s->alen);
		s->dqpn = l->pqpn;
	}
	return 0;
}

static void
conn_text(const struct ovl *o, const struct ovl_conn *c, char *buf, size_t len)
{
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];
	char a[CFG_IP_STRLEN], b[CFG_IP_STRLEN];

	ip_text(le->vip.b, ip_len(le->vip.ver), a, sizeof(a));
	ip_text(re->vip.b, ip_len(re->vip.ver), b, sizeof(b));
	textf(buf, len, "tenant %s %s:%u <-> %s:%u (state %u)", o->tenants[c->tenant].name, a, l->vqpn, b,
		 r->vqpn, c->state);
}

static void
side_clear_texts(struct ofl_side *sd)
{
	free(sd->reason);
	free(sd->testpmd);
	sd->reason = sd->testpmd = NULL;
}

/* Read an installed rule's COUNT. */
static void
side_query_count(struct ofl_side *sd)
{
	struct rte_flow_query_count q = { .reset = 0 };
	const struct rte_flow_action a = { .type = RTE_FLOW_ACTION_TYPE_COUNT };
	struct rte_flow_error err;

	if (!(sd->actions & CAP(COUNT)) || !sd->flow)
		return;
	memset(&err, 0, sizeof(err));
	if (rte_flow_query(dp.ports[sd->port].port_id, sd->flow, &a, &q, &err) == 0) {
		if (q.hits_set)
			sd->hits = q.hits;
		if (q.bytes_set)
			sd->bytes = q.bytes;
	}
}

/* Remove the side's rule, keeping its counts; the side is in software again. */
static void
side_withdraw(struct ofl_side *sd, const char *why)
{
	struct rte_flow_error err;

	if (sd->state == DP_OFL_INSTALLED && sd->flow) {
		/* The last counts first: they are the connection's. */
		side_query_count(sd);
		memset(&err, 0, sizeof(err));
		if (rte_flow_destroy(dp.ports[sd->port].port_id, sd->flow, &err) != 0) {
			char t[160];

			flow_error_text(-EIO, &err, t, sizeof(t));
			fprintf(stderr, "offload: port %s: destroying a rule failed (%s); it goes at shutdown\n",
				dp.ports[sd->port].name, t);
		}
		sd->hits_before += sd->hits;
		sd->bytes_before += sd->bytes;
		sd->hits = sd->bytes = 0;
		sd->withdrawals++;
		ofl.totals.withdrawn++;
		if (ofl.ports[sd->port].installed)
			ofl.ports[sd->port].installed--;
		if (why)
			fprintf(stderr, "offload: port %s: withdrew %s rule: %s\n", dp.ports[sd->port].name,
				kind_names[sd->kind], why);
	}
	sd->flow = NULL;
	sd->state = DP_OFL_NONE;
	sd->age_valid = false;
	side_clear_texts(sd);
}

static void
conn_withdraw(struct ofl_conn *oc, const char *why)
{
	for (int s = 0; s < SIDES; s++)
		side_withdraw(&oc->side[s], why);
}

/* Try one rule: validate, then create.  0 when installed; else the reason in @why. */
static int
try_rule(const struct rule_spec *s, struct ofl_side *sd, char *why, size_t why_len)
{
	uint16_t pid = dp.ports[s->port_idx].port_id;
	struct rte_flow_error err;
	struct rte_flow *f;
	struct rule r;
	char t[160];
	int rc;

	rule_build(&r, s);
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

/*
 * Install the richest rule the port accepts on one side.  Candidates go
 * from the richest to the poorest; the first one that validates and creates
 * stays.  When none does, the side is refused with the reason of the first
 * (richest) candidate and stays in software until the connection changes.
 */
static void
side_install(const struct ovl *o, const struct ovl_conn *c, struct ofl_conn *oc, int side)
{
	struct ofl_side *sd = &oc->side[side];
	struct rule_spec base, s;
	uint32_t cands[8], n = 0, caps;
	enum dp_offload_rule_kind kinds[8];
	char why[256], first[256] = "", line[1024], ctext[160];

	if (side_spec(o, c, side, &base) < 0)
		return;
	caps = ofl.ports[base.port_idx].caps;
	if (oc->deny) {
		kinds[n] = DP_OFL_DROP, cands[n++] = CAP(DROP) | (caps & CAP(COUNT));
		if (caps & CAP(COUNT))
			kinds[n] = DP_OFL_DROP, cands[n++] = CAP(DROP);
	} else {
		uint32_t opt = caps & (CAP(QUEUE) | CAP(COUNT) | CAP(AGE));

		if (side == SIDE_TENANT && (caps & CAP(FORWARD)) && forward_eligible(o, c)) {
			kinds[n] = DP_OFL_FORWARD, cands[n++] = CAP(FORWARD) | (caps & (CAP(COUNT) | CAP(AGE)));
			if (caps & CAP(AGE))
				kinds[n] = DP_OFL_FORWARD, cands[n++] = CAP(FORWARD) | (caps & CAP(COUNT));
		}
		/* MARK with each optional action dropped in turn: AGE, then COUNT, then QUEUE. */
		kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK) | opt;
		if (opt & CAP(AGE))
			kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK) | (opt & ~CAP(AGE));
		if (opt & CAP(COUNT))
			kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK) | (opt & CAP(QUEUE));
		if (opt & CAP(QUEUE))
			kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK);
	}
	for (uint32_t i = 0; i < n; i++) {
		s = base;
		s.actions = cands[i];
		s.transfer = kinds[i] == DP_OFL_FORWARD;
		if (try_rule(&s, sd, why, sizeof(why)) == 0) {
			side_clear_texts(sd);
			sd->state = DP_OFL_INSTALLED;
			sd->kind = kinds[i];
			sd->actions = cands[i];
			sd->port = s.port_idx;
			sd->hits = sd->bytes = 0;
			sd->installs++;
			ofl.totals.installed++;
			ofl.ports[s.port_idx].installed++;
			rule_testpmd(&s, line, sizeof(line));
			sd->testpmd = strdup(line);
			caps_text(cands[i], why, sizeof(why));
			conn_text(o, c, ctext, sizeof(ctext));
			fprintf(stderr, "offload: port %s: %s %s: installed %s rule (%s)\n  testpmd> %s\n",
				dp.ports[s.port_idx].name, ctext, side_names[side], kind_names[kinds[i]], why, line);
			return;
		}
		if (!*first) {
			char what[64];

			caps_text(cands[i], what, sizeof(what));
			textf(first, sizeof(first), "%s (%s): %.200s", kind_names[kinds[i]], what, why);
		}
	}
	if (n == 0) {
		/* Nothing to try: say which action the port lacks. */
		int need = oc->deny ? DP_OFL_CAP_DROP : DP_OFL_CAP_MARK;

		textf(first, sizeof(first), "%s (%s): port %s", oc->deny ? "drop" : "partial", cap_names[need],
			 ofl.ports[base.port_idx].why[need]);
	}
	side_clear_texts(sd);
	sd->state = DP_OFL_REFUSED;
	sd->kind = n ? kinds[0] : (oc->deny ? DP_OFL_DROP : DP_OFL_PARTIAL);
	sd->actions = n ? cands[0] : 0;
	sd->port = base.port_idx;
	sd->refusals++;
	sd->reason = strdup(first);
	ofl.totals.refused++;
	ofl.ports[base.port_idx].refused++;
	if (ofl.ports[base.port_idx].refusals_logged++ < REFUSALS_LOGGED) {
		conn_text(o, c, ctext, sizeof(ctext));
		fprintf(stderr, "offload: port %s: %s %s stays in software: refused %s%s\n",
			dp.ports[base.port_idx].name, ctext, side_names[side], first,
			ofl.ports[base.port_idx].refusals_logged == REFUSALS_LOGGED ?
			" (further refusals on this port only in /roce/offload)" : "");
	}
}

/* Read COUNT and AGE of an installed rule; a rule that aged out is withdrawn. */
static void
side_query(struct ofl_side *sd)
{
	uint16_t pid = dp.ports[sd->port].port_id;
	struct rte_flow_error err;

	side_query_count(sd);
	if (sd->actions & CAP(AGE)) {
		struct rte_flow_query_age q;
		const struct rte_flow_action a = { .type = RTE_FLOW_ACTION_TYPE_AGE };

		memset(&q, 0, sizeof(q));
		memset(&err, 0, sizeof(err));
		if (rte_flow_query(pid, sd->flow, &a, &q, &err) == 0) {
			sd->age_valid = q.sec_since_last_hit_valid;
			sd->age_sec = q.sec_since_last_hit;
			if (q.aged)
				side_withdraw(sd, "aged out: no traffic for the AGE timeout");
		}
	}
}

static void
poll_locked(uint64_t now)
{
	const struct ovl *o = dp.ovl;
	const struct cfg_offload *cf;
	uint64_t dt, steady, min_bps, hz = rte_get_tsc_hz();
	uint64_t n_inst = ofl.totals.installed - ofl.totals.withdrawn, k = 0;

	if (!ofl.started || !o || !dp.cfg)
		return;
	ofl.now = now;
	if (!ofl.pending && ofl.last_sample && now - ofl.last_sample < ms_tsc(DP_OFFLOAD_SAMPLE_MS))
		return;
	dt = ofl.last_sample ? now - ofl.last_sample : 0;
	ofl.last_sample = now;
	ofl.pending = false;
	if (conns_reserve(dp.n_states) < 0)
		return;
	cf = &dp.cfg->offload;
	steady = ms_tsc(cf->steady_ms);
	min_bps = (uint64_t)cf->min_rate_mbps * 1000000;
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];
		struct ofl_conn *oc = &ofl.conns[c->state];
		const struct dp_conn_state *st = dp_conn_state(c->state);

		if (!oc->seen) {
			oc->seen = true;
			oc->since = now;
			oc->side[SIDE_TENANT].last_bytes = st->egress.bytes;
			oc->side[SIDE_FABRIC].last_bytes = st->ingress.bytes;
			if (!oc->deny)
				continue;
		}
		for (int side = 0; side < SIDES; side++) {
			struct ofl_side *sd = &oc->side[side];
			uint64_t bytes = side == SIDE_TENANT ? st->egress.bytes : st->ingress.bytes;

			if (side == SIDE_FABRIC && c->hairpin)
				continue;
			if (dt) {
				sd->rate_bps = (bytes - sd->last_bytes) * 8 * hz / dt;
				sd->last_bytes = bytes;
			}
			if (sd->state == DP_OFL_INSTALLED) {
				/* Counters: all of them, or a window that turns round, QUERY_BUDGET a sample. */
				if (n_inst <= QUERY_BUDGET || (k + n_inst - ofl.query_cursor % n_inst) % n_inst < QUERY_BUDGET)
					side_query(sd);
				k++;
				continue;
			}
			if (sd->state == DP_OFL_REFUSED || !cf->enabled)
				continue;
			if (oc->deny || (now - oc->since >= steady && sd->rate_bps > min_bps))
				side_install(o, c, oc, side);
		}
	}
	ofl.query_cursor += QUERY_BUDGET;
}

void
dp_offload_poll(uint64_t now_tsc)
{
	pthread_mutex_lock(&dp.ctl_lock);
	poll_locked(now_tsc);
	pthread_mutex_unlock(&dp.ctl_lock);
}

void
dp_offload_tick(void)
{
	dp_offload_poll(rte_rdtsc());
}

int
dp_offload_drop_conn(uint32_t state_id, bool drop)
{
	struct ofl_conn *oc;

	pthread_mutex_lock(&dp.ctl_lock);
	if (state_id >= dp.n_states || conns_reserve(dp.n_states) < 0) {
		pthread_mutex_unlock(&dp.ctl_lock);
		return -ENOENT;
	}
	oc = &ofl.conns[state_id];
	if (oc->deny != drop) {
		oc->deny = drop;
		/* Whatever it had no longer fits; the next poll installs what does. */
		conn_withdraw(oc, drop ? "connection denied" : "connection allowed again");
		ofl.pending = true;
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	return 0;
}

int
dp_offload_status_get(uint32_t state_id, int dir, struct dp_offload_status *st)
{
	const struct ofl_side *sd;

	memset(st, 0, sizeof(*st));
	if (dir < 0 || dir >= SIDES)
		return -ENOENT;
	pthread_mutex_lock(&dp.ctl_lock);
	if (state_id >= ofl.n_conns) {
		pthread_mutex_unlock(&dp.ctl_lock);
		return -ENOENT;
	}
	sd = &ofl.conns[state_id].side[dir];
	st->state = sd->state;
	st->kind = sd->kind;
	st->actions = sd->actions;
	st->port = sd->port;
	st->hits = sd->hits_before + sd->hits;
	st->bytes = sd->bytes_before + sd->bytes;
	st->age_valid = sd->age_valid;
	st->age_sec = sd->age_sec;
	st->installs = sd->installs;
	st->withdrawals = sd->withdrawals;
	st->refusals = sd->refusals;
	textf(st->reason, sizeof(st->reason), "%s", sd->reason ? sd->reason : "");
	textf(st->testpmd, sizeof(st->testpmd), "%s", sd->testpmd ? sd->testpmd : "");
	pthread_mutex_unlock(&dp.ctl_lock);
	return 0;
}

void
dp_offload_totals_get(struct dp_offload_totals *t)
{
	pthread_mutex_lock(&dp.ctl_lock);
	*t = ofl.totals;
	pthread_mutex_unlock(&dp.ctl_lock);
}

/*
 * ------------------------------------------------------------------------
 * Reloads.
 */
static void
entry_fill(const struct ovl *o, uint32_t ci, struct dp_mark_entry *e)
{
	const struct ovl_conn *c = &o->conns[ci];
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	memset(e, 0, sizeof(*e));
	e->conn = ci;
	e->tenant = c->tenant;
	e->e_qpn = r->vqpn;
	e->e_alen = (uint8_t)ip_len(re->vip.ver);
	memcpy(e->e_dst, re->vip.b, e->e_alen);
	e->i_qpn = l->pqpn;
	if (!c->hairpin) {
		/* A hairpin has no fabric side: its fabric frames are forged. */
		e->i_alen = (uint8_t)ip_len(le->host.ver);
		memcpy(e->i_dst, le->host.b, e->i_alen);
	}
}

void
dp_offload_index_publish(const struct ovl *o)
{
	uint32_t n = dp.n_states;
	struct dp_mark_index *x = rte_zmalloc("mark_index", sizeof(*x) + sizeof(x->e[0]) * (n ? n : 1),
					     RTE_CACHE_LINE_SIZE);

	/* An index not yet freed by a previous reload goes now: nobody reads it. */
	rte_free(ofl.retired);
	ofl.retired = dp_mark_index;
	if (x) {
		x->ovl = o;
		x->n = n;
		for (uint32_t s = 0; s < n; s++)
			x->e[s].conn = OVL_NONE;
		for (uint32_t i = 0; i < o->n_conns; i++)
			if (o->conns[i].state < n)
				entry_fill(o, i, &x->e[o->conns[i].state]);
	} else {
		fprintf(stderr, "offload: no memory for the mark index; MARKed frames take the lookups\n");
	}
	__atomic_store_n(&dp_mark_index, x, __ATOMIC_RELEASE);
}

/* Does anything a rule of @a depends on differ in @b? */
static bool
conn_changed(const struct ovl *oa, const struct ovl_conn *a, const struct ovl *ob, const struct ovl_conn *b)
{
	struct dp_mark_entry ea, eb;

	entry_fill(oa, (uint32_t)(a - oa->conns), &ea);
	entry_fill(ob, (uint32_t)(b - ob->conns), &eb);
	ea.conn = eb.conn = 0;
	return memcmp(&a->egress, &b->egress, sizeof(a->egress)) ||
	       memcmp(&a->ingress, &b->ingress, sizeof(a->ingress)) || memcmp(a->l_vip, b->l_vip, 16) ||
	       memcmp(a->l_mac, b->l_mac, 6) || memcmp(a->r_host, b->r_host, 16) || a->l_port != b->l_port ||
	       a->l_type != b->l_type || a->hairpin != b->hairpin || a->rate_bps != b->rate_bps ||
	       memcmp(&ea, &eb, sizeof(ea)) || fabric_port(oa, a) != fabric_port(ob, b) ||
	       oa->udp_port != ob->udp_port;
}

void
dp_offload_reload(const struct ovl *old, const struct ovl *o)
{
	uint32_t n = dp.n_states, *map;
	bool enabled = dp.cfg && dp.cfg->offload.enabled;

	rte_free(ofl.retired);
	ofl.retired = NULL;
	if (!old)
		return;
	/* Without room for new ids, the ids the manager already tracks are still handled. */
	conns_reserve(n);
	map = malloc(sizeof(*map) * (n ? n : 1));
	if (map) {
		memset(map, 0xff, sizeof(*map) * (n ? n : 1));
		for (uint32_t i = 0; i < o->n_conns; i++)
			if (o->conns[i].state < n)
				map[o->conns[i].state] = i;
	}
	for (uint32_t i = 0; i < old->n_conns; i++) {
		const struct ovl_conn *a = &old->conns[i];
		struct ofl_conn *oc;
		uint32_t ni = map && a->state < n ? map[a->state] : OVL_NONE;

		if (a->state >= ofl.n_conns)
			continue; /* never seen by a poll: it has no rule */
		oc = &ofl.conns[a->state];

		if (ni == OVL_NONE) {
			/* Removed (or no memory to tell): its state id may be handed out again. */
			conn_withdraw(oc, map ? "connection removed by a reload" : "reload (no memory to compare)");
			for (int s = 0; s < SIDES; s++)
				side_clear_texts(&oc->side[s]);
			memset(oc, 0, sizeof(*oc));
			continue;
		}
		const struct ovl_conn *b = &o->conns[ni];

		if (conn_changed(old, a, o, b)) {
			conn_withdraw(oc, "connection changed by a reload");
			/* Refusals are tried again: the rule is a new one. */
			for (int s = 0; s < SIDES; s++)
				if (oc->side[s].state == DP_OFL_REFUSED)
					side_withdraw(&oc->side[s], NULL);
			oc->since = ofl.now;
			oc->seen = true;
			continue;
		}
		/* Unchanged, but a forward rule also depends on the tenant's MRs and rate. */
		if (oc->side[SIDE_TENANT].state == DP_OFL_INSTALLED && oc->side[SIDE_TENANT].kind == DP_OFL_FORWARD &&
		    !forward_eligible(o, b)) {
			side_withdraw(&oc->side[SIDE_TENANT], "no longer forwardable (tenant memory or rate changed)");
			oc->since = ofl.now;
		}
		if (!enabled)
			conn_withdraw(oc, "offload disabled by a reload");
	}
	free(map);
}

void
dp_offload_fini(void)
{
	pthread_mutex_lock(&dp.ctl_lock);
	for (uint16_t pi = 0; pi < dp.n_ports && ofl.started; pi++) {
		struct rte_flow_error err;

		memset(&err, 0, sizeof(err));
		/* Ports that never took a rule say ENOSYS here: that is fine. */
		rte_flow_flush(dp.ports[pi].port_id, &err);
		ofl.totals.flushes++;
	}
	for (uint32_t i = 0; i < ofl.n_conns; i++)
		for (int s = 0; s < SIDES; s++) {
			ofl.conns[i].side[s].flow = NULL;
			side_clear_texts(&ofl.conns[i].side[s]);
		}
	if (ofl.started)
		fprintf(stderr, "offload: %" PRIu64 " rules installed, %" PRIu64 " withdrawn, %" PRIu64
			" refused over the run; all flushed\n", ofl.totals.installed, ofl.totals.withdrawn,
			ofl.totals.refused);
	free(ofl.conns);
	ofl.conns = NULL;
	ofl.n_conns = 0;
	rte_free(ofl.retired);
	ofl.retired = NULL;
	rte_free(dp_mark_index);
	__atomic_store_n(&dp_mark_index, NULL, __ATOMIC_RELEASE);
	memset(ofl.ports, 0, sizeof(ofl.ports));
	ofl.started = false;
	ofl.last_sample = 0;
	pthread_mutex_unlock(&dp.ctl_lock);
}

/*
 * ------------------------------------------------------------------------
 * /roce/offload[,START]: the probe of every port, then TEL_PAGE connections
 * from START with the rule of each side; "total" and "next" page on.
 */
static const char *
state_name(const struct ofl_side *sd)
{
	return sd->state == DP_OFL_INSTALLED ? "installed" : sd->state == DP_OFL_REFUSED ? "refused" : "none";
}

/* A testpmd command as an array of strings, split after " / " (telemetry strings hold 127 bytes). */
static struct rte_tel_data *
tel_command(const char *line)
{
	struct rte_tel_data *a = rte_tel_data_alloc();
	char part[RTE_TEL_MAX_STRING_LEN];

	if (!a)
		return NULL;
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	while (*line) {
		size_t n = strlen(line), cut = n;

		if (n >= sizeof(part)) {
			cut = 0;
			for (size_t k = 0; k + 3 <= sizeof(part) - 1; k++)
				if (!memcmp(line + k, " / ", 3))
					cut = k + 3;
			if (cut == 0)
				cut = sizeof(part) - 1;
		}
		memcpy(part, line, cut);
		part[cut] = 0;
		rte_tel_data_add_array_string(a, part);
		line += cut;
	}
	return a;
}

static struct rte_tel_data *
tel_side(const struct ofl_side *sd)
{
	struct rte_tel_data *d = rte_tel_data_alloc();
	char buf[RTE_TEL_MAX_STRING_LEN];

	if (!d)
		return NULL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "rule", state_name(sd));
	if (sd->state != DP_OFL_NONE) {
		caps_text(sd->actions, buf, sizeof(buf));
		rte_tel_data_add_dict_string(d, "kind", kind_names[sd->kind]);
		rte_tel_data_add_dict_string(d, "actions", buf);
		rte_tel_data_add_dict_string(d, "port", dp.ports[sd->port].name);
	}
	if (sd->state == DP_OFL_REFUSED && sd->reason) {
		text_copy(buf, sizeof(buf), sd->reason);
		rte_tel_data_add_dict_string(d, "reason", buf);
	}
	rte_tel_data_add_dict_u64(d, "hw_packets", sd->hits_before + sd->hits);
	rte_tel_data_add_dict_u64(d, "hw_bytes", sd->bytes_before + sd->bytes);
	if (sd->age_valid)
		rte_tel_data_add_dict_u64(d, "seconds_since_hit", sd->age_sec);
	rte_tel_data_add_dict_u64(d, "sw_rate_bps", sd->rate_bps);
	rte_tel_data_add_dict_u64(d, "installs", sd->installs);
	rte_tel_data_add_dict_u64(d, "withdrawals", sd->withdrawals);
	rte_tel_data_add_dict_u64(d, "refusals", sd->refusals);
	if (sd->state == DP_OFL_INSTALLED && sd->testpmd) {
		struct rte_tel_data *t = tel_command(sd->testpmd);

		if (t && rte_tel_data_add_dict_container(d, "testpmd", t, 0))
			rte_tel_data_free(t);
	}
	return d;
}

/* Telemetry keys hold letters, digits and '_' only. */
static void
tel_key(const char *name, char *key, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		key[i] = ((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
			  (name[i] >= '0' && name[i] <= '9')) ? name[i] : '_';
	key[i] = 0;
}

static int
offload_locked(const char *params, struct rte_tel_data *d)
{
	const struct ovl *o = dp.ovl;
	struct rte_tel_data *ports, *conns;
	uint32_t start = params && *params ? (uint32_t)strtoul(params, NULL, 10) : 0, shown = 0;
	char key[RTE_TEL_MAX_STRING_LEN];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "enabled", dp.cfg && dp.cfg->offload.enabled);
	rte_tel_data_add_dict_u64(d, "steady_ms", dp.cfg ? dp.cfg->offload.steady_ms : 0);
	rte_tel_data_add_dict_u64(d, "min_rate_mbps", dp.cfg ? dp.cfg->offload.min_rate_mbps : 0);
#ifdef DP_HAVE_IB_BTH
	rte_tel_data_add_dict_string(d, "bth_match", "ib_bth item");
#else
	rte_tel_data_add_dict_string(d, "bth_match", "raw item at the UDP payload");
#endif
	rte_tel_data_add_dict_u64(d, "rules_installed", ofl.totals.installed - ofl.totals.withdrawn);
	rte_tel_data_add_dict_u64(d, "installs", ofl.totals.installed);
	rte_tel_data_add_dict_u64(d, "withdrawals", ofl.totals.withdrawn);
	rte_tel_data_add_dict_u64(d, "refusals", ofl.totals.refused);
	rte_tel_data_add_dict_u64(d, "create_failures", ofl.totals.create_failed);

	ports = rte_tel_data_alloc();
	if (!ports)
		return -ENOMEM;
	rte_tel_data_start_dict(ports);
	for (uint16_t pi = 0; pi < dp.n_ports; pi++) {
		const struct ofl_port *p = &ofl.ports[pi];
		struct rte_tel_data *pd = rte_tel_data_alloc();

		if (!pd)
			break;
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_string(pd, "name", dp.ports[pi].name);
		rte_tel_data_add_dict_string(pd, "device", dp.ports[pi].device);
		rte_tel_data_add_dict_u64(pd, "ethdev", dp.ports[pi].port_id);
		rte_tel_data_add_dict_u64(pd, "probed", p->probed);
		for (int c = 0; c < DP_OFL_CAP_MAX && p->probed; c++)
			rte_tel_data_add_dict_string(pd, cap_names[c], p->why[c]);
		rte_tel_data_add_dict_u64(pd, "rules_installed", p->installed);
		rte_tel_data_add_dict_u64(pd, "refusals", p->refused);
		tel_key(dp.ports[pi].name, key, sizeof(key));
		if (rte_tel_data_add_dict_container(ports, key, pd, 0))
			rte_tel_data_free(pd);
	}
	if (rte_tel_data_add_dict_container(d, "ports", ports, 0))
		rte_tel_data_free(ports);

	conns = rte_tel_data_alloc();
	if (!conns)
		return -ENOMEM;
	rte_tel_data_start_dict(conns);
	for (uint32_t i = start; o && i < o->n_conns && shown < TEL_PAGE; i++, shown++) {
		const struct ovl_conn *c = &o->conns[i];
		const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
		const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];
		struct rte_tel_data *cd = rte_tel_data_alloc();
		char ip[CFG_IP_STRLEN];

		if (!cd)
			break;
		rte_tel_data_start_dict(cd);
		rte_tel_data_add_dict_string(cd, "tenant", o->tenants[c->tenant].name);
		ip_text(le->vip.b, ip_len(le->vip.ver), ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "local_vip", ip);
		rte_tel_data_add_dict_u64(cd, "local_vqpn", l->vqpn);
		ip_text(re->vip.b, ip_len(re->vip.ver), ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "remote_vip", ip);
		rte_tel_data_add_dict_u64(cd, "remote_vqpn", r->vqpn);
		rte_tel_data_add_dict_u64(cd, "mark", c->state + 1);
		if (c->state < ofl.n_conns) {
			const struct ofl_conn *oc = &ofl.conns[c->state];

			rte_tel_data_add_dict_u64(cd, "denied", oc->deny);
			for (int s = 0; s < SIDES; s++) {
				struct rte_tel_data *sdd;

				if (s == SIDE_FABRIC && c->hairpin)
					continue;
				sdd = tel_side(&oc->side[s]);
				if (sdd && rte_tel_data_add_dict_container(cd, side_names[s], sdd, 0))
					rte_tel_data_free(sdd);
			}
		}
		textf(key, sizeof(key), "%u", i);
		if (rte_tel_data_add_dict_container(conns, key, cd, 0))
			rte_tel_data_free(cd);
	}
	if (rte_tel_data_add_dict_container(d, "connections", conns, 0))
		rte_tel_data_free(conns);
	rte_tel_data_add_dict_u64(d, "total", o ? o->n_conns : 0);
	rte_tel_data_add_dict_u64(d, "next", o && start + shown < o->n_conns ? start + shown : 0);
	return 0;
}

static int
tel_offload(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&dp.ctl_lock);
	rc = offload_locked(params, d);
	pthread_mutex_unlock(&dp.ctl_lock);
	return rc;
}

int
dp_offload_telemetry_init(void)
{
	return rte_telemetry_register_cmd("/roce/offload", tel_offload,
					  "rte_flow offload: each port's probe, then each connection's rules, "
					  "8 a page. Parameter: optional start.") ? -1 : 0;
}
