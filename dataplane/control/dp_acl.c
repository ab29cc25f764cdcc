/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live revocation: the revoked set, the policy transitions of a reload, the
 * NAK requests to the lcores and their frames, and the telemetry commands.
 * See dp_acl.h for the design; a connection's verdict in words is
 * dp_acl_verdict.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "dp.h"
#include "dp_acl.h"
#include "dp_xdp.h"
#include "dp_offload.h"

#define NAK_RING_SIZE 1024

/* An entry of the revoked set: one end of a connection, by its virtual identity. */
struct revoked_key {
	char tenant[64];
	struct ovl_ip vip;
	uint32_t vqpn;
};

/* Control-plane state: read and written under dp.ctl_lock only. */
static struct {
	struct revoked_key *set;
	uint32_t n_set;
	uint64_t revocations;
	uint64_t tsc0, ns0;     /* the time base of dp_acl_tsc_to_ns() */
	uint64_t want[DP_MAX_LCORES]; /* naks_done each lcore must reach */
	struct ofl_op { uint32_t state; bool drop; } *ofl; /* for dp_acl_offload_flush() */
	uint32_t n_ofl;
} acl;

uint64_t
dp_acl_tsc_to_ns(uint64_t tsc)
{
	uint64_t hz = rte_get_tsc_hz(), d;

	if (tsc == 0 || hz == 0)
		return 0;
	d = tsc > acl.tsc0 ? tsc - acl.tsc0 : 0;
	return acl.ns0 + d / hz * 1000000000ull + d % hz * 1000000000ull / hz;
}

int
dp_acl_init(void)
{
	struct timespec ts;
	char name[RTE_RING_NAMESIZE];

	clock_gettime(CLOCK_REALTIME, &ts);
	acl.tsc0 = rte_rdtsc();
	acl.ns0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		snprintf(name, sizeof(name), "roce_nak_%u", l);
		/* One producer (the control plane, under ctl_lock), one consumer (the lcore). */
		dp.lcores[l].nak_ring = rte_ring_create(name, NAK_RING_SIZE, rte_socket_id(),
							RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (!dp.lcores[l].nak_ring)
			return -1;
	}
	return 0;
}

void
dp_acl_fini(void)
{
	void *p;

	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		if (!dp.lcores[l].nak_ring)
			continue;
		while (rte_ring_dequeue(dp.lcores[l].nak_ring, &p) == 0)
			free(p);
		rte_ring_free(dp.lcores[l].nak_ring);
		dp.lcores[l].nak_ring = NULL;
	}
	free(acl.set);
	acl.set = NULL;
	acl.n_set = 0;
	free(acl.ofl);
	acl.ofl = NULL;
	acl.n_ofl = 0;
}

uint64_t
dp_acl_revocations(void)
{
	return __atomic_load_n(&acl.revocations, __ATOMIC_RELAXED);
}

/*
 * Ask for the NAK to one end of @c: to L (@to_l) about L's requests, out of
 * L's port in L's virtual view; else to R about R's requests, out of the
 * uplink in the fabric view.  The lcore that forwards those requests sends
 * it.  Returns 1 if the request was queued.
 */
