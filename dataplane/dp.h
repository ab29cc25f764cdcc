/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data plane: shared types of the dpdk-roce-vswitch process.
 *
 * Ownership.  The overlay (dp.ovl) is built off the forwarding lcores, by
 * main at start-up and by a reload later, and published with one atomic
 * store.  Each lcore reads dp.ovl once per loop iteration and reports an RCU
 * quiescent state (dp.qsv) at the end of it; the old overlay is freed once
 * every lcore has done so.  Control-plane readers (telemetry) and reloads
 * serialise on dp.ctl_lock; the lcores take no lock.  The port map (dp.ports)
 * is fixed for the life of the process.
 * A port has one or more rx queues (ports[].rx_queues), each polled by
 * exactly one lcore; each lcore has its own tx queue on every port.  So one
 * tenant's frames, and one uplink's, may arrive on several lcores.
 * Per-connection dynamic state is split by direction, and each half has an
 * owner lcore, recorded on its first frame (dp_dir_state.owner): only the
 * owner writes the half, its Estats and DCQCN state.  RSS keeps a QP on one
 * queue, so its owner sees all its frames; a frame of the half that another
 * lcore receives (a PMD spreading one QP over queues) is checked, renamed
 * and forwarded against a copy of the half, without writing it, and counted
 * in conn_foreign (docs/scale-out.md).  Dynamic state lives in slots with stable ids
 * (ovl_conn.state, ovl_tenant.slot) that survive reloads: a connection in
 * both configurations keeps its slot.  Counters are per lcore and summed by readers
 * (telemetry, the exit summary); readers tolerate torn totals.
 */
#ifndef DP_H
#define DP_H

#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "cfg_delta.h"
#include "dcqcn.h"
#include "dp_learn.h"
#include "ovl.h"
#include "ovl_inc.h"
#include "rocev2.h"
#include "shaper.h"

#define DP_MAX_PORTS 32
#define DP_MAX_LCORES 16
#define DP_MAX_LCORE_RX 128 /* rx queues one lcore polls */
#define DP_BURST 32
#define DP_MAX_TENANTS 4096
#define DP_STATE_CHUNK_SHIFT 12
#define DP_STATE_CHUNKS 2048 /* 8 M connection states at most */

/*
 * Drop reasons, declared once: X(ENUM, "name").  Parser errors come first,
 * under the names rocev2/ gives them, then the switch's own.
 */
#define DP_SWITCH_DROPS(X) \
	X(NO_CONNECTION, "no_connection") \
	X(WRONG_TENANT, "wrong_tenant") \
	X(SPOOFED_SOURCE, "spoofed_source") \
	X(NOT_OUR_HOST, "not_our_host") \
	X(GSI, "gsi") \
	X(TYPE_MISMATCH, "type_mismatch") \
	X(MR_UNKNOWN, "mr_unknown") \
	X(MR_OUT_OF_BOUNDS, "mr_out_of_bounds") \
	X(MR_ACCESS_DENIED, "mr_access_denied") \
	X(MESSAGE_DENIED, "message_denied") \
	X(ACL_DENIED, "acl_denied") \
	X(REVOKED, "revoked") \
	X(NONLINEAR, "nonlinear") \
	X(TX_FAILED, "tx_failed") \
	X(SHAPING_WATCHDOG, "shaping_watchdog") \
	X(SHAPING_OVERFLOW, "shaping_overflow") \
	X(SHAPING_NOBUFS, "shaping_nobufs") \
	X(SHAPING_DETACHED, "shaping_detached") \
	X(CONN_REMOVED, "conn_removed") \
	X(SHUTDOWN, "shutdown") \
	X(PRIVILEGED_QKEY, "privileged_qkey") \
	X(XDP_DENIED, "xdp_denied") \
	X(XRC_SRQ_UNKNOWN, "xrc_srq_unknown") \
	X(VLAN_MISMATCH, "vlan_mismatch") \
	X(UNRESOLVED, "unresolved")

