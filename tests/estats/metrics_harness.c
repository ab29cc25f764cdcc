/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for the switch around the Estats exporter and telemetry: EAL
 * with no ports, a real configuration applied by the data plane's own
 * dp_config_apply(), Estats state for its connections, and a synthetic
 * timeline with known delays written into both halves (in time order, from
 * the main thread) while /metrics and /roce/estats are served.
 * It lets tests/estats/metrics.sh scrape under traffic before the per-packet
 * hooks are in the path, and with them still checks the exporter alone.
 *
 * Timeline, per connection i (configuration order) and round k, in virtual
 * nanoseconds: L sends a 4-packet WRITE whose LAST R acknowledges after
 * (i + 1) * 20 us (network round trip), and R sends a SEND_ONLY that L
 * acknowledges after (i + 1) * 5 us (host response).  Message completion is
 * therefore 3 us + (i + 1) * 20 us.  One request in 64 is sent again and
 * every connection gets one NAK of kind i % 7 per 128 rounds.
 *
 * Usage: estats-harness [EAL options] -- --config FILE [--metrics ADDR:PORT]
 *        [--metrics-connections] [--seconds N] [--render] [--demo]
 *        estats-harness --frame-check
 * --frame-check checks dp_estats_frame_args() on frames built by rocev2/
 * (no EAL) and exits.
 * --render prints one exposition to stdout after 100 rounds and exits.
 * --demo varies the delays for the README's picture: the network round trip
 * jitters by up to +50 %, is four times longer from round 20000 to 40000
 * (congestion) and the host response six times longer from 50000 to 60000
 * (a slow host); at ten rounds a millisecond, that is 2 to 4 s and 5 to 6 s.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "dp.h"
#include "dp_estats.h"
#include "dp_metrics.h"

#define US(x) ((uint64_t)(x) * 1000u)
#define WR(f) (ESTATS_F_REQ | ESTATS_F_WRITE | (f))
#define SEND_ONLY (ESTATS_F_REQ | ESTATS_F_ONLY | ESTATS_F_SEND)
#define ACK (ESTATS_F_RESP | ESTATS_F_ONLY | ESTATS_F_ACK)

static volatile int stop;
static bool demo;

/*
 * dp_estats_frame_args() on frames that rocev2/ builds and parses: the
 * flags, PSN and syndrome estats/ is given.  The number of mismatches.
 */
static int
frame_check(void)
{
	static const struct {
		uint8_t op, ackreq, ecn, ver;
		uint32_t psn;
		uint8_t syn;            /* AETH syndrome when the opcode has one */
		uint32_t want;          /* flags beyond the opcode's */
	} t[] = {
		{ ROCE_OP_RC_WRITE_LAST, 1, 0, 4, 0x123456, 0, ESTATS_F_ACKREQ },
		{ ROCE_OP_RC_SEND_ONLY, 0, 3, 6, 0xffffff, 0, ESTATS_F_CE },
		{ ROCE_OP_RC_ACK, 0, 2, 4, 77, 0x62, 0 },
		{ ROCE_OP_RC_ACK, 0, 3, 6, 78, 0x2c, ESTATS_F_CE },
		{ ROCE_OP_RC_READ_RESP_MIDDLE, 0, 0, 4, 5, 0, 0 },
		{ ROCE_OP_UD_SEND_ONLY, 1, 3, 4, 9, 0, 0 },
	};
	int bad = 0;

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct roce_frame_spec sp = { .ip_ver = t[i].ver, .ecn = t[i].ecn, .ttl = 64, .opcode = t[i].op,
					      .ackreq = t[i].ackreq, .pkey = 0xffff, .dqpn = 17, .psn = t[i].psn };
		uint8_t ext[64] = { 0 }, buf[256];
		const struct roce_opcode_info *oi = roce_opcode(t[i].op);
		unsigned aeth = roce_ext_offset(oi->exts, ROCE_EXT_AETH);
		struct roce_pkt pkt;
		uint32_t psn, f, want;
		unsigned syn;
		size_t len;

		if (aeth)
			ext[aeth - ROCE_BTH_LEN] = t[i].syn;
		len = roce_build_frame(buf, sizeof(buf), &sp, ext, ROCE_EXT_LEN(oi->exts), NULL,
				       (oi->flags & ROCE_OPF_PAYLOAD) ? 8 : 0);
		if (!len || roce_parse(buf, (uint32_t)len, ROCE_UDP_PORT, &pkt) != ROCE_OK) {
			fprintf(stderr, "frame %u: not built or not parsed\n", i);
			bad++;
			continue;
		}
		f = dp_estats_frame_args(buf, &pkt, &psn, &syn);
		want = roce_opcode_transport(t[i].op) == ROCE_TR_RC ? oi->flags | t[i].want : 0;
		if (f != want || psn != t[i].psn || syn != t[i].syn) {
			fprintf(stderr, "frame %u: flags %#x psn %#x syn %#x, want %#x %#x %#x\n", i, f, psn, syn,
				want, t[i].psn, t[i].syn);
			bad++;
		}
	}
	fprintf(stderr, "frame-check: %d mismatches\n", bad);
	return bad;
}