static unsigned
nak_request(const struct ovl *o, const struct ovl_conn *c, bool to_l)
{
	const struct ovl_rewrite *rw = to_l ? &c->ingress : &c->egress;
	struct dp_nak_req *r;
	struct dp_lcore *lc;

	/* A NAK names the requester's QPN: a learned half does not know its source's. */
	if (c->half || !(r = calloc(1, sizeof(*r))))
		return 0;
	r->req_state = c->state;
	r->req_half = to_l ? 0 : 1;
	r->ack_state = c->state;
	r->ack_half = to_l ? 1 : 0;
	if (to_l && c->hairpin) {
		/* R's answers travel on R's own connection, on its egress half. */
		uint32_t pc = o->qps[c->r].conn;

		if (pc != OVL_NONE) {
			r->ack_state = o->conns[pc].state;
			r->ack_half = 0;
		}
	}
	/* The responder's frame: the rewrite toward that end gives its addresses. */
	ovl_nak_spec(&r->spec, rw->eth, rw->ip_ver, rw->src_ip, rw->dst_ip, rw->dqpn);
	r->spec.opcode = ovl_nak_opcode(c->l_type);
	r->out_port = rw->port;
	r->vlan = ovl_vlan_of(o, c->tenant, rw->port);
	/* The lcore that owns the half the requests were forwarded on (dp.h), else one polling the port. */
	lc = &dp.lcores[dp_half_owner(to_l ? &dp_conn_state(c->state)->egress : &dp_conn_state(c->state)->ingress,
				      dp.ports[to_l ? c->l_port : c->egress.port].lcore_idx)];
	if (!lc->nak_ring) {
		free(r);
		return 0;
	}
	/* A reload may revoke many connections at once: a full ring drains within microseconds. */
	for (int i = 0; rte_ring_enqueue(lc->nak_ring, r) != 0; i++) {
		if (i == DP_NAK_WAIT_MS * 10) {
			fprintf(stderr, "revocation: lcore %u takes no NAK requests; one NAK not sent\n",
				lc->lcore_id);
			free(r);
			return 0;
		}
		usleep(100);
	}
	acl.want[lc->idx]++;
	return 1;
}

/* Wait (bounded) until every lcore has taken the NAK requests queued so far. */
static bool
nak_wait(void)
{
	for (int i = 0; i < DP_NAK_WAIT_MS * 10; i++) {
		bool done = true;

		for (uint16_t l = 0; l < dp.n_lcores; l++)
			if (__atomic_load_n(&dp.lcores[l].naks_done, __ATOMIC_ACQUIRE) < acl.want[l])
				done = false;
		if (done)
			return true;
		usleep(100);
	}
	return false;
}

/*
 * The hardware half of a revocation: the offload manager replaces any rule
 * of the connection by a DROP rule (or withdraws it when restored).  Queued
 * here under ctl_lock, handed over by dp_acl_offload_flush().
 */
static void
offload_drop(uint32_t state, bool drop)
{
	struct ofl_op *grown = realloc(acl.ofl, sizeof(*grown) * (acl.n_ofl + 1));

	if (!grown) {
		/* Software still drops it: the revoked flag is what forwarding obeys. */
		fprintf(stderr, "revocation: no memory to tell the offload manager about state %u\n", state);
		return;
	}
	acl.ofl = grown;
	acl.ofl[acl.n_ofl].state = state;
	acl.ofl[acl.n_ofl++].drop = drop;
}

void
dp_acl_offload_flush(void)
{
	struct ofl_op *ops;
	uint32_t n;

	pthread_mutex_lock(&dp.ctl_lock);
	ops = acl.ofl;
	n = acl.n_ofl;
	acl.ofl = NULL;
	acl.n_ofl = 0;
	pthread_mutex_unlock(&dp.ctl_lock);
	/*
	 * In order: a later change of the same connection comes later.  A
	 * reload in between may have removed one of these connections; the
	 * offload manager's own reload hook withdraws the rules of removed ones.
	 */
	for (uint32_t i = 0; i < n; i++)
		dp_offload_drop_conn(ops[i].state, ops[i].drop);
	free(ops);
}

/*
 * Move @c (of @o) from revoked bits @prev to @now.  Entering the revoked
 * state counts a revocation when @count and asks for the NAKs; leaving it
 * withdraws the DROP rule.  Returns the NAK requests queued.
 */
