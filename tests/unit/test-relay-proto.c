/* SPDX-License-Identifier: MIT */
/*
 * test-relay-proto - the relay's wire formats, parsed and written without a
 * socket: the producer->relay data protocol (lib/net/relay-proto.h:
 * tr_relay_msg_parse, tr_relay_name_ok, tr_relay_put_index, tr_relay_type_name,
 * tr_net_split_addr), the LTTng live viewer requests (lib/net/live-proto.h:
 * tr_live_req_parse, tr_live_cmd_name, tr_live_put_str) and the LTTng index file
 * entries (lib/ctf/packet.h: ctf_index_put_header, ctf_index_put_entry).
 *
 * Messages are built by hand, field by field, from the layouts documented
 * in the headers; every parsed field is compared with what was encoded,
 * every truncated prefix must ask for more bytes, and every malformed
 * message must be rejected with an error message.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "internal.h"
#include "ctf/packet.h"
#include "net/live-proto.h"
#include "net/relay-proto.h"

/* ------------------------------------------------------------ builder */

/* One or more messages under construction. */
struct mb {
	uint8_t b[8192];
	size_t n;
	size_t start;			/* where the current message began */
};

static void mb_u32(struct mb *m, uint32_t v) { put_le32(m->b + m->n, v); m->n += 4; }
static void mb_u64(struct mb *m, uint64_t v) { put_le64(m->b + m->n, v); m->n += 8; }
static void mb_bytes(struct mb *m, const void *p, size_t n) { memcpy(m->b + m->n, p, n); m->n += n; }
static void mb_str(struct mb *m, const char *s) { mb_bytes(m, s, strlen(s) + 1); }
static void mb_strn(struct mb *m, const char *s) { mb_bytes(m, s, strlen(s)); }	/* no NUL */

/* Starts a message of type t (header written by mb_end). */
static void mb_begin(struct mb *m, uint32_t t)
{
	m->start = m->n;
	put_le32(m->b + m->n, t);
	m->n += RELAY_HDR_LEN;
}

/* Writes the payload length; returns the message's size. */
static size_t mb_end(struct mb *m)
{
	put_le32(m->b + m->start + 4, (uint32_t)(m->n - m->start - RELAY_HDR_LEN));
	return m->n - m->start;
}

static const uint8_t UUID[16] = { 0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87,
				  0x98, 0xa9, 0xba, 0xcb, 0xdc, 0xed, 0xfe, 0x0f };

static size_t mk_hello(struct mb *m, const char *session, const char *host, const char *trace)
{
	mb_begin(m, RELAY_HELLO);
	mb_u32(m, RELAY_VERSION);
	mb_u32(m, 0xdeadbeefu);
	mb_u64(m, 0x0000000100000200ull);
	mb_bytes(m, UUID, 16);
	mb_str(m, session);
	mb_str(m, host);
	mb_str(m, trace);
	return mb_end(m);
}

static size_t mk_stream(struct mb *m, const char *name)
{
	mb_begin(m, RELAY_STREAM);
	mb_u32(m, 7);
	mb_u32(m, 3);
	mb_u64(m, 0x100000002ull);
	mb_str(m, name);
	return mb_end(m);
}

/* A PACKET with nbytes of data (bytes i: i*7+1) and the given index. */
static size_t mk_packet(struct mb *m, uint32_t handle, const struct ctf_index *ix, size_t nbytes)
{
	mb_begin(m, RELAY_PACKET);
	mb_u32(m, handle);
	mb_u32(m, 0);
	mb_u64(m, ix->packet_size);
	mb_u64(m, ix->content_size);
	mb_u64(m, ix->ts_begin);
	mb_u64(m, ix->ts_end);
	mb_u64(m, ix->events_discarded);
	mb_u64(m, ix->stream_id);
	mb_u64(m, ix->instance_id);
	mb_u64(m, ix->seq);
	for (size_t i = 0; i < nbytes; i++)
		m->b[m->n++] = (uint8_t)(i * 7 + 1);
	return mb_end(m);
}

static struct ctf_index good_index(size_t nbytes)
{
	struct ctf_index ix = {
		.packet_size = (uint64_t)nbytes * 8,
		.content_size = (uint64_t)nbytes * 8 - 24,
		.ts_begin = 1700000000000000000ull,
		.ts_end = 1700000000000123456ull,
		.events_discarded = 42,
		.stream_id = 3,
		.instance_id = 0x8000000000000001ull,
		.seq = 99,
	};
	return ix;
}

static size_t mk_beacon(struct mb *m, uint32_t handle, uint64_t ts)
{
	mb_begin(m, RELAY_BEACON);
	mb_u32(m, handle);
	mb_u32(m, 0);
	mb_u64(m, ts);
	return mb_end(m);
}

/* A string pointer lies inside [lo, hi) and its NUL too. */
static bool str_inside(const char *s, const uint8_t *lo, const uint8_t *hi)
{
	if (!s || (const uint8_t *)s < lo || (const uint8_t *)s >= hi)
		return false;
	return memchr(s, 0, (size_t)(hi - (const uint8_t *)s)) != NULL;
}

/* Every proper prefix of the message at buf (size n) asks for more. */
static bool prefixes_need_more(const uint8_t *buf, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		/* an exactly-sized copy: a sanitized build sees any overread */
		uint8_t *c = malloc(k ? k : 1);
		memcpy(c, buf, k);
		struct relay_msg m;
		char err[256] = "";
		ssize_t r = tr_relay_msg_parse(c, k, &m, err, sizeof(err));
		free(c);
		if (r != 0) {
			printf("#   prefix of %zu bytes (of %zu): %zd %s\n", k, n, r, err);
			return false;
		}
	}
	return true;
}

/* Parses and expects a rejection with errno e and an error message that
 * contains what (when not NULL). */
static void reject(const uint8_t *buf, size_t n, int e, const char *what, const char *desc)
{
	struct relay_msg m;
	char err[256];
	memset(err, 0, sizeof(err));
	uint8_t *c = malloc(n ? n : 1);
	memcpy(c, buf, n);
	ssize_t r = tr_relay_msg_parse(c, n, &m, err, sizeof(err));
	free(c);
	bool good = r == -e && err[0] && (!what || strstr(err, what));
	ok(good, "rejected: %s (%zd: %s)", desc, r, err);
	if (!good)
		printf("#   want %d with \"%s\"\n", -e, what ? what : "");
}

/* Parses buf[0..n) (exactly sized copy kept in *keep for pointer checks). */
static ssize_t parse_exact(const uint8_t *buf, size_t n, uint8_t **keep, struct relay_msg *m,
			   char *err, size_t errlen)
{
	uint8_t *c = malloc(n ? n : 1);
	memcpy(c, buf, n);
	*keep = c;
	err[0] = 0;
	return tr_relay_msg_parse(c, n, m, err, errlen);
}

/* -------------------------------------------------- well-formed messages */

static void test_hello(void)
{
	struct mb b = { .n = 0 };
	size_t n = mk_hello(&b, "web-1", "node_1.example", "kernel");
	uint8_t *c;
	struct relay_msg m;
	char err[256];
	ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, n, "HELLO: size = header + payload (%s)", err);
	is_int(n, RELAY_HDR_LEN + 32 + 6 + 15 + 7, "HELLO: layout of 8 + 32 + three strings");
	is_int(m.type, RELAY_HELLO, "HELLO: type");
	is_int(m.len, n - RELAY_HDR_LEN, "HELLO: len");
	is_int(m.u.hello.version, RELAY_VERSION, "HELLO: version");
	is_int(m.u.hello.flags, 0xdeadbeefu, "HELLO: flags");
	ok(m.u.hello.live_timer_us == 0x0000000100000200ull, "HELLO: live timer (64 bits)");
	ok(m.u.hello.uuid == c + 24 && memcmp(m.u.hello.uuid, UUID, 16) == 0,
	   "HELLO: uuid points at its 16 bytes");
	is_str(m.u.hello.session, "web-1", "HELLO: session");
	is_str(m.u.hello.host, "node_1.example", "HELLO: host");
	is_str(m.u.hello.trace, "kernel", "HELLO: trace");
	ok(str_inside(m.u.hello.session, c, c + n) && str_inside(m.u.hello.host, c, c + n) &&
	   str_inside(m.u.hello.trace, c, c + n) && m.u.hello.session == (const char *)c + 40,
	   "HELLO: strings point inside the buffer");
	ok(prefixes_need_more(b.b, n), "HELLO: every proper prefix needs more bytes");
	free(c);

	/* 255-character names are fine, and so are dots and dashes inside */
	char n255[256];
	memset(n255, 'a', 255);
	n255[255] = 0;
	b.n = 0;
	n = mk_hello(&b, n255, "a..b", "x.y-z_0");
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == (ssize_t)n && m.u.hello.session && strlen(m.u.hello.session) == 255,
	   "HELLO: a 255-character session name is accepted (%zd %s)", r, err);
	ok(r == (ssize_t)n && strcmp(m.u.hello.host, "a..b") == 0 &&
	   strcmp(m.u.hello.trace, "x.y-z_0") == 0, "HELLO: \"a..b\" and \"x.y-z_0\" accepted");
	free(c);
}

