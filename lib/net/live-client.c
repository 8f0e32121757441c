/* SPDX-License-Identifier: MIT */
/*
 * lib/net/live-client.c - a viewer of the LTTng live protocol 2.4
 * (live-client.h). Each call sends one request and reads its reply: a
 * fixed part, checked, then the variable part its counts announce, read
 * entry by entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/auth.h"
#include "net/live-client.h"
#include "net/relay-proto.h"	/* tr_net_split_addr */
#include "net/sock.h"
#include "util/escape.h"
#include "util/clock.h"

struct live_client {
	int fd;
	int timeout_ms;
	int broken;			/* the error that broke the connection, or 0 */
	uint64_t viewer_id;
	uint32_t minor;
	int64_t deadline;		/* of the call under way */
	char err[320];
};

/* Sets the message; returns -e. */
__attribute__((format(printf, 3, 4)))
static int fail(struct live_client *c, int e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -e;
}

/* A transport or protocol error of cmd: the connection is out of step. */
static int broke(struct live_client *c, uint32_t cmd, int e)
{
	c->broken = -e;
	if (e == -ETIMEDOUT)
		return fail(c, ETIMEDOUT, "live relay: no reply to %s within %d ms",
			    tr_live_cmd_name(cmd), c->timeout_ms);
	if (e == -ECONNRESET)
		return fail(c, ECONNRESET, "live relay: connection closed (%s)",
			    tr_live_cmd_name(cmd));
	return fail(c, -e, "live relay: %s: %s", tr_live_cmd_name(cmd), strerror(-e));
}

/* A reply that does not fit the protocol: the message, and broken. */
__attribute__((format(printf, 3, 4)))
static int bad(struct live_client *c, uint32_t cmd, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	c->broken = EPROTO;
	return fail(c, EPROTO, "live relay: bad %s reply: %s", tr_live_cmd_name(cmd), what);
}

/* Sends the request cmd with its payload; starts the call's deadline. */
static int request(struct live_client *c, uint32_t cmd, const uint8_t *payload, size_t len)
{
	if (c->broken)
		return fail(c, c->broken, "live relay: connection unusable after an earlier error (%s)",
			    strerror(c->broken));
	uint8_t b[LIVE_REQ_HDR + LIVE_REQ_MAX];
	put_be64(b, len);
	put_be32(b + 8, cmd);
	put_be32(b + 12, 0);
	if (len)
		memcpy(b + LIVE_REQ_HDR, payload, len);
	c->deadline = tr_mono_ms() + c->timeout_ms;
	int ret = tr_net_write_full(c->fd, b, LIVE_REQ_HDR + len, c->deadline);
	return ret ? broke(c, cmd, ret) : 0;
}

static int recv_exact(struct live_client *c, uint32_t cmd, void *buf, size_t n)
{
	int ret = tr_net_read_full(c->fd, buf, n, c->deadline);
	return ret ? broke(c, cmd, ret) : 0;
}

/* A request whose payload is one u64 id. */
static int request_id(struct live_client *c, uint32_t cmd, uint64_t id)
{
	uint8_t p[8];
	put_be64(p, id);
	return request(c, cmd, p, sizeof(p));
}

/* A NUL-padded fixed array of n bytes into out (n + 1 bytes). */
static void get_str(char *out, const uint8_t *in, size_t n)
{
	size_t l = strnlen((const char *)in, n);
	memcpy(out, in, l);
	out[l] = 0;
}

/* ---------------------------------------------------------------- connect */

/*
 * The first reply of cmd, n bytes of it in b: trawl's refusal of a viewer
 * as it connects (live-proto.h, LIVE_REFUSED)? Then its reason is read
 * (what comes of it) and the message says it: -errno. 0 when b is no
 * refusal.
 */
