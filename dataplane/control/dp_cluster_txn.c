/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's pqpn transactions, off the watch: the cluster thread
 * queues each write-back (dp_cluster_txn_queue()) and goes on reading and
 * applying the watch; this thread sends them in order through
 * dp_cluster_txn_put() (its own connection to etcd).  The result comes back
 * the way every change does: a written pqpn through the watch; a compare that
 * failed (another writer changed the key) as the key's new mod revision, which
 * the follower looks at afresh.
 *
 * The learner's records (dp_learn.c) take the same thread and connection:
 * puts where etcd has no such key, on a lease of the switch that this thread
 * grants at the first one and keeps alive (a switch that dies leaves nothing
 * behind once its lease expires), and deletes of them.
 *
 * The lease is claimed per host: PREFIX/learn-leases/<host ip>, one key per
 * uplink IP, put on the lease itself when it is granted.  A switch that
 * restarts after a crash finds its previous incarnation's claim there at
 * start, before the follower reads anything, and revokes that lease: etcd
 * deletes every record on it at once, so no switch forwards under them for
 * the rest of their time.  One switch per host IP is assumed (the cluster's
 * pqpns are per host IP already); a claim found later, when this switch
 * grants a lease of its own, is another live switch's, and this one then
 * writes nothing into etcd and says so (learn puts fail, last_error).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "dp_cluster_etcd.h"
#include "dp_cluster_txn.h"
#include "dp_learn.h"

enum txn_kind { TXN_PQPN, TXN_LEARN_PUT, TXN_LEARN_DELETE, TXN_LEARN_REPLACE };

/* Puts sent in one transaction at most (etcd's --max-txn-ops is 128 by default). */
#define TXN_BATCH 64

struct txn {
	struct txn *next;
	char *key, *val;
	int64_t mod_rev;
	enum txn_kind kind;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct txn *head, **tail;
	bool stop, running;
	pthread_t tid;
	int64_t lease;            /* the learner's lease, 0 before its first record */
	double lease_renew;       /* when to send its next keepalive (dp_cluster_mono_s()) */
	char **claim;             /* PREFIX/learn-leases/<host ip>, one per uplink IP */
	unsigned n_claim;
	bool checked;             /* the earlier incarnation's claims looked at (and revoked) */
	bool conflict;            /* another switch claims this host: no lease of ours */
	bool started;             /* the start-up check was tried (dp_cluster_txn_wait_start()) */
	pthread_cond_t started_cond;
} tq = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .tail = &tq.head,
	 .started_cond = PTHREAD_COND_INITIALIZER };

/*
 * Start-up: the lease each claim key names, an earlier incarnation's (one
 * switch per host IP), revoked.  0 when every key was looked at.
 */
static int
claims_revoke(void)
{
	for (unsigned i = 0; i < tq.n_claim; i++) {
		int64_t old = 0;
		int rc = dp_cluster_key_lease(tq.claim[i], &old);

		if (rc < 0)
			return -1;
		if (rc == 0 || old <= 0)
			continue;
		rc = dp_cluster_lease_revoke(old);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			dp_learn_st.leases_revoked++;
			fprintf(stderr, "etcd: revoked lease %llx of this host's earlier switch (%s): its learned records "
				"are gone\n", (long long)old, tq.claim[i]);
		}
	}
	tq.checked = true;
	return 0;
}

/* @lease's claim of every host key: 0, or -1 (no answer, or the key is another switch's). */
static int
claims_put(int64_t lease)
{
	char val[96], host[64] = "";

	gethostname(host, sizeof(host) - 1);
	snprintf(val, sizeof(val), "{\"lease\": %lld, \"pid\": %d, \"node\": \"%.40s\"}", (long long)lease,
		 (int)getpid(), host);
	for (unsigned i = 0; i < tq.n_claim; i++) {
		int64_t other = 0;

		switch (dp_cluster_txn_create(tq.claim[i], val, lease)) {
		case 0:
			continue;
		case 1:
			if (dp_cluster_key_lease(tq.claim[i], &other) == 0)
				continue; /* gone meanwhile (its lease expired): the next grant claims it */
			tq.conflict = true;
			dp_cluster_error("%s is claimed by lease %llx, another switch of this host IP: learned records "
					 "are not written into etcd", tq.claim[i], (long long)other);
			return -1;
		default:
			return -1;
		}
	}
	return 0;
}

/* A new lease, claimed for this host: its ID, or 0 (etcd away, or the host is another switch's). */
static int64_t
lease_take(void)
{
	int64_t lease;

	if (tq.conflict || (!tq.checked && claims_revoke() < 0) || (lease = dp_cluster_lease_grant(DP_LEARN_LEASE_S)) <= 0)
		return 0;
	if (claims_put(lease) < 0) {
		/* Its claims made so far go with it. */
		dp_cluster_lease_revoke(lease);
		return 0;
	}
	return lease;
}

