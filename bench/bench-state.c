/* SPDX-License-Identifier: MIT */
/*
 * bench-state: the state system's queries on a kernel trace (bench/state.sh
 * runs it on its busy recording).
 *
 *   bench-state TRACE_DIR [WINDOW_S]      (default 10)
 *
 * 1. Decode only (a sink that takes nothing) and then the pass `trawl
 *    state` makes offline (no window, a checkpoint every second or 2^17
 *    events), both with one reader thread: CPU time, events/s and their
 *    ratio (issue 29's goal: the state at >= half of decode speed).
 * 2. The state at 200 times drawn at random (fixed seed) over the whole
 *    trace (trawl_state_at_files: the latest checkpoint at or before t and
 *    a replay to t), then one thread, one fd and one CPU of it found:
 *    median and worst wall time, in ms (goal <= 100 ms anywhere).
 * 3. The same from the checkpoint file (written, then loaded: its size,
 *    its bytes per hour of trace at this event rate, the load's time).
 * 4. 5 of them with their history (the window before t replayed).
 * 5. The state at 25 times in the window of a pass that keeps one
 *    (trawl_state_at; BENCH_STATE_EACH=1 prints each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

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

/* a thread, an fd and a CPU of the view found: what a query answers */
static int touch(const struct trawl_state_view *v)
{
	const struct trawl_state_thread *th = trawl_state_view_thread(v, 0);
	const struct trawl_state_fd *f = trawl_state_view_fd(v, 0);
	int n = !!trawl_state_view_cpu(v, 0);

	n += th && trawl_state_view_thread_find(v, th->tid);
	n += f && trawl_state_view_fd_find(v, f->pid, f->fd);
	return n;
}

static void report(const char *what, double *ms, int n)
{
	if (!n)
		return;
	qsort(ms, (size_t)n, sizeof(*ms), cmp_d);
	printf("  %s: %d queries, median %.2f ms, worst %.2f ms\n", what, n, ms[n / 2], ms[n - 1]);
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
		fprintf(stderr, "bench-state: %s\n", err);
		exit(1);
	}
	double c0 = cpu_s();
	if (trawl_pipe_run(r, sink, 1, NULL) < 0) {
		fprintf(stderr, "bench-state: the run failed\n");
		exit(1);
	}
	double c = cpu_s() - c0;
	trawl_reader_free(r);
	return c;
}

/* n queries at random times in [lo, hi] (or with their history) */
static void queries(const struct trawl_state *s, const char *const *paths, const char *host,
		    int64_t lo, int64_t hi, int n, bool hist, const char *what, int *found)
{
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	double *ms = calloc((size_t)n, sizeof(*ms)), *cms = calloc((size_t)n, sizeof(*cms));
	char err[512];
	int k = 0;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int64_t t = lo + (int64_t)(x % (uint64_t)(hi - lo + 1));
		double t0 = wall_ms(), c0 = proc_ms();
		struct trawl_state_view *v = trawl_state_at_files(s, paths, 1, &ro, host, t, err, sizeof(err));
		if (v && hist) {
			struct trawl_state_change c[1];
			*found += trawl_state_view_changes(v, TRAWL_STATE_ENTITY_CPU, 0, 0, 0, c, 1) > 0;
		}
		if (v) {
			*found += touch(v);
			cms[k] = proc_ms() - c0;
			ms[k++] = wall_ms() - t0;
		} else {
			fprintf(stderr, "bench-state: at %lld: %s\n", (long long)t, err);
		}
		trawl_state_view_free(v);
	}
	report(what, ms, k);
	qsort(cms, (size_t)k, sizeof(*cms), cmp_d);
	if (k)
		printf("    their CPU time: median %.2f ms, worst %.2f ms\n", cms[k / 2], cms[k - 1]);
	free(ms);
	free(cms);
}

