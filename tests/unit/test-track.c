/* SPDX-License-Identifier: MIT */
/*
 * test-track: the application latency tracker (trawl/track.h). Exactly the
 * injected outliers fire, with their keys and durations; timeouts fire
 * once, from poll, and the late out is unmatched; keys without a timeout
 * are collected; a full table drops and counts without losing what it
 * holds; the rate limit suppresses and counts, and refills; under threads
 * (disjoint keys, a shared key space, ins and outs of the same keys on
 * different threads racing a poller) every in is accounted for once.
 */
#include "trawl/track.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "tap.h"
#include "util/clock.h"

#define MS 1000000ull

/* what the callback saw */
#define MAXSEEN 4096
static struct trawl_outlier seen[MAXSEEN];
static atomic_size_t nseen;

static void on_outlier(const struct trawl_outlier *o, void *arg)
{
	size_t i = atomic_fetch_add(&nseen, 1);
	if (i < MAXSEEN)
		seen[i] = *o;
	if (arg)
		atomic_fetch_add((atomic_size_t *)arg, 1);
}

static void spin_ns(uint64_t ns)
{
	uint64_t t0 = tr_mono_ns();
	while (tr_mono_ns() - t0 < ns)
		;
}

static void sleep_ns(uint64_t ns)
{
	nanosleep(&(struct timespec){ .tv_sec = (time_t)(ns / 1000000000),
				      .tv_nsec = (long)(ns % 1000000000) }, NULL);
}

static struct trawl_tracker *tracker(size_t cap, unsigned rate, uint64_t gc_ns)
{
	struct trawl_tracker_opts o = { .sz = sizeof(o), .rule = "test", .capacity = cap,
					.on_outlier = on_outlier, .rate = rate, .gc_ns = gc_ns };
	atomic_store(&nseen, 0);
	return trawl_tracker_new(&o);
}

static void test_options(void)
{
	struct trawl_tracker_opts o = { .sz = sizeof(o) - 1 };
	errno = 0;
	ok(!trawl_tracker_new(&o) && errno == EINVAL, "options of a smaller size: EINVAL");
	o.sz = sizeof(o);
	o.capacity = (1u << 24) + 1;
	errno = 0;
	ok(!trawl_tracker_new(&o) && errno == EINVAL, "capacity over 2^24: EINVAL");
	errno = 0;
	ok(!trawl_tracker_new(NULL) && errno == EINVAL, "no options: EINVAL");
	o.capacity = 0;
	struct trawl_tracker *t = trawl_tracker_new(&o);
	ok(t != NULL, "defaults: a tracker");
	ok(trawl_tracker_in(t, 7, MS, 0) && !trawl_tracker_out(t, 7),
	   "defaults: a quick pair is no outlier (no callback, no event)");
	trawl_tracker_free(t);
}

/* 1000 pairs under their threshold (1 s) and K over theirs (1 ms, held
 * 3 ms): exactly K outliers, with their keys, in order */
static void test_exact(void)
{
	enum { N = 1000, K = 7 };
	const uint64_t inject[K] = { 3, 150, 151, 400, 777, 998, 999 };
	struct trawl_tracker *t = tracker(64, 0, 0);
	size_t k = 0, returned = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t key = 0xabc0000000 + i;
		if (k < K && inject[k] == i) {
			trawl_tracker_in(t, key, MS, 0);
			spin_ns(3 * MS);
			k++;
		} else {
			trawl_tracker_in(t, key, 1000 * MS, 0);
		}
		returned += trawl_tracker_out(t, key);
	}
	struct trawl_tracker_stats st;
	trawl_tracker_stats(t, &st);
	is_int(atomic_load(&nseen), K, "exactly the %d injected outliers called back", K);
	is_int(returned, K, "out returned true for them only");
	is_int(st.pairs, N, "stats: %d pairs", N);
	is_int(st.outliers, K, "stats: %d outliers", K);
	ok(st.timeouts + st.suppressed + st.dropped + st.unmatched + st.in_flight == 0,
	   "stats: nothing else");
	int keys = 1, durs = 1, fields = 1;
	for (size_t i = 0; i < K && i < atomic_load(&nseen); i++) {
		keys &= seen[i].key == 0xabc0000000 + inject[i];
		/* held 3 ms by CLOCK_MONOTONIC: the TSC's measure of it agrees to
		 * well within 10 % (its frequency is known to about 1e-4) */
		durs &= seen[i].duration_ns >= MS && seen[i].duration_ns >= 27 * MS / 10;
		fields &= !seen[i].timeout && seen[i].threshold_ns == MS &&
			  seen[i].end > seen[i].start && !strcmp(seen[i].rule, "test");
	}
	ok(keys, "the outliers' keys are the injected ones, in order");
	ok(durs, "their durations are over the threshold and the time held (3 ms)");
	ok(fields, "rule, threshold, start < end, not a timeout");
	trawl_tracker_free(t);
}

