/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the configuration's two JSON parsers on arbitrary bytes
 * (config/cfg_json.c).  Whatever the fast parser accepts, jansson must accept
 * as the same document, node for node (tests/config/json_same.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_same.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

/* The library under test recovers from UBSan reports by default: make the first fatal. */
const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool took;

	if (json_parsers_agree((const char *)data, size, &took)) {
		fprintf(stderr, "invariant broken: the fast parser took a document jansson reads otherwise\n");
		abort();
	}
	return 0;
}
