/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Record parsers of QPs and memory regions (see cfg_rec.h).
 */
#include <assert.h>
#include <inttypes.h>

#include "cfg_rec.h"

/* CFG_F_ENUM stores an int; every enum it stores into must be int-sized. */
static_assert(sizeof(enum cfg_qp_type) == sizeof(int), "enum size");

/* Bit i stands for access_names[i]: CFG_ACC_REMOTE_READ, _WRITE, _ATOMIC, CFG_ACC_FLUSH. */
static const char *const access_names[] = {
	"remote_read", "remote_write", "remote_atomic", "flush", NULL
};

/* "peer" of a QP: its offsets are into struct cfg_qp itself. */
static const struct cfg_field peer_fields[] = {
	CFG_FIELD(struct cfg_qp, "vip", CFG_F_IP, CFG_REQUIRED, peer_vip),
	/* Absent in a half (cfg_qp_half()): see cfg_qp_type_check() and cfg_half_check(). */
	CFG_FIELD(struct cfg_qp, "vqpn", CFG_F_QPN, CFG_OPTIONAL, peer_vqpn,
		  CFG_HAS(struct cfg_qp, has_peer_vqpn)),
};

static const struct cfg_field qp_fields[] = {
	[CFG_Q_TENANT] = CFG_FIELD(struct cfg_qp, "tenant", CFG_F_REF, CFG_REQUIRED, tenant,
				   .ref = &cfg_ref_tenant),
	[CFG_Q_VIP] = CFG_FIELD(struct cfg_qp, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	/* 1, the GSI QP, for a UD record only: cfg_qp_type_check(). */
	[CFG_Q_VQPN] = CFG_FIELD(struct cfg_qp, "vqpn", CFG_F_QPN, CFG_REQUIRED, vqpn, .min = ROCE_QPN_GSI_CFG),
	[CFG_Q_PQPN] = CFG_FIELD(struct cfg_qp, "pqpn", CFG_F_QPN, CFG_REQUIRED, pqpn),
	[CFG_Q_TYPE] = CFG_FIELD(struct cfg_qp, "type", CFG_F_ENUM, CFG_REQUIRED, type,
				 .names = cfg_qp_type_names),
	/* Required or forbidden by type: see cfg_qp_type_check(). */
	[CFG_Q_PEER] = { .key = "peer", .kind = CFG_F_OBJECT, .off = 0,
			 CFG_HAS(struct cfg_qp, has_peer), CFG_SUB(peer_fields) },
	[CFG_Q_RATE] = CFG_FIELD(struct cfg_qp, "rate", CFG_F_OBJECT, CFG_OPTIONAL, rate,
				 CFG_HAS(struct cfg_qp, rate.set), CFG_SUB(cfg_rate_fields)),
};

static const struct cfg_field mr_fields[] = {
	[CFG_M_TENANT] = CFG_FIELD(struct cfg_mr, "tenant", CFG_F_REF, CFG_REQUIRED, tenant,
				   .ref = &cfg_ref_tenant),
	[CFG_M_VIP] = CFG_FIELD(struct cfg_mr, "vip", CFG_F_IP, CFG_REQUIRED, vip),
	[CFG_M_RKEY] = CFG_FIELD(struct cfg_mr, "rkey", CFG_F_UINT, CFG_REQUIRED, rkey),
	[CFG_M_ADDR] = CFG_FIELD(struct cfg_mr, "addr", CFG_F_UINT, CFG_REQUIRED, addr),
	[CFG_M_LENGTH] = CFG_FIELD(struct cfg_mr, "length", CFG_F_UINT, CFG_REQUIRED, length,
				   .min = 1),
	[CFG_M_TARGET_RKEY] = CFG_FIELD(struct cfg_mr, "target_rkey", CFG_F_UINT, CFG_REQUIRED,
					target_rkey),
	[CFG_M_TARGET_ADDR] = CFG_FIELD(struct cfg_mr, "target_addr", CFG_F_UINT, CFG_REQUIRED,
					target_addr),
	[CFG_M_ACCESS] = CFG_FIELD(struct cfg_mr, "access", CFG_F_FLAGS, CFG_REQUIRED, access,
				   .names = access_names),
};

/* Per-record masks of valid fields are kept in 32 bits; bit 31 is CFG_QP_KEY_OK. */
static_assert(CFG_DIM(qp_fields) < 31, "mask width");

void
cfg_qps_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;

	cfg_records_alloc(ld, v, p, sizeof(*c->qps), (void **)&c->qps, &c->n_qps);
	ld->qp_ok = cfg_ld_masks_alloc(ld, c->n_qps);
}

