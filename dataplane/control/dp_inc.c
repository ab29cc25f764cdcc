/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental changes on the running switch: a delta batch, or a file reload
 * whose difference from the running configuration is only endpoints, QPs
 * and MRs, changes the running overlay in place (overlay/ovl_inc.h) instead
 * of building a new one, so that its cost follows the change, not the
 * configuration.  Anything else takes the whole path (dp_config_publish_locked()).
 *
 * The order keeps every frame under a mapping in force at that moment, and
 * every connection's state with its frames:
 *
 *   1. the new records are written into free slots (nothing reaches them);
 *      new connections get state ids, estats, their policy (revocation);
 *   2. when connections are added or change caps, a new header is
 *      published with the shapers' attachments, and every lcore takes it;
 *   3. the tables change (one store per key: a changed connection is
 *      never missing), the configuration follows;
 *   4. when connections are removed, a header is published after the tables
 *      with the removals: removed connections' queued frames leave as
 *      conn_removed drops; after the grace period no lcore holds a removed
 *      record, whose slot and state id (once its queue drained) are free
 *      again, and rules of removed and changed connections are withdrawn.
 *      A batch with neither publishes its header here too.
 *
 * So a batch waits for one grace period, or two when it both adds and
 * removes connections.  A delta that only adds connections of tenants the
 * shapers do not see (adds_only()) waits for none: it is in force at step 3,
 * and the header it replaces is freed once a grace period has passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_rcu_qsbr.h>

#include "cfg_inc.h"
#include "dp.h"
#include "dp_acl.h"
#include "dp_estats.h"
#include "dp_ids.h"
#include "dp_inc.h"
#include "dp_offload.h"
#include "dp_rate.h"
#include "ovl_inc.h"

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Room for a copy of header @h (header_copy()), allocated before the point of no return. */
static struct ovl *
header_alloc(const struct ovl *h)
{
	struct ovl *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->tenants = malloc(sizeof(*d->tenants) * (h->n_tenants + 1));
	d->ports = malloc(sizeof(*d->ports) * (h->n_ports + 1));
	if (!d->tenants || !d->ports) {
		free(d->tenants);
		free(d->ports);
		free(d);
		return NULL;
	}
	return d;
}

/* @h as it is now into @d, with @d's own tenants and ports; @d takes the store. */
static void
header_copy(struct ovl *d, const struct ovl *h)
{
	struct ovl_tenant *t = d->tenants;
	struct ovl_port *p = d->ports;

	*d = *h;
	d->tenants = memcpy(t, h->tenants, sizeof(*t) * h->n_tenants);
	d->ports = memcpy(p, h->ports, sizeof(*p) * h->n_ports);
	ovl_inc_own(d);
}

/* Frees a header that does not own its store. */
static void
header_free(struct ovl *h)
{
	if (!h)
		return;
	free(h->tenants);
	free(h->ports);
	free(h);
}

/* Headers replaced without waiting, freed once a grace period has passed since. */
static struct {
	struct ovl *h;
	uint64_t token;
} later[256];
static uint32_t n_later;

/* Free the headers whose grace period is over (all of them with @wait). */
static void
later_free(bool wait)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n_later; i++) {
		if (rte_rcu_qsbr_check(dp.qsv, later[i].token, wait) == 1)
			header_free(later[i].h);
		else
			later[k++] = later[i];
	}
	n_later = k;
}

static void
header_free_later(struct ovl *h)
{
	if (!dp.qsv || !dp.running) {
		header_free(h);
		return;
	}
	if (n_later == RTE_DIM(later))
		later_free(true);
	later[n_later].h = h;
	later[n_later++].token = rte_rcu_qsbr_start(dp.qsv);
}

void
dp_inc_fini(void)
{
	/* The lcores have stopped. */
	for (uint32_t i = 0; i < n_later; i++)
		header_free(later[i].h);
	n_later = 0;
}

