/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's records (dp_cluster.h): every key seen under the
 * prefix with the value etcd holds (want) and the value the running
 * configuration holds from it (applied), reconciled as deltas.  Runs on the
 * cluster thread only.
 *
 * A reconcile puts every record whose want differs from its applied value
 * and deletes every record etcd no longer holds, as one batch.  When the
 * delta rejects the batch, the records its errors name (put.qps[3] is the
 * fourth QP put) are left out, reported and counted, and the rest is tried
 * again; a rejection that names no record of the batch leaves all of it out.
 * What was left out stays pending and is tried with the next change.  The
 * cost is linear in the records known, per watch message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dp.h"
#include "dp_cluster_etcd.h"
#include "dp_cluster_rec.h"
#include "dp_cluster_txn.h"
#include "dp_delta.h"

enum { K_TENANTS, K_ENDPOINTS, K_QPS, K_MRS, K_N };
static const char *const kind_names[K_N] = { "tenants", "endpoints", "qps", "mrs" };
static const unsigned kind_parts[K_N] = { 1, 2, 3, 3 };
/* The mod_rev of a record etcd no longer holds. */
#define MOD_DELETED (-2)

struct rec {
	char *key;
	int kind;
	char *part[3];            /* the key's components after the kind */
	json_t *want, *applied;   /* NULL: absent */
	int64_t mod_rev;
	int64_t rejected_rev;     /* the mod revision whose rejection was counted, -1 none */
	int64_t pqpn_rev;         /* the mod revision a pqpn was asked for, -1 none */
	uint32_t pqpn_asked;      /* the pqpn written back for pqpn_rev (0: none) */
	bool seen;                /* during a full read */
	bool waiting;             /* left out of the last batch for a peer etcd does not hold (yet) */
	char *write_back;         /* a learned QP's pqpn, applied here first: written to etcd once in force */
};

static struct {
	char *prefix;
	struct rec *r;
	uint32_t n, cap;
	json_t *idx;              /* key -> index into r */
} rs;

void
dp_cluster_rec_init(const char *prefix)
{
	rs.prefix = strdup(prefix);
	rs.idx = json_object();
}

void
dp_cluster_rec_free(void)
{
	for (uint32_t i = 0; i < rs.n; i++) {
		free(rs.r[i].key);
		for (int p = 0; p < 3; p++)
			free(rs.r[i].part[p]);
		json_decref(rs.r[i].want);
		json_decref(rs.r[i].applied);
		free(rs.r[i].write_back);
	}
	free(rs.r);
	free(rs.prefix);
	json_decref(rs.idx);
	memset(&rs, 0, sizeof(rs));
}

static void
reject(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Count @r's current value as rejected once, and make the reason the last error. */
static void
reject(struct rec *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->rejected_rev == r->mod_rev)
		return;
	r->rejected_rev = r->mod_rev;
	pthread_mutex_lock(&dp_cluster_st.lock);
	dp_cluster_st.rejected++;
	pthread_mutex_unlock(&dp_cluster_st.lock);
	dp_cluster_error("%s: %s", r->key, msg);
}

/*
 * True when @s, a key's @p-th part after its kind, is written as the record's
 * own value would be: a vip as cfg_ip_format() writes it, a vqpn (up to
 * 2^24 - 1) or rkey (up to 2^32 - 1) in decimal without a sign or leading
 * zeros.  Aliases such as .../0x11, .../017 or .../17junk are not records:
 * two keys would otherwise name one record, and deleting one would remove
 * what the other still holds.
 */
static bool
key_part_canonical(int kind, unsigned p, const char *s)
{
	if (p == 1) {
		struct cfg_ip ip;
		char buf[CFG_IP_STRLEN];

		return cfg_ip_parse(s, &ip) == 0 && cfg_ip_format(&ip, buf, sizeof(buf)) >= 0 && !strcmp(buf, s);
	}
	if (p == 2) {
		unsigned long long v = 0;

		if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 10)
			return false;
		for (const char *c = s; *c; c++) {
			if (*c < '0' || *c > '9')
				return false;
			v = v * 10 + (unsigned long long)(*c - '0');
		}
		return v <= (kind == K_QPS ? CFG_QPN_MAX : UINT32_MAX);
	}
	return true;
}

