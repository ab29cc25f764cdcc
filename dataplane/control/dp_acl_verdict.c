/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A connection's ACL verdict in words, for /roce/connections: which classes
 * of requests each direction may send, what decided, and whether it is
 * revoked (dp_acl.h).  It reads the overlay and the connection's state, and
 * keeps nothing of its own.
 */
#include <stdio.h>

#include "dp.h"
#include "dp_acl.h"

const char *
dp_acl_ops_text(unsigned mask, char *buf, size_t len)
{
	static const char *const names[] = { "send", "write", "read", "atomic" };
	size_t n = 0;

	buf[0] = 0;
	for (unsigned k = 0; k < 4 && n < len; k++)
		if (mask & (1u << k))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", names[k]);
	return buf;
}

const char *
dp_acl_verdict(const struct ovl *o, const struct ovl_conn *c, const struct dp_conn_state *st, char *rule,
	       size_t len)
{
	const struct ovl_tenant *t = &o->tenants[c->tenant];
	unsigned possible = ovl_type_ops(c->l_type);
	uint32_t revoked = __atomic_load_n(&st->egress.revoked, __ATOMIC_RELAXED);
	uint32_t seen[8];
	unsigned n_seen = 0;
	size_t n = 0, keep = 0;

	rule[0] = 0;
	if (revoked & DP_REVOKED_CMD) {
		snprintf(rule, len, "/roce/revoke");
	} else {
		/* Each rule that gave a verdict, once, in the order they decide. */
		for (unsigned d = 0; d < 2; d++)
			for (unsigned k = 0; k < 4; k++) {
				uint32_t r = c->acl_rule[d][k];
				unsigned j;

				if (!(possible & (1u << k)))
					continue;
				for (j = 0; j < n_seen && seen[j] != r; j++)
					;
				if (j < n_seen)
					continue;
				seen[n_seen++] = r;
				if (n >= len)
					continue;
				if (r == OVL_ACL_DEFAULT)
					n += (size_t)snprintf(rule + n, len - n, "%sdefault", n ? "," : "");
				else
					n += (size_t)snprintf(rule + n, len - n, "%sacls[%u].rules[%u]", n ? "," : "",
							      t->acl_index, r);
				/* Whole names only: what does not fit becomes ",...". */
				if (n + 4 < len)
					keep = n;
			}
		if (n >= len)
			snprintf(rule + keep, len - keep, "%s...", keep ? "," : "");
	}
	if (revoked)
		return "revoked";
	if (c->acl_block)
		return "deny";
	if ((c->acl_allow[OVL_DIR_L2R] & possible) == possible && (c->acl_allow[OVL_DIR_R2L] & possible) == possible)
		return "allow";
	return "partial";
}
