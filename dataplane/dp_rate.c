/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rate control in the data plane: shapers per lcore, the configuration
 * changes that reach them, and the DCQCN congestion, notification and
 * reaction points.  dp_rate.h explains the stages and who owns what.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "dp.h"
#include "dp_rate.h"

#define CC_RING_SIZE 4096
/* A READ response is counted as packets of this many payload bytes. */
#define READ_RESP_MTU 4096
/* AETH and ICRC of a READ response packet, beyond its BTH. */
#define READ_RESP_TRAILER (4 + 4)
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

/* What a queued frame needs again after the shaper: an mbuf dynamic field. */
struct dp_mbuf_meta {
	uint32_t charge;	/* the message's admission charge, for stage 2 */
	uint16_t out_port;
	uint16_t tenant;	/* tenant slot */
	uint8_t l3_off;
	uint8_t flags;		/* MF_* */
};

#define MF_V6 1u	/* IPv6: the ECN bits sit in the traffic class */
#define MF_CP 2u	/* the congestion point may mark it (DCQCN, not hairpin) */
#define MF_CC 4u	/* stage 1 of a DCQCN tenant: stage 2 follows */

/* The change list of a configuration (dp_rate_prepare), read by every lcore. */
enum { REC_TENANT, REC_ATTACH, REC_CAP, REC_REMOVE };

struct rate_rec {
	uint8_t op;
	uint16_t port;		/* L's port: which lcore paces the connection */
	uint32_t id;		/* state id, or for REC_TENANT the tenant slot */
	uint32_t tenant;	/* tenant slot; for REC_TENANT the index into tenants[] */
	uint64_t cap_bps;
};

struct dp_rate_sync {
	const struct ovl *ovl;
	uint64_t gen;
	uint32_t n_rec;
	struct rate_rec *rec;
	struct dp_tenant_rate *tenants;		/* by overlay tenant index */
	struct shaper_tenant_params *tparams;	/* the same, for the shaper */
	uint32_t watchdog_ms;
};

static struct {
	int meta_off;
	uint64_t gen;
	uint64_t ns_mul;	/* TSC to ns: (tsc * ns_mul) >> 32 */
} rate = { .meta_off = -1 };

static inline struct dp_mbuf_meta *
meta_of(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, rate.meta_off, struct dp_mbuf_meta *);
}

static inline uint64_t
tsc_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * rate.ns_mul) >> 32);
}

/* ECN bits of the IP header at @l3, and their rewrite (IPv4 checksum kept, RFC 1624). */
static inline uint8_t
ecn_get(const uint8_t *l3, bool v6)
{
	return v6 ? (l3[1] >> 4) & 3 : l3[1] & 3;
}

static inline void
ecn_set(uint8_t *l3, bool v6, uint8_t ecn)
{
	if (v6) {
		l3[1] = (uint8_t)((l3[1] & ~0x30) | ecn << 4);
	} else {
		uint16_t old = (uint16_t)(l3[0] << 8 | l3[1]), new;

		l3[1] = (uint8_t)((l3[1] & ~3) | ecn);
		new = (uint16_t)(l3[0] << 8 | l3[1]);
		uint16_t v = roce_csum_adjust((uint16_t)(l3[10] << 8 | l3[11]),
					      (uint32_t)(uint16_t)~old + new);
		l3[10] = (uint8_t)(v >> 8);
		l3[11] = (uint8_t)v;
	}
}

static inline uint32_t
rnd32(struct dp_rate_lcore *r)
{
	/* xorshift64*: the marking decision needs uniform bits, not secrecy. */
	r->rnd ^= r->rnd >> 12;
	r->rnd ^= r->rnd << 25;
	r->rnd ^= r->rnd >> 27;
	return (uint32_t)((r->rnd * 0x2545F4914F6CDD1Dull) >> 32);
}

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

	rate.ns_mul = (uint64_t)(((unsigned __int128)1000000000 << 32) / rte_get_tsc_hz());
	dp.conn_cap = o->max_conns;
	rate.meta_off = rte_mbuf_dynfield_register(&desc);
	if (rate.meta_off < 0)
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
		r->max_timers = o->max_conns;
		r->timers = rte_malloc_socket("cnp_timers", sizeof(*r->timers) * r->max_timers, 0, socket);
		snprintf(name, sizeof(name), "roce_cc_%u", l);
		r->cc_ring = rte_ring_create(name, CC_RING_SIZE, socket, RING_F_SC_DEQ);
		r->rnd = rte_rdtsc() | 1;
		if (!r->sh || !r->sh2 || !r->tenants || !r->timers || !r->cc_ring)
			return -1;
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

