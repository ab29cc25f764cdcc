/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_flow offload of steady connections (DESIGN.md "Offload").
 *
 * The manager runs on the control side only: dp_offload_init() probes each
 * port at start-up, dp_offload_tick() (from the control thread) samples the
 * connections' counters, installs a rule for each steady one and reads the
 * rules' counters back, dp_offload_reload() withdraws the rules of changed
 * and removed connections after a reload, and dp_offload_fini() flushes
 * every port at shutdown.  A refusal by a port is recorded with its reason
 * and leaves the connection in software; nothing here fails the switch.
 *
 * The forwarding path reads one thing: the mark index, published with each
 * overlay.  A rule's MARK carries the connection's stable state id + 1; the
 * index maps it to the connection of the current overlay together with the
 * identity a frame of that connection shows (destination IP and DestQP), so
 * that a MARKed frame skips the hash lookups.  The mark is only a hint: a
 * frame whose identity does not match (a stale rule, a reload in between)
 * takes the lookups as before, so the output never depends on the rules.
 *
 * Ownership.  Everything but the mark index is written and read under
 * dp.ctl_lock.  The mark index is built by the reload (control side) before
 * its overlay is published, published with one atomic store, read by the
 * lcores without a lock, and freed after the RCU grace period of the reload
 * that replaced it, with the overlay it belongs to.
 */
#ifndef DP_OFFLOAD_H
#define DP_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dp.h"

/* What a MARKed frame of a connection must show to be taken as its own. */
struct dp_mark_entry {
	uint32_t conn;        /* index into the overlay's conns; OVL_NONE: no connection */
	uint32_t tenant;      /* egress: the tenant of L's port */
	uint32_t e_qpn;       /* egress: DestQP L sends to (R's vQPN) */
	uint32_t i_qpn;       /* ingress: DestQP the fabric sends to (L's pQPN) */
	uint8_t e_alen;       /* 4 or 16 */
	uint8_t i_alen;       /* 4 or 16; 0 for a hairpin (no fabric side) */
	uint8_t e_dst[16];    /* egress: R's vIP */
	uint8_t i_dst[16];    /* ingress: L's host IP */
};

/* The mark index of one overlay: by state id. */
struct dp_mark_index {
	const struct ovl *ovl;    /* the overlay it was built for */
	uint32_t n;               /* state ids covered */
	struct dp_mark_entry e[]; /* [n] */
};

/* The published index; see Ownership above. */
extern struct dp_mark_index *dp_mark_index;

/* The index entry a MARKed frame of overlay @o names, or NULL. */
static inline const struct dp_mark_entry *
dp_mark_entry_of(const struct rte_mbuf *m, const struct ovl *o)
{
	const struct dp_mark_index *x;
	uint32_t id;

	if (likely(!(m->ol_flags & RTE_MBUF_F_RX_FDIR_ID)))
		return NULL;
	x = __atomic_load_n(&dp_mark_index, __ATOMIC_ACQUIRE);
	id = m->hash.fdir.hi - 1;
	/* An index of another overlay (a reload in between) is not used. */
	if (unlikely(x == NULL || x->ovl != o || id >= x->n))
		return NULL;
	return &x->e[id];
}

/*
 * Tenant side: the connection a MARKed frame from a port of @tenant to
 * (@dst, @dqpn) belongs to, or OVL_NONE (not MARKed, or the identity does
 * not match: then the caller looks it up).  A match is exactly what
 * ovl_lookup_tenant() would return, since (tenant, vip, vqpn) is a unique key.
 */
static inline uint32_t
dp_mark_egress(const struct rte_mbuf *m, const struct ovl *o, uint32_t tenant, const uint8_t *dst, unsigned alen,
	       uint32_t dqpn)
{
	const struct dp_mark_entry *e = dp_mark_entry_of(m, o);

	if (likely(e == NULL))
		return OVL_NONE;
	if (e->conn == OVL_NONE || e->tenant != tenant || e->e_qpn != dqpn || e->e_alen != alen ||
	    !dp_addr_eq(e->e_dst, dst, alen))
		return OVL_NONE;
	return e->conn;
}

/*
 * Fabric side: as dp_mark_egress() for a frame to (@dst host, @dqpn).  A
 * match also means @dst is one of this host's IPs and @dqpn is not the GSI.
 */
static inline uint32_t
dp_mark_ingress(const struct rte_mbuf *m, const struct ovl *o, const uint8_t *dst, unsigned alen, uint32_t dqpn)
{
	const struct dp_mark_entry *e = dp_mark_entry_of(m, o);

	if (likely(e == NULL))
		return OVL_NONE;
	if (e->conn == OVL_NONE || e->i_qpn != dqpn || e->i_alen != alen || !dp_addr_eq(e->i_dst, dst, alen))
		return OVL_NONE;
	return e->conn;
}

