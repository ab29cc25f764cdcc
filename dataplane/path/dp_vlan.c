/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tags pushed, popped and rewritten in place (dp_vlan.h).
 */
#include <rte_mbuf.h>

#include "dp_vlan.h"

bool
dp_vlan_retag(struct dp_pkt *p, const struct ovl_vlan *v)
{
	struct roce_pkt *pkt = &p->pkt;
	struct rte_mbuf *m = p->m;
	uint8_t *d = p->data, n_out;
	uint16_t tci[2];
	int delta;

	ovl_vlan_tags(v, pkt->n_vlan, pkt->vlan_tci, ovl_ip_dscp(d + pkt->l3_off, pkt->ip_ver), &n_out, tci);
	delta = 4 * ((int)n_out - (int)pkt->n_vlan);
	/*
	 * The EtherType and everything after it stay where they are: the
	 * frame's start moves by the tags' difference, and the MACs with it.
	 */
	d = dp_frame_resize_at(m, d, 12, delta);
	if (unlikely(d == NULL))
		return false;
	for (unsigned i = 0; i < n_out; i++) {
		uint8_t *tag = d + 12 + 4 * i;
		uint16_t tpid = n_out == 2 && i == 0 ? ROCE_ETHERTYPE_QINQ : ROCE_ETHERTYPE_VLAN;

		tag[0] = (uint8_t)(tpid >> 8);
		tag[1] = (uint8_t)tpid;
		tag[2] = (uint8_t)(tci[i] >> 8);
		tag[3] = (uint8_t)tci[i];
		pkt->vlan_tpid[i] = tpid;
		pkt->vlan_tci[i] = tci[i];
	}
	pkt->n_vlan = n_out;
	roce_pkt_shift(pkt, 12, delta);
	p->data = d;
	/* A frame a popped tag left shorter than Ethernet's minimum is padded with zeros. */
	if (m->data_len < ROCE_ETH_MIN_LEN) {
		uint16_t add = (uint16_t)(ROCE_ETH_MIN_LEN - m->data_len);
		uint8_t *pad = (uint8_t *)rte_pktmbuf_append(m, add);

		if (unlikely(pad == NULL))
			return false;
		memset(pad, 0, add);
		pkt->l2_pad += add;
	}
	return true;
}
