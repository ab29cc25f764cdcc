/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of overlay/ovl_acl.h, without EAL: the outstanding-request
 * tracking that addresses revocation NAKs (24-bit PSN arithmetic, wrap at
 * 0xffffff, ACKs, NAKs, RNR NAKs, READ responses, stale and duplicate
 * answers, retransmissions, runs longer than the PSN window), the ACL
 * evaluation (prefixes, first match, default, types and operation classes)
 * and its result per connection from a loaded configuration, and the NAK
 * frame (opcode, AETH, PSN, ICRC and IPv4 checksum).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "cfg.h"
#include "ovl.h"
#include "ovl_acl.h"

/* Answers arrive as these opcodes; the tracker only needs the PSN and AETH. */
static void
ack(struct ovl_ack_track *ak, uint32_t psn, uint32_t msn)
{
	ovl_track_response(ak, psn, true, ROCE_AETH_ACK | 0x1f, msn);
}

static uint32_t
oldest_of(const struct ovl_req_track *rq, const struct ovl_ack_track *ak, bool *outstanding)
{
	uint32_t psn = 0xdeadbeef;

	*outstanding = ovl_track_oldest(rq, ak, &psn);
	return psn;
}

static void
test_psn_diff(void)
{
	CU_ASSERT_EQUAL(roce_psn_diff(5, 3), 2);
	CU_ASSERT_EQUAL(roce_psn_diff(3, 5), -2);
	CU_ASSERT_EQUAL(roce_psn_diff(0, 0xffffff), 1);
	CU_ASSERT_EQUAL(roce_psn_diff(0xffffff, 0), -1);
	CU_ASSERT_EQUAL(roce_psn_diff(1, 0xfffffe), 3);
	CU_ASSERT_EQUAL(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	CU_ASSERT_EQUAL(roce_psn_diff(0x800000, 0), -0x800000);
}

static void
test_track_basic(void)
{
	struct ovl_req_track rq = { 0 };
	struct ovl_ack_track ak = { 0 };
	bool out;

	/* Nothing forwarded: nothing outstanding, whatever the answers say. */
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_FALSE(out);
	ack(&ak, 50, 7);
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_FALSE(out);
	memset(&ak, 0, sizeof(ak));

	for (uint32_t psn = 100; psn < 110; psn++)
		ovl_track_request(&rq, &ak, psn);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 100);
	CU_ASSERT_TRUE(out);
	CU_ASSERT_EQUAL(ovl_track_msn(&ak), 0);

	ack(&ak, 104, 3);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 105);
	CU_ASSERT_TRUE(out);
	CU_ASSERT_EQUAL(ovl_track_msn(&ak), 3);
	/* A stale ACK (reordered, duplicated) does not move the mark back; its MSN counts. */
	ack(&ak, 102, 2);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 105);
	CU_ASSERT_EQUAL(ovl_track_msn(&ak), 2);
	/* A retransmission (go-back-N from 103) changes nothing. */
	ovl_track_request(&rq, &ak, 103);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 105);
	CU_ASSERT_EQUAL(rq.newest, 109);
	/* Coalesced ACK of everything: nothing outstanding. */
	ack(&ak, 109, 9);
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_FALSE(out);
	/* The next request is the oldest outstanding. */
	ovl_track_request(&rq, &ak, 110);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 110);
	CU_ASSERT_TRUE(out);
	CU_ASSERT_EQUAL(rq.newest, 110);
	/* An ACK beyond what was forwarded (the switch missed requests): nothing outstanding. */
	ack(&ak, 200, 10);
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_FALSE(out);
	/* After a NAK the lcore forgets the requests. */
	ovl_track_request(&rq, &ak, 201);
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_TRUE(out);
	ovl_track_clear(&rq);
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_FALSE(out);
}

