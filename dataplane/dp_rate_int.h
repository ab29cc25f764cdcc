/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rate control internals shared by the per-packet path (path/dp_shape.c,
 * path/dp_cc.c) and the control side (control/dp_rate_ctl.c): the mbuf
 * field that a queued frame carries, the clock conversion, ECN bits, and the
 * reaction point's glue to the shaper.  dp_rate.h is the interface.
 */
#ifndef DP_RATE_INT_H
#define DP_RATE_INT_H

#include <rte_mbuf_dyn.h>

#include "dp.h"
#include "dp_rate.h"

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
#define MF_FOREIGN 8u	/* another lcore runs its connection's reaction point: leave it alone */

/* Set at start-up (dp_rate_init), read by everyone. */
struct dp_rate_globals {
	int meta_off;
	uint64_t gen;		/* of the latest change list */
	uint64_t ns_mul;	/* TSC to ns: (tsc * ns_mul) >> 32 */
	struct shaper_shared *shared; /* [DP_MAX_TENANTS] by slot: tenant buckets of several lcores; NULL: one lcore */
};

extern struct dp_rate_globals dp_rate_g;

static inline struct dp_mbuf_meta *
meta_of(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, dp_rate_g.meta_off, struct dp_mbuf_meta *);
}

static inline uint64_t
tsc_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * dp_rate_g.ns_mul) >> 32);
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


/* Shaper verdicts as drop reasons. */
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

/* The reaction point of @cs, initialised from the tenant's profile on first use. */
static inline void
rp_ready(struct dp_cc_state *cs, const struct dp_tenant_rate *tr)
{
	if (!cs->rp.ready) {
		dcqcn_rp_init(&cs->rp.rp, &tr->prof);
		cs->rp.ready = 1;
	}
}

/*
 * Give the shaper the reaction point's rate when it changed; none while
 * unlimited.  Only the lcore that owns the connection's egress half runs
 * its reaction point, so only its shaper paces it at the DCQCN rate.
 */
static inline void
rp_apply(struct dp_rate_lcore *r, struct dp_cc_state *cs, uint32_t id, uint64_t now)
{
	uint64_t bps = cs->rp.rp.active ? dcqcn_rp_rate(&cs->rp.rp) : 0;

	if (bps != cs->rp.applied_bps) {
		shaper_conn_set_rate(r->sh, id, bps, now);
		cs->rp.applied_bps = bps;
	}
}

/* The removed connection @id has nothing queued any more: let its id go. */
static inline void
conn_drained(struct dp_rate_lcore *r, uint32_t id)
{
	shaper_conn_detach(r->sh, id);
	shaper_conn_detach(r->sh2, id);
	/* One lcore fewer holds it (dp_rate_ctl.c's conn_remove() counted them all). */
	__atomic_fetch_sub(&dp_conn_state(id)->egress.draining, 1, __ATOMIC_RELEASE);
}

static inline bool
conn_empty(const struct dp_rate_lcore *r, uint32_t id)
{
	struct shaper_conn_stats a, b;

	shaper_conn_stats(r->sh, id, &a);
	shaper_conn_stats(r->sh2, id, &b);
	return a.queued_items == 0 && b.queued_items == 0;
}


/* The reaction point takes a CNP for connection @id of tenant slot @slot (dp_cc.c). */
void dp_cc_rp_cnp(struct dp_lcore *lc, uint32_t slot, uint32_t id);

/* Deferred CNPs whose window ended (dp_cc.c). */
void dp_cc_timers_run(struct dp_lcore *lc);

/*
 * The notification point's CNP (dp_cc.c): built from @spec to DestQP @dqpn
 * with the tenant's CNP DSCP and priority, queued for port @port after the
 * burst, counted in cnp_sent.  False when no room or mbuf was left.
 */
bool dp_cc_cnp_emit(struct dp_lcore *lc, const struct dp_tenant_rate *tr, const struct roce_frame_spec *spec,
		    uint32_t dqpn, uint16_t port);

/* A deferred CNP: into the lcore's heap of timers (dp_cc.c). */
void dp_cc_timer_push(struct dp_rate_lcore *r, struct dp_cnp_timer t);

/* A deferred CNP of a UD sender came due (dp_cc_ud.c). */
void dp_cc_ud_timer(struct dp_lcore *lc, const struct dp_cnp_timer *t);

#endif /* DP_RATE_INT_H */
