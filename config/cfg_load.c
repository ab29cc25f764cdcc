/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schema, version 1: one field table per kind of record, and the cross
 * checks between records (uniqueness, references, peers, quotas).
 *
 * Sections are loaded in dependency order (tenants before the ports that
 * name them, endpoints before QPs, ...) and every message is tagged with the
 * position of its top-level key in the file and its record index, so that
 * the messages can be sorted back into file order at the end.
 *
 * Every uniqueness check and every reference goes through a hash index
 * (cfg_htab.h), so a file with a million QPs loads in linear time.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg_priv.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* CFG_F_ENUM stores an int; every enum it stores into must be int-sized. */
static_assert(sizeof(enum cfg_port_role) == sizeof(int), "enum size");
static_assert(sizeof(enum cfg_mr_check) == sizeof(int), "enum size");
static_assert(sizeof(enum cfg_qp_type) == sizeof(int), "enum size");

/* Names of enum values, in the order of the enum. */
static const char *const role_names[] = { "uplink", "tenant", NULL };
static const char *const mr_check_names[] = { "off", "enforce", NULL };
static const char *const qp_type_names[] = { "rc", "uc", "ud", NULL };
/* Bit i stands for access_names[i]: CFG_ACC_REMOTE_READ, _WRITE, _ATOMIC. */
static const char *const access_names[] = {
	"remote_read", "remote_write", "remote_atomic", NULL
};
static const char *const dcqcn_profile_names[] = { "nvidia", "paper", NULL };
/* "ce_to_tenant", into the bool ce_keep. */
static const char *const ce_names[] = { "clear", "keep", NULL };

/* "rate" of a tenant or a QP. */
static const struct cfg_field rate_fields[] = {
	CFG_FIELD(struct cfg_rate, "gbps", CFG_F_GBPS, CFG_REQUIRED, bps),
	CFG_FIELD(struct cfg_rate, "burst_bytes", CFG_F_UINT, CFG_OPTIONAL, burst_bytes,
		  .min = 1),
};

enum { T_NAME, T_VNI, T_MAX_QPS, T_RATE, T_MR_CHECK, T_DCQCN };
static const struct cfg_field tenant_fields[] = {
	[T_NAME] = CFG_FIELD(struct cfg_tenant, "name", CFG_F_STR, CFG_REQUIRED, name),
	[T_VNI] = CFG_FIELD(struct cfg_tenant, "vni", CFG_F_UINT, CFG_REQUIRED, vni,
			    .max = CFG_VNI_MAX),
	[T_MAX_QPS] = CFG_FIELD(struct cfg_tenant, "max_qps", CFG_F_UINT, CFG_OPTIONAL, max_qps),
	[T_RATE] = CFG_FIELD(struct cfg_tenant, "rate", CFG_F_OBJECT, CFG_OPTIONAL, rate,
			     CFG_HAS(struct cfg_tenant, rate.set), CFG_SUB(rate_fields)),
	[T_MR_CHECK] = CFG_FIELD(struct cfg_tenant, "mr_check", CFG_F_ENUM, CFG_OPTIONAL,
				 mr_check, .names = mr_check_names),
	/* Walked by load_tenant_dcqcn(). */
	[T_DCQCN] = { .key = "dcqcn", .kind = CFG_F_OBJECT,
		      CFG_HAS(struct cfg_tenant, dcqcn_override) },
};

/* A tenant's "dcqcn": a profile to start from instead of the top-level parameters. */
struct tenant_dcqcn {
	int profile;            /* index into dcqcn_profile_names, -1 when absent */
};

static const struct cfg_field tenant_dcqcn_fields[] = {
	CFG_FIELD(struct tenant_dcqcn, "profile", CFG_F_ENUM, CFG_OPTIONAL, profile,
		  .names = dcqcn_profile_names),
	/* Walked by load_dcqcn_params(). */
	{ .key = "params", .kind = CFG_F_OBJECT },
};

enum { P_NAME, P_DEVICE, P_ROLE, P_IP, P_MAC, P_GATEWAY_MAC, P_TENANT };
static const struct cfg_field port_fields[] = {
	[P_NAME] = CFG_FIELD(struct cfg_port, "name", CFG_F_STR, CFG_REQUIRED, name),
	[P_DEVICE] = CFG_FIELD(struct cfg_port, "device", CFG_F_STR, CFG_REQUIRED, device),
	[P_ROLE] = CFG_FIELD(struct cfg_port, "role", CFG_F_ENUM, CFG_REQUIRED, role,
			     .names = role_names),
	/* Which of these a port needs depends on its role: see load_ports(). */
	[P_IP] = CFG_FIELD(struct cfg_port, "ip", CFG_F_IP, CFG_OPTIONAL, ip,
			   CFG_HAS(struct cfg_port, has_ip)),
	[P_MAC] = CFG_FIELD(struct cfg_port, "mac", CFG_F_MAC, CFG_REQUIRED, mac),
	[P_GATEWAY_MAC] = CFG_FIELD(struct cfg_port, "gateway_mac", CFG_F_MAC, CFG_OPTIONAL,
				    gateway_mac, CFG_HAS(struct cfg_port, has_gateway_mac)),
	[P_TENANT] = CFG_FIELD(struct cfg_port, "tenant", CFG_F_TENANT, CFG_OPTIONAL, tenant),
};

