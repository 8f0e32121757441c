/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/clock.c - the kernel trace's clock. With the TSC clocksource,
 * ftrace's x86-tsc clock is the raw rdtsc value, the very value lib/ust
 * stamps user-space events with; the CTF clock then declares the frequency
 * measured over the recording and the epoch offset of cycle 0, computed as
 * lib/ust does (clock_sample/clock_fill in lib/ust/ust.c), so that a node's
 * kernel and user-space events land on one timeline. Otherwise ftrace's
 * mono clock is CLOCK_MONOTONIC, declared at 1 GHz with real - mono.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#include "internal.h"	/* tr_clock_ns */
#include "kern/krec.h"

uint64_t krec_clock_now(bool tsc)
{
#if HAVE_TSC
	if (tsc)
		return __rdtsc();
#endif
	return (uint64_t)tr_clock_ns(CLOCK_MONOTONIC);
}

void krec_clock_sample(bool tsc, struct krec_clock_sample *s)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 16; i++) {
		int64_t m1 = tr_clock_ns(CLOCK_MONOTONIC);
		uint64_t cc = tsc ? krec_clock_now(true) : 0;
		int64_t r = tr_clock_ns(CLOCK_REALTIME);
		int64_t m2 = tr_clock_ns(CLOCK_MONOTONIC);
		if (m2 - m1 < best) {
			best = m2 - m1;
			s->mono = m1 + (m2 - m1) / 2;
			s->c = tsc ? cc : (uint64_t)s->mono;
			s->real = r;
		}
	}
}

void krec_clock_fill(bool tsc, const struct krec_clock_sample *s0,
		     const struct krec_clock_sample *s1, struct trawl_ctf_clock *c)
{
	if (!tsc) {
		int64_t off = s0->real - s0->mono;
		c->freq = 1000000000;
		c->offset_s = off / 1000000000;
		c->offset = off % 1000000000;
		return;
	}
	uint64_t freq = 1000000000;
	if (s1->mono > s0->mono && s1->c > s0->c)
		freq = (uint64_t)((__int128)(s1->c - s0->c) * 1000000000 / (s1->mono - s0->mono));
	/* rounded to 1 kHz, as lib/ust: the measurement is no better */
	freq = (freq + 500) / 1000 * 1000;
	c->freq = freq;
	c->description = "x86 TSC, frequency measured over the session";
	/* epoch ns of cycle 0 = real0 - c0 / freq */
	__int128 off = (__int128)s0->real - (__int128)s0->c * 1000000000 / freq;
	int64_t o = (int64_t)off;
	int64_t os = o / 1000000000, rem = o % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		os--;
	}
	c->offset_s = os;
	c->offset = (int64_t)((__int128)rem * freq / 1000000000);
}
