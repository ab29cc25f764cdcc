/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the switch's whole per-packet path on arbitrary frames.
 *
 * Set-up, once (LLVMFuzzerInitialize), as main.c does it: EAL with no
 * devices (--no-huge -m 256 --no-pci, a --file-prefix of our own, no
 * telemetry), the long-run CRC from rte_net_crc, a small mbuf pool, and the
 * overlays of eleven configurations built and given their stable ids by
 * dp_config_apply(): examples/two-tenants.json (RC, hairpin, MRs, two
 * tenants sharing vIPs), examples/pipeline-ud.json (UD, a gateway host, two
 * ports of one tenant), examples/pipeline-ipv6.json (IPv6, RC, UD, MR) and
 * tests/isolation/dual-stack.json (IPv4 and IPv6 identities of the same
 * tenants on one host, a tenant with mr_check off),
 * examples/pipeline-xrc.json (XRC initiators and targets both ways, a
 * hairpin, SRQs of two tenants on one host, an ACL of type xrc),
 * tests/pipeline/vlan.json and vlan-ipv6.json (VLAN policies), and
 * examples/pipeline-xlate-v4v6.json and pipeline-xlate-v6v4.json (IPv4 vIPs
 * on IPv6 hosts and the reverse: the IP header is translated), and
 * tests/fuzz/xlate-vlan.json (both at once), and tests/fuzz/learn.json (a
 * learning tenant's halves out, in and hairpinned, beside a configured pair
 * of another tenant with the same vips).  One
 * forwarding lcore structure with its per-tenant counters.
 *
 * Input format (all of it is fuzzed):
 *   byte 0            which configuration (modulo 11)
 *   then records      flags (1 byte), length (2 bytes, little endian), frame
 *     flags bits 0-3  the port the frame arrives on (modulo the port count,
 *                     configuration order): an uplink goes through
 *                     the fabric side of dp_process_frame(), a tenant port its tenant side
 *     flags bit 4     seal the frame first, if it parses: a correct IPv4
 *                     header checksum and ICRC, so that the fuzzer need not
 *                     learn CRC-32 to reach the rename path
 *     flags bit 5     the frame carries an rte_flow MARK (the next 4 bytes)
 * A frame longer than one mbuf arrives as a chain of two.  The message
 * state of every connection is cleared before each input, so that an input
 * means the same thing whatever ran before it.
 *
 * Invariants, checked on every frame (abort() on a violation):
 *   - the verdict is a drop reason the switch names, or a forward to an
 *     existing port (a tenant frame goes to an uplink or, hairpinned, to a
 *     port of the same tenant, maybe its own; a fabric frame goes to a
 *     tenant port);
 *   - a forwarded frame has its length (4 bytes more or fewer per VLAN tag a
 *     policy pushed or popped, and at least 60 once a policy retagged it;
 *     20 bytes more or less, padded to 60, when its IP version was
 *     translated), re-parses with roce_parse() on the
 *     configured UDP port, keeps its ICRC valid if it arrived valid (and
 *     invalid if it arrived invalid: the switch must not launder a corrupted
 *     frame), keeps a valid IPv4 header checksum valid, and has a zero or a
 *     correct UDP checksum (zero exactly when it arrived zero);
 *   - isolation: what leaves by a tenant port is addressed to a local QP of
 *     that port's tenant on that port (its vIP and vQPN) from a vIP of the
 *     same tenant; what leaves by an uplink is addressed from one of this
 *     host's IPs to a (host, pQPN) of a QP of the sending port's tenant on
 *     another host; an XRC request's SRQ number is one of the destination
 *     endpoint's (its vsrqn toward a tenant port, its psrqn toward the
 *     fabric), of the same tenant.
 * And ASan and UBSan watch every access (the DPDK libraries themselves are
 * not instrumented).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_net_crc.h>

#include "dp_loop.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

/*
 * The libraries under test are built with UBSan's default recovery: make
 * its first report fatal, so that libFuzzer keeps the input.
 */
const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

#define N_CONFIGS 11
#define MBUF_DATA 8192u /* a frame longer than this arrives as a chain */

