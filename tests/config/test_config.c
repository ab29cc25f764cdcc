/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the configuration loader (config/): every example loads with the
 * values it spells out, every rule of schema version 1 is rejected with the
 * JSON path of the offending field, several errors come out at once in file
 * order, syntax errors carry file:line:col, and 100 000 QPs load quickly.
 *
 * JSON in this file is written with single quotes for readability; j()
 * turns them into double quotes before loading. No name here contains one.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "cfg.h"

#ifndef CFG_EXAMPLES_DIR
#define CFG_EXAMPLES_DIR "examples"
#endif

#define NAME "t.json"

static struct cfg_errors errs;

/* A copy of @s with ' turned into ", for loading. Caller frees. */
static char *
j(const char *s)
{
	char *d = strdup(s);

	for (char *p = d; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}

/* printf into a fresh buffer. Caller frees. */
static char *
fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/*
 * A configuration built from sections, each replaced by a default when NULL:
 * tenants blue (vni 100) and red (vni 200); an uplink fabric0 on 10.0.0.1 and
 * the tenant ports vm-blue-1 and vm-red-1; in both tenants 192.168.1.10 is
 * local and 192.168.1.20 on host 10.0.0.2; one blue RC pair 17 <-> 33.
 * @extra is appended as further top-level members (start it with a comma).
 */
#define D_TENANTS "[{'name':'blue','vni':100},{'name':'red','vni':200}]"
#define D_PORT_UPLINK "{'name':'fabric0','device':'net_pcap0','role':'uplink'," \
	"'ip':'10.0.0.1','mac':'02:00:00:00:00:01'}"
#define D_PORT_BLUE "{'name':'vm-blue-1','device':'net_pcap1','role':'tenant'," \
	"'tenant':'blue','mac':'02:00:00:00:01:01'}"
#define D_PORT_RED "{'name':'vm-red-1','device':'net_pcap2','role':'tenant'," \
	"'tenant':'red','mac':'02:00:00:00:02:01'}"
#define D_PORTS "[" D_PORT_UPLINK "," D_PORT_BLUE "," D_PORT_RED "]"
#define D_EP_BLUE10 "{'tenant':'blue','vip':'192.168.1.10','host':'10.0.0.1'," \
	"'port':'vm-blue-1','mac':'02:00:00:00:aa:10'}"
#define D_EP_BLUE20 "{'tenant':'blue','vip':'192.168.1.20','host':'10.0.0.2'}"
#define D_EP_RED10 "{'tenant':'red','vip':'192.168.1.10','host':'10.0.0.1'," \
	"'port':'vm-red-1','mac':'02:00:00:00:bb:10'}"
#define D_EP_RED20 "{'tenant':'red','vip':'192.168.1.20','host':'10.0.0.2'}"
#define D_ENDPOINTS "[" D_EP_BLUE10 "," D_EP_BLUE20 "," D_EP_RED10 "," D_EP_RED20 "]"
#define QP(t, vip, vqpn, pqpn, type, pvip, pvqpn) \
	"{'tenant':'" t "','vip':'" vip "','vqpn':" #vqpn ",'pqpn':" #pqpn ",'type':'" type \
	"','peer':{'vip':'" pvip "','vqpn':" #pvqpn "}}"
#define UD(t, vip, vqpn, pqpn) \
	"{'tenant':'" t "','vip':'" vip "','vqpn':" #vqpn ",'pqpn':" #pqpn ",'type':'ud'}"
#define QP_B17 QP("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.20", 33)
#define QP_B33 QP("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10", 17)
#define D_QPS "[" QP_B17 "," QP_B33 "]"
#define MR(t, vip, rkey, addr, len, taddr) \
	"{'tenant':'" t "','vip':'" vip "','rkey':" rkey ",'addr':" addr ",'length':" len \
	",'target_rkey':'0xabcdef','target_addr':" taddr ",'access':['remote_read']}"

static char *
doc(const char *tenants, const char *ports, const char *endpoints, const char *qps,
    const char *mrs, const char *extra)
{
	char *s = fmt("{'version':1,'tenants':%s,'ports':%s,'endpoints':%s,'qps':%s,'mrs':%s%s}",
		      tenants ? tenants : D_TENANTS, ports ? ports : D_PORTS,
		      endpoints ? endpoints : D_ENDPOINTS, qps ? qps : D_QPS,
		      mrs ? mrs : "[]", extra ? extra : "");
	char *d = j(s);

	free(s);
	return d;
}

/* Load @json (already with double quotes) as NAME; errors go to errs. */
static struct cfg *
load_raw(const char *json)
{
	cfg_errors_clear(&errs);
	return cfg_load_string(json, NAME, &errs);
}

/* Load the document doc(...) built from the arguments, then free it. */
static struct cfg *
load_doc(const char *tenants, const char *ports, const char *endpoints, const char *qps,
	 const char *mrs, const char *extra)
{
	char *d = doc(tenants, ports, endpoints, qps, mrs, extra);
	struct cfg *c = load_raw(d);

	free(d);
	return c;
}

/* Index of the first message containing @sub, or -1. */
static int
msg_find(const char *sub)
{
	for (uint32_t i = 0; i < errs.n; i++)
		if (strstr(errs.msg[i], sub) != NULL)
			return (int)i;
	return -1;
}

static void
dump_errs(void)
{
	cfg_errors_print(&errs, stderr);
}

/*
 * Expect the load to fail with a message containing @sub. The message is
 * printed on failure so that a broken expectation is easy to read.
 */
#define EXPECT_ERR(c, sub) \
	do { \
		CU_ASSERT_PTR_NULL(c); \
		if (msg_find(sub) < 0) { \
			fprintf(stderr, "\nexpected message containing: %s\ngot:\n", sub); \
			dump_errs(); \
		} \
		CU_ASSERT(msg_find(sub) >= 0); \
		cfg_free(c); \
	} while (0)

#define EXPECT_OK(c) \
	do { \
		if ((c) == NULL) { \
			fprintf(stderr, "\nunexpected errors:\n"); \
			dump_errs(); \
		} \
		CU_ASSERT_PTR_NOT_NULL_FATAL(c); \
	} while (0)

/* Load doc(...) expecting exactly one error, containing @sub. */
static void
expect_one(const char *sub, const char *tenants, const char *ports, const char *endpoints,
	   const char *qps, const char *mrs, const char *extra)
{
	struct cfg *c = load_doc(tenants, ports, endpoints, qps, mrs, extra);

	EXPECT_ERR(c, sub);
	if (errs.n != 1) {
		fprintf(stderr, "\nexpected one message (%s), got %u:\n", sub, errs.n);
		dump_errs();
	}
	CU_ASSERT_EQUAL(errs.n, 1);
}

static struct cfg *
load_example(const char *file)
{
	char *path = fmt("%s/%s", CFG_EXAMPLES_DIR, file);
	struct cfg *c;

	cfg_errors_clear(&errs);
	c = cfg_load_file(path, &errs);
	if (c == NULL)
		dump_errs();
	free(path);
	return c;
}

static const struct cfg_qp *
find_qp(const struct cfg *c, const char *tenant, const char *vip, uint32_t vqpn)
{
	struct cfg_ip ip;
	int t = cfg_tenant_index(c, tenant);

	if (t < 0 || cfg_ip_parse(vip, &ip) < 0)
		return NULL;
	for (uint32_t i = 0; i < c->n_qps; i++)
		if (c->qps[i].tenant == t && c->qps[i].vqpn == vqpn &&
		    cfg_ip_equal(&c->qps[i].vip, &ip))
			return &c->qps[i];
	return NULL;
}

static void
test_example_minimal(void)
{
	struct cfg *c = load_example("minimal.json");
	char buf[CFG_IP_STRLEN];

	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->version, 1);
	CU_ASSERT_EQUAL(c->udp_port, 4791);
	CU_ASSERT_STRING_EQUAL(c->path, CFG_EXAMPLES_DIR "/minimal.json");
	CU_ASSERT_EQUAL(c->n_ports, 2);
	CU_ASSERT_EQUAL(c->ports[0].role, CFG_ROLE_UPLINK);
	CU_ASSERT_EQUAL(c->ports[0].tenant, -1);
	CU_ASSERT_TRUE(c->ports[0].has_ip);
	CU_ASSERT_EQUAL(cfg_ip_format(&c->ports[0].ip, buf, sizeof(buf)), 8);
	CU_ASSERT_STRING_EQUAL(buf, "10.0.0.1");
	CU_ASSERT_TRUE(c->ports[0].has_gateway_mac);
	CU_ASSERT_EQUAL(c->ports[0].gateway_mac[5], 0xfe);
	CU_ASSERT_EQUAL(c->ports[0].mac[5], 0x01);
	CU_ASSERT_EQUAL(c->ports[1].role, CFG_ROLE_TENANT);
	CU_ASSERT_EQUAL(c->ports[1].tenant, 0);
	CU_ASSERT_FALSE(c->ports[1].has_ip);
	CU_ASSERT_FALSE(c->ports[1].has_gateway_mac);
	CU_ASSERT_STRING_EQUAL(c->ports[1].device, "net_pcap1");
	CU_ASSERT_PTR_EQUAL(cfg_port_by_name(c, "vm-blue-1"), &c->ports[1]);
	CU_ASSERT_PTR_NULL(cfg_port_by_name(c, "vm-red-1"));

	CU_ASSERT_EQUAL(c->n_tenants, 1);
	CU_ASSERT_STRING_EQUAL(c->tenants[0].name, "blue");
	CU_ASSERT_EQUAL(c->tenants[0].vni, 100);
	CU_ASSERT_EQUAL(c->tenants[0].max_qps, 1024);
	CU_ASSERT_TRUE(c->tenants[0].rate.set);
	CU_ASSERT_EQUAL(c->tenants[0].rate.bps, 25000000000ull);
	CU_ASSERT_EQUAL(c->tenants[0].rate.burst_bytes, 262144);
	CU_ASSERT_EQUAL(c->tenants[0].mr_check, CFG_MR_CHECK_ENFORCE);
	CU_ASSERT_EQUAL(c->tenants[0].n_qps, 2);
	CU_ASSERT_EQUAL(cfg_tenant_index(c, "blue"), 0);
	CU_ASSERT_EQUAL(cfg_tenant_index(c, "red"), -1);

	CU_ASSERT_EQUAL(c->n_endpoints, 2);
	CU_ASSERT_EQUAL(c->endpoints[0].port, 1);
	CU_ASSERT_TRUE(c->endpoints[0].has_mac);
	CU_ASSERT_EQUAL(c->endpoints[0].mac[4], 0xaa);
	CU_ASSERT_EQUAL(c->endpoints[1].port, -1);
	CU_ASSERT_FALSE(c->endpoints[1].has_mac);

	CU_ASSERT_EQUAL(c->n_qps, 2);
	CU_ASSERT_EQUAL(c->qps[0].vqpn, 17);
	CU_ASSERT_EQUAL(c->qps[0].pqpn, 4097);
	CU_ASSERT_EQUAL(c->qps[0].type, CFG_QP_RC);
	CU_ASSERT_TRUE(c->qps[0].has_peer);
	CU_ASSERT_EQUAL(c->qps[0].peer_vqpn, 33);
	CU_ASSERT_EQUAL(c->qps[0].peer, 1);
	CU_ASSERT_EQUAL(c->qps[1].peer, 0);
	CU_ASSERT_EQUAL(c->qps[0].endpoint, 0);
	CU_ASSERT_EQUAL(c->qps[1].endpoint, 1);
	CU_ASSERT_TRUE(c->qps[0].rate.set);
	CU_ASSERT_EQUAL(c->qps[0].rate.bps, 10000000000ull);
	CU_ASSERT_EQUAL(c->qps[0].rate.burst_bytes, 0);
	CU_ASSERT_FALSE(c->qps[1].rate.set);

	CU_ASSERT_EQUAL(c->n_mrs, 1);
	CU_ASSERT_EQUAL(c->mrs[0].rkey, 0x1234);
	CU_ASSERT_EQUAL(c->mrs[0].addr, 0x7f0000000000ull);
	CU_ASSERT_EQUAL(c->mrs[0].length, 1048576);
	CU_ASSERT_EQUAL(c->mrs[0].target_rkey, 0xabcdef);
	CU_ASSERT_EQUAL(c->mrs[0].target_addr, 0x200000000ull);
	CU_ASSERT_EQUAL(c->mrs[0].access, CFG_ACC_REMOTE_READ | CFG_ACC_REMOTE_WRITE);
	CU_ASSERT_EQUAL(c->mrs[0].endpoint, 0);

	CU_ASSERT_EQUAL(c->n_neighbors, 1);
	CU_ASSERT_EQUAL(c->neighbors[0].mac[5], 0x02);
	CU_ASSERT_TRUE(c->dcqcn.enabled);
	CU_ASSERT_STRING_EQUAL(c->dcqcn.profile, "nvidia");
	CU_ASSERT_TRUE(c->offload.enabled);
	cfg_free(c);
}

