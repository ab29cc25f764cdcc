/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-roce-vswitch [EAL options] -- --config FILE [--exit-when-idle MS]
 *                   [--stats-json FILE] [--mbuf-size BYTES]
 *
 * Set-up, the lcore launch, signals and the clean exit.  The per-packet path
 * lives in path/ (path/dp_loop.c runs it), everything off it in control/.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_net_crc.h>
#include <rte_pdump.h>
#include <rte_vect.h>

#include "cfg_util.h"
#include "dp.h"
#include "dp_xdp.h"
#include "dp_acl.h"
#include "dp_cluster.h"
#include "dp_learner.h"
#include "dp_ctl_sock.h"
#include "dp_inc.h"
#include "dp_estats.h"
#include "dp_metrics.h"
#include "dp_offload.h"
#include "dp_ports.h"
#include "dp_rate.h"

static struct {
	const char *config;
	const char *stats_json;
	uint64_t exit_idle_ms;
	uint32_t mbuf_size;
	bool mbuf_size_given;
	struct dp_rate_opts rate;
	bool estats;             /* --estats */
	const char *metrics;     /* --metrics ADDR:PORT */
	const char *etcd;        /* --etcd URL[,URL...] */
	const char *etcd_prefix; /* --etcd-prefix */
	struct dp_cluster_tls etcd_tls; /* --etcd-cacert, --etcd-cert, --etcd-key */
	bool metrics_conns;      /* --metrics-connections */
	uint32_t learn_hold_ms, learn_rate;
} opts = { .mbuf_size = 9216, .rate = { .max_conns = 65536, .queue_mbufs = 2048 }, .learn_hold_ms = 500,
	   .learn_rate = 1000 };

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		dp_reload_request();
	else
		dp.quit = true;
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL options] -- --config FILE [--exit-when-idle MS] [--stats-json FILE]\n"
		"          [--mbuf-size BYTES] [--max-connections N] [--queue-mbufs N] [--stage-cycles N]\n"
		"          [--estats] [--metrics ADDR:PORT [--metrics-connections]] [--control PATH]\n"
		"          [--etcd URL[,URL...] [--etcd-prefix P] [--etcd-cacert F --etcd-cert F --etcd-key F] [--etcd-idle-s S]]\n"
		"          [--max-config-bytes N] [--control-idle-s S] [--control-max-bytes N]\n"
		"  --config FILE        the JSON configuration (schema version 1)\n"
		"  --exit-when-idle MS  exit once every port has been idle for MS ms after traffic\n"
		"  --stats-json FILE    also write the exit summary to FILE\n"
		"  --mbuf-size BYTES    largest frame accepted (default 9216)\n"
		"  --max-connections N  connections the shapers can hold, over all reloads (default 65536)\n"
		"  --queue-mbufs N      frames each lcore's shapers can hold, per stage (default 2048)\n"
		"  --stage-cycles N     profile one rx burst in N: TSC cycles per frame of each stage of\n"
		"                       the path in /roce/stages and the exit summary (default 0: off)\n"
		"  --estats             RDMA Estats: latency histograms and events per RC connection\n"
		"                       (/roce/estats, docs/estats.md; about 10 KB per connection)\n"
		"  --metrics ADDR:PORT  serve Prometheus /metrics (ADDR:PORT, [V6ADDR]:PORT or :PORT)\n"
		"  --metrics-connections  also export per-connection Estats series\n"
		"  --control PATH       a Unix socket (0600) for deltas, reload and status (docs/control.md)\n"
		"  --etcd URL[,URL...]  follow the cluster's tenants, endpoints, QPs and MRs in etcd\n"
		"  --etcd-prefix P      their key prefix (default /roce)\n"
		"  --etcd-cacert FILE, --etcd-cert FILE, --etcd-key FILE  TLS to etcd\n"
		"  --etcd-idle-s S      a watch etcd leaves silent this long is renewed, a member that\n"
		"                       does not answer the renewal given up (default 30)\n"
		"  --max-config-bytes N the largest configuration file read, at start and on reloads\n"
		"                       (default 1073741824)\n"
		"  --control-idle-s S   close a control client silent for S seconds (default 60)\n"
		"  --metrics-max-clients N, --metrics-idle-s S  connections the exporter holds at once\n"
		"                       (default 512) and how long an idle one is kept (default 5 s)\n"
		"  --control-max-bytes N  request bytes the control socket holds for all clients\n"
		"                       together (default 536870912)\n"
		"  --learn-hold-ms MS   how long frames of learning tenants wait for their connection\n"
		"                       (default 500)\n"
		"  --learn-rate N       connections a learning tenant may resolve a second (default 1000)\n",
		prog);
}