static const char *const config_files[N_CONFIGS] = {
	FUZZ_SRCDIR "/examples/two-tenants.json",
	FUZZ_SRCDIR "/examples/pipeline-ud.json",
	FUZZ_SRCDIR "/examples/pipeline-ipv6.json",
	FUZZ_SRCDIR "/tests/isolation/dual-stack.json",
	FUZZ_SRCDIR "/examples/pipeline-xrc.json",
	/* VLAN policies: tags checked, pushed, popped and rewritten; short frames padded. */
	FUZZ_SRCDIR "/tests/pipeline/vlan.json",
	FUZZ_SRCDIR "/tests/pipeline/vlan-ipv6.json",
	FUZZ_SRCDIR "/examples/pipeline-xlate-v4v6.json",
	FUZZ_SRCDIR "/examples/pipeline-xlate-v6v4.json",
	/* A translation and VLAN policies at once. */
	FUZZ_SRCDIR "/tests/fuzz/xlate-vlan.json",
	/* Learned connections (halves) beside a configured pair that reuses their vips. */
	FUZZ_SRCDIR "/tests/fuzz/learn.json",
};

static struct {
	struct ovl *ovl[N_CONFIGS];
	struct cfg *cfg[N_CONFIGS];
	struct rte_mempool *pool;
	struct dp_lcore lc;
	char prefix[64];
} F;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_pipeline: invariant broken: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static uint32_t
net_crc32(const void *buf, uint32_t len)
{
	return rte_net_crc_calc(buf, len, RTE_NET_CRC32_ETH);
}

/*
 * EAL's runtime directory (/var/run/dpdk/PREFIX) serves only other
 * processes; with --no-shconf and no telemetry nobody uses it after the
 * set-up, and libFuzzer's exits skip any clean-up, so it goes at once.
 */
static void
rundir_remove(void)
{
	char cmd[PATH_MAX + 16];
	const char *dir = rte_eal_get_runtime_dir();

	if (dir && strstr(dir, F.prefix)) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "fuzz_pipeline: could not remove %s\n", dir);
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *eal[] = { (char *)"fuzz_pipeline", (char *)"-l", (char *)"0", (char *)"--no-huge",
			(char *)"-m", (char *)"256", (char *)"--no-pci", (char *)"--no-shconf",
			(char *)"--no-telemetry", (char *)"--file-prefix", F.prefix,
			(char *)"--log-level=error", NULL };
	struct dp_reload_report rep;

	(void)argc;
	(void)argv;
	snprintf(F.prefix, sizeof(F.prefix), "fuzz-%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "fuzz_pipeline: EAL initialisation failed\n");
		exit(1);
	}
	rundir_remove();
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
	roce_crc32_set_impl(net_crc32, "rte_net_crc");
	pthread_mutex_init(&dp.ctl_lock, NULL);
	/* Each configuration as if at start-up: no overlay published yet. */
	for (int i = 0; i < N_CONFIGS; i++) {
		dp.ovl = NULL;
		dp.cfg = NULL;
		if (dp_config_apply(config_files[i], &rep) < 0) {
			cfg_errors_print(&rep.errs, stderr);
			exit(1);
		}
		dp_reload_report_free(&rep);
		F.ovl[i] = dp.ovl;
		F.cfg[i] = dp.cfg;
	}
	F.pool = rte_pktmbuf_pool_create("fuzz_mbufs", 255, 0, 0, RTE_PKTMBUF_HEADROOM + MBUF_DATA,
					 (int)rte_socket_id());
	if (!F.pool) {
		fprintf(stderr, "fuzz_pipeline: no mbuf pool\n");
		exit(1);
	}
	F.lc.lcore_id = rte_lcore_id();
	F.lc.idx = 0;
	F.lc.tenant_stats = calloc(DP_MAX_TENANTS, sizeof(*F.lc.tenant_stats));
	if (!F.lc.tenant_stats)
		exit(1);
	dp.n_lcores = 1;
	return 0;
}

