/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ACL evaluation at configuration time and the NAK builder (ovl_acl.h).
 */
#include <string.h>

#include "ovl.h"
#include "ovl_acl.h"

bool
ovl_cidr_match(const struct cfg_cidr *p, uint8_t ver, const uint8_t *ip)
{
	unsigned full = p->len / 8, rest = p->len % 8;

	if (p->ip.ver != ver)
		return false;
	if (memcmp(p->ip.b, ip, full) != 0)
		return false;
	return rest == 0 || ((p->ip.b[full] ^ ip[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

bool
ovl_acl_decide(const struct cfg_acl *acl, uint8_t ver, const uint8_t *src, const uint8_t *dst,
	       unsigned qp_type, unsigned op, uint32_t *rule)
{
	if (rule)
		*rule = OVL_ACL_DEFAULT;
	if (!acl)
		return true;
	for (uint32_t i = 0; i < acl->n_rules; i++) {
		const struct cfg_acl_rule *r = &acl->rules[i];

		if (!(r->types & (1u << qp_type)) || !(r->ops & op))
			continue;
		if ((r->has_src && !ovl_cidr_match(&r->src, ver, src)) ||
		    (r->has_dst && !ovl_cidr_match(&r->dst, ver, dst)))
			continue;
		if (rule)
			*rule = i;
		return r->action == CFG_ACL_ALLOW;
	}
	return acl->def == CFG_ACL_ALLOW;
}

void
ovl_acl_tenants(struct ovl *o)
{
	const struct cfg *c = o->cfg;

	for (uint32_t t = 0; t < o->n_tenants; t++) {
		o->tenants[t].acl = NULL;
		o->tenants[t].acl_index = OVL_NONE;
		o->tenants[t].ud_acl = false;
	}
	for (uint32_t i = 0; i < c->n_acls; i++) {
		const struct cfg_acl *a = &c->acls[i];
		struct ovl_tenant *t = &o->tenants[a->tenant];

		t->acl = a;
		t->acl_index = i;
		/* UD frames are checked one by one only where a deny could apply to them. */
		t->ud_acl = a->def == CFG_ACL_DENY;
		for (uint32_t r = 0; r < a->n_rules; r++)
			if (a->rules[r].action == CFG_ACL_DENY && (a->rules[r].types & (1u << CFG_QP_UD)) &&
			    (a->rules[r].ops & CFG_OP_SEND))
				t->ud_acl = true;
	}
}

void
ovl_acl_conn(const struct ovl *o, struct ovl_conn *cn)
{
	const struct ovl_endpoint *le, *re;
	const struct cfg_acl *a = o->tenants[cn->tenant].acl;
	uint32_t lei, rei;

	ovl_conn_ends(o, cn, &lei, &rei);
	le = &o->endpoints[lei];
	re = &o->endpoints[rei];
	unsigned possible = ovl_type_ops(cn->l_type);

	for (unsigned d = 0; d < 2; d++) {
		const struct ovl_ip *src = d == OVL_DIR_L2R ? &le->vip : &re->vip;
		const struct ovl_ip *dst = d == OVL_DIR_L2R ? &re->vip : &le->vip;
		unsigned allow = 0;

		for (unsigned k = 0; k < 4; k++)
			if (ovl_acl_decide(a, src->ver, src->b, dst->b, cfg_acl_type(cn->l_type), 1u << k,
					   &cn->acl_rule[d][k]))
				allow |= 1u << k;
		cn->acl_allow[d] = (uint8_t)allow;
	}
	cn->acl_block = !(cn->acl_allow[OVL_DIR_L2R] & possible) && !(cn->acl_allow[OVL_DIR_R2L] & possible);
}

void
ovl_nak_spec(struct roce_frame_spec *s, const uint8_t eth[12], uint8_t ver, const uint8_t *src,
	     const uint8_t *dst, uint32_t dqpn)
{
	unsigned alen = ver == 6 ? 16 : 4;

	memset(s, 0, sizeof(*s));
	memcpy(s->dst_mac, eth, 6);
	memcpy(s->src_mac, eth + 6, 6);
	s->ip_ver = ver == 6 ? 6 : 4;
	memcpy(s->src_ip, src, alen);
	memcpy(s->dst_ip, dst, alen);
	s->ttl = 64;
	s->udp_sport = (uint16_t)(0xc000u | (dqpn & 0x3fffu));
	s->opcode = ROCE_OP_RC_ACK;
	s->pkey = 0xffff;
	s->dqpn = dqpn & ROCE_QPN_MASK;
}

size_t
ovl_nak_build(uint8_t *buf, size_t cap, const struct roce_frame_spec *spec, uint32_t psn, uint32_t msn)
{
	struct roce_frame_spec s = *spec;
	struct roce_aeth aeth;

	s.psn = psn & ROCE_PSN_MASK;
	roce_aeth_set(&aeth, ROCE_AETH_NAK_REM_ACC_ERR, msn);
	return roce_build_frame(buf, cap, &s, &aeth, sizeof(aeth), NULL, 0);
}
