/* SPDX-License-Identifier: MIT */
/*
 * cmd-session.c - `trawl agent` and the session commands (create, enable,
 * disable, add-context, start, stop, snapshot, destroy, list, save, load),
 * modelled on LTTng's. The commands check their options here, then send
 * one request to the agent (trawl_agent_request(), docs/agent.md) and print
 * its answer; the agent itself is the library's (lib/agent/, trawl/agent.h):
 * `trawl agent` parses its options, detaches, writes the pidfile, turns
 * SIGTERM and SIGINT into trawl_agent_stop() and prints its log. Kernel
 * rules (enable/disable -k, --filter, --pid) travel as "--kernel=SPEC",
 * "--filter=EXPR", "--pid=N" and "--kernel-all" arguments of the request;
 * kernel recording is lib/kern's table (trawl_kern_agent_ops).
 *
 * Session settings come from the agent's table (trawl_agent_setting_at()):
 * each row flagged OPTION is an option --KEY of create and agent --oneshot,
 * each flagged CONF takes its default from [session] KEY (lib/util/config.h).
 * Other settings: [agent] socket, flush-ms, io-queue-mb, rt-prio,
 * start-timeout-ms; [session] output-dir.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "internal.h"
#include "kern/agent-kern.h"
#include "trawl/agent.h"
#include "ust/proto.h"
#include "ust/ust-internal.h"
#include "util/clock.h"
#include "util/config.h"
#include "util/outfile.h"

/* ------------------------------------------------------------- helpers */


static struct trawl_conf *conf;

/* The whole of s as a number in [lo, hi] into *v: true, else false. */
static bool num_in(const char *s, long lo, long hi, long *v)
{
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (!*s || *end || errno || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

static const char *setting(const char *section, const char *key)
{
	if (!conf) {
		char err[256];
		conf = tr_conf_load(err, sizeof(err));
		if (!conf) {
			cli_err("%s", err);
			exit(1);
		}
	}
	return tr_conf_get(conf, section, key);
}

/* The agent's socket: [agent] socket (or TRAWL_AGENT_SOCKET), else the
 * per-user one, else the system-wide one if it exists. */
static void agent_socket(char *buf, size_t len)
{
	const char *s = setting("agent", "socket");
	if (s && *s) {
		snprintf(buf, len, "%s", s);
		return;
	}
	struct stat st;
	tr_ust_agent_path(buf, len, false);
	if (stat(buf, &st) == 0)
		return;
	char sys[108];
	tr_ust_agent_path(sys, sizeof(sys), true);
	if (stat(sys, &st) == 0)
		snprintf(buf, len, "%s", sys);
}

/* The agent's answer: its output on stdout, its messages on stderr. */
static void print_answer(void *arg, int stream, const char *text, size_t len)
{
	if (stream == 1) {
		fwrite(text, 1, len, stdout);
		return;
	}
	(void)arg;
	if (len >= 6 && memcmp(text, "hint: ", 6) == 0)	/* the agent's hint: a line of its own */
		cli_hint("%.*s", (int)len - 6, text + 6);
	else
		cli_err("%.*s", (int)len, text);
}

/* Sends argv to the agent, prints its answer; returns its status. */
static int request(const char *cmd, int argc, const char *const *argv)
{
	char path[108], err[512];
	agent_socket(path, sizeof(path));
	int r = trawl_agent_request(path, argc, argv, print_answer, (void *)cmd, err, sizeof(err));
	fflush(stdout);
	if (r == -ENOENT || r == -ECONNREFUSED || r == -ENOTDIR) {
		cli_err("%s", err);
		cli_hint("start one with 'trawl agent'");
		return CLI_EXIT_FAILURE;
	}
	if (r < 0)
		return cli_err("%s", err);
	return r;
}

/* Short commands: NAME and maybe more positional arguments. */
static int simple(int argc, char **argv, const char *usage, int minpos, int maxpos)
{
	const char *cmd = argv[0];
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: trawl %s %s\n", cmd, usage);
			return 0;
		}
		return cli_opt_error(c, argv);
	}
	int npos = argc - optind;
	if (npos < minpos)
		return cli_usage("missing argument (%s)", usage);
	if (maxpos >= 0 && npos > maxpos)
		return cli_usage("unexpected argument '%s'", argv[optind + maxpos]);
	const char **av = calloc((size_t)npos + 2, sizeof(*av));
	if (!av)
		return cli_err("out of memory");
	av[0] = cmd;
	for (int i = 0; i < npos; i++)
		av[i + 1] = argv[optind + i];
	int r = request(cmd, npos + 1, av);
	free(av);
	return r;
}

static char *absolute(const char *p)
{
	if (p[0] == '/')
		return strdup(p);
	char cwd[PATH_MAX];
	char *out = NULL;
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(&out, "%s/%s", cwd, p) < 0)
		return NULL;
	return out;
}

/* ------------------------------------------------------------- create */

/* At most this many session settings have options (the table has fewer). */
#define MAX_SETTINGS 64

/* The index of a session setting in the agent's table (a key it has). */
static size_t setting_index(const char *key)
{
	const struct trawl_agent_setting *st;
	size_t i;
	for (i = 0; (st = trawl_agent_setting_at(i)); i++)
		if (strcmp(st->key, key) == 0)
			break;
	return i;
}

/* The table's --KEY ARG options (TRAWL_AGENT_SETTING_OPTION), described. */
static void setting_options_usage(FILE *f)
{
	const struct trawl_agent_setting *st;
	for (size_t i = 0; (st = trawl_agent_setting_at(i)); i++) {
		if (!(st->flags & TRAWL_AGENT_SETTING_OPTION))
			continue;
		char o[64];
		snprintf(o, sizeof(o), "--%s %s", st->key, st->arg);
		fprintf(f, "  %-26s %s\n", o, st->help);
	}
}

