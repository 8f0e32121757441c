/* SPDX-License-Identifier: MIT */
/*
 * test-probe: the probe object (<trawl/probe.h>, lib/sync/probe.c)
 * embedded in one process, on loopback: node a only receives (in a
 * thread, until stopped), node b probes a, node c probes a under a wrong
 * name (a probe meant for another node: counted, logged once through the
 * hook, not recorded). The counters agree with each other and with the
 * traces; the options are checked; a stop before run() ends it at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/probe.h"
#include "trawl/sync-schema.h"
#include "tap.h"

static char dir[] = "/tmp/test-probe-XXXXXX";

struct logged {
	int n;
	char last[512];
};

static void on_log(void *arg, const char *msg)
{
	struct logged *l = arg;
	l->n++;
	snprintf(l->last, sizeof(l->last), "%s", msg);
}

static void *run_thread(void *arg)
{
	static char err[256];
	static int r;
	r = trawl_probe_run(arg, err, sizeof(err));
	return &r;
}

/* Events of name in DIR/host/sync, or -1. */
static long count(const char *host, const char *name)
{
	char path[256], err[256];
	snprintf(path, sizeof(path), "%s/%s/sync", dir, host);
	const char *paths[] = { path };
	struct trawl_reader *r = trawl_reader_new(paths, 1, NULL, err, sizeof(err));
	const struct trawl_event *ev;
	long n = 0;
	if (!r)
		return -1;
	while (trawl_reader_next(r, &ev) == 1)
		n += !strcmp(ev->cls->name, name);
	trawl_reader_free(r);
	return n;
}

static void options(void)
{
	char err[256] = "";
	struct trawl_probe_peer dup[] = { { "x", "127.0.0.1:9" }, { "x", "127.0.0.1:10" } };
	struct trawl_probe_peer self[] = { { "me", "127.0.0.1:9" } };
	struct trawl_probe_peer noport[] = { { "x", "127.0.0.1" } };
	struct trawl_probe_opts o = { .sz = sizeof(o), .dir = dir, .host = "me",
				      .listen = "127.0.0.1:0" };
	struct sockaddr_storage ss;
	socklen_t sl;

	ok(trawl_probe_name_valid("node-1.a_b") && !trawl_probe_name_valid("a b") &&
	   !trawl_probe_name_valid("") && !trawl_probe_name_valid(NULL), "node names");
	ok(trawl_probe_addr_parse("[::1]:7077", false, &ss, &sl, err, sizeof(err)) == 0 &&
	   ss.ss_family == AF_INET6, "[::1]:7077 is IPv6");
	is_int(trawl_probe_addr_parse("127.0.0.1:0", false, &ss, &sl, err, sizeof(err)), -EINVAL,
	       "port 0 is no peer address (%s)", err);
	ok(trawl_probe_addr_parse(":0", true, &ss, &sl, err, sizeof(err)) == 0 &&
	   ss.ss_family == AF_INET, "but listens on any IPv4 address");
	is_int(trawl_probe_addr_parse("::1:7", false, &ss, &sl, err, sizeof(err)), -EINVAL,
	       "IPv6 without brackets (%s)", err);

	o.peers = dup, o.npeers = 2;
	ok(!trawl_probe_new(&o, err, sizeof(err)) && errno == EINVAL && strstr(err, "twice"),
	   "a peer twice: EINVAL (%s)", err);
	o.peers = self, o.npeers = 1;
	ok(!trawl_probe_new(&o, err, sizeof(err)) && errno == EINVAL && strstr(err, "this node"),
	   "a peer named like this node: EINVAL (%s)", err);
	o.peers = noport;
	ok(!trawl_probe_new(&o, err, sizeof(err)) && errno == EINVAL, "a peer without port (%s)",
	   err);
	o.peers = NULL, o.npeers = 0, o.host = "bad name";
	ok(!trawl_probe_new(&o, err, sizeof(err)) && errno == EINVAL, "a bad host name (%s)", err);
	o.host = "me", o.sz = 8;
	ok(!trawl_probe_new(&o, err, sizeof(err)) && errno == EINVAL, "options too small");
	trawl_probe_free(NULL);
	ok(1, "trawl_probe_free(NULL)");
}

