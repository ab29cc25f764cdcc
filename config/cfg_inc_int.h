/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the parts of incremental deltas share (cfg_inc.h): the indexes kept
 * beside a running configuration (cfg_inc_index.c), the check of a batch
 * (cfg_inc.c) and the comparison of a reloaded file (cfg_inc_diff.c).
 * Private to config/.
 */
#ifndef CFG_INC_INT_H
#define CFG_INC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "cfg_htab.h"
#include "cfg_inc.h"

/* The key of an endpoint (id 0), a QP (vqpn) or an MR (rkey). */
struct cfg_inc_key {
	int tenant;
	struct cfg_ip vip;
	uint32_t id;
};

/* A QP's or MR's place in the list of its endpoint's records. */
struct cfg_inc_link {
	int32_t next, prev;
};

/* Per endpoint: the first of its QPs and MRs (or -1), and how many name it. */
struct cfg_inc_eprefs {
	int32_t qhead, mhead;
	uint32_t nq, nm;
};

/*
 * The indexes of a configuration (struct cfg's inc).  The record arrays of
 * the configuration hold cap[] records; the per-record arrays here follow
 * the same capacities.
 */
struct cfg_inc_ix {
	struct cfg_htab key[CFG_DK_N];  /* [ENDPOINTS], [QPS], [MRS]: by key */
	struct cfg_htab pq;             /* QPs by (host, pqpn) */
	struct cfg_htab srq;            /* XRC SRQs by (host, psrqn): endpoint * CFG_XRC_SRQS_MAX + s */
	struct cfg_htab tname, pname;   /* tenants and ports by name, as struct cfg_ld keeps them */
	uint32_t cap[CFG_DK_N];
	struct cfg_inc_eprefs *ep;      /* per endpoint */
	struct cfg_inc_link *ql, *ml;   /* per QP, per MR */
	int32_t *tdelta;                /* per tenant, for cfg_inc_prepare(): zero between batches */
	uint8_t *tmark;                 /* per tenant, likewise */
};

/* The key of record @i of kind @k (not tenants) of @c. */
void cfg_inc_rec_key(const struct cfg *c, int k, uint32_t i, struct cfg_inc_key *key);

/* The index hash of @key (as cfg_delta.c hashes keys). */
uint32_t cfg_inc_key_hash(const struct cfg_inc_key *key);

/* The indexes of @c, built now if they are not yet; NULL when out of memory. */
struct cfg_inc_ix *cfg_inc_index(struct cfg *c);

/* The running index of the record of kind @k with @key in @c, or -1. */
int64_t cfg_inc_find(const struct cfg *c, int k, const struct cfg_inc_key *key);

/* The QP on @host with @pqpn in @c, or -1. */
int64_t cfg_inc_find_pqpn(const struct cfg *c, const struct cfg_ip *host, uint32_t pqpn);

/* The holder (endpoint * CFG_XRC_SRQS_MAX + srq) of @psrqn on @host in @c, or -1. */
int64_t cfg_inc_find_psrqn(const struct cfg *c, const struct cfg_ip *host, uint32_t psrqn);

/* The hashes of (host, pqpn) and (host, psrqn) in the indexes. */
uint32_t cfg_inc_pqpn_hash(const struct cfg_ip *host, uint32_t pqpn);
uint32_t cfg_inc_psrqn_hash(const struct cfg_ip *host, uint32_t psrqn);

/* Rates equal field by field. */
bool cfg_inc_rate_equal(const struct cfg_rate *a, const struct cfg_rate *b);

/* Records equal field by field (their index fields, peer and endpoint, aside). */
bool cfg_inc_ep_equal(const struct cfg_endpoint *a, const struct cfg_endpoint *b);
bool cfg_inc_qp_equal(const struct cfg_qp *a, const struct cfg_qp *b);
bool cfg_inc_mr_equal(const struct cfg_mr *a, const struct cfg_mr *b);

/* Append a change to @inc. Returns 0 or -1 (ENOMEM). */
int cfg_inc_push(struct cfg_inc *inc, int kind, int op, const void *old, const void *new);

/*
 * Make room in @c's record arrays for @add[k] more records of each kind.
 * Arrays that must grow are allocated here and kept in @inc->priv (the
 * configuration itself stays as it is); cfg_inc_commit() moves the records
 * into them.  The indexes grow at once.  Returns 0 or -1 (ENOMEM).
 */
int cfg_inc_reserve(struct cfg *c, struct cfg_inc *inc, const uint32_t add[CFG_DK_N]);

/* The links of the QPs or MRs (@k), and the head of endpoint @ep's list of them. */
struct cfg_inc_link *cfg_inc_links(struct cfg_inc_ix *x, int k);
int32_t *cfg_inc_head(struct cfg_inc_ix *x, int k, uint32_t ep);
/* Put QP or MR (@k) @i first in the list of endpoint @ep, and count it. */
void cfg_inc_list_add(struct cfg_inc_ix *x, int k, uint32_t ep, uint32_t i);

/* Move @c's records into the arrays that cfg_inc_reserve() allocated, if any. */
void cfg_inc_grow_apply(struct cfg *c, struct cfg_inc *inc);

#endif /* CFG_INC_INT_H */
