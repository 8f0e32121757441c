/* SPDX-License-Identifier: MIT */
/* cli/cli.h - the trawl command's subcommands, one cmd_<name>() per file. */
#ifndef TRAWL_CLI_H
#define TRAWL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
int cmd_state(int argc, char **argv);		/* cmd-state.c */
/*
 * cli/time.c: a <time> of print --begin (its usage) into *out, ns since the
 * epoch: 0, or -1 when malformed. The HH:MM:SS forms are on the local (gmt:
 * UTC) day of day_ref (ns); they set *rel, and with day_ref INT64_MIN only
 * the syntax is checked.
 */
int cli_parse_time(const char *s, bool gmt, int64_t day_ref, int64_t *out, bool *rel);
/*
 * --begin/--end <time> of the commands that read traces (print, analyze),
 * dates in local time unless gmt (--clock-gmt). cli_time_range_parse()
 * checks the syntax (first, before anything is opened); then, once ro
 * holds the hosts and the clock corrections, cli_time_range_apply() puts
 * the times of day on the day of the first event of the traces under
 * paths and the range into ro->begin and ro->end. Each returns 0, or the
 * command's exit status once the error is printed.
 */
struct trawl_reader_opts;
struct cli_time_range {
	const char *begin_s, *end_s;	/* the options' values; NULL: not given */
	bool gmt;
	int64_t begin, end;		/* ns since the epoch */
	bool brel, erel;		/* times of day */
};
int cli_time_range_parse(struct cli_time_range *t);
/* The first event's time (0 when there is none) of the traces under paths,
 * with ro's hosts and clock corrections (ro's filters of time and events
 * left out): the day of HH:MM:SS times. 0, or 1 once the error is printed. */
int cli_first_ts(const char *const *paths, size_t npaths, const struct trawl_reader_opts *ro,
		 int64_t *ts);
int cli_time_range_apply(struct cli_time_range *t, const char *const *paths, size_t npaths,
			 struct trawl_reader_opts *ro);
int cmd_info(int argc, char **argv);
int cmd_analyze(int argc, char **argv);	/* cmd-analyze.c */
int cmd_simulate(int argc, char **argv);
int cmd_record(int argc, char **argv);		/* cmd-record.c */
int cmd_sync(int argc, char **argv);		/* cmd-sync.c */
int cmd_probe(int argc, char **argv);		/* cmd-probe.c */
int cmd_tcpcap(int argc, char **argv);		/* cmd-tcpcap.c */
int cmd_export(int argc, char **argv);		/* cmd-export.c */
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
/* --sync with --no-sync: the usage error (exit 2), else 0; before any
 * work, so that a usage error does nothing (cli_sync_use checks it too). */
int cli_sync_check(const char *sync_path, int no_sync);
/* cli_sync_load() for the options --sync PATH (sync_path: that stored
 * result, which must be there; NULL: the one under paths) and --no-sync:
 * 0, or the command's exit status once the error is printed (the two
 * options together are a usage error). */
