/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pqpns this switch chooses for the etcd records of its host
 * (dp_cluster_rec_int.h): a QP record without "pqpn" whose endpoint is on one
 * of this switch's uplinks gets the smallest free one, written back to etcd
 * by a transaction that compares the key's mod revision (dp_cluster_txn.c);
 * a learned QP is applied here first and written back once in force.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_cluster_etcd.h"
#include "dp_cluster_rec_int.h"
#include "dp_cluster_txn.h"

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
		const struct rec *e2;

		if (!v && q->kind == K_QPS && q->want && q->pqpn_rev == q->mod_rev)
			v = q->pqpn_asked;
		if (!v)
			continue;
		e2 = dp_rec_endpoint(q);
		if (e2 && e2->want && dp_rec_ip_eq(json_object_get(e2->want, "host"), host))
			used[n++] = v;
	}
	qsort(used, n, sizeof(*used), u32_cmp);
	for (uint32_t i = 0; i < n && used[i] <= pq; i++)
		if (used[i] == pq)
			pq++;
	free(used);
	return pq <= CFG_QPN_MAX ? pq : 0;
}

/* Does the tenant named @name learn its QPs? */
static bool
tenant_learns(const char *name)
{
	bool learns = false;
	int t;

	pthread_mutex_lock(&dp.ctl_lock);
	if (name && dp.cfg && (t = cfg_tenant_index(dp.cfg, name)) >= 0)
		learns = dp.cfg->tenants[t].qp_learning;
	pthread_mutex_unlock(&dp.ctl_lock);
	return learns;
}

/*
 * A learned QP (a half: a peer by its vip alone; a learning tenant's end,
 * which is a half until its peer names it back; or an endpoint's QP1) is
 * applied here before its pqpn is written back: the source's switch forwards
 * to the pqpn as soon as it reads it, and its first frames must find the
 * connection in force.
 */
static bool
learned_qp(const json_t *want)
{
	json_t *peer = json_object_get(want, "peer"), *vqpn = json_object_get(want, "vqpn");

	/* An endpoint's QP1 (RDMA-CM of a learning tenant), which a MAD finds the same way. */
	if (json_is_integer(vqpn) && json_integer_value(vqpn) == 1)
		return true;
	return json_is_object(peer) &&
	       (!json_object_get(peer, "vqpn") || tenant_learns(json_string_value(json_object_get(want, "tenant"))));
}

/*
 * A QP without "pqpn": on this host, choose a free one and write it back to
 * etcd, at once, or (a learned QP) after the record with it is applied here:
 * then @r wants that record, and true says it joins the batch.
 */
bool
dp_rec_pqpn_allocate(struct rec *r)
{
	struct rec *e;
	const char *host;
	struct cfg_ip hip;
	uint32_t pq;

	if (r->pqpn_rev == r->mod_rev)
		return false;
	e = dp_rec_endpoint(r);
	host = e && e->want ? json_string_value(json_object_get(e->want, "host")) : NULL;
	if (!host || cfg_ip_parse(host, &hip) || !host_local(host))
		return false; /* the owner's switch chooses it */
	r->pqpn_rev = r->mod_rev;
	r->pqpn_asked = 0;
	pq = pqpn_free(host, &hip);
	if (!pq) {
		dp_rec_reject(r, "no pqpn free on host %s", host);
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
void
dp_rec_write_backs(const uint32_t *idx, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct rec *r = &rs.r[idx[i]];

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
