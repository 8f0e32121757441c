/* SPDX-License-Identifier: MIT */
/*
 * test-live-client - the LTTng live viewer client (lib/net/live-client.h).
 *
 * 1. URLs: tr_live_url_parse() on babeltrace2's forms and trawl's
 *    /session/SESSION, IPv6 literals, and what it refuses; tr_live_url_matches().
 * 2. Scripted replies through a socket pair: the requests' bytes (header,
 *    command, payload) as the protocol lays them out; replies of every kind
 *    parsed field by field; malformed ones (absurd counts, sizes no packet
 *    has, unknown statuses, a packet of another length) refused with
 *    -EPROTO, after which the client refuses every call; a peer that says
 *    nothing: -ETIMEDOUT within the bound.
 * 3. A real `trawl relay` (the built binary, on ports the kernel picks,
 *    its ready line awaited): a trace streamed to it by the writer, and the
 *    client lists the session (host, name, live timer), attaches (a second
 *    viewer is refused), reads the metadata (the relay's metadata file,
 *    byte for byte, and it parses), learns of a stream created after it
 *    attached, and walks every data stream with GET_NEXT_INDEX and
 *    GET_PACKET until HUP: the packets, end to end, are the relay's stream
 *    files byte for byte; the session then ends (GET_NEW_STREAMS HUP);
 *    detach; an unknown session; the relay stopped: -ECONNRESET, and
 *    refused connections after.
 * 4. A listening socket that never answers: connect fails with ETIMEDOUT
 *    within the bound. An IPv6 literal URL connects over ::1.
 *
 * Also a helper for tests/e2e/t0830-live-client-lttng.sh (lttng-relayd):
 *   test-live-client --free-port          a free TCP port on 127.0.0.1
 *   test-live-client --connect URL        exit 0 once URL's relay answers
 *                                         CONNECT (1 s at most)
 *   test-live-client --lttng URL SECS     lists, attaches to URL's session
 *                                         and reads it; prints what it saw
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "ctf/ctf-internal.h"
#include "tap.h"
#include "internal.h"
#include "trawl/ctf.h"
#include "trawl/relay.h"
#include "net/live-client.h"
#include "net/relay-proto.h"
#include "net/sock.h"
#include "util/clock.h"

/* ---------------------------------------------------------------- 1. URLs */

static void test_urls(void)
{
	struct live_url u;
	char err[256];

	is_int(tr_live_url_parse("net://relay1/host/node-1/web", &u, err, sizeof(err)), 0,
	       "net://relay1/host/node-1/web parses");
	ok(u.kind == LIVE_URL_HOST_SESSION && !strcmp(u.relay, "relay1") && u.port == 5344 &&
		   !strcmp(u.hostname, "node-1") && !strcmp(u.session, "web"),
	   "  relay relay1, port 5344 (the default), host node-1, session web");
	is_int(tr_live_url_parse("net://127.0.0.1:6000/session/s_1", &u, err, sizeof(err)), 0,
	       "net://127.0.0.1:6000/session/s_1 parses");
	ok(u.kind == LIVE_URL_SESSION && !strcmp(u.relay, "127.0.0.1") && u.port == 6000 &&
		   !strcmp(u.session, "s_1") && !u.hostname[0],
	   "  every host of session s_1 on 127.0.0.1:6000");
	is_int(tr_live_url_parse("net://[::1]:7000/host/h/s", &u, err, sizeof(err)), 0,
	       "net://[::1]:7000/host/h/s parses");
	ok(u.kind == LIVE_URL_HOST_SESSION && !strcmp(u.relay, "::1") && u.port == 7000,
	   "  an IPv6 literal, without its brackets, and its port");
	is_int(tr_live_url_parse("net://[fe80::1]", &u, err, sizeof(err)), 0, "net://[fe80::1] parses");
	ok(u.kind == LIVE_URL_RELAY && !strcmp(u.relay, "fe80::1") && u.port == 5344,
	   "  a relay alone (to list its sessions), default port");
	is_int(tr_live_url_parse("net4://localhost:5344/", &u, err, sizeof(err)), 0,
	       "net4://localhost:5344/ parses (babeltrace2's spelling)");
	ok(u.kind == LIVE_URL_RELAY && !strcmp(u.relay, "localhost"), "  a relay alone");

	static const char *const bad[] = {
		"http://relay/host/h/s", "net://", "net:///host/h/s", "net://relay:0/host/h/s",
		"net://relay:99999", "net://relay:x/host/h/s", "net://[::1/host/h/s",
		"net://relay/host/h", "net://relay/host//s", "net://relay/host/h/",
		"net://relay/session/", "net://relay/session/a/b", "net://relay/hosts/h/s",
		"net://relay/h/s", "net://relay/host/h/s/x",
		"net://relay/host/0123456789012345678901234567890123456789012345678901234567890123/s",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = 0;
		int r = tr_live_url_parse(bad[i], &u, err, sizeof(err));
		ok(r == -EINVAL && err[0], "'%s' refused: %s", bad[i], err);
	}
	char longs[300] = "net://r/session/";
	memset(longs + strlen(longs), 'x', 255);
	longs[sizeof(longs) - 1] = 0;
	ok(tr_live_url_parse(longs, &u, err, sizeof(err)) == -EINVAL,
	   "a session name of 255 bytes refused (the protocol holds 254)");
	longs[16 + 254] = 0;
	ok(tr_live_url_parse(longs, &u, err, sizeof(err)) == 0 && strlen(u.session) == 254,
	   "a session name of 254 bytes taken");

	struct live_session_info s = { .id = 1 };
	snprintf(s.hostname, sizeof(s.hostname), "h");
	snprintf(s.name, sizeof(s.name), "s");
	tr_live_url_parse("net://r/host/h/s", &u, err, sizeof(err));
	ok(tr_live_url_matches(&u, &s), "/host/h/s matches host h, session s");
	snprintf(s.hostname, sizeof(s.hostname), "g");
	ok(!tr_live_url_matches(&u, &s), "/host/h/s does not match host g");
	tr_live_url_parse("net://r/session/s", &u, err, sizeof(err));
	ok(tr_live_url_matches(&u, &s), "/session/s matches host g, session s");
	snprintf(s.name, sizeof(s.name), "t");
	ok(!tr_live_url_matches(&u, &s), "/session/s does not match session t");
	tr_live_url_parse("net://r", &u, err, sizeof(err));
	ok(!tr_live_url_matches(&u, &s), "a relay URL matches no session");
}

/* ------------------------------------------------------ 2. scripted replies */

struct script {
	uint8_t b[65536];
	size_t n;
};