enum { E_TENANT, E_VIP, E_HOST, E_PORT, E_MAC };
static const struct cfg_field endpoint_fields[] = {
	[E_TENANT] = CFG_FIELD(struct cfg_endpoint, "tenant", CFG_F_TENANT, CFG_REQUIRED, tenant),
	[E_VIP] = CFG_FIELD(struct cfg_endpoint, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	[E_HOST] = CFG_FIELD(struct cfg_endpoint, "host", CFG_F_IP, CFG_REQUIRED, host),
	[E_PORT] = CFG_FIELD(struct cfg_endpoint, "port", CFG_F_PORT, CFG_OPTIONAL, port),
	[E_MAC] = CFG_FIELD(struct cfg_endpoint, "mac", CFG_F_MAC, CFG_OPTIONAL, mac,
			    CFG_HAS(struct cfg_endpoint, has_mac)),
};

/* "peer" of a QP: its offsets are into struct cfg_qp itself. */
static const struct cfg_field peer_fields[] = {
	CFG_FIELD(struct cfg_qp, "vip", CFG_F_IP, CFG_REQUIRED, peer_vip),
	CFG_FIELD(struct cfg_qp, "vqpn", CFG_F_QPN, CFG_REQUIRED, peer_vqpn),
};

enum { Q_TENANT, Q_VIP, Q_VQPN, Q_PQPN, Q_TYPE, Q_PEER, Q_RATE };
static const struct cfg_field qp_fields[] = {
	[Q_TENANT] = CFG_FIELD(struct cfg_qp, "tenant", CFG_F_TENANT, CFG_REQUIRED, tenant),
	[Q_VIP] = CFG_FIELD(struct cfg_qp, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	[Q_VQPN] = CFG_FIELD(struct cfg_qp, "vqpn", CFG_F_QPN, CFG_REQUIRED, vqpn),
	[Q_PQPN] = CFG_FIELD(struct cfg_qp, "pqpn", CFG_F_QPN, CFG_REQUIRED, pqpn),
	[Q_TYPE] = CFG_FIELD(struct cfg_qp, "type", CFG_F_ENUM, CFG_REQUIRED, type,
			     .names = qp_type_names),
	/* Required or forbidden by type: see load_qps(). */
	[Q_PEER] = { .key = "peer", .kind = CFG_F_OBJECT, .off = 0,
		     CFG_HAS(struct cfg_qp, has_peer), CFG_SUB(peer_fields) },
	[Q_RATE] = CFG_FIELD(struct cfg_qp, "rate", CFG_F_OBJECT, CFG_OPTIONAL, rate,
			     CFG_HAS(struct cfg_qp, rate.set), CFG_SUB(rate_fields)),
};

enum { M_TENANT, M_VIP, M_RKEY, M_ADDR, M_LENGTH, M_TARGET_RKEY, M_TARGET_ADDR, M_ACCESS };
static const struct cfg_field mr_fields[] = {
	[M_TENANT] = CFG_FIELD(struct cfg_mr, "tenant", CFG_F_TENANT, CFG_REQUIRED, tenant),
	[M_VIP] = CFG_FIELD(struct cfg_mr, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	[M_RKEY] = CFG_FIELD(struct cfg_mr, "rkey", CFG_F_UINT, CFG_REQUIRED, rkey),
	[M_ADDR] = CFG_FIELD(struct cfg_mr, "addr", CFG_F_UINT, CFG_REQUIRED, addr),
	[M_LENGTH] = CFG_FIELD(struct cfg_mr, "length", CFG_F_UINT, CFG_REQUIRED, length,
			       .min = 1),
	[M_TARGET_RKEY] = CFG_FIELD(struct cfg_mr, "target_rkey", CFG_F_UINT, CFG_REQUIRED,
				    target_rkey),
	[M_TARGET_ADDR] = CFG_FIELD(struct cfg_mr, "target_addr", CFG_F_UINT, CFG_REQUIRED,
				    target_addr),
	[M_ACCESS] = CFG_FIELD(struct cfg_mr, "access", CFG_F_FLAGS, CFG_REQUIRED, access,
			       .names = access_names),
};

enum { N_IP, N_MAC };
static const struct cfg_field neighbor_fields[] = {
	[N_IP] = CFG_FIELD(struct cfg_neighbor, "ip", CFG_F_IP, CFG_REQUIRED, ip),
	[N_MAC] = CFG_FIELD(struct cfg_neighbor, "mac", CFG_F_MAC, CFG_REQUIRED, mac),
};

static const struct cfg_field dcqcn_fields[] = {
	CFG_FIELD(struct cfg_dcqcn, "enabled", CFG_F_BOOL, CFG_OPTIONAL, enabled),
	CFG_FIELD(struct cfg_dcqcn, "profile", CFG_F_STR, CFG_OPTIONAL, profile,
		  .names = dcqcn_profile_names),
	/* dcqcn_profile_build() takes line rates below 2^44 b/s: at most 10 Tb/s. */
	CFG_FIELD(struct cfg_dcqcn, "line_rate_gbps", CFG_F_GBPS, CFG_OPTIONAL, line_rate_bps,
		  .max = UINT64_C(10000000000000)),
	CFG_FIELD(struct cfg_dcqcn, "ce_to_tenant", CFG_F_ENUM, CFG_OPTIONAL, ce_keep,
		  .names = ce_names),
	CFG_FIELD(struct cfg_dcqcn, "cnp_to_tenant", CFG_F_BOOL, CFG_OPTIONAL, cnp_pass),
	/* Walked by load_dcqcn_params(). */
	{ .key = "params", .kind = CFG_F_OBJECT },
};

static const struct cfg_field offload_fields[] = {
	CFG_FIELD(struct cfg_offload, "enabled", CFG_F_BOOL, CFG_OPTIONAL, enabled),
	CFG_FIELD(struct cfg_offload, "steady_ms", CFG_F_UINT, CFG_OPTIONAL, steady_ms),
	CFG_FIELD(struct cfg_offload, "min_rate_mbps", CFG_F_UINT, CFG_OPTIONAL, min_rate_mbps),
};

static const struct cfg_field shaping_fields[] = {
	CFG_FIELD(struct cfg_shaping, "watchdog_ms", CFG_F_UINT, CFG_OPTIONAL, watchdog_ms,
		  .min = 1, .max = 60000),
	CFG_FIELD(struct cfg_shaping, "queue_bytes", CFG_F_UINT, CFG_OPTIONAL, queue_bytes,
		  .min = 65536),
};

/* Per-record masks of valid fields are kept in 32 bits; bit 31 is Q_KEY_OK. */
static_assert(DIM(port_fields) < 32 && DIM(endpoint_fields) < 32, "mask width");
static_assert(DIM(qp_fields) < 31, "mask width");

/* "acls": one object per tenant, each with an array of rules. */
static_assert(sizeof(enum cfg_acl_action) == sizeof(int), "enum size");
static const char *const acl_action_names[] = { "allow", "deny", NULL };
/* Bit i stands for acl_op_names[i]: CFG_OP_SEND, _WRITE, _READ, _ATOMIC. */
static const char *const acl_op_names[] = { "send", "write", "read", "atomic", NULL };

enum { R_ACTION, R_SRC, R_DST, R_TYPES, R_OPS };
static const struct cfg_field acl_rule_fields[] = {
	[R_ACTION] = CFG_FIELD(struct cfg_acl_rule, "action", CFG_F_ENUM, CFG_REQUIRED, action,
			       .names = acl_action_names),
	[R_SRC] = CFG_FIELD(struct cfg_acl_rule, "src", CFG_F_CIDR, CFG_OPTIONAL, src,
			    CFG_HAS(struct cfg_acl_rule, has_src)),
	[R_DST] = CFG_FIELD(struct cfg_acl_rule, "dst", CFG_F_CIDR, CFG_OPTIONAL, dst,
			    CFG_HAS(struct cfg_acl_rule, has_dst)),
	[R_TYPES] = CFG_FIELD(struct cfg_acl_rule, "types", CFG_F_FLAGS, CFG_OPTIONAL, types,
			      .names = qp_type_names),
	[R_OPS] = CFG_FIELD(struct cfg_acl_rule, "ops", CFG_F_FLAGS, CFG_OPTIONAL, ops,
			    .names = acl_op_names),
};

enum { A_TENANT, A_DEFAULT, A_RULES };
static const struct cfg_field acl_fields[] = {
	[A_TENANT] = CFG_FIELD(struct cfg_acl, "tenant", CFG_F_TENANT, CFG_REQUIRED, tenant),
	[A_DEFAULT] = CFG_FIELD(struct cfg_acl, "default", CFG_F_ENUM, CFG_OPTIONAL, def,
				.names = acl_action_names),
	/* Walked by load_acl_rules(). */
	[A_RULES] = { .key = "rules", .kind = CFG_F_ARRAY, .off = 0 },
};

/* Top-level keys held in one member of struct cfg. */
static const struct cfg_field udp_port_field =
	CFG_FIELD(struct cfg, "udp_port", CFG_F_UINT, CFG_OPTIONAL, udp_port, .min = 1);
static const struct cfg_field dcqcn_field =
	CFG_FIELD(struct cfg, "dcqcn", CFG_F_OBJECT, CFG_OPTIONAL, dcqcn, CFG_SUB(dcqcn_fields));
static const struct cfg_field offload_field =
	CFG_FIELD(struct cfg, "offload", CFG_F_OBJECT, CFG_OPTIONAL, offload,
		  CFG_SUB(offload_fields));
static const struct cfg_field shaping_field =
	CFG_FIELD(struct cfg, "shaping", CFG_F_OBJECT, CFG_OPTIONAL, shaping,
		  CFG_SUB(shaping_fields));

/* Report @fmt at the field @k of the record at @rp. */
#define REC_ERR(ld, rp, k, ...) \
	do { \
		struct cfg_path fp_ = { .up = (rp), .key = (k) }; \
		cfg_err((ld), &fp_, __VA_ARGS__); \
	} while (0)

/*
 * Keys of the hash indexes, and how each compares with a record. The
 * context of every match function is the struct cfg_ld.
 */
struct ep_key {
	int tenant;
	const struct cfg_ip *vip;
};

struct qp_key {
	int tenant;
	const struct cfg_ip *vip;
	uint32_t qpn;           /* vqpn, or rkey for the MR index */
};

struct host_key {
	const struct cfg_ip *host;
	uint32_t pqpn;
};

static uint64_t
hash_ip(uint64_t h, const struct cfg_ip *ip)
{
	h = cfg_hash_bytes(h, &ip->ver, 1);
	return cfg_hash_bytes(h, ip->b, ip->ver == CFG_IPV4 ? 4 : 16);
}

static uint32_t
hash_str(const char *s)
{
	return cfg_hash_final(cfg_hash_bytes(CFG_HASH_SEED, s, strlen(s)));
}

static uint32_t
hash_u32(uint32_t x)
{
	return cfg_hash_final(cfg_hash_bytes(CFG_HASH_SEED, &x, sizeof(x)));
}

static uint32_t
hash_ip_only(const struct cfg_ip *ip)
{
	return cfg_hash_final(hash_ip(CFG_HASH_SEED, ip));
}

static uint32_t
hash_host_pqpn(const struct cfg_ip *host, uint32_t pqpn)
{
	return cfg_hash_final(cfg_hash_bytes(hash_ip(CFG_HASH_SEED, host), &pqpn, sizeof(pqpn)));
}

static uint32_t
hash_tenant_ip(int tenant, const struct cfg_ip *ip, uint32_t x)
{
	uint64_t h = cfg_hash_bytes(CFG_HASH_SEED, &tenant, sizeof(tenant));

	h = hash_ip(h, ip);
	return cfg_hash_final(cfg_hash_bytes(h, &x, sizeof(x)));
}

static bool
tenant_name_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return strcmp(ld->c->tenants[idx].name, key) == 0;
}

static bool
tenant_vni_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return ld->c->tenants[idx].vni == *(const uint32_t *)key;
}

static bool
port_name_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return strcmp(ld->c->ports[idx].name, key) == 0;
}

