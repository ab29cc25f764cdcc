/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The offload life cycle through rte_flow's real dispatch, in one process.
 *
 * The switch's own data plane (dp_lib: forwarding, reload, offload manager,
 * telemetry) runs here on lcore 1 exactly as in dpdk-roce-vswitch; this file
 * plays main.c's set-up and the control thread, and drives the manager with
 * a clock of its own (dp_offload_poll(now)).
 *
 *  1. On net_rtest ports (tests/offload/rtest_pmd.c, a TEST-ONLY PMD with
 *     rte_flow in software): the probe, steady connections getting rules,
 *     MARKed frames skipping the lookups with byte-identical output, COUNT
 *     and AGE read back, the hairpin forwarded by "hardware", a stale MARK
 *     ignored, DROP for a denied connection, a reload withdrawing and
 *     re-installing rules, /roce/offload, and the flush at shutdown.
 *  2. On net_rtest ports that refuse MARK, or fail to create: the refusal is
 *     recorded with its reason and the traffic stays correct in software.
 *  3. On real vdevs that refuse everything (net_pcap, net_null): the same.
 *
 * Needs no hugepages (--no-huge) and two lcores.  Ends with "N passed, M failed".
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_net_crc.h>

#include "dp.h"
#include "dp_offload.h"
#ifdef HAVE_RTEST_PMD
#include "rtest_pmd.h"
#endif

/* ------------------------------------------------------------------------
 * Results. */
