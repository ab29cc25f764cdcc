/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket (dp_ctl_sock.h, docs/control.md): newline-delimited JSON
 * requests on a Unix stream socket, one JSON line answered per request, in
 * order.  One control thread of its own polls the listening socket and its
 * clients; requests run one at a time (each takes dp.ctl_lock), so the
 * answers of a client come in the order of its requests and a batch is
 * answered only once it is in force.
 *
 * No client can hold the others: answers are queued and sent without
 * blocking (a client reads nothing more of its requests until it has taken
 * its answers), a client idle for the idle time is closed, the longest idle
 * one makes room when all places are taken, and the bytes of requests held
 * for all clients together are bounded (a client that would pass the bound
 * is refused and closed).  Buffers shrink back once a large request is done.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "cfg_json.h"
#include "dp_ctl_sock.h"
#include "dp_delta.h"

#define MAX_CLIENTS 32
#define MAX_LINE (256u << 20) /* a request longer than this is refused and its client closed */
#define KEEP_BUF (1u << 20)   /* a buffer larger than this is given back once empty */

/* Growing answer text. */
struct out {
	char *s;
	size_t n, cap;
};

struct client {
	int fd;
	char *buf;                /* requests read, not yet answered */
	size_t len, cap;
	struct out out;           /* answers not yet sent: out.s[off, out.n) */
	size_t off;
	uint64_t last_ms;         /* the last request read or answer sent */
};

static struct {
	int lfd;
	char *path;
	pthread_t tid;
	bool running;
	volatile bool stop;
	struct client cl[MAX_CLIENTS];
	size_t held;              /* request bytes buffered for all clients */
	uint64_t idle_ms;         /* --control-idle-s */
	size_t max_bytes;         /* --control-max-bytes */
} cs = { .lfd = -1, .idle_ms = DP_CTL_IDLE_S * 1000ull, .max_bytes = DP_CTL_MAX_BYTES };

void
dp_ctl_sock_limits(uint32_t idle_s, uint64_t max_bytes)
{
	if (idle_s)
		cs.idle_ms = idle_s * 1000ull;
	if (max_bytes)
		cs.max_bytes = (size_t)max_bytes;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void
out_add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(o->s ? o->s + o->n : NULL, o->s ? o->cap - o->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (o->s && o->n + (size_t)k < o->cap) {
			o->n += (size_t)k;
			return;
		}
		size_t cap = (o->cap ? o->cap : 256) * 2 + (size_t)k;
		char *s = realloc(o->s, cap);

		if (!s)
			return;
		o->s = s;
		o->cap = cap;
	}
}

/* @s as a JSON string. */
static void
out_str(struct out *o, const char *s)
{
	out_add(o, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			out_add(o, "\\%c", ch);
		else if (ch < 0x20)
			out_add(o, "\\u%04x", ch);
		else
			out_add(o, "%c", ch);
	}
	out_add(o, "\"");
}

/* The request's "id", echoed first when it is a number or a string. */
static void
out_begin(struct out *o, const struct cfg_jv *root)
{
	const struct cfg_jv *id = cfg_j_is_obj(root) ? cfg_j_get(root, "id") : NULL;

	out_add(o, "{");
	if (cfg_j_is_int(id))
		out_add(o, "\"id\": %s%" PRIu64 ", ", id->neg ? "-" : "", id->v.u);
	else if (cfg_j_is_str(id)) {
		out_add(o, "\"id\": ");
		out_str(o, id->v.s);
		out_add(o, ", ");
	}
}

static void
out_errors(struct out *o, const struct cfg_errors *e)
{
	out_add(o, "\"result\": \"rejected\", \"errors\": [");
	for (uint32_t i = 0; i < e->n; i++) {
		out_add(o, "%s", i ? ", " : "");
		out_str(o, e->msg[i]);
	}
	out_add(o, "]}");
}

