/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch with the control socket, for the delta tests until
 * dataplane/main.c parses --control itself: the switch's own main(),
 * compiled here under another name, behind a main() that takes
 * "--control PATH" out of the application options and hands it to
 * dp_ctl_sock_configure(), which dp_control_start() then opens.  Nothing
 * else differs from build/dataplane/dpdk-roce-vswitch.
 */
#define main dp_switch_main
#include "../../dataplane/main.c"
#undef main

#include "dp_delta.h"

int
main(int argc, char **argv)
{
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	bool app = false;
	int n = 0;

	if (!av)
		return 1;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			app = true;
		if (app && !strcmp(argv[i], "--control") && i + 1 < argc) {
			dp_ctl_sock_configure(argv[++i]);
			continue;
		}
		av[n++] = argv[i];
	}
	av[n] = NULL;
	return dp_switch_main(n, av);
}
