/* SPDX-License-Identifier: MIT */
/*
 * lib/view/sched.c - the view's CPU rows (what ran on each CPU) and
 * thread rows (each thread's state), as intervals, from the kernel model
 * (lib/kstate): after each change the model took (a switch, a wake-up,
 * an exec, a system call's entry or exit), the intervals it ended are
 * emitted and the next ones opened.
 *
 * The model says what a CPU runs, a thread's name (after exec: its
 * program's), its state (a thread switched out runnable, prev_state & 0xff
 * 0, is runnable; otherwise blocked until woken, at the first of
 * sched_waking and sched_wakeup) and its pending system call; this file
 * keeps beside it only the open interval of each CPU and thread: since
 * when, and what it shows (a thread running in a system call shows "in
 * the syscall"; blocked inside one, blocked).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kstate/kstate.h"
#include "view-internal.h"

struct thread {
	uint64_t key;		/* host << 32 | tid + 1 (0: free slot) */
	int64_t since;		/* start of the open interval; INT64_MIN: none */
	uint32_t state;		/* what it shows: TR_VST_* | syscall name << 3, 0: unknown */
};

struct cpu {
	uint32_t host, cpu;
	int64_t tid;		/* -1: unknown, 0: idle */
	int64_t since;
	uint32_t label;
};

struct tr_vsched {
	struct tr_vsched_ops ops;
	struct thread *t;	/* open addressing, power of two */
	size_t cap, n;
	struct cpu *cpus;
	size_t ncpus, cpucap;
};

struct tr_vsched *tr_vsched_new(const struct tr_vsched_ops *ops)
{
	struct tr_vsched *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ops = *ops;
	s->cap = 1024;
	s->t = calloc(s->cap, sizeof(*s->t));
	if (!s->t) {
		free(s);
		return NULL;
	}
	return s;
}

void tr_vsched_free(struct tr_vsched *s)
{
	if (!s)
		return;
	free(s->t);
	free(s->cpus);
	free(s);
}

static uint64_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static struct thread *thread(struct tr_vsched *s, uint32_t host, int64_t tid)
{
	uint64_t key = ((uint64_t)host << 32 | (uint32_t)tid) + 1;
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap * 2;
		struct thread *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t j = 0; j < s->cap; j++) {
			if (!s->t[j].key)
				continue;
			for (i = hash(s->t[j].key) & (cap - 1); t[i].key; i = (i + 1) & (cap - 1))
				;
			t[i] = s->t[j];
		}
		free(s->t);
		s->t = t;
		s->cap = cap;
	}
	for (i = hash(key) & (s->cap - 1); s->t[i].key; i = (i + 1) & (s->cap - 1))
		if (s->t[i].key == key)
			return &s->t[i];
	s->t[i].key = key;
	s->t[i].since = INT64_MIN;
	s->n++;
	return &s->t[i];
}

static struct cpu *cpu(struct tr_vsched *s, uint32_t host, uint32_t c)
{
	for (size_t i = 0; i < s->ncpus; i++)
		if (s->cpus[i].host == host && s->cpus[i].cpu == c)
			return &s->cpus[i];
	if (tr_grow(&s->cpus, &s->cpucap, s->ncpus + 1, sizeof(*s->cpus)))
		return NULL;
	s->cpus[s->ncpus] = (struct cpu){ host, c, -1, INT64_MIN, 0 };
	return &s->cpus[s->ncpus++];
}

static uint32_t tid_of(const struct thread *t)
{
	return (uint32_t)(t->key - 1);
}

/* Ends t's open interval at ts and opens state (0: none). */
static int set_state(struct tr_vsched *s, uint32_t host, struct thread *t, int64_t ts,
		     uint32_t state)
{
	int rc = 0;

	if (t->state && t->since != INT64_MIN && ts >= t->since)
		rc = s->ops.emit(s->ops.arg, host, TR_VROW_THREAD, tid_of(t), t->since, ts, t->state);
	t->state = state;
	t->since = ts;
	return rc;
}

/* What thread tid of the model shows (0: unknown). */
static uint32_t shown(struct tr_vsched *s, const struct tables *m, const struct strtab *st,
		      int64_t tid)
{
	const struct ithread *th = tr_ks_thread(m, tid);

	switch (th ? th->status : TRAWL_STATE_THREAD_UNKNOWN) {
	case TRAWL_STATE_THREAD_RUNNING:
		if (!th->syscall)
			return TR_VST_RUNNING;
		return TR_VST_SYSCALL | s->ops.name(s->ops.arg, tr_state_str(st, th->syscall)) << 3;
	case TRAWL_STATE_THREAD_PREEMPTED:
	case TRAWL_STATE_THREAD_WOKEN:
		return TR_VST_RUNNABLE;
	case TRAWL_STATE_THREAD_BLOCKED:
		return TR_VST_BLOCKED;
	default:
		return 0;
	}
}

/* CPU cp's open interval ends at ts (when it ran a thread). */
static int cpu_end(struct tr_vsched *s, struct cpu *cp, int64_t ts)
{
	if (cp->tid > 0 && cp->since != INT64_MIN && ts >= cp->since)
		return s->ops.emit(s->ops.arg, cp->host, TR_VROW_CPU, cp->cpu, cp->since, ts, cp->label);
	return 0;
}

