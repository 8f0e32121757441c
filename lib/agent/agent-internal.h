/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/agent-internal.h - what the agent's files share (hidden from the
 * shared library's ABI). The agent (include/trawl/agent.h, docs/agent.md)
 * is one object and one loop, in files by job:
 *
 *   agent.c     the object: options, the listening socket, the loop, stop
 *   conn.c      connections: reading messages, the applications' side of
 *               the protocol (HELLO, EVREG, EVDESC, BUF, ACK), replies to
 *               clients (OUT, ERR, END)
 *   verbs.c     the clients' requests: one table, verb -> handler
 *   settings.c  the session settings: one table, key -> parse, print;
 *               create's key=value, save (describe) and load use it
 *   session.c   sessions and their applications' parts: start, stop,
 *               waiting for the applications' answers
 *   drain.c     the ring buffers into the trace: the periodic drain, the
 *               live timer, the last packets, snapshots
 *   kernel.c    a session's kernel part, through the program's table
 *               (struct trawl_agent_kernel)
 *   client.c    the client side: trawl_agent_request()
 *
 * Every state is in struct trawl_agent and what hangs from it: several
 * agents live in one process. Nothing here prints: tr_agent_log() goes
 * to the program's hook.
 */
#ifndef TRAWL_AGENT_INTERNAL_H
#define TRAWL_AGENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "trawl/ctf.h"
#include "internal.h"
#include "trawl/agent.h"
#include "ust/ust-internal.h"
#include "util/clock.h"

enum { S_NEW, S_ACTIVE, S_STOPPING, S_STOPPED };
TRAWL_HIDDEN extern const char *const tr_agent_state_names[];

struct rule {
	char *glob;
	int loglevel;			/* -1: any */
};

/* One thread's ring buffer, mapped from the memfd the application sent. */
struct aring {
	struct ust_cons c;
	int32_t tid;
	bool done;			/* final flush done */
	int64_t fast_at;		/* ms of its last part sent at once (drain.c) */
	uint64_t seen;			/* events committed and lost, at the last turn */
	struct aring *next;
};

struct session;
struct conn;
struct trawl_agent;

/* An application's part in a session: its stream class, its enabled
 * events (by id), its buffers. Outlives the application. */
struct part {
	struct session *s;
	struct conn *app;		/* NULL once it is gone */
	int32_t pid;
	char name[17];
	char stream[48];		/* stream file name prefix */
	struct trawl_ctf_arena *arena;
	struct trawl_tp_event **evs;	/* index = id */
	size_t nevs, evcap;
	struct trawl_ctf_stream_class *sc;	/* in s->w */
	struct aring *rings;
	int start_status;		/* ack of START */
	bool acked, stopped, dead, bad;
	struct part *next;
};