static void
test_example_two_tenants(void)
{
	struct cfg *c = load_example("two-tenants.json");
	const struct cfg_qp *b17, *r17, *b18, *b19;
	int blue, red;

	EXPECT_OK(c);
	blue = cfg_tenant_index(c, "blue");
	red = cfg_tenant_index(c, "red");
	CU_ASSERT_TRUE(blue >= 0 && red >= 0 && blue != red);
	CU_ASSERT_EQUAL(c->n_ports, 3);
	CU_ASSERT_EQUAL(cfg_port_by_name(c, "vm-red-1")->tenant, red);
	CU_ASSERT_STRING_EQUAL(cfg_port_by_name(c, "fabric0")->device, "net_pcap0");
	CU_ASSERT_EQUAL(c->tenants[blue].n_qps, 4);
	CU_ASSERT_EQUAL(c->tenants[red].n_qps, 2);

	/* The same vIP and vQPN in both tenants, with distinct pqpns. */
	b17 = find_qp(c, "blue", "192.168.1.10", 17);
	r17 = find_qp(c, "red", "192.168.1.10", 17);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b17);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r17);
	CU_ASSERT_NOT_EQUAL(b17->pqpn, r17->pqpn);
	CU_ASSERT_TRUE(b17->peer >= 0 && r17->peer >= 0);
	CU_ASSERT_EQUAL(c->qps[b17->peer].tenant, blue);
	CU_ASSERT_EQUAL(c->qps[r17->peer].tenant, red);
	CU_ASSERT_EQUAL(c->qps[b17->peer].vqpn, 33);
	CU_ASSERT_EQUAL(c->qps[r17->peer].vqpn, 33);
	CU_ASSERT_EQUAL(c->endpoints[b17->endpoint].port, 1);
	CU_ASSERT_EQUAL(c->endpoints[r17->endpoint].port, 2);

	/* The hairpin pair: both ends local on vm-blue-1. */
	b18 = find_qp(c, "blue", "192.168.1.11", 18);
	b19 = find_qp(c, "blue", "192.168.1.10", 19);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b18);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b19);
	CU_ASSERT_PTR_EQUAL(&c->qps[b18->peer], b19);
	CU_ASSERT_PTR_EQUAL(&c->qps[b19->peer], b18);
	CU_ASSERT_EQUAL(c->endpoints[b18->endpoint].port, c->endpoints[b19->endpoint].port);

	CU_ASSERT_EQUAL(c->n_mrs, 2);
	CU_ASSERT_EQUAL(c->mrs[0].rkey, c->mrs[1].rkey);
	CU_ASSERT_NOT_EQUAL(c->mrs[0].tenant, c->mrs[1].tenant);
	CU_ASSERT_EQUAL(c->n_neighbors, 1);
	cfg_free(c);
}

static void
test_example_ipv6(void)
{
	struct cfg *c = load_example("ipv6.json");
	char buf[CFG_IP_STRLEN];

	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->ports[0].ip.ver, CFG_IPV6);
	for (uint32_t i = 0; i < c->n_endpoints; i++) {
		CU_ASSERT_EQUAL(c->endpoints[i].vip.ver, CFG_IPV6);
		CU_ASSERT_EQUAL(c->endpoints[i].host.ver, CFG_IPV6);
	}
	cfg_ip_format(&c->endpoints[1].host, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "fd00::2");
	CU_ASSERT_EQUAL(c->n_qps, 4);
	CU_ASSERT_EQUAL(c->qps[0].peer, 1);
	CU_ASSERT_EQUAL(c->qps[2].type, CFG_QP_UD);
	CU_ASSERT_FALSE(c->qps[2].has_peer);
	CU_ASSERT_EQUAL(c->qps[2].peer, -1);
	CU_ASSERT_EQUAL(c->mrs[0].length, 0x100000);
	CU_ASSERT_EQUAL(c->mrs[0].access,
			CFG_ACC_REMOTE_READ | CFG_ACC_REMOTE_WRITE | CFG_ACC_REMOTE_ATOMIC);
	CU_ASSERT_STRING_EQUAL(c->dcqcn.profile, "paper");
	CU_ASSERT_EQUAL(c->tenants[0].max_qps, CFG_DEFAULT_MAX_QPS);
	cfg_free(c);
}

/* Every *.json file in examples/, whoever wrote it, must load. */
static void
test_example_all(void)
{
	DIR *d = opendir(CFG_EXAMPLES_DIR);
	unsigned loaded = 0;
	struct dirent *de;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		struct cfg *c;

		if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		c = load_example(de->d_name);
		if (c == NULL)
			fprintf(stderr, "\n%s does not load\n", de->d_name);
		CU_ASSERT_PTR_NOT_NULL(c);
		CU_ASSERT(c == NULL || c->n_ports > 0);
		cfg_free(c);
		loaded++;
	}
	closedir(d);
	CU_ASSERT(loaded >= 3);
}

static void
test_ip_mac(void)
{
	struct cfg_ip a, b;
	uint8_t mac[6];
	char buf[CFG_IP_STRLEN];

	CU_ASSERT_EQUAL(cfg_ip_parse("10.0.0.1", &a), 0);
	CU_ASSERT_EQUAL(a.ver, CFG_IPV4);
	CU_ASSERT_EQUAL(a.b[0], 10);
	CU_ASSERT_EQUAL(a.b[3], 1);
	CU_ASSERT_EQUAL(a.b[4], 0);
	CU_ASSERT_EQUAL(cfg_ip_parse("fd00::1", &b), 0);
	CU_ASSERT_EQUAL(b.ver, CFG_IPV6);
	CU_ASSERT_EQUAL(b.b[0], 0xfd);
	CU_ASSERT_EQUAL(b.b[15], 1);
	CU_ASSERT_FALSE(cfg_ip_equal(&a, &b));
	CU_ASSERT_EQUAL(cfg_ip_parse("10.0.0.01", &b), -1);
	CU_ASSERT_EQUAL(cfg_ip_parse("10.0.0", &b), -1);
	CU_ASSERT_EQUAL(cfg_ip_parse("256.0.0.1", &b), -1);
	CU_ASSERT_EQUAL(cfg_ip_parse("fd00:::1", &b), -1);
	CU_ASSERT_EQUAL(cfg_ip_parse("", &b), -1);
	CU_ASSERT_EQUAL(cfg_ip_parse("10.0.0.1", &b), 0);
	CU_ASSERT_TRUE(cfg_ip_equal(&a, &b));
	CU_ASSERT_EQUAL(cfg_ip_format(&a, buf, sizeof(buf)), 8);
	CU_ASSERT_STRING_EQUAL(buf, "10.0.0.1");
	CU_ASSERT_EQUAL(cfg_ip_format(&a, buf, 8), -1);
	CU_ASSERT_EQUAL(cfg_ip_parse("FD00:0:0::0:1", &b), 0);
	CU_ASSERT_EQUAL(cfg_ip_format(&b, buf, sizeof(buf)), 7);
	CU_ASSERT_STRING_EQUAL(buf, "fd00::1");

	CU_ASSERT_EQUAL(cfg_mac_parse("02:00:00:Ab:cD:ff", mac), 0);
	CU_ASSERT_EQUAL(mac[0], 0x02);
	CU_ASSERT_EQUAL(mac[3], 0xab);
	CU_ASSERT_EQUAL(mac[4], 0xcd);
	CU_ASSERT_EQUAL(mac[5], 0xff);
	CU_ASSERT_EQUAL(cfg_mac_parse("02:00:00:00:00", mac), -1);
	CU_ASSERT_EQUAL(cfg_mac_parse("02-00-00-00-00-01", mac), -1);
	CU_ASSERT_EQUAL(cfg_mac_parse("02:00:00:00:00:0g", mac), -1);
	CU_ASSERT_EQUAL(cfg_mac_parse("2:00:00:00:00:001", mac), -1);
	CU_ASSERT_EQUAL(cfg_mac_parse("02:00:00:00:00:01:", mac), -1);
}

static void
test_numbers(void)
{
	struct cfg *c;

	/* Integers and "0x" strings, in either case, up to the field width. */
	c = load_doc(NULL, NULL, NULL, NULL,
		     "[" MR("blue", "192.168.1.10", "'0xFFFFFFFF'", "'0xfffffffffffe0000'",
			    "'0x10000'", "4096") ","
		     MR("blue", "192.168.1.10", "4294967294", "0", "1", "'0x0'") "]", NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->mrs[0].rkey, 0xffffffffu);
	CU_ASSERT_EQUAL(c->mrs[0].addr, 0xfffffffffffe0000ull);
	CU_ASSERT_EQUAL(c->mrs[0].length, 0x10000);
	CU_ASSERT_EQUAL(c->mrs[0].target_addr, 4096);
	CU_ASSERT_EQUAL(c->mrs[1].rkey, 4294967294u);
	CU_ASSERT_EQUAL(c->mrs[1].target_addr, 0);
	cfg_free(c);

	expect_one("t.json: mrs[0].rkey: 0x100000000 is out of range (max 4294967295)", NULL, NULL,
		   NULL, NULL, "[" MR("blue", "192.168.1.10", "'0x100000000'", "0", "1", "0") "]",
		   NULL);
	expect_one("t.json: mrs[0].rkey: 4294967296 is out of range (max 4294967295)", NULL, NULL,
		   NULL, NULL, "[" MR("blue", "192.168.1.10", "4294967296", "0", "1", "0") "]",
		   NULL);
	expect_one("t.json: mrs[0].rkey: \"4660\" is not a number", NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "'4660'", "0", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].rkey: -1 is negative", NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "-1", "0", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].rkey: expected an integer, not the real number 1.5",
		   NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "1.5", "0", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].rkey: expected an integer, not the real number 1",
		   NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "1.0", "0", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].rkey: \"0x\" has no hex digits", NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "'0x'", "0", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].rkey: \"0x12g4\" is not a hex number", NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "'0x12g4'", "0", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].addr: \"0x10000000000000000\" does not fit in 64 bits", NULL,
		   NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "1", "'0x10000000000000000'", "1", "0") "]",
		   NULL);
	expect_one("t.json: mrs[0].rkey: expected an integer or a \"0x\" hex string", NULL, NULL,
		   NULL, NULL, "[" MR("blue", "192.168.1.10", "true", "0", "1", "0") "]", NULL);
	/* Leading zeros do not count towards the width. */
	c = load_doc(NULL, NULL, NULL, NULL,
		     "[" MR("blue", "192.168.1.10", "'0x0000000000000000000012'", "0", "1",
			    "0") "]",
		     NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->mrs[0].rkey, 0x12);
	cfg_free(c);
}

