/* SPDX-License-Identifier: MIT */
/*
 * test-state: the state system (trawl/state.h) on kernel traces built with
 * the writer, with LTTng's names and trawl's { tid } context:
 *  - a scripted scenario on two CPUs: a statedump, an openat of a path, an
 *    8 KiB write, a 10 ms sleep, a wake-up, an IRQ, a block write it waits
 *    for, a preemption, a close: the exact state of CPUs, the thread, its
 *    fds and the request at chosen times, and the changes that built them;
 *  - the window: a time before it is refused, the change that created an fd
 *    is still given after the window has passed it;
 *  - offline: a state with checkpoints answers through a replay from the
 *    nearest one (trawl_state_at_files) exactly as a state that kept
 *    everything, at every 0.25 ms of the trace;
 *  - anywhere offline: a random workload on two CPUs (forks, exits, opens,
 *    writes, closes, sleeps, IRQs, block requests, times shared by several
 *    events), the state at 150 random times and at every checkpoint's
 *    time from the checkpoints (a pass without a window) and from the
 *    checkpoint file equals the full model's (a pass sampled as it goes),
 *    every field of every CPU, thread, fd and request; the history asked
 *    of such a view equals that of a pass that kept the window;
 *  - the checkpoint file refused when the trace is not the one it was made
 *    of (a stream truncated, a byte changed, another window: ESTALE), and
 *    when it is corrupt (a byte flipped, truncated, not one: EBADMSG),
 *    each with a message;
 *  - memory: the same periodic workload (threads forking, opening, writing,
 *    exiting; requests never completed; entries without exit) ten times
 *    longer leaves the same number of changes, entities and bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/state.h"

static char root[] = "/tmp/trawl-test-state-XXXXXX";

#define MS 1000000LL
#define US 1000LL
#define T0 (1700000000LL * 1000000000LL)

struct kt {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_wstream *cpu[2];
	struct trawl_ctf_event_class *sw, *wk, *fork, *exit_, *oe, *ox, *ke, *kx, *we, *wx, *ce, *cx,
		*se, *sx, *fe, *fx, *ie, *ix, *bi, *bs, *bc, *dp, *df;
	int rc;
};

static struct trawl_ctf_type *st(struct trawl_ctf_writer *w, const char *spec)
{
	/* "s:name,i:name,l:name": string, s32, s64 fields */
	struct trawl_ctf_type *t = trawl_ctf_type_struct(w);
	char buf[256], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		trawl_ctf_struct_add(w, t, tok + 2,
				     tok[0] == 's' ? trawl_ctf_type_string(w)
				     : tok[0] == 'i' ? trawl_ctf_type_int(w, 32, true, 10)
						     : trawl_ctf_type_int(w, 64, true, 10));
	return t;
}

static int kt_open(struct kt *k, const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "node", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	memset(k, 0, sizeof(*k));
	if (!(k->w = trawl_ctf_writer_new(&o)))
		return -1;
	struct trawl_ctf_writer *w = k->w;
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, st(w, "i:tid"));
#define EC(f, name, spec) k->f = trawl_ctf_writer_event_class(w, sc, name, 0, st(w, spec))
	EC(sw, "sched_switch", "s:prev_comm,i:prev_tid,i:prev_prio,l:prev_state,s:next_comm,i:next_tid,i:next_prio");
	EC(wk, "sched_wakeup", "s:comm,i:tid,i:prio,i:target_cpu");
	EC(fork, "sched_process_fork", "s:parent_comm,i:parent_tid,s:child_comm,i:child_tid");
	EC(exit_, "sched_process_exit", "s:comm,i:tid,i:prio,i:group_dead");
	EC(oe, "syscall_entry_openat", "l:dfd,s:filename,l:flags,l:mode");
	EC(ox, "syscall_exit_openat", "l:ret");
	EC(ke, "syscall_entry_creat", "s:pathname,l:mode");
	EC(kx, "syscall_exit_creat", "l:ret");
	EC(we, "syscall_entry_write", "l:fd,l:buf,l:count");
	EC(wx, "syscall_exit_write", "l:ret");
	EC(ce, "syscall_entry_close", "l:fd");
	EC(cx, "syscall_exit_close", "l:ret");
	EC(se, "syscall_entry_clock_nanosleep", "l:which_clock,l:flags,l:rqtp,l:rmtp");
	EC(sx, "syscall_exit_clock_nanosleep", "l:ret");
	EC(fe, "syscall_entry_fsync", "l:fd");
	EC(fx, "syscall_exit_fsync", "l:ret");
	EC(ie, "irq_handler_entry", "i:irq,s:name");
	EC(ix, "irq_handler_exit", "i:irq,i:ret");
	EC(bi, "block_rq_insert", "l:dev,l:sector,i:nr_sector,s:rwbs");
	EC(bs, "block_rq_issue", "l:dev,l:sector,i:nr_sector,s:rwbs");
	EC(bc, "block_rq_complete", "l:dev,l:sector,i:nr_sector,s:rwbs");
	EC(dp, "lttng_statedump_process_state", "i:tid,i:pid,i:ppid,s:name,i:status");
	EC(df, "lttng_statedump_file_descriptor", "i:pid,i:fd,s:filename");
#undef EC
	k->cpu[0] = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	k->cpu[1] = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	return k->cpu[0] && k->cpu[1] && k->df ? 0 : -1;
}

/* One event: fmt gives the payload after the tid context: s string, i s32,
 * l s64. */
static void ev(struct kt *k, int cpu, int64_t ts, int tid, struct trawl_ctf_event_class *ec,
	       const char *fmt, ...)
{
	uint8_t buf[512];
	struct trawl_ctf_buf b;
	va_list ap;

	if (k->rc)
		return;
	trawl_ctf_buf_init(&b, buf, sizeof(buf));
	trawl_ctf_buf_u32(&b, (uint32_t)tid);
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		if (*f == 's')
			trawl_ctf_buf_str(&b, va_arg(ap, const char *));
		else if (*f == 'i')
			trawl_ctf_buf_u32(&b, (uint32_t)va_arg(ap, int));
		else
			trawl_ctf_buf_u64(&b, (uint64_t)va_arg(ap, long long));
	}
	va_end(ap);
	k->rc = trawl_ctf_wstream_event(k->cpu[cpu], ec, (uint64_t)ts, buf, b.len);
}

