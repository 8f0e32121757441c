/* SPDX-License-Identifier: MIT */
/*
 * lib/state/state.c - the state system's model: tables of CPUs, threads,
 * file descriptors and block requests, the one function that moves them
 * forward by a change, the moving window, checkpoints and views.
 * The sink that turns events into changes is sink.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state/state-internal.h"

_Static_assert(sizeof(struct chg) == 48, "a change is 48 bytes");

/* ----------------------------------------------------------- strings */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	return h;
}

static int strtab_grow(struct strtab *st)
{
	size_t ns = st->nslot ? st->nslot * 2 : 256;
	uint32_t *slot = calloc(ns, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 1; i < st->n; i++) {
		size_t j = hash_str(st->s[i], strlen(st->s[i])) & (ns - 1);
		while (slot[j])
			j = (j + 1) & (ns - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(st->slot);
	st->slot = slot;
	st->nslot = ns;
	return 0;
}

/* The id of s[0 .. len) (up to a NUL), added when new; 0 ("") on ENOMEM. */
uint32_t tr_state_intern(struct strtab *st, const char *s, size_t len)
{
	len = strnlen(s, len);
	if (!len)
		return 0;
	if (!st->n) {
		st->s = calloc(64, sizeof(*st->s));
		if (!st->s)
			return 0;
		st->cap = 64;
		st->n = 1;		/* id 0: "" */
	}
	if ((st->n + 1) * 2 > st->nslot && strtab_grow(st))
		return 0;
	size_t j = hash_str(s, len) & (st->nslot - 1);
	for (; st->slot[j]; j = (j + 1) & (st->nslot - 1)) {
		const char *o = st->s[st->slot[j] - 1];
		if (!strncmp(o, s, len) && !o[len])
			return st->slot[j] - 1;
	}
	if (st->n == st->cap) {
		char **ns = realloc(st->s, st->cap * 2 * sizeof(*ns));
		if (!ns)
			return 0;
		st->s = ns;
		st->cap *= 2;
	}
	char *c = strndup(s, len);
	if (!c)
		return 0;
	st->s[st->n] = c;
	st->slot[j] = (uint32_t)st->n + 1;
	st->bytes += len + 1 + sizeof(char *) + 2 * sizeof(uint32_t);
	return (uint32_t)st->n++;
}

const char *tr_state_str(const struct strtab *st, uint32_t id)
{
	return id && id < st->n ? st->s[id] : "";
}

int tr_state_strtab_copy(struct strtab *dst, const struct strtab *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 1; i < src->n; i++)
		if (tr_state_intern(dst, src->s[i], strlen(src->s[i])) != i) {
			tr_state_strtab_release(dst);
			return -ENOMEM;
		}
	return 0;
}

void tr_state_strtab_release(struct strtab *st)
{
	for (size_t i = 1; i < st->n; i++)
		free(st->s[i]);
	free(st->s);
	free(st->slot);
	memset(st, 0, sizeof(*st));
}

/* ------------------------------------------------------------ tables */

static inline uint64_t rkey(const struct tab *t, size_t i)
{
	uint64_t k;

	memcpy(&k, t->rec + i * t->rsz, sizeof(k));
	return k;
}

void *tr_tab_find(const struct tab *t, uint64_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = mix(key) & (t->cap - 1); t->used[i]; i = (i + 1) & (t->cap - 1))
		if (rkey(t, i) == key)
			return t->rec + i * t->rsz;
	return NULL;
}

static int tab_grow(struct tab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 16;
	uint8_t *rec = malloc(cap * t->rsz), *used = calloc(cap, 1);

	if (!rec || !used) {
		free(rec);
		free(used);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->used[i])
			continue;
		size_t j = mix(rkey(t, i)) & (cap - 1);
		while (used[j])
			j = (j + 1) & (cap - 1);
		used[j] = 1;
		memcpy(rec + j * t->rsz, t->rec + i * t->rsz, t->rsz);
	}
	free(t->rec);
	free(t->used);
	t->rec = rec;
	t->used = used;
	t->cap = cap;
	return 0;
}

void *tr_tab_get(struct tab *t, uint64_t key, bool *created)
{
	void *r = tr_tab_find(t, key);

	if (created)
		*created = !r;
	if (r)
		return r;
	if ((t->n + 1) * 4 > t->cap * 3 && tab_grow(t))
		return NULL;
	size_t i = mix(key) & (t->cap - 1);
	while (t->used[i])
		i = (i + 1) & (t->cap - 1);
	t->used[i] = 1;
	t->n++;
	r = t->rec + i * t->rsz;
	memset(r, 0, t->rsz);
	memcpy(r, &key, sizeof(key));
	return r;
}

