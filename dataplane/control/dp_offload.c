/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The offload manager: probe the ports, install rte_flow rules for steady
 * connections, read their counters back, withdraw them on reloads and at
 * shutdown.  See dp_offload.h for the contract and the ownership rules.
 *
 * Rules.  Each connection has two sides, each with at most one rule:
 *   tenant side, on L's port:  L's frames to R
 *       eth / ipv4|ipv6 src is L.vip dst is R.vip / udp dst is 4791 / BTH DestQP is R.vqpn
 *   fabric side, on the uplink of L's host:  R's frames to L
 *       eth / ipv4|ipv6 src is R.host dst is L.host / udp dst is 4791 / BTH DestQP is L.pqpn
 * The BTH is matched by a RAW item at the UDP payload (DPDK 22.11), or by
 * the IB_BTH item where the DPDK built against has it (23.07 and later).
 * Which rule a side gets, richest first, among those the port accepts:
 *   drop     DROP (+ COUNT): a connection denied by dp_offload_drop_conn();
 *   forward  (tenant side of a hairpin only, where nothing ICRC-covered
 *            changes and software has nothing else to do: no MR translation,
 *            no MR enforcement, no rate cap) transfer rule matching also L's
 *            port, MAC and the opcode's transport, rewriting both MACs
 *            (MODIFY_FIELD) and sending to R's port (REPRESENTED_PORT)
 *            (+ COUNT, AGE);
 *   partial  MARK (state id + 1) + QUEUE 0 + COUNT + AGE, degrading to fewer
 *            of the optional actions until one validates and creates.
 * The wire stays correct in every case: a partial rule only tells software
 * which connection a frame belongs to (and software checks that), so the
 * output is the software path's.
 *
 * Reloads and deltas (what they withdraw, the MARK index the lcores read)
 * are dp_offload_reload.c.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include "dp_offload_int.h"
#include "dp_ports.h"

const char *const side_names[SIDES] = { "egress", "ingress" };

const char *const cap_names[DP_OFL_CAP_MAX] = {
	[DP_OFL_CAP_MARK] = "mark",
	[DP_OFL_CAP_QUEUE] = "queue",
	[DP_OFL_CAP_COUNT] = "count",
	[DP_OFL_CAP_AGE] = "age",
	[DP_OFL_CAP_DROP] = "drop",
	[DP_OFL_CAP_FORWARD] = "forward",
	[DP_OFL_CAP_METER] = "meter",
};

const char *const kind_names[3] = {
	[DP_OFL_PARTIAL] = "partial",
	[DP_OFL_FORWARD] = "forward",
	[DP_OFL_DROP] = "drop",
};

struct ofl_state ofl;
struct dp_mark_index *dp_mark_index;


/*
 * ------------------------------------------------------------------------
 * Connections: which rule fits, installing and withdrawing it.
 */
int
ofl_conns_reserve(uint32_t n)
{
	struct ofl_conn *c;
	uint32_t cap;

	if (n <= ofl.n_conns)
		return 0;
	cap = RTE_MAX(n, ofl.n_conns * 2);
	c = realloc(ofl.conns, sizeof(*c) * cap);
	if (!c)
		return -1;
	memset(c + ofl.n_conns, 0, sizeof(*c) * (cap - ofl.n_conns));
	ofl.conns = c;
	ofl.n_conns = cap;
	return 0;
}

/* The uplink that receives the fabric's frames for L's host. */
int
ofl_fabric_port(const struct ovl *o, const struct ovl_conn *c)
{
	const struct ovl_endpoint *le = &o->endpoints[o->qps[c->l].endpoint];
	int h = ovl_host_index(o, le->host.b, ip_len(le->host.ver));

	return h < 0 ? -1 : o->host_port[h];
}

/*
 * May the tenant side of @c be forwarded by hardware without software?
 * Only a hairpin (nothing ICRC-covered changes: only the MACs), and only
 * where software would do nothing else to its frames: no rate cap to shape
 * to, no ACL, no memory check, no translation of R's memory windows, and
 * no VLAN policy on either port to check or apply.
 */
