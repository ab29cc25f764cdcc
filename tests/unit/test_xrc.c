/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC in the configuration and the overlay: the QP types xrc_ini and
 * xrc_tgt paired through "peer", an endpoint's "xrc_srqs" with their checks
 * (24-bit, unique per endpoint, a psrqn once per host) in the file and in a
 * delta, and the overlay's SRQ lookups on both sides.
 *
 * The base document: host 10.0.0.1 (this one) runs blue's and red's
 * 192.168.1.10; 192.168.1.20 of both tenants is on 10.0.0.2. Blue's .10 QP
 * 40 initiates toward .20's target 41, and .10's target 42 answers .20's
 * initiator 43.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cfg.h"
#include "cfg_delta.h"
#include "ovl.h"

#define HEAD "{\"version\":1,\"tenants\":[{\"name\":\"blue\",\"vni\":100},{\"name\":\"red\",\"vni\":200}]," \
	"\"ports\":[{\"name\":\"fabric0\",\"device\":\"net_pcap0\",\"role\":\"uplink\",\"ip\":\"10.0.0.1\"," \
	"\"mac\":\"02:00:00:00:00:01\",\"gateway_mac\":\"02:00:00:00:00:fe\"}," \
	"{\"name\":\"vm-blue-1\",\"device\":\"net_pcap1\",\"role\":\"tenant\",\"tenant\":\"blue\"," \
	"\"mac\":\"02:00:00:00:01:01\"}," \
	"{\"name\":\"vm-red-1\",\"device\":\"net_pcap2\",\"role\":\"tenant\",\"tenant\":\"red\"," \
	"\"mac\":\"02:00:00:00:02:01\"}],"
#define EP_B10(srqs) "{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\",\"host\":\"10.0.0.1\"," \
	"\"port\":\"vm-blue-1\",\"mac\":\"02:00:00:00:aa:10\",\"xrc_srqs\":" srqs "}"
#define EP_B20(srqs) "{\"tenant\":\"blue\",\"vip\":\"192.168.1.20\",\"host\":\"10.0.0.2\",\"xrc_srqs\":" srqs "}"
#define EP_R10(srqs) "{\"tenant\":\"red\",\"vip\":\"192.168.1.10\",\"host\":\"10.0.0.1\"," \
	"\"port\":\"vm-red-1\",\"mac\":\"02:00:00:00:bb:10\",\"xrc_srqs\":" srqs "}"
#define EP_R20 "{\"tenant\":\"red\",\"vip\":\"192.168.1.20\",\"host\":\"10.0.0.2\"}"
#define SRQ(v, p) "{\"vsrqn\":" #v ",\"psrqn\":" #p "}"
#define B10_SRQS "[" SRQ(7, 5000) "," SRQ(8, 5001) "]"
#define B20_SRQS "[" SRQ(7, 6000) "]"
#define R10_SRQS "[" SRQ(7, 5002) "]"
#define QP(vip, vqpn, pqpn, type, pvip, pvqpn) \
	"{\"tenant\":\"blue\",\"vip\":\"" vip "\",\"vqpn\":" #vqpn ",\"pqpn\":" #pqpn ",\"type\":\"" type \
	"\",\"peer\":{\"vip\":\"" pvip "\",\"vqpn\":" #pvqpn "}}"
#define QPS_OK "[" QP("192.168.1.10", 40, 4140, "xrc_ini", "192.168.1.20", 41) "," \
	QP("192.168.1.20", 41, 8141, "xrc_tgt", "192.168.1.10", 40) "," \
	QP("192.168.1.10", 42, 4142, "xrc_tgt", "192.168.1.20", 43) "," \
	QP("192.168.1.20", 43, 8143, "xrc_ini", "192.168.1.10", 42) "]"
#define DOC(b10, b20, r10, qps, tail) HEAD "\"endpoints\":[" EP_B10(b10) "," EP_B20(b20) "," EP_R10(r10) "," \
	EP_R20 "],\"qps\":" qps tail "}"
#define DOC_OK DOC(B10_SRQS, B20_SRQS, R10_SRQS, QPS_OK, "")

static struct cfg_errors errs;

static struct cfg *
load(const char *json)
{
	cfg_errors_clear(&errs);
	return cfg_load_string(json, "x.json", &errs);
}

/* The load of @json fails with @n messages, the first @want. */
static void
expect_errors(const char *json, const char *want, uint32_t n)
{
	struct cfg *c = load(json);

	CU_ASSERT_PTR_NULL(c);
	cfg_free(c);
	if (errs.n != n || strcmp(errs.msg[0], want) != 0) {
		fprintf(stderr, "\nwanted: %s\ngot %u:\n", want, errs.n);
		cfg_errors_print(&errs, stderr);
	}
	CU_ASSERT_EQUAL(errs.n, n);
	CU_ASSERT(errs.n >= 1 && strcmp(errs.msg[0], want) == 0);
}

