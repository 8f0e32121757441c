/* SPDX-License-Identifier: MIT */
/*
 * bench-state: the state system's queries on a kernel trace (bench/state.sh
 * runs it on its busy recording).
 *
 *   bench-state TRACE_DIR [WINDOW_S]      (default 10)
 *
 * Takes the trace in as `trawl state` does (a window of WINDOW_S, a
 * checkpoint every window; one reader thread) and prints its CPU time and
 * events/s, then the latency (wall time) of queries: the state at 25 times
 * spread over the window (trawl_state_at, then one thread, one fd and one
 * CPU of it found), and at 10 times before the window when the trace is
 * longer than one (trawl_state_at_files: the nearest checkpoint and a
 * replay). Median and worst, in ms; BENCH_STATE_EACH=1 in the environment
 * prints each of the first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

int main(int argc, char **argv)
{
	char err[512];

	if (argc < 2) {
		fprintf(stderr, "usage: bench-state TRACE_DIR [WINDOW_S]\n");
		return 2;
	}
	int64_t window = (int64_t)((argc > 2 ? atof(argv[2]) : 10) * 1e9);
	const char *paths[] = { argv[1] };
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = window,
				       .checkpoint_ns = window };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	struct trawl_state *s = trawl_state_new(&so);
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));

	if (!s || !r) {
		fprintf(stderr, "bench-state: %s\n", r ? "out of memory" : err);
		return 1;
	}
	double c0 = cpu_s();
	struct trawl_sink sink = trawl_state_sink(s);
	if (trawl_pipe_run(r, &sink, 1, NULL) < 0 || !trawl_state_nhosts(s)) {
		fprintf(stderr, "bench-state: no state from %s\n", argv[1]);
		return 1;
	}
	double c1 = cpu_s();
	struct trawl_state_stats st;
	trawl_state_stats(s, &st);
	const char *host = trawl_state_host(s, 0);
	int64_t lo = trawl_state_window_start(s, host), hi = trawl_state_newest(s);
	printf("bench-state: %llu events taken in, %.2f s CPU (%.2f M events/s, decode included, "
	       "one thread); %llu changes held, %.1f MB\n", (unsigned long long)st.events,
	       c1 - c0, (c1 > c0 ? st.events / (c1 - c0) : 0) / 1e6,
	       (unsigned long long)st.changes, st.bytes / 1e6);

	double ms[25];
	int n = 0, found = 0;
	for (int k = 0; k < 25; k++) {
		int64_t t = lo == INT64_MIN ? hi : lo + (hi - lo) / 24 * k;
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
	report("the state at t inside the window", ms, n);

	/* before the window: the nearest checkpoint and a replay */
	n = 0;
	if (lo != INT64_MIN) {
		/* the trace's start: the reader's first event */
		struct trawl_reader *r2 = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
		const struct trawl_event *ev = NULL;
		int64_t t0s = r2 && trawl_reader_next(r2, &ev) > 0 && ev ? ev->ts : lo;
		trawl_reader_free(r2);
		for (int k = 0; k < 10 && lo > t0s; k++) {
			int64_t t = t0s + (lo - t0s) / 10 * k + (lo - t0s) / 20;
			double t0 = wall_ms();
			struct trawl_state_view *v = trawl_state_at_files(s, paths, 1, &ro, host, t,
									  err, sizeof(err));
			if (v) {
				found += touch(v);
				ms[n++] = wall_ms() - t0;
			}
			trawl_state_view_free(v);
		}
	}
	report("the state at t before the window (checkpoint + replay)", ms, n);
	trawl_reader_free(r);
	trawl_state_free(s);
	return found ? 0 : 1;
}