void tr_tab_del(struct tab *t, uint64_t key)
{
	uint8_t *r = tr_tab_find(t, key);

	if (!r)
		return;
	size_t i = (size_t)(r - t->rec) / t->rsz, m = t->cap - 1;
	t->used[i] = 0;
	t->n--;
	/* backward shift: move up every record of the cluster that probed past i */
	for (size_t j = (i + 1) & m; t->used[j]; j = (j + 1) & m) {
		size_t home = mix(rkey(t, j)) & m;
		if (((j - home) & m) >= ((j - i) & m)) {
			memcpy(t->rec + i * t->rsz, t->rec + j * t->rsz, t->rsz);
			t->used[i] = 1;
			t->used[j] = 0;
			i = j;
		}
	}
}

static int tab_copy(struct tab *dst, const struct tab *src)
{
	*dst = *src;
	dst->rec = NULL;
	dst->used = NULL;
	if (!src->cap)
		return 0;
	dst->rec = malloc(src->cap * src->rsz);
	dst->used = malloc(src->cap);
	if (!dst->rec || !dst->used)
		return -ENOMEM;
	memcpy(dst->rec, src->rec, src->cap * src->rsz);
	memcpy(dst->used, src->used, src->cap);
	return 0;
}

int tr_tables_init(struct tables *t)
{
	memset(t, 0, sizeof(*t));
	t->thr.rsz = sizeof(struct ithread);
	t->fd.rsz = sizeof(struct ifd);
	t->rq.rsz = sizeof(struct irqst);
	t->ts = INT64_MIN;
	t->next_sweep = INT64_MIN;
	return 0;
}

void tr_tables_release(struct tables *t)
{
	free(t->cpus);
	free(t->thr.rec);
	free(t->thr.used);
	free(t->fd.rec);
	free(t->fd.used);
	free(t->rq.rec);
	free(t->rq.used);
	memset(t, 0, sizeof(*t));
}

int tr_tables_copy(struct tables *dst, const struct tables *src)
{
	*dst = *src;
	dst->cpus = NULL;
	dst->thr.rec = dst->fd.rec = dst->rq.rec = NULL;
	dst->thr.used = dst->fd.used = dst->rq.used = NULL;
	if (src->ncpus) {
		dst->cpus = malloc(src->ncpus * sizeof(*dst->cpus));
		if (!dst->cpus)
			goto err;
		memcpy(dst->cpus, src->cpus, src->ncpus * sizeof(*dst->cpus));
	}
	if (tab_copy(&dst->thr, &src->thr) || tab_copy(&dst->fd, &src->fd) ||
	    tab_copy(&dst->rq, &src->rq))
		goto err;
	return 0;
err:
	tr_tables_release(dst);
	return -ENOMEM;
}

size_t tr_tables_bytes(const struct tables *t)
{
	return t->ncpus * sizeof(struct icpu) + t->thr.cap * (t->thr.rsz + 1) +
	       t->fd.cap * (t->fd.rsz + 1) + t->rq.cap * (t->rq.rsz + 1);
}

/* --------------------------------------------------------- applying */

static struct icpu *cpu_get(struct tables *t, int32_t cpu)
{
	if (cpu < 0 || cpu > 65535)
		return NULL;
	if ((size_t)cpu >= t->ncpus) {
		size_t n = (size_t)cpu + 1;
		struct icpu *c = realloc(t->cpus, n * sizeof(*c));
		if (!c)
			return NULL;
		for (size_t i = t->ncpus; i < n; i++)
			c[i] = (struct icpu){ .tid = -1, .since = INT64_MIN };
		t->cpus = c;
		t->ncpus = n;
	}
	t->cpus[cpu].seen = true;
	return &t->cpus[cpu];
}

static struct ithread *thr_get(struct tables *t, int64_t tid, const struct chg *c)
{
	bool created;
	struct ithread *th = tr_tab_get(&t->thr, (uint64_t)tid, &created);

	if (th && created) {
		th->tid = (int32_t)tid;
		th->pid = th->ppid = th->cpu = -1;
		th->since = th->created = INT64_MIN;
		th->sc_fd = -1;
		th->origin = *c;
	}
	return th;
}

static struct ifd *fd_get(struct tables *t, int64_t pid, int64_t fd, const struct chg *c)
{
	bool created;
	struct ifd *f = tr_tab_get(&t->fd, tr_fd_key(pid, fd), &created);

