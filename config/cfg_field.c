/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table-driven field parser (see cfg_field.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_field.h"
#include "cfg_util.h"

/* Write the list of allowed names as "a", "b", "c" for a message. */
static const char *
names_str(const char *const *names, char *buf, size_t len)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (unsigned i = 0; names[i] != NULL && pos < len; i++) {
		int w = snprintf(buf + pos, len - pos, "%s\"%s\"", i ? ", " : "", names[i]);

		if (w < 0)
			break;
		pos += (size_t)w;
	}
	return buf;
}

static int
names_find(const char *const *names, const char *s)
{
	for (int i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/* The shortest text that reads back as @d, as in "2.5" or "1e-12". */
static const char *
real_str(double d, char *buf, size_t len)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return buf;
}

bool
cfg_num_parse(struct cfg_diag *dg, const struct cfg_jv *v, const struct cfg_path *path,
	      uint64_t *out)
{
	if (cfg_j_is_int(v)) {
		if (v->neg) {
			cfg_err(dg, path, "-%" PRIu64 " is negative", v->v.u);
			return false;
		}
		*out = v->v.u;
		return true;
	}
	if (cfg_j_is_real(v)) {
		char txt[32];

		cfg_err(dg, path, "expected an integer, not the real number %s",
			real_str(v->v.d, txt, sizeof(txt)));
		return false;
	}
	if (cfg_j_is_str(v)) {
		const char *s = v->v.s;
		uint64_t x = 0;
		size_t i;

		if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
			cfg_err(dg, path, "\"%.64s\" is not a number "
				"(use an integer or a \"0x\" hex string)", s);
			return false;
		}
		for (i = 2; s[i] != '\0'; i++) {
			int d = cfg_hex_digit(s[i]);

			if (d < 0) {
				cfg_err(dg, path, "\"%.64s\" is not a hex number", s);
				return false;
			}
			if (x > (UINT64_MAX >> 4)) {
				cfg_err(dg, path, "\"%.64s\" does not fit in 64 bits", s);
				return false;
			}
			x = x << 4 | (uint64_t)d;
		}
		if (i == 2) {
			cfg_err(dg, path, "\"%s\" has no hex digits", s);
			return false;
		}
		*out = x;
		return true;
	}
	cfg_err(dg, path, "expected an integer or a \"0x\" hex string");
	return false;
}

/* The number as the file wrote it, for messages about its range. */
static const char *
num_text(const struct cfg_jv *v, uint64_t x, char *buf, size_t len)
{
	if (cfg_j_is_str(v))
		snprintf(buf, len, "%.64s", v->v.s);
	else
		snprintf(buf, len, "%" PRIu64, x);
	return buf;
}

static bool
parse_uint(struct cfg_diag *dg, const struct cfg_field *f, const struct cfg_jv *v,
	   const struct cfg_path *path, void *at)
{
	uint64_t max = f->max;
	char txt[80];
	uint64_t x;

	if (max == 0)
		max = f->size >= 8 ? UINT64_MAX : (1ull << (8 * f->size)) - 1;
	if (!cfg_num_parse(dg, v, path, &x))
		return false;
	if (x > max) {
		cfg_err(dg, path, "%s is out of range (max %" PRIu64 ")",
			num_text(v, x, txt, sizeof(txt)), max);
		return false;
	}
	if (x < f->min) {
		if (f->min == 1)
			cfg_err(dg, path, "must be greater than 0");
		else
			cfg_err(dg, path, "%s is out of range (min %" PRIu64 ")",
				num_text(v, x, txt, sizeof(txt)), f->min);
		return false;
	}
	switch (f->size) {
	case 1: *(uint8_t *)at = (uint8_t)x; break;
	case 2: *(uint16_t *)at = (uint16_t)x; break;
	case 4: *(uint32_t *)at = (uint32_t)x; break;
	default: *(uint64_t *)at = x; break;
	}
	return true;
}

