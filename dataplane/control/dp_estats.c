/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA Estats in the switch, off the per-packet path: state chunks, tenant
 * totals, and the telemetry commands
 *   /roce/estats[,TENANT[,START]]        connections with percentiles and events, paged
 *   /roce/estats/hist,TENANT[,VIP,VQPN]  a tenant's or a connection's buckets
 * Ownership is described in dp_estats.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "dp_estats.h"

/* The data plane passes rocev2's role flags straight through. */
static_assert(ESTATS_F_REQ == ROCE_OPF_REQ && ESTATS_F_RESP == ROCE_OPF_RESP, "estats flags are rocev2's");
static_assert(ESTATS_F_FIRST == ROCE_OPF_FIRST && ESTATS_F_MIDDLE == ROCE_OPF_MIDDLE, "estats flags are rocev2's");
static_assert(ESTATS_F_LAST == ROCE_OPF_LAST && ESTATS_F_ONLY == ROCE_OPF_ONLY, "estats flags are rocev2's");
static_assert(ESTATS_F_ACK == ROCE_OPF_ACK && ESTATS_F_CNP == ROCE_OPF_CNP, "estats flags are rocev2's");
static_assert(ESTATS_F_SEND == ROCE_OPF_SEND && ESTATS_F_WRITE == ROCE_OPF_WRITE, "estats flags are rocev2's");
static_assert(ESTATS_F_READ == ROCE_OPF_READ && ESTATS_F_ATOMIC == ROCE_OPF_ATOMIC, "estats flags are rocev2's");
static_assert(ESTATS_F_ACKREQ > 0xffffu && ESTATS_F_CE > 0xffffu, "the frame's own flags are above the opcode's");

#define CHUNK (1u << DP_ESTATS_CHUNK_SHIFT)
#define TEL_ESTATS_PAGE 8

struct dp_estats dp_estats;

int
dp_estats_init(const struct estats_params *p)
{
	struct estats_params def;
	uint64_t hz = rte_get_tsc_hz();

	if (!p) {
		estats_params_default(&def);
		p = &def;
	}
	if (hz == 0 || estats_profile_build(&dp_estats.prof, p) != 0)
		return -EINVAL;
	dp_estats.ns_mul = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
	dp_estats.started = true;
	dp_estats.enabled = true;
	return 0;
}

int
dp_estats_sync_id(uint32_t id)
{
	uint32_t ch = id >> DP_ESTATS_CHUNK_SHIFT;
	struct estats_conn *p;
	struct estats_conn_cold *cold;

	if (!dp_estats.started || id == OVL_NONE || ch >= DP_ESTATS_CHUNKS || dp_estats.chunks[ch])
		return 0;
	p = aligned_alloc(64, sizeof(*p) * CHUNK);
	cold = aligned_alloc(64, sizeof(*cold) * CHUNK);
	if (!p || !cold) {
		free(p);
		free(cold);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < CHUNK; k++)
		estats_conn_init(&p[k], &cold[k]);
	dp_estats.bytes += (sizeof(*p) + sizeof(*cold)) * CHUNK;
	dp_estats.cold_chunks[ch] = cold;
	/* The lcores find the chunk, linked and zeroed, through this pointer only. */
	__atomic_store_n(&dp_estats.chunks[ch], p, __ATOMIC_RELEASE);
	return 0;
}

int
dp_estats_sync(const struct ovl *o)
{
	int rc = 0;

	for (uint32_t i = 0; dp_estats.started && i < o->n_conns; i++)
		if (ovl_live(&o->conns[i]) && dp_estats_sync_id(o->conns[i].state) < 0)
			rc = -ENOMEM;
	return rc;
}

void
dp_estats_retire(uint32_t id, uint32_t tenant_slot)
{
	struct estats_conn *c = dp_estats_state(id);
	struct estats_conn_stats *s;

	if (!c || tenant_slot >= DP_MAX_TENANTS)
		return;
	s = dp_estats.retired[tenant_slot];
	if (!s) {
		s = calloc(1, sizeof(*s));
		dp_estats.retired[tenant_slot] = s;
	}
	if (s) {
		struct estats_conn_stats *one = malloc(sizeof(*one));

		if (one) {
			estats_conn_read(c, one);
			estats_conn_stats_merge(s, one);
			free(one);
		}
	}
	estats_conn_reset(c);
}

