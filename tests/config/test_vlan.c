/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VLAN policies: the "vlan" key of ports and tenants in the configuration
 * (defaults, every error with its JSON path), their resolution in the
 * overlay (a tenant's own policy on the fabric, else the uplink's; "vni"),
 * and the two rules the data plane applies per frame: which tags a side
 * accepts and which tags a frame leaves it with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cfg.h"
#include "ovl.h"

#define NAME "t.json"

static struct cfg_errors errs;

/*
 * A two-tenant document; @up, @blue_port and @blue are inserted into the
 * uplink, blue's port and blue's tenant record (each "" or ",'vlan':...").
 * Red has vni 5000, which is no VID.
 */
static struct cfg *
load(const char *up, const char *blue_port, const char *blue)
{
	char buf[4096];
	struct cfg *c;

	snprintf(buf, sizeof(buf),
		 "{'version':1,"
		 "'tenants':[{'name':'blue','vni':100%s},{'name':'red','vni':5000}],"
		 "'ports':[{'name':'fabric0','device':'net_pcap0','role':'uplink','ip':'10.0.0.1',"
		 "'mac':'02:00:00:00:00:01'%s},"
		 "{'name':'vm-blue-1','device':'net_pcap1','role':'tenant','tenant':'blue',"
		 "'mac':'02:00:00:00:01:01'%s},"
		 "{'name':'vm-red-1','device':'net_pcap2','role':'tenant','tenant':'red',"
		 "'mac':'02:00:00:00:02:01'}]}",
		 blue, up, blue_port);
	for (char *p = buf; *p; p++)
		if (*p == '\'')
			*p = '"';
	cfg_errors_clear(&errs);
	c = cfg_load_string(buf, NAME, &errs);
	return c;
}

/* Exactly one message, @msg. */
static void
expect_error(const char *msg, const char *up, const char *blue_port, const char *blue)
{
	struct cfg *c = load(up, blue_port, blue);

	CU_ASSERT_PTR_NULL(c);
	cfg_free(c);
	CU_ASSERT_EQUAL(errs.n, 1);
	if (errs.n != 1 || strcmp(errs.msg[0], msg) != 0) {
		fprintf(stderr, "\nexpected: %s\n", msg);
		for (uint32_t i = 0; i < errs.n; i++)
			fprintf(stderr, "got:      %s\n", errs.msg[i]);
		CU_FAIL("message");
	}
}

static void
test_defaults(void)
{
	struct cfg *c = load("", "", "");

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_FALSE(c->ports[0].vlan.set);
	CU_ASSERT_FALSE(c->ports[1].vlan.set);
	CU_ASSERT_FALSE(c->tenants[0].vlan.set);
	cfg_free(c);
}

static void
test_parse(void)
{
	struct cfg *c = load(",'vlan':{'mode':'untagged'}", ",'vlan':{'mode':'tagged','vid':10,'pcp':'keep'}",
			     ",'vlan':{'mode':'vni','pcp':'dscp'}");

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_TRUE(c->ports[0].vlan.set);
	CU_ASSERT_EQUAL(c->ports[0].vlan.mode, CFG_VLAN_UNTAGGED);
	CU_ASSERT_EQUAL(c->ports[1].vlan.mode, CFG_VLAN_TAGGED);
	CU_ASSERT_EQUAL(c->ports[1].vlan.vid, 10);
	CU_ASSERT_EQUAL(c->ports[1].vlan.pcp, CFG_PCP_KEEP);
	CU_ASSERT_EQUAL(c->tenants[0].vlan.mode, CFG_VLAN_VNI);
	CU_ASSERT_EQUAL(c->tenants[0].vlan.pcp, CFG_PCP_DSCP);
	cfg_free(c);
	/* "keep" said out loud is the default. */
	c = load(",'vlan':{'mode':'keep'}", "", "");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->ports[0].vlan.mode, CFG_VLAN_KEEP);
	cfg_free(c);
}