static void s32(struct script *s, uint32_t v) { put_be32(s->b + s->n, v); s->n += 4; }
static void s64(struct script *s, uint64_t v) { put_be64(s->b + s->n, v); s->n += 8; }
static void sstr(struct script *s, const char *v, size_t n)
{
	tr_live_put_str(s->b + s->n, n, v);
	s->n += n;
}
static void sbytes(struct script *s, const void *p, size_t n)
{
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

/* CONNECT's reply (viewer id 77, 2.4) and CREATE_SESSION's (OK). */
static void s_hello(struct script *s)
{
	s64(s, 77);
	s32(s, 2);
	s32(s, 4);
	s32(s, 1);
	s32(s, LIVE_CREATE_OK);
}

static void s_stream(struct script *s, uint64_t id, uint64_t trace, uint32_t meta,
		     const char *path, const char *chan)
{
	s64(s, id);
	s64(s, trace);
	s32(s, meta);
	sstr(s, path, LIVE_PATH_MAX);
	sstr(s, chan, LIVE_NAME_MAX);
}

/* An index reply: offset, sizes in bits, status; the other fields 0. */
static void s_index(struct script *s, uint64_t off, uint64_t psize, uint64_t csize, uint32_t st)
{
	s64(s, off);
	s64(s, psize);
	s64(s, csize);
	for (int i = 0; i < 4; i++)
		s64(s, 0);
	s32(s, st);
	s32(s, 0);
}

static int peer_fd = -1;

/* A client whose relay is a socket pair, with the replies of s already
 * written (the requests wait unread in peer_fd). */
static struct live_client *scripted(const struct script *s, int timeout_ms, char *err,
				    size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	if (peer_fd >= 0)
		close(peer_fd);
	peer_fd = sv[1];
	if (s->n && write(sv[1], s->b, s->n) != (ssize_t)s->n) {
		close(sv[0]);
		return NULL;
	}
	return tr_live_client_from_fd(sv[0], timeout_ms, err, errlen);
}

/* Reads the next request the client sent: its command, payload in p (n). */
static bool next_request(uint32_t *cmd, uint8_t *p, size_t *n)
{
	uint8_t h[16];
	if (tr_net_read_full(peer_fd, h, 16, tr_mono_ms() + 1000))
		return false;
	*cmd = get_be32(h + 8);
	*n = (size_t)get_be64(h);
	if (*n > 64 || get_be32(h + 12) != 0)
		return false;
	return tr_net_read_full(peer_fd, p, *n, tr_mono_ms() + 1000) == 0;
}

/* The i-th malformed reply (after the handshake's) into x: false past the
 * last. op: the call that reads it (0 list, 1 attach, 2 next index, 3 a
 * packet of 4 bytes, 4 metadata, 5 new streams). */
static bool bad_reply(int i, struct script *x, const char **what, int *op)
{
	x->n = 0;
	s_hello(x);
	switch (i) {
	case 0: *what = "LIST: 65537 sessions"; *op = 0; s32(x, 65537); break;
	case 1: *what = "ATTACH: 65537 streams"; *op = 1; s32(x, LIVE_ATTACH_OK); s32(x, 65537); break;
	case 2: *what = "ATTACH: status 99"; *op = 1; s32(x, 99); s32(x, 0); break;
	case 3: *what = "ATTACH: refused with 3 streams"; *op = 1; s32(x, LIVE_ATTACH_UNK); s32(x, 3); break;
	case 4:
		*what = "ATTACH: metadata flag 2"; *op = 1;
		s32(x, LIVE_ATTACH_OK); s32(x, 1); s_stream(x, 1, 1, 2, "p", "c");
		break;
	case 5: *what = "INDEX: status 0"; *op = 2; s_index(x, 0, 0, 0, 0); break;
	case 6: *what = "INDEX: status 7"; *op = 2; s_index(x, 0, 0, 0, 7); break;
	case 7: *what = "INDEX: content above packet size"; *op = 2; s_index(x, 0, 64, 72, 1); break;
	case 8: *what = "INDEX: a packet of 0 bits holding 8"; *op = 2; s_index(x, 0, 0, 8, 1); break;
	case 9: *what = "INDEX: a packet of 12 bits"; *op = 2; s_index(x, 0, 12, 8, 1); break;
	case 10: *what = "INDEX: a packet of 4 GiB"; *op = 2; s_index(x, 0, 1ull << 35, 8, 1); break;
	case 11:
		*what = "INDEX: a packet ending past 2^64"; *op = 2;
		s_index(x, UINT64_MAX - 10, 4096, 8, 1);
		break;
	case 12: *what = "PACKET: 5 bytes for 4 asked"; *op = 3; s32(x, 1); s32(x, 5); s32(x, 0); break;
	case 13: *what = "PACKET: 3 bytes for 4 asked"; *op = 3; s32(x, 1); s32(x, 3); s32(x, 0); break;
	case 14: *what = "PACKET: RETRY with bytes"; *op = 3; s32(x, 2); s32(x, 4); s32(x, 0); break;
	case 15: *what = "PACKET: status 5"; *op = 3; s32(x, 5); s32(x, 0); s32(x, 0); break;
	case 16:
		*what = "METADATA: 64 MiB + 1"; *op = 4;
		s64(x, (64ull << 20) + 1); s32(x, LIVE_METADATA_OK);
		break;
	case 17: *what = "METADATA: NO_NEW with bytes"; *op = 4; s64(x, 3); s32(x, 2); break;
	case 18: *what = "METADATA: status 4"; *op = 4; s64(x, 0); s32(x, 4); break;
	case 19: *what = "NEW_STREAMS: status 5"; *op = 5; s32(x, 5); s32(x, 0); break;
	case 20: *what = "NEW_STREAMS: HUP with streams"; *op = 5; s32(x, 4); s32(x, 1); break;
	default:
		return false;
	}
	return true;
}

static void test_scripted(void)
{
	struct script s = { .n = 0 };
	char err[256] = "";
	uint8_t p[64];
	size_t pn;
	uint32_t cmd;

	/* the handshake, then one reply of each kind */
	s_hello(&s);
	s32(&s, 2);				/* LIST: 2 sessions */
	s64(&s, 5); s32(&s, 100000); s32(&s, 0); s32(&s, 3);
	sstr(&s, "nodeA", LIVE_HOST_MAX); sstr(&s, "web", LIVE_NAME_MAX);
	s64(&s, 9); s32(&s, 1000); s32(&s, 1); s32(&s, 0);
	/* a hostname filling its 64 bytes without a NUL */
	memset(s.b + s.n, 'h', LIVE_HOST_MAX); s.n += LIVE_HOST_MAX;
	sstr(&s, "db", LIVE_NAME_MAX);
	s32(&s, LIVE_ATTACH_OK); s32(&s, 2);	/* ATTACH: 2 streams */
	s_stream(&s, 10, 5, 1, "/out/web/nodeA/ust", "metadata");
	s_stream(&s, 11, 5, 0, "/out/web/nodeA/ust", "channel0_0");
	s64(&s, 6); s32(&s, LIVE_METADATA_OK); sbytes(&s, "abcdef", 6);	/* METADATA */
	s64(&s, 0); s32(&s, LIVE_METADATA_NO_NEW);			/* METADATA */
	/* GET_NEXT_INDEX: OK, 4096-byte packet at 8192 */
	s64(&s, 8192); s64(&s, 4096 * 8); s64(&s, 1000 * 8); s64(&s, 100); s64(&s, 200);
	s64(&s, 3); s64(&s, 0); s32(&s, LIVE_INDEX_OK); s32(&s, LIVE_FLAG_NEW_STREAM);
	/* GET_NEXT_INDEX: INACTIVE at 500 */
	s64(&s, 0); s64(&s, 0); s64(&s, 0); s64(&s, 0); s64(&s, 500);
	s64(&s, 0); s64(&s, 0); s32(&s, LIVE_INDEX_INACTIVE); s32(&s, 0);
	/* GET_NEXT_INDEX: OK of no packet (sizes 0), NEW_STREAM */
	s64(&s, 8192); s64(&s, 0); s64(&s, 0); s64(&s, 500); s64(&s, 500);
	s64(&s, 3); s64(&s, 0); s32(&s, LIVE_INDEX_OK); s32(&s, LIVE_FLAG_NEW_STREAM);
	s32(&s, LIVE_PACKET_OK); s32(&s, 4); s32(&s, 0); sbytes(&s, "\xc1\x1f\xfc\xc1", 4);
	s32(&s, LIVE_PACKET_ERR); s32(&s, 0); s32(&s, LIVE_FLAG_NEW_METADATA);
	s32(&s, LIVE_NEW_STREAMS_OK); s32(&s, 1);
	s_stream(&s, 12, 5, 0, "/out/web/nodeA/ust", "channel0_1");
	s32(&s, LIVE_NEW_STREAMS_NO_NEW); s32(&s, 0);
	s32(&s, LIVE_NEW_STREAMS_HUP); s32(&s, 0);
	s32(&s, LIVE_ATTACH_UNK); s32(&s, 0);
	s32(&s, LIVE_DETACH_OK);
	s32(&s, LIVE_DETACH_UNK);

	struct live_client *c = scripted(&s, 1000, err, sizeof(err));
	ok(c != NULL, "a scripted relay: connected (%s)", c ? "" : err);
	if (!c)
		return;
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_CONNECT && pn == 20 && get_be64(p) == 0 &&
		   get_be32(p + 8) == 2 && get_be32(p + 12) == 4 && get_be32(p + 16) == 1,
	   "CONNECT: 20 bytes, viewer id 0, 2.4, a command connection");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_CREATE_SESSION && pn == 0,
	   "then CREATE_SESSION, no payload");
	is_int(tr_live_client_viewer_id(c), 77, "the viewer session id the relay gave");
	is_int(tr_live_client_minor(c), 4, "protocol 2.4");

	struct live_session_info *ss;
	size_t n;
	is_int(tr_live_client_list(c, &ss, &n), 0, "LIST_SESSIONS");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_LIST_SESSIONS && pn == 0, "  request: no payload");
	ok(n == 2 && ss[0].id == 5 && ss[0].live_timer == 100000 && ss[0].clients == 0 &&
		   ss[0].streams == 3 && !strcmp(ss[0].hostname, "nodeA") &&
		   !strcmp(ss[0].name, "web"),
	   "  session 5: nodeA/web, live timer 100000, 0 clients, 3 streams");
	ok(n == 2 && ss[1].id == 9 && strlen(ss[1].hostname) == 64 && !strcmp(ss[1].name, "db"),
	   "  session 9: a hostname of 64 bytes without NUL ends at 64");
	free(ss);

	struct live_stream_info *st;
	is_int(tr_live_client_attach(c, 5, true, &st, &n), 0, "ATTACH_SESSION");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_ATTACH_SESSION && pn == 20 &&
		   get_be64(p) == 5 && get_be64(p + 8) == 0 && get_be32(p + 16) == LIVE_SEEK_BEGINNING,
	   "  request: session 5, offset 0, seek beginning");
	ok(n == 2 && st[0].id == 10 && st[0].ctf_trace_id == 5 && st[0].metadata &&
		   !strcmp(st[0].path, "/out/web/nodeA/ust") && !strcmp(st[0].channel, "metadata") &&
		   st[1].id == 11 && !st[1].metadata && !strcmp(st[1].channel, "channel0_0"),
	   "  streams: metadata 10 and channel0_0 11 of trace 5");
	free(st);

	uint8_t *m;
	size_t ml;
	is_int(tr_live_client_metadata(c, 10, &m, &ml), 1, "GET_METADATA: a chunk");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_GET_METADATA && pn == 8 && get_be64(p) == 10,
	   "  request: stream 10");
	ok(ml == 6 && !memcmp(m, "abcdef", 6), "  its 6 bytes");
	free(m);
	is_int(tr_live_client_metadata(c, 10, &m, &ml), 0, "GET_METADATA: nothing new");
	ok(m == NULL && ml == 0, "  no buffer");
	next_request(&cmd, p, &pn);

	struct live_index ix;
	is_int(tr_live_client_next_index(c, 11, &ix), 0, "GET_NEXT_INDEX: OK");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_GET_NEXT_INDEX && pn == 8 && get_be64(p) == 11,
	   "  request: stream 11");
	ok(ix.status == LIVE_INDEX_OK && ix.offset == 8192 && ix.packet_size == 32768 &&
		   ix.content_size == 8000 && ix.timestamp_begin == 100 && ix.timestamp_end == 200 &&
		   ix.events_discarded == 3 && ix.flags == LIVE_FLAG_NEW_STREAM,
	   "  every field, and the NEW_STREAM flag");
	is_int(tr_live_client_next_index(c, 11, &ix), 0, "GET_NEXT_INDEX: INACTIVE");
	ok(ix.status == LIVE_INDEX_INACTIVE && ix.timestamp_end == 500, "  the beacon at 500");
	next_request(&cmd, p, &pn);
	is_int(tr_live_client_next_index(c, 11, &ix), 0,
	       "GET_NEXT_INDEX: OK of no packet (sizes 0: trawl's relay telling of new streams)");
	ok(ix.status == LIVE_INDEX_OK && ix.packet_size == 0 && ix.content_size == 0 &&
		   ix.flags == LIVE_FLAG_NEW_STREAM, "  sizes 0, and the NEW_STREAM flag");
	next_request(&cmd, p, &pn);

	uint8_t pk[8] = { 0 };
	uint32_t pst, pfl;
	is_int(tr_live_client_packet(c, 11, 8192, 4, pk, &pst, &pfl), 0, "GET_PACKET: OK");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_GET_PACKET && pn == 20 && get_be64(p) == 11 &&
		   get_be64(p + 8) == 8192 && get_be32(p + 16) == 4,
	   "  request: stream 11, offset 8192, 4 bytes");
	ok(pst == LIVE_PACKET_OK && pfl == 0 && !memcmp(pk, "\xc1\x1f\xfc\xc1", 4) && pk[4] == 0,
	   "  its 4 bytes, nothing more written");
	memset(pk, 0, sizeof(pk));
	is_int(tr_live_client_packet(c, 11, 0, 4, pk, &pst, &pfl), 0, "GET_PACKET: ERR");
	ok(pst == LIVE_PACKET_ERR && pfl == LIVE_FLAG_NEW_METADATA && pk[0] == 0,
	   "  status ERR, flag NEW_METADATA, the buffer untouched");
	next_request(&cmd, p, &pn);

	bool hup;
	is_int(tr_live_client_new_streams(c, 5, &st, &n, &hup), 0, "GET_NEW_STREAMS: one");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_GET_NEW_STREAMS && pn == 8 && get_be64(p) == 5,
	   "  request: session 5");
	ok(n == 1 && !hup && st[0].id == 12 && !strcmp(st[0].channel, "channel0_1"),
	   "  channel0_1, no HUP");
	free(st);
	is_int(tr_live_client_new_streams(c, 5, &st, &n, &hup), 0, "GET_NEW_STREAMS: none");
	ok(n == 0 && st == NULL && !hup, "  none, no HUP");
	is_int(tr_live_client_new_streams(c, 5, &st, &n, &hup), 0, "GET_NEW_STREAMS: HUP");
	ok(n == 0 && hup, "  HUP");
	is_int(tr_live_client_attach(c, 6, false, &st, &n), -ENOENT, "ATTACH to an unknown session: -ENOENT");
	ok(strstr(tr_live_client_errmsg(c), "unknown session") != NULL, "  message: %s",
	   tr_live_client_errmsg(c));
	next_request(&cmd, p, &pn);
	next_request(&cmd, p, &pn);
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_ATTACH_SESSION && get_be32(p + 16) == LIVE_SEEK_LAST,
	   "  request: seek last");
	is_int(tr_live_client_detach(c, 5), 0, "DETACH_SESSION: OK (the connection went on after a refusal)");
	ok(next_request(&cmd, p, &pn) && cmd == LIVE_DETACH_SESSION && pn == 8 && get_be64(p) == 5,
	   "  request: session 5");
	is_int(tr_live_client_detach(c, 5), -ENOENT, "DETACH_SESSION: UNK is -ENOENT");
	tr_live_client_free(c);

	/* malformed replies: -EPROTO, and the client unusable after */
	const char *what;
	int op;
	for (int i = 0; bad_reply(i, &s, &what, &op); i++) {
		c = scripted(&s, 1000, err, sizeof(err));
		if (!c) {
			ok(0, "%s: connected (%s)", what, err);
			continue;
		}
		int r = 0;
		struct live_session_info *sv = NULL;
		struct live_stream_info *stv = NULL;
		uint8_t *mb = NULL;
		uint8_t buf[8];
		switch (op) {
		case 0: r = tr_live_client_list(c, &sv, &n); break;
		case 1: r = tr_live_client_attach(c, 1, true, &stv, &n); break;
		case 2: r = tr_live_client_next_index(c, 1, &ix); break;
		case 3: r = tr_live_client_packet(c, 1, 0, 4, buf, &pst, &pfl); break;
		case 4: r = tr_live_client_metadata(c, 1, &mb, &ml); break;
		case 5: r = tr_live_client_new_streams(c, 1, &stv, &n, &hup); break;
		}
		ok(r == -EPROTO && sv == NULL && stv == NULL && mb == NULL,
		   "%s: -EPROTO (%s)", what, tr_live_client_errmsg(c));
		ok(tr_live_client_list(c, &sv, &n) == -EPROTO && sv == NULL,
		   "  then every call: -EPROTO at once");
		tr_live_client_free(c);
	}

	/* a relay of another protocol */
	s.n = 0;
	s64(&s, 1); s32(&s, 3); s32(&s, 0); s32(&s, 1);
	c = scripted(&s, 1000, err, sizeof(err));
	ok(c == NULL && errno == EPROTO && strstr(err, "3.0"), "a relay speaking 3.0: EPROTO (%s)", err);
	tr_live_client_free(c);
	s.n = 0;
	s64(&s, 1); s32(&s, 2); s32(&s, 3); s32(&s, 1);
	c = scripted(&s, 1000, err, sizeof(err));
	ok(c == NULL && errno == EPROTO, "a relay speaking 2.3 (no hostnames in its lists): EPROTO (%s)",
	   err);
	s.n = 0;
	s64(&s, 1); s32(&s, 2); s32(&s, 4); s32(&s, 1); s32(&s, LIVE_CREATE_ERR);
	c = scripted(&s, 1000, err, sizeof(err));
	ok(c == NULL && errno == EIO, "CREATE_SESSION refused: EIO (%s)", err);

	/* half a reply, then the peer closes */
	s.n = 0;
	s_hello(&s);
	s32(&s, 1);
	s64(&s, 5);
	c = scripted(&s, 1000, err, sizeof(err));
	shutdown(peer_fd, SHUT_WR);
	struct live_session_info *sv;
	ok(c && tr_live_client_list(c, &sv, &n) == -ECONNRESET,
	   "a reply cut short by the peer closing: -ECONNRESET (%s)", c ? tr_live_client_errmsg(c) : err);
	tr_live_client_free(c);

	/* a peer that never answers */
	s.n = 0;
	s_hello(&s);
	c = scripted(&s, 300, err, sizeof(err));
	int64_t t0 = tr_mono_ms();
	int r = c ? tr_live_client_next_index(c, 1, &ix) : 0;
	int64_t el = tr_mono_ms() - t0;
	ok(r == -ETIMEDOUT && el >= 299 && el < 1300,
	   "no reply: -ETIMEDOUT after %lld ms (timeout 300 ms; %s)", (long long)el,
	   c ? tr_live_client_errmsg(c) : err);
	ok(c && tr_live_client_list(c, &sv, &n) == -ETIMEDOUT, "  then every call: -ETIMEDOUT at once");
	tr_live_client_free(c);
	close(peer_fd);
	peer_fd = -1;
}