static bool
port_device_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return strcmp(ld->c->ports[idx].device, key) == 0;
}

static bool
port_ip_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return cfg_ip_equal(&ld->c->ports[idx].ip, key);
}

static bool
ep_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_endpoint *e = &((const struct cfg_ld *)ctx)->c->endpoints[idx];
	const struct ep_key *k = key;

	return e->tenant == k->tenant && cfg_ip_equal(&e->vip, k->vip);
}

static bool
qp_vqpn_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_qp *q = &((const struct cfg_ld *)ctx)->c->qps[idx];
	const struct qp_key *k = key;

	return q->vqpn == k->qpn && q->tenant == k->tenant && cfg_ip_equal(&q->vip, k->vip);
}

static bool
qp_pqpn_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg *c = ((const struct cfg_ld *)ctx)->c;
	const struct cfg_qp *q = &c->qps[idx];
	const struct host_key *k = key;

	return q->pqpn == k->pqpn && cfg_ip_equal(&c->endpoints[q->endpoint].host, k->host);
}

static bool
mr_rkey_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_mr *m = &((const struct cfg_ld *)ctx)->c->mrs[idx];
	const struct qp_key *k = key;

	return m->rkey == k->qpn && m->tenant == k->tenant && cfg_ip_equal(&m->vip, k->vip);
}

static bool
nb_ip_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_ld *ld = ctx;

	return cfg_ip_equal(&ld->c->neighbors[idx].ip, key);
}

/*
 * Look @key up in @h. If it is absent, add the record @idx under it and
 * return -1; otherwise return the index of the record that holds it.
 */
static long
index_claim(struct cfg_ld *ld, struct cfg_htab *h, uint32_t hash, cfg_htab_match_t match,
	    const void *key, uint32_t idx)
{
	long j = cfg_htab_lookup(h, hash, match, ld, key);

	if (j < 0 && cfg_htab_add(h, hash, idx) < 0)
		ld->oom = true;
	return j;
}

static long
ep_find(const struct cfg_ld *ld, int tenant, const struct cfg_ip *vip)
{
	struct ep_key k = { .tenant = tenant, .vip = vip };

	return (long)cfg_htab_lookup(&ld->ep_by_vip, hash_tenant_ip(tenant, vip, 0), ep_match, ld,
				     &k);
}

int
cfg_ld_tenant_lookup(const struct cfg_ld *ld, const char *name)
{
	return (int)cfg_htab_lookup(&ld->tenant_by_name, hash_str(name), tenant_name_match, ld,
				    name);
}

int
cfg_ld_port_lookup(const struct cfg_ld *ld, const char *name)
{
	return (int)cfg_htab_lookup(&ld->port_by_name, hash_str(name), port_name_match, ld, name);
}

/*
 * Start an array section: check that @v is an array and allocate one zeroed
 * record of @size bytes per element. Returns false if @v is not an array.
 */
static bool
records_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p, size_t size,
	      void **arr, uint32_t *n)
{
	size_t k;

	*arr = NULL;
	*n = 0;
	if (!cfg_j_is_arr(v)) {
		cfg_err(ld, p, "expected an array");
		return false;
	}
	k = v->n;
	if (k == 0)
		return true;
	if (k > INT32_MAX) {
		cfg_err(ld, p, "too many records (%zu)", k);
		return false;
	}
	*arr = calloc(k, size);
	if (*arr == NULL) {
		ld->oom = true;
		return false;
	}
	*n = (uint32_t)k;
	return true;
}

/*
 * Element @i of the section @v: sets the record sort key and the record's
 * path, and returns the object, or NULL (reported) if the element is not one.
 */
static const struct cfg_jv *
record_begin(struct cfg_ld *ld, const struct cfg_jv *v, uint32_t i, const struct cfg_path *p,
	     struct cfg_path *rp)
{
	const struct cfg_jv *o = cfg_j_at(v, i);

	ld->rec = i;
	rp->up = p;
	rp->key = NULL;
	rp->idx = i;
	if (!cfg_j_is_obj(o)) {
		cfg_err(ld, rp, "expected an object");
		return NULL;
	}
	return o;
}

static void
htab_prepare(struct cfg_ld *ld, struct cfg_htab *h, uint32_t n)
{
	if (cfg_htab_init(h, n) < 0)
		ld->oom = true;
}

static bool
load_version(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	uint64_t x;

	if (!cfg_num_parse(ld, v, p, &x))
		return true;
	if (x != CFG_VERSION) {
		/* The rest of the file follows another schema: say nothing about it. */
		cfg_err(ld, p, "unsupported version %" PRIu64 " (this build reads version %d)", x,
			CFG_VERSION);
		return false;
	}
	ld->c->version = CFG_VERSION;
	return true;
}

static bool
load_comment(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	if (cfg_j_is_str(v))
		return true;
	if (!cfg_j_is_arr(v)) {
		cfg_err(ld, p, "expected a string or an array of strings");
		return true;
	}
	for (uint32_t i = 0; i < v->n; i++) {
		struct cfg_path ep = { .up = p, .key = NULL, .idx = i };

		if (!cfg_j_is_str(cfg_j_at(v, i)))
			cfg_err(ld, &ep, "expected a string");
	}
	return true;
}

