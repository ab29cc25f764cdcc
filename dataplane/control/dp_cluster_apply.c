/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd follower's reconcile (dp_cluster_rec.h): what changed in etcd
 * since the last one, and the records left out that wait on what changed,
 * into one delta batch.
 *
 * The batch holds the records that changed (rs.dirty) and, transitively, the
 * records left out earlier that wait on a name a change in the batch
 * touches (dp_rec_events(), rs.subs): a QP on its peer, a record on its
 * tenant and endpoint, a pqpn collision on its host's QPs.  A record that
 * stays bad is not sent again until then, so it costs later changes nothing
 * (before, every change sent every record left out, and a batch with one bad
 * record always took the whole path to name it).  After a delta applied by
 * another source (the socket, the learner), every record left out is tried
 * again with the next change.
 *
 * When the delta rejects the batch, the records its errors name (put.qps[3]
 * is the fourth QP put) are left out, reported and counted, and the rest is
 * tried again; a rejection that names no record of the batch leaves all of
 * it out.  A tenant or endpoint etcd deleted takes what hangs off it (its
 * endpoints, QPs and MRs) out of the running configuration too; those wait
 * for it.  A tenant the local file defines comes back as the file has it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_cluster_etcd.h"
#include "dp_cluster_rec.h"
#include "dp_cluster_rec_int.h"
#include "dp_delta.h"

#define kind_names dp_rec_kind_names

/*
 * True when @r is a QP whose peer etcd does not hold as a record that can be
 * applied yet: the peer's key is absent (a pair is often written in two
 * puts), or the peer has no pqpn (its owner is choosing one, or will once its
 * switch sees it).  Such a QP cannot be applied before its peer; it waits,
 * and is not counted as rejected.
 */
static bool
peer_waiting(const struct rec *r)
{
	json_t *peer = r->kind == K_QPS && r->want ? json_object_get(r->want, "peer") : NULL;
	json_t *vip = json_object_get(peer, "vip"), *vqpn = json_object_get(peer, "vqpn");
	char key[512], ips[CFG_IP_STRLEN];
	const struct rec *q;
	struct cfg_ip ip;

	if (!json_is_string(vip) || !(json_is_integer(vqpn) || json_is_string(vqpn)) ||
	    cfg_ip_parse(json_string_value(vip), &ip) || cfg_ip_format(&ip, ips, sizeof(ips)) < 0)
		return false;
	/* The key names the vip canonically and the vqpn in decimal; the record may give it as a "0x" string. */
	snprintf(key, sizeof(key), "%s/qps/%s/%s/%lld", rs.prefix, r->part[0], ips,
		 json_is_integer(vqpn) ? (long long)json_integer_value(vqpn) :
		 strtoll(json_string_value(vqpn), NULL, 0));
	q = dp_rec_get(key, false);
	return !q || !q->want || !json_object_get(q->want, "pqpn");
}

/*
 * One entry of a batch: record @i put (del false) or deleted; @put, when
 * set, is put instead of its value (a tenant the file defines, back when
 * etcd deletes its own); @cascade: deleted because what it hangs off went.
 */
struct entry {
	uint32_t i;
	bool del, out, cascade;
	json_t *put;
};

/* The entry that "put.qps[3]" or "delete.mrs[0]" in @msg names, or -1. */
static int
entry_named(const struct entry *e, uint32_t n, const char *msg)
{
	for (int del = 0; del < 2; del++)
		for (int k = 0; k < K_N; k++) {
			char pat[32];
			const char *p;
			unsigned idx, seen = 0;

			snprintf(pat, sizeof(pat), "%s.%s[", del ? "delete" : "put", kind_names[k]);
			if (!(p = strstr(msg, pat)) || sscanf(p + strlen(pat), "%u", &idx) != 1)
				continue;
			for (uint32_t j = 0; j < n; j++) {
				if (e[j].out || e[j].del != (bool)del || rs.r[e[j].i].kind != k)
					continue;
				if (seen++ == idx)
					return (int)j;
			}
		}
	return -1;
}

/*
 * The record of the map that an error names by its key, as the checks
 * between records do ("request: qps{blue 192.168.1.10 17}.peer: ..."), or
 * NULL.
 */
static struct rec *
rec_named(const char *msg)
{
	char kind[16], a[128], b[128], c[32], key[512];
	const char *p = strstr(msg, ": ");
	int k;

	if (!p || sscanf(p + 2, "%15[a-z]{%127[^ }] %127[^ }] %31[^ }]}", kind, a, b, c) != 4)
		return NULL;
	for (k = 0; k < K_N && strcmp(kind, kind_names[k]); k++)
		;
	if (k != K_QPS && k != K_MRS)
		return NULL;
	snprintf(key, sizeof(key), "%s/%s/%s/%s/%s", rs.prefix, kind, a, b, c);
	return dp_rec_get(key, false);
}

