/* SPDX-License-Identifier: MIT */
/*
 * bench/bench-nodes.c - simulated nodes streaming kernel events to a trawl
 * relay at a set rate, in real time (bench/top.sh): what `trawl top` and
 * the relay's --metrics meet on a cluster, where `trawl simulate --relay`
 * streams its hosts one after the other as fast as it can.
 *
 *   bench-nodes RELAY SESSION NODES RATE SECONDS
 *
 * NODES nodes ("node01" ...), one writer each, two CPUs (streams) each,
 * RATE events a second per node, SECONDS long, all in one thread. The
 * events are those of an LTTng kernel trace (sched_switch,
 * syscall_entry_getppid, syscall_exit_getppid) stamped with the wall clock
 * (CLOCK_REALTIME), so that a live viewer's "now minus the event" is the
 * latency. On each CPU a task "work" (tid 1000 + cpu) runs half the time
 * (the truth: 50 % of each CPU) making getppid calls, the idle task the
 * other half; one run period per 10 ms. Each stream gets a live tick every
 * 100 ms (the relay's live timer: 100 ms).
 *
 * Prints "bench-nodes: N events in S s (R events/s)" at the end; exits 0,
 * or 1 with a message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trawl/ctf.h"
#include "trawl/relay.h"

#define NCPU 2
#define PERIOD_NS 10000000ull		/* one run period: busy half, idle half */
#define TICK_NS 100000000ull		/* the live timer */
#define EPOCH_S 1700000000ull		/* the clock's offset: ts = wall - this */

struct node {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_wstream *s[NCPU];
	uint64_t next[NCPU];		/* the next event's time on each CPU */
	uint64_t k[NCPU];		/* events of the current period so far */
	uint64_t start[NCPU];		/* the current period's start */
	uint64_t ticked;
};

static struct trawl_ctf_event_class *ev_switch, *ev_entry, *ev_exit;

static uint64_t wall_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec - EPOCH_S * 1000000000ull;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "bench-nodes: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int classes(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class **scp)
{
	struct trawl_ctf_type *ch = trawl_ctf_type_int(w, 8, false, 10);
	struct trawl_ctf_type *i32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *i64 = trawl_ctf_type_int(w, 64, true, 10);
	if (!ch || !i32 || !i64)
		return -ENOMEM;
	ch->u.i.encoding = TRAWL_CTF_ENC_UTF8;
	struct trawl_ctf_type *comm = trawl_ctf_type_array(w, ch, 16);
	struct trawl_ctf_type *fs = trawl_ctf_type_struct(w), *fe = trawl_ctf_type_struct(w),
			      *fx = trawl_ctf_type_struct(w);
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	if (!comm || !fs || !fe || !fx || !sc)
		return -ENOMEM;
	int r = trawl_ctf_struct_add(w, fs, "prev_comm", comm) |
		trawl_ctf_struct_add(w, fs, "prev_tid", i32) |
		trawl_ctf_struct_add(w, fs, "prev_prio", i32) |
		trawl_ctf_struct_add(w, fs, "prev_state", i64) |
		trawl_ctf_struct_add(w, fs, "next_comm", comm) |
		trawl_ctf_struct_add(w, fs, "next_tid", i32) |
		trawl_ctf_struct_add(w, fs, "next_prio", i32) |
		trawl_ctf_struct_add(w, fx, "ret", i64);
	if (r)
		return -EINVAL;
	struct trawl_ctf_event_class *a = trawl_ctf_writer_event_class(w, sc, "sched_switch",
								       INT64_MIN, fs);
	struct trawl_ctf_event_class *b = trawl_ctf_writer_event_class(w, sc,
								       "syscall_entry_getppid",
								       INT64_MIN, fe);
	struct trawl_ctf_event_class *c = trawl_ctf_writer_event_class(w, sc,
								       "syscall_exit_getppid",
								       INT64_MIN, fx);
	if (!a || !b || !c)
		return -errno;
	/* every node declares the same classes in the same order: one id each */
	ev_switch = a, ev_entry = b, ev_exit = c;
	*scp = sc;
	return 0;
}

static int put_switch(struct trawl_ctf_wstream *s, uint64_t ts, int cpu, bool to_work)
{
	uint8_t p[16 + 4 + 4 + 8 + 16 + 4 + 4], *q = p;
	char idle[16] = "swapper/0", work[16] = "work";
	int32_t tidle = 0, twork = 1000 + cpu, prio = 120;
	int64_t state = to_work ? 0 : 1;	/* the task leaves: runnable / sleeping */

	idle[8] = (char)('0' + cpu);
	memcpy(q, to_work ? idle : work, 16), q += 16;
	memcpy(q, to_work ? &tidle : &twork, 4), q += 4;
	memcpy(q, &prio, 4), q += 4;
	memcpy(q, &state, 8), q += 8;
	memcpy(q, to_work ? work : idle, 16), q += 16;
	memcpy(q, to_work ? &twork : &tidle, 4), q += 4;
	memcpy(q, &prio, 4), q += 4;
	return trawl_ctf_wstream_event(s, ev_switch, ts, p, (size_t)(q - p));
}