static void
test_qpn_bounds(void)
{
	struct cfg *c;

	/* The extremes of the 24-bit range, as integers and as hex. */
	c = load_doc(NULL, NULL, NULL,
		     "[" QP("blue", "192.168.1.10", 2, 16777215, "rc", "192.168.1.20", 16777215) ","
		     QP("blue", "192.168.1.20", 16777215, '0xffffff', "rc", "192.168.1.10", 2) "]",
		     NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->qps[0].vqpn, 2);
	CU_ASSERT_EQUAL(c->qps[0].pqpn, 0xffffff);
	CU_ASSERT_EQUAL(c->qps[1].vqpn, 0xffffff);
	CU_ASSERT_EQUAL(c->qps[1].pqpn, 0xffffff);
	CU_ASSERT_EQUAL(c->qps[0].peer, 1);
	cfg_free(c);

	expect_one("t.json: qps[0].vqpn: QPN 0 is reserved", NULL, NULL, NULL,
		   "[" QP("blue", "192.168.1.10", 0, 4097, "uc", "192.168.1.20", 33) "]", NULL,
		   NULL);
	expect_one("t.json: qps[0].pqpn: QPN 1 is reserved", NULL, NULL, NULL,
		   "[" QP("blue", "192.168.1.10", 17, 1, "uc", "192.168.1.20", 33) ","
		   QP("blue", "192.168.1.20", 33, 8193, "uc", "192.168.1.10", 17) "]", NULL, NULL);
	expect_one("t.json: qps[1].pqpn: 16777216 is out of range (QPNs are 24-bit, max 16777215)",
		   NULL, NULL, NULL,
		   "[" QP("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.20", 33) ","
		   QP("blue", "192.168.1.20", 33, 16777216, "rc", "192.168.1.10", 17) "]", NULL,
		   NULL);
	expect_one("t.json: qps[0].vqpn: 0x1000000 is out of range (QPNs are 24-bit", NULL, NULL,
		   NULL, "[" UD("blue", "192.168.1.10", '0x1000000', 4097) "]", NULL,
		   NULL);
	/* vqpn 1 is the GSI QP: a UD record may name it (learning tenants forward RDMA-CM), no other. */
	{
		struct cfg *d = load_doc(NULL, NULL, NULL,
					 "[" QP("blue", "192.168.1.10", 1, 4097, "rc", "192.168.1.20", 33) "]", NULL, NULL);

		EXPECT_ERR(d, "t.json: qps[0].vqpn: QPN 1 is reserved (QPNs 0 and 1 are special; 1, the GSI QP, "
			   "only on a ud QP)");
	}
	c = load_doc(NULL, NULL, NULL, "[" UD("blue", "192.168.1.10", 1, 4097) "]", NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT(c && c->qps[0].vqpn == 1 && c->qps[0].type == CFG_QP_UD);
	cfg_free(c);
	/* A peer's vqpn follows the same rules. */
	{
		struct cfg *d = load_doc(NULL, NULL, NULL,
					 "[" QP("blue", "192.168.1.10", 17, 4097, "rc",
						"192.168.1.20", 1) "]", NULL, NULL);

		EXPECT_ERR(d, "t.json: qps[0].peer.vqpn: QPN 1 is reserved");
	}
}

static void
test_top_level(void)
{
	struct cfg *c;
	char *d;

	/* Only the required keys: every array absent is empty, every default set. */
	d = j("{'version':1,'ports':[],'tenants':[]}");
	c = load_raw(d);
	free(d);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->n_ports + c->n_tenants + c->n_endpoints + c->n_qps + c->n_mrs +
			c->n_neighbors, 0);
	CU_ASSERT_EQUAL(c->udp_port, 4791);
	CU_ASSERT_FALSE(c->dcqcn.enabled);
	CU_ASSERT_STRING_EQUAL(c->dcqcn.profile, "nvidia");
	CU_ASSERT_FALSE(c->offload.enabled);
	CU_ASSERT_STRING_EQUAL(c->path, NAME);
	cfg_free(c);

	d = j("{'comment':'one line','version':'0x1','ports':[],'tenants':[],'udp_port':'0x12b7'}");
	c = load_raw(d);
	free(d);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->udp_port, 4791);
	cfg_free(c);

	d = j("{'version':1,'ports':[],'tenants':[],'udp_port':4792,'comment':['a','b']}");
	c = load_raw(d);
	free(d);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->udp_port, 4792);
	cfg_free(c);

	d = j("{'version':1,'ports':[],'tenants':[],'bogus':1}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: bogus: unknown key");
	CU_ASSERT_EQUAL(errs.n, 1);

	d = j("{'ports':[]}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: version: missing required key");
	CU_ASSERT(msg_find("t.json: tenants: missing required key") >= 0);
	CU_ASSERT_EQUAL(errs.n, 2);

	/* Another version stops the load: the rest follows another schema. */
	d = j("{'version':2,'ports':[{'x':1}],'tenants':[]}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: version: unsupported version 2");
	CU_ASSERT_EQUAL(errs.n, 1);

	d = j("{'version':1,'ports':{},'tenants':[]}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: ports: expected an array");
	CU_ASSERT_EQUAL(errs.n, 1);

	d = j("{'version':1,'ports':[],'tenants':[],'comment':['a',3]}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: comment[1]: expected a string");

	d = j("{'version':1,'ports':[],'tenants':[],'udp_port':0}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: udp_port: must be greater than 0");

	d = j("{'version':1,'ports':[],'tenants':[],'udp_port':65536}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: udp_port: 65536 is out of range (max 65535)");

	d = j("[1, 2]");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: expected a JSON object at the top level");

	d = j("{'version':1,'ports':[],'tenants':[3]}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: tenants[0]: expected an object");
}