static void test_welcome_ack(void)
{
	struct mb b = { .n = 0 };
	uint8_t *c;
	struct relay_msg m;
	char err[256];

	mb_begin(&b, RELAY_WELCOME);
	mb_u32(&b, (uint32_t)-EEXIST);
	mb_str(&b, "trace web/n1/kernel exists");
	size_t n = mb_end(&b);
	ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, n, "WELCOME: size (%s)", err);
	is_int(m.type, RELAY_WELCOME, "WELCOME: type");
	is_int(m.len, 4 + 27, "WELCOME: len");
	is_int(m.u.welcome.status, -EEXIST, "WELCOME: negative status");
	is_str(m.u.welcome.msg, "trace web/n1/kernel exists", "WELCOME: message (any characters)");
	ok(m.u.welcome.msg == (const char *)c + 12, "WELCOME: message points into the buffer");
	ok(prefixes_need_more(b.b, n), "WELCOME: every proper prefix needs more bytes");
	free(c);

	b.n = 0;
	mb_begin(&b, RELAY_WELCOME);
	mb_u32(&b, 0);
	mb_str(&b, "");
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == 13 && m.u.welcome.status == 0 && m.u.welcome.msg && !*m.u.welcome.msg &&
	       m.u.welcome.granted == 0,
	   "WELCOME: status 0 with an empty message, nothing granted (%zd %s)", r, err);
	free(c);

	/* a WELCOME that grants a HELLO's ask (RELAY_HELLO_HORIZON): a u32
	 * after the message; 1..3 bytes there are bytes after its fields */
	b.n = 0;
	mb_begin(&b, RELAY_WELCOME);
	mb_u32(&b, 0);
	mb_str(&b, "");
	mb_u32(&b, RELAY_HELLO_HORIZON);
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == 17 && m.u.welcome.status == 0 && m.u.welcome.granted == RELAY_HELLO_HORIZON,
	   "WELCOME: the flags granted after the message (%zd %s)", r, err);
	ok(prefixes_need_more(b.b, n), "WELCOME with grants: every proper prefix needs more bytes");
	free(c);
	b.n = 0;
	mb_begin(&b, RELAY_WELCOME);
	mb_u32(&b, 0);
	mb_str(&b, "");
	mb_bytes(&b, "\1\0", 2);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "after its fields", "WELCOME with 2 bytes after its message");

	b.n = 0;
	mb_begin(&b, RELAY_ACK);
	mb_u32(&b, 0x7fffffff);
	mb_str(&b, "ok");
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, n, "ACK: size (%s)", err);
	is_int(m.type, RELAY_ACK, "ACK: type");
	is_int(m.len, 7, "ACK: len");
	is_int(m.u.ack.status, 0x7fffffff, "ACK: status");
	is_str(m.u.ack.msg, "ok", "ACK: message");
	ok(prefixes_need_more(b.b, n), "ACK: every proper prefix needs more bytes");
	free(c);

	b.n = 0;
	mb_begin(&b, RELAY_ACK);
	mb_u32(&b, (uint32_t)-EIO);
	mb_str(&b, "disk full");
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == (ssize_t)n && m.u.ack.status == -EIO && strcmp(m.u.ack.msg, "disk full") == 0,
	   "ACK: -EIO, \"disk full\"");
	free(c);
}

static void test_metadata(void)
{
	struct mb b = { .n = 0 };
	uint8_t *c;
	struct relay_msg m;
	char err[256];
	const char *tsdl = "/* CTF 1.8 */\ntrace { major = 1; minor = 8; byte_order = le; };\n";
	mb_begin(&b, RELAY_METADATA);
	mb_strn(&b, tsdl);
	size_t n = mb_end(&b);
	ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, RELAY_HDR_LEN + strlen(tsdl), "METADATA: size (%s)", err);
	is_int(m.type, RELAY_METADATA, "METADATA: type");
	is_int(m.len, strlen(tsdl), "METADATA: len");
	ok(m.u.meta.data == c + RELAY_HDR_LEN && m.u.meta.len == strlen(tsdl) &&
	   memcmp(m.u.meta.data, tsdl, strlen(tsdl)) == 0, "METADATA: data and length");
	ok(prefixes_need_more(b.b, n), "METADATA: every proper prefix needs more bytes");
	free(c);

	b.n = 0;
	mb_begin(&b, RELAY_METADATA);
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == RELAY_HDR_LEN && m.type == RELAY_METADATA && m.u.meta.len == 0,
	   "METADATA: an empty chunk is a header alone (%zd %s)", r, err);
	free(c);
}

static void test_stream(void)
{
	struct mb b = { .n = 0 };
	uint8_t *c;
	struct relay_msg m;
	char err[256];
	size_t n = mk_stream(&b, "channel0_3");
	ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, RELAY_HDR_LEN + 16 + 11, "STREAM: size (%s)", err);
	is_int(m.type, RELAY_STREAM, "STREAM: type");
	is_int(m.len, 27, "STREAM: len");
	is_int(m.u.stream.handle, 7, "STREAM: handle");
	is_int(m.u.stream.cpu, 3, "STREAM: cpu");
	ok(m.u.stream.class_id == 0x100000002ull, "STREAM: class id (64 bits)");
	is_str(m.u.stream.name, "channel0_3", "STREAM: name");
	ok(m.u.stream.name == (const char *)c + 24, "STREAM: name points into the buffer");
	ok(prefixes_need_more(b.b, n), "STREAM: every proper prefix needs more bytes");
	free(c);

	/* names that only start like the reserved ones */
	b.n = 0;
	n = mk_stream(&b, "metadata_0");
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == (ssize_t)n && strcmp(m.u.stream.name, "metadata_0") == 0,
	   "STREAM: \"metadata_0\" is accepted (%s)", err);
	free(c);
	b.n = 0;
	n = mk_stream(&b, "index2");
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == (ssize_t)n && strcmp(m.u.stream.name, "index2") == 0,
	   "STREAM: \"index2\" is accepted (%s)", err);
	free(c);
}

static void test_packet(void)
{
	struct mb b = { .n = 0 };
	uint8_t *c;
	struct relay_msg m;
	char err[256];
	struct ctf_index ix = good_index(200);
	size_t n = mk_packet(&b, 0xa5a5a5a5u, &ix, 200);
	ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, RELAY_HDR_LEN + RELAY_INDEX_LEN + 200, "PACKET: size (%s)", err);
	is_int(m.type, RELAY_PACKET, "PACKET: type");
	is_int(m.len, RELAY_INDEX_LEN + 200, "PACKET: len");
	is_int(m.u.packet.handle, 0xa5a5a5a5u, "PACKET: handle");
	ok(m.u.packet.ix.packet_size == 1600 && m.u.packet.ix.content_size == 1576,
	   "PACKET: packet and content sizes");
	ok(m.u.packet.ix.ts_begin == ix.ts_begin && m.u.packet.ix.ts_end == ix.ts_end,
	   "PACKET: timestamps");
	ok(m.u.packet.ix.events_discarded == 42 && m.u.packet.ix.stream_id == 3 &&
	   m.u.packet.ix.instance_id == 0x8000000000000001ull && m.u.packet.ix.seq == 99,
	   "PACKET: discarded, stream id, instance id, seq");
	ok(memcmp(&m.u.packet.ix, &ix, sizeof(ix)) == 0, "PACKET: the whole index as encoded");
	ok(m.u.packet.data == c + RELAY_HDR_LEN + RELAY_INDEX_LEN && m.u.packet.size == 200,
	   "PACKET: data pointer and size");
	bool same = true;
	for (size_t i = 0; i < 200; i++)
		same &= m.u.packet.data[i] == (uint8_t)(i * 7 + 1);
	ok(same, "PACKET: data bytes");
	ok(prefixes_need_more(b.b, n), "PACKET: every proper prefix needs more bytes");
	free(c);

	/* boundaries that are fine: content == packet size, ts_end == ts_begin,
	 * one byte, a non-zero reserved word */
	ix = good_index(1);
	ix.content_size = 8;
	ix.ts_end = ix.ts_begin;
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 1);
	put_le32(b.b + RELAY_HDR_LEN + 4, 0xffffffffu);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == RELAY_HDR_LEN + RELAY_INDEX_LEN + 1 && m.u.packet.size == 1 &&
	   m.u.packet.ix.content_size == 8 && m.u.packet.ix.ts_end == m.u.packet.ix.ts_begin &&
	   m.u.packet.handle == 1,
	   "PACKET: 1 byte, content_size = packet_size, ts_end = ts_begin (%zd %s)", r, err);
	free(c);
}

