/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rate control in the data plane: the shaper (shaper/) and the three DCQCN
 * roles (dcqcn/) driven from the forwarding loop.
 *
 * Stages.  A frame a tenant sends toward the fabric (or through the hairpin)
 * goes through the lcore's shaper when its tenant is shaped (a tenant rate,
 * a QP rate, or DCQCN).  Without DCQCN one shaper does everything: the
 * connection's pacing at its QP cap, the tenant's bucket, fair share,
 * backpressure and the watchdog.  With DCQCN a frame passes two shapers in
 * series, as it would pass a NIC and then a switch: stage 1 paces each
 * connection at min(QP cap, DCQCN rate) (the reaction point's rate limiter),
 * stage 2 holds the tenant's bucket and is the congestion point's queue,
 * whose depth marks ECN-capable frames as they leave.  A tenant cap below the
 * offered load is then a bottleneck DCQCN settles on.  Stage 1 hands stage 2
 * no more than its item pool has room for, so nothing is lost between the two
 * (a lossless link, as PFC makes it); what the shapers release leaves at once.
 *
 * Ownership.  Every lcore's shaper knows every connection (its shaper
 * connection id is its stable state id) and paces the frames that lcore
 * received.  RSS keeps a QP on one queue, so one lcore paces it; its
 * reaction point runs on the lcore that owns the connection's egress half
 * (dp.h), and only that lcore's shaper applies the DCQCN rate.  A tenant's
 * frames may arrive on several lcores: with more than one lcore its bucket is
 * shared by their shapers (struct shaper_shared), so that its cap holds
 * over all of them; queues, backpressure and the watchdog stay per lcore.
 * UD frames of a
 * tenant share one shaper connection (id conn_cap + tenant slot): the tenant
 * bucket applies to them, QP caps do not.
 *
 * Configuration changes reach the shapers as a list of changes built with
 * the new overlay (dp_rate_prepare) and applied by each lcore when it first
 * runs on that overlay (dp_rate_sync); the reload waits until every lcore
 * has applied it (dp_rate_wait).  A removed connection's queued frames leave
 * as drops under conn_removed, at their paced time; its state id is reused
 * only once its queue is empty.
 */
#ifndef DP_RATE_H
#define DP_RATE_H

#include <rte_mbuf.h>

#include "dp.h"

/* The output port of a frame the path consumed (a CNP for the reaction point). */
#define DP_PORT_NONE 0xffffu

/* Per-lcore shaper sizes, from the command line. */
struct dp_rate_opts {
	uint32_t max_conns;	/* --max-connections: connection state ids below this */
	uint32_t queue_mbufs;	/* --queue-mbufs: frames each lcore's shapers hold at most */
};

/* Start-up, after lcores_assign(): shapers, rings, the mbuf field. 0 or -1. */
int dp_rate_init(const struct dp_rate_opts *o);
void dp_rate_fini(void);

/*
 * Reload, under ctl_lock.  dp_rate_prepare() records what changes between
 * @old (NULL at start-up) and @o, whose ids are assigned: @changed[i] is
 * non-zero for a connection of @o that is new or has a new cap, @kept_conn[j]
 * for a connection of @old that stays.  Call it before publishing @o.  dp_rate_wait() returns once every running lcore applied it.
 */
int dp_rate_prepare(const struct ovl *o, const struct ovl *old, const uint8_t *changed,
		    const uint8_t *kept_conn);

/*
 * As dp_rate_prepare(), for the connections an incremental change touched
 * (ovl_inc.h), in two steps: DP_RATE_ATTACH (new connections and new caps),
 * published before the change reaches the tables, and DP_RATE_REMOVE (removed
 * connections' queues dropped), published after.
 */
enum { DP_RATE_ATTACH = 1, DP_RATE_REMOVE = 2 };

/*
 * Does tenant @t of @o go through the shapers (a rate, a capped connection,
 * or DCQCN)?  Frames of a tenant that does not bypass them, so its new
 * connections need no attachment before they forward.
 */
bool dp_rate_tenant_shaped(const struct ovl *o, uint32_t t);
int dp_rate_prepare_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n,
			    unsigned what);
void dp_rate_wait(void);

/* Allocate the DCQCN state of every connection id handed out so far. 0 or -ENOMEM. */
int dp_rate_cc_alloc(void);

/* Lcore side: the latest configuration's rate changes applied (dp_loop.c asks when its overlay is newer). */
void dp_rate_sync(struct dp_lcore *lc);

/*
 * True while the tenant of this port has full queues, or is no longer
 * shaped and still has frames queued (they leave first, and new frames
 * would queue behind them for ever at full load): do not poll it.
 */
