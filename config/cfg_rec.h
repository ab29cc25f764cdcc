/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The record parsers: one field table per kind of record, the parsing of
 * one record against it, and the checks that need nothing but that record.
 * Checks between records (uniqueness, references, peers, quotas) are in
 * cfg_check.c, and cfg_load.c calls both, record by record, in the order in
 * which the messages of one record are to be read.
 *
 * A record's parse function sets the record's defaults, begins it
 * (cfg_rec_begin()) and parses its fields into @r->ok and @r->present; it
 * returns false, and the record is skipped, when the element is not an
 * object. The bits of @r->ok are the rows of the kind's table below.
 */
#ifndef CFG_REC_H
#define CFG_REC_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg_ctx.h"

/* Rows of the tables, as bits of struct cfg_rec's masks. */
enum { CFG_T_NAME, CFG_T_VNI, CFG_T_MAX_QPS, CFG_T_RATE, CFG_T_MR_CHECK, CFG_T_DCQCN, CFG_T_QKEY,
       CFG_T_VLAN, CFG_T_LEARNING, CFG_T_IDLE, CFG_T_GSI_PPS };
enum { CFG_P_NAME, CFG_P_DEVICE, CFG_P_ROLE, CFG_P_IP, CFG_P_MAC, CFG_P_GATEWAY_MAC,
       CFG_P_TENANT, CFG_P_VLAN, CFG_P_RX_QUEUES };
enum { CFG_E_TENANT, CFG_E_VIP, CFG_E_HOST, CFG_E_PORT, CFG_E_MAC, CFG_E_XRC_SRQS };
enum { CFG_Q_TENANT, CFG_Q_VIP, CFG_Q_VQPN, CFG_Q_PQPN, CFG_Q_TYPE, CFG_Q_PEER, CFG_Q_RATE };
enum { CFG_M_TENANT, CFG_M_VIP, CFG_M_RKEY, CFG_M_ADDR, CFG_M_LENGTH, CFG_M_TARGET_RKEY,
       CFG_M_TARGET_ADDR, CFG_M_ACCESS };
enum { CFG_N_IP, CFG_N_MAC };
enum { CFG_A_TENANT, CFG_A_DEFAULT, CFG_A_RULES };

/* Names of enum values, in the order of the enum, NULL-terminated. */
extern const char *const cfg_dcqcn_profile_names[];     /* cfg_rec_tenant.c */
extern const char *const cfg_qp_type_names[];           /* cfg_rec_common.c */
extern const char *const cfg_acl_type_names[];          /* cfg_rec_common.c */

/* The table of a "rate", a tenant's or a QP's (cfg_rec_common.c). */
#define CFG_RATE_FIELDS 2
extern const struct cfg_field cfg_rate_fields[CFG_RATE_FIELDS];

/* The table of a "vlan", a port's or a tenant's (cfg_rec_vlan.c). */
#define CFG_VLAN_FIELDS 3
extern const struct cfg_field cfg_vlan_fields[CFG_VLAN_FIELDS];

/*
 * The parts of the "vlan" @vl of the record at @rp that go together ("vid"
 * with "tagged" only, "pcp" not with "keep" or "untagged"), and for "vni"
 * that the vni of @tenant (-1, an uplink: of every tenant without a "vlan"
 * of its own) fits in a VID.
 */
void cfg_vlan_check(struct cfg_ld *ld, const struct cfg_path *rp, const struct cfg_vlan *vl, int tenant);

/*
 * Loaders of whole top-level sections that take part in no cross check. Each
 * takes the value @v of its key (at @p) and returns false only to stop the
 * load (an unsupported version: the rest of the file follows another schema).
 */
bool cfg_version_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
bool cfg_comment_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
bool cfg_udp_port_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
/* "dcqcn"; an invalid one sets ld->quiet_dcqcn. The tenants inherit its parameters. */
bool cfg_dcqcn_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
bool cfg_offload_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
bool cfg_ecmp_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
bool cfg_shaping_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);

/* tenants[@i] of the section @v (at @p): its defaults are the top-level DCQCN parameters. */
bool cfg_tenant_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		      uint32_t i, struct cfg_rec *r);
/* The tenant's own "dcqcn", if it has a valid one: its profile and "params". */
void cfg_tenant_dcqcn_parse(struct cfg_ld *ld, const struct cfg_rec *r);

/*
 * Start the ports section @v (at @p): the records and their masks. A section
 * that is not an array sets ld->quiet_ports.
 */
void cfg_ports_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
/* ports[@i]; its mask goes to ld->port_ok. */
bool cfg_port_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		    uint32_t i, struct cfg_rec *r);
/* The keys that a port's role requires or forbids. An uplink's tenant is -1. */
void cfg_port_role_check(struct cfg_ld *ld, const struct cfg_rec *r);

/* Start the endpoints section @v (at @p): the records and their masks. */
void cfg_endpoints_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
/* endpoints[@i]; its mask goes to ld->ep_ok. */
bool cfg_endpoint_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
			uint32_t i, struct cfg_rec *r);
/*
 * The endpoint's "xrc_srqs", if valid (cfg_endpoint_parse() calls it): each
 * SRQ's numbers, at most CFG_XRC_SRQS_MAX, each vsrqn and psrqn once.
 */
void cfg_endpoint_srqs_parse(struct cfg_ld *ld, const struct cfg_rec *r);
/* An endpoint with a port needs a mac. */
void cfg_endpoint_mac_check(struct cfg_ld *ld, const struct cfg_rec *r);

/* Start the qps section @v (at @p): the records and their masks. */
void cfg_qps_alloc(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p);
/* qps[@i]; the caller stores its mask in ld->qp_ok once the record is checked. */
bool cfg_qp_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		  uint32_t i, struct cfg_rec *r);
/*
 * A peer is required on RC, UC and XRC QPs and not allowed on UD ones; a
 * half (a peer without "vqpn") of a learning tenant is RC or UC.
 */
void cfg_qp_type_check(struct cfg_ld *ld, const struct cfg_rec *r);

/* mrs[@i] of the section @v (at @p). */
bool cfg_mr_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		  uint32_t i, struct cfg_rec *r);
/* Neither the advertised nor the target window may wrap around 2^64. */
void cfg_mr_window_check(struct cfg_ld *ld, const struct cfg_rec *r);

/* acls[@i] of the section @v (at @p), without its rules. */
bool cfg_acl_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		   uint32_t i, struct cfg_rec *r);
/*
 * The ACL's "rules", if valid: each rule's fields, a src and dst of one IP
 * version, and no rule that matches exactly what an earlier one does.
 */
void cfg_acl_rules_parse(struct cfg_ld *ld, const struct cfg_rec *r);

/* neighbors[@i] of the section @v (at @p). */
bool cfg_neighbor_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
			uint32_t i, struct cfg_rec *r);

#endif /* CFG_REC_H */
