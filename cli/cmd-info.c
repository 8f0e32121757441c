/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-info.c - `trawl info`: decodes every event of the traces under the
 * given paths and summarizes them per host and per trace: domain, tracer,
 * clock, streams (file, cpu, packets, events, discarded, bytes), event
 * counts per class, time range; then the totals and the decode rate.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "internal.h"	/* tr_uuid_format */
#include "util/json.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

static void info_usage(FILE *f)
{
	fprintf(f,
		"usage: trawl info [<options>] <path>...\n"
		"\n"
		"Decodes every event of the CTF traces found under each path and prints,\n"
		"per host and per trace: domain, tracer, clock, streams, event counts per\n"
		"class and time range; then the totals. The decode rate goes to stderr.\n"
		"\n"
		"  -H, --host <glob>   only traces whose env hostname matches (repeatable)\n"
		"      --json          one JSON object on stdout instead of text\n"
		"      --clock-gmt     print dates in UTC instead of local time (alias --gmt)\n"
		"      --no-sync       raw clocks: do not apply the session's sync.txt\n"
		"      --threads <n>   1: decode and merge in one thread; 2: decode ahead\n"
		"                      in a second thread (default: 2 on 2+ CPUs and\n"
		"                      more than a few MiB of traces)\n"
		"      --progress      show progress on stderr even when it is not a terminal\n"
		"      --no-progress   never show progress (default: on a terminal)\n"
		"  -h, --help          this help\n");
}

/* Per event class counts (the reader numbers the classes densely). */
struct cls_count {
	const struct trawl_ctf_event_class *cls;
	const struct trawl_reader_trace *trace;
	uint64_t n;
};

static int by_count(const void *a, const void *b)
{
	const struct cls_count *x = *(const struct cls_count *const *)a;
	const struct cls_count *y = *(const struct cls_count *const *)b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->cls->name ? x->cls->name : "", y->cls->name ? y->cls->name : "");
}

/* Per trace totals. */
struct trace_sum {
	const struct trawl_reader_trace *t;
	uint64_t events, discarded, packets, bytes;
	int64_t first, last;
	size_t nstreams;
};

static int by_host(const void *a, const void *b)
{
	const struct trace_sum *x = a, *y = b;
	int c = strcmp(trawl_reader_trace_hostname(x->t), trawl_reader_trace_hostname(y->t));

	return c ? c : strcmp(trawl_reader_trace_path(x->t), trawl_reader_trace_path(y->t));
}

static bool gmt;

/* "2023-11-14 22:13:20.000001000" (local time unless --clock-gmt) */
static const char *date(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000);
	int64_t frac = ns % 1000000000;
	struct tm tm;
	size_t n;

	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	if (!(gmt ? gmtime_r(&s, &tm) : localtime_r(&s, &tm)))
		return "?";
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%09" PRId64, frac);
	return buf;
}

