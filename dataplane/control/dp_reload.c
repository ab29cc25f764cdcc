/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration changes while forwarding: load and build off the lcores,
 * carry every surviving connection's and tenant's dynamic state over by its
 * stable id, publish with one atomic store, and free the old overlay after
 * an RCU grace period.  Also the control thread that serves SIGHUP.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dp.h"
#include "dp_acl.h"
#include "dp_estats.h"
#include "dp_ids.h"
#include "dp_inc.h"
#include "dp_offload.h"
#include "dp_rate.h"

/*
 * The etcd follower (dp_cluster.h) needs libcurl (cluster/), so it is linked
 * only into binaries that configure it (dp_cluster_configure()): these weak
 * references do not pull it in, and are NULL without it.
 */
/*
 * Who is told that a file reload replaced the running records (dp_reload_listen()):
 * set at start-up, before any reload can run concurrently, then only read.
 */
static void (*listeners[4])(void);
static unsigned n_listeners;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
report_error(struct dp_reload_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
report_error(struct dp_reload_report *rep, const char *fmt, ...)
{
	char **msg = realloc(rep->errs.msg, sizeof(*msg) * (rep->errs.n + 1));
	va_list ap;

	if (!msg)
		return;
	rep->errs.msg = msg;
	va_start(ap, fmt);
	if (vasprintf(&msg[rep->errs.n], fmt, ap) >= 0)
		rep->errs.n++;
	va_end(ap);
}

static uint32_t
tenant_slot_alloc(void)
{
	for (uint32_t s = 0; s < DP_MAX_TENANTS; s++) {
		if (dp.tenant_used[s])
			continue;
		dp.tenant_used[s] = true;
		for (uint16_t l = 0; l < dp.n_lcores; l++)
			if (dp.lcores[l].tenant_stats)
				memset(&dp.lcores[l].tenant_stats[s], 0, sizeof(struct dp_tenant_stats));
		return s;
	}
	return OVL_NONE;
}

/* The running process cannot add, remove or re-map ports. */
static bool
ports_changed(const struct cfg *old, const struct cfg *c, struct dp_reload_report *rep)
{
	bool bad = false;

	if (old->n_ports != c->n_ports) {
		report_error(rep, "%s: ports: %u ports where the running switch has %u; ports cannot be added "
			     "or removed while it runs", c->path, c->n_ports, old->n_ports);
		return true;
	}
	for (uint32_t i = 0; i < c->n_ports; i++) {
		if (strcmp(old->ports[i].name, c->ports[i].name)) {
			report_error(rep, "%s: ports[%u].name: \"%s\" where the running switch has \"%s\"", c->path,
				     i, c->ports[i].name, old->ports[i].name);
			bad = true;
		}
		if (strcmp(old->ports[i].device, c->ports[i].device)) {
			report_error(rep, "%s: ports[%u].device: \"%s\" where the running switch has \"%s\"; "
				     "devices cannot change while it runs", c->path, i, c->ports[i].device,
				     old->ports[i].device);
			bad = true;
		}
		if (old->ports[i].role != c->ports[i].role) {
			report_error(rep, "%s: ports[%u].role: cannot change while the switch runs", c->path, i);
			bad = true;
		}
		if (old->ports[i].rx_queues != c->ports[i].rx_queues) {
			report_error(rep, "%s: ports[%u].rx_queues: cannot change while the switch runs", c->path, i);
			bad = true;
		}
	}
	return bad;
}

static uint32_t
old_tenant_index(const struct ovl *old, const char *name)
{
	for (uint32_t t = 0; old && t < old->n_tenants; t++)
		if (!strcmp(old->tenants[t].name, name))
			return t;
	return OVL_NONE;
}

/*
 * The connection of @old that @c of @o is (old tenant @ot), or OVL_NONE:
 * found by its key, with the same L (local vip and vqpn); a half only as the
 * same half (its QP's key and its source's vip).
 */
static uint32_t
old_conn_of(const struct ovl *o, const struct ovl_conn *c, const struct ovl *old, uint32_t ot)
{
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *re = &o->endpoints[r->endpoint];
	const struct ovl_conn *oc;
	uint32_t v;

	if (ot == OVL_NONE)
		return OVL_NONE;
	if (c->half == OVL_HALF_IN)
		v = ovl_lookup_fabric(old, o->endpoints[l->endpoint].host.b,
				      o->endpoints[l->endpoint].host.ver == 6 ? 16 : 4, l->pqpn);
	else
		v = ovl_lookup_tenant(old, ot, re->vip.b, re->vip.ver == 6 ? 16 : 4, r->vqpn);
	if (v == OVL_NONE || (v & OVL_V_QP))
		return OVL_NONE;
	oc = &old->conns[OVL_V_IDX(v)];
	if (oc->half != c->half || memcmp(oc->l_vip, c->l_vip, sizeof(c->l_vip)))
		return OVL_NONE;
	if (c->half == OVL_HALF_OUT)
		return v;       /* the QP's key, from the same source vip (l_vip) */
	if (c->half == OVL_HALF_IN) {
		/* The same pqpn, for the same QP of the same tenant, from the same source. */
		const struct ovl_ip *a = &old->endpoints[oc->src_ep].vip, *b = &o->endpoints[c->src_ep].vip;

		if (oc->tenant != ot || a->ver != b->ver || memcmp(a->b, b->b, sizeof(a->b)) ||
		    memcmp(oc->r_host, c->r_host, sizeof(c->r_host)))
			return OVL_NONE;
	}
	return old->qps[oc->l].vqpn == l->vqpn ? v : OVL_NONE;
}

/*
 * Give every tenant and connection of @o its stable id: the one it had in
 * @old when it is the same (tenants by name; connections by tenant, local
 * vIP and vQPN, and remote vIP and vQPN), else a fresh one.  Marks in
 * @kept_conn and @kept_tenant what of @old survives.  On failure the fresh
 * ids go back and @old keeps its own.
 */
static int
assign_ids(struct ovl *o, const struct ovl *old, uint8_t *kept_conn, uint8_t *kept_tenant,
	   struct dp_reload_report *rep)
{
	uint32_t *tmap = calloc(o->n_tenants + 1, sizeof(*tmap));
	uint8_t *fresh_t = calloc(o->n_tenants + 1, 1), *fresh_c = calloc(o->n_conns + 1, 1);

	if (!tmap || !fresh_t || !fresh_c)
		goto fail;
	for (uint32_t t = 0; t < o->n_tenants; t++) {
		uint32_t ot = old_tenant_index(old, o->tenants[t].name);

		tmap[t] = ot;
		if (ot != OVL_NONE) {
			o->tenants[t].slot = old->tenants[ot].slot;
			kept_tenant[ot] = 1;
			continue;
		}
		o->tenants[t].slot = tenant_slot_alloc();
		if (o->tenants[t].slot == OVL_NONE)
			goto fail;
		fresh_t[t] = 1;
		rep->tenants_added++;
	}
	for (uint32_t i = 0; i < o->n_conns; i++) {
		struct ovl_conn *c = &o->conns[i];
		uint32_t v = old_conn_of(o, c, old, tmap[c->tenant]);

		if (v != OVL_NONE) {
			const struct ovl_conn *oc = &old->conns[OVL_V_IDX(v)];

			c->state = oc->state;
			kept_conn[OVL_V_IDX(v)] = 1;
			if (memcmp(&oc->egress, &c->egress, sizeof(c->egress)) ||
			    memcmp(&oc->ingress, &c->ingress, sizeof(c->ingress)) ||
			    oc->rate_bps != c->rate_bps || memcmp(oc->l_mac, c->l_mac, 6) ||
			    memcmp(oc->acl_allow, c->acl_allow, sizeof(c->acl_allow)))
				rep->conns_changed++;
			else
				rep->conns_kept++;
			/* Its shaper needs the new cap (fresh_c 2), or nothing. */
			if (oc->rate_bps != c->rate_bps)
				fresh_c[i] = 2;
			continue;
		}
		c->state = dp_state_alloc();
		if (c->state == OVL_NONE)
			goto fail;
		fresh_c[i] = 1;
		rep->conns_added++;
	}
	/* The shapers' share of the change; it can only run out of memory. */
	if (dp_rate_prepare(o, old, fresh_c, kept_conn) < 0)
		goto fail;
	free(tmap);
	free(fresh_t);
	free(fresh_c);
	return 0;
fail:
	report_error(rep, "%s: more tenants (%u at most) or connections (--max-connections %u) than the "
		     "switch can track", o->cfg->path, DP_MAX_TENANTS, dp.conn_cap);
	for (uint32_t i = 0; fresh_c && i < o->n_conns; i++)
		if (fresh_c[i] == 1)
			dp_state_release(o->conns[i].state);
	for (uint32_t t = 0; fresh_t && t < o->n_tenants; t++)
		if (fresh_t[t])
			dp.tenant_used[o->tenants[t].slot] = false;
	free(tmap);
	free(fresh_t);
	free(fresh_c);
	return -1;
}

/*
 * Build @c's overlay, carry the state of what survives over and publish it;
 * on failure nothing changes.  Takes @c (freed on failure, kept as dp.cfg on
 * success).  The caller holds ctl_lock and has set rep->load_ms.
 */
int
dp_config_publish_locked(struct cfg *c, struct dp_reload_report *rep)
{
	double t1 = now_ms(), t2;
	struct ovl *o = NULL, *old;
	uint8_t *kept_conn = NULL, *kept_tenant = NULL;
	char err[512];

	dp_state_drained_release();
	old = dp.ovl;
	rep->qps_before = old ? old->live_qps : 0;
	rep->mrs_before = old ? old->live_mrs : 0;
	if (old && ports_changed(dp.cfg, c, rep))
		goto reject;
	o = ovl_build(c, err, sizeof(err));
	if (!o) {
		report_error(rep, "%s: %s", c->path, err);
		goto reject;
	}
	kept_conn = calloc(old ? old->n_conns + 1 : 1, 1);
	kept_tenant = calloc(old ? old->n_tenants + 1 : 1, 1);
	if (!kept_conn || !kept_tenant) {
		report_error(rep, "%s: out of memory", c->path);
		goto reject;
	}
	if (assign_ids(o, old, kept_conn, kept_tenant, rep) < 0)
		goto reject;
	/* Estats state for new connections, before any lcore can see them. */
	if (dp_estats_sync(o) < 0)
		fprintf(stderr, "estats: no memory for some connections; they are not measured\n");
	t2 = now_ms();
	rep->build_ms = t2 - t1;
	rep->qps_after = o->n_qps;
	rep->mrs_after = o->n_mrs;
	/* Revoked and denied connections stop before @o is published (dp_acl.h). */
	dp_acl_reload(o, old);

	struct cfg *old_cfg = dp.cfg;

	dp.cfg = c;
	/* The MARK index of @o goes first: lcores use it only with the overlay it names. */
	dp_offload_index_publish(o);
	dp_ovl_publish(o);
	if (old) {
		/* Every lcore has finished its iteration on @old: nobody sees it. */
		rte_rcu_qsbr_synchronize(dp.qsv, RTE_QSBR_THRID_INVALID);
		/* ... and every shaper has taken the changes. */
		dp_rate_wait();
		/* Rules of removed and changed connections go before their ids are freed. */
		dp_offload_reload(old, o);
		for (uint32_t i = 0; i < old->n_conns; i++)
			if (ovl_live(&old->conns[i]) && !kept_conn[i]) {
				dp_estats_retire(old->conns[i].state, old->tenants[old->conns[i].tenant].slot);
				dp_state_release_when_drained(old->conns[i].state);
				rep->conns_removed++;
			}
		for (uint32_t t = 0; t < old->n_tenants; t++)
			if (!kept_tenant[t]) {
				dp.tenant_used[old->tenants[t].slot] = false;
				dp_estats_tenant_removed(old->tenants[t].slot);
				rep->tenants_removed++;
			}
		ovl_free(old);
		cfg_free(old_cfg);
	}
	rep->publish_ms = now_ms() - t2;
	rep->applied = true;
	free(kept_conn);
	free(kept_tenant);
	return 0;

reject:
	ovl_free(o);
	cfg_free(c);
	free(kept_conn);
	free(kept_tenant);
	return -1;
}

int
dp_config_apply(const char *path, struct dp_reload_report *rep)
{
	double t0 = now_ms();
	struct cfg *c;
	int rc;

	memset(rep, 0, sizeof(*rep));
	c = cfg_load_file_timed(path, &rep->errs, &rep->load);
	if (!c)
		return -1;
	rep->load_ms = now_ms() - t0;

	pthread_mutex_lock(&dp.ctl_lock);
	/* A file that differs only in endpoints, QPs and MRs is applied as their changes (dp_inc.c). */
	rc = dp_inc_reload_locked(c, rep) == 1 ? 0 : dp_config_publish_locked(c, rep);
	if (rc == 0 && (!dp.config_path || strcmp(dp.config_path, path))) {
		free(dp.config_path);
		dp.config_path = strdup(path);
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	if (rc == 0)
		dp_acl_offload_flush();
	/* The file's records replaced those of every other source (etcd): they apply theirs again. */
	for (unsigned i = 0; rc == 0 && i < n_listeners; i++)
		listeners[i]();
	return rc;
}

int
dp_reload_listen(void (*fn)(void))
{
	for (unsigned i = 0; i < n_listeners; i++)
		if (listeners[i] == fn)
			return 0;
	if (n_listeners == RTE_DIM(listeners))
		return -1;
	listeners[n_listeners++] = fn;
	return 0;
}

void
dp_reload_report_free(struct dp_reload_report *rep)
{
	cfg_errors_clear(&rep->errs);
}

int
dp_reload_report_json(const struct dp_reload_report *rep, char *buf, size_t len)
{
	size_t n;

	if (!rep->applied) {
		/* Whole errors only, as many as fit with room to close: the answer stays valid JSON. */
		static const size_t tail = sizeof("], \"errors_omitted\": 4294967295}");
		uint32_t i;

		n = (size_t)snprintf(buf, len, "{\"result\": \"rejected\", \"errors\": [");
		for (i = 0; i < rep->errs.n; i++) {
			const char *m = rep->errs.msg[i];
			size_t need = 4;

			for (const char *p = m; *p; p++)
				need += (*p == '"' || *p == '\\') ? 2 : (unsigned char)*p < 0x20 ? 6 : 1;
			if (n + need + tail > len)
				break;
			n += (size_t)snprintf(buf + n, len - n, "%s\"", i ? ", " : "");
			for (const char *p = m; *p; p++) {
				if (*p == '"' || *p == '\\')
					buf[n++] = '\\';
				if ((unsigned char)*p < 0x20)
					n += (size_t)snprintf(buf + n, len - n, "\\u%04x", (unsigned char)*p);
				else
					buf[n++] = *p;
			}
			buf[n++] = '"';
		}
		if (i < rep->errs.n)
			snprintf(buf + n, len - n, "], \"errors_omitted\": %u}", rep->errs.n - i);
		else
			snprintf(buf + n, len - n, "]}");
		return 0;
	}
	snprintf(buf, len,
		 "{\"result\": \"applied\", \"connections\": {\"added\": %u, \"removed\": %u, \"changed\": %u, "
		 "\"kept\": %u}, \"tenants\": {\"added\": %u, \"removed\": %u}, \"qps\": {\"before\": %u, "
		 "\"after\": %u}, \"mrs\": {\"before\": %u, \"after\": %u}, \"load_ms\": %.3f, \"build_ms\": %.3f, "
		 "\"publish_ms\": %.3f, \"read_ms\": %.3f, \"parse_ms\": %.3f, \"check_ms\": %.3f, "
		 "\"incremental\": %s}",
		 rep->conns_added, rep->conns_removed, rep->conns_changed, rep->conns_kept, rep->tenants_added,
		 rep->tenants_removed, rep->qps_before, rep->qps_after, rep->mrs_before, rep->mrs_after,
		 rep->load_ms, rep->build_ms, rep->publish_ms, rep->load.read_ms, rep->load.parse_ms,
		 rep->load.check_ms, rep->incremental ? "true" : "false");
	return 0;
}