/* The member @m of "params" (at @p) into @prm. Returns false if reported. */
static bool
load_dcqcn_param(struct cfg_ld *ld, const struct cfg_jv *m, const struct cfg_path *p,
		 struct dcqcn_params *prm)
{
	struct cfg_path kp = { .up = p, .key = m->key };
	const char *unit = dcqcn_param_unit(m->key);
	char num_buf[40];
	const char *text = num_buf;
	int rc;

	switch (m->type) {
	case CFG_JINT:
		snprintf(num_buf, sizeof(num_buf), "%s%llu", m->neg ? "-" : "",
			 (unsigned long long)m->v.u);
		break;
	case CFG_JREAL:
		snprintf(num_buf, sizeof(num_buf), "%.17g", m->v.d);
		break;
	case CFG_JBOOL:
		snprintf(num_buf, sizeof(num_buf), "%d", m->v.u != 0);
		break;
	case CFG_JSTR:
		text = m->v.s;
		break;
	default:
		/* Without a value, only an unknown name (-ENOENT) differs from -EINVAL. */
		text = NULL;
		break;
	}
	rc = dcqcn_params_set(prm, m->key, text);
	if (rc == -ENOENT)
		cfg_err(ld, &kp, "unknown DCQCN parameter");
	else if (rc != 0 && text == NULL)
		cfg_err(ld, &kp, "expected a number or a string (%s)", unit ? unit : "?");
	else if (rc != 0)
		cfg_err(ld, &kp, cfg_j_is_str(m) ? "invalid value \"%.64s\" (%s)" :
			"invalid value %s (%s)", text, unit ? unit : "?");
	return rc == 0;
}

/*
 * Apply the "params" of the "dcqcn" object @o (at @p) to @prm, which holds
 * the parameters to start from; then, if @check, make sure that they build a
 * profile at the configured line rate. Returns false if anything was reported.
 */
static bool
load_dcqcn_params(struct cfg_ld *ld, const struct cfg_jv *o, const struct cfg_path *p,
		  struct dcqcn_params *prm, bool check)
{
	const struct cfg_jv *v = cfg_j_get(o, "params");
	struct cfg_path pp = { .up = p, .key = "params" };
	const struct cfg_path *at = v != NULL ? &pp : p;
	uint64_t line_bps = ld->c->dcqcn.line_rate_bps, max_bps;
	struct dcqcn_profile prof;
	bool ok = true;

	for (uint32_t i = 0; cfg_j_is_obj(v) && i < v->n; i++)
		ok &= load_dcqcn_param(ld, cfg_j_at(v, i), &pp, prm);
	if (!ok || !check || dcqcn_profile_build(&prof, prm, line_bps) == 0)
		return ok;
	max_bps = (uint64_t)prm->rpg_max_rate * 1000000;
	if (max_bps == 0 || max_bps > line_bps)
		max_bps = line_bps;
	if (prm->kmin > prm->kmax)
		cfg_err(ld, at, "kmin %" PRIu32 " is above kmax %" PRIu32, prm->kmin, prm->kmax);
	else if ((uint64_t)prm->rpg_min_rate * 1000000 > max_bps)
		cfg_err(ld, at, "rpg_min_rate %" PRIu32 " Mb/s is above the maximum rate, %.15g Mb/s",
			prm->rpg_min_rate, (double)max_bps / 1e6);
	else
		cfg_err(ld, at, "the DCQCN parameters are inconsistent");
	return false;
}

static bool
load_dcqcn(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_dcqcn *d = &ld->c->dcqcn;
	bool ok = cfg_value_parse(ld, &dcqcn_field, v, p, ld->c);

	dcqcn_params_default(&d->params, d->profile);
	if (!load_dcqcn_params(ld, v, p, &d->params, ok) || !ok)
		ld->quiet_dcqcn = true;
	return true;
}

/*
 * A tenant's own "dcqcn" @o (at @p): the defaults of its profile, or else the
 * top-level parameters that @t holds already, with its "params" applied.
 */
static void
load_tenant_dcqcn(struct cfg_ld *ld, const struct cfg_jv *o, const struct cfg_path *p,
		  struct cfg_tenant *t)
{
	struct tenant_dcqcn td = { .profile = -1 };
	uint64_t ok, present;

	ok = cfg_obj_parse(ld, o, p, tenant_dcqcn_fields, DIM(tenant_dcqcn_fields), &td, &present);
	if (td.profile >= 0)
		dcqcn_params_default(&t->dcqcn, dcqcn_profile_names[td.profile]);
	/* What an invalid top-level "dcqcn" leads to was reported there. */
	load_dcqcn_params(ld, o, p, &t->dcqcn,
			  ok == present && (td.profile >= 0 || !ld->quiet_dcqcn));
}

static bool
load_tenants(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;

	if (!records_alloc(ld, v, p, sizeof(*c->tenants), (void **)&c->tenants, &c->n_tenants))
		ld->quiet_tenants = true;
	htab_prepare(ld, &ld->tenant_by_name, c->n_tenants);
	htab_prepare(ld, &ld->tenant_by_vni, c->n_tenants);
	for (uint32_t i = 0; i < c->n_tenants; i++) {
		struct cfg_tenant *t = &c->tenants[i];
		struct cfg_path rp;
		const struct cfg_jv *o;
		uint64_t ok;
		long j;

		t->max_qps = CFG_DEFAULT_MAX_QPS;
		t->mr_check = CFG_MR_CHECK_OFF;
		t->dcqcn = c->dcqcn.params;
		o = record_begin(ld, v, i, p, &rp);
		if (o == NULL)
			continue;
		ok = cfg_obj_parse(ld, o, &rp, tenant_fields, DIM(tenant_fields), t, NULL);
		if (ok & CFG_BIT(T_NAME)) {
			j = index_claim(ld, &ld->tenant_by_name, hash_str(t->name),
					tenant_name_match, t->name, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "name",
					"\"%.64s\" is already defined by tenants[%ld]", t->name, j);
		}
		if (ok & CFG_BIT(T_VNI)) {
			/* Two tenants on one VNI could not be told apart on the wire. */
			j = index_claim(ld, &ld->tenant_by_vni, hash_u32(t->vni), tenant_vni_match,
					&t->vni, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "vni", "%" PRIu32 " is already used by "
					"tenants[%ld]", t->vni, j);
		}
		if (ok & CFG_BIT(T_DCQCN)) {
			struct cfg_path kp = { .up = &rp, .key = "dcqcn" };

			load_tenant_dcqcn(ld, cfg_j_get(o, "dcqcn"), &kp, t);
		}
	}
	return true;
}

