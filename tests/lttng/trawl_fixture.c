/* SPDX-License-Identifier: MIT */
/*
 * tests/lttng/trawl_fixture.c - an LTTng-UST instrumented program that
 * records reference traces for the format oracle tests.
 *
 * Usage: trawl-fixture [TICKS [THREADS]]
 * The main thread first emits every typed event with edge values (limits,
 * zero, negative, NaN and infinities, empty and tricky strings, enum values
 * with and without a label); then THREADS worker threads (default 4) emit
 * TICKS tick events in all (default 20000), mixed with typed events. At the
 * end it prints on stdout how many events of each name it emitted, and how
 * many of some string fields were empty (ground truth for empty strings):
 *   trawl_fixture:NAME COUNT
 *   empty EVENT.FIELD COUNT
 */
#define _GNU_SOURCE
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trawl_fixture_tp.h"

enum { E_INTS, E_NET, E_FLOATS, E_ENUMS, E_ARRAYS, E_STRINGS, E_EMPTY, E_TICK,
       Z_S, Z_T, Z_SEQ_TEXT, E_N };
static const char *const names[E_N] = {
	"ints", "net_ints", "floats", "enums", "arrays", "strings", "empty", "tick",
	"strings.s", "strings.t", "arrays.seq_text",
};

struct worker {
	pthread_t th;
	uint32_t id;
	uint64_t n;
	uint64_t count[E_N];
};

static const char *const tricky[] = {
	"",
	"plain",
	"say \"hi\"",
	"back\\slash",
	"new\nline",
	"tab\there, cr\rhere",
	"h\xc3\xa9llo w\xc3\xb6rld \xe2\x80\x94 \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac",
	"ctrl \x01\x1f\x7f end",
	"{ braces }, [brackets] = commas",
	"   leading and trailing spaces   ",
};
#define NTRICKY (sizeof(tricky) / sizeof(tricky[0]))

static void emit_ints(uint64_t *count, int64_t k)
{
	/* Unsigned arithmetic: wraps instead of overflowing. */
	uint64_t u = (uint64_t)k;
	uint64_t a = u * 257, b = u * 16843009u, c = u * UINT64_C(72340172838076673);
	uint64_t d = u * 3, e = u * 100003u, f = u * UINT64_C(1000000007);

	lttng_ust_tracepoint(trawl_fixture, ints, (int8_t)u, (uint8_t)u,
			     (int16_t)a, (uint16_t)a, (int32_t)b, (uint32_t)b,
			     (int64_t)c, c);
	lttng_ust_tracepoint(trawl_fixture, net_ints, (int16_t)d, (uint16_t)d,
			     (int32_t)e, (uint32_t)e, (int64_t)f, f);
	count[E_INTS]++;
	count[E_NET]++;
}

