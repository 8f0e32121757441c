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
 * cli/time.c: a <time> (docs/time.md, CLI_TIME_HELP) into *out, ns since
 * the epoch: 0, or -1 when malformed. The HH:MM:SS forms are on the local
 * (gmt: UTC) day of day_ref (ns), the +S forms after day_ref (the first
 * event's time); both set *rel, and with day_ref INT64_MIN only the syntax
 * is checked.
 */
int cli_parse_time(const char *s, bool gmt, int64_t day_ref, int64_t *out, bool *rel);
/* The <time> forms, for the commands' usage (each line ends in '\n'). */
#define CLI_TIME_HELP \
	"<time>: seconds since the epoch with an optional fraction (1700000000.5),\n" \
	"nanoseconds since the epoch (an integer of 13 digits or more, or with an\n" \
	"'ns' suffix), 'YYYY-MM-DD HH:MM:SS[.n]', 'HH:MM:SS[.n]' on the day of the\n" \
	"first event, or +S[.n] seconds after the first event (also +N ms, us, ns);\n" \
	"dates are local time unless --clock-gmt (or --gmt) is given.\n"
/* --clock-gmt and its alias --gmt, in a command's long options (val). */
#define CLI_GMT_OPTIONS(val) \
	{ "clock-gmt", no_argument, NULL, (val) }, \
	{ "gmt", no_argument, NULL, (val) }
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
int cmd_top(int argc, char **argv);		/* cmd-top.c */

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
	/* a live session the relay does not list (yet): waited for, a note
	 * said once, up to wait_ms (CLI_WAIT_FOREVER: until it comes or a
	 * signal; 0: an error at once) */
	long wait_ms;
	bool from_now;			/* live: from the next packet (--from-now) */
	bool lazy;			/* live: in no hurry (trawl_source_opts.live_lazy) */
	/* live, no stored correction (--sync): each node's clock corrected
	 * from the session's messages as they come (not --no-sync) */
	bool live_sync;
};
#define CLI_WAIT_FOREVER (-1L)
/* A sync bound as `trawl sync` says it: "1234 ns", or "none". */
const char *cli_bound_str(int64_t b, char *buf, size_t len);
/* The live clock of the last live reader opened (live_sync): host's
 * estimate, 1 (*n set), 0 host not seen yet, -1 no live clock. */
struct trawl_sync_live_node;
int cli_live_clock(const char *host, struct trawl_sync_live_node *n);
/* The same as a short text: "-" (no live clock), "unsync", "reference",
 * "+1.000012s+-24us" (offset from the reference, bound). */
const char *cli_clock_text(const char *host, char *buf, size_t len);
/* --wait SECONDS (0 or more, decimals allowed) into *ms: 0, or the usage
 * error's status. */
int cli_wait_arg(const char *arg, long *ms);
/* The live viewers' options --wait and --from-now, in long options. */
#define CLI_OPT_WAIT 0x7761		/* --wait */
#define CLI_OPT_FROM_NOW 0x666e	/* --from-now */
#define CLI_LIVE_OPTIONS \
	{ "wait", required_argument, NULL, CLI_OPT_WAIT }, \
	{ "from-now", no_argument, NULL, CLI_OPT_FROM_NOW }
/* Their lines of a command's usage. */
#define CLI_LIVE_HELP \
	"      --wait <s>         a live session not there yet: wait at most <s>\n" \
	"                         seconds for it (default: until it comes; 0: fail)\n" \
	"      --from-now         live: from the session's next packet, not from\n" \
	"                         its beginning\n"
struct trawl_reader *cli_open_reader(const char *const *paths, size_t npaths,
				     const struct cli_reader_opts *co,
				     const struct trawl_reader_opts *ro, char *err, size_t errlen);
/* Do the host and event globs of a reader over files match anything? 0,
 * or -ENOENT with the message in err (cli_open_reader() fails so). */
int cli_reader_matches(const struct trawl_reader *r, const char *const *hosts, size_t nhosts,
		       const char *const *events, size_t nevents, char *err, size_t errlen);
/*
 * cli/match.c: the --host and --event globs (and --cpu, unless -1) of a
 * command over the traces under paths: a glob that no trace's host (no
 * event class of the hosts selected) matches, a CPU that no stream of them
 * is of, can never match: the error naming the nearest one there is, and
 * CLI_EXIT_USAGE; else 0 (also with no paths: live sessions
 * add hosts and events as they go, and when the traces cannot be opened:
 * the command's reader says why).
 */
int cli_filters_check(const char *const *paths, size_t npaths, const char *const *hosts,
		      size_t nhosts, const char *const *events, size_t nevents, long cpu);
/* "a, b, c" (the first 8, then ", ... (N in all)"; "" as "(no name)")
 * into buf: the names a message lists. */
const char *cli_name_list(const char *const *v, size_t n, char *buf, size_t cap);
/* The hint "did you mean 'X'?" when one of v is near name (TR_NEAR). */
void cli_near_hint(const char *name, const char *const *v, size_t n);
/* A --live URL that cannot name a session (malformed, or a relay alone):
 * the usage error (CLI_EXIT_USAGE), else 0. */
int cli_live_check(const char *url);
/* The bad_trace hook of a source (arg: an int counter, or NULL: silent). */
void cli_report_bad_trace(void *arg, const char *msg);
/*
 * At the end of a reading command, once: on stderr, a warning per stream
 * that lost events (how many, in which time ranges) and an error per
 * region skipped as corrupt (file, byte offset, bytes, why), then a line
 * with the skipped total. Returns CLI_EXIT_FAILURE when anything was
 * skipped (regions, or nbad traces that could not be opened), else 0: the
 * rule of trawl(1), READING DAMAGED TRACES. r may be NULL.
 */
struct trawl_reader;
int cli_reader_report(const struct trawl_reader *r, int nbad);
/* The same as a "losses" member of the JSON object open in j: per stream
 * with losses or skips its path, host, events lost, ranges (begin_ns,
 * end_ns, events), skipped_bytes, skipped_regions, skips (offset, bytes,
 * why); then the totals events, skipped_bytes, skipped_regions. */
struct json;
void cli_reader_json_losses(struct json *j, const struct trawl_reader *r);
/* For the outputs of JSON objects one a line (analyze, agg --json): when
 * anything was lost or skipped, one more line {"losses": {...}} on stdout.
 * 0 or -errno (a write error). */
int cli_reader_json_line(const struct trawl_reader *r);
/* A sink whose finish() makes that report into status (for a reader that
 * a library call runs: sync). */
struct cli_report {
	int nbad;		/* traces skipped, counted by the caller */
	int status;		/* cli_reader_report()'s, once done */
	bool done;
	char *json;		/* then the losses object's JSON text (free it) */
};
/* A member KEY whose value is the JSON text raw, into the object open in j. */
void cli_json_raw_member(struct json *j, const char *key, const char *raw);
struct trawl_sink;
struct trawl_sink cli_report_sink(struct cli_report *c);
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
/* The plural's "s" of a count: "1 host", "2 hosts", "0 hosts". */
#define CLI_S(n) ((n) == 1 ? "" : "s")
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
