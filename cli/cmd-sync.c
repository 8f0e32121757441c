/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-sync.c - `trawl sync SESSION`: finds the messages the nodes of a
 * session exchanged (probes, TCP segments, --match'ed application events),
 * computes every pair's convex-hull result (batch, or --incremental), puts
 * every node on its group's reference clock, prints per node drift, offset,
 * start, accuracy bound, quality and reference and per pair the message
 * counts, stores the result as SESSION/sync.txt (which print, info and the
 * other readers then apply), and with --apply -o OUT writes a copy of the
 * session whose metadata clocks are corrected, for babeltrace2 and Trace
 * Compass.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "internal.h"	/* tr_mkdir_p */
#include "util/json.h"
#include "util/outfile.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"

#define NSEC ((int64_t)1000000000)
/* Instants sampled over a node's span for its maximum bound. */
#define NSAMPLES 64
#define SETTLE_POINTS 9	/* where every link is made to hold (trawl_sync_graph_settle) */

static void sync_usage(FILE *f)
{
	fprintf(f,
		"usage: trawl sync [<options>] <session>\n"
		"       trawl sync --live [<options>] net://<relay>[:<port>]/session/<name>\n"
		"\n"
		"Synchronizes the clocks of a session's nodes from the messages they\n"
		"exchanged (trawl_sync probe and tcp events, and --match'ed events):\n"
		"prints per node the drift, the offset, the accuracy bound, the quality\n"
		"and the reference, per pair of nodes the messages, and stores the result\n"
		"as <session>/sync.txt, which trawl print and trawl info then apply.\n"
		"\n"
		"  -m, --match <spec>     also match application events, spec\n"
		"                         'SEND_EVENT.FIELD = RECV_EVENT.FIELD' (repeatable)\n"
		"  -r, --reference <host> the reference node (default: the node whose\n"
		"                         summed bound to the others is smallest)\n"
		"      --incremental      compute with the incremental (streaming) form\n"
		"      --max-drift <ppm>  slope assumption of offset-only pairs (default 500)\n"
		"      --no-probes        ignore trawl_sync:probe_* events\n"
		"      --no-tcp           ignore trawl_sync:tcp_* events\n"
		"      --json             one JSON object on stdout instead of text\n"
		"      --no-store         do not write <session>/sync.txt\n"
		"      --apply            write a corrected copy of the session to -o\n"
		"  -o, --output <dir>     the copy's directory (new or empty)\n"
		"      --live             follow a relay's live session: a line per node each\n"
		"                         time its offset, drift or bound changes (at most\n"
		"                         every -d seconds), the whole result at its end\n"
		"  -d, --delay <s>        --live: seconds between estimates (default 1)\n"
		"      --save <file>      --live: store the final result there (sync.txt's\n"
		"                         format: trawl print --sync <file>)\n"
		CLI_LIVE_HELP
		"      --progress         show progress on stderr even when it is not a\n"
		"                         terminal\n"
		"      --no-progress      never show progress (default: on a terminal)\n"
		"  -h, --help             this help\n");
}

struct node_out {
	struct trawl_sync_node nd;
	enum trawl_sync_quality quality;	/* as reported (absent for loners) */
	bool is_ref;
	int64_t start, end;			/* the node's span, raw ns */
	int64_t b_start, b_mid, b_end, b_max;
	int64_t offset;				/* node - reference at start, ns */
	double factor, ppm;
	char *path;				/* "host2,host1,host0" */
	char fallback[160];
};

struct sync_run {
	const char *session;
	const char *losses;			/* the losses object (JSON), or NULL */
	struct trawl_sync_points *p;
	struct trawl_sync_pair *pairs;		/* per link */
	struct trawl_sync_graph *g;
	struct node_out *no;
	size_t ngroups;
	long ref;
	bool user_ref;
	bool pinned_ref;			/* --live: the reference kept from the first
					 * estimate with messages */
	bool incremental;
	uint64_t messages;
	int progress;				/* --progress, --no-progress: see cli.h */
};

/* ----------------------------------------------------------- helpers */

/* A bound in ns, or null when there is none. */
static void json_bound(struct json *j, int64_t b)
{
	if (b == TRAWL_SYNC_UNBOUNDED)
		tr_json_null(j);
	else
		tr_json_i64(j, b);
}

static void json_xform(struct json *j, const struct trawl_sync_xform *x)
{
	tr_json_obj(j);
	tr_json_kv_i64(j, "t0", x->t0);
	tr_json_kv_i64(j, "y0", x->y0);
	tr_json_kv_i64(j, "slope", x->slope);
	tr_json_obj_end(j);
}

/* "2023-11-14 22:13:20.000000000 UTC" */
static const char *date_utc(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / NSEC);
	int64_t frac = ns % NSEC;
	struct tm tm;
	size_t n;

	if (frac < 0) {
		frac += NSEC;
		s--;
	}
	if (!gmtime_r(&s, &tm))
		return "?";
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%09" PRId64 " UTC", frac);
	return buf;
}

static const char *secs(int64_t ns, char *buf, size_t len)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, len, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "+", a / 1000000000u,
		 a % 1000000000u);
	return buf;
}

/* end - start of a span (end >= start) without overflow: corrupt times can
 * be the whole int64 range apart. */
static uint64_t span_ns(int64_t start, int64_t end)
{
	return end > start ? (uint64_t)end - (uint64_t)start : 0;
}

/* a - b, saturated at the ends of int64 */
static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t sat_max(int64_t a, int64_t b)
{
	if (a == TRAWL_SYNC_UNBOUNDED || b == TRAWL_SYNC_UNBOUNDED)
		return TRAWL_SYNC_UNBOUNDED;
	return a > b ? a : b;
}

/* ------------------------------------------------------------ compute */