static void
op_apply(struct out *o, const struct cfg_jv *root)
{
	static const char *const kinds[CFG_DK_N] = { "tenants", "endpoints", "qps", "mrs" };
	struct dp_delta_report rep;

	if (dp_delta_apply_root(root, &rep) < 0) {
		out_errors(o, &rep.rr.errs);
		dp_delta_report_free(&rep);
		return;
	}
	out_add(o, "\"result\": \"applied\", \"put\": {");
	for (int k = 0; k < CFG_DK_N; k++)
		out_add(o, "%s\"%s\": %u", k ? ", " : "", kinds[k], rep.sum.put[k]);
	out_add(o, "}, \"deleted\": {");
	for (int k = 0; k < CFG_DK_N; k++)
		out_add(o, "%s\"%s\": %u", k ? ", " : "", kinds[k], rep.sum.deleted[k]);
	out_add(o, "}, \"connections\": {\"added\": %u, \"removed\": %u, \"changed\": %u, \"kept\": %u}, "
		"\"tenants\": {\"added\": %u, \"removed\": %u}, \"qps\": %u, \"mrs\": %u, "
		"\"check_us\": %.1f, \"build_us\": %.1f, \"publish_us\": %.1f, \"incremental\": %s}",
		rep.rr.conns_added, rep.rr.conns_removed, rep.rr.conns_changed, rep.rr.conns_kept,
		rep.rr.tenants_added, rep.rr.tenants_removed, rep.rr.qps_after, rep.rr.mrs_after, rep.check_us,
		rep.build_us, rep.publish_us, rep.rr.incremental ? "true" : "false");
	dp_delta_report_free(&rep);
}

static void
op_reload(struct out *o, const struct cfg_jv *root)
{
	const struct cfg_jv *p = cfg_j_get(root, "path");
	struct dp_reload_report rep;
	char path[4096], ans[1024];

	if (p && !cfg_j_is_str(p)) {
		out_add(o, "\"result\": \"rejected\", \"errors\": [\"request: path: expected a string\"]}");
		return;
	}
	pthread_mutex_lock(&dp.ctl_lock);
	snprintf(path, sizeof(path), "%s", p ? p->v.s : dp.config_path ? dp.config_path : "");
	pthread_mutex_unlock(&dp.ctl_lock);
	dp_config_apply(path, &rep);
	out_add(o, "\"config\": ");
	out_str(o, path);
	out_add(o, ", ");
	if (rep.applied) {
		/* Its members after ours; an applied report is a few hundred bytes. */
		dp_reload_report_json(&rep, ans, sizeof(ans));
		out_add(o, "%s", ans + 1);
	} else {
		/* Every error, however many (the loader keeps CFG_ERRORS_MAX and counts the rest). */
		out_errors(o, &rep.errs);
	}
	dp_reload_report_free(&rep);
}

static void
op_status(struct out *o)
{
	pthread_mutex_lock(&dp.ctl_lock);
	out_add(o, "\"result\": \"ok\", \"config\": ");
	out_str(o, dp.config_path ? dp.config_path : "");
	out_add(o, ", \"tenants\": %u, \"endpoints\": %u, \"qps\": %u, \"connections\": %u, \"mrs\": %u, "
		"\"deltas\": {\"applied\": %" PRIu64 ", \"rejected\": %" PRIu64 ", \"changes\": %" PRIu64 "}}",
		dp.cfg ? dp.cfg->n_tenants : 0, dp.cfg ? dp.cfg->n_endpoints : 0, dp.cfg ? dp.cfg->n_qps : 0,
		dp.ovl ? dp.ovl->live_conns : 0, dp.ovl ? dp.ovl->live_mrs : 0, dp_delta_totals.applied,
		dp_delta_totals.rejected, dp_delta_totals.changes);
	pthread_mutex_unlock(&dp.ctl_lock);
}

