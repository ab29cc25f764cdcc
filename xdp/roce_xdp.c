/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XDP program's loader: see roce_xdp.h for the contracts.
 *
 * Everything is found again from the kernel rather than remembered: the
 * program attached to an interface (bpf_xdp_query), its maps by name
 * (bpf_prog_info.map_ids), and whether a bpf_link holds it (the link
 * table).  So a handle made by roce_xdp_open() in another process sees
 * exactly what the switch sees.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "roce_xdp.h"
#include "roce_xdp_int.h"
#include "roce_xdp_obj.h"	/* ROCE_XDP_BUILD_OBJ, made by meson */

/* An unclaimed netlink attachment older than this is stale (seconds). */
#define ROCE_XDP_CLAIM_GRACE 10

static void
say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *
ifname_of(int ifindex, char *buf)
{
	if (if_indextoname((unsigned int)ifindex, buf) == NULL)
		snprintf(buf, IF_NAMESIZE, "ifindex %d", ifindex);
	return buf;
}

/* Field 22 of /proc/PID/stat (start time in clock ticks), 0 if none. */
static uint64_t
proc_start_time(uint32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;
	size_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: skip past the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return 0;
	p++;
	/* After ')' come field 3 (state) ... field 22 (starttime). */
	for (i = 3; i <= 22 && p != NULL; i++) {
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	if (p == NULL || sscanf(p, "%llu", &t) != 1)
		return 0;
	return t;
}

const char *
roce_xdp_default_obj(void)
{
	const char *env = getenv("ROCE_XDP_OBJ");

	return env != NULL && env[0] != '\0' ? env : ROCE_XDP_BUILD_OBJ;
}

/* The program attached to ifindex and its mode; *prog_id 0 when none. */
static int
query(int ifindex, uint32_t *prog_id, uint32_t *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int rc;

	rc = bpf_xdp_query(ifindex, 0, &q);
	if (rc < 0)
		return rc;
	*mode = q.attach_mode;
	/* One program per mode; the switch's is native or generic, never both. */
	*prog_id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id :
		   q.skb_prog_id ? q.skb_prog_id : q.hw_prog_id;
	return 0;
}

/* True when a bpf_link of type XDP holds prog_id on ifindex. */
static bool
held_by_link(int ifindex, uint32_t prog_id)
{
	uint32_t id = 0;

	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info li;
		uint32_t len = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&li, 0, sizeof(li));
		if (bpf_obj_get_info_by_fd(fd, &li, &len) == 0 &&
		    li.type == BPF_LINK_TYPE_XDP && li.prog_id == prog_id &&
		    (int)li.xdp.ifindex == ifindex) {
			close(fd);
			return true;
		}
		close(fd);
	}
	return false;
}

/* Opens the map of prog_fd called name; -ENOENT if it has none. */
static int
map_by_name(int prog_fd, const char *name)
{
	uint32_t ids[16], n = 0, len, i;
	struct bpf_prog_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 16;
	pi.map_ids = (uint64_t)(uintptr_t)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &len) < 0)
		return -errno;
	n = pi.nr_map_ids < 16 ? pi.nr_map_ids : 16;
	for (i = 0; i < n; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 &&
		    strncmp(mi.name, name, sizeof(mi.name)) == 0)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int
roce_xdp_inspect(int ifindex, struct roce_xdp_info *info)
{
	struct bpf_prog_info pi;
	uint32_t len = sizeof(pi), zero = 0;
	struct roce_xdp_config own;
	int rc, fd, ofd, dfd;

	memset(info, 0, sizeof(*info));
	rc = query(ifindex, &info->prog_id, &info->mode);
	if (rc < 0)
		return rc;
	if (info->prog_id == 0)
		return 0;
	fd = bpf_prog_get_fd_by_id(info->prog_id);
	if (fd < 0)
		return -errno;
	memset(&pi, 0, sizeof(pi));
	if (bpf_obj_get_info_by_fd(fd, &pi, &len) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	memcpy(info->prog_name, pi.name, sizeof(info->prog_name) - 1);
	ofd = map_by_name(fd, "config_map");
	dfd = map_by_name(fd, "deny_map");
	if (dfd >= 0)
		close(dfd);
	/* Ours: our name and our maps (a same-named program of someone else's lacks them). */
	if (strcmp(info->prog_name, ROCE_XDP_PROG_NAME) != 0 || ofd < 0 || dfd < 0) {
		info->holder = ROCE_XDP_FOREIGN;
		if (ofd >= 0)
			close(ofd);
		close(fd);
		return 0;
	}
	memset(&own, 0, sizeof(own));
	if (bpf_map_lookup_elem(ofd, &zero, &own) == 0 && own.owner_pid != 0) {
		info->owner_pid = own.owner_pid;
		info->owner_alive = proc_start_time(own.owner_pid) == own.owner_start_time;
	}
	close(ofd);
	if (held_by_link(ifindex, info->prog_id)) {
		info->holder = ROCE_XDP_OURS_LINK;
	} else {
		struct timespec now;

		info->holder = ROCE_XDP_OURS_NETLINK;
		clock_gettime(CLOCK_BOOTTIME, &now);
		/*
		 * Unclaimed: net_af_xdp attached it and the switch has not adopted
		 * it yet, or the switch died in between.  Give it a grace period.
		 */
		if (info->owner_pid == 0)
			info->stale = (uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec >
				pi.load_time + ROCE_XDP_CLAIM_GRACE * 1000000000ull;
		else
			info->stale = !info->owner_alive;
	}
	close(fd);
	return 0;
}

/* Detaches the netlink attachment of prog_id, only if it is still attached. */
static int
detach_netlink(int ifindex, uint32_t prog_id, uint32_t mode)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o);
	int fd = bpf_prog_get_fd_by_id(prog_id);
	int rc;

	if (fd < 0)
		return -errno;
	o.old_prog_fd = fd;
	rc = bpf_xdp_attach(ifindex, -1, XDP_FLAGS_REPLACE |
			    (mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE), &o);
	close(fd);
	return rc;
}

