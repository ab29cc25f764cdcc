/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ACL evaluation at configuration time and the NAK builder (ovl_acl.h).
 * The verdicts stored in a tenant and a connection are filled by
 * ovl_header.c and ovl_fill.c.
 */
#include <string.h>

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