/* Answer the request in @line (modified); the answer ends with a newline. */
static void
request(char *line, size_t len, struct out *o)
{
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	const struct cfg_jv *op;

	if (cfg_json_parse(line, len, &doc, &je) < 0) {
		char m[256];

		snprintf(m, sizeof(m), "request:%d:%d: syntax error: %s", je.line, je.col, je.text);
		out_add(o, "{\"result\": \"rejected\", \"errors\": [");
		out_str(o, m);
		out_add(o, "]}\n");
		return;
	}
	out_begin(o, doc.root);
	op = cfg_j_is_obj(doc.root) ? cfg_j_get(doc.root, "op") : NULL;
	if (!cfg_j_is_obj(doc.root))
		out_add(o, "\"result\": \"rejected\", \"errors\": [\"request: expected a JSON object\"]}");
	else if (!op || (cfg_j_is_str(op) && !strcmp(op->v.s, "apply")))
		op_apply(o, doc.root);
	else if (cfg_j_is_str(op) && !strcmp(op->v.s, "reload"))
		op_reload(o, doc.root);
	else if (cfg_j_is_str(op) && !strcmp(op->v.s, "status"))
		op_status(o);
	else
		out_add(o, "\"result\": \"rejected\", \"errors\": [\"request: op: unknown operation "
			"(apply, reload, status)\"]}");
	out_add(o, "\n");
	cfg_json_free(&doc);
}

