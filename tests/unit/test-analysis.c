/* SPDX-License-Identifier: MIT */
/*
 * test-analysis: the standard analyses (lib/analysis) on a kernel trace
 * written here with LTTng's names, two CPUs, every figure known:
 *
 *   CPU 0  1000  sched_switch 0 -> a (100)
 *          1100  lttng_statedump_process_state a: tid 100, pid 90
 *          2000  syscall_entry_read (100)   5000 exit ret -11   (3000, error)
 *          6000  syscall_entry_read (100)   8000 exit ret 10    (2000)
 *          9000  sched_wakeup b (200)
 *         10000  sched_switch a -> b        (a ran 9000; b waited 1000)
 *         12000  irq_handler_entry 5 eth   12500 exit           (500)
 *         14000  block_rq_issue dev 8:0 sector 64 nr 8 (200)
 *         15000  syscall_entry_write (200)  16000 exit ret 5    (1000; b's pid unknown)
 *         17000  sched_process_exec b -> /usr/bin/bb (its name now "bb": b ran 7000
 *                                            as b, from now on as bb)
 *         18000  block_rq_issue dev 8:0 sector 128 nr 8 (200, "bb")
 *         20000  sched_switch bb -> 0       (b ran 10000)
 *   CPU 1  1200  sched_process_fork x (400) -> c: tid 300, pid 400
 *          1500  sched_switch x (400, runnable) -> c (300)  (x ran since the start: 500;
 *                                            c runs to the end: 28500)
 *          2000  syscall_entry_write (300)   2500 exit ret 7    (500; process x (400))
 *         30000  block_rq_complete 8:0 64 8 (16000, 4096 bytes)
 *         30500  block_rq_complete 8:0 128 8 (12500, 4096 bytes)
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
	struct trawl_ctf_event_class *sw, *wake, *sys_in, *sys_out, *irq_in, *irq_out, *rq_in, *rq_out,
		*sd, *fork, *wr_in, *wr_out, *exec;
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

/* The payloads of the kernel events the tests write (LTTng's fields). */
struct ktypes {
	struct trawl_ctf_type *ctx, *sw, *wk, *si, *so, *ii, *io, *ri, *ro, *sd, *fk, *ex, *s64;
};

static void ktypes(struct trawl_ctf_writer *w, struct ktypes *k)
{
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	k->s64 = s64;
	k->ctx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, k->ctx, "tid", s32);
	struct trawl_ctf_type *sw = k->sw = trawl_ctf_type_struct(w), *wk = k->wk = trawl_ctf_type_struct(w),
			      *si = k->si = trawl_ctf_type_struct(w), *so = k->so = trawl_ctf_type_struct(w),
			      *ii = k->ii = trawl_ctf_type_struct(w), *io = k->io = trawl_ctf_type_struct(w),
			      *ri = k->ri = trawl_ctf_type_struct(w), *ro = k->ro = trawl_ctf_type_struct(w),
			      *sd = k->sd = trawl_ctf_type_struct(w), *fk = k->fk = trawl_ctf_type_struct(w),
			      *ex = k->ex = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ex, "filename", str);
	trawl_ctf_struct_add(w, ex, "tid", s32);
	trawl_ctf_struct_add(w, ex, "old_tid", s32);
	trawl_ctf_struct_add(w, sd, "tid", s32);
	trawl_ctf_struct_add(w, sd, "pid", s32);
	trawl_ctf_struct_add(w, sd, "name", str);
	trawl_ctf_struct_add(w, fk, "parent_comm", str);
	trawl_ctf_struct_add(w, fk, "parent_tid", s32);
	trawl_ctf_struct_add(w, fk, "parent_pid", s32);
	trawl_ctf_struct_add(w, fk, "child_comm", str);
	trawl_ctf_struct_add(w, fk, "child_tid", s32);
	trawl_ctf_struct_add(w, fk, "child_pid", s32);
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
}

/* A kernel trace's writer and its stream class (the tid context or none). */
static struct trawl_ctf_writer *kwriter(const char *dir, const char *host, bool tid,
					struct ktypes *kt, struct trawl_ctf_stream_class **sc)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = host, .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return NULL;
	ktypes(w, kt);
	*sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, tid ? kt->ctx : NULL);
	return w;
}