static int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "exit-when-idle", required_argument, NULL, 'i' },
		{ "stats-json", required_argument, NULL, 's' },
		{ "mbuf-size", required_argument, NULL, 'm' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "queue-mbufs", required_argument, NULL, 'Q' },
		{ "stage-cycles", required_argument, NULL, 'P' },
		{ "estats", no_argument, NULL, 'E' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "metrics-connections", no_argument, NULL, 'N' },
		{ "control", required_argument, NULL, 'K' },
		{ "etcd", required_argument, NULL, 'U' },
		{ "etcd-prefix", required_argument, NULL, 'R' },
		{ "etcd-cacert", required_argument, NULL, 'A' },
		{ "etcd-cert", required_argument, NULL, 'T' },
		{ "etcd-key", required_argument, NULL, 'Y' },
		{ "etcd-idle-s", required_argument, NULL, 'J' },
		{ "max-config-bytes", required_argument, NULL, 'B' },
		{ "control-idle-s", required_argument, NULL, 'I' },
		{ "metrics-max-clients", required_argument, NULL, 'L' },
		{ "metrics-idle-s", required_argument, NULL, 'W' },
		{ "control-max-bytes", required_argument, NULL, 'X' },
		{ "learn-hold-ms", required_argument, NULL, 'H' },
		{ "learn-rate", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			opts.config = optarg;
			break;
		case 'i':
			opts.exit_idle_ms = strtoull(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "--exit-when-idle: not a number of milliseconds: %s\n", optarg);
				return -1;
			}
			break;
		case 's':
			opts.stats_json = optarg;
			break;
		case 'm':
			opts.mbuf_size = (uint32_t)strtoul(optarg, &end, 10);
			opts.mbuf_size_given = true;
			if (*end || opts.mbuf_size < 128 || opts.mbuf_size > 65000) {
				fprintf(stderr, "--mbuf-size: 128 to 65000 bytes\n");
				return -1;
			}
			break;
		case 'C':
		case 'Q': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 64 || v > (opt == 'C' ? (1ul << 23) : (1ul << 20))) {
				fprintf(stderr, "--%s: %s\n", opt == 'C' ? "max-connections" : "queue-mbufs",
					opt == 'C' ? "64 to 8388608" : "64 to 1048576");
				return -1;
			}
			*(opt == 'C' ? &opts.rate.max_conns : &opts.rate.queue_mbufs) = (uint32_t)v;
			break;
		}
		case 'P': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v > 1000000) {
				fprintf(stderr, "--stage-cycles: 0 (off) to 1000000 bursts\n");
				return -1;
			}
			dp.prof_every = (uint32_t)v;
			break;
		}
		case 'E':
			opts.estats = true;
			break;
		case 'M':
			opts.metrics = optarg;
			break;
		case 'N':
			opts.metrics_conns = true;
			break;
		case 'K':
			dp_ctl_sock_configure(optarg);
			break;
		case 'U':
			opts.etcd = optarg;
			break;
		case 'R':
			opts.etcd_prefix = optarg;
			break;
		case 'A':
			opts.etcd_tls.cacert = optarg;
			break;
		case 'T':
			opts.etcd_tls.cert = optarg;
			break;
		case 'Y':
			opts.etcd_tls.key = optarg;
			break;
		case 'B': {
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !*optarg || v < 1024) {
				fprintf(stderr, "--max-config-bytes: a number of bytes, at least 1024\n");
				return -1;
			}
			cfg_file_max_set(v);
			break;
		}
		case 'L':
		case 'W': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > (opt == 'L' ? 16384ul : 3600ul)) {
				fprintf(stderr, opt == 'L' ? "--metrics-max-clients: 1 to 16384\n" :
					"--metrics-idle-s: 1 to 3600 seconds\n");
				return -1;
			}
			dp_metrics_limits(opt == 'L' ? (unsigned)v : 0, opt == 'W' ? (unsigned)v : 0);
			break;
		}
		case 'I':
		case 'X': {
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !*optarg || (opt == 'I' ? v < 1 || v > 86400 : v < (1ull << 20))) {
				fprintf(stderr, opt == 'I' ? "--control-idle-s: 1 to 86400 seconds\n" :
					"--control-max-bytes: a number of bytes, at least 1048576\n");
				return -1;
			}
			dp_ctl_sock_limits(opt == 'I' ? (uint32_t)v : 0, opt == 'X' ? v : 0);
			break;
		}
		case 'J': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > 3600) {
				fprintf(stderr, "--etcd-idle-s: 1 to 3600 seconds\n");
				return -1;
			}
			dp_cluster_idle((unsigned)v);
			break;
		}
		case 'H':
		case 'G': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > (opt == 'H' ? 60000ul : 1000000ul)) {
				fprintf(stderr, opt == 'H' ? "--learn-hold-ms: 1 to 60000 milliseconds\n" :
					"--learn-rate: 1 to 1000000 resolutions a second\n");
				return -1;
			}
			if (opt == 'H')
				opts.learn_hold_ms = (uint32_t)v;
			else
				opts.learn_rate = (uint32_t)v;
			break;
		}
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument: %s\n", argv[optind]);
		return -1;
	}
	if (!opts.etcd && (opts.etcd_prefix || opts.etcd_tls.cacert || opts.etcd_tls.cert || opts.etcd_tls.key)) {
		fprintf(stderr, "--etcd-prefix, --etcd-cacert, --etcd-cert and --etcd-key need --etcd\n");
		return -1;
	}
	if (opts.etcd && dp_cluster_configure(opts.etcd, opts.etcd_prefix, &opts.etcd_tls) < 0) {
		fprintf(stderr, "--etcd: no URL in \"%s\"\n", opts.etcd);
		return -1;
	}
	if (!opts.config) {
		fprintf(stderr, "--config FILE is required\n");
		usage(argv[0]);
		return -1;
	}
	return 0;
}

