/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: roce_parse() on arbitrary bytes, then, for frames that
 * parse, the full ICRC and an incremental update of the renamed fields
 * (addresses, DestQP, RETH, IETH R_Key, XRC SRQ number), which must agree
 * with a full recompute.  Ethernet padding after the ICRC must account for
 * the rest of the buffer and must not matter to the ICRC.  The data plane's
 * parse of the common shape, roce_parse_fast(), must give the same result as
 * the full parser on every input, the struct byte for byte.  Every payload is
 * also read as a CM MAD (roce_cm.h).
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
	for (int k = 0; k < 2; k++) {
		uint16_t port = k ? 0 : ROCE_UDP_PORT;
		struct roce_pkt a, b;

		memset(&a, 0xa5, sizeof(a));
		memset(&b, 0x5a, sizeof(b));
		if (roce_parse(frame, (uint32_t)size, port, &a) != roce_parse_fast(frame, (uint32_t)size, port, &b) ||
		    memcmp(&a, &b, sizeof(a)) != 0)
			abort();
	}
	/* The port comes from the parser's own choice of frames; try both. */
	if (roce_parse(frame, (uint32_t)size, ROCE_UDP_PORT, &pkt) != ROCE_OK &&
	    roce_parse(frame, (uint32_t)size, 0, &pkt) != ROCE_OK)
		return 0;
	if (pkt.payload_off + pkt.payload_len + pkt.pad != pkt.icrc_off ||
	    pkt.icrc_off + 4 != pkt.frame_len || pkt.frame_len + pkt.l2_pad != size)
		abort();
	/* Headers the opcode names lie inside the frame, before its ICRC. */
	for (unsigned i = 0; i < ROCE_EXT_COUNT; i++) {
		unsigned off = roce_ext_offset(pkt.exts, (enum roce_ext)(1u << i));

		if (off && pkt.bth_off + off + ROCE_EXT_LEN(1u << i) > pkt.payload_off)
			abort();
	}

	/* Any payload read as a MAD: the CM reader takes only whole MADs of its own class. */
	struct roce_cm cm;

	if (roce_cm_parse(frame + pkt.payload_off, pkt.payload_len, &cm) == ROCE_CM_OK &&
	    (pkt.payload_len < ROCE_MAD_LEN || cm.mgmt_class != ROCE_MAD_CLASS_CM))
		abort();

	uint32_t icrc = roce_icrc_compute(frame, &pkt);

	/* Whatever the padding holds, the ICRC is the same. */
	for (uint32_t i = 0; i < pkt.l2_pad; i++)
		frame[pkt.frame_len + i] ^= 0xff;
	if (roce_icrc_compute(frame, &pkt) != icrc)
		abort();

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
	struct roce_ieth *ieth = roce_pkt_ext(&pkt, frame, ROCE_EXT_IETH);
	struct roce_xrceth *x = roce_pkt_ext(&pkt, frame, ROCE_EXT_XRCETH);

	if (reth && !roce_pkt_set_reth(&pkt, frame, roce_reth_va(reth) + 0x1000,
				       ~roce_reth_rkey(reth), &d))
		abort();
	if (ieth && !roce_pkt_set_ieth_rkey(&pkt, frame, roce_ieth_rkey(ieth) ^ 0x5a5a5a5au, &d))
		abort();
	if (!ieth && roce_pkt_set_ieth_rkey(&pkt, frame, 1, &d))
		abort();
	if (x) {
		uint32_t off = (uint32_t)((uint8_t *)x - frame);

		memcpy(old, x, 4);
		roce_xrceth_set_srq(x, roce_xrceth_srq(x) + 1);
		roce_icrc_delta_add(&d, off, old, x, 4);
	}
	if (roce_icrc_delta_apply(&d, icrc, pkt.icrc_off) != roce_icrc_compute(frame, &pkt))
		abort();
	return 0;
}
