/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration file (DESIGN.md, "Configuration schema, version 1"),
 * loaded from JSON into plain, validated structures.
 *
 * cfg_load_file() and cfg_load_string() either return a configuration in
 * which every cross reference has been resolved to an array index and every
 * rule of the schema holds, or return NULL and describe every problem they
 * found as one line each in a struct cfg_errors. Nothing here depends on
 * DPDK; the library needs only libc, jansson (cfg_json.h) and dcqcn/, which
 * validates the DCQCN parameters.
 */
#ifndef CFG_H
#define CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dcqcn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The only schema version this code reads. */
#define CFG_VERSION 1
/* The RoCEv2 UDP destination port, used when "udp_port" is absent. */
#define CFG_DEFAULT_UDP_PORT 4791
/* A tenant's "max_qps" when the file does not give one. */
#define CFG_DEFAULT_MAX_QPS 65536
#define CFG_MAX_RX_QUEUES 1024 /* ports[].rx_queues at most (DPDK's RTE_MAX_QUEUES_PER_PORT) */
/* Largest QPN: QPNs are 24-bit. QPN 0 and 1 are reserved (SMI and GSI). */
#define CFG_QPN_MAX 0xffffffu
#define CFG_QPN_FIRST 2u
/* The GSI QP (QP1), which an endpoint's UD record may name: its RDMA-CM traffic (docs/learning.md). */
#define ROCE_QPN_GSI_CFG 1u
/* Largest VNI: VNIs are 24-bit. */
#define CFG_VNI_MAX 0xffffffu
/* Room for any address that cfg_ip_format() writes, with its NUL. */
#define CFG_IP_STRLEN 46
/* Offload thresholds when the "offload" section does not give them. */
#define CFG_DEFAULT_STEADY_MS 1000
#define CFG_DEFAULT_MIN_RATE_MBPS 100
/* DCQCN's line rate when "dcqcn" does not give "line_rate_gbps": 100 Gb/s. */
#define CFG_DEFAULT_LINE_RATE_BPS UINT64_C(100000000000)
/* The "shaping" section's defaults. */
#define CFG_DEFAULT_WATCHDOG_MS 100
#define CFG_DEFAULT_QUEUE_BYTES (4u << 20)
/* At most this many messages are kept; one more line counts the rest. */
#define CFG_ERRORS_MAX 1000

enum cfg_ip_ver { CFG_IPV4 = 4, CFG_IPV6 = 6 };

/* An IPv4 or IPv6 address. IPv4 is in b[0..3], network order, rest zero. */
struct cfg_ip {
	uint8_t ver;    /* enum cfg_ip_ver */
	uint8_t b[16];
};

/*
 * A rate cap. "gbps" (a number, may be fractional) becomes bits per second.
 * burst_bytes is 0 when the file gives none: the user of the struct chooses
 * the default then.
 */
struct cfg_rate {
	bool set;
	uint64_t bps;
	uint64_t burst_bytes;
};

enum cfg_port_role { CFG_ROLE_UPLINK, CFG_ROLE_TENANT };

/*
 * A VLAN policy ("vlan" of a port or a tenant): what 802.1Q tags a frame
 * carries on that side.  "keep" (the default) passes the tags a frame
 * arrived with unchanged; "untagged" sends no tag and accepts no tag but a
 * priority tag (VID 0); "tagged" sends and accepts exactly one 0x8100 tag
 * with "vid"; "vni" is "tagged" with the tenant's vni as the VID.  The PCP
 * of a sent tag is the frame's DSCP >> 3 ("pcp": "dscp", the default) or the
 * PCP of the outer tag it arrived with, 0 if none ("keep").
 */
enum cfg_vlan_mode { CFG_VLAN_KEEP, CFG_VLAN_UNTAGGED, CFG_VLAN_TAGGED, CFG_VLAN_VNI };
enum cfg_vlan_pcp { CFG_PCP_DSCP, CFG_PCP_KEEP };
/* Largest VID: 4095 is reserved, 0 means no VLAN (a priority tag). */
#define CFG_VID_MAX 4094u

