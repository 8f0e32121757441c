/* SPDX-License-Identifier: MIT */
/*
 * test-top: lib/top (trawl/top.h) on a simulated session of 3 hosts:
 *  - options: an interval under 1 ms, a short struct: EINVAL;
 *  - the history is bounded: with history 0.3 s of 0.1 s slices, 3 kept,
 *    the others dropped (their count), the newest kept in order, their
 *    bounds contiguous;
 *  - every slice went to the callback once, in order;
 *  - queries: a slice out of range -ERANGE, a bad view -EINVAL; the
 *    per-host rows of each host add up to the grouped ones (CPU time of
 *    the cpu view, counts of syscalls), the hosts' events to every event
 *    the run read; processes are their threads summed; sorted as asked;
 *    the filters keep what they say;
 *  - a thread that execs is named after its new program, in the thread
 *    and the process views, whatever order its rows of each name come in.
 */
#include <errno.h>
#include <stdarg.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <trawl/ctf.h>
#include <trawl/pipe.h>
#include <trawl/sim.h>
#include <trawl/top.h>

#include "kev.h"
#include "tap.h"

static char trash[64];

struct seen {
	size_t calls;
	int64_t last_end;
	bool order;
	uint64_t events;		/* the hosts' events, every slice */
};

static void on_slice(void *arg, struct trawl_top *t)
{
	struct seen *s = arg;
	size_t i = trawl_top_nslices(t) - 1;
	int64_t b, e;
	trawl_top_slice_range(t, i, &b, &e);
	if (s->calls && b != s->last_end)
		s->order = false;
	s->last_end = e;
	s->calls++;
	for (size_t h = 0; h < trawl_top_nhosts(t, i); h++)
		s->events += trawl_top_host_at(t, i, h)->events;
}

static double sum_col(const struct trawl_top_row *r, size_t n, enum trawl_top_column c,
		      const char *host)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		if (!host || !strcmp(r[i].host, host))
			s += r[i].v[c];
	return s;
}


/* The history's cap: what a slice showed while newest, against what it
 * shows once newer ones closed (history_rows 2: per host the 2 first
 * threads and syscalls, the others one row "other"). */
#define CAP_MAX 64
struct capseen {
	size_t n;
	double cpu[CAP_MAX], calls[CAP_MAX];	/* the sums of the views */
	size_t most[CAP_MAX];			/* a host's thread rows at most */
};

static void view_of(const struct trawl_top *t, size_t i, enum trawl_top_view v, double *sum,
		    size_t *most)
{
	struct trawl_top_query q = { .sz = sizeof(q), .view = v, .slice = i, .threads = true,
				     .sort = TRAWL_TOP_NCOLS };
	struct trawl_top_row *rows = NULL;
	size_t n = 0;
	*sum = 0;
	*most = 0;
	if (trawl_top_query(t, &q, &rows, &n))
		return;
	for (size_t k = 0; k < n; k++) {
		size_t per = 0;
		for (size_t j = 0; j < n; j++)
			per += !strcmp(rows[j].host, rows[k].host);
		*most = per > *most ? per : *most;
		*sum += rows[k].v[v == TRAWL_TOP_CPU ? TRAWL_TOP_COL_SUM : TRAWL_TOP_COL_COUNT];
	}
	free(rows);
}

static void on_cap_slice(void *arg, struct trawl_top *t)
{
	struct capseen *c = arg;
	size_t i = trawl_top_nslices(t) - 1, m;
	if (c->n == CAP_MAX || i != c->n)
		return;
	view_of(t, i, TRAWL_TOP_CPU, &c->cpu[i], &c->most[i]);
	view_of(t, i, TRAWL_TOP_SYSCALLS, &c->calls[i], &m);
	c->n++;
}

