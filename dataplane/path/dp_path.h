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
 * Each stage has its own header (dp_s1_classify.h ...); dp_loop.c includes
 * them and runs them, and this header holds only what they share: the frame
 * and the burst, so that no stage includes anything above it.  Each stage takes the burst and works on the frames
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

#endif /* DP_PATH_H */
