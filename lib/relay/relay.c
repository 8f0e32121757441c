/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/relay.c - the relay (trawl/relay.h, docs/relay.md): the loop,
 * the connections, and the data side. Producers (trace writers on every
 * node) send their traces here; each is written to OUTPUT/SESSION/HOST/
 * TRACE/ as the same CTF trace a local recording gives (metadata, stream
 * files, index/), packet by packet as it comes, and live viewers (live.c)
 * read it from there while it grows.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "relay/relay-internal.h"
#include "net/relay-proto.h"

void tr_relay_log(struct trawl_relay *r, int level, const char *fmt, ...)
{
	if (!r->log)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->log(r->log_arg, level, msg);
}

struct rsession *tr_relay_session_by_id(struct trawl_relay *r, uint64_t id)
{
	for (struct rsession *s = r->sessions; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

/* ------------------------------------------------------------ buffers */

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 4096;
	while (n < need)
		n *= 2;
	uint8_t *b = realloc(*buf, n);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = n;
	return 0;
}

/* The events the loop waits for on c: input unless a viewer should not be
 * read now (level-triggered: waiting for it would spin), output while
 * replies wait. */
static void update_events(struct rconn *c)
{
	uint32_t want = (c->kind != RC_VIEWER || tr_live_wants_input(c) ? EPOLLIN : 0) |
			(c->outlen > c->outoff ? EPOLLOUT : 0);
	if (want == c->events)
		return;
	struct epoll_event ev = { .events = want, .data.ptr = c };
	if (epoll_ctl(c->r->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = want;
}

/* Sends what it can of c->out now; the rest when the socket has room. */
static void flush_out(struct rconn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			c->dead = true;
			return;
		}
		c->outoff += (size_t)n;
	}
	c->outoff = c->outlen = 0;
	if (c->closing)
		c->dead = true;
}

int tr_rconn_queue(struct rconn *c, const void *p, size_t n)
{
	if (c->outoff && c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	if (grow(&c->out, &c->outcap, c->outlen + n) < 0) {
		c->dead = true;
		return -ENOMEM;
	}
	memcpy(c->out + c->outlen, p, n);
	c->outlen += n;
	return 0;
}

/* Queues a WELCOME or an ACK: status (0 or -errno) and msg, cut to 255
 * bytes. */
static void queue_status(struct rconn *c, enum relay_type type, int status, const char *msg)
{
	uint8_t rep[RELAY_HDR_LEN + 4 + 256];
	size_t ml = strnlen(msg, 255) + 1;
	relay_put_hdr(rep, type, (uint32_t)(4 + ml));
	put_le32(rep + RELAY_HDR_LEN, (uint32_t)status);
	memcpy(rep + RELAY_HDR_LEN + 4, msg, ml - 1);
	rep[RELAY_HDR_LEN + 4 + ml - 1] = 0;
	tr_rconn_queue(c, rep, RELAY_HDR_LEN + 4 + ml);
}

/* ------------------------------------------------------------- traces */

static struct rsession *session_get(struct trawl_relay *r, const char *name, const char *host,
				   uint64_t live_us)
{
	for (struct rsession *s = r->sessions; s; s = s->next)
		if (strcmp(s->name, name) == 0 && strcmp(s->host, host) == 0)
			return s;
	struct rsession *s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(name)) || !(s->host = strdup(host))) {
		if (s)
			free(s->name);
		free(s);
		return NULL;
	}
	s->id = r->next_id++;
	s->live_timer_us = live_us;
	struct rsession **pp = &r->sessions;
	while (*pp)
		pp = &(*pp)->next;
	*pp = s;
	return s;
}

static void stream_free(struct rstream *st);

static void session_free(struct rsession *s)
{
	for (size_t i = 0; i < s->ntraces; i++) {
		struct rtrace *t = s->traces[i];
		for (size_t j = 0; j < t->nstreams; j++)
			stream_free(t->streams[j]);
		if (t->meta_fd >= 0)
			close(t->meta_fd);
		free(t->streams);
		free(t->name);
		free(t->dir);
		free(t);
	}
	free(s->traces);
	free(s->name);
	free(s->host);
	free(s);
}