bool
ofl_forward_eligible(const struct ovl *o, const struct ovl_conn *c)
{
	const struct ovl_tenant *t = &o->tenants[c->tenant];
	uint32_t re = o->qps[c->r].endpoint;

	/* An ACL is checked per message in software: such a tenant keeps its frames there. */
	if (!c->hairpin || c->egress.changes_icrc || c->rate_bps || t->rate.set || t->mr_enforce || t->acl)
		return false;
	/* An XRC request's SRQ and direction are checked per frame in software. */
	if (cfg_qp_is_xrc(c->l_type))
		return false;
	if (o->ports[c->l_port].vlan.mode != CFG_VLAN_KEEP || o->ports[c->egress.port].vlan.mode != CFG_VLAN_KEEP)
		return false;
	for (uint32_t i = 0; i < o->n_mrs; i++) {
		const struct ovl_mr *m = &o->mrs[i];

		if (ovl_live(m) && m->tenant == c->tenant && m->endpoint == re &&
		    (m->target_rkey != m->rkey || m->target_addr != m->addr))
			return false;
	}
	return true;
}

/* The match half of a side's rule. */
static int
side_spec(const struct ovl *o, const struct ovl_conn *c, int side, struct rule_spec *s)
{
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	memset(s, 0, sizeof(*s));
	s->alen = (uint8_t)ip_len(le->vip.ver);
	s->udp_port = o->udp_port;
	s->mark = c->state + 1;
	if (side == SIDE_TENANT) {
		s->port_idx = c->l_port;
		memcpy(s->src, le->vip.b, s->alen);
		memcpy(s->dst, re->vip.b, s->alen);
		s->dqpn = r->vqpn;
		memcpy(s->src_mac, c->l_mac, 6);
		s->opclass = l->type == CFG_QP_UC ? 1 : cfg_qp_is_xrc(l->type) ? ROCE_TR_XRC >> 5 : 0;
		memcpy(s->new_eth, c->egress.eth, 12);
		s->out_port_idx = c->egress.port;
	} else {
		int fp = ofl_fabric_port(o, c);

		if (fp < 0)
			return -1;
		s->port_idx = (uint16_t)fp;
		s->alen = (uint8_t)ip_len(le->host.ver);
		memcpy(s->src, re->host.b, s->alen);
		memcpy(s->dst, le->host.b, s->alen);
		s->dqpn = l->pqpn;
	}
	return 0;
}

static void
conn_text(const struct ovl *o, const struct ovl_conn *c, char *buf, size_t len)
{
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];
	char a[CFG_IP_STRLEN], b[CFG_IP_STRLEN];

	ip_text(le->vip.b, ip_len(le->vip.ver), a, sizeof(a));
	ip_text(re->vip.b, ip_len(re->vip.ver), b, sizeof(b));
	textf(buf, len, "tenant %s %s:%u <-> %s:%u (state %u)", o->tenants[c->tenant].name, a, l->vqpn, b,
		 r->vqpn, c->state);
}

void
ofl_side_clear_texts(struct ofl_side *sd)
{
	free(sd->reason);
	free(sd->testpmd);
	sd->reason = sd->testpmd = NULL;
}

/* Read an installed rule's COUNT. */
static void
side_query_count(struct ofl_side *sd)
{
	struct rte_flow_query_count q = { .reset = 0 };
	const struct rte_flow_action a = { .type = RTE_FLOW_ACTION_TYPE_COUNT };
	struct rte_flow_error err;

	if (!(sd->actions & CAP(COUNT)) || !sd->flow)
		return;
	memset(&err, 0, sizeof(err));
	if (rte_flow_query(dp.ports[sd->port].port_id, sd->flow, &a, &q, &err) == 0) {
		if (q.hits_set)
			sd->hits = q.hits;
		if (q.bytes_set)
			sd->bytes = q.bytes;
	}
}

/* Remove the side's rule, keeping its counts; the side is in software again. */
void
ofl_side_withdraw(struct ofl_side *sd, const char *why)
{
	struct rte_flow_error err;

	if (sd->state == DP_OFL_INSTALLED && sd->flow) {
		/* The last counts first: they are the connection's. */
		side_query_count(sd);
		memset(&err, 0, sizeof(err));
		if (rte_flow_destroy(dp.ports[sd->port].port_id, sd->flow, &err) != 0) {
			char t[160];

			flow_error_text(-EIO, &err, t, sizeof(t));
			fprintf(stderr, "offload: port %s: destroying a rule failed (%s); it goes at shutdown\n",
				dp.ports[sd->port].name, t);
		}
		sd->hits_before += sd->hits;
		sd->bytes_before += sd->bytes;
		sd->hits = sd->bytes = 0;
		sd->withdrawals++;
		ofl.totals.withdrawn++;
		if (ofl.ports[sd->port].installed)
			ofl.ports[sd->port].installed--;
		if (why)
			fprintf(stderr, "offload: port %s: withdrew %s rule: %s\n", dp.ports[sd->port].name,
				kind_names[sd->kind], why);
	}
	sd->flow = NULL;
	sd->state = DP_OFL_NONE;
	sd->age_valid = false;
	ofl_side_clear_texts(sd);
}