static int kt_close(struct kt *k)
{
	int rc = k->rc ? k->rc : trawl_ctf_writer_close(k->w);
	trawl_ctf_writer_free(k->w);
	return rc;
}

#define SWITCH(k, cpu, ts, pt, pc, ps, nt, nc) \
	ev(k, cpu, ts, pt, (k)->sw, "siilsii", pc, pt, 20, (long long)(ps), nc, nt, 20)
#define ENTRY(k, cpu, ts, tid, e, ...) ev(k, cpu, ts, tid, (k)->e, __VA_ARGS__)

/* The scenario (times in ms after T0; thread 100 "app" of process 100). */
static int write_scenario(const char *dir)
{
	struct kt k;

	if (kt_open(&k, dir))
		return -1;
	ev(&k, 0, 0 * MS, 999, k.dp, "iiisi", 100, 100, 1, "app", 5);
	ev(&k, 0, 0 * MS + 1, 999, k.df, "iis", 100, 4, "/tmp/old");
	SWITCH(&k, 0, 1 * MS, 0, "swapper/0", 0, 100, "app");
	ev(&k, 0, 2 * MS, 100, k.oe, "lsll", -100LL, "/tmp/test", 0x241LL, 0644LL);
	ev(&k, 0, 2 * MS + 10 * US, 100, k.ox, "l", 5LL);
	ev(&k, 0, 3 * MS, 100, k.we, "lll", 5LL, 0x1000LL, 8192LL);
	ev(&k, 0, 3 * MS + 100 * US, 100, k.wx, "l", 8192LL);
	ev(&k, 0, 3 * MS + 200 * US, 100, k.we, "lll", 4LL, 0x1000LL, 100LL);
	ev(&k, 0, 3 * MS + 210 * US, 100, k.wx, "l", 100LL);
	ev(&k, 0, 4 * MS, 100, k.se, "llll", 1LL, 0LL, 0x10LL, 0LL);
	SWITCH(&k, 0, 4 * MS + 100 * US, 100, "app", 1, 0, "swapper/0");
	ev(&k, 1, 14 * MS + 100 * US, 0, k.wk, "siii", "app", 100, 20, 0);
	SWITCH(&k, 0, 14 * MS + 200 * US, 0, "swapper/0", 0, 100, "app");
	ev(&k, 0, 14 * MS + 300 * US, 100, k.sx, "l", 0LL);
	ev(&k, 1, 15 * MS, 0, k.ie, "is", 36, "virtio");
	ev(&k, 1, 15 * MS + 10 * US, 0, k.ix, "ii", 36, 1);
	ev(&k, 0, 16 * MS, 100, k.bi, "llis", 8LL, 1000LL, 16, "WS");
	ev(&k, 0, 16 * MS + 100 * US, 100, k.bs, "llis", 8LL, 1000LL, 16, "WS");
	ev(&k, 0, 16 * MS + 150 * US, 100, k.fe, "l", 5LL);
	SWITCH(&k, 0, 16 * MS + 200 * US, 100, "app", 2, 0, "swapper/0");
	ev(&k, 1, 18 * MS, 0, k.bc, "llis", 8LL, 1000LL, 16, "WS");
	ev(&k, 1, 18 * MS + 100 * US, 0, k.wk, "siii", "app", 100, 20, 0);
	SWITCH(&k, 0, 18 * MS + 200 * US, 0, "swapper/0", 0, 100, "app");
	ev(&k, 0, 18 * MS + 300 * US, 100, k.fx, "l", 0LL);
	SWITCH(&k, 0, 19 * MS, 100, "app", 0x100, 200, "other");
	SWITCH(&k, 0, 19 * MS + 500 * US, 200, "other", 1, 100, "app");
	ev(&k, 0, 20 * MS, 100, k.ce, "l", 5LL);
	ev(&k, 0, 20 * MS + 10 * US, 100, k.cx, "l", 0LL);
	ev(&k, 0, 20 * MS + 500 * US, 100, k.ke, "sl", "/tmp/made", 0644LL);
	ev(&k, 0, 20 * MS + 510 * US, 100, k.kx, "l", 5LL);
	ev(&k, 1, 21 * MS, 0, k.ie, "is", 36, "virtio");
	ev(&k, 1, 21 * MS + 10 * US, 0, k.ix, "ii", 36, 1);
	return kt_close(&k);
}

static struct trawl_state *feed(const char *dir, int64_t window, int64_t ckpt)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = window, .checkpoint_ns = ckpt };
	struct trawl_state *s = trawl_state_new(&so);
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));

	if (!s || !r) {
		printf("# %s\n", r ? "no state" : err);
		trawl_reader_free(r);
		trawl_state_free(s);
		return NULL;
	}
	struct trawl_sink sink = trawl_state_sink(s);
	int rc = trawl_pipe_run(r, &sink, 1, NULL);
	trawl_reader_free(r);
	if (rc) {
		printf("# run: %d\n", rc);
		trawl_state_free(s);
		return NULL;
	}
	return s;
}

