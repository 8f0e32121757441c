/* SPDX-License-Identifier: MIT */
/*
 * test-embed: the daemons as library objects, together in one process that
 * streams to itself. A relay (trawl/relay.h) and an agent (trawl/agent.h)
 * run in threads of this process; a session of the agent streams to the
 * relay (relay=, relay-session=, live-timer=); this process registers with
 * the agent as an application and a thread of it emits events; meanwhile
 * the main thread follows the session live from the relay's live port
 * through the reading pipeline (trawl_source_live(), a sink with a bound
 * field). Checked: the live reader sees every event, in order, with its
 * value, while the session records and ends when the session ends; the
 * relay's copy on disk holds the same events; both objects stop on
 * trawl_*_stop() and are freed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/agent.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/relay.h"
#include "trawl/tracepoint.h"

TRAWL_TRACEPOINT_EVENT(emb, tick, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq),
	TRAWL_FIELDS(TRAWL_FIELD_INT(uint64_t, seq, seq)))

/* defined here (not TRAWL_TRACEPOINT_DEFINE): registered once the agent
 * listens, see test-agent-embed.c */
static const struct trawl_tp_field tick_fields[] = {
	{ "seq", TRAWL_TP_INT, 8, 0, 10, 0, NULL },
	{ NULL, 0, 0, 0, 0, 0, NULL },
};
struct trawl_tp_event __trawl_ev_emb_tick = {
	0, 0, "emb", "tick", TRAWL_LOGLEVEL_INFO, tick_fields, NULL
};

#define N 20000

static char dir[] = "/tmp/trawl-test-embed-XXXXXX";

static void *run_relay(void *p)
{
	return (void *)(intptr_t)trawl_relay_run(p);
}

static void *run_agent(void *p)
{
	return (void *)(intptr_t)trawl_agent_run(p);
}

static void *emit(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < N; i++)
		trawl_tracepoint(emb, tick, i);
	return NULL;
}

static int req(const char *sock, const char *const *argv, int argc)
{
	char err[256];
	int r = trawl_agent_request(sock, argc, argv, NULL, NULL, err, sizeof(err));
	if (r)
		printf("# %s: %d %s\n", argv[0], r, err);
	return r;
}

/* The sink: emb:tick's seq, bound by name, must count 0, 1, ... */
struct seqs {
	const struct trawl_field *seq;
	uint64_t next, bad, n;
};

static int seqs_start(void *self, struct trawl_reader *r)
{
	struct seqs *s = self;
	char err[256];
	s->seq = trawl_field_bind(r, "emb:tick.seq", TRAWL_FIELD_INT, TRAWL_FIELD_OPTIONAL, err,
				  sizeof(err));
	if (!s->seq)
		printf("# bind: %s\n", err);
	return s->seq ? 0 : -EINVAL;
}

static int seqs_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct seqs *s = self;
	for (size_t i = 0; i < n; i++) {
		const union trawl_ctf_value *v = trawl_field_value(s->seq, &ev[i]);
		if (!v)
			continue;
		if (v->u != s->next++)
			s->bad++;
		s->n++;
	}
	return 0;
}

static const struct trawl_sink_ops seqs_ops = {
	.sz = sizeof(seqs_ops), .name = "seqs", .start = seqs_start, .events = seqs_events,
};

