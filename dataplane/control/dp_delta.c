/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deltas on the running switch (dp_delta.h): merge and check the batch
 * against dp.cfg (config/cfg_delta.c), then publish the result as a reload
 * does, all under dp.ctl_lock so that batches from the socket, SIGHUP and
 * telemetry follow one another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfg_json.h"
#include "dp_acl.h"
#include "dp_delta.h"
#include "dp_inc.h"

struct dp_delta_totals dp_delta_totals;

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The batch in @root (parsed by the caller) applied; see dp_delta_apply(). */
int
dp_delta_apply_root(const struct cfg_jv *root, struct dp_delta_report *rep)
{
	double t0, t1;
	struct cfg *c;
	int rc;

	memset(rep, 0, sizeof(*rep));
	pthread_mutex_lock(&dp.ctl_lock);
	t0 = now_us();
	if (!dp.cfg) {
		pthread_mutex_unlock(&dp.ctl_lock);
		rep->rr.errs.msg = malloc(sizeof(char *));
		if (rep->rr.errs.msg && (rep->rr.errs.msg[0] = strdup("request: the switch has no configuration yet")))
			rep->rr.errs.n = 1;
		return -1;
	}
	/* In place when the batch allows it (dp_inc.c), else the whole configuration again. */
	if (dp_inc_delta_locked(root, rep) == 1) {
		rep->check_us = rep->rr.load_ms * 1e3;
		rc = 0;
	} else {
		c = cfg_delta_apply_root(dp.cfg, root, "request", &rep->rr.errs, &rep->sum);
		t1 = now_us();
		rep->check_us = t1 - t0;
		rep->rr.load_ms = rep->check_us / 1e3;
		rc = c ? dp_config_publish_locked(c, &rep->rr) : -1;
	}
	rep->build_us = rep->rr.build_ms * 1e3;
	rep->publish_us = rep->rr.publish_ms * 1e3;
	if (rc == 0) {
		dp_delta_totals.applied++;
		for (int k = 0; k < CFG_DK_N; k++)
			dp_delta_totals.changes += rep->sum.put[k] + rep->sum.deleted[k];
	} else {
		dp_delta_totals.rejected++;
	}
	pthread_mutex_unlock(&dp.ctl_lock);
	if (rc == 0)
		dp_acl_offload_flush();
	return rc;
}

int
dp_delta_apply(char *buf, size_t len, struct dp_delta_report *rep)
{
	struct cfg_jdoc doc;
	struct cfg_jerr je;
	int rc;

	if (cfg_json_parse(buf, len, &doc, &je) < 0) {
		char *m = NULL;

		memset(rep, 0, sizeof(*rep));
		if (asprintf(&m, "request:%d:%d: syntax error: %s", je.line, je.col, je.text) >= 0) {
			rep->rr.errs.msg = malloc(sizeof(char *));
			if (rep->rr.errs.msg) {
				rep->rr.errs.msg[0] = m;
				rep->rr.errs.n = 1;
			} else {
				free(m);
			}
		}
		pthread_mutex_lock(&dp.ctl_lock);
		dp_delta_totals.rejected++;
		pthread_mutex_unlock(&dp.ctl_lock);
		return -1;
	}
	rc = dp_delta_apply_root(doc.root, rep);
	cfg_json_free(&doc);
	return rc;
}

void
dp_delta_report_free(struct dp_delta_report *rep)
{
	cfg_errors_clear(&rep->rr.errs);
}
