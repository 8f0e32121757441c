/* SPDX-License-Identifier: MIT */
/*
 * bench-ust: the cost of a user-space tracepoint, as lttng-ust's anchor
 * measures it (bench/ust.sh runs both side by side): T threads emit N
 * events in total (N/T each) between a barrier and a CLOCK_MONOTONIC read;
 * ns/event (wall) = (last end - first start) / N, ns/event (thread) = mean
 * over threads of loop time / (N/T). The event: 3 integers and a short
 * string (u64 seq, s32 tid, s64 val, "hello").
 *
 *   bench-ust [options]
 *     -n N          events in total (default 10000000)
 *     -t T          threads (default 1)
 *     -m MODE       discard | overwrite | disabled | notp | percpu | perthread
 *                   | agent | count
 *                   (disabled: compiled in, no session; notp: empty loop;
 *                   percpu / perthread: the buffer prototypes, no session;
 *                   agent: no in-process session, the events are recorded
 *                   by the agent the program registers with (run under
 *                   `trawl agent --oneshot`, TRAWL_AGENT_SOCKET set);
 *                   count: emit nothing, read the trace in -o DIR and
 *                   print recorded, discarded, bytes, bytes_per_event)
 *     -H HDR        large | fixed (event header; default large)
 *     -c CLOCK      auto | monotonic
 *     -S SIZE -N COUNT  sub-buffer size and count (default 256 KiB x 8)
 *     -r RATE       pace each thread at RATE events/s (0: flat out)
 *     -o DIR        trace directory (default ./bench-ust-trace, removed)
 *     -k            keep the trace
 *
 * Prints one line of key=value: events, threads, ns_per_event_wall,
 * ns_per_event_thread, Mev_per_s, recorded (read back from the trace),
 * lost (= events - recorded), discarded (events_discarded in the trace),
 * stats_* (the session's counters), bytes (trace directory, as du -sb),
 * bytes_per_event.
 */
#define TRAWL_TRACEPOINT_DEFINE
#include "trawl/tracepoint.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "util/clock.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

TRAWL_TRACEPOINT_EVENT(bench, ev, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq, int32_t tid, int64_t val, const char *msg),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(uint64_t, seq, seq)
		TRAWL_FIELD_INT(int32_t, tid, tid)
		TRAWL_FIELD_INT(int64_t, val, val)
		TRAWL_FIELD_STRING(msg, msg)))

enum mode { M_DISCARD, M_OVERWRITE, M_DISABLED, M_NOTP, M_PERCPU, M_PERTHREAD, M_AGENT, M_COUNT };

static uint64_t nevents = 10000000;
static int nthreads = 1;
static enum mode mode = M_DISCARD;
static uint64_t rate;
static pthread_barrier_t bar;
static uint64_t t_start[64], t_end[64];
static double tsc_per_ns;

/* ------------------------------------------------ buffer prototypes
 *
 * Producer cost only (no consumer: the buffers wrap), the same 40-byte
 * record (10-byte header + 30-byte payload) in 8 x 256 KiB per buffer.
 *
 * per-CPU: a buffer per CPU shared by every thread that runs there: the
 * CPU from sched_getcpu() (rseq, no system call), then reserve with a
 * compare-and-swap on the buffer's write offset (a thread may be preempted
 * or migrate between reading the CPU and reserving), write, then commit
 * with an atomic add on the sub-buffer's commit count (LTTng-UST's scheme).
 *
 * per-thread: a buffer per thread, single producer: reserve is a plain
 * increment, commit one release store.
 */
#define PROTO_SIZE (8u << 18)
#define REC 40u

struct proto_cpu {
	alignas(64) uint64_t head;
	alignas(64) uint64_t commit[8];
	uint8_t *mem;
};

static struct proto_cpu pcpu[256];

static inline void proto_payload(uint8_t *p, uint64_t ts, uint64_t seq, int32_t tid)
{
	uint16_t id = 1;
	int64_t val = (int64_t)seq * 7;
	memcpy(p, &id, 2);
	memcpy(p + 2, &ts, 8);
	memcpy(p + 10, &seq, 8);
	memcpy(p + 18, &tid, 4);
	memcpy(p + 22, &val, 8);
	memcpy(p + 30, "hello", 6);
}