enum dp_drop {
	DP_DROP_NONE = 0,
#define DP_X_PARSE(e, n, d) DP_DROP_##e,
	ROCE_PARSE_ERRORS(DP_X_PARSE)
#undef DP_X_PARSE
#define DP_X_SW(e, n) DP_DROP_##e,
	DP_SWITCH_DROPS(DP_X_SW)
#undef DP_X_SW
	DP_DROP_MAX
};

/* Parser error e is drop reason e: the enums are laid out to agree. */
static_assert((int)DP_DROP_TRUNC_ETH == (int)ROCE_ERR_TRUNC_ETH, "drop reasons start with parse errors");
static_assert((int)DP_DROP_TRUNC_ICRC == (int)ROCE_ERR_TRUNC_ICRC, "drop reasons start with parse errors");

extern const char *const dp_drop_names[DP_DROP_MAX];

/* Per-tenant counters, per lcore. */
struct dp_tenant_stats {
	uint64_t egress_pkts, egress_bytes;   /* sent by the tenant and forwarded */
	uint64_t ingress_pkts, ingress_bytes; /* delivered to the tenant */
	uint64_t drops;                        /* dropped, attributed to the tenant */
};

/*
 * Stages of the per-packet path (path/dp_path.h), for the cycle profile
 * that --stage-cycles N takes of one rx burst in N: X(ENUM, "name").
 */
#define DP_STAGES(X) \
	X(RX, "rx") \
	X(CLASSIFY, "classify") \
	X(LOOKUP, "lookup") \
	X(REWRITE, "decide_rewrite") \
	X(SHAPE, "shape") \
	X(TX, "tx")

enum dp_stage {
#define DP_X_STAGE(e, n) DP_STAGE_##e,
	DP_STAGES(DP_X_STAGE)
#undef DP_X_STAGE
	DP_STAGE_MAX
};

extern const char *const dp_stage_names[DP_STAGE_MAX];

/* TSC cycles spent in each stage over the sampled bursts of one lcore. */
struct dp_stage_prof {
	uint64_t cycles[DP_STAGE_MAX];
	uint64_t pkts, bursts;
};

/* Per-lcore counters. */
struct dp_stats {
	uint64_t rx_pkts[DP_MAX_PORTS], rx_bytes[DP_MAX_PORTS];
	uint64_t tx_pkts[DP_MAX_PORTS], tx_bytes[DP_MAX_PORTS];
	uint64_t drops[DP_DROP_MAX];
	uint64_t fwd_egress, fwd_ingress, fwd_hairpin;
	uint64_t cnp_forwarded;
	uint64_t mr_translated;
	uint64_t naks_sent;   /* revocation NAKs built and handed to a tx queue */
	uint64_t naks_refused; /* NAKs that answer a refused RC request (path/dp_nak.c) */
	uint64_t mark_hits;   /* frames whose rte_flow MARK spared the lookups */
	uint64_t shaped;      /* frames that went through the shaper */
	uint64_t bp_skips;    /* polls of a tenant port skipped: its queues were full */
	uint64_t cnp_sent;    /* CNPs built by the notification point */
	uint64_t cnp_consumed; /* CNPs from the fabric taken by the reaction point */
	uint64_t ce_cleared;  /* CE marks removed before delivery to a tenant */
	uint64_t held;        /* frames of learning tenants held while their destination resolves */
	uint64_t hold_released; /* ... and run through the path once it did */
	uint64_t gsi_forwarded;   /* RDMA-CM MADs of learning tenants let through to QP1 lookups */
	uint64_t gsi_class_dropped; /* a learning tenant's QP1 frames of another class or form: gsi */
	uint64_t cm_learn;        /* halves asked of the learner from a REQ or REP delivered */
	uint64_t gsi_rate_dropped; /* a learning tenant's MADs over its "gsi_pps": gsi */
	uint64_t conn_foreign;    /* frames of a connection half another lcore owns: its state left alone */
} __rte_cache_aligned;

/*
 * One direction of a connection's dynamic state, one cache line.  The
 * egress half also records L's requests and L's answers to R's requests;
 * the ingress half R's requests and R's answers (for a hairpin, R's frames
 * are on the egress half of R's own connection).
 */
