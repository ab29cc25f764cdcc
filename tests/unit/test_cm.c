/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_cm: the MAD header and the CM fields a switch reads.  The byte
 * layouts are written here from IBTA Vol 1 tables 106 (REQ), 108 (REJ),
 * 110 (REP) and 112 (DREQ) and the 24-byte common MAD header (table 137);
 * tests/oracle/test_cm.py holds the same reader against tshark's dissector.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cu_run.h"
#include "roce_cm.h"

static void
mad_hdr(uint8_t *m, uint8_t cls, uint16_t attr)
{
	memset(m, 0, ROCE_MAD_LEN);
	m[0] = 1;        /* base version */
	m[1] = cls;
	m[2] = 2;        /* class version */
	m[3] = 0x03;     /* Send */
	for (int i = 0; i < 8; i++)
		m[8 + i] = (uint8_t)(0x10 + i); /* transaction ID 0x1011121314151617 */
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
}

static void
be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void
test_req(void)
{
	uint8_t m[ROCE_MAD_LEN];
	struct roce_cm cm;

	mad_hdr(m, ROCE_MAD_CLASS_CM, ROCE_CM_REQ);
	be(m + 24 + 0, 0xdeadbeef, 4);                 /* Local Communication ID */
	be(m + 24 + 8, 0x0000000001064853ull, 8);      /* Service ID: RDMA_PS_TCP, port 18515 */
	be(m + 24 + 32, 0xabcdef, 3);                  /* Local QPN */
	m[24 + 35] = 0xff;                             /* Responder Resources: not the QPN */
	m[24 + 43] = 20 << 3 | 1 << 1 | 1;             /* timeout 20, transport UC, E2E */
	be(m + 24 + 44, 0x123456, 3);                  /* Starting PSN */
	m[24 + 47] = 0xff;
	CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_OK);
	CU_ASSERT_EQUAL(cm.attr_id, ROCE_CM_REQ);
	CU_ASSERT_EQUAL(cm.method, 0x03);
	CU_ASSERT_EQUAL(cm.tid, 0x1011121314151617ull);
	CU_ASSERT_EQUAL(cm.local_comm_id, 0xdeadbeef);
	CU_ASSERT_EQUAL(cm.remote_comm_id, 0);
	CU_ASSERT_EQUAL(cm.service_id, 0x0000000001064853ull);
	CU_ASSERT_EQUAL(cm.local_qpn, 0xabcdef);
	CU_ASSERT_EQUAL(cm.transport, ROCE_CM_UC);
	CU_ASSERT_EQUAL(cm.starting_psn, 0x123456);
	CU_ASSERT_STRING_EQUAL(roce_cm_attr_name(cm.attr_id), "REQ");
}

static void
test_rep_rej_dreq(void)
{
	uint8_t m[ROCE_MAD_LEN];
	struct roce_cm cm;

	mad_hdr(m, ROCE_MAD_CLASS_CM, ROCE_CM_REP);
	be(m + 24, 0x2002, 4);
	be(m + 28, 0x1001, 4);
	be(m + 24 + 12, 33, 3);
	m[24 + 15] = 0xee;                             /* vendor ID: not the QPN */
	be(m + 24 + 20, 500, 3);
	CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_OK);
	CU_ASSERT_EQUAL(cm.local_comm_id, 0x2002);
	CU_ASSERT_EQUAL(cm.remote_comm_id, 0x1001);
	CU_ASSERT_EQUAL(cm.local_qpn, 33);
	CU_ASSERT_EQUAL(cm.starting_psn, 500);
	CU_ASSERT_EQUAL(cm.service_id, 0);

	mad_hdr(m, ROCE_MAD_CLASS_CM, ROCE_CM_REJ);
	be(m + 24, 7, 4);
	be(m + 28, 8, 4);
	m[24 + 8] = 1 << 6 | 0x3f;                     /* REP rejected; the rest is another field */
	be(m + 24 + 10, 28, 2);
	CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_OK);
	CU_ASSERT_EQUAL(cm.rej_msg, 1);
	CU_ASSERT_EQUAL(cm.rej_reason, 28);
	CU_ASSERT_EQUAL(cm.local_qpn, 0);

	mad_hdr(m, ROCE_MAD_CLASS_CM, ROCE_CM_DREQ);
	be(m + 24, 1, 4);
	be(m + 28, 2, 4);
	be(m + 24 + 8, 0x654321, 3);
	CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_OK);
	CU_ASSERT_EQUAL(cm.remote_qpn, 0x654321);
	CU_ASSERT_EQUAL(cm.remote_comm_id, 2);
	CU_ASSERT_STRING_EQUAL(roce_cm_attr_name(ROCE_CM_DREQ), "DREQ");
}

