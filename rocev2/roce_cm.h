/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Management datagrams on QP1 (IBTA Vol 1, 13.4) and the Communication
 * Manager's messages carried in them (chapter 12): what a switch needs to
 * read from an RDMA-CM exchange, which sends its MADs as UD SENDs to the GSI
 * QP (DestQP 1).  A MAD is 256 bytes: a 24-byte common header, then the
 * class's data.  Offsets below count from the start of the MAD; those of the
 * CM fields are IBTA tables 106 to 113 (REQ, MRA, REJ, REP, RTU, DREQ, DREP)
 * plus the 24-byte header.  Nothing is written: the switch forwards MADs
 * byte for byte.
 */
#ifndef ROCE_CM_H
#define ROCE_CM_H

#include <stdbool.h>
#include <stdint.h>

/* The GSI QP, to which every MAD of the CM class is sent. */
#define ROCE_GSI_QPN 1u
/* A MAD on the wire (IBTA 13.4.2): the UD SEND's payload. */
#define ROCE_MAD_LEN 256u
#define ROCE_MAD_HDR_LEN 24u
/* The common header's management class of the Communication Manager. */
#define ROCE_MAD_CLASS_CM 0x07u
/* The GSI QP's well-known Q_Key (IBTA 1.5 vol 1, 13.5.1.1). */
#define ROCE_GSI_QKEY 0x80010000u

/* The CM's attribute IDs (IBTA 12.6). */
enum roce_cm_attr {
	ROCE_CM_REQ = 0x0010,
	ROCE_CM_MRA = 0x0011,
	ROCE_CM_REJ = 0x0012,
	ROCE_CM_REP = 0x0013,
	ROCE_CM_RTU = 0x0014,
	ROCE_CM_DREQ = 0x0015,
	ROCE_CM_DREP = 0x0016,
	ROCE_CM_SIDR_REQ = 0x0017,
	ROCE_CM_SIDR_REP = 0x0018,
	ROCE_CM_LAP = 0x0019,
	ROCE_CM_APR = 0x001a,
};

/* REQ's Transport Service Type (table 106, 2 bits). */
enum roce_cm_transport { ROCE_CM_RC = 0, ROCE_CM_UC = 1, ROCE_CM_XRC = 3 };

/*
 * A CM message, as far as a switch reads it.  Fields a message does not
 * carry are zero: local_qpn and starting_psn come from REQ and REP,
 * service_id and transport from REQ, remote_qpn from DREQ (the QPN of the
 * DREQ's receiver), remote_comm_id from every message but REQ,
 * rej_reason and rej_msg from REJ.
 */
struct roce_cm {
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;           /* with the response bit (0x80) */
	uint16_t attr_id;         /* enum roce_cm_attr */
	uint64_t tid;             /* the transaction ID */
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint64_t service_id;
	uint32_t local_qpn;
	uint32_t starting_psn;
	uint32_t remote_qpn;
	uint8_t transport;        /* enum roce_cm_transport */
	uint16_t rej_reason;
	uint8_t rej_msg;          /* the message rejected: 0 REQ, 1 REP, 2 other */
};

enum roce_cm_err {
	ROCE_CM_OK = 0,
	ROCE_CM_SHORT,            /* fewer than ROCE_MAD_LEN bytes */
	ROCE_CM_NOT_CM,           /* another management class */
	ROCE_CM_BAD_VERSION,      /* a base version other than 1 */
};

/* The management class of the MAD at @mad, or -1 when @len cannot hold its header. */
int roce_mad_class(const uint8_t *mad, uint32_t len);

/*
 * Read the CM message in the MAD of @len bytes at @mad into @cm.  A message
 * of an attribute this does not know (LAP, APR, SIDR, vendor ones) parses
 * with only the header fields and local_comm_id set.  Reads only inside
 * [mad, mad + ROCE_MAD_LEN).
 */
enum roce_cm_err roce_cm_parse(const uint8_t *mad, uint32_t len, struct roce_cm *cm);

/* "REQ", "REP", ... for an attribute ID, or NULL for one it does not name. */
const char *roce_cm_attr_name(uint16_t attr_id);

#endif /* ROCE_CM_H */
