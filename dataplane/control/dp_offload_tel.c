/* SPDX-License-Identifier: BSD-3-Clause */
/* /roce/offload: the probe of every port and each connection's rules. */
#include "dp_offload_int.h"


/*
 * ------------------------------------------------------------------------
 * /roce/offload[,START]: the probe of every port, then TEL_PAGE connections
 * from START with the rule of each side; "total" and "next" page on.
 */
static const char *
state_name(const struct ofl_side *sd)
{
	return sd->state == DP_OFL_INSTALLED ? "installed" : sd->state == DP_OFL_REFUSED ? "refused" : "none";
}

/* A testpmd command as an array of strings, split after " / " (telemetry strings hold 127 bytes). */
static struct rte_tel_data *
tel_command(const char *line)
{
	struct rte_tel_data *a = rte_tel_data_alloc();
	char part[RTE_TEL_MAX_STRING_LEN];

	if (!a)
		return NULL;
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	while (*line) {
		size_t n = strlen(line), cut = n;

		if (n >= sizeof(part)) {
			cut = 0;
			for (size_t k = 0; k + 3 <= sizeof(part) - 1; k++)
				if (!memcmp(line + k, " / ", 3))
					cut = k + 3;
			if (cut == 0)
				cut = sizeof(part) - 1;
		}
		memcpy(part, line, cut);
		part[cut] = 0;
		rte_tel_data_add_array_string(a, part);
		line += cut;
	}
	return a;
}

static struct rte_tel_data *
tel_side(const struct ofl_side *sd)
{
	struct rte_tel_data *d = rte_tel_data_alloc();
	char buf[RTE_TEL_MAX_STRING_LEN];

	if (!d)
		return NULL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "rule", state_name(sd));
	if (sd->state != DP_OFL_NONE) {
		caps_text(sd->actions, buf, sizeof(buf));
		rte_tel_data_add_dict_string(d, "kind", kind_names[sd->kind]);
		rte_tel_data_add_dict_string(d, "actions", buf);
		rte_tel_data_add_dict_string(d, "port", dp.ports[sd->port].name);
	}
	if (sd->state == DP_OFL_REFUSED && sd->reason) {
		text_copy(buf, sizeof(buf), sd->reason);
		rte_tel_data_add_dict_string(d, "reason", buf);
	}
	rte_tel_data_add_dict_u64(d, "hw_packets", sd->hits_before + sd->hits);
	rte_tel_data_add_dict_u64(d, "hw_bytes", sd->bytes_before + sd->bytes);
	if (sd->age_valid)
		rte_tel_data_add_dict_u64(d, "seconds_since_hit", sd->age_sec);
	rte_tel_data_add_dict_u64(d, "sw_rate_bps", sd->rate_bps);
	rte_tel_data_add_dict_u64(d, "installs", sd->installs);
	rte_tel_data_add_dict_u64(d, "withdrawals", sd->withdrawals);
	rte_tel_data_add_dict_u64(d, "refusals", sd->refusals);
	if (sd->state == DP_OFL_INSTALLED && sd->testpmd) {
		struct rte_tel_data *t = tel_command(sd->testpmd);

		if (t && rte_tel_data_add_dict_container(d, "testpmd", t, 0))
			rte_tel_data_free(t);
	}
	return d;
}

