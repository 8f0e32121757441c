/* SPDX-License-Identifier: MIT */
/*
 * bench-writer [DIR [EVENTS]]: the CTF writer's event rate. Writes EVENTS
 * (default 20 M) small events (compact header + 8-byte payload) round-robin
 * over 2 streams, then the same number of larger user-space-like events
 * (large header + 8-byte context + 24-byte payload), into a trace under DIR
 * (default $TMPDIR or /tmp; a tmpfs shows the writer's own cost, a disk adds
 * the page cache's). Prints M events/s and MB/s for each; the target is
 * > 30 M events/s for small events. There is no anchor for this figure
 * (LTTng's consumer only copies whole sub-buffers).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "util/clock.h"

static int run(const char *dir, uint64_t n, bool large)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "bench", .domain = large ? "ust" : "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w) {
		fprintf(stderr, "bench-writer: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *i32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *f = trawl_ctf_type_struct(w), *ctx = NULL;
	trawl_ctf_struct_add(w, f, "a", u64);
	if (large) {
		ctx = trawl_ctf_type_struct(w);
		trawl_ctf_struct_add(w, ctx, "vpid", i32);
		trawl_ctf_struct_add(w, ctx, "vtid", i32);
		trawl_ctf_struct_add(w, f, "b", u64);
		trawl_ctf_struct_add(w, f, "c", u64);
	}
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(
		w, large ? TRAWL_CTF_HEADER_LARGE : TRAWL_CTF_HEADER_COMPACT, ctx);
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, "bench", INT64_MIN, f);
	struct trawl_ctf_wstream *s[2] = { trawl_ctf_writer_stream(w, sc, "channel0", 0),
					   trawl_ctf_writer_stream(w, sc, "channel0", 1) };
	if (!ec || !s[0] || !s[1]) {
		fprintf(stderr, "bench-writer: setup: %s\n", strerror(errno));
		trawl_ctf_writer_free(w);
		return 1;
	}
	uint64_t payload[5] = { 0x0000100000001000ull, 1, 2, 3, 4 };
	size_t len = large ? 32 : 8;
	double t0 = tr_mono_s();
	int ret = 0;
	for (uint64_t i = 0; i < n && !ret; i++) {
		payload[1] = i;
		ret = trawl_ctf_wstream_event(s[i & 1], ec, 1000 + i * 7, large ? payload : payload + 1, len);
	}
	if (!ret)
		ret = trawl_ctf_writer_close(w);
	double t = tr_mono_s() - t0;
	trawl_ctf_writer_free(w);
	if (ret) {
		fprintf(stderr, "bench-writer: %s\n", strerror(-ret));
		return 1;
	}
	double hdr = large ? 6 : 4;
	printf("writer, %s events (%.0f-byte header + %zu bytes): %.1f M events/s, %.0f MB/s, "
	       "%" PRIu64 " events in %.3f s\n", large ? "ust-like" : "small", hdr, len,
	       (double)n / t / 1e6, (double)n * (hdr + (double)len) / t / 1e6, n, t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000000;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/bench-writer-%ld", base, (long)getpid());
	int ret = run(dir, n, false);
	if (!ret)
		ret = run(dir, n, true);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench-writer: could not remove %s\n", dir);
	return ret;
}
