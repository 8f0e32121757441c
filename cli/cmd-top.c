/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-top.c - trawl top [options] SOURCE: the cluster's processes,
 * scheduling latency, I/O, IRQs and syscalls per interval (lib/top,
 * trawl/top.h) over a session directory (replayed at trace time) or a
 * live relay session (net://RELAY[:PORT]/session/S). -b prints snapshots
 * as text tables or JSON lines; without it, the full-screen display
 * (cli/top-tui.c, ncurses).
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trawl/pipe.h>
#include <trawl/sync.h>
#include <trawl/top.h>

#include "util/escape.h"
#include "cli.h"
#include "top-tui.h"
#include "util/json.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trawl top [options] SOURCE\n"
		"\n"
		"The processes of every host of a session, per interval of trace time:\n"
		"CPU, scheduling latency, I/O, IRQs, syscalls (the analyses of trawl\n"
		"analyze, all at once), full screen or in batches. SOURCE: a session\n"
		"directory (replayed at trace time) or a live relay session,\n"
		"net://RELAY[:PORT]/session/SESSION (or .../host/HOST/SESSION).\n"
		"\n"
		"  -b, --batch          print snapshots (text tables, or --json), no screen\n"
		"  -n, --iterations N   -b: N snapshots (intervals), then stop; 0: all (the\n"
		"                       default on a session directory; live: until it ends)\n"
		"  -d, --delay S        the interval, seconds of trace time (default 1,\n"
		"                       0.25 at least); full screen: also the refresh\n"
		"      --json           -b: one JSON object per line: each host's header\n"
		"                       (\"type\": \"host\") and each row (\"type\": \"row\")\n"
		"      --view V         cpu (default), sched, io, irq or syscalls\n"
		"      --host GLOB      hosts (env.hostname) shown\n"
		"      --comm GLOB      only threads of this name count (their CPU time,\n"
		"                       latencies, I/O, syscalls)\n"
		"      --group[=BY]     rows summed across hosts (host *) by process name\n"
		"                       (BY name, the default) or by cgroup (BY cgroup:\n"
		"                       processes and threads; the other views by name)\n"
		"      --threads        a row per thread, not per process (cpu, sched)\n"
		"      --sort COL       the view's column to sort by (default its first)\n"
		"      --limit N        -b: the N first rows of each snapshot (default all)\n"
		"      --wait S         a live session not there yet: wait at most S seconds\n"
		"      --from-now       live: from the session's next packet\n"
		"      --no-sync        ignore the session's stored clock corrections\n"
		"                       (live: nor correct them from its messages)\n"
		"  -h, --help           this help\n"
		"\n"
		"Full-screen keys: 1-5 views (cpu, sched, io, irq, syscalls), t threads,\n"
		"< > sort column, / filter by name, g group across hosts, c by cgroup, p pause,\n"
		"left/right one interval back/forward, up/down select, Enter drill down\n"
		"(host, process, threads, longest samples), Backspace up, q quit.\n");
}

static volatile int stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

struct batch {
	struct trawl_top_query q;
	bool json;
	uint64_t want, printed;
	int err;
	struct json j;
};

static void fmt_col(char *buf, size_t cap, enum trawl_top_column c, double v)
{
	switch (c) {
	case TRAWL_TOP_COL_CPU_PCT: snprintf(buf, cap, "%.2f", v); break;
	case TRAWL_TOP_COL_SUM:
	case TRAWL_TOP_COL_AVG:
	case TRAWL_TOP_COL_MAX: snprintf(buf, cap, "%.3f", v / 1e3); break;	/* us */
	default: snprintf(buf, cap, "%.0f", v); break;
	}
}

/* A table header's name of column c (times in us). */
const char *cli_top_col_title(enum trawl_top_column c)
{
	static const char *const t[TRAWL_TOP_NCOLS] = {
		"CPU%", "COUNT", "ERRORS", "SUM_us", "AVG_us", "MAX_us", "READ", "WRITE", "THREADS",
	};
	return (unsigned)c < TRAWL_TOP_NCOLS ? t[c] : "?";
}

