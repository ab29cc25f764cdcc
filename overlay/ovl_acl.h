/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection policy and tracking, pure (no EAL, no mbufs):
 *
 *  - ACL evaluation: a tenant's "acls" entry (config/cfg.h) against the two
 *    directions of a connection, once per connection (ovl_acl_conn()),
 *    so that the data plane tests one bit mask per message; and against a
 *    single UD frame (ovl_acl_decide()).
 *  - Outstanding-request tracking: which requests of one endpoint the switch
 *    forwarded and has not seen acknowledged, with 24-bit PSN arithmetic, so
 *    that a revocation can NAK the oldest of them (ovl_track_*()).
 *  - The NAK itself: an RC ACKNOWLEDGE with AETH syndrome Remote Access
 *    Error, addressed as if the responder had sent it (ovl_nak_*()).
 *
 * Operation classes are bits: CFG_OP_SEND, _WRITE, _READ and _ATOMIC. The
 * opcode table flags the same classes (ROCE_OPF_SEND ...), in the same
 * order, so a frame's class is one shift of its flags.
 */
#ifndef OVL_ACL_H
#define OVL_ACL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "rocev2.h"

#define OVL_OPC_SHIFT 10
static_assert(ROCE_OPF_SEND >> OVL_OPC_SHIFT == CFG_OP_SEND, "op class bits");
static_assert(ROCE_OPF_WRITE >> OVL_OPC_SHIFT == CFG_OP_WRITE, "op class bits");
static_assert(ROCE_OPF_READ >> OVL_OPC_SHIFT == CFG_OP_READ, "op class bits");
static_assert(ROCE_OPF_ATOMIC >> OVL_OPC_SHIFT == CFG_OP_ATOMIC, "op class bits");

/*
 * The operation class of a request, from its opcode flags
 * (roce_opcodes[].flags).  A FLUSH, which makes earlier WRITEs durable, is
 * policed as a write.
 */
static inline unsigned
ovl_op_class(uint32_t opf)
{
	return ((opf >> OVL_OPC_SHIFT) & CFG_OP_ALL) | ((opf & ROCE_OPF_FLUSH) ? CFG_OP_WRITE : 0);
}

/* The classes a QP type can carry: RC and XRC all four, UC send and write, UD send. */
static inline unsigned
ovl_type_ops(unsigned qp_type)
{
	return qp_type == CFG_QP_RC || cfg_qp_is_xrc((int)qp_type) ? CFG_OP_ALL :
	       qp_type == CFG_QP_UC ? CFG_OP_SEND | CFG_OP_WRITE : CFG_OP_SEND;
}

/* Directions of a connection (ovl_conn): L's requests to R, and R's to L. */
enum { OVL_DIR_L2R = 0, OVL_DIR_R2L = 1 };

/* The "rule" of a verdict that the tenant's default (or the lack of an ACL) gave. */
#define OVL_ACL_DEFAULT 0xffffffffu

/*
 * Does @acl allow a request of class @op (one CFG_OP_* bit) on a QP of ACL
 * type @qp_type (cfg_acl_type()) from @src to @dst (both of IP version @ver, 4 or 16 bytes)?
 * The first rule that matches decides, else the default; a NULL @acl allows
 * everything.  *@rule (if not NULL) receives the deciding rule's index or
 * OVL_ACL_DEFAULT.
 */
bool ovl_acl_decide(const struct cfg_acl *acl, uint8_t ver, const uint8_t *src, const uint8_t *dst,
		    unsigned qp_type, unsigned op, uint32_t *rule);

/* True if @ip (of version @ver) is inside the prefix @p. */
bool ovl_cidr_match(const struct cfg_cidr *p, uint8_t ver, const uint8_t *ip);

/*
 * Frames whose PSNs and AETHs are tracked (outstanding requests, answers'
 * MSNs, Estats): those of the reliable connected transports, RC and XRC.
 */
static inline bool
ovl_track_opcode(uint8_t opcode)
{
	unsigned tr = roce_opcode_transport(opcode);

	return tr == ROCE_TR_RC || tr == ROCE_TR_XRC;
}

/* A NAK's opcode toward a requester whose connection's L is of @l_type: XRC's ACKNOWLEDGE or RC's. */
static inline uint8_t
ovl_nak_opcode(unsigned l_type)
{
	return cfg_qp_is_xrc((int)l_type) ? (uint8_t)(ROCE_TR_XRC | ROCE_OP_RC_ACK) : ROCE_OP_RC_ACK;
}

/*
 * Outstanding requests, per connection and direction.  The requester's half
 * is written only by the lcore that forwards the requests, the responder's
 * half only by the lcore that forwards the responses; either may read the
 * other's half at any time (every field is one aligned 32-bit word, stored
 * and loaded atomically).
 */
struct ovl_req_track {
	uint32_t first;         /* oldest request PSN of the current outstanding run */
	uint32_t newest;        /* newest request PSN forwarded */
	uint8_t valid;          /* 1 once a request has been forwarded */
	uint8_t dscp;           /* the DSCP and P_Key of the latest request forwarded, */
	uint16_t pkey;          /* for a NAK sent in the responder's place (revocation) */
};

#define OVL_ACK_PSN 1u          /* ovl_ack_track.acked holds a PSN */
#define OVL_ACK_MSN 2u          /* ovl_ack_track.msn holds an MSN */

