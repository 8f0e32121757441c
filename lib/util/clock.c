/* SPDX-License-Identifier: MIT */
/*
 * lib/util/clock.c - the clocks (clock.h): which clocksource the kernel
 * uses, the time namespace's offset, and calibrating a trace's clock.
 *
 * With the TSC clocksource, ftrace's x86-tsc clock is the raw rdtsc value,
 * the very value lib/ust stamps user-space events with; both traces then
 * declare the frequency measured over the recording and the epoch offset
 * of cycle 0, computed here, so that a node's kernel and user-space events
 * land on one timeline. Otherwise the clock is CLOCK_MONOTONIC, declared
 * at 1 GHz with real - mono.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "util/clock.h"

bool tr_clocksource_is_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char buf[32] = "";
	const char *env = secure_getenv("TRAWL_CLOCKSOURCE");
	if (env) {
		snprintf(buf, sizeof(buf), "%s", env);
	} else {
		int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			      O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return false;
		buf[n] = 0;
	}
	buf[strcspn(buf, "\n")] = 0;
	return strcmp(buf, "tsc") == 0;
#else
	return false;
#endif
}

int tr_timens_monotonic(int64_t *off)
{
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	char name[32];
	long long s, ns;

	*off = 0;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	/* "monotonic S NS" (older kernels: the clock id, 1) */
	while (fscanf(f, "%31s %lld %lld", name, &s, &ns) == 3) {
		if (!strcmp(name, "monotonic") || !strcmp(name, "1")) {
			*off = (int64_t)s * 1000000000 + ns;
			break;
		}
	}
	fclose(f);
	return 0;
}

void tr_clock_sample(bool tsc, struct tr_clock_sample *s)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 16; i++) {
		int64_t m1 = tr_clock_ns(CLOCK_MONOTONIC);
		uint64_t cc = tsc ? tr_tsc() : 0;
		int64_t r = tr_clock_ns(CLOCK_REALTIME);
		int64_t m2 = tr_clock_ns(CLOCK_MONOTONIC);
		if (m2 - m1 < best) {
			best = m2 - m1;
			s->mono = m1 + (m2 - m1) / 2;
			s->c = tsc ? cc : (uint64_t)s->mono;
			s->real = r;
			s->width = best;
		}
	}
}

void tr_clock_fill(bool tsc, const struct tr_clock_sample *s0,
		   const struct tr_clock_sample *s1, struct trawl_ctf_clock *c)
{
	struct tr_clock_sample now;
	if (!tsc) {
		int64_t off = s0->real - s0->mono;
		c->freq = 1000000000;
		c->offset_s = off / 1000000000;
		c->offset = off % 1000000000;
		return;
	}
	if (!s1) {
		tr_clock_sample(true, &now);
		s1 = &now;
	}
	uint64_t freq = 1000000000;
	if (s1->mono > s0->mono && s1->c > s0->c)
		freq = (uint64_t)((__int128)(s1->c - s0->c) * 1000000000 / (s1->mono - s0->mono));
	/* round to 1 kHz: the measurement is no better over short sessions */
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
