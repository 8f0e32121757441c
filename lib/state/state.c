/* SPDX-License-Identifier: MIT */
/*
 * lib/state/state.c - the state system: per host the kernel model
 * (lib/kstate: tables of CPUs, threads, file descriptors and block
 * requests, the one function that moves them forward by a change), the
 * moving window, checkpoints and views.
 * The sink that turns events into changes is sink.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state/state-internal.h"

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
	tr_tables_init(&h->base);
	s->nhosts++;
	return h;
}

static int ring_push(struct ring *r, const struct chg *c)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct chg *n = malloc(cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < r->n; i++)
			n[i] = r->c[(r->head + i) & (r->cap - 1)];
		free(r->c);
		r->c = n;
		r->head = 0;
		r->cap = cap;
	}
	r->c[(r->head + r->n++) & (r->cap - 1)] = *c;
	return 0;
}

static inline const struct chg *ring_at(const struct ring *r, size_t i)
{
	return &r->c[(r->head + i) & (r->cap - 1)];
}

int tr_state_push(struct trawl_state *s, struct host *h, const struct chg *c)
{
	int rc = tr_state_apply(&h->cur, c, s->window);

	if (rc || s->window < 0)
		return rc;
	if ((rc = ring_push(&h->log, c)))
		return rc;
	/* slide: changes older than the window go into the base */
	int64_t cut = c->ts - s->window;
	while (h->log.n && ring_at(&h->log, 0)->ts < cut) {
		if ((rc = tr_state_apply(&h->base, ring_at(&h->log, 0), s->window)))
			return rc;
		h->log.head = (h->log.head + 1) & (h->log.cap - 1);
		h->log.n--;
	}
	/* give back a ring much larger than the window needs */
	if (h->log.cap > 4096 && h->log.n * 8 < h->log.cap) {
		size_t cap = h->log.cap / 2;
		struct chg *n = malloc(cap * sizeof(*n));
		if (n) {
			for (size_t i = 0; i < h->log.n; i++)
				n[i] = *ring_at(&h->log, i);
			free(h->log.c);
			h->log.c = n;
			h->log.head = 0;
			h->log.cap = cap;
		}
	}
	return 0;
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
		tr_tables_release(&s->hosts[i].base);
		free(s->hosts[i].log.c);
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

static const struct host *host_find(const struct trawl_state *s, const char *name)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i].name, name))
			return &s->hosts[i];
	return NULL;
}

int64_t trawl_state_window_start(const struct trawl_state *s, const char *host)
{
	const struct host *h = host_find(s, host);

	if (!h)
		return INT64_MIN;
	if (s->window < 0)
		return h->cur.ts;
	return h->base.ts;
}

size_t trawl_state_nhosts(const struct trawl_state *s)
{
	return s->nhosts;
}

const char *trawl_state_host(const struct trawl_state *s, size_t i)
{
	return i < s->nhosts ? s->hosts[i].name : NULL;
}

void trawl_state_stats(const struct trawl_state *s, struct trawl_state_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->events = s->events;
	st->checkpoints = s->nck;
	st->bytes = sizeof(*s) + s->str.bytes + s->str.nslot * sizeof(uint32_t);
	for (size_t i = 0; i < s->nhosts; i++) {
		const struct host *h = &s->hosts[i];
		st->changes += h->log.n;
		st->threads += h->cur.thr.n;
		st->fds += h->cur.fd.n;
		st->requests += h->cur.rq.n;
		st->gc_requests += h->cur.gc_requests;
		st->gc_syscalls += h->cur.gc_syscalls;
		st->bytes += tr_tables_bytes(&h->cur) + tr_tables_bytes(&h->base) +
			     h->log.cap * sizeof(struct chg);
	}
	for (size_t i = 0; i < s->nck; i++)
		for (size_t j = 0; j < s->ck[i].nhosts; j++)
			st->bytes += tr_tables_bytes(&s->ck[i].t[j]);
}

/* ------------------------------------------------------------- views */

struct trawl_state_view {
	const struct strtab *str;
	char *host;
	int64_t t, base_ts;
	struct tables tb;
	struct chg *log;		/* the window's changes up to t */
	size_t nlog;
	struct trawl_state_cpu *cpus;
	size_t ncpus;
	struct trawl_state_thread *thr;
	size_t nthr;
	struct trawl_state_fd *fds;
	size_t nfds;
	struct trawl_state_request *rqs;
	size_t nrqs;
	struct trawl_state *owned;	/* a replay's state (trawl_state_at_files) */
};