static void
test_tenants(void)
{
	struct cfg *c;

	c = load_doc("[{'name':'blue','vni':'0xffffff','rate':{'gbps':2.5}},"
		     "{'name':'red','vni':0,'max_qps':0,'mr_check':'off','rate':{'gbps':0.1,"
		     "'burst_bytes':'0x1000'}}]", NULL, NULL, "[]", NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->tenants[0].vni, 0xffffff);
	CU_ASSERT_EQUAL(c->tenants[0].max_qps, CFG_DEFAULT_MAX_QPS);
	CU_ASSERT_EQUAL(c->tenants[0].rate.bps, 2500000000ull);
	CU_ASSERT_EQUAL(c->tenants[0].mr_check, CFG_MR_CHECK_OFF);
	CU_ASSERT_EQUAL(c->tenants[1].vni, 0);
	CU_ASSERT_EQUAL(c->tenants[1].max_qps, 0);
	CU_ASSERT_EQUAL(c->tenants[1].rate.bps, 100000000ull);
	CU_ASSERT_EQUAL(c->tenants[1].rate.burst_bytes, 4096);
	CU_ASSERT_EQUAL(c->tenants[0].n_qps, 0);
	cfg_free(c);

	expect_one("t.json: tenants[1].bogus: unknown key",
		   "[{'name':'blue','vni':100},{'name':'red','vni':200,'bogus':true}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[1].name: \"blue\" is already defined by tenants[0]",
		   "[{'name':'blue','vni':100},{'name':'blue','vni':200},{'name':'red','vni':300}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[1].vni: 100 is already used by tenants[0]",
		   "[{'name':'blue','vni':100},{'name':'red','vni':100}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].vni: 16777216 is out of range (max 16777215)",
		   "[{'name':'blue','vni':16777216},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].vni: missing required key",
		   "[{'name':'blue'},{'name':'red','vni':200}]", NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[1].name: missing required key",
		   "[{'name':'blue','vni':100},{'vni':200},{'name':'red','vni':300}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].name: must not be empty",
		   "[{'name':'','vni':100},{'name':'blue','vni':101},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].max_qps: 4294967296 is out of range",
		   "[{'name':'blue','vni':100,'max_qps':4294967296},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].mr_check: \"on\" is not one of \"off\", \"enforce\"",
		   "[{'name':'blue','vni':100,'mr_check':'on'},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.gbps: 0 must be greater than 0",
		   "[{'name':'blue','vni':100,'rate':{'gbps':0}},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.gbps: -1 must be greater than 0",
		   "[{'name':'blue','vni':100,'rate':{'gbps':-1}},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.gbps: missing required key",
		   "[{'name':'blue','vni':100,'rate':{'burst_bytes':1}},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.burst_bytes: must be greater than 0",
		   "[{'name':'blue','vni':100,'rate':{'gbps':1,'burst_bytes':0}},"
		   "{'name':'red','vni':200}]", NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.burst_bytes: "
		   "expected an integer, not the real number 1.5",
		   "[{'name':'blue','vni':100,'rate':{'gbps':1,'burst_bytes':1.5}},"
		   "{'name':'red','vni':200}]", NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.pps: unknown key",
		   "[{'name':'blue','vni':100,'rate':{'gbps':1,'pps':5}},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate: expected an object",
		   "[{'name':'blue','vni':100,'rate':25},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
}

static void
test_ports(void)
{
	/* Each case keeps the rest valid, so exactly one message comes out. */
	expect_one("t.json: ports[1].tenant: unknown tenant \"green\"", NULL,
		   "[" D_PORT_UPLINK ",{'name':'vm-blue-1','device':'net_pcap1','role':'tenant',"
		   "'tenant':'green','mac':'02:00:00:00:01:01'}," D_PORT_RED "]",
		   "[" D_EP_RED10 "," D_EP_RED20 "]", "[]", NULL, NULL);
	expect_one("t.json: ports[0].ip: missing required key", NULL,
		   "[{'name':'fabric0','device':'net_pcap0','role':'uplink',"
		   "'mac':'02:00:00:00:00:01'}," D_PORT_BLUE "," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[0].mac: missing required key", NULL,
		   "[{'name':'fabric0','device':'net_pcap0','role':'uplink','ip':'10.0.0.1'},"
		   D_PORT_BLUE "," D_PORT_RED "]", NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[0].tenant: not allowed on uplink ports", NULL,
		   "[{'name':'fabric0','device':'net_pcap0','role':'uplink','ip':'10.0.0.1',"
		   "'tenant':'blue','mac':'02:00:00:00:00:01'}," D_PORT_BLUE "," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[1].ip: not allowed on tenant ports", NULL,
		   "[" D_PORT_UPLINK ",{'name':'vm-blue-1','device':'net_pcap1','role':'tenant',"
		   "'tenant':'blue','ip':'10.0.0.5','mac':'02:00:00:00:01:01'}," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[1].gateway_mac: not allowed on tenant ports", NULL,
		   "[" D_PORT_UPLINK ",{'name':'vm-blue-1','device':'net_pcap1','role':'tenant',"
		   "'tenant':'blue','gateway_mac':'02:00:00:00:00:fe','mac':'02:00:00:00:01:01'},"
		   D_PORT_RED "]", NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[1].tenant: missing required key", NULL,
		   "[" D_PORT_UPLINK ",{'name':'vm-blue-1','device':'net_pcap1','role':'tenant',"
		   "'mac':'02:00:00:00:01:01'}," D_PORT_RED "]",
		   "[" D_EP_BLUE20 "," D_EP_RED10 "," D_EP_RED20 "]", "[]", NULL, NULL);
	expect_one("t.json: ports[2].name: \"vm-blue-1\" is already defined by ports[1]", NULL,
		   "[" D_PORT_UPLINK "," D_PORT_BLUE ",{'name':'vm-blue-1','device':'net_pcap2',"
		   "'role':'tenant','tenant':'red','mac':'02:00:00:00:02:01'}]",
		   "[" D_EP_BLUE10 "," D_EP_BLUE20 "]", NULL, NULL, NULL);
	expect_one("t.json: ports[2].device: \"net_pcap1\" is already used by ports[1]", NULL,
		   "[" D_PORT_UPLINK "," D_PORT_BLUE ",{'name':'vm-red-1','device':'net_pcap1',"
		   "'role':'tenant','tenant':'red','mac':'02:00:00:00:02:01'}]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[3].ip: 10.0.0.1 is already the ip of ports[0]", NULL,
		   "[" D_PORT_UPLINK "," D_PORT_BLUE "," D_PORT_RED ",{'name':'fabric1',"
		   "'device':'net_pcap3','role':'uplink','ip':'10.0.0.1',"
		   "'mac':'02:00:00:00:00:03'}]", NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[0].role: \"spine\" is not one of \"uplink\", \"tenant\"", NULL,
		   "[{'name':'fabric0','device':'net_pcap0','role':'spine','ip':'10.0.0.1',"
		   "'mac':'02:00:00:00:00:01'}," D_PORT_BLUE "," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[0].mac: \"02:00:00:00:01\" is not a MAC address", NULL,
		   "[{'name':'fabric0','device':'net_pcap0','role':'uplink','ip':'10.0.0.1',"
		   "'mac':'02:00:00:00:01'}," D_PORT_BLUE "," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[0].ip: \"10.0.0.300\" is not an IPv4 or IPv6 address", NULL,
		   "[{'name':'fabric0','device':'net_pcap0','role':'uplink','ip':'10.0.0.300',"
		   "'mac':'02:00:00:00:00:01'}," D_PORT_BLUE "," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[0].name: expected a string", NULL,
		   "[{'name':7,'device':'net_pcap0','role':'uplink','ip':'10.0.0.1',"
		   "'mac':'02:00:00:00:00:01'}," D_PORT_BLUE "," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: ports[1].speed: unknown key", NULL,
		   "[" D_PORT_UPLINK ",{'name':'vm-blue-1','device':'net_pcap1','role':'tenant',"
		   "'tenant':'blue','mac':'02:00:00:00:01:01','speed':100}," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
}

static void
test_endpoints(void)
{
	struct cfg *c;

	/* An IPv4 tenant over an IPv6 fabric, and a remote endpoint with a MAC. */
	c = load_doc(NULL, NULL,
		     "[{'tenant':'blue','vip':'192.168.1.10','host':'fd00::1','port':'vm-blue-1',"
		     "'mac':'02:00:00:00:aa:10'},{'tenant':'blue','vip':'192.168.1.20',"
		     "'host':'fd00::2','mac':'02:00:00:00:aa:20'}]", NULL, NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->endpoints[0].vip.ver, CFG_IPV4);
	CU_ASSERT_EQUAL(c->endpoints[0].host.ver, CFG_IPV6);
	CU_ASSERT_EQUAL(c->endpoints[1].port, -1);
	CU_ASSERT_TRUE(c->endpoints[1].has_mac);
	cfg_free(c);

	expect_one("t.json: endpoints[2].tenant: unknown tenant \"green\"", NULL, NULL,
		   "[" D_EP_BLUE10 "," D_EP_BLUE20 ",{'tenant':'green','vip':'10.9.9.9',"
		   "'host':'10.0.0.2'}]", NULL, NULL, NULL);
	expect_one("t.json: endpoints[0].mac: missing required key", NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','host':'10.0.0.1','port':'vm-blue-1'},"
		   D_EP_BLUE20 "]", NULL, NULL, NULL);
	expect_one("t.json: endpoints[0].port: \"fabric0\" is an uplink port, not a tenant port",
		   NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','host':'10.0.0.1','port':'fabric0',"
		   "'mac':'02:00:00:00:aa:10'}," D_EP_BLUE20 "]", NULL, NULL, NULL);
	expect_one("t.json: endpoints[0].port: port \"vm-red-1\" belongs to tenant \"red\", "
		   "not \"blue\"", NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','host':'10.0.0.1','port':'vm-red-1',"
		   "'mac':'02:00:00:00:aa:10'}," D_EP_BLUE20 "]", NULL, NULL, NULL);
	expect_one("t.json: endpoints[0].port: unknown port \"vm-blue-9\"", NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','host':'10.0.0.1','port':'vm-blue-9',"
		   "'mac':'02:00:00:00:aa:10'}," D_EP_BLUE20 "]", NULL, NULL, NULL);
	expect_one("t.json: endpoints[2].vip: 192.168.1.10 is already an endpoint of tenant "
		   "\"blue\" (endpoints[0])", NULL, NULL,
		   "[" D_EP_BLUE10 "," D_EP_BLUE20 ",{'tenant':'blue','vip':'192.168.1.10',"
		   "'host':'10.0.0.2'}]", NULL, NULL, NULL);
	/* A port whose role is wrong is reported once, not again by its endpoints. */
	expect_one("t.json: ports[1].role: \"vm\" is not one of", NULL,
		   "[" D_PORT_UPLINK ",{'name':'vm-blue-1','device':'net_pcap1','role':'vm',"
		   "'tenant':'blue','mac':'02:00:00:00:01:01'}," D_PORT_RED "]",
		   NULL, NULL, NULL, NULL);
	expect_one("t.json: endpoints[1].host: missing required key", NULL, NULL,
		   "[" D_EP_BLUE10 ",{'tenant':'blue','vip':'192.168.1.20'}]", NULL, NULL, NULL);
	expect_one("t.json: endpoints[1].vip: \"192.168.1\" is not an IPv4 or IPv6 address", NULL,
		   NULL, "[" D_EP_BLUE10 ",{'tenant':'blue','vip':'192.168.1','host':'10.0.0.2'},"
		   D_EP_BLUE20 "]", NULL, NULL, NULL);
}

static void
test_qps(void)
{
	struct cfg *c;

	/* The same pqpn on two hosts is fine; so is the same vqpn in two tenants. */
	c = load_doc(NULL, NULL, NULL,
		     "[" QP("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.20", 33) ","
		     QP("blue", "192.168.1.20", 33, 4097, "rc", "192.168.1.10", 17) ","
		     QP("red", "192.168.1.10", 17, 4098, "uc", "192.168.1.20", 33) ","
		     QP("red", "192.168.1.20", 33, 4098, "uc", "192.168.1.10", 17) ","
		     "{'tenant':'red','vip':'192.168.1.10','vqpn':40,'pqpn':4099,'type':'ud',"
		     "'rate':{'gbps':1.25,'burst_bytes':65536}}]", NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->qps[0].peer, 1);
	CU_ASSERT_EQUAL(c->qps[2].peer, 3);
	CU_ASSERT_EQUAL(c->qps[3].peer, 2);
	CU_ASSERT_EQUAL(c->qps[2].type, CFG_QP_UC);
	CU_ASSERT_EQUAL(c->qps[4].type, CFG_QP_UD);
	CU_ASSERT_EQUAL(c->qps[4].peer, -1);
	CU_ASSERT_EQUAL(c->qps[4].endpoint, 2);
	CU_ASSERT_EQUAL(c->qps[4].rate.bps, 1250000000ull);
	CU_ASSERT_EQUAL(c->qps[4].rate.burst_bytes, 65536);
	CU_ASSERT_EQUAL(c->tenants[0].n_qps, 2);
	CU_ASSERT_EQUAL(c->tenants[1].n_qps, 3);
	cfg_free(c);

	expect_one("t.json: qps[3].pqpn: 4097 is already used on host 10.0.0.1 by qps[0]",
		   NULL, NULL, NULL,
		   "[" QP_B17 "," QP_B33 ","
		   UD("red", "192.168.1.10", 17, 4098) ","
		   UD("red", "192.168.1.10", 18, 4097) "]", NULL, NULL);
	expect_one("t.json: qps[2].vqpn: 192.168.1.10 qp 17 in tenant \"blue\" is already "
		   "defined by qps[0]", NULL, NULL, NULL,
		   "[" QP_B17 "," QP_B33 "," UD("blue", "192.168.1.10", 17, 5000) "]",
		   NULL, NULL);
	expect_one("t.json: qps[2].vip: 192.168.1.99 is not an endpoint of tenant \"blue\"",
		   NULL, NULL, NULL,
		   "[" QP_B17 "," QP_B33 "," UD("blue", "192.168.1.99", 17, 5000) "]",
		   NULL, NULL);
	expect_one("t.json: qps[2].tenant: unknown tenant \"green\"", NULL, NULL, NULL,
		   "[" QP_B17 "," QP_B33 "," QP("green", "192.168.1.10", 17, 4097, "rc",
						"192.168.1.20", 99) "]", NULL, NULL);
	expect_one("t.json: qps[0].peer: missing required key (rc QPs need a peer)", NULL, NULL,
		   NULL, "[{'tenant':'blue','vip':'192.168.1.10','vqpn':17,'pqpn':4097,"
		   "'type':'rc'}]", NULL, NULL);
	expect_one("t.json: qps[0].peer: missing required key (uc QPs need a peer)", NULL, NULL,
		   NULL, "[{'tenant':'blue','vip':'192.168.1.10','vqpn':17,'pqpn':4097,"
		   "'type':'uc'}]", NULL, NULL);
	expect_one("t.json: qps[0].peer: not allowed on ud QPs", NULL, NULL, NULL,
		   "[" QP("blue", "192.168.1.10", 17, 4097, "ud", "192.168.1.20", 33) "]",
		   NULL, NULL);
	expect_one("t.json: qps[0].peer: no QP 192.168.1.20 qp 34 in tenant \"blue\"",
		   NULL, NULL, NULL,
		   "[" QP("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.20", 34) "]",
		   NULL, NULL);
	/* Found in another tenant is not found: peers stay inside their tenant. */
	expect_one("t.json: qps[0].peer: no QP 192.168.1.20 qp 33 in tenant \"red\"",
		   NULL, NULL, NULL,
		   "[" QP("red", "192.168.1.10", 17, 4097, "rc", "192.168.1.20", 33) ","
		   UD("blue", "192.168.1.20", 33, 8193) "]", NULL, NULL);
	expect_one("t.json: qps[0].peer: qps[2] (192.168.1.20 qp 33) does not point back",
		   NULL, NULL, NULL,
		   "[" QP_B17 "," QP("blue", "192.168.1.10", 18, 4098, "rc", "192.168.1.20", 33)
		   "," QP("blue", "192.168.1.20", 33, 8193, "rc", "192.168.1.10", 18) "]",
		   NULL, NULL);
	{
		/* Both ends disagree on the type: each says so. */
		struct cfg *d = load_doc(NULL, NULL, NULL,
					 "[" QP_B17 "," QP("blue", "192.168.1.20", 33, 8193, "uc",
							    "192.168.1.10", 17) "]", NULL, NULL);

		EXPECT_ERR(d, "t.json: qps[0].peer: qps[1] (192.168.1.20 qp 33) is uc, not rc");
		CU_ASSERT(msg_find("t.json: qps[1].peer: qps[0] (192.168.1.10 qp 17) is rc, not uc")
			  >= 0);
		CU_ASSERT_EQUAL(errs.n, 2);
	}
	expect_one("t.json: qps[0].peer: qps[1] (192.168.1.20 qp 33) is ud, not rc",
		   NULL, NULL, NULL,
		   "[" QP_B17 "," UD("blue", "192.168.1.20", 33, 8193) "]",
		   NULL, NULL);
	expect_one("t.json: qps[0].peer: a QP cannot be its own peer", NULL, NULL, NULL,
		   "[" QP("blue", "192.168.1.10", 17, 4097, "rc", "192.168.1.10", 17) "]",
		   NULL, NULL);
	expect_one("t.json: qps[0].type: \"rd\" is not one of \"rc\", \"uc\", \"ud\"", NULL, NULL,
		   NULL, "[" QP("blue", "192.168.1.10", 17, 4097, "rd", "192.168.1.20", 33) ","
		   QP_B33 "]", NULL, NULL);
	expect_one("t.json: qps[0].peer.bogus: unknown key", NULL, NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','vqpn':17,'pqpn':4097,'type':'rc',"
		   "'peer':{'vip':'192.168.1.20','vqpn':33,'bogus':1}}," QP_B33 "]", NULL, NULL);
	expect_one("t.json: qps[0].peer.vip: missing required key", NULL, NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','vqpn':17,'pqpn':4097,'type':'rc',"
		   "'peer':{'vqpn':33}}," QP_B33 "]", NULL, NULL);
	expect_one("t.json: qps[1].rate.gbps: \"fast\" is not a number", NULL, NULL, NULL,
		   "[" QP_B17 ",{'tenant':'blue','vip':'192.168.1.20','vqpn':33,'pqpn':8193,"
		   "'type':'rc','peer':{'vip':'192.168.1.10','vqpn':17},'rate':{'gbps':'fast'}}]",
		   NULL, NULL);
	expect_one("t.json: qps[0].pqpn: missing required key", NULL, NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','vqpn':17,'type':'rc',"
		   "'peer':{'vip':'192.168.1.20','vqpn':33}}," QP_B33 "]", NULL, NULL);
}

static void
test_quota(void)
{
	const char *t = "[{'name':'blue','vni':100,'max_qps':3},{'name':'red','vni':200}]";
	struct cfg *c;

	c = load_doc(t, NULL, NULL,
		     "[" UD("blue", "192.168.1.10", 40, 5000) ","
		     UD("blue", "192.168.1.10", 41, 5001) ","
		     UD("red", "192.168.1.10", 41, 5002) ","
		     UD("blue", "192.168.1.10", 42, 5003) "]", NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->tenants[0].n_qps, 3);
	CU_ASSERT_EQUAL(c->tenants[1].n_qps, 1);
	cfg_free(c);

	c = load_doc(t, NULL, NULL,
		     "[" UD("blue", "192.168.1.10", 40, 5000) ","
		     UD("blue", "192.168.1.10", 41, 5001) ","
		     UD("red", "192.168.1.10", 41, 5002) ","
		     UD("blue", "192.168.1.10", 42, 5003) ","
		     UD("blue", "192.168.1.10", 43, 5004) ","
		     UD("blue", "192.168.1.10", 44, 5005) "]", NULL, NULL);
	EXPECT_ERR(c, "t.json: qps[4].tenant: tenant \"blue\" exceeds max_qps 3");
	CU_ASSERT(msg_find("t.json: qps[5].tenant: tenant \"blue\" exceeds max_qps 3") >= 0);
	CU_ASSERT(msg_find("qps[3]") < 0);
	CU_ASSERT_EQUAL(errs.n, 2);

	expect_one("t.json: qps[0].tenant: tenant \"red\" exceeds max_qps 0",
		   "[{'name':'blue','vni':100},{'name':'red','vni':200,'max_qps':0}]", NULL, NULL,
		   "[" UD("red", "192.168.1.10", 40, 5000) "]", NULL, NULL);
}

static void
test_mrs(void)
{
	struct cfg *c;

	/* A window that ends exactly at 2^64 - 1 is fine; one byte more is not. */
	c = load_doc(NULL, NULL, NULL, NULL,
		     "[" MR("blue", "192.168.1.10", "1", "'0xfffffffffffff000'", "'0xfff'",
			    "'0xfffffffffffff000'") ","
		     MR("red", "192.168.1.10", "1", "0", "1", "0") ","
		     MR("blue", "192.168.1.20", "1", "0", "1", "0") "]", NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->mrs[0].endpoint, 0);
	CU_ASSERT_EQUAL(c->mrs[1].endpoint, 2);
	CU_ASSERT_EQUAL(c->mrs[2].endpoint, 1);
	CU_ASSERT_EQUAL(c->mrs[0].access, CFG_ACC_REMOTE_READ);
	cfg_free(c);

	expect_one("t.json: mrs[0].addr: 0xfffffffffffff000 + length 0x1000 overflows 64 bits",
		   NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "1", "'0xfffffffffffff000'", "'0x1000'", "0") "]",
		   NULL);
	expect_one("t.json: mrs[0].target_addr: 0xffffffffffffffff + length 0x1 overflows 64 bits",
		   NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "1", "0", "1", "'0xffffffffffffffff'") "]", NULL);
	expect_one("t.json: mrs[0].length: must be greater than 0", NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "1", "0", "0", "0") "]", NULL);
	expect_one("t.json: mrs[1].rkey: 0x00001234 of 192.168.1.10 in tenant \"blue\" is "
		   "already defined by mrs[0]", NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "'0x1234'", "0", "1", "0") ","
		   MR("blue", "192.168.1.10", "4660", "'0x1000'", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].vip: 192.168.1.30 is not an endpoint of tenant \"blue\"",
		   NULL, NULL, NULL, NULL, "[" MR("blue", "192.168.1.30", "1", "0", "1", "0") "]",
		   NULL);
	expect_one("t.json: mrs[0].tenant: unknown tenant \"green\"", NULL, NULL, NULL, NULL,
		   "[" MR("green", "192.168.1.30", "1", "0", "1", "0") "]", NULL);
	expect_one("t.json: mrs[0].target_rkey: 4294967296 is out of range", NULL, NULL, NULL,
		   NULL, "[{'tenant':'blue','vip':'192.168.1.10','rkey':1,'addr':0,'length':1,"
		   "'target_rkey':4294967296,'target_addr':0,'access':['remote_read']}]", NULL);
	expect_one("t.json: mrs[0].access: must not be empty", NULL, NULL, NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','rkey':1,'addr':0,'length':1,"
		   "'target_rkey':1,'target_addr':0,'access':[]}]", NULL);
	expect_one("t.json: mrs[0].access[1]: \"local_write\" is not one of \"remote_read\", "
		   "\"remote_write\", \"remote_atomic\"", NULL, NULL, NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','rkey':1,'addr':0,'length':1,"
		   "'target_rkey':1,'target_addr':0,"
		   "'access':['remote_read','local_write']}]", NULL);
	expect_one("t.json: mrs[0].access[2]: \"remote_read\" is listed twice", NULL, NULL, NULL,
		   NULL, "[{'tenant':'blue','vip':'192.168.1.10','rkey':1,'addr':0,'length':1,"
		   "'target_rkey':1,'target_addr':0,'access':['remote_read','remote_atomic',"
		   "'remote_read']}]", NULL);
	expect_one("t.json: mrs[0].access: expected an array", NULL, NULL, NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','rkey':1,'addr':0,'length':1,"
		   "'target_rkey':1,'target_addr':0,'access':'remote_read'}]", NULL);
	expect_one("t.json: mrs[0].target_addr: missing required key", NULL, NULL, NULL, NULL,
		   "[{'tenant':'blue','vip':'192.168.1.10','rkey':1,'addr':0,'length':1,"
		   "'target_rkey':1,'access':['remote_read']}]", NULL);
}

