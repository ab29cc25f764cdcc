/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "roce_build.h"
#include "roce_icrc.h"
#include "roce_parse.h"

static inline void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

size_t
roce_build_frame(uint8_t *buf, size_t cap, const struct roce_frame_spec *s, const void *ext,
		 uint32_t ext_len, const void *payload, uint32_t payload_len)
{
	uint32_t pad = (4u - (payload_len & 3u)) & 3u;
	uint32_t l4_payload = ROCE_BTH_LEN + ext_len + payload_len + pad + ROCE_ICRC_LEN;
	uint32_t ip_hlen = s->ip_ver == 6 ? 40 : 20;
	size_t l2 = 14 + 4u * s->n_vlan;
	size_t total = l2 + ip_hlen + 8 + l4_payload;
	size_t padded = total < s->min_frame_len ? s->min_frame_len : total;
	uint8_t *p = buf;
	struct roce_pkt pkt;

	if (padded > cap || total > 0xffff || s->n_vlan > 2)
		return 0;
	memcpy(p, s->dst_mac, 6);
	memcpy(p + 6, s->src_mac, 6);
	p += 12;
	for (unsigned i = 0; i < s->n_vlan; i++) {
		uint16_t tpid = (s->n_vlan == 2 && i == 0) ? ROCE_ETHERTYPE_QINQ : ROCE_ETHERTYPE_VLAN;

		wr16(p, tpid);
		wr16(p + 2, s->vlan_tci[i]);
		p += 4;
	}
	wr16(p, s->ip_ver == 6 ? ROCE_ETHERTYPE_IPV6 : ROCE_ETHERTYPE_IPV4);
	p += 2;

	if (s->ip_ver == 6) {
		uint32_t w0 = 6u << 28 | (uint32_t)(((s->dscp & 0x3fu) << 2) | (s->ecn & 3u)) << 20 |
			      (s->flow_label & 0xfffffu);

		p[0] = (uint8_t)(w0 >> 24);
		p[1] = (uint8_t)(w0 >> 16);
		p[2] = (uint8_t)(w0 >> 8);
		p[3] = (uint8_t)w0;
		wr16(p + 4, (uint16_t)(8 + l4_payload));
		p[6] = 17;
		p[7] = s->ttl;
		memcpy(p + 8, s->src_ip, 16);
		memcpy(p + 24, s->dst_ip, 16);
	} else {
		p[0] = 0x45;
		p[1] = (uint8_t)(((s->dscp & 0x3fu) << 2) | (s->ecn & 3u));
		wr16(p + 2, (uint16_t)(20 + 8 + l4_payload));
		wr16(p + 4, s->ip_id);
		wr16(p + 6, 0x4000); /* DF */
		p[8] = s->ttl;
		p[9] = 17;
		wr16(p + 10, 0);
		memcpy(p + 12, s->src_ip, 4);
		memcpy(p + 16, s->dst_ip, 4);
		wr16(p + 10, roce_ipv4_csum(p, 20));
	}
	p += ip_hlen;

	wr16(p, s->udp_sport);
	wr16(p + 2, s->udp_dport ? s->udp_dport : ROCE_UDP_PORT);
	wr16(p + 4, (uint16_t)(8 + l4_payload));
	wr16(p + 6, 0); /* RoCEv2 senders leave the UDP checksum zero */
	p += 8;

	struct roce_bth *bth = (struct roce_bth *)p;

	memset(bth, 0, sizeof(*bth));
	bth->opcode = s->opcode;
	roce_bth_set_flags(bth, s->se, s->mig, pad, 0);
	bth->pkey = htons(s->pkey);
	roce_bth_set_dqpn(bth, s->dqpn);
	roce_bth_set_fecn_becn(bth, s->fecn, s->becn);
	roce_bth_set_psn(bth, s->psn);
	roce_bth_set_ackreq(bth, s->ackreq);
	p += ROCE_BTH_LEN;

	if (ext_len)
		memcpy(p, ext, ext_len);
	p += ext_len;
	if (payload)
		memcpy(p, payload, payload_len);
	else
		memset(p, 0, payload_len);
	p += payload_len;
	/* The BTH pad, the ICRC's place and the Ethernet padding after it. */
	memset(p, 0, pad + ROCE_ICRC_LEN + (padded - total));

	/* Locate the headers as a receiver would, then seal the frame. */
	if (roce_parse(buf, (uint32_t)padded, s->udp_dport ? s->udp_dport : ROCE_UDP_PORT, &pkt) !=
	    ROCE_OK) {
		/* An opcode/extension mismatch still gets a well-formed ICRC. */
		pkt.l3_off = (uint16_t)l2;
		pkt.l4_off = (uint16_t)(l2 + ip_hlen);
		pkt.bth_off = (uint16_t)(l2 + ip_hlen + 8);
		pkt.icrc_off = (uint32_t)total - ROCE_ICRC_LEN;
		pkt.ip_ver = s->ip_ver == 6 ? 6 : 4;
	}
	roce_icrc_put(buf, pkt.icrc_off, roce_icrc_compute(buf, &pkt));
	return padded;
}

size_t
roce_build_cnp(uint8_t *buf, size_t cap, const struct roce_frame_spec *spec, uint32_t dqpn,
	       uint8_t dscp, uint8_t prio)
{
	static const uint8_t zeros[ROCE_CNP_PAD_LEN];
	struct roce_frame_spec s = *spec;

	s.opcode = 0x81;
	s.becn = 1;
	s.fecn = 0;
	s.se = s.mig = s.ackreq = 0;
	s.pkey = 0xffff;
	s.dqpn = dqpn;
	s.psn = 0;
	s.dscp = dscp & 0x3f;
	s.ecn = 0;
	if (s.n_vlan)
		s.vlan_tci[0] = (uint16_t)((s.vlan_tci[0] & 0x1fffu) | (uint16_t)(prio & 7u) << 13);
	/* The 16 reserved bytes are a fixed part of the CNP, not a payload. */
	return roce_build_frame(buf, cap, &s, zeros, sizeof(zeros), NULL, 0);
}