void
dp_estats_tenant_removed(uint32_t slot)
{
	if (slot >= DP_MAX_TENANTS)
		return;
	free(dp_estats.retired[slot]);
	dp_estats.retired[slot] = NULL;
}

void
dp_estats_free(void)
{
	dp_estats.enabled = false;
	dp_estats.started = false;
	for (uint32_t i = 0; i < DP_ESTATS_CHUNKS; i++) {
		free(dp_estats.chunks[i]);
		free(dp_estats.cold_chunks[i]);
		dp_estats.chunks[i] = NULL;
		dp_estats.cold_chunks[i] = NULL;
	}
	for (uint32_t t = 0; t < DP_MAX_TENANTS; t++)
		dp_estats_tenant_removed(t);
	dp_estats.bytes = 0;
}

void
dp_estats_tenant_read(const struct ovl *o, uint32_t t, struct estats_conn_stats *out)
{
	struct estats_conn_stats *one = malloc(sizeof(*one));
	uint32_t slot = o->tenants[t].slot;

	estats_conn_stats_reset(out);
	if (slot < DP_MAX_TENANTS && dp_estats.retired[slot])
		estats_conn_stats_merge(out, dp_estats.retired[slot]);
	if (!one)
		return;
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct estats_conn *c;

		if (!ovl_live(&o->conns[i]) || o->conns[i].tenant != t || !(c = dp_estats_state(o->conns[i].state)))
			continue;
		estats_conn_read(c, one);
		estats_conn_stats_merge(out, one);
	}
	free(one);
}

/* Telemetry. */

static void
vip_text(const struct ovl *o, uint32_t ep, char *buf, size_t len)
{
	const struct ovl_endpoint *e = &o->endpoints[ep];
	struct cfg_ip ip = { .ver = e->vip.ver };

	memcpy(ip.b, e->vip.b, sizeof(ip.b) < sizeof(e->vip.b) ? sizeof(ip.b) : sizeof(e->vip.b));
	cfg_ip_format(&ip, buf, len);
}

static int
pct_add(struct rte_tel_data *d, const char *key, const struct estats_hist *h)
{
	struct rte_tel_data *hd = rte_tel_data_alloc();
	struct estats_pct p;

	if (!hd)
		return -ENOMEM;
	estats_hist_percentiles(h, &p);
	rte_tel_data_start_dict(hd);
	rte_tel_data_add_dict_u64(hd, "count", p.count);
	rte_tel_data_add_dict_u64(hd, "p50_ns", p.p50);
	rte_tel_data_add_dict_u64(hd, "p90_ns", p.p90);
	rte_tel_data_add_dict_u64(hd, "p99_ns", p.p99);
	rte_tel_data_add_dict_u64(hd, "p999_ns", p.p999);
	rte_tel_data_add_dict_u64(hd, "max_ns", p.max);
	rte_tel_data_add_dict_u64(hd, "mean_ns", p.mean);
	return rte_tel_data_add_dict_container(d, key, hd, 0);
}

static int
naks_add(struct rte_tel_data *d, const char *key, const uint64_t *n)
{
	struct rte_tel_data *nd = rte_tel_data_alloc();

	if (!nd)
		return -ENOMEM;
	rte_tel_data_start_dict(nd);
	for (unsigned k = 0; k < ESTATS_NAK_MAX; k++)
		rte_tel_data_add_dict_u64(nd, estats_nak_names[k], n[k]);
	return rte_tel_data_add_dict_container(d, key, nd, 0);
}

/* Events and percentiles of @s into dictionary @d. */
static int
stats_add(struct rte_tel_data *d, const struct estats_conn_stats *s)
{
	int rc = 0;

	rte_tel_data_add_dict_u64(d, "retransmissions", s->retrans);
	rte_tel_data_add_dict_u64(d, "out_of_sequence", s->oos);
	rte_tel_data_add_dict_u64(d, "duplicate_requests", s->dup);
	rte_tel_data_add_dict_u64(d, "cnp_received", s->cnp_rx);
	rte_tel_data_add_dict_u64(d, "cnp_sent", s->cnp_tx);
	rte_tel_data_add_dict_u64(d, "ce_egress", s->ce_egress);
	rte_tel_data_add_dict_u64(d, "ce_ingress", s->ce_ingress);
	rc |= naks_add(d, "naks_received", s->naks_received);
	rc |= naks_add(d, "naks_sent", s->naks_sent);
	for (unsigned k = 0; k < ESTATS_KINDS; k++)
		rc |= pct_add(d, estats_kind_names[k], &s->hist[k]);
	return rc ? -ENOMEM : 0;
}

