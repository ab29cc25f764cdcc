/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-packet path of one lcore, as stages over a whole rx burst, in the
 * order a frame meets them:
 *
 *   dp_s1_classify.c  parse, first verdicts (GSI, not our host), the lookup
 *                     key hashed and its table slot prefetched
 *   dp_s2_lookup.c    the tables probed (or an rte_flow MARK read), the
 *                     connection's record and state prefetched
 *   dp_s3_decide.h    anti-spoofing, transport, ACL and revocation, DCQCN's
 *                     notification and reaction points, message state, the
 *                     memory check at the owner (UD frames: dp_ud.c)
 *   dp_s4_rewrite.c   the connection's template, memory translation, the
 *                     IPv4 checksum and the ICRC; tracking and counters.
 *                     Stage 3 runs in its loop, frame by frame: the frame's
 *                     connection and fields are loaded once for both
 *   dp_s5_shape.c     each frame to the shaper or to a tx buffer; drops
 *                     counted and freed, once per burst
 *   dp_s6_tx.c        tx buffers, NAKs, what the shapers release
 *
 * dp_loop.c runs them.  Each stage takes the burst and works on the frames
 * still alive (drop == DP_DROP_NONE and, from stage 4 on, not done); a frame
 * dropped by a stage keeps its reason for stage 5.
 */
#ifndef DP_PATH_H
#define DP_PATH_H

#include <rte_cycles.h>

#include "dp.h"
#include "dp_rate.h"

/* One frame of a burst as it moves through the stages. */
struct dp_pkt {
	struct rte_mbuf *m;
	uint8_t *data;
	struct roce_pkt pkt;      /* s1 */
	struct ovl_key key;       /* s1: what s2 looks up */
	uint32_t sig;             /* s1: its hash | 1; 0: nothing to look up */
	uint32_t v;               /* s2: OVL_V_CONN | conn, OVL_V_QP | qp, or OVL_NONE */
	uint32_t dqpn;            /* s1: BTH DestQP as received */
	uint32_t tslot;           /* tenant slot a drop is charged to, or OVL_NONE */
	uint16_t out;             /* output port index, or DP_PORT_NONE: consumed */
	uint8_t drop;             /* enum dp_drop: DP_DROP_NONE while the frame lives */
	uint8_t done;             /* s3 finished it (UD, a CNP consumed): s4 skips it */
	uint8_t xl;               /* s3 found keys to translate in s4: DP_XL_* (dp_decide.h) */
	uint8_t mark;             /* s2: an rte_flow MARK named the connection */
	uint8_t foreign;          /* s3: another lcore owns its connection half: s3-s5 leave the half alone */
	uint32_t mr_rkey;         /* ... to this R_Key */
	uint64_t mr_va;           /* ... and this address */
	uint32_t inv_rkey;        /* an IETH's R_Key, translated */
	uint32_t srqn;            /* an XRCETH's SRQ number, renamed */
	struct dp_shape_note note; /* s4: what the shaper needs, if shaped */
};

/* A burst from one port. */
struct dp_burst {
	uint16_t n;
	uint16_t in_port;         /* port index */
	bool uplink;              /* from the fabric */
	uint32_t tenant;          /* a tenant port's tenant (overlay index) */
	struct dp_pkt p[DP_BURST];
};

/*
 * Grow (@delta > 0) or shrink the frame at @data by @delta bytes right after
 * its first @keep bytes: those move with the frame's start, the rest stays
 * where it is.  Returns the new start, or NULL when the mbuf has no headroom
 * (the switch's pool leaves 128 bytes).
 */
static inline uint8_t *
dp_frame_resize_at(struct rte_mbuf *m, uint8_t *data, uint16_t keep, int delta)
{
	uint8_t *nd;

	if (delta > 0) {
		nd = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)delta);
		if (unlikely(nd == NULL))
			return NULL;
		memmove(nd, data, keep);
		return nd;
	}
	if (delta < 0) {
		memmove(data - delta, data, keep);
		return (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)-delta);
	}
	return data;
}

