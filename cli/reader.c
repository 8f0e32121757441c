/* SPDX-License-Identifier: MIT */
/*
 * cli/reader.c - the reader of the commands that read traces (print, agg,
 * analyze, ...): the trace files under paths and the live sessions, with
 * their filters and clock corrections; and the one report every reading
 * command makes at its end of what the traces lost and what could not be
 * read (trawl(1), READING DAMAGED TRACES).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "internal.h"	/* tr_glob_match */
#include "trawl/pipe.h"
#include "trawl/sync.h"
#include "util/json.h"

#define REPORT_RANGES 3		/* loss ranges named per stream on stderr */

/* A trace of a session that cannot be opened: reported, skipped. */
void cli_report_bad_trace(void *arg, const char *msg)
{
	if (arg) {
		(*(int *)arg)++;
		cli_err("%s; the trace is skipped", msg);
	}
}

int cli_reader_matches(const struct trawl_reader *r, const char *const *hosts, size_t nhosts,
		       const char *const *events, size_t nevents, char *err, size_t errlen)
{
	size_t nt = trawl_reader_ntraces(r);

	if (nhosts && !nt) {
		int w = snprintf(err, errlen, "no trace of a host matching");
		for (size_t i = 0; i < nhosts && w >= 0 && (size_t)w < errlen; i++)
			w += snprintf(err + w, errlen - (size_t)w, "%s '%s'", i ? " or" : "", hosts[i]);
		return -ENOENT;
	}
	for (size_t g = 0; g < nevents; g++) {
		bool any = false;
		for (size_t i = 0; i < nt && !any; i++) {
			const struct trawl_ctf_trace *m =
				trawl_reader_trace_meta(trawl_reader_trace_at(r, i));
			for (size_t k = 0; m && k < m->nstreams && !any; k++)
				for (size_t e = 0; e < m->streams[k]->nevents && !any; e++) {
					const char *name = m->streams[k]->events[e]->name;
					any = name && tr_glob_match(events[g], name);
				}
		}
		if (nt && !any) {
			snprintf(err, errlen, "no event of the traces matches '%s'", events[g]);
			return -ENOENT;
		}
	}
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * The live source of url; a session the relay does not list (ENOENT: the
 * relay answered) is asked for again every 200 ms up to co->wait_ms, with
 * a note once (a test waits for it). NULL with the message in err.
 */
static struct trawl_source *live_source(const char *url, const struct cli_reader_opts *co,
					const struct trawl_source_opts *so, char *err,
					size_t errlen)
{
	int64_t t0 = mono_ms();
	bool told = false;

	for (;;) {
		struct trawl_source *s = trawl_source_live(url, so, err, errlen);
		int e = errno;

		if (s)
			return s;
		if (e != ENOENT || !co->wait_ms)
			break;
		int64_t waited = mono_ms() - t0;
		if (co->wait_ms > 0 && waited >= co->wait_ms) {
			size_t l = strlen(err);
			snprintf(err + l, errlen > l ? errlen - l : 0, ", after waiting %.1f s (--wait)",
				 (double)waited / 1000);
			break;
		}
		if (!told) {
			char bound[64] = "Ctrl-C to stop, --wait S to give up after S seconds";
			if (co->wait_ms > 0)
				snprintf(bound, sizeof(bound), "up to %.1f s, --wait",
					 (double)co->wait_ms / 1000);
			cli_note("%s: the relay has no such session yet: waiting for it (%s)", url,
				 bound);
			told = true;
		}
		struct timespec d = { 0, 200 * 1000000L };
		nanosleep(&d, NULL);
		errno = e;
	}
	errno = errno ? errno : EIO;
	return NULL;
}

int cli_wait_arg(const char *arg, long *ms)
{
	char *end;
	double s = strtod(arg, &end);

	if (!*arg || *end || !(s >= 0) || s > 86400 * 365)
		return cli_usage("--wait: '%s' is not a number of seconds", arg);
	*ms = (long)(s * 1000 + 0.5);
	return 0;
}

/* The live clocks of the readers: as long as the process (a reader
 * outlives no command). */
static struct trawl_sync_live **lives;
static size_t nlives;

static void lives_free(void)
{
	for (size_t i = 0; i < nlives; i++)
		trawl_sync_live_free(lives[i]);
	free(lives);
	lives = NULL;
	nlives = 0;
}

const char *cli_bound_str(int64_t b, char *buf, size_t len)
{
	if (b == TRAWL_SYNC_UNBOUNDED)
		return "none";
	snprintf(buf, len, "%" PRId64 " ns", b);
	return buf;
}

/* A node's live correction changed: a note (trawl-print(1), LIVE SYNC). */
static void live_changed(void *arg, const struct trawl_sync_live_node *n)
{
	char b[64];
	(void)arg;
	if (n->quality == TRAWL_SYNC_ABSENT) {
		cli_note("live sync: %s: not synchronized yet (no message with another node): "
			 "its own clock", n->host);
		return;
	}
	if (n->is_ref) {
		cli_note("live sync: %s: the reference", n->host);
		return;
	}
	/* as trawl sync --live says it */
	cli_note("live sync: %s: offset %+.9f s, drift %+.3f ppm, bound %s, %s, reference %s, %" PRIu64
		 " messages", n->host, (double)n->offset_ns / 1e9, n->drift_ppm,
		 cli_bound_str(n->bound_ns, b, sizeof(b)), trawl_sync_quality_name(n->quality),
		 n->reference, n->messages);
}

/* A live clock for a reader, kept with the others; NULL + message. */
static const struct trawl_reader_clock *live_clock(char *err, size_t errlen)
{
	struct trawl_sync_live_opts lo = { .size = sizeof(lo), .changed = live_changed };
	struct trawl_sync_live **nl = realloc(lives, (nlives + 1) * sizeof(*nl));
	if (!nl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	lives = nl;
	if (!(nl[nlives] = trawl_sync_live_new(&lo, err, errlen)))
		return NULL;
	if (!nlives++)
		atexit(lives_free);
	return trawl_sync_live_clock(nl[nlives - 1]);
}

int cli_live_clock(const char *host, struct trawl_sync_live_node *n)
{
	if (!nlives)
		return -1;
	return trawl_sync_live_node(lives[nlives - 1], host, n);
}

const char *cli_clock_text(const char *host, char *buf, size_t len)
{
	struct trawl_sync_live_node n;
	int rc = cli_live_clock(host, &n);

	if (rc < 0)
		snprintf(buf, len, "-");
	else if (!rc || n.quality == TRAWL_SYNC_ABSENT)
		snprintf(buf, len, "unsync");
	else if (n.is_ref)
		snprintf(buf, len, "reference");
	else if (n.bound_ns == TRAWL_SYNC_UNBOUNDED)
		snprintf(buf, len, "%+.6fs", (double)n.offset_ns / 1e9);
	else
		snprintf(buf, len, "%+.6fs+-%.0fus", (double)n.offset_ns / 1e9,
			 (double)n.bound_ns / 1e3);
	return buf;
}

struct trawl_reader *cli_open_reader(const char *const *paths, size_t npaths,
				     const struct cli_reader_opts *co,
				     const struct trawl_reader_opts *ro, char *err, size_t errlen)
{
	struct trawl_source_opts so = {
		.sz = sizeof(so), .hosts = co->hosts, .nhosts = co->nhosts, .events = co->events,
		.nevents = co->nevents, .fixes = ro->fixes, .nfixes = ro->nfixes,
		.bad_trace = cli_report_bad_trace, .bad_trace_arg = co->nbad,
		.live_from_now = co->from_now, .live_lazy = co->lazy,
	};
	struct trawl_reader_opts rro = *ro;
	struct trawl_source **srcs = calloc(co->nlive + 1, sizeof(*srcs));
	size_t n = 0;

	if (!srcs) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rro.hosts = rro.events = NULL;
	rro.nhosts = rro.nevents = 0;
	rro.fixes = NULL;
	rro.nfixes = 0;
	if (co->nlive && co->live_sync && !ro->nfixes) {
		rro.sz = sizeof(rro);
		if (!(rro.clock = live_clock(err, errlen))) {
			free(srcs);
			return NULL;
		}
	}
	if (npaths && !(srcs[n++] = trawl_source_files(paths, npaths, &so, err, errlen)))
		goto fail;
	for (size_t i = 0; i < co->nlive; i++) {
		if (!(srcs[n] = live_source(co->live[i], co, &so, err, errlen)))
			goto fail;
		n++;
	}
	struct trawl_reader *r = trawl_reader_open(srcs, n, &rro, err, errlen);
	free(srcs);
	if (r && !co->nlive && cli_reader_matches(r, co->hosts, co->nhosts, co->events,
						   co->nevents, err, errlen)) {
		trawl_reader_free(r);
		return NULL;
	}
	return r;
fail:
	for (size_t i = 0; i < n; i++)
		trawl_source_free(srcs[i]);
	free(srcs);
	return NULL;
}

int cli_match_add(struct trawl_sync_match **m, size_t *n, const char *spec)
{
	char err[512];
	struct trawl_sync_match *nm = realloc(*m, (*n + 1) * sizeof(*nm));
	if (!nm)
		return cli_err("out of memory");
	*m = nm;
	if (trawl_sync_match_parse(spec, &nm[*n], err, sizeof(err)))
		return cli_usage("--match: %s", err);
	(*n)++;
	return 0;
}

int cli_arg_add(const char ***v, size_t *n, const char *arg)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return cli_err("out of memory");
	*v = nv;
	nv[(*n)++] = arg;
	return 0;
}

int cli_sync_check(const char *sync_path, int no_sync)
{
	return sync_path && no_sync ? cli_usage("--sync and --no-sync exclude each other") : 0;
}

int cli_sync_use(const char *sync_path, const char *const *paths, size_t npaths, int no_sync,
		 struct trawl_reader_opts *ro, struct trawl_sync_store **store)
{
	int rc;
	*store = NULL;
	if ((rc = cli_sync_check(sync_path, no_sync)))
		return rc;
	if (cli_sync_load(sync_path ? &sync_path : paths, sync_path ? 1 : npaths, no_sync, ro,
			  store))
		return CLI_EXIT_FAILURE;
	if (sync_path && !*store)
		return cli_err("%s: no sync.txt there", sync_path);
	return 0;
}

/* A time of a loss range, UTC: "2024-05-12 23:36:14.804515157", or only its
 * time of day when day_of is on the same day; "?" without a time. */
static const char *range_time(char *buf, size_t len, int64_t ns, int64_t day_of)
{
	if (ns == INT64_MIN) {
		snprintf(buf, len, "?");
		return buf;
	}
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;
	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	time_t t = (time_t)sec;
	struct tm tm;
	char d[40];
	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, len, "%" PRId64 " ns", ns);
		return buf;
	}
	bool same = day_of != INT64_MIN && day_of / 86400000000000 == ns / 86400000000000;
	strftime(d, sizeof(d), same ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09" PRId64, d, frac);
	return buf;
}

