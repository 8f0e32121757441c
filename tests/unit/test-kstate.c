/* SPDX-License-Identifier: MIT */
/*
 * test-kstate: the one kernel model (lib/kstate) driven per event, as an
 * analysis does (tr_kin_take: no history), on a kernel trace written here
 * with LTTng's names, two CPUs, tid context:
 *
 *   CPU 0  1000  sched_switch swapper/0 (0) -> a (100)
 *          1100  lttng_statedump_process_state tid 100 pid 100 "a-from-proc"
 *                (a name the scheduler gave stays: still "a")
 *          1150  lttng_statedump_process_state tid 150 pid 100 "w"
 *                (a thread with no name yet: "w", of process 100)
 *          1200  sched_process_fork parent 500 (never seen) -> child 501,
 *                child_pid 77 (a thread of process 77: its tgid is the
 *                event's, not its unknown parent's tid)
 *          2000  sched_process_exec 100 "/usr/bin/some-very-long-program"
 *                (named after the program, as the kernel's 15 bytes of comm)
 *          3000  sched_switch some-very-long- (100) -> swapper/0 (0)
 *   CPU 1  1000  sched_switch swapper/1 (0) -> b (200)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kev.h"
#include "tap.h"
#include "kstate/kstate.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-kstate-XXXXXX";
#define T0 1000000000ull


static int write_trace(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "h1", .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w), *sw = trawl_ctf_type_struct(w),
			      *sd = trawl_ctf_type_struct(w), *fk = trawl_ctf_type_struct(w),
			      *ex = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_comm", str);
	trawl_ctf_struct_add(w, sw, "prev_tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_prio", s32);
	trawl_ctf_struct_add(w, sw, "prev_state", s64);
	trawl_ctf_struct_add(w, sw, "next_comm", str);
	trawl_ctf_struct_add(w, sw, "next_tid", s32);
	trawl_ctf_struct_add(w, sw, "next_prio", s32);
	trawl_ctf_struct_add(w, sd, "tid", s32);
	trawl_ctf_struct_add(w, sd, "pid", s32);
	trawl_ctf_struct_add(w, sd, "name", str);
	trawl_ctf_struct_add(w, fk, "parent_comm", str);
	trawl_ctf_struct_add(w, fk, "parent_tid", s32);
	trawl_ctf_struct_add(w, fk, "parent_pid", s32);
	trawl_ctf_struct_add(w, fk, "child_comm", str);
	trawl_ctf_struct_add(w, fk, "child_tid", s32);
	trawl_ctf_struct_add(w, fk, "child_pid", s32);
	trawl_ctf_struct_add(w, ex, "filename", str);
	trawl_ctf_struct_add(w, ex, "tid", s32);
	trawl_ctf_struct_add(w, ex, "old_tid", s32);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT,
									   ctx);
	struct trawl_ctf_event_class *e_sw = trawl_ctf_writer_event_class(w, sc, "sched_switch",
									  INT64_MIN, sw);
	struct trawl_ctf_event_class *e_sd =
		trawl_ctf_writer_event_class(w, sc, "lttng_statedump_process_state", INT64_MIN, sd);
	struct trawl_ctf_event_class *e_fk = trawl_ctf_writer_event_class(w, sc, "sched_process_fork",
									  INT64_MIN, fk);
	struct trawl_ctf_event_class *e_ex = trawl_ctf_writer_event_class(w, sc, "sched_process_exec",
									  INT64_MIN, ex);
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	struct trawl_ctf_wstream *c1 = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	int r = !c0 || !c1 || !e_ex;
	r = r ?: kev(c0, e_sw, 1000, 0, "siil" "sii", "swapper/0", 0, 20, 0ll, "a", 100, 20);
	r = r ?: kev(c0, e_sd, 1100, 100, "iis", 100, 100, "a-from-proc");
	r = r ?: kev(c0, e_sd, 1150, 100, "iis", 150, 100, "w");
	r = r ?: kev(c0, e_fk, 1200, 100, "siisii", "p", 500, 77, "kid", 501, 77);
	r = r ?: kev(c0, e_ex, 2000, 100, "sii", "/usr/bin/some-very-long-program", 100, 100);
	r = r ?: kev(c0, e_sw, 3000, 100, "siil" "sii", "some-very-long-", 100, 20, 1ll, "swapper/0",
		    0, 20);
	r = r ?: kev(c1, e_sw, 1000, 0, "siil" "sii", "swapper/1", 0, 20, 0ll, "b", 200, 20);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

/* A consumer with no history: the model, fed every event. */
struct model {
	struct tr_kin kin;
	struct strtab str;
	struct tables t;
	int64_t at;			/* stop after the event at this time (relative) */
	uint32_t names_at_1100;		/* the thread 100's names after the state dump */
	uint32_t comm_at_1100;
};

