/* SPDX-License-Identifier: MIT */
/*
 * The in-process session's trace while it records: once its consumer has
 * written a packet (the index entry: the signal, waited for at most 30 s),
 * the metadata is there, declares the event class, and its monotonic
 * clock is the real one (epoch offset of this boot), not the placeholder
 * the writer starts with; stopped, the same clock.
 */
#define TRAWL_TRACEPOINT_DEFINE
#include "trawl/tracepoint.h"
#include "trawl/ctf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

TRAWL_TRACEPOINT_EVENT(grow, ev, TRAWL_LOGLEVEL_INFO,
	TRAWL_ARGS(uint64_t n),
	TRAWL_FIELDS(TRAWL_FIELD_INT(uint64_t, n, n)))

static char tmpl[] = "/tmp/test-ust-growing-XXXXXX";

/* A packet written: an index file longer than its header. */
static bool packet_in(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "for f in '%s'/index/*.idx; do [ -f \"$f\" ] && "
		 "[ $(wc -c < \"$f\") -gt 16 ] && exit 0; done; exit 1", dir);
	return system(cmd) == 0;
}

static struct trawl_ctf_trace *meta(const char *dir)
{
	char m[600], err[256];
	snprintf(m, sizeof(m), "%s/metadata", dir);
	size_t len = 0;
	char *text = trawl_ctf_metadata_read(m, &len, err, sizeof(err));
	struct trawl_ctf_trace *t = text ? trawl_ctf_metadata_parse(text, len, err, sizeof(err)) : NULL;
	free(text);
	return t;
}

static bool has_class(const struct trawl_ctf_trace *t, const char *name)
{
	for (size_t i = 0; t && i < t->nstreams; i++)
		for (size_t j = 0; j < t->streams[i]->nevents; j++)
			if (!strcmp(t->streams[i]->events[j]->name, name))
				return true;
	return false;
}

/* The clock's epoch offset is this boot's (within 10 s). */
static bool real_clock(const struct trawl_ctf_trace *t)
{
	struct timespec r, m;
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	int64_t boot = (int64_t)r.tv_sec - (int64_t)m.tv_sec;
	return t && t->nclocks == 1 && t->clocks[0].freq == 1000000000 &&
	       llabs(t->clocks[0].offset_s - boot) < 10;
}

int main(void)
{
	const char *dir = mkdtemp(tmpl);
	if (!dir)
		return 1;
	const char *globs[] = { "grow:*" };
	struct trawl_ust_session_opts o = {
		.sz = sizeof(o), .output = dir, .mode = TRAWL_UST_DISCARD, .subbuf_size = 4096,
		.nsubbuf = 4, .header = TRAWL_UST_HEADER_LARGE, .clock = TRAWL_UST_CLOCK_MONOTONIC,
		.events = globs, .nevents = 1, .hostname = "h",
	};
	char err[256] = "";
	struct trawl_ust_session *s = trawl_ust_session_new(&o, err, sizeof(err));
	ok(s && trawl_ust_session_start(s) == 0, "an in-process session records (%s)", err);
	struct timespec tick = { 0, 1000000 };
	bool got = false;
	for (int i = 0; i < 30000 && !got; i++) {
		for (uint64_t n = 0; n < 100; n++)
			trawl_tracepoint(grow, ev, n);
		nanosleep(&tick, NULL);
		got = packet_in(dir);
	}
	ok(got, "a packet of it is written while it records");
	struct trawl_ctf_trace *t = meta(dir);
	ok(t, "the metadata is there while it records, and parses");
	ok(has_class(t, "grow:ev"), "... it declares the event class of the packets written");
	ok(real_clock(t), "... and the monotonic clock as it is (this boot's epoch offset)");
	trawl_ctf_trace_free(t);
	is_int(trawl_ust_session_stop(s), 0, "stop");
	t = meta(dir);
	ok(has_class(t, "grow:ev") && real_clock(t), "stopped: the same class and clock");
	trawl_ctf_trace_free(t);
	trawl_ust_session_free(s);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return done_testing();
}
