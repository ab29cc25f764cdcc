/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rate control, the control side: the shapers and DCQCN state created at
 * start-up and released at exit, the change list a configuration brings and
 * its application by each lcore between bursts, and what telemetry reads.
 * dp_rate.h explains the stages and who owns what.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "dp_rate_int.h"

#define CC_RING_SIZE 4096

static_assert(DP_MAX_LCORES <= SHAPER_SHARED_MAX, "every lcore shares a tenant bucket");

/*
 * How late the shapers may be served without losing rate.  The shaper's own
 * defaults (a tenant bucket of 10 us at its rate, a connection catching up
 * 20 us) suit a loop that serves it every microsecond; this one is late by
 * an rx burst's work, or by as long as the hypervisor takes the core, and
 * whatever lateness the bucket or the slack does not cover is rate lost for
 * good: 2 to 8 % below a 2 Gb/s tenant cap and 2 to 6 % below a 1.5 Gb/s QP
 * cap on a 2-core VM, 0.2 to 1 % with 1 ms (tests/rate).  So: 1 ms at the
 * rate, the depth tc-tbf asks for (rate / HZ), as a tenant's burst when the
 * configuration gives none, and as every connection's catch-up.
 */
#define CATCHUP_US 1000
/*
 * The lcore reads its clock once per loop iteration, so every frame of an rx
 * burst carries the same `now`: a connection with two frames in one burst
 * would find the second one a few nanoseconds early for its pacing and queue
 * it, although it leaves as soon either way.  Cut-through tolerates that
 * much: a connection may run 10 us ahead of its pacing, a burst of 10 us at
 * its cap; its long-run rate is the cap's.
 */
#define CUT_SLACK_US 10

/* The change list of a configuration (dp_rate_prepare), read by every lcore. */
enum { REC_TENANT, REC_ATTACH, REC_CAP, REC_REMOVE };

struct rate_rec {
	uint8_t op;
	uint16_t port;		/* L's port: its queue 0's lcore stands for the owner until one takes the egress half */
	uint32_t id;		/* state id, or for REC_TENANT the tenant slot */
	uint32_t tenant;	/* tenant slot; for REC_TENANT the index into tenants[] */
	uint64_t cap_bps;
};

struct dp_rate_sync {
	uint64_t first_seq;	/* the seq of the first overlay published after it: the one it was made for */
	uint64_t gen;
	uint32_t n_rec;
	struct rate_rec *rec;
	struct dp_tenant_rate *tenants;		/* by overlay tenant index */
	struct shaper_tenant_params *tparams;	/* the same, for the shaper */
	uint32_t watchdog_ms;
};

/* Set at start-up, read by everyone: dp_rate_int.h. */
struct dp_rate_globals dp_rate_g = { .meta_off = -1 };

/* ---- Start-up ---- */

static struct shaper *
shaper_make(uint32_t conns, uint32_t items, uint32_t watchdog_ms, int socket)
{
	struct shaper_params p = {
		.hz = rte_get_tsc_hz(),
		.n_conns = conns,
		.n_tenants = DP_MAX_TENANTS,
		.n_items = items,
		.watchdog_ms = watchdog_ms,
		.conn_slack_ns = CATCHUP_US * 1000,
		.cut_slack_ns = CUT_SLACK_US * 1000,
	};
	size_t sz = shaper_memsize(&p);
	void *mem = sz ? rte_zmalloc_socket("shaper", sz, RTE_CACHE_LINE_SIZE, socket) : NULL;
	struct shaper *sh = mem ? shaper_init(mem, sz, &p, rte_rdtsc()) : NULL;

	if (!sh)
		rte_free(mem);
	return sh;
}