/* "TENANT[,START]" or "TENANT,VIP,VQPN": up to three comma-separated fields. */
static int
split_params(const char *params, char f[3][64])
{
	int n = 0;

	f[0][0] = f[1][0] = f[2][0] = 0;
	if (!params || !*params)
		return 0;
	while (n < 3) {
		const char *comma = strchr(params, ',');
		size_t len = comma ? (size_t)(comma - params) : strlen(params);

		if (len >= 64)
			return -1;
		memcpy(f[n], params, len);
		f[n++][len] = 0;
		if (!comma)
			return n;
		params = comma + 1;
	}
	return -1;
}

static int
estats_locked(const struct ovl *o, const char *params, struct rte_tel_data *d)
{
	char f[3][64], ip[64];
	int nf = split_params(params, f);
	uint32_t start, shown = 0, total = 0, next = 0;
	struct estats_conn_stats *s;

	if (nf < 0 || nf > 2)
		return -EINVAL;
	start = nf == 2 ? (uint32_t)strtoul(f[1], NULL, 10) : 0;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "enabled", __atomic_load_n(&dp_estats.enabled, __ATOMIC_RELAXED));
	if (!dp_estats.started)
		return 0;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];
		const struct estats_conn *ec = dp_estats_state(c->state);
		struct rte_tel_data *cd;
		uint32_t le, re;
		char key[16];

		if (!ovl_live(c) || (*f[0] && strcmp(f[0], o->tenants[c->tenant].name)))
			continue;
		if (!ec || total++ < start)
			continue;
		if (shown == TEL_ESTATS_PAGE) {
			if (!next)
				next = total - 1;
			continue;
		}
		cd = rte_tel_data_alloc();
		if (!cd)
			break;
		rte_tel_data_start_dict(cd);
		rte_tel_data_add_dict_string(cd, "tenant", o->tenants[c->tenant].name);
		if (c->half)
			rte_tel_data_add_dict_string(cd, "half", ovl_half_name(c->half));
		ovl_conn_ends(o, c, &le, &re);
		vip_text(o, le, ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "local_vip", ip);
		/* A half knows one QPN (/roce/connections). */
		if (c->half != OVL_HALF_OUT)
			rte_tel_data_add_dict_u64(cd, "local_vqpn", o->qps[c->l].vqpn);
		vip_text(o, re, ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "remote_vip", ip);
		if (c->half != OVL_HALF_IN)
			rte_tel_data_add_dict_u64(cd, "remote_vqpn", o->qps[c->r].vqpn);
		estats_conn_read(ec, s);
		stats_add(cd, s);
		snprintf(key, sizeof(key), "%u", i);
		if (rte_tel_data_add_dict_container(d, key, cd, 0))
			rte_tel_data_free(cd);
		shown++;
	}
	free(s);
	rte_tel_data_add_dict_u64(d, "total", total);
	rte_tel_data_add_dict_u64(d, "next", next);
	return 0;
}

/* One histogram's non-empty buckets: "le_ns" (upper bounds, 0 for the open last one) and "counts". */
static int
hist_add(struct rte_tel_data *d, const char *key, const struct estats_hist *h)
{
	struct rte_tel_data *hd = rte_tel_data_alloc(), *le = rte_tel_data_alloc(), *n = rte_tel_data_alloc();

	if (!hd || !le || !n) {
		rte_tel_data_free(hd);
		rte_tel_data_free(le);
		rte_tel_data_free(n);
		return -ENOMEM;
	}
	rte_tel_data_start_dict(hd);
	rte_tel_data_add_dict_u64(hd, "count", h->count);
	rte_tel_data_add_dict_u64(hd, "sum_ns", h->sum_ns);
	rte_tel_data_add_dict_u64(hd, "min_ns", h->min_ns);
	rte_tel_data_add_dict_u64(hd, "max_ns", h->max_ns);
	rte_tel_data_start_array(le, RTE_TEL_U64_VAL);
	rte_tel_data_start_array(n, RTE_TEL_U64_VAL);
	for (unsigned i = 0; i < ESTATS_HIST_BUCKETS; i++)
		if (h->b[i]) {
			uint64_t up = estats_hist_upper(i);

			rte_tel_data_add_array_u64(le, up == ESTATS_HIST_INF ? 0 : up);
			rte_tel_data_add_array_u64(n, h->b[i]);
		}
	rte_tel_data_add_dict_container(hd, "le_ns", le, 0);
	rte_tel_data_add_dict_container(hd, "counts", n, 0);
	return rte_tel_data_add_dict_container(d, key, hd, 0);
}

