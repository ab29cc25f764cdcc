/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BTH opcode table.  Rows come from IBTA Vol 1 table 38 (RC 0x00-0x17,
 * UC 0x20-0x2b, UD 0x64-0x65, XRC 0xa0-0xb7) and Annex A17 (CNP 0x81), and
 * from IBTA Vol 1 release 1.5 for RC FLUSH (0x1c) and RC ATOMIC WRITE
 * (0x1d).  Reliable Datagram (0x40-0x5f) is not carried by RoCEv2 and stays
 * invalid, as do the reserved codes.
 *
 * FLUSH and ATOMIC WRITE exist here for RC only.  Linux (include/rdma/ib_pack.h
 * and the rxe driver), Wireshark and scapy define them for RC (and RD), and
 * none of them defines an XRC form; 0xbc and 0xbd stay invalid until a
 * source we can check says otherwise.
 */
#include "roce_hdr.h"
#include "roce_opcode.h"

#define P ROCE_OPF_PAYLOAD
#define RQ ROCE_OPF_REQ
#define RS ROCE_OPF_RESP
#define F ROCE_OPF_FIRST
#define M ROCE_OPF_MIDDLE
#define L ROCE_OPF_LAST
#define O ROCE_OPF_ONLY

/*
 * X(code, name, exts, flags) for the operations RC defines; UC and XRC reuse
 * them.  Responses (0x0d-0x12) carry no XRCETH in XRC, and UC has no
 * operation from 0x0c on.
 */
#define ROCE_RC_OPS(X) \
	X(0x00, SEND_FIRST, 0, P | RQ | F | ROCE_OPF_SEND) \
	X(0x01, SEND_MIDDLE, 0, P | RQ | M | ROCE_OPF_SEND) \
	X(0x02, SEND_LAST, 0, P | RQ | L | ROCE_OPF_SEND) \
	X(0x03, SEND_LAST_WITH_IMMEDIATE, ROCE_EXT_IMMDT, P | RQ | L | ROCE_OPF_SEND | ROCE_OPF_IMM) \
	X(0x04, SEND_ONLY, 0, P | RQ | O | ROCE_OPF_SEND) \
	X(0x05, SEND_ONLY_WITH_IMMEDIATE, ROCE_EXT_IMMDT, P | RQ | O | ROCE_OPF_SEND | ROCE_OPF_IMM) \
	X(0x06, RDMA_WRITE_FIRST, ROCE_EXT_RETH, P | RQ | F | ROCE_OPF_WRITE) \
	X(0x07, RDMA_WRITE_MIDDLE, 0, P | RQ | M | ROCE_OPF_WRITE) \
	X(0x08, RDMA_WRITE_LAST, 0, P | RQ | L | ROCE_OPF_WRITE) \
	X(0x09, RDMA_WRITE_LAST_WITH_IMMEDIATE, ROCE_EXT_IMMDT, P | RQ | L | ROCE_OPF_WRITE | ROCE_OPF_IMM) \
	X(0x0a, RDMA_WRITE_ONLY, ROCE_EXT_RETH, P | RQ | O | ROCE_OPF_WRITE) \
	X(0x0b, RDMA_WRITE_ONLY_WITH_IMMEDIATE, ROCE_EXT_RETH | ROCE_EXT_IMMDT, P | RQ | O | ROCE_OPF_WRITE | ROCE_OPF_IMM)
#define ROCE_RC_ONLY_OPS(X) \
	X(0x0c, RDMA_READ_REQUEST, ROCE_EXT_RETH, RQ | O | ROCE_OPF_READ) \
	X(0x13, COMPARE_SWAP, ROCE_EXT_ATMETH, RQ | O | ROCE_OPF_ATOMIC) \
	X(0x14, FETCH_ADD, ROCE_EXT_ATMETH, RQ | O | ROCE_OPF_ATOMIC) \
	X(0x16, SEND_LAST_WITH_INVALIDATE, ROCE_EXT_IETH, P | RQ | L | ROCE_OPF_SEND | ROCE_OPF_INV) \
	X(0x17, SEND_ONLY_WITH_INVALIDATE, ROCE_EXT_IETH, P | RQ | O | ROCE_OPF_SEND | ROCE_OPF_INV)
/*
 * IBTA 1.5: FLUSH carries a FETH then a RETH and no payload; ATOMIC WRITE a
 * RETH and one 8-byte word.  An ATOMIC WRITE writes memory, so it is of the
 * WRITE class for policy; FLUSH moves no data and has no class of its own
 * among SEND, WRITE, READ and ATOMIC (ROCE_OPF_FLUSH says what it is).
 */