static int compute(struct sync_run *s, const struct trawl_sync_opts *so, const char *ref_name)
{
	struct trawl_sync_points *p = s->p;
	char err[512];
	int rc;

	s->pairs = calloc(p->nlinks + 1, sizeof(*s->pairs));
	s->no = calloc(p->nhosts + 1, sizeof(*s->no));
	if (!s->pairs || !s->no)
		return cli_err("out of memory");
	for (size_t i = 0; i < p->nlinks; i++) {
		rc = trawl_sync_link_compute(&p->links[i], s->incremental, so, &s->pairs[i], err,
					     sizeof(err));
		if (rc)
			return cli_err("%s - %s: %s", p->hosts[p->links[i].a].name,
				       p->hosts[p->links[i].b].name, err);
		s->messages += p->links[i].n_ab + p->links[i].n_ba;
	}
	s->g = trawl_sync_graph_new(p->nhosts);
	if (!s->g)
		return cli_err("%s", strerror(errno));
	for (size_t i = 0; i < p->nlinks; i++)
		if ((rc = trawl_sync_graph_set_pair(s->g, p->links[i].a, p->links[i].b, &s->pairs[i])))
			return cli_err("%s", strerror(-rc));
	s->ref = -1;
	if (ref_name) {
		for (size_t i = 0; i < p->nhosts; i++)
			if (!strcmp(p->hosts[i].name, ref_name))
				s->ref = (long)i;
		if (s->ref < 0)
			return cli_err("no host '%s' in %s", ref_name, s->session);
		s->user_ref = true;
	}
	rc = trawl_sync_graph_solve(s->g, s->ref, err, sizeof(err));
	if (rc < 0)
		return cli_err("%s", err);
	s->ngroups = (size_t)rc;
	/* every link holds across the trace, those off the paths too: the
	 * offsets settled at SETTLE_POINTS points of each node's span */
	int64_t *pts = calloc(SETTLE_POINTS * p->nhosts + 1, sizeof(*pts));
	if (!pts)
		return cli_err("out of memory");
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct trawl_sync_host *h = &p->hosts[i];
		bool any = h->first_ts != INT64_MAX && h->last_ts != INT64_MIN;
		uint64_t span = any ? span_ns(h->first_ts, h->last_ts) : 0;
		for (int k = 0; k < SETTLE_POINTS; k++)
			pts[k * p->nhosts + i] = !any ? INT64_MIN :
				(int64_t)((__int128)h->first_ts +
					  (uint64_t)((long double)span * k / (SETTLE_POINTS - 1)));
	}
	rc = trawl_sync_graph_settle(s->g, pts, SETTLE_POINTS);
	free(pts);
	if (rc < 0)
		return cli_err("%s", strerror(-rc));

	for (size_t i = 0; i < p->nhosts; i++) {
		struct node_out *o = &s->no[i];
		const struct trawl_sync_host *h = &p->hosts[i];
		size_t gsize = 0;

		trawl_sync_graph_node(s->g, i, &o->nd);
		for (size_t j = 0; j < p->nhosts; j++) {
			struct trawl_sync_node x;
			trawl_sync_graph_node(s->g, j, &x);
			gsize += x.group == o->nd.group;
		}
		o->is_ref = o->nd.hops == 0;
		o->quality = o->nd.quality;
		if (o->is_ref && gsize == 1 && p->nhosts > 1)
			o->quality = TRAWL_SYNC_ABSENT;
		o->start = h->first_ts != INT64_MAX ? h->first_ts : o->nd.to_ref.t0;
		o->end = h->last_ts != INT64_MIN ? h->last_ts : o->start;
		o->b_start = trawl_sync_graph_bound(s->g, i, o->start);
		o->b_end = trawl_sync_graph_bound(s->g, i, o->end);
		/* (start + half the span is between the two: no overflow) */
		o->b_mid = trawl_sync_graph_bound(s->g, i,
						  o->start + (int64_t)(span_ns(o->start, o->end) / 2));
		o->b_max = sat_max(o->b_start, o->b_end);
		for (int k = 1; k < NSAMPLES; k++) {
			uint64_t span = span_ns(o->start, o->end);
			uint64_t at = (uint64_t)((long double)span * k / NSAMPLES);
			int64_t t = (int64_t)((__int128)o->start + (at < span ? at : span));

			o->b_max = sat_max(o->b_max, trawl_sync_graph_bound(s->g, i, t));
		}
		o->offset = sat_sub(o->start, trawl_sync_xform_apply(&o->nd.to_ref, o->start));
		o->factor = trawl_sync_xform_rate(&o->nd.to_ref);
		o->ppm = (1.0 / o->factor - 1.0) * 1e6;

		/* the path to the reference, and the fallback used if any */
		size_t len = 0, cap = 64;
		char *path = malloc(cap);
		size_t j = i;
		if (!path)
			return cli_err("out of memory");
		path[0] = 0;
		for (size_t hop = 0; hop <= o->nd.hops; hop++) {
			const char *nm = p->hosts[j].name;
			size_t nl = strlen(nm);
			if (len + nl + 2 > cap) {
				cap = (len + nl + 2) * 2;
				char *np = realloc(path, cap);
				if (!np) {
					free(path);
					return cli_err("out of memory");
				}
				path = np;
			}
			if (len)
				path[len++] = ',';
			memcpy(path + len, nm, nl + 1);
			len += nl;
			struct trawl_sync_node x;
			trawl_sync_graph_node(s->g, j, &x);
			j = x.next;
		}
		o->path = path;
		switch (o->quality) {
		case TRAWL_SYNC_FAIL:
			snprintf(o->fallback, sizeof(o->fallback),
				 "no line fits every message on its path (a drift change, NTP "
				 "slewing, a wrong match): fallback = the line with the fewest "
				 "violations; no bound");
			break;
		case TRAWL_SYNC_ONE_WAY:
			snprintf(o->fallback, sizeof(o->fallback),
				 "messages in one direction only on its path: fallback = slope 1 "
				 "and the smallest delay taken as zero; no bound");
			break;
		case TRAWL_SYNC_OFFSET_ONLY:
			snprintf(o->fallback, sizeof(o->fallback),
				 "the data bound the drift on one side only: the bound assumes "
				 "|drift| <= %u ppm", so && so->max_drift_ppm ? so->max_drift_ppm : 500);
			break;
		case TRAWL_SYNC_ABSENT:
			snprintf(o->fallback, sizeof(o->fallback),
				 "no message with any other node: not corrected");
			break;
		default:
			break;
		}
	}
	return 0;
}

static size_t group_size(const struct sync_run *s, size_t g)
{
	size_t n = 0;
	for (size_t i = 0; i < s->p->nhosts; i++)
		n += s->no[i].nd.group == g;
	return n;
}

/* -------------------------------------------------------------- print */

static const char *quality_str(const struct node_out *o)
{
	return o->is_ref && o->quality != TRAWL_SYNC_ABSENT ? "reference" :
	       trawl_sync_quality_name(o->quality);
}

