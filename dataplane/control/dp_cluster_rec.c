/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's record map (dp_cluster_rec.h): every key etcd holds
 * under the prefix, with the value etcd holds (want) and the value the
 * running configuration holds from it (applied).  What changed in etcd since
 * the last reconcile is listed (rs.dirty), so a reconcile (dp_cluster_apply.c)
 * looks at what changed, not at every record.
 *
 * A record left out of the running configuration (rejected, or waiting for
 * another record) is pending; it waits on names of what can make it valid
 * again (rs.subs: its tenant, its endpoint, its peer QP, the QPs of its host
 * when its pqpn collided, any delete when its error named no field) and is
 * tried again only when a change touches one of them, so records that stay
 * bad cost a later change nothing.  Entries of keys etcd deleted and the
 * running configuration no longer holds are removed with their index.
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_cluster_etcd.h"
#include "dp_cluster_rec.h"
#include "dp_cluster_rec_int.h"

const char *const dp_rec_kind_names[K_N] = { "tenants", "endpoints", "qps", "mrs" };
static const unsigned kind_parts[K_N] = { 1, 2, 3, 3 };
#define kind_names dp_rec_kind_names

struct rec_map rs;

void
dp_cluster_rec_init(const char *prefix)
{
	rs.prefix = strdup(prefix);
	rs.idx = json_object();
	rs.subs = json_object();
	rs.all = true;
}

static void
rec_release(struct rec *r)
{
	dp_rec_pending(r, false);
	free(r->key);
	for (int p = 0; p < 3; p++)
		free(r->part[p]);
	json_decref(r->want);
	json_decref(r->applied);
	free(r->write_back);
}

void
dp_cluster_rec_free(void)
{
	for (uint32_t i = 0; i < rs.n; i++)
		rec_release(&rs.r[i]);
	free(rs.r);
	free(rs.prefix);
	free(rs.dirty);
	json_decref(rs.idx);
	json_decref(rs.subs);
	memset(&rs, 0, sizeof(rs));
}

void
dp_rec_reject(struct rec *r, const char *fmt, ...)
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

