/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the wire library: the opcode table against IBTA Vol 1
 * table 38, the parser's offsets and errors on frames built here, Ethernet
 * padding, the IETH and FETH accessors, and the incremental ICRC against a
 * full recompute on 100 000 random frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "rocev2.h"

/*
 * IBTA Vol 1 table 38, transcribed independently of rocev2/roce_opcode.c as
 * (opcode, headers after the BTH, payload, class letters).  Class letters:
 * q request, r response, f first, m middle, l last, o only, a ack, c CNP.
 * RD (0x40-0x5f) is absent: RoCEv2 does not carry Reliable Datagram.
 */
static const struct ibta_row {
	uint8_t op;
	const char *hdrs;
	int payload;
	const char *cls;
} ibta[] = {
	{ 0x00, "", 1, "qf" }, { 0x01, "", 1, "qm" }, { 0x02, "", 1, "ql" },
	{ 0x03, "ImmDt", 1, "ql" }, { 0x04, "", 1, "qo" }, { 0x05, "ImmDt", 1, "qo" },
	{ 0x06, "RETH", 1, "qf" }, { 0x07, "", 1, "qm" }, { 0x08, "", 1, "ql" },
	{ 0x09, "ImmDt", 1, "ql" }, { 0x0a, "RETH", 1, "qo" }, { 0x0b, "RETH ImmDt", 1, "qo" },
	{ 0x0c, "RETH", 0, "qo" }, { 0x0d, "AETH", 1, "rf" }, { 0x0e, "", 1, "rm" },
	{ 0x0f, "AETH", 1, "rl" }, { 0x10, "AETH", 1, "ro" }, { 0x11, "AETH", 0, "roa" },
	{ 0x12, "AETH AtomicAckETH", 0, "roa" }, { 0x13, "AtomicETH", 0, "qo" },
	{ 0x14, "AtomicETH", 0, "qo" }, { 0x16, "IETH", 1, "ql" }, { 0x17, "IETH", 1, "qo" },
	/* IBTA Vol 1 release 1.5: FLUSH (FETH before RETH, no payload), ATOMIC WRITE */
	{ 0x1c, "FETH RETH", 0, "qo" }, { 0x1d, "RETH", 1, "qo" },
	/* UC */
	{ 0x20, "", 1, "qf" }, { 0x21, "", 1, "qm" }, { 0x22, "", 1, "ql" },
	{ 0x23, "ImmDt", 1, "ql" }, { 0x24, "", 1, "qo" }, { 0x25, "ImmDt", 1, "qo" },
	{ 0x26, "RETH", 1, "qf" }, { 0x27, "", 1, "qm" }, { 0x28, "", 1, "ql" },
	{ 0x29, "ImmDt", 1, "ql" }, { 0x2a, "RETH", 1, "qo" }, { 0x2b, "RETH ImmDt", 1, "qo" },
	/* UD */
	{ 0x64, "DETH", 1, "qo" }, { 0x65, "DETH ImmDt", 1, "qo" },
	/* CNP, Annex A17.9.3 */
	{ 0x81, "", 0, "c" },
	/* XRC: requests carry XRCETH, responses do not */
	{ 0xa0, "XRCETH", 1, "qf" }, { 0xa1, "XRCETH", 1, "qm" }, { 0xa2, "XRCETH", 1, "ql" },
	{ 0xa3, "XRCETH ImmDt", 1, "ql" }, { 0xa4, "XRCETH", 1, "qo" },
	{ 0xa5, "XRCETH ImmDt", 1, "qo" }, { 0xa6, "XRCETH RETH", 1, "qf" },
	{ 0xa7, "XRCETH", 1, "qm" }, { 0xa8, "XRCETH", 1, "ql" }, { 0xa9, "XRCETH ImmDt", 1, "ql" },
	{ 0xaa, "XRCETH RETH", 1, "qo" }, { 0xab, "XRCETH RETH ImmDt", 1, "qo" },
	{ 0xac, "XRCETH RETH", 0, "qo" }, { 0xad, "AETH", 1, "rf" }, { 0xae, "", 1, "rm" },
	{ 0xaf, "AETH", 1, "rl" }, { 0xb0, "AETH", 1, "ro" }, { 0xb1, "AETH", 0, "roa" },
	{ 0xb2, "AETH AtomicAckETH", 0, "roa" }, { 0xb3, "XRCETH AtomicETH", 0, "qo" },
	{ 0xb4, "XRCETH AtomicETH", 0, "qo" }, { 0xb6, "XRCETH IETH", 1, "ql" },
	{ 0xb7, "XRCETH IETH", 1, "qo" },
};

static const struct {
	const char *name;
	uint16_t ext;
	unsigned len;
} hdr_names[] = {
	{ "RDETH", ROCE_EXT_RDETH, 4 }, { "DETH", ROCE_EXT_DETH, 8 },
	{ "XRCETH", ROCE_EXT_XRCETH, 4 }, { "FETH", ROCE_EXT_FETH, 4 }, { "RETH", ROCE_EXT_RETH, 16 },
	{ "AtomicETH", ROCE_EXT_ATMETH, 28 }, { "AETH", ROCE_EXT_AETH, 4 },
	{ "AtomicAckETH", ROCE_EXT_ATMACK, 8 }, { "ImmDt", ROCE_EXT_IMMDT, 4 },
	{ "IETH", ROCE_EXT_IETH, 4 },
};