struct ovl_ack_track {
	uint32_t acked;         /* every request PSN up to this one is answered */
	uint32_t msn;           /* MSN of the latest AETH */
	uint32_t valid;         /* OVL_ACK_* */
};

#define OVL_LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define OVL_ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/*
 * Are requests of @rq outstanding, that is forwarded and not answered by
 * @ak?  If so *@oldest receives the PSN of the oldest of them: the one after
 * the last answered, or the first of the run when nothing of it is answered.
 * PSNs compare in the 24-bit window of roce_psn_diff().
 */
static inline bool
ovl_track_oldest(const struct ovl_req_track *rq, const struct ovl_ack_track *ak, uint32_t *oldest)
{
	uint32_t first = OVL_LD(&rq->first), newest = OVL_LD(&rq->newest);
	uint32_t acked = OVL_LD(&ak->acked);

	if (!OVL_LD(&rq->valid))
		return false;
	if (OVL_LD(&ak->valid) & OVL_ACK_PSN) {
		uint32_t next = (acked + 1) & ROCE_PSN_MASK;

		if (roce_psn_diff(newest, acked) <= 0)
			return false;
		if (roce_psn_diff(next, first) > 0) {
			*oldest = next;
			return true;
		}
	}
	*oldest = first;
	return true;
}

/* How far @first may fall behind @newest before a request moves it up. */
#define OVL_TRACK_REFRESH (1u << 22)

/*
 * A request with @psn was forwarded.  The first one starts a run.  Later
 * ones move @newest (a retransmission of an older PSN leaves it alone) and,
 * once @first is OVL_TRACK_REFRESH behind, move @first up to the oldest
 * request still outstanding (or start a new run if none is): @first so
 * stays inside the 24-bit window of roce_psn_diff() however long the
 * requester keeps its pipe full.  Only then is @ak read, so the lcore that
 * forwards the requests does not touch the answers' cache line per packet.
 */
static inline void
ovl_track_request(struct ovl_req_track *rq, const struct ovl_ack_track *ak, uint32_t psn)
{
	uint32_t oldest;

	psn &= ROCE_PSN_MASK;
	if (!OVL_LD(&rq->valid)) {
		OVL_ST(&rq->first, psn);
		OVL_ST(&rq->newest, psn);
		OVL_ST(&rq->valid, 1u);
		return;
	}
	if (roce_psn_diff(psn, OVL_LD(&rq->newest)) <= 0)
		return;
	OVL_ST(&rq->newest, psn);
	if ((uint32_t)roce_psn_diff(psn, OVL_LD(&rq->first)) >= OVL_TRACK_REFRESH)
		OVL_ST(&rq->first, ovl_track_oldest(rq, ak, &oldest) ? oldest : psn);
}

/*
 * A response with @psn was forwarded toward the requester: an ACK, NAK or
 * RNR NAK (@has_aeth), a READ response, or an atomic ACK.  An ACK, a READ
 * response and an atomic ACK answer every request up to @psn; a NAK or an
 * RNR NAK (syndrome 0x20 to 0x7f) only those before it.  An older answer
 * never moves the mark back.
 */
static inline void
ovl_track_response(struct ovl_ack_track *ak, uint32_t psn, bool has_aeth, unsigned syndrome,
		   uint32_t msn)
{
	uint32_t v = OVL_LD(&ak->valid), upto = psn & ROCE_PSN_MASK;

	if (has_aeth) {
		if ((syndrome & 0x60u) != ROCE_AETH_ACK)
			upto = (psn - 1) & ROCE_PSN_MASK;
		OVL_ST(&ak->msn, msn & 0x00ffffffu);
		v |= OVL_ACK_MSN;
	}
	if (!(v & OVL_ACK_PSN) || roce_psn_diff(upto, OVL_LD(&ak->acked)) > 0)
		OVL_ST(&ak->acked, upto);
	OVL_ST(&ak->valid, v | OVL_ACK_PSN);
}

/* Forget the outstanding requests of @rq (its writer only): after a NAK. */
static inline void
ovl_track_clear(struct ovl_req_track *rq)
{
	OVL_ST(&rq->valid, 0u);
}

/* The MSN for a NAK: the latest seen from the responder, 0 if none. */
static inline uint32_t
ovl_track_msn(const struct ovl_ack_track *ak)
{
	return (OVL_LD(&ak->valid) & OVL_ACK_MSN) ? OVL_LD(&ak->msn) : 0;
}

/*
 * A NAK's frame, but for its PSN and MSN: RC ACKNOWLEDGE (0x11) to DestQP
 * @dqpn from @src to @dst (IP version @ver), between the MACs @eth (the
 * destination then the source, as ovl_rewrite.eth holds them).  UDP source
 * port 0xc000 | (DestQP & 0x3fff), TTL 64, DSCP 0, P_Key 0xffff.
 */
void ovl_nak_spec(struct roce_frame_spec *s, const uint8_t eth[12], uint8_t ver, const uint8_t *src,
		  const uint8_t *dst, uint32_t dqpn);

/*
 * Build the NAK of @spec for request @psn with @msn into @buf: AETH
 * syndrome Remote Access Error (ROCE_AETH_NAK_REM_ACC_ERR), valid ICRC and
 * IPv4 checksum.  Returns the frame length, or 0 if @cap is too small.
 */
size_t ovl_nak_build(uint8_t *buf, size_t cap, const struct roce_frame_spec *spec, uint32_t psn,
		     uint32_t msn);

#endif /* OVL_ACL_H */
