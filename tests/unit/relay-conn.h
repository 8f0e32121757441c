/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/relay-conn.h - a producer and a live viewer driven through a
 * relay's connection state (tr_relay_conn_feed, the replies read from its
 * out buffer), for the unit tests of lib/relay/live.c: test-relay-live,
 * test-relay-demand. Include after relay/relay-internal.h,
 * net/live-proto.h, net/relay-proto.h, ctf/packet.h and tap.h.
 */
#ifndef TRAWL_TEST_RELAY_CONN_H
#define TRAWL_TEST_RELAY_CONN_H

/* ------------------------------------------------------------- producer */

/* Feeds a producer's message (what the relay answers is dropped: a
 * WELCOME is not read here). */
static void feed(struct rconn *c, const uint8_t *m, size_t n)
{
	tr_relay_conn_feed(c, m, n);
	c->outoff = c->outlen = 0;
}

/* HELLO of host n1's trace in session, with flags and a live timer. */
static void p_hello_opts(struct rconn *c, const char *session, const char *trace, uint32_t flags,
			 uint64_t live_us)
{
	uint8_t m[RELAY_HDR_LEN + 32 + 64] = { 0 };
	uint8_t *q = m + RELAY_HDR_LEN;
	put_le32(q, RELAY_VERSION);
	put_le32(q + 4, flags);
	put_le64(q + 8, live_us);
	size_t n = 32;
	n += (size_t)sprintf((char *)q + n, "%s", session) + 1;
	n += (size_t)sprintf((char *)q + n, "n1") + 1;
	n += (size_t)sprintf((char *)q + n, "%s", trace) + 1;
	relay_put_hdr(m, RELAY_HELLO, (uint32_t)n);
	feed(c, m, RELAY_HDR_LEN + n);
}

static void p_metadata(struct rconn *c)
{
	static const char text[] = "/* CTF 1.8 */\ntrace { major = 1; minor = 8; };\n";
	uint8_t m[RELAY_HDR_LEN + sizeof(text)];
	relay_put_hdr(m, RELAY_METADATA, sizeof(text) - 1);
	memcpy(m + RELAY_HDR_LEN, text, sizeof(text) - 1);
	feed(c, m, RELAY_HDR_LEN + sizeof(text) - 1);
}

static void p_stream(struct rconn *c, uint32_t handle, const char *name)
{
	uint8_t m[RELAY_HDR_LEN + 16 + 64] = { 0 };
	size_t nl = strlen(name) + 1;
	relay_put_hdr(m, RELAY_STREAM, (uint32_t)(16 + nl));
	put_le32(m + RELAY_HDR_LEN, handle);
	memcpy(m + RELAY_HDR_LEN + 16, name, nl);
	feed(c, m, RELAY_HDR_LEN + 16 + nl);
}

/* A packet of 64 bytes (the relay does not read its contents). */
static void p_packet(struct rconn *c, uint32_t handle, uint64_t tb, uint64_t te)
{
	uint8_t m[RELAY_HDR_LEN + RELAY_INDEX_LEN + 64] = { 0 };
	struct ctf_index ix = { .packet_size = 64 * 8, .content_size = 64 * 8, .ts_begin = tb,
				.ts_end = te };
	relay_put_hdr(m, RELAY_PACKET, RELAY_INDEX_LEN + 64);
	tr_relay_put_index(m + RELAY_HDR_LEN, handle, &ix);
	feed(c, m, sizeof(m));
}

/* --------------------------------------------------------------- viewer */

/* Sends a request; the reply waits in v->out (see reply()). */
static void ask(struct rconn *v, uint32_t cmd, const uint8_t *p, size_t n)
{
	uint8_t m[16 + 32];
	put_be64(m, n);
	put_be32(m + 8, cmd);
	put_be32(m + 12, 0);
	if (n)	/* p may be NULL then: memcpy's arguments must not */
		memcpy(m + 16, p, n);
	tr_relay_conn_feed(v, m, 16 + n);
}