static void print_text(const struct sync_run *s, const char *stored)
{
	const struct trawl_sync_points *p = s->p;
	char b1[64], b2[64], b3[64], b4[64];
	size_t ntraces = 0;

	for (size_t i = 0; i < p->nhosts; i++)
		ntraces += p->hosts[i].npaths;
	printf("session %s: %zu host%s, %zu trace%s, %" PRIu64 " sync events, %" PRIu64
	       " messages (probe %" PRIu64 ", tcp %" PRIu64 ", match %" PRIu64 "), %s\n",
	       s->session, p->nhosts, p->nhosts == 1 ? "" : "s", ntraces, ntraces == 1 ? "" : "s",
	       p->events, s->messages, p->by_kind[0], p->by_kind[1], p->by_kind[2],
	       s->incremental ? "incremental" : "batch");
	for (size_t g = 0; g < s->ngroups; g++) {
		for (size_t i = 0; i < p->nhosts; i++)
			if (s->no[i].nd.group == g && s->no[i].is_ref) {
				printf("reference %s (%s)%s\n", p->hosts[i].name,
				       s->pinned_ref && (long)i == s->ref
					       ? "automatic, kept from the first live estimate"
				       : s->user_ref && (long)i == s->ref ? "chosen" :
				       "automatic: smallest summed bound to the others",
				       s->ngroups > 1 ? "" : "");
				break;
			}
		if (s->ngroups > 1)
			break;
	}
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct trawl_sync_host *h = &p->hosts[i];
		const struct node_out *o = &s->no[i];

		printf("\nhost %s\n", h->name);
		printf("  traces     ");
		for (size_t k = 0; k < h->npaths; k++)
			printf("%s%s", k ? " " : "", h->paths[k]);
		uint64_t span = span_ns(o->start, o->end);

		printf("\n  start      %s (%" PRId64 " ns), span %" PRIu64 ".%09" PRIu64 " s%s\n",
		       date_utc(o->start, b1, sizeof(b1)), o->start, span / 1000000000u,
		       span % 1000000000u, o->start < 0 ? ", impossible: events dated before "
							  "1970: a corrupt timestamp or clock offset" : "");
		printf("  drift      %+.6f ppm (clock rate against the reference; factor node -> "
		       "reference %.12f)\n", o->ppm, o->factor);
		printf("  offset     %+" PRId64 " ns (%s s) at start: node clock minus reference\n",
		       o->offset, secs(o->offset, b1, sizeof(b1)));
		printf("  bound      start %s, mid %s, end %s, max %s\n",
		       cli_bound_str(o->b_start, b1, sizeof(b1)), cli_bound_str(o->b_mid, b2, sizeof(b2)),
		       cli_bound_str(o->b_end, b3, sizeof(b3)), cli_bound_str(o->b_max, b4, sizeof(b4)));
		printf("  quality    %s", quality_str(o));
		if (!o->is_ref) {
			printf(", via ");
			for (const char *c = o->path; *c; c++)
				if (*c == ',')
					printf(" -> ");
				else
					putchar(*c);
			printf(" (%zu hop%s)", o->nd.hops, o->nd.hops == 1 ? "" : "s");
		}
		putchar('\n');
		if (o->fallback[0])
			printf("  note       %s\n", o->fallback);
		printf("  reference  %s%s\n", p->hosts[o->nd.ref].name,
		       s->ngroups > 1 ? "" : "");
		if (s->ngroups > 1)
			printf("  group      %zu\n", o->nd.group);
		printf("  transform  t0 %" PRId64 " y0 %" PRId64 " slope %" PRId64 "/2^%d\n",
		       o->nd.to_ref.t0, o->nd.to_ref.y0, o->nd.to_ref.slope, TRAWL_SYNC_SHIFT);
		if (h->unmatched_sends || h->unmatched_recvs)
			printf("  unmatched  %" PRIu64 " sends, %" PRIu64 " receives\n",
			       h->unmatched_sends, h->unmatched_recvs);
	}
	printf("\npairs (a -> b / b -> a)\n");
	for (size_t i = 0; i < p->nlinks; i++) {
		const struct trawl_sync_link *l = &p->links[i];
		const struct trawl_sync_pair *r = &s->pairs[i];
		int64_t bm = trawl_sync_pair_bound(r, r->fwd.t0);

		printf("  %s - %s  %s: messages %zu / %zu, lost %" PRIu64 " / %" PRIu64
		       ", duplicates %" PRIu64 " / %" PRIu64 ", violations %" PRIu64
		       ", bound mid %s, drift %+.6f ppm, hull %zu / %zu%s\n",
		       p->hosts[l->a].name, p->hosts[l->b].name, trawl_sync_quality_name(r->quality),
		       l->n_ab, l->n_ba, l->lost_ab, l->lost_ba, l->dup_ab, l->dup_ba, r->violations,
		       cli_bound_str(bm, b1, sizeof(b1)),
		       (trawl_sync_xform_rate(&r->fwd) - 1.0) * 1e6, r->hull_ab, r->hull_ba,
		       r->dropped ? " (points dropped)" : "");
	}
	if (!p->nlinks)
		printf("  none\n");
	printf("\ngroups %zu%s\n", s->ngroups,
	       s->ngroups > 1 ? " (disconnected: no message between them; their clocks are "
				"not aligned with each other)" : "");
	for (size_t g = 0; g < s->ngroups; g++) {
		printf("  group %zu (%zu host%s):", g, group_size(s, g), group_size(s, g) == 1 ? "" : "s");
		for (size_t i = 0; i < p->nhosts; i++)
			if (s->no[i].nd.group == g)
				printf(" %s%s", p->hosts[i].name, s->no[i].is_ref ? " (reference)" : "");
		putchar('\n');
	}
	if (p->same_host || p->bad_events)
		printf("ignored: %" PRIu64 " keys sent and received on one node, %" PRIu64
		       " events lacking a field\n", p->same_host, p->bad_events);
	if (stored)
		printf("stored %s\n", stored);
}

