/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce-inspect: decode every frame of a pcap or pcapng file with the rocev2
 * wire library and print one JSON object per frame, one per line.
 *
 *   roce-inspect [--udp-port N] [--summary] FILE.pcap|FILE.pcapng
 *
 * Every object has "frame" (1-based), "len" and "ok".  A frame roce_parse()
 * rejects gets "error" (the roce_parse_err_name() string) and the headers
 * that were found before the error; a well-formed one gets every header, the
 * payload length, the ICRC as found and whether it is right, and the
 * Ethernet padding after the ICRC (l2_pad; frame_len is len without it).  With
 * --summary a last line totals the frames, the good ones, the bad ICRCs and
 * the errors by name.
 *
 * Exit status: 0 when the whole file was read, whatever its frames hold;
 * 2 on a usage error or when the file cannot be opened or read.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "rocev2.h"

#define EXIT_USAGE 2

/*
 * A minimal JSON writer: objects and arrays nested to a fixed depth, and
 * strings that are all ours (names, addresses, hex numbers), so nothing is
 * escaped.
 */
#define JW_DEPTH 8

struct jw {
	FILE *f;
	int depth;
	bool first[JW_DEPTH];
};

static void
jw_sep(struct jw *w, const char *key)
{
	if (!w->first[w->depth])
		fputs(", ", w->f);
	w->first[w->depth] = false;
	if (key)
		fprintf(w->f, "\"%s\": ", key);
}

static void
jw_push(struct jw *w, const char *key, char open)
{
	jw_sep(w, key);
	fputc(open, w->f);
	w->depth++;
	w->first[w->depth] = true;
}

static void
jw_obj(struct jw *w, const char *key)
{
	jw_push(w, key, '{');
}

static void
jw_arr(struct jw *w, const char *key)
{
	jw_push(w, key, '[');
}

static void
jw_end_obj(struct jw *w)
{
	w->depth--;
	fputc('}', w->f);
}

static void
jw_end_arr(struct jw *w)
{
	w->depth--;
	fputc(']', w->f);
}

static void
jw_begin(struct jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->first[0] = true;
	jw_obj(w, NULL);
}

static void
jw_finish(struct jw *w)
{
	jw_end_obj(w);
	fputc('\n', w->f);
}

static void
jw_uint(struct jw *w, const char *key, uint64_t v)
{
	jw_sep(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

static void
jw_bool(struct jw *w, const char *key, bool v)
{
	jw_sep(w, key);
	fputs(v ? "true" : "false", w->f);
}

static void
jw_str(struct jw *w, const char *key, const char *s)
{
	jw_sep(w, key);
	fprintf(w->f, "\"%s\"", s);
}

static void
jw_hex32(struct jw *w, const char *key, uint32_t v)
{
	jw_sep(w, key);
	fprintf(w->f, "\"0x%08" PRIx32 "\"", v);
}

static void
jw_hex64(struct jw *w, const char *key, uint64_t v)
{
	jw_sep(w, key);
	fprintf(w->f, "\"0x%016" PRIx64 "\"", v);
}

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
print_eth(struct jw *w, const uint8_t *f)
{
	char mac[18];

	jw_obj(w, "eth");
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", f[0], f[1], f[2], f[3], f[4],
		 f[5]);
	jw_str(w, "dst", mac);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", f[6], f[7], f[8], f[9], f[10],
		 f[11]);
	jw_str(w, "src", mac);
	jw_end_obj(w);
}

