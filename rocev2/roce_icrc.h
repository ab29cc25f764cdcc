/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 invariant CRC (IBTA Annex A17.3.3), computed in full and updated
 * incrementally.
 *
 * The ICRC is the standard CRC-32 (IEEE 802.3: reflected polynomial
 * 0xEDB88320, initial value and final XOR all ones) over:
 *
 *   8 bytes of 0xFF (standing in for the LRH of InfiniBand),
 *   the IP header with the variant fields set to all ones:
 *     IPv4: Type of Service, Time to Live, Header Checksum;
 *     IPv6: Traffic Class, Flow Label, Hop Limit;
 *   the UDP header with its Checksum set to all ones,
 *   the BTH with byte 4 (FECN, BECN, 6 reserved bits) set to all ones,
 *   everything after the BTH up to the ICRC (extension headers, payload, pad).
 *
 * It is stored on the wire least significant byte first.
 *
 * Incremental update.  CRC is affine over GF(2): for two messages of the
 * same length, crc(M') = crc(M) ^ crc0(M ^ M'), where crc0 has a zero initial
 * value and no final XOR.  The difference is zero except at the changed
 * fields, and zero bytes after a field only multiply its contribution by
 * x^(8n) mod P.  So the new ICRC costs one small CRC per changed field and
 * one multiplication per gap, whatever the payload length.
 */
#ifndef ROCE_ICRC_H
#define ROCE_ICRC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__PCLMUL__)
#include <wmmintrin.h>
#endif

#include "roce_parse.h"

/* Standard CRC-32 of a buffer (initial value and final XOR all ones). */
typedef uint32_t (*roce_crc32_fn)(const void *buf, uint32_t len);

/*
 * The implementation used for long runs of bytes.  The default is the
 * portable slice-by-8 roce_crc32_sw(); the data plane installs rte_net_crc
 * (PCLMUL or AVX-512) at start-up.  Not thread-safe: call before forwarding.
 */
void roce_crc32_set_impl(roce_crc32_fn fn, const char *name);
const char *roce_crc32_impl_name(void);
uint32_t roce_crc32(const void *buf, uint32_t len);
uint32_t roce_crc32_sw(const void *buf, uint32_t len);

/* Raw register update (no initial value, no final XOR), slice-by-8. */
uint32_t roce_crc32_update(uint32_t reg, const void *buf, uint32_t len);

/*
 * Multiply a CRC register by x^(8 * nbytes) mod P: the effect of @nbytes zero
 * bytes.  Constant time for nbytes < ROCE_CRC_SHIFT_TABLE (one carry-less
 * multiply and four table lookups).
 */
#define ROCE_CRC_SHIFT_TABLE 16384u

/* Tables, filled at load time: slice-by-8, and x^(8n - 1) mod P. */
extern uint32_t roce_crc_tab[8][256];
extern uint32_t roce_shift_k[ROCE_CRC_SHIFT_TABLE];

static inline uint64_t
roce_clmul32(uint32_t a, uint32_t b)
{
#if defined(__PCLMUL__)
	__m128i r = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b), 0);

	return (uint64_t)_mm_cvtsi128_si64(r);
#else
	uint64_t r = 0;

	for (int i = 0; i < 32; i++)
		r ^= ((uint64_t)a << i) & (0ull - ((b >> i) & 1u));
	return r;
#endif
}

/*
 * reg * x^(8n) mod P for 0 < n < ROCE_CRC_SHIFT_TABLE.  With
 * K = x^(8n - 1) mod P, the 63-bit carry-less product c = reg * K, read in
 * the reflected representation, is x^32 * lo(c) + hi(c) where both halves
 * are 32-bit reflected polynomials; x^32 * lo mod P is exactly the CRC
 * register of the four bytes of lo, which slice-by-4 gives in four lookups.
 */
static inline uint32_t
roce_crc32_shift_small(uint32_t reg, uint32_t n)
{
	uint64_t c = roce_clmul32(reg, roce_shift_k[n]);
	uint32_t lo = (uint32_t)c;

	return roce_crc_tab[3][lo & 0xff] ^ roce_crc_tab[2][(lo >> 8) & 0xff] ^
	       roce_crc_tab[1][(lo >> 16) & 0xff] ^ roce_crc_tab[0][lo >> 24] ^ (uint32_t)(c >> 32);
}

uint32_t roce_crc32_shift_long(uint32_t reg, uint32_t nbytes);

static inline uint32_t
roce_crc32_shift(uint32_t reg, uint32_t n)
{
	if (__builtin_expect(n - 1 < ROCE_CRC_SHIFT_TABLE - 1, 1))
		return roce_crc32_shift_small(reg, n);
	return n ? roce_crc32_shift_long(reg, n) : reg;
}

/* Full ICRC of a parsed frame. */
uint32_t roce_icrc_compute(const uint8_t *frame, const struct roce_pkt *pkt);

