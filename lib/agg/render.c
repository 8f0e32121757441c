/* SPDX-License-Identifier: MIT */
/*
 * lib/agg/render.c - the results of the aggregations: sorted rows, text
 * tables, ASCII histograms (bpftrace's look), heat maps in text (shades)
 * and SVG. Output is built in memory and written to the caller's fd.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agg/agg-priv.h"

/* ------------------------------------------------------------- rows */

void tr_agg_view_release(struct one *o)
{
	free(o->rows);
	free(o->strs);
	o->rows = NULL;
	o->strs = NULL;
	o->nrows = 0;
}

double tr_agg_value_of(const struct one *o, const struct cell *c)
{
	switch (o->s->func) {
	case TR_AGG_SUM:
		return c->sum;
	case TR_AGG_MIN:
		return c->min;
	case TR_AGG_MAX:
		return c->max;
	case TR_AGG_AVG:
		return c->mean;
	case TR_AGG_STDDEV:
		return c->count ? sqrt(c->m2 / (double)c->count) : 0;
	default:
		return (double)c->count;
	}
}

static const struct one *sort_one;	/* qsort has no argument (the agg is single-threaded) */

static int cmp_rows(const void *x, const void *y)
{
	const struct view_row *a = x, *b = y;
	double va = tr_agg_value_of(sort_one, a->cell), vb = tr_agg_value_of(sort_one, b->cell);

	if (va != vb)
		return va > vb ? -1 : 1;
	const uint64_t *ka = a->key, *kb = b->key;
	for (size_t i = 0; i < sort_one->s->nkeys; i++) {
		if (ka[2 * i] != kb[2 * i])
			return ka[2 * i] < kb[2 * i] ? -1 : 1;
		if (ka[2 * i] == KEY_STR) {
			int c = strcmp(a->keys[i], b->keys[i]);
			if (c)
				return c;
		} else if (ka[2 * i + 1] != kb[2 * i + 1]) {
			if (ka[2 * i] == KEY_INT)
				return (int64_t)ka[2 * i + 1] < (int64_t)kb[2 * i + 1] ? -1 : 1;
			return ka[2 * i + 1] < kb[2 * i + 1] ? -1 : 1;
		}
	}
	return 0;
}

static size_t key_text(const struct trawl_agg *a, const uint64_t *k, char *buf, size_t cap)
{
	double d;
	switch (k[0]) {
	case KEY_INT:
		return (size_t)snprintf(buf, cap, "%lld", (long long)k[1]);
	case KEY_STR:
		return (size_t)snprintf(buf, cap, "%s", tr_state_str(&a->km.str, (uint32_t)k[1]));
	case KEY_FLOAT:
		memcpy(&d, &k[1], sizeof(d));
		return (size_t)snprintf(buf, cap, "%g", d);
	default:
		return (size_t)snprintf(buf, cap, "-");
	}
}

int tr_agg_view_build(struct trawl_agg *a, struct one *o)
{
	size_t n = o->cells.n, nk = o->s->nkeys, i = 0, r = 0, used = 0, cap = 0;
	const void *key;
	void *val;

	if (!o->dirty && (o->rows || !n))
		return 0;
	tr_agg_view_release(o);
	o->dirty = false;
	if (!n)
		return 0;
	/* the key strings: one buffer, then pointers into it */
	while (tr_table_next(&o->cells, &i, &key, &val))
		for (size_t k = 0; k < nk; k++)
			cap += key_text(a, (const uint64_t *)key + 2 * k, NULL, 0) + 1;
	o->rows = calloc(n, sizeof(*o->rows) + nk * sizeof(char *));
	o->strs = malloc(cap + 1);
	if (!o->rows || !o->strs) {
		tr_agg_view_release(o);
		o->dirty = true;
		return -ENOMEM;
	}
	const char **ptrs = (const char **)(o->rows + n);
	for (i = 0; tr_table_next(&o->cells, &i, &key, &val); r++) {
		o->rows[r].key = key;
		o->rows[r].cell = val;
		o->rows[r].keys = ptrs + r * nk;
		for (size_t k = 0; k < nk; k++) {
			o->rows[r].keys[k] = o->strs + used;
			used += key_text(a, (const uint64_t *)key + 2 * k, o->strs + used, cap + 1 - used) + 1;
		}
	}
	sort_one = o;
	qsort(o->rows, n, sizeof(*o->rows), cmp_rows);
	o->nrows = o->s->top && o->s->top < n ? (size_t)o->s->top : n;
	return 0;
}

