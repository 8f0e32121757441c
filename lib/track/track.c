/* SPDX-License-Identifier: MIT */
/*
 * lib/track/track.c - the application latency tracker (trawl/track.h; the
 * design and its measured cost: docs/track.md).
 *
 * The table: open addressing over 2 x capacity slots of one cache line
 * each (two threads on neighbouring keys do not share a line); a key's
 * neighbourhood is the WINDOW slots from its hash on. A slot's state word
 * is (generation << 2 | state), the state FREE, BUSY (an in writing it),
 * ARMED (in flight) or TAKEN (an out or poll reading it before it is FREE
 * again). Leaving FREE and leaving ARMED are compare-and-swaps of the
 * whole word, so exactly one thread writes or reads a slot's fields at a
 * time; in bumps the generation, so a swap fails on a slot emptied and
 * filled again since its key was read (ABA).
 *
 * Deletion: a lookup scans the whole neighbourhood and never stops at a
 * free slot, so deleting is making the slot FREE: no tombstones (which
 * pile up and need a rehash) and no backward shift (which moves live
 * entries under concurrent readers). The price: an out of a key not in
 * flight reads WINDOW slots, and an in is dropped when its neighbourhood
 * is full even if the table is not (twice the slots make that rare).
 *
 * The fields other than the state are atomics accessed relaxed: the state's
 * release (in) and acquire (the swap) order them, and out and poll read a
 * slot's key or deadline before they own it (then the swap tells whether
 * what they read was still the slot's).
 *
 * No per-pair counter: every in bumps its slot's generation, so pairs =
 * the sum of the generations - timeouts - collected - in flight (stats);
 * the counters that are written are those of the rare paths.
 */
#define TRAWL_TRACEPOINT_DEFINE
#include "trawl/tracepoint.h"
#include "trawl/track.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "ust/ust-internal.h"
#include "util/clock.h"

/* The event's descriptor under libtrawl's prefix: the macro names it
 * __trawl_ev_trawl_track_outlier, a name a program linking libtrawl.a would
 * see (every global symbol of the archive is trawl_ or tr_, t0010). */
extern struct trawl_tp_event __trawl_ev_trawl_track_outlier __asm__("tr_track_ev_outlier")
	TRAWL_HIDDEN;

TRAWL_TRACEPOINT_EVENT(trawl_track, outlier, TRAWL_LOGLEVEL_WARNING,
	TRAWL_ARGS(const char *rule, uint64_t key, uint64_t start, uint64_t end,
		   uint64_t duration_ns, uint64_t threshold_ns, uint8_t timeout),
	TRAWL_FIELDS(
		TRAWL_FIELD_STRING(rule, rule)
		TRAWL_FIELD_INT(uint64_t, key, key)
		TRAWL_FIELD_INT(uint64_t, start, start)
		TRAWL_FIELD_INT(uint64_t, end, end)
		TRAWL_FIELD_INT(uint64_t, duration_ns, duration_ns)
		TRAWL_FIELD_INT(uint64_t, threshold_ns, threshold_ns)
		TRAWL_FIELD_INT(uint8_t, timeout, timeout)))

enum { FREE, BUSY, ARMED, TAKEN };
#define STATE(w) ((w) & 3)
#define GEN_ONE 4u
#define WINDOW 16u
#define CAP_MIN 8u			/* 16 slots: one neighbourhood */
#define CAP_MAX (1u << 24)
#define CAP_DEFAULT 4096u
#define GC_DEFAULT_NS (60ull * 1000000000)
/* poll refines the TSC's frequency while its baseline is shorter than this
 * (beyond, the error of the two samples' widths is below 1e-9) */
#define CALIB_MAX_NS (64ll * 1000000000)

struct slot {
	alignas(64) uint64_t state;
	uint64_t key;
	uint64_t start;			/* the tracker's clock */
	uint64_t thr;			/* threshold, in the tracker's clock units */
	uint64_t deadline;		/* the tracker's clock (UINT64_MAX: never) */
	uint64_t thr_ns;
	uint64_t timeout;		/* 1: deadline is a timeout, 0: gc_ns */
};

