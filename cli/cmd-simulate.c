/* SPDX-License-Identifier: MIT */
/*
 * trawl simulate: writes a synthetic multi-host session with the CTF writer,
 * DIR/host<i>/{kernel,ust}/, deterministic for a given seed.
 *
 * Every host has its own processes and threads (pids, comm names), its own
 * boot_id (the clock uuid) and boot time (the clock offset); all hosts cover
 * the same wall-clock span, their clocks exactly aligned to it (with --sync,
 * each host's clock has its own offset and drift, applied to every
 * timestamp it writes, and hosts exchange messages: cli/sim-sync.c). Each stream
 * is generated on its own from a random generator seeded by (seed, host,
 * domain, cpu), so the output does not depend on the order of generation,
 * and memory stays bounded whatever the number of events.
 *
 * Kernel trace: one compact-header stream per CPU with LTTng's sched_switch,
 * sched_wakeup and read/write syscall entry/exit events; a CPU runs its own
 * tasks (no migration) and each switch's next task is the following
 * switch's prev. UST trace: one large-header stream per CPU, event context
 * vpid/vtid, app:request_begin / app:request_end pairs whose latency_ms is
 * the time between them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "trawl/relay.h"
#include "cli.h"
#include "sim.h"
#include "util/clock.h"

#define NS		1000000000ull
#define MAX_CPUS	1024
#define PROGRESS_EVERY	10000000ull

/* ------------------------------------------------------------- random */

/* uniform in [0, k) */
static inline uint32_t below(uint64_t *s, uint32_t k)
{
	return (uint32_t)(((sim_rnd(s) >> 32) * (uint64_t)k) >> 32);
}

static void rnd_uuid(uint64_t *s, uint8_t u[16])
{
	uint64_t a = sim_rnd(s), b = sim_rnd(s);
	memcpy(u, &a, 8);
	memcpy(u + 8, &b, 8);
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
}

/* ------------------------------------------------------- serialization */

static inline uint8_t *put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}
#define PUT(p, T, v) do { T _v = (T)(v); p = put(p, &_v, sizeof(_v)); } while (0)

static inline uint8_t *put_str(uint8_t *p, const char *s)
{
	size_t n = strlen(s) + 1;
	memcpy(p, s, n);
	return p + n;
}

/* --------------------------------------------------------------- model */

struct task {
	char comm[16];
	int32_t tid, pid, prio;
	uint32_t cpu;
	bool kthread;
};

struct host {
	unsigned idx;
	char name[32];
	uint8_t boot_id[16], kernel_uuid[16], ust_uuid[16];
	int64_t offset_s, offset;	/* epoch -> this host's monotonic zero */
	uint64_t start;			/* monotonic ns at the session start */
	const struct sim_clock *clk;	/* --sync: its own clock, else NULL */
	struct task *tasks;
	size_t ntasks;
	/* per CPU: indexes into tasks; [0] is swapper/N */
	uint32_t **cpu_tasks;
	uint32_t *cpu_ntasks;
	/* per CPU: user tasks (for the UST trace) */
	uint32_t **cpu_apps;
	uint32_t *cpu_napps;
};

struct sim {
	const char *out;		/* NULL: to the relay only */
	const char *relay, *session;	/* --relay, --session */
	unsigned hosts, cpus;
	uint64_t events, seed;
	size_t packet_size;
	bool shapes, progress;
	uint64_t wall0;			/* session start, ns since the epoch */
	uint64_t span;			/* ns covered by every host */
	uint64_t done, next_progress;
	uint64_t kernel_events, ust_events;
	struct sim_sync *sync;		/* --sync */
};

enum { EV_SWITCH, EV_WAKEUP, EV_ENTRY_READ, EV_EXIT_READ, EV_ENTRY_WRITE, EV_EXIT_WRITE,
       EV_NBASE };

/* --shapes: more syscalls, so that event ids >= 31 appear in compact streams */
static const char *const extra_syscalls[] = {
	"openat", "close", "fstat", "mmap", "munmap", "brk", "ioctl", "pread64",
	"pwrite64", "readv", "writev", "poll", "futex", "epoll_wait", "nanosleep",
	"getpid", "clock_gettime",
};
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define NEXTRA ARRAY_LEN(extra_syscalls)

struct kclasses {
	const struct trawl_ctf_event_class *ev[EV_NBASE + 2 * NEXTRA];
	size_t n;
};

struct uclasses {
	const struct trawl_ctf_event_class *begin, *end;
};

static const char *const procs[] = {
	"systemd", "sshd", "nginx", "postgres", "java", "redis-server", "node",
	"python3", "bash", "cron", "rsyslogd", "containerd", "kubelet", "dockerd",
	"chronyd", "haproxy", "memcached", "envoy", "etcd", "prometheus",
};

static const char *const paths[] = {
	"/", "/index.html", "/api/v1/users", "/api/v1/orders", "/api/v2/search",
	"/static/app.js", "/static/style.css", "/healthz", "/metrics", "/login",
};

static const char *const tricky[] = {
	"", "/q\"uote\"", "/back\\slash\\", "/tab\there", "/new\nline\n", "\t\"\\\n",
};

/* ------------------------------------------------------------- hosts */

static void host_free(struct host *h, unsigned cpus)
{
	if (h->cpu_tasks)
		for (unsigned c = 0; c < cpus; c++)
			free(h->cpu_tasks[c]);
	if (h->cpu_apps)
		for (unsigned c = 0; c < cpus; c++)
			free(h->cpu_apps[c]);
	free(h->cpu_tasks);
	free(h->cpu_ntasks);
	free(h->cpu_apps);
	free(h->cpu_napps);
	free(h->tasks);
	memset(h, 0, sizeof(*h));
}

