/* SPDX-License-Identifier: MIT */
/*
 * lib/metrics/expo.c - the exposition writer (expo.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metrics/expo.h"

static void put(struct tr_expo *e, const char *s, size_t n)
{
	if (e->oom)
		return;
	if (e->len + n + 1 > e->cap) {
		size_t cap = e->cap ? e->cap : 4096;

		while (cap < e->len + n + 1)
			cap *= 2;
		char *p = realloc(e->p, cap);

		if (!p) {
			e->oom = true;
			return;
		}
		e->p = p;
		e->cap = cap;
	}
	memcpy(e->p + e->len, s, n);
	e->len += n;
	e->p[e->len] = 0;
}

static void puts_(struct tr_expo *e, const char *s)
{
	put(e, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) putf(struct tr_expo *e, const char *fmt, ...)
{
	char b[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof(b), fmt, ap);

	va_end(ap);
	if (n > 0)
		put(e, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
}

/* A value as both formats take it: integers exactly, others in full. */
static void num(char *b, size_t cap, double v)
{
	if (isnan(v))
		snprintf(b, cap, "NaN");
	else if (isinf(v))
		snprintf(b, cap, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9e15)
		snprintf(b, cap, "%.0f", v);
	else {
		/* the shortest form that reads back as v */
		for (int prec = 6; prec <= 17; prec++) {
			snprintf(b, cap, "%.*g", prec, v);
			if (strtod(b, NULL) == v)
				break;
		}
	}
}

bool tr_expo_wants_om(const char *accept)
{
	const char *p = accept ? strcasestr(accept, "application/openmetrics-text") : NULL;

	if (!p)
		return false;
	/* its parameters, up to the next type: refused with q=0? */
	const char *end = strchr(p, ',');
	const char *q = strstr(p, "q=");

	if (q && (!end || q < end)) {
		double w = strtod(q + 2, NULL);

		if (w <= 0)
			return false;
	}
	return true;
}

void tr_expo_init(struct tr_expo *e, bool om)
{
	memset(e, 0, sizeof(*e));
	e->om = om;
}

void tr_expo_family(struct tr_expo *e, const char *name, enum tr_expo_kind kind,
		    const char *unit, const char *help)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	const char *suffix = kind == TR_EXPO_COUNTER && !e->om ? "_total" : "";

	e->fam = name;
	e->counter = kind == TR_EXPO_COUNTER;
	putf(e, "# HELP %s%s ", name, suffix);
	/* help text: \\ and \n escaped (OpenMetrics: \" too) */
	for (const char *s = help; *s; s++) {
		if (*s == '\\')
			puts_(e, "\\\\");
		else if (*s == '\n')
			puts_(e, "\\n");
		else if (*s == '"' && e->om)
			puts_(e, "\\\"");
		else
			put(e, s, 1);
	}
	putf(e, "\n# TYPE %s%s %s\n", name, suffix, types[kind]);
	if (e->om && unit)
		putf(e, "# UNIT %s %s\n", name, unit);
}

static void sample(struct tr_expo *e, const char *suffix, const char *labels, const char *extra,
		   double v)
{
	char b[64];

	num(b, sizeof(b), v);
	puts_(e, e->fam);
	puts_(e, suffix);
	bool l = labels && *labels;

	if (l || extra) {
		put(e, "{", 1);
		if (l)
			puts_(e, labels);
		if (l && extra)
			put(e, ",", 1);
		if (extra)
			puts_(e, extra);
		put(e, "}", 1);
	}
	put(e, " ", 1);
	puts_(e, b);
	put(e, "\n", 1);
}

void tr_expo_value(struct tr_expo *e, const char *labels, double v)
{
	sample(e, e->counter ? "_total" : "", labels, NULL, v);
}

void tr_expo_hist(struct tr_expo *e, const char *labels, const double *le, const uint64_t *cum,
		  size_t nb, double sum, uint64_t count)
{
	char x[80], b[64];

	for (size_t i = 0; i < nb; i++) {
		num(b, sizeof(b), le[i]);
		/* OpenMetrics' canonical form of a whole number is a float */
		snprintf(x, sizeof(x), "le=\"%s%s\"", b,
			 e->om && !strpbrk(b, ".eEIN") ? ".0" : "");
		sample(e, "_bucket", labels, x, (double)cum[i]);
	}
	sample(e, "_bucket", labels, "le=\"+Inf\"", (double)count);
	sample(e, "_sum", labels, NULL, sum);
	sample(e, "_count", labels, NULL, (double)count);
}

int tr_expo_end(struct tr_expo *e)
{
	if (e->om)
		puts_(e, "# EOF\n");
	if (e->oom || !e->p) {
		put(e, "", 0);
		if (e->oom) {
			free(e->p);
			e->p = NULL;
			e->len = e->cap = 0;
			return -ENOMEM;
		}
	}
	return 0;
}

const char *tr_expo_labels(char *buf, size_t cap, ...)
{
	va_list ap;
	size_t n = 0;

	if (!cap)
		return buf;
	buf[0] = 0;
	va_start(ap, cap);
	for (;;) {
		const char *k = va_arg(ap, const char *), *v;

		if (!k)
			break;
		v = va_arg(ap, const char *);
		char tmp[512];
		size_t t = 0;

		t += (size_t)snprintf(tmp, sizeof(tmp), "%s%s=\"", n ? "," : "", k);
		for (const char *s = v ? v : ""; *s && t + 4 < sizeof(tmp); s++) {
			unsigned char c = (unsigned char)*s;

			if (c == '\\' || c == '"') {
				tmp[t++] = '\\';
				tmp[t++] = (char)c;
			} else {
				tmp[t++] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
			}
		}
		tmp[t++] = '"';
		if (n + t + 1 > cap)
			break;
		memcpy(buf + n, tmp, t);
		n += t;
		buf[n] = 0;
	}
	va_end(ap);
	return buf;
}
