/* SPDX-License-Identifier: BSD-3-Clause */
/* What the two files of the estats/ unit tests share. */
#ifndef TEST_ESTATS_H
#define TEST_ESTATS_H

#include <math.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "estats.h"

#define US(x) ((uint64_t)((x) * 1000.0))
#define MS(x) ((uint64_t)((x) * 1000000.0))

/* Role flags of the opcodes used here (rocev2's table, tests/unit checks it). */
#define WRITE_FIRST (ESTATS_F_REQ | ESTATS_F_FIRST | ESTATS_F_WRITE)
#define WRITE_MIDDLE (ESTATS_F_REQ | ESTATS_F_MIDDLE | ESTATS_F_WRITE)
#define WRITE_LAST (ESTATS_F_REQ | ESTATS_F_LAST | ESTATS_F_WRITE)
#define WRITE_ONLY (ESTATS_F_REQ | ESTATS_F_ONLY | ESTATS_F_WRITE)
#define SEND_ONLY (ESTATS_F_REQ | ESTATS_F_ONLY | ESTATS_F_SEND)
#define READ_REQ (ESTATS_F_REQ | ESTATS_F_ONLY | ESTATS_F_READ)
#define ACK (ESTATS_F_RESP | ESTATS_F_ONLY | ESTATS_F_ACK)
#define READ_RESP_ONLY (ESTATS_F_RESP | ESTATS_F_ONLY | ESTATS_F_READ)
#define CNP ESTATS_F_CNP

extern struct estats_profile prof;

/* A connection and its cold part in one allocation: free() of the connection frees both. */
struct conn_mem {
	struct estats_conn c;
	struct estats_conn_cold cold;
};

static inline struct estats_conn *
conn_new(void)
{
	struct conn_mem *m = aligned_alloc(64, sizeof(*m));

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	estats_conn_init(&m->c, &m->cold);
	return &m->c;
}

static inline struct estats_conn_stats *
stats_of(const struct estats_conn *c)
{
	static struct estats_conn_stats s;

	estats_conn_read(c, &s);
	return &s;
}

/* |got - want| <= tol * want */
static inline int
close_to(uint64_t got, uint64_t want, double tol)
{
	return fabs((double)got - (double)want) <= tol * (double)want;
}

void estats_hist_tests_add(CU_pSuite s);

#endif /* TEST_ESTATS_H */
