/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower, its thread and its talk with etcd (dp_cluster.h)
 * through cluster/etcd.h (the JSON gateway over libcurl: why, there):
 * range, watch, compaction and reconnection, pqpn transactions, and
 * /roce/cluster.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_telemetry.h>

#include <jansson.h>

#include "dp.h"
#include "dp_cluster.h"
#include "dp_cluster_etcd.h"
#include "dp_cluster_rec.h"
#include "dp_cluster_txn.h"
/* cluster/ is not among the data plane library's include directories: it is linked only where configured. */
#include "../../cluster/etcd.h"

static struct {
	struct etcd_conn w;       /* the range and the watch */
	char *prefix;
	bool configured, running;
	volatile bool stop;       /* the thread is to end */
	volatile bool resync;     /* a file reload replaced the records: apply them all again */
	volatile bool interrupt;  /* either: the request in progress is abandoned */
	pthread_t tid;
	bool compacted;           /* the watch was cancelled: read everything again */
	unsigned idle_s;          /* --etcd-idle-s (0: 30) */
	uint64_t watch_lines;     /* messages the watch in progress has brought */
	/*
	 * Watch messages with events, read and not yet applied: the watch thread
	 * queues them, the apply thread takes all there are and applies them as
	 * one delta.  rec_lock serialises the record map (dp_cluster_rec.c)
	 * between the two; lock order: rec_lock, then q_lock.
	 */
	pthread_mutex_t rec_lock, q_lock;
	pthread_cond_t q_cond;
	struct wmsg *q_head, **q_tail;
	bool apply_stop, apply_running;
	pthread_t apply_tid;
} cl = { .rec_lock = PTHREAD_MUTEX_INITIALIZER, .q_lock = PTHREAD_MUTEX_INITIALIZER,
	 .q_cond = PTHREAD_COND_INITIALIZER, .q_tail = &cl.q_head };

struct wmsg {
	struct wmsg *next;
	json_t *result;           /* the message's "result" */
	double t0;                /* when it was read (dp_cluster_mono_s()) */
};

static void
set_connected(bool up)
{
	pthread_mutex_lock(&dp_cluster_st.lock);
	if (dp_cluster_st.connected != up || dp_cluster_st.since == 0) {
		if (up && dp_cluster_st.since != 0)
			dp_cluster_st.reconnects++;
		dp_cluster_st.connected = up;
		dp_cluster_st.since = dp_cluster_mono_s();
	}
	snprintf(dp_cluster_st.url, sizeof(dp_cluster_st.url), "%s", cl.w.urls[cl.w.cur]);
	dp_cluster_st.member = cl.w.cur;
	pthread_mutex_unlock(&dp_cluster_st.lock);
}

/* The range [PREFIX/, PREFIX0) as base64 members of a request. */
static void
range_keys(char **k, char **end)
{
	size_t n = strlen(cl.prefix);
	char *a = malloc(n + 2), *b = malloc(n + 2);

	snprintf(a, n + 2, "%s/", cl.prefix);
	snprintf(b, n + 2, "%s0", cl.prefix); /* '0' follows '/' */
	*k = dp_b64_enc(a, n + 1);
	*end = dp_b64_enc(b, n + 1);
	free(a);
	free(b);
}

/* One kv of a range or an event into the record map. */
static void
kv_take(json_t *kv, bool deleted)
{
	const char *k64 = json_string_value(json_object_get(kv, "key"));
	const char *v64 = json_string_value(json_object_get(kv, "value"));
	json_t *mr = json_object_get(kv, "mod_revision");
	int64_t rev = json_is_string(mr) ? strtoll(json_string_value(mr), NULL, 10) : 0;
	size_t kn, vn = 0;
	char *key, *val;

	if (!k64 || !(key = dp_b64_dec(k64, &kn)))
		return;
	/* The learners' lease claims (dp_cluster_txn.c) are no records. */
	if (!strncmp(key, cl.prefix, strlen(cl.prefix)) && !strncmp(key + strlen(cl.prefix), "/learn-leases/", 14)) {
		free(key);
		return;
	}
	if (deleted) {
		dp_cluster_rec_del(key);
	} else {
		val = dp_b64_dec(v64 ? v64 : "", &vn);
		if (val)
			dp_cluster_rec_put(key, val, vn, rev);
		free(val);
	}
	free(key);
}

