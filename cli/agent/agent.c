/* SPDX-License-Identifier: MIT */
/*
 * cli/agent/agent.c - `trawl agent`, the per-node daemon (docs/agent.md).
 *
 * One thread, one poll loop: the listening socket, the applications' and
 * the session commands' connections (SOCK_SEQPACKET, proto.h), and, while
 * a session records, a tick every flush_ms that drains the applications'
 * ring buffers (their memfds, mapped here) into the session's CTF trace,
 * SESSION/HOST/ust/, packet by packet, without re-encoding.
 *
 * Sessions: created, given enable rules and contexts, started (every
 * registered application gets START, and so does any that registers
 * later), stopped (STOP; each application quiesces its threads and hands
 * its buffers over; the agent closes the last packets itself), destroyed.
 * An application that exits or is killed closes its connection: its
 * buffers are then the agent's alone, and everything committed in them is
 * written. One session records at a time (an application has one set of
 * buffers); any number may exist.
 *
 * Kernel events (enable -k): a session with kernel rules also runs the
 * kernel recorder (lib/kern/krec.h) from start to stop, writing
 * SESSION/HOST/kernel/ with the session's clock. The recorder has one
 * reader thread of its own, created with every signal blocked; it shares
 * nothing with this loop but the krec object, touched here only at start
 * and stop. Once stopped, both traces declare the kernel's clock
 * calibration, so that they merge exactly.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "agent.h"
#include "cli.h"
#include "internal.h"
#include "kern/krec.h"
#include "ust/proto.h"
#include "ust/ust-internal.h"

enum { S_NEW, S_ACTIVE, S_STOPPING, S_STOPPED };
static const char *const state_names[] = { "created", "recording", "stopping", "stopped" };

struct rule {
	char *glob;
	int loglevel;			/* -1: any */
};

struct aring {
	struct ust_cons c;
	int32_t tid;
	bool done;			/* final flush done */
	struct aring *next;
};

struct session;
struct conn;

/* An application's part in a session: its stream class, its enabled
 * events (by id), its buffers. Outlives the application. */
struct part {
	struct session *s;
	struct conn *app;		/* NULL once it is gone */
	int32_t pid;
	char name[17];
	char stream[48];		/* stream file name prefix */
	struct trawl_ctf_arena *arena;
	struct trawl_tp_event **evs;	/* index = id */
	size_t nevs, evcap;
	struct trawl_ctf_stream_class *sc;	/* in s->w */
	struct aring *rings;
	int start_status;		/* ack of START */
	bool acked, stopped, dead, bad;
	struct part *next;
};

struct session {
	char *name;
	uint64_t key;
	int state;
	bool snapshot;			/* flight recorder, snapshot record only */
	char *output;			/* session directory (may be NULL in snapshot mode) */
	unsigned mode, S, N, header, contexts, clock_opt;	/* N: 0 = default */
	struct rule *rules;
	size_t nrules;
	bool tsc;
	uint64_t c0;
	int64_t mono0, real0;
	uint8_t uuid[16];
	struct trawl_ctf_writer *w;	/* discard mode, while recording */
	struct part *parts;
	unsigned nparts, nsnap;
	struct conn *waiter;		/* client waiting for start/stop */
	int64_t deadline;
	int err;
	bool destroy;			/* free once stopped */
	uint64_t packets;
	/* kernel part: rules, and the recorder while recording */
	char **kev;			/* tracepoints, globs or presets */
	size_t nkev;
	char *kfilter;			/* ftrace filter for every event, or NULL */
	int32_t *kpids;			/* set_event_pid, or none */
	size_t nkpids;
	struct krec *krec;
	bool kdone;			/* stopped: the figures below are final */
	bool kclock_ok;			/* kfreq.. hold the kernel trace's clock */
	uint64_t kfreq;
	int64_t koff_s, koff;
	uint64_t kevents, klost, ksd;
	char kclock[16];
	char *kerr;			/* the recorder's error at stop, or NULL */
	/* streaming to a relay (docs/relay.md) */
	char *relay;			/* HOST[:PORT], or NULL */
	char *relay_session;		/* name at the relay; NULL: the session's */
	unsigned live_ms;		/* live timer; 0: packets go when full */
	int64_t next_live;		/* ms, the next live tick */
	bool cut_due;			/* LIVE sent: cut the rings next turn */
	struct session *next;
};

/* N = 0: the default of the session's mode */
static unsigned nsubbuf(const struct session *s)
{
	return s->N ? s->N : TRAWL_UST_DEFAULT_NSUBBUF(s->mode);
}

enum { C_NEW, C_APP, C_CLIENT };

struct conn {
	int fd;
	int type;
	uid_t uid;
	pid_t pid;
	/* application */
	char name[17];
	char **evnames;			/* registered events "prov:ev" */
	int *evll;
	size_t nev, evcap;
	struct part *part;		/* in the recording session */
	bool closing;
	struct conn *next;
};

static struct conn *conns;
static struct session *sessions;
static uint64_t next_key = 1;
static char hostname[256];
static const struct agent_opts *opt;
static volatile sig_atomic_t quit;
static bool quitting;
static uint8_t *msgbuf;

static void kernel_stop(struct session *s);
static void clear_kernel(struct session *s);
static void ust_clock(struct session *s, struct trawl_ctf_trace *t);

/* ------------------------------------------------------------- helpers */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((format(printf, 1, 2)))
static void logmsg(const char *fmt, ...)
{
	va_list ap;
	if (!opt->foreground)
		return;
	fputs("trawl: agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Sends one message, waiting (bounded) when the peer's queue is full. */
static int send_fd_msg(int fd, const void *m, size_t len)
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
static void send_failed(struct conn *c)
{
	if (c->type != C_APP)
		c->closing = true;
}

static void send_simple(struct conn *c, uint32_t type, const void *body, size_t blen)
{
	uint8_t m[256];
	struct am_wr w;
	am_wr_init(&w, m, sizeof(m), type);
	am_put(&w, body, blen);
	size_t n = am_wr_done(&w);
	if (n && send_fd_msg(c->fd, m, n) < 0)
		send_failed(c);
}

/* Client output: text is cut into OUT/ERR messages. */
static void ctext(struct conn *c, uint32_t type, const char *text)
{
	size_t len = strlen(text);
	uint8_t *m = msgbuf;
	do {
		size_t n = len < AM_MSG_MAX - 64 ? len : AM_MSG_MAX - 64;
		struct am_wr w;
		am_wr_init(&w, m, AM_MSG_MAX, type);
		am_put(&w, text, n);
		size_t l = am_wr_done(&w);
		if (l && send_fd_msg(c->fd, m, l) < 0) {
			c->closing = true;
			return;
		}
		text += n;
		len -= n;
	} while (len);
}

__attribute__((format(printf, 3, 4)))
static void cprint(struct conn *c, uint32_t type, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		ctext(c, type, s);
		free(s);
	}
}

static void cend(struct conn *c, int status)
{
	struct am_end e = { status };
	send_simple(c, AM_END, &e, sizeof(e));
	c->closing = true;
}

/* An error for the client and the end of its request. */
__attribute__((format(printf, 3, 4)))
static void cfail(struct conn *c, int status, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		ctext(c, AM_ERR, s);
		free(s);
	}
	cend(c, status);
}

int agent_loglevel(const char *s)
{
	static const struct {
		const char *name;
		int v;
	} names[] = {
		{ "emerg", 0 }, { "alert", 1 }, { "crit", 2 }, { "err", 3 }, { "error", 3 },
		{ "warning", 4 }, { "warn", 4 }, { "notice", 5 }, { "info", 6 },
		{ "debug", 14 },
	};
	if (!s || !*s)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcasecmp(s, names[i].name) == 0 ||
		    (strncasecmp(s, "TRAWL_LOGLEVEL_", 15) == 0 && strcasecmp(s + 15, names[i].name) == 0))
			return names[i].v;
	char *end;
	long v = strtol(s, &end, 10);
	return *end || v < 0 || v > 14 ? -1 : (int)v;
}

