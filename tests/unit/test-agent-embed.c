/* SPDX-License-Identifier: MIT */
/*
 * test-agent-embed: the agent as a library object (trawl/agent.h), inside
 * this process, on private sockets.
 *
 * 1. One agent, run in a thread, driven over its socket with the requests
 *    `trawl create / enable / add-context / start / stop / list` send
 *    (trawl_agent_request(), the CLI's client), records a thread of this
 *    very process (lib/ust's application side, registered through
 *    TRAWL_AGENT_SOCKET); enable -k is refused (no kernel table);
 *    trawl_agent_stop() ends it, its socket is gone; the trace on disk is
 *    read back with trawl_reader: every event, in order, with its context.
 * 2. Two agents in one process on two sockets, recording at once, a
 *    session of the same name in each, each with an application of its own
 *    (this program again, as a child): each trace holds its own
 *    application's events only. One is stopped from a signal handler while
 *    its session records (the trace is completed), the other's session is
 *    created by opts.oneshot.
 * 3. Errors: no socket, a second agent on a socket in use.
 * 4. A kernel table without snapshot(): overwrite-mode sessions refuse
 *    enable -k (with a hint); with it, they take it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trawl/agent.h"
#include "trawl/ctf.h"
#include "trawl/tracepoint.h"
/* the reader's API moves from ctf.h to pipe.h on branch restructure
 * (c2bfe21); once merged, include it unconditionally */
#include "trawl/pipe.h"

#include "tap.h"

TRAWL_TRACEPOINT_EVENT(embed, tick, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq, int32_t tid),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(uint64_t, seq, seq)
		TRAWL_FIELD_INT(int32_t, tid, tid)))

/*
 * The event, defined here rather than by TRAWL_TRACEPOINT_DEFINE: its
 * constructor would register it before main(), and an application tries
 * its agent once, at its first registration; here the agent listens first.
 */
static const struct trawl_tp_field tick_fields[] = {
	{ "seq", TRAWL_TP_INT, 8, 0, 10, 0, NULL },
	{ "tid", TRAWL_TP_INT, 4, 1, 10, 0, NULL },
	{ NULL, 0, 0, 0, 0, 0, NULL },
};
struct trawl_tp_event __trawl_ev_embed_tick = {
	0, 0, "embed", "tick", TRAWL_LOGLEVEL_INFO, tick_fields, NULL
};

static char dir[256];

/* ------------------------------------------------------------- helpers */

/* The agent's log lines, gathered (the hook runs in the agent's thread). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[16384];

static void log_hook(void *arg, int level, const char *msg)
{
	pthread_mutex_lock(&log_lock);
	size_t n = strlen(logbuf);
	snprintf(logbuf + n, sizeof(logbuf) - n, "%s: %s\n", (const char *)arg, msg);
	pthread_mutex_unlock(&log_lock);
}

static bool logged(const char *what)
{
	pthread_mutex_lock(&log_lock);
	bool r = strstr(logbuf, what) != NULL;
	pthread_mutex_unlock(&log_lock);
	return r;
}

struct answer {
	char out[8192], err[2048];
};

static void collect(void *arg, int stream, const char *text, size_t len)
{
	struct answer *a = arg;
	char *b = stream == 1 ? a->out : a->err;
	size_t cap = stream == 1 ? sizeof(a->out) : sizeof(a->err);
	size_t n = strlen(b);
	snprintf(b + n, cap - n, stream == 1 ? "%.*s" : "%.*s\n", (int)len, text);
}

/* One request, as the session commands send it: the status. */
static int req(const char *sock, struct answer *ans, ...)
{
	const char *argv[16];
	int argc = 0;
	va_list ap;
	va_start(ap, ans);
	while (argc < 15 && (argv[argc] = va_arg(ap, const char *)))
		argc++;
	va_end(ap);
	char err[256];
	memset(ans, 0, sizeof(*ans));
	int r = trawl_agent_request(sock, argc, argv, collect, ans, err, sizeof(err));
	if (r < 0)
		printf("# request %s: %s\n", argv[0], err);
	if (ans->err[0])
		printf("# %s: %s", argv[0], ans->err);
	return r;
}

struct runner {
	struct trawl_agent *a;
	pthread_t th;
	int ret;
};

static void *run_agent(void *p)
{
	struct runner *r = p;
	r->ret = trawl_agent_run(r->a);
	return NULL;
}

