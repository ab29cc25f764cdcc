/* SPDX-License-Identifier: BSD-3-Clause */
/* CM messages in management datagrams (roce_cm.h). */
#include <stddef.h>

#include "roce_cm.h"

/* The common MAD header (IBTA 13.4.3, table 137). */
enum {
	MAD_BASE_VERSION = 0,
	MAD_CLASS = 1,
	MAD_CLASS_VERSION = 2,
	MAD_METHOD = 3,
	MAD_TID = 8,
	MAD_ATTR_ID = 16,
};

/*
 * CM fields, as byte offsets from the start of the MAD (the table's offset
 * plus the 24-byte header).  A 24-bit QPN or PSN is the top three bytes of
 * its 32-bit word.
 */
enum {
	CM_LOCAL_COMM_ID = ROCE_MAD_HDR_LEN + 0,    /* every message */
	CM_REMOTE_COMM_ID = ROCE_MAD_HDR_LEN + 4,   /* every message but REQ */
	CM_REQ_SERVICE_ID = ROCE_MAD_HDR_LEN + 8,
	CM_REQ_LOCAL_QPN = ROCE_MAD_HDR_LEN + 32,
	CM_REQ_TRANSPORT = ROCE_MAD_HDR_LEN + 43,   /* bits 2..1, below the 5-bit response timeout */
	CM_REQ_STARTING_PSN = ROCE_MAD_HDR_LEN + 44,
	CM_REJ_MSG = ROCE_MAD_HDR_LEN + 8,          /* bits 7..6 */
	CM_REJ_REASON = ROCE_MAD_HDR_LEN + 10,
	CM_REP_LOCAL_QPN = ROCE_MAD_HDR_LEN + 12,
	CM_REP_STARTING_PSN = ROCE_MAD_HDR_LEN + 20,
	CM_DREQ_REMOTE_QPN = ROCE_MAD_HDR_LEN + 8,
};

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | rd24(p + 1);
}

static uint64_t
rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

int
roce_mad_class(const uint8_t *mad, uint32_t len)
{
	return len < ROCE_MAD_HDR_LEN ? -1 : mad[MAD_CLASS];
}

enum roce_cm_err
roce_cm_parse(const uint8_t *mad, uint32_t len, struct roce_cm *cm)
{
	*cm = (struct roce_cm){ 0 };
	if (len < ROCE_MAD_LEN)
		return ROCE_CM_SHORT;
	if (mad[MAD_CLASS] != ROCE_MAD_CLASS_CM)
		return ROCE_CM_NOT_CM;
	if (mad[MAD_BASE_VERSION] != 1)
		return ROCE_CM_BAD_VERSION;
	cm->mgmt_class = mad[MAD_CLASS];
	cm->class_version = mad[MAD_CLASS_VERSION];
	cm->method = mad[MAD_METHOD];
	cm->tid = rd64(mad + MAD_TID);
	cm->attr_id = rd16(mad + MAD_ATTR_ID);
	cm->local_comm_id = rd32(mad + CM_LOCAL_COMM_ID);
	switch (cm->attr_id) {
	case ROCE_CM_REQ:
		cm->service_id = rd64(mad + CM_REQ_SERVICE_ID);
		cm->local_qpn = rd24(mad + CM_REQ_LOCAL_QPN);
		cm->transport = (mad[CM_REQ_TRANSPORT] >> 1) & 3u;
		cm->starting_psn = rd24(mad + CM_REQ_STARTING_PSN);
		break;
	case ROCE_CM_REP:
		cm->remote_comm_id = rd32(mad + CM_REMOTE_COMM_ID);
		cm->local_qpn = rd24(mad + CM_REP_LOCAL_QPN);
		cm->starting_psn = rd24(mad + CM_REP_STARTING_PSN);
		break;
	case ROCE_CM_REJ:
		cm->remote_comm_id = rd32(mad + CM_REMOTE_COMM_ID);
		cm->rej_msg = mad[CM_REJ_MSG] >> 6;
		cm->rej_reason = rd16(mad + CM_REJ_REASON);
		break;
	case ROCE_CM_DREQ:
		cm->remote_comm_id = rd32(mad + CM_REMOTE_COMM_ID);
		cm->remote_qpn = rd24(mad + CM_DREQ_REMOTE_QPN);
		break;
	case ROCE_CM_MRA:
	case ROCE_CM_RTU:
	case ROCE_CM_DREP:
	case ROCE_CM_LAP:
	case ROCE_CM_APR:
		cm->remote_comm_id = rd32(mad + CM_REMOTE_COMM_ID);
		break;
	default:
		break;
	}
	return ROCE_CM_OK;
}

const char *
roce_cm_attr_name(uint16_t attr_id)
{
	static const char *const names[] = {
		[ROCE_CM_REQ - ROCE_CM_REQ] = "REQ",
		[ROCE_CM_MRA - ROCE_CM_REQ] = "MRA",
		[ROCE_CM_REJ - ROCE_CM_REQ] = "REJ",
		[ROCE_CM_REP - ROCE_CM_REQ] = "REP",
		[ROCE_CM_RTU - ROCE_CM_REQ] = "RTU",
		[ROCE_CM_DREQ - ROCE_CM_REQ] = "DREQ",
		[ROCE_CM_DREP - ROCE_CM_REQ] = "DREP",
		[ROCE_CM_SIDR_REQ - ROCE_CM_REQ] = "SIDR_REQ",
		[ROCE_CM_SIDR_REP - ROCE_CM_REQ] = "SIDR_REP",
		[ROCE_CM_LAP - ROCE_CM_REQ] = "LAP",
		[ROCE_CM_APR - ROCE_CM_REQ] = "APR",
	};

	if (attr_id < ROCE_CM_REQ || attr_id > ROCE_CM_APR)
		return NULL;
	return names[attr_id - ROCE_CM_REQ];
}
