/* SPDX-License-Identifier: MIT */
/*
 * The application side of the agent protocol (proto.h, docs/agent.md).
 *
 * At the first tracepoint registration (a constructor) the application
 * tries to connect to the agent's socket: TRAWL_AGENT_SOCKET, else the
 * per-user socket, else the system-wide one. Without an agent that is a
 * socket() and a failed connect(), and nothing else happens: no thread, no
 * file. With one, it says HELLO, applies the sessions the agent starts
 * (START: an agent session, see tr_ust_remote_start) and waits for READY, at
 * most TRAWL_AGENT_TIMEOUT_MS (default 3000) ms, so that events emitted by
 * main() are recorded; then a listener thread (every signal blocked)
 * handles START and STOP.
 *
 * Everything sent to the agent is sent with tr_ust_lock held (the senders are
 * called from lib/ust under it), so messages never interleave; sends do not
 * block for long: an agent that does not read for a second is dropped.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "ust-internal.h"
#include "util/clock.h"

static int agent_fd = -1;		/* guarded by tr_ust_lock */
static pthread_once_t app_once = PTHREAD_ONCE_INIT;
/* messages are built here, under tr_ust_lock */
static uint8_t sbuf[AM_MSG_MAX];

/* The default socket paths (docs/agent.md); shared with the agent. */
int tr_ust_agent_path(char *buf, size_t len, bool system)
{
	if (system)
		return snprintf(buf, len, "/run/trawl/agent.sock");
	const char *x = secure_getenv("XDG_RUNTIME_DIR");
	if (x && *x == '/')
		return snprintf(buf, len, "%s/trawl/agent.sock", x);
	return snprintf(buf, len, "/tmp/trawl-%u/agent.sock", (unsigned)getuid());
}