/* The losses of stream s on stderr, as one warning; its events lost. */
static uint64_t report_losses(const struct trawl_reader_stream *s)
{
	struct trawl_reader_loss lo[40];
	uint64_t events = 0;
	size_t n = trawl_reader_stream_losses(s, lo, sizeof(lo) / sizeof(*lo), &events);
	char line[1024], a[80], b[80];
	int w = 0;

	if (!events)
		return 0;
	for (size_t i = 0; i < n && i < REPORT_RANGES && w >= 0 && (size_t)w < sizeof(line); i++)
		w += snprintf(line + w, sizeof(line) - (size_t)w, "%s%s to %s UTC (%" PRIu64 ")",
			      i ? ", " : "", range_time(a, sizeof(a), lo[i].begin, INT64_MIN),
			      range_time(b, sizeof(b), lo[i].end, lo[i].begin), lo[i].events);
	if (n > REPORT_RANGES && w >= 0 && (size_t)w < sizeof(line))
		snprintf(line + w, sizeof(line) - (size_t)w, ", and %zu more", n - REPORT_RANGES);
	cli_warn("%s: %" PRIu64 " event%s lost (discarded by the tracer) in %zu time range%s: %s",
		 trawl_reader_stream_path(s), events, events == 1 ? "" : "s", n, n == 1 ? "" : "s",
		 line);
	return events;
}