static void print_json(const struct sync_run *s, const char *stored)
{
	const struct trawl_sync_points *p = s->p;
	struct json j;

	tr_json_init(&j);
	tr_json_obj(&j);
	tr_json_kv_str(&j, "session", s->session);
	tr_json_kv_str(&j, "mode", s->incremental ? "incremental" : "batch");
	tr_json_kv_u64(&j, "events", p->events);
	tr_json_key(&j, "messages");
	tr_json_obj(&j);
	tr_json_kv_u64(&j, "total", s->messages);
	tr_json_kv_u64(&j, "probe", p->by_kind[0]);
	tr_json_kv_u64(&j, "tcp", p->by_kind[1]);
	tr_json_kv_u64(&j, "match", p->by_kind[2]);
	tr_json_obj_end(&j);
	tr_json_kv_u64(&j, "same_host", p->same_host);
	tr_json_kv_u64(&j, "bad_events", p->bad_events);
	tr_json_key(&j, "hosts");
	tr_json_arr(&j);
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct trawl_sync_host *h = &p->hosts[i];
		const struct node_out *o = &s->no[i];

		tr_json_obj(&j);
		tr_json_kv_str(&j, "host", h->name);
		tr_json_key(&j, "traces");
		tr_json_arr(&j);
		for (size_t k = 0; k < h->npaths; k++)
			tr_json_str(&j, h->paths[k]);
		tr_json_arr_end(&j);
		tr_json_kv_i64(&j, "start_ns", o->start);
		tr_json_kv_i64(&j, "end_ns", o->end);
		tr_json_key(&j, "drift_ppm");
		tr_json_fixed(&j, o->ppm, 6);
		tr_json_key(&j, "factor");
		tr_json_fixed(&j, o->factor, 15);
		tr_json_kv_i64(&j, "offset_ns", o->offset);
		tr_json_key(&j, "offset_s");
		tr_json_fixed(&j, (double)o->offset / 1e9, 9);
		tr_json_key(&j, "bound_start_ns");
		json_bound(&j, o->b_start);
		tr_json_key(&j, "bound_mid_ns");
		json_bound(&j, o->b_mid);
		tr_json_key(&j, "bound_end_ns");
		json_bound(&j, o->b_end);
		tr_json_key(&j, "bound_max_ns");
		json_bound(&j, o->b_max);
		tr_json_kv_str(&j, "quality", quality_str(o));
		tr_json_key(&j, "fallback");
		if (o->fallback[0])
			tr_json_str(&j, o->fallback);
		else
			tr_json_null(&j);
		tr_json_kv_str(&j, "reference", p->hosts[o->nd.ref].name);
		tr_json_kv_u64(&j, "group", o->nd.group);
		tr_json_kv_u64(&j, "hops", o->nd.hops);
		tr_json_kv_str(&j, "path", o->path);
		tr_json_key(&j, "xform");
		json_xform(&j, &o->nd.to_ref);
		tr_json_kv_u64(&j, "sends", h->sends);
		tr_json_kv_u64(&j, "recvs", h->recvs);
		tr_json_kv_u64(&j, "unmatched_sends", h->unmatched_sends);
		tr_json_kv_u64(&j, "unmatched_recvs", h->unmatched_recvs);
		tr_json_obj_end(&j);
	}
	tr_json_arr_end(&j);
	tr_json_key(&j, "pairs");
	tr_json_arr(&j);
	for (size_t i = 0; i < p->nlinks; i++) {
		const struct trawl_sync_link *l = &p->links[i];
		const struct trawl_sync_pair *r = &s->pairs[i];

		tr_json_obj(&j);
		tr_json_kv_str(&j, "a", p->hosts[l->a].name);
		tr_json_kv_str(&j, "b", p->hosts[l->b].name);
		tr_json_kv_str(&j, "quality", trawl_sync_quality_name(r->quality));
		tr_json_kv_u64(&j, "messages_ab", l->n_ab);
		tr_json_kv_u64(&j, "messages_ba", l->n_ba);
		tr_json_kv_u64(&j, "lost_ab", l->lost_ab);
		tr_json_kv_u64(&j, "lost_ba", l->lost_ba);
		tr_json_kv_u64(&j, "duplicates_ab", l->dup_ab);
		tr_json_kv_u64(&j, "duplicates_ba", l->dup_ba);
		tr_json_kv_u64(&j, "violations", r->violations);
		tr_json_key(&j, "bound_mid_ns");
		json_bound(&j, trawl_sync_pair_bound(r, r->fwd.t0));
		tr_json_key(&j, "drift_ppm");
		tr_json_fixed(&j, (trawl_sync_xform_rate(&r->fwd) - 1.0) * 1e6, 6);
		tr_json_kv_u64(&j, "hull_ab", r->hull_ab);
		tr_json_kv_u64(&j, "hull_ba", r->hull_ba);
		tr_json_kv_u64(&j, "dropped", r->dropped);
		tr_json_key(&j, "fwd");
		json_xform(&j, &r->fwd);
		tr_json_obj_end(&j);
	}
	tr_json_arr_end(&j);
	tr_json_key(&j, "groups");
	tr_json_arr(&j);
	for (size_t g = 0; g < s->ngroups; g++) {
		tr_json_obj(&j);
		tr_json_key(&j, "reference");
		for (size_t i = 0; i < p->nhosts; i++)
			if (s->no[i].nd.group == g && s->no[i].is_ref)
				tr_json_str(&j, p->hosts[i].name);
		tr_json_key(&j, "hosts");
		tr_json_arr(&j);
		for (size_t i = 0; i < p->nhosts; i++)
			if (s->no[i].nd.group == g)
				tr_json_str(&j, p->hosts[i].name);
		tr_json_arr_end(&j);
		tr_json_obj_end(&j);
	}
	tr_json_arr_end(&j);
	tr_json_key(&j, "stored");
	if (stored)
		tr_json_str(&j, stored);
	else
		tr_json_null(&j);
	if (s->losses)
		cli_json_raw_member(&j, "losses", s->losses);	/* trawl(1) */
	tr_json_obj_end(&j);
	tr_json_char(&j, '\n');
	if (tr_json_flush(&j, stdout))
		cli_err("out of memory");
	tr_json_release(&j);
}

/* -------------------------------------------------------------- store */

static int store(const struct sync_run *s, const char *path)
{
	const struct trawl_sync_points *p = s->p;
	struct trawl_sync_store_entry *e = calloc(p->nhosts + 1, sizeof(*e));
	char err[512];
	int rc;

	if (!e)
		return cli_err("out of memory");
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct node_out *o = &s->no[i];
		e[i] = (struct trawl_sync_store_entry){
			.host = p->hosts[i].name, .xform = o->nd.to_ref, .quality = o->quality,
			.is_ref = o->is_ref && o->quality != TRAWL_SYNC_ABSENT,
			.reference = p->hosts[o->nd.ref].name, .group = o->nd.group,
			.hops = o->nd.hops, .path = o->path, .first_ts = o->start, .last_ts = o->end,
			.bound_start = o->b_start, .bound_mid = o->b_mid, .bound_end = o->b_end,
			.bound_max = o->b_max,
		};
	}
	rc = trawl_sync_store_write(path, e, p->nhosts, err, sizeof(err));
	free(e);
	if (rc)
		return cli_err("%s", err);
	return 0;
}

/* -------------------------------------------------------------- apply */

/* The corrected clock of a trace of a node with transform x. */
#define clock_fix trawl_ctf_clock_values

/*
 * A clock (freq f, offset_s S, offset O cycles) read through x: new
 * frequency f / slope (an integer), offset so that the corrected time is
 * exact (within half a cycle) at the node's start.
 */
static int fix_clock(const struct trawl_ctf_clock *ck, const struct trawl_sync_xform *x,
		     int64_t start, struct clock_fix *out)
{
	long double a = (long double)x->slope / (long double)((int64_t)1 << TRAWL_SYNC_SHIFT);
	long double f = (long double)(ck->freq ? ck->freq : (uint64_t)NSEC);
	long double nf = roundl(f / a), cs, q, qi, qf, rem;
	int64_t ts = trawl_sync_xform_apply(x, start), base, sp, off_ns;

	if (!(nf >= 1 && nf < 1.8e19L))
		return -1;
	/* a clock or times so far out that the figures leave int64 (a corrupt
	 * offset or timestamp): not corrected, said by the caller */
	if (__builtin_mul_overflow(ck->offset_s, (int64_t)NSEC, &off_ns))
		return -1;
	/* cycles of this clock at the node's start */
	cs = ((long double)start - (long double)off_ns) * f / 1e9L - (long double)ck->offset;
	q = cs * 1e9L / nf;	/* ns of the new clock from its zero to the start */
	qi = floorl(q);
	qf = q - qi;
	if (!(qi > -9.2e18L && qi < 9.2e18L) || __builtin_sub_overflow(ts, (int64_t)qi, &base))
		return -1;
	/* base: the new clock's zero, + qf ns */
	sp = base / NSEC;
	if (base % NSEC < 0)
		sp--;
	rem = (long double)(base - sp * NSEC) - qf;
	out->freq = (uint64_t)nf;
	out->offset_s = sp;
	out->offset = (int64_t)llroundl(rem * nf / 1e9L);
	while (out->offset < 0) {
		out->offset += (int64_t)out->freq;
		out->offset_s--;
	}
	while ((uint64_t)out->offset >= out->freq) {
		out->offset -= (int64_t)out->freq;
		out->offset_s++;
	}
	return 0;
}