static void test_scenario(const char *dir)
{
	struct trawl_state *s = feed(dir, 1000 * MS, 0);
	struct trawl_state_view *v;
	const struct trawl_state_thread *th;
	const struct trawl_state_fd *f;
	const struct trawl_state_cpu *c;
	struct trawl_state_change ch[64];

	if (!ok(s, "the scenario is taken in"))
		return;
	is_int(trawl_state_nhosts(s), 1, "one host");
	is_str(trawl_state_host(s, 0), "node", "its name");
	is_int(trawl_state_newest(s), T0 + 21 * MS + 10 * US, "newest event");

	/* 3.5 ms: the fd opened at 2.01 ms with its path, 8192 bytes written */
	v = trawl_state_at(s, "node", T0 + 3 * MS + 500 * US);
	f = v ? trawl_state_view_fd_find(v, 100, 5) : NULL;
	if (ok(f, "fd 5 of pid 100 open at 3.5 ms")) {
		is_str(f->path, "/tmp/test", "its path, from openat");
		is_int(f->opened, T0 + 2 * MS + 10 * US, "opened at openat's exit");
		is_int(f->bytes_written, 8192, "8192 bytes written");
		is_int(f->writes, 1, "in one write");
		is_int(f->bytes_read, 0, "nothing read");
		size_t n = trawl_state_view_fd_changes(v, 100, 5, ch, 64);
		is_int(n, 2, "two changes built it");
		is_int(ch[0].kind, TRAWL_STATE_OPEN, "the open");
		is_str(ch[0].str, "/tmp/test", "with the path");
		is_int(ch[1].kind, TRAWL_STATE_WRITE, "then the write");
		is_int(ch[1].c, 8192, "of 8192 bytes");
		is_int(ch[1].ts, T0 + 3 * MS + 100 * US, "at the write's exit");
	}
	f = v ? trawl_state_view_fd_find(v, 100, 4) : NULL;
	if (ok(f, "fd 4 of the state dump")) {
		is_str(f->path, "/tmp/old", "its path, from the state dump");
		is_int(f->opened, INT64_MIN, "opened before the trace");
		is_int(f->bytes_written, 100, "100 bytes written");
	}
	th = v ? trawl_state_view_thread_find(v, 100) : NULL;
	if (ok(th, "thread 100")) {
		is_int(th->pid, 100, "pid from the state dump");
		is_int(th->ppid, 1, "ppid from the state dump");
		is_str(th->comm, "app", "comm");
		is_int(th->status, TRAWL_STATE_THREAD_RUNNING, "running");
		is_int(th->since, T0 + 1 * MS, "since its switch in");
	}
	trawl_state_view_free(v);

	/* 10 ms: asleep in clock_nanosleep since 4.1 ms, the CPU idle */
	v = trawl_state_at(s, "node", T0 + 10 * MS);
	th = v ? trawl_state_view_thread_find(v, 100) : NULL;
	if (ok(th, "thread 100 at 10 ms")) {
		is_int(th->status, TRAWL_STATE_THREAD_BLOCKED, "blocked");
		is_int(th->since, T0 + 4 * MS + 100 * US, "since its switch out");
		ok(th->syscall && !strcmp(th->syscall, "clock_nanosleep"), "in clock_nanosleep");
		is_int(th->syscall_since, T0 + 4 * MS, "entered at 4 ms");
		ok(!th->blocked_io, "not on block I/O");
	}
	c = v ? trawl_state_view_cpu(v, 0) : NULL;
	if (ok(c && c->cpu == 0, "cpu 0")) {
		is_int(c->mode, TRAWL_STATE_CPU_IDLE, "idle");
		is_int(c->tid, 0, "swapper");
		is_int(c->since, T0 + 4 * MS + 100 * US, "since the switch");
	}
	trawl_state_view_free(v);

	/* the thread was blocked 10.000 ms: from 4.1 to its wake-up at 14.1 */
	v = trawl_state_at(s, "node", T0 + 14 * MS + 150 * US);
	th = v ? trawl_state_view_thread_find(v, 100) : NULL;
	if (ok(th, "thread 100 at 14.15 ms")) {
		is_int(th->status, TRAWL_STATE_THREAD_WOKEN, "runnable after a wake-up");
		is_int(th->since, T0 + 14 * MS + 100 * US, "since the wake-up: blocked 10 ms");
	}
	trawl_state_view_free(v);
	v = trawl_state_at(s, "node", T0 + 14 * MS + 250 * US);
	c = v ? trawl_state_view_cpu(v, 0) : NULL;
	if (ok(c, "cpu 0 at 14.25 ms")) {
		is_int(c->tid, 100, "runs 100");
		is_int(c->mode, TRAWL_STATE_CPU_SYSCALL, "in the kernel: its sleep returns");
	}
	trawl_state_view_free(v);

	/* IRQ on cpu 1 */
	v = trawl_state_at(s, "node", T0 + 15 * MS + 5 * US);
	c = v ? trawl_state_view_cpu(v, 1) : NULL;
	if (ok(c && c->cpu == 1, "cpu 1 at 15.005 ms")) {
		is_int(c->mode, TRAWL_STATE_CPU_IRQ, "in an IRQ");
		is_int(c->irq, 36, "line 36");
		is_int(c->since, T0 + 15 * MS, "since its entry");
	}
	trawl_state_view_free(v);
	v = trawl_state_at(s, "node", T0 + 15 * MS + 20 * US);
	c = v ? trawl_state_view_cpu(v, 1) : NULL;
	ok(c && c->mode == TRAWL_STATE_CPU_IDLE, "cpu 1 idle again after the IRQ");
	trawl_state_view_free(v);

	/* 17 ms: blocked in fsync on its block write */
	v = trawl_state_at(s, "node", T0 + 17 * MS);
	th = v ? trawl_state_view_thread_find(v, 100) : NULL;
	if (ok(th, "thread 100 at 17 ms")) {
		is_int(th->status, TRAWL_STATE_THREAD_BLOCKED, "blocked");
		ok(th->blocked_io, "on block I/O");
		is_int(th->io_inflight, 1, "one request in flight");
		ok(th->syscall && !strcmp(th->syscall, "fsync"), "in fsync");
	}
	const struct trawl_state_request *q = v ? trawl_state_view_request(v, 0) : NULL;
	if (ok(q, "a request in flight")) {
		is_int(q->dev, 8, "dev");
		is_int(q->sector, 1000, "sector");
		is_int(q->nr_sector, 16, "sectors");
		ok(q->write, "a write");
		is_int(q->tid, 100, "queued by 100");
		is_int(q->inserted, T0 + 16 * MS, "inserted");
		is_int(q->issued, T0 + 16 * MS + 100 * US, "issued");
	}
	ok(v && !trawl_state_view_request(v, 1), "only one");
	trawl_state_view_free(v);

	v = trawl_state_at(s, "node", T0 + 18 * MS + 250 * US);
	th = v ? trawl_state_view_thread_find(v, 100) : NULL;
	ok(v && !trawl_state_view_request(v, 0), "18.25 ms: the request completed");
	ok(th && th->io_inflight == 0 && th->status == TRAWL_STATE_THREAD_RUNNING,
	   "the thread runs, nothing in flight");
	trawl_state_view_free(v);

	/* 19.2 ms: preempted by 200 */
	v = trawl_state_at(s, "node", T0 + 19 * MS + 200 * US);
	th = v ? trawl_state_view_thread_find(v, 100) : NULL;
	ok(th && th->status == TRAWL_STATE_THREAD_PREEMPTED && th->since == T0 + 19 * MS,
	   "19.2 ms: 100 runnable after preemption since 19 ms");
	th = v ? trawl_state_view_thread_find(v, 200) : NULL;
	ok(th && th->status == TRAWL_STATE_THREAD_RUNNING && !strcmp(th->comm, "other"),
	   "200 (other) running");
	if (v) {
		size_t n = trawl_state_view_thread_changes(v, 100, ch, 64);
		ok(n > 10 && n <= 64, "thread 100's changes: %zu", n);
		is_int(ch[0].kind, TRAWL_STATE_DUMP_PROCESS, "first: the state dump");
		is_int(ch[n - 1].kind, TRAWL_STATE_SWITCH, "last: the switch out");
		is_int(ch[n - 1].ts, T0 + 19 * MS, "at 19 ms");
		bool ordered = true;
		for (size_t i = 1; i < n; i++)
			ordered &= ch[i].ts >= ch[i - 1].ts;
		ok(ordered, "in time order");
	}
	trawl_state_view_free(v);

	v = trawl_state_at(s, "node", T0 + 20 * MS + 100 * US);
	ok(v && !trawl_state_view_fd_find(v, 100, 5) && trawl_state_view_fd_find(v, 100, 4),
	   "20.1 ms: fd 5 closed, fd 4 open");
	trawl_state_view_free(v);
	v = trawl_state_at(s, "node", T0 + 21 * MS);
	f = v ? trawl_state_view_fd_find(v, 100, 5) : NULL;
	ok(f && f->path && !strcmp(f->path, "/tmp/made") && f->opened == T0 + 20 * MS + 510 * US,
	   "21 ms: fd 5 again, made by creat: its path from creat's pathname");
	trawl_state_view_free(v);
	errno = 0;
	ok(!trawl_state_at(s, "nowhere", T0) && errno == ENOENT, "an unknown host: ENOENT");
	trawl_state_free(s);

	/* a window of 5 ms: the past before it is gone, not the fd's origin */
	s = feed(dir, 5 * MS, 0);
	ok(s && trawl_state_window_start(s, "node") >= T0 + 16 * MS - 1 &&
	   trawl_state_window_start(s, "node") < T0 + 16 * MS + 100 * US,
	   "5 ms window: starts 5 ms before the newest event");
	errno = 0;
	ok(s && !trawl_state_at(s, "node", T0 + 3 * MS) && errno == ERANGE,
	   "a time before the window: ERANGE");
	v = s ? trawl_state_at(s, "node", T0 + 21 * MS) : NULL;
	if (ok(v, "a view at the end")) {
		size_t n = trawl_state_view_fd_changes(v, 100, 4, ch, 64);
		is_int(n, 1, "fd 4: its origin only (its write is out of the window)");
		is_int(ch[0].kind, TRAWL_STATE_DUMP_FD, "the state dump line");
		is_str(ch[0].str, "/tmp/old", "with its path");
		f = trawl_state_view_fd_find(v, 100, 4);
		ok(f && f->bytes_written == 100, "its counts survive the window");
	}
	trawl_state_view_free(v);
	trawl_state_free(s);
}

