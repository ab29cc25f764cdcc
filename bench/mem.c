/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-mem: the heap memory a configuration holds in the switch's process,
 * split into the configuration records (config/) and the overlay built from
 * them (overlay/: tables, connections, rewrite templates).
 *
 *   bench-mem FILE
 *
 * Prints one JSON line:
 *   {"bench": "mem", "file", "qps", "endpoints", "connections", "cfg_bytes",
 *    "ovl_bytes", "cfg_bytes_per_conn", "ovl_bytes_per_conn"}
 * The bytes are glibc's allocated bytes (mallinfo2(): uordblks + hblkhd) after
 * the load, and after ovl_build() less those, with the file's text released;
 * the running switch holds one of each (two while a reload or delta builds the
 * next).  Per-connection state, shapers and counters are in the EAL heap
 * (bench/run-scale measures those).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include "cfg.h"
#include "ovl.h"

static size_t
held(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

int
main(int argc, char **argv)
{
	struct cfg_errors errs = { 0 };
	char err[256];
	size_t base, after_cfg, after_ovl;
	struct cfg *c;
	struct ovl *o;
	uint32_t conns;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	base = held();
	c = cfg_load_file(argv[1], &errs);
	if (!c) {
		cfg_errors_print(&errs, stderr);
		return 1;
	}
	after_cfg = held();
	o = ovl_build(c, err, sizeof(err));
	if (!o) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 1;
	}
	after_ovl = held();
	conns = c->n_qps / 2 ? c->n_qps / 2 : 1;
	printf("{\"bench\": \"mem\", \"file\": \"%s\", \"qps\": %u, \"endpoints\": %u, \"connections\": %u, "
	       "\"cfg_bytes\": %zu, \"ovl_bytes\": %zu, \"cfg_bytes_per_conn\": %.1f, \"ovl_bytes_per_conn\": %.1f}\n",
	       argv[1], c->n_qps, c->n_endpoints, c->n_qps / 2, after_cfg - base, after_ovl - after_cfg,
	       (double)(after_cfg - base) / conns, (double)(after_ovl - after_cfg) / conns);
	ovl_free(o);
	cfg_free(c);
	return 0;
}
