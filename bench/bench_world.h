/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The benchmarks' host, made in memory rather than parsed: 10.0.0.1 with one
 * local endpoint 192.168.0.10 holding N QPs (vqpn = pqpn = 16 + i), each
 * peered to a QP on one of N/250 remote endpoints (host 10.0.0.2,
 * 192.168.1.0 + i / 250, vqpn 16 + i % 250).  Connection i is L's QP 2i.
 */
#ifndef BENCH_WORLD_H
#define BENCH_WORLD_H

#include <stdint.h>

#include "cfg.h"

struct cfg *bench_cfg_make(uint32_t n);
/*
 * The same host with learned connections: blue learns, and only the N
 * remote QPs are records, halves from 192.168.0.10 (cfg_qp_half()); the
 * frames and tenant-side keys are those of bench_cfg_make().
 */
struct cfg *bench_cfg_make_learned(uint32_t n);
void bench_cfg_free(struct cfg *c);

#endif /* BENCH_WORLD_H */
