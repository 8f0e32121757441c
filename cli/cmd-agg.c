/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-agg.c - `trawl agg`: aggregations and heat maps (trawl/agg.h)
 * over trace files or a live relay session, printed at the end or per
 * interval as each closes; a heat map also as an SVG picture.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util/outfile.h"
#include "trawl/agg.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

static void agg_usage(FILE *f)
{
	fprintf(f,
		"usage: trawl agg [<options>] <statement> <path>...\n"
		"       trawl agg [<options>] --live <url> <statement> [<path>...]\n"
		"\n"
		"Aggregates the events of the CTF traces under each path (and of live\n"
		"sessions): counts, sums, min, max, avg, stddev, histograms and heat maps,\n"
		"keyed by fields, host, cpu, tid, pid, comm, cgroup or event. Statements:\n"
		"\n"
		"  count(syscall_entry_*) by comm\n"
		"  hist(lat(syscall_entry_*, syscall_exit_*)) by comm\n"
		"  stats(lat(syscall_entry_*, syscall_exit_*)) by event top 10\n"
		"  sum(syscall_exit_read.ret) by host, tid; lhist(sched_switch.prev_prio, 0, 140, 10)\n"
		"  heatmap(lat(irq_handler_entry, irq_handler_exit))\n"
		"\n"
		"Functions: count sum min max avg stddev stats hist (log2) lhist(X, MIN, MAX,\n"
		"STEP) llhist(X[, FACTOR, LOW, HIGH, STEPS]) heatmap(X[, LOW, HIGH]). X is\n"
		"EVENT.FIELD or lat(BEGIN, END): end - begin time per thread, in ns (see\n"
		"trawl help agg).\n"
		"\n"
		"  -i, --interval <s>     results per interval of <s> seconds, each printed\n"
		"                         as it closes (a heat map: one line per interval)\n"
		"      --svg <file>       write the (first) heat map as an SVG picture\n"
		"      --json             one JSON object per report (per interval), instead\n"
		"                         of text: keys, figures, histograms' buckets\n"
		"  -H, --host <glob>      only traces whose env hostname matches (repeatable)\n"
		"  -b, --begin <time>     only events at or after <time>\n"
		"  -E, --end <time>       only events at or before <time>\n"
		"      --clock-gmt        dates of <time> in UTC (alias --gmt)\n"
		"  -l, --live <url>       a live session (repeatable), as trawl print takes it;\n"
		"                         intervals close as the streams pass their end\n"
		CLI_LIVE_HELP
		"      --no-sync          raw clocks: do not apply the session's sync.txt\n"
		"                         (live: nor correct them from its messages)\n"
		"      --sync <path>      apply this stored sync result instead\n"
		"  -q, --quiet            no notes on stderr\n"
		"  -h, --help             this help\n"
		"\n"
		CLI_TIME_HELP);
}

static volatile int agg_stop;

static void on_stop(int sig)
{
	(void)sig;
	agg_stop = 1;
}

static void report_corrupt(void *arg, const char *msg)
{
	(void)arg;
	cli_err("%s", msg);
}

struct run {
	bool tables;		/* some aggregation is not a heat map */
	bool json;		/* --json */
	int werr;
};

/* The results, as text or JSON: 0 or -errno. */
static int write_results(struct trawl_agg *a, const struct run *run)
{
	return run->json ? trawl_agg_write_json(a, STDOUT_FILENO) :
		trawl_agg_write_text(a, STDOUT_FILENO);
}

static void fmt_utc(char *buf, size_t cap, int64_t ts)
{
	time_t s = (time_t)(ts / 1000000000);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, cap, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(ts % 1000000000 / 1000000));
}

static void on_interval(void *arg, struct trawl_agg *a, int64_t begin, int64_t end)
{
	struct run *run = arg;
	int rc;

	if (run->werr)
		return;
	if (run->tables && !run->json) {
		char b[32], e[32];
		fmt_utc(b, sizeof(b), begin);
		fmt_utc(e, sizeof(e), end);
		printf("-- interval [%lld.%03d, %lld.%03d) %s - %s UTC\n",
		       (long long)(begin / 1000000000), (int)(begin % 1000000000 / 1000000),
		       (long long)(end / 1000000000), (int)(end % 1000000000 / 1000000), b, e);
		fflush(stdout);
	}
	if ((rc = write_results(a, run)) < 0)
		run->werr = -rc;
}

