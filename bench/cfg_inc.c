/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-cfg-inc: the configuration's share of a delta, incremental
 * (cfg_inc_prepare() + cfg_inc_commit(), in place) against the full path
 * (cfg_delta_apply_root(), a new configuration).
 *
 *   bench-cfg-inc FILE [BATCHES [ROUNDS [FULL_ROUNDS]]]
 *
 * FILE is a configuration of bench/gen_bench.py (one tenant "blue", its
 * connections between 192.168.0.10 and one remote endpoint each).  The
 * tenant's max_qps is raised and 200 remote endpoints are added first (as
 * bench/run-delta does); then, for each batch size B of BATCHES (default
 * 1,100,1000,10000), a batch adds B connections (2 B QPs, the requests of
 * bench/run-delta) and the next deletes them again, ROUNDS times (default
 * 20) incrementally and FULL_ROUNDS times (default 3) through the full path.
 * The requests are parsed before the clock starts.  One JSON line per batch
 * size and operation, medians in microseconds:
 *   {"bench": "cfg-inc", "qps", "batch", "op", "inc_us", "full_us", "us_per_change"}
 * us_per_change is inc_us per connection changed.  First a line with the
 * one-off cost of building the indexes:
 *   {"bench": "cfg-inc-index", "qps", "build_ms"}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "cfg.h"
#include "cfg_delta.h"
#include "cfg_inc.h"
#include "cfg_json.h"

#define MAX_ROUNDS 64
/* As bench/run-delta: beyond this many connections the batches use other vips and numbers. */
#define FAR_CONNS 62250
#define FAR_OFF (1u << 21)

static const char *
batch_vip(uint32_t i, uint32_t conns, char *buf)
{
	snprintf(buf, 32, conns > FAR_CONNS ? "198.18.0.%u" : "192.168.250.%u", i);
	return buf;
}

/* The request of bench/run-delta's batch(b, 0, add, conns), parsed into @doc. */
static void
batch(uint32_t b, bool add, uint32_t conns, struct cfg_jdoc *doc)
{
	size_t cap = 256 + (size_t)b * 400, n;
	char *s = malloc(cap), rv[32];
	uint32_t off = conns > FAR_CONNS ? FAR_OFF : 0;
	struct cfg_jerr je;

	n = (size_t)snprintf(s, cap, "{\"op\": \"apply\", \"%s\": {\"qps\": [", add ? "put" : "delete");
	for (uint32_t j = 0; j < b; j++) {
		uint32_t lq = off + 200000 + j, rq = off + 300000 + j;

		batch_vip(1 + j % 200, conns, rv);
		if (add)
			n += (size_t)snprintf(s + n, cap - n, "%s{\"tenant\": \"blue\", \"vip\": \"192.168.0.10\", \"vqpn\": "
					      "%u, \"pqpn\": %u, \"type\": \"rc\", \"peer\": {\"vip\": \"%s\", \"vqpn\": %u}}, "
					      "{\"tenant\": \"blue\", \"vip\": \"%s\", \"vqpn\": %u, \"pqpn\": %u, \"type\": "
					      "\"rc\", \"peer\": {\"vip\": \"192.168.0.10\", \"vqpn\": %u}}", j ? ", " : "", lq,
					      off + 100000 + j, rv, rq, rv, rq, off + 200000 + j, lq);
		else
			n += (size_t)snprintf(s + n, cap - n, "%s{\"tenant\": \"blue\", \"vip\": \"192.168.0.10\", "
					      "\"vqpn\": %u}, {\"tenant\": \"blue\", \"vip\": \"%s\", \"vqpn\": %u}",
					      j ? ", " : "", lq, rv, rq);
	}
	snprintf(s + n, cap - n, "]}}");
	if (cfg_json_parse(s, strlen(s), doc, &je) < 0) {
		fprintf(stderr, "bench-cfg-inc: a batch does not parse: %s\n", je.text);
		exit(1);
	}
	free(s);
}

/* The tenant with room for the batches, and bench/run-delta's 200 remote endpoints. */
static struct cfg *
setup(struct cfg *c)
{
	size_t cap = 200 * 128 + 512, n;
	char *s = malloc(cap), rv[32];
	struct cfg_errors errs = { 0 };
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	struct cfg *r;

	n = (size_t)snprintf(s, cap, "{\"put\": {\"tenants\": [{\"name\": \"blue\", \"vni\": %u, \"max_qps\": %u}], "
			     "\"endpoints\": [", c->tenants[0].vni, c->n_qps + (1u << 22));
	for (uint32_t i = 1; i <= 200; i++)
		n += (size_t)snprintf(s + n, cap - n, "%s{\"tenant\": \"blue\", \"vip\": \"%s\", \"host\": \"10.0.0.2\"}",
				      i > 1 ? ", " : "", batch_vip(i, c->n_qps / 2, rv));
	snprintf(s + n, cap - n, "]}}");
	if (cfg_json_parse(s, strlen(s), &doc, &je) < 0)
		return NULL;
	r = cfg_delta_apply_root(c, doc.root, "setup", &errs, NULL);
	cfg_errors_print(&errs, stderr);
	cfg_errors_clear(&errs);
	cfg_json_free(&doc);
	free(s);
	return r;
}