int main(int argc, char **argv)
{
	char err[512];

	if (argc < 2) {
		fprintf(stderr, "usage: bench-state TRACE_DIR [WINDOW_S]\n");
		return 2;
	}
	int64_t window = (int64_t)((argc > 2 ? atof(argv[2]) : 10) * 1e9);
	const char *paths[] = { argv[1] };
	int found = 0;

	/* 1. decode only, then the offline pass */
	uint64_t nev = 0;
	struct trawl_sink null = { &null_ops, &nev };
	double cd = run_pass(paths, &null);
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = window,
				       .checkpoint_ns = 1000000000LL, .checkpoint_events = getenv("BENCH_STATE_CK_EVENTS") ? strtoull(getenv("BENCH_STATE_CK_EVENTS"), NULL, 0) : 1u << 17,
				       .no_window = true };
	struct trawl_state *s = trawl_state_new(&so);
	if (!s)
		return 1;
	struct trawl_sink sink = trawl_state_sink(s);
	double cs = run_pass(paths, &sink);
	if (!trawl_state_nhosts(s)) {
		fprintf(stderr, "bench-state: no state from %s\n", argv[1]);
		return 1;
	}
	struct trawl_state_stats st;
	trawl_state_stats(s, &st);
	char *host = strdup(trawl_state_host(s, 0));
	/* the trace's span: the reader's first event, the newest */
	struct trawl_reader_opts ro1 = { .sz = sizeof(ro1), .threads = 1 };
	struct trawl_reader *r2 = trawl_reader_new(paths, 1, &ro1, err, sizeof(err));
	const struct trawl_event *ev = NULL;
	int64_t hi = trawl_state_newest(s);
	int64_t lo = r2 && trawl_reader_next(r2, &ev) > 0 && ev ? ev->ts : hi;
	trawl_reader_free(r2);
	double span = (double)(hi - lo) / 1e9;
	printf("bench-state: %llu events over %.2f s of trace; decode only %.3f s CPU (%.2f M events/s), "
	       "the offline state %.3f s CPU (%.2f M events/s, decode included, one thread): "
	       "%.2f of decode speed (goal >= 0.5); %llu checkpoints, %.1f MB\n",
	       (unsigned long long)st.events, span, cd, cd > 0 ? nev / cd / 1e6 : 0, cs,
	       cs > 0 ? st.events / cs / 1e6 : 0, cs > 0 ? cd / cs : 0,
	       (unsigned long long)st.checkpoints, st.bytes / 1e6);

	/* 2. anywhere, from memory */
	queries(s, paths, host, lo, hi, 200, false,
		"the state at t anywhere (checkpoint + replay, 200 random t)", &found);

	/* 3. from the checkpoint file */
	char file[4096];
	snprintf(file, sizeof(file), "%s/.trawl-state-bench.ckpt", argv[1]);
	double w0 = wall_ms();
	if (trawl_state_save(s, file, paths, 1, err, sizeof(err))) {
		fprintf(stderr, "bench-state: %s\n", err);
	} else {
		double w1 = wall_ms();
		struct trawl_state *l = trawl_state_load(file, &so, paths, 1, err, sizeof(err));
		double w2 = wall_ms();
		struct stat fs;
		if (!l || stat(file, &fs)) {
			fprintf(stderr, "bench-state: %s\n", err);
		} else {
			printf("  checkpoint file: %.2f MB (%.0f MB per hour of trace at %.2f M events/s), "
			       "written in %.0f ms, loaded and checked in %.0f ms\n", fs.st_size / 1e6,
			       span > 0 ? fs.st_size / 1e6 / span * 3600 : 0,
			       span > 0 ? st.events / span / 1e6 : 0, w1 - w0, w2 - w1);
			queries(l, paths, host, lo, hi, 200, false,
				"the state at t anywhere, from the file (200 random t)", &found);
			/* 4. with the history */
			queries(l, paths, host, lo, hi, 5, true,
				"the same with a CPU's history (the window before t replayed)", &found);
		}
		trawl_state_free(l);
		unlink(file);
	}
	trawl_state_free(s);

	/* 5. in the window of a pass that keeps one */
	struct trawl_state_opts wo = { .sz = sizeof(wo), .window_ns = window };
	s = trawl_state_new(&wo);
	sink = trawl_state_sink(s);
	run_pass(paths, &sink);
	int64_t wl = trawl_state_window_start(s, host);
	double ms[25];
	int n = 0;
	for (int k = 0; k < 25; k++) {
		int64_t t = wl == INT64_MIN ? hi : wl + (hi - wl) / 24 * k;
		double t0 = wall_ms();
		struct trawl_state_view *v = trawl_state_at(s, host, t);
		if (v) {
			found += touch(v);
			ms[n++] = wall_ms() - t0;
			if (getenv("BENCH_STATE_EACH"))
				printf("    %d: %.2f ms\n", k, ms[n - 1]);
		}
		trawl_state_view_free(v);
	}
	report("the state at t inside the window (a pass with the window)", ms, n);
	trawl_state_free(s);
	free(host);
	return found ? 0 : 1;
}