/*
 * Adds the table's --KEY ARG options to opts (from *n on, val base + row),
 * ending the array; returns the count.
 */
static size_t setting_options(struct option *opts, size_t n, size_t cap, int base)
{
	const struct trawl_agent_setting *st;
	for (size_t i = 0; (st = trawl_agent_setting_at(i)) && i < MAX_SETTINGS && n + 1 < cap; i++)
		if (st->flags & TRAWL_AGENT_SETTING_OPTION)
			opts[n++] = (struct option){ st->key, required_argument, NULL, base + (int)i };
	opts[n] = (struct option){ 0 };
	return n;
}

/* Appends "key=value" to the request's arguments. */
static int push_setting(const char *cmd, char ***v, size_t *n, const char *key, const char *val)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return cli_err("out of memory");
	*v = nv;
	if (asprintf(&nv[*n], "%s=%s", key, val) < 0)
		return cli_err("out of memory");
	(*n)++;
	return 0;
}

/*
 * The session settings of create and agent --oneshot, one per row of the
 * agent's table that has a value: the command line's --KEY (vals[row];
 * for mode, the one --snapshot, --overwrite or --discard gave), else, for
 * rows flagged CONF, [session] KEY of the configuration.
 */
static int push_settings(const char *cmd, char ***v, size_t *n, const char *const *vals,
			 const char *mode)
{
	const struct trawl_agent_setting *st;
	int r = 0;
	for (size_t i = 0; !r && (st = trawl_agent_setting_at(i)) && i < MAX_SETTINGS; i++) {
		const char *x = vals[i];
		if (!strcmp(st->key, "mode") && mode)
			x = mode;
		if (!x && (st->flags & TRAWL_AGENT_SETTING_CONF))
			x = setting("session", st->key);
		if (x)
			r = push_setting(cmd, v, n, st->key, x);
	}
	return r;
}

static void free_args(char **v, size_t n);
static int request_args(const char *verb, const char *name, char **v, size_t n);

int cmd_create(int argc, char **argv)
{
	enum { O_SNAP = 256, O_OVER, O_DISC, O_SET = 512 };
	struct option opts[48] = {
		{ "output", required_argument, NULL, 'o' },
		{ "snapshot", no_argument, NULL, O_SNAP },
		{ "overwrite", no_argument, NULL, O_OVER },
		{ "discard", no_argument, NULL, O_DISC },
		{ "help", no_argument, NULL, 'h' },
	};
	setting_options(opts, 5, ARRAY_SIZE(opts), O_SET);
	const char *vals[MAX_SETTINGS] = { NULL };	/* per setting: --KEY's value */
	const char *out = NULL, *mode = NULL;
	bool snap = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case O_SNAP: snap = true; break;
		case O_OVER: mode = "overwrite"; break;
		case O_DISC: mode = "discard"; break;
		case 'h':
			printf("usage: trawl create NAME [-o DIR | --snapshot [-o DIR]] [--overwrite | --discard]\n"
			       "                    [--KEY VALUE]...\n"
			       "Creates a session in the agent. Its trace goes to DIR/HOST/ust/ (default\n"
			       "~/trawl-traces/NAME-DATE, or [session] output-dir/NAME-DATE). --snapshot: a\n"
			       "flight recorder (overwrite mode) written only by 'trawl snapshot record'.\n"
			       "--relay: streamed to a trawl relay as RELAY-OUTPUT/NAME/HOST/{ust,kernel}\n"
			       "(--relay-session renames it there); without -o, only there. --live-timer:\n"
			       "every MS ms (default 100 with --relay; 0: none) the events recorded so far\n"
			       "go to the relay, so live viewers see them within about MS ms.\n"
			       "The session's settings (docs/agent.md; [session] KEY gives defaults):\n");
			setting_options_usage(stdout);
			return 0;
		case ':':
			return cli_opt_error(c, argv);
		default:
			if (c >= O_SET && (size_t)(c - O_SET) < ARRAY_SIZE(vals)) {
				vals[c - O_SET] = optarg;
				break;
			}
			return cli_opt_error(c, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage(optind >= argc ? "missing session name" :
				 "unexpected argument '%s'", argv[argc - 1]);
	const char *name = argv[optind];
	const char *relay = vals[setting_index("relay")];
	const char **live = &vals[setting_index("live-timer")];
	if (snap && mode && strcmp(mode, "overwrite") != 0)
		return cli_usage("--snapshot records in overwrite mode");
	if (snap)
		mode = "overwrite";
	if ((vals[setting_index("relay-session")] || *live) && !relay)
		return cli_usage("--relay-session and --live-timer need --relay");
	if (!mode && relay)
		mode = setting("session", "mode");
	if (relay && (snap || (mode && strcmp(mode, "overwrite") == 0)))
		return cli_usage("--relay streams discard-mode sessions (not snapshots "
				 "nor overwrite mode)");
	if (relay && !*live)
		*live = "100";
	char *dir = NULL;
	if (out) {
		dir = absolute(out);
	} else if (relay) {
		dir = strdup("");	/* only at the relay */
	} else {
		const char *base = setting("session", "output-dir");
		const char *home = getenv("HOME");
		char date[32];
		time_t t = time(NULL);
		strftime(date, sizeof(date), "%Y%m%d-%H%M%S", localtime(&t));
		int r;
		if (base && *base)
			r = asprintf(&dir, "%s/%s-%s", base, name, date);
		else
			r = asprintf(&dir, "%s/trawl-traces/%s-%s", home && *home ? home : "/tmp",
				     name, date);
		if (r < 0)
			dir = NULL;
	}
	if (!dir)
		return cli_err("out of memory");
	char **v = NULL;
	size_t n = 0;
	int r = push_setting("create", &v, &n, "output", dir);
	free(dir);
	if (!r && snap)
		r = push_setting("create", &v, &n, "snapshot", "yes");
	if (!r)
		r = push_settings("create", &v, &n, vals, mode);
	if (!r)
		r = request_args("create", name, v, n);
	free_args(v, n);
	return r;
}

/* ------------------------------------------------------------- enable */

/* Splits a comma list of kernel events into "--kernel=SPEC" requests. */
static int add_kernel_args(const char *cmd, const char *list, char ***v, size_t *n)
{
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return cli_err("out of memory");
	int any = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		size_t l = strlen(t);
		while (l && t[l - 1] == ' ')
			t[--l] = 0;
		if (!*t)
			continue;
		char **nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv) {
			free(copy);
			return cli_err("out of memory");
		}
		*v = nv;
		if (asprintf(&nv[*n], "--kernel=%s", t) < 0) {
			free(copy);
			return cli_err("out of memory");
		}
		(*n)++;
		any = 1;
	}
	free(copy);
	if (!any)
		return cli_usage("-k: no kernel event in '%s'", list);
	return 0;
}