static int write_trace(const char *dir, const char *host)
{
	struct ktypes kt;
	struct trawl_ctf_stream_class *sc;
	struct trawl_ctf_writer *w = kwriter(dir, host, !notid, &kt, &sc);
	if (!w)
		return -1;
	struct cls c = {
		trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, kt.sw),
		trawl_ctf_writer_event_class(w, sc, "sched_wakeup", INT64_MIN, kt.wk),
		trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", INT64_MIN, kt.si),
		trawl_ctf_writer_event_class(w, sc, "syscall_exit_read", INT64_MIN, kt.so),
		trawl_ctf_writer_event_class(w, sc, "irq_handler_entry", INT64_MIN, kt.ii),
		trawl_ctf_writer_event_class(w, sc, "irq_handler_exit", INT64_MIN, kt.io),
		trawl_ctf_writer_event_class(w, sc, "block_rq_issue", INT64_MIN, kt.ri),
		trawl_ctf_writer_event_class(w, sc, "block_rq_complete", INT64_MIN, kt.ro),
		trawl_ctf_writer_event_class(w, sc, "lttng_statedump_process_state", INT64_MIN, kt.sd),
		trawl_ctf_writer_event_class(w, sc, "sched_process_fork", INT64_MIN, kt.fk),
		trawl_ctf_writer_event_class(w, sc, "syscall_entry_write", INT64_MIN, kt.si),
		trawl_ctf_writer_event_class(w, sc, "syscall_exit_write", INT64_MIN, kt.so),
		trawl_ctf_writer_event_class(w, sc, "sched_process_exec", INT64_MIN, kt.ex),
	};
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	struct trawl_ctf_wstream *c1 = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	int dev = 8 << 20, r = !c0 || !c1 || !c.rq_out || !c.wr_out || !c.exec;
	r = r ?: ev(c0, c.sw, 1000, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "a", 100, 20);
	r = r ?: ev(c0, c.sd, 1100, 100, "iis", 100, 90, "a");
	r = r ?: ev(c0, c.sys_in, 2000, 100, "l", 3ll);
	r = r ?: ev(c0, c.sys_out, 5000, 100, "l", -11ll);
	r = r ?: ev(c0, c.sys_in, 6000, 100, "l", 3ll);
	r = r ?: ev(c0, c.sys_out, 8000, 100, "l", 10ll);
	r = r ?: ev(c0, c.wake, 9000, 100, "siii", "b", 200, 20, 0);
	r = r ?: ev(c0, c.sw, 10000, 100, "siil" "sii", "a", 100, 20, 1ll, "b", 200, 20);
	r = r ?: ev(c0, c.irq_in, 12000, 200, "is", 5, "eth");
	r = r ?: ev(c0, c.irq_out, 12500, 200, "ii", 5, 1);
	r = r ?: ev(c0, c.rq_in, 14000, 200, "ili", dev, 64ll, 8);
	r = r ?: ev(c0, c.wr_in, 15000, 200, "l", 1ll);
	r = r ?: ev(c0, c.wr_out, 16000, 200, "l", 5ll);
	r = r ?: ev(c0, c.exec, 17000, 200, "sii", "/usr/bin/bb", 200, 200);
	r = r ?: ev(c0, c.rq_in, 18000, 200, "ili", dev, 128ll, 8);
	r = r ?: ev(c0, c.sw, 20000, 200, "siil" "sii", "bb", 200, 20, 1ll, "swapper/0", 0, 20);
	r = r ?: ev(c1, c.fork, 1200, 400, "siisii", "x", 400, 400, "c", 300, 400);
	r = r ?: ev(c1, c.sw, 1500, 400, "siil" "sii", "x", 400, 20, 0ll, "c", 300, 20);
	r = r ?: ev(c1, c.wr_in, 2000, 300, "l", 1ll);
	r = r ?: ev(c1, c.wr_out, 2500, 300, "l", 7ll);
	r = r ?: ev(c1, c.rq_out, 30000, 300, "ilii", dev, 64ll, 8, 0);
	r = r ?: ev(c1, c.rq_out, 30500, 300, "ilii", dev, 128ll, 8, 0);
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

