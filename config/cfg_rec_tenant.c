/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Record parsers of tenants and what belongs to a tenant: its "dcqcn" (and
 * the top-level "dcqcn" that tenants inherit) and its ACL ("acls", with
 * their rules). A tenant's "rate" is parsed by the table it shares with QPs
 * (cfg_rec_common.c). See cfg_rec.h.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cfg_rec.h"
#include "cfg_util.h"

/* CFG_F_ENUM stores an int; every enum it stores into must be int-sized. */
static_assert(sizeof(enum cfg_mr_check) == sizeof(int), "enum size");
static_assert(sizeof(enum cfg_acl_action) == sizeof(int), "enum size");

static const char *const mr_check_names[] = { "off", "enforce", NULL };
const char *const cfg_dcqcn_profile_names[] = { "nvidia", "paper", NULL };
/* "ce_to_tenant", into the bool ce_keep. */
static const char *const ce_names[] = { "clear", "keep", NULL };

static const struct cfg_field tenant_fields[] = {
	[CFG_T_NAME] = CFG_FIELD(struct cfg_tenant, "name", CFG_F_STR, CFG_REQUIRED, name),
	[CFG_T_VNI] = CFG_FIELD(struct cfg_tenant, "vni", CFG_F_UINT, CFG_REQUIRED, vni,
				.max = CFG_VNI_MAX),
	[CFG_T_MAX_QPS] = CFG_FIELD(struct cfg_tenant, "max_qps", CFG_F_UINT, CFG_OPTIONAL,
				    max_qps),
	[CFG_T_RATE] = CFG_FIELD(struct cfg_tenant, "rate", CFG_F_OBJECT, CFG_OPTIONAL, rate,
				 CFG_HAS(struct cfg_tenant, rate.set), CFG_SUB(cfg_rate_fields)),
	[CFG_T_MR_CHECK] = CFG_FIELD(struct cfg_tenant, "mr_check", CFG_F_ENUM, CFG_OPTIONAL,
				     mr_check, .names = mr_check_names),
	/* Walked by load_tenant_dcqcn(). */
	[CFG_T_DCQCN] = { .key = "dcqcn", .kind = CFG_F_OBJECT,
			  CFG_HAS(struct cfg_tenant, dcqcn_override) },
	[CFG_T_QKEY] = CFG_FIELD(struct cfg_tenant, "privileged_qkey", CFG_F_BOOL, CFG_OPTIONAL,
				 privileged_qkey),
	[CFG_T_VLAN] = CFG_FIELD(struct cfg_tenant, "vlan", CFG_F_OBJECT, CFG_OPTIONAL, vlan,
				 CFG_HAS(struct cfg_tenant, vlan.set), CFG_SUB(cfg_vlan_fields)),
	[CFG_T_LEARNING] = CFG_FIELD(struct cfg_tenant, "qp_learning", CFG_F_BOOL, CFG_OPTIONAL, qp_learning),
	[CFG_T_IDLE] = CFG_FIELD(struct cfg_tenant, "qp_idle_s", CFG_F_UINT, CFG_OPTIONAL, qp_idle_s,
				 .min = 1, .max = 86400),
	[CFG_T_GSI_PPS] = CFG_FIELD(struct cfg_tenant, "gsi_pps", CFG_F_UINT, CFG_OPTIONAL, gsi_pps,
				    .max = CFG_MAX_GSI_PPS),
};

/* A tenant's "dcqcn": a profile to start from instead of the top-level parameters. */
struct tenant_dcqcn {
	int profile;            /* index into cfg_dcqcn_profile_names, -1 when absent */
};

static const struct cfg_field tenant_dcqcn_fields[] = {
	CFG_FIELD(struct tenant_dcqcn, "profile", CFG_F_ENUM, CFG_OPTIONAL, profile,
		  .names = cfg_dcqcn_profile_names),
	/* Walked by load_dcqcn_params(). */
	{ .key = "params", .kind = CFG_F_OBJECT },
};