int
dp_rate_init(const struct dp_rate_opts *o)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "roce_vswitch_shaper_meta",
		.size = sizeof(struct dp_mbuf_meta),
		.align = __alignof__(struct dp_mbuf_meta),
	};
	char name[RTE_RING_NAMESIZE];

	dp_rate_g.ns_mul = (uint64_t)(((unsigned __int128)1000000000 << 32) / rte_get_tsc_hz());
	dp.conn_cap = o->max_conns;
	dp_rate_g.meta_off = rte_mbuf_dynfield_register(&desc);
	if (dp_rate_g.meta_off < 0)
		return -1;
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		struct dp_rate_lcore *r = &dp.lcores[l].rate;
		int socket = (int)rte_lcore_to_socket_id(dp.lcores[l].lcore_id);
		uint32_t conns = o->max_conns + DP_MAX_TENANTS;

		r->sh = shaper_make(conns, o->queue_mbufs, CFG_DEFAULT_WATCHDOG_MS, socket);
		/* Stage 2 never trips a watchdog of its own: stage 1's backpressure covers it. */
		r->sh2 = shaper_make(conns, o->queue_mbufs, UINT32_MAX / 2, socket);
		r->tenants = rte_zmalloc_socket("tenant_rate", sizeof(*r->tenants) * DP_MAX_TENANTS,
						RTE_CACHE_LINE_SIZE, socket);
		r->max_timers = o->max_conns + DP_UD_NP_SLOTS;
		r->timers = rte_malloc_socket("cnp_timers", sizeof(*r->timers) * r->max_timers, 0, socket);
		r->ud_np = rte_zmalloc_socket("ud_np", sizeof(*r->ud_np) * DP_UD_NP_SLOTS, RTE_CACHE_LINE_SIZE, socket);
		snprintf(name, sizeof(name), "roce_cc_%u", l);
		r->cc_ring = rte_ring_create(name, CC_RING_SIZE, socket, RING_F_SC_DEQ);
		r->rnd = rte_rdtsc() | 1;
		if (!r->sh || !r->sh2 || !r->tenants || !r->timers || !r->ud_np || !r->cc_ring)
			return -1;
	}
	/*
	 * Several lcores: a tenant's frames may arrive on any of them, so its
	 * bucket is shared by their shapers (docs/scale-out.md).
	 */
	if (dp.n_lcores > 1) {
		dp_rate_g.shared = rte_zmalloc("shared_buckets", sizeof(*dp_rate_g.shared) * DP_MAX_TENANTS,
					       RTE_CACHE_LINE_SIZE);
		if (!dp_rate_g.shared)
			return -1;
		for (uint32_t t = 0; t < DP_MAX_TENANTS; t++)
			shaper_shared_init(&dp_rate_g.shared[t], rte_rdtsc(), rte_get_tsc_hz());
	}
	return 0;
}

static void
sync_free(struct dp_rate_sync *s)
{
	if (!s)
		return;
	free(s->rec);
	free(s->tenants);
	free(s->tparams);
	free(s);
}

/* A shaper's item handed back at exit: counted as a shutdown drop, freed. */
static void
fini_drop(const struct shaper_out *o, void *arg)
{
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)o->cookie;
	uint16_t l = (uint16_t)(uintptr_t)arg;

	dp.lcores[l].stats.drops[DP_DROP_SHUTDOWN]++;
	dp.lcores[l].tenant_stats[meta_of(m)->tenant].drops++;
	rte_pktmbuf_free(m);
}

void
dp_rate_fini(void)
{
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		struct dp_rate_lcore *r = &dp.lcores[l].rate;

		/* What the shapers still hold goes back to the pool, counted. */
		shaper_flush(r->sh, rte_get_tsc_cycles(), fini_drop, (void *)(uintptr_t)l);
		shaper_flush(r->sh2, rte_get_tsc_cycles(), fini_drop, (void *)(uintptr_t)l);
		rte_free(r->sh);
		rte_free(r->sh2);
		rte_free(r->tenants);
		rte_free(r->timers);
		rte_free(r->ud_np);
		rte_ring_free(r->cc_ring);
		memset(r, 0, sizeof(*r));
	}
	sync_free(dp.sync);
	dp.sync = NULL;
	rte_free(dp_rate_g.shared);
	dp_rate_g.shared = NULL;
	for (uint32_t i = 0; i < DP_STATE_CHUNKS; i++) {
		rte_free(dp.cc_chunks[i]);
		dp.cc_chunks[i] = NULL;
	}
}