static void print_json(struct batch *b, struct trawl_top *t, size_t si, const struct trawl_top_row *rows,
		       size_t n, enum trawl_top_column *cols, size_t ncols)
{
	struct json *j = &b->j;
	int64_t begin, end;
	trawl_top_slice_range(t, si, &begin, &end);
	uint64_t idx = trawl_top_dropped(t) + si;
	for (size_t h = 0; h < trawl_top_nhosts(t, si); h++) {
		const struct trawl_top_host *ho = trawl_top_host_at(t, si, h);
		if (b->q.host && fnmatch(b->q.host, ho->name, 0))
			continue;
		tr_json_clear(j);
		tr_json_obj(j);
		tr_json_kv_str(j, "type", "host");
		tr_json_kv_u64(j, "interval", idx);
		tr_json_kv_i64(j, "begin", begin);
		tr_json_kv_i64(j, "end", end);
		tr_json_kv_str(j, "host", ho->name);
		tr_json_key(j, "newest");
		if (ho->newest == INT64_MIN)
			tr_json_null(j);
		else
			tr_json_i64(j, ho->newest);
		tr_json_key(j, "age_ns");
		if (ho->age_ns < 0)
			tr_json_null(j);
		else
			tr_json_i64(j, ho->age_ns);
		tr_json_key(j, "down");
		tr_json_bool(j, ho->down);
		tr_json_kv_u64(j, "events", ho->events);
		tr_json_key(j, "events_per_s");
		tr_json_fixed(j, ho->events_per_s, 1);
		tr_json_kv_u64(j, "discarded", ho->discarded);
		tr_json_kv_u64(j, "discarded_total", ho->discarded_total);
		tr_json_kv_u64(j, "unseen_switches", ho->unseen_switches);
		/* live: its clock as corrected now (trawl-top(1), CLOCKS) */
		struct trawl_sync_live_node cn;
		int ck = cli_live_clock(ho->name, &cn);
		tr_json_key(j, "clock");
		if (ck < 0) {
			tr_json_null(j);
		} else {
			bool syn = ck && cn.quality != TRAWL_SYNC_ABSENT;
			tr_json_obj(j);
			tr_json_kv_str(j, "quality", !syn ? "unsynchronized" : cn.is_ref ? "reference"
							 : trawl_sync_quality_name(cn.quality));
			tr_json_kv_str(j, "reference", syn ? cn.reference : "");
			tr_json_key(j, "offset_ns");
			if (syn)
				tr_json_i64(j, cn.offset_ns);
			else
				tr_json_null(j);
			tr_json_key(j, "bound_ns");
			if (syn && cn.bound_ns != TRAWL_SYNC_UNBOUNDED)
				tr_json_i64(j, cn.bound_ns);
			else
				tr_json_null(j);
			tr_json_obj_end(j);
		}
		tr_json_key(j, "cpu_pct");
		tr_json_fixed(j, ho->cpu_pct, 2);
		tr_json_kv_u64(j, "cpus", ho->ncpus);
		tr_json_obj_end(j);
		tr_json_char(j, '\n');
		if (tr_json_flush(j, stdout) < 0 && !b->err)
			b->err = -EIO;
	}
	for (size_t i = 0; i < n; i++) {
		const struct trawl_top_row *r = &rows[i];
		tr_json_clear(j);
		tr_json_obj(j);
		tr_json_kv_str(j, "type", "row");
		tr_json_kv_str(j, "view", trawl_top_view_name(b->q.view));
		tr_json_kv_u64(j, "interval", idx);
		tr_json_kv_i64(j, "begin", begin);
		tr_json_kv_i64(j, "end", end);
		tr_json_kv_str(j, "host", r->host);
		if (b->q.group)
			tr_json_kv_u64(j, "hosts", r->nhosts);
		tr_json_kv_str(j, "kind", r->kind);
		tr_json_key(j, "pid");
		if (r->pid < 0)
			tr_json_null(j);
		else
			tr_json_i64(j, r->pid);
		tr_json_key(j, "tid");
		if (r->tid < 0)
			tr_json_null(j);
		else
			tr_json_i64(j, r->tid);
		bool task = !strcmp(r->kind, "process") || !strcmp(r->kind, "thread");
		tr_json_kv_str(j, task && !(b->q.group && b->q.by_cgroup) ? "comm" : "name",
			       r->name);
		if (task) {
			tr_json_key(j, "cgroup");
			if (r->cgroup)
				tr_json_str(j, r->cgroup);
			else
				tr_json_null(j);
		}
		for (size_t c = 0; c < ncols; c++) {
			tr_json_key(j, trawl_top_column_name(cols[c]));
			if (cols[c] == TRAWL_TOP_COL_CPU_PCT)
				tr_json_fixed(j, r->v[cols[c]], 3);
			else
				tr_json_u64(j, (uint64_t)(r->v[cols[c]] + 0.5));
		}
		tr_json_obj_end(j);
		tr_json_char(j, '\n');
		if (tr_json_flush(j, stdout) < 0 && !b->err)
			b->err = -EIO;
	}
	if ((tr_json_flush(j, stdout) < 0 || cli_flush_stdout()) && !b->err)
		b->err = -EIO;
}

