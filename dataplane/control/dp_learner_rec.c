/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The learner's records (dp_learner_int.h): the half and QP1 records as the
 * schema writes them, batches of them through the apply path, and records
 * taken away again.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dp.h"
#include "dp_cluster_txn.h"
#include "dp_delta.h"
#include "dp_learner_int.h"

char dp_learner_last_error[256];

uint32_t
dp_learner_tenant_of_slot(const struct ovl *o, uint32_t slot)
{
	for (uint32_t t = 0; t < o->n_tenants; t++)
		if (o->tenants[t].slot == slot)
			return t;
	return OVL_NONE;
}

void
dp_learner_ip_of(struct ovl_ip *ip, const uint8_t *b, uint8_t alen)
{
	memset(ip, 0, sizeof(*ip));
	ip->ver = alen == 16 ? 6 : 4;
	memcpy(ip->b, b, alen);
}

const char *
dp_learner_ip_str(const struct ovl_ip *ip, char buf[CFG_IP_STRLEN])
{
	struct cfg_ip c = { 0 };

	c.ver = ip->ver;
	memcpy(c.b, ip->b, 16);
	return cfg_ip_str(&c, buf);
}

/* @s as a JSON string's contents (quotes, backslashes and control characters escaped), malloc'ed. */
static char *
json_str(const char *s)
{
	char *out = malloc(6 * strlen(s) + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			o += (size_t)sprintf(out + o, "\\%c", c);
		else if (c < 0x20)
			o += (size_t)sprintf(out + o, "\\u%04x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
	return out;
}

/*
 * Written directly, not through jansson: the learner spent a fifth of its
 * time packing and dumping objects that the apply path parses again at once.
 */
char *
dp_learner_half_json(const char *tenant, const struct ovl_ip *dst, uint32_t dqpn, uint32_t pqpn, uint8_t type,
		     const struct ovl_ip *src, uint32_t src_qpn, bool key_only)
{
	char d[CFG_IP_STRLEN], s[CFG_IP_STRLEN], p[24] = "", q[24] = "", *t = json_str(tenant), *txt = NULL;
	int n;

	if (!t)
		return NULL;
	if (pqpn)
		snprintf(p, sizeof(p), ",\"pqpn\":%" PRIu32, pqpn);
	if (src_qpn)
		snprintf(q, sizeof(q), ",\"vqpn\":%" PRIu32, src_qpn);
	n = key_only ? asprintf(&txt, "{\"tenant\":\"%s\",\"vip\":\"%s\",\"vqpn\":%" PRIu32 "%s}", t,
				dp_learner_ip_str(dst, d), dqpn, p) :
		       asprintf(&txt, "{\"tenant\":\"%s\",\"vip\":\"%s\",\"vqpn\":%" PRIu32 ",\"type\":\"%s\","
				"\"peer\":{\"vip\":\"%s\"%s}%s}", t, dp_learner_ip_str(dst, d), dqpn,
				type == CFG_QP_UC ? "uc" : "rc", dp_learner_ip_str(src, s), q, p);
	free(t);
	return n < 0 ? NULL : txt;
}

char *
dp_learner_gsi_json(const char *tenant, const struct ovl_ip *vip, uint32_t pqpn)
{
	char v[CFG_IP_STRLEN];
	json_t *r = json_pack("{s:s, s:s, s:i, s:s}", "tenant", tenant, "vip", dp_learner_ip_str(vip, v), "vqpn",
			      ROCE_GSI_QPN, "type", "ud");
	char *txt;

	if (!r)
		return NULL;
	if (pqpn)
		json_object_set_new(r, "pqpn", json_integer(pqpn));
	txt = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	return txt;
}

int
dp_learner_batch_add(struct batch *b, const char *rec)
{
	size_t need = b->len + strlen(rec) + 2;

	if (need > b->cap) {
		char *t = realloc(b->txt, need * 2);

		if (!t)
			return -1;
		b->txt = t;
		b->cap = need * 2;
	}
	b->len += (size_t)sprintf(b->txt + b->len, "%s%s", b->n ? "," : "", rec);
	b->n++;
	return 0;
}

int
dp_learner_apply(const char *op, const struct batch *b, bool *quota)
{
	struct dp_delta_report rep;
	char *buf = NULL;
	int rc, n;

	n = asprintf(&buf, "{\"%s\": {\"qps\": [%s]}}", op, b->txt ? b->txt : "");
	if (n < 0)
		return -1;
	rc = dp_delta_apply(buf, (size_t)n, &rep);
	if (rc < 0 && rep.rr.errs.n) {
		snprintf(dp_learner_last_error, sizeof(dp_learner_last_error), "%s: %s", op, rep.rr.errs.msg[0]);
		if (quota)
			*quota = strstr(rep.rr.errs.msg[0], "max_qps") != NULL;
	}
	dp_delta_report_free(&rep);
	free(buf);
	return rc;
}

int
dp_learner_apply_one(const char *op, const char *rec, bool *quota)
{
	struct batch b = { 0 };
	int rc = dp_learner_batch_add(&b, rec) == 0 ? dp_learner_apply(op, &b, quota) : -1;

	free(b.txt);
	return rc;
}

uint32_t
dp_learner_in_force(const struct ovl *o, const struct learned *l, uint32_t *t)
{
	const struct ovl_conn *cn;
	uint32_t v;

	*t = dp_learner_tenant_of_slot(o, l->tslot);
	if (*t == OVL_NONE)
		return OVL_NONE;
	v = ovl_lookup_tenant(o, *t, l->dst.b, l->dst.ver == 6 ? 16 : 4, l->dqpn);
	if (v == OVL_NONE || (v & OVL_V_QP))
		return OVL_NONE;
	cn = &o->conns[OVL_V_IDX(v)];
	/*
	 * A half, or the connection the record makes with its pair, from this
	 * source; a QP (another source's record) or another connection under the
	 * key is not the learner's.
	 */
	if (cn->half == OVL_HALF_OUT ||
	    (cn->half == OVL_HALF_NONE && !memcmp(cn->l_vip, l->src.b, l->src.ver == 6 ? 16 : 4)))
		return v;
	return OVL_NONE;
}

void
dp_learner_pair_write(struct learned *l)
{
	const struct ovl *o;
	char *rec = NULL;
	uint32_t t, q;

	pthread_mutex_lock(&dp.ctl_lock);
	o = dp.ovl;
	if (dp_learner_in_force(o, l, &t) == OVL_NONE ||
	    (q = ovl_lookup_qp(o, t, &l->dst, l->dqpn)) == OVL_NONE) {
		/* Not yet here (the owner's pqpn, the watch): the next sweep tries again. */
		pthread_mutex_unlock(&dp.ctl_lock);
		return;
	}
	if (o->qps[q].rate_bps) {
		/* An operator gave the record a cap: it is theirs now, not rewritten (it stays a half). */
		pthread_mutex_unlock(&dp.ctl_lock);
		l->paired = true;
		return;
	}
	rec = dp_learner_half_json(o->tenants[t].name, &l->dst, l->dqpn, o->qps[q].pqpn, o->qps[q].type, &l->src,
				   l->pair, false);
	pthread_mutex_unlock(&dp.ctl_lock);
	if (!rec)
		return;
	if (l->remote ? dp_cluster_learn_replace(l->key, rec) == 0 : dp_learner_apply_one("put", rec, NULL) == 0) {
		l->paired = true;
		dp_learn_st.paired++;
	}
	free(rec);
}

void
dp_learner_forget(struct learned *out)
{
	struct batch b = { 0 };
	uint32_t t;
	char *rec;

	pthread_mutex_lock(&dp.ctl_lock);
	for (struct learned *l = out; l; l = l->next)
		if (!l->remote && dp_learner_in_force(dp.ovl, l, &t) != OVL_NONE &&
		    (rec = dp_learner_half_json(dp.ovl->tenants[t].name, &l->dst, l->dqpn, 0, 0, NULL, 0, true))) {
			dp_learner_batch_add(&b, rec);
			free(rec);
		}
	pthread_mutex_unlock(&dp.ctl_lock);
	if (b.n)
		dp_learner_apply("delete", &b, NULL);
	free(b.txt);
	while (out) {
		struct learned *l = out;

		out = l->next;
		if (l->remote)
			dp_cluster_learn_delete(l->key);
		dp_learn_st.learned_now--;
		free(l->key);
		free(l);
	}
}
