/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay's templates for connections between vips of one IP version on
 * hosts of the other (ovl_build()): what each direction translates to, the
 * flow label toward IPv6, the hairpin left alone, and the configurations it
 * refuses (peers whose hosts differ in version, UD QPs on such endpoints),
 * with the JSON path of the record.
 */
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cu_run.h"
#include "ovl.h"

/* One tenant, .10 (and .11) on this host fd00::1, the peer on @peer_host; @extra_qps appended. */
static struct ovl *
build(const char *peer_host, const char *extra_qps, char *err, size_t err_len)
{
	char json[4096];
	struct cfg_errors errs = { 0 };
	struct cfg *c;
	struct ovl *o;

	snprintf(json, sizeof(json),
		 "{\"version\": 1,"
		 " \"ports\": [{\"name\": \"up\", \"device\": \"net_null0\", \"role\": \"uplink\", \"ip\": \"fd00::1\","
		 "   \"mac\": \"02:00:00:00:00:01\", \"gateway_mac\": \"02:00:00:00:00:fe\"},"
		 "  {\"name\": \"vm\", \"device\": \"net_null1\", \"role\": \"tenant\", \"tenant\": \"blue\","
		 "   \"mac\": \"02:00:00:00:01:01\"}],"
		 " \"tenants\": [{\"name\": \"blue\", \"vni\": 100}],"
		 " \"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"host\": \"fd00::1\", \"port\": \"vm\","
		 "   \"mac\": \"02:00:00:00:aa:10\"},"
		 "  {\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"host\": \"fd00::1\", \"port\": \"vm\","
		 "   \"mac\": \"02:00:00:00:aa:11\"},"
		 "  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"host\": \"%s\"}],"
		 " \"qps\": [{\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 17, \"pqpn\": 4097, \"type\": \"rc\","
		 "   \"peer\": {\"vip\": \"192.168.1.20\", \"vqpn\": 33}},"
		 "  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"vqpn\": 33, \"pqpn\": 8193, \"type\": \"rc\","
		 "   \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 17}},"
		 "  {\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"vqpn\": 18, \"pqpn\": 4098, \"type\": \"rc\","
		 "   \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 19}},"
		 "  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 19, \"pqpn\": 4099, \"type\": \"rc\","
		 "   \"peer\": {\"vip\": \"192.168.1.11\", \"vqpn\": 18}}%s],"
		 " \"neighbors\": [{\"ip\": \"%s\", \"mac\": \"02:00:00:00:00:02\"}]}",
		 peer_host, extra_qps, peer_host);
	c = cfg_load_string(json, "xlate.json", &errs);
	if (!c)
		cfg_errors_print(&errs, stderr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	err[0] = 0;
	o = ovl_build(c, err, err_len);
	if (!o)
		cfg_free(c);
	return o;
}

static const struct ovl_conn *
conn_of(const struct ovl *o, uint32_t l_vqpn)
{
	for (uint32_t i = 0; i < o->n_conns; i++)
		if (o->qps[o->conns[i].l].vqpn == l_vqpn)
			return &o->conns[i];
	return NULL;
}

/* The connection's flow label: the ECMP mix of both pqpns (tests/ecmp/test_ecmp.py has the formula). */
static uint32_t
flow_of(uint32_t lp, uint32_t rp)
{
	uint32_t h = (lp * 0x9e3779b1u) ^ (rp * 0x85ebca6bu);

	h ^= h >> 15;
	h *= 0xc2b2ae35u;
	h ^= h >> 13;
	return (h >> 12) & 0xfffffu;
}

static void
test_templates(void)
{
	static const uint8_t h1[16] = { 0xfd, [15] = 1 }, h2[16] = { 0xfd, [15] = 2 };
	static const uint8_t v10[4] = { 192, 168, 1, 10 }, v20[4] = { 192, 168, 1, 20 };
	char err[256];
	struct ovl *o = build("fd00::2", "", err, sizeof(err));
	const struct ovl_conn *c, *hp;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	c = conn_of(o, 17);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* Toward the fabric: IPv4 frames become IPv6, host to host, to R's pqpn. */
	CU_ASSERT_EQUAL(c->egress.xlate_from, 4);
	CU_ASSERT_EQUAL(c->egress.ip_ver, 6);
	CU_ASSERT_EQUAL(c->egress.addr_len, 16);
	CU_ASSERT_EQUAL(memcmp(c->egress.src_ip, h1, 16), 0);
	CU_ASSERT_EQUAL(memcmp(c->egress.dst_ip, h2, 16), 0);
	CU_ASSERT_EQUAL(c->egress.dqpn, 8193);
	CU_ASSERT_TRUE(c->egress.changes_icrc);
	CU_ASSERT_EQUAL(c->egress.flow_label, flow_of(4097, 8193));
	CU_ASSERT_EQUAL(c->egress.udp_sport, 0);	/* the sender's port is kept */
	/* Toward the tenant: IPv6 frames become IPv4, vip to vip, to L's vqpn. */
	CU_ASSERT_EQUAL(c->ingress.xlate_from, 6);
	CU_ASSERT_EQUAL(c->ingress.ip_ver, 4);
	CU_ASSERT_EQUAL(c->ingress.addr_len, 4);
	CU_ASSERT_EQUAL(memcmp(c->ingress.src_ip, v20, 4), 0);
	CU_ASSERT_EQUAL(memcmp(c->ingress.dst_ip, v10, 4), 0);
	CU_ASSERT_EQUAL(c->ingress.dqpn, 17);
	/* The hairpin stays in the vips' version. */
	hp = conn_of(o, 18);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hp);
	CU_ASSERT_TRUE(hp->hairpin);
	CU_ASSERT_EQUAL(hp->egress.xlate_from, 0);
	CU_ASSERT_EQUAL(hp->egress.ip_ver, 4);
	cfg_free((struct cfg *)o->cfg);
	ovl_free(o);
}

static void
test_refused(void)
{
	char err[256];
	struct ovl *o;

	/* Peers whose hosts differ in version: no frame goes between them. */
	o = build("10.0.0.2", "", err, sizeof(err));
	CU_ASSERT_PTR_NULL(o);
	CU_ASSERT_STRING_EQUAL(err, "qps[0].peer: the peer's host is IPv4 and this endpoint's host IPv6: no frame "
			       "goes between them");
	/* A UD QP on an endpoint whose vip and host differ. */
	o = build("fd00::2", ", {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 40, \"pqpn\": 4100,"
		  " \"type\": \"ud\"}", err, sizeof(err));
	CU_ASSERT_PTR_NULL(o);
	CU_ASSERT_STRING_EQUAL(err, "qps[4].type: a UD QP on an endpoint whose vip and host are of different IP "
			       "versions is not supported");
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("overlay IPv4 <-> IPv6", NULL, NULL);
	CU_add_test(s, "templates of a translated connection", test_templates);
	CU_add_test(s, "configurations refused, with their path", test_refused);
	return cu_run_all();
}