static const struct trawl_analysis_row *find_label(const struct trawl_analysis *a,
						   enum trawl_analysis_row_kind k, const char *l)
{
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		if (r->kind == k && !strcmp(r->label, l))
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
	/* b ran 10000 ns: 7000 as b, then, after its exec at 17000, 3000 as bb */
	r = find_label(a, TRAWL_ANALYSIS_THREAD, "b (200)");
	is_int(r ? r->sum : -1, 7000, "cputop: b ran 7000 ns as b, up to its exec");
	r = find_label(a, TRAWL_ANALYSIS_THREAD, "bb (200)");
	is_int(r ? r->sum : -1, 3000, "cputop: ... and 3000 ns as bb, its new name, from the exec");
	r = find(a, TRAWL_ANALYSIS_THREAD, 300);
	is_int(r ? r->sum : -1, 29500, "cputop: c ran 29500 ns");
	r = find(a, TRAWL_ANALYSIS_THREAD, 400);
	is_int(r ? r->sum : -1, 2500, "cputop: x, running when the trace starts, counts from there: 500 + 2000 ns");
	ok(!find(a, TRAWL_ANALYSIS_THREAD, 0), "cputop: the idle thread is left out");
	r = find(a, TRAWL_ANALYSIS_CPU, 0);
	is_int(r ? r->sum : -1, 19000, "cputop: CPU 0 busy 19000 ns");
	trawl_analysis_free(a);

