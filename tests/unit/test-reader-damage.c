/* SPDX-License-Identifier: MIT */
/*
 * The reader on damaged streams (issues 27 and 28): a bad packet is
 * skipped and the packets after it are read (found again by their magic),
 * an event that does not decode skips the rest of its packet, an event of
 * no bits is corrupt instead of looping forever, and the events the tracer
 * lost are reported as time ranges. Each case in the three ways of reading
 * (event by event, batches in one thread, the decode worker), which must
 * agree on the events, the skips and the losses.
 *
 * Streams are built here byte by byte for a small metadata and read from
 * memory (trawl_source_memory), so that offsets are known exactly.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe-internal.h"
#include "tap.h"
#include "trawl/pipe.h"

/* Header: magic, stream_id (8 bytes); context: timestamp_begin/end,
 * content_size, packet_size, events_discarded (40); events: id (4), a
 * 64-bit timestamp and a 32-bit value (16 bytes). */
static const char META[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"trace { major = 1; minor = 8; byte_order = le;\n"
	"  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };\n"
	"env { hostname = \"dmg\"; domain = \"ust\"; };\n"
	"clock { name = \"c\"; freq = 1000000000; offset_s = 0; offset = 0; absolute = true; };\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.c.value; } := clk_t;\n"
	"stream { id = 0;\n"
	"  packet.context := struct { clk_t timestamp_begin; clk_t timestamp_end;\n"
	"    uint64_t content_size; uint64_t packet_size; uint64_t events_discarded; };\n"
	"  event.header := struct { uint32_t id; clk_t timestamp; }; };\n"
	"event { name = \"tick\"; id = 0; stream_id = 0; fields := struct { uint32_t v; }; };\n";

/* Events of no bits: no event header, no fields (issue 28, item 10). */
static const char META0[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"trace { major = 1; minor = 8; byte_order = le;\n"
	"  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };\n"
	"env { hostname = \"zero\"; domain = \"ust\"; };\n"
	"stream { id = 0;\n"
	"  packet.context := struct { uint64_t content_size; uint64_t packet_size; }; };\n"
	"event { name = \"nothing\"; id = 0; stream_id = 0; fields := struct { }; };\n";

#define PKT 256u		/* bytes per packet */
#define HDR 48u			/* header and context */
#define EVB 16u			/* bytes per event */

struct sbuf {
	uint8_t b[8192];
	size_t n;
};

static void put(struct sbuf *s, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

static void set64(struct sbuf *s, size_t at, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		s->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* A packet of nev events at tsb, tsb + 10, ..., values v0, v0 + 1, ...;
 * ending at tse = tsb + 100; `disc` lost so far. Returns its offset. */
static size_t packet(struct sbuf *s, uint64_t tsb, int nev, uint32_t v0, uint64_t disc)
{
	size_t at = s->n;
	put(s, 0xC1FC1FC1u, 4);
	put(s, 0, 4);
	put(s, tsb, 8);
	put(s, tsb + 100, 8);
	put(s, (HDR + (uint64_t)nev * EVB) * 8, 8);
	put(s, PKT * 8, 8);
	put(s, disc, 8);
	for (int i = 0; i < nev; i++) {
		put(s, 0, 4);
		put(s, tsb + 10 * (uint64_t)i, 8);
		put(s, v0 + (uint32_t)i, 4);
	}
	while (s->n < at + PKT)
		s->b[s->n++] = 0;
	return at;
}

struct result {
	int events, errors;
	uint32_t vals[128];
	struct trawl_reader_skip sk[16];
	size_t nsk;
	char why[16][192];
	uint64_t skipped, nskips;
	struct trawl_reader_loss lo[40];
	size_t nlo;
	uint64_t lost;
};

static bool want_none(void *self, const struct trawl_ctf_event_class *cls)
{
	(void)self;
	(void)cls;
	return false;
}

static bool none;	/* read as for a sink that wants no event (skip to the last packet) */

static bool read_mem(const char *meta, const struct sbuf *s, int mode, int64_t begin,
		     struct result *res)
{
	char err[512] = "";
	const uint8_t *bufs[1] = { s->b };
	size_t lens[1] = { s->n };
	struct trawl_source_opts so = { .sz = sizeof(so) };
	struct trawl_source *src = trawl_source_memory(meta, strlen(meta), bufs, lens, 1, &so,
						       err, sizeof(err));
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .begin = begin,
					.threads = mode == 2 ? 2 : 1 };

	memset(res, 0, sizeof(*res));
	if (!src) {
		printf("# source: %s\n", err);
		return false;
	}
	struct trawl_reader *r = trawl_reader_open(&src, 1, &ro, err, sizeof(err));
	if (!r) {
		printf("# reader: %s\n", err);
		return false;
	}
	tr_reader_set_mode(r, mode == 0 ? READ_EVENTS : mode == 1 ? READ_BATCHES : READ_WORKER);
	if (mode)
		tr_reader_set_batch(r, 3);
	if (none) {
		static const struct trawl_sink_ops ops = { .sz = sizeof(ops), .wants = want_none };
		struct trawl_sink k = { &ops, NULL };
		if (tr_reader_want(r, &k, 1) < 0)
			abort();
	}
	const struct trawl_event *ev;
	int rc;
	for (int guard = 0; guard < 100000 && (rc = trawl_reader_next(r, &ev)) != 0; guard++) {
		if (rc < 0) {
			printf("# error %d: %s\n", rc, trawl_reader_error(r));
			res->errors++;
			continue;
		}
		if (res->events < 128)
			res->vals[res->events] = ev->nvalues ? (uint32_t)ev->values[0].u : 0;
		res->events++;
	}
	const struct trawl_reader_stream *st =
		trawl_reader_trace_stream(trawl_reader_trace_at(r, 0), 0);
	res->nsk = trawl_reader_stream_skips(st, res->sk, 16, &res->skipped, &res->nskips);
	for (size_t i = 0; i < res->nsk; i++) {
		snprintf(res->why[i], sizeof(res->why[i]), "%s", res->sk[i].why);
		res->sk[i].why = res->why[i];
	}
	res->nlo = trawl_reader_stream_losses(st, res->lo, 40, &res->lost);
	trawl_reader_free(r);
	return true;
}

/* Reads s in the three modes; *res is event by event's; they must agree. */
static void read3(const char *what, const char *meta, const struct sbuf *s, int64_t begin,
		  struct result *res)
{
	static struct result o[3];
	bool same = true;

	for (int m = 0; m < 3; m++)
		if (!read_mem(meta, s, m, begin, &o[m]))
			same = false;
	for (int m = 1; m < 3 && same; m++) {
		/* wanting nothing, the batches leave events out (not event by event) */
		same = (none || (o[m].events == o[0].events &&
				 !memcmp(o[m].vals, o[0].vals, sizeof(o[0].vals)))) &&
		       o[m].errors == o[0].errors && o[m].nsk == o[0].nsk &&
		       o[m].skipped == o[0].skipped && o[m].nskips == o[0].nskips &&
		       o[m].nlo == o[0].nlo && o[m].lost == o[0].lost &&
		       !memcmp(o[m].lo, o[0].lo, o[0].nlo * sizeof(o[0].lo[0]));
		for (size_t i = 0; same && i < o[0].nsk; i++)
			same = o[m].sk[i].offset == o[0].sk[i].offset &&
			       o[m].sk[i].bytes == o[0].sk[i].bytes &&
			       !strcmp(o[m].why[i], o[0].why[i]);
		if (!same)
			printf("# mode %d: %d events, %zu skips, %" PRIu64 " lost; event by event: "
			       "%d, %zu, %" PRIu64 "\n", m, o[m].events, o[m].nsk, o[m].lost,
			       o[0].events, o[0].nsk, o[0].lost);
	}
	ok(same, "%s: event by event, in batches and with the worker: the same events, skips "
	   "and losses", what);
	*res = o[0];
	for (size_t i = 0; i < res->nsk; i++)
		res->sk[i].why = res->why[i];
}

static bool vals_are(const struct result *r, const uint32_t *want, int n)
{
	if (r->events != n)
		return false;
	for (int i = 0; i < n; i++)
		if (r->vals[i] != want[i])
			return false;
	return true;
}

int main(void)
{
	static struct sbuf s;
	struct result r;

	/* 1. a bad magic in the middle packet: the third is read */
	s.n = 0;
	packet(&s, 1000, 5, 100, 0);
	size_t p2 = packet(&s, 2000, 5, 200, 0);
	packet(&s, 3000, 5, 300, 0);
	set64(&s, p2, 0xdeadbeef);	/* magic and stream_id */
	read3("bad magic mid-stream", META, &s, 0, &r);
	{
		const uint32_t want[] = { 100, 101, 102, 103, 104, 300, 301, 302, 303, 304 };
		ok(vals_are(&r, want, 10), "bad magic: the packets before and after are read "
		   "(%d events)", r.events);
	}
	is_int(r.errors, 0, "bad magic: no reader error (the region is skipped)");
	is_int(r.nskips, 1, "bad magic: one region skipped");
	ok(r.nsk == 1 && r.sk[0].offset == p2 && r.sk[0].bytes == PKT,
	   "bad magic: the region is the packet: byte %" PRIu64 ", %" PRIu64 " bytes",
	   r.nsk ? r.sk[0].offset : 0, r.nsk ? r.sk[0].bytes : 0);
	ok(r.nsk && strstr(r.sk[0].why, "magic"), "bad magic: the reason says so (%s)",
	   r.nsk ? r.sk[0].why : "");
	is_int(r.skipped, PKT, "bad magic: the bytes skipped in all");

	/* 2. 100 bytes of garbage inserted before the second packet: the
	 * packets after it are found again by their magic */
	s.n = 0;
	packet(&s, 1000, 5, 100, 0);
	size_t g = s.n;
	for (int i = 0; i < 100; i++)
		s.b[s.n++] = (uint8_t)(i * 37 + 11);
	s.b[g + 40] = 0xC1;	/* a false start of a magic, then a whole one */
	s.b[g + 60] = 0xC1, s.b[g + 61] = 0x1F, s.b[g + 62] = 0xFC, s.b[g + 63] = 0xC1;
	packet(&s, 2000, 5, 200, 0);
	packet(&s, 3000, 5, 300, 0);
	read3("garbage between packets", META, &s, 0, &r);
	{
		const uint32_t want[] = { 100, 101, 102, 103, 104, 200, 201, 202, 203, 204,
					  300, 301, 302, 303, 304 };
		ok(vals_are(&r, want, 15), "garbage: every packet after it is read (%d events)",
		   r.events);
	}
	ok(r.nskips == 1 && r.nsk == 1 && r.sk[0].offset == g && r.sk[0].bytes == 100,
	   "garbage: one region, the 100 bytes at %zu (%" PRIu64 " at %" PRIu64 ")", g,
	   r.nsk ? r.sk[0].bytes : 0, r.nsk ? r.sk[0].offset : 0);

	/* 3. an unknown event id in the middle packet: its events before are
	 * read, the rest of it skipped, the next packet read */
	s.n = 0;
	packet(&s, 1000, 5, 100, 0);
	p2 = packet(&s, 2000, 5, 200, 0);
	packet(&s, 3000, 5, 300, 0);
	size_t bad = p2 + HDR + 2 * EVB;
	s.b[bad] = 9;	/* the third event's id */
	read3("unknown event id", META, &s, 0, &r);
	{
		const uint32_t want[] = { 100, 101, 102, 103, 104, 200, 201,
					  300, 301, 302, 303, 304 };
		ok(vals_are(&r, want, 12), "unknown event id: the events before it and the next "
		   "packet are read (%d events)", r.events);
	}
	ok(r.nsk == 1 && r.sk[0].offset == bad && r.sk[0].bytes == p2 + PKT - bad &&
	   strstr(r.sk[0].why, "unknown event id 9"),
	   "unknown event id: the rest of the packet from the event is skipped (%" PRIu64
	   " bytes at %" PRIu64 ": %s)", r.nsk ? r.sk[0].bytes : 0, r.nsk ? r.sk[0].offset : 0,
	   r.nsk ? r.sk[0].why : "");

	/* 4. a truncated last packet: skipped to the end of the bytes */
	s.n = 0;
	packet(&s, 1000, 5, 100, 0);
	p2 = packet(&s, 2000, 5, 200, 0);
	s.n = p2 + 100;
	read3("truncated last packet", META, &s, 0, &r);
	ok(r.events == 5 && r.nsk == 1 && r.sk[0].offset == p2 && r.sk[0].bytes == 100 &&
	   strstr(r.sk[0].why, "packet_size"),
	   "truncated: the whole packets are read, the rest skipped (%d events, %s)", r.events,
	   r.nsk ? r.sk[0].why : "no skip");

	/* 5. losses: counts 0, 3, 5, 5, 9 make two ranges: from the end of
	 * the first packet to the end of the third (5 events), from the end
	 * of the fourth to the end of the fifth (4) */
	s.n = 0;
	packet(&s, 1000, 2, 100, 0);
	packet(&s, 2000, 2, 200, 3);
	packet(&s, 3000, 2, 300, 5);
	packet(&s, 4000, 2, 400, 5);
	packet(&s, 5000, 2, 500, 9);
	read3("losses", META, &s, 0, &r);
	is_int(r.lost, 9, "losses: every event lost counted");
	ok(r.nlo == 2 && r.lo[0].begin == 1100 && r.lo[0].end == 3100 && r.lo[0].events == 5 &&
	   r.lo[1].begin == 4100 && r.lo[1].end == 5100 && r.lo[1].events == 4,
	   "losses: two ranges, [1100, 3100] 5 and [4100, 5100] 4 (%zu: [%" PRId64 ", %" PRId64
	   "] %" PRIu64 ")", r.nlo, r.nlo ? r.lo[0].begin : 0, r.nlo ? r.lo[0].end : 0,
	   r.nlo ? r.lo[0].events : 0);
	is_int(r.events, 10, "losses: every event read");
	/* from 3500 on, the first range is outside the time range */
	read3("losses in a time range", META, &s, 3500, &r);
	ok(r.lost == 4 && r.nlo == 1 && r.lo[0].begin == 4100 && r.lo[0].events == 4,
	   "losses before --begin are left out (%" PRIu64 " lost, %zu ranges)", r.lost, r.nlo);

	/* 6. a bad packet carries no losses, the next one's count is from the
	 * last good packet */
	s.n = 0;
	packet(&s, 1000, 2, 100, 1);
	p2 = packet(&s, 2000, 2, 200, 4);
	packet(&s, 3000, 2, 300, 6);
	set64(&s, p2, 0xdeadbeef);
	read3("losses around a bad packet", META, &s, 0, &r);
	ok(r.lost == 6 && r.nlo == 1 && r.lo[0].begin == 1000 && r.lo[0].end == 3100,
	   "a bad packet between: the first packet's own 1 and 5 from its end to the third's "
	   "end, one range [1000, 3100] (%" PRIu64 " lost, %zu ranges: [%" PRId64 ", %" PRId64
	   "])", r.lost, r.nlo, r.nlo ? r.lo[0].begin : 0, r.nlo ? r.lo[0].end : 0);

	/* 6b. no sink wants the events: the packets between the first and the
	 * last are passed through; a bad packet among them, or a bad tail
	 * after the last good packet, is still named once, with the losses */
	s.n = 0;
	packet(&s, 1000, 5, 100, 0);
	p2 = packet(&s, 2000, 5, 200, 2);
	packet(&s, 3000, 5, 300, 2);
	packet(&s, 4000, 5, 400, 7);
	size_t p5 = packet(&s, 5000, 5, 500, 9);
	set64(&s, p2, 0xdeadbeef);
	set64(&s, p5, 0xdeadbeef);
	none = true;
	read3("no sink wants the events", META, &s, 0, &r);
	none = false;
	ok(r.nskips == 2 && r.nsk == 2 && r.sk[0].offset == p2 && r.sk[0].bytes == PKT &&
	   r.sk[1].offset == p5 && r.sk[1].bytes == PKT,
	   "wanting nothing: both bad packets named once each (%" PRIu64 " regions: at %" PRIu64
	   ", %" PRIu64 ")", r.nskips, r.nsk ? r.sk[0].offset : 0, r.nsk > 1 ? r.sk[1].offset : 0);
	is_int(r.lost, 7, "wanting nothing: the losses of the packets passed are counted");

	/* 7. events of no bits (issue 28): each packet is corrupt, reading ends */
	s.n = 0;
	for (int k = 0; k < 2; k++) {
		size_t at = s.n;
		put(&s, 0xC1FC1FC1u, 4);
		put(&s, 0, 4);
		put(&s, 200 * 8, 8);	/* content: 176 bytes after the header */
		put(&s, PKT * 8, 8);
		while (s.n < at + PKT)
			s.b[s.n++] = 0;
	}
	read3("events of no bits", META0, &s, 0, &r);
	ok(r.events == 0 && r.errors == 0, "no bits: no event, reading ends (%d events)", r.events);
	ok(r.nskips == 2 && r.nsk == 2 && r.sk[0].offset == 24 && r.sk[0].bytes == PKT - 24 &&
	   r.sk[1].offset == PKT + 24 && strstr(r.sk[0].why, "no bits"),
	   "no bits: each packet's events skipped, from the first event (%" PRIu64 " regions: %s)",
	   r.nskips, r.nsk ? r.sk[0].why : "");
	return done_testing();
}
