/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config/cfg_inc: batches checked against the running configuration's
 * indexes and applied in place.  Every batch here runs through both
 * cfg_inc_prepare()/cfg_inc_commit() and cfg_delta_apply_root() (run_both()),
 * which must agree; each test states which path the batch must take and,
 * for the incremental one, the change list.  The base is
 * examples/two-tenants.json; test_cfg_inc_rand.c holds the differential
 * test over random batches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cfg_htab.h"
#include "cfg_json.h"
#include "test_cfg_inc.h"

#define EXAMPLE CFG_EXAMPLES_DIR "/two-tenants.json"

static struct cfg *run;

static void
fresh(void)
{
	cfg_free(run);
	run = cfg_load_file(EXAMPLE, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
}

/* The number of changes of @kind and @op in @inc. */
static uint32_t
count(const struct cfg_inc *inc, int kind, int op)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < inc->n; i++)
		n += inc->ch[i].kind == kind && inc->ch[i].op == op;
	return n;
}

/* A request with @put and @del (JSON object bodies, may be empty). */
static char *
req(const char *put, const char *del)
{
	static char buf[8192];

	snprintf(buf, sizeof(buf), "{\"op\": \"apply\", \"put\": {%s}, \"delete\": {%s}}", put, del);
	return buf;
}

#define EP_NEW \
	"\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.12\", \"host\": \"10.0.0.1\", " \
	"\"port\": \"vm-blue-1\", \"mac\": \"02:00:00:00:aa:12\"}, " \
	"{\"tenant\": \"blue\", \"vip\": \"192.168.1.30\", \"host\": \"10.0.0.3\"}]"
#define QP(vip, vqpn, pqpn, type, pvip, pvqpn) \
	"{\"tenant\": \"blue\", \"vip\": \"" vip "\", \"vqpn\": " #vqpn ", \"pqpn\": " #pqpn ", \"type\": \"" type \
	"\", \"peer\": {\"vip\": \"" pvip "\", \"vqpn\": " #pvqpn "}}"
#define PAIR QP("192.168.1.12", 40, 5000, "rc", "192.168.1.30", 41) ", " QP("192.168.1.30", 41, 6000, "rc", "192.168.1.12", 40)
#define QPKEY(vip, vqpn) "{\"tenant\": \"blue\", \"vip\": \"" vip "\", \"vqpn\": " #vqpn "}"

static void
test_add_replace_delete_pair(void)
{
	struct cfg_inc inc;

	fresh();
	CU_ASSERT_EQUAL(run_both(&run, req(EP_NEW ", \"qps\": [" PAIR "]", ""), &inc), BOTH_INC);
	CU_ASSERT_EQUAL(inc.n, 4);
	CU_ASSERT_EQUAL(count(&inc, CFG_DK_ENDPOINTS, CFG_INC_ADD), 2);
	CU_ASSERT_EQUAL(count(&inc, CFG_DK_QPS, CFG_INC_ADD), 2);
	CU_ASSERT(inc.n == 4 && inc.ch[0].kind == CFG_DK_ENDPOINTS && inc.ch[3].kind == CFG_DK_QPS);
	CU_ASSERT_EQUAL(inc.sum.put[CFG_DK_QPS], 2);
	cfg_inc_release(&inc);
	/* A new pqpn for one half: a replace. */
	CU_ASSERT_EQUAL(run_both(&run, req("\"qps\": [" QP("192.168.1.12", 40, 5001, "rc", "192.168.1.30", 41) "]",
					   ""), &inc), BOTH_INC);
	CU_ASSERT(inc.n == 1 && inc.ch[0].op == CFG_INC_REPLACE && inc.ch[0].old.qp.pqpn == 5000 &&
		  inc.ch[0].new.qp.pqpn == 5001);
	cfg_inc_release(&inc);
	/* Both halves and their endpoints go: QPs first, endpoints last. */
	CU_ASSERT_EQUAL(run_both(&run, req("", "\"qps\": [" QPKEY("192.168.1.12", 40) ", " QPKEY("192.168.1.30", 41)
					   "], \"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.12\"}, "
					   "{\"tenant\": \"blue\", \"vip\": \"192.168.1.30\"}]"), &inc), BOTH_INC);
	CU_ASSERT(inc.n == 4 && inc.ch[0].op == CFG_INC_DELETE && inc.ch[0].kind == CFG_DK_QPS &&
		  inc.ch[3].kind == CFG_DK_ENDPOINTS);
	cfg_inc_release(&inc);
	/* An existing pair replaced as a whole, with the pqpns traded. */
	CU_ASSERT_EQUAL(run_both(&run, req("\"qps\": [" QP("192.168.1.10", 17, 8193, "uc", "192.168.1.20", 33) ", "
					   QP("192.168.1.20", 33, 4097, "uc", "192.168.1.10", 17) "]", ""), NULL),
			BOTH_INC);
}

