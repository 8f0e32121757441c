/* SPDX-License-Identifier: MIT */
/*
 * cli/trawl.c - the trawl command: a table of subcommands, git-style.
 *
 *   trawl [--help | --version] COMMAND [ARGS...]
 *   trawl help COMMAND        the command's manual page, or its usage
 *   trawl COMMAND --help      the command's usage
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static int cmd_help(int argc, char **argv);

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/* Keep in the order `trawl --help` lists them. */
static const struct command commands[] = {
	{ "print", cmd_print, "print events as text, one line each (babeltrace2's format)" },
	{ "info", cmd_info, "summarize traces: hosts, streams, event counts, time range" },
	{ "simulate", cmd_simulate, "write a synthetic multi-host session (for tests and demos)" },
	{ "record", cmd_record, "trace a command (kernel and user space) into a session, like perf record" },
	{ "sync", cmd_sync, "synchronize a session's clocks (offset and drift per node)" },
	{ "probe", cmd_probe, "exchange clock-sync probe messages with peer nodes, recorded" },
	{ "tcpcap", cmd_tcpcap, "record TCP segments (eBPF) as sync points, no extra traffic" },
	{ "agent", cmd_agent, "the per-node daemon that applications register with" },
	{ "relay", cmd_relay, "receive the nodes' traces and serve them live (LTTng live protocol)" },
	{ "create", cmd_create, "create a tracing session (to a directory, or in snapshot mode)" },
	{ "enable", cmd_enable, "enable events of a session by provider:event glob" },
	{ "disable", cmd_disable, "disable events of a session" },
	{ "add-context", cmd_add_context, "add context fields (vpid, vtid, procname, cgroup) to events" },
	{ "start", cmd_start, "start recording a session" },
	{ "stop", cmd_stop, "stop recording a session" },
	{ "snapshot", cmd_snapshot, "record a snapshot of a snapshot-mode session" },
	{ "destroy", cmd_destroy, "destroy a session" },
	{ "list", cmd_list, "list sessions, registered applications and their events" },
	{ "save", cmd_save, "save a session's description to a file" },
	{ "load", cmd_load, "load a session from a saved description" },
	{ "help", cmd_help, "show a command's manual page or usage" },
};

int die_msg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("trawl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int cli_usage_error(const char *who, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	if (who)
		fprintf(stderr, "%s: ", who);
	else
		fprintf(stderr, "trawl: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'trawl %s --help'.\n", cmd);
	return 2;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trawl [--help | --version] <command> [<args>]\n"
		"\n"
		"trawl traces a Linux cluster as if it were one machine.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "   %-12s %s\n", commands[i].name, commands[i].help);
	fprintf(f,
		"\n"
		"'trawl help <command>' or 'trawl <command> --help' shows a command's usage;\n"
		"'man trawl-<command>' its manual.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Edit distance, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	return prev[lb];
}

static int unknown(const char *name)
{
	const struct command *best = NULL;
	size_t bestd = 3;

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		size_t d = distance(name, commands[i].name);

		if (strncmp(name, commands[i].name, strlen(name)) == 0 && name[0])
			d = 1;	/* a prefix */
		if (d < bestd) {
			bestd = d;
			best = &commands[i];
		}
	}
	fprintf(stderr, "trawl: '%s' is not a trawl command. See 'trawl --help'.\n", name);
	if (best)
		fprintf(stderr, "\nThe most similar command is\n\t%s\n", best->name);
	return 2;
}

/* Runs `man -w PAGE` quietly: is the page installed? */
static int man_page_exists(const char *page)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return 0;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("man", "man", "-w", page, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *c;
	char page[64];

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	c = find(argv[1]);
	if (!c)
		return unknown(argv[1]);
	if (c->fn == cmd_help) {
		printf("usage: trawl help [<command>]\n");
		return 0;
	}
	snprintf(page, sizeof(page), "trawl-%s", c->name);
	if (isatty(STDOUT_FILENO) && man_page_exists(page)) {
		fflush(stdout);
		execlp("man", "man", page, (char *)NULL);
		/* no man: fall back to the usage */
	}
	char *args[] = { (char *)c->name, (char *)"--help", NULL };

	return c->fn(2, args);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0 ||
	    strcmp(argv[1], "version") == 0) {
		printf("trawl %s\n", TRAWL_VERSION);
		return 0;
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "trawl: unknown option '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	c = find(argv[1]);
	if (!c)
		return unknown(argv[1]);
	return c->fn(argc - 1, argv + 1);
}
