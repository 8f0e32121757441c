/* SPDX-License-Identifier: MIT */
/*
 * trawl/top.h - `trawl top` as a library object: one source's events fed
 * to the five standard analyses at once (cputop, schedlat, iolatency, irq,
 * syscalls; trawl/analysis.h), sliced every interval of trace time, each
 * slice kept as per-interval aggregates (the analyses' rows, without their
 * histograms, and a few longest samples) in a history bounded in trace
 * time (10 minutes by default), never raw events. Queries read one slice
 * of the history as the rows of a view (CPU, scheduling latency, I/O,
 * IRQ, syscalls), per host or grouped across hosts by process name,
 * filtered by host and name globs, sorted by any column.
 *
 * The object is a sink (trawl_top_sink()) of a reader the caller opens
 * over trace files or a live relay session and runs (trawl_pipe_run()).
 * Conventions as in trawl/pipe.h: -errno or NULL + errno, _free accepts
 * NULL, messages in (err, errlen).
 */
#ifndef TRAWL_TOP_H
#define TRAWL_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trawl/pipe.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum trawl_top_view {
	TRAWL_TOP_CPU,			/* cputop: CPU time per process or thread */
	TRAWL_TOP_SCHED,		/* schedlat: wake-up to run latency */
	TRAWL_TOP_IO,			/* iolatency: syscall I/O per process, block I/O per disk */
	TRAWL_TOP_IRQ,			/* irq: hard and soft IRQs */
	TRAWL_TOP_SYSCALLS,		/* syscalls: per system call */
	TRAWL_TOP_NVIEWS,
};

/* The columns every row has; a view shows some (trawl_top_view_columns()). */
enum trawl_top_column {
	TRAWL_TOP_COL_CPU_PCT,		/* CPU time over the slice's duration, % of one CPU */
	TRAWL_TOP_COL_COUNT,		/* samples: runs, wake-ups, syscalls, IRQs, requests */
	TRAWL_TOP_COL_ERRORS,
	TRAWL_TOP_COL_SUM,		/* ns: CPU time, time waited, time in syscalls ... */
	TRAWL_TOP_COL_AVG,		/* ns */
	TRAWL_TOP_COL_MAX,		/* ns */
	TRAWL_TOP_COL_READ,		/* bytes read (I/O) */
	TRAWL_TOP_COL_WRITE,		/* bytes written (I/O); a disk: its requests' bytes */
	TRAWL_TOP_COL_THREADS,		/* threads summed in the row */
	TRAWL_TOP_NCOLS,
};

/* The view's name ("cpu", "sched", "io", "irq", "syscalls"), NULL past the last. */
const char *trawl_top_view_name(enum trawl_top_view v);
/* A column's name, as JSON keys and table headers have it ("cpu_pct", ...). */
const char *trawl_top_column_name(enum trawl_top_column c);
/* The columns view v shows, in order, into out (TRAWL_TOP_NCOLS at most):
 * how many. The first is its default sort (descending). */
size_t trawl_top_view_columns(enum trawl_top_view v, enum trawl_top_column *out);

struct trawl_top;

struct trawl_top_opts {
	size_t sz;			/* sizeof(struct trawl_top_opts) */
	int64_t interval_ns;		/* a slice; 0: 1 s; at least 1 ms */
	int64_t history_ns;		/* slices kept, in trace time; 0: 10 minutes */
	/* Only threads of this name (a glob) count in the analyses (their
	 * CPU time, latencies, syscalls), as `trawl analyze --comm`; NULL: all. */
	const char *comm;
	/* Live: a host's data age is the wall clock (CLOCK_REALTIME) minus
	 * its newest event; without it, the age is unknown (-1). */
	bool live;
	/* A slice closed and is in the history (its index: trawl_top_nslices()
	 * - 1). From the run's thread; it may block (a display's refresh). */
	void (*slice)(void *arg, struct trawl_top *t);
	/* Optional: the reader waited and nothing came (live), after the
	 * analyses closed what the beacons let them: 0, or -errno to stop
	 * the run (e.g. -ECANCELED: the user quit). */
	int (*idle)(void *arg, struct trawl_top *t);
	void *arg;
	/* The longest samples kept per slice of cputop (runs) and schedlat
	 * (waits), for a drill-down; 0: 32. */
	size_t samples;
	/* The rows a slice keeps once a newer one closed, per host, analysis
	 * and kind of row (threads, syscalls, IRQs, disks; not CPUs): the
	 * first this many by their figure (CPU time, latency sum, count), the
	 * others summed into one row "other" (id and pid -1), so that the
	 * history's size does not grow with the threads that ever lived. The
	 * newest slice keeps every row. 0: 64. */
	size_t history_rows;
};

