/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-cluster.c - `trawl cluster`: the nodes (agents) that joined a
 * relay, and session commands run on all of them or a selection, through
 * the relay's control socket (docs/cluster.md). The work is the agents'
 * verbs; the library's trawl_cluster_request() carries the request and
 * the answers; this file parses, and prints the answers with the time
 * each node applied the command, put on the relay's clock.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <trawl/cluster.h>

#include "cli.h"
#include "internal.h"
#include "util/config.h"
#include "util/escape.h"
#include "util/json.h"

#define ARGS_CAP 200		/* a request's arguments (the relay takes 256) */

static void usage(FILE *f)
{
	fputs("usage: trawl cluster [--control PATH] [--nodes GLOB] [--json] nodes\n"
	      "       trawl cluster [OPTIONS] create SESSION [--snapshot] [--enable GLOB]...\n"
	      "                     [KEY=VALUE]...\n"
	      "       trawl cluster [OPTIONS] start SESSION [--margin MS]\n"
	      "       trawl cluster [OPTIONS] stop|snapshot|destroy SESSION\n"
	      "Runs session commands on the nodes that joined a relay (trawl agent --relay),\n"
	      "through the relay's control socket (trawl relay --control PATH).\n"
	      "  nodes             every node the relay knows: up or down since when, its clock's\n"
	      "                    offset from the relay's (estimated, with the round trip), its\n"
	      "                    sessions, buffers in use and events discarded\n"
	      "  create SESSION    a session on every node, streamed to the relay (live timer\n"
	      "                    100 ms) as SESSION/NODE/ust; --snapshot: a flight recorder\n"
	      "                    instead, whose snapshots go to the relay; --enable GLOB:\n"
	      "                    events to record (default: every event); KEY=VALUE: more\n"
	      "                    settings of the session description (docs/agent.md)\n"
	      "  start SESSION     as trawl start on each node, all at one agreed time: the\n"
	      "                    relay's clock plus --margin MS (default 250; 0: at once),\n"
	      "                    put on each node's clock by its estimated offset; each node\n"
	      "                    prepares its trace on receipt and switches recording on then\n"
	      "  stop, destroy SESSION   as trawl stop, destroy on each node\n"
	      "  snapshot SESSION  every node's flight recorder streamed to the relay, into\n"
	      "                    one new session there: SESSION-snapshot-N/NODE/ust (and\n"
	      "                    NODE/kernel with kernel events)\n"
	      "Each node's answer is printed with the time the command took effect there\n"
	      "(for start: the time recording began),\n"
	      "on the relay's clock (the node's clock less its estimated offset), and the\n"
	      "spread of those times across the nodes.\n"
	      "  --control PATH    the relay's control socket (default: [relay] control)\n"
	      "  --nodes GLOB      only the nodes whose names match (default: every node)\n"
	      "  --timeout SEC     wait at most SEC for the nodes' answers (default 15)\n"
	      "  --json            one JSON object on stdout instead of text\n"
	      "Exit status: 0 when every selected node did it, 1 when one failed, did not\n"
	      "answer or is down (the others did it all the same), 2 on a usage error.\n", f);
}

/* A node's strings are the relay's and the node's, not ours: the text
 * output prints them escaped (tr_escape: no control character reaches the
 * terminal, so a node cannot fake a line such as "all nodes ok"); the
 * JSON output, which escapes them its own way, the strings as sent. */
struct strs {
	char *name, *addr, *sessions, *out, *err;
};

struct node_row {
	struct trawl_cluster_node n;	/* strings copied */
	char *name, *addr, *sessions, *out, *err;
	struct strs t;			/* the same, escaped for the text */
};

struct rows {
	struct node_row *v;
	size_t n, cap;
	bool oom;
};

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

static void on_node(void *arg, const struct trawl_cluster_node *n)
{
	struct rows *r = arg;
	if (tr_grow(&r->v, &r->cap, r->n, sizeof(*r->v)) < 0) {
		r->oom = true;
		return;
	}
	struct node_row *x = &r->v[r->n++];
	x->n = *n;
	x->name = dup0(n->name);
	x->addr = dup0(n->addr);
	x->sessions = dup0(n->sessions);
	x->out = dup0(n->out);
	x->err = dup0(n->err);
	x->t.name = tr_escape_dup(n->name, false);
	x->t.addr = tr_escape_dup(n->addr, false);
	x->t.sessions = tr_escape_dup(n->sessions, false);
	x->t.out = tr_escape_dup(n->out, true);	/* lines stay lines, each indented */
	x->t.err = tr_escape_dup(n->err, true);
	if (!x->name || !x->addr || !x->sessions || !x->out || !x->err || !x->t.name ||
	    !x->t.addr || !x->t.sessions || !x->t.out || !x->t.err)
		r->oom = true;
}

