/* SPDX-License-Identifier: MIT */
/*
 * trawl/state.h - the state system: what every CPU, thread, file
 * descriptor and block request of each host was doing at any time, and
 * the events that made it so, from kernel events with LTTng's names
 * (sched_*, syscall_entry_* / syscall_exit_*, irq_*, block_rq_*, and the
 * state dump lttng_statedump_*). docs/state.md describes the design.
 *
 * A state (struct trawl_state) is a sink (trawl/pipe.h): run it on a
 * reader of files or of a live relay session. It keeps, per host, the
 * current state, the state at the start of a moving window (default the
 * last 10 s) and the window's changes; memory is bounded by the window
 * and the live entities, not by the trace's length. Queries:
 *   - trawl_state_at(s, host, t): the state at any t inside the window;
 *   - offline, with checkpoints (opts.checkpoint_ns): the state at any t of
 *     the trace, from the nearest checkpoint and a replay of the trace's
 *     events since (trawl_state_at_files()).
 *
 * Conventions as in trawl/pipe.h: int returns are 0 or -errno, pointer
 * returns NULL with errno set; objects from _new / _at are released with
 * _free, which accepts NULL. A state is used from one thread.
 */
#ifndef TRAWL_STATE_H
#define TRAWL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trawl/pipe.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct trawl_state_opts {
	size_t sz;			/* sizeof(struct trawl_state_opts) */
	/* Detailed history kept behind the newest event, ns (0: 10 s; < 0:
	 * none, only the current state is queried). */
	int64_t window_ns;
	/* Offline: a checkpoint of every host's state each interval of
	 * trace time, ns (0: none). See trawl_state_at_files(). */
	int64_t checkpoint_ns;
	/* Offline, with checkpoint_ns: a checkpoint also after this many
	 * events since the last (0: by time only), so that a replay from one
	 * reads at most so many. */
	uint64_t checkpoint_events;
	/* Offline: keep no window, only the current state and the
	 * checkpoints (the cheapest pass): the state at any t is then
	 * trawl_state_at_files()'s; trawl_state_at() answers only at or after
	 * the newest change. */
	bool no_window;
};

struct trawl_state;

/* A state. NULL + errno (ENOMEM, EINVAL: a bad size). Free with
 * trawl_state_free() after the run. */
struct trawl_state *trawl_state_new(const struct trawl_state_opts *o);
/* Its sink (trawl_pipe_run()); events of every host are welcome. */
struct trawl_sink trawl_state_sink(struct trawl_state *s);
void trawl_state_free(struct trawl_state *s);

/* The time of the newest event the sink was given (of any class: the
 * state is known up to it), and the start of host's window: the time of the
 * last change it no longer holds (INT64_MIN before any). */
int64_t trawl_state_newest(const struct trawl_state *s);
int64_t trawl_state_window_start(const struct trawl_state *s, const char *host);
size_t trawl_state_nhosts(const struct trawl_state *s);
const char *trawl_state_host(const struct trawl_state *s, size_t i);	/* NULL past the last */

/* Memory figures: what the window and the live entities hold. */
struct trawl_state_stats {
	uint64_t events;		/* taken in */
	uint64_t changes;		/* changes held in windows, every host */
	uint64_t threads, fds, requests;/* live entities, every host */
	uint64_t gc_requests;		/* block requests dropped unanswered */
	uint64_t gc_syscalls;		/* syscall entries without their exit */
	uint64_t checkpoints;
	uint64_t bytes;			/* memory held */
};
void trawl_state_stats(const struct trawl_state *s, struct trawl_state_stats *st);

/* ------------------------------------------------------------- entities */

enum trawl_state_cpu_mode {
	TRAWL_STATE_CPU_UNKNOWN,
	TRAWL_STATE_CPU_IDLE,
	TRAWL_STATE_CPU_USER,
	TRAWL_STATE_CPU_SYSCALL,	/* in the kernel, in a system call */
	TRAWL_STATE_CPU_IRQ,
	TRAWL_STATE_CPU_SOFTIRQ,
};

enum trawl_state_thread_status {
	TRAWL_STATE_THREAD_UNKNOWN,
	TRAWL_STATE_THREAD_RUNNING,
	TRAWL_STATE_THREAD_PREEMPTED,	/* runnable, switched out while running */
	TRAWL_STATE_THREAD_WOKEN,	/* runnable, woken up, not yet running */
	TRAWL_STATE_THREAD_BLOCKED,	/* asleep: on a syscall, block I/O, ... */
};

struct trawl_state_cpu {
	uint32_t cpu;
	int64_t tid;			/* the current thread; -1: unknown */
	enum trawl_state_cpu_mode mode;
	int64_t irq;			/* IRQ line or softirq vector (IRQ, SOFTIRQ) */
	int64_t since;			/* when mode began; INT64_MIN: unknown */
};

