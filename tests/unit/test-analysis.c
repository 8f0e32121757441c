/* SPDX-License-Identifier: MIT */
/*
 * test-analysis: the standard analyses (lib/analysis) on a kernel trace
 * written here with LTTng's names, two CPUs, every figure known:
 *
 *   CPU 0  1000  sched_switch 0 -> a (100)
 *          2000  syscall_entry_read (100)   5000 exit ret -11   (3000, error)
 *          6000  syscall_entry_read (100)   8000 exit ret 10    (2000)
 *          9000  sched_wakeup b (200)
 *         10000  sched_switch a -> b        (a ran 9000; b waited 1000)
 *         12000  irq_handler_entry 5 eth   12500 exit           (500)
 *         14000  block_rq_issue dev 8:0 sector 64 nr 8 (200)
 *         20000  sched_switch b -> 0        (b ran 10000)
 *   CPU 1  1500  sched_switch x (400, runnable) -> c (300)  (x ran since the start: 500;
 *                                            c runs to the end: 28500)
 *         30000  block_rq_complete 8:0 64 8 (16000, 4096 bytes)
 *         31000  sched_switch c -> x, c preempted (prev_state 0x100)
 *         33000  sched_switch x -> c        (c waited 2000; x ran 2000 more)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/analysis.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-analysis-XXXXXX";
#define T0 1000000000ull	/* 1 s after the clock's offset */

struct cls {
	struct trawl_ctf_event_class *sw, *wake, *sys_in, *sys_out, *irq_in, *irq_out, *rq_in, *rq_out;
};

static uint64_t shift;		/* the second host's trace starts later */
static int notid;		/* no tid context (LTTng's default) */

static int ev(struct trawl_ctf_wstream *s, struct trawl_ctf_event_class *ec, uint64_t t,
	      int32_t tid, const char *fmt, ...)
{
	uint8_t buf[256];
	struct trawl_ctf_buf b;
	va_list ap;
	trawl_ctf_buf_init(&b, buf, sizeof(buf));
	if (!notid)
		trawl_ctf_buf_u32(&b, (uint32_t)tid);
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++)
		switch (*f) {
		case 'i': trawl_ctf_buf_u32(&b, (uint32_t)va_arg(ap, int)); break;
		case 'l': trawl_ctf_buf_u64(&b, (uint64_t)va_arg(ap, long long)); break;
		case 's': trawl_ctf_buf_str(&b, va_arg(ap, const char *)); break;
		}
	va_end(ap);
	return trawl_ctf_wstream_event(s, ec, T0 + shift + t, buf, b.len);
}