static uint32_t
net_crc32(const void *buf, uint32_t len)
{
	return rte_net_crc_calc(buf, len, RTE_NET_CRC32_ETH);
}

/*
 * The long-run CRC (full ICRCs: CNPs, NAKs, frames with IPv4 options):
 * rte_net_crc's AVX-512 (VPCLMULQDQ) path where the CPU has it, chosen at
 * run time.  rte_net_crc takes it only while the EAL allows 512-bit SIMD, a
 * limit that defaults to 256 for the sake of other libraries' code paths:
 * so it is raised for this choice alone and put back, unless the user set
 * it (--force-max-simd-bitwidth), which then decides.  Without AVX-512 the
 * request falls back to SSE4.2 and PCLMULQDQ by itself.
 */
static void
crc_select(void)
{
	bool wide = rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
		    rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0;
	uint16_t was = rte_vect_get_max_simd_bitwidth();
	bool raised = wide && was < RTE_VECT_SIMD_512 && rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) == 0;

	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
	if (raised)
		rte_vect_set_max_simd_bitwidth(was);
	wide = wide && (raised || was >= RTE_VECT_SIMD_512);
	roce_crc32_set_impl(net_crc32, wide ? "rte_net_crc (AVX-512)" : "rte_net_crc (SSE4.2)");
	fprintf(stderr, "dpdk-roce-vswitch: full ICRC by %s\n", roce_crc32_impl_name());
}

static bool
all_idle(uint64_t now)
{
	uint64_t limit = opts.exit_idle_ms * dp.tsc_hz / 1000;

	for (uint16_t l = 0; l < dp.n_lcores; l++)
		if (now - dp.lcores[l].last_rx_tsc < limit)
			return false;
	return true;
}

/* Called about every millisecond on the main lcore. */
static void
housekeeping(void)
{
	if (opts.exit_idle_ms && dp.traffic_seen && all_idle(rte_rdtsc()))
		dp.quit = true;
}

