/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_xdp: load, attach, find and drive the switch's XDP program
 * (roce_xdp.bpf.c) through libbpf.  No DPDK here: the switch, the tests
 * and the roce-xdp tool use the same calls.
 *
 * Who holds the program.  An attachment made here is a bpf_link owned by
 * the calling process: it goes away with the process, SIGKILL included,
 * and the kernel refuses any other attachment (netlink or link) while it
 * lives.  DPDK's net_af_xdp attaches a program given as xdp_prog= through
 * netlink, which outlives its process; roce_xdp_adopt() moves such an
 * attachment of our program onto a link of the caller's.  A netlink
 * attachment of our program whose owner (recorded in config_map) is dead is stale, and
 * roce_xdp_prepare() removes it.
 *
 * Errors.  Functions return 0 or a negative errno.  Those that take
 * (err, errlen) also leave a one-line explanation there that names the
 * interface and what to change.
 */
#ifndef ROCE_XDP_H
#define ROCE_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_xdp_maps.h"

struct roce_xdp;

/* What holds the XDP program of an interface. */
enum roce_xdp_holder {
	ROCE_XDP_NONE,		/* no XDP program */
	ROCE_XDP_OURS_LINK,	/* ours, through a live process's bpf_link */
	ROCE_XDP_OURS_NETLINK,	/* ours, through netlink (net_af_xdp, or stale) */
	ROCE_XDP_FOREIGN,	/* someone else's program */
};

/* What roce_xdp_inspect() found on an interface. */
struct roce_xdp_info {
	enum roce_xdp_holder holder;
	uint32_t prog_id;
	char prog_name[16];
	uint32_t mode;		/* XDP_ATTACHED_DRV, _SKB or _HW */
	uint32_t owner_pid;	/* from config_map; 0 when unclaimed */
	bool owner_alive;	/* owner_pid runs, and is the process that claimed */
	bool stale;		/* ours, by netlink, and nobody alive holds it */
};

/* Flags of roce_xdp_attach(). */
#define ROCE_XDP_F_NETLINK	(1u << 0)	/* netlink instead of a bpf_link */
#define ROCE_XDP_F_SKB		(1u << 1)	/* generic mode */
#define ROCE_XDP_F_DRV		(1u << 2)	/* native mode, fail if unsupported */

/*
 * Finds what holds the XDP program of ifindex.  Returns 0 and fills info
 * (holder NONE when nothing is attached), or a negative errno when the
 * kernel cannot be asked (no permission, no such interface).
 */
int roce_xdp_inspect(int ifindex, struct roce_xdp_info *info);

/*
 * Makes ifindex ready for a new holder: nothing attached is fine; a stale
 * program of ours is detached (and said so in err, with return 0 and
 * *removed set); a live holder of ours gives -EBUSY, a foreign program
 * -EEXIST, each explained in err.
 */
int roce_xdp_prepare(int ifindex, bool *removed, char *err, size_t errlen);

/*
 * Loads the object at obj_path (NULL: roce_xdp_default_obj()), attaches it
 * to ifindex (a bpf_link unless ROCE_XDP_F_NETLINK), records the caller as
 * owner and returns the handle in *out.  Refuses, like roce_xdp_prepare(),
 * when the interface is held.
 */
int roce_xdp_attach(int ifindex, const char *obj_path, unsigned int flags,
		    struct roce_xdp **out, char *err, size_t errlen);

/*
 * Takes over our program attached to ifindex through netlink (by
 * net_af_xdp's xdp_prog=), re-attaching the same program, with the same
 * maps and sockets, through a bpf_link of the caller's: in the mode it was
 * in, or in the one flags ask for (ROCE_XDP_F_SKB or ROCE_XDP_F_DRV).  If
 * the kernel refuses the link, the netlink attachment is restored and kept
 * (still detached at exit, and found stale after a crash).
 */
int roce_xdp_adopt(int ifindex, unsigned int flags, struct roce_xdp **out, char *err,
		   size_t errlen);

/*
 * Opens the maps of our program on ifindex without taking it over (for
 * tools and tests).  roce_xdp_free() of such a handle detaches nothing.
 */
int roce_xdp_open(int ifindex, struct roce_xdp **out, char *err, size_t errlen);

/*
 * Detaches the program if this handle attached or adopted it and it is
 * still the one on the interface.  Returns 0 or a negative errno.
 */
int roce_xdp_detach(struct roce_xdp *x);

/*
 * Detaches our program from ifindex when it is attached through netlink
 * (by anyone, live or not): an operator's and a test's tool.  Refuses a
 * link-held program (-EBUSY) and a foreign one (-EEXIST); 0 when nothing
 * is attached.
 */
int roce_xdp_remove(int ifindex, char *err, size_t errlen);

/* Releases the handle: roce_xdp_detach() if it holds the program, then frees. */
void roce_xdp_free(struct roce_xdp *x);

/* Sums the per-CPU counters into out[ROCE_XDP_CTR_COUNT]. */
int roce_xdp_stats_read(const struct roce_xdp *x, uint64_t *out);

/* Name of a counter, as in telemetry ("redirected", ...). */
const char *roce_xdp_counter_name(enum roce_xdp_counter c);

/*
 * Deny entries, keyed by the source IP (family 4 with 4 bytes, or 6 with
 * 16) and the destination QPN of received frames.  Adding an existing entry
 * keeps its hit count; deleting a missing one gives -ENOENT.
 */
int roce_xdp_deny_add(struct roce_xdp *x, int family, const void *addr, uint32_t qpn);
int roce_xdp_deny_del(struct roce_xdp *x, int family, const void *addr, uint32_t qpn);
int roce_xdp_deny_hits(const struct roce_xdp *x, int family, const void *addr,
		       uint32_t qpn, uint64_t *hits);

/* Number of entries in the deny map (0 on error). */
uint32_t roce_xdp_deny_count(const struct roce_xdp *x);

/* Sets the UDP destination port the program treats as RoCEv2 (0: 4791). */
int roce_xdp_port_set(struct roce_xdp *x, uint16_t port);

/* Binds (fd >= 0) or unbinds (fd < 0) the AF_XDP socket of a receive queue. */
int roce_xdp_xsk_set(struct roce_xdp *x, uint32_t queue, int fd);

/* The program's kernel id, its attach mode (XDP_ATTACHED_*) and the mode's name. */
uint32_t roce_xdp_prog_id(const struct roce_xdp *x);
uint32_t roce_xdp_mode(const struct roce_xdp *x);
const char *roce_xdp_mode_name(uint32_t mode);

/* True when this handle holds the program through a bpf_link. */
bool roce_xdp_is_link(const struct roce_xdp *x);

/* The object file: $ROCE_XDP_OBJ if set, else the one the build made. */
const char *roce_xdp_default_obj(void);

#endif /* ROCE_XDP_H */
