/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deltas: a batch of changes to a running configuration, applied as a whole
 * or not at all.
 *
 * A request is one JSON object:
 *
 *   {"op": "apply",
 *    "put":    {"tenants": [...], "endpoints": [...], "qps": [...], "mrs": [...]},
 *    "delete": {"tenants": ["NAME" | {"name": N}], "endpoints": [{"tenant", "vip"}],
 *               "qps": [{"tenant", "vip", "vqpn"}], "mrs": [{"tenant", "vip", "rkey"}]}}
 *
 * "op" and "id" are ignored here (the control channel reads them). A record
 * under "put" is a record of the configuration schema, version 1, parsed by
 * the same field tables as the file: valid in the file means valid here and
 * means the same. A put whose key (a tenant's name; an endpoint's tenant and
 * vip; a QP's tenant, vip and vqpn; an MR's tenant, vip and rkey) exists
 * replaces that record (a modification); otherwise it adds one. Deletes are
 * applied before puts, so a batch may delete and put the same key. Then the
 * checks between records that the file loader makes (references, peers that
 * point back, pqpn unique per host, quotas, a deleted tenant left with
 * records) run over the whole result.
 *
 * Errors name the request's JSON path ("put.qps[3].pqpn: ...", "delete.
 * endpoints[0]: ..."); a record of the running configuration that a change
 * breaks is named by its key ("qps{blue 192.168.1.20 33}.peer: ...").
 *
 * Nothing here depends on DPDK. The running configuration is only read.
 */
#ifndef CFG_DELTA_H
#define CFG_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "cfg.h"

/* What a batch held, by kind. */
struct cfg_delta_summary {
	uint32_t put[4];        /* tenants, endpoints, qps, mrs */
	uint32_t deleted[4];
};

/* The kinds, as indexes of struct cfg_delta_summary. */
enum { CFG_DK_TENANTS, CFG_DK_ENDPOINTS, CFG_DK_QPS, CFG_DK_MRS, CFG_DK_N };

/*
 * Apply the request in the @len bytes at @buf (modified: parsed in place) to
 * @run and return the resulting configuration, a new one that owns all it
 * points to and whose path is @run's. On any error return NULL with every
 * error found appended to @errs ("NAME: PATH: message", or
 * "NAME:LINE:COL: syntax error: ..."), @run untouched. @sum, if not NULL,
 * receives the counts of the batch.
 */
struct cfg *cfg_delta_apply(const struct cfg *run, char *buf, size_t len, const char *name,
			    struct cfg_errors *errs, struct cfg_delta_summary *sum);

/* As cfg_delta_apply(), from a request already parsed (cfg_json.h). */
struct cfg_jv;
struct cfg *cfg_delta_apply_root(const struct cfg *run, const struct cfg_jv *root, const char *name,
				 struct cfg_errors *errs, struct cfg_delta_summary *sum);

/* A deep copy of @c, or NULL when out of memory. */
struct cfg *cfg_dup(const struct cfg *c);

#endif /* CFG_DELTA_H */