/* The frame in one mbuf, or two chained when it does not fit; NULL when out of mbufs. */
static struct rte_mbuf *
mbuf_of(const uint8_t *frame, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(F.pool), *m2;
	uint32_t first = len < MBUF_DATA ? len : MBUF_DATA;

	if (!m)
		return NULL;
	memcpy(rte_pktmbuf_append(m, (uint16_t)first), frame, first);
	if (first == len)
		return m;
	m2 = rte_pktmbuf_alloc(F.pool);
	if (!m2) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(rte_pktmbuf_append(m2, (uint16_t)(len - first)), frame + first, len - first);
	if (rte_pktmbuf_chain(m, m2) != 0) {
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(m2);
		return NULL;
	}
	return m;
}

static bool
ipv4_header_ok(const uint8_t *data, const struct roce_pkt *pkt)
{
	const uint8_t *ip = data + pkt->l3_off;
	size_t ihl = (size_t)(ip[0] & 0xf) * 4;

	return roce_csum_fold(roce_csum_partial(ip, ihl, 0)) == 0xffff;
}

static bool
udp_csum_ok(const uint8_t *data, const struct roce_pkt *pkt)
{
	const uint8_t *udp = data + pkt->l4_off;
	unsigned alen = pkt->ip_ver == 6 ? 16 : 4;
	const uint8_t *src = data + pkt->l3_off + (pkt->ip_ver == 6 ? 8 : 12);
	uint32_t ulen = pkt->frame_len - pkt->l4_off, sum;

	sum = roce_csum_partial(src, 2 * alen, 0);
	sum += 17 + ulen;
	sum = roce_csum_partial(udp, ulen, sum);
	return roce_csum_fold(sum) == 0xffff;
}