int
roce_xdp_remove(int ifindex, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	struct roce_xdp_info info;
	int rc;

	rc = roce_xdp_inspect(ifindex, &info);
	if (rc < 0)
		return rc;
	if (info.holder == ROCE_XDP_NONE)
		return 0;
	if (info.holder != ROCE_XDP_OURS_NETLINK) {
		say(err, errlen, "%s: XDP program %u is %s", ifname_of(ifindex, name), info.prog_id,
		    info.holder == ROCE_XDP_FOREIGN ? "not ours" :
		    "held through a bpf_link by a live process");
		return info.holder == ROCE_XDP_FOREIGN ? -EEXIST : -EBUSY;
	}
	rc = detach_netlink(ifindex, info.prog_id, info.mode);
	if (rc < 0)
		say(err, errlen, "%s: cannot detach XDP program %u: %s", ifname_of(ifindex, name),
		    info.prog_id, strerror(-rc));
	return rc;
}

int
roce_xdp_prepare(int ifindex, bool *removed, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	struct roce_xdp_info info;
	int rc;

	if (removed != NULL)
		*removed = false;
	rc = roce_xdp_inspect(ifindex, &info);
	if (rc < 0) {
		say(err, errlen, "%s: cannot query XDP (%s)%s", ifname_of(ifindex, name),
		    strerror(-rc), rc == -EPERM ? ": run as root or with CAP_BPF and CAP_NET_ADMIN" : "");
		return rc;
	}
	switch (info.holder) {
	case ROCE_XDP_NONE:
		return 0;
	case ROCE_XDP_FOREIGN:
		say(err, errlen, "%s already has XDP program %u (\"%s\", %s) that is not ours: "
		    "remove it (ip link set dev %s xdp off) or use another interface",
		    ifname_of(ifindex, name), info.prog_id, info.prog_name,
		    roce_xdp_mode_name(info.mode), name);
		return -EEXIST;
	case ROCE_XDP_OURS_LINK:
		say(err, errlen, "%s is held by another switch (pid %u, XDP program %u): "
		    "one switch per interface", ifname_of(ifindex, name), info.owner_pid,
		    info.prog_id);
		return -EBUSY;
	case ROCE_XDP_OURS_NETLINK:
		if (!info.stale && info.owner_pid == 0) {
			say(err, errlen, "%s: XDP program %u of ours was attached moments ago and "
			    "nobody has claimed it yet: another switch is starting there",
			    ifname_of(ifindex, name), info.prog_id);
			return -EBUSY;
		}
		if (!info.stale) {
			say(err, errlen, "%s is held by a live process (pid %u, XDP program %u): "
			    "one switch per interface", ifname_of(ifindex, name),
			    info.owner_pid, info.prog_id);
			return -EBUSY;
		}
		break;
	}
	/* Stale: detach exactly that program, not whatever replaced it meanwhile. */
	rc = detach_netlink(ifindex, info.prog_id, info.mode);
	if (rc < 0) {
		say(err, errlen, "%s: cannot remove stale XDP program %u: %s",
		    ifname_of(ifindex, name), info.prog_id, strerror(-rc));
		return rc;
	}
	say(err, errlen, "%s: removed stale XDP program %u of dead pid %u",
	    ifname_of(ifindex, name), info.prog_id, info.owner_pid);
	if (removed != NULL)
		*removed = true;
	return 0;
}

