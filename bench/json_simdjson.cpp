// SPDX-License-Identifier: BSD-3-Clause
// simdjson's DOM parser for bench-cfg-load: a parse into its tape, a tree
// in the sense that matters here (random access to every value).
#include <simdjson.h>

#include "json_libs.h"

int
json_parse_simdjson(const char *text, size_t len)
{
	static simdjson::dom::parser parser;
	simdjson::padded_string padded(text, len);
	simdjson::dom::element doc;

	return parser.parse(padded).get(doc) ? -1 : 0;
}