/*
 * A delta of additions only, whose connections' tenants are not shaped
 * (dp_rate_tenant_shaped()), with offload off (the MARK index of the header
 * before would have to outlive a grace period): it needs no wait.  Not a
 * reload: the header before points into the configuration it replaces.
 */
static bool
adds_only(const struct cfg_inc *ci, const struct cfg *next, const struct ovl *h, const struct ovl_inc_conn *ch,
	  uint32_t n)
{
	if (next || !dp.qsv || (dp.cfg && dp.cfg->offload.enabled))
		return false;
	for (uint32_t i = 0; i < ci->n; i++)
		if (ci->ch[i].op != CFG_INC_ADD)
			return false;
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].from != OVL_NONE || ch[i].to == OVL_NONE ||
		    dp_rate_tenant_shaped(h, h->conns[ch[i].to].tenant))
			return false;
	return true;
}

/* The configuration follows the tables: @ci committed in place, or @next in dp.cfg's place. */
static void
cfg_commit(struct cfg_inc *ci, struct cfg *next, struct cfg **old_cfg)
{
	if (next) {
		*old_cfg = dp.cfg;
		dp.cfg = next;
	} else {
		cfg_inc_commit(dp.cfg, ci);
	}
}

static void
publish(struct ovl *h)
{
	dp_ovl_publish(h);
	rte_rcu_qsbr_synchronize(dp.qsv, RTE_QSBR_THRID_INVALID);
	dp_rate_wait();
}

/*
 * Apply @ci, checked against dp.cfg: committed into dp.cfg in place, or,
 * with @next, the configuration that replaces dp.cfg (a reload: taken on
 * success).  1 when applied; 0 when the overlay cannot take it in place
 * (nothing changed: the caller takes the whole path).
 */