/* The put of the batch whose record an error names by its key, or -1. */
static int
entry_keyed(const struct entry *e, uint32_t n, const char *msg)
{
	const struct rec *r = rec_named(msg);

	for (uint32_t j = 0; r && j < n; j++)
		if (!e[j].out && !e[j].del && e[j].i == (uint32_t)(r - rs.r))
			return (int)j;
	return -1;
}

/* The record of the map an error names by its key when it is applied and not in the batch; or -1. */
static int
running_named(const struct entry *e, uint32_t n, const char *msg)
{
	const struct rec *r = rec_named(msg);

	if (!r || !r->applied)
		return -1;
	for (uint32_t j = 0; j < n; j++)
		if (e[j].i == (uint32_t)(r - rs.r))
			return -1;
	return (int)(r - rs.r);
}

/* The field an error names after the record ("put.qps[3].pqpn: ..." gives "pqpn"), into @f. */
static void
error_field(const char *msg, char *f, size_t n)
{
	const char *p = strstr(msg, "].");
	size_t k = 0;

	if (!p || (strstr(msg, "}.") && strstr(msg, "}.") < p))
		p = strstr(msg, "}.");
	if (p)
		for (p += 2; *p && *p != ':' && *p != ' ' && k + 1 < n; p++)
			f[k++] = *p;
	f[k] = 0;
}

/* A growing list of record indices, each at most once (by struct rec's cand). */
struct ilist {
	uint32_t *i, n, cap;
};

/* Room for one more of @n elements of @size at *@a (capacity *@cap); false when out of memory. */
static bool
room(void **a, uint32_t n, uint32_t *cap, size_t size)
{
	void *g;

	if (n < *cap)
		return true;
	g = realloc(*a, size * (*cap ? *cap * 2 : 64));
	if (!g)
		return false;
	*a = g;
	*cap = *cap ? *cap * 2 : 64;
	return true;
}

static bool
ilist_push(struct ilist *l, uint32_t i)
{
	if (!room((void **)&l->i, l->n, &l->cap, sizeof(*l->i)))
		return false;
	l->i[l->n++] = i;
	return true;
}

static void
cand_add(struct ilist *c, struct rec *r)
{
	if (!r->cand && ilist_push(c, (uint32_t)(r - rs.r)))
		r->cand = true;
}

/* True when a delta of another source was applied since this follower last looked. */
static bool
others_applied(void)
{
	uint64_t now;

	pthread_mutex_lock(&dp.ctl_lock);
	now = dp_delta_totals.applied;
	pthread_mutex_unlock(&dp.ctl_lock);
	if (now == rs.deltas_seen)
		return false;
	rs.deltas_seen = now;
	return true;
}

/* The records to reconcile: those changed, and those left out that wait on what they touch. */
static void
candidates(struct ilist *c)
{
	json_t *ev = json_object();
	bool others = others_applied();

	if (rs.all || others) {
		for (uint32_t i = 0; i < rs.n; i++)
			if (dp_rec_needs(&rs.r[i]))
				cand_add(c, &rs.r[i]);
	} else {
		for (uint32_t d = 0; d < rs.n_dirty; d++)
			if (dp_rec_needs(&rs.r[rs.dirty[d]]))
				cand_add(c, &rs.r[rs.dirty[d]]);
	}
	rs.all = false;
	for (uint32_t k = 0; ev && k < c->n; k++) {
		json_t *mine = json_object(), *v, *set, *x;
		const char *name, *key;

		dp_rec_events(&rs.r[c->i[k]], mine);
		json_object_foreach(mine, name, v) {
			if (json_object_get(ev, name))
				continue;
			json_object_set_new(ev, name, json_null());
			set = json_object_get(rs.subs, name);
			json_object_foreach(set, key, x) {
				struct rec *r = dp_rec_get(key, false);

				if (r && dp_rec_needs(r))
					cand_add(c, r);
			}
		}
		json_decref(mine);
	}
	json_decref(ev);
}

/* The tenant record @name as the local file has it (a new reference), or NULL. */
static json_t *
file_tenant(const char *name)
{
	char path[4096];
	json_t *f, *t, *found = NULL;
	size_t i;

	pthread_mutex_lock(&dp.ctl_lock);
	snprintf(path, sizeof(path), "%s", dp.config_path ? dp.config_path : "");
	pthread_mutex_unlock(&dp.ctl_lock);
	f = *path ? json_load_file(path, 0, NULL) : NULL;
	json_array_foreach(json_object_get(f, "tenants"), i, t) {
		const char *n = json_string_value(json_object_get(t, "name"));

		if (n && !strcmp(n, name) && !found)
			found = json_incref(t);
	}
	json_decref(f);
	return found;
}

