/* SPDX-License-Identifier: MIT */
/*
 * track-demo: a program that tracks the latency of its requests with
 * <trawl/track.h>; some are slow on purpose, some never end, so a test
 * knows which outliers must be in its trace.
 *
 *   trawl record --no-kernel -o /tmp/s -- track-demo -w
 *   trawl print /tmp/s | grep trawl_track:outlier
 *
 *   track-demo [-n N] [-k K] [-o O] [-w]
 *     -n  requests (default 1000), each tracked with a 5 ms threshold
 *     -k  of them, K (evenly spread, default 3) take 10 ms: outliers
 *     -o  then O more (default 1) never end: with a 20 ms timeout, each
 *         fires once from trawl_tracker_poll()
 *     -w  wait (up to 10 s) until a session records demo:start before
 *         starting (under `trawl record`, the agent's session starts
 *         once the program has registered)
 *   prints a line per outlier (the callback's view: key, duration_ns,
 *   timeout), then the tracker's counters
 */
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>
#include <trawl/track.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

TRAWL_TRACEPOINT_EVENT(demo, start, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint32_t n, uint32_t k, uint32_t o),
	TRAWL_FIELDS(TRAWL_FIELD_INT(uint32_t, n, n) TRAWL_FIELD_INT(uint32_t, k, k)
		     TRAWL_FIELD_INT(uint32_t, o, o)))

#define MS 1000000ull

static void nap(uint64_t ns)
{
	nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = (long)ns }, NULL);
}

static void on_outlier(const struct trawl_outlier *o, void *arg)
{
	printf("outlier %s key=%" PRIu64 " duration_ns=%" PRIu64 " timeout=%d\n", o->rule,
	       o->key, o->duration_ns, o->timeout);
}

int main(int argc, char **argv)
{
	unsigned n = 1000, k = 3, nto = 1;
	int c, wait = 0;
	while ((c = getopt(argc, argv, "n:k:o:w")) != -1) {
		switch (c) {
		case 'n': n = (unsigned)atoi(optarg); break;
		case 'k': k = (unsigned)atoi(optarg); break;
		case 'o': nto = (unsigned)atoi(optarg); break;
		case 'w': wait = 1; break;
		default:
			fprintf(stderr, "usage: track-demo [-n N] [-k K] [-o O] [-w]\n");
			return 2;
		}
	}
	if (k > n) {
		fprintf(stderr, "track-demo: K > N\n");
		return 2;
	}
	for (int i = 0; wait && i < 10000 && !trawl_tracepoint_enabled(demo, start); i++)
		nap(MS);
	trawl_tracepoint(demo, start, n, k, nto);

	struct trawl_tracker_opts o = { .sz = sizeof(o), .rule = "demo", .capacity = 64,
					.on_outlier = on_outlier, .emit_event = true };
	struct trawl_tracker *t = trawl_tracker_new(&o);
	if (!t) {
		perror("track-demo: trawl_tracker_new");
		return 1;
	}
	/* request i is slow when it is the j-th of K spread over N */
	for (unsigned i = 0, j = 0; i < n; i++) {
		trawl_tracker_in(t, 1000 + i, 5 * MS, 0);
		if (j < k && i == (2 * j + 1) * n / (2 * k)) {
			nap(10 * MS);
			j++;
		}
		trawl_tracker_out(t, 1000 + i);
	}
	for (unsigned i = 0; i < nto; i++)
		trawl_tracker_in(t, 9000 + i, 5 * MS, 20 * MS);
	nap(30 * MS);
	trawl_tracker_poll(t);

	struct trawl_tracker_stats st;
	trawl_tracker_stats(t, &st);
	printf("pairs %" PRIu64 " outliers %" PRIu64 " timeouts %" PRIu64 " suppressed %" PRIu64
	       "\n", st.pairs, st.outliers, st.timeouts, st.suppressed);
	trawl_tracker_free(t);
	return 0;
}
