/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_parse(): one pass over a plain Ethernet frame (no FCS) that finds
 * every RoCEv2 header or names exactly what is wrong with it.
 */
#ifndef ROCE_PARSE_H
#define ROCE_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "roce_hdr.h"
#include "roce_opcode.h"

/*
 * Parse errors, declared once.  X(ENUM, "name", "meaning").  The names are a
 * contract: the switch uses them as drop reasons and roce-inspect prints them.
 */
#define ROCE_PARSE_ERRORS(X) \
	X(TRUNC_ETH, "truncated_eth", "frame shorter than an Ethernet header") \
	X(TRUNC_VLAN, "truncated_vlan", "frame ends inside a VLAN tag") \
	X(TOO_MANY_VLANS, "too_many_vlans", "more than two VLAN tags") \
	X(NOT_IP, "not_ip", "EtherType is neither IPv4 nor IPv6") \
	X(TRUNC_IP, "truncated_ip", "frame ends inside the IP header") \
	X(BAD_IP_VERSION, "bad_ip_version", "IP version does not match the EtherType") \
	X(BAD_IP_IHL, "bad_ip_ihl", "IPv4 header length below 5 words") \
	X(IP_FRAGMENT, "ip_fragment", "IPv4 fragment (MF set or offset non-zero)") \
	X(BAD_IP_LENGTH, "bad_ip_length", "IP length beyond the frame or below the IP header") \
	X(NOT_UDP, "not_udp", "IP protocol or next header is not UDP") \
	X(TRUNC_UDP, "truncated_udp", "frame ends inside the UDP header") \
	X(BAD_UDP_LENGTH, "bad_udp_length", "UDP length disagrees with the IP length") \
	X(NOT_ROCE_PORT, "not_roce_port", "UDP destination port is not the RoCEv2 port") \
	X(TRUNC_BTH, "truncated_bth", "frame ends inside the BTH") \
	X(BAD_TVER, "bad_tver", "BTH transport version is not 0") \
	X(BAD_OPCODE, "bad_opcode", "opcode RoCEv2 does not carry") \
	X(TRUNC_EXT, "truncated_ext", "frame ends inside an extension header") \
	X(BAD_PAYLOAD, "bad_payload", \
	  "payload on an opcode without one, or not the size the opcode fixes (CNP 16, ATOMIC WRITE 8)") \
	X(BAD_PAD, "bad_pad", "pad count larger than the payload") \
	X(TRUNC_ICRC, "truncated_icrc", "frame too short for its ICRC")

enum roce_parse_err {
	ROCE_OK = 0,
#define ROCE_X_ENUM(e, n, d) ROCE_ERR_##e,
	ROCE_PARSE_ERRORS(ROCE_X_ENUM)
#undef ROCE_X_ENUM
	ROCE_ERR_MAX
};

/* Name of an error ("ok" for ROCE_OK), and its one-line meaning. */
const char *roce_parse_err_name(enum roce_parse_err e);
const char *roce_parse_err_desc(enum roce_parse_err e);

#define ROCE_ETHERTYPE_IPV4 0x0800
#define ROCE_ETHERTYPE_IPV6 0x86dd
#define ROCE_ETHERTYPE_VLAN 0x8100
#define ROCE_ETHERTYPE_QINQ 0x88a8

/*
 * Everything roce_parse() found; offsets are from the start of the frame.
 *
 * The frame's extent is what the IP header says (IPv4 total length, IPv6
 * payload length), not the length of the buffer: Ethernet pads frames
 * shorter than 60 bytes (a zero-length SEND over untagged IPv4 is 58), and
 * those trailing bytes belong to no header.  @frame_len ends at the ICRC;
 * the @l2_pad bytes after it are padding, covered by no length, checksum
 * or ICRC.  The buffer held frame_len + l2_pad bytes.
 */
struct roce_pkt {
	uint32_t frame_len;    /* Ethernet header to the end of the ICRC, without padding */
	uint16_t l3_off;       /* IP header */
	uint16_t l4_off;       /* UDP header */
	uint16_t bth_off;
	uint32_t payload_off;  /* after the extension headers */
	uint32_t payload_len;  /* excluding pad bytes */
	uint32_t icrc_off;     /* ICRC, the last four bytes of the frame */
	uint16_t vlan_tci[2];  /* outer first */
	uint16_t vlan_tpid[2];
	uint8_t n_vlan;
	uint8_t ip_ver;        /* 4 or 6 */
	uint8_t opcode;
	uint8_t pad;
	uint16_t exts;         /* roce_opcodes[opcode].exts, copied */
	uint32_t flags;        /* roce_opcodes[opcode].flags, copied */
	uint32_t l2_pad;       /* Ethernet padding after the ICRC (0 in most frames) */
};

