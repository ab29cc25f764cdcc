/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Record parsers of the top-level options ("version", "comment",
 * "udp_port", "offload", "shaping", "ecmp") and of neighbors (see cfg_rec.h).
 */
#include <assert.h>
#include <inttypes.h>

#include "cfg_rec.h"

static const struct cfg_field neighbor_fields[] = {
	[CFG_N_IP] = CFG_FIELD(struct cfg_neighbor, "ip", CFG_F_IP, CFG_REQUIRED, ip),
	[CFG_N_MAC] = CFG_FIELD(struct cfg_neighbor, "mac", CFG_F_MAC, CFG_REQUIRED, mac),
};

static const struct cfg_field offload_fields[] = {
	CFG_FIELD(struct cfg_offload, "enabled", CFG_F_BOOL, CFG_OPTIONAL, enabled),
	CFG_FIELD(struct cfg_offload, "steady_ms", CFG_F_UINT, CFG_OPTIONAL, steady_ms),
	CFG_FIELD(struct cfg_offload, "min_rate_mbps", CFG_F_UINT, CFG_OPTIONAL, min_rate_mbps),
};

static const struct cfg_field shaping_fields[] = {
	CFG_FIELD(struct cfg_shaping, "watchdog_ms", CFG_F_UINT, CFG_OPTIONAL, watchdog_ms,
		  .min = 1, .max = 60000),
	CFG_FIELD(struct cfg_shaping, "queue_bytes", CFG_F_UINT, CFG_OPTIONAL, queue_bytes,
		  .min = 65536),
};

/* CFG_F_ENUM stores an int. */
static_assert(sizeof(enum cfg_udp_sport) == sizeof(int), "enum size");
static const char *const udp_sport_names[] = { "keep", "qpn", NULL };

static const struct cfg_field ecmp_fields[] = {
	CFG_FIELD(struct cfg_ecmp, "udp_sport", CFG_F_ENUM, CFG_OPTIONAL, udp_sport, .names = udp_sport_names),
};

static const struct cfg_field udp_port_field =
	CFG_FIELD(struct cfg, "udp_port", CFG_F_UINT, CFG_OPTIONAL, udp_port, .min = 1);
static const struct cfg_field offload_field =
	CFG_FIELD(struct cfg, "offload", CFG_F_OBJECT, CFG_OPTIONAL, offload,
		  CFG_SUB(offload_fields));
static const struct cfg_field ecmp_field =
	CFG_FIELD(struct cfg, "ecmp", CFG_F_OBJECT, CFG_OPTIONAL, ecmp, CFG_SUB(ecmp_fields));
static const struct cfg_field shaping_field =
	CFG_FIELD(struct cfg, "shaping", CFG_F_OBJECT, CFG_OPTIONAL, shaping,
		  CFG_SUB(shaping_fields));

bool
cfg_version_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	uint64_t x;

	if (!cfg_num_parse(&ld->dg, v, p, &x))
		return true;
	if (x != CFG_VERSION) {
		/* The rest of the file follows another schema: say nothing about it. */
		cfg_err(&ld->dg, p, "unsupported version %" PRIu64 " (this build reads version %d)",
			x, CFG_VERSION);
		return false;
	}
	ld->c->version = CFG_VERSION;
	return true;
}

bool
cfg_comment_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	if (cfg_j_is_str(v))
		return true;
	if (!cfg_j_is_arr(v)) {
		cfg_err(&ld->dg, p, "expected a string or an array of strings");
		return true;
	}
	for (uint32_t i = 0; i < v->n; i++) {
		struct cfg_path ep = { .up = p, .key = NULL, .idx = i };

		if (!cfg_j_is_str(cfg_j_at(v, i)))
			cfg_err(&ld->dg, &ep, "expected a string");
	}
	return true;
}

bool
cfg_udp_port_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	cfg_value_parse(&ld->dg, &udp_port_field, v, p, ld->c);
	return true;
}

bool
cfg_offload_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	cfg_value_parse(&ld->dg, &offload_field, v, p, ld->c);
	return true;
}

bool
cfg_ecmp_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	cfg_value_parse(&ld->dg, &ecmp_field, v, p, ld->c);
	return true;
}

bool
cfg_shaping_load(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p)
{
	cfg_value_parse(&ld->dg, &shaping_field, v, p, ld->c);
	return true;
}

bool
cfg_neighbor_parse(struct cfg_ld *ld, const struct cfg_jv *v, const struct cfg_path *p,
		   uint32_t i, struct cfg_rec *r)
{
	if (!cfg_rec_begin(ld, v, i, p, r))
		return false;
	r->ok = cfg_obj_parse(&ld->dg, r->obj, &r->path, neighbor_fields,
			      CFG_DIM(neighbor_fields), &ld->c->neighbors[i], &r->present);
	return true;
}