static bool
load_ports(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	char ips[CFG_IP_STRLEN];

	if (!records_alloc(ld, v, p, sizeof(*c->ports), (void **)&c->ports, &c->n_ports))
		ld->quiet_ports = true;
	ld->port_ok = calloc(c->n_ports ? c->n_ports : 1, sizeof(*ld->port_ok));
	if (ld->port_ok == NULL)
		ld->oom = true;
	htab_prepare(ld, &ld->port_by_name, c->n_ports);
	htab_prepare(ld, &ld->port_by_device, c->n_ports);
	htab_prepare(ld, &ld->port_by_ip, c->n_ports);
	for (uint32_t i = 0; i < c->n_ports && !ld->oom; i++) {
		struct cfg_port *pt = &c->ports[i];
		struct cfg_path rp;
		uint64_t ok, present;
		const struct cfg_jv *o;
		long j;

		pt->tenant = -1;
		o = record_begin(ld, v, i, p, &rp);
		if (o == NULL)
			continue;
		ok = cfg_obj_parse(ld, o, &rp, port_fields, DIM(port_fields), pt, &present);
		ld->port_ok[i] = (uint32_t)ok;
		if (ok & CFG_BIT(P_NAME)) {
			j = index_claim(ld, &ld->port_by_name, hash_str(pt->name), port_name_match,
					pt->name, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "name",
					"\"%.64s\" is already defined by ports[%ld]", pt->name, j);
		}
		if (ok & CFG_BIT(P_DEVICE)) {
			j = index_claim(ld, &ld->port_by_device, hash_str(pt->device),
					port_device_match, pt->device, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "device",
					"\"%.64s\" is already used by ports[%ld]", pt->device, j);
		}
		if (!(ok & CFG_BIT(P_ROLE)))
			continue;
		if (pt->role == CFG_ROLE_UPLINK) {
			if (!(present & CFG_BIT(P_IP)))
				REC_ERR(ld, &rp, "ip",
					"missing required key (uplink ports need an ip)");
			if (present & CFG_BIT(P_TENANT))
				REC_ERR(ld, &rp, "tenant", "not allowed on uplink ports");
			pt->tenant = -1;
			if (!(ok & CFG_BIT(P_IP)))
				continue;
			j = index_claim(ld, &ld->port_by_ip, hash_ip_only(&pt->ip), port_ip_match,
					&pt->ip, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "ip", "%s is already the ip of ports[%ld]",
					cfg_ip_str(&pt->ip, ips), j);
		} else {
			if (!(present & CFG_BIT(P_TENANT)))
				REC_ERR(ld, &rp, "tenant",
					"missing required key (tenant ports need a tenant)");
			if (present & CFG_BIT(P_IP))
				REC_ERR(ld, &rp, "ip", "not allowed on tenant ports");
			if (present & CFG_BIT(P_GATEWAY_MAC))
				REC_ERR(ld, &rp, "gateway_mac", "not allowed on tenant ports");
		}
	}
	return true;
}

static bool
load_endpoints(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	char ips[CFG_IP_STRLEN];

	records_alloc(ld, v, p, sizeof(*c->endpoints), (void **)&c->endpoints, &c->n_endpoints);
	ld->ep_ok = calloc(c->n_endpoints ? c->n_endpoints : 1, sizeof(*ld->ep_ok));
	if (ld->ep_ok == NULL)
		ld->oom = true;
	htab_prepare(ld, &ld->ep_by_vip, c->n_endpoints);
	for (uint32_t i = 0; i < c->n_endpoints && !ld->oom; i++) {
		struct cfg_endpoint *e = &c->endpoints[i];
		struct cfg_path rp;
		uint64_t ok, present;
		const struct cfg_jv *o;

		e->tenant = -1;
		e->port = -1;
		o = record_begin(ld, v, i, p, &rp);
		if (o == NULL)
			continue;
		ok = cfg_obj_parse(ld, o, &rp, endpoint_fields, DIM(endpoint_fields), e, &present);
		ld->ep_ok[i] = (uint32_t)ok;
		if ((ok & CFG_BIT(E_TENANT)) && (ok & CFG_BIT(E_VIP))) {
			struct ep_key k = { .tenant = e->tenant, .vip = &e->vip };
			uint32_t h = hash_tenant_ip(e->tenant, &e->vip, 0);
			long j = index_claim(ld, &ld->ep_by_vip, h, ep_match, &k, i);

			if (j >= 0)
				REC_ERR(ld, &rp, "vip", "%s is already an endpoint of tenant "
					"\"%.64s\" (endpoints[%ld])", cfg_ip_str(&e->vip, ips),
					c->tenants[e->tenant].name, j);
		}
		if (!(present & CFG_BIT(E_PORT)))
			continue;
		if (!(present & CFG_BIT(E_MAC)))
			REC_ERR(ld, &rp, "mac",
				"missing required key (an endpoint with a port needs a mac)");
		/* Say nothing about a port whose role is already reported. */
		if ((ok & CFG_BIT(E_PORT)) && (ld->port_ok[e->port] & CFG_BIT(P_ROLE))) {
			const struct cfg_port *pt = &c->ports[e->port];

			if (pt->role != CFG_ROLE_TENANT)
				REC_ERR(ld, &rp, "port",
					"\"%.64s\" is an uplink port, not a tenant port", pt->name);
			else if ((ok & CFG_BIT(E_TENANT)) && pt->tenant >= 0 &&
				 pt->tenant != e->tenant)
				REC_ERR(ld, &rp, "port",
					"port \"%.64s\" belongs to tenant \"%.64s\", not \"%.64s\"",
					pt->name, c->tenants[pt->tenant].name,
					c->tenants[e->tenant].name);
		}
	}
	return true;
}

/* Describe qps[@j] as "qps[5] (192.168.1.20 qp 33)" for messages. */
static const char *
qp_str(const struct cfg *c, uint32_t j, char *buf, size_t len)
{
	char ips[CFG_IP_STRLEN];

	snprintf(buf, len, "qps[%" PRIu32 "] (%s qp %" PRIu32 ")", j,
		 cfg_ip_str(&c->qps[j].vip, ips), c->qps[j].vqpn);
	return buf;
}

/* Bits of ld->qp_ok beyond the field rows: the QP is in qp_by_vqpn's key space. */
#define Q_KEY_OK CFG_BIT(31)

/* Check the peer of qps[@i], once every QP is indexed. */
static void
qp_peer_check(struct cfg_ld *ld, const struct cfg_path *p, uint32_t i)
{
	const struct cfg *c = ld->c;
	struct cfg_qp *q = &c->qps[i];
	uint32_t need = Q_KEY_OK | CFG_BIT(Q_TYPE) | CFG_BIT(Q_PEER);
	struct cfg_path rp = { .up = p, .key = NULL, .idx = i };
	char ips[CFG_IP_STRLEN], qs[96];
	const struct cfg_qp *r;
	struct qp_key k;
	long j;

	if ((ld->qp_ok[i] & need) != need || !q->has_peer || q->type == CFG_QP_UD)
		return;
	ld->rec = i;
	k.tenant = q->tenant;
	k.vip = &q->peer_vip;
	k.qpn = q->peer_vqpn;
	j = (long)cfg_htab_lookup(&ld->qp_by_vqpn, hash_tenant_ip(k.tenant, k.vip, k.qpn),
				  qp_vqpn_match, ld, &k);
	if (j < 0) {
		REC_ERR(ld, &rp, "peer", "no QP %s qp %" PRIu32 " in tenant \"%.64s\"",
			cfg_ip_str(&q->peer_vip, ips), q->peer_vqpn, c->tenants[q->tenant].name);
		return;
	}
	if ((uint32_t)j == i) {
		REC_ERR(ld, &rp, "peer", "a QP cannot be its own peer");
		return;
	}
	r = &c->qps[j];
	/* Say nothing about a peer whose own type or peer is already reported. */
	if (!(ld->qp_ok[j] & CFG_BIT(Q_TYPE)))
		return;
	if (r->type != q->type) {
		REC_ERR(ld, &rp, "peer", "%s is %s, not %s", qp_str(c, (uint32_t)j, qs, sizeof(qs)),
			qp_type_names[r->type], qp_type_names[q->type]);
		return;
	}
	if (!(ld->qp_ok[j] & CFG_BIT(Q_PEER)))
		return;
	if (r->peer_vqpn != q->vqpn || !cfg_ip_equal(&r->peer_vip, &q->vip)) {
		REC_ERR(ld, &rp, "peer", "%s does not point back",
			qp_str(c, (uint32_t)j, qs, sizeof(qs)));
		return;
	}
	q->peer = (int)j;
}