/* from linked (or copied) to to, its size or what was copied counted in pg */
static int copy_or_link(const char *from, const char *to, uint64_t size, struct cli_progress *pg)
{
	char buf[1 << 16];
	int in, outfd, rc = 0;
	ssize_t r;

	if (link(from, to) == 0) {
		cli_progress_add(pg, size);
		return 0;
	}
	in = open(from, O_RDONLY);
	if (in < 0)
		return -errno;
	outfd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (outfd < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		if ((rc = tr_write_all(outfd, buf, (size_t)r)))
			break;	/* its own errno: ENOSPC says so */
		cli_progress_add(pg, (uint64_t)r);
	}
	if (r < 0)
		rc = -errno;
	if (close(outfd) && !rc)
		rc = -errno;
	close(in);
	return rc;
}

/* Files of dir (regular, not "metadata") linked or copied into out. */
static int copy_dir_files(const char *dir, const char *out, int *nfiles, struct cli_progress *pg)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return -errno;
	while (!rc && (de = readdir(d))) {
		char *from, *to;
		struct stat st;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "metadata"))
			continue;
		if (asprintf(&from, "%s/%s", dir, de->d_name) < 0)
			return -ENOMEM;
		if (asprintf(&to, "%s/%s", out, de->d_name) < 0) {
			free(from);
			return -ENOMEM;
		}
		if (stat(from, &st) == 0) {
			if (S_ISREG(st.st_mode)) {
				rc = copy_or_link(from, to, (uint64_t)st.st_size, pg);
				(*nfiles)++;
			} else if (S_ISDIR(st.st_mode) && !strcmp(de->d_name, "index")) {
				rc = tr_mkdir_p(to);
				if (!rc)
					rc = copy_dir_files(from, to, nfiles, pg);
			}
		}
		free(from);
		free(to);
	}
	closedir(d);
	return rc;
}

static bool empty_or_new(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return errno == ENOENT;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static int apply(const struct sync_run *s, const char *out)
{
	const struct trawl_sync_points *p = s->p;
	size_t slen = strlen(s->session), ntr = 0;
	int nfiles = 0;
	struct cli_progress pg;
	uint64_t total = 0;

	while (slen > 1 && s->session[slen - 1] == '/')
		slen--;
	if (!empty_or_new(out))
		return cli_err("%s exists and is not empty", out);
	for (size_t i = 0; i < p->nhosts; i++)
		for (size_t k = 0; k < p->hosts[i].npaths; k++)
			total += cli_dir_bytes(p->hosts[i].paths[k]);
	cli_progress_start(&pg, "trawl sync", s->progress, CLI_PROGRESS_BYTES, total);
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct node_out *o = &s->no[i];
		for (size_t k = 0; k < p->hosts[i].npaths; k++) {
			const char *tp = p->hosts[i].paths[k];
			const char *rel = "";
			char *dst = NULL, *mpath = NULL, *text = NULL, *newtext = NULL;
			char err[512], note[200];
			struct trawl_ctf_trace *m = NULL;
			struct clock_fix *fx = NULL;
			size_t tlen;
			int rc = 0;

			if (!strncmp(tp, s->session, slen) && (tp[slen] == '/' || !tp[slen]))
				rel = tp + slen + (tp[slen] == '/');
			else
				return cli_err("trace %s is not under %s", tp, s->session);
			if (asprintf(&dst, "%s/%s", out, rel) < 0 ||
			    asprintf(&mpath, "%s/metadata", tp) < 0)
				return cli_err("out of memory");
			if ((rc = tr_mkdir_p(dst))) {
				cli_err("%s: %s", dst, strerror(-rc));
				goto next;
			}
			text = trawl_ctf_metadata_read(mpath, &tlen, err, sizeof(err));
			if (!text) {
				rc = cli_err("%s", err);
				goto next;
			}
			m = trawl_ctf_metadata_parse(text, tlen, err, sizeof(err));
			if (!m) {
				rc = cli_err("%s: %s", mpath, err);
				goto next;
			}
			fx = calloc(m->nclocks + 1, sizeof(*fx));
			if (!fx) {
				rc = cli_err("out of memory");
				goto next;
			}
			for (size_t c = 0; c < m->nclocks; c++)
				if (fix_clock(&m->clocks[c], &o->nd.to_ref, o->start, &fx[c])) {
					rc = cli_err("%s: cannot correct clock %s", mpath,
						     m->clocks[c].name);
					goto next;
				}
			snprintf(note, sizeof(note), "corrected by trawl sync: %s on %s's clock, "
				 "quality %s", p->hosts[i].name, p->hosts[o->nd.ref].name,
				 quality_str(o));
			char why[256];
			newtext = trawl_ctf_metadata_set_clocks(text, tlen, fx, m->nclocks, note, why,
								sizeof(why));
			if (!newtext) {
				rc = cli_err("%s: %s", mpath, why);
				goto next;
			}
			{
				/* a symbolic link there is refused, not followed
				 * (util/outfile.h) */
				struct tr_outfile of;
				char *mout;

				if (asprintf(&mout, "%s/metadata", dst) < 0) {
					rc = cli_err("out of memory");
					goto next;
				}
				rc = tr_outfile_open(&of, mout, 0, 0644, err, sizeof(err));
				free(mout);
				if (!rc && !(rc = tr_write_all(of.fd, newtext, strlen(newtext))))
					rc = tr_outfile_commit(&of, err, sizeof(err));
				else if (rc && of.path)
					snprintf(err, sizeof(err), "%s: %s", of.path, strerror(-rc));
				tr_outfile_release(&of);
				cli_progress_add(&pg, tlen);
				if (rc) {
					rc = cli_err("%s", err);
					goto next;
				}
			}
			if ((rc = copy_dir_files(tp, dst, &nfiles, &pg))) {
				rc = cli_err("copying %s: %s", tp, strerror(-rc));
				goto next;
			}
			ntr++;
next:
			trawl_ctf_trace_free(m);
			free(fx);
			free(text);
			free(newtext);
			free(dst);
			free(mpath);
			if (rc) {
				cli_progress_end(&pg, false);
				return 1;
			}
		}
	}
	cli_progress_end(&pg, true);
	cli_note("wrote %s: %zu trace%s with corrected clocks, %d data and "
		 "index files linked or copied", out, ntr, ntr == 1 ? "" : "s", nfiles);
	return 0;
}

/* ------------------------------------------------- for print and info */

int cli_sync_load(const char *const *paths, size_t npaths, int no_sync,
		  struct trawl_reader_opts *ro, struct trawl_sync_store **store)
{
	char err[1024], *path;
	struct trawl_sync_store *s;
	char refs[256] = "", weak[512] = "";
	size_t rl = 0, wl = 0, nweak = 0;

