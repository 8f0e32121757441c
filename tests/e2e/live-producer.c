/* SPDX-License-Identifier: MIT */
/*
 * tests/e2e/live-producer.c - a trace writer streaming to `trawl relay`,
 * driven by a script, so that the live tests control exactly what the
 * relay has when (built by the tests that use it).
 *
 *   live-producer [--horizon] RELAY SESSION HOST TRACE [DIR] < SCRIPT
 *
 * --horizon: the HELLO asks to send horizons, as the agent's does (its
 * streams come as threads do; docs/relay.md "Streams that join").
 * DIR: also write the trace there (the reference the tests compare with).
 * Script lines (timestamps in ns; one event class `tick` to start with):
 *   stream CPU            a stream channel0_CPU
 *   class NAME            a new event class NAME (u64 seq, string msg)
 *   ev CPU TS N [CLASS]   N events on stream CPU at TS, TS+1000, ...
 *   flush CPU TS          close the stream's packet now, ending at TS
 *   beacon CPU TS         no event of the stream before TS is to come
 *   horizon TS            every stream with an event before TS is announced
 *                         (with --horizon)
 *   wait FILE             wait until FILE exists (at most 30 s)
 *   touch FILE            create FILE
 *   sleep MS
 *   close                 close the writer (returns once the relay has it)
 * Exits 0, or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "trawl/relay.h"

static struct trawl_ctf_writer *w;
static struct trawl_ctf_stream_class *sc;
static struct trawl_ctf_type *fields;
static struct trawl_ctf_event_class *classes[64];
static char *class_names[64];
static int nclasses;
static struct trawl_ctf_wstream *streams[64];

/* lib/ctf's (internal: this program links the static library) */
int tr_ctf_writer_horizon(struct trawl_ctf_writer *w, uint64_t ts, bool later);

static int fail(const char *what, int err)
{
	fprintf(stderr, "live-producer: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static struct trawl_ctf_event_class *add_class(const char *name)
{
	if (nclasses == 64)
		fail("too many classes", E2BIG);
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, name, 6, fields);
	if (!ec)
		fail(name, errno);
	class_names[nclasses] = strdup(name);
	classes[nclasses++] = ec;
	return ec;
}

static struct trawl_ctf_event_class *find_class(const char *name)
{
	for (int i = 0; i < nclasses; i++)
		if (strcmp(class_names[i], name) == 0)
			return classes[i];
	fail(name, ENOENT);
	return NULL;
}

static struct trawl_ctf_wstream *stream(unsigned cpu)
{
	if (cpu >= 64 || !streams[cpu])
		fail("no such stream", ENOENT);
	return streams[cpu];
}

int main(int argc, char **argv)
{
	int horizon = argc > 1 && strcmp(argv[1], "--horizon") == 0;
	argc -= horizon;
	argv += horizon;
	if (argc < 5) {
		fprintf(stderr, "usage: live-producer [--horizon] RELAY SESSION HOST TRACE [DIR] < "
				"SCRIPT\n");
		return 2;
	}
	char err[512] = "";
	const struct trawl_relay_dest_opts ro = {
		.sz = sizeof(ro), .addr = argv[1], .session = argv[2], .trace = argv[4],
		.live_timer_us = 100000, .horizon = horizon,
	};
	struct trawl_ctf_dest *dest = trawl_relay_dest_new(&ro);
	if (!dest) {
		fprintf(stderr, "live-producer: %s\n", strerror(errno));
		return 1;
	}
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = argc > 5 ? argv[5] : NULL, .hostname = argv[3],
		.domain = "ust", .dest = dest, .packet_size = 4096,
		.clock_offset_s = 1700000000, .clock_offset = 1,
		.err = err, .errlen = sizeof(err),
	};
	w = trawl_ctf_writer_new(&o);
	if (!w) {
		fprintf(stderr, "live-producer: %s\n", *err ? err : strerror(errno));
		return 1;
	}
	fields = trawl_ctf_type_struct(w);
	if (!fields || trawl_ctf_struct_add(w, fields, "seq", trawl_ctf_type_int(w, 64, false, 10)) ||
	    trawl_ctf_struct_add(w, fields, "msg", trawl_ctf_type_string(w)))
		fail("types", ENOMEM);
	sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	if (!sc)
		fail("stream class", errno);
	add_class("tick");

	char line[512];
	uint64_t seq = 0;
	while (fgets(line, sizeof(line), stdin)) {
		char cmd[32], arg[400];
		unsigned cpu;
		unsigned long long ts, n;
		int r = 0;
		if (sscanf(line, "%31s", cmd) != 1 || cmd[0] == '#')
			continue;
		if (strcmp(cmd, "stream") == 0 && sscanf(line, "%*s %u", &cpu) == 1) {
			if (cpu >= 64 || !(streams[cpu] = trawl_ctf_writer_stream(w, sc, "channel0", cpu)))
				fail("stream", errno);
		} else if (strcmp(cmd, "class") == 0 && sscanf(line, "%*s %399s", arg) == 1) {
			add_class(arg);
		} else if (strcmp(cmd, "ev") == 0 && sscanf(line, "%*s %u %llu %llu", &cpu, &ts, &n) == 3) {
			struct trawl_ctf_event_class *ec = classes[0];
			if (sscanf(line, "%*s %*u %*u %*u %399s", arg) == 1)
				ec = find_class(arg);
			for (unsigned long long i = 0; i < n && !r; i++) {
				uint8_t p[64];
				uint64_t s = seq++;
				int len = snprintf((char *)p + 8, sizeof(p) - 8, "event %llu",
						   (unsigned long long)s);
				memcpy(p, &s, 8);
				r = trawl_ctf_wstream_event(stream(cpu), ec, ts + i * 1000, p,
							    8 + (size_t)len + 1);
			}
		} else if (strcmp(cmd, "flush") == 0 && sscanf(line, "%*s %u %llu", &cpu, &ts) == 2) {
			r = trawl_ctf_wstream_flush(stream(cpu), ts);
		} else if (strcmp(cmd, "beacon") == 0 && sscanf(line, "%*s %u %llu", &cpu, &ts) == 2) {
			r = trawl_ctf_wstream_beacon(stream(cpu), ts);
		} else if (strcmp(cmd, "horizon") == 0 && sscanf(line, "%*s %llu", &ts) == 1) {
			r = tr_ctf_writer_horizon(w, ts, false);
		} else if (strcmp(cmd, "wait") == 0 && sscanf(line, "%*s %399s", arg) == 1) {
			for (int i = 0; access(arg, F_OK) != 0; i++) {
				if (i == 3000)
					fail(arg, ETIMEDOUT);
				usleep(10000);
			}
		} else if (strcmp(cmd, "touch") == 0 && sscanf(line, "%*s %399s", arg) == 1) {
			int fd = open(arg, O_WRONLY | O_CREAT, 0644);
			if (fd < 0)
				fail(arg, errno);
			close(fd);
		} else if (strcmp(cmd, "sleep") == 0 && sscanf(line, "%*s %llu", &n) == 1) {
			usleep((useconds_t)n * 1000);
		} else if (strcmp(cmd, "close") == 0) {
			r = trawl_ctf_writer_close(w);
		} else {
			fprintf(stderr, "live-producer: bad line: %s", line);
			return 1;
		}
		if (r)
			fail(cmd, r);
	}
	trawl_ctf_writer_free(w);
	for (int i = 0; i < nclasses; i++)
		free(class_names[i]);
	return 0;
}
