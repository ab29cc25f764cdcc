/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's ground floor (dp_cluster_int.h): its counters and last
 * error, and its connection for pqpn transactions.  Everything else of the
 * follower (the watch and apply threads in dp_cluster.c, the record map in
 * dp_cluster_rec.c, the transaction thread in dp_cluster_txn.c) stands on
 * this file and calls nothing above it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "dp_cluster_etcd.h"
/* cluster/ is not among the data plane library's include directories: it is linked only where configured. */
#include "../../cluster/etcd.h"

struct dp_cluster_stats dp_cluster_st = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Transactions, from the transaction thread; on the member the watch uses (dp_cluster_st.member). */
static struct etcd_conn txn;

double
dp_cluster_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
dp_cluster_error(const char *fmt, ...)
{
	char msg[sizeof(dp_cluster_st.last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&dp_cluster_st.lock);
	memcpy(dp_cluster_st.last_error, msg, sizeof(msg));
	pthread_mutex_unlock(&dp_cluster_st.lock);
	/* Outside the lock: a stderr that blocks (a full pipe) must not stop /roce/cluster answering. */
	fprintf(stderr, "etcd: %s\n", msg);
}

char *
dp_b64_enc(const char *s, size_t n)
{
	return etcd_b64_enc(s, n);
}

char *
dp_b64_dec(const char *s, size_t *n)
{
	return etcd_b64_dec(s, n);
}

int
dp_cluster_txn_conn_init(const char *urls, const char *cacert, const char *cert, const char *key,
			 volatile bool *stop)
{
	return etcd_conn_init(&txn, urls, cacert, cert, key, stop);
}

void
dp_cluster_txn_conn_free(void)
{
	etcd_conn_free(&txn);
}

int
dp_cluster_txn_put(const char *key, const char *val, int64_t mod_rev)
{
	char *k = dp_b64_enc(key, strlen(key)), *v = dp_b64_enc(val, strlen(val)), *req = NULL, *body = NULL;
	json_t *o;
	int rc = -1;

	pthread_mutex_lock(&dp_cluster_st.lock);
	txn.cur = dp_cluster_st.member;
	pthread_mutex_unlock(&dp_cluster_st.lock);
	if (k && v && asprintf(&req, "{\"compare\": [{\"key\": \"%s\", \"target\": \"MOD\", \"result\": \"EQUAL\", "
			       "\"mod_revision\": \"%lld\"}], \"success\": [{\"request_put\": {\"key\": \"%s\", "
			       "\"value\": \"%s\", \"ignore_lease\": true}}]}", k, (long long)mod_rev, k, v) >= 0) {
		if (etcd_post(&txn, "/v3/kv/txn", req, &body, 5, NULL, NULL) == 0 && (o = json_loads(body, 0, NULL))) {
			rc = json_is_true(json_object_get(o, "succeeded")) ? 0 : -1;
			json_decref(o);
		} else if (!body) {
			dp_cluster_error("txn: %s", txn.err);
		}
	}
	free(k);
	free(v);
	free(req);
	free(body);
	return rc;
}

/* POST @req to @path on the transactions' member; the answer parsed, or NULL. */
static json_t *
txn_post(const char *path, const char *req)
{
	char *body = NULL;
	json_t *o = NULL;

	pthread_mutex_lock(&dp_cluster_st.lock);
	txn.cur = dp_cluster_st.member;
	pthread_mutex_unlock(&dp_cluster_st.lock);
	if (etcd_post(&txn, path, req, &body, 5, NULL, NULL) == 0)
		o = json_loads(body, 0, NULL);
	else if (!body)
		dp_cluster_error("%s: %s", path, txn.err);
	free(body);
	return o;
}

/* etcd's gateway writes 64-bit numbers as strings. */
static int64_t
json_i64(const json_t *v)
{
	return json_is_string(v) ? strtoll(json_string_value(v), NULL, 10) : json_is_integer(v) ? json_integer_value(v) : 0;
}

int64_t
dp_cluster_lease_grant(long ttl_s)
{
	char req[64];
	json_t *o;
	int64_t id = -1;

	snprintf(req, sizeof(req), "{\"TTL\": %ld}", ttl_s);
	if ((o = txn_post("/v3/lease/grant", req))) {
		if (json_i64(json_object_get(o, "ID")) > 0)
			id = json_i64(json_object_get(o, "ID"));
		json_decref(o);
	}
	return id;
}

int
dp_cluster_lease_keepalive(int64_t id)
{
	char req[64];
	json_t *o, *r;
	int rc = -1;

	snprintf(req, sizeof(req), "{\"ID\": \"%lld\"}", (long long)id);
	if ((o = txn_post("/v3/lease/keepalive", req))) {
		/* One answer of the stream: {"result": {"ID", "TTL"}}; no TTL when the lease is gone. */
		r = json_object_get(o, "result");
		rc = json_i64(json_object_get(r ? r : o, "TTL")) > 0 ? 0 : 1;
		json_decref(o);
	}
	return rc;
}

int
dp_cluster_txn_create(const char *key, const char *val, int64_t lease)
{
	char *k = dp_b64_enc(key, strlen(key)), *v = dp_b64_enc(val, strlen(val)), *req = NULL;
	json_t *o;
	int rc = -1;

	if (k && v && asprintf(&req, "{\"compare\": [{\"key\": \"%s\", \"target\": \"CREATE\", \"result\": "
			       "\"EQUAL\", \"create_revision\": \"0\"}], \"success\": [{\"request_put\": {\"key\": "
			       "\"%s\", \"value\": \"%s\", \"lease\": \"%lld\"}}]}", k, k, v, (long long)lease) >= 0 &&
	    (o = txn_post("/v3/kv/txn", req))) {
		rc = json_is_true(json_object_get(o, "succeeded")) ? 0 : 1;
		json_decref(o);
	}
	free(k);
	free(v);
	free(req);
	return rc;
}

/* @key deleted (@val NULL) or @val put there, keeping the lease, while @key is on @lease. */
static int
txn_on_lease(const char *key, const char *val, int64_t lease)
{
	char *k = dp_b64_enc(key, strlen(key)), *v = val ? dp_b64_enc(val, strlen(val)) : NULL, *req = NULL, *op = NULL;
	json_t *o;
	int rc = -1;

	/* Only while the record is still on @lease: a record someone else wrote since stays. */
	if (k && (!val || v) &&
	    (val ? asprintf(&op, "{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\", \"ignore_lease\": true}}", k,
			    v) : asprintf(&op, "{\"request_delete_range\": {\"key\": \"%s\"}}", k)) >= 0 &&
	    asprintf(&req, "{\"compare\": [{\"key\": \"%s\", \"target\": \"LEASE\", \"result\": \"EQUAL\", "
		     "\"lease\": \"%lld\"}], \"success\": [%s]}", k, (long long)lease, op) >= 0 &&
	    (o = txn_post("/v3/kv/txn", req))) {
		rc = json_is_true(json_object_get(o, "succeeded")) ? 0 : 1;
		json_decref(o);
	}
	free(k);
	free(v);
	free(op);
	free(req);
	return rc;
}

int
dp_cluster_txn_delete(const char *key, int64_t lease)
{
	return txn_on_lease(key, NULL, lease);
}

int
dp_cluster_txn_replace(const char *key, const char *val, int64_t lease)
{
	return txn_on_lease(key, val, lease);
}

/* One compare and one put of a batch, as JSON text appended to @cmp and @put. */
static int
batch_op(const struct dp_txn_op *op, char **cmp, char **put)
{
	char *k = dp_b64_enc(op->key, strlen(op->key)), *v = dp_b64_enc(op->val, strlen(op->val)), *c = NULL, *q = NULL;
	int rc = -1;

	if (!k || !v)
		goto out;
	if (op->lease ? asprintf(&c, "{\"key\": \"%s\", \"target\": \"CREATE\", \"result\": \"EQUAL\", "
				 "\"create_revision\": \"0\"}", k) < 0 :
			asprintf(&c, "{\"key\": \"%s\", \"target\": \"MOD\", \"result\": \"EQUAL\", "
				 "\"mod_revision\": \"%lld\"}", k, (long long)op->mod_rev) < 0)
		goto out;
	if (op->lease ? asprintf(&q, "{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\", \"lease\": \"%lld\"}}",
				 k, v, (long long)op->lease) < 0 :
			asprintf(&q, "{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\", \"ignore_lease\": true}}",
				 k, v) < 0)
		goto out;
	rc = 0;
	for (int i = 0; i < 2 && rc == 0; i++) {
		char **acc = i ? put : cmp, *add = i ? q : c, *n = NULL;

		if (asprintf(&n, "%s%s%s", *acc ? *acc : "", *acc ? ", " : "", add) < 0)
			rc = -1;
		free(*acc);
		*acc = n;
	}
out:
	free(k);
	free(v);
	free(c);
	free(q);
	return rc;
}

int
dp_cluster_txn_batch(const struct dp_txn_op *ops, unsigned n)
{
	char *cmp = NULL, *put = NULL, *req = NULL;
	json_t *o;
	int rc = -1;

	for (unsigned i = 0; i < n; i++)
		if (batch_op(&ops[i], &cmp, &put) < 0)
			goto out;
	if (asprintf(&req, "{\"compare\": [%s], \"success\": [%s]}", cmp, put) >= 0 && (o = txn_post("/v3/kv/txn", req))) {
		rc = json_is_true(json_object_get(o, "succeeded")) ? 0 : 1;
		json_decref(o);
	}
out:
	free(cmp);
	free(put);
	free(req);
	return rc;
}

int
dp_cluster_lease_revoke(int64_t id)
{
	char req[64], *body = NULL;
	int rc;

	snprintf(req, sizeof(req), "{\"ID\": \"%lld\"}", (long long)id);
	pthread_mutex_lock(&dp_cluster_st.lock);
	txn.cur = dp_cluster_st.member;
	pthread_mutex_unlock(&dp_cluster_st.lock);
	rc = etcd_post(&txn, "/v3/lease/revoke", req, &body, 5, NULL, NULL);
	free(body);
	if (rc == 0)
		return 0;
	/* Expired meanwhile (or revoked by another): its keys are gone, which is all that was wanted. */
	if (strstr(txn.err, "not found"))
		return 1;
	dp_cluster_error("/v3/lease/revoke: %s", txn.err);
	return -1;
}

int
dp_cluster_key_lease(const char *key, int64_t *lease)
{
	char *k = dp_b64_enc(key, strlen(key)), *req = NULL;
	json_t *o, *kv;
	int rc = -1;

	if (k && asprintf(&req, "{\"key\": \"%s\"}", k) >= 0 && (o = txn_post("/v3/kv/range", req))) {
		kv = json_array_get(json_object_get(o, "kvs"), 0);
		rc = kv != NULL;
		*lease = kv ? json_i64(json_object_get(kv, "lease")) : 0;
		json_decref(o);
	}
	free(k);
	free(req);
	return rc;
}
