/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rewriting a frame in place: where its addresses sit, a connection's
 * template applied, the IPv4 and UDP checksums, and the ICRC sealed.  Shared
 * by the stages of the per-packet path.
 */
#ifndef DP_REWRITE_H
#define DP_REWRITE_H

#include <rte_memcpy.h>

#include "dp.h"

/* Where the addresses sit in the IP header. */
static inline unsigned
ip_addr_len(const struct roce_pkt *pkt)
{
	return pkt->ip_ver == 6 ? 16 : 4;
}

static inline uint8_t *
ip_src(uint8_t *data, const struct roce_pkt *pkt)
{
	return data + pkt->l3_off + (pkt->ip_ver == 6 ? 8 : 12);
}

static inline uint8_t *
ip_dst(uint8_t *data, const struct roce_pkt *pkt)
{
	return ip_src(data, pkt) + ip_addr_len(pkt);
}

/* True when the BTH sits where an option-less IP header puts it. */
static inline bool
ip_standard(const struct roce_pkt *pkt)
{
	return (unsigned)(pkt->bth_off - pkt->l3_off) == (pkt->ip_ver == 6 ? 48u : 28u);
}

static inline void
ipv4_csum_adjust(uint8_t *data, const struct roce_pkt *pkt, uint32_t diff)
{
	uint8_t *c = data + pkt->l3_off + 10;
	uint16_t v = roce_csum_adjust((uint16_t)(c[0] << 8 | c[1]), diff);

	c[0] = (uint8_t)(v >> 8);
	c[1] = (uint8_t)v;
}

/*
 * A non-zero UDP checksum is recomputed in full after every other change.
 * RoCEv2 senders leave it zero, so this is off the common path (dp_rewrite.c).
 */
void dp_udp_csum_fix(uint8_t *data, const struct roce_pkt *pkt);

/*
 * The connection's own UDP source port (covered by the ICRC: its change
 * joins @d) and IPv6 flow label (masked out of the ICRC), "ecmp".
 */
static inline void
ecmp_apply(uint8_t *data, const struct roce_pkt *pkt, const struct ovl_rewrite *rw, struct roce_icrc_delta *d)
{
	uint8_t *udp = data + pkt->l4_off, old[2] = { udp[0], udp[1] };

	udp[0] = (uint8_t)(rw->udp_sport >> 8);
	udp[1] = (uint8_t)rw->udp_sport;
	roce_icrc_delta_add(d, pkt->l4_off, old, udp, 2);
	if (pkt->ip_ver == 6) {
		uint8_t *ip = data + pkt->l3_off;

		ip[1] = (uint8_t)((ip[1] & 0xf0) | (rw->flow_label >> 16));
		ip[2] = (uint8_t)(rw->flow_label >> 8);
		ip[3] = (uint8_t)rw->flow_label;
	}
}

/*
 * Apply a connection's rewrite and start the ICRC difference @d with it.
 * The caller has checked that the frame's addresses and DestQP are the ones
 * the template was built from, so the precomputed differences hold.
 */
static inline void
rewrite_apply(uint8_t *data, const struct roce_pkt *pkt, const struct ovl_rewrite *rw,
	      struct roce_icrc_delta *d)
{
	struct roce_bth *bth = (struct roce_bth *)(data + pkt->bth_off);
	unsigned alen = ip_addr_len(pkt);
	uint8_t *src = ip_src(data, pkt);

	/* Fixed-size copies: the compiler turns each into one or two moves. */
	memcpy(data, rw->eth, 12);
	if (!rw->changes_icrc)
		return;
	if (likely(ip_standard(pkt))) {
		if (alen == 4) {
			memcpy(src, rw->src_ip, 4);
			memcpy(src + 4, rw->dst_ip, 4);
		} else {
			memcpy(src, rw->src_ip, 16);
			memcpy(src + 16, rw->dst_ip, 16);
		}
		roce_bth_set_dqpn(bth, rw->dqpn);
		d->acc = rw->icrc_crc0;
		d->end = pkt->bth_off + 8;
	} else {
		/* IPv4 options move the BTH: account for each field on its own. */
		uint8_t old[8];

		memcpy(old, src, 8);
		rte_memcpy(src, rw->src_ip, 4);
		rte_memcpy(src + 4, rw->dst_ip, 4);
		roce_icrc_delta_add(d, (uint32_t)(src - data), old, src, 8);
		memcpy(old, (uint8_t *)bth + 5, 3);
		roce_bth_set_dqpn(bth, rw->dqpn);
		roce_icrc_delta_add(d, pkt->bth_off + 5, old, (uint8_t *)bth + 5, 3);
	}
	if (pkt->ip_ver == 4)
		ipv4_csum_adjust(data, pkt, rw->ip_csum_diff);
	if (unlikely(rw->udp_sport))
		ecmp_apply(data, pkt, rw, d);
}

/* Seal the frame: the new ICRC, and the UDP checksum if the sender set one. */
static inline void
frame_finish(uint8_t *data, const struct roce_pkt *pkt, const struct roce_icrc_delta *d)
{
	if (d->end)
		roce_icrc_put(data, pkt->icrc_off,
			      roce_icrc_delta_apply(d, roce_icrc_get(data, pkt), pkt->icrc_off));
	if (unlikely(data[pkt->l4_off + 6] | data[pkt->l4_off + 7]))
		dp_udp_csum_fix(data, pkt);
}

#endif /* DP_REWRITE_H */
