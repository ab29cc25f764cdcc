/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The differential test of config/cfg_inc: seeded random batches, valid and
 * invalid, applied in sequence to a running configuration through both
 * paths (run_both()).  Whenever cfg_inc_prepare() takes a batch, the full
 * path must accept it with the same result as a set of records (peers and
 * endpoints resolved to keys); whenever the full path rejects one,
 * cfg_inc_prepare() must have said no.  The batches draw from small pools of
 * vips (IPv4 and IPv6), hosts, vqpns, pqpns and psrqns so that collisions, missing peers and
 * endpoints still in use come up often.  Green learns its QPs: halves
 * (cfg_qp_half()) come and go there, and now and then one in a tenant that
 * does not learn, of the wrong type, from a vip that is no endpoint, or
 * named by a full QP as its peer.  INC_SEED and INC_BATCHES in the
 * environment change the seed (default 1) and the count (default 4000).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "test_cfg_inc.h"

/* red and green allow few QPs, so that batches exceed their max_qps; green learns. */
static const char base[] =
	"{\"version\": 1, \"ports\": ["
	"{\"name\": \"up\", \"device\": \"net_null0\", \"role\": \"uplink\", \"ip\": \"10.0.0.1\", "
	"\"mac\": \"02:00:00:00:00:01\", \"gateway_mac\": \"02:00:00:00:00:fe\"}, "
	"{\"name\": \"pb\", \"device\": \"net_null1\", \"role\": \"tenant\", \"tenant\": \"blue\", \"mac\": \"02:00:00:00:01:01\"}, "
	"{\"name\": \"pr\", \"device\": \"net_null2\", \"role\": \"tenant\", \"tenant\": \"red\", \"mac\": \"02:00:00:00:02:01\"}, "
	"{\"name\": \"pg\", \"device\": \"net_null3\", \"role\": \"tenant\", \"tenant\": \"green\", \"mac\": \"02:00:00:00:03:01\"}], "
	"\"tenants\": [{\"name\": \"blue\", \"vni\": 100}, {\"name\": \"red\", \"vni\": 200, \"max_qps\": 12}, "
	"{\"name\": \"green\", \"vni\": 300, \"max_qps\": 16, \"qp_learning\": true}], "
	"\"endpoints\": [{\"tenant\": \"blue\", \"vip\": \"10.1.0.1\", \"host\": \"10.0.0.1\", \"port\": \"pb\", "
	"\"mac\": \"02:00:00:00:aa:01\"}, {\"tenant\": \"blue\", \"vip\": \"10.1.0.2\", \"host\": \"10.0.0.2\"}, "
	"{\"tenant\": \"red\", \"vip\": \"10.1.0.1\", \"host\": \"10.0.0.1\", \"port\": \"pr\", \"mac\": \"02:00:00:00:bb:01\"}, "
	"{\"tenant\": \"red\", \"vip\": \"10.1.0.2\", \"host\": \"10.0.0.2\"}, "
	"{\"tenant\": \"green\", \"vip\": \"10.1.0.1\", \"host\": \"10.0.0.1\", \"port\": \"pg\", \"mac\": \"02:00:00:00:dd:01\"}, "
	"{\"tenant\": \"green\", \"vip\": \"10.1.0.2\", \"host\": \"10.0.0.2\"}]}";

static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)((rng >> 16) % n);
}

/* The request being written: each section's records, comma-separated. */
struct batch {
	char sec[2][3][16384];  /* [put, delete][endpoints, qps, mrs] */
	int tenant;             /* a tenant record put (the full path): 0 none, else tenant_puts[tenant - 1] */
};

static void
add(struct batch *b, int del, int k, const char *fmt, ...)
{
	char *s = b->sec[del][k - CFG_DK_ENDPOINTS];
	size_t n = strlen(s);
	va_list ap;

	if (n > sizeof(b->sec[0][0]) - 600)
		return;
	if (n)
		s[n++] = ',';
	va_start(ap, fmt);
	vsnprintf(s + n, sizeof(b->sec[0][0]) - n, fmt, ap);
	va_end(ap);
}

static const char *const tenants[] = { "blue", "red", "green" };
static const char *const tenant_ports[] = { "pb", "pr", "pg" };
/* Red as it is; green as it is, or no longer learning (rejected while it has halves). */
static const char *const tenant_puts[] = {
	"{\"name\": \"red\", \"vni\": 200, \"max_qps\": 12}",
	"{\"name\": \"green\", \"vni\": 300, \"max_qps\": 16, \"qp_learning\": true}",
	"{\"name\": \"green\", \"vni\": 300, \"max_qps\": 16}",
};
/* The peer vqpn of a half: none (QPN 0 is reserved, so never a peer's). */
#define HALF 0u
static const char *const types[] = { "rc", "uc", "ud", "xrc_ini", "xrc_tgt" };