struct cfg_vlan {
	bool set;               /* "vlan" given */
	enum cfg_vlan_mode mode;
	bool has_vid;
	uint32_t vid;           /* CFG_VLAN_TAGGED: 1 to CFG_VID_MAX */
	bool has_pcp;
	enum cfg_vlan_pcp pcp;
};

struct cfg_port {
	char *name;
	char *device;           /* DPDK device name, probed by EAL */
	enum cfg_port_role role;
	bool has_ip;            /* always true on uplinks, false on tenant ports */
	struct cfg_ip ip;
	uint8_t mac[6];
	bool has_gateway_mac;   /* uplinks only */
	uint8_t gateway_mac[6];
	int tenant;             /* index into tenants, -1 for an uplink */
	/* A tenant port's tags toward its tenant; an uplink's for tenants without their own. */
	struct cfg_vlan vlan;
	uint16_t rx_queues;     /* rx queues to poll; 0: one per forwarding lcore, within the device's */
};

enum cfg_mr_check { CFG_MR_CHECK_OFF, CFG_MR_CHECK_ENFORCE };

struct cfg_tenant {
	char *name;
	uint32_t vni;           /* 24-bit, unique among tenants */
	uint32_t max_qps;       /* CFG_DEFAULT_MAX_QPS unless given */
	struct cfg_rate rate;
	enum cfg_mr_check mr_check;
	uint32_t n_qps;         /* QPs of this tenant in the file */
	struct dcqcn_params dcqcn; /* effective parameters of this tenant (always filled) */
	bool dcqcn_override;    /* the tenant had its own "dcqcn" object */
	bool privileged_qkey;   /* may send UD Q_Keys with bit 31 set (controlled Q_Keys) */
	struct cfg_vlan vlan;   /* its frames' tags on the fabric; unset: the uplink's policy */
	bool qp_learning;       /* "qp_learning": its QPs are learned from the wire (half records) */
	uint32_t qp_idle_s;     /* "qp_idle_s": a learned QP idle this long goes (CFG_DEFAULT_QP_IDLE_S) */
	uint32_t gsi_pps;       /* "gsi_pps": its RDMA-CM MADs to QP1 a second, also the burst (0: none) */
};

/* "qp_idle_s" when a tenant does not give it. */
#define CFG_DEFAULT_QP_IDLE_S 300
/* "gsi_pps" when a tenant does not give it, and its largest value. */
#define CFG_DEFAULT_GSI_PPS 200
#define CFG_MAX_GSI_PPS 100000

/*
 * An XRC SRQ of an endpoint: the number its RNIC really uses (vsrqn, what an
 * initiator of the tenant writes in the XRCETH) and the number the fabric
 * carries (psrqn, unique per host IP). Both 24-bit.
 */
struct cfg_xrc_srq {
	uint32_t vsrqn;
	uint32_t psrqn;
};

/* Largest SRQ number: 24-bit. */
#define CFG_SRQN_MAX 0xffffffu
/* At most this many XRC SRQs per endpoint (records stay plain values). */
#define CFG_XRC_SRQS_MAX 8

/* A tenant's virtual IP and the host that runs it (the vGID to GID map). */
struct cfg_endpoint {
	int tenant;             /* index into tenants */
	struct cfg_ip vip;
	struct cfg_ip host;     /* may be of another IP version than vip */
	int port;               /* index into ports, -1 if remote (no port given) */
	bool has_mac;           /* always true when port >= 0 */
	uint8_t mac[6];
	/* "xrc_srqs": the endpoint's XRC SRQs, renamed like QPNs (docs/xrc.md) */
	uint32_t n_xrc_srqs;
	struct cfg_xrc_srq xrc_srqs[CFG_XRC_SRQS_MAX];
};

/*
 * QP types. An XRC connection pairs an initiator (xrc_ini, which sends the
 * requests) with a target (xrc_tgt, which answers them) through "peer".
 */
enum cfg_qp_type { CFG_QP_RC, CFG_QP_UC, CFG_QP_UD, CFG_QP_XRC_INI, CFG_QP_XRC_TGT };