static void
test_opcode_table(void)
{
	int seen[256] = { 0 };

	for (size_t i = 0; i < sizeof(ibta) / sizeof(ibta[0]); i++) {
		const struct ibta_row *r = &ibta[i];
		const struct roce_opcode_info *op = roce_opcode(r->op);
		uint16_t want = 0;
		unsigned len = 12, next_off = 12;
		char buf[64], *tok, *save;

		seen[r->op] = 1;
		snprintf(buf, sizeof(buf), "%s", r->hdrs);
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			for (size_t h = 0; h < sizeof(hdr_names) / sizeof(hdr_names[0]); h++) {
				if (strcmp(tok, hdr_names[h].name))
					continue;
				want |= hdr_names[h].ext;
				/* Offsets follow the order written in the spec. */
				CU_ASSERT_EQUAL(roce_ext_offset(op->exts, hdr_names[h].ext), next_off);
				next_off += hdr_names[h].len;
				len += hdr_names[h].len;
			}
		}
		CU_ASSERT_PTR_NOT_NULL(op->name);
		CU_ASSERT_TRUE(op->flags & ROCE_OPF_VALID);
		CU_ASSERT_EQUAL(op->exts, want);
		CU_ASSERT_EQUAL(op->hdr_len, len);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_PAYLOAD), r->payload);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_REQ), strchr(r->cls, 'q') != NULL);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_RESP), strchr(r->cls, 'r') != NULL);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_FIRST), strchr(r->cls, 'f') != NULL);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_MIDDLE), strchr(r->cls, 'm') != NULL);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_LAST), strchr(r->cls, 'l') != NULL);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_ONLY), strchr(r->cls, 'o') != NULL);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_ACK), strchr(r->cls, 'a') != NULL);
		CU_ASSERT_EQUAL(!!(op->flags & ROCE_OPF_CNP), strchr(r->cls, 'c') != NULL);
		if (!(op->flags & ROCE_OPF_VALID) || op->exts != want)
			fprintf(stderr, "opcode 0x%02x (%s) differs from IBTA\n", r->op,
				op->name ? op->name : "?");
	}
	/* Every other code is reserved or not carried by RoCEv2. */
	for (int i = 0; i < 256; i++) {
		if (seen[i])
			continue;
		CU_ASSERT_FALSE(roce_opcodes[i].flags & ROCE_OPF_VALID);
		CU_ASSERT_PTR_NULL(roce_opcodes[i].name);
	}
}

/* A random-but-valid frame of opcode @op; returns its length. */
static size_t
make_frame(uint8_t *buf, size_t cap, uint8_t op, unsigned ip_ver, unsigned n_vlan, uint32_t payload_len,
	   unsigned *seed)
{
	const struct roce_opcode_info *oi = roce_opcode(op);
	struct roce_frame_spec s = { 0 };
	uint8_t ext[64], payload[4096];
	uint32_t ext_len = oi->hdr_len - ROCE_BTH_LEN;

	for (size_t i = 0; i < sizeof(s.src_ip); i++) {
		s.src_ip[i] = (uint8_t)rand_r(seed);
		s.dst_ip[i] = (uint8_t)rand_r(seed);
	}
	for (int i = 0; i < 6; i++) {
		s.src_mac[i] = (uint8_t)rand_r(seed);
		s.dst_mac[i] = (uint8_t)rand_r(seed);
	}
	s.ip_ver = (uint8_t)ip_ver;
	s.n_vlan = (uint8_t)n_vlan;
	s.vlan_tci[0] = (uint16_t)rand_r(seed);
	s.vlan_tci[1] = (uint16_t)rand_r(seed);
	s.dscp = (uint8_t)(rand_r(seed) & 63);
	s.ecn = (uint8_t)(rand_r(seed) & 3);
	s.ttl = (uint8_t)rand_r(seed);
	s.ip_id = (uint16_t)rand_r(seed);
	s.flow_label = (uint32_t)rand_r(seed);
	s.udp_sport = (uint16_t)rand_r(seed);
	s.opcode = op;
	s.pkey = (uint16_t)rand_r(seed);
	s.dqpn = (uint32_t)rand_r(seed) & ROCE_QPN_MASK;
	s.psn = (uint32_t)rand_r(seed) & ROCE_PSN_MASK;
	s.fecn = rand_r(seed) & 1;
	s.becn = rand_r(seed) & 1;
	s.ackreq = rand_r(seed) & 1;
	for (uint32_t i = 0; i < ext_len; i++)
		ext[i] = (uint8_t)rand_r(seed);
	if (oi->flags & ROCE_OPF_CNP) {
		memset(ext, 0, ROCE_CNP_PAD_LEN);
		ext_len = ROCE_CNP_PAD_LEN;
	}
	if (!(oi->flags & ROCE_OPF_PAYLOAD))
		payload_len = 0;
	else if (oi->body_len)
		payload_len = oi->body_len; /* ATOMIC WRITE: one 8-byte word */
	for (uint32_t i = 0; i < payload_len; i++)
		payload[i] = (uint8_t)rand_r(seed);
	return roce_build_frame(buf, cap, &s, ext, ext_len, payload, payload_len);
}