/* ------------------------------------------------------------- totals */

/* Adds cell b into t (nb buckets): counts and sums added, extremes, the
 * mean weighted by the counts, M2 merged (Chan, Golub and LeVeque). */
static void cell_merge(struct cell *t, const struct cell *b, size_t nb)
{
	if (!b->count)
		return;
	if (!t->count) {
		t->min = b->min;
		t->max = b->max;
	} else {
		t->min = b->min < t->min ? b->min : t->min;
		t->max = b->max > t->max ? b->max : t->max;
	}
	double n = (double)(t->count + b->count), d = b->mean - t->mean;
	t->m2 += b->m2 + d * d * (double)t->count * (double)b->count / n;
	t->mean += d * (double)b->count / n;
	t->count += b->count;
	t->sum += b->sum;
	for (size_t k = 0; k < nb; k++)
		t->buckets[k] += b->buckets[k];
}

int tr_agg_total(const struct one *o, struct cell **out)
{
	const struct tr_agg_stmt *s = o->s;
	size_t hk = 0, i = 0, nh = 0, caph = 0;
	uint64_t *hosts = NULL;
	const void *key;
	void *val;

	*out = NULL;
	while (hk < s->nkeys && s->key[hk].kind != TR_AGG_K_HOST)
		hk++;
	if (s->func == TR_AGG_HEATMAP || hk == s->nkeys || !o->cells.n)
		return 0;
	/* the hosts of the rows: a host key's value, (kind, id) */
	while (tr_table_next(&o->cells, &i, &key, &val)) {
		const uint64_t *k = (const uint64_t *)key + 2 * hk;
		size_t h = 0;
		while (h < nh && (hosts[2 * h] != k[0] || hosts[2 * h + 1] != k[1]))
			h++;
		if (h < nh)
			continue;
		if (nh == caph) {
			size_t cap = caph ? 2 * caph : 8;
			uint64_t *m = realloc(hosts, cap * 2 * sizeof(*m));
			if (!m) {
				free(hosts);
				return -ENOMEM;
			}
			hosts = m;
			caph = cap;
		}
		hosts[2 * nh] = k[0];
		hosts[2 * nh + 1] = k[1];
		nh++;
	}
	free(hosts);
	if (nh < 2)
		return 0;
	struct cell *t = calloc(1, sizeof(*t) + o->nbuckets * sizeof(uint64_t));
	if (!t)
		return -ENOMEM;
	for (i = 0; tr_table_next(&o->cells, &i, &key, &val);)
		cell_merge(t, val, o->nbuckets);
	*out = t;
	return (int)(nh > INT32_MAX ? INT32_MAX : nh);
}

size_t trawl_agg_n(const struct trawl_agg *a)
{
	return a->n;
}

const char *trawl_agg_text(const struct trawl_agg *a, size_t i)
{
	return i < a->n ? a->aggs[i].s->text : NULL;
}

size_t trawl_agg_nkeys(const struct trawl_agg *a, size_t i)
{
	return i < a->n ? a->aggs[i].s->nkeys : 0;
}

const char *trawl_agg_key_name(const struct trawl_agg *a, size_t i, size_t k)
{
	return i < a->n && k < a->aggs[i].s->nkeys ? a->aggs[i].s->key[k].name : NULL;
}

size_t trawl_agg_nrows(struct trawl_agg *a, size_t i)
{
	if (i >= a->n || tr_agg_view_build(a, &a->aggs[i]) < 0)
		return 0;
	return a->aggs[i].nrows;
}

