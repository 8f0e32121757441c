/* SPDX-License-Identifier: MIT */
/*
 * User-space tracing: the tracepoint registry, the per-event recording path
 * (reserve/commit into the calling thread's ring buffer), and the in-process
 * session with its consumer thread.
 *
 * Locking: one mutex (ust_lock) guards the registry, the current session and
 * everything in it; the recording path never takes it. A thread's first
 * enabled event (or its first after a session starts) takes the slow path
 * (attach): under the lock it creates the thread's buffer.
 *
 * Quiescence (stop): the producer sets its `nest` flag, then reads the
 * session generation; stop bumps the generation and clears the buffers'
 * `active`, runs membarrier() (a full barrier on every thread of the
 * process), then waits until every thread's `nest` is 0. After that no
 * producer touches its buffer, and the consumer finalizes the last packets.
 * A thread's nest flag also makes an event that interrupts another event of
 * the same thread (signal handler) count as discarded.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif
#include <linux/membarrier.h>

#include "trawl/relay.h"
#include "proto.h"
#include "ust-internal.h"

/* ------------------------------------------------------------ state */

struct ust_buf;

/* Per thread, process-local, in static TLS (no allocation, so that a
 * signal handler's event never calls malloc for it). */
struct ust_thread {
	int nest;			/* inside an event (atomic) */
	int in_slow;			/* inside attach */
	uint64_t pending;		/* nested drops not yet in the buffer (atomic) */
	uint64_t gen;			/* ust_gen when attached */
	struct ust_shm *h;
	struct ust_ring *ring;
	uint8_t *cur;			/* the open packet */
	uint32_t S;
	uint8_t large;			/* TRAWL_UST_HEADER_LARGE */
	uint8_t ctxlen;
	uint8_t ctx[48];		/* serialized event context */
	struct ust_buf *buf;
	pid_t tid;
};

struct ust_buf {
	struct ust_ring ring;
	struct trawl_ctf_wstream *ws;
	struct ust_thread *thr;		/* NULL once quiescent for good */
	uint64_t consumed;
	uint64_t last_ns;		/* CLOCK_MONOTONIC of the last packet out */
	uint64_t disc_written;		/* events_discarded of the last packet out */
	uint64_t instance;		/* stream_instance_id in its packets */
	pid_t pid, tid;
	bool flushed;			/* final packet written */
	bool ws_failed;
	bool stuck;			/* producer never left its event at stop */
	struct ust_buf *next;
};

enum { S_NEW, S_ACTIVE, S_STOPPING, S_STOPPED };

struct trawl_ust_session {
	/* options */
	char *output;
	enum trawl_ust_mode mode;
	uint32_t S, N;
	char **globs;
	size_t nglobs;
	int *glob_ll;			/* remote: per-glob loglevel (-1: any) */
	bool remote;			/* the agent consumes (app.c) */
	struct trawl_ust_session *remote_next;	/* remote_all list */
	uint64_t key;			/* remote: the agent's session key */
	int loglevel;
	unsigned contexts;
	enum trawl_ust_header header;
	enum trawl_ust_clock clock_opt;
	char *hostname;
	unsigned flush_ms;

	int state;
	pid_t pid;			/* the process recording */
	bool fork_pending;		/* copied into a child by fork() */
	char *outdir;			/* output, or output-<pid> in a child */
	struct trawl_ctf_writer *w;	/* discard mode with output */
	struct trawl_ctf_stream_class *sc;
	uint8_t uuid[16];
	struct trawl_tp_event **evs;	/* enabled events; index = id */
	size_t nevs, evcap;
	struct ust_buf *bufs, *tail;	/* append-only while recording */
	uint64_t next_instance;
	pthread_t consumer;
	bool consumer_running;
	int stopping;			/* atomic */
	bool tsc;
	uint64_t c0;			/* clock at start */
	int64_t mono0, real0;		/* ns */
	int err;
	struct trawl_ust_stats st;
	uint64_t orphans;		/* counted in no buffer (fold_orphans) */
};

pthread_mutex_t ust_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set from just before this thread takes ust_lock until just after it gave
 * it back, so that an event of a signal handler can tell whether waiting
 * for the lock would wait for the very code it interrupted. */
static __thread int tls_lock_held __attribute__((tls_model("initial-exec")));

void ust_lock_take(void)
{
	tls_lock_held = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* before the lock, for a handler */
	pthread_mutex_lock(&ust_lock);
}

void ust_lock_give(void)
{
	pthread_mutex_unlock(&ust_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* after the unlock, for a handler */
	tls_lock_held = 0;
}

bool ust_lock_mine(void)
{
	return tls_lock_held;
}
/* Held by the consumer thread during a pass, and by fork() (atfork), so
 * that a child never inherits a half-done write. */
static pthread_mutex_t cons_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trawl_tp_event *registry;
static struct trawl_ust_session *cur_sess;
static uint64_t ust_gen = 1;		/* atomic: bumped at start and stop */
static int use_tsc;			/* read per event */
static pthread_key_t thr_key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init_once(void);
static bool membarrier_ok;
/* Writers inherited from the parent by a forked child: never closed there
 * (their files belong to the parent), kept reachable. */
static struct trawl_ctf_writer *abandoned[8];
static size_t nabandoned;

static __thread struct ust_thread *tls_thr __attribute__((tls_model("initial-exec")));
static __thread struct ust_thread tls_thr_mem __attribute__((tls_model("initial-exec")));
static __thread int tls_dead __attribute__((tls_model("initial-exec")));
/*
 * Events no buffer can take: emitted by a thread whose TLS destructors
 * already ran (a signal handler, or a later destructor, in an exiting
 * thread), or whose buffer could not be created. Counted process-wide
 * with one atomic add (async-signal-safe); stop folds the count into the
 * discarded counter of a quiescent buffer of the session (fold_orphans),
 * whose last packet then carries it.
 */
static uint64_t ust_orphans;

static void count_orphan(void)
{
	__atomic_fetch_add(&ust_orphans, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ clock */

static int64_t ns_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t ust_clock_now(void)
{
#if HAVE_TSC
	if (likely(__atomic_load_n(&use_tsc, __ATOMIC_RELAXED)))
		return __rdtsc();
#endif
	return ust_now_ns();
}

/* The TSC itself, whatever this process's own tracing uses (the agent
 * samples it for the applications' traces without tracing itself). */
static inline uint64_t tsc_now(void)
{
#if HAVE_TSC
	return __rdtsc();
#else
	return ust_now_ns();
#endif
}

/* A (clock, CLOCK_MONOTONIC, CLOCK_REALTIME) triple: the tightest of a few. */
void ust_clock_sample(bool tsc, uint64_t *c, int64_t *mono, int64_t *real)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 16; i++) {
		int64_t m1 = ns_of(CLOCK_MONOTONIC);
		uint64_t cc = tsc ? tsc_now() : (uint64_t)0;
		int64_t r = ns_of(CLOCK_REALTIME);
		int64_t m2 = ns_of(CLOCK_MONOTONIC);
		if (m2 - m1 < best) {
			best = m2 - m1;
			*mono = m1 + (m2 - m1) / 2;
			*c = tsc ? cc : (uint64_t)*mono;
			*real = r;
		}
	}
}

/* Clock declaration for the trace, from the start sample to now. */
static void clock_fill(struct trawl_ust_session *s, struct trawl_ctf_trace *t)
{
	ust_clock_fill(t, s->tsc, s->c0, s->mono0, s->real0);
}

void ust_clock_fill(struct trawl_ctf_trace *t, bool tsc, uint64_t c0, int64_t mono0, int64_t real0)
{
	struct trawl_ctf_clock *c = &t->clocks[0];
	uint64_t c1;
	int64_t m1, r1;
	if (!tsc) {
		int64_t off = real0 - mono0;
		c->freq = 1000000000;
		c->offset_s = off / 1000000000;
		c->offset = off % 1000000000;
		return;
	}
	ust_clock_sample(true, &c1, &m1, &r1);
	uint64_t freq = 1000000000;
	if (m1 > mono0 && c1 > c0)
		freq = (uint64_t)((__int128)(c1 - c0) * 1000000000 / (m1 - mono0));
	/* round to 1 kHz: the measurement is no better over short sessions */
	freq = (freq + 500) / 1000 * 1000;
	c->freq = freq;
	c->description = "x86 TSC, frequency measured over the session";
	/* epoch ns of cycle 0 = real0 - c0 / freq */
	__int128 off = (__int128)real0 - (__int128)c0 * 1000000000 / freq;
	int64_t o = (int64_t)off;
	int64_t os = o / 1000000000, rem = o % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		os--;
	}
	c->offset_s = os;
	c->offset = (int64_t)((__int128)rem * freq / 1000000000);
}

