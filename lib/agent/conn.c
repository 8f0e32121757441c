/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/conn.c - the agent's connections (lib/ust/proto.h): reading
 * one message at a time (with the fd a BUF carries), the applications'
 * messages (HELLO, EVREG, EVDESC, BUF, ACK), the clients' requests (CMD,
 * handed to verbs.c) and the replies to them (OUT, ERR, END).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent-internal.h"
#include "util/escape.h"
#include "ust/proto.h"

/* ------------------------------------------------------------- sending */

int tr_send_msg(int fd, const void *m, size_t len)
{
	for (int i = 0; i < 200;) {
		ssize_t n = send(fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n >= 0 || errno != EAGAIN)
			return -EPIPE;
		struct pollfd p = { fd, POLLOUT, 0 };
		poll(&p, 1, 10);
		i++;
	}
	return -ETIMEDOUT;
}

/* A peer that does not take a message: a client is dropped; an application
 * that exited is read to the end first (its buffers and events were sent
 * before it went: nothing it queued may be lost), its EOF closes it. */
void tr_send_failed(struct conn *c)
{
	if (c->type != C_APP)
		c->closing = true;
}

void tr_send_simple(struct conn *c, uint32_t type, const void *body, size_t blen)
{
	uint8_t m[256];
	struct am_wr w;
	am_wr_init(&w, m, sizeof(m), type);
	am_put(&w, body, blen);
	size_t n = am_wr_done(&w);
	if (n && tr_send_msg(c->fd, m, n) < 0)
		tr_send_failed(c);
}

/* Client output: text is cut into OUT/ERR messages. */
void tr_ctext(struct conn *c, uint32_t type, const char *text)
{
	size_t len = strlen(text);
	uint8_t *m = c->a->msgbuf;
	do {
		size_t n = len < AM_MSG_MAX - 64 ? len : AM_MSG_MAX - 64;
		struct am_wr w;
		am_wr_init(&w, m, AM_MSG_MAX, type);
		am_put(&w, text, n);
		size_t l = am_wr_done(&w);
		if (l && tr_send_msg(c->fd, m, l) < 0) {
			c->closing = true;
			return;
		}
		text += n;
		len -= n;
	} while (len);
}

/* Formatted text for the client: peers' strings among it (a relay's
 * reason, an application's name) reach its terminal escaped, lines kept,
 * as in the agent's log (tr_agent_log). */
static void vcprint(struct conn *c, uint32_t type, const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) >= 0) {
		char *e = tr_escape_dup(s, true);
		tr_ctext(c, type, e ? e : s);
		free(e);
		free(s);
	}
}

void tr_cprint(struct conn *c, uint32_t type, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vcprint(c, type, fmt, ap);
	va_end(ap);
}

void tr_cend(struct conn *c, int status)
{
	struct am_end e = { status };
	tr_send_simple(c, AM_END, &e, sizeof(e));
	c->closing = true;
}

/* An error for the client and the end of its request. */
void tr_cfail(struct conn *c, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vcprint(c, AM_ERR, fmt, ap);
	va_end(ap);
	tr_cend(c, status);
}

/* ------------------------------------------------------------- applications */

/* Decodes an EVDESC into the part's event table (and the trace). */
static int on_evdesc(struct conn *c, const uint8_t *m, size_t len)
{
	struct am_rd r;
	struct am_evdesc d;
	struct part *p = c->part;
	am_rd_init(&r, m, len);
	am_get(&r, &d, sizeof(d));
	if (r.bad || !p || p->s->key != d.session || p->bad)
		return 0;	/* a stopped session's: ignore */
	struct trawl_ctf_arena *a = p->arena;
	const char *prov = am_get_str(&r), *name = am_get_str(&r);
	if (r.bad || d.nfields > 4096 || d.id != p->nevs)
		goto bad;
	struct trawl_tp_field *f = tr_arena_alloc(a, (d.nfields + 1) * sizeof(*f));
	struct trawl_tp_event *ev = tr_arena_alloc(a, sizeof(*ev));
	if (!f || !ev)
		goto bad;
	for (uint32_t i = 0; i < d.nfields; i++) {
		uint8_t b[4];
		f[i].name = tr_arena_strdup(a, am_get_str(&r));
		am_get(&r, b, 4);
		am_get(&r, &f[i].length, 4);
		f[i].kind = b[0];
		f[i].size = b[1];
		f[i].sign = b[2];
		f[i].base = b[3];
		bool sz_ok = b[1] == 1 || b[1] == 2 || b[1] == 4 || b[1] == 8;
		if (r.bad || !f[i].name || b[0] > TRAWL_TP_ENUM || !sz_ok ||
		    (b[0] == TRAWL_TP_FLOAT && b[1] < 4) || (b[3] != 10 && b[3] != 16) ||
		    (b[0] == TRAWL_TP_ARRAY && (f[i].length == 0 || f[i].length > (1u << 20))))
			goto bad;
		if (b[0] == TRAWL_TP_ENUM) {
			struct trawl_tp_enum *e = tr_arena_alloc(a, sizeof(*e));
			uint32_t n = 0;
			if (!e)
				goto bad;
			e->provider = tr_arena_strdup(a, am_get_str(&r));
			e->name = tr_arena_strdup(a, am_get_str(&r));
			am_get(&r, &n, 4);
			if (r.bad || n > 65536)
				goto bad;
			struct trawl_tp_enum_entry *en = tr_arena_alloc(a, (n + 1) * sizeof(*en));
			if (!en)
				goto bad;
			for (uint32_t k = 0; k < n; k++) {
				en[k].label = tr_arena_strdup(a, am_get_str(&r));
				am_get(&r, &en[k].lo, 8);
				am_get(&r, &en[k].hi, 8);
			}
			if (r.bad)
				goto bad;
			e->entries = en;
			e->n = n;
			f[i].enm = e;
		}
	}
	ev->id = d.id;
	ev->provider = tr_arena_strdup(a, prov);
	ev->name = tr_arena_strdup(a, name);
	ev->loglevel = d.loglevel;
	ev->fields = f;
	if (tr_grow(&p->evs, &p->evcap, p->nevs, sizeof(*p->evs)))
		goto bad;
	p->evs[p->nevs++] = ev;
	if (p->s->w && p->sc && tr_ust_writer_add_event(p->s->w, p->sc, ev) < 0)
		goto bad;
	return 0;
bad:
	tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING,
		     "pid %d: bad event description: its events are not recorded", (int)c->pid);
	p->bad = true;
	return -EPROTO;
}