static void
test_errors(void)
{
	expect_error("t.json: ports[1].vlan.vid: missing required key (mode \"tagged\" needs a vid)", "",
		     ",'vlan':{'mode':'tagged'}", "");
	expect_error("t.json: ports[1].vlan.vid: only allowed with mode \"tagged\"", "",
		     ",'vlan':{'mode':'untagged','vid':7}", "");
	expect_error("t.json: ports[0].vlan.pcp: only allowed with mode \"tagged\" or \"vni\"",
		     ",'vlan':{'mode':'keep','pcp':'dscp'}", "", "");
	expect_error("t.json: ports[1].vlan.vid: 4095 is out of range (max 4094)", "",
		     ",'vlan':{'mode':'tagged','vid':4095}", "");
	expect_error("t.json: ports[1].vlan.vid: must be greater than 0", "",
		     ",'vlan':{'mode':'tagged','vid':0}", "");
	expect_error("t.json: tenants[0].vlan.mode: missing required key", "", "", ",'vlan':{'vid':5}");
	expect_error("t.json: tenants[0].vlan.pcp: \"cos\" is not one of \"dscp\", \"keep\"", "", "",
		     ",'vlan':{'mode':'vni','pcp':'cos'}");
	expect_error("t.json: tenants[0].vlan.tpid: unknown key", "", "", ",'vlan':{'mode':'untagged','tpid':1}");
	expect_error("t.json: tenants[0].vlan: expected an object", "", "", ",'vlan':'untagged'");
	/* An uplink's "vni" covers every tenant without its own policy: red's vni is no VID. */
	expect_error("t.json: ports[0].vlan.mode: \"vni\": the vni 5000 of tenant \"red\" is above 4094 "
		     "(a VID has 12 bits and 4095 is reserved)",
		     ",'vlan':{'mode':'vni'}", "", "");
}

static void
test_resolve(void)
{
	char err[256] = "";
	struct cfg *c;
	struct ovl *o;
	struct ovl_vlan v;

	/* Blue tagged 300 on the fabric by its own policy, red untagged by the uplink's, blue's port 10. */
	c = load(",'vlan':{'mode':'untagged'}", ",'vlan':{'mode':'tagged','vid':10,'pcp':'keep'}",
		 ",'vlan':{'mode':'vni'}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE(o->vlan_any);
	v = ovl_vlan_of(o, 0, 0);
	CU_ASSERT_EQUAL(v.mode, CFG_VLAN_TAGGED);
	CU_ASSERT_EQUAL(v.vid, 100);
	CU_ASSERT_EQUAL(v.pcp, CFG_PCP_DSCP);
	v = ovl_vlan_of(o, 1, 0);
	CU_ASSERT_EQUAL(v.mode, CFG_VLAN_UNTAGGED);
	v = ovl_vlan_of(o, 0, 1);
	CU_ASSERT_EQUAL(v.mode, CFG_VLAN_TAGGED);
	CU_ASSERT_EQUAL(v.vid, 10);
	CU_ASSERT_EQUAL(v.pcp, CFG_PCP_KEEP);
	v = ovl_vlan_of(o, 1, 2);
	CU_ASSERT_EQUAL(v.mode, CFG_VLAN_KEEP);
	ovl_free(o);
	cfg_free(c);

	/* No policy anywhere: nothing to do per frame. */
	c = load("", "", "");
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_FALSE(o->vlan_any);
	ovl_free(o);

	/* A configuration that skipped the loader's checks (a delta) is still refused by the overlay. */
	c->ports[0].vlan = (struct cfg_vlan){ .set = true, .mode = CFG_VLAN_VNI };
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NULL(o);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "tenant \"red\": vlan mode \"vni\" on port fabric0, but its vni 5000"));
	ovl_free(o);
	cfg_free(c);
}

/* A parsed frame with @n tags. */
static struct roce_pkt
tagged(uint8_t n, uint16_t tpid0, uint16_t tci0, uint16_t tci1)
{
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	p.n_vlan = n;
	p.vlan_tpid[0] = tpid0;
	p.vlan_tci[0] = tci0;
	p.vlan_tpid[1] = ROCE_ETHERTYPE_VLAN;
	p.vlan_tci[1] = tci1;
	return p;
}

