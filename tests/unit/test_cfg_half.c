/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration side of learned QPs (DESIGN.md "Learned connections"):
 * the tenant fields "qp_learning" and "qp_idle_s", and halves (a QP whose
 * "peer" names a vip and no "vqpn", cfg_qp_half()) in a file, in a delta on
 * the whole path (cfg_delta_apply()), and through both paths at once
 * (run_both() of tests/delta: the in-place path agrees with the whole one,
 * or leaves the batch to it).  Every error is checked by its full text; a
 * file and a delta say the same of the same field.
 *
 * The base: this host is 10.0.0.1.  Blue learns (no "qp_idle_s": the
 * default); its .10 is here, .20 on 10.0.0.2, .30 on 10.0.0.3 and .40 on
 * 10.0.0.4 names nothing.  Its QPs: the halves .10 -> (.20, 33) and .20 ->
 * (.10, 17), and the full pair (.10, 18) <-> (.30, 40).  Green learns
 * ("qp_idle_s": 60, "max_qps": 1) and has one half, .10 -> (.20, 50).  Red
 * does not learn and has no QP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cfg.h"
#include "cfg_delta.h"
#include "cfg_inc.h"
#include "../delta/test_cfg_inc.h"

#define TPORT(n, dev, t, mac) ",{\"name\":\"" n "\",\"device\":\"" dev "\",\"role\":\"tenant\",\"tenant\":\"" t \
	"\",\"mac\":\"" mac "\"}"
#define HEAD "{\"version\":1,\"tenants\":[{\"name\":\"blue\",\"vni\":100,\"qp_learning\":true}," \
	"{\"name\":\"green\",\"vni\":300,\"qp_learning\":true,\"qp_idle_s\":60,\"max_qps\":1}," \
	"{\"name\":\"red\",\"vni\":200,\"qp_learning\":false}]," \
	"\"ports\":[{\"name\":\"fabric0\",\"device\":\"net_pcap0\",\"role\":\"uplink\",\"ip\":\"10.0.0.1\"," \
	"\"mac\":\"02:00:00:00:00:01\",\"gateway_mac\":\"02:00:00:00:00:fe\"}" \
	TPORT("vm-blue", "net_pcap1", "blue", "02:00:00:00:01:01") TPORT("vm-green", "net_pcap2", "green", \
	"02:00:00:00:02:01") TPORT("vm-red", "net_pcap3", "red", "02:00:00:00:03:01") "],"
#define LOCAL(t, vip, port, mac) "{\"tenant\":\"" t "\",\"vip\":\"" vip "\",\"host\":\"10.0.0.1\",\"port\":\"" port \
	"\",\"mac\":\"" mac "\"}"
#define REMOTE(t, vip, host) "{\"tenant\":\"" t "\",\"vip\":\"" vip "\",\"host\":\"" host "\"}"
/* The endpoints but blue's .40. */
#define NAMED_EPS LOCAL("blue", "192.168.1.10", "vm-blue", "02:00:00:00:aa:10") "," \
	REMOTE("blue", "192.168.1.20", "10.0.0.2") "," REMOTE("blue", "192.168.1.30", "10.0.0.3") "," \
	LOCAL("green", "192.168.1.10", "vm-green", "02:00:00:00:bb:10") "," \
	REMOTE("green", "192.168.1.20", "10.0.0.2") "," LOCAL("red", "192.168.1.10", "vm-red", "02:00:00:00:cc:10") "," \
	REMOTE("red", "192.168.1.20", "10.0.0.2")
#define ENDPOINTS "\"endpoints\":[" NAMED_EPS "," REMOTE("blue", "192.168.1.40", "10.0.0.4") "]"
#define QP_HEAD(t, vip, vqpn, pqpn, type) "{\"tenant\":\"" t "\",\"vip\":\"" vip "\",\"vqpn\":" #vqpn \
	",\"pqpn\":" #pqpn ",\"type\":\"" type "\""
