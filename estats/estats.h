/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA Estats from the wire: per-connection latency split into network and
 * host, retransmissions, NAKs by kind, out-of-sequence requests, CNPs and ECN
 * marks, for RC connections whose frames a switch sees in both directions.
 *
 * The library is shaped like rte_meter: parameters in human units
 * (struct estats_params), a precomputed profile shared by every connection
 * (struct estats_profile), and a small per-connection state
 * (struct estats_conn).  It links against libc only, never reads a clock
 * (time is @now, in nanoseconds of a monotonic clock that the caller owns)
 * and takes plain values, never frames: the opcode's role flags
 * (ESTATS_F_*, the same bits as rocev2's ROCE_OPF_*), the PSN and the AETH
 * syndrome.
 *
 * Naming.  L is the local QP (behind a tenant port), R its peer across the
 * fabric.  Egress frames go from L's tenant port to the fabric: L's requests
 * and L's answers to R's requests.  Ingress frames come from the fabric to L:
 * R's requests and R's answers to L's requests.
 *
 * What is measured.
 * - Network round trip: from L's request with PSN p leaving for the fabric to
 *   the first answer from the fabric (ACK, READ response, atomic ACK) whose
 *   PSN covers p.  It includes the remote RNIC's turnaround.
 * - Host response: from R's request p delivered to L to L's answer covering p.
 * - Message completion: from the FIRST (or ONLY) packet of L's SEND or WRITE
 *   to the answer covering its LAST, retransmissions included (it is what the
 *   application waits for).
 * Round trips and host responses are sampled one at a time per connection
 * and direction, on packets that ask for an immediate answer (LAST, ONLY, or
 * the AckReq bit), and never on a retransmitted PSN (Karn's rule): a
 * retransmission seen on either side cancels the sample in flight.  An
 * answer's PSN covers p when it is p or later modulo 2^24; a NAK covers p
 * only when its PSN is after p (a NAK implicitly acknowledges the PSNs before
 * its own), and a NAK at or before the sampled PSN cancels the sample.
 *
 * Ownership.  A connection's state is two halves that each have exactly one
 * writer: struct estats_egress is written only by the thread that handles
 * L's egress frames, struct estats_ingress only by the thread that handles
 * its ingress frames.  A sample that starts on one side and ends on the other
 * crosses through one 64-bit word: the starting side stores the probe
 * (valid bit, PSN, start time modulo 2^39 ns) with a release store, the
 * completing side loads it and, once done with it, stores a copy in its own
 * half ("done").  A probe is in flight while it is non-zero and differs from
 * the other side's done word; only then may the starting side not replace
 * it, unless it is older than the profile's timeout.  Control threads read
 * everything with relaxed loads and tolerate torn totals
 * (estats_conn_read()).
 *
 * Cost.  Every per-packet call is inline, constant time, allocates nothing
 * and touches the two lines of the connection's own half, plus line 0 of
 * the other half when a probe may start or complete.  Histograms and NAK
 * counters live apart (struct estats_conn_cold), touched once per sample
 * or NAK, so that the per-frame state is 256 bytes a connection.
 */
#ifndef ESTATS_H
#define ESTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "estats_hist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Role flags of the opcode: the values of rocev2's ROCE_OPF_* (the data plane asserts it). */
#define ESTATS_F_REQ (1u << 2)
#define ESTATS_F_RESP (1u << 3)
#define ESTATS_F_FIRST (1u << 4)
#define ESTATS_F_MIDDLE (1u << 5)
#define ESTATS_F_LAST (1u << 6)
#define ESTATS_F_ONLY (1u << 7)
#define ESTATS_F_ACK (1u << 8)
#define ESTATS_F_CNP (1u << 9)
#define ESTATS_F_SEND (1u << 10)
#define ESTATS_F_WRITE (1u << 11)
#define ESTATS_F_READ (1u << 12)
#define ESTATS_F_ATOMIC (1u << 13)
/* Not the opcode's: the caller adds them from the frame's headers. */
#define ESTATS_F_ACKREQ (1u << 16)  /* the BTH AckReq bit is set */
#define ESTATS_F_CE (1u << 17)      /* the IP ECN field is CE (0b11) */

#define ESTATS_PSN_MASK 0x00ffffffu

/*
 * NAK kinds by AETH syndrome (IBTA 9.7.5.2.1): the top three bits 0b001 are
 * an RNR NAK, 0b011 a NAK whose low five bits are a code (0..4 named,
 * the rest reserved); 0b000 is an ACK; anything else is reserved.
 * X(ENUM, "name"), declared once.
 */
#define ESTATS_NAKS(X) \
	X(PSN_SEQ, "psn_sequence_error") \
	X(RNR, "rnr") \
	X(REM_ACCESS, "remote_access_error") \
	X(REM_OP, "remote_operational_error") \
	X(INV_REQ, "invalid_request") \
	X(INV_RD_REQ, "invalid_rd_request") \
	X(RESERVED, "reserved")

enum estats_nak {
#define ESTATS_X_ENUM(e, n) ESTATS_NAK_##e,
	ESTATS_NAKS(ESTATS_X_ENUM)
#undef ESTATS_X_ENUM
	ESTATS_NAK_MAX
};

extern const char *const estats_nak_names[ESTATS_NAK_MAX];

/* The sample kinds, for readers. */
enum estats_kind {
	ESTATS_NET = 0,   /* network round trip */
	ESTATS_HOST = 1,  /* host response */
	ESTATS_MSG = 2,   /* message completion */
	ESTATS_KINDS
};

extern const char *const estats_kind_names[ESTATS_KINDS];

/* Parameters in human units.  Fill with estats_params_default(). */
struct estats_params {
	/* A sample with no answer after this long is abandoned (1 .. 200000 ms). */
	uint32_t sample_timeout_ms;
	/*
	 * Out-of-sequence requests in a row after which the ingress side takes
	 * the latest PSN as the new expected one (a peer that restarted its
	 * PSNs); 1 .. 65535.
	 */
	uint32_t oos_resync;
};

/* The precomputed form; read-only once built, shared by every connection. */
struct estats_profile {
	uint64_t timeout_ns;
	uint32_t oos_resync;
};

/*
 * What each side touches once per sample (histograms) or on rare frames
 * (NAKs), kept apart from the per-frame state so that the latter stays
 * dense: 256 bytes a connection that many connections' frames can share
 * pages and caches with.  Each half has the one writer of its side.
 */
struct estats_egress_cold {
	struct estats_hist host;        /* host response */
	uint64_t naks[ESTATS_NAK_MAX];  /* NAKs that L sent */
} __attribute__((aligned(64)));

struct estats_ingress_cold {
	struct estats_hist net;         /* network round trip */
	struct estats_hist msg;         /* message completion */
	uint64_t naks[ESTATS_NAK_MAX];  /* NAKs that R sent */
} __attribute__((aligned(64)));

struct estats_conn_cold {
	struct estats_egress_cold egress;
	struct estats_ingress_cold ingress;
};

/* The per-frame half written by the thread of L's egress frames: two lines. */
struct estats_egress {
	/* Line 0, read by the ingress side; written once per sample. */
	uint64_t net_probe;   /* L's request sampled for the network round trip */
	uint64_t msg_probe;   /* L's message whose LAST awaits its answer; PSN of the LAST */
	uint64_t host_done;   /* the ingress side's host probe, once consumed here */
	struct estats_egress_cold *cold; /* set by estats_conn_init(), then read-only */
	/* Line 1, written per frame by this side only; counters read by control threads. */
	uint64_t msg_t0 __attribute__((aligned(64))); /* when the open message's FIRST left */
	uint32_t nxt_psn;     /* the PSN after L's newest request */
	uint8_t nxt_valid;
	uint8_t msg_open;     /* a sampled message has begun and its LAST is not yet seen */
	uint64_t retrans;     /* L's requests whose PSN was seen before */
	uint64_t ce;          /* egress frames with CE */
} __attribute__((aligned(64)));

/* The per-frame half written by the thread of L's ingress frames: two lines. */
struct estats_ingress {
	/* Line 0, read by the egress side; written once per sample. */
	uint64_t host_probe;  /* R's request delivered to L, sampled */
	uint64_t net_done;    /* the egress side's network probe, once consumed here */
	uint64_t msg_done;    /* the egress side's message probe, once consumed here */
	struct estats_ingress_cold *cold; /* set by estats_conn_init(), then read-only */
	/* Line 1, written per frame by this side only; counters read by control threads. */
	uint32_t exp_psn __attribute__((aligned(64))); /* the PSN R's next request should carry */
	uint8_t exp_valid;
	uint16_t oos_run;     /* out-of-sequence requests in a row */
	uint64_t oos;         /* R's requests ahead of the expected PSN */
	uint64_t dup;         /* R's requests behind it: R retransmitted */
	uint64_t cnp_rx;      /* CNPs from the fabric for L */
	uint64_t cnp_tx;      /* CNPs the switch sent to R for this connection */
	uint64_t ce;          /* ingress frames with CE */
} __attribute__((aligned(64)));

/* A connection's per-frame state, 256 bytes; estats_conn_init() links it to its cold part. */
struct estats_conn {
	struct estats_egress egress;
	struct estats_ingress ingress;
};

/* What estats_conn_read() returns: plain totals and quiescent histograms. */
struct estats_conn_stats {
	uint64_t retrans, oos, dup, cnp_rx, cnp_tx, ce_egress, ce_ingress;
	uint64_t naks_sent[ESTATS_NAK_MAX];     /* by L */
	uint64_t naks_received[ESTATS_NAK_MAX]; /* from R */
	struct estats_hist hist[ESTATS_KINDS];  /* by enum estats_kind */
};

/* Parameters: defaults (10 s timeout, resync after 1024) and checks. */
void estats_params_default(struct estats_params *p);
/* Build @prof from @p; 0, or -EINVAL (and @prof untouched) when a value is out of range. */
int estats_profile_build(struct estats_profile *prof, const struct estats_params *p);

/*
 * Empty a connection's state and link it to @cold, which it uses from then
 * on (both halves: only while neither side runs).
 */
void estats_conn_init(struct estats_conn *c, struct estats_conn_cold *cold);

/* Empty a connection's state, keeping its cold part (only while neither side runs). */
void estats_conn_reset(struct estats_conn *c);

/*
 * Read @c while its writers run: relaxed loads, histograms snapshotted
 * (estats_hist_snapshot()).  @out is overwritten.
 */
void estats_conn_read(const struct estats_conn *c, struct estats_conn_stats *out);

/* Add @src into @dst: a tenant's totals are the sum of its connections'. */
void estats_conn_stats_merge(struct estats_conn_stats *dst, const struct estats_conn_stats *src);

/* Zero @s (it is large: use this rather than an initialiser on the stack). */
void estats_conn_stats_reset(struct estats_conn_stats *s);

/* Per-packet inline functions and their helpers. */
#include "estats_wire.h"

#ifdef __cplusplus
}
#endif

#endif /* ESTATS_H */
