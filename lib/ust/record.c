/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/record.c - the recording path: trawl_ust_reserve() (the common
 * case: a thread with a buffer, not nested, room in its open packet) and
 * trawl_ust_commit(); their noinline slow paths (reserve_enter: a thread's
 * first event or a nested one; reserve_attach: a new session; and
 * reserve_from_ts: a new packet, an extended header, time going back);
 * the per-thread state they use (static TLS), attaching a thread to the
 * current session (its buffer), and the thread's exit.
 *
 * The recording path never takes tr_ust_lock; attach() and thr_exit() do.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ust-private.h"

static __thread struct ust_thread *tls_thr __attribute__((tls_model("initial-exec")));
static __thread struct ust_thread tls_thr_mem __attribute__((tls_model("initial-exec")));
static __thread int tls_dead __attribute__((tls_model("initial-exec")));

static pthread_key_t thr_key;

/*
 * Events no buffer can take: emitted by a thread whose TLS destructors
 * already ran (a signal handler, or a later destructor, in an exiting
 * thread), or whose buffer could not be created. Counted process-wide
 * with one atomic add (async-signal-safe); stop folds the count into the
 * discarded counter of a quiescent buffer of the session (fold_orphans),
 * whose last packet then carries it.
 */
uint64_t tr_ust_orphans;

static void count_orphan(void)
{
	__atomic_fetch_add(&tr_ust_orphans, 1, __ATOMIC_RELAXED);
}

static void thr_exit(void *arg)
{
	struct ust_thread *t = arg;
	bool wake = false;
	tls_dead = 1;
	tls_thr = NULL;
	tr_ust_lock_take();
	if (t->buf && t->gen == __atomic_load_n(&tr_ust_gen, __ATOMIC_RELAXED) &&
	    t->buf->thr == t) {
		struct ust_shm *h = t->h;
		UST_ADD(h->discarded, __atomic_exchange_n(&t->pending, 0, __ATOMIC_RELAXED));
		t->buf->thr = NULL;
		/* partner: the consumer's acquire load of exited; it owns the
		 * buffer from then on and flushes the last packet */
		__atomic_store_n(&h->exited, 1, __ATOMIC_RELEASE);
		/* a sleeping agent flushes the last packet now, not at its
		 * timer (the flag taken here, under the lock that keeps the
		 * session's buffers mapped) */
		wake = __atomic_exchange_n(&h->wake, 0, __ATOMIC_RELAXED);
	}
	tr_ust_lock_give();
	if (wake)
		tr_ust_app_wake_msg();
	memset(t, 0, sizeof(*t));
}

void tr_ust_thread_init(void)
{
	pthread_key_create(&thr_key, thr_exit);
}

void tr_ust_thread_forked(void)
{
	if (tls_thr) {
		/* its buffer is the parent's: the next event attaches anew */
		tls_thr->buf = NULL;
		tls_thr->pending = 0;
		tls_thr->tid = (pid_t)syscall(SYS_gettid);
	}
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
	if (tr_ust_lock_mine())
		return -EAGAIN;
	tr_ust_lock_take();
	struct trawl_ust_session *s = tr_ust_cur_sess;
	if (!s || s->state != S_ACTIVE)
		goto out;
	if (s->fork_pending) {
		ret = tr_ust_session_forked(s);
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
	ret = tr_ust_ring_create(&b->cons.ring, &ro);
	if (ret < 0) {
		munmap(b, sizeof(*b));
		goto out;
	}
	b->cons.ring.shm->active = 1;
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
		tr_ust_app_send_buf(s->key, b->tid, b->cons.ring.fd);
	t->buf = b;
	t->h = b->cons.ring.shm;
	t->ring = &b->cons.ring;
	t->S = s->S;
	t->large = s->header == TRAWL_UST_HEADER_LARGE;
	t->cur = NULL;
	tr_ust_ctx_fill(s, t);
	t->gen = __atomic_load_n(&tr_ust_gen, __ATOMIC_RELAXED);
	ret = 0;
out:
	tr_ust_lock_give();
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
 * After the event header at p: the context, the stream's last time, the
 * reservation's end; returns where the payload goes. Inlined into both
 * the common case and the slow path.
 */
static inline __attribute__((always_inline)) uint8_t *
header_done(struct ust_thread *t, uint8_t *p, uint64_t ts, uint64_t end, struct trawl_ust_ctx *ctx)
{
	if (t->ctxlen) {
		memcpy(p, t->ctx, t->ctxlen);
		p += t->ctxlen;
	}
	/* before the payload, so before pos: partner: tr_ust_cons_live */
	__atomic_store_n(&t->h->last_ts, ts, __ATOMIC_RELEASE);
	ctx->buf = t;
	ctx->end = (uint32_t)end;
	return p;
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
			tr_ust_ring_finalize(t->ring, ts);
		if (!tr_ust_ring_open(t->ring, ts)) {
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
	return header_done(t, p + hl, ts, pos + need, ctx);
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
	if (r < 0 || t->gen != __atomic_load_n(&tr_ust_gen, __ATOMIC_RELAXED) ||
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
	if (t->gen != __atomic_load_n(&tr_ust_gen, __ATOMIC_RELAXED))
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
	if (unlikely(t->gen != __atomic_load_n(&tr_ust_gen, __ATOMIC_RELAXED)))
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
	return header_done(t, p + hl, ts, pos + need, ctx);
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
	/* the agent sleeps past its next turn: the first commit wakes it */
	if (unlikely(__atomic_load_n(&h->wake, __ATOMIC_RELAXED)))
		tr_ust_app_wake(h);
}
