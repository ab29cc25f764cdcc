/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The records of a delta (cfg_delta_int.h), below both of its halves and the
 * incremental path: the kinds' names, the key of a record and its hash, and
 * the report of an error about a record, by its path in the request or by
 * its key as it runs.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cfg_delta_int.h"
#include "cfg_util.h"

const char *const cfg_dl_kind_names[CFG_DK_N] = { "tenants", "endpoints", "qps", "mrs" };

uint32_t
cfg_dl_key_hash(int tenant, const struct cfg_ip *vip, uint32_t id)
{
	uint64_t h = cfg_hash_bytes(CFG_HASH_SEED, &tenant, sizeof(tenant));

	h = cfg_hash_bytes(h, &vip->ver, 1);
	h = cfg_hash_bytes(h, vip->b, vip->ver == CFG_IPV6 ? 16 : 4);
	return cfg_hash_final(cfg_hash_bytes(h, &id, sizeof(id)));
}

/* The key of record @i of the set of kind @k (not tenants). */
void
cfg_dl_rec_key(const struct cfg_dl_set *s, int k, uint32_t i, struct dl_key *key)
{
	const void *r = s->rec + (size_t)i * s->sz;

	if (k == CFG_DK_ENDPOINTS) {
		const struct cfg_endpoint *e = r;

		*key = (struct dl_key){ .tenant = e->tenant, .vip = e->vip, .id = 0 };
	} else if (k == CFG_DK_QPS) {
		const struct cfg_qp *q = r;

		*key = (struct dl_key){ .tenant = q->tenant, .vip = q->vip, .id = q->vqpn };
	} else {
		const struct cfg_mr *m = r;

		*key = (struct dl_key){ .tenant = m->tenant, .vip = m->vip, .id = m->rkey };
	}
}

void
cfg_dl_rec_err(struct cfg_dl *d, int k, uint32_t i, const char *field, const char *fmt, ...)
{
	const struct cfg_dl_set *s = &d->set[k];
	char msg[512], ips[CFG_IP_STRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->ld.dg.rank = 2;
	d->ld.dg.rec = s->origin[i] >= 0 ? s->origin[i] : 0;
	if (s->origin[i] >= 0) {
		struct cfg_path top = { .key = "put" };
		struct cfg_path sec = { .up = &top, .key = cfg_dl_kind_names[k] };
		struct cfg_path rec = { .up = &sec, .key = NULL, .idx = (uint32_t)s->origin[i] };
		struct cfg_path fp = { .up = &rec, .key = field };

		cfg_err(&d->ld.dg, field ? &fp : &rec, "%s", msg);
		return;
	}
	if (k == CFG_DK_TENANTS) {
		cfg_err_raw(&d->ld.dg, "%s: tenants{%s}%s%s: %s", d->ld.dg.name,
			    ((const struct cfg_tenant *)(s->rec + i * s->sz))->name, field ? "." : "",
			    field ? field : "", msg);
		return;
	}

	struct dl_key key;

	cfg_dl_rec_key(s, k, i, &key);
	if (k == CFG_DK_ENDPOINTS)
		cfg_err_raw(&d->ld.dg, "%s: endpoints{%s %s}%s%s: %s", d->ld.dg.name, d->s.tenants[key.tenant].name,
			    cfg_ip_str(&key.vip, ips), field ? "." : "", field ? field : "", msg);
	else
		cfg_err_raw(&d->ld.dg, "%s: %s{%s %s %s%u}%s%s: %s", d->ld.dg.name, cfg_dl_kind_names[k],
			    d->s.tenants[key.tenant].name, cfg_ip_str(&key.vip, ips), k == CFG_DK_MRS ? "0x" : "",
			    key.id, field ? "." : "", field ? field : "", msg);
}
