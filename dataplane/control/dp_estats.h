/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA Estats in the switch: where each connection's estats/ state lives,
 * the per-packet wrappers the path calls, per-tenant totals, and the
 * /roce/estats telemetry commands.
 *
 * Ownership.  The states live in chunks beside the connection states, by
 * the same stable id (ovl_conn.state): the per-frame part (256 bytes a
 * connection) in one array, the histograms and NAK counters (about 9.9 KB)
 * in another, so that the lines a frame touches stay dense.  The control
 * plane allocates a chunk
 * (dp_estats_sync(), under ctl_lock, before it publishes an overlay that
 * uses it) and publishes its pointer with a release store; chunks are never
 * freed while the lcores run.  Within a connection's state the egress half
 * is written only by the lcore polling L's tenant port and the ingress half
 * only by the lcore polling the uplink the frame came from, the same rule as
 * struct dp_conn_state.  Readers (telemetry, the Prometheus exporter) hold
 * ctl_lock for the overlay and read the states with relaxed loads, tolerating
 * totals a burst apart.  A tenant's totals are the sum of its live
 * connections' plus those of its connections removed by reloads ("retired",
 * kept by tenant slot), so they never go back.
 */
#ifndef DP_ESTATS_H
#define DP_ESTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "dp.h"
#include "estats.h"

#define DP_ESTATS_CHUNK_SHIFT 8   /* 256 connections a chunk: 64 KiB per-frame, 2.4 MiB cold */
#define DP_ESTATS_CHUNKS ((DP_STATE_CHUNKS << DP_STATE_CHUNK_SHIFT) >> DP_ESTATS_CHUNK_SHIFT)

struct dp_estats {
	bool enabled;                 /* the path records (--estats; /roce/estats/enable may pause it) */
	bool started;                 /* dp_estats_init() has run */
	struct estats_profile prof;
	uint64_t ns_mul;              /* TSC to ns: (tsc * ns_mul) >> 32 */
	struct estats_conn *chunks[DP_ESTATS_CHUNKS];          /* per-frame state, dense */
	struct estats_conn_cold *cold_chunks[DP_ESTATS_CHUNKS]; /* histograms and NAKs */
	struct estats_conn_stats *retired[DP_MAX_TENANTS]; /* by tenant slot; NULL: none yet */
	uint64_t bytes;               /* memory held by the chunks */
};

extern struct dp_estats dp_estats;

/* The state of connection state id @id, paused or not, or NULL (no chunk): for readers. */
static inline struct estats_conn *
dp_estats_state(uint32_t id)
{
	struct estats_conn *ch;

	if ((id >> DP_ESTATS_CHUNK_SHIFT) >= DP_ESTATS_CHUNKS)
		return NULL;
	ch = __atomic_load_n(&dp_estats.chunks[id >> DP_ESTATS_CHUNK_SHIFT], __ATOMIC_ACQUIRE);
	return ch ? &ch[id & ((1u << DP_ESTATS_CHUNK_SHIFT) - 1u)] : NULL;
}

/* The state the path records into, or NULL (Estats off or paused, or no chunk yet). */
static inline struct estats_conn *
dp_estats_conn(uint32_t id)
{
	if (!__atomic_load_n(&dp_estats.enabled, __ATOMIC_RELAXED))
		return NULL;
	return dp_estats_state(id);
}

/* Nanoseconds of TSC value @tsc (the clock estats/ is given). */
static inline uint64_t
dp_estats_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * dp_estats.ns_mul) >> 32);
}

/*
 * The flags estats/ takes for a frame: the opcode's role flags @opflags
 * (rocev2's table, as the parse copied them), plus the BTH AckReq bit and
 * the IP ECN field.  0 for frames that are neither RC, XRC nor a CNP, which
 * the calls below then ignore.
 */
static inline uint32_t
dp_estats_flags(uint8_t opcode, uint32_t opflags, bool ackreq, unsigned ecn)
{
	uint32_t f;

	if (!ovl_track_opcode(opcode) && opcode != ROCE_OP_CNP)
		return 0;
	f = opflags;
	if (ackreq)
		f |= ESTATS_F_ACKREQ;
	if (ecn == 3)
		f |= ESTATS_F_CE;
	return f;
}

/*
 * The estats/ arguments of a parsed RoCEv2 frame at @data: the flags (with
 * AckReq and CE), and the PSN and AETH syndrome (0 without an AETH) through
 * @psn and @syn.  0 for frames that are neither RC nor a CNP.
 */
static inline uint32_t
dp_estats_frame_args(const uint8_t *data, const struct roce_pkt *pkt, uint32_t *psn, unsigned *syn)
{
	const uint8_t *bth = data + pkt->bth_off, *l3 = data + pkt->l3_off;
	unsigned aeth = roce_ext_offset(pkt->exts, ROCE_EXT_AETH);
	unsigned ecn = pkt->ip_ver == 6 ? (l3[1] >> 4) & 3u : l3[1] & 3u;


	*psn = (uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11];
	*syn = aeth ? bth[aeth] : 0;
	return dp_estats_flags(pkt->opcode, pkt->flags, (bth[8] & 0x80) != 0, ecn);
}