static int refused(struct live_client *c, uint32_t cmd, const uint8_t *b, size_t n)
{
	if (n < 12 || get_be32(b) != LIVE_REFUSED || (cmd == LIVE_CONNECT && get_be32(b + 8)))
		return 0;
	uint8_t r[LIVE_REFUSED_LEN];
	memcpy(r, b, n);
	memset(r + n, 0, sizeof(r) - n);
	if (tr_net_read_full(c->fd, r + n, sizeof(r) - n, c->deadline) != 0)
		memset(r + n, 0, sizeof(r) - n);	/* the reason, if it came */
	char reason[257];
	get_str(reason, r + 20, 256);
	tr_escape_ctl(reason, sizeof(reason));
	uint32_t e = get_be32(r + 4);
	if (!e || e > 4095)
		e = EAGAIN;
	c->broken = (int)e;
	return fail(c, (int)e, "live relay refused the viewer: %s",
		    *reason ? reason : "(no reason given)");
}


/* With a credential (TRAWL_SECRET_FILE: the viewer key or the cluster
 * secret, docs/auth.md), proves it to the relay before CONNECT: 0, or
 * -errno with the message set (EACCES: refused, and why). A relay that
 * asks no proof says so, and the viewer goes on. */
static int prove(struct live_client *c)
{
	const char *file = getenv("TRAWL_SECRET_FILE");
	if (!file || !*file)
		return 0;
	struct auth_cred cred;
	char why[300];
	int ret = tr_auth_ready(why, sizeof(why));
	if (!ret)
		ret = tr_auth_load(file, &cred, why, sizeof(why));
	if (ret)
		return fail(c, -ret, "live relay: secret file %s", why);
	if (cred.kind == AUTH_NODE) {
		tr_auth_wipe(&cred);
		return fail(c, EACCES, "live relay: secret file %s: a node's key, which cannot "
			    "read (the viewer key or the cluster secret is needed)", file);
	}
	uint8_t b[LIVE_AUTH_REPLY_LEN], p[68], rnonce[AUTH_NONCE_LEN];
	if ((ret = request(c, LIVE_TRAWL_CHALLENGE, NULL, 0)) ||
	    (ret = recv_exact(c, LIVE_TRAWL_CHALLENGE, b, LIVE_CHALLENGE_REPLY_LEN)) ||
	    (ret = refused(c, LIVE_TRAWL_CHALLENGE, b, LIVE_CHALLENGE_REPLY_LEN)))
		goto out;
	uint32_t st = get_be32(b);
	/* the relay proves the same secret in return (docs/auth.md): one
	 * that needs no proof is not the relay of this secret */
	if (st == LIVE_AUTH_NONE) {
		c->broken = EACCES;
		ret = fail(c, EACCES, "live relay did not prove it holds the secret of %s: it "
			   "asked no proof (a port without authentication, such as --live-open, or "
			   "not the relay of this secret); give no secret file to read it", file);
		goto out;
	}
	if (st != LIVE_AUTH_OK || get_be32(b + 4) != RELAY_AUTH_VERSION) {
		ret = bad(c, LIVE_TRAWL_CHALLENGE, "status %u, version %u", st, get_be32(b + 4));
		goto out;
	}
	memcpy(rnonce, b + 8, AUTH_NONCE_LEN);
	put_be32(p, (uint32_t)cred.kind);
	if ((ret = tr_auth_nonce(p + 4)) < 0) {
		ret = fail(c, -ret, "live relay: no random bytes: %s", strerror(-ret));
		goto out;
	}
	tr_auth_mac(cred.key, AUTH_ROLE_VIEWER, (uint32_t)cred.kind, rnonce, p + 4, NULL, 0, p + 36);
	if ((ret = request(c, LIVE_TRAWL_AUTH, p, sizeof(p))) ||
	    (ret = recv_exact(c, LIVE_TRAWL_AUTH, b, LIVE_AUTH_REPLY_LEN)))
		goto out;
	st = get_be32(b);
	if (st == LIVE_AUTH_REFUSED) {
		char reason[257];
		get_str(reason, b + 4, 256);
		tr_escape_ctl(reason, sizeof(reason));
		c->broken = EACCES;
		ret = fail(c, EACCES, "live relay refused the viewer: %s", reason);
	} else if (st != LIVE_AUTH_OK) {
		ret = bad(c, LIVE_TRAWL_AUTH, "status %u", st);
	} else if (!tr_auth_relay_check(cred.key, AUTH_ROLE_VIEWER, (uint32_t)cred.kind, rnonce,
					p + 4, NULL, 0, b + 4 + 256)) {
		c->broken = EACCES;
		ret = fail(c, EACCES, "live relay did not prove it holds the secret of %s: its "
			   "proof is %s", file, b[4 + 256] || memcmp(b + 4 + 256, b + 4 + 257, 31) ?
			   "wrong" : "missing");
	}
out:
	tr_auth_wipe(&cred);
	return ret;
}