static void on_buf(struct conn *c, const uint8_t *m, size_t len, int fd)
{
	struct am_rd r;
	struct am_buf b;
	am_rd_init(&r, m, len);
	am_get(&r, &b, sizeof(b));
	struct part *p = c->part;
	if (r.bad || fd < 0 || !p || p->s->key != b.session) {
		tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING,
			     "pid %d: a buffer for no recording session (%d %d %d)", (int)c->pid,
			     r.bad, fd, !p);
		if (fd >= 0)
			close(fd);
		return;
	}
	struct aring *ar = calloc(1, sizeof(*ar));
	if (!ar || tr_ust_ring_map(&ar->c.ring, fd) < 0 ||
	    ar->c.ring.shm->mode != p->s->mode) {
		tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING, "pid %d: a buffer could not be mapped",
			     (int)c->pid);
		if (ar && ar->c.ring.shm)
			tr_ust_ring_destroy(&ar->c.ring);
		else
			close(fd);
		free(ar);
		return;
	}
	ar->tid = b.tid;
	/* the stream now, not at its first packet: a relay announces it to
	 * live viewers before they see later events of other streams */
	if (tr_ring_stream(p->s, p, ar) < 0)
		tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING, "pid %d: a stream could not be created: %s",
			     (int)c->pid, strerror(errno));
	if (p->s->live_ms && p->s->mode == TRAWL_UST_DISCARD && tr_ust_cons_live_init(&ar->c) < 0)
		tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING,
			     "pid %d: out of memory: a buffer goes out packet by packet", (int)c->pid);
	struct aring **pp = &p->rings;
	while (*pp)
		pp = &(*pp)->next;
	*pp = ar;
}

static void app_hello(struct conn *c, const uint8_t *m, size_t len)
{
	struct am_rd r;
	struct am_hello h;
	am_rd_init(&r, m, len);
	am_get(&r, &h, sizeof(h));
	if (r.bad || h.version != AM_VERSION) {
		c->closing = true;
		return;
	}
	c->type = C_APP;
	memcpy(c->name, h.name, 16);
	c->name[16] = 0;
	struct session *s = tr_recording(c->a);
	if (h.flags & AM_HELLO_CHILD) {
		struct session *ks = tr_session_by_key(c->a, h.session);
		if (ks && ks == s && s->state == S_ACTIVE) {
			struct part *p = tr_part_new(s, c);
			if (p)
				p->acked = true;
		} else {
			tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING,
				     "pid %d: a child of a session that does not record", (int)c->pid);
			tr_send_simple(c, AM_STOP, &h.session, 8);
		}
	} else if (s && s->state == S_ACTIVE && s->nrules) {
		if (tr_part_new(s, c))
			tr_send_start(s, c);
	}
	/* logged before READY: the application goes on once it has that */
	tr_agent_log(c->a, TRAWL_AGENT_LOG_INFO, "application pid %d (%s) registered", (int)c->pid,
		     c->name);
	tr_send_simple(c, AM_READY, NULL, 0);
}

