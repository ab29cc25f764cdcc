/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports and forwarding lcores at start-up: the configuration's devices
 * matched to the ports EAL probed, each port's rx queues (ports[].rx_queues)
 * given to the lcores, and the ports configured (RSS where the device
 * offers it) and started.  docs/scale-out.md says why it is done this way.
 */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dp.h"
#include "dp_ports.h"
#include "dp_xdp.h"

/* RSS over the IP addresses and the UDP ports: RoCE NICs give each QP its own UDP source port. */
#define DP_RSS_HF (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)

static uint64_t port_rss_hf[DP_MAX_PORTS]; /* what RSS hashes on, per port; 0: none */

int
dp_ports_map(void)
{
	const struct cfg *c = dp.cfg;
	uint16_t pid;
	int bad = 0;

	if (c->n_ports > DP_MAX_PORTS) {
		fprintf(stderr, "%s: ports: at most %d ports\n", c->path, DP_MAX_PORTS);
		return -1;
	}
	memset(dp.port_index, 0xff, sizeof(dp.port_index));
	for (uint32_t i = 0; i < c->n_ports; i++) {
		struct dp_port *p = &dp.ports[i];

		p->name = strdup(c->ports[i].name);
		p->device = strdup(c->ports[i].device);
		p->uplink = c->ports[i].role == CFG_ROLE_UPLINK;
		if (rte_eth_dev_get_port_by_name(p->device, &pid) != 0) {
			fprintf(stderr, "%s: ports[%u].device: no such EAL device \"%s\" (give it with --vdev or -a)\n",
				c->path, i, p->device);
			bad = 1;
			continue;
		}
		p->port_id = pid;
		dp.port_index[pid] = (uint16_t)i;
	}
	RTE_ETH_FOREACH_DEV(pid) {
		char name[RTE_ETH_NAME_MAX_LEN];

		if (dp.port_index[pid] != 0xffff)
			continue;
		rte_eth_dev_get_name_by_port(pid, name);
		fprintf(stderr, "%s: EAL device \"%s\" (port %u) is not named in the configuration\n",
			c->path, name, pid);
		bad = 1;
	}
	dp.n_ports = (uint16_t)c->n_ports;
	return bad ? -1 : 0;
}

/*
 * How many rx queues port @i polls: its rx_queues, or one per forwarding
 * lcore; never more than the device has (a vdev has what its devargs gave
 * it: rx_pcap files, qpairs, queue_count, queues).  0 on error, printed.
 */
static uint16_t
port_rxq_count(uint16_t i)
{
	const struct cfg_port *cp = &dp.cfg->ports[i];
	struct rte_eth_dev_info info;
	uint16_t n;

	if (rte_eth_dev_info_get(dp.ports[i].port_id, &info) != 0 || info.max_rx_queues == 0) {
		fprintf(stderr, "%s: ports[%u].device: \"%s\" gives no device information\n", dp.cfg->path, i,
			cp->device);
		return 0;
	}
	if (cp->rx_queues > info.max_rx_queues) {
		fprintf(stderr, "%s: ports[%u].rx_queues: %u, but device \"%s\" offers %u rx queue%s\n",
			dp.cfg->path, i, cp->rx_queues, cp->device, info.max_rx_queues,
			info.max_rx_queues == 1 ? "" : "s");
		return 0;
	}
	n = cp->rx_queues ? cp->rx_queues : dp.n_lcores;
	return RTE_MIN(n, info.max_rx_queues);
}

int
dp_lcores_assign(void)
{
	unsigned id, next = 0;

	RTE_LCORE_FOREACH_WORKER(id) {
		if (dp.n_lcores == DP_MAX_LCORES)
			break;
		dp.lcores[dp.n_lcores].lcore_id = id;
		dp.lcores[dp.n_lcores].idx = dp.n_lcores;
		dp.n_lcores++;
	}
	if (dp.n_lcores == 0) {
		/* One lcore: the main lcore forwards and keeps house. */
		dp.lcores[0].lcore_id = rte_get_main_lcore();
		dp.lcores[0].idx = 0;
		dp.n_lcores = 1;
	}
	/*
	 * Each rx queue belongs to one lcore, round robin over the queues of
	 * all ports in configuration order: a port's queues go to different
	 * lcores (as long as it has no more queues than there are lcores) and
	 * every lcore gets the same number of queues, give or take one.
	 */
	for (uint16_t p = 0; p < dp.n_ports; p++) {
		uint16_t n = port_rxq_count(p);

		if (n == 0)
			return -1;
		dp.ports[p].n_rxq = n;
		for (uint16_t q = 0; q < n; q++, next++) {
			struct dp_lcore *lc = &dp.lcores[next % dp.n_lcores];

			if (lc->n_rx == DP_MAX_LCORE_RX) {
				fprintf(stderr, "%s: ports: more than %u rx queues for one lcore\n", dp.cfg->path,
					DP_MAX_LCORE_RX);
				return -1;
			}
			if (q == 0)
				dp.ports[p].lcore_idx = lc->idx;
			lc->rx[lc->n_rx].port = p;
			lc->rx[lc->n_rx++].queue = q;
		}
	}
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		dp.lcores[l].tenant_stats = rte_zmalloc("tenant_stats",
			sizeof(struct dp_tenant_stats) * DP_MAX_TENANTS, RTE_CACHE_LINE_SIZE);
		if (!dp.lcores[l].tenant_stats)
			return -1;
	}
	/* Readers of the overlay, for the grace period of a reload: the lcores and the exporter. */
	size_t sz = rte_rcu_qsbr_get_memsize(dp.n_lcores + 1);

	dp.qsv = rte_zmalloc("rcu", sz, RTE_CACHE_LINE_SIZE);
	if (!dp.qsv || rte_rcu_qsbr_init(dp.qsv, dp.n_lcores + 1) != 0)
		return -1;
	dp.qs_exporter = rte_rcu_qsbr_thread_register(dp.qsv, dp.n_lcores) == 0;
	return 0;
}

