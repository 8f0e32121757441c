/* SPDX-License-Identifier: MIT */
/*
 * test-ust-packet: the CTF writer additions user-space tracing relies on:
 * the fixed event header (u16 id + u64 timestamp) and appending ready-made
 * packets (trawl_ctf_wstream_packet) with their index entries; and that a
 * program with tracepoints but no session runs no thread and enables
 * nothing.
 */
#define TRAWL_TRACEPOINT_DEFINE
#include "trawl/tracepoint.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

TRAWL_TRACEPOINT_EVENT(pk, idle, TRAWL_LOGLEVEL_INFO, TRAWL_ARGS(int x),
		       TRAWL_FIELDS(TRAWL_FIELD_INT(int, x, x)))

static char base[256];

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;
	struct dirent *e;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* A packet of the writer's layout holding `n` events of class ec (fixed
 * header, one u32 payload each) at timestamps ts0, ts0+10, ... */
static size_t mk_packet(uint8_t *b, size_t size, const uint8_t *uuid, uint64_t inst,
			uint64_t seq, uint64_t ts0, unsigned n, uint64_t disc)
{
	memset(b, 0, size);
	put32(b + 0, 0xC1FC1FC1u);
	memcpy(b + 4, uuid, 16);
	put32(b + 20, 0);
	put64(b + 24, inst);
	size_t pos = 84;
	for (unsigned i = 0; i < n; i++) {
		uint16_t id = 0;
		memcpy(b + pos, &id, 2);
		put64(b + pos + 2, ts0 + 10 * i);
		put32(b + pos + 10, 1000 + i);
		pos += 14;
	}
	put64(b + 32, ts0);
	put64(b + 40, ts0 + 10 * (n ? n - 1 : 0));
	put64(b + 48, pos * 8);
	put64(b + 56, size * 8);
	put64(b + 64, seq);
	put64(b + 72, disc);
	put32(b + 80, 3);
	return pos;
}

