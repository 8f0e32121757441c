/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/agent.c - the agent object (include/trawl/agent.h,
 * docs/agent.md): its options, the listening socket, and its one loop.
 *
 * One thread runs the loop: the listening socket, the applications' and
 * the clients' connections (SOCK_SEQPACKET, lib/ust/proto.h; conn.c), and,
 * while a session records, a tick every flush_ms that drains the
 * applications' ring buffers into the session's trace (drain.c); while
 * none of them moves, one at the live tick (or every second) and when an
 * application says it committed again (tr_drain_wait).
 * trawl_agent_stop() wakes the loop through an eventfd, so that a signal
 * handler or another thread can end it; the loop then stops the sessions
 * that record (their traces are completed) and returns. Kernel events go
 * through the program's table (kernel.c); whatever the agent has to say
 * goes to the program's log hook.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent-internal.h"
#include "ust/proto.h"
#include "util/escape.h"

void tr_agent_log(struct trawl_agent *a, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (!a->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* peers' strings among it (a relay's reason, an application's
	 * name): no control character reaches a terminal or a log */
	tr_escape_ctl(msg, sizeof(msg));
	a->o.log(a->o.log_arg, level, msg);
}

/* Listens on a->socket; its directory is made if missing (private, or
 * world-reachable for a system-wide agent). 0 or -errno with a message. */
