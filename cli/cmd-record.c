/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-record.c - `trawl record`: records kernel events (a private
 * tracefs instance, see lib/kern/krec.h and docs/kernel.md) into
 * DIR/HOST/kernel/, while a command runs (its exit status becomes ours),
 * for a duration, or until SIGINT/SIGTERM. With a COMMAND, its trawl
 * tracepoints (and its children's) are recorded too, into DIR/HOST/ust/, by
 * a private agent (`trawl agent --oneshot` on a socket of its own, passed
 * to the command as TRAWL_AGENT_SOCKET), stopped once the command exits.
 */
#include <poll.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kern/family.h"
#include "kern/krec.h"
#include "kern/pathnames.h"
#include "util/clock.h"
#include "util/escape.h"

/* The private agent of a recording (user space). */
struct ust_agent {
	pid_t pid;
	char dir[64];		/* mkdtemp'd, holds the socket */
	char sock[96];
};

#define MAX_PIDS 4096

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void usage(FILE *f)
{
	fputs("usage: trawl record -o DIR | --relay HOST[:PORT] [--session NAME] [--live-timer MS]\n"
	      "                    [-k EVENTS]... [-u GLOB]... [--host NAME]\n"
	      "                    [--buffer-size KB] [--filter EXPR] [--pid PID]...\n"
	      "                    [--cgroup PATH] [--duration S] [--only-command]\n"
	      "                    [--no-kernel | --no-ust] [-- COMMAND ARGS...]\n"
	      "\n"
	      "Records kernel events into DIR/HOST/kernel/ (a CTF 1.8 trace with LTTng's\n"
	      "event and field names), through a private tracefs instance. With COMMAND:\n"
	      "until it exits, and its exit status is trawl's; the trawl tracepoints of\n"
	      "the command and its children go to DIR/HOST/ust/ (a private agent records\n"
	      "them). Without COMMAND: until --duration has passed, or SIGINT/SIGTERM.\n"
	      "\n"
	      "  -o, --output DIR       the session directory\n"
	      "      --relay HOST[:PORT] also (without -o: only) stream to a trawl relay, into\n"
	      "                         RELAY-OUTPUT/SESSION/HOST/{kernel,ust}/ (clock mono)\n"
	      "      --session NAME     the session's name at the relay: give every node the\n"
	      "                         same (default: DIR's base name, else record-DATE)\n"
	      "      --live-timer MS    every MS ms (default 100; 0: none) the events so far go\n"
	      "                         to the relay: live viewers see them within about MS ms\n"
	      "                         (within a few ms while a viewer waits)\n"
	      "      --secret-file FILE the relay's credential (docs/auth.md; default:\n"
	      "                         TRAWL_SECRET_FILE, else [relay] secret-file)\n"
	      "  -k, --kernel EVENTS    comma list of tracepoints (sched:sched_switch,\n"
	      "                         sched:*, any of tracefs events/*/format) and presets:\n", f);
	char presets[1024];
	tr_krec_presets(presets, sizeof(presets));	/* the family table's */
	/* wrapped at 79 columns under the option's text */
	int col = fprintf(f, "                        ");
	for (char *save = NULL, *t = strtok_r(presets, " ", &save); t;
	     t = strtok_r(NULL, " ", &save)) {
		if (col + 1 + (int)strlen(t) > 79)
			col = fprintf(f, "\n                        ");
		col += fprintf(f, " %s", t);
	}
	fputs(" (default: sched;\n"
	      "                         --list-kernel shows their tracepoints)\n", f);
	fputs(
	      "      --list-kernel      list the presets and the tracepoints of this kernel\n"
	      "                         each records, then exit\n"
	      "      --host NAME        host directory and env hostname (default: hostname)\n"
	      "  -u, --ust GLOB         user-space events of COMMAND to record, as\n"
	      "                         provider:event globs (repeatable; default: all)\n"
	      "      --no-ust           no user-space recording\n"
	      "      --no-kernel        no kernel recording (user space only; no root needed)\n"
	      "  -b, --buffer-size KB   ring buffer per CPU, KiB (default 4096)\n"
	      "      --filter EXPR      ftrace filter applied to every event, e.g.\n"
	      "                         'common_pid == 42' or 'prev_pid != 0'\n"
	      "  -p, --pid PID          only events of PID and its threads (repeatable)\n"
	      "      --cgroup PATH      only events of the tasks in cgroup PATH (under\n"
	      "                         /sys/fs/cgroup) and their children\n"
	      "      --only-command     only events of COMMAND and its descendants\n"
	      "  -d, --duration S       stop after S seconds (decimals allowed)\n"
	      "      --clock CLOCK      auto (x86-tsc if the clocksource is the TSC, as\n"
	      "                         user space does; else mono), tsc or mono\n"
	      "      --no-statedump     no state dump of processes and files at start\n"
	      "      --no-tid           no { tid } context on every event\n"
	      "      --no-file-names    syscall entries keep the pointers of their paths\n"
	      "                         (openat's filename ...): no eBPF program copies them\n"
	      "      --rt-prio N        run the reader thread SCHED_FIFO at priority N\n"
	      "      --period MS        reader sleep when the buffers are idle (default 50)\n"
	      "      --exclude-self     do not record trawl's own threads (their reads of the\n"
	      "                         buffers), nor the node's trawl relay and live viewers\n"
	      "                         (costs a pid check at every context switch)\n"
	      "      --io-queue MB      packets wait for the disk in a queue of MB MiB written\n"
	      "                         by a thread of their own, at normal priority (default\n"
	      "                         0: the reader writes them, at its own priority)\n"
	      "  -f, --force            write into an existing DIR/HOST/kernel\n"
	      "  -q, --quiet            only errors and warnings on stderr (no summary)\n"
	      "  -v, --verbose          also the internals (the agent's log, per-CPU figures)\n"
	      "      --progress         show the time recorded (of --duration) and the kernel\n"
	      "                         events so far on stderr, even when it is not a terminal\n"
	      "      --no-progress      never (default: on a terminal, without COMMAND or -q)\n"
	      "  -h, --help             this help\n", f);
}


/* --list-kernel: each preset and the tracepoints of this kernel it records. */
static int list_kernel(void)
{
	for (size_t i = 0; i < tr_nkfamilies; i++) {
		const char *p = tr_kfamilies[i].preset;
		char **evs;
		size_t n;
		if (!p)
			continue;
		int r = tr_krec_preset_events(p, &evs, &n);
		if (r < 0)
			return cli_err("--list-kernel: %s", strerror(-r));
		printf("%-12s", p);
		for (size_t j = 0; j < n; j++) {
			printf(" %s", evs[j]);
			free(evs[j]);
		}
		printf("%s\n", n ? "" : " (none in this kernel)");
		free(evs);
	}
	return fflush(stdout) ? 1 : 0;
}

static int parse_ulong(const char *s, unsigned long *v)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* The tasks of cgroup PATH (relative to /sys/fs/cgroup, or absolute). */
static int cgroup_pids(const char *path, pid_t *pids, size_t *n, size_t cap)
{
	char fn[4200];
	if (!strncmp(path, "/sys/fs/cgroup", 14))
		snprintf(fn, sizeof(fn), "%s/cgroup.procs", path);
	else
		snprintf(fn, sizeof(fn), "/sys/fs/cgroup/%s/cgroup.procs",
			 path[0] == '/' ? path + 1 : path);
	FILE *f = fopen(fn, "re");
	if (!f)
		return cli_err("--cgroup %s: %s: %s", path, fn, strerror(errno));
	long p;
	size_t before = *n;
	while (fscanf(f, "%ld", &p) == 1)
		if (*n < cap)
			pids[(*n)++] = (pid_t)p;
	fclose(f);
	if (*n == before)
		return cli_err("--cgroup %s: no task in that cgroup", path);
	return 0;
}

/* Splits a comma list into v (strdup'd pieces). */
static int split_events(const char *s, char ***v, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!*t)
			continue;
		char **nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv || !(nv[*n] = strdup(t))) {
			free(copy);
			if (nv)
				*v = nv;
			return -ENOMEM;
		}
		*v = nv;
		(*n)++;
	}
	free(copy);
	return 0;
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* Stops the private agent (SIGTERM: it writes everything and exits 0)
 * and removes its socket directory. 0, or -1 after printing why. */