struct session {
	struct trawl_agent *a;
	char *name;
	uint64_t key;
	int state;
	bool snapshot;			/* flight recorder, snapshot record only */
	char *output;			/* session directory (may be NULL in snapshot mode) */
	char *run_out;			/* this run's: output, or output/run-N when output
					 * holds a trace already (a restart, a load) */
	unsigned runs;			/* runs started */
	char *wwhy;			/* the writer refused a path: why (or NULL) */
	int64_t next_clock;		/* ms: the TSC's frequency so far declared next */
	unsigned mode, S, N, header, contexts, clock_opt;	/* N: 0 = default */
	struct rule *rules;
	size_t nrules;
	bool tsc;
	struct tr_clock_sample clk0;	/* the clock at start */
	bool prepared;			/* trace open, kernel created: start at once */
	uint64_t t_begin;		/* CLOCK_MONOTONIC ns: recording switched on */
	uint8_t uuid[16];
	struct trawl_ctf_writer *w;	/* discard mode, while recording */
	struct part *parts;
	unsigned nparts, nsnap;
	struct conn *waiter;		/* client waiting for start/stop */
	int64_t deadline;
	int err;
	bool destroy;			/* free once stopped */
	uint64_t packets;
	/* kernel part: rules, and the recorder while recording */
	char **kev;			/* tracepoints, globs or presets */
	size_t nkev;
	char *kfilter;			/* ftrace filter for every event, or NULL */
	int32_t *kpids;			/* set_event_pid, or none */
	size_t nkpids;
	void *krec;			/* a->kernel's recorder, while recording */
	bool kdone;			/* stopped: the figures below are final */
	bool kclock_ok;			/* kfreq.. hold the kernel trace's clock */
	uint64_t kfreq;
	int64_t koff_s, koff;
	struct trawl_agent_kernel_stats kst;
	char kclock[16];
	char *kerr;			/* the recorder's error at stop, or NULL */
	/* streaming to a relay (docs/relay.md) */
	char *relay;			/* HOST[:PORT], or NULL */
	char *relay_session;		/* name at the relay; NULL: the session's */
	unsigned live_ms;		/* live timer; 0: packets go when full */
	int64_t next_live;		/* ms, the next live tick */
	bool cut_due;			/* LIVE sent: cut the rings next turn */
	/* live demand (drain.c, docs/relay.md "Live latency"): while the
	 * relay says a viewer waits, new events go out at the next turn */
	int64_t demand_until;		/* the relay's last DEMAND's end (ms) */
	int64_t last_ask;		/* ms of the last LIVE sent */
	uint64_t demands;		/* DEMANDs seen */
	uint64_t fast_cuts;		/* parts sent at once for a viewer */
	uint64_t ticks;			/* live ticks (LIVE sent, then a cut) */
	struct session *next;
};

enum { C_NEW, C_APP, C_CLIENT };

struct conn {
	struct trawl_agent *a;
	int fd;
	int type;
	uid_t uid;
	pid_t pid;
	/* application */
	char name[17];
	char **evnames;			/* registered events "prov:ev" */
	int *evll;
	size_t nev, evcap;
	struct part *part;		/* in the recording session */
	bool closing;
	struct conn *next;
};

struct trawl_agent {
	struct trawl_agent_opts o;	/* the caller's, completed (defaults) */
	char *socket;			/* o.socket's copy */
	int lfd;			/* listening; -1 once closed */
	dev_t sock_dev;			/* the socket file we made (removed only */
	ino_t sock_ino;			/* if it is still ours) */
	int wakefd;			/* eventfd: trawl_agent_stop() */
	int wait_ms;			/* the next turn's poll timeout (tr_drain_wait) */
	int quit;			/* set by trawl_agent_stop() (atomic) */
	bool quitting;			/* the loop is stopping the sessions */
	bool rt_ok;			/* SCHED_FIFO taken, or why not: */
	int rt_err;
	char hostname[256];
	struct conn *conns;
	struct session *sessions;
	uint64_t next_key;
	uint8_t *msgbuf;		/* AM_MSG_MAX: messages in and out */
	struct tr_join *join;		/* the relay joined (join.c), or NULL */
	char *root;			/* o.root resolved; NULL: none */
	struct ametrics *metrics;	/* metrics.c: the endpoint, or NULL */
};

/* ---- metrics.c (docs/metrics.md): the endpoint of o.metrics_addr: 0, or
 * -errno with err; the loop's turn (a snapshot when a scrape asks); the
 * loop's end; freeing. */
TRAWL_HIDDEN int tr_agent_metrics_start(struct trawl_agent *a, const char *addr,
					const char *token, char *err, size_t errlen);
TRAWL_HIDDEN void tr_agent_metrics_turn(struct trawl_agent *a);
TRAWL_HIDDEN void tr_agent_metrics_stopped(struct trawl_agent *a);
TRAWL_HIDDEN void tr_agent_metrics_free(struct trawl_agent *a);