	a = run(dir, "syscalls", NULL);
	r = a ? find_label(a, TRAWL_ANALYSIS_SYSCALL, "read") : NULL;
	ok(r && trawl_analysis_nrows(a) == 2 && r->count == 2 &&
	   r->min == 2000 && r->max == 3000 && r->sum == 5000 && r->errors == 1,
	   "syscalls: read: 2, min 2000, max 3000, 1 error");
	r = a ? find_label(a, TRAWL_ANALYSIS_SYSCALL, "write") : NULL;
	ok(r && r->count == 2 && r->min == 500 && r->max == 1000 && r->errors == 0,
	   "syscalls: write: 2 (b's and c's), min 500, max 1000");
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
	ok(r && r->count == 2 && r->sum == 28500 && r->bytes == 8192 && !strcmp(r->label, "(8,0)"),
	   "iolatency: disk (8,0): two requests, 16000 + 12500 ns, 8192 bytes");
	r = find_label(a, TRAWL_ANALYSIS_THREAD, "b (200)");
	const struct trawl_analysis_row *r2 = find_label(a, TRAWL_ANALYSIS_THREAD, "bb (200)");
	ok(r && r->count == 1 && r->sum == 16000 && r->bytes == 4096 && r2 && r2->count == 1 &&
	   r2->sum == 12500 && r2->bytes == 4096,
	   "iolatency: issued by b before its exec (b (200), 16000 ns), and after it (bb (200), 12500 ns)");
	r = find_label(a, TRAWL_ANALYSIS_SYSCALL, "Read");
	ok(r && r->count == 2 && r->bytes == 10 && r->errors == 1, "iolatency: Read: 2, 10 bytes, 1 error");
	r = find_label(a, TRAWL_ANALYSIS_SYSCALL, "Write");
	ok(r && r->count == 2 && r->bytes == 12, "iolatency: Write: 2, 12 bytes");
	size_t nproc = 0;
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++)
		nproc += trawl_analysis_row_at(a, i)->kind == TRAWL_ANALYSIS_PROCESS;
	r = find(a, TRAWL_ANALYSIS_PROCESS, 90);
	ok(nproc == 3 && r && !strcmp(r->label, "a (90)") && r->count == 2 && r->sum == 5000 &&
	   r->errors == 1 && r->read_bytes == 10 && r->write_bytes == 0 && r->bytes == 10,
	   "iolatency: process a (90) (state dump): 2 reads, 5000 ns, 10 bytes read, 1 error (%zu processes)",
	   nproc);
	r = find(a, TRAWL_ANALYSIS_PROCESS, 400);
	ok(r && !strcmp(r->label, "x (400)") && r->count == 1 && r->sum == 500 &&
	   r->read_bytes == 0 && r->write_bytes == 7,
	   "iolatency: c's write in its process x (400) (fork's child_pid), named after x: 7 bytes");
	r = find(a, TRAWL_ANALYSIS_PROCESS, 200);
	ok(r && !strcmp(r->label, "b (200)") && r->count == 1 && r->sum == 1000 && r->write_bytes == 5,
	   "iolatency: b, whose pid the trace never says, alone: 5 bytes written");
	trawl_analysis_free(a);
	struct trawl_analysis_opts o4 = { .sz = sizeof(o4), .tid = 300, .cpu = -1 };
	a = run(dir, "iolatency", &o4);
	nproc = 0;
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++)
		nproc += trawl_analysis_row_at(a, i)->kind == TRAWL_ANALYSIS_PROCESS;
	r = find(a, TRAWL_ANALYSIS_PROCESS, 400);
	ok(nproc == 1 && r && r->count == 1 && r->write_bytes == 7,
	   "iolatency --tid 300: c's process only, c's write only");
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
	ok(a && good == 4 && trawl_analysis_nrows(a) == 2 * 7,
	   "--by host: each host's threads as alone (x 2500, c 29500 ns on both, %d)", good);
	trawl_analysis_free(a);
	/* not --by host: the same tid, the same CPU on two hosts are two rows */
	struct trawl_analysis_opts om = { .sz = sizeof(om), .tid = -1, .cpu = -1 };
	a = run(root, "cputop", &om);
	int x1 = 0, x2 = 0, cpu1 = 0;
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		if (r->kind == TRAWL_ANALYSIS_THREAD && r->id == 400 && r->sum == 2500) {
			x1 += !strcmp(r->host, "h1");
			x2 += !strcmp(r->host, "h2");
		}
		cpu1 += r->kind == TRAWL_ANALYSIS_CPU && r->id == 1;
	}
	ok(a && x1 == 1 && x2 == 1 && cpu1 == 2 && trawl_analysis_nrows(a) == 2 * 7,
	   "two hosts, not --by host: tid 400 of each host its own row (%d, %d), CPU 1 of each "
	   "(%d rows)", x1, x2, cpu1);
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
	/* not --by host: a row per host still (a syscall of each host's
	 * class), the cluster's figure the total's */
	a = run(root, "syscalls", NULL);
	size_t nread = 0, okread = 0;
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		if (r->kind == TRAWL_ANALYSIS_SYSCALL && !strcmp(r->label, "read")) {
			nread++;
			okread += r->count == 2 && r->errors == 1 &&
				  (!strcmp(r->host, "h1") || !strcmp(r->host, "h2"));
		}
	}
	ok(a && trawl_analysis_nrows(a) == 4 && nread == 2 && okread == 2,
	   "two hosts, not --by host: a read row of each host's 2 (%zu rows)",
	   a ? trawl_analysis_nrows(a) : 0);
	f = fopen(path, "w+");
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "a report of two hosts");
	n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "\nh1         read                                2") &&
	   strstr(buf, "\nh2         read                                2") &&
	   strstr(buf, "\nall        total (2 hosts)                     8        0.500        1.625"
		       "        3.000        1.026        2\n"),
	   "two hosts: each host's rows, and the total of both (8 calls, 2 errors)");
	if (f)
		fclose(f);
	ro.modes = TRAWL_ANALYSIS_JSON;
	f = fopen(path, "w+");
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "a JSON report of two hosts");
	n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "\"totals\":[{\"kind\":\"syscall\",\"hosts\":2,\"count\":8,"),
	   "json: the total of both hosts");
	ro.modes = 0;
	if (f)
		fclose(f);
	trawl_analysis_free(a);
	struct trawl_analysis_opts o3 = { .sz = sizeof(o3), .tid = -1, .cpu = -1, .by_host = true };
	a = run(root, "iolatency", &o3);
	f = fopen(path, "w+");
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "an iolatency --by host report");
	n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "\nprocess                      | h1 ") &&
	   strstr(buf, "\nx (400)                      |        1       0.500       0.500 |"
		       "        1       0.500       0.500\n"),
	   "--by host: one line per process, the hosts side by side");
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
	const struct trawl_analysis_row *r = a && trawl_analysis_nrows(a) == 2
						     ? find_label(a, TRAWL_ANALYSIS_SYSCALL, "read") : NULL;
	ok(r && r->count == 2 && r->min == 2000 && r->max == 3000 &&
	   r->errors == 1, "no tid context: syscalls: a's reads (CPU 0's thread), as with it");
	trawl_analysis_free(a);
	a = run(dir, "iolatency", NULL);
	r = find(a, TRAWL_ANALYSIS_PROCESS, 400);
	ok(r && r->write_bytes == 7 && find(a, TRAWL_ANALYSIS_PROCESS, 90),
	   "no tid context: iolatency: the processes as with it");
	trawl_analysis_free(a);
	snprintf(dir, sizeof(dir), "%s/nt", root);
	tap_rm_tree(dir);
}

/*
 * Switches the kernel does not record (docs/kernel.md): on some kernels
 * no event of a CPU's idle thread is recorded, its switch to the thread
 * it wakes included. Thread 300 sleeps on CPU 1 (1000), is woken there
 * (5000, in an IRQ of the idle thread), runs (its switch in missing),
 * reads, sleeps (15000), is woken (16000) and switched in (17000, this
 * time recorded), sleeps (20000). CPU 0, its thread unknown: 500 is
 * forked at 600 (the trace began at 100) and first seen leaving CPU 0 at
 * 900: it ran from its fork, not from the trace's start. filtered: the
 * trace says it recorded some threads only (trawl_pid_filter).
 */
