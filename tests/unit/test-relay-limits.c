/* SPDX-License-Identifier: MIT */
/*
 * test-relay-limits - the relay's limits against peers that misbehave
 * (lib/relay/relay.c, docs/relay.md "Limits against hostile peers"),
 * driven without sockets (lib/relay/relay-internal.h, as fuzz-relay does):
 * the descriptors of a trace that ended are closed although its session
 * goes on, reopened while a viewer is attached (and its packets served
 * from them), closed again when it leaves; the descriptor pool refuses a
 * STREAM and a HELLO over it with the reason; before HELLO nothing larger
 * than a HELLO is buffered; the input buffers' caps per connection and in
 * all. (Accepting, EMFILE and the timeouts need sockets:
 * tests/e2e/t0850-relay-hostile.sh.)
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "net/live-proto.h"
#include "net/relay-proto.h"
#include "ctf/packet.h"

#include "tap.h"

/* the relay's last log line */

/* Whether the last message queued to c is of type with status and a
 * reason that begins with why. */
static bool last_status(const struct rconn *c, uint32_t type, int status, const char *why)
{
	size_t off = 0, last = SIZE_MAX;
	while (off + RELAY_HDR_LEN <= c->outlen) {
		last = off;
		off += RELAY_HDR_LEN + get_le32(c->out + off + 4);
	}
	if (last == SIZE_MAX || off != c->outlen || get_le32(c->out + last) != type ||
	    get_le32(c->out + last + 4) < 5)
		return false;
	const char *msg = (const char *)c->out + last + RELAY_HDR_LEN + 4;
	return (int32_t)get_le32(c->out + last + RELAY_HDR_LEN) == status &&
	       strncmp(msg, why, strlen(why)) == 0;
}