void
dp_rate_fini(void)
{
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		struct dp_rate_lcore *r = &dp.lcores[l].rate;
		struct shaper_out out[DP_BURST];
		unsigned n;

		/*
		 * What the shapers still hold goes back to the pool, counted.  One
		 * instant releases only what the tenant buckets and the connections'
		 * pacing allow at that instant, so each round is an hour later.
		 */
		for (int s = 0; s < 2; s++) {
			struct shaper *sh = s ? r->sh2 : r->sh;
			uint64_t now = UINT64_MAX / 2, hour = rte_get_tsc_hz() * 3600;
			struct shaper_stats st;

			for (uint32_t round = 0; sh && (shaper_stats(sh, &st), st.items_used) && round <= st.items;
			     round++, now += hour)
				while ((n = shaper_dequeue(sh, now, out, DP_BURST)) > 0)
					for (unsigned i = 0; i < n; i++) {
						struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)out[i].cookie;

						dp.lcores[l].stats.drops[DP_DROP_SHUTDOWN]++;
						dp.lcores[l].tenant_stats[meta_of(m)->tenant].drops++;
						rte_pktmbuf_free(m);
					}
		}
		rte_free(r->sh);
		rte_free(r->sh2);
		rte_free(r->tenants);
		rte_free(r->timers);
		rte_ring_free(r->cc_ring);
		memset(r, 0, sizeof(*r));
	}
	sync_free(dp.sync);
	dp.sync = NULL;
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


/* What tenant @t of @o asks of rate control. */
static int
tenant_rate_of(const struct ovl *o, uint32_t t, const bool *has_cap, struct dp_tenant_rate *tr,
	       struct shaper_tenant_params *tp)
{
	const struct cfg *c = o->cfg;
	const struct ovl_tenant *ot = &o->tenants[t];

	memset(tr, 0, sizeof(*tr));
	tr->cc = c->dcqcn.enabled;
	tr->ce_keep = c->dcqcn.ce_keep;
	tr->cnp_pass = c->dcqcn.cnp_pass;
	tr->shaped = ot->rate.set || has_cap[t] || tr->cc;
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

int
dp_rate_prepare(const struct ovl *o, const struct ovl *old, const uint8_t *changed, const uint8_t *kept_conn)
{
	struct dp_rate_sync *s;
	bool *has_cap = NULL;
	uint32_t cap = 0;
	int rc = -ENOMEM;

	if (!dp.conn_cap)
		return 0;
	s = calloc(1, sizeof(*s));
	has_cap = calloc(o->n_tenants + 1, sizeof(*has_cap));
	if (!s || !has_cap)
		goto fail;
	s->ovl = o;
	s->gen = ++rate.gen;
	s->watchdog_ms = o->cfg->shaping.watchdog_ms;
	s->tenants = calloc(o->n_tenants + 1, sizeof(*s->tenants));
	s->tparams = calloc(o->n_tenants + 1, sizeof(*s->tparams));
	if (!s->tenants || !s->tparams)
		goto fail;
	for (uint32_t i = 0; i < o->n_conns; i++)
		if (o->conns[i].rate_bps)
			has_cap[o->conns[i].tenant] = true;
	for (uint32_t t = 0; t < o->n_tenants; t++) {
		rc = tenant_rate_of(o, t, has_cap, &s->tenants[t], &s->tparams[t]);
		if (rc == 0)
			rc = rec_push(s, &cap, (struct rate_rec){ .op = REC_TENANT, .id = o->tenants[t].slot,
								   .tenant = t });
		if (rc)
			goto fail;
	}
	/*
	 * Connections: new ones attach, kept ones with a new cap take it; all
	 * of them when DCQCN was switched on or off (their reaction point's
	 * rate comes or goes).  The rest need nothing: an lcore's share of a
	 * reload is the size of the change.
	 */
	bool all = !old || old->cfg->dcqcn.enabled != o->cfg->dcqcn.enabled;

	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];

