/* SPDX-License-Identifier: MIT */
/*
 * lib/agg/parse.c - the aggregation statement (docs/aggregations.md):
 *
 *   statement := agg { ';' agg } [ ';' ]
 *   agg       := FUNC '(' [ value { ',' NUMBER } ] ')' [ 'by' key { ',' key } ] [ 'top' N ]
 *   value     := 'lat' '(' GLOB ',' GLOB ')'   end ts - begin ts, paired per tid
 *              | GLOB '.' FIELD                a field of the events GLOB matches
 *              | GLOB                          the events themselves (count only)
 *   key       := host | cpu | tid | comm | cgroup | event | FIELD
 *   NUMBER    := [-]digits [ ns | us | ms | s ]  (a duration unit: scaled to ns)
 *
 * A word is a run of characters other than blanks and "(),;". Input is
 * untrusted (command lines, fuzzed): every length is checked, nothing
 * is read past len.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/agg-internal.h"

static const char *const func_names[] = {
	[TR_AGG_COUNT] = "count", [TR_AGG_SUM] = "sum", [TR_AGG_MIN] = "min",
	[TR_AGG_MAX] = "max", [TR_AGG_AVG] = "avg", [TR_AGG_STDDEV] = "stddev",
	[TR_AGG_STATS] = "stats", [TR_AGG_HIST] = "hist", [TR_AGG_LHIST] = "lhist",
	[TR_AGG_LLHIST] = "llhist", [TR_AGG_HEATMAP] = "heatmap",
};

/* Numbers each function takes after its value: least, most. */
static const unsigned char func_params[][2] = {
	[TR_AGG_LHIST] = { 3, 3 }, [TR_AGG_LLHIST] = { 0, 4 }, [TR_AGG_HEATMAP] = { 0, 2 },
};

static const char *const key_names[] = {
	[TR_AGG_K_HOST] = "host", [TR_AGG_K_CPU] = "cpu", [TR_AGG_K_TID] = "tid",
	[TR_AGG_K_COMM] = "comm", [TR_AGG_K_CGROUP] = "cgroup", [TR_AGG_K_EVENT] = "event",
};

const char *tr_agg_func_name(enum tr_agg_func f)
{
	return (size_t)f < ARRAY_SIZE(func_names) ? func_names[f] : "?";
}

struct lex {
	const char *p, *end, *start;
	char *err;
	size_t errlen;
};

static bool is_word(char c)
{
	return c && !strchr(" \t\n\r(),;", c);
}

static void skip_blank(struct lex *l)
{
	while (l->p < l->end && strchr(" \t\n\r", *l->p) && *l->p)
		l->p++;
}

static int fail(struct lex *l, const char *what)
{
	return tr_seterr(l->err, l->errlen, EINVAL, "column %zu: %s", (size_t)(l->p - l->start) + 1,
			 what);
}

/* The next word (len in *n); 0 length when there is none. */
static const char *word(struct lex *l, size_t *n)
{
	skip_blank(l);
	const char *w = l->p;
	while (l->p < l->end && is_word(*l->p))
		l->p++;
	*n = (size_t)(l->p - w);
	return w;
}

static bool punct(struct lex *l, char c)
{
	skip_blank(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return true;
	}
	return false;
}

static bool word_is(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && !memcmp(w, s, n);
}

/* NUMBER -> *v (ns when it has a unit). */
static int number(struct lex *l, int64_t *v)
{
	size_t n;
	const char *w = word(l, &n), *p = w, *e = w + n;
	bool neg = false;
	uint64_t x = 0;

	if (p < e && *p == '-') {
		neg = true;
		p++;
	}
	if (p == e || *p < '0' || *p > '9')
		return fail(l, "a number is expected");
	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX / 10) - 9)
			return fail(l, "number too large");
		x = x * 10 + (uint64_t)(*p - '0');
	}
	uint64_t mul = 1;
	if (p < e) {
		size_t r = (size_t)(e - p);
		if (word_is(p, r, "ns"))
			mul = 1;
		else if (word_is(p, r, "us"))
			mul = 1000;
		else if (word_is(p, r, "ms"))
			mul = 1000000;
		else if (word_is(p, r, "s"))
			mul = 1000000000;
		else
			return fail(l, "unknown unit (ns, us, ms, s)");
	}
	if (x > (uint64_t)INT64_MAX / mul)
		return fail(l, "number too large");
	*v = (int64_t)(x * mul) * (neg ? -1 : 1);
	return 0;
}