static void
test_parse_offsets(void)
{
	uint8_t buf[4600];
	unsigned seed = 1;

	for (int op = 0; op < 256; op++) {
		const struct roce_opcode_info *oi = roce_opcode((uint8_t)op);

		if (!(oi->flags & ROCE_OPF_VALID))
			continue;
		for (unsigned v = 0; v < 3; v++) {
			unsigned ipv = (v & 1) ? 6 : 4;
			size_t n = make_frame(buf, sizeof(buf), (uint8_t)op, ipv, v, 37, &seed);
			struct roce_pkt p;
			unsigned l3 = 14 + 4 * v, l4 = l3 + (ipv == 6 ? 40 : 20);

			CU_ASSERT_FATAL(n > 0);
			CU_ASSERT_EQUAL(roce_parse(buf, (uint32_t)n, ROCE_UDP_PORT, &p), ROCE_OK);
			CU_ASSERT_EQUAL(p.n_vlan, v);
			CU_ASSERT_EQUAL(p.ip_ver, ipv);
			CU_ASSERT_EQUAL(p.l3_off, l3);
			CU_ASSERT_EQUAL(p.l4_off, l4);
			CU_ASSERT_EQUAL(p.bth_off, l4 + 8);
			CU_ASSERT_EQUAL(p.payload_off, l4 + 8 + oi->hdr_len);
			CU_ASSERT_EQUAL(p.icrc_off, n - 4);
			CU_ASSERT_EQUAL(p.frame_len, n);
			CU_ASSERT_EQUAL(p.l2_pad, 0);
			if ((oi->flags & ROCE_OPF_PAYLOAD) && oi->body_len) {
				CU_ASSERT_EQUAL(p.payload_len, ROCE_ATOMIC_WRITE_LEN);
				CU_ASSERT_EQUAL(p.pad, 0);
			} else if (oi->flags & ROCE_OPF_PAYLOAD) {
				CU_ASSERT_EQUAL(p.payload_len, 37);
				CU_ASSERT_EQUAL(p.pad, 3);
			} else if (oi->flags & ROCE_OPF_CNP) {
				CU_ASSERT_EQUAL(p.payload_len, 16);
			} else {
				CU_ASSERT_EQUAL(p.payload_len, 0);
			}
			CU_ASSERT_TRUE(roce_icrc_verify(buf, &p));
		}
	}
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Each named error, provoked by one targeted change to a valid frame. */
static void
test_parse_errors(void)
{
	uint8_t base[256], f[256];
	unsigned seed = 7;
	struct roce_pkt p;
	size_t n = make_frame(base, sizeof(base), ROCE_OP_RC_WRITE_ONLY, 4, 0, 8, &seed);
	int hit[ROCE_ERR_MAX] = { 0 };

#define EXPECT(err, len) do { \
		enum roce_parse_err e_ = roce_parse(f, (uint32_t)(len), ROCE_UDP_PORT, &p); \
		CU_ASSERT_EQUAL(e_, err); \
		if (e_ != (err)) \
			fprintf(stderr, "line %d: got %s want %s\n", __LINE__, \
				roce_parse_err_name(e_), roce_parse_err_name(err)); \
		hit[err] = 1; \
		memcpy(f, base, n); \
	} while (0)

	memcpy(f, base, n);
	EXPECT(ROCE_OK, n);
	EXPECT(ROCE_ERR_TRUNC_ETH, 13);
	put16(f + 12, 0x8100);
	EXPECT(ROCE_ERR_TRUNC_VLAN, 17);
	put16(f + 12, 0x8100);
	put16(f + 16, 0x8100);
	put16(f + 20, 0x8100);
	EXPECT(ROCE_ERR_TOO_MANY_VLANS, n);
	put16(f + 12, 0x0806);
	EXPECT(ROCE_ERR_NOT_IP, n);
	EXPECT(ROCE_ERR_TRUNC_IP, 30);
	f[14] = 0x65;
	EXPECT(ROCE_ERR_BAD_IP_VERSION, n);
	f[14] = 0x44;
	EXPECT(ROCE_ERR_BAD_IP_IHL, n);
	put16(f + 20, 0x2000); /* MF */
	EXPECT(ROCE_ERR_IP_FRAGMENT, n);
	put16(f + 20, 0x0001); /* offset 8 */
	EXPECT(ROCE_ERR_IP_FRAGMENT, n);
	EXPECT(ROCE_ERR_BAD_IP_LENGTH, n - 1);
	f[23] = 6;
	EXPECT(ROCE_ERR_NOT_UDP, n);
	put16(f + 16, 20 + 4);
	EXPECT(ROCE_ERR_TRUNC_UDP, 14 + 24);
	put16(f + 38, 9);
	EXPECT(ROCE_ERR_BAD_UDP_LENGTH, n);
	put16(f + 36, 4790);
	EXPECT(ROCE_ERR_NOT_ROCE_PORT, n);
	put16(f + 16, 20 + 8 + 10);
	put16(f + 38, 8 + 10);
	EXPECT(ROCE_ERR_TRUNC_BTH, 14 + 20 + 8 + 10);
	f[43] = 0x01; /* TVer 1 */
	EXPECT(ROCE_ERR_BAD_TVER, n);
	f[42] = 0x40; /* RD SEND FIRST */
	EXPECT(ROCE_ERR_BAD_OPCODE, n);
	f[42] = 0x15; /* reserved */
	EXPECT(ROCE_ERR_BAD_OPCODE, n);
	put16(f + 16, 20 + 8 + 12 + 10);
	put16(f + 38, 8 + 12 + 10);
	EXPECT(ROCE_ERR_TRUNC_EXT, 14 + 20 + 8 + 12 + 10);
	put16(f + 16, 20 + 8 + 12 + 16 + 2);
	put16(f + 38, 8 + 12 + 16 + 2);
	EXPECT(ROCE_ERR_TRUNC_ICRC, 14 + 20 + 8 + 12 + 16 + 2);
	f[42] = ROCE_OP_RC_READ_REQ; /* no payload allowed, 8 bytes present */
	EXPECT(ROCE_ERR_BAD_PAYLOAD, n);
	f[42] = ROCE_OP_CNP;
	EXPECT(ROCE_ERR_BAD_PAYLOAD, n);
	f[42] = ROCE_OP_RC_ATOMIC_WRITE; /* RETH then 8 bytes: exactly its word */
	EXPECT(ROCE_OK, n);
	f[42] = ROCE_OP_RC_ATOMIC_WRITE;
	f[43] = 0x10; /* pad 1: 7 bytes, not a word */
	EXPECT(ROCE_ERR_BAD_PAD, n);
	f[42] = ROCE_OP_RC_FLUSH; /* FETH + RETH take 20 of the 24 bytes after the BTH */
	EXPECT(ROCE_ERR_BAD_PAYLOAD, n);
	f[43] = 0x30; /* pad 3 over an 8-byte payload: fine */
	EXPECT(ROCE_OK, n);
	f[42] = ROCE_OP_RC_SEND_ONLY; /* no RETH: 24-byte payload */
	f[43] = 0x30;
	EXPECT(ROCE_OK, n);
	{
		uint8_t small[128];
		size_t m = make_frame(small, sizeof(small), ROCE_OP_RC_SEND_ONLY, 4, 0, 0, &seed);

		memcpy(base, small, m);
		n = m;
		memcpy(f, base, n);
		f[43] = 0x10; /* pad 1, empty payload */
		EXPECT(ROCE_ERR_BAD_PAD, n);
	}
	for (int e = 0; e < ROCE_ERR_MAX; e++) {
		CU_ASSERT_TRUE(hit[e]);
		if (!hit[e])
			fprintf(stderr, "error %s never provoked\n", roce_parse_err_name(e));
	}
#undef EXPECT
}