	*store = NULL;
	if (no_sync)
		return 0;
	path = trawl_sync_store_find(paths, npaths);
	if (!path)
		return errno == ENOENT ? 0 : cli_err("out of memory");
	s = trawl_sync_store_load(path, err, sizeof(err));
	if (!s) {
		cli_err("%s", err);
		cli_hint("run trawl sync again, or read raw clocks with --no-sync");
		free(path);
		return 1;
	}
	size_t ncorrected = 0;
	for (size_t i = 0; i < s->n; i++)
		ncorrected += !s->entries[i].is_ref && s->entries[i].quality != TRAWL_SYNC_ABSENT;
	if (!ncorrected) {
		/* an earlier trawl's result for one host, or hosts without a
		 * message between them: nothing to apply, nothing to claim */
		cli_note("%s: no clock corrected (%s): clocks read as recorded", path,
			 s->n == 1 ? "one host only" : "no message between the hosts");
		trawl_sync_store_free(s);
		free(path);
		return 0;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct trawl_sync_store_entry *e = &s->entries[i];
		if (e->is_ref && rl < sizeof(refs))
			rl += (size_t)snprintf(refs + rl, sizeof(refs) - rl, "%s%s", rl ? ", " : "",
					       e->host);
		if (!e->is_ref && (e->quality != TRAWL_SYNC_ACCURATE ||
				   e->bound_max == TRAWL_SYNC_UNBOUNDED)) {
			if (nweak++ < 4 && wl < sizeof(weak))
				wl += (size_t)snprintf(weak + wl, sizeof(weak) - wl, "%s%s %s",
						       wl ? ", " : "", e->host,
						       trawl_sync_quality_name(e->quality));
		}
	}
	cli_note("clocks corrected by %s (reference%s %s%s%s%s%s)", path,
		 s->groups > 1 ? "s" : "", refs[0] ? refs : "none",
		 s->groups > 1 ? "; groups not aligned with each other" : "",
		 nweak ? "; without a bound: " : "", weak, nweak > 4 ? ", ..." : "");
	free(path);
	ro->fixes = s->fixes;
	ro->nfixes = s->nfixes;
	*store = s;
	return 0;
}

/* ---------------------------------------------------------------- main */

/* -------------------------------------------------------------- live */

static volatile int live_stop;	/* SIGINT, SIGTERM */

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * NSEC + t.tv_nsec;
}

static void on_live_stop(int sig)
{
	(void)sig;
	live_stop = 1;
}

/* What was last said of a node. */
struct live_last {
	char *host, *ref;
	int64_t offset, bound;
	double ppm;
	int quality;
};

struct live_run {
	struct trawl_sync_finder *f;
	const struct trawl_sync_opts *so;
	const char *url, *ref_name;
	bool json, incremental;
	int64_t every_ns, next_ns;	/* monotonic */
	struct live_last *last;
	size_t nlast;
	struct sync_run fin;		/* the last estimate (its points kept) */
	char *pinned;			/* the reference chosen once nodes exchanged
					 * messages (no -r): kept, so that the lines
					 * do not jump to another reference */
	int status;
};

/* Frees what compute() and the points reading made of s (every run's). */
static void run_release(struct sync_run *s)
{
	if (s->p)
		for (size_t i = 0; s->no && i < s->p->nhosts; i++)
			free(s->no[i].path);
	for (size_t i = 0; s->pairs && s->p && i < s->p->nlinks; i++)
		trawl_sync_pair_release(&s->pairs[i]);
	free(s->pairs);
	free(s->no);
	trawl_sync_graph_free(s->g);
	trawl_sync_points_free(s->p);
	memset(s, 0, sizeof(*s));
	s->ref = -1;
}

static const char *live_quality(const struct node_out *o)
{
	/* a node that has exchanged no message yet: said so, not aligned */
	return o->quality == TRAWL_SYNC_ABSENT ? "unsynchronized" : quality_str(o);
}

/* One node's estimate, as a line (it changed since the last said). */
static void live_line(struct live_run *lr, const struct sync_run *s, size_t i, int64_t offset)
{
	const struct node_out *o = &s->no[i];
	const char *host = s->p->hosts[i].name, *ref = s->p->hosts[o->nd.ref].name;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (lr->json) {
		struct json j;
		tr_json_init(&j);
		tr_json_obj(&j);
		tr_json_kv_str(&j, "type", "node");
		tr_json_kv_i64(&j, "wall_ns", (int64_t)now.tv_sec * NSEC + now.tv_nsec);
		tr_json_kv_str(&j, "host", host);
		tr_json_kv_str(&j, "reference", ref);
		tr_json_kv_str(&j, "quality", live_quality(o));
		tr_json_kv_i64(&j, "at_ns", o->end);
		tr_json_kv_i64(&j, "offset_ns", offset);
		tr_json_key(&j, "drift_ppm");
		tr_json_fixed(&j, o->ppm, 3);
		tr_json_key(&j, "bound_ns");
		json_bound(&j, o->b_end);
		tr_json_key(&j, "to_reference");
		json_xform(&j, &o->nd.to_ref);
		tr_json_kv_u64(&j, "messages", s->messages);
		tr_json_obj_end(&j);
		tr_json_char(&j, '\n');
		tr_json_flush(&j, stdout);
		tr_json_release(&j);
	} else {
		char b[64], t[32];
		struct tm tm;
		gmtime_r(&now.tv_sec, &tm);
		strftime(t, sizeof(t), "%H:%M:%S", &tm);
		printf("%s.%03ld %s: offset %+.9f s, drift %+.3f ppm, bound %s, %s, reference %s, "
		       "%" PRIu64 " messages\n", t, now.tv_nsec / 1000000, host, (double)offset / 1e9,
		       o->ppm, cli_bound_str(o->b_end, b, sizeof(b)), live_quality(o), ref, s->messages);
	}
	fflush(stdout);
}

/* The points so far put on the reference clock; a line per node whose
 * estimate changed. A reference asked for and not seen yet: not yet. */
static int live_estimate(struct live_run *lr)
{
	char err[512];
	struct trawl_sync_points *p = trawl_sync_finder_snapshot(lr->f, err, sizeof(err));
	if (!p)
		return cli_err("%s", err);
	const char *ref_name = lr->ref_name ? lr->ref_name : lr->pinned;
	bool ref_seen = !ref_name;
	for (size_t i = 0; i < p->nhosts && !ref_seen; i++)
		ref_seen = !strcmp(p->hosts[i].name, ref_name);
	if (!p->nhosts || !ref_seen) {
		trawl_sync_points_free(p);
		return 0;
	}
	struct sync_run s = { .session = lr->url, .p = p, .ref = -1,
			      .incremental = lr->incremental };
	int rc = compute(&s, lr->so, ref_name);
	if (rc) {
		run_release(&s);
		return rc;
	}
	s.pinned_ref = !lr->ref_name && ref_name;
	/* the automatic reference of the first node put on one: pinned */
	for (size_t i = 0; !ref_name && i < p->nhosts; i++)
		if (!s.no[i].is_ref && s.no[i].quality != TRAWL_SYNC_ABSENT) {
			if (!(lr->pinned = strdup(p->hosts[s.no[i].nd.ref].name))) {
				run_release(&s);
				return cli_err("out of memory");
			}
			break;
		}
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct node_out *o = &s.no[i];
		int64_t offset = sat_sub(o->end, trawl_sync_xform_apply(&o->nd.to_ref, o->end));
		const char *ref = p->hosts[o->nd.ref].name;
		struct live_last *l = NULL;
		for (size_t k = 0; k < lr->nlast && !l; k++)
			if (!strcmp(lr->last[k].host, p->hosts[i].name))
				l = &lr->last[k];
		if (!l) {
			struct live_last *n = realloc(lr->last, (lr->nlast + 1) * sizeof(*n));
			if (!n) {
				run_release(&s);
				return cli_err("out of memory");
			}
			lr->last = n;
			l = &n[lr->nlast++];
			*l = (struct live_last){ .host = strdup(p->hosts[i].name), .quality = -1 };
			if (!l->host) {
				lr->nlast--;
				run_release(&s);
				return cli_err("out of memory");
			}
		}
		if (l->quality == (int)o->quality && l->offset == offset && l->bound == o->b_end &&
		    l->ppm == o->ppm && l->ref && !strcmp(l->ref, ref))
			continue;
		char *nref = strdup(ref);
		if (!nref) {
			run_release(&s);
			return cli_err("out of memory");
		}
		free(l->ref);
		*l = (struct live_last){ .host = l->host, .ref = nref, .offset = offset,
					 .bound = o->b_end, .ppm = o->ppm, .quality = (int)o->quality };
		live_line(lr, &s, i, offset);
	}
	run_release(&lr->fin);
	lr->fin = s;
	return 0;
}

