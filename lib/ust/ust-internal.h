/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/ust-internal.h - user-space tracing internals shared by the files
 * of lib/ust (see ust-private.h for the files and what each holds) and by
 * the agent (lib/agent). The ring buffer itself is lib/ring/ring.h.
 */
#ifndef TRAWL_UST_INTERNAL_H
#define TRAWL_UST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "trawl/tracepoint.h"
#include "ring/ring.h"

#include <pthread.h>

/* ---- shared with the application side of the agent protocol (app.c)
 * and the agent (lib/agent) */

/* The registry's and sessions' lock (session.c); app.c sends under it. */
TRAWL_HIDDEN extern pthread_mutex_t tr_ust_lock;
/* Take and give tr_ust_lock always through these (they track, per thread,
 * whether it is held or being taken or given: tr_ust_lock_mine()). */
TRAWL_HIDDEN void tr_ust_lock_take(void);
TRAWL_HIDDEN void tr_ust_lock_give(void);
TRAWL_HIDDEN bool tr_ust_lock_mine(void);
/* The session's clock is the TSC (else CLOCK_MONOTONIC); set at start
 * (session.c), kept after stop. lib/track reads it to put its outliers'
 * times on the clock of the trace they go into. */
TRAWL_HIDDEN extern int tr_ust_use_tsc;
/* A user-space CTF trace writer (env domain "ust", tracer "trawl");
 * io_queue: trawl_ctf_writer_opts.io_queue; rel: streamed to a relay
 * (dir may then be NULL), or NULL. */
struct ust_writer_relay {
	const char *addr, *session;
	uint64_t live_us;
	bool live_demand;		/* the relay tells of waiting viewers */
	void (*on_demand)(void *arg);	/* at each DEMAND (the sender's thread) */
	void *demand_arg;
	bool horizon;			/* streams come as threads do: HORIZONs */
	char *err;
	size_t errlen;
};
TRAWL_HIDDEN struct trawl_ctf_writer *tr_ust_writer_new(const char *dir, const char *hostname,
						     bool tsc, size_t io_queue,
						     const struct ust_writer_relay *rel);
/* The same, dir beneath root (trawl_ctf_writer_opts.root: nothing below
 * root through a link; NULL: dir); a message in rel->err, or else in err. */
TRAWL_HIDDEN struct trawl_ctf_writer *tr_ust_writer_new_at(const char *dir, const char *root,
							const char *hostname, bool tsc,
							size_t io_queue,
							const struct ust_writer_relay *rel,
							char *err, size_t errlen);
/* A stream class with the event header form and the context fields
 * (TRAWL_UST_CTX_*). NULL + errno. */
TRAWL_HIDDEN struct trawl_ctf_stream_class *tr_ust_stream_class_new(struct trawl_ctf_writer *w,
								  unsigned header,
								  unsigned contexts);
/* Adds ev as event class ev->id of sc (-EINVAL if the writer's next id
 * differs). Returns 0 or -errno. */
TRAWL_HIDDEN int tr_ust_writer_add_event(struct trawl_ctf_writer *w,
				      struct trawl_ctf_stream_class *sc,
				      const struct trawl_tp_event *ev);
/*
 * What a stream's events are, to walk a packet's events without the
 * trace's metadata: the event classes by id (evs[id]), the event header
 * form (TRAWL_UST_HEADER_*), the bytes of the context fields.
 */
struct ust_evtab {
	struct trawl_tp_event *const *evs;
	size_t nevs;
	unsigned header;
	size_t ctxlen;
};
/* The bytes of the context fields of contexts (TRAWL_UST_CTX_*). */
TRAWL_HIDDEN size_t tr_ust_ctx_len(unsigned contexts);
/* The length of the event at p (header, context, payload: the layout
 * trawl_ust_reserve() and the emit functions write), or 0 when the bytes
 * do not make an event of t within avail (an unknown id, a string or a
 * sequence running past avail). Trusts nothing in p. */
TRAWL_HIDDEN size_t tr_ust_event_len(const struct ust_evtab *t, const uint8_t *p, size_t avail);
/* pthread_once of the fork/exit/thread-exit handlers. */
TRAWL_HIDDEN void tr_ust_init_once(void);
/* Starts a session whose buffers the agent consumes (listener thread).
 * o->events with glob_ll[i] the loglevel of glob i (-1: any). 0 or -errno
 * (-EBUSY: another session records in this process). */
TRAWL_HIDDEN int tr_ust_remote_start(uint64_t key, const struct trawl_ust_session_opts *o,
				  const int *glob_ll, const uint8_t uuid[16]);
/* Stops the agent session `key` (0: whichever): disables its events, waits
 * for the threads to leave them, hands every buffer to the agent (exited),
 * unmaps them. 0, or -ENOENT. */
TRAWL_HIDDEN int tr_ust_remote_stop(uint64_t key);

/*
 * The live tick (the application's listener, at each LIVE of the agent
 * session key): reads the clock, runs membarrier(), then stores that time
 * as quiet_ts in every buffer whose thread is outside any event. A thread's
 * event sets its nest flag before it reads the clock; after the barrier, a
 * thread seen outside has committed every event stamped before that time,
 * and any later one is stamped after it (Dekker, as at stop).
 */
TRAWL_HIDDEN void tr_ust_live_tick(uint64_t key);

/* app.c: the application side of the agent protocol. Without an agent,
 * tr_ust_app_init() is one socket() + connect() + close(), and the rest do
 * nothing. The senders are called with tr_ust_lock held. */
TRAWL_HIDDEN void tr_ust_app_init(void);
TRAWL_HIDDEN void tr_ust_app_send_evreg(const struct trawl_tp_event *ev);
TRAWL_HIDDEN void tr_ust_app_send_evdesc(uint64_t key, const struct trawl_tp_event *ev);
/* Async-signal-safe (a thread's first event may be in a signal handler). */
TRAWL_HIDDEN void tr_ust_app_send_buf(uint64_t key, int32_t tid, int fd);
/* The first commit after the agent set h->wake (it sleeps past its next
 * turn): takes the flag and tells the agent (one AM_WAKE, never waiting;
 * a full socket means the agent has news to read anyway). Called without
 * tr_ust_lock, from the recording path; async-signal-safe; errno kept. */
TRAWL_HIDDEN void tr_ust_app_wake(struct ust_shm *h);
/* The message alone (the flag taken by the caller: a thread's exit). */
TRAWL_HIDDEN void tr_ust_app_wake_msg(void);
/* In a forked child (atfork): closes the parent's connection and, if the
 * parent was registered, registers the child (as recording into session
 * key, when non-zero). Returns true when connected. */
TRAWL_HIDDEN bool tr_ust_app_child(uint64_t key);

/* The default agent socket: per user ($XDG_RUNTIME_DIR/trawl/agent.sock,
 * else /tmp/trawl-$UID/agent.sock) or system-wide (/run/trawl/agent.sock).
 * Returns snprintf's count. */
TRAWL_HIDDEN int tr_ust_agent_path(char *buf, size_t len, bool system);

#endif
