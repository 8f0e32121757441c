/* SPDX-License-Identifier: MIT */
/*
 * lib/util/clock.h - reading the clocks, in one place: a clock id in ns,
 * CLOCK_MONOTONIC in ns and ms (deadlines, timeouts, the ring buffer's
 * reclaim clock), the TSC; and calibrating a trace's clock, shared by
 * lib/ust, lib/agent and lib/kern so that a node's user-space and kernel
 * traces declare the same clock: a (clock, monotonic, realtime) sample at
 * the start, another at the end, and the CTF clock made from the two.
 */
#ifndef TRAWL_UTIL_CLOCK_H
#define TRAWL_UTIL_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "trawl/ctf.h"
#include "internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

/* clock_gettime(id) in ns. */
static inline int64_t tr_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CLOCK_MONOTONIC in ns, in ms, and in seconds (timing a run). */
static inline uint64_t tr_mono_ns(void)
{
	return (uint64_t)tr_clock_ns(CLOCK_MONOTONIC);
}

static inline int64_t tr_mono_ms(void)
{
	return tr_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

static inline double tr_mono_s(void)
{
	return (double)tr_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

/* The TSC (CLOCK_MONOTONIC ns on machines without one). */
static inline uint64_t tr_tsc(void)
{
#if HAVE_TSC
	return __rdtsc();
#else
	return tr_mono_ns();
#endif
}

/* A trace's clock now: the TSC (tsc) or CLOCK_MONOTONIC ns. */
static inline uint64_t tr_clock_now(bool tsc)
{
	return tsc ? tr_tsc() : tr_mono_ns();
}

/* Is the kernel's clocksource the TSC (on x86; false elsewhere)? Then
 * trawl's clock is the TSC by default. TRAWL_CLOCKSOURCE=NAME overrides what
 * the kernel says (tests of the fallback on machines whose clocksource is
 * the TSC: TRAWL_CLOCKSOURCE=kvm-clock). */
TRAWL_HIDDEN bool tr_clocksource_is_tsc(void);

/*
 * This process's time namespace offset of CLOCK_MONOTONIC, in ns, into
 * *off: its CLOCK_MONOTONIC reads the kernel's (bpf_ktime_get_ns(),
 * ftrace's mono) plus this. 0 outside a time namespace or on a kernel
 * without them. Returns 0 or -errno (/proc/self/timens_offsets unreadable).
 */
TRAWL_HIDDEN int tr_timens_monotonic(int64_t *off);

/* A trace clock's reading with CLOCK_MONOTONIC and CLOCK_REALTIME around it. */
struct tr_clock_sample {
	uint64_t c;			/* the trace clock: TSC cycles or mono ns */
	int64_t mono, real;		/* CLOCK_MONOTONIC, CLOCK_REALTIME ns */
	int64_t width;			/* ns between the two mono reads around c */
};

/* A tight (clock, mono, real) triple: the tightest of 16 reads. */
TRAWL_HIDDEN void tr_clock_sample(bool tsc, struct tr_clock_sample *s);
/*
 * Fills the CTF clock of a trace recorded from sample s0 to sample s1
 * (NULL: to now): for the TSC, the frequency measured between them
 * (rounded to 1 kHz) and the offset of cycle 0 to the epoch; for mono,
 * 1 GHz and real - mono.
 */
TRAWL_HIDDEN void tr_clock_fill(bool tsc, const struct tr_clock_sample *s0,
				const struct tr_clock_sample *s1, struct trawl_ctf_clock *c);

#endif