/* The record of @key, made if new; NULL when @key is not a record key (reported). */
static struct rec *
rec_get(const char *key, bool make)
{
	json_t *i = json_object_get(rs.idx, key);
	size_t pl = strlen(rs.prefix);
	struct rec *r;
	char *rest, *save = NULL, *tok;
	int kind;

	if (i)
		return &rs.r[json_integer_value(i)];
	if (!make)
		return NULL;
	if (strncmp(key, rs.prefix, pl) || key[pl] != '/') {
		dp_cluster_error("%s: not under %s/", key, rs.prefix);
		return NULL;
	}
	if (rs.n == rs.cap) {
		uint32_t cap = rs.cap ? rs.cap * 2 : 256;
		struct rec *n = realloc(rs.r, sizeof(*n) * cap);

		if (!n)
			return NULL;
		rs.r = n;
		rs.cap = cap;
	}
	r = &rs.r[rs.n];
	memset(r, 0, sizeof(*r));
	r->rejected_rev = r->pqpn_rev = -1;
	r->key = strdup(key);
	rest = strdup(key + pl + 1);
	tok = strtok_r(rest, "/", &save);
	for (kind = 0; tok && kind < K_N && strcmp(tok, kind_names[kind]); kind++)
		;
	r->kind = kind;
	for (unsigned p = 0; kind < K_N && p < 3 && (tok = strtok_r(NULL, "/", &save)); p++)
		r->part[p] = strdup(tok);
	tok = strtok_r(NULL, "/", &save);
	free(rest);
	if (kind == K_N || tok || !r->part[kind_parts[kind] - 1] || (kind_parts[kind] < 3 && r->part[kind_parts[kind]])) {
		r->mod_rev = 0;
		reject(r, "not a record key (PREFIX/tenants/T, endpoints/T/VIP, qps/T/VIP/VQPN, mrs/T/VIP/RKEY)");
		goto bad;
	}
	for (unsigned p = 1; p < kind_parts[kind]; p++)
		if (!key_part_canonical(kind, p, r->part[p])) {
			r->mod_rev = 0;
			reject(r, "not a canonical record key: %s \"%.64s\" (a vip as the record writes it, a %s in "
			       "decimal without leading zeros)", p == 1 ? "vip" : kind == K_QPS ? "vqpn" : "rkey",
			       r->part[p], kind == K_QPS ? "vqpn" : "rkey");
			goto bad;
		}
	json_object_set_new(rs.idx, key, json_integer(rs.n));
	rs.n++;
	return r;
bad:
	free(r->key);
	for (int p = 0; p < 3; p++)
		free(r->part[p]);
	return NULL;
}

static bool
num_eq(json_t *v, const char *s)
{
	unsigned long long a = strtoull(s, NULL, 10); /* a canonical key part */

	if (json_is_integer(v))
		return (unsigned long long)json_integer_value(v) == a;
	return json_is_string(v) && strtoull(json_string_value(v), NULL, 0) == a;
}

static bool
ip_eq(json_t *v, const char *s)
{
	struct cfg_ip a, b;

	return json_is_string(v) && cfg_ip_parse(json_string_value(v), &a) == 0 && cfg_ip_parse(s, &b) == 0 &&
	       cfg_ip_equal(&a, &b);
}

/* The record's value names what its key does. */
static bool
key_matches(const struct rec *r, json_t *v)
{
	const char *t = json_string_value(json_object_get(v, r->kind == K_TENANTS ? "name" : "tenant"));

	if (!t || strcmp(t, r->part[0]))
		return false;
	if (r->kind == K_TENANTS)
		return true;
	if (!ip_eq(json_object_get(v, "vip"), r->part[1]))
		return false;
	if (r->kind == K_QPS)
		return num_eq(json_object_get(v, "vqpn"), r->part[2]);
	return r->kind == K_ENDPOINTS || num_eq(json_object_get(v, "rkey"), r->part[2]);
}

void
dp_cluster_rec_put(const char *key, const char *val, size_t len, int64_t mod_rev)
{
	struct rec *r = rec_get(key, true);
	json_error_t je;
	json_t *v;

	if (!r)
		return;
	r->seen = true;
	if (r->mod_rev == mod_rev && r->want)
		return;
	r->mod_rev = mod_rev;
	r->waiting = false;
	json_decref(r->want);
	r->want = NULL;
	v = json_loadb(val, len, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		reject(r, "not JSON: %d:%d: %s", je.line, je.column, je.text);
		return;
	}
	if (!json_is_object(v) || !key_matches(r, v)) {
		reject(r, "the value is not the %s record its key names", kind_names[r->kind]);
		json_decref(v);
		return;
	}
	r->want = v;
}

