/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process-wide state (struct dp), the drop reasons' names, and the sums
 * of the per-lcore counters that readers (telemetry, the exit summary) take.
 */
#include <string.h>

#include "dp.h"
#include "dp_xdp.h"

struct dp dp;

const char *const dp_stage_names[DP_STAGE_MAX] = {
#define DP_X_STAGE(e, n) [DP_STAGE_##e] = n,
	DP_STAGES(DP_X_STAGE)
#undef DP_X_STAGE
};

const char *const dp_drop_names[DP_DROP_MAX] = {
	[DP_DROP_NONE] = "none",
#define DP_X_PARSE(e, n, d) [DP_DROP_##e] = n,
	ROCE_PARSE_ERRORS(DP_X_PARSE)
#undef DP_X_PARSE
#define DP_X_SW(e, n) [DP_DROP_##e] = n,
	DP_SWITCH_DROPS(DP_X_SW)
#undef DP_X_SW
};

void
dp_stats_sum(struct dp_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const uint64_t *src = (const uint64_t *)&dp.lcores[l].stats;
		uint64_t *dst = (uint64_t *)sum;

		for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
			dst[i] += src[i];
	}
	/* Dropped by the XDP programs, in the driver: their counters are in BPF maps. */
	sum->drops[DP_DROP_XDP_DENIED] = dp_xdp_denied_total();
}

void
dp_tenant_stats_sum(uint32_t tenant, struct dp_tenant_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint16_t l = 0; l < dp.n_lcores; l++) {
		const struct dp_tenant_stats *t = &dp.lcores[l].tenant_stats[tenant];

		sum->egress_pkts += t->egress_pkts;
		sum->egress_bytes += t->egress_bytes;
		sum->ingress_pkts += t->ingress_pkts;
		sum->ingress_bytes += t->ingress_bytes;
		sum->drops += t->drops;
	}
}
