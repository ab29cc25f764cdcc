/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dcqcn-sim: replay a list of CNP and transmit events through the same
 * dcqcn/ reaction point that the switch runs, and print the rate trace.
 *
 *   dcqcn-sim [--profile nvidia|paper] [--line-rate-gbps G]
 *             [--set NAME=VALUE ...] EVENTS.json
 *
 * EVENTS.json is a JSON array of objects in time order:
 *   {"t_us": 0, "ev": "cnp"}                a CNP arrives
 *   {"t_us": 12.5, "ev": "tx", "bytes": 4096}  bytes leave (byte counter)
 *   {"t_us": 20000, "ev": "end"}            stop here; later events are not read
 * Without an "end" the run stops at the last event.
 *
 * The output is CSV with the header "t_us,rate_gbps,target_gbps,alpha,stage"
 * and one row for the initial state and for every change of state, whether
 * an input event or a timer (alpha update, deferred cut, rate increase)
 * caused it.  The stage is the phase the next increase will use.
 *
 * Exit status: 0 on success, 2 on a usage error or bad input.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dcqcn.h"

#define EXIT_BAD_INPUT 2

struct sim {
	struct dcqcn_profile prof;
	struct dcqcn_rp rp;
	struct dcqcn_counters ctr;
	/* The last printed state, to print only changes. */
	int printed;
	uint64_t rc, rt;
	uint32_t alpha;
	enum dcqcn_stage stage;
};

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: dcqcn-sim [--profile nvidia|paper] [--line-rate-gbps G]\n"
		"                 [--set NAME=VALUE ...] EVENTS.json\n"
		"Replays CNP and tx events through the DCQCN reaction point and prints\n"
		"t_us,rate_gbps,target_gbps,alpha,stage at every change of state.\n"
		"Defaults: --profile nvidia --line-rate-gbps 100.  NAME is a parameter\n"
		"of the configuration:");
	for (unsigned int i = 0; dcqcn_param_name(i) != NULL; i++)
		fprintf(f, "%s %s", i % 4 == 0 ? "\n   " : "", dcqcn_param_name(i));
	fprintf(f, "\n");
}

/* Print a rate in bits/s as Gb/s with all nine decimals, exactly. */
static void
print_gbps(uint64_t bps)
{
	printf("%" PRIu64 ".%09" PRIu64, bps / 1000000000u, bps % 1000000000u);
}

static void
emit(struct sim *s, uint64_t t_ns)
{
	enum dcqcn_stage stage = dcqcn_rp_stage(&s->rp, &s->prof);
	uint64_t rc = dcqcn_rp_rate(&s->rp), rt = dcqcn_rp_target(&s->rp);
	uint32_t alpha = dcqcn_rp_alpha(&s->rp);

	if (s->printed && rc == s->rc && rt == s->rt && alpha == s->alpha && stage == s->stage)
		return;
	s->printed = 1;
	s->rc = rc;
	s->rt = rt;
	s->alpha = alpha;
	s->stage = stage;
	printf("%" PRIu64 ".%03" PRIu64 ",", t_ns / 1000, t_ns % 1000);
	print_gbps(rc);
	putchar(',');
	print_gbps(rt);
	printf(",%.6f,%s\n", (double)alpha / DCQCN_ALPHA_ONE, dcqcn_stage_name(stage));
}

/* Run every timer event up to and including @t, one row per change. */
static void
run_until(struct sim *s, uint64_t t)
{
	uint64_t next;

	while ((next = dcqcn_rp_next_event(&s->rp, &s->prof)) <= t) {
		dcqcn_rp_advance(&s->rp, &s->prof, next);
		emit(s, next);
	}
	dcqcn_rp_advance(&s->rp, &s->prof, t);
}

static int
bad_event(const char *file, size_t i, const char *msg)
{
	fprintf(stderr, "dcqcn-sim: %s: event %zu: %s\n", file, i, msg);
	return EXIT_BAD_INPUT;
}