static char *dup(const char *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

static int value(struct lex *l, struct tr_agg_stmt *a)
{
	size_t n;
	const char *w = word(l, &n);

	if (!n)
		return fail(l, "an event glob, GLOB.FIELD or lat(BEGIN, END) is expected");
	if (word_is(w, n, "lat") && punct(l, '(')) {
		size_t n1, n2;
		const char *b = word(l, &n1);
		if (!n1)
			return fail(l, "lat(): the begin events' glob is expected");
		if (!punct(l, ','))
			return fail(l, "lat(BEGIN, END): ',' is expected");
		const char *e = word(l, &n2);
		if (!n2)
			return fail(l, "lat(): the end events' glob is expected");
		if (!punct(l, ')'))
			return fail(l, "lat(BEGIN, END): ')' is expected");
		a->value = TR_AGG_V_LAT;
		if (!(a->glob = dup(b, n1)) || !(a->glob_end = dup(e, n2)))
			return -ENOMEM;
		return 0;
	}
	const char *dot = memchr(w, '.', n);
	if (!dot) {
		a->value = TR_AGG_V_EVENTS;
		return (a->glob = dup(w, n)) ? 0 : -ENOMEM;
	}
	if (dot == w || dot + 1 == w + n)
		return fail(l, "GLOB.FIELD: both parts are needed");
	a->value = TR_AGG_V_FIELD;
	if (!(a->glob = dup(w, (size_t)(dot - w))) || !(a->field = dup(dot + 1, (size_t)(w + n - dot - 1))))
		return -ENOMEM;
	return 0;
}

/* The defaults and checks of a function's numbers. */
static int params(struct lex *l, struct tr_agg_stmt *a)
{
	int64_t *p = a->param;

	switch (a->func) {
	case TR_AGG_LHIST:
		if (p[2] <= 0 || p[1] <= p[0])
			return fail(l, "lhist(X, MIN, MAX, STEP): MIN < MAX and STEP > 0");
		if ((uint64_t)(p[1] - p[0]) / (uint64_t)p[2] > TR_AGG_MAX_BUCKETS)
			return fail(l, "lhist(): more than 4096 buckets");
		break;
	case TR_AGG_LLHIST: {
		static const int64_t def[4] = { 10, 0, 9, 10 };
		for (size_t i = a->nparam; i < 4; i++)
			p[i] = def[i];
		if (p[0] < 2 || p[1] < 0 || p[2] < p[1] || p[3] < 1 || p[3] > 1000)
			return fail(l, "llhist(X, FACTOR, LOW, HIGH, STEPS): FACTOR >= 2, "
				    "0 <= LOW <= HIGH, 1 <= STEPS <= 1000");
		/* factor^(high+1) must fit */
		int64_t m = 1;
		for (int64_t i = 0; i <= p[2]; i++) {
			if (m > INT64_MAX / p[0])
				return fail(l, "llhist(): FACTOR^(HIGH+1) is too large");
			m *= p[0];
		}
		if (tr_agg_ll_nbuckets(p) > TR_AGG_MAX_BUCKETS)
			return fail(l, "llhist(): more than 4096 buckets");
		break;
	}
	case TR_AGG_HEATMAP:
		if (a->nparam == 1 || (a->nparam == 2 && (p[0] < 0 || p[1] <= p[0])))
			return fail(l, "heatmap(X, LOW, HIGH): 0 <= LOW < HIGH");
		break;
	default:
		break;
	}
	return 0;
}

static int key(struct lex *l, struct tr_agg_stmt *a)
{
	size_t n;
	const char *w = word(l, &n);

	if (!n)
		return fail(l, "a key is expected (host, cpu, tid, comm, cgroup, event or a field)");
	if (a->nkeys == TR_AGG_MAX_KEYS)
		return fail(l, "more than 8 keys");
	a->key[a->nkeys].kind = TR_AGG_K_FIELD;
	for (size_t k = 0; k < ARRAY_SIZE(key_names); k++)
		if (word_is(w, n, key_names[k]))
			a->key[a->nkeys].kind = (enum tr_agg_key_kind)k;
	if (!(a->key[a->nkeys].name = dup(w, n)))
		return -ENOMEM;
	a->nkeys++;
	return 0;
}

/* The aggregation written back: "hist(lat(a, b)) by comm top 3". */
static int normalize(struct tr_agg_stmt *a)
{
	char buf[1024];
	size_t o = 0;
#define PUT(...) o += (size_t)snprintf(buf + o, o < sizeof(buf) ? sizeof(buf) - o : 0, __VA_ARGS__)
	PUT("%s(", func_names[a->func]);
	if (a->value == TR_AGG_V_LAT)
		PUT("lat(%s, %s)", a->glob, a->glob_end);
	else if (a->value == TR_AGG_V_FIELD)
		PUT("%s.%s", a->glob, a->field);
	else
		PUT("%s", a->glob);
	for (size_t i = 0; i < a->nparam; i++)
		PUT(", %lld", (long long)a->param[i]);
	PUT(")");
	for (size_t i = 0; i < a->nkeys; i++)
		PUT("%s%s", i ? ", " : " by ", a->key[i].name);
	if (a->top)
		PUT(" top %llu", (unsigned long long)a->top);
#undef PUT
	if (o >= sizeof(buf))
		o = sizeof(buf) - 1;
	return (a->text = dup(buf, o)) ? 0 : -ENOMEM;
}

static int agg(struct lex *l, struct tr_agg_stmt *a)
{
	size_t n;
	const char *w = word(l, &n);
	int rc;
	bool found = false;

	for (size_t f = 0; f < ARRAY_SIZE(func_names); f++)
		if (word_is(w, n, func_names[f])) {
			a->func = (enum tr_agg_func)f;
			found = true;
		}
	if (!found) {
		l->p = w;
		return fail(l, "a function is expected: count, sum, min, max, avg, stddev, "
			    "stats, hist, lhist, llhist or heatmap");
	}
	if (!punct(l, '('))
		return fail(l, "'(' is expected");
	if ((rc = value(l, a)) < 0)
		return rc;
	unsigned lo = (size_t)a->func < ARRAY_SIZE(func_params) ? func_params[a->func][0] : 0;
	unsigned hi = (size_t)a->func < ARRAY_SIZE(func_params) ? func_params[a->func][1] : 0;
	while (punct(l, ',')) {
		if (a->nparam == hi)
			return fail(l, hi ? "too many numbers" : "this function takes no numbers");
		if ((rc = number(l, &a->param[a->nparam++])) < 0)
			return rc;
	}
	if (a->nparam < lo)
		return fail(l, "lhist(X, MIN, MAX, STEP): three numbers are expected");
	if (!punct(l, ')'))
		return fail(l, "')' is expected");
	if (a->value == TR_AGG_V_EVENTS && a->func != TR_AGG_COUNT)
		return fail(l, "only count() takes events; give GLOB.FIELD or lat(BEGIN, END)");
	if ((rc = params(l, a)) < 0)
		return rc;
	const char *save = l->p;
	w = word(l, &n);
	if (word_is(w, n, "by")) {
		do {
			if ((rc = key(l, a)) < 0)
				return rc;
		} while (punct(l, ','));
		save = l->p;
		w = word(l, &n);
	}
	if (word_is(w, n, "top")) {
		int64_t t;
		if ((rc = number(l, &t)) < 0)
			return rc;
		if (t <= 0)
			return fail(l, "top N: N > 0");
		a->top = (uint64_t)t;
	} else {
		l->p = save;
	}
	if (a->func == TR_AGG_HEATMAP && a->nkeys)
		return fail(l, "heatmap() takes no keys (one heat map over every event)");
	return normalize(a);
}

int tr_agg_parse(struct tr_agg_spec *s, const char *text, size_t len, char *err, size_t errlen)
{
	struct lex l = { .p = text, .end = text + len, .start = text, .err = err, .errlen = errlen };
	int rc;

	memset(s, 0, sizeof(*s));
	if (memchr(text, 0, len))
		return fail(&l, "a NUL byte");
	for (;;) {
		skip_blank(&l);
		if (l.p == l.end)
			break;
		if (s->n == TR_AGG_NMAX)
			return fail(&l, "more than 16 aggregations");
		if ((rc = agg(&l, &s->stmt[s->n++])) < 0)
			return rc;
		skip_blank(&l);
		if (l.p == l.end)
			break;
		if (!punct(&l, ';'))
			return fail(&l, "';' or the end is expected");
	}
	if (!s->n)
		return fail(&l, "no aggregation (e.g. 'count(syscall_entry_*) by comm')");
	return 0;
}

void tr_agg_spec_release(struct tr_agg_spec *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct tr_agg_stmt *a = &s->stmt[i];
		free(a->glob);
		free(a->field);
		free(a->glob_end);
		free(a->text);
		for (size_t k = 0; k < a->nkeys; k++)
			free(a->key[k].name);
	}
	memset(s, 0, sizeof(*s));
}