/* Vips 0 to 8 are IPv4, the rest IPv6. */
static void
vip_of(uint32_t i, char *buf)
{
	if (i < 9)
		snprintf(buf, 32, "10.1.0.%" PRIu32, 1 + i);
	else
		snprintf(buf, 32, "fd00::%" PRIx32, 1 + i);
}

static const char *
ip(const struct cfg_ip *a, char *buf)
{
	cfg_ip_format(a, buf, CFG_IP_STRLEN);
	return buf;
}

static void
put_endpoint(struct batch *b, const struct cfg *c, const struct cfg_endpoint *e, const char *host)
{
	char v[CFG_IP_STRLEN], h[CFG_IP_STRLEN], srq[256] = "";
	size_t n = 0;

	for (uint32_t s = 0; s < e->n_xrc_srqs; s++)
		n += snprintf(srq + n, sizeof(srq) - n, "%s{\"vsrqn\": %" PRIu32 ", \"psrqn\": %" PRIu32 "}", s ? ", " : "",
			      e->xrc_srqs[s].vsrqn, e->xrc_srqs[s].psrqn);
	if (e->port >= 0)
		add(b, 0, CFG_DK_ENDPOINTS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"host\": \"%s\", \"port\": \"%s\", "
		    "\"mac\": \"%02x:%02x:%02x:%02x:%02x:%02x\", \"xrc_srqs\": [%s]}", c->tenants[e->tenant].name,
		    ip(&e->vip, v), host ? host : ip(&e->host, h), c->ports[e->port].name, e->mac[0], e->mac[1], e->mac[2],
		    e->mac[3], e->mac[4], e->mac[5], srq);
	else
		add(b, 0, CFG_DK_ENDPOINTS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"host\": \"%s\", \"xrc_srqs\": [%s]}",
		    c->tenants[e->tenant].name, ip(&e->vip, v), host ? host : ip(&e->host, h), srq);
}

static void
put_qp(struct batch *b, const char *t, const char *vip, uint32_t vqpn, uint32_t pqpn, int type, const char *pvip,
       uint32_t pvqpn)
{
	if (type == CFG_QP_UD)
		add(b, 0, CFG_DK_QPS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"vqpn\": %" PRIu32 ", \"pqpn\": %" PRIu32
		    ", \"type\": \"ud\"}", t, vip, vqpn, pqpn);
	else if (pvqpn == HALF)
		add(b, 0, CFG_DK_QPS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"vqpn\": %" PRIu32 ", \"pqpn\": %" PRIu32
		    ", \"type\": \"%s\", \"peer\": {\"vip\": \"%s\"}%s}", t, vip, vqpn, pqpn, types[type], pvip,
		    rnd(4) ? "" : ", \"rate\": {\"gbps\": 3}");
	else
		add(b, 0, CFG_DK_QPS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"vqpn\": %" PRIu32 ", \"pqpn\": %" PRIu32
		    ", \"type\": \"%s\", \"peer\": {\"vip\": \"%s\", \"vqpn\": %" PRIu32 "}%s}", t, vip, vqpn, pqpn,
		    types[type], pvip, pvqpn, rnd(4) ? "" : ", \"rate\": {\"gbps\": 3}");
}

static void
del_key(struct batch *b, int k, const char *t, const char *vip, uint32_t id)
{
	static const char *const idk[CFG_DK_N] = { NULL, NULL, "vqpn", "rkey" };

	if (k == CFG_DK_ENDPOINTS)
		add(b, 1, k, "{\"tenant\": \"%s\", \"vip\": \"%s\"}", t, vip);
	else
		add(b, 1, k, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"%s\": %" PRIu32 "}", t, vip, idk[k], id);
}

/* A vip of tenant @t that is (usually) an endpoint of @c. */
static void
some_vip(const struct cfg *c, int t, char *buf)
{
	for (int tries = 0; tries < 8 && c->n_endpoints; tries++) {
		const struct cfg_endpoint *e = &c->endpoints[rnd(c->n_endpoints)];

		if (e->tenant == t && rnd(20)) {
			ip(&e->vip, buf);
			return;
		}
	}
	vip_of(rnd(12), buf);
}

/*
 * Halves of tenant @t, from @v1 to (@v2, @q2) and perhaps back to (@v1,
 * @q1) as the learners of two hosts write them; now and then of the wrong
 * type; now and then ends that name their peer's vqpn (alone or paired,
 * cfg_qp_alone()); or an end that names a running half as its peer.
 */
