/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loader: reads the file, parses the JSON and drives the layers below
 * it through the schema, version 1.
 *
 * The layers, from the bottom up, each calling only those listed before it
 * (and cfg_util.c, cfg_htab.c and cfg_json.c, which call none of them):
 *   cfg_msg.c        JSON paths and the messages of a load, sorted into file
 *                    order;
 *   cfg_field.c      the table-driven parser of one key's value;
 *   cfg_ctx.c        the load context: indexes, name lookups, section walking;
 *   cfg_rec_common.c what several kinds of record share (QP types, "rate");
 *   cfg_rec_*.c      one field table and parser per kind of record, with the
 *                    checks that need nothing but the record: tenants (with
 *                    dcqcn and acls), ports and endpoints, qps and mrs, and
 *                    the top-level options with neighbors;
 *   cfg_check.c      the checks between records (uniqueness, references,
 *                    peers, quotas);
 *   cfg_load.c       this file.
 *
 * Sections are loaded in dependency order (tenants before the ports that
 * name them, endpoints before QPs, ...) and every message is tagged with the
 * position of its top-level key in the file and its record index, so that
 * the messages can be sorted back into file order at the end. Within a
 * record, the steps below run in the order in which its messages read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cfg_check.h"
#include "cfg_ctx.h"
#include "cfg_rec.h"
#include "cfg_xrc.h"

/*
 * The sections of records. Each allocates its records and prepares the
 * indexes of its checks, then parses and checks record by record; a false
 * parse means the element was not an object (reported) and is skipped.
 */
static bool
load_tenants(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	struct cfg_rec r;

	if (!cfg_records_alloc(ld, v, p, sizeof(*c->tenants), (void **)&c->tenants,
			       &c->n_tenants))
		ld->quiet_tenants = true;
	cfg_check_tenants_begin(ld);
	for (uint32_t i = 0; i < c->n_tenants; i++) {
		if (!cfg_tenant_parse(ld, v, p, i, &r))
			continue;
		cfg_check_tenant(ld, &r);
		cfg_tenant_dcqcn_parse(ld, &r);
	}
	return true;
}

static bool
load_ports(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_rec r;

	cfg_ports_alloc(ld, v, p);
	cfg_check_ports_begin(ld);
	for (uint32_t i = 0; i < ld->c->n_ports && !ld->dg.oom; i++) {
		if (!cfg_port_parse(ld, v, p, i, &r))
			continue;
		cfg_check_port_names(ld, &r);
		cfg_port_role_check(ld, &r);
		cfg_check_port_ip(ld, &r);
	}
	return true;
}

static bool
load_endpoints(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_rec r;

	cfg_endpoints_alloc(ld, v, p);
	cfg_check_endpoints_begin(ld);
	for (uint32_t i = 0; i < ld->c->n_endpoints && !ld->dg.oom; i++) {
		if (!cfg_endpoint_parse(ld, v, p, i, &r))
			continue;
		cfg_check_endpoint_vip(ld, &r);
		cfg_endpoint_mac_check(ld, &r);
		cfg_check_endpoint_port(ld, &r);
		cfg_check_endpoint_learning(ld, &r);
	}
	cfg_check_endpoint_srqs(ld, p);
	return true;
}

static bool
load_qps(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg_rec r;

	cfg_qps_alloc(ld, v, p);
	cfg_check_qps_begin(ld);
	for (uint32_t i = 0; i < ld->c->n_qps && !ld->dg.oom; i++) {
		if (!cfg_qp_parse(ld, v, p, i, &r))
			continue;
		/* A QP without a valid tenant is checked no further. */
		if (r.ok & CFG_BIT(CFG_Q_TENANT)) {
			cfg_check_qp(ld, &r);
			cfg_qp_type_check(ld, &r);
		}
		ld->qp_ok[i] = (uint32_t)r.ok;
	}
	cfg_check_qp_peers(ld, p);
	return true;
}

static bool
load_mrs(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	struct cfg_rec r;

	cfg_records_alloc(ld, v, p, sizeof(*c->mrs), (void **)&c->mrs, &c->n_mrs);
	cfg_check_mrs_begin(ld);
	for (uint32_t i = 0; i < c->n_mrs && !ld->dg.oom; i++) {
		if (!cfg_mr_parse(ld, v, p, i, &r))
			continue;
		cfg_check_mr(ld, &r);
		cfg_mr_window_check(ld, &r);
	}
	return true;
}

static bool
load_acls(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	struct cfg_rec r;

	if (!cfg_check_acls_begin(ld))
		return true;
	cfg_records_alloc(ld, v, p, sizeof(*c->acls), (void **)&c->acls, &c->n_acls);
	for (uint32_t i = 0; i < c->n_acls && !ld->dg.oom; i++) {
		if (!cfg_acl_parse(ld, v, p, i, &r))
			continue;
		cfg_check_acl_tenant(ld, &r);
		cfg_acl_rules_parse(ld, &r);
	}
	return true;
}

