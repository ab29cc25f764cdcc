/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: roce_parse() on arbitrary bytes, then, for frames that
 * parse, the full ICRC and an incremental update of the renamed fields,
 * which must agree with a full recompute.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rocev2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[65536 + 128];
	struct roce_pkt pkt;
	struct roce_icrc_delta d;
	uint8_t old[16];

	if (size > sizeof(frame))
		return 0;
	memcpy(frame, data, size);
	/* The port comes from the parser's own choice of frames; try both. */
	if (roce_parse(frame, (uint32_t)size, ROCE_UDP_PORT, &pkt) != ROCE_OK &&
	    roce_parse(frame, (uint32_t)size, 0, &pkt) != ROCE_OK)
		return 0;
	if (pkt.payload_off + pkt.payload_len + pkt.pad != pkt.icrc_off || pkt.icrc_off + 4 != size)
		abort();

	uint32_t icrc = roce_icrc_compute(frame, &pkt);
	uint32_t ip_dst = pkt.l3_off + (pkt.ip_ver == 6 ? 24 : 16);
	uint32_t ip_len = pkt.ip_ver == 6 ? 16 : 4;
	struct roce_bth *bth = roce_pkt_bth(&pkt, frame);

	/* Rename the destination IP and DestQP, as the switch does. */
	roce_icrc_delta_init(&d);
	memcpy(old, frame + ip_dst, ip_len);
	for (uint32_t i = 0; i < ip_len; i++)
		frame[ip_dst + i] ^= (uint8_t)(0xa5 + i);
	roce_icrc_delta_add(&d, ip_dst, old, frame + ip_dst, ip_len);
	memcpy(old, frame + pkt.bth_off + 5, 3);
	roce_bth_set_dqpn(bth, roce_bth_dqpn(bth) ^ 0x123456);
	roce_icrc_delta_add(&d, pkt.bth_off + 5, old, frame + pkt.bth_off + 5, 3);

	struct roce_reth *reth = roce_pkt_ext(&pkt, frame, ROCE_EXT_RETH);

	if (reth) {
		uint32_t off = (uint32_t)((uint8_t *)reth - frame);

		memcpy(old, reth, 12);
		roce_reth_set_va(reth, roce_reth_va(reth) + 0x1000);
		reth->rkey ^= 0xffffffffu;
		roce_icrc_delta_add(&d, off, old, reth, 12);
	}
	if (roce_icrc_delta_apply(&d, icrc, pkt.icrc_off) != roce_icrc_compute(frame, &pkt))
		abort();
	return 0;
}