static void
test_ud_and_mrs(void)
{
	struct cfg_inc inc;

	fresh();
	CU_ASSERT_EQUAL(run_both(&run, req("\"qps\": [{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"vqpn\": 50, "
					   "\"pqpn\": 7000, \"type\": \"ud\"}]", ""), NULL), BOTH_INC);
	CU_ASSERT_EQUAL(run_both(&run, req("\"mrs\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", "
					   "\"rkey\": 7, \"addr\": 4096, \"length\": 4096, \"target_rkey\": 8, "
					   "\"target_addr\": 8192, \"access\": [\"remote_read\"]}, "
					   "{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"rkey\": \"0x00001234\", "
					   "\"addr\": \"0x7f0000000000\", \"length\": 4096, \"target_rkey\": 9, "
					   "\"target_addr\": 0, \"access\": [\"remote_write\"]}]", ""), &inc), BOTH_INC);
	CU_ASSERT_EQUAL(count(&inc, CFG_DK_MRS, CFG_INC_ADD), 1);
	CU_ASSERT_EQUAL(count(&inc, CFG_DK_MRS, CFG_INC_REPLACE), 1);
	cfg_inc_release(&inc);
	CU_ASSERT_EQUAL(run_both(&run, req("", "\"mrs\": [{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", "
					   "\"rkey\": \"0x1234\"}], \"qps\": [{\"tenant\": \"red\", \"vip\": "
					   "\"192.168.1.10\", \"vqpn\": 50}]"), NULL), BOTH_INC);
}

#define EP_XRC(vip, host, psrqn) \
	"{\"tenant\": \"blue\", \"vip\": \"" vip "\", \"host\": \"" host "\", \"xrc_srqs\": " \
	"[{\"vsrqn\": 5, \"psrqn\": " #psrqn "}]}"

static void
test_xrc_endpoints(void)
{
	fresh();
	CU_ASSERT_EQUAL(run_both(&run, req("\"endpoints\": [" EP_XRC("192.168.1.40", "10.0.0.2", 900) ", "
					   EP_XRC("192.168.1.41", "10.0.0.3", 900) "], \"qps\": ["
					   QP("192.168.1.40", 60, 9000, "xrc_ini", "192.168.1.41", 61) ", "
					   QP("192.168.1.41", 61, 9001, "xrc_tgt", "192.168.1.40", 60) "]", ""), NULL),
			BOTH_INC);
	/* The psrqn is taken on that host. */
	CU_ASSERT_EQUAL(run_both(&run, req("\"endpoints\": [" EP_XRC("192.168.1.42", "10.0.0.2", 900) "]", ""), NULL),
			BOTH_REJECTED);
	/* Free again once its holder goes in the same batch. */
	CU_ASSERT_EQUAL(run_both(&run, req("\"endpoints\": [" EP_XRC("192.168.1.42", "10.0.0.2", 900) "]",
					   "\"qps\": [" QPKEY("192.168.1.40", 60) ", " QPKEY("192.168.1.41", 61) "], "
					   "\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.40\"}]"), NULL),
			BOTH_INC);
}

