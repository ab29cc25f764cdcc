/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The learner (dp_learn.c): the source of changes that turns the lcores'
 * requests (dataplane/dp_learn.h) into half QP records of learning tenants,
 * and takes them away again when they fall idle.  It stands beside the
 * control socket and the etcd follower (docs/control.md): it hands its
 * records to the apply path (dp_delta_apply()) for a destination on this
 * host, and to etcd (dp_cluster_learn_put()) for one on another host, whose
 * switch allocates the pqpn; the follower then applies what etcd holds.
 */
#ifndef DP_LEARNER_H
#define DP_LEARNER_H

#include <stdint.h>

/* --learn-hold-ms (how long frames wait, default 500) and --learn-rate (resolutions a second per tenant, 1000). */
void dp_learn_configure(uint32_t hold_ms, uint32_t rate);
/* The requests' ring and /roce/learn; before the lcores start. 0 or -1. */
int dp_learn_init(void);
int dp_learn_start(void);
void dp_learn_stop(void);

#endif /* DP_LEARNER_H */