#define HALF(t, vip, vqpn, pqpn, type, pvip) QP_HEAD(t, vip, vqpn, pqpn, type) ",\"peer\":{\"vip\":\"" pvip "\"}}"
#define FULL(t, vip, vqpn, pqpn, type, pvip, pvqpn) QP_HEAD(t, vip, vqpn, pqpn, type) \
	",\"peer\":{\"vip\":\"" pvip "\",\"vqpn\":" #pvqpn "}}"
#define BASE_QPS HALF("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10") "," \
	HALF("blue", "192.168.1.10", 17, 4097, "uc", "192.168.1.20") "," \
	FULL("blue", "192.168.1.10", 18, 4098, "rc", "192.168.1.30", 40) "," \
	FULL("blue", "192.168.1.30", 40, 12289, "rc", "192.168.1.10", 18) "," \
	HALF("green", "192.168.1.20", 50, 8194, "rc", "192.168.1.10")
#define DOC(qps) HEAD ENDPOINTS ",\"qps\":[" qps "]}"
#define BASE DOC(BASE_QPS)
/* A request: "put" and "delete" bodies. */
#define REQ(put, del) "{\"put\":{" put "},\"delete\":{" del "}}"

static struct cfg_errors errs;

static void
errors_show(const char *want)
{
	fprintf(stderr, "\nwanted: %s\ngot %u:\n", want, errs.n);
	cfg_errors_print(&errs, stderr);
}

/* True if one of the messages is @want. */
static bool
said(const char *want)
{
	for (uint32_t i = 0; i < errs.n; i++)
		if (!strcmp(errs.msg[i], want))
			return true;
	errors_show(want);
	return false;
}

static struct cfg *
load(const char *json)
{
	cfg_errors_clear(&errs);
	return cfg_load_string(json, "h.json", &errs);
}

static struct cfg *
delta(const struct cfg *run, const char *req)
{
	char *buf = strdup(req);
	struct cfg *c;

	cfg_errors_clear(&errs);
	c = buf ? cfg_delta_apply(run, buf, strlen(buf), "d", &errs, NULL) : NULL;
	free(buf);
	return c;
}

/* The file or delta's result @c is none, with the one message @want. */
static void
refused(struct cfg *c, const char *want)
{
	CU_ASSERT_PTR_NULL(c);
	cfg_free(c);
	if (errs.n != 1)
		errors_show(want);
	CU_ASSERT(errs.n == 1 && said(want));
}

/* An input and the one message it is refused with. */
struct refusal {
	const char *in, *want;
};

/* The index of the QP (@vip, @vqpn) of tenant @t in @c, or -1. */
static int
qp_at(const struct cfg *c, const char *t, const char *vip, uint32_t vqpn)
{
	struct cfg_ip ip;

	cfg_ip_parse(vip, &ip);
	for (uint32_t i = 0; i < c->n_qps; i++)
		if (c->qps[i].vqpn == vqpn && cfg_ip_equal(&c->qps[i].vip, &ip) &&
		    !strcmp(c->tenants[c->qps[i].tenant].name, t))
			return (int)i;
	return -1;
}