/* The skips of stream s on stderr, one error each; its bytes skipped. */
static uint64_t report_skips(const struct trawl_reader_stream *s, uint64_t *nskips)
{
	struct trawl_reader_skip sk[16];
	uint64_t bytes = 0, all = 0, shown = 0;
	size_t n = trawl_reader_stream_skips(s, sk, sizeof(sk) / sizeof(*sk), &bytes, &all);
	struct trawl_reader_stream_stats st;
	const char *path = trawl_reader_stream_path(s);

	if (!all)
		return 0;
	trawl_reader_stream_stats(s, &st);
	for (size_t i = 0; i < n; i++) {
		uint64_t to = sk[i].offset + sk[i].bytes;
		shown += sk[i].bytes;
		if (to >= st.bytes)
			cli_err("%s: byte %" PRIu64 ": %s: %" PRIu64 " byte%s skipped, to the end of the file",
				path, sk[i].offset, sk[i].why, sk[i].bytes, sk[i].bytes == 1 ? "" : "s");
		else
			cli_err("%s: byte %" PRIu64 ": %s: %" PRIu64 " byte%s skipped, read on at byte %" PRIu64,
				path, sk[i].offset, sk[i].why, sk[i].bytes, sk[i].bytes == 1 ? "" : "s", to);
	}
	if (all > n)
		cli_err("%s: %" PRIu64 " more corrupt region%s skipped (%" PRIu64 " bytes)", path,
			all - n, all - n == 1 ? "" : "s", bytes - shown);
	*nskips += all;
	return bytes;
}