void
ofl_conn_withdraw(struct ofl_conn *oc, const char *why)
{
	for (int s = 0; s < SIDES; s++)
		ofl_side_withdraw(&oc->side[s], why);
}

/*
 * Install the richest rule the port accepts on one side.  Candidates go
 * from the richest to the poorest; the first one that validates and creates
 * stays.  When none does, the side is refused with the reason of the first
 * (richest) candidate and stays in software until the connection changes.
 */
static void
side_install(const struct ovl *o, const struct ovl_conn *c, struct ofl_conn *oc, int side)
{
	struct ofl_side *sd = &oc->side[side];
	struct rule_spec base, s;
	uint32_t cands[8], n = 0, caps;
	enum dp_offload_rule_kind kinds[8];
	char why[256], first[256] = "", line[1024], ctext[160];

	if (side_spec(o, c, side, &base) < 0)
		return;
	/* QUEUE keeps the flow on the queue of the lcore that owns its half (dp.h). */
	base.queue = dp_port_rxq_of(base.port_idx, dp_half_owner(side == SIDE_TENANT ?
				    &dp_conn_state(c->state)->egress : &dp_conn_state(c->state)->ingress,
				    dp.ports[base.port_idx].lcore_idx));
	caps = ofl.ports[base.port_idx].caps;
	if (oc->deny) {
		kinds[n] = DP_OFL_DROP, cands[n++] = CAP(DROP) | (caps & CAP(COUNT));
		if (caps & CAP(COUNT))
			kinds[n] = DP_OFL_DROP, cands[n++] = CAP(DROP);
	} else {
		uint32_t opt = caps & (CAP(QUEUE) | CAP(COUNT) | CAP(AGE));

		if (side == SIDE_TENANT && (caps & CAP(FORWARD)) && ofl_forward_eligible(o, c)) {
			kinds[n] = DP_OFL_FORWARD, cands[n++] = CAP(FORWARD) | (caps & (CAP(COUNT) | CAP(AGE)));
			if (caps & CAP(AGE))
				kinds[n] = DP_OFL_FORWARD, cands[n++] = CAP(FORWARD) | (caps & CAP(COUNT));
		}
		/* MARK with each optional action dropped in turn: AGE, then COUNT, then QUEUE. */
		kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK) | opt;
		if (opt & CAP(AGE))
			kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK) | (opt & ~CAP(AGE));
		if (opt & CAP(COUNT))
			kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK) | (opt & CAP(QUEUE));
		if (opt & CAP(QUEUE))
			kinds[n] = DP_OFL_PARTIAL, cands[n++] = CAP(MARK);
	}
	for (uint32_t i = 0; i < n; i++) {
		s = base;
		s.actions = cands[i];
		s.transfer = kinds[i] == DP_OFL_FORWARD;
		if (ofl_try_rule(&s, sd, why, sizeof(why)) == 0) {
			ofl_side_clear_texts(sd);
			sd->state = DP_OFL_INSTALLED;
			sd->kind = kinds[i];
			sd->actions = cands[i];
			sd->port = s.port_idx;
			sd->hits = sd->bytes = 0;
			sd->installs++;
			ofl.totals.installed++;
			ofl.ports[s.port_idx].installed++;
			ofl_rule_testpmd(&s, line, sizeof(line));
			sd->testpmd = strdup(line);
			caps_text(cands[i], why, sizeof(why));
			conn_text(o, c, ctext, sizeof(ctext));
			fprintf(stderr, "offload: port %s: %s %s: installed %s rule (%s)\n  testpmd> %s\n",
				dp.ports[s.port_idx].name, ctext, side_names[side], kind_names[kinds[i]], why, line);
			return;
		}
		if (!*first) {
			char what[64];

			caps_text(cands[i], what, sizeof(what));
			textf(first, sizeof(first), "%s (%s): %.200s", kind_names[kinds[i]], what, why);
		}
	}
	if (n == 0) {
		/* Nothing to try: say which action the port lacks. */
		int need = oc->deny ? DP_OFL_CAP_DROP : DP_OFL_CAP_MARK;

		textf(first, sizeof(first), "%s (%s): port %s", oc->deny ? "drop" : "partial", cap_names[need],
			 ofl.ports[base.port_idx].why[need]);
	}
	ofl_side_clear_texts(sd);
	sd->state = DP_OFL_REFUSED;
	sd->kind = n ? kinds[0] : (oc->deny ? DP_OFL_DROP : DP_OFL_PARTIAL);
	sd->actions = n ? cands[0] : 0;
	sd->port = base.port_idx;
	sd->refusals++;
	sd->reason = strdup(first);
	ofl.totals.refused++;
	ofl.ports[base.port_idx].refused++;
	if (ofl.ports[base.port_idx].refusals_logged++ < REFUSALS_LOGGED) {
		conn_text(o, c, ctext, sizeof(ctext));
		fprintf(stderr, "offload: port %s: %s %s stays in software: refused %s%s\n",
			dp.ports[base.port_idx].name, ctext, side_names[side], first,
			ofl.ports[base.port_idx].refusals_logged == REFUSALS_LOGGED ?
			" (further refusals on this port only in /roce/offload)" : "");
	}
}