static void test_beacon_close(void)
{
	struct mb b = { .n = 0 };
	uint8_t *c;
	struct relay_msg m;
	char err[256];
	size_t n = mk_beacon(&b, 12345, 0xfedcba9876543210ull);
	ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, RELAY_HDR_LEN + 16, "BEACON: size (%s)", err);
	is_int(m.type, RELAY_BEACON, "BEACON: type");
	is_int(m.len, 16, "BEACON: len");
	is_int(m.u.beacon.handle, 12345, "BEACON: handle");
	ok(m.u.beacon.ts == 0xfedcba9876543210ull, "BEACON: ts (64 bits)");
	ok(prefixes_need_more(b.b, n), "BEACON: every proper prefix needs more bytes");
	free(c);

	b.n = 0;
	mb_begin(&b, RELAY_HORIZON);
	mb_u64(&b, 0x0123456789abcdefull);
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == RELAY_HDR_LEN + RELAY_HORIZON_LEN && m.type == RELAY_HORIZON &&
	       m.u.horizon.ts == 0x0123456789abcdefull,
	   "HORIZON: u64 ts (%zd %s)", r, err);
	ok(prefixes_need_more(b.b, n), "HORIZON: every proper prefix needs more bytes");
	free(c);
	b.n = 0;
	mb_begin(&b, RELAY_HORIZON);
	mb_u64(&b, 1);
	mb_u32(&b, 0);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "after its fields", "HORIZON of 12 bytes");

	b.n = 0;
	mb_begin(&b, RELAY_CLOSE);
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	is_int(r, RELAY_HDR_LEN, "CLOSE: a header alone (%s)", err);
	ok(m.type == RELAY_CLOSE && m.len == 0, "CLOSE: type and len");
	ok(prefixes_need_more(b.b, n), "CLOSE: every proper prefix needs more bytes");
	free(c);
}

/* CHALLENGE and AUTH (docs/auth.md): exact sizes, fields where they are. */
static void test_auth_msgs(void)
{
	struct mb b = { .n = 0 };
	uint8_t *c, nonce[32], mac[32];
	struct relay_msg m;
	char err[256];
	for (int i = 0; i < 32; i++) {
		nonce[i] = (uint8_t)i;
		mac[i] = (uint8_t)(0xa0 + i);
	}
	mb_begin(&b, RELAY_CHALLENGE);
	mb_u32(&b, RELAY_AUTH_VERSION);
	mb_bytes(&b, nonce, 32);
	size_t n = mb_end(&b);
	ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == RELAY_HDR_LEN + RELAY_CHALLENGE_LEN && m.type == RELAY_CHALLENGE &&
	   m.u.challenge.version == RELAY_AUTH_VERSION && m.u.challenge.nonce == c + 12 &&
	   memcmp(m.u.challenge.nonce, nonce, 32) == 0, "CHALLENGE: version and nonce (%s)", err);
	ok(prefixes_need_more(b.b, n), "CHALLENGE: every proper prefix needs more bytes");
	free(c);
	b.n = 0;
	mb_begin(&b, RELAY_AUTH);
	mb_u32(&b, 2);
	mb_bytes(&b, nonce, 32);
	mb_bytes(&b, mac, 32);
	n = mb_end(&b);
	r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
	ok(r == RELAY_HDR_LEN + RELAY_AUTH_LEN && m.type == RELAY_AUTH && m.u.auth.kind == 2 &&
	   m.u.auth.nonce == c + 12 && m.u.auth.mac == c + 44 && m.u.auth.mac[31] == 0xbf &&
	   m.payload == c + RELAY_HDR_LEN, "AUTH: kind, nonce, MAC (%s)", err);
	free(c);
	/* one byte short, one byte more */
	put_le32(b.b + 4, RELAY_AUTH_LEN - 1);
	reject(b.b, RELAY_HDR_LEN + RELAY_AUTH_LEN - 1, EPROTO, "too short", "AUTH of 67 bytes");
	b.b[b.n++] = 0;
	put_le32(b.b + 4, RELAY_AUTH_LEN + 1);
	reject(b.b, b.n, EPROTO, "1 bytes after its fields", "AUTH of 69 bytes");
}

/* The replies to a resumable producer: RESUMED and PROGRESS, one u64 each;
 * shorter or longer payloads refused. */
static void test_resumed_progress(void)
{
	static const uint32_t types[] = { RELAY_RESUMED, RELAY_PROGRESS };
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		const char *name = tr_relay_type_name(types[i]);
		struct mb b = { .n = 0 };
		uint8_t *c;
		struct relay_msg m;
		char err[256];
		mb_begin(&b, types[i]);
		mb_u64(&b, 0x0123456789abcdefull);
		size_t n = mb_end(&b);
		ssize_t r = parse_exact(b.b, n, &c, &m, err, sizeof(err));
		uint64_t v = types[i] == RELAY_RESUMED ? m.u.resumed.meta_len : m.u.progress.written;
		ok(r == RELAY_HDR_LEN + 8 && m.type == types[i] && m.len == 8 &&
		   v == 0x0123456789abcdefull, "%s: its u64 (%zd %s)", name, r, err);
		ok(prefixes_need_more(b.b, n), "%s: every proper prefix needs more bytes", name);
		free(c);
		b.n = 0;
		mb_begin(&b, types[i]);
		mb_u32(&b, 7);
		n = mb_end(&b);
		reject(b.b, n, EPROTO, "too short", name);
		b.n = 0;
		mb_begin(&b, types[i]);
		mb_u64(&b, 7);
		mb_u32(&b, 0);
		n = mb_end(&b);
		reject(b.b, n, EPROTO, "after its fields", name);
	}
}

/* A whole conversation in one buffer, parsed message after message, the way
 * the relay consumes its input; then the same bytes fed in 1..n-byte steps. */
static void test_stream_of_messages(void)
{
	struct mb b = { .n = 0 };
	size_t sizes[8];
	int k = 0;
	sizes[k++] = mk_hello(&b, "s", "h", "ust");
	mb_begin(&b, RELAY_METADATA);
	mb_strn(&b, "trace { };\n");
	sizes[k++] = mb_end(&b);
	sizes[k++] = mk_stream(&b, "chan_0");
	struct ctf_index ix = good_index(64);
	sizes[k++] = mk_packet(&b, 7, &ix, 64);
	sizes[k++] = mk_beacon(&b, 7, 5);
	mb_begin(&b, RELAY_CLOSE);
	sizes[k++] = mb_end(&b);
	const enum relay_type want[] = { RELAY_HELLO, RELAY_METADATA, RELAY_STREAM,
					 RELAY_PACKET, RELAY_BEACON, RELAY_CLOSE };

	uint8_t *c = malloc(b.n);
	memcpy(c, b.b, b.n);
	size_t off = 0;
	int i = 0;
	bool good = true;
	char err[256] = "";
	while (off < b.n) {
		struct relay_msg m;
		ssize_t r = tr_relay_msg_parse(c + off, b.n - off, &m, err, sizeof(err));
		if (r <= 0 || i >= k || (size_t)r != sizes[i] || m.type != want[i]) {
			printf("#   message %d at %zu: %zd %s\n", i, off, r, err);
			good = false;
			break;
		}
		off += (size_t)r;
		i++;
	}
	ok(good && i == k && off == b.n, "six concatenated messages parse one after the other");

	/* two of them, the first parsed from a buffer holding both */
	struct relay_msg m;
	ssize_t r = tr_relay_msg_parse(c + sizes[0] + sizes[1], sizes[2] + sizes[3], &m, err,
				    sizeof(err));
	ok(r == (ssize_t)sizes[2] && m.type == RELAY_STREAM && strcmp(m.u.stream.name, "chan_0") == 0,
	   "STREAM then PACKET: the first is STREAM, its own size");
	r = tr_relay_msg_parse(c + sizes[0] + sizes[1] + sizes[2], sizes[3], &m, err, sizeof(err));
	ok(r == (ssize_t)sizes[3] && m.type == RELAY_PACKET && m.u.packet.size == 64 &&
	   m.u.packet.handle == 7, "then PACKET, its own size");

	/* fed in small steps like reads from a socket: the same messages */
	for (size_t step = 1; step <= 13; step += 4) {
		size_t have = 0, done = 0;
		i = 0;
		good = true;
		while (done < b.n) {
			ssize_t q = tr_relay_msg_parse(c + done, have - done, &m, err, sizeof(err));
			if (q < 0 || (q > 0 && (i >= k || (size_t)q != sizes[i] || m.type != want[i]))) {
				good = false;
				break;
			}
			if (q > 0) {
				done += (size_t)q;
				i++;
				continue;
			}
			if (have == b.n) {
				good = false;
				break;
			}
			have = have + step > b.n ? b.n : have + step;
		}
		ok(good && i == k, "the same bytes arriving %zu at a time: the same %d messages", step, k);
	}
	free(c);
}