static void proto_percpu(uint64_t seq, int32_t tid)
{
	int cpu = sched_getcpu();
	struct proto_cpu *b = &pcpu[cpu & 255];
	uint64_t ts = __rdtsc();
	uint64_t old = __atomic_load_n(&b->head, __ATOMIC_RELAXED), off;
	do {
		off = old;
	} while (!__atomic_compare_exchange_n(&b->head, &old, old + REC, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	uint8_t *p = b->mem + (off & (PROTO_SIZE - 1));
	if ((off & (PROTO_SIZE - 1)) + REC <= PROTO_SIZE)
		proto_payload(p, ts, seq, tid);
	__atomic_fetch_add(&b->commit[(off >> 18) & 7], REC, __ATOMIC_RELEASE);
}

struct proto_thr {
	uint64_t head;
	uint64_t commit;
	uint8_t *mem;
};

static __thread struct proto_thr pthr;

static void proto_perthread(uint64_t seq, int32_t tid)
{
	struct proto_thr *b = &pthr;
	uint64_t ts = __rdtsc();
	uint64_t off = b->head;
	if ((off & (PROTO_SIZE - 1)) + REC > PROTO_SIZE)
		off = (off + PROTO_SIZE) & ~(uint64_t)(PROTO_SIZE - 1);
	proto_payload(b->mem + (off & (PROTO_SIZE - 1)), ts, seq, tid);
	b->head = off + REC;
	__atomic_store_n(&b->commit, off + REC, __ATOMIC_RELEASE);
}

/* ------------------------------------------------ the loop */

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;
	uint64_t n = nevents / (uint64_t)nthreads;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	if (mode == M_PERTHREAD) {
		pthr.mem = aligned_alloc(4096, PROTO_SIZE);
		memset(pthr.mem, 0, PROTO_SIZE);
	}
	pthread_barrier_wait(&bar);
	uint64_t t0 = tr_mono_ns();
	uint64_t c0 = __rdtsc();
	double gap = rate ? tsc_per_ns * 1e9 / (double)rate : 0;
	if (!rate && mode == M_NOTP) {
		/* one loop per mode: the empty loop and the disabled one are
		 * compared on equal terms (as in the lttng-ust anchor) */
		for (uint64_t i = 0; i < n; i++)
			__asm__ volatile("" ::: "memory");
	} else if (!rate && (mode == M_DISABLED || mode == M_DISCARD || mode == M_OVERWRITE ||
			     mode == M_AGENT)) {
		for (uint64_t i = 0; i < n; i++)
			trawl_tracepoint(bench, ev, i, tid, (int64_t)(i * 7), "hello");
	} else {
		for (uint64_t i = 0; i < n; i++) {
			if (rate) {
				uint64_t due = c0 + (uint64_t)(gap * (double)i);
				while (__rdtsc() < due)
					__builtin_ia32_pause();
			}
			switch (mode) {
			case M_NOTP:
				__asm__ volatile("" ::: "memory");
				break;
			case M_PERCPU:
				proto_percpu(i, tid);
				break;
			case M_PERTHREAD:
				proto_perthread(i, tid);
				break;
			default:
				trawl_tracepoint(bench, ev, i, tid, (int64_t)(i * 7), "hello");
			}
		}
	}
	t_end[idx] = tr_mono_ns();
	t_start[idx] = t0;
	if (mode == M_PERTHREAD)
		free(pthr.mem);
	return NULL;
}

static uint64_t du(const char *dir)
{
	uint64_t sum = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char p[4096];
	if (!d)
		return 0;
	if (stat(dir, &st) == 0)
		sum += (uint64_t)st.st_size;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			sum += du(p);
		else
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

static void count_trace(const char *dir, uint64_t *events, uint64_t *discarded)
{
	char err[512];
	const char *paths[] = { dir };
	struct trawl_reader_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	*events = *discarded = 0;
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "bench-ust: %s\n", err);
		return;
	}
	const struct trawl_event *ev;
	int ret;
	while ((ret = trawl_reader_next(r, &ev)) != 0)
		if (ret > 0)
			(*events)++;
	for (size_t i = 0; i < trawl_reader_ntraces(r); i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t j = 0; j < trawl_reader_trace_nstreams(t); j++) {
			struct trawl_reader_stream_stats st;
			trawl_reader_stream_stats(trawl_reader_trace_stream(t, j), &st);
			*discarded += st.discarded;
		}
	}
	trawl_reader_free(r);
}