int cli_sync_use(const char *sync_path, const char *const *paths, size_t npaths, int no_sync,
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

/*
 * cli/daemon.c: --ready-fd N of the commands that must be ready before
 * traffic (agent, relay, probe, tcpcap). cli_ready_fd_arg(): N, or -1 when
 * the argument is not an open descriptor. cli_ready(): writes the ready
 * line ("ready" and fmt's words, if any) to *fd once and closes it (*fd
 * becomes -1; nothing when it is -1 already).
 */
int cli_ready_fd_arg(const char *arg);
void cli_ready(int *fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cmd_relay(int argc, char **argv);		/* cmd-relay.c */
int cmd_cluster(int argc, char **argv);		/* cmd-cluster.c */
int cmd_secret(int argc, char **argv);		/* cmd-secret.c */
/* The credential file of a producer or viewer (docs/auth.md): opt (its
 * --secret-file), else the environment's TRAWL_SECRET_FILE, else [relay]
 * secret-file; exported as TRAWL_SECRET_FILE for the library and the
 * children. NULL: none. */
const char *cli_secret_env(const char *opt);
int cmd_view(int argc, char **argv);		/* cmd-view.c */
int cmd_agg(int argc, char **argv);		/* cmd-agg.c */

/*
 * cli/reader.c: the reader of print and agg over the traces under paths
 * and the live sessions (net://...), each source with the hosts and
 * events filters and ro's clock corrections (ro's own filters are left
 * out). A trace of a session that cannot be opened is reported and
 * counted in *nbad (when set), and skipped. NULL with the message in err.
 */
struct trawl_reader_opts;
struct cli_reader_opts {
	const char *const *hosts, *const *events, *const *live;
	size_t nhosts, nevents, nlive;
	int *nbad;
};
struct trawl_reader *cli_open_reader(const char *const *paths, size_t npaths,
				     const struct cli_reader_opts *co,
				     const struct trawl_reader_opts *ro, char *err, size_t errlen);
/* The bad_trace hook of a source (arg: an int counter, or NULL: silent). */
void cli_report_bad_trace(void *arg, const char *msg);
/* --match SPEC (trawl_sync_match_parse) appended to *m (*n of them): 0, or
 * the command's exit status once the error is printed. */
struct trawl_sync_match;
int cli_match_add(struct trawl_sync_match **m, size_t *n, const char *spec);
/* A repeated option's value (--host GLOB, ...) appended to *v (*n of them;
 * the caller frees *v, not the strings): 0, or the command's exit status
 * once the error is printed. */
int cli_arg_add(const char ***v, size_t *n, const char *arg);

/*
 * cli/progress.c: the progress line of long commands on stderr, redrawn
 * in place: done of total, percent, rate, time left (events so far where
 * known). On a terminal only, unless --progress; never with --no-progress
 * or -q.
 * A command puts CLI_PROGRESS_OPTIONS in its long options, keeps the value
 * of the last one seen (0: neither) and passes it to cli_progress_start().
 */
#define CLI_OPT_PROGRESS 0x7072		/* --progress */
#define CLI_OPT_NO_PROGRESS 0x6e70	/* --no-progress */
#define CLI_PROGRESS_OPTIONS \
	{ "progress", no_argument, NULL, CLI_OPT_PROGRESS }, \
	{ "no-progress", no_argument, NULL, CLI_OPT_NO_PROGRESS }

enum cli_progress_unit {
	CLI_PROGRESS_BYTES,
	CLI_PROGRESS_EVENTS,
	CLI_PROGRESS_TIME,		/* ns: a duration */
};

struct trawl_reader;
struct cli_progress {
	const char *who;		/* "trawl info" */
	enum cli_progress_unit unit;
	bool on, tty, forced, drawn;
	uint64_t done, total;		/* in unit; total 0: unknown */
	uint64_t events;		/* so far, shown when counts */
	bool counts;			/* events are counted */
	uint64_t next, step;		/* the clock is read when done (or events) >= next */
	int64_t t0, checked, due, interval;	/* CLOCK_MONOTONIC ns */
	unsigned cols;			/* the terminal's width */
	struct trawl_reader *r;		/* the sink's reader, while it runs */
};

/* Sets p up; opt: CLI_OPT_PROGRESS, CLI_OPT_NO_PROGRESS or 0 (when stderr
 * is a terminal). total in unit, 0 when unknown. */
void cli_progress_start(struct cli_progress *p, const char *who, int opt,
			enum cli_progress_unit unit, uint64_t total);
/* Reads the clock, redraws when due (cli_progress_set/_add call it). */
void cli_progress_tick(struct cli_progress *p);
/* done so far (in unit): an add and a compare unless the clock is due. */
static inline void cli_progress_set(struct cli_progress *p, uint64_t done)
{
	p->done = done;
	if (p->on && done >= p->next)
		cli_progress_tick(p);
}
static inline void cli_progress_add(struct cli_progress *p, uint64_t n)
{
	cli_progress_set(p, p->done + n);
}
/* The last line (done = total when complete), then cleared on a terminal
 * or ended with a newline in a file. p is off afterwards. */
void cli_progress_end(struct cli_progress *p, bool complete);
/* Erases the line (if drawn on a terminal) before other stderr output;
 * the next tick draws it again. */
void cli_progress_hide(void);
/* Is stdout the terminal stderr is (print shows no progress then)? */
bool cli_progress_same_tty(void);
/* A sink that counts the events and shows how far the run's reader is
 * through its bytes (trawl_reader_progress()); it ends in finish(). */
struct trawl_sink cli_progress_sink(struct cli_progress *p);
/* The bytes of every file under dir. */
uint64_t cli_dir_bytes(const char *dir);

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
/* After the command: standard output flushed; when it could not be
 * written (a full disk, /dev/full, an I/O error; at any point of the
 * command), "trawl CMD: standard output: WHY" and CLI_EXIT_FAILURE in place
 * of a success. A reader that left (EPIPE) changes nothing, as SIGPIPE would
 * have ended the command. Returns the command's exit status. */
int cli_stdout_done(int status);
/* fflush(stdout), keeping the errno of a failure for cli_stdout_done()
 * (a second flush no longer has it): 0 or EOF. */
int cli_flush_stdout(void);
/* A library's log line (syslog level): error, warning, note, or (debug)
 * info; for the logging hooks of trawl/agent.h, relay.h, sim.h, probe.h. */
void cli_log(int level, const char *msg);
/* The trace paths of print, info and sync: an error (and a hint) naming
 * the first that is not a directory, and what it is; returns
 * CLI_EXIT_FAILURE then, else 0. */
int cli_trace_paths(const char *const *paths, size_t npaths);

#endif
