/* SPDX-License-Identifier: MIT */
/*
 * cli/match.c - filters that can never match (trawl(1), EXIT STATUS): a
 * --host glob that no trace's host name matches, an --event glob that no
 * event class of the hosts selected matches, a --cpu that no stream of
 * those hosts is of. Each is a usage error naming the nearest host or
 * event there is (the highest CPU), before any event is read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "internal.h"	/* tr_glob_match, tr_closest */
#include "net/live-client.h"	/* tr_live_url_parse */
#include "trawl/ctf.h"
#include "trawl/pipe.h"

struct strv {
	const char **v;
	size_t n, cap;
};

static int strv_add(struct strv *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], x))
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		const char **nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

static bool host_wanted(const char *h, const char *const *hosts, size_t nhosts)
{
	if (!nhosts)
		return true;
	for (size_t i = 0; i < nhosts; i++)
		if (tr_glob_match(hosts[i], h))
			return true;
	return false;
}

const char *cli_name_list(const char *const *v, size_t n, char *buf, size_t cap)
{
	size_t o = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n && o < cap; i++) {
		if (i == 8) {
			snprintf(buf + o, cap - o, ", ... (%zu in all)", n);
			break;
		}
		o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "",
				      *v[i] ? v[i] : "(no name)");
	}
	return buf;
}

static const char *list_text(const struct strv *s, char *buf, size_t cap)
{
	return cli_name_list(s->v, s->n, buf, cap);
}

void cli_near_hint(const char *name, const char *const *v, size_t n)
{
	const char *best = tr_closest(name, v, n, TR_NEAR);

	if (best)
		cli_hint("did you mean '%s'?", best);
}

static void near_hint(const char *name, const struct strv *s)
{
	cli_near_hint(name, s->v, s->n);
}

int cli_filters_check(const char *const *paths, size_t npaths, const char *const *hosts,
		      size_t nhosts, const char *const *events, size_t nevents, long cpu)
{
	bool cpu_seen = false;
	uint32_t cpu_max = 0;
	size_t nstreams = 0;

	if (!npaths || (!nhosts && !nevents && cpu < 0))
		return 0;
	struct trawl_reader_opts ro = {
		.sz = sizeof(ro), .threads = 1,
		.bad_trace = cli_report_bad_trace,	/* silent: the command's reader says it */
	};
	char err[512], list[512];
	struct trawl_reader *r = trawl_reader_new(paths, npaths, &ro, err, sizeof(err));
	struct strv hv = { 0 }, ev = { 0 };
	int status = 0;

	if (!r)
		return 0;	/* the command's own reader reports why */
	if (cpu >= 0) {
		/* a stream's CPU is in its packets: the merge's first event has
		 * read the first packet of every stream */
		const struct trawl_event *e;
		for (int k = 0; k < 100000 && trawl_reader_next(r, &e) < 0; k++)
			;	/* a corrupt stream: the next call goes on with the others */
	}
	for (size_t ti = 0; ti < trawl_reader_ntraces(r); ti++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, ti);
		const char *h = trawl_reader_trace_hostname(t);
		const struct trawl_ctf_trace *m = trawl_reader_trace_meta(t);

		if (strv_add(&hv, h)) {
			status = cli_err("out of memory");
			goto out;
		}
		if (!host_wanted(h, hosts, nhosts))
			continue;
		for (size_t i = 0; i < trawl_reader_trace_nstreams(t); i++) {
			struct trawl_reader_stream_stats st;
			trawl_reader_stream_stats(trawl_reader_trace_stream(t, i), &st);
			cpu_seen |= cpu >= 0 && st.cpu == (uint32_t)cpu;
			cpu_max = st.cpu > cpu_max ? st.cpu : cpu_max;
			nstreams++;
		}
		for (size_t i = 0; m && i < m->nstreams; i++)
			for (size_t j = 0; j < m->streams[i]->nevents; j++) {
				const char *name = m->streams[i]->events[j]->name;
				if (name && strv_add(&ev, name)) {
					status = cli_err("out of memory");
					goto out;
				}
			}
	}
	for (size_t i = 0; i < nhosts; i++) {
		size_t k;
		for (k = 0; k < hv.n && !tr_glob_match(hosts[i], hv.v[k]); k++)
			;
		if (k < hv.n)
			continue;
		cli_err("--host '%s': no host matches it (the host%s: %s)", hosts[i], CLI_S(hv.n),
			list_text(&hv, list, sizeof(list)));
		near_hint(hosts[i], &hv);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < nevents; i++) {
		size_t k;
		for (k = 0; k < ev.n && !tr_glob_match(events[i], ev.v[k]); k++)
			;
		if (k < ev.n)
			continue;
		cli_err("--event '%s': no event %smatches it", events[i],
			nhosts ? "of the hosts selected " : "");
		near_hint(events[i], &ev);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (cpu >= 0 && nstreams && !cpu_seen) {
		cli_err("--cpu %ld: no stream %sis of that CPU (the highest: %" PRIu32 ")", cpu,
			nhosts ? "of the hosts selected " : "", cpu_max);
		status = CLI_EXIT_USAGE;
	}
out:
	free(hv.v);
	free(ev.v);
	trawl_reader_free(r);
	return status;
}

int cli_live_check(const char *url)
{
	struct live_url u;
	char err[320];

	if (tr_live_url_parse(url, &u, err, sizeof(err)))
		return cli_usage("--live: %s", err);
	if (u.kind == LIVE_URL_RELAY)
		return cli_usage("--live: %s: name a session: net://RELAY[:PORT]/host/HOST/SESSION "
				 "or net://RELAY[:PORT]/session/SESSION", url);
	return 0;
}