static bool
load_qps(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	char ips[CFG_IP_STRLEN];

	records_alloc(ld, v, p, sizeof(*c->qps), (void **)&c->qps, &c->n_qps);
	ld->qp_ok = calloc(c->n_qps ? c->n_qps : 1, sizeof(*ld->qp_ok));
	if (ld->qp_ok == NULL)
		ld->oom = true;
	htab_prepare(ld, &ld->qp_by_vqpn, c->n_qps);
	htab_prepare(ld, &ld->qp_by_pqpn, c->n_qps);
	for (uint32_t i = 0; i < c->n_qps && !ld->oom; i++) {
		struct cfg_qp *q = &c->qps[i];
		struct cfg_path rp;
		uint64_t ok, present;
		const struct cfg_jv *o;
		long j;

		q->tenant = -1;
		q->peer = -1;
		q->endpoint = -1;
		o = record_begin(ld, v, i, p, &rp);
		if (o == NULL)
			continue;
		ok = cfg_obj_parse(ld, o, &rp, qp_fields, DIM(qp_fields), q, &present);
		if (!(ok & CFG_BIT(Q_TENANT))) {
			ld->qp_ok[i] = (uint32_t)ok;
			continue;
		}
		if (++c->tenants[q->tenant].n_qps > c->tenants[q->tenant].max_qps)
			REC_ERR(ld, &rp, "tenant", "tenant \"%.64s\" exceeds max_qps %" PRIu32,
				c->tenants[q->tenant].name, c->tenants[q->tenant].max_qps);
		if (ok & CFG_BIT(Q_VIP)) {
			j = ep_find(ld, q->tenant, &q->vip);
			if (j < 0)
				REC_ERR(ld, &rp, "vip", "%s is not an endpoint of tenant \"%.64s\"",
					cfg_ip_str(&q->vip, ips), c->tenants[q->tenant].name);
			else
				q->endpoint = (int)j;
		}
		if ((ok & CFG_BIT(Q_VIP)) && (ok & CFG_BIT(Q_VQPN))) {
			struct qp_key k = { .tenant = q->tenant, .vip = &q->vip, .qpn = q->vqpn };

			ok |= Q_KEY_OK;
			j = index_claim(ld, &ld->qp_by_vqpn, hash_tenant_ip(k.tenant, k.vip, k.qpn),
					qp_vqpn_match, &k, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "vqpn", "%s qp %" PRIu32 " in tenant \"%.64s\" "
					"is already defined by qps[%ld]", cfg_ip_str(&q->vip, ips),
					q->vqpn, c->tenants[q->tenant].name, j);
		}
		if (q->endpoint >= 0 && (ld->ep_ok[q->endpoint] & CFG_BIT(E_HOST)) &&
		    (ok & CFG_BIT(Q_PQPN))) {
			const struct cfg_ip *host = &c->endpoints[q->endpoint].host;
			struct host_key k = { .host = host, .pqpn = q->pqpn };
			uint32_t h = hash_host_pqpn(host, q->pqpn);

			j = index_claim(ld, &ld->qp_by_pqpn, h, qp_pqpn_match, &k, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "pqpn", "%" PRIu32 " is already used on host %s "
					"by qps[%ld]", q->pqpn, cfg_ip_str(host, ips), j);
		}
		if (ok & CFG_BIT(Q_TYPE)) {
			if (q->type != CFG_QP_UD && !(present & CFG_BIT(Q_PEER)))
				REC_ERR(ld, &rp, "peer",
					"missing required key (%s QPs need a peer)",
					qp_type_names[q->type]);
			else if (q->type == CFG_QP_UD && (present & CFG_BIT(Q_PEER)))
				REC_ERR(ld, &rp, "peer", "not allowed on ud QPs");
		}
		ld->qp_ok[i] = (uint32_t)ok;
	}
	for (uint32_t i = 0; i < c->n_qps && !ld->oom; i++)
		qp_peer_check(ld, p, i);
	return true;
}

static bool
load_mrs(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	char ips[CFG_IP_STRLEN];

	records_alloc(ld, v, p, sizeof(*c->mrs), (void **)&c->mrs, &c->n_mrs);
	htab_prepare(ld, &ld->mr_by_rkey, c->n_mrs);
	for (uint32_t i = 0; i < c->n_mrs && !ld->oom; i++) {
		struct cfg_mr *m = &c->mrs[i];
		struct cfg_path rp;
		const struct cfg_jv *o;
		uint64_t ok;
		long j;

		m->tenant = -1;
		m->endpoint = -1;
		o = record_begin(ld, v, i, p, &rp);
		if (o == NULL)
			continue;
		ok = cfg_obj_parse(ld, o, &rp, mr_fields, DIM(mr_fields), m, NULL);
		if ((ok & CFG_BIT(M_TENANT)) && (ok & CFG_BIT(M_VIP))) {
			j = ep_find(ld, m->tenant, &m->vip);
			if (j < 0)
				REC_ERR(ld, &rp, "vip", "%s is not an endpoint of tenant \"%.64s\"",
					cfg_ip_str(&m->vip, ips), c->tenants[m->tenant].name);
			else
				m->endpoint = (int)j;
		}
		if ((ok & CFG_BIT(M_TENANT)) && (ok & CFG_BIT(M_VIP)) && (ok & CFG_BIT(M_RKEY))) {
			struct qp_key k = { .tenant = m->tenant, .vip = &m->vip, .qpn = m->rkey };

			j = index_claim(ld, &ld->mr_by_rkey, hash_tenant_ip(k.tenant, k.vip, k.qpn),
					mr_rkey_match, &k, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "rkey", "0x%08" PRIx32 " of %s in tenant "
					"\"%.64s\" is already defined by mrs[%ld]", m->rkey,
					cfg_ip_str(&m->vip, ips), c->tenants[m->tenant].name, j);
		}
		/* The overlay computes addr + length: it must not wrap around 2^64. */
		if ((ok & CFG_BIT(M_LENGTH)) && (ok & CFG_BIT(M_ADDR)) &&
		    m->length > UINT64_MAX - m->addr)
			REC_ERR(ld, &rp, "addr",
				"0x%" PRIx64 " + length 0x%" PRIx64 " overflows 64 bits",
				m->addr, m->length);
		if ((ok & CFG_BIT(M_LENGTH)) && (ok & CFG_BIT(M_TARGET_ADDR)) &&
		    m->length > UINT64_MAX - m->target_addr)
			REC_ERR(ld, &rp, "target_addr",
				"0x%" PRIx64 " + length 0x%" PRIx64 " overflows 64 bits",
				m->target_addr, m->length);
	}
	return true;
}

static bool
load_neighbors(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	char ips[CFG_IP_STRLEN];

	records_alloc(ld, v, p, sizeof(*c->neighbors), (void **)&c->neighbors, &c->n_neighbors);
	htab_prepare(ld, &ld->nb_by_ip, c->n_neighbors);
	for (uint32_t i = 0; i < c->n_neighbors && !ld->oom; i++) {
		struct cfg_neighbor *nb = &c->neighbors[i];
		struct cfg_path rp;
		const struct cfg_jv *o;
		uint64_t ok;
		long j;

		o = record_begin(ld, v, i, p, &rp);
		if (o == NULL)
			continue;
		ok = cfg_obj_parse(ld, o, &rp, neighbor_fields, DIM(neighbor_fields), nb, NULL);
		if (ok & CFG_BIT(N_IP)) {
			j = index_claim(ld, &ld->nb_by_ip, hash_ip_only(&nb->ip), nb_ip_match,
					&nb->ip, i);
			if (j >= 0)
				REC_ERR(ld, &rp, "ip", "%s is already defined by neighbors[%ld]",
					cfg_ip_str(&nb->ip, ips), j);
		}
	}
	return true;
}