static void history_cap(const char *dir)
{
	struct capseen c = { .n = 0 };
	char err[512] = "";
	struct trawl_top_opts o = { .sz = sizeof(o), .interval_ns = 100000000,
				    .history_ns = 100 * 100000000LL, .history_rows = 2,
				    .slice = on_cap_slice, .arg = &c };
	struct trawl_top *t = trawl_top_new(&o, err, sizeof(err));
	const char *paths[] = { dir };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	struct trawl_sink sk = t ? trawl_top_sink(t) : (struct trawl_sink){ 0 };
	struct trawl_run_opts run = { .sz = sizeof(run) };
	int rc = t && r ? trawl_pipe_run(r, &sk, 1, &run) : -1;
	if (!ok(rc == 0 && c.n >= 3 &&
		trawl_top_nslices(t) == c.n, "history_rows 2: a run of %zu slices, all kept", c.n)) {
		trawl_reader_free(r);
		trawl_top_free(t);
		return;
	}
	size_t wide = 0, capped = 0, same = 0, mostnow = 0;
	for (size_t i = 0; i + 1 < c.n; i++) {
		double cpu, calls;
		size_t most, m;
		view_of(t, i, TRAWL_TOP_CPU, &cpu, &most);
		view_of(t, i, TRAWL_TOP_SYSCALLS, &calls, &m);
		wide += c.most[i] > 3;
		capped += most <= 3 && m <= 3;
		mostnow = most > mostnow ? most : mostnow;
		same += cpu == c.cpu[i] && calls == c.calls[i];
	}
	ok(wide > 0, "%zu of the %zu older slices had more than 3 threads on a host when newest",
	   wide, c.n - 1);
	is_int(capped, c.n - 1, "... each older slice: 2 threads and 2 syscalls a host, and other "
	       "(at most %zu rows a host)", mostnow);
	is_int(same, c.n - 1, "... with the same CPU time and syscall count in all, as when newest");
	double cpu;
	size_t most;
	view_of(t, c.n - 1, TRAWL_TOP_CPU, &cpu, &most);
	ok(cpu == c.cpu[c.n - 1] && most == c.most[c.n - 1], "the newest keeps every row (%zu a host)",
	   most);
	trawl_reader_free(r);
	trawl_top_free(t);
}

/* Thread 100 ("old") runs 0.1-0.3 s, execs /usr/bin/newprog at 0.2 s
 * (then "newprog", a second name), runs to 0.3 s; 0.5 s: the end. */
static int write_exec(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "hx", .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10),
			      *s64 = trawl_ctf_type_int(w, 64, true, 10),
			      *str = trawl_ctf_type_string(w), *ctx = trawl_ctf_type_struct(w),
			      *sw = trawl_ctf_type_struct(w), *ex = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_comm", str);
	trawl_ctf_struct_add(w, sw, "prev_tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_prio", s32);
	trawl_ctf_struct_add(w, sw, "prev_state", s64);
	trawl_ctf_struct_add(w, sw, "next_comm", str);
	trawl_ctf_struct_add(w, sw, "next_tid", s32);
	trawl_ctf_struct_add(w, sw, "next_prio", s32);
	trawl_ctf_struct_add(w, ex, "filename", str);
	trawl_ctf_struct_add(w, ex, "tid", s32);
	trawl_ctf_struct_add(w, ex, "old_tid", s32);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, ctx);
	struct trawl_ctf_event_class *esw = trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, sw),
				     *eex = trawl_ctf_writer_event_class(w, sc, "sched_process_exec",
									 INT64_MIN, ex);
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	int r = !c0 || !eex;
	r = r ?: kev(c0, esw, 0, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "swapper/0", 0, 20);
	r = r ?: kev(c0, esw, 100000000, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "old", 100, 20);
	r = r ?: kev(c0, eex, 200000000, 100, "sii", "/usr/bin/newprog", 100, 100);
	r = r ?: kev(c0, esw, 300000000, 100, "siil" "sii", "newprog", 100, 20, 1ll, "swapper/0", 0, 20);
	r = r ?: kev(c0, esw, 500000000, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "swapper/0", 0, 20);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

