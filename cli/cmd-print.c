/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-print.c - `trawl print`: every event of every trace under the
 * given paths, merged in time order, one line each in babeltrace2's text
 * format, so that `trawl print DIR` and `babeltrace2 DIR` can be compared
 * line by line.
 *
 * Output goes through one large buffer written with write(2); a closed pipe
 * (`| head`) ends the command quietly. A corrupt stream, or a trace of a
 * session that cannot be opened (an empty metadata file), is reported on
 * stderr and the others go on; the exit status is then 1.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: trawl print [<options>] <path>...\n"
		"       trawl print [<options>] --live <url> [<path>...]\n"
		"\n"
		"Prints the events of the CTF traces found under each path (a trace\n"
		"directory or a session above several), merged in time order, one line\n"
		"each, as babeltrace2 does. With --live, also those of a relay's live\n"
		"session while it is recorded, until it ends (or Ctrl-C).\n"
		"\n"
		"  -H, --host <glob>      only traces whose env hostname matches (repeatable)\n"
		"  -e, --event <glob>     only events whose name matches (repeatable)\n"
		"  -b, --begin <time>     only events at or after <time>\n"
		"  -E, --end <time>       only events at or before <time>\n"
		"  -n, --limit <n>        stop after <n> events\n"
		"  -f, --format <name>    text (default: as babeltrace2 prints) or json (one\n"
		"                         JSON object per line: ts, host, cpu, event,\n"
		"                         context, fields)\n"
		"      --clock-seconds    print times as [seconds.nanoseconds]\n"
		"      --clock-gmt        print times in UTC instead of local time (alias\n"
		"                         --gmt)\n"
		"      --no-delta         do not print the time since the previous event\n"
		"      --no-sync          raw clocks: do not apply the session's sync.txt\n"
		"                         (live: nor correct them from its messages)\n"
		"      --sync <path>      apply this stored sync result (a sync.txt, or a\n"
		"                         session directory holding one) instead\n"
		"  -l, --live <url>       a live session (repeatable): net://RELAY[:PORT]/\n"
		"                         host/HOST/SESSION (one host), or net://RELAY[:PORT]/\n"
		"                         session/SESSION (every host of the session, merged)\n"
		CLI_LIVE_HELP
		"      --secret-file <f>  the live relay's credential: the viewer key or the\n"
		"                         cluster secret (docs/auth.md; default:\n"
		"                         TRAWL_SECRET_FILE, else [relay] secret-file)\n"
		"      --threads <n>      1: read and format in one thread; 2 (default):\n"
		"                         format and write in a second thread; 3: also\n"
		"                         decode the traces ahead in a third thread\n"
		"      --progress         show progress on stderr even when it is not a\n"
		"                         terminal\n"
		"      --no-progress      never show progress (default: when stderr is a\n"
		"                         terminal and the events go elsewhere)\n"
		"  -h, --help             this help\n"
		"\n"
		CLI_TIME_HELP);
}

/* ---------------------------------------------------------------- run */

static void report_corrupt(void *arg, const char *msg)
{
	(void)arg;
	cli_err("%s", msg);
}

static volatile int print_stop;	/* SIGINT, SIGTERM (live) */

static void on_stop(int sig)
{
	(void)sig;
	print_stop = 1;
}

/* Prints every event of r through a printer sink; the exit status.
 * progress: as cli_progress_start() takes it. */
