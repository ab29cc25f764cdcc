/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "roce_icrc.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "slice-by-8 assumes little endian");

#define CRC32_POLY_REFLECTED 0xedb88320u

/* crc_tab[k][b]: register after byte b then k zero bytes, from register 0. */
uint32_t roce_crc_tab[8][256];
#define crc_tab roce_crc_tab
/* shift_k[n] = x^(8n - 1) mod P, reflected (see roce_crc32_shift()). */
uint32_t roce_shift_k[ROCE_CRC_SHIFT_TABLE];
#define shift_k roce_shift_k
/* Register after the 8 bytes of 0xFF that open the ICRC, from all ones. */
static uint32_t icrc_seed;

static roce_crc32_fn crc_impl = roce_crc32_sw;
static const char *crc_impl_name = "slice-by-8";

__attribute__((constructor)) static void
crc_tables_init(void)
{
	static const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int i = 0; i < 8; i++)
			c = (c >> 1) ^ (CRC32_POLY_REFLECTED & (0u - (c & 1u)));
		crc_tab[0][b] = c;
	}
	for (uint32_t b = 0; b < 256; b++)
		for (int k = 1; k < 8; k++)
			crc_tab[k][b] = (crc_tab[k - 1][b] >> 8) ^ crc_tab[0][crc_tab[k - 1][b] & 0xff];

	/*
	 * In the reflected representation bit i stands for x^(31 - i), so
	 * x^(8n - 1) is bit 32 - 8n for n = 1..4; beyond that each step is one
	 * zero byte, a multiplication by x^8.
	 */
	shift_k[0] = 0;
	for (uint32_t n = 1; n <= 4; n++)
		shift_k[n] = 1u << (32 - 8 * n);
	for (uint32_t n = 5; n < ROCE_CRC_SHIFT_TABLE; n++)
		shift_k[n] = (shift_k[n - 1] >> 8) ^ crc_tab[0][shift_k[n - 1] & 0xff];

	icrc_seed = roce_crc32_update(0xffffffffu, ff, sizeof(ff));
}

