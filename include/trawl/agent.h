/* SPDX-License-Identifier: MIT */
/*
 * trawl/agent.h - the agent: the per-node daemon that applications linked
 * with libtrawl register with, and that records their ring buffers (and,
 * through a table the program supplies, kernel events) into CTF sessions
 * (docs/agent.md). `trawl agent` is one program around it; any program can
 * embed one, or several on several sockets.
 *
 *	struct trawl_agent_opts o = { .sz = sizeof(o), .socket = path };
 *	struct trawl_agent *a = trawl_agent_new(&o, err, sizeof(err));
 *	... trawl_agent_run(a) in some thread; trawl_agent_stop(a) from any
 *	    thread or a signal handler makes it return ...
 *	trawl_agent_free(a);
 *
 * The client side (what the session commands send) is trawl_agent_request().
 *
 * Conventions: int returns are 0 or -errno; pointer returns are NULL with
 * errno set; (err, errlen) receives a one-line message. The library never
 * prints: what the agent has to say goes to opts.log. An agent object is
 * used by one thread at a time, except trawl_agent_stop().
 */
#ifndef TRAWL_AGENT_H
#define TRAWL_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* ------------------------------------------------------- kernel recording */

/* What the agent asks of a kernel recorder for one session. */
struct trawl_agent_kernel_opts {
	size_t sz;			/* sizeof(struct trawl_agent_kernel_opts) */
	const char *dir;		/* SESSION/HOST/kernel; NULL: to the relay only */
	const char *hostname;
	const char *const *events;	/* as enable -k took them: SYSTEM:EVENT, globs, presets */
	size_t nevents;
	const char *filter;		/* one ftrace filter for every event, or NULL */
	const pid_t *pids;		/* only these processes (and their threads); NULL: all */
	size_t npids;
	bool tsc;			/* the session's clock: the TSC, else CLOCK_MONOTONIC */
	const char *relay;		/* HOST[:PORT] of a trawl relay, or NULL */
	const char *relay_session;	/* the session's name there */
	unsigned live_ms;		/* live timer; 0: none */
	/* A flight recorder (an overwrite-mode session): the newest events
	 * kept in the kernel's buffers, written by snapshot() only (dir is
	 * unused); never with relay. */
	bool flight;
	/* The session's directory, dir beneath it: nothing below it is
	 * reached through a symbolic link (trawl_ctf_writer_opts.root). */
	const char *root;
};

/* A kernel recording's figures, once stopped. */
struct trawl_agent_kernel_stats {
	uint64_t events;		/* written */
	uint64_t lost;			/* counted as discarded */
	uint64_t statedump;		/* state dump events among them */
	/* streamed to a relay that cut the trace off (docs/relay.md, "Cut off
	 * by the relay"): the events taken and those the relay did not store;
	 * relay_count 0: exact, -ENODATA: at most (the relay did not say where
	 * it cut), -ENOENT: not streamed */
	uint64_t relay_events, relay_discarded;
	int relay_count;
};

/*
 * Kernel recording, as the program supplies it (libtrawl itself records
 * no kernel events: the trawl program passes lib/kern's table,
 * trawl_kern_agent_ops). Every operation is required; a recorder is the
 * implementation's object, created per recording session. Messages go to
 * (err, errlen).
 */