static int host_init(struct sim *S, struct host *h, unsigned idx)
{
	uint64_t r = sim_seed_for(S->seed, idx + 1, 0, 0);
	unsigned C = S->cpus;

	memset(h, 0, sizeof(*h));
	h->idx = idx;
	snprintf(h->name, sizeof(h->name), "host%u", idx);
	rnd_uuid(&r, h->boot_id);
	rnd_uuid(&r, h->kernel_uuid);
	rnd_uuid(&r, h->ust_uuid);
	/* up since one hour to sixty days, to the nanosecond */
	uint64_t uptime = 3600 * NS + sim_rnd(&r) % (60 * 86400 * NS);
	uint64_t boot = S->wall0 - uptime;
	h->offset_s = (int64_t)(boot / NS);
	h->offset = (int64_t)(boot % NS);
	h->start = uptime;

	size_t nprocs = 6 + below(&r, 10);
	size_t cap = 4 * C + nprocs * 4;
	h->tasks = calloc(cap, sizeof(*h->tasks));
	h->cpu_tasks = calloc(C, sizeof(*h->cpu_tasks));
	h->cpu_ntasks = calloc(C, sizeof(*h->cpu_ntasks));
	h->cpu_apps = calloc(C, sizeof(*h->cpu_apps));
	h->cpu_napps = calloc(C, sizeof(*h->cpu_napps));
	if (!h->tasks || !h->cpu_tasks || !h->cpu_ntasks || !h->cpu_apps || !h->cpu_napps)
		return -ENOMEM;

	/* kernel threads per CPU: swapper/N (tid 0), migration/N (RT), ... */
	int32_t next = 10 + (int32_t)below(&r, 5);
	for (unsigned c = 0; c < C; c++) {
		static const char *const kt[] = { "swapper/", "migration/", "ksoftirqd/",
						   "kworker/" };
		for (size_t k = 0; k < 4; k++) {
			struct task *t = &h->tasks[h->ntasks++];
			char name[48];
			snprintf(name, sizeof(name), "%s%u%s", kt[k], c, k == 3 ? ":1" : "");
			snprintf(t->comm, sizeof(t->comm), "%.15s", name);
			t->tid = t->pid = k == 0 ? 0 : next++;
			t->prio = k == 1 ? -100 : 20;
			t->cpu = c;
			t->kthread = true;
		}
	}
	/* user processes, some with threads */
	uint32_t first = (uint32_t)below(&r, ARRAY_LEN(procs));
	int32_t pid = 300 + (int32_t)below(&r, 2000);
	for (size_t p = 0; p < nprocs; p++) {
		const char *name = procs[(first + p * 7) % ARRAY_LEN(procs)];
		unsigned nthreads = 1 + below(&r, 4);
		for (unsigned k = 0; k < nthreads; k++) {
			struct task *t = &h->tasks[h->ntasks++];
			snprintf(t->comm, sizeof(t->comm), "%s", name);
			t->pid = pid;
			t->tid = pid + (int32_t)k;
			t->prio = below(&r, 8) == 0 ? 20 - (int32_t)below(&r, 20) : 20;
			t->cpu = (uint32_t)((p + k) % C);
		}
		pid += 4 + (int32_t)below(&r, 3000);
	}
	for (unsigned c = 0; c < C; c++) {
		h->cpu_tasks[c] = calloc(h->ntasks, sizeof(uint32_t));
		h->cpu_apps[c] = calloc(h->ntasks, sizeof(uint32_t));
		if (!h->cpu_tasks[c] || !h->cpu_apps[c])
			return -ENOMEM;
	}
	for (size_t i = 0; i < h->ntasks; i++) {
		struct task *t = &h->tasks[i];
		h->cpu_tasks[t->cpu][h->cpu_ntasks[t->cpu]++] = (uint32_t)i;
		if (!t->kthread)
			h->cpu_apps[t->cpu][h->cpu_napps[t->cpu]++] = (uint32_t)i;
	}
	return 0;
}

/* ---------------------------------------------------------- progress */