static const struct cfg_field dcqcn_fields[] = {
	CFG_FIELD(struct cfg_dcqcn, "enabled", CFG_F_BOOL, CFG_OPTIONAL, enabled),
	CFG_FIELD(struct cfg_dcqcn, "profile", CFG_F_STR, CFG_OPTIONAL, profile,
		  .names = cfg_dcqcn_profile_names),
	/* dcqcn_profile_build() takes line rates below 2^44 b/s: at most 10 Tb/s. */
	CFG_FIELD(struct cfg_dcqcn, "line_rate_gbps", CFG_F_GBPS, CFG_OPTIONAL, line_rate_bps,
		  .max = UINT64_C(10000000000000)),
	CFG_FIELD(struct cfg_dcqcn, "ce_to_tenant", CFG_F_ENUM, CFG_OPTIONAL, ce_keep,
		  .names = ce_names),
	CFG_FIELD(struct cfg_dcqcn, "cnp_to_tenant", CFG_F_BOOL, CFG_OPTIONAL, cnp_pass),
	/* Walked by load_dcqcn_params(). */
	{ .key = "params", .kind = CFG_F_OBJECT },
};

static const struct cfg_field dcqcn_field =
	CFG_FIELD(struct cfg, "dcqcn", CFG_F_OBJECT, CFG_OPTIONAL, dcqcn, CFG_SUB(dcqcn_fields));

/* "acls": one object per tenant, each with an array of rules. */
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
			      .names = cfg_acl_type_names),
	[R_OPS] = CFG_FIELD(struct cfg_acl_rule, "ops", CFG_F_FLAGS, CFG_OPTIONAL, ops,
			    .names = acl_op_names),
};

static const struct cfg_field acl_fields[] = {
	[CFG_A_TENANT] = CFG_FIELD(struct cfg_acl, "tenant", CFG_F_REF, CFG_REQUIRED, tenant,
				   .ref = &cfg_ref_tenant),
	[CFG_A_DEFAULT] = CFG_FIELD(struct cfg_acl, "default", CFG_F_ENUM, CFG_OPTIONAL, def,
				    .names = acl_action_names),
	/* Walked by load_acl_rules(). */
	[CFG_A_RULES] = { .key = "rules", .kind = CFG_F_ARRAY, .off = 0 },
};

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
		cfg_err(&ld->dg, &kp, "unknown DCQCN parameter");
	else if (rc != 0 && text == NULL)
		cfg_err(&ld->dg, &kp, "expected a number or a string (%s)", unit ? unit : "?");
	else if (rc != 0)
		cfg_err(&ld->dg, &kp, cfg_j_is_str(m) ? "invalid value \"%.64s\" (%s)" :
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
		cfg_err(&ld->dg, at, "kmin %" PRIu32 " is above kmax %" PRIu32, prm->kmin,
			prm->kmax);
	else if ((uint64_t)prm->rpg_min_rate * 1000000 > max_bps)
		cfg_err(&ld->dg, at,
			"rpg_min_rate %" PRIu32 " Mb/s is above the maximum rate, %.15g Mb/s",
			prm->rpg_min_rate, (double)max_bps / 1e6);
	else
		cfg_err(&ld->dg, at, "the DCQCN parameters are inconsistent");
	return false;
}

bool
cfg_dcqcn_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_dcqcn *d = &ld->c->dcqcn;
	bool ok = cfg_value_parse(&ld->dg, &dcqcn_field, v, p, ld->c);

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

	ok = cfg_obj_parse(&ld->dg, o, p, tenant_dcqcn_fields, CFG_DIM(tenant_dcqcn_fields), &td,
			   &present);
	if (td.profile >= 0)
		dcqcn_params_default(&t->dcqcn, cfg_dcqcn_profile_names[td.profile]);
	/* What an invalid top-level "dcqcn" leads to was reported there. */
	load_dcqcn_params(ld, o, p, &t->dcqcn,
			  ok == present && (td.profile >= 0 || !ld->quiet_dcqcn));
}