struct trawl_agent_kernel {
	size_t sz;			/* sizeof(struct trawl_agent_kernel) */
	/* Is spec an event this kernel can record (enable -k, load)? 0 or
	 * -errno (not permitted, no tracefs, no such tracepoint). */
	int (*check)(const char *spec, char *err, size_t errlen);
	/* Prepares a recorder, nothing recorded yet: the recorder, or NULL
	 * with errno set. */
	void *(*create)(const struct trawl_agent_kernel_opts *o, char *err, size_t errlen);
	/* Starts recording: 0 or -errno. Threads it starts must not take the
	 * program's signals. */
	int (*start)(void *rec, char *err, size_t errlen);
	/* Stops, drains and closes the trace; fills *st (also on error): 0 or
	 * -errno. */
	int (*stop)(void *rec, struct trawl_agent_kernel_stats *st, char *err, size_t errlen);
	/* The clock the kernel trace declares, for the user-space trace to
	 * declare the same: 0, or -EAGAIN while it is not known yet. */
	int (*clock)(void *rec, uint64_t *freq, int64_t *offset_s, int64_t *offset);
	/* The trace clock's name ("x86-tsc", "mono"); owned by rec. */
	const char *(*clock_name)(void *rec);
	/* Frees the recorder (stopped or not); accepts NULL. */
	void (*destroy)(void *rec);
	/* A flight recorder, recording: its newest events, read out of the
	 * kernel's buffers now, as a kernel trace in dir; fills *st with this
	 * trace's figures; clock() is then this trace's. 0 or -errno.
	 * Optional (NULL, or a table whose sz does not reach it): the agent
	 * then refuses kernel events in overwrite-mode sessions. */
	int (*snapshot)(void *rec, const char *dir, struct trawl_agent_kernel_stats *st, char *err,
			size_t errlen);
	/* The same snapshot streamed to the trawl relay at relay (trawl/relay.h)
	 * as relay_session/HOST/kernel there, the mono clock only. Optional
	 * (NULL, or a table whose sz does not reach it): the agent then
	 * refuses snapshots of kernel flight recorders to a relay. */
	int (*snapshot_relay)(void *rec, const char *relay, const char *relay_session,
			      struct trawl_agent_kernel_stats *st, char *err, size_t errlen);
};

/* ------------------------------------------------------------ the agent */

/* Log levels of opts.log (syslog's numbers). */
enum {
	TRAWL_AGENT_LOG_ERR = 3,
	TRAWL_AGENT_LOG_WARNING = 4,
	TRAWL_AGENT_LOG_INFO = 6,
};

struct trawl_agent_opts {
	size_t sz;			/* sizeof(struct trawl_agent_opts) */
	const char *socket;		/* the Unix socket to listen on (required) */
	bool world;			/* applications of any user may register: socket
					 * mode 0666, its directory 0755 (the system-wide
					 * agent); else the directory is made 0700 */
	const char *host;		/* the traces' host name (SESSION/HOST/, env
					 * hostname); NULL: gethostname() */
	unsigned flush_ms;		/* drain period while recording; 0: 2 */
	unsigned start_timeout_ms;	/* how long start and stop wait for the
					 * applications' answers; 0: 3000 */
	size_t io_queue;		/* bytes of the user-space trace writer's I/O
					 * queue (a thread of its own); 0: none */
	int rt_prio;			/* > 0: SCHED_FIFO (with SCHED_RESET_ON_FORK)
					 * at this priority, where permitted, for the
					 * thread calling trawl_agent_new() and
					 * trawl_agent_run(); 0: none */
	/*
	 * One session named "oneshot", created from these settings ("key=value"
	 * with the keys of a session description, trawl_agent_setting_at();
	 * "event=GLOB [loglevel L]" and "context=CTX" repeat) and started by
	 * trawl_agent_new(): applications record from their registration on.
	 * NULL: none.
	 */
	const char *const *oneshot;
	size_t noneshot;
	/* Kernel recording (enable -k); NULL: this agent has none. The table
	 * must outlive the agent. */
	const struct trawl_agent_kernel *kernel;
	/* What the agent has to say (applications registering, sessions
	 * started, protocol errors), one line without a newline; called from
	 * the thread running the agent. NULL: nothing. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	/* A trawl relay to join, "HOST[:PORT]" (its data port): cluster
	 * control (docs/cluster.md). The agent connects, says JOIN with its
	 * host name, and runs the verbs the relay forwards; when the relay
	 * goes away it connects again, waiting 0.5 s, then twice as long each
	 * time, up to 30 s. NULL: none. */
	const char *relay;
	/* The trace root: the directory beneath which the relay joined may
	 * name output paths (a create's output=DIR, a snapshot's DIR); a
	 * request of the relay's naming any other path is refused, and so is
	 * one naming a relay other than the one joined. It must exist (made
	 * absolute, symbolic links resolved, at trawl_agent_new()). NULL: the
	 * relay names no path at all (its sessions stream to it only). The
	 * agent's own clients (its Unix socket) are not limited by it. */
	const char *root;
	/* Metrics for Prometheus (docs/metrics.md, "The agent"): "[HOST:]PORT"
	 * (a bare port: on 127.0.0.1; port 0: any free one) on which GET
	 * /metrics gives the agent's sessions and connections, served by a
	 * thread of its own. NULL: none. metrics_token: the bearer token
	 * scrapes must carry (needed off loopback); NULL: none. */
	const char *metrics_addr;
	const char *metrics_token;
};