/* True for the two XRC types. */
static inline bool
cfg_qp_is_xrc(int type)
{
	return type == CFG_QP_XRC_INI || type == CFG_QP_XRC_TGT;
}

/* The type a peer of a QP of @type must have: its own, or the other XRC end. */
static inline int
cfg_qp_peer_type(int type)
{
	return type == CFG_QP_XRC_INI ? CFG_QP_XRC_TGT : type == CFG_QP_XRC_TGT ? CFG_QP_XRC_INI : type;
}

struct cfg_qp {
	int tenant;             /* index into tenants */
	struct cfg_ip vip;
	uint32_t vqpn;          /* what the endpoint really uses */
	uint32_t pqpn;          /* unique per host IP; what the fabric carries */
	enum cfg_qp_type type;
	bool has_peer;          /* true for RC and UC, false for UD */
	struct cfg_ip peer_vip;
	bool has_peer_vqpn;     /* false in a half: "peer": {"vip"} alone (cfg_qp_half()) */
	uint32_t peer_vqpn;
	int peer;               /* index into qps of the peer, -1 if none */
	int endpoint;           /* index of the endpoint (tenant, vip) */
	struct cfg_rate rate;
};

/*
 * A half: a QP of a learning tenant known by its destination alone, (tenant,
 * vip, vqpn) with the pqpn its host allocated, and the vip that sends to it
 * ("peer": {"vip"} without "vqpn"; DESIGN.md "Learned connections").  The
 * source's host forwards that vip's frames to it; the QP's own host delivers
 * the fabric's frames to its pqpn as coming from that vip.  It has no peer
 * record (peer is -1).
 */
static inline bool
cfg_qp_half(const struct cfg_qp *q)
{
	return q->has_peer && !q->has_peer_vqpn;
}

/*
 * A QP of a learning tenant connects to its peer only when both records name
 * each other (cfg_qp_names_back()): the learner writes each end when it can,
 * and an end whose "peer" names a vqpn whose record is absent, or does not
 * name it back, is a half until then (docs/learning.md, "Pairs").  Any other
 * tenant's such record is an error.  In a checked configuration a QP is
 * alone, and runs as a half, when it has a peer vip and no peer record.
 */
static inline bool
cfg_qp_alone(const struct cfg_qp *q)
{
	return q->has_peer && q->peer < 0;
}

/* Does @r, the record that @q names as its peer, name @q back, with the type that goes with @q's? */
bool cfg_qp_names_back(const struct cfg_qp *q, const struct cfg_qp *r);

/* What the peer of @q (a QP with "peer") is to the checks of every path. */
enum cfg_peer_verdict {
	CFG_PEER_PAIR,            /* its record names @q back with the right type: they connect */
	CFG_PEER_ALONE,           /* a half, or a learning tenant's end not named back: checked as a half */
	CFG_PEER_SELF,            /* @q names itself */
	CFG_PEER_MISSING,         /* no such record */
	CFG_PEER_TYPE,            /* a record whose type does not go with @q's */
	CFG_PEER_NOT_BACK,        /* a record that does not name @q */
};

/*
 * The verdict on @q's peer, @r being the record that its peer vip and vqpn
 * name (NULL for none): the rule in one place, which the load, the whole
 * delta and the batch in place each report in their own words.
 */
struct cfg;
enum cfg_peer_verdict cfg_qp_peer(const struct cfg *c, const struct cfg_qp *q, const struct cfg_qp *r);

enum {
	CFG_ACC_REMOTE_READ = 1,
	CFG_ACC_REMOTE_WRITE = 2,
	CFG_ACC_REMOTE_ATOMIC = 4,
	CFG_ACC_FLUSH = 8,         /* IBTA 1.5 FLUSH (placement to persistence or global visibility) */
};

/*
 * A memory region: (rkey, addr, length) as advertised to peers, and what the
 * owner's endpoint really registered (target_rkey, target_addr).
 */