/* ---------------------------------------------------------- rejections */

static void test_reject_header(void)
{
	uint8_t h[RELAY_HDR_LEN + 16] = { 0 };
	static const uint32_t bad_types[] = { 0, 16, 31, 39, 0x100, 0xffffffffu };
	for (size_t i = 0; i < ARRAY_SIZE(bad_types); i++) {
		put_le32(h, bad_types[i]);
		put_le32(h + 4, 0);
		reject(h, RELAY_HDR_LEN, EPROTO, "unknown message type", "unknown type");
	}
	/* an unknown type is refused from its header, before its payload came */
	put_le32(h, 42);
	put_le32(h + 4, 1000);
	reject(h, RELAY_HDR_LEN, EPROTO, "unknown", "unknown type, payload not yet there");

	/* payload size: RELAY_MSG_MAX may come; one more is refused at once */
	struct relay_msg m;
	char err[256];
	put_le32(h, RELAY_PACKET);
	put_le32(h + 4, RELAY_MSG_MAX);
	is_int(tr_relay_msg_parse(h, RELAY_HDR_LEN, &m, err, sizeof(err)), 0,
	       "a PACKET of RELAY_MSG_MAX bytes: need more");
	put_le32(h + 4, RELAY_MSG_MAX + 1);
	reject(h, RELAY_HDR_LEN, EMSGSIZE, "at most", "PACKET of RELAY_MSG_MAX + 1 bytes");
	put_le32(h, RELAY_METADATA);
	put_le32(h + 4, 0xffffffffu);
	reject(h, RELAY_HDR_LEN, EMSGSIZE, "METADATA", "METADATA of 4 GiB - 1");
	put_le32(h, RELAY_CLOSE);
	put_le32(h + 4, RELAY_MSG_MAX + 1);
	reject(h, sizeof(h), EMSGSIZE, NULL, "CLOSE of RELAY_MSG_MAX + 1 bytes");
	/* a too-short header is never an error */
	put_le32(h, 0xffffffffu);
	ok(tr_relay_msg_parse(h, 7, &m, err, sizeof(err)) == 0 &&
	   tr_relay_msg_parse(h, 0, &m, err, sizeof(err)) == 0,
	   "7 or 0 bytes of even a bad header: need more");
}

static void test_reject_names(void)
{
	struct mb b;
	char n256[257];
	memset(n256, 'x', 256);
	n256[256] = 0;
	static const char *const bad[] = { "a/b", "/abs", "..", ".", ".hidden", "", "a b",
					   "tab\there", "caf\xc3\xa9", "back\\slash", "a:b", "a*",
					   "-x", "--help", "-" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char d[64];
		for (int pos = 0; pos < 3; pos++) {
			const char *s[3] = { "sess", "host", "kernel" };
			s[pos] = bad[i];
			b.n = 0;
			size_t n = mk_hello(&b, s[0], s[1], s[2]);
			snprintf(d, sizeof(d), "HELLO %s \"%s\"",
				 pos == 0 ? "session" : pos == 1 ? "host" : "trace", bad[i]);
			reject(b.b, n, EPROTO, "not a plain file name", d);
		}
	}
	b.n = 0;
	size_t n = mk_hello(&b, n256, "h", "t");
	reject(b.b, n, EPROTO, "not a plain file name", "HELLO session of 256 characters");
	b.n = 0;
	n = mk_hello(&b, "s", n256, "t");
	reject(b.b, n, EPROTO, "not a plain file name", "HELLO host of 256 characters");
	b.n = 0;
	n = mk_hello(&b, "s", "h", n256);
	reject(b.b, n, EPROTO, "not a plain file name", "HELLO trace of 256 characters");

	static const char *const bad_streams[] = { "metadata", "index", "a/b", "..", ".x", "",
						   "x y", "-x", "-" };
	for (size_t i = 0; i < ARRAY_SIZE(bad_streams); i++) {
		char d[64];
		b.n = 0;
		n = mk_stream(&b, bad_streams[i]);
		snprintf(d, sizeof(d), "STREAM named \"%s\"", bad_streams[i]);
		reject(b.b, n, EPROTO, "not a plain file name", d);
	}
	b.n = 0;
	n = mk_stream(&b, n256);
	reject(b.b, n, EPROTO, "not a plain file name", "STREAM name of 256 characters");
	/* NAME.idx must be a file name too: 251 characters at most */
	struct relay_msg m;
	char err[256] = "";
	n256[252] = 0;
	b.n = 0;
	n = mk_stream(&b, n256);
	reject(b.b, n, EPROTO, "longer than 251 bytes", "STREAM name of 252 characters");
	n256[251] = 0;
	b.n = 0;
	n = mk_stream(&b, n256);
	ok(tr_relay_msg_parse(b.b, n, &m, err, sizeof(err)) == (ssize_t)n &&
	   strlen(m.u.stream.name) == 251, "STREAM name of 251 characters accepted (%s)", err);
}

static void test_reject_strings(void)
{
	struct mb b = { .n = 0 };
	size_t n;

	/* HELLO: the trace name runs to the payload's end without its NUL */
	mb_begin(&b, RELAY_HELLO);
	mb_u32(&b, 1);
	mb_u32(&b, 0);
	mb_u64(&b, 0);
	mb_bytes(&b, UUID, 16);
	mb_str(&b, "s");
	mb_str(&b, "h");
	mb_strn(&b, "kernel");
	n = mb_end(&b);
	/* the next byte in the buffer is a NUL: the parser must not look there */
	b.b[n] = 0;
	reject(b.b, n, EPROTO, "too short", "HELLO whose trace name has no NUL");
	b.n = 0;
	mb_begin(&b, RELAY_HELLO);
	mb_u32(&b, 1);
	mb_u32(&b, 0);
	mb_u64(&b, 0);
	mb_bytes(&b, UUID, 16);
	mb_str(&b, "s");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "too short", "HELLO with only a session name");
	b.n = 0;
	mb_begin(&b, RELAY_HELLO);
	mb_u32(&b, 1);
	mb_u32(&b, 0);
	mb_u64(&b, 0);
	mb_bytes(&b, UUID, 16);
	mb_strn(&b, "session");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "too short", "HELLO whose session name has no NUL");

	b.n = 0;
	mb_begin(&b, RELAY_WELCOME);
	mb_u32(&b, 0);
	mb_strn(&b, "hello");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "too short", "WELCOME message without its NUL");
	b.n = 0;
	mb_begin(&b, RELAY_ACK);
	mb_u32(&b, 0);
	mb_strn(&b, "x");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "too short", "ACK message without its NUL");
	b.n = 0;
	mb_begin(&b, RELAY_STREAM);
	mb_u32(&b, 1);
	mb_u32(&b, 0);
	mb_u64(&b, 0);
	mb_strn(&b, "chan_0");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "too short", "STREAM name without its NUL");

	/* METADATA is text: a NUL anywhere (even a terminating one) is refused */
	b.n = 0;
	mb_begin(&b, RELAY_METADATA);
	mb_strn(&b, "trace {");
	b.b[b.n++] = 0;
	mb_strn(&b, "};");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "NUL", "METADATA with a NUL byte inside");
	b.n = 0;
	mb_begin(&b, RELAY_METADATA);
	mb_str(&b, "trace { };");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "NUL", "METADATA ending with a NUL");
	b.n = 0;
	mb_begin(&b, RELAY_METADATA);
	b.b[b.n++] = 0;
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "NUL", "METADATA of a single NUL");

	/* bytes after the fields */
	b.n = 0;
	mk_beacon(&b, 1, 2);
	mb_u32(&b, 0);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "4 bytes after its fields", "BEACON with 4 trailing bytes");
	b.n = 0;
	mk_beacon(&b, 1, 2);
	b.b[b.n++] = 'x';
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "1 bytes after", "BEACON with 1 trailing byte");
	b.n = 0;
	mb_begin(&b, RELAY_CLOSE);
	b.b[b.n++] = 0;
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "after its fields", "CLOSE with a payload");
	b.n = 0;
	mb_begin(&b, RELAY_WELCOME);
	mb_u32(&b, 0);
	mb_str(&b, "hi");
	mb_str(&b, "extra");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "6 bytes after", "WELCOME with a second string");
	b.n = 0;
	mk_stream(&b, "s0");
	b.b[b.n++] = 0;
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "after its fields", "STREAM with a byte after its name");
	b.n = 0;
	mk_hello(&b, "a", "b", "c");
	mb_str(&b, "d");
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "after its fields", "HELLO with a fourth string");
}

