/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The top of the control plane (docs/control.md, "Who calls whom"): starts and
 * stops the sources of changes, which are the SIGHUP thread here, the control
 * socket (dp_ctl_sock.c), the etcd follower (dp_cluster.c) and the learner
 * (dp_learner.c); telemetry's /roce/reload is the fifth.  Each hands its changes to the one apply path
 * below it, dp_delta_apply_root() for a batch and dp_config_apply() for a
 * file, and nothing below calls back up: a file reload tells the sources that
 * asked for it through dp_reload_listen().
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "dp.h"
#include "dp_cluster.h"
#include "dp_ctl_sock.h"
#include "dp_learner.h"
#include "dp_offload.h"

/* The control thread: SIGHUP only sets a flag; the reload runs here. */
static volatile sig_atomic_t reload_wanted;
static volatile bool control_stop;
static pthread_t control_tid;
static bool control_running;

void
dp_reload_request(void)
{
	reload_wanted = 1;
}

static void *
control_main(void *arg)
{
	RTE_SET_USED(arg);
	while (!control_stop) {
		struct dp_reload_report rep;
		char path[4096], out[8192];

		usleep(10000);
		dp_offload_tick();
		if (!reload_wanted)
			continue;
		reload_wanted = 0;
		pthread_mutex_lock(&dp.ctl_lock);
		snprintf(path, sizeof(path), "%s", dp.config_path);
		pthread_mutex_unlock(&dp.ctl_lock);
		dp_config_apply(path, &rep);
		dp_reload_report_json(&rep, out, sizeof(out));
		fprintf(stderr, "reload %s: %s\n", path, out);
		dp_reload_report_free(&rep);
	}
	return NULL;
}

/* The control socket's path (--control), opened by dp_control_start(). */
static char *ctl_sock_path;

void
dp_ctl_sock_configure(const char *path)
{
	free(ctl_sock_path);
	ctl_sock_path = path ? strdup(path) : NULL;
}

int
dp_control_start(void)
{
	char err[512];
	int rc = rte_ctrl_thread_create(&control_tid, "roce-ctl", NULL, control_main, NULL);

	control_running = rc == 0;
	if (rc == 0 && ctl_sock_path && dp_ctl_sock_start(ctl_sock_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (rc == 0 && dp_cluster_start() < 0) {
		fprintf(stderr, "etcd: the follower did not start\n");
		return -1;
	}
	if (rc == 0 && dp_learn_start() < 0) {
		fprintf(stderr, "the learner did not start\n");
		return -1;
	}
	return rc;
}

void
dp_control_stop(void)
{
	dp_learn_stop();
	dp_cluster_stop();
	dp_ctl_sock_stop();
	if (!control_running)
		return;
	control_stop = true;
	pthread_join(control_tid, NULL);
	control_running = false;
}
