/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch with the control socket and the etcd follower, for the delta
 * and cluster tests until dataplane/main.c parses these options itself: the
 * switch's own main(), compiled here under another name, behind a main()
 * that takes "--control PATH", "--etcd URLS", "--etcd-prefix P" and
 * "--etcd-cacert/-cert/-key FILE" out of the application options and hands
 * them to dp_ctl_sock_configure() and dp_cluster_configure(), which
 * dp_control_start() then starts.  Nothing else differs from
 * build/dataplane/dpdk-roce-vswitch.
 */
#define main dp_switch_main
#include "../../dataplane/main.c"
#undef main

#include "dp_cluster.h"
#include "dp_delta.h"

int
main(int argc, char **argv)
{
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	const char *etcd = NULL, *prefix = NULL;
	struct dp_cluster_tls tls = { 0 };
	bool app = false;
	int n = 0;

	if (!av)
		return 1;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			app = true;
		if (app && i + 1 < argc) {
			const char **dst = !strcmp(argv[i], "--etcd") ? &etcd :
					   !strcmp(argv[i], "--etcd-prefix") ? &prefix :
					   !strcmp(argv[i], "--etcd-cacert") ? &tls.cacert :
					   !strcmp(argv[i], "--etcd-cert") ? &tls.cert :
					   !strcmp(argv[i], "--etcd-key") ? &tls.key : NULL;

			if (!strcmp(argv[i], "--control")) {
				dp_ctl_sock_configure(argv[++i]);
				continue;
			}
			if (dst) {
				*dst = argv[++i];
				continue;
			}
		}
		av[n++] = argv[i];
	}
	av[n] = NULL;
	if (etcd && dp_cluster_configure(etcd, prefix, &tls) < 0) {
		fprintf(stderr, "--etcd %s: no URL\n", etcd);
		return 1;
	}
	n = dp_switch_main(n, av);
	free(av);
	return n;
}
