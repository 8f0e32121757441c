/* SPDX-License-Identifier: MIT */
/*
 * test-names-exec: a thread that calls exec is its new name from the exec
 * on, in every analysis and in agg's comm key, and a filter by name
 * (--comm) selects the time the table shows under that name. The trace,
 * written here with LTTng's names (one host, one CPU, the tid context):
 *
 *   1000  sched_switch swapper/0 (0) -> work.sh (500)
 *   1500  sched_process_fork work.sh (500) -> work.sh (501), pid 501
 *   2000  sched_switch work.sh (500, asleep) -> work.sh (501)   500 ran 1000
 *   2500  syscall_entry_read (501)   3000 exit ret 1      (500 ns, as work.sh)
 *   4000  sched_process_exec 501 /usr/bin/curl            501 ran 2000 as work.sh
 *   5000  syscall_entry_read (501)   7000 exit ret 2      (2000 ns, as curl)
 *   8000  sched_switch curl (501, asleep) -> swapper/0    4000 as curl
 *   9000  sched_wakeup curl (501)
 *   9500  sched_switch swapper/0 -> curl (501)            (woken 500 ns, as curl)
 *  10500  sched_switch curl (501, asleep) -> swapper/0    1000 more as curl
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kev.h"
#include "tap.h"
#include "trawl/agg.h"
#include "trawl/analysis.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-names-exec-XXXXXX";
#define T0 1000000000ull


static int write_trace(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "n1", .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w), *sw = trawl_ctf_type_struct(w),
			      *wk = trawl_ctf_type_struct(w), *si = trawl_ctf_type_struct(w),
			      *so = trawl_ctf_type_struct(w), *fk = trawl_ctf_type_struct(w),
			      *ex = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
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
	trawl_ctf_struct_add(w, fk, "parent_comm", str);
	trawl_ctf_struct_add(w, fk, "parent_tid", s32);
	trawl_ctf_struct_add(w, fk, "parent_pid", s32);
	trawl_ctf_struct_add(w, fk, "child_comm", str);
	trawl_ctf_struct_add(w, fk, "child_tid", s32);
	trawl_ctf_struct_add(w, fk, "child_pid", s32);
	trawl_ctf_struct_add(w, ex, "filename", str);
	trawl_ctf_struct_add(w, ex, "tid", s32);
	trawl_ctf_struct_add(w, ex, "old_tid", s32);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, ctx);
	struct trawl_ctf_event_class *csw = trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, sw),
		*cwk = trawl_ctf_writer_event_class(w, sc, "sched_wakeup", INT64_MIN, wk),
		*csi = trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", INT64_MIN, si),
		*cso = trawl_ctf_writer_event_class(w, sc, "syscall_exit_read", INT64_MIN, so),
		*cfk = trawl_ctf_writer_event_class(w, sc, "sched_process_fork", INT64_MIN, fk),
		*cex = trawl_ctf_writer_event_class(w, sc, "sched_process_exec", INT64_MIN, ex);
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	int r = !c0 || !cex;
	r = r ?: kev(c0, csw, 1000, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "work.sh", 500, 20);
	r = r ?: kev(c0, cfk, 1500, 500, "siisii", "work.sh", 500, 500, "work.sh", 501, 501);
	r = r ?: kev(c0, csw, 2000, 500, "siil" "sii", "work.sh", 500, 20, 1ll, "work.sh", 501, 20);
	r = r ?: kev(c0, csi, 2500, 501, "l", 3ll);
	r = r ?: kev(c0, cso, 3000, 501, "l", 1ll);
	r = r ?: kev(c0, cex, 4000, 501, "sii", "/usr/bin/curl", 501, 501);
	r = r ?: kev(c0, csi, 5000, 501, "l", 3ll);
	r = r ?: kev(c0, cso, 7000, 501, "l", 2ll);
	r = r ?: kev(c0, csw, 8000, 501, "siil" "sii", "curl", 501, 20, 1ll, "swapper/0", 0, 20);
	r = r ?: kev(c0, cwk, 9000, 0, "siii", "curl", 501, 20, 0);
	r = r ?: kev(c0, csw, 9500, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "curl", 501, 20);
	r = r ?: kev(c0, csw, 10500, 501, "siil" "sii", "curl", 501, 20, 1ll, "swapper/0", 0, 20);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

static struct trawl_analysis *run(const char *dir, const char *name, const char *comm)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_analysis_opts o = { .sz = sizeof(o), .name = name, .tid = -1, .cpu = -1,
					 .comm = comm, .keep_samples = true };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_analysis *a = r ? trawl_analysis_new(&o, err, sizeof(err)) : NULL;
	struct trawl_sink s = a ? trawl_analysis_sink(a) : (struct trawl_sink){ 0 };
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	if (!a || trawl_pipe_run(r, &s, 1, &ro) != 0) {
		printf("# %s: %s\n", name, err);
		trawl_analysis_free(a);
		a = NULL;
	}
	trawl_reader_free(r);
	return a;
}

/* "label=sum" of the rows of kind, in the rows' order, into b */
static const char *rows(const struct trawl_analysis *a, enum trawl_analysis_row_kind k, char *b,
			size_t n)
{
	size_t o = 0;
	b[0] = 0;
	for (size_t i = 0; a && i < trawl_analysis_nrows(a); i++) {
		const struct trawl_analysis_row *r = trawl_analysis_row_at(a, i);
		if (r->kind == k && o < n)
			o += (size_t)snprintf(b + o, n - o, "%s%s=%lld/%llu", o ? " " : "", r->label,
					      (long long)r->sum, (unsigned long long)r->count);
	}
	return b;
}

