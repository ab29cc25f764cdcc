/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shaper's public types and constants (shaper.h has the functions):
 * the items the caller enqueues and dequeue returns, the verdicts, the
 * parameters, the shared admission bucket and the telemetry records.  Apart
 * from shaper.h so that the library's own files take them from below
 * without the API above them.
 */
#ifndef SHAPER_TYPES_H
#define SHAPER_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Item flags (struct shaper_pkt.flags). */
/* First packet of a message.  With a non-zero charge, the whole message is
 * admitted at this packet and its later packets up to LAST are pre-paid. */
#define SHAPER_PKT_FIRST	0x0001u
/* Last packet of a message.  FIRST | LAST is a single-packet message. */
#define SHAPER_PKT_LAST		0x0002u
/* Not charged to the tenant bucket (paid on another path, for example a
 * READ response whose request was charged on the requester's host).  It is
 * still paced by its connection and counts against the tenant's
 * transmission rate. */
#define SHAPER_PKT_EXEMPT	0x0004u

/* An item as the caller enqueues it.  The shaper copies it. */
struct shaper_pkt {
	uint64_t cookie;	/* Opaque to the shaper, returned by dequeue. */
	uint32_t conn;		/* Connection id, < shaper_params.n_conns. */
	uint32_t bytes;		/* Wire bytes of this packet. */
	/* With SHAPER_PKT_FIRST: the bytes to admit for the whole message
	 * (see shaper_msg_wire_bytes(); for a READ request, the response it
	 * will pull).  0 charges packet by packet. Ignored without FIRST. */
	uint32_t charge;
	uint16_t flags;		/* SHAPER_PKT_*. */
};

/* An item as dequeue returns it. */
struct shaper_out {
	uint64_t cookie;
	uint32_t conn;
	uint32_t bytes;
	/* Bytes still queued on the connection behind this packet: the queue
	 * depth a DCQCN congestion point marks from (Kmin, Kmax, Pmax). */
	uint32_t conn_queued;
	uint16_t flags;
};

/* Why shaper_enqueue() refused an item, declared once. */
#define SHAPER_DROP_REASONS(X) \
	X(WATCHDOG, watchdog, "tenant stayed backpressured longer than the watchdog") \
	X(OVERFLOW, overflow, "tenant queue above its hard limit") \
	X(NOBUFS, nobufs, "item pool exhausted") \
	X(DETACHED, detached, "connection not attached to a tenant")

/* Result of shaper_enqueue(): SHAPER_OK, or the reason of a refusal. */
enum shaper_verdict {
	SHAPER_OK = 0,
#define SHAPER_X_ENUM(e, n, d) SHAPER_DROP_##e,
	SHAPER_DROP_REASONS(SHAPER_X_ENUM)
#undef SHAPER_X_ENUM
	SHAPER_DROP_MAX
};


/*
 * Instance parameters.  A zero field takes the default in brackets.
 */
struct shaper_params {
	uint64_t hz;		/* Ticks per second of `now` (required). */
	uint32_t n_conns;	/* Connection ids 0 .. n_conns - 1 (required). */
	uint32_t n_tenants;	/* Tenant ids 0 .. n_tenants - 1, at most 65535 (required). */
	uint32_t n_items;	/* Item pool capacity (required). */
	/* Timing wheel: slots (a power of two, at least 64) [4096] of
	 * wheel_slot_ns each (rounded down to a power of two ticks) [1000].
	 * The horizon (slots x width) should cover the longest gap between two
	 * packets of a connection; later entries are re-filed when their slot
	 * comes round, which costs a little. */
	uint32_t wheel_slots;
	uint32_t wheel_slot_ns;
	/* How far a backlogged connection may catch up when it was served
	 * late (the poll loop was busy) [max(20 us, 4 wheel slots)]. */
	uint32_t conn_slack_ns;
	/* Fair-share quantum in bytes, the DRR quantum (one MTU), rounded down
	 * to a power of two [4096]. */
	uint32_t fair_quantum;
	/* Cut-through pacing tolerance: shaper_send_now() lets a packet of an
	 * idle connection leave this early against its pacing time [0: exact].
	 * Its pacing time still advances from the later of the two, so the
	 * long-run rate is the cap's; what it allows is a burst of this long
	 * at the cap, for a caller whose `now` is one reading per rx burst. */
	uint32_t cut_slack_ns;
	/* Backpressure longer than this turns into dropping whole messages
	 * [100 ms]. */
	uint32_t watchdog_ms;
	/* Achieved-rate EWMA: sample window [1000 us]; the weight of a new
	 * sample is 1/4. */
	uint32_t ewma_window_us;
	/* Packets one tenant may send before the next active tenant's turn [8]. */
	uint32_t tenant_visit_pkts;
};

/* Per-tenant parameters (from the config's "rate"), set and changed by
 * shaper_tenant_config(). */