struct dp_dir_state {
	uint8_t msg_open;     /* a First has been seen and no Last yet */
	uint8_t msg_denied;   /* the open message's first packet was dropped */
	/*
	 * Egress half: the connection is gone from the configuration and its
	 * shaper queue still holds frames (dp_rate.h).  Set by the control
	 * plane, cleared by the pacing lcore once the queue is empty; atomic.
	 */
	uint8_t draining;
	/*
	 * A refused request of this half was answered with a NAK (dp_nak.c)
	 * and no request of it was forwarded since: no further NAK.  Written
	 * by the lcore that writes the half.
	 */
	uint8_t nak_sent;
	/*
	 * DP_REVOKED_*, the same in both halves (so that a frame reads only
	 * its own half's line): written by the control plane (atomic stores,
	 * under ctl_lock), loaded atomically by the lcores for every frame.
	 */
	uint16_t revoked;
	/*
	 * The lcore that writes this half, plus one; 0 until its first frame,
	 * when the lcore that receives it takes it (compare and swap).  A new
	 * state id starts at 0 again.
	 */
	uint16_t owner;
	uint64_t pkts, bytes;
	uint64_t first_seen, last_seen; /* TSC of the first and latest frame attributed; 0: none */
	struct ovl_req_track req;       /* requests forwarded this way */
	struct ovl_ack_track ack;       /* answers forwarded this way to the other way's requests */
} __rte_cache_aligned;
static_assert(sizeof(struct dp_dir_state) == 64, "one cache line per half");

/* Why a connection is revoked (dp_dir_state.revoked): bits. */
#define DP_REVOKED_CMD 1u     /* /roce/revoke named one of its ends */
#define DP_REVOKED_POLICY 2u  /* a reload's ACL came to deny it entirely */

struct dp_conn_state {
	struct dp_dir_state egress;   /* written by the lcore that owns it (dp_dir_state.owner) */
	struct dp_dir_state ingress;  /* written by the lcore that owns it (dp_dir_state.owner) */
} __rte_cache_aligned;

/*
 * A connection's DCQCN state.  The reaction point is written by the lcore
 * that paces the connection (the one polling L's port), the notification
 * point by the lcore polling the uplink: one line each apart.
 */
struct dp_cc_state {
	struct {
		struct dcqcn_rp rp;
		struct dcqcn_counters ctr; /* rp_cnp_handled, rp_cnp_ignored, cp_ecn_marked */
		uint64_t applied_bps;      /* the rate last given to the shaper, 0 = none */
		uint8_t ready;             /* rp initialised from the tenant's profile */
	} __rte_cache_aligned rp;
	struct {
		struct dcqcn_np np;
		struct dcqcn_counters ctr; /* np_ecn_marked_roce_packets, np_cnp_sent */
	} __rte_cache_aligned np;
} __rte_cache_aligned;

struct dp_port {
	uint16_t port_id;     /* ethdev id */
	uint16_t lcore_idx;   /* which forwarding lcore polls its queue 0 */
	uint16_t n_rxq;       /* rx queues polled (ports[].rx_queues) */
	bool uplink;
	char *name;           /* copies: configurations come and go */
	char *device;
};

/* What a tenant's configuration asks of rate control: each lcore's copy. */
struct dp_tenant_rate {
	bool shaped;          /* its frames toward the fabric go through the shaper */
	bool cc;              /* DCQCN is on for it */
	bool ce_keep;         /* CE marks from the fabric reach the tenant */
	bool cnp_pass;        /* CNPs from the fabric reach the tenant too */
	bool unshape_pending; /* no longer shaped once its queues are empty */
	struct dcqcn_profile prof;
};

/* A deferred CNP (dcqcn "defer" mode): due at @due for connection @conn of @ovl. */
struct dp_cnp_timer {
	uint64_t due;
	uint32_t state;
	uint32_t conn;
	const struct ovl *ovl;
	uint16_t sport;       /* as the marked frame had them: the CNP takes its path back */
	uint16_t tci[2];
	uint8_t n_vlan;
	/* The connection's fabric key, (this host, L's pqpn): it finds it again after a reload. */
	uint8_t alen;
	uint32_t pqpn;
	uint8_t host[16];
};

