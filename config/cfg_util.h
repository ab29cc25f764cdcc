/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of cfg_util.c that the loader shares and that are not part of the
 * library's interface (cfg.h).
 */
#ifndef CFG_UTIL_H
#define CFG_UTIL_H

#include "cfg.h"

/* The value of the hexadecimal digit @ch, or -1 if it is not one. */
int cfg_hex_digit(char ch);

/*
 * The address @ip as text for a message, written into @buf; always
 * NUL-terminated, "(invalid address)" when @ip cannot be formatted.
 */
const char *cfg_ip_str(const struct cfg_ip *ip, char buf[CFG_IP_STRLEN]);

/*
 * Why the half @q (cfg_qp_half()) of @c cannot be, or NULL: its tenant does
 * not learn (said of "peer.vqpn", which it lacks), or its peer's vip is not
 * an endpoint of the tenant (@peer_ep false; said of "peer.vip").  The field
 * goes to *@field.  The message is the calling thread's, until its next
 * call; @buf holds an address it quotes.
 */
const char *cfg_half_check(const struct cfg *c, const struct cfg_qp *q, bool peer_ep, char buf[CFG_IP_STRLEN],
			   const char **field);

/*
 * Whether a learning tenant may have endpoints on other hosts: something
 * resolves their QPs (the switch's etcd follower).  The switch clears it
 * without --etcd; then cfg_learning_host_check() says why such an endpoint
 * @e of @c cannot be (its host), or NULL.  Same thread-local message rule
 * as cfg_half_check().
 */
extern bool cfg_learning_remote;
const char *cfg_learning_host_check(const struct cfg *c, const struct cfg_endpoint *e, char buf[CFG_IP_STRLEN]);

#endif /* CFG_UTIL_H */