/*
 * Ethernet padding: a zero-length SEND Only over untagged IPv4 is 58 bytes
 * and arrives padded to 60.  The IP length gives the extent; the padding is
 * reported and left out of the ICRC; lengths beyond the frame still fail.
 */
static void
test_padding(void)
{
	uint8_t f[256], g[256];
	unsigned seed = 11;
	struct roce_pkt p, q;
	struct roce_icrc_delta d;
	size_t n = make_frame(f, sizeof(f), ROCE_OP_RC_SEND_ONLY, 4, 0, 0, &seed);

	CU_ASSERT_EQUAL_FATAL(n, 58);
	/* Padded with zeros, then with junk: both parse with the same ICRC place. */
	for (int junk = 0; junk < 2; junk++) {
		memset(f + 58, junk ? 0xa5 : 0, 6);
		for (uint32_t len = 59; len <= 64; len++) {
			CU_ASSERT_EQUAL(roce_parse(f, len, ROCE_UDP_PORT, &p), ROCE_OK);
			CU_ASSERT_EQUAL(p.frame_len, 58);
			CU_ASSERT_EQUAL(p.l2_pad, len - 58);
			CU_ASSERT_EQUAL(p.icrc_off, 54);
			CU_ASSERT_EQUAL(p.payload_len, 0);
			CU_ASSERT_TRUE(roce_icrc_verify(f, &p));
		}
	}
	/*
	 * An IP length past the frame is truncation.  Everything after the IP
	 * header is checked against the IP length, as a host's IP layer trims
	 * the datagram first: a UDP length that disagrees with it is
	 * bad_udp_length, padding or not, and bytes past it never complete a
	 * UDP header.
	 */
	memcpy(g, f, 60);
	put16(g + 16, 20 + 8 + 12 + 4 + 4);
	CU_ASSERT_EQUAL(roce_parse(g, 60, ROCE_UDP_PORT, &p), ROCE_ERR_BAD_IP_LENGTH);
	CU_ASSERT_EQUAL(roce_parse(g, 63, ROCE_UDP_PORT, &p), ROCE_ERR_BAD_UDP_LENGTH);
	put16(g + 38, 8 + 12 + 4 + 4); /* both lengths now take in 4 more bytes: a payload */
	memset(g + 58, 0xa5, 4);
	CU_ASSERT_EQUAL(roce_parse(g, 62, ROCE_UDP_PORT, &p), ROCE_OK);
	CU_ASSERT_EQUAL(p.l2_pad, 0);
	CU_ASSERT_EQUAL(p.payload_len, 4);
	CU_ASSERT_FALSE(roce_icrc_verify(g, &p));
	memcpy(g, f, 60);
	put16(g + 38, 8 + 12 + 4 + 2); /* UDP says 2 bytes more than IP */
	CU_ASSERT_EQUAL(roce_parse(g, 60, ROCE_UDP_PORT, &p), ROCE_ERR_BAD_UDP_LENGTH);
	CU_ASSERT_EQUAL(roce_parse(g, 58, ROCE_UDP_PORT, &p), ROCE_ERR_BAD_UDP_LENGTH);
	memcpy(g, f, 60);
	put16(g + 16, 20 + 4); /* the IP length cuts the UDP header, bytes follow */
	CU_ASSERT_EQUAL(roce_parse(g, 60, ROCE_UDP_PORT, &p), ROCE_ERR_TRUNC_UDP);
	CU_ASSERT_EQUAL(roce_parse(g, 14 + 24, ROCE_UDP_PORT, &p), ROCE_ERR_TRUNC_UDP);
	memcpy(g, f, 60);
	put16(g + 16, 19); /* below the IPv4 header */
	CU_ASSERT_EQUAL(roce_parse(g, 60, ROCE_UDP_PORT, &p), ROCE_ERR_BAD_IP_LENGTH);

	/* The incremental ICRC of a padded frame ends at the ICRC, not the buffer. */
	memset(f + 58, 0x5a, 2);
	CU_ASSERT_EQUAL_FATAL(roce_parse(f, 60, ROCE_UDP_PORT, &p), ROCE_OK);
	memcpy(g, f, 60);
	roce_icrc_delta_init(&d);
	{
		uint8_t old[3];

		memcpy(old, g + p.bth_off + 5, 3);
		roce_bth_set_dqpn(roce_pkt_bth(&p, g), 0x123456);
		roce_icrc_delta_add(&d, p.bth_off + 5, old, g + p.bth_off + 5, 3);
	}
	roce_icrc_put(g, p.icrc_off, roce_icrc_delta_apply(&d, roce_icrc_get(f, &p), p.icrc_off));
	CU_ASSERT_TRUE(roce_icrc_verify(g, &p));
	CU_ASSERT_EQUAL(g[58], 0x5a); /* the padding is left as it was */

	/* IPv6 and tagged: an ACK is 82 (IPv6) and 66 (one tag) bytes, never padded. */
	n = make_frame(f, sizeof(f), ROCE_OP_RC_ACK, 6, 0, 0, &seed);
	CU_ASSERT_EQUAL(n, 82);
	memset(f + n, 0, 8);
	CU_ASSERT_EQUAL(roce_parse(f, (uint32_t)n + 8, ROCE_UDP_PORT, &p), ROCE_OK);
	CU_ASSERT_EQUAL(p.l2_pad, 8);
	CU_ASSERT_EQUAL(p.icrc_off, n - 4);
	CU_ASSERT_TRUE(roce_icrc_verify(f, &p));
	CU_ASSERT_EQUAL(roce_parse(f, (uint32_t)n - 1, ROCE_UDP_PORT, &p), ROCE_ERR_BAD_IP_LENGTH);

	/* An untagged ACK is 62 bytes; with its tag removed a 66-byte one is 62 too. */
	n = make_frame(f, sizeof(f), ROCE_OP_RC_ACK, 4, 1, 0, &seed);
	CU_ASSERT_EQUAL(n, 66);
	CU_ASSERT_EQUAL(roce_parse(f, (uint32_t)n, ROCE_UDP_PORT, &q), ROCE_OK);
	CU_ASSERT_EQUAL(q.l2_pad, 0);
}

