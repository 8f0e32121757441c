/* SPDX-License-Identifier: MIT */
/* lib/analysis/analysis-internal.h - what report.c and lib/top ask analysis.c. */
#ifndef TRAWL_ANALYSIS_INTERNAL_H
#define TRAWL_ANALYSIS_INTERNAL_H

#include <stdbool.h>

#include "internal.h"
#include "trawl/analysis.h"

/* --by host: the report's rows grouped per host (columns, each host's top). */
TRAWL_HIDDEN bool tr_analysis_by_host(const struct trawl_analysis *a);

/* An event of class index ci came at ts that a's events() was not given
 * (a caller that feeds it only the classes it wants, lib/top): its host's
 * span ends no earlier (the last slice's end). Classes a has not seen in
 * events() are left alone. */
TRAWL_HIDDEN void tr_analysis_class_seen(struct trawl_analysis *a, uint32_t ci, int64_t ts);

#endif