static int cmp_thr(const void *a, const void *b)
{
	const struct trawl_state_thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_fd(const void *a, const void *b)
{
	const struct trawl_state_fd *x = a, *y = b;
	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static int cmp_rq(const void *a, const void *b)
{
	const struct trawl_state_request *x = a, *y = b;
	if (x->dev != y->dev)
		return (x->dev > y->dev) - (x->dev < y->dev);
	return (x->sector > y->sector) - (x->sector < y->sector);
}

static int view_fill(struct trawl_state_view *v)
{
	const struct tables *t = &v->tb;

	v->cpus = calloc(t->ncpus + 1, sizeof(*v->cpus));
	v->thr = calloc(t->thr.n + 1, sizeof(*v->thr));
	v->fds = calloc(t->fd.n + 1, sizeof(*v->fds));
	v->rqs = calloc(t->rq.n + 1, sizeof(*v->rqs));
	if (!v->cpus || !v->thr || !v->fds || !v->rqs)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncpus; i++) {
		const struct icpu *c = &t->cpus[i];
		if (!c->seen)
			continue;
		v->cpus[v->ncpus++] = (struct trawl_state_cpu){
			.cpu = (uint32_t)i, .tid = c->tid, .mode = c->mode, .irq = c->irq,
			.since = c->since,
		};
	}
	for (size_t i = 0; i < t->thr.cap; i++) {
		const struct ithread *th = (const void *)(t->thr.rec + i * t->thr.rsz);
		if (!t->thr.used[i])
			continue;
		v->thr[v->nthr++] = (struct trawl_state_thread){
			.tid = th->tid, .pid = th->pid, .ppid = th->ppid,
			.comm = tr_state_str(v->str, th->comm), .status = th->status,
			.since = th->since, .cpu = th->cpu,
			.syscall = th->syscall ? tr_state_str(v->str, th->syscall) : NULL,
			.syscall_since = th->syscall ? th->syscall_since : INT64_MIN,
			.io_inflight = th->io_inflight,
			.blocked_io = th->status == TRAWL_STATE_THREAD_BLOCKED && th->io_inflight,
			.created = th->created,
		};
	}
	for (size_t i = 0; i < t->fd.cap; i++) {
		const struct ifd *f = (const void *)(t->fd.rec + i * t->fd.rsz);
		if (!t->fd.used[i])
			continue;
		v->fds[v->nfds++] = (struct trawl_state_fd){
			.pid = f->pid, .fd = f->fd, .path = tr_state_str(v->str, f->path),
			.opened = f->opened, .bytes_read = f->br, .bytes_written = f->bw,
			.reads = f->nr, .writes = f->nw,
		};
	}
	for (size_t i = 0; i < t->rq.cap; i++) {
		const struct irqst *q = (const void *)(t->rq.rec + i * t->rq.rsz);
		if (!t->rq.used[i])
			continue;
		v->rqs[v->nrqs++] = (struct trawl_state_request){
			.dev = q->dev, .sector = q->sector, .nr_sector = q->nr, .write = q->write,
			.tid = q->tid, .inserted = q->inserted, .issued = q->issued,
		};
	}
	qsort(v->thr, v->nthr, sizeof(*v->thr), cmp_thr);
	qsort(v->fds, v->nfds, sizeof(*v->fds), cmp_fd);
	qsort(v->rqs, v->nrqs, sizeof(*v->rqs), cmp_rq);
	return 0;
}

struct trawl_state_view *trawl_state_at(const struct trawl_state *s, const char *host, int64_t t)
{
	const struct host *h = host_find(s, host);
	struct trawl_state_view *v;
	int rc = -ENOMEM;

	if (!h) {
		errno = ENOENT;
		return NULL;
	}
	if (s->window < 0 ? t < h->cur.ts : t < h->base.ts) {
		errno = ERANGE;
		return NULL;
	}
	if (!(v = calloc(1, sizeof(*v))))
		return NULL;
	v->str = &s->str;
	v->t = t;
	v->base_ts = h->base.ts;
	if (!(v->host = strdup(host)))
		goto err;
	if (s->window < 0) {
		if (tr_tables_copy(&v->tb, &h->cur))
			goto err;
	} else {
		if (tr_tables_copy(&v->tb, &h->base))
			goto err;
		v->log = malloc((h->log.n + 1) * sizeof(*v->log));
		if (!v->log)
			goto err;
		for (size_t i = 0; i < h->log.n && ring_at(&h->log, i)->ts <= t; i++) {
			v->log[v->nlog++] = *ring_at(&h->log, i);
			if ((rc = tr_state_apply(&v->tb, ring_at(&h->log, i), s->window)))
				goto err;
		}
	}
	if ((rc = view_fill(v)))
		goto err;
	return v;
err:
	trawl_state_view_free(v);
	errno = -rc;
	return NULL;
}

void tr_state_view_own(struct trawl_state_view *v, struct trawl_state *s)
{
	v->owned = s;
}

void trawl_state_view_free(struct trawl_state_view *v)
{
	if (!v)
		return;
	free(v->host);
	tr_tables_release(&v->tb);
	free(v->log);
	free(v->cpus);
	free(v->thr);
	free(v->fds);
	free(v->rqs);
	trawl_state_free(v->owned);
	free(v);
}

int64_t trawl_state_view_time(const struct trawl_state_view *v)
{
	return v->t;
}

const char *trawl_state_view_host(const struct trawl_state_view *v)
{
	return v->host;
}

const struct trawl_state_cpu *trawl_state_view_cpu(const struct trawl_state_view *v, size_t i)
{
	return i < v->ncpus ? &v->cpus[i] : NULL;
}

const struct trawl_state_thread *trawl_state_view_thread(const struct trawl_state_view *v, size_t i)
{
	return i < v->nthr ? &v->thr[i] : NULL;
}

const struct trawl_state_thread *trawl_state_view_thread_find(const struct trawl_state_view *v,
							      int64_t tid)
{
	struct trawl_state_thread k = { .tid = tid };
	return bsearch(&k, v->thr, v->nthr, sizeof(k), cmp_thr);
}

const struct trawl_state_fd *trawl_state_view_fd(const struct trawl_state_view *v, size_t i)
{
	return i < v->nfds ? &v->fds[i] : NULL;
}

const struct trawl_state_fd *trawl_state_view_fd_find(const struct trawl_state_view *v,
						      int64_t pid, int64_t fd)
{
	struct trawl_state_fd k = { .pid = pid, .fd = fd };
	return bsearch(&k, v->fds, v->nfds, sizeof(k), cmp_fd);
}

const struct trawl_state_request *trawl_state_view_request(const struct trawl_state_view *v,
							   size_t i)
{
	return i < v->nrqs ? &v->rqs[i] : NULL;
}

static void chg_out(const struct trawl_state_view *v, const struct chg *c,
		    struct trawl_state_change *o)
{
	*o = (struct trawl_state_change){
		.ts = c->ts, .kind = c->kind, .cpu = c->cpu, .tid = c->tid, .tid2 = c->tid2,
		.a = c->a, .b = c->b, .c = c->c,
		.str = tr_state_str(v->str, c->str), .str2 = tr_state_str(v->str, c->str2),
	};
}

enum { BY_CPU, BY_THREAD, BY_FD };

static bool concerns(const struct chg *c, int by, int64_t x, int64_t y)
{
	switch (by) {
	case BY_CPU:
		return c->cpu == x && c->kind != TRAWL_STATE_DUMP_PROCESS &&
		       c->kind != TRAWL_STATE_DUMP_FD && c->kind < TRAWL_STATE_OPEN;
	case BY_THREAD:
		return (c->tid == x && c->kind != TRAWL_STATE_DUMP_PROCESS &&
			c->kind != TRAWL_STATE_DUMP_FD) || c->tid2 == x;
	default:
		return c->kind >= TRAWL_STATE_DUMP_FD && c->a == x && c->b == y;
	}
}

static size_t changes(const struct trawl_state_view *v, int by, int64_t x, int64_t y,
		      const struct chg *origin, struct trawl_state_change *out, size_t max)
{
	size_t n = 0;

	/* the change that created it, when the window no longer holds it */
	if (origin && origin->ts <= v->base_ts && origin->ts != INT64_MIN) {
		if (n < max)
			chg_out(v, origin, &out[n]);
		n++;
	}
	for (size_t i = 0; i < v->nlog; i++)
		if (concerns(&v->log[i], by, x, y)) {
			if (n < max)
				chg_out(v, &v->log[i], &out[n]);
			n++;
		}
	return n;
}

size_t trawl_state_view_cpu_changes(const struct trawl_state_view *v, uint32_t cpu,
				    struct trawl_state_change *out, size_t max)
{
	return changes(v, BY_CPU, cpu, 0, NULL, out, max);
}

size_t trawl_state_view_thread_changes(const struct trawl_state_view *v, int64_t tid,
				       struct trawl_state_change *out, size_t max)
{
	const struct ithread *th = tr_tab_find(&v->tb.thr, (uint64_t)tid);
	return changes(v, BY_THREAD, tid, 0, th ? &th->origin : NULL, out, max);
}

size_t trawl_state_view_fd_changes(const struct trawl_state_view *v, int64_t pid, int64_t fd,
				   struct trawl_state_change *out, size_t max)
{
	const struct ifd *f = tr_tab_find(&v->tb.fd, tr_fd_key(pid, fd));
	return changes(v, BY_FD, pid, fd, f ? &f->origin : NULL, out, max);
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
