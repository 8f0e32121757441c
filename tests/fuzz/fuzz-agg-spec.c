/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the aggregation statement parser (lib/agg/parse.c) on the
 * raw bytes; a statement it accepts is written back (normalized) and must
 * parse again to the same text, and its histogram buckets must hold
 * their values.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agg/agg-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_agg_spec s, t;
	char err[256];

	if (tr_agg_parse(&s, (const char *)data, size, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < s.n; i++) {
			const struct tr_agg_stmt *a = &s.stmt[i];
			if (tr_agg_parse(&t, a->text, strlen(a->text), err, sizeof(err)) != 0 ||
			    t.n != 1 || strcmp(t.stmt[0].text, a->text))
				abort();
			tr_agg_spec_release(&t);
			/* every bucket's low bound is in it, and the next's is above */
			if (a->func == TR_AGG_LHIST || a->func == TR_AGG_LLHIST) {
				size_t n = a->func == TR_AGG_LHIST ? tr_agg_lin_nbuckets(a->param) :
					tr_agg_ll_nbuckets(a->param);
				for (size_t b = 1; b < n; b++) {
					int64_t lo = a->func == TR_AGG_LHIST ? tr_agg_lin_low(a->param, b) :
						tr_agg_ll_low(a->param, b);
					size_t got = a->func == TR_AGG_LHIST ? tr_agg_lin_bucket(a->param, lo) :
						tr_agg_ll_bucket(a->param, lo);
					if (got != b)
						abort();
				}
			}
		}
	}
	tr_agg_spec_release(&s);
	return 0;
}