static inline uint32_t
roce_icrc_get(const uint8_t *frame, const struct roce_pkt *pkt)
{
	const uint8_t *p = frame + pkt->icrc_off;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void
roce_icrc_put(uint8_t *frame, uint32_t icrc_off, uint32_t icrc)
{
	uint8_t *p = frame + icrc_off;

	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

static inline bool
roce_icrc_verify(const uint8_t *frame, const struct roce_pkt *pkt)
{
	return roce_icrc_compute(frame, pkt) == roce_icrc_get(frame, pkt);
}

/*
 * Accumulated ICRC difference of several changed fields in one frame.
 * Fields may be added in any order but must not overlap; offsets are from
 * the start of the frame.  Adding in increasing offset order is cheapest.
 */
struct roce_icrc_delta {
	uint32_t acc; /* crc0 of the difference, up to byte @end */
	uint32_t end; /* one past the last difference byte seen */
};

static inline void
roce_icrc_delta_init(struct roce_icrc_delta *d)
{
	d->acc = 0;
	d->end = 0;
}

/* Account for @len bytes at @off changing from @old to @new. */
void roce_icrc_delta_add(struct roce_icrc_delta *d, uint32_t off, const void *old,
			 const void *new_bytes, uint32_t len);

/* Account for a precomputed difference: @crc0 of bytes ending at @end. */
void roce_icrc_delta_add_crc0(struct roce_icrc_delta *d, uint32_t crc0, uint32_t end);

/* The new ICRC: @icrc is the old one, @icrc_off where it sits. */
static inline uint32_t
roce_icrc_delta_apply(const struct roce_icrc_delta *d, uint32_t icrc, uint32_t icrc_off)
{
	return icrc ^ roce_crc32_shift(d->acc, icrc_off - d->end);
}

/*
 * The ICRC after the IP header was replaced by another, maybe of the other
 * version (IPv4 <-> IPv6, roce_icrc.c): @icrc the frame's ICRC with
 * the old header @old_ip (@old_len bytes, version @old_ver), @rest the bytes
 * from the end of the IP header to the ICRC, the same in both frames.  Exact
 * when @icrc was; an ICRC that was wrong stays wrong.  Headers up to 60
 * bytes (IPv4 options).
 */
uint32_t roce_icrc_ip_swap(uint32_t icrc, const uint8_t *old_ip, unsigned old_len, uint8_t old_ver,
			   const uint8_t *new_ip, unsigned new_len, uint8_t new_ver, uint32_t rest);

/*
 * Rewrite helpers for the keys a switch translates.  Each writes the new
 * value into the frame and adds the change to @d, so that one
 * roce_icrc_delta_apply() at the end seals every change of the frame.  They
 * return false, and change nothing, when the frame lacks the header.
 */

/* The R_Key to invalidate, in the IETH of a SEND with Invalidate. */
static inline bool
roce_pkt_set_ieth_rkey(const struct roce_pkt *pkt, uint8_t *frame, uint32_t rkey,
		       struct roce_icrc_delta *d)
{
	struct roce_ieth *ieth = roce_pkt_ext(pkt, frame, ROCE_EXT_IETH);
	struct roce_ieth old;

	if (!ieth)
		return false;
	old = *ieth;
	roce_ieth_set_rkey(ieth, rkey);
	roce_icrc_delta_add(d, (uint32_t)((uint8_t *)ieth - frame), &old, ieth, sizeof(*ieth));
	return true;
}

/* The virtual address and R_Key of a RETH (WRITE, READ, FLUSH, ATOMIC WRITE). */
static inline bool
roce_pkt_set_reth(const struct roce_pkt *pkt, uint8_t *frame, uint64_t va, uint32_t rkey,
		  struct roce_icrc_delta *d)
{
	struct roce_reth *reth = roce_pkt_ext(pkt, frame, ROCE_EXT_RETH);
	uint8_t old[12];

	if (!reth)
		return false;
	memcpy(old, reth, sizeof(old));
	roce_reth_set_va(reth, va);
	roce_reth_set_rkey(reth, rkey);
	roce_icrc_delta_add(d, (uint32_t)((uint8_t *)reth - frame), old, reth, sizeof(old));
	return true;
}

/* The XRC SRQ number of an XRC request's XRCETH (its reserved top byte kept). */
static inline bool
roce_pkt_set_xrc_srqn(const struct roce_pkt *pkt, uint8_t *frame, uint32_t srqn,
		      struct roce_icrc_delta *d)
{
	struct roce_xrceth *x = roce_pkt_ext(pkt, frame, ROCE_EXT_XRCETH);
	struct roce_xrceth old;

	if (!x)
		return false;
	old = *x;
	roce_xrceth_set_srq(x, srqn);
	roce_icrc_delta_add(d, (uint32_t)((uint8_t *)x - frame), &old, x, sizeof(*x));
	return true;
}

/* One changed field: the new ICRC. */
uint32_t roce_icrc_update(uint32_t icrc, uint32_t off, const void *old, const void *new_bytes,
			  uint32_t len, uint32_t icrc_off);

#endif /* ROCE_ICRC_H */