static struct session *find_session(const char *name)
{
	for (struct session *s = sessions; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static struct session *find_key(uint64_t key)
{
	for (struct session *s = sessions; s; s = s->next)
		if (s->key == key)
			return s;
	return NULL;
}

static struct session *recording(void)
{
	for (struct session *s = sessions; s; s = s->next)
		if (s->state == S_ACTIVE || s->state == S_STOPPING)
			return s;
	return NULL;
}

/* ------------------------------------------------------------- parts */

static struct part *part_new(struct session *s, struct conn *app)
{
	struct part *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->arena = arena_new();
	if (!p->arena) {
		free(p);
		return NULL;
	}
	p->s = s;
	p->app = app;
	p->pid = app->pid;
	memcpy(p->name, app->name, sizeof(p->name));
	unsigned same = 0;
	for (struct part *q = s->parts; q; q = q->next)
		same += q->pid == p->pid;
	if (same)
		snprintf(p->stream, sizeof(p->stream), "ust_%d.%u", (int)p->pid, same);
	else
		snprintf(p->stream, sizeof(p->stream), "ust_%d", (int)p->pid);
	if (s->w) {
		p->sc = ust_stream_class_new(s->w, s->header, s->contexts);
		if (!p->sc)
			p->bad = true;
	}
	/* append: stream class ids and parts in the same order */
	struct part **pp = &s->parts;
	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
	s->nparts++;
	app->part = p;
	return p;
}

static void part_free(struct part *p)
{
	for (struct aring *r = p->rings, *n; r; r = n) {
		n = r->next;
		ust_ring_destroy(&r->c.ring);
		ust_cons_live_release(&r->c);
		free(r);
	}
	if (p->app && p->app->part == p)
		p->app->part = NULL;
	arena_free(p->arena);
	free(p->evs);
	free(p);
}

static void send_start(struct session *s, struct conn *c)
{
	struct am_wr w;
	struct am_start st;
	memset(&st, 0, sizeof(st));
	st.session = s->key;
	memcpy(st.uuid, s->uuid, 16);
	st.mode = s->mode;
	st.subbuf_size = s->S;
	st.nsubbuf = nsubbuf(s);
	st.header = s->header;
	st.contexts = s->contexts;
	st.clock = s->tsc ? TRAWL_UST_CLOCK_TSC : TRAWL_UST_CLOCK_MONOTONIC;
	st.nglobs = (uint32_t)s->nrules;
	am_wr_init(&w, msgbuf, AM_MSG_MAX, AM_START);
	am_put(&w, &st, sizeof(st));
	for (size_t i = 0; i < s->nrules; i++) {
		int32_t ll = s->rules[i].loglevel;
		am_put(&w, &ll, 4);
		am_put_str(&w, s->rules[i].glob);
	}
	size_t n = am_wr_done(&w);
	if (!n || send_fd_msg(c->fd, msgbuf, n) < 0)
		send_failed(c);
}

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
	struct trawl_tp_field *f = arena_alloc(a, (d.nfields + 1) * sizeof(*f));
	struct trawl_tp_event *ev = arena_alloc(a, sizeof(*ev));
	if (!f || !ev)
		goto bad;
	for (uint32_t i = 0; i < d.nfields; i++) {
		uint8_t b[4];
		f[i].name = arena_strdup(a, am_get_str(&r));
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
			struct trawl_tp_enum *e = arena_alloc(a, sizeof(*e));
			uint32_t n = 0;
			if (!e)
				goto bad;
			e->provider = arena_strdup(a, am_get_str(&r));
			e->name = arena_strdup(a, am_get_str(&r));
			am_get(&r, &n, 4);
			if (r.bad || n > 65536)
				goto bad;
			struct trawl_tp_enum_entry *en = arena_alloc(a, (n + 1) * sizeof(*en));
			if (!en)
				goto bad;
			for (uint32_t k = 0; k < n; k++) {
				en[k].label = arena_strdup(a, am_get_str(&r));
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
	ev->provider = arena_strdup(a, prov);
	ev->name = arena_strdup(a, name);
	ev->loglevel = d.loglevel;
	ev->fields = f;
	if (p->nevs == p->evcap) {
		size_t nc = p->evcap ? p->evcap * 2 : 16;
		void *nm = realloc(p->evs, nc * sizeof(*p->evs));
		if (!nm)
			goto bad;
		p->evs = nm;
		p->evcap = nc;
	}
	p->evs[p->nevs++] = ev;
	if (p->s->w && p->sc && ust_writer_add_event(p->s->w, p->sc, ev) < 0)
		goto bad;
	return 0;
bad:
	logmsg("pid %d: bad event description: its events are not recorded", (int)c->pid);
	p->bad = true;
	return -EPROTO;
}

static int ensure_ws(struct session *s, struct part *p, struct aring *r);

static void on_buf(struct conn *c, const uint8_t *m, size_t len, int fd)
{
	struct am_rd r;
	struct am_buf b;
	am_rd_init(&r, m, len);
	am_get(&r, &b, sizeof(b));
	struct part *p = c->part;
	if (r.bad || fd < 0 || !p || p->s->key != b.session) {
		logmsg("pid %d: a buffer for no recording session (%d %d %d)", (int)c->pid, r.bad, fd, !p);
		if (fd >= 0)
			close(fd);
		return;
	}
	struct aring *ar = calloc(1, sizeof(*ar));
	if (!ar || ust_ring_map(&ar->c.ring, fd) < 0 ||
	    ar->c.ring.shm->mode != p->s->mode) {
		logmsg("pid %d: a buffer could not be mapped", (int)c->pid);
		if (ar && ar->c.ring.shm)
			ust_ring_destroy(&ar->c.ring);
		else
			close(fd);
		free(ar);
		return;
	}
	ar->tid = b.tid;
	/* the stream now, not at its first packet: a relay announces it to
	 * live viewers before they see later events of other streams */
	if (ensure_ws(p->s, p, ar) < 0)
		logmsg("pid %d: a stream could not be created: %s", (int)c->pid, strerror(errno));
	if (p->s->live_ms && p->s->mode == TRAWL_UST_DISCARD && ust_cons_live_init(&ar->c) < 0)
		logmsg("pid %d: out of memory: a buffer goes out packet by packet", (int)c->pid);
	struct aring **pp = &p->rings;
	while (*pp)
		pp = &(*pp)->next;
	*pp = ar;
}

/* ------------------------------------------------------------- recording */

static int ensure_ws(struct session *s, struct part *p, struct aring *r)
{
	if (r->c.ws || !s->w || !p->sc)
		return 0;
	r->c.ws = trawl_ctf_writer_stream(s->w, p->sc, p->stream, (uint32_t)r->tid);
	return r->c.ws ? 0 : -errno;
}

static void note_err(struct session *s, int r)
{
	if (r < 0 && !s->err)
		s->err = r;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The live timer (every live_ms): every buffer's committed events go out as
 * a packet, or a beacon when there are none; the streams of threads that
 * are gone get a beacon at the present (nothing more will come).
 */
static void live_tick(struct session *s)
{
	uint64_t now = mono_ns();
	for (struct part *p = s->parts; p; p = p->next) {
		if (p->bad)
			continue;
		for (struct aring *r = p->rings; r; r = r->next) {
			uint32_t sid = p->sc ? (uint32_t)p->sc->id : 0;
			/* a ring abandoned (it broke the protocol) or done
			 * sends nothing more: beacons at the present */
			if (!r->done && !r->c.bad)
				note_err(s, ust_cons_live(&r->c, s->uuid, sid));
			else
				note_err(s, ust_cons_live_end(&r->c, now, s->uuid, sid));
		}
	}
}

/*
 * The live timer's first half: every application marks its idle threads'
 * buffers quiet up to now (LIVE); the rings are cut at the loop's next
 * turn (at most flush_ms later), once the applications had the time to.
 * Ticks fall on multiples of the period of CLOCK_MONOTONIC, as the kernel
 * recorder's do: a viewer waits for every stream's news, so all of them
 * come at once.
 */
static void live_ask(struct session *s)
{
	uint8_t m[sizeof(struct am_hdr) + sizeof(struct am_live)];
	struct am_wr w;
	struct am_live l = { .session = s->key };
	am_wr_init(&w, m, sizeof(m), AM_LIVE);
	am_put(&w, &l, sizeof(l));
	size_t n = am_wr_done(&w);
	/* never waiting: an application that does not read (stopped, in a
	 * debugger) just gets no beacon for its idle threads this time */
	for (struct part *p = s->parts; p; p = p->next)
		if (p->app && !p->dead && !p->stopped)
			(void)!send(p->app->fd, m, n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Drains the session's buffers; flushes those whose producer is gone. */
static void drain_session(struct session *s)
{
	if (s->live_ms && s->w) {
		int64_t t = now_ms();
		if (s->cut_due) {
			s->cut_due = false;
			live_tick(s);
		} else if (t >= s->next_live) {
			s->next_live = (t / s->live_ms + 1) * s->live_ms;
			live_ask(s);
			s->cut_due = true;
		}
	}
	for (struct part *p = s->parts; p; p = p->next) {
		if (p->bad)
			continue;
		for (struct aring *r = p->rings; r; r = r->next) {
			if (r->done)
				continue;
			note_err(s, ensure_ws(s, p, r));
			uint32_t sid = p->sc ? (uint32_t)p->sc->id : 0;
			if (s->mode == TRAWL_UST_DISCARD)
				note_err(s, ust_cons_drain(&r->c, s->uuid, sid));
			/* partner: the producer side's release store of exited */
			uint32_t ex = __atomic_load_n(&r->c.ring.shm->exited, __ATOMIC_ACQUIRE);
			if (ex || p->dead) {
				note_err(s, ust_cons_final(&r->c, s->uuid, sid, ex == 2));
				r->done = true;
				s->packets += r->c.packets;
				if (s->mode == TRAWL_UST_DISCARD) {
					/* written out: the memory can go */
					ust_ring_destroy(&r->c.ring);
					r->c.ring.shm = NULL;
				}
			}
		}
	}
}

struct mkws_arg {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_stream_class *sc;
	struct part *p;
	int32_t tid;
};

static struct trawl_ctf_wstream *mkws(void *arg)
{
	struct mkws_arg *a = arg;
	return trawl_ctf_writer_stream(a->w, a->sc, a->p->stream, (uint32_t)a->tid);
}

/* Writes the newest packets of every buffer to a new trace in dir. */
static int snapshot_to(struct session *s, const char *dir, uint64_t *events, uint64_t *torn)
{
	struct trawl_ctf_writer *w = ust_writer_new(dir, hostname, s->tsc, 0, NULL);
	if (!w)
		return -errno;
	const uint8_t *uuid = trawl_ctf_writer_trace(w)->uuid;
	uint8_t *copy = malloc((size_t)s->S * nsubbuf(s));
	int ret = copy ? 0 : -ENOMEM;
	for (struct part *p = s->parts; p && !ret; p = p->next) {
		if (p->bad)
			continue;
		struct trawl_ctf_stream_class *sc = ust_stream_class_new(w, s->header, s->contexts);
		if (!sc) {
			ret = -errno;
			break;
		}
		for (size_t i = 0; i < p->nevs && !ret; i++)
			ret = ust_writer_add_event(w, sc, p->evs[i]);
		for (struct aring *r = p->rings; r && !ret; r = r->next) {
			if (!r->c.ring.shm)
				continue;
			struct mkws_arg a = { w, sc, p, r->tid };
			ret = ust_cons_snapshot(&r->c, copy, mkws, &a, uuid, (uint32_t)sc->id,
						events, torn);
		}
	}
	free(copy);
	if (!ret)
		ust_clock(s, trawl_ctf_writer_trace(w));
	int r = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return ret ? ret : r;
}

static char *trace_dir(const char *base)
{
	char *d = NULL;
	if (asprintf(&d, "%s/%s/ust", base, hostname) < 0)
		return NULL;
	return d;
}

static void reply_start(struct session *s)
{
	struct conn *c = s->waiter;
	s->waiter = NULL;
	if (!c)
		return;
	unsigned n = 0, failed = 0;
	for (struct part *p = s->parts; p; p = p->next) {
		n++;
		if (p->acked && p->start_status < 0) {
			failed++;
			cprint(c, AM_ERR, "warning: pid %d (%s) cannot record: %s", (int)p->pid,
			       p->name, strerror(-p->start_status));
		} else if (!p->acked && !p->dead) {
			cprint(c, AM_ERR, "warning: pid %d (%s) did not answer in time", (int)p->pid,
			       p->name);
		}
	}
	cprint(c, AM_OUT, "session %s started (%u application%s)\n", s->name, n - failed,
	       n - failed == 1 ? "" : "s");
	cend(c, 0);
}

/* Every application has stopped (or is gone, or timed out): last packets,
 * metadata. */
static void finish_stop(struct session *s)
{
	/* the kernel first: its clock is the user-space trace's too */
	kernel_stop(s);
	for (struct part *p = s->parts; p; p = p->next) {
		if (!p->stopped && !p->dead)
			logmsg("pid %d did not stop in time: its open packets are left", (int)p->pid);
		for (struct aring *r = p->rings; r; r = r->next) {
			if (r->done || !r->c.ring.shm || p->bad)
				continue;
			uint32_t sid = p->sc ? (uint32_t)p->sc->id : 0;
			note_err(s, ensure_ws(s, p, r));
			uint32_t ex = __atomic_load_n(&r->c.ring.shm->exited, __ATOMIC_ACQUIRE);
			note_err(s, ust_cons_final(&r->c, s->uuid, sid,
						   ex == 2 || (!p->stopped && !p->dead && !ex)));
			r->done = true;
			s->packets += r->c.packets;
		}
		if (p->app && p->app->part == p)
			p->app->part = NULL;
		p->app = NULL;
	}
	uint64_t ev = 0, torn = 0;
	if (s->w) {
		ust_clock(s, trawl_ctf_writer_trace(s->w));
		note_err(s, trawl_ctf_writer_close(s->w));
		int rl = trawl_ctf_writer_relay_error(s->w);
		if (rl) {
			logmsg("session %s: the relay was lost (%s): the local copy is complete",
			       s->name, strerror(-rl));
			if (s->waiter)
				cprint(s->waiter, AM_ERR, "warning: the relay was lost during the session "
				       "(%s): the trace is complete only in %s", strerror(-rl),
				       s->output ? s->output : "(none)");
		}
		trawl_ctf_writer_free(s->w);
		s->w = NULL;
	} else if (s->output && !s->snapshot && s->nrules) {
		/* overwrite mode with an output: the flight recorder's content */
		char *d = trace_dir(s->output);
		note_err(s, d ? snapshot_to(s, d, &ev, &torn) : -ENOMEM);
		free(d);
	}
	if (s->mode == TRAWL_UST_DISCARD)
		for (struct part *p = s->parts; p; p = p->next)
			for (struct aring *r = p->rings; r; r = r->next)
				if (r->c.ring.shm) {
					ust_ring_destroy(&r->c.ring);
					r->c.ring.shm = NULL;
				}
	s->state = S_STOPPED;
	logmsg("session %s stopped", s->name);
	struct conn *c = s->waiter;
	s->waiter = NULL;
	if (c) {
		if (s->kdone)
			cprint(c, AM_OUT, "kernel: %" PRIu64 " events, %" PRIu64 " lost, %" PRIu64
			       " state dump events, clock %s\n", s->kevents, s->klost, s->ksd, s->kclock);
		if (s->err)
			cfail(c, 1, "session %s: writing the trace: %s", s->name, strerror(-s->err));
		else if (s->kerr)
			cfail(c, 1, "session %s: kernel events: %s", s->name, s->kerr);
		else {
			if (s->relay)
				cprint(c, AM_OUT, "session %s stopped; complete at relay %s\n", s->name,
				       s->relay);
			else if (s->output && !s->snapshot)
				cprint(c, AM_OUT, "session %s stopped; trace in %s\n", s->name, s->output);
			else
				cprint(c, AM_OUT, "session %s stopped\n", s->name);
			cend(c, 0);
		}
	}
}

static void begin_stop(struct session *s)
{
	uint8_t m[sizeof(struct am_hdr) + 8];
	struct am_wr w;
	s->state = S_STOPPING;
	s->deadline = now_ms() + (int64_t)opt->start_timeout_ms;
	am_wr_init(&w, m, sizeof(m), AM_STOP);
	am_put(&w, &s->key, 8);
	size_t n = am_wr_done(&w);
	for (struct part *p = s->parts; p; p = p->next)
		if (p->app && !p->dead && !p->stopped && send_fd_msg(p->app->fd, m, n) < 0)
			send_failed(p->app);
}

static void session_free(struct session *s)
{
	for (struct part *p = s->parts, *n; p; p = n) {
		n = p->next;
		part_free(p);
	}
	trawl_ctf_writer_free(s->w);
	krec_free(s->krec);
	clear_kernel(s);
	free(s->kerr);
	free(s->relay);
	free(s->relay_session);
	for (size_t i = 0; i < s->nrules; i++)
		free(s->rules[i].glob);
	free(s->rules);
	free(s->name);
	free(s->output);
	free(s);
}

/* Waiters: a start whose applications all answered, a stop whose
 * applications all handed their buffers over (or the deadline). */
static void check_waiters(void)
{
	int64_t now = now_ms();
	for (struct session *s = sessions; s; s = s->next) {
		bool all = true;
		if (s->state == S_ACTIVE && s->waiter) {
			for (struct part *p = s->parts; p; p = p->next)
				all &= p->acked || p->dead;
			if (all || now >= s->deadline)
				reply_start(s);
		} else if (s->state == S_STOPPING) {
			for (struct part *p = s->parts; p; p = p->next)
				all &= p->stopped || p->dead;
			if (all || now >= s->deadline) {
				drain_session(s);
				finish_stop(s);
			}
		}
	}
	/* destroy requested while stopping */
	for (struct session **pp = &sessions; *pp;) {
		struct session *s = *pp;
		if (s->state == S_STOPPED && s->destroy) {
			*pp = s->next;
			session_free(s);
		} else {
			pp = &s->next;
		}
	}
}

/* ------------------------------------------------------------- kernel */

static const struct {
	const char *name, *system;
} kpresets[] = {
	{ "sched", "sched" }, { "syscalls", "raw_syscalls" }, { "irq", "irq" },
	{ "block", "block" }, { "net", "net" }, { "kvm", "kvm" },
};

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The number of events of system sys (a directory of tdir/events) that
 * match evg, at most 1 is enough. */
static int kmatch_events(const char *tdir, const char *sys, const char *evg)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/events/%s", tdir, sys);
	DIR *d = opendir(p);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while (!n && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !glob_match(evg, e->d_name))
			continue;
		char f[PATH_MAX + 300];
		struct stat st;
		snprintf(f, sizeof(f), "%s/%s/format", p, e->d_name);
		n += stat(f, &st) == 0;
	}
	closedir(d);
	return n;
}

/*
 * Kernel events need root, and a tracepoint this kernel offers (as
 * `trawl record -k` takes them: SYSTEM:EVENT, globs in either part, a bare
 * event name, or a preset). The recorder checks again, in full (the
 * filter too), at start. 0, or -errno with a message in why.
 */
static int kspec_check(const char *spec, char *why, size_t wlen)
{
	if (geteuid() != 0)
		return seterr(why, wlen, EPERM, "kernel events need root (the agent runs as uid %u)",
			      (unsigned)geteuid());
	const char *tdir = tracefs_tracing_dir();
	char p[PATH_MAX];
	if (tdir)
		snprintf(p, sizeof(p), "%s/events", tdir);
	if (!tdir || !is_dir(p))
		return seterr(why, wlen, ENODEV,
			      "kernel events: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	for (size_t i = 0; i < ARRAY_SIZE(kpresets); i++)
		if (strcmp(spec, kpresets[i].name) == 0) {
			snprintf(p, sizeof(p), "%s/events/%s", tdir, kpresets[i].system);
			if (!is_dir(p))
				return seterr(why, wlen, ENOENT,
					      "preset '%s': this kernel has no %s tracepoints", spec,
					      kpresets[i].system);
			return 0;
		}
	char sysg[256], evg[256];
	const char *sep = strpbrk(spec, ":/");
	if (sep) {
		snprintf(sysg, sizeof(sysg), "%.*s", (int)(sep - spec), spec);
		snprintf(evg, sizeof(evg), "%s", sep + 1);
	} else {
		snprintf(sysg, sizeof(sysg), "*");
		snprintf(evg, sizeof(evg), "%s", spec);
	}
	if (strlen(spec) > 200 || !*sysg || !*evg || strpbrk(evg, ":/") || strpbrk(spec, " \t\n,"))
		return seterr(why, wlen, EINVAL,
			      "'%s' is not a kernel event (SYSTEM:EVENT, globs allowed, or a preset: sched, syscalls, irq, block, net, kvm)",
			      spec);
	if (!strpbrk(sysg, "*?[") && !strpbrk(evg, "*?[")) {
		struct stat st;
		snprintf(p, sizeof(p), "%s/events/%s/%s/format", tdir, sysg, evg);
		if (stat(p, &st) == 0)
			return 0;
		return seterr(why, wlen, ENOENT,
			      "no tracepoint '%s:%s' in this kernel (see events/*/format in tracefs)",
			      sysg, evg);
	}
	snprintf(p, sizeof(p), "%s/events", tdir);
	DIR *d = opendir(p);
	int n = 0;
	struct dirent *e;
	while (d && !n && (e = readdir(d)))
		if (e->d_name[0] != '.' && glob_match(sysg, e->d_name))
			n += kmatch_events(tdir, e->d_name, evg);
	if (d)
		closedir(d);
	if (!n)
		return seterr(why, wlen, ENOENT, "no tracepoint of this kernel matches '%s'", spec);
	return 0;
}

static int add_kspec(struct session *s, const char *spec)
{
	for (size_t i = 0; i < s->nkev; i++)
		if (strcmp(s->kev[i], spec) == 0)
			return 0;
	char **m = realloc(s->kev, (s->nkev + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	s->kev = m;
	if (!(s->kev[s->nkev] = strdup(spec)))
		return -ENOMEM;
	s->nkev++;
	return 0;
}

static int set_kfilter(struct session *s, const char *expr, char *why, size_t wlen)
{
	if (!*expr || strchr(expr, '\n'))
		return seterr(why, wlen, EINVAL, "bad kernel filter '%s'", expr);
	if (s->kfilter && strcmp(s->kfilter, expr) != 0)
		return seterr(why, wlen, EEXIST,
			      "session %s already has the kernel filter '%s' (one filter applies to every kernel event; disable -k --all first)",
			      s->name, s->kfilter);
	if (!s->kfilter && !(s->kfilter = strdup(expr)))
		return seterr(why, wlen, ENOMEM, "out of memory");
	return 0;
}

static int add_kpid(struct session *s, const char *v, char *why, size_t wlen)
{
	char *end;
	errno = 0;
	long pid = strtol(v, &end, 10);
	if (errno || !*v || *end || pid < 1 || pid > 0x3fffffff)
		return seterr(why, wlen, EINVAL, "'%s' is not a pid", v);
	for (size_t i = 0; i < s->nkpids; i++)
		if (s->kpids[i] == (int32_t)pid)
			return 0;
	if (s->nkpids >= 4096)
		return seterr(why, wlen, E2BIG, "too many kernel pids");
	int32_t *m = realloc(s->kpids, (s->nkpids + 1) * sizeof(*m));
	if (!m)
		return seterr(why, wlen, ENOMEM, "out of memory");
	s->kpids = m;
	s->kpids[s->nkpids++] = (int32_t)pid;
	return 0;
}

/* Forgets every kernel rule, the filter and the pids. */
static void clear_kernel(struct session *s)
{
	for (size_t i = 0; i < s->nkev; i++)
		free(s->kev[i]);
	free(s->kev);
	s->kev = NULL;
	s->nkev = 0;
	free(s->kfilter);
	s->kfilter = NULL;
	free(s->kpids);
	s->kpids = NULL;
	s->nkpids = 0;
}

static char *kernel_dir(const struct session *s)
{
	char *d = NULL;
	if (asprintf(&d, "%s/%s/kernel", s->output, hostname) < 0)
		return NULL;
	return d;
}

/* Prepares the kernel recorder (nothing recorded yet); with the session's
 * clock: x86-tsc when user space stamps with the TSC, else mono. */
static int kernel_new(struct session *s, char *why, size_t wlen)
{
	if (geteuid() != 0)
		return seterr(why, wlen, EPERM, "kernel events need root (the agent runs as uid %u)",
			      (unsigned)geteuid());
	char *d = kernel_dir(s);
	if (!d)
		return seterr(why, wlen, ENOMEM, "out of memory");
	pid_t *pids = NULL;
	if (s->nkpids && !(pids = calloc(s->nkpids, sizeof(*pids)))) {
		free(d);
		return seterr(why, wlen, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < s->nkpids; i++)
		pids[i] = (pid_t)s->kpids[i];
	struct krec_opts ko = {
		.dir = s->output ? d : NULL, .hostname = hostname,
		.relay = s->relay, .relay_session = s->relay_session ? s->relay_session : s->name,
		.live_ms = s->live_ms,
		.events = (const char *const *)s->kev, .nevents = s->nkev,
		.filter = s->kfilter, .pids = pids, .npids = s->nkpids,
		.statedump = true, .tid_context = true,
		.clock = s->tsc ? KREC_CLOCK_TSC : KREC_CLOCK_MONO,
	};
	char err[400] = "";
	s->krec = krec_new(&ko, err, sizeof(err));
	int e = errno;
	free(pids);
	free(d);
	if (!s->krec)
		return seterr(why, wlen, e ? e : EIO, "kernel events: %s", err);
	snprintf(s->kclock, sizeof(s->kclock), "%s", krec_clock_name(s->krec));
	return 0;
}

/* Starts the recorder; its reader thread is born with every signal
 * blocked (SIGTERM and SIGINT are this loop's, in ppoll). */
static int kernel_start(struct session *s, char *why, size_t wlen)
{
	sigset_t all, old;
	char err[400] = "";
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = krec_start(s->krec, err, sizeof(err));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return seterr(why, wlen, -r, "kernel events: %s", err);
	return 0;
}

/* Stops the recorder: tracing off, every CPU's buffer drained, the trace
 * closed; keeps its figures and its clock, destroys the instance. */
static void kernel_stop(struct session *s)
{
	char err[400] = "";
	if (!s->krec)
		return;
	if (krec_stop(s->krec, err, sizeof(err)) < 0 && !s->kerr)
		s->kerr = strdup(err[0] ? err : "the kernel trace could not be written");
	for (unsigned i = 0; i < krec_ncpus(s->krec); i++) {
		s->kevents += krec_stats(s->krec, i)->events;
		s->klost += krec_stats(s->krec, i)->lost;
	}
	s->ksd = krec_statedump_events(s->krec);
	s->kclock_ok = krec_clock_get(s->krec, &s->kfreq, &s->koff_s, &s->koff) == 0;
	krec_free(s->krec);
	s->krec = NULL;
	s->kdone = true;
}

/* The user-space trace's clock: the kernel trace's when there is one
 * (same raw clock, same declaration: they merge exactly), else measured
 * over the session. */
static void ust_clock(struct session *s, struct trawl_ctf_trace *t)
{
	ust_clock_fill(t, s->tsc, s->c0, s->mono0, s->real0);
	if (s->kclock_ok) {
		t->clocks[0].freq = s->kfreq;
		t->clocks[0].offset_s = s->koff_s;
		t->clocks[0].offset = s->koff;
	}
}

static int do_start(struct session *s, char *why, size_t wlen)
{
	struct session *busy = recording();
	if (busy) {
		snprintf(why, wlen, "session %s is recording: one session records at a time",
			 busy->name);
		return -EBUSY;
	}
	if (s->state != S_NEW) {
		snprintf(why, wlen, "session %s was already started (create a new one)", s->name);
		return -EINVAL;
	}
	if (!s->nrules && !s->nkev) {
		snprintf(why, wlen, "session %s has no enabled event (trawl enable %s 'GLOB' or -k EVENTS)",
			 s->name, s->name);
		return -EINVAL;
	}
	s->tsc = s->clock_opt == TRAWL_UST_CLOCK_TSC ||
		 (s->clock_opt == TRAWL_UST_CLOCK_AUTO && clocksource_is_tsc());
	if (s->relay) {
		/* streamed, the metadata leaves before the end: the TSC's
		 * frequency, measured over the session, would come too late */
		if (s->clock_opt == TRAWL_UST_CLOCK_TSC) {
			snprintf(why, wlen, "session %s streams to a relay: its clock is monotonic "
				 "(not tsc)", s->name);
			return -EINVAL;
		}
		s->tsc = false;
	}
	/* the kernel recorder is ready (instance, events, filter) before the
	 * user-space trace exists, and records before applications start */
	int r;
	if (s->nkev && (r = kernel_new(s, why, wlen)) < 0)
		return r;
	ust_clock_sample(s->tsc, &s->c0, &s->mono0, &s->real0);
	if (s->mode == TRAWL_UST_DISCARD && s->nrules) {
		char *d = s->output ? trace_dir(s->output) : NULL;
		char rerr[300] = "";
		struct ust_writer_relay rel = {
			.addr = s->relay, .session = s->relay_session ? s->relay_session : s->name,
			.live_us = (uint64_t)s->live_ms * 1000, .err = rerr, .errlen = sizeof(rerr),
		};
		s->w = d || s->relay ? ust_writer_new(d, hostname, s->tsc, opt->io_queue,
						      s->relay ? &rel : NULL) : NULL;
		if (!s->w) {
			int e = errno;
			if (*rerr)
				snprintf(why, wlen, "%s", rerr);
			else
				snprintf(why, wlen, "cannot create the trace in %s: %s",
					 d ? d : s->output, strerror(e));
			free(d);
			krec_free(s->krec);
			s->krec = NULL;
			return -e;
		}
		free(d);
		memcpy(s->uuid, trawl_ctf_writer_trace(s->w)->uuid, 16);
		/* streamed: the clock is final before the first packet */
		if (s->relay)
			ust_clock_fill(trawl_ctf_writer_trace(s->w), false, s->c0, s->mono0, s->real0);
	} else {
		uuid_random(s->uuid);
	}
	if (s->krec && (r = kernel_start(s, why, wlen)) < 0) {
		trawl_ctf_writer_free(s->w);
		s->w = NULL;
		krec_free(s->krec);
		s->krec = NULL;
		return r;
	}
	/* streamed with kernel events: the kernel trace's clock (final at
	 * its start) is the user-space trace's too, so that they merge */
	if (s->relay && s->krec && s->w &&
	    krec_clock_get(s->krec, &s->kfreq, &s->koff_s, &s->koff) == 0) {
		s->kclock_ok = true;
		ust_clock(s, trawl_ctf_writer_trace(s->w));
	}
	s->next_live = s->live_ms ? (now_ms() / s->live_ms + 1) * s->live_ms : 0;
	s->state = S_ACTIVE;
	s->deadline = now_ms() + (int64_t)opt->start_timeout_ms;
	for (struct conn *c = conns; c; c = c->next) {
		if (c->type != C_APP || c->closing || !s->nrules)
			continue;
		if (!part_new(s, c)) {
			c->closing = true;
			continue;
		}
		send_start(s, c);
	}
	logmsg("session %s started", s->name);
	return 0;
}

/* ------------------------------------------------------------- verbs */

static int parse_u32(const char *v, uint32_t *out)
{
	char *end;
	unsigned long long x = strtoull(v, &end, 0);
	if (!*v || x > UINT32_MAX)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		x <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		x <<= 20, end++;
	if (*end || x > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

/* Applies one create setting "key=value"; an error message in why. */
static int apply_setting(struct session *s, const char *kv, char *why, size_t wlen)
{
	const char *eq = strchr(kv, '=');
	size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);
	const char *v = eq ? eq + 1 : "";
#define KEY(k) (kl == strlen(k) && strncmp(kv, k, kl) == 0)
	uint32_t u;
	if (KEY("output")) {
		free(s->output);
		s->output = *v ? strdup(v) : NULL;
	} else if (KEY("snapshot")) {
		s->snapshot = strcmp(v, "yes") == 0 || strcmp(v, "1") == 0 || strcmp(v, "true") == 0;
		if (s->snapshot)
			s->mode = TRAWL_UST_OVERWRITE;
	} else if (KEY("mode")) {
		if (strcmp(v, "discard") == 0)
			s->mode = TRAWL_UST_DISCARD;
		else if (strcmp(v, "overwrite") == 0)
			s->mode = TRAWL_UST_OVERWRITE;
		else
			goto bad;
	} else if (KEY("subbuf-size")) {
		if (parse_u32(v, &u) < 0 || u < 4096 || (u & (u - 1)) || u > (1u << 30))
			goto bad;
		s->S = u;
	} else if (KEY("num-subbuf")) {
		if (parse_u32(v, &u) < 0 || u < 2 || (u & (u - 1)) || u > 65536)
			goto bad;
		s->N = u;
	} else if (KEY("clock")) {
		if (strcmp(v, "auto") == 0)
			s->clock_opt = TRAWL_UST_CLOCK_AUTO;
		else if (strcmp(v, "tsc") == 0)
			s->clock_opt = TRAWL_UST_CLOCK_TSC;
		else if (strcmp(v, "monotonic") == 0)
			s->clock_opt = TRAWL_UST_CLOCK_MONOTONIC;
		else
			goto bad;
	} else if (KEY("relay")) {
		free(s->relay);
		s->relay = *v ? strdup(v) : NULL;
	} else if (KEY("relay-session")) {
		free(s->relay_session);
		s->relay_session = *v ? strdup(v) : NULL;
	} else if (KEY("live-timer")) {
		if (parse_u32(v, &u) < 0 || u > 60000)
			goto bad;
		s->live_ms = u;
	} else if (KEY("header")) {
		if (strcmp(v, "large") == 0)
			s->header = TRAWL_UST_HEADER_LARGE;
		else if (strcmp(v, "fixed") == 0)
			s->header = TRAWL_UST_HEADER_FIXED;
		else
			goto bad;
	} else {
		snprintf(why, wlen, "unknown setting '%.*s'", (int)kl, kv);
		return -EINVAL;
	}
	return 0;
#undef KEY
bad:
	snprintf(why, wlen, "bad value for %.*s: '%s'", (int)kl, kv, v);
	return -EINVAL;
}

static int add_rule(struct session *s, const char *glob, int ll)
{
	for (size_t i = 0; i < s->nrules; i++)
		if (strcmp(s->rules[i].glob, glob) == 0) {
			s->rules[i].loglevel = ll;
			return 0;
		}
	void *m = realloc(s->rules, (s->nrules + 1) * sizeof(*s->rules));
	if (!m)
		return -ENOMEM;
	s->rules = m;
	s->rules[s->nrules].glob = strdup(glob);
	s->rules[s->nrules].loglevel = ll;
	if (!s->rules[s->nrules].glob)
		return -ENOMEM;
	s->nrules++;
	return 0;
}

static const char *const ctx_names[] = { "vpid", "vtid", "procname", "cgroup" };

static int ctx_bit(const char *n)
{
	for (size_t i = 0; i < ARRAY_SIZE(ctx_names); i++)
		if (strcmp(n, ctx_names[i]) == 0)
			return 1 << i;
	if (strcmp(n, "cgroup_id") == 0 || strcmp(n, "cgroup-id") == 0)
		return TRAWL_UST_CTX_CGROUP_ID;
	return 0;
}

static struct session *session_create(const char *name, char *why, size_t wlen)
{
	if (!*name || strlen(name) > 200 || strpbrk(name, "/ \t\n")) {
		snprintf(why, wlen, "bad session name '%s'", name);
		return NULL;
	}
	if (find_session(name)) {
		snprintf(why, wlen, "session %s exists", name);
		return NULL;
	}
	struct session *s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(name))) {
		free(s);
		snprintf(why, wlen, "out of memory");
		return NULL;
	}
	s->key = next_key++;
	s->S = TRAWL_UST_DEFAULT_SUBBUF_SIZE;
	return s;
}

static int session_check(struct session *s, char *why, size_t wlen)
{
	if (!s->snapshot && !s->output && !s->relay) {
		snprintf(why, wlen, "no output directory (nor relay)");
		return -EINVAL;
	}
	if (s->relay && (s->snapshot || s->mode == TRAWL_UST_OVERWRITE)) {
		snprintf(why, wlen, "a relay takes discard-mode sessions (not snapshots)");
		return -EINVAL;
	}
	if (s->snapshot && (s->nkev || s->kfilter || s->nkpids)) {
		snprintf(why, wlen, "kernel events are recorded by sessions with an output only (not in snapshots)");
		return -EINVAL;
	}
	return 0;
}

static void session_add(struct session *s)
{
	struct session **pp = &sessions;
	while (*pp)
		pp = &(*pp)->next;
	*pp = s;
}

/* The text form (docs/agent.md); `trawl save` writes it, `load` reads it. */
static char *describe(struct session *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	fprintf(f, "# trawl session description (trawl save; trawl load reads it)\n");
	fprintf(f, "session = %s\n", s->name);
	if (s->output)
		fprintf(f, "output = %s\n", s->output);
	fprintf(f, "snapshot = %s\n", s->snapshot ? "yes" : "no");
	fprintf(f, "mode = %s\n", s->mode == TRAWL_UST_OVERWRITE ? "overwrite" : "discard");
	fprintf(f, "subbuf-size = %u\n", s->S);
	fprintf(f, "num-subbuf = %u\n", nsubbuf(s));
	fprintf(f, "clock = %s\n", s->clock_opt == TRAWL_UST_CLOCK_TSC ? "tsc" :
		s->clock_opt == TRAWL_UST_CLOCK_MONOTONIC ? "monotonic" : "auto");
	fprintf(f, "header = %s\n", s->header == TRAWL_UST_HEADER_FIXED ? "fixed" : "large");
	for (size_t i = 0; i < ARRAY_SIZE(ctx_names); i++)
		if (s->contexts & (1u << i))
			fprintf(f, "context = %s\n", ctx_names[i]);
	for (size_t i = 0; i < s->nrules; i++) {
		if (s->rules[i].loglevel >= 0)
			fprintf(f, "event = %s loglevel %d\n", s->rules[i].glob, s->rules[i].loglevel);
		else
			fprintf(f, "event = %s\n", s->rules[i].glob);
	}
	for (size_t i = 0; i < s->nkev; i++)
		fprintf(f, "kernel-event = %s\n", s->kev[i]);
	if (s->kfilter)
		fprintf(f, "kernel-filter = %s\n", s->kfilter);
	if (s->relay)
		fprintf(f, "relay = %s\n", s->relay);
	if (s->relay_session)
		fprintf(f, "relay-session = %s\n", s->relay_session);
	if (s->live_ms)
		fprintf(f, "live-timer = %u\n", s->live_ms);
	for (size_t i = 0; i < s->nkpids; i++)
		fprintf(f, "kernel-pid = %d\n", (int)s->kpids[i]);
	fclose(f);
	return out;
}

/* Parses a description into a new session (not yet added). */
static struct session *load_text(char *text, const char *rename, char *why, size_t wlen)
{
	struct session *s = NULL;
	char *save = NULL;
	unsigned lineno = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		lineno++;
		while (*l == ' ' || *l == '\t')
			l++;
		size_t n = strlen(l);
		while (n && (l[n - 1] == ' ' || l[n - 1] == '\t' || l[n - 1] == '\r'))
			l[--n] = 0;
		if (!*l || *l == '#')
			continue;
		char *eq = strchr(l, '=');
		if (!eq) {
			snprintf(why, wlen, "line %u: expected 'key = value'", lineno);
			goto bad;
		}
		char *k = l, *v = eq + 1;
		char *ke = eq;
		while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
			ke--;
		*ke = 0;
		while (*v == ' ' || *v == '\t')
			v++;
		if (strcmp(k, "session") == 0) {
			if (s) {
				snprintf(why, wlen, "line %u: a second 'session'", lineno);
				goto bad;
			}
			s = session_create(rename ? rename : v, why, wlen);
			if (!s)
				goto bad;
			continue;
		}
		if (!s) {
			snprintf(why, wlen, "line %u: 'session = NAME' must come first", lineno);
			goto bad;
		}
		if (strcmp(k, "context") == 0) {
			int b = ctx_bit(v);
			if (!b) {
				snprintf(why, wlen, "line %u: unknown context '%s'", lineno, v);
				goto bad;
			}
			s->contexts |= (unsigned)b;
		} else if (strcmp(k, "kernel-event") == 0) {
			char w2[400];
			if (kspec_check(v, w2, sizeof(w2)) < 0) {
				snprintf(why, wlen, "line %u: %s", lineno, w2);
				goto bad;
			}
			if (add_kspec(s, v) < 0) {
				snprintf(why, wlen, "out of memory");
				goto bad;
			}
		} else if (strcmp(k, "kernel-filter") == 0 || strcmp(k, "kernel-pid") == 0) {
			char w2[400];
			if ((k[7] == 'f' ? set_kfilter(s, v, w2, sizeof(w2)) :
			     add_kpid(s, v, w2, sizeof(w2))) < 0) {
				snprintf(why, wlen, "line %u: %s", lineno, w2);
				goto bad;
			}
		} else if (strcmp(k, "event") == 0) {
			char *sp = strpbrk(v, " \t");
			int ll = -1;
			if (sp) {
				*sp++ = 0;
				while (*sp == ' ' || *sp == '\t')
					sp++;
				if (strncmp(sp, "loglevel", 8) != 0 ||
				    (ll = agent_loglevel(sp + 8 + strspn(sp + 8, " \t"))) < 0) {
					snprintf(why, wlen, "line %u: expected 'event = GLOB [loglevel LEVEL]'",
						 lineno);
					goto bad;
				}
			}
			if (!*v || add_rule(s, v, ll) < 0) {
				snprintf(why, wlen, "line %u: bad event rule", lineno);
				goto bad;
			}
		} else {
			char kv[4200];
			char w2[200];
			snprintf(kv, sizeof(kv), "%s=%s", k, v);
			if (apply_setting(s, kv, w2, sizeof(w2)) < 0) {
				snprintf(why, wlen, "line %u: %s", lineno, w2);
				goto bad;
			}
		}
	}
	if (!s) {
		snprintf(why, wlen, "no 'session = NAME' line");
		return NULL;
	}
	if (session_check(s, why, wlen) < 0)
		goto bad;
	return s;
bad:
	if (s)
		session_free(s);
	return NULL;
}

static void list_all(struct conn *c, const char *only)
{
	bool any = false;
	for (struct session *s = sessions; s; s = s->next) {
		if (only && strcmp(only, s->name) != 0)
			continue;
		if (!any)
			cprint(c, AM_OUT, "Sessions:\n");
		any = true;
		cprint(c, AM_OUT, "  %s [%s] %s%s, %u x %u bytes%s%s\n", s->name, state_names[s->state],
		       s->snapshot ? "snapshot, " : "",
		       s->mode == TRAWL_UST_OVERWRITE ? "overwrite" : "discard", nsubbuf(s), s->S,
		       s->output ? ", output " : "", s->output ? s->output : "");
		for (size_t i = 0; i < s->nrules; i++) {
			if (s->rules[i].loglevel >= 0)
				cprint(c, AM_OUT, "    event %s (loglevel <= %d)\n", s->rules[i].glob,
				       s->rules[i].loglevel);
			else
				cprint(c, AM_OUT, "    event %s\n", s->rules[i].glob);
		}
		for (size_t i = 0; i < ARRAY_SIZE(ctx_names); i++)
			if (s->contexts & (1u << i))
				cprint(c, AM_OUT, "    context %s\n", ctx_names[i]);
		for (size_t i = 0; i < s->nkev; i++)
			cprint(c, AM_OUT, "    kernel event %s\n", s->kev[i]);
		if (s->kfilter)
			cprint(c, AM_OUT, "    kernel filter %s\n", s->kfilter);
		for (size_t i = 0; i < s->nkpids; i++)
			cprint(c, AM_OUT, "    kernel pid %d\n", (int)s->kpids[i]);
		if (s->krec)
			cprint(c, AM_OUT, "    kernel: recording into %s/%s/kernel, clock %s\n",
			       s->output, hostname, s->kclock);
		else if (s->kdone)
			cprint(c, AM_OUT, "    kernel: %" PRIu64 " events, %" PRIu64 " lost, %" PRIu64
			       " state dump events, clock %s%s%s\n", s->kevents, s->klost, s->ksd,
			       s->kclock, s->kerr ? "; error: " : "", s->kerr ? s->kerr : "");
		for (struct part *p = s->parts; p; p = p->next) {
			unsigned nr = 0;
			for (struct aring *r = p->rings; r; r = r->next)
				nr++;
			cprint(c, AM_OUT, "    pid %d (%s): %zu event%s enabled, %u buffer%s%s\n",
			       (int)p->pid, p->name, p->nevs, p->nevs == 1 ? "" : "s", nr,
			       nr == 1 ? "" : "s", p->dead ? ", exited" : "");
		}
	}
	if (only) {
		if (!any)
			cfail(c, 1, "no session %s", only);
		else
			cend(c, 0);
		return;
	}
	if (!any)
		cprint(c, AM_OUT, "Sessions: none\n");
	bool apps = false;
	for (struct conn *a = conns; a; a = a->next) {
		if (a->type != C_APP)
			continue;
		if (!apps)
			cprint(c, AM_OUT, "Applications:\n");
		apps = true;
		cprint(c, AM_OUT, "  pid %d (%s)%s\n", (int)a->pid, a->name,
		       a->part ? " recording" : "");
		for (size_t i = 0; i < a->nev; i++)
			cprint(c, AM_OUT, "    %s (loglevel %d)\n", a->evnames[i], a->evll[i]);
	}
	if (!apps)
		cprint(c, AM_OUT, "Applications: none\n");
	cend(c, 0);
}

/* One session command: argv[0] the verb (see cmd-session.c). */
static void client_cmd(struct conn *c, int argc, char **argv)
{
	char why[512] = "";
	const char *verb = argv[0];
	struct session *s = NULL;
	if (strcmp(verb, "list") == 0) {
		list_all(c, argc > 1 ? argv[1] : NULL);
		return;
	}
	if (strcmp(verb, "load") == 0) {
		if (argc < 2)
			return cfail(c, 2, "load: no description");
		s = load_text(argv[1], argc > 2 ? argv[2] : NULL, why, sizeof(why));
		if (!s)
			return cfail(c, 1, "%s", why);
		session_add(s);
		cprint(c, AM_OUT, "session %s loaded\n", s->name);
		return cend(c, 0);
	}
	if (argc < 2)
		return cfail(c, 2, "%s: no session name", verb);
	if (strcmp(verb, "create") == 0) {
		s = session_create(argv[1], why, sizeof(why));
		if (!s)
			return cfail(c, 1, "%s", why);
		for (int i = 2; i < argc; i++)
			if (apply_setting(s, argv[i], why, sizeof(why)) < 0) {
				session_free(s);
				return cfail(c, 2, "%s", why);
			}
		if (session_check(s, why, sizeof(why)) < 0) {
			session_free(s);
			return cfail(c, 2, "%s", why);
		}
		session_add(s);
		if (s->snapshot)
			cprint(c, AM_OUT, "session %s created in snapshot mode%s%s\n", s->name,
			       s->output ? ", snapshots in " : "", s->output ? s->output : "");
		else if (s->relay)
			cprint(c, AM_OUT, "session %s created, streamed to relay %s as %s/%s%s%s%s\n",
			       s->name, s->relay, s->relay_session ? s->relay_session : s->name,
			       hostname, s->live_ms ? "" : " (no live timer)",
			       s->output ? ", trace also in " : "", s->output ? s->output : "");
		else
			cprint(c, AM_OUT, "session %s created, trace in %s\n", s->name, s->output);
		return cend(c, 0);
	}
	s = find_session(argv[1]);
	if (!s)
		return cfail(c, 1, "no session %s", argv[1]);
	if (strcmp(verb, "enable") == 0 || strcmp(verb, "disable") == 0 ||
	    strcmp(verb, "add-context") == 0) {
		if (s->state != S_NEW)
			return cfail(c, 1, "session %s is %s: rules change before start only",
				     s->name, state_names[s->state]);
		/* kernel rules ("--kernel=SPEC", "--filter=EXPR", "--pid=N"):
		 * all checked before any is applied */
		for (int i = 2; verb[0] == 'e' && i < argc; i++) {
			if (strncmp(argv[i], "--filter=", 9) == 0 && s->kfilter &&
			    strcmp(s->kfilter, argv[i] + 9) != 0)
				return cfail(c, 1, "session %s already has the kernel filter '%s' (one "
					     "filter applies to every kernel event; disable -k --all first)",
					     s->name, s->kfilter);
			if (strncmp(argv[i], "--kernel=", 9) != 0)
				continue;
			if (s->snapshot)
				return cfail(c, 1, "session %s is in snapshot mode: kernel events are "
					     "recorded by sessions with an output only (not in snapshots)",
					     s->name);
			if (kspec_check(argv[i] + 9, why, sizeof(why)) < 0)
				return cfail(c, 1, "%s", why);
		}
		for (int i = 2; i < argc; i++) {
			if (strncmp(argv[i], "--kernel=", 9) == 0 && verb[0] == 'e') {
				if (add_kspec(s, argv[i] + 9) < 0)
					return cfail(c, 1, "out of memory");
				cprint(c, AM_OUT, "kernel event %s enabled in session %s\n", argv[i] + 9,
				       s->name);
			} else if (strncmp(argv[i], "--filter=", 9) == 0 && verb[0] == 'e') {
				if (set_kfilter(s, argv[i] + 9, why, sizeof(why)) < 0)
					return cfail(c, 1, "%s", why);
				cprint(c, AM_OUT, "kernel filter '%s' set in session %s\n", argv[i] + 9,
				       s->name);
			} else if (strncmp(argv[i], "--pid=", 6) == 0 && verb[0] == 'e') {
				if (add_kpid(s, argv[i] + 6, why, sizeof(why)) < 0)
					return cfail(c, 2, "%s", why);
				cprint(c, AM_OUT, "kernel events of pid %s in session %s\n", argv[i] + 6,
				       s->name);
			} else if (strcmp(argv[i], "--kernel-all") == 0 && verb[0] == 'd') {
				clear_kernel(s);
				cprint(c, AM_OUT, "every kernel event disabled in session %s\n", s->name);
			} else if (strncmp(argv[i], "--kernel=", 9) == 0 && verb[0] == 'd') {
				const char *spec = argv[i] + 9;
				size_t k = 0;
				bool found = false;
				for (size_t j = 0; j < s->nkev; j++) {
					if (strcmp(s->kev[j], spec) == 0) {
						found = true;
						free(s->kev[j]);
					} else {
						s->kev[k++] = s->kev[j];
					}
				}
				s->nkev = k;
				if (!found)
					return cfail(c, 1, "session %s has no kernel rule '%s'", s->name, spec);
				cprint(c, AM_OUT, "kernel event %s disabled in session %s\n", spec, s->name);
			} else if (verb[0] == 'e') {
				char *at = strrchr(argv[i], '@');
				int ll = -1;
				if (at) {
					*at = 0;
					ll = agent_loglevel(at + 1);
				}
				if (!*argv[i] || (at && ll < 0))
					return cfail(c, 2, "bad event rule '%s'", argv[i]);
				if (add_rule(s, argv[i], ll) < 0)
					return cfail(c, 1, "out of memory");
				cprint(c, AM_OUT, "event %s enabled in session %s\n", argv[i], s->name);
			} else if (verb[0] == 'd') {
				size_t k = 0;
				bool all = strcmp(argv[i], "--all") == 0, found = false;
				for (size_t j = 0; j < s->nrules; j++) {
					if (all || strcmp(s->rules[j].glob, argv[i]) == 0) {
						found = true;
						free(s->rules[j].glob);
					} else {
						s->rules[k++] = s->rules[j];
					}
				}
				s->nrules = k;
				if (!found && !all)
					return cfail(c, 1, "session %s has no rule '%s'", s->name,
						     argv[i]);
				cprint(c, AM_OUT, "%s disabled in session %s\n",
				       all ? "every event" : argv[i], s->name);
			} else {
				int b = ctx_bit(argv[i]);
				if (!b)
					return cfail(c, 2, "unknown context '%s' (vpid, vtid, procname, cgroup)",
						     argv[i]);
				s->contexts |= (unsigned)b;
				cprint(c, AM_OUT, "context %s added to session %s\n", argv[i], s->name);
			}
		}
		return cend(c, 0);
	}
	if (strcmp(verb, "start") == 0) {
		if (do_start(s, why, sizeof(why)) < 0)
			return cfail(c, 1, "%s", why);
		s->waiter = c;
		return;		/* when the applications answered */
	}
	if (strcmp(verb, "stop") == 0 || strcmp(verb, "destroy") == 0) {
		bool destroy = verb[0] == 'd';
		if (s->waiter)
			return cfail(c, 1, "session %s is busy", s->name);
		if (s->state == S_ACTIVE) {
			begin_stop(s);
			if (!destroy) {
				s->waiter = c;	/* answered by finish_stop */
				return;
			}
			/* stopped (the trace is kept), then freed by check_waiters */
			s->destroy = true;
			cprint(c, AM_OUT, "session %s destroyed\n", s->name);
			return cend(c, 0);
		}
		if (!destroy)
			return cfail(c, 1, "session %s is not recording (%s)", s->name,
				     state_names[s->state]);
		if (s->state == S_STOPPING)
			return cfail(c, 1, "session %s is stopping", s->name);
		for (struct session **pp = &sessions; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		cprint(c, AM_OUT, "session %s destroyed\n", s->name);
		session_free(s);
		return cend(c, 0);
	}
	if (strcmp(verb, "snapshot") == 0) {
		if (s->mode != TRAWL_UST_OVERWRITE)
			return cfail(c, 1, "session %s is not in snapshot (overwrite) mode", s->name);
		if (s->state == S_NEW || s->state == S_STOPPING)
			return cfail(c, 1, "session %s is %s", s->name, state_names[s->state]);
		const char *out = argc > 2 ? argv[2] : NULL;
		char *base = NULL;
		if (!out) {
			if (!s->output)
				return cfail(c, 2, "session %s has no output: snapshot record -o DIR",
					     s->name);
			if (asprintf(&base, "%s/snapshot-%u", s->output, ++s->nsnap) < 0)
				return cfail(c, 1, "out of memory");
			out = base;
		}
		char *d = trace_dir(out);
		uint64_t ev = 0, torn = 0;
		drain_session(s);
		int r = d ? snapshot_to(s, d, &ev, &torn) : -ENOMEM;
		free(d);
		if (r < 0) {
			cfail(c, 1, "snapshot of %s into %s: %s", s->name, out, strerror(-r));
		} else {
			cprint(c, AM_OUT, "snapshot of %s: %" PRIu64 " events in %s\n", s->name, ev, out);
			cend(c, 0);
		}
		free(base);
		return;
	}
	if (strcmp(verb, "describe") == 0) {
		char *t = describe(s);
		if (!t)
			return cfail(c, 1, "out of memory");
		ctext(c, AM_OUT, t);
		free(t);
		return cend(c, 0);
	}
	cfail(c, 2, "unknown request '%s'", verb);
}

/* ------------------------------------------------------------- connections */

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
	struct session *s = recording();
	if (h.flags & AM_HELLO_CHILD) {
		struct session *ks = find_key(h.session);
		if (ks && ks == s && s->state == S_ACTIVE) {
			struct part *p = part_new(s, c);
			if (p)
				p->acked = true;
		} else {
			logmsg("pid %d: a child of a session that does not record", (int)c->pid);
			send_simple(c, AM_STOP, &h.session, 8);
		}
	} else if (s && s->state == S_ACTIVE && s->nrules) {
		if (part_new(s, c))
			send_start(s, c);
	}
	send_simple(c, AM_READY, NULL, 0);
	logmsg("application pid %d (%s) registered", (int)c->pid, c->name);
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
		struct am_evreg e;
		am_get(&r, &e, sizeof(e));
		const char *name = am_get_str(&r);
		if (r.bad || c->nev >= 100000)
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

/* Reads what a connection has; false when it is finished. */
static bool conn_read(struct conn *c)
{
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
				logmsg("pid %d: %s", (int)c->pid, strerror(errno));
			return false;
		}
		struct am_hdr h;
		if ((size_t)n < sizeof(h) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			logmsg("pid %d: truncated message (%zd bytes, flags %#x)", (int)c->pid, n,
			       (unsigned)mh.msg_flags);
			if (fd >= 0)
				close(fd);
			return false;
		}
		memcpy(&h, msgbuf, sizeof(h));
		if (h.len != (uint32_t)n) {
			logmsg("pid %d: bad message length", (int)c->pid);
			if (fd >= 0)
				close(fd);
			return false;
		}
		if (c->type == C_NEW) {
			if (h.type == AM_HELLO) {
				app_hello(c, msgbuf, (size_t)n);
			} else if (h.type == AM_CMD) {
				c->type = C_CLIENT;
				if (c->uid != geteuid() && c->uid != 0) {
					cfail(c, 1, "permission denied: the agent runs as uid %u",
					      (unsigned)geteuid());
				} else {
					/* argv: NUL-separated strings, copied (replies
					 * are built in msgbuf) */
					char *argv[256];
					int argc = 0;
					char *req = malloc((size_t)n + 1);
					char *p = req + sizeof(h), *end = req + n;
					if (req)
						memcpy(req, msgbuf, (size_t)n);
					if (!req) {
						cfail(c, 1, "out of memory");
					} else if (end > p && end[-1] != 0) {
						cfail(c, 2, "malformed request");
					} else {
						while (p < end && argc < 255) {
							argv[argc++] = p;
							p += strlen(p) + 1;
						}
						argv[argc] = NULL;
						if (!argc)
							cfail(c, 2, "empty request");
						else
							client_cmd(c, argc, argv);
					}
					free(req);
				}
			} else {
				c->closing = true;
			}
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

static void conn_close(struct conn *c)
{
	if (c->part) {
		/* gone (exited, killed, exec): its buffers are ours now */
		c->part->dead = true;
		c->part->stopped = true;
		c->part->app = NULL;
		c->part = NULL;
	}
	for (struct session *s = sessions; s; s = s->next)
		if (s->waiter == c)
			s->waiter = NULL;
	if (c->type == C_APP)
		logmsg("application pid %d (%s) left", (int)c->pid, c->name);
	close(c->fd);
	for (size_t i = 0; i < c->nev; i++)
		free(c->evnames[i]);
	free(c->evnames);
	free(c->evll);
	free(c);
}

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

/* ------------------------------------------------------------- main */

static int listen_on(const char *path, bool system, char *why, size_t wlen)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(why, wlen, "socket path too long: %s", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	/* the directory: private per user, world-reachable system-wide */
	char dir[sizeof(a.sun_path)];
	strcpy(dir, path);
	char *sl = strrchr(dir, '/');
	if (sl && sl != dir) {
		*sl = 0;
		if (mkdir(dir, system ? 0755 : 0700) < 0 && errno != EEXIST) {
			snprintf(why, wlen, "cannot create %s: %s", dir, strerror(errno));
			return -1;
		}
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(why, wlen, "socket: %s", strerror(errno));
		return -1;
	}
	int b = bind(fd, (struct sockaddr *)&a, sizeof(a));
	if (b < 0 && errno == EADDRINUSE) {
		/* a live agent, or a stale socket? */
		int t = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (t >= 0 && connect(t, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(t);
			close(fd);
			snprintf(why, wlen, "an agent is already listening on %s", path);
			return -1;
		}
		if (t >= 0)
			close(t);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
		b = bind(fd, (struct sockaddr *)&a, sizeof(a));
	}
	if (b < 0 || listen(fd, 64) < 0) {
		snprintf(why, wlen, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (system)
		chmod(path, 0666);	/* any user's applications register */
	return fd;
}

/*
 * The private directory `trawl record` made for a oneshot agent's socket
 * (/tmp/trawl-record-XXXXXX): removed when empty, for when record died
 * without doing it (it removes it too; whoever comes second finds nothing).
 */
static void rmdir_record_dir(const char *sock)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(sock, '/');
	size_t n = slash ? (size_t)(slash - sock) : 0;

	if (!n || n >= sizeof(dir))
		return;
	memcpy(dir, sock, n);
	dir[n] = 0;
	const char *base = strrchr(dir, '/');
	if (base && strncmp(base + 1, "trawl-record-", 13) == 0)
		rmdir(dir);
}

static int oneshot_setup(const struct agent_oneshot *os)
{
	char why[512];
	struct session *s = session_create("oneshot", why, sizeof(why));
	if (!s)
		return die_msg("agent: %s", why);
	int r = 0;
	for (size_t i = 0; i < os->nsettings && !r; i++)
		r = apply_setting(s, os->settings[i], why, sizeof(why));
	if (!r && os->output) {
		free(s->output);
		s->output = strdup(os->output);
		r = s->output ? 0 : -ENOMEM;
	}
	for (size_t i = 0; i < os->nglobs && !r; i++) {
		char *g = strdup(os->globs[i]);
		char *at = g ? strrchr(g, '@') : NULL;
		int ll = -1;
		if (at) {
			*at = 0;
			ll = agent_loglevel(at + 1);
		}
		if (!g || !*g || (at && ll < 0)) {
			snprintf(why, sizeof(why), "bad event rule '%s'", os->globs[i]);
			r = -EINVAL;
		} else {
			r = add_rule(s, g, ll);
		}
		free(g);
	}
	for (size_t i = 0; i < os->nctx && !r; i++) {
		int b = ctx_bit(os->ctx[i]);
		if (!b) {
			snprintf(why, sizeof(why), "unknown context '%s'", os->ctx[i]);
			r = -EINVAL;
		}
		s->contexts |= (unsigned)b;
	}
	if (!r && !s->nrules)
		r = add_rule(s, "*", -1);
	if (!r)
		r = session_check(s, why, sizeof(why));
	if (r < 0) {
		session_free(s);
		return die_msg("agent: %s", why);
	}
	session_add(s);
	if (do_start(s, why, sizeof(why)) < 0)
		return die_msg("agent: %s", why);
	return 0;
}

int agent_run(const struct agent_opts *o)
{
	char why[512];
	opt = o;
	msgbuf = malloc(AM_MSG_MAX);
	if (!msgbuf)
		return die_msg("agent: out of memory");
	if (o->host && *o->host)
		snprintf(hostname, sizeof(hostname), "%s", o->host);
	else if (gethostname(hostname, sizeof(hostname) - 1) < 0 || !*hostname)
		strcpy(hostname, "localhost");
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigset_t block, none;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &none);
	sigdelset(&none, SIGTERM);
	sigdelset(&none, SIGINT);

	bool system = o->socket && strcmp(o->socket, "/run/trawl/agent.sock") == 0;
	int lfd = listen_on(o->socket, system, why, sizeof(why));
	if (lfd < 0)
		return die_msg("agent: %s", why);
	struct stat lst;
	stat(o->socket, &lst);
	/* before any session exists: the threads its writers start take the
	 * loop's scheduling */
	bool rt_ok = false;
	int rt_err = 0;
	if (o->rt_prio > 0) {
		/* the drain is short and periodic: real time, it is never kept
		 * waiting by the busy threads of a loaded machine (its write
		 * queue's thread takes the same, children and the kernel
		 * recorder's reader go back to normal) */
		struct sched_param sp = { .sched_priority = o->rt_prio };
		if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
			rt_ok = true;
		else
			rt_err = errno;
	}
	if (o->oneshot && oneshot_setup(o->oneshot) != 0) {
		unlink(o->socket);
		close(lfd);
		return 1;
	}
	if (o->pidfile) {
		FILE *f = fopen(o->pidfile, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
			unlink(o->socket);
			return die_msg("agent: cannot write %s", o->pidfile);
		}
	}
	if (o->ready_fd >= 0) {
		if (write(o->ready_fd, "ready\n", 6) < 0) {
			/* the parent went away: carry on */
		}
		close(o->ready_fd);
	}
	if (!o->foreground) {
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (nul >= 0) {
			dup2(nul, 2);
			close(nul);
		}
	}
	logmsg("listening on %s", o->socket);
	if (rt_ok)
		logmsg("drain loop at SCHED_FIFO priority %d", o->rt_prio);
	else if (rt_err)
		logmsg("drain loop at normal priority (SCHED_FIFO: %s)", strerror(rt_err));
	int status = 0;
	for (;;) {
		if (quit && !quitting) {
			quitting = true;
			for (struct session *s = sessions; s; s = s->next)
				if (s->state == S_ACTIVE)
					begin_stop(s);
		}
		if (quitting && !recording())
			break;
		size_t n = 1;
		for (struct conn *c = conns; c; c = c->next)
			n++;
		struct pollfd *pf = calloc(n, sizeof(*pf));
		struct conn **pc = calloc(n, sizeof(*pc));
		if (!pf || !pc) {
			free(pf);
			free(pc);
			status = die_msg("agent: out of memory");
			break;
		}
		pf[0].fd = quitting ? -1 : lfd;
		pf[0].events = POLLIN;
		size_t i = 1;
		for (struct conn *c = conns; c; c = c->next, i++) {
			pf[i].fd = c->fd;
			pf[i].events = POLLIN;
			pc[i] = c;
		}
		struct session *rec = recording();
		struct timespec to = { 0, (long)o->flush_ms * 1000000L };
		struct timespec idle = { 1, 0 };
		int pr = ppoll(pf, n, rec || quitting ? &to : &idle, &none);
		if (pr > 0 && (pf[0].revents & POLLIN)) {
			for (;;) {
				int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (cfd < 0)
					break;
				struct conn *c = calloc(1, sizeof(*c));
				struct ucred cr;
				socklen_t cl = sizeof(cr);
				if (!c || getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
					free(c);
					close(cfd);
					continue;
				}
				c->fd = cfd;
				c->uid = cr.uid;
				c->pid = cr.pid;
				c->next = conns;
				conns = c;
			}
		}
		for (size_t k = 1; pr > 0 && k < n; k++)
			if (pf[k].revents && !conn_read(pc[k]))
				pc[k]->closing = true;
		free(pf);
		free(pc);
		for (struct conn **pp = &conns; *pp;) {
			struct conn *c = *pp;
			if (c->closing) {
				*pp = c->next;
				conn_close(c);
			} else {
				pp = &c->next;
			}
		}
		rec = recording();
		if (rec)
			drain_session(rec);
		check_waiters();
	}
	for (struct session *s = sessions; s; s = s->next)
		if (s->err)
			status = 1;
	while (conns) {
		struct conn *c = conns;
		conns = c->next;
		conn_close(c);
	}
	while (sessions) {
		struct session *s = sessions;
		sessions = s->next;
		session_free(s);
	}
	struct stat now;
	if (stat(o->socket, &now) == 0 && now.st_ino == lst.st_ino && now.st_dev == lst.st_dev)
		unlink(o->socket);
	if (o->oneshot)
		rmdir_record_dir(o->socket);
	close(lfd);
	free(msgbuf);
	logmsg("exiting");
	return status;
}
