/* SPDX-License-Identifier: BSD-3-Clause */
/* What the telemetry commands share (dp_tel_util.c); dp_tel_key() is in dp.h. */
#ifndef DP_TEL_UTIL_H
#define DP_TEL_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_telemetry.h>

/* The connections a page of /roce/connections and /roce/dcqcn holds. */
#define TEL_CONN_PAGE 32

/* Where a paged command is: the records counted so far, those shown, and where the next page starts. */
struct dp_tel_page {
	uint32_t start, shown, total, next;
};

/* Count one more record: true when it goes on this page (the caller then counts it shown). */
static inline bool
dp_tel_page_take(struct dp_tel_page *pg)
{
	if (pg->total++ < pg->start)
		return false;
	if (pg->shown == TEL_CONN_PAGE) {
		if (!pg->next)
			pg->next = pg->total - 1;
		return false;
	}
	return true;
}

/* Record @i's dictionary @cd onto the page @d, keyed by its index. */
static inline void
dp_tel_page_add(struct rte_tel_data *d, uint32_t i, struct rte_tel_data *cd, struct dp_tel_page *pg)
{
	char key[16];

	snprintf(key, sizeof(key), "%u", i);
	rte_tel_data_add_dict_container(d, key, cd, 0);
	pg->shown++;
}

/* The page's "total" and "next" (0: it was the last). */
static inline void
dp_tel_page_end(struct rte_tel_data *d, const struct dp_tel_page *pg)
{
	rte_tel_data_add_dict_u64(d, "total", pg->total);
	rte_tel_data_add_dict_u64(d, "next", pg->next);
}

/* "[TENANT[,START]]" of the paged commands: 0, or -1 when the name is too long. */
int dp_tel_page_params(const char *params, char *tenant, size_t len, uint32_t *start);

/* The overlay and configuration readers hold ctl_lock against a reload. */
#define TEL_LOCKED(name, fn) \
static int \
name(const char *cmd, const char *params, struct rte_tel_data *d) \
{ \
	int rc; \
 \
	pthread_mutex_lock(&dp.ctl_lock); \
	rc = fn(cmd, params, d); \
	pthread_mutex_unlock(&dp.ctl_lock); \
	return rc; \
}

#endif /* DP_TEL_UTIL_H */