void tr_relay_session_gc(struct trawl_relay *r)
{
	for (struct rsession **pp = &r->sessions; *pp;) {
		struct rsession *s = *pp;
		bool over = s->viewers == 0;
		for (size_t i = 0; over && i < s->ntraces; i++)
			over = s->traces[i]->closed;
		if (over) {
			*pp = s->next;
			session_free(s);
		} else {
			pp = &s->next;
		}
	}
}

static void stream_free(struct rstream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	if (st->idxfd >= 0)
		close(st->idxfd);
	free(st->name);
	free(st);
}

/* dir/name, malloc'd; NULL when out of memory. */
static char *path_of(const char *dir, const char *name)
{
	char *p;
	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* The producer is gone or said CLOSE: no more packets in any stream. */
static void trace_end(struct trawl_relay *r, struct rtrace *t)
{
	if (t->closed)
		return;
	t->closed = true;
	for (size_t i = 0; i < t->nstreams; i++)
		t->streams[i]->hup = true;
	/* the files stay open while viewers may read them */
	tr_live_wake(r, t->session);
}

/* CLOSE of a trace that got no metadata and no stream (a producer with no
 * event class, before issue 20's writers sent their metadata anyway):
 * its empty metadata file would make readers refuse the whole session,
 * and there is nothing to keep. Its directory goes, and its host's and
 * session's when it was all they held. */
static void trace_drop_empty(struct trawl_relay *r, struct rtrace *t)
{
	if (t->meta_len || t->nstreams)
		return;
	char *p = path_of(t->dir, "metadata"), *ix = path_of(t->dir, "index");
	if (p && ix && unlink(p) == 0 && rmdir(ix) == 0 && rmdir(t->dir) == 0) {
		tr_relay_log(r, LOG_INFO, "%s: complete without metadata or a stream: removed",
			     t->dir);
		strcpy(p, t->dir);
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(p, '/');
			if (slash)
				*slash = 0;
			if (!slash || rmdir(p) < 0)
				break;
		}
	}
	free(p);
	free(ix);
}

