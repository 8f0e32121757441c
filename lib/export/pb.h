/* SPDX-License-Identifier: MIT */
/*
 * lib/export/pb.h - a small protocol buffers encoder: varints, 64-bit
 * fixed values, length-delimited fields and nested messages, written into
 * a growing buffer in the canonical form (the shortest varints, as protoc
 * writes them). Field numbers are the caller's (lib/export/perfetto.c
 * takes them from Perfetto's public .proto files, docs/export.md).
 *
 * A nested message is opened with tr_pb_begin() and closed with
 * tr_pb_end(): its length is written in front of it then (one byte is
 * reserved; a longer length moves the body, which only long messages pay).
 * Out of memory is sticky (pb->nomem), checked once by the caller.
 */
#ifndef TRAWL_EXPORT_PB_H
#define TRAWL_EXPORT_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define TR_PB_MAX_DEPTH 16

/* Wire types. */
enum { TR_PB_VARINT = 0, TR_PB_I64 = 1, TR_PB_LEN = 2, TR_PB_I32 = 5 };

struct tr_pb {
	uint8_t *buf;
	size_t len, cap;
	size_t open[TR_PB_MAX_DEPTH];	/* where each open message's body starts */
	unsigned depth;
	bool nomem;
};

TRAWL_HIDDEN void tr_pb_init(struct tr_pb *pb);
TRAWL_HIDDEN void tr_pb_release(struct tr_pb *pb);
/* Empties the buffer (no message may be open). */
TRAWL_HIDDEN void tr_pb_clear(struct tr_pb *pb);
/* Raw bytes (an already encoded field or message body). */
TRAWL_HIDDEN void tr_pb_raw(struct tr_pb *pb, const void *p, size_t n);
/* A bare varint (no tag). */
TRAWL_HIDDEN void tr_pb_uvarint(struct tr_pb *pb, uint64_t v);
/* A field's tag: (field << 3) | wire type. */
TRAWL_HIDDEN void tr_pb_tag(struct tr_pb *pb, uint32_t field, unsigned wire);
/* uint32/uint64/bool/enum fields; int32/int64 take tr_pb_int() (a negative
 * value is ten bytes, as protoc writes it). */
TRAWL_HIDDEN void tr_pb_uint(struct tr_pb *pb, uint32_t field, uint64_t v);
TRAWL_HIDDEN void tr_pb_int(struct tr_pb *pb, uint32_t field, int64_t v);
TRAWL_HIDDEN void tr_pb_fixed64(struct tr_pb *pb, uint32_t field, uint64_t v);
TRAWL_HIDDEN void tr_pb_bytes(struct tr_pb *pb, uint32_t field, const void *p, size_t n);
/* A string field: s, or its first n bytes up to a NUL (strnlen). */
TRAWL_HIDDEN void tr_pb_str(struct tr_pb *pb, uint32_t field, const char *s);
TRAWL_HIDDEN void tr_pb_strn(struct tr_pb *pb, uint32_t field, const char *s, size_t n);
/* Opens a nested message in field; tr_pb_end() closes the innermost. */
TRAWL_HIDDEN void tr_pb_begin(struct tr_pb *pb, uint32_t field);
TRAWL_HIDDEN void tr_pb_end(struct tr_pb *pb);
/* Bytes a varint of v takes. */
TRAWL_HIDDEN size_t tr_pb_varint_len(uint64_t v);

#endif