static void
test_track_wrap(void)
{
	struct ovl_req_track rq = { 0 };
	struct ovl_ack_track ak = { 0 };
	bool out;

	/* Requests 0xfffffe, 0xffffff, 0, 1, 2, 3 wrap the 24-bit PSN. */
	for (uint32_t i = 0; i < 6; i++)
		ovl_track_request(&rq, &ak, (0xfffffe + i) & 0xffffff);
	CU_ASSERT_EQUAL(rq.first, 0xfffffe);
	CU_ASSERT_EQUAL(rq.newest, 3);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0xfffffe);
	CU_ASSERT_TRUE(out);
	/* An ACK older than the run (before the switch saw it) leaves the run's first. */
	ack(&ak, 0xfffff0, 1);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0xfffffe);
	/* ACK 0xfffffe: the oldest is 0xffffff. */
	ack(&ak, 0xfffffe, 2);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0xffffff);
	/* ACK 0xffffff: the oldest wraps to 0. */
	ack(&ak, 0xffffff, 3);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0);
	CU_ASSERT_TRUE(out);
	/* A stale ACK from before the wrap does not undo it. */
	ack(&ak, 0xfffffe, 3);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0);
	ack(&ak, 2, 4);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 3);
	ack(&ak, 3, 5);
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_FALSE(out);

	/* A request at 0xffffff with nothing answered, then its ACK. */
	memset(&rq, 0, sizeof(rq));
	memset(&ak, 0, sizeof(ak));
	ovl_track_request(&rq, &ak, 0xffffff);
	ovl_track_request(&rq, &ak, 0);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0xffffff);
	ack(&ak, 0xffffff, 1);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0);
	CU_ASSERT_TRUE(out);
	/* PSNs are 24-bit: higher bits of the argument are ignored. */
	ovl_track_request(&rq, &ak, 0x1000001);
	CU_ASSERT_EQUAL(rq.newest, 1);
}

static void
test_track_naks(void)
{
	struct ovl_req_track rq = { 0 };
	struct ovl_ack_track ak = { 0 };
	bool out;

	for (uint32_t psn = 10; psn <= 20; psn++)
		ovl_track_request(&rq, &ak, psn);
	/* PSN sequence error NAK at 15: 10..14 arrived, 15 is the oldest outstanding. */
	ovl_track_response(&ak, 15, true, ROCE_AETH_NAK_PSN_SEQ_ERR, 4);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 15);
	CU_ASSERT_EQUAL(ovl_track_msn(&ak), 4);
	/* RNR NAK at 16: 15 done, 16 not. */
	ovl_track_response(&ak, 16, true, ROCE_AETH_RNR_NAK | 0x0e, 5);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 16);
	/* A READ response Middle (no AETH) answers up to its PSN; the MSN stays. */
	ovl_track_response(&ak, 17, false, 0, 0);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 18);
	CU_ASSERT_EQUAL(ovl_track_msn(&ak), 5);
	/* A NAK at 0 answers up to 0xffffff: before the run, so nothing moves. */
	ovl_track_response(&ak, 0, true, ROCE_AETH_NAK_INV_REQ, 6);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 18);
	/* Atomic ACK of 20 (it has an AETH, syndrome ACK). */
	ovl_track_response(&ak, 20, true, ROCE_AETH_ACK, 7);
	oldest_of(&rq, &ak, &out);
	CU_ASSERT_FALSE(out);

	/* A NAK with PSN 0 when the run started at 0xffffff: 0xffffff is answered. */
	memset(&rq, 0, sizeof(rq));
	memset(&ak, 0, sizeof(ak));
	ovl_track_request(&rq, &ak, 0xffffff);
	ovl_track_request(&rq, &ak, 0);
	ovl_track_request(&rq, &ak, 1);
	ovl_track_response(&ak, 0, true, ROCE_AETH_NAK_PSN_SEQ_ERR, 1);
	CU_ASSERT_EQUAL(oldest_of(&rq, &ak, &out), 0);
	CU_ASSERT_TRUE(out);
}

/*
 * A long conversation: 40 million PSNs (more than twice around the 24-bit
 * space and five times the diff window), with an ACK every 1000 requests and
 * 700 requests outstanding at each check.  The oldest outstanding request
 * is always exactly the first unacknowledged one.
 */