static int write_unseen(const char *dir, bool filtered)
{
	struct ktypes kt;
	struct trawl_ctf_stream_class *sc;
	struct trawl_ctf_writer *w = kwriter(dir, "h9", true, &kt, &sc);
	if (!w)
		return -1;
	if (filtered)
		trawl_ctf_writer_env_int(w, "trawl_pid_filter", 1);
	struct trawl_ctf_event_class *sw = trawl_ctf_writer_event_class(w, sc, "sched_switch",
									 INT64_MIN, kt.sw),
				     *wk = trawl_ctf_writer_event_class(w, sc, "sched_wakeup",
									 INT64_MIN, kt.wk),
				     *si = trawl_ctf_writer_event_class(w, sc, "syscall_entry_read",
									 INT64_MIN, kt.si),
				     *so = trawl_ctf_writer_event_class(w, sc, "syscall_exit_read",
									 INT64_MIN, kt.so),
				     *fk = trawl_ctf_writer_event_class(w, sc, "sched_process_fork",
									 INT64_MIN, kt.fk);
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	struct trawl_ctf_wstream *c1 = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	int r = !c0 || !c1 || !so || !fk;
	r = r ?: ev(c0, wk, 100, 7, "siii", "x", 8, 20, 0);
	r = r ?: ev(c0, fk, 600, 7, "siisii", "x", 7, 7, "kid", 500, 500);
	r = r ?: ev(c0, sw, 900, 500, "siil" "sii", "kid", 500, 20, 1ll, "swapper/0", 0, 20);
	r = r ?: ev(c1, sw, 1000, 300, "siil" "sii", "t", 300, 20, 1ll, "swapper/1", 0, 20);
	r = r ?: ev(c1, wk, 5000, 0, "siii", "t", 300, 20, 1);
	r = r ?: ev(c1, si, 8000, 300, "l", 3ll);
	r = r ?: ev(c1, so, 9000, 300, "l", 10ll);
	r = r ?: ev(c1, sw, 15000, 300, "siil" "sii", "t", 300, 20, 1ll, "swapper/1", 0, 20);
	r = r ?: ev(c1, wk, 16000, 0, "siii", "t", 300, 20, 1);
	r = r ?: ev(c1, sw, 17000, 0, "siil" "sii", "swapper/1", 0, 20, 0ll, "t", 300, 20);
	r = r ?: ev(c1, sw, 20000, 300, "siil" "sii", "t", 300, 20, 1ll, "swapper/1", 0, 20);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

static void unseen(void)
{
	for (int filtered = 0; filtered < 2; filtered++) {
		char dir[600];
		snprintf(dir, sizeof(dir), "%s/unseen%d/kernel", root, filtered);
		ok(write_unseen(dir, filtered) == 0, "a trace lacking a switch onto CPU 1%s",
		   filtered ? ", recorded for some threads only" : "");
		struct trawl_analysis *a = run(dir, "cputop", NULL);
		const struct trawl_analysis_row *r = find(a, TRAWL_ANALYSIS_THREAD, 300);
		/* from the trace's start (100, a thread older than the trace)
		 * to 1000, from its wake-up (5000) to its switch out (15000),
		 * then 17000-20000 */
		ok(r && r->sum == 13900, "cputop: the thread ran from its wake-up where the switch "
		   "onto its CPU is missing (%lld ns, 13900 expected)", r ? (long long)r->sum : -1ll);
		r = find(a, TRAWL_ANALYSIS_CPU, 1);
		ok(r && r->sum == 13900, "cputop: and so did its CPU");
		r = find(a, TRAWL_ANALYSIS_THREAD, 500);
		ok(r && r->sum == 300, "cputop: a thread forked in the trace, first seen leaving a CPU "
		   "whose thread was unknown, ran from its fork (%lld ns, 300 expected)",
		   r ? (long long)r->sum : -1ll);
		ok(a && trawl_analysis_unseen_switches(a, NULL) == (filtered ? 0u : 1u) &&
		   trawl_analysis_unseen_switches(a, "h9") == (filtered ? 0u : 1u) &&
		   trawl_analysis_unseen_switches(a, "other") == 0,
		   filtered ? "not counted as missing where the trace recorded some threads only"
			    : "the missing switch counted, for its host");
		trawl_analysis_free(a);
		a = run(dir, "schedlat", NULL);
		r = find(a, TRAWL_ANALYSIS_THREAD, 300);
		/* the first wait's end is unknown: no sample, and not 5000-17000 */
		ok(r && r->count == 1 && r->max == 1000,
		   "schedlat: the wait whose switch in is missing is no sample (%llu samples, max %lld)",
		   r ? (unsigned long long)r->count : 0ull, r ? (long long)r->max : -1ll);
		trawl_analysis_free(a);
		snprintf(dir, sizeof(dir), "%s/unseen%d", root, filtered);
		tap_rm_tree(dir);
	}
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

	a = run(dir, "iolatency", NULL);
	f = fopen(path, "w+");
	ro.modes = TRAWL_ANALYSIS_STATS;
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "an iolatency report");
	n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "   errors        bytes     read (B)    write (B)\n"
		       "h1         a (90)                              2        2.000        2.500"
		       "        3.000        0.707        1           10           10            0\n"),
	   "text: the process rows, with bytes read and written (one host: its name, no total)");
	if (f)
		fclose(f);
	f = fopen(path, "w+");
	ro.modes = TRAWL_ANALYSIS_JSON;
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "an iolatency JSON report");
	n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	ok(strstr(buf, "{\"kind\":\"process\",\"host\":\"h1\",\"id\":400,\"label\":\"x (400)\",\"count\":1,") &&
	   strstr(buf, "\"errors\":0,\"bytes\":7,\"read_bytes\":0,\"write_bytes\":7,"),
	   "json: x's process row, bytes read and written");
	if (f)
		fclose(f);
	trawl_analysis_free(a);

	/* as the text, every row has its bytes, none too: the failed read
	 * alone (--min 2.5 us) makes a Read row of 0 bytes */
	struct trawl_analysis_opts mo = { .sz = sizeof(mo), .tid = -1, .cpu = -1, .min_ns = 2500 };
	a = run(dir, "iolatency", &mo);
	f = fopen(path, "w+");
	ok(a && f && trawl_analysis_report(a, fileno(f), &ro) == 0, "an iolatency JSON report, --min 2.5us");
	n = f ? fread(buf, 1, sizeof(buf) - 1, (rewind(f), f)) : 0;
	buf[n] = 0;
	size_t nrows = 0, nbytes = 0;
	for (const char *q = strstr(buf, "{\"kind\":"); q; q = strstr(q + 1, "{\"kind\":")) {
		const char *h = strstr(q, "\"hist_us\"");
		const char *b = strstr(q, "\"bytes\":");
		nrows++;
		nbytes += h && b && b < h;
	}
	ok(strstr(buf, "\"label\":\"Read\",\"count\":1,") &&
	   strstr(buf, "\"errors\":1,\"bytes\":0,") && nrows > 1 && nbytes == nrows,
	   "json: the Read row of the failed read, bytes 0; every row has its bytes (%zu of %zu)",
	   nbytes, nrows);
	if (f)
		fclose(f);
	trawl_analysis_free(a);
}