static void test_packets(void)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/raw", base);
	struct trawl_ctf_writer_opts o;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.path = dir;
	o.hostname = "h";
	o.clock_offset_s = 1700000000;
	o.packet_size = 4096;
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	ok(w != NULL, "writer");
	if (!w)
		return;
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_FIXED, NULL);
	struct trawl_ctf_type *st = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, st, "v", trawl_ctf_type_int(w, 32, false, 10));
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, "p:e", 6, st);
	ok(sc && ec, "fixed-header stream class and event class");
	struct trawl_ctf_wstream *raw = trawl_ctf_writer_stream(w, sc, "raw", 0);
	struct trawl_ctf_wstream *evs = trawl_ctf_writer_stream(w, sc, "evs", 0);
	ok(raw && evs, "two streams");
	is_int(trawl_ctf_wstream_instance_id(raw), 0, "first stream: instance 0");
	is_int(trawl_ctf_wstream_instance_id(evs), 1, "second stream: instance 1");
	const uint8_t *uuid = trawl_ctf_writer_trace(w)->uuid;
	static uint8_t pk[8192];
	mk_packet(pk, 8192, uuid, 0, 0, 100, 5, 0);
	is_int(trawl_ctf_wstream_packet(raw, pk, 8192), 0, "packet 0 appended");
	mk_packet(pk, 8192, uuid, 0, 1, 1000, 3, 2);
	is_int(trawl_ctf_wstream_packet(raw, pk, 8192), 0, "packet 1 appended (2 discarded before)");
	/* refusals */
	mk_packet(pk, 8192, uuid, 1, 2, 2000, 1, 2);
	is_int(trawl_ctf_wstream_packet(raw, pk, 8192), -EINVAL, "wrong instance id: -EINVAL");
	mk_packet(pk, 8192, uuid, 0, 2, 500, 1, 2);
	is_int(trawl_ctf_wstream_packet(raw, pk, 8192), -EINVAL, "time going back: -EINVAL");
	mk_packet(pk, 8192, uuid, 0, 2, 2000, 1, 2);
	is_int(trawl_ctf_wstream_packet(raw, pk, 4096), -EINVAL, "size disagreeing with packet_size: -EINVAL");
	pk[0] ^= 1;
	is_int(trawl_ctf_wstream_packet(raw, pk, 8192), -EINVAL, "bad magic: -EINVAL");
	pk[0] ^= 1;
	pk[4] ^= 1;
	is_int(trawl_ctf_wstream_packet(raw, pk, 8192), -EINVAL, "other trace's uuid: -EINVAL");
	/* the fixed header through the event API too */
	for (uint32_t i = 0; i < 4; i++) {
		uint32_t v = 7 + i;
		trawl_ctf_wstream_event(evs, ec, 150 + i, &v, 4);
	}
	is_int(trawl_ctf_writer_close(w), 0, "close");
	trawl_ctf_writer_free(w);

	char p[600];
	struct stat sb;
	snprintf(p, sizeof(p), "%s/raw_0", dir);
	ok(stat(p, &sb) == 0 && sb.st_size == 2 * 8192, "raw_0 holds the two packets as given");
	snprintf(p, sizeof(p), "%s/index/raw_0.idx", dir);
	ok(stat(p, &sb) == 0 && sb.st_size == 16 + 2 * 72, "its index has two entries");

	const char *paths[] = { dir };
	char err[256];
	struct trawl_reader_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	ro.threads = 1;
	struct trawl_reader *r = trawl_reader_new(paths, 1, &ro, err, sizeof(err));
	ok(r != NULL, "read back (%s)", r ? "ok" : err);
	if (!r)
		return;
	const struct trawl_event *ev;
	uint64_t want_ts[] = { 100, 110, 120, 130, 140, 150, 151, 152, 153, 1000, 1010, 1020 };
	uint64_t want_v[] = { 1000, 1001, 1002, 1003, 1004, 7, 8, 9, 10, 1000, 1001, 1002 };
	int n = 0, good = 0;
	while (trawl_reader_next(r, &ev) > 0) {
		if (n < 12 && ev->cycles == want_ts[n] && ev->values[0].u == want_v[n] &&
		    strcmp(ev->cls->name, "p:e") == 0)
			good++;
		n++;
	}
	is_int(n, 12, "12 events");
	is_int(good, 12, "timestamps and values as written, in order");
	is_int(trawl_reader_nerrors(r), 0, "no errors");
	const struct trawl_reader_trace *t = trawl_reader_trace_at(r, 0);
	uint64_t disc = 0;
	for (size_t i = 0; t && i < trawl_reader_trace_nstreams(t); i++) {
		struct trawl_reader_stream_stats ss;
		trawl_reader_stream_stats(trawl_reader_trace_stream(t, i), &ss);
		disc += ss.discarded;
		if (ss.stream_instance_id == 0)
			ok(ss.index_used && !ss.index_bad && ss.packets == 2 && ss.cpu == 3,
			   "raw stream: index used, 2 packets, cpu_id 3");
	}
	is_int(disc, 2, "events_discarded carried");
	trawl_reader_free(r);
}

static void test_untraced(void)
{
	is_int(count_dir("/proc/self/task"), 1, "tracepoints registered, no session: one thread");
	ok(!trawl_tracepoint_enabled(pk, idle), "events disabled");
	for (int i = 0; i < 1000; i++)
		trawl_tracepoint(pk, idle, i);
	is_int(count_dir("/proc/self/task"), 1, "disabled events: still one thread");
	/* no buffer (memfd) and no trace file open */
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int ours = 0;
	while (d && (e = readdir(d))) {
		char p[300], l[512];
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(p, l, sizeof(l) - 1);
		if (n > 0) {
			l[n] = 0;
			if (strstr(l, "memfd:") || strstr(l, "trawl"))
				ours++;
		}
	}
	if (d)
		closedir(d);
	is_int(ours, 0, "no buffer or trace file open");
}

int main(void)
{
	snprintf(base, sizeof(base), "%s/trawl-test-ust-packet-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	test_untraced();
	test_packets();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (!tap_fail && system(cmd) != 0)
		printf("# could not remove %s\n", base);
	return done_testing();
}