/* A deterministic jitter in [0, 1): the round and connection hashed. */
static double
jitter(uint64_t k, uint32_t i)
{
	uint64_t x = (k * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)i << 32);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (double)(x & 0xffffff) / (double)0x1000000;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * One round of the timeline for every connection.  The egress and ingress
 * calls of one round happen in time order on this thread; what the switch's
 * two lcores would share is exactly what estats/ lets them share.
 */
static void
round_run(const struct ovl *o, uint64_t k, uint64_t t0)
{
	static const unsigned naks[7] = { 0x60, 0x2a, 0x62, 0x63, 0x61, 0x64, 0x7f };

	for (uint32_t i = 0; i < o->n_conns; i++) {
		struct estats_conn *c = dp_estats_conn(o->conns[i].state);
		const struct estats_profile *p = &dp_estats.prof;
		uint64_t net = US(20) * (i + 1), host = US(5) * (i + 1), t = t0;
		uint32_t psn = (uint32_t)(k * 4u), rpsn = (uint32_t)k;

		if (!c || o->conns[i].hairpin)
			continue;
		if (demo) {
			double j = jitter(k, i);

			net += (uint64_t)((double)net * 0.5 * j * j);
			if (k >= 20000 && k < 40000)
				net *= 4;
			if (k >= 50000 && k < 60000)
				host *= 6;
		}
		for (unsigned j = 0; j < 4; j++)
			estats_egress(c, p, WR(j == 0 ? ESTATS_F_FIRST : j == 3 ? ESTATS_F_LAST : ESTATS_F_MIDDLE),
				      psn + j, 0, t + US(j));
		if (k % 64 == 63)
			estats_egress(c, p, WR(ESTATS_F_LAST), psn + 3, 0, t + US(3) + net / 2);
		estats_ingress(c, p, ACK, psn + 3, 0, t + US(3) + net);
		if (k % 128 == 0)
			estats_ingress(c, p, ACK, psn + 3, naks[i % 7], t + US(3) + net + 1);
		estats_ingress(c, p, SEND_ONLY | (k % 16 == 0 ? ESTATS_F_CE : 0), rpsn, 0, t + US(500));
		estats_egress(c, p, ACK, rpsn, 0, t + US(500) + host);
		dp.lcores[0].stats.fwd_egress += 5;
		dp.lcores[0].stats.fwd_ingress += 2;
		dp.lcores[0].tenant_stats[o->tenants[o->conns[i].tenant].slot].egress_pkts += 5;
		dp.lcores[0].tenant_stats[o->tenants[o->conns[i].tenant].slot].ingress_pkts += 2;
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "metrics-connections", no_argument, NULL, 'C' },
		{ "seconds", required_argument, NULL, 's' },
		{ "render", no_argument, NULL, 'r' },
		{ "demo", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *metrics = NULL;
	bool per_conn = false, render = false;
	unsigned seconds = 30;
	struct dp_reload_report rep;
	char err[256];
	int ret, opt;
	uint64_t k = 0;

	if (argc == 2 && !strcmp(argv[1], "--frame-check"))
		return frame_check() ? 1 : 0;
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': config = optarg; break;
		case 'm': metrics = optarg; break;
		case 'C': per_conn = true; break;
		case 's': seconds = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'r': render = true; break;
		case 'd': demo = true; break;
		default: return 2;
		}
	}
	if (!config)
		return 2;
	pthread_mutex_init(&dp.ctl_lock, NULL);
	dp.conn_cap = 65536;
	dp.n_lcores = 1;
	dp.lcores[0].tenant_stats = calloc(DP_MAX_TENANTS, sizeof(struct dp_tenant_stats));
	if (dp_estats_init(NULL) < 0 || !dp.lcores[0].tenant_stats)
		return 1;
	if (dp_config_apply(config, &rep) < 0) {
		cfg_errors_print(&rep.errs, stderr);
		return 1;
	}
	dp_reload_report_free(&rep);
	pthread_mutex_lock(&dp.ctl_lock);
	if (dp_estats_sync(dp.ovl) < 0)
		fprintf(stderr, "some connections have no Estats state\n");
	pthread_mutex_unlock(&dp.ctl_lock);
	for (uint32_t p = 0; p < dp.cfg->n_ports && p < DP_MAX_PORTS; p++)
		dp.ports[dp.n_ports++].name = dp.cfg->ports[p].name;
	if (dp_estats_telemetry_init() < 0)
		fprintf(stderr, "telemetry commands not registered\n");
	if (metrics && dp_metrics_start(metrics, per_conn, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "estats-harness: %u connections, %u tenants, %lu bytes of Estats state\n",
		dp.ovl->n_conns, dp.ovl->n_tenants, (unsigned long)dp_estats.bytes);
	for (unsigned ms = 0; !stop && ms < seconds * 1000u; ms++) {
		/* Ten rounds a millisecond of wall time, one millisecond of virtual time each. */
		for (int j = 0; j < 10; j++, k++)
			round_run(dp.ovl, k, k * US(1000));
		if (render && k >= 100)
			break;
		usleep(1000);
	}
	if (render) {
		char *text;
		size_t len;

		if (dp_metrics_render(per_conn, &text, &len) < 0)
			return 1;
		fwrite(text, 1, len, stdout);
		free(text);
	}
	dp_metrics_stop();
	fprintf(stderr, "estats-harness: %lu rounds\n", (unsigned long)k);
	dp_estats_free();
	rte_eal_cleanup();
	return 0;
}
