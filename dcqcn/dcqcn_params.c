/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN parameters: the named default profiles, setting one parameter by its
 * configuration name, and the conversion into an integer profile.
 *
 * Every default below is cited in docs/dcqcn.md.  The ranges are those NVIDIA
 * documents for its firmware, widened only where the paper profile needs a
 * value outside them (a 10 MB byte counter, a 1.0 initial alpha, a zero
 * monitor period meaning "cut at every CNP").
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcqcn.h"

enum param_kind {
	PK_U32,         /* unsigned decimal within [min, max] */
	PK_BOOL,        /* 0, 1, false, true */
	PK_CNP_MODE,    /* suppress, defer */
	PK_PERCENT,     /* decimal number within [0, 100] */
};

struct param_desc {
	const char *name;
	size_t off;
	enum param_kind kind;
	uint32_t min;
	uint32_t max;
	const char *unit;
};

#define P_U32(n, lo, hi, u) { #n, offsetof(struct dcqcn_params, n), PK_U32, lo, hi, u }
#define P_BOOL(n) { #n, offsetof(struct dcqcn_params, n), PK_BOOL, 0, 1, "0|1" }

/* The one table of parameter names, in the order docs/dcqcn.md lists them. */
static const struct param_desc params_table[] = {
	P_BOOL(rp_enable),
	P_BOOL(clamp_tgt_rate),
	P_BOOL(clamp_tgt_rate_after_time_inc),
	P_U32(rpg_time_reset, 1, 131071, "us"),
	P_U32(rpg_byte_reset, 0, UINT32_MAX, "bytes"),
	P_U32(rpg_threshold, 0, 31, "events"),
	P_U32(rpg_max_rate, 0, UINT32_MAX, "Mb/s"),
	P_U32(rpg_ai_rate, 0, UINT32_MAX, "Mb/s"),
	P_U32(rpg_hai_rate, 0, UINT32_MAX, "Mb/s"),
	P_U32(rpg_gd, 10, 15, "shift"),
	P_U32(rpg_min_dec_fac, 0, 100, "%"),
	P_U32(rpg_min_rate, 1, UINT32_MAX, "Mb/s"),
	P_U32(rate_to_set_on_first_cnp, 0, UINT32_MAX, "Mb/s"),
	P_U32(dce_tcp_g, 0, 1023, "1/1024"),
	P_U32(dce_tcp_rtt, 1, 131071, "us"),
	P_U32(rate_reduce_monitor_period, 0, UINT32_MAX, "us"),
	P_U32(initial_alpha_value, 0, 1024, "1/1024"),
	P_BOOL(np_enable),
	P_U32(min_time_between_cnps, 0, UINT32_MAX, "us"),
	{ "cnp_mode", offsetof(struct dcqcn_params, cnp_mode), PK_CNP_MODE, 0, 1,
	  "suppress|defer" },
	P_U32(cnp_dscp, 0, 63, "dscp"),
	P_U32(cnp_802p_prio, 0, 7, "pcp"),
	P_U32(kmin, 0, INT32_MAX, "bytes"),
	P_U32(kmax, 0, INT32_MAX, "bytes"),
	{ "pmax", offsetof(struct dcqcn_params, pmax), PK_PERCENT, 0, 100, "%" },
};

#define N_PARAMS (sizeof(params_table) / sizeof(params_table[0]))

/* NVIDIA firmware defaults (mlxconfig, ConnectX-4 and later). */
static const struct dcqcn_params params_nvidia = {
	.model = DCQCN_MODEL_NVIDIA,
	.rp_enable = 1,
	.clamp_tgt_rate = 0,
	.clamp_tgt_rate_after_time_inc = 1,
	.rpg_time_reset = 300,
	.rpg_byte_reset = 32767,
	.rpg_threshold = 1,
	.rpg_max_rate = 0,
	.rpg_ai_rate = 5,
	.rpg_hai_rate = 50,
	.rpg_gd = 11,
	.rpg_min_dec_fac = 50,
	.rpg_min_rate = 1,
	.rate_to_set_on_first_cnp = 0,
	.dce_tcp_g = 1019,
	.dce_tcp_rtt = 1,
	.rate_reduce_monitor_period = 4,
	.initial_alpha_value = 1023,
	.np_enable = 1,
	.min_time_between_cnps = 4,
	.cnp_mode = DCQCN_CNP_SUPPRESS,
	.cnp_dscp = 48,
	.cnp_802p_prio = 6,
	.kmin = 5000,
	.kmax = 200000,
	.pmax = 1.0,
};