static void analyses(const char *dir)
{
	char b[512], b2[512];
	struct trawl_analysis *a = run(dir, "cputop", NULL);
	is_str(rows(a, TRAWL_ANALYSIS_THREAD, b, sizeof(b)),
	       "work.sh (500)=1000/1 work.sh (501)=2000/1 curl (501)=5000/2",
	       "cputop: 501 ran 2000 ns as work.sh up to its exec, then 5000 as curl");
	/* the samples: their names as the rows' */
	int good = 0;
	for (size_t i = 0; a && i < trawl_analysis_nsamples(a); i++) {
		const struct trawl_analysis_sample *s = trawl_analysis_sample_at(a, i);
		if (s->row->kind == TRAWL_ANALYSIS_THREAD && s->tid == 501)
			good += !strcmp(s->comm, s->dur == 2000 ? "work.sh" : "curl");
	}
	is_int(good, 3, "cputop: the samples of 501 named as their rows (1 work.sh, 2 curl)");
	trawl_analysis_free(a);

	a = run(dir, "cputop", "curl");
	is_str(rows(a, TRAWL_ANALYSIS_THREAD, b, sizeof(b)), "curl (501)=5000/2",
	       "cputop --comm curl: the curl row, the time the table shows (5000 ns)");
	is_str(rows(a, TRAWL_ANALYSIS_CPU, b2, sizeof(b2)), "CPU 0=5000/2",
	       "cputop --comm curl: CPU 0's time is curl's");
	trawl_analysis_free(a);
	a = run(dir, "cputop", "work.sh");
	is_str(rows(a, TRAWL_ANALYSIS_THREAD, b, sizeof(b)), "work.sh (500)=1000/1 work.sh (501)=2000/1",
	       "cputop --comm work.sh: the shell and 501 before its exec");
	trawl_analysis_free(a);

	a = run(dir, "syscalls", "curl");
	is_str(rows(a, TRAWL_ANALYSIS_SYSCALL, b, sizeof(b)), "read=2000/1",
	       "syscalls --comm curl: the read after the exec only");
	trawl_analysis_free(a);
	a = run(dir, "syscalls", "work.sh");
	is_str(rows(a, TRAWL_ANALYSIS_SYSCALL, b, sizeof(b)), "read=500/1",
	       "syscalls --comm work.sh: the read before the exec only");
	trawl_analysis_free(a);

	a = run(dir, "schedlat", NULL);
	is_str(rows(a, TRAWL_ANALYSIS_THREAD, b, sizeof(b)), "curl (501)=500/1",
	       "schedlat: the wake-up after the exec is curl's");
	trawl_analysis_free(a);
	a = run(dir, "schedlat", "curl");
	is_str(rows(a, TRAWL_ANALYSIS_THREAD, b, sizeof(b)), "curl (501)=500/1",
	       "schedlat --comm curl: the same");
	trawl_analysis_free(a);

	a = run(dir, "iolatency", NULL);
	is_str(rows(a, TRAWL_ANALYSIS_PROCESS, b, sizeof(b)), "curl (501)=2500/2",
	       "iolatency: the process named after its main thread's last name (curl), "
	       "both reads (pid 501)");
	trawl_analysis_free(a);
}

/* agg's comm key: the thread's name when the event came */
static void agg(const char *dir)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_agg_opts o = { .sz = sizeof(o),
				    .spec = "sum(syscall_exit_read.ret) by comm; "
					    "count(sched_switch) by comm" };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_agg *a = r ? trawl_agg_new(&o, err, sizeof(err)) : NULL;
	struct trawl_sink s = a ? trawl_agg_sink(a) : (struct trawl_sink){ 0 };
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	ok(a && trawl_pipe_run(r, &s, 1, &ro) == 0, "agg: the trace (%s)", a ? trawl_agg_error(a) : err);
	char b[256] = "";
	for (size_t i = 0; a && i < 2; i++) {
		size_t o2 = strlen(b);
		for (size_t k = 0; k < trawl_agg_nrows(a, i); k++) {
			struct trawl_agg_row row = { .sz = sizeof(row) };
			if (trawl_agg_row(a, i, k, &row) == 0)
				o2 += (size_t)snprintf(b + o2, sizeof(b) - o2, "%s=%g ", row.key[0],
						       i ? (double)row.count : row.sum);
		}
		if (o2 < sizeof(b))
			b[o2++] = '|', b[o2] = 0;
	}
	/* the switches: by the comm of the event's thread (the tid context) */
	is_str(b, "curl=2 work.sh=1 |curl=2 swapper/0=2 work.sh=1 |",
	       "agg by comm: the read after the exec is curl's, the one before work.sh's");
	trawl_agg_free(a);
	trawl_reader_free(r);
}

int main(void)
{
	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	ok(write_trace(dir) == 0, "a kernel trace with an exec");
	analyses(dir);
	agg(dir);
	tap_rm_tree(root);
	return done_testing();
}