static bool
parse_qpn(struct cfg_diag *dg, const struct cfg_field *f, const struct cfg_jv *v, const struct cfg_path *path,
	  uint32_t *at)
{
	char txt[80];
	uint64_t x;

	if (!cfg_num_parse(dg, v, path, &x))
		return false;
	if (x > CFG_QPN_MAX) {
		cfg_err(dg, path, "%s is out of range (QPNs are 24-bit, max %u)",
			num_text(v, x, txt, sizeof(txt)), CFG_QPN_MAX);
		return false;
	}
	/* A field whose .min is 1 takes the GSI QP too (a QP's vqpn: its type says whether it may). */
	if (x < CFG_QPN_FIRST && !(x == ROCE_QPN_GSI_CFG && f->min == ROCE_QPN_GSI_CFG)) {
		cfg_err(dg, path, "QPN %" PRIu64 " is reserved (QPNs 0 and 1 are special)", x);
		return false;
	}
	*at = (uint32_t)x;
	return true;
}

static bool
parse_gbps(struct cfg_diag *dg, const struct cfg_field *f, const struct cfg_jv *v,
	   const struct cfg_path *path, uint64_t *at)
{
	double g, bps;
	char txt[32];

	if (cfg_j_is_int(v)) {
		g = (double)v->v.u;
		if (v->neg)
			g = -g;
	} else if (cfg_j_is_real(v)) {
		g = v->v.d;
	} else if (cfg_j_is_str(v)) {
		uint64_t x;

		if (!cfg_num_parse(dg, v, path, &x))
			return false;
		g = (double)x;
	} else {
		cfg_err(dg, path, "expected a number of Gbit/s");
		return false;
	}
	/* For messages: an integer as written, "20000" rather than "2e+04". */
	if (cfg_j_is_int(v))
		snprintf(txt, sizeof(txt), "%s%" PRIu64, v->neg ? "-" : "", v->v.u);
	else
		real_str(g, txt, sizeof(txt));
	if (!(g > 0)) {
		cfg_err(dg, path, "%s must be greater than 0", txt);
		return false;
	}
	bps = g * 1e9 + 0.5;
	/* 2^64 is exactly representable; anything from there on does not fit. */
	if (bps >= 18446744073709551616.0) {
		cfg_err(dg, path, "%s is out of range", txt);
		return false;
	}
	if (bps < 1.0) {
		cfg_err(dg, path, "%s is below 1 bit/s", txt);
		return false;
	}
	if (f->max != 0 && (uint64_t)bps > f->max) {
		cfg_err(dg, path, "%s is out of range (max %" PRIu64 ")", txt, f->max / 1000000000);
		return false;
	}
	*at = (uint64_t)bps;
	return true;
}

static bool
parse_flags(struct cfg_diag *dg, const struct cfg_field *f, const struct cfg_jv *v,
	    const struct cfg_path *path, uint32_t *at)
{
	char list[256];
	uint32_t bits = 0;
	bool ok = true;
	if (!cfg_j_is_arr(v)) {
		cfg_err(dg, path, "expected an array of %s",
			names_str(f->names, list, sizeof(list)));
		return false;
	}
	if (v->n == 0) {
		cfg_err(dg, path, "must not be empty");
		return false;
	}
	for (uint32_t i = 0; i < v->n; i++) {
		const struct cfg_jv *e = cfg_j_at(v, i);
		struct cfg_path ep = { .up = path, .key = NULL, .idx = i };
		int k;

		if (!cfg_j_is_str(e)) {
			cfg_err(dg, &ep, "expected one of %s",
				names_str(f->names, list, sizeof(list)));
			ok = false;
			continue;
		}
		k = names_find(f->names, e->v.s);
		if (k < 0) {
			cfg_err(dg, &ep, "\"%.64s\" is not one of %s", e->v.s,
				names_str(f->names, list, sizeof(list)));
			ok = false;
		} else if (bits & (1u << k)) {
			cfg_err(dg, &ep, "\"%s\" is listed twice", f->names[k]);
			ok = false;
		} else {
			bits |= 1u << k;
		}
	}
	if (ok)
		*at = bits;
	return ok;
}

