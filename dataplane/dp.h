/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data plane: shared types of the dpdk-roce-vswitch process.
 *
 * Ownership.  The control thread (main) builds the overlay and the port map
 * before the forwarding lcores start and does not change them while they run.
 * Each port's rx queue is polled by exactly one lcore; each lcore has its own
 * tx queue on every port.  Per-connection dynamic state is split by
 * direction: the egress half is written only by the lcore that polls L's
 * tenant port, the ingress half only by the lcore that polls the uplink the
 * frame arrived on.  Counters are per lcore and summed by readers
 * (telemetry, the exit summary); readers tolerate torn totals.
 */
#ifndef DP_H
#define DP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "ovl.h"
#include "rocev2.h"

#define DP_MAX_PORTS 32
#define DP_MAX_LCORES 16
#define DP_BURST 32

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
	X(NONLINEAR, "nonlinear") \
	X(TX_FAILED, "tx_failed")

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

/* Per-lcore counters. */
struct dp_stats {
	uint64_t rx_pkts[DP_MAX_PORTS], rx_bytes[DP_MAX_PORTS];
	uint64_t tx_pkts[DP_MAX_PORTS], tx_bytes[DP_MAX_PORTS];
	uint64_t drops[DP_DROP_MAX];
	uint64_t fwd_egress, fwd_ingress, fwd_hairpin;
	uint64_t cnp_forwarded;
	uint64_t mr_translated;
} __rte_cache_aligned;

/* One direction of a connection's dynamic state. */
struct dp_dir_state {
	uint8_t msg_open;     /* a First has been seen and no Last yet */
	uint8_t msg_denied;   /* the open message's first packet was dropped */
	uint64_t pkts, bytes;
};

struct dp_conn_state {
	struct dp_dir_state egress;   /* written by the lcore polling L's port */
	struct dp_dir_state ingress;  /* written by the lcore polling the uplink */
} __rte_cache_aligned;

struct dp_port {
	uint16_t port_id;     /* ethdev id */
	uint16_t lcore_idx;   /* which forwarding lcore polls it */
	bool uplink;
	uint32_t tenant;
	const char *name;
	const char *device;
};

struct dp_lcore {
	unsigned lcore_id;
	uint16_t idx;                     /* also its tx queue on every port */
	uint16_t n_rx;
	uint16_t rx_ports[DP_MAX_PORTS];  /* port indices (configuration order) */
	struct rte_eth_dev_tx_buffer *txb[DP_MAX_PORTS];
	struct dp_stats stats;
	struct dp_tenant_stats *tenant_stats; /* [n_tenants] */
	volatile uint64_t last_rx_tsc;
	uint32_t cur_tenant;              /* tenant of the frame in hand, for drops */
};

/* The process-wide state. */
struct dp {
	struct cfg *cfg;
	struct ovl *ovl;
	struct dp_conn_state *conn_state;  /* [ovl->n_conns] */
	struct dp_port ports[DP_MAX_PORTS];
	uint16_t n_ports;
	uint16_t port_index[RTE_MAX_ETHPORTS]; /* ethdev id -> port index */
	struct dp_lcore lcores[DP_MAX_LCORES];
	uint16_t n_lcores;
	struct rte_mempool *pool;
	volatile bool quit;
	volatile bool traffic_seen;
	uint64_t tsc_hz;
	void (*housekeep)(void); /* periodic work of the main lcore: signals, idle exit */
};

extern struct dp dp;

/* The forwarding loop of one lcore (rte_eal_remote_launch signature). */
int dp_lcore_main(void *arg);

/* Per-packet processing, exposed for the benchmarks. */
enum dp_drop dp_process_egress(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf *m, uint16_t *out_port);
enum dp_drop dp_process_ingress(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf *m, uint16_t *out_port);

/* Sums over lcores. */
void dp_stats_sum(struct dp_stats *sum);
void dp_tenant_stats_sum(uint32_t tenant, struct dp_tenant_stats *sum);

/* Telemetry commands under /roce/. */
int dp_telemetry_init(void);

/* The JSON stats summary, to @f. */
void dp_summary_write(FILE *f, const char *extra_json);

#endif /* DP_H */
