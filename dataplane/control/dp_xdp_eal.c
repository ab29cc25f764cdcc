/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_af_xdp ports before and around EAL (dp_xdp.h): each net_af_xdp --vdev
 * is checked (the interface, AF_XDP, a program left by a dead switch) and
 * given our XDP program, and the mbuf size such a port allows is found.
 * The ports' life once EAL runs is dp_xdp.c.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dp.h"
#include "dp_xdp.h"
#include "roce_xdp.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define AF_XDP_DRIVER "net_af_xdp"

/* The value of key= in a devargs string, copied to out, or false. */
static bool
devarg(const char *args, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = args;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			const char *v = p + klen + 1;
			size_t n = strcspn(v, ",");

			if (out != NULL)
				snprintf(out, len, "%.*s", (int)n, v);
			return true;
		}
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return false;
}

/*
 * Checks one interface before EAL: it exists, the kernel has AF_XDP, we
 * may use XDP on it, and nobody alive holds our program there.
 */
static int
iface_check(const char *ifname)
{
	char err[512] = "";
	bool removed = false;
	int ifindex, s, rc;

	ifindex = (int)if_nametoindex(ifname);
	if (ifindex == 0) {
		fprintf(stderr, "net_af_xdp: no interface \"%s\" in this network namespace\n", ifname);
		return -1;
	}
	s = socket(AF_XDP, SOCK_RAW, 0);
	if (s < 0) {
		fprintf(stderr, "net_af_xdp on %s: the kernel refuses AF_XDP sockets (%s)%s\n", ifname,
			strerror(errno), errno == EAFNOSUPPORT ? ": it needs CONFIG_XDP_SOCKETS=y" :
			errno == EPERM ? ": run as root or with CAP_NET_RAW, CAP_NET_ADMIN and CAP_BPF" : "");
		return -1;
	}
	close(s);
	rc = roce_xdp_prepare(ifindex, &removed, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "net_af_xdp: %s\n", err);
		return -1;
	}
	if (removed)
		fprintf(stderr, "net_af_xdp: %s\n", err);
	return 0;
}

/*
 * The argument vector handed to EAL and the arguments written for it, kept
 * to be freed at exit (EAL's getopt reorders the vector, so the strings are
 * kept apart).
 */
static struct {
	char **argv;
	char **made;
	int n_made;
} eal_args;

void
dp_xdp_eal_args_free(void)
{
	for (int i = 0; i < eal_args.n_made; i++)
		free(eal_args.made[i]);
	free(eal_args.made);
	free(eal_args.argv);
	memset(&eal_args, 0, sizeof(eal_args));
}

char **
dp_xdp_eal_args(int *argc, char **argv)
{
	const char *obj = roce_xdp_default_obj();
	char **out = calloc((size_t)*argc + 1, sizeof(*out));
	int i;

	eal_args.made = calloc((size_t)*argc + 1, sizeof(*eal_args.made));
	if (out == NULL || eal_args.made == NULL) {
		free(out);
		dp_xdp_eal_args_free();
		return NULL;
	}
	for (i = 0; i < *argc; i++) {
		const char *v = NULL;
		bool eq = false;
		char ifname[IF_NAMESIZE] = "";
		char *arg;

		out[i] = argv[i];
		if (strncmp(argv[i], "--vdev=", 7) == 0) {
			v = argv[i] + 7;
			eq = true;
		} else if (strcmp(argv[i], "--vdev") == 0 && i + 1 < *argc) {
			out[i] = argv[i];
			i++;
			out[i] = argv[i];
			v = argv[i];
		}
		if (v == NULL || strncmp(v, AF_XDP_DRIVER, strlen(AF_XDP_DRIVER)) != 0)
			continue;
		/* The operator's own program is left alone (no deny map, no counters then). */
		if (devarg(strchr(v, ','), "xdp_prog", NULL, 0))
			continue;
		if (!devarg(strchr(v, ',') ? strchr(v, ',') + 1 : "", "iface", ifname, sizeof(ifname)) ||
		    iface_check(ifname) < 0) {
			if (ifname[0] == '\0')
				fprintf(stderr, "%s: iface= is required\n", v);
			free(out);
			dp_xdp_eal_args_free();
			return NULL;
		}
		if (access(obj, R_OK) != 0) {
			fprintf(stderr, "net_af_xdp on %s: cannot read the XDP program %s (%s); "
				"set ROCE_XDP_OBJ to roce_xdp.bpf.o\n", ifname, obj, strerror(errno));
			free(out);
			dp_xdp_eal_args_free();
			return NULL;
		}
		if (asprintf(&arg, "%s%s,xdp_prog=%s", eq ? "--vdev=" : "", v, obj) < 0) {
			free(out);
			dp_xdp_eal_args_free();
			return NULL;
		}
		out[i] = arg;
		eal_args.made[eal_args.n_made++] = arg;
	}
	out[*argc] = NULL;
	eal_args.argv = out;
	return out;
}

bool
dp_xdp_is_af_xdp(uint16_t port_id)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(port_id, &info) == 0 && info.driver_name != NULL &&
	       strcmp(info.driver_name, AF_XDP_DRIVER) == 0;
}

uint32_t
dp_xdp_mbuf_size_max(uint16_t priv_size)
{
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), room;
	uint16_t pid;
	bool any = false;

	RTE_ETH_FOREACH_DEV(pid)
		any |= dp_xdp_is_af_xdp(pid);
	if (!any)
		return 0;
	/*
	 * The PMD's umem frame is the whole mempool object, as the mempool
	 * lays it out (header, padding that spreads objects over memory
	 * channels, trailer): it must not exceed a page, hugepages or not.
	 */
	for (room = page; room > RTE_PKTMBUF_HEADROOM; room -= RTE_CACHE_LINE_SIZE / 2)
		if (rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) + priv_size + room, 0, NULL) <= page)
			return room - RTE_PKTMBUF_HEADROOM;
	return 0;
}