static void
half_op(struct batch *b, const struct cfg *c, int t, const char *v1, const char *v2, uint32_t q1, uint32_t q2)
{
	int type = rnd(12) ? (rnd(2) ? CFG_QP_RC : CFG_QP_UC) : CFG_QP_XRC_INI;
	const struct cfg_qp *h = c->n_qps ? &c->qps[rnd(c->n_qps)] : NULL;
	char a[CFG_IP_STRLEN], p[CFG_IP_STRLEN];

	if (h && cfg_qp_half(h) && !rnd(6)) {
		put_qp(b, c->tenants[h->tenant].name, ip(&h->peer_vip, a), q1, 4096 + rnd(400), (int)h->type,
		       ip(&h->vip, p), h->vqpn);
		return;
	}
	/* Now and then an end that names its peer's vqpn: alone, or a pair with the other. */
	put_qp(b, tenants[t], v2, q2, 4096 + rnd(400), type, v1, rnd(4) ? HALF : q1);
	if (!rnd(3))
		put_qp(b, tenants[t], v1, q1, 4096 + rnd(400), type, v2, rnd(4) ? HALF : q2);
}

/* One random operation of the batch. */
static void
one_op(struct batch *b, const struct cfg *c)
{
	int t = (int)rnd(3), type;
	char v1[CFG_IP_STRLEN], v2[CFG_IP_STRLEN];
	uint32_t op = rnd(100), q1 = 16 + rnd(40), q2 = 16 + rnd(40);

	some_vip(c, t, v1);
	some_vip(c, t, v2);
	if (op < 35 && (t == 2 ? rnd(3) != 0 : rnd(40) == 0)) { /* halves, rarely where they cannot be */
		half_op(b, c, t, v1, v2, q1, q2);
	} else if (op < 35) {   /* a connection; sometimes only half, or ill-typed */
		type = (int)rnd(5);
		if (type == CFG_QP_UD)
			type = CFG_QP_RC;
		put_qp(b, tenants[t], v1, q1, 4096 + rnd(400), type, v2, q2);
		if (rnd(20))
			put_qp(b, tenants[t], v2, q2, 4096 + rnd(400), rnd(25) ? cfg_qp_peer_type(type) : CFG_QP_UC, v1,
			       rnd(30) ? q1 : q1 + 1);
	} else if (op < 42) {   /* a UD QP */
		put_qp(b, tenants[t], v1, q1, 4096 + rnd(400), CFG_QP_UD, NULL, 0);
	} else if (op < 57 && c->n_qps) { /* a QP deleted, with its peer (mostly) */
		const struct cfg_qp *q = &c->qps[rnd(c->n_qps)];

		del_key(b, CFG_DK_QPS, c->tenants[q->tenant].name, ip(&q->vip, v1), q->vqpn);
		if (q->peer >= 0 && rnd(12))
			del_key(b, CFG_DK_QPS, c->tenants[q->tenant].name, ip(&c->qps[q->peer].vip, v2),
				c->qps[q->peer].vqpn);
	} else if (op < 66 && c->n_qps) { /* a QP put again: new pqpn or rate, or equal */
		const struct cfg_qp *q = &c->qps[rnd(c->n_qps)];

		put_qp(b, c->tenants[q->tenant].name, ip(&q->vip, v1), q->vqpn, rnd(2) ? q->pqpn : 4096 + rnd(400),
		       (int)q->type, q->has_peer ? ip(&q->peer_vip, v2) : NULL, q->has_peer_vqpn ? q->peer_vqpn : HALF);
	} else if (op < 74) {   /* an MR added or put again */
		add(b, 0, CFG_DK_MRS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"rkey\": %" PRIu32 ", \"addr\": 4096, "
		    "\"length\": %" PRIu32 ", \"target_rkey\": 1, \"target_addr\": 0, \"access\": [\"remote_read\"]}",
		    tenants[t], v1, rnd(6), 1 + rnd(3));
	} else if (op < 79 && c->n_mrs) { /* an MR deleted */
		const struct cfg_mr *m = &c->mrs[rnd(c->n_mrs)];

		del_key(b, CFG_DK_MRS, c->tenants[m->tenant].name, ip(&m->vip, v1), m->rkey);
	} else if (op < 87) {   /* an endpoint, maybe with SRQs, maybe on a port */
		uint32_t n = rnd(3);
		char srq[200] = "";

		for (uint32_t s = 0; s < n; s++)
			snprintf(srq + strlen(srq), sizeof(srq) - strlen(srq), "%s{\"vsrqn\": %" PRIu32 ", \"psrqn\": %"
				 PRIu32 "}", s ? ", " : "", s + 1, 700 + rnd(12));
		vip_of(rnd(12), v1);
		if (rnd(4))
			add(b, 0, CFG_DK_ENDPOINTS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"host\": \"%s\", "
			    "\"xrc_srqs\": [%s]}", tenants[t], v1, rnd(3) ? (rnd(2) ? "10.0.0.2" : "10.0.0.3") : "fd01::3", srq);
		else
			add(b, 0, CFG_DK_ENDPOINTS, "{\"tenant\": \"%s\", \"vip\": \"%s\", \"host\": \"10.0.0.1\", "
			    "\"port\": \"%s\", \"mac\": \"02:00:00:00:cc:01\", \"xrc_srqs\": [%s]}", tenants[t], v1,
			    rnd(8) ? tenant_ports[t] : "pr", srq);
	} else if (op < 93 && c->n_endpoints) { /* an endpoint deleted (in use or not) */
		const struct cfg_endpoint *e = &c->endpoints[rnd(c->n_endpoints)];

		del_key(b, CFG_DK_ENDPOINTS, c->tenants[e->tenant].name, ip(&e->vip, v1), 0);
	} else if (op < 97 && c->n_endpoints) { /* an endpoint put again, equal or moved */
		put_endpoint(b, c, &c->endpoints[rnd(c->n_endpoints)], rnd(4) ? NULL : "10.0.0.9");
	} else if (op < 98) {   /* a tenant put: the full path */
		b->tenant = 1 + (int)rnd(3);
	} else {                /* a delete of what does not exist */
		del_key(b, CFG_DK_QPS, tenants[t], "10.9.9.9", 1);
	}
}