/* at most every lr->every_ns, as the events come or the reader waits */
static int live_maybe(struct live_run *lr)
{
	int64_t now = mono_ns();
	if (lr->status || now < lr->next_ns)
		return 0;
	lr->next_ns = now + lr->every_ns;
	if ((lr->status = live_estimate(lr)))
		return -ECANCELED;
	return 0;
}

static int live_events(void *self, const struct trawl_event *ev, size_t n)
{
	(void)ev;
	(void)n;
	return live_maybe(self);
}

static int live_idle(void *self, struct trawl_reader *r)
{
	(void)r;
	return live_maybe(self);
}

static int live_finish(void *self, struct trawl_reader *r)
{
	(void)r;
	struct live_run *lr = self;
	if (!lr->status)
		lr->status = live_estimate(lr);
	return 0;
}

static const struct trawl_sink_ops live_ops = {
	.sz = sizeof(live_ops),
	.name = "sync-live",
	.events = live_events,
	.idle = live_idle,
	.finish = live_finish,
};

/*
 * `trawl sync --live URL`: the finder over the relay's live session, and
 * after it in the run an estimator that puts what was found so far on the
 * reference clock at most every -d seconds and says what changed. At the
 * session's end (or a signal): the whole result, as of a session, and
 * --save stores it.
 */
static int live_main(const char *url, struct cli_reader_opts *co,
		     const struct trawl_sync_points_opts *po, const struct trawl_sync_opts *so,
		     const char *ref_name, bool json, bool incremental, int64_t every_ns,
		     const char *save)
{
	char err[1024];
	int nbad = 0, status = 0;
	struct live_run lr = { .so = so, .url = url, .ref_name = ref_name, .json = json,
			       .incremental = incremental, .every_ns = every_ns,
			       .fin = { .ref = -1 } };
	const char *live[] = { url };
	co->live = live;
	co->nlive = 1;
	co->nbad = &nbad;
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	struct trawl_reader *r = NULL;

	if (!(lr.f = trawl_sync_finder_new(po, err, sizeof(err))))
		return cli_err("%s", err);
	if (!(r = cli_open_reader(NULL, 0, co, &ro, err, sizeof(err)))) {
		status = cli_err("%s", err);
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_live_stop };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	lr.next_ns = mono_ns() + every_ns;
	struct trawl_sink sinks[2] = { trawl_sync_finder_sink(lr.f), { &live_ops, &lr } };
	struct trawl_run_opts run = { .sz = sizeof(run), .stop = &live_stop };
	int rc = trawl_pipe_run(r, sinks, 2, &run);
	if (lr.status) {
		status = lr.status;
		goto out;
	}
	if (rc < 0 && rc != -ECANCELED) {
		status = cli_err("%s: %s", url, trawl_reader_error(r)[0] ? trawl_reader_error(r)
									   : strerror(-rc));
		goto out;
	}
	if (!lr.fin.p && ref_name && trawl_reader_ntraces(r)) {
		/* the session ended without the reference asked for: its hosts */
		char hosts[512] = "";
		size_t len = 0;
		for (size_t i = 0; i < trawl_reader_ntraces(r) && len < sizeof(hosts) - 1; i++) {
			const char *h = trawl_reader_trace_hostname(trawl_reader_trace_at(r, i));
			bool seen = false;	/* a host of several traces: said once */
			for (size_t j = 0; j < i && !seen; j++)
				seen = !strcmp(h, trawl_reader_trace_hostname(trawl_reader_trace_at(r, j)));
			if (!seen)
				len += (size_t)snprintf(hosts + len, sizeof(hosts) - len, "%s%s",
							len ? ", " : "", h);
		}
		status = cli_err("no host '%s' in %s (its hosts: %s)", ref_name, url, hosts);
		goto out;
	}
	if (!lr.fin.p) {
		status = cli_err("%s: no trace came", url);
		goto out;
	}
	if (lr.fin.p->nhosts > 1 && !lr.fin.messages)
		cli_warn("%s: no message between the nodes (looked for %s%s%s): nothing corrected",
			 url, po->no_probes ? "" : "trawl_sync:probe_* ",
			 po->no_tcp ? "" : "trawl_sync:tcp_* ", po->nmatches ? "--match events" : "");
	if (save && (status = store(&lr.fin, save)))
		goto out;
	if (json)
		print_json(&lr.fin, save);
	else
		print_text(&lr.fin, save);
	cli_flush_stdout();
	if (cli_reader_report(r, nbad))
		status = CLI_EXIT_FAILURE;
out:
	run_release(&lr.fin);
	for (size_t i = 0; i < lr.nlast; i++) {
		free(lr.last[i].host);
		free(lr.last[i].ref);
	}
	free(lr.last);
	free(lr.pinned);
	trawl_reader_free(r);
	trawl_sync_finder_free(lr.f);
	return status;
}