static void
print_vlans(struct jw *w, const struct roce_pkt *pkt)
{
	if (!pkt->n_vlan)
		return;
	jw_arr(w, "vlan");
	for (unsigned i = 0; i < pkt->n_vlan; i++) {
		uint16_t tci = pkt->vlan_tci[i];

		jw_obj(w, NULL);
		jw_uint(w, "tpid", pkt->vlan_tpid[i]);
		jw_uint(w, "pcp", tci >> 13);
		jw_uint(w, "dei", (tci >> 12) & 1u);
		jw_uint(w, "vid", tci & 0x0fffu);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

/*
 * The IP header, when its fixed part is in the frame and its version
 * matches the EtherType (otherwise its fields would mean nothing).
 */
static void
print_ip(struct jw *w, const uint8_t *f, uint32_t len, const struct roce_pkt *pkt)
{
	const uint8_t *ip = f + pkt->l3_off;
	char addr[INET6_ADDRSTRLEN];

	if (!pkt->l3_off || !pkt->ip_ver || len < pkt->l3_off + (pkt->ip_ver == 4 ? 20u : 40u) ||
	    (ip[0] >> 4) != pkt->ip_ver)
		return;
	if (pkt->ip_ver == 4) {
		uint32_t ihl = (ip[0] & 0xfu) * 4u;

		jw_obj(w, "ip");
		jw_uint(w, "version", 4);
		jw_uint(w, "ihl", ip[0] & 0xfu);
		inet_ntop(AF_INET, ip + 12, addr, sizeof(addr));
		jw_str(w, "src", addr);
		inet_ntop(AF_INET, ip + 16, addr, sizeof(addr));
		jw_str(w, "dst", addr);
		jw_uint(w, "dscp", ip[1] >> 2);
		jw_uint(w, "ecn", ip[1] & 3u);
		jw_uint(w, "ttl", ip[8]);
		jw_uint(w, "id", rd16(ip + 4));
		jw_uint(w, "len", rd16(ip + 2));
		jw_uint(w, "proto", ip[9]);
		jw_end_obj(w);
		if (ihl >= 20 && len >= pkt->l3_off + ihl)
			jw_bool(w, "ipv4_csum_ok", roce_ipv4_csum(ip, ihl) == rd16(ip + 10));
	} else {
		jw_obj(w, "ip");
		jw_uint(w, "version", 6);
		inet_ntop(AF_INET6, ip + 8, addr, sizeof(addr));
		jw_str(w, "src", addr);
		inet_ntop(AF_INET6, ip + 24, addr, sizeof(addr));
		jw_str(w, "dst", addr);

		uint32_t w0 = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 | (uint32_t)ip[2] << 8 | ip[3];
		unsigned tc = (w0 >> 20) & 0xffu;

		jw_uint(w, "dscp", tc >> 2);
		jw_uint(w, "ecn", tc & 3u);
		jw_uint(w, "ttl", ip[7]);
		jw_uint(w, "flow_label", w0 & 0xfffffu);
		jw_uint(w, "plen", rd16(ip + 4));
		jw_uint(w, "nh", ip[6]);
		jw_end_obj(w);
	}
}

static void
print_udp(struct jw *w, const uint8_t *f, uint32_t len, const struct roce_pkt *pkt)
{
	const uint8_t *u = f + pkt->l4_off;

	if (!pkt->l4_off || len < pkt->l4_off + 8u)
		return;
	jw_obj(w, "udp");
	jw_uint(w, "sport", rd16(u));
	jw_uint(w, "dport", rd16(u + 2));
	jw_uint(w, "len", rd16(u + 4));
	jw_uint(w, "checksum", rd16(u + 6));
	jw_end_obj(w);
}

static void
print_bth(struct jw *w, const uint8_t *f, uint32_t len, const struct roce_pkt *pkt)
{
	const struct roce_bth *b = (const struct roce_bth *)(f + pkt->bth_off);
	const char *name;

	if (!pkt->bth_off || len < pkt->bth_off + ROCE_BTH_LEN)
		return;
	name = roce_opcode(b->opcode)->name;
	jw_obj(w, "bth");
	jw_uint(w, "opcode", b->opcode);
	if (name)
		jw_str(w, "opcode_name", name);
	jw_uint(w, "se", roce_bth_se(b));
	jw_uint(w, "mig", roce_bth_mig(b));
	jw_uint(w, "pad", roce_bth_pad(b));
	jw_uint(w, "tver", roce_bth_tver(b));
	jw_uint(w, "pkey", roce_bth_pkey(b));
	jw_uint(w, "fecn", roce_bth_fecn(b));
	jw_uint(w, "becn", roce_bth_becn(b));
	jw_uint(w, "dqpn", roce_bth_dqpn(b));
	jw_uint(w, "ackreq", roce_bth_ackreq(b));
	jw_uint(w, "psn", roce_bth_psn(b));
	jw_end_obj(w);
}

/* One object per extension header, in wire order, named by roce_ext_name(). */
static void
print_exts(struct jw *w, const uint8_t *f, uint32_t len, const struct roce_pkt *pkt)
{
	if (!pkt->exts || len < pkt->bth_off + roce_opcode(pkt->opcode)->hdr_len)
		return;
	for (unsigned i = 0; i < ROCE_EXT_COUNT; i++) {
		enum roce_ext ext = (enum roce_ext)(1u << i);
		const uint8_t *h = f + pkt->bth_off + roce_ext_offset(pkt->exts, ext);

		if (!(pkt->exts & ext))
			continue;
		jw_obj(w, roce_ext_name(ext));
		switch (ext) {
		case ROCE_EXT_RDETH: {
			const struct roce_rdeth *r = (const void *)h;

			jw_uint(w, "eecnxt", roce_be24_get(r->eecnxt));
			break;
		}
		case ROCE_EXT_DETH: {
			const struct roce_deth *d = (const void *)h;

			jw_hex32(w, "qkey", ntohl(d->qkey));
			jw_uint(w, "srcqp", roce_deth_srcqp(d));
			break;
		}
		case ROCE_EXT_XRCETH:
			jw_uint(w, "xrcsrq", roce_xrceth_srq((const struct roce_xrceth *)h));
			break;
		case ROCE_EXT_FETH: {
			const struct roce_feth *fe = (const void *)h;

			jw_uint(w, "plt", roce_feth_plt(fe));
			jw_uint(w, "sel", roce_feth_sel(fe));
			break;
		}
		case ROCE_EXT_RETH: {
			const struct roce_reth *r = (const void *)h;

			jw_hex64(w, "va", roce_reth_va(r));
			jw_hex32(w, "rkey", roce_reth_rkey(r));
			jw_uint(w, "dmalen", roce_reth_dmalen(r));
			break;
		}
		case ROCE_EXT_ATMETH: {
			const struct roce_atmeth *a = (const void *)h;

			jw_hex64(w, "va", roce_atmeth_va(a));
			jw_hex32(w, "rkey", roce_atmeth_rkey(a));
			jw_hex64(w, "swap", roce_atmeth_swap(a));
			jw_hex64(w, "compare", roce_atmeth_cmp(a));
			break;
		}
		case ROCE_EXT_AETH: {
			const struct roce_aeth *a = (const void *)h;

			jw_uint(w, "syndrome", roce_aeth_syndrome(a));
			jw_uint(w, "msn", roce_aeth_msn(a));
			break;
		}
		case ROCE_EXT_ATMACK:
			jw_hex64(w, "orig", roce_atmack_orig((const struct roce_atmack *)h));
			break;
		case ROCE_EXT_IMMDT:
			jw_uint(w, "imm", ntohl(((const struct roce_immdt *)h)->imm));
			break;
		case ROCE_EXT_IETH:
			jw_hex32(w, "rkey", roce_ieth_rkey((const struct roce_ieth *)h));
			break;
		}
		jw_end_obj(w);
	}
}

/*
 * Flat keys for the fields a switch renames or a reader looks for first,
 * beside the per-header objects (which keep their keys): the XRC SRQ
 * number, the R_Key a SEND with Invalidate invalidates, and the word an
 * ATOMIC WRITE writes.  Only for frames that parsed.
 */
static void
print_flat(struct jw *w, const uint8_t *f, const struct roce_pkt *pkt)
{
	const struct roce_xrceth *x = roce_pkt_ext(pkt, (uint8_t *)(uintptr_t)f, ROCE_EXT_XRCETH);
	const struct roce_ieth *ie = roce_pkt_ext(pkt, (uint8_t *)(uintptr_t)f, ROCE_EXT_IETH);

	if (x)
		jw_uint(w, "xrc_srqn", roce_xrceth_srq(x));
	if (ie)
		jw_hex32(w, "ieth_rkey", roce_ieth_rkey(ie));
	if (pkt->flags & ROCE_OPF_ATOMIC_WRITE) {
		const uint8_t *d = f + pkt->payload_off;
		uint64_t v = 0;

		for (unsigned i = 0; i < ROCE_ATOMIC_WRITE_LEN; i++)
			v = v << 8 | d[i];
		jw_hex64(w, "atomic_write_data", v);
	}
}

/*
 * A UD SEND to the GSI QP carries a management datagram: "mad" with its
 * common header, and for the CM class "cm" with the fields a switch reads
 * (roce_cm.h), each only in the messages that carry it.
 */
static void
print_mad(struct jw *w, const uint8_t *f, const struct roce_pkt *pkt)
{
	const struct roce_bth *b = (const struct roce_bth *)(f + pkt->bth_off);
	const uint8_t *mad = f + pkt->payload_off;
	const char *name;
	struct roce_cm cm;

	if (!(pkt->exts & ROCE_EXT_DETH) || roce_bth_dqpn(b) != ROCE_GSI_QPN ||
	    roce_mad_class(mad, pkt->payload_len) < 0)
		return;
	jw_obj(w, "mad");
	jw_uint(w, "class", mad[1]);
	jw_uint(w, "class_version", mad[2]);
	jw_uint(w, "method", mad[3]);
	jw_uint(w, "attr_id", (uint32_t)mad[16] << 8 | mad[17]);
	jw_end_obj(w);
	if (roce_cm_parse(mad, pkt->payload_len, &cm) != ROCE_CM_OK)
		return;
	jw_obj(w, "cm");
	name = roce_cm_attr_name(cm.attr_id);
	jw_str(w, "msg", name ? name : "other");
	jw_hex64(w, "tid", cm.tid);
	jw_hex32(w, "local_comm_id", cm.local_comm_id);
	if (cm.attr_id != ROCE_CM_REQ)
		jw_hex32(w, "remote_comm_id", cm.remote_comm_id);
	if (cm.attr_id == ROCE_CM_REQ) {
		jw_hex64(w, "service_id", cm.service_id);
		jw_uint(w, "transport", cm.transport);
	}
	if (cm.attr_id == ROCE_CM_REQ || cm.attr_id == ROCE_CM_REP) {
		jw_uint(w, "local_qpn", cm.local_qpn);
		jw_uint(w, "starting_psn", cm.starting_psn);
	}
	if (cm.attr_id == ROCE_CM_DREQ)
		jw_uint(w, "remote_qpn", cm.remote_qpn);
	if (cm.attr_id == ROCE_CM_REJ) {
		jw_uint(w, "rej_reason", cm.rej_reason);
		jw_uint(w, "rej_msg", cm.rej_msg);
	}
	jw_end_obj(w);
}

struct totals {
	uint64_t frames;
	uint64_t ok;
	uint64_t icrc_bad;
	uint64_t errors[ROCE_ERR_MAX];
};

/* Print one frame's object and add it to @t. */
static void
inspect_frame(struct jw *w, uint64_t number, const uint8_t *f, uint32_t len, uint32_t wire_len,
	      uint16_t udp_port, struct totals *t)
{
	struct roce_pkt pkt;
	enum roce_parse_err err = roce_parse(f, len, udp_port, &pkt);

	t->frames++;
	jw_begin(w, stdout);
	jw_uint(w, "frame", number);
	jw_uint(w, "len", len);
	if (wire_len != len)
		jw_uint(w, "wire_len", wire_len);
	jw_bool(w, "ok", err == ROCE_OK);
	if (err != ROCE_OK) {
		t->errors[err]++;
		jw_str(w, "error", roce_parse_err_name(err));
	}
	/* Whatever was found, outside in; each printer checks its bounds. */
	if (len >= 14)
		print_eth(w, f);
	print_vlans(w, &pkt);
	print_ip(w, f, len, &pkt);
	print_udp(w, f, len, &pkt);
	print_bth(w, f, len, &pkt);
	print_exts(w, f, len, &pkt);
	if (err == ROCE_OK) {
		uint32_t found = roce_icrc_get(f, &pkt);
		bool good = roce_icrc_compute(f, &pkt) == found;

		t->ok++;
		if (!good)
			t->icrc_bad++;
		print_flat(w, f, &pkt);
		print_mad(w, f, &pkt);
		jw_uint(w, "payload_len", pkt.payload_len);
		jw_hex32(w, "icrc", found);
		jw_bool(w, "icrc_ok", good);
		/* Ethernet padding after the ICRC; frame_len is len without it. */
		jw_uint(w, "frame_len", pkt.frame_len);
		jw_uint(w, "l2_pad", pkt.l2_pad);
	}
	jw_finish(w);
}

static void
print_summary(const struct totals *t)
{
	struct jw w;

	jw_begin(&w, stdout);
	jw_obj(&w, "summary");
	jw_uint(&w, "frames", t->frames);
	jw_uint(&w, "ok", t->ok);
	jw_uint(&w, "icrc_bad", t->icrc_bad);
	jw_obj(&w, "errors");
	for (unsigned e = 1; e < ROCE_ERR_MAX; e++)
		if (t->errors[e])
			jw_uint(&w, roce_parse_err_name((enum roce_parse_err)e), t->errors[e]);
	jw_end_obj(&w);
	jw_end_obj(&w);
	jw_finish(&w);
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: roce-inspect [--udp-port N] [--summary] FILE.pcap|FILE.pcapng\n"
		"  Decode every frame as RoCEv2 and print one JSON object per line.\n"
		"  --udp-port N  RoCEv2 UDP destination port (default %u)\n"
		"  --summary     finish with a line of totals\n",
		ROCE_UDP_PORT);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "udp-port", required_argument, NULL, 'p' },
		{ "summary", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char errbuf[PCAP_ERRBUF_SIZE];
	struct totals totals;
	struct pcap_pkthdr *hdr;
	const u_char *data;
	uint16_t udp_port = ROCE_UDP_PORT;
	bool summary = false;
	uint64_t number = 0;
	pcap_t *pc;
	int c, rc, status = 0;

	while ((c = getopt_long(argc, argv, "p:sh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 0);

			if (*optarg == '\0' || *end != '\0' || v == 0 || v > 65535) {
				fprintf(stderr, "roce-inspect: bad UDP port '%s'\n", optarg);
				return EXIT_USAGE;
			}
			udp_port = (uint16_t)v;
			break;
		}
		case 's':
			summary = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}

	pc = pcap_open_offline(argv[optind], errbuf);
	if (!pc) {
		fprintf(stderr, "roce-inspect: %s\n", errbuf);
		return EXIT_USAGE;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		const char *dlt = pcap_datalink_val_to_name(pcap_datalink(pc));

		fprintf(stderr, "roce-inspect: %s: link type %s, not Ethernet\n", argv[optind],
			dlt ? dlt : "unknown");
		pcap_close(pc);
		return EXIT_USAGE;
	}

	memset(&totals, 0, sizeof(totals));
	while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
		struct jw w;

		inspect_frame(&w, ++number, data, hdr->caplen, hdr->len, udp_port, &totals);
	}
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "roce-inspect: %s: %s\n", argv[optind], pcap_geterr(pc));
		status = EXIT_USAGE;
	}
	pcap_close(pc);
	if (summary)
		print_summary(&totals);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("roce-inspect: stdout");
		status = EXIT_USAGE;
	}
	return status;
}