static void
test_neighbors_dcqcn_offload(void)
{
	struct cfg *c;

	c = load_doc(NULL, NULL, NULL, NULL, NULL,
		     ",'neighbors':[{'ip':'10.0.0.2','mac':'02:00:00:00:00:02'},"
		     "{'ip':'fd00::2','mac':'02:00:00:00:00:12'}],"
		     "'dcqcn':{'profile':'paper'},'offload':{'enabled':true}");
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->n_neighbors, 2);
	CU_ASSERT_EQUAL(c->neighbors[1].ip.ver, CFG_IPV6);
	CU_ASSERT_FALSE(c->dcqcn.enabled);
	CU_ASSERT_STRING_EQUAL(c->dcqcn.profile, "paper");
	CU_ASSERT_TRUE(c->offload.enabled);
	cfg_free(c);

	expect_one("t.json: neighbors[1].ip: 10.0.0.2 is already defined by neighbors[0]",
		   NULL, NULL, NULL, NULL, NULL,
		   ",'neighbors':[{'ip':'10.0.0.2','mac':'02:00:00:00:00:02'},"
		   "{'ip':'10.0.0.2','mac':'02:00:00:00:00:03'}]");
	expect_one("t.json: neighbors[0].mac: missing required key", NULL, NULL, NULL, NULL, NULL,
		   ",'neighbors':[{'ip':'10.0.0.2'}]");
	expect_one("t.json: dcqcn.profile: \"intel\" is not one of \"nvidia\", \"paper\"",
		   NULL, NULL, NULL, NULL, NULL, ",'dcqcn':{'enabled':true,'profile':'intel'}");
	expect_one("t.json: dcqcn.enabled: expected true or false", NULL, NULL, NULL, NULL, NULL,
		   ",'dcqcn':{'enabled':1}");
	expect_one("t.json: dcqcn.kmin: unknown key", NULL, NULL, NULL, NULL, NULL,
		   ",'dcqcn':{'kmin':5}");
	expect_one("t.json: offload.mode: unknown key", NULL, NULL, NULL, NULL, NULL,
		   ",'offload':{'enabled':false,'mode':'full'}");
	expect_one("t.json: offload: expected an object", NULL, NULL, NULL, NULL, NULL,
		   ",'offload':true");
}

/* offload.steady_ms and offload.min_rate_mbps: defaults, values, bounds. */
static void
test_offload_thresholds(void)
{
	struct cfg *c;

	c = load_doc(NULL, NULL, NULL, NULL, NULL, "");
	EXPECT_OK(c);
	CU_ASSERT_FALSE(c->offload.enabled);
	CU_ASSERT_EQUAL(c->offload.steady_ms, CFG_DEFAULT_STEADY_MS);
	CU_ASSERT_EQUAL(c->offload.min_rate_mbps, CFG_DEFAULT_MIN_RATE_MBPS);
	CU_ASSERT_EQUAL(CFG_DEFAULT_STEADY_MS, 1000);
	CU_ASSERT_EQUAL(CFG_DEFAULT_MIN_RATE_MBPS, 100);
	cfg_free(c);

	c = load_doc(NULL, NULL, NULL, NULL, NULL, ",'offload':{'enabled':true}");
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->offload.steady_ms, 1000);
	CU_ASSERT_EQUAL(c->offload.min_rate_mbps, 100);
	cfg_free(c);

	c = load_doc(NULL, NULL, NULL, NULL, NULL,
		     ",'offload':{'enabled':true,'steady_ms':250,'min_rate_mbps':'0x10'}");
	EXPECT_OK(c);
	CU_ASSERT_TRUE(c->offload.enabled);
	CU_ASSERT_EQUAL(c->offload.steady_ms, 250);
	CU_ASSERT_EQUAL(c->offload.min_rate_mbps, 16);
	cfg_free(c);

	/* Zero is allowed: steady at once, or any traffic at all. */
	c = load_doc(NULL, NULL, NULL, NULL, NULL, ",'offload':{'steady_ms':0,'min_rate_mbps':0}");
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->offload.steady_ms, 0);
	CU_ASSERT_EQUAL(c->offload.min_rate_mbps, 0);
	cfg_free(c);

	expect_one("t.json: offload.steady_ms: 4294967296 is out of range (max 4294967295)", NULL, NULL,
		   NULL, NULL, NULL, ",'offload':{'steady_ms':4294967296}");
	expect_one("t.json: offload.min_rate_mbps", NULL, NULL, NULL, NULL, NULL,
		   ",'offload':{'min_rate_mbps':-1}");
	expect_one("t.json: offload.min_rate_mbps", NULL, NULL, NULL, NULL, NULL,
		   ",'offload':{'min_rate_mbps':'fast'}");
	expect_one("t.json: offload.steady_ms", NULL, NULL, NULL, NULL, NULL,
		   ",'offload':{'steady_ms':1.5}");
}

/* Exactly one message, and it is @want to the letter. */
static void
expect_exact(const char *want, const char *tenants, const char *extra)
{
	expect_one(want, tenants, NULL, NULL, NULL, NULL, extra);
	if (errs.n == 1)
		CU_ASSERT_STRING_EQUAL(errs.msg[0], want);
}

/* Every parameter of @a equals that of @b, and the model too. */
static bool
params_equal(const struct dcqcn_params *a, const struct dcqcn_params *b)
{
	char x[64], y[64];
	const char *n;

	for (unsigned i = 0; (n = dcqcn_param_name(i)) != NULL; i++) {
		dcqcn_params_get(a, n, x, sizeof(x));
		dcqcn_params_get(b, n, y, sizeof(y));
		if (strcmp(x, y) != 0) {
			fprintf(stderr, "\n%s: %s != %s\n", n, x, y);
			return false;
		}
	}
	return a->model == b->model;
}

/* No "dcqcn" or "shaping": the nvidia profile at 100 Gb/s everywhere. */
static void
test_dcqcn_defaults(void)
{
	struct dcqcn_params nv, paper;
	struct cfg *c;

	dcqcn_params_default(&nv, "nvidia");
	dcqcn_params_default(&paper, "paper");
	c = load_doc(NULL, NULL, NULL, NULL, NULL, "");
	EXPECT_OK(c);
	CU_ASSERT_FALSE(c->dcqcn.enabled);
	CU_ASSERT_STRING_EQUAL(c->dcqcn.profile, "nvidia");
	CU_ASSERT_EQUAL(c->dcqcn.line_rate_bps, 100000000000ull);
	CU_ASSERT_FALSE(c->dcqcn.ce_keep);
	CU_ASSERT_FALSE(c->dcqcn.cnp_pass);
	CU_ASSERT_TRUE(params_equal(&c->dcqcn.params, &nv));
	CU_ASSERT_EQUAL(c->n_tenants, 2);
	for (uint32_t i = 0; i < c->n_tenants; i++) {
		CU_ASSERT_TRUE(params_equal(&c->tenants[i].dcqcn, &nv));
		CU_ASSERT_FALSE(c->tenants[i].dcqcn_override);
	}
	CU_ASSERT_EQUAL(c->shaping.watchdog_ms, 100);
	CU_ASSERT_EQUAL(c->shaping.queue_bytes, 4194304);
	CU_ASSERT_EQUAL(CFG_DEFAULT_WATCHDOG_MS, 100);
	CU_ASSERT_EQUAL(CFG_DEFAULT_QUEUE_BYTES, 4u << 20);
	cfg_free(c);

	/* A top-level profile is every tenant's too; the defaults may be spelled out. */
	c = load_doc(NULL, NULL, NULL, NULL, NULL,
		     ",'dcqcn':{'enabled':true,'profile':'paper','ce_to_tenant':'clear',"
		     "'cnp_to_tenant':false,'params':{}},'shaping':{}");
	EXPECT_OK(c);
	CU_ASSERT_TRUE(c->dcqcn.enabled);
	CU_ASSERT_FALSE(c->dcqcn.ce_keep);
	CU_ASSERT_FALSE(c->dcqcn.cnp_pass);
	CU_ASSERT_EQUAL(c->dcqcn.line_rate_bps, 100000000000ull);
	CU_ASSERT_TRUE(params_equal(&c->dcqcn.params, &paper));
	CU_ASSERT_TRUE(params_equal(&c->tenants[0].dcqcn, &paper));
	CU_ASSERT_TRUE(params_equal(&c->tenants[1].dcqcn, &paper));
	CU_ASSERT_EQUAL(c->shaping.watchdog_ms, CFG_DEFAULT_WATCHDOG_MS);
	CU_ASSERT_EQUAL(c->shaping.queue_bytes, CFG_DEFAULT_QUEUE_BYTES);
	cfg_free(c);
}