int
dp_rate_cc_alloc(void)
{
	uint32_t chunks = (dp.n_states + (1u << DP_STATE_CHUNK_SHIFT) - 1) >> DP_STATE_CHUNK_SHIFT;

	for (uint32_t i = 0; i < chunks; i++) {
		if (dp.cc_chunks[i])
			continue;
		dp.cc_chunks[i] = rte_zmalloc("cc_state", sizeof(struct dp_cc_state) << DP_STATE_CHUNK_SHIFT,
					      RTE_CACHE_LINE_SIZE);
		if (!dp.cc_chunks[i])
			return -ENOMEM;
	}
	return 0;
}

/* ---- Configuration changes ---- */

static int
rec_push(struct dp_rate_sync *s, uint32_t *cap, struct rate_rec r)
{
	if (s->n_rec == *cap) {
		uint32_t n = *cap ? *cap * 2 : 1024;
		struct rate_rec *p = realloc(s->rec, sizeof(*p) * n);

		if (!p)
			return -ENOMEM;
		s->rec = p;
		*cap = n;
	}
	s->rec[s->n_rec++] = r;
	return 0;
}


bool
dp_rate_tenant_shaped(const struct ovl *o, uint32_t t)
{
	return o->tenants[t].rate.set || o->tenants[t].n_capped > 0 || o->cfg->dcqcn.enabled;
}

/* What tenant @t of @o asks of rate control. */
static int
tenant_rate_of(const struct ovl *o, uint32_t t, struct dp_tenant_rate *tr, struct shaper_tenant_params *tp)
{
	const struct cfg *c = o->cfg;
	const struct ovl_tenant *ot = &o->tenants[t];

	memset(tr, 0, sizeof(*tr));
	tr->cc = c->dcqcn.enabled;
	tr->ce_keep = c->dcqcn.ce_keep;
	tr->cnp_pass = c->dcqcn.cnp_pass;
	tr->shaped = dp_rate_tenant_shaped(o, t);
	if (tr->cc && dcqcn_profile_build(&tr->prof, &c->tenants[t].dcqcn, c->dcqcn.line_rate_bps) != 0)
		return -EINVAL;
	tp->rate_bps = ot->rate.set ? ot->rate.bps : 0;
	tp->burst_bytes = ot->rate.set ? ot->rate.burst_bytes : 0;
	if (ot->rate.set && tp->burst_bytes == 0)
		/* At least an MTU, as the shaper's own default. */
		tp->burst_bytes = RTE_MAX(ot->rate.bps / 8 * CATCHUP_US / 1000000, (uint64_t)4096);
	tp->qlimit_bytes = c->shaping.queue_bytes;
	tp->qlimit_hard_bytes = 0;
	return 0;
}

/* A change list for @o, with every tenant's rates (a handful: they are all sent). */
static int
sync_begin(const struct ovl *o, struct dp_rate_sync **out, uint32_t *cap)
{
	struct dp_rate_sync *s = calloc(1, sizeof(*s));
	int rc = -ENOMEM;

	*out = s;
	if (!s)
		return rc;
	s->first_seq = dp.ovl_seq + 1;
	s->gen = ++dp_rate_g.gen;
	s->watchdog_ms = o->cfg->shaping.watchdog_ms;
	s->tenants = calloc(o->n_tenants + 1, sizeof(*s->tenants));
	s->tparams = calloc(o->n_tenants + 1, sizeof(*s->tparams));
	if (!s->tenants || !s->tparams)
		return rc;
	for (uint32_t t = 0; t < o->n_tenants; t++) {
		rc = tenant_rate_of(o, t, &s->tenants[t], &s->tparams[t]);
		if (rc == 0)
			rc = rec_push(s, cap, (struct rate_rec){ .op = REC_TENANT, .id = o->tenants[t].slot, .tenant = t });
		if (rc)
			return rc;
	}
	return 0;
}

static int
conn_attach(struct dp_rate_sync *s, uint32_t *cap, const struct ovl *o, const struct ovl_conn *c)
{
	return rec_push(s, cap, (struct rate_rec){ .op = REC_ATTACH, .port = c->l_port, .id = c->state,
						    .tenant = o->tenants[c->tenant].slot, .cap_bps = c->rate_bps });
}

