/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VLAN policies (the "vlan" of ports and tenants, struct cfg_vlan) as the
 * per-packet path uses them: which tags a side accepts, and which tags a
 * frame leaves with.  Plain functions of a policy and a frame's parsed tags;
 * the data plane moves the bytes.
 *
 * A side is a port, and on an uplink the tenant's own policy when it has
 * one.  A policy is resolved before use: "vni" becomes "tagged" with the
 * tenant's vni as its VID.
 */
#ifndef OVL_VLAN_H
#define OVL_VLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "rocev2.h"

/* A policy: CFG_VLAN_* mode, CFG_PCP_* rule, and the VID of a tagged side. */
struct ovl_vlan {
	uint8_t mode;             /* enum cfg_vlan_mode */
	uint8_t pcp;              /* enum cfg_vlan_pcp */
	uint16_t vid;             /* CFG_VLAN_TAGGED, or the tenant's vni once resolved */
};

#define OVL_VLAN_VID(tci) ((uint16_t)((tci) & 0x0fffu))

/*
 * Does a side with policy @v accept a frame that arrives with these tags?
 * "keep" accepts any tags; "untagged" no tag, or one priority tag (VID 0,
 * as RNICs send for PFC on an untagged network); "tagged" exactly one
 * 802.1Q (0x8100) tag with its VID.
 */
static inline bool
ovl_vlan_accepts(const struct ovl_vlan *v, const struct roce_pkt *pkt)
{
	switch (v->mode) {
	case CFG_VLAN_UNTAGGED:
		return pkt->n_vlan == 0 || (pkt->n_vlan == 1 && pkt->vlan_tpid[0] == ROCE_ETHERTYPE_VLAN &&
					    OVL_VLAN_VID(pkt->vlan_tci[0]) == 0);
	case CFG_VLAN_TAGGED:
		return pkt->n_vlan == 1 && pkt->vlan_tpid[0] == ROCE_ETHERTYPE_VLAN &&
		       OVL_VLAN_VID(pkt->vlan_tci[0]) == v->vid;
	default:
		return true;
	}
}

/*
 * The tags a frame leaves a side of policy @v with, into @n_out and
 * @tci_out (outer first), from the @n_in tags @tci_in it arrived with (or
 * that the frame it answers arrived with) and its DSCP: "keep" the same;
 * "untagged" none; "tagged" one with the VID, PCP DSCP >> 3 ("dscp") or the
 * PCP of the outer tag it arrived with, 0 when it had none ("keep"), and DEI 0.
 */
static inline void
ovl_vlan_tags(const struct ovl_vlan *v, uint8_t n_in, const uint16_t tci_in[2], uint8_t dscp, uint8_t *n_out,
	      uint16_t tci_out[2])
{
	uint16_t pcp;

	switch (v->mode) {
	case CFG_VLAN_UNTAGGED:
		*n_out = 0;
		tci_out[0] = tci_out[1] = 0;
		return;
	case CFG_VLAN_TAGGED:
		pcp = v->pcp == CFG_PCP_DSCP ? (uint16_t)((dscp & 0x3fu) >> 3) : (n_in ? tci_in[0] >> 13 : 0);
		*n_out = 1;
		tci_out[0] = (uint16_t)(pcp << 13 | v->vid);
		tci_out[1] = 0;
		return;
	default:
		*n_out = n_in;
		tci_out[0] = tci_in[0];
		tci_out[1] = tci_in[1];
	}
}

/* The DSCP of the IP header at @l3 (IPv4 or IPv6, @ver). */
static inline uint8_t
ovl_ip_dscp(const uint8_t *l3, uint8_t ver)
{
	return (uint8_t)((ver == 6 ? (l3[0] << 4 | l3[1] >> 4) : l3[1]) >> 2) & 0x3fu;
}

#endif /* OVL_VLAN_H */