/*
 * Per-packet calls, from the stage that holds the frame with its connection
 * resolved; @tsc is the lcore's loop time (lc->now).  No call for a hairpin:
 * its frames never cross the fabric.
 *
 * dp_estats_egress_frame: a frame of L forwarded toward the fabric, by the
 * lcore polling L's tenant port, once the frame is certain to leave
 * (stage 4).
 * dp_estats_ingress_marks: a frame from the fabric for L, by the lcore
 * polling the uplink, before DCQCN may clear its CE mark or consume it as a
 * CNP (stage 3): counts the CE mark and the CNP, nothing else.
 * dp_estats_ingress_frame: the same frame once it is certain to reach L
 * (stage 4): R's requests and answers.
 *
 * Whether the path records now, and its clock in ns at the burst's TSC
 * reading @tsc: what stage 4 reads once a burst for the *_at() calls below
 * (a pause by /roce/estats/enable then takes effect at the next burst).
 */
static inline bool
dp_estats_recording(void)
{
	return __atomic_load_n(&dp_estats.enabled, __ATOMIC_RELAXED);
}

/* dp_estats_egress_frame() with Estats known to record and the time in ns. */
static inline void
dp_estats_egress_at(uint32_t state, const uint8_t *data, const struct roce_pkt *pkt, uint64_t ns)
{
	struct estats_conn *c = dp_estats_state(state);
	uint32_t psn;
	unsigned syn;

	if (c) {
		uint32_t f = dp_estats_frame_args(data, pkt, &psn, &syn);

		estats_egress(c, &dp_estats.prof, f, psn, syn, ns);
	}
}

/* dp_estats_ingress_frame() with Estats known to record and the time in ns. */
static inline void
dp_estats_ingress_at(uint32_t state, const uint8_t *data, const struct roce_pkt *pkt, uint64_t ns)
{
	struct estats_conn *c = dp_estats_state(state);
	uint32_t psn;
	unsigned syn;

	if (c) {
		uint32_t f = dp_estats_frame_args(data, pkt, &psn, &syn) & ~(ESTATS_F_CE | ESTATS_F_CNP);

		estats_ingress(c, &dp_estats.prof, f, psn, syn, ns);
	}
}

static inline void
dp_estats_egress_frame(uint32_t state, const uint8_t *data, const struct roce_pkt *pkt, uint64_t tsc)
{
	if (dp_estats_recording())
		dp_estats_egress_at(state, data, pkt, dp_estats_ns(tsc));
}

static inline void
dp_estats_ingress_marks(uint32_t state, const uint8_t *data, const struct roce_pkt *pkt)
{
	struct estats_conn *c = dp_estats_conn(state);
	uint32_t psn;
	unsigned syn;

	if (c) {
		uint32_t f = dp_estats_frame_args(data, pkt, &psn, &syn) & (ESTATS_F_CE | ESTATS_F_CNP);

		if (f)
			estats_ingress(c, &dp_estats.prof, f, 0, 0, 0);
	}
}

static inline void
dp_estats_ingress_frame(uint32_t state, const uint8_t *data, const struct roce_pkt *pkt, uint64_t tsc)
{
	if (dp_estats_recording())
		dp_estats_ingress_at(state, data, pkt, dp_estats_ns(tsc));
}

/*
 * Prefetch what the per-packet calls will touch for a frame of connection
 * state @state: the two lines of this direction's half and line 0 of the
 * other's (stage 2, beside the connection state's prefetch).
 */
static inline void
dp_estats_prefetch(uint32_t state, bool uplink)
{
	const struct estats_conn *c = dp_estats_conn(state);

	if (c) {
		const char *own = uplink ? (const char *)&c->ingress : (const char *)&c->egress;

		__builtin_prefetch(own, 1);
		__builtin_prefetch(own + 64, 1);
		__builtin_prefetch(uplink ? (const void *)&c->egress : (const void *)&c->ingress, 0);
	}
}

/* The notification point sent a CNP for this connection (the uplink's lcore, in cnp_send()). */
static inline void
dp_estats_cnp_sent(uint32_t state)
{
	struct estats_conn *c = dp_estats_conn(state);

	if (c)
		estats_ingress_cnp_sent(c);
}

/*
 * Turn Estats on with @p (NULL: the defaults); before the lcores start.
 * 0 or a negative errno.
 */
int dp_estats_init(const struct estats_params *p);

/*
 * Make sure every connection of @o has its state (zeroed when new); under
 * ctl_lock, before @o is published.  A chunk that cannot be allocated leaves
 * its connections unmeasured: -ENOMEM, and nothing else breaks.
 */
int dp_estats_sync(const struct ovl *o);

/* The same for one connection state id. */
int dp_estats_sync_id(uint32_t id);

/*
 * Connection state @id of a tenant in slot @tenant_slot is being freed (no
 * lcore can reach it any more): add it to the tenant's retired totals and
 * zero it for its next owner.  Under ctl_lock.
 */
void dp_estats_retire(uint32_t id, uint32_t tenant_slot);

/* The tenant in @slot is gone: forget its retired totals.  Under ctl_lock. */
void dp_estats_tenant_removed(uint32_t slot);

/* Free everything; after the lcores have stopped. */
void dp_estats_free(void);

/*
 * Totals of tenant index @t of @o (its live connections and its retired
 * ones) into @out, which is overwritten.  Under ctl_lock.
 */
void dp_estats_tenant_read(const struct ovl *o, uint32_t t, struct estats_conn_stats *out);

/*
 * The /roce/estats, /roce/estats/hist and /roce/estats/enable telemetry
 * commands; 0 or a negative errno.  /roce/estats/enable,0|1 pauses and
 * resumes recording (with --estats only), for benchmarks that compare
 * Estats on and off within one run; a sample in flight across a pause may
 * come out long, and a probe left unanswered during it times out.
 */
int dp_estats_telemetry_init(void);

#endif /* DP_ESTATS_H */