static unsigned
conn_set_revoked(const struct ovl *o, const struct ovl_conn *c, uint32_t prev, uint32_t now, bool count)
{
	struct dp_conn_state *st = dp_conn_state(c->state);
	unsigned naks = 0;

	if (prev == now)
		return 0;
	/* Both halves: each direction's lcore reads its own. */
	__atomic_store_n(&st->egress.revoked, now, __ATOMIC_RELEASE);
	__atomic_store_n(&st->ingress.revoked, now, __ATOMIC_RELEASE);
	if (now && !prev) {
		if (count)
			__atomic_fetch_add(&acl.revocations, 1, __ATOMIC_RELAXED);
		naks += nak_request(o, c, true);
		if (!c->hairpin)
			naks += nak_request(o, c, false);
		offload_drop(c->state, true);
		dp_xdp_conn_deny(o, c, true);
	} else if (!now) {
		offload_drop(c->state, false);
		dp_xdp_conn_deny(o, c, false);
	}
	return naks;
}

static bool
ip_eq(const struct ovl_ip *a, const struct ovl_ip *b)
{
	return a->ver == b->ver && memcmp(a->b, b->b, a->ver == 6 ? 16 : 4) == 0;
}

/* Is (tenant @t, @vip, @vqpn) one of the ends of @c? */
static bool
conn_has_end(const struct ovl *o, const struct ovl_conn *c, uint32_t t, const struct ovl_ip *vip, uint32_t vqpn)
{
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];

	if (c->tenant != t)
		return false;
	/* A half's one known end is its QP (l and r both). */
	return (l->vqpn == vqpn && ip_eq(&o->endpoints[l->endpoint].vip, vip)) ||
	       (r->vqpn == vqpn && ip_eq(&o->endpoints[r->endpoint].vip, vip));
}

/* Does the revoked set name an end of @c? */
static bool
set_matches(const struct ovl *o, const struct ovl_conn *c)
{
	for (uint32_t i = 0; i < acl.n_set; i++) {
		const struct revoked_key *k = &acl.set[i];

		if (!strcmp(o->tenants[c->tenant].name, k->tenant) &&
		    conn_has_end(o, c, c->tenant, &k->vip, k->vqpn))
			return true;
	}
	return false;
}

/* Connection @c's revocation under the policy (@w: 1 allowed before, 2 blocked before, 0 new); NAKs asked. */
static unsigned
conn_policy(const struct ovl *o, const struct ovl_conn *c, uint8_t w)
{
	struct dp_conn_state *st = dp_conn_state(c->state);
	uint32_t prev = __atomic_load_n(&st->egress.revoked, __ATOMIC_RELAXED), now = 0;

	if (acl.n_set && set_matches(o, c))
		now |= DP_REVOKED_CMD;
	/* Denied entirely: revoked if it was allowed, or stays revoked while denied. */
	if (c->acl_block && (w == 1 || (w == 2 && (prev & DP_REVOKED_POLICY))))
		now |= DP_REVOKED_POLICY;
	return conn_set_revoked(o, c, prev, now, w != 0);
}

static void
naks_wait(unsigned naks)
{
	if (naks && !nak_wait())
		fprintf(stderr, "revocation: the lcores did not take %u NAK requests within %d ms\n", naks,
			DP_NAK_WAIT_MS);
}

void
dp_acl_reload(const struct ovl *o, const struct ovl *old)
{
	uint8_t *was = NULL;   /* by state id: 1 in @old and allowed, 2 in @old and blocked */
	unsigned naks = 0;

	if (old) {
		was = calloc(dp.n_states + 1, 1);
		for (uint32_t i = 0; was && i < old->n_conns; i++)
			if (ovl_live(&old->conns[i]) && old->conns[i].state < dp.n_states)
				was[old->conns[i].state] = old->conns[i].acl_block ? 2 : 1;
	}
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];

		if (!ovl_live(c))
			continue;
		naks += conn_policy(o, c, was && c->state < dp.n_states ? was[c->state] : 0);
	}
	free(was);
	dp_xdp_reload(o, old);
	naks_wait(naks);
}