/* What a rule matches, as bytes: two rules with equal keys match the same frames. */
struct acl_rule_key {
	uint8_t b[2 * (1 + 1 + 16 + 1) + 8];
};

static struct acl_rule_key
acl_rule_key_of(const struct cfg_acl_rule *r)
{
	struct acl_rule_key k;
	uint8_t *p = k.b;

	memset(&k, 0, sizeof(k));
	*p++ = r->has_src;
	if (r->has_src) {
		*p++ = r->src.ip.ver;
		memcpy(p, r->src.ip.b, 16);
		p[16] = r->src.len;
	}
	p = k.b + 19;
	*p++ = r->has_dst;
	if (r->has_dst) {
		*p++ = r->dst.ip.ver;
		memcpy(p, r->dst.ip.b, 16);
		p[16] = r->dst.len;
	}
	memcpy(k.b + 38, &r->types, 4);
	memcpy(k.b + 42, &r->ops, 4);
	return k;
}

static bool
acl_rule_match(const void *ctx, uint32_t idx, const void *key)
{
	struct acl_rule_key k = acl_rule_key_of(&((const struct cfg_acl *)ctx)->rules[idx]);

	return memcmp(&k, key, sizeof(k)) == 0;
}

/*
 * The "rules" of the ACL @a (at @p): each rule's fields, a src and dst of one
 * IP version, and no rule that matches exactly what an earlier one does (it
 * could never decide anything: the first match wins).
 */
static void
load_acl_rules(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
	       struct cfg_acl *a)
{
	struct cfg_htab seen;
	char src[CFG_IP_STRLEN], dst[CFG_IP_STRLEN];

	memset(&seen, 0, sizeof(seen));
	records_alloc(ld, v, p, sizeof(*a->rules), (void **)&a->rules, &a->n_rules);
	htab_prepare(ld, &seen, a->n_rules);
	for (uint32_t i = 0; i < a->n_rules && !ld->oom; i++) {
		struct cfg_acl_rule *r = &a->rules[i];
		struct cfg_path rp = { .up = p, .key = NULL, .idx = i };
		const struct cfg_jv *o = cfg_j_at(v, i);
		struct acl_rule_key k;
		uint64_t ok, present;
		uint32_t h;
		long j;

		r->types = CFG_QP_TYPES_ALL;
		r->ops = CFG_OP_ALL;
		if (!cfg_j_is_obj(o)) {
			cfg_err(ld, &rp, "expected an object");
			continue;
		}
		ok = cfg_obj_parse(ld, o, &rp, acl_rule_fields, DIM(acl_rule_fields), r, &present);
		if (ok != present || !(ok & CFG_BIT(R_ACTION)))
			continue;
		if (r->has_src && r->has_dst && r->src.ip.ver != r->dst.ip.ver) {
			REC_ERR(ld, &rp, "dst", "%s/%u is IPv%u but src %s/%u is IPv%u: the rule "
				"can never match", cfg_ip_str(&r->dst.ip, dst), r->dst.len,
				r->dst.ip.ver, cfg_ip_str(&r->src.ip, src), r->src.len,
				r->src.ip.ver);
			continue;
		}
		k = acl_rule_key_of(r);
		h = cfg_hash_final(cfg_hash_bytes(CFG_HASH_SEED, &k, sizeof(k)));
		/* The index compares rules of @a, not records of the load: no index_claim(). */
		j = (long)cfg_htab_lookup(&seen, h, acl_rule_match, a, &k);
		if (j >= 0)
			cfg_err(ld, &rp, "matches exactly what rules[%ld] matches, which decides first: "
				"this rule can never apply", j);
		else if (cfg_htab_add(&seen, h, i) < 0)
			ld->oom = true;
	}
	cfg_htab_free(&seen);
}

static bool
load_acls(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	int32_t *acl_of = calloc(c->n_tenants + 1, sizeof(*acl_of));

	if (acl_of == NULL) {
		ld->oom = true;
		return true;
	}
	for (uint32_t t = 0; t < c->n_tenants; t++)
		acl_of[t] = -1;
	records_alloc(ld, v, p, sizeof(*c->acls), (void **)&c->acls, &c->n_acls);
	for (uint32_t i = 0; i < c->n_acls && !ld->oom; i++) {
		struct cfg_acl *a = &c->acls[i];
		struct cfg_path rp, kp = { .up = &rp, .key = "rules" };
		const struct cfg_jv *o;
		uint64_t ok;

		a->tenant = -1;
		a->def = CFG_ACL_ALLOW;
		o = record_begin(ld, v, i, p, &rp);
		if (o == NULL)
			continue;
		ok = cfg_obj_parse(ld, o, &rp, acl_fields, DIM(acl_fields), a, NULL);
		if (ok & CFG_BIT(A_TENANT)) {
			if (acl_of[a->tenant] >= 0)
				REC_ERR(ld, &rp, "tenant", "tenant \"%.64s\" already has an ACL "
					"(acls[%d])", c->tenants[a->tenant].name, acl_of[a->tenant]);
			else
				acl_of[a->tenant] = (int32_t)i;
		}
		if (ok & CFG_BIT(A_RULES))
			load_acl_rules(ld, cfg_j_get(o, "rules"), &kp, a);
	}
	free(acl_of);
	return true;
}

/*
 * The top-level keys, in the order they are loaded: each section may refer
 * to those above it (tenants inherit the DCQCN parameters). A loader returns
 * false to stop the load (only an unsupported version does: the rest of the
 * file follows another schema). A section without one is a single value of
 * struct cfg, parsed as its field row says.
 */
