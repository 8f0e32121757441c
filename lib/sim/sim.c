/* SPDX-License-Identifier: MIT */
/*
 * lib/sim/sim.c - the simulator (trawl/sim.h): writes a synthetic
 * multi-host session with the CTF writer, OUTPUT/host<i>/{kernel,ust}/,
 * deterministic for a given seed (`trawl simulate` runs it).
 *
 * Every host has its own processes and threads (pids, comm names), its own
 * boot_id (the clock uuid) and boot time (the clock offset); all hosts cover
 * the same wall-clock span, their clocks exactly aligned to it (with sync,
 * each host's clock has its own offset and drift, applied to every
 * timestamp it writes, and hosts exchange messages: lib/sim/sim-sync.c).
 * Each stream is generated on its own from a random generator seeded by
 * (seed, host, domain, cpu), so the output does not depend on the order of
 * generation, and memory stays bounded whatever the number of events.
 *
 * Kernel trace: one compact-header stream per CPU with LTTng's sched_switch,
 * sched_wakeup and read/write syscall entry/exit events; a CPU runs its own
 * tasks (no migration) and each switch's next task is the following
 * switch's prev. UST trace: one large-header stream per CPU, event context
 * vpid/vtid, app:request_begin / app:request_end pairs whose latency_ms is
 * the time between them.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-internal.h"
#include "trawl/ctf.h"
#include "trawl/relay.h"

#define NS		1000000000ull
#define PROGRESS_CHUNK	0x10000ull	/* events between calls of opts.progress */

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
	const struct trawl_sim_clock *clk;	/* sync: its own clock, else NULL */
	struct task *tasks;
	size_t ntasks;
	/* per CPU: indexes into tasks; [0] is swapper/N */
	uint32_t **cpu_tasks;
	uint32_t *cpu_ntasks;
	/* per CPU: user tasks (for the UST trace) */
	uint32_t **cpu_apps;
	uint32_t *cpu_napps;
};

struct trawl_sim {
	/* as given, with the defaults (hosts, cpus, packet_size, the relay's
	 * session) filled in; changes: NULL (they are in sync) */
	struct trawl_sim_opts o;
	uint64_t wall0;			/* session start, ns since the epoch */
	uint64_t span;			/* ns covered by every host */
	uint64_t done;			/* events written so far */
	struct tr_sim_sync *sync;	/* sync */
	char *truth;			/* OUTPUT/truth.txt with sync */
	bool ran;
	struct trawl_sim_result res;
};

enum { EV_SWITCH, EV_WAKEUP, EV_ENTRY_READ, EV_EXIT_READ, EV_ENTRY_WRITE, EV_EXIT_WRITE,
       EV_NBASE };

/* --shapes: more syscalls, so that event ids >= 31 appear in compact streams */
static const char *const extra_syscalls[] = {
	"openat", "close", "fstat", "mmap", "munmap", "brk", "ioctl", "pread64",
	"pwrite64", "readv", "writev", "poll", "futex", "epoll_wait", "nanosleep",
	"getpid", "clock_gettime",
};
#define NEXTRA ARRAY_SIZE(extra_syscalls)

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

