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
 * Without sockets (relay-internal.h): a producer's connection lost after
 * two packets, its resume sending the second again then a third: the
 * stream holds three packets, the second once. Against a fake relay that
 * never confirms and closes after some packets: the writer's second
 * connection announces both streams first, sends no metadata (RESUMED
 * says the relay has it) and every packet again from the first. Against
 * one that confirmed everything, then says it has no metadata (its output
 * lost the trace): the writer sends the whole metadata again.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/relay.h"
#include "trawl/pipe.h"
#include "relay/relay-internal.h"
#include "net/relay-proto.h"
#include "ctf/packet.h"
#include "net/auth.h"

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

/* Runs the relay again once told, or after 2 s. */
struct restart {
	struct rl *x;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool past;
};

static void *restart_run(void *arg)
{
	struct restart *rs = arg;
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 2;
	pthread_mutex_lock(&rs->mu);
	while (!rs->past && pthread_cond_timedwait(&rs->cv, &rs->mu, &t) == 0)
		;
	pthread_mutex_unlock(&rs->mu);
	start(rs->x);
	return NULL;
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

/* ------------------------------------------------- the relay, no sockets */

static size_t m_hello(uint8_t *b, const uint8_t uuid[16])
{
	static const char names[] = "s\0h\0ust";
	relay_put_hdr(b, RELAY_HELLO, 32 + sizeof(names));
	put_le32(b + 8, RELAY_VERSION);
	put_le32(b + 12, RELAY_HELLO_RESUME);
	put_le64(b + 16, 0);
	memcpy(b + 24, uuid, 16);
	memcpy(b + 40, names, sizeof(names));
	return 40 + sizeof(names);
}

static size_t m_stream(uint8_t *b)
{
	relay_put_hdr(b, RELAY_STREAM, 16 + 7);
	put_le32(b + 8, 0);
	put_le32(b + 12, 0);
	put_le64(b + 16, 0);
	memcpy(b + 24, "chan_0", 7);
	return 31;
}

static size_t m_packet(uint8_t *b, uint64_t seq)
{
	const struct ctf_index ix = {
		.packet_size = 64 * 8, .content_size = 64 * 8, .ts_begin = seq * 10,
		.ts_end = seq * 10 + 10, .seq = seq,
	};
	relay_put_hdr(b, RELAY_PACKET, RELAY_INDEX_LEN + 64);
	tr_relay_put_index(b + RELAY_HDR_LEN, 0, &ix);
	memset(b + RELAY_HDR_LEN + RELAY_INDEX_LEN, (int)seq, 64);
	return RELAY_HDR_LEN + RELAY_INDEX_LEN + 64;
}

static void test_relay_skips(void)
{
	static const uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	char meta[128];
	int ml = snprintf(meta, sizeof(meta), "/* CTF 1.8 */ trace { uuid = \"%s\"; };",
			  "01020304-0506-0708-090a-0b0c0d0e0f10");
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = path("nosock") };
	mkdir(path("nosock"), 0700);
	struct trawl_relay *r = tr_relay_state_new(&o);
	ok(r != NULL, "a relay without sockets");
	if (!r)
		return;
	uint8_t b[4096];
	size_t n = m_hello(b, uuid);
	relay_put_hdr(b + n, RELAY_METADATA, (uint32_t)ml);
	memcpy(b + n + 8, meta, (size_t)ml);
	n += 8 + (size_t)ml;
	n += m_stream(b + n);
	n += m_packet(b + n, 0);
	n += m_packet(b + n, 1);
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	int f1 = tr_relay_conn_feed(c, b, n);
	tr_relay_conn_close(c);		/* lost before CLOSE */
	n = m_hello(b, uuid);
	n += m_stream(b + n);
	n += m_packet(b + n, 1);	/* again */
	n += m_packet(b + n, 2);
	relay_put_hdr(b + n, RELAY_CLOSE, 0);
	n += 8;
	c = tr_relay_conn_new(r, RC_PRODUCER);
	int f2 = tr_relay_conn_feed(c, b, n);
	/* the replies: WELCOME, RESUMED (the metadata's length), PROGRESS, ACK */
	struct relay_msg m;
	char perr[128];
	ssize_t k1 = tr_relay_msg_parse(c->out, c->outlen, &m, perr, sizeof(perr));
	bool welcome = k1 > 0 && m.type == RELAY_WELCOME && m.u.welcome.status == 0;
	ssize_t k2 = k1 > 0 ? tr_relay_msg_parse(c->out + k1, c->outlen - (size_t)k1, &m, perr,
						  sizeof(perr)) : -1;
	ok(f1 == 0 && f2 == 0 && welcome && k2 > 0 && m.type == RELAY_RESUMED &&
	   m.u.resumed.meta_len == (uint64_t)ml, "the resume is welcome; RESUMED says %d bytes of "
	   "metadata (%s)", ml, perr);
	tr_relay_conn_close(c);
	trawl_relay_free(r);
	struct stat sb, ib;
	bool st = stat(path("nosock/s/h/ust/chan_0"), &sb) == 0 &&
		  stat(path("nosock/s/h/ust/index/chan_0.idx"), &ib) == 0;
	ok(st && sb.st_size == 3 * 64 && ib.st_size == CTF_IDX_HEADER_LEN + 3 * CTF_IDX_ENTRY_LEN,
	   "the stream holds packets 0, 1, 2 once each (%lld bytes, index %lld)",
	   st ? (long long)sb.st_size : -1, st ? (long long)ib.st_size : -1);
	FILE *fp = fopen(path("nosock/s/h/ust/chan_0"), "rb");
	uint8_t d[3 * 64];
	bool order = fp && fread(d, 1, sizeof(d), fp) == sizeof(d) && d[0] == 0 && d[64] == 1 &&
		     d[128] == 2;
	if (fp)
		fclose(fp);
	ok(order, "in order");
}

