/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/session.c - the in-process session: its options, start (the
 * clock sample, the writer, enabling the selected events), stop (quiesce
 * the producers, flush, write or snapshot the trace), stats and free; the
 * lock that guards the registry and the sessions (tr_ust_lock), and the
 * process's fork and exit handlers (a forked child records into a trace
 * of its own; exit stops the session).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>

#include "trawl/ctf.h"
#include "ust-private.h"

pthread_mutex_t tr_ust_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set from just before this thread takes tr_ust_lock until just after it gave
 * it back, so that an event of a signal handler can tell whether waiting
 * for the lock would wait for the very code it interrupted. */
static __thread int tls_lock_held __attribute__((tls_model("initial-exec")));

void tr_ust_lock_take(void)
{
	tls_lock_held = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* before the lock, for a handler */
	pthread_mutex_lock(&tr_ust_lock);
}

void tr_ust_lock_give(void)
{
	pthread_mutex_unlock(&tr_ust_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* after the unlock, for a handler */
	tls_lock_held = 0;
}

bool tr_ust_lock_mine(void)
{
	return tls_lock_held;
}

struct trawl_ust_session *tr_ust_cur_sess;
int tr_ust_use_tsc;
uint64_t tr_ust_gen = 1;		/* atomic: bumped at start and stop */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init_once(void);
static bool membarrier_ok;
/* Writers inherited from the parent by a forked child: never closed there
 * (their files belong to the parent), kept reachable. */
static struct trawl_ctf_writer *abandoned[8];
static size_t nabandoned;

/* The consumer writes through a queue of this size with a thread of its
 * own (as the agent does, docs/agent.md "Draining"): a write(2) that stalls
 * for milliseconds (writeback) then does not hold up the draining. */
#define SESSION_IO_QUEUE (16u << 20)

void tr_ust_free_bufs(struct trawl_ust_session *s)
{
	for (struct ust_buf *b = s->bufs, *n; b; b = n) {
		n = b->next;
		tr_ust_ring_destroy(&b->cons.ring);
		munmap(b, sizeof(*b));
	}
	s->bufs = s->tail = NULL;
}

/* In a forked child: forget the parent's buffers and writer (lock held). */
static void child_forget(struct trawl_ust_session *s)
{
	tr_ust_free_bufs(s);
	if (s->w && nabandoned < ARRAY_SIZE(abandoned))
		abandoned[nabandoned++] = s->w;
	s->w = NULL;
	s->sc = NULL;
	s->consumer_running = false;
	s->fork_pending = false;
	s->pid = getpid();
}

int tr_ust_session_forked(struct trawl_ust_session *s)
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
	tr_uuid_random(s->uuid);
	if (s->mode == TRAWL_UST_DISCARD && s->outdir) {
		int r = tr_ust_session_writer(s, s->outdir, SESSION_IO_QUEUE, &s->w, &s->sc);
		if (r < 0)
			return r;
		memcpy(s->uuid, trawl_ctf_writer_trace(s->w)->uuid, 16);
		if (!s->tsc)	/* declared from the start, as the parent's */
			tr_clock_fill(false, &s->clk0, NULL, &trawl_ctf_writer_trace(s->w)->clocks[0]);
		__atomic_store_n(&s->stopping, 0, __ATOMIC_RELAXED);
		if (tr_ust_consumer_start(s) != 0)
			return -EAGAIN;
		s->consumer_running = true;
	}
	return 0;
}