static bool same_view(const struct trawl_state_view *a, const struct trawl_state_view *b)
{
	const struct trawl_state_thread *x, *y;
	const struct trawl_state_fd *f, *g;
	const struct trawl_state_cpu *c, *d;
	size_t i;

	for (i = 0; (c = trawl_state_view_cpu(a, i)); i++) {
		d = trawl_state_view_cpu(b, i);
		if (!d || c->cpu != d->cpu || c->tid != d->tid || c->mode != d->mode ||
		    c->since != d->since)
			return false;
	}
	if (trawl_state_view_cpu(b, i))
		return false;
	for (i = 0; (x = trawl_state_view_thread(a, i)); i++) {
		y = trawl_state_view_thread(b, i);
		if (!y || x->tid != y->tid || x->pid != y->pid || x->status != y->status ||
		    x->since != y->since || strcmp(x->comm, y->comm) ||
		    !x->syscall != !y->syscall || x->io_inflight != y->io_inflight)
			return false;
	}
	if (trawl_state_view_thread(b, i))
		return false;
	for (i = 0; (f = trawl_state_view_fd(a, i)); i++) {
		g = trawl_state_view_fd(b, i);
		if (!g || f->pid != g->pid || f->fd != g->fd || strcmp(f->path, g->path) ||
		    f->opened != g->opened || f->bytes_written != g->bytes_written ||
		    f->bytes_read != g->bytes_read)
			return false;
	}
	return !trawl_state_view_fd(b, i);
}

static void test_offline(const char *dir)
{
	struct trawl_state *all = feed(dir, 1000 * MS, 0);
	struct trawl_state *ck = feed(dir, 2 * MS, 3 * MS);
	struct trawl_state_stats sa;
	const char *p[] = { dir };
	char err[256];
	int same = 0, n = 0;

	if (!ok(all && ck, "two states: everything kept, and 2 ms + checkpoints"))
		goto out;
	trawl_state_stats(ck, &sa);
	ok(sa.checkpoints >= 5, "checkpoints taken: %llu", (unsigned long long)sa.checkpoints);
	for (int64_t t = T0; t <= T0 + 22 * MS; t += 250 * US, n++) {
		struct trawl_state_view *a = trawl_state_at(all, "node", t);
		struct trawl_state_view *b = trawl_state_at_files(ck, p, 1, NULL, "node", t, err, sizeof(err));
		if (!b)
			printf("# at %lld: %s\n", (long long)(t - T0), err);
		same += a && b && same_view(a, b) && same_view(b, a);
		trawl_state_view_free(a);
		trawl_state_view_free(b);
	}
	is_int(same, n, "a replay from the nearest checkpoint equals the whole state, %d times", n);
	/* the replay holds the window's history too */
	struct trawl_state_view *b = trawl_state_at_files(ck, p, 1, NULL, "node", T0 + 3 * MS + 500 * US,
							  err, sizeof(err));
	struct trawl_state_change ch[8];
	ok(b && trawl_state_view_fd_changes(b, 100, 5, ch, 8) == 2 && ch[1].c == 8192,
	   "the replayed view has the fd's open and write");
	trawl_state_view_free(b);
out:
	trawl_state_free(all);
	trawl_state_free(ck);
}