static int print_run(struct trawl_reader *r, const struct trawl_print_opts *po, uint64_t limit,
		     int progress)
{
	char err[256];
	struct trawl_print *p = trawl_print_new(po, err, sizeof(err));

	if (!p)
		return cli_err("%s", err);
	struct cli_progress pg;
	struct trawl_sink sinks[2] = { trawl_print_sink(p), cli_progress_sink(&pg) };
	struct trawl_run_opts ro = {
		.sz = sizeof(ro), .limit = limit == UINT64_MAX ? 0 : limit, .error = report_corrupt,
		.stop = &print_stop,
	};
	/* the events go to the terminal: they show how far it is */
	if (!progress && cli_progress_same_tty())
		progress = CLI_OPT_NO_PROGRESS;
	cli_progress_start(&pg, "trawl print", progress, CLI_PROGRESS_BYTES, 0);
	int rc = limit == 0 ? 0 : trawl_pipe_run(r, sinks, pg.on ? 2 : 1, &ro), status = 0;

	if (rc == -EPIPE)
		status = 0;	/* `| head`: stop quietly */
	else if (rc < 0 && trawl_print_error(p))
		status = cli_err("write error: %s", strerror(trawl_print_error(p)));
	else if (rc == -ENOMEM)
		status = cli_err("out of memory");
	else if (rc != 0)
		status = 1;	/* a corrupt stream, or a live source gone: reported */
	trawl_print_free(p);
	return status;
}

/* ---------------------------------------------------------------- main */

struct print_opts {
	const char **hosts, **events;
	size_t nhosts, nevents;
	struct cli_time_range time;
	uint64_t limit;
	unsigned flags;
	int threads;
	const char *format;
	const char *sync_path;
	const char **live;
	size_t nlive;
	bool no_sync;
	int *nbad;			/* traces skipped */
	long wait_ms;			/* --wait */
	bool from_now;			/* --from-now */
};

/* The reader over the paths' traces and the live sessions. */
static struct trawl_reader *open_reader(char **paths, size_t npaths, const struct print_opts *po,
					const struct trawl_reader_opts *ro, char *err, size_t errlen)
{
	struct cli_reader_opts co = {
		.hosts = po->hosts, .nhosts = po->nhosts, .events = po->events,
		.nevents = po->nevents, .live = po->live, .nlive = po->nlive, .nbad = po->nbad,
		.wait_ms = po->wait_ms, .from_now = po->from_now, .live_sync = !po->no_sync,
	};
	return cli_open_reader((const char *const *)paths, npaths, &co, ro, err, errlen);
}

