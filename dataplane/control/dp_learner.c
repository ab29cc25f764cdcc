/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The learner (dp_learner.h): one control thread, "roce-learn".  For each
 * request of an lcore (a frame from endpoint S of a learning tenant to
 * (D, q), where nothing is configured) it writes the half QP record
 * {tenant, vip D, vqpn q, type, peer {vip S}} (cfg_qp_half()):
 *
 *   - D on this host: with a pqpn of its own choosing, as a delta, at once;
 *   - D elsewhere: into etcd without a pqpn, where etcd has no such key, on
 *     the switch's lease (dp_cluster_txn.c); D's switch allocates the pqpn
 *     and writes it back, and this switch's follower applies the record it
 *     then reads, like any other;
 *   - D elsewhere without --etcd: nothing can resolve it (`refused_no_etcd`).
 *
 * Resolutions are limited per tenant (--learn-rate a second, the same as a
 * burst), so that a tenant scanning QPNs spends its own quota (max_qps,
 * which learned records count against like any other) and not the host's
 * or etcd's.  Every second it looks at the records it wrote: one whose
 * connection carried no frame for the tenant's qp_idle_s goes (a delete, or
 * an etcd delete while the record is still on its lease); one whose
 * connection never came (refused by the destination's host) goes after
 * DP_LEARN_STALE_S.
 *
 * The lcores hold the frames meanwhile (path/dp_hold.c) and find the
 * connection by themselves once it is in force.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "cfg_util.h"
#include "dp.h"
#include "dp_cluster.h"
#include "dp_cluster_etcd.h"
#include "dp_cluster_txn.h"
#include "dp_delta.h"
#include "dp_learn.h"
#include "dp_learner.h"
#include "dp_learner_int.h"

#define LEARN_RING_SIZE 4096
/* A record written whose connection has not come within this time goes again. */
#define DP_LEARN_STALE_S 5
/* pqpns the learner gives local destinations: the top half of the 24-bit space. */
#define LEARN_PQPN_FIRST 0x800000u
#define LEARN_PQPN_LAST 0xffffffu
/* Remote destinations followed while their records come (ln.pending); beyond, none is. */
#define LEARN_PENDING 1024

static struct {
	uint32_t hold_ms, rate;
	pthread_t tid;
	volatile bool stop;
	bool running;
	uint32_t next_pqpn;
	struct learned *list;     /* the learner thread's own */
	bool pairs_due;           /* some of them know their pair and are not written again yet */
	/*
	 * Remote destinations asked of etcd in the last --learn-hold-ms, not in
	 * force here yet: a second request meanwhile (a RDMA-CM REP and the
	 * first frame that follows it) is known, not a second record.
	 */
	struct pending {
		uint32_t tslot, dqpn;
		struct ovl_ip dst;
		uint64_t since;
	} pending[LEARN_PENDING];
	uint32_t n_pending;
	double tokens[DP_MAX_TENANTS];
	uint64_t refill_tsc[DP_MAX_TENANTS];
} ln = { .hold_ms = 500, .rate = 1000 };

void
dp_learn_configure(uint32_t hold_ms, uint32_t rate)
{
	ln.hold_ms = hold_ms;
	ln.rate = rate ? rate : 1;
}

static bool
rate_take(uint32_t slot, uint64_t now)
{
	double add = (double)(now - ln.refill_tsc[slot]) * ln.rate / (double)rte_get_tsc_hz();

	ln.refill_tsc[slot] = now;
	ln.tokens[slot] = RTE_MIN(ln.tokens[slot] + add, (double)ln.rate);
	if (ln.tokens[slot] < 1.0)
		return false;
	ln.tokens[slot] -= 1.0;
	return true;
}

static void
remember(const struct dp_learn_req *r, bool remote, char *key, uint32_t pair)
{
	struct learned *l = calloc(1, sizeof(*l));

	if (!l) {
		free(key);
		return;
	}
	l->tslot = r->tslot;
	dp_learner_ip_of(&l->dst, r->dst, r->alen);
	dp_learner_ip_of(&l->src, r->src, r->alen);
	l->dqpn = r->dqpn;
	l->remote = remote;
	l->since = rte_rdtsc();
	l->key = key;
	l->pair = pair;
	l->paired = pair != 0;
	dp_learn_st.paired += pair != 0;
	l->next = ln.list;
	ln.list = l;
	dp_learn_st.learned_now++;
}

/* Is (@tslot, @dst, @dqpn) asked of etcd already, within the hold's time? Forgets what is older. */
static bool
pending_has(uint32_t tslot, const struct ovl_ip *dst, uint32_t dqpn, uint64_t now)
{
	uint64_t hold = (uint64_t)ln.hold_ms * rte_get_tsc_hz() / 1000;

	for (uint32_t i = 0; i < ln.n_pending;) {
		const struct pending *e = &ln.pending[i];

		if (now - e->since > hold) {
			ln.pending[i] = ln.pending[--ln.n_pending];
			continue;
		}
		if (e->tslot == tslot && e->dqpn == dqpn && !memcmp(&e->dst, dst, sizeof(*dst)))
			return true;
		i++;
	}
	return false;
}

/* The next pqpn the learner gives a local destination. */
static uint32_t
pqpn_next(void)
{
	uint32_t p = ln.next_pqpn;

	ln.next_pqpn = p == LEARN_PQPN_LAST ? LEARN_PQPN_FIRST : p + 1;
	return p;
}

/* A destination on this host, alone: the record with a pqpn of its own, applied now. */
static void
resolve_local(const struct dp_learn_req *r, const char *tenant, const struct ovl_ip *dst, const struct ovl_ip *src,
	      uint32_t pair)
{
	for (int tries = 0; tries < 8; tries++) {
		bool quota = false;
		char *rec = dp_learner_half_json(tenant, dst, r->dqpn, pqpn_next(), r->type, src, pair, false);
		int rc;

		if (!rec)
			break;
		rc = dp_learner_apply_one("put", rec, &quota);
		free(rec);
		if (rc == 0) {
			dp_learn_st.learned++;
			remember(r, false, NULL, pair);
			return;
		}
		if (quota) {
			dp_learn_st.refused_quota++;
			return;
		}
		/* Most likely the pqpn is taken (by a record configured there): the next one. */
	}
	dp_learn_st.refused_other++;
}

/* A destination on another host: the record into etcd, without a pqpn. */
static void
resolve_remote(const struct dp_learn_req *r, const char *tenant, const struct ovl_ip *dst, const struct ovl_ip *src,
	       uint32_t pair)
{
	const char *prefix = dp_cluster_prefix();
	char d[CFG_IP_STRLEN], *key = NULL, *rec;

	if (!prefix) {
		dp_learn_st.refused_no_etcd++;
		return;
	}
	if (!(rec = dp_learner_half_json(tenant, dst, r->dqpn, 0, r->type, src, pair, false)) ||
	    asprintf(&key, "%s/qps/%s/%s/%" PRIu32, prefix, tenant, dp_learner_ip_str(dst, d), r->dqpn) < 0 ||
	    dp_cluster_learn_put(key, rec) < 0) {
		free(rec);
		free(key);
		dp_learn_st.refused_other++;
		return;
	}
	free(rec);
	dp_learn_st.learned++;
	if (ln.n_pending < LEARN_PENDING)
		ln.pending[ln.n_pending++] = (struct pending){ r->tslot, r->dqpn, *dst, rte_rdtsc() };
	remember(r, true, key, pair);
}

/* The job of a request (handle()). */
struct job;
static void resolve_gsi(const struct job *j);

/* What a request comes to, decided under ctl_lock. */
enum verdict { V_NONE, V_KNOWN, V_RATE, V_LOCAL, V_REMOTE, V_QUOTA, V_GSI };

struct job {
	const struct dp_learn_req *r;
	enum verdict v;
	char *tenant;
	struct ovl_ip dst, src;
	char *rec;                /* V_LOCAL: the record, with its pqpn */
	uint32_t pair;            /* the source's QPN, when a REP told it (dp_learner_cm_pair()) */
	/* V_GSI: the QP1 records missing, of the source [0] and the destination [1], and where they go. */
	bool gsi_missing[2], gsi_local[2];
};

static bool
same_dest(const struct dp_learn_req *a, const struct dp_learn_req *b)
{
	return a->tslot == b->tslot && a->dqpn == b->dqpn && a->alen == b->alen && !memcmp(a->dst, b->dst, a->alen);
}

static void
decide(const struct ovl *o, struct job *j, const struct job *before, unsigned n_before)
{
	const struct dp_learn_req *r = j->r;
	uint32_t t = o ? dp_learner_tenant_of_slot(o, r->tslot) : OVL_NONE, de;
	const struct ovl_tenant *tn;

	dp_learner_ip_of(&j->dst, r->dst, r->alen);
	dp_learner_ip_of(&j->src, r->src, r->alen);
	if (t == OVL_NONE || !o->tenants[t].qp_learning ||
	    (de = ovl_lookup_endpoint(o, t, j->dst.b, r->alen)) == OVL_NONE)
		return;
	tn = &o->tenants[t];
	for (unsigned i = 0; i < n_before; i++)
		if (before[i].v != V_NONE && same_dest(before[i].r, r)) {
			j->v = V_KNOWN;
			return;
		}
	if (r->type == CFG_QP_UD) {
		/* RDMA-CM: both ends' QP1 records, those missing. */
		uint32_t se = ovl_lookup_endpoint(o, t, j->src.b, r->alen);

		for (int k = 0; k < 2; k++) {
			j->gsi_missing[k] = ovl_lookup_qp(o, t, k ? &j->dst : &j->src, ROCE_GSI_QPN) == OVL_NONE;
			j->gsi_local[k] = k ? o->endpoints[de].local : se != OVL_NONE && o->endpoints[se].local;
		}
		j->v = !j->gsi_missing[0] && !j->gsi_missing[1] ? V_KNOWN :
		       !rate_take(r->tslot, rte_rdtsc()) ? V_RATE : tn->n_qps + 2 > tn->max_qps ? V_QUOTA : V_GSI;
		if (j->v != V_KNOWN && !(j->tenant = strdup(tn->name)))
			j->v = V_NONE;
		return;
	}
	/* A record of that key already (resolved meanwhile, or another source's), or asked: nothing to learn. */
	if (ovl_lookup_qp(o, t, &j->dst, r->dqpn) != OVL_NONE || pending_has(r->tslot, &j->dst, r->dqpn, rte_rdtsc()))
		j->v = V_KNOWN;
	else if (!rate_take(r->tslot, rte_rdtsc()))
		j->v = V_RATE;
	else if (o->endpoints[de].local)
		j->v = V_LOCAL;
	/* The quota as this host knows it; the owner's switch checks it again. */
	else if (tn->n_qps >= tn->max_qps)
		j->v = V_QUOTA;
	else
		j->v = V_REMOTE;
	if (j->v != V_KNOWN && !(j->tenant = strdup(tn->name)))
		j->v = V_NONE;
	j->pair = dp_learner_cm_pair(r);
	if (j->v == V_LOCAL && !(j->rec = dp_learner_half_json(j->tenant, &j->dst, r->dqpn, pqpn_next(), r->type, &j->src,
						    j->pair, false)))
		j->v = V_NONE;
}

/*
 * RDMA-CM between two endpoints: the UD records of their QP1s that are
 * missing.  With etcd they go there, local ones too (every host that meets
 * the endpoint's MADs must find its QP1 there), without pqpn: each owner
 * allocates; without etcd a local one is applied here, and a remote one
 * cannot be.  They stay as long as their endpoint (or the lease).
 */
static void
resolve_gsi(const struct job *j)
{
	const char *prefix = dp_cluster_prefix();

	for (int k = 0; k < 2; k++) {
		const struct ovl_ip *vip = k ? &j->dst : &j->src;
		char v[CFG_IP_STRLEN], *key = NULL, *rec;

		if (!j->gsi_missing[k])
			continue;
		if (!prefix && !j->gsi_local[k]) {
			dp_learn_st.refused_no_etcd++;
			continue;
		}
		rec = dp_learner_gsi_json(j->tenant, vip, prefix ? 0 : pqpn_next());
		if (rec && prefix &&
		    asprintf(&key, "%s/qps/%s/%s/%u", prefix, j->tenant, dp_learner_ip_str(vip, v), ROCE_GSI_QPN) >= 0 &&
		    dp_cluster_learn_put(key, rec) == 0)
			dp_learn_st.learned++;
		else if (rec && !prefix && dp_learner_apply_one("put", rec, NULL) == 0)
			dp_learn_st.learned++;
		else
			dp_learn_st.refused_other++;
		free(key);
		free(rec);
	}
}

/*
 * A burst of requests: the local destinations as one batch (one by one if
 * it is refused, to tell which record was), the remote ones into etcd; then
 * the RDMA-CM messages among them, in order, and what their REJ and DREP
 * take away (after the records of the same burst are in).
 */
static void
handle(const struct dp_learn_req *reqs, unsigned n)
{
	struct job jobs[64] = { 0 };
	struct batch b = { 0 };
	struct learned *out = NULL;
	bool whole = false;

	dp_learn_st.bursts++;
	for (unsigned i = 0; i < n; i++)
		if (reqs[i].cm.attr)
			dp_learner_cm_note(&reqs[i], rte_rdtsc());
	pthread_mutex_lock(&dp.ctl_lock);
	for (unsigned i = 0; i < n; i++) {
		jobs[i].r = &reqs[i];
		/* A CM message asks for a half only when it was delivered here (a REQ, a REP). */
		if (reqs[i].cm.attr && !reqs[i].cm.learn)
			continue;
		dp_learn_st.requests++;
		decide(dp.ovl, &jobs[i], jobs, i);
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	for (unsigned i = 0; i < n; i++)
		if (jobs[i].v == V_LOCAL && dp_learner_batch_add(&b, jobs[i].rec) < 0)
			b.n = UINT32_MAX;
	if (b.n && b.n != UINT32_MAX) {
		uint64_t t0 = rte_rdtsc();

		whole = dp_learner_apply("put", &b, NULL) == 0;
		dp_learn_st.apply_us += (rte_rdtsc() - t0) * 1000000 / rte_get_tsc_hz();
	}
	free(b.txt);
	for (unsigned i = 0; i < n; i++) {
		struct job *j = &jobs[i];

		switch (j->v) {
		case V_NONE:
			break;
		case V_KNOWN:
			dp_learn_st.known++;
			break;
		case V_RATE:
			dp_learn_st.refused_rate++;
			break;
		case V_QUOTA:
			dp_learn_st.refused_quota++;
			break;
		case V_LOCAL:
			if (whole) {
				dp_learn_st.learned++;
				remember(j->r, false, NULL, j->pair);
			} else {
				resolve_local(j->r, j->tenant, &j->dst, &j->src, j->pair);
			}
			break;
		case V_REMOTE:
			resolve_remote(j->r, j->tenant, &j->dst, &j->src, j->pair);
			break;
		case V_GSI:
			resolve_gsi(j);
			break;
		}
		free(j->tenant);
		free(j->rec);
	}
	for (unsigned i = 0; i < n; i++)
		if (reqs[i].cm.attr)
			dp_learner_cm(&reqs[i], &ln.list, &out, &ln.pairs_due, rte_rdtsc());
	if (out)
		dp_learner_forget(out);
}

/*
 * Records idle for their tenant's qp_idle_s, records whose connection never
 * came, and entries whose record is gone (a reload, a delete) or no longer
 * this source's; local deletes as one batch.
 */
static void
expire(void)
{
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	struct learned **pl = &ln.list, *out = NULL;

	pthread_mutex_lock(&dp.ctl_lock);
	while (*pl) {
		struct learned *l = *pl;
		const struct ovl *o = dp.ovl;
		uint32_t t, v = dp_learner_in_force(o, l, &t);
		uint64_t last = l->since;
		bool go;

		if (v == OVL_NONE) {
			/* Not yet in force (etcd, the owner), or taken away by another source. */
			go = now - l->since > DP_LEARN_STALE_S * hz;
			dp_learn_st.stale += go && l->remote;
		} else {
			/* An lcore may have stamped a frame after @now was read. */
			last = RTE_MAX(last, dp_conn_state(o->conns[OVL_V_IDX(v)].state)->egress.last_seen);
			go = now > last && now - last > o->tenants[t].qp_idle_s * hz;
			dp_learn_st.expired += go;
		}
		if (go) {
			*pl = l->next;
			l->next = out;
			out = l;
		} else {
			pl = &l->next;
		}
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	if (out)
		dp_learner_forget(out);
	/* Pairs the PSNs tell (written by pairs_write() next). */
	dp_learner_psn_pair(ln.list);
	ln.pairs_due = true;
	dp_learner_cm_expire(now);
}

/*
 * Records whose pair is known and not written yet: told by the PSNs, or by a
 * REP before the record was in force here (its owner's pqpn still coming).
 * Every tenth of a second while there are any, so that a REP's pair is not
 * a second late.
 */
static void
pairs_write(void)
{
	bool due = false;

	for (struct learned *l = ln.list; l; l = l->next)
		if (l->pair && !l->paired) {
			dp_learner_pair_write(l);
			due |= !l->paired;
		}
	ln.pairs_due = due;
}

static void *
learn_main(void *arg)
{
	uint64_t next_expire = rte_rdtsc() + rte_get_tsc_hz(), next_pairs = 0;

	RTE_SET_USED(arg);
	while (!ln.stop) {
		struct dp_learn_req r[64];
		unsigned n;

		n = rte_ring_sc_dequeue_burst_elem(dp_learn_ring, r, sizeof(r[0]), RTE_DIM(r), NULL);
		if (n)
			handle(r, n);
		if (rte_rdtsc() >= next_expire) {
			expire();
			next_expire = rte_rdtsc() + rte_get_tsc_hz();
		}
		if (ln.pairs_due && rte_rdtsc() >= next_pairs) {
			pairs_write();
			next_pairs = rte_rdtsc() + rte_get_tsc_hz() / 10;
		}
		if (n == 0)
			usleep(200);
	}
	return NULL;
}

static int
tel_learn(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t resolving = 0, held_now = 0, held = 0, released = 0, unresolved = 0, gsi = 0, gsi_class = 0, cm = 0;
	uint64_t gsi_rate = 0;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const struct dp_lcore *lc = &dp.lcores[l];

		resolving += lc->hold.n_conns;
		held_now += lc->hold.n_frames;
		held += lc->stats.held;
		released += lc->stats.hold_released;
		unresolved += lc->stats.drops[DP_DROP_UNRESOLVED];
		gsi += lc->stats.gsi_forwarded;
		gsi_class += lc->stats.gsi_class_dropped;
		gsi_rate += lc->stats.gsi_rate_dropped;
		cm += lc->stats.cm_learn;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "requests", dp_learn_st.requests);
	rte_tel_data_add_dict_u64(d, "bursts", dp_learn_st.bursts);
	rte_tel_data_add_dict_u64(d, "apply_us", dp_learn_st.apply_us);
	rte_tel_data_add_dict_u64(d, "learned", dp_learn_st.learned);
	rte_tel_data_add_dict_u64(d, "learned_now", dp_learn_st.learned_now);
	rte_tel_data_add_dict_u64(d, "expired", dp_learn_st.expired);
	rte_tel_data_add_dict_u64(d, "stale", dp_learn_st.stale);
	rte_tel_data_add_dict_u64(d, "known", dp_learn_st.known);
	rte_tel_data_add_dict_u64(d, "resolving", resolving);
	rte_tel_data_add_dict_u64(d, "frames_held", held_now);
	rte_tel_data_add_dict_u64(d, "frames_held_total", held);
	rte_tel_data_add_dict_u64(d, "frames_released", released);
	rte_tel_data_add_dict_u64(d, "unresolved", unresolved);
	rte_tel_data_add_dict_u64(d, "refused_quota", dp_learn_st.refused_quota);
	rte_tel_data_add_dict_u64(d, "refused_rate", dp_learn_st.refused_rate);
	rte_tel_data_add_dict_u64(d, "refused_no_etcd", dp_learn_st.refused_no_etcd);
	rte_tel_data_add_dict_u64(d, "refused_other", dp_learn_st.refused_other);
	rte_tel_data_add_dict_u64(d, "gsi_forwarded", gsi);
	rte_tel_data_add_dict_u64(d, "gsi_dropped_class", gsi_class);
	rte_tel_data_add_dict_u64(d, "cm_learn", cm);
	rte_tel_data_add_dict_u64(d, "cm_removed", dp_learn_st.cm_removed);
	rte_tel_data_add_dict_u64(d, "paired", dp_learn_st.paired);
	rte_tel_data_add_dict_u64(d, "cm_unmatched", dp_learn_st.cm_unmatched);
	rte_tel_data_add_dict_u64(d, "gsi_dropped_rate", gsi_rate);
	pthread_mutex_lock(&dp_cluster_st.lock);
	rte_tel_data_add_dict_u64(d, "etcd_puts", dp_cluster_st.learn_puts);
	rte_tel_data_add_dict_u64(d, "etcd_exists", dp_cluster_st.learn_exists);
	rte_tel_data_add_dict_u64(d, "etcd_failed", dp_cluster_st.learn_failed);
	rte_tel_data_add_dict_u64(d, "etcd_deletes", dp_cluster_st.learn_deletes);
	rte_tel_data_add_dict_u64(d, "lease", (uint64_t)dp_cluster_st.lease);
	rte_tel_data_add_dict_u64(d, "leases_lost", dp_cluster_st.lease_lost);
	rte_tel_data_add_dict_u64(d, "leases_revoked", dp_learn_st.leases_revoked);
	pthread_mutex_unlock(&dp_cluster_st.lock);
	rte_tel_data_add_dict_u64(d, "hold_ms", ln.hold_ms);
	rte_tel_data_add_dict_u64(d, "rate", ln.rate);
	rte_tel_data_add_dict_string(d, "last_error", dp_learner_last_error);
	return 0;
}

int
dp_learn_init(void)
{
	dp_hold_tsc = (uint64_t)ln.hold_ms * rte_get_tsc_hz() / 1000;
	ln.next_pqpn = LEARN_PQPN_FIRST;
	for (uint32_t s = 0; s < DP_MAX_TENANTS; s++)
		ln.tokens[s] = ln.rate;
	dp_learn_ring = rte_ring_create_elem("roce_learn", sizeof(struct dp_learn_req), LEARN_RING_SIZE,
					     rte_socket_id(), RING_F_SC_DEQ);
	if (!dp_learn_ring)
		return -1;
	return rte_telemetry_register_cmd("/roce/learn", tel_learn,
					  "Learned connections: requests, records learned and expired, frames held and "
					  "unresolved, refusals by quota, rate and etcd.");
}

int
dp_learn_start(void)
{
	ln.stop = false;
	if (rte_ctrl_thread_create(&ln.tid, "roce-learn", NULL, learn_main, NULL) != 0)
		return -1;
	ln.running = true;
	return 0;
}

void
dp_learn_stop(void)
{
	if (!ln.running)
		return;
	ln.stop = true;
	pthread_join(ln.tid, NULL);
	ln.running = false;
	while (ln.list) {
		struct learned *l = ln.list;

		ln.list = l->next;
		free(l->key);
		free(l);
	}
	dp_learner_cm_free();
}
