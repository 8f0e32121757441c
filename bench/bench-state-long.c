/* SPDX-License-Identifier: MIT */
/*
 * bench-state-long: the state system's offline queries on a long trace,
 * one this machine can make: a synthetic kernel trace (two CPUs, LTTng's
 * names, trawl's { tid } context) of SECONDS of trace time at about RATE
 * events per second: 300 threads of 60 processes switching, woken, in
 * read and write calls on 1,000 fds (the counters of each move), opening
 * and closing some, a thread exiting and a new process forked about 30
 * times a second, IRQs.
 *
 *   bench-state-long DIR [SECONDS [RATE]]     (default 3600 s, 50000 /s)
 *
 * Writes DIR (which must not exist), then prints: its events and size;
 * the offline pass (no window, a checkpoint every second or 2^17 events,
 * one reader thread) against decoding alone; the checkpoint file (its
 * size, per hour of trace; its save and load); and the state at 200 times
 * drawn at random over the whole trace from the file, then one thread, fd
 * and CPU found: median and worst wall time (issue 29's goal: <= 100 ms
 * anywhere in an hour). The trace is left in DIR (remove it).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/state.h"

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* the process's CPU time, ms: a query's cost whatever the machine's load
 * (wall time on a loaded shared machine is mostly waiting) */
static double proc_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static struct trawl_ctf_type *st(struct trawl_ctf_writer *w, const char *spec)
{
	struct trawl_ctf_type *t = trawl_ctf_type_struct(w);
	char buf[256], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		trawl_ctf_struct_add(w, t, tok + 2,
				     tok[0] == 's' ? trawl_ctf_type_string(w)
				     : tok[0] == 'i' ? trawl_ctf_type_int(w, 32, true, 10)
						     : trawl_ctf_type_int(w, 64, true, 10));
	return t;
}

static struct trawl_ctf_wstream *cpus[2];
static int wrc;

