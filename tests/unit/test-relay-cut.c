/* SPDX-License-Identifier: MIT */
/*
 * test-relay-cut - what a cut costs a producer, counted (docs/relay.md,
 * "Cut off by the relay"; issue 28 item 8).
 * Checks: an ACK parses with the count of messages written after its
 * reason (RELAY_HELLO_COUNT), without it (as before), and not with other
 * bytes after it; a WELCOME takes no count. The relay (without sockets,
 * relay-internal.h) at a host's disk quota: to a producer whose HELLO
 * asks (RELAY_HELLO_COUNT), a PROGRESS after each read and a cut ACK
 * whose count is the messages it wrote (METADATA, STREAM and the packets
 * the stream holds); to one that does not ask, neither a PROGRESS nor a
 * count (the ACK an older producer parses). A CTF writer without a local
 * copy, against a fake relay (a thread, on loopback) that stores a few
 * packets and cuts the trace off: its HELLO asks for the count; with the
 * count in the cut's ACK, trawl_ctf_writer_relay_discarded() says exactly
 * the events of the packets the fake did not store (the writer's events
 * minus those the fake counted in its stored packets), for a plain and a
 * resumable producer; from a fake that says no count and sends no
 * PROGRESS (an older relay), -ENODATA.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/relay.h"
#include "relay/relay-internal.h"
#include "net/relay-proto.h"
#include "ctf/packet.h"

static char trash[64];
#define path(...) tap_path(trash, __VA_ARGS__)

/* ---------------------------------------------------------------- parse */

static size_t m_ack(uint8_t *b, uint32_t type, int32_t status, const char *msg, size_t extra)
{
	size_t ml = strlen(msg) + 1;
	relay_put_hdr(b, (enum relay_type)type, (uint32_t)(4 + ml + extra));
	put_le32(b + RELAY_HDR_LEN, (uint32_t)status);
	memcpy(b + RELAY_HDR_LEN + 4, msg, ml);
	for (size_t i = 0; i < extra; i++)
		b[RELAY_HDR_LEN + 4 + ml + i] = 0;
	if (extra == 8)
		put_le64(b + RELAY_HDR_LEN + 4 + ml, 12345);
	return RELAY_HDR_LEN + 4 + ml + extra;
}

static void test_parse(void)
{
	uint8_t b[128];
	struct relay_msg m;
	char err[128];
	size_t n = m_ack(b, RELAY_ACK, -ENOSPC, "full", 8);
	ok(tr_relay_msg_parse(b, n, &m, err, sizeof(err)) == (ssize_t)n && m.u.ack.counted &&
	   m.u.ack.written == 12345 && m.u.ack.status == -ENOSPC && !strcmp(m.u.ack.msg, "full"),
	   "an ACK with its count of messages written parses");
	n = m_ack(b, RELAY_ACK, -ENOSPC, "full", 0);
	ok(tr_relay_msg_parse(b, n, &m, err, sizeof(err)) == (ssize_t)n && !m.u.ack.counted,
	   "an ACK without it parses, not counted");
	n = m_ack(b, RELAY_ACK, -ENOSPC, "full", 4);
	is_int((int)tr_relay_msg_parse(b, n, &m, err, sizeof(err)), -EPROTO,
	       "an ACK with 4 bytes after its reason: -EPROTO");
	n = m_ack(b, RELAY_WELCOME, -ENOSPC, "full", 8);
	is_int((int)tr_relay_msg_parse(b, n, &m, err, sizeof(err)), -EPROTO,
	       "a WELCOME takes no count: -EPROTO");
}

/* ------------------------------------------------ the relay, no sockets */

static size_t m_hello(uint8_t *b, uint32_t flags, const char *session)
{
	uint8_t *q = b + RELAY_HDR_LEN;
	memset(q, 0, 32);
	put_le32(q, RELAY_VERSION);
	put_le32(q + 4, flags);
	size_t n = 32;
	n += (size_t)sprintf((char *)q + n, "%s", session) + 1;
	n += (size_t)sprintf((char *)q + n, "n1") + 1;
	n += (size_t)sprintf((char *)q + n, "ust") + 1;
	relay_put_hdr(b, RELAY_HELLO, (uint32_t)n);
	return RELAY_HDR_LEN + n;
}

