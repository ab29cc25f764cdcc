/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus exporter: --metrics ADDR:PORT serves GET /metrics in the
 * text exposition format (version 0.0.4) from libmicrohttpd's own thread,
 * which runs on DPDK's control CPUs (it is started from a control thread),
 * never on a forwarding lcore's.
 *
 * It exports the switch's counters, the drop reasons (one metric with a
 * "reason" label), per-tenant counters, and, with Estats on, per-tenant
 * Estats counters and latency histograms (network round trip, host
 * response, message completion) labelled by tenant.  Per-connection series
 * only with @per_conn (--metrics-connections): their number is unbounded.
 *
 * Ownership.  A scrape runs on the exporter's thread as a reader of the
 * data plane's RCU (its own reader id, one scrape at a time): it never waits
 * for a change holding ctl_lock, and a change waits for the scrape's end
 * before it frees what the scrape reads.  It reads the lcores' counters and
 * Estats states with relaxed loads, as telemetry does.  The response is built
 * in memory and handed to the HTTP library.
 */
#ifndef DP_METRICS_H
#define DP_METRICS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Listen on @addr_port ("ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" for every
 * address) and serve /metrics.  0, or -1 with a message in @err.
 */
int dp_metrics_start(const char *addr_port, bool per_conn, char *err, size_t errlen);

/*
 * Connections the exporter holds at once (--metrics-max-clients) and the
 * seconds an idle one is kept (--metrics-idle-s); set before
 * dp_metrics_start(), 0 keeps a default.  A connection past the limit is
 * refused; expose the port only on 127.0.0.1 or an operator network.
 */
#define DP_METRICS_CONNECTIONS 512u
#define DP_METRICS_IDLE_S 5u
void dp_metrics_limits(unsigned max_conns, unsigned idle_s);

/* Stop serving and join the exporter's thread; a no-op when not started. */
void dp_metrics_stop(void);

/*
 * The exposition text of this moment, malloc'ed, into *@out (its length in
 * *@len); an RCU reader where the switch reserved one, else under ctl_lock.
 * 0 or -ENOMEM.  For the exporter and for tests.
 */
int dp_metrics_render(bool per_conn, char **out, size_t *len);

#endif /* DP_METRICS_H */
