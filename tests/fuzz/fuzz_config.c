/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the configuration loader on arbitrary bytes, and the
 * overlay built from whatever it accepts.
 *
 * cfg_load_string() must either return a configuration or explain itself:
 * at least one error line, every line naming the file (DESIGN.md: a syntax
 * error names file:line:col, a semantic error the file and the JSON path).
 * A configuration it returns goes through ovl_build(), which must either
 * build or say why, and never call something a duplicate that the loader
 * let through (uniqueness is the loader's to check); a built overlay must
 * find each of its connections by the keys the packet paths use: (tenant,
 * R's vIP, R's vQPN) on the tenant side and (L's host IP, L's pQPN) on the
 * fabric side, find each XRC SRQ by its endpoint's vsrqn (and a local one
 * by its host's psrqn), and translate the first byte of each memory window.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "ovl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

/*
 * The libraries under test are built with UBSan's default recovery: make
 * its first report fatal, so that libFuzzer keeps the input.
 */
const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

#define NAME "fuzz.json"

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_config: invariant broken: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static void
overlay_check(const struct ovl *o)
{
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];
		const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
		const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];
		uint32_t v;

		v = ovl_lookup_tenant(o, c->tenant, re->vip.b, re->vip.ver == 6 ? 16 : 4, r->vqpn);
		CHECK(v == (OVL_V_CONN | i), "conns[%u]: tenant-side lookup gives %#x", i, v);
		v = ovl_lookup_fabric(o, le->host.b, le->host.ver == 6 ? 16 : 4, l->pqpn);
		CHECK(v == (OVL_V_CONN | i), "conns[%u]: fabric-side lookup gives %#x", i, v);
		CHECK(l->tenant == c->tenant && r->tenant == c->tenant, "conns[%u]: tenants differ", i);
		CHECK(c->l_port < o->n_ports && !o->ports[c->l_port].uplink &&
		      o->ports[c->l_port].tenant == c->tenant, "conns[%u]: L's port is not its tenant's", i);
	}
	for (uint32_t i = 0; i < o->n_srqs; i++) {
		const struct ovl_srq *q = &o->srqs[i];
		const struct ovl_endpoint *e = &o->endpoints[q->endpoint];
		unsigned len = e->vip.ver == 6 ? 16 : 4;
		uint32_t v;

		/* Every XRC SRQ is found by its endpoint's vsrqn, a local one also by its host's psrqn. */
		v = ovl_lookup_srq_tenant(o, e->tenant, e->vip.b, len, q->vsrqn);
		CHECK(v == i, "srqs[%u]: tenant-side lookup gives %#x", i, v);
		v = ovl_lookup_srq_fabric(o, e->host.b, len, q->psrqn);
		CHECK(e->local ? v == i : v == OVL_NONE,
		      "srqs[%u]: fabric-side lookup gives %#x", i, v);
	}
	for (uint32_t i = 0; i < o->n_mrs; i++) {
		const struct ovl_mr *m = &o->mrs[i];
		const struct ovl_endpoint *e = &o->endpoints[m->endpoint];
		uint32_t rkey;
		uint64_t va;

		CHECK(e->local, "mrs[%u]: kept for a remote endpoint", i);
		/* The first byte of every window translates to its target. */
		CHECK(ovl_mr_translate(o, m->tenant, e->vip.b, e->vip.ver == 6 ? 16 : 4, m->rkey, m->addr, 1,
				       m->access, &rkey, &va) == OVL_MR_OK &&
		      rkey == m->target_rkey && va == m->target_addr,
		      "mrs[%u]: its own first byte does not translate", i);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg_errors errs;
	struct cfg *c;
	char *text = malloc(size + 1), err[512] = "";

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	memset(&errs, 0, sizeof(errs));
	c = cfg_load_string(text, NAME, &errs);
	if (!c) {
		CHECK(errs.n > 0, "rejected without a word");
		for (uint32_t i = 0; i < errs.n; i++)
			CHECK(errs.msg[i] && !strncmp(errs.msg[i], NAME, strlen(NAME)),
			      "error %u does not name the file: %s", i, errs.msg[i] ? errs.msg[i] : "(null)");
	} else {
		struct ovl *o = ovl_build(c, err, sizeof(err));

		if (o) {
			overlay_check(o);
		} else {
			CHECK(err[0], "ovl_build failed without a word");
			/*
			 * Uniqueness is the loader's to check: an overlay that finds a
			 * duplicate the loader let through keys two things alike.
			 */
			CHECK(!strstr(err, "duplicate"), "the loader accepted what the overlay calls a duplicate: %s",
			      err);
		}
		ovl_free(o);
		cfg_free(c);
	}
	cfg_errors_clear(&errs);
	free(text);
	return 0;
}