struct live_client *tr_live_client_from_fd(int fd, int timeout_ms, char *err, size_t errlen)
{
	struct live_client *c = calloc(1, sizeof(*c));
	int ret;
	if (!c) {
		close(fd);
		tr_seterr(err, errlen, ENOMEM, "live relay: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->fd = fd;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : LIVE_CLIENT_TIMEOUT_MS;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		ret = fail(c, errno, "live relay: %s", strerror(errno));
		goto err;
	}

	if ((ret = prove(c)))
		goto err;
	uint8_t b[20] = { 0 };
	put_be32(b + 8, LIVE_MAJOR);
	put_be32(b + 12, LIVE_MINOR);
	put_be32(b + 16, LIVE_CONNECT_COMMAND);
	if ((ret = request(c, LIVE_CONNECT, b, sizeof(b))) ||
	    (ret = recv_exact(c, LIVE_CONNECT, b, sizeof(b))) ||
	    (ret = refused(c, LIVE_CONNECT, b, sizeof(b))))
		goto err;
	uint32_t major = get_be32(b + 8), minor = get_be32(b + 12);
	if (major != LIVE_MAJOR || minor < LIVE_MINOR) {
		ret = bad(c, LIVE_CONNECT, "the relay speaks the live protocol %u.%u, not %d.%d",
			  major, minor, LIVE_MAJOR, LIVE_MINOR);
		goto err;
	}
	c->viewer_id = get_be64(b);
	c->minor = LIVE_MINOR;

	if ((ret = request(c, LIVE_CREATE_SESSION, NULL, 0)) ||
	    (ret = recv_exact(c, LIVE_CREATE_SESSION, b, 4)))
		goto err;
	uint32_t st = get_be32(b);
	if (st == LIVE_CREATE_ERR) {
		ret = fail(c, EIO, "live relay: it refused to create a viewer session");
		goto err;
	}
	if (st != LIVE_CREATE_OK) {
		ret = bad(c, LIVE_CREATE_SESSION, "status %u", st);
		goto err;
	}
	c->err[0] = 0;
	return c;
err:
	tr_seterr(err, errlen, -ret, "%s", c->err);
	tr_live_client_free(c);
	errno = -ret;
	return NULL;
}

/*
 * Why a server closed a viewer's connection at its first request: asks it,
 * on a connection of its own, for trawl's authentication challenge. 1: it
 * answered it (a trawl relay's live port that requires a credential), 0:
 * it did not (closed again, or no such reply: not a live port), -1: it
 * could not be asked (no connection within the deadline).
 */
static int closed_why(const char *host, unsigned port, int64_t deadline, char *why,
		      size_t whylen)
{
	char gai[128];
	int fd = tr_net_connect(host, port, deadline, gai, sizeof(gai));
	if (fd < 0)
		return -1;
	struct live_client *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -1;
	}
	int64_t left = deadline - tr_mono_ms();
	c->fd = fd;
	c->timeout_ms = left > 0 ? (int)left : 1;
	int fl = fcntl(fd, F_GETFL), k = 0;
	bool got = false;
	uint8_t b[LIVE_CHALLENGE_REPLY_LEN];
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		k = -1;
	else if (!request(c, LIVE_TRAWL_CHALLENGE, NULL, 0) &&
		 !recv_exact(c, LIVE_TRAWL_CHALLENGE, b, sizeof(b)))
		got = true, k = get_be32(b) == LIVE_AUTH_OK && get_be32(b + 4) == RELAY_AUTH_VERSION;
	if (got && k == 0 && refused(c, LIVE_TRAWL_CHALLENGE, b, sizeof(b)) < 0) {
		k = 2;	/* refused at once again, and told why this time */
		snprintf(why, whylen, "%s", c->err);
	}
	tr_live_client_free(c);
	return k;
}