static size_t m_metadata(uint8_t *b)
{
	static const char text[] = "/* CTF 1.8 */\ntrace { major = 1; minor = 8; };\n";
	relay_put_hdr(b, RELAY_METADATA, sizeof(text) - 1);
	memcpy(b + RELAY_HDR_LEN, text, sizeof(text) - 1);
	return RELAY_HDR_LEN + sizeof(text) - 1;
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
		.packet_size = 256 * 8, .content_size = 256 * 8, .ts_begin = seq * 10,
		.ts_end = seq * 10 + 10, .seq = seq,
	};
	relay_put_hdr(b, RELAY_PACKET, RELAY_INDEX_LEN + 256);
	tr_relay_put_index(b + RELAY_HDR_LEN, 0, &ix);
	memset(b + RELAY_HDR_LEN + RELAY_INDEX_LEN, (int)seq, 256);
	return RELAY_HDR_LEN + RELAY_INDEX_LEN + 256;
}

/* What the relay queued to c: the PROGRESS messages (the last one's count
 * in *progress) and the ACK (its status, its payload's length, whether a
 * count follows its reason and the count). */
struct replies {
	int progress_n;
	uint64_t progress;
	bool ack;
	int32_t status;
	uint32_t ack_len;
	size_t msg_len;
	bool counted;
	uint64_t written;
};

static void replies(const struct rconn *c, struct replies *r)
{
	memset(r, 0, sizeof(*r));
	size_t off = c->outoff;
	while (off + RELAY_HDR_LEN <= c->outlen) {
		uint32_t type = get_le32(c->out + off), len = get_le32(c->out + off + 4);
		if (off + RELAY_HDR_LEN + len > c->outlen)
			break;
		struct relay_msg m;
		char err[128];
		if (type == RELAY_PROGRESS && len == 8) {
			r->progress_n++;
			r->progress = get_le64(c->out + off + RELAY_HDR_LEN);
		} else if (type == RELAY_ACK &&
			   tr_relay_msg_parse(c->out + off, RELAY_HDR_LEN + len, &m, err,
					      sizeof(err)) > 0) {
			r->ack = true;
			r->status = m.u.ack.status;
			r->ack_len = len;
			r->msg_len = strlen(m.u.ack.msg);
			r->counted = m.u.ack.counted;
			r->written = m.u.ack.written;
		}
		off += RELAY_HDR_LEN + len;
	}
}

/* A producer of session at the quota: feeds packets until the relay cuts
 * it off (at most 100); the packets its stream holds in *stored. */
static void quota_producer(struct trawl_relay *r, uint32_t flags, const char *session,
			   struct replies *rp, size_t *stored, int *fed)
{
	uint8_t b[1024];
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	tr_relay_conn_feed(c, b, m_hello(b, flags, session));
	c->outoff = c->outlen = 0;	/* the WELCOME */
	c->progress_at = 0;
	tr_relay_conn_feed(c, b, m_metadata(b));
	tr_relay_conn_feed(c, b, m_stream(b));
	*fed = 0;
	for (uint64_t seq = 0; seq < 100 && !c->closing; seq++) {
		tr_relay_conn_feed(c, b, m_packet(b, seq));
		++*fed;
	}
	replies(c, rp);
	*stored = c->trace && c->trace->nstreams ? c->trace->streams[0]->npackets : 0;
}

/* A counting producer (not resumable) under no quota: a PROGRESS every
 * RELAY_PROGRESS_EVERY messages, one waiting updated in place; the rest
 * left for the sweep. */
static void test_progress_every(void)
{
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = path("out-every") };
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!ok(r != NULL, "a relay's state without a quota"))
		return;
	uint8_t b[1024];
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	tr_relay_conn_feed(c, b, m_hello(b, RELAY_HELLO_COUNT, "e1"));
	c->outoff = c->outlen = 0;	/* the WELCOME */
	c->progress_at = 0;
	tr_relay_conn_feed(c, b, m_metadata(b));
	tr_relay_conn_feed(c, b, m_stream(b));
	struct replies rp;
	replies(c, &rp);
	ok(rp.progress_n == 0 && c->progress_due, "2 messages: no PROGRESS yet, one due for the "
	   "sweep (%d waiting, due %d)", rp.progress_n, c->progress_due);
	for (uint64_t seq = 0; seq < 100; seq++)
		tr_relay_conn_feed(c, b, m_packet(b, seq));
	replies(c, &rp);
	uint64_t want = (2 + 100) / RELAY_PROGRESS_EVERY * RELAY_PROGRESS_EVERY;
	ok(rp.progress_n == 1 && rp.progress == want && c->progress_due,
	   "102 messages: one PROGRESS waiting, of the %llu written at its last multiple of %d "
	   "(%d waiting, %llu), the rest due for the sweep", (unsigned long long)want,
	   RELAY_PROGRESS_EVERY, rp.progress_n, (unsigned long long)rp.progress);
	trawl_relay_free(r);
}