int trawl_agg_row(struct trawl_agg *a, size_t i, size_t r, struct trawl_agg_row *row)
{
	if (i >= a->n)
		return -ERANGE;
	struct one *o = &a->aggs[i];
	int rc = tr_agg_view_build(a, o);
	if (rc < 0)
		return rc;
	if (r >= o->nrows)
		return -ERANGE;
	const struct cell *c = o->rows[r].cell;
	struct trawl_agg_row out = {
		.sz = sizeof(out), .key = o->rows[r].keys, .count = c->count, .sum = c->sum,
		.min = c->min, .max = c->max, .avg = c->mean,
		.stddev = c->count ? sqrt(c->m2 / (double)c->count) : 0,
		.buckets = o->nbuckets ? c->buckets : NULL, .nbuckets = o->nbuckets,
	};
	memcpy(row, &out, row->sz && row->sz < sizeof(out) ? row->sz : sizeof(out));
	return 0;
}

int64_t trawl_agg_bucket_low(const struct trawl_agg *a, size_t i, size_t b)
{
	const struct tr_agg_stmt *s = a->aggs[i].s;
	switch (s->func) {
	case TR_AGG_LHIST:
		return tr_agg_lin_low(s->param, b);
	case TR_AGG_LLHIST:
		return tr_agg_ll_low(s->param, b);
	default:
		return tr_agg_log2_low(b);
	}
}

int64_t trawl_agg_bucket_high(const struct trawl_agg *a, size_t i, size_t b)
{
	const struct one *o = &a->aggs[i];
	/* log2 (hist, heatmap): the bucket after [2^62, 2^63) would begin at
	 * 2^63, past int64 */
	size_t nb = o->s->func == TR_AGG_LHIST || o->s->func == TR_AGG_LLHIST ?
		    o->nbuckets : TR_AGG_LOG2_BUCKETS - 1;
	return b + 1 < nb ? trawl_agg_bucket_low(a, i, b + 1) : INT64_MAX;
}

bool tr_agg_heat_closing(const struct trawl_agg *a, size_t i, size_t *c)
{
	const struct heat *h = &a->aggs[i].heat;
	if (!a->closing || !h->width || a->closing_col < h->t0)
		return false;
	size_t k = (size_t)((a->closing_col - h->t0) / h->width);
	if (k < h->first || k >= h->ncols)
		return false;
	*c = k - h->first;
	return true;
}

size_t trawl_agg_heat_ncols(const struct trawl_agg *a, size_t i)
{
	if (i >= a->n || a->aggs[i].s->func != TR_AGG_HEATMAP)
		return 0;
	return a->aggs[i].heat.ncols - a->aggs[i].heat.first;
}

int64_t trawl_agg_heat_col_begin(const struct trawl_agg *a, size_t i, size_t c)
{
	const struct heat *h = &a->aggs[i].heat;
	return h->t0 + (int64_t)(h->first + c) * h->width;
}

int64_t trawl_agg_heat_col_width(const struct trawl_agg *a, size_t i)
{
	return a->aggs[i].heat.width;
}

uint64_t trawl_agg_heat_cell(const struct trawl_agg *a, size_t i, size_t c, size_t b)
{
	const struct heat *h = &a->aggs[i].heat;
	if (i >= a->n || c >= h->ncols - h->first || b >= TR_AGG_LOG2_BUCKETS)
		return 0;
	return h->cells[c * TR_AGG_LOG2_BUCKETS + b];
}

/* ------------------------------------------------------------- output */

struct out {
	char *p;
	size_t n, cap;
	int err;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = o->cap - o->n;
		va_start(ap, fmt);
		int l = vsnprintf(o->p ? o->p + o->n : NULL, room, fmt, ap);
		va_end(ap);
		if (l < 0)
			return;
		if ((size_t)l < room) {
			o->n += (size_t)l;
			return;
		}
		size_t cap = (o->cap + (size_t)l + 1) * 2;
		char *np = realloc(o->p, cap);
		if (!np) {
			o->err = -ENOMEM;
			return;
		}
		o->p = np;
		o->cap = cap;
	}
}

