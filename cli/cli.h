/* SPDX-License-Identifier: MIT */
/* cli/cli.h - the trawl command's subcommands, one cmd_<name>() per file. */
#ifndef TRAWL_CLI_H
#define TRAWL_CLI_H

#include <stddef.h>

/*
 * Exit statuses of every command (trawl(1), EXIT STATUS). Each cmd_<name>()
 * returns one; `record -- COMMAND` returns COMMAND's own status (128 + N
 * when a signal N ended it), 127 when it could not be run.
 */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAILURE = 1,	/* the command failed; a message said why */
	CLI_EXIT_USAGE = 2,	/* bad options or arguments: nothing was done */
	CLI_EXIT_NOEXEC = 127,	/* record: COMMAND could not be run */
};

int cmd_print(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_record(int argc, char **argv);		/* cmd-record.c */
int cmd_sync(int argc, char **argv);		/* cmd-sync.c */
int cmd_probe(int argc, char **argv);		/* cmd-probe.c */
int cmd_tcpcap(int argc, char **argv);		/* cmd-tcpcap.c */
/* cmd-session.c: the agent and the session commands */
int cmd_agent(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);
int cmd_add_context(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_destroy(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_load(int argc, char **argv);

/*
 * cmd-sync.c: the stored sync result (SESSION/sync.txt) that applies to
 * the traces under paths, unless no_sync: loads it into *store (free it
 * with trawl_sync_store_free() after the reader), points ro->fixes at its
 * corrections and says so once on stderr. Returns 0 (also when there is
 * none), or 1 after printing the error (a malformed file).
 */
struct trawl_reader_opts;
struct trawl_sync_store;
int cli_sync_load(const char *const *paths, size_t npaths, int no_sync,
		  struct trawl_reader_opts *ro, struct trawl_sync_store **store);

/* Default size of the agent's write queue for user-space traces
 * (trawl_ctf_writer_opts.io_queue), MiB: `trawl agent --io-queue`. */
#define AGENT_IO_QUEUE_MB 64
/* Default SCHED_FIFO priority of the agent's loop (where permitted). */
#define AGENT_RT_PRIO 1

/*
 * cli/daemon.c: detaches a daemon once it is ready. Forks; the child
 * (return 0) gets *ready_fd, a pipe to write its ready line to (then to
 * close), and stdin/stdout on /dev/null; the parent (return 1) waits for
 * that line and returns it in line. -1 when the fork failed or the child
 * exited before it was ready (it printed why).
 */
int cli_detach(int *ready_fd, char *line, size_t linelen);

int cmd_relay(int argc, char **argv);		/* cmd-relay.c */

/*
 * cli/msg.c: every line a command writes on stderr, in one voice:
 * "trawl CMD: WHAT: WHY" (the file and byte offset where one applies, once),
 * maybe followed by "hint: ...". CMD is cli_cmd (set by main before the
 * command runs; NULL: "trawl: ..."). cli_verbosity is -1 with -q (only
 * errors and warnings), 0, 1 with -v (also the internals: sockets, threads,
 * priorities, per-CPU figures). All flush stdout first.
 */
extern const char *cli_cmd;
extern int cli_verbosity;
#define CLI_PRINTF __attribute__((format(printf, 1, 2)))
/* An error: "trawl CMD: MESSAGE"; returns CLI_EXIT_FAILURE. */
int cli_err(const char *fmt, ...) CLI_PRINTF;
/* A usage error: the line, then "Try 'trawl CMD --help'."; returns
 * CLI_EXIT_USAGE. */
int cli_usage(const char *fmt, ...) CLI_PRINTF;
/* getopt_long's '?' or ':' (with opterr = 0) as a usage error (argv: the
 * command's, as given to getopt_long); returns CLI_EXIT_USAGE. */
int cli_opt_error(int c, char **argv);
/* "trawl CMD: warning: MESSAGE", also with -q. */
void cli_warn(const char *fmt, ...) CLI_PRINTF;
/* "hint: MESSAGE": what to do about the error or warning just printed. */
void cli_hint(const char *fmt, ...) CLI_PRINTF;
/* "trawl CMD: MESSAGE": what the user asked for happened (not with -q). */
void cli_note(const char *fmt, ...) CLI_PRINTF;
/* "trawl CMD: MESSAGE": an internal detail (only with -v). */
void cli_info(const char *fmt, ...) CLI_PRINTF;
/* A library's log line (syslog level): error, warning, note, or (debug)
 * info; for the logging hooks of trawl/agent.h, relay.h, sim.h, probe.h. */
void cli_log(int level, const char *msg);
/* The trace paths of print, info and sync: an error (and a hint) naming
 * the first that is not a directory, and what it is; returns
 * CLI_EXIT_FAILURE then, else 0. */
int cli_trace_paths(const char *const *paths, size_t npaths);

#endif
