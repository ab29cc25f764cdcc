/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 transport headers (IBTA Vol 1 chapter 9, Annex A17) as exact,
 * big-endian structs, with accessors for the 24-bit and sub-byte fields.
 *
 * Every multi-byte field is stored in network byte order.  64-bit quantities
 * (virtual addresses, atomic operands) are split into hi and lo words, as the
 * spec does not align them, and are reached through accessors.
 */
#ifndef ROCE_HDR_H
#define ROCE_HDR_H

#include <arpa/inet.h>
#include <assert.h>
#include <stdint.h>

#define ROCE_UDP_PORT 4791

/*
 * Headers sit wherever the frame puts them (the BTH of an untagged IPv4
 * frame starts at byte 42), so the structs are packed: the compiler emits
 * unaligned-safe loads and the sizes below are exact.
 */
#define ROCE_PACKED __attribute__((packed))

/* Base Transport Header. */
struct roce_bth {
	uint8_t opcode;
	uint8_t flags;    /* SE(1) M(1) PadCnt(2) TVer(4) */
	uint16_t pkey;
	uint32_t fb_qpn;  /* FECN(1) BECN(1) resv(6) DestQP(24) */
	uint32_t a_psn;   /* AckReq(1) resv(7) PSN(24) */
} ROCE_PACKED;
static_assert(sizeof(struct roce_bth) == 12, "BTH is 12 bytes");

/* Reliable Datagram ETH (not carried by RoCEv2; sized for the table). */
struct roce_rdeth {
	uint32_t eecnxt; /* resv(8) EE-Context(24) */
} ROCE_PACKED;
static_assert(sizeof(struct roce_rdeth) == 4, "RDETH is 4 bytes");

/* Datagram ETH (UD). */
struct roce_deth {
	uint32_t qkey;
	uint32_t srcqp; /* resv(8) SrcQP(24) */
} ROCE_PACKED;
static_assert(sizeof(struct roce_deth) == 8, "DETH is 8 bytes");

/* XRC ETH. */
struct roce_xrceth {
	uint32_t xrcsrq; /* resv(8) XRCSRQ(24) */
} ROCE_PACKED;
static_assert(sizeof(struct roce_xrceth) == 4, "XRCETH is 4 bytes");

/*
 * FLUSH ETH (IBTA 1.5, FLUSH requests): one word, bits 3-0 the placement
 * type, bits 5-4 the selectivity level, the rest reserved.
 */
struct roce_feth {
	uint32_t bits;
} ROCE_PACKED;
static_assert(sizeof(struct roce_feth) == 4, "FETH is 4 bytes");

#define ROCE_FETH_PLT_MASK 0x0000000fu
#define ROCE_FETH_SEL_SHIFT 4
#define ROCE_FETH_SEL_MASK 0x00000030u

/* RDMA ETH. */
struct roce_reth {
	uint32_t va_hi;
	uint32_t va_lo;
	uint32_t rkey;
	uint32_t dmalen;
} ROCE_PACKED;
static_assert(sizeof(struct roce_reth) == 16, "RETH is 16 bytes");

/* Atomic ETH. */
struct roce_atmeth {
	uint32_t va_hi;
	uint32_t va_lo;
	uint32_t rkey;
	uint32_t swap_hi;
	uint32_t swap_lo;
	uint32_t cmp_hi;
	uint32_t cmp_lo;
} ROCE_PACKED;
static_assert(sizeof(struct roce_atmeth) == 28, "AtomicETH is 28 bytes");

/* ACK ETH. */
struct roce_aeth {
	uint32_t syn_msn; /* Syndrome(8) MSN(24) */
} ROCE_PACKED;
static_assert(sizeof(struct roce_aeth) == 4, "AETH is 4 bytes");

/* Atomic ACK ETH. */
struct roce_atmack {
	uint32_t orig_hi;
	uint32_t orig_lo;
} ROCE_PACKED;
static_assert(sizeof(struct roce_atmack) == 8, "AtomicAckETH is 8 bytes");

/*
 * Immediate data and Invalidate ETH: one 32-bit word each.  The IETH of a
 * SEND with Invalidate holds the R_Key the responder is to invalidate.
 */
struct roce_immdt {
	uint32_t imm;
} ROCE_PACKED;
static_assert(sizeof(struct roce_immdt) == 4, "ImmDt is 4 bytes");