static void
test_track_long_run(void)
{
	struct ovl_req_track rq = { 0 };
	struct ovl_ack_track ak = { 0 };
	uint32_t base = 0xfff000, bad = 0;
	bool out;

	for (uint32_t i = 0; i < 40000000u; i++) {
		uint32_t psn = (base + i) & 0xffffff;

		ovl_track_request(&rq, &ak, psn);
		if (i % 1000 == 999) {
			uint32_t acked = (psn - 700) & 0xffffff;

			ack(&ak, acked, i / 1000);
			if (oldest_of(&rq, &ak, &out) != ((acked + 1) & 0xffffff) || !out)
				bad++;
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
}

static struct cfg_acl_rule
rule(enum cfg_acl_action a, const char *src, const char *dst, uint32_t types, uint32_t ops)
{
	struct cfg_acl_rule r;
	char buf[64];

	memset(&r, 0, sizeof(r));
	r.action = a;
	r.types = types;
	r.ops = ops;
	for (int k = 0; k < 2; k++) {
		const char *s = k ? dst : src;
		struct cfg_cidr *p = k ? &r.dst : &r.src;
		char *slash;

		if (!s)
			continue;
		snprintf(buf, sizeof(buf), "%s", s);
		slash = strchr(buf, '/');
		*slash = 0;
		CU_ASSERT_EQUAL_FATAL(cfg_ip_parse(buf, &p->ip), 0);
		p->len = (uint8_t)atoi(slash + 1);
		if (k)
			r.has_dst = true;
		else
			r.has_src = true;
	}
	return r;
}

static bool
decide(const struct cfg_acl *a, const char *src, const char *dst, unsigned type, unsigned op, uint32_t *r)
{
	struct cfg_ip s, d;

	cfg_ip_parse(src, &s);
	cfg_ip_parse(dst, &d);
	return ovl_acl_decide(a, s.ver, s.b, d.b, type, op, r);
}

static void
test_acl_decide(void)
{
	struct cfg_acl_rule rules[] = {
		rule(CFG_ACL_DENY, "192.168.1.128/25", NULL, CFG_QP_TYPES_ALL, CFG_OP_ALL),
		rule(CFG_ACL_ALLOW, "192.168.1.0/24", "192.168.2.0/23", 1u << CFG_QP_RC,
		     CFG_OP_READ | CFG_OP_WRITE),
		rule(CFG_ACL_DENY, "0.0.0.0/0", "192.168.2.7/32", CFG_QP_TYPES_ALL, CFG_OP_WRITE),
		rule(CFG_ACL_DENY, "fd00::/8", "fd00:1::/32", 1u << CFG_QP_UD, CFG_OP_SEND),
	};
	struct cfg_acl a = { .tenant = 0, .def = CFG_ACL_ALLOW, .rules = rules, .n_rules = 4 };
	uint32_t r;

	/* No ACL: everything, by default. */
	CU_ASSERT_TRUE(decide(NULL, "1.1.1.1", "2.2.2.2", CFG_QP_RC, CFG_OP_ATOMIC, &r));
	CU_ASSERT_EQUAL(r, OVL_ACL_DEFAULT);
	/* /25: .128 to .255 is denied whatever the rest. */
	CU_ASSERT_FALSE(decide(&a, "192.168.1.200", "10.0.0.1", CFG_QP_UD, CFG_OP_SEND, &r));
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_FALSE(decide(&a, "192.168.1.128", "10.0.0.1", CFG_QP_RC, CFG_OP_READ, &r));
	/* .127 is not in it: rule 1 for RC reads and writes into 192.168.2.0/23. */
	CU_ASSERT_TRUE(decide(&a, "192.168.1.127", "192.168.3.7", CFG_QP_RC, CFG_OP_READ, &r));
	CU_ASSERT_EQUAL(r, 1);
	/* First match wins: rule 1 allows the write that rule 2 would deny. */
	CU_ASSERT_TRUE(decide(&a, "192.168.1.5", "192.168.2.7", CFG_QP_RC, CFG_OP_WRITE, &r));
	CU_ASSERT_EQUAL(r, 1);
	/* UC is not in rule 1's types: rule 2 denies the write. */
	CU_ASSERT_FALSE(decide(&a, "192.168.1.5", "192.168.2.7", CFG_QP_UC, CFG_OP_WRITE, &r));
	CU_ASSERT_EQUAL(r, 2);
	/* Nor send in its ops: the default allows. */
	CU_ASSERT_TRUE(decide(&a, "192.168.1.5", "192.168.2.7", CFG_QP_RC, CFG_OP_SEND, &r));
	CU_ASSERT_EQUAL(r, OVL_ACL_DEFAULT);
	/* 192.168.4.0 is outside the /23. */
	CU_ASSERT_TRUE(decide(&a, "192.168.1.5", "192.168.4.7", CFG_QP_RC, CFG_OP_ATOMIC, &r));
	/* IPv4 prefixes never match IPv6 addresses, and the reverse. */
	CU_ASSERT_TRUE(decide(&a, "::ffff:192.168.1.200", "fd00::1", CFG_QP_RC, CFG_OP_SEND, &r));
	CU_ASSERT_EQUAL(r, OVL_ACL_DEFAULT);
	CU_ASSERT_FALSE(decide(&a, "fd12::1", "fd00:1:ffff::9", CFG_QP_UD, CFG_OP_SEND, &r));
	CU_ASSERT_EQUAL(r, 3);
	CU_ASSERT_TRUE(decide(&a, "fd12::1", "fd00:2::9", CFG_QP_UD, CFG_OP_SEND, &r));
	/* Default deny. */
	a.def = CFG_ACL_DENY;
	CU_ASSERT_FALSE(decide(&a, "10.0.0.1", "10.0.0.2", CFG_QP_RC, CFG_OP_SEND, &r));
	CU_ASSERT_EQUAL(r, OVL_ACL_DEFAULT);
	/* The opcode table gives the classes. */
	CU_ASSERT_EQUAL(ovl_op_class(roce_opcodes[ROCE_OP_RC_SEND_FIRST].flags), CFG_OP_SEND);
	CU_ASSERT_EQUAL(ovl_op_class(roce_opcodes[ROCE_OP_RC_WRITE_ONLY_IMM].flags), CFG_OP_WRITE);
	CU_ASSERT_EQUAL(ovl_op_class(roce_opcodes[ROCE_OP_RC_READ_REQ].flags), CFG_OP_READ);
	CU_ASSERT_EQUAL(ovl_op_class(roce_opcodes[ROCE_OP_RC_FETCH_ADD].flags), CFG_OP_ATOMIC);
	CU_ASSERT_EQUAL(ovl_op_class(roce_opcodes[ROCE_OP_UD_SEND_ONLY].flags), CFG_OP_SEND);
	CU_ASSERT_EQUAL(ovl_op_class(roce_opcodes[0x2a].flags), CFG_OP_WRITE);
}

/* A host 10.0.0.1 with blue .10 (local) talking RC to .20 and .30 and UC to .30 (remote). */
static const char acl_config[] =
	"{\"version\": 1,"
	" \"tenants\": [{\"name\": \"blue\", \"vni\": 1}, {\"name\": \"red\", \"vni\": 2}],"
	" \"ports\": [{\"name\": \"up\", \"device\": \"d0\", \"role\": \"uplink\", \"ip\": \"10.0.0.1\","
	"  \"mac\": \"02:00:00:00:00:01\", \"gateway_mac\": \"02:00:00:00:00:fe\"},"
	"  {\"name\": \"vb\", \"device\": \"d1\", \"role\": \"tenant\", \"tenant\": \"blue\","
	"  \"mac\": \"02:00:00:00:01:01\"},"
	"  {\"name\": \"vr\", \"device\": \"d2\", \"role\": \"tenant\", \"tenant\": \"red\","
	"  \"mac\": \"02:00:00:00:02:01\"}],"
	" \"endpoints\": ["
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"host\": \"10.0.0.1\", \"port\": \"vb\","
	"   \"mac\": \"02:00:00:00:aa:10\"},"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"host\": \"10.0.0.2\"},"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.2.30\", \"host\": \"10.0.0.2\"},"
	"  {\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"host\": \"10.0.0.1\", \"port\": \"vr\","
	"   \"mac\": \"02:00:00:00:bb:10\"},"
	"  {\"tenant\": \"red\", \"vip\": \"192.168.1.20\", \"host\": \"10.0.0.2\"}],"
	" \"qps\": ["
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 17, \"pqpn\": 4097, \"type\": \"rc\","
	"   \"peer\": {\"vip\": \"192.168.1.20\", \"vqpn\": 33}},"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"vqpn\": 33, \"pqpn\": 8193, \"type\": \"rc\","
	"   \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 17}},"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 18, \"pqpn\": 4098, \"type\": \"rc\","
	"   \"peer\": {\"vip\": \"192.168.2.30\", \"vqpn\": 34}},"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.2.30\", \"vqpn\": 34, \"pqpn\": 8194, \"type\": \"rc\","
	"   \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 18}},"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 19, \"pqpn\": 4099, \"type\": \"uc\","
	"   \"peer\": {\"vip\": \"192.168.2.30\", \"vqpn\": 35}},"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.2.30\", \"vqpn\": 35, \"pqpn\": 8195, \"type\": \"uc\","
	"   \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 19}},"
	"  {\"tenant\": \"red\", \"vip\": \"192.168.1.10\", \"vqpn\": 17, \"pqpn\": 4100, \"type\": \"rc\","
	"   \"peer\": {\"vip\": \"192.168.1.20\", \"vqpn\": 33}},"
	"  {\"tenant\": \"red\", \"vip\": \"192.168.1.20\", \"vqpn\": 33, \"pqpn\": 8196, \"type\": \"rc\","
	"   \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 17}}],"
	" \"acls\": [{\"tenant\": \"blue\", \"rules\": ["
	"  {\"action\": \"allow\", \"src\": \"192.168.1.20/32\", \"ops\": [\"read\"]},"
	"  {\"action\": \"deny\", \"dst\": \"192.168.1.0/24\", \"ops\": [\"write\", \"read\"]},"
	"  {\"action\": \"deny\", \"src\": \"192.168.1.10/32\", \"dst\": \"192.168.2.0/24\","
	"   \"types\": [\"uc\"]},"
	"  {\"action\": \"deny\", \"dst\": \"192.168.2.0/24\", \"ops\": [\"send\", \"write\"]},"
	"  {\"action\": \"deny\", \"src\": \"192.168.2.0/24\"}]}]"
	"}";

static const struct ovl_conn *
conn_of(const struct ovl *o, uint32_t tenant, uint32_t l_vqpn)
{
	for (uint32_t i = 0; i < o->n_conns; i++)
		if (o->conns[i].tenant == tenant && o->qps[o->conns[i].l].vqpn == l_vqpn)
			return &o->conns[i];
	return NULL;
}

static void
test_acl_conns(void)
{
	struct cfg_errors errs = { 0 };
	struct cfg *c = cfg_load_string(acl_config, "acl.json", &errs);
	const struct ovl_conn *cn;
	struct ovl *o;
	char err[256];

	if (!c)
		cfg_errors_print(&errs, stderr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = ovl_build(c, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL(o->tenants[0].acl);
	CU_ASSERT_EQUAL(o->tenants[0].acl_index, 0);
	CU_ASSERT_TRUE(o->tenants[0].ud_acl);  /* rule 3 denies sends of any type */
	CU_ASSERT_PTR_NULL(o->tenants[1].acl);

	/* .10 -> .20: writes and reads denied by rule 1; .20 -> .10: reads allowed by rule 0. */
	cn = conn_of(o, 0, 17);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cn);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_L2R], CFG_OP_SEND | CFG_OP_ATOMIC);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_R2L], CFG_OP_SEND | CFG_OP_ATOMIC | CFG_OP_READ);
	CU_ASSERT_FALSE(cn->acl_block);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_L2R][0], OVL_ACL_DEFAULT);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_L2R][1], 1);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_L2R][2], 1);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_R2L][2], 0);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_R2L][1], 1);

	/* .10 -> 2.30 RC: send and write denied (rule 3); 2.30 -> .10: everything denied (rules 1, 4). */
	cn = conn_of(o, 0, 18);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cn);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_L2R], CFG_OP_READ | CFG_OP_ATOMIC);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_R2L], 0);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_R2L][0], 4);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_R2L][2], 1);
	CU_ASSERT_FALSE(cn->acl_block);

	/* UC .10 -> 2.30 denied by rule 2, and the reverse by rule 4: blocked. */
	cn = conn_of(o, 0, 19);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cn);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_L2R] & ovl_type_ops(CFG_QP_UC), 0);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_L2R][0], 2);
	CU_ASSERT_TRUE(cn->acl_block);

	/* Red has no ACL: the same addresses are allowed everything. */
	cn = conn_of(o, 1, 17);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cn);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_L2R], CFG_OP_ALL);
	CU_ASSERT_EQUAL(cn->acl_allow[OVL_DIR_R2L], CFG_OP_ALL);
	CU_ASSERT_EQUAL(cn->acl_rule[OVL_DIR_R2L][3], OVL_ACL_DEFAULT);
	CU_ASSERT_FALSE(cn->acl_block);
	ovl_free(o);
	cfg_free(c);
	cfg_errors_clear(&errs);
}