void
dp_cluster_rec_del(const char *key)
{
	struct rec *r = rec_get(key, false);

	if (r) {
		json_decref(r->want);
		r->want = NULL;
		r->mod_rev = MOD_DELETED;
		r->waiting = false;
	}
}

void
dp_cluster_rec_mark(void)
{
	for (uint32_t i = 0; i < rs.n; i++)
		rs.r[i].seen = false;
}

void
dp_cluster_rec_sweep(void)
{
	for (uint32_t i = 0; i < rs.n; i++)
		if (!rs.r[i].seen && rs.r[i].mod_rev != MOD_DELETED) {
			json_decref(rs.r[i].want);
			rs.r[i].want = NULL;
			rs.r[i].mod_rev = MOD_DELETED;
		}
}

void
dp_cluster_rec_forget(void)
{
	for (uint32_t i = 0; i < rs.n; i++) {
		json_decref(rs.r[i].applied);
		rs.r[i].applied = NULL;
		rs.r[i].rejected_rev = -1;
	}
}

/* True when @host (text) is one of this switch's uplink IPs. */
static bool
host_local(const char *host)
{
	bool local = false;

	pthread_mutex_lock(&dp.ctl_lock);
	for (uint32_t i = 0; dp.cfg && i < dp.cfg->n_ports; i++)
		if (dp.cfg->ports[i].role == CFG_ROLE_UPLINK) {
			struct cfg_ip a;

			if (cfg_ip_parse(host, &a) == 0 && cfg_ip_equal(&a, &dp.cfg->ports[i].ip))
				local = true;
		}
	pthread_mutex_unlock(&dp.ctl_lock);
	return local;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The smallest pqpn from 4096 up that no QP on @host (@hip) uses: among the
 * running QPs, the QPs etcd holds, and the pqpns this switch has written back
 * and not yet seen return through the watch (two QPs of one host that arrive
 * in one change must not be given the same one). 0 when none is free.
 */
static uint32_t
pqpn_free(const char *host, const struct cfg_ip *hip)
{
	uint32_t *used, n = 0, cap = rs.n + 1, pq = 4096;

	pthread_mutex_lock(&dp.ctl_lock);
	cap += dp.cfg ? dp.cfg->n_qps : 0;
	used = malloc(sizeof(*used) * cap);
	for (uint32_t i = 0; used && dp.cfg && i < dp.cfg->n_qps; i++)
		if (dp.cfg->qps[i].endpoint >= 0 &&
		    cfg_ip_equal(&dp.cfg->endpoints[dp.cfg->qps[i].endpoint].host, hip))
			used[n++] = dp.cfg->qps[i].pqpn;
	pthread_mutex_unlock(&dp.ctl_lock);
	if (!used)
		return 0;
	for (uint32_t i = 0; i < rs.n; i++) {
		const struct rec *q = &rs.r[i];
		json_t *qp = q->kind == K_QPS && q->want ? json_object_get(q->want, "pqpn") : NULL;
		uint32_t v = json_is_integer(qp) ? (uint32_t)json_integer_value(qp) : 0;
		char k2[512];
		const struct rec *e2;

		if (!v && q->kind == K_QPS && q->want && q->pqpn_rev == q->mod_rev)
			v = q->pqpn_asked;
		if (!v)
			continue;
		snprintf(k2, sizeof(k2), "%s/endpoints/%s/%s", rs.prefix, q->part[0], q->part[1]);
		e2 = rec_get(k2, false);
		if (e2 && e2->want && ip_eq(json_object_get(e2->want, "host"), host))
			used[n++] = v;
	}
	qsort(used, n, sizeof(*used), u32_cmp);
	for (uint32_t i = 0; i < n && used[i] <= pq; i++)
		if (used[i] == pq)
			pq++;
	free(used);
	return pq <= CFG_QPN_MAX ? pq : 0;
}

/*
 * A learned QP (a half: a peer by its vip alone; or an endpoint's QP1) is
 * applied here before its pqpn is written back: the source's switch forwards to the pqpn as soon as
 * it reads it, and its first frames must find the connection in force.
 */
static bool
learned_qp(const json_t *want)
{
	json_t *peer = json_object_get(want, "peer"), *vqpn = json_object_get(want, "vqpn");

	/* A half, or an endpoint's QP1 (RDMA-CM of a learning tenant), which a MAD finds the same way. */
	return (json_is_object(peer) && !json_object_get(peer, "vqpn")) ||
	       (json_is_integer(vqpn) && json_integer_value(vqpn) == 1);
}

/*
 * A QP without "pqpn": on this host, choose a free one and write it back to
 * etcd, at once, or (a learned QP) after the record with it is applied here:
 * then @r wants that record, and true says it joins the batch.
 */
static bool
pqpn_allocate(struct rec *r)
{
	char ekey[512];
	struct rec *e;
	const char *host;
	struct cfg_ip hip;
	uint32_t pq;

	if (r->pqpn_rev == r->mod_rev)
		return false;
	snprintf(ekey, sizeof(ekey), "%s/endpoints/%s/%s", rs.prefix, r->part[0], r->part[1]);
	e = rec_get(ekey, false);
	host = e && e->want ? json_string_value(json_object_get(e->want, "host")) : NULL;
	if (!host || cfg_ip_parse(host, &hip) || !host_local(host))
		return false; /* the owner's switch chooses it */
	r->pqpn_rev = r->mod_rev;
	r->pqpn_asked = 0;
	pq = pqpn_free(host, &hip);
	if (!pq) {
		reject(r, "no pqpn free on host %s", host);
		return false;
	}
	json_t *v = json_deep_copy(r->want);
	char *text;
	bool first = learned_qp(r->want);

	json_object_set_new(v, "pqpn", json_integer(pq));
	text = json_dumps(v, JSON_COMPACT);
	if (!text) {
		json_decref(v);
		return false;
	}
	/*
	 * Held as used from now on (pqpn_free()), and counted now, before etcd
	 * can hold it (the transaction thread takes back a failure).
	 */
	r->pqpn_asked = pq;
	pthread_mutex_lock(&dp_cluster_st.lock);
	dp_cluster_st.pqpn_allocated++;
	pthread_mutex_unlock(&dp_cluster_st.lock);
	if (first) {
		json_decref(r->want);
		r->want = v;
		free(r->write_back);
		r->write_back = text;
		return true;
	}
	if (dp_cluster_txn_queue(r->key, text, r->mod_rev) != 0) {
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.pqpn_allocated--;
		pthread_mutex_unlock(&dp_cluster_st.lock);
	}
	free(text);
	json_decref(v);
	return false;
}

/* The write-backs of learned QPs whose records are in force now (or were refused: none). */
static void
write_backs(void)
{
	for (uint32_t i = 0; i < rs.n; i++) {
		struct rec *r = &rs.r[i];

		if (!r->write_back)
			continue;
		if (r->applied && json_equal(r->applied, r->want)) {
			if (dp_cluster_txn_queue(r->key, r->write_back, r->mod_rev) == 0)
				r->write_back = (free(r->write_back), NULL);
		} else {
			r->write_back = (free(r->write_back), NULL);
			pthread_mutex_lock(&dp_cluster_st.lock);
			dp_cluster_st.pqpn_allocated--;
			pthread_mutex_unlock(&dp_cluster_st.lock);
		}
	}
}

/*
 * True when @r is a QP whose peer etcd does not hold as a record that can be
 * applied yet: the peer's key is absent (a pair is often written in two
 * puts), or the peer has no pqpn (its owner is choosing one, or will once its
 * switch sees it).  Such a QP cannot be applied before its peer; it waits,
 * and is not counted as rejected.
 */
static bool
peer_waiting(const struct rec *r)
{
	json_t *peer = r->kind == K_QPS && r->want ? json_object_get(r->want, "peer") : NULL;
	json_t *vip = json_object_get(peer, "vip"), *vqpn = json_object_get(peer, "vqpn");
	char key[512], ips[CFG_IP_STRLEN];
	const struct rec *q;
	struct cfg_ip ip;

	if (!json_is_string(vip) || !(json_is_integer(vqpn) || json_is_string(vqpn)) ||
	    cfg_ip_parse(json_string_value(vip), &ip) || cfg_ip_format(&ip, ips, sizeof(ips)) < 0)
		return false;
	/* The key names the vip canonically and the vqpn in decimal; the record may give it as a "0x" string. */
	snprintf(key, sizeof(key), "%s/qps/%s/%s/%lld", rs.prefix, r->part[0], ips,
		 json_is_integer(vqpn) ? (long long)json_integer_value(vqpn) :
		 strtoll(json_string_value(vqpn), NULL, 0));
	q = rec_get(key, false);
	return !q || !q->want || !json_object_get(q->want, "pqpn");
}

/* One entry of a batch: record @i put (del false) or deleted. */
struct entry {
	uint32_t i;
	bool del, out;
};

/* The entry that "put.qps[3]" or "delete.mrs[0]" in @msg names, or -1. */
static int
entry_named(const struct entry *e, uint32_t n, const char *msg)
{
	for (int del = 0; del < 2; del++)
		for (int k = 0; k < K_N; k++) {
			char pat[32];
			const char *p;
			unsigned idx, seen = 0;

			snprintf(pat, sizeof(pat), "%s.%s[", del ? "delete" : "put", kind_names[k]);
			if (!(p = strstr(msg, pat)) || sscanf(p + strlen(pat), "%u", &idx) != 1)
				continue;
			for (uint32_t j = 0; j < n; j++) {
				if (e[j].out || e[j].del != (bool)del || rs.r[e[j].i].kind != k)
					continue;
				if (seen++ == idx)
					return (int)j;
			}
		}
	return -1;
}

/*
 * The record of the map that an error names by its key, as the checks
 * between records do ("request: qps{blue 192.168.1.10 17}.peer: ..."), or
 * NULL.
 */
static struct rec *
rec_named(const char *msg)
{
	char kind[16], a[128], b[128], c[32], key[512];
	const char *p = strstr(msg, ": ");
	int k;

	if (!p || sscanf(p + 2, "%15[a-z]{%127[^ }] %127[^ }] %31[^ }]}", kind, a, b, c) != 4)
		return NULL;
	for (k = 0; k < K_N && strcmp(kind, kind_names[k]); k++)
		;
	if (k != K_QPS && k != K_MRS)
		return NULL;
	snprintf(key, sizeof(key), "%s/%s/%s/%s/%s", rs.prefix, kind, a, b, c);
	return rec_get(key, false);
}

/* The put of the batch whose record an error names by its key, or -1. */
static int
entry_keyed(const struct entry *e, uint32_t n, const char *msg)
{
	const struct rec *r = rec_named(msg);

	for (uint32_t j = 0; r && j < n; j++)
		if (!e[j].out && !e[j].del && e[j].i == (uint32_t)(r - rs.r))
			return (int)j;
	return -1;
}

/* The record of the map an error names by its key when it is applied and not in the batch; or -1. */
static int
running_named(const struct entry *e, uint32_t n, const char *msg)
{
	const struct rec *r = rec_named(msg);

	if (!r || !r->applied)
		return -1;
	for (uint32_t j = 0; j < n; j++)
		if (e[j].i == (uint32_t)(r - rs.r))
			return -1;
	return (int)(r - rs.r);
}

/*
 * Forget the records etcd deleted and the running configuration no longer
 * holds, so that the map follows etcd's size: keys put and deleted leave
 * nothing behind.  (A key etcd holds with a bad value stays, so that its
 * rejection is counted once.)  Linear, as a reconcile is.
 */
static void
rec_compact(void)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < rs.n; i++) {
		struct rec *r = &rs.r[i];

		if (r->mod_rev != MOD_DELETED || r->applied) {
			if (n != i)
				rs.r[n] = *r;
			n++;
			continue;
		}
		json_object_del(rs.idx, r->key);
		free(r->key);
		for (int p = 0; p < 3; p++)
			free(r->part[p]);
	}
	if (n == rs.n)
		return;
	rs.n = n;
	for (uint32_t i = 0; i < n; i++)
		json_object_set_new(rs.idx, rs.r[i].key, json_integer(i));
	if (rs.cap > 256 && n < rs.cap / 4) {
		struct rec *r = realloc(rs.r, sizeof(*r) * (rs.cap / 2));

		if (r) {
			rs.r = r;
			rs.cap /= 2;
		}
	}
}