int cli_reader_report(const struct trawl_reader *r, int nbad)
{
	uint64_t skipped = 0, nskips = 0;

	if (!r)
		return nbad ? CLI_EXIT_FAILURE : 0;
	for (size_t i = 0; i < trawl_reader_ntraces(r); i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t k = 0; k < trawl_reader_trace_nstreams(t); k++) {
			const struct trawl_reader_stream *s = trawl_reader_trace_stream(t, k);
			report_losses(s);
			skipped += report_skips(s, &nskips);
		}
	}
	if (nskips)
		cli_err("%" PRIu64 " corrupt region%s skipped (%" PRIu64 " bytes): the results are "
			"those of the rest", nskips, nskips == 1 ? "" : "s", skipped);
	return nskips || nbad ? CLI_EXIT_FAILURE : 0;
}

void cli_reader_json_losses(struct json *j, const struct trawl_reader *r)
{
	uint64_t lost = 0, skipped = 0, nskips = 0;

	tr_json_key(j, "losses");
	tr_json_obj(j);
	tr_json_key(j, "streams");
	tr_json_arr(j);
	for (size_t i = 0; r && i < trawl_reader_ntraces(r); i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t k = 0; k < trawl_reader_trace_nstreams(t); k++) {
			const struct trawl_reader_stream *s = trawl_reader_trace_stream(t, k);
			struct trawl_reader_loss lo[40];
			struct trawl_reader_skip sk[16];
			uint64_t ev = 0, by = 0, ns = 0;
			size_t nl = trawl_reader_stream_losses(s, lo, 40, &ev);
			size_t nk = trawl_reader_stream_skips(s, sk, 16, &by, &ns);
			if (!ev && !ns)
				continue;
			lost += ev;
			skipped += by;
			nskips += ns;
			tr_json_obj(j);
			tr_json_kv_str(j, "path", trawl_reader_stream_path(s));
			tr_json_kv_str(j, "host", trawl_reader_trace_hostname(t));
			tr_json_kv_u64(j, "events", ev);
			tr_json_key(j, "ranges");
			tr_json_arr(j);
			for (size_t x = 0; x < nl; x++) {
				tr_json_obj(j);
				if (lo[x].begin != INT64_MIN)
					tr_json_kv_i64(j, "begin_ns", lo[x].begin);
				if (lo[x].end != INT64_MIN)
					tr_json_kv_i64(j, "end_ns", lo[x].end);
				tr_json_kv_u64(j, "events", lo[x].events);
				tr_json_obj_end(j);
			}
			tr_json_arr_end(j);
			tr_json_kv_u64(j, "skipped_bytes", by);
			tr_json_kv_u64(j, "skipped_regions", ns);
			tr_json_key(j, "skips");
			tr_json_arr(j);
			for (size_t x = 0; x < nk; x++) {
				tr_json_obj(j);
				tr_json_kv_u64(j, "offset", sk[x].offset);
				tr_json_kv_u64(j, "bytes", sk[x].bytes);
				tr_json_kv_str(j, "why", sk[x].why);
				tr_json_obj_end(j);
			}
			tr_json_arr_end(j);
			tr_json_obj_end(j);
		}
	}
	tr_json_arr_end(j);
	tr_json_kv_u64(j, "events", lost);
	tr_json_kv_u64(j, "skipped_bytes", skipped);
	tr_json_kv_u64(j, "skipped_regions", nskips);
	tr_json_obj_end(j);
}