static int
hist_locked(const struct ovl *o, const char *params, struct rte_tel_data *d)
{
	char f[3][64], ip[64];
	int nf = split_params(params, f);
	struct estats_conn_stats *s;
	struct timespec ts;
	uint32_t t, found = OVL_NONE;

	if (nf != 1 && nf != 3)
		return -EINVAL;
	for (t = 0; t < o->n_tenants; t++)
		if (!strcmp(o->tenants[t].name, f[0]))
			break;
	if (t == o->n_tenants || !dp_estats.started)
		return -ENOENT;
	if (nf == 3) {
		struct cfg_ip want;
		uint32_t vqpn = (uint32_t)strtoul(f[2], NULL, 0);

		if (cfg_ip_parse(f[1], &want) != 0)
			return -EINVAL;
		cfg_ip_format(&want, f[1], sizeof(f[1]));
		for (uint32_t i = 0; i < o->n_conns && found == OVL_NONE; i++) {
			/* A connection by its local QP: an outgoing half has none. */
			if (!ovl_live(&o->conns[i]) || o->conns[i].tenant != t || o->conns[i].half == OVL_HALF_OUT ||
			    o->qps[o->conns[i].l].vqpn != vqpn)
				continue;
			vip_text(o, o->qps[o->conns[i].l].endpoint, ip, sizeof(ip));
			if (!strcmp(ip, f[1]) && dp_estats_state(o->conns[i].state))
				found = i;
		}
		if (found == OVL_NONE)
			return -ENOENT;
	}
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (found != OVL_NONE)
		estats_conn_read(dp_estats_state(o->conns[found].state), s);
	else
		dp_estats_tenant_read(o, t, s);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "tenant", o->tenants[t].name);
	if (found != OVL_NONE) {
		rte_tel_data_add_dict_string(d, "local_vip", f[1]);
		rte_tel_data_add_dict_u64(d, "local_vqpn", o->qps[o->conns[found].l].vqpn);
	}
	rte_tel_data_add_dict_u64(d, "time_ns", (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	for (unsigned k = 0; k < ESTATS_KINDS; k++)
		hist_add(d, estats_kind_names[k], &s->hist[k]);
	free(s);
	return 0;
}

/* The overlay is read under ctl_lock, against a reload freeing it. */
static int
tel_estats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&dp.ctl_lock);
	rc = dp.ovl ? estats_locked(dp.ovl, params, d) : -ENOENT;
	pthread_mutex_unlock(&dp.ctl_lock);
	return rc;
}

static int
tel_estats_hist(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&dp.ctl_lock);
	rc = dp.ovl ? hist_locked(dp.ovl, params, d) : -ENOENT;
	pthread_mutex_unlock(&dp.ctl_lock);
	return rc;
}

/* /roce/estats/enable,0|1: pause or resume recording; answers the state. */
static int
tel_estats_enable(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	if (!dp_estats.started)
		return -ENOTSUP;
	if (params && *params) {
		if (strcmp(params, "0") && strcmp(params, "1"))
			return -EINVAL;
		__atomic_store_n(&dp_estats.enabled, params[0] == '1', __ATOMIC_RELAXED);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "enabled", __atomic_load_n(&dp_estats.enabled, __ATOMIC_RELAXED));
	return 0;
}

int
dp_estats_telemetry_init(void)
{
	int rc = 0;

	rc |= rte_telemetry_register_cmd("/roce/estats", tel_estats,
		"RDMA Estats per connection: percentiles and events. Params: [TENANT[,START]]");
	rc |= rte_telemetry_register_cmd("/roce/estats/hist", tel_estats_hist,
		"Latency buckets of a tenant or one of its connections. Params: TENANT[,VIP,VQPN]");
	rc |= rte_telemetry_register_cmd("/roce/estats/enable", tel_estats_enable,
		"Pause (0) or resume (1) Estats recording, for benchmarks. Params: [0|1]");
	return rc ? -EINVAL : 0;
}