/*
 * With a secret, the producer's count of messages starts after its HELLO
 * and its AUTH, as without one after the HELLO: the relay's PROGRESS for
 * METADATA, STREAM and a PACKET says 3 (it said 4, counting the AUTH: a
 * resumed producer then forgot a packet the relay had not written).
 */
static void test_progress_after_auth(void)
{
	static const uint8_t uuid[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };
	char why[256];
	if (!ok(tr_auth_ready(why, sizeof(why)) == 0, "HMAC is there (nettle, a dependency)"))
		return;
	struct auth_cred cl = { .kind = AUTH_CLUSTER };
	char line[200], *key = strdup(path("cluster.key"));
	int ln = tr_auth_nonce(cl.key) == 0 ? tr_auth_format(&cl, line, sizeof(line)) : -1;
	int fd = key && ln > 0 ? open(key, O_WRONLY | O_CREAT | O_TRUNC, 0600) : -1;
	bool saved = fd >= 0 && write(fd, line, (size_t)ln) == ln;
	if (fd >= 0)
		close(fd);
	if (!ok(saved, "a cluster secret written")) {
		free(key);
		return;
	}
	mkdir(path("authed"), 0700);
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = path("authed") };
	struct trawl_relay *r = tr_relay_state_new(&o);
	char aerr[256] = "";
	/* the state alone: its secret as trawl_relay_new() loads it */
	if (r && tr_relay_auth_init(r, key, aerr, sizeof(aerr)) < 0) {
		ok(0, "the relay takes the secret: %s", aerr);
		trawl_relay_free(r);
		free(key);
		return;
	}
	struct rconn *c = r ? tr_relay_conn_new(r, RC_PRODUCER) : NULL;
	uint8_t b[4096], am[RELAY_HDR_LEN + RELAY_AUTH_LEN];
	size_t hn = m_hello(b, uuid);
	put_le32(b + 12, RELAY_HELLO_RESUME | RELAY_HELLO_AUTH);
	struct relay_msg m;
	char perr[128] = "";
	bool challenged = c && tr_relay_conn_feed(c, b, hn) == 0 &&
			  tr_relay_msg_parse(c->out, c->outlen, &m, perr, sizeof(perr)) > 0 &&
			  m.type == RELAY_CHALLENGE;
	ok(challenged && tr_auth_put(&cl, AUTH_ROLE_PRODUCER, m.u.challenge.nonce, b, hn, am) == 0,
	   "a relay with a secret challenges the HELLO (%s)", perr);
	if (!challenged) {
		tr_relay_conn_close(c);
		trawl_relay_free(r);
		free(key);
		return;
	}
	size_t skip_out = c->outlen, n = 0;
	static const char meta[] = "/* CTF 1.8 */";
	memcpy(b, am, sizeof(am));
	n = sizeof(am);
	relay_put_hdr(b + n, RELAY_METADATA, sizeof(meta) - 1);
	memcpy(b + n + 8, meta, sizeof(meta) - 1);
	n += 8 + sizeof(meta) - 1;
	n += m_stream(b + n);
	n += m_packet(b + n, 0);
	int f = tr_relay_conn_feed(c, b, n);
	uint64_t written = 0;
	int progresses = 0;
	for (size_t off = skip_out; off < c->outlen;) {
		ssize_t k = tr_relay_msg_parse(c->out + off, c->outlen - off, &m, perr, sizeof(perr));
		if (k <= 0)
			break;
		if (m.type == RELAY_PROGRESS) {
			written = m.u.progress.written;
			progresses++;
		}
		off += (size_t)k;
	}
	ok(f == 0 && progresses > 0 && written == 3,
	   "its PROGRESS counts the messages after HELLO and AUTH: 3 (%llu)",
	   (unsigned long long)written);
	tr_relay_conn_close(c);
	trawl_relay_free(r);
	tr_auth_wipe(&cl);
	free(key);
}