/* A removed connection: its queued frames leave as conn_removed drops, then its id is free. */
static int
conn_remove(struct dp_rate_sync *s, uint32_t *cap, const struct ovl_conn *c)
{
	/* Every lcore's shaper may hold its frames: each lets go of it once its own queue is empty. */
	__atomic_store_n(&dp_conn_state(c->state)->egress.draining, (uint8_t)dp.n_lcores, __ATOMIC_RELAXED);
	return rec_push(s, cap, (struct rate_rec){ .op = REC_REMOVE, .port = c->l_port, .id = c->state });
}

static int
sync_end(const struct ovl *o, struct dp_rate_sync *s)
{
	if (o->cfg->dcqcn.enabled && dp_rate_cc_alloc() < 0)
		return -ENOMEM;
	/* The previous list was applied by every lcore (a batch in place may not have waited). */
	dp_rate_wait();
	sync_free(dp.sync);
	dp.sync = s;
	__atomic_store_n(&dp.sync_gen, s->gen, __ATOMIC_RELEASE);
	return 0;
}

int
dp_rate_prepare(const struct ovl *o, const struct ovl *old, const uint8_t *changed, const uint8_t *kept_conn)
{
	struct dp_rate_sync *s;
	uint32_t cap = 0;
	int rc;

	if (!dp.conn_cap)
		return 0;
	if ((rc = sync_begin(o, &s, &cap)))
		goto fail;
	/*
	 * Connections: new ones attach, kept ones with a new cap take it; all
	 * of them when DCQCN was switched on or off (their reaction point's
	 * rate comes or goes).  The rest need nothing: an lcore's share of a
	 * reload is the size of the change.
	 */
	bool all = !old || old->cfg->dcqcn.enabled != o->cfg->dcqcn.enabled;

	rc = -ENOMEM;
	for (uint32_t i = 0; i < o->n_conns; i++)
		if (ovl_live(&o->conns[i]) && (all || changed[i]) && conn_attach(s, &cap, o, &o->conns[i]))
			goto fail;
	for (uint32_t i = 0; old && i < old->n_conns; i++)
		if (ovl_live(&old->conns[i]) && !kept_conn[i] && conn_remove(s, &cap, &old->conns[i]))
			goto fail;
	if ((rc = sync_end(o, s)))
		goto fail;
	return 0;
fail:
	for (uint32_t i = 0; old && i < old->n_conns; i++)
		if (ovl_live(&old->conns[i]) && !kept_conn[i])
			__atomic_store_n(&dp_conn_state(old->conns[i].state)->egress.draining, 0, __ATOMIC_RELAXED);
	sync_free(s);
	return rc == 0 ? -ENOMEM : rc;
}

int
dp_rate_prepare_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n,
			unsigned what)
{
	struct dp_rate_sync *s;
	uint32_t cap = 0;
	int rc;

	if (!dp.conn_cap)
		return 0;
	if ((rc = sync_begin(o, &s, &cap)))
		goto fail;
	rc = -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const struct ovl_conn *to = ch[i].to == OVL_NONE ? NULL : &o->conns[ch[i].to];
		const struct ovl_conn *from = ch[i].from == OVL_NONE ? NULL : &old->conns[ch[i].from];

		if ((what & DP_RATE_ATTACH) && to && (!from || from->rate_bps != to->rate_bps) &&
		    conn_attach(s, &cap, o, to))
			goto fail;
		if ((what & DP_RATE_REMOVE) && !to && conn_remove(s, &cap, from))
			goto fail;
	}
	if ((rc = sync_end(o, s)))
		goto fail;
	return 0;
fail:
	for (uint32_t i = 0; (what & DP_RATE_REMOVE) && i < n; i++)
		if (ch[i].to == OVL_NONE)
			__atomic_store_n(&dp_conn_state(old->conns[ch[i].from].state)->egress.draining, 0,
					 __ATOMIC_RELAXED);
	sync_free(s);
	return rc == 0 ? -ENOMEM : rc;
}

void
dp_rate_wait(void)
{
	if (!dp.sync || !dp.running)
		return;
	for (uint16_t l = 0; l < dp.n_lcores; l++)
		while (__atomic_load_n(&dp.lcores[l].rate.sync_gen, __ATOMIC_ACQUIRE) != dp.sync->gen &&
		       dp.running && !dp.quit)
			rte_pause();
}

