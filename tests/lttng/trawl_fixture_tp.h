/* SPDX-License-Identifier: MIT */
/*
 * tests/lttng/trawl_fixture_tp.h - LTTng-UST tracepoint provider used to
 * record reference CTF traces with LTTng 2.13. Between them the events use
 * every field type LTTng-UST offers: integers of every size and signedness
 * (decimal, hex, network byte order), floats and doubles, enumerations
 * (single values, ranges, auto values, values with no label), fixed arrays,
 * text arrays, sequences, text sequences and strings.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER trawl_fixture

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./trawl_fixture_tp.h"

#if !defined(TRAWL_FIXTURE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TRAWL_FIXTURE_TP_H

#include <lttng/tracepoint.h>
#include <stddef.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_ENUM(trawl_fixture, color,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("RED", 0)
		lttng_ust_field_enum_value("GREEN", 1)
		lttng_ust_field_enum_value("BLUE", 2)
		lttng_ust_field_enum_range("BRIGHT", 10, 19)
		lttng_ust_field_enum_range("DARK", 20, 29)
		lttng_ust_field_enum_auto("AUTO_AFTER_DARK")
		lttng_ust_field_enum_value("\"quoted\" label", 100)
	)
)

LTTNG_UST_TRACEPOINT_ENUM(trawl_fixture, signed_state,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_range("NEGATIVE", -1000, -1)
		lttng_ust_field_enum_value("ZERO", 0)
		lttng_ust_field_enum_range("SMALL", 1, 9)
		lttng_ust_field_enum_range("OVERLAP", 5, 15)
		lttng_ust_field_enum_value("MAX", 2147483647)
	)
)

LTTNG_UST_TRACEPOINT_ENUM(trawl_fixture, u64_flags,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("LOW", 1)
		lttng_ust_field_enum_range("HIGH", 0x8000000000000000ULL, 0xffffffffffffffffULL)
	)
)

/* Integers of every size, signed and unsigned, decimal and hex. */
LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, ints,
	LTTNG_UST_TP_ARGS(int8_t, s8, uint8_t, u8, int16_t, s16, uint16_t, u16,
			  int32_t, s32, uint32_t, u32, int64_t, s64, uint64_t, u64),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int8_t, s8, s8)
		lttng_ust_field_integer(uint8_t, u8, u8)
		lttng_ust_field_integer(int16_t, s16, s16)
		lttng_ust_field_integer(uint16_t, u16, u16)
		lttng_ust_field_integer(int32_t, s32, s32)
		lttng_ust_field_integer(uint32_t, u32, u32)
		lttng_ust_field_integer(int64_t, s64, s64)
		lttng_ust_field_integer(uint64_t, u64, u64)
		lttng_ust_field_integer_hex(int8_t, s8_hex, s8)
		lttng_ust_field_integer_hex(uint8_t, u8_hex, u8)
		lttng_ust_field_integer_hex(int16_t, s16_hex, s16)
		lttng_ust_field_integer_hex(uint16_t, u16_hex, u16)
		lttng_ust_field_integer_hex(int32_t, s32_hex, s32)
		lttng_ust_field_integer_hex(uint32_t, u32_hex, u32)
		lttng_ust_field_integer_hex(int64_t, s64_hex, s64)
		lttng_ust_field_integer_hex(uint64_t, u64_hex, u64)
		lttng_ust_field_integer(char, c, u8)
		lttng_ust_field_integer(long, l, s64)
		lttng_ust_field_integer(unsigned long, ul, u64)
	)
)

/* Network byte order (big-endian) integers, decimal and hex. */
LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, net_ints,
	LTTNG_UST_TP_ARGS(int16_t, s16, uint16_t, u16, int32_t, s32, uint32_t, u32,
			  int64_t, s64, uint64_t, u64),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer_network(int16_t, s16_be, s16)
		lttng_ust_field_integer_network(uint16_t, u16_be, u16)
		lttng_ust_field_integer_network(int32_t, s32_be, s32)
		lttng_ust_field_integer_network(uint32_t, u32_be, u32)
		lttng_ust_field_integer_network(int64_t, s64_be, s64)
		lttng_ust_field_integer_network(uint64_t, u64_be, u64)
		lttng_ust_field_integer_network_hex(uint16_t, u16_be_hex, u16)
		lttng_ust_field_integer_network_hex(int32_t, s32_be_hex, s32)
		lttng_ust_field_integer_network_hex(uint64_t, u64_be_hex, u64)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, floats,
	LTTNG_UST_TP_ARGS(float, f, double, d),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_float(float, f, f)
		lttng_ust_field_float(double, d, d)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, enums,
	LTTNG_UST_TP_ARGS(int, color, int32_t, state, uint64_t, flags),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_enum(trawl_fixture, color, int, color, color)
		lttng_ust_field_enum(trawl_fixture, color, uint8_t, color8, color)
		lttng_ust_field_enum(trawl_fixture, signed_state, int32_t, state, state)
		lttng_ust_field_enum(trawl_fixture, signed_state, int64_t, state64, state)
		lttng_ust_field_enum(trawl_fixture, u64_flags, uint64_t, flags, flags)
	)
)

/* Fixed arrays and sequences (length 0 included), integer and text. */
LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, arrays,
	LTTNG_UST_TP_ARGS(const int32_t *, vals, const uint8_t *, bytes,
			  const char *, text, unsigned int, seqlen,
			  const uint64_t *, big),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_array(int32_t, arr_s32, vals, 4)
		lttng_ust_field_array_hex(uint8_t, arr_u8_hex, bytes, 3)
		lttng_ust_field_array_network(int32_t, arr_s32_be, vals, 2)
		lttng_ust_field_array_network_hex(uint64_t, arr_u64_be_hex, big, 2)
		lttng_ust_field_array_text(char, arr_text, text, 8)
		lttng_ust_field_sequence(uint8_t, seq_u8, bytes, unsigned int, seqlen)
		lttng_ust_field_sequence_hex(int32_t, seq_s32_hex, vals, size_t, seqlen)
		lttng_ust_field_sequence_network(uint64_t, seq_u64_be, big, uint16_t, seqlen)
		lttng_ust_field_sequence_text(char, seq_text, text, unsigned char, seqlen)
		lttng_ust_field_array(uint64_t, arr_u64, big, 2)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, strings,
	LTTNG_UST_TP_ARGS(const char *, s, const char *, t),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(s, s)
		lttng_ust_field_string(t, t)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, empty,
	LTTNG_UST_TP_ARGS(),
	LTTNG_UST_TP_FIELDS()
)

/* The bulk event, emitted by every worker thread. */
LTTNG_UST_TRACEPOINT_EVENT(trawl_fixture, tick,
	LTTNG_UST_TP_ARGS(uint32_t, thread, uint64_t, seq, int64_t, val, const char *, msg),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint32_t, thread, thread)
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(int64_t, val, val)
		lttng_ust_field_string(msg, msg)
	)
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(trawl_fixture, tick, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)

#endif /* TRAWL_FIXTURE_TP_H */

#include <lttng/tracepoint-event.h>