static const char *env_str(const struct trawl_ctf_trace *m, const char *key, char *buf, size_t len)
{
	const struct trawl_ctf_env *e = m ? trawl_ctf_trace_env(m, key) : NULL;

	if (!e)
		return "";
	if (e->is_int) {
		snprintf(buf, len, "%" PRId64, e->ival);
		return buf;
	}
	return e->sval ? e->sval : "";
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "used": a valid index was used; "ignored": present but bad; "none" */
static const char *index_state(const struct trawl_reader_stream_stats *st)
{
	return st->index_bad ? "ignored" : st->index_used ? "used" : "none";
}

/* "S.NNNNNNNNN s" from first to last, in unsigned arithmetic (corrupt
 * times can be the whole int64 range apart); what is wrong with them when
 * they cannot be: time going backwards, an event dated before 1970. */
static void print_duration(int64_t first, int64_t last)
{
	bool back = last < first;
	uint64_t d = back ? (uint64_t)first - (uint64_t)last : (uint64_t)last - (uint64_t)first;

	if (back)
		printf("impossible: the last event %" PRIu64 ".%09" PRIu64 " s before the first",
		       d / 1000000000, d % 1000000000);
	else
		printf("%" PRIu64 ".%09" PRIu64 " s", d / 1000000000, d % 1000000000);
	if (first < 0 || last < 0)
		printf("%sevents dated before 1970: a corrupt timestamp or clock offset",
		       back ? "; " : ", impossible: ");
}

static void text_trace(const struct trace_sum *ts, struct cls_count **cls, size_t ncls)
{
	const struct trawl_ctf_trace *m = trawl_reader_trace_meta(ts->t);
	char b1[64], b2[64], b3[64];

	printf("  trace %s\n", trawl_reader_trace_path(ts->t));
	printf("    domain      %s\n", env_str(m, "domain", b1, sizeof(b1))[0] ?
	       env_str(m, "domain", b1, sizeof(b1)) : "-");
	printf("    tracer      %s %s.%s\n", env_str(m, "tracer_name", b1, sizeof(b1)),
	       env_str(m, "tracer_major", b2, sizeof(b2)),
	       env_str(m, "tracer_minor", b3, sizeof(b3)));
	for (size_t i = 0; m && i < m->nclocks; i++) {
		const struct trawl_ctf_clock *ck = &m->clocks[i];
		char u[37] = "-";

		if (ck->has_uuid)
			tr_uuid_format(ck->uuid, u);
		printf("    clock       %s, %" PRIu64 " Hz, offset %" PRId64 " s + %" PRId64
		       " cycles, uuid %s%s\n", ck->name, ck->freq, ck->offset_s, ck->offset, u,
		       ck->absolute ? ", absolute" : "");
	}
	if (ts->events) {
		printf("    first       %s  (%" PRId64 " ns)\n", date(ts->first, b1, sizeof(b1)),
		       ts->first);
		printf("    last        %s  (%" PRId64 " ns)\n", date(ts->last, b1, sizeof(b1)),
		       ts->last);
		printf("    duration    ");
		print_duration(ts->first, ts->last);
		putchar('\n');
	}
	printf("    events      %" PRIu64 ", discarded %" PRIu64 ", packets %" PRIu64
	       ", bytes %" PRIu64 "\n", ts->events, ts->discarded, ts->packets, ts->bytes);
	printf("    streams     %-24s %5s %9s %12s %10s %12s  %s\n", "file", "cpu", "packets",
	       "events", "discarded", "bytes", "index");
	for (size_t i = 0; i < trawl_reader_trace_nstreams(ts->t); i++) {
		const struct trawl_reader_stream *s = trawl_reader_trace_stream(ts->t, i);
		struct trawl_reader_stream_stats st;

		trawl_reader_stream_stats(s, &st);
		printf("                %-24s %5" PRIu32 " %9" PRIu64 " %12" PRIu64 " %10" PRIu64
		       " %12" PRIu64 "  %s\n", base(trawl_reader_stream_path(s)), st.cpu, st.packets,
		       st.events, st.discarded, st.bytes, index_state(&st));
		if (st.index_warning)
			printf("                  warning: %s\n", st.index_warning);
	}
	printf("    event classes %12s  %s\n", "count", "name");
	for (size_t i = 0; i < ncls; i++)
		if (cls[i]->trace == ts->t)
			printf("                  %12" PRIu64 "  %s\n", cls[i]->n,
			       cls[i]->cls->name ? cls[i]->cls->name : "<unknown>");
}

static void json_trace(struct json *j, const struct trace_sum *ts, struct cls_count **cls,
		       size_t ncls)
{
	const struct trawl_ctf_trace *m = trawl_reader_trace_meta(ts->t);
	char b[64];

	tr_json_obj(j);
	tr_json_kv_str(j, "path", trawl_reader_trace_path(ts->t));
	tr_json_kv_str(j, "hostname", trawl_reader_trace_hostname(ts->t));
	tr_json_kv_str(j, "domain", env_str(m, "domain", b, sizeof(b)));
	tr_json_kv_str(j, "tracer_name", env_str(m, "tracer_name", b, sizeof(b)));
	tr_json_key(j, "clocks");
	tr_json_arr(j);
	for (size_t i = 0; m && i < m->nclocks; i++) {
		const struct trawl_ctf_clock *ck = &m->clocks[i];
		char u[37] = "";

		if (ck->has_uuid)
			tr_uuid_format(ck->uuid, u);
		tr_json_obj(j);
		tr_json_kv_str(j, "name", ck->name);
		tr_json_kv_u64(j, "freq", ck->freq);
		tr_json_kv_i64(j, "offset_s", ck->offset_s);
		tr_json_kv_i64(j, "offset", ck->offset);
		tr_json_kv_str(j, "uuid", u);
		tr_json_key(j, "absolute");
		tr_json_bool(j, ck->absolute);
		tr_json_obj_end(j);
	}
	tr_json_arr_end(j);
	tr_json_kv_u64(j, "events", ts->events);
	tr_json_kv_u64(j, "discarded", ts->discarded);
	tr_json_kv_u64(j, "packets", ts->packets);
	tr_json_kv_u64(j, "bytes", ts->bytes);
	if (ts->events) {
		tr_json_kv_i64(j, "first_ts", ts->first);
		tr_json_kv_i64(j, "last_ts", ts->last);
	}
	tr_json_key(j, "streams");
	tr_json_arr(j);
	for (size_t i = 0; i < trawl_reader_trace_nstreams(ts->t); i++) {
		const struct trawl_reader_stream *s = trawl_reader_trace_stream(ts->t, i);
		struct trawl_reader_stream_stats st;

		trawl_reader_stream_stats(s, &st);
		tr_json_obj(j);
		tr_json_kv_str(j, "path", trawl_reader_stream_path(s));
		tr_json_kv_u64(j, "cpu", st.cpu);
		tr_json_kv_u64(j, "packets", st.packets);
		tr_json_kv_u64(j, "events", st.events);
		tr_json_kv_u64(j, "discarded", st.discarded);
		tr_json_kv_u64(j, "bytes", st.bytes);
		tr_json_kv_str(j, "index", index_state(&st));
		if (st.index_warning) {
			tr_json_kv_str(j, "index_warning", st.index_warning);
		}
		tr_json_obj_end(j);
	}
	tr_json_arr_end(j);
	tr_json_key(j, "event_classes");
	tr_json_arr(j);
	for (size_t i = 0; i < ncls; i++) {
		if (cls[i]->trace != ts->t)
			continue;
		tr_json_obj(j);
		tr_json_kv_str(j, "name", cls[i]->cls->name ? cls[i]->cls->name : "");
		tr_json_kv_u64(j, "count", cls[i]->n);
		tr_json_obj_end(j);
	}
	tr_json_arr_end(j);
	tr_json_obj_end(j);
}

static void report_corrupt(void *arg, const char *msg)
{
	(*(uint64_t *)arg)++;
	cli_err("%s", msg);
}

/* A trace of a session that cannot be opened: reported, skipped. */
static void report_bad_trace(void *arg, const char *msg)
{
	(*(uint64_t *)arg)++;
	cli_err("%s; the trace is skipped", msg);
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 1 },
		CLI_GMT_OPTIONS(2),
		{ "threads", required_argument, NULL, 3 },
		{ "no-sync", no_argument, NULL, 4 },
		CLI_PROGRESS_OPTIONS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trawl_reader_opts ro = { .sz = sizeof(ro) };
	struct trawl_reader *r = NULL;
	struct trawl_sync_store *sync = NULL;
	bool no_sync = false;
	uint64_t *cnt = NULL;
	struct cls_count *ccs = NULL;
	struct trace_sum *sums = NULL;
	struct cls_count **cls = NULL;
	const char **hosts = NULL;
	size_t nhosts = 0, ntr = 0, ncls = 0;
	struct timespec t0, t1;
	bool json = false;
	char err[1024];
	int c, rc, status = 0, progress = 0;
	uint64_t total = 0, nerr = 0, nbad = 0;
	struct cli_progress pg;

	optind = 1;
	opterr = 0;
	gmt = false;
	while ((c = getopt_long(argc, argv, ":H:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			if ((rc = cli_arg_add(&hosts, &nhosts, optarg))) {
				free(hosts);
				return rc;
			}
			break;
		case 1:
			json = true;
			break;
		case 2:
			gmt = true;
			break;
		case 3: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*end || !*optarg || n < 1 || n > 64) {
				free(hosts);
				return cli_usage("--threads: '%s' is not a number in 1..64", optarg);
			}
			ro.threads = (unsigned)n;
			break;
		}
		case 4:
			no_sync = true;
			break;
		case CLI_OPT_PROGRESS:
		case CLI_OPT_NO_PROGRESS:
			progress = c;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			free(hosts);
			info_usage(stdout);
			return 0;
		default:
			free(hosts);
			return cli_opt_error(c, argv);
		}
	}
	if (optind >= argc) {
		free(hosts);
		return cli_usage("no trace path given");
	}
	if (cli_trace_paths((const char *const *)argv + optind, (size_t)(argc - optind))) {
		free(hosts);
		return CLI_EXIT_FAILURE;
	}
	if ((status = cli_filters_check((const char *const *)argv + optind, (size_t)(argc - optind),
					hosts, nhosts, NULL, 0, -1)))
		goto out;
	ro.hosts = hosts;
	ro.nhosts = nhosts;
	if (cli_sync_load((const char *const *)argv + optind, (size_t)(argc - optind), no_sync,
			  &ro, &sync)) {
		status = 1;
		goto out;
	}
	ro.bad_trace = report_bad_trace;
	ro.bad_trace_arg = &nbad;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = trawl_reader_new((const char *const *)argv + optind, (size_t)(argc - optind), &ro,
			     err, sizeof(err));
	if (!r) {
		status = cli_err("%s", err);
		goto out;
	}

	/* Decode everything, counting per class: a counting sink. */
	size_t nclasses;
	struct trawl_count *counter = trawl_count_new();
	if (!counter) {
		status = cli_err("out of memory");
		goto out;
	}
	{
		struct trawl_sink sinks[2] = { trawl_count_sink(counter), cli_progress_sink(&pg) };
		struct trawl_run_opts run = {
			.sz = sizeof(run), .error = report_corrupt, .arg = &nerr,
		};
		cli_progress_start(&pg, "trawl info", progress, CLI_PROGRESS_BYTES, 0);
		rc = trawl_pipe_run(r, sinks, pg.on ? 2 : 1, &run);
		if (rc < 0) {
			trawl_count_free(counter);
			status = cli_err("%s", strerror(-rc));
			goto out;
		}
		if (rc > 0 || nbad)
			status = 1;
	}
	nclasses = trawl_reader_nclasses(r);
	cnt = calloc(nclasses + 1, sizeof(*cnt));
	if (!cnt) {
		trawl_count_free(counter);
		status = cli_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < nclasses; i++)
		cnt[i] = trawl_count_class(counter, i);
	trawl_count_free(counter);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	/* Per trace sums, traces grouped by host. */
	ntr = trawl_reader_ntraces(r);
	sums = calloc(ntr ? ntr : 1, sizeof(*sums));
	ccs = calloc(nclasses + 1, sizeof(*ccs));
	cls = calloc(nclasses + 1, sizeof(*cls));
	if (!sums || !ccs || !cls) {
		status = cli_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < ntr; i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		const struct trawl_ctf_trace *m = trawl_reader_trace_meta(t);

		for (size_t j = 0; j < m->nstreams; j++) {
			const struct trawl_ctf_stream_class *sc = m->streams[j];

			for (size_t k = 0; k < sc->nevents; k++) {
				const struct trawl_ctf_event_class *ec = sc->events[k];
				struct cls_count *cc = &ccs[ec->index];

				if (ec->index >= nclasses || !cnt[ec->index])
					continue;
				cc->cls = ec;
				cc->trace = t;
				cc->n = cnt[ec->index];
				total += cc->n;
				cls[ncls++] = cc;
			}
		}
	}
	qsort(cls, ncls, sizeof(*cls), by_count);
	for (size_t i = 0; i < ntr; i++) {
		struct trace_sum *ts = &sums[i];

		ts->t = trawl_reader_trace_at(r, i);
		ts->first = INT64_MAX;
		ts->last = INT64_MIN;
		ts->nstreams = trawl_reader_trace_nstreams(ts->t);
		for (size_t j = 0; j < ts->nstreams; j++) {
			struct trawl_reader_stream_stats st;

			trawl_reader_stream_stats(trawl_reader_trace_stream(ts->t, j), &st);
			ts->events += st.events;
			ts->discarded += st.discarded;
			ts->packets += st.packets;
			ts->bytes += st.bytes;
			if (st.events && st.first_ts < ts->first)
				ts->first = st.first_ts;
			if (st.events && st.last_ts > ts->last)
				ts->last = st.last_ts;
		}
	}
	qsort(sums, ntr, sizeof(*sums), by_host);

	struct trace_sum all = { .first = INT64_MAX, .last = INT64_MIN };
	size_t nhost = 0;

	for (size_t i = 0; i < ntr; i++) {
		all.events += sums[i].events;
		all.discarded += sums[i].discarded;
		all.packets += sums[i].packets;
		all.bytes += sums[i].bytes;
		all.nstreams += sums[i].nstreams;
		if (sums[i].events && sums[i].first < all.first)
			all.first = sums[i].first;
		if (sums[i].events && sums[i].last > all.last)
			all.last = sums[i].last;
		if (i == 0 || strcmp(trawl_reader_trace_hostname(sums[i].t),
				     trawl_reader_trace_hostname(sums[i - 1].t)))
			nhost++;
	}
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	double rate = secs > 0 ? (double)total / secs : 0;

	if (json) {
		struct json j;

		tr_json_init(&j);
		tr_json_obj(&j);
		tr_json_key(&j, "traces");
		tr_json_arr(&j);
		for (size_t i = 0; i < ntr; i++)
			json_trace(&j, &sums[i], cls, ncls);
		tr_json_arr_end(&j);
		tr_json_key(&j, "total");
		tr_json_obj(&j);
		tr_json_kv_u64(&j, "hosts", nhost);
		tr_json_kv_u64(&j, "traces", ntr);
		tr_json_kv_u64(&j, "streams", all.nstreams);
		tr_json_kv_u64(&j, "events", total);
		tr_json_kv_u64(&j, "discarded", all.discarded);
		tr_json_kv_u64(&j, "packets", all.packets);
		tr_json_kv_u64(&j, "bytes", all.bytes);
		tr_json_kv_u64(&j, "errors", nerr);
		tr_json_kv_u64(&j, "traces_skipped", nbad);
		if (total) {
			tr_json_kv_i64(&j, "first_ts", all.first);
			tr_json_kv_i64(&j, "last_ts", all.last);
		}
		tr_json_obj_end(&j);
		cli_reader_json_losses(&j, r);
		tr_json_key(&j, "decode_seconds");
		tr_json_fixed(&j, secs, 6);
		tr_json_key(&j, "events_per_second");
		tr_json_fixed(&j, rate, 0);
		tr_json_obj_end(&j);
		tr_json_char(&j, '\n');
		if (tr_json_flush(&j, stdout))
			status = cli_err("out of memory");
		tr_json_release(&j);
	} else {
		char b[64];

		for (size_t i = 0; i < ntr; i++) {
			const char *h = trawl_reader_trace_hostname(sums[i].t);

			if (i == 0 || strcmp(h, trawl_reader_trace_hostname(sums[i - 1].t)))
				printf("%shost %s\n", i ? "\n" : "", h[0] ? h : "(no hostname)");
			text_trace(&sums[i], cls, ncls);
		}
		printf("\ntotal: %zu host%s, %zu trace%s, %zu stream%s, %" PRIu64 " event%s, %" PRIu64
		       " discarded, %" PRIu64 " packet%s, %" PRIu64 " byte%s\n", nhost, CLI_S(nhost),
		       ntr, CLI_S(ntr), all.nstreams, CLI_S(all.nstreams), total, CLI_S(total),
		       all.discarded, all.packets, CLI_S(all.packets), all.bytes, CLI_S(all.bytes));
		if (total) {
			printf("time range: %s", date(all.first, b, sizeof(b)));
			printf(" .. %s (", date(all.last, b, sizeof(b)));
			print_duration(all.first, all.last);
			printf(")\n            %" PRId64 " .. %" PRId64 " ns\n", all.first, all.last);
		}
		if (nerr)
			printf("errors: %" PRIu64 " corrupt stream%s\n", nerr, nerr == 1 ? "" : "s");
		if (nbad)
			printf("skipped: %" PRIu64 " trace%s that could not be opened\n", nbad,
			       nbad == 1 ? "" : "s");
	}
	cli_flush_stdout();	/* its errno kept for cli_stdout_done() */
	if (cli_reader_report(r, 0))	/* losses, skips: trawl(1) */
		status = 1;
	cli_note("decoded %" PRIu64 " events in %.3f s: %.2f M events/s",
		 total, secs, rate / 1e6);
out:
	trawl_reader_free(r);
	trawl_sync_store_free(sync);
	free(cnt);
	free(ccs);
	free(sums);
	free(cls);
	free(hosts);
	return status;
}