/* ---------------------------------------------------- anywhere offline */

/* A random workload of about n events (seeded): threads of a few
 * processes forking, exiting, opening, writing, closing, sleeping and
 * woken, IRQs, block requests some never completed; one time in eight
 * shared with the event before. */
static int write_random(const char *dir, int n, uint64_t seed)
{
	struct kt k;
	int64_t ts = 0;
	int tids[64], nt = 0, next_tid = 1000, cur[2] = { 0, 0 };
	int fds[64][4];
	uint64_t x = seed;

	if (kt_open(&k, dir))
		return -1;
	(void)cur;
	for (int i = 0; i < 8; i++) {
		tids[nt] = 500 + i;
		memset(fds[nt], 0, sizeof(fds[nt]));
		ev(&k, 0, ts++, 999, k.dp, "iiisi", tids[nt], 500 + i / 2 * 2, 1, "init", 5);
		ev(&k, 0, ts++, 999, k.df, "iis", 500 + i / 2 * 2, 3, "/etc/passwd");
		nt++;
	}
	for (int i = 0; i < n && !k.rc; i++) {
#define R(m) ((int)(tap_xorshift(&x) % (uint64_t)(m)))
		ts += R(8) ? 1 + R(40 * US) : 0;
		int cpu = R(2), j = R(nt), tid = tids[j], r = R(100);
		char comm[16];
		snprintf(comm, sizeof(comm), "t%d", tid % 7);
		if (r < 30) {
			ev(&k, cpu, ts, cur[cpu], k.sw, "siilsii", "x", cur[cpu], 20,
			   (long long)(R(2) ? 0 : 1), comm, tid, 20);
			cur[cpu] = tid;
		} else if (r < 38) {
			ev(&k, cpu, ts, cur[cpu], k.wk, "siii", comm, tid, 20, cpu);
		} else if (r < 41 && nt < 64) {
			tids[nt] = next_tid++;
			memset(fds[nt], 0, sizeof(fds[nt]));
			ev(&k, cpu, ts, tid, k.fork, "sisi", comm, tid, "child", tids[nt]);
			nt++;
		} else if (r < 43 && nt > 4) {
			ev(&k, cpu, ts, tid, k.exit_, "siii", comm, tid, 20, 1);
			tids[j] = tids[nt - 1];
			memcpy(fds[j], fds[nt - 1], sizeof(fds[j]));
			nt--;
		} else if (r < 52) {
			char path[32];
			int fd = 4 + R(4);
			snprintf(path, sizeof(path), "/tmp/f%d", R(50));
			ev(&k, cpu, ts, tid, k.oe, "lsll", -100LL, path, 0x241LL, 0644LL);
			ev(&k, cpu, ++ts, tid, k.ox, "l", (long long)fd);
			fds[j][fd - 4] = 1;
		} else if (r < 75) {
			int fd = 4 + R(4);
			long long c = 1 + R(65536);
			ev(&k, cpu, ts, tid, k.we, "lll", (long long)fd, 0x1000LL, c);
			ts += R(2);
			ev(&k, cpu, ts, tid, k.wx, "l", fds[j][fd - 4] ? c : -9LL);
		} else if (r < 80) {
			int fd = 4 + R(4);
			ev(&k, cpu, ts, tid, k.ce, "l", (long long)fd);
			ev(&k, cpu, ++ts, tid, k.cx, "l", fds[j][fd - 4] ? 0LL : -9LL);
			fds[j][fd - 4] = 0;
		} else if (r < 85) {
			ev(&k, cpu, ts, tid, k.se, "llll", 1LL, 0LL, 0x10LL, 0LL);
			if (R(2))
				ev(&k, cpu, ++ts, tid, k.sx, "l", 0LL);
		} else if (r < 92) {
			ev(&k, cpu, ts, cur[cpu], k.ie, "is", 30 + R(8), "virtio");
			ts += 1 + R(US);
			ev(&k, cpu, ts, cur[cpu], k.ix, "ii", 30, 1);
		} else {
			long long sec = R(200) * 8LL;
			int what = R(3);
			ev(&k, cpu, ts, tid, what == 0 ? k.bi : what == 1 ? k.bs : k.bc, "llis", 8LL, sec,
			   8, "WS");
		}
#undef R
	}
	return kt_close(&k);
}

static bool same_cpu(const struct trawl_state_cpu *a, const struct trawl_state_cpu *b)
{
	return a->cpu == b->cpu && a->tid == b->tid && a->mode == b->mode && a->irq == b->irq &&
	       a->since == b->since;
}

static bool same_thr(const struct trawl_state_thread *a, const struct trawl_state_thread *b)
{
	return a->tid == b->tid && a->pid == b->pid && a->ppid == b->ppid && !strcmp(a->comm, b->comm) &&
	       a->status == b->status && a->since == b->since && a->cpu == b->cpu &&
	       !a->syscall == !b->syscall && (!a->syscall || !strcmp(a->syscall, b->syscall)) &&
	       a->syscall_since == b->syscall_since && a->io_inflight == b->io_inflight &&
	       a->blocked_io == b->blocked_io && a->created == b->created;
}

static bool same_fd(const struct trawl_state_fd *a, const struct trawl_state_fd *b)
{
	return a->pid == b->pid && a->fd == b->fd && !strcmp(a->path, b->path) &&
	       a->opened == b->opened && a->bytes_read == b->bytes_read &&
	       a->bytes_written == b->bytes_written && a->reads == b->reads && a->writes == b->writes;
}

static bool same_rq(const struct trawl_state_request *a, const struct trawl_state_request *b)
{
	return a->dev == b->dev && a->sector == b->sector && a->nr_sector == b->nr_sector &&
	       a->write == b->write && a->tid == b->tid && a->inserted == b->inserted &&
	       a->issued == b->issued;
}