static void
check_nak(uint8_t ver)
{
	static const uint8_t eth[12] = { 2, 0, 0, 0, 0xaa, 0x10, 2, 0, 0, 0, 1, 1 };
	uint8_t src[16] = { 192, 168, 1, 20 }, dst[16] = { 192, 168, 1, 10 }, buf[256];
	struct roce_frame_spec s;
	struct roce_pkt pkt;
	const struct roce_bth *bth;
	const struct roce_aeth *aeth;
	size_t len;

	if (ver == 6) {
		memset(src, 0, 16);
		memset(dst, 0, 16);
		src[0] = dst[0] = 0xfd;
		src[15] = 0x20;
		dst[15] = 0x10;
	}
	ovl_nak_spec(&s, eth, ver, src, dst, 17);
	len = ovl_nak_build(buf, sizeof(buf), &s, 0x1000005, 0xabcdef);
	CU_ASSERT_EQUAL_FATAL(len, ver == 6 ? 82u : 62u);
	CU_ASSERT_EQUAL_FATAL(roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &pkt), ROCE_OK);
	CU_ASSERT_EQUAL(memcmp(buf, eth, 12), 0);
	bth = roce_pkt_bth(&pkt, buf);
	aeth = roce_pkt_ext(&pkt, buf, ROCE_EXT_AETH);
	CU_ASSERT_EQUAL(pkt.opcode, ROCE_OP_RC_ACK);
	CU_ASSERT_EQUAL(roce_bth_dqpn(bth), 17);
	CU_ASSERT_EQUAL(roce_bth_psn(bth), 5);
	CU_ASSERT_EQUAL(roce_bth_pkey(bth), 0xffff);
	CU_ASSERT_PTR_NOT_NULL_FATAL(aeth);
	CU_ASSERT_EQUAL(roce_aeth_syndrome(aeth), ROCE_AETH_NAK_REM_ACC_ERR);
	CU_ASSERT_EQUAL(roce_aeth_msn(aeth), 0xabcdef);
	CU_ASSERT_TRUE(roce_icrc_verify(buf, &pkt));
	CU_ASSERT_EQUAL(memcmp(buf + pkt.l3_off + (ver == 6 ? 8 : 12), src, ver == 6 ? 16 : 4), 0);
	if (ver == 4)
		CU_ASSERT_EQUAL(roce_ipv4_csum(buf + pkt.l3_off, 20), roce_rd16(buf + pkt.l3_off + 10));
}

static void
test_nak_frame(void)
{
	check_nak(4);
	check_nak(6);
}

int
main(void)
{
	unsigned fails;
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("acl", NULL, NULL);
	CU_add_test(s, "24-bit PSN difference", test_psn_diff);
	CU_add_test(s, "tracking: ACKs, stale answers, retransmissions, runs", test_track_basic);
	CU_add_test(s, "tracking: 24-bit wrap at 0xffffff", test_track_wrap);
	CU_add_test(s, "tracking: NAK, RNR NAK, READ response, atomic ACK", test_track_naks);
	CU_add_test(s, "tracking: 40 M PSNs, twice around the space", test_track_long_run);
	CU_add_test(s, "ACL: prefixes, first match, default, types, classes", test_acl_decide);
	CU_add_test(s, "ACL: verdicts per connection and direction", test_acl_conns);
	CU_add_test(s, "NAK frame: AETH, PSN, ICRC, IPv4 and IPv6", test_nak_frame);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
