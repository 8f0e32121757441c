/* SPDX-License-Identifier: MIT */
/*
 * lib/kstate/apply.c - the one function that moves a host's kernel state
 * forward by a change (kstate.h): the state system's live state, its
 * window's base, views and checkpoints, and every analysis's model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kstate/kstate.h"

/* --------------------------------------------------------- applying */

/* CPU cpu when t has none of that number yet (made, and the ones below it) */
static __attribute__((noinline)) struct icpu *cpu_add(struct tables *t, int32_t cpu)
{
	if (cpu < 0 || cpu > 65535)
		return NULL;
	size_t n = (size_t)cpu + 1;
	struct icpu *c = realloc(t->cpus, n * sizeof(*c));
	if (!c)
		return NULL;
	for (size_t i = t->ncpus; i < n; i++)
		c[i] = (struct icpu){ .tid = -1, .since = INT64_MIN, .on_since = INT64_MIN,
				      .acct = INT64_MIN };
	t->cpus = c;
	t->ncpus = n;
	t->cpus[cpu].seen = true;
	return &t->cpus[cpu];
}

static inline struct icpu *cpu_get(struct tables *t, int32_t cpu)
{
	if ((uint32_t)cpu >= t->ncpus)
		return cpu_add(t, cpu);
	t->cpus[cpu].seen = true;
	return &t->cpus[cpu];
}

/* Thread tid, which t has not, made by change c; NULL: ENOMEM. */
static __attribute__((noinline)) struct ithread *thr_add(struct tables *t, int64_t tid,
							 const struct chg *c)
{
	struct ithread *th = tr_tab_add(&t->thr, (uint64_t)tid);

	if (th) {
		th->tid = (int32_t)tid;
		th->pid = th->ppid = th->cpu = -1;
		th->since = th->created = INT64_MIN;
		th->sc_fd = -1;
		th->origin = *c;
	}
	return th;
}

static inline struct ithread *thr_get(struct tables *t, int64_t tid, const struct chg *c)
{
	size_t i = tr_tab_slot(&t->thr, (uint64_t)tid);

	if (i == t->thr.cap)
		return thr_add(t, tid, c);
	t->thr.hint[tr_tab_hint((uint64_t)tid)] = (uint32_t)i;
	return (struct ithread *)(t->thr.rec + i * t->thr.rsz);
}

/* fd of pid, which t has not, made by change c; NULL: ENOMEM. */
static __attribute__((noinline)) struct ifd *fd_add(struct tables *t, int64_t pid, int64_t fd,
						    const struct chg *c)
{
	struct ifd *f = tr_tab_add(&t->fd, tr_fd_key(pid, fd));

	if (f) {
		f->pid = (int32_t)pid;
		f->fd = (int32_t)fd;
		f->opened = INT64_MIN;
		f->origin = *c;
	}
	return f;
}

static inline struct ifd *fd_get(struct tables *t, int64_t pid, int64_t fd, const struct chg *c)
{
	uint64_t key = tr_fd_key(pid, fd);
	size_t i = tr_tab_slot(&t->fd, key);

	if (i == t->fd.cap)
		return fd_add(t, pid, fd, c);
	t->fd.hint[tr_tab_hint(key)] = (uint32_t)i;
	return (struct ifd *)(t->fd.rec + i * t->fd.rsz);
}

static void fds_drop(struct tables *t, int32_t pid)
{
	for (size_t i = 0; i < t->fd.cap;) {
		struct ifd *f = (struct ifd *)(t->fd.rec + i * t->fd.rsz);
		if (t->fd.used[i] && f->pid == pid)
			tr_tab_del(&t->fd, f->key);	/* a record moved into i: look again */
		else
			i++;
	}
}