/* HELLO: a new trace, in a new directory. */
static int on_hello(struct rconn *c, const struct relay_msg *m, char *err, size_t errlen)
{
	if (m->u.hello.version != RELAY_VERSION)
		return tr_seterr(err, errlen, EPROTONOSUPPORT,
			      "protocol version %u, this relay speaks %u", m->u.hello.version,
			      RELAY_VERSION);
	if (strlen(m->u.hello.host) > RELAY_HOST_MAX)
		return tr_seterr(err, errlen, ENAMETOOLONG,
			      "host name longer than %d bytes (live viewers could not name it)",
			      RELAY_HOST_MAX);
	struct trawl_relay *r = c->r;
	char *dir = NULL, *meta = NULL;
	if (asprintf(&dir, "%s/%s/%s/%s", r->output, m->u.hello.session, m->u.hello.host,
		     m->u.hello.trace) < 0)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	char *parent = strdup(dir);
	int ret = parent ? 0 : -ENOMEM;
	if (parent) {
		*strrchr(parent, '/') = 0;
		ret = tr_mkdir_p(parent);
		free(parent);
	}
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "%s: %s", dir, strerror(-ret));
		free(dir);
		return ret;
	}
	/* a trace is never written over: another producer's, or an earlier
	 * recording's */
	if (mkdir(dir, 0777) < 0) {
		ret = tr_seterr(err, errlen, errno, "%s%s: %s", dir,
			     errno == EEXIST ? " exists (another producer, or an earlier recording "
					       "of this session)" : "",
			     errno == EEXIST ? "choose another session name" : strerror(errno));
		free(dir);
		return ret;
	}
	char *idx = NULL;
	struct rtrace *t = calloc(1, sizeof(*t));
	struct rsession *s = session_get(r, m->u.hello.session, m->u.hello.host,
					 m->u.hello.live_timer_us);
	struct rtrace **tv = s ? realloc(s->traces, (s->ntraces + 1) * sizeof(*tv)) : NULL;
	if (tv)
		s->traces = tv;
	if (!t || !tv || !(t->name = strdup(m->u.hello.trace)) || !(idx = path_of(dir, "index")) ||
	    !(meta = path_of(dir, "metadata"))) {
		ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	if (mkdir(idx, 0777) < 0) {
		ret = tr_seterr(err, errlen, errno, "%s: %s", idx, strerror(errno));
		goto err;
	}
	t->meta_fd = open(meta, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
	if (t->meta_fd < 0) {
		ret = tr_seterr(err, errlen, errno, "%s: %s", meta, strerror(errno));
		goto err;
	}
	free(meta);
	free(idx);
	t->id = r->next_id++;
	t->dir = dir;
	t->session = s;
	if (m->u.hello.live_timer_us)
		s->live_timer_us = m->u.hello.live_timer_us;
	s->traces[s->ntraces++] = t;
	c->trace = t;
	tr_relay_log(r, LOG_INFO, "%s: %s/%s/%s: recording into %s", c->peer, m->u.hello.session,
		  m->u.hello.host, m->u.hello.trace, dir);
	return 0;
err:
	/* refused: nothing stays on the disk (an empty session is gc'd) */
	if (idx)
		rmdir(idx);
	free(meta);
	free(idx);
	if (t)
		free(t->name);
	free(t);
	rmdir(dir);
	free(dir);
	return ret;
}

static struct rstream *stream_by_handle(struct rtrace *t, uint32_t h)
{
	for (size_t i = 0; i < t->nstreams; i++)
		if (t->streams[i]->handle == h)
			return t->streams[i];
	return NULL;
}

static int on_stream(struct trawl_relay *r, struct rtrace *t, const struct relay_msg *m, char *err, size_t errlen)
{
	if (stream_by_handle(t, m->u.stream.handle))
		return tr_seterr(err, errlen, EPROTO, "STREAM: handle %u given twice",
			      m->u.stream.handle);
	for (size_t i = 0; i < t->nstreams; i++)
		if (strcmp(t->streams[i]->name, m->u.stream.name) == 0)
			return tr_seterr(err, errlen, EPROTO, "STREAM: file %s given twice",
				      m->u.stream.name);
	if (t->nstreams >= RELAY_STREAMS_MAX)
		return tr_seterr(err, errlen, EMFILE, "STREAM: more than %d streams in one trace",
			      RELAY_STREAMS_MAX);
	struct rstream *st = calloc(1, sizeof(*st));
	char *path = NULL, *spath = NULL;
	int ret;
	if (!st)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	st->fd = st->idxfd = -1;
	struct rstream **sv = realloc(t->streams, (t->nstreams + 1) * sizeof(*sv));
	if (sv)
		t->streams = sv;
	if (!sv || !(st->name = strdup(m->u.stream.name))) {
		ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	if (asprintf(&path, "%s/%s", t->dir, st->name) < 0) {
		path = NULL;
		ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	/* both files or neither: the stream's is removed when its index
	 * cannot be made */
	st->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (st->fd < 0) {
		ret = tr_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
		goto err;
	}
	spath = path;
	if (asprintf(&path, "%s/index/%s.idx", t->dir, st->name) < 0) {
		path = NULL;
		ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	st->idxfd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (st->idxfd < 0) {
		ret = tr_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
		goto err;
	}
	uint8_t ih[CTF_IDX_HEADER_LEN];
	ctf_index_put_header(ih);
	if ((ret = tr_write_all(st->idxfd, ih, sizeof(ih))) < 0) {
		ret = tr_seterr(err, errlen, -ret, "%s: %s", path, strerror(-ret));
		unlink(path);
		goto err;
	}
	free(path);
	free(spath);
	st->id = r->next_id++;
	st->handle = m->u.stream.handle;
	st->class_id = m->u.stream.class_id;
	st->trace = t;
	t->streams[t->nstreams++] = st;
	tr_live_wake(r, t->session);
	return 0;
err:
	if (spath)
		unlink(spath);
	if (path != spath)
		free(path);
	free(spath);
	if (st)
		stream_free(st);
	return ret;
}

static int on_packet(struct trawl_relay *r, struct rtrace *t, const struct relay_msg *m, char *err, size_t errlen)
{
	struct rstream *st = stream_by_handle(t, m->u.packet.handle);
	if (!st)
		return tr_seterr(err, errlen, EPROTO, "PACKET for unknown stream %u",
			      m->u.packet.handle);
	const struct ctf_index *ix = &m->u.packet.ix;
	if (ix->stream_id != st->class_id)
		return tr_seterr(err, errlen, EPROTO, "PACKET of %s: stream class %llu, not %llu",
			      st->name, (unsigned long long)ix->stream_id,
			      (unsigned long long)st->class_id);
	if (ix->ts_begin < st->beacon)
		return tr_seterr(err, errlen, EPROTO,
			      "PACKET of %s begins at %llu, before its beacon or previous packet "
			      "(%llu)", st->name, (unsigned long long)ix->ts_begin,
			      (unsigned long long)st->beacon);
	int ret = tr_write_all(st->fd, m->u.packet.data, m->u.packet.size);
	uint8_t e[CTF_IDX_ENTRY_LEN];
	ctf_index_put_entry(e, st->size, ix);
	if (!ret)
		ret = tr_write_all(st->idxfd, e, sizeof(e));
	if (ret)
		return tr_seterr(err, errlen, -ret, "%s/%s: %s", t->dir, st->name, strerror(-ret));
	st->size += m->u.packet.size;
	st->npackets++;
	if (st->beacon < ix->ts_end)
		st->beacon = ix->ts_end;
	tr_live_wake(r, t->session);
	return 0;
}

/* One message of a producer: 0, or -errno with the reason in err. */
static int producer_msg(struct rconn *c, const struct relay_msg *m, char *err, size_t errlen)
{
	struct trawl_relay *r = c->r;
	struct rtrace *t = c->trace;
	if (!t && m->type != RELAY_HELLO)
		return tr_seterr(err, errlen, EPROTO, "%s before HELLO", tr_relay_type_name(m->type));
	if (t && t->closed)
		return tr_seterr(err, errlen, EPROTO, "%s after CLOSE", tr_relay_type_name(m->type));
	switch (m->type) {
	case RELAY_HELLO: {
		if (t)
			return tr_seterr(err, errlen, EPROTO, "a second HELLO");
		int ret = on_hello(c, m, err, errlen);
		queue_status(c, RELAY_WELCOME, ret, ret ? err : "");
		if (ret) {
			tr_relay_log(r, LOG_WARNING, "%s: refused: %s", c->peer, err);
			c->closing = true;
		}
		return 0;
	}
	case RELAY_METADATA: {
		if (t->meta_len + m->u.meta.len > RELAY_METADATA_MAX)
			return tr_seterr(err, errlen, EFBIG, "METADATA: more than %u bytes in all",
				      RELAY_METADATA_MAX);
		int ret = tr_write_all(t->meta_fd, m->u.meta.data, m->u.meta.len);
		if (ret)
			return tr_seterr(err, errlen, -ret, "%s/metadata: %s", t->dir, strerror(-ret));
		t->meta_len += m->u.meta.len;
		tr_live_wake(r, t->session);
		return 0;
	}
	case RELAY_STREAM:
		return on_stream(r, t, m, err, errlen);
	case RELAY_PACKET:
		return on_packet(r, t, m, err, errlen);
	case RELAY_BEACON: {
		struct rstream *st = stream_by_handle(t, m->u.beacon.handle);
		if (!st)
			return tr_seterr(err, errlen, EPROTO, "BEACON for unknown stream %u",
				      m->u.beacon.handle);
		if (st->beacon < m->u.beacon.ts) {
			st->beacon = m->u.beacon.ts;
			tr_live_wake(r, t->session);
		}
		return 0;
	}
	case RELAY_CLOSE: {
		tr_relay_log(r, LOG_INFO, "%s: %s/%s/%s: complete (%zu streams, %llu bytes of metadata)",
			     c->peer,
			  t->session->name, t->session->host, t->name, t->nstreams,
			  (unsigned long long)t->meta_len);
		trace_end(r, t);
		trace_drop_empty(r, t);
		c->trace = NULL;
		tr_relay_session_gc(r);
		queue_status(c, RELAY_ACK, 0, "");
		c->closing = true;
		return 0;
	}
	default:
		return tr_seterr(err, errlen, EPROTO, "%s from a producer", tr_relay_type_name(m->type));
	}
}

/* Parses every whole message in c->in; how many bytes it used. A
 * message refused (a name that is not a plain file name, a broken
 * message, a file that cannot be created) is logged and the connection
 * closed; a producer's message (a HELLO, or any message of the protocol
 * after it) gets its reason back first: in the WELCOME its HELLO waits
 * for, in an ACK after. */
static long producer_input(struct rconn *c)
{
	size_t off = 0;
	char err[512];
	while (off < c->inlen && !c->closing) {
		struct relay_msg m;
		ssize_t n = tr_relay_msg_parse(c->in + off, c->inlen - off, &m, err, sizeof(err));
		if (n == 0)
			break;
		int ret = n < 0 ? (int)n : producer_msg(c, &m, err, sizeof(err));
		if (ret < 0) {
			tr_relay_log(c->r, LOG_WARNING, "%s: %s; connection closed", c->peer, err);
			/* not to garbage (an HTTP request, a message too large
			 * to read): to a producer's message */
			uint32_t type = get_le32(c->in + off);
			if (ret != -EMSGSIZE && (c->trace ? tr_relay_type_name(type)[0] != '?'
							  : type == RELAY_HELLO)) {
				queue_status(c, c->trace ? RELAY_ACK : RELAY_WELCOME, ret, err);
				c->closing = true;	/* once it is sent */
			} else {
				c->dead = true;
			}
			break;
		}
		off += (size_t)n;
	}
	return (long)off;
}

/* --------------------------------------------------------- connections */

/* Closes c, taken off r->conns by the caller. */
static void conn_free(struct rconn *c)
{
	struct trawl_relay *r = c->r;
	if (c->kind == RC_PRODUCER && c->trace && !c->trace->closed) {
		struct rtrace *t = c->trace;
		tr_relay_log(r, LOG_WARNING, "%s: %s/%s/%s: the producer left before CLOSE; the "
			     "trace keeps what came", c->peer, t->session->name, t->session->host,
			     t->name);
		trace_end(r, t);
		c->trace = NULL;
		tr_relay_session_gc(r);
	}
	if (c->kind == RC_VIEWER)
		tr_live_conn_free(c);
	if (c->fd >= 0) {
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	free(c->in);
	free(c->out);
	free(c);
	r->nconns--;
}

static void conn_read(struct rconn *c)
{
	/* a few reads per turn, each parsed at once: the buffer holds at most
	 * one message more than a read, and other connections get their turn
	 * (the epoll is level-triggered) */
	for (int i = 0; i < 16 && !c->dead; i++) {
		if (c->kind == RC_VIEWER && !tr_live_wants_input(c))
			break;	/* the epoll is level-triggered: later */
		if (grow(&c->in, &c->incap, c->inlen + 65536) < 0) {
			c->dead = true;
			return;
		}
		size_t room = c->incap - c->inlen;
		ssize_t n = recv(c->fd, c->in + c->inlen, room, MSG_DONTWAIT);
		if (n == 0) {
			c->dead = true;
			break;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				c->dead = true;
			break;
		}
		c->inlen += (size_t)n;
		long used = c->kind == RC_PRODUCER ? producer_input(c) : tr_live_input(c);
		if (used < 0) {
			c->dead = true;
			return;
		}
		memmove(c->in, c->in + used, c->inlen - (size_t)used);
		c->inlen -= (size_t)used;
		/* a viewer's requests are small: a peer that sends more than a
		 * few without reading the replies is cut off */
		if (c->kind == RC_VIEWER && c->inlen > 64 * 1024) {
			tr_relay_log(c->r, LOG_WARNING, "%s: sends requests without reading the replies; "
				     "closed", c->peer);
			c->dead = true;
			return;
		}
		if (c->outlen > c->outoff)
			flush_out(c);
		if ((size_t)n < room)
			break;
	}
	/* one large packet does not keep its buffer for the connection's life */
	if (!c->inlen && c->incap > (1u << 20)) {
		free(c->in);
		c->in = NULL;
		c->incap = 0;
	}
}

static void conn_accept(struct trawl_relay *r, int lfd, enum rconn_kind kind)
{
	for (;;) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE) && r->spare_fd >= 0) {
			/* out of descriptors: refuse it (the listener would stay
			 * readable and the loop spin) */
			close(r->spare_fd);
			fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				close(fd);
			r->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			tr_relay_log(r, LOG_WARNING, "refused a connection: out of file descriptors");
			continue;
		}
		if (fd < 0)
			return;
		if (r->nconns >= r->max_conns) {
			tr_relay_log(r, LOG_WARNING, "refused a connection: %d already (--max-conns)",
				     r->nconns);
			close(fd);
			continue;
		}
		struct rconn *c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->r = r;
		c->kind = kind;
		c->fd = fd;
		char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";
		getnameinfo((struct sockaddr *)&sa, sl, host, sizeof(host), port, sizeof(port),
			    NI_NUMERICHOST | NI_NUMERICSERV);
		snprintf(c->peer, sizeof(c->peer), "%s %s:%s",
			 kind == RC_PRODUCER ? "producer" : "viewer", host, port);
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		c->events = EPOLLIN;
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = r->conns;
		r->conns = c;
		r->nconns++;
	}
}

/* Listens on "[HOST:]PORT" (HOST default def_host); bound gets the
 * address really bound (port 0 picks a free one), *bport its port.
 * Returns the socket, or -errno with the reason in err. */
static int listen_on(const char *spec, const char *def_host, unsigned def_port, char *bound,
		     size_t blen, unsigned *bport, char *err, size_t errlen)
{
	char host[256];
	unsigned port;
	char tmp[300];
	const char *given = spec;
	/* a bare port */
	if (spec && *spec && strspn(spec, "0123456789") == strlen(spec)) {
		snprintf(tmp, sizeof(tmp), "%s:%s", def_host, spec);
		spec = tmp;
	}
	if (!spec || !*spec) {
		snprintf(tmp, sizeof(tmp), "%s:%u", def_host, def_port);
		spec = tmp;
	}
	/* port 0 is allowed here: the kernel picks one */
	char *colon = strrchr(spec, ':');
	bool zero = colon && strcmp(colon, ":0") == 0;
	char zspec[300];	/* not tmp: spec may be tmp already (a bare "0") */
	if (zero) {
		snprintf(zspec, sizeof(zspec), "%.*s:1", (int)(colon - spec), spec);
		spec = zspec;
	}
	if (tr_net_split_addr(spec, host, sizeof(host), &port, def_port) < 0)
		return tr_seterr(err, errlen, EINVAL, "'%s': expected [HOST:]PORT", given ? given : spec);
	if (zero)
		port = 0;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int gr = getaddrinfo(host, ps, &hints, &res);
	if (gr)
		return tr_seterr(err, errlen, EINVAL, "%s: %s", host, gai_strerror(gr));
	int fd = -1, e = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return tr_seterr(err, errlen, e, "%s:%u: %s", host, port, strerror(e));
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char h[INET6_ADDRSTRLEN], p[8];
	*bport = port;
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&sa, sl, h, sizeof(h), p, sizeof(p),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
		snprintf(bound, blen, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h, p);
		*bport = (unsigned)atoi(p);
	} else {
		snprintf(bound, blen, "%s:%u", host, port);
	}
	return fd;
}

/* Closes every connection and forgets every session (the files stay). */
static void state_clear(struct trawl_relay *r)
{
	while (r->conns) {
		struct rconn *c = r->conns;
		r->conns = c->next;
		conn_free(c);
	}
	while (r->sessions) {
		struct rsession *s = r->sessions;
		r->sessions = s->next;
		session_free(s);
	}
}

/* ------------------------------------------------------------- the object */

struct trawl_relay *tr_relay_state_new(const struct trawl_relay_opts *o)
{
	struct trawl_relay_opts opt = { 0 };
	if (!o || o->sz < offsetof(struct trawl_relay_opts, data_addr) || !o->output ||
	    !*o->output) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(&opt, o, o->sz < sizeof(opt) ? o->sz : sizeof(opt));
	if (opt.max_conns < 0) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_relay *r = calloc(1, sizeof(*r));
	if (!r || !(r->output = strdup(opt.output))) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->max_conns = opt.max_conns ? opt.max_conns : 1000;
	r->live_from_now = opt.live_from_now;
	r->live_hold_ms = opt.live_hold_ms ? opt.live_hold_ms : 1000;
	r->log = opt.log;
	r->log_arg = opt.log_arg;
	r->dfd = r->lfd = r->stopfd = r->epfd = r->spare_fd = -1;
	r->next_id = 1;
	r->next_viewer = 1;
	return r;
}

struct rconn *tr_relay_conn_new(struct trawl_relay *r, enum rconn_kind kind)
{
	struct rconn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->r = r;
	c->kind = kind;
	c->fd = -1;
	snprintf(c->peer, sizeof(c->peer), "%s (test)", kind == RC_PRODUCER ? "producer" : "viewer");
	c->next = r->conns;
	r->conns = c;
	r->nconns++;
	return c;
}

int tr_relay_conn_feed(struct rconn *c, const void *p, size_t n)
{
	if (c->dead || c->closing)
		return -1;
	if (grow(&c->in, &c->incap, c->inlen + n) < 0)
		return -1;
	if (!n)
		return 0;
	memcpy(c->in + c->inlen, p, n);
	c->inlen += n;
	long used = c->kind == RC_PRODUCER ? producer_input(c) : tr_live_input(c);
	if (used < 0) {
		c->dead = true;
		return -1;
	}
	memmove(c->in, c->in + used, c->inlen - (size_t)used);
	c->inlen -= (size_t)used;
	return 0;
}

void tr_relay_conn_close(struct rconn *c)
{
	for (struct rconn **pp = &c->r->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	conn_free(c);
}

struct trawl_relay *trawl_relay_new(const struct trawl_relay_opts *o, char *err, size_t errlen)
{
	char why[400];
	struct trawl_relay *r = tr_relay_state_new(o);
	int ret;
	if (!r) {
		ret = tr_seterr(err, errlen, errno, errno == EINVAL ? "no output directory" :
			     "out of memory");
		errno = -ret;
		return NULL;
	}
	struct trawl_relay_opts opt = { 0 };
	memcpy(&opt, o, o->sz < sizeof(opt) ? o->sz : sizeof(opt));
	const char *data = opt.data_addr, *live = opt.live_addr;
	ret = listen_on(data, "0.0.0.0", TRAWL_RELAY_DATA_PORT, r->data_at, sizeof(r->data_at),
			&r->data_port, why, sizeof(why));
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "data port %s", why);
		goto err;
	}
	r->dfd = ret;
	ret = listen_on(live, "127.0.0.1", TRAWL_RELAY_LIVE_PORT, r->live_at, sizeof(r->live_at),
			&r->live_port, why, sizeof(why));
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "live port %s", why);
		goto err;
	}
	r->lfd = ret;
	/* once the ports are ours: a relay that cannot start leaves nothing */
	ret = tr_mkdir_p(r->output);
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "%s: %s", r->output, strerror(-ret));
		goto err;
	}
	/* torn tails a relay killed mid-write left (repair.c) */
	tr_relay_repair(r);
	r->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (r->stopfd < 0 || r->epfd < 0 || r->spare_fd < 0) {
		ret = tr_seterr(err, errlen, errno, "%s", strerror(errno));
		goto err;
	}
	/* the listeners and the stop are told apart from connections by the
	 * addresses of their descriptors in r */
	struct epoll_event ev = { .events = EPOLLIN };
	ev.data.ptr = &r->dfd;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->dfd, &ev) < 0)
		goto epoll_err;
	ev.data.ptr = &r->lfd;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->lfd, &ev) < 0)
		goto epoll_err;
	ev.data.ptr = &r->stopfd;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->stopfd, &ev) < 0)
		goto epoll_err;
	return r;
