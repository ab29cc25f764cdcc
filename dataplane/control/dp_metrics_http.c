/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus exporter's HTTP side on libmicrohttpd (dp_metrics.h): its
 * thread on the control CPUs, the connection limits, and each scrape
 * answered with dp_metrics_render()'s text.  Without libmicrohttpd
 * --metrics is refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#ifdef DP_HAVE_METRICS
#include <microhttpd.h>
#include <rte_lcore.h>
#endif

#include "dp.h"
#include "dp_metrics.h"
#ifdef DP_HAVE_METRICS

static struct {
	struct MHD_Daemon *d;
	bool per_conn;
	unsigned max_conns, idle_s;
} mx = { .max_conns = DP_METRICS_CONNECTIONS, .idle_s = DP_METRICS_IDLE_S };

void
dp_metrics_limits(unsigned max_conns, unsigned idle_s)
{
	if (max_conns)
		mx.max_conns = max_conns;
	if (idle_s)
		mx.idle_s = idle_s;
}

static enum MHD_Result
answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
       const char *upload, size_t *upload_size, void **con_cls)
{
	static const char not_found[] = "not found: try /metrics\n";
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *text;
	size_t len;
	unsigned code = MHD_HTTP_OK;

	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return MHD_NO;
	if (strcmp(url, "/metrics")) {
		r = MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found, MHD_RESPMEM_PERSISTENT);
		code = MHD_HTTP_NOT_FOUND;
	} else if (dp_metrics_render(mx.per_conn, &text, &len) == 0) {
		r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
		if (r)
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
		else
			free(text);
	} else {
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* "ADDR:PORT", "[V6]:PORT" or ":PORT" into @ss; 0 or -1. */
static int
addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[64];
	const char *colon;
	unsigned long port;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
			return -1;
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = 0;
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return -1;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = 0;
	}
	port = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port == 0 || port > 65535)
		return -1;
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -1;
		*sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (*host && inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -1;
		if (!*host)
			a->sin_addr.s_addr = htonl(INADDR_ANY);
		*sl = sizeof(*a);
	}
	return 0;
}

/* What the daemon is started with, from a control thread (start_main()). */
struct start_arg {
	unsigned flags;
	uint16_t port;
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	int err;
};

/*
 * The daemon's own thread inherits the affinity of the thread that starts
 * it.  Started from the main lcore, it would share a forwarding lcore's CPU
 * and take its time from forwarding at every scrape; started from a DPDK
 * control thread, it runs on the control CPUs, as every thread of the switch
 * but the lcores does.
 */
static void *
start_main(void *arg)
{
	struct start_arg *s = arg;

	s->d = MHD_start_daemon(s->flags, s->port, NULL, NULL, answer, NULL, MHD_OPTION_SOCK_ADDR,
				(struct sockaddr *)&s->ss, MHD_OPTION_CONNECTION_LIMIT, mx.max_conns,
				MHD_OPTION_CONNECTION_TIMEOUT, mx.idle_s, MHD_OPTION_END);
	s->err = errno;
	return NULL;
}

int
dp_metrics_start(const char *addr_port, bool per_conn, char *err, size_t errlen)
{
	/*
	 * epoll where the library has it: hundreds of idle or slow connections
	 * cost a scrape nothing (select() would cap them at FD_SETSIZE).
	 */
	struct start_arg s = {
		.flags = (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL_INTERNAL_THREAD :
			  MHD_USE_POLL_INTERNAL_THREAD) | MHD_USE_ERROR_LOG,
	};
	struct sockaddr_storage ss;
	socklen_t sl;
	pthread_t tid;
	unsigned flags = 0;
	uint16_t port;

	if (addr_parse(addr_port, &ss, &sl) < 0) {
		snprintf(err, errlen, "--metrics %s: want ADDR:PORT, [V6ADDR]:PORT or :PORT", addr_port);
		return -1;
	}
	if (ss.ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else {
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}
	mx.per_conn = per_conn;
	s.flags |= flags;
	s.port = port;
	s.ss = ss;
	if (rte_ctrl_thread_create(&tid, "roce-metrics", NULL, start_main, &s) != 0) {
		snprintf(err, errlen, "--metrics %s: no control thread to start the exporter from", addr_port);
		return -1;
	}
	pthread_join(tid, NULL);
	mx.d = s.d;
	if (!mx.d) {
		snprintf(err, errlen, "--metrics %s: cannot listen (%s)", addr_port, strerror(s.err));
		return -1;
	}
	return 0;
}

void
dp_metrics_stop(void)
{
	if (mx.d)
		MHD_stop_daemon(mx.d);
	mx.d = NULL;
}
#else /* !DP_HAVE_METRICS: built without libmicrohttpd (meson option metrics) */

int
dp_metrics_start(const char *addr_port, bool per_conn, char *err, size_t errlen)
{
	(void)per_conn;
	snprintf(err, errlen, "--metrics %s: this build has no exporter (libmicrohttpd was not found; meson option metrics)",
		 addr_port);
	return -1;
}

void
dp_metrics_limits(unsigned max_conns, unsigned idle_s)
{
	(void)max_conns;
	(void)idle_s;
}

void
dp_metrics_stop(void)
{
}
#endif /* DP_HAVE_METRICS */