static void
test_file_loads(void)
{
	struct cfg *c = load(BASE);
	int h, f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT(c->tenants[0].qp_learning && c->tenants[0].qp_idle_s == CFG_DEFAULT_QP_IDLE_S);
	CU_ASSERT(c->tenants[1].qp_learning && c->tenants[1].qp_idle_s == 60);
	CU_ASSERT(!c->tenants[2].qp_learning && c->tenants[2].qp_idle_s == CFG_DEFAULT_QP_IDLE_S);
	CU_ASSERT_EQUAL(CFG_DEFAULT_QP_IDLE_S, 300);
	h = qp_at(c, "blue", "192.168.1.20", 33);
	CU_ASSERT_FATAL(h >= 0);
	CU_ASSERT(cfg_qp_half(&c->qps[h]) && c->qps[h].has_peer && !c->qps[h].has_peer_vqpn);
	CU_ASSERT(c->qps[h].peer == -1 && c->qps[h].endpoint >= 0);
	/* A half and a full QP of the same vip: only the full one is linked. */
	h = qp_at(c, "blue", "192.168.1.10", 17);
	f = qp_at(c, "blue", "192.168.1.10", 18);
	CU_ASSERT_FATAL(h >= 0 && f >= 0);
	CU_ASSERT(cfg_qp_half(&c->qps[h]) && c->qps[h].peer == -1 && c->qps[h].type == CFG_QP_UC);
	CU_ASSERT(!cfg_qp_half(&c->qps[f]) && c->qps[f].has_peer_vqpn && c->qps[f].peer_vqpn == 40);
	CU_ASSERT(c->qps[f].peer == qp_at(c, "blue", "192.168.1.30", 40));
	CU_ASSERT(c->tenants[0].n_qps == 4 && c->tenants[1].n_qps == 1);
	cfg_free(c);
	/* The bounds of "qp_idle_s". */
	c = load("{\"version\":1,\"tenants\":[{\"name\":\"a\",\"vni\":1,\"qp_idle_s\":1},"
		 "{\"name\":\"b\",\"vni\":2,\"qp_idle_s\":86400}],\"ports\":[]}");
	CU_ASSERT(c && c->tenants[0].qp_idle_s == 1 && c->tenants[1].qp_idle_s == 86400);
	cfg_free(c);
}

