/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-analyze.c - trawl analyze NAME [options] [TRACE...] [--live URL]:
 * runs one of the standard analyses (lib/analysis/, trawl/analysis.h) as a
 * sink over trace files or live relay sessions and prints its report, once
 * at the end or once per --interval slice.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <trawl/analysis.h>
#include <trawl/pipe.h>
#include <trawl/sync.h>

#include "cli.h"
#include "internal.h"	/* tr_closest */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trawl analyze NAME [options] [TRACE...] [--live URL]\n"
		"\n"
		"Runs a standard analysis of kernel traces (recorded with, e.g.,\n"
		"trawl record -k sched,syscalls,irq,block) on trace directories or\n"
		"live relay sessions, one host or a whole session merged.\n"
		"\n"
		"analyses:\n");
	const char *help;
	for (size_t i = 0; trawl_analysis_name(i, &help); i++)
		fprintf(f, "  %-10s %s\n", trawl_analysis_name(i, NULL), help);
	fprintf(f,
		"\n"
		"output (any of them; --stats when none):\n"
		"  --stats              a table: count, min, avg, max, stddev per row\n"
		"  --top N              the N top rows (cputop) or the N longest samples\n"
		"  --log                every sample, in time order\n"
		"  --freq               a log2 histogram (us) per row\n"
		"  --json               one JSON object per report, instead of text\n"
		"filters:\n"
		"  --host GLOB          hosts (env.hostname) to read (repeatable)\n"
		"  --begin T, --end T   time range (T: a <time>, below)\n"
		"  --tid TID            one thread\n"
		"  --comm GLOB          threads by name\n"
		"  --cpu N              one CPU\n"
		"  --min D, --max D     durations from D / up to D (ns, us, ms, s; us when bare)\n"
		"slicing:\n"
		"  --by host            rows per host, side by side\n"
		"  --interval S         a report every S seconds of trace time\n"
		"sources:\n"
		"  --clock-gmt          dates in UTC, and the report's times, instead of local\n"
		"                       time (alias --gmt)\n"
		"  -l, --live URL       a live session: net://RELAY[:PORT]/host/HOST/SESSION or\n"
		"                       net://RELAY[:PORT]/session/SESSION (repeatable)\n"
		"  --wait S             a live session not there yet: wait at most S seconds\n"
		"                       (default: until it comes; 0: fail at once)\n"
		"  --from-now           live: from the session's next packet, not its beginning\n"
		"  --no-sync            ignore the session's stored clock corrections\n"
		"                       (live: nor correct them from its messages)\n"
		"  -h, --help           this help\n"
		"\n"
		CLI_TIME_HELP);
}

static volatile int stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* "5", "5us", "2.5ms", "1s", "100ns" -> ns; -1 when malformed */
static int64_t parse_dur(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	double mul = 1e3;
	if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "s"))
		mul = 1e9;
	else if (*end && strcmp(end, "us"))
		return -1;
	return (int64_t)(v * mul + 0.5);
}

struct ctx {
	struct trawl_analysis_report_opts ro;
	int err;
};

static void on_period(void *arg, const struct trawl_analysis *a)
{
	struct ctx *c = arg;
	int r = trawl_analysis_report(a, STDOUT_FILENO, &c->ro);
	if (r < 0 && !c->err)
		c->err = r;
}

static void report_error(void *arg, const char *msg)
{
	(void)arg;
	cli_err("%s", msg);
}