/* every field of every entity the same; *ents: how many compared */
static bool same_all(const struct trawl_state_view *a, const struct trawl_state_view *b, size_t *ents)
{
	const void *x, *y;
	size_t i;

#define SAME(get, eq) \
	for (i = 0; (x = get(a, i)); i++, ++*ents) \
		if (!(y = get(b, i)) || !eq(x, y)) \
			return false; \
	if (get(b, i)) \
		return false;
	SAME(trawl_state_view_cpu, same_cpu)
	SAME(trawl_state_view_thread, same_thr)
	SAME(trawl_state_view_fd, same_fd)
	SAME(trawl_state_view_request, same_rq)
#undef SAME
	return true;
}

/* The full model sampled as it goes: a state without a window fed one
 * event at a time; before the first event after times[k], its view. */
struct sampler {
	struct trawl_sink in;
	struct trawl_state *s;
	const int64_t *times;
	size_t n, k;
	struct trawl_state_view **out;
};

static int smp_take(struct sampler *m, int64_t upto)
{
	while (m->k < m->n && m->times[m->k] < upto) {
		if (trawl_state_nhosts(m->s) &&
		    !(m->out[m->k] = trawl_state_at(m->s, "node", m->times[m->k])))
			return -errno;
		m->k++;
	}
	return 0;
}

static int smp_start(void *self, struct trawl_reader *r)
{
	struct sampler *m = self;
	return m->in.ops->start(m->in.self, r);
}

static int smp_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct sampler *m = self;
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = smp_take(m, ev[i].ts)) || (rc = m->in.ops->events(m->in.self, &ev[i], 1)))
			return rc;
	return 0;
}

static int smp_finish(void *self, struct trawl_reader *r)
{
	struct sampler *m = self;
	int rc = smp_take(m, INT64_MAX);
	return rc ? rc : m->in.ops->finish(m->in.self, r);
}

static const struct trawl_sink_ops smp_ops = {
	.sz = sizeof(smp_ops), .name = "sampler", .start = smp_start, .events = smp_events,
	.finish = smp_finish,
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

#define RW (50 * MS)				/* the window of these states */

static struct trawl_state *feed_ck(const char *dir)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = RW, .checkpoint_ns = 20 * MS,
				       .checkpoint_events = 3000, .no_window = true };
	struct trawl_state *s = trawl_state_new(&so);
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_sink sink = trawl_state_sink(s);

	if (!s || !r || trawl_pipe_run(r, &sink, 1, NULL)) {
		printf("# feed_ck: %s\n", r ? "failed" : err);
		trawl_state_free(s);
		s = NULL;
	}
	trawl_reader_free(r);
	return s;
}

/* the CPU's or thread's changes of two views the same */
static bool same_changes(const struct trawl_state_view *a, const struct trawl_state_view *b,
			 enum trawl_state_entity e, int64_t x, size_t *n)
{
	size_t na = trawl_state_view_changes(a, e, x, 0, 0, NULL, 0);
	size_t nb = trawl_state_view_changes(b, e, x, 0, 0, NULL, 0);
	struct trawl_state_change *ca = calloc(na + 1, sizeof(*ca)), *cb = calloc(nb + 1, sizeof(*cb));
	bool same = na == nb && ca && cb;

	if (same) {
		trawl_state_view_changes(a, e, x, 0, 0, ca, na);
		trawl_state_view_changes(b, e, x, 0, 0, cb, nb);
		for (size_t i = 0; i < na && same; i++)
			same = ca[i].ts == cb[i].ts && ca[i].kind == cb[i].kind && ca[i].tid == cb[i].tid &&
			       ca[i].tid2 == cb[i].tid2 && ca[i].a == cb[i].a && ca[i].b == cb[i].b &&
			       ca[i].c == cb[i].c && !strcmp(ca[i].str, cb[i].str);
	}
	/* and its ends in one pass: the first, the newest k (several k) */
	size_t ks[] = { 1, 2, 7, na + 3 };
	for (size_t q = 0; q < 4 && same; q++) {
		size_t k = ks[q];
		struct trawl_state_change first, *nw = calloc(k, sizeof(*nw));
		size_t ne = nw ? trawl_state_view_changes_ends(a, e, x, 0, &first, nw, k) : 0;
		size_t have = na > 1 ? (na - 1 < k ? na - 1 : k) : 0;
		same = nw && ne == na && (!na || (first.ts == ca[0].ts && first.kind == ca[0].kind));
		for (size_t i = 0; i < have && same; i++) {
			const struct trawl_state_change *w = &ca[na - have + i];
			same = nw[i].ts == w->ts && nw[i].kind == w->kind && nw[i].tid == w->tid &&
			       nw[i].a == w->a && nw[i].c == w->c && !strcmp(nw[i].str, w->str);
		}
		free(nw);
	}
	*n += na;
	free(ca);
	free(cb);
	return same;
}

