/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/clock.c - the clock of user-space traces: the TSC when the
 * session uses it, else CLOCK_MONOTONIC (ust_clock_now(), read per event,
 * is inline in ust-internal.h); the (clock, monotonic, realtime) sample
 * taken at start, and the CTF clock declaration made from it at stop
 * (frequency measured over the session, offset to the epoch).
 */
#include <time.h>

#include "ust-private.h"

/* The session's clock is the TSC: read per event (ust_clock_now). */
int tr_ust_use_tsc;

static int64_t ns_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The TSC itself, whatever this process's own tracing uses (the agent
 * samples it for the applications' traces without tracing itself). */
static inline uint64_t tsc_now(void)
{
#if HAVE_TSC
	return __rdtsc();
#else
	return ust_now_ns();
#endif
}

/* A (clock, CLOCK_MONOTONIC, CLOCK_REALTIME) triple: the tightest of a few. */
void ust_clock_sample(bool tsc, uint64_t *c, int64_t *mono, int64_t *real)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 16; i++) {
		int64_t m1 = ns_of(CLOCK_MONOTONIC);
		uint64_t cc = tsc ? tsc_now() : (uint64_t)0;
		int64_t r = ns_of(CLOCK_REALTIME);
		int64_t m2 = ns_of(CLOCK_MONOTONIC);
		if (m2 - m1 < best) {
			best = m2 - m1;
			*mono = m1 + (m2 - m1) / 2;
			*c = tsc ? cc : (uint64_t)*mono;
			*real = r;
		}
	}
}

void ust_clock_fill(struct trawl_ctf_trace *t, bool tsc, uint64_t c0, int64_t mono0, int64_t real0)
{
	struct trawl_ctf_clock *c = &t->clocks[0];
	uint64_t c1;
	int64_t m1, r1;
	if (!tsc) {
		int64_t off = real0 - mono0;
		c->freq = 1000000000;
		c->offset_s = off / 1000000000;
		c->offset = off % 1000000000;
		return;
	}
	ust_clock_sample(true, &c1, &m1, &r1);
	uint64_t freq = 1000000000;
	if (m1 > mono0 && c1 > c0)
		freq = (uint64_t)((__int128)(c1 - c0) * 1000000000 / (m1 - mono0));
	/* round to 1 kHz: the measurement is no better over short sessions */
	freq = (freq + 500) / 1000 * 1000;
	c->freq = freq;
	c->description = "x86 TSC, frequency measured over the session";
	/* epoch ns of cycle 0 = real0 - c0 / freq */
	__int128 off = (__int128)real0 - (__int128)c0 * 1000000000 / freq;
	int64_t o = (int64_t)off;
	int64_t os = o / 1000000000, rem = o % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		os--;
	}
	c->offset_s = os;
	c->offset = (int64_t)((__int128)rem * freq / 1000000000);
}