struct trawl_tracker {
	/* read by every in and out */
	struct slot *slots;
	uint64_t mask;
	unsigned shift;			/* hash: the top bits of key x phi */
	bool tsc;			/* the clock: TSC (else CLOCK_MONOTONIC ns) */
	uint64_t per_ns;		/* clock units per ns, 32.32 (atomic) */
	uint64_t gc;			/* gc_ns in clock units */

	/* written on the rare paths only */
	alignas(64) uint64_t outliers, timeouts, suppressed, dropped, unmatched, collected;
	alignas(64) uint64_t tat;	/* rate limit (GCRA): the next conforming time */
	uint64_t interval, tau;		/* clock units; interval 0: no limit */
	struct tr_clock_sample s0;	/* the TSC against CLOCK_MONOTONIC, at creation */
	uint64_t tsc_per_ns;		/* TSC cycles per ns, 32.32 (atomic) */
	int64_t calib_ns;		/* baseline of tsc_per_ns (atomic) */
	void (*cb)(const struct trawl_outlier *o, void *arg);
	void *arg;
	bool emit;
	char *rule;
	size_t nslots;
};

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ADD(p) __atomic_fetch_add((p), 1, __ATOMIC_RELAXED)

static inline uint64_t now(const struct trawl_tracker *t)
{
	return t->tsc ? tr_tsc() : tr_mono_ns();
}

/* a x m / 2^32 (m: 32.32), saturated */
static inline uint64_t mul_q32(uint64_t a, uint64_t m)
{
	unsigned __int128 p = ((unsigned __int128)a * m) >> 32;
	return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
}

static uint64_t div_q32(uint64_t a, uint64_t m)
{
	unsigned __int128 p = ((unsigned __int128)a << 32) / m;
	return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
}

static inline struct slot *home(const struct trawl_tracker *t, uint64_t key, uint64_t *i)
{
	*i = (key * 0x9e3779b97f4a7c15ull) >> t->shift;
	return &t->slots[*i];
}

/* TSC cycles per ns between two samples, 32.32 */
static uint64_t tsc_rate(const struct tr_clock_sample *a, const struct tr_clock_sample *b)
{
	return div_q32(b->c - a->c, (uint64_t)(b->mono - a->mono));
}

/* A time of the tracker's clock on the clock of the trace the event goes
 * into: the same but when a session forced the other clock (--clock). */
static uint64_t trace_time(const struct trawl_tracker *t, uint64_t c, bool trace_tsc)
{
	if (trace_tsc == t->tsc)
		return c;
	uint64_t r = LD(&t->tsc_per_ns);
	if (t->tsc)
		return (uint64_t)t->s0.mono + div_q32(c - t->s0.c, r);
	return t->s0.c + mul_q32(c - (uint64_t)t->s0.mono, r);
}

/* The token bucket, as a generic cell rate algorithm: one word, the time
 * at which the bucket is full again; an outlier conforms when that is at
 * most tau (rate - 1 intervals) ahead of now, and pushes it one interval. */
