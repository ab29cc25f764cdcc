/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of a CUnit test's main(): run what was registered, verbosely. */
#ifndef TESTS_CU_RUN_H
#define TESTS_CU_RUN_H

#include <CUnit/Basic.h>

/* Run every registered suite; returns the exit status, 1 on any failure. */
static inline int
cu_run_all(void)
{
	unsigned int fails;

	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}

#endif /* TESTS_CU_RUN_H */