static void print_text(struct batch *b, struct trawl_top *t, size_t si,
		       const struct trawl_top_row *rows, size_t n, enum trawl_top_column *cols,
		       size_t ncols)
{
	int64_t begin, end;
	trawl_top_slice_range(t, si, &begin, &end);
	printf("-- %s [%" PRId64 ".%09" PRId64 ", %" PRId64 ".%09" PRId64 ") interval %" PRIu64 "\n",
	       trawl_top_view_name(b->q.view), begin / 1000000000, begin % 1000000000,
	       end / 1000000000, end % 1000000000, trawl_top_dropped(t) + si);
	printf("%-16s %10s %12s %10s %10s %8s  %s\n", "HOST", "AGE_s", "EVENTS/s", "DISCARDED",
	       "CPU%", "CPUS", "CLOCK");
	for (size_t h = 0; h < trawl_top_nhosts(t, si); h++) {
		const struct trawl_top_host *ho = trawl_top_host_at(t, si, h);
		if (b->q.host && fnmatch(b->q.host, ho->name, 0))
			continue;
		char age[32] = "-";
		if (ho->age_ns >= 0)
			snprintf(age, sizeof(age), "%.3f", (double)ho->age_ns / 1e9);
		if (ho->down)
			snprintf(age + strlen(age), sizeof(age) - strlen(age), " DOWN");
		char hn[4 * 64 + 1];	/* a node's name, escaped: it came from the node */
		tr_escape(hn, sizeof(hn), ho->name, false);
		char ck[64];
		printf("%-16s %10s %12.1f %10" PRIu64 " %10.2f %8u  %s\n", hn, age, ho->events_per_s,
		       ho->discarded, ho->cpu_pct, ho->ncpus, cli_clock_text(ho->name, ck, sizeof(ck)));
	}
	printf("%-16s %-8s %8s %8s %-24s", "HOST", "KIND", "PID", "TID", "NAME");
	for (size_t c = 0; c < ncols; c++)
		printf(" %12s", cli_top_col_title(cols[c]));
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		const struct trawl_top_row *r = &rows[i];
		char pid[24] = "-", tid[24] = "-";
		if (r->pid >= 0)
			snprintf(pid, sizeof(pid), "%" PRId64, r->pid);
		if (r->tid >= 0)
			snprintf(tid, sizeof(tid), "%" PRId64, r->tid);
		/* the host's and the thread's names came from the nodes (a
		 * comm is whatever a process set): escaped, as peers' strings */
		char hn[4 * 64 + 1], nm[4 * 64 + 1];
		tr_escape(hn, sizeof(hn), r->host, false);
		tr_escape(nm, sizeof(nm), r->name, false);
		printf("%-16s %-8s %8s %8s %-24s", hn, r->kind, pid, tid, nm);
		for (size_t c = 0; c < ncols; c++) {
			char v[32];
			fmt_col(v, sizeof(v), cols[c], r->v[cols[c]]);
			printf(" %12s", v);
		}
		printf("\n");
	}
	printf("\n");
	if (cli_flush_stdout() && !b->err)
		b->err = -EIO;
}

static void on_slice(void *arg, struct trawl_top *t)
{
	struct batch *b = arg;
	if (b->err || (b->want && b->printed >= b->want))
		return;
	size_t si = trawl_top_nslices(t) - 1;
	struct trawl_top_query q = b->q;
	q.slice = si;
	struct trawl_top_row *rows;
	size_t n;
	int r = trawl_top_query(t, &q, &rows, &n);
	if (r < 0) {
		b->err = r;
		return;
	}
	enum trawl_top_column cols[TRAWL_TOP_NCOLS];
	size_t ncols = trawl_top_view_columns(q.view, cols);
	if (b->json)
		print_json(b, t, si, rows, n, cols, ncols);
	else
		print_text(b, t, si, rows, n, cols, ncols);
	free(rows);
	if (++b->printed >= b->want && b->want)
		stop = 1;
}

static void report_error(void *arg, const char *msg)
{
	(void)arg;
	cli_err("%s", msg);
}

/* -d: seconds, decimals allowed, 0.25 at least */
static int64_t parse_delay(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= 0.25) || v > 86400)
		return -1;
	return (int64_t)(v * 1e9 + 0.5);
}