static void exec_name(void)
{
	char dir[128], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/exec/kernel", trash);
	ok(write_exec(dir) == 0, "a trace of a thread that execs");
	struct trawl_top_opts o = { .sz = sizeof(o), .interval_ns = 1000000000 };
	struct trawl_top *t = trawl_top_new(&o, err, sizeof(err));
	const char *paths[] = { dir };
	struct trawl_reader *r = t ? trawl_reader_new(paths, 1, NULL, err, sizeof(err)) : NULL;
	struct trawl_sink sk = t ? trawl_top_sink(t) : (struct trawl_sink){ 0 };
	struct trawl_run_opts run = { .sz = sizeof(run) };
	ok(r && trawl_pipe_run(r, &sk, 1, &run) == 0 && trawl_top_nslices(t) == 1,
	   "top over it: one slice (%s)", err);
	for (int threads = 0; threads < 2 && r; threads++) {
		struct trawl_top_query q = { .sz = sizeof(q), .slice = 0, .view = TRAWL_TOP_CPU,
					     .sort = TRAWL_TOP_NCOLS, .threads = threads };
		struct trawl_top_row *rows = NULL;
		size_t n = 0;
		int rc = trawl_top_query(t, &q, &rows, &n);
		const struct trawl_top_row *x = NULL;
		for (size_t i = 0; !rc && i < n; i++)
			if (rows[i].pid == 100)
				x = &rows[i];
		ok(x && !strcmp(x->name, "newprog") && x->v[TRAWL_TOP_COL_SUM] == 200000000,
		   "%s view: the thread is its new program's name, its time both names' (%s, %.0f ns)",
		   threads ? "the thread" : "the process", x ? x->name : "(none)",
		   x ? x->v[TRAWL_TOP_COL_SUM] : -1);
		free(rows);
	}
	trawl_reader_free(r);
	trawl_top_free(t);
}

/* Host `host`'s kernel trace: late == 0, switches at 0, 0.1, 0.3 and 0.5 s
 * (swapper only); late == 1, its first events system calls of thread 200
 * at 0.2 and 0.25 s (a class cputop does not want), then 200 switched out
 * at 0.4 s. */
static int write_host(const char *dir, const char *host, int late)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = host, .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10),
			      *s64 = trawl_ctf_type_int(w, 64, true, 10),
			      *str = trawl_ctf_type_string(w), *ctx = trawl_ctf_type_struct(w),
			      *sw = trawl_ctf_type_struct(w), *sys = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_comm", str);
	trawl_ctf_struct_add(w, sw, "prev_tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_prio", s32);
	trawl_ctf_struct_add(w, sw, "prev_state", s64);
	trawl_ctf_struct_add(w, sw, "next_comm", str);
	trawl_ctf_struct_add(w, sw, "next_tid", s32);
	trawl_ctf_struct_add(w, sw, "next_prio", s32);
	trawl_ctf_struct_add(w, sys, "nr", s32);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, ctx);
	struct trawl_ctf_event_class *esw = trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, sw),
				     *esy = trawl_ctf_writer_event_class(w, sc, "syscall_entry_getppid",
									 INT64_MIN, sys);
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	int r = !c0 || !esy;
	if (!late) {
		for (int k = 0; k < 4; k++)
			r = r ?: kev(c0, esw, (uint64_t)(int[]){ 0, 100, 300, 500 }[k] * 1000000, 0,
				     "siil" "sii", "swapper/0", 0, 20, 0ll, "swapper/0", 0, 20);
	} else {
		r = r ?: kev(c0, esy, 200000000, 200, "i", 110);
		r = r ?: kev(c0, esy, 250000000, 200, "i", 110);
		r = r ?: kev(c0, esw, 400000000, 200, "siil" "sii", "late", 200, 20, 1ll, "swapper/0", 0, 20);
	}
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

/*
 * top gives each analysis only the classes it wants (and each chunk's
 * ends), so a host whose trace starts later with a system call would start,
 * for cputop, at its first switch. Thread 200 of the later host, first
 * seen leaving its CPU at 0.4 s, ran from that host's first event (0.2 s):
 * 200 ms, as `trawl analyze cputop` counts it. Read with a worker, in
 * batches. (The run may still hand the later host's first event over at
 * the start of a call, where it reaches every analysis anyway: this checks
 * the answer, not that feed() alone gives it.)
 */
