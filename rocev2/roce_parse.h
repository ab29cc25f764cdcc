/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_parse(): one pass over a plain Ethernet frame (no FCS) that finds
 * every RoCEv2 header or names exactly what is wrong with it.
 */
#ifndef ROCE_PARSE_H
#define ROCE_PARSE_H

#include <stddef.h>
#include <stdint.h>

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
	X(BAD_IP_LENGTH, "bad_ip_length", "IP length disagrees with the frame") \
	X(NOT_UDP, "not_udp", "IP protocol or next header is not UDP") \
	X(TRUNC_UDP, "truncated_udp", "frame ends inside the UDP header") \
	X(BAD_UDP_LENGTH, "bad_udp_length", "UDP length disagrees with the IP length") \
	X(NOT_ROCE_PORT, "not_roce_port", "UDP destination port is not the RoCEv2 port") \
	X(TRUNC_BTH, "truncated_bth", "frame ends inside the BTH") \
	X(BAD_TVER, "bad_tver", "BTH transport version is not 0") \
	X(BAD_OPCODE, "bad_opcode", "opcode RoCEv2 does not carry") \
	X(TRUNC_EXT, "truncated_ext", "frame ends inside an extension header") \
	X(BAD_PAYLOAD, "bad_payload", "payload on an opcode without one, or a CNP not 16 bytes") \
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

/* Everything roce_parse() found; offsets are from the start of the frame. */
struct roce_pkt {
	uint32_t frame_len;
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
	uint16_t flags;        /* roce_opcodes[opcode].flags, copied */
};

/*
 * Parse @len bytes at @frame.  @udp_port is the RoCEv2 destination port
 * (ROCE_UDP_PORT unless configured otherwise).  On success fills @pkt and
 * returns ROCE_OK; otherwise returns the first error met, and @pkt holds the
 * offsets found so far.  Reads only inside [frame, frame + len).
 */
enum roce_parse_err roce_parse(const uint8_t *frame, uint32_t len, uint16_t udp_port,
			       struct roce_pkt *pkt);

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