int cmd_analyze(int argc, char **argv)
{
	enum { O_STATS = 256, O_TOP, O_LOG, O_FREQ, O_JSON, O_HOST, O_BEGIN, O_END, O_TID, O_COMM,
	       O_CPU, O_MIN, O_MAX, O_BY, O_INTERVAL, O_NOSYNC, O_GMT };
	static const struct option longopts[] = {
		{ "stats", no_argument, NULL, O_STATS },
		{ "top", required_argument, NULL, O_TOP },
		{ "log", no_argument, NULL, O_LOG },
		{ "freq", no_argument, NULL, O_FREQ },
		{ "json", no_argument, NULL, O_JSON },
		{ "host", required_argument, NULL, O_HOST },
		{ "begin", required_argument, NULL, O_BEGIN },
		{ "end", required_argument, NULL, O_END },
		{ "tid", required_argument, NULL, O_TID },
		{ "comm", required_argument, NULL, O_COMM },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "min", required_argument, NULL, O_MIN },
		{ "max", required_argument, NULL, O_MAX },
		{ "by", required_argument, NULL, O_BY },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "live", required_argument, NULL, 'l' },
		{ "no-sync", no_argument, NULL, O_NOSYNC },
		CLI_GMT_OPTIONS(O_GMT),
		CLI_LIVE_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trawl_analysis_opts ao = { .sz = sizeof(ao), .tid = -1, .cpu = -1 };
	struct ctx ctx = { .ro = { .sz = sizeof(ctx.ro) } };
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct cli_time_range time = { 0 };
	const char **hosts = calloc((size_t)argc + 1, sizeof(*hosts));
	char **live = calloc((size_t)argc + 1, sizeof(*live));
	size_t nhosts = 0, nlive = 0;
	bool no_sync = false, from_now = false;
	long wait_ms = CLI_WAIT_FOREVER;
	int c, status = CLI_EXIT_FAILURE;
	char err[512] = "", *end;
	struct trawl_sync_store *sync = NULL;
	struct trawl_analysis *a = NULL;
	struct trawl_reader *r = NULL;
	int nbad = 0;

	if (!hosts || !live) {
		status = cli_err("out of memory");
		goto out;
	}
	/* NAME first, unless asking for help */
	if (argc >= 2 && strcmp(argv[1], "-h") && strcmp(argv[1], "--help") && argv[1][0] != '-') {
		ao.name = argv[1];
		argv++;
		argc--;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hl:", longopts, NULL)) != -1) {
		switch (c) {
		case O_STATS: ctx.ro.modes |= TRAWL_ANALYSIS_STATS; break;
		case O_LOG: ctx.ro.modes |= TRAWL_ANALYSIS_LOG; ao.keep_samples = true; break;
		case O_FREQ: ctx.ro.modes |= TRAWL_ANALYSIS_FREQ; break;
		case O_JSON: ctx.ro.modes |= TRAWL_ANALYSIS_JSON; break;
		case O_TOP:
			ctx.ro.top = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !ctx.ro.top) {
				status = cli_usage("--top: not a count: '%s'", optarg);
				goto out;
			}
			ctx.ro.modes |= TRAWL_ANALYSIS_TOP;
			ao.keep_samples = true;
			break;
		case O_HOST: hosts[nhosts++] = optarg; break;
		case 'l':
			if ((status = cli_live_check(optarg)))
				goto out;
			live[nlive++] = optarg;
			break;
		case CLI_OPT_WAIT:
			if ((status = cli_wait_arg(optarg, &wait_ms)))
				goto out;
			break;
		case CLI_OPT_FROM_NOW: from_now = true; break;
		case O_BEGIN: time.begin_s = optarg; break;
		case O_END: time.end_s = optarg; break;
		case O_GMT: time.gmt = true; ctx.ro.modes |= TRAWL_ANALYSIS_GMT; break;
		case O_TID:
			ao.tid = strtoll(optarg, &end, 10);
			if (*end || ao.tid < 0) {
				status = cli_usage("--tid: not a thread id: '%s'", optarg);
				goto out;
			}
			break;
		case O_COMM: ao.comm = optarg; break;
		case O_CPU:
			ao.cpu = (int)strtol(optarg, &end, 10);
			if (*end || ao.cpu < 0) {
				status = cli_usage("--cpu: not a CPU number: '%s'", optarg);
				goto out;
			}
			break;
		case O_MIN:
		case O_MAX: {
			int64_t d = parse_dur(optarg);
			if (d < 0) {
				status = cli_usage("--%s: not a duration: '%s'", c == O_MIN ? "min" : "max",
						   optarg);
				goto out;
			}
			*(c == O_MIN ? &ao.min_ns : &ao.max_ns) = d;
			break;
		}
		case O_BY:
			if (strcmp(optarg, "host")) {
				status = cli_usage("--by: only 'host' (rows per host): '%s'", optarg);
				goto out;
			}
			ao.by_host = true;
			break;
		case O_INTERVAL: {
			int64_t d = parse_dur(optarg);
			/* bare: seconds */
			d = strspn(optarg, "0123456789.") == strlen(optarg) ? d * 1000000 : d;
			if (d <= 0) {
				status = cli_usage("--interval: not a duration: '%s'", optarg);
				goto out;
			}
			ao.interval_ns = d;
			break;
		}
		case O_NOSYNC: no_sync = true; break;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		default:
			status = cli_opt_error(c, argv);
			goto out;
		}
	}
	if (!ao.name) {
		status = cli_usage("no analysis named (one of: cputop, schedlat, iolatency, irq, "
				   "syscalls)");
		goto out;
	}
	/* --top alone keeps the N longest samples only (--by host: each
	 * host's N longest, from all the samples) */
	if ((ctx.ro.modes & TRAWL_ANALYSIS_TOP) && !(ctx.ro.modes & TRAWL_ANALYSIS_LOG) &&
	    !ao.by_host)
		ao.keep_longest = ctx.ro.top;
	if (!(ctx.ro.modes & ~(TRAWL_ANALYSIS_JSON | TRAWL_ANALYSIS_GMT)))
		ctx.ro.modes |= TRAWL_ANALYSIS_STATS;
	if ((status = cli_time_range_parse(&time)))
		goto out;
	status = CLI_EXIT_FAILURE;
	ao.period = on_period;
	ao.arg = &ctx;
	a = trawl_analysis_new(&ao, err, sizeof(err));
	if (!a) {
		if (errno == EINVAL) {
			/* one line of what to do: the near name, else the list */
			static const char *const names[] = { "cputop", "schedlat", "iolatency",
							     "irq", "syscalls" };
			const char *near = tr_closest(ao.name, names, 5, 3);
			cli_err("%s", err);
			if (near)
				cli_hint("did you mean '%s'? (trawl analyze --help lists them)", near);
			else
				cli_hint("trawl analyze --help lists them");
			status = CLI_EXIT_USAGE;
		} else {
			status = cli_err("%s", err);
		}
		goto out;
	}
	size_t npaths = (size_t)(argc - optind);
	const char *const *paths = (const char *const *)argv + optind;
	if (!npaths && !nlive) {
		status = cli_usage("no trace path and no --live session given");
		goto out;
	}
	if (npaths && cli_trace_paths(paths, npaths))
		goto out;
	if ((status = cli_filters_check(paths, nlive ? 0 : npaths, hosts, nhosts, NULL, 0, ao.cpu)))
		goto out;
	status = CLI_EXIT_FAILURE;
	if (npaths && cli_sync_load(paths, npaths, no_sync, &ro, &sync))
		goto out;
	ro.hosts = nhosts ? hosts : NULL;	/* for the first event's day only */
	ro.nhosts = nhosts;
	if ((status = cli_time_range_apply(&time, paths, npaths, &ro)))
		goto out;
	status = CLI_EXIT_FAILURE;
	struct cli_reader_opts co = {
		.hosts = nhosts ? hosts : NULL, .nhosts = nhosts,
		.live = (const char *const *)live, .nlive = nlive, .nbad = &nbad,
		.wait_ms = wait_ms, .from_now = from_now, .live_sync = !no_sync,
		.lazy = true,	/* a result per interval */
	};
	if (!(r = cli_open_reader(paths, npaths, &co, &ro, err, sizeof(err)))) {
		status = cli_err("%s", err);
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct trawl_sink sink = trawl_analysis_sink(a);
	struct trawl_run_opts run = { .sz = sizeof(run), .error = report_error, .stop = &stop };
	int rc = trawl_pipe_run(r, &sink, 1, &run);
	if (rc < 0) {
		status = cli_err("%s", strerror(-rc));
		goto out;
	}
	if (ctx.err) {
		if (ctx.err != -EPIPE)
			status = cli_err("writing the report: %s", strerror(-ctx.err));
		else
			status = 0;
		goto out;
	}
	status = rc > 0 ? CLI_EXIT_FAILURE : 0;
	int jr = (ctx.ro.modes & TRAWL_ANALYSIS_JSON) ? cli_reader_json_line(r) : 0;
	if (jr < 0)
		status = cli_err("writing the report: %s", strerror(-jr));
	uint64_t nimp = trawl_analysis_impossible(a);
	if (nimp)
		cli_warn("%" PRIu64 " interval%s not counted: %s ends 2^63 ns or more apart "
			 "(impossible: a corrupt timestamp or clock offset)", nimp,
			 nimp == 1 ? "" : "s", nimp == 1 ? "its" : "their");
	uint64_t nun = trawl_analysis_unseen_switches(a, NULL);
	if (nun)
		cli_warn("%" PRIu64 " switch%s onto a CPU %s not in the trace (a thread left a CPU "
			 "that ran another, by the trace): the kernel did not record %s, or %s lost; "
			 "the time on a CPU counts from the thread's wake-up there (trawl-analyze(1))",
			 nun, nun == 1 ? "" : "es", nun == 1 ? "is" : "are", nun == 1 ? "it" : "them",
			 nun == 1 ? "it was" : "they were");
	if (cli_reader_report(r, nbad))	/* losses, skips: trawl(1) */
		status = CLI_EXIT_FAILURE;
out:
	trawl_analysis_free(a);
	trawl_reader_free(r);
	trawl_sync_store_free(sync);
	free(hosts);
	free(live);
	return status;
}