static void progress(struct sim *S, uint64_t n)
{
	S->done += n;
	if (S->progress && S->done >= S->next_progress) {
		fprintf(stderr, "trawl simulate: %" PRIu64 "/%" PRIu64 " written (%.0f%%)\n",
			S->done, S->events, 100.0 * (double)S->done / (double)S->events);
		S->next_progress = (S->done / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
	}
}

/*
 * A host's monotonic time ts on a perfect clock -> what its own clock
 * reads then (--sync): the same instant on the host's clock.
 */
static inline uint64_t local_ts(const struct host *h, uint64_t ts)
{
	if (!h->clk)
		return ts;
	int64_t dt = (int64_t)(ts - h->start);
	return ts + (uint64_t)sim_clock_delta(h->clk, dt);
}

/*
 * Timestamps of a stream: n events spread over [start, start + span - gaps],
 * one per slot of a regular grid, each jittered inside its slot; --shapes
 * idle gaps are inserted on top, so the stream still ends within the span.
 */
struct clockgen {
	uint64_t pos, step, rem, acc, div;
};

static void clock_init(struct clockgen *g, uint64_t start, uint64_t span, uint64_t n)
{
	g->div = n + 1;
	g->pos = start;
	g->step = span / g->div;
	g->rem = span % g->div;
	g->acc = 0;
}

static inline uint64_t clock_next(struct clockgen *g, uint64_t *r)
{
	uint64_t ts = g->pos + (g->step > 1 ? below(r, (uint32_t)(g->step > UINT32_MAX ? UINT32_MAX : g->step)) : 0);
	g->pos += g->step;
	g->acc += g->rem;
	if (g->acc >= g->div) {
		g->acc -= g->div;
		g->pos++;
	}
	return ts;
}

#define GAP_SHORT	200000000ull	/* > 2^27 ns: extended compact header */
#define GAP_LONG	5000000000ull	/* > 2^32 ns: extended large header */

/* --shapes stream events: discarded events, empty packets, gaps. */
static int shapes_hooks(struct sim *S, struct trawl_ctf_wstream *ws, uint64_t k, uint64_t n,
			struct clockgen *g, uint64_t *r, uint64_t ts, bool kernel)
{
	int ret = 0;
	if (!S->shapes || n < 12)
		return 0;
	if (k == n / 2) {
		/* a packet boundary, then events lost before the next packet */
		ret = trawl_ctf_wstream_flush(ws, ts);
		trawl_ctf_wstream_discarded(ws, 1 + below(r, 1000));
	} else if (k == (3 * n) / 4) {
		/* a packet closed early, then an empty one */
		ret = trawl_ctf_wstream_flush(ws, ts);
		if (!ret)
			ret = trawl_ctf_wstream_flush(ws, ts);
	}
	if (k == n / 3)
		g->pos += kernel ? GAP_SHORT : GAP_LONG;
	else if (k == (2 * n) / 3)
		g->pos += kernel ? GAP_LONG : GAP_SHORT;
	return ret;
}

/* ------------------------------------------------------------- kernel */

static int kernel_classes(struct trawl_ctf_writer *w, bool shapes,
			  struct trawl_ctf_stream_class **scp, struct kclasses *k)
{
	struct trawl_ctf_type *ch = trawl_ctf_type_int(w, 8, false, 10);
	struct trawl_ctf_type *i32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *i64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *hex = trawl_ctf_type_int(w, 64, false, 16);
	if (!ch || !i32 || !i64 || !u32 || !u64 || !hex)
		return -errno;
	ch->u.i.encoding = TRAWL_CTF_ENC_UTF8;	/* char[16]: printed as text */
	struct trawl_ctf_type *comm = trawl_ctf_type_array(w, ch, 16);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	if (!comm || !sc)
		return -errno;
	*scp = sc;

	struct trawl_ctf_type *f[EV_NBASE];
	for (int i = 0; i < EV_NBASE; i++)
		if (!(f[i] = trawl_ctf_type_struct(w)))
			return -errno;
	int ret = 0;
	ret |= trawl_ctf_struct_add(w, f[EV_SWITCH], "prev_comm", comm);
	ret |= trawl_ctf_struct_add(w, f[EV_SWITCH], "prev_tid", i32);
	ret |= trawl_ctf_struct_add(w, f[EV_SWITCH], "prev_prio", i32);
	ret |= trawl_ctf_struct_add(w, f[EV_SWITCH], "prev_state", i64);
	ret |= trawl_ctf_struct_add(w, f[EV_SWITCH], "next_comm", comm);
	ret |= trawl_ctf_struct_add(w, f[EV_SWITCH], "next_tid", i32);
	ret |= trawl_ctf_struct_add(w, f[EV_SWITCH], "next_prio", i32);
	ret |= trawl_ctf_struct_add(w, f[EV_WAKEUP], "comm", comm);
	ret |= trawl_ctf_struct_add(w, f[EV_WAKEUP], "tid", i32);
	ret |= trawl_ctf_struct_add(w, f[EV_WAKEUP], "prio", i32);
	ret |= trawl_ctf_struct_add(w, f[EV_WAKEUP], "target_cpu", i32);
	for (int i = EV_ENTRY_READ; i <= EV_ENTRY_WRITE; i += 2) {
		ret |= trawl_ctf_struct_add(w, f[i], "fd", u32);
		ret |= trawl_ctf_struct_add(w, f[i], "buf", hex);
		ret |= trawl_ctf_struct_add(w, f[i], "count", u64);
	}
	ret |= trawl_ctf_struct_add(w, f[EV_EXIT_READ], "ret", i64);
	ret |= trawl_ctf_struct_add(w, f[EV_EXIT_READ], "buf", hex);
	ret |= trawl_ctf_struct_add(w, f[EV_EXIT_WRITE], "ret", i64);
	if (ret)
		return -EINVAL;
	static const char *const names[EV_NBASE] = {
		"sched_switch", "sched_wakeup", "syscall_entry_read", "syscall_exit_read",
		"syscall_entry_write", "syscall_exit_write",
	};
	k->n = 0;
	for (int i = 0; i < EV_NBASE; i++)
		if (!(k->ev[k->n++] = trawl_ctf_writer_event_class(w, sc, names[i], INT64_MIN, f[i])))
			return -errno;
	if (!shapes)
		return 0;
	struct trawl_ctf_type *entry = trawl_ctf_type_struct(w), *exit_ = trawl_ctf_type_struct(w);
	if (!entry || !exit_ || trawl_ctf_struct_add(w, entry, "fd", u32) ||
	    trawl_ctf_struct_add(w, exit_, "ret", i64))
		return -EINVAL;
	for (size_t i = 0; i < NEXTRA; i++) {
		char name[64];
		snprintf(name, sizeof(name), "syscall_entry_%s", extra_syscalls[i]);
		if (!(k->ev[k->n++] = trawl_ctf_writer_event_class(w, sc, name, INT64_MIN, entry)))
			return -errno;
		snprintf(name, sizeof(name), "syscall_exit_%s", extra_syscalls[i]);
		if (!(k->ev[k->n++] = trawl_ctf_writer_event_class(w, sc, name, INT64_MIN, exit_)))
			return -errno;
	}
	return 0;
}

struct cpustate {
	uint32_t cur;			/* index in the host's tasks */
	int pending;			/* class index of the syscall exit due, or 0 */
	uint32_t fd;
	uint64_t buf, count;
};

static uint8_t *put_comm(uint8_t *p, const struct task *t)
{
	memcpy(p, t->comm, 16);
	return p + 16;
}

static int kernel_stream(struct sim *S, struct host *h, const struct kclasses *kc,
			 struct trawl_ctf_wstream *ws, uint32_t cpu, uint64_t n, uint64_t span)
{
	uint64_t r = sim_seed_for(S->seed, h->idx + 1, 1, cpu + 1);
	const uint32_t *mine = h->cpu_tasks[cpu];
	uint32_t nmine = h->cpu_ntasks[cpu];
	struct cpustate st = { .cur = mine[0] };
	bool forced = false;
	struct clockgen g;
	uint8_t buf[128];
	int ret;

	if (S->shapes && n >= 12)
		span -= GAP_SHORT + GAP_LONG;
	clock_init(&g, h->start, span, n);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t ts = local_ts(h, g.pos);
		if ((ret = shapes_hooks(S, ws, k, n, &g, &r, ts, true)) < 0)
			return ret;
		ts = local_ts(h, clock_next(&g, &r));
		const struct task *cur = &h->tasks[st.cur];
		uint8_t *p = buf;
		size_t ev;
		if (st.pending) {
			ev = (size_t)st.pending;
			if (ev == EV_EXIT_READ || ev == EV_EXIT_WRITE) {
				int64_t rv = below(&r, 20) == 0 ? -11 /* EAGAIN */ :
					     (int64_t)(below(&r, 4) ? st.count : st.count / 2);
				PUT(p, int64_t, rv);
				if (ev == EV_EXIT_READ)
					PUT(p, uint64_t, st.buf);
			} else {
				PUT(p, int64_t, below(&r, 10) ? 0 : -(int64_t)(1 + below(&r, 30)));
			}
			st.pending = 0;
		} else {
			uint32_t x = below(&r, 100);
			bool idle = cur->tid == 0;
			if (S->shapes && !idle && !cur->kthread && (!forced || x < 5)) {
				/* an extra syscall, the last one (ids >= 31) first */
				size_t e = !forced ? NEXTRA - 1 : below(&r, NEXTRA);
				forced = true;
				ev = EV_NBASE + 2 * e;
				PUT(p, uint32_t, below(&r, 64));
				st.pending = (int)ev + 1;
			} else if (idle ? x < 60 : x < 14 || (cur->kthread && x < 60)) {
				/* switch out: to any other task of this CPU, idle among them */
				uint32_t nxt = mine[below(&r, nmine - 1)];
				if (nxt == st.cur)
					nxt = mine[nmine - 1];
				const struct task *nt = &h->tasks[nxt];
				ev = EV_SWITCH;
				p = put_comm(p, cur);
				PUT(p, int32_t, cur->tid);
				PUT(p, int32_t, cur->prio);
				PUT(p, int64_t, idle ? 0 : below(&r, 3) == 0 ? 0 : below(&r, 4) ? 1 : 2);
				p = put_comm(p, nt);
				PUT(p, int32_t, nt->tid);
				PUT(p, int32_t, nt->prio);
				st.cur = nxt;
			} else if (idle || cur->kthread || x < 30) {
				/* wake up some task, on its own CPU */
				const struct task *t = &h->tasks[below(&r, (uint32_t)h->ntasks)];
				if (t->tid == 0)
					t = &h->tasks[h->ntasks - 1];
				ev = EV_WAKEUP;
				p = put_comm(p, t);
				PUT(p, int32_t, t->tid);
				PUT(p, int32_t, t->prio);
				PUT(p, int32_t, t->cpu);
			} else {
				bool rd = x < 65;
				ev = rd ? EV_ENTRY_READ : EV_ENTRY_WRITE;
				st.fd = 3 + below(&r, 60);
				st.buf = 0x7f0000000000ull + ((uint64_t)below(&r, 1u << 30) << 12);
				st.count = 1ull << below(&r, 17);
				PUT(p, uint32_t, st.fd);
				PUT(p, uint64_t, st.buf);
				PUT(p, uint64_t, st.count);
				st.pending = (int)ev + 1;
			}
		}
		ret = trawl_ctf_wstream_event(ws, kc->ev[ev], ts, buf, (size_t)(p - buf));
		if (ret < 0)
			return ret;
		if (((k + 1) & 0xffff) == 0)
			progress(S, 0x10000);
	}
	progress(S, n & 0xffff);
	return 0;
}