/* The learner's lease: granted, or kept alive when a third of its time has passed; 0 when etcd has none. */
static int64_t
lease_keep(bool need)
{
	double now = dp_cluster_mono_s();

	if (tq.lease > 0 && now >= tq.lease_renew) {
		switch (dp_cluster_lease_keepalive(tq.lease)) {
		case 0:
			tq.lease_renew = now + DP_LEARN_LEASE_S / 3.0;
			break;
		case 1:
			/* Gone (expired while etcd was away): its records and claims went with it; a new one. */
			tq.lease = 0;
			pthread_mutex_lock(&dp_cluster_st.lock);
			dp_cluster_st.lease_lost++;
			pthread_mutex_unlock(&dp_cluster_st.lock);
			break;
		default:
			/*
			 * No answer: the lease may well outlive the outage (etcd renews every
			 * lease's time when a leader is elected), and its claim with it, which a
			 * new lease of ours would take for another switch's.  Ask again soon.
			 */
			tq.lease_renew = now + 0.5;
			break;
		}
	}
	if (need && tq.lease <= 0 && (tq.lease = lease_take()) > 0) {
		tq.lease_renew = now + DP_LEARN_LEASE_S / 3.0;
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.lease = tq.lease;
		pthread_mutex_unlock(&dp_cluster_st.lock);
	}
	return tq.lease > 0 ? tq.lease : 0;
}

static void
txn_run(const struct txn *t)
{
	int64_t lease;
	int rc;

	switch (t->kind) {
	case TXN_PQPN:
		if (dp_cluster_txn_put(t->key, t->val, t->mod_rev) != 0) {
			/* Counted when queued: not written after all. */
			pthread_mutex_lock(&dp_cluster_st.lock);
			dp_cluster_st.pqpn_allocated--;
			pthread_mutex_unlock(&dp_cluster_st.lock);
		}
		return;
	case TXN_LEARN_PUT:
		lease = lease_keep(true);
		rc = lease ? dp_cluster_txn_create(t->key, t->val, lease) : -1;
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.learn_puts += rc == 0;
		dp_cluster_st.learn_exists += rc == 1;
		dp_cluster_st.learn_failed += rc < 0;
		pthread_mutex_unlock(&dp_cluster_st.lock);
		return;
	case TXN_LEARN_DELETE:
		rc = tq.lease > 0 ? dp_cluster_txn_delete(t->key, tq.lease) : 1;
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.learn_deletes += rc == 0;
		pthread_mutex_unlock(&dp_cluster_st.lock);
		return;
	case TXN_LEARN_REPLACE:
		rc = tq.lease > 0 ? dp_cluster_txn_replace(t->key, t->val, tq.lease) : 1;
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.learn_puts += rc == 0;
		dp_cluster_st.learn_failed += rc != 0;
		pthread_mutex_unlock(&dp_cluster_st.lock);
		return;
	}
}

/*
 * Puts (write-backs and the learner's) in one transaction; when a compare
 * fails there (or etcd does not answer), one by one, so that each gets its
 * own answer.
 */
