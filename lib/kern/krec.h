/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/krec.h - the kernel recorder of `trawl record`: ftrace
 * tracepoints of a private tracefs instance, read page by page from the
 * per-CPU raw buffers, decoded with libtraceevent and written as a CTF
 * trace with LTTng's kernel event and field names (docs/kernel.md).
 *
 * Only the trawl binary uses this (libtrawl stays free of libtracefs and
 * libtraceevent). Functions return 0 or -errno, with a message in the
 * (err, errlen) buffer.
 *
 * Life cycle: tr_krec_new() (instance, events, filters, buffers: nothing is
 * recorded yet), tr_krec_start() (tracing on, state dump, reader thread),
 * tr_krec_stop() (tracing off, the buffers drained, trace closed, losses
 * checked against the kernel's per-CPU stats), tr_krec_free() (the instance
 * destroyed). The instance is also destroyed when tr_krec_new() fails.
 */
#ifndef TRAWL_CLI_KREC_H
#define TRAWL_CLI_KREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trawl/ctf.h"

struct krec_opts {
	const char *dir;		/* the kernel trace directory (SESSION/HOST/kernel) */
	const char *hostname;
	const char *const *events;	/* "sys:event" (globs allowed) or presets */
	size_t nevents;
	size_t buffer_kb;		/* per CPU; 0: 4096 */
	const char *filter;		/* ftrace filter applied to every event, or NULL */
	const pid_t *pids;		/* set_event_pid (with their threads), or NULL */
	size_t npids;
	bool follow_fork;		/* children of pids are traced too */
	bool statedump;			/* processes, threads, files at start */
	bool tid_context;		/* event context { tid } (default true in record) */
	int clock;			/* KREC_CLOCK_* */
	int rt_prio;			/* reader thread SCHED_FIFO priority, 0: none */
	unsigned period_ms;		/* reader sleep when the buffers are idle; 0: 50 */
	size_t io_queue;		/* the trace writer's I/O queue, bytes; 0: none */
	bool exclude_self;		/* our threads in set_event_notrace_pid */
	/*
	 * Streaming (docs/relay.md): the trace also (dir NULL: only) goes to
	 * the trawl relay at relay, as session relay_session; the clock is
	 * then CLOCK_MONOTONIC (its metadata is sent before the first
	 * packet). live_ms: every live_ms the reader flushes each CPU's
	 * packet, or tells the relay the CPU was idle (a beacon); 0: packets
	 * go when full.
	 */
	const char *relay, *relay_session;
	unsigned live_ms;
	/*
	 * A flight recorder (not with relay): the instance's per-CPU buffers
	 * (buffer_kb each, overwrite mode) keep the newest events; nothing is
	 * read nor written (dir unused) but by tr_krec_snapshot_to().
	 */
	bool flight;
	/* syscall entries keep ftrace's pointers for their paths (openat's
	 * filename ...): no eBPF program (docs/kernel.md, "File names") */
	bool no_paths;
	/* the directory dir is beneath (trawl_ctf_writer_opts.root): nothing
	 * below it is reached through a symbolic link; NULL: dir */
	const char *root;
};

enum { KREC_CLOCK_AUTO, KREC_CLOCK_TSC, KREC_CLOCK_MONO };

/* Per CPU results, filled by tr_krec_stop(). */
struct krec_cpu_stats {
	uint64_t events;		/* written to the trace */
	uint64_t lost;			/* counted as events_discarded */
	uint64_t pages;			/* sub-buffers read */
	uint64_t bytes;			/* ring-buffer bytes read */
};

struct krec;

/* Streamed live (live_ms): the live timer's ticks, the relay's DEMANDs
 * seen (a viewer waits), and the cuts made at once for them (docs/kernel.md,
 * "Buffers and the reader"). Counted by the reader thread; read them once
 * it stopped. */
struct krec_live_stats {
	uint64_t ticks, demands, fast_cuts;
};