struct batch {
	struct entry *e;
	uint32_t n, cap;
};

static bool
entry_push(struct batch *b, struct entry x)
{
	if (!room((void **)&b->e, b->n, &b->cap, sizeof(*b->e)))
		return false;
	b->e[b->n++] = x;
	return true;
}

/*
 * A tenant or endpoint deleted by the batch: the running records that hang
 * off it (its tenant's, or its vip's QPs and MRs) and are not in the batch
 * leave with it, and wait for it.
 */
static void
cascade(struct batch *b, struct ilist *c, uint32_t j0)
{
	const struct rec *g = &rs.r[b->e[j0].i];
	uint32_t count = 0;

	for (uint32_t i = 0; i < rs.n; i++) {
		struct rec *r = &rs.r[i];

		if (!r->applied || r->cand || r->kind == K_TENANTS || strcmp(r->part[0], g->part[0]) ||
		    (g->kind == K_ENDPOINTS && (r->kind == K_ENDPOINTS || strcmp(r->part[1], g->part[1]))))
			continue;
		cand_add(c, r);
		if (r->cand && entry_push(b, (struct entry){ i, true, false, true, NULL }))
			count++;
	}
	if (count)
		dp_cluster_error("%s: deleted in etcd: %u record%s of %s %s out of the running configuration, "
				 "waiting for it", g->key, count, count > 1 ? "s" : "", g->part[0],
				 count > 1 ? "are" : "is");
}

/* The batch of the candidates: puts, deletes, what deletes take with them. */
static void
batch_build(struct batch *b, struct ilist *c)
{
	uint32_t n0 = c->n;

	for (uint32_t k = 0; k < n0; k++) {
		struct rec *r = &rs.r[c->i[k]];

		r->field[0] = 0;
		if (!r->want) {
			json_t *ft = r->kind == K_TENANTS ? file_tenant(r->part[0]) : NULL;

			entry_push(b, (struct entry){ c->i[k], !ft, false, false, ft });
			continue;
		}
		r->waiting = false;
		if (r->kind == K_QPS && !json_object_get(r->want, "pqpn") && !dp_rec_pqpn_allocate(r)) {
			/* Its owner chooses the pqpn (or none was free): it waits for the record with one. */
			snprintf(r->field, sizeof(r->field), "%s", r->rejected_rev == r->mod_rev ? "pqpn" : "owner");
			continue;
		}
		entry_push(b, (struct entry){ c->i[k], false, false, false, NULL });
	}
	for (uint32_t j = 0, n = b->n; j < n; j++)
		if (b->e[j].del && rs.r[b->e[j].i].kind != K_QPS && rs.r[b->e[j].i].kind != K_MRS)
			cascade(b, c, j);
}

/* The delta request of the batch's entries not left out. */
static char *
batch_request(const struct batch *b)
{
	json_t *req = json_object(), *put = json_object(), *del = json_object();
	char *text;

	for (int k = 0; k < K_N; k++) {
		json_t *pa = json_array(), *da = json_array();

		for (uint32_t j = 0; j < b->n; j++) {
			const struct entry *x = &b->e[j];
			const struct rec *r = &rs.r[x->i];

			if (x->out || r->kind != k)
				continue;
			if (!x->del) {
				json_array_append(pa, x->put ? x->put : r->want);
				continue;
			}
			json_t *key = json_object();

			json_object_set(key, k == K_TENANTS ? "name" : "tenant",
					json_object_get(r->applied, k == K_TENANTS ? "name" : "tenant"));
			if (k != K_TENANTS)
				json_object_set(key, "vip", json_object_get(r->applied, "vip"));
			if (k == K_QPS)
				json_object_set(key, "vqpn", json_object_get(r->applied, "vqpn"));
			if (k == K_MRS)
				json_object_set(key, "rkey", json_object_get(r->applied, "rkey"));
			json_array_append_new(da, key);
		}
		json_object_set_new(put, kind_names[k], pa);
		json_object_set_new(del, kind_names[k], da);
	}
	json_object_set_new(req, "put", put);
	json_object_set_new(req, "delete", del);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	return text;
}

/* The batch is in force: each record's applied value follows. */
static void
batch_done(struct batch *b, uint32_t left)
{
	for (uint32_t j = 0; j < b->n; j++) {
		struct rec *r = &rs.r[b->e[j].i];

		if (b->e[j].out)
			continue;
		json_decref(r->applied);
		/* A tenant put back as the file has it is not etcd's any more. */
		r->applied = b->e[j].del || b->e[j].put ? NULL : json_incref(r->want);
		r->waiting = b->e[j].cascade;
	}
	rs.deltas_seen++;
	pthread_mutex_lock(&dp_cluster_st.lock);
	dp_cluster_st.applied += left;
	pthread_mutex_unlock(&dp_cluster_st.lock);
}