static void
txn_run_batch(struct txn *const *b, unsigned n)
{
	struct dp_txn_op ops[TXN_BATCH];
	unsigned learned = 0;
	int64_t lease = 0;

	for (unsigned i = 0; i < n; i++) {
		ops[i] = (struct dp_txn_op){ .key = b[i]->key, .val = b[i]->val, .mod_rev = b[i]->mod_rev };
		if (b[i]->kind == TXN_LEARN_PUT) {
			ops[i].lease = lease ? lease : (lease = lease_keep(true));
			learned++;
		}
	}
	if (n > 1 && (!learned || lease) && dp_cluster_txn_batch(ops, n) == 0) {
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.learn_puts += learned;
		dp_cluster_st.txn_batches++;
		pthread_mutex_unlock(&dp_cluster_st.lock);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		txn_run(b[i]);
}

/* Deletes and replacements compare the lease: each is a transaction of its own. */
static bool
alone(const struct txn *t)
{
	return t->kind == TXN_LEARN_DELETE || t->kind == TXN_LEARN_REPLACE;
}

static void *
txn_main(void *arg)
{
	RTE_SET_USED(arg);
	/* Before the follower reads etcd: what an earlier incarnation left goes first. */
	claims_revoke();
	pthread_mutex_lock(&tq.lock);
	tq.started = true;
	pthread_cond_broadcast(&tq.started_cond);
	while (!tq.stop) {
		struct txn *t = tq.head;

		if (!t) {
			if (tq.lease > 0) {
				/* Wake for the keepalive. */
				double wait = tq.lease_renew - dp_cluster_mono_s();
				struct timespec ts;

				if (wait > 0) {
					clock_gettime(CLOCK_REALTIME, &ts);
					ts.tv_sec += (time_t)wait;
					ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
					if (ts.tv_nsec >= 1000000000L) {
						ts.tv_sec++;
						ts.tv_nsec -= 1000000000L;
					}
					pthread_cond_timedwait(&tq.cond, &tq.lock, &ts);
					continue;
				}
				pthread_mutex_unlock(&tq.lock);
				lease_keep(false);
				pthread_mutex_lock(&tq.lock);
				continue;
			}
			pthread_cond_wait(&tq.cond, &tq.lock);
			continue;
		}
		struct txn *b[TXN_BATCH];
		unsigned n = 0;

		/* Puts queued together go together: one transaction, one fsync. */
		do {
			b[n++] = t;
			tq.head = t->next;
			t = tq.head;
		} while (t && n < TXN_BATCH && !alone(t) && !alone(b[0]));
		if (!tq.head)
			tq.tail = &tq.head;
		pthread_mutex_unlock(&tq.lock);
		txn_run_batch(b, n);
		for (unsigned i = 0; i < n; i++) {
			free(b[i]->key);
			free(b[i]->val);
			free(b[i]);
		}
		pthread_mutex_lock(&tq.lock);
	}
	pthread_mutex_unlock(&tq.lock);
	return NULL;
}

static int
txn_queue(enum txn_kind kind, const char *key, const char *val, int64_t mod_rev)
{
	struct txn *t = calloc(1, sizeof(*t));

	if (!t || !(t->key = strdup(key)) || (val && !(t->val = strdup(val)))) {
		if (t)
			free(t->key);
		free(t);
		return -1;
	}
	t->kind = kind;
	t->mod_rev = mod_rev;
	pthread_mutex_lock(&tq.lock);
	*tq.tail = t;
	tq.tail = &t->next;
	pthread_cond_signal(&tq.cond);
	pthread_mutex_unlock(&tq.lock);
	return 0;
}

int
dp_cluster_txn_queue(const char *key, const char *val, int64_t mod_rev)
{
	return txn_queue(TXN_PQPN, key, val, mod_rev);
}

int
dp_cluster_learn_put(const char *key, const char *val)
{
	return tq.running ? txn_queue(TXN_LEARN_PUT, key, val, 0) : -1;
}

int
dp_cluster_learn_replace(const char *key, const char *val)
{
	return tq.running ? txn_queue(TXN_LEARN_REPLACE, key, val, 0) : -1;
}

int
dp_cluster_learn_delete(const char *key)
{
	return tq.running ? txn_queue(TXN_LEARN_DELETE, key, NULL, 0) : -1;
}

int
dp_cluster_txn_claims(const char *prefix, char **host_ips, unsigned n)
{
	tq.claim = calloc(n ? n : 1, sizeof(*tq.claim));
	if (!tq.claim)
		return -1;
	for (tq.n_claim = 0; tq.n_claim < n; tq.n_claim++)
		if (asprintf(&tq.claim[tq.n_claim], "%s/learn-leases/%s", prefix, host_ips[tq.n_claim]) < 0)
			return -1;
	return 0;
}

void
dp_cluster_txn_wait_start(double max_s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)max_s;
	pthread_mutex_lock(&tq.lock);
	while (tq.running && !tq.started && !tq.stop)
		if (pthread_cond_timedwait(&tq.started_cond, &tq.lock, &ts) != 0)
			break;
	pthread_mutex_unlock(&tq.lock);
}

int
dp_cluster_txn_start(void)
{
	tq.stop = false;
	tq.started = tq.checked = tq.conflict = false;
	if (rte_ctrl_thread_create(&tq.tid, "roce-etcd-txn", NULL, txn_main, NULL) != 0)
		return -1;
	tq.running = true;
	return 0;
}

void
dp_cluster_txn_stop(void)
{
	struct txn *t;

	if (!tq.running)
		return;
	pthread_mutex_lock(&tq.lock);
	tq.stop = true;
	pthread_cond_signal(&tq.cond);
	pthread_mutex_unlock(&tq.lock);
	pthread_join(tq.tid, NULL);
	tq.running = false;
	/* What was never sent is dropped: the next start reads etcd again and asks afresh. */
	while ((t = tq.head)) {
		tq.head = t->next;
		pthread_mutex_lock(&dp_cluster_st.lock);
		dp_cluster_st.pqpn_allocated -= t->kind == TXN_PQPN;
		pthread_mutex_unlock(&dp_cluster_st.lock);
		free(t->key);
		free(t->val);
		free(t);
	}
	tq.tail = &tq.head;
	tq.lease = 0;
	for (unsigned i = 0; i < tq.n_claim; i++)
		free(tq.claim[i]);
	free(tq.claim);
	tq.claim = NULL;
	tq.n_claim = 0;
}