		if (!all && !changed[i])
			continue;
		if (rec_push(s, &cap, (struct rate_rec){ .op = REC_ATTACH, .port = c->l_port, .id = c->state,
							 .tenant = o->tenants[c->tenant].slot,
							 .cap_bps = c->rate_bps }))
			goto fail;
	}
	for (uint32_t i = 0; old && i < old->n_conns; i++) {
		const struct ovl_conn *c = &old->conns[i];

		if (kept_conn[i])
			continue;
		__atomic_store_n(&dp_conn_state(c->state)->egress.draining, 1, __ATOMIC_RELAXED);
		if (rec_push(s, &cap, (struct rate_rec){ .op = REC_REMOVE, .port = c->l_port, .id = c->state }))
			goto fail;
	}
	if (o->cfg->dcqcn.enabled && dp_rate_cc_alloc() < 0)
		goto fail;
	/* The previous list was applied by every lcore (dp_rate_wait). */
	sync_free(dp.sync);
	dp.sync = s;
	free(has_cap);
	return 0;
fail:
	for (uint32_t i = 0; old && i < old->n_conns; i++)
		if (!kept_conn[i])
			__atomic_store_n(&dp_conn_state(old->conns[i].state)->egress.draining, 0, __ATOMIC_RELAXED);
	sync_free(s);
	free(has_cap);
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

/* The removed connection @id has nothing queued any more: let its id go. */
static void
conn_drained(struct dp_rate_lcore *r, uint32_t id)
{
	shaper_conn_detach(r->sh, id);
	shaper_conn_detach(r->sh2, id);
	__atomic_store_n(&dp_conn_state(id)->egress.draining, 0, __ATOMIC_RELEASE);
}

static bool
conn_empty(const struct dp_rate_lcore *r, uint32_t id)
{
	struct shaper_conn_stats a, b;

	shaper_conn_stats(r->sh, id, &a);
	shaper_conn_stats(r->sh2, id, &b);
	return a.queued_items == 0 && b.queued_items == 0;
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
		else if (r->tenants[rr->tenant].cc && !st.cc_bps)
			dp_cc_state(rr->id)->rp.applied_bps = 0;
		return;
	}
	shaper_conn_attach(r->sh, rr->id, rr->tenant, rr->cap_bps, now);
	shaper_conn_attach(r->sh2, rr->id, rr->tenant, 0, now);
	if (r->tenants[rr->tenant].cc) {
		struct dp_cc_state *cs = dp_cc_state(rr->id);

		memset(cs, 0, sizeof(*cs));
	}
}

void
dp_rate_sync(struct dp_lcore *lc)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct dp_rate_sync *s = dp.sync;
	uint64_t now = rte_rdtsc();

	if (!r->sh || !s || s->ovl != lc->ovl) {
		r->synced = lc->ovl;
		return;
	}
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
			shaper_tenant_config(r->sh, rr->id, &up, now);
			shaper_tenant_config(r->sh2, rr->id, &tp, now);
			shaper_conn_attach(r->sh, dp.conn_cap + rr->id, rr->id, 0, now);
			shaper_conn_attach(r->sh2, dp.conn_cap + rr->id, rr->id, 0, now);
			break;
		}
		case REC_ATTACH:
			if (dp.ports[rr->port].lcore_idx == lc->idx)
				conn_apply(lc, rr, now);
			break;
		case REC_REMOVE:
			if (dp.ports[rr->port].lcore_idx != lc->idx)
				break;
			if (conn_empty(r, rr->id))
				conn_drained(r, rr->id);
			else
				r->n_draining++;
			break;
		}
	}
	r->synced = lc->ovl;
	__atomic_store_n(&r->sync_gen, s->gen, __ATOMIC_RELEASE);
}

/* ---- The frame in hand ---- */