/* ------------------------------------------------------------- 3. a relay */

static char tmp[256];

static const char *trawl_bin(void)
{
	static char path[4096];
	const char *t = getenv("TRAWL");
	if (t && access(t, X_OK) == 0)
		return t;
	const char *b = getenv("TRAWL_BUILD");
	if (b) {
		snprintf(path, sizeof(path), "%s/trawl", b);
		if (access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

struct relay {
	pid_t pid;
	char data[300], live[300];
	char live_host[256];
	unsigned live_port;
};

/* Starts `trawl relay` in the foreground on ports the kernel picks, its
 * log in DIR/relay.log; returns once it wrote its ready line (10 s at
 * most). */
static int relay_start(struct relay *r, const char *bin, const char *out)
{
	int pfd[2];
	char log[300], conf[300], fdarg[16];
	if (pipe(pfd) < 0)
		return -errno;
	snprintf(log, sizeof(log), "%s/relay.log", tmp);
	snprintf(conf, sizeof(conf), "%s/empty.conf", tmp);
	close(open(conf, O_WRONLY | O_CREAT, 0644));
	snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (r->pid == 0) {
		close(pfd[0]);
		int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (lfd >= 0) {
			dup2(lfd, 1);
			dup2(lfd, 2);
		}
		setenv("TRAWL_CONFIG", conf, 1);
		execl(bin, bin, "relay", "-o", out, "--data", "127.0.0.1:0", "--live", "127.0.0.1:0",
		      "--foreground", "--ready-fd", fdarg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	char line[700];
	size_t n = 0;
	int64_t deadline = tr_mono_ms() + 10000;
	while (n < sizeof(line) - 1 && !memchr(line, '\n', n)) {
		if (tr_net_wait(pfd[0], POLLIN, deadline))
			break;
		ssize_t k = read(pfd[0], line + n, sizeof(line) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(pfd[0]);
	line[n] = 0;
	if (sscanf(line, "ready %299s %299s", r->data, r->live) != 2)
		return -EIO;
	return tr_net_split_addr(r->live, r->live_host, sizeof(r->live_host), &r->live_port, 5344);
}

/* Stops the relay (SIGTERM) and reaps it, 10 s at most: its exit status,
 * or -1. */
static int relay_stop(struct relay *r)
{
	if (r->pid <= 0)
		return -1;
	int pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0);
	kill(r->pid, SIGTERM);
	int st = 0;
	int64_t deadline = tr_mono_ms() + 10000;
	pid_t got = 0;
	while ((got = waitpid(r->pid, &st, WNOHANG)) == 0 && tr_mono_ms() < deadline) {
		if (pidfd >= 0)
			tr_net_wait(pidfd, POLLIN, deadline);
		else
			poll(NULL, 0, 10);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (got != r->pid) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, &st, 0);
		r->pid = 0;
		return -1;
	}
	r->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A growing byte buffer. */
struct bytes {
	uint8_t *p;
	size_t n, cap;
};

static bool bytes_add(struct bytes *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		while (nc < b->n + n)
			nc *= 2;
		uint8_t *np = realloc(b->p, nc);
		if (!np)
			return false;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return true;
}

/* What the viewer knows of one stream. */
struct vs {
	struct live_stream_info info;
	struct bytes got;
	unsigned packets, retries, inactive, empty;
	bool hup;
};

struct viewer {
	struct live_client *c;
	uint64_t session;
	struct vs *streams;
	size_t n;
	struct bytes meta;
	uint64_t meta_stream;
	unsigned new_stream_flags, new_metadata_flags, metadata_chunks;
	char why[512];
};

static void add_streams(struct viewer *v, struct live_stream_info *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i].metadata) {
			v->meta_stream = s[i].id;
			continue;
		}
		struct vs *nv = realloc(v->streams, (v->n + 1) * sizeof(*nv));
		if (!nv)
			abort();
		v->streams = nv;
		memset(&nv[v->n], 0, sizeof(nv[v->n]));
		nv[v->n++].info = s[i];
	}
	free(s);
}

/* Reads metadata until the relay has nothing new: 0 or -errno. */
static int read_metadata(struct viewer *v)
{
	for (;;) {
		uint8_t *b;
		size_t n;
		int r = tr_live_client_metadata(v->c, v->meta_stream, &b, &n);
		if (r <= 0)
			return r;
		v->metadata_chunks++;
		bool okk = bytes_add(&v->meta, b, n);
		free(b);
		if (!okk)
			return -ENOMEM;
	}
}

/*
 * Walks every data stream (new ones as the relay announces them) with
 * GET_NEXT_INDEX and GET_PACKET until each gave HUP, within secs: 0, or
 * -1 with the reason in v->why.
 */
static int walk(struct viewer *v, int secs)
{
	int64_t deadline = tr_mono_ms() + secs * 1000;
	for (;;) {
		bool all = v->n > 0;
		for (size_t i = 0; i < v->n; i++) {
			struct vs *s = &v->streams[i];
			if (s->hup)
				continue;
			all = false;
			struct live_index ix;
			int r = tr_live_client_next_index(v->c, s->info.id, &ix);
			if (r) {
				snprintf(v->why, sizeof(v->why), "next_index: %s", tr_live_client_errmsg(v->c));
				return -1;
			}
			if (ix.flags & LIVE_FLAG_NEW_METADATA) {
				v->new_metadata_flags++;
				if (read_metadata(v) < 0) {
					snprintf(v->why, sizeof(v->why), "metadata: %s",
						 tr_live_client_errmsg(v->c));
					return -1;
				}
			}
			if (ix.flags & LIVE_FLAG_NEW_STREAM) {
				struct live_stream_info *ns;
				size_t nn;
				bool hup;
				v->new_stream_flags++;
				if (tr_live_client_new_streams(v->c, v->session, &ns, &nn, &hup)) {
					snprintf(v->why, sizeof(v->why), "new_streams: %s",
						 tr_live_client_errmsg(v->c));
					return -1;
				}
				add_streams(v, ns, nn);
				s = &v->streams[i];
			}
			switch (ix.status) {
			case LIVE_INDEX_OK: {
				uint32_t len = (uint32_t)(ix.packet_size / 8), st, fl;
				if (!len) {	/* no packet: the flags only */
					s->empty++;
					break;
				}
				uint8_t *b = malloc(len);
				if (!b)
					return -1;
				r = tr_live_client_packet(v->c, s->info.id, ix.offset, len, b, &st, &fl);
				if (r || st != LIVE_PACKET_OK || ix.offset != s->got.n) {
					snprintf(v->why, sizeof(v->why),
						 "packet of %s at %llu (have %zu): %d status %u: %s",
						 s->info.channel, (unsigned long long)ix.offset, s->got.n,
						 r, st, tr_live_client_errmsg(v->c));
					free(b);
					return -1;
				}
				bytes_add(&s->got, b, len);
				free(b);
				s->packets++;
				break;
			}
			case LIVE_INDEX_RETRY:
				s->retries++;
				break;
			case LIVE_INDEX_INACTIVE:
				s->inactive++;
				break;
			case LIVE_INDEX_HUP:
				s->hup = true;
				break;
			default:
				snprintf(v->why, sizeof(v->why), "%s: index status %u", s->info.channel,
					 ix.status);
				return -1;
			}
		}
		if (all)
			return 0;
		if (tr_mono_ms() > deadline) {
			snprintf(v->why, sizeof(v->why), "not every stream ended within %d s", secs);
			return -1;
		}
	}
}

static void viewer_free(struct viewer *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->streams[i].got.p);
	free(v->streams);
	free(v->meta.p);
	tr_live_client_free(v->c);
}

/* The writer's trace: 2 streams with a few packets each before the viewer
 * attaches; a third stream after. */
struct producer {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_stream_class *sc;
	struct trawl_ctf_event_class *ec;
	struct trawl_ctf_wstream *s[3];
	uint64_t seq;
};

static int produce(struct producer *p, int cpu, uint64_t ts, int n)
{
	for (int i = 0; i < n; i++) {
		uint8_t b[64];
		uint64_t s = p->seq++;
		memcpy(b, &s, 8);
		int l = snprintf((char *)b + 8, sizeof(b) - 8, "event %llu", (unsigned long long)s);
		int r = trawl_ctf_wstream_event(p->s[cpu], p->ec, ts + (uint64_t)i * 1000, b,
						8 + (size_t)l + 1);
		if (r)
			return r;
	}
	return 0;
}

static int producer_new(struct producer *p, const char *relay, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	struct trawl_relay_dest_opts ro = {
		.sz = sizeof(ro), .addr = relay, .session = "lc", .trace = "ust",
		.live_timer_us = 250000,
	};
	struct trawl_ctf_dest *dest = trawl_relay_dest_new(&ro);
	if (!dest) {
		snprintf(err, errlen, "relay %s: %s", relay, strerror(errno));
		return -errno;
	}
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .hostname = "nodeL", .domain = "ust", .dest = dest,
		.packet_size = 4096, .clock_offset_s = 1700000000, .clock_offset = 1,
		.err = err, .errlen = errlen,
	};
	p->w = trawl_ctf_writer_new(&o);
	if (!p->w)
		return -errno;
	struct trawl_ctf_type *f = trawl_ctf_type_struct(p->w);
	if (!f || trawl_ctf_struct_add(p->w, f, "seq", trawl_ctf_type_int(p->w, 64, false, 10)) ||
	    trawl_ctf_struct_add(p->w, f, "msg", trawl_ctf_type_string(p->w)))
		return -ENOMEM;
	p->sc = trawl_ctf_writer_stream_class(p->w, TRAWL_CTF_HEADER_LARGE, NULL);
	p->ec = p->sc ? trawl_ctf_writer_event_class(p->w, p->sc, "tick", 6, f) : NULL;
	if (!p->ec)
		return -ENOMEM;
	for (int cpu = 0; cpu < 2; cpu++) {
		p->s[cpu] = trawl_ctf_writer_stream(p->w, p->sc, "channel0", (uint32_t)cpu);
		if (!p->s[cpu])
			return -errno;
	}
	int r;
	if ((r = produce(p, 0, 1000000, 300)) || (r = produce(p, 1, 1000500, 200)) ||
	    (r = trawl_ctf_wstream_flush(p->s[0], 2000000)) ||
	    (r = trawl_ctf_wstream_flush(p->s[1], 2000000)))
		return r;
	return 0;
}

/* Lists until session lc of nodeL shows with 3 streams, 10 s at most. */
static bool find_session(struct live_client *c, struct live_session_info *out)
{
	int64_t deadline = tr_mono_ms() + 10000;
	do {
		struct live_session_info *ss;
		size_t n;
		if (tr_live_client_list(c, &ss, &n))
			return false;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(ss[i].name, "lc") && !strcmp(ss[i].hostname, "nodeL") &&
			    ss[i].streams == 3) {
				*out = ss[i];
				free(ss);
				return true;
			}
		free(ss);
		poll(NULL, 0, 20);	/* the relay takes the producer's messages in turn */
	} while (tr_mono_ms() < deadline);
	return false;
}