static char last_log[1024];
static void log_hook(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

static int feed(struct rconn *c, const uint8_t *m, size_t n)
{
	int ret = tr_relay_conn_feed(c, m, n);
	c->outoff = c->outlen = 0;	/* WELCOME: not read here */
	return ret;
}

static int p_hello(struct rconn *c, const char *trace)
{
	uint8_t m[RELAY_HDR_LEN + 32 + 64] = { 0 };
	uint8_t *q = m + RELAY_HDR_LEN;
	put_le32(q, RELAY_VERSION);
	size_t n = 32;
	n += (size_t)sprintf((char *)q + n, "s1") + 1;
	n += (size_t)sprintf((char *)q + n, "n1") + 1;
	n += (size_t)sprintf((char *)q + n, "%s", trace) + 1;
	relay_put_hdr(m, RELAY_HELLO, (uint32_t)n);
	int ret = tr_relay_conn_feed(c, m, RELAY_HDR_LEN + n);
	return ret;
}

static void p_metadata(struct rconn *c)
{
	static const char text[] = "/* CTF 1.8 */\ntrace { major = 1; minor = 8; };\n";
	uint8_t m[RELAY_HDR_LEN + sizeof(text)];
	relay_put_hdr(m, RELAY_METADATA, sizeof(text) - 1);
	memcpy(m + RELAY_HDR_LEN, text, sizeof(text) - 1);
	feed(c, m, RELAY_HDR_LEN + sizeof(text) - 1);
}

static int p_stream(struct rconn *c, uint32_t handle)
{
	uint8_t m[RELAY_HDR_LEN + 16 + 64] = { 0 };
	char name[32];
	size_t nl = (size_t)snprintf(name, sizeof(name), "channel0_%u", handle) + 1;
	relay_put_hdr(m, RELAY_STREAM, (uint32_t)(16 + nl));
	put_le32(m + RELAY_HDR_LEN, handle);
	memcpy(m + RELAY_HDR_LEN + 16, name, nl);
	return feed(c, m, RELAY_HDR_LEN + 16 + nl);
}

/* A packet of 64 bytes, each byte fill. */
static void p_packet(struct rconn *c, uint32_t handle, uint64_t tb, uint8_t fill)
{
	uint8_t m[RELAY_HDR_LEN + RELAY_INDEX_LEN + 64];
	struct ctf_index ix = { .packet_size = 64 * 8, .content_size = 64 * 8, .ts_begin = tb,
				.ts_end = tb + 1000 };
	relay_put_hdr(m, RELAY_PACKET, RELAY_INDEX_LEN + 64);
	tr_relay_put_index(m + RELAY_HDR_LEN, handle, &ix);
	memset(m + RELAY_HDR_LEN + RELAY_INDEX_LEN, fill, 64);
	feed(c, m, sizeof(m));
}

static void p_close(struct rconn *c)
{
	uint8_t m[RELAY_HDR_LEN];
	relay_put_hdr(m, RELAY_CLOSE, 0);
	feed(c, m, sizeof(m));
}

/* A viewer's request; the reply waits in v->out. */
static void ask(struct rconn *v, uint32_t cmd, const uint8_t *p, size_t n)
{
	uint8_t m[16 + 32];
	put_be64(m, n);
	put_be32(m + 8, cmd);
	put_be32(m + 12, 0);
	if (n)
		memcpy(m + 16, p, n);
	tr_relay_conn_feed(v, m, 16 + n);
}

static void drop_replies(struct rconn *v)
{
	v->outoff = v->outlen = 0;
}

/* The descriptors a trace holds open. */
static int open_fds(const struct rtrace *t)
{
	int n = t->meta_fd >= 0;
	for (size_t i = 0; i < t->nstreams; i++)
		n += (t->streams[i]->fd >= 0) + (t->streams[i]->idxfd >= 0);
	return n;
}

static struct trawl_relay *relay(const char *dir, struct trawl_relay_opts *o)
{
	o->sz = sizeof(*o);
	o->output = dir;
	o->log = log_hook;
	return tr_relay_state_new(o);
}

/* A trace that ended, in a session that goes on: closed, reopened for a
 * viewer, closed when it leaves. */
static void ended_trace(const char *dir)
{
	struct trawl_relay_opts o = { 0 };
	struct trawl_relay *r = relay(dir, &o);
	if (!ok(r != NULL, "a relay's state without sockets"))
		return;
	struct rconn *pk = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(pk, "kernel");
	p_metadata(pk);
	p_stream(pk, 0);
	p_packet(pk, 0, 1000, 0xaa);
	struct rconn *pu = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(pu, "ust");
	p_metadata(pu);
	for (uint32_t h = 0; h < 3; h++) {
		p_stream(pu, h);
		p_packet(pu, h, 1000, (uint8_t)(0x10 + h));
	}
	struct rsession *s = r->sessions;
	if (!ok(s && s->ntraces == 2 && r->nfds == 3 + 7,
		"two traces of one session: 3 + 7 descriptors (%d)", r->nfds))
		goto out;
	struct rtrace *tu = s->traces[1];
	p_close(pu);
	tr_relay_conn_close(pu);
	ok(tu->closed && open_fds(tu) == 0 && r->nfds == 3,
	   "the ust trace ended while the kernel one goes on: its 7 descriptors closed (%d held, "
	   "%d in all)", open_fds(tu), r->nfds);

	/* a viewer attaches: the ended trace's files are reopened */
	struct rconn *v = tr_relay_conn_new(r, RC_VIEWER);
	uint8_t cp[20] = { 0 };
	put_be32(cp + 8, LIVE_MAJOR);
	put_be32(cp + 12, LIVE_MINOR);
	put_be32(cp + 16, LIVE_CONNECT_COMMAND);
	ask(v, LIVE_CONNECT, cp, 20);
	ask(v, LIVE_CREATE_SESSION, NULL, 0);
	drop_replies(v);
	uint8_t ap[20] = { 0 };
	put_be64(ap, s->id);
	put_be32(ap + 16, LIVE_SEEK_BEGINNING);
	ask(v, LIVE_ATTACH_SESSION, ap, 20);
	drop_replies(v);
	ok(s->viewers == 1 && open_fds(tu) == 7 && r->nfds == 10,
	   "a viewer attached: the ended trace's 7 files reopened (%d in all)", r->nfds);

	/* its packet is served from them */
	uint8_t p[8];
	put_be64(p, tu->streams[1]->id);
	ask(v, LIVE_GET_NEXT_INDEX, p, 8);
	bool got = v->outlen - v->outoff >= LIVE_INDEX_LEN &&
		   get_be32(v->out + v->outoff + 56) == LIVE_INDEX_OK &&
		   get_be64(v->out + v->outoff + 8) == 64 * 8;
	drop_replies(v);
	uint8_t g[20];
	put_be64(g, tu->streams[1]->id);
	put_be64(g + 8, 0);
	put_be32(g + 16, 64);
	ask(v, LIVE_GET_PACKET, g, 20);
	got = got && v->outlen - v->outoff == 12 + 64 &&
	      get_be32(v->out + v->outoff) == LIVE_PACKET_OK && v->out[v->outoff + 12] == 0x11 &&
	      v->out[v->outoff + 12 + 63] == 0x11;
	drop_replies(v);
	ok(got, "and the viewer reads the ended trace's packet from them (index, then 64 bytes)");

	tr_relay_conn_close(v);
	ok(open_fds(tu) == 0 && r->nfds == 3,
	   "the viewer gone: closed again (%d in all)", r->nfds);
	p_close(pk);
	tr_relay_conn_close(pk);
	ok(r->sessions == NULL && r->nfds == 0, "the session over: no descriptor held (%d)",
	   r->nfds);
out:
	trawl_relay_free(r);
}

/* The descriptor pool: a STREAM or a HELLO over it is refused. */
static void pool(const char *dir)
{
	struct trawl_relay_opts o = { .fd_pool_size = 4 };
	struct trawl_relay *r = relay(dir, &o);
	if (!ok(r != NULL, "a relay with a pool of 4 descriptors"))
		return;
	struct rconn *a = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(a, "p1");
	int s0 = p_stream(a, 0);
	last_log[0] = 0;
	int s1 = p_stream(a, 1);
	/* (closed at once, or once its reason is sent) */
	ok(s0 == 0 && (s1 < 0 || a->closing || a->dead) &&
	   strstr(last_log, "descriptor pool is full (3 of 4"),
	   "HELLO and a stream (3 descriptors): a second STREAM is refused (%s)", last_log);
	struct rconn *b = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(b, "p2");
	p_metadata(b);		/* the 4th descriptor (its trace's files are made now) */
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(c, "p3");
	bool refused = c->closing && c->outlen > RELAY_HDR_LEN + 4 &&
		       get_le32(c->out) == RELAY_WELCOME &&
		       (int32_t)get_le32(c->out + RELAY_HDR_LEN) == -EMFILE &&
		       strstr((const char *)c->out + RELAY_HDR_LEN + 4, "descriptor pool is full");
	ok(refused && r->nfds == 4, "a HELLO over the pool: a WELCOME with the reason (%s)",
	   c->outlen > RELAY_HDR_LEN + 4 ? (const char *)c->out + RELAY_HDR_LEN + 4 : "none");
	/* the log has the figures, a peer that authenticated nothing not */
	ok(refused && !strstr((const char *)c->out + RELAY_HDR_LEN + 4, "in use") &&
	   strstr(last_log, "of 4 in use"), "the peer is not told the pool's size (the log is: %s)",
	   last_log);
	tr_relay_conn_close(a);
	tr_relay_conn_close(b);
	tr_relay_conn_close(c);
	ok(r->nfds == 0, "all gone: the pool is empty (%d)", r->nfds);
	trawl_relay_free(r);
}

/* Before HELLO, and the input buffers' caps. */
static void buffers(const char *dir)
{
	struct trawl_relay_opts o = { .max_conn_buffer = 128 << 10, .max_total_buffer = 192 << 10 };
	struct trawl_relay *r = relay(dir, &o);
	if (!ok(r != NULL, "a relay with buffers of 128 KiB per connection, 192 KiB in all"))
		return;
	uint8_t m[RELAY_HDR_LEN + 64] = { 0 };
	struct rconn *a = tr_relay_conn_new(r, RC_PRODUCER);
	relay_put_hdr(m, RELAY_PACKET, 64u << 20);
	last_log[0] = 0;
	int ret = tr_relay_conn_feed(a, m, sizeof(m));
	ok(ret < 0 && a->dead && strstr(last_log, "PACKET (67108864 bytes) before HELLO"),
	   "a PACKET of 64 MiB declared before HELLO: closed at its header (%s)", last_log);
	struct rconn *b = tr_relay_conn_new(r, RC_PRODUCER);
	relay_put_hdr(m, RELAY_HELLO, 5000);
	ret = tr_relay_conn_feed(b, m, sizeof(m));
	ok(ret < 0 && b->closing && b->outlen > RELAY_HDR_LEN + 4 &&
	   (int32_t)get_le32(b->out + RELAY_HDR_LEN) == -EPROTO &&
	   strstr((const char *)b->out + RELAY_HDR_LEN + 4, "HELLO of 5000 bytes (at most 1024)"),
	   "a HELLO of 5000 bytes: refused with the reason in a WELCOME");
	tr_relay_conn_close(a);
	tr_relay_conn_close(b);

	/* after HELLO: a packet of 1 MiB arrives 32 KiB at a time */
	static uint8_t chunk[32 << 10];
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(c, "big");
	relay_put_hdr(m, RELAY_PACKET, 1u << 20);
	tr_relay_conn_feed(c, m, RELAY_HDR_LEN);
	size_t fed = 0;
	last_log[0] = 0;
	while (fed < (1u << 20) && tr_relay_conn_feed(c, chunk, sizeof(chunk)) == 0)
		fed += sizeof(chunk);
	/* its producer is told why (issue 28 item 8: not a reset) */
	ok(c->closing && fed <= (128u << 10) && strstr(last_log, "--max-conn-buffer") &&
	   last_status(c, RELAY_ACK, -ENOBUFS, "buffer full: a message of"),
	   "a connection that buffers more than 128 KiB is closed, its producer told why in an "
	   "ACK (%zu bytes taken; %s)", fed, last_log);
	tr_relay_conn_close(c);

	/* two connections of 96 KiB and more each: the second goes over 192 */
	struct rconn *d = tr_relay_conn_new(r, RC_PRODUCER);
	struct rconn *e = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(d, "d");
	p_hello(e, "e");
	tr_relay_conn_feed(d, m, RELAY_HDR_LEN);
	tr_relay_conn_feed(e, m, RELAY_HDR_LEN);
	last_log[0] = 0;
	for (int i = 0; i < 3 && !d->dead; i++)
		tr_relay_conn_feed(d, chunk, sizeof(chunk));
	for (int i = 0; i < 3 && !e->dead; i++)
		tr_relay_conn_feed(e, chunk, sizeof(chunk));
	ok(!d->dead && !d->closing && e->closing && r->buffered <= (192u << 10) &&
	   strstr(last_log, "--max-total-buffer") &&
	   last_status(e, RELAY_ACK, -ENOBUFS, "buffer full: the relay's input buffers"),
	   "two at 96 KiB: the second is closed, the first goes on (%zu buffered; %s)",
	   r->buffered, last_log);
	tr_relay_conn_close(d);
	tr_relay_conn_close(e);
	ok(r->buffered == 0, "all gone: nothing buffered (%zu)", r->buffered);
	trawl_relay_free(r);
}

int main(void)
{
	char dir[96];
	snprintf(dir, sizeof(dir), "/tmp/trawl-test-relay-limits-%d", (int)getpid());
	mkdir(dir, 0700);
	ended_trace(dir);
	pool(dir);
	buffers(dir);
	tap_rm_tree(dir);
	return done_testing();
}