/* Read COUNT and AGE of an installed rule; a rule that aged out is withdrawn. */
static void
side_query(struct ofl_side *sd)
{
	uint16_t pid = dp.ports[sd->port].port_id;
	struct rte_flow_error err;

	side_query_count(sd);
	if (sd->actions & CAP(AGE)) {
		struct rte_flow_query_age q;
		const struct rte_flow_action a = { .type = RTE_FLOW_ACTION_TYPE_AGE };

		memset(&q, 0, sizeof(q));
		memset(&err, 0, sizeof(err));
		if (rte_flow_query(pid, sd->flow, &a, &q, &err) == 0) {
			sd->age_valid = q.sec_since_last_hit_valid;
			sd->age_sec = q.sec_since_last_hit;
			if (q.aged)
				ofl_side_withdraw(sd, "aged out: no traffic for the AGE timeout");
		}
	}
}

static void
poll_locked(uint64_t now)
{
	const struct ovl *o = dp.ovl;
	const struct cfg_offload *cf;
	uint64_t dt, steady, min_bps, hz = rte_get_tsc_hz();
	uint64_t n_inst = ofl.totals.installed - ofl.totals.withdrawn, k = 0;

	if (!ofl.started || !o || !dp.cfg)
		return;
	ofl.now = now;
	if (!ofl.pending && ofl.last_sample && now - ofl.last_sample < ms_tsc(DP_OFFLOAD_SAMPLE_MS))
		return;
	dt = ofl.last_sample ? now - ofl.last_sample : 0;
	ofl.last_sample = now;
	ofl.pending = false;
	if (ofl_conns_reserve(dp.n_states) < 0)
		return;
	cf = &dp.cfg->offload;
	steady = ms_tsc(cf->steady_ms);
	min_bps = (uint64_t)cf->min_rate_mbps * 1000000;
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];
		struct ofl_conn *oc = &ofl.conns[c->state];
		const struct dp_conn_state *st = dp_conn_state(c->state);

		/* A learned half stays in software: a rule needs both QPNs of the pair. */
		if (!ovl_live(c) || c->half)
			continue;

		if (!oc->seen) {
			oc->seen = true;
			oc->since = now;
			oc->side[SIDE_TENANT].last_bytes = st->egress.bytes;
			oc->side[SIDE_FABRIC].last_bytes = st->ingress.bytes;
			if (!oc->deny)
				continue;
		}
		for (int side = 0; side < SIDES; side++) {
			struct ofl_side *sd = &oc->side[side];
			uint64_t bytes = side == SIDE_TENANT ? st->egress.bytes : st->ingress.bytes;

			if (side == SIDE_FABRIC && c->hairpin)
				continue;
			if (dt) {
				sd->rate_bps = (bytes - sd->last_bytes) * 8 * hz / dt;
				sd->last_bytes = bytes;
			}
			if (sd->state == DP_OFL_INSTALLED) {
				/* Counters: all of them, or a window that turns round, QUERY_BUDGET a sample. */
				if (n_inst <= QUERY_BUDGET || (k + n_inst - ofl.query_cursor % n_inst) % n_inst < QUERY_BUDGET)
					side_query(sd);
				k++;
				continue;
			}
			if (sd->state == DP_OFL_REFUSED || !cf->enabled)
				continue;
			if (oc->deny || (now - oc->since >= steady && sd->rate_bps > min_bps))
				side_install(o, c, oc, side);
		}
	}
	ofl.query_cursor += QUERY_BUDGET;
}

