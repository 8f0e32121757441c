/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-view.c - trawl view: the session as a timeline in one HTML page
 * (lib/view, docs/view.md), or served on loopback.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <trawl/pipe.h>
#include <trawl/sync.h>
#include <trawl/view.h>

#include "cli.h"
#include "util/outfile.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trawl view SESSION... -o FILE [options]\n"
		"       trawl view --serve SESSION... [--port N] [options]\n"
		"\n"
		"Writes the session as a timeline in one self-contained HTML page (no\n"
		"network, no server): a row per host, its CPUs and threads, user-space\n"
		"events and begin/end slices, messages between hosts as arrows, raw or\n"
		"synchronized clocks (SESSION/sync.txt, from trawl sync).\n"
		"\n"
		"  -o, --output FILE      the page (refused above --max-size: use --serve)\n"
		"      --serve            serve the page and its tiles on 127.0.0.1 instead\n"
		"      --port N           the port to serve on (default 0: any free one)\n"
		"  -m, --match SPEC       also draw these messages: SEND.FIELD = RECV.FIELD\n"
		"      --no-sync          ignore SESSION/sync.txt (raw clocks only)\n"
		"      --sync FILE        the sync result to use (default: SESSION/sync.txt)\n"
		"      --title TEXT       the page's title\n"
		"  -b, --begin TIME       only events at or after TIME (on the raw clocks)\n"
		"  -E, --end TIME         only events at or before TIME\n"
		"      --clock-gmt        dates of TIME in UTC (alias --gmt)\n"
		"      --max-size BYTES   largest page written to a file (default 256M)\n"
		"      --progress, --no-progress\n"
		"  -q, --quiet            only errors\n"
		"  -h, --help             this help\n"
		"\n"
		CLI_TIME_HELP);
}

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void ready(void *arg, unsigned port)
{
	(void)arg;
	printf("trawl view: serving http://127.0.0.1:%u/ (Ctrl-C to stop)\n", port);
	cli_flush_stdout();
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M')
		v <<= 20, end++;
	else if (*end == 'G')
		v <<= 30, end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/* A size as people read it: "1000 bytes", "1.5 KiB", "256 MiB", "1.2 GiB" (one
 * decimal below 10 of the unit, none above; never "0 MiB" for a small one). */
static const char *size_text(uint64_t n, char *buf, size_t cap)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	size_t u = 0;

	if (n < 1024) {
		snprintf(buf, cap, "%" PRIu64 " byte%s", n, CLI_S(n));
		return buf;
	}
	for (v /= 1024; v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0]); u++)
		v /= 1024;
	if (v < 10 && v != (double)(uint64_t)v)
		snprintf(buf, cap, "%.1f %s", v, unit[u]);
	else
		snprintf(buf, cap, "%.0f %s", v, unit[u]);
	return buf;
}