static int64_t
header_revision(json_t *o)
{
	json_t *r = json_object_get(json_object_get(o, "header"), "revision");

	return json_is_string(r) ? strtoll(json_string_value(r), NULL, 10) : 0;
}

/* Drop the queued watch messages (rec_lock held). */
static void
queue_discard(void)
{
	struct wmsg *m;

	pthread_mutex_lock(&cl.q_lock);
	while ((m = cl.q_head)) {
		cl.q_head = m->next;
		json_decref(m->result);
		free(m);
	}
	cl.q_tail = &cl.q_head;
	pthread_mutex_unlock(&cl.q_lock);
}

/* Read the whole prefix at one revision and reconcile; the revision, or -1. */
static int64_t
full_read(void)
{
	char *k, *end, req[1024], *body;
	json_t *o, *kv;
	int64_t rev;
	size_t i;

	range_keys(&k, &end);
	snprintf(req, sizeof(req), "{\"key\": \"%s\", \"range_end\": \"%s\"}", k, end);
	free(k);
	free(end);
	if (etcd_post(&cl.w, "/v3/kv/range", req, &body, 30, NULL, NULL) < 0) {
		if (!cl.stop)
			dp_cluster_error("%s", cl.w.err);
		return -1;
	}
	o = json_loads(body, 0, NULL);
	free(body);
	if (!o) {
		dp_cluster_error("range: the answer is not JSON");
		return -1;
	}
	rev = header_revision(o);
	pthread_mutex_lock(&cl.rec_lock);
	/* What the last watch brought and was not applied yet is older than this read. */
	queue_discard();
	dp_cluster_rec_mark();
	json_array_foreach(json_object_get(o, "kvs"), i, kv)
		kv_take(kv, false);
	dp_cluster_rec_sweep();
	json_decref(o);
	pthread_mutex_lock(&dp_cluster_st.lock);
	dp_cluster_st.revision = rev;
	dp_cluster_st.resyncs++;
	pthread_mutex_unlock(&dp_cluster_st.lock);
	dp_cluster_rec_reconcile();
	pthread_mutex_unlock(&cl.rec_lock);
	return rev;
}

/* Count one delta of watch messages, the first read at @t0 (dp_cluster_mono_s()), now in force. */
static void
apply_time(double t0)
{
	uint64_t us = (uint64_t)((dp_cluster_mono_s() - t0) * 1e6);

	pthread_mutex_lock(&dp_cluster_st.lock);
	dp_cluster_st.apply_n++;
	dp_cluster_st.apply_us_total += us;
	dp_cluster_st.apply_us_last = us;
	if (us > dp_cluster_st.apply_us_max)
		dp_cluster_st.apply_us_max = us;
	pthread_mutex_unlock(&dp_cluster_st.lock);
}

/*
 * The apply thread: every watch message queued since it last looked is taken
 * into the record map and applied as one delta (one RCU grace period), so the
 * messages that arrive while a delta is being applied are applied together.
 */
