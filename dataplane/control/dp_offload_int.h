/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The offload manager's internals, shared by its four parts: the rules and
 * the port probe (dp_offload_rule.c), the connections' life cycle
 * (dp_offload.c), reloads and deltas (dp_offload_reload.c) and the
 * telemetry (dp_offload_tel.c).
 */
#ifndef DP_OFFLOAD_INT_H
#define DP_OFFLOAD_INT_H

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
extern const char *const side_names[SIDES];
extern const char *const cap_names[DP_OFL_CAP_MAX];
extern const char *const kind_names[3];

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

struct ofl_state {
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
};

/* The manager's state: written under dp.ctl_lock only (dp_offload.c). */
extern struct ofl_state ofl;

static inline unsigned
ip_len(uint8_t ver)
{
	return ver == 6 ? 16 : 4;
}

static inline uint64_t
ms_tsc(uint64_t ms)
{
	return ms * rte_get_tsc_hz() / 1000;
}

static inline void
ip_text(const uint8_t *b, unsigned alen, char *buf, size_t len)
{
	struct cfg_ip ip = { .ver = alen == 16 ? 6 : 4 };

	memcpy(ip.b, b, alen);
	cfg_ip_format(&ip, buf, len);
}

/* snprintf that may cut: every text here is a bounded report line. */
static inline void textf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline void
textf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* Telemetry strings may not hold quotes or backslashes; messages are copied through this. */
static inline void
text_copy(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (src[i] == '"' || src[i] == '\\' || (unsigned char)src[i] < 0x20) ? '\'' : src[i];
	dst[i] = 0;
}

static inline void
caps_text(uint32_t caps, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < DP_OFL_CAP_MAX && n < len; i++)
		if (caps & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", cap_names[i]);
}

/* The rte_flow refusal as one line: the error's message, errno text and type. */
static inline void
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
	uint16_t queue;             /* QUEUE: the rx queue its owner lcore polls (dp_port_rxq_of()) */
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

/* Fill @r's rte_flow arrays from @s (dp_offload_rule.c). */
void ofl_rule_build(struct rule *r, const struct rule_spec *s);

/* The testpmd command that creates the rule @s describes. */
void ofl_rule_testpmd(const struct rule_spec *s, char *buf, size_t len);

/*
 * Validate and create the rule @s on its port for side @sd; on refusal the
 * reason goes to @why.  0 or a negative errno.
 */
int ofl_try_rule(const struct rule_spec *s, struct ofl_side *sd, char *why, size_t why_len);

/*
 * The connections' life cycle (dp_offload.c), for reloads and deltas
 * (dp_offload_reload.c); under dp.ctl_lock.
 */
/* Room in ofl.conns for @n state ids; -1 without memory. */
int ofl_conns_reserve(uint32_t n);
/* The uplink that receives the fabric's frames for L's host. */
int ofl_fabric_port(const struct ovl *o, const struct ovl_conn *c);
/* May the tenant side of @c take a forward rule? */
bool ofl_forward_eligible(const struct ovl *o, const struct ovl_conn *c);
void ofl_side_clear_texts(struct ofl_side *sd);
/* Remove the side's rule, keeping its counts; the side is in software again. */
void ofl_side_withdraw(struct ofl_side *sd, const char *why);
/* Withdraw both sides' rules of @oc, saying @why. */
void ofl_conn_withdraw(struct ofl_conn *oc, const char *why);

#endif /* DP_OFFLOAD_INT_H */
