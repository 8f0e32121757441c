/* SPDX-License-Identifier: MIT */
/*
 * lib/metrics/expo.h - writing a metrics exposition (docs/metrics.md):
 * Prometheus' text format 0.0.4, or OpenMetrics 1.0 text, from the same
 * calls. A family is announced once (HELP, TYPE and, in OpenMetrics, UNIT),
 * then its samples follow, contiguous, as both formats require. Counter
 * families are named without their _total: the writer names the TYPE line
 * as each format wants (0.0.4: the sample's name, x_total; OpenMetrics:
 * the family's, x) and the samples x_total in both.
 */
#ifndef TRAWL_METRICS_EXPO_H
#define TRAWL_METRICS_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define TR_EXPO_TYPE_004 "text/plain; version=0.0.4; charset=utf-8"
#define TR_EXPO_TYPE_OM "application/openmetrics-text; version=1.0.0; charset=utf-8"

struct tr_expo {
	char *p;			/* malloc'd text; the caller takes it */
	size_t len, cap;
	bool om;			/* OpenMetrics, else 0.0.4 */
	bool oom;			/* an allocation failed: p is incomplete */
	const char *fam;		/* the family being written (its base name) */
	bool counter;
};

enum tr_expo_kind { TR_EXPO_COUNTER, TR_EXPO_GAUGE, TR_EXPO_HISTOGRAM };

/* Whether an Accept header asks for OpenMetrics (application/openmetrics-text,
 * not refused with q=0). */
TRAWL_HIDDEN bool tr_expo_wants_om(const char *accept);

TRAWL_HIDDEN void tr_expo_init(struct tr_expo *e, bool om);
/* A family: name without _total (a counter's) nor _bucket etc.; unit (a
 * suffix of name: "seconds", "bytes") or NULL; help one line. */
TRAWL_HIDDEN void tr_expo_family(struct tr_expo *e, const char *name, enum tr_expo_kind kind,
				 const char *unit, const char *help);
/*
 * labels: 'k="v",k2="v2"' as tr_expo_labels() makes it, or NULL / "".
 * tr_expo_value: a counter's x_total or a gauge's x sample of the
 * current family. tr_expo_hist: a classic histogram's series: bounds le[nb]
 * (seconds, increasing), cum[nb] the cumulative counts at each bound, then
 * +Inf = count, x_sum, x_count.
 */
TRAWL_HIDDEN void tr_expo_value(struct tr_expo *e, const char *labels, double v);
TRAWL_HIDDEN void tr_expo_hist(struct tr_expo *e, const char *labels, const double *le,
			       const uint64_t *cum, size_t nb, double sum, uint64_t count);
/* Ends the exposition (OpenMetrics: "# EOF"); returns 0, or -ENOMEM (p
 * freed). */
TRAWL_HIDDEN int tr_expo_end(struct tr_expo *e);

/* buf[cap] = 'k1="v1",k2="v2",...' from NULL-terminated key, value pairs,
 * the values escaped (\\, \") and bytes outside printable ASCII (a
 * newline, controls, UTF-8 of a process name) written as '?'. Returns buf (cut at a pair
 * that does not fit). */
TRAWL_HIDDEN const char *tr_expo_labels(char *buf, size_t cap, ...)
	__attribute__((sentinel));

#endif
