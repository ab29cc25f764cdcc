/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one BTH opcode table (IBTA Vol 1 table 38, and the RoCEv2 CNP of
 * Annex A17), indexed by the raw 8-bit opcode.
 *
 * Each row says which extension headers follow the BTH, whether a payload
 * follows them, and the packet's role.  Header lengths and offsets are derived
 * from the extension bitmask in the order the spec places the headers
 * (IBTA 9.2: RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt,
 * IETH; IBTA 1.5 puts the FLUSH ETH between the XRCETH and the RETH); nothing
 * here is written by hand.
 */
#ifndef ROCE_OPCODE_H
#define ROCE_OPCODE_H

#include <stdint.h>

/* Extension headers, in wire order: a lower bit always comes first. */
enum roce_ext {
	ROCE_EXT_RDETH = 1u << 0,
	ROCE_EXT_DETH = 1u << 1,
	ROCE_EXT_XRCETH = 1u << 2,
	ROCE_EXT_FETH = 1u << 3,   /* FLUSH ETH (IBTA 1.5): placement type, selectivity */
	ROCE_EXT_RETH = 1u << 4,
	ROCE_EXT_ATMETH = 1u << 5,
	ROCE_EXT_AETH = 1u << 6,
	ROCE_EXT_ATMACK = 1u << 7,
	ROCE_EXT_IMMDT = 1u << 8,
	ROCE_EXT_IETH = 1u << 9,
};
#define ROCE_EXT_COUNT 10

/* Length of the extension headers named by a mask; a constant expression. */
#define ROCE_EXT_LEN(m) \
	((((m) & ROCE_EXT_RDETH) ? 4 : 0) + (((m) & ROCE_EXT_DETH) ? 8 : 0) + \
	 (((m) & ROCE_EXT_XRCETH) ? 4 : 0) + (((m) & ROCE_EXT_FETH) ? 4 : 0) + \
	 (((m) & ROCE_EXT_RETH) ? 16 : 0) + \
	 (((m) & ROCE_EXT_ATMETH) ? 28 : 0) + (((m) & ROCE_EXT_AETH) ? 4 : 0) + \
	 (((m) & ROCE_EXT_ATMACK) ? 8 : 0) + (((m) & ROCE_EXT_IMMDT) ? 4 : 0) + \
	 (((m) & ROCE_EXT_IETH) ? 4 : 0))

/*
 * Role flags.  SEND, WRITE, READ and ATOMIC are the operation classes that
 * policy (ACLs) knows and must keep their bits (overlay/ovl_acl.h shifts
 * them); FLUSH and ATOMIC_WRITE say which IBTA 1.5 operation a request is.
 */
enum roce_opf {
	ROCE_OPF_VALID = 1u << 0,   /* RoCEv2 carries this opcode */
	ROCE_OPF_PAYLOAD = 1u << 1, /* a payload may follow the headers */
	ROCE_OPF_REQ = 1u << 2,
	ROCE_OPF_RESP = 1u << 3,
	ROCE_OPF_FIRST = 1u << 4,
	ROCE_OPF_MIDDLE = 1u << 5,
	ROCE_OPF_LAST = 1u << 6,
	ROCE_OPF_ONLY = 1u << 7,
	ROCE_OPF_ACK = 1u << 8,     /* ACKNOWLEDGE or ATOMIC ACKNOWLEDGE */
	ROCE_OPF_CNP = 1u << 9,
	ROCE_OPF_SEND = 1u << 10,   /* operation classes, for policy */
	ROCE_OPF_WRITE = 1u << 11,
	ROCE_OPF_READ = 1u << 12,
	ROCE_OPF_ATOMIC = 1u << 13,
	ROCE_OPF_IMM = 1u << 14,
	ROCE_OPF_INV = 1u << 15,       /* carries an IETH: invalidates an R_Key */
	ROCE_OPF_FLUSH = 1u << 16,     /* FLUSH: answered by an RDMA READ response */
	ROCE_OPF_ATOMIC_WRITE = 1u << 17, /* ATOMIC WRITE: 8 bytes, answered by an ACK */
};

/* Transport class: the top three bits of the opcode. */
enum roce_transport {
	ROCE_TR_RC = 0x00,
	ROCE_TR_UC = 0x20,
	ROCE_TR_RD = 0x40,
	ROCE_TR_UD = 0x60,
	ROCE_TR_CNP = 0x80,
	ROCE_TR_XRC = 0xa0,
};

struct roce_opcode_info {
	const char *name;   /* NULL for opcodes RoCEv2 does not carry */
	uint16_t exts;      /* ROCE_EXT_* */
	uint32_t flags;     /* ROCE_OPF_* */
	uint8_t hdr_len;    /* BTH plus extension headers */
	uint8_t body_len;   /* bytes the opcode requires between headers and ICRC, 0: any */
};

extern const struct roce_opcode_info roce_opcodes[256];

/* Named opcodes that the rest of the switch refers to. */
enum {
	ROCE_OP_RC_SEND_FIRST = 0x00,
	ROCE_OP_RC_SEND_MIDDLE = 0x01,
	ROCE_OP_RC_SEND_LAST = 0x02,
	ROCE_OP_RC_SEND_ONLY = 0x04,
	ROCE_OP_RC_WRITE_FIRST = 0x06,
	ROCE_OP_RC_WRITE_MIDDLE = 0x07,
	ROCE_OP_RC_WRITE_LAST = 0x08,
	ROCE_OP_RC_WRITE_ONLY = 0x0a,
	ROCE_OP_RC_WRITE_ONLY_IMM = 0x0b,
	ROCE_OP_RC_READ_REQ = 0x0c,
	ROCE_OP_RC_READ_RESP_FIRST = 0x0d,
	ROCE_OP_RC_READ_RESP_MIDDLE = 0x0e,
	ROCE_OP_RC_READ_RESP_LAST = 0x0f,
	ROCE_OP_RC_READ_RESP_ONLY = 0x10,
	ROCE_OP_RC_ACK = 0x11,
	ROCE_OP_RC_ATOMIC_ACK = 0x12,
	ROCE_OP_RC_CMP_SWAP = 0x13,
	ROCE_OP_RC_FETCH_ADD = 0x14,
	ROCE_OP_RC_SEND_LAST_INV = 0x16,
	ROCE_OP_RC_SEND_ONLY_INV = 0x17,
	ROCE_OP_RC_FLUSH = 0x1c,
	ROCE_OP_RC_ATOMIC_WRITE = 0x1d,
	ROCE_OP_UD_SEND_ONLY = 0x64,
	ROCE_OP_UD_SEND_ONLY_IMM = 0x65,
	ROCE_OP_CNP = 0x81,
	ROCE_OP_XRC_SEND_LAST_INV = 0xb6,
	ROCE_OP_XRC_SEND_ONLY_INV = 0xb7,
};

/* The payload of an ATOMIC WRITE: exactly one 64-bit word (IBTA 1.5). */
#define ROCE_ATOMIC_WRITE_LEN 8u

static inline const struct roce_opcode_info *
roce_opcode(uint8_t op)
{
	return &roce_opcodes[op];
}

static inline unsigned
roce_opcode_transport(uint8_t op)
{
	return op & 0xe0u;
}

/* Offset of extension header @ext from the start of the BTH, or 0 if absent. */
static inline unsigned
roce_ext_offset(uint16_t exts, enum roce_ext ext)
{
	if (!(exts & ext))
		return 0;
	return 12u + (unsigned)ROCE_EXT_LEN(exts & ((unsigned)ext - 1u));
}

const char *roce_ext_name(enum roce_ext ext);

#endif /* ROCE_OPCODE_H */
