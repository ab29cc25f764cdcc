/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XDP program that lets the switch share a NIC with the kernel.
 *
 * It parses Ethernet, at most one 802.1Q or 802.1ad tag, IPv4 (options
 * allowed) or IPv6 (UDP directly after the fixed header), UDP and, for
 * the RoCEv2 port, the BTH.  RoCEv2 frames go to the AF_XDP socket bound
 * to the frame's receive queue (xsks_map, the name DPDK's net_af_xdp
 * expects); everything else goes to the kernel untouched, malformed and
 * truncated frames included.  RoCEv2 frames whose (source IP, destination
 * QPN) the switch put into deny_map are dropped here, before they cost the
 * switch a cycle.  Every frame is counted exactly once (roce_xdp_maps.h).
 *
 * There are no loops: the only variable offset is the IPv4 header length,
 * which the verifier sees bounded by the mask (ihl & 0xf) * 4 and by the
 * explicit data_end checks.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "roce_xdp_maps.h"

/* The BTH is 12 bytes; the destination QPN is the low 24 bits of word 1. */
#define BTH_LEN 12

/* 802.1Q and 802.1ad tag: TCI then the inner EtherType. */
struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, ROCE_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROCE_XDP_CTR_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROCE_XDP_MAX_DENY);
	__type(key, struct roce_xdp_deny_key);
	__type(value, struct roce_xdp_deny_val);
} deny_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roce_xdp_config);
} config_map SEC(".maps");

/* Adds one to a per-CPU counter and returns the verdict, for tail calls. */
static __always_inline int
count(__u32 ctr, int verdict)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &ctr);

	if (v)
		*v += 1;
	return verdict;
}

/* The RoCEv2 UDP port from config_map, ROCE_XDP_UDP_PORT when unset. */
static __always_inline __u16
roce_port(void)
{
	__u32 zero = 0;
	struct roce_xdp_config *c = bpf_map_lookup_elem(&config_map, &zero);

	if (c && c->udp_port)
		return c->udp_port;
	return ROCE_XDP_UDP_PORT;
}

SEC("xdp")
int
roce_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct roce_xdp_deny_key key = {};
	struct roce_xdp_deny_val *deny;
	struct ethhdr *eth = data;
	struct udphdr *udp;
	void *l3;
	__u8 *bth;
	__u16 proto;
	__u32 qid;

	if ((void *)(eth + 1) > data_end)
		return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct vlan_tag *tag = l3;

		if ((void *)(tag + 1) > data_end)
			return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
		proto = tag->proto;
		l3 = tag + 1;
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;
		__u32 hlen;

		if ((void *)(ip + 1) > data_end)
			return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
		hlen = (ip->ihl & 0xf) * 4;
		if (ip->version != 4 || hlen < sizeof(*ip))
			return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
		if (ip->protocol != IPPROTO_UDP)
			return count(ROCE_XDP_CTR_PASSED, XDP_PASS);
		/* A fragment has no UDP header of its own: the kernel reassembles. */
		if (ip->frag_off & bpf_htons(0x3fff))
			return count(ROCE_XDP_CTR_PASSED, XDP_PASS);
		udp = l3 + hlen;
		key.family = 4;
		__builtin_memcpy(key.addr, &ip->saddr, 4);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > data_end)
			return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
		if (ip6->version != 6)
			return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
		/* RoCEv2 puts UDP right after the fixed header; anything else is not ours. */
		if (ip6->nexthdr != IPPROTO_UDP)
			return count(ROCE_XDP_CTR_PASSED, XDP_PASS);
		udp = (void *)(ip6 + 1);
		key.family = 6;
		__builtin_memcpy(key.addr, &ip6->saddr, 16);
	} else {
		return count(ROCE_XDP_CTR_PASSED, XDP_PASS);
	}

	if ((void *)(udp + 1) > data_end)
		return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
	if (udp->dest != bpf_htons(roce_port()))
		return count(ROCE_XDP_CTR_PASSED, XDP_PASS);

	/* UDP 4791 without a whole BTH is malformed RoCEv2: the kernel drops it. */
	bth = (__u8 *)(udp + 1);
	if ((void *)(bth + BTH_LEN) > data_end)
		return count(ROCE_XDP_CTR_MALFORMED, XDP_PASS);
	key.qpn = ((__u32)bth[5] << 16) | ((__u32)bth[6] << 8) | bth[7];

	deny = bpf_map_lookup_elem(&deny_map, &key);
	if (deny) {
		__sync_fetch_and_add(&deny->hits, 1);
		return count(ROCE_XDP_CTR_DENIED, XDP_DROP);
	}

	/*
	 * Look the socket up first: bpf_redirect_map() with an XDP_PASS
	 * fallback would hand the frame to the kernel without saying so.
	 */
	qid = ctx->rx_queue_index;
	if (!bpf_map_lookup_elem(&xsks_map, &qid))
		return count(ROCE_XDP_CTR_NO_SOCKET, XDP_PASS);
	return count(ROCE_XDP_CTR_REDIRECTED,
		     bpf_redirect_map(&xsks_map, qid, XDP_PASS));
}

char _license[] SEC("license") = "Dual BSD/GPL";
