/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON libraries bench-cfg-load compares with jansson: one parse each. */
#ifndef JSON_LIBS_H
#define JSON_LIBS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct json_lib {
	const char *name;
	bool tree;      /* builds a tree (false: tokens only) */
	/* Parse the @len bytes at @text (NUL-terminated) and release the result; -1 on error. */
	int (*parse)(const char *text, size_t len);
};

/* Fill @out with the libraries found at build time; returns how many (at most 8). */
int json_libs_others(struct json_lib *out);

/* simdjson's DOM parser (C++), or -1 where it was not built. */
int json_parse_simdjson(const char *text, size_t len);

#ifdef __cplusplus
}
#endif

#endif