int main(int argc, char **argv)
{
	const char *out = "bench-ust-trace";
	size_t S = 256 * 1024;
	unsigned N = 8;
	int keep = 0, c;
	enum trawl_ust_header hdr = TRAWL_UST_HEADER_LARGE;
	enum trawl_ust_clock clk = TRAWL_UST_CLOCK_AUTO;
	while ((c = getopt(argc, argv, "n:t:m:H:c:S:N:r:o:k")) != -1) {
		switch (c) {
		case 'n': nevents = strtoull(optarg, NULL, 10); break;
		case 't': nthreads = atoi(optarg); break;
		case 'm':
			mode = !strcmp(optarg, "overwrite") ? M_OVERWRITE :
			       !strcmp(optarg, "disabled") ? M_DISABLED :
			       !strcmp(optarg, "notp") ? M_NOTP :
			       !strcmp(optarg, "percpu") ? M_PERCPU :
			       !strcmp(optarg, "perthread") ? M_PERTHREAD :
			       !strcmp(optarg, "agent") ? M_AGENT :
			       !strcmp(optarg, "count") ? M_COUNT : M_DISCARD;
			break;
		case 'H': hdr = !strcmp(optarg, "large") ? TRAWL_UST_HEADER_LARGE : TRAWL_UST_HEADER_FIXED; break;
		case 'c': clk = !strcmp(optarg, "monotonic") ? TRAWL_UST_CLOCK_MONOTONIC : TRAWL_UST_CLOCK_AUTO; break;
		case 'S': S = strtoull(optarg, NULL, 0); break;
		case 'N': N = (unsigned)atoi(optarg); break;
		case 'r': rate = strtoull(optarg, NULL, 10); break;
		case 'o': out = optarg; break;
		case 'k': keep = 1; break;
		default:
			fprintf(stderr, "usage: bench-ust [-n N] [-t T] [-m MODE] [-H fixed|large] "
				"[-c auto|monotonic] [-S SIZE] [-N COUNT] [-r RATE] [-o DIR] [-k]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		return 2;
	if (mode == M_COUNT) {
		uint64_t rec, disc, bytes = du(out);
		count_trace(out, &rec, &disc);
		printf("recorded=%llu discarded=%llu bytes=%llu bytes_per_event=%.2f\n",
		       (unsigned long long)rec, (unsigned long long)disc,
		       (unsigned long long)bytes, rec ? (double)bytes / (double)rec : 0.0);
		return 0;
	}
	/* TSC ticks per ns, for pacing */
	uint64_t a = tr_mono_ns(), ca = __rdtsc();
	struct timespec d = { 0, 20000000 };
	nanosleep(&d, NULL);
	tsc_per_ns = (double)(__rdtsc() - ca) / (double)(tr_mono_ns() - a);
	for (int i = 0; mode == M_PERCPU && i < get_nprocs_conf() && i < 256; i++) {
		pcpu[i].mem = aligned_alloc(4096, PROTO_SIZE);
		memset(pcpu[i].mem, 0, PROTO_SIZE);
	}

	struct trawl_ust_session *s = NULL;
	if (mode == M_DISCARD || mode == M_OVERWRITE) {
		char cmd[4200], err[256];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
		if (system(cmd) != 0)
			return 1;
		struct trawl_ust_session_opts o;
		memset(&o, 0, sizeof(o));
		o.sz = sizeof(o);
		o.output = out;
		o.mode = mode == M_OVERWRITE ? TRAWL_UST_OVERWRITE : TRAWL_UST_DISCARD;
		o.subbuf_size = S;
		o.nsubbuf = N;
		o.header = hdr;
		o.clock = clk;
		s = trawl_ust_session_new(&o, err, sizeof(err));
		if (!s || trawl_ust_session_start(s) < 0) {
			fprintf(stderr, "bench-ust: cannot start a session: %s\n", s ? "" : err);
			return 1;
		}
	}
	pthread_t th[64];
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	struct trawl_ust_stats st;
	memset(&st, 0, sizeof(st));
	if (s) {
		/* in overwrite mode stop writes the flight recorder's content */
		trawl_ust_session_stop(s);
		trawl_ust_session_stats(s, &st);
		trawl_ust_session_free(s);
	}
	uint64_t s0 = t_start[0], e0 = t_end[0];
	double sum = 0;
	uint64_t per = nevents / (uint64_t)nthreads, tot = per * (uint64_t)nthreads;
	for (int i = 0; i < nthreads; i++) {
		if (t_start[i] < s0)
			s0 = t_start[i];
		if (t_end[i] > e0)
			e0 = t_end[i];
		sum += (double)(t_end[i] - t_start[i]) / (double)per;
	}
	printf("events=%llu threads=%d ns_per_event_wall=%.2f ns_per_event_thread=%.2f Mev_per_s=%.3f",
	       (unsigned long long)tot, nthreads, (double)(e0 - s0) / (double)tot, sum / nthreads,
	       (double)tot / ((double)(e0 - s0) / 1e3));
	if (s) {
		uint64_t rec, disc;
		count_trace(out, &rec, &disc);
		uint64_t bytes = du(out);
		printf(" recorded=%llu lost=%llu discarded=%llu stats_recorded=%llu stats_discarded=%llu"
		       " stats_overwritten=%llu bytes=%llu bytes_per_event=%.2f",
		       (unsigned long long)rec, (unsigned long long)(tot - rec),
		       (unsigned long long)disc, (unsigned long long)st.recorded,
		       (unsigned long long)st.discarded, (unsigned long long)st.overwritten,
		       (unsigned long long)bytes, rec ? (double)bytes / (double)rec : 0.0);
		if (!keep) {
			char cmd[4200];
			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
			if (system(cmd) != 0)
				fprintf(stderr, "bench-ust: cannot remove %s\n", out);
		}
	}
	printf("\n");
	return 0;
}