static void test_relay(void)
{
	const char *bin = trawl_bin();
	if (!bin) {
		skip("the trawl binary is not found (TRAWL, TRAWL_BUILD)");
		return;
	}
	char out[300], err[512] = "";
	snprintf(out, sizeof(out), "%s/out", tmp);
	struct relay rl = { 0 };
	int r = relay_start(&rl, bin, out);
	ok(r == 0, "trawl relay started: data on %s, live on %s", rl.data, rl.live);
	if (r) {
		relay_stop(&rl);
		return;
	}
	struct producer p;
	r = producer_new(&p, rl.data, err, sizeof(err));
	ok(r == 0, "a writer streams a trace to it (2 streams, 500 events) (%s)", r ? err : "");

	struct viewer v = { 0 };
	v.c = tr_live_client_connect(rl.live_host, (uint16_t)rl.live_port, 5000, err, sizeof(err));
	ok(v.c != NULL, "connected to the live port (%s)", v.c ? "" : err);
	if (r || !v.c) {
		viewer_free(&v);
		trawl_ctf_writer_free(p.w);
		relay_stop(&rl);
		return;
	}
	ok(tr_live_client_viewer_id(v.c) > 0, "the relay gave a viewer session id (%llu)",
	   (unsigned long long)tr_live_client_viewer_id(v.c));

	struct live_session_info si = { 0 };
	bool found = find_session(v.c, &si);
	ok(found, "LIST_SESSIONS shows session lc of host nodeL, with 3 streams");
	ok(found && si.live_timer == 250000 && si.clients == 0,
	   "  its live timer (250000 us) and no viewer");
	v.session = si.id;

	struct live_stream_info *st;
	size_t n = 0;
	r = tr_live_client_attach(v.c, si.id, true, &st, &n);
	is_int(r, 0, "ATTACH_SESSION from the beginning (%s)", r ? tr_live_client_errmsg(v.c) : "");
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/lc/nodeL/ust", out);
	/* the path under the relay's output, not where it writes (issue 28:
	 * peers are not told the relay's paths) */
	bool good = n == 3;
	for (size_t i = 0; good && i < n; i++)
		good = !strcmp(st[i].path, "lc/nodeL/ust") && st[i].ctf_trace_id == st[0].ctf_trace_id &&
		       st[i].metadata == (i == 0) &&
		       !strcmp(st[i].channel, i == 0 ? "metadata" : i == 1 ? "channel0_0" : "channel0_1");
	ok(good, "  3 streams of one trace in lc/nodeL/ust (%s): metadata, channel0_0, channel0_1",
	   dir);
	if (r == 0)
		add_streams(&v, st, n);

	/* a second viewer of the session is served too (its own positions),
	 * a connection attaches to one session; the first goes on */
	struct live_client *c2 = tr_live_client_connect(rl.live_host, (uint16_t)rl.live_port, 5000,
						     err, sizeof(err));
	struct live_stream_info *st2 = NULL;
	size_t n2 = 0;
	r = c2 ? tr_live_client_attach(c2, si.id + 1000, true, &st2, &n2) : -1;
	ok(r == -ENOENT, "ATTACH to a session that does not exist: -ENOENT (%s)",
	   c2 ? tr_live_client_errmsg(c2) : err);
	r = c2 ? tr_live_client_attach(c2, si.id, true, &st2, &n2) : -1;
	ok(r == 0 && n2 == 3, "a second viewer's ATTACH to the session: its 3 streams too (%s)",
	   c2 && r ? tr_live_client_errmsg(c2) : "");
	free(st2);
	st2 = NULL;
	r = c2 ? tr_live_client_attach(c2, si.id, true, &st2, &n2) : -1;
	ok(r == -EBUSY && st2 == NULL, "  attached, its connection's second ATTACH: -EBUSY (%s)",
	   c2 ? tr_live_client_errmsg(c2) : err);
	struct live_session_info *ss = NULL;
	r = c2 ? tr_live_client_list(c2, &ss, &n2) : -1;
	ok(r == 0 && n2 >= 1, "  the connection goes on (LIST_SESSIONS: %zu)", r ? 0 : n2);
	free(ss);
	tr_live_client_free(c2);

	r = read_metadata(&v);
	ok(r == 0 && v.meta.n > 0, "GET_METADATA until nothing new: %zu bytes in %u chunks (%s)",
	   v.meta.n, v.metadata_chunks, r ? tr_live_client_errmsg(v.c) : "");

	/* a stream created after the viewer attached, more events, then the
	 * trace closed (CLOSE, ACK: the relay has it all) */
	p.s[2] = trawl_ctf_writer_stream(p.w, p.sc, "channel0", 2);
	r = p.s[2] ? 0 : -errno;
	if (!r && !(r = produce(&p, 2, 2100000, 150)) && !(r = produce(&p, 0, 2200000, 100)))
		r = trawl_ctf_writer_close(p.w);
	ok(r == 0, "the writer adds stream channel0_2 and more events, and closes (%d)", r);
	trawl_ctf_writer_free(p.w);

	r = walk(&v, 20);
	ok(r == 0, "every data stream walked with GET_NEXT_INDEX/GET_PACKET until HUP (%s)", v.why);
	ok(v.n == 3 && v.new_stream_flags > 0,
	   "  channel0_2 learnt through NEW_STREAM and GET_NEW_STREAMS (%zu streams, %u flags)",
	   v.n, v.new_stream_flags);
	size_t ml;
	char path[900];
	snprintf(path, sizeof(path), "%s/metadata", dir);
	uint8_t *mf = slurp(path, &ml);
	ok(mf && ml == v.meta.n && !memcmp(mf, v.meta.p, ml),
	   "the metadata read equals the relay's %s byte for byte (%zu bytes)", path, ml);
	free(mf);
	char perr[256] = "";
	char *text = v.meta.n ? strndup((char *)v.meta.p, v.meta.n) : NULL;
	struct trawl_ctf_trace *t = text ? trawl_ctf_metadata_parse(text, v.meta.n, perr,
								     sizeof(perr)) : NULL;
	ok(t && t->nstreams == 1, "  and parses (%s)", t ? "one stream class" : perr);
	trawl_ctf_trace_free(t);
	free(text);
	for (size_t i = 0; i < v.n; i++) {
		struct vs *s = &v.streams[i];
		snprintf(path, sizeof(path), "%s/%s", dir, s->info.channel);
		uint8_t *f = slurp(path, &ml);
		ok(f && s->hup && s->packets >= (i == 2 ? 1u : 2u) && ml == s->got.n &&
			   !memcmp(f, s->got.p, ml),
		   "%s: %u packets, %zu bytes, equal to the relay's file byte for byte",
		   s->info.channel, s->packets, s->got.n);
		free(f);
	}
	bool hup = false;
	r = tr_live_client_new_streams(v.c, v.session, &st, &n, &hup);
	ok(r == 0 && n == 0 && hup, "GET_NEW_STREAMS: HUP, the session ended (%s)",
	   r ? tr_live_client_errmsg(v.c) : "");
	is_int(tr_live_client_detach(v.c, v.session), 0, "DETACH_SESSION");
	r = tr_live_client_detach(v.c, v.session);
	ok(r == -ENOENT, "  a second DETACH: -ENOENT (%s)", tr_live_client_errmsg(v.c));

	/* the relay stopped under a connected viewer */
	struct live_client *c3 = tr_live_client_connect(rl.live_host, (uint16_t)rl.live_port, 5000,
						     err, sizeof(err));
	ok(c3 != NULL, "another viewer connects (%s)", c3 ? "" : err);
	is_int(relay_stop(&rl), 0, "the relay stops on SIGTERM (exit 0)");
	r = c3 ? tr_live_client_list(c3, &ss, &n) : 0;
	ok(r == -ECONNRESET, "LIST_SESSIONS to a relay that is gone: -ECONNRESET (%s)",
	   c3 ? tr_live_client_errmsg(c3) : "");
	r = c3 ? tr_live_client_list(c3, &ss, &n) : 0;
	ok(r == -ECONNRESET, "  and again, at once");
	tr_live_client_free(c3);
	r = tr_live_client_detach(v.c, v.session);
	ok(r == -ECONNRESET, "the first viewer too: -ECONNRESET (%s)", tr_live_client_errmsg(v.c));
	viewer_free(&v);
	errno = 0;
	struct live_client *c4 = tr_live_client_connect(rl.live_host, (uint16_t)rl.live_port, 5000,
						     err, sizeof(err));
	ok(c4 == NULL && errno == ECONNREFUSED, "connecting to the stopped relay: ECONNREFUSED (%s)",
	   err);
	tr_live_client_free(c4);
}