void
dp_acl_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n)
{
	unsigned naks = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct ovl_conn *c;
		uint8_t w = 0;

		if (ch[i].to == OVL_NONE)
			continue;
		c = &o->conns[ch[i].to];
		if (ch[i].from != OVL_NONE)
			w = old->conns[ch[i].from].acl_block ? 2 : 1;
		naks += conn_policy(o, c, w);
	}
	dp_xdp_changes(o, old, ch, n);
	naks_wait(naks);
}

/*
 * "TENANT,VIP,VQPN" of /roce/revoke and /roce/unrevoke into @k, with the
 * tenant's index in the running overlay.  On error, a message in @err.
 */
static int
key_parse(const char *params, struct revoked_key *k, uint32_t *tenant, char *err, size_t len)
{
	const struct ovl *o = dp.ovl;
	char buf[256], *vip, *qpn, *end;
	struct cfg_ip ip;
	unsigned long q;

	memset(k, 0, sizeof(*k));
	if (!params || strlen(params) >= sizeof(buf)) {
		snprintf(err, len, "parameters: TENANT,VIP,VQPN");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", params);
	vip = strchr(buf, ',');
	qpn = vip ? strchr(vip + 1, ',') : NULL;
	if (!qpn) {
		snprintf(err, len, "parameters: TENANT,VIP,VQPN");
		return -1;
	}
	*vip++ = 0;
	*qpn++ = 0;
	if (strlen(buf) >= sizeof(k->tenant)) {
		snprintf(err, len, "no tenant \"%.64s\"", buf);
		return -1;
	}
	*tenant = OVL_NONE;
	for (uint32_t t = 0; t < o->n_tenants; t++)
		if (!strcmp(o->tenants[t].name, buf))
			*tenant = t;
	if (*tenant == OVL_NONE) {
		snprintf(err, len, "no tenant \"%.64s\"", buf);
		return -1;
	}
	if (cfg_ip_parse(vip, &ip) < 0) {
		snprintf(err, len, "\"%.64s\" is not an IPv4 or IPv6 address", vip);
		return -1;
	}
	errno = 0;
	q = strtoul(qpn, &end, 0);
	if (!*qpn || *end || errno || q > ROCE_QPN_MASK) {
		snprintf(err, len, "\"%.32s\" is not a QPN", qpn);
		return -1;
	}
	snprintf(k->tenant, sizeof(k->tenant), "%s", buf);
	ovl_ip_from_cfg(&k->vip, &ip);
	k->vqpn = (uint32_t)q;
	return 0;
}

static int
key_find(const struct revoked_key *k)
{
	for (uint32_t i = 0; i < acl.n_set; i++)
		if (!strcmp(acl.set[i].tenant, k->tenant) && ip_eq(&acl.set[i].vip, &k->vip) &&
		    acl.set[i].vqpn == k->vqpn)
			return (int)i;
	return -1;
}

static uint64_t
naks_sent_total(void)
{
	struct dp_stats s;

	dp_stats_sum(&s);
	return s.naks_sent;
}

/*
 * /roce/revoke,TENANT,VIP,VQPN and /roce/unrevoke,TENANT,VIP,VQPN (@add
 * false), under ctl_lock.
 */
static int
revoke_locked(const char *params, bool add, struct rte_tel_data *d)
{
	const struct ovl *o = dp.ovl;
	struct revoked_key k;
	uint32_t tenant, matched = 0, changed = 0;
	unsigned naks = 0;
	uint64_t sent0 = naks_sent_total();
	char err[160];
	bool waited = true;
	int at;

	rte_tel_data_start_dict(d);
	if (key_parse(params, &k, &tenant, err, sizeof(err)) < 0) {
		rte_tel_data_add_dict_string(d, "error", err);
		return 0;
	}
	for (uint32_t i = 0; i < o->n_conns; i++)
		matched += ovl_live(&o->conns[i]) && conn_has_end(o, &o->conns[i], tenant, &k.vip, k.vqpn);
	at = key_find(&k);
	if (add && !matched) {
		snprintf(err, sizeof(err), "no connection of tenant \"%.64s\" has an end %s", k.tenant, params);
		rte_tel_data_add_dict_string(d, "error", err);
		return 0;
	}
	if (add && at < 0) {
		struct revoked_key *grown;

		if (acl.n_set == DP_REVOKED_SET_MAX ||
		    !(grown = realloc(acl.set, sizeof(*grown) * (acl.n_set + 1)))) {
			rte_tel_data_add_dict_string(d, "error", "the revoked set is full");
			return 0;
		}
		acl.set = grown;
		acl.set[acl.n_set++] = k;
	} else if (!add && at >= 0) {
		acl.set[at] = acl.set[--acl.n_set];
	}
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];
		struct dp_conn_state *st = dp_conn_state(c->state);
		uint32_t prev = __atomic_load_n(&st->egress.revoked, __ATOMIC_RELAXED), now;

		if (!ovl_live(c) || !conn_has_end(o, c, tenant, &k.vip, k.vqpn))
			continue;
		now = (prev & DP_REVOKED_POLICY) | (set_matches(o, c) ? DP_REVOKED_CMD : 0);
		changed += (now != 0) != (prev != 0);
		naks += conn_set_revoked(o, c, prev, now, true);
	}
	if (naks)
		waited = nak_wait();
	rte_tel_data_add_dict_string(d, "tenant", k.tenant);
	rte_tel_data_add_dict_u64(d, "vqpn", k.vqpn);
	rte_tel_data_add_dict_u64(d, "connections", matched);
	rte_tel_data_add_dict_u64(d, add ? "revoked" : "restored", changed);
	if (add) {
		rte_tel_data_add_dict_u64(d, "naks_requested", naks);
		rte_tel_data_add_dict_u64(d, "naks_sent", naks_sent_total() - sent0);
		if (!waited)
			rte_tel_data_add_dict_string(d, "warning", "NAK requests still queued");
	}
	rte_tel_data_add_dict_u64(d, "revoked_set", acl.n_set);
	return 0;
}