/* ---------------------------------------------------------------- ust */

static int ust_classes(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class **scp,
		       struct uclasses *u)
{
	struct trawl_ctf_type *i8 = trawl_ctf_type_int(w, 8, true, 10);
	struct trawl_ctf_type *i16 = trawl_ctf_type_int(w, 16, true, 10);
	struct trawl_ctf_type *i32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *i64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *u8 = trawl_ctf_type_int(w, 8, false, 10);
	struct trawl_ctf_type *u16 = trawl_ctf_type_int(w, 16, false, 10);
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *dbl = trawl_ctf_type_float(w, 64);
	struct trawl_ctf_type *flt = trawl_ctf_type_float(w, 32);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	struct trawl_ctf_type *method = i8 ? trawl_ctf_type_enum(w, i8) : NULL;
	struct trawl_ctf_type *status = i16 ? trawl_ctf_type_enum(w, i16) : NULL;
	struct trawl_ctf_type *nested = trawl_ctf_type_struct(w);
	struct trawl_ctf_type *b = trawl_ctf_type_struct(w), *e = trawl_ctf_type_struct(w);
	struct trawl_ctf_type *seq = u8 ? trawl_ctf_type_sequence(w, u8, "payload_length") : NULL;
	struct trawl_ctf_type *arr = u32 ? trawl_ctf_type_array(w, u32, 3) : NULL;
	if (!i32 || !i64 || !u16 || !u64 || !str || !dbl || !flt || !ctx || !method ||
	    !status || !nested || !b || !e || !seq || !arr)
		return -errno;
	int ret = 0;
	ret |= trawl_ctf_struct_add(w, ctx, "vpid", i32);
	ret |= trawl_ctf_struct_add(w, ctx, "vtid", i32);
	static const char *const methods[] = { "GET", "POST", "PUT", "DELETE", "HEAD" };
	for (size_t i = 0; i < ARRAY_LEN(methods); i++)
		ret |= trawl_ctf_enum_add(w, method, methods[i], i, i);
	ret |= trawl_ctf_enum_add(w, status, "ABORTED", (uint64_t)-1, (uint64_t)-1);
	ret |= trawl_ctf_enum_add(w, status, "OK", 200, 299);
	ret |= trawl_ctf_enum_add(w, status, "REDIRECT", 300, 399);
	ret |= trawl_ctf_enum_add(w, status, "CLIENT_ERROR", 400, 499);
	ret |= trawl_ctf_enum_add(w, status, "SERVER_ERROR", 500, 599);
	ret |= trawl_ctf_struct_add(w, nested, "a", u16);
	ret |= trawl_ctf_struct_add(w, nested, "b", i64);
	ret |= trawl_ctf_struct_add(w, b, "id", u64);
	ret |= trawl_ctf_struct_add(w, b, "path", str);
	ret |= trawl_ctf_struct_add(w, b, "payload_length", u32);
	ret |= trawl_ctf_struct_add(w, b, "payload", seq);
	ret |= trawl_ctf_struct_add(w, b, "method", method);
	ret |= trawl_ctf_struct_add(w, e, "id", u64);
	ret |= trawl_ctf_struct_add(w, e, "status", status);
	ret |= trawl_ctf_struct_add(w, e, "latency_ms", dbl);
	ret |= trawl_ctf_struct_add(w, e, "ratio", flt);
	ret |= trawl_ctf_struct_add(w, e, "nested", nested);
	ret |= trawl_ctf_struct_add(w, e, "samples", arr);
	if (ret)
		return -EINVAL;
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, ctx);
	if (!sc)
		return -errno;
	*scp = sc;
	/* loglevel 6: TRACE_INFO */
	u->begin = trawl_ctf_writer_event_class(w, sc, "app:request_begin", 6, b);
	u->end = trawl_ctf_writer_event_class(w, sc, "app:request_end", 6, e);
	return u->begin && u->end ? 0 : -errno;
}