/*
 * EAL keeps its hugepage files after the primary exits, for reuse; a clean
 * exit gives the pages back to the system.  Files of this --file-prefix only,
 * in every hugetlbfs mount.
 */
static void
hugepage_files_remove(const char *prefix)
{
	FILE *m = fopen("/proc/mounts", "r");
	char dev[256], dir[1024], type[64], path[1400];

	if (!m)
		return;
	while (fscanf(m, "%255s %1023s %63s %*[^\n]", dev, dir, type) == 3) {
		DIR *d;
		struct dirent *e;
		size_t plen = strlen(prefix);

		if (strcmp(type, "hugetlbfs") || !(d = opendir(dir)))
			continue;
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, prefix, plen) && !strncmp(e->d_name + plen, "map_", 4)) {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		closedir(d);
	}
	fclose(m);
}

int
main(int argc, char **argv)
{
	struct dp_reload_report rep;
	char err[512];
	int ret;
	unsigned in_use_start, in_use_end, in_use_closed;

	argv = dp_xdp_eal_args(&argc, argv);
	if (argv == NULL)
		return 1;
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	argv[0] = (char *)"dpdk-roce-vswitch";
	if (parse_args(argc, argv) < 0)
		goto fail_eal;
	/* Without etcd nothing resolves a learning tenant's QPs on other hosts: its endpoints there are refused. */
	cfg_learning_remote = opts.etcd != NULL;

	pthread_mutex_init(&dp.ctl_lock, NULL);
	dp.conn_cap = opts.rate.max_conns;
	/* Before the first configuration: its connections get their Estats state. */
	if (opts.estats && dp_estats_init(NULL) < 0) {
		fprintf(stderr, "--estats: no TSC frequency\n");
		goto fail_eal;
	}
	if (dp_config_apply(opts.config, &rep) < 0) {
		cfg_errors_print(&rep.errs, stderr);
		dp_reload_report_free(&rep);
		goto fail_eal;
	}
	dp_reload_report_free(&rep);
	dp.tsc_hz = rte_get_tsc_hz();
	dp.housekeep = housekeeping;

	crc_select();

	if (dp_ports_map() < 0 || dp_lcores_assign() < 0)
		goto fail_eal;
	if (dp_rate_init(&opts.rate) < 0) {
		fprintf(stderr, "shapers for %u connections and %u frames per lcore: %s\n", opts.rate.max_conns,
			opts.rate.queue_mbufs, rte_strerror(rte_errno));
		goto fail_eal;
	}
	if (dp_acl_init() < 0) {
		fprintf(stderr, "revocation NAK rings: %s\n", rte_strerror(rte_errno));
		goto fail_eal;
	}

	/* Enough mbufs for every ring, every lcore cache and every tx buffer. */
	unsigned n_mbufs = dp_ports_rxq_total() * DP_RX_DESC + dp.n_ports * (DP_TX_DESC + DP_BURST) * dp.n_lcores +
			   dp.n_lcores * (512 + 2 * opts.rate.queue_mbufs + DP_HOLD_FRAMES) + 1024;

	n_mbufs = RTE_MAX(n_mbufs, 4096u);
	uint32_t xdp_max = dp_xdp_mbuf_size_max(0);

	if (xdp_max && opts.mbuf_size > xdp_max) {
		if (opts.mbuf_size_given) {
			fprintf(stderr, "--mbuf-size %u: a net_af_xdp port's mbufs must fit a page (AF_XDP frame): "
				"%u at most\n", opts.mbuf_size, xdp_max);
			goto fail_eal;
		}
		opts.mbuf_size = xdp_max;
	}
	dp.pool = rte_pktmbuf_pool_create("roce_mbufs", n_mbufs, 256, 0,
					  (uint16_t)(RTE_PKTMBUF_HEADROOM + opts.mbuf_size), rte_socket_id());
	if (!dp.pool) {
		fprintf(stderr, "mbuf pool of %u x %u bytes: %s\n", n_mbufs, opts.mbuf_size, rte_strerror(rte_errno));
		goto fail_eal;
	}
	if (dp_ports_start(opts.mbuf_size) < 0)
		goto fail_ports;
	rte_pdump_init();
	if (dp_telemetry_init() < 0 || dp_xdp_telemetry_init() < 0)
		fprintf(stderr, "telemetry commands could not be registered\n");
	if (dp_estats_telemetry_init() < 0)
		fprintf(stderr, "/roce/estats could not be registered\n");
	if (opts.metrics && dp_metrics_start(opts.metrics, opts.metrics_conns, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		goto fail_ports;
	}
	dp_learn_configure(opts.learn_hold_ms, opts.learn_rate);
	if (dp_learn_init() < 0) {
		fprintf(stderr, "the learner's ring: %s\n", rte_strerror(rte_errno));
		goto fail_ports;
	}
	/* What each port accepts of rte_flow; rules come later, from the control thread. */
	dp_offload_init();
	if (dp_offload_telemetry_init() < 0)
		fprintf(stderr, "/roce/offload could not be registered\n");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	/* The control thread serves SIGHUP, the control socket and the etcd follower: it must run. */
	if (dp_control_start() != 0) {
		fprintf(stderr, "the control thread did not start\n");
		goto fail_ports;
	}

	fprintf(stderr, "dpdk-roce-vswitch: %u ports, %u tenants, %u connections, %u lcores\n", dp.n_ports,
		dp.ovl->n_tenants, dp.ovl->live_conns, dp.n_lcores);
	in_use_start = rte_mempool_in_use_count(dp.pool);
	for (uint16_t l = 0; l < dp.n_lcores; l++)
		dp.lcores[l].last_rx_tsc = rte_rdtsc();
	dp.running = true;
	if (dp.lcores[0].lcore_id == rte_get_main_lcore()) {
		dp_lcore_main(&dp.lcores[0]);
	} else {
		for (uint16_t l = 0; l < dp.n_lcores; l++)
			rte_eal_remote_launch(dp_lcore_main, &dp.lcores[l], dp.lcores[l].lcore_id);
		while (!dp.quit) {
			usleep(1000);
			housekeeping();
		}
		rte_eal_mp_wait_lcore();
	}
	dp.running = false;
	dp_metrics_stop();
	dp_control_stop();
	/* What the shapers still hold is dropped (counted under "shutdown"). */
	dp_rate_fini();
	/* No rule outlives the switch. */
	dp_offload_fini();
	/* Every lcore has flushed its tx buffers: what is in use now is in the rings. */
	in_use_end = rte_mempool_in_use_count(dp.pool);
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		dp_xdp_port_stop(dp.ports[i].port_id);
		rte_eth_dev_stop(dp.ports[i].port_id);
		rte_eth_dev_close(dp.ports[i].port_id);
	}
	in_use_closed = rte_mempool_in_use_count(dp.pool);

	snprintf(err, sizeof(err),
		 "\"mbufs\": {\"pool_size\": %u, \"in_use_start\": %u, \"in_use_end\": %u, \"in_use_after_close\": %u}",
		 n_mbufs, in_use_start, in_use_end, in_use_closed);
	dp_summary_write(stdout, err);
	if (opts.stats_json) {
		FILE *f = fopen(opts.stats_json, "w");

		if (!f) {
			fprintf(stderr, "--stats-json %s: %s\n", opts.stats_json, strerror(errno));
		} else {
			dp_summary_write(f, err);
			fclose(f);
		}
	}
	rte_pdump_uninit();
	rte_mempool_free(dp.pool);
	for (uint16_t l = 0; l < dp.n_lcores; l++)
		rte_free(dp.lcores[l].tenant_stats);
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		free(dp.ports[i].name);
		free(dp.ports[i].device);
	}
	rte_free(dp.qsv);
	dp_acl_fini();
	dp_state_free_all();
	dp_estats_free();
	dp_inc_fini();
	ovl_free(dp.ovl);
	cfg_free(dp.cfg);
	free(dp.config_path);
	snprintf(err, sizeof(err), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	dp_xdp_eal_args_free();
	hugepage_files_remove(strrchr(err, '/') ? strrchr(err, '/') + 1 : err);
	return 0;

fail_ports:
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		dp_xdp_port_stop(dp.ports[i].port_id);
		rte_eth_dev_close(dp.ports[i].port_id);
	}
fail_eal:
	rte_eal_cleanup();
	dp_xdp_eal_args_free();
	return 1;
}
