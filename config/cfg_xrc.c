/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC SRQs: the "xrc_srqs" of an endpoint record (cfg_rec.h) and the index
 * of physical SRQ numbers per host (cfg_xrc.h).
 */
#include <inttypes.h>

#include "cfg_rec.h"
#include "cfg_util.h"
#include "cfg_xrc.h"

static const struct cfg_field srq_fields[] = {
	CFG_FIELD(struct cfg_xrc_srq, "vsrqn", CFG_F_UINT, CFG_REQUIRED, vsrqn, .max = CFG_SRQN_MAX),
	CFG_FIELD(struct cfg_xrc_srq, "psrqn", CFG_F_UINT, CFG_REQUIRED, psrqn, .max = CFG_SRQN_MAX),
};

void
cfg_endpoint_srqs_parse(struct cfg_ld *ld, const struct cfg_rec *r)
{
	struct cfg_endpoint *e = &ld->c->endpoints[r->i];
	struct cfg_path kp = { .up = &r->path, .key = "xrc_srqs" };
	const struct cfg_jv *v;

	e->n_xrc_srqs = 0;
	if (!(r->ok & CFG_BIT(CFG_E_XRC_SRQS)))
		return;
	v = cfg_j_get(r->obj, "xrc_srqs");
	if (v->n > CFG_XRC_SRQS_MAX) {
		cfg_err(&ld->dg, &kp, "%zu SRQs: at most %u per endpoint", (size_t)v->n, CFG_XRC_SRQS_MAX);
		return;
	}
	for (uint32_t i = 0; i < v->n; i++) {
		struct cfg_path sp = { .up = &kp, .key = NULL, .idx = i };
		const struct cfg_jv *o = cfg_j_at(v, i);
		struct cfg_xrc_srq *q = &e->xrc_srqs[e->n_xrc_srqs];
		uint64_t ok, present;
		bool dup = false;

		if (!cfg_j_is_obj(o)) {
			cfg_err(&ld->dg, &sp, "expected an object");
			continue;
		}
		ok = cfg_obj_parse(&ld->dg, o, &sp, srq_fields, CFG_DIM(srq_fields), q, &present);
		if (ok != 3 || ok != present)
			continue;
		for (uint32_t j = 0; j < e->n_xrc_srqs && !dup; j++) {
			if (e->xrc_srqs[j].vsrqn == q->vsrqn) {
				CFG_REC_ERR(ld, &sp, "vsrqn", "%" PRIu32 " is already an SRQ of this endpoint "
					    "(xrc_srqs[%" PRIu32 "])", q->vsrqn, j);
				dup = true;
			} else if (e->xrc_srqs[j].psrqn == q->psrqn) {
				CFG_REC_ERR(ld, &sp, "psrqn", "%" PRIu32 " is already used by xrc_srqs[%" PRIu32 "]",
					    q->psrqn, j);
				dup = true;
			}
		}
		if (!dup)
			e->n_xrc_srqs++;
	}
}

struct srq_key {
	const struct cfg_ip *host;
	uint32_t psrqn;
};

static bool
srq_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct cfg_endpoint *e = &((const struct cfg_srq_index *)ctx)->c->endpoints[idx / CFG_XRC_SRQS_MAX];
	const struct srq_key *k = key;

	return e->xrc_srqs[idx % CFG_XRC_SRQS_MAX].psrqn == k->psrqn && cfg_ip_equal(&e->host, k->host);
}

int
cfg_srq_index_init(struct cfg_srq_index *x, const struct cfg *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->n_endpoints; i++)
		n += c->endpoints[i].n_xrc_srqs;
	x->c = c;
	return cfg_htab_init(&x->h, n);
}

void
cfg_srq_index_free(struct cfg_srq_index *x)
{
	cfg_htab_free(&x->h);
}

int
cfg_srq_index_claim(struct cfg_srq_index *x, uint32_t ep, uint32_t s, uint32_t *hep, uint32_t *hs)
{
	const struct cfg_endpoint *e = &x->c->endpoints[ep];
	struct srq_key k = { &e->host, e->xrc_srqs[s].psrqn };
	uint64_t h = cfg_hash_bytes(CFG_HASH_SEED, &e->host.ver, 1);
	int64_t j;

	h = cfg_hash_bytes(h, e->host.b, e->host.ver == CFG_IPV6 ? 16 : 4);
	h = cfg_hash_bytes(h, &k.psrqn, sizeof(k.psrqn));
	j = cfg_htab_lookup(&x->h, cfg_hash_final(h), srq_match, x, &k);
	if (j >= 0) {
		*hep = (uint32_t)j / CFG_XRC_SRQS_MAX;
		*hs = (uint32_t)j % CFG_XRC_SRQS_MAX;
		return 1;
	}
	return cfg_htab_add(&x->h, cfg_hash_final(h), ep * CFG_XRC_SRQS_MAX + s) < 0 ? -1 : 0;
}

void
cfg_check_endpoint_srqs(struct cfg_ld *ld, const struct cfg_path *p)
{
	const struct cfg *c = ld->c;
	struct cfg_srq_index x;
	char ips[CFG_IP_STRLEN];

	if (cfg_srq_index_init(&x, c) < 0) {
		ld->dg.oom = true;
		return;
	}
	for (uint32_t i = 0; i < c->n_endpoints && !ld->dg.oom; i++) {
		const struct cfg_endpoint *e = &c->endpoints[i];
		struct cfg_path rp = { .up = p, .key = NULL, .idx = i };
		struct cfg_path kp = { .up = &rp, .key = "xrc_srqs" };

		if (!(ld->ep_ok[i] & CFG_BIT(CFG_E_HOST)))
			continue;
		ld->dg.rec = (int)i;
		for (uint32_t s = 0; s < e->n_xrc_srqs; s++) {
			struct cfg_path sp = { .up = &kp, .key = NULL, .idx = s };
			uint32_t hep, hs;
			int r = cfg_srq_index_claim(&x, i, s, &hep, &hs);

			if (r < 0)
				ld->dg.oom = true;
			else if (r > 0)
				CFG_REC_ERR(ld, &sp, "psrqn", "%" PRIu32 " is already used on host %s by "
					    "endpoints[%" PRIu32 "].xrc_srqs[%" PRIu32 "]", e->xrc_srqs[s].psrqn,
					    cfg_ip_str(&e->host, ips), hep, hs);
		}
	}
	cfg_srq_index_free(&x);
}