static int
tel_revoke(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&dp.ctl_lock);
	rc = revoke_locked(params, true, d);
	pthread_mutex_unlock(&dp.ctl_lock);
	dp_acl_offload_flush();
	return rc;
}

static int
tel_unrevoke(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&dp.ctl_lock);
	rc = revoke_locked(params, false, d);
	pthread_mutex_unlock(&dp.ctl_lock);
	dp_acl_offload_flush();
	return rc;
}

/* /roce/revoked: the revoked set, as "TENANT,VIP,VQPN" strings. */
static int
tel_revoked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char buf[160], ip[CFG_IP_STRLEN];

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&dp.ctl_lock);
	for (uint32_t i = 0; i < acl.n_set; i++) {
		struct cfg_ip c = { .ver = acl.set[i].vip.ver };

		memcpy(c.b, acl.set[i].vip.b, sizeof(c.b));
		cfg_ip_format(&c, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s,%s,%u", acl.set[i].tenant, ip, acl.set[i].vqpn);
		rte_tel_data_add_array_string(d, buf);
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	return 0;
}

int
dp_acl_telemetry_init(void)
{
	int rc = 0;

	rc |= rte_telemetry_register_cmd("/roce/revoke", tel_revoke,
					 "Revoke the connections with an end TENANT,VIP,VQPN: stop them and NAK "
					 "outstanding requests. Parameters: tenant,vip,vqpn.");
	rc |= rte_telemetry_register_cmd("/roce/unrevoke", tel_unrevoke,
					 "Undo /roce/revoke for TENANT,VIP,VQPN. Parameters: tenant,vip,vqpn.");
	rc |= rte_telemetry_register_cmd("/roce/revoked", tel_revoked,
					 "The revoked set kept across reloads. No parameters.");
	return rc;
}
