/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config/cfg_delta: batches of changes against examples/two-tenants.json.
 * Each test states the batch, then what the result holds or which errors,
 * by JSON path, the batch gets; a rejected batch must leave the running
 * configuration byte for byte as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cfg.h"
#include "cfg_delta.h"

static struct cfg *run;

static struct cfg *
apply(const char *json, struct cfg_errors *e)
{
	char *buf = strdup(json);
	struct cfg *c;

	memset(e, 0, sizeof(*e));
	c = cfg_delta_apply(run, buf, strlen(buf), "req", e, NULL);
	free(buf);
	return c;
}

/* True when some message of @e contains @s. */
static bool
has_err(const struct cfg_errors *e, const char *s)
{
	for (uint32_t i = 0; i < e->n; i++)
		if (strstr(e->msg[i], s))
			return true;
	for (uint32_t i = 0; i < e->n; i++)
		fprintf(stderr, "  got: %s\n", e->msg[i]);
	return false;
}

static int
find_qp(const struct cfg *c, const char *tenant, const char *vip, uint32_t vqpn)
{
	struct cfg_ip ip;
	int t = cfg_tenant_index(c, tenant);

	cfg_ip_parse(vip, &ip);
	for (uint32_t i = 0; i < c->n_qps; i++)
		if (c->qps[i].tenant == t && c->qps[i].vqpn == vqpn && cfg_ip_equal(&c->qps[i].vip, &ip))
			return (int)i;
	return -1;
}

/* A new connection between a new local endpoint and a new remote one. */
#define ADD_CONN \
	"{\"op\": \"apply\", \"put\": {" \
	"\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.12\", \"host\": \"10.0.0.1\", " \
	"\"port\": \"vm-blue-1\", \"mac\": \"02:00:00:00:aa:12\"}, " \
	"{\"tenant\": \"blue\", \"vip\": \"192.168.1.30\", \"host\": \"10.0.0.3\"}], " \
	"\"qps\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.12\", \"vqpn\": 40, \"pqpn\": 5000, \"type\": \"rc\", " \
	"\"peer\": {\"vip\": \"192.168.1.30\", \"vqpn\": 41}}, " \
	"{\"tenant\": \"blue\", \"vip\": \"192.168.1.30\", \"vqpn\": 41, \"pqpn\": 6000, \"type\": \"rc\", " \
	"\"peer\": {\"vip\": \"192.168.1.12\", \"vqpn\": 40}}]}}"

static void
test_add(void)
{
	struct cfg_errors e;
	struct cfg *c = apply(ADD_CONN, &e);
	int q;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_qps, run->n_qps + 2);
	CU_ASSERT_EQUAL(c->n_endpoints, run->n_endpoints + 2);
	q = find_qp(c, "blue", "192.168.1.12", 40);
	CU_ASSERT_FATAL(q >= 0);
	CU_ASSERT_EQUAL(c->qps[q].pqpn, 5000);
	CU_ASSERT(c->qps[q].peer == find_qp(c, "blue", "192.168.1.30", 41));
	CU_ASSERT(c->qps[c->qps[q].peer].peer == q);
	CU_ASSERT_EQUAL(c->tenants[cfg_tenant_index(c, "blue")].n_qps,
			run->tenants[cfg_tenant_index(run, "blue")].n_qps + 2);
	/* Untouched records are the same. */
	q = find_qp(c, "red", "192.168.1.10", 17);
	CU_ASSERT(q >= 0 && c->qps[q].pqpn == 4098);
	CU_ASSERT_STRING_EQUAL(c->path, run->path);
	cfg_free(c);
}