bool
cfg_qp_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p, uint32_t i,
	     struct cfg_rec *r)
{
	struct cfg_qp *q = &ld->c->qps[i];

	q->tenant = -1;
	q->peer = -1;
	q->endpoint = -1;
	if (!cfg_rec_begin(ld, v, i, p, r))
		return false;
	r->ok = cfg_obj_parse(&ld->dg, r->obj, &r->path, qp_fields, CFG_DIM(qp_fields), q,
			      &r->present);
	return true;
}

/*
 * True if the QP of @r is a half (cfg_qp_half()) of a tenant that learns.
 * A half of any other tenant lacks its "peer.vqpn", which the checks
 * between records report (cfg_half_check()), whatever its type.
 */
static bool
half_learned(const struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_qp *q = &ld->c->qps[r->i];

	return (r->ok & CFG_BIT(CFG_Q_PEER)) && (r->ok & CFG_BIT(CFG_Q_TENANT)) && cfg_qp_half(q) &&
	       ld->c->tenants[q->tenant].qp_learning;
}

void
cfg_qp_type_check(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_qp *q = &ld->c->qps[r->i];

	if (!(r->ok & CFG_BIT(CFG_Q_TYPE)))
		return;
	if ((r->ok & CFG_BIT(CFG_Q_VQPN)) && q->vqpn == ROCE_QPN_GSI_CFG && q->type != CFG_QP_UD)
		CFG_REC_ERR(ld, &r->path, "vqpn", "QPN 1 is reserved (QPNs 0 and 1 are special; 1, the GSI QP, "
			    "only on a ud QP)");
	else if (q->type != CFG_QP_UD && !(r->present & CFG_BIT(CFG_Q_PEER)))
		CFG_REC_ERR(ld, &r->path, "peer", "missing required key (%s QPs need a peer)",
			    cfg_qp_type_names[q->type]);
	else if (q->type == CFG_QP_UD && (r->present & CFG_BIT(CFG_Q_PEER)))
		CFG_REC_ERR(ld, &r->path, "peer", "not allowed on ud QPs");
	else if (half_learned(ld, r) && q->type != CFG_QP_RC && q->type != CFG_QP_UC)
		CFG_REC_ERR(ld, &r->path, "type", "a half (a peer without \"vqpn\") is rc or uc, not %s",
			    cfg_qp_type_names[q->type]);
}

bool
cfg_mr_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p, uint32_t i,
	     struct cfg_rec *r)
{
	struct cfg_mr *m = &ld->c->mrs[i];

	m->tenant = -1;
	m->endpoint = -1;
	if (!cfg_rec_begin(ld, v, i, p, r))
		return false;
	r->ok = cfg_obj_parse(&ld->dg, r->obj, &r->path, mr_fields, CFG_DIM(mr_fields), m,
			      &r->present);
	return true;
}

void
cfg_mr_window_check(struct cfg_ld *ld, const struct cfg_rec *r)
{
	const struct cfg_mr *m = &ld->c->mrs[r->i];
	uint64_t ok = r->ok;

	/* The overlay computes addr + length: it must not wrap around 2^64. */
	if ((ok & CFG_BIT(CFG_M_LENGTH)) && (ok & CFG_BIT(CFG_M_ADDR)) &&
	    m->length > UINT64_MAX - m->addr)
		CFG_REC_ERR(ld, &r->path, "addr",
			    "0x%" PRIx64 " + length 0x%" PRIx64 " overflows 64 bits",
			    m->addr, m->length);
	if ((ok & CFG_BIT(CFG_M_LENGTH)) && (ok & CFG_BIT(CFG_M_TARGET_ADDR)) &&
	    m->length > UINT64_MAX - m->target_addr)
		CFG_REC_ERR(ld, &r->path, "target_addr",
			    "0x%" PRIx64 " + length 0x%" PRIx64 " overflows 64 bits",
			    m->target_addr, m->length);
}
