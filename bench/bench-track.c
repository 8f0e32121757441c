/* SPDX-License-Identifier: MIT */
/*
 * bench-track: the cost of an in/out pair of the application latency
 * tracker (trawl/track.h) with no outlier (threshold 1 s), the target of
 * issue 31 (<= 30 ns, one thread). Each of T threads does N pairs on keys
 * of its own (in of key k, out of key k, then with -d D, D keys of the
 * thread in flight: in of k + D before out of k) between a barrier and a CLOCK_MONOTONIC read; ns per
 * pair = the thread's loop time / N, the median over R runs of the mean
 * over threads. For scale, the same loop with the two clock reads alone
 * (what in and out read: the TSC, or CLOCK_MONOTONIC).
 *
 *   bench-track [-n N] [-t T] [-d D] [-r R]
 *     -n N   pairs per thread (default 10000000)
 *     -t T   threads (default: 1, then one per CPU)
 *     -d D   keys in flight per thread, a power of two (default 1)
 *     -r R   runs (default 5)
 *
 * Prints the machine (as bench/machine.sh's bench_machine), then per
 * thread count one line of key=value: threads, pairs, depth,
 * ns_per_pair (median), min, max, clock_ns_per_pair (the two clock reads),
 * Mpairs_per_s (all threads), and the tracker's stats (pairs, outliers,
 * dropped, unmatched: pairs must be T x N x (R + 1), the warm-up run
 * included, and the others 0).
 */
#include "trawl/track.h"
#include "util/clock.h"

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

static struct trawl_tracker *trk;
static pthread_barrier_t bar;
static uint64_t npairs, depth;
static int clock_only;
static volatile uint64_t sink;

struct worker {
	pthread_t th;
	uint64_t base;
	double ns;
};

static void *run(void *arg)
{
	struct worker *w = arg;
	uint64_t acc = 0;
	pthread_barrier_wait(&bar);
	int64_t t0 = tr_clock_ns(CLOCK_MONOTONIC);
	if (clock_only) {
		bool tsc = tr_clocksource_is_tsc();
		for (uint64_t i = 0; i < npairs; i++)
			acc += tr_clock_now(tsc) - tr_clock_now(tsc);
	} else if (depth == 1) {
		for (uint64_t i = 0; i < npairs; i++) {
			trawl_tracker_in(trk, w->base + i, 1000000000, 0);
			acc += trawl_tracker_out(trk, w->base + i);
		}
	} else {
		/* D ins ahead of the outs: D keys of this thread in flight */
		for (uint64_t i = 0; i < depth; i++)
			trawl_tracker_in(trk, w->base + i, 1000000000, 0);
		for (uint64_t i = depth; i < npairs + depth; i++) {
			trawl_tracker_in(trk, w->base + i, 1000000000, 0);
			acc += trawl_tracker_out(trk, w->base + i - depth);
		}
		for (uint64_t i = npairs; i < npairs + depth; i++)
			acc += trawl_tracker_out(trk, w->base + i);
	}
	w->ns = (double)(tr_clock_ns(CLOCK_MONOTONIC) - t0) / (double)npairs;
	sink += acc;
	return NULL;
}

/* The mean ns per pair over T threads, one run. */
static double one_run(int T, struct worker *ws)
{
	pthread_barrier_init(&bar, NULL, (unsigned)T);
	for (int i = 0; i < T; i++) {
		/* keys far apart: each thread's own, never another's */
		ws[i].base = (uint64_t)(i + 1) << 40;
		pthread_create(&ws[i].th, NULL, run, &ws[i]);
	}
	double sum = 0;
	for (int i = 0; i < T; i++) {
		pthread_join(ws[i].th, NULL);
		sum += ws[i].ns;
	}
	pthread_barrier_destroy(&bar);
	return sum / T;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The line bench/machine.sh's bench_machine prints. */
static void print_machine(void)
{
	char line[512], model[256] = "?", family[32] = "?", num[32] = "?", cs[64] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v += strspn(v + 1, " \t") + 1;
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "model name", 10) && !strcmp(model, "?"))
			snprintf(model, sizeof(model), "%s", v);
		else if (!strncmp(line, "cpu family", 10) && !strcmp(family, "?"))
			snprintf(family, sizeof(family), "%s", v);
		else if (!strncmp(line, "model", 5) && strchr(" \t", line[5]) && !strcmp(num, "?"))
			snprintf(num, sizeof(num), "%s", v);
	}
	if (f)
		fclose(f);
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f && fgets(cs, sizeof(cs), f))
		cs[strcspn(cs, "\n")] = 0;
	if (f)
		fclose(f);
	double la[3] = { 0, 0, 0 };
	getloadavg(la, 3);
	printf("machine: %s (family %s, model %s), %d CPUs, clocksource %s, load average %.2f %.2f %.2f\n",
	       model, family, num, get_nprocs(), cs, la[0], la[1], la[2]);
}

static void bench(int T, int R)
{
	struct trawl_tracker_opts o = { .sz = sizeof(o), .rule = "bench",
					.capacity = (size_t)T * depth };
	trk = trawl_tracker_new(&o);
	if (!trk) {
		perror("bench-track: trawl_tracker_new");
		exit(1);
	}
	struct worker *ws = calloc((size_t)T, sizeof(*ws));
	double *v = calloc((size_t)R, sizeof(*v)), c[3];
	one_run(T, ws);		/* warm-up: the table's pages, the caches */
	for (int r = 0; r < R; r++)
		v[r] = one_run(T, ws);
	clock_only = 1;
	for (int r = 0; r < 3; r++)
		c[r] = one_run(T, ws);
	clock_only = 0;
	struct trawl_tracker_stats st;
	trawl_tracker_stats(trk, &st);
	double med = median(v, R);
	printf("threads=%d pairs=%llu depth=%llu ns_per_pair=%.2f min=%.2f max=%.2f "
	       "clock_ns_per_pair=%.2f Mpairs_per_s=%.1f stats_pairs=%llu outliers=%llu "
	       "dropped=%llu unmatched=%llu\n",
	       T, (unsigned long long)npairs, (unsigned long long)depth, med, v[0], v[R - 1],
	       median(c, 3), T * 1e3 / med, (unsigned long long)st.pairs,
	       (unsigned long long)st.outliers, (unsigned long long)st.dropped,
	       (unsigned long long)st.unmatched);
	fflush(stdout);
	free(v);
	free(ws);
	trawl_tracker_free(trk);
}

int main(int argc, char **argv)
{
	int T = 0, R = 5, c;
	npairs = 10000000;
	depth = 1;
	while ((c = getopt(argc, argv, "n:t:d:r:")) != -1) {
		switch (c) {
		case 'n': npairs = strtoull(optarg, NULL, 0); break;
		case 't': T = atoi(optarg); break;
		case 'd': depth = strtoull(optarg, NULL, 0); break;
		case 'r': R = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench-track [-n N] [-t T] [-d D] [-r R]\n");
			return 2;
		}
	}
	if (!npairs || !depth || (depth & (depth - 1)) || R < 1 || T < 0) {
		fprintf(stderr, "bench-track: N, D (a power of two) and R must be positive\n");
		return 2;
	}
	print_machine();
	if (T) {
		bench(T, R);
	} else {
		bench(1, R);
		if (get_nprocs() > 1)
			bench(get_nprocs(), R);
	}
	return 0;
}