static int
replay(struct sim *s, const char *file)
{
	json_error_t err;
	json_t *root, *ev;
	uint64_t t_prev = 0;
	size_t i;
	int rc = 0;

	root = json_load_file(file, JSON_REJECT_DUPLICATES, &err);
	if (root == NULL) {
		if (err.line > 0)
			fprintf(stderr, "dcqcn-sim: %s:%d:%d: %s\n", file, err.line, err.column,
				err.text);
		else
			fprintf(stderr, "dcqcn-sim: %s\n", err.text);
		return EXIT_BAD_INPUT;
	}
	if (!json_is_array(root)) {
		fprintf(stderr, "dcqcn-sim: %s: expected a JSON array of events\n", file);
		json_decref(root);
		return EXIT_BAD_INPUT;
	}

	printf("t_us,rate_gbps,target_gbps,alpha,stage\n");
	emit(s, 0);
	json_array_foreach(root, i, ev) {
		json_t *jt, *jev, *jbytes;
		const char *name, *key;
		json_t *val;
		double t_us;
		uint64_t t_ns, bytes = 0;

		if (!json_is_object(ev)) {
			rc = bad_event(file, i, "not an object");
			break;
		}
		json_object_foreach(ev, key, val) {
			if (strcmp(key, "t_us") != 0 && strcmp(key, "ev") != 0 &&
			    strcmp(key, "bytes") != 0)
				break;
		}
		if (key != NULL) {
			fprintf(stderr, "dcqcn-sim: %s: event %zu: unknown key \"%s\"\n", file, i, key);
			rc = EXIT_BAD_INPUT;
			break;
		}
		jt = json_object_get(ev, "t_us");
		jev = json_object_get(ev, "ev");
		jbytes = json_object_get(ev, "bytes");
		if (!json_is_number(jt)) {
			rc = bad_event(file, i, "\"t_us\" must be a number");
			break;
		}
		t_us = json_number_value(jt);
		if (!isfinite(t_us) || t_us < 0 || t_us > 1e12) {
			rc = bad_event(file, i, "\"t_us\" must be between 0 and 1e12");
			break;
		}
		t_ns = (uint64_t)llround(t_us * 1000.0);
		if (t_ns < t_prev) {
			rc = bad_event(file, i, "\"t_us\" goes back in time");
			break;
		}
		if (!json_is_string(jev)) {
			rc = bad_event(file, i, "\"ev\" must be \"cnp\", \"tx\" or \"end\"");
			break;
		}
		name = json_string_value(jev);
		if (strcmp(name, "tx") == 0) {
			if (!json_is_integer(jbytes) || json_integer_value(jbytes) < 0 ||
			    json_integer_value(jbytes) > (json_int_t)UINT32_MAX) {
				rc = bad_event(file, i, "\"bytes\" must be an integer from 0 to 4294967295");
				break;
			}
			bytes = (uint64_t)json_integer_value(jbytes);
		} else if (jbytes != NULL) {
			rc = bad_event(file, i, "\"bytes\" belongs to \"tx\" events only");
			break;
		}
		if (strcmp(name, "cnp") != 0 && strcmp(name, "tx") != 0 && strcmp(name, "end") != 0) {
			rc = bad_event(file, i, "\"ev\" must be \"cnp\", \"tx\" or \"end\"");
			break;
		}
		t_prev = t_ns;
		run_until(s, t_ns);
		if (strcmp(name, "end") == 0) {
			emit(s, t_ns);
			break;
		}
		if (strcmp(name, "cnp") == 0)
			dcqcn_rp_on_cnp(&s->rp, &s->prof, t_ns, &s->ctr);
		else
			dcqcn_rp_on_tx(&s->rp, &s->prof, (uint32_t)bytes, t_ns);
		emit(s, t_ns);
	}
	json_decref(root);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "line-rate-gbps", required_argument, NULL, 'r' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *profile = "nvidia";
	double gbps = 100.0;
	char **sets;
	int n_sets = 0, c, rc;
	struct dcqcn_params params;
	struct sim s;
	char *end;

	sets = calloc((size_t)argc, sizeof(*sets));
	if (sets == NULL) {
		perror("dcqcn-sim");
		return 1;
	}
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case 'r':
			errno = 0;
			gbps = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || !(gbps > 0.0 && gbps < 17000.0)) {
				fprintf(stderr, "dcqcn-sim: --line-rate-gbps %s: expected a rate in Gb/s "
					"above 0 and below 17000\n", optarg);
				return EXIT_BAD_INPUT;
			}
			break;
		case 's':
			sets[n_sets++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_BAD_INPUT;
	}
	if (dcqcn_params_default(&params, profile) != 0) {
		fprintf(stderr, "dcqcn-sim: --profile %s: expected nvidia or paper\n", profile);
		return EXIT_BAD_INPUT;
	}
	for (int i = 0; i < n_sets; i++) {
		char *eq = strchr(sets[i], '=');

		if (eq == NULL) {
			fprintf(stderr, "dcqcn-sim: --set %s: expected NAME=VALUE\n", sets[i]);
			return EXIT_BAD_INPUT;
		}
		*eq = '\0';
		rc = dcqcn_params_set(&params, sets[i], eq + 1);
		if (rc == -ENOENT) {
			fprintf(stderr, "dcqcn-sim: --set %s: unknown parameter\n", sets[i]);
			return EXIT_BAD_INPUT;
		}
		if (rc != 0) {
			const char *unit = dcqcn_param_unit(sets[i]);

			fprintf(stderr, "dcqcn-sim: --set %s=%s: invalid value (%s)\n", sets[i],
				eq + 1, unit != NULL ? unit : "?");
			return EXIT_BAD_INPUT;
		}
	}
	free(sets);

	memset(&s, 0, sizeof(s));
	if (dcqcn_profile_build(&s.prof, &params, (uint64_t)llround(gbps * 1e9)) != 0) {
		fprintf(stderr, "dcqcn-sim: the parameters are inconsistent "
			"(kmin above kmax, or rpg_min_rate above the maximum rate)\n");
		return EXIT_BAD_INPUT;
	}
	dcqcn_rp_init(&s.rp, &s.prof);
	rc = replay(&s, argv[optind]);
	if (fflush(stdout) != 0) {
		perror("dcqcn-sim: stdout");
		return 1;
	}
	return rc;
}