static int n_pass, n_fail, case_fails;
static const char *case_name;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			case_fails++; \
			fprintf(stderr, "    check failed (%s:%d): %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

static void
case_begin(const char *name)
{
	case_name = name;
	case_fails = 0;
}

static void
case_end(void)
{
	if (case_fails) {
		n_fail++;
		printf("FAIL: %s\n", case_name);
	} else {
		n_pass++;
		printf("ok:   %s\n", case_name);
	}
	fflush(stdout);
}

static void __rte_unused
case_skip_fail(const char *name, const char *why)
{
	n_fail++;
	printf("FAIL: %s (%s)\n", name, why);
}

/* ------------------------------------------------------------------------
 * Frames. */
#define MAX_FRAME 2048
#define ROUND 50              /* frames per kind per round */

struct frame {
	uint8_t b[MAX_FRAME];
	uint16_t len;
};

static const uint8_t MAC_UPLINK[6] = { 2, 0, 0, 0, 0, 1 }, MAC_NEIGHBOR[6] = { 2, 0, 0, 0, 0, 2 };
static const uint8_t MAC_VM1[6] = { 2, 0, 0, 0, 1, 1 }, MAC_EP10[6] = { 2, 0, 0, 0, 0xaa, 0x10 };

static uint16_t
frame_make(struct frame *f, const uint8_t *dmac, const uint8_t *smac, const uint8_t *sip, const uint8_t *dip,
	   uint8_t opcode, uint32_t dqpn, uint32_t psn, uint32_t payload)
{
	struct roce_frame_spec s;
	uint8_t aeth[4] = { 0, 0, 0, 1 };
	uint8_t pl[1024];

	memset(&s, 0, sizeof(s));
	memcpy(s.dst_mac, dmac, 6);
	memcpy(s.src_mac, smac, 6);
	s.ip_ver = 4;
	memcpy(s.src_ip, sip, 4);
	memcpy(s.dst_ip, dip, 4);
	s.ttl = 64;
	s.ip_id = (uint16_t)psn;
	s.udp_sport = (uint16_t)(49152 + psn);
	s.opcode = opcode;
	s.pkey = 0xffff;
	s.dqpn = dqpn;
	s.psn = psn;
	for (uint32_t i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)(i * 7 + psn);
	if (opcode == ROCE_OP_RC_ACK || opcode == ROCE_OP_RC_READ_RESP_ONLY)
		f->len = (uint16_t)roce_build_frame(f->b, sizeof(f->b), &s, aeth, 4, pl, payload);
	else
		f->len = (uint16_t)roce_build_frame(f->b, sizeof(f->b), &s, NULL, 0, pl, payload);
	return f->len;
}

static const uint8_t IP_10[4] = { 192, 168, 1, 10 }, IP_11[4] = { 192, 168, 1, 11 }, IP_20[4] = { 192, 168, 1, 20 };
static const uint8_t HOST_1[4] = { 10, 0, 0, 1 }, HOST_2[4] = { 10, 0, 0, 2 };

/* Kinds of frames used below. */
enum kind { K_A_EGRESS, K_A_INGRESS, K_HAIRPIN, K_B_EGRESS, K_KINDS };

static void
frames_of(enum kind k, struct frame *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		switch (k) {
		case K_A_EGRESS:
			frame_make(&f[i], MAC_VM1, MAC_EP10, IP_10, IP_20, ROCE_OP_RC_SEND_ONLY, 33, i, 1000);
			break;
		case K_A_INGRESS:
			/* R's READ responses to L: as much data as L's sends (an ACK is too small to be steady). */
			frame_make(&f[i], MAC_UPLINK, MAC_NEIGHBOR, HOST_2, HOST_1, ROCE_OP_RC_READ_RESP_ONLY, 4097, i,
				   1000);
			break;
		case K_HAIRPIN:
			frame_make(&f[i], MAC_VM1, MAC_EP10, IP_10, IP_11, ROCE_OP_RC_SEND_ONLY, 40, i, 1000);
			break;
		default:
			frame_make(&f[i], MAC_VM1, MAC_EP10, IP_10, IP_20, ROCE_OP_RC_SEND_ONLY, 34, i, 100);
			break;
		}
}

/* A parsed output frame's DestQP, destination IP and ICRC check. */
static bool
frame_check(const uint8_t *b, uint32_t len, uint32_t dqpn, const uint8_t *dip)
{
	struct roce_pkt pkt;

	if (roce_parse(b, len, ROCE_UDP_PORT, &pkt) != ROCE_OK)
		return false;
	return roce_bth_dqpn(roce_pkt_bth(&pkt, (uint8_t *)(uintptr_t)b)) == dqpn && !memcmp(b + pkt.l3_off + 16, dip, 4) &&
	       roce_icrc_verify(b, &pkt);
}

/* ------------------------------------------------------------------------
 * The switch, set up as main.c does it. */
static struct rte_mempool *pool;
static char workdir[PATH_MAX];
static unsigned fwd_lcore;
static bool launched;

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int
cfg_write(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
cfg_write(const char *name, const char *fmt, ...)
{
	char path[PATH_MAX + 64], text[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", workdir, name);
	return write_file(path, text);
}

static int
sw_start(const char *cfg_name)
{
	struct dp_reload_report rep;
	char path[PATH_MAX + 64];
	uint16_t pid;

	snprintf(path, sizeof(path), "%s/%s", workdir, cfg_name);
	if (dp_config_apply(path, &rep) < 0) {
		cfg_errors_print(&rep.errs, stderr);
		dp_reload_report_free(&rep);
		return -1;
	}
	dp_reload_report_free(&rep);
	dp.tsc_hz = rte_get_tsc_hz();
	dp.pool = pool;
	memset(dp.port_index, 0xff, sizeof(dp.port_index));
	dp.n_ports = (uint16_t)dp.cfg->n_ports;
	dp.n_lcores = 1;
	dp.lcores[0].lcore_id = fwd_lcore;
	dp.lcores[0].idx = 0;
	dp.lcores[0].n_rx = 0;
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		struct dp_port *p = &dp.ports[i];

		p->name = strdup(dp.cfg->ports[i].name);
		p->device = strdup(dp.cfg->ports[i].device);
		p->uplink = dp.cfg->ports[i].role == CFG_ROLE_UPLINK;
		if (rte_eth_dev_get_port_by_name(p->device, &pid) != 0) {
			fprintf(stderr, "no EAL device %s\n", p->device);
			return -1;
		}
		p->port_id = pid;
		p->lcore_idx = 0;
		dp.port_index[pid] = i;
		p->n_rxq = 1;
		dp.lcores[0].rx[dp.lcores[0].n_rx].port = i;
		dp.lcores[0].rx[dp.lcores[0].n_rx++].queue = 0;
	}
	dp.lcores[0].tenant_stats = rte_zmalloc("ts", sizeof(struct dp_tenant_stats) * DP_MAX_TENANTS, 64);
	dp.qsv = rte_zmalloc("rcu", rte_rcu_qsbr_get_memsize(1), 64);
	if (!dp.lcores[0].tenant_stats || !dp.qsv || rte_rcu_qsbr_init(dp.qsv, 1) != 0)
		return -1;
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		struct rte_eth_conf conf = { .rxmode = { .mtu = 1500 } };

		pid = dp.ports[i].port_id;
		if (rte_eth_dev_configure(pid, 1, 1, &conf) != 0 ||
		    rte_eth_rx_queue_setup(pid, 0, 512, rte_eth_dev_socket_id(pid), NULL, pool) != 0 ||
		    rte_eth_tx_queue_setup(pid, 0, 512, rte_eth_dev_socket_id(pid), NULL) != 0 ||
		    rte_eth_dev_start(pid) != 0) {
			fprintf(stderr, "port %s: start failed\n", dp.ports[i].device);
			return -1;
		}
		rte_eth_promiscuous_enable(pid);
	}
	dp_offload_init();
	return 0;
}

static void
sw_launch(void)
{
	dp.quit = false;
	dp.lcores[0].last_rx_tsc = rte_rdtsc();
	launched = rte_eal_remote_launch(dp_lcore_main, &dp.lcores[0], fwd_lcore) == 0;
}

static void
sw_stop(void)
{
	dp.quit = true;
	if (launched)
		rte_eal_wait_lcore(fwd_lcore);
	launched = false;
	dp_offload_fini();
	for (uint16_t i = 0; i < dp.n_ports; i++)
		rte_eth_dev_stop(dp.ports[i].port_id);
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		free(dp.ports[i].name);
		free(dp.ports[i].device);
	}
	rte_free(dp.lcores[0].tenant_stats);
	rte_free(dp.qsv);
	dp_state_free_all();
	ovl_free(dp.ovl);
	cfg_free(dp.cfg);
	free(dp.config_path);
	dp.ovl = NULL;
	dp.cfg = NULL;
	dp.config_path = NULL;
	dp.qsv = NULL;
	memset(dp.tenant_used, 0, sizeof(dp.tenant_used));
	memset(dp.ports, 0, sizeof(dp.ports));
	memset(dp.lcores, 0, sizeof(dp.lcores));
	dp.n_ports = 0;
	dp.n_lcores = 0;
	dp.quit = false;
}

static uint64_t
mark_hits(void)
{
	return dp.lcores[0].stats.mark_hits;
}

static const struct ovl_conn *
conn_by_lqpn(uint32_t l_vqpn)
{
	const struct ovl *o = dp.ovl;

	for (uint32_t i = 0; i < o->n_conns; i++)
		if (o->qps[o->conns[i].l].vqpn == l_vqpn)
			return &o->conns[i];
	return NULL;
}

static struct dp_offload_status
status_of(uint32_t l_vqpn, int dir)
{
	struct dp_offload_status st;
	const struct ovl_conn *c = conn_by_lqpn(l_vqpn);

	memset(&st, 0, sizeof(st));
	if (c)
		dp_offload_status_get(c->state, dir, &st);
	return st;
}

/* Fake time: milliseconds after the scenario's start. */
static uint64_t t0;

static void
poll_at(uint64_t ms)
{
	dp_offload_poll(t0 + ms * rte_get_tsc_hz() / 1000);
}

/* ------------------------------------------------------------------------
 * Telemetry, through the socket as dpdk-telemetry.py does it. */
