/* SPDX-License-Identifier: MIT */
/*
 * trawl/analysis.h - the standard analyses of kernel traces, as sinks:
 * cputop, schedlat, iolatency, irq, syscalls (the set lttng-analyses,
 * perf sched and bcc's tools give). Each binds the LTTng-named kernel
 * events it reads by name (docs/pipeline.md), so it runs on trace files
 * and on live relay sessions alike, one host or a cluster's merged hosts.
 *
 * Results are rows (a thread, a CPU, a syscall, an IRQ, a disk) with a
 * count, min / avg / max / stddev of a duration, a sum, bytes, errors and
 * a log2 histogram; and, when asked, the samples themselves (--log).
 * Conventions as in trawl/pipe.h: -errno or NULL + errno, _free accepts
 * NULL.
 */
#ifndef TRAWL_ANALYSIS_H
#define TRAWL_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trawl/pipe.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The i-th analysis' name (and a line of help in *help), NULL past the last. */
const char *trawl_analysis_name(size_t i, const char **help);

struct trawl_analysis;

struct trawl_analysis_opts {
	size_t sz;			/* sizeof(struct trawl_analysis_opts) */
	const char *name;		/* one of trawl_analysis_name() */
	/* Filters on samples: a duration in [min_ns, max_ns] (0: no bound),
	 * a thread (tid >= 0), a process name glob (comm), a CPU (cpu >= 0). */
	int64_t min_ns, max_ns;
	int64_t tid;
	const char *comm;
	int cpu;
	bool by_host;			/* the report per host: the hosts side by side,
					 * --top of each host (rows are always a host's) */
	bool keep_samples;		/* keep every sample (for --log and --top) */
	/*
	 * Slices of interval_ns of trace time (0: one period, the whole
	 * run): when an event comes past a slice's end, the slice closes and
	 * period(arg, a) is called (read the results there: they are reset
	 * after). The last slice closes at finish().
	 */
	int64_t interval_ns;
	void (*period)(void *arg, const struct trawl_analysis *a);
	void *arg;
	/* With keep_samples: keep only the keep_longest longest samples of a
	 * slice (--top N without --log: memory bounded by N); 0: every one. */
	size_t keep_longest;
};

/* NULL + errno (EINVAL: an unknown name, message in err). */
struct trawl_analysis *trawl_analysis_new(const struct trawl_analysis_opts *o, char *err,
					  size_t errlen);
struct trawl_sink trawl_analysis_sink(struct trawl_analysis *a);
void trawl_analysis_free(struct trawl_analysis *a);

enum trawl_analysis_row_kind {
	TRAWL_ANALYSIS_THREAD,		/* a thread: cputop, schedlat, iolatency's processes */
	TRAWL_ANALYSIS_CPU,		/* a CPU: cputop */
	TRAWL_ANALYSIS_SYSCALL,		/* syscalls, iolatency's syscall I/O */
	TRAWL_ANALYSIS_HARDIRQ,
	TRAWL_ANALYSIS_SOFTIRQ,
	TRAWL_ANALYSIS_DISK,		/* iolatency: block requests per device */
	TRAWL_ANALYSIS_PREEMPT,		/* schedlat: a thread preempted, until it runs again */
	TRAWL_ANALYSIS_PROCESS,		/* iolatency: a process's syscall I/O (id: its pid,
					 * or the thread's tid when its pid is unknown) */
};

#define TRAWL_ANALYSIS_HIST 48		/* log2 buckets: [0, 1) us, [1, 2) us, [2, 4) us ... */

