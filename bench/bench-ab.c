/* SPDX-License-Identifier: MIT */
/*
 * bench-ab: two builds of libtrawl.so against each other on one session,
 * in one process, pass by pass: A B B A A B ... (alternating which goes
 * first), each pass opening the session and reading it to the end through
 * trawl_pipe_run() with a counting sink (what `trawl info` does).
 *
 *   bench-ab A.so B.so SESSION [ROUNDS [THREADS]]
 *
 * ROUNDS (20) pairs of passes after one unmeasured pass of each; THREADS
 * as trawl_reader_opts.threads (1: the calling thread only). Per pass:
 * the reading thread's CPU time (user + system) with THREADS 1, the wall
 * time otherwise; the user time alone (getrusage). Prints the minimum and
 * median of each build and the median, quartiles and extremes of the
 * per-round ratios A/B.
 *
 * On a shared VM whose speed drifts by 10-30% within minutes, passes a
 * tenth of a second apart see the same machine: the ratios resolve 1-2%
 * where whole-process runs of the two builds, seconds apart, do not.
 * Build each libtrawl.so from its own tree (make in a copy of it).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "util/clock.h"
#include "trawl/pipe.h"

#define MAXR 500

struct api {
	struct trawl_reader *(*open)(const char *const *, size_t, const struct trawl_reader_opts *,
				     char *, size_t);
	void (*free)(struct trawl_reader *);
	struct trawl_count *(*cnew)(void);
	struct trawl_sink (*csink)(struct trawl_count *);
	void (*cfree)(struct trawl_count *);
	int (*run)(struct trawl_reader *, const struct trawl_sink *, size_t,
		   const struct trawl_run_opts *);
};

static int load(struct api *a, const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "bench-ab: %s\n", dlerror());
		return -1;
	}
	*(void **)&a->open = dlsym(h, "trawl_reader_new");
	*(void **)&a->free = dlsym(h, "trawl_reader_free");
	*(void **)&a->cnew = dlsym(h, "trawl_count_new");
	*(void **)&a->csink = dlsym(h, "trawl_count_sink");
	*(void **)&a->cfree = dlsym(h, "trawl_count_free");
	*(void **)&a->run = dlsym(h, "trawl_pipe_run");
	if (!a->open || !a->free || !a->cnew || !a->csink || !a->cfree || !a->run) {
		fprintf(stderr, "bench-ab: %s: not a libtrawl with trawl_pipe_run\n", path);
		return -1;
	}
	return 0;
}

static double user_s(void)
{
	struct rusage u;

	getrusage(RUSAGE_THREAD, &u);
	return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6;
}

/* One pass: the time (s) as the header says, the user time in *user. */
static double pass(const struct api *a, const char *session, unsigned threads, double *user)
{
	struct trawl_reader_opts o = { .sz = sizeof(o), .threads = threads };
	const char *paths[] = { session };
	clockid_t clk = threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
	char err[512];
	struct trawl_reader *r = a->open(paths, 1, &o, err, sizeof(err));
	struct trawl_count *c = a->cnew();

	if (!r || !c) {
		fprintf(stderr, "bench-ab: %s: %s\n", session, r ? "out of memory" : err);
		exit(1);
	}
	struct trawl_sink k = a->csink(c);
	double u0 = user_s();
	int64_t t0 = tr_clock_ns(clk);
	if (a->run(r, &k, 1, NULL) < 0) {
		fprintf(stderr, "bench-ab: %s: read failed\n", session);
		exit(1);
	}
	double t = (double)(tr_clock_ns(clk) - t0) * 1e-9;
	*user = user_s() - u0;
	a->cfree(c);
	a->free(r);
	return t;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static void sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
}

int main(int argc, char **argv)
{
	static double ta[MAXR], tb[MAXR], ua[MAXR], ub[MAXR], q[MAXR];
	struct api a, b;
	double u;

	if (argc < 4) {
		fprintf(stderr, "usage: bench-ab A.so B.so SESSION [ROUNDS [THREADS]]\n");
		return 2;
	}
	int n = argc > 4 ? atoi(argv[4]) : 20;
	unsigned threads = argc > 5 ? (unsigned)atoi(argv[5]) : 1;
	if (n < 1 || n > MAXR || load(&a, argv[1]) || load(&b, argv[2]))
		return 2;
	pass(&a, argv[3], threads, &u);
	pass(&b, argv[3], threads, &u);
	for (int i = 0; i < n; i++) {
		if (i & 1) {
			tb[i] = pass(&b, argv[3], threads, &ub[i]);
			ta[i] = pass(&a, argv[3], threads, &ua[i]);
		} else {
			ta[i] = pass(&a, argv[3], threads, &ua[i]);
			tb[i] = pass(&b, argv[3], threads, &ub[i]);
		}
		q[i] = ta[i] / tb[i];
	}
	const char *what = threads == 1 ? "cpu" : "wall";
	sort(ta, n);
	sort(tb, n);
	sort(ua, n);
	sort(ub, n);
	sort(q, n);
	printf("A %s ms: min %.1f median %.1f (user median %.1f)\n", what, ta[0] * 1e3,
	       ta[n / 2] * 1e3, ua[n / 2] * 1e3);
	printf("B %s ms: min %.1f median %.1f (user median %.1f)\n", what, tb[0] * 1e3,
	       tb[n / 2] * 1e3, ub[n / 2] * 1e3);
	printf("A/B per round: median %.3f, quartiles %.3f %.3f, range %.3f %.3f (%d rounds)\n",
	       q[n / 2], q[n / 4], q[(3 * n) / 4], q[0], q[n - 1], n);
	return 0;
}