/*
 * "ADDR/LEN" (or "ADDR" alone: one host) into @at. The length must fit the
 * address family, and the address may have no bit set beyond it: a typo in
 * a security rule should not silently widen or narrow it.
 */
static bool
parse_cidr(struct cfg_diag *dg, const struct cfg_jv *v, const struct cfg_path *path,
	   struct cfg_cidr *at)
{
	char buf[CFG_IP_STRLEN + 8], ips[CFG_IP_STRLEN];
	const char *s, *slash;
	unsigned max, len = 0;
	struct cfg_cidr r;
	size_t n;

	if (!cfg_j_is_str(v)) {
		cfg_err(dg, path, "expected an address prefix string such as \"192.168.1.0/24\"");
		return false;
	}
	s = v->v.s;
	slash = strchr(s, '/');
	n = slash ? (size_t)(slash - s) : strlen(s);
	memset(&r, 0, sizeof(r));
	if (n < sizeof(buf)) {
		memcpy(buf, s, n);
		buf[n] = '\0';
	}
	if (n >= sizeof(buf) || cfg_ip_parse(buf, &r.ip) < 0) {
		cfg_err(dg, path, "\"%.64s\" is not an IPv4 or IPv6 prefix (ADDR/LEN)", s);
		return false;
	}
	max = r.ip.ver == CFG_IPV4 ? 32 : 128;
	if (!slash) {
		len = max;
	} else {
		const char *d = slash + 1;

		if (*d == '\0' || strlen(d) > 3 || strspn(d, "0123456789") != strlen(d)) {
			cfg_err(dg, path, "\"%.64s\": \"%.8s\" is not a prefix length", s, d);
			return false;
		}
		len = (unsigned)atoi(d);
		if (len > max) {
			cfg_err(dg, path, "\"%.64s\": prefix length %u is out of range (max %u for %s)",
				s, len, max, r.ip.ver == CFG_IPV4 ? "IPv4" : "IPv6");
			return false;
		}
	}
	r.len = (uint8_t)len;
	for (unsigned bit = len; bit < max; bit++) {
		if (r.ip.b[bit / 8] & (0x80u >> (bit % 8))) {
			struct cfg_ip net = r.ip;

			for (unsigned b = len; b < max; b++)
				net.b[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
			cfg_err(dg, path, "\"%.64s\" has bits set beyond the prefix length "
				"(the prefix is %s/%u)", s, cfg_ip_str(&net, ips), len);
			return false;
		}
	}
	*at = r;
	return true;
}

bool
cfg_value_parse(struct cfg_diag *dg, const struct cfg_field *f, const struct cfg_jv *v,
		const struct cfg_path *path, void *dst)
{
	void *at = (char *)dst + f->off;
	char list[256];
	const char *s;
	int k;

	switch (f->kind) {
	case CFG_F_STR:
	case CFG_F_ENUM:
	case CFG_F_REF:
		if (!cfg_j_is_str(v)) {
			cfg_err(dg, path, "expected a string");
			return false;
		}
		s = v->v.s;
		if (s[0] == '\0') {
			cfg_err(dg, path, "must not be empty");
			return false;
		}
		if (f->names != NULL) {
			k = names_find(f->names, s);
			if (k < 0) {
				cfg_err(dg, path, "\"%.64s\" is not one of %s", s,
					names_str(f->names, list, sizeof(list)));
				return false;
			}
			if (f->kind == CFG_F_ENUM) {
				if (f->size == sizeof(bool))
					*(bool *)at = k != 0;
				else
					*(int *)at = k;
				return true;
			}
		}
		if (f->kind == CFG_F_REF) {
			k = f->ref->lookup(dg->ref_ctx, s);
			if (k < 0) {
				if (k != CFG_REF_QUIET)
					cfg_err(dg, path, "unknown %s \"%.64s\"", f->ref->what, s);
				return false;
			}
			*(int *)at = k;
			return true;
		}
		{
			char *copy = strdup(s);

			if (copy == NULL) {
				dg->oom = true;
				return false;
			}
			free(*(char **)at);
			*(char **)at = copy;
		}
		return true;
	case CFG_F_BOOL:
		if (!cfg_j_is_bool(v)) {
			cfg_err(dg, path, "expected true or false");
			return false;
		}
		*(bool *)at = v->v.u != 0;
		return true;
	case CFG_F_UINT:
		return parse_uint(dg, f, v, path, at);
	case CFG_F_QPN:
		return parse_qpn(dg, f, v, path, at);
	case CFG_F_GBPS:
		return parse_gbps(dg, f, v, path, at);
	case CFG_F_IP:
		if (!cfg_j_is_str(v)) {
			cfg_err(dg, path, "expected an IP address string");
			return false;
		}
		if (cfg_ip_parse(v->v.s, at) < 0) {
			cfg_err(dg, path, "\"%.64s\" is not an IPv4 or IPv6 address",
				v->v.s);
			return false;
		}
		return true;
	case CFG_F_MAC:
		if (!cfg_j_is_str(v)) {
			cfg_err(dg, path, "expected a MAC address string");
			return false;
		}
		if (cfg_mac_parse(v->v.s, at) < 0) {
			cfg_err(dg, path, "\"%.64s\" is not a MAC address (xx:xx:xx:xx:xx:xx)",
				v->v.s);
			return false;
		}
		return true;
	case CFG_F_FLAGS:
		return parse_flags(dg, f, v, path, at);
	case CFG_F_CIDR:
		return parse_cidr(dg, v, path, at);
	case CFG_F_ARRAY:
		if (!cfg_j_is_arr(v)) {
			cfg_err(dg, path, "expected an array");
			return false;
		}
		return true;
	case CFG_F_OBJECT: {
		uint64_t ok, present;

		if (!cfg_j_is_obj(v)) {
			cfg_err(dg, path, "expected an object");
			return false;
		}
		if (f->sub == NULL)
			return true;
		ok = cfg_obj_parse(dg, v, path, f->sub, f->n_sub, at, &present);
		/* Valid when every key given is valid and none required is missing. */
		for (unsigned i = 0; i < f->n_sub; i++)
			if ((present & CFG_BIT(i)) ? !(ok & CFG_BIT(i)) : f->sub[i].required)
				return false;
		return true;
	}
	}
	cfg_err(dg, path, "internal error: unknown field kind %d", (int)f->kind);
	return false;
}

uint64_t
cfg_obj_parse(struct cfg_diag *dg, const struct cfg_jv *obj, const struct cfg_path *path,
	      const struct cfg_field *tab, unsigned n, void *dst, uint64_t *present)
{
	uint64_t seen = 0, ok = 0;
	unsigned next = 0;

	for (uint32_t m = 0; m < obj->n; m++) {
		const struct cfg_jv *v = cfg_j_at(obj, m);
		const char *key = v->key;
		struct cfg_path kp = { .up = path, .key = key };
		unsigned i = n;

		/*
		 * Files usually list keys in the table's order, so the search
		 * starts at the row after the last match: one compare per key.
		 */
		for (unsigned k = 0; k < n; k++) {
			unsigned r = (next + k) % n;

			if (tab[r].key[0] == key[0] && strcmp(tab[r].key, key) == 0) {
				i = r;
				next = r + 1;
				break;
			}
		}
		if (i == n) {
			cfg_err(dg, &kp, "unknown key");
			continue;
		}
		seen |= CFG_BIT(i);
		if (tab[i].has != 0)
			*(bool *)((char *)dst + tab[i].has - 1) = true;
		if (cfg_value_parse(dg, &tab[i], v, &kp, dst))
			ok |= CFG_BIT(i);
	}
	for (unsigned i = 0; i < n; i++) {
		if (tab[i].required && !(seen & CFG_BIT(i))) {
			struct cfg_path kp = { .up = path, .key = tab[i].key };

			cfg_err(dg, &kp, "missing required key");
		}
	}
	if (present != NULL)
		*present = seen;
	return ok;
}