static void
test_refused(void)
{
	uint8_t m[ROCE_MAD_LEN];
	struct roce_cm cm;

	mad_hdr(m, ROCE_MAD_CLASS_CM, ROCE_CM_RTU);
	CU_ASSERT_EQUAL(roce_cm_parse(m, ROCE_MAD_LEN - 1, &cm), ROCE_CM_SHORT);
	CU_ASSERT_EQUAL(roce_mad_class(m, ROCE_MAD_HDR_LEN - 1), -1);
	CU_ASSERT_EQUAL(roce_mad_class(m, ROCE_MAD_HDR_LEN), ROCE_MAD_CLASS_CM);
	m[1] = 0x03;                                   /* subnet administration */
	CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_NOT_CM);
	m[1] = ROCE_MAD_CLASS_CM;
	m[0] = 2;
	CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_BAD_VERSION);
	/* An attribute it does not know: the header and the Local Communication ID only. */
	mad_hdr(m, ROCE_MAD_CLASS_CM, 0x0030);
	be(m + 24, 0x77, 4);
	be(m + 28, 0x88, 4);
	CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_OK);
	CU_ASSERT_EQUAL(cm.local_comm_id, 0x77);
	CU_ASSERT_EQUAL(cm.remote_comm_id, 0);
	CU_ASSERT_PTR_NULL(roce_cm_attr_name(0x0030));
	CU_ASSERT_PTR_NULL(roce_cm_attr_name(0x000f));
	CU_ASSERT_STRING_EQUAL(roce_cm_attr_name(ROCE_CM_APR), "APR");
}

/*
 * Known answers: the first 40 bytes of three MADs (the other 216 are zero),
 * as tests/oracle/test_cm.py builds them from IBTA Vol 1 tables 108, 112,
 * 113 and 137, and as the kernel's cm_msgs.h lays them out (the REJ's
 * message-rejected bits at byte 8, reason at 10; the DREQ's remote QPN at 8;
 * the DREP only the two IDs):
 *   mad(7, 0x12, 0xabc07, rej(0x2004, 0x1003, 28))
 *   mad(7, 0x15, 0xabc04, dreq(0x1001, 0x2002, 33))
 *   mad(7, 0x16, 0xabc05, two_ids(0x2002, 0x1001, 232))
 * tshark 4.0 decodes them, as UD SENDs to QP1, as attributes 0x0012, 0x0015
 * and 0x0016 with those transaction IDs; the REJ as local comm ID 0x2004,
 * remote 0x1003, reason 0x001c, message rejected 0; the DREQ as local
 * 0x1001, remote 0x2002 (it dissects neither the DREQ's remote QPN nor the
 * DREP's fields: those rest on the tables alone).
 */
static void
hex_mad(uint8_t *m, const char *hex)
{
	memset(m, 0, ROCE_MAD_LEN);
	for (size_t i = 0; hex[2 * i]; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		m[i] = (uint8_t)v;
	}
}

static void
test_known_answers(void)
{
	static const struct {
		const char *hex;
		uint16_t attr;
		uint64_t tid;
		uint32_t local_id, remote_id, remote_qpn;
		uint16_t rej_reason;
	} kat[] = {
		{ "010702030000000000000000000abc07001200000000000000002004000010030000001c00000000",
		  ROCE_CM_REJ, 0xabc07, 0x2004, 0x1003, 0, 28 },
		{ "010702030000000000000000000abc04001500000000000000001001000020020000210000000000",
		  ROCE_CM_DREQ, 0xabc04, 0x1001, 0x2002, 33, 0 },
		{ "010702030000000000000000000abc05001600000000000000002002000010010000000000000000",
		  ROCE_CM_DREP, 0xabc05, 0x2002, 0x1001, 0, 0 },
	};
	uint8_t m[ROCE_MAD_LEN];
	struct roce_cm cm;

	for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		hex_mad(m, kat[i].hex);
		CU_ASSERT_EQUAL(roce_cm_parse(m, sizeof(m), &cm), ROCE_CM_OK);
		CU_ASSERT_EQUAL(cm.attr_id, kat[i].attr);
		CU_ASSERT_EQUAL(cm.tid, kat[i].tid);
		CU_ASSERT_EQUAL(cm.local_comm_id, kat[i].local_id);
		CU_ASSERT_EQUAL(cm.remote_comm_id, kat[i].remote_id);
		CU_ASSERT_EQUAL(cm.remote_qpn, kat[i].remote_qpn);
		CU_ASSERT_EQUAL(cm.rej_reason, kat[i].rej_reason);
		CU_ASSERT_EQUAL(cm.rej_msg, 0);
		CU_ASSERT_EQUAL(cm.local_qpn, 0);
		/* One byte short of a MAD: refused before any field is read. */
		CU_ASSERT_EQUAL(roce_cm_parse(m, ROCE_MAD_LEN - 1, &cm), ROCE_CM_SHORT);
	}
	CU_ASSERT_STRING_EQUAL(roce_cm_attr_name(ROCE_CM_DREP), "DREP");
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("cm", NULL, NULL);
	CU_add_test(s, "REQ: Service ID, Local QPN, transport, Starting PSN", test_req);
	CU_add_test(s, "REP, REJ, DREQ", test_rep_rej_dreq);
	CU_add_test(s, "REJ, DREQ, DREP: known answers", test_known_answers);
	CU_add_test(s, "short, other classes and versions, unknown attributes", test_refused);
	return cu_run_all();
}