int cmd_print(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "event", required_argument, NULL, 'e' },
		{ "begin", required_argument, NULL, 'b' },
		{ "end", required_argument, NULL, 'E' },
		{ "limit", required_argument, NULL, 'n' },
		{ "clock-seconds", no_argument, NULL, 1 },
		CLI_GMT_OPTIONS(2),
		{ "no-delta", no_argument, NULL, 3 },
		{ "threads", required_argument, NULL, 4 },
		{ "no-sync", no_argument, NULL, 5 },
		{ "format", required_argument, NULL, 'f' },
		{ "live", required_argument, NULL, 'l' },
		{ "sync", required_argument, NULL, 6 },
		{ "secret-file", required_argument, NULL, 7 },
		CLI_PROGRESS_OPTIONS,
		CLI_LIVE_OPTIONS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *secret = NULL;
	int nbad = 0;
	struct print_opts po = { .limit = UINT64_MAX, .threads = 2, .nbad = &nbad,
				 .wait_ms = CLI_WAIT_FOREVER };
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct trawl_reader *r = NULL;
	struct trawl_sync_store *sync = NULL;
	char err[1024];
	int c, status = 0, progress = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":H:e:b:E:n:f:l:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			if ((status = cli_arg_add(&po.hosts, &po.nhosts, optarg)))
				goto out;
			break;
		case 'e':
			if ((status = cli_arg_add(&po.events, &po.nevents, optarg)))
				goto out;
			break;
		case 'b':
			po.time.begin_s = optarg;
			break;
		case 'E':
			po.time.end_s = optarg;
			break;
		case 'n': {
			char *end;

			errno = 0;
			po.limit = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-') {
				return cli_usage("--limit: '%s' is not a number of events", optarg);
			}
			break;
		}
		case 1:
			po.flags |= TRAWL_TEXT_CLOCK_SECONDS;
			break;
		case 2:
			po.flags |= TRAWL_TEXT_CLOCK_GMT;
			break;
		case 3:
			po.flags |= TRAWL_TEXT_NO_DELTA;
			break;
		case 4:
			po.threads = atoi(optarg);
			if (po.threads < 1 || po.threads > 3) {
				return cli_usage("--threads: '%s' is not 1, 2 or 3", optarg);
			}
			break;
		case 5:
			po.no_sync = true;
			break;
		case 6:
			po.sync_path = optarg;
			break;
		case 7:
			secret = optarg;
			break;
		case CLI_OPT_PROGRESS:
		case CLI_OPT_NO_PROGRESS:
			progress = c;
			break;
		case 'l':
			if ((status = cli_live_check(optarg)) ||
			    (status = cli_arg_add(&po.live, &po.nlive, optarg)))
				goto out;
			break;
		case CLI_OPT_WAIT:
			if ((status = cli_wait_arg(optarg, &po.wait_ms)))
				goto out;
			break;
		case CLI_OPT_FROM_NOW:
			po.from_now = true;
			break;
		case 'f': {
			const char *name;
			size_t i = 0;

			while ((name = trawl_format_name(i, NULL)) && strcmp(name, optarg))
				i++;
			if (!name) {
				char names[256];
				size_t l = 0;

				for (i = 0; (name = trawl_format_name(i, NULL)) && l < sizeof(names); i++)
					l += (size_t)snprintf(names + l, sizeof(names) - l, "%s%s",
							      i ? ", " : "", name);
				return cli_usage("--format: unknown format '%s' (%s)", optarg, names);
			}
			po.format = optarg;
			break;
		}
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			return cli_opt_error(c, argv);
		}
	}
	if (optind >= argc && !po.nlive) {
		status = cli_usage("no trace path given");
		goto out;
	}
	if (secret && !po.nlive) {
		status = cli_usage("--secret-file is a live relay's credential: it needs --live");
		goto out;
	}
	if (po.nlive)
		cli_secret_env(secret);	/* the live client's (docs/auth.md) */
	char **paths = argv + optind;
	size_t npaths = (size_t)(argc - optind);
	po.time.gmt = po.flags & TRAWL_TEXT_CLOCK_GMT;
	if ((status = cli_time_range_parse(&po.time)) ||
	    (status = cli_sync_check(po.sync_path, po.no_sync)))
		goto out;
	if (cli_trace_paths((const char *const *)paths, npaths)) {
		status = CLI_EXIT_FAILURE;
		goto out;
	}
	if ((status = cli_filters_check((const char *const *)paths, po.nlive ? 0 : npaths, po.hosts, po.nhosts,
					po.events, po.nevents, -1)))
		goto out;
	if ((status = cli_sync_use(po.sync_path, (const char *const *)paths, npaths, po.no_sync,
				   &ro, &sync)))
		goto out;
	ro.hosts = po.hosts;
	ro.nhosts = po.nhosts;
	if ((status = cli_time_range_apply(&po.time, (const char *const *)paths, npaths, &ro)))
		goto out;
	ro.events = po.events;
	ro.nevents = po.nevents;
	/*
	 * Formatting costs more than decoding: on 2 CPUs the formatter thread
	 * (which the reading thread helps) is the best use of the second one,
	 * and a decode worker on top only adds contention; --threads 3 asks
	 * for it anyway.
	 */
	ro.threads = po.threads >= 3 ? 2 : 1;
	r = open_reader(paths, npaths, &po, &ro, err, sizeof(err));
	if (!r) {
		status = cli_err("%s", err);
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	{
		/* live: printed as they come (a viewer waits for nothing), and
		 * events do not outlive the next read there */
		struct trawl_print_opts pr = {
			.sz = sizeof(pr), .fd = STDOUT_FILENO, .format = po.format,
			.flags = po.flags, .threads = po.threads > 1 && !po.nlive ? 2 : 1,
			.flush_batches = po.nlive > 0,
		};
		struct sigaction sa = { .sa_handler = on_stop };

		if (po.nlive) {
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
		}
		status = print_run(r, &pr, po.limit, progress);
		int rs = cli_reader_report(r, nbad);	/* losses, skips: trawl(1) */
		if (!status)
			status = rs;
	}
out:
	trawl_reader_free(r);
	trawl_sync_store_free(sync);
	free(po.hosts);
	free(po.events);
	free(po.live);
	return status;
}
