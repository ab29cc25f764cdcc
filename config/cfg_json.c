/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON to the loader's read-only nodes: a fast strict parser for the
 * documents it is sure of, and jansson, flattened, for everything else.
 *
 * Why not jansson alone: it builds a tree of separately allocated values and
 * hashed objects, about 10 MB/s here, so a 100 000-QP file (16 MB) took 1.2 s
 * to parse before any check ran (docs/BENCHMARKS.md, bench-cfg-load, which
 * also measures json-c, cJSON, yajl, jsmn and simdjson on the same text).
 * The nodes the loader wants are simpler than any of those trees; building
 * them in one pass costs a fraction.  jansson stays the reference: it
 * decides every document the fast parser is unsure of, and writes every
 * error message, so what is accepted and what is said did not change.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cfg_json.h"

/* The node chunks of a fast document: each container's members are contiguous in one. */
struct jchunk {
	struct jchunk *next;
	uint32_t used, cap;
	struct cfg_jv nodes[];
};

/* What cfg_jdoc.chunks holds. */
struct jdoc_store {
	json_t *root;           /* jansson's tree, or NULL */
	struct cfg_jv *nodes;   /* jansson's flattened nodes */
	struct jchunk *chunks;  /* the fast parser's nodes */
	char *strings;          /* the fast parser's strings and keys, unescaped */
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
cfg_json_parse_jansson(const char *buf, size_t len, struct cfg_jdoc *doc, struct cfg_jerr *err)
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

/* ---- the fast parser ---- */

#define JF_MAX_DEPTH 256
#define JF_CHUNK 65536u

struct jframe {
	uint8_t type;           /* CFG_JARR or CFG_JOBJ */
	uint32_t base;          /* its first member's place on the value stack */
	const char *key;        /* its own key, when it is a member */
};

struct jf {
	const char *p, *end;
	struct jdoc_store *st;
	char *s;                /* next free byte of st->strings */
	struct cfg_jv *vals;    /* finished values waiting for their container */
	uint32_t nvals, capvals;
	struct jframe fr[JF_MAX_DEPTH];
	unsigned depth;
};

static inline void
jf_ws(struct jf *f)
{
	while (f->p < f->end && (*f->p == ' ' || *f->p == '\n' || *f->p == '\t' || *f->p == '\r'))
		f->p++;
}

/* @n contiguous nodes that stay where they are. */
static struct cfg_jv *
jf_nodes(struct jf *f, uint32_t n)
{
	struct jchunk *c = f->st->chunks;

	if (!c || c->cap - c->used < n) {
		uint32_t cap = n > JF_CHUNK ? n : JF_CHUNK;

		c = malloc(sizeof(*c) + (size_t)cap * sizeof(c->nodes[0]));
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = f->st->chunks;
		f->st->chunks = c;
	}
	c->used += n;
	return &c->nodes[c->used - n];
}

static int
jf_push(struct jf *f, const struct cfg_jv *v)
{
	if (f->nvals == f->capvals) {
		uint32_t cap = f->capvals ? 2 * f->capvals : 1024;
		struct cfg_jv *g = realloc(f->vals, (size_t)cap * sizeof(*g));

		if (!g)
			return -1;
		f->vals = g;
		f->capvals = cap;
	}
	f->vals[f->nvals++] = *v;
	return 0;
}

static int
hex4(const char *p, uint32_t *out)
{
	uint32_t u = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		u <<= 4;
		if (c >= '0' && c <= '9')
			u |= (uint32_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			u |= (uint32_t)((c | 0x20) - 'a' + 10);
		else
			return -1;
	}
	*out = u;
	return 0;
}

/* The string at f->p (its opening quote), unescaped into the string area. */
static const char *
jf_string(struct jf *f, uint32_t *len)
{
	const char *p = f->p + 1, *end = f->end;
	char *out = f->s, *start = out;

	for (;;) {
		const char *run = p;

		while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20 &&
		       (unsigned char)*p < 0x80)
			p++;
		memcpy(out, run, (size_t)(p - run));
		out += p - run;
		if (p >= end || *p != '\\')
			break;
		if (end - p < 2)
			return NULL;
		switch (p[1]) {
		case '"': case '\\': case '/':
			*out++ = p[1];
			break;
		case 'b': *out++ = '\b'; break;
		case 'f': *out++ = '\f'; break;
		case 'n': *out++ = '\n'; break;
		case 'r': *out++ = '\r'; break;
		case 't': *out++ = '\t'; break;
		case 'u': {
			uint32_t u, lo;

			if (end - p < 6 || hex4(p + 2, &u) || u == 0 || (u >= 0xdc00 && u <= 0xdfff))
				return NULL;
			if (u >= 0xd800 && u <= 0xdbff) {
				if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) ||
				    lo < 0xdc00 || lo > 0xdfff)
					return NULL;
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			/* Four UTF-8 bytes at most where the escape took six or twelve. */
			if (u < 0x80) {
				*out++ = (char)u;
			} else if (u < 0x800) {
				*out++ = (char)(0xc0 | u >> 6);
				*out++ = (char)(0x80 | (u & 0x3f));
			} else if (u < 0x10000) {
				*out++ = (char)(0xe0 | u >> 12);
				*out++ = (char)(0x80 | (u >> 6 & 0x3f));
				*out++ = (char)(0x80 | (u & 0x3f));
			} else {
				*out++ = (char)(0xf0 | u >> 18);
				*out++ = (char)(0x80 | (u >> 12 & 0x3f));
				*out++ = (char)(0x80 | (u >> 6 & 0x3f));
				*out++ = (char)(0x80 | (u & 0x3f));
			}
			p += 4;
			break;
		}
		default:
			return NULL;
		}
		p += 2;
	}
	/* A control character, a byte above 0x7f or the end: jansson decides. */
	if (p >= end || *p != '"')
		return NULL;
	*out++ = 0;
	f->s = out;
	f->p = p + 1;
	*len = (uint32_t)(out - 1 - start);
	return start;
}