#define expect_error(json, want) expect_errors(json, want, 1)

static void
test_load(void)
{
	struct cfg *c = load(DOC_OK);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->qps[0].type, CFG_QP_XRC_INI);
	CU_ASSERT_EQUAL(c->qps[1].type, CFG_QP_XRC_TGT);
	CU_ASSERT_EQUAL(c->qps[0].peer, 1);
	CU_ASSERT_EQUAL(c->qps[2].peer, 3);
	CU_ASSERT_EQUAL(c->endpoints[0].n_xrc_srqs, 2);
	CU_ASSERT_EQUAL(c->endpoints[0].xrc_srqs[1].vsrqn, 8);
	CU_ASSERT_EQUAL(c->endpoints[0].xrc_srqs[1].psrqn, 5001);
	CU_ASSERT_EQUAL(c->endpoints[3].n_xrc_srqs, 0);
	cfg_free(c);
	/* 24-bit numbers: the largest is fine, as is a "0x" string. */
	c = load(DOC("[" SRQ(16777215, "0xffffff") "]", B20_SRQS, R10_SRQS, QPS_OK, ""));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->endpoints[0].xrc_srqs[0].psrqn, 0xffffff);
	cfg_free(c);
}

static void
test_errors(void)
{
	expect_error(DOC("[" SRQ(16777216, 5000) "]", B20_SRQS, R10_SRQS, QPS_OK, ""),
		     "x.json: endpoints[0].xrc_srqs[0].vsrqn: 16777216 is out of range (max 16777215)");
	expect_error(DOC("[" SRQ(7, 5000) "," SRQ(7, 5009) "]", B20_SRQS, R10_SRQS, QPS_OK, ""),
		     "x.json: endpoints[0].xrc_srqs[1].vsrqn: 7 is already an SRQ of this endpoint (xrc_srqs[0])");
	expect_error(DOC("[" SRQ(7, 5000) "," SRQ(9, 5000) "]", B20_SRQS, R10_SRQS, QPS_OK, ""),
		     "x.json: endpoints[0].xrc_srqs[1].psrqn: 5000 is already used by xrc_srqs[0]");
	/* A psrqn is the host's: another tenant's endpoint on the same host may not have it. */
	expect_error(DOC(B10_SRQS, B20_SRQS, "[" SRQ(7, 5001) "]", QPS_OK, ""),
		     "x.json: endpoints[2].xrc_srqs[0].psrqn: 5001 is already used on host 10.0.0.1 by "
		     "endpoints[0].xrc_srqs[1]");
	/* ... but on another host it may. */
	CU_ASSERT_PTR_NOT_NULL(load(DOC(B10_SRQS, "[" SRQ(7, 5000) "]", R10_SRQS, QPS_OK, "")));
	cfg_free(load(DOC(B10_SRQS, "[" SRQ(7, 5000) "]", R10_SRQS, QPS_OK, "")));
	expect_error(DOC("[" SRQ(1, 1) "," SRQ(2, 2) "," SRQ(3, 3) "," SRQ(4, 4) "," SRQ(5, 5) "," SRQ(6, 6) ","
			 SRQ(7, 7) "," SRQ(8, 8) "," SRQ(9, 9) "]", B20_SRQS, R10_SRQS, QPS_OK, ""),
		     "x.json: endpoints[0].xrc_srqs: 9 SRQs: at most 8 per endpoint");
	expect_error(DOC("[{\"vsrqn\":1,\"psrqn\":2,\"srqn\":3}]", B20_SRQS, R10_SRQS, QPS_OK, ""),
		     "x.json: endpoints[0].xrc_srqs[0].srqn: unknown key");
	expect_error(DOC("[{\"vsrqn\":1}]", B20_SRQS, R10_SRQS, QPS_OK, ""),
		     "x.json: endpoints[0].xrc_srqs[0].psrqn: missing required key");
	expect_error(DOC("{}", B20_SRQS, R10_SRQS, QPS_OK, ""), "x.json: endpoints[0].xrc_srqs: expected an array");
	/* Pairs: an initiator's peer is a target, and the reverse (each end reports). */
	expect_errors(DOC(B10_SRQS, B20_SRQS, R10_SRQS,
			 "[" QP("192.168.1.10", 40, 4140, "xrc_ini", "192.168.1.20", 41) ","
			 QP("192.168.1.20", 41, 8141, "xrc_ini", "192.168.1.10", 40) "]", ""),
		     "x.json: qps[0].peer: qps[1] (192.168.1.20 qp 41) is xrc_ini, not xrc_tgt", 2);
	expect_errors(DOC(B10_SRQS, B20_SRQS, R10_SRQS,
			 "[" QP("192.168.1.10", 40, 4140, "xrc_tgt", "192.168.1.20", 41) ","
			 QP("192.168.1.20", 41, 8141, "rc", "192.168.1.10", 40) "]", ""),
		     "x.json: qps[0].peer: qps[1] (192.168.1.20 qp 41) is rc, not xrc_ini", 2);
	expect_error(DOC(B10_SRQS, B20_SRQS, R10_SRQS,
			 "[{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\",\"vqpn\":40,\"pqpn\":4140,\"type\":\"xrc_ini\"}]", ""),
		     "x.json: qps[0].peer: missing required key (xrc_ini QPs need a peer)");
}