/* Reload hooks (dp_reload.c), under ctl_lock. */

/*
 * Build the mark index of @o (whose stable ids are assigned) and publish it,
 * just before @o is published.  The index it replaces is kept for
 * dp_offload_reload() to free.  Without memory the fast path is off until
 * the next reload; the reload itself goes on.
 */
void dp_offload_index_publish(const struct ovl *o);

/*
 * After the grace period that follows publishing @o in place of @old (and
 * before @old is freed or its connections' state ids are released): free the
 * replaced index, and withdraw the rules of the connections that were
 * removed or whose rewrite or identity changed.  A changed connection is
 * steady again, and gets its rule again, steady_ms later.
 */
void dp_offload_reload(const struct ovl *old, const struct ovl *o);

/*
 * The same two hooks for an incremental change (ovl_inc.h), given the
 * connections it touched: the index is the previous one with those entries
 * changed (none while offload is disabled: no frame is MARKed); the rules of
 * removed and changed connections are withdrawn, and with @mrs_changed the
 * forward rules of the others are checked against their tenant's MRs again.
 */
void dp_offload_index_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n);
void dp_offload_changes(const struct ovl *old, const struct ovl *o, const struct ovl_inc_conn *ch, uint32_t n,
			bool mrs_changed);

/* Life cycle (main.c). */

/* Probe every port with rte_flow_validate (after the ports started). */
void dp_offload_init(void);

/* Remove every rule (rte_flow_flush) of every port, before the ports stop. */
void dp_offload_fini(void);

/* Register /roce/offload. */
int dp_offload_telemetry_init(void);

/*
 * The manager's periodic work, from the control thread: about every 10 ms
 * is fine; it samples every DP_OFFLOAD_SAMPLE_MS.  dp_offload_poll() is the
 * same with the clock (TSC) passed in, for tests.
 */
#define DP_OFFLOAD_SAMPLE_MS 100
void dp_offload_tick(void);
void dp_offload_poll(uint64_t now_tsc);

/*
 * Deny (@drop true) or allow again a connection by its stable state id: a
 * denied connection gets a DROP rule on each side at the next poll, whether
 * steady or not, where the port accepts one; allowing it again withdraws the
 * DROP rules.  Returns 0, or -ENOENT for an unknown id.  Software does not
 * drop on its own because of this: it is the hardware half of a revocation.
 */
int dp_offload_drop_conn(uint32_t state_id, bool drop);

/* What a port accepts: bit i for enum dp_offload_cap i. */
enum dp_offload_cap {
	DP_OFL_CAP_MARK,
	DP_OFL_CAP_QUEUE,
	DP_OFL_CAP_COUNT,
	DP_OFL_CAP_AGE,
	DP_OFL_CAP_DROP,
	DP_OFL_CAP_FORWARD,   /* transfer: MODIFY_FIELD of both MACs + REPRESENTED_PORT */
	DP_OFL_CAP_METER,     /* rte_mtr_capabilities_get */
	DP_OFL_CAP_MAX
};

uint32_t dp_offload_port_caps(uint16_t port_idx);

/* The rule state of one side of a connection, for tests and telemetry. */
enum dp_offload_rule_state { DP_OFL_NONE, DP_OFL_INSTALLED, DP_OFL_REFUSED };
enum dp_offload_rule_kind { DP_OFL_PARTIAL, DP_OFL_FORWARD, DP_OFL_DROP };

struct dp_offload_status {
	enum dp_offload_rule_state state;
	enum dp_offload_rule_kind kind;
	uint32_t actions;         /* DP_OFL_CAP_* bits of the installed or refused rule */
	uint16_t port;            /* port index */
	uint64_t hits, bytes;     /* COUNT read back */
	bool age_valid;
	uint32_t age_sec;         /* seconds since the last hit (AGE) */
	uint32_t installs, withdrawals, refusals;
	char reason[192];         /* refusal: rule kind and the rte_flow error */
	char testpmd[1024];       /* installed: the equivalent testpmd command */
};

/* @dir 0 is the tenant side (egress), 1 the fabric side. Returns 0 or -ENOENT. */
int dp_offload_status_get(uint32_t state_id, int dir, struct dp_offload_status *st);

/* Totals over the process's life. */
struct dp_offload_totals {
	uint64_t installed, withdrawn, refused, create_failed, flushes;
};
void dp_offload_totals_get(struct dp_offload_totals *t);

#endif /* DP_OFFLOAD_H */