#define ROCE_RC_15_OPS(X) \
	X(0x1c, FLUSH, ROCE_EXT_FETH | ROCE_EXT_RETH, RQ | O | ROCE_OPF_FLUSH) \
	X(0x1d, ATOMIC_WRITE, ROCE_EXT_RETH, P | RQ | O | ROCE_OPF_WRITE | ROCE_OPF_ATOMIC_WRITE)
#define ROCE_RC_RESP_OPS(X) \
	X(0x0d, RDMA_READ_RESPONSE_FIRST, ROCE_EXT_AETH, P | RS | F | ROCE_OPF_READ) \
	X(0x0e, RDMA_READ_RESPONSE_MIDDLE, 0, P | RS | M | ROCE_OPF_READ) \
	X(0x0f, RDMA_READ_RESPONSE_LAST, ROCE_EXT_AETH, P | RS | L | ROCE_OPF_READ) \
	X(0x10, RDMA_READ_RESPONSE_ONLY, ROCE_EXT_AETH, P | RS | O | ROCE_OPF_READ) \
	X(0x11, ACKNOWLEDGE, ROCE_EXT_AETH, RS | O | ROCE_OPF_ACK) \
	X(0x12, ATOMIC_ACKNOWLEDGE, ROCE_EXT_AETH | ROCE_EXT_ATMACK, RS | O | ROCE_OPF_ACK | ROCE_OPF_ATOMIC)


/* The body an opcode requires: a CNP's 16 reserved bytes, an ATOMIC WRITE's word. */
#define BODY(code) \
	((code) == ROCE_OP_RC_ATOMIC_WRITE ? ROCE_ATOMIC_WRITE_LEN : \
	 (code) == ROCE_OP_CNP ? ROCE_CNP_PAD_LEN : 0)

#define RC(code, nm, ex, fl) \
	[ROCE_TR_RC + (code)] = { "RC_" #nm, (ex), ROCE_OPF_VALID | (fl), 12 + ROCE_EXT_LEN(ex), \
				  BODY(ROCE_TR_RC + (code)) },
#define UC(code, nm, ex, fl) \
	[ROCE_TR_UC + (code)] = { "UC_" #nm, (ex), ROCE_OPF_VALID | (fl), 12 + ROCE_EXT_LEN(ex), 0 },
#define XRC_REQ(code, nm, ex, fl) \
	[ROCE_TR_XRC + (code)] = { "XRC_" #nm, (ex) | ROCE_EXT_XRCETH, ROCE_OPF_VALID | (fl), \
				   12 + ROCE_EXT_LEN((ex) | ROCE_EXT_XRCETH), 0 },
#define XRC_RESP(code, nm, ex, fl) \
	[ROCE_TR_XRC + (code)] = { "XRC_" #nm, (ex), ROCE_OPF_VALID | (fl), 12 + ROCE_EXT_LEN(ex), 0 },
#define UD(code, nm, ex, fl) \
	[ROCE_TR_UD + (code)] = { "UD_" #nm, (ex) | ROCE_EXT_DETH, ROCE_OPF_VALID | (fl), \
				  12 + ROCE_EXT_LEN((ex) | ROCE_EXT_DETH), 0 },

const struct roce_opcode_info roce_opcodes[256] = {
	ROCE_RC_OPS(RC)
	ROCE_RC_ONLY_OPS(RC)
	ROCE_RC_RESP_OPS(RC)
	ROCE_RC_15_OPS(RC)
	ROCE_RC_OPS(UC)
	ROCE_RC_OPS(XRC_REQ)
	ROCE_RC_ONLY_OPS(XRC_REQ)
	ROCE_RC_RESP_OPS(XRC_RESP)
	UD(0x04, SEND_ONLY, 0, P | RQ | O | ROCE_OPF_SEND)
	UD(0x05, SEND_ONLY_WITH_IMMEDIATE, ROCE_EXT_IMMDT, P | RQ | O | ROCE_OPF_SEND | ROCE_OPF_IMM)
	/* Annex A17.9.3: BTH, 16 reserved bytes, ICRC. */
	[ROCE_OP_CNP] = { "CNP", 0, ROCE_OPF_VALID | ROCE_OPF_CNP, 12, BODY(ROCE_OP_CNP) },
};

static const char *const ext_names[ROCE_EXT_COUNT] = {
	"rdeth", "deth", "xrceth", "feth", "reth", "atomiceth", "aeth", "atomicacketh", "immdt", "ieth",
};

const char *
roce_ext_name(enum roce_ext ext)
{
	for (unsigned i = 0; i < ROCE_EXT_COUNT; i++)
		if ((unsigned)ext == 1u << i)
			return ext_names[i];
	return "unknown";
}
