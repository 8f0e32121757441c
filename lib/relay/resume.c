/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/resume.c - a producer that was cut off (the relay restarted,
 * the link went down) comes back for its trace (docs/relay.md, "Cut off:
 * reconnect and resume"): the relay takes the trace over from the
 * connection that still holds it, or from the disk (its torn tails were
 * cut at the relay's start), and appends after the last packet it holds.
 * The producer proves it is the same one with the trace's UUID (in its
 * HELLO; the relay has it in memory, or in the trace's metadata).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "net/relay-proto.h"
#include "ctf/packet.h"

/* The metadata's first bytes read for its trace UUID. */
#define UUID_SCAN 65536

/* Opens dir/name (or dir/index/name.idx) to append, no symbolic link
 * followed: the descriptor, or -errno. */
static int open_append(const char *dir, const char *name, bool idx)
{
	return tr_relay_file_open(dir, name, idx, O_RDWR | O_APPEND | O_NOFOLLOW);
}

/*
 * Whether the metadata at fd (len bytes) is the trace of uuid: its trace
 * block declares it. A trace without metadata yet holds nothing of its
 * producer's but stream files; it is the HELLO's only if it has none
 * (no index entry).
 */
static bool owns(int meta_fd, uint64_t len, const char *dir, const uint8_t uuid[16])
{
	if (!len) {
		char *ix;
		if (asprintf(&ix, "%s/index", dir) < 0)
			return false;
		int n = 0;
		DIR *d = opendir(ix);
		free(ix);
		for (struct dirent *e; d && (e = readdir(d));)
			n += e->d_name[0] != '.';
		if (d)
			closedir(d);
		return d && n == 0;
	}
	size_t want = len < UUID_SCAN ? (size_t)len : UUID_SCAN;
	char *b = malloc(want + 1);
	ssize_t got = b ? pread(meta_fd, b, want, 0) : -1;
	bool ok = false;
	if (got > 0) {
		b[got] = 0;
		char u[37], needle[64];
		tr_uuid_format(uuid, u);
		snprintf(needle, sizeof(needle), "uuid = \"%s\";", u);
		ok = strstr(b, needle) != NULL;
	}
	free(b);
	return ok;
}

/* The trace SESSION/HOST/TRACE the relay has in memory, or NULL. */
static struct rtrace *trace_find(struct trawl_relay *r, const struct relay_msg *m)
{
	for (struct rsession *s = r->sessions; s; s = s->next) {
		if (strcmp(s->name, m->u.hello.session) || strcmp(s->host, m->u.hello.host))
			continue;
		for (size_t i = 0; i < s->ntraces; i++)
			if (strcmp(s->traces[i]->name, m->u.hello.trace) == 0)
				return s->traces[i];
	}
	return NULL;
}

/* An ended trace in memory is written again: its files reopened to append. */
static int reopen_ended(struct trawl_relay *r, struct rtrace *t, char *err, size_t errlen)
{
	tr_relay_trace_files_close(r, t);	/* a viewer's read-only ones */
	if (!t->made) {
		/* it left before its first METADATA or STREAM: nothing on
		 * the disk yet (relay.c's trace_make makes it) */
		t->files_open = true;
		t->closed = false;
		return 0;
	}
	if (!tr_relay_pool_has(r, 1 + 2 * (int)t->nstreams))
		return tr_seterr(err, errlen, EMFILE, "the relay's descriptor pool is full (%d of %d "
				 "in use; --fd-pool-size)", r->nfds, r->fd_pool);
	int fd = open_append(t->dir, "metadata", false);
	if (fd < 0)
		return tr_seterr(err, errlen, -fd, "%s/metadata: %s", tr_relay_rel(r, t->dir), strerror(-fd));
	t->meta_fd = fd;
	r->nfds++;
	for (size_t i = 0; i < t->nstreams; i++) {
		struct rstream *st = t->streams[i];
		st->fd = open_append(t->dir, st->name, false);
		st->idxfd = open_append(t->dir, st->name, true);
		r->nfds += (st->fd >= 0) + (st->idxfd >= 0);
		if (st->fd < 0 || st->idxfd < 0) {
			int e = st->fd < 0 ? -st->fd : -st->idxfd;
			tr_relay_trace_files_close(r, t);
			return tr_seterr(err, errlen, e, "%s/%s: %s", tr_relay_rel(r, t->dir), st->name, strerror(e));
		}
		st->hup = false;
	}
	t->files_open = true;
	t->closed = false;
	return 0;
}

/* A trace on the disk only (a relay restarted, or its session forgotten):
 * a new one in memory, its metadata opened to append; its streams come
 * back with their STREAM (tr_relay_stream_resume). */
static struct rtrace *load(struct rconn *c, const struct relay_msg *m, const char *dir,
			   int *ret, char *err, size_t errlen)
{
	struct trawl_relay *r = c->r;
	if (!tr_relay_pool_has(r, 1)) {
		*ret = tr_seterr(err, errlen, EMFILE, "the relay's descriptor pool is full (%d of "
				 "%d in use; --fd-pool-size)", r->nfds, r->fd_pool);
		return NULL;
	}
	int fd = open_append(dir, "metadata", false);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		int e = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		*ret = tr_seterr(err, errlen, e, "%s/metadata: %s", tr_relay_rel(r, dir), strerror(e));
		return NULL;
	}
	if (!owns(fd, (uint64_t)sb.st_size, dir, m->u.hello.uuid)) {
		close(fd);
		*ret = tr_seterr(err, errlen, EEXIST, "%s exists, and is not this producer's trace "
				 "(another UUID): choose another session name", tr_relay_rel(r, dir));
		return NULL;
	}
	struct rtrace *t = calloc(1, sizeof(*t));
	struct rsession *s = tr_relay_session_get(r, m->u.hello.session, m->u.hello.host,
						  m->u.hello.live_timer_us);
	struct rtrace **tv = s ? realloc(s->traces, (s->ntraces + 1) * sizeof(*tv)) : NULL;
	if (tv)
		s->traces = tv;
	if (!t || !tv || !(t->name = strdup(m->u.hello.trace)) || !(t->dir = strdup(dir))) {
		if (t)
			free(t->name);
		free(t);
		close(fd);
		*ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	r->nfds++;
	t->made = true;
	t->meta_fd = fd;
	t->meta_len = (uint64_t)sb.st_size;
	t->files_open = true;
	t->id = r->next_id++;
	t->session = s;
	memcpy(t->uuid, m->u.hello.uuid, sizeof(t->uuid));
	s->traces[s->ntraces++] = t;
	return t;
}

int tr_relay_resume(struct rconn *c, const struct relay_msg *m, const char *dir, char *err,
		    size_t errlen)
{
	struct trawl_relay *r = c->r;
	struct rtrace *t = trace_find(r, m);
	const char *from = "the disk";
	int ret;
	if (t) {
		if (memcmp(t->uuid, m->u.hello.uuid, sizeof(t->uuid)))
			return tr_seterr(err, errlen, EEXIST, "%s exists, and is another producer's "
					 "trace (another UUID): choose another session name", tr_relay_rel(r, dir));
		if (!t->closed) {
			/* its old connection is still open (a link that went
			 * down, a peer that has not timed out): closed, what it
			 * had half received dropped; the producer sends it again */
			for (struct rconn *o = r->conns; o; o = o->next) {
				if (o->kind != RC_PRODUCER || o->trace != t || o == c)
					continue;
				tr_relay_log(r, LOG_WARNING, "%s: %s/%s/%s: taken over by a resume from "
					     "%s; closed", o->peer, m->u.hello.session, m->u.hello.host,
					     m->u.hello.trace, c->peer);
				o->trace = NULL;
				o->dead = true;
			}
			from = "its old connection";
		} else if ((ret = reopen_ended(r, t, err, errlen)) < 0) {
			return ret;
		} else {
			from = "its ended trace";
		}
	} else if (!(t = load(c, m, dir, &ret, err, errlen))) {
		return ret;
	}
	if ((ret = tr_relay_quota_charge(r, t->session, 0, err, errlen)) < 0) {
		/* a full session takes nothing more: the trace ends as it is */
		if (!t->closed) {
			t->closed = true;
			tr_relay_trace_files_close(r, t);
		}
		tr_relay_session_gc(r);
		return ret;
	}
	if (m->u.hello.live_timer_us)
		t->session->live_timer_us = m->u.hello.live_timer_us;
	t->resumed = true;
	c->trace = t;
	tr_relay_log(r, LOG_INFO, "%s: %s/%s/%s: resumed from %s (%llu bytes of metadata, %zu "
		     "streams)", c->peer, m->u.hello.session, m->u.hello.host, m->u.hello.trace,
		     from, (unsigned long long)t->meta_len, t->nstreams);
	tr_live_wake(r, t->session);
	return 0;
}

/* A stream's state from its files: size, packets, the last one's end and
 * packet_seq_num. 0 or -errno. */
static int stream_state(struct rstream *st)
{
	struct stat sb, ib;
	if (fstat(st->fd, &sb) < 0 || fstat(st->idxfd, &ib) < 0)
		return -errno;
	if (ib.st_size < CTF_IDX_HEADER_LEN ||
	    (ib.st_size - CTF_IDX_HEADER_LEN) % CTF_IDX_ENTRY_LEN)
		return -EPROTO;
	st->size = (uint64_t)sb.st_size;
	st->npackets = (uint64_t)(ib.st_size - CTF_IDX_HEADER_LEN) / CTF_IDX_ENTRY_LEN;
	if (!st->npackets)
		return 0;
	uint8_t e[CTF_IDX_ENTRY_LEN];
	if (pread(st->idxfd, e, sizeof(e), ib.st_size - CTF_IDX_ENTRY_LEN) != (ssize_t)sizeof(e))
		return -EIO;
	/* entry: offset, packet_size, content_size, ts_begin, ts_end, ... seq */
	if (get_be64(e) + get_be64(e + 8) / 8 != st->size)
		return -EPROTO;		/* a torn tail a restart repairs */
	st->beacon = get_be64(e + 32);
	st->next_seq = get_be64(e + 64) + 1;
	return 0;
}

int tr_relay_stream_resume(struct rtrace *t, const struct relay_msg *m, char *err, size_t errlen)
{
	const char *name = m->u.stream.name;
	for (size_t i = 0; i < t->nstreams; i++) {
		struct rstream *st = t->streams[i];
		bool same_h = st->handle == m->u.stream.handle, same_n = strcmp(st->name, name) == 0;
		if (same_h && same_n && st->class_id == m->u.stream.class_id)
			return 0;	/* the relay has it */
		if (same_h || same_n)
			return tr_seterr(err, errlen, EPROTO, "STREAM %u (%s) of a resumed trace: "
					 "not the stream %u (%s) it had", m->u.stream.handle, name,
					 st->handle, st->name);
	}
	return 1;
}

int tr_relay_stream_reopen(const struct rtrace *t, struct rstream *st, char *err, size_t errlen)
{
	if ((st->fd = open_append(t->dir, st->name, false)) == -ENOENT)
		return 1;	/* a new stream */
	if (st->fd < 0)
		return tr_seterr(err, errlen, -st->fd, "%s/%s: %s", t->dir, st->name,
				 strerror(-st->fd));
	if ((st->idxfd = open_append(t->dir, st->name, true)) < 0)
		return tr_seterr(err, errlen, -st->idxfd, "%s/index/%s.idx: %s", t->dir, st->name,
				 strerror(-st->idxfd));
	int ret = stream_state(st);
	if (ret < 0)
		return tr_seterr(err, errlen, -ret, "%s/%s: its index does not match it (%s)",
				 t->dir, st->name, strerror(-ret));
	return 0;
}

void tr_relay_progress(struct rconn *c)
{
	uint8_t m[RELAY_HDR_LEN + 8];
	relay_put_hdr(m, RELAY_PROGRESS, 8);
	put_le64(m + RELAY_HDR_LEN, c->written);
	c->progress_told = c->written;
	c->progress_due = false;
	/* one PROGRESS waiting to be sent is updated, not followed by another:
	 * a producer that reads none costs the relay 16 bytes */
	size_t at = c->progress_at - 1;
	if (c->progress_at && at >= c->outoff && at + sizeof(m) == c->outlen &&
	    get_le32(c->out + at) == RELAY_PROGRESS) {
		memcpy(c->out + at, m, sizeof(m));
		return;
	}
	size_t before = c->outoff == c->outlen ? 0 : c->outlen;
	if (tr_rconn_queue(c, m, sizeof(m)) == 0)
		c->progress_at = before + 1;
}