static void
test_file_errors(void)
{
	static const struct refusal r[] = {
		/* The tenant fields. */
		{ "{\"version\":1,\"tenants\":[{\"name\":\"blue\",\"vni\":1,\"qp_learning\":1}],\"ports\":[]}",
		  "h.json: tenants[0].qp_learning: expected true or false" },
		{ "{\"version\":1,\"tenants\":[{\"name\":\"blue\",\"vni\":1,\"qp_idle_s\":0}],\"ports\":[]}",
		  "h.json: tenants[0].qp_idle_s: must be greater than 0" },
		{ "{\"version\":1,\"tenants\":[{\"name\":\"blue\",\"vni\":1,\"qp_idle_s\":86401}],\"ports\":[]}",
		  "h.json: tenants[0].qp_idle_s: 86401 is out of range (max 86400)" },
		/* A half where it cannot be. */
		{ DOC(BASE_QPS "," HALF("red", "192.168.1.20", 33, 8195, "rc", "192.168.1.10")),
		  "h.json: qps[5].peer.vqpn: missing required key (tenant \"red\" does not learn its QPs: "
		  "\"qp_learning\")" },
		{ DOC(BASE_QPS "," HALF("blue", "192.168.1.20", 34, 8195, "xrc_tgt", "192.168.1.10")),
		  "h.json: qps[5].type: a half (a peer without \"vqpn\") is rc or uc, not xrc_tgt" },
		{ DOC(BASE_QPS "," HALF("blue", "192.168.1.20", 34, 8195, "ud", "192.168.1.10")),
		  "h.json: qps[5].peer: not allowed on ud QPs" },
		{ DOC(BASE_QPS "," HALF("blue", "192.168.1.20", 34, 8195, "rc", "192.168.1.99")),
		  "h.json: qps[5].peer.vip: 192.168.1.99 is not an endpoint of tenant \"blue\"" },
		/* What holds for any QP. */
		{ DOC(BASE_QPS "," HALF("blue", "192.168.1.20", 33, 8195, "rc", "192.168.1.30")),
		  "h.json: qps[5].vqpn: 192.168.1.20 qp 33 in tenant \"blue\" is already defined by qps[0]" },
		{ DOC(BASE_QPS "," QP_HEAD("blue", "192.168.1.20", 34, 8193, "ud") "}"),
		  "h.json: qps[5].pqpn: 8193 is already used on host 10.0.0.2 by qps[0]" },
		{ DOC(BASE_QPS "," HALF("blue", "192.168.1.99", 33, 8195, "rc", "192.168.1.10")),
		  "h.json: qps[5].vip: 192.168.1.99 is not an endpoint of tenant \"blue\"" },
		{ DOC(BASE_QPS "," HALF("green", "192.168.1.10", 51, 4099, "rc", "192.168.1.20")),
		  "h.json: qps[5].tenant: tenant \"green\" exceeds max_qps 1" },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		refused(load(r[i].in), r[i].want);
}

static void
test_delta_accepts(void)
{
	struct cfg *run = load(BASE), *c;
	int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	c = delta(run, REQ("\"qps\":[" HALF("blue", "192.168.1.30", 41, 12290, "uc", "192.168.1.10") "]", ""));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	i = qp_at(c, "blue", "192.168.1.30", 41);
	CU_ASSERT(i >= 0 && cfg_qp_half(&c->qps[i]) && c->qps[i].peer == -1 && c->tenants[0].n_qps == 5);
	cfg_free(c);
	/* Red learns from this batch on, with its first half; blue's "qp_idle_s" is given. */
	c = delta(run, REQ("\"tenants\":[{\"name\":\"red\",\"vni\":200,\"qp_learning\":true},"
			   "{\"name\":\"blue\",\"vni\":100,\"qp_learning\":true,\"qp_idle_s\":45}],"
			   "\"qps\":[" HALF("red", "192.168.1.20", 33, 8195, "rc", "192.168.1.10") "]", ""));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT(c->tenants[2].qp_learning && c->tenants[2].qp_idle_s == CFG_DEFAULT_QP_IDLE_S);
	CU_ASSERT(c->tenants[0].qp_idle_s == 45);
	cfg_free(c);
	/* A half and a full pair trade places under the same keys. */
	c = delta(run, REQ("\"qps\":[" FULL("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10", 19) ","
			   FULL("blue", "192.168.1.10", 19, 4099, "rc", "192.168.1.20", 33) ","
			   HALF("blue", "192.168.1.10", 18, 4098, "rc", "192.168.1.30") ","
			   HALF("blue", "192.168.1.30", 40, 12289, "rc", "192.168.1.10") "]", ""));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	i = qp_at(c, "blue", "192.168.1.20", 33);
	CU_ASSERT(i >= 0 && !cfg_qp_half(&c->qps[i]) && c->qps[i].peer == qp_at(c, "blue", "192.168.1.10", 19));
	i = qp_at(c, "blue", "192.168.1.10", 18);
	CU_ASSERT(i >= 0 && cfg_qp_half(&c->qps[i]) && c->qps[i].peer == -1);
	cfg_free(c);
	cfg_free(run);
}

/* Batches that the whole path refuses on the base, and why; the in-place path must not take them either. */
static const struct refusal delta_refusals[] = {
	{ REQ("\"qps\":[" HALF("red", "192.168.1.20", 33, 8195, "rc", "192.168.1.10") "]", ""),
	  "d: put.qps[0].peer.vqpn: missing required key (tenant \"red\" does not learn its QPs: "
	  "\"qp_learning\")" },
	{ REQ("\"qps\":[" HALF("blue", "192.168.1.20", 34, 8195, "xrc_ini", "192.168.1.10") "]", ""),
	  "d: put.qps[0].type: a half (a peer without \"vqpn\") is rc or uc, not xrc_ini" },
	{ REQ("\"qps\":[" HALF("blue", "192.168.1.20", 34, 8195, "rc", "192.168.1.99") "]", ""),
	  "d: put.qps[0].peer.vip: 192.168.1.99 is not an endpoint of tenant \"blue\"" },
	{ REQ("\"qps\":[" HALF("blue", "192.168.1.20", 34, 8195, "rc", "192.168.1.10") ","
	    HALF("blue", "192.168.1.20", 34, 8196, "uc", "192.168.1.30") "]", ""),
	  "d: put.qps[1]: the same key as put.qps[0]" },
	{ REQ("\"qps\":[" HALF("blue", "192.168.1.20", 34, 8193, "rc", "192.168.1.10") "]", ""),
	  "d: put.qps[0].pqpn: 8193 is already used on host 10.0.0.2 by the qp 192.168.1.20 33 of tenant "
	  "\"blue\"" },
	{ REQ("\"qps\":[" HALF("blue", "192.168.1.99", 34, 8195, "rc", "192.168.1.10") "]", ""),
	  "d: put.qps[0].vip: 192.168.1.99 is not an endpoint of tenant \"blue\"" },
	{ REQ("\"qps\":[" HALF("green", "192.168.1.10", 51, 4099, "rc", "192.168.1.20") "]", ""),
	  "d: put.qps[0].tenant: tenant \"green\" exceeds max_qps 1 (2 qps)" },
	{ REQ("\"tenants\":[{\"name\":\"blue\",\"vni\":100,\"qp_learning\":true,\"qp_idle_s\":86401}]",
	      ""),
	  "d: put.tenants[0].qp_idle_s: 86401 is out of range (max 86400)" },
	/* The source of a half is in use: the half is named by its key. */
	{ REQ("", "\"endpoints\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\"}],\"qps\":["
	    "{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\",\"vqpn\":17},"
	    "{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\",\"vqpn\":18},"
	    "{\"tenant\":\"blue\",\"vip\":\"192.168.1.30\",\"vqpn\":40}]"),
	  "d: qps{blue 192.168.1.20 33}.peer.vip: 192.168.1.10 is not an endpoint of tenant \"blue\"" },
	{ REQ("\"tenants\":[{\"name\":\"green\",\"vni\":300,\"qp_learning\":false}]", ""),
	  "d: qps{green 192.168.1.20 50}.peer.vqpn: missing required key (tenant \"green\" does not learn "
	  "its QPs: \"qp_learning\")" },
};

static void
test_delta_errors(void)
{
	struct cfg *run = load(BASE);

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	for (size_t i = 0; i < sizeof(delta_refusals) / sizeof(delta_refusals[0]); i++)
		refused(delta(run, delta_refusals[i].in), delta_refusals[i].want);
	cfg_free(run);
}

/* Learning turned off by a put of the tenant names each of its halves. */
static void
test_delta_learning_off(void)
{
	struct cfg *run = load(BASE), *c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	c = delta(run, REQ("\"tenants\":[{\"name\":\"blue\",\"vni\":100}]", ""));
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(errs.n, 2);
	CU_ASSERT(said("d: qps{blue 192.168.1.20 33}.peer.vqpn: missing required key (tenant \"blue\" does not learn "
		       "its QPs: \"qp_learning\")"));
	CU_ASSERT(said("d: qps{blue 192.168.1.10 17}.peer.vqpn: missing required key (tenant \"blue\" does not learn "
		       "its QPs: \"qp_learning\")"));
	cfg_free(c);
	/* Without its halves, it may. */
	c = delta(run, REQ("\"tenants\":[{\"name\":\"blue\",\"vni\":100}]",
			   "\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.20\",\"vqpn\":33},"
			   "{\"tenant\":\"blue\",\"vip\":\"192.168.1.10\",\"vqpn\":17}]"));
	CU_ASSERT(c && !c->tenants[0].qp_learning);
	cfg_free(c);
	cfg_free(run);
}

/* run_both() of @req on a fresh base. */
static enum both_path
both(const char *req)
{
	struct cfg *run = load(BASE);
	enum both_path p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	p = run_both(&run, req, NULL);
	cfg_free(run);
	return p;
}

/* Both paths agree on halves: what one accepts the other does, with the same result. */
static void
test_paths_agree(void)
{
	static const char *const ok[] = {
		REQ("\"qps\":[" HALF("blue", "192.168.1.30", 41, 12290, "uc", "192.168.1.10") "]", ""),
		REQ("", "\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.20\",\"vqpn\":33}]"),
		REQ("\"qps\":[" HALF("blue", "192.168.1.20", 33, 8199, "uc", "192.168.1.30") "]", ""),
		REQ("\"qps\":[" FULL("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10", 19) ","
		    FULL("blue", "192.168.1.10", 19, 4099, "rc", "192.168.1.20", 33) ","
		    HALF("blue", "192.168.1.10", 18, 4098, "rc", "192.168.1.30") ","
		    HALF("blue", "192.168.1.30", 40, 12289, "rc", "192.168.1.10") "]", ""),
		REQ("\"endpoints\":[" REMOTE("blue", "192.168.1.50", "10.0.0.5") "],\"qps\":["
		    HALF("blue", "192.168.1.50", 70, 20481, "rc", "192.168.1.10") ","
		    HALF("blue", "192.168.1.10", 71, 4100, "rc", "192.168.1.50") "]", ""),
		/* An endpoint of a learning tenant deleted (the whole path looks for halves that name it). */
		REQ("", "\"endpoints\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.40\"}]"),
		REQ("", "\"endpoints\":[{\"tenant\":\"red\",\"vip\":\"192.168.1.20\"}]"),
	};
	enum both_path p;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		p = both(ok[i]);
		if (p != BOTH_INC && p != BOTH_FULL)
			fprintf(stderr, "\nnot accepted (%d): %s\n", (int)p, ok[i]);
		CU_ASSERT(p == BOTH_INC || p == BOTH_FULL);
	}
	/* A learning tenant's endpoint deleted is the whole path's; red's is not. */
	CU_ASSERT_EQUAL(both(ok[5]), BOTH_FULL);
	CU_ASSERT_EQUAL(both(ok[6]), BOTH_INC);
	for (size_t i = 0; i < sizeof(delta_refusals) / sizeof(delta_refusals[0]); i++) {
		p = both(delta_refusals[i].in);
		if (p != BOTH_REJECTED)
			fprintf(stderr, "\nnot rejected on both paths (%d): %s\n", (int)p, delta_refusals[i].in);
		CU_ASSERT_EQUAL(p, BOTH_REJECTED);
	}
}

