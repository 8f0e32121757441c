/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/output.c - how an in-process session's packets leave its
 * buffers: the consumer thread (discard mode: drains every buffer's
 * finalized packets into the session's writer), the final flush of a
 * buffer whose thread is quiescent or gone, and snapshots (overwrite mode:
 * the newest complete packets of every buffer, copied into a new trace).
 * (An agent session's buffers are the agent's: lib/ring/consumer.c.)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ust-private.h"

/* Held by the consumer thread during a pass, and by fork() (atfork), so
 * that a child never inherits a half-done write. */
pthread_mutex_t tr_ust_cons_lock = PTHREAD_MUTEX_INITIALIZER;

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
	uint64_t now = b->consumed < P ? tr_mono_ns() : 0;
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
void tr_ust_final_flush(struct trawl_ust_session *s, struct ust_buf *b)
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
		pthread_mutex_lock(&tr_ust_cons_lock);
		/* partner of attach's release stores of the list links */
		for (struct ust_buf *b = __atomic_load_n(&s->bufs, __ATOMIC_ACQUIRE); b;
		     b = __atomic_load_n(&b->next, __ATOMIC_ACQUIRE)) {
			if (b->flushed)
				continue;
			drain(s, b);
			/* partner: thr_exit's release store of exited */
			if (__atomic_load_n(&b->ring.shm->exited, __ATOMIC_ACQUIRE))
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

/*
 * Copies the newest complete packets of each buffer into a new trace in
 * dir (lock held). Packets are checked with their generation before and
 * after the copy; a torn one ends the buffer's window.
 */
int tr_ust_snapshot_locked(struct trawl_ust_session *s, const char *dir)
{
	struct trawl_ctf_writer *w;
	struct trawl_ctf_stream_class *sc;
	int ret = tr_ust_session_writer(s, dir, 0, &w, &sc);
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
		tr_clock_fill(s->tsc, &s->clk0, NULL, &trawl_ctf_writer_trace(w)->clocks[0]);
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
		ret = tr_ust_snapshot_locked(s, dir);
	ust_lock_give();
	return ret;
}
