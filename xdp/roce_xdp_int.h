/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader's handle, shared by roce_xdp.c (finding, attaching, adopting
 * and detaching the program) and roce_xdp_map.c (its maps).  Not for users
 * of the library: they see struct roce_xdp as opaque.
 */
#ifndef ROCE_XDP_INT_H
#define ROCE_XDP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

/* One interface's program as this process sees it; every fd is -1 when unused. */
struct roce_xdp {
	int ifindex;
	struct bpf_object *obj;	/* when loaded here */
	int prog_fd;
	uint32_t prog_id;
	uint32_t mode;
	int link_fd;		/* >= 0 when a link of ours holds the program */
	bool netlink_owned;	/* attached or kept through netlink by us */
	int counters_fd;
	int deny_fd;
	int xsks_fd;
	int config_fd;
	int ncpus;
};

#endif /* ROCE_XDP_INT_H */