/* roce_build_frame() pads to min_frame_len, and roce_frame_pad() pads in place. */
static void
test_build_padded(void)
{
	struct roce_frame_spec s = { 0 };
	uint8_t f[128];
	struct roce_pkt p;
	size_t n;

	s.ip_ver = 4;
	s.ttl = 64;
	s.opcode = ROCE_OP_RC_SEND_ONLY;
	s.dqpn = 0x12;
	s.min_frame_len = ROCE_ETH_MIN_LEN;
	memset(f, 0xee, sizeof(f));
	n = roce_build_frame(f, sizeof(f), &s, NULL, 0, NULL, 0);
	CU_ASSERT_EQUAL_FATAL(n, 60);
	CU_ASSERT_EQUAL(f[58], 0);
	CU_ASSERT_EQUAL(f[59], 0);
	CU_ASSERT_EQUAL(f[60], 0xee); /* nothing written past the frame */
	CU_ASSERT_EQUAL_FATAL(roce_parse(f, (uint32_t)n, ROCE_UDP_PORT, &p), ROCE_OK);
	CU_ASSERT_EQUAL(p.l2_pad, 2);
	CU_ASSERT_EQUAL(p.frame_len, 58);
	CU_ASSERT_TRUE(roce_icrc_verify(f, &p));
	/* Too little room for the padding: nothing is built. */
	CU_ASSERT_EQUAL(roce_build_frame(f, 59, &s, NULL, 0, NULL, 0), 0);
	/* Frames already long enough are not padded: a CNP is 74 bytes. */
	CU_ASSERT_EQUAL(roce_build_cnp(f, sizeof(f), &s, 1, 0, 0), 74);
	/* 64 for a port whose device removes one tag after the switch sends. */
	s.n_vlan = 1;
	s.min_frame_len = ROCE_ETH_MIN_LEN + 4;
	n = roce_build_frame(f, sizeof(f), &s, NULL, 0, NULL, 0);
	CU_ASSERT_EQUAL(n, 64);
	CU_ASSERT_EQUAL_FATAL(roce_parse(f, (uint32_t)n, ROCE_UDP_PORT, &p), ROCE_OK);
	CU_ASSERT_EQUAL(p.l2_pad, 2);
	/* Without min_frame_len the frame is as short as its headers. */
	s.n_vlan = 0;
	s.min_frame_len = 0;
	n = roce_build_frame(f, sizeof(f), &s, NULL, 0, NULL, 0);
	CU_ASSERT_EQUAL(n, 58);
	memset(f + 58, 0xee, 4);
	CU_ASSERT_EQUAL(roce_frame_pad(f, n, sizeof(f), ROCE_ETH_MIN_LEN), 60);
	CU_ASSERT_EQUAL(f[58] | f[59], 0);
	CU_ASSERT_EQUAL(f[60], 0xee);
	CU_ASSERT_EQUAL(roce_frame_pad(f, 60, sizeof(f), ROCE_ETH_MIN_LEN), 60);
	CU_ASSERT_EQUAL(roce_frame_pad(f, 58, 59, ROCE_ETH_MIN_LEN), 0);
}

