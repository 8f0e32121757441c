/* SPDX-License-Identifier: MIT */
/*
 * lib/kstate/kstate.h - the one model of a host's kernel state
 * (docs/state.md, "The model"): its CPUs, threads (their states, names
 * after exec, tgid, pending system call), file descriptors and block
 * requests, and the one function that moves it forward.
 *
 * Everything is plain records in flat arrays (strings are ids into a
 * string table the caller keeps, one for all of its hosts), so that a
 * copy (the state system's window base, a checkpoint, a view) is a few
 * memcpy calls. A consumer drives it per event:
 *
 *     event --tr_kin_changes()--> changes (struct chg) --tr_state_apply()--> tables
 *
 * (tr_kin_take() does both) and reads it by key: tr_ks_thread(),
 * tr_ks_cpu(), tr_ks_fd(). What history it keeps is the consumer's: none
 * for an analysis, the changes of a window for the state system
 * (lib/state).
 */
#ifndef TRAWL_KSTATE_H
#define TRAWL_KSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "trawl/state.h"

/* A change (struct trawl_state_change, packed). */
struct chg {
	int64_t ts;
	int64_t a, b;
	uint32_t c;			/* a byte count (<= 2 GiB a call), sectors, a status */
	int32_t tid, tid2;
	uint32_t str, str2;
	int16_t cpu;
	uint8_t kind;
};				/* 48 bytes */

/* Strings: id 0 is "". */
struct strtab {
	char **s;
	size_t n, cap;
	uint32_t *slot;			/* hash -> id + 1; 0 empty */
	size_t nslot;
	size_t bytes;
};

/*
 * An open-addressing table of fixed-size records, each starting with its
 * uint64_t key; linear probing, deletion by backward shift. hint: by a
 * few bits of a key (tr_tab_hint()), the slot where tr_tab_get() last
 * found or made it, a guess checked against that slot's key before any
 * probing: an event's thread or fd is mostly one the events just before
 * it looked up (a system call's entry, its exit, its fd), and a probe
 * through a cluster reads a record per step. A hint names a slot in use
 * or none (>= cap): tr_tab_del() and growth keep it so, so that the key
 * alone tells. Not part of the state: a hint of another key only misses.
 * 1024 of them (4 KiB a table): with 256, bench-state-long's 1,000 fds
 * and 300 threads, used in random order, mostly missed.
 */
#define TR_TAB_HINT_BITS 10
#define TR_TAB_HINTS (1u << TR_TAB_HINT_BITS)
struct tab {
	uint8_t *rec;
	uint8_t *used;
	size_t rsz, cap, n;		/* cap: a power of two, or 0 */
	uint32_t hint[TR_TAB_HINTS];
};

#define TR_KS_MODES 6			/* TRAWL_STATE_CPU_UNKNOWN .. _SOFTIRQ */

struct icpu {
	int32_t tid;			/* -1 unknown */
	uint8_t mode, saved_mode;	/* the mode an IRQ interrupted */
	bool seen;
	int64_t irq;
	int64_t since;
	uint32_t depth;			/* nested IRQ / softirq */
	uint32_t idle;			/* its idle thread's name (tid 0, swapper/N) */
	int64_t on_since;		/* when tid got it: its switch's time, or for a
					 * switch the trace lacks, tr_ks_on_since()'s
					 * estimate; INT64_MIN unknown */
	/* Its time in each mode (enum trawl_state_cpu_mode, ns), from its
	 * first change on, accounted up to acct (the mode's time since then
	 * is tr_ks_cpu_times()'s to add) */
	int64_t acct;
	int64_t mode_ns[TR_KS_MODES];
};

struct ithread {
	uint64_t key;			/* tid */
	int32_t tid, pid, ppid, cpu;	/* pid: its process (tgid), -1 unknown */
	uint32_t comm;			/* its name (after exec: the program's) */
	uint32_t cgroup;		/* the state dump's, its parent's at a fork; 0 unknown */
	uint8_t status;
	bool exited;
	uint32_t syscall;		/* pending system call name, 0 none */
	uint32_t names;			/* one more at each change of a name it had
					 * (an exec, a rename) */
	int64_t since, syscall_since, created;
	int64_t sc_fd, sc_arg;		/* the pending call's fd and count/flags */
	uint32_t sc_path;		/* its path argument, when a string */
	uint32_t io_inflight;
	struct chg origin;
};

struct ifd {
	uint64_t key;			/* pid << 32 | fd */
	int32_t pid, fd;
	uint32_t path;
	int64_t opened;
	uint64_t br, bw, nr, nw;
	struct chg origin;
};

struct irqst {
	uint64_t key;			/* dev << 40 ^ sector */
	uint64_t dev, sector;
	uint32_t nr;
	bool write;
	int32_t tid;
	int64_t inserted, issued;
};