static void test_reject_packets(void)
{
	struct mb b = { .n = 0 };
	size_t n;
	struct ctf_index ix = good_index(100);

	ix.packet_size = 100 * 8 + 8;
	n = mk_packet(&b, 1, &ix, 100);
	reject(b.b, n, EPROTO, "packet_size is not its length", "PACKET: packet_size 8 bits too big");
	ix.packet_size = 100 * 8 - 1;
	ix.content_size = 100;
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 100);
	reject(b.b, n, EPROTO, "packet_size is not its length", "PACKET: packet_size 1 bit short");
	ix.packet_size = 100;		/* bytes, not bits */
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 100);
	reject(b.b, n, EPROTO, "packet_size", "PACKET: packet_size in bytes");
	ix.packet_size = 100 * 8 + (1ull << 61) * 4;	/* size*8 wraps in 64 bits */
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 100);
	reject(b.b, n, EPROTO, "packet_size", "PACKET: packet_size = 8*bytes + 2^63");

	ix = good_index(100);
	ix.content_size = ix.packet_size + 1;
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 100);
	reject(b.b, n, EPROTO, "content_size exceeds", "PACKET: content_size > packet_size");
	ix.content_size = UINT64_MAX;
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 100);
	reject(b.b, n, EPROTO, "content_size exceeds", "PACKET: content_size = 2^64-1");

	ix = good_index(100);
	ix.ts_end = ix.ts_begin - 1;
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 100);
	reject(b.b, n, EPROTO, "ends before it begins", "PACKET: ts_end < ts_begin");

	ix = good_index(100);
	ix.packet_size = 0;
	ix.content_size = 0;
	b.n = 0;
	n = mk_packet(&b, 1, &ix, 0);
	reject(b.b, n, EPROTO, "packet_size is not its length", "PACKET: empty (no bytes, size 0)");
}

static void test_reject_short(void)
{
	struct mb b = { .n = 0 };
	/* for each type, every all-zero payload shorter than its fields: the
	 * strings are empty, so the first length that holds them all (min) is
	 * refused for its names instead */
	static const struct { uint32_t type; size_t min; } fixed[] = {
		{ RELAY_HELLO, 32 + 3 },	/* + three empty strings */
		{ RELAY_WELCOME, 4 + 1 },
		{ RELAY_ACK, 4 + 1 },
		{ RELAY_STREAM, 16 + 1 },
		{ RELAY_PACKET, 72 },
		{ RELAY_BEACON, 16 },
		{ RELAY_HORIZON, 8 },
	};
	for (size_t t = 0; t < ARRAY_SIZE(fixed); t++) {
		bool all = true;
		for (size_t plen = 0; plen < fixed[t].min; plen++) {
			b.n = 0;
			mb_begin(&b, fixed[t].type);
			memset(b.b + b.n, 0, plen);
			b.n += plen;
			size_t n = mb_end(&b);
			uint8_t *c = malloc(n);
			memcpy(c, b.b, n);
			struct relay_msg m;
			char err[256] = "";
			ssize_t r = tr_relay_msg_parse(c, n, &m, err, sizeof(err));
			free(c);
			if (r != -EPROTO || !strstr(err, "too short")) {
				all = false;
				printf("#   %s of %zu bytes: %zd %s\n",
				       tr_relay_type_name(fixed[t].type), plen, r, err);
			}
		}
		ok(all, "%s: every zero payload of 0..%zu bytes is too short",
		   tr_relay_type_name(fixed[t].type), fixed[t].min - 1);
	}
	/* ... and the one of min bytes is not "too short" (a name or size error
	 * for those with names or sizes; WELCOME/ACK/BEACON parse) */
	for (size_t t = 0; t < ARRAY_SIZE(fixed); t++) {
		b.n = 0;
		mb_begin(&b, fixed[t].type);
		memset(b.b + b.n, 0, fixed[t].min);
		b.n += fixed[t].min;
		size_t n = mb_end(&b);
		struct relay_msg m;
		char err[256] = "";
		ssize_t r = tr_relay_msg_parse(b.b, n, &m, err, sizeof(err));
		bool want_ok = fixed[t].type == RELAY_WELCOME || fixed[t].type == RELAY_ACK ||
			       fixed[t].type == RELAY_BEACON || fixed[t].type == RELAY_HORIZON;
		ok(want_ok ? r == (ssize_t)n : r == -EPROTO && !strstr(err, "too short"),
		   "%s: a zero payload of %zu bytes is long enough (%zd %s)",
		   tr_relay_type_name(fixed[t].type), fixed[t].min, r, err);
	}
	/* exact messages with one field missing */
	b.n = 0;
	mb_begin(&b, RELAY_HELLO);
	mb_u32(&b, 1);
	mb_u32(&b, 0);
	mb_u64(&b, 0);
	mb_bytes(&b, UUID, 15);
	size_t n = mb_end(&b);
	reject(b.b, n, EPROTO, "HELLO of 31 bytes: too short", "HELLO with a 15-byte uuid");
	b.n = 0;
	mb_begin(&b, RELAY_WELCOME);
	mb_bytes(&b, "\0\0\0", 3);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "WELCOME of 3 bytes: too short", "WELCOME of 3 bytes");
	b.n = 0;
	mb_begin(&b, RELAY_ACK);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "ACK of 0 bytes: too short", "ACK of 0 bytes");
	b.n = 0;
	mb_begin(&b, RELAY_WELCOME);
	mb_u32(&b, 0);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "too short", "WELCOME with a status and no message");
	b.n = 0;
	mb_begin(&b, RELAY_STREAM);
	mb_u32(&b, 1);
	mb_u32(&b, 2);
	mb_u32(&b, 3);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "STREAM of 12 bytes: too short", "STREAM of 12 bytes");
	b.n = 0;
	mb_begin(&b, RELAY_STREAM);
	mb_u32(&b, 1);
	mb_u32(&b, 2);
	mb_u64(&b, 3);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "too short", "STREAM without a name");
	b.n = 0;
	struct ctf_index ix = good_index(8);
	mk_packet(&b, 1, &ix, 0);
	b.n -= 1;
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "PACKET of 71 bytes: too short", "PACKET of 71 bytes");
	b.n = 0;
	mb_begin(&b, RELAY_BEACON);
	mb_u32(&b, 1);
	mb_u32(&b, 0);
	mb_u32(&b, 2);
	n = mb_end(&b);
	reject(b.b, n, EPROTO, "BEACON of 12 bytes: too short", "BEACON of 12 bytes");
}

/* ------------------------------------------------ helpers of the protocol */

