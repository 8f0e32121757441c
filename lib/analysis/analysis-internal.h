/* SPDX-License-Identifier: MIT */
/* lib/analysis/analysis-internal.h - what report.c asks analysis.c. */
#ifndef TRAWL_ANALYSIS_INTERNAL_H
#define TRAWL_ANALYSIS_INTERNAL_H

#include <stdbool.h>

#include "internal.h"
#include "trawl/analysis.h"

/* --by host: the report's rows grouped per host (columns, each host's top). */
TRAWL_HIDDEN bool tr_analysis_by_host(const struct trawl_analysis *a);

#endif