static void
test_accepts(void)
{
	const struct ovl_vlan keep = { .mode = CFG_VLAN_KEEP }, untagged = { .mode = CFG_VLAN_UNTAGGED },
			      t10 = { .mode = CFG_VLAN_TAGGED, .vid = 10 };
	struct roce_pkt none = tagged(0, 0, 0, 0), v10 = tagged(1, 0x8100, 0x600a, 0),
			v20 = tagged(1, 0x8100, 0x0014, 0), prio = tagged(1, 0x8100, 0xa000, 0),
			qinq = tagged(2, 0x88a8, 0x000a, 0x000a), ad10 = tagged(1, 0x88a8, 0x000a, 0);

	CU_ASSERT_TRUE(ovl_vlan_accepts(&keep, &none));
	CU_ASSERT_TRUE(ovl_vlan_accepts(&keep, &qinq));
	CU_ASSERT_TRUE(ovl_vlan_accepts(&untagged, &none));
	CU_ASSERT_TRUE(ovl_vlan_accepts(&untagged, &prio));     /* a priority tag, VID 0 */
	CU_ASSERT_FALSE(ovl_vlan_accepts(&untagged, &v10));
	CU_ASSERT_FALSE(ovl_vlan_accepts(&untagged, &qinq));
	CU_ASSERT_TRUE(ovl_vlan_accepts(&t10, &v10));
	CU_ASSERT_FALSE(ovl_vlan_accepts(&t10, &v20));
	CU_ASSERT_FALSE(ovl_vlan_accepts(&t10, &none));
	CU_ASSERT_FALSE(ovl_vlan_accepts(&t10, &prio));
	CU_ASSERT_FALSE(ovl_vlan_accepts(&t10, &qinq));         /* two tags, the outer one 10 */
	CU_ASSERT_FALSE(ovl_vlan_accepts(&t10, &ad10));         /* an 802.1ad tag is not an 802.1Q one */
}

static void
test_tags(void)
{
	const struct ovl_vlan keep = { .mode = CFG_VLAN_KEEP }, untagged = { .mode = CFG_VLAN_UNTAGGED },
			      by_dscp = { .mode = CFG_VLAN_TAGGED, .vid = 300, .pcp = CFG_PCP_DSCP },
			      kept = { .mode = CFG_VLAN_TAGGED, .vid = 300, .pcp = CFG_PCP_KEEP };
	const uint16_t in2[2] = { 0xa00a, 0x2014 }, in0[2] = { 0, 0 };
	uint16_t out[2];
	uint8_t n;

	ovl_vlan_tags(&keep, 2, in2, 46, &n, out);
	CU_ASSERT(n == 2 && out[0] == 0xa00a && out[1] == 0x2014);
	ovl_vlan_tags(&untagged, 2, in2, 46, &n, out);
	CU_ASSERT_EQUAL(n, 0);
	/* DSCP 46 (EF) >> 3 = PCP 5; DSCP 26 (AF31) >> 3 = 3; DSCP 7 = 0. */
	ovl_vlan_tags(&by_dscp, 0, in0, 46, &n, out);
	CU_ASSERT(n == 1 && out[0] == (5 << 13 | 300));
	ovl_vlan_tags(&by_dscp, 2, in2, 26, &n, out);
	CU_ASSERT(n == 1 && out[0] == (3 << 13 | 300));
	ovl_vlan_tags(&by_dscp, 0, in0, 7, &n, out);
	CU_ASSERT(n == 1 && out[0] == 300);
	/* "keep": the outer tag's PCP (5 in 0xa00a), DEI dropped; 0 when untagged. */
	ovl_vlan_tags(&kept, 2, in2, 0, &n, out);
	CU_ASSERT(n == 1 && out[0] == (5 << 13 | 300));
	ovl_vlan_tags(&kept, 0, in0, 46, &n, out);
	CU_ASSERT(n == 1 && out[0] == 300);
}

int
main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("vlan policies", NULL, NULL);
	CU_add_test(s, "absent: keep", test_defaults);
	CU_add_test(s, "parsed", test_parse);
	CU_add_test(s, "errors name their JSON path", test_errors);
	CU_add_test(s, "resolved per tenant and port", test_resolve);
	CU_add_test(s, "tags a side accepts", test_accepts);
	CU_add_test(s, "tags a frame leaves with", test_tags);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	cfg_errors_clear(&errs);
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
