/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VLAN policies on the per-packet path (overlay/ovl_vlan.h says what they
 * mean): a frame checked against the policy of the side it arrives on, and
 * given the tags of the side it leaves by.  With no policy other than
 * "keep" in the configuration (o->vlan_any false) nothing here touches a
 * frame, and the tags pass unchanged as they always did.
 */
#ifndef DP_VLAN_H
#define DP_VLAN_H

#include <rte_prefetch.h>

#include "dp_path.h"

/* Does @tenant's frame @pkt, arriving on port @port, carry the tags the side's policy accepts? */
static inline bool
dp_vlan_ok(const struct ovl *o, uint32_t tenant, uint16_t port, const struct roce_pkt *pkt)
{
	struct ovl_vlan v;

	if (likely(!o->vlan_any))
		return true;
	v = ovl_vlan_of(o, tenant, port);
	return ovl_vlan_accepts(&v, pkt);
}

/*
 * Stage 1, on a parsed frame: with policies in the configuration, the
 * cache line before the frame, where a pushed tag moves its MACs, is
 * fetched now, some hundred cycles before stage 4 writes it.
 */
static inline void
dp_vlan_prefetch(const struct ovl *o, const struct dp_pkt *p)
{
	if (unlikely(o->vlan_any))
		rte_prefetch0(p->data - 4);
}

/*
 * A frame from the fabric whose connection or UD QP stage 2 found: checked
 * against its tenant's policy on the uplink it came from (vlan_mismatch).
 */
static inline void
dp_vlan_ingress_check(const struct ovl *o, const struct dp_burst *b, struct dp_pkt *p)
{
	uint32_t t;

	if (likely(!o->vlan_any))
		return;
	t = (p->v & OVL_V_QP) ? o->qps[OVL_V_IDX(p->v)].tenant : o->conns[OVL_V_IDX(p->v)].tenant;
	if (!dp_vlan_ok(o, t, b->in_port, &p->pkt)) {
		p->tslot = o->tenants[t].slot;
		p->drop = DP_DROP_VLAN_MISMATCH;
	}
}

/*
 * Give frame @p the tags of @tenant's policy on port @out: push, pop or
 * rewrite them (the 12 MAC bytes move, nothing the ICRC covers changes),
 * @p's offsets follow, and a frame left below 60 bytes is padded.  Returns
 * false only when the mbuf has no room for a tag.
 */
bool dp_vlan_retag(struct dp_pkt *p, const struct ovl_vlan *v);

static inline bool
dp_vlan_out(const struct ovl *o, uint32_t tenant, uint16_t out, struct dp_pkt *p)
{
	struct ovl_vlan v;

	if (likely(!o->vlan_any))
		return true;
	v = ovl_vlan_of(o, tenant, out);
	return v.mode == CFG_VLAN_KEEP || dp_vlan_retag(p, &v);
}

/*
 * The tags of a frame the switch builds for @tenant to send out of @out (a
 * NAK, a CNP), into @s: those of @tenant's policy there, from the @n_in
 * tags @tci_in of the frame it answers (kept under "keep") and @dscp.
 */
static inline void
dp_vlan_spec(const struct ovl *o, uint32_t tenant, uint16_t out, uint8_t n_in, const uint16_t tci_in[2],
	     uint8_t dscp, struct roce_frame_spec *s)
{
	struct ovl_vlan v = ovl_vlan_of(o, tenant, out);

	ovl_vlan_tags(&v, n_in, tci_in, dscp, &s->n_vlan, s->vlan_tci);
}

#endif /* DP_VLAN_H */