/* A timer's `conn` when it is a UD sender's deferred CNP; its `state` is the dp_ud_np slot. */
#define DP_CNP_TIMER_UD UINT32_MAX

/*
 * The notification point of one UD sender QP, known by its fabric key (its
 * host and pqpn): a UD QP has no connection, so the CNP pacing of the
 * senders whose CE-marked frames this lcore received is kept in a small
 * direct-mapped table (DP_UD_NP_SLOTS); a sender that takes another's slot
 * starts with no CNP sent.  Written and read by the owning lcore only.
 */
#define DP_UD_NP_SLOTS 1024
struct dp_ud_np {
	struct dcqcn_np np;
	struct dcqcn_counters ctr;
	uint32_t pqpn;        /* the sender's */
	uint8_t alen;         /* 0: a free slot */
	uint8_t host[16];     /* the sender's host */
	uint8_t local[16];    /* this host's address the marked frame came to: the CNP's source */
};

/* Rate control of one lcore (dp_rate.h): its shaper and DCQCN roles. */
struct dp_rate_lcore {
	struct shaper *sh;                /* stage 1, or the only stage; NULL: no shaping */
	struct shaper *sh2;               /* stage 2 of DCQCN tenants: the congestion point's queue */
	struct dp_tenant_rate *tenants;   /* [DP_MAX_TENANTS], by tenant slot */
	uint64_t synced_seq;              /* the overlay (its seq) whose changes this lcore looked for */
	volatile uint64_t sync_gen;       /* the generation of the changes it applied, for the control plane */
	uint32_t n_draining;              /* removed connections with frames still queued */
	uint32_t n_unshape;               /* tenants with unshape_pending */
	uint32_t n_shaped;                /* tenants whose frames go through the shaper */
	bool pool_low;                    /* a shaper has room for less than a burst per port */
	bool cc_any;                      /* some tenant has DCQCN on */
	uint64_t now_ns;                  /* the loop's time for dcqcn/ */
	uint64_t rnd;                     /* the congestion point's random state */
	struct rte_ring *cc_ring;         /* CNPs for connections this lcore paces, from other lcores */
	struct dp_cnp_timer *timers;      /* deferred CNPs: a binary heap on due */
	uint32_t n_timers, max_timers;
	struct dp_ud_np *ud_np;           /* [DP_UD_NP_SLOTS]: UD senders' NP state */
	/* CNPs built during this burst, sent after it. */
	uint16_t n_cnp;
	struct rte_mbuf *cnp[DP_BURST];
	uint16_t cnp_port[DP_BURST];
};

struct dp_lcore {
	unsigned lcore_id;
	uint16_t idx;                     /* also its tx queue on every port */
	uint16_t n_rx;
	struct dp_rxq {
		uint16_t port;            /* port index (configuration order) */
		uint16_t queue;           /* its rx queue */
		uint64_t pkts;            /* frames received on it; read by telemetry */
	} rx[DP_MAX_LCORE_RX];
	struct rte_eth_dev_tx_buffer *txb[DP_MAX_PORTS];
	const struct ovl *ovl;            /* the overlay of this loop iteration */
	struct dp_stats stats;
	struct dp_tenant_stats *tenant_stats; /* [DP_MAX_TENANTS], by tenant slot */
	volatile uint64_t last_rx_tsc;
	struct dp_stage_prof prof;        /* --stage-cycles; read by telemetry, torn totals tolerated */
	uint64_t now;                     /* TSC at the start of this loop iteration */
	uint64_t rx_tsc;                  /* with --estats: TSC right after this burst's rx */
	struct rte_ring *nak_ring;        /* NAKs to send, from the control plane (dp_acl.h) */
	volatile uint64_t naks_done;      /* NAK requests taken off nak_ring */
	struct dp_rate_lcore rate;
	struct dp_hold hold;              /* frames of learning tenants waiting (dp_learn.h) */
	struct dp_dir_state foreign_half; /* a copy of a half another lcore owns, for one frame (dp_s3_decide.h) */
};