static int
jf_number(struct jf *f, struct cfg_jv *v)
{
	const char *p = f->p, *end = f->end, *start = p;
	bool neg = false, real = false;
	uint64_t u = 0;

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9'))
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (u > (UINT64_MAX - 9) / 10)
			return -1;
		u = u * 10 + (uint64_t)(*p - '0');
	}
	if (p < end && *p == '.') {
		real = true;
		if (++p >= end || *p < '0' || *p > '9')
			return -1;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		real = true;
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return -1;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	f->p = p;
	if (real) {
		char tmp[64];
		size_t n = (size_t)(p - start);
		double d;

		if (n >= sizeof(tmp))
			return -1;
		memcpy(tmp, start, n);
		tmp[n] = 0;
		errno = 0;
		d = strtod(tmp, NULL);
		if (errno == ERANGE && isinf(d))
			return -1;
		v->type = CFG_JREAL;
		v->v.d = d;
		return 0;
	}
	/* jansson's json_int_t: -2^63 .. 2^63 - 1. */
	if (u > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return -1;
	v->type = CFG_JINT;
	v->neg = neg && u != 0;
	v->v.u = u;
	return 0;
}

static int
jf_literal(struct jf *f, const char *word, size_t n)
{
	if ((size_t)(f->end - f->p) < n || memcmp(f->p, word, n))
		return -1;
	f->p += n;
	return 0;
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* jansson rejects an object that names a key twice. */
static bool
keys_unique(const struct cfg_jv *kids, uint32_t n)
{
	if (n <= 16) {
		for (uint32_t i = 1; i < n; i++)
			for (uint32_t j = 0; j < i; j++)
				if (strcmp(kids[i].key, kids[j].key) == 0)
					return false;
		return true;
	}
	const char **k = malloc(n * sizeof(*k));
	bool ok = k != NULL;

	for (uint32_t i = 0; ok && i < n; i++)
		k[i] = kids[i].key;
	if (ok)
		qsort(k, n, sizeof(*k), key_cmp);
	for (uint32_t i = 1; ok && i < n; i++)
		ok = strcmp(k[i - 1], k[i]) != 0;
	free(k);
	return ok;
}

/* Parse the document; -1 when unsure (the caller asks jansson). */
static int
jf_run(struct jf *f, struct cfg_jv **root)
{
	struct cfg_jv v;
	const char *key = NULL;
	uint32_t klen;

	jf_ws(f);
	/* jansson's default: an object or an array at the top. */
	if (f->p >= f->end || (*f->p != '{' && *f->p != '['))
		return -1;
	for (;;) {
		/* A value at f->p; containers open a frame and come back here. */
		jf_ws(f);
		if (f->p >= f->end)
			return -1;
		memset(&v, 0, sizeof(v));
		switch (*f->p) {
		case '{':
		case '[':
			if (f->depth == JF_MAX_DEPTH)
				return -1;
			f->fr[f->depth++] = (struct jframe){ *f->p == '{' ? CFG_JOBJ : CFG_JARR, f->nvals, key };
			f->p++;
			jf_ws(f);
			if (f->p < f->end && *f->p == (f->fr[f->depth - 1].type == CFG_JOBJ ? '}' : ']'))
				goto close;
			if (f->fr[f->depth - 1].type == CFG_JOBJ)
				goto member;
			key = NULL;
			continue;
		case '"':
			v.type = CFG_JSTR;
			if (!(v.v.s = jf_string(f, &v.n)))
				return -1;
			break;
		case 't':
			v.type = CFG_JBOOL;
			v.v.u = 1;
			if (jf_literal(f, "true", 4))
				return -1;
			break;
		case 'f':
			v.type = CFG_JBOOL;
			if (jf_literal(f, "false", 5))
				return -1;
			break;
		case 'n':
			v.type = CFG_JNULL;
			if (jf_literal(f, "null", 4))
				return -1;
			break;
		default:
			if (jf_number(f, &v))
				return -1;
			break;
		}
		v.key = key;
		goto done;
close:
		/* The frame's members leave the value stack for a chunk of their own. */
		{
			struct jframe *fr = &f->fr[--f->depth];
			uint32_t n = f->nvals - fr->base;
			struct cfg_jv *kids = jf_nodes(f, n ? n : 1);

			if (!kids)
				return -1;
			if (n)
				memcpy(kids, f->vals + fr->base, (size_t)n * sizeof(*kids));
			f->nvals = fr->base;
			if (fr->type == CFG_JOBJ && !keys_unique(kids, n))
				return -1;
			memset(&v, 0, sizeof(v));
			v.type = fr->type;
			v.n = n;
			v.v.kid = kids;
			v.key = fr->key;
			f->p++;
		}
done:
		if (f->depth == 0) {
			jf_ws(f);
			if (f->p != f->end || !(*root = jf_nodes(f, 1)))
				return -1;
			**root = v;
			return 0;
		}
		if (jf_push(f, &v))
			return -1;
		jf_ws(f);
		if (f->p >= f->end)
			return -1;
		if (*f->p == (f->fr[f->depth - 1].type == CFG_JOBJ ? '}' : ']'))
			goto close;
		if (*f->p != ',')
			return -1;
		f->p++;
		key = NULL;
		if (f->fr[f->depth - 1].type == CFG_JARR)
			continue;
member:
		jf_ws(f);
		if (f->p >= f->end || *f->p != '"' || !(key = jf_string(f, &klen)))
			return -1;
		jf_ws(f);
		if (f->p >= f->end || *f->p != ':')
			return -1;
		f->p++;
	}
}

int
cfg_json_parse_fast(const char *buf, size_t len, struct cfg_jdoc *doc)
{
	struct jdoc_store *st = calloc(1, sizeof(*st));
	struct jf f = { .p = buf, .end = buf + len, .st = st };
	struct cfg_jv *root = NULL;
	int rc = -1;

	doc->root = NULL;
	doc->chunks = NULL;
	/* Unescaped strings, each with its NUL, never outgrow the text they came from. */
	if (st && (st->strings = malloc(len + 1))) {
		f.s = st->strings;
		rc = jf_run(&f, &root);
	}
	free(f.vals);
	if (rc) {
		doc->chunks = st;
		cfg_json_free(doc);
		return -1;
	}
	doc->root = root;
	doc->chunks = st;
	return 0;
}

int
cfg_json_parse(char *buf, size_t len, struct cfg_jdoc *doc, struct cfg_jerr *err)
{
	if (cfg_json_parse_fast(buf, len, doc) == 0)
		return 0;
	return cfg_json_parse_jansson(buf, len, doc, err);
}

void
cfg_json_free(struct cfg_jdoc *doc)
{
	struct jdoc_store *st = doc->chunks;

	if (st) {
		json_decref(st->root);
		free(st->nodes);
		while (st->chunks) {
			struct jchunk *c = st->chunks;

			st->chunks = c->next;
			free(c);
		}
		free(st->strings);
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