struct live_client *tr_live_client_connect(const char *host, uint16_t port, int timeout_ms,
					char *err, size_t errlen)
{
	unsigned p = port ? port : LIVE_PORT;
	int t = timeout_ms > 0 ? timeout_ms : LIVE_CLIENT_TIMEOUT_MS;
	int64_t deadline = tr_mono_ms() + t;
	char gai[128] = "";
	int fd = tr_net_connect(host, p, deadline, gai, sizeof(gai));
	if (fd < 0) {
		if (*gai)
			tr_seterr(err, errlen, -fd, "live relay %s: %s", host, gai);
		else
			tr_seterr(err, errlen, -fd, "live relay %s port %u: cannot connect: %s", host, p,
			       strerror(-fd));
		errno = -fd;
		return NULL;
	}
	/* the handshake within what is left of timeout_ms */
	int64_t left = deadline - tr_mono_ms();
	struct live_client *c = tr_live_client_from_fd(fd, left > 0 ? (int)left : 1, err, errlen);
	if (c) {
		c->timeout_ms = t;
		return c;
	}
	int e = errno;
	if (e == ECONNRESET && strstr(err, "connection closed (")) {
		/* closed without a word: a relay's live port that wants a
		 * credential, or no live port at all (the data port) */
		char why[320] = "";
		int k = closed_why(host, p, deadline, why, sizeof(why));
		if (k == 2)
			tr_seterr(err, errlen, EAGAIN, "%s", why);
		else if (k == 1)
			tr_seterr(err, errlen, EACCES, "live relay %s port %u requires a credential: it "
				  "closed the connection of a viewer without one (give the viewer "
				  "key or the cluster secret: --secret-file, docs/auth.md)", host, p);
		else if (k == 0)
			tr_seterr(err, errlen, EPROTO, "%s port %u is not a live port: it closed the "
				  "connection at the viewer's first request (a relay's data port? its "
				  "live port is 5344 unless --live says otherwise)", host, p);
		e = k == 2 ? EAGAIN : k == 1 ? EACCES : k == 0 ? EPROTO : e;
	}
	errno = e;
	return NULL;
}

const char *tr_live_client_errmsg(const struct live_client *c)
{
	return c->err;
}

uint64_t tr_live_client_viewer_id(const struct live_client *c)
{
	return c->viewer_id;
}

uint32_t tr_live_client_minor(const struct live_client *c)
{
	return c->minor;
}