static void test_timeout(void)
{
	struct trawl_tracker *t = tracker(64, 0, 10 * MS);
	uint64_t t0 = tr_mono_ns();
	for (uint64_t k = 1; k <= 3; k++)
		trawl_tracker_in(t, k, 1000 * MS, 20 * MS);
	trawl_tracker_in(t, 4, 1000 * MS, 100000 * MS);	/* its timeout far off */
	trawl_tracker_in(t, 5, 1000 * MS, 0);		/* none: collected after 10 ms */
	size_t early = trawl_tracker_poll(t);
	/* a loaded machine may have descheduled this thread past the 20 ms:
	 * only a poll known to come before them must find nothing */
	if (tr_mono_ns() - t0 < 20 * MS)
		is_int(early, 0, "poll before the timeouts: nothing fires");
	else
		skip("this thread was held %.1f ms before its first poll (timeouts 20 ms)",
		     (double)(tr_mono_ns() - t0) / 1e6);
	sleep_ns(30 * MS);
	is_int(early + trawl_tracker_poll(t), 3, "poll after 20 ms: the 3 keys time out");
	is_int(trawl_tracker_poll(t), 0, "poll again: they do not fire twice");
	is_int(atomic_load(&nseen), 3, "3 callbacks");
	int good = 1;
	for (size_t i = 0; i < 3; i++)
		good &= seen[i].timeout && seen[i].key >= 1 && seen[i].key <= 3 &&
			seen[i].duration_ns >= 20 * MS;
	ok(good, "of kind timeout, keys 1-3, durations >= the timeout (20 ms)");
	size_t late = 0;
	for (uint64_t k = 1; k <= 3; k++)
		late += trawl_tracker_out(t, k);
	is_int(late, 0, "their late outs are no outliers");
	ok(!trawl_tracker_out(t, 4), "key 4 (timeout not reached) pairs");
	struct trawl_tracker_stats st;
	trawl_tracker_stats(t, &st);
	is_int(st.unmatched, 3, "the 3 late outs are unmatched");
	is_int(st.timeouts, 3, "stats: 3 timeouts");
	is_int(st.pairs, 1, "stats: 1 pair (key 4)");
	is_int(st.collected, 1, "key 5 (no timeout) collected after gc_ns, silently");
	is_int(st.in_flight, 0, "nothing in flight");
	ok(!trawl_tracker_out(t, 5) && atomic_load(&nseen) == 3,
	   "the collected key's out: unmatched, no outlier");
	trawl_tracker_free(t);
}