static void
client_close(struct client *c)
{
	close(c->fd);
	cs.held -= c->cap;
	free(c->buf);
	free(c->out.s);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Send what @c will take now, without waiting; false: close it. */
static bool
client_flush(struct client *c, uint64_t now)
{
	while (c->off < c->out.n) {
		ssize_t k = send(c->fd, c->out.s + c->off, c->out.n - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (k <= 0)
			return false;
		c->off += (size_t)k;
		c->last_ms = now;
	}
	c->off = c->out.n = 0;
	if (c->out.cap > KEEP_BUF) {
		free(c->out.s);
		c->out = (struct out){ 0 };
	}
	return true;
}

/* Answer the complete lines @c holds, while it takes its answers; false: close it. */
static bool
client_answer(struct client *c, uint64_t now)
{
	size_t start = 0;
	bool ok = true;

	for (size_t i = 0; ok && c->off == c->out.n && i < c->len; i++) {
		if (c->buf[i] != '\n')
			continue;
		/* Blank lines are no requests. */
		if (i > start && strspn(c->buf + start, " \t\r") < i - start) {
			request(c->buf + start, i - start, &c->out);
			ok = client_flush(c, now);
		}
		start = i + 1;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	if (c->len == 0 && c->cap > KEEP_BUF) {
		cs.held -= c->cap;
		free(c->buf);
		c->buf = NULL;
		c->cap = 0;
	}
	return ok;
}

/* Refuse @c's request, as far as it takes it, before it is closed. */
static void
client_refuse(struct client *c, const char *why)
{
	char m[256];
	int n = snprintf(m, sizeof(m), "{\"result\": \"rejected\", \"errors\": [\"request: %s\"]}\n", why);

	send(c->fd, m, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Read what @c sent and answer every complete line; false: close it. */
static bool
client_read(struct client *c, uint64_t now)
{
	ssize_t k;

	if (c->cap - c->len < 65536) {
		size_t cap = c->cap ? c->cap * 2 : 131072;
		char *b;

		if (cap > MAX_LINE + 65536) {
			client_refuse(c, "longer than the control socket takes");
			return false;
		}
		if (cs.held - c->cap + cap > cs.max_bytes) {
			client_refuse(c, "the control socket holds too many bytes of requests in all (--control-max-bytes)");
			return false;
		}
		b = realloc(c->buf, cap);
		if (!b)
			return false;
		cs.held += cap - c->cap;
		c->buf = b;
		c->cap = cap;
	}
	k = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
	if (k <= 0)
		return k < 0 && (errno == EINTR || errno == EAGAIN);
	c->len += (size_t)k;
	if (memchr(c->buf + c->len - (size_t)k, '\n', (size_t)k))
		c->last_ms = now;
	return client_answer(c, now);
}

/* A place for a new client: a free one, or the longest idle client's; -1 when none is idle. */
static int
client_slot(uint64_t now)
{
	int best = -1;

	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (cs.cl[i].fd < 0)
			return i;
		if (best < 0 || cs.cl[i].last_ms < cs.cl[best].last_ms)
			best = i;
	}
	if (best < 0 || now - cs.cl[best].last_ms < 1000)
		return -1;
	client_close(&cs.cl[best]);
	return best;
}

static void *
sock_main(void *arg)
{
	RTE_SET_USED(arg);
	while (!cs.stop) {
		struct pollfd pf[MAX_CLIENTS + 1];
		int n = 0, idx[MAX_CLIENTS + 1];
		uint64_t now = now_ms();

		pf[n] = (struct pollfd){ .fd = cs.lfd, .events = POLLIN };
		idx[n++] = -1;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			struct client *c = &cs.cl[i];

			if (c->fd < 0)
				continue;
			if (now - c->last_ms >= cs.idle_ms) {
				client_close(c);
				continue;
			}
			/* A client with answers to take is not read until it takes them. */
			pf[n] = (struct pollfd){ .fd = c->fd, .events = c->off < c->out.n ? POLLOUT : POLLIN };
			idx[n++] = i;
		}
		if (poll(pf, (nfds_t)n, 100) <= 0)
			continue;
		now = now_ms();
		for (int j = 1; j < n; j++) {
			struct client *c = &cs.cl[idx[j]];
			bool ok = true;

			if (pf[j].revents & POLLOUT)
				ok = client_flush(c, now) && client_answer(c, now);
			else if (pf[j].revents & (POLLIN | POLLHUP | POLLERR))
				ok = client_read(c, now);
			if (!ok)
				client_close(c);
		}
		if (pf[0].revents & POLLIN) {
			int fd = accept4(cs.lfd, NULL, NULL, SOCK_CLOEXEC), i;

			if (fd < 0)
				continue;
			i = client_slot(now);
			if (i < 0) {
				send(fd, "{\"result\": \"rejected\", \"errors\": [\"too many clients\"]}\n", 55,
				     MSG_NOSIGNAL | MSG_DONTWAIT);
				close(fd);
				continue;
			}
			cs.cl[i].fd = fd;
			cs.cl[i].last_ms = now;
		}
	}
	return NULL;
}

int
dp_ctl_sock_start(const char *path, char *err, size_t err_len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t um;
	int rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, err_len, "--control %s: the path is longer than %zu bytes", path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, err_len, "--control %s: exists and is not a socket", path);
			return -1;
		}
		unlink(path);
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		cs.cl[i].fd = -1;
	strcpy(sa.sun_path, path);
	cs.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cs.lfd < 0) {
		snprintf(err, err_len, "--control %s: socket: %s", path, strerror(errno));
		return -1;
	}
	/* Created 0600 (no window in which others could connect), owned by whoever started the switch. */
	um = umask(0177);
	rc = bind(cs.lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(um);
	if (rc < 0 || chmod(path, 0600) < 0 || listen(cs.lfd, 16) < 0) {
		snprintf(err, err_len, "--control %s: %s", path, strerror(errno));
		close(cs.lfd);
		cs.lfd = -1;
		return -1;
	}
	cs.path = strdup(path);
	cs.stop = false;
	rc = rte_ctrl_thread_create(&cs.tid, "roce-ctlsock", NULL, sock_main, NULL);
	if (rc != 0) {
		snprintf(err, err_len, "--control %s: thread: %s", path, strerror(rc));
		dp_ctl_sock_stop();
		return -1;
	}
	cs.running = true;
	return 0;
}

void
dp_ctl_sock_stop(void)
{
	if (cs.running) {
		cs.stop = true;
		pthread_join(cs.tid, NULL);
		cs.running = false;
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (cs.path && cs.cl[i].fd >= 0)
			client_close(&cs.cl[i]);
	if (cs.lfd >= 0) {
		close(cs.lfd);
		cs.lfd = -1;
	}
	if (cs.path) {
		unlink(cs.path);
		free(cs.path);
		cs.path = NULL;
	}
}