/* Make a parsed frame's IPv4 header checksum and ICRC right. */
static void
seal(uint8_t *data, const struct roce_pkt *pkt)
{
	if (pkt->ip_ver == 4) {
		uint8_t *ip = data + pkt->l3_off;
		uint16_t c;

		ip[10] = ip[11] = 0;
		c = roce_ipv4_csum(ip, (size_t)(ip[0] & 0xf) * 4);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	roce_icrc_put(data, pkt->icrc_off, roce_icrc_compute(data, pkt));
}

static bool
ip_eq(const struct ovl_ip *ip, const uint8_t *b, unsigned alen)
{
	return ip->ver == (alen == 16 ? 6 : 4) && memcmp(ip->b, b, alen) == 0;
}

static const uint8_t *
ip_src(const uint8_t *data, const struct roce_pkt *pkt)
{
	return data + pkt->l3_off + (pkt->ip_ver == 6 ? 8 : 12);
}

static const uint8_t *
ip_dst(const uint8_t *data, const struct roce_pkt *pkt)
{
	return ip_src(data, pkt) + (pkt->ip_ver == 6 ? 16 : 4);
}

/* Is (@vip, @vqpn) a QP of @tenant whose endpoint is local on @port, reached from a vIP of @tenant? */
static bool
delivered_to_own(const struct ovl *o, uint32_t tenant, uint16_t port, const uint8_t *data,
		 const struct roce_pkt *pkt)
{
	unsigned alen = pkt->ip_ver == 6 ? 16 : 4;
	uint32_t dqpn = roce_bth_dqpn((const struct roce_bth *)(data + pkt->bth_off));
	bool to = false, from = false;

	for (uint32_t i = 0; i < o->n_qps && !to; i++) {
		const struct ovl_qp *q = &o->qps[i];
		const struct ovl_endpoint *e = &o->endpoints[q->endpoint];

		to = q->tenant == tenant && q->vqpn == dqpn && e->local && e->port == port &&
		     ip_eq(&e->vip, ip_dst(data, pkt), alen);
	}
	for (uint32_t i = 0; i < o->n_endpoints && !from; i++)
		from = o->endpoints[i].tenant == tenant && ip_eq(&o->endpoints[i].vip, ip_src(data, pkt), alen);
	return to && from;
}

/* Is the frame from one of our host IPs to (host, pqpn) of a QP of @tenant on another host? */
static bool
sent_for_own(const struct ovl *o, uint32_t tenant, const uint8_t *data, const struct roce_pkt *pkt)
{
	unsigned alen = pkt->ip_ver == 6 ? 16 : 4;
	uint32_t dqpn = roce_bth_dqpn((const struct roce_bth *)(data + pkt->bth_off));
	bool to = false;

	if (ovl_host_index(o, ip_src(data, pkt), alen) < 0 || ovl_host_index(o, ip_dst(data, pkt), alen) >= 0)
		return false;
	for (uint32_t i = 0; i < o->n_qps && !to; i++) {
		const struct ovl_qp *q = &o->qps[i];

		to = q->tenant == tenant && q->pqpn == dqpn && !q->local &&
		     ip_eq(&o->endpoints[q->endpoint].host, ip_dst(data, pkt), alen);
	}
	return to;
}

/*
 * An XRC request's SRQ number names an SRQ of @tenant's endpoint it is sent to: toward a tenant
 * port the vsrqn of the destination vIP's endpoint, toward the fabric the psrqn of an endpoint of
 * @tenant on the destination host.  Frames without an XRCETH pass.
 */
static bool
srq_of_own(const struct ovl *o, uint32_t tenant, bool to_fabric, const uint8_t *data, const struct roce_pkt *pkt)
{
	const struct roce_xrceth *x = roce_pkt_ext(pkt, (uint8_t *)(uintptr_t)data, ROCE_EXT_XRCETH);
	unsigned alen = pkt->ip_ver == 6 ? 16 : 4;
	uint32_t srqn;

	if (!x)
		return true;
	srqn = roce_xrceth_srq(x);
	if (!to_fabric)
		return ovl_lookup_srq_tenant(o, tenant, ip_dst(data, pkt), alen, srqn) != OVL_NONE;
	for (uint32_t i = 0; i < o->n_srqs; i++) {
		const struct ovl_endpoint *e = &o->endpoints[o->srqs[i].endpoint];

		if (e->tenant == tenant && o->srqs[i].psrqn == srqn && ip_eq(&e->host, ip_dst(data, pkt), alen))
			return true;
	}
	return false;
}

/*
 * The length frame @in of @len bytes leaves with as @out: 4 bytes more or
 * fewer per VLAN tag a policy pushed or popped (a retagged frame padded to
 * 60, padding it arrived with kept); when its IP header is of the other
 * version, 20 bytes more (to IPv6) or 40 minus the IPv4 header's length less
 * (to IPv4), its padding dropped and the result padded to 60.
 */
static bool
out_len_ok(const struct ovl *o, const struct roce_pkt *in, uint32_t len, const struct roce_pkt *out,
	   uint32_t out_len)
{
	uint32_t tags = 4u * out->n_vlan - 4u * in->n_vlan;

	if (out->ip_ver != in->ip_ver) {
		uint32_t hl = (uint32_t)(in->l4_off - in->l3_off);
		uint32_t n = in->frame_len - hl + (in->ip_ver == 4 ? 40 : 20) + tags;

		return out_len == (n < ROCE_ETH_MIN_LEN ? ROCE_ETH_MIN_LEN : n);
	}
	return out_len == len + tags ||
	       (o->vlan_any && len + tags < ROCE_ETH_MIN_LEN && out_len == ROCE_ETH_MIN_LEN);
}

static void
one_frame(const struct ovl *o, uint16_t port, const uint8_t *frame, uint32_t len, uint8_t flags,
	  uint32_t mark)
{
	static uint8_t buf[2 * MBUF_DATA];
	struct roce_pkt in, out;
	bool parsed, icrc_in = false, ip_in = false, udp_in_zero = false;
	struct rte_mbuf *m;
	uint16_t out_port = UINT16_MAX;
	enum dp_drop why;
	const struct ovl_port *ip = &o->ports[port];

	memcpy(buf, frame, len);
	parsed = roce_parse(buf, len, o->udp_port, &in) == ROCE_OK;
	if (parsed) {
		if (flags & 0x10)
			seal(buf, &in);
		icrc_in = roce_icrc_verify(buf, &in);
		ip_in = in.ip_ver == 4 && ipv4_header_ok(buf, &in);
		udp_in_zero = buf[in.l4_off + 6] == 0 && buf[in.l4_off + 7] == 0;
	}
	m = mbuf_of(buf, len);
	if (!m)
		return;
	if (flags & 0x20) {
		m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
		m->hash.fdir.hi = mark;
	}
	F.lc.now = rte_rdtsc();
	why = dp_process_frame(&F.lc, port, m, &out_port);
	CHECK((unsigned)why < DP_DROP_MAX, "verdict %d", (int)why);
	if (why != DP_DROP_NONE) {
		rte_pktmbuf_free(m);
		return;
	}

	const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);

	CHECK(parsed, "forwarded a frame that does not parse (port %u)", port);
	CHECK(m->nb_segs == 1, "forwarded a chain");
	CHECK(out_port < o->n_ports, "out port %u for in port %u", out_port, port);
	CHECK(roce_parse(data, m->pkt_len, o->udp_port, &out) == ROCE_OK, "the output does not parse");
	/* The length changes by the tags a VLAN policy pushed or popped and by a translated IP header. */
	CHECK(out_len_ok(o, &in, len, &out, m->pkt_len), "changed the length (%u -> %u, tags %u -> %u, IPv%u -> IPv%u)",
	      len, m->pkt_len, in.n_vlan, out.n_vlan, in.ip_ver, out.ip_ver);
	CHECK(roce_icrc_verify(data, &out) == icrc_in, "ICRC %s on the way", icrc_in ? "broken" : "repaired");
	if (out.ip_ver == 4 && (ip_in || in.ip_ver == 6))
		CHECK(ipv4_header_ok(data, &out), "IPv4 header checksum broken on the way, or wrong when made");
	CHECK((data[out.l4_off + 6] == 0 && data[out.l4_off + 7] == 0) == udp_in_zero,
	      "UDP checksum zero-ness changed");
	if (!udp_in_zero)
		CHECK(udp_csum_ok(data, &out), "non-zero UDP checksum wrong on the way out");
	if (ip->uplink) {
		const struct ovl_port *op = &o->ports[out_port];

		CHECK(!op->uplink, "fabric frame sent back to the fabric");
		CHECK(delivered_to_own(o, op->tenant, out_port, data, &out),
		      "fabric frame delivered on %s not to a QP of its tenant from its tenant", op->name);
		CHECK(srq_of_own(o, op->tenant, false, data, &out), "XRC request delivered on %s to another's SRQ",
		      op->name);
	} else if (o->ports[out_port].uplink) {
		CHECK(sent_for_own(o, ip->tenant, data, &out),
		      "tenant %s's frame sent to the fabric not for a QP of its own", o->tenants[ip->tenant].name);
		CHECK(srq_of_own(o, ip->tenant, true, data, &out), "tenant %s's XRC request sent to another's SRQ",
		      o->tenants[ip->tenant].name);
	} else {
		const struct ovl_port *op = &o->ports[out_port];

		CHECK(op->tenant == ip->tenant, "hairpin from tenant %s to tenant %s", o->tenants[ip->tenant].name,
		      o->tenants[op->tenant].name);
		CHECK(delivered_to_own(o, op->tenant, out_port, data, &out), "hairpin to %s not to its own QP",
		      op->name);
		CHECK(srq_of_own(o, op->tenant, false, data, &out), "hairpin XRC request to another's SRQ");
	}
	rte_pktmbuf_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ovl *o;
	size_t off = 1;

	if (size < 1)
		return 0;
	o = F.ovl[data[0] % N_CONFIGS];
	F.lc.ovl = o;
	for (uint32_t i = 0; i < o->n_conns; i++) {
		struct dp_conn_state *st = dp_conn_state(o->conns[i].state);

		memset(&st->egress, 0, sizeof(st->egress));
		memset(&st->ingress, 0, sizeof(st->ingress));
	}
	while (off + 3 <= size) {
		uint8_t flags = data[off];
		uint32_t len = (uint32_t)data[off + 1] | (uint32_t)data[off + 2] << 8, mark = 0;

		off += 3;
		if (flags & 0x20) {
			if (off + 4 > size)
				break;
			memcpy(&mark, data + off, 4);
			off += 4;
		}
		if (len > size - off)
			len = (uint32_t)(size - off);
		if (len > 2 * MBUF_DATA)
			len = 2 * MBUF_DATA;
		one_frame(o, (uint16_t)((flags & 0xf) % o->n_ports), data + off, len, flags, mark);
		off += len;
	}
	return 0;
}