int main(void)
{
	char err[512] = "", out[300], sock[300], relay_addr[64], url[128], kv[300], kv2[64];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(out, sizeof(out), "%s/relay", dir);
	snprintf(sock, sizeof(sock), "%s/agent.sock", dir);

	struct trawl_relay_opts ro = {
		.sz = sizeof(ro), .output = out, .data_addr = "127.0.0.1:0", .live_addr = "127.0.0.1:0",
	};
	struct trawl_relay *relay = trawl_relay_new(&ro, err, sizeof(err));
	ok(relay, "a relay object on free loopback ports (%s)", err);
	struct trawl_agent_opts ao = { .sz = sizeof(ao), .socket = sock, .host = "embhost" };
	struct trawl_agent *agent = relay ? trawl_agent_new(&ao, err, sizeof(err)) : NULL;
	ok(agent, "an agent object on a private socket (%s)", err);
	if (!relay || !agent)
		return done_testing();
	pthread_t rt, at;
	ok(pthread_create(&rt, NULL, run_relay, relay) == 0 &&
	   pthread_create(&at, NULL, run_agent, agent) == 0, "both run in threads of this process");

	snprintf(relay_addr, sizeof(relay_addr), "127.0.0.1:%u", trawl_relay_data_port(relay));
	snprintf(url, sizeof(url), "net://127.0.0.1:%u/host/embhost/emb", trawl_relay_live_port(relay));
	setenv("TRAWL_AGENT_SOCKET", sock, 1);
	trawl_tp_register(&__trawl_ev_emb_tick);

	snprintf(kv, sizeof(kv), "relay=%s", relay_addr);
	snprintf(kv2, sizeof(kv2), "relay-session=emb");
	const char *create[] = { "create", "s", kv, kv2, "live-timer=20000", "clock=monotonic" };
	const char *enable[] = { "enable", "s", "emb:*" };
	const char *start[] = { "start", "s" };
	const char *stop[] = { "stop", "s" };
	ok(req(sock, create, 6) == 0 && req(sock, enable, 3) == 0 && req(sock, start, 2) == 0,
	   "a session of the agent streams to the relay (relay=%s)", relay_addr);

	/* the session, live, from the relay, while a thread records */
	struct trawl_source *src = NULL;
	for (int i = 0; i < 500 && !src; i++) {
		src = trawl_source_live(url, NULL, err, sizeof(err));
		if (!src)
			usleep(10000);	/* until the relay lists it (bounded) */
	}
	ok(src, "a live source over the relay's session (%s)", err);
	struct trawl_reader *r = src ? trawl_reader_open(&src, 1, NULL, err, sizeof(err)) : NULL;
	ok(r, "a reader over it (%s)", err);
	pthread_t et;
	pthread_create(&et, NULL, emit, NULL);

	/* read while the thread records: a run of N events (the session goes
	 * on until it is stopped below) */
	struct seqs sq = { 0 };
	struct trawl_sink k = { &seqs_ops, &sq };
	struct trawl_run_opts rn = { .sz = sizeof(rn), .limit = N };
	int rc = r ? trawl_pipe_run(r, &k, 1, &rn) : -1;
	pthread_join(et, NULL);
	ok(rc == 0 && sq.n == N && sq.bad == 0,
	   "the live reader: the %d events, in order, seq bound by name (%llu read, %llu out of order)",
	   N, (unsigned long long)sq.n, (unsigned long long)sq.bad);
	ok(req(sock, stop, 2) == 0, "stop the session");
	trawl_reader_free(r);

	/* the relay's copy */
	char path[400];
	snprintf(path, sizeof(path), "%s/emb", out);
	const char *paths[] = { path };
	struct trawl_reader *rf = trawl_reader_new(paths, 1, NULL, err, sizeof(err));
	uint64_t n = 0, next = 0, bad = 0;
	const struct trawl_event *ev;
	while (rf && trawl_reader_next(rf, &ev) > 0)
		if (!strcmp(ev->cls->name, "emb:tick")) {
			n++;
			bad += ev->values[ev->nvalues - 1].u != next++;
		}
	ok(rf && n == N && !bad, "the relay's copy on disk: the same %d events (%llu)", N,
	   (unsigned long long)n);
	trawl_reader_free(rf);

	trawl_agent_stop(agent);
	trawl_relay_stop(relay);
	void *ra, *rr;
	pthread_join(at, &ra);
	pthread_join(rt, &rr);
	ok((intptr_t)ra == 0 && (intptr_t)rr == 0, "both stop on trawl_*_stop() and their runs return 0");
	trawl_agent_free(agent);
	trawl_relay_free(relay);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path)) {
	}
	return done_testing();
}