/*
 * What the analyses leave out (trawl_sink_ops.wants): a larger trace, a
 * random mix of their events and of an event none of them wants, read
 * with a worker (batches of a few thousand events) by each analysis alone
 * (the decoder then leaves the others out) and beside a sink that wants
 * everything: every slice's rows equal.
 */
static int write_mix(const char *dir)
{
	struct ktypes kt;
	struct trawl_ctf_stream_class *sc;
	struct trawl_ctf_writer *w = kwriter(dir, "mix", true, &kt, &sc);
	if (!w)
		return -1;
	struct trawl_ctf_type *sw = kt.sw, *wk = kt.wk, *si = kt.si, *so = kt.so, *ii = kt.ii,
			      *io = kt.io, *ri = kt.ri, *ro = kt.ro, *fk = kt.fk,
			      *kf = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, kf, "ptr", kt.s64);
	struct trawl_ctf_event_class *e_sw = trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, sw),
		*e_wk = trawl_ctf_writer_event_class(w, sc, "sched_wakeup", INT64_MIN, wk),
		*e_si = trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", INT64_MIN, si),
		*e_so = trawl_ctf_writer_event_class(w, sc, "syscall_exit_read", INT64_MIN, so),
		*e_wi = trawl_ctf_writer_event_class(w, sc, "syscall_entry_getpid", INT64_MIN, si),
		*e_wo = trawl_ctf_writer_event_class(w, sc, "syscall_exit_getpid", INT64_MIN, so),
		*e_ii = trawl_ctf_writer_event_class(w, sc, "irq_handler_entry", INT64_MIN, ii),
		*e_io = trawl_ctf_writer_event_class(w, sc, "irq_handler_exit", INT64_MIN, io),
		*e_ri = trawl_ctf_writer_event_class(w, sc, "block_rq_issue", INT64_MIN, ri),
		*e_ro = trawl_ctf_writer_event_class(w, sc, "block_rq_complete", INT64_MIN, ro),
		*e_kf = trawl_ctf_writer_event_class(w, sc, "kmem_kfree", INT64_MIN, kf),
		*e_fk = trawl_ctf_writer_event_class(w, sc, "sched_process_fork", INT64_MIN, fk);
	struct trawl_ctf_wstream *cs[2] = { trawl_ctf_writer_stream(w, sc, "channel0", 0),
					    trawl_ctf_writer_stream(w, sc, "channel0", 1) };
	int r = !cs[0] || !cs[1] || !e_kf || !e_fk;
	unsigned seed = 7;
	int32_t cur[2] = { 0, 0 };
	int dev = 8 << 20;
	char comm[2][16];
	/* 20000 steps per CPU, each one or two events, 1 us apart */
	for (uint64_t t = 0; t < 20000 && !r; t++)
		for (int c = 0; c < 2 && !r; c++) {
			struct trawl_ctf_wstream *s = cs[c];
			uint64_t at = 1000 + t * 1000 + (uint64_t)c * 7;
			int32_t tid = cur[c], other = 100 + (int32_t)(rand_r(&seed) % 40) * 2 + c;
			snprintf(comm[0], 16, "t%d", tid);
			snprintf(comm[1], 16, "t%d", other);
			switch (rand_r(&seed) % 8) {
			case 0:
				r = ev(s, e_sw, at, tid, "siil" "sii", comm[0], tid, 20,
				       (long long)(rand_r(&seed) % 3 ? 1 : 0), comm[1], other, 20);
				cur[c] = other;
				break;
			case 1:
				r = ev(s, e_wk, at, tid, "siii", comm[1], other + 1 - 2 * c, 20, c);
				break;
			case 2:
				r = ev(s, e_si, at, tid, "l", 3ll) ?:
				    ev(s, e_so, at + 300 + rand_r(&seed) % 500, tid, "l",
				       (long long)(rand_r(&seed) % 5) - 1);
				break;
			case 3:
				r = ev(s, e_wi, at, tid, "l", 0ll) ?: ev(s, e_wo, at + 100, tid, "l", 7ll);
				break;
			case 4:
				r = ev(s, e_ii, at, tid, "is", 30 + c, "eth") ?:
				    ev(s, e_io, at + 50 + rand_r(&seed) % 200, tid, "ii", 30 + c, 1);
				break;
			case 5: {
				long long sec = (long long)(rand_r(&seed) % 64) * 8;
				r = ev(s, e_ri, at, tid, "ili", dev, sec, 8) ?:
				    ev(s, e_ro, at + 200 + rand_r(&seed) % 400, tid, "ilii", dev, sec, 8, 0);
				break;
			}
			case 6:	/* another thread of the current one's process */
				r = ev(s, e_fk, at, tid, "siisii", comm[0], tid, tid, comm[1], other, tid);
				break;
			default:
				r = ev(s, e_kf, at, tid, "l", (long long)t);
				break;
			}
		}
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