static int fds_copy(struct tables *t, int32_t from, int32_t to, const struct chg *c)
{
	size_t n = 0, cap = 0;
	struct ifd *tmp = NULL;

	/* (aside first: the copies' insertions may move the table) */
	for (size_t i = 0; i < t->fd.cap; i++) {
		struct ifd *f = (struct ifd *)(t->fd.rec + i * t->fd.rsz);
		if (!t->fd.used[i] || f->pid != from)
			continue;
		if (n == cap) {
			struct ifd *m = realloc(tmp, (cap = cap ? cap * 2 : 16) * sizeof(*m));
			if (!m) {
				free(tmp);
				return -ENOMEM;
			}
			tmp = m;
		}
		tmp[n++] = *f;
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct ifd *f = fd_get(t, to, tmp[i].fd, c);
		if (!f) {
			rc = -ENOMEM;
			break;
		}
		f->path = tmp[i].path;
		f->opened = tmp[i].opened;
	}
	free(tmp);
	return rc;
}

/* th is named id from now on: a change of a name it had counts in its
 * names, every change in the host's. */
static inline void name(struct tables *t, struct ithread *th, uint32_t id)
{
	if (th->comm == id)
		return;
	th->names += th->comm != 0;
	th->comm = id;
	t->names++;
}

/* th is of process pid from now on: a change counts in the host's pids. */
static inline void pid_set(struct tables *t, struct ithread *th, int32_t pid)
{
	t->pids += th->pid != pid;
	th->pid = pid;
}

/* The current mode of a CPU running thread tid (after a switch or an IRQ). */
static uint8_t run_mode(struct tables *t, int32_t tid)
{
	if (tid == 0)
		return TRAWL_STATE_CPU_IDLE;
	struct ithread *th = tr_tab_find(&t->thr, (uint64_t)tid);
	return th && th->syscall ? TRAWL_STATE_CPU_SYSCALL : TRAWL_STATE_CPU_USER;
}

/* Drops what can no longer be answered: block requests older than the
 * window, threads that exited without their last switch. Driven by the
 * changes' times, so that every copy of a state drops the same. */
