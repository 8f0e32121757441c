/* SPDX-License-Identifier: MIT */
/*
 * test-relay-resume - a resumable producer (trawl_relay_dest_opts.resume_ms,
 * lib/net/reconnect.c) and the relay's resume (lib/relay/resume.c), in one
 * process: a CTF writer without a local copy streams two streams to a relay
 * through a budget of 32 KiB (far less than the trace: only the relay's
 * PROGRESS frees it); half-way the relay is stopped (every connection
 * closed, its sessions forgotten) and run again on the same port, while the
 * writer goes on.
 * Checks: the writer closes without an error; the relay's log says the
 * trace was resumed from the disk; read back, the trace holds every event
 * exactly once, in order, with its time (nothing lost, nothing twice); a
 * writer with another trace UUID for the same session, host and trace is
 * refused with the reason; a relay at its disk quota refuses the packet
 * that would go over it and the writer closes with that reason.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/relay.h"
#include "trawl/pipe.h"

#define NEV 20000		/* events per stream */
#define NCPU 2

static char trash[64];
#define path(...) tap_path(trash, __VA_ARGS__)

struct rl {
	struct trawl_relay *r;
	pthread_t th;
	pthread_mutex_t mu;
	char log[16384];
	size_t loglen;
};

static void hear(void *arg, int level, const char *msg)
{
	struct rl *x = arg;
	(void)level;
	pthread_mutex_lock(&x->mu);
	int n = snprintf(x->log + x->loglen, sizeof(x->log) - x->loglen, "%s\n", msg);
	if (n > 0 && (size_t)n < sizeof(x->log) - x->loglen)
		x->loglen += (size_t)n;
	pthread_mutex_unlock(&x->mu);
}

static bool heard(struct rl *x, const char *what)
{
	pthread_mutex_lock(&x->mu);
	bool h = strstr(x->log, what) != NULL;
	pthread_mutex_unlock(&x->mu);
	return h;
}

static void *run(void *arg)
{
	struct rl *x = arg;
	trawl_relay_run(x->r);
	return NULL;
}

static void start(struct rl *x)
{
	pthread_create(&x->th, NULL, run, x);
}

static void stop(struct rl *x)
{
	trawl_relay_stop(x->r);
	pthread_join(x->th, NULL);
}

/* A writer of the trace SESSION/h/ust streamed to addr (resumable, a 32 KiB
 * budget), with one event class "tick" {seq}. */
struct wr {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_event_class *ec;
	struct trawl_ctf_wstream *ws[NCPU];
};

static int wr_open(struct wr *x, const char *addr, const char *session, char *err, size_t errlen)
{
	const struct trawl_relay_dest_opts d = {
		.sz = sizeof(d), .addr = addr, .session = session, .resume_ms = 20000,
	};
	struct trawl_ctf_dest *dest = trawl_relay_dest_new(&d);
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .hostname = "h", .domain = "ust", .clock_offset_s = 1700000000,
		.packet_size = 4096, .io_queue = 32 << 10, .dest = dest, .err = err,
		.errlen = errlen,
	};
	memset(x, 0, sizeof(*x));
	if (!dest || !(x->w = trawl_ctf_writer_new(&o)))
		return -errno;
	struct trawl_ctf_type *f = trawl_ctf_type_struct(x->w);
	if (!f || trawl_ctf_struct_add(x->w, f, "seq", trawl_ctf_type_int(x->w, 64, false, 10)))
		return -ENOMEM;
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(x->w, TRAWL_CTF_HEADER_LARGE, NULL);
	x->ec = sc ? trawl_ctf_writer_event_class(x->w, sc, "tick", 13, f) : NULL;
	for (int c = 0; x->ec && c < NCPU; c++)
		x->ws[c] = trawl_ctf_writer_stream(x->w, sc, "channel0", (uint32_t)c);
	return x->ws[NCPU - 1] ? 0 : -errno;
}

/* Events from..to-1 of each stream (seq i * NCPU + cpu at time 1000 + seq). */
static int wr_events(struct wr *x, uint64_t from, uint64_t to)
{
	int ret = 0;
	for (uint64_t i = from; !ret && i < to; i++)
		for (int c = 0; !ret && c < NCPU; c++) {
			uint64_t seq = i * NCPU + (uint64_t)c;
			ret = trawl_ctf_wstream_event(x->ws[c], x->ec, 1000 + seq, &seq, 8);
		}
	return ret;
}

