/* SPDX-License-Identifier: MIT */
/* cli/agent/agent.h - the agent daemon (agent.c) and its session verbs. */
#ifndef TRAWL_CLI_AGENT_H
#define TRAWL_CLI_AGENT_H

#include <stdbool.h>
#include <stddef.h>

/* A session's settings, as the session commands send them (key=value). */
struct agent_oneshot {
	const char *output;		/* session directory */
	const char *const *globs;	/* enable rules ("glob" or "glob@loglevel") */
	size_t nglobs;
	const char *const *ctx;		/* context names */
	size_t nctx;
	const char *const *settings;	/* key=value for create (mode, subbuf-size, ...) */
	size_t nsettings;
};

struct agent_opts {
	const char *socket;		/* path to listen on */
	bool foreground;
	const char *pidfile;
	int ready_fd;			/* -1, or written "ready\n" and closed */
	unsigned flush_ms;		/* consumer period */
	size_t io_queue;		/* bytes of the trace writers' I/O queues; 0: none */
	int rt_prio;			/* SCHED_FIFO priority of the loop; 0: none */
	unsigned start_timeout_ms;	/* waiting for applications' acks */
	const struct agent_oneshot *oneshot;	/* NULL: a normal daemon */
	const char *host;		/* SESSION/HOST and env hostname; NULL:
					 * gethostname() */
};

/* Runs the agent until SIGTERM/SIGINT; returns the exit status. */
int agent_run(const struct agent_opts *o);

/* A log level: a name (emerg, alert, crit, err, warning, notice, info,
 * debug, also as TRAWL_LOGLEVEL_<NAME>) or a number 0..14; -1 if neither. */
int agent_loglevel(const char *s);

#endif