static void sweep(struct tables *t, int64_t before)
{
	for (size_t i = 0; i < t->rq.cap;) {
		struct irqst *q = (struct irqst *)(t->rq.rec + i * t->rq.rsz);
		int64_t at = q->issued != INT64_MIN ? q->issued : q->inserted;
		if (t->rq.used[i] && at < before) {
			struct ithread *th = tr_tab_find(&t->thr, (uint64_t)q->tid);
			if (th && th->io_inflight)
				th->io_inflight--;
			t->gc_requests++;
			tr_tab_del(&t->rq, q->key);
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < t->thr.cap;) {
		struct ithread *th = (struct ithread *)(t->thr.rec + i * t->thr.rsz);
		if (t->thr.used[i] && th->exited && th->since < before)
			tr_tab_del(&t->thr, th->key);
		else
			i++;
	}
}

_Static_assert(TRAWL_STATE_CPU_SOFTIRQ + 1 == TR_KS_MODES, "a total per CPU mode");

/* The CPU's time in its current mode up to ts, into its mode's total
 * (before a change of mode). */
static inline void account(struct icpu *cpu, int64_t ts)
{
	int64_t from = cpu->acct > cpu->since ? cpu->acct : cpu->since;
	if (from != INT64_MIN && ts > from && cpu->mode < TR_KS_MODES)
		cpu->mode_ns[cpu->mode] += ts - from;
	if (ts > cpu->acct)
		cpu->acct = ts;
}

/*
 * Thread tid is seen on cpu in task context at ts while the model has the
 * CPU run another (known) thread: the kernel's switch onto it is not in
 * the trace (some kernels record no event of a CPU's idle thread, its
 * switches away included: docs/kernel.md). Counted; the CPU is tid's
 * from tr_ks_on_since()'s estimate.
 */
static __attribute__((noinline)) void unseen(struct tables *t, struct icpu *cpu, uint32_t n,
					      int32_t tid, int64_t ts)
{
	int64_t in = tr_ks_on_since(t, n, tid);
	t->unseen_switches++;
	/* the CPU was not idle from the estimate on: that time is the
	 * thread's (user: it made no call the trace has) */
	int64_t from = in > cpu->since ? in : cpu->since;
	bool idle = cpu->mode == TRAWL_STATE_CPU_IDLE && !cpu->depth;
	account(cpu, ts);
	if (idle && from != INT64_MIN && ts > from) {
		int64_t d = ts - from;
		if (d > cpu->mode_ns[TRAWL_STATE_CPU_IDLE])
			d = cpu->mode_ns[TRAWL_STATE_CPU_IDLE];
		cpu->mode_ns[TRAWL_STATE_CPU_IDLE] -= d;
		cpu->mode_ns[TRAWL_STATE_CPU_USER] += d;
	}
	cpu->tid = tid;
	cpu->on_since = in;
}

/* unseen() when it is so (inline: every system call and switch asks) */
static inline void unseen_switch(struct tables *t, struct icpu *cpu, uint32_t n, int32_t tid,
				 int64_t ts)
{
	if (cpu->tid >= 0 && cpu->tid != tid && tid >= 0)
		unseen(t, cpu, n, tid, ts);
}

int tr_state_apply(struct tables *t, const struct chg *c, int64_t window)
{
	struct ithread *th, *o;
	struct icpu *cpu;
	struct ifd *f;
	struct irqst *q;
	int64_t ts = c->ts;

	t->ts = ts;
	if (window > 0 && ts >= t->next_sweep) {
		if (t->next_sweep != INT64_MIN)
			sweep(t, ts - window);
		t->next_sweep = ts + window;
	}
	switch (c->kind) {
	case TRAWL_STATE_SWITCH:
		if ((cpu = cpu_get(t, c->cpu))) {
			if (!cpu->depth)
				unseen_switch(t, cpu, (uint32_t)c->cpu, c->tid, ts);
			cpu->tid = c->tid2;
			cpu->on_since = ts;
			cpu->depth = 0;
		}
		if (c->tid > 0 && (th = thr_get(t, c->tid, c))) {
			if (th->exited) {
				tr_tab_del(&t->thr, (uint64_t)c->tid);
			} else {
				/* runnable: TASK_RUNNING (0) or "preempted" (the
				 * kernel's TASK_REPORT_MAX, 0x100; 0x80 is idle) */
				bool runnable = (c->a & 0xff) == 0;
				th->status = runnable ? TRAWL_STATE_THREAD_PREEMPTED
						      : TRAWL_STATE_THREAD_BLOCKED;
				th->since = ts;
				th->cpu = c->cpu;
				if (c->str2)
					name(t, th, c->str2);
			}
		}
		o = NULL;		/* the next thread, when one */
		if (c->tid2 > 0 && (o = th = thr_get(t, c->tid2, c))) {
			th->status = TRAWL_STATE_THREAD_RUNNING;
			th->since = ts;
			th->cpu = c->cpu;
			if (c->str)
				name(t, th, c->str);
		} else if (c->tid2 == 0 && cpu && c->str) {
			cpu->idle = c->str;	/* its idle thread (swapper/N) */
		}
		if (c->tid == 0 && cpu && c->str2)
			cpu->idle = c->str2;
		if (cpu) {
			account(cpu, ts);
			/* run_mode(t, c->tid2), without looking it up again */
			cpu->mode = c->tid2 == 0 ? TRAWL_STATE_CPU_IDLE
				  : o && o->syscall ? TRAWL_STATE_CPU_SYSCALL : TRAWL_STATE_CPU_USER;
			cpu->since = ts;
		}
		break;
	case TRAWL_STATE_WAKEUP:
		if (c->tid2 > 0 && (th = thr_get(t, c->tid2, c))) {
			/* woken since the first of sched_waking and
			 * sched_wakeup: a second one is the same wake-up */
			if (th->status != TRAWL_STATE_THREAD_RUNNING &&
			    th->status != TRAWL_STATE_THREAD_WOKEN) {
				th->status = TRAWL_STATE_THREAD_WOKEN;
				th->since = ts;
			}
			th->cpu = (int32_t)c->a;
			if (c->str)
				name(t, th, c->str);
		}
		break;
	case TRAWL_STATE_FORK:
		if (!(th = thr_get(t, c->tid2, c)))
			return -ENOMEM;
		pid_set(t, th, (int32_t)c->a);
		th->ppid = (int32_t)c->b;
		name(t, th, c->str);
		th->created = ts;
		th->status = TRAWL_STATE_THREAD_WOKEN;
		th->since = ts;
		th->origin = *c;
		/* (th may have moved: the parent's lookup after its creation) */
		if ((o = tr_tab_find(&t->thr, (uint64_t)c->tid)) && o != th) {
			if (o->cgroup)
				th->cgroup = o->cgroup;	/* the parent's cgroup */
			if (c->a == c->tid2)
				return fds_copy(t, o->pid >= 0 ? o->pid : o->tid, th->pid, c);
		}
		break;
	case TRAWL_STATE_EXEC:
		if (!(th = thr_get(t, c->tid, c)))
			return -ENOMEM;
		if (c->str2)
			name(t, th, c->str2);	/* the file's base name, as the kernel's comm */
		if (th->pid != c->a && th->pid >= 0) {
			/* taken for a thread (clone3), it is a process */
			int32_t old = th->pid;
			th->ppid = old;
			pid_set(t, th, (int32_t)c->a);
			if (fds_copy(t, old, th->pid, c))
				return -ENOMEM;
		}
		pid_set(t, th, (int32_t)c->a);
		break;
	case TRAWL_STATE_EXIT:
		if ((th = tr_tab_find(&t->thr, (uint64_t)c->tid))) {
			th->exited = true;
			if (c->a && th->pid >= 0)
				fds_drop(t, th->pid);
		}
		break;
	case TRAWL_STATE_SYSCALL_ENTRY:
		if (!(th = thr_get(t, c->tid, c)))
			return -ENOMEM;
		if (th->syscall)
			t->gc_syscalls++;	/* its exit was lost */
		th->syscall = c->str;
		th->syscall_since = ts;
		th->sc_fd = c->a;
		th->sc_arg = c->b;
		th->sc_path = c->str2;
		if ((cpu = cpu_get(t, c->cpu)) && !cpu->depth) {
			unseen_switch(t, cpu, (uint32_t)c->cpu, c->tid, ts);
			if (cpu->tid != c->tid)
				cpu->on_since = INT64_MIN;
			cpu->tid = c->tid;
			account(cpu, ts);
			cpu->mode = TRAWL_STATE_CPU_SYSCALL;
			cpu->since = ts;
		}
		th->status = TRAWL_STATE_THREAD_RUNNING;
		break;
	case TRAWL_STATE_SYSCALL_EXIT:
		if ((th = tr_tab_find(&t->thr, (uint64_t)c->tid))) {
			th->syscall = 0;
			th->sc_fd = -1;
			th->sc_path = 0;
		}
		if ((cpu = cpu_get(t, c->cpu)) && !cpu->depth) {
			unseen_switch(t, cpu, (uint32_t)c->cpu, c->tid, ts);
			if (cpu->tid != c->tid)
				cpu->on_since = INT64_MIN;
			cpu->tid = c->tid;
			account(cpu, ts);
			cpu->mode = TRAWL_STATE_CPU_USER;
			cpu->since = ts;
		}
		break;
	case TRAWL_STATE_IRQ_ENTRY:
	case TRAWL_STATE_SOFTIRQ_ENTRY:
		if (!(cpu = cpu_get(t, c->cpu)))
			return -ENOMEM;
		if (cpu->tid < 0)
			cpu->tid = c->tid;	/* the interrupted thread, from the context */
		account(cpu, ts);
		if (!cpu->depth++)
			cpu->saved_mode = cpu->mode;
		cpu->mode = c->kind == TRAWL_STATE_IRQ_ENTRY ? TRAWL_STATE_CPU_IRQ
							     : TRAWL_STATE_CPU_SOFTIRQ;
		cpu->irq = c->a;
		cpu->since = ts;
		break;
	case TRAWL_STATE_IRQ_EXIT:
	case TRAWL_STATE_SOFTIRQ_EXIT:
		if (!(cpu = cpu_get(t, c->cpu)))
			return -ENOMEM;
		account(cpu, ts);
		if (cpu->depth && --cpu->depth) {
			/* back into the softirq an IRQ interrupted */
			cpu->mode = TRAWL_STATE_CPU_SOFTIRQ;
		} else {
			cpu->mode = cpu->saved_mode ? cpu->saved_mode
				  : cpu->tid >= 0 ? run_mode(t, cpu->tid) : TRAWL_STATE_CPU_UNKNOWN;
		}
		cpu->since = ts;
		break;
	case TRAWL_STATE_BLOCK_INSERT:
	case TRAWL_STATE_BLOCK_ISSUE: {
		bool created;
		q = tr_tab_get(&t->rq, (uint64_t)c->a << 40 ^ (uint64_t)c->b, &created);
		if (!q)
			return -ENOMEM;
		if (created) {
			q->dev = (uint64_t)c->a;
			q->sector = (uint64_t)c->b;
			q->nr = (uint32_t)c->c;
			q->write = c->str2 != 0;
			q->tid = c->tid;
			q->inserted = q->issued = INT64_MIN;
			if (c->tid > 0 && (th = thr_get(t, c->tid, c)))
				th->io_inflight++;
		}
		if (c->kind == TRAWL_STATE_BLOCK_INSERT)
			q->inserted = ts;
		else
			q->issued = ts;
		break;
	}
	case TRAWL_STATE_BLOCK_COMPLETE: {
		uint64_t key = (uint64_t)c->a << 40 ^ (uint64_t)c->b;
		if ((q = tr_tab_find(&t->rq, key))) {
			if ((th = tr_tab_find(&t->thr, (uint64_t)q->tid)) && th->io_inflight)
				th->io_inflight--;
			tr_tab_del(&t->rq, key);
		}
		break;
	}
	case TRAWL_STATE_DUMP_PROCESS:
		if (!(th = thr_get(t, c->tid2, c)))
			return -ENOMEM;
		pid_set(t, th, (int32_t)c->a);
		th->ppid = (int32_t)c->b;
		/* a name the scheduler's events gave stays: the kernel's own
		 * comm, where the state dump's may be /proc's longer one
		 * ("kworker/u8:1-ex" of "kworker/u8:1") */
		if (c->str && !th->comm)
			name(t, th, c->str);
		if (c->str2)
			th->cgroup = c->str2;
		if (th->status == TRAWL_STATE_THREAD_UNKNOWN) {
			/* LTTng's enum: 2 WAIT_CPU, 5 WAIT, 6 RUN */
			th->status = c->c == 6 ? TRAWL_STATE_THREAD_RUNNING
				   : c->c == 2 ? TRAWL_STATE_THREAD_PREEMPTED
				   : c->c == 5 ? TRAWL_STATE_THREAD_BLOCKED : TRAWL_STATE_THREAD_UNKNOWN;
		}
		break;
	case TRAWL_STATE_DUMP_FD:
		if (!(f = fd_get(t, c->a, c->b, c)))
			return -ENOMEM;
		if (!f->path)
			f->path = c->str;
		break;
	case TRAWL_STATE_OPEN:
		tr_tab_del(&t->fd, tr_fd_key(c->a, c->b));
		if (!(f = fd_get(t, c->a, c->b, c)))
			return -ENOMEM;
		f->path = c->str;
		f->opened = ts;
		break;
	case TRAWL_STATE_CLOSE:
		tr_tab_del(&t->fd, tr_fd_key(c->a, c->b));
		break;
	case TRAWL_STATE_READ:
	case TRAWL_STATE_WRITE:
		if (!(f = fd_get(t, c->a, c->b, c)))
			return -ENOMEM;
		if (c->kind == TRAWL_STATE_READ) {
			f->br += (uint64_t)c->c;
			f->nr++;
		} else {
			f->bw += (uint64_t)c->c;
			f->nw++;
		}
		break;
	}
	return 0;
}


int tr_state_name(struct tables *t, int64_t tid, uint32_t id)
{
	struct chg c = { .ts = t->ts, .tid = (int32_t)tid, .tid2 = -1 };
	struct ithread *th;

	if (tid <= 0 || !id)
		return 0;
	if (!(th = thr_get(t, tid, &c)))
		return -ENOMEM;
	name(t, th, id);
	return 0;
}
