/* SPDX-License-Identifier: MIT */
/* The trace model: lookups and release. */
#include <stdlib.h>
#include <string.h>

#include "trawl/ctf.h"
#include "internal.h"

const struct trawl_ctf_env *trawl_ctf_trace_env(const struct trawl_ctf_trace *t, const char *key)
{
	for (size_t i = 0; i < t->nenv; i++)
		if (strcmp(t->env[i].key, key) == 0)
			return &t->env[i];
	return NULL;
}

void trawl_ctf_trace_free(struct trawl_ctf_trace *t)
{
	if (!t)
		return;
	/* The model itself lives in its arena; only decoders are malloc'd. */
	for (size_t i = 0; i < t->nstreams; i++) {
		struct trawl_ctf_stream_class *sc = t->streams[i];
		for (size_t j = 0; j < sc->nevents; j++)
			free(sc->events[j]->priv);
		free(sc->priv);
	}
	tr_arena_free(t->arena);
}