static void ev(int cpu, int64_t ts, int tid, struct trawl_ctf_event_class *ec, const char *fmt, ...)
{
	uint8_t buf[256];
	struct trawl_ctf_buf b;
	va_list ap;

	if (wrc)
		return;
	trawl_ctf_buf_init(&b, buf, sizeof(buf));
	trawl_ctf_buf_u32(&b, (uint32_t)tid);
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		if (*f == 's')
			trawl_ctf_buf_str(&b, va_arg(ap, const char *));
		else if (*f == 'i')
			trawl_ctf_buf_u32(&b, (uint32_t)va_arg(ap, int));
		else
			trawl_ctf_buf_u64(&b, (uint64_t)va_arg(ap, long long));
	}
	va_end(ap);
	wrc = trawl_ctf_wstream_event(cpus[cpu], ec, (uint64_t)ts, buf, b.len);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int write_trace(const char *dir, double seconds, double rate, uint64_t *n)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "long", .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, st(w, "i:tid"));
	struct trawl_ctf_event_class *sw = trawl_ctf_writer_event_class(w, sc, "sched_switch", 0,
		st(w, "s:prev_comm,i:prev_tid,i:prev_prio,l:prev_state,s:next_comm,i:next_tid,i:next_prio"));
	struct trawl_ctf_event_class *wk = trawl_ctf_writer_event_class(w, sc, "sched_wakeup", 0,
		st(w, "s:comm,i:tid,i:prio,i:target_cpu"));
	struct trawl_ctf_event_class *fk = trawl_ctf_writer_event_class(w, sc, "sched_process_fork", 0,
		st(w, "s:parent_comm,i:parent_tid,s:child_comm,i:child_tid"));
	struct trawl_ctf_event_class *ex = trawl_ctf_writer_event_class(w, sc, "sched_process_exit", 0,
		st(w, "s:comm,i:tid,i:prio,i:group_dead"));
	struct trawl_ctf_event_class *re = trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", 0,
		st(w, "l:fd,l:buf,l:count"));
	struct trawl_ctf_event_class *rx = trawl_ctf_writer_event_class(w, sc, "syscall_exit_read", 0,
		st(w, "l:ret"));
	struct trawl_ctf_event_class *we = trawl_ctf_writer_event_class(w, sc, "syscall_entry_write", 0,
		st(w, "l:fd,l:buf,l:count"));
	struct trawl_ctf_event_class *wx = trawl_ctf_writer_event_class(w, sc, "syscall_exit_write", 0,
		st(w, "l:ret"));
	struct trawl_ctf_event_class *oe = trawl_ctf_writer_event_class(w, sc, "syscall_entry_openat", 0,
		st(w, "l:dfd,s:filename,l:flags,l:mode"));
	struct trawl_ctf_event_class *ox = trawl_ctf_writer_event_class(w, sc, "syscall_exit_openat", 0,
		st(w, "l:ret"));
	struct trawl_ctf_event_class *ce = trawl_ctf_writer_event_class(w, sc, "syscall_entry_close", 0,
		st(w, "l:fd"));
	struct trawl_ctf_event_class *cx = trawl_ctf_writer_event_class(w, sc, "syscall_exit_close", 0,
		st(w, "l:ret"));
	struct trawl_ctf_event_class *ie = trawl_ctf_writer_event_class(w, sc, "irq_handler_entry", 0,
		st(w, "i:irq,s:name"));
	struct trawl_ctf_event_class *ix = trawl_ctf_writer_event_class(w, sc, "irq_handler_exit", 0,
		st(w, "i:irq,i:ret"));
	struct trawl_ctf_event_class *dp = trawl_ctf_writer_event_class(w, sc,
		"lttng_statedump_process_state", 0, st(w, "i:tid,i:pid,i:ppid,s:name,i:status"));
	struct trawl_ctf_event_class *df = trawl_ctf_writer_event_class(w, sc,
		"lttng_statedump_file_descriptor", 0, st(w, "i:pid,i:fd,s:filename"));
	cpus[0] = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	cpus[1] = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	if (!cpus[0] || !cpus[1] || !df)
		return -1;

	enum { NT = 300 };
	int tid[NT], cur[2] = { 0, 0 }, next = 10000;
	uint64_t x = 88172645463325252ULL;
	int64_t ts = 0, end = (int64_t)(seconds * 1e9), step = (int64_t)(2e9 / rate);
	char path[64], comm[16];

	for (int i = 0; i < NT; i++) {
		tid[i] = 1000 + i;
		snprintf(comm, sizeof(comm), "w%d", i % 60);
		ev(0, ts++, 1, dp, "iiisi", tid[i], 1000 + i / 5 * 5, 1, comm, 5);
	}
	for (int p = 0; p < 60; p++)
		for (int fd = 3; fd < 20; fd++) {
			snprintf(path, sizeof(path), "/srv/data/%d/%d", p, fd);
			ev(0, ts++, 1, df, "iis", 1000 + p * 5, fd, path);
		}
	*n = NT + 60 * 17;
	while (ts < end && !wrc) {
		int cpu = (int)(rnd(&x) & 1), j = (int)(rnd(&x) % NT), r = (int)(rnd(&x) % 100);
		int t = tid[j], pid = 1000 + (t - 1000) % NT / 5 * 5, fd = 3 + (int)(rnd(&x) % 17);
		ts += 1 + (int64_t)(rnd(&x) % (uint64_t)step);
		snprintf(comm, sizeof(comm), "w%d", (t - 1000) % 60);
		(void)pid;
		if (r < 25) {
			ev(cpu, ts, cur[cpu], sw, "siilsii", "x", cur[cpu], 20, (long long)(r & 1), comm, t, 20);
			cur[cpu] = t;
			*n += 1;
		} else if (r < 35) {
			ev(cpu, ts, cur[cpu], wk, "siii", comm, t, 20, cpu);
			*n += 1;
		} else if (r < 85) {
			long long c = 1 + (long long)(rnd(&x) % 8192);
			bool rd = r & 1;
			ev(cpu, ts, t, rd ? re : we, "lll", (long long)fd, 0x1000LL, c);
			ev(cpu, ++ts, t, rd ? rx : wx, "l", c);
			*n += 2;
		} else if (r < 90) {
			snprintf(path, sizeof(path), "/srv/data/%d/%d", (int)(rnd(&x) % 60), fd);
			ev(cpu, ts, t, ce, "l", (long long)fd);
			ev(cpu, ++ts, t, cx, "l", 0LL);
			ev(cpu, ++ts, t, oe, "lsll", -100LL, path, 0LL, 0LL);
			ev(cpu, ++ts, t, ox, "l", (long long)fd);
			*n += 4;
		} else if (r < 91 && rnd(&x) % 40 == 0) {
			/* a thread exits (switched out for the last time), a new
			 * process comes: about 30 a second at 50 k events/s */
			ev(cpu, ts, cur[cpu], sw, "siilsii", "x", cur[cpu], 20, 0LL, comm, t, 20);
			ev(cpu, ++ts, t, ex, "siii", comm, t, 20, 1);
			ev(cpu, ++ts, t, sw, "siilsii", comm, t, 20, 64LL, "swapper", 0, 20);
			cur[cpu] = 0;
			ev(cpu, ++ts, tid[(j + 1) % NT], fk, "sisi", comm, tid[(j + 1) % NT], comm, next);
			tid[j] = next++;
			*n += 4;
		} else {
			ev(cpu, ts, cur[cpu], ie, "is", 30, "virtio");
			ev(cpu, ++ts, cur[cpu], ix, "ii", 30, 1);
			*n += 2;
		}
	}
	int rc = wrc ? wrc : trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

static int null_events(void *self, const struct trawl_event *ev, size_t n)
{
	*(uint64_t *)self += n;
	(void)ev;
	return 0;
}

static const struct trawl_sink_ops null_ops = {
	.sz = sizeof(null_ops), .name = "null", .events = null_events,
};

static double run_pass(const char *const *paths, struct trawl_sink *sink)
{
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	char err[512];
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "bench-state-long: %s\n", err);
		exit(1);
	}
	double c0 = cpu_s();
	if (trawl_pipe_run(r, sink, 1, NULL) < 0) {
		fprintf(stderr, "bench-state-long: the run failed\n");
		exit(1);
	}
	double c = cpu_s() - c0;
	trawl_reader_free(r);
	return c;
}