struct trawl_state_thread {
	int64_t tid, pid, ppid;		/* -1: unknown */
	const char *comm;		/* "" unknown */
	enum trawl_state_thread_status status;
	int64_t since;			/* when status began; INT64_MIN: unknown */
	int64_t cpu;			/* last CPU it ran or was woken on; -1 */
	const char *syscall;		/* in this system call (name), or NULL */
	int64_t syscall_since;
	uint32_t io_inflight;		/* its block requests not completed */
	bool blocked_io;		/* BLOCKED with a block request in flight */
	int64_t created;		/* fork time; INT64_MIN: before the trace */
};

struct trawl_state_fd {
	int64_t pid, fd;
	const char *path;		/* "" unknown */
	int64_t opened;			/* INT64_MIN: before the trace (state dump) */
	uint64_t bytes_read, bytes_written;
	uint64_t reads, writes;		/* successful calls */
};

struct trawl_state_request {
	uint64_t dev, sector;
	uint32_t nr_sector;
	bool write;
	int64_t tid;			/* who queued it; -1 */
	int64_t inserted, issued;	/* INT64_MIN: not seen */
};

/* ------------------------------------------------------------- changes */

/* One event as the state system took it in: what built a state. */
enum trawl_state_change_kind {
	TRAWL_STATE_SWITCH,		/* sched_switch: tid -> tid2, a: prev_state, str: next comm, str2: prev comm */
	TRAWL_STATE_WAKEUP,		/* sched_waking, sched_wakeup(_new): tid2 woken by tid, a: target cpu */
	TRAWL_STATE_FORK,		/* sched_process_fork: tid -> tid2 (child), a: its pid, b: its ppid */
	TRAWL_STATE_EXEC,		/* sched_process_exec: str filename, a: pid after it */
	TRAWL_STATE_EXIT,		/* sched_process_exit: a: group_dead */
	TRAWL_STATE_SYSCALL_ENTRY,	/* str: name, a: fd (or -1), b: count or flags, str2: path */
	TRAWL_STATE_SYSCALL_EXIT,	/* str: name, b: ret */
	TRAWL_STATE_IRQ_ENTRY,		/* a: irq */
	TRAWL_STATE_IRQ_EXIT,
	TRAWL_STATE_SOFTIRQ_ENTRY,	/* a: vec */
	TRAWL_STATE_SOFTIRQ_EXIT,
	TRAWL_STATE_BLOCK_INSERT,	/* a: dev, b: sector, c: nr_sector, str: rwbs */
	TRAWL_STATE_BLOCK_ISSUE,
	TRAWL_STATE_BLOCK_COMPLETE,
	TRAWL_STATE_DUMP_PROCESS,	/* state dump: tid2, a: pid, b: ppid, c: status, str: name, str2: cgroup */
	TRAWL_STATE_DUMP_FD,		/* state dump: a: pid, b: fd, str: filename */
	TRAWL_STATE_OPEN,		/* fd b of process a came from open, dup, socket...: str: path */
	TRAWL_STATE_CLOSE,		/* fd b of process a closed */
	TRAWL_STATE_READ,		/* c bytes read from fd b of process a */
	TRAWL_STATE_WRITE,		/* c bytes written to fd b of process a */
	TRAWL_STATE_NKINDS
};

struct trawl_state_change {
	int64_t ts;
	enum trawl_state_change_kind kind;
	int32_t cpu;
	int64_t tid, tid2;		/* the thread it is about; another one, or -1 */
	int64_t a, b, c;
	const char *str, *str2;		/* names, or "" */
};

/* The kind's name ("switch", "syscall_entry", ...). */
const char *trawl_state_change_name(enum trawl_state_change_kind k);

/* ---------------------------------------------------------------- views */

/*
 * A view: one host's state at one time, with the changes that built it.
 * It does not change when the state takes in more events; its strings
 * live as long as the state. Free it with trawl_state_view_free().
 */
struct trawl_state_view;

/*
 * The state of host at t, for t between the window's start
 * (trawl_state_window_start()) and the newest event. NULL + errno:
 * ENOENT (no such host), ERANGE (t outside the window), ENOMEM.
 */
struct trawl_state_view *trawl_state_at(const struct trawl_state *s, const char *host,
					int64_t t);
/*
 * Offline random access: the state of host at t in the traces under
 * paths, which s has read with checkpoints (opts.checkpoint_ns) up to t at
 * least, or loaded from a checkpoint file (trawl_state_load()): the
 * latest checkpoint at or before t is restored and the events from there
 * to t are read again (a reader from its time: packets before it are
 * skipped through the index): at most one interval of trace time or
 * opts.checkpoint_events events. The view's history (the changes that
 * built an entity, trawl_state_view_changes()) is the window before t, as
 * for a view in the window: replayed from the checkpoint at or before
 * t - window the first time it is asked for (trawl_state_view_history()),
 * so a query of the state alone costs the short replay. s is not
 * changed and must outlive the view; paths and ro are copied. NULL +
 * errno (ENOENT: no such host, ERANGE: t before the trace, EBADMSG: a
 * checkpoint that does not decode, another from the reader), message in
 * err.
 */
struct trawl_state_view *trawl_state_at_files(const struct trawl_state *s,
					      const char *const *paths, size_t npaths,
					      const struct trawl_reader_opts *ro,
					      const char *host, int64_t t,
					      char *err, size_t errlen);