/*
 * The events of one CPU up to now: per period of n events (n = RATE / NCPU
 * per second, over PERIOD_NS), the switch to work at the period's start,
 * then getppid calls over its first half, then the switch to idle at its
 * middle.
 */
static int emit(struct node *nd, int cpu, uint64_t now, uint64_t per_period, uint64_t *count)
{
	struct trawl_ctf_wstream *s = nd->s[cpu];
	uint64_t step = PERIOD_NS / 2 / (per_period > 2 ? per_period - 1 : 1);
	int r = 0;

	while (!r && nd->next[cpu] <= now) {
		uint64_t t = nd->next[cpu], k = nd->k[cpu], start = nd->start[cpu];
		if (k == 0) {
			r = put_switch(s, t, cpu, true);
		} else if (k + 1 >= per_period) {
			r = put_switch(s, t, cpu, false);
		} else {
			int64_t ret = 1;
			r = k & 1 ? trawl_ctf_wstream_event(s, ev_entry, t, NULL, 0)
				  : trawl_ctf_wstream_event(s, ev_exit, t, &ret, 8);
		}
		(*count)++;
		if (k + 1 >= per_period) {
			nd->k[cpu] = 0;
			nd->next[cpu] = nd->start[cpu] = start + PERIOD_NS;
		} else {
			nd->k[cpu] = k + 1;
			nd->next[cpu] = k + 1 + 1 >= per_period ? start + PERIOD_NS / 2 : t + step;
		}
	}
	return r;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: bench-nodes RELAY SESSION NODES RATE SECONDS\n");
		return 2;
	}
	int nodes = atoi(argv[3]);
	double rate = atof(argv[4]), secs = atof(argv[5]);
	if (nodes < 1 || nodes > 1000 || rate < 1000 || secs <= 0) {
		fprintf(stderr, "bench-nodes: NODES 1..1000, RATE >= 1000, SECONDS > 0\n");
		return 2;
	}
	/* events per period and CPU: the two switches, then entry/exit pairs */
	uint64_t per_period = (uint64_t)(rate / NCPU * (double)PERIOD_NS / 1e9 + 0.5);
	if (per_period < 4)
		per_period = 4;
	struct node *nd = calloc((size_t)nodes, sizeof(*nd));
	if (!nd)
		fail("memory", ENOMEM);
	uint64_t t0 = wall_ns();
	for (int i = 0; i < nodes; i++) {
		char host[32], err[512] = "";
		snprintf(host, sizeof(host), "node%02d", i + 1);
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = argv[1], .session = argv[2], .trace = "kernel",
			.live_timer_us = TICK_NS / 1000,
		};
		struct trawl_ctf_dest *dest = trawl_relay_dest_new(&ro);
		if (!dest)
			fail("relay", errno);
		const struct trawl_ctf_writer_opts o = {
			.sz = sizeof(o), .hostname = host, .domain = "kernel", .dest = dest,
			.packet_size = 64 * 1024, .clock_offset_s = (int64_t)EPOCH_S,
			.err = err, .errlen = sizeof(err),
		};
		struct trawl_ctf_stream_class *sc = NULL;
		if (!(nd[i].w = trawl_ctf_writer_new(&o))) {
			fprintf(stderr, "bench-nodes: %s: %s\n", host, *err ? err : strerror(errno));
			return 1;
		}
		int r = classes(nd[i].w, &sc);
		if (r)
			fail("classes", r);
		for (int c = 0; c < NCPU; c++) {
			if (!(nd[i].s[c] = trawl_ctf_writer_stream(nd[i].w, sc, "channel0", (unsigned)c)))
				fail("stream", errno);
			nd[i].next[c] = nd[i].start[c] = t0 + (uint64_t)c * 1000;
		}
		nd[i].ticked = t0;
	}
	uint64_t end = t0 + (uint64_t)(secs * 1e9), count = 0, now;
	while ((now = wall_ns()) < end) {
		for (int i = 0; i < nodes; i++) {
			for (int c = 0; c < NCPU; c++) {
				int r = emit(&nd[i], c, now, per_period, &count);
				if (r)
					fail("event", r);
			}
			if (now - nd[i].ticked >= TICK_NS) {
				for (int c = 0; c < NCPU; c++) {
					uint64_t at = nd[i].next[c] - 1 < now ? nd[i].next[c] - 1 : now;
					int r = trawl_ctf_wstream_tick(nd[i].s[c], at);
					if (r)
						fail("live tick", r);
				}
				nd[i].ticked = now;
			}
		}
		struct timespec d = { 0, 1000000 };
		nanosleep(&d, NULL);
	}
	for (int i = 0; i < nodes; i++) {
		int r = trawl_ctf_writer_close(nd[i].w);
		if (r)
			fail("close", r);
		trawl_ctf_writer_free(nd[i].w);
	}
	double took = (double)(wall_ns() - t0) / 1e9;
	printf("bench-nodes: %llu events in %.2f s (%.0f events/s)\n", (unsigned long long)count,
	       took, (double)count / took);
	free(nd);
	return 0;
}