static void test_full(void)
{
	enum { CAP = 64, MORE = 1000 };
	struct trawl_tracker *t = tracker(CAP, 0, 0);
	uint64_t rnd = 0x1234567, keys[CAP + MORE];
	size_t in = 0;
	for (size_t i = 0; i < CAP + MORE; i++) {
		keys[i] = tap_xorshift(&rnd);
		bool r = trawl_tracker_in(t, keys[i], 1000 * MS, 0);
		in += r;
		if (i == CAP - 1)
			is_int(in, CAP, "capacity (%d) random keys all fit", CAP);
	}
	struct trawl_tracker_stats st;
	trawl_tracker_stats(t, &st);
	ok(in >= CAP && in <= 2 * CAP, "then the table fills (%zu in of %d)", in, CAP + MORE);
	is_int(st.dropped, CAP + MORE - in, "every other in dropped and counted");
	is_int(st.in_flight, in, "in flight: those that went in");
	size_t outliers = 0;
	for (size_t i = 0; i < CAP + MORE; i++)
		outliers += trawl_tracker_out(t, keys[i]);
	trawl_tracker_stats(t, &st);
	is_int(st.pairs, in, "each key that went in pairs with its out (no corruption)");
	is_int(st.unmatched, CAP + MORE - in, "the dropped keys' outs are unmatched");
	ok(outliers == 0 && st.in_flight == 0, "no outlier, the table empty again");
	size_t again = 0;
	for (size_t i = 0; i < CAP; i++)
		again += trawl_tracker_in(t, keys[i], 1000 * MS, 0);
	is_int(again, CAP, "and usable: %d keys fit again", CAP);
	trawl_tracker_free(t);
}

static void test_rate(void)
{
	enum { RATE = 5, N = 50 };
	struct trawl_tracker *t = tracker(64, RATE, 0);
	uint64_t t0 = tr_mono_ns();
	size_t returned = 0;
	/* threshold 0: any pair that lasts is an outlier */
	for (uint64_t k = 0; k < N; k++) {
		trawl_tracker_in(t, k, 0, 0);
		spin_ns(1000);
		returned += trawl_tracker_out(t, k);
	}
	double el = (double)(tr_mono_ns() - t0) / 1e9;
	struct trawl_tracker_stats st;
	trawl_tracker_stats(t, &st);
	size_t cb = atomic_load(&nseen);
	is_int(returned, N, "every pair over threshold 0 is an outlier (out says so)");
	is_int(st.outliers, N, "stats: %d outliers", N);
	/* a bucket of RATE tokens, one more per 1/RATE s the burst took */
	ok(cb >= RATE && cb <= RATE + (size_t)(el * RATE),
	   "%zu reported in %.3f s at %d/s (a bucket of %d)", cb, el, RATE, RATE);
	is_int(st.suppressed, N - cb, "the others suppressed and counted");
	/* 1.25 intervals later: one token */
	sleep_ns(1000000000ull / RATE * 5 / 4);
	for (uint64_t k = N; k < N + 2; k++) {
		trawl_tracker_in(t, k, 0, 0);
		spin_ns(1000);
		trawl_tracker_out(t, k);
	}
	ok(atomic_load(&nseen) >= cb + 1, "the bucket refills: the next outlier reported");
	trawl_tracker_stats(t, &st);
	is_int(atomic_load(&nseen) + st.suppressed, N + 2, "reported + suppressed = outliers");
	trawl_tracker_free(t);
}

/* ---- threads */

enum { TH = 4, PER = 100000, SHARED = 64, HAND = 100000 };
static struct trawl_tracker *st_t;
static atomic_size_t ins_ok, ins_no, outs, outs_true;

static void *disjoint(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg << 40;
	for (uint64_t i = 0; i < PER; i++) {
		atomic_fetch_add(trawl_tracker_in(st_t, base + (i & 31), 1000 * MS, 0) ? &ins_ok : &ins_no, 1);
		if (i & 1)	/* keys in flight two by two, then out */
			for (uint64_t j = i - 1; j <= i; j++) {
				atomic_fetch_add(&outs, 1);
				atomic_fetch_add(&outs_true, trawl_tracker_out(st_t, base + (j & 31)));
			}
	}
	return NULL;
}

static void *shared(void *arg)
{
	uint64_t rnd = 0x9e37 + (uintptr_t)arg;
	for (uint64_t i = 0; i < PER; i++) {
		uint64_t k = tap_xorshift(&rnd) % SHARED;
		if (tap_xorshift(&rnd) & 1) {
			atomic_fetch_add(trawl_tracker_in(st_t, k, 1000 * MS, 0) ? &ins_ok : &ins_no, 1);
		} else {
			atomic_fetch_add(&outs, 1);
			atomic_fetch_add(&outs_true, trawl_tracker_out(st_t, k));
		}
	}
	return NULL;
}