/* NULL + errno (EINVAL: a bad option; ENOMEM), message in err. */
struct trawl_top *trawl_top_new(const struct trawl_top_opts *o, char *err, size_t errlen);
/* Its sink: give it to trawl_pipe_run() (one run per object). */
struct trawl_sink trawl_top_sink(struct trawl_top *t);
void trawl_top_free(struct trawl_top *t);

/* Slices in the history, oldest first: index 0 .. n-1 (older ones drop out
 * past history_ns; trawl_top_dropped() says how many). */
size_t trawl_top_nslices(const struct trawl_top *t);
uint64_t trawl_top_dropped(const struct trawl_top *t);
/* Slice i's bounds (ns since the epoch): [begin, end); 0 or -ERANGE. */
int trawl_top_slice_range(const struct trawl_top *t, size_t i, int64_t *begin, int64_t *end);

/* A host's header line in slice i. */
struct trawl_top_host {
	const char *name;		/* env.hostname */
	int64_t newest;			/* its newest event so far (ns), INT64_MIN: none */
	int64_t age_ns;			/* live: now - newest when queried; -1 unknown */
	/* Gone quiet: no event for more than 5 s and 3 intervals of trace
	 * time at the slice's end (live or replayed). Its rows are left out
	 * of the queries and its cpu_pct is 0: cputop would carry the threads
	 * running at its last event on for ever. */
	bool down;
	uint64_t events;		/* events in the slice */
	double events_per_s;		/* over the slice's duration */
	uint64_t discarded;		/* events its tracer discarded in the slice */
	uint64_t discarded_total;	/* ... since the start */
	uint64_t unseen_switches;	/* switches onto a CPU its trace lacks, since
					 * the start (trawl_analysis_unseen_switches()):
					 * its threads' CPU time there is from wake-ups */
	double cpu_pct;			/* its CPUs' busy time, % of one CPU (cputop) */
	unsigned ncpus;			/* CPUs seen running something so far */
};
size_t trawl_top_nhosts(const struct trawl_top *t, size_t slice);
/* Host j of slice i (valid until the next event of the run or _free),
 * NULL when out of range. */
const struct trawl_top_host *trawl_top_host_at(const struct trawl_top *t, size_t slice,
					       size_t j);

struct trawl_top_query {
	size_t sz;			/* sizeof(struct trawl_top_query) */
	enum trawl_top_view view;
	size_t slice;			/* index in the history */
	const char *host;		/* glob on host names; NULL: all */
	const char *comm;		/* glob on process (thread) names; NULL: all */
	bool group;			/* rows summed across hosts by name (host "*") */
	bool threads;			/* CPU, sched, I/O: a row per thread, not per process */
	int64_t pid;			/* > 0: only this process's threads (drill-down) */
	enum trawl_top_column sort;	/* a column of the view; TRAWL_TOP_NCOLS: its first */
	bool ascending;
	size_t limit;			/* rows at most; 0: all */
	/* With group: the processes' and threads' rows (cpu, sched, io)
	 * summed across hosts by their cgroup (the kernel model's: the state
	 * dump's, a parent's at a fork; "-" unknown), not by name; the row's
	 * name is the cgroup (its last 63 bytes). The other views' rows stay
	 * grouped by name. */
	bool by_cgroup;
};

struct trawl_top_row {
	const char *host;		/* its host; grouped: "*" */
	const char *kind;		/* "process", "thread", "disk", "syscall", "irq",
					 * "softirq" */
	int64_t pid, tid;		/* -1 when not a thread's (a process row: tid -1) */
	char name[64];			/* comm, or the syscall, IRQ, disk */
	unsigned nhosts;		/* hosts summed (grouped), else 1 */
	int64_t begin, end;		/* the slice's bounds */
	double v[TRAWL_TOP_NCOLS];	/* by column */
	/* A process's or thread's row: its cgroup (a grouped row: the
	 * group's); NULL unknown or another kind. Valid while t is. */
	const char *cgroup;
};

/*
 * The rows of q's view in slice q->slice, sorted: *out (the caller frees
 * it with free()) and *n. 0, -ERANGE (no such slice), -EINVAL, -ENOMEM.
 */
int trawl_top_query(const struct trawl_top *t, const struct trawl_top_query *q,
		    struct trawl_top_row **out, size_t *n);

/* A longest sample of slice i (drill-down): a run on a CPU (cputop) or a
 * wait from wake-up to run (schedlat). */
struct trawl_top_sample {
	const char *host;
	const char *what;		/* "ran" or "waited" */
	int64_t ts, dur;		/* begin, duration (ns) */
	int64_t pid, tid;
	uint32_t cpu;
	char comm[16];
};
size_t trawl_top_nsamples(const struct trawl_top *t, size_t slice);
const struct trawl_top_sample *trawl_top_sample_at(const struct trawl_top *t, size_t slice,
						   size_t j);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
