/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports and forwarding lcores at start-up (dp_ports.c), in this order:
 * dp_ports_map() after the configuration is loaded, dp_lcores_assign(), the
 * mbuf pool, dp_ports_start().  Each returns 0, or -1 with the error printed.
 */
#ifndef DP_PORTS_H
#define DP_PORTS_H

#include <stdint.h>

#define DP_RX_DESC 1024 /* per rx queue */
#define DP_TX_DESC 1024 /* per tx queue: one per lcore on every port */

/* The configuration's devices and the ports EAL probed, matched both ways. */
int dp_ports_map(void);
/* The forwarding lcores, each port's rx queue count, and which lcore polls each queue. */
int dp_lcores_assign(void);
/* Rx queues of all ports together (for the size of the mbuf pool). */
unsigned dp_ports_rxq_total(void);
/* Configure and start every port: its rx queues, a tx queue per lcore, RSS where offered. */
int dp_ports_start(uint32_t mbuf_size);
/* The rx queue of port @p that lcore @lcore_idx polls; 0 when it polls none. */
uint16_t dp_port_rxq_of(uint16_t p, uint16_t lcore_idx);
/* The RSS hash functions (RTE_ETH_RSS_*) port @p was started with; 0: none. */
uint64_t dp_port_rss_hf(uint16_t p);

#endif /* DP_PORTS_H */