/* The report sink: cli_reader_report() once the run has read everything
 * (for the commands whose reader is inside a library call: sync). */
static int report_finish(void *self, struct trawl_reader *r)
{
	struct cli_report *c = self;

	struct json j;

	c->status = cli_reader_report(r, c->nbad);
	c->done = true;
	/* the losses object's text, for a JSON output written later */
	tr_json_init(&j);
	cli_reader_json_losses(&j, r);
	tr_json_char(&j, '\0');
	free(c->json);
	c->json = NULL;
	if (!j.nomem) {
		/* `"losses":{...}`: the value after the key */
		const char *v = strchr(j.buf, ':');
		c->json = v ? strdup(v + 1) : NULL;
	}
	tr_json_release(&j);
	return 0;
}

/* It wants no event: the other sinks' choice stands. */
static bool report_wants(void *self, const struct trawl_ctf_event_class *cls)
{
	(void)self;
	(void)cls;
	return false;
}

static int report_events(void *self, const struct trawl_event *ev, size_t n)
{
	(void)self;
	(void)ev;
	(void)n;
	return 0;
}

struct trawl_sink cli_report_sink(struct cli_report *c)
{
	static const struct trawl_sink_ops ops = {
		.sz = sizeof(ops), .name = "report", .events = report_events,
		.finish = report_finish, .wants = report_wants,
	};

	return (struct trawl_sink){ .ops = &ops, .self = c };
}

int cli_reader_json_line(const struct trawl_reader *r)
{
	bool any = false;
	struct json j;

	for (size_t i = 0; r && i < trawl_reader_ntraces(r) && !any; i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t k = 0; k < trawl_reader_trace_nstreams(t) && !any; k++) {
			const struct trawl_reader_stream *s = trawl_reader_trace_stream(t, k);
			uint64_t ev = 0, ns = 0;
			trawl_reader_stream_losses(s, NULL, 0, &ev);
			trawl_reader_stream_skips(s, NULL, 0, NULL, &ns);
			any = ev || ns;
		}
	}
	if (!any)
		return 0;
	tr_json_init(&j);
	tr_json_obj(&j);
	cli_reader_json_losses(&j, r);
	tr_json_obj_end(&j);
	tr_json_char(&j, '\n');
	int rc = tr_json_flush(&j, stdout) ? -ENOMEM : 0;
	tr_json_release(&j);
	/* through the one flush that keeps a failure's errno for the exit
	 * check (cli_stdout_done()): a reader gone (EPIPE) is no error */
	if (!rc && cli_flush_stdout() && errno != EPIPE)
		rc = -errno;
	return rc;
}

void cli_json_raw_member(struct json *j, const char *key, const char *raw)
{
	tr_json_key(j, key);
	for (const char *p = raw; *p; p++)
		tr_json_char(j, *p);
	j->key = false;		/* the value is written: the next member gets its comma */
}