static int
tel_query(const char *cmd, char *out, size_t len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ssize_t n;

	if (s < 0)
		return -1;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/dpdk_telemetry.v2", rte_eal_get_runtime_dir());
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 || recv(s, out, len - 1, 0) < 0 ||
	    send(s, cmd, strlen(cmd), 0) < 0 || (n = recv(s, out, len - 1, 0)) < 0) {
		close(s);
		return -1;
	}
	out[n] = 0;
	close(s);
	return 0;
}

/* ------------------------------------------------------------------------
 * pcap files for the real vdevs. */
static int
pcap_write(const char *path, const struct frame *f, unsigned n)
{
	FILE *fp = fopen(path, "wb");
	const uint32_t gh[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

	if (!fp)
		return -1;
	fwrite(gh, sizeof(gh), 1, fp);
	for (unsigned i = 0; i < n; i++) {
		uint32_t rh[4] = { 1700000000u, i, f[i].len, f[i].len };

		fwrite(rh, sizeof(rh), 1, fp);
		fwrite(f[i].b, f[i].len, 1, fp);
	}
	return fclose(fp);
}

static unsigned
pcap_read(const char *path, struct frame *f, unsigned max)
{
	FILE *fp = fopen(path, "rb");
	uint32_t gh[6], rh[4];
	unsigned n = 0;

	if (!fp)
		return 0;
	if (fread(gh, sizeof(gh), 1, fp) != 1) {
		fclose(fp);
		return 0;
	}
	while (n < max && fread(rh, sizeof(rh), 1, fp) == 1 && rh[2] <= MAX_FRAME &&
	       fread(f[n].b, rh[2], 1, fp) == 1)
		f[n++].len = (uint16_t)rh[2];
	fclose(fp);
	return n;
}

/* ------------------------------------------------------------------------
 * Scenario 1 and 2: the test PMD. */
#ifdef HAVE_RTEST_PMD

static uint16_t p_fabric, p_vm1, p_vm2;   /* ethdev ids of net_rtest0..2 */

static const char *const CFG_RTEST =
	"{\"version\": 1,\n"
	" \"ports\": [\n"
	"  {\"name\": \"fabric0\", \"device\": \"net_rtest0\", \"role\": \"uplink\", \"ip\": \"10.0.0.1\",\n"
	"   \"mac\": \"02:00:00:00:00:01\", \"gateway_mac\": \"02:00:00:00:00:fe\"},\n"
	"  {\"name\": \"vm1\", \"device\": \"net_rtest1\", \"role\": \"tenant\", \"tenant\": \"blue\", \"mac\": \"02:00:00:00:01:01\"},\n"
	"  {\"name\": \"vm2\", \"device\": \"net_rtest2\", \"role\": \"tenant\", \"tenant\": \"blue\", \"mac\": \"02:00:00:00:01:02\"}],\n"
	" \"tenants\": [{\"name\": \"blue\", \"vni\": 100}],\n"
	" \"endpoints\": [\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"host\": \"10.0.0.1\", \"port\": \"vm1\", \"mac\": \"02:00:00:00:aa:10\"},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"host\": \"10.0.0.1\", \"port\": \"vm2\", \"mac\": \"02:00:00:00:aa:11\"},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"host\": \"10.0.0.2\"}],\n"
	" \"qps\": [\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 17, \"pqpn\": 4097, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.20\", \"vqpn\": 33}},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"vqpn\": 33, \"pqpn\": %u, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 17}}%s,\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 19, \"pqpn\": 4099, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.11\", \"vqpn\": 40}},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"vqpn\": 40, \"pqpn\": 4100, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 19}}],\n"
	" \"neighbors\": [{\"ip\": \"10.0.0.2\", \"mac\": \"02:00:00:00:00:02\"}],\n"
	" \"offload\": {\"enabled\": %s, \"steady_ms\": 200, \"min_rate_mbps\": 1}}\n";

static const char *const QPS_B =
	",\n  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 18, \"pqpn\": 4098, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.20\", \"vqpn\": 34}},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"vqpn\": 34, \"pqpn\": 8194, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 18}}";

static struct rte_mbuf *
mbuf_of(const struct frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (m) {
		memcpy(rte_pktmbuf_append(m, f->len), f->b, f->len);
	}
	return m;
}

/* Send @n frames into @port's wire, optionally pre-marked with @mark. */
static void
inject(uint16_t port, const struct frame *f, unsigned n, uint32_t mark)
{
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = mbuf_of(&f[i]);

		if (!m)
			continue;
		if (mark) {
			m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
			m->hash.fdir.hi = mark;
		}
		while (rtest_inject(port, &m, 1) == 0)
			rte_pause();
	}
}

/* Collect exactly @want frames from @port's wire (or what comes within 2 s, then 50 ms more). */
static unsigned
collect(uint16_t port, struct frame *out, unsigned want)
{
	uint64_t end = rte_rdtsc() + 2 * rte_get_tsc_hz(), settle = rte_get_tsc_hz() / 20;
	unsigned n = 0;

	while (rte_rdtsc() < end) {
		struct rte_mbuf *m[32];
		unsigned k = rtest_collect(port, m, RTE_DIM(m));

		for (unsigned i = 0; i < k; i++) {
			if (n < want && out) {
				out[n].len = (uint16_t)RTE_MIN(m[i]->data_len, MAX_FRAME);
				memcpy(out[n].b, rte_pktmbuf_mtod(m[i], void *), out[n].len);
			}
			n++;
			rte_pktmbuf_free(m[i]);
		}
		if (n >= want && end - rte_rdtsc() > settle)
			end = rte_rdtsc() + settle; /* a little longer: nothing more may come */
		if (k == 0)
			rte_delay_us_sleep(200);
	}
	return n;
}

static bool
same(const struct frame *a, const struct frame *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].len != b[i].len || memcmp(a[i].b, b[i].b, a[i].len))
			return false;
	return true;
}

static struct frame in[K_KINDS][ROUND], ref[K_KINDS][ROUND], out[ROUND];