struct request {
	uint64_t id, ts;
	int32_t vpid, vtid;
};

#define MAX_INFLIGHT 8

static int ust_stream(struct sim *S, struct host *h, const struct uclasses *uc,
		      struct trawl_ctf_wstream *ws, uint32_t cpu, uint64_t n, uint64_t span)
{
	uint64_t r = sim_seed_for(S->seed, h->idx + 1, 2, cpu + 1);
	const uint32_t *apps = h->cpu_napps[cpu] ? h->cpu_apps[cpu] : NULL;
	uint32_t napps = h->cpu_napps[cpu];
	struct request inflight[MAX_INFLIGHT];
	unsigned ninflight = 0;
	uint64_t seqno = 0;
	struct clockgen g;
	uint8_t buf[256];
	int ret;

	if (S->shapes && n >= 12)
		span -= GAP_SHORT + GAP_LONG;
	clock_init(&g, h->start, span, n);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t ts = local_ts(h, g.pos);
		if ((ret = shapes_hooks(S, ws, k, n, &g, &r, ts, false)) < 0)
			return ret;
		ts = local_ts(h, clock_next(&g, &r));
		uint8_t *p = buf;
		const struct trawl_ctf_event_class *ec;
		if (ninflight == 0 || (ninflight < MAX_INFLIGHT && below(&r, 2))) {
			struct request *q = &inflight[ninflight++];
			const struct task *t = apps ? &h->tasks[apps[below(&r, napps)]]
						    : &h->tasks[h->ntasks - 1];
			q->id = ++seqno * S->cpus + cpu;
			if (S->shapes && seqno == 2)
				q->id = UINT64_MAX;
			q->ts = ts;
			q->vpid = t->pid;
			q->vtid = t->tid;
			ec = uc->begin;
			PUT(p, int32_t, q->vpid);
			PUT(p, int32_t, q->vtid);
			PUT(p, uint64_t, q->id);
			if (S->shapes && (seqno <= ARRAY_LEN(tricky) || below(&r, 16) == 0))
				p = put_str(p, tricky[seqno <= ARRAY_LEN(tricky) ? seqno - 1
								: below(&r, ARRAY_LEN(tricky))]);
			else
				p = put_str(p, paths[below(&r, ARRAY_LEN(paths))]);
			uint32_t len = below(&r, 4) ? below(&r, 17) : 0;
			PUT(p, uint32_t, len);
			for (uint32_t i = 0; i < len; i++)
				*p++ = (uint8_t)sim_rnd(&r);
			PUT(p, int8_t, below(&r, 5));
		} else {
			unsigned i = below(&r, ninflight);
			struct request q = inflight[i];
			inflight[i] = inflight[--ninflight];
			ec = uc->end;
			PUT(p, int32_t, q.vpid);
			PUT(p, int32_t, q.vtid);
			PUT(p, uint64_t, q.id);
			static const int16_t codes[] = { 200, 200, 200, 200, 201, 204, 301, 404, 500, 503 };
			int16_t code = codes[below(&r, ARRAY_LEN(codes))];
			if (S->shapes && below(&r, 8) == 0)
				code = -1;
			PUT(p, int16_t, code);
			PUT(p, double, (double)(ts - q.ts) / 1e6);
			PUT(p, float, (float)below(&r, 1000000) / 1e6f);
			PUT(p, uint16_t, below(&r, 65536));
			int64_t bv = (int64_t)below(&r, 2000000) - 1000000;
			if (S->shapes && k % 5 == 0)
				bv = k % 10 ? INT64_MIN : INT64_MAX;
			PUT(p, int64_t, bv);
			for (int j = 0; j < 3; j++)
				PUT(p, uint32_t, S->shapes && k % 7 == 0 ? (j ? UINT32_MAX : 0)
								  : below(&r, 100000));
		}
		ret = trawl_ctf_wstream_event(ws, ec, ts, buf, (size_t)(p - buf));
		if (ret < 0)
			return ret;
		if (((k + 1) & 0xffff) == 0)
			progress(S, 0x10000);
	}
	progress(S, n & 0xffff);
	return 0;
}

/* ------------------------------------------------------------- traces */

static char *path_join(const char *a, const char *b, const char *c)
{
	char *s;
	if (asprintf(&s, "%s/%s/%s", a, b, c) < 0)
		return NULL;
	return s;
}

/* events of part i when n is split in k parts, the first ones larger */
static uint64_t share(uint64_t n, uint64_t k, uint64_t i)
{
	return n / k + (i < n % k);
}