/* IETH and FETH accessors, and the rewrite helpers that keep the ICRC. */
static void
test_ieth_feth(void)
{
	uint8_t f[256], g[256];
	unsigned seed = 5;
	struct roce_pkt p;
	struct roce_icrc_delta d;
	static const uint8_t ops[] = { ROCE_OP_RC_SEND_LAST_INV, ROCE_OP_RC_SEND_ONLY_INV,
				       ROCE_OP_XRC_SEND_LAST_INV, ROCE_OP_XRC_SEND_ONLY_INV };

	for (size_t i = 0; i < sizeof(ops); i++) {
		size_t n = make_frame(f, sizeof(f), ops[i], (i & 1) ? 6 : 4, (unsigned)i % 3, 13, &seed);
		struct roce_ieth *ie;

		CU_ASSERT_EQUAL_FATAL(roce_parse(f, (uint32_t)n, ROCE_UDP_PORT, &p), ROCE_OK);
		CU_ASSERT_TRUE(p.flags & ROCE_OPF_INV);
		ie = roce_pkt_ext(&p, f, ROCE_EXT_IETH);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ie);
		/* The IETH is the last header: right before the payload. */
		CU_ASSERT_EQUAL((uint8_t *)ie - f, p.payload_off - 4);
		roce_ieth_set_rkey(ie, 0x01020304);
		CU_ASSERT_EQUAL(roce_ieth_rkey(ie), 0x01020304);
		CU_ASSERT_EQUAL(memcmp(ie, (const uint8_t[]){ 1, 2, 3, 4 }, 4), 0);
		roce_icrc_put(f, p.icrc_off, roce_icrc_compute(f, &p));
		memcpy(g, f, n);
		roce_icrc_delta_init(&d);
		CU_ASSERT_TRUE(roce_pkt_set_ieth_rkey(&p, g, 0xabcdef01, &d));
		roce_icrc_put(g, p.icrc_off, roce_icrc_delta_apply(&d, roce_icrc_get(f, &p), p.icrc_off));
		CU_ASSERT_EQUAL(roce_ieth_rkey(roce_pkt_ext(&p, g, ROCE_EXT_IETH)), 0xabcdef01);
		CU_ASSERT_TRUE(roce_icrc_verify(g, &p));
		CU_ASSERT_FALSE(roce_pkt_set_reth(&p, g, 1, 2, &d));
		/* The XRC forms: the SRQ number too, in the same delta. */
		if (roce_opcode_transport(ops[i]) == ROCE_TR_XRC) {
			struct roce_xrceth *x = roce_pkt_ext(&p, g, ROCE_EXT_XRCETH);
			uint8_t top = ((uint8_t *)x)[0];

			CU_ASSERT_TRUE(roce_pkt_set_ieth_rkey(&p, g, 0x11223344, &d));
			CU_ASSERT_TRUE(roce_pkt_set_xrc_srqn(&p, g, 0xfedcba, &d));
			roce_icrc_put(g, p.icrc_off,
				      roce_icrc_delta_apply(&d, roce_icrc_get(f, &p), p.icrc_off));
			CU_ASSERT_EQUAL(roce_xrceth_srq(x), 0xfedcba);
			CU_ASSERT_EQUAL(((uint8_t *)x)[0], top);
			CU_ASSERT_TRUE(roce_icrc_verify(g, &p));
		} else {
			CU_ASSERT_FALSE(roce_pkt_set_xrc_srqn(&p, g, 1, &d));
		}
	}
	/* A frame without an IETH is left alone. */
	{
		size_t n = make_frame(f, sizeof(f), ROCE_OP_RC_SEND_ONLY, 4, 0, 13, &seed);

		CU_ASSERT_EQUAL_FATAL(roce_parse(f, (uint32_t)n, ROCE_UDP_PORT, &p), ROCE_OK);
		memcpy(g, f, n);
		roce_icrc_delta_init(&d);
		CU_ASSERT_FALSE(roce_pkt_set_ieth_rkey(&p, g, 7, &d));
		CU_ASSERT_EQUAL(memcmp(f, g, n), 0);
		CU_ASSERT_EQUAL(d.end, 0);
	}
	/* FLUSH: FETH fields, and its RETH (after the FETH) rewritten with the ICRC kept. */
	{
		size_t n = make_frame(f, sizeof(f), ROCE_OP_RC_FLUSH, 4, 1, 0, &seed);
		struct roce_feth *fe;
		struct roce_reth *r;

		CU_ASSERT_EQUAL_FATAL(roce_parse(f, (uint32_t)n, ROCE_UDP_PORT, &p), ROCE_OK);
		CU_ASSERT_EQUAL(n, 14 + 4 + 20 + 8 + 12 + 4 + 16 + 4);
		fe = roce_pkt_ext(&p, f, ROCE_EXT_FETH);
		r = roce_pkt_ext(&p, f, ROCE_EXT_RETH);
		CU_ASSERT_EQUAL((uint8_t *)fe - f, p.bth_off + 12);
		CU_ASSERT_EQUAL((uint8_t *)r - f, p.bth_off + 16);
		roce_feth_set(fe, 2, 1);
		CU_ASSERT_EQUAL(memcmp(fe, (const uint8_t[]){ 0, 0, 0, 0x12 }, 4), 0);
		CU_ASSERT_EQUAL(roce_feth_plt(fe), 2);
		CU_ASSERT_EQUAL(roce_feth_sel(fe), 1);
		roce_feth_set(fe, 0xff, 0xff); /* out-of-range values are masked */
		CU_ASSERT_EQUAL(memcmp(fe, (const uint8_t[]){ 0, 0, 0, 0x3f }, 4), 0);
		roce_icrc_put(f, p.icrc_off, roce_icrc_compute(f, &p));
		memcpy(g, f, n);
		roce_icrc_delta_init(&d);
		CU_ASSERT_TRUE(roce_pkt_set_reth(&p, g, 0x00007f0000001000ull, 0x00abcdef, &d));
		roce_icrc_put(g, p.icrc_off, roce_icrc_delta_apply(&d, roce_icrc_get(f, &p), p.icrc_off));
		r = roce_pkt_ext(&p, g, ROCE_EXT_RETH);
		CU_ASSERT_EQUAL(roce_reth_va(r), 0x00007f0000001000ull);
		CU_ASSERT_EQUAL(roce_reth_rkey(r), 0x00abcdef);
		CU_ASSERT_TRUE(roce_icrc_verify(g, &p));
		CU_ASSERT_EQUAL(memcmp(f + p.bth_off + 12, g + p.bth_off + 12, 4), 0); /* FETH kept */
	}
}

