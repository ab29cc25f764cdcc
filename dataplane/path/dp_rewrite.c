/* SPDX-License-Identifier: BSD-3-Clause */
/* The rare rewrites: a UDP checksum that the sender set. */
#include "dp_rewrite.h"

/*
 * A non-zero UDP checksum is recomputed in full after every other change.
 * RoCEv2 senders leave it zero, so this is off the common path.
 */
void
dp_udp_csum_fix(uint8_t *data, const struct roce_pkt *pkt)
{
	uint8_t *udp = data + pkt->l4_off;
	uint32_t ulen = pkt->frame_len - pkt->l4_off, sum;
	unsigned alen = ip_addr_len(pkt);
	uint16_t v;

	if (udp[6] == 0 && udp[7] == 0)
		return;
	udp[6] = udp[7] = 0;
	sum = roce_csum_partial(ip_src(data, pkt), 2 * alen, 0);
	sum += 17 + ulen;
	sum = roce_csum_partial(udp, ulen, sum);
	v = (uint16_t)~roce_csum_fold(sum);
	if (v == 0)
		v = 0xffff;
	udp[6] = (uint8_t)(v >> 8);
	udp[7] = (uint8_t)v;
}