struct rec *
dp_rec_get(const char *key, bool make)
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
		dp_rec_reject(r, "not a record key (PREFIX/tenants/T, endpoints/T/VIP, qps/T/VIP/VQPN, mrs/T/VIP/RKEY)");
		goto bad;
	}
	for (unsigned p = 1; p < kind_parts[kind]; p++)
		if (!key_part_canonical(kind, p, r->part[p])) {
			r->mod_rev = 0;
			dp_rec_reject(r, "not a canonical record key: %s \"%.64s\" (a vip as the record writes it, a %s in "
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
	memset(r, 0, sizeof(*r));
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

bool
dp_rec_ip_eq(json_t *v, const char *s)
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
	if (!dp_rec_ip_eq(json_object_get(v, "vip"), r->part[1]))
		return false;
	if (r->kind == K_QPS)
		return num_eq(json_object_get(v, "vqpn"), r->part[2]);
	return r->kind == K_ENDPOINTS || num_eq(json_object_get(v, "rkey"), r->part[2]);
}


/* @r changed in etcd: the next reconcile looks at it. */
static void
rec_dirty(struct rec *r)
{
	if (r->dirty)
		return;
	if (rs.n_dirty == rs.cap_dirty) {
		uint32_t cap = rs.cap_dirty ? rs.cap_dirty * 2 : 256;
		uint32_t *d = realloc(rs.dirty, sizeof(*d) * cap);

		if (!d) {
			rs.all = true; /* every record is looked at instead */
			return;
		}
		rs.dirty = d;
		rs.cap_dirty = cap;
	}
	r->dirty = true;
	rs.dirty[rs.n_dirty++] = (uint32_t)(r - rs.r);
}

void
dp_cluster_rec_put(const char *key, const char *val, size_t len, int64_t mod_rev)
{
	struct rec *r = dp_rec_get(key, true);
	json_error_t je;
	json_t *v;

	if (!r)
		return;
	r->seen = true;
	if (r->mod_rev == mod_rev && r->want)
		return;
	rec_dirty(r);
	r->mod_rev = mod_rev;
	r->waiting = false;
	json_decref(r->want);
	r->want = NULL;
	v = json_loadb(val, len, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		dp_rec_reject(r, "not JSON: %d:%d: %s", je.line, je.column, je.text);
		return;
	}
	if (!json_is_object(v) || !key_matches(r, v)) {
		dp_rec_reject(r, "the value is not the %s record its key names", kind_names[r->kind]);
		json_decref(v);
		return;
	}
	r->want = v;
}

static void
rec_gone(struct rec *r)
{
	rec_dirty(r);
	json_decref(r->want);
	r->want = NULL;
	r->mod_rev = MOD_DELETED;
	r->waiting = false;
}

void
dp_cluster_rec_del(const char *key)
{
	struct rec *r = dp_rec_get(key, false);

	if (r)
		rec_gone(r);
}

void
dp_cluster_rec_mark(void)
{
	for (uint32_t i = 0; i < rs.n; i++)
		rs.r[i].seen = false;
	rs.all = true;
}

void
dp_cluster_rec_sweep(void)
{
	for (uint32_t i = 0; i < rs.n; i++)
		if (!rs.r[i].seen && rs.r[i].mod_rev != MOD_DELETED)
			rec_gone(&rs.r[i]);
}

void
dp_cluster_rec_forget(void)
{
	for (uint32_t i = 0; i < rs.n; i++) {
		json_decref(rs.r[i].applied);
		rs.r[i].applied = NULL;
		rs.r[i].rejected_rev = -1;
	}
	rs.all = true;
}

struct rec *
dp_rec_endpoint(const struct rec *r)
{
	char key[512];

	if (r->kind == K_TENANTS)
		return NULL;
	snprintf(key, sizeof(key), "%s/endpoints/%s/%s", rs.prefix, r->part[0], r->part[1]);
	return dp_rec_get(key, false);
}

bool
dp_rec_needs(const struct rec *r)
{
	return r->want ? !json_equal(r->want, r->applied) : r->applied != NULL;
}

/* "H:<host>" for the host IP in @host (JSON text), canonical; false when it is not one. */
static bool
host_name(json_t *host, char *buf, size_t n)
{
	char ips[CFG_IP_STRLEN];
	struct cfg_ip ip;

	if (!json_is_string(host) || cfg_ip_parse(json_string_value(host), &ip) ||
	    cfg_ip_format(&ip, ips, sizeof(ips)) < 0)
		return false;
	snprintf(buf, n, "H:%s", ips);
	return true;
}

static void
ev_add(json_t *ev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
ev_add(json_t *ev, const char *fmt, ...)
{
	char name[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	json_object_set_new(ev, name, json_null());
}

/*
 * The names a change of @r touches, for the records that wait on them: its
 * tenant (and "T*", every tenant record: a VNI freed), its endpoint and the
 * QPs of the host it was or will be on (pqpns freed or taken), its QP (the
 * peers that wait for it), a QP deleted from its tenant (max_qps), and any
 * delete.
 */
void
dp_rec_events(const struct rec *r, json_t *ev)
{
	const char *t = r->part[0];
	char h[CFG_IP_STRLEN + 8];

	if (r->kind == K_TENANTS) {
		ev_add(ev, "T:%s", t);
		ev_add(ev, "T*");
	} else if (r->kind == K_ENDPOINTS) {
		ev_add(ev, "E:%s/%s", t, r->part[1]);
		if (host_name(json_object_get(r->want, "host"), h, sizeof(h)))
			ev_add(ev, "%s", h);
		if (host_name(json_object_get(r->applied, "host"), h, sizeof(h)))
			ev_add(ev, "%s", h);
	} else if (r->kind == K_QPS) {
		const struct rec *e = dp_rec_endpoint(r);

		ev_add(ev, "Q:%s/%s/%s", t, r->part[1], r->part[2]);
		if (e && host_name(json_object_get(e->want, "host"), h, sizeof(h)))
			ev_add(ev, "%s", h);
		if (e && host_name(json_object_get(e->applied, "host"), h, sizeof(h)))
			ev_add(ev, "%s", h);
		if (!r->want)
			ev_add(ev, "QT:%s", t);
	}
	if (!r->want)
		ev_add(ev, "DEL");
}

/* The names @r waits on, at most REC_SUBS (see dp_rec_events() for who touches them). */
static unsigned
subs_of(const struct rec *r, char names[REC_SUBS][600])
{
	json_t *peer = json_object_get(r->want, "peer");
	json_t *pvip = json_object_get(peer, "vip"), *pvqpn = json_object_get(peer, "vqpn");
	const char *t = r->part[0];
	char ips[CFG_IP_STRLEN];
	struct cfg_ip ip;
	unsigned n = 0;

	if (r->kind == K_TENANTS) {
		snprintf(names[n++], 600, "T*");
	} else {
		snprintf(names[n++], 600, "T:%s", t);
		if (r->kind != K_ENDPOINTS)
			snprintf(names[n++], 600, "E:%s/%s", t, r->part[1]);
	}
	if (r->kind == K_QPS && json_is_string(pvip) && !cfg_ip_parse(json_string_value(pvip), &ip) &&
	    cfg_ip_format(&ip, ips, sizeof(ips)) >= 0 && (json_is_integer(pvqpn) || json_is_string(pvqpn)))
		snprintf(names[n++], 600, "Q:%s/%s/%lld", t, ips, json_is_integer(pvqpn) ?
			 (long long)json_integer_value(pvqpn) : strtoll(json_string_value(pvqpn), NULL, 0));
	if (!strcmp(r->field, "pqpn")) {
		const struct rec *e = dp_rec_endpoint(r);

		if (e && host_name(json_object_get(e->want, "host"), names[n], 600))
			n++;
	} else if (!strcmp(r->field, "tenant")) {
		snprintf(names[n++], 600, "QT:%s", t);
	} else if (!r->field[0] && !r->waiting && n < REC_SUBS) {
		/* An error that named no field (a limit of the switch): anything freed may help. */
		snprintf(names[n++], 600, "DEL");
	}
	return n;
}

void
dp_rec_pending(struct rec *r, bool out)
{
	char names[REC_SUBS][600];
	unsigned n = 0;

	for (unsigned s = 0; s < REC_SUBS && r->subs[s]; s++) {
		json_t *set = json_object_get(rs.subs, r->subs[s]);

		json_object_del(set, r->key);
		if (set && !json_object_size(set))
			json_object_del(rs.subs, r->subs[s]);
		free(r->subs[s]);
		r->subs[s] = NULL;
	}
	if (out && r->want)
		n = subs_of(r, names);
	for (unsigned s = 0; s < n; s++) {
		json_t *set = json_object_get(rs.subs, names[s]);

		if (!set)
			json_object_set_new(rs.subs, names[s], set = json_object());
		json_object_set_new(set, r->key, json_null());
		r->subs[s] = strdup(names[s]);
	}
}

/* Remove record @i: the last one takes its place. */
static void
rec_remove(uint32_t i)
{
	struct rec *r = &rs.r[i];

	json_object_del(rs.idx, r->key);
	rec_release(r);
	if (i != --rs.n) {
		rs.r[i] = rs.r[rs.n];
		json_object_set_new(rs.idx, rs.r[i].key, json_integer(i));
	}
}

void
dp_rec_compact(const uint32_t *i, uint32_t n)
{
	char **gone = malloc(sizeof(*gone) * (n + 1));
	uint32_t k = 0;

	if (!gone)
		return;
	/* By key: removing one moves another. */
	for (uint32_t j = 0; j < n; j++) {
		struct rec *r = &rs.r[i[j]];

		if (r->mod_rev == MOD_DELETED && !r->applied && !r->dirty && !r->cand)
			gone[k++] = r->key;
	}
	for (uint32_t j = 0; j < k; j++) {
		json_t *x = json_object_get(rs.idx, gone[j]);

		if (x)
			rec_remove((uint32_t)json_integer_value(x));
	}
	free(gone);
	/* Many records gone at once (a prefix deleted): give their memory back to the system. */
	if (k >= 1024)
		malloc_trim(0);
	if (rs.cap > 256 && rs.n < rs.cap / 4) {
		/* The array and the index shrink too (a jansson object never gives its table back). */
		struct rec *r = realloc(rs.r, sizeof(*r) * (rs.cap / 2));
		json_t *idx = json_object();

		if (r) {
			rs.r = r;
			rs.cap /= 2;
		}
		for (uint32_t j = 0; idx && j < rs.n; j++)
			json_object_set_new(idx, rs.r[j].key, json_integer(j));
		if (idx) {
			json_decref(rs.idx);
			rs.idx = idx;
		}
	}
}