static void test_put_index(void)
{
	struct ctf_index ix = {
		.packet_size = 4096 * 8, .content_size = 4000 * 8,
		.ts_begin = 0x0102030405060708ull, .ts_end = 0x1112131415161718ull,
		.events_discarded = 0x2122232425262728ull, .stream_id = 0x3132333435363738ull,
		.instance_id = 0x4142434445464748ull, .seq = 0x5152535455565758ull,
	};
	uint8_t *buf = malloc(RELAY_HDR_LEN + RELAY_INDEX_LEN + 4096);
	memset(buf, 0xee, RELAY_HDR_LEN + RELAY_INDEX_LEN + 4096);
	relay_put_hdr(buf, RELAY_PACKET, RELAY_INDEX_LEN + 4096);
	static const uint8_t hdr[8] = { 5, 0, 0, 0, 0x48, 0x10, 0, 0 };
	ok(memcmp(buf, hdr, 8) == 0, "relay_put_hdr: {5, 72 + 4096} little-endian");
	tr_relay_put_index(buf + RELAY_HDR_LEN, 0x0a0b0c0du, &ix);
	const uint8_t *p = buf + RELAY_HDR_LEN;
	static const uint8_t h4[8] = { 0x0d, 0x0c, 0x0b, 0x0a, 0, 0, 0, 0 };
	ok(memcmp(p, h4, 8) == 0, "tr_relay_put_index: handle LE, then a zero reserved word");
	static const uint8_t ps[8] = { 0, 0x80, 0, 0, 0, 0, 0, 0 };
	static const uint8_t tb[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	static const uint8_t sq[8] = { 0x58, 0x57, 0x56, 0x55, 0x54, 0x53, 0x52, 0x51 };
	ok(memcmp(p + 8, ps, 8) == 0 && memcmp(p + 24, tb, 8) == 0 && memcmp(p + 64, sq, 8) == 0,
	   "tr_relay_put_index: packet_size at 8, ts_begin at 24, seq at 64, little-endian");
	ok(p[72] == 0xee, "tr_relay_put_index: writes exactly 72 bytes");
	for (size_t i = 0; i < 4096; i++)
		buf[RELAY_HDR_LEN + RELAY_INDEX_LEN + i] = (uint8_t)(i ^ (i >> 8));
	struct relay_msg m;
	char err[256] = "";
	ssize_t r = tr_relay_msg_parse(buf, RELAY_HDR_LEN + RELAY_INDEX_LEN + 4096, &m, err,
				    sizeof(err));
	is_int(r, RELAY_HDR_LEN + RELAY_INDEX_LEN + 4096, "tr_relay_put_index round trip: size (%s)", err);
	ok(m.type == RELAY_PACKET && m.u.packet.handle == 0x0a0b0c0du &&
	   memcmp(&m.u.packet.ix, &ix, sizeof(ix)) == 0,
	   "tr_relay_put_index round trip: handle and all eight index fields");
	ok(m.u.packet.data == buf + RELAY_HDR_LEN + RELAY_INDEX_LEN && m.u.packet.size == 4096 &&
	   m.u.packet.data[4095] == (uint8_t)(4095 ^ 15), "tr_relay_put_index round trip: data");
	free(buf);
}

static void test_names(void)
{
	char s[300];
	ok(!tr_relay_name_ok(NULL), "tr_relay_name_ok(NULL) is false");
	ok(!tr_relay_name_ok(""), "tr_relay_name_ok(\"\") is false");
	/* issue 20: a leading '-' is refused (an option to rm, tar, a shell
	 * loop over the files): "-" is no longer one allowed character */
	ok(tr_relay_name_ok("a") && tr_relay_name_ok("Z") && tr_relay_name_ok("0") && tr_relay_name_ok("_"),
	   "tr_relay_name_ok: one allowed character");
	ok(tr_relay_name_ok("AZaz09._-") && tr_relay_name_ok("a.") && tr_relay_name_ok("a..b") &&
	   tr_relay_name_ok("a-") && tr_relay_name_ok("_-x"),
	   "tr_relay_name_ok: every allowed character, dots and dashes after the first");
	ok(!tr_relay_name_ok(".") && !tr_relay_name_ok("..") && !tr_relay_name_ok(".a"),
	   "tr_relay_name_ok: a leading dot is refused");
	ok(!tr_relay_name_ok("-") && !tr_relay_name_ok("-x") && !tr_relay_name_ok("--help") &&
	   !tr_relay_name_ok("-.."),
	   "tr_relay_name_ok: a leading '-' is refused");
	ok(!tr_relay_name_ok("a/b") && !tr_relay_name_ok("a b") && !tr_relay_name_ok("a\n") &&
	   !tr_relay_name_ok("\x7f") && !tr_relay_name_ok("\xff") && !tr_relay_name_ok("a@b"),
	   "tr_relay_name_ok: '/', space, control, non-ASCII, '@' are refused");
	memset(s, 'q', sizeof(s));
	s[255] = 0;
	ok(tr_relay_name_ok(s), "tr_relay_name_ok: 255 characters");
	s[255] = 'q';
	s[256] = 0;
	ok(!tr_relay_name_ok(s), "tr_relay_name_ok: 256 characters refused");
	s[299] = 0;
	ok(!tr_relay_name_ok(s), "tr_relay_name_ok: 299 characters refused");

	static const char *const names[] = { "?", "HELLO", "WELCOME", "METADATA", "STREAM",
					     "PACKET", "BEACON", "CLOSE", "ACK", "CHALLENGE",
					     "AUTH", "RESUMED", "PROGRESS", "PROOF", "DEMAND",
					     "HORIZON", "?" };
	bool good = true;
	for (uint32_t t = 0; t < ARRAY_SIZE(names); t++)
		good &= strcmp(tr_relay_type_name(t), names[t]) == 0;
	ok(good && strcmp(tr_relay_type_name(0xffffffffu), "?") == 0,
	   "tr_relay_type_name: 1..15 and \"?\" for 0, 16, 2^32-1");
}

/* ------------------------------------------------------- tr_net_split_addr */

static void split_ok(const char *addr, const char *host, unsigned port)
{
	char h[64];
	unsigned p = 0;
	memset(h, 'X', sizeof(h));
	int r = tr_net_split_addr(addr, h, sizeof(h), &p, 5347);
	bool good = r == 0 && strcmp(h, host) == 0 && p == port;
	ok(good, "tr_net_split_addr(\"%s\") = %s port %u", addr, host, port);
	if (!good)
		printf("#   got %d, \"%.64s\", %u\n", r, r == 0 ? h : "", p);
}

static void split_bad(const char *addr)
{
	char h[64];
	unsigned p = 1234;
	int r = tr_net_split_addr(addr, h, sizeof(h), &p, 5347);
	ok(r == -EINVAL, "tr_net_split_addr(\"%s\") is refused (%d)", addr, r);
}

static void test_split_addr(void)
{
	split_ok("host", "host", 5347);
	split_ok("host:123", "host", 123);
	split_ok("[::1]:5347", "::1", 5347);
	split_ok("[::1]:80", "::1", 80);
	split_ok("[::1]", "::1", 5347);
	split_ok("::1", "::1", 5347);
	split_ok("fe80::1:2:3", "fe80::1:2:3", 5347);
	split_ok("1.2.3.4:65535", "1.2.3.4", 65535);
	split_ok("1.2.3.4:1", "1.2.3.4", 1);
	split_ok("relay.example.org:05344", "relay.example.org", 5344);
	split_bad("");
	split_bad(":5");
	split_bad("host:");
	split_bad("host:0");
	split_bad("host:65536");
	split_bad("host:4294967297");
	split_bad("host:12a");
	split_bad("host:5 ");
	split_bad("host:-1");
	split_bad("[::1");
	split_bad("[]:5");
	split_bad("[::1]:");
	split_bad("[::1]5");
	split_bad("[::1]:0");
	split_bad("[::1]:99999");
	ok(tr_net_split_addr(NULL, (char[8]){ 0 }, 8, &(unsigned){ 0 }, 1) == -EINVAL,
	   "tr_net_split_addr(NULL) is refused");

	/* the host buffer: hostlen counts the NUL */
	char h[8];
	unsigned p = 0;
	ok(tr_net_split_addr("abcdefg:9", h, sizeof(h), &p, 1) == 0 && strcmp(h, "abcdefg") == 0 &&
	   p == 9, "tr_net_split_addr: a 7-character host in 8 bytes");
	ok(tr_net_split_addr("abcdefgh:9", h, sizeof(h), &p, 1) == -EINVAL,
	   "tr_net_split_addr: an 8-character host does not fit in 8 bytes");
	ok(tr_net_split_addr("[abcdefgh]:9", h, sizeof(h), &p, 1) == -EINVAL,
	   "tr_net_split_addr: a bracketed 8-character host does not fit in 8 bytes");
	p = 0;
	ok(tr_net_split_addr("x", h, sizeof(h), &p, 4242) == 0 && p == 4242,
	   "tr_net_split_addr: the default port is the one given");
}

/* ------------------------------------------------------------ live */

/* A request: header {size, cmd, version} big-endian, then size bytes of
 * payload from pl (zero-padded beyond plen). */
static size_t live_req(uint8_t *out, uint64_t size, uint32_t cmd, const uint8_t *pl, size_t plen)
{
	put_be64(out, size);
	put_be32(out + 8, cmd);
	put_be32(out + 12, 0xc0ffee);	/* cmd_version: not looked at */
	memset(out + LIVE_REQ_HDR, 0, size <= 4096 ? size : 0);
	if (plen)
		memcpy(out + LIVE_REQ_HDR, pl, plen);
	return LIVE_REQ_HDR + (size_t)size;
}

static ssize_t live_parse_exact(const uint8_t *buf, size_t n, struct live_req *r, char *err,
				size_t errlen)
{
	uint8_t *c = malloc(n ? n : 1);
	memcpy(c, buf, n);
	err[0] = 0;
	memset(r, 0x5a, sizeof(*r));
	ssize_t q = tr_live_req_parse(c, n, r, err, errlen);
	free(c);
	return q;
}

static bool live_prefixes_need_more(const uint8_t *buf, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct live_req r;
		char err[256];
		ssize_t q = live_parse_exact(buf, k, &r, err, sizeof(err));
		if (q != 0) {
			printf("#   prefix of %zu bytes (of %zu): %zd %s\n", k, n, q, err);
			return false;
		}
	}
	return true;
}

