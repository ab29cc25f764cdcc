/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Canonical forms of a configuration's records, the check of the indexes
 * kept beside a configuration, and one batch through both paths (see
 * test_cfg_inc.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_inc_int.h"
#include "cfg_json.h"
#include "ovl.h"
#include "test_cfg_inc.h"

static const char *
ipstr(const struct cfg_ip *ip, char *buf)
{
	if (cfg_ip_format(ip, buf, CFG_IP_STRLEN) < 0)
		strcpy(buf, "?");
	return buf;
}

void
canon_rec(const struct cfg *c, int k, const void *rec, char *buf, size_t len)
{
	char a[CFG_IP_STRLEN], b[CFG_IP_STRLEN];

	if (k == CFG_DK_ENDPOINTS) {
		const struct cfg_endpoint *e = rec;
		int n = snprintf(buf, len, "E %s %s host=%s port=%s mac=", c->tenants[e->tenant].name, ipstr(&e->vip, a),
				 ipstr(&e->host, b), e->port >= 0 ? c->ports[e->port].name : "-");

		for (int i = 0; i < 6 && e->has_mac; i++)
			n += snprintf(buf + n, len - n, "%02x", e->mac[i]);
		for (uint32_t s = 0; s < e->n_xrc_srqs; s++)
			n += snprintf(buf + n, len - n, " srq=%" PRIu32 "/%" PRIu32, e->xrc_srqs[s].vsrqn,
				      e->xrc_srqs[s].psrqn);
	} else if (k == CFG_DK_QPS) {
		const struct cfg_qp *q = rec;

		/* A half's peer is its vip alone: "peer=10.1.0.1/-1". */
		snprintf(buf, len, "Q %s %s %" PRIu32 " pqpn=%" PRIu32 " type=%d peer=%s/%" PRId64 " rate=%d/%" PRIu64
			 "/%" PRIu64, c->tenants[q->tenant].name, ipstr(&q->vip, a), q->vqpn, q->pqpn, (int)q->type,
			 q->has_peer ? ipstr(&q->peer_vip, b) : "-", q->has_peer_vqpn ? (int64_t)q->peer_vqpn : -1,
			 q->rate.set, q->rate.bps, q->rate.burst_bytes);
	} else {
		const struct cfg_mr *m = rec;

		snprintf(buf, len, "M %s %s %" PRIx32 " addr=%" PRIx64 " len=%" PRIx64 " t=%" PRIx32 "/%" PRIx64
			 " acc=%" PRIx32, c->tenants[m->tenant].name, ipstr(&m->vip, a), m->rkey, m->addr, m->length,
			 m->target_rkey, m->target_addr, m->access);
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
canon_build(const struct cfg *c, bool refs, struct canon *out)
{
	uint32_t n = c->n_tenants + c->n_endpoints + c->n_qps + c->n_mrs, i = 0;
	char buf[512], a[CFG_IP_STRLEN];

	out->line = calloc(n + 1, sizeof(*out->line));
	out->n = n;
	for (uint32_t t = 0; t < c->n_tenants; t++) {
		snprintf(buf, sizeof(buf), "T %s vni=%" PRIu32 " max=%" PRIu32 " n_qps=%" PRIu32, c->tenants[t].name,
			 c->tenants[t].vni, c->tenants[t].max_qps, refs ? c->tenants[t].n_qps : 0);
		out->line[i++] = strdup(buf);
	}
	for (uint32_t e = 0; e < c->n_endpoints; e++) {
		canon_rec(c, CFG_DK_ENDPOINTS, &c->endpoints[e], buf, sizeof(buf));
		out->line[i++] = strdup(buf);
	}
	for (uint32_t q = 0; q < c->n_qps; q++) {
		const struct cfg_qp *r = &c->qps[q];
		size_t l;

		canon_rec(c, CFG_DK_QPS, r, buf, sizeof(buf));
		l = strlen(buf);
		if (refs && r->peer >= 0)
			l += snprintf(buf + l, sizeof(buf) - l, " ->peer %s %" PRIu32, ipstr(&c->qps[r->peer].vip, a),
				      c->qps[r->peer].vqpn);
		else if (refs)
			l += snprintf(buf + l, sizeof(buf) - l, " ->peer none");
		if (refs)
			snprintf(buf + l, sizeof(buf) - l, " ->ep %s",
				 r->endpoint >= 0 ? ipstr(&c->endpoints[r->endpoint].vip, a) : "none");
		out->line[i++] = strdup(buf);
	}
	for (uint32_t m = 0; m < c->n_mrs; m++) {
		const struct cfg_mr *r = &c->mrs[m];
		size_t l;

		canon_rec(c, CFG_DK_MRS, r, buf, sizeof(buf));
		l = strlen(buf);
		if (refs)
			snprintf(buf + l, sizeof(buf) - l, " ->ep %s",
				 r->endpoint >= 0 ? ipstr(&c->endpoints[r->endpoint].vip, a) : "none");
		out->line[i++] = strdup(buf);
	}
	qsort(out->line, n, sizeof(*out->line), cmp_str);
}

void
canon_free(struct canon *cn)
{
	for (uint32_t i = 0; i < cn->n; i++)
		free(cn->line[i]);
	free(cn->line);
	memset(cn, 0, sizeof(*cn));
}

bool
canon_equal(const struct canon *a, const struct canon *b)
{
	for (uint32_t i = 0; i < a->n || i < b->n; i++) {
		const char *x = i < a->n ? a->line[i] : "(end)", *y = i < b->n ? b->line[i] : "(end)";

		if (strcmp(x, y)) {
			fprintf(stderr, "  first difference: %s\n                    %s\n", x, y);
			return false;
		}
	}
	return true;
}

bool
apply_lines(const struct cfg *c, const struct cfg_inc *inc, struct canon *cn)
{
	char old[512], new[512];

	for (uint32_t i = 0; i < inc->n; i++) {
		const struct cfg_inc_change *ch = &inc->ch[i];
		int32_t at = -1;

		if (ch->op != CFG_INC_ADD)
			canon_rec(c, ch->kind, &ch->old, old, sizeof(old));
		if (ch->op != CFG_INC_DELETE)
			canon_rec(c, ch->kind, &ch->new, new, sizeof(new));
		for (uint32_t j = 0; ch->op != CFG_INC_ADD && j < cn->n; j++)
			if (!strcmp(cn->line[j], old))
				at = (int32_t)j;
		if (ch->op != CFG_INC_ADD && at < 0)
			return false;
		if (ch->op == CFG_INC_DELETE) {
			free(cn->line[at]);
			cn->line[at] = cn->line[--cn->n];
		} else if (ch->op == CFG_INC_REPLACE) {
			free(cn->line[at]);
			cn->line[at] = strdup(new);
		} else {
			cn->line = realloc(cn->line, sizeof(*cn->line) * (cn->n + 1));
			cn->line[cn->n++] = strdup(new);
		}
	}
	qsort(cn->line, cn->n, sizeof(*cn->line), cmp_str);
	return true;
}

bool
index_consistent(const struct cfg *c)
{
	const struct cfg_inc_ix *x = c->inc;
	uint32_t *nq, *nm;
	bool ok = true;

	if (!x)
		return true;
	ok &= x->key[CFG_DK_ENDPOINTS].n == c->n_endpoints && x->key[CFG_DK_QPS].n == c->n_qps &&
	      x->key[CFG_DK_MRS].n == c->n_mrs && x->pq.n == c->n_qps;
	for (int k = CFG_DK_ENDPOINTS; k < CFG_DK_N; k++) {
		uint32_t n = k == CFG_DK_ENDPOINTS ? c->n_endpoints : k == CFG_DK_QPS ? c->n_qps : c->n_mrs;

		for (uint32_t i = 0; i < n; i++) {
			struct cfg_inc_key key;

			cfg_inc_rec_key(c, k, i, &key);
			ok &= cfg_inc_find(c, k, &key) == i;
		}
	}
	nq = calloc(c->n_endpoints + 1, sizeof(*nq));
	nm = calloc(c->n_endpoints + 1, sizeof(*nm));
	for (uint32_t i = 0; i < c->n_qps; i++) {
		const struct cfg_qp *q = &c->qps[i];

		ok &= cfg_inc_find_pqpn(c, &c->endpoints[q->endpoint].host, q->pqpn) == i;
		nq[q->endpoint]++;
	}
	for (uint32_t i = 0; i < c->n_mrs; i++)
		nm[c->mrs[i].endpoint]++;
	for (uint32_t e = 0; e < c->n_endpoints; e++) {
		uint32_t lq = 0, lm = 0;

		for (int32_t q = x->ep[e].qhead; q >= 0 && lq <= c->n_qps; q = x->ql[q].next, lq++)
			ok &= c->qps[q].endpoint == (int)e;
		for (int32_t m = x->ep[e].mhead; m >= 0 && lm <= c->n_mrs; m = x->ml[m].next, lm++)
			ok &= c->mrs[m].endpoint == (int)e;
		ok &= lq == nq[e] && lm == nm[e] && x->ep[e].nq == nq[e] && x->ep[e].nm == nm[e];
		for (uint32_t s = 0; s < c->endpoints[e].n_xrc_srqs; s++)
			ok &= cfg_inc_find_psrqn(c, &c->endpoints[e].host, c->endpoints[e].xrc_srqs[s].psrqn) ==
			      e * CFG_XRC_SRQS_MAX + s;
	}
	free(nq);
	free(nm);
	return ok;
}

/*
 * An endpoint of @a with the key of one of @b but not equal to it, or one
 * of a learning tenant (a half's source, perhaps) that @b does not have, or
 * a tenant that learns in one and not in the other.
 */
static bool
endpoint_modified(const struct cfg *a, const struct cfg *b)
{
	for (uint32_t t = 0; t < a->n_tenants && t < b->n_tenants; t++)
		if (a->tenants[t].qp_learning != b->tenants[t].qp_learning)
			return true;
	for (uint32_t i = 0; i < a->n_endpoints; i++) {
		bool kept = false;

		for (uint32_t j = 0; j < b->n_endpoints; j++) {
			if (a->endpoints[i].tenant != b->endpoints[j].tenant ||
			    !cfg_ip_equal(&a->endpoints[i].vip, &b->endpoints[j].vip))
				continue;
			if (!cfg_inc_ep_equal(&a->endpoints[i], &b->endpoints[j]))
				return true;
			kept = true;
		}
		if (!kept && a->tenants[a->endpoints[i].tenant].qp_learning)
			return true;
	}
	return false;
}

int
diff_agrees(const struct cfg *run, struct cfg *file)
{
	struct cfg_inc inc;
	struct canon a, b;
	int r = cfg_inc_diff(run, file, &inc);
	bool ok;

	if (r != 1)
		return r == 0 && endpoint_modified(run, file) ? 0 : -1;
	canon_build(run, false, &a);
	canon_build(file, false, &b);
	ok = apply_lines(run, &inc, &a) && canon_equal(&a, &b);
	canon_free(&a);
	canon_free(&b);
	cfg_inc_release(&inc);
	return ok ? 1 : -1;
}

enum both_path
run_both(struct cfg **run, const char *json, struct cfg_inc *out)
{
	char *buf = strdup(json);
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	struct cfg_errors errs = { 0 };
	struct cfg_delta_summary sum;
	struct cfg_inc inc;
	struct cfg *full;
	enum both_path path;
	int r;

	if (cfg_json_parse(buf, strlen(buf), &doc, &je) < 0) {
		free(buf);
		return BOTH_SYNTAX;
	}
	full = cfg_delta_apply_root(*run, doc.root, "req", &errs, &sum);
	r = cfg_inc_prepare(*run, doc.root, &inc);
	if (r == 1) {
		struct canon a, b;

		path = BOTH_INC;
		if (!full || memcmp(&sum, &inc.sum, sizeof(sum))) {
			fprintf(stderr, "incremental path took a batch the full path %s:\n%s\n",
				full ? "counts otherwise" : "rejects", json);
			cfg_errors_print(&errs, stderr);
			path = BOTH_MISMATCH;
		} else {
			char err[256];
			struct ovl *o, *of;

			cfg_inc_commit(*run, &inc);
			canon_build(*run, true, &a);
			canon_build(full, true, &b);
			if (!canon_equal(&a, &b) || !index_consistent(*run)) {
				fprintf(stderr, "results differ (or the indexes do) after:\n%s\n", json);
				path = BOTH_MISMATCH;
			}
			/*
			 * The overlay builds the result in place when it builds the full
			 * path's (it refuses some that the configuration allows, such as
			 * peers of two IP versions, on either path alike).
			 */
			of = ovl_build(full, err, sizeof(err));
			o = ovl_build(*run, err, sizeof(err));
			if (!o != !of) {
				fprintf(stderr, "the overlay answers the two results otherwise (%s) after:\n%s\n", err, json);
				path = BOTH_MISMATCH;
			}
			ovl_free(o);
			ovl_free(of);
			canon_free(&a);
			canon_free(&b);
		}
		cfg_free(full);
	} else if (r == 0 && full) {
		path = BOTH_FULL;
		cfg_free(*run);
		*run = full;
	} else {
		path = r == 0 ? BOTH_REJECTED : BOTH_MISMATCH;
	}
	if (out)
		*out = inc;
	else
		cfg_inc_release(&inc);
	cfg_errors_clear(&errs);
	cfg_json_free(&doc);
	free(buf);
	return path;
}