static void late_host(void)
{
	char da[128], db[128], err[512] = "";
	snprintf(da, sizeof(da), "%s/late/ha/kernel", trash);
	snprintf(db, sizeof(db), "%s/late/hb/kernel", trash);
	ok(write_host(da, "ha", 0) == 0 && write_host(db, "hb", 1) == 0,
	   "two hosts, the second's trace starting later with a system call");
	struct trawl_top_opts o = { .sz = sizeof(o), .interval_ns = 1000000000 };
	struct trawl_top *t = trawl_top_new(&o, err, sizeof(err));
	const char *paths[] = { da, db };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 2 };
	struct trawl_reader *r = t ? trawl_reader_new(paths, 2, &ro, err, sizeof(err)) : NULL;
	struct trawl_sink sk = t ? trawl_top_sink(t) : (struct trawl_sink){ 0 };
	struct trawl_run_opts run = { .sz = sizeof(run) };
	ok(r && trawl_pipe_run(r, &sk, 1, &run) == 0 && trawl_top_nslices(t) == 1,
	   "top over both: one slice (%s)", err);
	struct trawl_top_query q = { .sz = sizeof(q), .slice = 0, .view = TRAWL_TOP_CPU,
				     .sort = TRAWL_TOP_NCOLS, .threads = 1 };
	struct trawl_top_row *rows = NULL;
	size_t n = 0;
	int rc = r ? trawl_top_query(t, &q, &rows, &n) : -1;
	const struct trawl_top_row *x = NULL;
	for (size_t i = 0; !rc && i < n; i++)
		if (rows[i].tid == 200 && !strcmp(rows[i].host, "hb"))
			x = &rows[i];
	ok(x && x->v[TRAWL_TOP_COL_SUM] == 200000000,
	   "the later host's thread ran from its host's first event: 200 ms (%.0f ns)",
	   x ? x->v[TRAWL_TOP_COL_SUM] : -1);
	free(rows);
	trawl_reader_free(r);
	trawl_top_free(t);
}

