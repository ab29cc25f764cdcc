/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Learned QPs in the configuration and the overlay: the tenant fields
 * "qp_learning", "qp_idle_s" and "gsi_pps"; a half (a QP whose peer names a vip and no
 * vqpn, cfg_qp_half()) with its checks in the file, in a delta and in the
 * in-place path (which takes halves, but leaves a learning tenant's endpoint
 * deleted to the whole path); the connection each
 * host builds of it (OVL_HALF_OUT on the source's host, OVL_HALF_IN on the
 * QP's own, a hairpin when both are local, none where neither is).
 *
 * The base document: this host is 10.0.0.1 and runs blue's 192.168.1.10 and
 * .11; blue's .20 is on 10.0.0.2; red (not learning) has .10 here and .20
 * there.  Blue learns ("qp_idle_s": 7).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cfg.h"
#include "cfg_delta.h"
#include "cfg_inc.h"
#include "cfg_json.h"
#include "cfg_util.h"
#include "ovl.h"

#define PORT(n, dev, t, mac) "{\"name\":\"" n "\",\"device\":\"" dev "\",\"role\":\"tenant\",\"tenant\":\"" t \
	"\",\"mac\":\"" mac "\"}"
#define HEAD(host) "{\"version\":1,\"tenants\":[{\"name\":\"blue\",\"vni\":100,\"qp_learning\":true," \
	"\"qp_idle_s\":7},{\"name\":\"red\",\"vni\":200}]," \
	"\"ports\":[{\"name\":\"fabric0\",\"device\":\"net_pcap0\",\"role\":\"uplink\",\"ip\":\"" host "\"," \
	"\"mac\":\"02:00:00:00:00:01\",\"gateway_mac\":\"02:00:00:00:00:fe\"}," \
	PORT("vm-blue-1", "net_pcap1", "blue", "02:00:00:00:01:01") "," \
	PORT("vm-blue-2", "net_pcap2", "blue", "02:00:00:00:01:02") "," \
	PORT("vm-red-1", "net_pcap3", "red", "02:00:00:00:02:01") "],"
#define EP(t, vip, host, port, mac) "{\"tenant\":\"" t "\",\"vip\":\"" vip "\",\"host\":\"" host "\"" port mac "}"
#define ENDPOINTS "\"endpoints\":[" \
	EP("blue", "192.168.1.10", "10.0.0.1", ",\"port\":\"vm-blue-1\"", ",\"mac\":\"02:00:00:00:aa:10\"") "," \
	EP("blue", "192.168.1.11", "10.0.0.1", ",\"port\":\"vm-blue-2\"", ",\"mac\":\"02:00:00:00:aa:11\"") "," \
	EP("blue", "192.168.1.20", "10.0.0.2", "", "") "," \
	EP("red", "192.168.1.10", "10.0.0.1", ",\"port\":\"vm-red-1\"", ",\"mac\":\"02:00:00:00:bb:10\"") "," \
	EP("red", "192.168.1.20", "10.0.0.2", "", "") "]"
#define HALF(t, vip, vqpn, pqpn, type, pvip) "{\"tenant\":\"" t "\",\"vip\":\"" vip "\",\"vqpn\":" #vqpn \
	",\"pqpn\":" #pqpn ",\"type\":\"" type "\",\"peer\":{\"vip\":\"" pvip "\"}}"
/* .10 -> (.20, 33) and .20 -> (.10, 17) across hosts, .10 -> (.11, 40) on this one. */
#define HALVES "[" HALF("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10") "," \
	HALF("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.20") "," \
	HALF("blue", "192.168.1.11", 40, 4098, "uc", "192.168.1.10") "]"
#define DOC(host, qps) HEAD(host) ENDPOINTS ",\"qps\":" qps "}"
/* The same network as 10.0.0.2 sees it: blue's .20 on its port vm-blue-1. */
#define ENDPOINTS_B "\"endpoints\":[" \
	EP("blue", "192.168.1.10", "10.0.0.1", "", "") "," EP("blue", "192.168.1.11", "10.0.0.1", "", "") "," \
	EP("blue", "192.168.1.20", "10.0.0.2", ",\"port\":\"vm-blue-1\"", ",\"mac\":\"02:00:00:00:aa:20\"") "," \
	EP("red", "192.168.1.10", "10.0.0.1", "", "") "," \
	EP("red", "192.168.1.20", "10.0.0.2", ",\"port\":\"vm-red-1\"", ",\"mac\":\"02:00:00:00:bb:20\"") "]"
#define DOC_B(qps) HEAD("10.0.0.2") ENDPOINTS_B ",\"qps\":" qps "}"

static struct cfg_errors errs;

static struct cfg *
load(const char *json)
{
	cfg_errors_clear(&errs);
	return cfg_load_string(json, "x.json", &errs);
}

static void
expect_error(const char *json, const char *want)
{
	struct cfg *c = load(json);

	CU_ASSERT_PTR_NULL(c);
	cfg_free(c);
	if (errs.n != 1 || strcmp(errs.msg[0], want) != 0) {
		fprintf(stderr, "\nwanted: %s\ngot %u:\n", want, errs.n);
		cfg_errors_print(&errs, stderr);
	}
	CU_ASSERT(errs.n == 1 && strcmp(errs.msg[0], want) == 0);
}

static void
test_load(void)
{
	struct cfg *c = load(DOC("10.0.0.1", HALVES));

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT(c->tenants[0].qp_learning && c->tenants[0].qp_idle_s == 7);
	CU_ASSERT(!c->tenants[1].qp_learning && c->tenants[1].qp_idle_s == CFG_DEFAULT_QP_IDLE_S);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT(cfg_qp_half(&c->qps[i]));
		CU_ASSERT_EQUAL(c->qps[i].peer, -1);
	}
	CU_ASSERT_EQUAL(c->tenants[0].n_qps, 3);
	cfg_free(c);

	expect_error(DOC("10.0.0.1", "[" HALF("red", "192.168.1.20", 33, 8193, "rc", "192.168.1.10") "]"),
		     "x.json: qps[0].peer.vqpn: missing required key (tenant \"red\" does not learn its QPs: "
		     "\"qp_learning\")");
	expect_error(DOC("10.0.0.1", "[" HALF("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.99") "]"),
		     "x.json: qps[0].peer.vip: 192.168.1.99 is not an endpoint of tenant \"blue\"");
	expect_error(DOC("10.0.0.1", "[" HALF("blue", "192.168.1.20", 33, 8193, "xrc_ini", "192.168.1.10") "]"),
		     "x.json: qps[0].type: a half (a peer without \"vqpn\") is rc or uc, not xrc_ini");
	expect_error(DOC("10.0.0.1", "[" HALF("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10") ","
			 HALF("blue", "192.168.1.20", 34, 8193, "rc", "192.168.1.11") "]"),
		     "x.json: qps[1].pqpn: 8193 is already used on host 10.0.0.2 by qps[0]");
	/* A learning tenant's end that names a half is not named back: it is alone, a half itself. */
	c = load(DOC("10.0.0.1", "[" HALF("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10") ","
		     "{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\",\"vqpn\":17,\"pqpn\":4097,\"type\":\"rc\","
		     "\"peer\":{\"vip\":\"192.168.1.20\",\"vqpn\":33}}]"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT(cfg_qp_alone(&c->qps[0]) && cfg_qp_alone(&c->qps[1]) && !cfg_qp_half(&c->qps[1]));
	cfg_free(c);
	/* Another tenant's is an error, as ever. */
	expect_error(DOC("10.0.0.1", "[{\"tenant\":\"red\",\"vip\":\"192.168.1.10\",\"vqpn\":17,\"pqpn\":4097,"
			 "\"type\":\"rc\",\"peer\":{\"vip\":\"192.168.1.20\",\"vqpn\":33}}]"),
		     "x.json: qps[0].peer: no QP 192.168.1.20 qp 33 in tenant \"red\"");
}

static struct cfg *delta(const struct cfg *run, const char *req);
static int in_place(struct cfg *run, const char *req);

/* Without a resolver (the switch without --etcd) a learning tenant's endpoint on another host is refused. */
static void
test_no_resolver(void)
{
	struct cfg *run, *c;
	char put_ep[] = "{\"put\":{\"endpoints\":[" EP("blue", "192.168.1.30", "10.0.0.3", "", "") "]}}";

	cfg_learning_remote = false;
	expect_error(DOC("10.0.0.1", "[]"), "x.json: endpoints[2].host: 10.0.0.2 is another host's, and tenant "
		     "\"blue\" learns its QPs (\"qp_learning\"): learning across hosts needs --etcd");
	cfg_learning_remote = true;
	run = load(DOC("10.0.0.1", "[]"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	cfg_learning_remote = false;
	c = delta(run, put_ep);
	/* The request's endpoint by its path, the running one (on 10.0.0.2) by its key. */
	CU_ASSERT(!c && errs.n == 2 && strstr(errs.msg[0], "endpoints{blue 192.168.1.20}.host: 10.0.0.2 is another host's") &&
		  strstr(errs.msg[1], "put.endpoints[0].host: 10.0.0.3 is another host's"));
	cfg_free(c);
	CU_ASSERT_EQUAL(in_place(run, put_ep), 0);
	cfg_learning_remote = true;
	CU_ASSERT_EQUAL(in_place(run, put_ep), 1);
	cfg_free(run);
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

/* cfg_inc_prepare() of @req on @run: 1 in place, 0 not here. */
static int
in_place(struct cfg *run, const char *req)
{
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	struct cfg_inc inc;
	char *buf = strdup(req);
	int r = -2;

	if (buf && cfg_json_parse(buf, strlen(buf), &doc, &je) == 0) {
		r = cfg_inc_prepare(run, doc.root, &inc);
		if (r == 1)
			cfg_inc_release(&inc);
		cfg_json_free(&doc);
	}
	free(buf);
	return r;
}

static void
test_delta(void)
{
	struct cfg *run = load(DOC("10.0.0.1", HALVES)), *c;
	char put[] = "{\"put\":{\"qps\":[" HALF("blue", "192.168.1.20", 35, 8195, "rc", "192.168.1.11") "]}}";
	char del[] = "{\"delete\":{\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.20\",\"vqpn\":33}]}}";
	char del_ep[] = "{\"delete\":{\"endpoints\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.11\"}],"
			"\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.11\",\"vqpn\":40}]}}";

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	c = delta(run, put);
	CU_ASSERT(c && c->n_qps == 4 && cfg_qp_half(&c->qps[3]) && c->qps[3].peer == -1);
	cfg_free(c);
	c = delta(run, del);
	CU_ASSERT(c && c->n_qps == 2);
	cfg_free(c);
	/* The same checks as the file's, by the request's path. */
	c = delta(run, "{\"put\":{\"qps\":[" HALF("red", "192.168.1.20", 33, 8199, "rc", "192.168.1.10") "]}}");
	CU_ASSERT(!c && errs.n == 1 && !strcmp(errs.msg[0], "d: put.qps[0].peer.vqpn: missing required key (tenant "
					      "\"red\" does not learn its QPs: \"qp_learning\")"));
	/* The endpoint a half names as its source is in use: the half is named by its key. */
	c = delta(run, "{\"delete\":{\"endpoints\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.11\"}],"
		  "\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.11\",\"vqpn\":40}]}}");
	CU_ASSERT_PTR_NOT_NULL(c);      /* .11's own half goes with it: nothing names .11 */
	cfg_free(c);
	c = delta(run, "{\"delete\":{\"endpoints\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\"}],"
		  "\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\",\"vqpn\":17}]}}");
	CU_ASSERT(!c && errs.n >= 1 && strstr(errs.msg[0], "qps{blue 192.168.1.20 33}.peer.vip: 192.168.1.10 is not "
					      "an endpoint of tenant \"blue\"") != NULL);
	/* Learning turned off while halves exist. */
	c = delta(run, "{\"put\":{\"tenants\":[{\"name\":\"blue\",\"vni\":100}]}}");
	CU_ASSERT(!c && errs.n == 3 && strstr(errs.msg[0], "does not learn its QPs") != NULL);
	/* In place: halves put and deleted; a learning tenant's endpoint deleted takes the whole path. */
	CU_ASSERT_EQUAL(in_place(run, put), 1);
	CU_ASSERT_EQUAL(in_place(run, del), 1);
	CU_ASSERT_EQUAL(in_place(run, del_ep), 0);
	CU_ASSERT_EQUAL(in_place(run, "{\"put\":{\"qps\":[" HALF("red", "192.168.1.20", 33, 8199, "rc",
								"192.168.1.10") "]}}"), 0);
	cfg_free(run);
}

/* "gsi_pps": a tenant's RDMA-CM MADs a second, the same field in a file and in a delta (and so in etcd). */
static void
test_gsi_pps(void)
{
	char doc[] = DOC("10.0.0.1", "[]");
	char *p = strstr(doc, "\"qp_idle_s\":7");
	struct cfg *run = load(doc), *c;
	char *bad;

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	CU_ASSERT(run->tenants[0].gsi_pps == CFG_DEFAULT_GSI_PPS && run->tenants[1].gsi_pps == CFG_DEFAULT_GSI_PPS);
	c = delta(run, "{\"put\":{\"tenants\":[{\"name\":\"blue\",\"vni\":100,\"qp_learning\":true,"
		  "\"gsi_pps\":0}]}}");
	CU_ASSERT(c && c->tenants[0].gsi_pps == 0 && c->tenants[0].qp_idle_s == CFG_DEFAULT_QP_IDLE_S);
	cfg_free(c);
	c = delta(run, "{\"put\":{\"tenants\":[{\"name\":\"blue\",\"vni\":100,\"qp_learning\":true,"
		  "\"gsi_pps\":100001}]}}");
	CU_ASSERT(!c && errs.n == 1 &&
		  strstr(errs.msg[0], "put.tenants[0].gsi_pps: 100001 is out of range (max 100000)") != NULL);
	cfg_free(c);
	cfg_free(run);
	/* The file: "qp_idle_s":7 becomes "gsi_pps":500 (the same length), then one past the largest. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	memcpy(p, "\"gsi_pps\":500", 13);
	run = load(doc);
	CU_ASSERT(run && run->tenants[0].gsi_pps == 500);
	cfg_free(run);
	if (asprintf(&bad, "%.*s\"gsi_pps\":100001%s", (int)(p - doc), doc, p + 13) > 0) {
		run = load(bad);
		CU_ASSERT(!run && errs.n == 1 &&
			  !strcmp(errs.msg[0], "x.json: tenants[0].gsi_pps: 100001 is out of range (max 100000)"));
		cfg_free(run);
		free(bad);
	}
}

static const uint8_t V10[4] = { 192, 168, 1, 10 }, V11[4] = { 192, 168, 1, 11 }, V20[4] = { 192, 168, 1, 20 };
static const uint8_t H1[4] = { 10, 0, 0, 1 }, H2[4] = { 10, 0, 0, 2 };

static const struct ovl_conn *
conn_of(const struct ovl *o, uint32_t v)
{
	return v == OVL_NONE || (v & OVL_V_QP) ? NULL : &o->conns[OVL_V_IDX(v)];
}

/* The overlay this host builds of @c, which must load. */
static struct ovl *
overlay_of(const struct cfg *c)
{
	char err[256];
	struct ovl *o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	return o;
}

static void
test_overlay(void)
{
	struct cfg *c = load(DOC("10.0.0.1", HALVES));
	const struct ovl_conn *cn;
	char err[256];
	struct ovl *o = overlay_of(c);

	CU_ASSERT_EQUAL(o->live_conns, 3);
	CU_ASSERT(o->tenants[0].qp_learning && o->tenants[0].qp_idle_s == 7);
	/* .10 -> (.20, 33): out, to 10.0.0.2 and pqpn 8193. */
	cn = conn_of(o, ovl_lookup_tenant(o, 0, V20, 4, 33));
	CU_ASSERT_FATAL(cn != NULL);
	CU_ASSERT(cn->half == OVL_HALF_OUT && !cn->hairpin && !memcmp(cn->l_vip, V10, 4));
	CU_ASSERT(cn->egress.dqpn == 8193 && !memcmp(cn->egress.src_ip, H1, 4) && !memcmp(cn->egress.dst_ip, H2, 4));
	CU_ASSERT(cn->egress.changes_icrc);
	/* (.20 -> .10, 17) from the fabric on pqpn 4097: in, delivered as from .20 to QP 17. */
	cn = conn_of(o, ovl_lookup_fabric(o, H1, 4, 4097));
	CU_ASSERT_FATAL(cn != NULL);
	CU_ASSERT(cn->half == OVL_HALF_IN && !memcmp(cn->r_host, H2, 4) && !memcmp(cn->l_vip, V10, 4));
	CU_ASSERT(cn->ingress.dqpn == 17 && !memcmp(cn->ingress.src_ip, V20, 4) && !memcmp(cn->ingress.dst_ip, V10, 4));
	CU_ASSERT_EQUAL(ovl_lookup_tenant(o, 0, V10, 4, 17), OVL_NONE);
	/* .10 -> (.11, 40): a hairpin, MACs only, out of .11's port. */
	cn = conn_of(o, ovl_lookup_tenant(o, 0, V11, 4, 40));
	CU_ASSERT_FATAL(cn != NULL);
	CU_ASSERT(cn->half == OVL_HALF_OUT && cn->hairpin && !cn->egress.changes_icrc && cn->egress.dqpn == 40);
	CU_ASSERT_EQUAL(cn->egress.port, 2);
	CU_ASSERT_EQUAL(ovl_lookup_fabric(o, H1, 4, 4098), OVL_NONE);
	/* Red has nothing of blue's. */
	CU_ASSERT_EQUAL(ovl_lookup_tenant(o, 1, V20, 4, 33), OVL_NONE);
	ovl_free(o);
	cfg_free(c);

	/* On 10.0.0.2: (.20, 33) is in, (.10, 17) out; the hairpin on 10.0.0.1 is nothing here. */
	c = load(DOC_B(HALVES));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->live_conns, 2);
	cn = conn_of(o, ovl_lookup_fabric(o, H2, 4, 8193));
	CU_ASSERT(cn && cn->half == OVL_HALF_IN && cn->ingress.dqpn == 33);
	cn = conn_of(o, ovl_lookup_tenant(o, 0, V10, 4, 17));
	CU_ASSERT(cn && cn->half == OVL_HALF_OUT && cn->egress.dqpn == 4097 && !memcmp(cn->egress.dst_ip, H1, 4));
	CU_ASSERT_EQUAL(ovl_lookup_tenant(o, 0, V11, 4, 40), OVL_NONE);
	ovl_free(o);
	cfg_free(c);
}

#define END(t, vip, vqpn, pqpn, type, pvip, pvqpn) "{\"tenant\":\"" t "\",\"vip\":\"" vip "\",\"vqpn\":" #vqpn \
	",\"pqpn\":" #pqpn ",\"type\":\"" type "\",\"peer\":{\"vip\":\"" pvip "\",\"vqpn\":" #pvqpn "}}"

/*
 * The halves of HALVES named by each other's QPN (as RDMA-CM lets the
 * learners write them): (.10, 17) and (.20, 33) make one connection, whole,
 * with both keys and both pqpns, as a configured pair would; (.11, 40)
 * names (.10, 41), which has no record: it stays a half.
 */
static void
test_overlay_pairs(void)
{
	struct cfg *c = load(DOC("10.0.0.1", "[" END("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10", 17) ","
				 END("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.20", 33) ","
				 END("blue", "192.168.1.11", 40, 4098, "uc", "192.168.1.10", 41) "]"));
	struct ovl *o = overlay_of(c);
	const struct ovl_conn *cn;

	CU_ASSERT_EQUAL(o->live_conns, 2);
	cn = conn_of(o, ovl_lookup_tenant(o, 0, V20, 4, 33));
	CU_ASSERT_FATAL(cn != NULL);
	CU_ASSERT(cn->half == OVL_HALF_NONE && !memcmp(cn->l_vip, V10, 4) && o->qps[cn->l].vqpn == 17 &&
		  o->qps[cn->r].vqpn == 33);
	CU_ASSERT(cn->egress.dqpn == 8193 && cn->ingress.dqpn == 17 && !memcmp(cn->r_host, H2, 4));
	CU_ASSERT(conn_of(o, ovl_lookup_fabric(o, H1, 4, 4097)) == cn);
	cn = conn_of(o, ovl_lookup_tenant(o, 0, V11, 4, 40));
	CU_ASSERT(cn && cn->half == OVL_HALF_OUT && cn->hairpin);
	ovl_free(o);
	cfg_free(c);
}

/* Blue's ACL: .10's writes to .20, .20's reads and everything .10 sends to .11 denied. */
#define ACLS "[{\"tenant\":\"blue\",\"rules\":[" \
	"{\"action\":\"deny\",\"src\":\"192.168.1.10/32\",\"dst\":\"192.168.1.20/32\",\"ops\":[\"write\"]}," \
	"{\"action\":\"deny\",\"src\":\"192.168.1.20/32\",\"ops\":[\"read\"]}," \
	"{\"action\":\"deny\",\"src\":\"192.168.1.10/32\",\"dst\":\"192.168.1.11/32\"}]}]"
/* HALVES with a 10 Gb/s cap on each record and blue's ACL. */
#define CAPPED(t, vip, vqpn, pqpn, type, pvip) "{\"tenant\":\"" t "\",\"vip\":\"" vip "\",\"vqpn\":" #vqpn \
	",\"pqpn\":" #pqpn ",\"type\":\"" type "\",\"peer\":{\"vip\":\"" pvip "\"},\"rate\":{\"gbps\":10}}"
#define DOC_ACL HEAD("10.0.0.1") ENDPOINTS ",\"qps\":[" CAPPED("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10") \
	"," CAPPED("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.20") "," \
	CAPPED("blue", "192.168.1.11", 40, 4098, "uc", "192.168.1.10") "],\"acls\":" ACLS "}"

/*
 * What a half's connection holds beside its rewrite: its QP on both sides,
 * its source endpoint at the end the source is, the cap on the sending side
 * only, and the ACL's verdicts between the source and the QP's endpoint (a
 * half's two endpoints are not its QP's twice).
 */
static void
test_half_fields(void)
{
	static const uint8_t up_mac[6] = { 2, 0, 0, 0, 0, 1 }, gw_mac[6] = { 2, 0, 0, 0, 0, 0xfe };
	static const uint8_t mac10[6] = { 2, 0, 0, 0, 0xaa, 0x10 }, port1_mac[6] = { 2, 0, 0, 0, 1, 1 };
	static const struct ovl_rewrite zero;
	struct cfg *c = load(DOC_ACL);
	const struct ovl_conn *cn;
	uint32_t v, le, re, h;
	char err[256];
	struct ovl *o;

	if (!c)
		cfg_errors_print(&errs, stderr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	/* The cap of the two halves this host sends on; the incoming one has none. */
	CU_ASSERT_EQUAL(o->tenants[0].n_capped, 2);

	/* Out: .10 -> (.20, 33), toward 10.0.0.2 through the gateway. */
	v = ovl_lookup_tenant(o, 0, V20, 4, 33);
	cn = conn_of(o, v);
	CU_ASSERT_FATAL(cn != NULL);
	h = cn->l;
	CU_ASSERT(cn->r == h && o->qps[h].vqpn == 33 && o->qps[h].conn == OVL_V_IDX(v) && o->qps[h].peer == OVL_NONE);
	CU_ASSERT(!memcmp(o->endpoints[cn->src_ep].vip.b, V10, 4));
	ovl_conn_ends(o, cn, &le, &re);
	CU_ASSERT(le == cn->src_ep && re == o->qps[h].endpoint);
	CU_ASSERT_EQUAL(cn->rate_bps, 10000000000ull);
	CU_ASSERT(!memcmp(cn->egress.eth, gw_mac, 6) && !memcmp(cn->egress.eth + 6, up_mac, 6) && cn->egress.port == 0);
	CU_ASSERT(!memcmp(cn->l_mac, mac10, 6) && cn->l_port == 1);
	CU_ASSERT(!memcmp(&cn->ingress, &zero, sizeof(zero)));
	CU_ASSERT(cn->egress.udp_sport == 0);
	/* .10's writes to .20 denied (rule 0); .20's reads to .10 (rule 1). */
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_L2R], CFG_OP_SEND | CFG_OP_READ | CFG_OP_ATOMIC);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_L2R][1], 0);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_R2L], CFG_OP_SEND | CFG_OP_WRITE | CFG_OP_ATOMIC);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_R2L][2], 1);
	CU_ASSERT(!cn->acl_block);

	/* In: (.20 -> .10, 17) from the fabric, delivered on .10's port; L is the QP, R the source. */
	v = ovl_lookup_fabric(o, H1, 4, 4097);
	cn = conn_of(o, v);
	CU_ASSERT_FATAL(cn != NULL);
	h = cn->l;
	CU_ASSERT(cn->r == h && o->qps[h].vqpn == 17 && o->qps[h].conn == OVL_V_IDX(v) && o->qps[h].peer == OVL_NONE);
	CU_ASSERT(!memcmp(o->endpoints[cn->src_ep].vip.b, V20, 4));
	ovl_conn_ends(o, cn, &le, &re);
	CU_ASSERT(le == o->qps[h].endpoint && re == cn->src_ep);
	CU_ASSERT_EQUAL(cn->rate_bps, 0);
	CU_ASSERT(!memcmp(cn->ingress.eth, mac10, 6) && !memcmp(cn->ingress.eth + 6, port1_mac, 6));
	CU_ASSERT_EQUAL(cn->ingress.port, 1);
	CU_ASSERT(cn->ingress.changes_icrc && !memcmp(&cn->egress, &zero, sizeof(zero)));
	/* The same verdicts: R (.20) sends the requests this host sees. */
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_R2L], CFG_OP_SEND | CFG_OP_WRITE | CFG_OP_ATOMIC);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_R2L][2], 1);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_L2R], CFG_OP_SEND | CFG_OP_READ | CFG_OP_ATOMIC);

	/* The hairpin .10 -> (.11, 40): all .10 sends to .11 denied (rule 2); .11's to .10 allowed. */
	cn = conn_of(o, ovl_lookup_tenant(o, 0, V11, 4, 40));
	CU_ASSERT_FATAL(cn != NULL);
	CU_ASSERT(cn->hairpin && cn->rate_bps == 10000000000ull);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_L2R] & ovl_type_ops(CFG_QP_UC), 0);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_L2R][0], 2);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_R2L], CFG_OP_ALL);
	ovl_free(o);
	cfg_free(c);
}

int
main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("learn", NULL, NULL);
	CU_add_test(s, "halves in the file", test_load);
	CU_add_test(s, "halves in deltas and the in-place path", test_delta);
	CU_add_test(s, "the connections of halves", test_overlay);
	CU_add_test(s, "ends named by each other make one connection", test_overlay_pairs);
	CU_add_test(s, "no resolver: no learning across hosts", test_no_resolver);
	CU_add_test(s, "a half's ends, cap and ACL verdicts", test_half_fields);
	CU_add_test(s, "gsi_pps in the file and in deltas", test_gsi_pps);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	cfg_errors_clear(&errs);
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