/* One round of traffic: what went in and what came out, checked against @ref when @check. */
static void
round_trip(enum kind k, unsigned n, bool save_ref, bool check, uint32_t premark)
{
	uint16_t from = k == K_A_INGRESS ? p_fabric : p_vm1;
	uint16_t to = k == K_A_INGRESS ? p_vm1 : k == K_HAIRPIN ? p_vm2 : p_fabric;
	unsigned got;

	inject(from, in[k], n, premark);
	got = collect(to, save_ref ? ref[k] : out, n);
	CHECK(got == n, "kind %d: %u frames out of %u", k, got, n);
	if (check)
		CHECK(same(out, ref[k], n), "kind %d: output differs from the software path", k);
}

static void
scenario_rtest(void)
{
	const struct ovl_conn *a, *c1;
	struct dp_offload_status st, st2;
	struct rtest_stats rs, rs2;
	uint64_t hits0;
	char *tel = malloc(65536);

	rte_eth_dev_get_port_by_name("net_rtest0", &p_fabric);
	rte_eth_dev_get_port_by_name("net_rtest1", &p_vm1);
	rte_eth_dev_get_port_by_name("net_rtest2", &p_vm2);
	for (int k = 0; k < K_KINDS; k++)
		frames_of((enum kind)k, in[k], ROUND);
	cfg_write("rtest.json", CFG_RTEST, 8193, QPS_B, "true");

	case_begin("probe: net_rtest accepts mark, queue, count, age, drop and forward; meter is refused");
	if (sw_start("rtest.json") < 0) {
		CHECK(0, "the switch did not start");
		case_end();
		free(tel);
		return;
	}
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		uint32_t caps = dp_offload_port_caps(i);

		CHECK(caps == ((1u << DP_OFL_CAP_METER) - 1), "port %u caps %#x", i, caps);
	}
	case_end();

	t0 = rte_rdtsc();
	poll_at(0);
	sw_launch();

	case_begin("software path first; no rule before steady_ms (200 ms)");
	round_trip(K_A_EGRESS, ROUND, true, false, 0);
	round_trip(K_A_INGRESS, ROUND, true, false, 0);
	round_trip(K_HAIRPIN, ROUND, true, false, 0);
	for (unsigned i = 0; i < ROUND; i++) {
		CHECK(frame_check(ref[K_A_EGRESS][i].b, ref[K_A_EGRESS][i].len, 8193, HOST_2), "egress frame %u", i);
		CHECK(frame_check(ref[K_A_INGRESS][i].b, ref[K_A_INGRESS][i].len, 17, IP_10), "ingress frame %u", i);
		CHECK(frame_check(ref[K_HAIRPIN][i].b, ref[K_HAIRPIN][i].len, 40, IP_11), "hairpin frame %u", i);
	}
	poll_at(100);
	CHECK(status_of(17, 0).state == DP_OFL_NONE, "A egress has a rule before it is steady");
	CHECK(mark_hits() == 0, "mark_hits %lu", mark_hits());
	case_end();

	case_begin("steady connections get the richest rule; a slow one (under min_rate_mbps) does not");
	round_trip(K_A_EGRESS, ROUND, false, true, 0);
	round_trip(K_A_INGRESS, ROUND, false, true, 0);
	round_trip(K_HAIRPIN, ROUND, false, true, 0);
	frames_of(K_B_EGRESS, in[K_B_EGRESS], 1);
	inject(p_vm1, in[K_B_EGRESS], 1, 0);
	CHECK(collect(p_fabric, NULL, 1) == 1, "B's frame");
	poll_at(300);
	st = status_of(17, 0);
	CHECK(st.state == DP_OFL_INSTALLED && st.kind == DP_OFL_PARTIAL, "A egress: state %d kind %d (%s)",
	      st.state, st.kind, st.reason);
	CHECK(st.actions == ((1u << DP_OFL_CAP_MARK) | (1u << DP_OFL_CAP_QUEUE) | (1u << DP_OFL_CAP_COUNT) |
			     (1u << DP_OFL_CAP_AGE)), "A egress actions %#x", st.actions);
	a = conn_by_lqpn(17);
	{
		char want[512];

		snprintf(want, sizeof(want),
			 "flow create %u ingress pattern eth / ipv4 src is 192.168.1.10 dst is 192.168.1.20 / "
			 "udp dst is 4791 / raw relative is 1 search is 0 offset is 5 limit is 0 pattern_hex spec "
			 "000021 pattern_hex mask ffffff / end actions mark id %u / queue index 0 / count / "
			 "age timeout 60 / end", p_vm1, a->state + 1);
		CHECK(!strcmp(st.testpmd, want), "testpmd line\n      got:  %s\n      want: %s", st.testpmd, want);
	}
	st = status_of(17, 1);
	CHECK(st.state == DP_OFL_INSTALLED && st.kind == DP_OFL_PARTIAL && st.port == 0,
	      "A ingress: state %d kind %d port %u", st.state, st.kind, st.port);
	CHECK(strstr(st.testpmd, "ipv4 src is 10.0.0.2 dst is 10.0.0.1") && strstr(st.testpmd, "spec 001001"),
	      "A ingress testpmd: %s", st.testpmd);
	st = status_of(19, 0);
	CHECK(st.state == DP_OFL_INSTALLED && st.kind == DP_OFL_FORWARD, "hairpin: state %d kind %d (%s)", st.state,
	      st.kind, st.reason);
	CHECK(strstr(st.testpmd, "transfer pattern port_representor") &&
	      strstr(st.testpmd, "represented_port ethdev_port_id") && strstr(st.testpmd, "mac_dst"),
	      "hairpin testpmd: %s", st.testpmd);
	CHECK(status_of(18, 0).state == DP_OFL_NONE, "B (slow) got a rule");
	CHECK(status_of(40, 0).state == DP_OFL_NONE, "the idle reverse hairpin got a rule");
	case_end();

	case_begin("MARKed frames skip the lookups (mark_hits) and come out byte-identical");
	hits0 = mark_hits();
	rtest_stats_get(p_vm1, &rs);
	round_trip(K_A_EGRESS, ROUND, false, true, 0);
	round_trip(K_A_INGRESS, ROUND, false, true, 0);
	rtest_stats_get(p_vm1, &rs2);
	CHECK(mark_hits() - hits0 == 2 * ROUND, "mark_hits +%lu, want %u", mark_hits() - hits0, 2 * ROUND);
	CHECK(rs2.marked - rs.marked == ROUND, "the PMD marked %lu", rs2.marked - rs.marked);
	case_end();

	case_begin("COUNT and AGE are read back into the connection's telemetry");
	poll_at(400);
	st = status_of(17, 0);
	CHECK(st.hits == ROUND, "A egress hw packets %lu, want %u", st.hits, ROUND);
	CHECK(st.bytes == (uint64_t)ROUND * in[K_A_EGRESS][0].len, "A egress hw bytes %lu", st.bytes);
	CHECK(st.age_valid && st.age_sec < 60, "age valid %d, %u s", st.age_valid, st.age_sec);
	st = status_of(17, 1);
	CHECK(st.hits == ROUND, "A ingress hw packets %lu", st.hits);
	case_end();

	case_begin("the hairpin is forwarded by the port alone, byte-identical to software");
	{
		struct dp_stats s0, s1;

		dp_stats_sum(&s0);
		round_trip(K_HAIRPIN, ROUND, false, true, 0);
		dp_stats_sum(&s1);
		CHECK(s1.fwd_hairpin == s0.fwd_hairpin, "software forwarded %lu hairpin frames",
		      s1.fwd_hairpin - s0.fwd_hairpin);
		poll_at(500);
		CHECK(status_of(19, 0).hits == ROUND, "hairpin hw packets %lu", status_of(19, 0).hits);
	}
	case_end();

	case_begin("a MARK naming another connection is ignored (identity check)");
	c1 = conn_by_lqpn(19);
	hits0 = mark_hits();
	/* B's frames match no rule: they keep the mark injected with them, the hairpin's. */
	frames_of(K_B_EGRESS, in[K_B_EGRESS], ROUND);
	round_trip(K_B_EGRESS, 10, true, false, c1->state + 1);
	CHECK(mark_hits() == hits0, "a foreign mark was taken");
	for (unsigned i = 0; i < 10; i++)
		CHECK(frame_check(ref[K_B_EGRESS][i].b, ref[K_B_EGRESS][i].len, 8194, HOST_2), "B frame %u", i);
	/* And a mark beyond the index. */
	round_trip(K_B_EGRESS, 10, false, true, 0x7fffffff);
	CHECK(mark_hits() == hits0, "an unknown mark was taken");
	case_end();

	case_begin("dp_offload_drop_conn: DROP rules for a denied connection, MARK again once allowed");
	a = conn_by_lqpn(17);
	rtest_stats_get(p_vm1, &rs);
	CHECK(dp_offload_drop_conn(a->state, true) == 0, "drop_conn");
	CHECK(status_of(17, 0).state == DP_OFL_NONE, "the MARK rule stays while denied");
	poll_at(510);
	st = status_of(17, 0);
	st2 = status_of(17, 1);
	CHECK(st.state == DP_OFL_INSTALLED && st.kind == DP_OFL_DROP, "egress: state %d kind %d", st.state, st.kind);
	CHECK(st2.state == DP_OFL_INSTALLED && st2.kind == DP_OFL_DROP, "ingress: state %d kind %d", st2.state,
	      st2.kind);
	CHECK(strstr(st.testpmd, "actions count / drop / end") != NULL, "drop testpmd: %s", st.testpmd);
	inject(p_vm1, in[K_A_EGRESS], 20, 0);
	CHECK(collect(p_fabric, NULL, 1) == 0, "a denied frame came out");
	rtest_stats_get(p_vm1, &rs2);
	CHECK(rs2.dropped - rs.dropped == 20, "the PMD dropped %lu", rs2.dropped - rs.dropped);
	poll_at(620);
	/* ROUND through the MARK rule, then 20 through the DROP rule. */
	CHECK(status_of(17, 0).hits == ROUND + 20, "drop rule counted: %lu", status_of(17, 0).hits);
	CHECK(dp_offload_drop_conn(a->state, false) == 0, "allow");
	CHECK(status_of(17, 0).state == DP_OFL_NONE, "the DROP rule stayed");
	round_trip(K_A_EGRESS, ROUND, false, true, 0);
	round_trip(K_A_INGRESS, ROUND, false, true, 0);
	poll_at(730);
	CHECK(status_of(17, 0).state == DP_OFL_INSTALLED && status_of(17, 0).kind == DP_OFL_PARTIAL,
	      "MARK again: state %d", status_of(17, 0).state);
	case_end();

	case_begin("a reload withdraws the rules of changed and removed connections, then re-installs them");
	{
		struct dp_reload_report rep;
		char path[PATH_MAX + 64];
		uint32_t b_state = conn_by_lqpn(18)->state;

		rtest_stats_get(p_vm1, &rs);
		/* R's pqpn changes (A's rewrite changes), B goes, the hairpins stay as they are. */
		cfg_write("rtest2.json", CFG_RTEST, 8200, "", "true");
		snprintf(path, sizeof(path), "%s/rtest2.json", workdir);
		CHECK(dp_config_apply(path, &rep) == 0, "reload rejected");
		CHECK(rep.conns_changed == 1 && rep.conns_removed == 1, "changed %u removed %u", rep.conns_changed,
		      rep.conns_removed);
		dp_reload_report_free(&rep);
		rtest_stats_get(p_vm1, &rs2);
		st = status_of(17, 0);
		CHECK(st.state == DP_OFL_NONE && st.withdrawals >= 2, "A egress after the reload: state %d, %u withdrawals",
		      st.state, st.withdrawals);
		CHECK(status_of(17, 1).state == DP_OFL_NONE, "A ingress kept its rule");
		CHECK(rs2.destroyed > rs.destroyed, "no rule destroyed on the tenant port");
		CHECK(status_of(19, 0).state == DP_OFL_INSTALLED, "the unchanged hairpin lost its rule");
		st.state = DP_OFL_INSTALLED;
		dp_offload_status_get(b_state, 0, &st);
		CHECK(st.state == DP_OFL_NONE, "B's state still has a rule");

		/* Software again, with the new rename. */
		hits0 = mark_hits();
		round_trip(K_A_EGRESS, ROUND, true, false, 0);
		for (unsigned i = 0; i < ROUND; i++)
			CHECK(frame_check(ref[K_A_EGRESS][i].b, ref[K_A_EGRESS][i].len, 8200, HOST_2), "frame %u", i);
		CHECK(mark_hits() == hits0, "MARK hits with no rule");
		poll_at(800);
		CHECK(status_of(17, 0).state == DP_OFL_NONE, "re-installed before steady_ms");
		round_trip(K_A_EGRESS, ROUND, false, true, 0);
		poll_at(1000);
		st = status_of(17, 0);
		CHECK(st.state == DP_OFL_INSTALLED && st.installs >= 3, "A egress re-installed: state %d installs %u",
		      st.state, st.installs);
		round_trip(K_A_EGRESS, ROUND, false, true, 0);
		CHECK(mark_hits() - hits0 == ROUND, "mark_hits after re-install +%lu", mark_hits() - hits0);
	}
	case_end();

	case_begin("/roce/offload shows the probe, each side's rule, counters and the testpmd command");
	if (tel_query("/roce/offload", tel, 65536) < 0) {
		CHECK(0, "telemetry socket: %s", strerror(errno));
	} else {
		CHECK(strstr(tel, "\"mark\":\"accepted\"") != NULL, "%s", tel);
		CHECK(strstr(tel, "\"meter\":\"refused") != NULL, "meter");
		CHECK(strstr(tel, "\"rule\":\"installed\",\"kind\":\"partial\",\"actions\":\"mark+queue+count+age\"") !=
		      NULL, "partial rule");
		CHECK(strstr(tel, "\"kind\":\"forward\"") != NULL, "forward rule");
		CHECK(strstr(tel, "\"testpmd\":[\"flow create") != NULL, "testpmd lines");
		CHECK(strstr(tel, "\"hw_packets\":50") != NULL, "hw counters");
	}
	if (tel_query("/roce/stats", tel, 65536) == 0)
		CHECK(strstr(tel, "\"mark_hits\":") != NULL, "/roce/stats has no mark_hits");
	case_end();

	case_begin("a VLAN policy on the hairpin's port withdraws its forward rule; software forwards it");
	{
		static const char port2[] = "\"mac\": \"02:00:00:00:01:02\"}", vlan[] = ", \"vlan\": {\"mode\": \"untagged\"}";
		struct dp_reload_report rep;
		char path[PATH_MAX + 64], text[8192], *at;
		struct dp_stats s0, s1;

		st = status_of(19, 0);
		CHECK(st.state == DP_OFL_INSTALLED && st.kind == DP_OFL_FORWARD, "before: state %d kind %d", st.state,
		      st.kind);
		/* The configuration of the last reload, with vm2 untagged. */
		snprintf(text, sizeof(text), CFG_RTEST, 8200, "", "true");
		at = strstr(text, port2) + sizeof(port2) - 2;
		memmove(at + sizeof(vlan) - 1, at, strlen(at) + 1);
		memcpy(at, vlan, sizeof(vlan) - 1);
		cfg_write("rtest-vlan.json", "%s", text);
		snprintf(path, sizeof(path), "%s/rtest-vlan.json", workdir);
		CHECK(dp_config_apply(path, &rep) == 0, "reload rejected");
		dp_reload_report_free(&rep);
		CHECK(status_of(19, 0).state == DP_OFL_NONE, "the forward rule stayed: state %d", status_of(19, 0).state);
		dp_stats_sum(&s0);
		round_trip(K_HAIRPIN, ROUND, false, true, 0);
		dp_stats_sum(&s1);
		CHECK(s1.fwd_hairpin - s0.fwd_hairpin == ROUND, "software forwarded %lu hairpin frames, want %u",
		      s1.fwd_hairpin - s0.fwd_hairpin, ROUND);
		poll_at(1200);
		round_trip(K_HAIRPIN, ROUND, false, true, 0);
		poll_at(1500);
		st = status_of(19, 0);
		CHECK(st.state == DP_OFL_INSTALLED && st.kind == DP_OFL_PARTIAL, "after: state %d kind %d", st.state,
		      st.kind);
	}
	case_end();

	case_begin("shutdown flushes every rule");
	sw_stop();
	rtest_stats_get(p_vm1, &rs);
	rtest_stats_get(p_fabric, &rs2);
	CHECK(rs.rules == 0 && rs2.rules == 0, "rules left: %u, %u", rs.rules, rs2.rules);
	CHECK(rs.flushed > 0, "flushed %lu", rs.flushed);
	case_end();

	/* Scenario 2: ports without MARK, then ports that fail to create. */
	for (int variant = 0; variant < 2; variant++) {
		uint32_t caps = variant == 0 ? RTEST_CAP_QUEUE | RTEST_CAP_COUNT | RTEST_CAP_DROP :
					       RTEST_CAP_ALL | RTEST_CAP_FAIL_CREATE;
		const char *want = variant == 0 ? "rte_flow_validate: net_rtest: action MARK not supported" :
						  "rte_flow_create: net_rtest: the device has no room for the rule";

		case_begin(variant == 0 ? "a port without MARK: refused with the port's reason; software forwards" :
					  "a port that validates but fails to create: refused with the create error");
		rtest_caps_set(p_fabric, caps);
		rtest_caps_set(p_vm1, caps);
		rtest_caps_set(p_vm2, caps);
		if (sw_start("rtest.json") < 0) {
			CHECK(0, "the switch did not start");
			case_end();
			continue;
		}
		CHECK(!(dp_offload_port_caps(1) & (1u << DP_OFL_CAP_MARK)) == (variant == 0), "probe caps %#x",
		      dp_offload_port_caps(1));
		t0 = rte_rdtsc();
		poll_at(0);
		sw_launch();
		round_trip(K_A_EGRESS, ROUND, true, false, 0);
		round_trip(K_A_INGRESS, ROUND, true, false, 0);
		poll_at(300);
		round_trip(K_A_EGRESS, ROUND, false, true, 0);
		round_trip(K_A_INGRESS, ROUND, false, true, 0);
		for (unsigned i = 0; i < ROUND; i++)
			CHECK(frame_check(ref[K_A_EGRESS][i].b, ref[K_A_EGRESS][i].len, 8193, HOST_2), "frame %u", i);
		st = status_of(17, 0);
		CHECK(st.state == DP_OFL_REFUSED && st.refusals == 1, "state %d refusals %u", st.state, st.refusals);
		CHECK(strstr(st.reason, want) != NULL, "reason \"%s\", want \"%s\"", st.reason, want);
		CHECK(status_of(17, 1).state == DP_OFL_REFUSED, "ingress state %d", status_of(17, 1).state);
		CHECK(mark_hits() == 0, "mark_hits %lu", mark_hits());
		/* Refused once: not tried again every sample. */
		rtest_stats_get(p_vm1, &rs);
		round_trip(K_A_EGRESS, ROUND, false, true, 0);
		poll_at(600);
		rtest_stats_get(p_vm1, &rs2);
		CHECK(rs2.refused == rs.refused && rs2.created == rs.created, "the refused rule was tried again");
		if (tel_query("/roce/offload", tel, 65536) == 0)
			CHECK(strstr(tel, "\"rule\":\"refused\"") && strstr(tel, "\"reason\":\"partial (mark"),
			      "/roce/offload: %s", tel);
		sw_stop();
		case_end();
	}
	rtest_caps_set(p_fabric, RTEST_CAP_ALL);
	rtest_caps_set(p_vm1, RTEST_CAP_ALL);
	rtest_caps_set(p_vm2, RTEST_CAP_ALL);
	free(tel);
}
#endif /* HAVE_RTEST_PMD */