static void test_relay(void)
{
	struct trawl_relay_opts o = {
		.sz = sizeof(o), .output = path("out"), .max_session_size = 4096,
	};
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!ok(r != NULL, "a relay's state with a quota of 4096 bytes per host"))
		return;
	struct replies rp;
	size_t stored;
	int fed;
	quota_producer(r, RELAY_HELLO_COUNT, "c1", &rp, &stored, &fed);
	ok(stored > 0 && (size_t)fed == stored + 1, "the quota cuts the trace off after %zu of %d "
	   "packets", stored, fed);
	ok(rp.ack && rp.status == -EDQUOT && rp.counted, "asked, the cut's ACK (-EDQUOT) says "
	   "what was written (status %d, counted %d)", rp.status, rp.counted);
	is_int((int)rp.written, (int)(2 + stored),
	       "... the METADATA, the STREAM and the packets the stream holds");
	/* fewer messages than RELAY_PROGRESS_EVERY: no PROGRESS, the cut's ACK
	 * says it all */
	ok(stored + 2 < RELAY_PROGRESS_EVERY && rp.progress_n == 0,
	   "... and no PROGRESS before it, %zu messages being fewer than %d (%d waiting)",
	   stored + 2, RELAY_PROGRESS_EVERY, rp.progress_n);

	quota_producer(r, 0, "c2", &rp, &stored, &fed);
	ok(rp.ack && rp.status == -EDQUOT && !rp.counted && rp.progress_n == 0,
	   "not asked: a cut's ACK without the count, no PROGRESS (status %d, counted %d, "
	   "%d PROGRESS)", rp.status, rp.counted, rp.progress_n);
	is_int((int)rp.ack_len, (int)(4 + rp.msg_len + 1),
	       "... its payload the status and the reason alone (as before)");
	trawl_relay_free(r);
}

/* ----------------------------------------------------- a fake relay */

#define EV_BYTES 18		/* TRAWL_CTF_HEADER_FIXED (10) + a u64 payload */

struct fake {
	int lfd, port;
	bool counted;		/* say the count in the cut's ACK, and PROGRESS */
	int keep;		/* PACKETs stored before the cut */
	uint32_t hello_flags;
	uint64_t stored_events;
	int packets;
	pthread_t th;
};

static int rd_full(int fd, void *p, size_t n)
{
	uint8_t *b = p;
	while (n) {
		ssize_t k = recv(fd, b, n, 0);
		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	uint8_t *p = malloc(1 << 20), hdr[RELAY_HDR_LEN], out[RELAY_HDR_LEN + 64];
	uint64_t n = 0;
	if (!p || rd_full(fd, hdr, sizeof(hdr)) || get_le32(hdr) != RELAY_HELLO ||
	    get_le32(hdr + 4) > 4096 || rd_full(fd, p, get_le32(hdr + 4)))
		goto out;
	f->hello_flags = get_le32(p + 4);
	relay_put_hdr(out, RELAY_WELCOME, 5);
	put_le32(out + RELAY_HDR_LEN, 0);
	out[RELAY_HDR_LEN + 4] = 0;
	send(fd, out, RELAY_HDR_LEN + 5, MSG_NOSIGNAL);
	if (f->hello_flags & RELAY_HELLO_RESUME) {
		relay_put_hdr(out, RELAY_RESUMED, 8);
		put_le64(out + RELAY_HDR_LEN, 0);
		send(fd, out, RELAY_HDR_LEN + 8, MSG_NOSIGNAL);
	}
	for (;;) {
		if (rd_full(fd, hdr, sizeof(hdr)))
			goto out;
		uint32_t type = get_le32(hdr), len = get_le32(hdr + 4);
		if (len > (1 << 20) || rd_full(fd, p, len))
			goto out;
		if (type == RELAY_PACKET && f->packets == f->keep) {
			/* cut off: what came before is written */
			static const char why[] = "disk full (a fake relay)";
			size_t cl = f->counted ? 8 : 0;
			relay_put_hdr(out, RELAY_ACK, (uint32_t)(4 + sizeof(why) + cl));
			put_le32(out + RELAY_HDR_LEN, (uint32_t)-ENOSPC);
			memcpy(out + RELAY_HDR_LEN + 4, why, sizeof(why));
			if (cl)
				put_le64(out + RELAY_HDR_LEN + 4 + sizeof(why), n);
			send(fd, out, RELAY_HDR_LEN + 4 + sizeof(why) + cl, MSG_NOSIGNAL);
			shutdown(fd, SHUT_WR);
			/* what the producer still sends, dropped, until it closes */
			while (recv(fd, p, 1 << 20, 0) > 0)
				;
			goto out;
		}
		n++;
		if (type == RELAY_PACKET) {
			f->packets++;
			uint64_t content = get_le64(p + 8 + 8);	/* content_size, bits */
			f->stored_events += (content / 8 - PK_HDR_END) / EV_BYTES;
		}
		if (type == RELAY_CLOSE)
			goto out;
		if (f->counted) {
			relay_put_hdr(out, RELAY_PROGRESS, 8);
			put_le64(out + RELAY_HDR_LEN, n);
			send(fd, out, RELAY_HDR_LEN + 8, MSG_NOSIGNAL);
		}
	}
out:
	free(p);
	close(fd);
	return NULL;
}

static int fake_start(struct fake *f)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(f->lfd, 4) < 0 || getsockname(f->lfd, (struct sockaddr *)&a, &al) < 0)
		return -1;
	f->port = ntohs(a.sin_port);
	return pthread_create(&f->th, NULL, fake_run, f) ? -1 : 0;
}