static int push_arg(const char *cmd, char ***v, size_t *n, const char *prefix, const char *val)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return cli_err("out of memory");
	*v = nv;
	if (asprintf(&nv[*n], "%s%s", prefix, val) < 0)
		return cli_err("out of memory");
	(*n)++;
	return 0;
}

static void free_args(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Sends verb NAME then the request arguments v. */
static int request_args(const char *verb, const char *name, char **v, size_t n)
{
	const char **av = calloc(n + 3, sizeof(*av));
	if (!av)
		return cli_err("out of memory");
	av[0] = verb;
	av[1] = name;
	for (size_t i = 0; i < n; i++)
		av[i + 2] = v[i];
	int r = request(verb, (int)n + 2, av);
	free(av);
	return r;
}

int cmd_enable(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "loglevel", required_argument, NULL, 'l' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "filter", required_argument, NULL, 'F' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *ll = NULL;
	char **v = NULL;		/* the request's arguments after NAME */
	size_t n = 0;
	bool kernel = false, kopt = false;
	int c, r;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:k:p:h", opts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case 'l': ll = optarg; break;
		case 'k':
			r = add_kernel_args("enable", optarg, &v, &n);
			kernel = true;
			break;
		case 'F':
			if (!*optarg || strchr(optarg, '\n'))
				r = cli_usage("--filter: '%s' is not a filter expression", optarg);
			else
				r = push_arg("enable", &v, &n, "--filter=", optarg);
			kopt = true;
			break;
		case 'p': {
			char *end;
			long pid = strtol(optarg, &end, 10);
			if (!*optarg || *end || pid < 1 || pid > 0x3fffffff)
				r = cli_usage("--pid: '%s' is not a pid", optarg);
			else
				r = push_arg("enable", &v, &n, "--pid=", optarg);
			kopt = true;
			break;
		}
		case 'h':
			free_args(v, n);
			printf("usage: trawl enable NAME 'PROVIDER:EVENT-GLOB'... [--loglevel LEVEL]\n"
			       "       trawl enable NAME -k EVENTS [--filter EXPR] [--pid PID]...\n"
			       "Enables the matching events of every application in session NAME; with\n"
			       "--loglevel, only events of LEVEL or more severe (emerg, alert, crit, err,\n"
			       "warning, notice, info, debug, or 0..14).\n"
			       "  -k, --kernel EVENTS  kernel tracepoints recorded into DIR/HOST/kernel/\n"
			       "                       (the agent must run as root): a comma list of\n"
			       "                       SYSTEM:EVENT (globs allowed) and the presets of\n"
			       "                       trawl record -k (sched, syscalls, irq, timer, power,\n"
			       "                       ...: trawl record --list-kernel lists them)\n"
			       "      --filter EXPR    ftrace filter applied to every kernel event of the\n"
			       "                       session (one per session)\n"
			       "      --pid PID        kernel events of PID and its threads only\n"
			       "                       (repeatable)\n");
			return 0;
		case ':':
			r = cli_opt_error(c, argv);
			break;
		default:
			r = cli_opt_error(c, argv);
			break;
		}
		if (r) {
			free_args(v, n);
			return r;
		}
	}
	r = 0;
	int npos = argc - optind;
	if (npos < 1)
		r = cli_usage("expected NAME and at least one 'provider:event' glob or -k EVENTS");
	else if (npos < 2 && !kernel)
		r = cli_usage(kopt ? "--filter and --pid apply to kernel events (-k EVENTS)" :
			      "expected NAME and at least one 'provider:event' glob or -k EVENTS");
	else if (kopt && !kernel)
		r = cli_usage("--filter and --pid apply to kernel events (-k EVENTS)");
	else if (ll && npos < 2)
		r = cli_usage("--loglevel applies to user-space events ('provider:event' globs)");
	else if (ll && trawl_agent_loglevel(ll) < 0)
		r = cli_usage("--loglevel: '%s' is not a log level", ll);
	for (int i = 1; !r && i < npos; i++) {
		const char *g = argv[optind + i];
		if (!*g || strchr(g, '@') || g[0] == '-')
			r = cli_usage("bad event glob '%s'", g);
		else if (ll) {
			char lv[16];
			snprintf(lv, sizeof(lv), "@%d", trawl_agent_loglevel(ll));
			char **nv = realloc(v, (n + 1) * sizeof(*v));
			if (!nv || asprintf(&nv[n], "%s%s", g, lv) < 0)
				r = cli_err("out of memory");
			if (nv)
				v = nv;
			if (!r)
				n++;
		} else {
			r = push_arg("enable", &v, &n, "", g);
		}
	}
	if (!r)
		r = request_args("enable", argv[optind], v, n);
	free_args(v, n);
	return r;
}

