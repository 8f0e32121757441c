/* SPDX-License-Identifier: MIT */
/*
 * lib/analysis/analysis.c - the standard analyses (trawl/analysis.h): one
 * table of analyses, each a handler of the kernel events it needs, over
 * the kernel model (lib/kstate: per host its CPUs, threads, their names
 * after exec and tgids, fed the events that make them, no history) and
 * what the analyses keep beside it: per thread and CPU their pending
 * intervals, rows (a thread, a CPU, a syscall, an IRQ, a disk) with their
 * statistics and histograms, and the samples when asked. Events are bound
 * by name (LTTng's, as trawl records them), every one TRAWL_FIELD_OPTIONAL:
 * a live source brings them later, and an analysis whose events a trace
 * lacks reports nothing.
 *
 * The semantics follow lttng-analyses (the oracle of the tests):
 *  - cputop: a thread runs from the sched_switch that puts it on a CPU to
 *    the one that takes it off; one already running when the trace starts
 *    counts from the slice's start, one still running at the end up to
 *    the slice's last event; the idle thread (tid 0) is left out; a
 *    thread's share is its CPU time over the slice's duration;
 *  - schedlat: from a sched_wakeup (or sched_wakeup_new) of a thread not
 *    running to the sched_switch onto a CPU, the first wake-up counts;
 *  - syscalls: from syscall_entry_X to the same thread's next syscall_exit,
 *    errors when ret < 0;
 *  - irq: irq_handler_entry -> exit, irq_softirq_entry -> exit per CPU;
 *  - iolatency: block_rq_issue -> block_rq_complete of the same device and
 *    sector (nr_sector 0: left out), bytes = nr_sector * 512; per disk and
 *    per issuing thread; and the I/O syscalls, per type and per process
 *    (lttng-iousagetop's: its pid from the state dump or the fork, else the
 *    thread alone).
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trawl/analysis.h>

#include "internal.h"
#include "analysis/analysis-internal.h"
#include "kstate/kstate.h"

/* ------------------------------------------------------- integer map */

/* Open addressing, u64 keys (never ~0) to u32 values. */
struct imap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

#define IMAP_EMPTY UINT64_MAX

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static uint32_t *imap_find(const struct imap *m, uint64_t k)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == k)
			return &m->vals[i];
		if (m->keys[i] == IMAP_EMPTY)
			return NULL;
	}
}