static void
test_not_eligible(void)
{
	struct cfg_inc inc;

	fresh();
	/* The same endpoint again is no change. */
	CU_ASSERT_EQUAL(run_both(&run, req("\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", "
					   "\"host\": \"10.0.0.2\"}]", ""), &inc), BOTH_INC);
	CU_ASSERT(inc.n == 0 && inc.sum.put[CFG_DK_ENDPOINTS] == 1);
	cfg_inc_release(&inc);
	/* A tenant put, or an endpoint modified: the full path. */
	CU_ASSERT_EQUAL(run_both(&run, req("\"tenants\": [{\"name\": \"red\", \"vni\": 200, \"max_qps\": 65}]", ""),
				 NULL), BOTH_FULL);
	CU_ASSERT_EQUAL(run_both(&run, req("\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", "
					   "\"host\": \"10.0.0.5\"}]", ""), NULL), BOTH_FULL);
	/* An empty tenants array is no tenant change. */
	CU_ASSERT_EQUAL(run_both(&run, req("\"tenants\": []", "\"tenants\": []"), NULL), BOTH_INC);
}

static void
test_errors(void)
{
	static const char *const bad[][2] = {
		/* pqpn used on the host */
		{ "\"qps\": [" QP("192.168.1.11", 70, 4097, "rc", "192.168.1.20", 71) ", "
		  QP("192.168.1.20", 71, 9999, "rc", "192.168.1.11", 70) "]", "" },
		/* the same pqpn twice in the batch */
		{ "\"qps\": [" QP("192.168.1.11", 70, 9998, "rc", "192.168.1.10", 71) ", "
		  QP("192.168.1.10", 71, 9998, "rc", "192.168.1.11", 70) "]", "" },
		/* a missing peer */
		{ "\"qps\": [" QP("192.168.1.11", 70, 9990, "rc", "192.168.1.20", 71) "]", "" },
		/* a peer of the wrong type */
		{ "\"qps\": [" QP("192.168.1.11", 70, 9990, "rc", "192.168.1.20", 71) ", "
		  QP("192.168.1.20", 71, 9991, "uc", "192.168.1.11", 70) "]", "" },
		/* a peer that names another QP */
		{ "\"qps\": [" QP("192.168.1.11", 70, 9990, "rc", "192.168.1.20", 71) ", "
		  QP("192.168.1.20", 71, 9991, "rc", "192.168.1.11", 72) "]", "" },
		/* its own peer */
		{ "\"qps\": [" QP("192.168.1.11", 70, 9990, "rc", "192.168.1.11", 70) "]", "" },
		/* one half of a pair deleted */
		{ "", "\"qps\": [" QPKEY("192.168.1.10", 17) "]" },
		/* one half of a pair replaced so that it names another */
		{ "\"qps\": [" QP("192.168.1.10", 17, 4097, "rc", "192.168.1.11", 18) "]", "" },
		/* an unknown endpoint */
		{ "\"qps\": [{\"tenant\": \"blue\", \"vip\": \"10.9.9.9\", \"vqpn\": 70, \"pqpn\": 9990, \"type\": "
		  "\"ud\"}]", "" },
		/* an endpoint deleted while QPs and an MR name it */
		{ "", "\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\"}]" },
		/* duplicate keys */
		{ "\"mrs\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"rkey\": 7, \"addr\": 4096, "
		  "\"length\": 4096, \"target_rkey\": 8, \"target_addr\": 8192, \"access\": [\"remote_read\"]}, "
		  "{\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"rkey\": 7, \"addr\": 4096, "
		  "\"length\": 4096, \"target_rkey\": 8, \"target_addr\": 8192, \"access\": [\"remote_read\"]}]", "" },
		/* a delete of what does not exist, twice of what does */
		{ "", "\"qps\": [" QPKEY("192.168.1.10", 99) "]" },
		{ "", "\"mrs\": [{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"rkey\": \"0x1234\"}, "
		  "{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"rkey\": \"0x1234\"}]" },
		/* a port of another tenant, an uplink as a port */
		{ "\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.50\", \"host\": \"10.0.0.1\", "
		  "\"port\": \"vm-red-1\", \"mac\": \"02:00:00:00:aa:50\"}]", "" },
		{ "\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.50\", \"host\": \"10.0.0.1\", "
		  "\"port\": \"fabric0\", \"mac\": \"02:00:00:00:aa:50\"}]", "" },
		/* a field out of range, an unknown key, an unknown tenant */
		{ "\"qps\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"vqpn\": 16777216, \"pqpn\": 9990, "
		  "\"type\": \"ud\"}]", "" },
		{ "\"qps\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"vqpn\": 70, \"pqpn\": 9990, "
		  "\"type\": \"ud\", \"colour\": 1}]", "" },
		{ "\"qps\": [{\"tenant\": \"green\", \"vip\": \"192.168.1.11\", \"vqpn\": 70, \"pqpn\": 9990, "
		  "\"type\": \"ud\"}]", "" },
	};
	char over[16384];
	int n = 0;

	fresh();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum both_path p = run_both(&run, req(bad[i][0], bad[i][1]), NULL);

		if (p != BOTH_REJECTED)
			fprintf(stderr, "bad[%zu]: path %d\n", i, (int)p);
		CU_ASSERT_EQUAL(p, BOTH_REJECTED);
	}
	/* Not an object, an unknown top-level key. */
	CU_ASSERT_EQUAL(run_both(&run, "[]", NULL), BOTH_REJECTED);
	CU_ASSERT_EQUAL(run_both(&run, "{\"put\": {}, \"then\": 1}", NULL), BOTH_REJECTED);
	/* red allows 64 QPs and has 2: 63 more UD QPs exceed it. */
	n = snprintf(over, sizeof(over), "{\"put\": {\"qps\": [");
	for (int q = 0; q < 63; q++)
		n += snprintf(over + n, sizeof(over) - n, "%s{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", "
			      "\"vqpn\": %d, \"pqpn\": %d, \"type\": \"ud\"}", q ? ", " : "", 100 + q, 20000 + q);
	snprintf(over + n, sizeof(over) - n, "]}}");
	CU_ASSERT_EQUAL(run_both(&run, over, NULL), BOTH_REJECTED);
}