int cmd_disable(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char **v = NULL;
	size_t n = 0;
	bool all = false, kernel = false;
	int c, r;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ak:h", opts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case 'a': all = true; break;
		case 'k':
			/* -k --all: every kernel rule, the filter and the pids */
			if (strcmp(optarg, "--all") == 0 || strcmp(optarg, "-a") == 0)
				r = push_arg("disable", &v, &n, "", "--kernel-all");
			else
				r = add_kernel_args("disable", optarg, &v, &n);
			kernel = true;
			break;
		case 'h':
			free_args(v, n);
			printf("usage: trawl disable NAME ('PROVIDER:EVENT-GLOB'... | --all)\n"
			       "       trawl disable NAME -k (EVENTS | --all)\n"
			       "Removes enable rules from session NAME (before it starts): user-space\n"
			       "globs (--all: every one), or with -k kernel events as they were enabled\n"
			       "(-k --all: every kernel event, the kernel filter and pids).\n");
			return 0;
		case ':':
			r = cli_opt_error(c, argv);
			break;
		default:
			r = cli_opt_error(c, argv);
			break;
		}
		if (r) {
			free_args(v, n);
			return r;
		}
	}
	int npos = argc - optind;
	r = 0;
	if (npos < 1 || (npos < 2 && !all && !kernel))
		r = cli_usage("expected NAME and a glob (or --all)");
	for (int i = 1; !r && i < npos; i++) {
		if (argv[optind + i][0] == '-')
			r = cli_usage("unrecognized option '%s'", argv[optind + i]);
		else
			r = push_arg("disable", &v, &n, "", argv[optind + i]);
	}
	if (!r && all)
		r = push_arg("disable", &v, &n, "", "--all");
	if (!r)
		r = request_args("disable", argv[optind], v, n);
	free_args(v, n);
	return r;
}

int cmd_add_context(int argc, char **argv)
{
	/* LTTng's -t CTX form is accepted too */
	int j = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("usage: trawl add-context NAME CONTEXT... (vpid, vtid, procname, cgroup)\n"
			       "Adds context fields to every event of session NAME (before it starts).\n");
			return 0;
		}
		if (strcmp(argv[i], "-t") == 0 || strcmp(argv[i], "--type") == 0)
			continue;
		if (argv[i][0] == '-')
			return cli_usage("unrecognized option '%s'", argv[i]);
		argv[j++] = argv[i];
	}
	if (j < 3)
		return cli_usage("expected NAME and at least one context");
	argv[0] = (char *)"add-context";
	return request("add-context", j, (const char *const *)argv);
}

int cmd_start(int argc, char **argv)
{
	return simple(argc, argv, "NAME", 1, 1);
}

int cmd_stop(int argc, char **argv)
{
	return simple(argc, argv, "NAME", 1, 1);
}

int cmd_destroy(int argc, char **argv)
{
	return simple(argc, argv, "NAME", 1, 1);
}

int cmd_list(int argc, char **argv)
{
	return simple(argc, argv, "[NAME]", 0, 1);
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h':
			printf("usage: trawl snapshot record NAME [-o DIR]\n"
			       "Writes the newest events of every buffer of session NAME (snapshot or\n"
			       "overwrite mode), the packet each thread is still filling included, to\n"
			       "DIR/HOST/ust/ (default: the session's output/snapshot-N), and says how\n"
			       "many (what 'trawl info DIR' then reads).\n");
			return 0;
		case ':':
			return cli_opt_error(c, argv);
		default:
			return cli_opt_error(c, argv);
		}
	}
	if (argc - optind != 2 || strcmp(argv[optind], "record") != 0)
		return cli_usage("expected 'record NAME'");
	char *dir = out ? absolute(out) : NULL;
	if (out && !dir)
		return cli_err("out of memory");
	const char *av[3] = { "snapshot", argv[optind + 1], dir };
	int r = request("snapshot", dir ? 3 : 2, av);
	free(dir);
	return r;
}

/* save: the agent describes the session; the file is written here, with
 * the user's rights. */
