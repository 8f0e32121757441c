// SPDX-License-Identifier: MIT
/* lib/export/pb.c - the protocol buffers encoder (pb.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/pb.h"

void tr_pb_init(struct tr_pb *pb)
{
	memset(pb, 0, sizeof(*pb));
}

void tr_pb_release(struct tr_pb *pb)
{
	free(pb->buf);
	tr_pb_init(pb);
}

void tr_pb_clear(struct tr_pb *pb)
{
	pb->len = 0;
	pb->depth = 0;
}

/* Room for n more bytes; false (nomem set) when there is none. */
static bool room(struct tr_pb *pb, size_t n)
{
	if (pb->nomem)
		return false;
	if (pb->len + n <= pb->cap)
		return true;
	/* room up to byte len + n - 1 (len + n > cap >= 0 here) */
	if (tr_grow(&pb->buf, &pb->cap, pb->len + n - 1, 1)) {
		pb->nomem = true;
		return false;
	}
	return true;
}

size_t tr_pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

void tr_pb_raw(struct tr_pb *pb, const void *p, size_t n)
{
	if (!n || !room(pb, n))
		return;
	memcpy(pb->buf + pb->len, p, n);
	pb->len += n;
}

void tr_pb_uvarint(struct tr_pb *pb, uint64_t v)
{
	if (room(pb, 10))
		pb->len += put_varint(pb->buf + pb->len, v);
}

void tr_pb_tag(struct tr_pb *pb, uint32_t field, unsigned wire)
{
	tr_pb_uvarint(pb, ((uint64_t)field << 3) | wire);
}

void tr_pb_uint(struct tr_pb *pb, uint32_t field, uint64_t v)
{
	tr_pb_tag(pb, field, TR_PB_VARINT);
	tr_pb_uvarint(pb, v);
}

void tr_pb_int(struct tr_pb *pb, uint32_t field, int64_t v)
{
	tr_pb_uint(pb, field, (uint64_t)v);
}

void tr_pb_fixed64(struct tr_pb *pb, uint32_t field, uint64_t v)
{
	tr_pb_tag(pb, field, TR_PB_I64);
	if (!room(pb, 8))
		return;
	for (int i = 0; i < 8; i++)
		pb->buf[pb->len++] = (uint8_t)(v >> (8 * i));
}

void tr_pb_bytes(struct tr_pb *pb, uint32_t field, const void *p, size_t n)
{
	tr_pb_tag(pb, field, TR_PB_LEN);
	tr_pb_uvarint(pb, n);
	tr_pb_raw(pb, p, n);
}

void tr_pb_str(struct tr_pb *pb, uint32_t field, const char *s)
{
	tr_pb_bytes(pb, field, s, strlen(s));
}

void tr_pb_strn(struct tr_pb *pb, uint32_t field, const char *s, size_t n)
{
	tr_pb_bytes(pb, field, s, strnlen(s, n));
}

void tr_pb_begin(struct tr_pb *pb, uint32_t field)
{
	tr_pb_tag(pb, field, TR_PB_LEN);
	if (pb->depth >= TR_PB_MAX_DEPTH) {
		pb->nomem = true;	/* a caller's bug: reported as a failure */
		return;
	}
	if (!room(pb, 1))
		return;
	pb->buf[pb->len++] = 0;		/* the length's first byte, see tr_pb_end() */
	pb->open[pb->depth++] = pb->len;
}

void tr_pb_end(struct tr_pb *pb)
{
	if (!pb->depth || pb->nomem)
		return;
	size_t start = pb->open[--pb->depth];
	size_t body = pb->len - start;
	size_t n = tr_pb_varint_len(body);

	if (n > 1) {
		/* The length needs more than the byte reserved: move the body. */
		if (!room(pb, n - 1))
			return;
		memmove(pb->buf + start + n - 1, pb->buf + start, body);
		pb->len += n - 1;
	}
	put_varint(pb->buf + start - 1, body);
}
