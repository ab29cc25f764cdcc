/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The path as one call (dp_loop.c), for benchmarks and the fuzzer: the
 * lcores run the same stages in dp_lcore_main().
 */
#ifndef DP_LOOP_H
#define DP_LOOP_H

#include "dp_path.h"

/*
 * Frames @pkts[0..n) (n <= DP_BURST) from port @in_port through the path up
 * to its output (stages 1 to 4): the reason each is dropped into @why (or
 * DP_DROP_NONE) and its output port into @out (DP_PORT_NONE: consumed).
 * The caller frees the dropped ones and sends the rest.  For benchmarks and
 * the fuzzer; the lcores run the same stages in dp_lcore_main().
 */
void dp_path_run(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf **pkts, uint16_t n, enum dp_drop *why,
		 uint16_t *out);

/* One frame through dp_path_run(): its drop reason, and its output port in @out_port. */
static inline enum dp_drop
dp_process_frame(struct dp_lcore *lc, uint16_t in_port, struct rte_mbuf *m, uint16_t *out_port)
{
	enum dp_drop why;

	dp_path_run(lc, in_port, &m, 1, &why, out_port);
	return why;
}

#endif /* DP_LOOP_H */