/* One host's state at one time. */
struct tables {
	struct icpu *cpus;
	size_t ncpus;
	struct tab thr, fd, rq;
	int64_t ts;			/* of the last change applied */
	int64_t next_sweep;
	uint64_t gc_requests, gc_syscalls;
	uint32_t names;			/* one more at each change of any thread's name */
	uint32_t pids;			/* one more at each change of any thread's process */
	/* switches the trace lacks (docs/kernel.md, "Switches the kernel does
	 * not record"): a thread seen on a CPU in task context (its switch
	 * out, a system call) while the CPU ran another; a count of this
	 * model's own, not in checkpoints */
	uint64_t unseen_switches;
};

TRAWL_HIDDEN uint32_t tr_state_intern(struct strtab *st, const char *s, size_t len);
TRAWL_HIDDEN const char *tr_state_str(const struct strtab *st, uint32_t id);
TRAWL_HIDDEN int tr_state_strtab_copy(struct strtab *dst, const struct strtab *src);
TRAWL_HIDDEN void tr_state_strtab_release(struct strtab *st);

static inline uint64_t tr_ks_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* key's place in tab's hints: the top bits of key times 2^64 / phi */
static inline size_t tr_tab_hint(uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - TR_TAB_HINT_BITS));
}

/* The slot of key, or t->cap when absent (inline: every event looks up). */
static inline size_t tr_tab_slot(const struct tab *t, uint64_t key)
{
	size_t i = t->hint[tr_tab_hint(key)];
	uint64_t k;

	if (i < t->cap && (memcpy(&k, t->rec + i * t->rsz, sizeof(k)), k == key))
		return i;
	for (i = tr_ks_mix(key) & (t->cap - 1); t->cap && t->used[i]; i = (i + 1) & (t->cap - 1)) {
		memcpy(&k, t->rec + i * t->rsz, sizeof(k));
		if (k == key)
			return i;
	}
	return t->cap;
}

/* The record of key, NULL when absent. */
static inline void *tr_tab_find(const struct tab *t, uint64_t key)
{
	size_t i = tr_tab_slot(t, key);

	return i < t->cap ? t->rec + i * t->rsz : NULL;
}
/* The record of key, which t has not, created zeroed (key set); NULL: ENOMEM. */
TRAWL_HIDDEN void *tr_tab_add(struct tab *t, uint64_t key);

/* The record of key, created zeroed (key set) when absent; NULL: ENOMEM. */
static inline void *tr_tab_get(struct tab *t, uint64_t key, bool *created)
{
	size_t i = tr_tab_slot(t, key);

	if (created)
		*created = i == t->cap;
	if (i == t->cap)
		return tr_tab_add(t, key);
	t->hint[tr_tab_hint(key)] = (uint32_t)i;
	return t->rec + i * t->rsz;
}
TRAWL_HIDDEN void tr_tab_del(struct tab *t, uint64_t key);

TRAWL_HIDDEN int tr_tables_init(struct tables *t);
TRAWL_HIDDEN int tr_tables_copy(struct tables *dst, const struct tables *src);
/* dst (a state, or released) made a copy of src, in its own buffers when
 * they are of src's sizes (no allocation: a checkpoint's shadow); on
 * ENOMEM dst is released. */
TRAWL_HIDDEN int tr_tables_set(struct tables *dst, const struct tables *src);
TRAWL_HIDDEN void tr_tables_release(struct tables *t);
TRAWL_HIDDEN size_t tr_tables_bytes(const struct tables *t);
/* Moves t forward by one change: 0 or -ENOMEM. window > 0: what can no
 * longer be answered a window after it is dropped (a state system's);
 * 0: nothing is (an analysis's). */
TRAWL_HIDDEN int tr_state_apply(struct tables *t, const struct chg *c, int64_t window);
/* Thread tid (created when new) is named id from now on, as a switch
 * names it: 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_state_name(struct tables *t, int64_t tid, uint32_t id);

static inline uint64_t tr_fd_key(int64_t pid, int64_t fd)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)fd;
}

/* ------------------------------------------------------------ reading */

static inline const struct ithread *tr_ks_thread(const struct tables *t, int64_t tid)
{
	return tr_tab_find(&t->thr, (uint64_t)tid);
}

/* CPU n, NULL when no change concerned it yet. */
static inline const struct icpu *tr_ks_cpu(const struct tables *t, uint32_t n)
{
	return n < t->ncpus && t->cpus[n].seen ? &t->cpus[n] : NULL;
}

/* The thread CPU n runs, -1 when unknown. */
static inline int32_t tr_ks_cpu_tid(const struct tables *t, uint32_t n)
{
	return n < t->ncpus ? t->cpus[n].tid : -1;
}

