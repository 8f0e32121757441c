/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/output.c - how an in-process session's packets leave its
 * buffers: the consumer thread (discard mode: drains every buffer's
 * finalized packets into the session's writer), the final flush of a
 * buffer whose thread is quiescent or gone, and snapshots (overwrite mode:
 * the newest packets of every buffer, the open one's committed events
 * included, copied into a new trace).
 * The packets go out through lib/ring's consumer (consumer.c), as the
 * agent's do.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "ust-private.h"

/* Held by the consumer thread during a pass, and by fork() (atfork), so
 * that a child never inherits a half-done write. */
pthread_mutex_t tr_ust_cons_lock = PTHREAD_MUTEX_INITIALIZER;

/* The stream of b's packets in writer w: "ust_PID", id the thread's. */
static struct trawl_ctf_wstream *buf_stream(struct trawl_ctf_writer *w,
					    struct trawl_ctf_stream_class *sc,
					    const struct ust_buf *b)
{
	char name[32] = "ust_", num[16];
	size_t len = 4, nl = 0;
	for (unsigned v = (unsigned)b->pid; v || !nl; v /= 10)
		num[nl++] = (char)('0' + v % 10);
	while (nl)
		name[len++] = num[--nl];
	name[len] = 0;
	return trawl_ctf_writer_stream(w, sc, name, (uint32_t)b->tid);
}

/*
 * Writes out b's finalized packets (discard mode; overwrite mode keeps
 * them for a snapshot) and, when final (the producer gone or quiescent),
 * closes its last one first: lib/ring's consumer, the agent's too. The
 * packets carry the session's uuid and stream class (attach). Called by
 * the consumer thread only, or by stop() once it has joined it: the
 * writer has one user.
 */
static void drain(struct trawl_ust_session *s, struct ust_buf *b, bool final)
{
	struct ust_cons *c = &b->cons;
	if (!c->ws && s->w && !b->ws_failed) {
		c->ws = buf_stream(s->w, s->sc, b);
		if (!c->ws) {
			b->ws_failed = true;
			if (!s->err)
				s->err = -errno;
		}
	}
	uint32_t sid = s->sc ? (uint32_t)s->sc->id : 0;
	uint64_t before = c->packets;
	int r = final ? tr_ust_cons_final(c, s->uuid, sid, b->stuck) : tr_ust_cons_drain(c, s->uuid, sid);
	if (r < 0 && !s->err)
		s->err = r;
	UST_ADD(s->st.packets, c->packets - before);
}

/* The producer is quiescent or gone: finalize its last packet, and write
 * one more (empty) if discards happened after the last one (lock held). */
void tr_ust_final_flush(struct trawl_ust_session *s, struct ust_buf *b)
{
	if (!b->cons.flushed)
		drain(s, b, true);
}

static void *consumer_main(void *arg)
{
	struct trawl_ust_session *s = arg;
	struct timespec ts = { 0, (long)s->flush_ms * 1000000L };
	for (;;) {
		bool stop = __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE);
		pthread_mutex_lock(&tr_ust_cons_lock);
		/* partner of attach's release stores of the list links */
		for (struct ust_buf *b = __atomic_load_n(&s->bufs, __ATOMIC_ACQUIRE); b;
		     b = __atomic_load_n(&b->next, __ATOMIC_ACQUIRE)) {
			if (b->cons.flushed)
				continue;
			drain(s, b, false);
			/* partner: thr_exit's release store of exited */
			if (__atomic_load_n(&b->cons.ring.shm->exited, __ATOMIC_ACQUIRE))
				tr_ust_final_flush(s, b);
		}
		pthread_mutex_unlock(&tr_ust_cons_lock);
		if (stop)
			break;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* The consumer thread blocks every signal: the application's handlers
 * (which may trace) run in the application's threads. */
int tr_ust_consumer_start(struct trawl_ust_session *s)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&s->consumer, NULL, consumer_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* The stream of the buffer being copied (tr_ust_cons_snapshot's mkws). */
struct snap {
	struct trawl_ctf_writer *w;
	struct trawl_ctf_stream_class *sc;
	const struct ust_buf *b;
};

static struct trawl_ctf_wstream *snap_stream(void *arg)
{
	struct snap *sn = arg;
	return buf_stream(sn->w, sn->sc, sn->b);
}

/*
 * Copies the newest packets of each buffer into a new trace in dir (lock
 * held): the open packet's committed events, then the finished packets
 * before it. Packets are checked with their generation before and after
 * the copy; a torn one ends the buffer's window.
 */
int tr_ust_snapshot_locked(struct trawl_ust_session *s, const char *dir)
{
	struct snap sn;
	int ret = tr_ust_session_writer(s, dir, 0, &sn.w, &sn.sc);
	if (ret < 0)
		return ret;
	const uint8_t *uuid = trawl_ctf_writer_trace(sn.w)->uuid;
	uint8_t *copy = malloc((size_t)s->S * s->N);
	if (!copy) {
		ret = -ENOMEM;
		goto out;
	}
	s->st.snap_events = 0;
	s->st.snap_torn = 0;
	const struct ust_evtab et = { s->evs, s->nevs, s->header, tr_ust_ctx_len(s->contexts) };
	for (struct ust_buf *b = s->bufs; b && !ret; b = b->next) {
		sn.b = b;
		ret = tr_ust_cons_snapshot(&b->cons, copy, snap_stream, &sn, uuid, (uint32_t)sn.sc->id,
					&et, &s->st.snap_events, &s->st.snap_torn);
	}
out:
	free(copy);
	if (!ret)
		tr_clock_fill(s->tsc, &s->clk0, NULL, &trawl_ctf_writer_trace(sn.w)->clocks[0]);
	int r = trawl_ctf_writer_close(sn.w);
	if (!ret)
		ret = r;
	trawl_ctf_writer_free(sn.w);
	return ret;
}

int trawl_ust_session_snapshot(struct trawl_ust_session *s, const char *dir)
{
	if (!s || !dir || !*dir)
		return -EINVAL;
	tr_ust_lock_take();
	int ret = -EINVAL;
	if (s->mode == TRAWL_UST_OVERWRITE && s->state != S_NEW && s->pid == getpid() &&
	    !s->fork_pending)
		ret = tr_ust_snapshot_locked(s, dir);
	tr_ust_lock_give();
	return ret;
}