static int host_init(struct trawl_sim *S, struct host *h, unsigned idx)
{
	uint64_t r = sim_seed_for(S->o.seed, idx + 1, 0, 0);
	unsigned C = S->o.cpus;

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
	uint32_t first = (uint32_t)below(&r, ARRAY_SIZE(procs));
	int32_t pid = 300 + (int32_t)below(&r, 2000);
	for (size_t p = 0; p < nprocs; p++) {
		const char *name = procs[(first + p * 7) % ARRAY_SIZE(procs)];
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

/* n more events written: tells opts.progress. 0, or -ECANCELED. */
static int progress(struct trawl_sim *S, uint64_t n)
{
	S->done += n;
	if (!n || !S->o.progress)
		return 0;
	return S->o.progress(S->o.progress_arg, S->done, S->o.events) ? -ECANCELED : 0;
}

/*
 * A host's monotonic time ts on a perfect clock -> what its own clock
 * reads then (sync): the same instant on the host's clock.
 */
static inline uint64_t local_ts(const struct host *h, uint64_t ts)
{
	if (!h->clk)
		return ts;
	int64_t dt = (int64_t)(ts - h->start);
	return ts + (uint64_t)trawl_sim_clock_delta(h->clk, dt);
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
static int shapes_hooks(struct trawl_sim *S, struct trawl_ctf_wstream *ws, uint64_t k, uint64_t n,
			struct clockgen *g, uint64_t *r, uint64_t ts, bool kernel)
{
	int ret = 0;
	if (!S->o.shapes || n < 12)
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

static int kernel_stream(struct trawl_sim *S, struct host *h, const struct kclasses *kc,
			 struct trawl_ctf_wstream *ws, uint32_t cpu, uint64_t n, uint64_t span)
{
	uint64_t r = sim_seed_for(S->o.seed, h->idx + 1, 1, cpu + 1);
	const uint32_t *mine = h->cpu_tasks[cpu];
	uint32_t nmine = h->cpu_ntasks[cpu];
	struct cpustate st = { .cur = mine[0] };
	bool forced = false;
	struct clockgen g;
	uint8_t buf[128];
	int ret;

	if (S->o.shapes && n >= 12)
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
			if (S->o.shapes && !idle && !cur->kthread && (!forced || x < 5)) {
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
		S->res.emitted++;
		if (((k + 1) % PROGRESS_CHUNK) == 0 && (ret = progress(S, PROGRESS_CHUNK)) < 0)
			return ret;
	}
	return progress(S, n % PROGRESS_CHUNK);
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
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
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

static int ust_stream(struct trawl_sim *S, struct host *h, const struct uclasses *uc,
		      struct trawl_ctf_wstream *ws, uint32_t cpu, uint64_t n, uint64_t span)
{
	uint64_t r = sim_seed_for(S->o.seed, h->idx + 1, 2, cpu + 1);
	const uint32_t *apps = h->cpu_napps[cpu] ? h->cpu_apps[cpu] : NULL;
	uint32_t napps = h->cpu_napps[cpu];
	struct request inflight[MAX_INFLIGHT];
	unsigned ninflight = 0;
	uint64_t seqno = 0;
	struct clockgen g;
	uint8_t buf[256];
	int ret;

	if (S->o.shapes && n >= 12)
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
			q->id = ++seqno * S->o.cpus + cpu;
			if (S->o.shapes && seqno == 2)
				q->id = UINT64_MAX;
			q->ts = ts;
			q->vpid = t->pid;
			q->vtid = t->tid;
			ec = uc->begin;
			PUT(p, int32_t, q->vpid);
			PUT(p, int32_t, q->vtid);
			PUT(p, uint64_t, q->id);
			if (S->o.shapes && (seqno <= ARRAY_SIZE(tricky) || below(&r, 16) == 0))
				p = put_str(p, tricky[seqno <= ARRAY_SIZE(tricky) ? seqno - 1
								: below(&r, ARRAY_SIZE(tricky))]);
			else
				p = put_str(p, paths[below(&r, ARRAY_SIZE(paths))]);
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
			int16_t code = codes[below(&r, ARRAY_SIZE(codes))];
			if (S->o.shapes && below(&r, 8) == 0)
				code = -1;
			PUT(p, int16_t, code);
			PUT(p, double, (double)(ts - q.ts) / 1e6);
			PUT(p, float, (float)below(&r, 1000000) / 1e6f);
			PUT(p, uint16_t, below(&r, 65536));
			int64_t bv = (int64_t)below(&r, 2000000) - 1000000;
			if (S->o.shapes && k % 5 == 0)
				bv = k % 10 ? INT64_MIN : INT64_MAX;
			PUT(p, int64_t, bv);
			for (int j = 0; j < 3; j++)
				PUT(p, uint32_t, S->o.shapes && k % 7 == 0 ? (j ? UINT32_MAX : 0)
								  : below(&r, 100000));
		}
		ret = trawl_ctf_wstream_event(ws, ec, ts, buf, (size_t)(p - buf));
		if (ret < 0)
			return ret;
		S->res.emitted++;
		if (((k + 1) % PROGRESS_CHUNK) == 0 && (ret = progress(S, PROGRESS_CHUNK)) < 0)
			return ret;
	}
	return progress(S, n % PROGRESS_CHUNK);
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

static int write_trace(struct trawl_sim *S, struct host *h, bool kernel, uint64_t n, char *err,
		       size_t errlen)
{
	char *path = S->o.output ? path_join(S->o.output, h->name, kernel ? "kernel" : "ust") : NULL;
	if (S->o.output && !path)
		return -ENOMEM;
	char rerr[300] = "";
	struct trawl_ctf_dest *dest = NULL;
	if (S->o.relay) {
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = S->o.relay, .session = S->o.session,
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
		.packet_size = S->o.packet_size,
		.root = S->o.output,	/* nothing below -o through a link */
	};
	int ret;
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w) {
		ret = -errno;
		if (*rerr)
			snprintf(err, errlen, "%s", rerr);
		else
			snprintf(err, errlen, "%s: %s", path ? path : S->o.relay, strerror(errno));
		free(path);
		return ret;
	}
	struct trawl_ctf_stream_class *sc = NULL;
	struct kclasses kc = { .n = 0 };
	struct uclasses uc = { NULL, NULL };
	ret = kernel ? kernel_classes(w, S->o.shapes, &sc, &kc) : ust_classes(w, &sc, &uc);
	if (!ret)
		ret = trawl_ctf_writer_env_int(w, "simulate_seed", (int64_t)S->o.seed);
	for (uint32_t c = 0; !ret && c < S->o.cpus; c++) {
		struct trawl_ctf_wstream *ws = trawl_ctf_writer_stream(w, sc, "channel0", c);
		uint64_t m = share(n, S->o.cpus, c);
		if (!ws)
			ret = -errno;
		else if (kernel)
			ret = kernel_stream(S, h, &kc, ws, c, m, S->span);
		else
			ret = ust_stream(S, h, &uc, ws, c, m, S->span);
	}
	if (!ret && !kernel && S->sync)
		ret = tr_sim_sync_write(S->sync, h->idx, w, h->start);
	int r = trawl_ctf_writer_close(w);
	if (!ret)
		ret = r;
	/* what the relay did not store, counted as discarded (docs/relay.md,
	 * "Cut off by the relay") */
	uint64_t rev, rdisc;
	int rc = trawl_ctf_writer_relay_discarded(w, &rev, &rdisc);
	if (rc != -ENOENT) {
		S->res.relay_events += rev;
		S->res.relay_discarded += rdisc;
		if (rc < 0)
			S->res.relay_inexact = true;
	}
	/* the relay's own sentence when it cut the trace off (the disk
	 * full, a quota, its buffers), not the errno's words alone */
	const char *rwhy = trawl_ctf_writer_relay_why(w);
	if ((r = trawl_ctf_writer_relay_error(w)) && S->o.log) {
		char msg[768];
		snprintf(msg, sizeof(msg), "%s: the relay was lost (%s): only the local copy "
			 "is complete", path ? path : S->o.relay, *rwhy ? rwhy : strerror(-r));
		S->o.log(S->o.log_arg, TRAWL_SIM_LOG_WARNING, msg);
	}
	if (ret && *trawl_ctf_writer_why(w))
		snprintf(err, errlen, "%s", trawl_ctf_writer_why(w));
	else if (ret && *rwhy && !path && strstr(rwhy, strerror(-ret)))
		snprintf(err, errlen, "relay %s cut the trace off: %s", S->o.relay, rwhy);
	else if (ret && *rwhy && !path)
		snprintf(err, errlen, "relay %s cut the trace off (%s): %s", S->o.relay,
			 strerror(-ret), rwhy);
	else if (ret)
		snprintf(err, errlen, "%s: %s", path ? path : S->o.relay, strerror(-ret));
	trawl_ctf_writer_free(w);
	free(path);
	return ret;
}

/* ------------------------------------------------------------ the object */

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

/* A message of bad options (the option named by its trawl simulate flag). */
static const char *bad_opts(const struct trawl_sim_opts *o)
{
	if (!o->output && !o->relay)
		return "no output directory (-o DIR) nor relay (--relay)";
	if (o->output && !*o->output)
		return "empty output directory";
	if (o->session && !o->relay)
		return "--session needs --relay";
	if (o->sync && !o->output)
		return "--sync writes truth.txt: it needs -o DIR";
	if (o->hosts < 1 || o->hosts > TRAWL_SIM_MAX_HOSTS)
		return "--hosts: not a number in 1..100000";
	if (o->cpus < 1 || o->cpus > TRAWL_SIM_MAX_CPUS)
		return "--cpus: not a number in 1..1024";
	if (o->packet_size < 4096 || o->packet_size % 8 || o->packet_size > (1u << 30))
		return "--packet-size: not a size in 4096..1G, a multiple of 8";
	if (!o->sync)
		return NULL;
	/* (!(x >= lo) is true of NaN too) */
	if (o->max_offset_ns > TRAWL_SIM_MAX_OFFSET_NS)
		return "--max-offset: not a number of ns in 0..1000G";
	if (o->max_drift_ppb < 0 || o->max_drift_ppb > TRAWL_SIM_MAX_DRIFT_PPB)
		return "--max-drift: not a number of ppm in 0..1000";
	if (!(o->rate >= 0 && o->rate <= TRAWL_SIM_MAX_RATE) ||
	    !(o->rpc_rate >= 0 && o->rpc_rate <= TRAWL_SIM_MAX_RATE))
		return "--sync-rate, --rpc-rate: not a rate in 0..1e7 per second";
	if (!(o->delay_ns >= 0 && o->delay_ns <= TRAWL_SIM_MAX_DELAY_NS) ||
	    !(o->jitter_ns >= 0 && o->jitter_ns <= TRAWL_SIM_MAX_DELAY_NS))
		return "--delay, --jitter: not a number of microseconds in 0..1e7";
	if (!(o->asym > 0 && o->asym <= TRAWL_SIM_MAX_ASYM))
		return "--asym: not a factor in (0, 1000]";
	if (!(o->loss >= 0 && o->loss <= 1) || !(o->dup >= 0 && o->dup <= 1))
		return "--loss, --dup: not a fraction in 0..1";
	if ((unsigned)o->topology > TRAWL_SIM_SPLIT)
		return "--topology: not mesh, star, chain or split";
	if (o->nchanges && !o->changes)
		return "--drift-change: no changes given";
	for (size_t i = 0; i < o->nchanges; i++) {
		const struct trawl_sim_drift_change *c = &o->changes[i];
		if (!(c->fraction >= 0 && c->fraction <= 1) || c->ppb < -TRAWL_SIM_MAX_DRIFT_PPB ||
		    c->ppb > TRAWL_SIM_MAX_DRIFT_PPB)
			return "--drift-change: not HOST:FRACTION:PPM (fraction 0..1, ppm -1000..1000)";
	}
	return NULL;
}

struct trawl_sim *trawl_sim_new(const struct trawl_sim_opts *opts, char *err, size_t errlen)
{
	char local[256];
	struct trawl_sim *S = NULL;
	const char *why;
	int e = EINVAL;
	if (!err || !errlen) {
		err = local;
		errlen = sizeof(local);
	}
	err[0] = 0;
	if (!opts || opts->sz < sizeof(struct trawl_sim_opts)) {
		tr_seterr(err, errlen, EINVAL, "no options, or of a size this library does not know");
		goto err;
	}
	/* a newer caller's fields this library does not know must be unset */
	for (size_t i = sizeof(*opts); i < opts->sz; i++)
		if (((const char *)opts)[i]) {
			e = E2BIG;
			tr_seterr(err, errlen, e, "options this library does not know");
			goto err;
		}
	S = calloc(1, sizeof(*S));
	if (!S) {
		e = ENOMEM;
		tr_seterr(err, errlen, e, "%s", strerror(e));
		goto err;
	}
	memcpy(&S->o, opts, sizeof(S->o));
	struct trawl_sim_opts *o = &S->o;
	if (!o->hosts)
		o->hosts = 2;
	if (!o->cpus)
		o->cpus = 2;
	if (!o->packet_size)
		o->packet_size = 256 * 1024;
	if ((why = bad_opts(o))) {
		tr_seterr(err, errlen, EINVAL, "%s", why);
		goto err;
	}
	if (o->output && !o->force && dir_nonempty(o->output)) {
		e = EEXIST;
		tr_seterr(err, errlen, e, "%s is not empty", o->output);
		goto err;
	}
	if (o->relay && !o->session)
		o->session = "simulate";

	/* the session: starts at a seeded date in 2024, spans ~5 us per event per host */
	uint64_t r = sim_seed_for(S->o.seed, 0, 0, 0);
	S->wall0 = 1704067200ull * NS + sim_rnd(&r) % (365 * 86400 * NS);
	uint64_t per_host = S->o.events / S->o.hosts + 1;
	S->span = per_host * 5000;
	if (S->span < NS)
		S->span = NS;
	if (S->o.shapes && S->span < 20 * NS)
		S->span = 20 * NS;
	if (o->sync && !(S->sync = tr_sim_sync_new(o, S->wall0, S->span, err, errlen))) {
		e = errno;
		goto err;
	}
	o->changes = NULL;
	o->nchanges = 0;
	if (o->sync && asprintf(&S->truth, "%s/truth.txt", S->o.output) < 0) {
		S->truth = NULL;
		e = ENOMEM;
		tr_seterr(err, errlen, e, "%s", strerror(e));
		goto err;
	}

	struct trawl_sim_result *res = &S->res;
	res->hosts = S->o.hosts;
	res->cpus = S->o.cpus;
	res->start_ns = S->wall0;
	res->span_ns = S->span;
	res->events = S->o.events;
	for (unsigned i = 0; i < S->o.hosts; i++) {
		uint64_t n = share(S->o.events, S->o.hosts, i);
		uint64_t nk = n - n / 4;	/* three quarters kernel, one quarter ust */
		res->kernel_events += nk;
		res->ust_events += n - nk;
	}
	res->clocks = S->sync ? tr_sim_sync_clocks(S->sync) : NULL;
	return S;
err:
	trawl_sim_free(S);
	errno = e;
	return NULL;
}

int trawl_sim_run(struct trawl_sim *S, char *err, size_t errlen)
{
	char local[256];
	if (!err || !errlen) {
		err = local;
		errlen = sizeof(local);
	}
	err[0] = 0;
	if (S->ran)
		return tr_seterr(err, errlen, EINVAL, "the simulation ran already");
	S->ran = true;
	int ret = 0;
	for (unsigned i = 0; !ret && i < S->o.hosts; i++) {
		struct host h;
		uint64_t n = share(S->o.events, S->o.hosts, i);
		uint64_t nk = n - n / 4;	/* three quarters kernel, one quarter ust */
		ret = host_init(S, &h, i);
		if (!ret && S->sync)
			h.clk = &tr_sim_sync_clocks(S->sync)[i];
		if (ret)
			snprintf(err, errlen, "%s", strerror(-ret));
		if (!ret)
			ret = write_trace(S, &h, true, nk, err, errlen);
		if (!ret)
			ret = write_trace(S, &h, false, n - nk, err, errlen);
		host_free(&h, S->o.cpus);
	}
	if (!ret && S->sync)
		ret = tr_sim_sync_truth(S->sync, S->truth, err, errlen);	/* err names the file */
	if (ret) {
		if (!err[0])
			snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	if (S->sync) {
		tr_sim_sync_stats(S->sync, &S->res);
		S->res.truth = S->truth;
	}
	return 0;
}

const struct trawl_sim_result *trawl_sim_result(const struct trawl_sim *S)
{
	return &S->res;
}

void trawl_sim_free(struct trawl_sim *S)
{
	if (!S)
		return;
	tr_sim_sync_free(S->sync);
	free(S->truth);
	free(S);
}
