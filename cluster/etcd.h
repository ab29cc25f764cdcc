/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small client of etcd v3's JSON gateway (HTTP/1.1 over libcurl, with TLS
 * and client certificates): POST a JSON request to one member and get the
 * answer, or stream a watch line by line.  Keys and values travel in base64,
 * as the gateway wants them.  No DPDK; one connection is used by one thread.
 */
#ifndef ETCD_H
#define ETCD_H

#include <stdbool.h>
#include <stddef.h>

struct etcd_conn {
	char **urls;              /* members, "http://127.0.0.1:2379" */
	unsigned n_urls, cur;     /* and the one in use */
	char *cacert, *cert, *key; /* TLS files, or NULL */
	const volatile bool *stop; /* set: a request in progress is abandoned */
	void *curl;               /* the handle, kept between requests */
	long idle_s;              /* a stream silent this long is given up (0: 30 s) */
	bool silent;              /* the last request was a stream given up for its silence */
	char err[768];            /* why the last request failed */
};

/* Each complete line of a streamed answer, NUL-terminated; non-zero ends the stream. */
typedef int (*etcd_line_fn)(void *arg, char *line);

/*
 * Fill @c from @urls (comma-separated) and the TLS files (NULL: none).
 * Returns 0, or -1 when no URL is given or memory runs out.
 */
int etcd_conn_init(struct etcd_conn *c, const char *urls, const char *cacert, const char *cert,
		   const char *key, const volatile bool *stop);
void etcd_conn_free(struct etcd_conn *c);

/*
 * POST @json to @path (such as "/v3/kv/range") of the member in use.  With
 * @on_line, the answer is streamed to it line by line (a watch) until the
 * member, the network or *stop ends it; else it is returned in *@body
 * (malloc'ed).  @timeout_s 0: none (a watch; a member silent for c->idle_s
 * is still given up, and c->silent says so).  Returns 0 on HTTP 200, else -1
 * with the reason in c->err.
 */
int etcd_post(struct etcd_conn *c, const char *path, const char *json, char **body, long timeout_s,
	      etcd_line_fn on_line, void *arg);

/* Use the next member from now on. */
void etcd_next_member(struct etcd_conn *c);

/* Base64 of @n bytes at @s, and back (*@n bytes, NUL-terminated); malloc'ed, NULL on error. */
char *etcd_b64_enc(const char *s, size_t n);
char *etcd_b64_dec(const char *s, size_t *n);

#endif /* ETCD_H */