int main(void)
{
	char err[256] = "", addr[128];
	struct logged la = { 0 };

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	options();

	/* a: receives only, until stopped */
	struct trawl_probe_opts oa = { .sz = sizeof(oa), .dir = dir, .host = "a",
				       .listen = "127.0.0.1:0", .log = on_log, .log_arg = &la };
	struct trawl_probe *a = trawl_probe_new(&oa, err, sizeof(err));
	ok(a != NULL, "probe a listens (%s)", err);
	if (!a)
		return done_testing();
	trawl_probe_listen_addr(a, addr, sizeof(addr));
	ok(!strncmp(addr, "127.0.0.1:", 10) && strcmp(addr, "127.0.0.1:0"), "on a port of its own: %s",
	   addr);

	/* b probes a; c probes a's address under the name z */
	struct trawl_probe_peer pb[] = { { "a", addr } }, pc[] = { { "z", addr } };
	struct trawl_probe_opts ob = { .sz = sizeof(ob), .dir = dir, .host = "b",
				       .listen = "127.0.0.1:0", .peers = pb, .npeers = 1,
				       .rate = 200, .duration_ns = 300000000 };
	struct trawl_probe_opts oc = ob;
	oc.host = "c", oc.peers = pc, oc.rate = 20;
	struct trawl_probe *b = trawl_probe_new(&ob, err, sizeof(err));
	struct trawl_probe *c = b ? trawl_probe_new(&oc, err, sizeof(err)) : NULL;
	ok(b && c, "probes b and c (%s)", err);
	if (!b || !c)
		return done_testing();

	pthread_t th;
	pthread_create(&th, NULL, run_thread, a);
	pthread_t tc;
	pthread_create(&tc, NULL, run_thread, c);
	is_int(trawl_probe_run(b, err, sizeof(err)), 0, "b runs its duration (%s)", err);
	is_int(trawl_probe_run(b, err, sizeof(err)), -EALREADY, "and only once");
	void *rc;
	pthread_join(tc, &rc);
	usleep(50000);			/* the last probes reach a */
	trawl_probe_stop(a);
	pthread_join(th, &rc);
	is_int(*(int *)rc, 0, "a stops when told, from another thread");

	struct trawl_probe_stats sa, sb, sc;
	struct trawl_probe_peer_stats ps;
	trawl_probe_stats(a, &sa);
	trawl_probe_stats(b, &sb);
	trawl_probe_stats(c, &sc);
	/* a loaded machine runs b late: the ticks it let go are counted, and
	 * sent + late is the rate times the time (60, one more at its start) */
	ok(sb.sent >= 1 && sb.sent + sb.ticks_late >= 55 && sb.sent + sb.ticks_late <= 61 &&
	   !sb.send_failed, "b sent 60 probes in 0.3 s at 200/s, or let the ticks go as late "
	   "(%llu sent, %llu late)", (unsigned long long)sb.sent,
	   (unsigned long long)sb.ticks_late);
	ok(!trawl_probe_peer_stats(b, 0, &ps) && ps.sent == sb.sent, "b's peer a: the same count");
	is_int(trawl_probe_peer_stats(b, 1, &ps), -ERANGE, "b has one peer");
	is_int(sa.received, sb.sent, "a received every probe of b (loopback)");
	is_int(sa.from_unlisted, sa.received, "... from a node it does not list");
	is_int(sa.misaddressed, sc.sent, "every probe of c is misaddressed (meant for z)");
	ok(sc.sent > 0, "c sent some (%llu)", (unsigned long long)sc.sent);
	is_int(la.n, 1, "a logged that once");
	ok(strstr(la.last, "c sent a probe meant for 'z'") != NULL, "naming both: %s", la.last);
	trawl_probe_free(a);
	trawl_probe_free(b);
	trawl_probe_free(c);

	is_int(count("a", TRAWL_SYNC_PROBE_RECV), (long)sa.received, "a's trace: every receive");
	is_int(count("a", TRAWL_SYNC_PROBE_SEND), 0, "and no send");
	is_int(count("b", TRAWL_SYNC_PROBE_SEND), (long)sb.sent, "b's trace: every send");

	/* a finalized trace is not overwritten, unless forced */
	ok(!trawl_probe_new(&oa, err, sizeof(err)) && errno == EEXIST && strstr(err, "already holds"),
	   "a's trace exists: EEXIST (%s)", err);
	oa.force = true;
	a = trawl_probe_new(&oa, err, sizeof(err));
	ok(a != NULL, "force overwrites it");
	trawl_probe_free(a);

	/* stopped before it runs: run returns at once, the trace is finalized */
	struct trawl_probe_opts od = { .sz = sizeof(od), .dir = dir, .host = "d",
				       .listen = "127.0.0.1:0", .rate = 10, .peers = pb, .npeers = 1 };
	struct trawl_probe *d = trawl_probe_new(&od, err, sizeof(err));
	ok(d != NULL, "probe d (%s)", err);
	if (d) {
		trawl_probe_stop(d);
		is_int(trawl_probe_run(d, err, sizeof(err)), 0, "stopped before run: returns at once");
		trawl_probe_free(d);
		is_int(count("d", TRAWL_SYNC_PROBE_SEND), 0, "and its trace reads: no event");
	}

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", dir);
	return done_testing();
}
