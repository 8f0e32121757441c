/* SPDX-License-Identifier: MIT */
/*
 * lib/analysis/report.c - an analysis' slice as text (tables, bpftrace-style
 * log2 histograms, the longest samples, the log) or as one JSON object,
 * written to a descriptor (trawl_analysis_report()). Durations in
 * microseconds with three decimals, as lttng-analyses prints them; the
 * stddev is the sample's (n - 1), "?" for one sample.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <trawl/analysis.h>

#include "internal.h"
#include "analysis/analysis-internal.h"
#include "util/json.h"

static double avg(const struct trawl_analysis_row *r)
{
	return r->count ? (double)r->sum / (double)r->count : 0;
}

static double stddev(const struct trawl_analysis_row *r)
{
	if (r->count < 2)
		return NAN;
	double m = avg(r), v = (r->sumsq - (double)r->count * m * m) / (double)(r->count - 1);
	return v > 0 ? sqrt(v) : 0;
}

/* "HH:MM:SS.nnnnnnnnn"; a time before 1970 (impossible: a corrupt timestamp
 * or clock offset) with its date, so that it shows ("1677-09-21 ..."), and
 * its nanoseconds counted forward from its second, never negative. */
static void clock_str(char *buf, size_t cap, int64_t ns, bool gmt)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;
	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	time_t s = (time_t)sec;
	struct tm tm;
	if (!(gmt ? gmtime_r(&s, &tm) : localtime_r(&s, &tm))) {
		snprintf(buf, cap, "%lld ns", (long long)ns);
		return;
	}
	if (ns < 0)
		snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d.%09lld", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (long long)frac);
	else
		snprintf(buf, cap, "%02d:%02d:%02d.%09lld", tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (long long)frac);
}

static int by_sum(const void *x, const void *y)
{
	const struct trawl_analysis_row *a = *(const struct trawl_analysis_row *const *)x,
					*b = *(const struct trawl_analysis_row *const *)y;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->sum != b->sum)
		return a->sum > b->sum ? -1 : 1;
	int h = strcmp(a->host, b->host);
	return h ? h : (a->id < b->id ? -1 : a->id > b->id);
}

static int by_count(const void *x, const void *y)
{
	const struct trawl_analysis_row *a = *(const struct trawl_analysis_row *const *)x,
					*b = *(const struct trawl_analysis_row *const *)y;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	int h = strcmp(a->host, b->host);
	return h ? h : (a->id < b->id ? -1 : a->id > b->id);
}

/* --by host: a kind's rows host by host, each host's by the metric */
static bool sort_cputop;

static int by_host_metric(const void *x, const void *y)
{
	const struct trawl_analysis_row *a = *(const struct trawl_analysis_row *const *)x,
					*b = *(const struct trawl_analysis_row *const *)y;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	int h = strcmp(a->host, b->host);
	if (h)
		return h;
	return sort_cputop ? by_sum(x, y) : by_count(x, y);
}

