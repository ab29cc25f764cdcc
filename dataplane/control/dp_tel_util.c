/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the telemetry commands share: dictionary keys from names, and the
 * parameters of the paged commands (dp_tel_util.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_tel_util.h"

/*
 * Telemetry dictionary keys may hold only letters, digits, '_' and '/';
 * port and tenant names are keyed with the rest replaced by '_' and keep
 * their real name in a "name" field.
 */
const char *
dp_tel_key(const char *name, char *buf, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		buf[i] = (isalnum((unsigned char)name[i]) || name[i] == '/') ? name[i] : '_';
	buf[i] = 0;
	return buf;
}

/* "[TENANT[,START]]" of the paged commands: 0, or -1 when the name is too long. */
int
dp_tel_page_params(const char *params, char *tenant, size_t len, uint32_t *start)
{
	const char *comma;
	size_t n;

	*tenant = 0;
	*start = 0;
	if (!params || !*params)
		return 0;
	comma = strchr(params, ',');
	n = comma ? (size_t)(comma - params) : strlen(params);
	if (n >= len)
		return -1;
	memcpy(tenant, params, n);
	tenant[n] = 0;
	if (comma)
		*start = (uint32_t)strtoul(comma + 1, NULL, 10);
	return 0;
}
