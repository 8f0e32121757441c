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

static void clock_str(char *buf, size_t cap, int64_t ns, bool gmt)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	if (gmt)
		gmtime_r(&s, &tm);
	else
		localtime_r(&s, &tm);
	snprintf(buf, cap, "%02d:%02d:%02d.%09lld", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(ns % 1000000000));
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

static int by_dur(const void *x, const void *y)
{
	const struct trawl_analysis_sample *a = *(const struct trawl_analysis_sample *const *)x,
					   *b = *(const struct trawl_analysis_sample *const *)y;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
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

#define MAX_HOST_COLUMNS 8

/*
 * --by host: one line per row label, one column group per host (the
 * hosts side by side): count, avg and max (cputop: share and time). Rows
 * are in rows' order (the top first, whichever host). 0, or -1 when there
 * are more hosts than columns (then the rows are listed one by one).
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
		if (seen)
			continue;
		fprintf(f, "%-28s", r->label);
		for (size_t h = 0; h < nh; h++) {
			const struct trawl_analysis_row *c = NULL;
			for (size_t j = i; j < nr && !c; j++)
				if (rows[j]->kind == r->kind && !strcmp(rows[j]->label, r->label) &&
				    !strcmp(rows[j]->host, hosts[h]))
					c = rows[j];
			if (!c)
				fprintf(f, cputop ? " | %9s %22s" : " | %8s %11s %11s", "-", "-", "-");
			else if (cputop)
				fprintf(f, " | %7.2f %% %22.3f",
					dur > 0 ? 100.0 * (double)c->sum / (double)dur : 0.0,
					(double)c->sum / 1e6);
			else
				fprintf(f, " | %8llu %11.3f %11.3f", (unsigned long long)c->count,
					avg(c) / 1000.0, (double)c->max / 1000.0);
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

/* io: iolatency's, every row with its bytes (as the text), none too */
static void json_row(struct json *j, const struct trawl_analysis_row *r, int64_t dur, bool cpu,
		     bool io)
{
	tr_json_obj(j);
	tr_json_kv_str(j, "kind", kind_title(r->kind));
	if (*r->host)
		tr_json_kv_str(j, "host", r->host);
	tr_json_kv_i64(j, "id", r->id);
	tr_json_kv_str(j, "label", r->label);
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

int trawl_analysis_report(const struct trawl_analysis *a, int fd,
			  const struct trawl_analysis_report_opts *o)
{
	unsigned modes = o && o->modes ? o->modes : TRAWL_ANALYSIS_STATS;
	bool gmt = modes & TRAWL_ANALYSIS_GMT;
	if (!(modes & ~(TRAWL_ANALYSIS_GMT | TRAWL_ANALYSIS_JSON)))
		modes |= TRAWL_ANALYSIS_STATS;
	unsigned top = o && o->top ? o->top : 10;
	size_t nr = trawl_analysis_nrows(a), ns = trawl_analysis_nsamples(a);
	const struct trawl_analysis_row **rows = calloc(nr + 1, sizeof(*rows));
	const struct trawl_analysis_sample **ss = calloc(ns + 1, sizeof(*ss));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = rows && ss ? open_memstream(&buf, &len) : NULL;
	int ret = -ENOMEM;
	if (!f)
		goto out;
	bool cputop = !strcmp(trawl_analysis_kind(a), "cputop");
	/* iolatency's syscall rows: their bytes, even none (Open, Sync) */
	bool io = !strcmp(trawl_analysis_kind(a), "iolatency");
	int64_t b, e;
	trawl_analysis_range(a, &b, &e);
	int64_t dur = e - b;
	for (size_t i = 0; i < nr; i++)
		rows[i] = trawl_analysis_row_at(a, i);
	for (size_t i = 0; i < ns; i++)
		ss[i] = trawl_analysis_sample_at(a, i);
	qsort(rows, nr, sizeof(*rows), cputop ? by_sum : by_count);

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
			json_row(&j, rows[i], dur, cputop, io);
		tr_json_arr_end(&j);
		if (modes & (TRAWL_ANALYSIS_LOG | TRAWL_ANALYSIS_TOP)) {
			qsort(ss, ns, sizeof(*ss), (modes & TRAWL_ANALYSIS_LOG) ? by_ts : by_dur);
			size_t n = (modes & TRAWL_ANALYSIS_LOG) ? ns : (ns < top ? ns : top);
			tr_json_key(&j, "samples");
			tr_json_arr(&j);
			for (size_t i = 0; i < n; i++)
				json_sample(&j, ss[i]);
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
		char tb[32], te[32];
		clock_str(tb, sizeof(tb), b, gmt);
		clock_str(te, sizeof(te), e, gmt);
		fprintf(f, "%s: [%s, %s] (%.6f s)\n", trawl_analysis_kind(a), tb, te,
			(double)dur / 1e9);
		bool pivot = nr && *rows[0]->host && (modes & TRAWL_ANALYSIS_STATS) &&
			     stats_by_host(f, rows, nr, cputop, dur) == 0;
		if (!pivot && (modes & (TRAWL_ANALYSIS_STATS | (cputop ? TRAWL_ANALYSIS_TOP : 0)))) {
			int last = -1;
			size_t shown = 0;
			for (size_t i = 0; i < nr; i++) {
				const struct trawl_analysis_row *r = rows[i];
				if ((int)r->kind != last) {
					last = (int)r->kind;
					shown = 0;
					if (cputop)
						fprintf(f, "\n%-10s %-32s %9s %14s\n", "host",
							kind_title(r->kind), "usage", "time (ms)");
					else
						fprintf(f, "\n%-10s %-28s %8s %12s %12s %12s %12s%s%s%s\n",
							"host", kind_title(r->kind), "count", "min (us)",
							"avg (us)", "max (us)", "stdev (us)",
							has_errors(r->kind) ? "   errors" : "",
							r->kind == TRAWL_ANALYSIS_DISK || io ||
								(r->kind == TRAWL_ANALYSIS_THREAD && r->bytes) ?
								"        bytes" : "",
							r->kind == TRAWL_ANALYSIS_PROCESS ?
								"     read (B)    write (B)" : "");
				}
				if (cputop && !(modes & TRAWL_ANALYSIS_STATS) && shown >= top)
					continue;
				shown++;
				const char *host = *r->host ? r->host : "-";
				if (cputop) {
					fprintf(f, "%-10s %-32s %8.2f %% %14.3f\n", host, r->label,
						dur > 0 ? 100.0 * (double)r->sum / (double)dur : 0.0,
						(double)r->sum / 1e6);
					continue;
				}
				fprintf(f, "%-10s %-28s %8llu", host, r->label,
					(unsigned long long)r->count);
				us(f, r->min);
				fprintf(f, " %12.3f", avg(r) / 1000.0);
				us(f, r->max);
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
		}
		if ((modes & TRAWL_ANALYSIS_TOP) && !cputop) {
			qsort(ss, ns, sizeof(*ss), by_dur);
			fprintf(f, "\nlongest %u: [begin] duration (us), host, cpu, comm, tid, what\n",
				top);
			for (size_t i = 0; i < ns && i < top; i++)
				sample_text(f, ss[i], gmt);
		}
		if (modes & TRAWL_ANALYSIS_LOG) {
			qsort(ss, ns, sizeof(*ss), by_ts);
			fprintf(f, "\nlog: [begin] duration (us), host, cpu, comm, tid, what\n");
			for (size_t i = 0; i < ns; i++)
				sample_text(f, ss[i], gmt);
		}
		if (modes & TRAWL_ANALYSIS_FREQ) {
			fputc('\n', f);
			for (size_t i = 0; i < nr; i++)
				hist_text(f, rows[i]);
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
	free(ss);
	return ret;
}
