/* SPDX-License-Identifier: MIT */
/* cli/cli.h - the trawl command's subcommands, one cmd_<name>() per file. */
#ifndef TRAWL_CLI_H
#define TRAWL_CLI_H

#include <stddef.h>

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

/* Prints "trawl: " + message + "\n" on stderr; returns 1. */
int die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error of command cmd: prints "WHO: message" and "Try 'trawl CMD
 * --help'." on stderr (who NULL: "trawl: CMD"); returns 2. */
int cli_usage_error(const char *who, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