int cmd_save(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("usage: trawl save NAME FILE\n"
		       "Writes session NAME's description (docs/agent.md) to FILE ('-': stdout).\n");
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage("unrecognized option '%s'", argv[i]);
	if (argc != 3)
		return cli_usage(argc < 3 ? "missing argument (NAME FILE)" :
				 "unexpected argument '%s'", argv[argc - 1]);
	const char *file = argv[2];
	/* a regular FILE replaced once the description is whole (a failure
	 * leaves it as it was), a device or FIFO written in place, a symbolic
	 * link refused (util/outfile.h) */
	struct tr_outfile of;
	char err[512];
	int saved = -1;

	fflush(stdout);
	if (strcmp(file, "-") != 0) {
		if (tr_outfile_open(&of, file, 0, 0666, err, sizeof(err)))
			return cli_err("%s", err);
		saved = dup(1);
		if (saved < 0 || dup2(of.fd, 1) < 0) {
			int e = errno;

			tr_outfile_release(&of);
			if (saved >= 0)
				close(saved);
			return cli_err("%s: %s", file, strerror(e));
		}
	}
	const char *av[2] = { "describe", argv[1] };
	int r = request("save", 2, av);
	if (saved >= 0) {
		if (fflush(stdout) && !r)
			r = cli_err("%s: %s", file, strerror(errno));
		dup2(saved, 1);
		close(saved);
		if (!r && tr_outfile_commit(&of, err, sizeof(err)))
			r = cli_err("%s", err);
		tr_outfile_release(&of);	/* after a failure: the temporary removed */
		if (r == 0)
			printf("session %s saved to %s\n", argv[1], file);
	} else {
		fflush(stdout);
	}
	return r;
}

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *name = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'h':
			printf("usage: trawl load FILE [--name NAME]\n"
			       "Creates the session FILE describes (written by 'trawl save'; format in\n"
			       "docs/agent.md), named NAME if given. It is not started.\n");
			return 0;
		case ':':
			return cli_opt_error(c, argv);
		default:
			return cli_opt_error(c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage("expected one FILE");
	const char *file = argv[optind];
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	if (!f)
		return cli_err("%s: %s", file, strerror(errno));
	char *text = calloc(1, AM_MSG_MAX);
	size_t n = text ? fread(text, 1, AM_MSG_MAX - 1024, f) : 0;
	bool big = text && !feof(f);
	if (f != stdin)
		fclose(f);
	if (!text)
		return cli_err("out of memory");
	if (big || memchr(text, 0, n)) {
		free(text);
		return cli_err("%s: not a session description (too large or binary)", file);
	}
	const char *av[3] = { "load", text, name };
	int r = request("load", name ? 3 : 2, av);
	free(text);
	return r;
}

/* ------------------------------------------------------------- agent */

static void agent_usage(FILE *f)
{
	fputs("usage: trawl agent [--socket PATH | --system] [--foreground] [--pidfile FILE]\n"
	      "                   [--ready-fd N] [--flush-ms MS] [--io-queue MB] [--rt-prio N]\n"
	      "                   [--host NAME] [--relay HOST[:PORT]] [--root DIR] [--quiet]\n"
	      "                   [--metrics [HOST:]PORT [--metrics-token-file FILE]]\n"
	      "       trawl agent --stop [--socket PATH | --system]\n"
	      "       trawl agent --oneshot -o DIR [--enable GLOB[@LEVEL]]... [--loglevel L]\n"
	      "                   [--context CTX]... [--overwrite] [--KEY VALUE]... [--socket PATH] ...\n"
	      "The per-node daemon applications linked with libtrawl register with.\n"
	      "  --socket PATH    listen there (default: [agent] socket, TRAWL_AGENT_SOCKET,\n"
	      "                   else $XDG_RUNTIME_DIR/trawl/agent.sock or /tmp/trawl-UID/agent.sock)\n"
	      "  --system         the system-wide socket, /run/trawl/agent.sock\n"
	      "  -f, --foreground do not detach (logs on stderr); the default detaches once\n"
	      "                   listening, so that the command returning means ready\n"
	      "  -q, --quiet      in the foreground, log only errors and warnings\n"
	      "  --pidfile FILE   write the agent's pid there (default: beside the socket,\n"
	      "                   agent.pid for agent.sock; removed at exit)\n"
	      "  --stop           stop the agent listening on the socket (its sessions are\n"
	      "                   stopped and their traces completed first); waits for it\n"
	      "                   to be gone, at most 30 s\n"
	      "  --ready-fd N     write \"ready\\n\" to file descriptor N once listening\n"
	      "                   (\"ready metrics=ADDR\\n\" with --metrics)\n"
	      "  --metrics [HOST:]PORT  serve GET /metrics for Prometheus there: the agent's\n"
	      "                   sessions and connections (docs/metrics.md); a bare port:\n"
	      "                   on 127.0.0.1; port 0: any free one\n"
	      "  --metrics-token-file FILE  scrapes must carry this bearer token (the file's\n"
	      "                   first line); needed off loopback\n"
	      "  --flush-ms MS    drain the applications' buffers every MS ms (default 2)\n"
	      "  --io-queue MB    finished packets wait for the disk in a queue of MB MiB,\n"
	      "                   written by a thread of their own, so a slow disk does not\n"
	      "                   stall the draining (default 64; 0: write in the drain)\n"
	      "  --rt-prio N      run the drain loop SCHED_FIFO at priority N where allowed,\n"
	      "                   so a busy machine does not delay it (default 1; 0: no)\n"
	      "  --host NAME      the host name of the traces (DIR/NAME/ust/, env hostname;\n"
	      "                   default: this machine's)\n"
	      "  --relay HOST[:PORT]  join that trawl relay (its data port) for cluster\n"
	      "                   control: trawl cluster there runs session commands here;\n"
	      "                   joins again when the relay comes back (default: [agent]\n"
	      "                   relay). With --oneshot: the session streams there\n"
	      "  --root DIR       the trace root: the relay joined may name output paths\n"
	      "                   beneath DIR only (a create's output=, a snapshot's DIR);\n"
	      "                   without it, none (default: [agent] root)\n"
	      "  --secret-file FILE  the credential of the sessions' relays and of the one\n"
	      "                   --relay joins (docs/auth.md; default: TRAWL_SECRET_FILE,\n"
	      "                   else [relay] secret-file)\n"
	      "  --oneshot        create, enable and start one session at once, recording to\n"
	      "                   -o DIR (DIR/HOST/ust/); SIGTERM or SIGINT stops it, flushes\n"
	      "                   everything and exits (implies --foreground)\n"
	      "The one-shot session's settings (docs/agent.md; [session] KEY gives defaults):\n", f);
	setting_options_usage(f);
}