/* --------------------------------- the producer against a fake relay */

struct fake {
	int lfd;
	bool lost;			/* the second connection says it has no metadata */
	uint64_t meta1;			/* metadata bytes on the first connection */
	int packets1;
	/* the second connection */
	int streams_first, packets2, seq0_again;
	uint64_t meta2;
	bool acked;
};

static int read_msg(int fd, uint8_t *b, size_t cap, struct relay_msg *m)
{
	size_t n = 0;
	while (n < RELAY_HDR_LEN) {
		ssize_t k = read(fd, b + n, RELAY_HDR_LEN - n);
		if (k <= 0)
			return -1;
		n += (size_t)k;
	}
	size_t want = RELAY_HDR_LEN + get_le32(b + 4);
	if (want > cap)
		return -1;
	while (n < want) {
		ssize_t k = read(fd, b + n, want - n);
		if (k <= 0)
			return -1;
		n += (size_t)k;
	}
	char err[128];
	return tr_relay_msg_parse(b, n, m, err, sizeof(err)) > 0 ? 0 : -1;
}

static void welcome(int fd, uint64_t meta)
{
	uint8_t b[RELAY_HDR_LEN + 5 + RELAY_HDR_LEN + 8] = { 0 };
	relay_put_hdr(b, RELAY_WELCOME, 5);
	relay_put_hdr(b + 13, RELAY_RESUMED, 8);
	put_le64(b + 21, meta);
	(void)!write(fd, b, sizeof(b));
}

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	static uint8_t b[1 << 20];
	struct relay_msg m;
	int fd = accept(f->lfd, NULL, NULL);
	if (fd < 0 || read_msg(fd, b, sizeof(b), &m) || m.type != RELAY_HELLO)
		return NULL;
	welcome(fd, 0);
	/* never a PROGRESS: everything stays the producer's to send again;
	 * unless the relay will lose it all: then everything is confirmed */
	uint64_t n1 = 0;
	while (f->packets1 < 5 && !read_msg(fd, b, sizeof(b), &m)) {
		if (f->lost) {
			uint8_t p[RELAY_HDR_LEN + 8];
			relay_put_hdr(p, RELAY_PROGRESS, 8);
			put_le64(p + RELAY_HDR_LEN, ++n1);
			(void)!write(fd, p, sizeof(p));
		}
		if (m.type == RELAY_METADATA)
			f->meta1 += m.u.meta.len;
		f->packets1 += m.type == RELAY_PACKET;
	}
	close(fd);
	fd = accept(f->lfd, NULL, NULL);
	if (fd < 0 || read_msg(fd, b, sizeof(b), &m) || m.type != RELAY_HELLO)
		return NULL;
	welcome(fd, f->lost ? 0 : f->meta1);
	bool before_packets = true;
	uint64_t written = 0;
	while (!read_msg(fd, b, sizeof(b), &m) && m.type != RELAY_CLOSE) {
		/* this one confirms: the budget (32 KiB, less than the trace) empties */
		uint8_t p[RELAY_HDR_LEN + 8];
		relay_put_hdr(p, RELAY_PROGRESS, 8);
		put_le64(p + RELAY_HDR_LEN, ++written);
		(void)!write(fd, p, sizeof(p));
		if (m.type == RELAY_STREAM && before_packets)
			f->streams_first++;
		if (m.type == RELAY_METADATA)
			f->meta2 += m.u.meta.len;
		if (m.type == RELAY_PACKET) {
			before_packets = false;
			f->packets2++;
			f->seq0_again += m.u.packet.ix.seq == 0;
		}
	}
	if (m.type == RELAY_CLOSE) {
		uint8_t a[RELAY_HDR_LEN + 5] = { 0 };
		relay_put_hdr(a, RELAY_ACK, 5);
		f->acked = write(fd, a, sizeof(a)) == sizeof(a);
	}
	close(fd);
	return NULL;
}