static void rows_free(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].addr);
		free(r->v[i].sessions);
		free(r->v[i].out);
		free(r->v[i].err);
		free(r->v[i].t.name);
		free(r->v[i].t.addr);
		free(r->v[i].t.sessions);
		free(r->v[i].t.out);
		free(r->v[i].t.err);
	}
	free(r->v);
}

static const char *state_name(enum trawl_cluster_state s)
{
	return s == TRAWL_CLUSTER_UP ? "up" : s == TRAWL_CLUSTER_DOWN ? "down" : "unknown";
}

static void when(char *buf, size_t len, uint64_t real_ns)
{
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

/* The text without its last newline, after the node's line, each of its
 * lines with the prefix. */
static void print_text(const char *prefix, const char *s)
{
	size_t n = strlen(s);
	while (n && s[n - 1] == '\n')
		n--;
	while (n) {
		const char *nl = memchr(s, '\n', n);
		size_t l = nl ? (size_t)(nl - s) : n;
		printf("%s%.*s\n", prefix, (int)l, s);
		s += nl ? l + 1 : l;
		n -= nl ? l + 1 : l;
	}
}

/* The relay's clock (ns) when the verb took effect on x. */
static int64_t relay_time(const struct node_row *x)
{
	return (int64_t)x->n.t_apply - x->n.offset_ns;
}

static bool applied(const struct node_row *x)
{
	return (x->n.flags & TRAWL_CLUSTER_ANSWER) && x->n.status == 0;
}

static void print_json(const struct rows *r, const char *verb, const char *session)
{
	struct json j;
	tr_json_init(&j);
	tr_json_obj(&j);
	tr_json_kv_str(&j, "request", verb);
	if (session)
		tr_json_kv_str(&j, "session", session);
	tr_json_key(&j, "nodes");
	tr_json_arr(&j);
	for (size_t i = 0; i < r->n; i++) {
		const struct node_row *x = &r->v[i];
		tr_json_obj(&j);
		tr_json_kv_str(&j, "name", x->name);
		tr_json_kv_str(&j, "state", state_name(x->n.state));
		tr_json_kv_str(&j, "address", x->addr);
		tr_json_kv_u64(&j, "since_ns", x->n.since);
		tr_json_key(&j, "offset_ns");
		if (x->n.flags & TRAWL_CLUSTER_OFFSET)
			tr_json_i64(&j, x->n.offset_ns);
		else
			tr_json_null(&j);
		tr_json_kv_u64(&j, "rtt_ns", x->n.rtt_ns);
		tr_json_kv_u64(&j, "buffers", x->n.buffers);
		tr_json_kv_u64(&j, "discarded", x->n.discarded);
		tr_json_kv_str(&j, "sessions", x->sessions);
		if (strcmp(verb, "nodes") != 0) {
			tr_json_kv_i64(&j, "status", x->n.status);
			if (x->n.flags & TRAWL_CLUSTER_ANSWER) {
				tr_json_kv_u64(&j, "applied_node_ns", x->n.t_apply);
				tr_json_kv_i64(&j, "applied_relay_ns", relay_time(x));
				tr_json_kv_u64(&j, "answered_node_ns", x->n.t_done);
			}
			tr_json_kv_str(&j, "output", x->out);
			tr_json_kv_str(&j, "error", x->err);
		}
		tr_json_obj_end(&j);
	}
	tr_json_arr_end(&j);
	tr_json_obj_end(&j);
	tr_json_char(&j, '\n');
	tr_json_flush(&j, stdout);
	tr_json_release(&j);
}

static void print_nodes(const struct rows *r)
{
	printf("%-16s %-5s %-19s %-24s %7s %9s  %s\n", "NODE", "STATE", "SINCE",
	       "CLOCK OFFSET (RTT)", "BUFFERS", "DISCARDED", "SESSIONS");
	for (size_t i = 0; i < r->n; i++) {
		const struct node_row *x = &r->v[i];
		char since[32], off[48] = "unknown";
		when(since, sizeof(since), x->n.since);
		if (x->n.flags & TRAWL_CLUSTER_OFFSET)
			snprintf(off, sizeof(off), "%+.3f ms (%.3f)", x->n.offset_ns / 1e6,
				 x->n.rtt_ns / 1e6);
		printf("%-16s %-5s %-19s %-24s %7" PRIu64 " %9" PRIu64 "  %s\n", x->t.name,
		       state_name(x->n.state), since, off, x->n.buffers, x->n.discarded,
		       *x->t.sessions ? x->t.sessions : "-");
	}
}

static void print_answers(const struct rows *r, const char *verb, const char *session)
{
	int64_t first = 0;
	bool any = false;
	uint64_t worst = 0;
	size_t ok = 0;
	for (size_t i = 0; i < r->n; i++)
		if ((r->v[i].n.flags & TRAWL_CLUSTER_ANSWER) &&
		    (!any || relay_time(&r->v[i]) < first)) {
			first = relay_time(&r->v[i]);
			any = true;
		}
	int64_t lo = INT64_MAX, last = INT64_MIN;
	for (size_t i = 0; i < r->n; i++) {
		const struct node_row *x = &r->v[i];
		if (x->n.state != TRAWL_CLUSTER_UP && !(x->n.flags & TRAWL_CLUSTER_ANSWER)) {
			char since[32];
			when(since, sizeof(since), x->n.since);
			printf("%-16s down   since %s: %s\n", x->t.name, since, x->t.err);
			continue;
		}
		if (!(x->n.flags & TRAWL_CLUSTER_ANSWER) || x->n.status < 0) {
			printf("%-16s failed %s\n", x->t.name, *x->t.err ? x->t.err : "no answer");
			continue;
		}
		const char *word = x->n.status == 0 ? "ok" : "failed";
		if (applied(x)) {
			ok++;
			if (relay_time(x) > last)
				last = relay_time(x);
			if (relay_time(x) < lo)
				lo = relay_time(x);
			if (x->n.rtt_ns > worst)
				worst = x->n.rtt_ns;
		}
		if (x->n.flags & TRAWL_CLUSTER_OFFSET)
			printf("%-16s %-6s at +%.3f ms (node clock %" PRIu64 ".%09" PRIu64 " s, offset "
			       "%+.3f ms +-%.3f), answered after %.3f ms\n", x->t.name, word,
			       (relay_time(x) - first) / 1e6, x->n.t_apply / 1000000000u,
			       x->n.t_apply % 1000000000u, x->n.offset_ns / 1e6, x->n.rtt_ns / 2e6,
			       (x->n.t_done - x->n.t_apply) / 1e6);
		else
			printf("%-16s %-6s at node clock %" PRIu64 ".%09" PRIu64 " s (offset not known "
			       "yet)\n", x->t.name, word, x->n.t_apply / 1000000000u,
			       x->n.t_apply % 1000000000u);
		print_text("    ", x->t.out);
		print_text("    ", x->t.err);
	}
	printf("%s%s%s: %zu of %zu nodes ok", verb, session ? " " : "", session ? session : "",
	       ok, r->n);
	if (ok > 1)
		printf("; took effect within %.3f ms of each other (relay's clock, offsets +-%.3f "
		       "ms)", (last - lo) / 1e6, worst / 2e6);
	printf("\n");
}

int cmd_cluster(int argc, char **argv)
{
	enum { O_CTL = 256, O_NODES, O_TIMEOUT, O_JSON, O_SNAP, O_ENABLE, O_MARGIN };
	static const struct option opts[] = {
		{ "control", required_argument, NULL, O_CTL },
		{ "nodes", required_argument, NULL, O_NODES },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "json", no_argument, NULL, O_JSON },
		{ "snapshot", no_argument, NULL, O_SNAP },
		{ "enable", required_argument, NULL, O_ENABLE },
		{ "margin", required_argument, NULL, O_MARGIN },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *ctl = NULL, *glob = NULL, *enables[64];
	size_t nen = 0;
	unsigned timeout_ms = 0;
	bool json = false, snap = false;
	char margin[32] = "";
	int c;
	optind = 1;
	opterr = 0;
	/* options anywhere: before or after the request */
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case O_CTL: ctl = optarg; break;
		case O_NODES: glob = optarg; break;
		case O_TIMEOUT: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 3600)
				return cli_usage("--timeout: '%s' is not a number of seconds from 1 to "
						 "3600", optarg);
			timeout_ms = (unsigned)v * 1000;
			break;
		}
		case O_JSON: json = true; break;
		case O_SNAP: snap = true; break;
		case O_MARGIN: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 0 || v > 10000)
				return cli_usage("--margin: '%s' is not a number of milliseconds from 0 "
						 "to 10000", optarg);
			snprintf(margin, sizeof(margin), "--margin=%ld", v);
			break;
		}
		case O_ENABLE:
			if (nen == sizeof(enables) / sizeof(enables[0]))
				return cli_usage("too many --enable");
			enables[nen++] = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default: return cli_opt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("no request (nodes, create, start, stop, snapshot, destroy)");
	const char *verb = argv[optind];
	static const char *const verbs[] = { "nodes", "create", "start", "stop", "snapshot",
					     "destroy" };
	bool known = false;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		known |= strcmp(verb, verbs[i]) == 0;
	if (!known)
		return cli_usage("unknown request '%s' (nodes, create, start, stop, snapshot, "
				 "destroy)", verb);
	bool nodes = strcmp(verb, "nodes") == 0, create = strcmp(verb, "create") == 0;
	int nargs = argc - optind - 1;
	if (nodes && nargs)
		return cli_usage("nodes: unexpected argument '%s'", argv[optind + 1]);
	if (!nodes && nargs < 1)
		return cli_usage("%s: no session name", verb);
	if (!create && nargs > 1)
		return cli_usage("%s: unexpected argument '%s'", verb, argv[optind + 2]);
	if ((snap || nen) && !create)
		return cli_usage("--snapshot and --enable go with create");
	if (*margin && strcmp(verb, "start") != 0)
		return cli_usage("--margin goes with start");
	for (int i = optind + 2; i < argc; i++)
		if (!strchr(argv[i], '='))
			return cli_usage("create: '%s' is not KEY=VALUE", argv[i]);
	/* the request below: the verb, the session, up to three settings of
	 * create's own, the events, then these */
	if (create && 5 + (nen ? nen : 1) + (size_t)(nargs - 1) > ARGS_CAP)
		return cli_usage("create: too many settings (at most %d with the events)",
				 ARGS_CAP - 5);
	char err[512];
	struct trawl_conf *conf = NULL;
	if (!ctl) {
		conf = tr_conf_load(err, sizeof(err));
		if (!conf)
			return cli_err("%s", err);
		ctl = tr_conf_get(conf, "relay", "control");
	}
	if (!ctl) {
		tr_conf_free(conf);
		cli_err("no control socket: give --control PATH (the relay's --control)");
		cli_hint("or control = PATH in the [relay] section of the config file");
		return CLI_EXIT_USAGE;
	}
	/* the request: the verb, the session, create's settings */
	char *req[ARGS_CAP];
	int n = 0;
	char *owned[64];
	size_t nowned = 0;
	req[n++] = (char *)verb;
	if (!nodes)
		req[n++] = argv[optind + 1];
	if (*margin)
		req[n++] = margin;
	if (create) {
		if (snap) {
			req[n++] = "snapshot=yes";
			req[n++] = "mode=overwrite";
			req[n++] = "clock=monotonic";
		} else {
			req[n++] = "relay=.";	/* the relay each agent joined */
			req[n++] = "live-timer=100";
		}
		for (size_t i = 0; i < nen; i++) {
			char *e = NULL;
			if (asprintf(&e, "event=%s", enables[i]) < 0) {
				for (size_t k = 0; k < nowned; k++)
					free(owned[k]);
				tr_conf_free(conf);
				return cli_err("out of memory");
			}
			req[n++] = owned[nowned++] = e;
		}
		if (!nen)
			req[n++] = "event=*";
		for (int i = optind + 2; i < argc; i++)
			req[n++] = argv[i];
	}
	struct rows rows = { 0 };
	int r = trawl_cluster_request(ctl, glob, n, req, timeout_ms, on_node, &rows, err,
				      sizeof(err));
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	if (r < 0) {
		tr_escape_ctl(err, sizeof(err));	/* it may hold the relay's words */
		cli_err("%s: %s", verb, err);
		r = CLI_EXIT_FAILURE;
	} else if (rows.oom) {
		r = cli_err("out of memory");
	} else if (json) {
		print_json(&rows, verb, nodes ? NULL : argv[optind + 1]);
	} else if (nodes) {
		print_nodes(&rows);
	} else {
		print_answers(&rows, verb, argv[optind + 1]);
	}
	rows_free(&rows);
	tr_conf_free(conf);
	return r;
}