static inline bool
dp_rate_port_blocked(struct dp_lcore *lc, uint32_t slot, uint64_t now)
{
	const struct dp_tenant_rate *tr = &lc->rate.tenants[slot];

	return tr->shaped && (tr->unshape_pending || lc->rate.pool_low || shaper_tenant_full(lc->rate.sh, slot, now) ||
			      (tr->cc && shaper_tenant_full(lc->rate.sh2, slot, now)));
}

/* What the shaper needs of a frame, noted on the path (stage 4) for the output stage. */
struct dp_shape_note {
	struct shaper_pkt sp;
	bool shaped;          /* its tenant is shaped: it goes through the shaper */
	bool foreign;         /* another lcore owns its connection's egress half and reaction point */
	bool cut;             /* stage 5: through the shaper at once with its burst (dp_s5_shape.c) */
	uint8_t l3, mf;
	uint16_t tenant;      /* tenant slot */
};

/*
 * Note in @n what the shaper needs of a frame that is forwarded (n->shaped
 * stays false when its tenant is not shaped).  @conn is the shaper id,
 * @slot the tenant's.
 */
void dp_rate_note(struct dp_lcore *lc, struct dp_shape_note *n, uint32_t conn, uint32_t slot, uint8_t *data,
		  const struct roce_pkt *pkt, bool hairpin);

/*
 * Frame @m, as noted in @n, into the shaper: DP_DROP_NONE or the reason it
 * was refused.  When the shapers would let it leave at once (cut-through:
 * its connection queue empty, its pacing time come, its tenant's buckets
 * holding tokens and nothing of the tenant waiting) it is charged as if it
 * had been queued and released, *send_now is set and the caller sends it
 * itself; otherwise it is queued.
 */
enum dp_drop dp_rate_enqueue(struct dp_lcore *lc, const struct dp_shape_note *n, struct rte_mbuf *m,
			     uint16_t out_port, bool *send_now);

/*
 * Frames whose time has come, at most @max, with their output ports; drops
 * (conn_removed) are counted and freed here.  Also runs the timers: deferred
 * CNPs, CNPs handed over by other lcores.
 */
unsigned dp_rate_dequeue(struct dp_lcore *lc, uint64_t now, struct rte_mbuf **pkts, uint16_t *ports,
			 unsigned max);

/*
 * A tenant no longer shaped bypasses the shaper once nothing of it is
 * queued: checked on the drain tick while some tenant waits for it.
 */
void dp_rate_unshape_check(struct dp_lcore *lc, uint64_t now);

/* Nothing queued in this lcore's shapers. */
bool dp_rate_idle(const struct dp_lcore *lc);

/*
 * DCQCN on a frame from the fabric for connection @ci, before its rewrite:
 * the notification point (CE marks, CNPs to the sender) and the reaction
 * point (CNPs).  Returns true when the frame is consumed.
 */
bool dp_cc_ingress(struct dp_lcore *lc, const struct ovl *o, uint32_t ci, uint8_t *data,
		   const struct roce_pkt *pkt);

/*
 * DCQCN's notification point on a UD frame from the fabric whose sender is
 * the remote UD QP @r, before its rename: a CE mark is answered with a CNP
 * to @r, paced per sender QP (path/dp_cc_ud.c), and cleared unless the
 * tenant keeps CE marks.
 */
void dp_cc_ud_ingress(struct dp_lcore *lc, const struct ovl *o, uint8_t *data, const struct roce_pkt *pkt,
		      const struct ovl_qp *r);

/*
 * Telemetry: the shaper figures of tenant @t (both stages; *cp_queued: what
 * waits in stage 2, the congestion point's queue) and of connection @ci.
 */
void dp_rate_tenant_stats(const struct ovl *o, uint32_t t, struct shaper_tenant_stats *st, uint64_t *cp_queued);
bool dp_rate_conn_stats(const struct ovl *o, uint32_t ci, struct shaper_conn_stats *st);

/* A connection's DCQCN state as telemetry shows it, or false when DCQCN is off for it. */
struct dp_cc_snapshot {
	struct dcqcn_counters ctr;
	bool limited;           /* the reaction point holds a rate limiter */
	uint64_t rate_bps, target_bps;
	uint32_t alpha;         /* DCQCN_ALPHA_ONE = 1.0 */
	enum dcqcn_stage stage;
};

bool dp_cc_conn_snapshot(const struct ovl *o, uint32_t ci, struct dp_cc_snapshot *snap);

#endif /* DP_RATE_H */