static inline bool
dp_pkt_live(const struct dp_pkt *p)
{
	return p->drop == DP_DROP_NONE;
}

/* The stages; see above. */
void dp_s1_classify(struct dp_lcore *lc, struct dp_burst *b);
void dp_s2_lookup(struct dp_lcore *lc, struct dp_burst *b);
void dp_s4_rewrite(struct dp_lcore *lc, struct dp_burst *b);

/*
 * A tx buffer per (lcore, port) (dp_s6_tx.c): stage 5 fills it, stage 6
 * sends every buffer that holds a burst, the drain tick sends the rest.  It
 * holds two bursts, so that stage 5 never has to send in the middle of one.
 */
#define DP_TXQ_CAP (2 * DP_BURST)

struct dp_txq {
	uint16_t n;
	struct rte_mbuf *pkts[DP_TXQ_CAP];
};

void dp_s5_shape(struct dp_lcore *lc, struct dp_burst *b, struct dp_txq *tq);

/*
 * Stage 5, for a frame dropped for @why: the NAK that answers it, if it is
 * an RC request refused for an access reason and its half of the
 * connection has sent no NAK since it last forwarded a request (dp_nak.c);
 * NULL otherwise.  *out: its port.
 */
struct rte_mbuf *dp_nak_refusal(struct dp_lcore *lc, const struct dp_burst *b, const struct dp_pkt *p,
				enum dp_drop why, uint16_t *out);

/* Drops answered with a NAK: access refused at the memory's owner, or by the ACL. */
static inline bool
dp_nak_refusable(enum dp_drop why)
{
	return why == DP_DROP_MR_UNKNOWN || why == DP_DROP_MR_OUT_OF_BOUNDS || why == DP_DROP_MR_ACCESS_DENIED ||
	       why == DP_DROP_ACL_DENIED;
}

/*
 * Learning tenants' frames held while their destination resolves (dp_hold.c,
 * dp_learn.h).  A held frame is consumed without being freed: its `out` is
 * DP_PORT_HELD.
 */
#define DP_PORT_HELD (DP_PORT_NONE - 1)
/* Hold @p (a tenant frame with no connection); DP_DROP_NONE, or why it is dropped instead. */
enum dp_drop dp_hold_take(struct dp_lcore *lc, const struct dp_burst *b, struct dp_pkt *p);
/*
 * Hold a fabric frame to a QP1 whose sender (@host, its QP1's pqpn @qpn) this
 * host does not know yet: its record is on the way through etcd.
 * DP_DROP_NONE, or spoofed_source when it cannot wait.
 */
enum dp_drop dp_hold_fabric(struct dp_lcore *lc, struct dp_pkt *p, const uint8_t *host, unsigned alen,
			    uint32_t qpn);
/*
 * An RDMA-CM message between @local and @remote (endpoints of @tenant), sent
 * by @local (@out) or delivered to it, told to the learner: a REQ or REP
 * delivered carries the QPN where @local will send, so the learner is asked
 * for that half now, before the first data frame waits for it; REQ and REP
 * either way name the connection's Communication IDs, and a REJ or a DREP
 * that answers a DREQ removes what the learner installed for it.
 */
void dp_cm_learn(struct dp_lcore *lc, const struct ovl *o, uint32_t tenant, const struct ovl_endpoint *local,
		 const struct ovl_endpoint *remote, bool out, const uint8_t *mad, uint32_t len);
/* Are frames of @p's destination, from its port, held? */
bool dp_hold_has(struct dp_lcore *lc, const struct dp_burst *b, const struct dp_pkt *p);
/*
 * The frames of one destination that is found now, in order, into @pkts
 * (DP_HOLD_PER_CONN at most) and their port into @port; 0 when none is.
 * Destinations held too long are dropped as `unresolved` on the way.
 */