static void test_anywhere(const char *dir)
{
	const char *p[] = { dir };
	char err[1024], file[400];
	enum { NT = 150 };
	int64_t times[NT + 64];
	struct trawl_state_view *truth[NT + 64] = { 0 };
	size_t nt = 0;
	uint64_t x = 7;

	if (!ok(write_random(dir, 60000, 42) == 0, "a random workload written"))
		return;
	struct trawl_state *ck = feed_ck(dir);
	if (!ok(ck != NULL, "a pass with checkpoints and no window"))
		return;
	struct trawl_state_stats st;
	trawl_state_stats(ck, &st);
	ok(st.checkpoints >= 20 && st.changes == 0, "%llu checkpoints, no window held",
	   (unsigned long long)st.checkpoints);
	int64_t lo = T0, hi = trawl_state_newest(ck);
	for (; nt < NT; nt++)
		times[nt] = lo + 8 + (int64_t)(tap_xorshift(&x) % (uint64_t)(hi - lo));
	/* and every 20 ms of the grid, just before, at and after it */
	for (int64_t g = T0 + 20 * MS; g < hi && nt + 3 <= NT + 64; g += 100 * MS) {
		times[nt++] = g - 1;
		times[nt++] = g;
		times[nt++] = g + 1;
	}
	times[nt++] = hi;
	qsort(times, nt, sizeof(*times), cmp_i64);

	/* the full model, sampled */
	struct trawl_state_opts to = { .sz = sizeof(to), .window_ns = RW, .no_window = true };
	struct trawl_state *full = trawl_state_new(&to);
	struct sampler m = { trawl_state_sink(full), full, times, nt, 0, truth };
	struct trawl_sink smp = { &smp_ops, &m };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	ok(r && trawl_pipe_run(r, &smp, 1, NULL) == 0 && m.k == nt, "the full model sampled at %zu times", nt);
	trawl_reader_free(r);

	snprintf(file, sizeof(file), "%s/.trawl-state-node.ckpt", dir);
	*err = 0;
	ok(trawl_state_save(ck, file, p, 1, err, sizeof(err)) == 0, "checkpoint file written%s%s",
	   *err ? ": " : "", err);
	struct trawl_state_opts lo_ = { .sz = sizeof(lo_), .window_ns = RW };
	struct trawl_state *ld = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
	ok(ld != NULL, "checkpoint file loaded%s%s", ld ? "" : ": ", ld ? "" : err);
	is_int(trawl_state_checkpoints_end(ld), hi, "its checkpoints hold the trace to its last event");

	for (int from_file = 0; from_file < 2; from_file++) {
		size_t same = 0, ents = 0;
		for (size_t i = 0; i < nt; i++) {
			struct trawl_state_view *v = from_file && !ld ? NULL :
				trawl_state_at_files(from_file ? ld : ck, p, 1, NULL, "node", times[i],
						     err, sizeof(err));
			if (!v)
				printf("# at %lld: %s\n", (long long)times[i], err);
			same += v && truth[i] && same_all(truth[i], v, &ents);
			trawl_state_view_free(v);
		}
		is_int(same, nt, "%s: the state anywhere equals the full model's, at %zu times "
		       "(%zu entities)", from_file ? "from the file" : "from memory", nt, ents);
	}

	/* the history, asked: as a pass that kept the window has it */
	int hs = 0, hn = 0;
	size_t nch = 0;
	for (size_t i = nt / 4; i < nt; i += nt / 4, hn++) {
		struct trawl_state_opts wo = { .sz = sizeof(wo), .window_ns = RW };
		struct trawl_state *w = trawl_state_new(&wo);
		struct trawl_reader_opts ro = { .sz = sizeof(ro), .end = times[i] };
		struct trawl_reader *r2 = trawl_reader_new(p, 1, &ro, err, sizeof(err));
		struct trawl_sink ws = trawl_state_sink(w);
		struct trawl_state_view *a = r2 && !trawl_pipe_run(r2, &ws, 1, NULL) ?
			trawl_state_at(w, "node", times[i]) : NULL;
		struct trawl_state_view *b = ld ? trawl_state_at_files(ld, p, 1, NULL, "node", times[i],
								     err, sizeof(err)) : NULL;
		const struct trawl_state_thread *th = a ? trawl_state_view_thread(a, 3) : NULL;
		hs += a && b && !trawl_state_view_history(b, err, sizeof(err)) &&
		      same_changes(a, b, TRAWL_STATE_ENTITY_CPU, 0, &nch) &&
		      same_changes(a, b, TRAWL_STATE_ENTITY_CPU, 1, &nch) &&
		      th && same_changes(a, b, TRAWL_STATE_ENTITY_THREAD, th->tid, &nch);
		trawl_state_view_free(a);
		trawl_state_view_free(b);
		trawl_reader_free(r2);
		trawl_state_free(w);
	}
	ok(hs == hn && nch > 1000, "the history asked of %d views equals a windowed pass's (%zu changes)",
	   hn, nch);

	/* the file refused when it is not of this trace, or corrupt */
	char stream[400];
	size_t len = 0;
	uint8_t *orig = slurp(file, &len);
	snprintf(stream, sizeof(stream), "%s/channel0_1", dir);
	size_t slen = 0;
	uint8_t *sb = slurp(stream, &slen);
	struct trawl_state *bad;
	struct stat st0;
	FILE *f;
	if (sb && slen > 8192 && !stat(stream, &st0) && (f = fopen(stream, "wb"))) {
		fwrite(sb, 1, slen - 4096, f);
		fclose(f);
		bad = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
		ok(!bad && errno == ESTALE && strstr(err, "channel0_1"),
		   "a stream truncated: refused (ESTALE): %s", err);
		trawl_state_free(bad);
		/* a byte changed in the middle (its time changes), and one in
		 * its first bytes with the time put back */
		for (int w = 0; w < 2; w++) {
			size_t at = w ? 100 : slen / 2;
			if ((f = fopen(stream, "wb"))) {
				sb[at] ^= 0x40;
				fwrite(sb, 1, slen, f);
				fclose(f);
				sb[at] ^= 0x40;
			}
			if (w) {
				struct timespec tv[2] = { st0.st_atim, st0.st_mtim };
				utimensat(AT_FDCWD, stream, tv, 0);
			}
			bad = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
			ok(!bad && errno == ESTALE && strstr(err, "channel0_1"),
			   "a byte of a stream changed (%s), the same size: refused (ESTALE): %s",
			   w ? "its time put back" : "a new time", err);
			trawl_state_free(bad);
		}
		if ((f = fopen(stream, "wb"))) {
			fwrite(sb, 1, slen, f);
			fclose(f);
			struct timespec tv[2] = { st0.st_atim, st0.st_mtim };
			utimensat(AT_FDCWD, stream, tv, 0);
		}
	} else {
		ok(0, "the stream read: %s", stream);
		ok(0, "(skipped)");
		ok(0, "(skipped)");
	}
	free(sb);
	struct trawl_state_opts w2 = { .sz = sizeof(w2), .window_ns = 2 * RW };
	bad = trawl_state_load(file, &w2, p, 1, err, sizeof(err));
	ok(!bad && errno == ESTALE && strstr(err, "window"), "another window: refused (ESTALE): %s", err);
	trawl_state_free(bad);
	bad = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
	ok(bad != NULL, "the trace as it was: the file taken again");
	trawl_state_free(bad);
	/* corrupt: a byte flipped anywhere: refused at the load (its header),
	 * or by the queries whose checkpoints it is in (each checked when it
	 * is restored), never a wrong answer */
	int refused = 0, tries = 0, wrong = 0, answered = 0;
	for (size_t at = 3; orig && at < len; at += len / 13 + 1, tries++) {
		orig[at] ^= 0x10;
		if ((f = fopen(file, "wb"))) {
			fwrite(orig, 1, len, f);
			fclose(f);
		}
		orig[at] ^= 0x10;
		bad = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
		if (!bad) {
			refused += errno == EBADMSG && strstr(err, file) && *err;
			continue;
		}
		bool seen = false;
		for (size_t i = 0; i < nt; i += 3) {
			struct trawl_state_view *v = trawl_state_at_files(bad, p, 1, NULL, "node", times[i],
									  err, sizeof(err));
			size_t e = 0;
			if (v) {
				answered++;
				wrong += !truth[i] || !same_all(truth[i], v, &e);
			} else {
				seen |= errno == EBADMSG;
				wrong += errno != EBADMSG;
			}
			trawl_state_view_free(v);
		}
		refused += seen;
		trawl_state_free(bad);
	}
	ok(refused == tries && !wrong, "a byte flipped at %d places: each refused as corrupt (EBADMSG), "
	   "at the load or by the queries of its checkpoint (%d refused, %d wrong answers of %d)",
	   tries, refused, wrong, answered);
	if (orig && (f = fopen(file, "wb"))) {
		fwrite(orig, 1, len / 2, f);
		fclose(f);
	}
	bad = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
	ok(!bad && errno == EBADMSG, "truncated: refused (EBADMSG): %s", err);
	trawl_state_free(bad);
	if ((f = fopen(file, "wb"))) {
		fputs("not a checkpoint file\n", f);
		fclose(f);
	}
	bad = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
	ok(!bad && errno == EBADMSG && strstr(err, "not a checkpoint file"), "not one: refused: %s", err);
	trawl_state_free(bad);
	unlink(file);
	bad = trawl_state_load(file, &lo_, p, 1, err, sizeof(err));
	ok(!bad && errno == ENOENT, "none: ENOENT");
	trawl_state_free(bad);
	free(orig);
	for (size_t i = 0; i < nt; i++)
		trawl_state_view_free(truth[i]);
	trawl_state_free(full);
	trawl_state_free(ld);
	trawl_state_free(ck);
}

