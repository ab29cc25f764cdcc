/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd JSON gateway client (etcd.h).  Why the gateway and not gRPC: it
 * needs nothing but libcurl from the archive (no protobuf or gRPC code to
 * generate and build), it speaks TLS with client certificates as etcd's gRPC
 * port does, and a watch is one streaming HTTP response whose messages are
 * JSON lines.  The cost is base64 and JSON per event, microseconds against
 * the delta that follows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "etcd.h"

int
etcd_conn_init(struct etcd_conn *c, const char *urls, const char *cacert, const char *cert, const char *key,
	       const volatile bool *stop)
{
	char *copy = strdup(urls ? urls : ""), *save = NULL;

	memset(c, 0, sizeof(*c));
	if (!copy)
		return -1;
	for (char *u = strtok_r(copy, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
		char **n = realloc(c->urls, sizeof(*n) * (c->n_urls + 1));
		size_t len = strlen(u);

		if (!n)
			break;
		c->urls = n;
		while (len && u[len - 1] == '/')
			u[--len] = 0;
		if ((c->urls[c->n_urls] = strdup(u)))
			c->n_urls++;
	}
	free(copy);
	c->cacert = cacert ? strdup(cacert) : NULL;
	c->cert = cert ? strdup(cert) : NULL;
	c->key = key ? strdup(key) : NULL;
	c->stop = stop;
	return c->n_urls ? 0 : -1;
}

void
etcd_conn_free(struct etcd_conn *c)
{
	for (unsigned i = 0; i < c->n_urls; i++)
		free(c->urls[i]);
	free(c->urls);
	free(c->cacert);
	free(c->cert);
	free(c->key);
	if (c->curl)
		curl_easy_cleanup(c->curl);
	memset(c, 0, sizeof(*c));
}

void
etcd_next_member(struct etcd_conn *c)
{
	c->cur = (c->cur + 1) % c->n_urls;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
etcd_b64_enc(const char *s, size_t n)
{
	char *o = malloc(4 * ((n + 2) / 3) + 1), *p = o;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)(unsigned char)s[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)(unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		*p++ = b64[v >> 18];
		*p++ = b64[(v >> 12) & 63];
		*p++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*p++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*p = 0;
	return o;
}

char *
etcd_b64_dec(const char *s, size_t *n)
{
	size_t len = strlen(s), k = 0;
	char *o = malloc(len / 4 * 3 + 4);
	unsigned v = 0;
	int bits = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < len && s[i] != '='; i++) {
		const char *c = strchr(b64, s[i]);

		if (!c) {
			free(o);
			return NULL;
		}
		v = v << 6 | (unsigned)(c - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[k++] = (char)(v >> bits);
		}
	}
	o[k] = 0;
	*n = k;
	return o;
}

struct sink {
	char *s;
	size_t n;
	etcd_line_fn on_line;
	void *arg;
	struct etcd_conn *c;
	long idle_s;              /* a stream silent this long is given up; 0: not a stream */
	double last;              /* when it last brought data (mono_s()) */
};

static double
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t
on_data(char *p, size_t size, size_t nm, void *arg)
{
	struct sink *b = arg;
	size_t n = size * nm;
	char *s = realloc(b->s, b->n + n + 1), *nl;

	if (!s)
		return 0;
	b->s = s;
	b->last = mono_s();
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = 0;
	while (b->on_line && (nl = memchr(b->s, '\n', b->n))) {
		*nl = 0;
		if (b->on_line(b->arg, b->s))
			return 0; /* less than given: curl ends the transfer */
		b->n -= (size_t)(nl + 1 - b->s);
		memmove(b->s, nl + 1, b->n + 1);
	}
	return n;
}

/* Called at least once a second: ends the transfer when asked to, or when a stream stays silent. */
static int
on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct sink *k = arg;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	if (k->c->stop && *k->c->stop)
		return 1;
	if (k->idle_s && mono_s() - k->last >= (double)k->idle_s) {
		k->c->silent = true;
		return 1;
	}
	return 0;
}

int
etcd_post(struct etcd_conn *c, const char *path, const char *json, char **body, long timeout_s, etcd_line_fn on_line,
	  void *arg)
{
	struct sink b = { .on_line = on_line, .arg = arg, .c = c, .last = mono_s() };
	struct curl_slist *hd;
	char url[512];
	CURLcode rc;
	long code = 0;

	if (body)
		*body = NULL;
	c->silent = false;
	if (!c->curl && !(c->curl = curl_easy_init())) {
		snprintf(c->err, sizeof(c->err), "curl_easy_init failed");
		return -1;
	}
	CURL *h = c->curl;

	hd = curl_slist_append(NULL, "Content-Type: application/json");
	snprintf(url, sizeof(url), "%s%s", c->urls[c->cur], path);
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &b);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	/*
	 * A member that sends nothing for this long is given up: a request within
	 * its timeout; a stream (a watch) after c->idle_s of silence, which
	 * c->silent says.  An idle watch is silent too (etcd sends progress
	 * notices every 10 minutes by default): the follower renews it.
	 */
	if (timeout_s) {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, timeout_s);
	} else {
		b.idle_s = c->idle_s > 0 ? c->idle_s : 30L;
	}
	if (c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	if (c->cert)
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
	if (c->key)
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
	rc = curl_easy_perform(h);
	curl_slist_free_all(hd);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200) {
			if (body)
				*body = b.s;
			else
				free(b.s);
			return 0;
		}
		snprintf(c->err, sizeof(c->err), "%s: HTTP %ld: %.150s", url, code, b.s ? b.s : "");
	} else {
		if (c->silent)
			snprintf(c->err, sizeof(c->err), "%s: silent for %ld s", url, b.idle_s);
		else
			snprintf(c->err, sizeof(c->err), "%s: %s", url, curl_easy_strerror(rc));
	}
	free(b.s);
	return -1;
}