/* The process-wide state. */
struct dp {
	struct ovl *ovl;                   /* published; see Ownership above */
	struct cfg *cfg;                   /* the configuration ovl was built from */
	char *config_path;                 /* what SIGHUP re-reads */
	struct rte_rcu_qsbr *qsv;
	bool qs_exporter;                  /* qsv has a reader for the exporter: id n_lcores (dp_metrics.h) */
	pthread_mutex_t ctl_lock;
	struct dp_conn_state *conn_chunks[DP_STATE_CHUNKS];
	struct dp_cc_state *cc_chunks[DP_STATE_CHUNKS]; /* DCQCN state, allocated once DCQCN is on */
	uint32_t *free_states;             /* stack of free connection state ids */
	uint32_t n_free_states, n_states;  /* free ones, ids handed out so far */
	bool tenant_used[DP_MAX_TENANTS];
	struct dp_port ports[DP_MAX_PORTS];
	uint16_t n_ports;
	uint16_t port_index[RTE_MAX_ETHPORTS]; /* ethdev id -> port index */
	struct dp_lcore lcores[DP_MAX_LCORES];
	uint16_t n_lcores;
	volatile bool running;             /* the lcores run their loops */
	uint32_t conn_cap;                 /* --max-connections: state ids below it; 0 = no shaper */
	struct dp_rate_sync *sync;         /* the latest configuration's rate changes (dp_rate.h) */
	volatile uint64_t sync_gen;        /* ... their generation, stored after sync */
	uint64_t ovl_seq;                  /* the seq of the latest overlay published (dp_ovl_publish()) */
	struct rte_mempool *pool;
	volatile bool quit;
	volatile bool traffic_seen;
	uint64_t tsc_hz;
	uint32_t prof_every;               /* --stage-cycles: profile one rx burst in this many; 0 = off */
	void (*housekeep)(void); /* periodic work of the main lcore: signals, idle exit */
};

extern struct dp dp;

/* Address and MAC equality without a call: 4 or 16 bytes, and 6 bytes. */
static inline bool
dp_addr_eq(const uint8_t *a, const uint8_t *b, unsigned alen)
{
	uint64_t x0, x1, y0, y1;
	uint32_t u, v;

	if (alen == 4) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		return u == v;
	}
	memcpy(&x0, a, 8);
	memcpy(&x1, a + 8, 8);
	memcpy(&y0, b, 8);
	memcpy(&y1, b + 8, 8);
	return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}

static inline bool
dp_mac_eq(const uint8_t *a, const uint8_t *b)
{
	uint32_t u, v;
	uint16_t x, y;

	memcpy(&u, a, 4);
	memcpy(&v, b, 4);
	memcpy(&x, a + 4, 2);
	memcpy(&y, b + 4, 2);
	return ((u ^ v) | (uint32_t)(x ^ y)) == 0;
}

static inline struct dp_conn_state *
dp_conn_state(uint32_t id)
{
	return &dp.conn_chunks[id >> DP_STATE_CHUNK_SHIFT][id & ((1u << DP_STATE_CHUNK_SHIFT) - 1)];
}

/*
 * Make @o the overlay the lcores take at their next iteration, numbered
 * after every overlay published before it (under ctl_lock).  The lcores
 * notice a new overlay by its number, never by its address: a header freed
 * after its grace period can come back at the same address.
 */
static inline void
dp_ovl_publish(struct ovl *o)
{
	o->seq = ++dp.ovl_seq;
	__atomic_store_n(&dp.ovl, o, __ATOMIC_RELEASE);
}

/*
 * May lcore @idx write half @s?  Takes the half on its first frame.  False:
 * another lcore owns it (the frame must leave the half alone).
 */