struct cfg_mr {
	int tenant;             /* index into tenants */
	struct cfg_ip vip;
	int endpoint;           /* index of the endpoint (tenant, vip) */
	uint32_t rkey;
	uint64_t addr;
	uint64_t length;        /* > 0; neither window wraps around 2^64 */
	uint32_t target_rkey;
	uint64_t target_addr;
	uint32_t access;        /* CFG_ACC_* bits, at least one */
};

struct cfg_neighbor {
	struct cfg_ip ip;
	uint8_t mac[6];
};

struct cfg_dcqcn {
	bool enabled;           /* default false */
	char *profile;          /* "nvidia" (default) or "paper" */
	/* "line_rate_gbps": the rate a reaction point starts at and recovers to */
	uint64_t line_rate_bps; /* default CFG_DEFAULT_LINE_RATE_BPS */
	/* "ce_to_tenant": "clear" (default) or "keep" the CE mark of a frame from the fabric */
	bool ce_keep;
	/* "cnp_to_tenant": false (default): the switch's RP consumes fabric CNPs; true: also deliver */
	bool cnp_pass;
	struct dcqcn_params params; /* the profile's defaults with "params" applied */
};

struct cfg_offload {
	bool enabled;           /* default false */
	uint32_t steady_ms;     /* rewrite unchanged this long; default CFG_DEFAULT_STEADY_MS */
	uint32_t min_rate_mbps; /* and carrying more than this; default CFG_DEFAULT_MIN_RATE_MBPS */
};

/* "ecmp": what the fabric hashes on. */
enum cfg_udp_sport { CFG_SPORT_KEEP, CFG_SPORT_QPN };

struct cfg_ecmp {
	enum cfg_udp_sport udp_sport; /* "udp_sport": "keep" (default) or "qpn" */
};

struct cfg_shaping {
	uint32_t watchdog_ms;   /* "watchdog_ms", default CFG_DEFAULT_WATCHDOG_MS, 1..60000 */
	/* "queue_bytes": a tenant's queue above this backpressures its port; at least 65536 */
	uint64_t queue_bytes;   /* default CFG_DEFAULT_QUEUE_BYTES */
};

enum cfg_acl_action { CFG_ACL_ALLOW, CFG_ACL_DENY };

/* ACL operation classes: bit i is the i-th of "send", "write", "read", "atomic". */
enum {
	CFG_OP_SEND = 1,
	CFG_OP_WRITE = 2,
	CFG_OP_READ = 4,
	CFG_OP_ATOMIC = 8,
	CFG_OP_ALL = 15,
};

/*
 * ACL QP types: bit (1 << type) for "rc", "uc", "ud" (enum cfg_qp_type) and
 * "xrc" (CFG_ACL_TYPE_XRC: both ends of an XRC connection).
 */
#define CFG_ACL_TYPE_XRC 3u
#define CFG_QP_TYPES_ALL 15u

/* The ACL type of a QP of @type. */
static inline unsigned
cfg_acl_type(int type)
{
	return cfg_qp_is_xrc(type) ? CFG_ACL_TYPE_XRC : (unsigned)type;
}

/* An IPv4 or IPv6 prefix. Bits of ip beyond len are zero. */
struct cfg_cidr {
	struct cfg_ip ip;
	uint8_t len;            /* 0 to 32, or 0 to 128 */
};

/* One rule of a tenant's ACL: it matches when every part given matches. */
struct cfg_acl_rule {
	enum cfg_acl_action action;
	bool has_src, has_dst;  /* an absent prefix matches any address */
	struct cfg_cidr src, dst;
	uint32_t types;         /* bits 1 << enum cfg_qp_type; all when absent */
	uint32_t ops;           /* CFG_OP_*; all when absent */
};

/*
 * A tenant's ACL ("acls"): the first matching rule decides, else the
 * default. Traffic between tenants never exists, so an ACL decides within
 * its tenant only. A tenant without one allows everything.
 */
struct cfg_acl {
	int tenant;             /* index into tenants; one ACL per tenant */
	enum cfg_acl_action def; /* "default", allow when absent */
	struct cfg_acl_rule *rules;
	uint32_t n_rules;
};