void trawl_state_view_free(struct trawl_state_view *v);
/*
 * A view of trawl_state_at_files(): replays the window before its time
 * for its history, once (trawl_state_view_changes() does it when needed,
 * and gives no changes if it fails). 0 (also for a view of the window),
 * or -errno with the message in err.
 */
int trawl_state_view_history(struct trawl_state_view *v, char *err, size_t errlen);

/* ------------------------------------------------------ checkpoint file */

/*
 * The checkpoints of s (a pass with checkpoint_ns over the traces under
 * paths, read to their end) written to file (replaced whole: written
 * beside and renamed), with what identifies the traces: each trace's
 * UUID, and each of its files' name, size and a hash of its first and
 * last 64 KiB; and the window, the intervals and the hosts. 0 or -errno,
 * message in err.
 */
int trawl_state_save(const struct trawl_state *s, const char *file,
		     const char *const *paths, size_t npaths, char *err, size_t errlen);
/*
 * A state with the checkpoints of file, for trawl_state_at_files() on
 * the traces under paths, which it checks against what file says of them.
 * o gives the window (it must be the file's). NULL + errno: ENOENT (no
 * file), ESTALE (the traces are not those it was made of: a file added,
 * gone, changed or truncated; or another window), EBADMSG (not a
 * checkpoint file, or corrupt: its checksum or a structure), ENOMEM;
 * message in err. The file is never trusted in part.
 */
struct trawl_state *trawl_state_load(const char *file, const struct trawl_state_opts *o,
				     const char *const *paths, size_t npaths,
				     char *err, size_t errlen);
/* The time up to which s's checkpoints hold the trace (its last event's
 * for a pass to the end, the file's): INT64_MIN with none. */
int64_t trawl_state_checkpoints_end(const struct trawl_state *s);

int64_t trawl_state_view_time(const struct trawl_state_view *v);
const char *trawl_state_view_host(const struct trawl_state_view *v);

/* The entities alive at the view's time, by index (NULL past the last),
 * and by key (NULL: none). CPUs by number, threads by tid, fds by (pid,
 * fd), requests in order of their key. Pointers live as long as the view. */
const struct trawl_state_cpu *trawl_state_view_cpu(const struct trawl_state_view *v, size_t i);
const struct trawl_state_thread *trawl_state_view_thread(const struct trawl_state_view *v, size_t i);
const struct trawl_state_thread *trawl_state_view_thread_find(const struct trawl_state_view *v,
							      int64_t tid);
const struct trawl_state_fd *trawl_state_view_fd(const struct trawl_state_view *v, size_t i);
const struct trawl_state_fd *trawl_state_view_fd_find(const struct trawl_state_view *v,
						      int64_t pid, int64_t fd);
const struct trawl_state_request *trawl_state_view_request(const struct trawl_state_view *v,
							   size_t i);

/*
 * The changes that built an entity's state at the view's time, oldest
 * first: the one that created it (a fork, an open, a state dump line) even
 * when it is older than the window, then every change of the window up to
 * the view's time that concerns it. Fills out[0 .. max) and returns how
 * many there are (more than max: call again with a larger array).
 */
size_t trawl_state_view_cpu_changes(const struct trawl_state_view *v, uint32_t cpu,
				    struct trawl_state_change *out, size_t max);
size_t trawl_state_view_thread_changes(const struct trawl_state_view *v, int64_t tid,
				       struct trawl_state_change *out, size_t max);
size_t trawl_state_view_fd_changes(const struct trawl_state_view *v, int64_t pid, int64_t fd,
				   struct trawl_state_change *out, size_t max);
/*
 * The same for any entity, from its skip-th change on: out[0 .. max) gets
 * changes skip .. skip + max - 1 (the newest few of a long history without
 * an array for all of it); returns how many there are in all. x is the
 * CPU, the tid or the pid (with y the fd).
 */
enum trawl_state_entity {
	TRAWL_STATE_ENTITY_CPU,
	TRAWL_STATE_ENTITY_THREAD,
	TRAWL_STATE_ENTITY_FD,
};
size_t trawl_state_view_changes(const struct trawl_state_view *v, enum trawl_state_entity e,
				int64_t x, int64_t y, size_t skip,
				struct trawl_state_change *out, size_t max);
/*
 * The same in one pass for the ends of a long history: *first gets the
 * first change (what created it), newest[0 .. k) the newest k of the
 * others, oldest first, k = min(max, all - 1); returns how many there are
 * in all (0 and errno ENOMEM when the newest cannot be held). first or
 * newest may be NULL.
 */
size_t trawl_state_view_changes_ends(const struct trawl_state_view *v,
				     enum trawl_state_entity e, int64_t x, int64_t y,
				     struct trawl_state_change *first,
				     struct trawl_state_change *newest, size_t max);

const char *trawl_state_cpu_mode_name(enum trawl_state_cpu_mode m);	/* "idle", ... */
const char *trawl_state_thread_status_name(enum trawl_state_thread_status st);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