/* Shift by n bytes equals feeding n zero bytes through the register. */
static void
test_crc_shift(void)
{
	static const uint8_t zeros[40000];
	unsigned seed = 3;

	for (int i = 0; i < 2000; i++) {
		uint32_t reg = (uint32_t)rand_r(&seed) * 2654435761u;
		uint32_t n = i < 40 ? (uint32_t)i : (uint32_t)rand_r(&seed) % sizeof(zeros);

		CU_ASSERT_EQUAL(roce_crc32_shift(reg, n), roce_crc32_update(reg, zeros, n));
	}
	/* The standard check value of CRC-32 over "123456789". */
	CU_ASSERT_EQUAL(roce_crc32_sw("123456789", 9), 0xcbf43926u);
}

/*
 * Property: for random valid frames of every opcode and size, random
 * rewrites of the fields the switch renames give the same ICRC through the
 * incremental path as through a full recompute.
 */
static void
test_icrc_incremental_property(void)
{
	static uint8_t buf[4600], orig[4600];
	unsigned seed = 42;
	uint8_t valid_ops[256];
	int n_ops = 0, mismatches = 0;

	for (int op = 0; op < 256; op++)
		if (roce_opcodes[op].flags & ROCE_OPF_VALID)
			valid_ops[n_ops++] = (uint8_t)op;

	for (int iter = 0; iter < 100000; iter++) {
		uint8_t op = valid_ops[rand_r(&seed) % n_ops];
		unsigned ipv = (rand_r(&seed) & 1) ? 6 : 4;
		unsigned n_vlan = (unsigned)rand_r(&seed) % 3;
		uint32_t plen = (uint32_t)rand_r(&seed) % 4097;
		size_t n = make_frame(buf, sizeof(buf), op, ipv, n_vlan, plen, &seed);
		struct roce_pkt p;
		struct roce_icrc_delta d;
		struct { uint32_t off, len; } fld[8];
		int nf = 0;

		if (roce_parse(buf, (uint32_t)n, ROCE_UDP_PORT, &p) != ROCE_OK) {
			CU_FAIL("generated frame does not parse");
			continue;
		}
		memcpy(orig, buf, n);
		uint32_t ipa = p.l3_off + (ipv == 6 ? 8 : 12), ipl = ipv == 6 ? 16 : 4;

		if (rand_r(&seed) & 1)
			fld[nf].off = ipa, fld[nf++].len = ipl;          /* source IP */
		if (rand_r(&seed) & 1)
			fld[nf].off = ipa + ipl, fld[nf++].len = ipl;    /* destination IP */
		if (rand_r(&seed) & 1)
			fld[nf].off = p.bth_off + 5, fld[nf++].len = 3;  /* DestQP */
		if (p.exts & ROCE_EXT_DETH)
			fld[nf].off = p.bth_off + roce_ext_offset(p.exts, ROCE_EXT_DETH) + 5,
			fld[nf++].len = 3;                              /* SrcQP */
		if (p.exts & ROCE_EXT_RETH)
			fld[nf].off = p.bth_off + roce_ext_offset(p.exts, ROCE_EXT_RETH),
			fld[nf++].len = 12;                             /* VA, R_Key */
		if (p.exts & ROCE_EXT_ATMETH)
			fld[nf].off = p.bth_off + roce_ext_offset(p.exts, ROCE_EXT_ATMETH),
			fld[nf++].len = 12;
		if (p.exts & ROCE_EXT_IETH)
			fld[nf].off = p.bth_off + roce_ext_offset(p.exts, ROCE_EXT_IETH),
			fld[nf++].len = 4;                              /* R_Key to invalidate */
		if (p.exts & ROCE_EXT_XRCETH)
			fld[nf].off = p.bth_off + roce_ext_offset(p.exts, ROCE_EXT_XRCETH) + 1,
			fld[nf++].len = 3;                              /* XRC SRQ number */
		/* Add fields in a random order to exercise both merge paths. */
		roce_icrc_delta_init(&d);
		for (int k = nf - 1; k > 0; k--) {
			int j = rand_r(&seed) % (k + 1);
			__typeof__(fld[0]) t = fld[k];

			fld[k] = fld[j];
			fld[j] = t;
		}
		for (int k = 0; k < nf; k++) {
			for (uint32_t b = 0; b < fld[k].len; b++)
				buf[fld[k].off + b] = (uint8_t)rand_r(&seed);
			roce_icrc_delta_add(&d, fld[k].off, orig + fld[k].off, buf + fld[k].off, fld[k].len);
		}
		uint32_t inc = roce_icrc_delta_apply(&d, roce_icrc_get(orig, &p), p.icrc_off);

		if (inc != roce_icrc_compute(buf, &p) && mismatches++ < 5)
			fprintf(stderr, "mismatch: op 0x%02x ipv%u vlan %u len %zu\n", op, ipv, n_vlan, n);
	}
	CU_ASSERT_EQUAL(mismatches, 0);
}