unsigned
dp_ports_rxq_total(void)
{
	unsigned n = 0;

	for (uint16_t p = 0; p < dp.n_ports; p++)
		n += dp.ports[p].n_rxq;
	return n;
}

uint16_t
dp_port_rxq_of(uint16_t p, uint16_t lcore_idx)
{
	const struct dp_lcore *lc = lcore_idx < dp.n_lcores ? &dp.lcores[lcore_idx] : NULL;

	for (uint16_t i = 0; lc && i < lc->n_rx; i++)
		if (lc->rx[i].port == p)
			return lc->rx[i].queue;
	return 0;
}

uint64_t
dp_port_rss_hf(uint16_t p)
{
	return p < DP_MAX_PORTS ? port_rss_hf[p] : 0;
}

int
dp_ports_start(uint32_t mbuf_size)
{
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		uint16_t pid = dp.ports[i].port_id, nrx = dp.ports[i].n_rxq;
		struct rte_eth_conf conf = { 0 };
		struct rte_eth_dev_info info;
		uint16_t rxd = DP_RX_DESC, txd = DP_TX_DESC;
		int rc;

		rc = rte_eth_dev_info_get(pid, &info);
		/*
		 * Frames as large as the mbufs take, with two VLAN tags, within
		 * what the device receives.  Its L2 overhead is reckoned as
		 * rte_eth_dev_configure() does (virtio adds its header: 30).
		 */
		uint32_t overhead = info.max_mtu != UINT16_MAX && info.max_rx_pktlen > info.max_mtu ?
				    info.max_rx_pktlen - info.max_mtu : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

		if (dp_xdp_port_prepare(pid, dp.ports[i].name) < 0)
			return -1;
		conf.rxmode.mtu = RTE_MIN(RTE_MIN((uint32_t)info.max_mtu, info.max_rx_pktlen - overhead),
					  mbuf_size - RTE_MAX(overhead, (uint32_t)(RTE_ETHER_HDR_LEN +
										  2 * RTE_VLAN_HLEN)));
		if (rc == 0 && info.max_tx_queues < dp.n_lcores) {
			fprintf(stderr, "port %s: %u tx queues needed, device offers %u\n", dp.ports[i].name,
				dp.n_lcores, info.max_tx_queues);
			return -1;
		}
		/*
		 * Several queues: RSS on what the device hashes of IP addresses and
		 * UDP ports.  A device without RSS (most vdevs) fills its queues by
		 * its own means (one pcap file, socket or virtqueue each).
		 */
		port_rss_hf[i] = nrx > 1 ? DP_RSS_HF & info.flow_type_rss_offloads : 0;
		if (port_rss_hf[i]) {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = port_rss_hf[i];
		}
		rc = rte_eth_dev_configure(pid, nrx, dp.n_lcores, &conf);
		if (rc == 0)
			rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &rxd, &txd);
		for (uint16_t q = 0; rc == 0 && q < nrx; q++)
			rc = rte_eth_rx_queue_setup(pid, q, rxd, rte_eth_dev_socket_id(pid), NULL, dp.pool);
		for (uint16_t q = 0; rc == 0 && q < dp.n_lcores; q++)
			rc = rte_eth_tx_queue_setup(pid, q, txd, rte_eth_dev_socket_id(pid), NULL);
		if (rc == 0)
			rc = rte_eth_dev_start(pid);
		if (rc != 0) {
			fprintf(stderr, "port %s (%s): start failed: %s\n", dp.ports[i].name, dp.ports[i].device,
				rte_strerror(-rc));
			return -1;
		}
		/* Tenants address the virtual gateway and remote hosts any MAC. */
		rte_eth_promiscuous_enable(pid);
		if (dp_xdp_port_start(pid, dp.ovl) < 0)
			return -1;
	}
	return 0;
}
