/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_cm_track: RDMA-CM connections followed by their messages, as the
 * learner uses them to remove what a REQ and a REP installed.  Blue's
 * 192.168.1.10 (active, Communication ID 0x11, QP 18) and .20 (passive, ID
 * 0x22, QP 34) in tenant slot 3; slot 4 is another tenant with the same vips.
 */
#include <stdint.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "cu_run.h"
#include "dp_cm_track.h"
#include "roce_cm.h"

static struct dp_cm_table *t;
static const struct ovl_ip A = { .ver = 4, .b = { 192, 168, 1, 10 } }, B = { .ver = 4, .b = { 192, 168, 1, 20 } };

static enum dp_cm_verdict
msg(uint32_t tslot, uint16_t attr, const struct ovl_ip *from, const struct ovl_ip *to, uint32_t lid, uint32_t rid,
    uint32_t qpn, struct dp_cm_conn ***ended)
{
	struct dp_cm_msg m = { .tslot = tslot, .attr = attr, .from = *from, .to = *to, .local_id = lid,
			       .remote_id = rid, .qpn = qpn };
	struct dp_cm_conn **dummy;

	return dp_cm_track(t, &m, 100, ended ? ended : &dummy);
}

/* REQ, REP, RTU: one connection, both QPNs. */
static void
setup_conn(uint32_t tslot)
{
	CU_ASSERT_EQUAL(msg(tslot, ROCE_CM_REQ, &A, &B, 0x11, 0, 18, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(msg(tslot, ROCE_CM_REP, &B, &A, 0x22, 0x11, 34, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(msg(tslot, ROCE_CM_RTU, &A, &B, 0x11, 0x22, 0, NULL), DP_CM_IGNORED);
	CU_ASSERT_EQUAL(t->n[tslot], 1);
}

static void
test_drep(void)
{
	struct dp_cm_conn **e = NULL;

	setup_conn(3);
	/* Wrong IDs, the other tenant, a DREP before any DREQ: nothing ends. */
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREQ, &A, &B, 0x11, 0x23, 34, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREQ, &A, &B, 0x12, 0x22, 34, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREQ, &B, &A, 0x11, 0x22, 18, NULL), DP_CM_UNMATCHED); /* IDs swapped */
	CU_ASSERT_EQUAL(msg(4, ROCE_CM_DREQ, &A, &B, 0x11, 0x22, 34, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(4, ROCE_CM_DREP, &B, &A, 0x22, 0x11, 0, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREP, &B, &A, 0x22, 0x11, 0, NULL), DP_CM_UNMATCHED);
	/* The DREQ is noted; a DREP from its own sender does not answer it; the other side's does. */
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREQ, &A, &B, 0x11, 0x22, 34, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREP, &A, &B, 0x11, 0x22, 0, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREP, &B, &A, 0x22, 0x11, 0, &e), DP_CM_ENDS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	/* Its halves: .10 -> (.20, 34) and .20 -> (.10, 18); not another QPN, direction or tenant. */
	CU_ASSERT(dp_cm_half(*e, 3, &A, &B, 34) && dp_cm_half(*e, 3, &B, &A, 18));
	CU_ASSERT(!dp_cm_half(*e, 3, &A, &B, 18) && !dp_cm_half(*e, 3, &B, &A, 34) && !dp_cm_half(*e, 4, &A, &B, 34));
	dp_cm_close(t, e);
	CU_ASSERT_EQUAL(t->n[3], 0);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREP, &B, &A, 0x22, 0x11, 0, NULL), DP_CM_UNMATCHED);
}