uint32_t
roce_crc32_update(uint32_t crc, const void *buf, uint32_t len)
{
	const uint8_t *p = buf;

	while (len && ((uintptr_t)p & 7)) {
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t one, two;

		memcpy(&one, p, 4);
		memcpy(&two, p + 4, 4);
		one ^= crc;
		crc = crc_tab[7][one & 0xff] ^ crc_tab[6][(one >> 8) & 0xff] ^
		      crc_tab[5][(one >> 16) & 0xff] ^ crc_tab[4][one >> 24] ^
		      crc_tab[3][two & 0xff] ^ crc_tab[2][(two >> 8) & 0xff] ^
		      crc_tab[1][(two >> 16) & 0xff] ^ crc_tab[0][two >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t
roce_crc32_sw(const void *buf, uint32_t len)
{
	return ~roce_crc32_update(0xffffffffu, buf, len);
}

void
roce_crc32_set_impl(roce_crc32_fn fn, const char *name)
{
	crc_impl = fn ? fn : roce_crc32_sw;
	crc_impl_name = fn ? name : "slice-by-8";
}

const char *
roce_crc32_impl_name(void)
{
	return crc_impl_name;
}

uint32_t
roce_crc32(const void *buf, uint32_t len)
{
	return crc_impl(buf, len);
}

uint32_t
roce_crc32_shift_long(uint32_t reg, uint32_t n)
{
	while (n >= ROCE_CRC_SHIFT_TABLE) {
		reg = roce_crc32_shift_small(reg, ROCE_CRC_SHIFT_TABLE - 1);
		n -= ROCE_CRC_SHIFT_TABLE - 1;
	}
	return n ? roce_crc32_shift_small(reg, n) : reg;
}

/* Runs shorter than this continue the table CRC; longer ones use crc_impl. */
#define ICRC_FAST_MIN 64u

/* The variant fields of the IP header @h of version @ver set to ones. */
static void
ip_mask(uint8_t *h, uint8_t ver)
{
	if (ver == 4) {
		h[1] = 0xff;          /* TOS */
		h[8] = 0xff;          /* TTL */
		h[10] = h[11] = 0xff; /* header checksum */
	} else {
		h[0] |= 0x0f;         /* traffic class, flow label */
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;          /* hop limit */
	}
}

uint32_t
roce_icrc_compute(const uint8_t *frame, const struct roce_pkt *pkt)
{
	uint8_t hdr[60 + 8 + ROCE_BTH_LEN];
	uint32_t ip_len = pkt->l4_off - pkt->l3_off;
	uint32_t hlen = pkt->bth_off + ROCE_BTH_LEN - pkt->l3_off;
	uint32_t rest_off = pkt->bth_off + ROCE_BTH_LEN;
	uint32_t rest = pkt->icrc_off - rest_off;
	uint32_t reg;

	memcpy(hdr, frame + pkt->l3_off, hlen);
	ip_mask(hdr, pkt->ip_ver);
	hdr[ip_len + 6] = hdr[ip_len + 7] = 0xff; /* UDP checksum */
	hdr[ip_len + 8 + 4] = 0xff;               /* FECN, BECN, reserved */

	reg = roce_crc32_update(icrc_seed, hdr, hlen);
	if (rest < ICRC_FAST_MIN)
		return ~roce_crc32_update(reg, frame + rest_off, rest);
	/* crc(A || B) = crc(A) * x^(8|B|) ^ crc(B) for the standard CRC. */
	return roce_crc32_shift(~reg, rest) ^ crc_impl(frame + rest_off, rest);
}

void
roce_icrc_delta_add_crc0(struct roce_icrc_delta *d, uint32_t crc0, uint32_t end)
{
	if (end >= d->end) {
		d->acc = roce_crc32_shift(d->acc, end - d->end) ^ crc0;
		d->end = end;
	} else {
		d->acc ^= roce_crc32_shift(crc0, d->end - end);
	}
}

void
roce_icrc_delta_add(struct roce_icrc_delta *d, uint32_t off, const void *old, const void *new_bytes,
		    uint32_t len)
{
	const uint8_t *a = old, *b = new_bytes;
	uint32_t crc0 = 0;

	for (uint32_t i = 0; i < len; i++)
		crc0 = crc_tab[0][(crc0 ^ a[i] ^ b[i]) & 0xff] ^ (crc0 >> 8);
	roce_icrc_delta_add_crc0(d, crc0, off + len);
}

uint32_t
roce_icrc_update(uint32_t icrc, uint32_t off, const void *old, const void *new_bytes, uint32_t len,
		 uint32_t icrc_off)
{
	struct roce_icrc_delta d;

	roce_icrc_delta_init(&d);
	roce_icrc_delta_add(&d, off, old, new_bytes, len);
	return roce_icrc_delta_apply(&d, icrc, icrc_off);
}

/*
 * The ICRC of a frame whose IP header was replaced by one of the other IP
 * version (IPv4 <-> IPv6), from the ICRC it had.
 *
 * The ICRC runs over 8 bytes of 0xFF, the masked IP header, then the rest R
 * (UDP header to the end of the payload).  After the IP header the CRC
 * register is r_old or r_new; R, the same bytes in both frames, maps a
 * register r to x^(8|R|) * r ^ c(R) mod P.  So the two ICRCs differ by
 * x^(8|R|) * (r_old ^ r_new), whatever R holds: the new ICRC is exact when
 * the old one was, and wrong by the same error when it was not, so a
 * corrupted frame stays detectably corrupted.  The cost is two CRCs of a
 * header and one shift, not a pass over the payload.
 */

/* The CRC register after 8 bytes of 0xFF and the masked IP header @ip of version @ver. */
static uint32_t
ip_reg(const uint8_t *ip, unsigned len, uint8_t ver)
{
	uint8_t h[60];

	memcpy(h, ip, len);
	ip_mask(h, ver);
	return roce_crc32_update(icrc_seed, h, len);
}

uint32_t
roce_icrc_ip_swap(uint32_t icrc, const uint8_t *old_ip, unsigned old_len, uint8_t old_ver,
		  const uint8_t *new_ip, unsigned new_len, uint8_t new_ver, uint32_t rest)
{
	uint32_t d = ip_reg(old_ip, old_len, old_ver) ^ ip_reg(new_ip, new_len, new_ver);

	return icrc ^ roce_crc32_shift(d, rest);
}