/* A periodic workload of `cycles` ms: each ms a new child of 100 opens a
 * file, writes, exits; a request is queued and never completes; a syscall
 * entry never gets its exit. */
static int write_periodic(const char *dir, int cycles)
{
	struct kt k;

	if (kt_open(&k, dir))
		return -1;
	ev(&k, 0, 0, 999, k.dp, "iiisi", 100, 100, 1, "app", 5);
	for (int i = 0; i < cycles; i++) {
		int64_t t = (int64_t)i * MS + 1000;
		int child = 1000 + i;
		ev(&k, 0, t, 100, k.fork, "sisi", "app", 100, "child", child);
		SWITCH(&k, 0, t + 10 * US, 100, "app", 1, child, "child");
		ev(&k, 0, t + 20 * US, child, k.oe, "lsll", -100LL, "/tmp/f", 0x241LL, 0644LL);
		ev(&k, 0, t + 30 * US, child, k.ox, "l", 3LL);
		ev(&k, 0, t + 40 * US, child, k.we, "lll", 3LL, 0x1000LL, 4096LL);
		ev(&k, 0, t + 50 * US, child, k.wx, "l", 4096LL);
		ev(&k, 0, t + 60 * US, child, k.bi, "llis", 8LL, (long long)i * 8, 8, "W");
		ev(&k, 0, t + 70 * US, child, k.se, "llll", 1LL, 0LL, 0LL, 0LL);	/* no exit */
		ev(&k, 0, t + 80 * US, child, k.exit_, "siii", "child", child, 20, 1);
		SWITCH(&k, 0, t + 90 * US, child, "child", 16, 100, "app");
		ev(&k, 1, t + 100 * US, 0, k.ie, "is", 36, "virtio");
		ev(&k, 1, t + 110 * US, 0, k.ix, "ii", 36, 1);
	}
	return kt_close(&k);
}

static void test_memory(const char *dir1, const char *dir10)
{
	struct trawl_state_stats a, b;

	if (!ok(write_periodic(dir1, 200) == 0 && write_periodic(dir10, 2000) == 0,
		"periodic workloads of 200 and 2000 ms written"))
		return;
	struct trawl_state *s1 = feed(dir1, 10 * MS, 0), *s10 = feed(dir10, 10 * MS, 0);
	if (ok(s1 && s10, "both taken in")) {
		trawl_state_stats(s1, &a);
		trawl_state_stats(s10, &b);
		ok(b.events > 9 * a.events, "ten times the events: %llu, %llu",
		   (unsigned long long)a.events, (unsigned long long)b.events);
		is_int(b.changes, a.changes, "the same changes held (the window's)");
		ok(a.changes < 200, "a window's worth: %llu", (unsigned long long)a.changes);
		is_int(b.threads, a.threads, "the same threads (exited ones dropped)");
		is_int(a.threads, 1, "only the parent lives");
		is_int(b.fds, a.fds, "the same fds (the children's dropped)");
		is_int(b.requests, a.requests, "the same requests in flight");
		/* swept once a window: at most two windows' worth (one a ms) */
		ok(a.requests <= 20, "unanswered requests dropped after the window: %llu",
		   (unsigned long long)a.requests);
		ok(b.gc_requests > 1900, "and counted: %llu", (unsigned long long)b.gc_requests);
		is_int(b.bytes, a.bytes, "the same memory: %llu bytes", (unsigned long long)b.bytes);
	}
	trawl_state_free(s1);
	trawl_state_free(s10);
}

int main(void)
{
	char dir[300], d1[300], d10[300], dr[300];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/k", root);
	snprintf(d1, sizeof(d1), "%s/p1", root);
	snprintf(d10, sizeof(d10), "%s/p10", root);
	if (ok(write_scenario(dir) == 0, "scenario written")) {
		test_scenario(dir);
		test_offline(dir);
	}
	test_memory(d1, d10);
	snprintf(dr, sizeof(dr), "%s/random", root);
	test_anywhere(dr);
	tap_rm_tree(root);
	return done_testing();
}
