/* SPDX-License-Identifier: MIT */
/*
 * test-state-skip: the state sink tells the reader which event classes it
 * can leave out (trawl_sink_ops.wants): those that make no change (here
 * kmem_kfree, among switches and writes on two CPUs). With a second sink
 * that wants nothing, the unbound class's events are not merged (only the
 * decoder's batch ends and a stream's last event come, a few of its 20001);
 * with one that wants everything they all come; the state is the same both
 * ways: its events and changes counted, its newest time (the last event, a
 * kmem_kfree), and the views at every 1 ms.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/state.h"

static char root[] = "/tmp/trawl-test-state-skip-XXXXXX";

#define MS 1000000LL
#define US 1000LL
#define NFREE 20000
#define LAST (NFREE / 2 * 10 * US + 5 * US)

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

struct kt {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_wstream *cpu[2];
	struct trawl_ctf_event_class *sw, *we, *wx, *kf;
	int rc;
};

/* One event: its tid context, then fmt's payload (s string, i s32, l s64). */
static void ev(struct kt *k, int cpu, int64_t ts, int tid, struct trawl_ctf_event_class *ec,
	       const char *fmt, ...)
{
	uint8_t buf[256];
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

/* Per CPU, every 10 us: a switch between two threads of its own, a write
 * of the one in, and a kmem_kfree (the class the state does not bind). */
static int write_trace(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "node", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct kt k = { 0 };

	if (!(k.w = trawl_ctf_writer_new(&o)))
		return -1;
	struct trawl_ctf_writer *w = k.w;
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, st(w, "i:tid"));
	k.sw = trawl_ctf_writer_event_class(w, sc, "sched_switch", 0,
		st(w, "s:prev_comm,i:prev_tid,i:prev_prio,l:prev_state,s:next_comm,i:next_tid,i:next_prio"));
	k.we = trawl_ctf_writer_event_class(w, sc, "syscall_entry_write", 0, st(w, "l:fd,l:buf,l:count"));
	k.wx = trawl_ctf_writer_event_class(w, sc, "syscall_exit_write", 0, st(w, "l:ret"));
	k.kf = trawl_ctf_writer_event_class(w, sc, "kmem_kfree", 0, st(w, "l:call_site,l:ptr"));
	k.cpu[0] = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	k.cpu[1] = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	if (!k.cpu[0] || !k.cpu[1] || !k.kf)
		k.rc = -1;
	for (int i = 0; i < NFREE / 2; i++)
		for (int cpu = 0; cpu < 2; cpu++) {
			int64_t ts = i * 10 * US + cpu * US;
			int a = 100 + 2 * cpu, b = a + 1, in = i % 2 ? b : a, out = i % 2 ? a : b;
			ev(&k, cpu, ts, out, k.sw, "siilsii", "w", out, 20, 1LL, "w", in, 20);
			ev(&k, cpu, ts + 1 * US, in, k.we, "lll", 1LL, 0x1000LL, 64LL);
			ev(&k, cpu, ts + 2 * US, in, k.kf, "ll", 0x10LL, 0x2000LL + i);
			ev(&k, cpu, ts + 3 * US, in, k.wx, "l", 64LL);
		}
	/* the trace's last event: a kmem_kfree (a stream's last always comes) */
	ev(&k, 1, LAST, 103, k.kf, "ll", 0x10LL, 0x1000LL);
	int rc = k.rc ? k.rc : trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

/* the other sink: counts the kmem_kfree events it is given */
struct other {
	bool want;
	uint64_t kfree, all;
};

static int o_start(void *self, struct trawl_reader *r)
{
	(void)self;
	(void)r;
	return 0;
}

static int o_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct other *o = self;

	for (size_t i = 0; i < n; i++)
		o->kfree += !strcmp(ev[i].cls->name, "kmem_kfree");
	o->all += n;
	return 0;
}

static int o_finish(void *self, struct trawl_reader *r)
{
	(void)self;
	(void)r;
	return 0;
}

static bool o_wants(void *self, const struct trawl_ctf_event_class *cls)
{
	(void)cls;
	return ((struct other *)self)->want;
}

static const struct trawl_sink_ops other_ops = {
	.sz = sizeof(other_ops), .name = "other", .start = o_start, .events = o_events,
	.finish = o_finish, .wants = o_wants,
};

static struct trawl_state *feed(const char *dir, struct other *o)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = 1000 * MS };
	struct trawl_state *s = trawl_state_new(&so);
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));

	if (!s || !r) {
		printf("# %s\n", r ? "no state" : err);
		trawl_reader_free(r);
		trawl_state_free(s);
		return NULL;
	}
	struct trawl_sink sinks[2] = { trawl_state_sink(s), { &other_ops, o } };
	int rc = trawl_pipe_run(r, sinks, 2, NULL);
	trawl_reader_free(r);
	if (rc) {
		printf("# run: %d\n", rc);
		trawl_state_free(s);
		return NULL;
	}
	return s;
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

int main(void)
{
	char dir[sizeof(root) + 8];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/t", root);
	ok(write_trace(dir) == 0, "a trace of switches, writes and %d kmem_kfree written", NFREE + 1);
	struct other none = { .want = false }, every = { .want = true };
	struct trawl_state *a = feed(dir, &none), *b = feed(dir, &every);
	if (!ok(a && b, "fed both ways")) {
		trawl_state_free(a);
		trawl_state_free(b);
		tap_rm_tree(root);
		return done_testing();
	}
	ok(every.kfree == NFREE + 1, "a sink that wants every class is given every kmem_kfree: %llu",
	   (unsigned long long)every.kfree);
	ok(none.kfree < NFREE / 10,
	   "with one that wants none, the state's wants() leaves most out: %llu of %d came",
	   (unsigned long long)none.kfree, NFREE + 1);
	ok(none.all - none.kfree == every.all - every.kfree,
	   "the bound classes' events all came both ways: %llu",
	   (unsigned long long)(none.all - none.kfree));
	struct trawl_state_stats x, y;
	trawl_state_stats(a, &x);
	trawl_state_stats(b, &y);
	ok(x.events == y.events && x.events == 3ULL * NFREE,
	   "the state took the same events: %llu and %llu (of %d bound)",
	   (unsigned long long)x.events, (unsigned long long)y.events, 3 * NFREE);
	ok(x.changes == y.changes && x.threads == y.threads && x.threads == 4,
	   "the same changes held (%llu, %llu) and threads (%llu)",
	   (unsigned long long)x.changes, (unsigned long long)y.changes,
	   (unsigned long long)x.threads);
	int64_t t0 = 1700000000LL * 1000000000LL;
	ok(trawl_state_newest(a) == t0 + LAST && trawl_state_newest(b) == t0 + LAST,
	   "the same newest time, the last event's (a kmem_kfree): +%lld and +%lld ns",
	   (long long)(trawl_state_newest(a) - t0), (long long)(trawl_state_newest(b) - t0));
	int same_n = 0, n = 0;
	for (int64_t t = t0; t <= t0 + NFREE / 2 * 10 * US; t += MS, n++) {
		struct trawl_state_view *va = trawl_state_at(a, "node", t),
					*vb = trawl_state_at(b, "node", t);
		same_n += va && vb && same_view(va, vb);
		trawl_state_view_free(va);
		trawl_state_view_free(vb);
	}
	ok(same_n == n && n > 90, "the same view at every 1 ms: %d of %d", same_n, n);
	trawl_state_free(a);
	trawl_state_free(b);
	tap_rm_tree(root);
	return done_testing();
}