static int listen_on(struct trawl_agent *a, char *err, size_t errlen)
{
	const char *path = a->socket;
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return tr_seterr(err, errlen, ENAMETOOLONG, "socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	char dir[sizeof(sa.sun_path)];
	strcpy(dir, path);
	char *sl = strrchr(dir, '/');
	if (sl && sl != dir) {
		*sl = 0;
		if (mkdir(dir, a->o.world ? 0755 : 0700) < 0 && errno != EEXIST)
			return tr_seterr(err, errlen, errno, "cannot create %s: %s", dir, strerror(errno));
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return tr_seterr(err, errlen, errno, "socket: %s", strerror(errno));
	int b = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (b < 0 && errno == EADDRINUSE) {
		/* a live agent, or a stale socket? */
		int t = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (t >= 0 && connect(t, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(t);
			close(fd);
			return tr_seterr(err, errlen, EADDRINUSE, "an agent is already listening on %s",
				      path);
		}
		if (t >= 0)
			close(t);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
		b = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (b < 0 || listen(fd, 64) < 0) {
		int e = errno;
		close(fd);
		return tr_seterr(err, errlen, e, "cannot listen on %s: %s", path, strerror(e));
	}
	if (a->o.world)
		chmod(path, 0666);	/* any user's applications register */
	struct stat st;
	if (stat(path, &st) == 0) {
		a->sock_dev = st.st_dev;
		a->sock_ino = st.st_ino;
	}
	a->lfd = fd;
	return 0;
}

/* SCHED_FIFO for the calling thread, where permitted: the drain is short
 * and periodic, and real time it is never kept waiting by the busy threads
 * of a loaded machine (its write queue's thread takes the same; children
 * and the kernel recorder's reader go back to normal). */
static void take_rt(struct trawl_agent *a)
{
	if (a->o.rt_prio <= 0)
		return;
	struct sched_param sp = { .sched_priority = a->o.rt_prio };
	a->rt_ok = sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0;
	a->rt_err = a->rt_ok ? 0 : errno;
}

/* The oneshot session: created from its settings and started. */
static int oneshot(struct trawl_agent *a, char *err, size_t errlen)
{
	char why[512] = "";
	struct session *s = tr_session_new(a, "oneshot", why, sizeof(why));
	if (!s)
		return tr_seterr(err, errlen, EINVAL, "%s", why);
	int r = 0;
	for (size_t i = 0; i < a->o.noneshot && !r; i++)
		r = tr_setting_apply(s, a->o.oneshot[i], why, sizeof(why));
	if (!r)
		r = tr_session_check(s, why, sizeof(why));
	if (r < 0) {
		tr_session_free(s);
		return tr_seterr(err, errlen, -r, "%s", why);
	}
	tr_session_add(s);
	r = tr_session_start(s, why, sizeof(why));
	return r < 0 ? tr_seterr(err, errlen, -r, "%s", why) : 0;
}

struct trawl_agent *trawl_agent_new(const struct trawl_agent_opts *opts, char *err, size_t errlen)
{
	struct trawl_agent *a = NULL;
	int r = -EINVAL;
	if (err && errlen)
		err[0] = 0;
	if (!opts || opts->sz < offsetof(struct trawl_agent_opts, world) || !opts->socket) {
		tr_seterr(err, errlen, EINVAL, "no socket to listen on");
		goto err;
	}
	/* a newer caller's fields this library does not know must be unset */
	for (size_t i = sizeof(*opts); i < opts->sz; i++)
		if (((const char *)opts)[i]) {
			r = tr_seterr(err, errlen, E2BIG, "options this library does not know");
			goto err;
		}
	const struct trawl_agent_kernel *k = opts->sz > offsetof(struct trawl_agent_opts, kernel) ?
					     opts->kernel : NULL;
	/* snapshot() came later, and is optional (tr_kernel_flight) */
	if (k && (k->sz < offsetof(struct trawl_agent_kernel, snapshot) || !k->check || !k->create || !k->start || !k->stop ||
		  !k->clock || !k->clock_name || !k->destroy)) {
		tr_seterr(err, errlen, EINVAL, "the kernel table lacks operations");
		goto err;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		r = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	memcpy(&a->o, opts, opts->sz < sizeof(a->o) ? opts->sz : sizeof(a->o));
	a->o.sz = sizeof(a->o);
	a->lfd = a->wakefd = -1;
	a->next_key = 1;
	if (!a->o.flush_ms)
		a->o.flush_ms = 2;
	a->wait_ms = (int)a->o.flush_ms;
	if (!a->o.start_timeout_ms)
		a->o.start_timeout_ms = 3000;
	a->socket = strdup(opts->socket);
	a->msgbuf = malloc(AM_MSG_MAX);
	if (!a->socket || !a->msgbuf) {
		r = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	a->o.socket = a->socket;
	a->o.host = NULL;	/* copied below; the caller's strings are not kept */
	if (opts->host && *opts->host)
		snprintf(a->hostname, sizeof(a->hostname), "%s", opts->host);
	else if (gethostname(a->hostname, sizeof(a->hostname) - 1) < 0 || !*a->hostname)
		strcpy(a->hostname, "localhost");
	a->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->wakefd < 0) {
		r = tr_seterr(err, errlen, errno, "eventfd: %s", strerror(errno));
		goto err;
	}
	/* before any session exists: the threads its writers start take the
	 * loop's scheduling */
	take_rt(a);
	if ((r = listen_on(a, err, errlen)) < 0)
		goto err;
	/* cluster control: the relay to join (join.c) */
	if (a->o.relay && *a->o.relay && (r = tr_join_new(a, a->o.relay, err, errlen)) < 0)
		goto err;
	a->o.relay = NULL;	/* the caller's string is not kept */
	/* (a->o was zeroed beyond a shorter caller's opts) */
	struct stat rst;
	if (a->o.root && *a->o.root && (!(a->root = realpath(a->o.root, NULL)) ||
					stat(a->root, &rst) < 0 || !S_ISDIR(rst.st_mode))) {
		r = tr_seterr(err, errlen, a->root ? ENOTDIR : errno, "trace root %s: %s",
			      a->o.root, a->root ? "not a directory" : strerror(errno));
		goto err;
	}
	a->o.root = NULL;
	if (a->o.oneshot && (r = oneshot(a, err, errlen)) < 0)
		goto err;
	a->o.oneshot = NULL;
	a->o.noneshot = 0;
	if (a->o.metrics_addr && (r = tr_agent_metrics_start(a, a->o.metrics_addr,
							     a->o.metrics_token, err, errlen)) < 0)
		goto err;
	a->o.metrics_addr = a->o.metrics_token = NULL;	/* not kept */
	return a;
err:
	trawl_agent_free(a);
	errno = -r;
	return NULL;
}

void trawl_agent_stop(struct trawl_agent *a)
{
	int saved = errno;
	uint64_t one = 1;
	/* partner: the acquire load at the top of the loop */
	__atomic_store_n(&a->quit, 1, __ATOMIC_RELEASE);
	(void)!write(a->wakefd, &one, sizeof(one));
	errno = saved;
}

void tr_agent_wake(void *agent)
{
	struct trawl_agent *a = agent;
	int saved = errno;
	uint64_t one = 1;
	(void)!write(a->wakefd, &one, sizeof(one));
	errno = saved;
}

uint64_t tr_agent_settle(struct trawl_agent *a)
{
	uint64_t t = tr_mono_ns();
	/* applications only: a client's verbs wait for the loop's turn, and a
	 * connection that has not said what it is has no buffer yet */
	for (struct conn *c = a->conns; c; c = c->next)
		if (c->type == C_APP && !c->closing && !tr_conn_read(c))
			c->closing = true;
	return t;
}

static void accept_all(struct trawl_agent *a)
{
	for (;;) {
		int cfd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (cfd < 0)
			return;
		struct conn *c = calloc(1, sizeof(*c));
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		if (!c || getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
			free(c);
			close(cfd);
			continue;
		}
		c->a = a;
		c->fd = cfd;
		c->uid = cr.uid;
		c->pid = cr.pid;
		c->next = a->conns;
		a->conns = c;
	}
}

/* One turn: wait (flush_ms while recording and busy, else up to the next
 * live tick or a second: tr_drain_wait), accept,
 * read, close, drain, answer. 0 or -errno. */
static int turn(struct trawl_agent *a, struct pollfd **ppf, struct conn ***ppc, size_t *cap)
{
	size_t n = 2;
	for (struct conn *c = a->conns; c; c = c->next)
		n++;
	size_t nconn = n;
	n += tr_join_nfds(a);
	if (n > *cap) {
		size_t nc = n * 2;
		struct pollfd *pf = realloc(*ppf, nc * sizeof(*pf));
		if (pf)
			*ppf = pf;
		struct conn **pc = realloc(*ppc, nc * sizeof(*pc));
		if (pc)
			*ppc = pc;
		if (!pf || !pc)
			return -ENOMEM;
		*cap = nc;
	}
	struct pollfd *pf = *ppf;
	struct conn **pc = *ppc;
	pf[0] = (struct pollfd){ a->quitting ? -1 : a->lfd, POLLIN, 0 };
	pf[1] = (struct pollfd){ a->wakefd, POLLIN, 0 };
	size_t i = 2;
	for (struct conn *c = a->conns; c; c = c->next, i++) {
		pf[i] = (struct pollfd){ c->fd, POLLIN, 0 };
		pc[i] = c;
	}
	size_t nj = tr_join_fill(a, pf + nconn);	/* join.c: the relay joined */
	n = nconn + nj;
	/* recording: flush_ms, or longer while every ring is quiet and the
	 * applications wake the loop at their next event (tr_drain_wait) */
	struct session *rec = tr_recording(a);
	int wait = a->quitting ? (int)a->o.flush_ms : rec ? a->wait_ms : 1000;
	int pr = poll(pf, n, wait);
	if (pr < 0 && errno != EINTR)
		return -errno;
	if (pr > 0 && (pf[1].revents & POLLIN)) {
		uint64_t v;
		(void)!read(a->wakefd, &v, sizeof(v));
	}
	if (pr > 0 && (pf[0].revents & POLLIN))
		accept_all(a);
	for (size_t k = 2; pr > 0 && k < nconn; k++)
		if (pf[k].revents && !tr_conn_read(pc[k]))
			pc[k]->closing = true;
	if (pr > 0)
		tr_join_events(a, pf + nconn, nj);
	for (struct conn **pp = &a->conns; *pp;) {
		struct conn *c = *pp;
		if (c->closing) {
			*pp = c->next;
			tr_conn_close(c);
		} else {
			pp = &c->next;
		}
	}
	rec = tr_recording(a);
	a->wait_ms = (int)a->o.flush_ms;
	if (rec) {
		tr_drain(rec);
		a->wait_ms = tr_drain_wait(rec, (int)a->o.flush_ms);
	}
	tr_check_waiters(a);
	tr_agent_metrics_turn(a);
	return 0;
}

/* Closes the connections, frees the sessions, removes the socket (if it is
 * still ours). Returns the first session's write error, or 0. */
static int teardown(struct trawl_agent *a)
{
	int ret = 0;
	tr_join_free(a);
	for (struct session *s = a->sessions; s; s = s->next)
		if (s->err && !ret)
			ret = s->err;
	while (a->conns) {
		struct conn *c = a->conns;
		a->conns = c->next;
		tr_conn_close(c);
	}
	while (a->sessions) {
		struct session *s = a->sessions;
		a->sessions = s->next;
		tr_session_free(s);
	}
	if (a->lfd >= 0) {
		struct stat now;
		if (stat(a->socket, &now) == 0 && now.st_ino == a->sock_ino &&
		    now.st_dev == a->sock_dev)
			unlink(a->socket);
		close(a->lfd);
		a->lfd = -1;
	}
	return ret;
}

int trawl_agent_run(struct trawl_agent *a)
{
	struct pollfd *pf = NULL;
	struct conn **pc = NULL;
	size_t cap = 0;
	int ret = 0;
	take_rt(a);
	tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "listening on %s", a->socket);
	if (a->rt_ok)
		tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "drain loop at SCHED_FIFO priority %d",
			     a->o.rt_prio);
	else if (a->rt_err)
		tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "drain loop at normal priority (SCHED_FIFO: %s)",
			     strerror(a->rt_err));
	for (;;) {
		/* partner: the release store in trawl_agent_stop() */
		if (__atomic_load_n(&a->quit, __ATOMIC_ACQUIRE) && !a->quitting) {
			a->quitting = true;
			for (struct session *s = a->sessions; s; s = s->next)
				if (s->state == S_ACTIVE)
					tr_session_stop(s);
		}
		if (a->quitting && !tr_recording(a))
			break;
		if ((ret = turn(a, &pf, &pc, &cap)) < 0) {
			tr_agent_log(a, TRAWL_AGENT_LOG_ERR, "%s", strerror(-ret));
			break;
		}
	}
	free(pf);
	free(pc);
	tr_agent_metrics_stopped(a);
	int r = teardown(a);
	tr_agent_log(a, TRAWL_AGENT_LOG_INFO, "exiting");
	return ret ? ret : r;
}

void trawl_agent_free(struct trawl_agent *a)
{
	if (!a)
		return;
	tr_agent_metrics_free(a);
	teardown(a);
	if (a->wakefd >= 0)
		close(a->wakefd);
	free(a->msgbuf);
	free(a->socket);
	free(a->root);
	free(a);
}