int cmd_view(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "serve", no_argument, NULL, 1 },
		{ "port", required_argument, NULL, 2 },
		{ "match", required_argument, NULL, 'm' },
		{ "no-sync", no_argument, NULL, 3 },
		{ "sync", required_argument, NULL, 4 },
		{ "title", required_argument, NULL, 5 },
		{ "max-size", required_argument, NULL, 6 },
		{ "begin", required_argument, NULL, 'b' },
		{ "end", required_argument, NULL, 'E' },
		CLI_GMT_OPTIONS(7),
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		CLI_PROGRESS_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *sync_path = NULL, *title = NULL;
	bool serve = false, no_sync = false;
	unsigned port = 0;
	uint64_t max_size = TRAWL_VIEW_MAX_HTML;
	struct trawl_sync_match *matches = NULL;
	size_t nmatches = 0;
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct cli_time_range time = { 0 };
	struct trawl_sync_store *store = NULL;
	struct trawl_reader *r = NULL;
	struct trawl_view *v = NULL;
	struct trawl_sync_finder *finder = NULL;
	struct trawl_sync_points *points = NULL;
	struct cli_progress pg = { 0 };
	char err[1024];
	struct tr_outfile of = { .fd = -1 };
	int c, status = CLI_EXIT_FAILURE, progress = 0, nbad = 0, damaged = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:m:b:E:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 1:
			serve = true;
			break;
		case 2: {
			char *end;
			unsigned long p = strtoul(optarg, &end, 10);

			if (*end || !*optarg || p > 65535) {
				status = cli_usage("--port: '%s' is not a port", optarg);
				goto out;
			}
			port = (unsigned)p;
			break;
		}
		case 'm':
			if ((status = cli_match_add(&matches, &nmatches, optarg)))
				goto out;
			break;
		case 3:
			no_sync = true;
			break;
		case 4:
			sync_path = optarg;
			break;
		case 5:
			title = optarg;
			break;
		case 'b':
			time.begin_s = optarg;
			break;
		case 'E':
			time.end_s = optarg;
			break;
		case 7:
			time.gmt = true;
			break;
		case 6:
			if (parse_size(optarg, &max_size)) {
				status = cli_usage("--max-size: '%s' is not a size", optarg);
				goto out;
			}
			break;
		case CLI_OPT_PROGRESS:
		case CLI_OPT_NO_PROGRESS:
			progress = c;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		default:
			status = cli_opt_error(c, argv);
			goto out;
		}
	}
	if (optind >= argc) {
		status = cli_usage("no session given");
		goto out;
	}
	if (!output == !serve) {
		status = cli_usage(serve ? "--serve and -o exclude each other"
					 : "where to: -o FILE, or --serve");
		goto out;
	}
	const char *const *paths = (const char *const *)argv + optind;
	size_t npaths = (size_t)(argc - optind);

	if ((status = cli_time_range_parse(&time)))
		goto out;
	status = CLI_EXIT_FAILURE;
	if (cli_trace_paths(paths, npaths))
		goto out;
	{
		/* the corrections go to the page, not to the reader: the page
		 * shows raw and synchronized clocks both */
		struct trawl_reader_opts dummy = { .sz = sizeof(dummy) };
		int rc = cli_sync_use(sync_path, paths, npaths, no_sync, &dummy, &store);

		if (rc) {
			status = rc;
			goto out;
		}
	}
	if ((status = cli_time_range_apply(&time, paths, npaths, &ro)))
		goto out;
	status = CLI_EXIT_FAILURE;
	struct cli_reader_opts co = { .nbad = &nbad };
	if (!(r = cli_open_reader(paths, npaths, &co, &ro, err, sizeof(err)))) {
		cli_err("%s", err);
		goto out;
	}
	struct trawl_view_opts vo = { .sz = sizeof(vo), .title = title };

	if (!(v = trawl_view_new(&vo, err, sizeof(err)))) {
		cli_err("%s", err);
		goto out;
	}
	struct trawl_sync_points_opts fo = { .size = sizeof(fo), .matches = matches,
					     .nmatches = nmatches };

	if (!(finder = trawl_sync_finder_new(&fo, err, sizeof(err)))) {
		cli_err("%s", err);
		goto out;
	}
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	{
		struct trawl_sink sinks[3] = { trawl_view_sink(v), trawl_sync_finder_sink(finder),
					       cli_progress_sink(&pg) };
		struct trawl_run_opts run = { .sz = sizeof(run) };
		int rc;

		cli_progress_start(&pg, "trawl view", progress, CLI_PROGRESS_BYTES, 0);
		rc = trawl_pipe_run(r, sinks, pg.on ? 3 : 2, &run);
		cli_progress_end(&pg, rc >= 0);
		if (rc < 0) {
			cli_err("%s", strerror(-rc));
			goto out;
		}
		damaged = cli_reader_report(r, nbad);	/* losses, skips: trawl(1) */
		if (rc > 0)
			damaged = CLI_EXIT_FAILURE;
	}
	if (!(points = trawl_sync_finder_points(finder, err, sizeof(err)))) {
		cli_err("%s", err);
		goto out;
	}
	if (trawl_view_set_messages(v, points) || trawl_view_set_sync(v, store)) {
		cli_err("out of memory");
		goto out;
	}
	if (trawl_view_build(v, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	struct trawl_view_stats st;
	uint64_t size = trawl_view_html_size(v);

	trawl_view_stats(v, &st);
	if (st.impossible)
		cli_warn("%" PRIu64 " event%s or arrow%s left out of the timeline: 2^63 ns or more "
			 "after its first event (impossible: a corrupt timestamp or clock offset)",
			 st.impossible, CLI_S(st.impossible), CLI_S(st.impossible));
	if (serve) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (trawl_view_serve(v, port, &stop, ready, NULL, err, sizeof(err))) {
			cli_err("%s", err);
			goto out;
		}
		status = damaged;
		goto out;
	}
	if (size > max_size) {
		char a[32], b[32];
		cli_err("%s: the page would be %s, above --max-size %s (a browser holds it whole "
			"in memory)", output, size_text(size, a, sizeof(a)),
			size_text(max_size, b, sizeof(b)));
		cli_hint("serve it instead: trawl view --serve %s", paths[0]);
		goto out;
	}
	/* a device, a FIFO or "-" in place; a regular file replaced once
	 * complete; a symbolic link refused (util/outfile.h) */
	if (tr_outfile_open(&of, output, TR_OUTFILE_DASH, 0644, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	if (trawl_view_write_html(v, of.fd, err, sizeof(err))) {
		cli_err("%s: %s", output, err);
		goto out;
	}
	if (tr_outfile_commit(&of, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (cli_verbosity >= 0)
		fprintf(of.is_stdout ? stderr : stdout, "trawl view: %s: %" PRIu64 " event%s, %zu host%s, %zu row%s, %" PRIu64
		       " message%s, %" PRIu64 " bytes (%.2f per event), %.2f s\n",
		       output, st.events, CLI_S(st.events), st.hosts, CLI_S(st.hosts), st.rows,
		       CLI_S(st.rows), st.messages, CLI_S(st.messages), size,
		       st.events ? (double)size / (double)st.events : 0.0,
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	status = damaged;
out:
	tr_outfile_release(&of);
	trawl_sync_points_free(points);
	trawl_sync_finder_free(finder);
	trawl_view_free(v);
	trawl_reader_free(r);
	trawl_sync_store_free(store);
	for (size_t i = 0; i < nmatches; i++)
		trawl_sync_match_release(&matches[i]);
	free(matches);
	return status;
}