static void *
apply_main(void *arg)
{
	RTE_SET_USED(arg);
	for (;;) {
		struct wmsg *m, *next;
		json_t *ev;
		size_t i;
		bool stop;

		pthread_mutex_lock(&cl.q_lock);
		while (!cl.q_head && !cl.apply_stop)
			pthread_cond_wait(&cl.q_cond, &cl.q_lock);
		stop = cl.apply_stop;
		pthread_mutex_unlock(&cl.q_lock);
		if (stop)
			break;
		pthread_mutex_lock(&cl.rec_lock);
		pthread_mutex_lock(&cl.q_lock);
		m = cl.q_head;
		cl.q_head = NULL;
		cl.q_tail = &cl.q_head;
		pthread_mutex_unlock(&cl.q_lock);
		if (m) {
			double t0 = m->t0;

			for (; m; m = next) {
				next = m->next;
				json_array_foreach(json_object_get(m->result, "events"), i, ev) {
					const char *type = json_string_value(json_object_get(ev, "type"));

					kv_take(json_object_get(ev, "kv"), type && !strcmp(type, "DELETE"));
				}
				json_decref(m->result);
				free(m);
			}
			dp_cluster_rec_reconcile();
			apply_time(t0);
		}
		pthread_mutex_unlock(&cl.rec_lock);
	}
	return NULL;
}

/*
 * One message of the watch stream: {"result": {"header", "events",
 * "compact_revision", "canceled"}}; one with events is queued for the apply
 * thread.  Non-zero ends the stream: etcd cancelled the watch (the gateway
 * keeps the stream open then).
 */
static int
watch_line(void *arg, char *line)
{
	double t0 = dp_cluster_mono_s();
	json_t *o = json_loads(line, 0, NULL), *r, *cr;
	struct wmsg *m;
	size_t n;
	int64_t rev;

	RTE_SET_USED(arg);
	if (!o)
		return 0;
	cl.watch_lines++;
	/* etcd answers the watch's creation at once: it is reachable. */
	set_connected(true);
	r = json_object_get(o, "result");
	if (!json_is_object(r)) {
		json_decref(o);
		return 0;
	}
	cr = json_object_get(r, "compact_revision");
	if ((json_is_string(cr) && strtoll(json_string_value(cr), NULL, 10) > 0) ||
	    json_is_true(json_object_get(r, "canceled")))
		cl.compacted = true;
	rev = header_revision(r);
	n = json_array_size(json_object_get(r, "events"));
	if (n && (m = calloc(1, sizeof(*m)))) {
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.events += n;
		if (rev > dp_cluster_st.revision)
			dp_cluster_st.revision = rev;
		pthread_mutex_unlock(&dp_cluster_st.lock);
		m->result = json_incref(r);
		m->t0 = t0;
		pthread_mutex_lock(&cl.q_lock);
		*cl.q_tail = m;
		cl.q_tail = &m->next;
		pthread_cond_signal(&cl.q_cond);
		pthread_mutex_unlock(&cl.q_lock);
	}
	json_decref(o);
	return cl.compacted;
}

static void *
cluster_main(void *arg)
{
	int64_t rev = -1;
	unsigned backoff_ms = 100;

	RTE_SET_USED(arg);
	/* An earlier incarnation's learned records revoked first, so that they are never applied here. */
	dp_cluster_txn_wait_start(3.0);
	while (!cl.stop) {
		char *k, *end, req[1024];

		if (cl.resync) {
			cl.resync = false;
			cl.interrupt = false;
			pthread_mutex_lock(&cl.rec_lock);
			dp_cluster_rec_forget();
			pthread_mutex_unlock(&cl.rec_lock);
			rev = -1;
		}
		if (rev < 0) {
			if ((rev = full_read()) < 0)
				goto retry;
			set_connected(true);
		}
		backoff_ms = 100;
		range_keys(&k, &end);
		snprintf(req, sizeof(req), "{\"create_request\": {\"key\": \"%s\", \"range_end\": \"%s\", "
			 "\"start_revision\": \"%lld\", \"progress_notify\": true}}", k, end,
			 (long long)dp_cluster_st.revision + 1);
		free(k);
		free(end);
		cl.compacted = false;
		cl.watch_lines = 0;
		/* The watch runs until etcd, the network or dp_cluster_stop() ends it. */
		if (etcd_post(&cl.w, "/v3/watch", req, NULL, 0, watch_line, NULL) < 0 && !cl.stop &&
		    !(cl.w.silent && cl.watch_lines))
			dp_cluster_error("watch: %s", cl.w.err);
		if (cl.stop)
			break;
		if (cl.resync)
			continue;
		if (cl.w.silent && cl.watch_lines) {
			/*
			 * etcd answered the watch and then had nothing to say for
			 * --etcd-idle-s: an idle prefix, not a lost member.  Renew it
			 * on the same member at once; a member that does not answer
			 * the renewal is given up below, as silent from the start.
			 */
			pthread_mutex_lock(&dp_cluster_st.lock);
			dp_cluster_st.watch_renewals++;
			pthread_mutex_unlock(&dp_cluster_st.lock);
			continue;
		}
		if (cl.compacted) {
			/* Compacted past what we saw: read everything again and apply the difference. */
			dp_cluster_error("watch cancelled (revision %lld compacted): reading %s again",
					 (long long)dp_cluster_st.revision + 1, cl.prefix);
			rev = -1;
			continue;
		}
retry:
		if (cl.resync)
			continue;
		set_connected(false);
		/* The next member, after a pause that grows to 2 s; the watch resumes from the last revision. */
		etcd_next_member(&cl.w);
		for (unsigned ms = 0; ms < backoff_ms && !cl.stop; ms += 10)
			usleep(10000);
		backoff_ms = backoff_ms * 2 > 2000 ? 2000 : backoff_ms * 2;
	}
	return NULL;
}

