/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table (rocev2/roce_opcode.c) row by row against the Linux soft
 * RoCE driver's, rxe_opcode[] in drivers/infiniband/sw/rxe/rxe_opcode.c.
 *
 * Origin of the transcription below (facts only: which headers each opcode
 * carries at which offset, its length and its mask flags; no code):
 *
 *  - RC 0x00-0x17, UC 0x20-0x2b, RD 0x40-0x54 and UD 0x64-0x65: torvalds/linux
 *    at commit b9a4c070e56d1fa500a81518669803ba1fd600e7, the table before
 *    IBTA 1.5 (it has no FLUSH or ATOMIC WRITE yet).
 *  - RC FLUSH (0x1c) and RC ATOMIC WRITE (0x1d): the rows the Linux 6.2 rxe
 *    patches add to the same file ("RDMA/rxe: Support RDMA Atomic Write
 *    operation", Xiao Yang; "RDMA/rxe: Implement flush ..." series, Li
 *    Zhijian, with the follow-up that gives FLUSH its [RXE_PAYLOAD] offset),
 *    and the FETH layout of rxe_hdr.h (bits 3-0 placement type, 5-4
 *    selectivity level).
 *
 * Mapping of rxe's mask bits to ours: *_MASK of a header is that header;
 * PAYLOAD is ROCE_OPF_PAYLOAD; REQ is ROCE_OPF_REQ; ACK (read responses and
 * acknowledgements) is ROCE_OPF_RESP; START and END together are ONLY, START
 * alone FIRST, END alone LAST, MIDDLE MIDDLE; SEND, WRITE, READ and ATOMIC
 * of a request are our classes of the same name (rxe sets READ and ATOMIC on
 * requests only, we also on their responses); IMMDT is ROCE_OPF_IMM, IETH
 * ROCE_OPF_INV, FLUSH ROCE_OPF_FLUSH, ATOMIC_WRITE ROCE_OPF_ATOMIC_WRITE, and
 * an ATOMIC WRITE is of our WRITE class (it needs remote write access, as
 * rxe checks).  COMP and RWR (completion and receive-WQE bookkeeping) have
 * no counterpart.  rxe has neither the RoCEv2 CNP nor XRC; those rows are
 * checked against IBTA in test_rocev2.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "rocev2.h"