struct trawl_agent;

/*
 * Creates an agent listening on opts->socket (a stale socket file is
 * replaced; a live agent there is an error), and starts the oneshot
 * session if asked: once it returns, applications and clients can
 * connect. Returns the agent (free it with trawl_agent_free()), or NULL
 * with errno set and a message in err.
 */
struct trawl_agent *trawl_agent_new(const struct trawl_agent_opts *opts, char *err,
				    size_t errlen);
/* The metrics endpoint's "HOST:PORT" (opts.metrics_addr), or NULL when
 * there is none. Owned by a. */
const char *trawl_agent_metrics_addr(const struct trawl_agent *a);
/*
 * Runs the agent (its one loop: connections, the sessions' draining) until
 * trawl_agent_stop(); then stops every recording session (applications
 * hand their buffers over, the traces are completed), closes every
 * connection, frees the sessions and removes the socket. Call once.
 * Returns 0, or -errno: a session's trace could not be written (the
 * first such error), or the loop failed (logged).
 */
int trawl_agent_run(struct trawl_agent *a);
/* Makes trawl_agent_run() finish as above. Async-signal-safe, from any
 * thread; again is harmless. */
void trawl_agent_stop(struct trawl_agent *a);
/* Frees the agent (what run did not end: sessions, connections, the
 * socket file); accepts NULL. Not while trawl_agent_run() runs. */
void trawl_agent_free(struct trawl_agent *a);

/* ---------------------------------------------------------- the clients */

/*
 * Sends one request to the agent at socket and waits for its answer: argv
 * is the verb and its arguments (docs/agent.md, "The protocol": create
 * NAME key=value..., enable NAME GLOB[@LEVEL]... --kernel=SPEC..., start
 * NAME, list [NAME], ...). The answer's text goes to out as it comes
 * (stream 1: output, with its newlines; 2: one error or warning line,
 * without); out may be NULL. Returns the request's status (0 done, 1
 * failed, 2 a bad request), or -errno with a message in err when there was
 * no answer (no agent listening: -ECONNREFUSED or -ENOENT, "no agent at
 * PATH (...)").
 */
int trawl_agent_request(const char *socket, int argc, const char *const *argv,
			void (*out)(void *arg, int stream, const char *text, size_t len),
			void *arg, char *err, size_t errlen);

/* ------------------------------------------------------ session settings */

/* One session setting: a key of create's key=value arguments and of a
 * session description (`trawl save`, `trawl load`). */
struct trawl_agent_setting {
	const char *key;
	const char *arg;		/* the value's form, for usage texts */
	const char *help;		/* one line */
	unsigned flags;			/* TRAWL_AGENT_SETTING_* */
};

enum {
	/* a command-line option --KEY ARG of `trawl create` and `trawl agent
	 * --oneshot` gives it */
	TRAWL_AGENT_SETTING_OPTION = 1,
	/* its default comes from the user's configuration, [session] KEY */
	TRAWL_AGENT_SETTING_CONF = 2,
	/* it repeats (a list) */
	TRAWL_AGENT_SETTING_LIST = 4,
};

/* The i-th setting, in the order of a description; NULL past the last. */
const struct trawl_agent_setting *trawl_agent_setting_at(size_t i);

/* A log level: a name (emerg, alert, crit, err, warning, notice, info,
 * debug, also as TRAWL_LOGLEVEL_<NAME>) or a number 0..14; -1 if neither. */
int trawl_agent_loglevel(const char *s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