static void test_live_parse(void)
{
	uint8_t buf[LIVE_REQ_HDR + 4096], pl[LIVE_REQ_MAX];
	struct live_req r;
	char err[256];
	ssize_t q;
	size_t n;

	/* CONNECT: u64 viewer_session_id, u32 major, minor, type */
	put_be64(pl, 0x0102030405060708ull);
	put_be32(pl + 8, 2);
	put_be32(pl + 12, 4);
	put_be32(pl + 16, 1);
	n = live_req(buf, 20, LIVE_CONNECT, pl, 20);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 36 && r.cmd == LIVE_CONNECT && r.u.connect.viewer_session_id == 0x0102030405060708ull &&
	   r.u.connect.major == 2 && r.u.connect.minor == 4 && r.u.connect.type == 1,
	   "CONNECT (20 bytes): 36, session id, major 2, minor 4, type 1 (%zd %s)", q, err);
	ok(live_prefixes_need_more(buf, n), "CONNECT: every proper prefix needs more bytes");

	n = live_req(buf, 0, LIVE_LIST_SESSIONS, NULL, 0);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 16 && r.cmd == LIVE_LIST_SESSIONS, "LIST_SESSIONS (0 bytes): 16 (%zd %s)", q, err);
	ok(live_prefixes_need_more(buf, 16), "LIST_SESSIONS: every proper prefix needs more bytes");

	/* ATTACH_SESSION: u64 session_id, u64 offset, u32 seek */
	put_be64(pl, 0xa1a2a3a4a5a6a7a8ull);
	put_be64(pl + 8, 0xb1b2b3b4b5b6b7b8ull);
	put_be32(pl + 16, LIVE_SEEK_LAST);
	n = live_req(buf, 20, LIVE_ATTACH_SESSION, pl, 20);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 36 && r.cmd == LIVE_ATTACH_SESSION && r.u.attach.session_id == 0xa1a2a3a4a5a6a7a8ull &&
	   r.u.attach.offset == 0xb1b2b3b4b5b6b7b8ull && r.u.attach.seek == LIVE_SEEK_LAST,
	   "ATTACH_SESSION (20 bytes): session id, offset, seek (%zd %s)", q, err);
	ok(live_prefixes_need_more(buf, n), "ATTACH_SESSION: every proper prefix needs more bytes");

	/* GET_PACKET: u64 stream_id, u64 offset, u32 len */
	put_be64(pl, 77);
	put_be64(pl + 8, 0x100000000ull);
	put_be32(pl + 16, 0x40000u);
	n = live_req(buf, 20, LIVE_GET_PACKET, pl, 20);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 36 && r.cmd == LIVE_GET_PACKET && r.u.packet.stream_id == 77 &&
	   r.u.packet.offset == 0x100000000ull && r.u.packet.len == 0x40000u,
	   "GET_PACKET (20 bytes): stream id, offset, len (%zd %s)", q, err);
	ok(live_prefixes_need_more(buf, n), "GET_PACKET: every proper prefix needs more bytes");

	/* the four that take one u64 */
	static const uint32_t idcmds[] = { LIVE_GET_NEXT_INDEX, LIVE_GET_METADATA,
					   LIVE_GET_NEW_STREAMS, LIVE_DETACH_SESSION };
	for (size_t i = 0; i < ARRAY_SIZE(idcmds); i++) {
		uint64_t id = 0xf0e0d0c0b0a09080ull + i;
		put_be64(pl, id);
		n = live_req(buf, 8, idcmds[i], pl, 8);
		q = live_parse_exact(buf, n, &r, err, sizeof(err));
		ok(q == 24 && r.cmd == idcmds[i] && r.u.id == id, "%s (8 bytes): 24, id (%zd %s)",
		   tr_live_cmd_name(idcmds[i]), q, err);
		ok(live_prefixes_need_more(buf, n), "%s: every proper prefix needs more bytes",
		   tr_live_cmd_name(idcmds[i]));
	}

	n = live_req(buf, 0, LIVE_CREATE_SESSION, NULL, 0);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 16 && r.cmd == LIVE_CREATE_SESSION, "CREATE_SESSION (0 bytes): 16 (%zd %s)", q, err);
	ok(live_prefixes_need_more(buf, n), "CREATE_SESSION: every proper prefix needs more bytes");

	/* longer payloads (later minors): consumed whole, the head parsed */
	for (size_t i = 0; i < LIVE_REQ_MAX; i++)
		pl[i] = (uint8_t)(0x80 + i);
	n = live_req(buf, LIVE_REQ_MAX, LIVE_GET_PACKET, pl, LIVE_REQ_MAX);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == LIVE_REQ_HDR + LIVE_REQ_MAX && r.u.packet.stream_id == get_be64(pl) &&
	   r.u.packet.offset == get_be64(pl + 8) && r.u.packet.len == get_be32(pl + 16),
	   "GET_PACKET of 64 bytes: 80 consumed, the first 20 parsed (%zd %s)", q, err);
	ok(live_prefixes_need_more(buf, n), "GET_PACKET of 64 bytes: every prefix needs more");
	n = live_req(buf, 9, LIVE_GET_METADATA, pl, 9);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 25 && r.u.id == get_be64(pl), "GET_METADATA of 9 bytes: 25 (%zd %s)", q, err);
	n = live_req(buf, 33, LIVE_LIST_SESSIONS, pl, 33);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 49 && r.cmd == LIVE_LIST_SESSIONS, "LIST_SESSIONS of 33 bytes: 49 (%zd %s)", q, err);
	n = live_req(buf, LIVE_REQ_MAX, LIVE_CONNECT, pl, LIVE_REQ_MAX);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == LIVE_REQ_HDR + LIVE_REQ_MAX && r.u.connect.viewer_session_id == get_be64(pl) &&
	   r.u.connect.type == get_be32(pl + 16), "CONNECT of %d bytes: %d (%zd %s)", LIVE_REQ_MAX,
	   LIVE_REQ_HDR + LIVE_REQ_MAX, q, err);

	/* trawl's authentication commands (docs/auth.md) */
	for (size_t i = 0; i < 68; i++)
		pl[i] = (uint8_t)(0x40 + i);
	n = live_req(buf, 68, LIVE_TRAWL_AUTH, pl, 68);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 84 && r.cmd == LIVE_TRAWL_AUTH && r.u.auth.kind == get_be32(pl),
	   "TRAWL_AUTH of 68 bytes: 84 (%zd %s)", q, err);
	/* its nonce and MAC point into the buffer parsed */
	q = tr_live_req_parse(buf, n, &r, err, sizeof(err));
	ok(q == 84 && r.u.auth.nonce == buf + LIVE_REQ_HDR + 4 && r.u.auth.nonce[0] == 0x44 &&
	   r.u.auth.mac == buf + LIVE_REQ_HDR + 36 && r.u.auth.mac[0] == 0x64 &&
	   r.u.auth.mac[31] == 0x83, "TRAWL_AUTH: kind, nonce, MAC (%zd %s)", q, err);
	n = live_req(buf, 0, LIVE_TRAWL_CHALLENGE, pl, 0);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == 16 && r.cmd == LIVE_TRAWL_CHALLENGE, "TRAWL_CHALLENGE: 16 (%zd %s)", q, err);

	/* rejections: from the header alone */
	static const struct { uint32_t cmd; uint64_t size; const char *what; } bad[] = {
		{ LIVE_CONNECT, 19, "CONNECT with 19 bytes" },
		{ LIVE_CONNECT, 0, "CONNECT with 0 bytes" },
		{ LIVE_ATTACH_SESSION, 16, "ATTACH_SESSION with 16 bytes" },
		{ LIVE_GET_PACKET, 8, "GET_PACKET with 8 bytes" },
		{ LIVE_GET_NEXT_INDEX, 7, "GET_NEXT_INDEX with 7 bytes" },
		{ LIVE_GET_METADATA, 0, "GET_METADATA with 0 bytes" },
		{ LIVE_GET_NEW_STREAMS, 4, "GET_NEW_STREAMS with 4 bytes" },
		{ LIVE_DETACH_SESSION, 1, "DETACH_SESSION with 1 byte" },
		{ LIVE_LIST_SESSIONS, LIVE_REQ_MAX + 1, "LIST_SESSIONS with 129 bytes" },
		{ LIVE_GET_PACKET, LIVE_REQ_MAX + 1, "GET_PACKET with 129 bytes" },
		{ LIVE_TRAWL_AUTH, 67, "TRAWL_AUTH with 67 bytes" },
		{ LIVE_CONNECT, 1ull << 32, "CONNECT with 2^32 bytes" },
		{ LIVE_CREATE_SESSION, UINT64_MAX, "CREATE_SESSION with 2^64-1 bytes" },
		{ 0, 0, "command 0" },
		{ 10, 8, "command 10" },
		{ 0xffffffffu, 0, "command 2^32-1" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		put_be64(buf, bad[i].size);
		put_be32(buf + 8, bad[i].cmd);
		put_be32(buf + 12, 0);
		q = live_parse_exact(buf, LIVE_REQ_HDR, &r, err, sizeof(err));
		ok(q == -EPROTO && err[0], "live: %s is refused from its header (%zd: %s)",
		   bad[i].what, q, err);
	}
	/* with its whole payload there too */
	n = live_req(buf, 19, LIVE_CONNECT, pl, 19);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	ok(q == -EPROTO && strstr(err, "CONNECT") && strstr(err, "19"),
	   "live: CONNECT with its 19 bytes present is refused (%s)", err);
	put_be64(buf, 8);
	put_be32(buf + 8, 0);
	q = live_parse_exact(buf, LIVE_REQ_HDR + 8, &r, err, sizeof(err));
	ok(q == -EPROTO && strstr(err, "unknown command 0"), "live: unknown command message (%s)", err);

	/* two requests back to back */
	put_be64(pl, 5);
	n = live_req(buf, 8, LIVE_GET_NEXT_INDEX, pl, 8);
	put_be64(pl, 6);
	n += live_req(buf + n, 8, LIVE_DETACH_SESSION, pl, 8);
	n += live_req(buf + n, 0, LIVE_LIST_SESSIONS, NULL, 0);
	q = live_parse_exact(buf, n, &r, err, sizeof(err));
	bool good = q == 24 && r.cmd == LIVE_GET_NEXT_INDEX && r.u.id == 5;
	q = live_parse_exact(buf + 24, n - 24, &r, err, sizeof(err));
	good &= q == 24 && r.cmd == LIVE_DETACH_SESSION && r.u.id == 6;
	q = live_parse_exact(buf + 48, n - 48, &r, err, sizeof(err));
	good &= q == 16 && r.cmd == LIVE_LIST_SESSIONS;
	ok(good && n == 64, "live: three requests back to back parse one after the other");
	q = live_parse_exact(buf + 48, 15, &r, err, sizeof(err));
	ok(q == 0, "live: 15 bytes of a header need more");

	/* names */
	static const char *const names[] = { "?", "CONNECT", "LIST_SESSIONS", "ATTACH_SESSION",
					     "GET_NEXT_INDEX", "GET_PACKET", "GET_METADATA",
					     "GET_NEW_STREAMS", "CREATE_SESSION", "DETACH_SESSION",
					     "?" };
	good = true;
	for (uint32_t c = 0; c < ARRAY_SIZE(names); c++)
		if (strcmp(tr_live_cmd_name(c), names[c]) != 0) {
			printf("#   tr_live_cmd_name(%u) = %s\n", c, tr_live_cmd_name(c));
			good = false;
		}
	ok(good && strcmp(tr_live_cmd_name(0xffffffffu), "?") == 0,
	   "tr_live_cmd_name: 1..9 and \"?\" for 0, 10, 2^32-1");
	ok(LIVE_SESSION_LEN == 339 && LIVE_STREAM_LEN == 4371, "live: reply struct sizes 339, 4371");
}