bool tr_ust_membarrier(void)
{
	return membarrier_ok &&
	       syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static void on_prepare(void)
{
	pthread_mutex_lock(&tr_ust_cons_lock);
	tr_ust_lock_take();
}

static void on_parent(void)
{
	tr_ust_lock_give();
	pthread_mutex_unlock(&tr_ust_cons_lock);
}

static void on_child(void)
{
	pthread_mutex_init(&tr_ust_lock, NULL);
	tls_lock_held = 0;	/* taken by on_prepare, in the parent's copy */
	pthread_mutex_init(&tr_ust_cons_lock, NULL);
	/* the parent's: its session counts them */
	__atomic_store_n(&tr_ust_orphans, 0, __ATOMIC_RELAXED);
	tr_ust_thread_forked();
	struct trawl_ust_session *s = tr_ust_cur_sess;
	if (s && s->state == S_ACTIVE) {
		s->fork_pending = true;
		__atomic_fetch_add(&tr_ust_gen, 1, __ATOMIC_RELAXED);
	}
	/* a child of a registered application registers itself (the parent's
	 * connection is closed here); if it records into an agent session,
	 * the agent learns the events it inherited enabled */
	struct trawl_ust_session *rs = s && s->state == S_ACTIVE && s->remote ? s : NULL;
	if (tr_ust_app_child(rs ? rs->key : 0)) {
		tr_ust_lock_take();
		tr_ust_registry_announce();
		for (size_t i = 0; rs && i < rs->nevs; i++)
			tr_ust_app_send_evdesc(rs->key, rs->evs[i]);
		tr_ust_lock_give();
	}
}

static void on_exit_stop(void)
{
	tr_ust_lock_take();
	struct trawl_ust_session *s = tr_ust_cur_sess;
	bool mine = s && s->state == S_ACTIVE && (s->pid == getpid() || s->fork_pending);
	tr_ust_lock_give();
	if (mine)
		trawl_ust_session_stop(s);
}

void tr_ust_init_once(void)
{
	pthread_once(&once, init_once);
}

static void init_once(void)
{
	tr_ust_thread_init();
	pthread_atfork(on_prepare, on_parent, on_child);
	atexit(on_exit_stop);
	membarrier_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static bool is_pow2(size_t v)
{
	return v && !(v & (v - 1));
}

struct trawl_ust_session *trawl_ust_session_new(const struct trawl_ust_session_opts *o,
						char *err, size_t errlen)
{
	return tr_ust_session_new(o, false, err, errlen);
}

struct trawl_ust_session *tr_ust_session_new(const struct trawl_ust_session_opts *o,
					      bool remote, char *err, size_t errlen)
{
	if (!o || o->sz < sizeof(*o)) {
		tr_seterr(err, errlen, EINVAL, "session options: bad size");
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
		tr_seterr(err, errlen, EINVAL, "session options: %s", why);
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
	tr_seterr(err, errlen, ENOMEM, "out of memory");
	errno = ENOMEM;
	return NULL;
}

int trawl_ust_session_start(struct trawl_ust_session *s)
{
	if (!s)
		return -EINVAL;
	pthread_once(&once, init_once);
	tr_ust_lock_take();
	int ret = -EBUSY;
	if (tr_ust_cur_sess || s->state != S_NEW)
		goto out;
	s->pid = getpid();
	s->tsc = s->clock_opt == TRAWL_UST_CLOCK_TSC ||
		 (s->clock_opt == TRAWL_UST_CLOCK_AUTO && HAVE_TSC && tr_clocksource_is_tsc());
	__atomic_store_n(&tr_ust_use_tsc, s->tsc, __ATOMIC_RELAXED);
	tr_clock_sample(s->tsc, &s->clk0);
	if (s->remote) {
		/* the agent consumes: no writer, no thread; uuid set by it */
	} else if (s->output && s->mode == TRAWL_UST_DISCARD) {
		s->outdir = strdup(s->output);
		ret = s->outdir ? tr_ust_session_writer(s, s->outdir, SESSION_IO_QUEUE, &s->w, &s->sc)
				: -ENOMEM;
		if (ret < 0)
			goto out;
		memcpy(s->uuid, trawl_ctf_writer_trace(s->w)->uuid, 16);
		/* the monotonic clock is final from the start sample: the
		 * metadata written while recording declares it (the TSC's
		 * frequency is measured over the session, known at stop) */
		if (!s->tsc)
			tr_clock_fill(false, &s->clk0, NULL, &trawl_ctf_writer_trace(s->w)->clocks[0]);
	} else {
		tr_uuid_random(s->uuid);
	}
	/* counted while no session recorded: not this one's events */
	__atomic_store_n(&tr_ust_orphans, 0, __ATOMIC_RELAXED);
	if ((ret = tr_ust_registry_enable(s)) < 0)
		goto out;
	if (s->w) {
		if (tr_ust_consumer_start(s) != 0) {
			ret = -EAGAIN;
			goto out;
		}
		s->consumer_running = true;
	}
	s->state = S_ACTIVE;
	tr_ust_cur_sess = s;
	__atomic_fetch_add(&tr_ust_gen, 1, __ATOMIC_RELEASE);
	ret = 0;
out:
	if (ret < 0 && ret != -EBUSY) {
		for (size_t i = 0; i < s->nevs; i++)
			__atomic_store_n(&s->evs[i]->enabled, 0, __ATOMIC_RELAXED);
		s->nevs = 0;
		trawl_ctf_writer_free(s->w);
		s->w = NULL;
	}
	tr_ust_lock_give();
	return ret;
}

/* Waits until no producer is inside an event of s (lock held). */
static void quiesce(struct trawl_ust_session *s)
{
	for (struct ust_buf *b = s->bufs; b; b = b->next)
		__atomic_store_n(&b->cons.ring.shm->active, 0, __ATOMIC_RELAXED);
	__atomic_fetch_add(&tr_ust_gen, 1, __ATOMIC_SEQ_CST);
	if (!tr_ust_membarrier()) {
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
		UST_ADD(b->cons.ring.shm->discarded,
			__atomic_exchange_n(&t->pending, 0, __ATOMIC_RELAXED));
		b->thr = NULL;
	}
}

/*
 * At stop, producers quiescent (lock held): moves the orphan count into the
 * discarded counter of one buffer of s that no producer will touch again
 * and that is still ours (remote: not handed to the agent yet), preferring
 * the newest; its last packet (an empty one if needed: final_flush, or the
 * agent's tr_ust_cons_final) carries it. Without such a buffer the count only
 * reaches the session's stats.
 */
static void fold_orphans(struct trawl_ust_session *s)
{
	uint64_t n = __atomic_exchange_n(&tr_ust_orphans, 0, __ATOMIC_RELAXED);
	if (!n)
		return;
	struct ust_buf *pick = NULL;
	for (struct ust_buf *b = s->bufs; b; b = b->next) {
		struct ust_shm *h = b->cons.ring.shm;
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
	UST_ADD(pick->cons.ring.shm->discarded, n);
	if (!s->remote && pick->cons.flushed) {
		/* one more (empty) packet carries the new count */
		pick->cons.flushed = false;
		tr_ust_final_flush(s, pick);
	}
}

int trawl_ust_session_stop(struct trawl_ust_session *s)
{
	if (!s)
		return -EINVAL;
	tr_ust_lock_take();
	if (s->state != S_ACTIVE) {
		int r = s->err;
		tr_ust_lock_give();
		return r;
	}
	if (s->fork_pending || s->pid != getpid()) {
		/* a child that never traced: the parent's buffers are not ours */
		for (size_t i = 0; i < s->nevs; i++)
			__atomic_store_n(&s->evs[i]->enabled, 0, __ATOMIC_RELAXED);
		child_forget(s);
		s->state = S_STOPPED;
		if (tr_ust_cur_sess == s)
			tr_ust_cur_sess = NULL;
		tr_ust_lock_give();
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
			__atomic_store_n(&b->cons.ring.shm->exited, b->stuck ? 2u : 1u,
					 __ATOMIC_RELEASE);
		s->state = S_STOPPED;
		if (tr_ust_cur_sess == s)
			tr_ust_cur_sess = NULL;
		tr_ust_lock_give();
		return 0;
	}
	bool join = s->consumer_running;
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	tr_ust_lock_give();
	if (join)
		pthread_join(s->consumer, NULL);
	tr_ust_lock_take();
	s->consumer_running = false;
	for (struct ust_buf *b = s->bufs; b; b = b->next)
		tr_ust_final_flush(s, b);
	fold_orphans(s);
	if (s->w) {
		tr_clock_fill(s->tsc, &s->clk0, NULL, &trawl_ctf_writer_trace(s->w)->clocks[0]);
		int r = trawl_ctf_writer_close(s->w);
		if (r < 0 && !s->err)
			s->err = r;
	} else if (s->outdir || (s->output && s->mode == TRAWL_UST_OVERWRITE)) {
		if (!s->outdir)
			s->outdir = strdup(s->output);
		int r = s->outdir ? tr_ust_snapshot_locked(s, s->outdir) : -ENOMEM;
		if (r < 0 && !s->err)
			s->err = r;
	}
	s->state = S_STOPPED;
	if (tr_ust_cur_sess == s)
		tr_ust_cur_sess = NULL;
	int r = s->err;
	tr_ust_lock_give();
	return r;
}

void trawl_ust_session_stats(struct trawl_ust_session *s, struct trawl_ust_stats *st)
{
	if (!s || !st)
		return;
	tr_ust_lock_take();
	memset(st, 0, sizeof(*st));
	st->buffers = s->st.buffers;
	st->snap_events = s->st.snap_events;
	st->snap_torn = s->st.snap_torn;
	st->packets = __atomic_load_n(&s->st.packets, __ATOMIC_RELAXED);
	st->recorded = st->overwritten = 0;
	st->discarded = s->orphans;
	if (s == tr_ust_cur_sess && s->state == S_ACTIVE)	/* not folded yet */
		st->discarded += __atomic_load_n(&tr_ust_orphans, __ATOMIC_RELAXED);
	for (struct ust_buf *b = s->bufs; b; b = b->next) {
		struct ust_shm *h = b->cons.ring.shm;
		st->recorded += __atomic_load_n(&h->recorded, __ATOMIC_RELAXED);
		st->discarded += __atomic_load_n(&h->discarded, __ATOMIC_RELAXED);
		st->overwritten += __atomic_load_n(&h->overwritten, __ATOMIC_RELAXED);
		if (b->thr)
			st->discarded += __atomic_load_n(&b->thr->pending, __ATOMIC_RELAXED);
	}
	tr_ust_lock_give();
}

void trawl_ust_session_free(struct trawl_ust_session *s)
{
	if (!s)
		return;
	trawl_ust_session_stop(s);
	tr_ust_lock_take();
	if (tr_ust_cur_sess == s)
		tr_ust_cur_sess = NULL;
	tr_ust_lock_give();
	tr_ust_free_bufs(s);
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