static bool
load_neighbors(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	struct cfg *c = ld->c;
	struct cfg_rec r;

	cfg_records_alloc(ld, v, p, sizeof(*c->neighbors), (void **)&c->neighbors,
			  &c->n_neighbors);
	cfg_check_neighbors_begin(ld);
	for (uint32_t i = 0; i < c->n_neighbors && !ld->dg.oom; i++) {
		if (!cfg_neighbor_parse(ld, v, p, i, &r))
			continue;
		cfg_check_neighbor(ld, &r);
	}
	return true;
}

/*
 * The top-level keys, in the order they are loaded: each section may refer
 * to those above it (tenants inherit the DCQCN parameters). A loader returns
 * false to stop the load (only an unsupported version does: the rest of the
 * file follows another schema).
 */
static const struct {
	const char *key;
	bool required;
	bool (*load)(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
} sections[] = {
	{ "version", true, cfg_version_load },
	{ "comment", false, cfg_comment_load },
	{ "udp_port", false, cfg_udp_port_load },
	{ "dcqcn", false, cfg_dcqcn_load },
	{ "tenants", true, load_tenants },
	{ "ports", true, load_ports },
	{ "endpoints", false, load_endpoints },
	{ "qps", false, load_qps },
	{ "mrs", false, load_mrs },
	{ "acls", false, load_acls },
	{ "neighbors", false, load_neighbors },
	{ "offload", false, cfg_offload_load },
	{ "shaping", false, cfg_shaping_load },
	{ "ecmp", false, cfg_ecmp_load },
};

/* Validate the parsed document @root; consumes nothing. */
static struct cfg *
cfg_from_json(const struct cfg_jv *root, const char *name, struct cfg_errors *errs)
{
	int rank[CFG_DIM(sections)];
	struct cfg_ld ld;
	const struct cfg_jv *v;
	struct cfg *c;
	int pos = 0;

	cfg_ld_init(&ld, name);
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->path = strdup(name)) == NULL ||
	    (c->dcqcn.profile = strdup(cfg_dcqcn_profile_names[0])) == NULL) {
		ld.dg.oom = true;
		goto out;
	}
	c->udp_port = CFG_DEFAULT_UDP_PORT;
	c->offload.steady_ms = CFG_DEFAULT_STEADY_MS;
	c->offload.min_rate_mbps = CFG_DEFAULT_MIN_RATE_MBPS;
	c->dcqcn.line_rate_bps = CFG_DEFAULT_LINE_RATE_BPS;
	dcqcn_params_default(&c->dcqcn.params, c->dcqcn.profile);
	c->shaping.watchdog_ms = CFG_DEFAULT_WATCHDOG_MS;
	c->shaping.queue_bytes = CFG_DEFAULT_QUEUE_BYTES;
	ld.c = c;

	if (!cfg_j_is_obj(root)) {
		cfg_err(&ld.dg, NULL, "expected a JSON object at the top level");
		goto out;
	}
	for (size_t s = 0; s < CFG_DIM(sections); s++)
		rank[s] = -1;
	for (uint32_t m = 0; m < root->n; m++) {
		const char *key = cfg_j_at(root, m)->key;
		size_t s;

		for (s = 0; s < CFG_DIM(sections); s++)
			if (strcmp(sections[s].key, key) == 0)
				break;
		if (s < CFG_DIM(sections)) {
			rank[s] = pos++;
		} else {
			struct cfg_path kp = { .key = key };

			ld.dg.rank = pos++;
			cfg_err(&ld.dg, &kp, "unknown key");
		}
	}
	for (size_t s = 0; s < CFG_DIM(sections) && !ld.dg.oom; s++) {
		struct cfg_path kp = { .key = sections[s].key };

		v = cfg_j_get(root, sections[s].key);
		ld.dg.rank = rank[s];
		ld.dg.rec = -1;
		if (v == NULL) {
			if (sections[s].required)
				cfg_err(&ld.dg, &kp, "missing required key");
			if (strcmp(sections[s].key, "tenants") == 0)
				ld.quiet_tenants = true;
			else if (strcmp(sections[s].key, "ports") == 0)
				ld.quiet_ports = true;
			continue;
		}
		if (!sections[s].load(&ld, v, &kp))
			break;
	}
out:
	if (ld.dg.n_msg != 0 || ld.dg.oom) {
		cfg_diag_deliver(&ld.dg, errs);
		cfg_free(c);
		c = NULL;
	}
	cfg_ld_release(&ld);
	return c;
}

/* Report a parse error as "NAME:LINE:COL: syntax error: TEXT". */
static void
syntax_error(const char *name, const struct cfg_jerr *je, struct cfg_errors *errs)
{
	struct cfg_diag dg;

	memset(&dg, 0, sizeof(dg));
	dg.name = name;
	cfg_err_raw(&dg, "%s:%d:%d: syntax error: %s", name, je->line, je->col, je->text);
	cfg_diag_deliver(&dg, errs);
	cfg_diag_release(&dg);
}