static void fake_stop(struct fake *f)
{
	pthread_join(f->th, NULL);
	close(f->lfd);
}

/* A writer without a local copy streams to the fake until it fails (20000
 * events at most); its counts. */
static int stream_to(struct fake *f, unsigned resume_ms, uint64_t *emitted, uint64_t *events,
		     uint64_t *discarded, int *wr_err)
{
	char addr[64], err[512] = "";
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", f->port);
	const struct trawl_relay_dest_opts d = {
		.sz = sizeof(d), .addr = addr, .session = "s", .resume_ms = resume_ms,
	};
	struct trawl_ctf_dest *dest = trawl_relay_dest_new(&d);
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .hostname = "h", .domain = "ust", .clock_offset_s = 1700000000,
		.packet_size = 4096, .dest = dest, .err = err, .errlen = sizeof(err),
	};
	struct trawl_ctf_writer *w = dest ? trawl_ctf_writer_new(&o) : NULL;
	if (!w)
		return -1;
	struct trawl_ctf_type *fl = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, fl, "seq", trawl_ctf_type_int(w, 64, false, 10));
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_FIXED, NULL);
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, "tick", 13, fl);
	struct trawl_ctf_wstream *ws = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	*emitted = 0;
	int ret = ws ? 0 : -1;
	for (uint64_t i = 0; !ret && i < 20000; i++) {
		ret = trawl_ctf_wstream_event(ws, ec, 1000 + i, &i, 8);
		if (!ret)
			++*emitted;
	}
	*wr_err = ret;
	trawl_ctf_writer_close(w);
	int rc = trawl_ctf_writer_relay_discarded(w, events, discarded);
	trawl_ctf_writer_free(w);
	return rc;
}

static void test_writer(bool counted, unsigned resume_ms)
{
	const char *what = resume_ms ? "resumable" : "plain";
	struct fake f = { .counted = counted, .keep = 3 };
	if (!ok(fake_start(&f) == 0, "%s, %s: a fake relay on loopback", what,
		counted ? "counted" : "older"))
		return;
	uint64_t emitted = 0, events = 0, disc = 0;
	int wr_err = 0;
	int rc = stream_to(&f, resume_ms, &emitted, &events, &disc, &wr_err);
	fake_stop(&f);
	ok(f.hello_flags & RELAY_HELLO_COUNT, "%s: its HELLO asks for the count", what);
	/* the writer notices at a send or at its CLOSE (the sockets may hold
	 * every packet): wr_err is not checked */
	ok(f.packets == 3 && f.stored_events > 0 && emitted > f.stored_events,
	   "%s: cut off after 3 packets (%llu events) of %llu events emitted (%d)", what,
	   (unsigned long long)f.stored_events, (unsigned long long)emitted, wr_err);
	if (counted) {
		is_int(rc, 0, "%s: the count is exact", what);
		ok(events == emitted && disc == emitted - f.stored_events,
		   "%s: %llu events, %llu discarded: the events the fake did not store (%llu)",
		   what, (unsigned long long)events, (unsigned long long)disc,
		   (unsigned long long)(emitted - f.stored_events));
	} else {
		is_int(rc, -ENODATA, "%s, an older relay (no count, no PROGRESS): not known", what);
		ok(events == emitted && disc >= emitted - f.stored_events,
		   "%s: %llu discarded at most, of %llu", what, (unsigned long long)disc,
		   (unsigned long long)events);
	}
}

int main(void)
{
	alarm(120);	/* a fake that never answers fails the test, not the suite */
	snprintf(trash, sizeof(trash), "/tmp/trawl-test-cut-XXXXXX");
	if (!mkdtemp(trash)) {
		perror("mkdtemp");
		return 1;
	}
	mkdir(path("out"), 0700);
	mkdir(path("out-every"), 0700);
	test_parse();
	test_relay();
	test_progress_every();
	test_writer(true, 0);
	test_writer(false, 0);
	test_writer(true, 2000);
	tap_rm_tree(trash);
	return done_testing();
}
