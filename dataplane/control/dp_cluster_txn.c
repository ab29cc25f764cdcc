/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's pqpn transactions, off the watch: the cluster thread
 * queues each write-back (dp_cluster_txn_queue()) and goes on reading and
 * applying the watch; this thread sends them in order through
 * dp_cluster_txn_put() (its own connection to etcd).  The result comes back
 * the way every change does: a written pqpn through the watch; a compare that
 * failed (another writer changed the key) as the key's new mod revision, which
 * the follower looks at afresh.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "dp_cluster_etcd.h"
#include "dp_cluster_txn.h"

struct txn {
	struct txn *next;
	char *key, *val;
	int64_t mod_rev;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct txn *head, **tail;
	bool stop, running;
	pthread_t tid;
} tq = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .tail = &tq.head };

static void *
txn_main(void *arg)
{
	RTE_SET_USED(arg);
	pthread_mutex_lock(&tq.lock);
	while (!tq.stop) {
		struct txn *t = tq.head;

		if (!t) {
			pthread_cond_wait(&tq.cond, &tq.lock);
			continue;
		}
		tq.head = t->next;
		if (!tq.head)
			tq.tail = &tq.head;
		pthread_mutex_unlock(&tq.lock);
		if (dp_cluster_txn_put(t->key, t->val, t->mod_rev) != 0) {
			/* Counted when queued: not written after all. */
			pthread_mutex_lock(&dp_cluster_st.lock);
			dp_cluster_st.pqpn_allocated--;
			pthread_mutex_unlock(&dp_cluster_st.lock);
		}
		free(t->key);
		free(t->val);
		free(t);
		pthread_mutex_lock(&tq.lock);
	}
	pthread_mutex_unlock(&tq.lock);
	return NULL;
}

int
dp_cluster_txn_queue(const char *key, const char *val, int64_t mod_rev)
{
	struct txn *t = calloc(1, sizeof(*t));

	if (!t || !(t->key = strdup(key)) || !(t->val = strdup(val))) {
		if (t)
			free(t->key);
		free(t);
		return -1;
	}
	t->mod_rev = mod_rev;
	pthread_mutex_lock(&tq.lock);
	*tq.tail = t;
	tq.tail = &t->next;
	pthread_cond_signal(&tq.cond);
	pthread_mutex_unlock(&tq.lock);
	return 0;
}

int
dp_cluster_txn_start(void)
{
	tq.stop = false;
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
		dp_cluster_st.pqpn_allocated--;
		pthread_mutex_unlock(&dp_cluster_st.lock);
		free(t->key);
		free(t->val);
		free(t);
	}
	tq.tail = &tq.head;
}