void tr_live_client_free(struct live_client *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

/* --------------------------------------------------------------- sessions */

int tr_live_client_list(struct live_client *c, struct live_session_info **out, size_t *n)
{
	struct live_session_info *v = NULL;
	size_t have = 0, cap = 0;
	uint8_t b[LIVE_SESSION_LEN];
	int ret;
	*out = NULL;
	*n = 0;
	if ((ret = request(c, LIVE_LIST_SESSIONS, NULL, 0)) ||
	    (ret = recv_exact(c, LIVE_LIST_SESSIONS, b, 4)))
		return ret;
	uint32_t count = get_be32(b);
	if (count > LIVE_CLIENT_SESSIONS_MAX)
		return bad(c, LIVE_LIST_SESSIONS, "%u sessions (at most %d taken)", count,
			   LIVE_CLIENT_SESSIONS_MAX);
	for (uint32_t i = 0; i < count; i++) {
		if ((ret = recv_exact(c, LIVE_LIST_SESSIONS, b, LIVE_SESSION_LEN)))
			goto err;
		if (tr_grow(&v, &cap, have, sizeof(*v))) {
			/* the rest of the reply is not read: out of step */
			c->broken = ENOMEM;
			ret = fail(c, ENOMEM, "live relay: out of memory");
			goto err;
		}
		struct live_session_info *s = &v[have++];
		s->id = get_be64(b);
		s->live_timer = get_be32(b + 8);
		s->clients = get_be32(b + 12);
		s->streams = get_be32(b + 16);
		get_str(s->hostname, b + 20, LIVE_HOST_MAX);
		get_str(s->name, b + 20 + LIVE_HOST_MAX, LIVE_NAME_MAX);
	}
	*out = v;
	*n = have;
	return 0;
err:
	free(v);
	return ret;
}

/* Reads count stream entries of cmd's reply into *streams, *n. */
static int read_streams(struct live_client *c, uint32_t cmd, uint32_t count,
			struct live_stream_info **streams, size_t *n)
{
	struct live_stream_info *v = NULL;
	size_t have = 0, cap = 0;
	uint8_t b[LIVE_STREAM_LEN];
	int ret;
	if (count > LIVE_CLIENT_STREAMS_MAX)
		return bad(c, cmd, "%u streams (at most %d taken)", count, LIVE_CLIENT_STREAMS_MAX);
	for (uint32_t i = 0; i < count; i++) {
		if ((ret = recv_exact(c, cmd, b, LIVE_STREAM_LEN)))
			goto err;
		uint32_t meta = get_be32(b + 16);
		if (meta > 1) {
			ret = bad(c, cmd, "stream %u: metadata flag %u", i, meta);
			goto err;
		}
		if (tr_grow(&v, &cap, have, sizeof(*v))) {
			c->broken = ENOMEM;
			ret = fail(c, ENOMEM, "live relay: out of memory");
			goto err;
		}
		struct live_stream_info *s = &v[have++];
		s->id = get_be64(b);
		s->ctf_trace_id = get_be64(b + 8);
		s->metadata = meta == 1;
		get_str(s->path, b + 20, LIVE_PATH_MAX);
		get_str(s->channel, b + 20 + LIVE_PATH_MAX, LIVE_NAME_MAX);
	}
	*streams = v;
	*n = have;
	return 0;
err:
	free(v);
	return ret;
}

static const char *attach_status(uint32_t st, int *e)
{
	switch (st) {
	case LIVE_ATTACH_ALREADY: *e = EBUSY; return "another viewer is attached";
	case LIVE_ATTACH_UNK: *e = ENOENT; return "unknown session";
	case LIVE_ATTACH_NOT_LIVE: *e = EOPNOTSUPP; return "not a live session";
	case LIVE_ATTACH_SEEK_ERR: *e = EINVAL; return "seek refused";
	case LIVE_ATTACH_NO_SESSION: *e = ENOTCONN; return "no viewer session";
	}
	*e = EPROTO;
	return NULL;
}

int tr_live_client_attach(struct live_client *c, uint64_t session_id, bool from_beginning,
		       struct live_stream_info **streams, size_t *n)
{
	return tr_live_client_attach_seek(c, session_id,
					  from_beginning ? LIVE_SEEK_BEGINNING : LIVE_SEEK_LAST,
					  streams, n);
}

int tr_live_client_attach_seek(struct live_client *c, uint64_t session_id, uint32_t seek,
			       struct live_stream_info **streams, size_t *n)
{
	uint8_t b[20] = { 0 };
	int ret;
	*streams = NULL;
	*n = 0;
	put_be64(b, session_id);
	put_be32(b + 16, seek);
	if ((ret = request(c, LIVE_ATTACH_SESSION, b, sizeof(b))) ||
	    (ret = recv_exact(c, LIVE_ATTACH_SESSION, b, 8)))
		return ret;
	uint32_t st = get_be32(b), count = get_be32(b + 4);
	if (st == LIVE_ATTACH_OK)
		return read_streams(c, LIVE_ATTACH_SESSION, count, streams, n);
	int e;
	const char *what = attach_status(st, &e);
	if (!what)
		return bad(c, LIVE_ATTACH_SESSION, "status %u", st);
	if (count)
		return bad(c, LIVE_ATTACH_SESSION, "status %u with %u streams", st, count);
	return fail(c, e, "live relay: cannot attach to session %llu: %s (status %u)",
		    (unsigned long long)session_id, what, st);
}

int tr_live_client_new_streams(struct live_client *c, uint64_t session_id,
			    struct live_stream_info **streams, size_t *n, bool *hup)
{
	uint8_t b[8];
	int ret;
	*streams = NULL;
	*n = 0;
	*hup = false;
	if ((ret = request_id(c, LIVE_GET_NEW_STREAMS, session_id)) ||
	    (ret = recv_exact(c, LIVE_GET_NEW_STREAMS, b, 8)))
		return ret;
	uint32_t st = get_be32(b), count = get_be32(b + 4);
	if (st == LIVE_NEW_STREAMS_OK)
		return read_streams(c, LIVE_GET_NEW_STREAMS, count, streams, n);
	if (st != LIVE_NEW_STREAMS_NO_NEW && st != LIVE_NEW_STREAMS_HUP &&
	    st != LIVE_NEW_STREAMS_ERR)
		return bad(c, LIVE_GET_NEW_STREAMS, "status %u", st);
	if (count)
		return bad(c, LIVE_GET_NEW_STREAMS, "status %u with %u streams", st, count);
	if (st == LIVE_NEW_STREAMS_ERR)
		return fail(c, EIO, "live relay: no new streams of session %llu: error status",
			    (unsigned long long)session_id);
	*hup = st == LIVE_NEW_STREAMS_HUP;
	return 0;
}

int tr_live_client_detach(struct live_client *c, uint64_t session_id)
{
	uint8_t b[4];
	int ret;
	if ((ret = request_id(c, LIVE_DETACH_SESSION, session_id)) ||
	    (ret = recv_exact(c, LIVE_DETACH_SESSION, b, 4)))
		return ret;
	switch (get_be32(b)) {
	case LIVE_DETACH_OK:
		return 0;
	case LIVE_DETACH_UNK:
		return fail(c, ENOENT, "live relay: not attached to session %llu",
			    (unsigned long long)session_id);
	case LIVE_DETACH_ERR:
		return fail(c, EIO, "live relay: detaching from session %llu: error status",
			    (unsigned long long)session_id);
	}
	return bad(c, LIVE_DETACH_SESSION, "status %u", get_be32(b));
}

/* ---------------------------------------------------------------- reading */

int tr_live_client_metadata(struct live_client *c, uint64_t stream_id, uint8_t **buf, size_t *len)
{
	uint8_t b[12];
	int ret;
	*buf = NULL;
	*len = 0;
	if ((ret = request_id(c, LIVE_GET_METADATA, stream_id)) ||
	    (ret = recv_exact(c, LIVE_GET_METADATA, b, 12)))
		return ret;
	uint64_t n = get_be64(b);
	uint32_t st = get_be32(b + 8);
	if (st != LIVE_METADATA_OK && st != LIVE_METADATA_NO_NEW && st != LIVE_METADATA_ERR)
		return bad(c, LIVE_GET_METADATA, "status %u", st);
	if (st != LIVE_METADATA_OK && n)
		return bad(c, LIVE_GET_METADATA, "status %u with %llu bytes", st,
			   (unsigned long long)n);
	if (st == LIVE_METADATA_ERR)
		return fail(c, ENOENT, "live relay: no metadata stream %llu",
			    (unsigned long long)stream_id);
	if (n > LIVE_CLIENT_METADATA_MAX)
		return bad(c, LIVE_GET_METADATA, "%llu bytes (at most %u taken)",
			   (unsigned long long)n, LIVE_CLIENT_METADATA_MAX);
	if (st == LIVE_METADATA_NO_NEW || n == 0)
		return 0;
	/* grown as the bytes come: a length alone allocates little */
	uint8_t *p = NULL;
	size_t have = 0, cap = 0;
	while (have < n) {
		if (have == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			if (nc > n)
				nc = (size_t)n;
			uint8_t *np = realloc(p, nc);
			if (!np) {
				free(p);
				c->broken = ENOMEM;
				return fail(c, ENOMEM, "live relay: out of memory");
			}
			p = np;
			cap = nc;
		}
		if ((ret = recv_exact(c, LIVE_GET_METADATA, p + have, cap - have))) {
			free(p);
			return ret;
		}
		have = cap;
	}
	*buf = p;
	*len = (size_t)n;
	return 1;
}

int tr_live_client_next_index(struct live_client *c, uint64_t stream_id, struct live_index *ix)
{
	uint8_t b[LIVE_INDEX_LEN];
	int ret;
	memset(ix, 0, sizeof(*ix));
	if ((ret = request_id(c, LIVE_GET_NEXT_INDEX, stream_id)) ||
	    (ret = recv_exact(c, LIVE_GET_NEXT_INDEX, b, sizeof(b))))
		return ret;
	ix->offset = get_be64(b);
	ix->packet_size = get_be64(b + 8);
	ix->content_size = get_be64(b + 16);
	ix->timestamp_begin = get_be64(b + 24);
	ix->timestamp_end = get_be64(b + 32);
	ix->events_discarded = get_be64(b + 40);
	ix->stream_id = get_be64(b + 48);
	ix->status = get_be32(b + 56);
	ix->flags = get_be32(b + 60);
	if (ix->status < LIVE_INDEX_OK || ix->status > LIVE_INDEX_EOF)
		return bad(c, LIVE_GET_NEXT_INDEX, "status %u", ix->status);
	if (ix->status != LIVE_INDEX_OK)
		return 0;
	/* an OK of no packet (both sizes 0): only its flags count (trawl's
	 * relay tells of new streams so when the stream has nothing new) */
	if (ix->packet_size == 0 && ix->content_size == 0)
		return 0;
	uint64_t bytes = ix->packet_size / 8;
	if (ix->packet_size == 0 || ix->packet_size % 8 || bytes > UINT32_MAX ||
	    ix->content_size > ix->packet_size || ix->offset > UINT64_MAX - bytes)
		return bad(c, LIVE_GET_NEXT_INDEX,
			   "stream %llu: packet of %llu bits (content %llu) at offset %llu",
			   (unsigned long long)stream_id, (unsigned long long)ix->packet_size,
			   (unsigned long long)ix->content_size, (unsigned long long)ix->offset);
	return 0;
}

int tr_live_client_packet(struct live_client *c, uint64_t stream_id, uint64_t offset, uint32_t len,
		       uint8_t *buf, uint32_t *status, uint32_t *flags)
{
	uint8_t b[20];
	int ret;
	if (status)
		*status = 0;
	if (flags)
		*flags = 0;
	put_be64(b, stream_id);
	put_be64(b + 8, offset);
	put_be32(b + 16, len);
	if ((ret = request(c, LIVE_GET_PACKET, b, 20)) ||
	    (ret = recv_exact(c, LIVE_GET_PACKET, b, 12)))
		return ret;
	uint32_t st = get_be32(b), n = get_be32(b + 4);
	if (st < LIVE_PACKET_OK || st > LIVE_PACKET_EOF)
		return bad(c, LIVE_GET_PACKET, "status %u", st);
	if (st == LIVE_PACKET_OK ? n != len : n != 0)
		return bad(c, LIVE_GET_PACKET, "status %u with %u bytes (%u asked)", st, n, len);
	if (st == LIVE_PACKET_OK && n && (ret = recv_exact(c, LIVE_GET_PACKET, buf, n)))
		return ret;
	if (status)
		*status = st;
	if (flags)
		*flags = get_be32(b + 8);
	return 0;
}

/* ------------------------------------------------------------------- URLs */

int tr_live_url_parse(const char *url, struct live_url *u, char *err, size_t errlen)
{
	memset(u, 0, sizeof(*u));
	const char *p;
	if (!strncmp(url, "net://", 6))
		p = url + 6;
	else if (!strncmp(url, "net4://", 7))
		p = url + 7;
	else
		return tr_seterr(err, errlen, EINVAL,
			      "'%s': a live URL is net://RELAY[:PORT][/host/HOST/SESSION or /session/SESSION]",
			      url);
	/* the authority ends at the first '/' after any bracketed literal */
	const char *slash = p;
	if (*p == '[') {
		slash = strchr(p, ']');
		if (!slash)
			return tr_seterr(err, errlen, EINVAL, "'%s': '[' without ']'", url);
	}
	slash = strchr(slash, '/');
	size_t al = slash ? (size_t)(slash - p) : strlen(p);
	char auth[300];
	unsigned port;
	if (al == 0 || al >= sizeof(auth))
		return tr_seterr(err, errlen, EINVAL, "'%s': no relay address", url);
	memcpy(auth, p, al);
	auth[al] = 0;
	if (tr_net_split_addr(auth, u->relay, sizeof(u->relay), &port, LIVE_PORT) < 0)
		return tr_seterr(err, errlen, EINVAL,
			      "'%s': relay address '%s': expected HOST[:PORT] or [IPv6][:PORT]", url,
			      auth);
	u->port = (uint16_t)port;
	if (!slash || !slash[1]) {
		u->kind = LIVE_URL_RELAY;
		return 0;
	}
	const char *path = slash + 1, *s1 = strchr(path, '/');
	const char *host = NULL, *sess;
	size_t hl = 0;
	if (s1 && (size_t)(s1 - path) == 4 && !strncmp(path, "host", 4)) {
		host = s1 + 1;
		const char *s2 = strchr(host, '/');
		if (!s2)
			return tr_seterr(err, errlen, EINVAL, "'%s': expected /host/HOST/SESSION", url);
		hl = (size_t)(s2 - host);
		sess = s2 + 1;
		u->kind = LIVE_URL_HOST_SESSION;
	} else if (s1 && (size_t)(s1 - path) == 7 && !strncmp(path, "session", 7)) {
		sess = s1 + 1;
		u->kind = LIVE_URL_SESSION;
	} else {
		return tr_seterr(err, errlen, EINVAL,
			      "'%s': the path is /host/HOST/SESSION or /session/SESSION", url);
	}
	size_t sl = strlen(sess);
	if (host && (hl == 0 || hl >= sizeof(u->hostname)))
		return tr_seterr(err, errlen, EINVAL, "'%s': the host name must have 1 to %zu bytes",
			      url, sizeof(u->hostname) - 1);
	if (sl == 0 || sl >= sizeof(u->session) || memchr(sess, '/', sl))
		return tr_seterr(err, errlen, EINVAL,
			      "'%s': the session name must have 1 to %zu bytes, without '/'", url,
			      sizeof(u->session) - 1);
	if (host)
		memcpy(u->hostname, host, hl);
	memcpy(u->session, sess, sl);
	return 0;
}

bool tr_live_url_matches(const struct live_url *u, const struct live_session_info *s)
{
	switch (u->kind) {
	case LIVE_URL_HOST_SESSION:
		return !strcmp(u->session, s->name) && !strcmp(u->hostname, s->hostname);
	case LIVE_URL_SESSION:
		return !strcmp(u->session, s->name);
	case LIVE_URL_RELAY:
		break;
	}
	return false;
}