void
dp_rate_note(struct dp_lcore *lc, uint32_t conn, uint32_t slot, uint8_t *data,
	     const struct roce_pkt *pkt, bool hairpin)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct shaper_pkt *sp = &r->sp;
	uint16_t f = pkt->flags;

	if (!r->sh || !r->tenants[slot].shaped)
		return;
	r->sp_shaped = true;
	sp->conn = conn;
	sp->charge = 0;
	sp->flags = 0;
	if (f & (ROCE_OPF_FIRST | ROCE_OPF_ONLY) || !(f & (ROCE_OPF_MIDDLE | ROCE_OPF_LAST)))
		sp->flags |= SHAPER_PKT_FIRST;
	if (!(f & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)))
		sp->flags |= SHAPER_PKT_LAST;
	/* Answers were paid for by the request that pulled them; CNPs are not traffic. */
	if (f & (ROCE_OPF_RESP | ROCE_OPF_CNP))
		sp->flags |= SHAPER_PKT_EXEMPT;
	else if ((f & (ROCE_OPF_REQ | ROCE_OPF_FIRST)) == (ROCE_OPF_REQ | ROCE_OPF_FIRST) &&
		 (pkt->exts & ROCE_EXT_RETH)) {
		/* A WRITE First: the whole message, in packets the size of this one's payload. */
		const struct roce_reth *reth = roce_pkt_ext(pkt, data, ROCE_EXT_RETH);
		uint32_t hdr = pkt->frame_len - pkt->payload_len - (uint32_t)sizeof(struct roce_reth);

		if (pkt->payload_len)
			sp->charge = (uint32_t)RTE_MIN(shaper_msg_wire_bytes(roce_reth_dmalen(reth),
						pkt->payload_len, hdr, sizeof(struct roce_reth)), UINT32_MAX);
	} else if ((f & ROCE_OPF_READ) && (pkt->exts & ROCE_EXT_RETH)) {
		/* A READ request pays here for the response it pulls toward its tenant. */
		const struct roce_reth *reth = roce_pkt_ext(pkt, data, ROCE_EXT_RETH);

		sp->charge = (uint32_t)RTE_MIN(shaper_msg_wire_bytes(roce_reth_dmalen(reth), READ_RESP_MTU,
					pkt->bth_off + (uint32_t)sizeof(struct roce_bth) + READ_RESP_TRAILER, 0) +
					pkt->frame_len, UINT32_MAX);
	}
	r->sp_l3 = (uint8_t)pkt->l3_off;
	r->sp_mf = (uint8_t)((pkt->ip_ver == 6 ? MF_V6 : 0) |
			     (r->tenants[slot].cc ? MF_CC | (hairpin ? 0 : MF_CP) : 0));
	r->sp_tenant = (uint16_t)slot;
}

static inline enum dp_drop
verdict_drop(enum shaper_verdict v)
{
	switch (v) {
	case SHAPER_OK:
		return DP_DROP_NONE;
	case SHAPER_DROP_WATCHDOG:
		return DP_DROP_SHAPING_WATCHDOG;
	case SHAPER_DROP_OVERFLOW:
		return DP_DROP_SHAPING_OVERFLOW;
	case SHAPER_DROP_NOBUFS:
		return DP_DROP_SHAPING_NOBUFS;
	default:
		return DP_DROP_SHAPING_DETACHED;
	}
}

enum dp_drop
dp_rate_enqueue(struct dp_lcore *lc, struct rte_mbuf *m, uint16_t out_port)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct dp_mbuf_meta *mm = meta_of(m);
	enum shaper_verdict v;

	r->sp.cookie = (uintptr_t)m;
	r->sp.bytes = m->pkt_len;
	mm->charge = r->sp.charge;
	mm->out_port = out_port;
	mm->tenant = r->sp_tenant;
	mm->l3_off = r->sp_l3;
	mm->flags = r->sp_mf;
	/* With DCQCN, stage 1's tenant has no bucket: the charge is kept for stage 2. */
	v = shaper_enqueue(r->sh, &r->sp, lc->now);
	if (v == SHAPER_OK)
		lc->stats.shaped++;
	return verdict_drop(v);
}

/* ---- DCQCN: reaction point ---- */

static void
rp_ready(struct dp_cc_state *cs, const struct dp_tenant_rate *tr)
{
	if (!cs->rp.ready) {
		dcqcn_rp_init(&cs->rp.rp, &tr->prof);
		cs->rp.ready = 1;
	}
}

