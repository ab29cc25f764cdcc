/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a delta request on arbitrary bytes, through both paths
 * (config/cfg_inc.h and config/cfg_delta.h) against examples/two-tenants.json.
 * Whenever the incremental path takes a batch, the full path must accept it
 * and the two results must be the same records; the result applied in place
 * must keep its indexes right and build an overlay (tests/delta/run_both()).
 * Each input runs twice on the same configuration, so that the second run
 * also meets what the first one applied.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_cfg_inc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

/* The library under test recovers from UBSan reports by default: make the first fatal. */
const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

static struct cfg *base;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *req;
	struct cfg *run;

	if (!base && !(base = cfg_load_file(FUZZ_SRCDIR "/examples/two-tenants.json", NULL)))
		abort();
	req = malloc(size + 1);
	memcpy(req, data, size);
	req[size] = 0;
	run = cfg_dup(base);
	if (!run)
		abort();
	for (int i = 0; i < 2 && strlen(req) == size; i++) {
		if (run_both(&run, req, NULL) == BOTH_MISMATCH) {
			fprintf(stderr, "invariant broken: the two delta paths disagree\n");
			abort();
		}
	}
	cfg_free(run);
	free(req);
	return 0;
}