static char *
render(const struct batch *b, char *out, size_t len)
{
	static const char *const kn[3] = { "endpoints", "qps", "mrs" };
	size_t n = snprintf(out, len, "{\"op\": \"apply\"");

	for (int d = 0; d < 2; d++) {
		n += snprintf(out + n, len - n, ", \"%s\": {\"tenants\": [%s]", d ? "delete" : "put",
			      b->tenant && !d ? tenant_puts[b->tenant - 1] : "");
		for (int k = 0; k < 3; k++)
			if (b->sec[d][k][0])
				n += snprintf(out + n, len - n, ", \"%s\": [%s]", kn[k], b->sec[d][k]);
		n += snprintf(out + n, len - n, "}");
	}
	snprintf(out + n, len - n, "}");
	return out;
}

void
test_inc_random(void)
{
	const char *seed = getenv("INC_SEED"), *count = getenv("INC_BATCHES");
	uint32_t n = count ? (uint32_t)atoi(count) : 4000, paths[5] = { 0 };
	static struct batch b;
	static char json[sizeof(b) + 4096];
	struct cfg *c = cfg_load_string(base, "base", NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	rng = seed ? strtoull(seed, NULL, 0) : 1;
	rng = rng * 0x9e3779b97f4a7c15ull + 1;
	struct cfg *snap = cfg_dup(c);
	uint32_t diffs[2] = { 0 };
	uint64_t halves = 0;     /* halves running, summed over the batches */

	for (uint32_t i = 0; i < n; i++) {
		uint32_t ops = 1 + rnd(4);
		enum both_path p;

		/* Every 10 batches, the file reload's diff from the configuration 10 batches ago. */
		if (i % 10 == 9) {
			struct cfg *file = cfg_dup(c);
			int d = diff_agrees(snap, file);

			CU_ASSERT(d >= 0);
			if (d < 0)
				break;
			diffs[d]++;
			cfg_free(snap);
			snap = file;
		}

		memset(&b, 0, sizeof(b));
		for (uint32_t o = 0; o < ops; o++)
			one_op(&b, c);
		p = run_both(&c, render(&b, json, sizeof(json)), NULL);
		paths[p]++;
		for (uint32_t q = 0; q < c->n_qps; q++)
			halves += cfg_qp_half(&c->qps[q]);
		if (p == BOTH_MISMATCH || p == BOTH_SYNTAX)
			break;
	}
	printf("\n  %u batches: incremental %u, full path %u, rejected %u, mismatches %u; %u endpoints, %u qps, "
	       "%u mrs at the end\n", n, paths[BOTH_INC], paths[BOTH_FULL], paths[BOTH_REJECTED], paths[BOTH_MISMATCH],
	       c->n_endpoints, c->n_qps, c->n_mrs);
	printf("  file diffs: %u as change lists, %u declined (an endpoint modified or a learning tenant's gone, or "
	       "learning turned)\n",
	       diffs[1], diffs[0]);
	printf("  halves: %.1f running on average\n", n ? (double)halves / n : 0.0);
	CU_ASSERT(halves > n);
	CU_ASSERT(diffs[1] > 0);
	cfg_free(snap);
	CU_ASSERT_EQUAL(paths[BOTH_MISMATCH], 0);
	CU_ASSERT_EQUAL(paths[BOTH_SYNTAX], 0);
	/* Most valid batches take the incremental path; both paths and rejections all occur. */
	CU_ASSERT(paths[BOTH_INC] > 4 * paths[BOTH_FULL]);
	CU_ASSERT(paths[BOTH_FULL] > 0 && paths[BOTH_REJECTED] > n / 10);
	cfg_free(c);
}
