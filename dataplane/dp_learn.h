/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Learned connections (tenants with "qp_learning"; DESIGN.md "Learned
 * connections"), where the lcores and the learner meet.
 *
 * An lcore that finds no connection for a frame of a learning tenant, from
 * one of the tenant's endpoints on this port to another of its endpoints,
 * holds the frame (path/dp_hold.c) instead of dropping it, and asks the
 * learner (control/dp_learn.c) once per destination (tenant, dst vip, dst
 * vqpn) through dp.learn_ring.  The learner resolves it into a half QP
 * record (cfg_qp_half()) and hands it to the apply path, directly for a
 * destination on this host, through etcd for one elsewhere.  At the start of
 * every loop iteration the lcore looks up what it holds again: a destination
 * found has its frames run through the stages as a burst of their own port,
 * in the order they came, before any later frame of it; one not found within
 * --learn-hold-ms is dropped as `unresolved`.  A frame of a destination with
 * held frames is held behind them even when the destination is found by then.
 *
 * Bounds (per lcore): DP_HOLD_CONNS destinations waiting, DP_HOLD_PER_CONN
 * frames each, DP_HOLD_FRAMES in all; a frame beyond them is `unresolved`.
 */
#ifndef DP_LEARN_H
#define DP_LEARN_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#define DP_HOLD_CONNS 64
#define DP_HOLD_PER_CONN 32
#define DP_HOLD_FRAMES 512

/* One destination being resolved, and its frames in arrival order. */
struct dp_hold_conn {
	uint8_t dst[16];
	uint8_t src[16];          /* its first frame's source */
	uint8_t alen;             /* 0: a free entry */
	uint8_t asked;            /* its request is in the learner's ring */
	uint8_t fabric;           /* from an uplink: waits for the sender (dst, dqpn) in by_fabric, asks nothing */
	uint16_t port;            /* the tenant port the frames came from */
	uint16_t n;
	uint32_t dqpn;
	uint64_t since;           /* TSC of its first frame */
	struct rte_mbuf *m[DP_HOLD_PER_CONN];
};

/*
 * What one lcore holds; written by that lcore only, n_frames read by
 * telemetry.  releasing is set while the frames dp_hold_ready() returned run
 * through the stages again: stage 1 does not count them, nor take their GSI
 * tokens, twice.
 */
struct dp_hold {
	uint32_t n_conns;
	volatile uint32_t n_frames;
	bool releasing;
	struct dp_hold_conn c[DP_HOLD_CONNS];
};

/*
 * An RDMA-CM message of a learning tenant that passed this switch, as far as
 * the learner reads it (control/dp_learner_cm.c): attr 0 for none.  The
 * request's src is the VM on this host, dst its peer; @out says which sent it.
 */
struct dp_learn_cm {
	uint16_t attr;            /* enum roce_cm_attr: REQ, REP, REJ, DREQ or DREP */
	uint8_t out;              /* 1: src sent it (to the fabric); 0: src received it */
	uint8_t learn;            /* a REQ or REP delivered: learn the half src -> (dst, dqpn) too */
	uint32_t local_id, remote_id; /* the sender's and the receiver's Communication IDs */
	uint32_t qpn;             /* REQ, REP: the sender's Local QPN */
};

/*
 * An lcore's request to the learner: the first frame of a destination it
 * does not know (src -> (dst, dqpn)), or an RDMA-CM message (cm.attr set).
 */
struct dp_learn_req {
	uint32_t tslot;           /* the tenant's stable slot */
	uint32_t dqpn;
	uint16_t port;
	uint8_t alen;
	uint8_t type;             /* enum cfg_qp_type, from the frame's opcode */
	uint8_t src[16], dst[16];
	struct dp_learn_cm cm;
};

/*
 * The learner's counters (written by its thread only, read by /roce/learn and
 * /metrics; torn totals tolerated): requests taken (and the bursts they came
 * in, and the time their local records took to apply), records written and
 * those of them now known, expired (idle), stale (never in force), requests
 * whose record existed already, and refusals by quota, rate, for want of
 * etcd, or otherwise (the apply path's error in /roce/learn's last_error).
 */
struct dp_learn_stats {
	uint64_t requests, bursts;        /* requests taken, in bursts of up to 64 */
	uint64_t apply_us;                /* time the bursts' local records took in the apply path */
	uint64_t learned, learned_now, expired, stale, known;
	uint64_t refused_quota, refused_rate, refused_no_etcd, refused_other;
	/*
	 * RDMA-CM: learned records removed at a DREP or REJ, and REJ, DREQ and
	 * DREP that match no connection of their tenant by vips and
	 * Communication IDs (forged, or of a connection this switch did not see
	 * set up).
	 */
	uint64_t cm_removed, cm_unmatched;
	/* Records written naming their source's QPN, which a REP or the PSNs told (docs/learning.md, "Pairs"). */
	uint64_t paired;
	/*
	 * Leases of this host's earlier switch (a crash, a restart) revoked at
	 * start, with every learned record on them; written by the etcd
	 * transaction thread (dp_cluster_txn.c).
	 */
	uint64_t leases_revoked;
};
extern struct dp_learn_stats dp_learn_st;

/* Frames are held at most this long (TSC ticks; --learn-hold-ms, default 500). */
extern uint64_t dp_hold_tsc;
/* The learner's requests: many lcores put, the learner takes. NULL: no tenant can learn yet. */
extern struct rte_ring *dp_learn_ring;

#endif /* DP_LEARN_H */