static int write_trace(const char *dir, const char *host)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = host, .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, notid ? NULL : ctx);
	struct trawl_ctf_type *sw = trawl_ctf_type_struct(w), *wk = trawl_ctf_type_struct(w),
			      *si = trawl_ctf_type_struct(w), *so = trawl_ctf_type_struct(w),
			      *ii = trawl_ctf_type_struct(w), *io = trawl_ctf_type_struct(w),
			      *ri = trawl_ctf_type_struct(w), *ro = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, sw, "prev_comm", str);
	trawl_ctf_struct_add(w, sw, "prev_tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_prio", s32);
	trawl_ctf_struct_add(w, sw, "prev_state", s64);
	trawl_ctf_struct_add(w, sw, "next_comm", str);
	trawl_ctf_struct_add(w, sw, "next_tid", s32);
	trawl_ctf_struct_add(w, sw, "next_prio", s32);
	trawl_ctf_struct_add(w, wk, "comm", str);
	trawl_ctf_struct_add(w, wk, "tid", s32);
	trawl_ctf_struct_add(w, wk, "prio", s32);
	trawl_ctf_struct_add(w, wk, "target_cpu", s32);
	trawl_ctf_struct_add(w, si, "fd", s64);
	trawl_ctf_struct_add(w, so, "ret", s64);
	trawl_ctf_struct_add(w, ii, "irq", s32);
	trawl_ctf_struct_add(w, ii, "name", str);
	trawl_ctf_struct_add(w, io, "irq", s32);
	trawl_ctf_struct_add(w, io, "ret", s32);
	trawl_ctf_struct_add(w, ri, "dev", u32);
	trawl_ctf_struct_add(w, ri, "sector", u64);
	trawl_ctf_struct_add(w, ri, "nr_sector", u32);
	trawl_ctf_struct_add(w, ro, "dev", u32);
	trawl_ctf_struct_add(w, ro, "sector", u64);
	trawl_ctf_struct_add(w, ro, "nr_sector", u32);
	trawl_ctf_struct_add(w, ro, "error", s32);
	struct cls c = {
		trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, sw),
		trawl_ctf_writer_event_class(w, sc, "sched_wakeup", INT64_MIN, wk),
		trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", INT64_MIN, si),
		trawl_ctf_writer_event_class(w, sc, "syscall_exit_read", INT64_MIN, so),
		trawl_ctf_writer_event_class(w, sc, "irq_handler_entry", INT64_MIN, ii),
		trawl_ctf_writer_event_class(w, sc, "irq_handler_exit", INT64_MIN, io),
		trawl_ctf_writer_event_class(w, sc, "block_rq_issue", INT64_MIN, ri),
		trawl_ctf_writer_event_class(w, sc, "block_rq_complete", INT64_MIN, ro),
	};
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	struct trawl_ctf_wstream *c1 = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	int dev = 8 << 20, r = !c0 || !c1 || !c.rq_out;
	r = r ?: ev(c0, c.sw, 1000, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "a", 100, 20);
	r = r ?: ev(c0, c.sys_in, 2000, 100, "l", 3ll);
	r = r ?: ev(c0, c.sys_out, 5000, 100, "l", -11ll);
	r = r ?: ev(c0, c.sys_in, 6000, 100, "l", 3ll);
	r = r ?: ev(c0, c.sys_out, 8000, 100, "l", 10ll);
	r = r ?: ev(c0, c.wake, 9000, 100, "siii", "b", 200, 20, 0);
	r = r ?: ev(c0, c.sw, 10000, 100, "siil" "sii", "a", 100, 20, 1ll, "b", 200, 20);
	r = r ?: ev(c0, c.irq_in, 12000, 200, "is", 5, "eth");
	r = r ?: ev(c0, c.irq_out, 12500, 200, "ii", 5, 1);
	r = r ?: ev(c0, c.rq_in, 14000, 200, "ili", dev, 64ll, 8);
	r = r ?: ev(c0, c.sw, 20000, 200, "siil" "sii", "b", 200, 20, 1ll, "swapper/0", 0, 20);
	r = r ?: ev(c1, c.sw, 1500, 400, "siil" "sii", "x", 400, 20, 0ll, "c", 300, 20);
	r = r ?: ev(c1, c.rq_out, 30000, 300, "ilii", dev, 64ll, 8, 0);
	r = r ?: ev(c1, c.sw, 31000, 300, "siil" "sii", "c", 300, 20, 256ll, "x", 400, 20);
	r = r ?: ev(c1, c.sw, 33000, 400, "siil" "sii", "x", 400, 20, 1ll, "c", 300, 20);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

struct slices {
	int n;
	int64_t begin[8], end[8], a[8];
};

static void on_slice(void *arg, const struct trawl_analysis *a)
{
	struct slices *s = arg;
	if (s->n >= 8)
		return;
	trawl_analysis_range(a, &s->begin[s->n], &s->end[s->n]);
	s->a[s->n] = 0;
	for (size_t i = 0; i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		if (r->kind == TRAWL_ANALYSIS_THREAD && r->id == 100)
			s->a[s->n] = r->sum;
	}
	s->n++;
}

