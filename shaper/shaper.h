/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hierarchical shaper: per-connection pacing on a timing wheel (Carousel,
 * SIGCOMM'17) under per-tenant token buckets that admit whole messages and
 * share the tenant fairly among its connections.
 *
 * The library is pure: libc only, no EAL, no mbufs, no clock.  Every call
 * that depends on time takes `now` in ticks of the caller's clock (the TSC in
 * the data plane, nanoseconds in the tests), whose rate is given once as
 * shaper_params.hz.  docs/shaper.md explains the design.
 *
 * Objects.  The caller enqueues opaque items (struct shaper_pkt): a
 * connection id, the packet's wire bytes, a 64-bit cookie (the mbuf pointer)
 * and message flags.  The shaper keeps them in per-connection FIFOs built
 * from a fixed pool, allocated once at initialisation: no allocation per
 * packet.  shaper_dequeue() hands back the cookies of the items that may
 * leave now.
 *
 * Layers, as in rte_meter: parameters in human units (struct
 * shaper_params, struct shaper_tenant_params, rates in bits per second) are
 * turned into integer profiles (ticks per byte in 32.32 fixed point) when
 * they are set; the per-packet path only adds and compares integers.
 *
 * Threading.  One shaper instance belongs to one lcore: every function
 * except shaper_memsize() and the stats getters must be called from that
 * lcore.  Configuration changes (reload, DCQCN) reach it as calls between
 * bursts, never concurrently with shaper_enqueue() or shaper_dequeue().
 */
#ifndef SHAPER_H
#define SHAPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shaper_types.h"

/* Name of a verdict ("ok", "watchdog", ...) and its sentence. */
const char *shaper_drop_name(enum shaper_verdict v);
const char *shaper_drop_desc(enum shaper_verdict v);

/* Set up @s, empty, for shapers whose clock reads @now and ticks @hz a second. */
void shaper_shared_init(struct shaper_shared *s, uint64_t now, uint64_t hz);

struct shaper;

/* Bytes of memory an instance needs, or 0 if the parameters are invalid. */
size_t shaper_memsize(const struct shaper_params *p);

/*
 * Lay an instance out in caller memory (for example rte_zmalloc_socket on
 * the lcore's socket), aligned to 64 bytes and at least shaper_memsize()
 * long.  Returns NULL if the parameters are invalid.  `now` starts the
 * clock.  Every tenant starts uncapped and every connection detached.
 */
struct shaper *shaper_init(void *mem, size_t len, const struct shaper_params *p,
	uint64_t now);

/* The same with memory from aligned_alloc(); release with shaper_free(). */
struct shaper *shaper_create(const struct shaper_params *p, uint64_t now);
void shaper_free(struct shaper *sh);

/*
 * Set or change a tenant's rate, burst and queue limits.  On a change the
 * tokens are capped to the new burst and a debt is kept in bytes (so waits
 * rescale to the new rate): no burst and no stall.  Returns 0 or -EINVAL.
 */
int shaper_tenant_config(struct shaper *sh, uint32_t tenant,
	const struct shaper_tenant_params *tp, uint64_t now);

/*
 * Attach an empty connection to a tenant with a cap in bits/s (0: none).
 * Returns 0, -EINVAL, or -EBUSY if the connection still holds items.
 */
int shaper_conn_attach(struct shaper *sh, uint32_t conn, uint32_t tenant,
	uint64_t cap_bps, uint64_t now);

/* Detach an empty connection.  Returns 0, -EINVAL or -EBUSY. */
int shaper_conn_detach(struct shaper *sh, uint32_t conn);

/*
 * Change a connection's configured cap (reload) or its congestion-control
 * rate (DCQCN), in bits/s, 0 meaning none.  The pacing rate is the minimum of
 * the two; rates are kept with 1 kbit/s resolution.  The wait for the next
 * packet is rescaled to the new rate: no burst and no stall.
 */
int shaper_conn_set_cap(struct shaper *sh, uint32_t conn, uint64_t cap_bps,
	uint64_t now);
int shaper_conn_set_rate(struct shaper *sh, uint32_t conn, uint64_t rate_bps,
	uint64_t now);

/*
 * Queue one packet.  On SHAPER_OK the shaper owns the item until dequeue
 * returns its cookie; on a refusal the caller still owns it and frees it.
 * A message (the packets up to one flagged LAST) is accepted or refused as a
 * whole: once its first packet is accepted its later packets are accepted
 * even above the limits (the pool permitting), once refused they are refused
 * too.
 */
enum shaper_verdict shaper_enqueue(struct shaper *sh,
	const struct shaper_pkt *pkt, uint64_t now);