/* ------------------------------------------------------------------------
 * Scenario 3: net_pcap and net_null, which refuse everything. */
static const char *const CFG_REAL =
	"{\"version\": 1,\n"
	" \"ports\": [\n"
	"  {\"name\": \"fabric0\", \"device\": \"net_pcap1\", \"role\": \"uplink\", \"ip\": \"10.0.0.1\",\n"
	"   \"mac\": \"02:00:00:00:00:01\", \"gateway_mac\": \"02:00:00:00:00:fe\"},\n"
	"  {\"name\": \"vm1\", \"device\": \"net_pcap0\", \"role\": \"tenant\", \"tenant\": \"blue\", \"mac\": \"02:00:00:00:01:01\"},\n"
	"  {\"name\": \"vm2\", \"device\": \"net_null0\", \"role\": \"tenant\", \"tenant\": \"blue\", \"mac\": \"02:00:00:00:01:02\"}],\n"
	" \"tenants\": [{\"name\": \"blue\", \"vni\": 100}],\n"
	" \"endpoints\": [\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"host\": \"10.0.0.1\", \"port\": \"vm1\", \"mac\": \"02:00:00:00:aa:10\"},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"host\": \"10.0.0.1\", \"port\": \"vm2\", \"mac\": \"02:00:00:00:aa:11\"},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"host\": \"10.0.0.2\"}],\n"
	" \"qps\": [\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 17, \"pqpn\": 4097, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.20\", \"vqpn\": 33}},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.20\", \"vqpn\": 33, \"pqpn\": 8193, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 17}},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.10\", \"vqpn\": 19, \"pqpn\": 4099, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.11\", \"vqpn\": 40}},\n"
	"  {\"tenant\": \"blue\", \"vip\": \"192.168.1.11\", \"vqpn\": 40, \"pqpn\": 4100, \"type\": \"rc\", \"peer\": {\"vip\": \"192.168.1.10\", \"vqpn\": 19}}],\n"
	" \"neighbors\": [{\"ip\": \"10.0.0.2\", \"mac\": \"02:00:00:00:00:02\"}],\n"
	" \"offload\": {\"enabled\": true, \"steady_ms\": 200, \"min_rate_mbps\": 0}}\n";