/* ------------------------------------------------------------ registry */

static bool event_matches(const struct trawl_ust_session *s, const struct trawl_tp_event *ev)
{
	if (s->loglevel >= 0 && ev->loglevel > s->loglevel)
		return false;
	if (!s->nglobs)
		return true;
	char name[512];
	snprintf(name, sizeof(name), "%s:%s", ev->provider, ev->name);
	for (size_t i = 0; i < s->nglobs; i++)
		if (glob_match(s->globs[i], name) &&
		    !(s->glob_ll && s->glob_ll[i] >= 0 && ev->loglevel > s->glob_ll[i]))
			return true;
	return false;
}

static struct trawl_ctf_type *field_type(struct trawl_ctf_writer *w, const struct trawl_tp_field *f)
{
	struct trawl_ctf_type *t;
	switch (f->kind) {
	case TRAWL_TP_INT:
		return trawl_ctf_type_int(w, f->size * 8u, f->sign, f->base);
	case TRAWL_TP_FLOAT:
		return trawl_ctf_type_float(w, f->size * 8u);
	case TRAWL_TP_STRING:
		return trawl_ctf_type_string(w);
	case TRAWL_TP_ARRAY:
		t = trawl_ctf_type_int(w, f->size * 8u, f->sign, f->base);
		return t ? trawl_ctf_type_array(w, t, f->length) : NULL;
	case TRAWL_TP_ENUM:
		t = trawl_ctf_type_int(w, f->size * 8u, f->sign, 10);
		t = t ? trawl_ctf_type_enum(w, t) : NULL;
		for (size_t i = 0; t && f->enm && i < f->enm->n; i++)
			if (trawl_ctf_enum_add(w, t, f->enm->entries[i].label,
					       (uint64_t)f->enm->entries[i].lo,
					       (uint64_t)f->enm->entries[i].hi) < 0)
				t = NULL;
		return t;
	default:
		errno = EINVAL;
		return NULL;
	}
}

/* Adds event class ev (its id already set) to writer w. */
int ust_writer_add_event(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class *sc,
			 const struct trawl_tp_event *ev)
{
	struct trawl_ctf_type *st = trawl_ctf_type_struct(w);
	if (!st)
		return -ENOMEM;
	for (const struct trawl_tp_field *f = ev->fields; f && f->name; f++) {
		int r;
		if (f->kind == TRAWL_TP_BYTES) {
			char len[256];
			snprintf(len, sizeof(len), "%s_length", f->name);
			struct trawl_ctf_type *lt = trawl_ctf_type_int(w, 32, false, 10);
			struct trawl_ctf_type *u8 = trawl_ctf_type_int(w, 8, false, 16);
			struct trawl_ctf_type *q = u8 ? trawl_ctf_type_sequence(w, u8, len) : NULL;
			if (!lt || !q)
				return -ENOMEM;
			r = trawl_ctf_struct_add(w, st, len, lt);
			if (!r)
				r = trawl_ctf_struct_add(w, st, f->name, q);
		} else {
			struct trawl_ctf_type *t = field_type(w, f);
			r = t ? trawl_ctf_struct_add(w, st, f->name, t) : -EINVAL;
		}
		if (r < 0)
			return r;
	}
	char name[512];
	snprintf(name, sizeof(name), "%s:%s", ev->provider, ev->name);
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, name, ev->loglevel, st);
	if (!ec)
		return -errno;
	return ec->id == ev->id ? 0 : -EINVAL;
}

/* Enables ev in session s (lock held). */
static int session_enable(struct trawl_ust_session *s, struct trawl_tp_event *ev)
{
	if (s->nevs >= UINT16_MAX)
		return -E2BIG;
	if (s->nevs == s->evcap) {
		size_t ncap = s->evcap ? s->evcap * 2 : 16;
		void *m = realloc(s->evs, ncap * sizeof(*s->evs));
		if (!m)
			return -ENOMEM;
		s->evs = m;
		s->evcap = ncap;
	}
	ev->id = (uint32_t)s->nevs;
	if (s->remote)
		ust_app_send_evdesc(s->key, ev);
	if (s->w) {
		int r = ust_writer_add_event(s->w, s->sc, ev);
		if (r < 0)
			return r;
	}
	s->evs[s->nevs++] = ev;
	__atomic_store_n(&ev->enabled, 1, __ATOMIC_RELEASE);
	return 0;
}

void trawl_tp_register(struct trawl_tp_event *ev)
{
	if (!ev)
		return;
	ust_app_init();
	ust_lock_take();
	for (struct trawl_tp_event *e = registry; e; e = e->next)
		if (e == ev)
			goto out;
	ev->next = registry;
	registry = ev;
	ust_app_send_evreg(ev);
	if (cur_sess && cur_sess->state == S_ACTIVE && cur_sess->pid == getpid() &&
	    event_matches(cur_sess, ev))
		session_enable(cur_sess, ev);
out:
	ust_lock_give();
}

void trawl_tp_unregister(struct trawl_tp_event *ev)
{
	if (!ev)
		return;
	ust_lock_take();
	for (struct trawl_tp_event **pp = &registry; *pp; pp = &(*pp)->next)
		if (*pp == ev) {
			*pp = ev->next;
			break;
		}
	__atomic_store_n(&ev->enabled, 0, __ATOMIC_RELAXED);
	ust_lock_give();
}

/* ------------------------------------------------------------ threads */

static void thr_exit(void *arg)
{
	struct ust_thread *t = arg;
	tls_dead = 1;
	tls_thr = NULL;
	ust_lock_take();
	if (t->buf && t->gen == __atomic_load_n(&ust_gen, __ATOMIC_RELAXED) &&
	    t->buf->thr == t) {
		struct ust_shm *h = t->h;
		UST_ADD(h->discarded, __atomic_exchange_n(&t->pending, 0, __ATOMIC_RELAXED));
		t->buf->thr = NULL;
		/* partner: the consumer's acquire load of exited; it owns the
		 * buffer from then on and flushes the last packet */
		__atomic_store_n(&h->exited, 1, __ATOMIC_RELEASE);
	}
	ust_lock_give();
	memset(t, 0, sizeof(*t));
}