/* Give the shaper the reaction point's rate when it changed; none while unlimited. */
static inline void
rp_apply(struct dp_rate_lcore *r, struct dp_cc_state *cs, uint32_t id, uint64_t now)
{
	uint64_t bps = cs->rp.rp.active ? dcqcn_rp_rate(&cs->rp.rp) : 0;

	if (bps != cs->rp.applied_bps) {
		shaper_conn_set_rate(r->sh, id, bps, now);
		cs->rp.applied_bps = bps;
	}
}

static void
rp_cnp(struct dp_lcore *lc, uint32_t slot, uint32_t id)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct dp_tenant_rate *tr = &r->tenants[slot];
	struct dp_cc_state *cs;

	if (!tr->cc)
		return;
	cs = dp_cc_state(id);
	rp_ready(cs, tr);
	dcqcn_rp_on_cnp(&cs->rp.rp, &tr->prof, r->now_ns, &cs->rp.ctr);
	rp_apply(r, cs, id, lc->now);
}

/* ---- DCQCN: notification point ---- */

/* A CNP for connection @c to the sender (R's host and pqpn), queued for after the burst. */
static void
cnp_send(struct dp_lcore *lc, const struct ovl *o, const struct ovl_conn *c, const struct dp_tenant_rate *tr,
	 uint16_t sport, uint8_t n_vlan, uint16_t tci)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct ovl_rewrite *w = &c->egress;
	struct roce_frame_spec spec = {
		.n_vlan = n_vlan,
		.vlan_tci = { tci },
		.ip_ver = w->ip_ver,
		.ttl = 64,
		.udp_sport = sport,
		.udp_dport = o->udp_port,
	};
	struct rte_mbuf *m;
	size_t len;

	if (r->n_cnp == DP_BURST || (m = rte_pktmbuf_alloc(dp.pool)) == NULL)
		return;
	memcpy(spec.dst_mac, w->eth, 6);
	memcpy(spec.src_mac, w->eth + 6, 6);
	memcpy(spec.src_ip, w->src_ip, w->addr_len);
	memcpy(spec.dst_ip, w->dst_ip, w->addr_len);
	len = roce_build_cnp(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), &spec, w->dqpn,
			     tr->prof.cnp_dscp, tr->prof.cnp_802p_prio);
	if (!len) {
		rte_pktmbuf_free(m);
		return;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	r->cnp[r->n_cnp] = m;
	r->cnp_port[r->n_cnp++] = w->port;
	lc->stats.cnp_sent++;
}

static void
timer_push(struct dp_rate_lcore *r, struct dp_cnp_timer t)
{
	uint32_t i;

	if (r->n_timers == r->max_timers)
		return;
	for (i = r->n_timers++; i > 0 && r->timers[(i - 1) / 2].due > t.due; i = (i - 1) / 2)
		r->timers[i] = r->timers[(i - 1) / 2];
	r->timers[i] = t;
}

static void
timer_pop(struct dp_rate_lcore *r)
{
	struct dp_cnp_timer last = r->timers[--r->n_timers];
	uint32_t i = 0, k;

	while ((k = 2 * i + 1) < r->n_timers) {
		if (k + 1 < r->n_timers && r->timers[k + 1].due < r->timers[k].due)
			k++;
		if (r->timers[k].due >= last.due)
			break;
		r->timers[i] = r->timers[k];
		i = k;
	}
	r->timers[i] = last;
}

/* Deferred CNPs whose window ended; those of a replaced configuration are forgotten. */
static void
timers_run(struct dp_lcore *lc)
{
	struct dp_rate_lcore *r = &lc->rate;

	while (r->n_timers && r->timers[0].due <= r->now_ns && r->n_cnp < DP_BURST) {
		struct dp_cnp_timer t = r->timers[0];
		const struct ovl *o = lc->ovl;

		timer_pop(r);
		if (t.ovl != o || o->conns[t.conn].state != t.state)
			continue;

		const struct ovl_conn *c = &o->conns[t.conn];
		const struct dp_tenant_rate *tr = &r->tenants[o->tenants[c->tenant].slot];
		struct dp_cc_state *cs = dp_cc_state(t.state);

		if (tr->cc && dcqcn_np_poll(&cs->np.np, &tr->prof, r->now_ns, &cs->np.ctr))
			cnp_send(lc, o, c, tr, t.sport, t.n_vlan, t.tci);
	}
}