static void
test_diff(void)
{
	struct cfg *file;
	struct cfg_inc inc;
	struct canon a, b;

	fresh();
	/* The file: the example with a new connection, one QP replaced, an MR gone. */
	file = cfg_dup(run);
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	CU_ASSERT_EQUAL(run_both(&file, req(EP_NEW ", \"qps\": [" PAIR ", "
					    QP("192.168.1.10", 17, 4200, "rc", "192.168.1.20", 33) "]",
					    "\"mrs\": [{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"rkey\": 4660}]"),
				 NULL), BOTH_INC);
	CU_ASSERT_EQUAL_FATAL(cfg_inc_diff(run, file, &inc), 1);
	CU_ASSERT_EQUAL(inc.n, 6);
	CU_ASSERT_EQUAL(count(&inc, CFG_DK_QPS, CFG_INC_REPLACE), 1);
	CU_ASSERT_EQUAL(count(&inc, CFG_DK_MRS, CFG_INC_DELETE), 1);
	canon_build(run, false, &a);
	canon_build(file, false, &b);
	CU_ASSERT_FATAL(apply_lines(run, &inc, &a));
	CU_ASSERT(canon_equal(&a, &b));
	canon_free(&a);
	canon_free(&b);
	cfg_inc_release(&inc);
	/* The file's indexes were built: the next batch on it is incremental. */
	CU_ASSERT_PTR_NOT_NULL(file->inc);
	CU_ASSERT_EQUAL(run_both(&file, req("", "\"qps\": [" QPKEY("192.168.1.12", 40) ", "
					    QPKEY("192.168.1.30", 41) "]"), NULL), BOTH_INC);
	/* A tenant that differs, an endpoint modified: not for this path. */
	CU_ASSERT_EQUAL(run_both(&file, req("\"tenants\": [{\"name\": \"red\", \"vni\": 200, \"max_qps\": 65}]", ""),
				 NULL), BOTH_FULL);
	CU_ASSERT_EQUAL(cfg_inc_diff(run, file, &inc), 0);
	cfg_free(file);
	file = cfg_dup(run);
	CU_ASSERT_EQUAL(run_both(&file, req("\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", "
					    "\"host\": \"10.0.0.5\"}]", ""), NULL), BOTH_FULL);
	CU_ASSERT_EQUAL(cfg_inc_diff(run, file, &inc), 0);
	cfg_free(file);
}

