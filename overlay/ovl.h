/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay: a host's view of the virtual network, built from a validated
 * configuration, with the lookups both packet directions need and the
 * rewrite templates precomputed per connection.
 *
 * Records.  Every QP of the configuration is an ovl_qp.  A local RC, UC or
 * XRC QP L with its peer R is an ovl_conn: both directions of that connection
 * (L's requests and R's responses, and the reverse) resolve to it.  UD QPs
 * have no connection; their frames resolve to QP records on both ends.
 * Every endpoint's XRC SRQs are ovl_srqs.
 *
 * Lookups (values are OVL_V_CONN | index or OVL_V_QP | index):
 *   tenant side:  (tenant, dst vip, dst vqpn)  -> conn whose R it is, or UD qp
 *   fabric side:  (dst host ip, dst pqpn)      -> conn whose L it is, or UD qp
 *   memory:       (tenant, owner vip, rkey)    -> mr
 *   endpoints:    (tenant, vip)                -> endpoint
 *   XRC SRQs:     (tenant, vip, vsrqn)         -> srq (any endpoint)
 *                 (host ip, psrqn)             -> srq (local endpoints)
 *
 * Ownership: an ovl is a header (the counts, the tenants, the ports) over a
 * store (the record arrays and the tables, struct ovl_store).  ovl_build()
 * makes both; an incremental change (ovl_inc.h) makes a new header over the
 * same store and changes the store in place, under one writer, in a way that
 * lcores reading through either header never see a torn record: a record is
 * never changed once a table reaches it (a change takes a new slot, and the
 * table's value is swapped with one store), and a slot given up is reused
 * only after the data plane's RCU grace period.  So the record arrays may
 * hold given-up slots (retired: skipped by every walk, see ovl_live()).
 * The owner of the newest header (the data plane) fills in the stable ids
 * (ovl_tenant.slot, ovl_conn.state) between build and publication;
 * ovl_build() leaves them OVL_NONE.  The per-connection dynamic state lives
 * outside it, in the data plane.
 */
#ifndef OVL_H
#define OVL_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "ovl_acl.h"
#include "ovl_vlan.h"
#include "rocev2.h"

/* An IP address, IPv4 in b[0..3]. */
struct ovl_ip {
	uint8_t ver;
	uint8_t b[16];
};

#define OVL_V_CONN 0x00000000u
#define OVL_V_QP 0x80000000u
#define OVL_V_IDX(v) ((v) & 0x7fffffffu)
#define OVL_NONE 0xffffffffu

/*
 * Open-addressing hash of 32-bit values under 24-byte keys: an IP address
 * (IPv4 zero-extended), a space (tenant index, or OVL_SPACE_FABRIC) and an
 * id (QPN or R_Key).  Keys are hashed and compared as three 64-bit words
 * loaded straight from the frame, with no copy through the stack.
 */
struct ovl_key {
	uint64_t w[3]; /* ip[0..7], ip[8..15], space | version | id << 32 */
};

/* In the space word: set for an IPv6 address. */
#define OVL_KEY_IPV6 0x80000000u

/* Half a cache line: a hit costs one miss, the key sits beside its value. */
struct ovl_slot {
	struct ovl_key key;
	uint32_t sig;  /* hash | 1; 0 means empty, OVL_SIG_TOMB a deleted key */
	uint32_t val;
};

/*
 * A deleted key leaves a tombstone: an even signature, which no probe
 * matches (live ones are odd) and which does not end a probe (0 does).
 */
#define OVL_SIG_TOMB 2u

struct ovl_table {
	struct ovl_slot *slots;
	uint32_t mask;
	uint32_t n;     /* live keys */
	uint32_t used;  /* live keys and tombstones */
};

/*
 * A rewrite: what a frame of one connection and direction becomes.  The
 * address and DestQP changes are constant per connection, so their ICRC
 * difference (crc0 of old ^ new, positioned at the end of the DestQP) and
 * their Internet checksum differences are computed here once.
 */
struct ovl_rewrite {
	uint8_t eth[12];          /* new destination and source MAC */
	uint8_t ip_ver;
	uint8_t addr_len;         /* 4 or 16 */
	uint8_t src_ip[16];       /* new source and destination */
	uint8_t dst_ip[16];
	uint32_t dqpn;            /* new DestQP */
	uint32_t icrc_crc0;       /* ICRC difference up to the end of DestQP */
	uint32_t ip_csum_diff;    /* IPv4 header checksum difference */
	uint16_t port;            /* output port index (configuration order) */
	bool changes_icrc;        /* false for hairpin: only MACs change */
	/*
	 * "ecmp": {"udp_sport": "qpn"}: the UDP source port (and for IPv6 the
	 * flow label) the frame leaves with, from both physical QPNs, as RNICs
	 * derive theirs; 0: the sender's are kept.
	 */
	uint16_t udp_sport;
	uint32_t flow_label;
	/*
	 * The IP version of the frames it takes when that is not ip_ver (an
	 * IPv4 vip on an IPv6 host, or the reverse): the IP header is replaced
	 * by one of ip_ver and the ICRC recomputed in full (docs/wire.md).  0:
	 * the same version, the differences above hold.
	 */
	uint8_t xlate_from;
	/*
	 * With xlate_from: the difference of the ICRC's CRC registers after the
	 * two masked IP headers (option-less), their per-packet fields (lengths,
	 * IPv4 identification and flags) zero: the per-packet part is added to
	 * it (roce_icrc_ip_swap() explains the sum).
	 */
	uint32_t xlate_crc;
};

struct ovl_tenant {
	const char *name;
	uint32_t vni;
	uint32_t max_qps;
	uint32_t n_qps;           /* QPs of this tenant in the configuration */
	uint32_t n_local_qps;     /* of which on this host */
	struct cfg_rate rate;
	bool mr_enforce;
	uint32_t slot;            /* the owner's stable id across configurations */
	uint32_t n_capped;        /* its connections with a rate cap (rate_bps) */
	const struct cfg_acl *acl; /* its "acls" entry, or NULL: allow everything */
	uint32_t acl_index;       /* index of that entry, or OVL_NONE */
	bool ud_acl;              /* a UD frame can be denied: check each one */
	bool privileged_qkey;     /* may send controlled Q_Keys (bit 31 set) */
	bool has_vlan;            /* its own VLAN policy on the fabric ... */
	struct ovl_vlan vlan;     /* ... this one; else the uplink's */
	bool qp_learning;         /* its connections are learned (cfg_qp_half()) */
	uint32_t qp_idle_s;
	uint32_t gsi_pps;         /* its RDMA-CM MADs to QP1 a second (dp_gsi_limit.h) */
};

struct ovl_endpoint {
	uint32_t tenant;
	struct ovl_ip vip;
	struct ovl_ip host;
	bool local;
	uint16_t port;            /* tenant port when local */
	uint8_t mac[6];
	/*
	 * How to address a frame to this endpoint: for a local one its MAC from
	 * its port's MAC, out of that port; for a remote one its host's
	 * neighbor (or the gateway) from the uplink's MAC, out of the uplink.
	 */
	uint8_t eth[12];
	uint16_t out_port;
	bool reachable;           /* false: remote, and no neighbor or gateway */
	bool retired;
};

struct ovl_qp {
	uint32_t tenant;
	uint32_t endpoint;
	uint32_t vqpn;
	uint32_t pqpn;
	uint32_t peer;            /* qp index or OVL_NONE */
	uint32_t conn;            /* the connection whose L this is, or OVL_NONE */
	uint8_t type;             /* enum cfg_qp_type */
	bool local;
	bool retired;
	/*
	 * What the record names, for changes in place: its peer's endpoint
	 * (a half's source; OVL_NONE for UD) and vqpn (0 in a half), and its
	 * cap.  A learning tenant's QP that names a peer record which does not
	 * name it back is alone, a half (cfg_qp_alone()), until it does.
	 */
	uint32_t peer_ep;
	uint32_t peer_vqpn;
	uint64_t rate_bps;
};

/* Fields each direction reads per packet come first, beside its template. */
struct ovl_conn {
	/* Checking a frame against the connection: what L sends as. */
	uint8_t l_vip[16];
	uint8_t l_mac[6];
	uint16_t l_port;          /* L's tenant port */
	uint8_t l_type;           /* enum cfg_qp_type */
	bool hairpin;             /* R is local too */
	uint8_t acl_allow[2];     /* CFG_OP_* allowed: [OVL_DIR_L2R] L's requests, [_R2L] R's */
	bool acl_block;           /* nothing allowed either way: every frame is dropped */
	uint32_t tenant;
	uint32_t state;           /* the owner's stable id of its dynamic state */
	struct ovl_rewrite egress;  /* L's frames toward R */
	uint8_t r_host[16];
	struct ovl_rewrite ingress; /* R's frames delivered to L */
	uint32_t l, r;            /* qp indices: L local, R its peer (both the half's QP in a half) */
	/*
	 * A connection of a half QP record H (cfg_qp_half()) is one direction:
	 * OVL_HALF_OUT on the source's host, the source endpoint's frames to H
	 * (found by H's tenant key; a hairpin when H is local too); OVL_HALF_IN
	 * on H's host when the source is remote, the fabric's frames to H's
	 * pqpn (found by H's fabric key) delivered as the source's.  l and r are
	 * both H; src_ep is the source endpoint.  The pair, and with it
	 * everything that needs the sender's QPN, is unknown.
	 */
	uint8_t half;             /* OVL_HALF_NONE, _OUT or _IN */
	uint32_t src_ep;          /* a half's source endpoint, else OVL_NONE */
	uint64_t rate_bps;        /* configured cap of L, 0 if none */
	uint32_t acl_rule[2][4];  /* the rule of each verdict, by direction and class bit */
	bool retired;             /* given up by an incremental change (read by the control plane only) */
};

enum { OVL_HALF_NONE = 0, OVL_HALF_OUT = 1, OVL_HALF_IN = 2 };

/* A half as the control plane's outputs name it ("half": "out" or "in"), or NULL. */
static inline const char *
ovl_half_name(uint8_t half)
{
	return half == OVL_HALF_OUT ? "out" : half == OVL_HALF_IN ? "in" : NULL;
}

struct ovl;

/* The endpoints of @cn's L and R: a half's source endpoint on its side, its QP's on the other. */
static inline void
ovl_conn_ends(const struct ovl *o, const struct ovl_conn *cn, uint32_t *le, uint32_t *re);

/* Every walk over a record array skips the slots an incremental change gave up. */
#define ovl_live(rec) (!(rec)->retired)

struct ovl_mr {
	uint32_t tenant;
	uint32_t endpoint;
	uint32_t rkey;
	uint64_t addr, length;
	uint32_t target_rkey;
	uint64_t target_addr;
	uint32_t access;          /* CFG_ACC_* */
	bool retired;
};

struct ovl_port {
	const char *name;
	bool uplink;
	uint32_t tenant;          /* tenant ports */
	uint8_t mac[6];
	struct ovl_ip ip;         /* uplinks */
	uint8_t gateway_mac[6];
	bool has_gateway;
	struct ovl_vlan vlan;     /* its VLAN policy (ovl_vlan.h), CFG_VLAN_KEEP by default */
};

/* An XRC SRQ of an endpoint: its virtual and physical numbers. */
struct ovl_srq {
	uint32_t endpoint;
	uint32_t vsrqn;
	uint32_t psrqn;
	bool retired;
};

struct ovl_store;

struct ovl {
	struct ovl_tenant *tenants;
	uint32_t n_tenants;
	struct ovl_port *ports;
	uint32_t n_ports;
	struct ovl_endpoint *endpoints;
	uint32_t n_endpoints;
	struct ovl_qp *qps;
	uint32_t n_qps;
	struct ovl_conn *conns;
	uint32_t n_conns;
	struct ovl_mr *mrs;
	uint32_t n_mrs;
	struct ovl_ip host_ips[8];  /* this host's uplink IPs */
	uint16_t host_port[8];      /* the uplink of each */
	uint32_t n_host_ips;
	uint16_t udp_port;
	struct ovl_table by_tenant;  /* (tenant, vip, vqpn) */
	struct ovl_table by_fabric;  /* (host ip, pqpn) */
	struct ovl_table by_mr;      /* (tenant, vip, rkey) */
	struct ovl_table by_ep;      /* (tenant, vip) */
	struct ovl_srq *srqs;        /* every endpoint's XRC SRQs */
	uint32_t n_srqs;
	struct ovl_table by_srq;     /* (tenant, vip, vsrqn) and (host ip, psrqn) of local ones */
	const struct cfg *cfg;      /* the configuration it was built from */
	bool vlan_any;              /* some port or tenant has a VLAN policy other than "keep" */
	/*
	 * The n_* above count slots, given-up ones (ovl_live()) included; these
	 * count the live records.
	 */
	uint32_t live_conns, live_qps, live_mrs, live_endpoints;
	struct ovl_store *store;    /* the arrays' and tables' room and free slots (ovl_inc.c) */
	uint64_t seq;               /* its place in the order of publication, set by its publisher */
};

static inline void
ovl_conn_ends(const struct ovl *o, const struct ovl_conn *cn, uint32_t *le, uint32_t *re)
{
	*le = cn->half == OVL_HALF_OUT ? cn->src_ep : o->qps[cn->l].endpoint;
	*re = cn->half == OVL_HALF_IN ? cn->src_ep : o->qps[cn->r].endpoint;
}

/*
 * Build this host's overlay from @c (ovl_build.c).  This host is the set of uplink IPs in
 * the configuration.  Returns NULL and a message in @err on failure (which a
 * validated configuration only meets on allocation failure or an
 * unsupported combination, such as a vIP and host IP of different versions).
 */
struct ovl *ovl_build(const struct cfg *c, char *err, size_t err_len);
void ovl_free(struct ovl *o);

void ovl_ip_from_cfg(struct ovl_ip *dst, const struct cfg_ip *src);

/*
 * The VLAN policy of @tenant's frames on port @port, resolved: on an uplink
 * the tenant's own if it has one, else the port's; "vni" becomes "tagged"
 * with the tenant's vni.
 */
static inline struct ovl_vlan
ovl_vlan_of(const struct ovl *o, uint32_t tenant, uint16_t port)
{
	const struct ovl_port *p = &o->ports[port];
	const struct ovl_tenant *t = &o->tenants[tenant];
	struct ovl_vlan v = p->uplink && t->has_vlan ? t->vlan : p->vlan;

	if (v.mode == CFG_VLAN_VNI) {
		v.mode = CFG_VLAN_TAGGED;
		v.vid = (uint16_t)t->vni;
	}
	return v;
}

/* Keys. */
static inline struct ovl_key
ovl_key_make(const uint8_t *ip, unsigned ip_len, uint32_t space, uint32_t id)
{
	/*
	 * The IP version is part of the key: an IPv6 address whose first four
	 * bytes are an IPv4 one, the rest zero, must not find the IPv4 entry.
	 */
	uint32_t sp = space | (ip_len == 16 ? OVL_KEY_IPV6 : 0);
	struct ovl_key k = { { 0, 0, (uint64_t)sp | (uint64_t)id << 32 } };

	if (ip_len == 16) {
		__builtin_memcpy(&k.w[0], ip, 8);
		__builtin_memcpy(&k.w[1], ip + 8, 8);
	} else {
		uint32_t v4;

		__builtin_memcpy(&v4, ip, 4);
		k.w[0] = v4;
	}
	return k;
}

/* CRC32C of the three words where SSE4.2 has it, else a multiply-xorshift. */
static inline uint32_t
ovl_key_hash(const struct ovl_key *k)
{
#if defined(__SSE4_2__)
	return (uint32_t)__builtin_ia32_crc32di(
		__builtin_ia32_crc32di(__builtin_ia32_crc32di(0, k->w[0]), k->w[1]), k->w[2]);
#else
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 3; i++) {
		h ^= k->w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
#endif
}

static inline bool
ovl_key_eq(const struct ovl_key *a, const struct ovl_key *b)
{
	return ((a->w[0] ^ b->w[0]) | (a->w[1] ^ b->w[1]) | (a->w[2] ^ b->w[2])) == 0;
}

/*
 * Value stored under @k, whose signature ovl_key_hash(k) | 1 is @sig, or
 * OVL_NONE.  Callers that hash a burst of keys first (and prefetch their
 * slots, &t->slots[sig & t->mask]) probe with this.
 */
static inline uint32_t
ovl_table_probe(const struct ovl_table *t, const struct ovl_key *k, uint32_t sig)
{
	for (uint32_t i = sig & t->mask;; i = (i + 1) & t->mask) {
		const struct ovl_slot *s = &t->slots[i];
		/* Acquire: a key and value written before their signature are seen with it. */
		uint32_t g = __atomic_load_n(&s->sig, __ATOMIC_ACQUIRE);

		if (g == 0)
			return OVL_NONE;
		if (g == sig && ovl_key_eq(&s->key, k))
			return __atomic_load_n(&s->val, __ATOMIC_RELAXED);
	}
}

/* Value stored under @k, or OVL_NONE. */
static inline uint32_t
ovl_table_lookup(const struct ovl_table *t, const struct ovl_key *k)
{
	return ovl_table_probe(t, k, ovl_key_hash(k) | 1u);
}

/* The single writer's table operations (ovl.c; lcores only probe). */
/* A table of room for @n keys at @load_pct percent. */
int ovl_tab_init(struct ovl_table *t, uint32_t n, unsigned load_pct);
struct ovl_slot *ovl_tab_find(const struct ovl_table *t, const struct ovl_key *k);
void ovl_tab_set(struct ovl_table *t, const struct ovl_key *k, uint32_t val);
bool ovl_tab_del(struct ovl_table *t, const struct ovl_key *k);

/* The QP record (tenant, vip, vqpn), any type, local or not, or OVL_NONE (control plane). */
uint32_t ovl_lookup_qp(const struct ovl *o, uint32_t tenant, const struct ovl_ip *vip, uint32_t vqpn);

/* Space values for the non-tenant key kinds. */
#define OVL_SPACE_FABRIC 0x7ffffff0u

static inline uint32_t
ovl_lookup_tenant(const struct ovl *o, uint32_t tenant, const uint8_t *vip, unsigned len, uint32_t vqpn)
{
	struct ovl_key k = ovl_key_make(vip, len, tenant, vqpn);

	return ovl_table_lookup(&o->by_tenant, &k);
}

static inline uint32_t
ovl_lookup_fabric(const struct ovl *o, const uint8_t *host, unsigned len, uint32_t pqpn)
{
	struct ovl_key k = ovl_key_make(host, len, OVL_SPACE_FABRIC, pqpn);

	return ovl_table_lookup(&o->by_fabric, &k);
}

static inline uint32_t
ovl_lookup_mr(const struct ovl *o, uint32_t tenant, const uint8_t *vip, unsigned len, uint32_t rkey)
{
	struct ovl_key k = ovl_key_make(vip, len, tenant, rkey);

	return ovl_table_lookup(&o->by_mr, &k);
}

static inline uint32_t
ovl_lookup_endpoint(const struct ovl *o, uint32_t tenant, const uint8_t *vip, unsigned len)
{
	struct ovl_key k = ovl_key_make(vip, len, tenant, 0);

	return ovl_table_lookup(&o->by_ep, &k);
}

/* In by_srq, the space of the fabric's keys (host ip, psrqn). */
#define OVL_SPACE_SRQ 0x7ffffff1u

/* The SRQ @vsrqn of the endpoint (@tenant, @vip), or OVL_NONE. */
static inline uint32_t
ovl_lookup_srq_tenant(const struct ovl *o, uint32_t tenant, const uint8_t *vip, unsigned len, uint32_t vsrqn)
{
	struct ovl_key k = ovl_key_make(vip, len, tenant, vsrqn);

	return ovl_table_lookup(&o->by_srq, &k);
}

/* The SRQ @psrqn of an endpoint of this host whose host IP is @host, or OVL_NONE. */
static inline uint32_t
ovl_lookup_srq_fabric(const struct ovl *o, const uint8_t *host, unsigned len, uint32_t psrqn)
{
	struct ovl_key k = ovl_key_make(host, len, OVL_SPACE_SRQ, psrqn);

	return ovl_table_lookup(&o->by_srq, &k);
}

/*
 * The XRC SRQs of @o's endpoints and their table, built by ovl_build() once
 * the endpoints are; 0, or -1 with a message in @err.
 */
int ovl_xrc_build(struct ovl *o, char *err, size_t err_len);

/* In by_ep, the id of a host key (a vip key has 0). */
#define OVL_EP_HOST 1u

/*
 * The first endpoint (in configuration order) of @tenant on host @host, or
 * OVL_NONE: who speaks, in the tenant's view, for a frame from that host
 * that names no QP of its sender (a CNP to a UD QP).
 */
static inline uint32_t
ovl_lookup_tenant_host(const struct ovl *o, uint32_t tenant, const uint8_t *host, unsigned len)
{
	struct ovl_key k = ovl_key_make(host, len, tenant, OVL_EP_HOST);

	return ovl_table_lookup(&o->by_ep, &k);
}

/* Index of the host IP @ip among ours, or -1. */
static inline int
ovl_host_index(const struct ovl *o, const uint8_t *ip, unsigned len)
{
	for (uint32_t i = 0; i < o->n_host_ips; i++)
		if (o->host_ips[i].ver == (len == 4 ? 4 : 6) && __builtin_memcmp(o->host_ips[i].b, ip, len) == 0)
			return (int)i;
	return -1;
}

/*
 * Memory check and translation (the owner's side).  Given an advertised
 * (rkey, va, len) and the access it needs, find the window and return 0 with
 * the target rkey and va, or a negative OVL_MR_* reason.
 */
enum ovl_mr_verdict {
	OVL_MR_OK = 0,
	OVL_MR_UNKNOWN = -1,   /* no window with that rkey */
	OVL_MR_BOUNDS = -2,    /* [va, va + len) not inside the window */
	OVL_MR_ACCESS = -3,    /* window lacks the access */
};

int ovl_mr_translate(const struct ovl *o, uint32_t tenant, const uint8_t *owner_vip, unsigned vip_len,
		     uint32_t rkey, uint64_t va, uint64_t len, uint32_t access, uint32_t *new_rkey,
		     uint64_t *new_va);

#endif /* OVL_H */