/* Report "NAME: WHAT". */
static void
plain_error(const char *name, const char *what, struct cfg_errors *errs)
{
	struct cfg_diag dg;

	memset(&dg, 0, sizeof(dg));
	dg.name = name;
	cfg_err_raw(&dg, "%s: %s", name, what);
	cfg_diag_deliver(&dg, errs);
	cfg_diag_release(&dg);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Parse and validate the @len bytes at @buf, which are modified; @t may be NULL. */
static struct cfg *
cfg_load_buffer(char *buf, size_t len, const char *name, struct cfg_errors *errs,
		struct cfg_load_times *t)
{
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	struct cfg *c;
	double t0 = now_ms(), t1, t2;

	if (cfg_json_parse(buf, len, &doc, &je) < 0) {
		syntax_error(name, &je, errs);
		return NULL;
	}
	t1 = now_ms();
	c = cfg_from_json(doc.root, name, errs);
	t2 = now_ms();
	cfg_json_free(&doc);
	if (t) {
		/* Releasing the document is the JSON side's cost too. */
		t->parse_ms = (t1 - t0) + (now_ms() - t2);
		t->check_ms = t2 - t1;
	}
	return c;
}

struct cfg *
cfg_load_string(const char *json, const char *name, struct cfg_errors *errs)
{
	struct cfg *c;
	size_t len;
	char *buf;

	if (name == NULL)
		name = "<string>";
	if (json == NULL) {
		plain_error(name, "no text given", errs);
		return NULL;
	}
	len = strlen(json);
	buf = malloc(len + 1);
	if (buf == NULL) {
		plain_error(name, "out of memory", errs);
		return NULL;
	}
	memcpy(buf, json, len + 1);
	c = cfg_load_buffer(buf, len, name, errs, NULL);
	free(buf);
	return c;
}

/* The largest file cfg_load_file() reads (cfg_file_max_set()). */
static uint64_t file_max = CFG_DEFAULT_FILE_MAX;

void
cfg_file_max_set(uint64_t bytes)
{
	file_max = bytes ? bytes : CFG_DEFAULT_FILE_MAX;
}

/*
 * The whole of the regular file open at @fd, of @size bytes when it was
 * opened (it may change while it is read), into a buffer, NUL-terminated; at
 * most file_max bytes.  NULL with errno set (EFBIG past the limit).
 */
static char *
read_all(int fd, uint64_t size, size_t *len)
{
	size_t cap = (size_t)size + 1, n = 0;
	char *buf, *grown;

	if (cap < 4096)
		cap = 4096;
	buf = malloc(cap);
	if (buf == NULL)
		return NULL;
	for (;;) {
		ssize_t got = read(fd, buf + n, cap - n - 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return NULL;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > file_max) {
			free(buf);
			errno = EFBIG;
			return NULL;
		}
		if (n + 1 < cap)
			continue;
		grown = realloc(buf, cap * 2);
		if (grown == NULL) {
			free(buf);
			errno = ENOMEM;
			return NULL;
		}
		buf = grown;
		cap *= 2;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

struct cfg *
cfg_load_file(const char *path, struct cfg_errors *errs)
{
	return cfg_load_file_timed(path, errs, NULL);
}

struct cfg *
cfg_load_file_timed(const char *path, struct cfg_errors *errs, struct cfg_load_times *t)
{
	double t0 = now_ms();
	char what[256];
	struct stat st;
	struct cfg *c;
	size_t len = 0;
	char *buf;
	int fd;

	if (path == NULL) {
		plain_error("<none>", "no file given", errs);
		return NULL;
	}
	/* Non-blocking: a FIFO with no writer must not hold the caller (it is refused below). */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(what, sizeof(what), "cannot open: %s", strerror(errno));
		plain_error(path, what, errs);
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(what, sizeof(what), "cannot read: %s", strerror(errno));
		close(fd);
		plain_error(path, what, errs);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		plain_error(path, S_ISDIR(st.st_mode) ? "cannot read: is a directory" :
			    "cannot read: not a regular file", errs);
		return NULL;
	}
	if ((uint64_t)st.st_size > file_max) {
		close(fd);
		snprintf(what, sizeof(what), "cannot read: %llu bytes, more than the largest file taken (%llu bytes)",
			 (unsigned long long)st.st_size, (unsigned long long)file_max);
		plain_error(path, what, errs);
		return NULL;
	}
	errno = 0;
	buf = read_all(fd, (uint64_t)st.st_size, &len);
	close(fd);
	if (buf == NULL) {
		if (errno == EFBIG)
			snprintf(what, sizeof(what), "cannot read: more than the largest file taken (%llu bytes)",
				 (unsigned long long)file_max);
		else
			snprintf(what, sizeof(what), "cannot read: %s", strerror(errno ? errno : EIO));
		plain_error(path, what, errs);
		return NULL;
	}
	/* A file that is not a JSON object is not a configuration: say so without quoting it. */
	size_t first = strspn(buf, " \t\r\n");

	if (first < len && buf[first] != '{') {
		free(buf);
		plain_error(path, "not a configuration: the file is not a JSON object (it must begin with '{')", errs);
		return NULL;
	}
	if (t)
		*t = (struct cfg_load_times){ .read_ms = now_ms() - t0 };
	c = cfg_load_buffer(buf, len, path, errs, t);
	free(buf);
	return c;
}