/* "comm tid", the label of a CPU's interval of thread tid. */
static uint32_t cpu_label(struct tr_vsched *s, const struct tables *m, const struct strtab *st,
			  int64_t tid, uint32_t cpu)
{
	uint32_t id = tr_ks_comm(m, tid, cpu);
	char label[64];

	snprintf(label, sizeof(label), "%s %lld", id ? tr_state_str(st, id) : "?", (long long)tid);
	return s->ops.name(s->ops.arg, label);
}

static int on_switch(struct tr_vsched *s, uint32_t host, const struct tables *m,
		     const struct strtab *st, const struct chg *c)
{
	struct cpu *cp = cpu(s, host, (uint32_t)c->cpu);
	struct thread *t;
	int rc;

	if (!cp)
		return -ENOMEM;
	if ((rc = cpu_end(s, cp, c->ts)))
		return rc;
	if (c->tid > 0) {
		if (!(t = thread(s, host, c->tid)))
			return -ENOMEM;
		if ((rc = set_state(s, host, t, c->ts, shown(s, m, st, c->tid))))
			return rc;
	}
	cp->tid = tr_ks_cpu_tid(m, (uint32_t)c->cpu);
	cp->since = c->ts;
	if (cp->tid > 0) {
		cp->label = cpu_label(s, m, st, cp->tid, (uint32_t)c->cpu);
		if (!(t = thread(s, host, cp->tid)))
			return -ENOMEM;
		if ((rc = set_state(s, host, t, c->ts, shown(s, m, st, cp->tid))))
			return rc;
	}
	return 0;
}

/*
 * tid ran exec: from ts it is its new program. When it is on a CPU (the
 * exec's, else the one the model last had it on), that CPU's interval
 * closes at ts under its old name and goes on under the new one, so the
 * exec's time is the new name's.
 */
static int on_exec(struct tr_vsched *s, uint32_t host, const struct tables *m,
		   const struct strtab *st, const struct chg *c)
{
	const struct ithread *th = tr_ks_thread(m, c->tid);
	int32_t on = c->cpu;
	struct cpu *cp;
	int rc;

	if (c->tid <= 0 || !c->str2 || !th)
		return 0;
	if (tr_ks_cpu_tid(m, (uint32_t)on) != c->tid)
		on = th->cpu;
	if (on < 0 || tr_ks_cpu_tid(m, (uint32_t)on) != c->tid)
		return 0;		/* on no CPU */
	if (!(cp = cpu(s, host, (uint32_t)on)))
		return -ENOMEM;
	if (cp->tid != c->tid)
		return 0;
	uint32_t l = cpu_label(s, m, st, c->tid, (uint32_t)on);

	if (l == cp->label)
		return 0;
	if (cp->since != INT64_MIN && c->ts >= cp->since &&
	    (rc = s->ops.emit(s->ops.arg, host, TR_VROW_CPU, cp->cpu, cp->since, c->ts, cp->label)))
		return rc;
	cp->since = c->ts;
	cp->label = l;
	return 0;
}

int tr_vsched_change(struct tr_vsched *s, uint32_t host, const struct tables *m,
		     const struct strtab *st, const struct chg *c)
{
	struct thread *t;
	uint32_t now;

	switch (c->kind) {
	case TRAWL_STATE_SWITCH:
		return on_switch(s, host, m, st, c);
	case TRAWL_STATE_EXEC:
		return on_exec(s, host, m, st, c);
	case TRAWL_STATE_WAKEUP:
		if (c->tid2 <= 0)
			return 0;
		if (!(t = thread(s, host, c->tid2)))
			return -ENOMEM;
		/* a thread blocked (or not seen yet) is runnable from its
		 * wake-up; a running or runnable one stays so */
		if ((t->state == TR_VST_BLOCKED || !t->state) &&
		    (now = shown(s, m, st, c->tid2)) == TR_VST_RUNNABLE)
			return set_state(s, host, t, c->ts, now);
		return 0;
	case TRAWL_STATE_SYSCALL_ENTRY:
	case TRAWL_STATE_SYSCALL_EXIT:
		if (c->tid <= 0)
			return 0;	/* whose call is unknown */
		if (!(t = thread(s, host, c->tid)))
			return -ENOMEM;
		now = shown(s, m, st, c->tid);
		/* an entry opens the call's interval; an exit ends it */
		if (c->kind == TRAWL_STATE_SYSCALL_ENTRY ||
		    ((t->state & 7) == TR_VST_SYSCALL && now != t->state))
			return set_state(s, host, t, c->ts, now);
		return 0;
	default:
		return 0;
	}
}

int tr_vsched_close(struct tr_vsched *s, uint32_t host, int64_t ts)
{
	int rc;

	for (size_t i = 0; i < s->ncpus; i++) {
		struct cpu *cp = &s->cpus[i];

		if (cp->host != host)
			continue;
		if ((rc = cpu_end(s, cp, ts)))
			return rc;
		cp->since = INT64_MIN;
	}
	for (size_t i = 0; i < s->cap; i++)
		if (s->t[i].key && (uint32_t)((s->t[i].key - 1) >> 32) == host &&
		    (rc = set_state(s, host, &s->t[i], ts, 0)))
			return rc;
	return 0;
}