static struct cfg *
delta(const struct cfg *run, const char *req)
{
	char *buf = strdup(req);
	struct cfg *c;

	cfg_errors_clear(&errs);
	c = cfg_delta_apply(run, buf, strlen(buf), "d", &errs, NULL);
	free(buf);
	return c;
}

static void
test_delta(void)
{
	struct cfg *run = load(DOC_OK), *c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	/* Red's remote endpoint gains an SRQ: carried like any other field. */
	c = delta(run, "{\"put\":{\"endpoints\":[{\"tenant\":\"red\",\"vip\":\"192.168.1.20\",\"host\":\"10.0.0.2\","
		  "\"xrc_srqs\":[" SRQ(9, 6001) "]}]}}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->endpoints[3].n_xrc_srqs, 1);
	CU_ASSERT_EQUAL(c->endpoints[3].xrc_srqs[0].psrqn, 6001);
	CU_ASSERT_EQUAL(run->endpoints[3].n_xrc_srqs, 0);
	cfg_free(c);
	/* ... but not one that blue's 192.168.1.20 holds on 10.0.0.2. */
	c = delta(run, "{\"put\":{\"endpoints\":[{\"tenant\":\"red\",\"vip\":\"192.168.1.20\",\"host\":\"10.0.0.2\","
		  "\"xrc_srqs\":[" SRQ(9, 6000) "]}]}}");
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT(errs.n == 1 && strstr(errs.msg[0], "put.endpoints[0].xrc_srqs: psrqn 6000 is already used on host "
					"10.0.0.2 by the endpoint 192.168.1.20") != NULL);
	/* A field error of a put names the request's path. */
	c = delta(run, "{\"put\":{\"endpoints\":[{\"tenant\":\"red\",\"vip\":\"192.168.1.20\",\"host\":\"10.0.0.2\","
		  "\"xrc_srqs\":[" SRQ(9, 6001) "," SRQ(9, 6002) "]}]}}");
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT(errs.n == 1 && strstr(errs.msg[0], "put.endpoints[0].xrc_srqs[1].vsrqn: 9 is already an SRQ") != NULL);
	/* A target's peer turned into an RC QP: the pair no longer matches. */
	c = delta(run, "{\"put\":{\"qps\":[" QP("192.168.1.20", 41, 8141, "rc", "192.168.1.10", 40) "]}}");
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT(errs.n >= 1 && strstr(errs.msg[0], "the peer is a qp of type rc, not xrc_tgt") != NULL);
	cfg_free(run);
}

static void
test_overlay(void)
{
	const uint8_t b10[4] = { 192, 168, 1, 10 }, b20[4] = { 192, 168, 1, 20 };
	const uint8_t h1[4] = { 10, 0, 0, 1 }, h2[4] = { 10, 0, 0, 2 };
	struct cfg *c = load(DOC_OK);
	char err[256];
	struct ovl *o;
	uint32_t i, v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->n_srqs, 4);
	/* Tenant side: (tenant, vip, vsrqn) of any endpoint, local or remote. */
	i = ovl_lookup_srq_tenant(o, 0, b20, 4, 7);
	CU_ASSERT(i != OVL_NONE && o->srqs[i].psrqn == 6000 && o->srqs[i].endpoint == 1);
	i = ovl_lookup_srq_tenant(o, 1, b10, 4, 7);
	CU_ASSERT(i != OVL_NONE && o->srqs[i].psrqn == 5002 && o->srqs[i].endpoint == 2);
	CU_ASSERT_EQUAL(ovl_lookup_srq_tenant(o, 1, b20, 4, 7), OVL_NONE);
	CU_ASSERT_EQUAL(ovl_lookup_srq_tenant(o, 0, b10, 4, 9), OVL_NONE);
	/* Fabric side: (host, psrqn) of this host's endpoints only. */
	i = ovl_lookup_srq_fabric(o, h1, 4, 5001);
	CU_ASSERT(i != OVL_NONE && o->srqs[i].vsrqn == 8 && o->srqs[i].endpoint == 0);
	i = ovl_lookup_srq_fabric(o, h1, 4, 5002);
	CU_ASSERT(i != OVL_NONE && o->srqs[i].vsrqn == 7 && o->srqs[i].endpoint == 2);
	CU_ASSERT_EQUAL(ovl_lookup_srq_fabric(o, h2, 4, 6000), OVL_NONE);
	/* The SRQ keys live in their own table: no QP lookup finds them. */
	CU_ASSERT_EQUAL(ovl_lookup_fabric(o, h1, 4, 5001), OVL_NONE);
	/* XRC connections resolve like RC ones, both directions. */
	CU_ASSERT_EQUAL(o->n_conns, 2);
	v = ovl_lookup_tenant(o, 0, b20, 4, 41);
	CU_ASSERT_FATAL(v != OVL_NONE && !(v & OVL_V_QP));
	CU_ASSERT_EQUAL(o->conns[OVL_V_IDX(v)].l_type, CFG_QP_XRC_INI);
	CU_ASSERT_EQUAL(o->conns[OVL_V_IDX(v)].egress.dqpn, 8141);
	CU_ASSERT_EQUAL(ovl_lookup_fabric(o, h1, 4, 4140), v);
	v = ovl_lookup_fabric(o, h1, 4, 4142);
	CU_ASSERT_FATAL(v != OVL_NONE && !(v & OVL_V_QP));
	CU_ASSERT_EQUAL(o->conns[OVL_V_IDX(v)].l_type, CFG_QP_XRC_TGT);
	CU_ASSERT_EQUAL(o->conns[OVL_V_IDX(v)].ingress.dqpn, 42);
	/* Every operation class is possible on XRC, and nothing is blocked without an ACL. */
	CU_ASSERT_EQUAL(ovl_type_ops(CFG_QP_XRC_INI), CFG_OP_ALL);
	CU_ASSERT_EQUAL(o->conns[0].acl_allow[OVL_DIR_L2R], CFG_OP_ALL);
	/* XRC frames are tracked as RC ones, and their NAKs are XRC ACKNOWLEDGEs (IBTA table 38: 0xb1). */
	CU_ASSERT_TRUE(ovl_track_opcode(0xa4) && ovl_track_opcode(0xb1) && ovl_track_opcode(0x11));
	CU_ASSERT_FALSE(ovl_track_opcode(0x24) || ovl_track_opcode(0x64) || ovl_track_opcode(0x81));
	CU_ASSERT_EQUAL(ovl_nak_opcode(CFG_QP_XRC_INI), 0xb1);
	CU_ASSERT_EQUAL(ovl_nak_opcode(CFG_QP_XRC_TGT), 0xb1);
	CU_ASSERT_EQUAL(ovl_nak_opcode(CFG_QP_RC), 0x11);
	ovl_free(o);
	cfg_free(c);
}