/* The htab's keys here are the values themselves; hashes collide on purpose (few distinct). */
static bool
val_match(const void *ctx, uint32_t idx, const void *key)
{
	return ((const uint32_t *)ctx)[idx] == *(const uint32_t *)key;
}

static void
test_htab_remove_move(void)
{
	enum { N = 600 };
	static uint32_t val[N];
	static bool in[N];
	struct cfg_htab h;
	uint64_t rng = 7;

	CU_ASSERT_FATAL(cfg_htab_init(&h, 4) == 0);
	for (uint32_t i = 0; i < N; i++) {
		val[i] = i;
		CU_ASSERT_FATAL(cfg_htab_add(&h, i % 13 * 0x9e3779b1u, i) == 0);
		in[i] = true;
	}
	/* Remove a random half, in random order; then move some of the rest. */
	for (uint32_t n = 0; n < N / 2; n++) {
		uint32_t i;

		do {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			i = (uint32_t)(rng >> 33) % N;
		} while (!in[i]);
		CU_ASSERT(cfg_htab_remove(&h, i % 13 * 0x9e3779b1u, i) == 0);
		in[i] = false;
	}
	CU_ASSERT_EQUAL(h.n, N / 2);
	CU_ASSERT(cfg_htab_remove(&h, 0, N + 1) == -1);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t key = i;
		int64_t j = cfg_htab_lookup(&h, i % 13 * 0x9e3779b1u, val_match, val, &key);

		CU_ASSERT(in[i] ? j == (int64_t)i : j == -1);
	}
	/* Record i moves to the free place N - 1 - i when that one is out. */
	for (uint32_t i = 0; i < N / 2; i++) {
		uint32_t to = N - 1 - i, key = i;

		if (!in[i] || in[to] || to % 13 != i % 13)
			continue;
		CU_ASSERT(cfg_htab_move(&h, i % 13 * 0x9e3779b1u, i, to) == 0);
		val[to] = i;
		val[i] = UINT32_MAX;
		CU_ASSERT_EQUAL(cfg_htab_lookup(&h, i % 13 * 0x9e3779b1u, val_match, val, &key), (int64_t)to);
	}
	cfg_htab_free(&h);
}

int
main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("cfg_inc", NULL, NULL);
	CU_add_test(s, "add, replace and delete a QP pair", test_add_replace_delete_pair);
	CU_add_test(s, "UD QPs and memory regions", test_ud_and_mrs);
	CU_add_test(s, "endpoints with XRC SRQs", test_xrc_endpoints);
	CU_add_test(s, "batches for the full path", test_not_eligible);
	CU_add_test(s, "every error class", test_errors);
	CU_add_test(s, "file reload as a change list", test_diff);
	CU_add_test(s, "random batches on both paths", test_inc_random);
	CU_add_test(s, "hash index: remove and move", test_htab_remove_move);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	cfg_free(run);
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