/*
 * Cut-through: let one packet leave at once when queueing it would change
 * nothing.  Call it before shaper_enqueue(), with the same packet.
 *
 * Returns true when every stage would let the packet through at `now`: its
 * connection has nothing queued (so it overtakes nothing of its own); its
 * pacing time has come; its tenant is neither backpressured nor dropping
 * and, with a tenant cap, has nothing queued at all (so fair share is kept)
 * and tokens in both buckets (the admission bucket only if the packet needs
 * a charge); and shaper_enqueue() would accept it (an empty item pool
 * does not matter: it takes no item).  The packet is then
 * accounted exactly as shaper_enqueue() followed by a shaper_dequeue() at
 * `now` would account it: a whole message charged at its first packet (its
 * later packets pre-paid), the connection's pacing time and the tenant's
 * buckets advanced, the message opened or closed for the all-or-nothing
 * acceptance, and the tenant's counters (enq, deq, cut, charged, achieved
 * rate) updated.  It is never queued: it counts in no queue depth, limit,
 * backpressure or watchdog, and takes no item from the pool.  *out is
 * filled as dequeue would fill it (conn_queued is 0); the shaper never owns
 * the packet, and the caller transmits it at once, behind whatever
 * shaper_dequeue() handed out before.
 *
 * Returns false, and changes nothing, when the packet must queue (or be
 * refused): the caller then calls shaper_enqueue() with it.  An uncapped
 * tenant has no bucket to share, so there only the connection's own queue
 * and pacing (and the tenant's backpressure) decide.  Pacing is checked
 * against the exact timestamp, never a wheel slot early.
 *
 * With two shapers in series (DCQCN: stage 1 paces, stage 2 holds the
 * bucket), a packet that passes stage 1 at once is offered to stage 2 the
 * same way, and what stage 1 dequeues too; give stage 1 a packet only if
 * stage 2 has a free item, as for its dequeue.
 */
bool shaper_send_now(struct shaper *sh, const struct shaper_pkt *pkt,
	uint64_t now, struct shaper_out *out);

/*
 * shaper_send_now() over a burst: packets @pkts[0..n) offered one after the
 * other at `now`, stopping at the first that must queue.  Returns k, the
 * number that went, accounted exactly as k calls of shaper_send_now() would
 * account them (the tenant's buckets and counters are updated once for the
 * k); pkts[k] and the rest are untouched, and the caller offers them to
 * shaper_send_now() or shaper_enqueue() in their order.  For packets of one
 * tenant (it stops at another tenant's) whose `out` the caller does not
 * need: the packets that went are its to send, in their order.
 */
unsigned int shaper_send_now_burst(struct shaper *sh, const struct shaper_pkt *pkts,
	unsigned int n, uint64_t now);

/*
 * Prefetch a connection's state ahead of shaper_send_now() or
 * shaper_enqueue(), for example for a whole rx burst once its connections
 * are known: with many connections the state is not in the cache, and
 * misses taken together overlap.
 */
void shaper_prefetch(const struct shaper *sh, uint32_t conn);

/*
 * Up to `max` items that may leave at `now`, in an order that respects each
 * connection's FIFO, its pacing rate, its tenant's bucket and the fair share
 * among the tenant's connections.  Returns the number written to `out`.
 */
unsigned int shaper_dequeue(struct shaper *sh, uint64_t now,
	struct shaper_out *out, unsigned int max);

/*
 * Hand back every held item without sending it and without moving time:
 * `fn` gets each one once (conn_queued is what that connection still held
 * behind it), and the instance is left empty and usable, every pacing time,
 * bucket and message state as if the flushed packets had never been
 * offered (a message cut short is closed).  For the caller's exit or a
 * port that went away: the caller frees the cookies.  `now` only closes a
 * tenant's backpressure period.  Returns the number of items handed back,
 * also added to shaper_stats.flushed and each tenant's flush_pkts.
 */
uint64_t shaper_flush(struct shaper *sh, uint64_t now, shaper_flush_fn fn,
	void *arg);

/*
 * The earliest time at which shaper_dequeue() may return something: `now`
 * if it may already, UINT64_MAX if nothing is queued.  For the caller's idle
 * wait; it may be early by one wheel slot, never late.
 */
uint64_t shaper_next_deadline(const struct shaper *sh, uint64_t now);

/* Change the watchdog (shaper_params.watchdog_ms; 0 takes the default). */
void shaper_set_watchdog(struct shaper *sh, uint32_t watchdog_ms);

/* Charge bytes seen on another path to a tenant's bucket (may go negative). */
void shaper_charge(struct shaper *sh, uint32_t tenant, uint64_t bytes,
	uint64_t now);

/*
 * True while the tenant's queues are full and the caller should stop
 * polling its port.  It turns false again when the queues drain below the
 * limit, or when the watchdog trips: the caller then polls again and
 * shaper_enqueue() refuses new messages until the queue is half empty.
 */
bool shaper_tenant_full(struct shaper *sh, uint32_t tenant, uint64_t now);

/* Telemetry.  Read-only: safe from the lcore that owns the instance. */
void shaper_tenant_stats(const struct shaper *sh, uint32_t tenant,
	uint64_t now, struct shaper_tenant_stats *st);
void shaper_conn_stats(const struct shaper *sh, uint32_t conn,
	struct shaper_conn_stats *st);
void shaper_stats(const struct shaper *sh, struct shaper_stats *st);

/*
 * Wire bytes of a message of `payload` bytes sent in packets of at most
 * `mtu` payload bytes, each with `hdr` bytes of headers and trailers, the
 * first with `first_extra` more (a RETH).  A zero-length message is one
 * packet.
 */
static inline uint64_t
shaper_msg_wire_bytes(uint64_t payload, uint32_t mtu, uint32_t hdr,
	uint32_t first_extra)
{
	uint64_t pkts = payload == 0 ? 1 : (payload + mtu - 1) / mtu;

	return payload + pkts * hdr + first_extra;
}

#endif /* SHAPER_H */