static int write_trace(struct sim *S, struct host *h, bool kernel, uint64_t n, char *err,
		       size_t errlen)
{
	char *path = S->out ? path_join(S->out, h->name, kernel ? "kernel" : "ust") : NULL;
	if (S->out && !path)
		return -ENOMEM;
	char rerr[300] = "";
	struct trawl_ctf_dest *dest = NULL;
	if (S->relay) {
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = S->relay, .session = S->session,
		};
		if (!(dest = trawl_relay_dest_new(&ro))) {
			free(path);
			return -ENOMEM;
		}
	}
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o),
		.path = path,
		.dest = dest,
		.err = rerr,
		.errlen = sizeof(rerr),
		.hostname = h->name,
		.domain = kernel ? "kernel" : "ust",
		.trace_uuid = kernel ? h->kernel_uuid : h->ust_uuid,
		.clock_uuid = h->boot_id,
		.clock_offset_s = h->offset_s,
		.clock_offset = h->offset,	/* offset_s is never 0 */
		.packet_size = S->packet_size,
	};
	int ret;
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w) {
		ret = -errno;
		if (*rerr)
			snprintf(err, errlen, "%s", rerr);
		else
			snprintf(err, errlen, "%s: %s", path ? path : S->relay, strerror(errno));
		free(path);
		return ret;
	}
	struct trawl_ctf_stream_class *sc = NULL;
	struct kclasses kc = { .n = 0 };
	struct uclasses uc = { NULL, NULL };
	ret = kernel ? kernel_classes(w, S->shapes, &sc, &kc) : ust_classes(w, &sc, &uc);
	if (!ret)
		ret = trawl_ctf_writer_env_int(w, "simulate_seed", (int64_t)S->seed);
	for (uint32_t c = 0; !ret && c < S->cpus; c++) {
		struct trawl_ctf_wstream *ws = trawl_ctf_writer_stream(w, sc, "channel0", c);
		uint64_t m = share(n, S->cpus, c);
		if (!ws)
			ret = -errno;
		else if (kernel)
			ret = kernel_stream(S, h, &kc, ws, c, m, S->span);
		else
			ret = ust_stream(S, h, &uc, ws, c, m, S->span);
	}
	if (!ret && !kernel && S->sync)
		ret = sim_sync_write(S->sync, h->idx, w, h->start);
	int r = trawl_ctf_writer_close(w);
	if (!ret)
		ret = r;
	if ((r = trawl_ctf_writer_relay_error(w)))
		fprintf(stderr, "trawl: warning: %s: the relay was lost (%s): only the local copy "
			"is complete\n", path, strerror(-r));
	trawl_ctf_writer_free(w);
	if (ret)
		snprintf(err, errlen, "%s: %s", path ? path : S->relay, strerror(-ret));
	free(path);
	return ret;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
	fputs("usage: trawl simulate -o DIR [--hosts N] [--events M] [--seed S] [--cpus C]\n"
	      "                      [--packet-size BYTES] [--shapes] [--progress] [--force]\n"
	      "                      [--relay HOST[:PORT] [--session NAME]] [--sync [SYNC OPTIONS]]\n"
	      "\n"
	      "Writes a synthetic multi-host session DIR/host<i>/{kernel,ust}/ of CTF 1.8\n"
	      "traces: M events in all (default 100000) over N hosts (default 2) with C CPUs\n"
	      "each (default 2). The same seed (default 1) gives identical traces.\n"
	      "\n"
	      "  -o, --output DIR        the session directory (created; must be empty)\n"
	      "  -n, --hosts N           number of hosts, 1..100000\n"
	      "  -e, --events M          events in all hosts' traces (suffix k, M, G: 10^3..)\n"
	      "  -s, --seed S            seed of the generator (an unsigned integer)\n"
	      "  -c, --cpus C            CPUs per host, 1..1024: one stream per CPU\n"
	      "      --packet-size BYTES packet size, >= 4096, a multiple of 8 (suffix K, M:\n"
	      "                          KiB, MiB; default 256K)\n"
	      "      --shapes            also write every format corner case: idle gaps over\n"
	      "                          2^27 and 2^32 ns, discarded events, empty packets,\n"
	      "                          event ids >= 31, extreme values, tricky strings\n"
	      "      --progress          report progress on stderr (default: when a tty)\n"
	      "  -f, --force             write into a non-empty DIR\n"
	      "      --relay HOST[:PORT] also stream every trace to a trawl relay (without -o:\n"
	      "                          only there), as session NAME (--session, default\n"
	      "                          \"simulate\"): RELAY-OUTPUT/NAME/host<i>/{kernel,ust}/\n"
	      "  -h, --help              this help\n"
	      "\n"
	      "Clocks and sync traffic with known truth (written to DIR/truth.txt):\n"
	      "      --sync              each host its own clock (host0 the reference), and\n"
	      "                          trawl_sync:probe_send/probe_recv and app:rpc_send/\n"
	      "                          app:rpc_recv messages between hosts (ust trace,\n"
	      "                          stream sync_0); at most 256 hosts\n"
	      "      --max-offset NS     clock offsets uniform in +-NS (default 5G = 5 s)\n"
	      "      --max-drift PPM     drifts uniform in +-PPM (default 100, at most 1000)\n"
	      "      --topology T        mesh (default), star (host0 and each other), chain\n"
	      "                          (host i and i+1), split (two meshes, no link between)\n"
	      "      --sync-rate N       probes per second per directed pair (default 200)\n"
	      "      --rpc-rate N        RPCs per second per directed pair (default 50)\n"
	      "      --delay US          minimum one-way delay, microseconds (default 50)\n"
	      "      --jitter US         mean of the exponential jitter added (default 20)\n"
	      "      --asym F            delays from higher- to lower-numbered hosts times F\n"
	      "                          (default 1)\n"
	      "      --loss P            fraction of receives lost (default 0)\n"
	      "      --dup P             fraction of messages sent twice with one key (default 0)\n"
	      "      --one-way           messages only from lower- to higher-numbered hosts\n"
	      "      --drift-change HOST:FRACTION:PPM\n"
	      "                          HOST's drift becomes PPM at FRACTION (0..1) of the\n"
	      "                          span (repeatable, once per host)\n", f);
}

static int parse_double(const char *s, double *v, double lo, double hi)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(x) || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