static int flush(struct out *o, int fd)
{
	int rc = o->err ? o->err : tr_write_all(fd, o->p, o->n);
	free(o->p);
	return rc;
}

/* 1024-based, as bpftrace labels its buckets: 512, 1K, 2M. */
static void size_label(char *buf, size_t cap, int64_t v)
{
	static const char sfx[] = "KMGTPE";
	int i = -1;
	if (v == INT64_MIN) {
		snprintf(buf, cap, "...");
		return;
	}
	while (v >= 1024 && v % 1024 == 0 && i < 5) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, cap, "%lld", (long long)v);
	else
		snprintf(buf, cap, "%lld%c", (long long)v, sfx[i]);
}

/* A duration in ns for people: 512 ns, 1.0 us, 4.2 ms, 1.1 s. */
static void time_label(char *buf, size_t cap, double ns)
{
	if (ns < 1000)
		snprintf(buf, cap, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, cap, "%.3g us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, cap, "%.3g ms", ns / 1e6);
	else
		snprintf(buf, cap, "%.3g s", ns / 1e9);
}

/* The widths of the key columns: each its longest string, at least 8 (at
 * most 64); a total's label (when not NULL) spans them all, the last
 * widened for it. */
static void key_widths(const struct one *o, const char *total, int *w)
{
	size_t nk = o->s->nkeys;
	int span = 0;
	for (size_t k = 0; k < nk; k++) {
		size_t wd = strlen(o->s->key[k].name);
		for (size_t r = 0; r < o->nrows; r++)
			if (strlen(o->rows[r].keys[k]) > wd)
				wd = strlen(o->rows[r].keys[k]);
		w[k] = wd < 8 ? 8 : wd > 64 ? 64 : (int)wd;
		span += w[k] + (k ? 2 : 0);
	}
	if (total && nk && (int)strlen(total) > span)
		w[nk - 1] += (int)strlen(total) - span;
}

static void key_header(struct out *w, const struct one *o, const int *wd)
{
	for (size_t k = 0; k < o->s->nkeys; k++)
		put(w, "  %-*s", wd[k], o->s->key[k].name);
}

static void key_cols(struct out *w, const struct one *o, const struct view_row *r, const int *wd)
{
	for (size_t k = 0; k < o->s->nkeys; k++)
		put(w, "  %-*s", wd[k], r->keys[k]);
}

/* The total's label in the key columns (all of them spanned). */
static void total_cols(struct out *w, const struct one *o, const char *label, const int *wd)
{
	int span = 0;
	for (size_t k = 0; k < o->s->nkeys; k++)
		span += wd[k] + (k ? 2 : 0);
	put(w, "  %-*s", span, label);
}

static void hist_text(struct out *w, struct trawl_agg *a, size_t i, const struct cell *c)
{
	const struct one *o = &a->aggs[i];
	size_t lo = SIZE_MAX, hi = 0;
	uint64_t max = 0;

	for (size_t b = 0; b < o->nbuckets; b++)
		if (c->buckets[b]) {
			if (lo == SIZE_MAX)
				lo = b;
			hi = b;
			if (c->buckets[b] > max)
				max = c->buckets[b];
		}
	if (lo == SIZE_MAX)
		return;
	for (size_t b = lo; b <= hi; b++) {
		char l1[32], l2[32], range[72];
		int64_t low = trawl_agg_bucket_low(a, i, b);
		int64_t next = trawl_agg_bucket_high(a, i, b);
		if (o->s->func == TR_AGG_HIST && b == 1)
			snprintf(range, sizeof(range), "[0]");
		else if (low == INT64_MIN) {
			size_label(l2, sizeof(l2), next);
			snprintf(range, sizeof(range), "(..., %s)", l2);
		} else if (next == INT64_MAX) {
			size_label(l1, sizeof(l1), low);
			snprintf(range, sizeof(range), "[%s, ...)", l1);
		} else {
			size_label(l1, sizeof(l1), low);
			size_label(l2, sizeof(l2), next);
			snprintf(range, sizeof(range), "[%s, %s)", l1, l2);
		}
		int bar = (int)((c->buckets[b] * 52 + max - 1) / max);
		put(w, "%-20s %8llu |%.*s%*s|\n", range, (unsigned long long)c->buckets[b], bar,
		    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", 52 - bar, "");
	}
}

static const char *const shades[] = { " ", "\u2591", "\u2592", "\u2593", "\u2588" };

static int shade(uint64_t c, uint64_t max)
{
	if (!c)
		return 0;
	if (max <= 1)
		return 4;
	int l = 1 + (int)(3.0 * log((double)c) / log((double)max) + 0.5);
	return l > 4 ? 4 : l;
}

/* The least count of shade l (for the legend). */
static uint64_t shade_from(int l, uint64_t max)
{
	if (l <= 1 || max <= 1)
		return 1;
	return (uint64_t)ceil(exp(((double)l - 1.5) / 3.0 * log((double)max)));
}

static void heat_range(const struct one *o, size_t *lo, size_t *hi)
{
	const struct heat *h = &o->heat;
	if (o->s->nparam == 2) {
		*lo = tr_agg_log2_bucket(o->s->param[0]);
		*hi = tr_agg_log2_bucket(o->s->param[1] - 1);
		return;
	}
	if (h->lo || h->hi) {
		*lo = h->lo;
		*hi = h->hi;
		return;
	}
	*lo = SIZE_MAX;
	*hi = 0;
	for (size_t c = 0; c < h->ncols - h->first; c++)
		for (size_t b = 0; b < TR_AGG_LOG2_BUCKETS; b++)
			if (h->cells[c * TR_AGG_LOG2_BUCKETS + b]) {
				if (b < *lo)
					*lo = b;
				if (b > *hi)
					*hi = b;
			}
	if (*lo == SIZE_MAX) {
		*lo = 12;	/* 1 us .. 1 s: nothing yet */
		*hi = 32;
	}
}

static void clock_label(char *buf, size_t cap, int64_t ts)
{
	time_t s = (time_t)(ts / 1000000000);
	struct tm tm;
	gmtime_r(&s, &tm);
	snprintf(buf, cap, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(ts % 1000000000 / 1000000));
}

/* One line of a heat map: column c's time, its cells, its total. */
static void heat_line(struct out *w, struct one *o, size_t c, size_t lo, size_t hi, uint64_t max)
{
	const struct heat *h = &o->heat;
	const uint64_t *cells = h->cells + c * TR_AGG_LOG2_BUCKETS;
	char t[32];
	uint64_t total = 0;

	clock_label(t, sizeof(t), h->t0 + (int64_t)(h->first + c) * h->width);
	put(w, "%s |", t);
	for (size_t b = 0; b < TR_AGG_LOG2_BUCKETS; b++)
		total += cells[b];
	for (size_t b = lo; b <= hi; b++) {
		uint64_t n = cells[b];
		/* clamped: what is outside the range goes to its edges */
		if (b == lo)
			for (size_t x = 0; x < lo; x++)
				n += cells[x];
		if (b == hi)
			for (size_t x = hi + 1; x < TR_AGG_LOG2_BUCKETS; x++)
				n += cells[x];
		const char *s = shades[shade(n, max)];
		put(w, "%s%s%s", s, s, s);
	}
	put(w, "| %llu\n", (unsigned long long)total);
}

static void heat_header(struct out *w, const struct one *o, size_t lo, size_t hi, uint64_t max)
{
	char l[32], wd[32];
	time_label(wd, sizeof(wd), (double)o->heat.width);
	put(w, "  one line per %s (UTC); across: log2 buckets of the value; shades: ", wd);
	if (!max) {
		put(w, "%s to %s, log scale up to the line's largest cell\n", shades[1], shades[4]);
		goto labels;
	}
	for (int s = 1; s <= 4; s++)
		put(w, "%s >= %llu%s", shades[s], (unsigned long long)shade_from(s, max),
		    s < 4 ? ", " : "\n");
labels:
	put(w, "%12s  ", "");
	for (size_t b = lo; b <= hi; b++) {
		if ((b - lo) % 2 == 0) {
			size_label(l, sizeof(l), tr_agg_log2_low(b));
			put(w, "%-6.6s", l);
		}
	}
	put(w, "\n");
}

static void heat_text(struct out *w, struct trawl_agg *a, size_t i)
{
	struct one *o = &a->aggs[i];
	struct heat *h = &o->heat;
	size_t lo, hi, ncols = h->ncols - h->first;

	for (size_t c = 0; c < ncols; c++)
		for (size_t b = 0; b < TR_AGG_LOG2_BUCKETS; b++)
			if (h->cells[c * TR_AGG_LOG2_BUCKETS + b] > h->max)
				h->max = h->cells[c * TR_AGG_LOG2_BUCKETS + b];
	if (a->closing) {
		/* one interval: its line; the range fixed by the first */
		if (!h->header) {
			heat_range(o, &lo, &hi);
			if (o->s->nparam != 2 && lo == hi)
				hi = lo + 1;
			h->lo = lo;
			h->hi = hi;
			heat_header(w, o, lo, hi, 0);
			h->header = true;
		}
		if (!h->width || a->closing_col < h->t0)
			return;		/* nothing yet */
		size_t c;
		if (tr_agg_heat_closing(a, i, &c)) {
			uint64_t lmax = 0;
			for (size_t b = 0; b < TR_AGG_LOG2_BUCKETS; b++)
				if (h->cells[c * TR_AGG_LOG2_BUCKETS + b] > lmax)
					lmax = h->cells[c * TR_AGG_LOG2_BUCKETS + b];
			heat_line(w, o, c, h->lo, h->hi, lmax);
		}
		else
			put(w, "%12s |%*s| 0\n", "", (int)(3 * (h->hi - h->lo + 1)), "");
		return;
	}
	heat_range(o, &lo, &hi);
	heat_header(w, o, lo, hi, h->max);
	for (size_t c = 0; c < ncols; c++)
		heat_line(w, o, c, lo, hi, h->max);
}

/* A table row's figures (the function's, or stats' all). */
static void figures_text(struct out *w, const struct one *o, const struct cell *c)
{
	const struct tr_agg_stmt *s = o->s;
	if (s->func == TR_AGG_STATS)
		put(w, "  %10llu %14.0f %12.0f %14.1f %12.0f %14.1f\n", (unsigned long long)c->count,
		    c->sum, c->min, c->mean, c->max, sqrt(c->m2 / (double)c->count));
	else if (s->func == TR_AGG_COUNT)
		put(w, "  %14llu\n", (unsigned long long)c->count);
	else if (s->func == TR_AGG_AVG || s->func == TR_AGG_STDDEV)
		put(w, "  %14.1f\n", tr_agg_value_of(o, c));
	else
		put(w, "  %14.0f\n", tr_agg_value_of(o, c));
}

/* A histogram's line above its buckets: its key (or label), its figures. */
static void hist_head(struct out *w, const struct one *o, const char *const *keys,
		      const char *label, const struct cell *c)
{
	const struct tr_agg_stmt *s = o->s;
	if (label)
		put(w, "%s", label);
	else
		for (size_t k = 0; k < s->nkeys; k++)
			put(w, "%s%s = %s", k ? ", " : "", s->key[k].name, keys[k]);
	put(w, "%scount %llu, avg %.1f, min %.0f, max %.0f\n", label || s->nkeys ? ": " : "",
	    (unsigned long long)c->count, c->mean, c->min, c->max);
}

int trawl_agg_write_text(struct trawl_agg *a, int fd)
{
	struct out w = { 0 };

	for (size_t i = 0; i < a->n; i++) {
		struct one *o = &a->aggs[i];
		const struct tr_agg_stmt *s = o->s;
		int rc;

		if (!a->closing || s->func != TR_AGG_HEATMAP || !o->heat.header)
			put(&w, "%s\n", s->text);
		if (s->func == TR_AGG_HEATMAP) {
			heat_text(&w, a, i);
			continue;
		}
		if ((rc = tr_agg_view_build(a, o)) < 0)
			w.err = rc;
		/* rows of several hosts: the cluster's figure, an explicit sum */
		struct cell *tot = NULL;
		char label[48] = "";
		int nh = tr_agg_total(o, &tot);
		if (nh < 0)
			w.err = nh;
		else if (tot)
			snprintf(label, sizeof(label), "total (%d hosts)", nh);
		if (o->nbuckets) {
			for (size_t r = 0; r < o->nrows; r++) {
				const struct view_row *vr = &o->rows[r];
				hist_head(&w, o, vr->keys, NULL, vr->cell);
				hist_text(&w, a, i, vr->cell);
			}
			if (tot) {
				hist_head(&w, o, NULL, label, tot);
				hist_text(&w, a, i, tot);
			}
			put(&w, "\n");
			free(tot);
			continue;
		}
		int wd[TR_AGG_MAX_KEYS];
		key_widths(o, tot ? label : NULL, wd);
		key_header(&w, o, wd);
		if (s->func == TR_AGG_STATS)
			put(&w, "  %10s %14s %12s %14s %12s %14s\n", "count", "sum", "min", "avg", "max",
			    "stddev");
		else
			put(&w, "  %14s\n", tr_agg_func_name(s->func));
		for (size_t r = 0; r < o->nrows; r++) {
			key_cols(&w, o, &o->rows[r], wd);
			figures_text(&w, o, o->rows[r].cell);
		}
		if (tot) {
			total_cols(&w, o, label, wd);
			figures_text(&w, o, tot);
		}
		free(tot);
		put(&w, "\n");
	}
	return flush(&w, fd);
}

/* ------------------------------------------------------------- SVG */

/* Yellow to dark red (ColorBrewer's YlOrRd ends) by f in [0, 1]. */
static void color(char *buf, size_t cap, double f)
{
	static const int stops[][3] = { { 255, 255, 178 }, { 253, 141, 60 }, { 189, 0, 38 } };
	double x = f * 2;
	int i = x >= 2 ? 1 : (int)x;
	double t = x - i;
	int rgb[3];
	for (int k = 0; k < 3; k++)
		rgb[k] = (int)(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * t + 0.5);
	snprintf(buf, cap, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static double heat_frac(uint64_t n, uint64_t max)
{
	return max <= 1 ? 1 : log((double)n) / log((double)max);
}

static void xml_text(struct out *w, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			put(w, "&lt;");
		else if (*s == '>')
			put(w, "&gt;");
		else if (*s == '&')
			put(w, "&amp;");
		else
			put(w, "%c", *s);
	}
}

int trawl_agg_write_svg(struct trawl_agg *a, size_t i, int fd)
{
	if (i >= a->n || a->aggs[i].s->func != TR_AGG_HEATMAP)
		return -EINVAL;
	struct one *o = &a->aggs[i];
	const struct heat *h = &o->heat;
	size_t ncols = h->ncols - h->first, lo, hi;
	struct out w = { 0 };
	uint64_t max = 0;
	char buf[64], col[16];

	heat_range(o, &lo, &hi);
	for (size_t c = 0; c < ncols; c++)
		for (size_t b = 0; b < TR_AGG_LOG2_BUCKETS; b++)
			if (h->cells[c * TR_AGG_LOG2_BUCKETS + b] > max)
				max = h->cells[c * TR_AGG_LOG2_BUCKETS + b];
	size_t nrows = hi - lo + 1;
	double cw = ncols ? 800.0 / (double)ncols : 800, ch = nrows > 30 ? 12 : 18;
	if (cw > 40)
		cw = 40;
	double left = 90, top = 50, pw = cw * (double)(ncols ? ncols : 1), ph = ch * (double)nrows;
	double width = left + pw + 150, height = top + ph + 70;

	put(&w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	put(&w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	    "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
	    width, height, width, height);
	put(&w, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	put(&w, "<text class=\"title\" x=\"%.0f\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", left);
	xml_text(&w, o->s->text);
	put(&w, "</text>\n");
	/* the plot: empty cells light grey */
	put(&w, "<rect class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
	    "fill=\"#f4f4f4\" stroke=\"#444\"/>\n", left, top, pw, ph);
	for (size_t c = 0; c < ncols; c++) {
		const uint64_t *cells = h->cells + c * TR_AGG_LOG2_BUCKETS;
		for (size_t b = lo; b <= hi; b++) {
			uint64_t n = cells[b];
			if (b == lo)
				for (size_t x = 0; x < lo; x++)
					n += cells[x];
			if (b == hi)
				for (size_t x = hi + 1; x < TR_AGG_LOG2_BUCKETS; x++)
					n += cells[x];
			if (!n)
				continue;
			color(col, sizeof(col), heat_frac(n, max));
			put(&w, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			    "fill=\"%s\"><title>%llu</title></rect>\n", left + cw * (double)c,
			    top + ch * (double)(hi - b), cw, ch, col, (unsigned long long)n);
		}
	}
	/* y: the buckets' lower bounds */
	for (size_t b = lo; b <= hi; b++) {
		int64_t low = tr_agg_log2_low(b);
		if (low == INT64_MIN)
			snprintf(buf, sizeof(buf), "< 0");
		else if (o->s->value == TR_AGG_V_LAT)
			time_label(buf, sizeof(buf), (double)low);
		else
			size_label(buf, sizeof(buf), low);
		put(&w, "<text class=\"ylabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
		    "dominant-baseline=\"middle\">%s%s</text>\n", left - 6,
		    top + ch * (double)(hi - b) + ch / 2, b == lo && lo ? "\u2264 " : "", buf);
	}
	put(&w, "<text class=\"axis\" transform=\"translate(16 %.1f) rotate(-90)\" "
	    "text-anchor=\"middle\">%s</text>\n", top + ph / 2,
	    o->s->value == TR_AGG_V_LAT ? "latency (log2 buckets, lower bound)" :
	    "value (log2 buckets, lower bound)");
	/* x: about 8 time labels, seconds from the first column */
	size_t every = ncols > 8 ? (ncols + 7) / 8 : 1;
	for (size_t c = 0; c <= ncols; c += every) {
		double x = left + cw * (double)c;
		if (c)
			time_label(buf, sizeof(buf), (double)((int64_t)c * h->width));
		else
			snprintf(buf, sizeof(buf), "0");
		put(&w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
		    x, top + ph, x, top + ph + 5);
		put(&w, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s%s</text>\n",
		    x, top + ph + 18, c ? "+" : "", buf);
	}
	clock_label(buf, sizeof(buf), h->t0 + (int64_t)h->first * h->width);
	char wd[32];
	time_label(wd, sizeof(wd), (double)h->width);
	put(&w, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time from %s UTC "
	    "(columns of %s)</text>\n", left + pw / 2, top + ph + 40, buf, wd);
	/* the legend: 6 swatches, counts on a log scale */
	double lx = left + pw + 30;
	put(&w, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">events</text>\n", lx, top - 6);
	for (int k = 0; k < 6; k++) {
		double f = 1 - k / 5.0;
		uint64_t n = max <= 1 ? 1 : (uint64_t)llround(exp(f * log((double)max)));
		color(col, sizeof(col), f);
		put(&w, "<rect class=\"swatch\" x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"18\" "
		    "fill=\"%s\" stroke=\"#444\"/>\n", lx, top + 22.0 * k, col);
		put(&w, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\" dominant-baseline=\"middle\">"
		    "%llu</text>\n", lx + 24, top + 22.0 * k + 9, (unsigned long long)n);
	}
	put(&w, "</svg>\n");
	return flush(&w, fd);
}