const char *
dp_cluster_prefix(void)
{
	return cl.configured ? cl.prefix : NULL;
}

int
dp_cluster_configure(const char *urls, const char *prefix, const struct dp_cluster_tls *tls)
{
	const struct dp_cluster_tls none = { 0 };

	if (!tls)
		tls = &none;
	if (etcd_conn_init(&cl.w, urls, tls->cacert, tls->cert, tls->key, &cl.interrupt) < 0 ||
	    dp_cluster_txn_conn_init(urls, tls->cacert, tls->cert, tls->key, &cl.stop) < 0)
		return -1;
	cl.prefix = strdup(prefix && *prefix ? prefix : "/roce");
	if (cl.prefix && strlen(cl.prefix) > 1 && cl.prefix[strlen(cl.prefix) - 1] == '/')
		cl.prefix[strlen(cl.prefix) - 1] = 0;
	cl.configured = cl.prefix != NULL;
	return cl.configured ? 0 : -1;
}

void
dp_cluster_idle(unsigned s)
{
	cl.idle_s = s;
}

/* The learner's lease is claimed under each of this host's uplink IPs (dp_cluster_txn.c). */
static int
claims_configure(void)
{
	char ips[8][INET6_ADDRSTRLEN], *p[8];
	unsigned n = 0;

	pthread_mutex_lock(&dp.ctl_lock);
	for (uint32_t i = 0; dp.ovl && i < dp.ovl->n_host_ips && n < RTE_DIM(ips); i++) {
		const struct ovl_ip *ip = &dp.ovl->host_ips[i];

		if (inet_ntop(ip->ver == 4 ? AF_INET : AF_INET6, ip->b, ips[n], sizeof(ips[n]))) {
			p[n] = ips[n];
			n++;
		}
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	return dp_cluster_txn_claims(cl.prefix, p, n);
}

int
dp_cluster_start(void)
{
	if (!cl.configured)
		return 0;
	if (claims_configure() < 0)
		return -1;
	cl.w.idle_s = cl.idle_s;
	dp_cluster_rec_init(cl.prefix);
	cl.stop = cl.interrupt = cl.resync = false;
	if (dp_reload_listen(dp_cluster_resync) < 0)
		return -1;
	cl.apply_stop = false;
	if (dp_cluster_txn_start() != 0 ||
	    rte_ctrl_thread_create(&cl.apply_tid, "roce-etcd-apply", NULL, apply_main, NULL) != 0)
		return -1;
	cl.apply_running = true;
	if (rte_ctrl_thread_create(&cl.tid, "roce-etcd", NULL, cluster_main, NULL) != 0)
		return -1;
	cl.running = true;
	return dp_cluster_telemetry_init();
}

void
dp_cluster_stop(void)
{
	if (!cl.running)
		return;
	cl.stop = true;
	cl.interrupt = true;
	pthread_join(cl.tid, NULL);
	pthread_mutex_lock(&cl.q_lock);
	cl.apply_stop = true;
	pthread_cond_signal(&cl.q_cond);
	pthread_mutex_unlock(&cl.q_lock);
	if (cl.apply_running)
		pthread_join(cl.apply_tid, NULL);
	cl.apply_running = false;
	queue_discard();
	dp_cluster_txn_stop();
	cl.running = false;
	dp_cluster_rec_free();
	etcd_conn_free(&cl.w);
	dp_cluster_txn_conn_free();
	free(cl.prefix);
	cl.prefix = NULL;
}

void
dp_cluster_resync(void)
{
	if (!cl.running)
		return;
	cl.resync = true;
	cl.interrupt = true;
}

static int
tel_cluster(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *m = rte_tel_data_alloc();

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (!m)
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	rte_tel_data_start_array(m, RTE_TEL_STRING_VAL);
	for (unsigned i = 0; i < cl.w.n_urls; i++)
		rte_tel_data_add_array_string(m, cl.w.urls[i]);
	rte_tel_data_add_dict_container(d, "members", m, 0);
	rte_tel_data_add_dict_string(d, "prefix", cl.prefix ? cl.prefix : "");
	pthread_mutex_lock(&dp_cluster_st.lock);
	rte_tel_data_add_dict_string(d, "etcd", dp_cluster_st.connected ? "connected" : "disconnected");
	rte_tel_data_add_dict_u64(d, "since_ms", (uint64_t)((dp_cluster_mono_s() - dp_cluster_st.since) * 1e3));
	rte_tel_data_add_dict_string(d, "member", dp_cluster_st.url);
	rte_tel_data_add_dict_u64(d, "revision", (uint64_t)dp_cluster_st.revision);
	rte_tel_data_add_dict_u64(d, "records_applied", dp_cluster_st.applied);
	rte_tel_data_add_dict_u64(d, "records_rejected", dp_cluster_st.rejected);
	rte_tel_data_add_dict_u64(d, "records_waiting", dp_cluster_st.waiting);
	rte_tel_data_add_dict_u64(d, "records_known", dp_cluster_st.records);
	rte_tel_data_add_dict_u64(d, "events", dp_cluster_st.events);
	rte_tel_data_add_dict_u64(d, "resyncs", dp_cluster_st.resyncs);
	rte_tel_data_add_dict_u64(d, "reconnects", dp_cluster_st.reconnects);
	rte_tel_data_add_dict_u64(d, "watch_renewals", dp_cluster_st.watch_renewals);
	rte_tel_data_add_dict_u64(d, "pqpn_allocated", dp_cluster_st.pqpn_allocated);
	rte_tel_data_add_dict_u64(d, "watch_applies", dp_cluster_st.apply_n);
	rte_tel_data_add_dict_u64(d, "watch_apply_us_total", dp_cluster_st.apply_us_total);
	rte_tel_data_add_dict_u64(d, "watch_apply_us_last", dp_cluster_st.apply_us_last);
	rte_tel_data_add_dict_u64(d, "watch_apply_us_max", dp_cluster_st.apply_us_max);
	/* Telemetry strings are at most RTE_TEL_MAX_STRING_LEN bytes: the start of the message. */
	char msg[RTE_TEL_MAX_STRING_LEN];

	memcpy(msg, dp_cluster_st.last_error, sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = 0;
	rte_tel_data_add_dict_string(d, "last_error", msg);
	pthread_mutex_unlock(&dp_cluster_st.lock);
	return 0;
}

int
dp_cluster_telemetry_init(void)
{
	return rte_telemetry_register_cmd("/roce/cluster", tel_cluster,
					  "The etcd cluster: members, connection, revision, records applied and rejected, "
					  "last error.");
}