/* Runs analysis name with o (name set here) over dir; NULL on failure. */
static struct trawl_analysis *run(const char *dir, const char *name,
				  struct trawl_analysis_opts *o)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_analysis_opts d = { .sz = sizeof(d), .tid = -1, .cpu = -1 };
	if (!o)
		o = &d;
	o->name = name;
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_analysis *a = r ? trawl_analysis_new(o, err, sizeof(err)) : NULL;
	struct trawl_sink s = a ? trawl_analysis_sink(a) : (struct trawl_sink){ 0 };
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	if (!a || trawl_pipe_run(r, &s, 1, &ro) != 0) {
		printf("# %s: %s\n", name, err);
		trawl_analysis_free(a);
		a = NULL;
	}
	/* the results outlive the reader (the report below reads them after) */
	trawl_reader_free(r);
	return a;
}

static const struct trawl_analysis_row *find(const struct trawl_analysis *a,
					     enum trawl_analysis_row_kind k, int64_t id)
{
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		if (r->kind == k && r->id == id)
			return r;
	}
	return NULL;
}

static void figures(const char *dir)
{
	struct trawl_analysis *a = run(dir, "cputop", NULL);
	const struct trawl_analysis_row *r;
	int64_t b = 0, e = 0;
	if (a)
		trawl_analysis_range(a, &b, &e);
	is_int(e - b, 32000, "cputop: the range is the first to the last event (32000 ns)");
	r = find(a, TRAWL_ANALYSIS_THREAD, 100);
	ok(r && r->sum == 9000 && !strcmp(r->label, "a (100)"), "cputop: a ran 9000 ns (%lld)",
	   r ? (long long)r->sum : -1ll);
	r = find(a, TRAWL_ANALYSIS_THREAD, 200);
	is_int(r ? r->sum : -1, 10000, "cputop: b ran 10000 ns");
	r = find(a, TRAWL_ANALYSIS_THREAD, 300);
	is_int(r ? r->sum : -1, 29500, "cputop: c ran 29500 ns");
	r = find(a, TRAWL_ANALYSIS_THREAD, 400);
	is_int(r ? r->sum : -1, 2500, "cputop: x, running when the trace starts, counts from there: 500 + 2000 ns");
	ok(!find(a, TRAWL_ANALYSIS_THREAD, 0), "cputop: the idle thread is left out");
	r = find(a, TRAWL_ANALYSIS_CPU, 0);
	is_int(r ? r->sum : -1, 19000, "cputop: CPU 0 busy 19000 ns");
	trawl_analysis_free(a);

	a = run(dir, "syscalls", NULL);
	r = a ? trawl_analysis_row_at(a, 0) : NULL;
	ok(r && trawl_analysis_nrows(a) == 1 && !strcmp(r->label, "read") && r->count == 2 &&
	   r->min == 2000 && r->max == 3000 && r->sum == 5000 && r->errors == 1,
	   "syscalls: read: 2, min 2000, max 3000, 1 error");
	trawl_analysis_free(a);

	struct trawl_analysis_opts o = { .sz = sizeof(o), .tid = -1, .cpu = -1, .min_ns = 2500,
					 .keep_samples = true };
	a = run(dir, "syscalls", &o);
	r = a && trawl_analysis_nrows(a) ? trawl_analysis_row_at(a, 0) : NULL;
	const struct trawl_analysis_sample *s = a ? trawl_analysis_sample_at(a, 0) : NULL;
	ok(r && r->count == 1 && r->max == 3000 && s && s->ret == -11 && s->tid == 100 &&
	   s->ts == (int64_t)(1700000000ull * 1000000000ull + T0 + 2000) && !strcmp(s->comm, "a"),
	   "--min 2500 ns: the failed read only, its sample (time, tid, comm, ret)");
	trawl_analysis_free(a);
	struct trawl_analysis_opts o1 = { .sz = sizeof(o1), .tid = -1, .cpu = -1,
					  .keep_samples = true, .keep_longest = 1 };
	a = run(dir, "schedlat", &o1);
	s = a ? trawl_analysis_sample_at(a, 0) : NULL;
	ok(a && trawl_analysis_nsamples(a) == 1 && s && s->dur == 29500 && s->tid == 400,
	   "keep_longest 1: only the longest of three samples (x's 29500 ns)");
	trawl_analysis_free(a);
	struct trawl_analysis_opts o2 = { .sz = sizeof(o2), .tid = 999, .cpu = -1 };
	a = run(dir, "syscalls", &o2);
	ok(a && trawl_analysis_nrows(a) == 0, "--tid 999: nothing");
	trawl_analysis_free(a);

	a = run(dir, "schedlat", NULL);
	r = find(a, TRAWL_ANALYSIS_THREAD, 200);
	ok(r && r->count == 1 && r->sum == 1000 && r->prio == 20 && trawl_analysis_nrows(a) == 3,
	   "schedlat: b waited 1000 ns, prio 20");
	r = find(a, TRAWL_ANALYSIS_PREEMPT, 300);
	ok(r && r->count == 1 && r->sum == 2000, "schedlat: c preempted (0x100) for 2000 ns");
	r = find(a, TRAWL_ANALYSIS_PREEMPT, 400);
	ok(r && r->count == 1 && r->sum == 29500,
	   "schedlat: x preempted (state 0) at 1500, ran at 31000; asleep at 33000: no more");
	trawl_analysis_free(a);

	a = run(dir, "irq", NULL);
	r = find(a, TRAWL_ANALYSIS_HARDIRQ, 5);
	ok(r && r->count == 1 && r->sum == 500 && !strcmp(r->label, "5 <eth>"),
	   "irq: 5 <eth> 500 ns");
	trawl_analysis_free(a);

	a = run(dir, "iolatency", NULL);
	r = find(a, TRAWL_ANALYSIS_DISK, 8 << 20);
	ok(r && r->count == 1 && r->sum == 16000 && r->bytes == 4096 && !strcmp(r->label, "(8,0)"),
	   "iolatency: disk (8,0): one request, 16000 ns, 4096 bytes");
	r = find(a, TRAWL_ANALYSIS_THREAD, 200);
	ok(r && r->count == 1 && r->bytes == 4096, "iolatency: issued by b");
	trawl_analysis_free(a);

	struct slices sl = { 0 };
	struct trawl_analysis_opts o3 = { .sz = sizeof(o3), .tid = -1, .cpu = -1,
					  .interval_ns = 10000, .period = on_slice, .arg = &sl };
	a = run(dir, "cputop", &o3);
	ok(a && sl.n == 4 && sl.end[0] - sl.begin[0] == 10000 && sl.begin[1] == sl.end[0] &&
	   sl.end[3] - sl.begin[0] == 32000,
	   "--interval 10 us: four slices end to end (%d)", sl.n);
	ok(sl.a[0] == 9000 && sl.a[1] == 0, "--interval: a's 9000 ns in the first slice only");
	trawl_analysis_free(a);

	char err[128];
	struct trawl_analysis_opts bad = { .sz = sizeof(bad), .name = "nosuch" };
	ok(!trawl_analysis_new(&bad, err, sizeof(err)) && errno == EINVAL &&
	   strstr(err, "nosuch"), "an unknown analysis: EINVAL (%s)", err);
	const char *help;
	is_str(trawl_analysis_name(0, &help), "cputop", "the table: cputop first");
	ok(!trawl_analysis_name(5, NULL), "five analyses");
}

