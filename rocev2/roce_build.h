/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame builders: whole RoCEv2 frames from a description, with correct
 * lengths, IPv4 header checksum, pad and ICRC.  Used for CNPs and NAKs in the
 * switch and for test and traffic generators.  Also the Internet checksum
 * helpers the rewrite path uses.
 */
#ifndef ROCE_BUILD_H
#define ROCE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "roce_hdr.h"

struct roce_frame_spec {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t n_vlan;          /* 0, 1 or 2 tags (outer tag 0x88a8 when two) */
	uint16_t vlan_tci[2];    /* outer first */
	uint8_t ip_ver;          /* 4 or 6 */
	uint8_t src_ip[16];      /* IPv4 in the first 4 bytes */
	uint8_t dst_ip[16];
	uint8_t dscp;            /* 6 bits; higher bits are ignored */
	uint8_t ecn;
	uint8_t ttl;             /* or hop limit */
	uint16_t ip_id;
	uint32_t flow_label;
	uint16_t udp_sport;
	uint16_t udp_dport;      /* 0 means ROCE_UDP_PORT */
	/* BTH */
	uint8_t opcode;
	uint8_t se, mig, fecn, becn, ackreq;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	/*
	 * Pad the frame with zero bytes up to this length, as Ethernet does:
	 * ROCE_ETH_MIN_LEN (60) for a port that sends frames as built, or
	 * 60 + 4 per tag a device removes after the switch sends (so that the
	 * frame is still 60 bytes when it arrives).  The padding is after the
	 * ICRC and outside every length.  0: no padding.
	 */
	uint16_t min_frame_len;
};

/*
 * Build a frame into @buf: Ethernet, VLAN tags, IP, UDP, BTH, the @ext_len
 * bytes of extension headers at @ext (the caller lays them out in the order
 * the opcode needs), @payload_len bytes of payload (zeros if @payload is
 * NULL), the pad to a multiple of four, the ICRC, and zero bytes up to
 * @spec->min_frame_len.  Returns the frame length (padding included), or 0
 * if it does not fit in @cap.
 */
size_t roce_build_frame(uint8_t *buf, size_t cap, const struct roce_frame_spec *spec,
			const void *ext, uint32_t ext_len, const void *payload, uint32_t payload_len);

/*
 * Build a CNP (Annex A17.9.3): BTH opcode 0x81, BECN set, P_Key 0xFFFF,
 * DestQP @dqpn, 16 zero bytes, ICRC.  Addresses, VLAN, TTL and UDP source
 * port come from @spec; @dscp sets the IP DSCP and @prio the 802.1p priority
 * of the outer VLAN tag when @spec has one.  ECN is left Not-ECT.
 */
size_t roce_build_cnp(uint8_t *buf, size_t cap, const struct roce_frame_spec *spec, uint32_t dqpn,
		      uint8_t dscp, uint8_t prio);

/*
 * Pad a frame of @len bytes in @buf with zeros up to @min_len (when it is
 * shorter), as a port must before it sends a frame that a rewrite shortened
 * (a VLAN tag removed).  Returns the new length, or 0 if @cap is too small.
 * The padding lies outside the IP length, so no checksum or ICRC changes.
 */
static inline size_t
roce_frame_pad(uint8_t *buf, size_t len, size_t cap, size_t min_len)
{
	if (len >= min_len)
		return len;
	if (min_len > cap)
		return 0;
	for (size_t i = len; i < min_len; i++)
		buf[i] = 0;
	return min_len;
}

/* One's-complement sum helpers (RFC 1071, RFC 1624). */
static inline uint32_t
roce_csum_partial(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static inline uint16_t
roce_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* IPv4 header checksum over @ihl_bytes at @ip, host order. */
static inline uint16_t
roce_ipv4_csum(const uint8_t *ip, size_t ihl_bytes)
{
	uint32_t sum = roce_csum_partial(ip, 10, 0);

	sum = roce_csum_partial(ip + 12, ihl_bytes - 12, sum);
	return (uint16_t)~roce_csum_fold(sum);
}

/*
 * RFC 1624 eqn. 3: new checksum HC' = ~(~HC + ~m + m') where @diff is the
 * folded sum of ~m + m' over every changed 16-bit word (precomputable).
 */
static inline uint16_t
roce_csum_adjust(uint16_t csum_host, uint32_t diff)
{
	return (uint16_t)~roce_csum_fold((uint32_t)(uint16_t)~csum_host + diff);
}

/* The @diff for roce_csum_adjust() of @len bytes (even) changing old -> new. */
static inline uint32_t
roce_csum_diff(const void *old, const void *new_bytes, size_t len)
{
	const uint8_t *a = old, *b = new_bytes;
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint16_t)~(a[i] << 8 | a[i + 1]) + (uint32_t)(b[i] << 8 | b[i + 1]);
	return roce_csum_fold(sum);
}

#endif /* ROCE_BUILD_H */
