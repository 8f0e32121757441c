// SPDX-License-Identifier: MIT
/*
 * cli/cmd-export.c - `trawl export`: a session written for another viewer
 * (Perfetto's protobuf trace, chrome://tracing's JSON), clocks corrected
 * as `trawl print` corrects them, the messages `trawl sync` finds as
 * flows. Arguments and output only: the export is a sink of the library
 * (trawl/export.h, lib/export/).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trawl/export.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

static void export_usage(FILE *f)
{
	const char *name, *help;

	fprintf(f,
		"usage: trawl export [<options>] -o <file> <path>...\n"
		"\n"
		"Writes the events of the traces under each path (a session) for another\n"
		"viewer: one machine per host, the scheduler per CPU, user-space slices\n"
		"(EVENT_begin/EVENT_end, EVENT_entry/EVENT_exit) and instants, and the\n"
		"messages between hosts (those `trawl sync` finds) as flows, on the\n"
		"synchronized clock (the session's sync.txt, as `trawl print` applies it).\n"
		"\n"
		"  -f, --format <name>    the format (default: perfetto):\n");
	for (size_t i = 0; (name = trawl_export_format_name(i, &help)); i++)
		fprintf(f, "                         %-12s %s\n", name, help);
	fprintf(f,
		"  -o, --output <file>    the file written (replaced once complete; a device,\n"
		"                         a FIFO or - written in place; a symlink refused)\n"
		"  -H, --host <glob>      only traces whose env hostname matches (repeatable)\n"
		"  -b, --begin <time>     only events at or after <time>\n"
		"  -E, --end <time>       only events at or before <time>\n"
		"      --clock-gmt        dates of <time> in UTC (alias --gmt)\n"
		"  -m, --match <spec>     also tie application messages, spec\n"
		"                         'SEND_EVENT.FIELD = RECV_EVENT.FIELD' (repeatable)\n"
		"      --no-flows         do not look for messages\n"
		"      --fields           also write each user-space event's context and\n"
		"                         fields (the record's arguments; larger files)\n"
		"      --max-events <n>   write at most n records (0: no limit; default:\n"
		"                         1000000 for chrome-json, none for perfetto):\n"
		"                         chrome-json writes the first n and says so,\n"
		"                         perfetto writes nothing past n\n"
		"      --no-sync          raw clocks: do not apply the session's sync.txt\n"
		"      --sync <path>      apply this stored sync result (a sync.txt, or a\n"
		"                         directory holding one)\n"
		"      --progress         show progress on stderr even when it is not a\n"
		"                         terminal\n"
		"      --no-progress      never show progress (default: on a terminal)\n"
		"  -q, --quiet            no summary line\n"
		"  -h, --help             this help\n"
		"\n"
		CLI_TIME_HELP);
}

static void report_corrupt(void *arg, const char *msg)
{
	(*(int *)arg)++;
	cli_warn("%s", msg);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "host", required_argument, NULL, 'H' },
		{ "match", required_argument, NULL, 'm' },
		{ "no-flows", no_argument, NULL, 1 },
		{ "max-events", required_argument, NULL, 2 },
		{ "no-sync", no_argument, NULL, 3 },
		{ "sync", required_argument, NULL, 4 },
		{ "fields", no_argument, NULL, 5 },
		{ "begin", required_argument, NULL, 'b' },
		{ "end", required_argument, NULL, 'E' },
		CLI_GMT_OPTIONS(6),
		CLI_PROGRESS_OPTIONS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trawl_export_opts xo = { .sz = sizeof(xo) };
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct cli_time_range time = { 0 };
	struct trawl_sync_match *matches = NULL;
	size_t nmatches = 0;
	const char **hosts = NULL;
	size_t nhosts = 0;
	const char *sync_path = NULL;
	bool no_sync = false, no_flows = false;
	struct trawl_sync_store *sync = NULL;
	struct trawl_sync_points *points = NULL;
	struct trawl_reader *r = NULL;
	struct trawl_export *x = NULL;
	char err[1024];
	int c, status = 0, progress = 0, nbad = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:H:b:E:m:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': {
			const char *name;
			size_t i = 0;

			while ((name = trawl_export_format_name(i, NULL)) && strcmp(name, optarg))
				i++;
			if (!name)
				return cli_usage("--format: unknown format '%s' (perfetto, chrome-json)",
						 optarg);
			xo.format = optarg;
			break;
		}
		case 'o':
			xo.path = optarg;
			break;
		case 'H':
			if ((status = cli_arg_add(&hosts, &nhosts, optarg)))
				goto out;
			break;
		case 'b':
			time.begin_s = optarg;
			break;
		case 'E':
			time.end_s = optarg;
			break;
		case 6:
			time.gmt = true;
			break;
		case 'm':
			if ((status = cli_match_add(&matches, &nmatches, optarg)))
				goto out;
			break;
		case 1:
			no_flows = true;
			break;
		case 2: {
			char *end;

			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-') {
				status = cli_usage("--max-events: '%s' is not a number", optarg);
				goto out;
			}
			xo.max_events = v ? v : UINT64_MAX;
			break;
		}
		case 3:
			no_sync = true;
			break;
		case 4:
			sync_path = optarg;
			break;
		case 5:
			xo.fields = true;
			break;
		case CLI_OPT_PROGRESS:
		case CLI_OPT_NO_PROGRESS:
			progress = c;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			export_usage(stdout);
			goto out;
		default:
			status = cli_opt_error(c, argv);
			goto out;
		}
	}
	const char *const *paths = (const char *const *)argv + optind;
	size_t npaths = (size_t)(argc - optind);

	if (!npaths) {
		status = cli_usage("no trace path given");
		goto out;
	}
	if (!xo.path) {
		status = cli_usage("no output file given (-o FILE)");
		goto out;
	}
	if ((status = cli_time_range_parse(&time)))
		goto out;
	if (no_flows && nmatches) {
		status = cli_usage("--no-flows and --match exclude each other");
		goto out;
	}
	if (cli_trace_paths(paths, npaths)) {
		status = CLI_EXIT_FAILURE;
		goto out;
	}
	if ((status = cli_sync_use(sync_path, paths, npaths, no_sync, &ro, &sync)))
		goto out;
	if (!no_flows) {
		/* a first pass: the messages, as `trawl sync` finds them */
		struct trawl_sync_points_opts po = {
			.size = sizeof(po), .matches = matches, .nmatches = nmatches,
			.bad_trace = cli_report_bad_trace,	/* silent: the reader says it */
		};

		if (!(points = trawl_sync_points_read(paths, npaths, &po, err, sizeof(err)))) {
			status = cli_err("%s", err);
			goto out;
		}
	}
	ro.hosts = hosts;
	ro.nhosts = nhosts;
	if ((status = cli_time_range_apply(&time, paths, npaths, &ro)))
		goto out;
	struct cli_reader_opts co = { .hosts = hosts, .nhosts = nhosts, .nbad = &nbad };
	if (!(r = cli_open_reader(paths, npaths, &co, &ro, err, sizeof(err)))) {
		status = cli_err("%s", err);
		goto out;
	}
	xo.points = points;
	xo.fixes = ro.fixes;
	xo.nfixes = ro.nfixes;
	xo.matches = matches;
	xo.nmatches = nmatches;
	if (!(x = trawl_export_new(&xo, err, sizeof(err)))) {
		status = cli_err("%s", err);
		goto out;
	}
	/* the messages are in the export's own table now */
	trawl_sync_points_free(points);
	points = NULL;
	{
		struct cli_progress pg;
		struct trawl_sink sinks[2] = { trawl_export_sink(x), cli_progress_sink(&pg) };
		struct trawl_run_opts run = {
			.sz = sizeof(run), .error = report_corrupt, .arg = &nbad,
		};

		cli_progress_start(&pg, "trawl export", progress, CLI_PROGRESS_BYTES, 0);
		int rc = trawl_pipe_run(r, sinks, pg.on ? 2 : 1, &run);
		const struct trawl_export_stats *st = trawl_export_stats(x);

		if (rc == -EFBIG && st->truncated) {
			/* the help's promise: the first records, said so */
			cli_warn("%s: %" PRIu64 " records, the limit: the events after the first %"
				 PRIu64 " read are left out", xo.path, st->written, st->events);
			cli_hint("chrome://tracing fails beyond about a million records: --format "
				 "perfetto has no limit; --max-events 0 writes them all anyway");
			rc = 0;
		}
		if (rc == -EFBIG) {
			status = cli_err("%s: %s, not written", xo.path, trawl_export_error(x));
			cli_hint("raise --max-events, or 0 for no limit");
			goto out;
		}
		if (rc < 0) {
			status = cli_err("%s", *trawl_export_error(x) ? trawl_export_error(x)
								     : strerror(-rc));
			goto out;
		}
		if (cli_reader_report(r, nbad) || rc > 0)	/* losses, skips: trawl(1) */
			status = CLI_EXIT_FAILURE;	/* reported, the rest is written */
		cli_note("%s: %" PRIu64 " records from %" PRIu64 " events, %" PRIu64
			 " host%s, %" PRIu64 " context switches, %" PRIu64 " slices, %" PRIu64
			 " flows, %" PRIu64 " bytes", strcmp(xo.path, "-") ? xo.path : "standard output",
			 st->written, st->events, st->hosts, st->hosts == 1 ? "" : "s",
			 st->sched_switch, st->slices, st->flows, st->bytes);
	}
out:
	trawl_export_free(x);
	trawl_reader_free(r);
	trawl_sync_points_free(points);
	trawl_sync_store_free(sync);
	for (size_t i = 0; i < nmatches; i++)
		trawl_sync_match_release(&matches[i]);
	free(matches);
	free(hosts);
	return status;
}
