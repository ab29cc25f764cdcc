/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_icrc_ip_swap(): the ICRC of a frame whose IP header was replaced by
 * one of the other version, from the old ICRC.  Each case builds one
 * message twice with roce_build_frame(), over IPv4 and over IPv6 (the same
 * UDP header, BTH, extension headers and payload; TOS/traffic class, TTL and
 * flow label varied, as they are masked), and checks the swap against the
 * full roce_icrc_compute() of the other frame, both ways, for short and
 * long payloads; then that a frame corrupted after its ICRC was computed
 * stays corrupted through the swap (the error is carried, not repaired).
 * The full ICRC itself is checked against scapy's in test_vectors.c.
 */
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cu_run.h"

#include "roce_build.h"
#include "roce_icrc.h"
#include "roce_parse.h"

struct twin {
	uint8_t f[2][9000];
	size_t len[2];
	struct roce_pkt p[2];
};

/* Frame [0] over IPv4, [1] over IPv6, of one message. */
static void
twin_build(struct twin *t, uint8_t opcode, const uint8_t *ext, uint32_t ext_len, uint32_t payload_len,
	   uint8_t n_vlan)
{
	static uint8_t payload[8192];
	static const uint8_t v4[2][4] = { { 192, 168, 1, 10 }, { 10, 0, 0, 2 } };
	static const uint8_t v6[2][16] = {
		{ 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 },
	};

	for (uint32_t i = 0; i < payload_len; i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	for (int v = 0; v < 2; v++) {
		struct roce_frame_spec s = {
			.dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
			.n_vlan = n_vlan, .vlan_tci = { 42, 43 },
			.ip_ver = v ? 6 : 4, .dscp = (uint8_t)(v ? 26 : 46), .ecn = (uint8_t)(v ? 3 : 2),
			.ttl = (uint8_t)(v ? 17 : 64), .ip_id = 0x1234, .flow_label = v ? 0xabcde : 0,
			.udp_sport = 0xc123, .opcode = opcode, .pkey = 0xffff, .dqpn = 0x001001,
			.psn = 0x123456,
		};

		memcpy(s.src_ip, v ? v6[0] : v4[0], v ? 16 : 4);
		memcpy(s.dst_ip, v ? v6[1] : v4[1], v ? 16 : 4);
		t->len[v] = roce_build_frame(t->f[v], sizeof(t->f[v]), &s, ext, ext_len, payload, payload_len);
		CU_ASSERT_FATAL(t->len[v] > 0);
		CU_ASSERT_FATAL(roce_parse(t->f[v], (uint32_t)t->len[v], ROCE_UDP_PORT, &t->p[v]) == ROCE_OK);
		CU_ASSERT_FATAL(roce_icrc_verify(t->f[v], &t->p[v]));
	}
}

/* The ICRC of frame [from] swapped to frame [to]'s IP header. */
static uint32_t
swap(const struct twin *t, int from, int to)
{
	const struct roce_pkt *a = &t->p[from], *b = &t->p[to];

	return roce_icrc_ip_swap(roce_icrc_get(t->f[from], a), t->f[from] + a->l3_off,
				 (unsigned)(a->l4_off - a->l3_off), a->ip_ver, t->f[to] + b->l3_off,
				 (unsigned)(b->l4_off - b->l3_off), b->ip_ver, a->icrc_off - a->l4_off);
}

static void
test_swap_both_ways(void)
{
	static const uint32_t lens[] = { 0, 4, 60, 1024, 4096, 8192 };
	static const uint8_t reth[16] = { 0, 0, 0x7f, 0, 0, 0, 0, 0x40, 0, 0, 0x12, 0x34, 0, 0, 0x10, 0 };
	struct twin *t = malloc(sizeof(*t));

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (uint8_t tags = 0; tags <= 2; tags++) {
			twin_build(t, 0x04, NULL, 0, lens[i], tags);		/* RC SEND Only */
			CU_ASSERT_EQUAL(swap(t, 0, 1), roce_icrc_compute(t->f[1], &t->p[1]));
			CU_ASSERT_EQUAL(swap(t, 1, 0), roce_icrc_compute(t->f[0], &t->p[0]));
			twin_build(t, 0x0a, reth, sizeof(reth), lens[i], tags);	/* RC WRITE Only */
			CU_ASSERT_EQUAL(swap(t, 0, 1), roce_icrc_compute(t->f[1], &t->p[1]));
			CU_ASSERT_EQUAL(swap(t, 1, 0), roce_icrc_compute(t->f[0], &t->p[0]));
		}
	}
	free(t);
}

/* A bit flipped in the payload after the ICRC: the swapped ICRC still fails. */
static void
test_corruption_carried(void)
{
	struct twin *t = malloc(sizeof(*t));
	uint32_t good6;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	twin_build(t, 0x04, NULL, 0, 256, 0);
	good6 = roce_icrc_compute(t->f[1], &t->p[1]);
	t->f[0][t->p[0].payload_off + 100] ^= 0x08;
	CU_ASSERT_FALSE(roce_icrc_verify(t->f[0], &t->p[0]));
	/* The same corruption in the IPv6 twin, with the IPv4 frame's stale ICRC swapped in. */
	t->f[1][t->p[1].payload_off + 100] ^= 0x08;
	roce_icrc_put(t->f[1], t->p[1].icrc_off, swap(t, 0, 1));
	CU_ASSERT_FALSE(roce_icrc_verify(t->f[1], &t->p[1]));
	CU_ASSERT_EQUAL(roce_icrc_get(t->f[1], &t->p[1]), good6);
	free(t);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("icrc ip swap", NULL, NULL);
	CU_add_test(s, "IPv4 <-> IPv6, tags, lengths, against the full ICRC", test_swap_both_ways);
	CU_add_test(s, "a corrupted frame stays corrupted", test_corruption_carried);
	return cu_run_all();
}