/*
 * Since when thread tid has run on CPU n, as this model knows it before a
 * change that shows it there in task context (a switch out of it, one of
 * its system calls): the switch's time when the CPU's thread is tid; when
 * the CPU ran another thread (the switch onto it is not in the trace),
 * the latest the switch can have been known by: the CPU's last change in
 * the other thread's context, or tid's own last change when later (its
 * wake-up: nothing runs before it is woken; its switch out of another
 * CPU: a preempted thread the kernel moved here). A CPU whose thread is
 * not known yet: the thread's own last change (its fork, its wake-up),
 * the earliest it can have got the CPU. INT64_MIN when unknown.
 */
static inline int64_t tr_ks_on_since(const struct tables *t, uint32_t n, int64_t tid)
{
	const struct icpu *c = tr_ks_cpu(t, n);
	if (!c || c->tid < 0) {
		const struct ithread *th = tid > 0 ? tr_ks_thread(t, tid) : NULL;
		return th ? th->since : INT64_MIN;
	}
	if (c->tid == tid)
		return c->on_since;
	int64_t in = c->since;
	const struct ithread *th = tid > 0 ? tr_ks_thread(t, tid) : NULL;
	if (th && th->since > in)
		in = th->since;
	return in;
}

/*
 * The time t's CPUs spent in each mode (out[TR_KS_MODES], ns, summed over
 * CPUs) from each CPU's first change up to upto (the host's newest time:
 * a CPU idle since its last change is idle until then). A mode's time is
 * what the trace shows: a switch the trace lacks moves its estimated
 * time from idle to user (tr_state_apply()).
 */
static inline void tr_ks_cpu_times(const struct tables *t, int64_t upto, int64_t out[TR_KS_MODES])
{
	for (int m = 0; m < TR_KS_MODES; m++)
		out[m] = 0;
	for (size_t i = 0; i < t->ncpus; i++) {
		const struct icpu *c = &t->cpus[i];
		if (!c->seen)
			continue;
		for (int m = 0; m < TR_KS_MODES; m++)
			out[m] += c->mode_ns[m];
		int64_t from = c->acct > c->since ? c->acct : c->since;
		if (from != INT64_MIN && upto > from && c->mode < TR_KS_MODES)
			out[c->mode] += upto - from;
	}
}

static inline const struct ifd *tr_ks_fd(const struct tables *t, int64_t pid, int64_t fd)
{
	return tr_tab_find(&t->fd, tr_fd_key(pid, fd));
}

/* ------------------------------------------------- events to changes */

/* Families of events (struct tr_kin_class's fam): which a consumer feeds
 * the model (struct tr_kmodel's feed). */
enum {
	TR_KIN_F_NAMES = 1,		/* sched_switch, sched_process_fork/_exec, the state
					 * dump's processes: names, tgids, cgroups, each
					 * CPU's thread, switched-out states */
	TR_KIN_F_WAKEUP = 2,		/* sched_waking, sched_wakeup, sched_wakeup_new */
	TR_KIN_F_EXIT = 4,		/* sched_process_exit */
	TR_KIN_F_SYSCALL = 8,		/* syscall_entry_*, syscall_exit_* */
	TR_KIN_F_IRQ = 16,		/* irq_handler_*, irq_softirq_* */
	TR_KIN_F_BLOCK = 32,		/* block_rq_* */
	TR_KIN_F_FD = 64,		/* file descriptors: the state dump's, and those
					 * system calls make, use and close (with
					 * TR_KIN_F_SYSCALL) */
	TR_KIN_F_ALL = 127,
};

/* A field as one class has it: its place on the class's tape
 * (trawl_field.slot: -1 none, below -1 the event's), and the field. */
struct tr_kin_val {
	const struct trawl_field *f;
	int32_t slot;
};

/* What the model makes of an event class (once per class of a reader). */
struct tr_kin_class {
	uint8_t kind, sem;		/* kind: TR_KIN_UNSEEN, TR_KIN_NONE, or one of change.c's */
	uint8_t fam;			/* its family (TR_KIN_F_*), 0 for TR_KIN_NONE */
	const struct trawl_field *path;	/* its path as a string (openat's filename,
					 * creat's pathname), or NULL */
	uint32_t name;			/* system call name */
	/* A system call's fields, found once for the class (every event
	 * reads them): its thread (the tid context); an entry's fd (the
	 * first of two that the event has: dup's oldfd or fildes,
	 * sendfile's out_fd or fd) and its count (clone's flags, fcntl's
	 * cmd); an exit's return value. */
	struct tr_kin_val tid, fd[2], arg, ret;
};

enum { TR_KIN_UNSEEN, TR_KIN_NONE };

struct tr_kin_fields;