bool
dp_cc_ingress(struct dp_lcore *lc, const struct ovl *o, uint32_t ci, uint8_t *data, const struct roce_pkt *pkt)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct ovl_conn *c = &o->conns[ci];
	uint32_t slot = o->tenants[c->tenant].slot;
	const struct dp_tenant_rate *tr = &r->tenants[slot];
	uint8_t *l3 = data + pkt->l3_off;
	bool v6 = pkt->ip_ver == 6;

	if (!tr->cc)
		return false;
	if (pkt->opcode == ROCE_OP_CNP) {
		uint16_t owner = dp.ports[c->l_port].lcore_idx;

		if (owner == lc->idx)
			rp_cnp(lc, slot, c->state);
		else
			rte_ring_enqueue(dp.lcores[owner].rate.cc_ring,
					 (void *)(uintptr_t)((uint64_t)slot << 32 | c->state));
		if (tr->cnp_pass)
			return false;
		lc->stats.cnp_consumed++;
		return true;
	}
	if (ecn_get(l3, v6) != DCQCN_ECN_CE)
		return false;

	struct dp_cc_state *cs = dp_cc_state(c->state);
	uint16_t sport = (uint16_t)(data[pkt->l4_off] << 8 | data[pkt->l4_off + 1]);
	uint16_t tci = pkt->n_vlan ? pkt->vlan_tci[0] : 0;
	bool was_pending = cs->np.np.pending;

	if (dcqcn_np_on_ce(&cs->np.np, &tr->prof, r->now_ns, &cs->np.ctr))
		cnp_send(lc, o, c, tr, sport, pkt->n_vlan ? 1 : 0, tci);
	else if (cs->np.np.pending && !was_pending)
		timer_push(r, (struct dp_cnp_timer){ .due = dcqcn_np_next_deadline(&cs->np.np, &tr->prof),
						     .state = c->state, .conn = ci, .ovl = o, .sport = sport,
						     .n_vlan = pkt->n_vlan ? 1 : 0, .tci = tci });
	if (!tr->ce_keep) {
		ecn_set(l3, v6, DCQCN_ECN_ECT0);
		lc->stats.ce_cleared++;
	}
	return false;
}

/* ---- Leaving the shapers ---- */

/* Stage 1 of a DCQCN tenant let a frame go: the reaction point counts it, stage 2 takes it. */
static void
stage2_enqueue(struct dp_lcore *lc, const struct shaper_out *so, struct rte_mbuf *m, struct dp_mbuf_meta *mm)
{
	struct dp_rate_lcore *r = &lc->rate;
	const struct dp_tenant_rate *tr = &r->tenants[mm->tenant];
	struct shaper_pkt p = {
		.cookie = so->cookie, .conn = so->conn, .bytes = so->bytes, .charge = mm->charge,
		.flags = (uint16_t)(so->flags & (SHAPER_PKT_FIRST | SHAPER_PKT_LAST | SHAPER_PKT_EXEMPT)),
	};
	enum shaper_verdict v;

	if (so->conn < dp.conn_cap && tr->cc) {
		struct dp_cc_state *cs = dp_cc_state(so->conn);

		rp_ready(cs, tr);
		dcqcn_rp_on_tx(&cs->rp.rp, &tr->prof, so->bytes, r->now_ns);
		rp_apply(r, cs, so->conn, lc->now);
	}
	mm->flags &= (uint8_t)~MF_CC;
	v = shaper_enqueue(r->sh2, &p, lc->now);
	if (v != SHAPER_OK) {
		lc->stats.drops[verdict_drop(v)]++;
		lc->tenant_stats[mm->tenant].drops++;
		rte_pktmbuf_free(m);
	}
}

