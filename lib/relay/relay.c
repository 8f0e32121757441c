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
#include <grp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "relay/relay-internal.h"
#include "net/auth.h"
#include "net/live-proto.h"
#include "net/relay-proto.h"
#include "net/sock.h"
#include "util/clock.h"
#include "util/escape.h"

/* The largest HELLO (its fixed part and three names of RELAY_NAME_MAX):
 * before it, a producer may send nothing larger. */
#define HELLO_MAX 1024
/* The read size, and the input buffer's granule. */
#define READ_CHUNK 65536
/* Refusals of one kind are logged once in this many ms, with a count. */
#define RATELOG_MS 10000
/* Out of descriptors, the listeners rest this long (or until one is freed). */
#define EMFILE_PAUSE_MS 1000
/* A PROGRESS untold is told this long after the last sweep (sweep_due). */
#define SWEEP_MS 250
/* What the relay makes beneath its output ("files beneath the output"). */
#define DIR_MODE 0750
#define FILE_MODE 0640

void tr_relay_log(struct trawl_relay *r, int level, const char *fmt, ...)
{
	if (!r->log)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tr_escape_ctl(msg, sizeof(msg));	/* peers' strings: no control character */
	r->log(r->log_arg, level, msg);
}

/* A refusal of one kind, logged once every RATELOG_MS: the first of an
 * episode, then one line that counts the others. */
void tr_relay_ratelog(struct trawl_relay *r, struct ratelog *rl, int level, const char *fmt, ...)
{
	int64_t now = tr_mono_ms();
	if (rl->last && now - rl->last < RATELOG_MS) {
		rl->quiet++;
		return;
	}
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rl->quiet)
		tr_relay_log(r, level, "%s (and %lu more such in the last %d s)", msg, rl->quiet,
			     RATELOG_MS / 1000);
	else
		tr_relay_log(r, level, "%s", msg);
	rl->last = now;
	rl->quiet = 0;
}

/* ------------------------------------------------- the descriptor pool */

/*
 * The relay counts the descriptors it holds for connections and trace
 * files (r->nfds) against its pool (r->fd_pool, from RLIMIT_NOFILE or
 * --fd-pool-size): a newcomer, a HELLO or a STREAM that would go over it
 * is refused with the reason. A trace's files are closed when the trace
 * ends, and reopened read-only while a viewer is attached to its session.
 */
static bool pool_has(const struct trawl_relay *r, int n)
{
	return r->nfds + n <= r->fd_pool;
}

/* Closes a descriptor of the pool (-1: nothing); out of descriptors, the
 * listeners listen again at the next turn. */
static void pool_close(struct trawl_relay *r, int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	r->nfds--;
	if (r->paused_until)
		r->paused_until = 1;
}

/* The default pool: the soft limit, less a tenth of it (16 to 1024) for
 * the listeners, the epoll, and the rest of the process. */
static int pool_default(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1u << 30))
		return 1 << 20;
	int lim = (int)rl.rlim_cur, keep = lim / 10;
	keep = keep < 16 ? 16 : keep > 1024 ? 1024 : keep;
	return lim - keep > 1 ? lim - keep : 1;
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

/*
 * c is closing and its last reply (a refusal's reason) is sent: its side is
 * shut (the peer reads the reason, then EOF) and what the peer still sends
 * is read and dropped until its EOF or LINGER_MS. Closed at once instead,
 * unread bytes made the kernel reset the connection, and the peer lost
 * the reason with them ("Connection reset by peer").
 */
#define LINGER_MS 2000
#define LINGER_BYTES (1u << 20)
static void conn_linger(struct rconn *c)
{
	if (c->linger_until)
		return;
	if (c->fd < 0 || shutdown(c->fd, SHUT_WR) < 0) {
		c->dead = true;
		return;
	}
	c->inlen = 0;
	c->linger_until = tr_mono_ms() + LINGER_MS;
	c->linger_left = LINGER_BYTES;
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
		conn_linger(c);
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
 * bytes. An ACK that cuts the trace off (an error) to a producer that
 * counts (RELAY_HELLO_COUNT) says after the reason how many of its
 * messages were written: every one before the one it failed at, the
 * rest (that one, and whatever is still in the sockets) dropped. */
static void queue_status(struct rconn *c, enum relay_type type, int status, const char *msg)
{
	uint8_t rep[RELAY_HDR_LEN + 4 + 256 + 8];
	size_t ml = strnlen(msg, 255) + 1, cl = type == RELAY_ACK && status < 0 && c->counts ? 8 : 0;
	relay_put_hdr(rep, type, (uint32_t)(4 + ml + cl));
	put_le32(rep + RELAY_HDR_LEN, (uint32_t)status);
	memcpy(rep + RELAY_HDR_LEN + 4, msg, ml - 1);
	rep[RELAY_HDR_LEN + 4 + ml - 1] = 0;
	if (cl)
		put_le64(rep + RELAY_HDR_LEN + 4 + ml, c->written);
	tr_rconn_queue(c, rep, RELAY_HDR_LEN + 4 + ml + cl);
}

/* A WELCOME of 0 that grants the HELLO's asks in granted (a u32 after the
 * message's NUL: only to a HELLO that asked, whose producer parses it). */
static void queue_granted(struct rconn *c, uint32_t granted)
{
	uint8_t rep[RELAY_HDR_LEN + 4 + 1 + 4] = { 0 };
	relay_put_hdr(rep, RELAY_WELCOME, 4 + 1 + 4);
	put_le32(rep + RELAY_HDR_LEN + 5, granted);
	tr_rconn_queue(c, rep, sizeof(rep));
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
struct rconn;
static bool pool_make(struct trawl_relay *r, const struct rconn *except, int n);
static bool addr_fds_ok(const struct rconn *c, int n);

/* Closes a trace's files (the pool's); they stay on the disk. */
static void trace_files_close(struct trawl_relay *r, struct rtrace *t)
{
	pool_close(r, &t->meta_fd);
	for (size_t i = 0; i < t->nstreams; i++) {
		pool_close(r, &t->streams[i]->fd);
		pool_close(r, &t->streams[i]->idxfd);
	}
	t->files_open = false;
}

int tr_relay_file_open(const char *dir, const char *name, bool idx, int flags)
{
	char *p;
	if (asprintf(&p, idx ? "%s/index/%s.idx" : "%s/%s", dir, name) < 0)
		return -ENOMEM;
	int fd = open(p, flags | O_CLOEXEC);
	int e = errno;
	free(p);
	return fd < 0 ? -e : fd;
}

/* Opens a read-only descriptor of the pool on dir/name (or dir/index/name.idx). */
static int reopen(struct trawl_relay *r, const char *dir, const char *name, bool idx)
{
	int fd = tr_relay_file_open(dir, name, idx, O_RDONLY);
	if (fd < 0)
		return -1;
	r->nfds++;
	return fd;
}

/* Reopens an ended trace's files for the viewers of its session, as far
 * as the pool allows (a file left closed: the viewers' reads of it fail). */
static void trace_files_open(struct trawl_relay *r, struct rtrace *t)
{
	t->files_open = true;
	if (!t->made)
		return;
	if (!pool_has(r, 1 + 2 * (int)t->nstreams)) {
		tr_relay_ratelog(r, &r->rl_pool, LOG_WARNING, "%s: not reopened for its viewers: the "
				 "descriptor pool is full (%d of %d in use; --fd-pool-size)", t->dir,
				 r->nfds, r->fd_pool);
		return;
	}
	if (t->meta_fd < 0)
		t->meta_fd = reopen(r, t->dir, "metadata", false);
	for (size_t i = 0; i < t->nstreams; i++) {
		struct rstream *st = t->streams[i];
		if (st->fd < 0)
			st->fd = reopen(r, t->dir, st->name, false);
		if (st->idxfd < 0)
			st->idxfd = reopen(r, t->dir, st->name, true);
	}
}

/* The files of ended traces are open while a viewer is attached to their
 * session, else closed: called after anything that may attach or detach
 * a viewer (live.c counts them in s->viewers). */
static void files_sync(struct trawl_relay *r)
{
	for (struct rsession *s = r->sessions; s; s = s->next) {
		bool want = s->viewers > 0;
		if (want == s->files_for_viewers)
			continue;
		s->files_for_viewers = want;
		for (size_t i = 0; i < s->ntraces; i++) {
			struct rtrace *t = s->traces[i];
			if (!t->closed || t->files_open == want)
				continue;
			if (want)
				trace_files_open(r, t);
			else
				trace_files_close(r, t);
		}
	}
}

static void session_free(struct trawl_relay *r, struct rsession *s)
{
	for (size_t i = 0; i < s->ntraces; i++) {
		struct rtrace *t = s->traces[i];
		trace_files_close(r, t);
		for (size_t j = 0; j < t->nstreams; j++)
			stream_free(t->streams[j]);
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
			session_free(r, s);
		} else {
			pp = &s->next;
		}
	}
}

/* Frees a stream whose descriptors are not the pool's (closed, or not
 * yet counted). */
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
	/* the files stay open while viewers may read them; else closed (a
	 * session's ended traces held two descriptors per stream for as long
	 * as one of its traces was recorded) */
	if (!t->session->files_for_viewers)
		trace_files_close(r, t);
	tr_live_wake(r, t->session);
}

