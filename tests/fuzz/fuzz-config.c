/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the settings parser (cli/config.c, compiled in here: the CLI
 * is not part of libtrawl) on the raw bytes as one file, then again as a
 * second file over the first (list replacement), then every lookup of
 * every key it produced.
 */
#include "../../cli/config.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct trawl_conf *c = calloc(1, sizeof(*c));
	if (!c)
		return 0;
	if (conf_parse(c, (const char *)data, size, "fuzz", 1, err, sizeof(err)) == 0)
		conf_parse(c, (const char *)data, size, "fuzz2", 2, err, sizeof(err));
	for (size_t i = 0; i < c->n; i++) {
		const char *const *v;
		size_t n = conf_get_all(c, c->e[i].section, c->e[i].key, &v);
		const char *last = conf_get(c, c->e[i].section, c->e[i].key);
		const char *o = conf_origin(c, c->e[i].section, c->e[i].key);
		/* the invariants of the API */
		if (n && (!v || !last || !o || strcmp(v[n - 1], last) || v[n]))
			abort();
	}
	conf_free(c);
	return 0;
}
