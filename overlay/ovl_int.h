/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What ovl_build.c (the whole build) and ovl_inc.c (incremental changes)
 * share: the store behind a header, and the fill functions of the header
 * (ovl_header.c) and of each kind of record (ovl_fill.c).  The table
 * operations of the single writer are in ovl.h.  Private to overlay/.
 */
#ifndef OVL_INT_H
#define OVL_INT_H

#include <string.h>

#include "ovl.h"

static inline unsigned
ovl_ip_len(const struct ovl_ip *ip)
{
	return ip->ver == 6 ? 16 : 4;
}

static inline bool
ovl_ip_eq(const struct ovl_ip *a, const struct ovl_ip *b)
{
	return a->ver == b->ver && memcmp(a->b, b->b, ovl_ip_len(a)) == 0;
}

/*
 * The slots of one record array: @cap of them allocated; those below the
 * newest header's count that an incremental change gave up wait in
 * @retired for the data plane's grace period, then in @free for reuse.
 */
struct ovl_slots {
	uint32_t cap;
	uint32_t *free, n_free;
	uint32_t *retired, n_retired, cap_retired;
};

struct ovl_store {
	const struct ovl *owner;        /* the newest header: it frees the store */
	struct ovl_slots eps, qps, conns, mrs, srqs;
	/* Every QP by (tenant, vip, vqpn): the writer's, never probed by lcores. */
	struct ovl_table by_qp;
};

/* The load factor of by_qp at its build (percent); the lcores' tables have 50. */
#define OVL_BY_QP_LOAD 60

/* Room for @n records, with some to spare (ovl_build.c). */
uint32_t ovl_room(uint32_t n);

void ovl_store_free(struct ovl_store *st);

/* The header's own part (tenants and ports) from @c (ovl_header.c). */
int ovl_header_fill(struct ovl *o, const struct cfg *c, char *err, size_t err_len);

/*
 * The VLAN policies of @o's ports and tenants from @c (ovl_header.c), called by
 * ovl_header_fill(); -1 and a message in @err when a "vni" policy meets a vni that
 * is not a VID.
 */
int ovl_vlan_build(struct ovl *o, const struct cfg *c, char *err, size_t err_len);

/* Each tenant's "acls" entry of @o's configuration (ovl_tenant.acl, .acl_index, .ud_acl). */
void ovl_acl_tenants(struct ovl *o);

/* The verdicts of connection @cn under its tenant's ACL (ovl_conn.acl_*); after ovl_acl_tenants() (ovl_fill.c). */
void ovl_acl_conn(const struct ovl *o, struct ovl_conn *cn);

/* Records from their configuration; errors are reported as "@where.field: ...". */
int ovl_endpoint_fill(const struct ovl *o, const struct cfg *c, const struct cfg_endpoint *ce,
		      struct ovl_endpoint *e, const char *where, char *err, size_t err_len);
void ovl_qp_fill(const struct ovl *o, const struct cfg_qp *cq, uint32_t endpoint, uint32_t peer_ep, struct ovl_qp *q);
/* Do running QPs @x and @r (the record @x names) name each other with types that go together? */
bool ovl_qp_names_back(const struct ovl *o, uint32_t x, uint32_t r);
void ovl_mr_fill(const struct cfg_mr *cm, uint32_t endpoint, struct ovl_mr *m);
/*
 * The connection of the half QP @h (cfg_qp_half()) whose source is the
 * endpoint @src_ep, on this host: OVL_HALF_OUT when the source is local,
 * else OVL_HALF_IN (@h local); see struct ovl_conn.
 */
int ovl_half_fill(const struct ovl *o, uint32_t h, uint32_t src_ep, uint64_t rate_bps, struct ovl_conn *cn,
		  const char *where, char *err, size_t err_len);
int ovl_conn_fill(const struct ovl *o, uint32_t l, uint32_t r, uint64_t rate_bps, struct ovl_conn *cn,
		  const char *where, char *err, size_t err_len);

/* The keys of a connection (by_tenant, by_fabric), of a UD QP, and of any QP (by_qp). */
void ovl_conn_keys(const struct ovl *o, const struct ovl_conn *cn, struct ovl_key *by_tenant,
		   struct ovl_key *by_fabric);
/* The one key of a half's connection: by_tenant for OVL_HALF_OUT, by_fabric for OVL_HALF_IN. */
void ovl_half_key(const struct ovl *o, const struct ovl_conn *cn, struct ovl_key *k);
void ovl_qp_ud_keys(const struct ovl *o, const struct ovl_qp *q, struct ovl_key *by_tenant,
		    struct ovl_key *by_fabric);
struct ovl_key ovl_qp_key(uint32_t tenant, const struct ovl_ip *vip, uint32_t vqpn);

#endif /* OVL_INT_H */
