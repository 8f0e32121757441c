/* SPDX-License-Identifier: MIT */
/*
 * trawl/track.h - a latency tracker for applications: pair the start and
 * the end of an operation by a key, and hear of the outliers only, those
 * that took longer than their threshold or whose end never came.
 *
 *   struct trawl_tracker_opts o = { .sz = sizeof(o), .rule = "rpc",
 *                                   .capacity = 4096, .emit_event = true,
 *                                   .rate = 100 };
 *   struct trawl_tracker *t = trawl_tracker_new(&o);
 *   trawl_tracker_in(t, req->id, 20 * 1000000, 1000000000);  // 20 ms, 1 s
 *   ...                                                 // any thread:
 *   if (trawl_tracker_out(t, req->id)) ...               // it was slow
 *   trawl_tracker_poll(t);                  // now and then: the timeouts
 *
 * in and out take no lock, allocate nothing and make no system call (one
 * clock read and one compare-and-swap each, docs/track.md); they may be
 * called from any thread, the out of a key on another thread than its in.
 * They are not async-signal-safe. An outlier (reported within the rate
 * limit) calls the callback, in the thread that called out (or poll, for
 * a timeout), and with emit_event writes the event
 *
 *   trawl_track:outlier { rule, key, start, end, duration_ns, threshold_ns,
 *                         timeout }
 *
 * into the application's trawl trace when a session (trawl record, the
 * agent's sessions) enables it, on the clock of the trace's other events.
 */
#ifndef TRAWL_TRACK_H
#define TRAWL_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* One outlier, as the callback sees it (valid during the call). */
struct trawl_outlier {
	const char *rule;		/* trawl_tracker_opts.rule */
	uint64_t key;
	/* trawl's clock: TSC cycles where the kernel's clocksource is the
	 * TSC, else CLOCK_MONOTONIC ns (the clock of trawl's traces by
	 * default); end: the out, or for a timeout the poll that found it */
	uint64_t start, end;
	uint64_t duration_ns;		/* end - start, in ns */
	uint64_t threshold_ns;		/* the key's threshold, as given to in */
	bool timeout;			/* no out within the key's timeout */
};

struct trawl_tracker_opts {
	size_t sz;			/* sizeof(struct trawl_tracker_opts) */
	const char *rule;		/* name in the outliers (copied); NULL: "track" */
	/* keys in flight at once: rounded up to a power of two, default
	 * 4096, at least 8, at most 2^24; the table has twice as many slots
	 * (64 bytes each): an in is dropped when the 16 slots of its key's
	 * neighbourhood are in flight, with random keys only once about
	 * this many are (docs/track.md) */
	size_t capacity;
	void (*on_outlier)(const struct trawl_outlier *o, void *arg);	/* or NULL */
	void *arg;
	/* outliers reported per second (token bucket of as many tokens);
	 * the others are counted (stats.suppressed). 0: no limit */
	unsigned rate;
	bool emit_event;		/* write trawl_track:outlier into the trace */
	/* a key in without a timeout whose out never came is forgotten by
	 * poll after this (stats.collected, no outlier); 0: 60 s */
	uint64_t gc_ns;
};

/* Counters; exact when no thread is in in, out or poll. */
struct trawl_tracker_stats {
	uint64_t pairs;			/* outs that matched an in */
	uint64_t outliers;		/* of them, over their threshold */
	uint64_t timeouts;		/* keys whose out did not come in time */
	uint64_t suppressed;		/* outliers and timeouts over the rate */
	uint64_t dropped;		/* ins that found the table full */
	uint64_t unmatched;		/* outs of no key in flight */
	uint64_t collected;		/* keys without timeout forgotten (gc_ns) */
	uint64_t in_flight;		/* keys in, not yet out */
};

struct trawl_tracker;

/*
 * A tracker (all its memory allocated here). NULL with errno: EINVAL (bad
 * options), ENOMEM. Takes about a millisecond: it measures the TSC's
 * frequency (poll refines it).
 */
struct trawl_tracker *trawl_tracker_new(const struct trawl_tracker_opts *o);
/*
 * The start of key: its end must come within threshold_ns (else an
 * outlier) and within timeout_ns (else, at the next poll after it, an
 * outlier of kind timeout; 0: no timeout). A key already in flight may go
 * in again: each out then ends one of them. Returns false when the table
 * is full (counted in stats.dropped; its out will be unmatched).
 */
bool trawl_tracker_in(struct trawl_tracker *t, uint64_t key, uint64_t threshold_ns,
		      uint64_t timeout_ns);
/* The end of key: true when it was an outlier (reported or suppressed);
 * an out of no key in flight (timed out, dropped, never in) is counted in
 * stats.unmatched. */
bool trawl_tracker_out(struct trawl_tracker *t, uint64_t key);
/*
 * Fires the timeouts: every key in flight past its timeout becomes an
 * outlier of kind timeout, once, and leaves the table (its late out is
 * unmatched); keys without timeout are forgotten after gc_ns. Call it
 * from one thread or several, as often as timeouts should be noticed (its
 * cost: a pass over the table). Returns the timeouts fired.
 */
size_t trawl_tracker_poll(struct trawl_tracker *t);
void trawl_tracker_stats(const struct trawl_tracker *t, struct trawl_tracker_stats *st);
/* Frees t; no thread may be using it. */
void trawl_tracker_free(struct trawl_tracker *t);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