static const struct {
	const char *key;
	bool required;
	bool (*load)(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
	const struct cfg_field *field;
} sections[] = {
	{ "version", true, load_version, NULL },
	{ "comment", false, load_comment, NULL },
	{ "udp_port", false, NULL, &udp_port_field },
	{ "dcqcn", false, load_dcqcn, NULL },
	{ "tenants", true, load_tenants, NULL },
	{ "ports", true, load_ports, NULL },
	{ "endpoints", false, load_endpoints, NULL },
	{ "qps", false, load_qps, NULL },
	{ "mrs", false, load_mrs, NULL },
	{ "acls", false, load_acls, NULL },
	{ "neighbors", false, load_neighbors, NULL },
	{ "offload", false, NULL, &offload_field },
	{ "shaping", false, NULL, &shaping_field },
};

static void
ld_release(struct cfg_ld *ld)
{
	struct cfg_htab *tabs[] = {
		&ld->tenant_by_name, &ld->tenant_by_vni, &ld->port_by_name, &ld->port_by_device,
		&ld->port_by_ip, &ld->ep_by_vip, &ld->qp_by_vqpn, &ld->qp_by_pqpn,
		&ld->mr_by_rkey, &ld->nb_by_ip,
	};

	for (size_t i = 0; i < DIM(tabs); i++)
		cfg_htab_free(tabs[i]);
	free(ld->port_ok);
	free(ld->ep_ok);
	free(ld->qp_ok);
	for (uint64_t i = 0; i < ld->n_msg; i++)
		free(ld->msg[i].text);
	free(ld->msg);
}

static int
msg_cmp(const void *a, const void *b)
{
	const struct cfg_msg *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sort the collected messages into file order and move them to @errs,
 * keeping at most CFG_ERRORS_MAX and one line that counts the rest.
 */
static void
msgs_deliver(struct cfg_ld *ld, struct cfg_errors *errs)
{
	uint64_t keep = ld->n_msg;
	char **grown;

	if (ld->oom)
		cfg_err_raw(ld, "%s: out of memory", ld->name);
	qsort(ld->msg, ld->n_msg, sizeof(*ld->msg), msg_cmp);
	if (errs == NULL)
		return;
	if (keep > CFG_ERRORS_MAX)
		keep = CFG_ERRORS_MAX;
	grown = realloc(errs->msg, (errs->n + keep + 1) * sizeof(*errs->msg));
	if (grown == NULL)
		return;
	errs->msg = grown;
	for (uint64_t i = 0; i < keep; i++) {
		errs->msg[errs->n++] = ld->msg[i].text;
		ld->msg[i].text = NULL;
	}
	if (keep < ld->n_msg) {
		char *more = malloc(128);

		if (more != NULL) {
			snprintf(more, 128, "%s: %" PRIu64 " more errors not shown", ld->name,
				 ld->n_msg - keep);
			errs->msg[errs->n++] = more;
		}
	}
}

/* Validate the parsed document @root; consumes nothing. */
static struct cfg *
cfg_from_json(const struct cfg_jv *root, const char *name, struct cfg_errors *errs)
{
	int rank[DIM(sections)];
	struct cfg_ld ld;
	const struct cfg_jv *v;
	struct cfg *c;
	int pos = 0;

	memset(&ld, 0, sizeof(ld));
	ld.name = name;
	ld.rec = -1;
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->path = strdup(name)) == NULL ||
	    (c->dcqcn.profile = strdup(dcqcn_profile_names[0])) == NULL) {
		ld.oom = true;
		goto out;
	}
	c->udp_port = CFG_DEFAULT_UDP_PORT;
	c->offload.steady_ms = CFG_DEFAULT_STEADY_MS;
	c->offload.min_rate_mbps = CFG_DEFAULT_MIN_RATE_MBPS;
	c->dcqcn.line_rate_bps = CFG_DEFAULT_LINE_RATE_BPS;
	dcqcn_params_default(&c->dcqcn.params, c->dcqcn.profile);
	c->shaping.watchdog_ms = CFG_DEFAULT_WATCHDOG_MS;
	c->shaping.queue_bytes = CFG_DEFAULT_QUEUE_BYTES;
	ld.c = c;

	if (!cfg_j_is_obj(root)) {
		cfg_err(&ld, NULL, "expected a JSON object at the top level");
		goto out;
	}
	for (size_t s = 0; s < DIM(sections); s++)
		rank[s] = -1;
	for (uint32_t m = 0; m < root->n; m++) {
		const char *key = cfg_j_at(root, m)->key;
		size_t s;

		for (s = 0; s < DIM(sections); s++)
			if (strcmp(sections[s].key, key) == 0)
				break;
		if (s < DIM(sections)) {
			rank[s] = pos++;
		} else {
			struct cfg_path kp = { .key = key };

			ld.rank = pos++;
			cfg_err(&ld, &kp, "unknown key");
		}
	}
	for (size_t s = 0; s < DIM(sections) && !ld.oom; s++) {
		struct cfg_path kp = { .key = sections[s].key };

		v = cfg_j_get(root, sections[s].key);
		ld.rank = rank[s];
		ld.rec = -1;
		if (v == NULL) {
			if (sections[s].required)
				cfg_err(&ld, &kp, "missing required key");
			if (strcmp(sections[s].key, "tenants") == 0)
				ld.quiet_tenants = true;
			else if (strcmp(sections[s].key, "ports") == 0)
				ld.quiet_ports = true;
			continue;
		}
		if (sections[s].load == NULL)
			cfg_value_parse(&ld, sections[s].field, v, &kp, c);
		else if (!sections[s].load(&ld, v, &kp))
			break;
	}
out:
	if (ld.n_msg != 0 || ld.oom) {
		msgs_deliver(&ld, errs);
		cfg_free(c);
		c = NULL;
	}
	ld_release(&ld);
	return c;
}

/* Report a parse error as "NAME:LINE:COL: syntax error: TEXT". */
static void
syntax_error(const char *name, const struct cfg_jerr *je, struct cfg_errors *errs)
{
	struct cfg_ld ld;

	memset(&ld, 0, sizeof(ld));
	ld.name = name;
	cfg_err_raw(&ld, "%s:%d:%d: syntax error: %s", name, je->line, je->col, je->text);
	msgs_deliver(&ld, errs);
	ld_release(&ld);
}

static void
plain_error(const char *name, const char *what, struct cfg_errors *errs)
{
	struct cfg_ld ld;

	memset(&ld, 0, sizeof(ld));
	ld.name = name;
	cfg_err_raw(&ld, "%s: %s", name, what);
	msgs_deliver(&ld, errs);
	ld_release(&ld);
}

/* Parse and validate the @len bytes at @buf, which are modified. */
static struct cfg *
cfg_load_buffer(char *buf, size_t len, const char *name, struct cfg_errors *errs)
{
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	struct cfg *c;

	if (cfg_json_parse(buf, len, &doc, &je) < 0) {
		syntax_error(name, &je, errs);
		return NULL;
	}
	c = cfg_from_json(doc.root, name, errs);
	cfg_json_free(&doc);
	return c;
}

struct cfg *
cfg_load_string(const char *json, const char *name, struct cfg_errors *errs)
{
	struct cfg *c;
	size_t len;
	char *buf;

	if (name == NULL)
		name = "<string>";
	if (json == NULL) {
		plain_error(name, "no text given", errs);
		return NULL;
	}
	len = strlen(json);
	buf = malloc(len + 1);
	if (buf == NULL) {
		plain_error(name, "out of memory", errs);
		return NULL;
	}
	memcpy(buf, json, len + 1);
	c = cfg_load_buffer(buf, len, name, errs);
	free(buf);
	return c;
}

/* Read all of @f into a new buffer. Returns NULL with errno set on failure. */
static char *
read_all(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	struct stat st;
	char *buf, *grown;

	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (buf == NULL)
		return NULL;
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (n < cap) {
			if (ferror(f)) {
				free(buf);
				return NULL;
			}
			break;
		}
		grown = realloc(buf, cap * 2);
		if (grown == NULL) {
			free(buf);
			errno = ENOMEM;
			return NULL;
		}
		buf = grown;
		cap *= 2;
	}
	*len = n;
	return buf;
}

struct cfg *
cfg_load_file(const char *path, struct cfg_errors *errs)
{
	char what[256];
	struct stat st;
	struct cfg *c;
	size_t len = 0;
	char *buf;
	FILE *f;

	if (path == NULL) {
		plain_error("<none>", "no file given", errs);
		return NULL;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(what, sizeof(what), "cannot open: %s", strerror(errno));
		plain_error(path, what, errs);
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		plain_error(path, "cannot read: is a directory", errs);
		return NULL;
	}
	errno = 0;
	buf = read_all(f, &len);
	fclose(f);
	if (buf == NULL) {
		snprintf(what, sizeof(what), "cannot read: %s", strerror(errno ? errno : EIO));
		plain_error(path, what, errs);
		return NULL;
	}
	c = cfg_load_buffer(buf, len, path, errs);
	free(buf);
	return c;
}