struct shaper_tenant_params {
	uint64_t rate_bps;	/* Tenant cap in bits/s; 0: no tenant cap. */
	uint64_t burst_bytes;	/* Bucket depth [max(fair_quantum, 10 us at rate)]. */
	uint64_t qlimit_bytes;	/* Backpressure threshold [4 MiB]. */
	uint64_t qlimit_hard_bytes; /* New messages refused above this [2 x qlimit]. */
	/* The admission bucket to use instead of the shaper's own; NULL: its own. */
	struct shaper_shared *shared;
	uint32_t shared_id;	/* This shaper among those sharing it, below SHAPER_SHARED_MAX. */
};

/*
 * An admission bucket shared by several shapers (one per lcore) that serve
 * the same tenant, so that the tenant's cap holds over all of them: its
 * virtual time is advanced with a compare-and-swap by whichever shaper
 * admits a message, and read by all before they admit.  Each shaper keeps
 * its own transmission bucket (at the same rate), queues, fair share and
 * backpressure.  The shapers must run on the same clock (`hz`, `now`).  The
 * time is kept in 1/256 tick from shaper_shared_init()'s `now`, for 2^56
 * ticks (277 days at 3 GHz); a charge is rounded up to the next 1/256 tick.
 * Rate changes: shaper_tenant_config() of the first shaper to take a new
 * rate rescales the shared time; the others find it done.
 *
 * Fairness among the sharers: whoever finds tokens first takes them, so a
 * shaper that serves its queues a little later than another would starve.
 * Each sharer therefore counts what it admitted (`vt`, in bytes) and, while
 * it waits for tokens, when it will look again (`due`: when the bucket
 * refills, or at once when it left the tokens to another); a sharer more
 * than SHAPER_SHARED_QUANTUM ahead of a waiting one leaves the tokens to it,
 * unless that one is `late` ticks past its due time (its lcore does not run:
 * it must not stall the others).  A sharer back from idle starts at most two
 * quanta behind the one furthest ahead.
 */
#define SHAPER_SHARED_MAX	16
#define SHAPER_SHARED_QUANTUM	65536u

struct shaper_shared {
	uint64_t ts;		/* Admission virtual time (see above). */
	uint64_t cpb;		/* The rate ts is scaled for (ticks per byte, 32.32); 0: none yet. */
	uint64_t base;		/* The tick ts counts from. */
	uint64_t late;		/* Ticks past its due time after which a sharer is not waited for. */
	uint32_t lock;		/* Taken by shaper_tenant_config() only. */
	uint32_t n;		/* Sharers: the highest shared_id configured, plus one. */
	struct {
		uint64_t vt;	/* Bytes admitted (virtual: raised after idle); written by its sharer. */
		uint64_t due;	/* While it waits for tokens: the tick it looks again; 0: it does not wait. */
	} __attribute__((aligned(64))) by[SHAPER_SHARED_MAX];
} __attribute__((aligned(64)));


/* A tenant's telemetry (/roce/tenants). */
struct shaper_tenant_stats {
	uint64_t rate_bps;	/* Configured rate, 0 when uncapped. */
	uint64_t burst_bytes;
	uint64_t achieved_bps;	/* EWMA of dequeued bits per second. */
	int64_t tokens;		/* Admission bucket; negative while a message is being paid off. */
	uint64_t queued_bytes;
	uint64_t queued_limit;
	bool full;		/* Backpressure on: stop polling the tenant's port. */
	bool dropping;		/* Watchdog tripped: new messages are refused. */
	uint64_t backpressure_ns; /* Total time full, including now. */
	uint64_t watchdog_trips;
	uint32_t conns;		/* Attached connections. */
	uint64_t enq_pkts, enq_bytes;
	uint64_t deq_pkts, deq_bytes;
	/* Of the enqueued and dequeued: cut through (shaper_send_now()). */
	uint64_t cut_pkts, cut_bytes;
	uint64_t charged_bytes;	/* Admitted through the bucket, shaper_charge() included. */
	uint64_t drop_pkts[SHAPER_DROP_MAX];	/* Refused packets by reason. */
	uint64_t drop_msgs[SHAPER_DROP_MAX];	/* Refused messages by reason. */
	uint64_t flush_pkts;	/* Handed back by shaper_flush(). */
};

/* A connection's telemetry (/roce/connections). */
struct shaper_conn_stats {
	uint32_t tenant;
	bool attached;
	uint64_t cap_bps;	/* Configured cap, 0 when uncapped. */
	uint64_t cc_bps;	/* Rate from congestion control, 0 when none. */
	uint64_t pacing_bps;	/* min of the two, 0 when unpaced. */
	uint32_t queued_bytes;
	uint32_t queued_items;
};

/* The instance's own counters. */
struct shaper_stats {
	uint32_t items;		/* Pool capacity. */
	uint32_t items_used;	/* Items queued now. */
	uint64_t drops_detached; /* Refused: no such connection, or not attached. */
	uint64_t flushed;	/* Items handed back by shaper_flush(). */
};

/* Called by shaper_flush() with each item it hands back. */
typedef void (*shaper_flush_fn)(const struct shaper_out *out, void *arg);

#endif /* SHAPER_TYPES_H */
