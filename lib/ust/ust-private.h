/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/ust-private.h - private to the files of lib/ust (the agent does
 * not see it): the state of the sessions and of the recording threads, and
 * what the files call of each other. The files:
 *   registry.c  the tracepoint registry and enabling events
 *   record.c    the recording path (trawl_ust_reserve/commit, slow paths),
 *               per-thread state, attaching a thread to the session
 *   context.c   a thread's event context fields
 *   writer.c    the CTF writer, stream class and event classes of a trace
 *   session.c   the in-process session; tr_ust_lock; fork and exit handlers
 *   output.c    the session's consumer thread, final flush, snapshots
 *   remote.c    agent sessions (the agent consumes their buffers)
 *   app.c       the application side of the agent protocol
 *
 * Locking: one mutex (tr_ust_lock) guards the registry, the current session and
 * everything in it; the recording path never takes it. A thread's first
 * enabled event (or its first after a session starts) takes the slow path
 * (attach): under the lock it creates the thread's buffer.
 *
 * Quiescence (stop): the producer sets its `nest` flag, then reads the
 * session generation; stop bumps the generation and clears the buffers'
 * `active`, runs membarrier() (a full barrier on every thread of the
 * process), then waits until every thread's `nest` is 0. After that no
 * producer touches its buffer, and the consumer finalizes the last packets.
 * A thread's nest flag also makes an event that interrupts another event of
 * the same thread (signal handler) count as discarded.
 */
#ifndef TRAWL_UST_PRIVATE_H
#define TRAWL_UST_PRIVATE_H

#include "ust-internal.h"

#include <sys/types.h>

#include "util/clock.h"

/* ---- state (the in-process and agent sessions, per thread) */

struct ust_buf;

/* Per thread, process-local, in static TLS (no allocation, so that a
 * signal handler's event never calls malloc for it). */
struct ust_thread {
	int nest;			/* inside an event (atomic) */
	int in_slow;			/* inside attach */
	uint64_t pending;		/* nested drops not yet in the buffer (atomic) */
	uint64_t gen;			/* tr_ust_gen when attached */
	struct ust_shm *h;
	struct ust_ring *ring;
	uint8_t *cur;			/* the open packet */
	uint32_t S;
	uint8_t large;			/* TRAWL_UST_HEADER_LARGE */
	uint8_t ctxlen;
	uint8_t ctx[48];		/* serialized event context */
	struct ust_buf *buf;
	pid_t tid;
};

struct ust_buf {
	struct ust_cons cons;		/* the ring, and what of it is written out */
	struct ust_thread *thr;		/* NULL once quiescent for good */
	uint64_t instance;		/* stream_instance_id in its packets */
	pid_t pid, tid;
	bool ws_failed;
	bool stuck;			/* producer never left its event at stop */
	struct ust_buf *next;
};

enum { S_NEW, S_ACTIVE, S_STOPPING, S_STOPPED };

struct trawl_ust_session {
	/* options */
	char *output;
	enum trawl_ust_mode mode;
	uint32_t S, N;
	char **globs;
	size_t nglobs;
	int *glob_ll;			/* remote: per-glob loglevel (-1: any) */
	bool remote;			/* the agent consumes (app.c) */
	struct trawl_ust_session *remote_next;	/* remote_all list */
	uint64_t key;			/* remote: the agent's session key */
	int loglevel;
	unsigned contexts;
	enum trawl_ust_header header;
	enum trawl_ust_clock clock_opt;
	char *hostname;
	unsigned flush_ms;

	int state;
	pid_t pid;			/* the process recording */
	bool fork_pending;		/* copied into a child by fork() */
	char *outdir;			/* output, or output-<pid> in a child */
	struct trawl_ctf_writer *w;	/* discard mode with output */
	struct trawl_ctf_stream_class *sc;
	uint8_t uuid[16];
	struct trawl_tp_event **evs;	/* enabled events; index = id */
	size_t nevs, evcap;
	struct ust_buf *bufs, *tail;	/* append-only while recording */
	uint64_t next_instance;
	pthread_t consumer;
	bool consumer_running;
	int stopping;			/* atomic */
	bool tsc;
	struct tr_clock_sample clk0;	/* the clock at start */
	int err;
	struct trawl_ust_stats st;
	uint64_t orphans;		/* counted in no buffer (fold_orphans) */
};

/* ---- the clock */

/* The clock used for timestamps (set by the session, read per event). */
static inline uint64_t ust_clock_now(void)
{
#if HAVE_TSC
	if (likely(__atomic_load_n(&tr_ust_use_tsc, __ATOMIC_RELAXED)))
		return __rdtsc();
#endif
	return tr_mono_ns();
}

/* ---- between the files */

/* The current session (NULL: none), and its generation, bumped at start
 * and stop and in a forked child (atomic; read per event). session.c. */
TRAWL_HIDDEN extern struct trawl_ust_session *tr_ust_cur_sess;
TRAWL_HIDDEN extern uint64_t tr_ust_gen;
/* Events no buffer could take, process-wide (atomic): record.c. */
TRAWL_HIDDEN extern uint64_t tr_ust_orphans;
/* record.c: creates the thread-exit key (once); in a forked child, makes
 * the calling thread's next event attach anew. */
TRAWL_HIDDEN void tr_ust_thread_init(void);
TRAWL_HIDDEN void tr_ust_thread_forked(void);
/* registry.c (lock held): enables in s every registered event it selects
 * (0 or -errno); sends every registered event to the agent. */
TRAWL_HIDDEN int tr_ust_registry_enable(struct trawl_ust_session *s);
TRAWL_HIDDEN void tr_ust_registry_announce(void);
/* context.c: serializes t's event context (s->contexts) into t->ctx. */
TRAWL_HIDDEN void tr_ust_ctx_fill(const struct trawl_ust_session *s, struct ust_thread *t);
/* writer.c: a writer into dir for s, with its stream class and enabled
 * events, into *pw and *psc. 0 or -errno. */
TRAWL_HIDDEN int tr_ust_session_writer(struct trawl_ust_session *s, const char *dir,
				       size_t io_queue, struct trawl_ctf_writer **pw,
				       struct trawl_ctf_stream_class **psc);
/* session.c: a session (remote: an agent session), NULL + errno; in a
 * forked child, a session inherited active (lock held): 0 or -errno; frees
 * s's buffers; membarrier() on every thread of the process: false if it
 * could not run. */
TRAWL_HIDDEN struct trawl_ust_session *tr_ust_session_new(const struct trawl_ust_session_opts *o,
							  bool remote, char *err, size_t errlen);
TRAWL_HIDDEN int tr_ust_session_forked(struct trawl_ust_session *s);
TRAWL_HIDDEN void tr_ust_free_bufs(struct trawl_ust_session *s);
TRAWL_HIDDEN bool tr_ust_membarrier(void);
/* output.c: held by the consumer thread during a pass and by fork(); the
 * consumer thread of s (pthread_create's result); a quiescent buffer's
 * final flush (lock held); a snapshot of s into dir (lock held, 0 or
 * -errno). */
TRAWL_HIDDEN extern pthread_mutex_t tr_ust_cons_lock;
TRAWL_HIDDEN int tr_ust_consumer_start(struct trawl_ust_session *s);
TRAWL_HIDDEN void tr_ust_final_flush(struct trawl_ust_session *s, struct ust_buf *b);
TRAWL_HIDDEN int tr_ust_snapshot_locked(struct trawl_ust_session *s, const char *dir);

#endif