static int write_svg(struct trawl_agg *a, const char *path)
{
	for (size_t i = 0; i < trawl_agg_n(a); i++) {
		if (!trawl_agg_heat_ncols(a, i) && strncmp(trawl_agg_text(a, i), "heatmap(", 8))
			continue;
		/* in place for a device, a FIFO or "-"; a regular file replaced
		 * once complete; a symbolic link refused (util/outfile.h) */
		struct tr_outfile of;
		char err[512];
		int rc;

		if (tr_outfile_open(&of, path, TR_OUTFILE_DASH, 0666, err, sizeof(err)))
			return cli_err("%s", err);
		rc = trawl_agg_write_svg(a, i, of.fd);
		if (rc < 0)
			snprintf(err, sizeof(err), "%s: %s", path, strerror(-rc));
		else
			rc = tr_outfile_commit(&of, err, sizeof(err));
		tr_outfile_release(&of);
		if (rc < 0)
			return cli_err("%s", err);
		cli_note("heat map written to %s", path);
		return 0;
	}
	return cli_err("--svg: the statement has no heatmap()");
}

int cmd_agg(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "svg", required_argument, NULL, 1 },
		{ "json", no_argument, NULL, 4 },
		{ "host", required_argument, NULL, 'H' },
		{ "begin", required_argument, NULL, 'b' },
		{ "end", required_argument, NULL, 'E' },
		CLI_GMT_OPTIONS(5),
		{ "live", required_argument, NULL, 'l' },
		{ "no-sync", no_argument, NULL, 2 },
		{ "sync", required_argument, NULL, 3 },
		CLI_LIVE_OPTIONS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **hosts = NULL, **live = NULL, *svg = NULL, *sync_path = NULL;
	size_t nhosts = 0, nlive = 0;
	double interval = 0;
	bool no_sync = false, from_now = false;
	long wait_ms = CLI_WAIT_FOREVER;
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct trawl_sync_store *sync = NULL;
	struct trawl_reader *r = NULL;
	struct trawl_agg *a = NULL;
	struct run run = { 0 };
	struct cli_time_range time = { 0 };
	char err[1024];
	int c, rc, status = 0, nbad = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:H:b:E:l:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': {
			char *end;
			interval = strtod(optarg, &end);
			if (*end || !*optarg || !(interval >= 0.001) || interval > 86400)
				return cli_usage("--interval: '%s' is not a number of seconds "
						 "(0.001 to 86400)", optarg);
			break;
		}
		case 1:
			svg = optarg;
			break;
		case 'H':
			if ((status = cli_arg_add(&hosts, &nhosts, optarg)))
				goto out;
			break;
		case 'l':
			if ((status = cli_live_check(optarg)) ||
			    (status = cli_arg_add(&live, &nlive, optarg)))
				goto out;
			break;
		case CLI_OPT_WAIT:
			if ((status = cli_wait_arg(optarg, &wait_ms)))
				goto out;
			break;
		case CLI_OPT_FROM_NOW:
			from_now = true;
			break;
		case 'b':
			time.begin_s = optarg;
			break;
		case 'E':
			time.end_s = optarg;
			break;
		case 5:
			time.gmt = true;
			break;
		case 2:
			no_sync = true;
			break;
		case 4:
			run.json = true;
			break;
		case 3:
			sync_path = optarg;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			agg_usage(stdout);
			goto out;
		default:
			status = cli_opt_error(c, argv);
			goto out;
		}
	}
	if (optind >= argc) {
		status = cli_usage("no statement given (e.g. 'count(syscall_entry_*) by comm')");
		goto out;
	}
	const char *spec = argv[optind++];
	char **paths = argv + optind;
	size_t npaths = (size_t)(argc - optind);

	if (!npaths && !nlive) {
		status = cli_usage("no trace path given");
		goto out;
	}
	if ((status = cli_time_range_parse(&time)) || (status = cli_sync_check(sync_path, no_sync)))
		goto out;
	struct trawl_agg_opts ao = {
		.sz = sizeof(ao), .spec = spec, .interval = (int64_t)llround(interval * 1e9),
		.on_interval = on_interval, .arg = &run,
	};
	/* live: an interval closes by the clock within one interval after its
	 * end when no later event has closed it before: its grace leaves the
	 * reader's wait (~100 ms) and a loaded machine some room */
	if (nlive)
		ao.grace = ao.interval - 400000000 > ao.interval / 2 ? ao.interval - 400000000 :
			ao.interval / 2;
	if (!(a = trawl_agg_new(&ao, err, sizeof(err)))) {
		status = errno == EINVAL ? cli_usage("%s: %s", spec, err) : cli_err("%s", err);
		goto out;
	}
	for (size_t i = 0; i < trawl_agg_n(a); i++)
		if (strncmp(trawl_agg_text(a, i), "heatmap(", 8))
			run.tables = true;
	if (cli_trace_paths((const char *const *)paths, npaths)) {
		status = CLI_EXIT_FAILURE;
		goto out;
	}
	if ((status = cli_filters_check((const char *const *)paths, nlive ? 0 : npaths, hosts, nhosts, NULL, 0, -1)))
		goto out;
	if ((status = cli_sync_use(sync_path, (const char *const *)paths, npaths, no_sync, &ro,
				   &sync)))
		goto out;
	ro.hosts = hosts;	/* the first event's time (of +S, HH:MM:SS) of these */
	ro.nhosts = nhosts;
	if ((status = cli_time_range_apply(&time, (const char *const *)paths, npaths, &ro)))
		goto out;
	struct cli_reader_opts co = {
		.hosts = hosts, .nhosts = nhosts, .live = live, .nlive = nlive, .nbad = &nbad,
		.wait_ms = wait_ms, .from_now = from_now, .live_sync = !no_sync,
		.lazy = true,	/* a table per interval */
	};
	ro.threads = nlive ? 1 : 0;
	if (!(r = cli_open_reader((const char *const *)paths, npaths, &co, &ro, err, sizeof(err)))) {
		status = cli_err("%s", err);
		goto out;
	}
	/* a statement that can never match the traces read: a usage error */
	if ((rc = trawl_agg_check(a, r, err, sizeof(err))) < 0) {
		status = rc == -ENOMEM ? cli_err("out of memory") : CLI_EXIT_USAGE;
		if (rc != -ENOMEM)
			cli_err("%s", err);
		goto out;
	}
	if (nlive) {
		struct sigaction sa = { .sa_handler = on_stop };
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
	struct trawl_sink sink = trawl_agg_sink(a);
	struct trawl_run_opts rno = {
		.sz = sizeof(rno), .error = report_corrupt, .stop = &agg_stop,
	};
	rc = trawl_pipe_run(r, &sink, 1, &rno);
	if (rc < 0 && *trawl_agg_error(a))
		status = cli_err("%s", trawl_agg_error(a));
	else if (rc == -ENOMEM)
		status = cli_err("out of memory");
	else if (rc != 0)
		status = 1;	/* reported */
	if (!status && !ao.interval && (rc = write_results(a, &run)) < 0)
		run.werr = -rc;
	if (!status && run.json && !run.werr && (rc = cli_reader_json_line(r)) < 0)
		run.werr = -rc;	/* {"losses": ...} after the results */
	if (run.werr && run.werr != EPIPE)
		status = cli_err("write error: %s", strerror(run.werr));
	if (!status && svg)
		status = write_svg(a, svg);
	if (trawl_agg_late(a))
		cli_warn("%llu values came after their interval had closed (left out)",
			 (unsigned long long)trawl_agg_late(a));
	if (trawl_agg_unpaired(a))
		cli_info("%llu begin or end events without their pair (left out)",
			 (unsigned long long)trawl_agg_unpaired(a));
	if (cli_reader_report(r, nbad) && !status)	/* losses, skips: trawl(1) */
		status = 1;
out:
	trawl_agg_free(a);
	trawl_reader_free(r);
	trawl_sync_store_free(sync);
	free(hosts);
	free(live);
	return status;
}