/* Every slice's rows, as text, in the slice's row order. */
struct rows_text {
	char *buf;
	size_t len;
	FILE *f;
};

static void rows_slice(void *arg, const struct trawl_analysis *a)
{
	struct rows_text *t = arg;
	int64_t b, e;
	trawl_analysis_range(a, &b, &e);
	fprintf(t->f, "slice %lld %lld\n", (long long)b, (long long)e);
	for (size_t i = 0; i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		fprintf(t->f, "%d %lld %s %llu %llu %lld %lld %lld %.0f %llu %llu %llu %d", r->kind,
			(long long)r->id, r->label, (unsigned long long)r->count,
			(unsigned long long)r->errors, (long long)r->min, (long long)r->max,
			(long long)r->sum, r->sumsq, (unsigned long long)r->bytes,
			(unsigned long long)r->read_bytes, (unsigned long long)r->write_bytes, r->prio);
		for (int k = 0; k < TRAWL_ANALYSIS_HIST; k++)
			fprintf(t->f, " %llu", (unsigned long long)r->hist[k]);
		fputc('\n', t->f);
	}
}

static int all_start(void *self, struct trawl_reader *r)
{
	(void)self;
	(void)r;
	return 0;
}

static int all_events(void *self, const struct trawl_event *ev, size_t n)
{
	(void)ev;
	*(size_t *)self += n;
	return 0;
}