/* Every key of "dcqcn" and "shaping", and parameters of every JSON type. */
static void
test_dcqcn_params(void)
{
	struct dcqcn_params want;
	struct cfg *c;

	c = load_doc(NULL, NULL, NULL, NULL, NULL,
		     ",'dcqcn':{'enabled':true,'profile':'nvidia','line_rate_gbps':25.5,"
		     "'ce_to_tenant':'keep','cnp_to_tenant':true,'params':{'rpg_ai_rate':10,"
		     "'min_time_between_cnps':'8','cnp_mode':'defer','kmin':65536,'kmax':262144,"
		     "'pmax':12.5,'clamp_tgt_rate':true,'np_enable':false,'rpg_threshold':5.0}},"
		     "'shaping':{'watchdog_ms':60000,'queue_bytes':65536}");
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->dcqcn.line_rate_bps, 25500000000ull);
	CU_ASSERT_TRUE(c->dcqcn.ce_keep);
	CU_ASSERT_TRUE(c->dcqcn.cnp_pass);
	dcqcn_params_default(&want, "nvidia");
	want.rpg_ai_rate = 10;
	want.min_time_between_cnps = 8;
	want.cnp_mode = DCQCN_CNP_DEFER;
	want.kmin = 65536;
	want.kmax = 262144;
	want.pmax = 12.5;
	want.clamp_tgt_rate = 1;
	want.np_enable = 0;
	want.rpg_threshold = 5;
	CU_ASSERT_TRUE(params_equal(&c->dcqcn.params, &want));
	CU_ASSERT_TRUE(params_equal(&c->tenants[1].dcqcn, &want));
	CU_ASSERT_EQUAL(c->shaping.watchdog_ms, 60000);
	CU_ASSERT_EQUAL(c->shaping.queue_bytes, 65536);
	cfg_free(c);
}

/* tenants[].dcqcn: its own profile or the top-level parameters, then its params. */
static void
test_dcqcn_tenants(void)
{
	struct dcqcn_params paper, top, own;
	struct cfg *c;

	c = load_doc("[{'name':'blue','vni':100,'dcqcn':{'profile':'paper',"
		     "'params':{'rpg_threshold':7}}},{'name':'red','vni':200},"
		     "{'name':'green','vni':300,'dcqcn':{'params':{'kmax':300000}}},"
		     "{'name':'grey','vni':400,'dcqcn':{}}]", NULL, NULL, NULL, NULL,
		     ",'dcqcn':{'params':{'rpg_ai_rate':10}}");
	EXPECT_OK(c);
	dcqcn_params_default(&paper, "paper");
	paper.rpg_threshold = 7;
	dcqcn_params_default(&top, "nvidia");
	top.rpg_ai_rate = 10;
	own = top;
	own.kmax = 300000;
	CU_ASSERT_TRUE(params_equal(&c->tenants[0].dcqcn, &paper));
	CU_ASSERT_EQUAL(c->tenants[0].dcqcn.rpg_ai_rate, 40);
	CU_ASSERT_TRUE(c->tenants[0].dcqcn_override);
	CU_ASSERT_TRUE(params_equal(&c->tenants[1].dcqcn, &top));
	CU_ASSERT_FALSE(c->tenants[1].dcqcn_override);
	CU_ASSERT_TRUE(params_equal(&c->tenants[2].dcqcn, &own));
	CU_ASSERT_TRUE(c->tenants[2].dcqcn_override);
	CU_ASSERT_TRUE(params_equal(&c->tenants[3].dcqcn, &top));
	CU_ASSERT_TRUE(c->tenants[3].dcqcn_override);
	CU_ASSERT_TRUE(params_equal(&c->dcqcn.params, &top));
	cfg_free(c);

	/* Tenants inherit the top-level parameters wherever "dcqcn" stands in the file. */
	c = load_raw("{\"version\":1,\"tenants\":[{\"name\":\"blue\",\"vni\":100}],\"ports\":[],"
		     "\"dcqcn\":{\"profile\":\"paper\"}}");
	EXPECT_OK(c);
	CU_ASSERT_TRUE(params_equal(&c->tenants[0].dcqcn, &c->dcqcn.params));
	CU_ASSERT_EQUAL(c->tenants[0].dcqcn.model, DCQCN_MODEL_PAPER);
	cfg_free(c);
}

#define T_BLUE_DCQCN(o) "[{'name':'blue','vni':100,'dcqcn':" o "},{'name':'red','vni':200}]"

static void
test_dcqcn_errors(void)
{
	static const char *const want[] = {
		"t.json: tenants[0].dcqcn.params.kmin: invalid value \"x\" (bytes)",
		"t.json: tenants[0].dcqcn.params.np_enable: invalid value 2 (0|1)",
		"t.json: dcqcn.line_rate_gbps: -1 must be greater than 0",
		"t.json: dcqcn.params.rpg_bar: unknown DCQCN parameter",
		"t.json: dcqcn.params.pmax: invalid value \"1%\" (%)",
		"t.json: shaping.queue_bytes: 0 is out of range (min 65536)",
		"t.json: shaping.watchdog_ms: 100000 is out of range (max 60000)",
	};
	struct cfg *c;

	expect_exact("t.json: dcqcn.params.rpg_foo: unknown DCQCN parameter", NULL,
		     ",'dcqcn':{'params':{'rpg_foo':1}}");
	expect_exact("t.json: dcqcn.params.rpg_threshold: invalid value 32 (events)", NULL,
		     ",'dcqcn':{'params':{'rpg_threshold':32}}");
	expect_exact("t.json: dcqcn.params.kmin: invalid value -1 (bytes)", NULL,
		     ",'dcqcn':{'params':{'kmin':-1}}");
	expect_exact("t.json: dcqcn.params.kmin: invalid value 1.5 (bytes)", NULL,
		     ",'dcqcn':{'params':{'kmin':1.5}}");
	expect_exact("t.json: dcqcn.params.pmax: invalid value 100.5 (%)", NULL,
		     ",'dcqcn':{'params':{'pmax':100.5}}");
	expect_exact("t.json: dcqcn.params.cnp_mode: invalid value \"fast\" (suppress|defer)",
		     NULL, ",'dcqcn':{'params':{'cnp_mode':'fast'}}");
	expect_exact("t.json: dcqcn.params.rpg_gd: invalid value 1 (shift)", NULL,
		     ",'dcqcn':{'params':{'rpg_gd':true}}");
	expect_exact("t.json: dcqcn.params.kmin: expected a number or a string (bytes)", NULL,
		     ",'dcqcn':{'params':{'kmin':[1]}}");
	expect_exact("t.json: dcqcn.params: expected an object", NULL,
		     ",'dcqcn':{'params':[]}");
	expect_exact("t.json: dcqcn.params: kmin 300000 is above kmax 200000", NULL,
		     ",'dcqcn':{'params':{'kmin':300000}}");
	/* Without "params" the inconsistency is the profile's at this line rate. */
	expect_exact("t.json: dcqcn: rpg_min_rate 100 Mb/s is above the maximum rate, 50 Mb/s",
		     NULL, ",'dcqcn':{'profile':'paper','line_rate_gbps':0.05}");
	expect_exact("t.json: dcqcn.params: rpg_min_rate 200 Mb/s is above the maximum rate, "
		     "100 Mb/s", NULL,
		     ",'dcqcn':{'params':{'rpg_min_rate':200,'rpg_max_rate':100}}");
	expect_exact("t.json: dcqcn.ce_to_tenant: \"drop\" is not one of \"clear\", \"keep\"",
		     NULL, ",'dcqcn':{'ce_to_tenant':'drop'}");
	expect_exact("t.json: dcqcn.cnp_to_tenant: expected true or false", NULL,
		     ",'dcqcn':{'cnp_to_tenant':'pass'}");
	expect_exact("t.json: dcqcn.line_rate_gbps: 0 must be greater than 0", NULL,
		     ",'dcqcn':{'line_rate_gbps':0}");
	expect_exact("t.json: dcqcn.line_rate_gbps: 20000 is out of range (max 10000)", NULL,
		     ",'dcqcn':{'line_rate_gbps':20000}");
	expect_exact("t.json: shaping.watchdog_ms: must be greater than 0", NULL,
		     ",'shaping':{'watchdog_ms':0}");
	expect_exact("t.json: shaping.watchdog_ms: 60001 is out of range (max 60000)", NULL,
		     ",'shaping':{'watchdog_ms':60001}");
	expect_exact("t.json: shaping.queue_bytes: 65535 is out of range (min 65536)", NULL,
		     ",'shaping':{'queue_bytes':65535}");
	expect_exact("t.json: shaping.burst: unknown key", NULL, ",'shaping':{'burst':1}");
	expect_exact("t.json: shaping: expected an object", NULL, ",'shaping':100");
	expect_exact("t.json: tenants[0].dcqcn.line_rate_gbps: unknown key",
		     T_BLUE_DCQCN("{'line_rate_gbps':25}"), NULL);
	expect_exact("t.json: tenants[0].dcqcn.profile: \"intel\" is not one of \"nvidia\", "
		     "\"paper\"", T_BLUE_DCQCN("{'profile':'intel'}"), NULL);
	expect_exact("t.json: tenants[0].dcqcn: expected an object", T_BLUE_DCQCN("'paper'"),
		     NULL);
	expect_exact("t.json: tenants[0].dcqcn.params.kmax: invalid value \"big\" (bytes)",
		     T_BLUE_DCQCN("{'params':{'kmax':'big'}}"), NULL);
	expect_exact("t.json: tenants[0].dcqcn.params: kmin 300000 is above kmax 200000",
		     T_BLUE_DCQCN("{'profile':'paper','params':{'kmin':300000}}"), NULL);
	/* A tenant that inherits an inconsistent top level is not blamed for it... */
	expect_exact("t.json: dcqcn.params: kmin 300000 is above kmax 200000",
		     T_BLUE_DCQCN("{'params':{'rpg_threshold':2}}"),
		     ",'dcqcn':{'params':{'kmin':300000}}");
	/* ... but one that starts from its own profile is checked. */
	expect_exact("t.json: dcqcn.params: kmin 300000 is above kmax 200000",
		     T_BLUE_DCQCN("{'profile':'nvidia','params':{'kmax':400000}}"),
		     ",'dcqcn':{'params':{'kmin':300000}}");

	/* Every error, in file order, though "dcqcn" is loaded before "tenants". */
	c = load_doc(T_BLUE_DCQCN("{'params':{'kmin':'x','np_enable':2}}"), NULL, NULL, NULL,
		     NULL, ",'dcqcn':{'line_rate_gbps':-1,'params':{'rpg_bar':1,'pmax':'1%'}},"
		     "'shaping':{'queue_bytes':0,'watchdog_ms':100000}");
	CU_ASSERT_PTR_NULL(c);
	if (errs.n != sizeof(want) / sizeof(want[0]))
		dump_errs();
	CU_ASSERT_EQUAL(errs.n, sizeof(want) / sizeof(want[0]));
	for (uint32_t i = 0; i < errs.n && i < sizeof(want) / sizeof(want[0]); i++)
		CU_ASSERT_STRING_EQUAL(errs.msg[i], want[i]);
	cfg_free(c);
}

