/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the CTF reader on one stream file (or two) of a fixed trace.
 * The metadata below has two stream classes (LTTng's compact header, and a
 * generic header with an event context), and event classes with every kind
 * of field: bit-fields in both byte orders, floats, enums, strings, text
 * arrays, sequences sized by fields of other scopes, variants, nested
 * structs. Input byte 0 is a mode: bit 0 splits the rest in two stream files
 * (the merge; then 4 little-endian bytes give the first one's length), bit 1
 * reads with a time range and an event filter, bit 2 with a 1 GHz clock and
 * the decode worker thread (its batch fast path), bit 3 reads through
 * trawl_reader_read() (up to 7 events a call), bit 4 with bit 2 decodes
 * the batches in the calling thread instead, bit 5 with bit 2 leaves out
 * the classes of odd index (trawl_sink_ops.wants: the decoder's two ways
 * of leaving events out), bit 6 with bit 2 every class (the streams are
 * then skipped to their last packet), bit 7 a third metadata whose one
 * event takes no bits (no event header, no fields: a packet cannot
 * advance, issue 28). Every event is read and
 * formatted as text, which touches each value of the tape. The metadata is
 * parsed once; streams are read from memory (tr_reader_new_mem), so the fuzzer
 * spends its time in the stream decoder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe-internal.h"
#include "../unit/reader-meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char META[] =
	READER_META_HEAD
	"env { hostname = \"fuzz\"; domain = \"ust\"; };\n"
	"clock { name = \"mono\"; freq = 1000000; offset_s = 1000; offset = 7; absolute = true; };\n"
	READER_META_TYPES;

/* The same with a 1 GHz clock: the decode worker's batch fast path */
static const char META_GHZ[] =
	READER_META_HEAD
	"env { hostname = \"fuzz\"; domain = \"ust\"; };\n"
	"clock { name = \"mono\"; freq = 1000000000; offset_s = 1000; offset = 7; absolute = true; };\n"
	READER_META_TYPES;

/* Events of no bits: every packet with content after its context is corrupt */
static const char META_ZERO[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"trace { major = 1; minor = 8; byte_order = le;\n"
	"  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };\n"
	"stream { id = 0;\n"
	"  packet.context := struct { uint64_t content_size; uint64_t packet_size; }; };\n"
	"event { name = \"nothing\"; id = 0; stream_id = 0; fields := struct { }; };\n";

static struct trawl_ctf_trace *meta, *meta_ghz, *meta_zero;

static bool want_even(void *self, const struct trawl_ctf_event_class *cls)
{
	(void)self;
	return !(cls->index & 1);
}

static bool want_none(void *self, const struct trawl_ctf_event_class *cls)
{
	(void)self;
	(void)cls;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	if (!meta) {
		meta = trawl_ctf_metadata_parse(META, sizeof(META) - 1, err, sizeof(err));
		if (!meta) {
			fprintf(stderr, "fuzz-stream: metadata: %s\n", err);
			abort();
		}
	}
	if (!meta_ghz) {
		meta_ghz = trawl_ctf_metadata_parse(META_GHZ, sizeof(META_GHZ) - 1, err, sizeof(err));
		if (!meta_ghz) {
			fprintf(stderr, "fuzz-stream: metadata: %s\n", err);
			abort();
		}
	}
	if (!meta_zero) {
		meta_zero = trawl_ctf_metadata_parse(META_ZERO, sizeof(META_ZERO) - 1, err,
						     sizeof(err));
		if (!meta_zero) {
			fprintf(stderr, "fuzz-stream: metadata: %s\n", err);
			abort();
		}
	}
	if (size < 1)
		return 0;
	unsigned mode = data[0];
	data++;
	size--;
	size_t half = size;
	if (mode & 1) {
		if (size < 4)
			return 0;
		half = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
		       (size_t)data[3] << 24;
		data += 4;
		size -= 4;
		if (half > size)
			half = size;
	}
	const uint8_t *bufs[2] = { data, data + half };
	size_t lens[2] = { half, size - half };
	const char *events[] = { "types", "g*" };
	struct trawl_reader_opts o = { .sz = sizeof(o) };
	if (mode & 2) {
		o.events = events;
		o.nevents = 2;
		o.begin = INT64_C(1000000000000);
		o.end = INT64_C(1000000000000) + 1000000000;
	}
	/* mode bit 2: a 1 GHz clock and the decode worker (batches) */
	if (mode & 4)
		o.threads = 2;
	struct trawl_reader *r = tr_reader_new_mem(mode & 0x80 ? meta_zero : mode & 4 ? meta_ghz : meta,
						bufs, lens,
						mode & 1 ? 2 : 1, &o, err, sizeof(err));
	if (!r)
		abort();	/* the metadata is valid: opening cannot fail */
	/* mode bit 4 with bit 2: the batches in this thread, no worker */
	if ((mode & 0x14) == 0x14)
		tr_reader_set_mode(r, READ_BATCHES);
	/* mode bits 5 and 6 with bit 2: what a sink wants */
	if ((mode & 4) && (mode & 0x60)) {
		static const struct trawl_sink_ops odd = { .sz = sizeof(odd), .wants = want_even },
						   none = { .sz = sizeof(none), .wants = want_none };
		struct trawl_sink k = { mode & 0x40 ? &none : &odd, NULL };
		if (tr_reader_want(r, &k, 1) < 0)
			abort();
	}
	const struct trawl_event *ev;
	struct trawl_event evs[7];
	uint64_t sum = 0;
	int rc, errors = 0;
	for (;;) {
		/* mode bit 3: several events a call; every event before the next call */
		if (mode & 8) {
			rc = trawl_reader_read(r, evs, 7);
			ev = evs;
		} else {
			rc = trawl_reader_next(r, &ev);
		}
		if (!rc)
			break;
		if (rc < 0) {
			if (!strstr(trawl_reader_error(r), "mem/s_"))
				abort();	/* an error names its file */
			errors++;
			continue;
		}
		for (int i = 0; i < rc; i++) {
			char line[8192];
			sum += trawl_text_event(line, sizeof(line), &ev[i], INT64_MIN, 0);
		}
	}
	if ((unsigned)errors != trawl_reader_nerrors(r) || errors > 2)
		abort();
	trawl_reader_free(r);
	return sum == 42;
}
