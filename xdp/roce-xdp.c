/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce-xdp: the XDP loader from the command line, for operators and tests.
 *
 *   roce-xdp attach IF [--netlink] [--skb] [--hold]   load and attach
 *   roce-xdp adopt IF [--skb] [--hold]  take over our program that net_af_xdp attached
 *   roce-xdp inspect IF             what holds IF's XDP program (JSON)
 *   roce-xdp prepare IF             remove a stale program of ours, refuse a live one
 *   roce-xdp detach IF              detach our program (netlink attachments only)
 *   roce-xdp stats IF               the program's counters (JSON)
 *   roce-xdp deny-add|deny-del|deny-hits IF IP QPN
 *   roce-xdp port IF PORT           the UDP port treated as RoCEv2
 *   roce-xdp xsk IF QUEUE PCAP      bind an AF_XDP socket to QUEUE and write what
 *                                   it receives to PCAP until SIGTERM or SIGINT
 *
 * With --hold the command keeps its bpf_link (or netlink attachment) until
 * SIGTERM or SIGINT, then detaches; SIGKILL leaves a netlink attachment
 * behind (a link goes with the process).  "ready" on stdout says it is in
 * place.  Exit status 0 on success, 1 on a refusal or error (said on stderr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include <xdp/xsk.h>

#include "roce_xdp.h"

#define XSK_FRAMES 4096
#define XSK_FRAME_SIZE 4096

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
wait_for_signal(void)
{
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
}

static int
fail(const char *what, int rc, const char *err)
{
	fprintf(stderr, "roce-xdp %s: %s\n", what, err[0] ? err : strerror(-rc));
	return 1;
}

static int
parse_ip(const char *s, int *family, unsigned char addr[16])
{
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = 6;
		return 0;
	}
	return -1;
}

static int
cmd_inspect(int ifindex)
{
	static const char *const holders[] = { "none", "ours_link", "ours_netlink", "foreign" };
	struct roce_xdp_info i;
	int rc = roce_xdp_inspect(ifindex, &i);

	if (rc < 0)
		return fail("inspect", rc, "");
	printf("{\"holder\": \"%s\", \"prog_id\": %u, \"prog_name\": \"%s\", \"mode\": \"%s\", "
	       "\"owner_pid\": %u, \"owner_alive\": %s, \"stale\": %s}\n",
	       holders[i.holder], i.prog_id, i.prog_name, roce_xdp_mode_name(i.mode),
	       i.owner_pid, i.owner_alive ? "true" : "false", i.stale ? "true" : "false");
	return 0;
}

static int
cmd_stats(struct roce_xdp *x)
{
	uint64_t v[ROCE_XDP_CTR_COUNT];
	int c, rc = roce_xdp_stats_read(x, v);

	if (rc < 0)
		return fail("stats", rc, "");
	printf("{\"prog_id\": %u, \"mode\": \"%s\"", roce_xdp_prog_id(x),
	       roce_xdp_mode_name(roce_xdp_mode(x)));
	for (c = 0; c < ROCE_XDP_CTR_COUNT; c++)
		printf(", \"%s\": %llu", roce_xdp_counter_name(c), (unsigned long long)v[c]);
	printf("}\n");
	return 0;
}

/* Writes one frame to a classic pcap file (the header was written first). */
static void
pcap_write(FILE *f, const void *data, uint32_t len)
{
	struct timeval tv;
	uint32_t rec[4];

	gettimeofday(&tv, NULL);
	rec[0] = (uint32_t)tv.tv_sec;
	rec[1] = (uint32_t)tv.tv_usec;
	rec[2] = len;
	rec[3] = len;
	fwrite(rec, sizeof(rec), 1, f);
	fwrite(data, 1, len, f);
	fflush(f);
}

/*
 * A bare AF_XDP receiver (copy mode) on our program's xsks_map: it shows
 * what the program redirects, without DPDK.
 */
static int
cmd_xsk(struct roce_xdp *x, const char *ifname, uint32_t queue, const char *pcap)
{
	static const uint32_t pcap_hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };
	struct xsk_socket_config scfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct xsk_socket *xsk = NULL;
	struct xsk_umem *umem = NULL;
	unsigned long long got = 0;
	size_t size = (size_t)XSK_FRAMES * XSK_FRAME_SIZE;
	uint32_t idx, i;
	void *buf;
	FILE *out;
	int rc;

	buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return fail("xsk", -errno, "");
	rc = xsk_umem__create(&umem, buf, size, &fq, &cq, NULL);
	if (rc == 0)
		rc = xsk_socket__create(&xsk, ifname, queue, umem, &rx, &tx, &scfg);
	if (rc == 0)
		rc = roce_xdp_xsk_set(x, queue, xsk_socket__fd(xsk));
	if (rc != 0)
		return fail("xsk", rc < 0 ? rc : -rc, "");
	if (xsk_ring_prod__reserve(&fq, XSK_RING_PROD__DEFAULT_NUM_DESCS, &idx) !=
	    XSK_RING_PROD__DEFAULT_NUM_DESCS)
		return fail("xsk", -ENOSPC, "");
	for (i = 0; i < XSK_RING_PROD__DEFAULT_NUM_DESCS; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) = (uint64_t)i * XSK_FRAME_SIZE;
	xsk_ring_prod__submit(&fq, XSK_RING_PROD__DEFAULT_NUM_DESCS);
	out = fopen(pcap, "w");
	if (out == NULL)
		return fail("xsk", -errno, "");
	fwrite(pcap_hdr, sizeof(pcap_hdr), 1, out);
	fflush(out);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct pollfd p = { .fd = xsk_socket__fd(xsk), .events = POLLIN };
		uint32_t n, fidx;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = xsk_ring_cons__peek(&rx, 64, &idx);
		if (n == 0)
			continue;
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, idx + i);

			pcap_write(out, xsk_umem__get_data(buf, d->addr), d->len);
		}
		/* Give the same frames back to the fill ring. */
		while (xsk_ring_prod__reserve(&fq, n, &fidx) != n)
			;
		for (i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&fq, fidx + i) =
				xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&rx, idx + i)->addr);
		xsk_ring_prod__submit(&fq, n);
		xsk_ring_cons__release(&rx, n);
		got += n;
	}
	roce_xdp_xsk_set(x, queue, -1);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	fclose(out);
	printf("{\"xsk_rx\": %llu}\n", got);
	return 0;
}

