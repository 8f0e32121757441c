/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the settings parser (lib/util/config.c) on the raw bytes as
 * one file, then again as a second file over the first (list replacement),
 * then every lookup of every key it produced.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct trawl_conf *c = tr_conf_new();
	const char *section, *key;
	if (!c)
		return 0;
	if (tr_conf_parse(c, (const char *)data, size, "fuzz", 1, err, sizeof(err)) == 0)
		tr_conf_parse(c, (const char *)data, size, "fuzz2", 2, err, sizeof(err));
	for (size_t i = 0; tr_conf_key_at(c, i, &section, &key); i++) {
		const char *const *v;
		size_t n = tr_conf_get_all(c, section, key, &v);
		const char *last = tr_conf_get(c, section, key);
		const char *o = tr_conf_origin(c, section, key);
		/* the invariants of the API */
		if (n && (!v || !last || !o || strcmp(v[n - 1], last) || v[n]))
			abort();
	}
	tr_conf_free(c);
	return 0;
}
