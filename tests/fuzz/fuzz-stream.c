/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the CTF reader on one stream file (or two) of a fixed trace.
 * The metadata below has two stream classes (LTTng's compact header, and a
 * generic header with an event context), and event classes with every kind
 * of field: bit-fields in both byte orders, floats, enums, strings, text
 * arrays, sequences sized by fields of other scopes, variants, nested
 * structs. Input byte 0 is a mode: bit 0 splits the rest in two stream files
 * (the merge; then 4 little-endian bytes give the first one's length), bit 1
 * reads with a time range and an event filter. Every event is read and
 * formatted as text, which touches each value of the tape. The metadata is
 * parsed once; streams are read from memory (reader_new_mem), so the fuzzer
 * spends its time in the stream decoder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf/reader-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char META[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
	"trace {\n"
	"	major = 1; minor = 8;\n"
	"	uuid = \"0badc0de-1234-4321-8888-000000000001\";\n"
	"	byte_order = le;\n"
	"	packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; };\n"
	"};\n"
	"env { hostname = \"fuzz\"; domain = \"ust\"; };\n"
	"clock { name = \"mono\"; freq = 1000000; offset_s = 1000; offset = 7; absolute = true; };\n"
	"typealias integer { size = 27; align = 1; signed = false; map = clock.mono.value; } := uint27_clock_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.mono.value; } := uint64_clock_t;\n"
	"struct packet_context {\n"
	"	uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end;\n"
	"	uint64_t content_size; uint64_t packet_size; uint64_t events_discarded; uint32_t cpu_id;\n"
	"};\n"
	"struct event_header_compact {\n"
	"	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
	"	variant <id> {\n"
	"		struct { uint27_clock_t timestamp; } compact;\n"
	"		struct { uint32_t id; uint64_clock_t timestamp; } extended;\n"
	"	} v;\n"
	"} align(8);\n"
	"stream { id = 0; event.header := struct event_header_compact;\n"
	"	packet.context := struct packet_context; };\n"
	"stream { id = 1; event.header := struct { uint16_t id; uint64_clock_t timestamp; } align(8);\n"
	"	packet.context := struct packet_context;\n"
	"	event.context := struct { uint32_t _vtid; }; };\n"
	"event { name = \"simple\"; id = 0; stream_id = 0;\n"
	"	fields := struct { uint32_t _a; integer { size = 64; align = 8; signed = true; } _b; }; };\n"
	"event { name = \"other\"; id = 40; stream_id = 0; fields := struct { uint16_t _x; }; };\n"
	"event { name = \"types\"; id = 1; stream_id = 0; fields := struct {\n"
	"	uint8_t _u8;\n"
	"	integer { size = 8; align = 8; signed = true; } _s8;\n"
	"	uint16_t _u16;\n"
	"	integer { size = 16; align = 8; signed = true; } _s16;\n"
	"	uint32_t _u32;\n"
	"	integer { size = 32; align = 8; signed = true; } _s32;\n"
	"	uint64_t _u64;\n"
	"	integer { size = 64; align = 8; signed = true; } _s64;\n"
	"	integer { size = 3; align = 1; signed = false; } _b3;\n"
	"	integer { size = 7; align = 1; signed = true; } _b7;\n"
	"	integer { size = 1; align = 1; signed = false; } _b1;\n"
	"	integer { size = 64; align = 1; signed = false; } _b64;\n"
	"	integer { size = 5; align = 1; signed = true; } _b5;\n"
	"	integer { size = 13; align = 8; signed = false; byte_order = be; } _be13;\n"
	"	integer { size = 3; align = 1; signed = false; byte_order = be; } _be3;\n"
	"	integer { size = 9; align = 1; signed = true; byte_order = be; } _be9;\n"
	"	integer { size = 39; align = 1; signed = false; byte_order = be; } _be39;\n"
	"	floating_point { exp_dig = 8; mant_dig = 24; byte_order = le; align = 8; } _f32;\n"
	"	floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; align = 64; } _f64;\n"
	"	floating_point { exp_dig = 11; mant_dig = 53; byte_order = be; align = 8; } _f64be;\n"
	"	enum : uint8_t { ZERO = 0, SOME = 1 ... 5, SIX = 6 } _e;\n"
	"	string _str;\n"
	"	integer { size = 8; align = 8; signed = false; encoding = UTF8; } _comm[8];\n"
	"	uint16_t _n;\n"
	"	uint16_t _seq[_n];\n"
	"	struct { uint8_t _a; integer { size = 16; align = 8; signed = true; } _b; } _arr[2];\n"
	"	enum : uint8_t { INT = 0, STR = 1 } _tag;\n"
	"	variant <_tag> { integer { size = 32; align = 8; signed = true; } INT; string STR; } _v;\n"
	"	struct { uint8_t _x; struct { uint32_t _y; } _inner; } _nest;\n"
	"	integer { size = 32; align = 8; signed = false; byte_order = be; } _be32;\n"
	"	uint8_t _seq2[stream.packet.context.cpu_id];\n"
	"	uint8_t _seq3[event.fields._n];\n"
	"}; };\n"
	"event { name = \"gen\"; id = 7; stream_id = 1; fields := struct {\n"
	"	integer { size = 32; align = 32; signed = true; } _x; string _s; }; };\n";

static struct trawl_ctf_trace *meta;

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
	struct trawl_reader *r = reader_new_mem(meta, bufs, lens, mode & 1 ? 2 : 1, &o, err, sizeof(err));
	if (!r)
		abort();	/* the metadata is valid: opening cannot fail */
	const struct trawl_event *ev;
	uint64_t sum = 0;
	int rc, errors = 0;
	while ((rc = trawl_reader_next(r, &ev)) != 0) {
		if (rc < 0) {
			if (!strstr(trawl_reader_error(r), "mem/s_"))
				abort();	/* an error names its file */
			errors++;
			continue;
		}
		char line[8192];
		sum += trawl_text_event(line, sizeof(line), ev, INT64_MIN, 0);
	}
	if ((unsigned)errors != trawl_reader_nerrors(r) || errors > 2)
		abort();
	trawl_reader_free(r);
	return sum == 42;
}
