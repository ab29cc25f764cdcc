/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection tracking, ACLs and live revocation in the data plane.
 *
 * Policy.  The ACL verdicts are computed per connection when an overlay is
 * built (overlay/ovl_acl.h): a bit mask of the operation classes allowed in
 * each direction, and acl_block when nothing is allowed either way.  The
 * forwarding path tests the mask at the First or Only packet of a request
 * (acl_denied, then message_denied for the rest of the message) and drops
 * every frame of a blocked connection (acl_denied).  UD frames are checked
 * one by one, only in tenants whose ACL could deny a UD send.
 *
 * Revocation.  dp_dir_state.revoked stops a connection within one burst:
 * the control plane stores it (atomically, under ctl_lock) and the lcores
 * load it for every frame of the connection, responses included (drop
 * reason "revoked").  A connection is revoked
 *   - by /roce/revoke,TENANT,VIP,VQPN naming either of its ends: the key
 *     goes into a control-plane set that every reload applies again, and
 *     only /roce/unrevoke with the same key takes it out;
 *   - by a reload whose ACL denies everything on a connection that the
 *     running configuration has and allows: it stays revoked while the
 *     policy keeps denying it, and the first reload that allows it again
 *     restores it.  A connection new in a configuration that denies it is
 *     simply denied ("deny"), not revoked.
 *
 * NAKs.  On a revocation, each endpoint with requests outstanding on the
 * connection gets one NAK (RC ACKNOWLEDGE, AETH Remote Access Error) for
 * the oldest of them, addressed as if the responder had sent it.  The
 * control thread cannot use the lcores' tx queues, so it puts a request
 * (the NAK's addresses) on the nak_ring of the lcore that forwards that
 * endpoint's requests; the lcore takes it off at the top of its next loop
 * iteration, reads the outstanding-request state (which it writes itself,
 * so that the NAK covers every request it forwarded before it saw the
 * revocation), builds the NAK from its mempool and sends it on its own tx
 * queue.  The control thread waits (at most DP_NAK_WAIT_MS) for the lcores
 * to have taken its requests before it lets go of ctl_lock.
 */
#ifndef DP_ACL_H
#define DP_ACL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ring.h>

#include "dp.h"

#define DP_NAK_WAIT_MS 500
#define DP_REVOKED_SET_MAX 4096

/*
 * The reason to drop a frame of connection @c, on half @s of its state,
 * whatever it is (a revoked or an entirely denied connection), or
 * DP_DROP_NONE.
 */
static inline enum dp_drop
dp_acl_conn_check(const struct ovl_conn *c, const struct dp_dir_state *s)
{
	if (unlikely(__atomic_load_n(&s->revoked, __ATOMIC_ACQUIRE)))
		return DP_DROP_REVOKED;
	if (unlikely(c->acl_block))
		return DP_DROP_ACL_DENIED;
	return DP_DROP_NONE;
}

/* Is a message of request opcode flags @opf allowed in direction @dir of @c? */
static inline bool
dp_acl_msg_allowed(const struct ovl_conn *c, unsigned dir, uint32_t opf)
{
	return (c->acl_allow[dir] & ovl_op_class(opf)) != 0;
}

/*
 * A frame that passed the anti-spoofing checks of its connection, on half
 * @s, whether policy then forwards it or not: first and last seen.
 */
static inline void
dp_acl_seen(struct dp_dir_state *s, uint64_t now)
{
	if (unlikely(s->first_seen == 0))
		s->first_seen = now;
	s->last_seen = now;
}

/*
 * Tracking of a forwarded frame on half @s of its connection: on RC and XRC
 * the request and answer PSNs.  @answers is the half where answers to @s's
 * requests are recorded.
 */
static inline void
dp_acl_track(struct dp_dir_state *s, const struct dp_dir_state *answers, const struct roce_pkt *pkt,
	     uint8_t *data)
{
	const struct roce_aeth *aeth;
	uint32_t psn;

	if (!ovl_track_opcode(pkt->opcode))
		return;
	psn = roce_bth_psn(roce_pkt_bth(pkt, data));
	if (pkt->flags & ROCE_OPF_REQ) {
		ovl_track_request(&s->req, &answers->ack, psn);
		s->req.dscp = ovl_ip_dscp(data + pkt->l3_off, pkt->ip_ver);
		s->req.pkey = roce_bth_pkey(roce_pkt_bth(pkt, data));
	} else if (pkt->flags & ROCE_OPF_RESP) {
		aeth = roce_pkt_ext(pkt, data, ROCE_EXT_AETH);
		ovl_track_response(&s->ack, psn, aeth != NULL, aeth ? roce_aeth_syndrome(aeth) : 0,
				   aeth ? roce_aeth_msn(aeth) : 0);
	}
}

/*
 * The half of the dynamic state where the answers to L's requests on @c are
 * recorded: its ingress half, or for a hairpin the egress half of R's own
 * connection, on which R's frames travel (when R has one; a half has none).
 */
static inline struct dp_dir_state *
dp_acl_answers_to_l(const struct ovl *o, const struct ovl_conn *c)
{
	/* A learned half has no reverse connection (struct ovl_conn). */
	uint32_t pc = c->hairpin && !c->half ? o->qps[c->r].conn : OVL_NONE;

	return pc == OVL_NONE ? &dp_conn_state(c->state)->ingress : &dp_conn_state(o->conns[pc].state)->egress;
}

/* Is UD traffic from @src to @dst (vIPs of @t) allowed? */
static inline bool
dp_acl_ud_allowed(const struct ovl_tenant *t, const struct ovl_ip *src, const struct ovl_ip *dst)
{
	if (likely(!t->ud_acl))
		return true;
	return ovl_acl_decide(t->acl, src->ver, src->b, dst->b, CFG_QP_UD, CFG_OP_SEND, NULL);
}

/* A NAK an lcore is asked to send (a pointer on its nak_ring; it frees it). */
struct dp_nak_req {
	uint32_t req_state;     /* state id of the half that holds the requests */
	uint32_t ack_state;     /* and of the half that holds their answers */
	uint8_t req_half;       /* 0: egress half, 1: ingress half */
	uint8_t ack_half;
	uint16_t out_port;      /* port index */
	struct ovl_vlan vlan;   /* the VLAN policy of the NAK's side */
	struct roce_frame_spec spec; /* all but the PSN, the AETH, the tags, DSCP and P_Key */
};

/* Set-up (main.c, after the lcores are assigned) and release at exit. */
int dp_acl_init(void);
void dp_acl_fini(void);

/*
 * Take NAK requests off @lc's ring and build their frames: at most @max
 * mbufs into @pkts with their output port indices into @ports.  Returns how
 * many.  Only the lcore that owns @lc calls it.
 */
unsigned dp_acl_nak_poll(struct dp_lcore *lc, struct rte_mbuf **pkts, uint16_t *ports, unsigned max);

/*
 * The reload's part (dp_config_apply(), under ctl_lock, after the stable
 * ids of @o are assigned and before @o is published; @old may be NULL):
 * apply the revoked set and the policy to every connection of @o, revoke
 * and NAK what became denied, restore what policy allows again.
 */
void dp_acl_reload(const struct ovl *o, const struct ovl *old);

/*
 * As dp_acl_reload(), for the connections an incremental change touched
 * (ovl_inc.h): @o and @old are the headers after and before, over one store.
 */
void dp_acl_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n);

/*
 * Hand the revocations and restorations of the last dp_acl_reload() (or
 * command) to the offload manager, which withdraws or installs the DROP
 * rules.  dp_offload_drop_conn() takes ctl_lock itself, so this runs just
 * after the caller lets go of it.
 */
void dp_acl_offload_flush(void);

/* Register /roce/revoke, /roce/unrevoke and /roce/revoked. */
int dp_acl_telemetry_init(void);

/* Connections revoked over the process's life. */
uint64_t dp_acl_revocations(void);

/*
 * For /roce/connections: the verdict of @c ("allow", "deny", "partial" or
 * "revoked") and, in @rule, what gave it ("acls[0].rules[2]", "default",
 * several joined by ",", or "/roce/revoke").
 */
const char *dp_acl_verdict(const struct ovl *o, const struct ovl_conn *c, const struct dp_conn_state *st,
			   char *rule, size_t len);

/* The classes of @mask as "send,write,read,atomic" ("" for none). */
const char *dp_acl_ops_text(unsigned mask, char *buf, size_t len);

/* A TSC reading of the lcores as nanoseconds since the Unix epoch; 0 stays 0. */
uint64_t dp_acl_tsc_to_ns(uint64_t tsc);

#endif /* DP_ACL_H */
