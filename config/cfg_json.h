/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON document as the loader reads it: read-only 24-byte nodes that keep
 * members in file order, parsed strictly (duplicate keys rejected, syntax
 * errors with line and column, as jansson reports them).  Integers are
 * jansson's signed 64 bits, so a value above 2^63 - 1 (an address, say) must
 * be written as a "0x" string.
 */
#ifndef CFG_JSON_H
#define CFG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cfg_jtype {
	CFG_JNULL,
	CFG_JBOOL,      /* v.u is 1 for true, 0 for false */
	CFG_JINT,       /* an integer: magnitude in v.u, sign in neg */
	CFG_JREAL,      /* a number with a fraction or an exponent: v.d */
	CFG_JSTR,       /* v.s, NUL-terminated, n bytes (no NUL inside) */
	CFG_JARR,       /* n values at v.kid */
	CFG_JOBJ,       /* n members at v.kid, each with its key, in file order */
};

struct cfg_jv {
	uint8_t type;   /* enum cfg_jtype */
	uint8_t neg;    /* CFG_JINT: negative */
	uint32_t n;
	union {
		uint64_t u;
		double d;
		const char *s;
		const struct cfg_jv *kid;
	} v;
	const char *key;        /* the member's name, inside an object */
};

/* A parsed document: its root and the memory it lives in. */
struct cfg_jdoc {
	const struct cfg_jv *root;
	void *chunks;           /* the arena, released by cfg_json_free() */
};

/* Where and why a parse failed. line and col count from 1; col in characters. */
struct cfg_jerr {
	int line;
	int col;
	char text[160];
};

/*
 * Parse the @len bytes at @buf. Returns 0 and fills @doc, or -1 and fills
 * @err. The document does not point into @buf.
 *
 * Two parsers, one answer. A strict single-pass parser takes the documents
 * it is sure of (ASCII text, integers within jansson's signed 64 bits, depth
 * up to 256), builds the nodes directly and is about ten times faster than
 * jansson's tree; it hands everything else, and every error, to jansson,
 * which has the last word: the documents either accepts are the same
 * documents, node for node, and every error message is jansson's.
 */
int cfg_json_parse(char *buf, size_t len, struct cfg_jdoc *doc, struct cfg_jerr *err);

/* The two parsers alone, for tests: the fast one returns -1 when unsure, with no message. */
int cfg_json_parse_fast(const char *buf, size_t len, struct cfg_jdoc *doc);
int cfg_json_parse_jansson(const char *buf, size_t len, struct cfg_jdoc *doc, struct cfg_jerr *err);

/* Release the nodes of @doc (not the buffer it was parsed from). */
void cfg_json_free(struct cfg_jdoc *doc);

static inline bool cfg_j_is_obj(const struct cfg_jv *v) { return v && v->type == CFG_JOBJ; }
static inline bool cfg_j_is_arr(const struct cfg_jv *v) { return v && v->type == CFG_JARR; }
static inline bool cfg_j_is_str(const struct cfg_jv *v) { return v && v->type == CFG_JSTR; }
static inline bool cfg_j_is_int(const struct cfg_jv *v) { return v && v->type == CFG_JINT; }
static inline bool cfg_j_is_real(const struct cfg_jv *v) { return v && v->type == CFG_JREAL; }
static inline bool cfg_j_is_bool(const struct cfg_jv *v) { return v && v->type == CFG_JBOOL; }

/* Element or member @i of an array or object. */
static inline const struct cfg_jv *
cfg_j_at(const struct cfg_jv *v, uint32_t i)
{
	return &v->v.kid[i];
}

/* The member @key of the object @o, or NULL. Linear: for small objects. */
const struct cfg_jv *cfg_j_get(const struct cfg_jv *o, const char *key);

#endif /* CFG_JSON_H */