#define REAL_N 200

static void
scenario_real(void)
{
	static struct frame eg[REAL_N], ig[REAL_N], got[2 * REAL_N];
	struct dp_offload_status st;
	char path[PATH_MAX + 64], *tel = malloc(65536);
	uint64_t end;
	unsigned n;

	case_begin("net_pcap and net_null refuse every rule: the switch runs, /roce/offload says why, "
		   "traffic is correct");
	cfg_write("real.json", "%s", CFG_REAL);
	if (sw_start("real.json") < 0) {
		CHECK(0, "the switch did not start");
		case_end();
		free(tel);
		return;
	}
	for (uint16_t i = 0; i < dp.n_ports; i++)
		CHECK(dp_offload_port_caps(i) == 0, "port %s caps %#x", dp.ports[i].device, dp_offload_port_caps(i));
	frames_of(K_A_EGRESS, eg, REAL_N);
	frames_of(K_A_INGRESS, ig, REAL_N);
	t0 = rte_rdtsc();
	poll_at(0);
	sw_launch();
	end = rte_rdtsc() + 5 * rte_get_tsc_hz();
	while (rte_rdtsc() < end && (dp.lcores[0].stats.rx_pkts[0] < REAL_N || dp.lcores[0].stats.rx_pkts[1] < REAL_N))
		rte_delay_us_sleep(1000);
	CHECK(dp.lcores[0].stats.rx_pkts[1] == REAL_N && dp.lcores[0].stats.rx_pkts[0] == REAL_N,
	      "received %lu + %lu", dp.lcores[0].stats.rx_pkts[1], dp.lcores[0].stats.rx_pkts[0]);
	poll_at(300);
	st = status_of(17, 0);
	CHECK(st.state == DP_OFL_REFUSED && strstr(st.reason, "partial (mark") != NULL, "egress: %d %s", st.state,
	      st.reason);
	fprintf(stderr, "    net_pcap refused: %s\n", st.reason);
	st = status_of(17, 1);
	CHECK(st.state == DP_OFL_REFUSED, "ingress: %d %s", st.state, st.reason);
	CHECK(mark_hits() == 0, "mark_hits %lu", mark_hits());
	if (tel_query("/roce/offload", tel, 65536) < 0) {
		CHECK(0, "telemetry: %s", strerror(errno));
	} else {
		CHECK(strstr(tel, "\"device\":\"net_pcap0\"") && strstr(tel, "\"device\":\"net_null0\""), "%s", tel);
		CHECK(strstr(tel, "\"mark\":\"refused: ") != NULL, "probe refusals");
		CHECK(strstr(tel, "\"rule\":\"refused\"") != NULL, "connection refusals");
		CHECK(strstr(tel, "\"accepted\"") == NULL, "something accepted");
	}
	sw_stop();
	snprintf(path, sizeof(path), "%s/fabric-out.pcap", workdir);
	n = pcap_read(path, got, 2 * REAL_N);
	CHECK(n == REAL_N, "%u frames to the fabric", n);
	for (unsigned i = 0; i < n; i++)
		CHECK(frame_check(got[i].b, got[i].len, 8193, HOST_2), "fabric frame %u", i);
	snprintf(path, sizeof(path), "%s/vm1-out.pcap", workdir);
	n = pcap_read(path, got, 2 * REAL_N);
	CHECK(n == REAL_N, "%u frames to vm1", n);
	for (unsigned i = 0; i < n; i++)
		CHECK(frame_check(got[i].b, got[i].len, 17, IP_10), "vm1 frame %u", i);
	case_end();
	free(tel);
}

