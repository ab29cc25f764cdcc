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

#include "dp.h"
#include "dp_cluster_int.h"
#include "dp_delta.h"

enum { K_TENANTS, K_ENDPOINTS, K_QPS, K_MRS, K_N };
static const char *const kind_names[K_N] = { "tenants", "endpoints", "qps", "mrs" };
static const unsigned kind_parts[K_N] = { 1, 2, 3, 3 };

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
		free(r->key);
		for (int p = 0; p < 3; p++)
			free(r->part[p]);
		return NULL;
	}
	json_object_set_new(rs.idx, key, json_integer(rs.n));
	rs.n++;
	return r;
}

static bool
num_eq(json_t *v, const char *s)
{
	unsigned long long a = strtoull(s, NULL, 0);

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
		r->mod_rev = -2;
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
		if (!rs.r[i].seen && rs.r[i].want) {
			json_decref(rs.r[i].want);
			rs.r[i].want = NULL;
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

/* A QP without "pqpn": on this host, choose a free one and write it back to etcd. */
static void
pqpn_allocate(struct rec *r)
{
	char ekey[512];
	struct rec *e;
	const char *host;
	struct cfg_ip hip;
	uint32_t pq;

	if (r->pqpn_rev == r->mod_rev)
		return;
	snprintf(ekey, sizeof(ekey), "%s/endpoints/%s/%s", rs.prefix, r->part[0], r->part[1]);
	e = rec_get(ekey, false);
	host = e && e->want ? json_string_value(json_object_get(e->want, "host")) : NULL;
	if (!host || cfg_ip_parse(host, &hip) || !host_local(host))
		return; /* the owner's switch chooses it */
	r->pqpn_rev = r->mod_rev;
	r->pqpn_asked = 0;
	pq = pqpn_free(host, &hip);
	if (!pq) {
		reject(r, "no pqpn free on host %s", host);
		return;
	}
	json_t *v = json_deep_copy(r->want);
	char *text;

	json_object_set_new(v, "pqpn", json_integer(pq));
	text = json_dumps(v, JSON_COMPACT);
	/*
	 * Sent by the transaction thread; held as used from now on (pqpn_free()),
	 * and counted now, before etcd can hold it (the thread takes back a failure).
	 */
	if (text && dp_cluster_txn_queue(r->key, text, r->mod_rev) == 0) {
		r->pqpn_asked = pq;
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.pqpn_allocated++;
		pthread_mutex_unlock(&dp_cluster_st.lock);
	}
	free(text);
	json_decref(v);
}

/*
 * True when @r is a QP whose peer etcd holds without a pqpn yet: the peer's
 * owner is choosing one (or will, once its switch sees it), so @r cannot be
 * applied before it and is not counted as rejected.
 */
static bool
peer_pending(const struct rec *r)
{
	json_t *peer = r->kind == K_QPS && r->want ? json_object_get(r->want, "peer") : NULL;
	json_t *vip = json_object_get(peer, "vip"), *vqpn = json_object_get(peer, "vqpn");
	char key[512];
	const struct rec *q;

	if (!json_is_string(vip) || !(json_is_integer(vqpn) || json_is_string(vqpn)))
		return false;
	/* The key names the vqpn in decimal; the record may give it as a "0x" string. */
	snprintf(key, sizeof(key), "%s/qps/%s/%s/%lld", rs.prefix, r->part[0], json_string_value(vip),
		 json_is_integer(vqpn) ? (long long)json_integer_value(vqpn) :
		 strtoll(json_string_value(vqpn), NULL, 0));
	q = rec_get(key, false);
	return q && q->want && !json_object_get(q->want, "pqpn");
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
 * The record of the map that an error names as a running record, as in
 * "qps{blue 192.168.1.10 17}.peer: ...", when it is applied and not in the
 * batch yet; or -1.
 */
static int
running_named(const struct entry *e, uint32_t n, const char *msg)
{
	char kind[16], a[128], b[128], c[32], key[512];
	const char *p = strstr(msg, ": ");
	int k;
	struct rec *r;

	if (!p || sscanf(p + 2, "%15[a-z]{%127[^ }] %127[^ }] %31[^ }]}", kind, a, b, c) != 4)
		return -1;
	for (k = 0; k < K_N && strcmp(kind, kind_names[k]); k++)
		;
	if (k != K_QPS && k != K_MRS)
		return -1;
	snprintf(key, sizeof(key), "%s/%s/%s/%s/%s", rs.prefix, kind, a, b, c);
	r = rec_get(key, false);
	if (!r || !r->applied)
		return -1;
	for (uint32_t j = 0; j < n; j++)
		if (e[j].i == (uint32_t)(r - rs.r))
			return -1;
	return (int)(r - rs.r);
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
			if (r->kind == K_QPS && !json_object_get(r->want, "pqpn")) {
				pqpn_allocate(r);
				continue;
			}
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
			}
			pthread_mutex_lock(&dp_cluster_st.lock);
			dp_cluster_st.applied += left;
			pthread_mutex_unlock(&dp_cluster_st.lock);
			dp_delta_report_free(&rep);
			break;
		}
		/* Leave out what the errors name; with nothing named, all of it. */
		uint32_t named = 0;

		for (uint32_t m = 0; m < rep.rr.errs.n; m++) {
			int j = entry_named(e, n, rep.rr.errs.msg[m]);

			if (j < 0)
				continue;
			/* Half of a pair whose other half waits for its owner's pqpn is not bad: it waits too. */
			if (!peer_pending(&rs.r[e[j].i]))
				reject(&rs.r[e[j].i], "%s", rep.rr.errs.msg[m]);
			e[j].out = true;
			named++;
		}
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
}