epoll_err:
	ret = tr_seterr(err, errlen, errno, "epoll: %s", strerror(errno));
err:
	trawl_relay_free(r);
	errno = -ret;
	return NULL;
}

unsigned trawl_relay_data_port(const struct trawl_relay *r)
{
	return r ? r->data_port : 0;
}

unsigned trawl_relay_live_port(const struct trawl_relay *r)
{
	return r ? r->live_port : 0;
}

const char *trawl_relay_data_addr(const struct trawl_relay *r)
{
	return r ? r->data_at : NULL;
}

const char *trawl_relay_live_addr(const struct trawl_relay *r)
{
	return r ? r->live_at : NULL;
}

int trawl_relay_stop(struct trawl_relay *r)
{
	/* async-signal-safe: one write(2) */
	uint64_t one = 1;
	if (!r || r->stopfd < 0)
		return -EINVAL;
	/* EAGAIN: the counter is full, a stop is pending anyway */
	if (write(r->stopfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

int trawl_relay_run(struct trawl_relay *r)
{
	if (!r || r->epfd < 0)
		return -EINVAL;
	int status = 0;
	bool quit = false;
	while (!quit) {
		struct epoll_event evs[64];
		/* often while a viewer's request is held (its time runs out) */
		int n = epoll_wait(r->epfd, evs, 64, tr_live_holding(r) ? 10 : 1000);
		if (n < 0 && errno != EINTR) {
			status = -errno;
			tr_relay_log(r, LOG_ERR, "epoll: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &r->dfd) {
				conn_accept(r, r->dfd, RC_PRODUCER);
			} else if (p == &r->lfd) {
				conn_accept(r, r->lfd, RC_VIEWER);
			} else if (p == &r->stopfd) {
				uint64_t v;
				/* consumed: the relay may run again */
				if (read(r->stopfd, &v, sizeof(v)) == sizeof(v))
					quit = true;
			} else {
				struct rconn *c = p;
				if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
					conn_read(c);
				if (!c->dead && (evs[i].events & EPOLLOUT))
					flush_out(c);
			}
		}
		tr_live_tick(r);
		for (struct rconn **pp = &r->conns; *pp;) {
			struct rconn *c = *pp;
			if (!c->dead && c->outlen > c->outoff)
				flush_out(c);
			if (c->dead) {
				*pp = c->next;
				conn_free(c);
			} else {
				update_events(c);
				pp = &c->next;
			}
		}
	}
	state_clear(r);
	return status;
}

void trawl_relay_free(struct trawl_relay *r)
{
	if (!r)
		return;
	state_clear(r);
	if (r->dfd >= 0)
		close(r->dfd);
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->stopfd >= 0)
		close(r->stopfd);
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->spare_fd >= 0)
		close(r->spare_fd);
	free(r->output);
	free(r);
}