static struct trawl_agent *new_agent(const char *sock, const char *host, const char *tag,
				     const char *const *oneshot, size_t noneshot)
{
	char err[256] = "";
	struct trawl_agent_opts o = {
		.sz = sizeof(o), .socket = sock, .host = host, .log = log_hook, .log_arg = (void *)tag,
		.oneshot = oneshot, .noneshot = noneshot,
	};
	struct trawl_agent *a = trawl_agent_new(&o, err, sizeof(err));
	if (!a)
		printf("# trawl_agent_new: %s\n", err);
	return a;
}

static bool is_socket(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Reads the traces under path: the number of embed:tick events, checking
 * that seq counts 0, 1, ... per tid, that the context's vtid is the
 * payload's tid, and that every trace's host is host. -1 on a problem. */
static long read_ticks(const char *path, const char *host, long *ntids)
{
	char err[256];
	const char *paths[] = { path };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	if (!r) {
		printf("# reader %s: %s\n", path, err);
		return -1;
	}
	long n = 0, bad = 0;
	int32_t tids[8] = { 0 };
	uint64_t next[8] = { 0 };
	*ntids = 0;
	for (size_t i = 0; i < trawl_reader_ntraces(r); i++)
		if (strcmp(trawl_reader_trace_hostname(trawl_reader_trace_at(r, i)), host) != 0)
			bad++;
	const struct trawl_event *ev;
	int k;
	while ((k = trawl_reader_next(r, &ev)) > 0) {
		if (strcmp(ev->cls->name, "embed:tick") != 0)
			continue;
		n++;
		if (ev->nvalues != 3) {
			bad++;
			continue;
		}
		int32_t vtid = (int32_t)ev->values[0].i, tid = (int32_t)ev->values[2].i;
		uint64_t seq = ev->values[1].u;
		long t;
		for (t = 0; t < *ntids && tids[t] != tid; t++)
			;
		if (t == *ntids && t < 8)
			tids[(*ntids)++] = tid;
		if (t >= 8 || vtid != tid || seq != next[t]++)
			bad++;
	}
	if (k < 0) {
		printf("# reading %s: %s\n", path, trawl_reader_error(r));
		bad++;
	}
	trawl_reader_free(r);
	if (bad)
		printf("# %s: %ld bad events of %ld\n", path, bad, n);
	return bad ? -1 : n;
}

/* ------------------------------------------------------------- 1. in this process */

#define N1 5000

static void *emit(void *arg)
{
	int32_t tid = (int32_t)syscall(SYS_gettid);
	for (uint64_t i = 0; i < N1; i++)
		trawl_tracepoint(embed, tick, i, tid);
	return NULL;
}

static void test_in_process(void)
{
	char sock[300], out[300], kv[400];
	struct answer ans;
	snprintf(sock, sizeof(sock), "%s/run/one.sock", dir);
	snprintf(out, sizeof(out), "%s/s1", dir);
	struct runner ag = { .a = new_agent(sock, "embedhost", "one", NULL, 0) };
	if (!ok(ag.a != NULL, "an agent object listens on a private socket"))
		return;
	ok(is_socket(sock), "... its socket exists once trawl_agent_new() returns");
	ok(pthread_create(&ag.th, NULL, run_agent, &ag) == 0, "trawl_agent_run() in a thread");

	/* this process registers with it, as an application */
	setenv("TRAWL_AGENT_SOCKET", sock, 1);
	trawl_tp_register(&__trawl_ev_embed_tick);
	char me[64];
	snprintf(me, sizeof(me), "application pid %d ", (int)getpid());
	ok(logged(me), "the log hook: this process registered");
	is_int(req(sock, &ans, "list", NULL), 0, "list");
	snprintf(me, sizeof(me), "  pid %d (", (int)getpid());
	ok(strstr(ans.out, me) && strstr(ans.out, "    embed:tick (loglevel 6)\n"),
	   "list: this process and its event");

	/* what trawl create, enable, add-context, start send */

	snprintf(kv, sizeof(kv), "output=%s", out);
	is_int(req(sock, &ans, "create", "s1", kv, "clock=monotonic", NULL), 0, "create s1");
	snprintf(kv, sizeof(kv), "session s1 created, trace in %s\n", out);
	is_str(ans.out, kv, "... its answer");
	is_int(req(sock, &ans, "create", "s1", kv, NULL), 1, "create: the name exists (1)");
	is_int(req(sock, &ans, "create", "s2", "output=/x", "mode=sideways", NULL), 2,
	       "create: a bad setting is a bad request (2)");
	is_str(ans.err, "bad value for mode: 'sideways'\n", "... named");
	is_int(req(sock, &ans, "enable", "s1", "embed:*", NULL), 0, "enable s1 'embed:*'");
	is_int(req(sock, &ans, "add-context", "s1", "vtid", NULL), 0, "add-context s1 vtid");
	is_int(req(sock, &ans, "enable", "s1", "--kernel=sched", NULL), 1, "enable -k: refused (1)");
	is_str(ans.err, "this agent has no kernel support\n", "... this agent has no kernel support");
	is_int(req(sock, &ans, "frobnicate", "s1", NULL), 2, "an unknown verb: a bad request (2)");
	is_int(req(sock, &ans, "start", NULL), 2, "start without a name: a bad request (2)");
	is_int(req(sock, &ans, "start", "nosuch", NULL), 1, "start of an unknown session (1)");
	is_str(ans.err, "no session nosuch\n", "... named");
	is_int(req(sock, &ans, "start", "s1", NULL), 0, "start s1");
	is_str(ans.out, "session s1 started (1 application)\n", "... this process records");
	ok(trawl_tracepoint_enabled(embed, tick), "the event is enabled");

	/* a traced thread */
	pthread_t th;
	pthread_create(&th, NULL, emit, NULL);
	pthread_join(th, NULL);
	is_int(req(sock, &ans, "stop", "s1", NULL), 0, "stop s1");
	snprintf(kv, sizeof(kv), "session s1 stopped; trace in %s\n", out);
	is_str(ans.out, kv, "... the trace is complete");
	ok(!trawl_tracepoint_enabled(embed, tick), "the event is disabled");
	is_int(req(sock, &ans, "list", "s1", NULL), 0, "list s1");
	ok(strstr(ans.out, "  s1 [stopped] discard") != NULL, "... stopped");

	trawl_agent_stop(ag.a);
	pthread_join(ag.th, NULL);
	is_int(ag.ret, 0, "trawl_agent_stop(): trawl_agent_run() returns 0");
	ok(!is_socket(sock), "... its socket is removed");
	trawl_agent_free(ag.a);
	char err[256];
	is_int(trawl_agent_request(sock, 1, (const char *[]){ "list" }, NULL, NULL, err,
				   sizeof(err)), -ENOENT, "no agent there any more: -ENOENT");

	long ntids = 0;
	snprintf(kv, sizeof(kv), "%s/embedhost/ust/metadata", out);
	ok(access(kv, R_OK) == 0, "the trace is in OUTPUT/HOST/ust (the agent's host name)");
	is_int(read_ticks(out, "embedhost", &ntids), N1,
	       "trawl_reader: the thread's %d events, in order, with their vtid", N1);
	is_int(ntids, 1, "... from one thread");
}

/* ------------------------------------------------------------- 2. two agents */

#define N2 3000

/* The application side of part 2 (this program with --app SOCKET TAG):
 * registers with the agent at SOCKET, waits for the event to be enabled,
 * emits N2 events in one thread and exits. */
static int app_main(const char *sock)
{
	setenv("TRAWL_AGENT_SOCKET", sock, 1);
	trawl_tp_register(&__trawl_ev_embed_tick);
	for (int i = 0; i < 1000 && !trawl_tracepoint_enabled(embed, tick); i++)
		usleep(10000);
	if (!trawl_tracepoint_enabled(embed, tick))
		return 3;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	for (uint64_t i = 0; i < N2; i++)
		trawl_tracepoint(embed, tick, i, tid);
	return 0;
}

static pid_t spawn_app(const char *sock)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, self, "--app", sock, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static struct trawl_agent *sig_agent;

static void on_usr1(int sig)
{
	(void)sig;
	trawl_agent_stop(sig_agent);
}

static void test_two_agents(void)
{
	char sa[300], sb[300], oa[300], ob[300], kv[400];
	struct answer ans;
	snprintf(sa, sizeof(sa), "%s/run/a.sock", dir);
	snprintf(sb, sizeof(sb), "%s/run/b.sock", dir);
	snprintf(oa, sizeof(oa), "%s/a", dir);
	snprintf(ob, sizeof(ob), "%s/b", dir);
	/* B: a oneshot session, recording from its creation */
	char outb[320];
	snprintf(outb, sizeof(outb), "output=%s", ob);
	const char *const oneshot[] = { outb, "event=embed:tick loglevel info", "context=vtid",
					"clock=monotonic" };
	struct runner A = { .a = new_agent(sa, "hosta", "A", NULL, 0) };
	struct runner B = { .a = new_agent(sb, "hostb", "B", oneshot, 4) };
	if (!ok(A.a && B.a, "two agents in one process, on two sockets"))
		return;
	pthread_create(&A.th, NULL, run_agent, &A);
	pthread_create(&B.th, NULL, run_agent, &B);
	is_int(req(sb, &ans, "list", NULL), 0, "B: list");
	ok(strstr(ans.out, "  oneshot [recording]") != NULL, "B: opts.oneshot: its session records");

	/* A: a session named as B's, through the verbs */
	snprintf(kv, sizeof(kv), "output=%s", oa);
	ok(req(sa, &ans, "create", "oneshot", kv, "clock=monotonic", NULL) == 0 &&
	   req(sa, &ans, "enable", "oneshot", "embed:*", NULL) == 0 &&
	   req(sa, &ans, "add-context", "oneshot", "vtid", NULL) == 0 &&
	   req(sa, &ans, "start", "oneshot", NULL) == 0,
	   "A: a session of the same name created, enabled, started while B's records");
	is_str(ans.out, "session oneshot started (0 applications)\n", "A: ... no application yet");

	pid_t pa = spawn_app(sa), pb = spawn_app(sb);
	int sta = -1, stb = -1;
	waitpid(pa, &sta, 0);
	waitpid(pb, &stb, 0);
	ok(WIFEXITED(sta) && WEXITSTATUS(sta) == 0, "A's application recorded and exited");
	ok(WIFEXITED(stb) && WEXITSTATUS(stb) == 0, "B's application recorded and exited");
	is_int(req(sa, &ans, "list", NULL), 0, "A: list");
	snprintf(kv, sizeof(kv), "pid %d (", (int)pb);
	ok(strstr(ans.out, "  oneshot [recording]") && !strstr(ans.out, kv),
	   "A: its session only; B's application is not A's");
	is_int(req(sa, &ans, "stop", "oneshot", NULL), 0, "A: stop");

	/* B: stopped from a signal handler while its session records */
	sig_agent = B.a;
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	act.sa_handler = on_usr1;
	sigaction(SIGUSR1, &act, NULL);
	pthread_kill(B.th, SIGUSR1);
	pthread_join(B.th, NULL);
	is_int(B.ret, 0, "B: trawl_agent_stop() from a signal handler: run returns 0");
	ok(!is_socket(sb) && is_socket(sa), "B's socket is gone, A's is not");
	is_int(req(sa, &ans, "list", "oneshot", NULL), 0, "A still answers");
	trawl_agent_stop(A.a);
	pthread_join(A.th, NULL);
	is_int(A.ret, 0, "A: stopped, run returns 0");
	trawl_agent_free(A.a);
	trawl_agent_free(B.a);

	long ta = 0, tb = 0;
	is_int(read_ticks(oa, "hosta", &ta), N2, "A's trace: its application's %d events", N2);
	is_int(read_ticks(ob, "hostb", &tb), N2,
	       "B's trace, completed at trawl_agent_stop(): its application's %d events", N2);
	ok(ta == 1 && tb == 1, "... one thread each");
}

/* ------------------------------------------------------------- 3. errors */

static void test_errors(void)
{
	char sock[300], err[256] = "";
	snprintf(sock, sizeof(sock), "%s/run/c.sock", dir);
	struct trawl_agent_opts o = { .sz = sizeof(o) };
	errno = 0;
	ok(!trawl_agent_new(&o, err, sizeof(err)) && errno == EINVAL, "no socket: EINVAL (%s)", err);
	struct trawl_agent *a = new_agent(sock, NULL, "C", NULL, 0);
	o.socket = sock;
	errno = 0;
	ok(a && !trawl_agent_new(&o, err, sizeof(err)) && errno == EADDRINUSE &&
	   strstr(err, "already listening"), "a second agent on a socket in use: refused (%s)", err);
	const char *const bad[] = { "event=embed:*", "mode=sideways" };
	o.socket = sock;
	o.oneshot = bad;
	o.noneshot = 2;
	char s2[300];
	snprintf(s2, sizeof(s2), "%s/run/d.sock", dir);
	o.socket = s2;
	errno = 0;
	ok(!trawl_agent_new(&o, err, sizeof(err)) && !strcmp(err, "bad value for mode: 'sideways'") &&
	   !is_socket(s2), "a bad oneshot setting: no agent, no socket left (%s)", err);
	trawl_agent_free(a);
	ok(!is_socket(sock), "trawl_agent_free() without run: the socket is removed");
	trawl_agent_free(NULL);
}

/* ------------------------------------------------------------- 4. kernel tables */

static int fk_check(const char *spec, char *err, size_t errlen)
{
	(void)spec, (void)err, (void)errlen;
	return 0;
}

static void *fk_create(const struct trawl_agent_kernel_opts *o, char *err, size_t errlen)
{
	(void)o, (void)err, (void)errlen;
	errno = ENOTSUP;
	return NULL;
}

static int fk_start(void *rec, char *err, size_t errlen)
{
	(void)rec, (void)err, (void)errlen;
	return -ENOTSUP;
}

static int fk_stop(void *rec, struct trawl_agent_kernel_stats *st, char *err, size_t errlen)
{
	(void)rec, (void)st, (void)err, (void)errlen;
	return -ENOTSUP;
}

static int fk_clock(void *rec, uint64_t *freq, int64_t *offset_s, int64_t *offset)
{
	(void)rec, (void)freq, (void)offset_s, (void)offset;
	return -EAGAIN;
}

static const char *fk_clock_name(void *rec)
{
	(void)rec;
	return "none";
}

static void fk_destroy(void *rec)
{
	(void)rec;
}

static int fk_snapshot(void *rec, const char *d, struct trawl_agent_kernel_stats *st, char *err,
		       size_t errlen)
{
	(void)rec, (void)d, (void)st, (void)err, (void)errlen;
	return -ENOTSUP;
}

/*
 * A kernel table without snapshot() (an older one: its sz ends before it)
 * makes no flight recorder: overwrite-mode sessions, snapshot or not,
 * refuse enable -k, saying why, with a hint line; discard-mode sessions
 * take it. With snapshot(), overwrite-mode sessions take it too.
 */
static void test_kernel_tables(void)
{
	struct trawl_agent_kernel old = {
		.sz = offsetof(struct trawl_agent_kernel, snapshot), .check = fk_check,
		.create = fk_create, .start = fk_start, .stop = fk_stop, .clock = fk_clock,
		.clock_name = fk_clock_name, .destroy = fk_destroy,
	};
	struct trawl_agent_kernel flight = old;
	flight.sz = sizeof(flight);
	flight.snapshot = fk_snapshot;
	const struct trawl_agent_kernel *tables[] = { &old, &flight };
	for (int t = 0; t < 2; t++) {
		char sock[300], err[256] = "";
		struct answer ans;
		snprintf(sock, sizeof(sock), "%s/run/k%d.sock", dir, t);
		struct trawl_agent_opts o = {
			.sz = sizeof(o), .socket = sock, .kernel = tables[t],
		};
		struct runner ag = { .a = trawl_agent_new(&o, err, sizeof(err)) };
		if (!ok(ag.a && pthread_create(&ag.th, NULL, run_agent, &ag) == 0,
			"kernel table %d: an agent runs (%s)", t, err))
			continue;
		req(sock, &ans, "create", "d", "output=/nonexistent/d", NULL);
		is_int(req(sock, &ans, "enable", "d", "--kernel=sched", NULL), 0,
		       "kernel table %d: a discard-mode session takes enable -k", t);
		req(sock, &ans, "create", "o", "output=/nonexistent/o", "mode=overwrite", NULL);
		int r = req(sock, &ans, "enable", "o", "--kernel=sched", NULL);
		if (t == 0)
			ok(r == 1 && strstr(ans.err, "session o: kernel events are not kept by "
					    "overwrite-mode sessions (the kernel part has no flight recorder") &&
			   strstr(ans.err, "\nhint: record kernel events in a discard-mode session"),
			   "no snapshot(): an overwrite session refuses enable -k, why and a hint");
		else
			is_int(r, 0, "snapshot(): an overwrite session takes enable -k");
		req(sock, &ans, "create", "s", "snapshot=yes", NULL);
		r = req(sock, &ans, "enable", "s", "--kernel=sched", NULL);
		if (t == 0)
			ok(r == 1 && strstr(ans.err, "\nhint: "),
			   "no snapshot(): a snapshot session refuses enable -k, with a hint");
		else
			is_int(r, 0, "snapshot(): a snapshot session takes enable -k");
		trawl_agent_stop(ag.a);
		pthread_join(ag.th, NULL);
		trawl_agent_free(ag.a);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--app") == 0)
		return app_main(argv[2]);
	alarm(120);		/* a hang fails the test */
	unsetenv("TRAWL_AGENT_SOCKET");
	snprintf(dir, sizeof(dir), "/tmp/trawl-embed-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_in_process();
	test_two_agents();
	test_errors();
	test_kernel_tables();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!tap_fail && system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