static uint64_t du(const char *dir)
{
	char cmd[4200];
	unsigned long long b = 0;

	snprintf(cmd, sizeof(cmd), "du -sb '%s'", dir);
	FILE *p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%llu", &b) != 1)
			b = 0;
		pclose(p);
	}
	return b;
}

int main(int argc, char **argv)
{
	char err[1024], file[4200];
	uint64_t n = 0, nev = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-state-long DIR [SECONDS [RATE]]\n");
		return 2;
	}
	double seconds = argc > 2 ? atof(argv[2]) : 3600, rate = argc > 3 ? atof(argv[3]) : 50000;
	const char *paths[] = { argv[1] };
	double w0 = wall_ms();
	if (write_trace(argv[1], seconds, rate, &n)) {
		fprintf(stderr, "bench-state-long: writing %s failed\n", argv[1]);
		return 1;
	}
	uint64_t size = du(argv[1]);
	printf("bench-state-long: %s: %llu events over %.0f s of trace (%.0f events/s), %.2f GB, "
	       "written in %.0f s\n", argv[1], (unsigned long long)n, seconds, n / seconds, size / 1e9,
	       (wall_ms() - w0) / 1e3);

	struct trawl_sink null = { &null_ops, &nev };
	double cd = run_pass(paths, &null);
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = 10000000000LL,
				       .checkpoint_ns = 1000000000LL, .checkpoint_events = 1u << 17,
				       .no_window = true };
	struct trawl_state *s = trawl_state_new(&so);
	struct trawl_sink sink = trawl_state_sink(s);
	double cs = run_pass(paths, &sink);
	struct trawl_state_stats sst;
	trawl_state_stats(s, &sst);
	printf("  decode only %.1f s CPU (%.2f M events/s); the offline state %.1f s CPU (%.2f M "
	       "events/s, one thread): %.2f of decode speed; %llu checkpoints, %.0f MB in memory\n",
	       cd, nev / cd / 1e6, cs, sst.events / cs / 1e6, cd / cs,
	       (unsigned long long)sst.checkpoints, sst.bytes / 1e6);
	snprintf(file, sizeof(file), "%s/.trawl-state-long.ckpt", argv[1]);
	w0 = wall_ms();
	if (trawl_state_save(s, file, paths, 1, err, sizeof(err))) {
		fprintf(stderr, "bench-state-long: %s\n", err);
		return 1;
	}
	double w1 = wall_ms();
	trawl_state_free(s);
	struct trawl_state *l = trawl_state_load(file, &so, paths, 1, err, sizeof(err));
	double w2 = wall_ms();
	struct stat fs;
	if (!l || stat(file, &fs)) {
		fprintf(stderr, "bench-state-long: %s\n", err);
		return 1;
	}
	printf("  checkpoint file: %.1f MB (%.0f MB per hour of trace, %.2f %% of the trace), "
	       "saved in %.0f ms, loaded and checked in %.0f ms\n", fs.st_size / 1e6,
	       fs.st_size / 1e6 / seconds * 3600, 100.0 * fs.st_size / size, w1 - w0, w2 - w1);

	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	enum { NQ = 200 };
	double ms[NQ], lms[NQ], cms[NQ];
	int k = 0, found = 0;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int64_t lo = 1700000000LL * 1000000000LL, hi = trawl_state_newest(l);
	for (int i = 0; i < NQ; i++) {
		int64_t t = lo + (int64_t)(rnd(&x) % (uint64_t)(hi - lo));
		double t0 = wall_ms(), c0 = proc_ms();
		struct trawl_state *q = i % 20 ? NULL : trawl_state_load(file, &so, paths, 1, err, sizeof(err));
		struct trawl_state_view *v = trawl_state_at_files(q ? q : l, paths, 1, &ro, "long", t,
								  err, sizeof(err));
		if (v) {
			found += trawl_state_view_thread(v, 0) && trawl_state_view_fd(v, 0) &&
				 trawl_state_view_cpu(v, 0);
			double d = wall_ms() - t0;
			if (q)
				lms[k / 20] = d;
			cms[k] = proc_ms() - c0;
			ms[k++] = d;
		} else {
			fprintf(stderr, "bench-state-long: at %lld: %s\n", (long long)t, err);
		}
		trawl_state_view_free(v);
		trawl_state_free(q);
	}
	int nl = (k + 19) / 20;
	qsort(ms, (size_t)k, sizeof(*ms), cmp_d);
	qsort(lms, (size_t)nl, sizeof(*lms), cmp_d);
	qsort(cms, (size_t)k, sizeof(*cms), cmp_d);
	printf("  the state at t anywhere, from the file: %d queries, median %.2f ms, worst %.2f ms; "
	       "with the file's load in each (%d of them): median %.2f ms, worst %.2f ms\n", k,
	       ms[k / 2], ms[k - 1], nl, lms[nl / 2], lms[nl - 1]);
	printf("    their CPU time: median %.2f ms, worst %.2f ms\n", cms[k / 2], cms[k - 1]);
	trawl_state_free(l);
	return found == k ? 0 : 1;
}