/* ------------------------------------------------------------ 4. timeouts */

static void test_timeout(void)
{
	/* a listening socket nobody accepts on: the kernel completes the TCP
	 * handshake, nobody answers CONNECT */
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&a, &al)) {
		ok(0, "a listening socket (%s)", strerror(errno));
		return;
	}
	char err[256] = "";
	int64_t t0 = tr_mono_ms();
	errno = 0;
	struct live_client *c = tr_live_client_connect("127.0.0.1", ntohs(a.sin_port), 400, err,
						    sizeof(err));
	int e = errno;
	int64_t el = tr_mono_ms() - t0;
	ok(c == NULL && e == ETIMEDOUT && el >= 399 && el < 1400,
	   "a relay that never answers: ETIMEDOUT after %lld ms (timeout 400 ms): %s",
	   (long long)el, err);
	tr_live_client_free(c);
	close(l);

}

/* A relay of one connection on a listening socket: accepts, answers
 * CONNECT and CREATE_SESSION, then waits for the client to close. */
static void *hello_server(void *arg)
{
	int l = *(int *)arg;
	int fd = accept(l, NULL, NULL);
	if (fd < 0)
		return NULL;
	struct script s = { .n = 0 };
	s_hello(&s);
	uint8_t b[64];
	int64_t end = tr_mono_ms() + 5000;
	/* CONNECT (36 bytes) and its reply, CREATE_SESSION (16) and its */
	if (!tr_net_read_full(fd, b, 36, end) && !tr_net_write_full(fd, s.b, 20, end) &&
	    !tr_net_read_full(fd, b, 16, end))
		tr_net_write_full(fd, s.b + 20, 4, end);
	tr_net_wait(fd, POLLIN, end);
	close(fd);
	return NULL;
}