static struct roce_xdp *
handle_new(int ifindex)
{
	struct roce_xdp *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	x->ifindex = ifindex;
	x->prog_fd = x->link_fd = -1;
	x->counters_fd = x->deny_fd = x->xsks_fd = x->config_fd = -1;
	x->ncpus = libbpf_num_possible_cpus();
	return x;
}

/* Opens the five maps of x->prog_fd. */
static int
handle_maps(struct roce_xdp *x)
{
	x->counters_fd = map_by_name(x->prog_fd, "counters");
	x->deny_fd = map_by_name(x->prog_fd, "deny_map");
	x->xsks_fd = map_by_name(x->prog_fd, "xsks_map");
	x->config_fd = map_by_name(x->prog_fd, "config_map");
	if (x->counters_fd < 0 || x->deny_fd < 0 || x->xsks_fd < 0 ||
	    x->config_fd < 0 || x->ncpus <= 0)
		return -ENOENT;
	return 0;
}

static void
handle_close(struct roce_xdp *x)
{
	int *fds[] = { &x->counters_fd, &x->deny_fd, &x->xsks_fd, &x->config_fd,
		       &x->link_fd, &x->prog_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	if (x->obj != NULL)
		bpf_object__close(x->obj);
	free(x);
}

/* Records the calling process as the program's owner, keeping the port. */
static int
claim(struct roce_xdp *x)
{
	struct roce_xdp_config c;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(x->config_fd, &zero, &c) < 0)
		return -errno;
	c.owner_pid = (uint32_t)getpid();
	c.owner_start_time = proc_start_time(c.owner_pid);
	return bpf_map_update_elem(x->config_fd, &zero, &c, BPF_ANY) < 0 ? -errno : 0;
}

/* Opens our program on ifindex into a fresh handle. */
static int
open_attached(int ifindex, struct roce_xdp **out, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	struct roce_xdp_info info;
	struct roce_xdp *x;
	int rc;

	rc = roce_xdp_inspect(ifindex, &info);
	if (rc < 0) {
		say(err, errlen, "%s: cannot query XDP: %s", ifname_of(ifindex, name), strerror(-rc));
		return rc;
	}
	if (info.holder == ROCE_XDP_NONE || info.holder == ROCE_XDP_FOREIGN) {
		say(err, errlen, "%s: our XDP program is not attached%s", ifname_of(ifindex, name),
		    info.holder == ROCE_XDP_FOREIGN ? " (a foreign one is)" : "");
		return -ENOENT;
	}
	x = handle_new(ifindex);
	if (x == NULL)
		return -ENOMEM;
	x->prog_id = info.prog_id;
	x->mode = info.mode;
	x->prog_fd = bpf_prog_get_fd_by_id(info.prog_id);
	if (x->prog_fd < 0 || handle_maps(x) < 0) {
		rc = x->prog_fd < 0 ? -errno : -ENOENT;
		say(err, errlen, "%s: cannot open XDP program %u and its maps: %s",
		    ifname_of(ifindex, name), info.prog_id, strerror(-rc));
		handle_close(x);
		return rc;
	}
	*out = x;
	return 0;
}

int
roce_xdp_open(int ifindex, struct roce_xdp **out, char *err, size_t errlen)
{
	return open_attached(ifindex, out, err, errlen);
}