int cmd_sync(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "match", required_argument, NULL, 'm' },
		{ "reference", required_argument, NULL, 'r' },
		{ "incremental", no_argument, NULL, 1 },
		{ "json", no_argument, NULL, 2 },
		{ "no-store", no_argument, NULL, 3 },
		{ "apply", no_argument, NULL, 4 },
		{ "output", required_argument, NULL, 'o' },
		{ "max-drift", required_argument, NULL, 5 },
		{ "no-probes", no_argument, NULL, 6 },
		{ "no-tcp", no_argument, NULL, 7 },
		{ "live", no_argument, NULL, 8 },
		{ "delay", required_argument, NULL, 'd' },
		{ "save", required_argument, NULL, 9 },
		CLI_LIVE_OPTIONS,
		CLI_PROGRESS_OPTIONS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trawl_sync_match *matches = NULL;
	size_t nmatches = 0;
	struct trawl_sync_opts so = { .size = sizeof(so) };
	struct trawl_sync_points_opts po = { .size = sizeof(po) };
	struct sync_run s = { .ref = -1 };
	const char *ref_name = NULL, *out = NULL;
	bool json = false, no_store = false, do_apply = false, live = false;
	const char *save = NULL;
	int64_t every_ns = NSEC;
	struct cli_reader_opts co = { .wait_ms = CLI_WAIT_FOREVER };
	char err[1024], *stored = NULL;
	int c, status = 0, damaged = 0;
	struct cli_report rep = { 0 };

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:r:o:d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if ((status = cli_match_add(&matches, &nmatches, optarg)))
				goto out;
			break;
		case 'r':
			ref_name = optarg;
			break;
		case 1:
			s.incremental = true;
			break;
		case 2:
			json = true;
			break;
		case 3:
			no_store = true;
			break;
		case 4:
			do_apply = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 5: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v < 1 || v >= 1000000 || optarg[0] == '-') {
				status = cli_usage("--max-drift: '%s' is not a slope in 1..999999 ppm",
						   optarg);
				goto out;
			}
			so.max_drift_ppm = (uint32_t)v;
			break;
		}
		case 6:
			po.no_probes = 1;
			break;
		case 7:
			po.no_tcp = 1;
			break;
		case 8:
			live = true;
			break;
		case 'd': {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v >= 0.1) || v > 86400) {
				status = cli_usage("-d: '%s' is not a number of seconds, 0.1 or more",
						   optarg);
				goto out;
			}
			every_ns = (int64_t)(v * 1e9 + 0.5);
			break;
		}
		case 9:
			save = optarg;
			break;
		case CLI_OPT_WAIT:
			if ((status = cli_wait_arg(optarg, &co.wait_ms)))
				goto out;
			break;
		case CLI_OPT_FROM_NOW:
			co.from_now = true;
			break;
		case CLI_OPT_PROGRESS:
		case CLI_OPT_NO_PROGRESS:
			s.progress = c;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'h':
			sync_usage(stdout);
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
	if (argc - optind > 1) {
		status = cli_usage("one session at a time ('%s' is extra)", argv[optind + 1]);
		goto out;
	}
	if (do_apply != (out != NULL)) {
		status = cli_usage("%s", do_apply ? "--apply needs -o <dir>" :
				   "-o is the output of --apply");
		goto out;
	}
	if (po.no_probes && po.no_tcp && !nmatches) {
		status = cli_usage("--no-probes and --no-tcp leave nothing to match (add --match)");
		goto out;
	}
	if (live != !strncmp(argv[optind], "net://", 6)) {
		status = cli_usage(live ? "--live follows a relay's session: net://RELAY[:PORT]/session/NAME, "
					  "not '%s'"
					: "'%s' is a relay's session: follow it with --live", argv[optind]);
		goto out;
	}
	if (live && (do_apply || no_store)) {
		status = cli_usage("--live stores nothing but --save FILE, and applies nothing");
		goto out;
	}
	if (!live && (save || every_ns != NSEC)) {
		status = cli_usage("%s is for --live", save ? "--save" : "-d");
		goto out;
	}
	po.matches = matches;
	po.nmatches = nmatches;
	if (live) {
		status = live_main(argv[optind], &co, &po, &so, ref_name, json, s.incremental,
				   every_ns, save);
		goto out;
	}
	s.session = argv[optind];
	{
		struct stat st;
		if (cli_trace_paths((const char *const *)&s.session, 1)) {
			status = CLI_EXIT_FAILURE;
			goto out;
		}
		if (stat(s.session, &st)) {
			status = cli_err("%s: %s", s.session, strerror(errno));
			goto out;
		}
	}
	po.matches = matches;
	po.nmatches = nmatches;
	/* the pass over the session: how far through its bytes */
	struct cli_progress pg;
	struct trawl_sink pgsink = cli_progress_sink(&pg);
	cli_progress_start(&pg, "trawl sync", s.progress, CLI_PROGRESS_BYTES, 0);
	struct trawl_sink sinks[2] = { cli_report_sink(&rep), pgsink };	/* trawl(1) */
	po.sinks = sinks;
	po.bad_trace = cli_report_bad_trace;	/* skipped, reported: trawl(1) */
	po.bad_trace_arg = &rep.nbad;
	po.nsinks = pg.on ? 2 : 1;
	s.p = trawl_sync_points_read((const char *const *)&s.session, 1, &po, err, sizeof(err));
	if (!s.p) {
		status = cli_err("%s", err);
		goto out;
	}
	if (rep.status)
		damaged = rep.status;
	s.losses = rep.json;
	if (s.p->reader_errors) {
		cli_warn("%u corrupt stream%s (the rest is used): %s", s.p->reader_errors,
			 s.p->reader_errors == 1 ? "" : "s", s.p->first_error);
	}
	if (!s.p->nhosts) {
		status = cli_err("no trace in %s", s.session);
		goto out;
	}
	if ((status = compute(&s, &so, ref_name)))
		goto out;
	if (!no_store && asprintf(&stored, "%s%s%s", s.session,
				  s.session[strlen(s.session) - 1] == '/' ? "" : "/",
				  TRAWL_SYNC_STORE_NAME) < 0) {
		stored = NULL;
		status = cli_err("out of memory");
		goto out;
	}
	/*
	 * Nothing corrected (one host, or no message between any two): nothing
	 * is stored, and the result of an earlier run goes, as any run's
	 * result replaces the one before; print and info then read the
	 * clocks as recorded, and say nothing about corrections.
	 */
	if (s.p->nhosts == 1 || !s.messages) {
		if (stored && unlink(stored) == 0)
			cli_note("removed %s, an earlier result: this run corrects no clock", stored);
		free(stored);
		stored = NULL;
	}
	if (s.p->nhosts > 1 && !s.messages) {
		status = cli_err("no message between the nodes of %s (looked for %s%s%s); "
				 "nothing stored", s.session,
				 po.no_probes ? "" : "trawl_sync:probe_* ",
				 po.no_tcp ? "" : "trawl_sync:tcp_* ", nmatches ? "--match events" : "");
		goto out;
	}
	if (s.p->nhosts == 1)
		cli_note("%s: no clock corrected: one host only (%s), no other clock to align "
			 "with; nothing stored", s.session, s.p->hosts[0].name);
	else if (stored && (status = store(&s, stored)))
		goto out;
	if (json)
		print_json(&s, stored);
	else
		print_text(&s, stored);
	cli_flush_stdout();	/* its errno kept for cli_stdout_done() */
	if (do_apply)
		status = apply(&s, out);
	for (size_t i = 0; i < s.p->nhosts; i++)
		if (s.no[i].quality == TRAWL_SYNC_FAIL) {
			cli_warn("%s: quality fail (no line fits every "
				 "message); its correction is a fallback without a bound",
				 s.p->hosts[i].name);
		}
out:
	run_release(&s);
	for (size_t i = 0; i < nmatches; i++)
		trawl_sync_match_release(&matches[i]);
	free(matches);
	free(stored);
	free(rep.json);
	return status ? status : damaged;
}
