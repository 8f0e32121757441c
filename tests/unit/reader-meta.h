/* SPDX-License-Identifier: MIT */
/*
 * The metadata of the reader's unit test and of the stream fuzz target:
 * READER_META_HEAD, then an env and a clock block of the user's own, then
 * READER_META_TYPES (streams and event classes covering every type the
 * reader decodes). Neither part holds a '%', so either can sit in a printf
 * format.
 */
#ifndef TRAWL_TEST_READER_META_H
#define TRAWL_TEST_READER_META_H

#define READER_META_HEAD \
	"/* CTF 1.8 */\n" \
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n" \
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n" \
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n" \
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n" \
	"typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n" \
	"trace {\n" \
	"	major = 1; minor = 8;\n" \
	"	uuid = \"0badc0de-1234-4321-8888-000000000001\";\n" \
	"	byte_order = le;\n" \
	"	packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; };\n" \
	"};\n"

#define READER_META_TYPES \
	"typealias integer { size = 27; align = 1; signed = false; map = clock.mono.value; } := uint27_clock_t;\n" \
	"typealias integer { size = 64; align = 8; signed = false; map = clock.mono.value; } := uint64_clock_t;\n" \
	"struct packet_context {\n" \
	"	uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end;\n" \
	"	uint64_t content_size; uint64_t packet_size; uint64_t events_discarded; uint32_t cpu_id;\n" \
	"};\n" \
	"struct event_header_compact {\n" \
	"	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n" \
	"	variant <id> {\n" \
	"		struct { uint27_clock_t timestamp; } compact;\n" \
	"		struct { uint32_t id; uint64_clock_t timestamp; } extended;\n" \
	"	} v;\n" \
	"} align(8);\n" \
	"stream { id = 0; event.header := struct event_header_compact;\n" \
	"	packet.context := struct packet_context; };\n" \
	"stream { id = 1; event.header := struct { uint16_t id; uint64_clock_t timestamp; } align(8);\n" \
	"	packet.context := struct packet_context;\n" \
	"	event.context := struct { uint32_t _vtid; }; };\n" \
	"event { name = \"simple\"; id = 0; stream_id = 0;\n" \
	"	fields := struct { uint32_t _a; integer { size = 64; align = 8; signed = true; } _b; }; };\n" \
	"event { name = \"other\"; id = 40; stream_id = 0; fields := struct { uint16_t _x; }; };\n" \
	"event { name = \"types\"; id = 1; stream_id = 0; fields := struct {\n" \
	"	uint8_t _u8;\n" \
	"	integer { size = 8; align = 8; signed = true; } _s8;\n" \
	"	uint16_t _u16;\n" \
	"	integer { size = 16; align = 8; signed = true; } _s16;\n" \
	"	uint32_t _u32;\n" \
	"	integer { size = 32; align = 8; signed = true; } _s32;\n" \
	"	uint64_t _u64;\n" \
	"	integer { size = 64; align = 8; signed = true; } _s64;\n" \
	"	integer { size = 3; align = 1; signed = false; } _b3;\n" \
	"	integer { size = 7; align = 1; signed = true; } _b7;\n" \
	"	integer { size = 1; align = 1; signed = false; } _b1;\n" \
	"	integer { size = 64; align = 1; signed = false; } _b64;\n" \
	"	integer { size = 5; align = 1; signed = true; } _b5;\n" \
	"	integer { size = 13; align = 8; signed = false; byte_order = be; } _be13;\n" \
	"	integer { size = 3; align = 1; signed = false; byte_order = be; } _be3;\n" \
	"	integer { size = 9; align = 1; signed = true; byte_order = be; } _be9;\n" \
	"	integer { size = 39; align = 1; signed = false; byte_order = be; } _be39;\n" \
	"	floating_point { exp_dig = 8; mant_dig = 24; byte_order = le; align = 8; } _f32;\n" \
	"	floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; align = 64; } _f64;\n" \
	"	floating_point { exp_dig = 11; mant_dig = 53; byte_order = be; align = 8; } _f64be;\n" \
	"	enum : uint8_t { ZERO = 0, SOME = 1 ... 5, SIX = 6 } _e;\n" \
	"	string _str;\n" \
	"	integer { size = 8; align = 8; signed = false; encoding = UTF8; } _comm[8];\n" \
	"	uint16_t _n;\n" \
	"	uint16_t _seq[_n];\n" \
	"	struct { uint8_t _a; integer { size = 16; align = 8; signed = true; } _b; } _arr[2];\n" \
	"	enum : uint8_t { INT = 0, STR = 1 } _tag;\n" \
	"	variant <_tag> { integer { size = 32; align = 8; signed = true; } INT; string STR; } _v;\n" \
	"	struct { uint8_t _x; struct { uint32_t _y; } _inner; } _nest;\n" \
	"	integer { size = 32; align = 8; signed = false; byte_order = be; } _be32;\n" \
	"	uint8_t _seq2[stream.packet.context.cpu_id];\n" \
	"	uint8_t _seq3[event.fields._n];\n" \
	"}; };\n" \
	"event { name = \"gen\"; id = 7; stream_id = 1; fields := struct {\n" \
	"	integer { size = 32; align = 32; signed = true; } _x; string _s; }; };\n"

#endif
