/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-metrics.c - the exposition writer (lib/metrics/expo.h)
 * and the request headers the metrics endpoint reads (util/http.h): a
 * counter's names in each format (0.0.4: TYPE x_total; OpenMetrics: TYPE
 * x, UNIT x, samples x_total, # EOF last), label values escaped (\\ and \"
 * doubled, a newline and bytes outside printable ASCII as '?'), HELP
 * escaped, a histogram's cumulative buckets with +Inf = count, le as
 * OpenMetrics' floats, values written in their shortest exact form; the
 * Accept header's choice (q=0 refuses); header lookup case-insensitive,
 * blanks cut, missing and too long told apart.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/expo.h"
#include "tap.h"
#include "util/http.h"

int main(void)
{
	struct tr_expo e;
	char lab[256];
	double le[2] = { 0.001, 1 };
	uint64_t cum[2] = { 3, 5 };

	tr_expo_init(&e, false);
	tr_expo_family(&e, "x_seconds", TR_EXPO_COUNTER, "seconds", "a \\ help\nline");
	tr_expo_value(&e, tr_expo_labels(lab, sizeof(lab), "host", "a\"b\\c\nd\xc3\xa9", NULL), 1.5);
	tr_expo_family(&e, "h_seconds", TR_EXPO_HISTOGRAM, "seconds", "h");
	tr_expo_hist(&e, "host=\"a\"", le, cum, 2, 0.1, 7);
	tr_expo_family(&e, "g", TR_EXPO_GAUGE, NULL, "g");
	tr_expo_value(&e, NULL, 0.3);
	is_int(tr_expo_end(&e), 0, "0.0.4: written");
	is_str(e.p,
	       "# HELP x_seconds_total a \\\\ help\\nline\n"
	       "# TYPE x_seconds_total counter\n"
	       "x_seconds_total{host=\"a\\\"b\\\\c?d??\"} 1.5\n"
	       "# HELP h_seconds h\n# TYPE h_seconds histogram\n"
	       "h_seconds_bucket{host=\"a\",le=\"0.001\"} 3\n"
	       "h_seconds_bucket{host=\"a\",le=\"1\"} 5\n"
	       "h_seconds_bucket{host=\"a\",le=\"+Inf\"} 7\n"
	       "h_seconds_sum{host=\"a\"} 0.1\n"
	       "h_seconds_count{host=\"a\"} 7\n"
	       "# HELP g g\n# TYPE g gauge\ng 0.3\n",
	       "0.0.4: counter TYPE with _total, escapes, cumulative buckets, shortest values");
	free(e.p);

	tr_expo_init(&e, true);
	tr_expo_family(&e, "x_seconds", TR_EXPO_COUNTER, "seconds", "say \"hi\"");
	tr_expo_value(&e, NULL, 2);
	tr_expo_family(&e, "h_seconds", TR_EXPO_HISTOGRAM, "seconds", "h");
	tr_expo_hist(&e, NULL, le, cum, 2, 0.5, 5);
	is_int(tr_expo_end(&e), 0, "OpenMetrics: written");
	is_str(e.p,
	       "# HELP x_seconds say \\\"hi\\\"\n# TYPE x_seconds counter\n# UNIT x_seconds seconds\n"
	       "x_seconds_total 2\n"
	       "# HELP h_seconds h\n# TYPE h_seconds histogram\n# UNIT h_seconds seconds\n"
	       "h_seconds_bucket{le=\"0.001\"} 3\nh_seconds_bucket{le=\"1.0\"} 5\n"
	       "h_seconds_bucket{le=\"+Inf\"} 5\nh_seconds_sum 0.5\nh_seconds_count 5\n# EOF\n",
	       "OpenMetrics: family without _total, UNIT, le as floats, # EOF last");
	free(e.p);

	ok(tr_expo_wants_om("application/openmetrics-text; version=1.0.0,text/plain;q=0.5"),
	   "Accept: OpenMetrics first");
	ok(tr_expo_wants_om("text/plain;q=0.9, application/openmetrics-text;q=0.5"),
	   "Accept: OpenMetrics with a weight");
	ok(!tr_expo_wants_om("application/openmetrics-text;q=0, text/plain"),
	   "Accept: OpenMetrics refused with q=0");
	ok(!tr_expo_wants_om("text/plain") && !tr_expo_wants_om(""), "Accept: text or none");

	tr_expo_labels(lab, 20, "a", "1", "bbbbbbbbbb", "2", NULL);
	is_str(lab, "a=\"1\"", "labels: a pair that does not fit is left out whole");

	static const char req[] = "GET /metrics?x=1 HTTP/1.1\r\nHost: h\r\naccept:  text/plain \r\n"
				  "Authorization: Bearer abc\r\n\r\n";
	char v[16], path[64];
	is_int(tr_http_request(req, sizeof(req) - 1, path, sizeof(path)), TR_HTTP_GET, "a GET");
	is_str(path, "/metrics", "its path without the query");
	is_int(tr_http_header(req, sizeof(req) - 1, "Accept", v, sizeof(v)), 10,
	       "a header, case-insensitive");
	is_str(v, "text/plain", "its value, blanks cut");
	is_int(tr_http_header(req, sizeof(req) - 1, "X-None", v, sizeof(v)), -ENOENT, "no such header");
	is_int(tr_http_header(req, sizeof(req) - 1, "Authorization", v, 8), -E2BIG, "too long");
	is_int(tr_http_header(req, 30, "Host", v, sizeof(v)), -ENOENT, "a header not ended yet");
	return done_testing();
}