void
dp_offload_poll(uint64_t now_tsc)
{
	pthread_mutex_lock(&dp.ctl_lock);
	poll_locked(now_tsc);
	pthread_mutex_unlock(&dp.ctl_lock);
}

void
dp_offload_tick(void)
{
	dp_offload_poll(rte_rdtsc());
}

int
dp_offload_drop_conn(uint32_t state_id, bool drop)
{
	struct ofl_conn *oc;

	pthread_mutex_lock(&dp.ctl_lock);
	if (state_id >= dp.n_states || ofl_conns_reserve(dp.n_states) < 0) {
		pthread_mutex_unlock(&dp.ctl_lock);
		return -ENOENT;
	}
	oc = &ofl.conns[state_id];
	if (oc->deny != drop) {
		oc->deny = drop;
		/* Whatever it had no longer fits; the next poll installs what does. */
		ofl_conn_withdraw(oc, drop ? "connection denied" : "connection allowed again");
		ofl.pending = true;
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	return 0;
}

int
dp_offload_status_get(uint32_t state_id, int dir, struct dp_offload_status *st)
{
	const struct ofl_side *sd;

	memset(st, 0, sizeof(*st));
	if (dir < 0 || dir >= SIDES)
		return -ENOENT;
	pthread_mutex_lock(&dp.ctl_lock);
	if (state_id >= ofl.n_conns) {
		pthread_mutex_unlock(&dp.ctl_lock);
		return -ENOENT;
	}
	sd = &ofl.conns[state_id].side[dir];
	st->state = sd->state;
	st->kind = sd->kind;
	st->actions = sd->actions;
	st->port = sd->port;
	st->hits = sd->hits_before + sd->hits;
	st->bytes = sd->bytes_before + sd->bytes;
	st->age_valid = sd->age_valid;
	st->age_sec = sd->age_sec;
	st->installs = sd->installs;
	st->withdrawals = sd->withdrawals;
	st->refusals = sd->refusals;
	textf(st->reason, sizeof(st->reason), "%s", sd->reason ? sd->reason : "");
	textf(st->testpmd, sizeof(st->testpmd), "%s", sd->testpmd ? sd->testpmd : "");
	pthread_mutex_unlock(&dp.ctl_lock);
	return 0;
}

void
dp_offload_totals_get(struct dp_offload_totals *t)
{
	pthread_mutex_lock(&dp.ctl_lock);
	*t = ofl.totals;
	pthread_mutex_unlock(&dp.ctl_lock);
}

void
dp_offload_fini(void)
{
	pthread_mutex_lock(&dp.ctl_lock);
	for (uint16_t pi = 0; pi < dp.n_ports && ofl.started; pi++) {
		struct rte_flow_error err;

		memset(&err, 0, sizeof(err));
		/* Ports that never took a rule say ENOSYS here: that is fine. */
		rte_flow_flush(dp.ports[pi].port_id, &err);
		ofl.totals.flushes++;
	}
	for (uint32_t i = 0; i < ofl.n_conns; i++)
		for (int s = 0; s < SIDES; s++) {
			ofl.conns[i].side[s].flow = NULL;
			ofl_side_clear_texts(&ofl.conns[i].side[s]);
		}
	if (ofl.started)
		fprintf(stderr, "offload: %" PRIu64 " rules installed, %" PRIu64 " withdrawn, %" PRIu64
			" refused over the run; all flushed\n", ofl.totals.installed, ofl.totals.withdrawn,
			ofl.totals.refused);
	free(ofl.conns);
	ofl.conns = NULL;
	ofl.n_conns = 0;
	rte_free(ofl.retired);
	ofl.retired = NULL;
	rte_free(dp_mark_index);
	__atomic_store_n(&dp_mark_index, NULL, __ATOMIC_RELEASE);
	memset(ofl.ports, 0, sizeof(ofl.ports));
	ofl.started = false;
	ofl.last_sample = 0;
	pthread_mutex_unlock(&dp.ctl_lock);
}