/* Zhu et al., SIGCOMM 2015, written with the NVIDIA names. */
static const struct dcqcn_params params_paper = {
	.model = DCQCN_MODEL_PAPER,
	.rp_enable = 1,
	.clamp_tgt_rate = 1,            /* RT = RC at every cut */
	.clamp_tgt_rate_after_time_inc = 0,
	.rpg_time_reset = 55,           /* timer T */
	.rpg_byte_reset = 10000000,     /* byte counter B = 10 MB */
	.rpg_threshold = 5,             /* F */
	.rpg_max_rate = 0,
	.rpg_ai_rate = 40,              /* R_AI */
	.rpg_hai_rate = 200,            /* R_HAI */
	.rpg_gd = 11,                   /* RC * (1 - alpha / 2) */
	.rpg_min_dec_fac = 0,           /* no bound beyond alpha <= 1 */
	.rpg_min_rate = 100,
	.rate_to_set_on_first_cnp = 0,
	.dce_tcp_g = 1020,              /* g = 4 / 1024 = 1 / 256 */
	.dce_tcp_rtt = 55,              /* K, the alpha decay period */
	.rate_reduce_monitor_period = 0, /* cut at every CNP */
	.initial_alpha_value = 1024,    /* alpha = 1 */
	.np_enable = 1,
	.min_time_between_cnps = 50,    /* N */
	.cnp_mode = DCQCN_CNP_DEFER,
	.cnp_dscp = 48,
	.cnp_802p_prio = 6,
	.kmin = 5000,
	.kmax = 200000,
	.pmax = 1.0,
};

int
dcqcn_params_default(struct dcqcn_params *p, const char *profile)
{
	if (profile == NULL || strcmp(profile, "nvidia") == 0)
		*p = params_nvidia;
	else if (strcmp(profile, "paper") == 0)
		*p = params_paper;
	else
		return -ENOENT;
	return 0;
}

static const struct param_desc *
param_find(const char *name)
{
	for (size_t i = 0; i < N_PARAMS; i++)
		if (strcmp(params_table[i].name, name) == 0)
			return &params_table[i];
	return NULL;
}

const char *
dcqcn_param_name(unsigned int i)
{
	return i < N_PARAMS ? params_table[i].name : NULL;
}

const char *
dcqcn_param_unit(const char *name)
{
	const struct param_desc *d = param_find(name);

	return d != NULL ? d->unit : NULL;
}

/* Parse a plain unsigned decimal: digits only, no sign, no spaces. */
static int
parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	unsigned long long v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	if (v < lo || v > hi)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int
dcqcn_params_set(struct dcqcn_params *p, const char *name, const char *value)
{
	const struct param_desc *d;
	char *field;
	uint32_t v;

	if (name == NULL || (d = param_find(name)) == NULL)
		return -ENOENT;
	if (value == NULL)
		return -EINVAL;
	field = (char *)p + d->off;
	switch (d->kind) {
	case PK_U32:
		if (parse_u32(value, d->min, d->max, &v) != 0)
			return -EINVAL;
		memcpy(field, &v, sizeof(v));
		return 0;
	case PK_BOOL:
		if (strcmp(value, "true") == 0)
			v = 1;
		else if (strcmp(value, "false") == 0)
			v = 0;
		else if (parse_u32(value, 0, 1, &v) != 0)
			return -EINVAL;
		memcpy(field, &v, sizeof(v));
		return 0;
	case PK_CNP_MODE: {
		enum dcqcn_cnp_mode m;

		if (strcmp(value, "suppress") == 0)
			m = DCQCN_CNP_SUPPRESS;
		else if (strcmp(value, "defer") == 0)
			m = DCQCN_CNP_DEFER;
		else
			return -EINVAL;
		memcpy(field, &m, sizeof(m));
		return 0;
	}
	case PK_PERCENT: {
		char *end;
		double x;

		/* Plain decimal notation only: no sign, no hex, no inf or nan. */
		if (value[0] < '0' || value[0] > '9')
			return -EINVAL;
		errno = 0;
		x = strtod(value, &end);
		if (errno != 0 || *end != '\0' || !isfinite(x) || x < 0.0 || x > 100.0)
			return -EINVAL;
		memcpy(field, &x, sizeof(x));
		return 0;
	}
	}
	return -EINVAL;
}