/* HOST:FRACTION:PPM, HOST an index or host<index> */
static int parse_change(const char *s, struct sim_drift_change *c)
{
	char *end;
	if (!strncmp(s, "host", 4))
		s += 4;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long h = strtoul(s, &end, 10);
	if (errno || *end != ':' || h > 100000)
		return -1;
	const char *f = end + 1, *colon = strchr(f, ':');
	if (!colon)
		return -1;
	char frac[64];
	double fr, ppm;
	if ((size_t)(colon - f) >= sizeof(frac))
		return -1;
	memcpy(frac, f, (size_t)(colon - f));
	frac[colon - f] = 0;
	if (parse_double(frac, &fr, 0, 1) || parse_double(colon + 1, &ppm, -1000, 1000))
		return -1;
	c->host = (unsigned)h;
	c->fraction = fr;
	c->ppb = llround(ppm * 1000);
	return 0;
}

static int parse_u64(const char *s, uint64_t *v, uint64_t unit_k)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	uint64_t mul = 1;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': mul = unit_k; end++; break;
	case 'm': case 'M': mul = unit_k * unit_k; end++; break;
	case 'g': case 'G': mul = unit_k * unit_k * unit_k; end++; break;
	default: return -1;
	}
	if (*end || (x && mul > UINT64_MAX / x))
		return -1;
	*v = x * mul;
	return 0;
}

#define usage_error(...) cli_usage_error("trawl simulate", "simulate", __VA_ARGS__)

static bool dir_nonempty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return false;
	struct dirent *e;
	bool any = false;
	while (!any && (e = readdir(d)))
		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return any;
}

static uint64_t file_bytes(const char *dir)
{
	uint64_t sum = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p;
		struct stat st;
		if (asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (lstat(p, &st) == 0)
			sum += S_ISDIR(st.st_mode) ? file_bytes(p) : (uint64_t)st.st_size;
		free(p);
	}
	closedir(d);
	return sum;
}

enum {
	O_SYNC = 256, O_MAX_OFFSET, O_MAX_DRIFT, O_TOPOLOGY, O_RATE, O_RPC_RATE, O_DELAY,
	O_JITTER, O_ASYM, O_LOSS, O_DUP, O_ONE_WAY, O_DRIFT_CHANGE, O_RELAY, O_SESSION,
};