static inline bool
dp_half_own(struct dp_dir_state *s, uint16_t idx)
{
	uint16_t o = __atomic_load_n(&s->owner, __ATOMIC_RELAXED), me = (uint16_t)(idx + 1);

	if (likely(o == me))
		return true;
	return o == 0 && __atomic_compare_exchange_n(&s->owner, &o, me, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/*
 * The lcore that owns half @s, or @fallback (an lcore that polls the half's
 * port) while none has taken it.
 */
static inline uint16_t
dp_half_owner(const struct dp_dir_state *s, uint16_t fallback)
{
	uint16_t o = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);

	return o ? (uint16_t)(o - 1) : fallback;
}

/* Only for connections of a tenant with DCQCN on: their chunks exist. */
static inline struct dp_cc_state *
dp_cc_state(uint32_t id)
{
	return &dp.cc_chunks[id >> DP_STATE_CHUNK_SHIFT][id & ((1u << DP_STATE_CHUNK_SHIFT) - 1)];
}

/* What a configuration change did, or why it was refused. */
struct dp_reload_report {
	bool applied;
	struct cfg_errors errs;
	uint32_t conns_added, conns_removed, conns_changed, conns_kept;
	uint32_t tenants_added, tenants_removed;
	uint32_t qps_before, qps_after, mrs_before, mrs_after;
	double load_ms, build_ms, publish_ms;
	struct cfg_load_times load;   /* load_ms split: read, parse, check (file reloads) */
	bool incremental;             /* applied in place (dp_inc.c), not by a whole build */
};

/*
 * Load @path, build its overlay and publish it; on any error nothing
 * changes.  At start-up (no overlay yet) it only builds.  Takes ctl_lock.
 */
int dp_config_apply(const char *path, struct dp_reload_report *rep);
/*
 * Have @fn called after every file reload that dp_config_apply() published:
 * the file's records replaced those of the other sources, which apply theirs
 * again (the etcd follower).  At start-up only; 0, or -1 when four are set.
 */
int dp_reload_listen(void (*fn)(void));
void dp_reload_report_free(struct dp_reload_report *rep);
/*
 * The report as one JSON object in @buf, valid whatever @len (128 or more):
 * a rejected report gives the errors that fit whole and counts the others in
 * "errors_omitted".
 */
int dp_reload_report_json(const struct dp_reload_report *rep, char *buf, size_t len);

/*
 * The one apply path below every source of changes (docs/control.md): build
 * and publish @c (taken: kept as dp.cfg, or freed on failure) as
 * dp_config_apply() does after loading a file.  The caller holds ctl_lock.
 */
int dp_config_publish_locked(struct cfg *c, struct dp_reload_report *rep);

/* What one batch of changes did (dp_delta.h, dp_inc.c). */
struct dp_delta_report {
	struct dp_reload_report rr;   /* connections and tenants added, removed, kept; errors */
	struct cfg_delta_summary sum;
	double check_us, build_us, publish_us;
};

/* The control thread that serves SIGHUP; dp_reload_request() is signal-safe. */
int dp_control_start(void);
void dp_reload_request(void);
void dp_control_stop(void);
/*
 * The path dp_control_start() opens the control socket at (--control), or
 * NULL for none; set before dp_control_start().  dp_control_stop() closes it.
 */
void dp_ctl_sock_configure(const char *path);
void dp_state_free_all(void);

/* The forwarding loop of one lcore (rte_eal_remote_launch signature). */
int dp_lcore_main(void *arg);


/* Sums over lcores. */
void dp_stats_sum(struct dp_stats *sum);
void dp_tenant_stats_sum(uint32_t tenant, struct dp_tenant_stats *sum);

/* Telemetry commands under /roce/. */
int dp_telemetry_init(void);
/* @name as a telemetry key into @buf: characters other than letters, digits and '/' become '_'. */
const char *dp_tel_key(const char *name, char *buf, size_t len);
/* /roce/lcores (control/dp_lcores_tel.c), and the exit summary's "lcores" member to @f. */
int dp_lcores_telemetry_init(void);
void dp_lcores_summary(FILE *f);

/* The JSON stats summary, to @f. */
void dp_summary_write(FILE *f, const char *extra_json);

#endif /* DP_H */