/* The installed long-run CRC is used and agrees with slice-by-8. */
static uint32_t calls;
static uint32_t
counting_crc(const void *buf, uint32_t len)
{
	calls++;
	return roce_crc32_sw(buf, len);
}

static void
test_crc_impl_hook(void)
{
	uint8_t buf[2000];
	unsigned seed = 9;
	size_t n = make_frame(buf, sizeof(buf), ROCE_OP_RC_WRITE_MIDDLE, 4, 0, 1024, &seed);
	struct roce_pkt p;

	CU_ASSERT_EQUAL_FATAL(roce_parse(buf, (uint32_t)n, ROCE_UDP_PORT, &p), ROCE_OK);
	roce_crc32_set_impl(counting_crc, "counting");
	CU_ASSERT_TRUE(roce_icrc_verify(buf, &p));
	CU_ASSERT_EQUAL(calls, 1);
	CU_ASSERT_STRING_EQUAL(roce_crc32_impl_name(), "counting");
	roce_crc32_set_impl(NULL, NULL);
	CU_ASSERT_STRING_EQUAL(roce_crc32_impl_name(), "slice-by-8");
}

static void
test_psn_arith(void)
{
	CU_ASSERT_EQUAL(roce_psn_diff(5, 3), 2);
	CU_ASSERT_EQUAL(roce_psn_diff(3, 5), -2);
	CU_ASSERT_EQUAL(roce_psn_diff(0, 0xffffff), 1);
	CU_ASSERT_EQUAL(roce_psn_diff(0xffffff, 0), -1);
	CU_ASSERT_EQUAL(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	CU_ASSERT_EQUAL(roce_psn_diff(0x800000, 0), -0x800000);
}

static void
test_csum_adjust(void)
{
	uint8_t ip[20] = { 0x45, 0, 0, 60, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2 };
	uint8_t nw[8] = { 192, 168, 7, 9, 172, 16, 200, 1 };
	uint16_t c0 = roce_ipv4_csum(ip, 20);
	uint32_t diff = roce_csum_diff(ip + 12, nw, 8);

	memcpy(ip + 12, nw, 8);
	CU_ASSERT_EQUAL(roce_csum_adjust(c0, diff), roce_ipv4_csum(ip, 20));
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("rocev2", NULL, NULL);
	CU_add_test(s, "opcode table matches IBTA table 38", test_opcode_table);
	CU_add_test(s, "parse offsets for every opcode", test_parse_offsets);
	CU_add_test(s, "every named parse error", test_parse_errors);
	CU_add_test(s, "Ethernet padding", test_padding);
	CU_add_test(s, "frames built padded", test_build_padded);
	CU_add_test(s, "IETH and FETH accessors and rewrites", test_ieth_feth);
	CU_add_test(s, "CRC shift equals zero bytes", test_crc_shift);
	CU_add_test(s, "incremental ICRC equals full, 100000 frames", test_icrc_incremental_property);
	CU_add_test(s, "long-run CRC hook", test_crc_impl_hook);
	CU_add_test(s, "24-bit PSN arithmetic", test_psn_arith);
	CU_add_test(s, "IPv4 checksum adjust", test_csum_adjust);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned fails = CU_get_number_of_failures();

	CU_cleanup_registry();
	return fails ? 1 : 0;
}
