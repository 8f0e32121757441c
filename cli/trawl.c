/* SPDX-License-Identifier: MIT */
/*
 * cli/trawl.c - the trawl command: a table of subcommands, git-style.
 *
 *   trawl [--help | --version] COMMAND [ARGS...]
 *   trawl help COMMAND        the command's manual page (from the build tree
 *                             too), or its usage
 *   trawl COMMAND --help      the command's usage
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "internal.h"	/* tr_closest */

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
	{ "analyze", cmd_analyze, "standard analyses: cputop, schedlat, iolatency, irq, syscalls" },
	{ "agg", cmd_agg, "aggregate events: counts, sums, histograms, heat maps (bpftrace-style)" },
	{ "top", cmd_top, "the hosts' processes per interval: CPU, latency, I/O, IRQs, syscalls (live or replayed)" },
	{ "simulate", cmd_simulate, "write a synthetic multi-host session (for tests and demos)" },
	{ "record", cmd_record, "trace a command (kernel and user space) into a session, like perf record" },
	{ "state", cmd_state, "the state of CPUs, threads, files at a time, and the events that built it" },
	{ "sync", cmd_sync, "synchronize a session's clocks (offset and drift per node)" },
	{ "export", cmd_export, "write a session for Perfetto or chrome://tracing" },
	{ "probe", cmd_probe, "exchange clock-sync probe messages with peer nodes, recorded" },
	{ "tcpcap", cmd_tcpcap, "record TCP segments (eBPF) as sync points, no extra traffic" },
	{ "agent", cmd_agent, "the per-node daemon that applications register with" },
	{ "relay", cmd_relay, "receive the nodes' traces and serve them live (LTTng live protocol)" },
	{ "cluster", cmd_cluster, "list the nodes joined to a relay; create, start, stop, snapshot on all" },
	{ "secret", cmd_secret, "make a relay's credentials: the cluster secret, node and viewer keys" },
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
	{ "view", cmd_view, "show a session as a timeline in one HTML page (or serve it)" },
	{ "help", cmd_help, "show a command's manual page or usage" },
};

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
		"'trawl help <command>' shows a command's manual page (man trawl-<command>\n"
		"once installed), 'trawl <command> --help' its options; 'trawl help trawl'\n"
		"the overview and the exit statuses.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int unknown(const char *name)
{
	const char *names[sizeof(commands) / sizeof(commands[0])];

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	const char *best = tr_closest(name, names, sizeof(names) / sizeof(names[0]), 2);
	cli_err("'%s' is not a trawl command", name);
	if (best)
		cli_hint("did you mean 'trawl %s'? (the commands: 'trawl --help')", best);
	else
		cli_hint("the commands: 'trawl --help'");
	return CLI_EXIT_USAGE;
}

/*
 * The file of manual page PAGE (trawl-print): next to the binary when it is
 * installed (BIN/../share/man/man1), in the source tree it was built in
 * (BUILD/../docs/man, or TRAWL_SRC_MANDIR for an O= build elsewhere). 0 and
 * the path in buf, or -1 (then `man PAGE` may still find an installed one).
 */
static int page_file(const char *page, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *dirs[3] = { NULL };
	char d0[PATH_MAX + 32], d1[PATH_MAX + 32];

	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(d0, sizeof(d0), "%s/../share/man/man1", exe);
		snprintf(d1, sizeof(d1), "%s/../docs/man", exe);
		dirs[0] = d0;
		dirs[1] = d1;
	}
#ifdef TRAWL_SRC_MANDIR
	dirs[2] = TRAWL_SRC_MANDIR;
#endif
	for (size_t i = 0; i < 3; i++) {
		if (!dirs[i])
			continue;
		if ((size_t)snprintf(buf, len, "%s/%s.1", dirs[i], page) < len &&
		    access(buf, R_OK) == 0)
			return 0;
	}
	return -1;
}

