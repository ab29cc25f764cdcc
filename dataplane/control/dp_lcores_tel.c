/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /roce/lcores and the exit summary's "lcores": which rx queues each
 * forwarding lcore polls and what it received, and each port's queue count
 * and RSS (docs/scale-out.md).  The queue map is fixed at start-up; the
 * counters are the lcores', read torn.
 */
#include <stdio.h>

#include <rte_telemetry.h>

#include "dp.h"
#include "dp_ports.h"

static uint64_t
lcore_rx_packets(const struct dp_lcore *lc)
{
	uint64_t n = 0;

	for (uint16_t i = 0; i < lc->n_rx; i++)
		n += __atomic_load_n(&lc->rx[i].pkts, __ATOMIC_RELAXED);
	return n;
}

/*
 * One lcore: "lcore", "rx" and "rx_packets".  Telemetry (DPDK 22.11) nests no
 * arrays of arrays in a dictionary and holds one type per array, so each
 * [port name, queue] pair of the exit summary is the string "NAME:QUEUE"
 * here (the queue after the last colon).
 */
static int
tel_lcore(struct rte_tel_data *d, const struct dp_lcore *lc)
{
	struct rte_tel_data *cd = rte_tel_data_alloc(), *rx = rte_tel_data_alloc();
	char key[16], pair[RTE_TEL_MAX_STRING_LEN];

	if (!cd || !rx) {
		rte_tel_data_free(cd);
		rte_tel_data_free(rx);
		return -1;
	}
	rte_tel_data_start_dict(cd);
	rte_tel_data_add_dict_u64(cd, "lcore", lc->lcore_id);
	rte_tel_data_start_array(rx, RTE_TEL_STRING_VAL);
	for (uint16_t i = 0; i < lc->n_rx; i++) {
		snprintf(pair, sizeof(pair), "%s:%u", dp.ports[lc->rx[i].port].name, lc->rx[i].queue);
		rte_tel_data_add_array_string(rx, pair);
	}
	rte_tel_data_add_dict_container(cd, "rx", rx, 0);
	rte_tel_data_add_dict_u64(cd, "rx_packets", lcore_rx_packets(lc));
	snprintf(key, sizeof(key), "%u", lc->idx);
	return rte_tel_data_add_dict_container(d, key, cd, 0);
}

static int
tel_lcores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *pd = rte_tel_data_alloc();

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (!pd)
		return -1;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "n_lcores", dp.n_lcores);
	for (uint16_t l = 0; l < dp.n_lcores; l++)
		tel_lcore(d, &dp.lcores[l]);
	/* Per port, keyed as /roce/stats keys it (the real name in "name"): its rx queues and RSS. */
	rte_tel_data_start_dict(pd);
	for (uint16_t p = 0; p < dp.n_ports; p++) {
		struct rte_tel_data *one = rte_tel_data_alloc();
		char key[64];

		if (!one)
			break;
		rte_tel_data_start_dict(one);
		rte_tel_data_add_dict_string(one, "name", dp.ports[p].name);
		rte_tel_data_add_dict_u64(one, "rx_queues", dp.ports[p].n_rxq);
		rte_tel_data_add_dict_u64(one, "rss_hf", dp_port_rss_hf(p));
		if (rte_tel_data_add_dict_container(pd, dp_tel_key(dp.ports[p].name, key, sizeof(key)), one, 0) != 0)
			rte_tel_data_free(one);
	}
	return rte_tel_data_add_dict_container(d, "ports", pd, 0);
}

int
dp_lcores_telemetry_init(void)
{
	return rte_telemetry_register_cmd("/roce/lcores", tel_lcores,
					  "Forwarding lcores: the rx queues each polls and its rx_packets; ports' "
					  "rx_queues and RSS. No parameters.");
}

void
dp_lcores_summary(FILE *f)
{
	fprintf(f, "\"lcores\": [");
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const struct dp_lcore *lc = &dp.lcores[l];

		fprintf(f, "%s{\"lcore\": %u, \"rx\": [", l ? ", " : "", lc->lcore_id);
		for (uint16_t i = 0; i < lc->n_rx; i++)
			fprintf(f, "%s[\"%s\", %u]", i ? ", " : "", dp.ports[lc->rx[i].port].name, lc->rx[i].queue);
		fprintf(f, "], \"rx_packets\": %lu}", lcore_rx_packets(lc));
	}
	fprintf(f, "]");
}