static int
inc_apply(struct cfg_inc *ci, struct cfg *next, struct dp_reload_report *rep)
{
	struct ovl *old = dp.ovl, *h1, *h2 = NULL, *last;
	struct cfg *old_cfg = NULL;
	struct ovl_inc oi;
	const struct ovl_inc_conn *ch = NULL;
	double t1 = now_ms(), t2;
	bool mrs = false, attach = false, remove = false;
	uint32_t n;
	char err[256];

	if (!old || !old->store)
		return 0;
	dp_state_drained_release();
	later_free(false);
	if (ovl_inc_prepare(old, next ? next : dp.cfg, ci, &oi, err, sizeof(err)) < 0) {
		ovl_inc_release(&oi);
		return 0;
	}
	h1 = oi.hdr;
	ch = oi.conns;
	n = oi.n_conns;
	/* Stable ids: a changed connection keeps its state, a new one gets a fresh one. */
	for (uint32_t i = 0; i < n; i++) {
		struct ovl_conn *c = ch[i].to == OVL_NONE ? NULL : &h1->conns[ch[i].to];

		if (!c) {
			remove = true;
			continue;
		}
		if (ch[i].from != OVL_NONE) {
			c->state = old->conns[ch[i].from].state;
			attach |= old->conns[ch[i].from].rate_bps != c->rate_bps;
			continue;
		}
		attach = true;
		if ((c->state = dp_state_alloc()) == OVL_NONE)
			goto undo;
		if (dp_estats_sync_id(c->state) < 0)
			fprintf(stderr, "estats: no memory for a connection; it is not measured\n");
	}
	for (uint32_t i = 0; i < ci->n; i++)
		mrs |= ci->ch[i].kind == CFG_DK_MRS;
	if (attach && ((remove && !(h2 = header_alloc(h1))) ||
		       dp_rate_prepare_changes(h1, old, ch, n, DP_RATE_ATTACH) < 0))
		goto undo;
	for (uint32_t i = 0; i < n; i++) {
		if (ch[i].to == OVL_NONE)
			rep->conns_removed++;
		else if (ch[i].from == OVL_NONE)
			rep->conns_added++;
		else
			rep->conns_changed++;
	}
	rep->conns_kept = old->live_conns - rep->conns_removed - rep->conns_changed;
	rep->qps_before = old->live_qps;
	rep->mrs_before = old->live_mrs;
	t2 = now_ms();
	rep->build_ms = t2 - t1;

	/*
	 * Nothing can fail from here.  1-2: the new connections' policy, and
	 * their shapers in a header of their own, before any frame can reach them.
	 */
	dp_acl_changes(h1, old, ch, n);
	if (adds_only(ci, next, h1, ch, n)) {
		/*
		 * Only new connections, of tenants whose frames bypass the shapers:
		 * a frame may reach them before an lcore has taken their
		 * attachment.  The batch is in force at the commit; the old header
		 * goes after a grace period that nobody waits for.
		 */
		dp_ovl_publish(h1);
		ovl_inc_commit(&oi);
		cfg_commit(ci, next, &old_cfg);
		ovl_inc_release(&oi);
		header_free_later(old);
		last = h1;
		goto done;
	}
	if (attach) {
		if (!remove)
			dp_offload_index_changes(h1, old, ch, n);
		publish(h1);
	}
	/* 3: the tables; the configuration follows. */
	ovl_inc_commit(&oi);
	cfg_commit(ci, next, &old_cfg);
	/* 4: the removals, in the header after the tables: no lcore can find a removed connection. */
	last = h1;
	if (remove) {
		if (attach) {
			header_copy(h2, h1);
			last = h2;
		}
		if (dp_rate_prepare_changes(last, old, ch, n, DP_RATE_REMOVE) < 0)
			fprintf(stderr, "delta: no memory to tell the shapers of removed connections\n");
	}
	if (!attach || remove) {
		dp_offload_index_changes(last, old, ch, n);
		publish(last);
	}
	dp_offload_changes(old, last, ch, n, mrs);
	for (uint32_t i = 0; i < n; i++) {
		const struct ovl_conn *c;

		if (ch[i].to != OVL_NONE)
			continue;
		c = &old->conns[ch[i].from];
		dp_estats_retire(c->state, old->tenants[c->tenant].slot);
		dp_state_release_when_drained(c->state);
	}
	ovl_inc_reclaim(last);
	ovl_inc_release(&oi);
	header_free(old);
	if (last != h1)
		header_free(h1);
	cfg_free(old_cfg);
done:
	rep->qps_after = last->live_qps;
	rep->mrs_after = last->live_mrs;
	rep->publish_ms = now_ms() - t2;
	rep->applied = true;
	rep->incremental = true;
	return 1;

undo:
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].to != OVL_NONE && ch[i].from == OVL_NONE && h1->conns[ch[i].to].state != OVL_NONE)
			dp_state_release(h1->conns[ch[i].to].state);
	header_free(h2);
	ovl_inc_abort(&oi);
	ovl_inc_release(&oi);
	return 0;
}

int
dp_inc_delta_locked(const struct cfg_jv *root, struct dp_delta_report *rep)
{
	double t0 = now_ms();
	struct cfg_inc ci;
	int rc;

	if (!dp.cfg || cfg_inc_prepare(dp.cfg, root, &ci) != 1)
		return 0;
	rep->rr.load_ms = now_ms() - t0;
	rc = inc_apply(&ci, NULL, &rep->rr);
	if (rc == 1)
		rep->sum = ci.sum;
	cfg_inc_release(&ci);
	return rc;
}

int
dp_inc_reload_locked(struct cfg *file, struct dp_reload_report *rep)
{
	struct cfg_inc ci;
	int rc;

	double t0 = now_ms(), diff_ms;

	if (!dp.cfg || cfg_inc_diff(dp.cfg, file, &ci) != 1)
		return 0;
	diff_ms = now_ms() - t0;
	rc = inc_apply(&ci, file, rep);
	/* The difference is part of building the change. */
	rep->build_ms += diff_ms;
	cfg_inc_release(&ci);
	return rc;
}