	if (f && created) {
		f->pid = (int32_t)pid;
		f->fd = (int32_t)fd;
		f->opened = INT64_MIN;
		f->origin = *c;
	}
	return f;
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
	size_t n = 0;
	struct ifd *tmp;

	for (size_t i = 0; i < t->fd.cap; i++)
		n += t->fd.used[i] && ((struct ifd *)(t->fd.rec + i * t->fd.rsz))->pid == from;
	if (!n)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < t->fd.cap; i++) {
		struct ifd *f = (struct ifd *)(t->fd.rec + i * t->fd.rsz);
		if (t->fd.used[i] && f->pid == from)
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
			cpu->tid = c->tid2;
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
					th->comm = c->str2;
			}
		}
		if (c->tid2 > 0 && (th = thr_get(t, c->tid2, c))) {
			th->status = TRAWL_STATE_THREAD_RUNNING;
			th->since = ts;
			th->cpu = c->cpu;
			if (c->str)
				th->comm = c->str;
		}
		if (cpu) {
			cpu->mode = run_mode(t, c->tid2);
			cpu->since = ts;
		}
		break;
	case TRAWL_STATE_WAKEUP:
		if (c->tid2 > 0 && (th = thr_get(t, c->tid2, c))) {
			if (th->status != TRAWL_STATE_THREAD_RUNNING) {
				th->status = TRAWL_STATE_THREAD_WOKEN;
				th->since = ts;
			}
			th->cpu = (int32_t)c->a;
			if (c->str)
				th->comm = c->str;
		}
		break;
	case TRAWL_STATE_FORK:
		if (!(th = thr_get(t, c->tid2, c)))
			return -ENOMEM;
		th->pid = (int32_t)c->a;
		th->ppid = (int32_t)c->b;
		th->comm = c->str;
		th->created = ts;
		th->status = TRAWL_STATE_THREAD_WOKEN;
		th->since = ts;
		th->origin = *c;
		if (c->a == c->tid2 && (o = tr_tab_find(&t->thr, (uint64_t)c->tid)))
			return fds_copy(t, o->pid >= 0 ? o->pid : o->tid, th->pid, c);
		break;
	case TRAWL_STATE_EXEC:
		if (!(th = thr_get(t, c->tid, c)))
			return -ENOMEM;
		if (c->str2)
			th->comm = c->str2;	/* the file's base name, as the kernel's comm */
		if (th->pid != c->a && th->pid >= 0) {
			/* taken for a thread (clone3), it is a process */
			int32_t old = th->pid;
			th->ppid = old;
			th->pid = (int32_t)c->a;
			if (fds_copy(t, old, th->pid, c))
				return -ENOMEM;
		}
		th->pid = (int32_t)c->a;
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
		th->status = TRAWL_STATE_THREAD_RUNNING;
		if ((cpu = cpu_get(t, c->cpu)) && !cpu->depth) {
			cpu->tid = c->tid;
			cpu->mode = TRAWL_STATE_CPU_SYSCALL;
			cpu->since = ts;
		}
		break;
	case TRAWL_STATE_SYSCALL_EXIT:
		if ((th = tr_tab_find(&t->thr, (uint64_t)c->tid))) {
			th->syscall = 0;
			th->sc_fd = -1;
			th->sc_path = 0;
		}
		if ((cpu = cpu_get(t, c->cpu)) && !cpu->depth) {
			cpu->tid = c->tid;
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
		th->pid = (int32_t)c->a;
		th->ppid = (int32_t)c->b;
		if (c->str)
			th->comm = c->str;
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

/* ------------------------------------------------------------- hosts */

struct host *tr_state_host_get(struct trawl_state *s, const char *name)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i].name, name))
			return &s->hosts[i];
	struct host *h = realloc(s->hosts, (s->nhosts + 1) * sizeof(*h));
	if (!h)
		return NULL;
	s->hosts = h;
	h = &s->hosts[s->nhosts];
	memset(h, 0, sizeof(*h));
	if (!(h->name = strdup(name)))
		return NULL;
	tr_tables_init(&h->cur);
	h->cut = INT64_MIN;
	s->nhosts++;
	return h;
}

