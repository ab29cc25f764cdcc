/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 <-> IPv6 translation in stage 4: a connection between IPv4 vips on
 * IPv6 hosts (or IPv6 vips on IPv4 hosts) carries its frames over the
 * fabric in the hosts' version.  The template (ovl_rewrite with
 * xlate_from) holds the new addresses; the frame's IP header is replaced by
 * one of the template's version, 20 bytes longer or shorter.  The ICRC,
 * whose masked IP pseudo-header differs between the versions, follows from
 * the old one (roce_icrc_ip_swap(), plus the usual difference of the fields
 * renamed after the IP header): exact for a good frame, still wrong for a
 * corrupted one, and independent of the payload's length.
 *
 * What carries over: the DSCP and ECN bits (the IPv4 TOS byte and the IPv6
 * traffic class have the same layout, so a CE mark reaches the other side,
 * and the DCQCN NP before it has read it from the fabric's header), the TTL
 * as the hop limit and back, the UDP header (its length is the IP payload
 * in both versions).  Toward IPv6 the flow label is the connection's own,
 * from both physical QPNs (ovl_rewrite.flow_label); toward IPv4 the
 * identification is 0 with DF set, as RoCEv2 senders (rxe) send.  A UDP
 * checksum of zero stays zero, in IPv6 too: RoCEv2 relies on the ICRC and
 * RNICs and rxe (rxe_net.c prepare_udp_hdr) send zero in both versions; a
 * non-zero one is computed again over the new pseudo-header.
 */
#include <rte_ip.h>

#include "dp_decide.h"
#include "dp_xlate.h"
#include "dp_rewrite.h"

#define IPV4_HL 20u
#define IPV6_HL 40u

/* Write an IPv4 header at @ip for a UDP datagram of @udp_len bytes. */
static void
ipv4_write(uint8_t *ip, const struct ovl_rewrite *rw, uint8_t tos, uint8_t ttl, uint16_t udp_len)
{
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

	h->version_ihl = 0x45;
	h->type_of_service = tos;
	h->total_length = rte_cpu_to_be_16((uint16_t)(IPV4_HL + udp_len));
	h->packet_id = 0;
	h->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	h->time_to_live = ttl;
	h->next_proto_id = IPPROTO_UDP;
	h->hdr_checksum = 0;
	memcpy(&h->src_addr, rw->src_ip, 4);
	memcpy(&h->dst_addr, rw->dst_ip, 4);
	h->hdr_checksum = rte_ipv4_cksum(h);
}

/* Write an IPv6 header at @ip for a UDP datagram of @udp_len bytes. */
static void
ipv6_write(uint8_t *ip, const struct ovl_rewrite *rw, uint8_t tc, uint8_t hlim, uint16_t udp_len)
{
	ip[0] = (uint8_t)(0x60 | tc >> 4);
	ip[1] = (uint8_t)((tc & 0x0f) << 4 | ((rw->flow_label >> 16) & 0x0f));
	ip[2] = (uint8_t)(rw->flow_label >> 8);
	ip[3] = (uint8_t)rw->flow_label;
	ip[4] = (uint8_t)(udp_len >> 8);
	ip[5] = (uint8_t)udp_len;
	ip[6] = IPPROTO_UDP;
	ip[7] = hlim;
	memcpy(ip + 8, rw->src_ip, 16);
	memcpy(ip + 24, rw->dst_ip, 16);
}

/* The CRC of a header's per-packet bytes [off, off + n) against zeros, carried to the header's end @hl. */
static inline uint32_t
var_crc(const uint8_t *h, unsigned off, unsigned n, unsigned hl)
{
	return roce_crc32_shift(roce_crc32_update(0, h + off, n), hl - off - n);
}

/*
 * The ICRC with the new IP header: the template's difference of the two
 * headers' CRC registers (ovl_rewrite.xlate_crc, every per-packet field
 * zero) plus the per-packet fields of both (the lengths; the tenant's IPv4
 * identification and flags), carried over the rest of the frame.  An IPv4
 * header with options takes the whole roce_icrc_ip_swap().
 */
static uint32_t
icrc_swap(const struct ovl_rewrite *rw, uint32_t icrc, const uint8_t *old_ip, unsigned old_hl, uint8_t old_ver,
	  const uint8_t *new_ip, unsigned new_hl, uint32_t rest)
{
	uint32_t d;

	if (unlikely(old_hl != (old_ver == 6 ? IPV6_HL : IPV4_HL)))
		return roce_icrc_ip_swap(icrc, old_ip, old_hl, old_ver, new_ip, new_hl, rw->ip_ver, rest);
	d = rw->xlate_crc;
	d ^= old_ver == 6 ? var_crc(old_ip, 4, 2, IPV6_HL) : var_crc(old_ip, 2, 6, IPV4_HL);
	d ^= rw->ip_ver == 6 ? var_crc(new_ip, 4, 2, IPV6_HL) : var_crc(new_ip, 2, 2, IPV4_HL);
	return icrc ^ roce_crc32_shift(d, rest);
}

bool
dp_xlate_frame(struct dp_pkt *p, const struct ovl_rewrite *rw, uint64_t *mr_translated)
{
	struct roce_pkt *pkt = &p->pkt;
	struct roce_icrc_delta d;
	uint8_t *data = p->data, *l3 = data + pkt->l3_off, *udp = data + pkt->l4_off;
	uint8_t *bq = (uint8_t *)roce_pkt_bth(pkt, data) + 5, old[3], old_ip[60];
	unsigned old_hl = (unsigned)(pkt->l4_off - pkt->l3_off);
	unsigned new_hl = rw->ip_ver == 6 ? IPV6_HL : IPV4_HL;
	uint16_t l2 = pkt->l3_off, udp_len = (uint16_t)(udp[4] << 8 | udp[5]);
	uint32_t rest = pkt->icrc_off - pkt->l4_off, icrc = roce_icrc_get(data, pkt), len, min;
	uint8_t tos, ttl, old_ver = pkt->ip_ver;
	int grow = (int)new_hl - (int)old_hl;

	/* The fields that stay where they are, by the ICRC difference: DestQP, memory keys, ECMP port. */
	roce_icrc_delta_init(&d);
	memcpy(old, bq, 3);
	roce_bth_set_dqpn((struct roce_bth *)(bq - 5), rw->dqpn);
	roce_icrc_delta_add(&d, pkt->bth_off + 5, old, bq, 3);
	if (unlikely(p->xl))
		*mr_translated += dp_xl_apply(p, &d);
	if (rw->udp_sport) {
		memcpy(old, udp, 2);
		udp[0] = (uint8_t)(rw->udp_sport >> 8);
		udp[1] = (uint8_t)rw->udp_sport;
		roce_icrc_delta_add(&d, pkt->l4_off, old, udp, 2);
	}
	icrc = roce_icrc_delta_apply(&d, icrc, pkt->icrc_off);

	if (old_ver == 4) {
		tos = l3[1];
		ttl = l3[8];
	} else {
		tos = (uint8_t)((l3[0] & 0x0f) << 4 | l3[1] >> 4);
		ttl = l3[7];
	}
	memcpy(old_ip, l3, old_hl);
	/* The L2 header moves by the headers' difference; the UDP datagram stays where it is. */
	data = dp_frame_resize_at(p->m, data, l2, grow);
	if (data == NULL)
		return false;
	if (rw->ip_ver == 6)
		ipv6_write(data + l2, rw, tos, ttl, udp_len);
	else
		ipv4_write(data + l2, rw, tos, ttl, udp_len);
	/* The EtherType before the IP header (after any tags). */
	data[l2 - 2] = rw->ip_ver == 6 ? 0x86 : 0x08;
	data[l2 - 1] = rw->ip_ver == 6 ? 0xdd : 0x00;
	memcpy(data, rw->eth, 12);
	icrc = icrc_swap(rw, icrc, old_ip, old_hl, old_ver, data + l2, new_hl, rest);

	p->data = data;
	pkt->ip_ver = rw->ip_ver;
	roce_pkt_shift(pkt, pkt->l3_off, grow);

	/* Ethernet padding: what the new length needs, zeros. */
	len = pkt->frame_len + pkt->l2_pad;
	min = pkt->frame_len < ROCE_ETH_MIN_LEN ? ROCE_ETH_MIN_LEN : pkt->frame_len;
	if (len > min) {
		rte_pktmbuf_trim(p->m, (uint16_t)(len - min));
	} else if (len < min) {
		uint8_t *pad = (uint8_t *)rte_pktmbuf_append(p->m, (uint16_t)(min - len));

		if (pad == NULL)
			return false;
		memset(pad, 0, min - len);
	}
	pkt->l2_pad = min - pkt->frame_len;

	roce_icrc_put(data, pkt->icrc_off, icrc);
	if (unlikely(data[pkt->l4_off + 6] | data[pkt->l4_off + 7]))
		dp_udp_csum_fix(data, pkt);
	return true;
}
