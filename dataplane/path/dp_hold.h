/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames held while a learning tenant's destination resolves, and RDMA-CM
 * messages told to the learner (dp_hold.c).
 */
#ifndef DP_HOLD_H
#define DP_HOLD_H

#include "dp_path.h"

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

#endif /* DP_HOLD_H */