static void test_ipv6(void)
{
	int l = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&a, &al)) {
		skip("no IPv6 loopback here");
		if (l >= 0)
			close(l);
		return;
	}
	pthread_t th;
	if (pthread_create(&th, NULL, hello_server, &l)) {
		ok(0, "a thread for the IPv6 relay");
		close(l);
		return;
	}
	char url[64], err[256] = "";
	struct live_url u;
	snprintf(url, sizeof(url), "net://[::1]:%u/session/s", ntohs(a.sin6_port));
	struct live_client *c = NULL;
	if (tr_live_url_parse(url, &u, err, sizeof(err)) == 0)
		c = tr_live_client_connect(u.relay, u.port, 5000, err, sizeof(err));
	ok(c && tr_live_client_viewer_id(c) == 77, "%s: connected over IPv6 (%s)", url, c ? "" : err);
	tr_live_client_free(c);
	pthread_join(th, NULL);
	close(l);
}

/* --------------------------------------------------- lttng-relayd (e2e) */

/* `--lttng URL SECS`: what the e2e test checks, one fact a line. */
static int lttng_check(const char *url, int secs)
{
	struct live_url u;
	char err[512];
	if (tr_live_url_parse(url, &u, err, sizeof(err)) || u.kind != LIVE_URL_HOST_SESSION) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	int64_t deadline = tr_mono_ms() + secs * 1000;
	struct live_client *c = tr_live_client_connect(u.relay, u.port, 5000, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "connect: %s\n", err);
		return 1;
	}
	printf("connected: viewer %llu, protocol 2.%u\n",
	       (unsigned long long)tr_live_client_viewer_id(c), tr_live_client_minor(c));
	struct live_session_info *ss = NULL, me = { 0 };
	size_t n = 0;
	bool found = false;
	while (!found && tr_mono_ms() < deadline) {
		if (tr_live_client_list(c, &ss, &n)) {
			fprintf(stderr, "list: %s\n", tr_live_client_errmsg(c));
			return 1;
		}
		for (size_t i = 0; i < n && !found; i++)
			if (tr_live_url_matches(&u, &ss[i]) && ss[i].streams > 0) {
				me = ss[i];
				found = true;
			}
		free(ss);
		if (!found)
			poll(NULL, 0, 100);
	}
	if (!found) {
		fprintf(stderr, "list: no session %s of host %s with streams\n", u.session, u.hostname);
		return 1;
	}
	printf("listed: host %s session %s live_timer %u streams %u\n", me.hostname, me.name,
	       me.live_timer, me.streams);
	struct live_stream_info *st = NULL;
	if (tr_live_client_attach(c, me.id, true, &st, &n)) {
		fprintf(stderr, "attach: %s\n", tr_live_client_errmsg(c));
		return 1;
	}
	struct viewer v = { .c = c, .session = me.id };
	size_t nmeta = 0;
	for (size_t i = 0; i < n; i++)
		nmeta += st[i].metadata;
	printf("attached: %zu streams, %zu metadata\n", n, nmeta);
	add_streams(&v, st, n);
	while (!v.n && tr_mono_ms() < deadline) {
		bool hup;
		if (tr_live_client_new_streams(c, me.id, &st, &n, &hup)) {
			fprintf(stderr, "new streams: %s\n", tr_live_client_errmsg(c));
			return 1;
		}
		add_streams(&v, st, n);
	}
	/* metadata: until some came and then nothing new */
	while (tr_mono_ms() < deadline) {
		size_t had = v.meta.n;
		if (read_metadata(&v) < 0) {
			fprintf(stderr, "metadata: %s\n", tr_live_client_errmsg(c));
			return 1;
		}
		if (v.meta.n && v.meta.n == had)
			break;
		poll(NULL, 0, 50);
	}
	char *text = NULL;
	size_t tl = 0;
	if (v.meta.n >= 4 && (get_le32(v.meta.p) == 0x75D11D57 || get_be32(v.meta.p) == 0x75D11D57))
		text = tr_ctf_metadata_unpack(v.meta.p, v.meta.n, "metadata", &tl, err, sizeof(err));
	else if (v.meta.n)
		text = strndup((char *)v.meta.p, tl = v.meta.n);
	struct trawl_ctf_trace *t = text ? trawl_ctf_metadata_parse(text, tl, err, sizeof(err)) : NULL;
	size_t nev = 0;
	for (size_t i = 0; t && i < t->nstreams; i++)
		nev += t->streams[i]->nevents;
	printf("metadata: %zu bytes, %s, %zu event classes\n", v.meta.n,
	       t ? "parses" : "does not parse", nev);
	if (!t)
		fprintf(stderr, "metadata: %s\n", err);
	trawl_ctf_trace_free(t);
	free(text);
	/* the first packet of any data stream */
	bool got = false;
	while (!got && tr_mono_ms() < deadline) {
		for (size_t i = 0; i < v.n && !got; i++) {
			struct live_index ix;
			if (v.streams[i].hup)
				continue;
			if (tr_live_client_next_index(c, v.streams[i].info.id, &ix)) {
				fprintf(stderr, "next index: %s\n", tr_live_client_errmsg(c));
				return 1;
			}
			if (ix.flags & LIVE_FLAG_NEW_METADATA)
				read_metadata(&v);
			if (ix.flags & LIVE_FLAG_NEW_STREAM) {
				bool hup;
				if (!tr_live_client_new_streams(c, me.id, &st, &n, &hup))
					add_streams(&v, st, n);
			}
			if (ix.status == LIVE_INDEX_HUP)
				v.streams[i].hup = true;
			if (ix.status != LIVE_INDEX_OK)
				continue;
			uint32_t len = (uint32_t)(ix.packet_size / 8), pst, pfl;
			uint8_t *b = malloc(len);
			if (!b || tr_live_client_packet(c, v.streams[i].info.id, ix.offset, len, b, &pst,
						     &pfl)) {
				fprintf(stderr, "packet: %s\n", tr_live_client_errmsg(c));
				return 1;
			}
			if (pst == LIVE_PACKET_OK) {
				printf("packet: %u bytes, content %llu bits, magic %s\n", len,
				       (unsigned long long)ix.content_size,
				       len >= 4 && get_le32(b) == 0xC1FC1FC1 ? "ok" : "wrong");
				got = true;
			}
			free(b);
		}
		if (!got)
			poll(NULL, 0, 50);
	}
	if (!got)
		fprintf(stderr, "packet: none within %d s\n", secs);
	int r = tr_live_client_detach(c, me.id);
	printf("detach: %s\n", r ? tr_live_client_errmsg(c) : "ok");
	viewer_free(&v);
	return got && !r ? 0 : 1;
}

static int free_port(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(l, (struct sockaddr *)&a, &al))
		return 1;
	printf("%u\n", ntohs(a.sin_port));
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--free-port"))
		return free_port();
	if (argc == 3 && !strcmp(argv[1], "--connect")) {
		struct live_url u;
		char err[512];
		if (tr_live_url_parse(argv[2], &u, err, sizeof(err)))
			return 2;
		struct live_client *c = tr_live_client_connect(u.relay, u.port, 1000, err, sizeof(err));
		tr_live_client_free(c);
		return c ? 0 : 1;
	}
	if (argc == 4 && !strcmp(argv[1], "--lttng"))
		return lttng_check(argv[2], atoi(argv[3]));
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmp, sizeof(tmp), "%s/test-live-client.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_urls();
	test_scripted();
	test_timeout();
	test_ipv6();
	test_relay();
	if (!tap_fail)
		tap_rm_tree(tmp);
	else
		printf("# files kept in %s\n", tmp);
	return done_testing();
}