int cmd_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "hosts", required_argument, NULL, 'n' },
		{ "events", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 's' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "packet-size", required_argument, NULL, 'P' },
		{ "shapes", no_argument, NULL, 'S' },
		{ "progress", no_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "sync", no_argument, NULL, O_SYNC },
		{ "relay", required_argument, NULL, O_RELAY },
		{ "session", required_argument, NULL, O_SESSION },
		{ "max-offset", required_argument, NULL, O_MAX_OFFSET },
		{ "max-drift", required_argument, NULL, O_MAX_DRIFT },
		{ "topology", required_argument, NULL, O_TOPOLOGY },
		{ "sync-rate", required_argument, NULL, O_RATE },
		{ "rpc-rate", required_argument, NULL, O_RPC_RATE },
		{ "delay", required_argument, NULL, O_DELAY },
		{ "jitter", required_argument, NULL, O_JITTER },
		{ "asym", required_argument, NULL, O_ASYM },
		{ "loss", required_argument, NULL, O_LOSS },
		{ "dup", required_argument, NULL, O_DUP },
		{ "one-way", no_argument, NULL, O_ONE_WAY },
		{ "drift-change", required_argument, NULL, O_DRIFT_CHANGE },
		{ 0 },
	};
	struct sim_sync_opts so = {
		.max_offset = 5 * NS, .max_drift_ppb = 100000, .rate = 200, .rpc_rate = 50,
		.delay = 50000, .jitter = 20000, .asym = 1, .topo = SIM_MESH,
	};
	struct sim_drift_change changes[SIM_SYNC_MAX_HOSTS];
	const char *sync_opt = NULL;	/* a sync option seen */
	bool sync = false;
	double d;
	struct sim S = {
		.hosts = 2, .cpus = 2, .events = 100000, .seed = 1,
		.packet_size = 256 * 1024, .progress = isatty(2),
	};
	bool force = false;
	uint64_t v;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:e:s:c:fh", opts, NULL)) != -1) {
		for (size_t i = 0; c > O_SYNC && c < O_RELAY && opts[i].name; i++)
			if (opts[i].val == c)
				sync_opt = opts[i].name;
		switch (c) {
		case O_RELAY:
			S.relay = optarg;
			break;
		case O_SESSION:
			S.session = optarg;
			break;
		case 'o':
			if (!*optarg)
				return usage_error("empty output directory");
			S.out = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, &v, 1000) || v < 1 || v > 100000)
				return usage_error("--hosts: '%s' is not a number in 1..100000", optarg);
			S.hosts = (unsigned)v;
			break;
		case 'e':
			if (parse_u64(optarg, &v, 1000))
				return usage_error("--events: '%s' is not a count", optarg);
			S.events = v;
			break;
		case 's':
			if (parse_u64(optarg, &v, 1000))
				return usage_error("--seed: '%s' is not an unsigned integer", optarg);
			S.seed = v;
			break;
		case 'c':
			if (parse_u64(optarg, &v, 1000) || v < 1 || v > MAX_CPUS)
				return usage_error("--cpus: '%s' is not a number in 1..1024", optarg);
			S.cpus = (unsigned)v;
			break;
		case 'P':
			if (parse_u64(optarg, &v, 1024) || v < 4096 || v % 8 || v > (1u << 30))
				return usage_error("--packet-size: '%s' is not a size in 4096..1G, a multiple of 8",
						   optarg);
			S.packet_size = (size_t)v;
			break;
		case 'S':
			S.shapes = true;
			break;
		case 'p':
			S.progress = true;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case O_SYNC:
			sync = true;
			break;
		case O_MAX_OFFSET:
			if (parse_u64(optarg, &v, 1000) || v > 1000 * NS)
				return usage_error("--max-offset: '%s' is not a number of ns in 0..1000G",
						   optarg);
			so.max_offset = v;
			break;
		case O_MAX_DRIFT:
			if (parse_double(optarg, &d, 0, 1000))
				return usage_error("--max-drift: '%s' is not a number of ppm in 0..1000",
						   optarg);
			so.max_drift_ppb = llround(d * 1000);
			break;
		case O_TOPOLOGY: {
			static const char *const names[] = { "mesh", "star", "chain", "split" };
			size_t i = 0;
			while (i < ARRAY_LEN(names) && strcmp(optarg, names[i]))
				i++;
			if (i == ARRAY_LEN(names))
				return usage_error("--topology: '%s' is not mesh, star, chain or split",
						   optarg);
			so.topo = (enum sim_topology)i;
			break;
		}
		case O_RATE:
		case O_RPC_RATE:
			if (parse_double(optarg, &d, 0, 1e7))
				return usage_error("%s: '%s' is not a rate in 0..1e7 per second",
						   c == O_RATE ? "--sync-rate" : "--rpc-rate", optarg);
			*(c == O_RATE ? &so.rate : &so.rpc_rate) = d;
			break;
		case O_DELAY:
		case O_JITTER:
			if (parse_double(optarg, &d, 0, 1e7))
				return usage_error("%s: '%s' is not a number of microseconds in 0..1e7",
						   c == O_DELAY ? "--delay" : "--jitter", optarg);
			*(c == O_DELAY ? &so.delay : &so.jitter) = d * 1000;
			break;
		case O_ASYM:
			if (parse_double(optarg, &d, 0, 1000) || d == 0)
				return usage_error("--asym: '%s' is not a factor in (0, 1000]", optarg);
			so.asym = d;
			break;
		case O_LOSS:
		case O_DUP:
			if (parse_double(optarg, &d, 0, 1))
				return usage_error("%s: '%s' is not a fraction in 0..1",
						   c == O_LOSS ? "--loss" : "--dup", optarg);
			*(c == O_LOSS ? &so.loss : &so.dup) = d;
			break;
		case O_ONE_WAY:
			so.one_way = true;
			break;
		case O_DRIFT_CHANGE:
			if (so.nchanges == ARRAY_LEN(changes))
				return usage_error("--drift-change: more than %d", SIM_SYNC_MAX_HOSTS);
			if (parse_change(optarg, &changes[so.nchanges]))
				return usage_error("--drift-change: '%s' is not HOST:FRACTION:PPM "
						   "(fraction 0..1, ppm -1000..1000)", optarg);
			so.nchanges++;
			break;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (sync_opt && !sync)
		return usage_error("--%s needs --sync", sync_opt);
	so.changes = changes;
	if (!S.out && !S.relay)
		return usage_error("no output directory (-o DIR) nor relay (--relay)");
	if (S.session && !S.relay)
		return usage_error("--session needs --relay");
	if (S.relay && !S.session)
		S.session = "simulate";
	if (S.relay && S.sync && !S.out)
		return usage_error("--sync writes truth.txt: it needs -o DIR");
	if (S.out && !force && dir_nonempty(S.out))
		return die_msg("simulate: %s is not empty (use --force to write into it)", S.out);

	/* the session: starts at a seeded date in 2024, spans ~5 us per event per host */
	uint64_t r = sim_seed_for(S.seed, 0, 0, 0);
	S.wall0 = 1704067200ull * NS + sim_rnd(&r) % (365 * 86400 * NS);
	uint64_t per_host = S.events / S.hosts + 1;
	S.span = per_host * 5000;
	if (S.span < NS)
		S.span = NS;
	if (S.shapes && S.span < 20 * NS)
		S.span = 20 * NS;
	S.next_progress = PROGRESS_EVERY;
	char err[512] = "";
	if (sync && !(S.sync = sim_sync_new(&so, S.hosts, S.seed, S.wall0, S.span, err, sizeof(err))))
		return errno == EINVAL ? usage_error("%s", err) : die_msg("simulate: %s", err);

	double t0 = tr_mono_s();
	int ret = 0;
	for (unsigned i = 0; !ret && i < S.hosts; i++) {
		struct host h;
		uint64_t n = share(S.events, S.hosts, i);
		uint64_t nk = n - n / 4;	/* three quarters kernel, one quarter ust */
		ret = host_init(&S, &h, i);
		if (!ret && S.sync)
			h.clk = sim_sync_clock(S.sync, i);
		if (ret)
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		if (!ret)
			ret = write_trace(&S, &h, true, nk, err, sizeof(err));
		if (!ret)
			ret = write_trace(&S, &h, false, n - nk, err, sizeof(err));
		S.kernel_events += nk;
		S.ust_events += n - nk;
		host_free(&h, S.cpus);
	}
	char *truth = NULL;
	if (!ret && S.sync) {
		if (asprintf(&truth, "%s/truth.txt", S.out) < 0)
			ret = -ENOMEM, truth = NULL;
		else if ((ret = sim_sync_truth(S.sync, truth)) < 0)
			snprintf(err, sizeof(err), "%s: %s", truth, strerror(-ret));
	}
	if (ret) {
		free(truth);
		sim_sync_free(S.sync);
		return die_msg("simulate: %s", err[0] ? err : strerror(-ret));
	}
	double secs = tr_mono_s() - t0;
	uint64_t bytes = S.out ? file_bytes(S.out) : 0;
	printf("trawl simulate: %" PRIu64 " events (%" PRIu64 " kernel, %" PRIu64 " ust), "
	       "%u hosts x %u CPUs, %" PRIu64 " bytes (%.1f bytes/event), %.3f s, %.2f M/s, in %s\n",
	       S.events, S.kernel_events, S.ust_events, S.hosts, S.cpus, bytes,
	       S.events ? (double)bytes / (double)S.events : 0.0, secs,
	       secs > 0 ? (double)S.events / secs / 1e6 : 0.0, S.out ? S.out : S.relay);
	if (S.sync) {
		struct sim_sync_stats st;
		sim_sync_stats(S.sync, &st);
		printf("trawl simulate: sync: %" PRIu64 " probes and %" PRIu64 " RPCs: %" PRIu64
		       " sends (%" PRIu64 " duplicated), %" PRIu64 " receives (%" PRIu64
		       " lost); truth in %s\n", st.probes, st.rpcs, st.sends, st.dups, st.recvs,
		       st.lost, truth);
		free(truth);
		sim_sync_free(S.sync);
	}
	return 0;
}