static void emit_arrays(uint64_t *count, int32_t k, unsigned seqlen)
{
	int32_t vals[4] = { k, (int32_t)(0u - (uint32_t)k), (int32_t)(INT32_MAX - (uint32_t)k),
			     (int32_t)((uint32_t)INT32_MIN + (uint32_t)k) };
	uint8_t bytes[4] = { (uint8_t)k, 0xff, 0x00, 0x80 };
	uint64_t big[4] = { (uint64_t)k, UINT64_MAX - (uint64_t)k, 1, 0x8000000000000000ULL };
	char text[8] = { 'a', 'b', 'c', (char)('0' + (k & 7)), 'e', 'f', 'g', 'h' };

	if (seqlen > 4)
		seqlen = 4;
	lttng_ust_tracepoint(trawl_fixture, arrays, vals, bytes, text, seqlen, big);
	count[E_ARRAYS]++;
	count[Z_SEQ_TEXT] += seqlen == 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char name[16];
	char msg[32];

	snprintf(name, sizeof(name), "fixture-w%u", w->id);
	pthread_setname_np(pthread_self(), name);
	for (uint64_t i = 0; i < w->n; i++) {
		snprintf(msg, sizeof(msg), "w%u #%" PRIu64, w->id, i);
		lttng_ust_tracepoint(trawl_fixture, tick, w->id, i,
				     (int64_t)(i * 2654435761u) - (int64_t)((uint64_t)w->id << 40), msg);
		w->count[E_TICK]++;
		switch (i % 101) {
		case 7:
			emit_ints(w->count, (int64_t)(i + w->id));
			break;
		case 31:
			lttng_ust_tracepoint(trawl_fixture, floats, (float)i / 7.0f, (double)i / -3.0);
			w->count[E_FLOATS]++;
			break;
		case 53:
			lttng_ust_tracepoint(trawl_fixture, enums, (int)(i % 32), (int32_t)(i % 40) - 20,
					     (uint64_t)i);
			w->count[E_ENUMS]++;
			break;
		case 71:
			emit_arrays(w->count, (int32_t)i, (unsigned)(i % 5));
			break;
		case 89:
			lttng_ust_tracepoint(trawl_fixture, strings, tricky[i % NTRICKY], msg);
			w->count[E_STRINGS]++;
			w->count[Z_S] += tricky[i % NTRICKY][0] == '\0';
			break;
		case 97:
			lttng_ust_tracepoint(trawl_fixture, empty);
			w->count[E_EMPTY]++;
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t ticks = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
	unsigned nthreads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 4;
	uint64_t total[E_N] = { 0 };
	struct worker *ws;

	if (nthreads == 0)
		nthreads = 1;

	/* Edge values, from the main thread. */
	static const int64_t ik[] = { 0, 1, -1, 127, -128, 255, 32767, -32768, 65535,
				      INT32_MAX, INT32_MIN, UINT32_MAX, INT64_MAX, INT64_MIN };
	for (size_t i = 0; i < sizeof(ik) / sizeof(ik[0]); i++)
		emit_ints(total, ik[i]);
	lttng_ust_tracepoint(trawl_fixture, ints, INT8_MIN, UINT8_MAX, INT16_MIN, UINT16_MAX,
			     INT32_MIN, UINT32_MAX, INT64_MIN, UINT64_MAX);
	lttng_ust_tracepoint(trawl_fixture, ints, INT8_MAX, 0, INT16_MAX, 0, INT32_MAX, 0,
			     INT64_MAX, 0);
	lttng_ust_tracepoint(trawl_fixture, net_ints, INT16_MIN, UINT16_MAX, INT32_MIN,
			     UINT32_MAX, INT64_MIN, UINT64_MAX);
	total[E_INTS] += 2;
	total[E_NET]++;

	static const double dv[] = { 0.0, -0.0, 1.0, -1.5, 3.141592653589793, 1e-300, 1e300,
				     DBL_MAX, DBL_MIN, 4.9e-324, 123456789.125, 0.1, 1e21, 1e-5 };
	for (size_t i = 0; i < sizeof(dv) / sizeof(dv[0]); i++) {
		lttng_ust_tracepoint(trawl_fixture, floats, (float)dv[i], dv[i]);
		total[E_FLOATS]++;
	}
	lttng_ust_tracepoint(trawl_fixture, floats, FLT_MAX, INFINITY);
	lttng_ust_tracepoint(trawl_fixture, floats, FLT_MIN, -INFINITY);
	lttng_ust_tracepoint(trawl_fixture, floats, 1e-45f, NAN);
	lttng_ust_tracepoint(trawl_fixture, floats, INFINITY, 2.5);
	total[E_FLOATS] += 4;

	/* Enums: labelled values, ranges, overlapping ranges, no label. */
	static const int colors[] = { 0, 1, 2, 3, 10, 15, 19, 20, 29, 30, 31, 99, 100, -1 };
	static const int32_t states[] = { -1000, -1001, -1, 0, 1, 5, 9, 10, 15, 16,
					  INT32_MAX, INT32_MIN, 100, -5 };
	static const uint64_t flags[] = { 0, 1, 2, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
					  UINT64_MAX, 42, 1, 0, 3, 7, 0x8000000000000001ULL, 5, 6 };
	for (size_t i = 0; i < sizeof(colors) / sizeof(colors[0]); i++) {
		lttng_ust_tracepoint(trawl_fixture, enums, colors[i], states[i], flags[i]);
		total[E_ENUMS]++;
	}

	for (unsigned i = 0; i <= 4; i++)
		emit_arrays(total, (int32_t)i * 1000 - 1, i);
	{
		/* A text array with an embedded NUL and non-ASCII bytes. */
		int32_t vals[4] = { 0, 0, 0, 0 };
		uint8_t bytes[4] = { 0, 0, 0, 0 };
		uint64_t big[4] = { 0, 0, 0, 0 };
		char text[8] = { 'x', 'y', '\0', 'z', '"', '\\', '\xc3', '\xa9' };
		char full[8] = { '\xc3', '\xa9', '\n', '"', '\\', 't', 'a', 'b' };

		lttng_ust_tracepoint(trawl_fixture, arrays, vals, bytes, text, 4, big);
		lttng_ust_tracepoint(trawl_fixture, arrays, vals, bytes, full, 4, big);
		total[E_ARRAYS] += 2;
	}

	for (size_t i = 0; i < NTRICKY; i++) {
		lttng_ust_tracepoint(trawl_fixture, strings, tricky[i], tricky[NTRICKY - 1 - i]);
		total[E_STRINGS]++;
		total[Z_S] += tricky[i][0] == '\0';
		total[Z_T] += tricky[NTRICKY - 1 - i][0] == '\0';
	}
	lttng_ust_tracepoint(trawl_fixture, empty);
	total[E_EMPTY]++;

	ws = calloc(nthreads, sizeof(*ws));
	if (!ws)
		return 1;
	for (unsigned i = 0; i < nthreads; i++) {
		ws[i].id = i;
		ws[i].n = ticks / nthreads + (i < ticks % nthreads);
		if (pthread_create(&ws[i].th, NULL, work, &ws[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(ws[i].th, NULL);
		for (int e = 0; e < E_N; e++)
			total[e] += ws[i].count[e];
	}
	free(ws);
	for (int e = 0; e < E_N; e++)
		printf("%s%s %" PRIu64 "\n", e < Z_S ? "trawl_fixture:" : "empty ", names[e], total[e]);
	return 0;
}
