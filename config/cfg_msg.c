/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON paths and the collection, sorting and delivery of messages (see
 * cfg_msg.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cfg_msg.h"

/* Longest message kept; longer ones are cut (names in them are user text). */
#define CFG_MSG_MAX 512

/* Append the text of @p to @buf at *@pos, bounded by @len. */
static void
path_render(const struct cfg_path *p, char *buf, size_t len, size_t *pos)
{
	int w;

	if (p == NULL)
		return;
	path_render(p->up, buf, len, pos);
	if (*pos >= len)
		return;
	if (p->key != NULL)
		w = snprintf(buf + *pos, len - *pos, "%s%s", *pos > 0 ? "." : "", p->key);
	else
		w = snprintf(buf + *pos, len - *pos, "[%" PRIu32 "]", p->idx);
	if (w > 0)
		*pos += (size_t)w;
}

/*
 * Take @text (malloc()ed) as the next message, under the current sort keys;
 * it is freed if it cannot be kept (dg->oom is set then).
 */
static void
msg_push(struct cfg_diag *dg, char *text)
{
	struct cfg_msg *m;

	/*
	 * A message must stay one line whatever the file holds: names and keys
	 * are user text, and syntax errors quote the offending token.
	 */
	for (char *s = text; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';

	if (dg->n_msg == dg->cap_msg) {
		uint64_t cap = dg->cap_msg ? dg->cap_msg * 2 : 16;

		m = realloc(dg->msg, cap * sizeof(*m));
		if (m == NULL) {
			dg->oom = true;
			free(text);
			return;
		}
		dg->msg = m;
		dg->cap_msg = cap;
	}
	m = &dg->msg[dg->n_msg];
	m->rank = dg->rank;
	m->rec = dg->rec;
	m->seq = dg->n_msg;
	m->text = text;
	dg->n_msg++;
}

/* Collect @prefix followed by @fmt formatted with @ap, cut at CFG_MSG_MAX. */
static void
msg_vadd(struct cfg_diag *dg, const char *prefix, const char *fmt, va_list ap)
{
	char *text = malloc(CFG_MSG_MAX);
	size_t pos;
	int w;

	if (text == NULL) {
		dg->oom = true;
		return;
	}
	w = snprintf(text, CFG_MSG_MAX, "%s", prefix);
	pos = w > 0 ? (size_t)w : 0;
	if (pos < CFG_MSG_MAX)
		vsnprintf(text + pos, CFG_MSG_MAX - pos, fmt, ap);
	msg_push(dg, text);
}

void
cfg_err(struct cfg_diag *dg, const struct cfg_path *path, const char *fmt, ...)
{
	char prefix[CFG_MSG_MAX], where[CFG_MSG_MAX];
	size_t pos = 0;
	va_list ap;

	where[0] = '\0';
	path_render(path, where, sizeof(where), &pos);
	snprintf(prefix, sizeof(prefix), "%s: %s%s", dg->name, where, pos > 0 ? ": " : "");
	va_start(ap, fmt);
	msg_vadd(dg, prefix, fmt, ap);
	va_end(ap);
}

void
cfg_err_raw(struct cfg_diag *dg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vadd(dg, "", fmt, ap);
	va_end(ap);
}

/* qsort() order of messages: by rank, then record, then order of detection. */
static int
msg_cmp(const void *a, const void *b)
{
	const struct cfg_msg *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
cfg_diag_deliver(struct cfg_diag *dg, struct cfg_errors *errs)
{
	uint64_t keep = dg->n_msg;
	char **grown;

	if (dg->oom)
		cfg_err_raw(dg, "%s: out of memory", dg->name);
	qsort(dg->msg, dg->n_msg, sizeof(*dg->msg), msg_cmp);
	if (errs == NULL)
		return;
	if (keep > CFG_ERRORS_MAX)
		keep = CFG_ERRORS_MAX;
	grown = realloc(errs->msg, (errs->n + keep + 1) * sizeof(*errs->msg));
	if (grown == NULL)
		return;
	errs->msg = grown;
	for (uint64_t i = 0; i < keep; i++) {
		errs->msg[errs->n++] = dg->msg[i].text;
		dg->msg[i].text = NULL;
	}
	if (keep < dg->n_msg) {
		char *more = malloc(128);

		if (more != NULL) {
			snprintf(more, 128, "%s: %" PRIu64 " more errors not shown", dg->name,
				 dg->n_msg - keep);
			errs->msg[errs->n++] = more;
		}
	}
}

void
cfg_diag_release(struct cfg_diag *dg)
{
	for (uint64_t i = 0; i < dg->n_msg; i++)
		free(dg->msg[i].text);
	free(dg->msg);
	dg->msg = NULL;
	dg->n_msg = 0;
	dg->cap_msg = 0;
}