static int try_connect(const char *path)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_agent(void)
{
	char p[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	const char *e = secure_getenv("TRAWL_AGENT_SOCKET");
	if (e)		/* set: this one only ("" never registers) */
		return *e ? try_connect(e) : -1;
	int fd = -1;
	if (tr_ust_agent_path(p, sizeof(p), false) < (int)sizeof(p))
		fd = try_connect(p);
	if (fd < 0 && tr_ust_agent_path(p, sizeof(p), true) < (int)sizeof(p))
		fd = try_connect(p);
	return fd;
}

/* Sends one message (and fd, if >= 0); tr_ust_lock held. An agent that does
 * not take it within about a second is given up (shut down: the listener
 * then stops the session). Async-signal-safe; preserves errno. */
static bool send_msg(const void *m, size_t len, int fd)
{
	int saved = errno;
	bool ok = false;
	if (agent_fd < 0 || !len)
		goto out;
	struct iovec iov = { (void *)m, len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	for (int i = 0; i < 100;) {
		ssize_t n = sendmsg(agent_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n == (ssize_t)len) {
			ok = true;
			goto out;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n >= 0 || errno != EAGAIN)
			break;
		struct pollfd p = { agent_fd, POLLOUT, 0 };
		poll(&p, 1, 10);
		i++;
	}
	shutdown(agent_fd, SHUT_RDWR);
out:
	errno = saved;
	return ok;
}

void tr_ust_app_send_evreg(const struct trawl_tp_event *ev)
{
	if (agent_fd < 0)
		return;
	struct am_wr w;
	struct am_evreg e = { ev->loglevel };
	char name[512];
	snprintf(name, sizeof(name), "%s:%s", ev->provider, ev->name);
	am_wr_init(&w, sbuf, sizeof(sbuf), AM_EVREG);
	am_put(&w, &e, sizeof(e));
	am_put_str(&w, name);
	send_msg(sbuf, am_wr_done(&w), -1);
}

void tr_ust_app_send_evdesc(uint64_t key, const struct trawl_tp_event *ev)
{
	if (agent_fd < 0)
		return;
	struct am_wr w;
	struct am_evdesc d = { key, ev->id, ev->loglevel, 0 };
	for (const struct trawl_tp_field *f = ev->fields; f && f->name; f++)
		d.nfields++;
	am_wr_init(&w, sbuf, sizeof(sbuf), AM_EVDESC);
	am_put(&w, &d, sizeof(d));
	am_put_str(&w, ev->provider);
	am_put_str(&w, ev->name);
	for (const struct trawl_tp_field *f = ev->fields; f && f->name; f++) {
		uint8_t b[4] = { f->kind, f->size, f->sign, f->base };
		am_put_str(&w, f->name);
		am_put(&w, b, 4);
		am_put(&w, &f->length, 4);
		if (f->kind == TRAWL_TP_ENUM) {
			uint32_t n = f->enm ? (uint32_t)f->enm->n : 0;
			am_put_str(&w, f->enm ? f->enm->provider : "");
			am_put_str(&w, f->enm ? f->enm->name : "");
			am_put(&w, &n, 4);
			for (uint32_t i = 0; i < n; i++) {
				am_put_str(&w, f->enm->entries[i].label);
				am_put(&w, &f->enm->entries[i].lo, 8);
				am_put(&w, &f->enm->entries[i].hi, 8);
			}
		}
	}
	send_msg(sbuf, am_wr_done(&w), -1);
}

void tr_ust_app_send_buf(uint64_t key, int32_t tid, int fd)
{
	struct {
		struct am_hdr h;
		struct am_buf b;
	} m;
	memset(&m, 0, sizeof(m));
	m.h.type = AM_BUF;
	m.h.len = sizeof(m);
	m.b.session = key;
	m.b.tid = tid;
	send_msg(&m, sizeof(m), fd);
}

void tr_ust_app_wake(struct ust_shm *h)
{
	/* one commit takes the flag: one message per sleep of the agent */
	if (__atomic_exchange_n(&h->wake, 0, __ATOMIC_RELAXED))
		tr_ust_app_wake_msg();
}

void tr_ust_app_wake_msg(void)
{
	/* an event in a signal handler that interrupted the lock's holder
	 * (or its taking): no message, the agent wakes at its timer */
	if (tr_ust_lock_mine())
		return;
	int saved = errno;
	struct am_hdr m = { AM_WAKE, sizeof(m) };
	tr_ust_lock_take();	/* agent_fd stays this connection's meanwhile */
	if (agent_fd >= 0)
		(void)!send(agent_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
	tr_ust_lock_give();
	errno = saved;
}

static void send_ack(uint64_t key, uint32_t what, int status)
{
	struct {
		struct am_hdr h;
		struct am_ack a;
	} m;
	memset(&m, 0, sizeof(m));
	m.h.type = AM_ACK;
	m.h.len = sizeof(m);
	m.a.session = key;
	m.a.what = what;
	m.a.status = status;
	tr_ust_lock_take();
	send_msg(&m, sizeof(m), -1);
	tr_ust_lock_give();
}

static void on_start(const uint8_t *msg, size_t len)
{
	struct am_rd r;
	struct am_start st;
	am_rd_init(&r, msg, len);
	am_get(&r, &st, sizeof(st));
	int ret = -EINVAL;
	const char **globs = NULL;
	int *ll = NULL;
	if (r.bad || st.nglobs > 65536)
		goto out;
	ret = -ENOMEM;
	globs = calloc(st.nglobs + 1, sizeof(*globs));
	ll = calloc(st.nglobs + 1, sizeof(*ll));
	if (!globs || !ll)
		goto out;
	for (uint32_t i = 0; i < st.nglobs; i++) {
		int32_t l;
		am_get(&r, &l, 4);
		ll[i] = l;
		globs[i] = am_get_str(&r);
	}
	ret = -EINVAL;
	if (r.bad)
		goto out;
	struct trawl_ust_session_opts o;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.mode = st.mode;
	o.subbuf_size = st.subbuf_size;
	o.nsubbuf = st.nsubbuf;
	o.events = globs;
	o.nevents = st.nglobs;
	o.contexts = st.contexts;
	o.header = st.header;
	o.clock = st.clock;
	ret = tr_ust_remote_start(st.session, &o, ll, st.uuid);
out:
	free(globs);
	free(ll);
	send_ack(st.session, AM_START, ret);
}

static void on_stop(const uint8_t *msg, size_t len)
{
	struct am_rd r;
	uint64_t key = 0;
	am_rd_init(&r, msg, len);
	am_get(&r, &key, sizeof(key));
	int ret = r.bad ? -EINVAL : tr_ust_remote_stop(key);
	send_ack(key, AM_STOP, ret);
}

/* Handles one message from the agent; returns its type, 0 at EOF or error. */
static uint32_t handle(int fd, uint8_t *buf)
{
	ssize_t n;
	do
		n = recv(fd, buf, AM_MSG_MAX, 0);
	while (n < 0 && errno == EINTR);
	if (n < (ssize_t)sizeof(struct am_hdr))
		return 0;
	struct am_hdr h;
	memcpy(&h, buf, sizeof(h));
	if (h.len != (uint32_t)n)
		return 0;
	if (h.type == AM_START) {
		on_start(buf, (size_t)n);
	} else if (h.type == AM_STOP) {
		on_stop(buf, (size_t)n);
	} else if (h.type == AM_LIVE && h.len >= sizeof(h) + sizeof(struct am_live)) {
		struct am_live l;
		memcpy(&l, buf + sizeof(h), sizeof(l));
		tr_ust_live_tick(l.session);
	}
	return h.type;
}

/* The agent is gone: stop recording for it. */
static void disconnect(int fd)
{
	tr_ust_lock_take();
	if (agent_fd == fd)
		agent_fd = -1;
	tr_ust_lock_give();
	close(fd);
	tr_ust_remote_stop(0);
}

static void *listener(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint8_t *buf = malloc(AM_MSG_MAX);
	prctl(PR_SET_NAME, "trawl-agent", 0, 0, 0);
	while (buf && handle(fd, buf))
		;
	free(buf);
	disconnect(fd);
	return NULL;
}

static void start_listener(int fd)
{
	pthread_t th;
	pthread_attr_t at;
	sigset_t all, old;
	sigfillset(&all);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&th, &at, listener, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (r != 0)
		disconnect(fd);
}

static bool hello(int fd, uint64_t key)
{
	struct {
		struct am_hdr h;
		struct am_hello m;
	} m;
	memset(&m, 0, sizeof(m));
	m.h.type = AM_HELLO;
	m.h.len = sizeof(m);
	m.m.version = AM_VERSION;
	m.m.pid = getpid();
	m.m.ppid = getppid();
	m.m.flags = key ? AM_HELLO_CHILD : 0;
	m.m.session = key;
	prctl(PR_GET_NAME, m.m.name, 0, 0, 0);
	m.m.name[15] = 0;
	tr_ust_lock_take();
	agent_fd = fd;
	bool ok = send_msg(&m, sizeof(m), -1);
	tr_ust_lock_give();
	return ok;
}

static void app_init(void)
{
	int fd = connect_agent();
	if (fd < 0)
		return;
	tr_ust_init_once();
	uint8_t *buf = malloc(AM_MSG_MAX);
	if (!buf || !hello(fd, 0)) {
		free(buf);
		disconnect(fd);
		return;
	}
	/* the agent's sessions first, bounded: then main() is traced */
	const char *t = secure_getenv("TRAWL_AGENT_TIMEOUT_MS");
	int64_t deadline = tr_mono_ms() + (t && *t ? atoi(t) : 3000);
	for (;;) {
		int64_t left = deadline - tr_mono_ms();
		struct pollfd p = { fd, POLLIN, 0 };
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			break;	/* slow agent: the listener takes over */
		uint32_t type = handle(fd, buf);
		if (!type) {
			free(buf);
			disconnect(fd);
			return;
		}
		if (type == AM_READY)
			break;
	}
	free(buf);
	start_listener(fd);
}

void tr_ust_app_init(void)
{
	pthread_once(&app_once, app_init);
}

bool tr_ust_app_child(uint64_t key)
{
	/* fork() ran app_once in the parent: the child's state is its copy */
	if (agent_fd < 0)
		return false;
	close(agent_fd);
	agent_fd = -1;
	int fd = connect_agent();
	if (fd < 0)
		return false;
	if (!hello(fd, key)) {
		disconnect(fd);
		return false;
	}
	start_listener(fd);
	return true;
}