static const struct rxe_row {
	uint8_t op;
	const char *name;   /* rxe's IB_OPCODE_* name without the prefix */
	const char *mask;   /* rxe's mask bits, without RXE_ and _MASK */
	const char *hdrs;   /* rxe's offset[] entries after the BTH, as NAME@offset */
	unsigned length;    /* rxe's .length */
} rxe[] = {
	{ 0x00, "RC_SEND_FIRST", "PAYLOAD REQ RWR SEND START", "", 12 },
	{ 0x01, "RC_SEND_MIDDLE", "PAYLOAD REQ SEND MIDDLE", "", 12 },
	{ 0x02, "RC_SEND_LAST", "PAYLOAD REQ COMP SEND END", "", 12 },
	{ 0x03, "RC_SEND_LAST_WITH_IMMEDIATE", "IMMDT PAYLOAD REQ COMP SEND END", "IMMDT@12", 16 },
	{ 0x04, "RC_SEND_ONLY", "PAYLOAD REQ COMP RWR SEND START END", "", 12 },
	{ 0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", "IMMDT PAYLOAD REQ COMP RWR SEND START END", "IMMDT@12", 16 },
	{ 0x06, "RC_RDMA_WRITE_FIRST", "RETH PAYLOAD REQ WRITE START", "RETH@12", 28 },
	{ 0x07, "RC_RDMA_WRITE_MIDDLE", "PAYLOAD REQ WRITE MIDDLE", "", 12 },
	{ 0x08, "RC_RDMA_WRITE_LAST", "PAYLOAD REQ WRITE END", "", 12 },
	{ 0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "IMMDT PAYLOAD REQ WRITE COMP RWR END", "IMMDT@12", 16 },
	{ 0x0a, "RC_RDMA_WRITE_ONLY", "RETH PAYLOAD REQ WRITE START END", "RETH@12", 28 },
	{ 0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	  "RETH IMMDT PAYLOAD REQ WRITE COMP RWR START END", "RETH@12 IMMDT@28", 32 },
	{ 0x0c, "RC_RDMA_READ_REQUEST", "RETH REQ READ START END", "RETH@12", 28 },
	{ 0x0d, "RC_RDMA_READ_RESPONSE_FIRST", "AETH PAYLOAD ACK START", "AETH@12", 16 },
	{ 0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", "PAYLOAD ACK MIDDLE", "", 12 },
	{ 0x0f, "RC_RDMA_READ_RESPONSE_LAST", "AETH PAYLOAD ACK END", "AETH@12", 16 },
	{ 0x10, "RC_RDMA_READ_RESPONSE_ONLY", "AETH PAYLOAD ACK START END", "AETH@12", 16 },
	{ 0x11, "RC_ACKNOWLEDGE", "AETH ACK START END", "AETH@12", 16 },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", "AETH ATMACK ACK START END", "AETH@12 ATMACK@16", 24 },
	{ 0x13, "RC_COMPARE_SWAP", "ATMETH REQ ATOMIC START END", "ATMETH@12", 40 },
	{ 0x14, "RC_FETCH_ADD", "ATMETH REQ ATOMIC START END", "ATMETH@12", 40 },
	{ 0x16, "RC_SEND_LAST_WITH_INVALIDATE", "IETH PAYLOAD REQ COMP SEND END", "IETH@12", 16 },
	{ 0x17, "RC_SEND_ONLY_WITH_INVALIDATE", "IETH PAYLOAD REQ COMP RWR SEND END START", "IETH@12", 16 },
	{ 0x1c, "RC_FLUSH", "FETH RETH FLUSH START END REQ", "FETH@12 RETH@16", 32 },
	{ 0x1d, "RC_ATOMIC_WRITE", "RETH PAYLOAD REQ ATOMIC_WRITE START END", "RETH@12", 28 },
	{ 0x20, "UC_SEND_FIRST", "PAYLOAD REQ RWR SEND START", "", 12 },
	{ 0x21, "UC_SEND_MIDDLE", "PAYLOAD REQ SEND MIDDLE", "", 12 },
	{ 0x22, "UC_SEND_LAST", "PAYLOAD REQ COMP SEND END", "", 12 },
	{ 0x23, "UC_SEND_LAST_WITH_IMMEDIATE", "IMMDT PAYLOAD REQ COMP SEND END", "IMMDT@12", 16 },
	{ 0x24, "UC_SEND_ONLY", "PAYLOAD REQ COMP RWR SEND START END", "", 12 },
	{ 0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", "IMMDT PAYLOAD REQ COMP RWR SEND START END", "IMMDT@12", 16 },
	{ 0x26, "UC_RDMA_WRITE_FIRST", "RETH PAYLOAD REQ WRITE START", "RETH@12", 28 },
	{ 0x27, "UC_RDMA_WRITE_MIDDLE", "PAYLOAD REQ WRITE MIDDLE", "", 12 },
	{ 0x28, "UC_RDMA_WRITE_LAST", "PAYLOAD REQ WRITE END", "", 12 },
	{ 0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "IMMDT PAYLOAD REQ WRITE COMP RWR END", "IMMDT@12", 16 },
	{ 0x2a, "UC_RDMA_WRITE_ONLY", "RETH PAYLOAD REQ WRITE START END", "RETH@12", 28 },
	{ 0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	  "RETH IMMDT PAYLOAD REQ WRITE COMP RWR START END", "RETH@12 IMMDT@28", 32 },
	{ 0x64, "UD_SEND_ONLY", "DETH PAYLOAD REQ COMP RWR SEND START END", "DETH@12", 20 },
	{ 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", "DETH IMMDT PAYLOAD REQ COMP RWR SEND START END",
	  "DETH@12 IMMDT@20", 24 },
};

/* rxe's RD rows (0x40-0x54, RESYNC 0x55 excepted): RoCEv2 carries no RD. */
static const uint8_t rxe_rd[] = {
	0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a,
	0x4b, 0x4c, 0x4d, 0x4e, 0x4f, 0x50, 0x51, 0x52, 0x53, 0x54,
};

static const struct {
	const char *name;
	uint16_t ext;
} rxe_hdrs[] = {
	{ "RDETH", ROCE_EXT_RDETH }, { "DETH", ROCE_EXT_DETH }, { "FETH", ROCE_EXT_FETH },
	{ "RETH", ROCE_EXT_RETH }, { "ATMETH", ROCE_EXT_ATMETH }, { "AETH", ROCE_EXT_AETH },
	{ "ATMACK", ROCE_EXT_ATMACK }, { "IMMDT", ROCE_EXT_IMMDT }, { "IETH", ROCE_EXT_IETH },
};

static int
has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

static uint16_t
hdr_ext(const char *name)
{
	for (size_t h = 0; h < sizeof(rxe_hdrs) / sizeof(rxe_hdrs[0]); h++)
		if (!strcmp(rxe_hdrs[h].name, name))
			return rxe_hdrs[h].ext;
	return 0;
}

#define CHECK(cond, what) do { \
		CU_ASSERT(cond); \
		if (!(cond)) \
			fprintf(stderr, "\n  0x%02x %s: %s differs from rxe", r->op, r->name, what); \
	} while (0)

static void
test_rows(void)
{
	for (size_t i = 0; i < sizeof(rxe) / sizeof(rxe[0]); i++) {
		const struct rxe_row *r = &rxe[i];
		const struct roce_opcode_info *op = roce_opcode(r->op);
		uint32_t f = op->flags;
		uint16_t from_mask = 0, from_offsets = 0;
		char buf[96], *tok, *save;
		int start = has(r->mask, "START"), end = has(r->mask, "END");
		int req = has(r->mask, "REQ");

		CHECK(f & ROCE_OPF_VALID, "validity");
		CHECK(op->name && !strcmp(op->name, r->name), "name");
		/* Headers: the mask bits and the offsets must name the same set. */
		for (size_t h = 0; h < sizeof(rxe_hdrs) / sizeof(rxe_hdrs[0]); h++)
			if (has(r->mask, rxe_hdrs[h].name))
				from_mask |= rxe_hdrs[h].ext;
		snprintf(buf, sizeof(buf), "%s", r->hdrs);
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char *at = strchr(tok, '@');
			uint16_t ext;

			CU_ASSERT_PTR_NOT_NULL_FATAL(at);
			*at = '\0';
			ext = hdr_ext(tok);
			CU_ASSERT_FATAL(ext != 0);
			from_offsets |= ext;
			CHECK(roce_ext_offset(op->exts, (enum roce_ext)ext) == (unsigned)atoi(at + 1),
			      tok);
		}
		CU_ASSERT_EQUAL(from_mask, from_offsets); /* the transcription is self-consistent */
		CHECK(op->exts == from_mask, "header set");
		CHECK(op->hdr_len == r->length, "header length");
		CHECK(!!(f & ROCE_OPF_PAYLOAD) == has(r->mask, "PAYLOAD"), "PAYLOAD");
		CHECK(!!(f & ROCE_OPF_REQ) == req, "REQ");
		CHECK(!!(f & ROCE_OPF_RESP) == has(r->mask, "ACK"), "ACK (response)");
		CHECK(!!(f & ROCE_OPF_ONLY) == (start && end), "START+END (only)");
		CHECK(!!(f & ROCE_OPF_FIRST) == (start && !end), "START (first)");
		CHECK(!!(f & ROCE_OPF_LAST) == (!start && end), "END (last)");
		CHECK(!!(f & ROCE_OPF_MIDDLE) == has(r->mask, "MIDDLE"), "MIDDLE");
		CHECK(!!(f & ROCE_OPF_IMM) == has(r->mask, "IMMDT"), "IMMDT (immediate)");
		CHECK(!!(f & ROCE_OPF_INV) == has(r->mask, "IETH"), "IETH (invalidate)");
		CHECK(!!(f & ROCE_OPF_FLUSH) == has(r->mask, "FLUSH"), "FLUSH");
		CHECK(!!(f & ROCE_OPF_ATOMIC_WRITE) == has(r->mask, "ATOMIC_WRITE"), "ATOMIC_WRITE");
		if (req) {
			CHECK(!!(f & ROCE_OPF_SEND) == has(r->mask, "SEND"), "SEND");
			CHECK(!!(f & ROCE_OPF_WRITE) ==
			      (has(r->mask, "WRITE") || has(r->mask, "ATOMIC_WRITE")), "WRITE");
			CHECK(!!(f & ROCE_OPF_READ) == has(r->mask, "READ"), "READ");
			CHECK(!!(f & ROCE_OPF_ATOMIC) == has(r->mask, "ATOMIC"), "ATOMIC");
		}
	}
}

/* Every opcode we carry is in rxe's table, but the CNP and XRC (which rxe lacks). */
static void
test_coverage(void)
{
	for (int op = 0; op < 256; op++) {
		int in_rxe = 0;

		for (size_t i = 0; i < sizeof(rxe) / sizeof(rxe[0]); i++)
			in_rxe |= rxe[i].op == op;
		if (!(roce_opcodes[op].flags & ROCE_OPF_VALID))
			continue;
		if (op == ROCE_OP_CNP || roce_opcode_transport((uint8_t)op) == ROCE_TR_XRC)
			continue;
		CU_ASSERT(in_rxe);
		if (!in_rxe)
			fprintf(stderr, "\n  0x%02x %s is not in rxe's table", op, roce_opcodes[op].name);
	}
	for (size_t i = 0; i < sizeof(rxe_rd); i++)
		CU_ASSERT_FALSE(roce_opcodes[rxe_rd[i]].flags & ROCE_OPF_VALID);
}

/* The header sizes rxe uses (RXE_*_BYTES) equal our structs'. */
static void
test_sizes(void)
{
	CU_ASSERT_EQUAL(ROCE_EXT_LEN(ROCE_EXT_FETH), sizeof(struct roce_feth));
	CU_ASSERT_EQUAL(sizeof(struct roce_feth), 4);
	CU_ASSERT_EQUAL(ROCE_EXT_LEN(ROCE_EXT_RETH), 16);
	CU_ASSERT_EQUAL(ROCE_EXT_LEN(ROCE_EXT_ATMETH), 28);
	CU_ASSERT_EQUAL(ROCE_EXT_LEN(ROCE_EXT_DETH), 8);
	CU_ASSERT_EQUAL(ROCE_EXT_LEN(ROCE_EXT_ATMACK), 8);
	CU_ASSERT_EQUAL(ROCE_EXT_LEN(ROCE_EXT_IETH | ROCE_EXT_IMMDT | ROCE_EXT_AETH), 12);
	/* rxe_hdr.h: FETH bits 3-0 placement type, 5-4 selectivity level. */
	CU_ASSERT_EQUAL(ROCE_FETH_PLT_MASK, 0x0f);
	CU_ASSERT_EQUAL(ROCE_FETH_SEL_MASK, 0x30);
}

int
main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("rxe_table", NULL, NULL);
	CU_add_test(s, "every rxe row: headers, offsets, length, mask flags", test_rows);
	CU_add_test(s, "coverage both ways (RD absent)", test_coverage);
	CU_add_test(s, "header sizes", test_sizes);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