/* Telemetry keys hold letters, digits and '_' only. */
static void
tel_key(const char *name, char *key, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		key[i] = ((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
			  (name[i] >= '0' && name[i] <= '9')) ? name[i] : '_';
	key[i] = 0;
}

static int
offload_locked(const char *params, struct rte_tel_data *d)
{
	const struct ovl *o = dp.ovl;
	struct rte_tel_data *ports, *conns;
	uint32_t start = params && *params ? (uint32_t)strtoul(params, NULL, 10) : 0, shown = 0;
	char key[RTE_TEL_MAX_STRING_LEN];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "enabled", dp.cfg && dp.cfg->offload.enabled);
	rte_tel_data_add_dict_u64(d, "steady_ms", dp.cfg ? dp.cfg->offload.steady_ms : 0);
	rte_tel_data_add_dict_u64(d, "min_rate_mbps", dp.cfg ? dp.cfg->offload.min_rate_mbps : 0);
#ifdef DP_HAVE_IB_BTH
	rte_tel_data_add_dict_string(d, "bth_match", "ib_bth item");
#else
	rte_tel_data_add_dict_string(d, "bth_match", "raw item at the UDP payload");
#endif
	rte_tel_data_add_dict_u64(d, "rules_installed", ofl.totals.installed - ofl.totals.withdrawn);
	rte_tel_data_add_dict_u64(d, "installs", ofl.totals.installed);
	rte_tel_data_add_dict_u64(d, "withdrawals", ofl.totals.withdrawn);
	rte_tel_data_add_dict_u64(d, "refusals", ofl.totals.refused);
	rte_tel_data_add_dict_u64(d, "create_failures", ofl.totals.create_failed);

	ports = rte_tel_data_alloc();
	if (!ports)
		return -ENOMEM;
	rte_tel_data_start_dict(ports);
	for (uint16_t pi = 0; pi < dp.n_ports; pi++) {
		const struct ofl_port *p = &ofl.ports[pi];
		struct rte_tel_data *pd = rte_tel_data_alloc();

		if (!pd)
			break;
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_string(pd, "name", dp.ports[pi].name);
		rte_tel_data_add_dict_string(pd, "device", dp.ports[pi].device);
		rte_tel_data_add_dict_u64(pd, "ethdev", dp.ports[pi].port_id);
		rte_tel_data_add_dict_u64(pd, "probed", p->probed);
		for (int c = 0; c < DP_OFL_CAP_MAX && p->probed; c++)
			rte_tel_data_add_dict_string(pd, cap_names[c], p->why[c]);
		rte_tel_data_add_dict_u64(pd, "rules_installed", p->installed);
		rte_tel_data_add_dict_u64(pd, "refusals", p->refused);
		tel_key(dp.ports[pi].name, key, sizeof(key));
		if (rte_tel_data_add_dict_container(ports, key, pd, 0))
			rte_tel_data_free(pd);
	}
	if (rte_tel_data_add_dict_container(d, "ports", ports, 0))
		rte_tel_data_free(ports);

	conns = rte_tel_data_alloc();
	if (!conns)
		return -ENOMEM;
	rte_tel_data_start_dict(conns);
	uint32_t i;

	for (i = start; o && i < o->n_conns && shown < TEL_PAGE; i++) {
		const struct ovl_conn *c = &o->conns[i];
		const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
		const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];
		struct rte_tel_data *cd;
		char ip[CFG_IP_STRLEN];

		/* Learned halves are never offloaded (dp_offload.c). */
		if (!ovl_live(c) || c->half)
			continue;
		shown++;
		if (!(cd = rte_tel_data_alloc()))
			break;
		rte_tel_data_start_dict(cd);
		rte_tel_data_add_dict_string(cd, "tenant", o->tenants[c->tenant].name);
		ip_text(le->vip.b, ip_len(le->vip.ver), ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "local_vip", ip);
		rte_tel_data_add_dict_u64(cd, "local_vqpn", l->vqpn);
		ip_text(re->vip.b, ip_len(re->vip.ver), ip, sizeof(ip));
		rte_tel_data_add_dict_string(cd, "remote_vip", ip);
		rte_tel_data_add_dict_u64(cd, "remote_vqpn", r->vqpn);
		rte_tel_data_add_dict_u64(cd, "mark", c->state + 1);
		if (c->state < ofl.n_conns) {
			const struct ofl_conn *oc = &ofl.conns[c->state];

			rte_tel_data_add_dict_u64(cd, "denied", oc->deny);
			for (int s = 0; s < SIDES; s++) {
				struct rte_tel_data *sdd;

				if (s == SIDE_FABRIC && c->hairpin)
					continue;
				sdd = tel_side(&oc->side[s]);
				if (sdd && rte_tel_data_add_dict_container(cd, side_names[s], sdd, 0))
					rte_tel_data_free(sdd);
			}
		}
		textf(key, sizeof(key), "%u", i);
		if (rte_tel_data_add_dict_container(conns, key, cd, 0))
			rte_tel_data_free(cd);
	}
	if (rte_tel_data_add_dict_container(d, "connections", conns, 0))
		rte_tel_data_free(conns);
	rte_tel_data_add_dict_u64(d, "total", o ? o->live_conns : 0);
	/* Keys are slot numbers: after a change, a page may skip some (given-up slots). */
	while (o && i < o->n_conns && !ovl_live(&o->conns[i]))
		i++;
	rte_tel_data_add_dict_u64(d, "next", o && i < o->n_conns ? i : 0);
	return 0;
}

static int
tel_offload(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	pthread_mutex_lock(&dp.ctl_lock);
	rc = offload_locked(params, d);
	pthread_mutex_unlock(&dp.ctl_lock);
	return rc;
}

int
dp_offload_telemetry_init(void)
{
	return rte_telemetry_register_cmd("/roce/offload", tel_offload,
					  "rte_flow offload: each port's probe, then each connection's rules, "
					  "8 a page. Parameter: optional start.") ? -1 : 0;
}