/* The congestion point: mark an ECN-capable frame from the depth of its queue at stage 2. */
static inline void
cp_mark(struct dp_lcore *lc, const struct shaper_out *so, struct rte_mbuf *m, const struct dp_mbuf_meta *mm)
{
	const struct dp_tenant_rate *tr = &lc->rate.tenants[mm->tenant];
	uint8_t *l3 = rte_pktmbuf_mtod(m, uint8_t *) + mm->l3_off;
	bool v6 = mm->flags & MF_V6;
	uint8_t ecn = ecn_get(l3, v6), now;
	struct dcqcn_counters *ctr = so->conn < dp.conn_cap ? &dp_cc_state(so->conn)->rp.ctr : NULL;

	if (ecn != DCQCN_ECN_ECT0 && ecn != DCQCN_ECN_ECT1)
		return;
	now = dcqcn_cp_mark(&tr->prof, ecn, (uint64_t)so->conn_queued + so->bytes, rnd32(&lc->rate), ctr);
	if (now != ecn)
		ecn_set(l3, v6, now);
}

/* Backpressure on every shaped port before the item pools run out. */
static inline bool
pool_low(const struct dp_rate_lcore *r, unsigned n_rx)
{
	struct shaper_stats a, b;
	uint32_t room = (uint32_t)DP_BURST * (n_rx + 1);

	shaper_stats(r->sh, &a);
	shaper_stats(r->sh2, &b);
	return a.items - a.items_used < room || b.items - b.items_used < room;
}

void
dp_rate_unshape_check(struct dp_lcore *lc, uint64_t now)
{
	struct dp_rate_lcore *r = &lc->rate;

	for (uint32_t s = 0; s < DP_MAX_TENANTS && r->n_unshape; s++) {
		struct shaper_tenant_stats a, b;

		if (!r->tenants[s].unshape_pending)
			continue;
		shaper_tenant_stats(r->sh, s, now, &a);
		shaper_tenant_stats(r->sh2, s, now, &b);
		if (a.queued_bytes || b.queued_bytes)
			continue;
		r->tenants[s].unshape_pending = false;
		r->tenants[s].shaped = false;
		r->n_unshape--;
	}
}

unsigned
dp_rate_dequeue(struct dp_lcore *lc, uint64_t now, struct rte_mbuf **pkts, uint16_t *ports, unsigned max)
{
	struct dp_rate_lcore *r = &lc->rate;
	struct shaper_out out[DP_BURST];
	unsigned n, k = 0;
	void *msg;

	if (!r->sh)
		return 0;
	if (r->cc_any) {
		r->now_ns = tsc_ns(now);
		while (rte_ring_dequeue(r->cc_ring, &msg) == 0)
			rp_cnp(lc, (uint32_t)((uintptr_t)msg >> 32), (uint32_t)(uintptr_t)msg);
		if (r->n_timers)
			timers_run(lc);
	}
	r->pool_low = pool_low(r, lc->n_rx);
	max = RTE_MIN(max, (unsigned)DP_BURST);
	for (int stage = 1; stage <= 2 && k < max; stage++) {
		unsigned lim = max - k;

		/* Stage 1 holds what stage 2 has no room for: no loss between the two (PFC, as it were). */
		if (stage == 1 && r->cc_any) {
			struct shaper_stats st;

			shaper_stats(r->sh2, &st);
			lim = RTE_MIN(lim, st.items - st.items_used);
		}
		n = lim ? shaper_dequeue(stage == 1 ? r->sh : r->sh2, now, out, lim) : 0;
		for (unsigned i = 0; i < n; i++) {
			struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)out[i].cookie;
			struct dp_mbuf_meta *mm = meta_of(m);

			if (unlikely(r->n_draining) && out[i].conn < dp.conn_cap &&
			    __atomic_load_n(&dp_conn_state(out[i].conn)->egress.draining, __ATOMIC_RELAXED)) {
				lc->stats.drops[DP_DROP_CONN_REMOVED]++;
				lc->tenant_stats[mm->tenant].drops++;
				rte_pktmbuf_free(m);
				if (conn_empty(r, out[i].conn)) {
					conn_drained(r, out[i].conn);
					r->n_draining--;
				}
				continue;
			}
			if (mm->flags & MF_CC) {
				stage2_enqueue(lc, &out[i], m, mm);
				continue;
			}
			if (stage == 2 && (mm->flags & MF_CP))
				cp_mark(lc, &out[i], m, mm);
			pkts[k] = m;
			ports[k++] = mm->out_port;
		}
	}
	return k;
}

bool
dp_rate_idle(const struct dp_lcore *lc)
{
	struct shaper_stats a, b;

	if (!lc->rate.sh)
		return true;
	shaper_stats(lc->rate.sh, &a);
	shaper_stats(lc->rate.sh2, &b);
	return a.items_used == 0 && b.items_used == 0;
}

