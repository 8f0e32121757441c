/* SPDX-License-Identifier: MIT */
/*
 * lib/agg/parse.c - the aggregation statement (docs/aggregations.md):
 *
 *   statement := agg { ';' agg } [ ';' ]
 *   agg       := FUNC '(' [ value { ',' NUMBER } ] ')' [ 'by' key { ',' key } ] [ 'top' N ]
 *   value     := 'lat' '(' GLOB ',' GLOB ')'   end ts - begin ts, paired per tid
 *              | GLOB '.' FIELD                a field of the events GLOB matches
 *              | GLOB                          the events themselves (count only)
 *   key       := host | cpu | tid | pid | comm | cgroup | event | FIELD
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
#include "agg/agg-priv.h"
#include "pipe/pipe-internal.h"	/* tr_reader_is_live */
#include "trawl/ctf.h"
#include "trawl/pipe.h"

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
	[TR_AGG_K_PID] = "pid",
};

const char *tr_agg_key_name(enum tr_agg_key_kind k)
{
	return (size_t)k < ARRAY_SIZE(key_names) ? key_names[k] : NULL;
}

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
		return fail(l, "a key is expected (host, cpu, tid, pid, comm, cgroup, event or a field)");
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

/* ------------------------------------------- against the traces read */

/* The names a "did you mean" looks among: distinct, at most NAMES_MAX. */
#define NAMES_MAX 512
struct names {
	const char *v[NAMES_MAX];
	size_t n;
};

static void names_add(struct names *nm, const char *s)
{
	if (!s || !*s || nm->n == NAMES_MAX)
		return;
	for (size_t i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], s))
			return;
	nm->v[nm->n++] = s;
}

/* A field's name as readers show it: one leading '_' dropped. */
static const char *shown_name(const char *s)
{
	return s && s[0] == '_' ? s + 1 : s;
}

static void names_of_struct(struct names *nm, const struct trawl_ctf_type *t)
{
	if (!t || t->kind != TRAWL_CTF_STRUCT)
		return;
	for (size_t i = 0; i < t->u.s.n; i++)
		names_add(nm, shown_name(t->u.s.fields[i].name));
}

/* Calls fn for every event class of the reader whose name glob matches
 * (NULL: every class), with the class's stream class. */
static size_t each_class(struct trawl_reader *r, const char *glob,
			 void (*fn)(void *arg, const struct trawl_ctf_event_class *ec,
				    const struct trawl_ctf_stream_class *sc), void *arg)
{
	size_t n = 0;

	for (size_t ti = 0; ti < trawl_reader_ntraces(r); ti++) {
		const struct trawl_ctf_trace *m =
			trawl_reader_trace_meta(trawl_reader_trace_at(r, ti));
		for (size_t i = 0; m && i < m->nstreams; i++)
			for (size_t j = 0; j < m->streams[i]->nevents; j++) {
				const struct trawl_ctf_event_class *ec = m->streams[i]->events[j];
				if (!ec->name || (glob && !tr_glob_match(glob, ec->name)))
					continue;
				n++;
				if (fn)
					fn(arg, ec, m->streams[i]);
			}
	}
	return n;
}

static void add_class_name(void *arg, const struct trawl_ctf_event_class *ec,
			   const struct trawl_ctf_stream_class *sc)
{
	(void)sc;
	names_add(arg, ec->name);
}

static void add_field_names(void *arg, const struct trawl_ctf_event_class *ec,
			    const struct trawl_ctf_stream_class *sc)
{
	names_of_struct(arg, ec->fields);
	names_of_struct(arg, ec->context);
	names_of_struct(arg, sc ? sc->event_context : NULL);
}

/* " (did you mean 'X'?)" when a name is near, else "". */
static const char *near_text(char *buf, size_t cap, const char *name, const struct names *nm)
{
	const char *best = tr_closest(name, nm->v, nm->n, TR_NEAR);

	if (!best)
		return "";
	snprintf(buf, cap, " (did you mean '%s'?)", best);
	return buf;
}

/* The event glob g of aggregation s matches some class, else the error. */
static int check_glob(struct trawl_reader *r, const struct tr_agg_stmt *s, const char *g,
		      struct names *all, char *err, size_t errlen)
{
	char near[160];