/* ---- agent.c */
/* A line for opts.log (nothing when there is no hook). */
TRAWL_HIDDEN void tr_agent_log(struct trawl_agent *a, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- conn.c */
/* Reads what a connection has; false when it is finished. */
TRAWL_HIDDEN bool tr_conn_read(struct conn *c);
TRAWL_HIDDEN void tr_conn_close(struct conn *c);
/* Sends one message, waiting (bounded) when the peer's queue is full:
 * 0 or -EPIPE, -ETIMEDOUT. */
TRAWL_HIDDEN int tr_send_msg(int fd, const void *m, size_t len);
/* A peer did not take a message: a client is dropped; an application is
 * read to its end first (its EOF closes it). */
TRAWL_HIDDEN void tr_send_failed(struct conn *c);
TRAWL_HIDDEN void tr_send_simple(struct conn *c, uint32_t type, const void *body, size_t blen);
/* Replies to a client: text (AM_OUT output, AM_ERR a message line), the
 * end of the request with its status (the connection then closes), or an
 * error message and the end at once. */
TRAWL_HIDDEN void tr_ctext(struct conn *c, uint32_t type, const char *text);
TRAWL_HIDDEN void tr_cprint(struct conn *c, uint32_t type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
TRAWL_HIDDEN void tr_cend(struct conn *c, int status);
TRAWL_HIDDEN void tr_cfail(struct conn *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- join.c: a relay joined for cluster control (docs/cluster.md) */
struct pollfd;
/* Starts joining addr ("HOST[:PORT]"): 0 or -errno with a message. */
TRAWL_HIDDEN int tr_join_new(struct trawl_agent *a, const char *addr, char *err, size_t errlen);
TRAWL_HIDDEN void tr_join_free(struct trawl_agent *a);
/* The relay's address, or NULL when the agent joins none. */
TRAWL_HIDDEN const char *tr_join_addr(const struct trawl_agent *a);
/* The loop's part: how many pollfds it needs at most, filling them
 * (returns how many it filled), then handling what poll found. */
TRAWL_HIDDEN size_t tr_join_nfds(const struct trawl_agent *a);
TRAWL_HIDDEN size_t tr_join_fill(struct trawl_agent *a, struct pollfd *pf);
TRAWL_HIDDEN void tr_join_events(struct trawl_agent *a, const struct pollfd *pf, size_t n);

/* ---- verbs.c */
/* Is name a session name both the agent and a relay take (the relay's
 * rule, tr_relay_name_ok: [A-Za-z0-9._-], not starting with '.' or '-',
 * at most 200 bytes here)? true, or false with the reason in why. */
TRAWL_HIDDEN bool tr_session_name_ok(const char *name, char *why, size_t wlen);
/* May the relay joined (cluster control) ask this request (argv)? Only
 * the cluster's verbs; output paths only beneath the agent's trace root
 * (trawl_agent_opts.root); a relay only the one joined (joined: its
 * address). true, or false with the reason in why. */
TRAWL_HIDDEN bool tr_verb_relay_may(const struct trawl_agent *a, const char *joined, int argc,
				    char **argv, char *why, size_t wlen);
/* One client request, argv[0] the verb: answered (now or when the
 * applications have answered). */
TRAWL_HIDDEN void tr_verb_run(struct conn *c, int argc, char **argv);

/* ---- settings.c */
/* Applies one setting "key=value" (or key, value) to s: 0, or -errno with
 * a message in why. */
TRAWL_HIDDEN int tr_setting_apply(struct session *s, const char *kv, char *why, size_t wlen);
TRAWL_HIDDEN int tr_setting_set(struct session *s, const char *key, const char *value,
				char *why, size_t wlen);
/* The session's description (docs/agent.md), malloc'd; NULL on ENOMEM. */
TRAWL_HIDDEN char *tr_session_describe(const struct session *s);
/* A description's text (modified) -> a new session, not yet added;
 * rename: its name instead of the text's. NULL with a message in why. */
TRAWL_HIDDEN struct session *tr_session_load(struct trawl_agent *a, char *text,
					     const char *rename, char *why, size_t wlen);
/* The context bit of a name (vpid, vtid, procname, cgroup), or 0. */
TRAWL_HIDDEN unsigned tr_ctx_bit(const char *name);
/* The name of context bit i, or NULL. */
TRAWL_HIDDEN const char *tr_ctx_name(unsigned i);
/* Adds (or updates) an enable rule: 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_rule_add(struct session *s, const char *glob, int loglevel);
/* Adds the rule "GLOB" or "GLOB@LEVEL": 0, -EINVAL (bad) or -ENOMEM. */
TRAWL_HIDDEN int tr_rule_add_at(struct session *s, const char *spec);

/* ---- session.c */
TRAWL_HIDDEN unsigned tr_nsubbuf(const struct session *s);
/* A new session (not yet in the agent's list); NULL with a message. */
TRAWL_HIDDEN struct session *tr_session_new(struct trawl_agent *a, const char *name,
					    char *why, size_t wlen);
/* Are the session's settings consistent? 0 or -EINVAL with a message. */
TRAWL_HIDDEN int tr_session_check(struct session *s, char *why, size_t wlen);
TRAWL_HIDDEN void tr_session_add(struct session *s);
TRAWL_HIDDEN void tr_session_remove(struct session *s);
TRAWL_HIDDEN void tr_session_free(struct session *s);
TRAWL_HIDDEN struct session *tr_session_find(struct trawl_agent *a, const char *name);
TRAWL_HIDDEN struct session *tr_session_by_key(struct trawl_agent *a, uint64_t key);
/* The session recording (or stopping), or NULL. */
TRAWL_HIDDEN struct session *tr_recording(struct trawl_agent *a);
/* Everything of a start but switching recording on (a start at an agreed
 * time, join.c); done once: 0, or -errno with a message in why. */
TRAWL_HIDDEN int tr_session_prepare(struct session *s, char *why, size_t wlen);
/* Undoes it (a start that cannot go on): the trace and the kernel
 * recorder let go. */
TRAWL_HIDDEN void tr_session_unprepare(struct session *s);
/* Starts a session (prepared first if it was not): 0, or -errno with a
 * message in why. */
TRAWL_HIDDEN int tr_session_start(struct session *s, char *why, size_t wlen);
/* STOP to its applications; finished by tr_check_waiters(). */
TRAWL_HIDDEN void tr_session_stop(struct session *s);
/* Answers the waiting clients whose applications all answered (or timed
 * out), finishes stops, frees destroyed sessions. */
TRAWL_HIDDEN void tr_check_waiters(struct trawl_agent *a);
TRAWL_HIDDEN struct part *tr_part_new(struct session *s, struct conn *app);
TRAWL_HIDDEN void tr_send_start(struct session *s, struct conn *c);

/* ---- drain.c */
/* Drains the session's buffers; flushes those whose producer is gone;
 * runs the live timer. */
TRAWL_HIDDEN void tr_drain(struct session *s);
/* Wakes the loop (its next turn at once): from any thread. */
TRAWL_HIDDEN void tr_agent_wake(void *agent);
/* Reads every application's connection to its end now: every buffer sent
 * before the time returned (CLOCK_MONOTONIC ns) is taken, its stream
 * created and announced (drain.c: the horizon). A connection that ends is
 * closed at the next turn. (An application sends its buffers after its
 * HELLO made it one: a connection not yet one has none.) */
TRAWL_HIDDEN uint64_t tr_agent_settle(struct trawl_agent *a);
/* After tr_drain: how long the loop may wait for its next turn (ms), at
 * least flush_ms: longer while no ring moved, once the applications were
 * asked to wake it (drain.c, tr_drain_wait). */
TRAWL_HIDDEN int tr_drain_wait(struct session *s, int flush_ms);
/* The last packets of every buffer, then the trace closed (its clock
 * declared): at stop. */
TRAWL_HIDDEN void tr_drain_final(struct session *s);
/* "session S: the relay did not store [at most ]D of E WHATevents[ (it did
 * not say where it cut)]: counted as discarded", in the log and to the
 * client that stops the session (what: "" or "kernel "). */
TRAWL_HIDDEN void tr_drain_say_cut(struct session *s, const char *what, uint64_t disc,
				   uint64_t ev, bool exact);
/* The newest packets of every buffer into a new trace in dir: 0 or -errno. */
TRAWL_HIDDEN int tr_snapshot(struct session *s, const char *dir, uint64_t *events,
			     uint64_t *torn);
/* The same, streamed to a relay instead (rel; dir NULL) */
struct ust_writer_relay;
TRAWL_HIDDEN int tr_snapshot_to(struct session *s, const char *dir,
				const struct ust_writer_relay *rel, uint64_t *events,
				uint64_t *torn);
/* The stream of a ring in the session's trace, created if needed. */
TRAWL_HIDDEN int tr_ring_stream(struct session *s, struct part *p, struct aring *r);
/* base/HOST/ust, malloc'd; NULL on ENOMEM. */
TRAWL_HIDDEN char *tr_trace_dir(const struct session *s, const char *base);
/* Where the current (or last) run writes: run_out, else output. */
TRAWL_HIDDEN const char *tr_run_dir(const struct session *s);

/* ---- kernel.c */
/* Why an overwrite-mode session takes no kernel events when the agent's
 * kernel table makes no flight recorder, and what to do instead
 * (docs/agent.md "Snapshots"). */
#define TR_KERNEL_OVERWRITE_WHY                                                          \
	"kernel events are not kept by overwrite-mode sessions (the kernel part has no " \
	"flight recorder: its events would go to disk as they come, never into a snapshot)"
#define TR_KERNEL_OVERWRITE_HINT                                                          \
	"hint: record kernel events in a discard-mode session (trawl create NAME -o DIR) " \
	"or with trawl record -k"
/* Can enable -k take spec (this agent has kernel support, the kernel has
 * the event)? 0 or -errno with a message in why. */
TRAWL_HIDDEN int tr_kernel_check(struct trawl_agent *a, const char *spec, char *why,
				 size_t wlen);
TRAWL_HIDDEN int tr_kernel_add_event(struct session *s, const char *spec);
TRAWL_HIDDEN int tr_kernel_set_filter(struct session *s, const char *expr, char *why,
				      size_t wlen);
TRAWL_HIDDEN int tr_kernel_add_pid(struct session *s, const char *v, char *why, size_t wlen);
/* Does the agent's kernel table make flight recorders (snapshot())? */
TRAWL_HIDDEN bool tr_kernel_flight(const struct trawl_agent *a);
/* The flight recorder's newest events into base/HOST/kernel: 0 or -errno
 * with a message; s->kst then holds its figures, and s->kfreq.. its clock
 * (for the user-space snapshot to declare). */
TRAWL_HIDDEN int tr_kernel_snapshot(struct session *s, const char *base, char *why, size_t wlen);
/* Does the kernel part stream a flight recorder's snapshot to a relay? */
TRAWL_HIDDEN bool tr_kernel_flight_relay(const struct trawl_agent *a);
/* The flight recorder's snapshot streamed to relay as rsession/HOST/kernel. */
TRAWL_HIDDEN int tr_kernel_snapshot_relay(struct session *s, const char *relay,
					  const char *rsession, char *why, size_t wlen);
/* Forgets every kernel rule, the filter and the pids. */
TRAWL_HIDDEN void tr_kernel_clear(struct session *s);
/* The recorder of a starting session: prepared (tr_kernel_create), then
 * recording (tr_kernel_start); stopped with its figures kept
 * (tr_kernel_stop); freed unstarted (tr_kernel_destroy). */
TRAWL_HIDDEN int tr_kernel_create(struct session *s, char *why, size_t wlen);
TRAWL_HIDDEN int tr_kernel_start(struct session *s, char *why, size_t wlen);
TRAWL_HIDDEN void tr_kernel_stop(struct session *s);
TRAWL_HIDDEN void tr_kernel_destroy(struct session *s);
/* Streamed: the kernel trace's clock, known at its start, for the
 * user-space trace too. */
TRAWL_HIDDEN void tr_kernel_clock_early(struct session *s);
/* The user-space trace's clock: the kernel trace's when there is one,
 * else measured over the session. */
TRAWL_HIDDEN void tr_ust_clock(struct session *s, struct trawl_ctf_trace *t);

#endif
