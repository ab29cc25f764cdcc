/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "roce_parse.h"

static const char *const err_names[ROCE_ERR_MAX] = {
	[ROCE_OK] = "ok",
#define ROCE_X_NAME(e, n, d) [ROCE_ERR_##e] = n,
	ROCE_PARSE_ERRORS(ROCE_X_NAME)
#undef ROCE_X_NAME
};

static const char *const err_descs[ROCE_ERR_MAX] = {
	[ROCE_OK] = "well-formed RoCEv2 frame",
#define ROCE_X_DESC(e, n, d) [ROCE_ERR_##e] = d,
	ROCE_PARSE_ERRORS(ROCE_X_DESC)
#undef ROCE_X_DESC
};

const char *
roce_parse_err_name(enum roce_parse_err e)
{
	return (unsigned)e < ROCE_ERR_MAX ? err_names[e] : "unknown";
}

const char *
roce_parse_err_desc(enum roce_parse_err e)
{
	return (unsigned)e < ROCE_ERR_MAX ? err_descs[e] : "unknown";
}

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

#define IPV4_HDR_MIN 20u
#define IPV6_HDR_LEN 40u
#define UDP_HDR_LEN 8u
#define IPPROTO_UDP_NUM 17u

/*
 * Layers are checked outside in.  Lengths must agree exactly: the IP length
 * covers the rest of the frame (RoCEv2 frames are never short enough to carry
 * Ethernet padding), and the UDP length covers the rest of the IP payload.
 */
enum roce_parse_err
roce_parse(const uint8_t *frame, uint32_t len, uint16_t udp_port, struct roce_pkt *pkt)
{
	uint32_t off = 12, l3_len, l4_len, ip_payload;
	uint16_t etype;

	memset(pkt, 0, sizeof(*pkt));
	pkt->frame_len = len;
	if (len < 14)
		return ROCE_ERR_TRUNC_ETH;
	etype = rd16(frame + off);
	while (etype == ROCE_ETHERTYPE_VLAN || etype == ROCE_ETHERTYPE_QINQ) {
		if (pkt->n_vlan == 2)
			return ROCE_ERR_TOO_MANY_VLANS;
		if (len < off + 6)
			return ROCE_ERR_TRUNC_VLAN;
		pkt->vlan_tpid[pkt->n_vlan] = etype;
		pkt->vlan_tci[pkt->n_vlan] = rd16(frame + off + 2);
		pkt->n_vlan++;
		off += 4;
		etype = rd16(frame + off);
	}
	off += 2;
	pkt->l3_off = (uint16_t)off;

	if (etype == ROCE_ETHERTYPE_IPV4) {
		const uint8_t *ip = frame + off;
		uint32_t ihl;

		pkt->ip_ver = 4;
		if (len < off + IPV4_HDR_MIN)
			return ROCE_ERR_TRUNC_IP;
		if ((ip[0] >> 4) != 4)
			return ROCE_ERR_BAD_IP_VERSION;
		ihl = (ip[0] & 0xfu) * 4u;
		if (ihl < IPV4_HDR_MIN)
			return ROCE_ERR_BAD_IP_IHL;
		if (len < off + ihl)
			return ROCE_ERR_TRUNC_IP;
		if (rd16(ip + 6) & 0x3fffu)
			return ROCE_ERR_IP_FRAGMENT;
		l3_len = rd16(ip + 2);
		if (l3_len != len - off || l3_len < ihl)
			return ROCE_ERR_BAD_IP_LENGTH;
		if (ip[9] != IPPROTO_UDP_NUM)
			return ROCE_ERR_NOT_UDP;
		ip_payload = l3_len - ihl;
		off += ihl;
	} else if (etype == ROCE_ETHERTYPE_IPV6) {
		const uint8_t *ip = frame + off;

		pkt->ip_ver = 6;
		if (len < off + IPV6_HDR_LEN)
			return ROCE_ERR_TRUNC_IP;
		if ((ip[0] >> 4) != 6)
			return ROCE_ERR_BAD_IP_VERSION;
		ip_payload = rd16(ip + 4);
		if (ip_payload != len - off - IPV6_HDR_LEN)
			return ROCE_ERR_BAD_IP_LENGTH;
		/* RoCEv2 puts UDP right after the fixed header. */
		if (ip[6] != IPPROTO_UDP_NUM)
			return ROCE_ERR_NOT_UDP;
		off += IPV6_HDR_LEN;
	} else {
		return ROCE_ERR_NOT_IP;
	}

	pkt->l4_off = (uint16_t)off;
	if (len < off + UDP_HDR_LEN)
		return ROCE_ERR_TRUNC_UDP;
	l4_len = rd16(frame + off + 4);
	if (l4_len != ip_payload)
		return ROCE_ERR_BAD_UDP_LENGTH;
	if (rd16(frame + off + 2) != udp_port)
		return ROCE_ERR_NOT_ROCE_PORT;
	off += UDP_HDR_LEN;

	pkt->bth_off = (uint16_t)off;
	if (len < off + ROCE_BTH_LEN)
		return ROCE_ERR_TRUNC_BTH;

	const struct roce_bth *bth = (const struct roce_bth *)(frame + off);
	const struct roce_opcode_info *op = roce_opcode(bth->opcode);

	pkt->opcode = bth->opcode;
	if (roce_bth_tver(bth) != 0)
		return ROCE_ERR_BAD_TVER;
	if (!(op->flags & ROCE_OPF_VALID))
		return ROCE_ERR_BAD_OPCODE;
	pkt->exts = op->exts;
	pkt->flags = op->flags;
	if (len < off + op->hdr_len)
		return ROCE_ERR_TRUNC_EXT;
	if (len < off + op->hdr_len + ROCE_ICRC_LEN)
		return ROCE_ERR_TRUNC_ICRC;
	off += op->hdr_len;
	pkt->payload_off = off;
	pkt->icrc_off = len - ROCE_ICRC_LEN;

	uint32_t body = len - ROCE_ICRC_LEN - off;

	pkt->pad = (uint8_t)roce_bth_pad(bth);
	if (op->flags & ROCE_OPF_CNP) {
		/* 16 reserved bytes, never padded. */
		if (body != ROCE_CNP_PAD_LEN)
			return ROCE_ERR_BAD_PAYLOAD;
		if (pkt->pad)
			return ROCE_ERR_BAD_PAD;
	} else if (!(op->flags & ROCE_OPF_PAYLOAD) && body != 0) {
		return ROCE_ERR_BAD_PAYLOAD;
	}
	if (pkt->pad > body)
		return ROCE_ERR_BAD_PAD;
	pkt->payload_len = body - pkt->pad;
	return ROCE_OK;
}