struct roce_ieth {
	uint32_t rkey;
} ROCE_PACKED;
static_assert(sizeof(struct roce_ieth) == 4, "IETH is 4 bytes");

#define ROCE_BTH_LEN 12u
#define ROCE_ETH_MIN_LEN 60u  /* shortest Ethernet frame without FCS; shorter ones are padded */
#define ROCE_ICRC_LEN 4u
#define ROCE_CNP_PAD_LEN 16u
#define ROCE_QPN_MASK 0x00ffffffu
#define ROCE_PSN_MASK 0x00ffffffu
#define ROCE_QPN_GSI 1u

/* AETH syndromes (IBTA 9.7.5.2.1): the top three bits say which kind. */
#define ROCE_AETH_ACK 0x00u
#define ROCE_AETH_RNR_NAK 0x20u
#define ROCE_AETH_NAK 0x60u
#define ROCE_AETH_NAK_PSN_SEQ_ERR 0x60u
#define ROCE_AETH_NAK_INV_REQ 0x61u
#define ROCE_AETH_NAK_REM_ACC_ERR 0x62u
#define ROCE_AETH_NAK_REM_OP_ERR 0x63u
#define ROCE_AETH_NAK_INV_RD_REQ 0x64u

/* 24-bit helpers over a big-endian word whose top byte holds other bits. */
static inline uint32_t
roce_be24_get(uint32_t be_word)
{
	return ntohl(be_word) & 0x00ffffffu;
}

static inline uint32_t
roce_be24_set(uint32_t be_word, uint32_t v)
{
	return htonl((ntohl(be_word) & 0xff000000u) | (v & 0x00ffffffu));
}

static inline uint64_t
roce_be64_get(uint32_t hi, uint32_t lo)
{
	return ((uint64_t)ntohl(hi) << 32) | ntohl(lo);
}

/* BTH accessors. */
static inline uint32_t roce_bth_dqpn(const struct roce_bth *b) { return roce_be24_get(b->fb_qpn); }
static inline void roce_bth_set_dqpn(struct roce_bth *b, uint32_t q) { b->fb_qpn = roce_be24_set(b->fb_qpn, q); }
static inline uint32_t roce_bth_psn(const struct roce_bth *b) { return roce_be24_get(b->a_psn); }
static inline void roce_bth_set_psn(struct roce_bth *b, uint32_t p) { b->a_psn = roce_be24_set(b->a_psn, p); }
static inline unsigned roce_bth_se(const struct roce_bth *b) { return b->flags >> 7; }
static inline unsigned roce_bth_mig(const struct roce_bth *b) { return (b->flags >> 6) & 1u; }
static inline unsigned roce_bth_pad(const struct roce_bth *b) { return (b->flags >> 4) & 3u; }
static inline unsigned roce_bth_tver(const struct roce_bth *b) { return b->flags & 0xfu; }
static inline uint16_t roce_bth_pkey(const struct roce_bth *b) { return ntohs(b->pkey); }
static inline unsigned roce_bth_fecn(const struct roce_bth *b) { return ntohl(b->fb_qpn) >> 31; }
static inline unsigned roce_bth_becn(const struct roce_bth *b) { return (ntohl(b->fb_qpn) >> 30) & 1u; }
static inline unsigned roce_bth_ackreq(const struct roce_bth *b) { return ntohl(b->a_psn) >> 31; }

static inline void
roce_bth_set_flags(struct roce_bth *b, unsigned se, unsigned mig, unsigned pad, unsigned tver)
{
	b->flags = (uint8_t)(((se & 1u) << 7) | ((mig & 1u) << 6) | ((pad & 3u) << 4) | (tver & 0xfu));
}

static inline void
roce_bth_set_fecn_becn(struct roce_bth *b, unsigned fecn, unsigned becn)
{
	uint32_t w = ntohl(b->fb_qpn) & 0x3fffffffu;

	b->fb_qpn = htonl(w | ((fecn & 1u) << 31) | ((becn & 1u) << 30));
}

static inline void
roce_bth_set_ackreq(struct roce_bth *b, unsigned a)
{
	b->a_psn = htonl((ntohl(b->a_psn) & 0x7fffffffu) | ((a & 1u) << 31));
}