int
dcqcn_params_get(const struct dcqcn_params *p, const char *name, char *buf, size_t len)
{
	const struct param_desc *d = param_find(name);
	const char *field;

	if (d == NULL)
		return -ENOENT;
	field = (const char *)p + d->off;
	switch (d->kind) {
	case PK_U32:
	case PK_BOOL: {
		uint32_t v;

		memcpy(&v, field, sizeof(v));
		return snprintf(buf, len, "%u", v);
	}
	case PK_CNP_MODE: {
		enum dcqcn_cnp_mode m;

		memcpy(&m, field, sizeof(m));
		return snprintf(buf, len, "%s", m == DCQCN_CNP_DEFER ? "defer" : "suppress");
	}
	case PK_PERCENT: {
		double x;

		memcpy(&x, field, sizeof(x));
		return snprintf(buf, len, "%g", x);
	}
	}
	return -ENOENT;
}

#define NS_PER_US UINT64_C(1000)
#define BPS_PER_MBPS UINT64_C(1000000)

int
dcqcn_profile_build(struct dcqcn_profile *prof, const struct dcqcn_params *p,
		    uint64_t line_rate_bps)
{
	struct dcqcn_profile f;
	uint64_t max_bps;

	/* Rates stay below 2^44 b/s (17.5 Tb/s) so that the cut cannot overflow. */
	if (line_rate_bps == 0 || line_rate_bps >= (UINT64_C(1) << 44) || p->kmin > p->kmax || !(p->pmax >= 0.0 && p->pmax <= 100.0))
		return -EINVAL;
	if (p->dce_tcp_g > 1023 || p->initial_alpha_value > 1024 || p->rpg_gd < 10 ||
	    p->rpg_gd > 15 || p->rpg_min_dec_fac > 100 || p->rpg_min_rate == 0 ||
	    p->dce_tcp_rtt == 0 || p->rpg_time_reset == 0 || p->rpg_threshold > 31)
		return -EINVAL;
	max_bps = (uint64_t)p->rpg_max_rate * BPS_PER_MBPS;
	if (max_bps == 0 || max_bps > line_rate_bps)
		max_bps = line_rate_bps;
	if ((uint64_t)p->rpg_min_rate * BPS_PER_MBPS > max_bps)
		return -EINVAL;

	memset(&f, 0, sizeof(f));
	f.model = p->model;
	f.rp_enable = p->rp_enable != 0;
	f.clamp_tgt_rate = p->clamp_tgt_rate != 0;
	f.clamp_after_time_inc = p->clamp_tgt_rate_after_time_inc != 0;
	f.line_bps = line_rate_bps;
	f.max_bps = max_bps;
	f.min_bps = (uint64_t)p->rpg_min_rate * BPS_PER_MBPS;
	f.ai_bps = (uint64_t)p->rpg_ai_rate * BPS_PER_MBPS;
	f.hai_bps = (uint64_t)p->rpg_hai_rate * BPS_PER_MBPS;
	f.first_cnp_bps = (uint64_t)p->rate_to_set_on_first_cnp * BPS_PER_MBPS;
	if (f.first_cnp_bps > max_bps)
		f.first_cnp_bps = max_bps;
	if (f.first_cnp_bps != 0 && f.first_cnp_bps < f.min_bps)
		f.first_cnp_bps = f.min_bps;
	f.time_reset_ns = (uint64_t)p->rpg_time_reset * NS_PER_US;
	f.byte_reset = p->rpg_byte_reset;
	f.alpha_period_ns = (uint64_t)p->dce_tcp_rtt * NS_PER_US;
	f.monitor_ns = (uint64_t)p->rate_reduce_monitor_period * NS_PER_US;
	f.threshold = p->rpg_threshold;
	f.g_keep = p->dce_tcp_g;
	f.gd_shift = p->rpg_gd;
	f.min_dec_fac = p->rpg_min_dec_fac;
	f.alpha_init = p->initial_alpha_value << (DCQCN_ALPHA_SHIFT - 10);

	f.np_enable = p->np_enable != 0;
	f.cnp_mode = p->cnp_mode;
	f.cnp_window_ns = (uint64_t)p->min_time_between_cnps * NS_PER_US;
	f.cnp_dscp = (uint8_t)(p->cnp_dscp & 63);
	f.cnp_802p_prio = (uint8_t)(p->cnp_802p_prio & 7);

	f.kmin = p->kmin;
	f.kmax = p->kmax;
	/* pmax percent as a fraction of 2^32, rounded to nearest. */
	f.pmax_q32 = (uint64_t)llround(p->pmax / 100.0 * 4294967296.0);

	*prof = f;
	return 0;
}
