/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader's view of the program's maps: counters, deny entries, the
 * UDP port, AF_XDP sockets, and the names telemetry shows.  See roce_xdp.h
 * for the contracts.
 */
#include <errno.h>
#include <string.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>

#include "roce_xdp.h"
#include "roce_xdp_int.h"

static const char *const counter_names[] = {
#define ROCE_XDP_NAME(e, s) [ROCE_XDP_CTR_##e] = s,
	ROCE_XDP_COUNTERS(ROCE_XDP_NAME)
#undef ROCE_XDP_NAME
};

const char *
roce_xdp_counter_name(enum roce_xdp_counter c)
{
	return (unsigned int)c < ROCE_XDP_CTR_COUNT ? counter_names[c] : "?";
}

const char *
roce_xdp_mode_name(uint32_t mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}


int
roce_xdp_stats_read(const struct roce_xdp *x, uint64_t *out)
{
	uint64_t vals[x->ncpus];
	uint32_t k;
	int c;

	for (k = 0; k < ROCE_XDP_CTR_COUNT; k++) {
		if (bpf_map_lookup_elem(x->counters_fd, &k, vals) < 0)
			return -errno;
		out[k] = 0;
		for (c = 0; c < x->ncpus; c++)
			out[k] += vals[c];
	}
	return 0;
}

static int
deny_key(struct roce_xdp_deny_key *k, int family, const void *addr, uint32_t qpn)
{
	memset(k, 0, sizeof(*k));
	if (family != 4 && family != 6)
		return -EAFNOSUPPORT;
	if (qpn > 0xffffff)
		return -ERANGE;
	k->family = (uint8_t)family;
	k->qpn = qpn;
	memcpy(k->addr, addr, family == 4 ? 4 : 16);
	return 0;
}

int
roce_xdp_deny_add(struct roce_xdp *x, int family, const void *addr, uint32_t qpn)
{
	struct roce_xdp_deny_val v = { 0 };
	struct roce_xdp_deny_key k;
	int rc = deny_key(&k, family, addr, qpn);

	if (rc < 0)
		return rc;
	if (bpf_map_update_elem(x->deny_fd, &k, &v, BPF_NOEXIST) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int
roce_xdp_deny_del(struct roce_xdp *x, int family, const void *addr, uint32_t qpn)
{
	struct roce_xdp_deny_key k;
	int rc = deny_key(&k, family, addr, qpn);

	if (rc < 0)
		return rc;
	return bpf_map_delete_elem(x->deny_fd, &k) < 0 ? -errno : 0;
}

int
roce_xdp_deny_hits(const struct roce_xdp *x, int family, const void *addr,
		   uint32_t qpn, uint64_t *hits)
{
	struct roce_xdp_deny_val v;
	struct roce_xdp_deny_key k;
	int rc = deny_key(&k, family, addr, qpn);

	if (rc < 0)
		return rc;
	if (bpf_map_lookup_elem(x->deny_fd, &k, &v) < 0)
		return -errno;
	*hits = v.hits;
	return 0;
}

uint32_t
roce_xdp_deny_count(const struct roce_xdp *x)
{
	struct roce_xdp_deny_key k, next;
	uint32_t n = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(x->deny_fd, prev, &next) == 0) {
		n++;
		k = next;
		prev = &k;
	}
	return n;
}

int
roce_xdp_port_set(struct roce_xdp *x, uint16_t port)
{
	struct roce_xdp_config c;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(x->config_fd, &zero, &c) < 0)
		return -errno;
	c.udp_port = port;
	return bpf_map_update_elem(x->config_fd, &zero, &c, BPF_ANY) < 0 ? -errno : 0;
}

int
roce_xdp_xsk_set(struct roce_xdp *x, uint32_t queue, int fd)
{
	if (fd < 0)
		return bpf_map_delete_elem(x->xsks_fd, &queue) < 0 ? -errno : 0;
	return bpf_map_update_elem(x->xsks_fd, &queue, &fd, BPF_ANY) < 0 ? -errno : 0;
}

uint32_t
roce_xdp_prog_id(const struct roce_xdp *x)
{
	return x->prog_id;
}

uint32_t
roce_xdp_mode(const struct roce_xdp *x)
{
	return x->mode;
}

bool
roce_xdp_is_link(const struct roce_xdp *x)
{
	return x->link_fd >= 0;
}
