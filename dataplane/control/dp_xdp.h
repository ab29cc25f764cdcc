/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch on a NIC it shares with the kernel: net_af_xdp ports with our
 * XDP program (xdp/roce_xdp.bpf.c), which steers RoCEv2 to the switch and
 * passes everything else to the kernel.
 *
 * How the program gets there.  Before EAL starts, dp_xdp_eal_args() gives
 * every --vdev net_af_xdp... that names no program xdp_prog=<ours>, and
 * checks the interface: it must exist, the kernel must have AF_XDP and let
 * us use XDP, and no live process may hold our program on it (a second
 * switch is refused); a stale program of ours (a switch killed by SIGKILL)
 * is removed.  When the port's rx queue is set up, net_af_xdp loads and
 * attaches the program through netlink and puts its socket into xsks_map.
 * dp_xdp_port_start() then moves that attachment onto a bpf_link of this
 * process, so the program leaves the interface with the process, however
 * it ends (in the mode net_af_xdp chose, or the one $ROCE_XDP_MODE names:
 * generic or native); dp_xdp_port_stop() detaches it at a clean exit and gives the
 * interface its promiscuity back.
 *
 * Frame size.  net_af_xdp uses the mbuf pool itself as the AF_XDP umem:
 * every mempool object (header, mbuf, headroom, data room) must fit one
 * page.  dp_xdp_mbuf_size_max() says how much data room that leaves.
 *
 * Deny map.  A revoked connection, one an ACL blocks, and one removed by a
 * reload have their receive-side keys (source IP, destination QPN) in the
 * program's deny_map on every net_af_xdp port where its frames arrive;
 * the program drops those frames in the driver.
 *
 * Build.  Without libbpf, libxdp or clang (xdp/meson.build), DP_HAVE_XDP is
 * not defined and every call below is an empty inline: no port is ours.
 *
 * Threads.  Everything here runs on the main or the control thread, under
 * a lock of its own; the lcores never call it.
 */
#ifndef DP_XDP_H
#define DP_XDP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "ovl.h"
#include "ovl_inc.h"

#ifdef DP_HAVE_XDP

/*
 * Before rte_eal_init(): returns the arguments to give it (*argc updated),
 * with xdp_prog= added to net_af_xdp vdevs, or NULL after saying on stderr
 * why the switch cannot start on an interface.
 */
char **dp_xdp_eal_args(int *argc, char **argv);

/* Free what dp_xdp_eal_args() made, once EAL is cleaned up. */
void dp_xdp_eal_args_free(void);

/* True when ethdev port_id is a net_af_xdp port. */
bool dp_xdp_is_af_xdp(uint16_t port_id);

/*
 * The largest --mbuf-size (data room after RTE_PKTMBUF_HEADROOM) whose pool
 * objects fit an AF_XDP frame, for a pool with priv_size bytes of private
 * area per mbuf; 0 when no port is net_af_xdp.
 */
uint32_t dp_xdp_mbuf_size_max(uint16_t priv_size);

/*
 * Before rte_eth_dev_configure() of a net_af_xdp port: remembers the
 * interface's flags.  Returns 0 (also for other ports) or -1 with a message.
 */
int dp_xdp_port_prepare(uint16_t port_id, const char *name);

/*
 * After rte_eth_dev_start() of a net_af_xdp port: takes our program over
 * (bpf_link), sets its RoCEv2 UDP port from o and denies o's blocked and
 * revoked connections.  Returns 0 or -1 with a
 * message; a program that is not ours only gets a warning (no deny map,
 * no counters).
 */
int dp_xdp_port_start(uint16_t port_id, const struct ovl *o);

/* At exit, before rte_eth_dev_stop(): detaches, restores promiscuity. */
void dp_xdp_port_stop(uint16_t port_id);

/* Revocation of c (deny) or its end (allow again), on every port concerned. */
void dp_xdp_conn_deny(const struct ovl *o, const struct ovl_conn *c, bool deny);

/*
 * After a configuration is applied and its revocations are set: the
 * program's UDP port follows o; connections of old that o no longer has
 * are denied (they stay denied until a connection of a later configuration
 * uses their key); connections of o are denied while an ACL blocks them or
 * they are revoked, allowed otherwise.  old is NULL at start-up.
 */
void dp_xdp_reload(const struct ovl *o, const struct ovl *old);

/* As dp_xdp_reload(), for the connections an incremental change touched (ovl_inc.h). */
void dp_xdp_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n);

/* Frames the programs dropped by the deny map, over all ports. */
uint64_t dp_xdp_denied_total(void);

/* Registers /roce/xdp. */
int dp_xdp_telemetry_init(void);

#else /* !DP_HAVE_XDP: built without libbpf, libxdp or clang; no port is ours */

static inline char **dp_xdp_eal_args(int *argc __rte_unused, char **argv) { return argv; }
static inline void dp_xdp_eal_args_free(void) {}
static inline bool dp_xdp_is_af_xdp(uint16_t port_id __rte_unused) { return false; }
static inline uint32_t dp_xdp_mbuf_size_max(uint16_t priv_size __rte_unused) { return 0; }
static inline int dp_xdp_port_prepare(uint16_t port_id __rte_unused, const char *name __rte_unused) { return 0; }
static inline int dp_xdp_port_start(uint16_t port_id __rte_unused, const struct ovl *o __rte_unused) { return 0; }
static inline void dp_xdp_port_stop(uint16_t port_id __rte_unused) { }
static inline void dp_xdp_conn_deny(const struct ovl *o __rte_unused, const struct ovl_conn *c __rte_unused,
				    bool deny __rte_unused) { }
static inline void dp_xdp_reload(const struct ovl *o __rte_unused, const struct ovl *old __rte_unused) { }
static inline void dp_xdp_changes(const struct ovl *o __rte_unused, const struct ovl *old __rte_unused,
				  const struct ovl_inc_conn *ch __rte_unused, uint32_t n __rte_unused) { }
static inline uint64_t dp_xdp_denied_total(void) { return 0; }
static inline int dp_xdp_telemetry_init(void) { return 0; }

#endif /* DP_HAVE_XDP */

#endif /* DP_XDP_H */