static bool conforms(struct trawl_tracker *t, uint64_t at)
{
	if (!t->interval)
		return true;
	uint64_t tat = LD(&t->tat);
	for (;;) {
		uint64_t base = tat > at ? tat : at;
		if (base - at > t->tau)
			return false;
		if (__atomic_compare_exchange_n(&t->tat, &tat, base + t->interval, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	}
}

static void report(struct trawl_tracker *t, uint64_t key, uint64_t start, uint64_t end,
		   uint64_t thr_ns, bool timeout)
{
	if (!conforms(t, end)) {
		ADD(&t->suppressed);
		return;
	}
	struct trawl_outlier o = {
		.rule = t->rule, .key = key, .start = start, .end = end,
		.duration_ns = div_q32(end - start, LD(&t->per_ns)),
		.threshold_ns = thr_ns, .timeout = timeout,
	};
	if (t->emit && trawl_tracepoint_enabled(trawl_track, outlier)) {
		bool tsc = __atomic_load_n(&tr_ust_use_tsc, __ATOMIC_RELAXED);
		trawl_tracepoint(trawl_track, outlier, o.rule, key, trace_time(t, start, tsc),
				 trace_time(t, end, tsc), o.duration_ns, thr_ns, timeout);
	}
	if (t->cb)
		t->cb(&o, t->arg);
}

bool trawl_tracker_in(struct trawl_tracker *t, uint64_t key, uint64_t threshold_ns,
		      uint64_t timeout_ns)
{
	uint64_t start = now(t), per_ns = LD(&t->per_ns), i;
	struct slot *s = home(t, key, &i);
	for (unsigned n = 0; n < WINDOW;) {
		uint64_t w = LD(&s->state);
		if (STATE(w) != FREE ||
		    !__atomic_compare_exchange_n(&s->state, &w, (w + GEN_ONE) | BUSY, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			/* taken, or taken meanwhile: the next slot */
			n++;
			i = (i + 1) & t->mask;
			s = &t->slots[i];
			continue;
		}
		uint64_t span = timeout_ns ? mul_q32(timeout_ns, per_ns) : t->gc;
		ST(&s->key, key);
		ST(&s->start, start);
		ST(&s->thr, mul_q32(threshold_ns, per_ns));
		ST(&s->deadline, span > UINT64_MAX - start ? UINT64_MAX : start + span);
		ST(&s->thr_ns, threshold_ns);
		ST(&s->timeout, timeout_ns != 0);
		__atomic_store_n(&s->state, (w + GEN_ONE) | ARMED, __ATOMIC_RELEASE);
		return true;
	}
	ADD(&t->dropped);
	return false;
}

bool trawl_tracker_out(struct trawl_tracker *t, uint64_t key)
{
	uint64_t end = now(t), i;
	struct slot *s = home(t, key, &i);
	for (unsigned n = 0; n < WINDOW;) {
		uint64_t w = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		/* a failed swap leaves the slot's new state in w: look again at
		 * the same slot (it may hold key again, in a new generation) */
		while (STATE(w) == ARMED && LD(&s->key) == key) {
			if (!__atomic_compare_exchange_n(&s->state, &w, w | TAKEN, false,
							 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
				continue;
			uint64_t start = LD(&s->start), thr = LD(&s->thr), thr_ns = LD(&s->thr_ns);
			__atomic_store_n(&s->state, (w & ~3ull) | FREE, __ATOMIC_RELEASE);
			if (end <= start || end - start <= thr)
				return false;
			ADD(&t->outliers);
			report(t, key, start, end, thr_ns, false);
			return true;
		}
		n++;
		i = (i + 1) & t->mask;
		s = &t->slots[i];
	}
	ADD(&t->unmatched);
	return false;
}

/* Measures the TSC's frequency again over the time since creation each
 * time that doubled, up to CALIB_MAX_NS (several pollers may race: each
 * stores a measure as good). */
static void refine(struct trawl_tracker *t)
{
	int64_t base = LD(&t->calib_ns);
	if (base >= CALIB_MAX_NS || tr_clock_ns(CLOCK_MONOTONIC) - t->s0.mono < 2 * base)
		return;
	struct tr_clock_sample s1;
	tr_clock_sample(true, &s1);
	uint64_t r = tsc_rate(&t->s0, &s1);
	ST(&t->tsc_per_ns, r);
	if (t->tsc)
		ST(&t->per_ns, r);
	ST(&t->calib_ns, s1.mono - t->s0.mono);
}

size_t trawl_tracker_poll(struct trawl_tracker *t)
{
	size_t fired = 0;
	if (HAVE_TSC)
		refine(t);
	uint64_t at = now(t);
	for (size_t i = 0; i < t->nslots; i++) {
		struct slot *s = &t->slots[i];
		uint64_t w = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (STATE(w) != ARMED || LD(&s->deadline) > at ||
		    !__atomic_compare_exchange_n(&s->state, &w, w | TAKEN, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		uint64_t key = LD(&s->key), start = LD(&s->start), thr_ns = LD(&s->thr_ns);
		bool timeout = LD(&s->timeout);
		__atomic_store_n(&s->state, (w & ~3ull) | FREE, __ATOMIC_RELEASE);
		if (!timeout) {
			ADD(&t->collected);
			continue;
		}
		ADD(&t->timeouts);
		fired++;
		report(t, key, start, at > start ? at : start, thr_ns, true);
	}
	return fired;
}

void trawl_tracker_stats(const struct trawl_tracker *t, struct trawl_tracker_stats *st)
{
	uint64_t gens = 0, busy = 0;
	for (size_t i = 0; i < t->nslots; i++) {
		uint64_t w = __atomic_load_n(&t->slots[i].state, __ATOMIC_RELAXED);
		gens += w >> 2;
		busy += STATE(w) != FREE;
	}
	memset(st, 0, sizeof(*st));
	st->outliers = LD(&t->outliers);
	st->timeouts = LD(&t->timeouts);
	st->suppressed = LD(&t->suppressed);
	st->dropped = LD(&t->dropped);
	st->unmatched = LD(&t->unmatched);
	st->collected = LD(&t->collected);
	st->in_flight = busy;
	/* every in bumped one generation: it is in flight, timed out,
	 * collected, or paired (while threads run, a slot read before its
	 * counter was: clamped) */
	uint64_t other = st->timeouts + st->collected + busy;
	st->pairs = gens > other ? gens - other : 0;
}

struct trawl_tracker *trawl_tracker_new(const struct trawl_tracker_opts *o)
{
	if (!o || o->sz < sizeof(*o) || o->capacity > CAP_MAX) {
		errno = EINVAL;
		return NULL;
	}
	size_t cap = o->capacity ? o->capacity : CAP_DEFAULT;
	if (cap < CAP_MIN)
		cap = CAP_MIN;
	unsigned bits = 1;
	while ((1ull << bits) < 2 * cap)
		bits++;
	struct trawl_tracker *t = aligned_alloc(64, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	memset(t, 0, sizeof(*t));
	t->nslots = (size_t)1 << bits;
	t->mask = t->nslots - 1;
	t->shift = 64 - bits;
	t->slots = aligned_alloc(64, t->nslots * sizeof(struct slot));
	t->rule = strdup(o->rule ? o->rule : "track");
	if (!t->slots || !t->rule) {
		trawl_tracker_free(t);
		errno = ENOMEM;
		return NULL;
	}
	memset(t->slots, 0, t->nslots * sizeof(struct slot));
	/* the clock a session picks by default (TRAWL_UST_CLOCK_AUTO), so
	 * that the outliers' times are its events' */
	t->tsc = HAVE_TSC && tr_clocksource_is_tsc();
	t->per_ns = t->tsc_per_ns = 1ull << 32;
	if (HAVE_TSC) {
		/* a first measure over 1 ms (about 1e-4; poll refines it) */
		struct tr_clock_sample s1;
		tr_clock_sample(true, &t->s0);
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		tr_clock_sample(true, &s1);
		t->tsc_per_ns = tsc_rate(&t->s0, &s1);
		t->calib_ns = s1.mono - t->s0.mono;
		if (t->tsc)
			t->per_ns = t->tsc_per_ns;
	} else {
		tr_clock_sample(false, &t->s0);
	}
	t->gc = mul_q32(o->gc_ns ? o->gc_ns : GC_DEFAULT_NS, t->per_ns);
	if (o->rate) {
		t->interval = mul_q32(1000000000ull / o->rate, t->per_ns);
		t->tau = t->interval * (o->rate - 1);
	}
	t->cb = o->on_outlier;
	t->arg = o->arg;
	t->emit = o->emit_event;
	return t;
}

void trawl_tracker_free(struct trawl_tracker *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t->rule);
	free(t);
}