static void
test_modify_and_delete(void)
{
	struct cfg_errors e;
	struct cfg *c;
	int q;

	/* Modify: the same key, another pqpn and a rate. */
	c = apply("{\"put\": {\"qps\": [{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"vqpn\": 17, "
		  "\"pqpn\": 4500, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.20\", \"vqpn\": 33}, "
		  "\"rate\": {\"gbps\": 2}}]}}", &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_qps, run->n_qps);
	q = find_qp(c, "red", "192.168.1.10", 17);
	CU_ASSERT(q >= 0 && c->qps[q].pqpn == 4500 && c->qps[q].rate.set && c->qps[q].rate.bps == 2000000000ull);
	cfg_free(c);

	/* Delete both ends of a connection. */
	c = apply("{\"delete\": {\"qps\": [{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"vqpn\": 17}, "
		  "{\"tenant\": \"red\", \"vip\": \"192.168.1.20\", \"vqpn\": 33}]}}", &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_qps, run->n_qps - 2);
	CU_ASSERT(find_qp(c, "red", "192.168.1.10", 17) < 0);
	/* Peers are renumbered. */
	for (uint32_t i = 0; i < c->n_qps; i++)
		if (c->qps[i].has_peer)
			CU_ASSERT(c->qps[c->qps[i].peer].peer == (int)i);
	cfg_free(c);

	/* Delete and put the same key in one batch: a replacement. */
	c = apply("{\"delete\": {\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.20\"}]}, "
		  "\"put\": {\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"host\": \"10.0.0.9\"}]}}",
		  &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_endpoints, run->n_endpoints);
	cfg_free(c);
}

static void
test_errors(void)
{
	struct cfg_errors e;

	/* One-way peer: deleting one end leaves the other naming it. */
	CU_ASSERT_PTR_NULL(apply("{\"delete\": {\"qps\": [{\"tenant\": \"red\", \"vip\": \"192.168.1.10\", "
				 "\"vqpn\": 17}]}}", &e));
	CU_ASSERT(has_err(&e, "req: qps{red 192.168.1.20 33}.peer: 192.168.1.10 qp 17 is not a qp of tenant \"red\""));
	cfg_errors_clear(&e);

	/* A pqpn already used on the host, field errors by path, an unknown tenant. */
	CU_ASSERT_PTR_NULL(apply("{\"put\": {\"qps\": ["
				 "{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 50, \"pqpn\": 4097, \"type\": \"ud\"},"
				 "{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 0, \"pqpn\": 7, \"type\": \"ud\"},"
				 "{\"tenant\": \"green\", \"vip\": \"192.168.1.10\", \"vqpn\": 51, \"pqpn\": 9, \"type\": \"ud\"},"
				 "{\"tenant\": \"blue\", \"vip\": \"192.168.1.99\", \"vqpn\": 52, \"pqpn\": 10, \"type\": \"ud\", "
				 "\"bogus\": 1}]}}", &e));
	CU_ASSERT(has_err(&e, "req: put.qps[0].pqpn: 4097 is already used on host 10.0.0.1"));
	CU_ASSERT(has_err(&e, "req: put.qps[1].vqpn:"));
	CU_ASSERT(has_err(&e, "req: put.qps[2].tenant: unknown tenant \"green\""));
	CU_ASSERT(has_err(&e, "req: put.qps[3].bogus: unknown key"));
	cfg_errors_clear(&e);

	/* Deletes of what does not exist; a tenant that still has records and a port. */
	CU_ASSERT_PTR_NULL(apply("{\"delete\": {\"mrs\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", "
				 "\"rkey\": 1}], \"tenants\": [\"red\", \"nobody\"]}}", &e));
	CU_ASSERT(has_err(&e, "req: delete.mrs[0]: no such mr"));
	CU_ASSERT(has_err(&e, "req: delete.tenants[1]: no tenant \"nobody\""));
	CU_ASSERT(has_err(&e, "req: delete.tenants[0]: tenant \"red\" still has port \"vm-red-1\""));
	CU_ASSERT(has_err(&e, "tenant \"red\" is deleted by delete.tenants[0] and this record still names it"));
	cfg_errors_clear(&e);

	/* Quota, a duplicate VNI, syntax, unknown sections. */
	CU_ASSERT_PTR_NULL(apply("{\"put\": {\"tenants\": [{\"name\": \"red\", \"vni\": 100, \"max_qps\": 1}]}}", &e));
	CU_ASSERT(has_err(&e, "req: put.tenants[0].vni: 100 is already the vni of tenant \"blue\""));
	CU_ASSERT(has_err(&e, "req: put.tenants[0].max_qps: 1 is below the tenant's 2 qps"));
	cfg_errors_clear(&e);
	CU_ASSERT_PTR_NULL(apply("{\"put\": {\"qps\": [}", &e));
	CU_ASSERT(has_err(&e, "req:1:"));
	cfg_errors_clear(&e);
	CU_ASSERT_PTR_NULL(apply("{\"put\": {\"ports\": []}, \"x\": 1}", &e));
	CU_ASSERT(has_err(&e, "req: put.ports: unknown key"));
	CU_ASSERT(has_err(&e, "req: x: unknown key"));
	cfg_errors_clear(&e);

	/* The same key twice in one batch. */
	CU_ASSERT_PTR_NULL(apply("{\"put\": {\"endpoints\": ["
				 "{\"tenant\": \"blue\", \"vip\": \"192.168.1.40\", \"host\": \"10.0.0.3\"},"
				 "{\"tenant\": \"blue\", \"vip\": \"192.168.1.40\", \"host\": \"10.0.0.4\"}]}}", &e));
	CU_ASSERT(has_err(&e, "req: put.endpoints[1]: the same key as put.endpoints[0]"));
	cfg_errors_clear(&e);
}