/*
 * Parse @len bytes at @frame.  @udp_port is the RoCEv2 destination port
 * (ROCE_UDP_PORT unless configured otherwise).  On success fills @pkt and
 * returns ROCE_OK; otherwise returns the first error met, and @pkt holds the
 * offsets found so far.  Reads only inside [frame, frame + len).  Bytes
 * beyond the IP length are Ethernet padding (pkt->l2_pad).  An IP length
 * beyond @len, or below the IP header, is bad_ip_length; everything after
 * the IP header is checked against the IP length, so a UDP length other than
 * the IP payload's is bad_udp_length (padding or not), and a UDP header cut
 * by the IP length truncated_udp.
 */
enum roce_parse_err roce_parse(const uint8_t *frame, uint32_t len, uint16_t udp_port,
			       struct roce_pkt *pkt);

/*
 * The parser itself, inline so that the data plane compiles it into its
 * per-packet loop; roce_parse() is the same code out of line.
 */
static inline uint16_t
roce_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

#define ROCE_IPV4_HDR_MIN 20u
#define ROCE_IPV6_HDR_LEN 40u
#define ROCE_UDP_HDR_LEN 8u
#define ROCE_IPPROTO_UDP 17u

/*
 * The BTH, the extension headers the opcode names, the payload, the pad and
 * the ICRC of a frame whose BTH starts at @off and which ends at @len (the IP
 * length's extent): the part of the parse both entry points share.
 */