/* a single-producer single-consumer ring of keys: in on one thread, out of
 * the same key on another */
static uint64_t ring[1024];
static atomic_size_t head, tail;
static atomic_int hand_done;
static struct trawl_tracker *hand_t;

static void *hand_in(void *arg)
{
	for (uint64_t k = 1; k <= HAND; k++) {
		while (atomic_load_explicit(&head, memory_order_relaxed) -
			       atomic_load_explicit(&tail, memory_order_acquire) == 1024)
			;
		/* odd keys time out after 1 us: poll races their outs */
		trawl_tracker_in(hand_t, k, 1000 * MS, k & 1 ? 1000 : 0);
		ring[head % 1024] = k;
		atomic_fetch_add_explicit(&head, 1, memory_order_release);
	}
	return NULL;
}

static void *hand_out(void *arg)
{
	for (size_t n = 0; n < HAND; n++) {
		while (atomic_load_explicit(&tail, memory_order_relaxed) ==
		       atomic_load_explicit(&head, memory_order_acquire))
			;
		uint64_t k = ring[tail % 1024];
		atomic_fetch_add_explicit(&tail, 1, memory_order_release);
		trawl_tracker_out(hand_t, k);
	}
	atomic_store(&hand_done, 1);
	return NULL;
}

static void *poller(void *arg)
{
	while (!atomic_load(&hand_done)) {
		trawl_tracker_poll(hand_t);
		trawl_tracker_poll(st_t);
	}
	return NULL;
}

static void test_threads(void)
{
	atomic_size_t hand_cb = 0;
	struct trawl_tracker_opts o = { .sz = sizeof(o), .capacity = 4 * TH * 32 };
	st_t = trawl_tracker_new(&o);
	o.capacity = 1024;
	o.on_outlier = on_outlier;
	o.arg = &hand_cb;
	hand_t = trawl_tracker_new(&o);
	atomic_store(&nseen, 0);
	pthread_t th[2 * TH + 3];
	for (int i = 0; i < TH; i++) {
		pthread_create(&th[i], NULL, disjoint, (void *)(uintptr_t)(i + 1));
		pthread_create(&th[TH + i], NULL, shared, (void *)(uintptr_t)i);
	}
	pthread_create(&th[2 * TH], NULL, hand_in, NULL);
	pthread_create(&th[2 * TH + 1], NULL, hand_out, NULL);
	pthread_create(&th[2 * TH + 2], NULL, poller, NULL);
	for (int i = 0; i < 2 * TH + 3; i++)
		pthread_join(th[i], NULL);
	struct trawl_tracker_stats st;
	trawl_tracker_stats(st_t, &st);
	is_int(st.pairs + st.in_flight, atomic_load(&ins_ok),
	       "disjoint + shared keys: every in that went in paired or is in flight");
	is_int(st.pairs + st.unmatched, atomic_load(&outs), "every out paired or is unmatched");
	is_int(st.dropped, atomic_load(&ins_no), "every in that did not is counted dropped");
	ok(st.outliers == atomic_load(&outs_true) && st.outliers == 0 && st.timeouts == 0,
	   "no outlier, no timeout (threshold 1 s, no timeout)");
	ok(st.pairs >= (uint64_t)TH * PER, "at least the disjoint keys' %d pairs (%llu)",
	   TH * PER, (unsigned long long)st.pairs);
	trawl_tracker_stats(hand_t, &st);
	is_int(st.pairs + st.timeouts, HAND,
	       "in and out on two threads, a poller racing: each key paired or timed out, once");
	is_int(st.unmatched, st.timeouts, "each timed-out key's late out unmatched");
	is_int(atomic_load(&hand_cb), st.timeouts, "a callback per timeout");
	ok(st.dropped == 0 && st.in_flight == 0 && st.outliers == 0,
	   "nothing dropped, in flight or over threshold (%llu timeouts)",
	   (unsigned long long)st.timeouts);
	trawl_tracker_free(st_t);
	trawl_tracker_free(hand_t);
}

int main(void)
{
	test_options();
	test_exact();
	test_timeout();
	test_full();
	test_rate();
	test_threads();
	return done_testing();
}