static uint32_t
net_crc32(const void *buf, uint32_t len)
{
	return rte_net_crc_calc(buf, len, RTE_NET_CRC32_ETH);
}

int
main(int argc, char **argv)
{
	char prefix[64], v_pcap0[PATH_MAX * 2 + 64], v_pcap1[PATH_MAX * 2 + 64], path[PATH_MAX + 64];
	static struct frame eg[REAL_N], ig[REAL_N];
	char *eal[32];
	int n = 0;

	RTE_SET_USED(argc);
	snprintf(workdir, sizeof(workdir), "/tmp/roce-offload.XXXXXX");
	if (!mkdtemp(workdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* The real vdevs read their frames from files made before EAL starts. */
	frames_of(K_A_EGRESS, eg, REAL_N);
	frames_of(K_A_INGRESS, ig, REAL_N);
	snprintf(path, sizeof(path), "%s/vm1-in.pcap", workdir);
	pcap_write(path, eg, REAL_N);
	snprintf(path, sizeof(path), "%s/fabric-in.pcap", workdir);
	pcap_write(path, ig, REAL_N);
	snprintf(v_pcap0, sizeof(v_pcap0), "net_pcap0,rx_pcap=%s/vm1-in.pcap,tx_pcap=%s/vm1-out.pcap", workdir,
		 workdir);
	snprintf(v_pcap1, sizeof(v_pcap1), "net_pcap1,rx_pcap=%s/fabric-in.pcap,tx_pcap=%s/fabric-out.pcap",
		 workdir, workdir);
	snprintf(prefix, sizeof(prefix), "--file-prefix=roce-offload-%d", (int)getpid());
	eal[n++] = argv[0];
	eal[n++] = (char *)"-l";
	eal[n++] = (char *)"0,1";
	eal[n++] = (char *)"--no-huge";
	eal[n++] = (char *)"-m";
	eal[n++] = (char *)"256";
	eal[n++] = (char *)"--no-pci";
	eal[n++] = prefix;
	eal[n++] = (char *)"--log-level=lib.eal:warning";
#ifdef HAVE_RTEST_PMD
	eal[n++] = (char *)"--vdev=net_rtest0,caps=all";
	eal[n++] = (char *)"--vdev=net_rtest1,caps=all";
	eal[n++] = (char *)"--vdev=net_rtest2,caps=all";
#endif
	eal[n++] = (char *)"--vdev";
	eal[n++] = v_pcap0;
	eal[n++] = (char *)"--vdev";
	eal[n++] = v_pcap1;
	eal[n++] = (char *)"--vdev=net_null0";
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	fwd_lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
	if (fwd_lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, "two lcores are needed\n");
		return 1;
	}
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
	roce_crc32_set_impl(net_crc32, "rte_net_crc");
	pool = rte_pktmbuf_pool_create("offload_test", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (!pool) {
		fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	pthread_mutex_init(&dp.ctl_lock, NULL);
	if (dp_offload_telemetry_init() < 0 || dp_telemetry_init() < 0)
		fprintf(stderr, "telemetry registration failed\n");

#ifdef HAVE_RTEST_PMD
	scenario_rtest();
#else
	case_skip_fail("the offload life cycle through the test PMD",
		       "not built: DPDK's driver headers were missing; run tests/offload/driver-sdk.sh and reconfigure");
#endif
	scenario_real();

	rte_mempool_free(pool);
	snprintf(v_pcap0, sizeof(v_pcap0), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	/* This run's EAL runtime directory and work files: nothing is left behind. */
	{
		char cmd[sizeof(workdir) + sizeof(v_pcap0) + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", workdir, v_pcap0);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", workdir);
	}
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