static int ust_stop(struct ust_agent *ua)
{
	int st = 0, rc = 0;
	if (ua->pid > 0) {
		kill(ua->pid, SIGTERM);
		while (waitpid(ua->pid, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 1) {
			/* it said why (a relay that refused, a disk full) */
			cli_err("the user-space trace is incomplete (the agent's reason is above)");
			rc = -1;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			cli_err("the user-space agent failed (%s %d)",
				WIFEXITED(st) ? "exit" : "signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			rc = -1;
		}
		ua->pid = -1;
	}
	if (ua->dir[0]) {
		unlink(ua->sock);
		rmdir(ua->dir);
		ua->dir[0] = 0;
	}
	return rc;
}

static void rm_tree(const char *dir)
{
	pid_t p = fork();
	if (p == 0) {
		execlp("rm", "rm", "-rf", "--", dir, (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

/*
 * What this run created: removed again when it fails before anything
 * worth keeping was recorded, so that the same command can be retried
 * (a directory that existed before is never removed).
 */
struct made {
	bool out, host, kernel, ust;
};

static void unmake(const struct made *m, const char *out, const char *hostdir, const char *kdir,
		   const char *udir)
{
	if (m->kernel && kdir)
		rm_tree(kdir);
	if (m->ust && udir)
		rm_tree(udir);
	if (m->host && hostdir)
		rmdir(hostdir);		/* only if empty */
	if (m->out && out)
		rmdir(out);
}

/*
 * Starts `trawl agent --oneshot` on a private socket, recording to
 * out/host/ust/ (the globs, or every event), and waits until it listens.
 * 0, or -1 after printing why.
 */
static int ust_start(struct ust_agent *ua, const char *out, const char *host,
		     const char *const *globs, size_t nglobs, const char *relay,
		     const char *rsession, const char *live, const char *clock)
{
	snprintf(ua->dir, sizeof(ua->dir), "/tmp/trawl-record-XXXXXX");
	if (!mkdtemp(ua->dir))
		return cli_err("cannot create a directory for the agent's socket: %s",
			       strerror(errno)), -1;
	snprintf(ua->sock, sizeof(ua->sock), "%s/agent.sock", ua->dir);
	int rd[2];
	if (pipe2(rd, O_CLOEXEC) < 0) {
		rmdir(ua->dir);
		return cli_err("pipe: %s", strerror(errno)), -1;
	}
	char fdnum[16];
	snprintf(fdnum, sizeof(fdnum), "%d", rd[1]);
	const char *av[24 + 2 * 64];
	size_t n = 0;
	av[n++] = "trawl";
	av[n++] = "agent";
	av[n++] = "--oneshot";
	av[n++] = "--socket";
	av[n++] = ua->sock;
	if (out) {
		av[n++] = "-o";
		av[n++] = out;
	}
	if (relay) {
		av[n++] = "--relay";
		av[n++] = relay;
		av[n++] = "--relay-session";
		av[n++] = rsession;
		av[n++] = "--live-timer";
		av[n++] = live;
	}
	av[n++] = "--host";
	av[n++] = host;
	if (clock) {
		av[n++] = "--clock";
		av[n++] = clock;
	}
	av[n++] = "--ready-fd";
	av[n++] = fdnum;
	/* its log (listening on, the drain loop, the session stopped): -v's */
	if (cli_verbosity < 1)
		av[n++] = "--quiet";
	for (size_t i = 0; i < nglobs && i < 64; i++) {
		av[n++] = "--enable";
		av[n++] = globs[i];
	}
	av[n] = NULL;
	fflush(NULL);
	pid_t self = getpid();
	pid_t p = fork();
	if (p < 0) {
		close(rd[0]);
		close(rd[1]);
		rmdir(ua->dir);
		return cli_err("fork: %s", strerror(errno)), -1;
	}
	if (p == 0) {
		/* if record dies without stopping it (a crash, SIGKILL), the
		 * agent gets SIGTERM: it ends the traces and exits, instead of
		 * waiting for an end that never comes */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != self)
			_exit(127);
		close(rd[0]);
		fcntl(rd[1], F_SETFD, 0);	/* the agent's --ready-fd */
		/* a session of its own: no terminal signals meant for the
		 * command, and its own autogroup, so a busy command does not
		 * starve the consumer of CPU (docs/ust.md) */
		setsid();
		execv("/proc/self/exe", (char *const *)av);
		cli_err("cannot start the agent: /proc/self/exe: %s", strerror(errno));
		_exit(127);
	}
	close(rd[1]);
	ua->pid = p;
	char buf[8] = "";
	struct pollfd pf = { .fd = rd[0], .events = POLLIN };
	ssize_t got = -1;
	if (poll(&pf, 1, 10000) == 1)
		got = read(rd[0], buf, sizeof(buf) - 1);
	close(rd[0]);
	if (got < 6 || strncmp(buf, "ready\n", 6) != 0) {
		ust_stop(ua);
		return cli_err("the user-space agent did not start (see above)"), -1;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "host", required_argument, NULL, 'H' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "filter", required_argument, NULL, 'F' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'C' },
		{ "only-command", no_argument, NULL, 'O' },
		{ "duration", required_argument, NULL, 'd' },
		{ "clock", required_argument, NULL, 'c' },
		{ "no-statedump", no_argument, NULL, 'S' },
		{ "no-tid", no_argument, NULL, 'T' },
		{ "rt-prio", required_argument, NULL, 'r' },
		{ "period", required_argument, NULL, 'P' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "ust", required_argument, NULL, 'u' },
		{ "no-ust", no_argument, NULL, 'U' },
		{ "no-kernel", no_argument, NULL, 'K' },
		{ "io-queue", required_argument, NULL, 'Q' },
		{ "exclude-self", no_argument, NULL, 'X' },
		{ "no-file-names", no_argument, NULL, 1001 },
		{ "relay", required_argument, NULL, 'R' },
		{ "session", required_argument, NULL, 'N' },
		{ "live-timer", required_argument, NULL, 'L' },
		{ "secret-file", required_argument, NULL, 1000 },
		CLI_PROGRESS_OPTIONS,
		{ "list-kernel", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *ust_globs[64];
	size_t nust = 0;
	bool no_ust = false, no_kernel = false;
	struct ust_agent ua = { .pid = -1 };
	const char *out = NULL, *host = NULL, *filter = NULL, *cgroup = NULL;
	char **events = NULL;
	size_t nevents = 0, npids = 0;
	static pid_t pids[MAX_PIDS];
	unsigned long buffer_kb = 0, rt = 0, period = 0, ioq = 0, v;
	double duration = 0;
	bool only_cmd = false, statedump = true, tid = true, force = false;
	bool exclude_self = false, no_paths = false;
	const char *relay = NULL, *rsession = NULL, *secret = NULL;
	unsigned long live_ms = 100;
	int clock = KREC_CLOCK_AUTO, c, status = 1, progress = 0;
	struct cli_progress pg;
	struct made made = { 0 };
	bool undo = false;	/* failed before recording anything: unmake() */

	optind = 0;
	opterr = 0;
	/* '+': options end at the first non-option (the command) */
	while ((c = getopt_long(argc, argv, "+:o:k:b:p:d:u:fqvh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage("empty output directory");
			out = optarg;
			break;
		case 'k':
			if (split_events(optarg, &events, &nevents) < 0)
				return cli_err("out of memory");
			break;
		case 'H':
			if (!*optarg || strchr(optarg, '/'))
				return cli_usage("--host: '%s' is not a host name", optarg);
			host = optarg;
			break;
		case 'b':
			if (parse_ulong(optarg, &buffer_kb) || buffer_kb < 4 || buffer_kb > (1ul << 24))
				return cli_usage("--buffer-size: '%s' is not a size in KiB (4..16777216)",
						 optarg);
			break;
		case 'F':
			filter = optarg;
			break;
		case 'p':
			if (parse_ulong(optarg, &v) || v < 1 || v > 0x7fffffff)
				return cli_usage("--pid: '%s' is not a pid", optarg);
			if (npids < MAX_PIDS)
				pids[npids++] = (pid_t)v;
			break;
		case 'C':
			cgroup = optarg;
			break;
		case 'O':
			only_cmd = true;
			break;
		case 'd': {
			char *end;
			errno = 0;
			duration = strtod(optarg, &end);
			if (errno || *end || !(duration > 0) || duration > 1e9)
				return cli_usage("--duration: '%s' is not a positive number of seconds",
						 optarg);
			break;
		}
		case 'c':
			if (!strcmp(optarg, "auto"))
				clock = KREC_CLOCK_AUTO;
			else if (!strcmp(optarg, "tsc") || !strcmp(optarg, "x86-tsc"))
				clock = KREC_CLOCK_TSC;
			else if (!strcmp(optarg, "mono"))
				clock = KREC_CLOCK_MONO;
			else
				return cli_usage("--clock: '%s' is not auto, tsc or mono", optarg);
			break;
		case 'S':
			statedump = false;
			break;
		case 'T':
			tid = false;
			break;
		case 'r':
			if (parse_ulong(optarg, &rt) || rt < 1 || rt > 99)
				return cli_usage("--rt-prio: '%s' is not a priority in 1..99", optarg);
			break;
		case 'X':
			exclude_self = true;
			break;
		case 1001:
			no_paths = true;
			break;
		case 'R':
			relay = optarg;
			break;
		case 'N':
			rsession = optarg;
			break;
		case 'L':
			if (parse_ulong(optarg, &live_ms) || live_ms > 60000)
				return cli_usage("--live-timer: '%s' is not a number of ms in 0..60000",
						 optarg);
			break;
		case 'Q':
			if (parse_ulong(optarg, &ioq) || ioq > 65536)
				return cli_usage("--io-queue: '%s' is not 0..65536 (MiB)", optarg);
			break;
		case 'P':
			if (parse_ulong(optarg, &period) || period < 1 || period > 10000)
				return cli_usage("--period: '%s' is not a number of ms in 1..10000",
						 optarg);
			break;
		case 'u':
			if (!*optarg)
				return cli_usage("--ust: empty glob");
			if (nust == sizeof(ust_globs) / sizeof(ust_globs[0]))
				return cli_usage("--ust: at most %zu globs", nust);
			ust_globs[nust++] = optarg;
			break;
		case 'U':
			no_ust = true;
			break;
		case 'K':
			no_kernel = true;
			break;
		case 'f':
			force = true;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'v':
			cli_verbosity = 1;
			break;
		case CLI_OPT_PROGRESS:
		case CLI_OPT_NO_PROGRESS:
			progress = c;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'l':
			return list_kernel();
		case 1000:
			secret = optarg;
			break;
		case ':':
			return cli_opt_error(c, argv);
		default:
			return cli_opt_error(c, argv);
		}
	}
	char **cmd = optind < argc ? &argv[optind] : NULL;
	if (!out && !relay)
		return cli_usage("no output directory (-o DIR) nor relay (--relay)");
	if (!relay && rsession)
		return cli_usage("--session names the session at a relay: it needs --relay");
	if (!relay && secret)
		return cli_usage("--secret-file is the relay's credential: it needs --relay");
	if (relay)
		cli_secret_env(secret);	/* the writers' and the agent's (exported) */
	if (relay && clock == KREC_CLOCK_TSC)
		return cli_usage("--relay records with the mono clock (not tsc)");
	char rsbuf[256];
	if (relay && !rsession) {
		/* DIR's last component, as the directory is named ("x/", ".") */
		char *real = out ? realpath(out, NULL) : NULL;
		const char *b = real ? strrchr(real, '/') : NULL;
		if (out && b && b[1]) {
			snprintf(rsbuf, sizeof(rsbuf), "%s", b + 1);
		} else if (out) {
			char tmp[256];
			snprintf(tmp, sizeof(tmp), "%s", out);
			for (size_t l = strlen(tmp); l > 1 && tmp[l - 1] == '/'; l--)
				tmp[l - 1] = 0;
			const char *t = strrchr(tmp, '/');
			snprintf(rsbuf, sizeof(rsbuf), "%s", t && t[1] ? t + 1 : tmp);
		}
		free(real);
		if (!out) {
			time_t t = time(NULL);
			strftime(rsbuf, sizeof(rsbuf), "record-%Y%m%d-%H%M%S", localtime(&t));
		}
		rsession = rsbuf;
	}
	if (relay)
		clock = KREC_CLOCK_MONO;
	if (only_cmd && !cmd)
		return cli_usage("--only-command needs a COMMAND (after --)");
	if (no_kernel && no_ust)
		return cli_usage("--no-kernel and --no-ust leave nothing to record");
	if (no_kernel && !cmd)
		return cli_usage("--no-kernel needs a COMMAND (after --): user space is the command's");
	if (nust && (no_ust || !cmd))
		return cli_usage("--ust needs a COMMAND (after --) and excludes --no-ust");
	const bool want_ust = cmd && !no_ust;
	if (only_cmd && (npids || cgroup))
		return cli_usage("--only-command excludes --pid and --cgroup");
	if (!nevents && split_events("sched", &events, &nevents) < 0)
		return cli_err("out of memory");
	if (cgroup && cgroup_pids(cgroup, pids, &npids, MAX_PIDS))
		goto out_events;

	char hostname[256];
	if (!host) {
		if (gethostname(hostname, sizeof(hostname)) < 0 || !*hostname)
			snprintf(hostname, sizeof(hostname), "localhost");
		hostname[sizeof(hostname) - 1] = 0;
		host = hostname;
	}
	char *hostdir = NULL, *kdir = NULL, *udir = NULL;
	/* where the summary says the traces are */
	char *kwhere = NULL, *uwhere = NULL;
	if (out && (asprintf(&hostdir, "%s/%s", out, host) < 0 ||
		    asprintf(&kdir, "%s/kernel", hostdir) < 0 ||
		    asprintf(&udir, "%s/ust", hostdir) < 0)) {
		status = cli_err("out of memory");
		goto out_events;
	}
	if (relay && (asprintf(&kwhere, "%s%srelay %s as %s/%s/kernel", kdir ? kdir : "",
			       kdir ? " and " : "", relay, rsession, host) < 0 ||
		      asprintf(&uwhere, "%s%srelay %s as %s/%s/ust", udir ? udir : "",
			       udir ? " and " : "", relay, rsession, host) < 0)) {
		status = cli_err("out of memory");
		goto out_dirs;
	}
	if (out && !force && !no_kernel && exists(kdir)) {
		status = cli_err("%s: exists", kdir);
		cli_hint("add --force to replace its files, or give another -o DIR");
		goto out_dirs;
	}
	if (out && !force && want_ust && exists(udir)) {
		status = cli_err("%s: exists", udir);
		cli_hint("add --force to replace its files, or give another -o DIR");
		goto out_dirs;
	}
	undo = true;
	if (out) {
		made.kernel = !no_kernel && !exists(kdir);
		made.ust = want_ust && !exists(udir);
	}
	if (out && (!(made.out = mkdir(out, 0777) == 0) && errno != EEXIST)) {
		status = cli_err("%s: %s", out, strerror(errno));
		goto out_dirs;
	}
	if (out && (!(made.host = mkdir(hostdir, 0777) == 0) && errno != EEXIST)) {
		status = cli_err("%s: %s", hostdir, strerror(errno));
		goto out_dirs;
	}

	/*
	 * The kernel trace first: streamed, its connection (and its streams)
	 * reach the relay before the user-space trace's, so that a live
	 * viewer attached meanwhile waits for them. The command's pid is
	 * added to the filter once it exists.
	 */
	int go[2] = { -1, -1 }, ex[2] = { -1, -1 };	/* ex: the child's exec error */
	pid_t child = -1;
	bool exec_failed = false;
	struct krec_opts ko = {
		.dir = kdir, .hostname = host,
		.events = (const char *const *)events, .nevents = nevents,
		.buffer_kb = buffer_kb, .filter = filter,
		.pids = npids ? pids : NULL, .npids = npids,
		.follow_fork = only_cmd || cgroup,
		.statedump = statedump, .tid_context = tid, .clock = clock,
		.rt_prio = (int)rt, .period_ms = (unsigned)period,
		.io_queue = (size_t)ioq << 20, .exclude_self = exclude_self,
		.relay = relay, .relay_session = rsession, .live_ms = (unsigned)live_ms,
		.no_paths = no_paths, .root = out,
	};
	char err[512] = "";
	struct krec *k = NULL;
	if (!no_kernel && !(k = tr_krec_new(&ko, err, sizeof(err)))) {
		if (relay)	/* the relay's refusal among it: escaped here */
			tr_escape_ctl(err, sizeof(err));
		status = cli_err("%s", err);
		goto out_dirs;
	}
	/* once, and not for the option that asked for it */
	if (k && tr_krec_paths_why(k) && !no_paths)
		cli_warn("file names of openat & co.: written as pointers: %s", tr_krec_paths_why(k));

	/* User space: the private agent listens before the command exists, so
	 * the command (which inherits TRAWL_AGENT_SOCKET) registers at once. */
	if (want_ust) {
		if (out && force && exists(udir))
			rm_tree(udir);
		char lt[16];
		snprintf(lt, sizeof(lt), "%lu", live_ms);
		/* the kernel's clock, not the agent's own choice at its start
		 * (the clocksource can change in between, and --clock mono
		 * on a TSC machine is the kernel's only): one clock, so the
		 * two traces merge exactly */
		const char *uclock = k ? (tr_krec_is_tsc(k) ? "tsc" : "monotonic") : NULL;
		if (ust_start(&ua, out, host, ust_globs, nust, relay, rsession, lt, uclock) < 0) {
			tr_krec_free(k);
			goto out_dirs;
		}
		setenv("TRAWL_AGENT_SOCKET", ua.sock, 1);
	}

	/* The command waits on a pipe until tracing is on. */
	if (cmd) {
		if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0) {
			status = cli_err("pipe: %s", strerror(errno));
			tr_krec_free(k);
			goto out_child;
		}
		fflush(NULL);
		child = fork();
		if (child < 0) {
			status = cli_err("fork: %s", strerror(errno));
			tr_krec_free(k);
			goto out_child;
		}
		if (child == 0) {
			char b;
			close(go[1]);
			if (read(go[0], &b, 1) != 1)
				_exit(127);
			close(go[0]);
			close(ex[0]);
			execvp(cmd[0], cmd);
			int e = errno;
			cli_err("cannot run '%s': %s", cmd[0], strerror(e));
			if (write(ex[1], &e, sizeof(e)) < 0) {
				/* the parent sees the exit status only */
			}
			_exit(CLI_EXIT_NOEXEC);
		}
		close(go[0]);
		close(ex[1]);
		ex[1] = -1;
		if (only_cmd && k && tr_krec_add_pid(k, child, err, sizeof(err)) < 0) {
			status = cli_err("%s", err);
			tr_krec_free(k);
			goto out_child;
		}
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (k && tr_krec_start(k, err, sizeof(err)) < 0) {
		status = cli_err("%s", err);
		tr_krec_free(k);
		goto out_child;
	}
	/* as LTTng's start: the processes and files of this moment are in
	 * the state dump before the command runs (a loaded machine could
	 * otherwise run it first: lttng-analyses then knows none of its
	 * files) */
	if (k && cmd)
		tr_krec_wait_statedump(k);

	/*
	 * User space stamps with the kernel recorder's clock (given to the
	 * private agent above): the TSC when the recorder chose x86-tsc, each
	 * side measuring its frequency over its own run, so the two traces
	 * merge to within the difference of two calibrations (tens of ns;
	 * docs/kernel.md); else CLOCK_MONOTONIC, the kernel's mono clock.
	 */

	double t0 = tr_mono_s();
	if (!cmd)
		cli_note("recording into %s (Ctrl-C to stop)", kwhere ? kwhere : kdir);
	/* first: a COMMAND does not narrow the kernel side by itself */
	if (cmd && k && !only_cmd && !npids && !cgroup)
		cli_note("recording the kernel events of the whole machine into %s while '%s' "
			 "runs (only the command's and its children's: --only-command)",
			 kwhere ? kwhere : kdir, cmd[0]);
	else if (cmd && k)
		cli_note("recording kernel events into %s while '%s' runs (%s)",
			 kwhere ? kwhere : kdir, cmd[0],
			 only_cmd ? "the command's and its children's only" :
			 cgroup ? "the cgroup's tasks only" : "the given pids only");
	if (want_ust)
		cli_note("user space of '%s' into %s", cmd[0], uwhere ? uwhere : udir);
	if (cmd) {
		char b = 1;
		if (write(go[1], &b, 1) != 1)
			cli_err("cannot start the command: %s", strerror(errno));
		close(go[1]);
		go[1] = -1;
		/* end of file once the command runs (close-on-exec), its errno
		 * if it could not be run: then nothing is kept */
		int e;
		ssize_t got;
		while ((got = read(ex[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		exec_failed = got == (ssize_t)sizeof(e);
		close(ex[0]);
		ex[0] = -1;
	}
	int wst = 0;
	bool forwarded = false;
	/* a COMMAND's output shares the terminal: no line by default */
	cli_progress_start(&pg, "trawl record", progress ? progress : cmd || cli_verbosity < 0 ?
			   CLI_OPT_NO_PROGRESS : 0, CLI_PROGRESS_TIME, (uint64_t)(duration * 1e9));
	pg.counts = k != NULL;
	for (;;) {
		if (pg.on) {
			pg.events = k ? tr_krec_events(k) : 0;
			cli_progress_set(&pg, (uint64_t)((tr_mono_s() - t0) * 1e9));
		}
		if (child > 0) {
			pid_t r = waitpid(child, &wst, WNOHANG);
			if (r == child) {
				child = -1;
				break;
			}
			if (got_signal == SIGTERM && !forwarded) {
				kill(child, SIGTERM);
				forwarded = true;
			}
		} else if (got_signal) {
			break;
		}
		if (duration > 0 && tr_mono_s() - t0 >= duration)
			break;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	double secs = tr_mono_s() - t0;
	cli_progress_end(&pg, duration > 0 && secs >= duration);
	int r = 0;
	if (k && (r = tr_krec_stop(k, err, sizeof(err))) < 0) {
		if (relay)	/* the relay's reason among it: escaped here */
			tr_escape_ctl(err, sizeof(err));
		cli_err("%s", err);
	}
	if (ua.pid > 0) {
		/* the command has exited (or the duration is over): the agent
		 * drains what it committed and writes the trace */
		int ur = ust_stop(&ua);
		if (ur)
			r = -1;
	}
	if (k && cli_verbosity >= 0 && !exec_failed) {
		uint64_t ev = 0, lost = 0;
		for (unsigned i = 0; i < tr_krec_ncpus(k); i++) {
			ev += tr_krec_stats(k, i)->events;
			lost += tr_krec_stats(k, i)->lost;
		}
		cli_note("%" PRIu64 " kernel events, %" PRIu64 " lost, "
			 "%" PRIu64 " state dump events, %.3f s, clock %s, in %s",
			 ev, lost, tr_krec_statedump_events(k), secs, tr_krec_clock_name(k),
			 kwhere ? kwhere : kdir);
		/* the kernel marked the TSC unstable meanwhile (its watchdog
		 * does so on loaded VMs): this recording is on the TSC still,
		 * but programs that chose their own clock since are not */
		if (tr_krec_is_tsc(k) && !tr_clocksource_is_tsc())
			cli_warn("the kernel's clocksource is no longer the TSC (it changed during the "
				 "recording): this trace is on the TSC, as its user space is; traces "
				 "of programs that chose their own clock since are on CLOCK_MONOTONIC, "
				 "and may not merge with it to the microsecond");
		/* what the relay did not store (docs/relay.md, "Cut off by the
		 * relay"): discarded there, though the local copy has it */
		uint64_t rev, rdisc;
		int rc = tr_krec_relay_discarded(k, &rev, &rdisc);
		if (rc != -ENOENT && (rdisc || rc < 0))
			cli_note("relay: %" PRIu64 " kernel event%s streamed, %" PRIu64 " stored at the "
				 "relay, %s%" PRIu64 " discarded (not stored)%s", rev, CLI_S(rev),
				 rev - rdisc, rc < 0 ? "at most " : "", rdisc,
				 rc < 0 ? "; the relay did not say where it cut" : "");
		const struct krec_live_stats *ls = tr_krec_live_stats(k);
		if (ls)
			cli_info("live: %" PRIu64 " tick%s, %" PRIu64 " demand%s of a viewer, %" PRIu64
				 " cut%s at once for it", ls->ticks, CLI_S(ls->ticks), ls->demands,
				 CLI_S(ls->demands), ls->fast_cuts, CLI_S(ls->fast_cuts));
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		cli_info("recorder CPU %.3f s (%.3f user, %.3f system)", cpu,
			 (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
			 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
		for (unsigned i = 0; i < tr_krec_ncpus(k); i++) {
			const struct krec_cpu_stats *s = tr_krec_stats(k, i);
			cli_info("  cpu %u: %" PRIu64 " events, %" PRIu64 " lost, %" PRIu64 " pages",
				 i, s->events, s->lost, s->pages);
		}
		struct tr_kpath_stats ps;
		if (tr_krec_paths_stats(k, &ps) == 0) {
			uint64_t missing = tr_kpath_missing(&ps);
			if (missing)	/* said whatever the verbosity: names were asked for */
				cli_note("file names: %" PRIu64 " named, %" PRIu64 " pointers (copy "
					 "failed %" PRIu64 ", record lost %" PRIu64 ", late %" PRIu64
					 ", ambiguous %" PRIu64 ", mismatch %" PRIu64 ")", ps.named,
					 missing, ps.fault, ps.lost, ps.late, ps.ambiguous,
					 ps.mismatch);
			else
				cli_info("file names: %" PRIu64 " named", ps.named);
			cli_info("file names: %" PRIu64 " records unused, %" PRIu64
				 " not queued by the kernel side", ps.unused, ps.ring_lost);
		}
	}
	if (k)
		tr_krec_free(k);
	if (r < 0)
		status = 1;
	else if (cmd && child < 0)
		status = WIFEXITED(wst) ? WEXITSTATUS(wst) :
			 WIFSIGNALED(wst) ? 128 + WTERMSIG(wst) : 1;
	else
		status = 0;
	if (cmd && child > 0) {
		/* duration over: the command goes on, we wait for it */
		if (waitpid(child, &wst, 0) == child && r >= 0)
			status = WIFEXITED(wst) ? WEXITSTATUS(wst) :
				 WIFSIGNALED(wst) ? 128 + WTERMSIG(wst) : 1;
		child = -1;
	}
	/* a command that never ran leaves no trace (nor a directory that
	 * would refuse the retry); one that ran and failed keeps its trace */
	undo = exec_failed;
	if (exec_failed && out)
		cli_note("nothing kept in %s: '%s' did not run", out, cmd[0]);
	else if (out && cmd && status && r >= 0 && cli_verbosity >= 0) {
		cli_note("'%s' exited with status %d; its trace is kept in %s", cmd[0], status,
			 hostdir);
		cli_hint("to record into %s again, add --force (or remove %s)", out, hostdir);
	}
out_child:
	if (go[1] >= 0)
		close(go[1]);	/* the child reads EOF and exits 127 */
	if (ex[0] >= 0)
		close(ex[0]);
	if (ex[1] >= 0)
		close(ex[1]);
	if (child > 0)
		waitpid(child, NULL, 0);
	if (ua.pid > 0)
		ust_stop(&ua);
out_dirs:
	if (undo)
		unmake(&made, out, hostdir, kdir, udir);
	free(hostdir);
	free(kdir);
	free(udir);
	free(kwhere);
	free(uwhere);
out_events:
	for (size_t i = 0; i < nevents; i++)
		free(events[i]);
	free(events);
	return status;
}