static inline enum roce_parse_err
roce_parse_bth(const uint8_t *frame, uint32_t off, uint32_t len, struct roce_pkt *pkt)
{
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
	if (op->body_len) {
		/* A CNP's 16 reserved bytes, an ATOMIC WRITE's word: never padded. */
		if (body != op->body_len)
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

/*
 * Layers are checked outside in.  The IP length sets the frame's extent: it
 * may end before the buffer (Ethernet padding follows) but not after it, and
 * the UDP length must cover exactly the IP payload.  Everything after the IP
 * header is checked against that extent, so the ICRC is the last four bytes
 * before the padding.
 */
static inline enum roce_parse_err
roce_parse_inline(const uint8_t *frame, uint32_t len, uint16_t udp_port, struct roce_pkt *pkt)
{
	uint32_t off = 12, end, l3_len, l4_len, ip_payload;
	uint16_t etype;

	memset(pkt, 0, sizeof(*pkt));
	pkt->frame_len = len;
	if (len < 14)
		return ROCE_ERR_TRUNC_ETH;
	etype = roce_rd16(frame + off);
	while (etype == ROCE_ETHERTYPE_VLAN || etype == ROCE_ETHERTYPE_QINQ) {
		if (pkt->n_vlan == 2)
			return ROCE_ERR_TOO_MANY_VLANS;
		if (len < off + 6)
			return ROCE_ERR_TRUNC_VLAN;
		pkt->vlan_tpid[pkt->n_vlan] = etype;
		pkt->vlan_tci[pkt->n_vlan] = roce_rd16(frame + off + 2);
		pkt->n_vlan++;
		off += 4;
		etype = roce_rd16(frame + off);
	}
	off += 2;
	pkt->l3_off = (uint16_t)off;

	if (etype == ROCE_ETHERTYPE_IPV4) {
		const uint8_t *ip = frame + off;
		uint32_t ihl;

		pkt->ip_ver = 4;
		if (len < off + ROCE_IPV4_HDR_MIN)
			return ROCE_ERR_TRUNC_IP;
		if ((ip[0] >> 4) != 4)
			return ROCE_ERR_BAD_IP_VERSION;
		ihl = (ip[0] & 0xfu) * 4u;
		if (ihl < ROCE_IPV4_HDR_MIN)
			return ROCE_ERR_BAD_IP_IHL;
		if (len < off + ihl)
			return ROCE_ERR_TRUNC_IP;
		if (roce_rd16(ip + 6) & 0x3fffu)
			return ROCE_ERR_IP_FRAGMENT;
		l3_len = roce_rd16(ip + 2);
		if (l3_len > len - off || l3_len < ihl)
			return ROCE_ERR_BAD_IP_LENGTH;
		if (ip[9] != ROCE_IPPROTO_UDP)
			return ROCE_ERR_NOT_UDP;
		ip_payload = l3_len - ihl;
		end = off + l3_len;
		off += ihl;
	} else if (etype == ROCE_ETHERTYPE_IPV6) {
		const uint8_t *ip = frame + off;

		pkt->ip_ver = 6;
		if (len < off + ROCE_IPV6_HDR_LEN)
			return ROCE_ERR_TRUNC_IP;
		if ((ip[0] >> 4) != 6)
			return ROCE_ERR_BAD_IP_VERSION;
		ip_payload = roce_rd16(ip + 4);
		if (ip_payload > len - off - ROCE_IPV6_HDR_LEN)
			return ROCE_ERR_BAD_IP_LENGTH;
		end = off + ROCE_IPV6_HDR_LEN + ip_payload;
		/* RoCEv2 puts UDP right after the fixed header. */
		if (ip[6] != ROCE_IPPROTO_UDP)
			return ROCE_ERR_NOT_UDP;
		off += ROCE_IPV6_HDR_LEN;
	} else {
		return ROCE_ERR_NOT_IP;
	}
	/* From here on the frame ends where IP says; the rest is padding. */
	pkt->frame_len = end;
	pkt->l2_pad = len - end;
	len = end;

	pkt->l4_off = (uint16_t)off;
	/*
	 * As a host's IP layer does: the datagram is trimmed to the IP length
	 * first, and UDP is then checked against what is left.  Bytes past the
	 * IP length never make up for a UDP header or length.
	 */
	if (len < off + ROCE_UDP_HDR_LEN)
		return ROCE_ERR_TRUNC_UDP;
	l4_len = roce_rd16(frame + off + 4);
	if (l4_len != ip_payload)
		return ROCE_ERR_BAD_UDP_LENGTH;
	if (roce_rd16(frame + off + 2) != udp_port)
		return ROCE_ERR_NOT_ROCE_PORT;
	off += ROCE_UDP_HDR_LEN;

	return roce_parse_bth(frame, off, len, pkt);
}

/*
 * The one shape almost every frame has: untagged IPv4 without options or
 * fragmentation, UDP to @udp_port, the IP length inside the buffer.  Those
 * facts are checked in a few loads from fixed offsets, and the BTH onwards
 * by the same code as roce_parse_inline(); any other frame goes to
 * roce_parse(), out of line, so that the fast path stays small enough to
 * inline.  The result (the error and every field of @pkt) is the same as
 * roce_parse_inline()'s for every input, byte for byte: tests/unit and the
 * parse fuzzer compare the two.
 */
static inline enum roce_parse_err
roce_parse_fast(const uint8_t *frame, uint32_t len, uint16_t udp_port, struct roce_pkt *pkt)
{
	const uint8_t *ip = frame + 14;
	uint32_t l3_len, end;

	if (__builtin_expect(len < 14 + ROCE_IPV4_HDR_MIN + ROCE_UDP_HDR_LEN || roce_rd16(frame + 12) !=
			     ROCE_ETHERTYPE_IPV4 || ip[0] != 0x45 || (roce_rd16(ip + 6) & 0x3fffu) ||
			     ip[9] != ROCE_IPPROTO_UDP, 0))
		return roce_parse(frame, len, udp_port, pkt);
	l3_len = roce_rd16(ip + 2);
	if (__builtin_expect(l3_len > len - 14 || l3_len < ROCE_IPV4_HDR_MIN + ROCE_UDP_HDR_LEN ||
			     roce_rd16(ip + 24) != l3_len - ROCE_IPV4_HDR_MIN || roce_rd16(ip + 22) != udp_port, 0))
		return roce_parse(frame, len, udp_port, pkt);
	end = 14 + l3_len;
	/* What roce_parse_inline() has written when it reaches the BTH, padding bytes included. */
	memset(pkt, 0, sizeof(*pkt));
	pkt->frame_len = end;
	pkt->l3_off = 14;
	pkt->l4_off = 14 + ROCE_IPV4_HDR_MIN;
	pkt->ip_ver = 4;
	pkt->l2_pad = len - end;
	return roce_parse_bth(frame, 14 + ROCE_IPV4_HDR_MIN + ROCE_UDP_HDR_LEN, end, pkt);
}

/*
 * The offsets of @pkt once @delta bytes were inserted (or, negative,
 * removed) at offset @at of its frame: every header that starts past @at
 * moves, and the frame's length with them.
 */
static inline void
roce_pkt_shift(struct roce_pkt *pkt, uint32_t at, int delta)
{
	if (pkt->l3_off > at)
		pkt->l3_off = (uint16_t)(pkt->l3_off + delta);
	if (pkt->l4_off > at)
		pkt->l4_off = (uint16_t)(pkt->l4_off + delta);
	pkt->bth_off = (uint16_t)(pkt->bth_off + delta);
	pkt->payload_off = (uint32_t)((int)pkt->payload_off + delta);
	pkt->icrc_off = (uint32_t)((int)pkt->icrc_off + delta);
	pkt->frame_len = (uint32_t)((int)pkt->frame_len + delta);
}

/* Pointer to extension header @ext of a parsed frame, or NULL if absent. */
static inline void *
roce_pkt_ext(const struct roce_pkt *pkt, uint8_t *frame, enum roce_ext ext)
{
	unsigned off = roce_ext_offset(pkt->exts, ext);

	return off ? frame + pkt->bth_off + off : NULL;
}

static inline struct roce_bth *
roce_pkt_bth(const struct roce_pkt *pkt, uint8_t *frame)
{
	return (struct roce_bth *)(frame + pkt->bth_off);
}

#endif /* ROCE_PARSE_H */
