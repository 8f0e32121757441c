/* SPDX-License-Identifier: MIT */
/*
 * lib/view's scheduling rows (sched.c), read from the kernel model
 * (lib/kstate) after each change it applied. Around exec: a thread that
 * runs exec is its new name from then on, on its CPU row: the CPU's
 * interval closes at the exec under the old name ("work.sh 501") and goes
 * on under the new one ("curl 501"); an exec by a thread on no CPU, or to
 * the same name, changes no interval. Thread rows: a thread switched out
 * with prev_state 0x100 (the kernel's "preempted") is runnable, with 1
 * blocked until its wake-up (the first of sched_waking and sched_wakeup);
 * a system call's time is shown under its name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "kstate/kstate.h"
#include "view/view-internal.h"

struct ev {
	enum tr_vrow_kind kind;
	int64_t id, s, e;
	char label[32];
};
static struct ev got[64];
static int ngot;
static char names[32][32];
static int nnames = 1;

static int emit(void *arg, uint32_t host, enum tr_vrow_kind kind, int64_t id, int64_t s, int64_t e,
		uint32_t v)
{
	(void)arg;
	if (host != 3 || ngot >= 64)
		return -EINVAL;
	got[ngot] = (struct ev){ kind, id, s, e, "" };
	static const char *const st[] = { "?", "running", "runnable", "blocked", "syscall" };
	if (kind == TR_VROW_CPU)
		snprintf(got[ngot].label, sizeof(got[ngot].label), "%s", v < 32 ? names[v] : "?");
	else if ((v & 7) == TR_VST_SYSCALL)
		snprintf(got[ngot].label, sizeof(got[ngot].label), "%s", v >> 3 < 32 ? names[v >> 3] : "?");
	else
		snprintf(got[ngot].label, sizeof(got[ngot].label), "%s", st[v & 7]);
	ngot++;
	return 0;
}

static uint32_t name(void *arg, const char *s)
{
	(void)arg;
	for (int i = 1; i < nnames; i++)
		if (!strcmp(names[i], s))
			return (uint32_t)i;
	if (nnames == 32)
		return 0;
	snprintf(names[nnames], sizeof(names[0]), "%s", s);
	return (uint32_t)nnames++;
}

/* the CPU intervals emitted, "[s, e) label; ..." */
static const char *cpu_rows(char *b, size_t n)
{
	size_t o = 0;
	b[0] = 0;
	for (int i = 0; i < ngot && o < n; i++)
		if (got[i].kind == TR_VROW_CPU)
			o += (size_t)snprintf(b + o, n - o, "[%lld, %lld) %s; ", (long long)got[i].s,
					      (long long)got[i].e, got[i].label);
	return b;
}

/* the thread intervals of tid emitted, "[s, e) state; ..." */
static const char *thread_rows(int64_t tid, char *b, size_t n)
{
	size_t o = 0;
	b[0] = 0;
	for (int i = 0; i < ngot && o < n; i++)
		if (got[i].kind == TR_VROW_THREAD && got[i].id == tid)
			o += (size_t)snprintf(b + o, n - o, "[%lld, %lld) %s; ", (long long)got[i].s,
					      (long long)got[i].e, got[i].label);
	return b;
}

static struct tables m;
static struct strtab str;
static struct tr_vsched *s;
static const uint32_t H = 3;

static uint32_t id(const char *t)
{
	return tr_state_intern(&str, t, strlen(t));
}

/* c into the model, then into the rows */
static int feed(struct chg c)
{
	int rc = tr_state_apply(&m, &c, 0);
	return rc ? rc : tr_vsched_change(s, H, &m, &str, &c);
}

static int sw(int64_t ts, int32_t prev, int64_t state, int32_t next, const char *next_comm)
{
	return feed((struct chg){ .ts = ts, .kind = TRAWL_STATE_SWITCH, .cpu = 1, .tid = prev,
				  .tid2 = next, .a = state, .str = id(next_comm) });
}

static int exec_(int64_t ts, int32_t tid, const char *comm)
{
	return feed((struct chg){ .ts = ts, .kind = TRAWL_STATE_EXEC, .cpu = 1, .tid = tid,
				  .tid2 = -1, .a = tid, .str2 = id(comm) });
}

int main(void)
{
	struct tr_vsched_ops ops = { emit, name, NULL };
	char b[512];

	s = tr_vsched_new(&ops);
	tr_tables_init(&m);
	ok(s != NULL, "tr_vsched_new");
	/* cpu 1: 501 (work.sh) on at 10, exec curl at 20, off at 30 (asleep);
	 * 502 execs at 35 while on no CPU; 501 back at 40 as curl, execs
	 * curl again at 45 (same name), off at 50 */
	sw(10, 0, 0, 501, "work.sh");
	is_int(exec_(20, 501, "curl"), 0, "exec on a CPU");
	sw(30, 501, 1, 0, "swapper/1");
	is_str(cpu_rows(b, sizeof(b)), "[10, 20) work.sh 501; [20, 30) curl 501; ",
	       "the CPU's time before the exec is work.sh's, after it curl's");
	ngot = 0;
	is_int(exec_(35, 502, "curl"), 0, "exec of a thread on no CPU");
	is_int(ngot, 0, "... emits nothing");
	sw(40, 0, 0, 501, "curl");
	exec_(45, 501, "curl");
	sw(50, 501, 1, 0, "swapper/1");
	is_str(cpu_rows(b, sizeof(b)), "[40, 50) curl 501; ",
	       "an exec to the same name: one interval");

	/* thread 600: on at 100, read() 110..120, preempted (0x100) at 130,
	 * on at 140, off asleep (1) at 150, sched_waking at 160 and
	 * sched_wakeup at 165 (one wake-up), on at 170, closed at 180 */
	ngot = 0;
	sw(100, 0, 0, 600, "app");
	feed((struct chg){ .ts = 110, .kind = TRAWL_STATE_SYSCALL_ENTRY, .cpu = 1, .tid = 600,
			   .tid2 = -1, .a = 3, .str = id("read") });
	feed((struct chg){ .ts = 120, .kind = TRAWL_STATE_SYSCALL_EXIT, .cpu = 1, .tid = 600,
			   .tid2 = -1, .b = 1, .str = id("read") });
	sw(130, 600, 0x100, 0, "swapper/1");
	sw(140, 0, 0, 600, "app");
	sw(150, 600, 1, 0, "swapper/1");
	feed((struct chg){ .ts = 160, .kind = TRAWL_STATE_WAKEUP, .cpu = 0, .tid = 0, .tid2 = 600,
			   .a = 1 });
	feed((struct chg){ .ts = 165, .kind = TRAWL_STATE_WAKEUP, .cpu = 0, .tid = 0, .tid2 = 600,
			   .a = 1 });
	sw(170, 0, 0, 600, "app");
	is_int(tr_vsched_close(s, H, 180), 0, "close");
	is_str(thread_rows(600, b, sizeof(b)),
	       "[100, 110) running; [110, 120) read; [120, 130) running; [130, 140) runnable; "
	       "[140, 150) running; [150, 160) blocked; [160, 170) runnable; [170, 180) running; ",
	       "thread states from the model: a syscall by name, preempted is runnable, "
	       "woken at the first wake-up");
	is_str(cpu_rows(b, sizeof(b)), "[100, 130) app 600; [140, 150) app 600; [170, 180) app 600; ",
	       "the CPU's intervals of 600");
	tr_vsched_free(s);
	tr_tables_release(&m);
	tr_state_strtab_release(&str);
	return done_testing();
}