void
dp_cluster_rec_reconcile(void)
{
	struct entry *e = malloc(sizeof(*e) * (2 * rs.n + 1));
	uint32_t n = 0, left;

	if (!e)
		return;
	for (uint32_t i = 0; i < rs.n; i++) {
		struct rec *r = &rs.r[i];

		if (!r->want && r->applied) {
			e[n++] = (struct entry){ i, true, false };
		} else if (r->want && !json_equal(r->want, r->applied)) {
			if (r->kind == K_QPS && !json_object_get(r->want, "pqpn") && !pqpn_allocate(r))
				continue;
			e[n++] = (struct entry){ i, false, false };
		}
	}
	for (left = n; left;) {
		json_t *req = json_object(), *put = json_object(), *del = json_object();
		struct dp_delta_report rep;
		char *text;
		int rc;

		for (int k = 0; k < K_N; k++) {
			json_t *pa = json_array(), *da = json_array();

			for (uint32_t j = 0; j < n; j++) {
				struct rec *r = &rs.r[e[j].i];

				if (e[j].out || r->kind != k)
					continue;
				if (!e[j].del) {
					json_array_append(pa, r->want);
					continue;
				}
				json_t *key = json_object();

				json_object_set(key, k == K_TENANTS ? "name" : "tenant",
						json_object_get(r->applied, k == K_TENANTS ? "name" : "tenant"));
				if (k != K_TENANTS)
					json_object_set(key, "vip", json_object_get(r->applied, "vip"));
				if (k == K_QPS)
					json_object_set(key, "vqpn", json_object_get(r->applied, "vqpn"));
				if (k == K_MRS)
					json_object_set(key, "rkey", json_object_get(r->applied, "rkey"));
				json_array_append_new(da, key);
			}
			json_object_set_new(put, kind_names[k], pa);
			json_object_set_new(del, kind_names[k], da);
		}
		json_object_set_new(req, "put", put);
		json_object_set_new(req, "delete", del);
		text = json_dumps(req, JSON_COMPACT);
		json_decref(req);
		if (!text)
			break;
		rc = dp_delta_apply(text, strlen(text), &rep);
		free(text);
		if (rc == 0) {
			for (uint32_t j = 0; j < n; j++) {
				struct rec *r = &rs.r[e[j].i];

				if (e[j].out)
					continue;
				json_decref(r->applied);
				r->applied = e[j].del ? NULL : json_incref(r->want);
				r->waiting = false;
			}
			pthread_mutex_lock(&dp_cluster_st.lock);
			dp_cluster_st.applied += left;
			pthread_mutex_unlock(&dp_cluster_st.lock);
			dp_delta_report_free(&rep);
			break;
		}
		/*
		 * Leave out what the errors name; with nothing named, all of it.
		 * Every error is matched against the batch as it was sent before
		 * any entry is left out ("put.qps[3]" counts the entries sent).
		 */
		uint32_t named = 0;
		int *hit = malloc(sizeof(*hit) * (rep.rr.errs.n + 1));

		for (uint32_t m = 0; hit && m < rep.rr.errs.n; m++) {
			hit[m] = entry_named(e, n, rep.rr.errs.msg[m]);
			if (hit[m] < 0)
				hit[m] = entry_keyed(e, n, rep.rr.errs.msg[m]);
		}
		for (uint32_t m = 0; hit && m < rep.rr.errs.n; m++) {
			int j = hit[m];

			if (j < 0)
				continue;
			/* Half of a pair whose other half etcd does not hold yet is not bad: it waits. */
			if (strstr(rep.rr.errs.msg[m], ".peer: ") && peer_waiting(&rs.r[e[j].i]))
				rs.r[e[j].i].waiting = true;
			else
				reject(&rs.r[e[j].i], "%s", rep.rr.errs.msg[m]);
			named += !e[j].out;
			e[j].out = true;
		}
		free(hit);
		/*
		 * A running record that the batch breaks (a QP whose peer etcd
		 * deleted) is taken out of the running configuration too, so that
		 * nothing forwards under a mapping etcd no longer holds; it stays
		 * pending and comes back once it is valid again.
		 */
		uint32_t suspended = 0;

		for (uint32_t m = 0; !named && m < rep.rr.errs.n; m++) {
			int j = running_named(e, n, rep.rr.errs.msg[m]);

			if (j >= 0) {
				e[n++] = (struct entry){ (uint32_t)j, true, false };
				suspended++;
			}
		}
		if (!named && !suspended)
			for (uint32_t j = 0; j < n; j++)
				if (!e[j].out) {
					reject(&rs.r[e[j].i], "%s", rep.rr.errs.n ? rep.rr.errs.msg[0] : "rejected");
					e[j].out = true;
				}
		left = 0;
		for (uint32_t j = 0; j < n; j++)
			left += !e[j].out;
		dp_delta_report_free(&rep);
	}
	free(e);
	write_backs();

	uint64_t waiting = 0;

	rec_compact();
	for (uint32_t i = 0; i < rs.n; i++)
		waiting += rs.r[i].waiting && rs.r[i].want && !json_equal(rs.r[i].want, rs.r[i].applied);
	pthread_mutex_lock(&dp_cluster_st.lock);
	dp_cluster_st.waiting = waiting;
	dp_cluster_st.records = rs.n;
	pthread_mutex_unlock(&dp_cluster_st.lock);
}