int cmd_top(int argc, char **argv)
{
	enum { O_JSON = 256, O_VIEW, O_HOST, O_COMM, O_GROUP, O_THREADS, O_SORT, O_LIMIT, O_NOSYNC };
	static const struct option longopts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "delay", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, O_JSON },
		{ "view", required_argument, NULL, O_VIEW },
		{ "host", required_argument, NULL, O_HOST },
		{ "comm", required_argument, NULL, O_COMM },
		{ "group", optional_argument, NULL, O_GROUP },
		{ "threads", no_argument, NULL, O_THREADS },
		{ "sort", required_argument, NULL, O_SORT },
		{ "limit", required_argument, NULL, O_LIMIT },
		{ "no-sync", no_argument, NULL, O_NOSYNC },
		CLI_LIVE_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct batch b = { .q = { .sz = sizeof(b.q), .sort = TRAWL_TOP_NCOLS } };
	struct trawl_top_opts to = { .sz = sizeof(to), .interval_ns = 1000000000 };
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	bool batch = false, no_sync = false, from_now = false;
	const char *sort = NULL, *hostglob = NULL;
	long wait_ms = CLI_WAIT_FOREVER;
	int c, status = CLI_EXIT_FAILURE, nbad = 0;
	char err[512] = "", *end;
	struct trawl_sync_store *sync = NULL;
	struct trawl_top *t = NULL;
	struct trawl_reader *r = NULL;
	struct cli_top_tui *tui = NULL;

	tr_json_init(&b.j);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hbn:d:", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': batch = true; break;
		case 'n':
			b.want = strtoull(optarg, &end, 10);
			if (*end || optarg[0] == '-' || !optarg[0]) {
				status = cli_usage("-n: not a count: '%s'", optarg);
				goto out;
			}
			break;
		case 'd':
			if ((to.interval_ns = parse_delay(optarg)) < 0) {
				status = cli_usage("-d: not a delay of 0.25 s or more: '%s'", optarg);
				goto out;
			}
			break;
		case O_JSON: b.json = true; break;
		case O_VIEW: {
			enum trawl_top_view v;
			for (v = 0; v < TRAWL_TOP_NVIEWS && strcmp(optarg, trawl_top_view_name(v)); v++)
				;
			if (v == TRAWL_TOP_NVIEWS) {
				status = cli_usage("--view: one of cpu, sched, io, irq, syscalls: '%s'",
						   optarg);
				goto out;
			}
			b.q.view = v;
			break;
		}
		case O_HOST: hostglob = optarg; break;
		case O_COMM: to.comm = optarg; b.q.comm = optarg; break;
		case O_GROUP:
			b.q.group = true;
			if (optarg && !strcmp(optarg, "cgroup"))
				b.q.by_cgroup = true;
			else if (optarg && strcmp(optarg, "name"))
				return cli_usage("--group: '%s' is neither name nor cgroup", optarg);
			break;
		case O_THREADS: b.q.threads = true; break;
		case O_SORT: sort = optarg; break;
		case O_LIMIT:
			b.q.limit = strtoull(optarg, &end, 10);
			if (*end || optarg[0] == '-' || !optarg[0]) {
				status = cli_usage("--limit: not a count: '%s'", optarg);
				goto out;
			}
			break;
		case O_NOSYNC: no_sync = true; break;
		case CLI_OPT_WAIT:
			if ((status = cli_wait_arg(optarg, &wait_ms)))
				goto out;
			break;
		case CLI_OPT_FROM_NOW: from_now = true; break;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		default:
			status = cli_opt_error(c, argv);
			goto out;
		}
	}
	b.q.host = hostglob;
	if (sort) {
		enum trawl_top_column cols[TRAWL_TOP_NCOLS];
		size_t n = trawl_top_view_columns(b.q.view, cols), i;
		for (i = 0; i < n && strcmp(sort, trawl_top_column_name(cols[i])); i++)
			;
		if (i == n) {
			char list[256] = "";
			for (i = 0; i < n; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 i ? ", " : "", trawl_top_column_name(cols[i]));
			status = cli_usage("--sort: the %s view's columns are %s: '%s'",
					   trawl_top_view_name(b.q.view), list, sort);
			goto out;
		}
		b.q.sort = cols[i];
	}
	if (argc - optind != 1) {
		status = cli_usage(argc == optind ? "no source: a session directory or a live "
						    "session (net://RELAY/session/S)"
						  : "one source only");
		goto out;
	}
	const char *src = argv[optind];
	bool live = !strncmp(src, "net://", 6);
	if (!batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		status = cli_usage("not a terminal: use -b for batch output (-b -n N, --json)");
		goto out;
	}
	if (!batch && (b.json || b.want || b.q.limit)) {
		status = cli_usage("--json, -n and --limit are for batch output (-b)");
		goto out;
	}
	if (live && (status = cli_live_check(src)))
		goto out;
	if (!live) {
		struct stat st;
		if (stat(src, &st)) {
			status = cli_err("%s: %s", src, errno == ENOENT ? "no such session directory "
					 "(nor a live session net://RELAY/session/S)" : strerror(errno));
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			status = cli_err("%s: not a session directory (nor a live session "
					 "net://RELAY/session/S)", src);
			goto out;
		}
		/* a --host matching none of the session's hosts: the hosts,
		 * the near name, exit 2, as every reading command says it */
		const char *hg[1] = { hostglob };
		if ((status = cli_filters_check(&src, 1, hostglob ? hg : NULL, hostglob ? 1 : 0,
						NULL, 0, -1)))
			goto out;
		status = CLI_EXIT_FAILURE;
		if (cli_sync_load(&src, 1, no_sync, &ro, &sync))
			goto out;
	}
	to.live = live;
	if (batch) {
		to.slice = on_slice;
		to.arg = &b;
	} else {
		if (!(tui = cli_top_tui_new(&b.q, to.interval_ns, live))) {
			status = cli_err("cannot start the full-screen display");
			goto out;
		}
		to.slice = cli_top_tui_slice;
		to.idle = cli_top_tui_idle;
		to.arg = tui;
	}
	if (!(t = trawl_top_new(&to, err, sizeof(err)))) {
		status = cli_err("%s", err);
		goto out;
	}
	const char *lv[1] = { src };
	const char *hosts[1] = { hostglob };
	struct cli_reader_opts co = {
		.hosts = hostglob ? hosts : NULL, .nhosts = hostglob ? 1 : 0,
		.live = live ? lv : NULL, .nlive = live ? 1 : 0, .nbad = &nbad,
		.wait_ms = wait_ms, .from_now = from_now, .live_sync = !no_sync,
		.lazy = true,	/* a screen a second (-d): the live timer is soon enough */
	};
	if (!(r = cli_open_reader(live ? NULL : &src, live ? 0 : 1, &co, &ro, err, sizeof(err)))) {
		cli_top_tui_free(tui);
		tui = NULL;
		status = cli_err("%s", err);
		goto out;
	}
	if (!live && !trawl_reader_ntraces(r)) {
		cli_top_tui_free(tui);
		tui = NULL;
		status = cli_err("%s: no trace in it: not a session directory", src);
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (tui)
		cli_top_tui_start(tui, &stop);
	struct trawl_sink sink = trawl_top_sink(t);
	struct trawl_run_opts run = { .sz = sizeof(run), .error = tui ? NULL : report_error,
				      .stop = &stop };
	int rc = trawl_pipe_run(r, &sink, 1, &run);
	if (tui) {
		if (rc >= 0 && !stop)
			cli_top_tui_end(tui, t);	/* the replay's end: browse until q */
		cli_top_tui_free(tui);
		tui = NULL;
		if (rc == -ECANCELED)
			rc = 0;	/* q */
	}
	if (rc < 0) {
		status = cli_err("%s", strerror(-rc));
		goto out;
	}
	if (b.err) {
		status = b.err == -EPIPE ? 0 : cli_err("writing the snapshots: %s", strerror(-b.err));
		goto out;
	}
	status = rc > 0 ? CLI_EXIT_FAILURE : 0;
	size_t ns = trawl_top_nslices(t);
	for (size_t h = 0; ns && h < trawl_top_nhosts(t, ns - 1); h++) {
		const struct trawl_top_host *ho = trawl_top_host_at(t, ns - 1, h);
		if (ho && ho->unseen_switches) {
			char hn[4 * 64 + 1];
			tr_escape(hn, sizeof(hn), ho->name, false);
			cli_warn("%s: %" PRIu64 " switch%s onto a CPU not in its trace: the kernel "
				 "did not record them, or they were lost; the time on a CPU counts "
				 "from the thread's wake-up there (trawl-top(1))", hn,
				 ho->unseen_switches, ho->unseen_switches == 1 ? "" : "es");
		}
	}
	if (cli_reader_report(r, nbad))
		status = CLI_EXIT_FAILURE;
out:
	cli_top_tui_free(tui);
	trawl_top_free(t);
	trawl_reader_free(r);
	trawl_sync_store_free(sync);
	tr_json_release(&b.j);
	return status;
}