/*
 * A learning tenant's ends (peer with a vqpn) connect when both name each
 * other, and are halves until then (cfg_qp_alone()), on both paths alike.
 */
static void
test_learned_ends(void)
{
	struct cfg *run = load(DOC(BASE_QPS "," FULL("blue", "192.168.1.40", 60, 16385, "rc", "192.168.1.20", 33))), *c;
	int a, b;

	/* In a file: (.40, 60) names the half (.20, 33), which does not name it back. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	a = qp_at(run, "blue", "192.168.1.40", 60);
	CU_ASSERT(a >= 0 && cfg_qp_alone(&run->qps[a]) && !cfg_qp_half(&run->qps[a]));
	cfg_free(run);
	/* The same by a delta, and the other end named back: a pair. */
	CU_ASSERT_EQUAL(both(REQ("\"qps\":[" FULL("blue", "192.168.1.40", 60, 16385, "rc", "192.168.1.20", 33) "]", "")),
			BOTH_INC);
	CU_ASSERT_EQUAL(both(REQ("\"qps\":[" FULL("blue", "192.168.1.40", 60, 16385, "rc", "192.168.1.20", 33) ","
				 FULL("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.40", 60) "]", "")),
			BOTH_INC);
	run = load(BASE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	c = delta(run, REQ("\"qps\":[" FULL("blue", "192.168.1.40", 60, 16385, "rc", "192.168.1.20", 33) ","
			   FULL("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.40", 60) "]", ""));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	a = qp_at(c, "blue", "192.168.1.40", 60);
	b = qp_at(c, "blue", "192.168.1.20", 33);
	CU_ASSERT(a >= 0 && b >= 0 && c->qps[a].peer == b && c->qps[b].peer == a);
	cfg_free(run);
	/* One end goes: the other is alone again, and runs as a half. */
	run = c;
	c = delta(run, REQ("", "\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.40\",\"vqpn\":60}]"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	b = qp_at(c, "blue", "192.168.1.20", 33);
	CU_ASSERT(b >= 0 && cfg_qp_alone(&c->qps[b]) && c->qps[b].has_peer_vqpn);
	cfg_free(c);
	cfg_free(run);
	/* (.30, 40) becomes a half: its peer (.10, 18) is alone. */
	CU_ASSERT_EQUAL(both(REQ("\"qps\":[" HALF("blue", "192.168.1.30", 40, 12289, "rc", "192.168.1.10") "]", "")),
			BOTH_INC);
	/* An end that names an end of another type is alone too; one that names itself is an error. */
	CU_ASSERT_EQUAL(both(REQ("\"qps\":[" FULL("blue", "192.168.1.40", 60, 16385, "uc", "192.168.1.10", 18) "]", "")),
			BOTH_INC);
	run = load(BASE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	refused(delta(run, REQ("\"qps\":[" FULL("blue", "192.168.1.40", 60, 16385, "rc", "192.168.1.40", 60) "]", "")),
		"d: put.qps[0].peer: a qp cannot be its own peer");
	cfg_free(run);
}

/* An endpoint's QP1 record (RDMA-CM of a learning tenant) is put and deleted by its key, vqpn 1. */
static void
test_gsi_record(void)
{
	struct cfg *run = load(DOC(BASE_QPS "," QP_HEAD("blue", "192.168.1.20", 1, 8200, "ud") "}"));
	enum both_path p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	CU_ASSERT(qp_at(run, "blue", "192.168.1.20", 1) >= 0);
	p = run_both(&run, REQ("", "\"qps\":[{\"tenant\":\"blue\",\"vip\":\"192.168.1.20\",\"vqpn\":1}]"), NULL);
	CU_ASSERT(p == BOTH_INC || p == BOTH_FULL);
	CU_ASSERT_EQUAL(qp_at(run, "blue", "192.168.1.20", 1), -1);
	cfg_free(run);
}

/* A reload: the diff of two files with halves changed, or a learning tenant's endpoint gone. */
static void
test_reload_diff(void)
{
	struct cfg *run = load(BASE), *file;

	CU_ASSERT_PTR_NOT_NULL_FATAL(run);
	file = load(DOC(HALF("blue", "192.168.1.20", 33, 8193, "uc", "192.168.1.30") ","
			HALF("blue", "192.168.1.30", 41, 12290, "uc", "192.168.1.10") ","
			HALF("blue", "192.168.1.10", 18, 4098, "rc", "192.168.1.30") ","
			HALF("blue", "192.168.1.30", 40, 12289, "rc", "192.168.1.10")));
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	/* The pair (.10, 18) and (.30, 40) of blue, a learning tenant, comes apart, in place too. */
	CU_ASSERT_EQUAL(diff_agrees(run, file), 1);
	cfg_free(file);
	file = load(DOC(HALF("blue", "192.168.1.20", 33, 8193, "uc", "192.168.1.30") ","
			HALF("blue", "192.168.1.30", 41, 12290, "uc", "192.168.1.10") ","
			FULL("blue", "192.168.1.10", 18, 4098, "rc", "192.168.1.30", 40) ","
			FULL("blue", "192.168.1.30", 40, 12289, "rc", "192.168.1.10", 18)));
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	CU_ASSERT_EQUAL(diff_agrees(run, file), 1);
	cfg_free(file);
	file = load(HEAD "\"endpoints\":[" NAMED_EPS "],\"qps\":[" BASE_QPS "]}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	CU_ASSERT_EQUAL(diff_agrees(run, file), 0);
	cfg_free(file);
	cfg_free(run);
}

int
main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("cfg_half", NULL, NULL);
	CU_add_test(s, "a file with learning tenants and halves", test_file_loads);
	CU_add_test(s, "a file's errors", test_file_errors);
	CU_add_test(s, "deltas with halves", test_delta_accepts);
	CU_add_test(s, "a delta's errors", test_delta_errors);
	CU_add_test(s, "learning turned off while halves run", test_delta_learning_off);
	CU_add_test(s, "the in-place and whole paths agree", test_paths_agree);
	CU_add_test(s, "a reload's diff", test_reload_diff);
	CU_add_test(s, "a learning tenant's ends, alone and paired", test_learned_ends);
	CU_add_test(s, "an endpoint's QP1 record put and deleted", test_gsi_record);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	cfg_errors_clear(&errs);
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
