/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The invariant between the configuration's two JSON parsers
 * (config/cfg_json.c): whatever the fast parser accepts, jansson accepts as
 * the same document, node for node; whatever jansson rejects, the fast parser
 * rejects.  Shared by tests/config/test_json.c and tests/fuzz/fuzz_json.c.
 */
#ifndef JSON_SAME_H
#define JSON_SAME_H

#include <stdbool.h>
#include <string.h>

#include "cfg_json.h"

static bool
json_same(const struct cfg_jv *a, const struct cfg_jv *b)
{
	if (a->type != b->type || a->n != b->n || (a->key == NULL) != (b->key == NULL) ||
	    (a->key && strcmp(a->key, b->key)))
		return false;
	switch (a->type) {
	case CFG_JNULL:
		return true;
	case CFG_JBOOL:
		return a->v.u == b->v.u;
	case CFG_JINT:
		return a->v.u == b->v.u && a->neg == b->neg;
	case CFG_JREAL:
		return memcmp(&a->v.d, &b->v.d, sizeof(double)) == 0;
	case CFG_JSTR:
		return memcmp(a->v.s, b->v.s, a->n + 1) == 0;
	default:
		for (uint32_t i = 0; i < a->n; i++)
			if (!json_same(&a->v.kid[i], &b->v.kid[i]))
				return false;
		return true;
	}
}

/*
 * Parse @len bytes at @text with both parsers.  Returns 0 when the invariant
 * holds, and sets *@fast_took when the fast parser answered by itself.
 */
static int
json_parsers_agree(const char *text, size_t len, bool *fast_took)
{
	struct cfg_jdoc f, j;
	struct cfg_jerr e;
	int rf = cfg_json_parse_fast(text, len, &f);
	int rj = cfg_json_parse_jansson(text, len, &j, &e);
	int bad = 0;

	if (rf == 0 && (rj != 0 || !json_same(f.root, j.root)))
		bad = 1;
	*fast_took = rf == 0;
	if (rf == 0)
		cfg_json_free(&f);
	if (rj == 0)
		cfg_json_free(&j);
	return bad;
}

#endif