/* Appends s to the buffer (dst, cap), NUL-terminated; async-signal-safe. */
static size_t cat(char *dst, size_t len, size_t cap, const char *src, size_t n)
{
	if (len + n >= cap)
		n = len < cap ? cap - 1 - len : 0;
	memcpy(dst + len, src, n);
	dst[len + n] = 0;
	return len + n;
}

/* The cgroup v2 id of the calling thread (0 if none): the file handle of
 * its cgroup directory. Uses only system calls (async-signal-safe). */
static uint64_t cgroup_id(void)
{
	char buf[4096], path[4200];
	uint64_t id = 0;
	int fd = open("/proc/thread-self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *l = buf;
	while (l && strncmp(l, "0::", 3) != 0) {
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	if (!l)
		return 0;
	l += 3;
	size_t ll = strcspn(l, "\n");
	const char *roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < ARRAY_SIZE(roots) && !id; i++) {
		union {
			struct file_handle fh;
			char mem[sizeof(struct file_handle) + 8];
		} hd;
		int mnt;
		size_t len = cat(path, 0, sizeof(path), roots[i], strlen(roots[i]));
		cat(path, len, sizeof(path), l, ll);
		hd.fh.handle_bytes = 8;
		if (name_to_handle_at(AT_FDCWD, path, &hd.fh, &mnt, 0) == 0 && hd.fh.handle_bytes == 8)
			memcpy(&id, hd.fh.f_handle, 8);
	}
	return id;
}

static void ctx_fill(struct trawl_ust_session *s, struct ust_thread *t)
{
	uint8_t *p = t->ctx;
	if (s->contexts & TRAWL_UST_CTX_VPID) {
		int32_t v = (int32_t)getpid();
		memcpy(p, &v, 4);
		p += 4;
	}
	if (s->contexts & TRAWL_UST_CTX_VTID) {
		int32_t v = (int32_t)t->tid;
		memcpy(p, &v, 4);
		p += 4;
	}
	if (s->contexts & TRAWL_UST_CTX_PROCNAME) {
		char name[17] = "";
		prctl(PR_GET_NAME, name, 0, 0, 0);
		name[16] = 0;
		memcpy(p, name, 17);
		p += 17;
	}
	if (s->contexts & TRAWL_UST_CTX_CGROUP_ID) {
		uint64_t id = cgroup_id();
		memcpy(p, &id, 8);
		p += 8;
	}
	t->ctxlen = (uint8_t)(p - t->ctx);
}

/* The consumer writes through a queue of this size with a thread of its
 * own (as the agent does, docs/agent.md "Draining"): a write(2) that stalls
 * for milliseconds (writeback) then does not hold up the draining. */
#define SESSION_IO_QUEUE (16u << 20)

static int session_build_writer(struct trawl_ust_session *s, const char *dir, size_t io_queue,
				struct trawl_ctf_writer **pw, struct trawl_ctf_stream_class **psc);
static void *consumer_main(void *arg);

/* The consumer thread blocks every signal: the application's handlers
 * (which may trace) run in the application's threads. */
static int start_consumer(struct trawl_ust_session *s)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&s->consumer, NULL, consumer_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

static void free_bufs(struct trawl_ust_session *s)
{
	for (struct ust_buf *b = s->bufs, *n; b; b = n) {
		n = b->next;
		ust_ring_destroy(&b->ring);
		munmap(b, sizeof(*b));
	}
	s->bufs = s->tail = NULL;
}

/* In a forked child: forget the parent's buffers and writer (lock held). */
static void child_forget(struct trawl_ust_session *s)
{
	free_bufs(s);
	if (s->w && nabandoned < ARRAY_SIZE(abandoned))
		abandoned[nabandoned++] = s->w;
	s->w = NULL;
	s->sc = NULL;
	s->consumer_running = false;
	s->fork_pending = false;
	s->pid = getpid();
}

static int child_reinit(struct trawl_ust_session *s)
{
	child_forget(s);
	s->next_instance = 0;
	memset(&s->st, 0, sizeof(s->st));
	if (s->remote)		/* same uuid; the agent consumes */
		return 0;
	free(s->outdir);
	s->outdir = NULL;
	if (s->output && asprintf(&s->outdir, "%s-%d", s->output, (int)s->pid) < 0) {
		s->outdir = NULL;
		return -ENOMEM;
	}
	uuid_random(s->uuid);
	if (s->mode == TRAWL_UST_DISCARD && s->outdir) {
		int r = session_build_writer(s, s->outdir, SESSION_IO_QUEUE, &s->w, &s->sc);
		if (r < 0)
			return r;
		memcpy(s->uuid, trawl_ctf_writer_trace(s->w)->uuid, 16);
		__atomic_store_n(&s->stopping, 0, __ATOMIC_RELAXED);
		if (start_consumer(s) != 0)
			return -EAGAIN;
		s->consumer_running = true;
	}
	return 0;
}

/* The slow path: give the calling thread a buffer in the current session.
 * Returns 0 or -errno (no session: -ENOENT). */
static int attach(struct ust_thread *t)
{
	int ret = -ENOENT;
	/* The lock may be held by the code this event interrupted (a signal
	 * handler's event in a thread inside a locked section, or taking or
	 * giving the lock): never wait then, the event is counted as lost.
	 * Held by another thread (registering its own buffer with the agent,
	 * say): wait for it, however long, rather than lose the event. */
	if (ust_lock_mine())
		return -EAGAIN;
	ust_lock_take();
	struct trawl_ust_session *s = cur_sess;
	if (!s || s->state != S_ACTIVE)
		goto out;
	if (s->fork_pending) {
		ret = child_reinit(s);
		if (ret < 0) {
			s->state = S_STOPPED;
			goto out;
		}
	}
	/* only system calls from here: this may run in a signal handler */
	struct ust_buf *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = -ENOMEM;
	if (b == MAP_FAILED)
		goto out;
	b->pid = getpid();
	b->tid = t->tid;
	/* the consumer creates the writer's streams in list order, which
	 * gives them these instance ids */
	b->instance = s->next_instance++;
	struct ust_ring_opts ro = {
		.subbuf_size = s->S, .nsubbuf = s->N, .mode = s->mode, .header = s->header,
		.stream_id = 0, .instance_id = b->instance, .uuid = s->uuid, .pid = b->pid,
		.tid = b->tid,
	};
	ret = ust_ring_create(&b->ring, &ro);
	if (ret < 0) {
		munmap(b, sizeof(*b));
		goto out;
	}
	b->ring.shm->active = 1;
	b->thr = t;
	/* append: the consumer walks the list without the lock (nodes are
	 * freed only with the session); partner: its acquire loads of next */
	if (s->tail)
		__atomic_store_n(&s->tail->next, b, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&s->bufs, b, __ATOMIC_RELEASE);
	s->tail = b;
	s->st.buffers++;
	if (s->remote)		/* before the thread's first event */
		ust_app_send_buf(s->key, b->tid, b->ring.fd);
	t->buf = b;
	t->h = b->ring.shm;
	t->ring = &b->ring;
	t->S = s->S;
	t->large = s->header == TRAWL_UST_HEADER_LARGE;
	t->cur = NULL;
	ctx_fill(s, t);
	t->gen = __atomic_load_n(&ust_gen, __ATOMIC_RELAXED);
	ret = 0;
out:
	ust_lock_give();
	return ret;
}

static struct ust_thread *thr_new(void)
{
	if (tls_dead)
		return NULL;
	struct ust_thread *t = &tls_thr_mem;
	t->tid = (pid_t)syscall(SYS_gettid);
	pthread_setspecific(thr_key, t);
	tls_thr = t;
	return t;
}

/* ------------------------------------------------------------ recording */

static void drop_nested(struct ust_thread *t)
{
	/* one instruction-atomic add: a signal handler nested deeper may
	 * interrupt us anywhere */
	__atomic_fetch_add(&t->pending, 1, __ATOMIC_RELAXED);
}

/*
 * The event at ts does not take the common case: time went back, an
 * extended header, a new packet, or no room at all. Continues
 * trawl_ust_reserve() from there (t->nest is set).
 */
static __attribute__((noinline)) uint8_t *reserve_from_ts(struct ust_thread *t,
							  const struct trawl_tp_event *ev,
							  size_t len, struct trawl_ust_ctx *ctx,
							  uint64_t ts)
{
	struct ust_shm *h = t->h;
	if (unlikely(ts < h->last_ts))
		ts = h->last_ts;	/* per stream, time never goes back */
	uint32_t id = ev->id;
	size_t hl;
	bool ext = false;
	if (!t->large) {
		hl = 10;
	} else {
		ext = id >= 65535 || ((ts - h->last_ts) >> 32);
		hl = ext ? 14 : 6;
	}
	size_t need = hl + t->ctxlen + len;
	uint64_t pos = h->pos;
	if (unlikely(!h->open || pos + need > t->S)) {
		size_t h0 = t->large ? (id >= 65535 ? 14 : 6) : 10;
		if (h0 + t->ctxlen + len > t->S - PK_HDR_END) {
			UST_ADD(h->discarded, 1);
			goto out;
		}
		if (h->open)
			ust_ring_finalize(t->ring, ts);
		if (!ust_ring_open(t->ring, ts)) {
			UST_ADD(h->discarded, 1);
			goto out;
		}
		t->cur = ust_ring_subbuf(t->ring, h->produced);
		pos = h->pos;
		hl = h0;
		ext = hl == 14;
		need = hl + t->ctxlen + len;
	}
	uint8_t *p = t->cur + pos;
	uint16_t id16 = (uint16_t)id;
	if (!t->large) {
		memcpy(p, &id16, 2);
		memcpy(p + 2, &ts, 8);
	} else if (!ext) {
		uint32_t ts32 = (uint32_t)ts;
		memcpy(p, &id16, 2);
		memcpy(p + 2, &ts32, 4);
	} else {
		id16 = 65535;
		memcpy(p, &id16, 2);
		memcpy(p + 2, &id, 4);
		memcpy(p + 6, &ts, 8);
	}
	p += hl;
	if (t->ctxlen) {
		memcpy(p, t->ctx, t->ctxlen);
		p += t->ctxlen;
	}
	/* before the payload, so before pos: partner: ust_cons_live */
	__atomic_store_n(&h->last_ts, ts, __ATOMIC_RELEASE);
	ctx->buf = t;
	ctx->end = (uint32_t)(pos + need);
	return p;
out:
	__atomic_store_n(&t->nest, 0, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The session changed since this thread's last event (t->gen): attach to
 * the new one (a buffer of its own), then go on as trawl_ust_reserve()
 * does (t->nest is set).
 */
static __attribute__((noinline)) uint8_t *reserve_attach(struct ust_thread *t,
							 const struct trawl_tp_event *ev,
							 size_t len, struct trawl_ust_ctx *ctx)
{
	t->in_slow = 1;
	__atomic_store_n(&t->nest, 0, __ATOMIC_RELEASE);
	int r = attach(t);
	__atomic_store_n(&t->nest, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_slow = 0;
	if (r < 0 && r != -ENOENT)
		/* no buffer (lock busy, no memory, no fd): its pending count
		 * would never reach a packet */
		count_orphan();
	if (r < 0 || t->gen != __atomic_load_n(&ust_gen, __ATOMIC_RELAXED) ||
	    !__atomic_load_n(&t->h->active, __ATOMIC_RELAXED)) {
		__atomic_store_n(&t->nest, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	return reserve_from_ts(t, ev, len, ctx, ust_clock_now());
}

/* A thread's first event (no state yet), or an event nested in another
 * (a signal handler's): see trawl_ust_reserve(). */
static __attribute__((noinline)) uint8_t *reserve_enter(struct ust_thread *t,
							const struct trawl_tp_event *ev,
							size_t len, struct trawl_ust_ctx *ctx)
{
	if (!t) {
		t = thr_new();
		if (!t) {
			count_orphan();	/* an exiting thread: no buffer any more */
			return NULL;
		}
	}
	if (__atomic_load_n(&t->nest, __ATOMIC_RELAXED) | t->in_slow) {
		drop_nested(t);
		return NULL;
	}
	__atomic_store_n(&t->nest, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* see trawl_ust_reserve() */
	if (t->gen != __atomic_load_n(&ust_gen, __ATOMIC_RELAXED))
		return reserve_attach(t, ev, len, ctx);
	if (!__atomic_load_n(&t->h->active, __ATOMIC_RELAXED)) {
		__atomic_store_n(&t->nest, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	return reserve_from_ts(t, ev, len, ctx, ust_clock_now());
}

/*
 * The common case: a thread with a buffer in the current session, not
 * nested, room in its open packet, a short event header. Everything else
 * is in the reserve_* slow paths above.
 */
uint8_t *trawl_ust_reserve(const struct trawl_tp_event *ev, size_t len,
			   struct trawl_ust_ctx *ctx)
{
	struct ust_thread *t = tls_thr;
	if (unlikely(!t) || unlikely(__atomic_load_n(&t->nest, __ATOMIC_RELAXED) | t->in_slow))
		return reserve_enter(t, ev, len, ctx);
	__atomic_store_n(&t->nest, 1, __ATOMIC_RELAXED);
	/* Dekker with stop(): nest is stored before gen is loaded; stop's
	 * membarrier() supplies the hardware fence on our side */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (unlikely(t->gen != __atomic_load_n(&ust_gen, __ATOMIC_RELAXED)))
		return reserve_attach(t, ev, len, ctx);
	struct ust_shm *h = t->h;
	if (unlikely(!__atomic_load_n(&h->active, __ATOMIC_RELAXED))) {
		__atomic_store_n(&t->nest, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	uint64_t ts = ust_clock_now(), last = h->last_ts;
	uint32_t id = ev->id;
	size_t hl = t->large ? 6 : 10, need = hl + t->ctxlen + len;
	uint64_t pos = h->pos;
	if (unlikely(ts < last) ||
	    unlikely(t->large && (id >= 65535 || ((ts - last) >> 32))) ||
	    unlikely(!h->open || pos + need > t->S))
		return reserve_from_ts(t, ev, len, ctx, ts);
	uint8_t *p = t->cur + pos;
	uint16_t id16 = (uint16_t)id;
	memcpy(p, &id16, 2);
	if (t->large) {
		uint32_t ts32 = (uint32_t)ts;
		memcpy(p + 2, &ts32, 4);
	} else {
		memcpy(p + 2, &ts, 8);
	}
	p += hl;
	if (t->ctxlen) {
		memcpy(p, t->ctx, t->ctxlen);
		p += t->ctxlen;
	}
	/* before the payload, so before pos: partner: ust_cons_live */
	__atomic_store_n(&h->last_ts, ts, __ATOMIC_RELEASE);
	ctx->buf = t;
	ctx->end = (uint32_t)(pos + need);
	return p;
}

void trawl_ust_commit(const struct trawl_ust_ctx *ctx)
{
	struct ust_thread *t = ctx->buf;
	struct ust_shm *h = t->h;
	h->nev++;
	UST_ADD(h->recorded, 1);
	if (unlikely(__atomic_load_n(&t->pending, __ATOMIC_RELAXED)))
		UST_ADD(h->discarded, __atomic_exchange_n(&t->pending, 0, __ATOMIC_RELAXED));
	/* partner: a snapshot's or a stopping consumer's acquire load of pos */
	__atomic_store_n(&h->pos, ctx->end, __ATOMIC_RELEASE);
	/* partner: stop()'s acquire load of nest: everything above is done */
	__atomic_store_n(&t->nest, 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ consumer */

static uint64_t pk_get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/*
 * Writes out every finalized packet of b. Called by the consumer thread
 * only, or by stop() once it has joined it: the writer has one user.
 */
static void drain(struct trawl_ust_session *s, struct ust_buf *b)
{
	struct ust_shm *h = b->ring.shm;
	if (!b->ws && s->w && !b->ws_failed) {
		char name[32] = "ust_", num[16];
		size_t len = 4, nl = 0;
		for (unsigned v = (unsigned)b->pid; v || !nl; v /= 10)
			num[nl++] = (char)('0' + v % 10);
		while (nl)
			name[len++] = num[--nl];
		name[len] = 0;
		b->ws = trawl_ctf_writer_stream(s->w, s->sc, name, (uint32_t)b->tid);
		if (!b->ws) {
			b->ws_failed = true;
			if (!s->err)
				s->err = -errno;
		}
	}
	/* partner: ust_ring_finalize's release store of produced */
	uint64_t P = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
	uint64_t now = b->consumed < P ? ust_now_ns() : 0;
	while (b->consumed < P) {
		uint8_t *pk = ust_ring_subbuf(&b->ring, b->consumed);
		if (b->ws) {
			uint64_t inst = trawl_ctf_wstream_instance_id(b->ws);
			if (inst != b->instance)	/* (a stream failed before) */
				memcpy(pk + PK_INSTANCE_ID, &inst, 8);
			int r = trawl_ctf_wstream_packet(b->ws, pk, b->ring.S);
			if (r < 0 && !s->err)
				s->err = r;
		}
		b->disc_written = pk_get64(pk + PK_DISCARDED);
		if (ust_reclaim_due(now, &b->last_ns))
			ust_ring_reclaim(&b->ring, b->consumed);
		b->consumed++;
		UST_ADD(s->st.packets, 1);
		/* partner: ust_ring_open's acquire load of consumed */
		__atomic_store_n(&h->consumed, b->consumed, __ATOMIC_RELEASE);
	}
}

/* The producer is quiescent or gone: finalize its last packet, and write
 * one more (empty) if discards happened after the last one (lock held). */
static void final_flush(struct trawl_ust_session *s, struct ust_buf *b)
{
	struct ust_shm *h = b->ring.shm;
	if (b->flushed)
		return;
	if (b->stuck) {
		if (s->mode == TRAWL_UST_DISCARD)
			drain(s, b);
		b->flushed = true;
		return;
	}
	/* partner: commit's release store of pos */
	(void)__atomic_load_n(&h->pos, __ATOMIC_ACQUIRE);
	if (h->open)
		ust_ring_finalize(&b->ring, h->last_ts);
	if (s->mode == TRAWL_UST_DISCARD)
		drain(s, b);
	uint64_t last = s->mode == TRAWL_UST_DISCARD ? b->disc_written :
			h->produced ? pk_get64(ust_ring_subbuf(&b->ring, h->produced - 1) + PK_DISCARDED) : 0;
	/* discards after the last packet: one more, empty, to carry them */
	if (h->discarded != last && ust_ring_open(&b->ring, h->last_ts)) {
		ust_ring_finalize(&b->ring, h->last_ts);
		if (s->mode == TRAWL_UST_DISCARD)
			drain(s, b);
	}
	b->flushed = true;
}

static void *consumer_main(void *arg)
{
	struct trawl_ust_session *s = arg;
	struct timespec ts = { 0, (long)s->flush_ms * 1000000L };
	for (;;) {
		bool stop = __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE);
		pthread_mutex_lock(&cons_lock);
		/* partner of attach's release stores of the list links */
		for (struct ust_buf *b = __atomic_load_n(&s->bufs, __ATOMIC_ACQUIRE); b;
		     b = __atomic_load_n(&b->next, __ATOMIC_ACQUIRE)) {
			if (b->flushed)
				continue;
			drain(s, b);
			/* partner: thr_exit's release store of exited */
			if (__atomic_load_n(&b->ring.shm->exited, __ATOMIC_ACQUIRE))
				final_flush(s, b);
		}
		pthread_mutex_unlock(&cons_lock);
		if (stop)
			break;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* ------------------------------------------------------------ session */

static void on_prepare(void)
{
	pthread_mutex_lock(&cons_lock);
	ust_lock_take();
}

static void on_parent(void)
{
	ust_lock_give();
	pthread_mutex_unlock(&cons_lock);
}

static void on_child(void)
{
	pthread_mutex_init(&ust_lock, NULL);
	tls_lock_held = 0;	/* taken by on_prepare, in the parent's copy */
	pthread_mutex_init(&cons_lock, NULL);
	/* the parent's: its session counts them */
	__atomic_store_n(&ust_orphans, 0, __ATOMIC_RELAXED);
	if (tls_thr) {
		/* its buffer is the parent's: the next event attaches anew */
		tls_thr->buf = NULL;
		tls_thr->pending = 0;
		tls_thr->tid = (pid_t)syscall(SYS_gettid);
	}
	if (cur_sess && cur_sess->state == S_ACTIVE) {
		cur_sess->fork_pending = true;
		__atomic_fetch_add(&ust_gen, 1, __ATOMIC_RELAXED);
	}
	/* a child of a registered application registers itself (the parent's
	 * connection is closed here); if it records into an agent session,
	 * the agent learns the events it inherited enabled */
	struct trawl_ust_session *rs = cur_sess && cur_sess->state == S_ACTIVE &&
				       cur_sess->remote ? cur_sess : NULL;
	if (ust_app_child(rs ? rs->key : 0)) {
		ust_lock_take();
		for (struct trawl_tp_event *e = registry; e; e = e->next)
			ust_app_send_evreg(e);
		for (size_t i = 0; rs && i < rs->nevs; i++)
			ust_app_send_evdesc(rs->key, rs->evs[i]);
		ust_lock_give();
	}
}

static void on_exit_stop(void)
{
	ust_lock_take();
	struct trawl_ust_session *s = cur_sess;
	bool mine = s && s->state == S_ACTIVE && (s->pid == getpid() || s->fork_pending);
	ust_lock_give();
	if (mine)
		trawl_ust_session_stop(s);
}

void ust_init_once(void)
{
	pthread_once(&once, init_once);
}

static void init_once(void)
{
	pthread_key_create(&thr_key, thr_exit);
	pthread_atfork(on_prepare, on_parent, on_child);
	atexit(on_exit_stop);
	membarrier_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static bool is_pow2(size_t v)
{
	return v && !(v & (v - 1));
}

static struct trawl_ust_session *session_new(const struct trawl_ust_session_opts *o,
					     bool remote, char *err, size_t errlen);

struct trawl_ust_session *trawl_ust_session_new(const struct trawl_ust_session_opts *o,
						char *err, size_t errlen)
{
	return session_new(o, false, err, errlen);
}

static struct trawl_ust_session *session_new(const struct trawl_ust_session_opts *o,
					     bool remote, char *err, size_t errlen)
{
	if (!o || o->sz < sizeof(*o)) {
		seterr(err, errlen, EINVAL, "session options: bad size");
		errno = EINVAL;
		return NULL;
	}
	size_t S = o->subbuf_size ? o->subbuf_size : TRAWL_UST_DEFAULT_SUBBUF_SIZE;
	unsigned N = o->nsubbuf ? o->nsubbuf : TRAWL_UST_DEFAULT_NSUBBUF(o->mode);
	const char *why = NULL;
	if (!is_pow2(S) || S < 4096 || S > (1u << 30))
		why = "sub-buffer size must be a power of two from 4 KiB to 1 GiB";
	else if (!is_pow2(N) || N < 2 || N > 65536)
		why = "sub-buffer count must be a power of two from 2 to 65536";
	else if (o->mode != TRAWL_UST_DISCARD && o->mode != TRAWL_UST_OVERWRITE)
		why = "bad mode";
	else if (o->mode == TRAWL_UST_DISCARD && !remote && (!o->output || !*o->output))
		why = "discard mode needs an output directory";
	else if (o->header != TRAWL_UST_HEADER_FIXED && o->header != TRAWL_UST_HEADER_LARGE)
		why = "bad event header";
	else if (o->clock > TRAWL_UST_CLOCK_TSC || (o->clock == TRAWL_UST_CLOCK_TSC && !HAVE_TSC))
		why = "bad clock";
	else if (o->contexts & ~0xfu)
		why = "unknown context";
	if (why) {
		seterr(err, errlen, EINVAL, "session options: %s", why);
		errno = EINVAL;
		return NULL;
	}
	struct trawl_ust_session *s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->remote = remote;
	s->mode = o->mode;
	s->S = (uint32_t)S;
	s->N = N;
	s->loglevel = o->by_loglevel ? o->loglevel : -1;
	s->contexts = o->contexts;
	s->header = o->header;
	s->clock_opt = o->clock;
	s->flush_ms = o->flush_ms ? o->flush_ms : 1;
	if ((o->output && !(s->output = strdup(o->output))) ||
	    (o->hostname && !(s->hostname = strdup(o->hostname))))
		goto nomem;
	if (o->nevents) {
		s->globs = calloc(o->nevents, sizeof(*s->globs));
		if (!s->globs)
			goto nomem;
		for (size_t i = 0; i < o->nevents; i++, s->nglobs++)
			if (!(s->globs[i] = strdup(o->events[i])))
				goto nomem;
	}
	return s;
nomem:
	trawl_ust_session_free(s);
	seterr(err, errlen, ENOMEM, "out of memory");
	errno = ENOMEM;
	return NULL;
}

struct trawl_ctf_writer *ust_writer_new(const char *dir, const char *hostname, bool tsc,
				       size_t io_queue, const struct ust_writer_relay *rel)
{
	struct trawl_ctf_dest *dest = NULL;
	if (rel) {
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = rel->addr, .session = rel->session,
			.live_timer_us = rel->live_us,
		};
		if (!(dest = trawl_relay_dest_new(&ro)))
			return NULL;
	}
	struct trawl_ctf_writer_opts wo = {
		.sz = sizeof(wo), .path = dir, .hostname = hostname, .domain = "ust",
		.tracer_name = "trawl", .clock_name = tsc ? "tsc" : "monotonic",
		.clock_freq = 1000000000, .clock_offset_s = 0, .clock_offset = 1,
		.packet_size = 4096, .io_queue = io_queue, .dest = dest,
		.err = rel ? rel->err : NULL, .errlen = rel ? rel->errlen : 0,
	};
	return trawl_ctf_writer_new(&wo);
}

struct trawl_ctf_stream_class *ust_stream_class_new(struct trawl_ctf_writer *w,
						    unsigned header, unsigned contexts)
{
	struct trawl_ctf_type *ctx = NULL;
	int r = 0;
	if (contexts) {
		ctx = trawl_ctf_type_struct(w);
		if (!ctx)
			r = -ENOMEM;
		if (!r && (contexts & TRAWL_UST_CTX_VPID))
			r = trawl_ctf_struct_add(w, ctx, "vpid", trawl_ctf_type_int(w, 32, true, 10));
		if (!r && (contexts & TRAWL_UST_CTX_VTID))
			r = trawl_ctf_struct_add(w, ctx, "vtid", trawl_ctf_type_int(w, 32, true, 10));
		if (!r && (contexts & TRAWL_UST_CTX_PROCNAME)) {
			struct trawl_ctf_type *c = trawl_ctf_type_int(w, 8, false, 10);
			if (c)
				c->u.i.encoding = TRAWL_CTF_ENC_UTF8;
			struct trawl_ctf_type *a = c ? trawl_ctf_type_array(w, c, 17) : NULL;
			r = a ? trawl_ctf_struct_add(w, ctx, "procname", a) : -ENOMEM;
		}
		if (!r && (contexts & TRAWL_UST_CTX_CGROUP_ID))
			r = trawl_ctf_struct_add(w, ctx, "cgroup_id",
						 trawl_ctf_type_int(w, 64, false, 10));
	}
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return trawl_ctf_writer_stream_class(w, header == TRAWL_UST_HEADER_LARGE ?
					     TRAWL_CTF_HEADER_LARGE : TRAWL_CTF_HEADER_FIXED, ctx);
}

static int session_build_writer(struct trawl_ust_session *s, const char *dir, size_t io_queue,
				struct trawl_ctf_writer **pw, struct trawl_ctf_stream_class **psc)
{
	struct trawl_ctf_writer *w = ust_writer_new(dir, s->hostname, s->tsc, io_queue, NULL);
	if (!w)
		return -errno;
	int r = 0;
	struct trawl_ctf_stream_class *sc = ust_stream_class_new(w, s->header, s->contexts);
	if (!sc)
		r = -errno;
	for (size_t i = 0; !r && i < s->nevs; i++)
		r = ust_writer_add_event(w, sc, s->evs[i]);
	if (r < 0) {
		trawl_ctf_writer_free(w);
		return r;
	}
	*pw = w;
	*psc = sc;
	return 0;
}

int trawl_ust_session_start(struct trawl_ust_session *s)
{
	if (!s)
		return -EINVAL;
	pthread_once(&once, init_once);
	ust_lock_take();
	int ret = -EBUSY;
	if (cur_sess || s->state != S_NEW)
		goto out;
	s->pid = getpid();
	s->tsc = s->clock_opt == TRAWL_UST_CLOCK_TSC ||
		 (s->clock_opt == TRAWL_UST_CLOCK_AUTO && HAVE_TSC && clocksource_is_tsc());
	__atomic_store_n(&use_tsc, s->tsc, __ATOMIC_RELAXED);
	ust_clock_sample(s->tsc, &s->c0, &s->mono0, &s->real0);
	if (s->remote) {
		/* the agent consumes: no writer, no thread; uuid set by it */
	} else if (s->output && s->mode == TRAWL_UST_DISCARD) {
		s->outdir = strdup(s->output);
		ret = s->outdir ? session_build_writer(s, s->outdir, SESSION_IO_QUEUE, &s->w, &s->sc) : -ENOMEM;
		if (ret < 0)
			goto out;
		memcpy(s->uuid, trawl_ctf_writer_trace(s->w)->uuid, 16);
	} else {
		uuid_random(s->uuid);
	}
	/* counted while no session recorded: not this one's events */
	__atomic_store_n(&ust_orphans, 0, __ATOMIC_RELAXED);
	for (struct trawl_tp_event *e = registry; e; e = e->next)
		if (event_matches(s, e) && (ret = session_enable(s, e)) < 0)
			goto out;
	if (s->w) {
		if (start_consumer(s) != 0) {
			ret = -EAGAIN;
			goto out;
		}
		s->consumer_running = true;
	}
	s->state = S_ACTIVE;
	cur_sess = s;
	__atomic_fetch_add(&ust_gen, 1, __ATOMIC_RELEASE);
	ret = 0;
out:
	if (ret < 0 && ret != -EBUSY) {
		for (size_t i = 0; i < s->nevs; i++)
			__atomic_store_n(&s->evs[i]->enabled, 0, __ATOMIC_RELAXED);
		s->nevs = 0;
		trawl_ctf_writer_free(s->w);
		s->w = NULL;
	}
	ust_lock_give();
	return ret;
}

/* Waits until no producer is inside an event of s (lock held). */
static void quiesce(struct trawl_ust_session *s)
{
	for (struct ust_buf *b = s->bufs; b; b = b->next)
		__atomic_store_n(&b->ring.shm->active, 0, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ust_gen, 1, __ATOMIC_SEQ_CST);
	if (!membarrier_ok ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
		/* no membarrier: a scheduling delay makes every running
		 * thread pass a barrier with overwhelming likelihood */
		struct timespec d = { 0, 20000000 };
		nanosleep(&d, NULL);
	}
	for (struct ust_buf *b = s->bufs; b; b = b->next) {
		struct ust_thread *t = b->thr;
		if (!t)
			continue;
		/* partner: commit's / reserve's release store of nest = 0 */
		for (int i = 0; __atomic_load_n(&t->nest, __ATOMIC_ACQUIRE) && i < 200000; i++)
			sched_yield();
		if (__atomic_load_n(&t->nest, __ATOMIC_ACQUIRE)) {
			b->stuck = true;	/* stopped thread? leave its open packet */
			continue;
		}
		UST_ADD(b->ring.shm->discarded, __atomic_exchange_n(&t->pending, 0, __ATOMIC_RELAXED));
		b->thr = NULL;
	}
}

static int snapshot_locked(struct trawl_ust_session *s, const char *dir);

/*
 * At stop, producers quiescent (lock held): moves the orphan count into the
 * discarded counter of one buffer of s that no producer will touch again
 * and that is still ours (remote: not handed to the agent yet), preferring
 * the newest; its last packet (an empty one if needed: final_flush, or the
 * agent's ust_cons_final) carries it. Without such a buffer the count only
 * reaches the session's stats.
 */
static void fold_orphans(struct trawl_ust_session *s)
{
	uint64_t n = __atomic_exchange_n(&ust_orphans, 0, __ATOMIC_RELAXED);
	if (!n)
		return;
	struct ust_buf *pick = NULL;
	for (struct ust_buf *b = s->bufs; b; b = b->next) {
		struct ust_shm *h = b->ring.shm;
		if (b->stuck || b->thr || !h)
			continue;
		if (s->remote && __atomic_load_n(&h->exited, __ATOMIC_RELAXED))
			continue;	/* the agent's already */
		pick = b;
	}
	if (!pick) {
		s->orphans += n;
		return;
	}
	UST_ADD(pick->ring.shm->discarded, n);
	if (!s->remote && pick->flushed) {
		/* one more (empty) packet carries the new count */
		pick->flushed = false;
		final_flush(s, pick);
	}
}

int trawl_ust_session_stop(struct trawl_ust_session *s)
{
	if (!s)
		return -EINVAL;
	ust_lock_take();
	if (s->state != S_ACTIVE) {
		int r = s->err;
		ust_lock_give();
		return r;
	}
	if (s->fork_pending || s->pid != getpid()) {
		/* a child that never traced: the parent's buffers are not ours */
		for (size_t i = 0; i < s->nevs; i++)
			__atomic_store_n(&s->evs[i]->enabled, 0, __ATOMIC_RELAXED);
		child_forget(s);
		s->state = S_STOPPED;
		if (cur_sess == s)
			cur_sess = NULL;
		ust_lock_give();
		return 0;
	}
	/* no new buffer from here (attach checks the state) */
	s->state = S_STOPPING;
	for (size_t i = 0; i < s->nevs; i++)
		__atomic_store_n(&s->evs[i]->enabled, 0, __ATOMIC_RELAXED);
	quiesce(s);
	if (s->remote) {
		fold_orphans(s);
		/* hand every buffer to the agent: it finalizes and drains the
		 * last packets (2: a producer stuck in an event, leave its
		 * open packet) */
		for (struct ust_buf *b = s->bufs; b; b = b->next)
			__atomic_store_n(&b->ring.shm->exited, b->stuck ? 2u : 1u,
					 __ATOMIC_RELEASE);
		s->state = S_STOPPED;
		if (cur_sess == s)
			cur_sess = NULL;
		ust_lock_give();
		return 0;
	}
	bool join = s->consumer_running;
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	ust_lock_give();
	if (join)
		pthread_join(s->consumer, NULL);
	ust_lock_take();
	s->consumer_running = false;
	for (struct ust_buf *b = s->bufs; b; b = b->next)
		final_flush(s, b);
	fold_orphans(s);
	if (s->w) {
		clock_fill(s, trawl_ctf_writer_trace(s->w));
		int r = trawl_ctf_writer_close(s->w);
		if (r < 0 && !s->err)
			s->err = r;
	} else if (s->outdir || (s->output && s->mode == TRAWL_UST_OVERWRITE)) {
		if (!s->outdir)
			s->outdir = strdup(s->output);
		int r = s->outdir ? snapshot_locked(s, s->outdir) : -ENOMEM;
		if (r < 0 && !s->err)
			s->err = r;
	}
	s->state = S_STOPPED;
	if (cur_sess == s)
		cur_sess = NULL;
	int r = s->err;
	ust_lock_give();
	return r;
}

/*
 * Copies the newest complete packets of each buffer into a new trace in
 * dir (lock held). Packets are checked with their generation before and
 * after the copy; a torn one ends the buffer's window.
 */
static int snapshot_locked(struct trawl_ust_session *s, const char *dir)
{
	struct trawl_ctf_writer *w;
	struct trawl_ctf_stream_class *sc;
	int ret = session_build_writer(s, dir, 0, &w, &sc);
	if (ret < 0)
		return ret;
	const uint8_t *uuid = trawl_ctf_writer_trace(w)->uuid;
	uint8_t *copy = malloc((size_t)s->S * s->N);
	uint64_t *seqs = malloc(s->N * sizeof(*seqs));
	if (!copy || !seqs) {
		ret = -ENOMEM;
		goto out;
	}
	s->st.snap_events = 0;
	s->st.snap_torn = 0;
	for (struct ust_buf *b = s->bufs; b && !ret; b = b->next) {
		struct ust_ring *r = &b->ring;
		struct ust_shm *h = r->shm;
		/* partner: ust_ring_finalize's release store of produced */
		uint64_t P = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
		uint64_t lo = P > r->N ? P - r->N : 0;
		size_t n = 0;
		uint64_t ev_before = 0, nev = 0;
		/* newest first, so that a torn packet ends the window */
		for (uint64_t k = P; k-- > lo;) {
			struct ust_sb *sb = &h->sb[k & (r->N - 1)];
			/* partner: the release store of gen in ust_ring_finalize */
			uint64_t g1 = __atomic_load_n(&sb->gen, __ATOMIC_ACQUIRE);
			if (s->mode == TRAWL_UST_OVERWRITE && g1 != 2 * k + 2)
				break;	/* already reused: the window starts after it */
			uint8_t *dst = copy + n * r->S;
			UST_RACY_READS_BEGIN();
			memcpy(dst, ust_ring_subbuf(r, k), r->S);
			uint64_t eb = sb->ev_before, ne = sb->nev;
			UST_RACY_READS_END();
			/* partner: the release fence after the odd gen in ust_ring_open */
			UST_FENCE(__ATOMIC_ACQUIRE);
			if (s->mode == TRAWL_UST_OVERWRITE &&
			    __atomic_load_n(&sb->gen, __ATOMIC_RELAXED) != g1) {
				s->st.snap_torn++;
				break;
			}
			seqs[n++] = k;
			ev_before = eb;
			nev += ne;
		}
		if (!n)
			continue;
		char name[64];
		snprintf(name, sizeof(name), "ust_%d", (int)b->pid);
		struct trawl_ctf_wstream *ws = trawl_ctf_writer_stream(w, sc, name, (uint32_t)b->tid);
		if (!ws) {
			ret = -errno;
			break;
		}
		uint64_t inst = trawl_ctf_wstream_instance_id(ws);
		for (size_t i = n; i-- > 0 && !ret;) {
			uint8_t *pk = copy + i * r->S;
			uint64_t d = pk_get64(pk + PK_DISCARDED) + ev_before;
			memcpy(pk + PK_UUID, uuid, 16);
			memcpy(pk + PK_INSTANCE_ID, &inst, 8);
			memcpy(pk + PK_DISCARDED, &d, 8);
			ret = trawl_ctf_wstream_packet(ws, pk, r->S);
		}
		s->st.snap_events += nev;
	}
out:
	free(copy);
	free(seqs);
	if (!ret)
		clock_fill(s, trawl_ctf_writer_trace(w));
	int r = trawl_ctf_writer_close(w);
	if (!ret)
		ret = r;
	trawl_ctf_writer_free(w);
	return ret;
}

int trawl_ust_session_snapshot(struct trawl_ust_session *s, const char *dir)
{
	if (!s || !dir || !*dir)
		return -EINVAL;
	ust_lock_take();
	int ret = -EINVAL;
	if (s->mode == TRAWL_UST_OVERWRITE && s->state != S_NEW && s->pid == getpid() &&
	    !s->fork_pending)
		ret = snapshot_locked(s, dir);
	ust_lock_give();
	return ret;
}

void trawl_ust_session_stats(struct trawl_ust_session *s, struct trawl_ust_stats *st)
{
	if (!s || !st)
		return;
	ust_lock_take();
	memset(st, 0, sizeof(*st));
	st->buffers = s->st.buffers;
	st->snap_events = s->st.snap_events;
	st->snap_torn = s->st.snap_torn;
	st->packets = __atomic_load_n(&s->st.packets, __ATOMIC_RELAXED);
	st->recorded = st->overwritten = 0;
	st->discarded = s->orphans;
	if (s == cur_sess && s->state == S_ACTIVE)	/* not folded yet */
		st->discarded += __atomic_load_n(&ust_orphans, __ATOMIC_RELAXED);
	for (struct ust_buf *b = s->bufs; b; b = b->next) {
		struct ust_shm *h = b->ring.shm;
		st->recorded += __atomic_load_n(&h->recorded, __ATOMIC_RELAXED);
		st->discarded += __atomic_load_n(&h->discarded, __ATOMIC_RELAXED);
		st->overwritten += __atomic_load_n(&h->overwritten, __ATOMIC_RELAXED);
		if (b->thr)
			st->discarded += __atomic_load_n(&b->thr->pending, __ATOMIC_RELAXED);
	}
	ust_lock_give();
}

void trawl_ust_session_free(struct trawl_ust_session *s)
{
	if (!s)
		return;
	trawl_ust_session_stop(s);
	ust_lock_take();
	if (cur_sess == s)
		cur_sess = NULL;
	ust_lock_give();
	free_bufs(s);
	trawl_ctf_writer_free(s->w);
	for (size_t i = 0; i < s->nglobs; i++)
		free(s->globs[i]);
	free(s->globs);
	free(s->glob_ll);
	free(s->evs);
	free(s->output);
	free(s->outdir);
	free(s->hostname);
	free(s);
}

/* ------------------------------------------------------------ agent sessions */

/* Every agent session of the process: stopped ones are kept (see
 * ust_remote_stop), reachable from here. */
static struct trawl_ust_session *remote_all;

int ust_remote_start(uint64_t key, const struct trawl_ust_session_opts *o,
		     const int *glob_ll, const uint8_t uuid[16])
{
	char err[128];
	struct trawl_ust_session *s = session_new(o, true, err, sizeof(err));
	if (!s)
		return -errno;
	s->key = key;
	memcpy(s->uuid, uuid, 16);
	if (s->nglobs && glob_ll) {
		s->glob_ll = malloc(s->nglobs * sizeof(*s->glob_ll));
		if (!s->glob_ll) {
			trawl_ust_session_free(s);
			return -ENOMEM;
		}
		memcpy(s->glob_ll, glob_ll, s->nglobs * sizeof(*s->glob_ll));
	}
	int r = trawl_ust_session_start(s);
	if (r < 0) {
		trawl_ust_session_free(s);
		return r;
	}
	ust_lock_take();
	s->remote_next = remote_all;
	remote_all = s;
	ust_lock_give();
	return 0;
}

void ust_live_tick(uint64_t key)
{
	ust_lock_take();
	struct trawl_ust_session *s = cur_sess;
	if (!s || !s->remote || s->key != key || s->state != S_ACTIVE || !s->bufs) {
		ust_lock_give();
		return;
	}
	uint64_t now = ust_clock_now();
	if (!membarrier_ok ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
		/* without the barrier nothing can be promised */
		ust_lock_give();
		return;
	}
	for (struct ust_buf *b = s->bufs; b; b = b->next) {
		struct ust_thread *t = b->thr;
		/* partner: commit's / reserve's release store of nest = 0 */
		if (t && __atomic_load_n(&t->nest, __ATOMIC_ACQUIRE) == 0)
			/* partner: ust_cons_live's acquire load */
			__atomic_store_n(&b->ring.shm->quiet_ts, now, __ATOMIC_RELEASE);
	}
	ust_lock_give();
}

int ust_remote_stop(uint64_t key)
{
	ust_lock_take();
	struct trawl_ust_session *s = cur_sess;
	bool mine = s && s->remote && (!key || s->key == key);
	ust_lock_give();
	if (!mine)
		return -ENOENT;
	int r = trawl_ust_session_stop(s);
	/* the agent has its own mappings; ours go. The session itself stays
	 * allocated (a few hundred bytes per agent session): the exit
	 * handler may still be looking at it */
	ust_lock_take();
	if (s->state == S_STOPPED)
		free_bufs(s);
	ust_lock_give();
	return r;
}
