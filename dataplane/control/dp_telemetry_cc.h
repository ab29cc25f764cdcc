/* SPDX-License-Identifier: BSD-3-Clause */
/* /roce/dcqcn (dp_telemetry_cc.c). */
#ifndef DP_TELEMETRY_CC_H
#define DP_TELEMETRY_CC_H

/* Register /roce/dcqcn: 0, or the telemetry library's error. */
int dp_dcqcn_telemetry_init(void);

#endif /* DP_TELEMETRY_CC_H */
