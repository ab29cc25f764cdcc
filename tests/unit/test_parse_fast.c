/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of roce_parse_fast(), the data plane's parse of the common
 * shape (untagged IPv4 without options): on frames of every opcode built by
 * roce_build_frame(), untagged and tagged, IPv4 and IPv6, and on each of
 * them changed one byte at a time and cut short, its result (the error and
 * the whole struct roce_pkt, byte for byte) must equal roce_parse_inline()'s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "rocev2.h"

static unsigned n_compared, n_ok, n_err, n_mismatch;
static bool err_seen[ROCE_ERR_MAX];

/* Both parsers on @len bytes at @f, with the struct pre-filled with junk that either must overwrite. */
static void
compare(const uint8_t *f, uint32_t len, uint16_t port)
{
	struct roce_pkt a, b;
	enum roce_parse_err ea, eb;

	memset(&a, 0xa5, sizeof(a));
	memset(&b, 0x5a, sizeof(b));
	ea = roce_parse_inline(f, len, port, &a);
	eb = roce_parse_fast(f, len, port, &b);
	n_compared++;
	if (ea != eb || memcmp(&a, &b, sizeof(a)) != 0) {
		if (n_mismatch++ < 5)
			fprintf(stderr, "len %u: full %s, fast %s\n", len, roce_parse_err_name(ea),
				roce_parse_err_name(eb));
		return;
	}
	if (ea == ROCE_OK)
		n_ok++;
	else
		n_err++;
	err_seen[ea] = true;
}

static size_t
make_frame(uint8_t *buf, size_t cap, uint8_t op, unsigned ip_ver, unsigned n_vlan, uint32_t payload_len,
	   unsigned *seed)
{
	const struct roce_opcode_info *oi = roce_opcode(op);
	struct roce_frame_spec s = { 0 };
	uint8_t ext[64] = { 0 }, payload[512];

	s.ip_ver = (uint8_t)ip_ver;
	s.n_vlan = (uint8_t)n_vlan;
	s.ttl = 64;
	s.ip_id = (uint16_t)rand_r(seed);
	s.opcode = op;
	s.dqpn = (uint32_t)rand_r(seed) & ROCE_QPN_MASK;
	s.psn = (uint32_t)rand_r(seed) & ROCE_PSN_MASK;
	if (!(oi->flags & ROCE_OPF_PAYLOAD))
		payload_len = 0;
	else if (oi->body_len)
		payload_len = oi->body_len;
	for (uint32_t i = 0; i < payload_len; i++)
		payload[i] = (uint8_t)rand_r(seed);
	return roce_build_frame(buf, cap, &s, ext,
				(oi->flags & ROCE_OPF_CNP) ? ROCE_CNP_PAD_LEN : oi->hdr_len - ROCE_BTH_LEN,
				payload, payload_len);
}

/* Values worth writing into any header byte: the boundaries the parsers test. */
static const uint8_t probes[] = { 0x00, 0x01, 0x04, 0x06, 0x08, 0x11, 0x12, 0x20, 0x3f, 0x40, 0x45,
				  0x46, 0x60, 0x81, 0x86, 0xb7, 0xdd, 0xff };

static void
test_fast_equals_full(void)
{
	uint8_t base[1024], f[1024];
	unsigned seed = 12;

	for (int op = 0; op < 256; op++) {
		if (!(roce_opcode((uint8_t)op)->flags & ROCE_OPF_VALID))
			continue;
		for (unsigned shape = 0; shape < 4; shape++) {
			/* Shapes: untagged IPv4 (twice: short and long payload), double-tagged IPv4, IPv6. */
			unsigned ipv = shape == 3 ? 6 : 4, vlan = shape == 2 ? 2 : 0;
			size_t n = make_frame(base, sizeof(base), (uint8_t)op, ipv, vlan, shape == 1 ? 300 : 5, &seed);

			CU_ASSERT_FATAL(n > 0 && n + 8 <= sizeof(base));
			/* As built, padded, and cut short at every length. */
			for (uint32_t len = 0; len <= n + 8; len++)
				compare(base, len, ROCE_UDP_PORT);
			compare(base, (uint32_t)n, 4792);
			/* A third tag on a double-tagged frame. */
			if (vlan == 2) {
				memcpy(f, base, n);
				f[20] = 0x81;
				f[21] = 0x00;
				compare(f, (uint32_t)n, ROCE_UDP_PORT);
			}
			/* IPv4 and UDP lengths that agree but end early: every layer after UDP cut short. */
			if (ipv == 4) {
				unsigned l3 = 14 + 4 * vlan;

				for (uint32_t l = 20; l <= n - l3; l++) {
					memcpy(f, base, n);
					f[l3 + 2] = (uint8_t)(l >> 8);
					f[l3 + 3] = (uint8_t)l;
					f[l3 + 24] = (uint8_t)((l - 20) >> 8);
					f[l3 + 25] = (uint8_t)(l - 20);
					compare(f, (uint32_t)n, ROCE_UDP_PORT);
				}
			}
			/* Every header byte (and a few beyond) set to each probe value. */
			for (size_t i = 0; i < 80 && i < n; i++) {
				for (size_t k = 0; k < sizeof(probes); k++) {
					memcpy(f, base, n);
					f[i] = probes[k];
					compare(f, (uint32_t)n, ROCE_UDP_PORT);
					f[i] = (uint8_t)(base[i] ^ probes[k]);
					compare(f, (uint32_t)n, ROCE_UDP_PORT);
				}
			}
		}
	}
	fprintf(stderr, "\n%u compared: %u parse, %u errors, %u mismatches\n", n_compared, n_ok, n_err,
		n_mismatch);
	CU_ASSERT_EQUAL(n_mismatch, 0);
	/* The inputs reach both outcomes and every error a byte change or a cut can provoke. */
	CU_ASSERT(n_ok > 1000);
	for (int e = ROCE_ERR_TRUNC_ETH; e < ROCE_ERR_MAX; e++) {
		if (!err_seen[e])
			fprintf(stderr, "error %s never provoked\n", roce_parse_err_name((enum roce_parse_err)e));
		CU_ASSERT(err_seen[e]);
	}
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("parse_fast", NULL, NULL);
	CU_add_test(s, "fast parse equals the full parser", test_fast_equals_full);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned fails = CU_get_number_of_failures();

	CU_cleanup_registry();
	return fails ? 1 : 0;
}