static int m_start(void *self, struct trawl_reader *r)
{
	struct model *m = self;
	tr_kin_finish(&m->kin);
	return tr_kin_start(&m->kin, r);
}

static int m_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct model *m = self;
	for (size_t i = 0; i < n; i++) {
		int rc = tr_kin_take(&m->kin, &m->str, &m->t, &ev[i]);
		if (rc)
			return rc;
		if (ev[i].ts == (int64_t)T0 + 1100 + 1700000000ll * 1000000000ll) {
			const struct ithread *th = tr_ks_thread(&m->t, 100);
			m->names_at_1100 = th ? th->names : 99;
			m->comm_at_1100 = th ? th->comm : 0;
		}
	}
	return 0;
}

static int m_finish(void *self, struct trawl_reader *r)
{
	return 0;
}

static const struct trawl_sink_ops m_ops = {
	.sz = sizeof(m_ops), .name = "model", .start = m_start, .events = m_events,
	.finish = m_finish,
};

static const char *comm(const struct model *m, const struct ithread *th)
{
	return th ? tr_state_str(&m->str, th->comm) : "(none)";
}

/*
 * Switches the trace lacks (docs/kernel.md): thread 300 seen on CPU 1 in
 * task context (a system call, then its switch out) while the model has
 * the CPU's idle thread run it. Counted once; the CPU is 300's from its
 * wake-up (tr_ks_on_since()), later than the CPU's last change.
 */