static void test_sends_again(bool lost)
{
	struct fake f = { .lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), .lost = lost };
	const char *how = lost ? "a relay that lost the trace" : "a relay that never confirms";
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	if (f.lfd < 0 || bind(f.lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(f.lfd, 4) || getsockname(f.lfd, (struct sockaddr *)&sa, &sl)) {
		ok(0, "a fake relay: %s", strerror(errno));
		return;
	}
	char addr[64], err[512] = "";
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sa.sin_port));
	pthread_t th;
	pthread_create(&th, NULL, fake_run, &f);
	struct wr w;
	int ret = wr_open(&w, addr, "f", err, sizeof(err));
	/* a packet of 4 KiB holds about 200 events: 40 packets and more; the
	 * first connection takes 5 (the budget holds 8) */
	if (!ret)
		ret = wr_events(&w, 0, 5000);
	int rc = w.w ? trawl_ctf_writer_close(w.w) : -1;
	trawl_ctf_writer_free(w.w);
	pthread_join(th, NULL);
	close(f.lfd);
	ok(ret == 0 && rc == 0 && f.acked, "%s: the writer closes once the second connection "
	   "ACKs (%d %d %s)", how, ret, rc, err);
	ok(f.streams_first >= NCPU, "%s: the second connection announces both streams first (%d "
	   "STREAMs before its first packet)", how, f.streams_first);
	if (lost)
		ok(f.meta1 > 0 && f.meta2 == f.meta1, "%s: it sends the whole metadata again (%llu, "
		   "then %llu)", how, (unsigned long long)f.meta1, (unsigned long long)f.meta2);
	else
		ok(f.meta1 > 0 && f.meta2 == 0, "%s: it sends no metadata the relay said it has "
		   "(%llu, then %llu)", how, (unsigned long long)f.meta1,
		   (unsigned long long)f.meta2);
	if (lost)
		ok(f.packets1 == 5 && f.packets2 > 0,
		   "%s: the packets go on (%d, then %d)", how, f.packets1, f.packets2);
	else
		ok(f.packets1 == 5 && f.seq0_again == NCPU && f.packets2 > f.packets1,
		   "%s: it sends every packet again from each stream's first (%d, then %d; seq "
		   "0: %d)", how, f.packets1, f.packets2, f.seq0_again);
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
	test_relay_skips();
	test_progress_after_auth();
	test_sends_again(false);
	test_sends_again(true);
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
	/* while it is down the writer goes on: into its budget, then it waits
	 * for room; the relay runs again once the writer is past these events,
	 * or, when the budget is full, after 2 s */
	struct restart rs = { .x = &A, .mu = PTHREAD_MUTEX_INITIALIZER,
			      .cv = PTHREAD_COND_INITIALIZER };
	pthread_t rth;
	pthread_create(&rth, NULL, restart_run, &rs);
	if (!ret)
		ret = wr_events(&w, NEV / 2, NEV / 2 + 300);
	pthread_mutex_lock(&rs.mu);
	rs.past = true;
	pthread_cond_signal(&rs.cv);
	pthread_mutex_unlock(&rs.mu);
	pthread_join(rth, NULL);
	if (!ret)
		ret = wr_events(&w, NEV / 2 + 300, NEV);
	int rc = trawl_ctf_writer_close(w.w);
	const char *why = trawl_ctf_writer_relay_why(w.w);
	ok(ret == 0 && rc == 0, "the writer goes on and closes without an error (%d %d %s)", ret, rc,
	   why);
	trawl_ctf_writer_free(w.w);
	ok(heard(&A, "s1/h/ust: resumed from the disk"), "the relay's log: resumed from the disk");
	if (!heard(&A, "resumed"))
		printf("# the relay's log:\n%s", A.log);

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
	err[0] = 0;
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
	/* per host, with the real figures (issue 28 item 7) */
	ok((ret || rc) && strstr(why, "host h of session q: a message of ") &&
	   strstr(why, "would take it past its disk quota") && strstr(why, "of 65536 bytes used"),
	   "the writer fails with the relay's reason (%d %d %s)",
	   ret, rc, why);
	trawl_ctf_writer_free(w.w);
	stop(&Q);
	ok(heard(&Q, "host h of session q: a message would take it past its quota"),
	   "the relay's log says it once");
	trawl_relay_free(Q.r);
	tap_rm_tree(trash);
	return done_testing();
}