static int by_dur(const void *x, const void *y)
{
	const struct trawl_analysis_sample *a = *(const struct trawl_analysis_sample *const *)x,
					   *b = *(const struct trawl_analysis_sample *const *)y;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int by_host_dur(const void *x, const void *y)
{
	const struct trawl_analysis_sample *a = *(const struct trawl_analysis_sample *const *)x,
					   *b = *(const struct trawl_analysis_sample *const *)y;
	int h = strcmp(a->host, b->host);
	return h ? h : by_dur(x, y);
}

static int by_ts(const void *x, const void *y)
{
	const struct trawl_analysis_sample *a = *(const struct trawl_analysis_sample *const *)x,
					   *b = *(const struct trawl_analysis_sample *const *)y;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->dur < b->dur ? -1 : a->dur > b->dur;
}

static const char *kind_title(enum trawl_analysis_row_kind k)
{
	switch (k) {
	case TRAWL_ANALYSIS_THREAD: return "thread";
	case TRAWL_ANALYSIS_CPU: return "cpu";
	case TRAWL_ANALYSIS_SYSCALL: return "syscall";
	case TRAWL_ANALYSIS_HARDIRQ: return "hardirq";
	case TRAWL_ANALYSIS_SOFTIRQ: return "softirq";
	case TRAWL_ANALYSIS_DISK: return "disk";
	case TRAWL_ANALYSIS_PREEMPT: return "preempted";
	case TRAWL_ANALYSIS_PROCESS: return "process";
	}
	return "?";
}

/* Rows with an errors column: syscalls, disks, processes (their I/O). */
static bool has_errors(enum trawl_analysis_row_kind k)
{
	return k == TRAWL_ANALYSIS_SYSCALL || k == TRAWL_ANALYSIS_DISK || k == TRAWL_ANALYSIS_PROCESS;
}

static void us(FILE *f, int64_t ns)
{
	fprintf(f, " %12.3f", (double)ns / 1000.0);
}

static void hist_text(FILE *f, const struct trawl_analysis_row *r)
{
	unsigned lo = TRAWL_ANALYSIS_HIST, hi = 0;
	uint64_t top = 0;
	for (unsigned b = 0; b < TRAWL_ANALYSIS_HIST; b++)
		if (r->hist[b]) {
			lo = b < lo ? b : lo;
			hi = b;
			top = r->hist[b] > top ? r->hist[b] : top;
		}
	if (!top)
		return;
	fprintf(f, "@%s[%s%s%s]: (us)\n", kind_title(r->kind), r->host, *r->host ? " " : "",
		r->label);
	for (unsigned b = lo; b <= hi; b++) {
		char range[48];
		if (b == 0)
			snprintf(range, sizeof(range), "[0, 1)");
		else
			snprintf(range, sizeof(range), "[%llu, %llu)", 1ull << (b - 1), 1ull << b);
		unsigned w = (unsigned)((r->hist[b] * 52 + top - 1) / top);
		char bar[53];
		memset(bar, '@', w);
		memset(bar + w, ' ', 52 - w);
		bar[52] = 0;
		fprintf(f, "%-20s %8llu |%s|\n", range, (unsigned long long)r->hist[b], bar);
	}
	fputc('\n', f);
}

/* ------------------------------------------------------- totals */

/*
 * A cluster's figure is an explicit sum: every row is one host's (a tid,
 * a CPU, a syscall of that host), and a kind whose rows come from more
 * than one host gets a total, its rows merged (counts, sums, extremes,
 * histograms), in the text (a "total" line) and the JSON ("totals").
 */
struct total {
	struct trawl_analysis_row r;
	size_t nhosts;			/* the hosts its rows come from */
};

#define NKINDS (TRAWL_ANALYSIS_PROCESS + 1)

static void total_init(struct trawl_analysis_row *t, enum trawl_analysis_row_kind k)
{
	memset(t, 0, sizeof(*t));
	t->kind = k;
	t->host = "all";
	t->min = INT64_MAX;
	t->max = INT64_MIN;
	t->prio = INT32_MIN;
}

static void total_add(struct trawl_analysis_row *t, const struct trawl_analysis_row *r)
{
	t->count += r->count;
	t->errors += r->errors;
	if (__builtin_add_overflow(t->sum, r->sum, &t->sum))	/* saturates, as row_add() */
		t->sum = r->sum > 0 ? INT64_MAX : INT64_MIN;
	t->sumsq += r->sumsq;
	t->min = r->min < t->min ? r->min : t->min;
	t->max = r->max > t->max ? r->max : t->max;
	t->bytes += r->bytes;
	t->read_bytes += r->read_bytes;
	t->write_bytes += r->write_bytes;
	for (unsigned b = 0; b < TRAWL_ANALYSIS_HIST; b++)
		t->hist[b] += r->hist[b];
}

/* tot[kind]: rows sorted by kind and host (hosts counted at each change). */
static void totals(struct total *tot, const struct trawl_analysis_row **hrows, size_t nr)
{
	for (int k = 0; k < NKINDS; k++) {
		total_init(&tot[k].r, (enum trawl_analysis_row_kind)k);
		tot[k].nhosts = 0;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct trawl_analysis_row *r = hrows[i];
		if ((unsigned)r->kind >= NKINDS)
			continue;
		struct total *t = &tot[r->kind];
		if (!i || hrows[i - 1]->kind != r->kind || strcmp(hrows[i - 1]->host, r->host))
			t->nhosts++;
		total_add(&t->r, r);
	}
	for (int k = 0; k < NKINDS; k++)
		snprintf(tot[k].r.label, sizeof(tot[k].r.label), "total (%zu hosts)", tot[k].nhosts);
}

#define MAX_HOST_COLUMNS 8

static int by_name(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void pivot_cell(FILE *f, const struct trawl_analysis_row *c, bool cputop, int64_t dur)
{
	if (!c)
		fprintf(f, cputop ? " | %9s %22s" : " | %8s %11s %11s", "-", "-", "-");
	else if (cputop)
		fprintf(f, " | %7.2f %% %22.3f", dur > 0 ? 100.0 * (double)c->sum / (double)dur : 0.0,
			(double)c->sum / 1e6);
	else
		fprintf(f, " | %8llu %11.3f %11.3f", (unsigned long long)c->count, avg(c) / 1000.0,
			(double)c->max / 1000.0);
}

/*
 * --by host: one line per row label, one column group per host (the
 * hosts side by side): count, avg and max (cputop: share and time), and a
 * kind's total line, each host's rows merged. Rows are in rows' order
 * (the top first, whichever host). 0, or -1 when there are more hosts
 * than columns (then the rows are listed host by host).
 */
static int stats_by_host(FILE *f, const struct trawl_analysis_row **rows, size_t nr, bool cputop,
			 int64_t dur)
{
	const char *hosts[MAX_HOST_COLUMNS];
	size_t nh = 0;
	for (size_t i = 0; i < nr; i++) {
		size_t h = 0;
		while (h < nh && strcmp(hosts[h], rows[i]->host))
			h++;
		if (h == nh) {
			if (nh == MAX_HOST_COLUMNS)
				return -1;
			hosts[nh++] = rows[i]->host;
		}
	}
	qsort(hosts, nh, sizeof(*hosts), by_name);	/* the columns in the hosts' order */
	for (size_t i = 0; i < nr; i++) {
		const struct trawl_analysis_row *r = rows[i];
		if (!i || rows[i - 1]->kind != r->kind) {
			fprintf(f, "\n%-28s", kind_title(r->kind));
			for (size_t h = 0; h < nh; h++)
				fprintf(f, " | %-32.32s", hosts[h]);
			fprintf(f, "\n%-28s", "");
			for (size_t h = 0; h < nh; h++)
				fprintf(f, cputop ? " | %9s %22s" : " | %8s %11s %11s", cputop ? "usage" : "count",
					cputop ? "time (ms)" : "avg (us)", "max (us)");
			fputc('\n', f);
		}
		/* a label's first row prints the line */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = rows[j]->kind == r->kind && !strcmp(rows[j]->label, r->label);
		if (!seen) {
			fprintf(f, "%-28s", r->label);
			for (size_t h = 0; h < nh; h++) {
				const struct trawl_analysis_row *c = NULL;
				for (size_t j = i; j < nr && !c; j++)
					if (rows[j]->kind == r->kind && !strcmp(rows[j]->label, r->label) &&
					    !strcmp(rows[j]->host, hosts[h]))
						c = rows[j];
				pivot_cell(f, c, cputop, dur);
			}
			fputc('\n', f);
		}
		if (i + 1 < nr && rows[i + 1]->kind == r->kind)
			continue;
		/* the kind's last row: each host's total */
		fprintf(f, "%-28s", "total");
		for (size_t h = 0; h < nh; h++) {
			struct trawl_analysis_row t;
			total_init(&t, r->kind);
			for (size_t j = 0; j < nr; j++)
				if (rows[j]->kind == r->kind && !strcmp(rows[j]->host, hosts[h]))
					total_add(&t, rows[j]);
			pivot_cell(f, t.count ? &t : NULL, cputop, dur);
		}
		fputc('\n', f);
	}
	return 0;
}

static void sample_text(FILE *f, const struct trawl_analysis_sample *s, bool gmt)
{
	char t[32];
	clock_str(t, sizeof(t), s->ts, gmt);
	fprintf(f, "[%s]", t);
	us(f, s->dur);
	fprintf(f, "  %-10s %4u  %-16s %8lld  %s %s", *s->host ? s->host : "-", s->cpu, s->comm,
		(long long)s->tid, kind_title(s->row->kind), s->row->label);
	if (s->row->kind == TRAWL_ANALYSIS_SYSCALL)
		fprintf(f, " = %lld", (long long)s->ret);
	if (s->bytes)
		fprintf(f, "  %llu B", (unsigned long long)s->bytes);
	fputc('\n', f);
}

/* A kind's table header (the flat listing). */
static void row_header(FILE *f, const struct trawl_analysis_row *r, bool cputop, bool io)
{
	if (cputop) {
		fprintf(f, "\n%-10s %-32s %9s %14s\n", "host", kind_title(r->kind), "usage",
			"time (ms)");
		return;
	}
	fprintf(f, "\n%-10s %-28s %8s %12s %12s %12s %12s%s%s%s\n", "host", kind_title(r->kind),
		"count", "min (us)", "avg (us)", "max (us)", "stdev (us)",
		has_errors(r->kind) ? "   errors" : "",
		r->kind == TRAWL_ANALYSIS_DISK || io || (r->kind == TRAWL_ANALYSIS_THREAD && r->bytes) ?
			"        bytes" : "",
		r->kind == TRAWL_ANALYSIS_PROCESS ? "     read (B)    write (B)" : "");
}

/* A row of the flat listing (a total: host "all"). */
static void row_text(FILE *f, const struct trawl_analysis_row *r, bool cputop, bool io, int64_t dur)
{
	const char *host = *r->host ? r->host : "-";
	if (cputop) {
		fprintf(f, "%-10s %-32s %8.2f %% %14.3f\n", host, r->label,
			dur > 0 ? 100.0 * (double)r->sum / (double)dur : 0.0, (double)r->sum / 1e6);
		return;
	}
	fprintf(f, "%-10s %-28s %8llu", host, r->label, (unsigned long long)r->count);
	us(f, r->count ? r->min : 0);
	fprintf(f, " %12.3f", avg(r) / 1000.0);
	us(f, r->count ? r->max : 0);
	if (r->count > 1)
		fprintf(f, " %12.3f", stddev(r) / 1000.0);
	else
		fprintf(f, " %12s", "?");
	if (has_errors(r->kind))
		fprintf(f, " %8llu", (unsigned long long)r->errors);
	if (r->bytes || io)
		fprintf(f, " %12llu", (unsigned long long)r->bytes);
	if (r->kind == TRAWL_ANALYSIS_PROCESS)
		fprintf(f, " %12llu %12llu", (unsigned long long)r->read_bytes,
			(unsigned long long)r->write_bytes);
	if (r->prio != INT32_MIN)
		fprintf(f, "  prio %d", r->prio);
	fputc('\n', f);
}

/* io: iolatency's, every row with its bytes (as the text), none too;
 * nhosts: a total of that many hosts' rows (no host, no id) */
static void json_row(struct json *j, const struct trawl_analysis_row *r, int64_t dur, bool cpu,
		     bool io, size_t nhosts)
{
	tr_json_obj(j);
	tr_json_kv_str(j, "kind", kind_title(r->kind));
	if (nhosts) {
		tr_json_kv_u64(j, "hosts", nhosts);
	} else {
		if (*r->host)
			tr_json_kv_str(j, "host", r->host);
		tr_json_kv_i64(j, "id", r->id);
		tr_json_kv_str(j, "label", r->label);
	}
	tr_json_kv_u64(j, "count", r->count);
	tr_json_kv_i64(j, "min_ns", r->count ? r->min : 0);
	tr_json_key(j, "avg_ns");
	tr_json_fixed(j, avg(r), 1);
	tr_json_kv_i64(j, "max_ns", r->count ? r->max : 0);
	tr_json_key(j, "stddev_ns");
	if (r->count > 1)
		tr_json_fixed(j, stddev(r), 1);
	else
		tr_json_null(j);
	tr_json_kv_i64(j, "sum_ns", r->sum);
	if (cpu) {
		tr_json_key(j, "percent");
		tr_json_fixed(j, dur > 0 ? 100.0 * (double)r->sum / (double)dur : 0, 2);
	}
	if (has_errors(r->kind))
		tr_json_kv_u64(j, "errors", r->errors);
	if (r->bytes || io || r->kind == TRAWL_ANALYSIS_PROCESS)
		tr_json_kv_u64(j, "bytes", r->bytes);
	if (r->kind == TRAWL_ANALYSIS_PROCESS) {
		tr_json_kv_u64(j, "read_bytes", r->read_bytes);
		tr_json_kv_u64(j, "write_bytes", r->write_bytes);
	}
	if (r->prio != INT32_MIN)
		tr_json_kv_i64(j, "prio", r->prio);
	tr_json_key(j, "hist_us");
	tr_json_arr(j);
	for (unsigned b = 0; b < TRAWL_ANALYSIS_HIST; b++) {
		if (!r->hist[b])
			continue;
		tr_json_obj(j);
		tr_json_kv_u64(j, "lo", b ? 1ull << (b - 1) : 0);
		tr_json_kv_u64(j, "hi", 1ull << b);
		tr_json_kv_u64(j, "count", r->hist[b]);
		tr_json_obj_end(j);
	}
	tr_json_arr_end(j);
	tr_json_obj_end(j);
}

static void json_sample(struct json *j, const struct trawl_analysis_sample *s)
{
	tr_json_obj(j);
	tr_json_kv_i64(j, "ts", s->ts);
	tr_json_kv_i64(j, "dur_ns", s->dur);
	tr_json_kv_str(j, "host", s->host);
	tr_json_kv_u64(j, "cpu", s->cpu);
	tr_json_kv_i64(j, "tid", s->tid);
	tr_json_kv_str(j, "comm", s->comm);
	tr_json_kv_str(j, "kind", kind_title(s->row->kind));
	tr_json_kv_str(j, "what", s->row->label);
	if (s->row->kind == TRAWL_ANALYSIS_SYSCALL)
		tr_json_kv_i64(j, "ret", s->ret);
	if (s->bytes)
		tr_json_kv_u64(j, "bytes", s->bytes);
	tr_json_obj_end(j);
}

/*
 * The longest samples, top of them: of the cluster, or (by_host) of each
 * host. Sorts ss; returns how many of its first go out, in *pick (their
 * indexes, in order).
 */
static size_t longest(const struct trawl_analysis_sample **ss, size_t ns, unsigned top,
		      bool by_host, size_t *pick)
{
	qsort(ss, ns, sizeof(*ss), by_host ? by_host_dur : by_dur);
	size_t n = 0, shown = 0;
	for (size_t i = 0; i < ns; i++) {
		if (i && strcmp(ss[i - 1]->host, ss[i]->host) && by_host)
			shown = 0;
		if (shown < top) {
			pick[n++] = i;
			shown++;
		}
	}
	return n;
}

int trawl_analysis_report(const struct trawl_analysis *a, int fd,
			  const struct trawl_analysis_report_opts *o)
{
	unsigned modes = o && o->modes ? o->modes : TRAWL_ANALYSIS_STATS;
	bool gmt = modes & TRAWL_ANALYSIS_GMT;
	if (!(modes & ~(TRAWL_ANALYSIS_GMT | TRAWL_ANALYSIS_JSON)))
		modes |= TRAWL_ANALYSIS_STATS;
	unsigned top = o && o->top ? o->top : 10;
	bool by_host = tr_analysis_by_host(a);
	size_t nr = trawl_analysis_nrows(a), ns = trawl_analysis_nsamples(a);
	const struct trawl_analysis_row **rows = calloc(nr + 1, sizeof(*rows));
	const struct trawl_analysis_row **hrows = calloc(nr + 1, sizeof(*hrows));
	const struct trawl_analysis_sample **ss = calloc(ns + 1, sizeof(*ss));
	size_t *pick = calloc(ns + 1, sizeof(*pick));
	struct total tot[NKINDS];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = rows && hrows && ss && pick ? open_memstream(&buf, &len) : NULL;
	int ret = -ENOMEM;
	if (!f)
		goto out;
	bool cputop = !strcmp(trawl_analysis_kind(a), "cputop");
	/* iolatency's syscall rows: their bytes, even none (Open, Sync) */
	bool io = !strcmp(trawl_analysis_kind(a), "iolatency");
	int64_t b, e;
	trawl_analysis_range(a, &b, &e);
	/* e - b, saturated: times 2^63 ns or more apart (a corrupt timestamp or
	 * clock offset) give shares of the whole int64 range; said below */
	int64_t dur;
	bool huge = __builtin_sub_overflow(e, b, &dur);
	if (huge)
		dur = INT64_MAX;
	for (size_t i = 0; i < nr; i++)
		rows[i] = hrows[i] = trawl_analysis_row_at(a, i);
	for (size_t i = 0; i < ns; i++)
		ss[i] = trawl_analysis_sample_at(a, i);
	qsort(rows, nr, sizeof(*rows), cputop ? by_sum : by_count);
	sort_cputop = cputop;
	qsort(hrows, nr, sizeof(*hrows), by_host_metric);
	totals(tot, hrows, nr);

	if (modes & TRAWL_ANALYSIS_JSON) {
		struct json j;
		tr_json_init(&j);
		tr_json_obj(&j);
		tr_json_kv_str(&j, "analysis", trawl_analysis_kind(a));
		tr_json_kv_i64(&j, "begin", b);
		tr_json_kv_i64(&j, "end", e);
		tr_json_key(&j, "rows");
		tr_json_arr(&j);
		for (size_t i = 0; i < nr; i++)
			json_row(&j, (by_host ? hrows : rows)[i], dur, cputop, io, 0);
		tr_json_arr_end(&j);
		bool multi = false;
		for (int k = 0; k < NKINDS; k++)
			multi |= tot[k].nhosts > 1;
		if (multi) {
			tr_json_key(&j, "totals");
			tr_json_arr(&j);
			for (int k = 0; k < NKINDS; k++)
				if (tot[k].nhosts > 1)
					json_row(&j, &tot[k].r, dur, cputop, io, tot[k].nhosts);
			tr_json_arr_end(&j);
		}
		if (modes & (TRAWL_ANALYSIS_LOG | TRAWL_ANALYSIS_TOP)) {
			size_t n = ns;
			if (modes & TRAWL_ANALYSIS_LOG) {
				qsort(ss, ns, sizeof(*ss), by_ts);
				for (size_t i = 0; i < ns; i++)
					pick[i] = i;
			} else {
				n = longest(ss, ns, top, by_host, pick);
			}
			tr_json_key(&j, "samples");
			tr_json_arr(&j);
			for (size_t i = 0; i < n; i++)
				json_sample(&j, ss[pick[i]]);
			tr_json_arr_end(&j);
		}
		tr_json_obj_end(&j);
		tr_json_char(&j, '\n');
		ret = j.nomem ? -ENOMEM : 0;
		if (!ret && tr_json_flush(&j, f) < 0)
			ret = -EIO;
		tr_json_release(&j);
		if (ret)
			goto out;
	} else {
		char tb[48], te[48];
		clock_str(tb, sizeof(tb), b, gmt);
		clock_str(te, sizeof(te), e, gmt);
		uint64_t d = (uint64_t)e - (uint64_t)b;	/* exact when e >= b */
		fprintf(f, "%s: [%s, %s] (%.6f s%s%s)\n", trawl_analysis_kind(a), tb, te,
			e >= b ? (double)d / 1e9 : -((double)((uint64_t)b - (uint64_t)e) / 1e9),
			b < 0 || e < 0 ? ", impossible: events dated before 1970: a corrupt "
					 "timestamp or clock offset" : "",
			huge && cputop ? "; the shares are of 2^63 ns" : "");
		bool pivot = nr && by_host && (modes & TRAWL_ANALYSIS_STATS) &&
			     stats_by_host(f, rows, nr, cputop, dur) == 0;
		if (!pivot && (modes & (TRAWL_ANALYSIS_STATS | (cputop ? TRAWL_ANALYSIS_TOP : 0)))) {
			/* --by host: host by host (cputop's --top: each host's top) */
			const struct trawl_analysis_row **lr = by_host ? hrows : rows;
			size_t shown = 0;
			for (size_t i = 0; i < nr; i++) {
				const struct trawl_analysis_row *r = lr[i];
				bool first = !i || lr[i - 1]->kind != r->kind;
				if (first)
					row_header(f, r, cputop, io);
				if (first || (by_host && strcmp(lr[i - 1]->host, r->host)))
					shown = 0;
				if (!(cputop && !(modes & TRAWL_ANALYSIS_STATS) && shown >= top)) {
					shown++;
					row_text(f, r, cputop, io, dur);
				}
				if ((i + 1 == nr || lr[i + 1]->kind != r->kind) &&
				    tot[r->kind].nhosts > 1)
					row_text(f, &tot[r->kind].r, cputop, io, dur);
			}
		}
		if ((modes & TRAWL_ANALYSIS_TOP) && !cputop) {
			size_t n = longest(ss, ns, top, by_host, pick);
			fprintf(f, "\nlongest %u%s: [begin] duration (us), host, cpu, comm, tid, what\n",
				top, by_host ? " of each host" : "");
			for (size_t i = 0; i < n; i++)
				sample_text(f, ss[pick[i]], gmt);
		}
		if (modes & TRAWL_ANALYSIS_LOG) {
			qsort(ss, ns, sizeof(*ss), by_ts);
			fprintf(f, "\nlog: [begin] duration (us), host, cpu, comm, tid, what\n");
			for (size_t i = 0; i < ns; i++)
				sample_text(f, ss[i], gmt);
		}
		if (modes & TRAWL_ANALYSIS_FREQ) {
			fputc('\n', f);
			const struct trawl_analysis_row **lr = by_host ? hrows : rows;
			for (size_t i = 0; i < nr; i++) {
				hist_text(f, lr[i]);
				if ((i + 1 == nr || lr[i + 1]->kind != lr[i]->kind) &&
				    tot[lr[i]->kind].nhosts > 1)
					hist_text(f, &tot[lr[i]->kind].r);
			}
		}
	}
	ret = 0;
out:
	if (f && fclose(f) != 0 && !ret)
		ret = -ENOMEM;
	for (size_t off = 0; !ret && off < len;) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)w;
	}
	free(buf);
	free(rows);
	free(hrows);
	free(ss);
	free(pick);
	return ret;
}