/* Attach @id in both stages, or change its cap; a DCQCN connection starts unlimited. */
static void
conn_apply(struct dp_lcore *lc, const struct rate_rec *rr, uint64_t now)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct shaper_conn_stats st;

	shaper_conn_stats(r->sh, rr->id, &st);
	if (st.attached && st.tenant == rr->tenant) {
		shaper_conn_set_cap(r->sh, rr->id, rr->cap_bps, now);
		/* DCQCN turned off: the reaction point's rate no longer applies. */
		if (!r->tenants[rr->tenant].cc && st.cc_bps)
			shaper_conn_set_rate(r->sh, rr->id, 0, now);
		else if (r->tenants[rr->tenant].cc && !st.cc_bps &&
			 dp_half_owner(&dp_conn_state(rr->id)->egress, dp.ports[rr->port].lcore_idx) == lc->idx)
			dp_cc_state(rr->id)->rp.applied_bps = 0;
		return;
	}
	/* Every lcore attaches it.  Its DCQCN state was reset with its state id (dp_ids.c). */
	shaper_conn_attach(r->sh, rr->id, rr->tenant, rr->cap_bps, now);
	shaper_conn_attach(r->sh2, rr->id, rr->tenant, 0, now);
}

void
dp_rate_sync(struct dp_lcore *lc)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct dp_rate_sync *s;
	uint64_t now = rte_rdtsc();

	/*
	 * The latest list once, at the first overlay this lcore takes from
	 * those it was made for on: an lcore that skipped that overlay (two
	 * changes within one iteration) applies it at the next one.  Its
	 * generation is read first: the list cannot be freed before this lcore
	 * has applied it (dp_rate_wait()).
	 */
	r->synced_seq = lc->ovl->seq;
	if (!r->sh || __atomic_load_n(&dp.sync_gen, __ATOMIC_ACQUIRE) == r->sync_gen)
		return;
	s = dp.sync;
	if (!s || lc->ovl->seq < s->first_seq)
		return;
	shaper_set_watchdog(r->sh, s->watchdog_ms);
	r->cc_any = false;
	for (uint32_t i = 0; i < s->n_rec; i++) {
		const struct rate_rec *rr = &s->rec[i];

		switch (rr->op) {
		case REC_TENANT: {
			struct dp_tenant_rate *tr = &r->tenants[rr->id];
			struct shaper_tenant_params tp = s->tparams[rr->tenant], up = tp;
			bool was = tr->shaped;

			*tr = s->tenants[rr->tenant];
			/* Frames already queued leave before the tenant bypasses the shaper. */
			if (was && !tr->shaped) {
				tr->shaped = true;
				tr->unshape_pending = true;
				r->n_unshape++;
			}
			r->cc_any |= tr->cc;
			/* With DCQCN the bucket is stage 2's; stage 1 only paces and backpressures. */
			up.rate_bps = tr->cc ? 0 : tp.rate_bps;
			/* The bucket is shared by every lcore's shaper when there are several (dp_rate_init). */
			struct shaper_shared *shb = dp_rate_g.shared && tp.rate_bps ? &dp_rate_g.shared[rr->id] : NULL;

			up.shared = tr->cc ? NULL : shb;
			tp.shared = tr->cc ? shb : NULL;
			up.shared_id = tp.shared_id = lc->idx;
			shaper_tenant_config(r->sh, rr->id, &up, now);
			shaper_tenant_config(r->sh2, rr->id, &tp, now);
			shaper_conn_attach(r->sh, dp.conn_cap + rr->id, rr->id, 0, now);
			shaper_conn_attach(r->sh2, dp.conn_cap + rr->id, rr->id, 0, now);
			break;
		}
		case REC_ATTACH:
			/* Its frames may arrive on any lcore: every shaper knows it. */
			conn_apply(lc, rr, now);
			break;
		case REC_REMOVE:
			if (conn_empty(r, rr->id))
				conn_drained(r, rr->id);
			else
				r->n_draining++;
			break;
		}
	}
	r->n_shaped = 0;
	for (uint32_t t = 0; t < DP_MAX_TENANTS; t++)
		r->n_shaped += r->tenants[t].shaped;
	__atomic_store_n(&r->sync_gen, s->gen, __ATOMIC_RELEASE);
}
