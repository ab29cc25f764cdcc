/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checks between records: names, keys and addresses used twice, records
 * that name one that does not exist or does not fit (an endpoint's port, a
 * QP's or MR's endpoint, a QP's peer), and the tenants' max_qps quotas. They
 * fill the hash indexes of struct cfg_ld as they go, so each record is
 * checked against those before it and a file with a million QPs is checked
 * in linear time.
 *
 * Each function checks the record @r that a record parser (cfg_rec.h) has
 * just parsed, and only the fields that parsed valid; the *_begin()
 * functions prepare a section's indexes once its records are allocated.
 */
#ifndef CFG_CHECK_H
#define CFG_CHECK_H

#include <stdbool.h>

#include "cfg_ctx.h"

void cfg_check_tenants_begin(struct cfg_ld *ld);
/* A tenant's name and VNI are unique. */
void cfg_check_tenant(struct cfg_ld *ld, const struct cfg_rec *r);

void cfg_check_ports_begin(struct cfg_ld *ld);
/* A port's name and device are unique. */
void cfg_check_port_names(struct cfg_ld *ld, const struct cfg_rec *r);
/* An uplink's ip is unique among uplinks. */
void cfg_check_port_ip(struct cfg_ld *ld, const struct cfg_rec *r);

void cfg_check_endpoints_begin(struct cfg_ld *ld);
/* An endpoint's (tenant, vip) is unique. */
void cfg_check_endpoint_vip(struct cfg_ld *ld, const struct cfg_rec *r);
/* An endpoint's port is a tenant port of the endpoint's tenant. */
void cfg_check_endpoint_port(struct cfg_ld *ld, const struct cfg_rec *r);
/* A learning tenant's endpoint on another host needs a resolver (cfg_learning_host_check()). */
void cfg_check_endpoint_learning(struct cfg_ld *ld, const struct cfg_rec *r);

void cfg_check_qps_begin(struct cfg_ld *ld);
/*
 * A QP with a valid tenant: the tenant's quota, its vip an endpoint of the
 * tenant (which sets the QP's endpoint), its (tenant, vip, vqpn) unique
 * (which adds CFG_QP_KEY_OK to @r->ok) and its pqpn unique on its host.
 */
void cfg_check_qp(struct cfg_ld *ld, struct cfg_rec *r);
/*
 * Once every QP of the section at @p is indexed and ld->qp_ok filled: each
 * RC or UC QP's peer exists in its tenant, is not itself, has its type and
 * points back; the QP's peer is set then.
 */
void cfg_check_qp_peers(struct cfg_ld *ld, const struct cfg_path *p);

void cfg_check_mrs_begin(struct cfg_ld *ld);
/* An MR's vip is an endpoint of its tenant (which sets its endpoint); its rkey is unique there. */
void cfg_check_mr(struct cfg_ld *ld, const struct cfg_rec *r);

void cfg_check_neighbors_begin(struct cfg_ld *ld);
/* A neighbor's ip is unique. */
void cfg_check_neighbor(struct cfg_ld *ld, const struct cfg_rec *r);

/* Prepare the one-ACL-per-tenant check; false (ld->dg.oom set) on failure. */
bool cfg_check_acls_begin(struct cfg_ld *ld);
/* A tenant has one ACL at most. */
void cfg_check_acl_tenant(struct cfg_ld *ld, const struct cfg_rec *r);

#endif /* CFG_CHECK_H */
