/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket (--control PATH, dp_ctl_sock.c): a Unix stream socket,
 * mode 0600, taking newline-delimited JSON requests and answering each with
 * one JSON line (docs/control.md), served by a control thread of its own.
 */
#ifndef DP_CTL_SOCK_H
#define DP_CTL_SOCK_H

#include <stddef.h>
#include <stdint.h>

/* A client that sends no request and takes no answer for this long is closed (--control-idle-s). */
#define DP_CTL_IDLE_S 60u
/* Request bytes held for all clients together (--control-max-bytes). */
#define DP_CTL_MAX_BYTES (512ull << 20)

/* Set the limits above before dp_ctl_sock_start(); 0 keeps a default. */
void dp_ctl_sock_limits(uint32_t idle_s, uint64_t max_bytes);

/*
 * Listen at @path: a stale socket there is replaced; any other file is an
 * error.  Returns 0, or -1 with a message in @err.
 */
int dp_ctl_sock_start(const char *path, char *err, size_t err_len);
/* Close the socket and its connections, remove its path, join the thread. */
void dp_ctl_sock_stop(void);

#endif /* DP_CTL_SOCK_H */