int main(void)
{
	alarm(120);
	snprintf(trash, sizeof(trash), "/tmp/trawl-test-top-XXXXXX");
	if (!mkdtemp(trash)) {
		perror("mkdtemp");
		return 1;
	}
	char err[512] = "", dir[128];
	snprintf(dir, sizeof(dir), "%s/s", trash);
	struct trawl_sim_opts so = { .sz = sizeof(so), .output = dir, .hosts = 3, .cpus = 2,
				     .events = 60000, .seed = 7 };
	struct trawl_sim *sim = trawl_sim_new(&so, err, sizeof(err));
	ok(sim && trawl_sim_run(sim, err, sizeof(err)) == 0, "a simulated session (%s)", err);
	trawl_sim_free(sim);

	struct trawl_top_opts o = { .sz = sizeof(o), .interval_ns = 999999 };
	errno = 0;
	ok(!trawl_top_new(&o, err, sizeof(err)) && errno == EINVAL, "an interval under 1 ms: EINVAL (%s)", err);
	o.interval_ns = 100000000;
	o.sz = 8;
	errno = 0;
	ok(!trawl_top_new(&o, err, sizeof(err)) && errno == EINVAL, "a short options struct: EINVAL");

	struct seen seen = { .order = true };
	err[0] = 0;
	o = (struct trawl_top_opts){ .sz = sizeof(o), .interval_ns = 100000000,
				     .history_ns = 300000000, .slice = on_slice, .arg = &seen };
	struct trawl_top *t = trawl_top_new(&o, err, sizeof(err));
	ok(t != NULL, "a top of 0.1 s slices, 0.3 s of history (%s)", err);
	const char *paths[] = { dir };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	struct trawl_count *cnt = trawl_count_new();
	struct trawl_sink sinks[2] = { trawl_top_sink(t), trawl_count_sink(cnt) };
	struct trawl_run_opts run = { .sz = sizeof(run) };
	is_int(trawl_pipe_run(r, sinks, 2, &run), 0, "the run");
	ok(seen.calls >= 9, "slices: %zu (a session of about 1 s)", seen.calls);
	ok(seen.order, "each slice to the callback once, contiguous, in order");
	is_int(trawl_top_nslices(t), 3, "the history keeps 3 (0.3 s of 0.1 s slices)");
	is_int(trawl_top_dropped(t), seen.calls - 3, "... the others dropped");
	int64_t b, e, pe = 0;
	bool contig = true;
	for (size_t i = 0; i < 3; i++) {
		trawl_top_slice_range(t, i, &b, &e);
		if (i && b != pe)
			contig = false;
		pe = e;
	}
	ok(contig && pe == seen.last_end, "... the newest, contiguous, the last the callback's last");
	is_int(seen.events, trawl_count_total(cnt), "the hosts' events over the slices: every event read");
	ok(trawl_top_slice_range(t, 3, &b, &e) == -ERANGE, "a slice past the history: -ERANGE");

	struct trawl_top_row *rows = NULL, *grp = NULL, *thr = NULL;
	size_t n = 0, ng = 0, nt = 0;
	struct trawl_top_query q = { .sz = sizeof(q), .slice = 3, .sort = TRAWL_TOP_NCOLS };
	is_int(trawl_top_query(t, &q, &rows, &n), -ERANGE, "query: a slice out of range: -ERANGE");
	q.slice = 1;
	q.view = TRAWL_TOP_NVIEWS;
	is_int(trawl_top_query(t, &q, &rows, &n), -EINVAL, "query: no such view: -EINVAL");

	/* per host, grouped, threads: the same CPU time */
	q.view = TRAWL_TOP_CPU;
	int rc = trawl_top_query(t, &q, &rows, &n);
	ok(!rc && n > 0, "the cpu view per process: %zu rows", n);
	struct trawl_top_query qg = q;
	qg.group = true;
	rc = trawl_top_query(t, &qg, &grp, &ng);
	ok(!rc && ng > 0 && ng < n, "grouped: %zu rows", ng);
	struct trawl_top_query qt = q;
	qt.threads = true;
	rc = trawl_top_query(t, &qt, &thr, &nt);
	ok(!rc && nt >= n, "per thread: %zu rows", nt);
	double ps = sum_col(rows, n, TRAWL_TOP_COL_SUM, NULL);
	ok(ps > 0 && ps == sum_col(grp, ng, TRAWL_TOP_COL_SUM, NULL) &&
	   ps == sum_col(thr, nt, TRAWL_TOP_COL_SUM, NULL),
	   "the CPU time: per process = grouped = per thread (%.0f ns)", ps);
	bool sorted = true, star = true;
	for (size_t i = 1; i < n; i++)
		sorted &= rows[i - 1].v[TRAWL_TOP_COL_CPU_PCT] >= rows[i].v[TRAWL_TOP_COL_CPU_PCT];
	for (size_t i = 0; i < ng; i++)
		star &= !strcmp(grp[i].host, "*") && grp[i].nhosts >= 1 && grp[i].nhosts <= 3;
	ok(sorted, "sorted by CPU%%, descending (the view's first column)");
	ok(star, "grouped rows: host *, 1 to 3 hosts each");
	/* a grouped row's CPU time: the per-host rows of its name */
	bool gsum = true;
	for (size_t i = 0; i < ng; i++) {
		double s = 0;
		for (size_t j = 0; j < n; j++)
			if (!strcmp(rows[j].name, grp[i].name))
				s += rows[j].v[TRAWL_TOP_COL_SUM];
		gsum &= s == grp[i].v[TRAWL_TOP_COL_SUM];
	}
	ok(gsum, "each grouped row: the per-host rows of its name summed");
	free(rows);
	free(grp);
	free(thr);

	/* filters and sort */
	q.host = "host1";
	q.view = TRAWL_TOP_SYSCALLS;
	q.sort = TRAWL_TOP_COL_MAX;
	q.ascending = true;
	rc = trawl_top_query(t, &q, &rows, &n);
	ok(!rc && n > 0, "syscalls of host1: %zu rows", n);
	bool h1 = true;
	sorted = true;
	for (size_t i = 0; i < n; i++) {
		h1 &= !strcmp(rows[i].host, "host1") && !strcmp(rows[i].kind, "syscall");
		if (i)
			sorted &= rows[i - 1].v[TRAWL_TOP_COL_MAX] <= rows[i].v[TRAWL_TOP_COL_MAX];
	}
	ok(h1 && sorted, "--host: host1's syscall rows only, by max ascending");
	free(rows);
	q = (struct trawl_top_query){ .sz = sizeof(q), .slice = 2, .comm = "n*", .threads = true,
				      .sort = TRAWL_TOP_NCOLS };
	ok(!trawl_top_query(t, &q, &rows, &n), "a name glob");
	bool cm = true;
	for (size_t i = 0; i < n; i++)
		cm &= !fnmatch("n*", rows[i].name, 0) && rows[i].tid > 0;
	ok(cm, "... only threads of such names (%zu)", n);
	free(rows);

	trawl_count_free(cnt);
	trawl_reader_free(r);
	trawl_top_free(t);
	trawl_top_free(NULL);
	history_cap(dir);
	exec_name();
	late_host();
	if (!tap_fail) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", trash);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", trash);
	}
	return done_testing();
}