struct trawl_analysis_row {
	enum trawl_analysis_row_kind kind;
	const char *host;		/* its host: every row is one host's (a tid, a CPU,
					 * an IRQ, a disk, a syscall of that host) */
	int64_t id;			/* tid, cpu, irq or vector, dev, syscall (its name's
					 * index, in the order seen), pid */
	char label[64];			/* "comm (tid)", "CPU 1", "read", "36 <virtio1-req.0>",
					 * "comm (pid)" */
	uint64_t count, errors;		/* errors: syscalls returning < 0, I/O errors */
	int64_t min, max, sum;		/* ns; cputop: sum is the CPU time */
	double sumsq;			/* of ns, for the stddev */
	uint64_t bytes;			/* iolatency: requested bytes (a process: read + written) */
	int prio;			/* schedlat: the last priority seen (LTTng's) */
	uint64_t hist[TRAWL_ANALYSIS_HIST];
	uint64_t read_bytes, write_bytes;	/* iolatency's processes: of Read, Write syscalls */
	/* A thread's rows (thread, preempted): its name's generation, one
	 * more at each change of its name (an exec, a rename), so that a
	 * thread is a row per name it had: after exec, its new name's. */
	uint32_t names;
	/* A thread's rows (thread, preempted): its process (tgid) as the
	 * kernel model knows it when the slice closes (period(), and after the
	 * run), -1 when unknown; a process row: its id; other rows: -1. */
	int64_t pid;
	/* A thread's rows and a process row: its cgroup as the kernel model
	 * knows it then (the state dump's, a parent's at a fork), NULL when
	 * unknown. Valid until the analysis is given its next event. */
	const char *cgroup;
};

struct trawl_analysis_sample {
	int64_t ts, dur;		/* begin (ns since the epoch), duration (ns) */
	int64_t tid;
	uint32_t cpu;
	const char *host;
	const struct trawl_analysis_row *row;
	char comm[16];
	uint64_t bytes;
	int64_t ret;
};

/* The current slice's rows (valid until the next event or period, and
 * after the run until trawl_analysis_free(), also once the reader is freed). */
size_t trawl_analysis_nrows(const struct trawl_analysis *a);
const struct trawl_analysis_row *trawl_analysis_row_at(const struct trawl_analysis *a, size_t i);
size_t trawl_analysis_nsamples(const struct trawl_analysis *a);
const struct trawl_analysis_sample *trawl_analysis_sample_at(const struct trawl_analysis *a,
							     size_t i);
/* The slice's time range (ns since the epoch): from its first event (or
 * the slice's start) to its last event (or its end). */
void trawl_analysis_range(const struct trawl_analysis *a, int64_t *begin, int64_t *end);
/* The intervals not counted so far (every slice): their ends 2^63 ns or more
 * apart, no duration of int64 (a corrupt timestamp or clock offset). */
uint64_t trawl_analysis_impossible(const struct trawl_analysis *a);
/* The switches onto a CPU the trace lacks, so far (of host, every host
 * when NULL; every slice): a thread seen leaving a CPU, or making a system call there,
 * while the CPU ran another. Some kernels record no event of a CPU's idle
 * thread, its switches away included (docs/kernel.md); the threads' time
 * is then counted from their wake-up. Hosts whose trace recorded some
 * threads only (trawl record -p, --only-command, --filter) are not
 * counted: other threads' switches are absent there by design. */
uint64_t trawl_analysis_unseen_switches(const struct trawl_analysis *a, const char *host);
const char *trawl_analysis_kind(const struct trawl_analysis *a);	/* its name */

/* Reports, as text tables and histograms, or JSON (one object a slice). */
enum {
	TRAWL_ANALYSIS_STATS = 1 << 0,	/* the rows: count, min, avg, max, stddev */
	TRAWL_ANALYSIS_TOP = 1 << 1,	/* the top rows (cputop) or the longest samples */
	TRAWL_ANALYSIS_LOG = 1 << 2,	/* every sample in time order */
	TRAWL_ANALYSIS_FREQ = 1 << 3,	/* a log2 histogram per row */
	TRAWL_ANALYSIS_JSON = 1 << 4,
	TRAWL_ANALYSIS_GMT = 1 << 5,	/* text: times of day in UTC, not local time */
};
struct trawl_analysis_report_opts {
	size_t sz;			/* sizeof(struct trawl_analysis_report_opts) */
	unsigned modes;			/* TRAWL_ANALYSIS_*; 0: STATS */
	unsigned top;			/* rows or samples of TOP; 0: 10 */
};
/* Writes the current slice's report to fd. 0 or -errno (a write error). */
int trawl_analysis_report(const struct trawl_analysis *a, int fd,
			  const struct trawl_analysis_report_opts *o);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