static void
test_multiple_errors(void)
{
	struct cfg *c;
	int a, b, d, e, f;

	/*
	 * Errors in several sections, reported together and in file order
	 * (tenants come after ports in this file), and no cascade: the QP of
	 * the unknown tenant says nothing about its peer.
	 */
	char *s = j("{'version':1,"
		    "'ports':[" D_PORT_UPLINK ",{'name':'vm-blue-1','device':'net_pcap1',"
		    "'role':'tenant','tenant':'green','mac':'02:00:00:00:01:01'}],"
		    "'tenants':[{'name':'blue','vni':100},{'name':'red','vni':100,'bogus':1}],"
		    "'endpoints':[" D_EP_BLUE20 "],"
		    "'qps':[" QP("green", "192.168.1.10", 17, 4097, "rc", "192.168.1.20", 99) ","
		    UD("blue", "192.168.1.20", 0, 8193) "]}");

	c = load_raw(s);
	free(s);
	CU_ASSERT_PTR_NULL(c);
	a = msg_find("t.json: ports[1].tenant: unknown tenant \"green\"");
	b = msg_find("t.json: tenants[1].vni: 100 is already used by tenants[0]");
	d = msg_find("t.json: tenants[1].bogus: unknown key");
	e = msg_find("t.json: qps[0].tenant: unknown tenant \"green\"");
	f = msg_find("t.json: qps[1].vqpn: QPN 0 is reserved");
	if (errs.n != 5)
		dump_errs();
	CU_ASSERT_EQUAL(errs.n, 5);
	CU_ASSERT(a == 0);
	CU_ASSERT(d >= 1 && b >= 1);
	CU_ASSERT(d < b);       /* the key comes before the check across records */
	CU_ASSERT(e == 3);
	CU_ASSERT(f == 4);
	for (uint32_t i = 0; i < errs.n; i++) {
		CU_ASSERT(strncmp(errs.msg[i], "t.json: ", 8) == 0);
		CU_ASSERT_PTR_NULL(strchr(errs.msg[i], '\n'));
	}

	/* Errors accumulate in a list that the caller did not clear. */
	c = cfg_load_string("{", "second.json", &errs);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(errs.n, 6);
	CU_ASSERT(strncmp(errs.msg[5], "second.json:1:", 14) == 0);
}