static void
test_tenant_life(void)
{
	struct cfg_errors e;
	struct cfg *c = apply("{\"put\": {\"tenants\": [{\"name\": \"green\", \"vni\": 300, \"max_qps\": 2}], "
			      "\"endpoints\": [{\"tenant\": \"green\", \"vip\": \"10.9.0.1\", \"host\": \"10.0.0.5\"}, "
			      "{\"tenant\": \"green\", \"vip\": \"10.9.0.2\", \"host\": \"10.0.0.6\"}], "
			      "\"qps\": [{\"tenant\": \"green\", \"vip\": \"10.9.0.1\", \"vqpn\": 2, \"pqpn\": 2, \"type\": \"uc\", "
			      "\"peer\": {\"vip\": \"10.9.0.2\", \"vqpn\": 3}}, "
			      "{\"tenant\": \"green\", \"vip\": \"10.9.0.2\", \"vqpn\": 3, \"pqpn\": 2, \"type\": \"uc\", "
			      "\"peer\": {\"vip\": \"10.9.0.1\", \"vqpn\": 2}}]}}", &e);
	struct cfg *saved = run, *c2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_tenants, 3);
	/* Now delete it with everything it has, against the result. */
	run = c;
	c2 = apply("{\"delete\": {\"tenants\": [{\"name\": \"green\"}], \"endpoints\": ["
		   "{\"tenant\": \"green\", \"vip\": \"10.9.0.1\"}, {\"tenant\": \"green\", \"vip\": \"10.9.0.2\"}], "
		   "\"qps\": [{\"tenant\": \"green\", \"vip\": \"10.9.0.1\", \"vqpn\": 2}, "
		   "{\"tenant\": \"green\", \"vip\": \"10.9.0.2\", \"vqpn\": 3}]}}", &e);
	run = saved;
	CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
	CU_ASSERT_EQUAL(c2->n_tenants, 2);
	CU_ASSERT_EQUAL(c2->n_qps, run->n_qps);
	/* Ports name tenants by index: still the right one. */
	for (uint32_t i = 0; i < c2->n_ports; i++)
		if (c2->ports[i].tenant >= 0)
			CU_ASSERT_STRING_EQUAL(c2->tenants[c2->ports[i].tenant].name,
					       run->tenants[run->ports[i].tenant].name);
	cfg_free(c2);
	cfg_free(c);
}

static void
test_dup(void)
{
	struct cfg *c = cfg_dup(run);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_qps, run->n_qps);
	CU_ASSERT_EQUAL(c->n_mrs, run->n_mrs);
	CU_ASSERT_EQUAL(c->n_acls, run->n_acls);
	for (uint32_t i = 0; i < c->n_qps; i++)
		CU_ASSERT(memcmp(&c->qps[i], &run->qps[i], sizeof(c->qps[i])) == 0);
	cfg_free(c);
}

int
main(void)
{
	struct cfg_errors e = { 0 };
	CU_pSuite s;
	unsigned fails;

	run = cfg_load_file(CFG_EXAMPLES_DIR "/two-tenants.json", &e);
	if (!run) {
		cfg_errors_print(&e, stderr);
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("cfg_delta", NULL, NULL);
	CU_add_test(s, "add a connection", test_add);
	CU_add_test(s, "modify and delete", test_modify_and_delete);
	CU_add_test(s, "errors by JSON path", test_errors);
	CU_add_test(s, "a tenant's life", test_tenant_life);
	CU_add_test(s, "copy", test_dup);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	cfg_free(run);
	return fails ? 1 : 0;
}