/* Prepares everything; NULL + errno on error, message in err. */
struct krec *tr_krec_new(const struct krec_opts *o, char *err, size_t errlen);
/*
 * Starts tracing, then the reader thread (which first writes the state
 * dump). More pids may have been added with tr_krec_add_pid() before.
 */
int tr_krec_start(struct krec *k, char *err, size_t errlen);
/* After tr_krec_start(): returns once the state dump of the processes,
 * threads and files of that moment is written (at once without a reader
 * thread or a dump), so that a command started after it is not in the
 * middle of its work while the dump is still being taken. */
void tr_krec_wait_statedump(struct krec *k);
/* Adds a pid (and its threads) to the instance's set_event_pid. */
int tr_krec_add_pid(struct krec *k, pid_t pid, char *err, size_t errlen);
/*
 * A flight recorder, recording: its per-CPU buffers read out now (the
 * newest events, the page being written included; the ones the kernel
 * overwrote counted as discarded), with a state dump, as a kernel trace
 * in dir. What is read is gone from the buffers: the next snapshot holds
 * the events after it. The figures (tr_krec_stats, statedump events) and
 * the clock (tr_krec_clock_get) are then this trace's. 0 or -errno.
 * With relay: streamed to that trawl relay as relay_session/HOST/kernel
 * (dir NULL: there only), the mono clock only.
 */
int tr_krec_snapshot_to(struct krec *k, const char *dir, const char *relay,
			const char *relay_session, char *err, size_t errlen);
/* Stops tracing, drains, closes the trace (a flight recorder: stops
 * tracing). Idempotent. */
int tr_krec_stop(struct krec *k, char *err, size_t errlen);
/* Destroys the instance; accepts NULL. */
void tr_krec_free(struct krec *k);

/* The live figures; NULL when not streamed live. */
const struct krec_live_stats *tr_krec_live_stats(const struct krec *k);
unsigned tr_krec_ncpus(const struct krec *k);
const struct krec_cpu_stats *tr_krec_stats(const struct krec *k, unsigned cpu);
/* Events written so far on every CPU: may be called from another thread
 * while recording (a progress display). */
uint64_t tr_krec_events(const struct krec *k);
/*
 * Streamed to a relay, once stopped: the events the trace's writer took
 * (kernel and state dump) and those of them the relay did not store (cut
 * off: the disk full, a quota; or lost), counted as discarded. 0 when
 * exact, -ENODATA when the relay did not say where it cut (then at most
 * that), -ENOENT when not streamed or not stopped.
 */
int tr_krec_relay_discarded(const struct krec *k, uint64_t *events, uint64_t *discarded);
/* Events written by the state dump. */
uint64_t tr_krec_statedump_events(const struct krec *k);
/*
 * Why the paths of openat & co. are pointers in this recording of syscall
 * entries (the eBPF program is not there: NO_BPF build, not root,
 * --no-file-names ...), or NULL (they are strings, or no syscall is
 * recorded). Say it once.
 */
const char *tr_krec_paths_why(const struct krec *k);
struct tr_kpath_stats;
/* The path names' counts (pathnames.h): 0, or -ENOENT without them. */
int tr_krec_paths_stats(const struct krec *k, struct tr_kpath_stats *st);
/* The trace clock used ("x86-tsc" or "mono"). */
const char *tr_krec_clock_name(const struct krec *k);
/* Is the trace clock the TSC (x86-tsc), not CLOCK_MONOTONIC? */
bool tr_krec_is_tsc(const struct krec *k);
/*
 * After tr_krec_stop(): the clock the kernel trace declares (freq, offset_s,
 * offset), so that a user-space trace of the same recording (same raw TSC
 * cycles) can declare the identical clock and merge exactly. Returns 0,
 * or -EAGAIN before tr_krec_stop() (streamed: before tr_krec_start(); a
 * flight recorder: before its first snapshot, whose clock it then is).
 */