static void test_live_put_str(void)
{
	uint8_t b[16];
	memset(b, 0xaa, sizeof(b));
	tr_live_put_str(b, 8, "abc");
	static const uint8_t w1[16] = { 'a', 'b', 'c', 0, 0, 0, 0, 0,
					0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };
	ok(memcmp(b, w1, 16) == 0, "tr_live_put_str(8, \"abc\"): NUL-padded to 8, nothing after");
	memset(b, 0xaa, sizeof(b));
	tr_live_put_str(b, 8, "abcdefghijkl");
	static const uint8_t w2[16] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 0,
					0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };
	ok(memcmp(b, w2, 16) == 0, "tr_live_put_str(8, 12 chars): 7 kept, the last byte NUL");
	memset(b, 0xaa, sizeof(b));
	tr_live_put_str(b, 8, "abcdefgh");
	ok(memcmp(b, w2, 16) == 0, "tr_live_put_str(8, 8 chars): 7 kept, the last byte NUL");
	memset(b, 0xaa, sizeof(b));
	tr_live_put_str(b, 8, "abcdefg");
	ok(memcmp(b, w2, 16) == 0, "tr_live_put_str(8, 7 chars): all kept, then NUL");
	memset(b, 0xaa, sizeof(b));
	tr_live_put_str(b, 8, "");
	ok(b[0] == 0 && b[7] == 0 && memcmp(b, "\0\0\0\0\0\0\0\0", 8) == 0 && b[8] == 0xaa,
	   "tr_live_put_str(8, \"\"): eight NULs");
	memset(b, 0xaa, sizeof(b));
	tr_live_put_str(b, 1, "xyz");
	ok(b[0] == 0 && b[1] == 0xaa, "tr_live_put_str(1, \"xyz\"): a single NUL");

	/* a real field: hostname[64] */
	uint8_t *h = malloc(LIVE_HOST_MAX);
	char longname[100];
	memset(longname, 'h', 99);
	longname[99] = 0;
	tr_live_put_str(h, LIVE_HOST_MAX, longname);
	bool good = h[LIVE_HOST_MAX - 1] == 0 && strlen((char *)h) == LIVE_HOST_MAX - 1;
	ok(good, "tr_live_put_str(64, 99 chars): 63 kept, NUL-terminated inside the array");
	free(h);
}

/* ------------------------------------------------------- ctf index */

/* Big-endian by hand, independent of put_be64. */
static void be64_by_hand(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static void test_ctf_index(void)
{
	uint8_t h[CTF_IDX_HEADER_LEN + 4];
	memset(h, 0x77, sizeof(h));
	ctf_index_put_header(h);
	static const uint8_t want_h[CTF_IDX_HEADER_LEN + 4] = {
		0xc1, 0xf1, 0xdc, 0xc1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 72,
		0x77, 0x77, 0x77, 0x77,
	};
	ok(memcmp(h, want_h, sizeof(h)) == 0,
	   "ctf_index_put_header: magic C1F1DCC1, 1, 1, 72, big-endian, 16 bytes only");

	struct ctf_index ix = {
		.packet_size = 0x0102030405060708ull, .content_size = 0x1112131415161718ull,
		.ts_begin = 0x2122232425262728ull, .ts_end = 0x3132333435363738ull,
		.events_discarded = 0x4142434445464748ull, .stream_id = 0x5152535455565758ull,
		.instance_id = 0x6162636465666768ull, .seq = 0x7172737475767778ull,
	};
	uint8_t e[CTF_IDX_ENTRY_LEN + 4], want[CTF_IDX_ENTRY_LEN + 4];
	memset(e, 0x77, sizeof(e));
	memset(want, 0x77, sizeof(want));
	ctf_index_put_entry(e, 0xf1f2f3f4f5f6f7f8ull, &ix);
	const uint64_t v[9] = { 0xf1f2f3f4f5f6f7f8ull, ix.packet_size, ix.content_size,
				ix.ts_begin, ix.ts_end, ix.events_discarded, ix.stream_id,
				ix.instance_id, ix.seq };
	for (int i = 0; i < 9; i++)
		be64_by_hand(want + 8 * i, v[i]);
	static const char *const fields[9] = { "offset", "packet_size", "content_size",
					       "ts_begin", "ts_end", "events_discarded",
					       "stream_id", "instance_id", "seq" };
	for (int i = 0; i < 9; i++)
		ok(memcmp(e + 8 * i, want + 8 * i, 8) == 0,
		   "ctf_index_put_entry: %s at offset %d, big-endian", fields[i], 8 * i);
	ok(e[0] == 0xf1 && e[7] == 0xf8 && e[8] == 0x01 && e[71] == 0x78,
	   "ctf_index_put_entry: first and last bytes of the first and last fields");
	ok(memcmp(e + CTF_IDX_ENTRY_LEN, "\x77\x77\x77\x77", 4) == 0,
	   "ctf_index_put_entry: writes exactly 72 bytes");
}

int main(void)
{
	test_hello();
	test_welcome_ack();
	test_metadata();
	test_stream();
	test_packet();
	test_beacon_close();
	test_auth_msgs();
	test_resumed_progress();
	test_stream_of_messages();
	test_reject_header();
	test_reject_names();
	test_reject_strings();
	test_reject_packets();
	test_reject_short();
	test_put_index();
	test_names();
	test_split_addr();
	test_live_parse();
	test_live_put_str();
	test_ctf_index();
	return done_testing();
}
