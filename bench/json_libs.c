/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include "json_libs.h"

#ifdef HAVE_JSONC
#include <json-c/json.h>

static int
parse_jsonc(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	struct json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	int rc = o ? 0 : -1;

	json_object_put(o);
	json_tokener_free(tok);
	return rc;
}
#endif

#ifdef HAVE_CJSON
#include <cjson/cJSON.h>

static int
parse_cjson(const char *text, size_t len)
{
	cJSON *o = cJSON_ParseWithLength(text, len);

	cJSON_Delete(o);
	return o ? 0 : -1;
}
#endif

#ifdef HAVE_YAJL
#include <yajl/yajl_tree.h>

static int
parse_yajl(const char *text, size_t len)
{
	yajl_val v = yajl_tree_parse(text, NULL, 0);

	(void)len;
	yajl_tree_free(v);
	return v ? 0 : -1;
}
#endif

#ifdef HAVE_JSMN
/* Without parent links jsmn searches back for each token's parent: quadratic in a long array. */
#define JSMN_PARENT_LINKS
#include <jsmn.h>

/* Count the tokens, then fill them: the two passes jsmn's users make. */
static int
parse_jsmn(const char *text, size_t len)
{
	jsmn_parser p;
	jsmntok_t *t;
	int n;

	jsmn_init(&p);
	n = jsmn_parse(&p, text, len, NULL, 0);
	if (n < 0 || !(t = malloc(sizeof(*t) * (size_t)n)))
		return -1;
	jsmn_init(&p);
	n = jsmn_parse(&p, text, len, t, (unsigned)n);
	free(t);
	return n < 0 ? -1 : 0;
}
#endif

int
json_libs_others(struct json_lib *out)
{
	int n = 0;

	(void)out; /* with no other library built, nothing is written */
#ifdef HAVE_JSONC
	out[n++] = (struct json_lib){ "json-c", true, parse_jsonc };
#endif
#ifdef HAVE_CJSON
	out[n++] = (struct json_lib){ "cjson", true, parse_cjson };
#endif
#ifdef HAVE_YAJL
	out[n++] = (struct json_lib){ "yajl", true, parse_yajl };
#endif
#ifdef HAVE_SIMDJSON
	out[n++] = (struct json_lib){ "simdjson", true, json_parse_simdjson };
#endif
#ifdef HAVE_JSMN
	out[n++] = (struct json_lib){ "jsmn", false, parse_jsmn };
#endif
	return n;
}
