/* SPDX-License-Identifier: MIT */
/*
 * lib/export/export-internal.h - what the export formats share: the core
 * sink (export.c) turns each merged event into one of a few records
 * (a context switch, a wake-up, a slice's begin or end, an instant), keeps
 * the hosts, threads and processes seen (their names and processes, and
 * each CPU's thread, are the kernel model's: lib/kstate), pairs slices
 * and finds the flows;
 * a format (perfetto.c, chrome.c) is a row of writer functions.
 */
#ifndef TRAWL_EXPORT_INTERNAL_H
#define TRAWL_EXPORT_INTERNAL_H

#include <stdio.h>

#include "trawl/export.h"
#include "internal.h"
#include "pipe/pipe-internal.h"	/* tr_format_json_values() */
#include "util/json.h"

#define TR_X_COMM 32			/* names kept per thread and process */
#define TR_X_MAX_CPUS 65536		/* scheduler events of CPUs above: skipped */
#define TR_X_LANES 64			/* open slices per process at once (a bit mask) */

struct tr_xhost {
	char *name;
	uint32_t machine;		/* 1.. (hosts sorted by name) */
	long pindex;			/* in the sync points' hosts, -1: none */
	/* its kernel trace's env (sysname, kernel_release, kernel_version),
	 * NULL when none; the reader's strings, valid during the run */
	const char *sysname, *release, *version;
	void *priv;			/* the format's per-host state */
};

struct tr_xthread {
	uint32_t host;
	int32_t tid, pid;		/* pid -1: unknown */
	char name[TR_X_COMM];
	unsigned flags;			/* the format's */
	uint64_t id;			/* the format's */
};

struct tr_xproc {
	uint32_t host;
	int32_t pid;
	char name[TR_X_COMM];
	uint64_t lanes;			/* lanes with an open slice */
	uint64_t lanes_seen;		/* lanes the format has described */
	unsigned flags;			/* the format's */
	uint64_t id;			/* the format's */
};

/* A context switch, as the kernel's sched_switch (prio: the kernel's,
 * 100 + LTTng's); next_name: the thread switched in as the kernel model
 * names it from now on ("" when unknown). */
struct tr_xswitch {
	const char *prev_comm, *next_comm, *next_name;
	size_t prev_len, next_len;
	int32_t prev_tid, prev_prio, next_tid, next_prio;
	int64_t prev_state;
};

enum tr_xwake { TR_XWAKE_WAKING, TR_XWAKE_WAKEUP, TR_XWAKE_WAKEUP_NEW };

struct tr_xwakeup {
	enum tr_xwake kind;
	const char *comm;
	size_t comm_len;
	int32_t tid, prio, target_cpu;
};

/* A user-space record: where it goes and what ties it to others. */
struct tr_xmark {
	const char *name;		/* the event's name (slices: the stem) */
	size_t name_len;
	struct tr_xthread *thread;	/* NULL: the host's own track */
	struct tr_xproc *proc;		/* NULL when thread is */
	unsigned lane;			/* slices: 0..TR_X_LANES-1 */
	uint64_t slice;			/* slices: a number unique in the export */
	uint64_t flow_out, flow_in;	/* a message sent / received here; 0: none */
	const struct trawl_event *ev;
};

struct tr_export;

/* A format's writer functions: 0 or -errno (ENOMEM, EIO, EFBIG). */
struct tr_xformat {
	const char *name, *help;
	uint64_t max_events;		/* default limit, 0: none */
	/* past max_events the file keeps the first max_events records (its
	 * writers take the one too many back) and the run ends; else the
	 * export fails */
	bool truncates;
	size_t priv_size;		/* bytes of the format's state (x->priv) */
	int (*start)(struct tr_export *x);
	int (*sched_switch)(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
			    const struct tr_xswitch *sw);
	int (*wakeup)(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		      int32_t cur_tid, const struct tr_xwakeup *w);
	int (*slice_begin)(struct tr_export *x, struct tr_xhost *h, int64_t ts,
			   const struct tr_xmark *m);
	int (*slice_end)(struct tr_export *x, struct tr_xhost *h, int64_t ts,
			 const struct tr_xmark *m);
	int (*instant)(struct tr_export *x, struct tr_xhost *h, int64_t ts,
		       const struct tr_xmark *m);
	/* Thread t was renamed at ts on cpu (sched_process_exec: the file's
	 * base name, in t->name), and p (NULL: none), its process, with it:
	 * a track already named is named again, from ts on. */
	int (*rename)(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		      struct tr_xthread *t, struct tr_xproc *p);
	/* Before the file is closed: what is still buffered. */
	int (*finish)(struct tr_export *x);
	void (*release)(struct tr_export *x);
};

TRAWL_HIDDEN extern const struct tr_xformat tr_xformat_perfetto;
TRAWL_HIDDEN extern const struct tr_xformat tr_xformat_chrome;

struct tr_export {
	const struct tr_xformat *fmt;
	void *priv;
	FILE *out;
	struct tr_xhost *hosts;
	size_t nhosts;
	int64_t first_ts;		/* of the run's first event; INT64_MIN before */
	int64_t last_ts;
	struct trawl_export_stats st;
	uint64_t max_events;
	bool fields;			/* trawl_export_opts.fields */
	/* each format's records count against max_events: tr_export_count() */
	struct tr_xthread *threads;
	size_t nthreads, capthreads;
	struct tr_xproc *procs;
	size_t nprocs, capprocs;
	/* the rest is export.c's */
	struct tr_xcore *core;
};

/* One more record written: -EFBIG past max_events. */
static inline int tr_export_count(struct tr_export *x, uint64_t n)
{
	x->st.written += n;
	return x->max_events && x->st.written > x->max_events ? -EFBIG : 0;
}

/* The thread (host, tid) and process (host, pid) of the export's tables,
 * created on first sight (NULL: out of memory). A thread's pointer stays
 * valid until the next tr_export_thread() call, a process's until the
 * next tr_export_proc() (the tables grow). */
TRAWL_HIDDEN struct tr_xthread *tr_export_thread(struct tr_export *x, uint32_t host, int32_t tid);
TRAWL_HIDDEN struct tr_xproc *tr_export_proc(struct tr_export *x, uint32_t host, int32_t pid);

/* A 64-bit mix of a few values (track ids, map keys). */
static inline uint64_t tr_xmix(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;

	h ^= b + 0x94d049bb133111ebull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xd6e8feb96e3a5a4bull;
	return h ^ (h >> 29);
}

#endif