/* The agent of this process, for the signal handlers. */
static struct trawl_agent *volatile the_agent;
static volatile sig_atomic_t early_quit;

static void on_quit_signal(int sig)
{
	struct trawl_agent *a = the_agent;
	(void)sig;
	if (a)
		trawl_agent_stop(a);
	else
		early_quit = 1;
}

/* The agent's log lines, on stderr (in the foreground). */
static void agent_log(void *arg, int level, const char *msg)
{
	(void)arg;
	cli_log(level, msg);
}

/*
 * The private directory `trawl record` made for a oneshot agent's socket
 * (/tmp/trawl-record-XXXXXX): removed when empty, for when record died
 * without doing it (it removes it too; whoever comes second finds nothing).
 */
static void rmdir_record_dir(const char *sock)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(sock, '/');
	size_t n = slash ? (size_t)(slash - sock) : 0;

	if (!n || n >= sizeof(dir))
		return;
	memcpy(dir, sock, n);
	dir[n] = 0;
	const char *base = strrchr(dir, '/');
	if (base && strncmp(base + 1, "trawl-record-", 13) == 0)
		rmdir(dir);
}

/* The agent's default pid file: beside its socket, NAME.pid for NAME.sock
 * (else SOCKET.pid). */
static void default_pidfile(const char *sock, char *buf, size_t len)
{
	size_t n = strlen(sock);
	if (n > 5 && strcmp(sock + n - 5, ".sock") == 0)
		snprintf(buf, len, "%.*s.pid", (int)(n - 5), sock);
	else
		snprintf(buf, len, "%s.pid", sock);
}

/* Removes the pid file if it still names this process. */
static void remove_pid(const char *path)
{
	char line[32] = "";
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	bool ours = fgets(line, sizeof(line), f) && atoi(line) == (int)getpid();
	fclose(f);
	if (ours)
		unlink(path);
}