static void ask_id(struct rconn *v, uint32_t cmd, uint64_t id)
{
	uint8_t p[8];
	put_be64(p, id);
	ask(v, cmd, p, 8);
}

/* Takes the n bytes of the reply waiting: false when fewer wait. */
static bool reply(struct rconn *v, uint8_t *b, size_t n)
{
	if (v->outlen - v->outoff < n)
		return false;
	if (b)
		memcpy(b, v->out + v->outoff, n);
	v->outoff += n;
	if (v->outoff == v->outlen)
		v->outoff = v->outlen = 0;
	return true;
}

static size_t waiting(const struct rconn *v)
{
	return v->outlen - v->outoff;
}

/* An index reply: status, flags, and the fields a viewer uses. */
struct ix {
	uint64_t offset, packet_size, content_size, ts_end, class_id;
	uint32_t status, flags;
};

static bool next_index(struct rconn *v, uint64_t stream, struct ix *x)
{
	uint8_t b[LIVE_INDEX_LEN];
	ask_id(v, LIVE_GET_NEXT_INDEX, stream);
	memset(x, 0, sizeof(*x));
	if (!reply(v, b, sizeof(b)))
		return false;	/* held */
	x->offset = get_be64(b);
	x->packet_size = get_be64(b + 8);
	x->content_size = get_be64(b + 16);
	x->ts_end = get_be64(b + 32);
	x->class_id = get_be64(b + 48);
	x->status = get_be32(b + 56);
	x->flags = get_be32(b + 60);
	return true;
}

/* The streams of an ATTACH or GET_NEW_STREAMS reply: their count, ids in
 * ids[] and whether each is a metadata stream. */
static int streams(struct rconn *v, uint64_t *ids, bool *meta, int max)
{
	uint8_t h[8], s[LIVE_STREAM_LEN];
	if (!reply(v, h, 8) || get_be32(h) != 1)
		return -1;
	int n = (int)get_be32(h + 4);
	for (int i = 0; i < n; i++) {
		if (!reply(v, s, sizeof(s)) || i >= max)
			return -1;
		ids[i] = get_be64(s);
		meta[i] = get_be32(s + 16) != 0;
	}
	return n;
}

/* What the viewer reads of a packet (GET_PACKET), as babeltrace2 does. */
static void read_packet(struct rconn *v, uint64_t stream, const struct ix *x)
{
	uint8_t p[20];
	put_be64(p, stream);
	put_be64(p + 8, x->offset);
	put_be32(p + 16, (uint32_t)(x->packet_size / 8));
	ask(v, LIVE_GET_PACKET, p, 20);
	reply(v, NULL, waiting(v));
}

static void read_metadata(struct rconn *v, uint64_t stream)
{
	ask_id(v, LIVE_GET_METADATA, stream);
	reply(v, NULL, waiting(v));
}

/* A viewer connected and attached to session name (its only one). The
 * ids of the streams announced, metadata first, in ids[]: their count. */
static int attach_to(struct trawl_relay *r, struct rconn *v, const char *name, uint64_t *ids,
		     bool *meta, int max)
{
	uint8_t cp[20] = { 0 };
	put_be32(cp + 8, LIVE_MAJOR);
	put_be32(cp + 12, LIVE_MINOR);
	put_be32(cp + 16, LIVE_CONNECT_COMMAND);
	ask(v, LIVE_CONNECT, cp, 20);
	reply(v, NULL, 20);
	uint64_t sid = 0;
	for (struct rsession *s = r->sessions; s; s = s->next)
		if (!strcmp(s->name, name))
			sid = s->id;
	uint8_t ap[20] = { 0 };
	put_be64(ap, sid);
	put_be32(ap + 16, LIVE_SEEK_BEGINNING);
	ask(v, LIVE_ATTACH_SESSION, ap, 20);
	return streams(v, ids, meta, max);
}

#endif
