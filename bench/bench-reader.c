/* SPDX-License-Identifier: MIT */
/*
 * bench-reader: decode + merge throughput of the CTF reader, against
 * babeltrace2 -o dummy on the same trace when it is installed.
 *
 *   bench-reader [EVENTS_PER_STREAM] [STREAMS]
 *   bench-reader TRACE_DIR       (just reads an existing trace, best of 3)
 *
 * Writes two traces with the writer in a temporary directory: "ints" (a
 * compact header and three integers, the simplest fixed layout) and "sched"
 * (LTTng's sched_switch shape: two char[16] plus five integers), then reads
 * every event of every stream in timestamp order, best of 3 runs. Prints
 * events/s for each, and babeltrace2's and the ratio when available.
 * Times are CPU times (user + system) of the reading process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "util/clock.h"

/* CPU time, not wall time: these machines are shared, and both sides are
 * single-threaded; babeltrace2's is its child rusage. */
static double now(void)
{
	return (double)tr_clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9;
}

static double children(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static int make_trace(const char *dir, int sched, long n, int nstreams)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "bench", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = 1 << 20,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *f = trawl_ctf_type_struct(w);
	if (sched) {
		struct trawl_ctf_type *ch = trawl_ctf_type_int(w, 8, false, 10);
		ch->u.i.encoding = TRAWL_CTF_ENC_UTF8;
		struct trawl_ctf_type *comm = trawl_ctf_type_array(w, ch, 16);
		trawl_ctf_struct_add(w, f, "prev_comm", comm);
		trawl_ctf_struct_add(w, f, "prev_tid", s32);
		trawl_ctf_struct_add(w, f, "prev_prio", s32);
		trawl_ctf_struct_add(w, f, "prev_state", s64);
		trawl_ctf_struct_add(w, f, "next_comm", comm);
		trawl_ctf_struct_add(w, f, "next_tid", s32);
		trawl_ctf_struct_add(w, f, "next_prio", s32);
	} else {
		trawl_ctf_struct_add(w, f, "a", u32);
		trawl_ctf_struct_add(w, f, "b", s64);
		trawl_ctf_struct_add(w, f, "c", u32);
	}
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, sched ? "sched_switch" : "ints", 0, f);
	struct trawl_ctf_wstream *s[64];
	for (int i = 0; i < nstreams; i++)
		s[i] = trawl_ctf_writer_stream(w, sc, "channel0", (uint32_t)i);
	uint8_t buf[128];
	for (long k = 0; k < n; k++) {
		for (int i = 0; i < nstreams; i++) {
			struct trawl_ctf_buf b;
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			if (sched) {
				trawl_ctf_buf_put(&b, "swapper/1\0\0\0\0\0\0\0", 16);
				trawl_ctf_buf_u32(&b, (uint32_t)k);
				trawl_ctf_buf_u32(&b, 120);
				trawl_ctf_buf_u64(&b, 1);
				trawl_ctf_buf_put(&b, "kworker/0:1\0\0\0\0\0", 16);
				trawl_ctf_buf_u32(&b, (uint32_t)k + 1);
				trawl_ctf_buf_u32(&b, 120);
			} else {
				trawl_ctf_buf_u32(&b, (uint32_t)k);
				trawl_ctf_buf_u64(&b, (uint64_t)k * 3);
				trawl_ctf_buf_u32(&b, (uint32_t)i);
			}
			if (trawl_ctf_wstream_event(s[i], ec, 1000 + (uint64_t)k * 97 + (uint64_t)i * 13, buf, b.len))
				return -1;
		}
	}
	int rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

static double read_all(const char *dir, long *count)
{
	double best = 1e30;
	for (int run = 0; run < 3; run++) {
		char err[512];
		const char *paths[] = { dir };
		double t0 = now();
		struct trawl_reader *r = trawl_reader_new(paths, 1, NULL, err, sizeof(err));
		if (!r) {
			fprintf(stderr, "bench-reader: %s\n", err);
			exit(1);
		}
		const struct trawl_event *ev;
		long n = 0;
		uint64_t sum = 0;
		while (trawl_reader_next(r, &ev) == 1) {
			sum += ev->values[1].u;
			n++;
		}
		trawl_reader_free(r);
		double t = now() - t0;
		if (t < best)
			best = t;
		*count = n;
		if (sum == 42)
			printf(" ");
	}
	return best;
}

static double babeltrace(const char *dir)
{
	char cmd[600];
	if (system("command -v babeltrace2 >/dev/null 2>&1") != 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "babeltrace2 '%s' -o dummy >/dev/null 2>&1", dir);
	double t0 = children();
	if (system(cmd) != 0)
		return -1;
	return children() - t0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strchr(argv[1], '/')) {
		long cnt = 0;
		double t = read_all(argv[1], &cnt);
		printf("%ld events in %.3f s = %.1f M events/s\n", cnt, t, cnt / t / 1e6);
		return 0;
	}
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	int ns = argc > 2 ? atoi(argv[2]) : 2;
	char root[] = "/tmp/bench-reader-XXXXXX";
	if (ns < 1 || ns > 64 || !mkdtemp(root))
		return 1;
	printf("bench-reader: %ld events x %d streams per trace\n", n, ns);
	for (int sched = 0; sched < 2; sched++) {
		char dir[300];
		snprintf(dir, sizeof(dir), "%s/%s", root, sched ? "sched" : "ints");
		if (make_trace(dir, sched, n, ns)) {
			fprintf(stderr, "bench-reader: cannot write %s\n", dir);
			return 1;
		}
		long cnt = 0;
		double t = read_all(dir, &cnt);
		double bt = getenv("BENCH_NO_BT") ? 0 : babeltrace(dir);
		printf("%-6s trawl reader: %ld events in %.3f s = %.1f M events/s", sched ? "sched" : "ints",
		       cnt, t, cnt / t / 1e6);
		if (bt > 0)
			printf("; babeltrace2 -o dummy: %.3f s = %.2f M events/s; ratio %.1fx",
			       bt, cnt / bt / 1e6, bt / t);
		printf("\n");
	}
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (getenv("BENCH_KEEP")) {
		printf("kept %s\n", root);
		return 0;
	}
	return system(cmd) != 0;
}
