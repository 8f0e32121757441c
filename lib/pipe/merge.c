/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/merge.c - the merge: every stream of every trace of a reader, in
 * timestamp order (ties: the stream's order).
 *
 * Event by event (small traces), a binary heap keyed on (ts, stream order):
 * trawl_reader_next() advances the stream whose event it returned last
 * time, then returns the heap's top; the event and its tape stay valid
 * until the next call.
 *
 * In batches, each stream is decoded a batch at a time (tr_ctf_stream_fill())
 * and a loser tree over the batches' heads merges them; with a worker
 * thread, the batches are decoded ahead. See "decode-ahead" below.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipe/pipe-internal.h"
#include "util/clock.h"

#define BATCH_BUDGET (6u << 20)	/* bytes of batches, all streams together */
#define BATCH_MAX_EVENTS 4096u
#define BATCH_MIN_EVENTS 64u
#define AUTO_MIN_BYTES (2u << 20)	/* threads = 0: a worker from this much data */

/* --------------------------------------------------------------- merge */

static inline bool before(const struct hent *a, const struct hent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->order < b->order);
}

static __attribute__((noinline)) void sift_down(struct trawl_reader *r, size_t i)
{
	struct hent *h = r->heap, x = h[i];
	size_t n = r->nheap;
	for (;;) {
		size_t l = 2 * i + 1;
		if (l >= n)
			break;
		size_t m = l + 1 < n && before(&h[l + 1], &h[l]) ? l + 1 : l;
		if (!before(&h[m], &x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

static int report(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	r->nerrors++;
	r->lasterr = s->cs.err;
	return -(s->cs.errcode ? s->cs.errcode : EBADMSG);
}

static void prime(struct trawl_reader *r)
{
	r->primed = true;
	for (size_t i = 0; i < r->ntraces; i++) {
		struct trawl_reader_trace *t = r->traces[i];
		for (size_t j = 0; j < t->nstreams; j++) {
			struct trawl_reader_stream *s = t->streams[j];
			int rc = tr_ctf_stream_next(&s->cs, &s->cs.ev);
			if (rc > 0)
				r->heap[r->nheap++] = (struct hent){ s->cs.ev.ts, s->order, s };
			else if (rc < 0)
				r->errq[r->nerrq++] = s;
		}
	}
	for (size_t i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
}

/* After the top stream got a new event: restores the heap order. */
static inline void top_changed(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	struct hent *h = r->heap;
	h[0].ts = s->cs.ev.ts;
	/* still the earliest: no heap work (one stream, or a burst in one) */
	if (r->nheap > 1) {
		size_t m = r->nheap > 2 && before(&h[2], &h[1]) ? 2 : 1;
		if (before(&h[m], &h[0]))
			sift_down(r, 0);
	}
}

/* trawl_reader_next() beyond the fast path; `advanced`: the pending stream
 * has already moved to its next event and the heap is in order. */
static __attribute__((noinline)) int next_slow(struct trawl_reader *r, const struct trawl_event **ev,
					       bool advanced)
{
	struct trawl_reader_stream *s = r->pending;

	r->pending = NULL;
	if (s && !advanced) {
		int rc = tr_ctf_stream_next(&s->cs, &s->cs.ev);
		if (likely(rc > 0)) {
			top_changed(r, s);
		} else {
			r->heap[0] = r->heap[--r->nheap];
			if (r->nheap)
				sift_down(r, 0);
			if (rc < 0)
				return report(r, s);
		}
	} else if (!s && !r->primed) {
		prime(r);
	}
	if (r->errq_head < r->nerrq)
		return report(r, r->errq[r->errq_head++]);
	if (!r->nheap)
		return 0;
	s = r->heap[0].s;
	r->pending = s;
	*ev = &s->cs.ev;
	return 1;
}

/* ---------------------------------------------------------- decode-ahead */

/*
 * With a worker (threads >= 2), the streams are decoded ahead into batches:
 * per stream a queue of NQ batches, each an array of events plus the values
 * of their tapes, decoded straight into the batch (the tape is lent to the
 * decode context). Whoever fills a batch (the worker, or the consumer when
 * it would otherwise wait) owns the stream's decode state while qbusy is
 * set. The consumer (the thread calling trawl_reader_next()) only merges:
 * it walks the current batch of each stream and keeps a loser tree over
 * the streams' next events. A batch goes back to the queue when the
 * consumer has moved past its last event, i.e. at the call after the one
 * that returned it. Errors and the end of a stream travel as the `term` of
 * its last batch, after the events decoded before them.
 *
 * Synchronization: one mutex (r->mu) at batch granularity. A filler writes
 * a batch without the lock, then publishes it with qhead++ under r->mu; the
 * consumer reads qhead under r->mu before reading the batch. The consumer
 * gives a batch back with qtail++ under r->mu, after which the filler may
 * write it again. The stream's decode state passes between fillers through
 * qbusy, set and cleared under r->mu.
 */

static uint32_t batch_events(const struct trawl_reader *r)
{
	if (r->batch_events)
		return r->batch_events;
	/* an event and its tape: 16 + 12 + 8 * 16 bytes */
	uint64_t n = BATCH_BUDGET / ((uint64_t)r->nstreams * NQ * 156);
	return n > BATCH_MAX_EVENTS ? BATCH_MAX_EVENTS : n < BATCH_MIN_EVENTS ? BATCH_MIN_EVENTS : (uint32_t)n;
}

static int alloc_queue(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	uint32_t nev = batch_events(r);
	size_t capv = (size_t)nev * 8, need = 2 * ((size_t)s->trace->dec.maxfix + 64);

	if (capv < need)
		capv = need;
	s->q = calloc(NQ, sizeof(*s->q));
	if (!s->q)
		return -ENOMEM;
	for (int i = 0; i < NQ; i++) {
		struct batch *b = &s->q[i];
		b->cap = nev;
		b->capv = capv;
		b->rec = malloc(nev * sizeof(*b->rec));
		b->cyc = malloc(nev * sizeof(*b->cyc));
		b->cpu = malloc(nev * sizeof(*b->cpu));
		b->vals = malloc(capv * sizeof(*b->vals));
		if (!b->rec || !b->cyc || !b->cpu || !b->vals)
			return -ENOMEM;
	}
	return 0;
}

static bool fillable(const struct trawl_reader_stream *s)
{
	return !s->qbusy && !s->qfin && s->qhead - s->qtail < NQ;
}

/* The fillable stream with the fewest batches ready (r->mu held), or NULL. */
static struct trawl_reader_stream *pick(struct trawl_reader *r)
{
	struct trawl_reader_stream *best = NULL;
	uint32_t n = r->nstreams, bready = NQ;

	for (uint32_t k = 0; k < n; k++) {
		struct trawl_reader_stream *s = r->all[(r->rr + k) % n];
		if (fillable(s) && s->qhead - s->qtail < bready) {
			best = s;
			bready = s->qhead - s->qtail;
			if (!bready)
				break;
		}
	}
	if (best)
		r->rr = (best->order + 1) % n;
	return best;
}

int tr_reader_want(struct trawl_reader *r, const struct trawl_sink *sinks, size_t nsinks)
{
	size_t off = offsetof(struct trawl_sink_ops, wants);

	if (r->live || r->primed || !r->nclasses || !nsinks)
		return 0;
	for (size_t i = 0; i < nsinks; i++)
		if (sinks[i].ops->sz <= off || !sinks[i].ops->wants)
			return 0;	/* a sink that wants everything */
	uint8_t *w = calloc(r->nclasses, 1);
	if (!w)
		return -ENOMEM;
	bool some = false;
	for (size_t t = 0; t < r->ntraces; t++) {
		const struct trawl_ctf_trace *m = r->traces[t]->dec.meta;
		bool any = false;	/* of this trace's classes */
		for (size_t j = 0; j < m->nstreams; j++)
			for (size_t e = 0; e < m->streams[j]->nevents; e++) {
				const struct trawl_ctf_event_class *c = m->streams[j]->events[e];
				if (c->index >= r->nclasses) {
					any = true;
					continue;
				}
				for (size_t i = 0; i < nsinks && !w[c->index]; i++)
					w[c->index] = sinks[i].ops->wants(sinks[i].self, c);
				some |= !w[c->index];
				any |= w[c->index];
			}
		/* none: its streams' packets between their first batch and
		 * their last packet are not even decoded (with a time range,
		 * the decoder looks for its ends instead) */
		for (size_t j = 0; j < r->traces[t]->nstreams; j++)
			r->traces[t]->streams[j]->cs.skip = !any && !r->rg.has_begin && !r->rg.has_end;
	}
	if (!some) {
		free(w);
		return 0;
	}
	free(r->want);
	r->want = w;
	/* the fillers leave them out as they decode (tr_ctf_stream_fill) */
	for (uint32_t i = 0; i < r->nstreams; i++) {
		r->all[i]->cs.want = w;
		r->all[i]->cs.nwant = (uint32_t)r->nclasses;
	}
	return 0;
}

/* Fills the next batch of s (fillable; r->mu held, released meanwhile). */
static void fill_locked(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	struct batch *b = &s->q[s->qhead % NQ];

	s->qbusy = true;
	pthread_mutex_unlock(&r->mu);
	tr_ctf_stream_fill(&s->cs, b);
	/* live clock: in the consumer (live readers have no worker) */
	if (unlikely(r->has_clock) && !r->failed) {
		int rc = tr_clock_batch(r, s, b, r->m ? r->m->cls : NULL);
		if (rc < 0) {
			r->failed = rc;
			r->lasterr = rc == -ENOMEM ? "out of memory" : "the live clock failed";
		}
	}
	pthread_mutex_lock(&r->mu);
	s->qbusy = false;
	s->qhead++;	/* publishes b: the consumer reads qhead under r->mu */
	if (b->term)
		s->qfin = true;
	if (r->mwait)
		pthread_cond_signal(&r->mcv);
}

static void *worker_main(void *arg)
{
	struct trawl_reader *r = arg;

	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		struct trawl_reader_stream *s = pick(r);
		if (!s) {
			r->widle = true;
			pthread_cond_wait(&r->wcv, &r->mu);
			r->widle = false;
			continue;
		}
		fill_locked(r, s);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/*
 * Moves the consumer of s to its next batch holding an event, giving the
 * current one back. Returns 1, 0 at the end of the stream, -errno (the
 * stream's error), or 2 when a live stream has nothing yet (an empty
 * batch; s->cs.hold_ns says until when). While the batch is not there, decodes some batch itself
 * (this stream's if nobody is on it, else the one most behind) or waits.
 */
static int take_next(struct trawl_reader *r, struct trawl_reader_stream *s, struct leaf *L)
{
	struct batch *b = s->cur;

	if (b && b->term)
		return b->term < 0 ? b->term : 0;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		if (b) {
			if (unlikely(r->has_clock) && b->n && b->rec[b->n - 1].ts > s->lgiven)
				s->lgiven = b->rec[b->n - 1].ts;
			s->qtail++;	/* gives b back: the filler reads qtail under r->mu */
			r->given++;
			s->cur = NULL;
			/*
			 * An idle worker is woken only once this stream is down to
			 * the batch it will merge next (or to none): it then refills
			 * every stream that has room, many batches a wake-up,
			 * rather than one batch each time one is given back (a
			 * futex wake and a sleeping vCPU's wake-up each, 5000 a
			 * second on the benchmark session).
			 */
			if (r->widle && s->qhead - s->qtail <= 1)
				pthread_cond_signal(&r->wcv);
			if (!r->worker_on && s->qhead == s->qtail) {
				/* no worker: the next fill goes into the batch just
				 * given back, still in the cache, rather than the
				 * next of the queue (a third of the memory touched) */
				struct batch *nb = &s->q[s->qhead % NQ], t;
				if (nb != b) {
					t = *nb;
					*nb = *b;
					*b = t;
				}
			}
			b = NULL;
		}
		if (s->qhead != s->qtail) {
			b = &s->q[s->qtail % NQ];
			s->cur = b;
			if (unlikely(r->has_clock))
				tr_clock_take(s, b);	/* its times corrected as of now */
			L->rec = b->rec;
			L->end = b->rec + b->n;
			L->ev.values = b->vals;
			L->b = b;
			L->ghz = b->ghz;
			L->onecpu = b->onecpu;
			L->cpu0 = b->cpu0;
			L->base = b->base;
			s->pub = b->st;
			s->pubdmg = b->dmg;
			s->puboff = b->off;
			if (b->n || b->term) {
				pthread_mutex_unlock(&r->mu);
				return b->n ? 1 : b->term < 0 ? b->term : 0;
			}
			if (b->hold) {
				/* a live stream with nothing yet: given back next time */
				pthread_mutex_unlock(&r->mu);
				return 2;
			}
			continue;	/* empty: next one */
		}
		struct trawl_reader_stream *h = fillable(s) ? s : pick(r);
		if (h) {
			fill_locked(r, h);
		} else {
			r->mwait = true;
			pthread_cond_wait(&r->mcv, &r->mu);
			r->mwait = false;
		}
	}
}

static inline mkey mkkey(int64_t ts, uint32_t order)
{
	return (mkey)((uint64_t)ts ^ (UINT64_C(1) << 63)) << 64 | order;
}

static mkey lt_build(struct merge *m, uint32_t p)
{
	if (p >= m->k)
		return m->key[p - m->k];
	mkey a = lt_build(m, 2 * p), b = lt_build(m, 2 * p + 1);
	if (b < a) {
		m->tree[p] = a;
		return b;
	}
	m->tree[p] = b;
	return a;
}

/* Leaf w's key changed to kw: plays its matches up to the root. */
static inline void lt_replay(struct merge *m, uint32_t w, mkey kw)
{
	mkey *tree = m->tree;

	for (uint32_t p = (w + m->k) >> 1; p; p >>= 1) {
		mkey kl = tree[p];
		bool sw = kl < kw;
		tree[p] = sw ? kw : kl;
		kw = sw ? kl : kw;
	}
	tree[0] = kw;
}

static uint64_t lt_build64(struct merge *m, uint32_t p)
{
	if (p >= m->k) {
		mkey x = m->key[p - m->k];
		return x == KEY_INF ? UINT64_MAX : ((uint64_t)(x >> 64) - m->base) << m->lb | (uint32_t)x;
	}
	uint64_t a = lt_build64(m, 2 * p), b = lt_build64(m, 2 * p + 1);
	if (b < a) {
		m->t64[p] = a;
		return b;
	}
	m->t64[p] = b;
	return a;
}

/* The same with 64-bit keys. */
static inline void lt_replay64(struct merge *m, uint32_t w, uint64_t kw)
{
	uint64_t *tree = m->t64;

	/* size_t p: one addressing mode for the load and the store */
	for (size_t p = ((size_t)w + m->k) >> 1; p; p >>= 1) {
		uint64_t kl = tree[p];
		bool sw = kl < kw;
		tree[p] = sw ? kw : kl;
		kw = sw ? kl : kw;
	}
	tree[0] = kw;
}

/* The 64-bit key of an event at ts of leaf w; UINT64_MAX out of range. */
static inline uint64_t key64(const struct merge *m, int64_t ts, uint32_t w)
{
	uint64_t d = ((uint64_t)ts ^ (UINT64_C(1) << 63)) - m->base;
	return d < m->range ? d << m->lb | w : UINT64_MAX;
}

/* Leaf w's nk, from its current head (see struct leaf). */
static inline uint64_t next_key(const struct merge *m, const struct leaf *L, uint32_t w)
{
	const struct brec *x = L->rec;

	if (m->wide || !L->onecpu || !x || x + 1 >= L->end)
		return UINT64_MAX;
	return key64(m, x[1].ts, w);
}

/*
 * Rebuilds the tree from the leaves' current events: 64-bit keys from the
 * earliest of them when they span less than half the range (room to go
 * on), else 128-bit keys from now on.
 */
static __attribute__((noinline)) void rekey(struct merge *m)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	bool holds = false;

	for (uint32_t i = 0; i < m->k; i++) {
		const struct leaf *L = &m->leaf[i];
		if (L->rec < L->end) {
			uint64_t u = (uint64_t)L->rec->ts ^ (UINT64_C(1) << 63);	/* ordered */
			m->key[i] = (mkey)u << 64 | i;
			lo = u < lo ? u : lo;
			hi = u > hi ? u : hi;
		} else {
			m->key[i] = KEY_INF;
			holds |= L->hold;
		}
	}
	/*
	 * A live stream waiting: its key is its hold time, or just below every
	 * event when that is earlier or unknown (it blocks them all the same),
	 * so that it does not stretch the keys' range.
	 */
	for (uint32_t i = 0; holds && i < m->k; i++) {
		const struct leaf *L = &m->leaf[i];
		if (L->rec < L->end || !L->hold)
			continue;
		uint64_t u = (uint64_t)L->hold_ts ^ (UINT64_C(1) << 63);
		if (lo <= hi && u < lo)
			u = lo ? lo - 1 : 0;
		m->key[i] = (mkey)u << 64 | i;
		if (lo > hi || u > hi)
			hi = u;
		if (u < lo)
			lo = u;
	}
	if (!m->wide && (lo > hi || hi - lo < m->range / 2)) {
		m->base = lo > hi ? 0 : lo;
		m->t64[0] = lt_build64(m, 1);
	} else {
		m->wide = true;
		m->tree[0] = lt_build(m, 1);
	}
	for (uint32_t i = 0; i < m->k; i++)
		m->leaf[i].nk = next_key(m, &m->leaf[i], i);
}

/* The time that orders leaf L: its event's, or its hold time. */
static inline int64_t leaf_ts(const struct leaf *L)
{
	return likely(L->rec < L->end) ? L->rec->ts : L->hold_ts;
}

/* The winner w has a new event or a hold time (live) or neither: replays it. */
static inline void merge_update(struct merge *m, uint32_t w, bool live)
{
	if (likely(!m->wide)) {
		uint64_t kw = live ? key64(m, leaf_ts(&m->leaf[w]), w) : UINT64_MAX;
		if (live && unlikely(kw == UINT64_MAX))
			rekey(m);	/* out of range */
		else
			lt_replay64(m, w, kw);
		return;
	}
	lt_replay(m, w, live ? mkkey(leaf_ts(&m->leaf[w]), w) : KEY_INF);
}

/*
 * Makes L->ev the event of L->rec (L->ev.values already its values).
 * `same`: the leaf only moved to the next event of a batch that is ghz
 * and onecpu, so its stream and cpu stay.
 */
static inline __attribute__((always_inline)) void leaf_set(const struct merge *m, struct leaf *L,
							   const bool same)
{
	const struct brec *x = L->rec;
	struct trawl_event *o = &L->ev;

	o->ts = x->ts;
	o->cycles = same || L->ghz ? (uint64_t)x->ts - L->base : L->b->cyc[x - L->b->rec];
	o->cls = m->cls[x->cls];
	o->nvalues = x->nv;
	if (!same) {
		o->stream = L->s;
		o->cpu = L->onecpu ? L->cpu0 : L->b->cpu[x - L->b->rec];
	}
}

/*
 * Takes leaf L's next batch (take_next()) and sets the leaf from it: true
 * when it has an event or holds (a live stream with nothing yet), false
 * at its end or on an error (queued for report()).
 */
static bool leaf_take(struct trawl_reader *r, struct merge *m, struct leaf *L)
{
	int rc = take_next(r, L->s, L);

	L->hold = false;
	if (rc == 1) {
		leaf_set(m, L, false);
		return true;
	}
	if (rc == 2) {
		L->hold = true;
		L->hold_ts = unlikely(r->has_clock) ? tr_clock_hold(L->s, L->s->cs.hold_ns)
						    : L->s->cs.hold_ns;
		return true;
	}
	if (rc < 0)
		r->errq[r->nerrq++] = L->s;
	return false;
}

/* Sizes the merge for r->nstreams leaves (a power of two), keeping the
 * leaves it has (a live source added streams). 0 or -ENOMEM. */
static int merge_size(struct trawl_reader *r, struct merge *m)
{
	uint32_t k = 1, lb = 0;

	while (k < r->nstreams)
		k *= 2;
	if (m->leaf && k <= m->k)
		return 0;
	while ((UINT32_C(1) << lb) < k)
		lb++;
	uint64_t *t64 = aligned_alloc(64, ((k * sizeof(*t64)) + 63) & ~(size_t)63);
	mkey *tree = aligned_alloc(64, ((k * sizeof(*tree)) + 63) & ~(size_t)63);
	mkey *key = aligned_alloc(64, ((k * sizeof(*key)) + 63) & ~(size_t)63);
	struct leaf *leaf = aligned_alloc(64, ((k * sizeof(*leaf)) + 63) & ~(size_t)63);
	if (!t64 || !tree || !key || !leaf) {
		free(t64);
		free(tree);
		free(key);
		free(leaf);
		return -ENOMEM;
	}
	memset(leaf, 0, k * sizeof(*leaf));
	if (m->leaf)
		memcpy(leaf, m->leaf, m->k * sizeof(*leaf));
	free(m->t64);
	free(m->tree);
	free(m->key);
	free(m->leaf);
	m->t64 = t64;
	m->tree = tree;
	m->key = key;
	m->leaf = leaf;
	m->k = k;
	m->lb = lb;
	m->range = UINT64_MAX >> lb;
	return 0;
}

/* m->cls: every event class of the reader by its index (the newest model
 * of a live trace whose metadata grew). 0 or -ENOMEM. */
static int merge_classes(struct trawl_reader *r, struct merge *m)
{
	const struct trawl_ctf_event_class **c = realloc(m->cls, (r->nclasses ? r->nclasses : 1) *
							  sizeof(*c));
	if (!c)
		return -ENOMEM;
	m->cls = c;
	for (size_t i = 0; i < r->ntraces; i++) {
		const struct trawl_ctf_trace *t = r->traces[i]->dec.meta;
		for (size_t j = 0; j < t->nstreams; j++)
			for (size_t e = 0; e < t->streams[j]->nevents; e++)
				m->cls[t->streams[j]->events[e]->index] = t->streams[j]->events[e];
	}
	return 0;
}

/* Starts the worker and takes every stream's first batch. */
static int prime_threaded(struct trawl_reader *r)
{
	struct merge *m;

	r->primed = true;
	m = r->m = aligned_alloc(64, sizeof(*m));
	if (!m)
		goto single;
	memset(m, 0, sizeof(*m));
	m->win = NOLEAF;
	if (merge_size(r, m) || merge_classes(r, m))
		goto single;
	for (uint32_t i = 0; i < r->nstreams; i++)
		if (alloc_queue(r, r->all[i]))
			goto single;
	for (uint32_t i = 0; i < r->nstreams; i++) {
		r->all[i]->pub = r->all[i]->cs.st;	/* before the first batch */
		r->all[i]->pubdmg = r->all[i]->cs.dmg;
		r->all[i]->threaded = true;
	}
	if (pthread_mutex_init(&r->mu, NULL))
		goto single;
	if (pthread_cond_init(&r->wcv, NULL) || pthread_cond_init(&r->mcv, NULL) ||
	    (r->worker && pthread_create(&r->wthread, NULL, worker_main, r))) {
		/* cannot happen on Linux once the mutex exists; don't leak it */
		pthread_mutex_destroy(&r->mu);
		goto single;
	}
	r->started = true;
	r->worker_on = r->worker;
	for (uint32_t i = 0; i < r->nstreams; i++) {
		struct leaf *L = &m->leaf[i];
		L->s = r->all[i];
		leaf_take(r, m, L);
	}
	rekey(m);
	return 0;
single:
	/* no memory for batches or no thread: read in this thread */
	for (uint32_t i = 0; i < r->nstreams; i++)
		r->all[i]->threaded = false;
	r->threaded = false;
	r->primed = false;
	return -1;
}

/* ----------------------------------------------------------------- live */

#define LIVE_WAIT_NS 100000000		/* a live wait's bound: 100 ms */

/*
 * Takes in what live sources added: traces, streams (new leaves of the
 * merge), event classes (bound fields resolved). In the consumer thread,
 * never with a worker (live readers have none). The tree is the caller's
 * to rebuild (rekey()). 0 or -errno.
 */
static int reader_grow(struct trawl_reader *r)
{
	uint32_t ns0 = r->nstreams;
	struct merge *m = r->m;
	char err[256];
	int rc;

	for (size_t i = 0; i < r->nsrcs; i++)
		if ((rc = tr_reader_adopt(r, r->srcs[i])))
			return rc;
	if (r->nstreams != ns0) {
		void *a = realloc(r->all, (r->nstreams + 1) * sizeof(*r->all));
		if (!a)
			return -ENOMEM;
		r->all = a;
		void *h = realloc(r->heap, (r->nstreams + 1) * sizeof(*r->heap));
		if (!h)
			return -ENOMEM;
		r->heap = h;
		void *e = realloc(r->errq, (r->nstreams + 1) * sizeof(*r->errq));
		if (!e)
			return -ENOMEM;
		r->errq = e;
		for (size_t i = 0; i < r->ntraces; i++)
			for (size_t j = 0; j < r->traces[i]->nstreams; j++)
				r->all[r->traces[i]->streams[j]->order] = r->traces[i]->streams[j];
	}
	if ((rc = merge_classes(r, m)) || (rc = merge_size(r, m)))
		return rc;
	if ((rc = tr_reader_bind_new_classes(r, err, sizeof(err))))
		return rc;
	for (uint32_t i = ns0; i < r->nstreams; i++) {
		struct trawl_reader_stream *s = r->all[i];
		if ((rc = alloc_queue(r, s)))
			return rc;
		s->pub = s->cs.st;
		s->pubdmg = s->cs.dmg;
		s->threaded = true;
		m->leaf[i].s = s;
		leaf_take(r, m, &m->leaf[i]);
	}
	return 0;	/* the caller rebuilds the tree */
}

/* Have all the live sources ended (no stream or data will come)? */
static bool live_ended(const struct trawl_reader *r)
{
	for (size_t i = 0; i < r->nsrcs; i++)
		if (r->srcs[i]->ops->poll && !r->srcs[i]->ended)
			return false;
	return true;
}

/*
 * The merge waits for leaf w (a live stream with nothing yet; NOLEAF: for
 * streams to come): polls the live sources (bounded), takes in what they
 * added, and takes w's next batch. 0: go on, the tree is up to date;
 * -EAGAIN: nothing came within the wait (call again); -errno.
 */
static __attribute__((noinline)) int live_wait(struct trawl_reader *r, uint32_t w)
{
	int64_t deadline = (int64_t)tr_mono_ns() + LIVE_WAIT_NS;
	int got = 0, rc;

	/* every event given is out of the reader: a sink that holds its
	 * output (print to a pipe) lets it go before the wait, not after
	 * (its error is the run's: trawl_pipe_run) */
	if (r->on_wait)
		r->on_wait(r->on_wait_arg);

	for (size_t i = 0; i < r->nsrcs; i++) {
		struct trawl_source *src = r->srcs[i];
		if (!src->ops->poll || src->ended)
			continue;
		rc = src->ops->poll(src, got ? 0 : deadline);
		if (rc < 0) {
			/* for good: every later call says so */
			r->failed = rc;
			r->lasterr = src->err[0] ? src->err : "a live source failed";
			return rc;
		}
		got |= rc;
	}
	/* what the sources added, and w's next batch; then the tree anew:
	 * w need not be its winner any more (a replay is for the winner
	 * only), and a live tree is small */
	if ((rc = reader_grow(r))) {
		r->failed = rc;
		r->lasterr = "out of memory";
		return rc;
	}
	struct merge *m = r->m;
	/* live clock: what came is decoded ahead (up to each queue), for its
	 * tap to see the messages as they arrive */
	if (unlikely(r->has_clock) && r->started) {
		pthread_mutex_lock(&r->mu);
		for (uint32_t i = 0; i < r->nstreams; i++) {
			struct trawl_reader_stream *s = r->all[i];
			while (s->lpend && fillable(s) && !r->failed)
				fill_locked(r, s);
		}
		pthread_mutex_unlock(&r->mu);
	}
	/* then the clocks as corrected now, the messages just decoded
	 * included, for what is taken next; front: the last time the merge
	 * gave (each leaf's last given: in its batch before its head, or in
	 * the batches it gave back) */
	if (unlikely(r->has_clock)) {
		int64_t front = INT64_MIN;
		for (uint32_t i = 0; r->m && i < r->m->k; i++) {
			const struct leaf *L = &r->m->leaf[i];
			int64_t f = L->s ? L->s->lgiven : INT64_MIN;
			if (L->s && L->b && L->s->cur == L->b && L->rec > L->b->rec && L->rec[-1].ts > f)
				f = L->rec[-1].ts;
			front = f > front ? f : front;
		}
		if ((rc = tr_clock_refresh(r, front, live_ended(r))) < 0) {
			r->failed = rc;
			r->lasterr = rc == -ENOMEM ? "out of memory" : "the live clock failed";
			return rc;
		}
		/* what the leaves hold and have not given, and their hold
		 * times: the new times too (the tree is keyed anew below) */
		for (uint32_t i = 0; rc && i < r->m->k; i++) {
			struct leaf *L = &r->m->leaf[i];
			if (!L->s || !L->s->trace->lchanged)
				continue;
			if (L->s->cur == L->b && L->rec < L->end) {
				tr_clock_remap(L->s, L->s->cur, (uint32_t)(L->rec - L->b->rec));
				L->ev.ts = L->rec->ts;
				L->ghz = L->b->ghz;	/* (its raw clock kept apart now) */
			} else if (L->hold) {
				L->hold_ts = tr_clock_hold(L->s, L->s->cs.hold_ns);
			}
		}
		for (size_t i = 0; rc && i < r->ntraces; i++)
			r->traces[i]->lchanged = false;
	}
	if (w != NOLEAF && w < m->k && m->leaf[w].hold)
		leaf_take(r, m, &m->leaf[w]);
	/* news: every waiting leaf takes what came for it (its stream's next
	 * packet, or a newer bound), not only w: a leaf left at its old
	 * bound would hold back what the merge can show now until the next
	 * news (a kernel session's cut for a waiting viewer: an event on one
	 * CPU, the beacons of the others in the same poll, shown only at the
	 * next tick) */
	for (uint32_t i = 0; got && i < m->k; i++)
		if (i != w && m->leaf[i].hold)
			leaf_take(r, m, &m->leaf[i]);
	rekey(m);
	return got ? 0 : -EAGAIN;
}

/*
 * What the common step reads of the merge, copied into locals once per
 * loop of steps: the step stores into the tree through a uint64_t
 * pointer, which could alias m->base or m->range, so reading them
 * through m would reload them at every step.
 */
struct mview {
	struct leaf *leaf;
	uint64_t *t64;
	const struct trawl_ctf_event_class *const *cls;
	uint64_t base, range;
	uint32_t lb, mask;
};

static inline __attribute__((always_inline)) struct mview mview(const struct merge *m)
{
	return (struct mview){ m->leaf, m->t64, m->cls, m->base, m->range, m->lb, m->k - 1 };
}

/*
 * Replays leaf w with key kw, as lt_replay64() does, in a tree of height
 * h (v->lb) known at compile time, or REPLAY_ANY: unrolled, each level a
 * load, a compare and two selects, no loop counter or exit branch.
 * Returns the new winner's key (also stored at t64[0]).
 */
#define REPLAY_ANY 0xffu
static inline __attribute__((always_inline)) uint64_t replay64(const struct mview *v, uint32_t w,
								uint64_t kw, const unsigned h)
{
	uint64_t *tree = v->t64;
	const unsigned lb = h == REPLAY_ANY ? v->lb : h;
	size_t p = ((size_t)w + ((size_t)1 << lb)) >> 1;

	if (h == REPLAY_ANY) {
		for (; p; p >>= 1) {
			uint64_t kl = tree[p];
			bool sw = kl < kw;
			tree[p] = sw ? kw : kl;
			kw = sw ? kl : kw;
		}
	} else {
#pragma GCC unroll 16
		for (unsigned i = 0; i < h; i++, p >>= 1) {
			uint64_t kl = tree[p];
			bool sw = kl < kw;
			tree[p] = sw ? kw : kl;
			kw = sw ? kl : kw;
		}
	}
	tree[0] = kw;
	return kw;
}

/*
 * The merge's common step: leaf w, the last winner, has nk set (its next
 * event is in its batch, which is onecpu, and its key is narrow).
 * Replays it first (what the next step waits for), advances the leaf and
 * returns the new winner. h: see replay64().
 */
static inline __attribute__((always_inline)) uint32_t merge_step(const struct mview *v, uint32_t w,
								  const unsigned h)
{
	struct leaf *L = &v->leaf[w];
	const unsigned lb = h == REPLAY_ANY ? v->lb : h;

	uint64_t top = replay64(v, w, L->nk, h);
	const struct brec *x = L->rec;
	L->ev.values += x->nv;
	L->rec = ++x;
	/* leaf_set(), same stream and cpu */
	L->ev.ts = x->ts;
	L->ev.cycles = likely(L->ghz) ? (uint64_t)x->ts - L->base : L->b->cyc[x - L->b->rec];
	L->ev.cls = v->cls[x->cls];
	L->ev.nvalues = x->nv;
	/* the batch was written by the other core: fetch ahead */
	__builtin_prefetch(x + 32);
	uint64_t nk = UINT64_MAX;
	if (likely(x + 1 < L->end)) {
		uint64_t d = ((uint64_t)x[1].ts ^ (UINT64_C(1) << 63)) - v->base;
		nk = likely(d < v->range) ? d << lb | w : UINT64_MAX;	/* key64() */
	}
	L->nk = nk;
	return (uint32_t)top & (h == REPLAY_ANY ? v->mask : (1u << h) - 1);
}

/* Returns the event of leaf w, the winner. */
static inline __attribute__((always_inline)) int emit(struct merge *m, uint32_t w,
						      const struct trawl_event **ev)
{
	m->win = w;
	*ev = &m->leaf[w].ev;
	return 1;
}

static __attribute__((noinline)) int next_threaded_slow(struct trawl_reader *r,
							const struct trawl_event **ev)
{
	struct merge *m = r->m;
	uint32_t w = m ? m->win : NOLEAF;

	if (unlikely(r->failed))
		return r->failed;

	if (likely(w != NOLEAF)) {
		struct leaf *L = &m->leaf[w];
		bool live = true;
		L->ev.values += L->rec->nv;
		if (likely(++L->rec < L->end)) {
			/* the batch was written by the other core: fetch ahead */
			__builtin_prefetch(L->rec + 8);
			leaf_set(m, L, false);
		} else {
			live = leaf_take(r, m, L);
		}
		merge_update(m, w, live);
		L->nk = live ? next_key(m, L, w) : UINT64_MAX;
	} else if (!r->primed) {
		if (prime_threaded(r))
			return trawl_reader_next(r, ev);	/* single-threaded after all */
		m = r->m;
	}
	if (unlikely(r->errq_head < r->nerrq)) {
		m->win = NOLEAF;
		return report(r, r->errq[r->errq_head++]);
	}
	int64_t waited = 0;	/* when this call began to wait (live) */
	for (;;) {
		if (likely(!m->wide)) {
			uint64_t top = m->t64[0];
			w = top == UINT64_MAX ? NOLEAF : (uint32_t)(top & ((UINT64_C(1) << m->lb) - 1));
		} else {
			mkey top = m->tree[0];
			w = top == KEY_INF ? NOLEAF : (uint32_t)top;
		}
		if (w == NOLEAF) {
			m->win = NOLEAF;
			if (!r->live || live_ended(r))
				return 0;
			if (!waited)
				waited = (int64_t)tr_mono_ns();
			int rc = live_wait(r, NOLEAF);	/* for streams to come */
			if (rc < 0)
				return rc;
			if ((int64_t)tr_mono_ns() - waited >= LIVE_WAIT_NS)
				return -EAGAIN;	/* no event for a whole wait */
			m = r->m;
			continue;
		}
			if (likely(!m->leaf[w].hold))
			return emit(m, w, ev);
		/* a live stream holds the merge back: wait for it. Its hold
		 * time is the least of the tree: nothing before it is to come */
		if (m->leaf[w].hold_ts > r->low)
			r->low = m->leaf[w].hold_ts;
		m->win = NOLEAF;
		if (!waited)
			waited = (int64_t)tr_mono_ns();
		int rc = live_wait(r, w);
		if (rc < 0)
			return rc;	/* -EAGAIN: nothing within the wait */
		/* beacons and empty packets came, but no event for a whole wait:
		 * say so too (sinks close time intervals by the clock then) */
		if ((int64_t)tr_mono_ns() - waited >= LIVE_WAIT_NS)
			return -EAGAIN;
		m = r->m;		/* the merge may have grown */
		if (unlikely(r->errq_head < r->nerrq))
			return report(r, r->errq[r->errq_head++]);
	}
}

/*
 * The common case of next_threaded_slow(): the last winner has another
 * event in its batch, within the range of the 64-bit keys. (An error to
 * report always leaves m->win at NOLEAF.)
 */
static inline __attribute__((always_inline)) int next_threaded(struct trawl_reader *r,
							       const struct trawl_event **ev)
{
	struct merge *m = r->m;
	uint32_t w;

	if (likely(m && (w = m->win) != NOLEAF) && likely(m->leaf[w].nk != UINT64_MAX)) {
		const struct mview v = mview(m);
		w = merge_step(&v, w, REPLAY_ANY);
		if (likely(!m->leaf[w].hold))
			return emit(m, w, ev);
		m->win = NOLEAF;	/* a live stream holds the merge: wait for it */
	}
	return next_threaded_slow(r, ev);
}

/* trawl_reader_next() without a worker. */
static __attribute__((noinline)) int next_single(struct trawl_reader *r, const struct trawl_event **ev)
{
	struct trawl_reader_stream *s = r->pending;

	if (likely(s) && likely(ctf_fast_next(&s->cs, &s->cs.ev))) {
		top_changed(r, s);
		if (likely(r->errq_head == r->nerrq)) {
			s = r->heap[0].s;
			r->pending = s;
			*ev = &s->cs.ev;
			return 1;
		}
		return next_slow(r, ev, true);
	}
	return next_slow(r, ev, false);
}

int trawl_reader_next(struct trawl_reader *r, const struct trawl_event **ev)
{
	if (likely(r->threaded)) {
		return next_threaded(r, ev);
	}
	return next_single(r, ev);
}

/*
 * trawl_reader_read()'s loop: merge_step() until the winner's batch ends
 * (or keys leave the 64-bit range) or out[] is full, from out[n]. h: the
 * tree's height, see replay64(). Returns the events in out[].
 */
static inline __attribute__((always_inline)) uint32_t read_steps(struct merge *m,
								  struct trawl_event *out,
								  uint32_t n, uint32_t max,
								  const unsigned h)
{
	const struct mview v = mview(m);
	uint32_t w = m->win;

	while (n < max && v.leaf[w].nk != UINT64_MAX) {
		w = merge_step(&v, w, h);
		if (unlikely(v.leaf[w].hold)) {
			/* a live stream holds the merge back (its key is its
			 * hold time): no event taken, the slow path waits */
			m->win = NOLEAF;
			return n;
		}
		out[n++] = v.leaf[w].ev;
	}
	m->win = w;
	return n;
}

/* read_steps() with the tree's height a constant in each copy. */
static __attribute__((noinline)) uint32_t read_run(struct merge *m, struct trawl_event *out,
						   uint32_t max)
{
	switch (m->lb) {
	case 0: return read_steps(m, out, 1, max, 0);
	case 1: return read_steps(m, out, 1, max, 1);
	case 2: return read_steps(m, out, 1, max, 2);
	case 3: return read_steps(m, out, 1, max, 3);
	case 4: return read_steps(m, out, 1, max, 4);
	case 5: return read_steps(m, out, 1, max, 5);
	case 6: return read_steps(m, out, 1, max, 6);
	case 7: return read_steps(m, out, 1, max, 7);
	case 8: return read_steps(m, out, 1, max, 8);
	default: return read_steps(m, out, 1, max, REPLAY_ANY);
	}
}

int trawl_reader_read(struct trawl_reader *r, struct trawl_event *out, unsigned max)
{
	const struct trawl_event *ev;

	if (!max)
		return 0;
	int rc = trawl_reader_next(r, &ev);
	if (rc <= 0)
		return rc;
	out[0] = *ev;
	if (!r->threaded)
		return 1;	/* the next event reuses the stream's tape */
	/*
	 * merge_step() in a loop, the merge's state in registers, until the
	 * winner's batch ends (or keys leave the 64-bit range): the next
	 * call's first step then takes the slow path. No batch goes back to
	 * the filler meanwhile, so every event of out[] stays valid.
	 */
	return (int)read_run(r->m, out, max);
}

const char *trawl_reader_error(const struct trawl_reader *r)
{
	return r->lasterr ? r->lasterr : "";
}

unsigned trawl_reader_nerrors(const struct trawl_reader *r)
{
	return r->nerrors;
}

/* ------------------------------------------------------------ lifecycle */

struct trawl_reader_stream *tr_reader_stream_new(struct trawl_reader_trace *t, const char *path)
{
	struct trawl_reader_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->trace = t;
	if (tr_ctf_stream_init(&s->cs, &t->dec, NULL, path, s)) {
		tr_reader_stream_free(s);
		return NULL;
	}
	return s;
}

void tr_reader_stream_free(struct trawl_reader_stream *s)
{
	if (!s)
		return;
	for (int i = 0; s->q && i < NQ; i++)
		tr_ctf_batch_release(&s->q[i]);
	free(s->q);
	tr_ctf_stream_release(&s->cs);
	free(s);
}

void tr_reader_trace_free(struct trawl_reader_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstreams; i++)
		tr_reader_stream_free(t->streams[i]);
	free(t->streams);
	if (!t->borrowed)
		trawl_ctf_trace_free(t->dec.meta);
	tr_ctf_tdec_release(&t->dec);
	for (size_t i = 0; i < t->nolddec; i++) {
		trawl_ctf_trace_free(t->olddec[i].meta);
		tr_ctf_tdec_release(&t->olddec[i]);
	}
	free(t->olddec);
	free(t->path);
	free(t->real);
	free(t);
}

/* Numbers the trace's event classes after those of the traces before
 * (also in the decoders' fast tables). */
static void number_classes(struct trawl_reader *r, struct trawl_reader_trace *t)
{
	const struct trawl_ctf_trace *m = t->dec.meta;

	for (size_t i = 0; i < m->nstreams; i++) {
		const struct trawl_ctf_stream_class *sc = m->streams[i];
		for (size_t j = 0; j < sc->nevents; j++)
			sc->events[j]->index = r->nclasses++;
		const struct sc_dec *sd = sc->priv;
		if (sd && sd->fast) {
			struct fastent *fe = (struct fastent *)sd->fast;	/* the reader's own */
			for (uint64_t id = 0; id < sd->nbyid; id++)
				fe[id].cls = fe[id].ec ? fe[id].ec->index : 0;
		}
	}
}

int tr_reader_adopt(struct trawl_reader *r, struct trawl_source *src)
{
	size_t n = src->ntraces - src->nadopted;

	if (n) {
		void *nt = realloc(r->traces, (r->ntraces + n) * sizeof(*r->traces));
		if (!nt)
			return -ENOMEM;
		r->traces = nt;
		for (size_t i = src->nadopted; i < src->ntraces; i++) {
			struct trawl_reader_trace *t = src->traces[i];
			r->traces[r->ntraces++] = t;
			number_classes(r, t);
			if (src->ops->poll)
				tr_clock_adopt(r, t);
		}
		src->nadopted = src->ntraces;
	}
	/* new streams, of new traces and of traces it had */
	for (size_t i = 0; i < src->ntraces; i++) {
		struct trawl_reader_trace *t = src->traces[i];
		for (size_t j = t->nadopted; j < t->nstreams; j++) {
			t->streams[j]->cs.rg = &r->rg;
			t->streams[j]->order = r->nstreams++;
		}
		t->nadopted = t->nstreams;
	}
	src->r = r;
	if (src->ops->poll)
		r->live = true;
	return 0;
}

int tr_reader_trace_update(struct trawl_reader *r, struct trawl_reader_trace *t,
			struct trawl_ctf_trace *meta, const char *const *events, size_t nevents,
			char *err, size_t errlen)
{
	struct ctf_tdec nd = { .fix = t->dec.fix };
	uint32_t oldregs = t->dec.td.nregs;
	int rc = tr_ctf_tdec_init(&nd, meta, events, nevents, err, errlen);

	if (rc) {
		tr_ctf_tdec_release(&nd);
		trawl_ctf_trace_free(meta);
		return rc;
	}
	struct ctf_tdec *old = realloc(t->olddec, (t->nolddec + 1) * sizeof(*old));
	if (!old) {
		tr_ctf_tdec_release(&nd);
		trawl_ctf_trace_free(meta);
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	}
	t->olddec = old;
	/* the classes it had keep their numbers; new ones get the next */
	const struct trawl_ctf_trace *om = t->dec.meta;
	for (size_t i = 0; i < meta->nstreams; i++) {
		const struct trawl_ctf_stream_class *sc = meta->streams[i];
		const struct trawl_ctf_stream_class *osc = NULL;
		for (size_t k = 0; r && om && k < om->nstreams && !osc; k++)
			if (om->streams[k]->id == sc->id)
				osc = om->streams[k];
		for (size_t j = 0; j < sc->nevents; j++) {
			struct trawl_ctf_event_class *ec = sc->events[j];
			const struct trawl_ctf_event_class *oec = NULL;
			for (size_t k = 0; osc && k < osc->nevents && !oec; k++)
				if (osc->events[k]->id == ec->id)
					oec = osc->events[k];
			ec->index = !r ? 0 : oec ? oec->index : r->nclasses++;
		}
		const struct sc_dec *sd = sc->priv;
		if (sd && sd->fast) {
			struct fastent *fe = (struct fastent *)sd->fast;	/* the reader's own */
			for (uint64_t id = 0; id < sd->nbyid; id++)
				fe[id].cls = fe[id].ec ? fe[id].ec->index : 0;
		}
	}
	t->olddec[t->nolddec++] = t->dec;	/* events in flight may use its classes */
	t->dec = nd;
	for (size_t j = 0; j < t->nstreams; j++)
		if ((rc = tr_ctf_stream_retarget(&t->streams[j]->cs, &t->dec, oldregs)))
			return tr_seterr(err, errlen, -rc, "out of memory");
	return 0;
}

void trawl_reader_free(struct trawl_reader *r)
{
	if (!r)
		return;
	if (r->started) {
		if (r->worker_on) {
			pthread_mutex_lock(&r->mu);
			r->stop = true;
			pthread_cond_signal(&r->wcv);
			pthread_mutex_unlock(&r->mu);
			pthread_join(r->wthread, NULL);
		}
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->wcv);
		pthread_cond_destroy(&r->mcv);
	}
	free(r->all);
	free(r->want);
	tr_clock_release(r);
	if (r->m) {
		free(r->m->t64);
		free(r->m->tree);
		free(r->m->key);
		free(r->m->leaf);
		free(r->m->cls);
		free(r->m);
	}
	tr_reader_fields_free(r);
	for (size_t i = 0; i < r->nsrcs; i++)
		trawl_source_free(r->srcs[i]);	/* with their traces */
	free(r->srcs);
	free(r->traces);
	free(r->heap);
	free(r->errq);
	free(r);
}

struct trawl_reader *tr_reader_alloc(const struct trawl_reader_opts *o)
{
	struct trawl_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->low = INT64_MIN;
	r->rg.simd = tr_ctf_simd();
	if (o && o->sz >= offsetof(struct trawl_reader_opts, end) + sizeof(o->end)) {
		r->rg.begin = o->begin;
		r->rg.has_begin = o->begin != 0;
		r->rg.end = o->end;
		r->rg.has_end = o->end != 0;
	}
	if (o && o->sz >= offsetof(struct trawl_reader_opts, threads) + sizeof(o->threads))
		r->threads = o->threads;
	if (o && o->sz >= offsetof(struct trawl_reader_opts, clock) + sizeof(o->clock) &&
	    o->clock && o->clock->sz >= sizeof(*o->clock) && o->clock->tap && o->clock->get) {
		r->clock = *o->clock;
		r->has_clock = true;
	}
	return r;
}

int tr_reader_ready(struct trawl_reader *r, char *err, size_t errlen)
{
	uint64_t bytes = 0;

	r->heap = calloc(r->nstreams + 1, sizeof(*r->heap));
	r->errq = calloc(r->nstreams + 1, sizeof(*r->errq));
	r->all = calloc(r->nstreams + 1, sizeof(*r->all));
	if (!r->heap || !r->errq || !r->all)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	for (size_t i = 0; i < r->ntraces; i++) {
		struct trawl_reader_trace *t = r->traces[i];
		for (size_t j = 0; j < t->nstreams; j++) {
			r->all[t->streams[j]->order] = t->streams[j];
			bytes += t->streams[j]->cs.size;
		}
	}
	/*
	 * Batches from a few MiB of streams on (below, their setup costs more
	 * than they save); a worker when asked, or by default on 2 CPUs and
	 * more. In one thread, batches decode with the same fast loops as
	 * the worker: `trawl info --threads 1` on the benchmark session took
	 * 0.49-0.59 s instead of 1.19-1.38 s event by event.
	 */
	if (r->threads >= 2)
		tr_reader_set_mode(r, READ_WORKER);
	else if (bytes < AUTO_MIN_BYTES)
		tr_reader_set_mode(r, READ_EVENTS);
	else if (r->threads == 0 && sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		tr_reader_set_mode(r, READ_WORKER);
	else
		tr_reader_set_mode(r, READ_BATCHES);
	if (!r->nstreams)
		tr_reader_set_mode(r, READ_EVENTS);
	/* live: batches in this thread (streams and classes come and go
	 * between batches, without a worker to stop), even before any stream */
	if (r->live)
		tr_reader_set_mode(r, READ_BATCHES);
	return 0;
}

void tr_reader_set_batch(struct trawl_reader *r, uint32_t events)
{
	r->batch_events = events;
}

void tr_reader_set_mode(struct trawl_reader *r, enum read_mode m)
{
	r->threaded = m != READ_EVENTS;
	r->worker = m == READ_WORKER;
}

/* ----------------------------------------------------------- accessors */

uint64_t tr_reader_given(const struct trawl_reader *r)
{
	return r->given;
}

bool tr_reader_is_live(const struct trawl_reader *r)
{
	return r->live;
}

size_t trawl_reader_ntraces(const struct trawl_reader *r)
{
	return r->ntraces;
}

size_t trawl_reader_nclasses(const struct trawl_reader *r)
{
	return r->nclasses;
}

const struct trawl_reader_trace *trawl_reader_trace_at(const struct trawl_reader *r, size_t i)
{
	return i < r->ntraces ? r->traces[i] : NULL;
}

const char *trawl_reader_trace_path(const struct trawl_reader_trace *t)
{
	return t->path;
}

const char *trawl_reader_trace_hostname(const struct trawl_reader_trace *t)
{
	return t->hostname;
}

const struct trawl_ctf_trace *trawl_reader_trace_meta(const struct trawl_reader_trace *t)
{
	return t->dec.meta;
}

size_t trawl_reader_trace_nstreams(const struct trawl_reader_trace *t)
{
	return t->nstreams;
}

const struct trawl_reader_stream *trawl_reader_trace_stream(const struct trawl_reader_trace *t, size_t i)
{
	return i < t->nstreams ? t->streams[i] : NULL;
}

const struct trawl_reader_trace *trawl_reader_stream_trace(const struct trawl_reader_stream *s)
{
	return s->trace;
}

const char *trawl_reader_stream_path(const struct trawl_reader_stream *s)
{
	return s->cs.path;
}

void trawl_reader_stream_stats(const struct trawl_reader_stream *s,
			       struct trawl_reader_stream_stats *st)
{
	*st = s->threaded ? s->pub : s->cs.st;
}

size_t trawl_reader_stream_losses(const struct trawl_reader_stream *s,
				  struct trawl_reader_loss *out, size_t max, uint64_t *events)
{
	const struct ctf_dmg *d = s->threaded ? &s->pubdmg : &s->cs.dmg;
	size_t n = 0;

	for (uint32_t i = 0; i < d->nloss && n < max; i++, n++)
		out[n] = (struct trawl_reader_loss){ s->cs.loss[i].begin, s->cs.loss[i].end,
						      s->cs.loss[i].events };
	if (d->open && n < max) {
		out[n] = (struct trawl_reader_loss){ d->cur.begin, d->cur.end, d->cur.events };
		n++;
	}
	if (events)
		*events = d->lost;
	return n;
}

size_t trawl_reader_stream_skips(const struct trawl_reader_stream *s,
				 struct trawl_reader_skip *out, size_t max, uint64_t *bytes,
				 uint64_t *nskips)
{
	const struct ctf_dmg *d = s->threaded ? &s->pubdmg : &s->cs.dmg;
	size_t n = 0;

	for (uint32_t i = 0; i < d->nskip && n < max; i++, n++)
		out[n] = (struct trawl_reader_skip){ s->cs.skips[i].off, s->cs.skips[i].bytes,
						      s->cs.skips[i].why };
	if (bytes)
		*bytes = d->skipped;
	if (nskips)
		*nskips = d->nskips;
	return n;
}

void trawl_reader_progress(const struct trawl_reader *r, uint64_t *done, uint64_t *total)
{
	uint64_t d = 0, t = 0;

	for (size_t i = 0; !r->live && i < r->ntraces; i++)
		for (size_t j = 0; j < r->traces[i]->nadopted; j++) {
			const struct trawl_reader_stream *s = r->traces[i]->streams[j];
			d += s->threaded ? s->puboff : ctf_stream_consumed(&s->cs);
			t += s->cs.size;
		}
	*done = d;
	*total = t;
}


int64_t trawl_reader_low(const struct trawl_reader *r)
{
	return r->live ? r->low : INT64_MIN;
}
