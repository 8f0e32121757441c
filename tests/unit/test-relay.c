/* SPDX-License-Identifier: MIT */
/*
 * test-relay - the relay as a library object (trawl/relay.h): two relays in
 * one process, on ports the kernel chose, each run by a thread of its own;
 * a CTF writer streams a trace to each through the relay destination
 * (trawl_relay_dest_new), one with a local copy and synchronous sends, one
 * without and through its write queue; trawl_relay_stop ends both runs.
 * Checks: each relay has exactly its own trace, the files of the first
 * equal the writer's local copy byte for byte (streams, indexes, metadata),
 * the events read back with trawl_reader are those written; each relay's
 * log hook heard of its own trace only; a relay on a port already taken
 * fails with the reason in err, printing nothing and creating nothing; a
 * stop before the run makes the run return at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/relay.h"
/* the reader's header on branch restructure (trawl_reader_*); keep the
 * include, drop the guard once both are merged */
#include "trawl/pipe.h"

#define NEV 1500		/* events per stream */
#define NCPU 2

static char trash[64];
#define path(...) tap_path(trash, __VA_ARGS__)

/* A relay, its thread, and what its log hook heard. */
struct rl {
	struct trawl_relay *r;
	pthread_t th;
	int ret;
	pthread_mutex_t mu;
	char log[8192];
	size_t loglen;
	int nlog;
};

static void hear(void *arg, int level, const char *msg)
{
	struct rl *x = arg;
	(void)level;
	pthread_mutex_lock(&x->mu);
	int n = snprintf(x->log + x->loglen, sizeof(x->log) - x->loglen, "%s\n", msg);
	if (n > 0 && (size_t)n < sizeof(x->log) - x->loglen)
		x->loglen += (size_t)n;
	x->nlog++;
	pthread_mutex_unlock(&x->mu);
}

static void *run(void *arg)
{
	struct rl *x = arg;
	x->ret = trawl_relay_run(x->r);
	return NULL;
}

/*
 * Writes a trace of NCPU streams of NEV events each ({seq, msg} at
 * increasing times, a flush in the middle, a beacon), to dest (and to
 * local when not NULL). Returns the writer's close status.
 */
static int write_trace(struct trawl_ctf_dest *dest, const char *local, const char *host,
		       size_t io_queue, char *err, size_t errlen)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = local, .hostname = host, .domain = "ust",
		.clock_offset_s = 1700000000, .clock_offset = 1, .packet_size = 8192,
		.io_queue = io_queue, .dest = dest, .err = err, .errlen = errlen,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -errno;
	struct trawl_ctf_type *f = trawl_ctf_type_struct(w);
	int ret = !f || trawl_ctf_struct_add(w, f, "seq", trawl_ctf_type_int(w, 64, false, 10)) ||
		  trawl_ctf_struct_add(w, f, "msg", trawl_ctf_type_string(w)) ? -ENOMEM : 0;
	struct trawl_ctf_stream_class *sc =
		ret ? NULL : trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	struct trawl_ctf_event_class *ec = sc ? trawl_ctf_writer_event_class(w, sc, "tick", 13, f) :
						NULL;
	struct trawl_ctf_wstream *ws[NCPU] = { NULL };
	for (int c = 0; ec && c < NCPU; c++)
		ws[c] = trawl_ctf_writer_stream(w, sc, "channel0", (uint32_t)c);
	if (!ec || !ws[NCPU - 1])
		ret = ret ? ret : -errno;
	for (uint64_t i = 0; !ret && i < NEV; i++) {
		for (int c = 0; !ret && c < NCPU; c++) {
			uint8_t buf[64];
			struct trawl_ctf_buf b;
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			uint64_t seq = i * NCPU + (uint64_t)c;
			char msg[24];
			snprintf(msg, sizeof(msg), "%s-%llu", host, (unsigned long long)seq);
			trawl_ctf_buf_put(&b, &seq, 8);
			trawl_ctf_buf_put(&b, msg, strlen(msg) + 1);
			ret = trawl_ctf_wstream_event(ws[c], ec, 1000 + seq * 100, b.p, b.len);
		}
		if (!ret && i == NEV / 2)
			ret = trawl_ctf_wstream_flush(ws[0], 1000 + (i * NCPU + NCPU) * 100);
	}
	if (!ret)
		ret = trawl_ctf_wstream_flush(ws[1], 1000 + NEV * NCPU * 100);
	if (!ret)
		ret = trawl_ctf_wstream_beacon(ws[1], 1000 + NEV * NCPU * 100 + 50);
	int r = trawl_ctf_writer_close(w);
	if (!ret)
		ret = r;
	if (!ret)
		ret = trawl_ctf_writer_relay_error(w);
	trawl_ctf_writer_free(w);
	return ret;
}

/* Reads every event under dir back; they must be the trace write_trace
 * wrote for host, in order. */
