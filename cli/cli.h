/* SPDX-License-Identifier: MIT */
/* cli/cli.h - the trawl command's subcommands, one cmd_<name>() per file. */
#ifndef TRAWL_CLI_H
#define TRAWL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each returns the process exit status: 0 ok, 1 failure, 2 usage error. */
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
int cli_detach(const char *who, int *ready_fd, char *line, size_t linelen);

int cmd_relay(int argc, char **argv);		/* cmd-relay.c */

/*
 * cli/progress.c: the progress line of long commands on stderr, redrawn
 * in place: done of total, percent, rate, time left (events so far where
 * known). On a terminal only, unless --progress; never with --no-progress.
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

/* Prints "trawl: " + message + "\n" on stderr; returns 1. */
int die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error of command cmd: prints "WHO: message" and "Try 'trawl CMD
 * --help'." on stderr (who NULL: "trawl: CMD"); returns 2. */
int cli_usage_error(const char *who, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