	if (each_class(r, g, NULL, NULL))
		return 0;
	return tr_seterr(err, errlen, ENOENT, "%s: no event matches '%s'%s", s->text, g,
			 near_text(near, sizeof(near), g, all));
}

struct type_scan {
	const struct trawl_field *f;
	size_t num, str;	/* matched classes where the field is a number, a string */
};

static void scan_type(void *arg, const struct trawl_ctf_event_class *ec,
		      const struct trawl_ctf_stream_class *sc)
{
	struct type_scan *t = arg;
	enum trawl_field_type ft = trawl_field_type(t->f, ec);

	(void)sc;
	if (ft == TRAWL_FIELD_INT || ft == TRAWL_FIELD_FLOAT)
		t->num++;
	else if (ft == TRAWL_FIELD_STRING)
		t->str++;
}

static int check(const struct tr_agg_spec *spec, struct trawl_reader *r, char *err, size_t errlen)
{
	struct names *all = calloc(1, sizeof(*all)), *fields = NULL, *cand = NULL;
	char near[160], bind[256];
	int rc = 0;

	if (!all || !(fields = calloc(1, sizeof(*fields))) || !(cand = calloc(1, sizeof(*cand)))) {
		rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	each_class(r, NULL, add_class_name, all);
	for (size_t i = 0; i < spec->n && !rc; i++) {
		const struct tr_agg_stmt *s = &spec->stmt[i];

		if ((rc = check_glob(r, s, s->glob, all, err, errlen)))
			break;
		if (s->value == TR_AGG_V_LAT && (rc = check_glob(r, s, s->glob_end, all, err, errlen)))
			break;
		fields->n = 0;
		each_class(r, s->glob, add_field_names, fields);
		if (s->value == TR_AGG_V_FIELD) {
			char sp[512];
			snprintf(sp, sizeof(sp), "%s.%s", s->glob, s->field);
			const struct trawl_field *f = trawl_field_bind(r, sp, TRAWL_FIELD_ANY,
								       TRAWL_FIELD_OPTIONAL, bind,
								       sizeof(bind));
			if (!f && errno == ENOENT) {
				rc = tr_seterr(err, errlen, ENOENT, "%s: %s%s", s->text, bind,
					       near_text(near, sizeof(near), s->field, fields));
				break;
			}
			if (!f) {
				rc = tr_seterr(err, errlen, errno, "%s: %s", s->text, bind);
				break;
			}
			struct type_scan t = { .f = f };
			each_class(r, s->glob, scan_type, &t);
			if (!t.num) {
				rc = tr_seterr(err, errlen, EINVAL, "%s: %s.%s is %s: %s() takes numbers "
					       "(its values as a key: count(%s) by %s)", s->text,
					       s->glob, s->field, t.str ? "a string" : "not a number",
					       tr_agg_func_name(s->func), s->glob, s->field);
				break;
			}
		}
		for (size_t k = 0; k < s->nkeys; k++) {
			if (s->key[k].kind != TR_AGG_K_FIELD)
				continue;
			bool found = false;
			for (size_t j = 0; j < fields->n && !found; j++)
				found = !strcmp(fields->v[j], s->key[k].name) ||
					(strchr(s->key[k].name, '.') &&
					 !strncmp(fields->v[j], s->key[k].name, strlen(fields->v[j])) &&
					 s->key[k].name[strlen(fields->v[j])] == '.');
			if (found)
				continue;
			/* the near names: the key words, then the events' fields */
			cand->n = 0;
			for (size_t w = 0; w < ARRAY_SIZE(key_names); w++)
				names_add(cand, key_names[w]);
			for (size_t j = 0; j < fields->n; j++)
				names_add(cand, fields->v[j]);
			rc = tr_seterr(err, errlen, ENOENT, "%s: no key '%s': not one of host, cpu, "
				       "tid, pid, comm, cgroup, event, and no event matching '%s' has "
				       "such a field%s", s->text, s->key[k].name, s->glob,
				       near_text(near, sizeof(near), s->key[k].name, cand));
			break;
		}
	}
out:
	free(all);
	free(fields);
	free(cand);
	return rc;
}

int trawl_agg_check(const struct trawl_agg *a, struct trawl_reader *r, char *err, size_t errlen)
{
	if (tr_reader_is_live(r))
		return 0;	/* its classes come as it goes */
	return check(&a->spec, r, err, errlen);
}