/* A thread's last name, by tid % TR_KIN_NAMES (change.c). */
#define TR_KIN_NAMES 256
struct tr_kin_name {
	int32_t tid;
	uint32_t id;			/* 0: none */
	uint32_t len;			/* its text's length (<= 16) */
	uint64_t w[2];			/* and its first and last 8 bytes */
};

/* The events of one reader turned into changes: its fields, bound by name
 * (LTTng's, as trawl records them), every one optional. Used with one
 * string table. */
struct tr_kin {
	struct tr_kin_class *ci;	/* by class index */
	size_t nci;
	struct tr_kin_fields *f;
	struct tr_kin_name names[TR_KIN_NAMES];
};

/* Binds r's fields (a reader's start). 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_kin_start(struct tr_kin *k, struct trawl_reader *r);
/* Forgets the reader's classes (its end: the next binds anew). */
TRAWL_HIDDEN void tr_kin_finish(struct tr_kin *k);
TRAWL_HIDDEN void tr_kin_free(struct tr_kin *k);
/* tr_kin_class() of a class not classified yet. */
TRAWL_HIDDEN const struct tr_kin_class *tr_kin_classify(struct tr_kin *k, struct strtab *st,
							const struct trawl_ctf_event_class *cls);
/* The class of cls, classified on first sight (names into st); NULL: ENOMEM. */
static inline const struct tr_kin_class *tr_kin_class(struct tr_kin *k, struct strtab *st,
						      const struct trawl_ctf_event_class *cls)
{
	uint32_t i = cls->index;

	if (__builtin_expect(i < k->nci && k->ci[i].kind != TR_KIN_UNSEEN, 1))
		return &k->ci[i];
	return tr_kin_classify(k, st, cls);
}
/* The changes ev makes to cur (read, not changed), in order, as the last
 * n of out: out[2 - n] .. out[1]. n: 0, 1 or 2 (a system call's exit:
 * the file descriptor it made or closed, then the exit); -ENOMEM. */
TRAWL_HIDDEN int tr_kin_changes(struct tr_kin *k, struct strtab *st, const struct tables *cur,
				const struct trawl_event *ev, const struct tr_kin_class *ci,
				struct chg out[2]);
/* tr_kin_class(), tr_kin_changes() and tr_state_apply() (no window) of one
 * event: a consumer keeping no history. 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_kin_take(struct tr_kin *k, struct strtab *st, struct tables *t,
			     const struct trawl_event *ev);
/*
 * The name an event's context gives thread tid (LTTng's procname context:
 * the kernel's comm of the thread at that event), f the event's field:
 * the thread is named so from now on, as a switch names it. 0, or -ENOMEM.
 */
TRAWL_HIDDEN int tr_kin_context_name(struct tr_kin *k, struct strtab *st, struct tables *t,
				     const struct trawl_field *f, const struct trawl_event *ev,
				     int64_t tid);

/* ------------------------------------------ a model per host (model.c) */

/*
 * The model of each host of a reader's traces, for a consumer that keeps
 * no history of it (trawl agg, the view, the exports): one string table,
 * one binding of the fields, the tables of each host by the consumer's
 * own host number (dense, from 0). Fed per event with the families of
 * feed (TR_KIN_F_*): what the consumer reads.
 */
struct tr_kmodel {
	struct tr_kin kin;
	struct strtab str;
	struct tables *host;
	size_t nhost;
	unsigned feed;
};

TRAWL_HIDDEN void tr_kmodel_init(struct tr_kmodel *m, unsigned feed);
/* A reader's start: binds its fields. 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_kmodel_start(struct tr_kmodel *m, struct trawl_reader *r);
TRAWL_HIDDEN void tr_kmodel_release(struct tr_kmodel *m);
/* Host n's tables (created empty on first use); NULL: ENOMEM. */
TRAWL_HIDDEN struct tables *tr_kmodel_host(struct tr_kmodel *m, uint32_t n);
/*
 * ev, an event of host n, into its model when its family is fed: its
 * changes applied, returned as the last of out (out[2 - r] .. out[1]) for
 * the consumer to see what moved. r: 0 (not the model's), 1 or 2; -ENOMEM.
 */
TRAWL_HIDDEN int tr_kmodel_take(struct tr_kmodel *m, uint32_t n, const struct trawl_event *ev,
				struct chg out[2]);

/* Thread tid's name in t ("" when unknown); tid 0, the idle thread, is
 * CPU cpu's (swapper/N). */
static inline uint32_t tr_ks_comm(const struct tables *t, int64_t tid, uint32_t cpu)
{
	if (tid == 0) {
		const struct icpu *c = tr_ks_cpu(t, cpu);
		return c ? c->idle : 0;
	}
	const struct ithread *th = tr_ks_thread(t, tid);
	return th ? th->comm : 0;
}

#endif