int main(void)
{
	alarm(120);	/* a sender that never gets room fails the test, not the suite */
	snprintf(trash, sizeof(trash), "/tmp/trawl-test-resume-XXXXXX");
	if (!mkdtemp(trash)) {
		perror("mkdtemp");
		return 1;
	}
	char err[512] = "", addr[300];
	struct rl A = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct trawl_relay_opts oa = {
		.sz = sizeof(oa), .output = path("relay"), .data_addr = "127.0.0.1:0",
		.live_addr = "127.0.0.1:0", .log = hear, .log_arg = &A,
	};
	A.r = trawl_relay_new(&oa, err, sizeof(err));
	ok(A.r != NULL, "a relay (%s)", err);
	if (!A.r)
		return done_testing();
	snprintf(addr, sizeof(addr), "%s", trawl_relay_data_addr(A.r));
	start(&A);

	/* ---- cut off half-way: the relay stops (connections closed, sessions
	 * forgotten) and runs again on its port */
	struct wr w;
	int ret = wr_open(&w, addr, "s1", err, sizeof(err));
	if (!ret)
		ret = wr_events(&w, 0, NEV / 2);
	ok(ret == 0, "the first half streamed (%d %s)", ret, err);
	stop(&A);
	/* while it is down: a few packets' worth, less than the budget */
	if (!ret)
		ret = wr_events(&w, NEV / 2, NEV / 2 + 300);
	start(&A);
	if (!ret)
		ret = wr_events(&w, NEV / 2 + 300, NEV);
	int rc = trawl_ctf_writer_close(w.w);
	const char *why = trawl_ctf_writer_relay_why(w.w);
	ok(ret == 0 && rc == 0, "the writer goes on and closes without an error (%d %d %s)", ret, rc,
	   why);
	trawl_ctf_writer_free(w.w);
	ok(heard(&A, "s1/h/ust: resumed from the disk"), "the relay's log: resumed from the disk");

	const char *paths[] = { path("relay/s1") };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .threads = 1 };
	struct trawl_reader *rd = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	ok(rd != NULL, "the resumed trace opens (%s)", err);
	uint64_t n = 0, bad = 0;
	const struct trawl_event *ev;
	int r = -1;
	while (rd && (r = trawl_reader_next(rd, &ev)) == 1) {
		if (ev->nvalues < 1 || ev->values[0].u != n || ev->cycles != 1000 + n) {
			if (!bad++)
				printf("#   event %llu: seq %llu at %llu\n", (unsigned long long)n,
				       (unsigned long long)ev->values[0].u,
				       (unsigned long long)ev->cycles);
		}
		n++;
	}
	is_int(r, 0, "read to the end without an error");
	is_int(n, NEV * NCPU, "every event written is there");
	is_int(bad, 0, "each once, in order, at its time");
	trawl_reader_free(rd);

	/* ---- another producer's UUID: refused */
	struct wr w2;
	err[0] = 0;
	const struct trawl_relay_dest_opts d2 = {
		.sz = sizeof(d2), .addr = addr, .session = "s1", .resume_ms = 20000,
	};
	struct trawl_ctf_dest *dest2 = trawl_relay_dest_new(&d2);
	struct trawl_ctf_writer_opts o2 = {
		.sz = sizeof(o2), .hostname = "h", .domain = "ust", .packet_size = 4096,
		.dest = dest2, .err = err, .errlen = sizeof(err),
	};
	w2.w = trawl_ctf_writer_new(&o2);
	ok(!w2.w && strstr(err, "not this producer's trace"),
	   "a writer of another trace UUID is refused (%s)", err);
	trawl_ctf_writer_free(w2.w);
	stop(&A);
	trawl_relay_free(A.r);

	/* ---- a quota of 64 KiB: the packet over it is refused with the reason */
	struct rl Q = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct trawl_relay_opts oq = oa;
	oq.output = path("quota");
	oq.max_session_size = 64 << 10;
	oq.log_arg = &Q;
	Q.r = trawl_relay_new(&oq, err, sizeof(err));
	ok(Q.r != NULL, "a relay with a quota (%s)", err);
	if (!Q.r)
		return done_testing();
	snprintf(addr, sizeof(addr), "%s", trawl_relay_data_addr(Q.r));
	start(&Q);
	ret = wr_open(&w, addr, "q", err, sizeof(err));
	if (!ret)
		ret = wr_events(&w, 0, NEV);
	rc = trawl_ctf_writer_close(w.w);
	why = trawl_ctf_writer_relay_why(w.w);
	ok((ret || rc) && strstr(why, "session q is at its disk quota") &&
	   strstr(why, "of 65536 bytes"), "the writer fails with the relay's reason (%d %d %s)",
	   ret, rc, why);
	trawl_ctf_writer_free(w.w);
	stop(&Q);
	ok(heard(&Q, "session q: at its quota"), "the relay's log says it once");
	trawl_relay_free(Q.r);
	tap_rm_tree(trash);
	return done_testing();
}