/* Is pid a process still there (a zombie is gone)? */
static bool alive(pid_t pid)
{
	char p[64], st[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return kill(pid, 0) == 0 || errno == EPERM;
	size_t n = fread(st, 1, sizeof(st) - 1, f);
	fclose(f);
	st[n] = 0;
	const char *rp = strrchr(st, ')');	/* the name may hold anything */
	return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

/* trawl agent --stop: SIGTERM to the process listening on sock (the
 * socket's own credentials say which: no stale pid file can make it
 * signal another process), then waits until it is gone. */
static int stop_agent(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(sock) >= sizeof(sa.sun_path))
		return cli_usage("--socket: a path longer than %zu bytes", sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, sock);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		cli_err("--stop: no agent at %s: %s", sock, strerror(e));
		return CLI_EXIT_FAILURE;
	}
	struct ucred cr = { 0 };
	socklen_t cl = sizeof(cr);
	int r = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl);
	close(fd);
	if (r < 0 || cr.pid <= 0) {
		cli_err("--stop: the agent at %s: its pid is not known: %s", sock,
			r < 0 ? strerror(errno) : "no credentials");
		return CLI_EXIT_FAILURE;
	}
	if (kill(cr.pid, SIGTERM) < 0) {
		cli_err("--stop: the agent at %s (pid %d): %s", sock, (int)cr.pid, strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	/* its sessions are stopped and completed first: bounded */
	int64_t until = tr_mono_ms() + 30000;
	while (alive(cr.pid) && tr_mono_ms() < until) {
		struct timespec ts = { 0, 20 * 1000000 };
		nanosleep(&ts, NULL);
	}
	if (alive(cr.pid)) {
		cli_err("--stop: the agent at %s (pid %d) is still there after 30 s", sock,
			(int)cr.pid);
		return CLI_EXIT_FAILURE;
	}
	cli_info("agent %d at %s stopped", (int)cr.pid, sock);
	return 0;
}

/* Runs the agent in this process until SIGTERM or SIGINT: the exit status. */
static int run_agent(struct trawl_agent_opts *o, bool foreground, const char *pidfile,
		     int ready_fd)
{
	char err[512];
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_quit_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (foreground)
		o->log = agent_log;
	struct trawl_agent *a = trawl_agent_new(o, err, sizeof(err));
	if (!a)
		return cli_err("%s", err);
	the_agent = a;
	if (early_quit)
		trawl_agent_stop(a);
	if (pidfile) {
		/* not through a symbolic link: a root agent's pidfile in a
		 * directory others write (util/outfile.h) */
		char pid[32];
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

		if (tr_outfile_write(pidfile, 0, 0644, pid, (size_t)n, err, sizeof(err))) {
			the_agent = NULL;
			trawl_agent_free(a);
			return cli_err("cannot write the pid: %s", err);
		}
	}
	const char *mat = trawl_agent_metrics_addr(a);
	if (mat)
		cli_ready(&ready_fd, "metrics=%s", mat);
	else
		cli_ready(&ready_fd, NULL);
	if (mat && foreground)
		cli_note("metrics on http://%s/metrics", mat);
	if (!foreground) {
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (nul >= 0) {
			dup2(nul, 2);
			close(nul);
		}
	}
	int r = trawl_agent_run(a);
	the_agent = NULL;
	trawl_agent_free(a);
	if (pidfile)
		remove_pid(pidfile);
	return r < 0 ? 1 : 0;
}

/* The one-shot session's rules and contexts as settings: "event=GLOB
 * [loglevel L]" (every event when there is no --enable), "context=CTX". */
static int push_rules(char ***v, size_t *n, const char *const *globs, size_t nglobs,
		      const char *ll, const char *const *ctx, size_t nctx)
{
	int r = 0;
	for (size_t i = 0; !r && i < nglobs; i++) {
		char *g = strdup(globs[i]);
		char *at = g ? strrchr(g, '@') : NULL;
		const char *lvl = at ? at + 1 : ll;
		if (at)
			*at = 0;
		char *val = NULL;
		if (!g)
			r = cli_err("out of memory");
		else if (!*g || (lvl && trawl_agent_loglevel(lvl) < 0))
			r = cli_usage("bad event rule '%s'", globs[i]);
		else if (asprintf(&val, lvl ? "%s loglevel %s" : "%s", g, lvl) < 0)
			r = cli_err("out of memory");
		else
			r = push_setting("agent", v, n, "event", val);
		free(val);
		free(g);
	}
	if (!r && !nglobs)
		r = push_setting("agent", v, n, "event", "*");
	for (size_t i = 0; !r && i < nctx; i++)
		r = push_setting("agent", v, n, "context", ctx[i]);
	return r;
}

int cmd_agent(int argc, char **argv)
{
	enum { O_SYSTEM = 256, O_PID, O_READY, O_ONESHOT, O_ENABLE, O_CTX, O_OVER,
	       O_FLUSH, O_SOCK, O_LL, O_HOST, O_IOQ, O_RT, O_SECRET, O_ROOT, O_STOP,
	       O_METRICS, O_MTOKEN, O_SET = 512 };
	struct option opts[64] = {
		{ "socket", required_argument, NULL, O_SOCK },
		{ "host", required_argument, NULL, O_HOST },
		{ "system", no_argument, NULL, O_SYSTEM },
		{ "foreground", no_argument, NULL, 'f' },
		{ "pidfile", required_argument, NULL, O_PID },
		{ "ready-fd", required_argument, NULL, O_READY },
		{ "oneshot", no_argument, NULL, O_ONESHOT },
		{ "output", required_argument, NULL, 'o' },
		{ "enable", required_argument, NULL, O_ENABLE },
		{ "loglevel", required_argument, NULL, O_LL },
		{ "context", required_argument, NULL, O_CTX },
		{ "overwrite", no_argument, NULL, O_OVER },
		{ "flush-ms", required_argument, NULL, O_FLUSH },
		{ "io-queue", required_argument, NULL, O_IOQ },
		{ "rt-prio", required_argument, NULL, O_RT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "secret-file", required_argument, NULL, O_SECRET },
		{ "root", required_argument, NULL, O_ROOT },
		{ "stop", no_argument, NULL, O_STOP },
		{ "metrics", required_argument, NULL, O_METRICS },
		{ "metrics-token-file", required_argument, NULL, O_MTOKEN },
	};
	setting_options(opts, 22, ARRAY_SIZE(opts), O_SET);
	const char *token_file = NULL;
	char token[256] = "";
	const char *secret = NULL;
	struct trawl_agent_opts o = { .sz = sizeof(o), .kernel = &trawl_kern_agent_ops };
	const char *cli_num[4] = { NULL };	/* nums[] below, from the command line */
	const char *globs[256], *ctx[16];
	const char *vals[MAX_SETTINGS] = { NULL };	/* per setting: --KEY's value */
	size_t nglobs = 0, nctx = 0, nset = 0;
	const char *sock = NULL, *out = NULL, *ll = NULL, *pidfile = NULL, *mode = NULL;
	bool system = false, oneshot = false, foreground = false, stop = false;
	int ready_fd = -1;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fo:qh", opts, NULL)) != -1) {
		switch (c) {
		case O_SOCK: sock = optarg; break;
		case O_HOST: o.host = optarg; break;
		case O_SYSTEM: system = true; break;
		case 'f': foreground = true; break;
		case O_PID: pidfile = optarg; break;
		case O_READY:
			if ((ready_fd = cli_ready_fd_arg(optarg)) < 0)
				return cli_usage("--ready-fd: '%s' is not an open descriptor", optarg);
			break;
		case O_ONESHOT: oneshot = true; break;
		case 'o': out = optarg; break;
		case O_ENABLE:
			if (nglobs == ARRAY_SIZE(globs))
				return cli_usage("too many --enable");
			globs[nglobs++] = optarg;
			break;
		case O_LL:
			ll = optarg;
			if (trawl_agent_loglevel(ll) < 0)
				return cli_usage("--loglevel: '%s' is not a log level", ll);
			break;
		case O_CTX:
			if (nctx == ARRAY_SIZE(ctx))
				return cli_usage("too many --context");
			ctx[nctx++] = optarg;
			break;
		case O_OVER: mode = "overwrite"; nset++; break;
		case O_FLUSH: cli_num[0] = optarg; break;
		case O_IOQ: cli_num[1] = optarg; break;
		case O_RT: cli_num[2] = optarg; break;
		case O_SECRET: secret = optarg; break;
		case O_ROOT: o.root = optarg; break;
		case O_STOP: stop = true; break;
		case O_METRICS: o.metrics_addr = optarg; break;
		case O_MTOKEN: token_file = optarg; break;
		case 'q': cli_verbosity = -1; break;
		case 'h':
			agent_usage(stdout);
			return 0;
		case ':':
			return cli_opt_error(c, argv);
		default:
			if (c >= O_SET && (size_t)(c - O_SET) < ARRAY_SIZE(vals)) {
				vals[c - O_SET] = optarg;
				nset++;
				break;
			}
			return cli_opt_error(c, argv);
		}
	}
	if (optind != argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (token_file) {
		FILE *tf = fopen(token_file, "re");
		size_t tn = 0;
		if (tf && fgets(token, sizeof(token), tf))
			tn = strcspn(token, "\r\n");
		if (tf)
			fclose(tf);
		token[tn] = 0;
		bool tok_ok = tn >= 16 && tn < sizeof(token) - 1;
		for (size_t i = 0; tok_ok && i < tn; i++)
			tok_ok = token[i] > ' ' && token[i] < 0x7f;
		if (!tok_ok)
			return cli_err("--metrics-token-file %s: its first line must be a token of 16 "
				       "to 254 printable characters without blanks", token_file);
		o.metrics_token = token;
	}
	if (oneshot && !out && !vals[setting_index("relay")])
		return cli_usage("--oneshot needs -o DIR (or --relay)");
	/* without --oneshot, --relay joins a relay for cluster control
	 * (docs/cluster.md); else [agent] relay does */
	if (!oneshot && vals[setting_index("relay")]) {
		o.relay = vals[setting_index("relay")];
		vals[setting_index("relay")] = NULL;
		nset--;
	}
	if (!oneshot && (out || nglobs || nctx || nset))
		return cli_usage("-o, --enable, --context and session settings need --oneshot");
	if (sock && system)
		return cli_usage("--socket and --system exclude each other");
	if (stop && (oneshot || o.relay || o.host || o.root || pidfile || ready_fd >= 0 ||
		     foreground || secret || cli_num[0] || cli_num[1] || cli_num[2]))
		return cli_usage("--stop takes --socket PATH or --system only");
	if (stop) {
		char sp[108];
		if (system)
			tr_ust_agent_path(sp, sizeof(sp), true);
		else if (sock)
			snprintf(sp, sizeof(sp), "%s", sock);
		else
			agent_socket(sp, sizeof(sp));
		return stop_agent(sp);
	}
	/* the credential its sessions' relays ask for (docs/auth.md) */
	cli_secret_env(secret);
	/* the numbers: the command line's, else [agent] settings (the
	 * session's come from [session]), else the defaults */
	static const struct { const char *key, *opt; long lo, hi; } nums[] = {
		{ "flush-ms", "--flush-ms", 1, 10000 },
		{ "io-queue-mb", "--io-queue", 0, 65536 },
		{ "rt-prio", "--rt-prio", 0, 99 },
		{ "start-timeout-ms", NULL, 1, 600000 },
	};
	long val[4] = { 2, AGENT_IO_QUEUE_MB, AGENT_RT_PRIO, 3000 };
	for (size_t i = 0; i < ARRAY_SIZE(nums); i++) {
		const char *v = cli_num[i] ? cli_num[i] : setting("agent", nums[i].key);
		if (!v || num_in(v, nums[i].lo, nums[i].hi, &val[i]))
			continue;
		if (cli_num[i])
			return cli_usage("%s: '%s' is not %ld..%ld", nums[i].opt, v,
					 nums[i].lo, nums[i].hi);
		return cli_err("[agent] %s: '%s' is not %ld..%ld", nums[i].key, v, nums[i].lo,
			       nums[i].hi);
	}
	if (!oneshot && !o.relay)
		o.relay = setting("agent", "relay");
	if (!o.root)
		o.root = setting("agent", "root");
	o.flush_ms = (unsigned)val[0];
	o.io_queue = (size_t)val[1] << 20;
	o.rt_prio = (int)val[2];
	o.start_timeout_ms = (unsigned)val[3];
	char path[108];
	if (system)
		tr_ust_agent_path(path, sizeof(path), true);
	else if (sock)
		snprintf(path, sizeof(path), "%s", sock);
	else
		agent_socket(path, sizeof(path));
	o.socket = path;
	/* a pid file beside the socket by default (not for a one-shot's
	 * private agent) */
	char defpid[120];
	if (!pidfile && !oneshot) {
		default_pidfile(path, defpid, sizeof(defpid));
		pidfile = defpid;
	}
	char sys[108];
	tr_ust_agent_path(sys, sizeof(sys), true);
	o.world = strcmp(path, sys) == 0;
	char **set = NULL;
	size_t n = 0;
	int r = 0;
	if (oneshot) {
		/* the session's settings: [session], then the command line;
		 * its output, its rules */
		char *dir = out ? absolute(out) : NULL;
		if (out && !dir)
			return cli_err("out of memory");
		r = push_settings("agent", &set, &n, vals, mode);
		if (!r && dir)
			r = push_setting("agent", &set, &n, "output", dir);
		free(dir);
		if (!r)
			r = push_rules(&set, &n, globs, nglobs, ll, ctx, nctx);
		o.oneshot = (const char *const *)set;
		o.noneshot = n;
		foreground = true;
	}
	if (!r && !foreground) {
		/* detach once listening: the parent returns when the agent is ready */
		char line[400];
		int d = cli_detach(&ready_fd, line, sizeof(line));
		const char *mw = d > 0 ? strstr(line, "metrics=") : NULL;
		if (mw)
			printf("trawl agent: metrics on http://%.*s/metrics\n",
			       (int)strcspn(mw + 8, " \n"), mw + 8);
		if (d != 0)
			r = d > 0 ? 0 : 1;
		else
			r = run_agent(&o, foreground, pidfile, ready_fd);
	} else if (!r) {
		r = run_agent(&o, foreground, pidfile, ready_fd);
	}
	if (oneshot)
		rmdir_record_dir(path);
	free_args(set, n);
	tr_conf_free(conf);
	return r;
}