/* Two hosts, the second's trace 100 us later: per-host figures, side by side. */
static void hosts(void)
{
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/h2/kernel", root);
	shift = 100000;
	ok(write_trace(dir, "h2") == 0, "a second host's trace, 100 us later");
	shift = 0;
	struct trawl_analysis_opts o = { .sz = sizeof(o), .tid = -1, .cpu = -1, .by_host = true };
	struct trawl_analysis *a = run(root, "cputop", &o);
	int good = 0;
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		if (r->kind == TRAWL_ANALYSIS_THREAD && r->id == 400)
			good += r->sum == 2500;
		if (r->kind == TRAWL_ANALYSIS_THREAD && r->id == 300)
			good += r->sum == 29500;
	}
	ok(a && good == 4 && trawl_analysis_nrows(a) == 2 * 6,
	   "--by host: each host's threads as alone (x 2500, c 29500 ns on both, %d)", good);
	trawl_analysis_free(a);
	struct trawl_analysis_opts o2 = { .sz = sizeof(o2), .tid = -1, .cpu = -1, .by_host = true };
	a = run(root, "syscalls", &o2);
	char path[700], buf[4096];
	snprintf(path, sizeof(path), "%s/hosts.txt", root);
	FILE *f = fopen(path, "w+");
	struct trawl_analysis_report_opts ro = { .sz = sizeof(ro) };
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "a --by host report");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "| h1 ") && strstr(buf, "| h2 ") &&
	   strstr(buf, "read                         |        2       2.500       3.000 |"
		       "        2       2.500       3.000\n"),
	   "--by host: one line per syscall, the hosts side by side");
	if (f)
		fclose(f);
	trawl_analysis_free(a);
	snprintf(dir, sizeof(dir), "%s/h2", root);
	tap_rm_tree(dir);
}