static void
test_acl_type(void)
{
	struct cfg *c = load(DOC(B10_SRQS, B20_SRQS, R10_SRQS, QPS_OK,
				 ",\"acls\":[{\"tenant\":\"blue\",\"rules\":[{\"action\":\"deny\",\"types\":[\"xrc\"],"
				 "\"ops\":[\"write\"]},{\"action\":\"deny\",\"types\":[\"rc\"]}]}]"));
	char err[256];
	struct ovl *o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].types, 1u << CFG_ACL_TYPE_XRC);
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	/* "xrc" covers both ends' connections; the "rc" rule none of them. */
	for (uint32_t i = 0; i < o->n_conns; i++) {
		CU_ASSERT_EQUAL(o->conns[i].acl_allow[OVL_DIR_L2R], CFG_OP_ALL & ~CFG_OP_WRITE);
		CU_ASSERT_EQUAL(o->conns[i].acl_allow[OVL_DIR_R2L], CFG_OP_ALL & ~CFG_OP_WRITE);
		CU_ASSERT_FALSE(o->conns[i].acl_block);
	}
	ovl_free(o);
	cfg_free(c);
}

int
main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("xrc", NULL, NULL);
	CU_add_test(s, "load: XRC QP types and SRQs", test_load);
	CU_add_test(s, "errors with their JSON paths", test_errors);
	CU_add_test(s, "deltas carry SRQs", test_delta);
	CU_add_test(s, "overlay: SRQ tables and XRC connections", test_overlay);
	CU_add_test(s, "ACL type xrc", test_acl_type);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	cfg_errors_clear(&errs);
	return fails ? 1 : 0;
}