int tr_krec_clock_get(const struct krec *k, uint64_t *freq, int64_t *offset_s, int64_t *offset);
/* Splits a kernel event spec ("sys:event", "sys/event", globs in either
 * part, or a bare event name: system "*") into its system and event
 * (truncated to 255 bytes). */
void tr_krec_spec_split(const char *spec, char sysg[256], char evg[256]);

/* ---- syscall names (syscalls.c, from this machine's kernel headers) */

/* The name of syscall nr (x86-64), or NULL. */
const char *tr_krec_syscall_name(long nr);

/* ---- event conversion (convert.c) */

struct krec_conv;
struct tep_handle;

/*
 * The converter from ftrace records to CTF events: it owns the writer's
 * kernel stream class and creates event classes as event types (and
 * syscalls) first appear. tep must hold every enabled event's format.
 */
struct krec_conv *tr_krec_conv_new(struct trawl_ctf_writer *w, struct tep_handle *tep,
				bool tid_context);
void tr_krec_conv_free(struct krec_conv *c);
struct trawl_ctf_stream_class *tr_krec_conv_stream_class(struct krec_conv *c);
/*
 * Converts one ftrace record (data, size bytes, starting with common_type)
 * and writes it to ws at ts. Returns 1 written, 0 skipped (unknown type),
 * KREC_CONV_WAIT (nothing written: the path of this syscall entry may
 * still come; try again later, or once final), -errno on a write error.
 */
int tr_krec_conv_record(struct krec_conv *c, struct trawl_ctf_wstream *ws, uint64_t ts,
		     const void *data, unsigned size);
#define KREC_CONV_WAIT 2

struct kpath;
/*
 * The path arguments of the syscalls of tr_kpath_args (openat's filename
 * ...) become strings, taken from paths (pathnames.h); call it before the
 * first record. NULL: pointers, as ftrace has them.
 */
void tr_krec_conv_paths(struct krec_conv *c, struct kpath *paths);
/* final: a path not known yet is not waited for (the pointer is written). */
void tr_krec_conv_final(struct krec_conv *c, bool final);

/* ---- kernel event families (families.c; the table: family.h) */

/* The LTTng name trawl writes for ftrace event sys:name (static buffer). */
const char *tr_krec_lttng_name(const char *sys, const char *name);
/* The ftrace system a preset (-k sched) records, or NULL if name is none. */
const char *tr_krec_preset_system(const char *name);
/*
 * The presets, "sched, syscalls, ...", into buf (cap bytes, truncated,
 * NUL-terminated when cap > 0). Returns the length the whole list needs.
 */
size_t tr_krec_presets(char *buf, size_t cap);
/*
 * The tracepoints of this kernel that preset name records, as
 * "SYSTEM:EVENT" strings into *out (the caller frees each and the array;
 * NULL when there is none), *n of them. 0, -ENOENT (no such preset) or
 * -ENOMEM. (krec.c)
 */
int tr_krec_preset_events(const char *name, char ***out, size_t *n);
/*
 * Appends "\nhint: ..." to the message in err (errlen bytes) about the
 * kernel event spec that matched nothing: a subsystem's name gets how to
 * select all its events ('timer:*'), anything else the closest preset,
 * subsystem or tracepoint of this kernel ("did you mean"). (krec.c)
 */
void tr_krec_add_hint(char *err, size_t errlen, const char *spec);

/* ---- state dump (statedump.c) */

/* A small /proc file into buf (cap bytes, NUL-terminated): its length, or
 * -1 when it cannot be read. */
ssize_t tr_krec_read_file(const char *path, char *buf, size_t cap);

/*
 * Writes lttng_statedump_start, one lttng_statedump_process_state per
 * thread, one lttng_statedump_file_descriptor per open file of each
 * process, lttng_statedump_end, into ws with the trace clock's timestamps.
 * Returns the number of events written or -errno.
 */
long tr_krec_statedump(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class *sc,
		    struct trawl_ctf_wstream *ws, bool tsc, bool tid_context);

#endif