/* a sink that wants every event (no wants()) */
static const struct trawl_sink_ops all_ops = {
	.sz = sizeof(all_ops), .name = "all", .start = all_start, .events = all_events,
};

/* The analysis' sink, counting the events it gets (wants() passed on). */
struct counted {
	struct trawl_sink in;
	size_t n;
};

static int cnt_start(void *self, struct trawl_reader *r)
{
	struct counted *c = self;
	return c->in.ops->start(c->in.self, r);
}

static int cnt_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct counted *c = self;
	c->n += n;
	return c->in.ops->events(c->in.self, ev, n);
}

static int cnt_finish(void *self, struct trawl_reader *r)
{
	struct counted *c = self;
	return c->in.ops->finish(c->in.self, r);
}

static bool cnt_wants(void *self, const struct trawl_ctf_event_class *cls)
{
	struct counted *c = self;
	return c->in.ops->wants(c->in.self, cls);
}

static const struct trawl_sink_ops counted_ops = {
	.sz = sizeof(counted_ops), .name = "counted", .start = cnt_start, .events = cnt_events,
	.finish = cnt_finish, .wants = cnt_wants,
};

/* The rows of analysis name on dir with a worker, alone or beside the
 * sink that wants everything; interval in ns (0: none). *nall: the
 * events the second sink got; *ngot: those the analysis got. */
static char *mix_rows(const char *dir, const char *name, int64_t interval, bool beside,
		      size_t *nall, size_t *ngot)
{
	char err[256];
	const char *p[] = { dir };
	struct rows_text t = { 0 };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 2 };
	struct trawl_analysis_opts o = { .sz = sizeof(o), .name = name, .tid = -1, .cpu = -1,
					 .interval_ns = interval, .period = rows_slice, .arg = &t };
	struct trawl_reader *r = trawl_reader_new(p, 1, &ro, err, sizeof(err));
	struct trawl_analysis *a = r ? trawl_analysis_new(&o, err, sizeof(err)) : NULL;
	t.f = open_memstream(&t.buf, &t.len);
	*nall = 0;
	struct counted cs = { a ? trawl_analysis_sink(a) : (struct trawl_sink){ 0 }, 0 };
	struct trawl_sink ks[2] = { { &counted_ops, &cs }, { &all_ops, nall } };
	if (!a || !t.f || trawl_pipe_run(r, ks, beside ? 2 : 1, NULL) != 0) {
		printf("# %s: %s\n", name, err);
		if (t.f)
			fclose(t.f);
		free(t.buf);
		t.buf = NULL;
	} else {
		fclose(t.f);
	}
	*ngot = cs.n;
	trawl_analysis_free(a);
	trawl_reader_free(r);
	return t.buf;
}

static void left_out(void)
{
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/mix", root);
	ok(write_mix(dir) == 0, "left out: a trace of 2 x 20000 random steps");
	for (size_t i = 0; trawl_analysis_name(i, NULL); i++) {
		const char *name = trawl_analysis_name(i, NULL);
		for (int k = 0; k < 2; k++) {
			int64_t iv = k ? 3000000 : 0;	/* 3 ms slices: about 7 */
			size_t nall = 0, nalone = 0;
			size_t got_alone = 0, got_beside = 0;
			char *alone = mix_rows(dir, name, iv, false, &nalone, &got_alone);
			char *beside = mix_rows(dir, name, iv, true, &nall, &got_beside);
			size_t rows = 0;
			for (const char *c = alone; c && *c; c++)
				rows += *c == '\n';
			ok(alone && beside && !strcmp(alone, beside) && rows > (k ? 10u : 2u),
			   "left out: %s%s, alone and beside a sink of every event (%zu events): "
			   "the same %zu lines of rows", name, k ? " --interval 3ms" : "", nall, rows);
			/* and something was left out alone (kmem_kfree at least,
			 * a quarter of the mix), nothing beside */
			ok(got_beside == nall && got_alone < nall - nall / 5,
			   "left out: %s%s alone got %zu of %zu events", name,
			   k ? " --interval 3ms" : "", got_alone, nall);
			free(alone);
			free(beside);
		}
	}
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
	unseen();
	left_out();
	if (!getenv("KEEP"))
		tap_rm_tree(root);
	return done_testing();
}