/* Extension header accessors. */
static inline uint32_t roce_deth_qkey(const struct roce_deth *d) { return ntohl(d->qkey); }
static inline uint32_t roce_deth_srcqp(const struct roce_deth *d) { return roce_be24_get(d->srcqp); }
static inline void roce_deth_set_srcqp(struct roce_deth *d, uint32_t q) { d->srcqp = roce_be24_set(d->srcqp, q); }
static inline uint32_t roce_xrceth_srq(const struct roce_xrceth *x) { return roce_be24_get(x->xrcsrq); }
static inline void roce_xrceth_set_srq(struct roce_xrceth *x, uint32_t s) { x->xrcsrq = roce_be24_set(x->xrcsrq, s); }
static inline unsigned roce_feth_plt(const struct roce_feth *f) { return ntohl(f->bits) & ROCE_FETH_PLT_MASK; }
static inline unsigned
roce_feth_sel(const struct roce_feth *f)
{
	return (ntohl(f->bits) & ROCE_FETH_SEL_MASK) >> ROCE_FETH_SEL_SHIFT;
}
static inline uint64_t roce_reth_va(const struct roce_reth *r) { return roce_be64_get(r->va_hi, r->va_lo); }
static inline uint32_t roce_reth_rkey(const struct roce_reth *r) { return ntohl(r->rkey); }
static inline void roce_reth_set_rkey(struct roce_reth *r, uint32_t k) { r->rkey = htonl(k); }
static inline uint32_t roce_ieth_rkey(const struct roce_ieth *i) { return ntohl(i->rkey); }
static inline void roce_ieth_set_rkey(struct roce_ieth *i, uint32_t k) { i->rkey = htonl(k); }
static inline uint32_t roce_reth_dmalen(const struct roce_reth *r) { return ntohl(r->dmalen); }
static inline uint64_t roce_atmeth_va(const struct roce_atmeth *a) { return roce_be64_get(a->va_hi, a->va_lo); }
static inline uint32_t roce_atmeth_rkey(const struct roce_atmeth *a) { return ntohl(a->rkey); }
static inline void roce_atmeth_set_rkey(struct roce_atmeth *a, uint32_t k) { a->rkey = htonl(k); }
static inline uint64_t roce_atmeth_swap(const struct roce_atmeth *a) { return roce_be64_get(a->swap_hi, a->swap_lo); }
static inline uint64_t roce_atmeth_cmp(const struct roce_atmeth *a) { return roce_be64_get(a->cmp_hi, a->cmp_lo); }
static inline unsigned roce_aeth_syndrome(const struct roce_aeth *a) { return ntohl(a->syn_msn) >> 24; }
static inline uint32_t roce_aeth_msn(const struct roce_aeth *a) { return roce_be24_get(a->syn_msn); }
static inline uint64_t roce_atmack_orig(const struct roce_atmack *a) { return roce_be64_get(a->orig_hi, a->orig_lo); }

static inline void
roce_reth_set_va(struct roce_reth *r, uint64_t va)
{
	r->va_hi = htonl((uint32_t)(va >> 32));
	r->va_lo = htonl((uint32_t)va);
}

static inline void
roce_atmeth_set_va(struct roce_atmeth *a, uint64_t va)
{
	a->va_hi = htonl((uint32_t)(va >> 32));
	a->va_lo = htonl((uint32_t)va);
}

/* Set a FETH: placement type @plt (4 bits) and selectivity level @sel (2 bits). */
static inline void
roce_feth_set(struct roce_feth *f, unsigned plt, unsigned sel)
{
	f->bits = htonl((plt & ROCE_FETH_PLT_MASK) | ((sel << ROCE_FETH_SEL_SHIFT) & ROCE_FETH_SEL_MASK));
}

static inline void
roce_aeth_set(struct roce_aeth *a, unsigned syndrome, uint32_t msn)
{
	a->syn_msn = htonl(((uint32_t)syndrome << 24) | (msn & 0x00ffffffu));
}

/* 24-bit PSN arithmetic (IBTA 9.7.1): a - b in the signed 24-bit window. */
static inline int32_t
roce_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & ROCE_PSN_MASK;

	return (d & 0x00800000u) ? (int32_t)d - 0x01000000 : (int32_t)d;
}

#endif /* ROCE_HDR_H */