int tr_state_checkpoint(struct trawl_state *s, int64_t ts)
{
	if (s->nck == s->capck) {
		size_t cap = s->capck ? s->capck * 2 : 16;
		struct ckpt *n = realloc(s->ck, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->ck = n;
		s->capck = cap;
	}
	struct ckpt *k = &s->ck[s->nck];
	k->ts = ts;
	k->nhosts = s->nhosts;
	k->t = calloc(s->nhosts ? s->nhosts : 1, sizeof(*k->t));
	if (!k->t)
		return -ENOMEM;
	for (size_t i = 0; i < s->nhosts; i++)
		if (tr_tables_copy(&k->t[i], &s->hosts[i].cur)) {
			while (i--)
				tr_tables_release(&k->t[i]);
			free(k->t);
			return -ENOMEM;
		}
	s->nck++;
	return 0;
}

/* ------------------------------------------------------------ public */

struct trawl_state *trawl_state_new(const struct trawl_state_opts *o)
{
	struct trawl_state *s;

	if (o && o->sz < offsetof(struct trawl_state_opts, window_ns) + sizeof(int64_t)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	s->window = o && o->window_ns ? o->window_ns : 10 * 1000000000LL;
	if (o && o->sz >= offsetof(struct trawl_state_opts, checkpoint_ns) + sizeof(int64_t))
		s->interval = o->checkpoint_ns > 0 ? o->checkpoint_ns : 0;
	s->newest = INT64_MIN;
	s->next_ck = INT64_MIN;
	s->first_ts = INT64_MIN;
	s->replay_from = INT64_MIN;
	return s;
}

void trawl_state_free(struct trawl_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nhosts; i++) {
		free(s->hosts[i].name);
		tr_tables_release(&s->hosts[i].cur);
		tr_state_window_release(&s->hosts[i]);
	}
	free(s->hosts);
	for (size_t i = 0; i < s->nck; i++) {
		for (size_t j = 0; j < s->ck[i].nhosts; j++)
			tr_tables_release(&s->ck[i].t[j]);
		free(s->ck[i].t);
	}
	free(s->ck);
	tr_state_ingest_free(s);
	tr_state_strtab_release(&s->str);
	free(s);
}

int64_t trawl_state_newest(const struct trawl_state *s)
{
	return s->newest;
}

size_t trawl_state_nhosts(const struct trawl_state *s)
{
	return s->nhosts;
}

const char *trawl_state_host(const struct trawl_state *s, size_t i)
{
	return i < s->nhosts ? s->hosts[i].name : NULL;
}

/* ------------------------------------------------------------- names */

static const char *const change_names[TRAWL_STATE_NKINDS] = {
	[TRAWL_STATE_SWITCH] = "switch",
	[TRAWL_STATE_WAKEUP] = "wakeup",
	[TRAWL_STATE_FORK] = "fork",
	[TRAWL_STATE_EXEC] = "exec",
	[TRAWL_STATE_EXIT] = "exit",
	[TRAWL_STATE_SYSCALL_ENTRY] = "syscall_entry",
	[TRAWL_STATE_SYSCALL_EXIT] = "syscall_exit",
	[TRAWL_STATE_IRQ_ENTRY] = "irq_entry",
	[TRAWL_STATE_IRQ_EXIT] = "irq_exit",
	[TRAWL_STATE_SOFTIRQ_ENTRY] = "softirq_entry",
	[TRAWL_STATE_SOFTIRQ_EXIT] = "softirq_exit",
	[TRAWL_STATE_BLOCK_INSERT] = "block_insert",
	[TRAWL_STATE_BLOCK_ISSUE] = "block_issue",
	[TRAWL_STATE_BLOCK_COMPLETE] = "block_complete",
	[TRAWL_STATE_DUMP_PROCESS] = "statedump_process",
	[TRAWL_STATE_DUMP_FD] = "statedump_fd",
	[TRAWL_STATE_OPEN] = "open",
	[TRAWL_STATE_CLOSE] = "close",
	[TRAWL_STATE_READ] = "read",
	[TRAWL_STATE_WRITE] = "write",
};

const char *trawl_state_change_name(enum trawl_state_change_kind k)
{
	return (unsigned)k < TRAWL_STATE_NKINDS ? change_names[k] : "?";
}

const char *trawl_state_cpu_mode_name(enum trawl_state_cpu_mode m)
{
	static const char *const n[] = { "unknown", "idle", "user", "syscall", "irq", "softirq" };
	return (unsigned)m < sizeof(n) / sizeof(n[0]) ? n[m] : "?";
}

const char *trawl_state_thread_status_name(enum trawl_state_thread_status st)
{
	static const char *const n[] = { "unknown", "running", "runnable (preempted)",
					 "runnable (woken up)", "blocked" };
	return (unsigned)st < sizeof(n) / sizeof(n[0]) ? n[st] : "?";
}