static void read_back(const char *dir, const char *host, const char *what)
{
	char err[512] = "";
	const char *paths[] = { dir };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	struct trawl_reader *rd = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	ok(rd != NULL, "%s: trawl_reader opens the relay's trace (%s)", what, err);
	if (!rd)
		return;
	const struct trawl_event *ev;
	uint64_t n = 0, bad = 0;
	int r;
	while ((r = trawl_reader_next(rd, &ev)) == 1) {
		char msg[24];
		snprintf(msg, sizeof(msg), "%s-%llu", host, (unsigned long long)n);
		if (strcmp(ev->cls->name, "tick") != 0 || ev->nvalues < 2 || ev->values[0].u != n ||
		    ev->cycles != 1000 + n * 100 || ev->cpu != n % NCPU ||
		    ev->values[1].s.len != strlen(msg) || memcmp(ev->values[1].s.p, msg, strlen(msg))) {
			if (!bad++)
				printf("#   event %llu: %s seq %llu at %llu\n", (unsigned long long)n,
				       ev->cls->name, (unsigned long long)ev->values[0].u,
				       (unsigned long long)ev->cycles);
		}
		n++;
	}
	is_int(r, 0, "%s: read to the end without an error (%s)", what,
	       r ? trawl_reader_error(rd) : "");
	is_int(n, NEV * NCPU, "%s: every event written is there", what);
	is_int(bad, 0, "%s: each with its class, seq, message, cpu and time, in order", what);
	trawl_reader_free(rd);
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

int main(void)
{
	alarm(120);	/* a relay that never stops fails the test, not the suite */
	snprintf(trash, sizeof(trash), "/tmp/trawl-test-relay-XXXXXX");
	if (!mkdtemp(trash)) {
		perror("mkdtemp");
		return 1;
	}
	struct rl A = { .mu = PTHREAD_MUTEX_INITIALIZER }, B = { .mu = PTHREAD_MUTEX_INITIALIZER };
	char err[512] = "";

	/* ---- two relays, ports chosen by the kernel */
	struct trawl_relay_opts oa = {
		.sz = sizeof(oa), .output = path("A"), .data_addr = "127.0.0.1:0",
		.live_addr = "127.0.0.1:0", .log = hear, .log_arg = &A,
	};
	A.r = trawl_relay_new(&oa, err, sizeof(err));
	ok(A.r != NULL, "relay A on ports 0 (%s)", err);
	struct trawl_relay_opts ob = oa;
	ob.output = path("B");
	ob.log_arg = &B;
	B.r = trawl_relay_new(&ob, err, sizeof(err));
	ok(B.r != NULL, "relay B on ports 0 (%s)", err);
	if (!A.r || !B.r)
		return done_testing();
	unsigned pa = trawl_relay_data_port(A.r), pb = trawl_relay_data_port(B.r);
	unsigned la = trawl_relay_live_port(A.r), lb = trawl_relay_live_port(B.r);
	ok(pa && pb && la && lb && pa != pb && la != lb && pa != la && pb != lb,
	   "four distinct ports the kernel chose (data %u, %u; live %u, %u)", pa, pb, la, lb);
	char want[64];
	snprintf(want, sizeof(want), "127.0.0.1:%u", pa);
	is_str(trawl_relay_data_addr(A.r), want, "relay A's data address names its port");
	snprintf(want, sizeof(want), "127.0.0.1:%u", lb);
	is_str(trawl_relay_live_addr(B.r), want, "relay B's live address names its port");
	ok(exists(oa.output) && exists(ob.output), "each relay created its output directory");

	/* ---- a port taken: an error, nothing printed, nothing created */
	char taken[64];
	snprintf(taken, sizeof(taken), "127.0.0.1:%u", pa);
	struct trawl_relay_opts oc = oa;
	oc.output = path("C");
	oc.data_addr = taken;
	struct rl C = { .mu = PTHREAD_MUTEX_INITIALIZER };
	oc.log_arg = &C;
	fflush(stdout);
	fflush(stderr);
	int out = open(path("C.out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int so = dup(1), se = dup(2);
	dup2(out, 1);
	dup2(out, 2);
	char cerr[512] = "";
	errno = 0;
	struct trawl_relay *rc = trawl_relay_new(&oc, cerr, sizeof(cerr));
	int e = errno;
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(out);
	struct stat st;
	ok(rc == NULL && e == EADDRINUSE, "a third relay on relay A's data port fails: EADDRINUSE (%s)",
	   strerror(e));
	ok(strstr(cerr, "data port") && strstr(cerr, taken) && strstr(cerr, strerror(EADDRINUSE)),
	   "... the reason in err: %s", cerr);
	ok(stat(path("C.out"), &st) == 0 && st.st_size == 0 && C.nlog == 0,
	   "... printing nothing (stdout, stderr, log hook)");
	ok(!exists(oc.output), "... and creating nothing (no output directory)");
	trawl_relay_free(rc);

	/* ---- each runs in a thread of its own */
	ok(pthread_create(&A.th, NULL, run, &A) == 0 && pthread_create(&B.th, NULL, run, &B) == 0,
	   "both relays run, each in its thread");

	/* ---- a trace to each */
	snprintf(taken, sizeof(taken), "127.0.0.1:%u", pa);
	struct trawl_relay_dest_opts da = {
		.sz = sizeof(da), .addr = taken, .session = "s1", .live_timer_us = 100000,
	};
	struct trawl_ctf_dest *d = trawl_relay_dest_new(&da);
	ok(d != NULL, "a relay destination for relay A");
	err[0] = 0;
	int r = write_trace(d, path("local/nodeA/ust"), "nodeA", 0, err, sizeof(err));
	is_int(r, 0, "the writer streams %d events to relay A and keeps a local copy (%s)",
	       NEV * NCPU, *err ? err : r ? strerror(-r) : "");
	char bto[64];
	snprintf(bto, sizeof(bto), "127.0.0.1:%u", pb);
	struct trawl_relay_dest_opts db = { .sz = sizeof(db), .addr = bto, .session = "s2" };
	d = trawl_relay_dest_new(&db);
	err[0] = 0;
	r = write_trace(d, NULL, "nodeB", 1 << 20, err, sizeof(err));
	is_int(r, 0, "another writer streams to relay B only, through its write queue (%s)",
	       *err ? err : r ? strerror(-r) : "");

	/* ---- stop both */
	is_int(trawl_relay_stop(A.r), 0, "trawl_relay_stop(A)");
	is_int(trawl_relay_stop(B.r), 0, "trawl_relay_stop(B)");
	pthread_join(A.th, NULL);
	pthread_join(B.th, NULL);
	ok(A.ret == 0 && B.ret == 0, "both runs return 0 (%d, %d)", A.ret, B.ret);

	/* ---- what each relay wrote */
	char ra[512];
	snprintf(ra, sizeof(ra), "%s", path("A/s1/nodeA/ust"));
	bool same = true;
	for (int c = 0; c < NCPU; c++) {
		char f[64];
		snprintf(f, sizeof(f), "channel0_%d", c);
		same &= same_file(path("A/s1/nodeA/ust/%s", f), path("local/nodeA/ust/%s", f));
		same &= same_file(path("A/s1/nodeA/ust/index/%s.idx", f),
				  path("local/nodeA/ust/index/%s.idx", f));
	}
	ok(same, "relay A's stream and index files equal the local copy's, byte for byte");
	ok(same_file(path("A/s1/nodeA/ust/metadata"),
		     path("local/nodeA/ust/metadata")),
	   "relay A's metadata equals the local copy's");
	read_back(ra, "nodeA", "relay A");
	read_back(path("B/s2/nodeB/ust"), "nodeB", "relay B");
	ok(!exists(path("A/s2")) && !exists(path("B/s1")),
	   "each relay has its own session only");
	ok(strstr(A.log, "s1/nodeA/ust: recording into") && strstr(A.log, "s1/nodeA/ust: complete") &&
	   !strstr(A.log, "s2/"), "relay A's log hook heard of its trace only");
	ok(strstr(B.log, "s2/nodeB/ust: recording into") && strstr(B.log, "s2/nodeB/ust: complete") &&
	   !strstr(B.log, "s1/"), "relay B's log hook heard of its trace only");
	if (tap_fail)
		printf("# relay A's log:\n%s# relay B's log:\n%s", A.log, B.log);

	/* ---- a stop before the run: the run returns at once */
	struct timespec t0, t1;
	is_int(trawl_relay_stop(A.r), 0, "a stop before the next run");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = trawl_relay_run(A.r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(r == 0 && secs < 0.5, "... makes it return 0 at once (%.3f s)", secs);

	trawl_relay_free(A.r);
	trawl_relay_free(B.r);
	trawl_relay_free(NULL);
	trawl_ctf_dest_free(NULL);
	/* a destination no writer took */
	trawl_ctf_dest_free(trawl_relay_dest_new(&db));
	struct trawl_relay_dest_opts dn = { .sz = sizeof(dn) };
	errno = 0;
	ok(trawl_relay_dest_new(&dn) == NULL && errno == EINVAL, "a destination without an address: EINVAL");
	/* a writer that fails frees its destination (nothing leaks) */
	struct trawl_ctf_writer_opts bad = { .sz = sizeof(bad), .packet_size = 1, .dest = trawl_relay_dest_new(&db) };
	errno = 0;
	ok(trawl_ctf_writer_new(&bad) == NULL && errno == EINVAL,
	   "a writer with bad options fails (EINVAL), and frees its destination");

	tap_rm_tree(trash);
	return done_testing();
}
