/* SPDX-License-Identifier: MIT */
/*
 * cli/time.c - the <time> arguments of the commands that read traces
 * (--begin/--end of print, analyze, agg, view, export; state --at), one
 * parser for all (docs/time.md): seconds or nanoseconds since the epoch, a
 * date, a time of day on the day of the traces' first event, in local time
 * or UTC, or +S[.n][unit] after the first event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "trawl/pipe.h"

/* Digits -> value; *end past them. -1 if none or too large. */
static int parse_digits(const char *s, int64_t *v, const char **end)
{
	const char *p = s;

	*v = 0;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*v > (INT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (*p - '0');
	}
	*end = p;
	return 0;
}

/* An optional ".digits" at s -> ns (up to 9 digits count); *end past it. */
static int64_t parse_frac(const char *s, const char **end)
{
	int64_t ns = 0, scale = 100000000;

	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
			ns += (*s - '0') * scale;
	}
	*end = s;
	return ns;
}

/*
 * Parses a <time> (see the usage) into ns since the epoch. The HH:MM:SS
 * form is relative to the local (or UTC) midnight of the day of day_ref
 * (ns), the +S form to day_ref itself (the first event); both set *rel,
 * and with day_ref == INT64_MIN only check the syntax.
 */
int cli_parse_time(const char *s, bool gmt, int64_t day_ref, int64_t *out, bool *rel)
{
	const char *p;
	int64_t v, frac;
	struct tm tm = { 0 };
	int n = 0;

	*rel = false;
	if (s[0] == '+') {
		/* +S[.n] seconds (or +N ns, us, ms, s) after day_ref, the first event */
		static const struct { const char *u; int64_t mul; } units[] = {
			{ "", 1000000000 }, { "s", 1000000000 }, { "ms", 1000000 },
			{ "us", 1000 }, { "ns", 1 },
		};
		if (parse_digits(s + 1, &v, &p))
			return -1;
		const char *f = p;
		frac = parse_frac(p, &p);	/* ns of a second */
		size_t u;
		for (u = 0; u < sizeof(units) / sizeof(units[0]) && strcmp(p, units[u].u); u++)
			;
		if (u == sizeof(units) / sizeof(units[0]) || (*f == '.' && f + 1 == p))
			return -1;
		int64_t mul = units[u].mul;
		if (v > INT64_MAX / mul / 2)
			return -1;
		/* the fraction of the unit: frac is in 1e-9 of one */
		int64_t off = v * mul + (int64_t)((double)frac * (double)mul / 1e9 + 0.5);
		*rel = true;
		if (day_ref == INT64_MIN)
			return 0;
		*out = day_ref + off;
		return 0;
	}
	if (strlen(s) >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T')) {
		if (sscanf(s, "%4d-%2d-%2d%*c%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
			   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
			return -1;
		frac = parse_frac(s + n, &p);
		if (*p)
			return -1;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		tm.tm_isdst = -1;
		*out = (int64_t)(gmt ? timegm(&tm) : mktime(&tm)) * 1000000000 + frac;
		return 0;
	}
	if (strchr(s, ':')) {
		int hh, mm;
		time_t day;

		if (sscanf(s, "%2d:%2d:%n", &hh, &mm, &n) != 2 || n == 0 || hh < 0 ||
		    hh > 23 || mm < 0 || mm > 59)
			return -1;
		if (parse_digits(s + n, &v, &p) || v > 60)
			return -1;
		frac = parse_frac(p, &p);
		if (*p)
			return -1;
		*rel = true;
		if (day_ref == INT64_MIN)
			return 0;
		day = (time_t)(day_ref / 1000000000);
		if (gmt)
			gmtime_r(&day, &tm);
		else
			localtime_r(&day, &tm);
		tm.tm_hour = hh;
		tm.tm_min = mm;
		tm.tm_sec = (int)v;
		tm.tm_isdst = -1;
		*out = (int64_t)(gmt ? timegm(&tm) : mktime(&tm)) * 1000000000 + frac;
		return 0;
	}
	if (parse_digits(s, &v, &p))
		return -1;
	if (strcmp(p, "ns") == 0 || (!*p && p - s >= 13)) {
		*out = v;	/* nanoseconds */
		return 0;
	}
	frac = parse_frac(p, &p);
	if (*p && strcmp(p, "s") != 0)
		return -1;
	if (v > INT64_MAX / 1000000000 - 1)
		return -1;
	*out = v * 1000000000 + frac;
	return 0;
}

int cli_first_ts(const char *const *paths, size_t npaths, const struct trawl_reader_opts *base,
		 int64_t *ts)
{
	struct trawl_reader_opts ro = {
		.sz = sizeof(ro), .hosts = base->hosts, .nhosts = base->nhosts, .threads = 1,
		.fixes = base->fixes, .nfixes = base->nfixes,
		.bad_trace = cli_report_bad_trace,	/* silent: the command's reader reports them */
	};
	char err[512];
	struct trawl_reader *r = trawl_reader_new(paths, npaths, &ro, err, sizeof(err));
	const struct trawl_event *ev;
	int rc;

	if (r && cli_reader_matches(r, base->hosts, base->nhosts, NULL, 0, err, sizeof(err))) {
		trawl_reader_free(r);	/* a host glob that matches nothing */
		r = NULL;
	}
	if (!r)
		return cli_err("%s", err);
	while ((rc = trawl_reader_next(r, &ev)) < 0)
		;
	*ts = rc == 1 ? ev->ts : 0;
	trawl_reader_free(r);
	return 0;
}

int cli_time_range_parse(struct cli_time_range *t)
{
	if (t->begin_s && cli_parse_time(t->begin_s, t->gmt, INT64_MIN, &t->begin, &t->brel))
		return cli_usage("--begin: '%s' is not a time", t->begin_s);
	if (t->end_s && cli_parse_time(t->end_s, t->gmt, INT64_MIN, &t->end, &t->erel))
		return cli_usage("--end: '%s' is not a time", t->end_s);
	return 0;
}

int cli_time_range_apply(struct cli_time_range *t, const char *const *paths, size_t npaths,
			 struct trawl_reader_opts *ro)
{
	if ((t->brel || t->erel) && !npaths)
		return cli_usage("a time of day needs trace files, as does +S (give the date, or ns)");
	if (t->brel || t->erel) {
		int64_t day = 0;

		if (cli_first_ts(paths, npaths, ro, &day))
			return CLI_EXIT_FAILURE;
		if (t->brel)
			cli_parse_time(t->begin_s, t->gmt, day, &t->begin, &t->brel);
		if (t->erel)
			cli_parse_time(t->end_s, t->gmt, day, &t->end, &t->erel);
	}
	if (t->end_s && t->begin_s && t->end < t->begin)
		return cli_usage("--end is before --begin");
	if (t->begin_s || t->end_s) {
		/* 0, 0 means everything: an explicit epoch begin is 1 ns early */
		ro->begin = t->begin_s ? t->begin : 0;
		ro->end = t->end_s ? t->end : 0;
		if (t->end_s && ro->end == 0)
			ro->end = -1;	/* nothing can be at or before 0 */
	}
	return 0;
}
