/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Estats parameters, profiles, and the readers' side of a connection's state.
 */
#include <errno.h>
#include <string.h>

#include "estats.h"

const char *const estats_nak_names[ESTATS_NAK_MAX] = {
#define ESTATS_X_NAME(e, n) [ESTATS_NAK_##e] = n,
	ESTATS_NAKS(ESTATS_X_NAME)
#undef ESTATS_X_NAME
};

const char *const estats_kind_names[ESTATS_KINDS] = {
	[ESTATS_NET] = "network_rtt",
	[ESTATS_HOST] = "host_response",
	[ESTATS_MSG] = "message_completion",
};

void
estats_params_default(struct estats_params *p)
{
	p->sample_timeout_ms = 10000;
	p->oos_resync = 1024;
}

int
estats_profile_build(struct estats_profile *prof, const struct estats_params *p)
{
	/* The probe words keep 39 bits of time and call half of that range "negative". */
	if (p->sample_timeout_ms < 1 || p->sample_timeout_ms > 200000)
		return -EINVAL;
	if (p->oos_resync < 1 || p->oos_resync > 65535)
		return -EINVAL;
	prof->timeout_ns = (uint64_t)p->sample_timeout_ms * 1000000u;
	prof->oos_resync = p->oos_resync;
	return 0;
}

void
estats_conn_init(struct estats_conn *c, struct estats_conn_cold *cold)
{
	memset(c, 0, sizeof(*c));
	memset(cold, 0, sizeof(*cold));
	c->egress.cold = &cold->egress;
	c->ingress.cold = &cold->ingress;
}

void
estats_conn_reset(struct estats_conn *c)
{
	struct estats_egress_cold *ec = c->egress.cold;
	struct estats_ingress_cold *ic = c->ingress.cold;

	memset(c, 0, sizeof(*c));
	memset(ec, 0, sizeof(*ec));
	memset(ic, 0, sizeof(*ic));
	c->egress.cold = ec;
	c->ingress.cold = ic;
}

void
estats_conn_stats_reset(struct estats_conn_stats *s)
{
	memset(s, 0, sizeof(*s));
}

void
estats_conn_read(const struct estats_conn *c, struct estats_conn_stats *out)
{
	const struct estats_egress *eg = &c->egress;
	const struct estats_ingress *in = &c->ingress;
	unsigned k;

	out->retrans = ESTATS_LOAD(&eg->retrans);
	out->ce_egress = ESTATS_LOAD(&eg->ce);
	out->oos = ESTATS_LOAD(&in->oos);
	out->dup = ESTATS_LOAD(&in->dup);
	out->cnp_rx = ESTATS_LOAD(&in->cnp_rx);
	out->cnp_tx = ESTATS_LOAD(&in->cnp_tx);
	out->ce_ingress = ESTATS_LOAD(&in->ce);
	for (k = 0; k < ESTATS_NAK_MAX; k++) {
		out->naks_sent[k] = ESTATS_LOAD(&eg->cold->naks[k]);
		out->naks_received[k] = ESTATS_LOAD(&in->cold->naks[k]);
	}
	estats_hist_snapshot(&out->hist[ESTATS_NET], &in->cold->net);
	estats_hist_snapshot(&out->hist[ESTATS_HOST], &eg->cold->host);
	estats_hist_snapshot(&out->hist[ESTATS_MSG], &in->cold->msg);
}

void
estats_conn_stats_merge(struct estats_conn_stats *dst, const struct estats_conn_stats *src)
{
	unsigned k;

	dst->retrans += src->retrans;
	dst->oos += src->oos;
	dst->dup += src->dup;
	dst->cnp_rx += src->cnp_rx;
	dst->cnp_tx += src->cnp_tx;
	dst->ce_egress += src->ce_egress;
	dst->ce_ingress += src->ce_ingress;
	for (k = 0; k < ESTATS_NAK_MAX; k++) {
		dst->naks_sent[k] += src->naks_sent[k];
		dst->naks_received[k] += src->naks_received[k];
	}
	for (k = 0; k < ESTATS_KINDS; k++)
		estats_hist_merge(&dst->hist[k], &src->hist[k]);
}