static void
test_rej(void)
{
	struct dp_cm_conn **e = NULL;

	/* A REJ of the REQ: the passive side's ID is new, the active side's must match. */
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_REQ, &A, &B, 0x33, 0, 19, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_REJ, &B, &A, 0x44, 0x34, 0, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(4, ROCE_CM_REJ, &B, &A, 0x44, 0x33, 0, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_REJ, &B, &A, 0x44, 0x33, 0, &e), DP_CM_ENDS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT(dp_cm_half(*e, 3, &B, &A, 19) && !dp_cm_half(*e, 3, &A, &B, 19));
	dp_cm_close(t, e);
	/* A REJ of the REP, by the active side: both IDs must match. */
	setup_conn(3);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_REJ, &A, &B, 0x11, 0x99, 0, NULL), DP_CM_UNMATCHED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_REJ, &A, &B, 0x11, 0x22, 0, &e), DP_CM_ENDS);
	dp_cm_close(t, e);
	CU_ASSERT_EQUAL(t->n[3], 0);
}

static void
test_order_bounds_expiry(void)
{
	struct dp_cm_conn **e = NULL;

	/* The REP seen before the REQ (two lcores, two ports): one connection all the same. */
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_REP, &B, &A, 0x22, 0x11, 34, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_REQ, &A, &B, 0x11, 0, 18, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(t->n[3], 1);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREQ, &B, &A, 0x22, 0x11, 18, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(msg(3, ROCE_CM_DREP, &A, &B, 0x11, 0x22, 0, &e), DP_CM_ENDS);
	CU_ASSERT(dp_cm_half(*e, 3, &B, &A, 18) && dp_cm_half(*e, 3, &A, &B, 34));
	dp_cm_close(t, e);
	/* A slot follows at most DP_CM_PER_SLOT connections; another slot is not affected. */
	for (uint32_t i = 0; i < DP_CM_PER_SLOT; i++)
		msg(5, ROCE_CM_REQ, &A, &B, 0x1000 + i, 0, 100, NULL);
	CU_ASSERT_EQUAL(t->n[5], DP_CM_PER_SLOT);
	CU_ASSERT_EQUAL(msg(5, ROCE_CM_REQ, &A, &B, 0xffff, 0, 100, NULL), DP_CM_IGNORED);
	CU_ASSERT_EQUAL(msg(6, ROCE_CM_REQ, &A, &B, 0xffff, 0, 100, NULL), DP_CM_NOTED);
	CU_ASSERT_EQUAL(msg(DP_CM_SLOTS, ROCE_CM_REQ, &A, &B, 1, 0, 100, NULL), DP_CM_IGNORED);
	dp_cm_free(t);
}

static bool
keep_none(const struct dp_cm_conn *c, void *arg)
{
	(void)c;
	(void)arg;
	return false;
}

static bool
keep_all(const struct dp_cm_conn *c, void *arg)
{
	(void)c;
	(void)arg;
	return true;
}

static void
test_expire(void)
{
	setup_conn(3);                 /* its last message at 100 */
	dp_cm_expire(t, 150, 50, keep_none, NULL);
	CU_ASSERT_EQUAL(t->n[3], 1);   /* not idle for longer than 50 yet */
	dp_cm_expire(t, 151, 50, keep_all, NULL);
	CU_ASSERT_EQUAL(t->n[3], 1);   /* its halves are in force */
	dp_cm_expire(t, 151, 50, keep_none, NULL);
	CU_ASSERT_EQUAL(t->n[3], 0);
	CU_ASSERT_PTR_NULL(t->list[3]);
}

int
main(void)
{
	CU_pSuite s;
	int rc;

	t = calloc(1, sizeof(*t));
	if (!t || CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("cm_track", NULL, NULL);
	CU_add_test(s, "DREQ then DREP ends it; wrong IDs, another tenant, a lone DREP do not", test_drep);
	CU_add_test(s, "REJ of the REQ and of the REP", test_rej);
	CU_add_test(s, "REP before REQ, the bound per slot", test_order_bounds_expiry);
	CU_add_test(s, "expiry", test_expire);
	rc = cu_run_all();
	dp_cm_free(t);
	free(t);
	return rc;
}