static int
usage(void)
{
	fprintf(stderr, "usage: roce-xdp attach|adopt|inspect|prepare|detach|stats|"
		"deny-add|deny-del|deny-hits|port|xsk IF [args]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const char *cmd, *ifname;
	struct roce_xdp *x = NULL;
	char err[512] = "";
	unsigned int flags = 0;
	bool hold = false;
	int ifindex, i, rc;

	if (argc < 3)
		return usage();
	cmd = argv[1];
	ifname = argv[2];
	ifindex = (int)if_nametoindex(ifname);
	if (ifindex == 0) {
		fprintf(stderr, "roce-xdp: no interface %s\n", ifname);
		return 1;
	}
	for (i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--netlink") == 0)
			flags |= ROCE_XDP_F_NETLINK;
		else if (strcmp(argv[i], "--skb") == 0)
			flags |= ROCE_XDP_F_SKB;
		else if (strcmp(argv[i], "--hold") == 0)
			hold = true;
	}

	if (strcmp(cmd, "inspect") == 0)
		return cmd_inspect(ifindex);
	if (strcmp(cmd, "prepare") == 0) {
		bool removed;

		rc = roce_xdp_prepare(ifindex, &removed, err, sizeof(err));
		if (rc < 0)
			return fail(cmd, rc, err);
		printf("{\"removed_stale\": %s}\n", removed ? "true" : "false");
		if (removed)
			fprintf(stderr, "roce-xdp: %s\n", err);
		return 0;
	}
	if (strcmp(cmd, "attach") == 0 || strcmp(cmd, "adopt") == 0) {
		rc = cmd[1] == 't' ?
			roce_xdp_attach(ifindex, getenv("ROCE_XDP_OBJ"), flags, &x, err, sizeof(err)) :
			roce_xdp_adopt(ifindex, flags, &x, err, sizeof(err));
		if (rc < 0)
			return fail(cmd, rc, err);
		if (err[0])
			fprintf(stderr, "roce-xdp: %s\n", err);
		if (!hold) {
			/* Leave a netlink attachment in place; a link cannot outlive us. */
			if (roce_xdp_is_link(x))
				fprintf(stderr, "roce-xdp: a link lasts only with --hold\n");
			printf("{\"prog_id\": %u, \"mode\": \"%s\", \"link\": %s}\n",
			       roce_xdp_prog_id(x), roce_xdp_mode_name(roce_xdp_mode(x)),
			       roce_xdp_is_link(x) ? "true" : "false");
			return 0;
		}
		wait_for_signal();
		roce_xdp_free(x);
		return 0;
	}

	if (strcmp(cmd, "detach") == 0) {
		rc = roce_xdp_remove(ifindex, err, sizeof(err));
		return rc < 0 ? fail(cmd, rc, err) : 0;
	}
	rc = roce_xdp_open(ifindex, &x, err, sizeof(err));
	if (rc < 0)
		return fail(cmd, rc, err);
	if (strcmp(cmd, "stats") == 0) {
		rc = cmd_stats(x);
	} else if (strncmp(cmd, "deny-", 5) == 0 && argc >= 5) {
		unsigned char addr[16];
		uint32_t qpn = (uint32_t)strtoul(argv[4], NULL, 0);
		uint64_t hits = 0;
		int family;

		if (parse_ip(argv[3], &family, addr) < 0)
			return fail(cmd, -EINVAL, "bad IP address");
		if (strcmp(cmd, "deny-add") == 0)
			rc = roce_xdp_deny_add(x, family, addr, qpn);
		else if (strcmp(cmd, "deny-del") == 0)
			rc = roce_xdp_deny_del(x, family, addr, qpn);
		else {
			rc = roce_xdp_deny_hits(x, family, addr, qpn, &hits);
			if (rc == 0)
				printf("{\"hits\": %llu}\n", (unsigned long long)hits);
		}
		rc = rc < 0 ? fail(cmd, rc, "") : 0;
	} else if (strcmp(cmd, "port") == 0 && argc >= 4) {
		rc = roce_xdp_port_set(x, (uint16_t)atoi(argv[3]));
		rc = rc < 0 ? fail(cmd, rc, "") : 0;
	} else if (strcmp(cmd, "xsk") == 0 && argc >= 5) {
		rc = cmd_xsk(x, ifname, (uint32_t)atoi(argv[3]), argv[4]);
	} else {
		rc = usage();
	}
	/* An open()ed handle detaches nothing when freed. */
	roce_xdp_free(x);
	return rc;
}
