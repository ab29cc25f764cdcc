/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_rtest: a TEST-ONLY virtual PMD with rte_flow in software.  It is
 * linked into tests/offload/test_offload and never into the switch.
 *
 * Each port's "wire" is two rte_rings: the test injects frames into the rx
 * ring (rtest_inject) and reads what the application sent from the tx ring
 * (rtest_collect).  Its flow_ops validate a rule against a declared set of
 * capabilities (devargs caps=mark:queue:count:age:drop:forward, or
 * rtest_caps_set()), create, query COUNT and AGE, destroy and flush rules,
 * and its rx burst applies them to received frames as a NIC would: the first
 * rule whose pattern matches decides; MARK sets RTE_MBUF_F_RX_FDIR |
 * RTE_MBUF_F_RX_FDIR_ID and hash.fdir.hi, DROP frees the frame, a transfer
 * rule rewrites the MACs and puts the frame on the wire of the target port,
 * QUEUE keeps it on queue 0 (the only one), COUNT and AGE count.  Frames no
 * rule matches keep their ol_flags as injected, so a test can inject frames
 * carrying a mark of its own.
 *
 * Patterns understood: PORT_REPRESENTOR, ETH (source MAC), IPV4 and IPV6
 * (source and destination), UDP (destination port), RAW (relative to the
 * UDP header, no search, with a byte mask), IB_BTH where DPDK has it.
 */
#ifndef RTEST_PMD_H
#define RTEST_PMD_H

#include <stdint.h>

#include <rte_mbuf.h>

enum {
	RTEST_CAP_MARK = 1u << 0,
	RTEST_CAP_QUEUE = 1u << 1,
	RTEST_CAP_COUNT = 1u << 2,
	RTEST_CAP_AGE = 1u << 3,
	RTEST_CAP_DROP = 1u << 4,
	RTEST_CAP_FORWARD = 1u << 5,     /* transfer rules: MODIFY_FIELD MACs + REPRESENTED_PORT */
	RTEST_CAP_FAIL_CREATE = 1u << 6, /* validate accepts, create fails (as net_tap does) */
	RTEST_CAP_ALL = 0x3f,
};

struct rtest_stats {
	uint64_t rx, marked, dropped, forwarded; /* frames, by what a rule did */
	uint64_t validated, refused, created, destroyed, flushed;
	uint32_t rules;                          /* installed now */
};

/* Is @port_id a net_rtest port? */
int rtest_is_port(uint16_t port_id);
void rtest_caps_set(uint16_t port_id, uint32_t caps);
/* Put @n frames on the port's wire toward the application; returns how many fit. */
unsigned rtest_inject(uint16_t port_id, struct rte_mbuf **m, unsigned n);
/* Take up to @n frames the application sent on the port. */
unsigned rtest_collect(uint16_t port_id, struct rte_mbuf **m, unsigned n);
int rtest_stats_get(uint16_t port_id, struct rtest_stats *s);

#endif /* RTEST_PMD_H */
