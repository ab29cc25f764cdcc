/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "roce_parse.h"

static const char *const err_names[ROCE_ERR_MAX] = {
	[ROCE_OK] = "ok",
#define ROCE_X_NAME(e, n, d) [ROCE_ERR_##e] = n,
	ROCE_PARSE_ERRORS(ROCE_X_NAME)
#undef ROCE_X_NAME
};

static const char *const err_descs[ROCE_ERR_MAX] = {
	[ROCE_OK] = "well-formed RoCEv2 frame",
#define ROCE_X_DESC(e, n, d) [ROCE_ERR_##e] = d,
	ROCE_PARSE_ERRORS(ROCE_X_DESC)
#undef ROCE_X_DESC
};

const char *
roce_parse_err_name(enum roce_parse_err e)
{
	return (unsigned)e < ROCE_ERR_MAX ? err_names[e] : "unknown";
}

const char *
roce_parse_err_desc(enum roce_parse_err e)
{
	return (unsigned)e < ROCE_ERR_MAX ? err_descs[e] : "unknown";
}

enum roce_parse_err
roce_parse(const uint8_t *frame, uint32_t len, uint16_t udp_port, struct roce_pkt *pkt)
{
	return roce_parse_inline(frame, len, udp_port, pkt);
}
