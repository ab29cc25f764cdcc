/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layouts shared by the XDP program (roce_xdp.bpf.c) and its loader
 * (roce_xdp.c).  Plain fixed-width types only: this header is compiled
 * both by clang -target bpf and by the host compiler.
 */
#ifndef ROCE_XDP_MAPS_H
#define ROCE_XDP_MAPS_H

#include <linux/types.h>

/* The program's name as the kernel shows it (bpf_prog_info.name, 15 chars). */
#define ROCE_XDP_PROG_NAME "roce_xdp"

/* UDP destination port of RoCEv2 (IANA); the default of the config map. */
#define ROCE_XDP_UDP_PORT 4791

/* Largest number of receive queues the XSK map can address. */
#define ROCE_XDP_MAX_QUEUES 64

/* Largest number of deny entries (fabric-side keys of revoked connections). */
#define ROCE_XDP_MAX_DENY 65536

/*
 * The per-CPU counters, declared once.  Every frame the program sees is
 * counted exactly once:
 *   redirected  RoCEv2, handed to the AF_XDP socket of its receive queue;
 *   passed      not RoCEv2 (other protocols, other UDP ports, fragments),
 *               given to the kernel untouched;
 *   malformed   truncated or inconsistent headers, given to the kernel,
 *               which decides about them;
 *   no_socket   RoCEv2, but no AF_XDP socket is bound to the receive
 *               queue: given to the kernel;
 *   denied      RoCEv2 whose (source IP, destination QPN) is in the deny
 *               map: dropped in the driver.
 */
#define ROCE_XDP_COUNTERS(X) \
	X(REDIRECTED, "redirected") \
	X(PASSED, "passed") \
	X(MALFORMED, "malformed") \
	X(NO_SOCKET, "no_socket") \
	X(DENIED, "denied")

enum roce_xdp_counter {
#define ROCE_XDP_ENUM(e, s) ROCE_XDP_CTR_##e,
	ROCE_XDP_COUNTERS(ROCE_XDP_ENUM)
#undef ROCE_XDP_ENUM
	ROCE_XDP_CTR_COUNT
};

/*
 * Key of the deny map: the fabric-side identity of a connection's sender
 * as it appears in a received frame, the IP source address and the BTH
 * destination QPN.  An IPv4 address fills addr[0..3] and leaves the rest
 * zero; family is 4 or 6, so the two can never alias.
 */
struct roce_xdp_deny_key {
	__u8 family;
	__u8 pad[3];
	__u32 qpn;		/* 24-bit QPN in host byte order */
	__u8 addr[16];
};

/* Value of the deny map: frames dropped by this entry. */
struct roce_xdp_deny_val {
	__u64 hits;
};

/*
 * The program's settings and its holder (the one entry of config_map,
 * written by the loader).  The holder writes its PID and its start time
 * (field 22 of /proc/PID/stat) so that a later process can tell a live
 * holder from a dead one whose PID was reused.  They live in the map the
 * program reads because the kernel lists only the maps a program uses.
 */
struct roce_xdp_config {
	__u16 udp_port;		/* host byte order; 0 means ROCE_XDP_UDP_PORT */
	__u16 pad;
	__u32 owner_pid;
	__u64 owner_start_time;
};

#endif /* ROCE_XDP_MAPS_H */