/* Runs man ARGS with stdout as it is; its exit status, 127 when no man. */
static int run_man(const char *const *args)
{
	pid_t pid;
	int st;

	fflush(stdout);
	if ((pid = fork()) < 0)
		return 127;
	if (pid == 0) {
		execvp("man", (char *const *)args);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 127;
}

/* A plain rendering of a manual page (without man): filled lines. */
struct plain {
	char out[4096];
	size_t len;
	int indent;
	bool nofill;
};

static void plain_flush(struct plain *p)
{
	if (p->len)
		printf("%*s%.*s\n", p->indent, "", (int)p->len, p->out);
	p->len = 0;
}

/* Appends roff text (escapes as plain characters); space: before it. */
static void plain_add(struct plain *p, const char *s, size_t n, bool space)
{
	char w[1024];
	size_t k = 0;

	for (size_t i = 0; i < n && k < sizeof(w) - 1; i++) {
		if (s[i] != '\\') {
			w[k++] = s[i];
			continue;
		}
		if (++i >= n)
			break;
		if (s[i] == 'f' && i + 1 < n)
			i++;			/* a font: \fB, \fR, \fI */
		else if (s[i] == '(' && i + 2 < n)
			i += 2, w[k++] = '-';	/* \(em and the like */
		else if (s[i] == 'e')
			w[k++] = '\\';
		else if (s[i] != '&' && s[i] != 'c' && s[i] != '%')
			w[k++] = s[i];		/* \- \\ \. (\% \& \c: nothing) */
	}
	if (!k)
		return;
	/* a line breaks between words only: "trawl-info" and "(1)" of .BR stay together */
	if (!p->nofill && space && p->len && p->indent + p->len + 1 + k > 78)
		plain_flush(p);
	if (space && p->len)
		p->out[p->len++] = ' ';
	if (p->len + k < sizeof(p->out)) {
		memcpy(p->out + p->len, w, k);
		p->len += k;
	}
}

/* Text words (or, no fill, the whole line). */
static void plain_text(struct plain *p, const char *t)
{
	if (p->nofill) {
		plain_add(p, t, strlen(t), true);
		plain_flush(p);
		return;
	}
	while (*t) {
		size_t n = strcspn(t, " \t");
		plain_add(p, t, n, true);
		t += n;
		t += strspn(t, " \t");
	}
}

/* A font macro's arguments: .B/.I words, .BR/.IR/... joined. */
static void plain_font(struct plain *p, const char *t, bool alternate)
{
	bool first = true;

	while (*t) {
		t += strspn(t, " \t");
		size_t n;
		if (*t == '"') {
			n = strcspn(++t, "\"");
			plain_add(p, t, n, first || !alternate);
			t += n + (t[n] == '"');
		} else if (*t) {
			n = strcspn(t, " \t");
			plain_add(p, t, n, first || !alternate);
			t += n;
		}
		first = false;
	}
	if (p->nofill)
		plain_flush(p);
}

static int plain_page(const char *path)
{
	FILE *f = fopen(path, "re");
	struct plain p = { .indent = 7 };
	char line[4096];
	bool tag = false;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *m = line + 1, *arg = line + strcspn(line, " ");
		size_t ml = strcspn(m, " ");
#define IS(name) (ml == strlen(name) && strncmp(m, name, ml) == 0)

		arg += *arg == ' ';
		if (line[0] != '.') {
			plain_text(&p, line);
		} else if (IS("SH") || IS("SS") || IS("TH")) {
			plain_flush(&p);
			if (*m != 'T')
				putchar('\n');
			p.indent = 0;
			plain_font(&p, arg, false);
			plain_flush(&p);
			p.indent = 7;
			continue;
		} else if (IS("PP") || IS("TP") || IS("IP")) {
			plain_flush(&p);
			putchar('\n');
			p.indent = 7;
			tag = *m == 'T';
			if (*m == 'I' && *arg) {
				plain_font(&p, arg, false);
				tag = true;
			} else {
				continue;
			}
		} else if (IS("nf") || IS("EX")) {
			plain_flush(&p);
			p.nofill = true;
		} else if (IS("fi") || IS("EE")) {
			plain_flush(&p);
			p.nofill = false;
		} else if (IS("br")) {
			plain_flush(&p);
		} else if (ml >= 1 && ml <= 2 && strchr("BIR", m[0])) {
			plain_font(&p, arg, ml == 2);
		} else {
			continue;	/* comments, .RS, .RE, ... */
		}
		if (tag) {
			plain_flush(&p);	/* a .TP or .IP tag: the text below, further in */
			p.indent = 14;
			tag = false;
		}
	}
#undef IS
	plain_flush(&p);
	fclose(f);
	return 0;
}

/*
 * `trawl help CMD`: the manual page, with man on a terminal, as plain text
 * otherwise (man's rendering, or ours without man); the command's usage
 * when no page is found.
 */
static int show_page(const struct command *c, const char *name)
{
	char page[64], path[PATH_MAX + 64];

	snprintf(page, sizeof(page), "%s%s", c ? "trawl-" : "", name);
	if (page_file(page, path, sizeof(path)) == 0) {
		const char *args[] = { "man", "-l", path, NULL };

		if (!isatty(STDOUT_FILENO))
			unsetenv("MAN_KEEP_FORMATTING");	/* text, no overstrikes */
		if (run_man(args) == 0 || plain_page(path) == 0)
			return 0;
	} else {
		const char *args[] = { "man", page, NULL };
		int fd = dup(STDERR_FILENO), nul = open("/dev/null", O_WRONLY);

		/* an installed page elsewhere (MANPATH): man says nothing if none */
		if (nul >= 0)
			dup2(nul, STDERR_FILENO);
		int r = run_man(args);
		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		if (nul >= 0)
			close(nul);
		if (r == 0)
			return 0;
	}
	if (!c) {
		usage(stdout);
		return 0;
	}
	cli_note("no manual page %s found (next to the binary, in the source tree, by man): "
		 "its usage instead", page);
	char *args[] = { (char *)c->name, (char *)"--help", NULL };

	return c->fn(2, args);
}

static int cmd_help(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (argv[1][0] == '-')
		return cli_usage("unrecognized option '%s'", argv[1]);
	if (argc > 2)
		return cli_usage("unexpected argument '%s'", argv[2]);
	if (strcmp(argv[1], "trawl") == 0)
		return show_page(NULL, "trawl");
	c = find(argv[1]);
	if (!c)
		return unknown(argv[1]);
	if (c->fn == cmd_help) {
		printf("usage: trawl help [<command>]\n");
		return 0;
	}
	cli_cmd = c->name;
	return show_page(c, c->name);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);	/* no command: a usage error (trawl(1), EXIT STATUS) */
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0 ||
	    strcmp(argv[1], "version") == 0) {
		printf("trawl %s\n", TRAWL_VERSION);
		return 0;
	}
	if (argv[1][0] == '-') {
		return cli_usage("unrecognized option '%s'", argv[1]);
	}
	c = find(argv[1]);
	if (!c)
		return unknown(argv[1]);
	cli_cmd = c->name;
	return cli_stdout_done(c->fn(argc - 1, argv + 1));
}