static void app_evreg(struct conn *c, struct am_rd *r)
{
	struct am_evreg e;
	am_get(r, &e, sizeof(e));
	const char *name = am_get_str(r);
	if (r->bad || c->nev >= 100000)
		return;
	if (c->nev == c->evcap) {
		size_t nc = c->evcap ? c->evcap * 2 : 16;
		char **a = realloc(c->evnames, nc * sizeof(*a));
		if (a)
			c->evnames = a;
		int *b = realloc(c->evll, nc * sizeof(*b));
		if (b)
			c->evll = b;
		if (!a || !b)
			return;
		c->evcap = nc;
	}
	if (!(c->evnames[c->nev] = strdup(name)))
		return;
	c->evll[c->nev++] = e.loglevel;
}

static void app_msg(struct conn *c, const uint8_t *m, size_t len, uint32_t type, int fd)
{
	struct am_rd r;
	am_rd_init(&r, m, len);
	if (type == AM_BUF) {
		on_buf(c, m, len, fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	if (type == AM_EVREG) {
		app_evreg(c, &r);
	} else if (type == AM_EVDESC) {
		on_evdesc(c, m, len);
	} else if (type == AM_ACK) {
		struct am_ack a;
		am_get(&r, &a, sizeof(a));
		struct part *p = c->part;
		if (r.bad || !p || p->s->key != a.session)
			return;
		if (a.what == AM_START) {
			p->acked = true;
			p->start_status = a.status;
		} else if (a.what == AM_STOP) {
			p->stopped = true;
		}
	}
}

/* ------------------------------------------------------------- clients */

/* A CMD: argv as NUL-separated strings, copied (replies are built in
 * msgbuf), handed to verbs.c. */
static void client_cmd(struct conn *c, size_t n)
{
	c->type = C_CLIENT;
	if (c->uid != geteuid() && c->uid != 0) {
		tr_cfail(c, 1, "permission denied: the agent runs as uid %u", (unsigned)geteuid());
		return;
	}
	char *argv[256];
	int argc = 0;
	char *req = malloc(n + 1);
	if (!req) {
		tr_cfail(c, 1, "out of memory");
		return;
	}
	memcpy(req, c->a->msgbuf, n);
	char *p = req + sizeof(struct am_hdr), *end = req + n;
	if (end > p && end[-1] != 0) {
		tr_cfail(c, 2, "malformed request");
	} else {
		while (p < end && argc < 255) {
			argv[argc++] = p;
			p += strlen(p) + 1;
		}
		argv[argc] = NULL;
		if (!argc)
			tr_cfail(c, 2, "empty request");
		else
			tr_verb_run(c, argc, argv);
	}
	free(req);
}

/* ------------------------------------------------------------- reading */

bool tr_conn_read(struct conn *c)
{
	uint8_t *msgbuf = c->a->msgbuf;
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} u;
		struct iovec iov = { msgbuf, AM_MSG_MAX };
		struct msghdr mh;
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		int fd = -1;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < k; i++) {
					int f;
					memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
					if (fd < 0)
						fd = f;
					else
						close(f);
				}
			}
		if (n <= 0) {
			if (n < 0)
				tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING, "pid %d: %s", (int)c->pid,
					     strerror(errno));
			return false;
		}
		struct am_hdr h;
		if ((size_t)n < sizeof(h) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING,
				     "pid %d: truncated message (%zd bytes, flags %#x)", (int)c->pid, n,
				     (unsigned)mh.msg_flags);
			if (fd >= 0)
				close(fd);
			return false;
		}
		memcpy(&h, msgbuf, sizeof(h));
		if (h.len != (uint32_t)n) {
			tr_agent_log(c->a, TRAWL_AGENT_LOG_WARNING, "pid %d: bad message length",
				     (int)c->pid);
			if (fd >= 0)
				close(fd);
			return false;
		}
		if (c->type == C_NEW) {
			if (h.type == AM_HELLO)
				app_hello(c, msgbuf, (size_t)n);
			else if (h.type == AM_CMD)
				client_cmd(c, (size_t)n);
			else
				c->closing = true;
			if (fd >= 0)
				close(fd);
		} else if (c->type == C_APP) {
			app_msg(c, msgbuf, (size_t)n, h.type, fd);
		} else if (fd >= 0) {
			close(fd);
		}
		if (c->closing)
			return false;
	}
}

void tr_conn_close(struct conn *c)
{
	if (c->part) {
		/* gone (exited, killed, exec): its buffers are ours now */
		c->part->dead = true;
		c->part->stopped = true;
		c->part->app = NULL;
		c->part = NULL;
	}
	for (struct session *s = c->a->sessions; s; s = s->next)
		if (s->waiter == c)
			s->waiter = NULL;
	if (c->type == C_APP)
		tr_agent_log(c->a, TRAWL_AGENT_LOG_INFO, "application pid %d (%s) left", (int)c->pid,
			     c->name);
	close(c->fd);
	for (size_t i = 0; i < c->nev; i++)
		free(c->evnames[i]);
	free(c->evnames);
	free(c->evll);
	free(c);
}