uint16_t dp_hold_ready(struct dp_lcore *lc, struct rte_mbuf **pkts, uint16_t *port);
/* Put the requests that found the learner's ring full into it again. */
void dp_hold_ask_again(struct dp_lcore *lc);
/* At exit: what is still held is dropped (`shutdown`). */
void dp_hold_free(struct dp_lcore *lc);

/* Stage 1: may this tenant frame to QP1 go on (an RDMA-CM MAD of a learning tenant)?  Counts it. */
bool dp_gsi_passes(struct dp_lcore *lc, const struct ovl *o, uint32_t tenant, const struct dp_pkt *p);

/* UD frames (dp_ud.c), from stage 3: checked, renamed and counted at once. */
enum dp_drop dp_ud_egress(struct dp_lcore *lc, const struct ovl *o, uint16_t in_port, struct dp_pkt *p,
			  uint32_t qi);
enum dp_drop dp_ud_ingress(struct dp_lcore *lc, const struct ovl *o, struct dp_pkt *p, uint32_t qi);

/*
 * Stage 4 for a template that changes the IP version (rw->xlate_from): the
 * IP header replaced (the mbuf grows or shrinks by 20 bytes, p->data and
 * p->pkt follow), DestQP, noted translations and ECMP port written, padding
 * to 60 bytes, the ICRC carried over (path/dp_xlate.c).  False: the mbuf
 * had no room for it.
 */
bool dp_xlate_frame(struct dp_pkt *p, const struct ovl_rewrite *rw, uint64_t *mr_translated);

void dp_tx_flush(struct dp_lcore *lc, uint16_t p, struct dp_txq *q);
void dp_tx_flush_all(struct dp_lcore *lc, struct dp_txq *tq);

static inline void
dp_tx_enqueue(struct dp_lcore *lc, struct dp_txq *tq, uint16_t p, struct rte_mbuf *m)
{
	struct dp_txq *q = &tq[p];

	q->pkts[q->n++] = m;
	if (unlikely(q->n == DP_TXQ_CAP))
		dp_tx_flush(lc, p, q);
}

/* Stage 6: send every buffer that holds at least a burst. */
void dp_s6_tx(struct dp_lcore *lc, struct dp_txq *tq);

/* The NAKs the control plane asked for (dp_acl.h), on this lcore's own tx queues. */
void dp_tx_naks(struct dp_lcore *lc, struct dp_txq *tq);

/* Frames the shapers release now, and the CNPs built during the burst. */
void dp_tx_rate(struct dp_lcore *lc, struct dp_txq *tq, uint64_t now);

/*
 * Frames @pkts[0..n) (n <= DP_BURST) from port @in_port through the path up
 * to its output (stages 1 to 4): the reason each is dropped into @why (or
 * DP_DROP_NONE) and its output port into @out (DP_PORT_NONE: consumed).
 * The caller frees the dropped ones and sends the rest.  For benchmarks and
 * the fuzzer; the lcores run the same stages in dp_lcore_main().
 */
void dp_path_run(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf **pkts, uint16_t n, enum dp_drop *why,
		 uint16_t *out);

/* One frame through dp_path_run(): its drop reason, and its output port in @out_port. */
static inline enum dp_drop
dp_process_frame(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf *m, uint16_t *out_port)
{
	enum dp_drop why;

	dp_path_run(lc, in_port, &m, 1, &why, out_port);
	return why;
}

/* Stage 1 to 4 over @b: what dp_loop.c and dp_path_run() share. */
static inline void
dp_path_stages(struct dp_lcore *lc, struct dp_burst *b)
{
	dp_s1_classify(lc, b);
	dp_s2_lookup(lc, b);
	dp_s4_rewrite(lc, b);   /* stage 3 inside, frame by frame */
}

#endif /* DP_PATH_H */