static char *
write_tmp(const char *text)
{
	char *path = strdup("/tmp/test_config_XXXXXX.json");
	int fd = mkstemps(path, 5);
	FILE *f;

	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* Load @text and expect exactly one message, starting with @want. */
static void
expect_syntax(const char *text, const char *want)
{
	struct cfg *c = load_raw(text);

	CU_ASSERT_PTR_NULL(c);
	cfg_free(c);
	CU_ASSERT_EQUAL(errs.n, 1);
	if (errs.n != 1 || strncmp(errs.msg[0], want, strlen(want)) != 0) {
		fprintf(stderr, "\nexpected: %s...\ngot:\n", want);
		dump_errs();
		CU_FAIL("syntax error message");
	}
}

static void
test_syntax(void)
{
	char *path, *want, big[512];
	struct cfg *c;
	size_t n;

	/* A missing comma, in a file: the line and column of the token met. */
	path = write_tmp("{\n  \"version\": 1,\n  \"ports\": []\n  \"tenants\": []\n}\n");
	cfg_errors_clear(&errs);
	c = cfg_load_file(path, &errs);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL_FATAL(errs.n, 1);
	want = fmt("%s:4:11: syntax error: '}' expected near '\"tenants\"'", path);
	CU_ASSERT_STRING_EQUAL(errs.msg[0], want);
	free(want);
	unlink(path);
	free(path);

	/* A duplicate key is a syntax error, at the second occurrence. */
	path = write_tmp("{\"version\": 1, \"ports\": [],\n \"tenants\": [],\n"
			 "   \"ports\": []}");
	cfg_errors_clear(&errs);
	c = cfg_load_file(path, &errs);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL_FATAL(errs.n, 1);
	want = fmt("%s:3:10: syntax error: duplicate object key near '\"ports\"'", path);
	CU_ASSERT_STRING_EQUAL(errs.msg[0], want);
	free(want);
	unlink(path);
	free(path);

	/*
	 * jansson finds the errors; its column is that of the last character
	 * it read, and its text says "near" what.
	 */
	expect_syntax("{\"version\": 1, \"ports\": [], \"tenants\": [\n"
		      "{\"name\": \"a\", \"vni\": 1, \"name\": \"b\"}]}",
		      "t.json:2:30: syntax error: duplicate object key near '\"name\"'");
	n = (size_t)sprintf(big, "{");
	for (int i = 0; i < 20; i++)
		n += (size_t)sprintf(big + n, "\"k%d\": %d, ", i, i);
	sprintf(big + n, "\"k17\": 0}");
	expect_syntax(big, "t.json:1:206: syntax error: duplicate object key near '\"k17\"'");
	expect_syntax("{\"version\": 1, \"ports\": [], \"tenants\": [tru]}",
		      "t.json:1:43: syntax error: invalid token near 'tru'");
	expect_syntax("", "t.json:1:0: syntax error: '[' or '{' expected near end of file");
	expect_syntax("{\"version\": 1,\n\n", "t.json:3:0: syntax error: string or '}' expected near end of file");
	expect_syntax("{\"a\": [1,]}", "t.json:1:10: syntax error: unexpected token near ']'");
	expect_syntax("{\"a\" 1}", "t.json:1:6: syntax error: ':' expected near '1'");
	expect_syntax("{} {}", "t.json:1:4: syntax error: end of file expected near '{'");
	expect_syntax("{\"version\": 01}", "t.json:1:13: syntax error: invalid token near '0'");
	expect_syntax("{\"a\": \"x\\u0000\"}", "t.json:1:15: syntax error: \\u0000 is not allowed without JSON_ALLOW_NUL");
	expect_syntax("{\"a\": \"x\xff\"}", "t.json:1:8: syntax error: unable to decode byte 0xff");
	/* Integers are 64-bit signed: larger ones must be "0x" strings. */
	expect_syntax("{\"a\": 18446744073709551615}", "t.json:1:26: syntax error: too big integer near");

	cfg_errors_clear(&errs);
	c = cfg_load_file("/nonexistent/cfg.json", &errs);
	EXPECT_ERR(c, "/nonexistent/cfg.json: cannot open: No such file or directory");
	cfg_errors_clear(&errs);
	c = cfg_load_file("/tmp", &errs);
	EXPECT_ERR(c, "/tmp: cannot read: is a directory");
}

static void
test_json_values(void)
{
	struct cfg *c;
	char *d;

	/* Escapes decode to UTF-8. */
	c = load_raw("{\"version\": 1, \"ports\": [], "
		     "\"comment\": [\"a\\\"b\\\\c\\/\"],"
		     "\"tenants\": [{\"name\": \"bl\\u00e9\\ud83d\\ude00\\t\", \"vni\": 1}]}");
	EXPECT_OK(c);
	CU_ASSERT_STRING_EQUAL(c->tenants[0].name, "bl\xc3\xa9\xf0\x9f\x98\x80\t");
	cfg_free(c);

	/* null is a value, but never a valid one here. */
	d = j("{'version':1,'ports':[],'tenants':[{'name':'a','vni':null}]}");
	c = load_raw(d);
	free(d);
	EXPECT_ERR(c, "t.json: tenants[0].vni: expected an integer or a \"0x\" hex string");

	/* Addresses up to 2^64 - 1 are written as "0x" strings. */
	expect_one("t.json: mrs[0].addr: 0xffffffffffffffff + length 0x1 overflows 64 bits",
		   NULL, NULL, NULL, NULL,
		   "[" MR("blue", "192.168.1.10", "1", "'0xffffffffffffffff'", "1", "0") "]",
		   NULL);

	/* Exponents are reals: fine for gbps, not for an integer field. */
	c = load_doc("[{'name':'blue','vni':100,'rate':{'gbps':1e1}},{'name':'red','vni':200,"
		     "'rate':{'gbps':2.5E-1}}]", NULL, NULL, NULL, NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->tenants[0].rate.bps, 10000000000ull);
	CU_ASSERT_EQUAL(c->tenants[1].rate.bps, 250000000ull);
	cfg_free(c);
	expect_one("t.json: tenants[0].vni: expected an integer, not the real number 1e+02",
		   "[{'name':'blue','vni':1e2},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.gbps: 1e-12 is below 1 bit/s",
		   "[{'name':'blue','vni':100,'rate':{'gbps':1e-12}},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
	expect_one("t.json: tenants[0].rate.gbps: 1e+300 is out of range",
		   "[{'name':'blue','vni':100,'rate':{'gbps':1e300}},{'name':'red','vni':200}]",
		   NULL, NULL, NULL, NULL, NULL);
}

/*
 * A generated configuration: @n QPs in RC pairs between 500 local endpoints
 * on 10.0.0.1 and 500 remote ones on 10.0.0.2, in one tenant.
 */
static char *
gen_big(uint32_t n)
{
	size_t cap = 256 + (size_t)n * 200 + 1000 * 160;
	char *s = malloc(cap), *p = s;
	uint32_t pairs = n / 2;

	p += sprintf(p, "{\"version\":1,\"tenants\":[{\"name\":\"t\",\"vni\":1,\"max_qps\":%u}],"
		     "\"ports\":[{\"name\":\"up\",\"device\":\"d0\",\"role\":\"uplink\","
		     "\"ip\":\"10.0.0.1\",\"mac\":\"02:00:00:00:00:01\"},{\"name\":\"vm\","
		     "\"device\":\"d1\",\"role\":\"tenant\",\"tenant\":\"t\","
		     "\"mac\":\"02:00:00:00:00:02\"}],\"endpoints\":[", n);
	for (uint32_t e = 0; e < 1000; e++)
		p += sprintf(p, "%s{\"tenant\":\"t\",\"vip\":\"10.1.%u.%u\","
			     "\"host\":\"10.0.0.%u\"%s}",
			     e ? "," : "", e / 250, e % 250, e < 500 ? 1 : 2,
			     e < 500 ? ",\"port\":\"vm\",\"mac\":\"02:00:00:00:01:01\"" : "");
	p += sprintf(p, "],\"qps\":[");
	for (uint32_t k = 0; k < pairs; k++) {
		uint32_t a = k % 500, b = 500 + k % 500, q = 2 + k;

		p += sprintf(p, "%s{\"tenant\":\"t\",\"vip\":\"10.1.%u.%u\","
			     "\"vqpn\":%u,\"pqpn\":%u,"
			     "\"type\":\"rc\",\"peer\":{\"vip\":\"10.1.%u.%u\",\"vqpn\":%u}},"
			     "{\"tenant\":\"t\",\"vip\":\"10.1.%u.%u\",\"vqpn\":%u,\"pqpn\":%u,"
			     "\"type\":\"rc\",\"peer\":{\"vip\":\"10.1.%u.%u\",\"vqpn\":%u}}",
			     k ? "," : "", a / 250, a % 250, q, q, b / 250, b % 250, q,
			     b / 250, b % 250, q, q, a / 250, a % 250, q);
	}
	sprintf(p, "]}");
	return s;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_large(void)
{
	/* CFG_TEST_QPS=1000000 measures the million-QP case by hand. */
	const char *env = getenv("CFG_TEST_QPS");
	uint32_t n = env ? (uint32_t)strtoul(env, NULL, 0) & ~1u : 100000;
	char *s = gen_big(n);
	struct cfg *c;
	double t0, dt;
	bool linked = true;

	t0 = now_s();
	c = load_raw(s);
	dt = now_s() - t0;
	free(s);
	EXPECT_OK(c);
	fprintf(stderr, "\n  %u QPs loaded in %.3f s\n", n, dt);
	CU_ASSERT(dt < 3.0);
	CU_ASSERT_EQUAL(c->n_qps, n);
	CU_ASSERT_EQUAL(c->tenants[0].n_qps, n);
	for (uint32_t i = 0; i < n; i++)
		if (c->qps[i].peer != (int)(i ^ 1u))
			linked = false;
	CU_ASSERT_TRUE(linked);
	CU_ASSERT_EQUAL(c->qps[n - 1].vqpn, 2 + n / 2 - 1);
	CU_ASSERT_EQUAL(c->qps[n - 1].endpoint, 500 + (int)((n / 2 - 1) % 500));
	cfg_free(c);

	/* With a quota below the count, every QP past it is named, and capped. */
	s = gen_big(4000);
	memcpy(strstr(s, "\"max_qps\":4000"), "\"max_qps\":1000", 14);
	c = load_raw(s);
	free(s);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(errs.n, CFG_ERRORS_MAX + 1);
	CU_ASSERT(msg_find("t.json: qps[1000].tenant: tenant \"t\" exceeds max_qps 1000") == 0);
	CU_ASSERT(msg_find("qps[999].") < 0);
	CU_ASSERT_STRING_EQUAL(errs.msg[errs.n - 1], "t.json: 2000 more errors not shown");
}

/* "acls": per-tenant rules, their defaults, and every way to get one wrong. */
#define ACL1(rule) ",'acls':[{'tenant':'blue','rules':[" rule "]}]"

static void
test_acls(void)
{
	struct cfg *c;

	c = load_doc(NULL, NULL, NULL, NULL, NULL, NULL);
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->n_acls, 0);
	cfg_free(c);

	c = load_doc(NULL, NULL, NULL, NULL, NULL,
		     ",'acls':[{'tenant':'blue','default':'deny','rules':["
		     "{'action':'allow','src':'192.168.1.0/24','dst':'192.168.1.20','types':['rc'],"
		     "'ops':['send','write']},"
		     "{'action':'deny'},"
		     "{'action':'allow','src':'fd00::/8','dst':'::/0','ops':['atomic']}]},"
		     "{'tenant':'red'}]");
	EXPECT_OK(c);
	CU_ASSERT_EQUAL(c->n_acls, 2);
	CU_ASSERT_EQUAL(c->acls[0].tenant, 0);
	CU_ASSERT_EQUAL(c->acls[0].def, CFG_ACL_DENY);
	CU_ASSERT_EQUAL_FATAL(c->acls[0].n_rules, 3);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].action, CFG_ACL_ALLOW);
	CU_ASSERT(c->acls[0].rules[0].has_src && c->acls[0].rules[0].has_dst);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].src.len, 24);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].src.ip.ver, CFG_IPV4);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].src.ip.b[2], 1);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].dst.len, 32);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].types, 1u << CFG_QP_RC);
	CU_ASSERT_EQUAL(c->acls[0].rules[0].ops, CFG_OP_SEND | CFG_OP_WRITE);
	CU_ASSERT_EQUAL(c->acls[0].rules[1].action, CFG_ACL_DENY);
	CU_ASSERT(!c->acls[0].rules[1].has_src && !c->acls[0].rules[1].has_dst);
	CU_ASSERT_EQUAL(c->acls[0].rules[1].types, CFG_QP_TYPES_ALL);
	CU_ASSERT_EQUAL(c->acls[0].rules[1].ops, CFG_OP_ALL);
	CU_ASSERT_EQUAL(c->acls[0].rules[2].src.ip.ver, CFG_IPV6);
	CU_ASSERT_EQUAL(c->acls[0].rules[2].src.len, 8);
	CU_ASSERT_EQUAL(c->acls[0].rules[2].dst.len, 0);
	CU_ASSERT_EQUAL(c->acls[0].rules[2].ops, CFG_OP_ATOMIC);
	CU_ASSERT_EQUAL(c->acls[1].tenant, 1);
	CU_ASSERT_EQUAL(c->acls[1].def, CFG_ACL_ALLOW);
	CU_ASSERT_EQUAL(c->acls[1].n_rules, 0);
	cfg_free(c);

	expect_one("t.json: acls: expected an array", NULL, NULL, NULL, NULL, NULL, ",'acls':{}");
	expect_one("t.json: acls[0].tenant: unknown tenant \"green\"", NULL, NULL, NULL, NULL, NULL,
		   ",'acls':[{'tenant':'green','rules':[{'action':'deny'}]}]");
	expect_one("t.json: acls[0].tenant: missing required key", NULL, NULL, NULL, NULL, NULL,
		   ",'acls':[{'default':'deny'}]");
	expect_one("t.json: acls[2].tenant: tenant \"blue\" already has an ACL (acls[0])", NULL, NULL,
		   NULL, NULL, NULL, ",'acls':[{'tenant':'blue'},{'tenant':'red'},{'tenant':'blue'}]");
	expect_one("t.json: acls[0].default: \"maybe\" is not one of \"allow\", \"deny\"", NULL, NULL,
		   NULL, NULL, NULL, ",'acls':[{'tenant':'blue','default':'maybe'}]");
	expect_one("t.json: acls[0].rules: expected an array", NULL, NULL, NULL, NULL, NULL,
		   ",'acls':[{'tenant':'blue','rules':{}}]");
	expect_one("t.json: acls[0].policy: unknown key", NULL, NULL, NULL, NULL, NULL,
		   ",'acls':[{'tenant':'blue','policy':'deny'}]");
	expect_one("t.json: acls[0].rules[0]: expected an object", NULL, NULL, NULL, NULL, NULL,
		   ACL1("'deny'"));
	expect_one("t.json: acls[0].rules[0].action: missing required key", NULL, NULL, NULL, NULL,
		   NULL, ACL1("{'src':'10.0.0.0/8'}"));
	expect_one("t.json: acls[0].rules[0].action: \"drop\" is not one of \"allow\", \"deny\"",
		   NULL, NULL, NULL, NULL, NULL, ACL1("{'action':'drop'}"));
	expect_one("t.json: acls[0].rules[0].port: unknown key", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','port':4791}"));
	/* Prefixes. */
	expect_one("t.json: acls[0].rules[0].src: \"banana/8\" is not an IPv4 or IPv6 prefix",
		   NULL, NULL, NULL, NULL, NULL, ACL1("{'action':'deny','src':'banana/8'}"));
	expect_one("t.json: acls[0].rules[0].dst: \"10.0.0.0/2x\": \"2x\" is not a prefix length",
		   NULL, NULL, NULL, NULL, NULL, ACL1("{'action':'deny','dst':'10.0.0.0/2x'}"));
	expect_one("t.json: acls[0].rules[0].dst: \"10.0.0.0/\": \"\" is not a prefix length",
		   NULL, NULL, NULL, NULL, NULL, ACL1("{'action':'deny','dst':'10.0.0.0/'}"));
	expect_one("t.json: acls[0].rules[0].src: \"10.0.0.0/-1\": \"-1\" is not a prefix length",
		   NULL, NULL, NULL, NULL, NULL, ACL1("{'action':'deny','src':'10.0.0.0/-1'}"));
	expect_one("t.json: acls[0].rules[0].src: \"192.168.1.0/33\": prefix length 33 is out of "
		   "range (max 32 for IPv4)", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','src':'192.168.1.0/33'}"));
	expect_one("t.json: acls[0].rules[0].src: \"fd00::/129\": prefix length 129 is out of "
		   "range (max 128 for IPv6)", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','src':'fd00::/129'}"));
	expect_one("t.json: acls[0].rules[0].src: \"192.168.1.10/24\" has bits set beyond the "
		   "prefix length (the prefix is 192.168.1.0/24)", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','src':'192.168.1.10/24'}"));
	expect_one("t.json: acls[0].rules[0].dst: \"fd00::1/64\" has bits set beyond the prefix "
		   "length (the prefix is fd00::/64)", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','dst':'fd00::1/64'}"));
	expect_one("t.json: acls[0].rules[0].src: expected an address prefix string", NULL, NULL,
		   NULL, NULL, NULL, ACL1("{'action':'deny','src':10}"));
	expect_one("t.json: acls[0].rules[0].dst: fd00::/8 is IPv6 but src 10.0.0.0/8 is IPv4: "
		   "the rule can never match", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','src':'10.0.0.0/8','dst':'fd00::/8'}"));
	/* Types and operations. */
	/* "xrc" is an ACL type (both ends of XRC connections); the QP types xrc_ini/xrc_tgt are not. */
	expect_one("t.json: acls[0].rules[0].types[1]: \"xrc_ini\" is not one of \"rc\", \"uc\", "
		   "\"ud\", \"xrc\"", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','types':['rc','xrc_ini']}"));
	expect_one("t.json: acls[0].rules[0].types: must not be empty", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','types':[]}"));
	expect_one("t.json: acls[0].rules[0].ops[1]: \"bind\" is not one of \"send\", \"write\", "
		   "\"read\", \"atomic\"", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','ops':['send','bind']}"));
	expect_one("t.json: acls[0].rules[0].ops[1]: \"read\" is listed twice", NULL, NULL, NULL,
		   NULL, NULL, ACL1("{'action':'deny','ops':['read','read']}"));
	expect_one("t.json: acls[0].rules[0].ops: expected an array", NULL, NULL, NULL, NULL, NULL,
		   ACL1("{'action':'deny','ops':'read'}"));
	/* A rule that matches exactly what an earlier one does can never decide. */
	expect_one("t.json: acls[0].rules[2]: matches exactly what rules[0] matches", NULL, NULL,
		   NULL, NULL, NULL,
		   ACL1("{'action':'deny','src':'10.0.0.0/8','ops':['read','write']},"
			"{'action':'deny','src':'10.0.0.0/8','ops':['read']},"
			"{'action':'allow','src':'10.0.0.0/8','ops':['write','read']}"));
	/* Errors in file order, with the record paths. */
	c = load_doc(NULL, NULL, NULL, NULL, NULL,
		     ",'acls':[{'tenant':'blue','rules':[{'action':'deny','src':'1.2.3.4/40'},"
		     "{'action':'nope'}]},{'tenant':'red','rules':[{'action':'deny','ops':['x']}]}]");
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(errs.n, 3);
	if (errs.n == 3) {
		CU_ASSERT(strstr(errs.msg[0], "acls[0].rules[0].src:") != NULL);
		CU_ASSERT(strstr(errs.msg[1], "acls[0].rules[1].action:") != NULL);
		CU_ASSERT(strstr(errs.msg[2], "acls[1].rules[0].ops[0]:") != NULL);
	}
	cfg_free(c);
}

static void
test_errors_api(void)
{
	struct cfg_errors e = { 0 };
	char buf[256] = "";
	FILE *f;

	CU_ASSERT_PTR_NULL(cfg_load_string("{\"version\":1}", "x.json", &e));
	CU_ASSERT_EQUAL(e.n, 2);
	f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	cfg_errors_print(&e, f);
	rewind(f);
	CU_ASSERT_EQUAL(fread(buf, 1, sizeof(buf) - 1, f),
			strlen("x.json: tenants: missing required key\n"
			       "x.json: ports: missing required key\n"));
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, "x.json: tenants: missing required key\n"
			       "x.json: ports: missing required key\n");
	cfg_errors_clear(&e);
	CU_ASSERT_EQUAL(e.n, 0);
	CU_ASSERT_PTR_NULL(e.msg);
	/* Without a list the load still fails cleanly. */
	CU_ASSERT_PTR_NULL(cfg_load_string("{", "x.json", NULL));
	CU_ASSERT_PTR_NULL(cfg_load_string(NULL, NULL, &e));
	CU_ASSERT_EQUAL(e.n, 1);
	CU_ASSERT_STRING_EQUAL(e.msg[0], "<string>: no text given");
	cfg_errors_clear(&e);
	cfg_free(NULL);
}

int
main(void)
{
	unsigned fails;
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("config", NULL, NULL);
	CU_add_test(s, "example minimal.json", test_example_minimal);
	CU_add_test(s, "example two-tenants.json", test_example_two_tenants);
	CU_add_test(s, "example ipv6.json", test_example_ipv6);
	CU_add_test(s, "every example loads", test_example_all);
	CU_add_test(s, "IP and MAC text", test_ip_mac);
	CU_add_test(s, "integers and hex strings", test_numbers);
	CU_add_test(s, "24-bit and reserved QPNs", test_qpn_bounds);
	CU_add_test(s, "top-level keys", test_top_level);
	CU_add_test(s, "tenants", test_tenants);
	CU_add_test(s, "ports", test_ports);
	CU_add_test(s, "endpoints", test_endpoints);
	CU_add_test(s, "qps and peers", test_qps);
	CU_add_test(s, "max_qps quota", test_quota);
	CU_add_test(s, "memory regions", test_mrs);
	CU_add_test(s, "neighbors, dcqcn, offload", test_neighbors_dcqcn_offload);
	CU_add_test(s, "offload thresholds", test_offload_thresholds);
	CU_add_test(s, "dcqcn and shaping defaults", test_dcqcn_defaults);
	CU_add_test(s, "dcqcn parameters and shaping", test_dcqcn_params);
	CU_add_test(s, "per-tenant dcqcn", test_dcqcn_tenants);
	CU_add_test(s, "dcqcn and shaping errors", test_dcqcn_errors);
	CU_add_test(s, "several errors at once, in file order", test_multiple_errors);
	CU_add_test(s, "syntax errors name file:line:col", test_syntax);
	CU_add_test(s, "JSON values: escapes, big integers, reals", test_json_values);
	CU_add_test(s, "100000 generated QPs", test_large);
	CU_add_test(s, "error list API", test_errors_api);
	CU_add_test(s, "acls", test_acls);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	cfg_errors_clear(&errs);
	return fails ? 1 : 0;
}