/* CLOSE of a trace that got no metadata and no stream (a producer with no
 * event class, before issue 20's writers sent their metadata anyway):
 * its empty metadata file would make readers refuse the whole session,
 * and there is nothing to keep. Its directory goes, and its host's and
 * session's when it was all they held. */
static void trace_drop_empty(struct trawl_relay *r, struct rtrace *t)
{
	if (t->meta_len || t->nstreams || !t->made)
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

/* Creates the file named by fmt (it must not exist; no symbolic link
 * followed): *path (malloc'd, NULL when it could not be made) and *fd.
 * Returns 0, or -errno with err set. */
__attribute__((format(printf, 5, 6)))
static int create_new(char **path, int *fd, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(path, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*path = NULL;
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	}
	*fd = open(*path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
	if (*fd < 0)
		return tr_seterr(err, errlen, errno, "%s: %s", *path, strerror(errno));
	return 0;
}

/* ------------------------------------------- files beneath the output */

/*
 * Everything the relay writes is beneath its output directory, opened
 * from it one component at a time without following a symbolic link
 * (openat, O_NOFOLLOW), in directories of the relay's own user: a link or
 * another user's directory planted at the session or host level is
 * refused with the reason, never written through. Directories are made
 * DIR_MODE, files FILE_MODE (reading a trace live needs a viewer's key:
 * the files are not for everyone either), both of the group
 * trawl_relay_opts.group when given.
 */
static int root_fd(struct trawl_relay *r)
{
	if (r->rootfd < 0)
		r->rootfd = open(r->output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return r->rootfd;
}

/* fd (a file or directory the relay made) gets its mode and group. */
static void made_mode(const struct trawl_relay *r, int fd, mode_t mode)
{
	if (fchmod(fd, mode) < 0 ||
	    (r->gid != (gid_t)-1 && fchown(fd, (uid_t)-1, r->gid) < 0))
		tr_relay_log((struct trawl_relay *)r, LOG_WARNING, "cannot set a file's mode or group "
			     "(--group): %s", strerror(errno));
}

const char *tr_relay_rel(const struct trawl_relay *r, const char *path)
{
	size_t n = strlen(r->output);
	return strncmp(path, r->output, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

/* The directory name beneath dirfd (what: its path under the output, for
 * messages), made when create and missing: its descriptor, or -errno with
 * err set (-ENOENT: missing). */
static int subdir(struct trawl_relay *r, int dirfd, const char *name, bool create,
		  const char *what, char *err, size_t errlen)
{
	bool made = false;
	if (dirfd < 0)
		return tr_seterr(err, errlen, EBADF, "the output directory: %s", strerror(errno));
	if (create) {
		made = mkdirat(dirfd, name, DIR_MODE) == 0;
		if (!made && errno != EEXIST)
			return tr_seterr(err, errlen, errno, "%s: %s", what, strerror(errno));
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == ENOTDIR)
			return tr_seterr(err, errlen, e, "%s: a symbolic link or not a directory: "
					 "refused (the relay follows no link beneath its output "
					 "directory)", what);
		return tr_seterr(err, errlen, e, "%s: %s", what, strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0 || sb.st_uid != geteuid()) {
		close(fd);
		return tr_seterr(err, errlen, EPERM, "%s: another user's directory: refused (its "
				 "owner could redirect the relay's files)", what);
	}
	if (made)
		made_mode(r, fd, DIR_MODE);
	return fd;
}

/* In memory: the trace SESSION/HOST/TRACE, or NULL. */
static struct rtrace *trace_named(struct trawl_relay *r, const char *session, const char *host,
				  const char *trace)
{
	for (struct rsession *s = r->sessions; s; s = s->next) {
		if (strcmp(s->name, session) || strcmp(s->host, host))
			continue;
		for (size_t i = 0; i < s->ntraces; i++)
			if (strcmp(s->traces[i]->name, trace) == 0)
				return s->traces[i];
	}
	return NULL;
}

/*
 * t's directory (SESSION/HOST/TRACE, its index/ and its metadata file),
 * made at its first METADATA or STREAM: a producer that leaves before
 * either (an agent killed before any application came) leaves nothing on
 * the disk; an empty metadata file made readers refuse the whole
 * session, the other hosts' traces with it. 0, or -errno with err set.
 */
static int trace_make(struct trawl_relay *r, struct rconn *c, struct rtrace *t, char *err,
		      size_t errlen)
{
	if (t->made)
		return 0;
	if (!pool_make(r, c, 1))
		return tr_seterr(err, errlen, EMFILE, "the relay's descriptor pool is full (%d of %d "
				 "in use; --fd-pool-size)", r->nfds, r->fd_pool);
	struct rsession *s = t->session;
	char what[3 * 256 + 16];
	snprintf(what, sizeof(what), "%s", s->name);
	int sfd = subdir(r, root_fd(r), s->name, true, what, err, errlen), hfd = -1, tfd = -1;
	int ret = sfd;
	snprintf(what, sizeof(what), "%s/%s", s->name, s->host);
	if (sfd >= 0)
		ret = hfd = subdir(r, sfd, s->host, true, what, err, errlen);
	snprintf(what, sizeof(what), "%s/%s/%s", s->name, s->host, t->name);
	if (hfd >= 0 && mkdirat(hfd, t->name, DIR_MODE) < 0)
		ret = tr_seterr(err, errlen, errno, "%s%s: %s", what, errno == EEXIST ?
				" exists (another producer, or an earlier recording of this "
				"session)" : "", errno == EEXIST ? "choose another session name" :
				strerror(errno));
	else if (hfd >= 0)
		ret = tfd = subdir(r, hfd, t->name, false, what, err, errlen);
	if (tfd >= 0) {
		made_mode(r, tfd, DIR_MODE);
		int ifd = -1;
		if (mkdirat(tfd, "index", DIR_MODE) < 0 ||
		    (ifd = openat(tfd, "index", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			ret = tr_seterr(err, errlen, errno, "%s/index: %s", what, strerror(errno));
		else
			made_mode(r, ifd, DIR_MODE);
		if (ifd >= 0)
			close(ifd);
		if (ret >= 0) {
			t->meta_fd = openat(tfd, "metadata", O_RDWR | O_CREAT | O_EXCL | O_APPEND |
					    O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
			ret = t->meta_fd < 0 ? tr_seterr(err, errlen, errno, "%s/metadata: %s", what,
							 strerror(errno)) : 0;
		}
		if (ret < 0) {
			unlinkat(tfd, "index", AT_REMOVEDIR);
			unlinkat(hfd, t->name, AT_REMOVEDIR);
		}
	}
	if (tfd >= 0)
		close(tfd);
	if (hfd >= 0)
		close(hfd);
	if (sfd >= 0)
		close(sfd);
	if (ret < 0)
		return ret;
	made_mode(r, t->meta_fd, FILE_MODE);
	r->nfds++;
	t->made = true;
	return 0;
}

/* HELLO: a new trace (its directory made with its first METADATA or
 * STREAM: trace_make), or a producer back for its own (resume.c). */
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
	const char *sn = m->u.hello.session, *hn = m->u.hello.host, *tn = m->u.hello.trace;
	char *dir = NULL, what[3 * 256 + 16];
	int ret;
	if (asprintf(&dir, "%s/%s/%s/%s", r->output, sn, hn, tn) < 0)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	/* on the disk already? (looked at beneath the output, no link
	 * followed) */
	snprintf(what, sizeof(what), "%s", sn);
	int sfd = subdir(r, root_fd(r), sn, false, what, err, errlen), hfd = sfd;
	snprintf(what, sizeof(what), "%s/%s", sn, hn);
	if (sfd >= 0) {
		hfd = subdir(r, sfd, hn, false, what, err, errlen);
		close(sfd);
	}
	bool exists = false;
	if (hfd >= 0) {
		struct stat sb;
		exists = fstatat(hfd, tn, &sb, AT_SYMLINK_NOFOLLOW) == 0;
		close(hfd);
		snprintf(what, sizeof(what), "%s/%s/%s", sn, hn, tn);
		if (exists && !S_ISDIR(sb.st_mode)) {
			ret = tr_seterr(err, errlen, ENOTDIR, "%s: a symbolic link or not a "
					"directory: refused (the relay follows no link beneath its "
					"output directory)", what);
			free(dir);
			return ret;
		}
	} else if (hfd != -ENOENT) {
		free(dir);
		return hfd;
	}
	/* a trace is never written over: another producer's, or an earlier
	 * recording's; only its own producer may come back for it */
	struct rtrace *mem = trace_named(r, sn, hn, tn);
	if ((exists || mem) && (m->u.hello.flags & RELAY_HELLO_RESUME)) {
		ret = tr_relay_resume(c, m, dir, err, errlen);
		free(dir);
		return ret;
	}
	/* an ended trace that never made its directory left nothing: its
	 * name is free */
	if (exists || (mem && (mem->made || !mem->closed))) {
		ret = tr_seterr(err, errlen, EEXIST, "%s/%s/%s exists (another producer, or an "
				"earlier recording of this session): choose another session name",
				sn, hn, tn);
		free(dir);
		return ret;
	}
	struct rtrace *t = calloc(1, sizeof(*t));
	struct rsession *s = session_get(r, sn, hn, m->u.hello.live_timer_us);
	struct rtrace **tv = s ? realloc(s->traces, (s->ntraces + 1) * sizeof(*tv)) : NULL;
	if (tv)
		s->traces = tv;
	if (!t || !tv || !(t->name = strdup(tn))) {
		ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	if ((ret = tr_relay_quota_charge(r, s, 0, err, errlen)) < 0)
		goto err;
	if (!pool_make(r, c, 1)) {
		ret = tr_seterr(err, errlen, EMFILE, "the relay's descriptor pool is full (%d of %d "
				"in use; --fd-pool-size)", r->nfds, r->fd_pool);
		goto err;
	}
	t->meta_fd = -1;
	t->files_open = true;
	t->id = r->next_id++;
	t->dir = dir;
	t->session = s;
	memcpy(t->uuid, m->u.hello.uuid, sizeof(t->uuid));
	if (m->u.hello.live_timer_us)
		s->live_timer_us = m->u.hello.live_timer_us;
	s->traces[s->ntraces++] = t;
	c->trace = t;
	tr_relay_log(r, LOG_INFO, "%s: %s/%s/%s: recording into %s", c->peer, sn, hn, tn, dir);
	return 0;
err:
	if (t)
		free(t->name);
	free(t);
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

static int on_stream(struct rconn *c, struct rtrace *t, const struct relay_msg *m, char *err,
		     size_t errlen)
{
	struct trawl_relay *r = c->r;
	/* a resumed trace's streams are announced again: taken as they are */
	int ret = t->resumed ? tr_relay_stream_resume(t, m, err, errlen) : 1;
	if (ret <= 0)
		return ret;
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
	if (!pool_make(r, c, 2))
		return tr_seterr(err, errlen, EMFILE, "STREAM %s: the relay's descriptor pool is full "
				 "(%d of %d in use; --fd-pool-size)", m->u.stream.name, r->nfds,
				 r->fd_pool);
	/* one address holds at most half of the pool (three traces of 4096
	 * streams from one peer took it all) */
	if (!addr_fds_ok(c, 2))
		return tr_seterr(err, errlen, EMFILE, "STREAM %s: the connections from this "
				 "address hold half of the relay's descriptors already, their share",
				 m->u.stream.name);
	struct rstream *st = calloc(1, sizeof(*st));
	char *path = NULL, *spath = NULL;
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
	/* a resumed trace's stream the disk holds (resume.c): appended to */
	ret = t->resumed ? tr_relay_stream_reopen(t, st, err, errlen) : 1;
	if (ret < 0)
		goto err;
	if (ret == 1) {
		if ((ret = tr_relay_quota_charge(r, t->session, CTF_IDX_HEADER_LEN, err,
						 errlen)) < 0 || (ret = trace_make(r, c, t, err, errlen)) < 0)
			goto err;
		/* both files or neither: the stream's is removed when its
		 * index cannot be made */
		if ((ret = create_new(&path, &st->fd, err, errlen, "%s/%s", t->dir, st->name)) < 0)
			goto err;
		spath = path;
		made_mode(r, st->fd, FILE_MODE);
		if ((ret = create_new(&path, &st->idxfd, err, errlen, "%s/index/%s.idx", t->dir,
				      st->name)) < 0)
			goto err;
		made_mode(r, st->idxfd, FILE_MODE);
		uint8_t ih[CTF_IDX_HEADER_LEN];
		ctf_index_put_header(ih);
		if ((ret = tr_write_all(st->idxfd, ih, sizeof(ih))) < 0) {
			ret = tr_seterr(err, errlen, -ret, "%s: %s", path, strerror(-ret));
			unlink(path);
			goto err;
		}
		free(path);
		free(spath);
	}
	st->id = r->next_id++;
	st->handle = m->u.stream.handle;
	st->class_id = m->u.stream.class_id;
	st->trace = t;
	t->streams[t->nstreams++] = st;
	r->nfds += 2;
	tr_live_wake(r, t->session);
	return 0;
err:
	if (spath)
		unlink(spath);
	if (path != spath)
		free(path);
	free(spath);
	stream_free(st);
	return ret;
}

/* A trace's directory under the output (SESSION/HOST/TRACE): what a peer
 * is told, not where the relay writes. */
static const char *rel_dir(const struct trawl_relay *r, const struct rtrace *t)
{
	return tr_relay_rel(r, t->dir);
}

/* A write of st's failed (the disk full, a file too large): its files are
 * cut back at once to its last whole packet and its index entry, so that
 * readers read it whole while the relay runs (before, a half-written
 * packet stayed at the end until the relay's restart repaired it). */
static void stream_cut(struct trawl_relay *r, struct rstream *st)
{
	off_t ix = (off_t)CTF_IDX_HEADER_LEN + (off_t)st->npackets * CTF_IDX_ENTRY_LEN;
	if (ftruncate(st->fd, (off_t)st->size) < 0 || ftruncate(st->idxfd, ix) < 0)
		tr_relay_log(r, LOG_ERR, "%s/%s: cannot cut back to its last whole packet: %s",
			     st->trace->dir, st->name, strerror(errno));
}

static int on_packet(struct trawl_relay *r, struct rtrace *t, const struct relay_msg *m, char *err, size_t errlen)
{
	struct rstream *st = stream_by_handle(t, m->u.packet.handle);
	if (!st)
		return tr_seterr(err, errlen, EPROTO, "PACKET for unknown stream %u",
			      m->u.packet.handle);
	const struct ctf_index *ix = &m->u.packet.ix;
	/* sent again after a resume: the relay has it already */
	if (t->resumed && st->npackets && ix->seq < st->next_seq)
		return 0;
	if (ix->stream_id != st->class_id)
		return tr_seterr(err, errlen, EPROTO, "PACKET of %s: stream class %llu, not %llu",
			      st->name, (unsigned long long)ix->stream_id,
			      (unsigned long long)st->class_id);
	if (ix->ts_begin < st->beacon)
		return tr_seterr(err, errlen, EPROTO,
			      "PACKET of %s begins at %llu, before its beacon or previous packet "
			      "(%llu)", st->name, (unsigned long long)ix->ts_begin,
			      (unsigned long long)st->beacon);
	int ret = tr_relay_quota_charge(r, t->session, m->u.packet.size + CTF_IDX_ENTRY_LEN, err,
					errlen);
	if (ret < 0)
		return ret;
	ret = tr_write_all(st->fd, m->u.packet.data, m->u.packet.size);
	uint8_t e[CTF_IDX_ENTRY_LEN];
	ctf_index_put_entry(e, st->size, ix);
	if (!ret)
		ret = tr_write_all(st->idxfd, e, sizeof(e));
	if (ret) {
		stream_cut(r, st);
		return tr_seterr(err, errlen, -ret, "%s/%s: %s (the stream ends at its last whole "
				 "packet)", rel_dir(r, t), st->name, strerror(-ret));
	}
	st->size += m->u.packet.size;
	st->npackets++;
	st->discarded = ix->events_discarded;
	t->session->rx_bytes += m->u.packet.size;
	t->session->rx_packets++;
	t->session->rx_last_ms = tr_mono_ms();
	st->next_seq = ix->seq + 1;
	if (st->beacon < ix->ts_end)
		st->beacon = ix->ts_end;
	tr_live_wake(r, t->session);
	return 0;
}

/* What a producer is told of a refusal whose reason for the log is err:
 * a peer that has not authenticated (no secret, or not yet) is not told
 * the pool's size and use (issue 28: refusals said less to the log than
 * to any peer). */
static const char *peer_text(const struct rconn *c, int ret, const char *err)
{
	if (ret == -EMFILE && strstr(err, "--fd-pool-size") && !(c->r->secret && c->authed))
		return "the relay's descriptor pool is full; try again later";
	return err;
}

/* One message of a producer: 0, or -errno with the reason in err. */
static int producer_msg(struct rconn *c, const struct relay_msg *m, char *err, size_t errlen)
{
	struct trawl_relay *r = c->r;
	struct rtrace *t = c->trace;
	if (c->node || c->local)
		return tr_control_msg(c, m, err, errlen);	/* control.c */
	if (!t && m->type == RELAY_JOIN) {
		/* with a secret: the JOIN is taken once proven (auth.c) */
		if (r->secret && !c->authed)
			return tr_relay_auth_hello(c, m);
		return tr_control_msg(c, m, err, errlen);
	}
	if (!t && m->type != RELAY_HELLO && !(m->type == RELAY_AUTH && c->auth))
		return tr_seterr(err, errlen, EPROTO, "%s before HELLO", tr_relay_type_name(m->type));
	if (t && t->closed)
		return tr_seterr(err, errlen, EPROTO, "%s after CLOSE", tr_relay_type_name(m->type));
	switch (m->type) {
	case RELAY_AUTH:
	case RELAY_HELLO: {
		if (t)
			return tr_seterr(err, errlen, EPROTO, "a second HELLO");
		/* with a secret: the HELLO is taken once proven (auth.c) */
		struct relay_msg proven;
		if (m->type == RELAY_HELLO && r->secret && !c->authed)
			return tr_relay_auth_hello(c, m);
		if (m->type == RELAY_AUTH) {
			int ret = tr_relay_auth_answer(c, m, &proven, err, errlen);
			if (ret == -ENOMEM) {
				/* the relay failed (its memory, its own proof
				 * not queued), not the peer's login: logged as
				 * what it is, not as a refusal */
				tr_relay_log(r, LOG_ERR, "%s: %s; closed", c->peer, err);
				c->dead = true;
				return 0;
			}
			if (ret < 0) {
				/* refused with the reason; logged once per episode
				 * (a flood of bad proofs) */
				tr_relay_auth_log(c, err);
				tr_relay_refuse(c, -ret, err);
				return 0;
			}
			if (proven.type == RELAY_JOIN)	/* an agent's, proven */
				return tr_control_msg(c, &proven, err, errlen);
			m = &proven;
		}
		int ret = on_hello(c, m, err, errlen);
		/* the horizons of a trace whose streams come as threads do */
		uint32_t grant = !ret ? m->u.hello.flags & RELAY_HELLO_HORIZON : 0;
		if (grant)
			queue_granted(c, grant);
		else
			queue_status(c, RELAY_WELCOME, ret, ret ? peer_text(c, ret, err) : "");
		/* each HELLO says it again (a resume without it: no more) */
		if (!ret) {
			if (grant && !c->trace->has_horizon)
				c->trace->horizon = 0;	/* nothing announced yet */
			c->trace->has_horizon = grant != 0;
			c->trace->held_since = 0;
		}
		c->demand = !ret && (m->u.hello.flags & RELAY_HELLO_DEMAND);	/* live.c */
		if (ret) {
			tr_relay_log(r, LOG_WARNING, "%s: refused: %s", c->peer, err);
			c->closing = true;
		} else if (m->u.hello.flags & RELAY_HELLO_RESUME) {
			/* the metadata it has: a resumed producer sends the rest */
			uint8_t rep[RELAY_HDR_LEN + 8];
			relay_put_hdr(rep, RELAY_RESUMED, 8);
			put_le64(rep + RELAY_HDR_LEN, c->trace->meta_len);
			tr_rconn_queue(c, rep, sizeof(rep));
			c->resumable = true;
		}
		if (!ret && (m->u.hello.flags & RELAY_HELLO_COUNT))
			c->counts = true;
		return 0;
	}
	case RELAY_METADATA: {
		if (t->meta_len + m->u.meta.len > RELAY_METADATA_MAX)
			return tr_seterr(err, errlen, EFBIG, "METADATA: more than %u bytes in all",
				      RELAY_METADATA_MAX);
		int ret = tr_relay_quota_charge(r, t->session, m->u.meta.len, err, errlen);
		if (ret < 0 || (ret = trace_make(r, c, t, err, errlen)) < 0)
			return ret;
		ret = tr_write_all(t->meta_fd, m->u.meta.data, m->u.meta.len);
		if (ret) {
			/* no half of a chunk: the metadata as it was */
			if (ftruncate(t->meta_fd, (off_t)t->meta_len) < 0)
				tr_relay_log(r, LOG_ERR, "%s/metadata: cannot cut back: %s", t->dir,
					     strerror(errno));
			return tr_seterr(err, errlen, -ret, "%s/metadata: %s", rel_dir(r, t),
					 strerror(-ret));
		}
		t->meta_len += m->u.meta.len;
		tr_live_wake(r, t->session);
		return 0;
	}
	case RELAY_STREAM:
		return on_stream(c, t, m, err, errlen);
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
	case RELAY_HORIZON:
		if (!t->has_horizon)
			return tr_seterr(err, errlen, EPROTO, "HORIZON from a producer whose HELLO did "
				      "not ask to send them");
		c->horizon_asked = false;
		t->held_since = 0;
		if (m->u.horizon.ts > t->horizon) {
			t->horizon = m->u.horizon.ts;
			tr_live_wake(r, t->session);
		}
		return 0;
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
	c->r->wake_defer = true;
	while (off < c->inlen && !c->closing) {
		struct relay_msg m;
		ssize_t n = tr_relay_msg_parse(c->in + off, c->inlen - off, &m, err, sizeof(err));
		if (n == 0)
			break;
		/* the producer counts its messages from the first after its
		 * HELLO (and AUTH): those that reach a trace */
		bool counted = n > 0 && c->trace;
		int ret = n < 0 ? (int)n : producer_msg(c, &m, err, sizeof(err));
		if (ret == 0 && counted)
			c->written++;
		if (ret < 0) {
			tr_relay_log(c->r, LOG_WARNING, "%s: %s; connection closed", c->peer, err);
			/* not to garbage (an HTTP request, a message too large
			 * to read): to a producer's message */
			uint32_t type = get_le32(c->in + off);
			if (ret != -EMSGSIZE && (c->trace ? tr_relay_type_name(type)[0] != '?'
							  : type == RELAY_HELLO || type == RELAY_AUTH)) {
				queue_status(c, c->trace ? RELAY_ACK : RELAY_WELCOME, ret,
					     peer_text(c, ret, err));
				c->closing = true;	/* once it is sent */
			} else {
				c->dead = true;
			}
			break;
		}
		off += (size_t)n;
	}
	c->r->wake_defer = false;
	tr_live_wake_due(c->r);
	/* a resumable producer forgets what the relay has written: a PROGRESS
	 * after each read; one that only counts what a cut costs (its ACK says
	 * where) needs it only as a lower bound should the relay go without a
	 * word: every RELAY_PROGRESS_EVERY messages, else at the sweep (each
	 * PROGRESS is a send on loopback that wakes the producer: one a turn
	 * to 32 producers took a fifth of the relay's CPU) */
	if (off && c->trace && !c->closing) {
		if (c->resumable || (c->counts && c->written - c->progress_told >= RELAY_PROGRESS_EVERY))
			tr_relay_progress(c);
		else if (c->counts && c->written != c->progress_told)
			c->progress_due = true;
	}
	return (long)off;
}

/* A WELCOME refusing a producer (status -e, why cut at 255 bytes) in rep;
 * returns its length. */
#define REFUSAL_MAX (RELAY_HDR_LEN + 4 + 256)
static size_t refusal(uint8_t rep[REFUSAL_MAX], int e, const char *why)
{
	size_t ml = strlen(why) + 1;
	if (ml > 256)
		ml = 256;
	relay_put_hdr(rep, RELAY_WELCOME, (uint32_t)(4 + ml));
	put_le32(rep + RELAY_HDR_LEN, (uint32_t)-e);
	memcpy(rep + RELAY_HDR_LEN + 4, why, ml);
	rep[RELAY_HDR_LEN + 4 + ml - 1] = 0;
	return RELAY_HDR_LEN + 4 + ml;
}

/*
 * Ends c at once for a reason of the relay's (buffer full, disk full, a
 * quota, the pool): a producer's trace is told why in an ACK (its WELCOME
 * when before it) and the connection closed once that is sent; other
 * connections are closed. Nothing more of c's input is taken.
 */
static void queue_status(struct rconn *c, enum relay_type type, int status, const char *msg);
static void conn_cut(struct rconn *c, int e, const char *why)
{
	tr_relay_refused(c->r, tr_relay_refusal_of(e));
	if (c->kind == RC_PRODUCER && !c->node && !c->local && !c->closing) {
		queue_status(c, c->trace ? RELAY_ACK : RELAY_WELCOME, -e, why);
		c->closing = true;
		c->inlen = 0;
	} else if (!c->closing) {
		c->dead = true;
	}
}

/* ------------------------------------------------ peers that prove nothing */

/*
 * A connection is pending until its peer proved what it is (conn_proven):
 * until then it holds no more than a small fixed share of each pool (see
 * struct trawl_relay), for at most proof_ms from its connection (a viewer
 * re-sending TRAWL_CHALLENGE or a HELLO one byte a second gets no more),
 * and it goes first when a proven peer needs a descriptor or buffer.
 */
#define PENDING_READ 4096	/* a pending peer's reads: HELLOs and requests are small */
#define PENDING_MIN 8		/* the smallest cap of pending connections of a kind */
/* A pending connection this young is closed for a newcomer only when none
 * is older: a burst of real peers (64 producers started at once) has the
 * time to prove itself. */
#define PENDING_GRACE_MS 500

static bool conn_pending(const struct rconn *c)
{
	return !c->proven && !c->dead && c->fd >= 0 && !c->local;
}

/* Whether c proved what it is now (then it stays so). */
static void conn_check_proven(struct rconn *c)
{
	if (c->proven || c->dead)
		return;
	if (c->local || (c->authed && (c->kind == RC_PRODUCER ? c->trace || c->node :
				       tr_live_connected(c))))
		c->proven = true;
}

/* The pending connections' cap of a kind: max_pending, and at most a
 * quarter of the kind's limit (but that no lower than PENDING_MIN: a
 * burst of real peers has its places), and never more than a quarter of
 * the descriptor pool (both kinds together: half of it), however small;
 * at least 1. */
int tr_relay_pending_cap(const struct trawl_relay *r, enum rconn_kind kind)
{
	int cap = r->max_pending, q = (kind == RC_PRODUCER ? r->max_producers : r->max_viewers) / 4;
	if (q < PENDING_MIN)
		q = PENDING_MIN;
	if (q < cap)
		cap = q;
	if (r->fd_pool / 4 < cap)
		cap = r->fd_pool / 4;	/* before: the floor of 8 won over a small pool */
	return cap > 1 ? cap : 1;
}

/* Closes c at once (its descriptor back to the pool now; freed with the
 * other dead connections at the end of the loop's turn), a producer told
 * why in a WELCOME first (sent if its socket takes it). */
static void conn_evict(struct rconn *c, const char *why)
{
	if (c->kind == RC_PRODUCER && !c->trace) {
		uint8_t rep[REFUSAL_MAX];
		if (send(c->fd, rep, refusal(rep, EAGAIN, why), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* nothing more to do for it */
		}
	}
	epoll_ctl(c->r->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	pool_close(c->r, &c->fd);
	/* its input buffer back to the budget now too */
	c->r->buffered -= c->incap;
	free(c->in);
	c->in = NULL;
	c->inlen = c->incap = 0;
	c->dead = true;
	tr_relay_refused(c->r, RREF_UNPROVEN);
}

/* The oldest pending connection of kind (any kind: -1), other than
 * except, born before the time before (0: any); NULL when none. */
static struct rconn *pending_oldest(struct trawl_relay *r, int kind, const struct rconn *except,
				    int64_t before)
{
	struct rconn *old = NULL;
	for (struct rconn *c = r->conns; c; c = c->next)
		if (c != except && conn_pending(c) && (kind < 0 || (int)c->kind == kind) &&
		    (!before || c->born < before) && (!old || c->born < old->born))
			old = c;
	return old;
}

/* Closes the oldest pending connection (not except) for a proven peer's
 * need (what: a descriptor, input buffer): whether one was. */
static bool pending_evict_for(struct trawl_relay *r, const struct rconn *except, const char *what)
{
	struct rconn *old = pending_oldest(r, -1, except, 0);
	if (!old)
		return false;
	tr_relay_ratelog(r, &r->rl_evict, LOG_WARNING, "%s: closed before it proved anything: "
			 "a proven peer needed %s", old->peer, what);
	conn_evict(old, "the relay is busy; try again later");
	return true;
}

/* Room for n more descriptors in the pool, pending connections closed
 * for it if need be (not except). */
static bool pool_make(struct trawl_relay *r, const struct rconn *except, int n)
{
	while (!pool_has(r, n))
		if (!pending_evict_for(r, except, "a descriptor"))
			return false;
	return true;
}

/* What the connections from c's address hold, c's own included: the
 * descriptors (a connection's, and its trace's while open) in *fds, the
 * input buffers' bytes in *buf. */
static void addr_holds(const struct rconn *c, int *fds, size_t *buf)
{
	*fds = 0;
	*buf = 0;
	if (!c->has_addr)
		return;
	for (const struct rconn *d = c->r->conns; d; d = d->next) {
		if (!d->has_addr || memcmp(d->addr, c->addr, 16) != 0)
			continue;
		*fds += d->fd >= 0;
		*buf += d->incap;
		if (d->trace && d->trace->files_open)
			*fds += (d->trace->meta_fd >= 0) + 2 * (int)d->trace->nstreams;
	}
}

/* Whether c's address may take n more descriptors: one address holds at
 * most half of the pool. */
static bool addr_fds_ok(const struct rconn *c, int n)
{
	int fds;
	size_t buf;
	addr_holds(c, &fds, &buf);
	return !c->has_addr || fds + n <= c->r->fd_pool / 2 + 1;
}

/*
 * A newcomer from addr of kind: 0 to take it (the oldest pending
 * connection of its kind closed for it when they are at their cap), or -1
 * with the reason in why when its address has max_pending_addr pending.
 */
static int pending_admit(struct trawl_relay *r, enum rconn_kind kind, const uint8_t *addr,
			 char *why, size_t whylen)
{
	int from = 0, of_kind = 0;
	for (struct rconn *c = r->conns; c; c = c->next) {
		if (!conn_pending(c))
			continue;
		of_kind += c->kind == kind;
		from += c->has_addr && memcmp(c->addr, addr, 16) == 0;
	}
	if (from >= r->max_pending_addr) {
		snprintf(why, whylen, "%d connections from its address wait to prove themselves "
			 "already (at most %d)", from, r->max_pending_addr);
		return -1;
	}
	if (of_kind >= tr_relay_pending_cap(r, kind)) {
		const char *what = kind == RC_PRODUCER ? "producer" : "viewer";
		/* one that had its time first: a burst of real peers keeps its
		 * chance; else the oldest (an attacker that reconnects as fast
		 * as it is closed would otherwise hold every place) */
		struct rconn *old = pending_oldest(r, kind, NULL, tr_mono_ms() - PENDING_GRACE_MS);
		if (!old)
			old = pending_oldest(r, kind, NULL, 0);
		if (!old)
			return 0;
		tr_relay_ratelog(r, &r->rl_evict, LOG_WARNING, "%s: closed before it proved "
				 "anything: %d %ss were pending (at most %d), a newcomer came",
				 old->peer, of_kind, what, tr_relay_pending_cap(r, kind));
		conn_evict(old, "the relay is busy; try again later");
	}
	return 0;
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
	if (c->node || c->local)
		tr_control_conn_gone(c);
	tr_relay_auth_free(c);
	if (c->fd >= 0) {
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		pool_close(r, &c->fd);
	}
	r->buffered -= c->incap;
	free(c->in);
	free(c->out);
	if (c->kind == RC_PRODUCER)
		r->nproducers--;
	else
		r->nviewers--;
	free(c);
	r->nconns--;
	/* a viewer gone may have been the last of its session */
	files_sync(r);
}

/*
 * Makes room for need bytes in c's input, within the relay's limits: the
 * connection's (--max-conn-buffer) and all connections' together
 * (--max-total-buffer). Returns 0, or -1 with c closed and the reason in
 * the log.
 */
static int in_grow(struct rconn *c, size_t need)
{
	struct trawl_relay *r = c->r;
	if (need <= c->incap)
		return 0;
	size_t gran = need <= READ_CHUNK ? PENDING_READ : READ_CHUNK;
	size_t n = (need + gran - 1) / gran * gran;
	if (n > r->max_conn_buf)
		n = need > r->max_conn_buf ? need : r->max_conn_buf;
	char why[256];
	if (need > r->max_conn_buf) {
		tr_relay_log(r, LOG_WARNING, "%s: needs %zu bytes of input buffer, more than the "
			     "%zu a connection may hold (--max-conn-buffer); closed", c->peer, need,
			     r->max_conn_buf);
		snprintf(why, sizeof(why), "buffer full: a message of %zu bytes, more than the %zu "
			 "this relay buffers for a connection", need, r->max_conn_buf);
		conn_cut(c, ENOBUFS, why);
		return -1;
	}
	/* pending peers' buffers go first for a proven one's */
	while (r->buffered - c->incap + n > r->max_total_buf && c->proven &&
	       pending_evict_for(r, c, "input buffer"))
		;
	int afds;
	size_t abuf;
	addr_holds(c, &afds, &abuf);
	if (c->has_addr && abuf - c->incap + n > r->max_total_buf / 2) {
		tr_relay_ratelog(r, &r->rl_share, LOG_WARNING, "%s: needs %zu bytes of input buffer, "
				 "and the connections from its address hold %zu (at most half "
				 "of the relay's %zu, --max-total-buffer); closed", c->peer, n,
				 abuf - c->incap, r->max_total_buf);
		conn_cut(c, ENOBUFS, "buffer full: the connections from this address hold "
			 "their share of the relay's input buffers; try again later");
		return -1;
	}
	if (r->buffered - c->incap + n > r->max_total_buf) {
		tr_relay_ratelog(r, &r->rl_buffers, LOG_WARNING, "%s: needs %zu bytes of input buffer, "
				 "and the other connections hold %zu of the relay's %zu "
				 "(--max-total-buffer); closed", c->peer, n, r->buffered - c->incap,
				 r->max_total_buf);
		conn_cut(c, ENOBUFS, "buffer full: the relay's input buffers are in use; try "
			 "again later");
		return -1;
	}
	uint8_t *b = realloc(c->in, n);
	if (!b) {
		tr_relay_log(r, LOG_WARNING, "%s: out of memory for %zu bytes of input; closed",
			     c->peer, n);
		c->dead = true;
		return -1;
	}
	r->buffered = r->buffered - c->incap + n;
	c->in = b;
	c->incap = n;
	return 0;
}

void tr_relay_refuse(struct rconn *c, int e, const char *why)
{
	uint8_t rep[REFUSAL_MAX];
	tr_relay_refused(c->r, tr_relay_refusal_of(e));
	tr_rconn_queue(c, rep, refusal(rep, e, why));
	c->closing = true;
}

/*
 * Before its HELLO a producer may send only a HELLO, of at most HELLO_MAX
 * bytes: a stranger cannot make the relay buffer a 64 MiB message. 0, or
 * -1 with c refused: a HELLO too large with the reason in a WELCOME, any
 * other message closed at once (both in the log).
 */
static int before_hello(struct rconn *c)
{
	if (c->kind != RC_PRODUCER || c->trace || c->node || c->local || c->closing ||
	    c->inlen < RELAY_HDR_LEN)
		return 0;
	uint32_t type = get_le32(c->in), len = get_le32(c->in + 4);
	if ((type == RELAY_HELLO && len <= HELLO_MAX) || (type == RELAY_JOIN && len <= RELAY_JOIN_MAX))
		return 0;
	if (type == RELAY_AUTH && c->auth && len == RELAY_AUTH_LEN)
		return 0;	/* the answer to its challenge (auth.c) */
	if (type != RELAY_HELLO) {
		/* not a producer of this protocol: closed without a word, as
		 * any message that breaks it */
		tr_relay_log(c->r, LOG_WARNING, "%s: %s (%u bytes) before HELLO; connection closed",
			     c->peer, tr_relay_type_name(type), len);
		c->dead = true;
		return -1;
	}
	char why[200];
	snprintf(why, sizeof(why), "a HELLO of %u bytes (at most %d)", len, HELLO_MAX);
	tr_relay_log(c->r, LOG_WARNING, "%s: refused: %s", c->peer, why);
	tr_relay_refuse(c, EPROTO, why);
	return -1;
}

/* The bytes of the producer's message at the start of c->in once whole,
 * as its header says (0: no header yet, or a length the parser refuses). */
static size_t msg_whole(const struct rconn *c)
{
	if (c->kind != RC_PRODUCER || c->inlen < RELAY_HDR_LEN)
		return 0;
	uint32_t len = get_le32(c->in + 4);
	return len > RELAY_MSG_MAX ? 0 : RELAY_HDR_LEN + (size_t)len;
}

static void conn_read(struct rconn *c)
{
	/* a few reads per turn, each parsed at once: the buffer holds at most
	 * one message more than a read, and other connections get their turn
	 * (the epoll is level-triggered) */
	for (int i = 0; i < 16 && !c->dead; i++) {
		if (c->kind == RC_VIEWER && !tr_live_wants_input(c))
			break;	/* the epoll is level-triggered: later */
		/* room for the message begun, whole (its header says how
		 * large), or for one more read */
		size_t whole = msg_whole(c);
		/* the buffer grows as the message's bytes come (at most doubled
		 * each time, up to what its header declares), not at once to its
		 * declared length: four peers declaring 64 MiB and sending 1 KiB
		 * reserved the whole budget; a pending peer reads little */
		size_t chunk = conn_pending(c) ? PENDING_READ : READ_CHUNK;
		size_t need = c->inlen + chunk;
		if (whole > c->inlen) {
			size_t dbl = c->incap > chunk ? 2 * c->incap : need;
			need = dbl > need ? dbl : need;
			if (need > whole)
				need = whole;
		}
		if (in_grow(c, need) < 0)
			return;
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
		int64_t now = tr_mono_ms();
		c->last_rx = now;
		if (c->closing) {
			/* refused, or done: what more comes is dropped (a peer
			 * that sends on after its reason is closed: its socket
			 * has the reason) */
			c->inlen = 0;
			if (c->linger_until && (size_t)n > c->linger_left)
				c->dead = true;
			else if (c->linger_until)
				c->linger_left -= (size_t)n;
			continue;
		}
		c->inlen += (size_t)n;
		if (before_hello(c) < 0) {
			c->inlen = 0;
			break;
		}
		long used = c->kind == RC_PRODUCER ? producer_input(c) : tr_live_input(c);
		if (used < 0) {
			c->dead = true;
			return;
		}
		memmove(c->in, c->in + used, c->inlen - (size_t)used);
		c->inlen -= (size_t)used;
		conn_check_proven(c);
		/* the time a message takes counts from its first byte (the
		 * connection's first: from the connection) */
		if (used > 0)
			c->msg_since = c->inlen ? now : 0;
		else if (!c->msg_since && c->inlen)
			c->msg_since = now;
		if (c->kind == RC_VIEWER)
			files_sync(c->r);
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
		c->r->buffered -= c->incap;
		free(c->in);
		c->in = NULL;
		c->incap = 0;
	}
}

/* Closes every connection whose message takes longer than
 * --message-timeout, and every viewer silent longer than --idle-timeout.
 * A producer is never closed for silence: a session may record nothing
 * for hours, and a user-space trace has nothing to beacon before its
 * first application (TCP keepalive finds a machine that is gone). */
static void conn_sweep(struct trawl_relay *r, int64_t now)
{
	for (struct rconn *c = r->conns; c; c = c->next) {
		if (c->dead || c->fd < 0)
			continue;
		if (c->linger_until) {
			c->dead = now >= c->linger_until;
			continue;
		}
		if (c->progress_due && c->trace && !c->closing)
			tr_relay_progress(c);
		if (c->msg_since && now - c->msg_since > (int64_t)r->msg_timeout_ms) {
			const char *what = c->kind == RC_VIEWER ? "a request" :
					   c->trace ? "a message" : "its HELLO";
			tr_relay_log(r, LOG_WARNING, "%s: %s not whole after %u ms (--message-timeout, "
				     "%zu bytes came); closed", c->peer, what, r->msg_timeout_ms,
				     c->inlen);
			tr_relay_refused(r, RREF_TIMEOUT);
			c->dead = true;
			continue;
		}
		if (conn_pending(c) && now - c->born > (int64_t)r->proof_ms) {
			tr_relay_ratelog(r, &r->rl_pending, LOG_WARNING, "%s: proved nothing within "
					 "%u ms of its connection (its HELLO, JOIN, or a viewer's "
					 "authentication and CONNECT); closed", c->peer, r->proof_ms);
			conn_evict(c, "nothing proven in time; closed");
			continue;
		}
		if (tr_relay_auth_late(c, now, r->msg_timeout_ms)) {
			tr_relay_log(r, LOG_WARNING, "%s: no answer to its challenge after %u ms "
				     "(--message-timeout); closed", c->peer, r->msg_timeout_ms);
			tr_relay_refused(r, RREF_AUTH);
			c->dead = true;
			continue;
		}
		if (c->kind == RC_VIEWER && now - c->last_rx > (int64_t)r->idle_timeout_ms) {
			tr_relay_log(r, LOG_WARNING, "%s: nothing came for %lld ms (--idle-timeout); "
				     "closed", c->peer, (long long)(now - c->last_rx));
			tr_relay_refused(r, RREF_TIMEOUT);
			c->dead = true;
		}
	}
}

/*
 * When conn_sweep() next has something to do (ms; INT64_MAX: nothing):
 * the earliest of the connections' deadlines (a message's, a pending
 * peer's proof, a challenge's answer, a viewer's silence, a linger's
 * end), and while a PROGRESS is untold the next periodic sweep (SWEEP_MS
 * after the last). The loop sleeps until then, not every SWEEP_MS: an
 * idle relay wakes for nothing (docs/relay.md, "What an idle relay
 * costs"). Each connection's deadline is set as it changes (now plus a
 * timeout), and this is asked again before every wait.
 */
static int64_t sweep_due(struct trawl_relay *r, int64_t now)
{
	int64_t due = INT64_MAX;
#define AT(t) do { int64_t t_ = (t); if (t_ < due) due = t_; } while (0)
	for (const struct rconn *c = r->conns; c; c = c->next) {
		if (c->dead || c->fd < 0)
			continue;
		if (c->linger_until) {
			AT(c->linger_until);
			continue;
		}
		if (c->progress_due && c->trace && !c->closing) {
			if (r->next_sweep < now)	/* none for a while */
				r->next_sweep = now + SWEEP_MS;
			AT(r->next_sweep);
		}
		if (c->msg_since)
			AT(c->msg_since + (int64_t)r->msg_timeout_ms + 1);
		if (conn_pending(c))
			AT(c->born + (int64_t)r->proof_ms + 1);
		AT(tr_relay_auth_due(c, r->msg_timeout_ms));
		if (c->kind == RC_VIEWER)
			AT(c->last_rx + (int64_t)r->idle_timeout_ms + 1);
	}
#undef AT
	return due;
}

/* Turns the listeners on or off (out of descriptors). */
static void listeners_set(struct trawl_relay *r, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0 };
	ev.data.ptr = &r->dfd;
	epoll_ctl(r->epfd, EPOLL_CTL_MOD, r->dfd, &ev);
	ev.data.ptr = &r->lfd;
	epoll_ctl(r->epfd, EPOLL_CTL_MOD, r->lfd, &ev);
	if (r->ofd >= 0) {
		ev.data.ptr = &r->ofd;
		epoll_ctl(r->epfd, EPOLL_CTL_MOD, r->ofd, &ev);
	}
}

/* Refuses a connection just accepted, not the pool's: a producer gets a
 * WELCOME with the reason (it reads it after its HELLO), a viewer the
 * close (the live protocol has no word for it; the log has the reason). */
static void refuse_fd(int fd, enum rconn_kind kind, int e, const char *why)
{
	if (kind == RC_PRODUCER) {
		uint8_t rep[REFUSAL_MAX];
		if (send(fd, rep, refusal(rep, e, why), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* nothing more to do for it */
		}
	} else {
		/* a viewer: trawl's refusal in place of its first reply
		 * (live-proto.h); its first request, read if it came, so
		 * that the close does not reset the connection */
		uint8_t rep[LIVE_REFUSED_LEN], in[LIVE_REQ_HDR + LIVE_REQ_MAX];
		if (send(fd, rep, tr_live_refusal(rep, e, why), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* nothing more to do for it */
		}
		shutdown(fd, SHUT_WR);
		if (recv(fd, in, sizeof(in), MSG_DONTWAIT) < 0) {
			/* nothing came yet */
		}
	}
	close(fd);
}

/*
 * accept4() found no descriptor (the process's limit, or the system's).
 * The listener stays readable: accepting again at once would spin (the
 * relay did, at 100 % CPU, deaf to SIGTERM). So one newcomer is refused
 * with the spare descriptor given up for it, and the listeners rest until
 * a descriptor of the relay is freed or EMFILE_PAUSE_MS passed; one log
 * line per episode.
 */
static void out_of_fds(struct trawl_relay *r, int lfd, enum rconn_kind kind, int e)
{
	if (r->spare_fd >= 0) {
		close(r->spare_fd);
		r->spare_fd = -1;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			refuse_fd(fd, kind, EMFILE, "the relay is out of file descriptors");
			tr_relay_refused(r, RREF_OUT_OF_FDS);
		}
		r->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	tr_relay_ratelog(r, &r->rl_emfile, LOG_WARNING, "out of file descriptors (%s; the relay "
			 "holds %d for connections and files): refusing newcomers until one is "
			 "freed", e == ENFILE ? "the system's limit" : "RLIMIT_NOFILE", r->nfds);
	r->paused_until = tr_mono_ms() + EMFILE_PAUSE_MS;
	listeners_set(r, false);
}

static void conn_accept(struct trawl_relay *r, int lfd, enum rconn_kind kind)
{
	/* a bounded number per turn: the connections and the stop get theirs */
	for (int i = 0; i < 64 && !r->paused_until; i++) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE)
				out_of_fds(r, lfd, kind, errno);
			return;
		}
		char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";
		getnameinfo((struct sockaddr *)&sa, sl, host, sizeof(host), port, sizeof(port),
			    NI_NUMERICHOST | NI_NUMERICSERV);
		const char *what = kind == RC_PRODUCER ? "producer" : "viewer";
		int have = kind == RC_PRODUCER ? r->nproducers : r->nviewers;
		int max = kind == RC_PRODUCER ? r->max_producers : r->max_viewers;
		char why[200] = "";
		struct ratelog *rl = kind == RC_PRODUCER ? &r->rl_producers : &r->rl_viewers;
		int e = EUSERS;
		uint8_t a16[16] = { 0 };
		bool has_addr = true;
		if (sa.ss_family == AF_INET) {
			a16[10] = a16[11] = 0xff;
			memcpy(a16 + 12, &((struct sockaddr_in *)&sa)->sin_addr, 4);
		} else if (sa.ss_family == AF_INET6) {
			memcpy(a16, &((struct sockaddr_in6 *)&sa)->sin6_addr, 16);
		} else {
			has_addr = false;
		}
		enum rrefusal rr = RREF_FD_POOL;
		if (has_addr && pending_admit(r, kind, a16, why, sizeof(why)) < 0) {
			rl = &r->rl_pending;
			rr = RREF_PENDING;
		} else if (have >= max) {
			snprintf(why, sizeof(why), "the relay serves %d %ss already (--max-%ss)", have,
				 what, what);
			rr = kind == RC_PRODUCER ? RREF_PRODUCERS : RREF_VIEWERS;
		} else if (r->nconns >= r->max_conns) {
			snprintf(why, sizeof(why), "the relay serves %d connections already "
				 "(--max-conns)", r->nconns);
			rr = RREF_CONNS;
		} else if (!pool_has(r, 1)) {
			snprintf(why, sizeof(why), "the relay's descriptor pool is full (%d of %d in "
				 "use; --fd-pool-size)", r->nfds, r->fd_pool);
			rl = &r->rl_pool;
			e = EMFILE;
		}
		if (*why) {
			tr_relay_refused(r, rr);
			tr_relay_ratelog(r, rl, LOG_WARNING, "%s %s:%s refused: %s", what, host, port,
					 why);
			/* with a secret, a newcomer has proven nothing: it is told
			 * less than the log (the figures of the pools, the
			 * options) */
			refuse_fd(fd, kind, e, r->secret ? "the relay is busy; try again later" : why);
			continue;
		}
		/* a peer whose machine is gone (nothing answers) is closed
		 * after about 2 minutes, even if quiet (a producer: no idle
		 * timeout) */
		int one = 1, kidle = 60, kintvl = 10, kcnt = 6;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kidle, sizeof(kidle));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kintvl, sizeof(kintvl));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kcnt, sizeof(kcnt));
		char peer[sizeof(((struct rconn *)0)->peer)];
		snprintf(peer, sizeof(peer), "%s %s:%s", what, host, port);
		struct rconn *c = tr_relay_conn_add(r, fd, kind, peer);
		/* without a secret, or on the read-only open live port, a peer
		 * proves nothing (auth.c) */
		if (c) {
			c->authed = !r->secret || lfd == r->ofd;
			memcpy(c->addr, a16, 16);
			c->has_addr = has_addr;
		}
	}
}

struct rconn *tr_relay_conn_add(struct trawl_relay *r, int fd, enum rconn_kind kind,
				const char *peer)
{
	struct rconn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return NULL;
	}
	c->r = r;
	c->kind = kind;
	c->fd = fd;
	c->msg_since = c->last_rx = c->born = tr_mono_ms();
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	c->events = EPOLLIN;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		free(c);
		return NULL;
	}
	r->nfds++;
	c->next = r->conns;
	r->conns = c;
	r->nconns++;
	if (kind == RC_PRODUCER)
		r->nproducers++;
	else
		r->nviewers++;
	return c;
}

/* Listens on "[HOST:]PORT" (HOST default def_host); bound gets the
 * address really bound (port 0 picks a free one), *bport its port.
 * Returns the socket, or -errno with the reason in err. */
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
		session_free(r, s);
	}
	tr_relay_quota_clear(r);
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
	if (opt.max_conns < 0 || opt.max_producers < 0 || opt.max_viewers < 0 ||
	    opt.max_pending < 0 || opt.max_pending_per_addr < 0 ||
	    opt.fd_pool_size < 0 || (opt.max_conn_buffer && opt.max_conn_buffer < READ_CHUNK)) {
		errno = EINVAL;
		return NULL;
	}
	struct trawl_relay *r = calloc(1, sizeof(*r));
	if (!r || !(r->output = strdup(opt.output))) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->max_producers = opt.max_producers ? opt.max_producers : 1000;
	r->max_viewers = opt.max_viewers ? opt.max_viewers : 100;
	r->max_conns = opt.max_conns ? opt.max_conns : r->max_producers + r->max_viewers;
	r->fd_pool = opt.fd_pool_size ? opt.fd_pool_size : pool_default();
	r->max_conn_buf = opt.max_conn_buffer ? opt.max_conn_buffer :
			  RELAY_HDR_LEN + RELAY_MSG_MAX;
	r->max_total_buf = opt.max_total_buffer ? opt.max_total_buffer : (size_t)256 << 20;
	r->msg_timeout_ms = opt.msg_timeout_ms ? opt.msg_timeout_ms : 30000;
	r->idle_timeout_ms = opt.idle_timeout_ms ? opt.idle_timeout_ms : 300000;
	r->live_from_now = opt.live_from_now;
	r->live_hold_ms = opt.live_hold_ms ? opt.live_hold_ms : 1000;
	r->max_session_size = opt.max_session_size;
	if (o->sz > offsetof(struct trawl_relay_opts, disk_reserve))
		r->disk_reserve = opt.disk_reserve;
	r->max_pending = opt.max_pending > 0 ? opt.max_pending : 256;
	r->max_pending_addr = opt.max_pending_per_addr > 0 ? opt.max_pending_per_addr : 64;
	r->proof_ms = opt.proof_timeout_ms ? opt.proof_timeout_ms : 10000;
	r->log = opt.log;
	r->log_arg = opt.log_arg;
	r->dfd = r->lfd = r->stopfd = r->epfd = r->spare_fd = r->cfd = r->ofd = r->rootfd = -1;
	r->mfd = -1;
	r->gid = (gid_t)-1;
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
	c->authed = !r->secret;
	snprintf(c->peer, sizeof(c->peer), "%s (test)", kind == RC_PRODUCER ? "producer" : "viewer");
	c->next = r->conns;
	r->conns = c;
	r->nconns++;
	if (kind == RC_PRODUCER)
		r->nproducers++;
	else
		r->nviewers++;
	return c;
}

int tr_relay_conn_feed(struct rconn *c, const void *p, size_t n)
{
	if (c->dead || c->closing)
		return -1;
	if (in_grow(c, c->inlen + n) < 0)
		return -1;
	if (!n)
		return 0;
	memcpy(c->in + c->inlen, p, n);
	c->inlen += n;
	if (before_hello(c) < 0)
		return -1;
	long used = c->kind == RC_PRODUCER ? producer_input(c) : tr_live_input(c);
	if (used < 0) {
		c->dead = true;
		return -1;
	}
	memmove(c->in, c->in + used, c->inlen - (size_t)used);
	c->inlen -= (size_t)used;
	conn_check_proven(c);
	files_sync(c->r);
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

/* The group name or number g: 0 with *gid, or -errno with err set. */
static int group_of(const char *g, gid_t *gid, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(g, &end, 10);
	if (!*end && end != g && !errno && v < (gid_t)-1) {
		*gid = (gid_t)v;
		return 0;
	}
	struct group gr, *res = NULL;
	char buf[4096];
	int e = getgrnam_r(g, &gr, buf, sizeof(buf), &res);
	if (!res)
		return tr_seterr(err, errlen, e ? e : ENOENT, "group %s: %s", g,
				 e ? strerror(e) : "no such group");
	*gid = gr.gr_gid;
	return 0;
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
	ret = tr_relay_auth_init(r, opt.secret_file, err, errlen);
	if (ret < 0)
		goto err;
	ret = tr_net_listen(data, "127.0.0.1", TRAWL_RELAY_DATA_PORT, r->data_at, sizeof(r->data_at),
			&r->data_port, why, sizeof(why));
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "data port %s", why);
		goto err;
	}
	r->dfd = ret;
	ret = tr_net_listen(live, "127.0.0.1", TRAWL_RELAY_LIVE_PORT, r->live_at, sizeof(r->live_at),
			&r->live_port, why, sizeof(why));
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "live port %s", why);
		goto err;
	}
	r->lfd = ret;
	if (opt.live_open_addr) {
		ret = tr_net_listen(opt.live_open_addr, "127.0.0.1", TRAWL_RELAY_LIVE_PORT, r->open_at,
				sizeof(r->open_at), &r->open_port, why, sizeof(why));
		if (ret < 0) {
			tr_seterr(err, errlen, -ret, "open live port %s", why);
			goto err;
		}
		r->ofd = ret;
	}
	/* once the ports are ours: a relay that cannot start leaves nothing */
	ret = tr_mkdir_p(r->output);
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "%s: %s", r->output, strerror(-ret));
		goto err;
	}
	if (root_fd(r) < 0) {
		ret = tr_seterr(err, errlen, errno, "%s: %s", r->output, strerror(errno));
		goto err;
	}
	if (o->sz > offsetof(struct trawl_relay_opts, group) && opt.group && *opt.group &&
	    (ret = group_of(opt.group, &r->gid, err, errlen)) < 0)
		goto err;
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
	/* cluster control (control.c) */
	if (o->sz > offsetof(struct trawl_relay_opts, control) && opt.control && *opt.control) {
		if ((ret = tr_control_listen(r, opt.control, err, errlen)) < 0)
			goto err;
		ev.data.ptr = &r->cfd;
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->cfd, &ev) < 0)
			goto epoll_err;
	}
	ev.data.ptr = &r->ofd;
	if (r->ofd >= 0 && epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->ofd, &ev) < 0)
		goto epoll_err;
	/* metrics (metrics.c): last, once the live port is bound */
	if (o->sz > offsetof(struct trawl_relay_opts, metrics_addr) && opt.metrics_addr &&
	    (ret = tr_relay_metrics_start(r, opt.metrics_addr, opt.metrics_token,
					  opt.metrics_top_k, err, errlen)) < 0)
		goto err;
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

