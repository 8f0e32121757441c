/* SPDX-License-Identifier: MIT */
/*
 * hello: user-space tracepoints of every field type, recorded by an
 * in-process session into a CTF trace.
 *
 *   hello [TRACE-DIR [OPTION...]]   (default: ./hello-trace)
 *     options: monotonic (clock), fixed (u16 id + u64 ts event header), threads
 *   trawl print TRACE-DIR    (or babeltrace2 TRACE-DIR)
 *
 * In a real program the TRAWL_TRACEPOINT_EVENT declarations live in a
 * header included wherever events are emitted, and exactly one .c file
 * defines TRAWL_TRACEPOINT_DEFINE before including it.
 */
#define TRAWL_TRACEPOINT_DEFINE
#include <trawl/tracepoint.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

TRAWL_ENUM(hello, color,
	TRAWL_ENUM_VALUE("red", 0)
	TRAWL_ENUM_VALUE("green", 1)
	TRAWL_ENUM_RANGE("other", 2, 255))

TRAWL_TRACEPOINT_EVENT(hello, greeting, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t seq, int32_t status, const char *who),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(uint64_t, seq, seq)
		TRAWL_FIELD_INT(int32_t, status, status)
		TRAWL_FIELD_STRING(who, who)))

TRAWL_TRACEPOINT_EVENT(hello, types, TRAWL_LOGLEVEL_DEBUG,
	TRAWL_ARGS(int8_t a, uint16_t b, int64_t c, uint32_t flags, float f, double d,
		   int color, const void *bytes, size_t nbytes, const int16_t *arr),
	TRAWL_FIELDS(
		TRAWL_FIELD_INT(int8_t, a, a)
		TRAWL_FIELD_INT(uint16_t, b, b)
		TRAWL_FIELD_INT(int64_t, c, c)
		TRAWL_FIELD_HEX(uint32_t, flags, flags)
		TRAWL_FIELD_FLOAT(float, f, f)
		TRAWL_FIELD_FLOAT(double, d, d)
		TRAWL_FIELD_ENUM(hello, color, uint8_t, color, color)
		TRAWL_FIELD_BYTES(bytes, bytes, nbytes)
		TRAWL_FIELD_ARRAY(int16_t, arr, arr, 3)))

TRAWL_TRACEPOINT_EVENT(hello, tick, TRAWL_LOGLEVEL_DEBUG, TRAWL_ARGS(void), TRAWL_FIELDS())

static void *run(void *arg)
{
	const uint8_t bytes[] = { 0xde, 0xad, 0xbe, 0xef };
	const int16_t arr[3] = { -1, 0, 1 };
	(void)arg;
	for (uint64_t i = 0; i < 3; i++) {
		trawl_tracepoint(hello, greeting, i, 200 + (int32_t)i, "world");
		trawl_tracepoint(hello, types, (int8_t)-5, 65535, -(int64_t)i, 0xc0ffee,
				 1.5f, 2.25, (int)i, bytes, sizeof(bytes), arr);
		trawl_tracepoint(hello, tick);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "hello-trace";
	char err[256];
	struct trawl_ust_session_opts o;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.output = dir;
	o.contexts = TRAWL_UST_CTX_VPID | TRAWL_UST_CTX_VTID | TRAWL_UST_CTX_PROCNAME;
	int threads = 0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "monotonic") == 0)
			o.clock = TRAWL_UST_CLOCK_MONOTONIC;
		else if (strcmp(argv[i], "fixed") == 0)
			o.header = TRAWL_UST_HEADER_FIXED;
		else if (strcmp(argv[i], "threads") == 0)
			threads = 1;
	}
	struct trawl_ust_session *s = trawl_ust_session_new(&o, err, sizeof(err));
	if (!s || trawl_ust_session_start(s) < 0) {
		fprintf(stderr, "hello: %s\n", s ? "cannot start the session" : err);
		trawl_ust_session_free(s);
		return 1;
	}
	if (threads) {
		pthread_t th[3];
		for (int i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, run, NULL);
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
	} else {
		run(NULL);
	}
	int r = trawl_ust_session_stop(s);
	struct trawl_ust_stats st;
	trawl_ust_session_stats(s, &st);
	trawl_ust_session_free(s);
	printf("hello: %llu events recorded, %llu discarded, trace in %s\n",
	       (unsigned long long)st.recorded, (unsigned long long)st.discarded, dir);
	return r < 0;
}
