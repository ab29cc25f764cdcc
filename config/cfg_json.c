/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON through jansson, flattened into the loader's read-only nodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cfg_json.h"

/* What cfg_jdoc.chunks holds. */
struct jdoc_store {
	json_t *root;
	struct cfg_jv *nodes;
};

static size_t
count_nodes(json_t *v)
{
	size_t n = 1, i;
	const char *key;
	json_t *kid;

	if (json_is_array(v))
		json_array_foreach(v, i, kid)
			n += count_nodes(kid);
	else if (json_is_object(v))
		json_object_foreach(v, key, kid)
			n += count_nodes(kid);
	return n;
}

/* Fill @dst from @v; the children of containers go at *@next onwards. */
static void
flatten(json_t *v, struct cfg_jv *dst, struct cfg_jv **next)
{
	const char *key;
	json_t *kid;
	size_t i;

	memset(dst, 0, sizeof(*dst));
	switch (json_typeof(v)) {
	case JSON_NULL:
		dst->type = CFG_JNULL;
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		dst->type = CFG_JBOOL;
		dst->v.u = json_is_true(v);
		break;
	case JSON_INTEGER: {
		json_int_t x = json_integer_value(v);

		dst->type = CFG_JINT;
		dst->neg = x < 0;
		dst->v.u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
		break;
	}
	case JSON_REAL:
		dst->type = CFG_JREAL;
		dst->v.d = json_real_value(v);
		break;
	case JSON_STRING:
		dst->type = CFG_JSTR;
		dst->v.s = json_string_value(v);
		dst->n = (uint32_t)json_string_length(v);
		break;
	case JSON_ARRAY: {
		struct cfg_jv *kids = *next;

		dst->type = CFG_JARR;
		dst->n = (uint32_t)json_array_size(v);
		dst->v.kid = kids;
		*next += dst->n;
		json_array_foreach(v, i, kid)
			flatten(kid, &kids[i], next);
		break;
	}
	case JSON_OBJECT: {
		struct cfg_jv *kids = *next;

		dst->type = CFG_JOBJ;
		dst->n = (uint32_t)json_object_size(v);
		dst->v.kid = kids;
		*next += dst->n;
		i = 0;
		/* jansson keeps members in insertion order, which is file order. */
		json_object_foreach(v, key, kid) {
			flatten(kid, &kids[i], next);
			kids[i++].key = key;
		}
		break;
	}
	}
}

int
cfg_json_parse(char *buf, size_t len, struct cfg_jdoc *doc, struct cfg_jerr *err)
{
	struct jdoc_store *st;
	json_error_t je;
	json_t *root;
	struct cfg_jv *next;

	doc->root = NULL;
	doc->chunks = NULL;
	/* A string value may hold "\u0000" only if asked: it is not allowed here. */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		err->line = je.line;
		err->col = je.column;
		snprintf(err->text, sizeof(err->text), "%s", je.text);
		return -1;
	}
	st = calloc(1, sizeof(*st));
	if (st)
		st->nodes = malloc(sizeof(*st->nodes) * count_nodes(root));
	if (!st || !st->nodes) {
		free(st);
		json_decref(root);
		err->line = err->col = 0;
		snprintf(err->text, sizeof(err->text), "out of memory");
		return -1;
	}
	st->root = root;
	next = st->nodes + 1;
	flatten(root, st->nodes, &next);
	doc->root = st->nodes;
	doc->chunks = st;
	return 0;
}

void
cfg_json_free(struct cfg_jdoc *doc)
{
	struct jdoc_store *st = doc->chunks;

	if (st) {
		json_decref(st->root);
		free(st->nodes);
		free(st);
	}
	doc->chunks = NULL;
	doc->root = NULL;
}

const struct cfg_jv *
cfg_j_get(const struct cfg_jv *o, const char *key)
{
	if (!cfg_j_is_obj(o))
		return NULL;
	for (uint32_t i = 0; i < o->n; i++)
		if (strcmp(o->v.kid[i].key, key) == 0)
			return &o->v.kid[i];
	return NULL;
}