const char *trawl_relay_live_open_addr(const struct trawl_relay *r)
{
	return r && r->ofd >= 0 ? r->open_at : NULL;
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
	r->next_sweep = tr_mono_ms() + SWEEP_MS;
	tr_relay_metrics_snap(r);	/* scrapes wait for the loop from now */
	while (!quit) {
		struct epoll_event evs[64];
		/* until the first thing that has a time: a connection's
		 * timeout (sweep_due), a held request's end (tr_live_due), a
		 * node's ping or an answer's deadline (tr_control_due), the
		 * listeners' rest; with none, until input comes */
		int64_t now = tr_mono_ms();
		if (r->paused_until && now >= r->paused_until) {
			r->paused_until = 0;
			listeners_set(r, true);
		}
		int64_t sweep_at = sweep_due(r, now), due = sweep_at, t;
		if ((t = tr_live_due(r, now)) < due)
			due = t;
		if ((t = tr_control_due(r)) < due)
			due = t;
		if (r->paused_until && r->paused_until < due)
			due = r->paused_until;
		int wait = due == INT64_MAX ? -1 : due <= now ? 0 :
			   due - now > INT32_MAX ? INT32_MAX : (int)(due - now);
		int n = epoll_wait(r->epfd, evs, 64, wait);
		if (n < 0 && errno != EINTR) {
			status = -errno;
			tr_relay_log(r, LOG_ERR, "epoll: %s", strerror(errno));
			break;
		}
		/* Two passes: first the listeners, the viewers and the peers
		 * still proving themselves (small messages, each a round trip
		 * someone waits on), then the proven producers' data (up to
		 * 1 MiB each a turn): a handshake waits for no more than one
		 * turn of bulk data, even when 64 producers stream at once on
		 * CPUs they share with the relay. A connection read in the
		 * first pass (it was pending) is not read again in the second. */
		bool bulk_later[64];
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			bool lst = p == &r->dfd || p == &r->lfd || p == &r->cfd || p == &r->ofd ||
				   p == &r->stopfd || p == &r->mfd;
			const struct rconn *c = p;
			bulk_later[i] = !lst && c->kind == RC_PRODUCER && c->proven;
		}
		for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (bulk_later[i] != (pass == 1))
				continue;
			if (p == &r->dfd) {
				conn_accept(r, r->dfd, RC_PRODUCER);
			} else if (p == &r->lfd) {
				conn_accept(r, r->lfd, RC_VIEWER);
			} else if (p == &r->cfd) {
				tr_control_accept(r);
			} else if (p == &r->ofd) {
				conn_accept(r, r->ofd, RC_VIEWER);
			} else if (p == &r->mfd) {
				tr_relay_metrics_snap(r);
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
		now = tr_mono_ms();
		tr_control_tick(r, now);
		if (now >= sweep_at) {
			conn_sweep(r, now);
			r->next_sweep = now + SWEEP_MS;
		}
		tr_relay_metrics_tick(r, now);
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
	tr_relay_metrics_stopped(r);
	state_clear(r);
	if (r->paused_until) {
		r->paused_until = 0;
		listeners_set(r, true);
	}
	return status;
}

void trawl_relay_free(struct trawl_relay *r)
{
	if (!r)
		return;
	tr_relay_metrics_free(r);
	state_clear(r);
	tr_control_free(r);
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
	if (r->ofd >= 0)
		close(r->ofd);
	if (r->rootfd >= 0)
		close(r->rootfd);
	if (r->secret) {
		tr_auth_wipe(r->secret);
		free(r->secret);
	}
	free(r->output);
	free(r);
}

/* ------------------------------------- for resume.c and quota.c */

bool tr_relay_pool_has(const struct trawl_relay *r, int n)
{
	return pool_has(r, n);
}

struct rsession *tr_relay_session_get(struct trawl_relay *r, const char *name, const char *host,
				      uint64_t live_us)
{
	return session_get(r, name, host, live_us);
}

void tr_relay_trace_files_close(struct trawl_relay *r, struct rtrace *t)
{
	trace_files_close(r, t);
}