int
roce_xdp_attach(int ifindex, const char *obj_path, unsigned int flags,
		struct roce_xdp **out, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	struct bpf_program *prog;
	uint32_t xflags = 0;
	struct roce_xdp *x;
	int rc;

	rc = roce_xdp_prepare(ifindex, NULL, err, errlen);
	if (rc < 0)
		return rc;
	if (obj_path == NULL)
		obj_path = roce_xdp_default_obj();
	x = handle_new(ifindex);
	if (x == NULL)
		return -ENOMEM;
	x->obj = bpf_object__open_file(obj_path, NULL);
	rc = libbpf_get_error(x->obj);
	if (rc != 0) {
		x->obj = NULL;
		say(err, errlen, "%s: cannot open %s: %s", ifname_of(ifindex, name), obj_path,
		    strerror(-rc));
		goto fail;
	}
	rc = bpf_object__load(x->obj);
	prog = bpf_object__find_program_by_name(x->obj, ROCE_XDP_PROG_NAME);
	if (rc < 0 || prog == NULL) {
		rc = rc < 0 ? rc : -ENOENT;
		say(err, errlen, "%s: cannot load %s: %s%s", ifname_of(ifindex, name), obj_path,
		    strerror(-rc), rc == -EPERM ? " (run as root or with CAP_BPF)" : "");
		goto fail;
	}
	x->prog_fd = dup(bpf_program__fd(prog));
	if (x->prog_fd < 0 || handle_maps(x) < 0) {
		rc = -ENOENT;
		say(err, errlen, "%s: %s lacks the maps of roce_xdp", ifname_of(ifindex, name),
		    obj_path);
		goto fail;
	}
	/* The owner is written before the attachment, so nobody sees it unclaimed. */
	rc = claim(x);
	if (rc < 0)
		goto fail;
	if (flags & ROCE_XDP_F_SKB)
		xflags |= XDP_FLAGS_SKB_MODE;
	if (flags & ROCE_XDP_F_DRV)
		xflags |= XDP_FLAGS_DRV_MODE;
	if (flags & ROCE_XDP_F_NETLINK) {
		rc = bpf_xdp_attach(ifindex, x->prog_fd, xflags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		x->netlink_owned = rc == 0;
	} else {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = xflags);

		x->link_fd = bpf_link_create(x->prog_fd, ifindex, BPF_XDP, &lo);
		rc = x->link_fd < 0 ? -errno : 0;
	}
	if (rc < 0) {
		say(err, errlen, "%s: cannot attach XDP: %s%s", ifname_of(ifindex, name),
		    strerror(-rc), rc == -EOPNOTSUPP ? " (the driver has no native XDP; "
		    "try generic mode)" : rc == -EBUSY || rc == -EEXIST ?
		    " (another program was attached meanwhile)" : "");
		goto fail;
	}
	{
		uint32_t id = 0;

		rc = query(ifindex, &id, &x->mode);
		x->prog_id = id;
	}
	*out = x;
	return 0;
fail:
	handle_close(x);
	return rc;
}

int
roce_xdp_adopt(int ifindex, unsigned int flags, struct roce_xdp **out, char *err,
	       size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o);
	char name[IF_NAMESIZE];
	struct roce_xdp_info info;
	struct roce_xdp *x;
	uint32_t mflag, lflag;
	int rc;

	rc = roce_xdp_inspect(ifindex, &info);
	if (rc < 0)
		return rc;
	if (info.holder == ROCE_XDP_OURS_LINK || (info.holder == ROCE_XDP_OURS_NETLINK &&
	    info.owner_pid != 0 && info.owner_alive && info.owner_pid != (uint32_t)getpid())) {
		say(err, errlen, "%s is held by another process (pid %u)",
		    ifname_of(ifindex, name), info.owner_pid);
		return -EBUSY;
	}
	rc = open_attached(ifindex, &x, err, errlen);
	if (rc < 0)
		return rc;
	rc = claim(x);
	if (rc < 0) {
		handle_close(x);
		return rc;
	}
	x->netlink_owned = true;
	mflag = info.mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	lflag = flags & ROCE_XDP_F_SKB ? XDP_FLAGS_SKB_MODE : flags & ROCE_XDP_F_DRV ?
		XDP_FLAGS_DRV_MODE : mflag;
	/*
	 * A link cannot replace a netlink attachment, so detach (only if it is
	 * still that program) and link at once.  RoCEv2 frames arriving in
	 * between reach the kernel, which has no socket on 4791 for them.
	 */
	o.old_prog_fd = x->prog_fd;
	rc = bpf_xdp_attach(ifindex, -1, XDP_FLAGS_REPLACE | mflag, &o);
	if (rc == 0) {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = lflag);

		x->link_fd = bpf_link_create(x->prog_fd, ifindex, BPF_XDP, &lo);
		if (x->link_fd >= 0) {
			uint32_t id = 0;

			x->netlink_owned = false;
			query(ifindex, &id, &x->mode);
		} else {
			rc = -errno;
			/* Put it back as it was; the owner record makes it ours. */
			if (bpf_xdp_attach(ifindex, x->prog_fd, mflag, NULL) < 0)
				x->netlink_owned = false;
			say(err, errlen, "%s: kept the netlink attachment (link refused: %s)",
			    ifname_of(ifindex, name), strerror(-rc));
		}
	}
	*out = x;
	return 0;
}

int
roce_xdp_detach(struct roce_xdp *x)
{
	uint32_t id = 0, mode = 0;
	int rc = 0;

	if (x->link_fd >= 0) {
		rc = bpf_link_detach(x->link_fd);
		close(x->link_fd);
		x->link_fd = -1;
		rc = rc < 0 ? -errno : 0;
	} else if (x->netlink_owned) {
		if (query(x->ifindex, &id, &mode) == 0 && id == x->prog_id)
			rc = detach_netlink(x->ifindex, id, mode);
		x->netlink_owned = false;
	}
	return rc;
}

void
roce_xdp_free(struct roce_xdp *x)
{
	if (x == NULL)
		return;
	roce_xdp_detach(x);
	handle_close(x);
}
