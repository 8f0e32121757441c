/* SPDX-License-Identifier: MIT */
/*
 * test-relay-names - the relay's files and refusals (lib/relay/relay.c)
 * driven without sockets (relay-internal.h, as test-relay-live does).
 *
 * Checks: a stream whose index file cannot be created (its name is taken
 * in index/) leaves no stream file either, and the producer gets the
 * reason in an ACK (status -EEXIST) before the connection closes; names
 * refused at HELLO ('-x' as session, host or trace) get a WELCOME with
 * -EPROTO and the reason, create nothing, and are logged; garbage before
 * HELLO gets no reply; a trace that says CLOSE with neither metadata nor a
 * stream is removed with its empty host and session directories, and one
 * with metadata is kept.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "net/relay-proto.h"

#include "tap.h"

static char logbuf[4096];
static size_t loglen;

static void hear(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	int n = snprintf(logbuf + loglen, sizeof(logbuf) - loglen, "%s\n", msg);
	if (n > 0 && (size_t)n < sizeof(logbuf) - loglen)
		loglen += (size_t)n;
}

static void hello(struct rconn *c, const char *s, const char *h, const char *t)
{
	uint8_t m[RELAY_HDR_LEN + 32 + 96] = { 0 };
	uint8_t *q = m + RELAY_HDR_LEN;
	put_le32(q, RELAY_VERSION);
	size_t n = 32;
	n += (size_t)sprintf((char *)q + n, "%s", s) + 1;
	n += (size_t)sprintf((char *)q + n, "%s", h) + 1;
	n += (size_t)sprintf((char *)q + n, "%s", t) + 1;
	relay_put_hdr(m, RELAY_HELLO, (uint32_t)n);
	tr_relay_conn_feed(c, m, RELAY_HDR_LEN + n);
}

static void stream(struct rconn *c, uint32_t handle, const char *name)
{
	uint8_t m[RELAY_HDR_LEN + 16 + 64] = { 0 };
	size_t nl = strlen(name) + 1;
	relay_put_hdr(m, RELAY_STREAM, (uint32_t)(16 + nl));
	put_le32(m + RELAY_HDR_LEN, handle);
	memcpy(m + RELAY_HDR_LEN + 16, name, nl);
	tr_relay_conn_feed(c, m, RELAY_HDR_LEN + 16 + nl);
}

static void simple(struct rconn *c, enum relay_type type, const char *body)
{
	uint8_t m[RELAY_HDR_LEN + 128];
	size_t n = strlen(body);
	relay_put_hdr(m, type, (uint32_t)n);
	memcpy(m + RELAY_HDR_LEN, body, n);
	tr_relay_conn_feed(c, m, RELAY_HDR_LEN + n);
}

/* The replies queued on c (WELCOME, ACK), each "TYPE STATUS MSG|", into
 * out; the queue emptied. */
static const char *replies(struct rconn *c, char *out, size_t len)
{
	size_t o = 0, k = c->outoff;
	out[0] = 0;
	while (k + RELAY_HDR_LEN + 4 <= c->outlen) {
		uint32_t type = get_le32(c->out + k), plen = get_le32(c->out + k + 4);
		int32_t st = (int32_t)get_le32(c->out + k + RELAY_HDR_LEN);
		o += (size_t)snprintf(out + o, len - o, "%s %d %.*s|", tr_relay_type_name(type), st,
				      (int)(plen - 5), (const char *)c->out + k + RELAY_HDR_LEN + 4);
		if (o >= len)
			break;
		k += RELAY_HDR_LEN + plen;
	}
	c->outoff = c->outlen = 0;
	return out;
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

int main(void)
{
	char dir[96], p[256], got[512];
	snprintf(dir, sizeof(dir), "/tmp/trawl-test-relay-names-%d", (int)getpid());
	mkdir(dir, 0700);
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = dir, .log = hear };
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!ok(r != NULL, "a relay's state without sockets"))
		return done_testing();

	/* ---- a stream whose index cannot be made: neither file stays */
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	hello(c, "s1", "n1", "ust");
	is_str(replies(c, got, sizeof(got)), "WELCOME 0 |", "HELLO s1/n1/ust welcomed");
	simple(c, RELAY_METADATA, "/* CTF 1.8 */\n");	/* the trace's directory made */
	snprintf(p, sizeof(p), "%s/s1/n1/ust/index/chan_0.idx", dir);
	ok(mkdir(p, 0700) == 0, "index/chan_0.idx taken (a directory)");
	stream(c, 0, "chan_0");
	snprintf(p, sizeof(p), "%s/s1/n1/ust/chan_0", dir);
	ok(!exists(p), "STREAM chan_0 refused: no stream file without its index");
	replies(c, got, sizeof(got));
	ok(strncmp(got, "ACK -17 ", 8) == 0 && strstr(got, "index/chan_0.idx: File exists"),
	   "the producer gets the reason in an ACK (%s)", got);
	ok(c->closing && !c->dead, "the connection closes once the ACK is sent");
	ok(strstr(logbuf, "chan_0.idx: File exists; connection closed") != NULL,
	   "the relay logs it");
	tr_relay_conn_close(c);

	/* ---- names refused at HELLO: the reason back, nothing created */
	static const char *const who[] = { "session", "host", "trace" };
	for (int i = 0; i < 3; i++) {
		const char *n[3] = { "s2", "n2", "ust" };
		n[i] = "-x";
		loglen = 0;
		logbuf[0] = 0;
		c = tr_relay_conn_new(r, RC_PRODUCER);
		hello(c, n[0], n[1], n[2]);
		is_str(replies(c, got, sizeof(got)),
		       "WELCOME -71 HELLO: a session, host or trace name that is not a plain file name|",
		       "%s '-x': WELCOME with -EPROTO and the reason", who[i]);
		ok(c->closing && strstr(logbuf, "not a plain file name; connection closed"),
		   "%s '-x': closing, and logged", who[i]);
		tr_relay_conn_close(c);
	}
	snprintf(p, sizeof(p), "%s/s2", dir);
	ok(!exists(p) && r->sessions == NULL, "nothing of them created, no session kept");

	/* ---- garbage before HELLO: closed without a reply */
	c = tr_relay_conn_new(r, RC_PRODUCER);
	simple(c, (enum relay_type)0x20544547, "/ HTTP/1.0\r\n\r\n");
	ok(c->dead && c->outlen == 0, "garbage: closed at once, no reply");
	tr_relay_conn_close(c);

	/* ---- CLOSE without metadata or a stream: nothing stays */
	c = tr_relay_conn_new(r, RC_PRODUCER);
	hello(c, "s3", "n3", "ust");
	simple(c, RELAY_CLOSE, "");
	is_str(replies(c, got, sizeof(got)), "WELCOME 0 |ACK 0 |", "s3: WELCOME, then ACK of CLOSE");
	snprintf(p, sizeof(p), "%s/s3", dir);
	ok(!exists(p), "a trace complete without metadata or a stream: removed, host and session too");
	tr_relay_conn_close(c);
	c = tr_relay_conn_new(r, RC_PRODUCER);
	hello(c, "s4", "n4", "ust");
	simple(c, RELAY_METADATA, "/* CTF 1.8 */\n");
	simple(c, RELAY_CLOSE, "");
	snprintf(p, sizeof(p), "%s/s4/n4/ust/metadata", dir);
	ok(exists(p), "one with metadata is kept");
	tr_relay_conn_close(c);

	trawl_relay_free(r);
	tap_rm_tree(dir);
	return done_testing();
}