bool
cfg_tenant_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		 uint32_t i, struct cfg_rec *r)
{
	struct cfg *c = ld->c;
	struct cfg_tenant *t = &c->tenants[i];

	t->max_qps = CFG_DEFAULT_MAX_QPS;
	t->qp_idle_s = CFG_DEFAULT_QP_IDLE_S;
	t->gsi_pps = CFG_DEFAULT_GSI_PPS;
	t->mr_check = CFG_MR_CHECK_OFF;
	t->dcqcn = c->dcqcn.params;
	if (!cfg_rec_begin(ld, v, i, p, r))
		return false;
	r->ok = cfg_obj_parse(&ld->dg, r->obj, &r->path, tenant_fields, CFG_DIM(tenant_fields), t,
			      &r->present);
	if ((r->ok & CFG_BIT(CFG_T_VLAN)) && (r->ok & CFG_BIT(CFG_T_VNI)))
		cfg_vlan_check(ld, &r->path, &t->vlan, (int)i);
	else if (!(r->ok & CFG_BIT(CFG_T_VLAN)))
		t->vlan.set = false;
	return true;
}

void
cfg_tenant_dcqcn_parse(struct cfg_ld *ld, const struct cfg_rec *r)
{
	struct cfg_path kp = { .up = &r->path, .key = "dcqcn" };

	if (r->ok & CFG_BIT(CFG_T_DCQCN))
		load_tenant_dcqcn(ld, cfg_j_get(r->obj, "dcqcn"), &kp, &ld->c->tenants[r->i]);
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
	cfg_records_alloc(ld, v, p, sizeof(*a->rules), (void **)&a->rules, &a->n_rules);
	cfg_ld_htab_init(ld, &seen, a->n_rules);
	for (uint32_t i = 0; i < a->n_rules && !ld->dg.oom; i++) {
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
			cfg_err(&ld->dg, &rp, "expected an object");
			continue;
		}
		ok = cfg_obj_parse(&ld->dg, o, &rp, acl_rule_fields, CFG_DIM(acl_rule_fields), r,
				   &present);
		if (ok != present || !(ok & CFG_BIT(R_ACTION)))
			continue;
		if (r->has_src && r->has_dst && r->src.ip.ver != r->dst.ip.ver) {
			CFG_REC_ERR(ld, &rp, "dst", "%s/%u is IPv%u but src %s/%u is IPv%u: the "
				"rule can never match", cfg_ip_str(&r->dst.ip, dst), r->dst.len,
				r->dst.ip.ver, cfg_ip_str(&r->src.ip, src), r->src.len,
				r->src.ip.ver);
			continue;
		}
		k = acl_rule_key_of(r);
		h = cfg_hash_final(cfg_hash_bytes(CFG_HASH_SEED, &k, sizeof(k)));
		/* The index compares rules of @a, not records of the load: no claim. */
		j = (long)cfg_htab_lookup(&seen, h, acl_rule_match, a, &k);
		if (j >= 0)
			cfg_err(&ld->dg, &rp, "matches exactly what rules[%ld] matches, "
				"which decides first: this rule can never apply", j);
		else if (cfg_htab_add(&seen, h, i) < 0)
			ld->dg.oom = true;
	}
	cfg_htab_free(&seen);
}

bool
cfg_acl_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p, uint32_t i,
	      struct cfg_rec *r)
{
	struct cfg_acl *a = &ld->c->acls[i];

	a->tenant = -1;
	a->def = CFG_ACL_ALLOW;
	if (!cfg_rec_begin(ld, v, i, p, r))
		return false;
	r->ok = cfg_obj_parse(&ld->dg, r->obj, &r->path, acl_fields, CFG_DIM(acl_fields), a,
			      &r->present);
	return true;
}

void
cfg_acl_rules_parse(struct cfg_ld *ld, const struct cfg_rec *r)
{
	struct cfg_path kp = { .up = &r->path, .key = "rules" };

	if (r->ok & CFG_BIT(CFG_A_RULES))
		load_acl_rules(ld, cfg_j_get(r->obj, "rules"), &kp, &ld->c->acls[r->i]);
}