/* ---- Telemetry ---- */

void
dp_rate_tenant_stats(const struct ovl *o, uint32_t t, struct shaper_tenant_stats *st, uint64_t *cp_queued)
{
	uint32_t slot = o->tenants[t].slot;
	const struct dp_rate_lcore *r = NULL;
	uint64_t now = rte_rdtsc();
	struct shaper_tenant_stats b;

	memset(st, 0, sizeof(*st));
	*cp_queued = 0;
	/* A tenant's ports are polled by one lcore: its shapers hold the tenant. */
	for (uint16_t p = 0; p < o->n_ports && !r; p++)
		if (!o->ports[p].uplink && o->ports[p].tenant == t)
			r = &dp.lcores[dp.ports[p].lcore_idx].rate;
	if (!r || !r->sh)
		return;
	shaper_tenant_stats(r->sh, slot, now, st);
	if (!r->tenants[slot].cc)
		return;
	/* With DCQCN the bucket, its rate and what left are stage 2's; queues add up. */
	shaper_tenant_stats(r->sh2, slot, now, &b);
	st->rate_bps = b.rate_bps;
	st->burst_bytes = b.burst_bytes;
	st->achieved_bps = b.achieved_bps;
	st->tokens = b.tokens;
	*cp_queued = b.queued_bytes;
	st->queued_bytes += b.queued_bytes;
	st->full |= b.full;
	st->deq_pkts = b.deq_pkts;
	st->deq_bytes = b.deq_bytes;
	st->charged_bytes = b.charged_bytes;
	for (int d = 0; d < SHAPER_DROP_MAX; d++) {
		st->drop_pkts[d] += b.drop_pkts[d];
		st->drop_msgs[d] += b.drop_msgs[d];
	}
}

bool
dp_rate_conn_stats(const struct ovl *o, uint32_t ci, struct shaper_conn_stats *st)
{
	const struct ovl_conn *c = &o->conns[ci];
	const struct dp_rate_lcore *r = &dp.lcores[dp.ports[c->l_port].lcore_idx].rate;
	struct shaper_conn_stats b;

	memset(st, 0, sizeof(*st));
	if (!r->sh || c->state >= dp.conn_cap)
		return false;
	shaper_conn_stats(r->sh, c->state, st);
	shaper_conn_stats(r->sh2, c->state, &b);
	st->queued_bytes += b.queued_bytes;
	st->queued_items += b.queued_items;
	return true;
}

bool
dp_cc_conn_snapshot(const struct ovl *o, uint32_t ci, struct dp_cc_snapshot *snap)
{
	const struct ovl_conn *c = &o->conns[ci];
	const struct dp_rate_lcore *r = &dp.lcores[dp.ports[c->l_port].lcore_idx].rate;
	const struct dp_tenant_rate *tr;
	const struct dp_cc_state *cs;
	struct dcqcn_rp rp;

	memset(snap, 0, sizeof(*snap));
	if (!r->sh || c->state >= dp.conn_cap || !dp.cc_chunks[c->state >> DP_STATE_CHUNK_SHIFT])
		return false;
	tr = &r->tenants[o->tenants[c->tenant].slot];
	if (!tr->cc)
		return false;
	cs = dp_cc_state(c->state);
	/* A copy, brought to now: the lcore evaluates its timers lazily. */
	rp = cs->rp.rp;
	if (cs->rp.ready)
		dcqcn_rp_advance(&rp, &tr->prof, tsc_ns(rte_rdtsc()));
	else
		dcqcn_rp_init(&rp, &tr->prof);
	snap->limited = rp.active;
	snap->rate_bps = dcqcn_rp_rate(&rp);
	snap->target_bps = dcqcn_rp_target(&rp);
	snap->alpha = dcqcn_rp_alpha(&rp);
	snap->stage = dcqcn_rp_stage(&rp, &tr->prof);
	snap->ctr = cs->rp.ctr;
	snap->ctr.np_ecn_marked_roce_packets += cs->np.ctr.np_ecn_marked_roce_packets;
	snap->ctr.np_cnp_sent += cs->np.ctr.np_cnp_sent;
	return true;
}
