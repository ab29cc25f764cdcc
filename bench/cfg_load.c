/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-cfg-load: where the time of loading a configuration file goes, and
 * what the JSON libraries of the archive take to parse the same text.
 *
 *   bench-cfg-load FILE [ROUNDS [--load-only]]   (ROUNDS default 5; medians)
 *
 * Prints one JSON line for the load (the switch's own code, as a reload
 * runs it):
 *   {"bench": "cfg-load", "file", "bytes", "qps", "read_ms", "parse_ms",
 *    "check_ms", "total_ms"}
 * then one per library, parsing the file's text into that library's tree
 * (or tokens, for jsmn) and releasing it:
 *   {"bench": "json-parse", "library", "ms", "mb_per_s", "tree"}
 * "tree" is false for a tokenizer that builds no tree (jsmn).  Libraries not
 * found at build time are left out; --load-only leaves them all out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bench_stats.h"
#include "cfg.h"
#include "json_libs.h"

#define MAX_ROUNDS 64

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = (size_t)n;
	}
	return buf;
}

/* jansson as the loader calls it: duplicate keys rejected. */
static int
parse_jansson(const char *text, size_t len)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);

	if (!root)
		return -1;
	json_decref(root);
	return 0;
}

int
main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double rd[MAX_ROUNDS], pa[MAX_ROUNDS], ck[MAX_ROUNDS], tot[MAX_ROUNDS];
	uint32_t qps = 0;
	size_t len;
	char *text;

	if (argc < 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: %s FILE [ROUNDS (1-%d)]\n", argv[0], MAX_ROUNDS);
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		struct cfg_load_times t;
		struct cfg_errors errs = { 0 };
		double t0 = bench_now_ms();
		struct cfg *c = cfg_load_file_timed(argv[1], &errs, &t);

		tot[r] = bench_now_ms() - t0;
		if (!c) {
			cfg_errors_print(&errs, stderr);
			return 1;
		}
		qps = c->n_qps;
		rd[r] = t.read_ms;
		pa[r] = t.parse_ms;
		ck[r] = t.check_ms;
		cfg_free(c);
	}
	text = slurp(argv[1], &len);
	if (!text) {
		perror(argv[1]);
		return 1;
	}
	printf("{\"bench\": \"cfg-load\", \"file\": \"%s\", \"bytes\": %zu, \"qps\": %u, \"read_ms\": %.2f, "
	       "\"parse_ms\": %.2f, \"check_ms\": %.2f, \"total_ms\": %.2f}\n",
	       argv[1], len, qps, bench_median(rd, rounds), bench_median(pa, rounds), bench_median(ck, rounds),
	       bench_median(tot, rounds));

	struct json_lib libs[16];
	int n = 0;

	if (argc <= 3 || strcmp(argv[3], "--load-only")) {
		libs[n++] = (struct json_lib){ "jansson", true, parse_jansson };
		n += json_libs_others(libs + n);
	}
	for (int i = 0; i < n; i++) {
		double ms[MAX_ROUNDS];

		for (int r = 0; r < rounds; r++) {
			double t0 = bench_now_ms();

			if (libs[i].parse(text, len) < 0) {
				fprintf(stderr, "%s: cannot parse %s\n", libs[i].name, argv[1]);
				return 1;
			}
			ms[r] = bench_now_ms() - t0;
		}
		double m = bench_median(ms, rounds);

		printf("{\"bench\": \"json-parse\", \"library\": \"%s\", \"ms\": %.2f, \"mb_per_s\": %.1f, "
		       "\"tree\": %s}\n",
		       libs[i].name, m, (double)len / 1e3 / m, libs[i].tree ? "true" : "false");
	}
	free(text);
	return 0;
}