/* One batch incrementally; exits if it does not take the incremental path. */
static double
run_inc(struct cfg *c, const struct cfg_jdoc *doc)
{
	struct cfg_inc inc;
	double t0 = (bench_now_ms() * 1e3);

	if (cfg_inc_prepare(c, doc->root, &inc) != 1) {
		fprintf(stderr, "bench-cfg-inc: the batch did not take the incremental path\n");
		exit(1);
	}
	cfg_inc_commit(c, &inc);
	t0 = (bench_now_ms() * 1e3) - t0;
	cfg_inc_release(&inc);
	return t0;
}

/* One batch through the full path: the new configuration, and its time in *@us. */
static struct cfg *
run_full(const struct cfg *c, const struct cfg_jdoc *doc, double *us)
{
	struct cfg_errors errs = { 0 };
	double t0 = (bench_now_ms() * 1e3);
	struct cfg *r = cfg_delta_apply_root(c, doc->root, "bench", &errs, NULL);

	*us = (bench_now_ms() * 1e3) - t0;
	if (!r) {
		cfg_errors_print(&errs, stderr);
		exit(1);
	}
	return r;
}

int
main(int argc, char **argv)
{
	const char *sizes = argc > 2 ? argv[2] : "1,100,1000,10000";
	int rounds = argc > 3 ? atoi(argv[3]) : 20, full_rounds = argc > 4 ? atoi(argv[4]) : 3;
	struct cfg_errors errs = { 0 };
	struct cfg *c, *run;
	struct cfg_jdoc empty;
	struct cfg_jerr je;
	char *list, *tok, ebuf[] = "{}";
	uint32_t conns;
	double t0;

	if (argc < 2 || rounds < 1 || rounds > MAX_ROUNDS || full_rounds < 0 || full_rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench-cfg-inc FILE [BATCHES [ROUNDS [FULL_ROUNDS]]]  (rounds 1 to %d)\n",
			MAX_ROUNDS);
		return 2;
	}
	if (!(c = cfg_load_file(argv[1], &errs))) {
		cfg_errors_print(&errs, stderr);
		return 1;
	}
	conns = c->n_qps / 2;
	run = setup(c);
	cfg_free(c);
	if (!run)
		return 1;
	/* The first batch builds the indexes: an empty one measures that alone. */
	cfg_json_parse(ebuf, 2, &empty, &je);
	t0 = run_inc(run, &empty);
	cfg_json_free(&empty);
	printf("{\"bench\": \"cfg-inc-index\", \"qps\": %u, \"build_ms\": %.1f}\n", run->n_qps, t0 / 1e3);
	fflush(stdout);
	list = strdup(sizes);
	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		uint32_t b = (uint32_t)atoi(tok);
		double inc[2][MAX_ROUNDS], full[2][MAX_ROUNDS];
		struct cfg_jdoc add, del;

		if (b < 1)
			continue;
		batch(b, true, conns, &add);
		batch(b, false, conns, &del);
		for (int r = 0; r < rounds; r++) {
			inc[0][r] = run_inc(run, &add);
			inc[1][r] = run_inc(run, &del);
		}
		for (int r = 0; r < full_rounds; r++) {
			struct cfg *a = run_full(run, &add, &full[0][r]), *d = run_full(a, &del, &full[1][r]);

			cfg_free(a);
			cfg_free(d);
		}
		for (int op = 0; op < 2; op++) {
			double iu = bench_median(inc[op], rounds), fu = full_rounds ? bench_median(full[op], full_rounds) : 0;

			printf("{\"bench\": \"cfg-inc\", \"qps\": %u, \"batch\": %u, \"op\": \"%s\", \"inc_us\": %.1f, "
			       "\"full_us\": %.1f, \"us_per_change\": %.3f}\n", run->n_qps, b, op ? "delete" : "add", iu,
			       fu, iu / b);
			fflush(stdout);
		}
		cfg_json_free(&add);
		cfg_json_free(&del);
	}
	free(list);
	cfg_free(run);
	return 0;
}