/* A whole configuration. Everything it points to is owned by it. */
struct cfg {
	char *path;             /* file name as given */
	int version;            /* CFG_VERSION */
	uint16_t udp_port;      /* "udp_port", default CFG_DEFAULT_UDP_PORT */
	struct cfg_port *ports;
	uint32_t n_ports;
	struct cfg_tenant *tenants;
	uint32_t n_tenants;
	struct cfg_endpoint *endpoints;
	uint32_t n_endpoints;
	struct cfg_qp *qps;
	uint32_t n_qps;
	struct cfg_mr *mrs;
	uint32_t n_mrs;
	struct cfg_neighbor *neighbors;
	uint32_t n_neighbors;
	struct cfg_dcqcn dcqcn;
	struct cfg_offload offload;
	struct cfg_shaping shaping;     /* top-level optional "shaping" */
	struct cfg_ecmp ecmp;           /* top-level optional "ecmp" */
	struct cfg_acl *acls;
	uint32_t n_acls;
	void *inc;              /* cfg_inc.c's indexes, built on first use; NULL in every new cfg */
};

/*
 * Messages from a failed load, each a complete line without its newline:
 * "FILE:LINE:COL: syntax error: TEXT" or "FILE: JSON.PATH: message".
 * Zero-initialise before first use; release with cfg_errors_clear().
 */
struct cfg_errors {
	uint32_t n;
	char **msg;
};

/*
 * Load and validate the file at @path. Returns NULL on any error, after
 * appending every error found to @errs (which may be NULL), in file order
 * where practical. The result is released with cfg_free().  Only a regular
 * file of at most cfg_file_max_set() bytes is read (a FIFO, a device or a
 * directory is refused at once, without blocking), and a file that is not a
 * JSON object is refused without quoting its text.
 */
struct cfg *cfg_load_file(const char *path, struct cfg_errors *errs);

/* The largest file cfg_load_file() reads, CFG_DEFAULT_FILE_MAX unless set. */
#define CFG_DEFAULT_FILE_MAX (1ull << 30)
void cfg_file_max_set(uint64_t bytes);

/* Where a load's time went, in milliseconds (CLOCK_MONOTONIC). */
struct cfg_load_times {
	double read_ms;   /* the file into memory */
	double parse_ms;  /* JSON text to a tree (jansson), flattened */
	double check_ms;  /* the schema: every record parsed and checked, alone and across */
};

/* As cfg_load_file(), and fills @t (which may be NULL) for the steps it ran. */
struct cfg *cfg_load_file_timed(const char *path, struct cfg_errors *errs, struct cfg_load_times *t);

/* As cfg_load_file(), from a NUL-terminated string; @name replaces FILE. */
struct cfg *cfg_load_string(const char *json, const char *name, struct cfg_errors *errs);

/* Release @c and everything it owns. NULL is allowed. */
void cfg_free(struct cfg *c);

/* Release the messages in @e and make it empty again. */
void cfg_errors_clear(struct cfg_errors *e);

/* Write each message of @e to @f, one per line. */
void cfg_errors_print(const struct cfg_errors *e, FILE *f);

/*
 * Parse IPv4 dotted quad or IPv6 text (as inet_pton()) into @ip.
 * Returns 0 on success, -1 if @s is neither.
 */
int cfg_ip_parse(const char *s, struct cfg_ip *ip);

/*
 * Write @ip as text into @buf of @len bytes (CFG_IP_STRLEN is always enough).
 * Returns the length written without the NUL, or -1 if it does not fit or
 * @ip has no valid version.
 */
int cfg_ip_format(const struct cfg_ip *ip, char *buf, size_t len);

/* True if @a and @b are the same version and the same address. */
bool cfg_ip_equal(const struct cfg_ip *a, const struct cfg_ip *b);

/* Parse "xx:xx:xx:xx:xx:xx" (hex, either case). Returns 0, or -1 if malformed. */
int cfg_mac_parse(const char *s, uint8_t mac[6]);

/* The port called @name, or NULL. */
const struct cfg_port *cfg_port_by_name(const struct cfg *c, const char *name);

/* Index of the tenant called @name, or -1 if absent. */
int cfg_tenant_index(const struct cfg *c, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* CFG_H */