/* Without the tid context: a syscall's thread is its CPU's current one. */
static void no_tid(void)
{
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/nt/kernel", root);
	notid = 1;
	ok(write_trace(dir, "nt") == 0, "the trace without the tid context");
	notid = 0;
	struct trawl_analysis *a = run(dir, "syscalls", NULL);
	const struct trawl_analysis_row *r = a && trawl_analysis_nrows(a) == 1
						     ? trawl_analysis_row_at(a, 0) : NULL;
	ok(r && !strcmp(r->label, "read") && r->count == 2 && r->min == 2000 && r->max == 3000 &&
	   r->errors == 1, "no tid context: syscalls: a's reads (CPU 0's thread), as with it");
	trawl_analysis_free(a);
	snprintf(dir, sizeof(dir), "%s/nt", root);
	tap_rm_tree(dir);
}

static void reports(const char *dir)
{
	char path[512], buf[8192];
	struct trawl_analysis_opts o = { .sz = sizeof(o), .tid = -1, .cpu = -1,
					 .keep_samples = true };
	struct trawl_analysis *a = run(dir, "syscalls", &o);
	snprintf(path, sizeof(path), "%s/report.txt", root);
	FILE *f = fopen(path, "w+");
	struct trawl_analysis_report_opts ro = {
		.sz = sizeof(ro),
		.modes = TRAWL_ANALYSIS_STATS | TRAWL_ANALYSIS_FREQ | TRAWL_ANALYSIS_LOG,
	};
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "a text report");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "read                                2        2.000        2.500        3.000"
		       "        0.707        1") != NULL,
	   "stats: read 2, 2.000 2.500 3.000 us, stddev 0.707, 1 error");
	ok(strstr(buf, "[2, 4)                      2 |@@@@") != NULL, "freq: both in [2, 4) us");
	ok(strstr(buf, "a                     100  syscall read = -11") != NULL, "log: the failed read");
	if (f)
		fclose(f);
	f = fopen(path, "w+");
	ro.modes = TRAWL_ANALYSIS_JSON;
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "a JSON report");
	n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "\"label\":\"read\",\"count\":2,\"min_ns\":2000,\"avg_ns\":2500.0,"
		       "\"max_ns\":3000,\"stddev_ns\":707.1,\"sum_ns\":5000,\"errors\":1") != NULL,
	   "json: the read row");
	if (f)
		fclose(f);
	trawl_analysis_free(a);
}

int main(void)
{
	char dir[600];
	ok(mkdtemp(root) != NULL, "a directory");
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	ok(write_trace(dir, "h1") == 0, "a kernel trace with LTTng's names");
	figures(dir);
	hosts();
	reports(dir);
	no_tid();
	if (!getenv("KEEP"))
		tap_rm_tree(root);
	return done_testing();
}