static void unseen(void)
{
	struct tables t;
	tr_tables_init(&t);
	struct chg c[] = {
		{ .ts = 1000, .kind = TRAWL_STATE_SWITCH, .cpu = 1, .tid = 300, .a = 1, .tid2 = 0 },
		{ .ts = 5000, .kind = TRAWL_STATE_WAKEUP, .cpu = 1, .tid = 0, .tid2 = 300, .a = 1 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		tr_state_apply(&t, &c[i], 0);
	is_int(tr_ks_on_since(&t, 1, 0), 1000, "the idle thread has had CPU 1 since its switch");
	is_int(tr_ks_on_since(&t, 1, 300), 5000,
	       "300, not switched in by the trace, has had it since its wake-up at the latest");
	is_int(tr_ks_on_since(&t, 0, 300), 5000,
	       "CPU 0, never seen: 300 can have had it since its own last change (its wake-up) only");
	is_int(tr_ks_on_since(&t, 0, 999), INT64_MIN, "... a thread the model does not know: unknown");
	struct chg sc = { .ts = 8000, .kind = TRAWL_STATE_SYSCALL_ENTRY, .cpu = 1, .tid = 300 };
	tr_state_apply(&t, &sc, 0);
	is_int(t.unseen_switches, 1, "its system call on CPU 1 shows the switch the trace lacks");
	is_int(tr_ks_cpu_tid(&t, 1), 300, "... CPU 1 runs 300 from then on");
	is_int(tr_ks_on_since(&t, 1, 300), 5000, "... since its wake-up");
	struct chg out = { .ts = 15000, .kind = TRAWL_STATE_SWITCH, .cpu = 1, .tid = 300, .a = 1 };
	tr_state_apply(&t, &out, 0);
	is_int(t.unseen_switches, 1, "its switch out is no second one");
	struct chg in = { .ts = 17000, .kind = TRAWL_STATE_SWITCH, .cpu = 1, .tid = 0, .tid2 = 300 };
	tr_state_apply(&t, &in, 0);
	is_int(tr_ks_on_since(&t, 1, 300), 17000, "a switch the trace has: since its time");
	struct chg other = { .ts = 18000, .kind = TRAWL_STATE_SWITCH, .cpu = 1, .tid = 400, .a = 1 };
	tr_state_apply(&t, &other, 0);
	is_int(t.unseen_switches, 2, "400 leaving CPU 1 while 300 ran there: another one missing");
	/* 300, preempted on CPU 0 (30000), is moved to CPU 1, idle since
	 * 18000 (by the trace): not there before it left CPU 0 */
	struct chg more[] = {
		{ .ts = 29000, .kind = TRAWL_STATE_SWITCH, .cpu = 0, .tid = 0, .tid2 = 300 },
		{ .ts = 30000, .kind = TRAWL_STATE_SWITCH, .cpu = 0, .tid = 300, .a = 0, .tid2 = 18 },
	};
	for (size_t i = 0; i < 2; i++)
		tr_state_apply(&t, &more[i], 0);
	is_int(tr_ks_on_since(&t, 1, 300), 30000,
	       "a thread preempted elsewhere has had CPU 1 since it left the other CPU at the latest");
	tr_tables_release(&t);
}

/*
 * Each CPU's time by mode (tr_ks_cpu_times()): CPU 0 runs 100 from 1000,
 * which calls at 3000, is interrupted 4000-4500, returns at 6000 and
 * sleeps at 9000; at 10000: user 2000 + 3000, system 1000 + 1500, irq
 * 500, idle 1000. CPU 1: idle from 1000; 300, woken at 5000, makes a call
 * at 8000 that the trace shows without its switch in: 5000-8000 is its
 * (user), not idle; the call returns at 9000, 300 leaves at 15000.
 */
static void modes(void)
{
	struct tables t;
	tr_tables_init(&t);
	struct chg c[] = {
		{ .ts = 1000, .kind = TRAWL_STATE_SWITCH, .cpu = 0, .tid = 0, .tid2 = 100 },
		{ .ts = 1000, .kind = TRAWL_STATE_SWITCH, .cpu = 1, .tid = 300, .a = 1, .tid2 = 0 },
		{ .ts = 3000, .kind = TRAWL_STATE_SYSCALL_ENTRY, .cpu = 0, .tid = 100 },
		{ .ts = 4000, .kind = TRAWL_STATE_IRQ_ENTRY, .cpu = 0, .tid = 100, .a = 5 },
		{ .ts = 4500, .kind = TRAWL_STATE_IRQ_EXIT, .cpu = 0, .tid = 100, .a = 5 },
		{ .ts = 5000, .kind = TRAWL_STATE_WAKEUP, .cpu = 1, .tid = 0, .tid2 = 300, .a = 1 },
		{ .ts = 6000, .kind = TRAWL_STATE_SYSCALL_EXIT, .cpu = 0, .tid = 100 },
		{ .ts = 8000, .kind = TRAWL_STATE_SYSCALL_ENTRY, .cpu = 1, .tid = 300 },
		{ .ts = 9000, .kind = TRAWL_STATE_SWITCH, .cpu = 0, .tid = 100, .a = 1, .tid2 = 0 },
		{ .ts = 9000, .kind = TRAWL_STATE_SYSCALL_EXIT, .cpu = 1, .tid = 300 },
		{ .ts = 15000, .kind = TRAWL_STATE_SWITCH, .cpu = 1, .tid = 300, .a = 1, .tid2 = 0 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		tr_state_apply(&t, &c[i], 0);
	int64_t m[TR_KS_MODES];
	struct tables one = t;	/* CPU 0 alone */
	one.ncpus = 1;
	tr_ks_cpu_times(&one, 10000, m);
	ok(m[TRAWL_STATE_CPU_USER] == 5000 && m[TRAWL_STATE_CPU_SYSCALL] == 2500 &&
	   m[TRAWL_STATE_CPU_IRQ] == 500 && m[TRAWL_STATE_CPU_IDLE] == 1000 &&
	   m[TRAWL_STATE_CPU_SOFTIRQ] == 0 && m[TRAWL_STATE_CPU_UNKNOWN] == 0,
	   "CPU 0 by mode: user %lld, system %lld, irq %lld, idle %lld (5000, 2500, 500, 1000)",
	   (long long)m[TRAWL_STATE_CPU_USER], (long long)m[TRAWL_STATE_CPU_SYSCALL],
	   (long long)m[TRAWL_STATE_CPU_IRQ], (long long)m[TRAWL_STATE_CPU_IDLE]);
	int64_t all[TR_KS_MODES];
	tr_ks_cpu_times(&t, 16000, all);
	int64_t u1 = all[TRAWL_STATE_CPU_USER] - 5000, s1 = all[TRAWL_STATE_CPU_SYSCALL] - 2500,
		i1 = all[TRAWL_STATE_CPU_IDLE] - (1000 + 6000);
	ok(u1 == 3000 + 6000 && s1 == 1000 && i1 == 4000 + 1000,
	   "CPU 1: the time before the call the trace lacks the switch of is the thread's "
	   "(user %lld, system %lld, idle %lld; 9000, 1000, 5000)", (long long)u1, (long long)s1,
	   (long long)i1);
	tr_tables_release(&t);
}

/*
 * A table's lookups (tr_tab_find() through its hints, the slot a key was
 * last got at) against a plain array, over 200,000 random gets, deletes
 * and finds of 600 keys (threads' and fds' shapes, so that hints and
 * clusters collide; the table grows, deletes shift records back), and a
 * copy made with tr_tables_set() into a table of the same sizes.
 */
static void tables(void)
{
	enum { NKEY = 600, STEPS = 200000 };
	static uint64_t key[NKEY];
	static uint32_t val[NKEY];	/* the record's tid field; 0: absent */
	struct tables t, cp;
	uint64_t x = 7;
	size_t bad = 0, found = 0, n = 0;

	tr_tables_init(&t);
	tr_tables_init(&cp);
	for (size_t i = 0; i < NKEY; i++)
		key[i] = i % 2 ? tr_fd_key(1000 + i % 7, i) : 100 + i * 256;
	for (uint32_t s = 1; s <= STEPS && !bad; s++) {
		size_t i = tap_xorshift(&x) % NKEY;
		switch (tap_xorshift(&x) % 4) {
		case 0: {
			bool created;
			struct ithread *th = tr_tab_get(&t.thr, key[i], &created);
			bad += !th || created != !val[i] || th->key != key[i] || (!created && (uint32_t)th->tid != val[i]);
			if (th)
				th->tid = (int32_t)(val[i] = s);
			n += created;
			break;
		}
		case 1:
			tr_tab_del(&t.thr, key[i]);
			n -= !!val[i];
			val[i] = 0;
			break;
		default: {
			const struct ithread *th = tr_tab_find(&t.thr, key[i]);
			bad += val[i] ? !th || (uint32_t)th->tid != val[i] : th != NULL;
			found += th != NULL;
		}
		}
	}
	ok(!bad && t.thr.n == n && found > STEPS / 10,
	   "a table's lookups through its hints: %zu wrong of %d steps, %zu records (%zu), %zu found",
	   bad, STEPS, t.thr.n, n, found);
	ok(tr_tables_copy(&cp, &t) == 0 && tr_tables_set(&cp, &t) == 0, "a copy, then set again");
	for (size_t i = 0; i < NKEY; i++) {
		const struct ithread *th = tr_tab_find(&cp.thr, key[i]);
		bad += val[i] ? !th || (uint32_t)th->tid != val[i] : th != NULL;
	}
	ok(!bad && cp.thr.n == n && cp.thr.rec != t.thr.rec, "... holds the same records, in its own buffers");
	tr_tables_release(&t);
	tr_tables_release(&cp);
}

int main(void)
{
	char dir[600], err[256];
	struct model m = { 0 };
	ok(mkdtemp(root) != NULL, "a directory");
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	ok(write_trace(dir) == 0, "a kernel trace with LTTng's names");
	tr_tables_init(&m.t);
	const char *p[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));
	struct trawl_sink s = { &m_ops, &m };
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	ok(r && trawl_pipe_run(r, &s, 1, &ro) == 0, "the model read the trace (%s)", r ? "" : err);
	trawl_reader_free(r);

	const struct ithread *a = tr_ks_thread(&m.t, 100);
	is_str(tr_state_str(&m.str, m.comm_at_1100), "a",
	       "the state dump's name leaves the scheduler's: a (100) is still \"a\"");
	is_int(m.names_at_1100, 0, "... and had one name so far");
	is_str(comm(&m, a), "some-very-long-",
	       "after its exec, a (100) is its program, in the kernel's 15 bytes of comm");
	is_int(a ? a->names : 99, 1, "... its second name (names 1)");
	is_int(a ? a->pid : -2, 100, "... of process 100");
	const struct ithread *w = tr_ks_thread(&m.t, 150);
	is_str(comm(&m, w), "w", "a thread the scheduler never named takes the state dump's name");
	is_int(w ? w->pid : -2, 100, "... and its process (100)");
	const struct ithread *k = tr_ks_thread(&m.t, 501);
	is_int(k ? k->pid : -2, 77, "a fork's child is of the fork's child_pid (77), its parent unknown");
	is_str(comm(&m, k), "kid", "... named as the fork says");
	is_int(tr_ks_cpu_tid(&m.t, 0), 0, "CPU 0 runs its idle thread at the end");
	const struct icpu *c0 = tr_ks_cpu(&m.t, 0), *c1 = tr_ks_cpu(&m.t, 1);
	is_str(c0 ? tr_state_str(&m.str, c0->idle) : "(none)", "swapper/0",
	       "CPU 0's idle thread is swapper/0");
	is_int(tr_ks_cpu_tid(&m.t, 1), 200, "CPU 1 runs b (200)");
	is_str(c1 ? tr_state_str(&m.str, c1->idle) : "(none)", "swapper/1",
	       "CPU 1's idle thread is swapper/1, its own");
	ok(tr_ks_cpu(&m.t, 2) == NULL, "no CPU 2");
	ok(tr_ks_thread(&m.t, 0) == NULL, "the idle thread is the CPUs', no thread record");
	is_int(m.t.names, 5, "five names given in all (a, w, kid, the exec's, b)");
	is_int(m.t.thr.n, 4, "four threads (100, 150, 501, 200)");
	is_int(m.t.pids, 3, "three processes given (100's, 150's, 501's; the exec keeps 100's)");

	unseen();
	modes();
	tables();

	tr_tables_release(&m.t);
	tr_kin_free(&m.kin);
	tr_state_strtab_release(&m.str);
	if (!getenv("KEEP"))
		tap_rm_tree(root);
	return done_testing();
}