/*
 * The batch was rejected with @rep: leave out what the errors name (with
 * nothing named, all of it), or take out running records it breaks.  The
 * entries still in, or 0.
 */
static uint32_t
batch_leave_out(struct batch *b, struct ilist *c, const struct dp_delta_report *rep)
{
	uint32_t named = 0, suspended = 0, left = 0, n = b->n;
	int *hit = malloc(sizeof(*hit) * (rep->rr.errs.n + 1));

	/* Every error is matched against the batch as it was sent ("put.qps[3]" counts the entries sent). */
	for (uint32_t m = 0; hit && m < rep->rr.errs.n; m++) {
		hit[m] = entry_named(b->e, n, rep->rr.errs.msg[m]);
		if (hit[m] < 0)
			hit[m] = entry_keyed(b->e, n, rep->rr.errs.msg[m]);
	}
	for (uint32_t m = 0; hit && m < rep->rr.errs.n; m++) {
		const char *msg = rep->rr.errs.msg[m];
		struct rec *r;

		if (hit[m] < 0)
			continue;
		r = &rs.r[b->e[hit[m]].i];
		error_field(msg, r->field, sizeof(r->field));
		/* Half of a pair whose other half etcd does not hold yet is not bad: it waits. */
		if (strstr(msg, ".peer: ") && peer_waiting(r))
			r->waiting = true;
		else
			dp_rec_reject(r, "%s", msg);
		named += !b->e[hit[m]].out;
		b->e[hit[m]].out = true;
	}
	free(hit);
	/*
	 * A running record that the batch breaks (a QP whose peer etcd deleted)
	 * is taken out of the running configuration too, so that nothing
	 * forwards under a mapping etcd no longer holds; it waits, and comes
	 * back once it is valid again.
	 */
	for (uint32_t m = 0; !named && m < rep->rr.errs.n; m++) {
		int j = running_named(b->e, b->n, rep->rr.errs.msg[m]);

		if (j >= 0 && entry_push(b, (struct entry){ (uint32_t)j, true, false, true, NULL })) {
			cand_add(c, &rs.r[j]);
			error_field(rep->rr.errs.msg[m], rs.r[j].field, sizeof(rs.r[j].field));
			suspended++;
		}
	}
	if (!named && !suspended)
		for (uint32_t j = 0; j < b->n; j++)
			if (!b->e[j].out) {
				dp_rec_reject(&rs.r[b->e[j].i], "%s", rep->rr.errs.n ? rep->rr.errs.msg[0] : "rejected");
				b->e[j].out = true;
			}
	for (uint32_t j = 0; j < b->n; j++)
		left += !b->e[j].out;
	return left;
}

void
dp_cluster_rec_reconcile(void)
{
	struct ilist c = { 0 };
	struct batch b = { 0 };
	uint32_t left;

	candidates(&c);
	batch_build(&b, &c);
	for (left = b.n; left;) {
		struct dp_delta_report rep;
		char *text = batch_request(&b);
		int rc;

		if (!text)
			break;
		rc = dp_delta_apply(text, strlen(text), &rep);
		free(text);
		if (rc == 0)
			batch_done(&b, left);
		left = rc == 0 ? 0 : batch_leave_out(&b, &c, &rep);
		dp_delta_report_free(&rep);
	}
	for (uint32_t j = 0; j < b.n; j++)
		json_decref(b.e[j].put);
	free(b.e);
	dp_rec_write_backs(c.i, c.n);
	/* What waits now waits on what can change it; the changed and the tried go if etcd has them no more. */
	for (uint32_t d = 0; d < rs.n_dirty; d++) {
		rs.r[rs.dirty[d]].dirty = false;
		if (!rs.r[rs.dirty[d]].cand)
			ilist_push(&c, rs.dirty[d]);
	}
	rs.n_dirty = 0;
	for (uint32_t k = 0; k < c.n; k++) {
		struct rec *r = &rs.r[c.i[k]];

		r->cand = false;
		dp_rec_pending(r, dp_rec_needs(r));
	}
	dp_rec_compact(c.i, c.n);
	free(c.i);

	uint64_t waiting = 0;

	for (uint32_t i = 0; i < rs.n; i++)
		waiting += rs.r[i].waiting && rs.r[i].want && rs.r[i].applied != rs.r[i].want;
	pthread_mutex_lock(&dp_cluster_st.lock);
	dp_cluster_st.waiting = waiting;
	dp_cluster_st.records = rs.n;
	pthread_mutex_unlock(&dp_cluster_st.lock);
}