static int imap_put(struct imap *m, uint64_t k, uint32_t v)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		uint64_t *keys = malloc(cap * sizeof(*keys));
		uint32_t *vals = malloc(cap * sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		memset(keys, 0xff, cap * sizeof(*keys));
		for (size_t i = 0; i < m->cap; i++) {
			if (m->keys[i] == IMAP_EMPTY)
				continue;
			size_t j = mix(m->keys[i]) & (cap - 1);
			while (keys[j] != IMAP_EMPTY)
				j = (j + 1) & (cap - 1);
			keys[j] = m->keys[i];
			vals[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	size_t i = mix(k) & (m->cap - 1);
	while (m->keys[i] != IMAP_EMPTY && m->keys[i] != k)
		i = (i + 1) & (m->cap - 1);
	if (m->keys[i] == IMAP_EMPTY)
		m->n++;
	m->keys[i] = k;
	m->vals[i] = v;
	return 0;
}

/* Removes k (linear probing: the entries after it move back). */
static void imap_del(struct imap *m, uint64_t k)
{
	if (!m->cap)
		return;
	size_t mask = m->cap - 1, i = mix(k) & mask;
	while (m->keys[i] != k) {
		if (m->keys[i] == IMAP_EMPTY)
			return;
		i = (i + 1) & mask;
	}
	m->keys[i] = IMAP_EMPTY;
	m->n--;
	for (size_t j = (i + 1) & mask; m->keys[j] != IMAP_EMPTY; j = (j + 1) & mask) {
		size_t home = mix(m->keys[j]) & mask;
		/* j's entry stays unless the hole lies between its home and j */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = IMAP_EMPTY;
			i = j;
		}
	}
}

static void imap_clear(struct imap *m)
{
	if (m->cap)
		memset(m->keys, 0xff, m->cap * sizeof(*m->keys));
	m->n = 0;
}

static void imap_release(struct imap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------- state */

#define NONE INT64_MIN

/* What the analyses keep of a thread besides the kernel model's (its
 * name, names, process: lib/kstate, struct ithread). */
struct thr {
	int64_t tid;
	int64_t run_since;		/* cputop: on a CPU since (NONE: not) */
	int64_t woken;			/* schedlat: first wake-up not yet run */
	int64_t preempted;		/* schedlat: switched out runnable at */
	int64_t sys_ts;			/* syscalls: in a syscall since */
	uint32_t sys_cls;		/* ... its entry's class */
	int prio;
	/* iolatency: its process's row (of process prow_id) in the slice of
	 * generation prow_gen (a->gen; 0: none), so that a sample needs no
	 * second lookup, the model's names (struct tables') when that row's
	 * label was last made from its main thread's name, and its pids
	 * when prow_id was its process */
	uint32_t prow, prow_gen, plabel, ppids;
	int64_t prow_id;
};

/* What irq keeps of a CPU (its current thread is the model's). */
struct cpu {
	int64_t irq_ts, irq;		/* in a hard IRQ since (NONE: not) */
	int64_t soft_ts[16];		/* in a softirq (by vector) since */
};

struct req {				/* a block request in flight */
	int64_t ts, tid;
	uint64_t bytes;
	uint32_t cpu, names;		/* names: its thread's name generation then */
	char comm[16];
};

#define THR_CACHE 1024

struct host {
	const char *name;
	int64_t first, last;		/* its first and last events' times so far */
	struct tables ks;		/* the kernel model: CPUs, threads, names, tgids */
	bool filtered;			/* a trace of it recorded some threads only
					 * (trawl_pid_filter): others' switches absent */
	struct thr *thr;
	size_t nthr, capthr;
	struct imap tids;		/* tid -> thr index */
	uint32_t tcache[THR_CACHE];	/* tid % THR_CACHE -> a thr index (checked) */
	struct cpu *cpus;
	size_t ncpus;
	struct req *reqs;
	size_t nreqs, capreqs;
	struct imap rq;			/* dev ^ sector -> req index */
	uint32_t *rq_free;		/* freed req slots */
	size_t nfree;
	struct disk { int64_t dev; char name[32]; } *disks;	/* the state dump's */
	size_t ndisks;
	size_t io_pending;		/* iolatency: its threads in an I/O syscall */
};

enum ev_kind {
	K_UNSET, K_OTHER, K_SWITCH, K_WAKEUP, K_FORK, K_EXEC, K_SDPROC, K_SYS_ENTRY, K_SYS_EXIT,
	K_IRQ_ENTRY, K_IRQ_EXIT, K_SOFT_ENTRY, K_SOFT_EXIT, K_RQ_ISSUE, K_RQ_COMPLETE, K_SDBLOCK,
};

enum field_id {
	F_PREV_TID, F_PREV_COMM, F_NEXT_TID, F_NEXT_COMM, F_NEXT_PRIO, F_WAKE_TID, F_WAKE_PRIO,
	F_CHILD_TID, F_CHILD_COMM, F_EXEC_TID, F_SD_TID, F_SD_NAME, F_TID, F_RET, F_IRQ,
	F_IRQ_NAME, F_VEC, F_DEV, F_SECTOR, F_NR_SECTOR, F_ERROR, F_RQ_TID, F_EXEC_FILE, F_PREV_STATE,
	F_FCNTL_CMD, F_CHILD_PID, F_SD_PID, F_BD_DEV, F_BD_NAME, NFIELDS
};

static const struct {
	const char *spec;
	enum trawl_field_type type;
} field_specs[NFIELDS] = {
	[F_PREV_TID] = { "sched_switch.prev_tid", TRAWL_FIELD_INT },
	[F_PREV_COMM] = { "sched_switch.prev_comm", TRAWL_FIELD_STRING },
	[F_NEXT_TID] = { "sched_switch.next_tid", TRAWL_FIELD_INT },
	[F_NEXT_COMM] = { "sched_switch.next_comm", TRAWL_FIELD_STRING },
	[F_NEXT_PRIO] = { "sched_switch.next_prio", TRAWL_FIELD_INT },
	[F_WAKE_TID] = { "sched_wakeup*.tid", TRAWL_FIELD_INT },
	[F_WAKE_PRIO] = { "sched_wakeup*.prio", TRAWL_FIELD_INT },
	[F_CHILD_TID] = { "sched_process_fork.child_tid", TRAWL_FIELD_INT },
	[F_CHILD_COMM] = { "sched_process_fork.child_comm", TRAWL_FIELD_STRING },
	[F_EXEC_TID] = { "sched_process_exec.tid", TRAWL_FIELD_INT },
	[F_SD_TID] = { "lttng_statedump_process_state.tid", TRAWL_FIELD_INT },
	[F_SD_NAME] = { "lttng_statedump_process_state.name", TRAWL_FIELD_STRING },
	/* the thread of a syscall or a block request: the event context's */
	[F_TID] = { "syscall_*.tid", TRAWL_FIELD_INT },
	[F_RQ_TID] = { "block_rq_issue.tid", TRAWL_FIELD_INT },
	[F_EXEC_FILE] = { "sched_process_exec.filename", TRAWL_FIELD_STRING },
	[F_PREV_STATE] = { "sched_switch.prev_state", TRAWL_FIELD_INT },
	[F_RET] = { "syscall_exit_*.ret", TRAWL_FIELD_INT },
	[F_IRQ] = { "irq_handler_*.irq", TRAWL_FIELD_INT },
	[F_IRQ_NAME] = { "irq_handler_entry.name", TRAWL_FIELD_STRING },
	[F_VEC] = { "irq_softirq_*.vec", TRAWL_FIELD_INT },
	[F_DEV] = { "block_rq_*.dev", TRAWL_FIELD_INT },
	[F_SECTOR] = { "block_rq_*.sector", TRAWL_FIELD_INT },
	[F_NR_SECTOR] = { "block_rq_*.nr_sector", TRAWL_FIELD_INT },
	[F_ERROR] = { "block_rq_complete.error", TRAWL_FIELD_INT },
	[F_FCNTL_CMD] = { "syscall_entry_fcntl.cmd", TRAWL_FIELD_INT },
	[F_CHILD_PID] = { "sched_process_fork.child_pid", TRAWL_FIELD_INT },
	[F_SD_PID] = { "lttng_statedump_process_state.pid", TRAWL_FIELD_INT },
	[F_BD_DEV] = { "lttng_statedump_block_device.dev", TRAWL_FIELD_INT },
	[F_BD_NAME] = { "lttng_statedump_block_device.diskname", TRAWL_FIELD_STRING },
};

#define ROW_CACHE 1024

struct trawl_analysis;
typedef int (*handler_fn)(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev,
			  enum ev_kind k);

struct trawl_analysis {
	struct trawl_analysis_opts o;
	char *comm;
	const struct analysis_def *def;
	struct trawl_reader *r;
	const struct trawl_field *f[NFIELDS];
	uint8_t *kinds;			/* by class index */
	uint32_t *chost;		/* by class index: its trace's host (index) */
	int64_t *clast;			/* by class index: its last event's time, for
					 * the classes only their time counts of (their
					 * host's last is taken from them at the end) */
	uint8_t *iot;			/* iolatency: a syscall entry's I/O type, by class */
	uint32_t *sysid;		/* syscalls: an exit's syscall (in sysnames), by class */
	char **sysnames;		/* the syscalls' names: one row each, whichever */
	size_t nsys;
	size_t nkinds;
	struct host *hosts;
	size_t nhosts;
	/* the kernel model's events to changes, and its strings (all hosts') */
	struct tr_kin kin;
	struct strtab str;
	int64_t was;			/* a switch's CPU ran this thread before it */
	int64_t was_since;		/* since when its thread out ran there
					 * (tr_ks_on_since(): estimated when the
					 * trace lacks the switch onto it) */
	/* the slice */
	struct trawl_analysis_row *rows;
	size_t nrows, caprows;
	struct imap rowmap;
	uint32_t rcache[ROW_CACHE];	/* a row index by a hash of its key (checked) */
	struct trawl_analysis_sample *samples;
	size_t nsamples, capsamples;
	struct trawl_analysis_sample *last_sample;	/* the one sample() just kept, or NULL */
	int64_t begin, end, slice_end;
	uint32_t gen;			/* the slice's generation, from 1 (struct thr's prow_gen) */
	bool any;
	uint64_t impossible;		/* intervals not counted: ends 2^63 ns or more apart */
};

struct analysis_def {
	const char *name, *help;
	handler_fn fn;
	unsigned kinds;			/* the kinds fn needs (1u << K_...), besides the model's */
};

/* ------------------------------------------------------- rows */

/* names: a thread's name generation (struct thr's), so that a thread is
 * a row per name it had (before and after an exec); 0 for other rows */
static struct trawl_analysis_row *row_get(struct trawl_analysis *a, const struct host *h,
					  enum trawl_analysis_row_kind kind, int64_t id,
					  uint32_t names)
{
	/* every row is one host's (a tid, a CPU, an IRQ, a disk, a process,
	 * even a syscall's name: the cluster's figure is the report's total) */
	size_t hi = (size_t)(h - a->hosts) + 1;
	uint64_t key = ((uint64_t)kind << 56) ^ ((uint64_t)hi << 40) ^ ((uint64_t)id & 0xffffffffffull) ^
		       ((uint64_t)(names & 0x1ffff) << 23);	/* (a tid is < 2^23) */
	/* a row is unique by its key: a cached index whose row has it is
	 * the map's answer, without hashing (zeroed or stale: a miss) */
	uint32_t *c = &a->rcache[((uint64_t)id ^ (uint64_t)kind * 0x9e37u ^ hi * 0x3fu) % ROW_CACHE];
	const char *rh = h->name;
	if (*c < a->nrows) {
		struct trawl_analysis_row *r = &a->rows[*c];
		if (r->kind == kind && r->id == id && r->host == rh && r->names == names)
			return r;
	}
	uint32_t *v = imap_find(&a->rowmap, key);
	if (v) {
		*c = *v;
		return &a->rows[*v];
	}
	if (a->nrows == a->caprows) {
		size_t cap = a->caprows ? 2 * a->caprows : 64;
		struct trawl_analysis_row *r = realloc(a->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		/* samples point at rows: move them along */
		for (size_t i = 0; i < a->nsamples; i++)
			a->samples[i].row = r + (a->samples[i].row - a->rows);
		a->rows = r;
		a->caprows = cap;
	}
	if (imap_put(&a->rowmap, key, (uint32_t)a->nrows) < 0)
		return NULL;
	*c = (uint32_t)a->nrows;
	struct trawl_analysis_row *r = &a->rows[a->nrows++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->id = id;
	r->names = names;
	r->host = rh;
	r->min = INT64_MAX;
	r->max = INT64_MIN;
	r->prio = INT32_MIN;
	r->pid = kind == TRAWL_ANALYSIS_PROCESS ? id : -1;
	return r;
}

static unsigned bucket(int64_t ns)
{
	uint64_t us = ns > 0 ? (uint64_t)ns / 1000 : 0;
	unsigned b = us ? 64 - (unsigned)__builtin_clzll(us) : 0;
	return b < TRAWL_ANALYSIS_HIST ? b : TRAWL_ANALYSIS_HIST - 1;
}

static void row_add(struct trawl_analysis_row *r, int64_t dur)
{
	r->count++;
	if (__builtin_add_overflow(r->sum, dur, &r->sum))	/* saturates */
		r->sum = dur > 0 ? INT64_MAX : INT64_MIN;
	r->sumsq += (double)dur * (double)dur;
	if (dur < r->min)
		r->min = dur;
	if (dur > r->max)
		r->max = dur;
	r->hist[bucket(dur)]++;
}

static const char *tcomm(const struct trawl_analysis *a, const struct host *h, int64_t tid,
			 uint32_t cpu, char *buf);

/* sample()'s comm: the one given, else the thread's (none without a tid) */
static inline const char *sample_comm(const struct trawl_analysis *a, const struct host *h,
				      const char *comm, int64_t tid, uint32_t cpu, char *buf)
{
	return comm ? comm : tid >= 0 ? tcomm(a, h, tid, cpu, buf) : "";
}

static bool comm_ok(const struct trawl_analysis *a, const char *comm)
{
	return !a->comm || fnmatch(a->comm, comm, 0) == 0;
}

/* A sample (a duration of a thread on a CPU, from ts to end): filtered,
 * into its row and the samples. Returns the row, NULL when filtered out (or no memory:
 * -ENOMEM in *err). comm NULL: the thread's (tid < 0: none), looked up only
 * when --comm filters or the sample is kept (a syscall's or an IRQ's row
 * needs no lookup). */
static struct trawl_analysis_row *sample(struct trawl_analysis *a, struct host *h,
					 enum trawl_analysis_row_kind kind, int64_t id, uint32_t names,
					 int64_t ts, int64_t end, int64_t tid, uint32_t cpu,
					 const char *comm, int *err)
{
	int64_t dur;
	char cb[16];

	a->last_sample = NULL;
	/* ends 2^63 ns or more apart (a corrupt timestamp or clock offset):
	 * no duration; counted, said by trawl_analysis_impossible() */
	if (__builtin_sub_overflow(end, ts, &dur)) {
		a->impossible++;
		return NULL;
	}
	if ((a->o.min_ns && dur < a->o.min_ns) || (a->o.max_ns && dur > a->o.max_ns) ||
	    (a->o.tid >= 0 && tid != a->o.tid) || (a->o.cpu >= 0 && (int)cpu != a->o.cpu))
		return NULL;
	/* comm NULL: the thread's, looked up only when filtered by it or kept */
	if (a->comm)
		comm = sample_comm(a, h, comm, tid, cpu, cb);
	if (comm && !comm_ok(a, comm))
		return NULL;
	struct trawl_analysis_row *r = row_get(a, h, kind, id, names);
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	row_add(r, dur);
	if (a->o.keep_samples && a->o.keep_longest && a->nsamples == a->o.keep_longest) {
		/* a min-heap on the duration: the shortest kept is replaced */
		struct trawl_analysis_sample *hp = a->samples;
		size_t n = a->nsamples, i = 0;
		if (dur <= hp[0].dur)
			return r;
		comm = sample_comm(a, h, comm, tid, cpu, cb);
		for (;;) {
			size_t c = 2 * i + 1;
			if (c >= n)
				break;
			if (c + 1 < n && hp[c + 1].dur < hp[c].dur)
				c++;
			if (hp[c].dur >= dur)
				break;
			hp[i] = hp[c];
			i = c;
		}
		hp[i] = (struct trawl_analysis_sample){ .ts = ts, .dur = dur, .tid = tid, .cpu = cpu,
							.host = h->name, .row = r };
		snprintf(hp[i].comm, sizeof(hp[i].comm), "%s", comm);
		a->last_sample = &hp[i];
		return r;
	}
	if (a->o.keep_samples) {
		if (a->nsamples == a->capsamples) {
			size_t cap = a->capsamples ? 2 * a->capsamples : 1024;
			struct trawl_analysis_sample *s = realloc(a->samples, cap * sizeof(*s));
			if (!s) {
				*err = -ENOMEM;
				return NULL;
			}
			a->samples = s;
			a->capsamples = cap;
		}
		size_t i = a->nsamples++;
		struct trawl_analysis_sample *sp = a->samples;
		comm = sample_comm(a, h, comm, tid, cpu, cb);
		/* below keep_longest: sift up, so that the heap holds once full */
		while (a->o.keep_longest && i > 0 && sp[(i - 1) / 2].dur > dur) {
			sp[i] = sp[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		sp[i] = (struct trawl_analysis_sample){ .ts = ts, .dur = dur, .tid = tid, .cpu = cpu,
							.host = h->name, .row = r };
		snprintf(sp[i].comm, sizeof(sp[i].comm), "%s", comm);
		a->last_sample = &sp[i];
	}
	return r;
}

/* ------------------------------------------------------- hosts, threads */

/* The host of ev's trace (a class is one trace's: once per class). */
/* Whether trace t recorded only some threads' events (the kernel
 * recorder's trawl_pid_filter env). */
static bool pid_filtered(const struct trawl_reader_trace *t)
{
	const struct trawl_ctf_trace *m = trawl_reader_trace_meta(t);
	const struct trawl_ctf_env *e = m ? trawl_ctf_trace_env(m, "trawl_pid_filter") : NULL;
	return e && e->is_int && e->ival;
}

/* The host of ev's trace (once per event class: each trace's classes
 * say whether it was filtered). */
static struct host *host_of(struct trawl_analysis *a, const struct trawl_event *ev)
{
	const struct trawl_reader_trace *tr = trawl_reader_stream_trace(ev->stream);
	const char *name = trawl_reader_trace_hostname(tr);
	for (size_t i = 0; i < a->nhosts; i++)
		if (!strcmp(a->hosts[i].name, name)) {
			a->hosts[i].filtered |= pid_filtered(tr);
			return &a->hosts[i];
		}
	struct host *n = realloc(a->hosts, (a->nhosts + 1) * sizeof(*n));
	if (!n)
		return NULL;
	a->hosts = n;
	struct host *h = &a->hosts[a->nhosts];
	memset(h, 0, sizeof(*h));
	/* a copy: rows and samples name their host after the reader is gone */
	if (!(h->name = strdup(name)))
		return NULL;
	tr_tables_init(&h->ks);
	h->filtered = pid_filtered(tr);
	h->first = h->last = ev->ts;
	a->nhosts++;
	return h;
}

static struct thr *thr_add(struct host *h, int64_t tid);

static inline struct thr *thr_get(struct host *h, int64_t tid)
{
	/* a thread's index never changes: a small cache before the map (an
	 * index whose thread has another tid is a miss; zeroed is fine) */
	uint32_t c = h->tcache[(uint64_t)tid % THR_CACHE];
	if (likely(c < h->nthr && h->thr[c].tid == tid))
		return &h->thr[c];
	return thr_add(h, tid);
}

/* thr_get()'s miss: from the map, or a new thread. */
static __attribute__((noinline)) struct thr *thr_add(struct host *h, int64_t tid)
{
	uint32_t *c = &h->tcache[(uint64_t)tid % THR_CACHE];
	uint32_t *v = imap_find(&h->tids, (uint64_t)tid);
	if (v) {
		*c = *v;
		return &h->thr[*v];
	}
	if (h->nthr == h->capthr) {
		size_t cap = h->capthr ? 2 * h->capthr : 256;
		struct thr *t = realloc(h->thr, cap * sizeof(*t));
		if (!t)
			return NULL;
		h->thr = t;
		h->capthr = cap;
	}
	if (imap_put(&h->tids, (uint64_t)tid, (uint32_t)h->nthr) < 0)
		return NULL;
	*c = (uint32_t)h->nthr;
	struct thr *t = &h->thr[h->nthr++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->run_since = t->woken = t->sys_ts = t->preempted = NONE;
	t->prio = INT32_MIN;
	return t;
}

/* A thread already known, or NULL (never adds one: the others stay put). */
static struct thr *thr_find(struct host *h, int64_t tid)
{
	uint32_t *v = imap_find(&h->tids, (uint64_t)tid);
	return v ? &h->thr[*v] : NULL;
}

/* Two threads at once: the second thr_get() may move the first. */
static int thr_get2(struct host *h, int64_t a, int64_t b, struct thr **pa, struct thr **pb)
{
	struct thr *t = thr_get(h, a);
	if (!t)
		return -ENOMEM;
	size_t ia = (size_t)(t - h->thr);
	if (!(*pb = thr_get(h, b)))
		return -ENOMEM;
	*pa = &h->thr[ia];
	return 0;
}

static struct cpu *cpu_add(struct host *h, uint32_t n);

static inline struct cpu *cpu_get(struct host *h, uint32_t n)
{
	return likely(n < h->ncpus) ? &h->cpus[n] : cpu_add(h, n);
}

/* cpu_get()'s miss: the host's CPUs up to n. */
static __attribute__((noinline)) struct cpu *cpu_add(struct host *h, uint32_t n)
{
	if (n >= 4096)
		return NULL;
	if (n >= h->ncpus) {
		struct cpu *c = realloc(h->cpus, (n + 1) * sizeof(*c));
		if (!c)
			return NULL;
		for (size_t i = h->ncpus; i <= n; i++) {
			c[i].irq_ts = NONE;
			for (int j = 0; j < 16; j++)
				c[i].soft_ts[j] = NONE;
		}
		h->cpus = c;
		h->ncpus = n + 1;
	}
	return &h->cpus[n];
}

static inline __attribute__((always_inline)) int64_t ival(const struct trawl_analysis *a, enum field_id f, const struct trawl_event *ev,
		    int64_t dflt)
{
	const union trawl_ctf_value *v = a->f[f] ? trawl_field_value(a->f[f], ev) : NULL;
	return v ? v->i : dflt;
}

/* A string field into buf (cap bytes, NUL-terminated); NULL when absent. */
static const char *sval(const struct trawl_analysis *a, enum field_id f,
			const struct trawl_event *ev, char *buf, size_t cap)
{
	const union trawl_ctf_value *v = a->f[f] ? trawl_field_value(a->f[f], ev) : NULL;
	if (!v || !v->s.p)
		return NULL;
	size_t n = strnlen(v->s.p, v->s.len);
	n = n < cap - 1 ? n : cap - 1;
	memcpy(buf, v->s.p, n);
	buf[n] = 0;
	return buf;
}

/* The model's thread tid of h, NULL when it knows none. */
static inline const struct ithread *kthr(const struct host *h, int64_t tid)
{
	return tr_ks_thread(&h->ks, tid);
}

/* The thread CPU n of h runs (the model's), -1: unknown. */
static inline int64_t cur_tid(const struct host *h, uint32_t n)
{
	return tr_ks_cpu_tid(&h->ks, n);
}

/* Thread tid's name generation (struct ithread's names): a row per name. */
static inline uint32_t tnames(const struct host *h, int64_t tid)
{
	const struct ithread *k = tid > 0 ? kthr(h, tid) : NULL;
	return k ? k->names : 0;
}

/* Name id as the kernel's comm (15 bytes at most): buf (16 bytes) holds
 * a longer one's first 15. */
static const char *comm15(const struct trawl_analysis *a, uint32_t id, char *buf)
{
	const char *n = tr_state_str(&a->str, id);
	if (likely(strnlen(n, 16) < 16))
		return n;
	memcpy(buf, n, 15);
	buf[15] = 0;
	return buf;
}

/* Thread tid's name as the kernel's comm, "" when the model knows none;
 * the idle thread (tid 0) is CPU cpu's (swapper/N). buf: 16 bytes. */
static const char *tcomm(const struct trawl_analysis *a, const struct host *h, int64_t tid,
			 uint32_t cpu, char *buf)
{
	uint32_t id = 0;
	if (tid == 0) {
		const struct icpu *c = tr_ks_cpu(&h->ks, cpu);
		id = c ? c->idle : 0;
	} else {
		const struct ithread *k = kthr(h, tid);
		id = k ? k->comm : 0;
	}
	return comm15(a, id, buf);
}

/* tcomm(), "?" when unknown: a row's label */
static const char *comm_of(const struct trawl_analysis *a, const struct host *h, int64_t tid,
			   uint32_t cpu, char *buf)
{
	const char *n = tcomm(a, h, tid, cpu, buf);
	return n[0] ? n : "?";
}

/* ------------------------------------------------------- cputop */

static void label_comm(struct trawl_analysis_row *r, const char *comm, int64_t id);

/* t ran on cpu from since to end: its row (of its name now) and the CPU's. */
static int cputop_ran(struct trawl_analysis *a, struct host *h, const struct thr *t, uint32_t cpu,
		      int64_t since, int64_t end)
{
	int err = 0;
	char buf[16];
	const struct ithread *k = kthr(h, t->tid);	/* (never the idle thread) */
	const char *comm = comm15(a, k ? k->comm : 0, buf);
	struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_THREAD, t->tid,
					      k ? k->names : 0, since, end, t->tid, cpu, comm,
					      &err);
	if (r)
		label_comm(r, comm[0] ? comm : "?", t->tid);
	r = sample(a, h, TRAWL_ANALYSIS_CPU, cpu, 0, since, end, t->tid, cpu, comm, &err);
	if (r && !r->label[0])
		snprintf(r->label, sizeof(r->label), "CPU %u", cpu);
	return err;
}

static int cputop(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev,
		  enum ev_kind k)
{
	if (k != K_SWITCH)
		return 0;
	int err = 0;
	int64_t prev = ival(a, F_PREV_TID, ev, -1), next = ival(a, F_NEXT_TID, ev, -1);
	struct thr *p, *n;
	if (thr_get2(h, prev, next, &p, &n))
		return -ENOMEM;
	/* a thread seen first leaving a CPU ran since the slice's start (or
	 * its host's first event, when the host's trace starts later): the
	 * CPU's thread before the switch was unknown */
	int64_t start = a->begin > h->first ? a->begin : h->first;	/* this host's */
	int64_t since = p->run_since;
	if (since == NONE && a->was < 0)
		/* not before what the model knows of it (its fork, its
		 * wake-up): a thread forked during the trace did not run
		 * from its start */
		since = a->was_since > start ? a->was_since : start;
	else if (since == NONE && a->was != prev && a->was_since != INT64_MIN)
		/* the kernel's switch onto the CPU is not in the trace (the
		 * model counts it): from its estimate, within this slice */
		since = a->was_since > a->begin ? a->was_since : a->begin;
	if (prev != 0 && since != NONE)
		err = cputop_ran(a, h, p, ev->cpu, since, ev->ts);
	p->run_since = NONE;
	n->run_since = next != 0 ? ev->ts : NONE;
	return err;
}

/*
 * A sched_process_exec: the thread, on its CPU, is its new program from
 * now on; its time so far is its old name's (a row of that name), and it
 * goes on from the exec (the model then gives it the new name).
 */
static int cputop_exec(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev)
{
	int64_t tid = ival(a, F_EXEC_TID, ev, -1);
	struct thr *t = tid > 0 ? thr_find(h, tid) : NULL;
	if (!t || t->run_since == NONE || ev->ts < t->run_since)
		return 0;
	int err = cputop_ran(a, h, t, ev->cpu, t->run_since, ev->ts);
	t->run_since = ev->ts;
	return err;
}

/* the threads still on a CPU at the slice's end */
static int cputop_close(struct trawl_analysis *a, int64_t all, bool last)
{
	int err = 0;
	for (size_t hi = 0; hi < a->nhosts; hi++) {
		struct host *h = &a->hosts[hi];
		/* at the end, a host whose trace ended before: up to its last event */
		int64_t end = last && h->last < all ? h->last : all;
		for (size_t i = 0; i < h->ks.ncpus; i++) {
			int64_t tid = h->ks.cpus[i].tid;
			struct thr *t = tid > 0 ? thr_get(h, tid) : NULL;
			if (!t || t->run_since == NONE || end < t->run_since)
				continue;
			int e = cputop_ran(a, h, t, (uint32_t)i, t->run_since, end);
			err = err ? err : e;
			t->run_since = end;	/* the next slice goes on from there */
		}
	}
	return err;
}

/* ------------------------------------------------------- schedlat */

static int schedlat(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev,
		    enum ev_kind k)
{
	int err = 0;
	if (k == K_WAKEUP) {
		int64_t tid = ival(a, F_WAKE_TID, ev, -1);
		/* a thread running on some CPU is not woken */
		for (size_t i = 0; i < h->ks.ncpus; i++)
			if (h->ks.cpus[i].tid == tid)
				return 0;
		struct thr *t = thr_get(h, tid);
		if (!t)
			return -ENOMEM;
		t->prio = (int)ival(a, F_WAKE_PRIO, ev, t->prio);
		if (t->woken == NONE)
			t->woken = ev->ts;
		return 0;
	}
	if (k != K_SWITCH)
		return 0;
	int64_t prev = ival(a, F_PREV_TID, ev, -1), next = ival(a, F_NEXT_TID, ev, -1);
	struct thr *p, *n;
	if (thr_get2(h, prev, next, &p, &n))
		return -ENOMEM;
	n->prio = (int)ival(a, F_NEXT_PRIO, ev, n->prio);
	/*
	 * Switched out still runnable (no sleeping state: 0, or only the
	 * kernel's preemption mark TASK_REPORT_MAX, 0x100): preempted, until
	 * it runs again. A wake-up meanwhile is not one (it was not asleep).
	 */
	if (prev != 0 && (ival(a, F_PREV_STATE, ev, 1) & 0xff) == 0)
		p->preempted = ev->ts;
	/* it ran, so it waits for no wake-up: when the switch onto its CPU
	 * is not in the trace, that wait's end is unknown (no sample), and
	 * its next switch in is not that wait's */
	if (prev != 0)
		p->woken = NONE;
	if (n->preempted == NONE && n->woken == NONE)
		return 0;
	char buf[16];
	const struct ithread *kn = next > 0 ? kthr(h, next) : NULL;
	const char *comm = next > 0 ? comm15(a, kn ? kn->comm : 0, buf)
				    : tcomm(a, h, next, ev->cpu, buf);
	uint32_t names = kn ? kn->names : 0;
	if (n->preempted != NONE) {
		struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_PREEMPT, next, names,
						      n->preempted, ev->ts, next,
						      ev->cpu, comm, &err);
		if (r) {
			label_comm(r, comm[0] ? comm : "?", next);
			r->prio = n->prio;
		}
		n->preempted = NONE;
		n->woken = NONE;
		return err;
	}
	if (n->woken != NONE) {
		struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_THREAD, next, names,
						      n->woken, ev->ts, next, ev->cpu,
						      comm, &err);
		if (r) {
			label_comm(r, comm[0] ? comm : "?", next);
			r->prio = n->prio;
		}
		n->woken = NONE;
	}
	return err;
}

/* ------------------------------------------------------- syscalls */

/* The syscall of an exit event's class: its index in the names seen, so
 * that each trace's (each host's) class of one syscall counts in one row.
 * UINT32_MAX on ENOMEM. */
static uint32_t sys_id(struct trawl_analysis *a, const struct trawl_ctf_event_class *cls)
{
	uint32_t *id = &a->sysid[cls->index];
	if (*id != UINT32_MAX)
		return *id;
	const char *name = cls->name + strlen("syscall_exit_");
	size_t i = 0;
	while (i < a->nsys && strcmp(a->sysnames[i], name))
		i++;
	if (i == a->nsys) {
		char **n = realloc(a->sysnames, (a->nsys + 1) * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		a->sysnames = n;
		if (!(n[i] = strdup(name)))
			return UINT32_MAX;
		a->nsys++;
	}
	return *id = (uint32_t)i;
}

static int syscalls(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev,
		    enum ev_kind k)
{
	if (k != K_SYS_ENTRY && k != K_SYS_EXIT)
		return 0;
	int64_t tid = ival(a, F_TID, ev, -1);
	if (tid < 0) {			/* no tid context: the CPU's current thread */
		tid = cur_tid(h, ev->cpu);
		if (tid < 0)
			return 0;
	}
	struct thr *t = thr_get(h, tid);
	if (!t)
		return -ENOMEM;
	if (k == K_SYS_ENTRY) {
		t->sys_ts = ev->ts;
		t->sys_cls = ev->cls->index;
		return 0;
	}
	if (t->sys_ts == NONE)
		return 0;
	int err = 0;
	uint32_t id = sys_id(a, ev->cls);
	if (id == UINT32_MAX)
		return -ENOMEM;
	const char *name = a->sysnames[id];
	struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_SYSCALL, id, 0,
					      t->sys_ts, ev->ts, tid, ev->cpu, NULL, &err);
	int64_t ret = ival(a, F_RET, ev, 0);
	if (r) {
		if (!r->label[0])
			snprintf(r->label, sizeof(r->label), "%s", name);
		if (ret < 0)
			r->errors++;
		if (a->last_sample)
			a->last_sample->ret = ret;
	}
	t->sys_ts = NONE;
	return err;
}

/* ------------------------------------------------------- irq */

static const char *const softirq_names[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
};

static int irq(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev,
	       enum ev_kind k)
{
	struct cpu *c;
	int err = 0;
	switch (k) {
	case K_IRQ_ENTRY: {
		if (!(c = cpu_get(h, ev->cpu)))
			return -ENOMEM;
		c->irq_ts = ev->ts;
		c->irq = ival(a, F_IRQ, ev, -1);
		/* the label now: the name is on the entry only */
		char nb[48];
		const char *name = sval(a, F_IRQ_NAME, ev, nb, sizeof(nb));
		if (name && (a->o.cpu < 0 || (int)ev->cpu == a->o.cpu)) {
			struct trawl_analysis_row *r = row_get(a, h, TRAWL_ANALYSIS_HARDIRQ, c->irq, 0);
			if (!r)
				return -ENOMEM;
			if (!strchr(r->label, '<'))
				snprintf(r->label, sizeof(r->label), "%lld <%s>", (long long)c->irq,
					 name);
		}
		return 0;
	}
	case K_IRQ_EXIT: {
		if (!(c = cpu_get(h, ev->cpu)))
			return -ENOMEM;
		int64_t n = ival(a, F_IRQ, ev, -1);
		if (c->irq_ts == NONE || n != c->irq)
			return 0;
		int64_t tid = cur_tid(h, ev->cpu);
		struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_HARDIRQ, n, 0, c->irq_ts,
						      ev->ts, tid, ev->cpu, NULL, &err);
		if (r && !r->label[0])
			snprintf(r->label, sizeof(r->label), "%lld", (long long)n);
		c->irq_ts = NONE;
		return err;
	}
	case K_SOFT_ENTRY:
	case K_SOFT_EXIT: {
		int64_t v = ival(a, F_VEC, ev, -1);
		if (v < 0 || v >= 16 || !(c = cpu_get(h, ev->cpu)))
			return v < 0 || v >= 16 ? 0 : -ENOMEM;
		if (k == K_SOFT_ENTRY) {
			c->soft_ts[v] = ev->ts;
			return 0;
		}
		if (c->soft_ts[v] == NONE)
			return 0;
		int64_t tid = cur_tid(h, ev->cpu);
		struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_SOFTIRQ, v, 0, c->soft_ts[v],
						      ev->ts, tid, ev->cpu, NULL, &err);
		if (r && !r->label[0])
			snprintf(r->label, sizeof(r->label), "%lld <%s>", (long long)v,
				 v < 10 ? softirq_names[v] : "?");
		c->soft_ts[v] = NONE;
		return err;
	}
	default:
		return 0;
	}
}

/* ------------------------------------------------------- iolatency */

/* A thread's or process's row named "comm (id)", the last name seen (a
 * block request issued while exec reads the program is the old name's). */
static void label_comm(struct trawl_analysis_row *r, const char *comm, int64_t id)
{
	/* at every sample: a loop, not strlen() and strncmp() (callgrind) */
	const char *l = r->label, *c = comm;
	while (*c && *l == *c) {
		l++;
		c++;
	}
	if (*c || *l != ' ')
		snprintf(r->label, sizeof(r->label), "%s (%lld)", comm, (long long)id);
}

static uint64_t rq_key(int64_t dev, int64_t sector)
{
	return mix((uint64_t)dev) ^ (uint64_t)sector;
}

/* The syscall I/O types (lttng-analyses' lists, their table's rows);
 * IO_RW (splice, sendfile64) counts as a read and as a write. */
enum { IO_NONE, IO_OPEN, IO_READ, IO_WRITE, IO_SYNC, IO_RW, IO_UNSET = 0xff };

static const char *const io_names[] = { "", "Open", "Read", "Write", "Sync" };

static uint8_t io_type(const char *name)
{
	static const struct { const char *n; uint8_t t; } t[] = {
		{ "open", IO_OPEN }, { "openat", IO_OPEN }, { "socket", IO_OPEN },
		{ "fcntl", IO_OPEN }, { "dup", IO_OPEN }, { "dup2", IO_OPEN }, { "dup3", IO_OPEN },
		{ "read", IO_READ }, { "recvmsg", IO_READ }, { "recvfrom", IO_READ },
		{ "readv", IO_READ }, { "pread", IO_READ }, { "pread64", IO_READ },
		{ "preadv", IO_READ }, { "write", IO_WRITE }, { "sendmsg", IO_WRITE },
		{ "sendto", IO_WRITE }, { "writev", IO_WRITE }, { "pwrite", IO_WRITE },
		{ "pwrite64", IO_WRITE }, { "pwritev", IO_WRITE }, { "sync", IO_SYNC },
		{ "sync_file_range", IO_SYNC }, { "fsync", IO_SYNC }, { "fdatasync", IO_SYNC },
		{ "splice", IO_RW }, { "sendfile64", IO_RW },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (!strcmp(name, t[i].n))
			return t[i].t;
	return IO_NONE;
}

/*
 * The row of t's process (not a second sample: the filters passed for the
 * type's row): its pid, or the thread alone when the trace never said
 * (no state dump, no fork). Named after the process's main thread when
 * known (the last name wins: a fork's child that runs exec is the new
 * program), else after t.
 */
static struct trawl_analysis_row *io_process(struct trawl_analysis *a, struct host *h,
					     struct thr *t, uint32_t cpu)
{
	int64_t id;
	if (t->prow_gen == a->gen && t->ppids == h->ks.pids) {
		id = t->prow_id;	/* no thread's process changed since */
	} else {
		const struct ithread *k = kthr(h, t->tid);
		id = k && k->pid >= 0 ? k->pid : t->tid;	/* its tgid */
		t->ppids = h->ks.pids;
	}
	struct trawl_analysis_row *r;
	if (t->prow_gen == a->gen && t->prow_id == id) {
		r = &a->rows[t->prow];
		/* named after its main thread, and no name changed since */
		if (t->plabel == h->ks.names)
			return r;
	} else {
		if (!(r = row_get(a, h, TRAWL_ANALYSIS_PROCESS, id, 0)))
			return NULL;
		t->prow = (uint32_t)(r - a->rows);
		t->prow_gen = a->gen;
		t->prow_id = id;
	}
	char mb[16], tb[16];
	const char *m = id > 0 ? tcomm(a, h, id, cpu, mb) : "";
	bool main_named = m[0];
	const char *own = main_named ? m : tcomm(a, h, t->tid, cpu, tb);
	label_comm(r, own[0] ? own : "?", id);
	/* else the last thread's name wins: checked at each sample */
	t->plabel = main_named ? h->ks.names : h->ks.names - 1;
	return r;
}

/* One syscall I/O sample into the row of its type and its process's. */
static int io_sample(struct trawl_analysis *a, struct host *h, struct thr *t, int type,
		     const struct trawl_event *ev, int64_t ret)
{
	int err = 0;
	struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_SYSCALL, type, 0, t->sys_ts,
					      ev->ts, t->tid, ev->cpu, NULL, &err);
	if (!r)
		return err;
	if (!r->label[0])
		snprintf(r->label, sizeof(r->label), "%s", io_names[type]);
	uint64_t bytes = ret > 0 && type != IO_OPEN && type != IO_SYNC ? (uint64_t)ret : 0;
	r->errors += ret < 0;
	r->bytes += bytes;
	if (a->last_sample) {
		a->last_sample->ret = ret;
		a->last_sample->bytes = bytes;
	}
	if (!(r = io_process(a, h, t, ev->cpu)))
		return -ENOMEM;
	row_add(r, ev->ts - t->sys_ts);	/* sample() computed it: no overflow */
	r->errors += ret < 0;
	r->bytes += bytes;
	r->read_bytes += type == IO_READ ? bytes : 0;
	r->write_bytes += type == IO_WRITE ? bytes : 0;
	return 0;
}

/* A read/write/open/sync-family syscall: entry -> the same thread's exit,
 * as lttng-iolatencystats' syscall table (the CPU's current thread). */
static int io_syscall(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev,
		      enum ev_kind k)
{
	uint32_t ci = ev->cls->index;
	if (k == K_SYS_ENTRY && a->iot[ci] == IO_UNSET)
		a->iot[ci] = io_type(ev->cls->name + strlen("syscall_entry_"));
	/* no thread of the host in an I/O syscall: an exit, or the entry
	 * of another syscall, changes nothing (no thread looked up) */
	if (!h->io_pending && (k == K_SYS_EXIT || a->iot[ci] == IO_NONE))
		return 0;
	int64_t tid = ival(a, F_TID, ev, NONE);
	if (tid == NONE)	/* no tid context: the CPU's current thread */
		tid = cur_tid(h, ev->cpu);
	if (tid < 0)
		return 0;
	struct thr *t = thr_get(h, tid);
	if (!t)
		return -ENOMEM;
	if (k == K_SYS_ENTRY) {
		if (t->sys_ts != NONE)
			h->io_pending--;
		t->sys_ts = NONE;
		/* fcntl opens a file only as F_DUPFD (0) */
		if (a->iot[ci] == IO_NONE ||
		    (a->iot[ci] == IO_OPEN && ival(a, F_FCNTL_CMD, ev, 0) != 0 &&
		     !strcmp(ev->cls->name, "syscall_entry_fcntl")))
			return 0;
		t->sys_ts = ev->ts;
		t->sys_cls = ci;
		h->io_pending++;
		return 0;
	}
	if (t->sys_ts == NONE)
		return 0;
	int type = a->iot[t->sys_cls];
	int64_t ret = ival(a, F_RET, ev, 0);
	int err = io_sample(a, h, t, type == IO_RW ? IO_READ : type, ev, ret);
	if (!err && type == IO_RW)
		err = io_sample(a, h, t, IO_WRITE, ev, ret);
	t->sys_ts = NONE;
	h->io_pending--;
	return err;
}

/* A lttng_statedump_block_device { dev, diskname }: the host's name of dev. */
static int disk_named(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev)
{
	char name[32];
	int64_t dev = ival(a, F_BD_DEV, ev, -1);
	if (dev < 0 || !sval(a, F_BD_NAME, ev, name, sizeof(name)) || !name[0])
		return 0;
	size_t i = 0;
	while (i < h->ndisks && h->disks[i].dev != dev)
		i++;
	if (i == h->ndisks) {
		if (h->ndisks >= 4096)
			return 0;	/* (bounded: a state dump's disks and partitions) */
		struct disk *d = realloc(h->disks, (h->ndisks + 1) * sizeof(*d));
		if (!d)
			return -ENOMEM;
		h->disks = d;
		h->ndisks++;
	}
	h->disks[i].dev = dev;
	snprintf(h->disks[i].name, sizeof(h->disks[i].name), "%s", name);
	return 0;
}

static const char *disk_name(const struct host *h, int64_t dev)
{
	for (size_t i = 0; i < h->ndisks; i++)
		if (h->disks[i].dev == dev)
			return h->disks[i].name;
	return NULL;
}

static int iolatency(struct trawl_analysis *a, struct host *h, const struct trawl_event *ev,
		     enum ev_kind k)
{
	if (k == K_SYS_ENTRY || k == K_SYS_EXIT)
		return io_syscall(a, h, ev, k);
	if (k == K_SDBLOCK)
		return disk_named(a, h, ev);
	if (k != K_RQ_ISSUE && k != K_RQ_COMPLETE)
		return 0;
	int64_t dev = ival(a, F_DEV, ev, -1), sector = ival(a, F_SECTOR, ev, -1);
	int64_t nr = ival(a, F_NR_SECTOR, ev, 0);
	if (nr == 0)
		return 0;
	uint64_t key = rq_key(dev, sector);
	if (key == IMAP_EMPTY)
		key = 0;
	uint32_t *v = imap_find(&h->rq, key);
	if (k == K_RQ_ISSUE) {
		int64_t tid = ival(a, F_RQ_TID, ev, -1);
		uint32_t slot;
		if (v)
			slot = *v;	/* issued again: the latest counts */
		else if (h->nfree)
			slot = h->rq_free[--h->nfree];
		else {
			if (h->nreqs == h->capreqs) {
				size_t cap = h->capreqs ? 2 * h->capreqs : 64;
				struct req *q = realloc(h->reqs, cap * sizeof(*q));
				uint32_t *f = realloc(h->rq_free, cap * sizeof(*f));
				if (f)
					h->rq_free = f;
				if (!q || !f) {
					if (q)
						h->reqs = q;
					return -ENOMEM;
				}
				h->reqs = q;
				h->capreqs = cap;
			}
			slot = (uint32_t)h->nreqs++;
		}
		if (imap_put(&h->rq, key, slot) < 0)
			return -ENOMEM;
		struct req *q = &h->reqs[slot];
		q->ts = ev->ts;
		q->tid = tid;
		q->bytes = (uint64_t)nr * 512;
		q->cpu = ev->cpu;
		char buf[16];
		snprintf(q->comm, sizeof(q->comm), "%s",
			 tid >= 0 ? comm_of(a, h, tid, ev->cpu, buf) : "?");
		q->names = tnames(h, tid);
		return 0;
	}
	if (!v)
		return 0;
	struct req q = h->reqs[*v];
	h->rq_free[h->nfree++] = *v;
	imap_del(&h->rq, key);	/* memory: the requests in flight, not the trace's */
	int err = 0;
	bool failed = ival(a, F_ERROR, ev, 0) != 0;
	struct trawl_analysis_row *r = sample(a, h, TRAWL_ANALYSIS_DISK, dev, 0, q.ts, ev->ts, q.tid,
					      q.cpu, q.comm, &err);
	if (r) {
		/* the state dump's name of the disk ("vda"), else (major,minor) */
		if (!r->label[0] || r->label[0] == '(') {
			const char *name = disk_name(h, dev);
			if (name)
				snprintf(r->label, sizeof(r->label), "%s", name);
			else if (!r->label[0])
				snprintf(r->label, sizeof(r->label), "(%lld,%lld)",
					 (long long)(dev >> 20), (long long)(dev & 0xfffff));
		}
		r->bytes += q.bytes;
		r->errors += failed;
		if (a->last_sample)
			a->last_sample->bytes = q.bytes;
	}
	int64_t dur;

	if (err || __builtin_sub_overflow(ev->ts, q.ts, &dur))	/* (sample() counted it) */
		return err;
	/* the issuing thread's row: not a second sample */
	if (q.tid >= 0 && (a->o.tid < 0 || q.tid == a->o.tid) && comm_ok(a, q.comm) &&
	    !(a->o.min_ns && dur < a->o.min_ns) && !(a->o.max_ns && dur > a->o.max_ns) &&
	    (a->o.cpu < 0 || (int)q.cpu == a->o.cpu)) {
		r = row_get(a, h, TRAWL_ANALYSIS_THREAD, q.tid, q.names);
		if (!r)
			return -ENOMEM;
		label_comm(r, q.comm, q.tid);
		row_add(r, dur);
		r->bytes += q.bytes;
		r->errors += failed;
	}
	return 0;
}

/* ------------------------------------------------------- the table */

#define KB(k) (1u << (k))
#define K_SYS (KB(K_SYS_ENTRY) | KB(K_SYS_EXIT))
/* The kinds the kernel model is fed (lib/kstate): names, tgids, each
 * CPU's thread, and (K_WAKEUP, for the analyses that see it) wake-ups:
 * when a switch onto a CPU is not in the trace, a thread's time there is
 * from its wake-up (tr_ks_on_since()). The others' changes (a system
 * call's, an IRQ's, a block request's) no analysis reads from the model:
 * it is not given them. */
#define K_COMMON (KB(K_SWITCH) | KB(K_FORK) | KB(K_EXEC) | KB(K_SDPROC))

static const struct analysis_def defs[] = {
	{ "cputop", "CPU usage per thread and CPU", cputop, KB(K_SWITCH) | KB(K_WAKEUP) },
	{ "schedlat", "wake-up to run latency per thread (and its priority)", schedlat,
	  KB(K_SWITCH) | KB(K_WAKEUP) },
	{ "iolatency", "block and syscall I/O latency, size per disk, thread, process", iolatency,
	  K_SYS | KB(K_RQ_ISSUE) | KB(K_RQ_COMPLETE) | KB(K_SDBLOCK) },
	{ "irq", "hard and soft IRQ counts and durations", irq,
	  KB(K_IRQ_ENTRY) | KB(K_IRQ_EXIT) | KB(K_SOFT_ENTRY) | KB(K_SOFT_EXIT) },
	{ "syscalls", "per syscall count, min/avg/max/stddev duration, errors", syscalls, K_SYS },
};

const char *trawl_analysis_name(size_t i, const char **help)
{
	if (i >= ARRAY_SIZE(defs))
		return NULL;
	if (help)
		*help = defs[i].help;
	return defs[i].name;
}

/* ------------------------------------------------------- the sink */

static enum ev_kind classify(const char *n)
{
	static const struct { const char *name; enum ev_kind k; } t[] = {
		{ "sched_switch", K_SWITCH }, { "sched_wakeup", K_WAKEUP },
		{ "sched_wakeup_new", K_WAKEUP }, { "sched_process_fork", K_FORK },
		{ "sched_process_exec", K_EXEC }, { "lttng_statedump_process_state", K_SDPROC },
		{ "irq_handler_entry", K_IRQ_ENTRY }, { "irq_handler_exit", K_IRQ_EXIT },
		{ "irq_softirq_entry", K_SOFT_ENTRY }, { "irq_softirq_exit", K_SOFT_EXIT },
		{ "block_rq_issue", K_RQ_ISSUE }, { "block_rq_complete", K_RQ_COMPLETE },
		{ "lttng_statedump_block_device", K_SDBLOCK },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (!strcmp(n, t[i].name))
			return t[i].k;
	if (!strncmp(n, "syscall_entry_", 14))
		return K_SYS_ENTRY;
	if (!strncmp(n, "syscall_exit_", 13))
		return K_SYS_EXIT;
	return K_OTHER;
}

static void slice_reset(struct trawl_analysis *a)
{
	a->gen++;			/* the rows' indexes kept in threads go */
	a->nrows = 0;
	a->nsamples = 0;
	imap_clear(&a->rowmap);
}

/* The thread rows' processes, as the model knows them now (once a
 * slice: a fork or a state dump line may come after a thread's row). */
static void rows_pid(struct trawl_analysis *a)
{
	const struct host *h = NULL;
	for (size_t i = 0; i < a->nrows; i++) {
		struct trawl_analysis_row *r = &a->rows[i];
		bool proc = r->kind == TRAWL_ANALYSIS_PROCESS;
		if (r->kind != TRAWL_ANALYSIS_THREAD && r->kind != TRAWL_ANALYSIS_PREEMPT && !proc)
			continue;
		if (!h || h->name != r->host)
			for (size_t j = 0; j < a->nhosts; j++)
				if (a->hosts[j].name == r->host)
					h = &a->hosts[j];
		const struct ithread *k = h && h->name == r->host && r->id > 0 ? kthr(h, r->id) : NULL;
		if (!proc)
			r->pid = k && k->pid >= 0 ? k->pid : -1;
		r->cgroup = k && k->cgroup ? tr_state_str(&a->str, k->cgroup) : NULL;
	}
}

/* Closes the slice at end: period() reads it; the last slice's results
 * stay for the caller (the accessors), the others are reset. */
static int slice_close(struct trawl_analysis *a, int64_t end, bool last)
{
	int r = 0;
	if (a->def->fn == cputop)
		r = cputop_close(a, end, last);
	rows_pid(a);
	a->end = end;
	if (a->o.period)
		a->o.period(a->o.arg, a);
	if (last)
		return r;
	slice_reset(a);
	a->begin = end;
	return r;
}

static int start(void *self, struct trawl_reader *r)
{
	struct trawl_analysis *a = self;
	char err[256];
	a->r = r;
	a->nkinds = 0;			/* this reader's classes */
	tr_kin_finish(&a->kin);
	int rc = tr_kin_start(&a->kin, r);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < NFIELDS; i++) {
		a->f[i] = trawl_field_bind(r, field_specs[i].spec, field_specs[i].type,
					   TRAWL_FIELD_OPTIONAL, err, sizeof(err));
		/* ENOENT: events match, none has the field (not in these traces) */
		if (!a->f[i] && errno != ENOENT && errno != EINVAL)
			return -errno;
	}
	return 0;
}

/* Class name's kind for this analysis: K_OTHER (only its time counts)
 * unless the model or the analysis' handler needs it; the classes wants()
 * keeps, so that the decoder's batch ends are taken as nothing more. */
static enum ev_kind kind_of(const struct trawl_analysis *a, const char *name)
{
	enum ev_kind k = classify(name);
	return KB(k) & (K_COMMON | a->def->kinds) ? k : K_OTHER;
}

static int events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_analysis *a = self;
	size_t nc = trawl_reader_nclasses(a->r);
	if (nc > a->nkinds) {
		uint8_t *k = realloc(a->kinds, nc);
		if (!k)
			return -ENOMEM;
		a->kinds = k;
		uint32_t *ch = realloc(a->chost, nc * sizeof(*ch));
		if (!ch)
			return -ENOMEM;
		a->chost = ch;
		uint8_t *io = realloc(a->iot, nc);
		if (!io)
			return -ENOMEM;
		a->iot = io;
		uint32_t *sy = realloc(a->sysid, nc * sizeof(*sy));
		if (!sy)
			return -ENOMEM;
		a->sysid = sy;
		int64_t *cl = realloc(a->clast, nc * sizeof(*cl));
		if (!cl)
			return -ENOMEM;
		a->clast = cl;
		for (size_t c = a->nkinds; c < nc; c++)
			cl[c] = INT64_MIN;
		memset(k + a->nkinds, K_UNSET, nc - a->nkinds);
		memset(io + a->nkinds, IO_UNSET, nc - a->nkinds);
		memset(sy + a->nkinds, 0xff, (nc - a->nkinds) * sizeof(*sy));
		a->nkinds = nc;
	}
	for (size_t i = 0; i < n; i++) {
		const struct trawl_event *e = &ev[i];
		uint32_t ci = e->cls->index;
		if (ci >= a->nkinds)
			continue;
		if (a->kinds[ci] == K_UNSET) {
			struct host *h = host_of(a, e);
			if (!h)
				return -ENOMEM;
			a->chost[ci] = (uint32_t)(h - a->hosts);
			a->kinds[ci] = (uint8_t)kind_of(a, e->cls->name);
		}
		if (!a->any) {
			a->any = true;
			a->begin = e->ts;
			a->slice_end = a->o.interval_ns ? e->ts + a->o.interval_ns : INT64_MAX;
		}
		while (e->ts >= a->slice_end) {
			int r = slice_close(a, a->slice_end, false);
			if (r < 0)
				return r;
			a->slice_end += a->o.interval_ns;
		}
		a->end = e->ts;
		enum ev_kind k = a->kinds[ci];
		if (k == K_OTHER) {	/* (its host not touched) */
			a->clast[ci] = e->ts;
			continue;
		}
		struct host *h = &a->hosts[a->chost[ci]];
		h->last = e->ts;
		/* cputop's exec: the time so far is the old name's */
		int r = k == K_EXEC && a->def->fn == cputop ? cputop_exec(a, h, e) : 0;
		/* the model first (names, tgids, the CPU's thread), the
		 * handler then sees the CPU's thread before a switch in was */
		if (k == K_SWITCH) {
			a->was = cur_tid(h, e->cpu);
			if (a->def->fn == cputop)	/* its only reader */
				a->was_since = tr_ks_on_since(&h->ks, e->cpu,
							      ival(a, F_PREV_TID, e, -1));
		}
		if (!r && KB(k) & (K_COMMON | KB(K_WAKEUP)))
			r = tr_kin_take(&a->kin, &a->str, &h->ks, e);
		if (!r)
			r = a->def->fn(a, h, e, k);
		if (r < 0)
			return r;
	}
	return 0;
}

void tr_analysis_class_seen(struct trawl_analysis *a, uint32_t ci, int64_t ts)
{
	if (ci < a->nkinds && a->kinds[ci] != K_UNSET && ts > a->clast[ci])
		a->clast[ci] = ts;
}

static int finish(void *self, struct trawl_reader *r)
{
	(void)r;
	struct trawl_analysis *a = self;
	if (!a->any)
		return 0;
	for (size_t c = 0; c < a->nkinds; c++)
		if (a->kinds[c] != K_UNSET && a->clast[c] > a->hosts[a->chost[c]].last)
			a->hosts[a->chost[c]].last = a->clast[c];
	return slice_close(a, a->end, true);
}

/*
 * A live reader waited and nothing came: the slices that end before the
 * streams' low-water mark (trawl_reader_low(): no stream will bring an
 * event before it, from their beacons) are closed now, not at the next
 * event, so a quiet session's reports still come within an interval.
 */
static int idle(void *self, struct trawl_reader *r)
{
	struct trawl_analysis *a = self;
	if (!a->any || !a->o.interval_ns)
		return 0;
	int64_t low = trawl_reader_low(r);
	while (low != INT64_MIN && low >= a->slice_end) {
		int ret = slice_close(a, a->slice_end, false);
		if (ret < 0)
			return ret;
		a->slice_end += a->o.interval_ns;
	}
	return 0;
}

/* The others' events are decoded but not merged (trawl_sink_ops.wants):
 * for events() they would be K_OTHER, only time. */
static bool wants(void *self, const struct trawl_ctf_event_class *cls)
{
	return kind_of(self, cls->name) != K_OTHER;
}

static const struct trawl_sink_ops sink_ops = {
	.sz = sizeof(sink_ops), .name = "analysis", .start = start, .events = events,
	.finish = finish, .idle = idle, .wants = wants,
};

struct trawl_analysis *trawl_analysis_new(const struct trawl_analysis_opts *o, char *err,
					  size_t errlen)
{
	const struct analysis_def *def = NULL;
	if (!o || o->sz < sizeof(*o) || !o->name) {
		tr_seterr(err, errlen, EINVAL, "no analysis named");
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(defs) && !def; i++)
		if (!strcmp(defs[i].name, o->name))
			def = &defs[i];
	if (!def) {
		tr_seterr(err, errlen, EINVAL, "no analysis '%s'", o->name);
		errno = EINVAL;
		return NULL;
	}
	struct trawl_analysis *a = calloc(1, sizeof(*a));
	if (!a || (o->comm && !(a->comm = strdup(o->comm)))) {
		free(a);
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	a->o = *o;
	a->o.comm = a->comm;
	a->def = def;
	a->gen = 1;
	return a;
}

struct trawl_sink trawl_analysis_sink(struct trawl_analysis *a)
{
	return (struct trawl_sink){ .ops = &sink_ops, .self = a };
}

void trawl_analysis_free(struct trawl_analysis *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nhosts; i++) {
		struct host *h = &a->hosts[i];
		free((char *)h->name);
		tr_tables_release(&h->ks);
		free(h->thr);
		imap_release(&h->tids);
		free(h->cpus);
		free(h->reqs);
		free(h->rq_free);
		free(h->disks);
		imap_release(&h->rq);
	}
	free(a->hosts);
	tr_kin_free(&a->kin);
	tr_state_strtab_release(&a->str);
	free(a->rows);
	imap_release(&a->rowmap);
	free(a->samples);
	free(a->kinds);
	free(a->chost);
	free(a->clast);
	free(a->iot);
	free(a->sysid);
	for (size_t i = 0; i < a->nsys; i++)
		free(a->sysnames[i]);
	free(a->sysnames);
	free(a->comm);
	free(a);
}

size_t trawl_analysis_nrows(const struct trawl_analysis *a)
{
	return a->nrows;
}

const struct trawl_analysis_row *trawl_analysis_row_at(const struct trawl_analysis *a, size_t i)
{
	return i < a->nrows ? &a->rows[i] : NULL;
}

size_t trawl_analysis_nsamples(const struct trawl_analysis *a)
{
	return a->nsamples;
}

const struct trawl_analysis_sample *trawl_analysis_sample_at(const struct trawl_analysis *a,
							     size_t i)
{
	return i < a->nsamples ? &a->samples[i] : NULL;
}

uint64_t trawl_analysis_impossible(const struct trawl_analysis *a)
{
	return a->impossible;
}

uint64_t trawl_analysis_unseen_switches(const struct trawl_analysis *a, const char *host)
{
	uint64_t n = 0;
	for (size_t i = 0; i < a->nhosts; i++)
		if (!a->hosts[i].filtered && (!host || !strcmp(host, a->hosts[i].name)))
			n += a->hosts[i].ks.unseen_switches;
	return n;
}

void trawl_analysis_range(const struct trawl_analysis *a, int64_t *begin, int64_t *end)
{
	*begin = a->begin;
	*end = a->end;
}

bool tr_analysis_by_host(const struct trawl_analysis *a)
{
	return a->o.by_host;
}

const char *trawl_analysis_kind(const struct trawl_analysis *a)
{
	return a->def->name;
}
