/* SPDX-License-Identifier: MIT */
/*
 * lib/view/sched.c - what ran on each CPU and each thread's state, from
 * sched_switch, sched_waking/sched_wakeup, sched_process_exec (a CPU's
 * interval goes on under the thread's new name) and syscall entries and
 * exits.
 *
 * A stand-in for the state system (lib/state/), which is being written:
 * once it gives per-CPU and per-thread intervals, the view reads those and
 * this file goes (docs/view.md). It only knows what the events say: a
 * thread first seen switched in was runnable (or unknown) before; a thread
 * switched out with prev_state 0 (TASK_RUNNING) is runnable, otherwise
 * blocked until woken; between a syscall's entry and exit it runs "in the
 * syscall" (blocked inside one shows as blocked).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view-internal.h"

struct thread {
	uint64_t key;		/* host << 32 | tid + 1 (0: free slot) */
	int64_t since;		/* start of the open interval; INT64_MIN: none */
	uint32_t state;		/* TR_VST_*, 0: unknown */
	uint32_t sys;		/* string id of the syscall it is in (0: none) */
	bool in_sys;
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
	uint32_t v = t->state == TR_VST_SYSCALL ? TR_VST_SYSCALL | t->sys << 3 : t->state;

	if (t->state && t->since != INT64_MIN && ts >= t->since)
		rc = s->ops.emit(s->ops.arg, host, TR_VROW_THREAD, tid_of(t), t->since, ts, v);
	t->state = state;
	t->since = ts;
	return rc;
}

int tr_vsched_switch(struct tr_vsched *s, uint32_t host, uint32_t c, int64_t ts,
		     int64_t prev_tid, int64_t prev_state, int64_t next_tid, const char *next_comm)
{
	struct cpu *cp = cpu(s, host, c);
	struct thread *t;
	int rc;

	if (!cp)
		return -ENOMEM;
	if (cp->tid > 0 && cp->since != INT64_MIN && ts >= cp->since &&
	    (rc = s->ops.emit(s->ops.arg, host, TR_VROW_CPU, c, cp->since, ts, cp->label)))
		return rc;
	if (prev_tid > 0) {
		if (!(t = thread(s, host, prev_tid)))
			return -ENOMEM;
		if ((rc = set_state(s, host, t, ts, prev_state ? TR_VST_BLOCKED : TR_VST_RUNNABLE)))
			return rc;
	}
	cp->tid = next_tid;
	cp->since = ts;
	if (next_tid > 0) {
		char label[64];

		snprintf(label, sizeof(label), "%s %lld", next_comm ? next_comm : "?",
			 (long long)next_tid);
		cp->label = s->ops.name(s->ops.arg, label);
		if (!(t = thread(s, host, next_tid)))
			return -ENOMEM;
		if ((rc = set_state(s, host, t, ts, t->in_sys ? TR_VST_SYSCALL : TR_VST_RUNNING)))
			return rc;
	}
	return 0;
}

/*
 * tid ran exec: from ts it is its new program. When it is on a CPU (c, or
 * any of its host's), that CPU's interval closes at ts under its old name
 * and goes on under the new one, so the exec's time is the new name's.
 */
int tr_vsched_exec(struct tr_vsched *s, uint32_t host, uint32_t c, int64_t ts, int64_t tid,
		   const char *comm)
{
	struct cpu *cp = NULL;
	int rc;

	if (tid <= 0 || !comm)
		return 0;
	for (size_t i = 0; i < s->ncpus; i++)
		if (s->cpus[i].host == host && s->cpus[i].tid == tid &&
		    (!cp || s->cpus[i].cpu == c))
			cp = &s->cpus[i];
	if (!cp)
		return 0;
	char label[64];

	snprintf(label, sizeof(label), "%s %lld", comm, (long long)tid);
	uint32_t l = s->ops.name(s->ops.arg, label);

	if (l == cp->label)
		return 0;
	if (cp->since != INT64_MIN && ts >= cp->since &&
	    (rc = s->ops.emit(s->ops.arg, host, TR_VROW_CPU, cp->cpu, cp->since, ts, cp->label)))
		return rc;
	cp->since = ts;
	cp->label = l;
	return 0;
}

int tr_vsched_wakeup(struct tr_vsched *s, uint32_t host, int64_t ts, int64_t tid)
{
	struct thread *t;

	if (tid <= 0)
		return 0;
	if (!(t = thread(s, host, tid)))
		return -ENOMEM;
	if (t->state == TR_VST_BLOCKED || !t->state)
		return set_state(s, host, t, ts, TR_VST_RUNNABLE);
	return 0;
}

int tr_vsched_syscall(struct tr_vsched *s, uint32_t host, uint32_t c, int64_t ts,
		      const char *name, bool entry)
{
	struct cpu *cp = cpu(s, host, c);
	struct thread *t;

	if (!cp)
		return -ENOMEM;
	if (cp->tid <= 0)
		return 0;	/* whose syscall is unknown before a switch */
	if (!(t = thread(s, host, cp->tid)))
		return -ENOMEM;
	if (entry) {
		t->in_sys = true;
		t->sys = s->ops.name(s->ops.arg, name);
		return set_state(s, host, t, ts, TR_VST_SYSCALL);
	}
	if (!t->in_sys)
		return 0;
	t->in_sys = false;
	return set_state(s, host, t, ts, TR_VST_RUNNING);
}

int tr_vsched_close(struct tr_vsched *s, uint32_t host, int64_t ts)
{
	int rc;

	for (size_t i = 0; i < s->ncpus; i++) {
		struct cpu *cp = &s->cpus[i];

		if (cp->host != host)
			continue;
		if (cp->tid > 0 && cp->since != INT64_MIN && ts >= cp->since &&
		    (rc = s->ops.emit(s->ops.arg, cp->host, TR_VROW_CPU, cp->cpu, cp->since, ts,
				      cp->label)))
			return rc;
		cp->since = INT64_MIN;
	}
	for (size_t i = 0; i < s->cap; i++)
		if (s->t[i].key && (uint32_t)((s->t[i].key - 1) >> 32) == host &&
		    (rc = set_state(s, host, &s->t[i], ts, 0)))
			return rc;
	return 0;
}

int64_t tr_vsched_current(const struct tr_vsched *s, uint32_t host, uint32_t c)
{
	for (size_t i = 0; i < s->ncpus; i++)
		if (s->cpus[i].host == host && s->cpus[i].cpu == c)
			return s->cpus[i].tid;
	return -1;
}
