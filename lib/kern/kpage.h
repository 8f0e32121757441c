/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/kpage.h - iterating the events of one ftrace ring-buffer page
 * (what trace_pipe_raw returns), for a little-endian kernel with 8-byte
 * longs: the layout the kernel's events/header_page and header_event
 * describe there, and that libtraceevent's kbuffer reads for any kernel.
 *
 * Why not kbuffer: it reads every word through a function pointer (it
 * supports either byte order and both long sizes) and costs about 36 ns
 * per event here, a third of the kernel recorder's CPU at 2 M events/s.
 * This loop costs a few. krec.c uses it when the page layout is the one
 * below and falls back to kbuffer otherwise; tests/unit/test-kpage.c
 * checks that both give the same events on pages of every record type.
 *
 * A page: u64 timestamp, u64 commit (bytes of data in bits 0..26; bit 31
 * "events were missed before this page", bit 30 "and their count is stored
 * as a u64 right after the data"), then the data from byte 16. Each record
 * starts with a u32: type_len in bits 0..4, time delta in bits 5..31.
 *   type_len 1..28  data of type_len * 4 bytes follows
 *   type_len 0      a u32 length (of itself and the data) then the data
 *   29 padding      a discarded event: u32 length of what follows; with a
 *                   zero delta, the rest of the page is empty
 *   30 time extend  a u32 holding delta bits 27..58
 *   31 time stamp   the same, but an absolute time (bits 59..63 are the
 *                   current time's)
 */
#ifndef TRAWL_CLI_KERNEL_KPAGE_H
#define TRAWL_CLI_KERNEL_KPAGE_H

#include <stdint.h>
#include <string.h>

#define KPAGE_HDR 16u
#define KPAGE_COMMIT_MASK ((1u << 27) - 1)
#define KPAGE_MISSED (1ull << 31)
#define KPAGE_MISSED_STORED (1ull << 30)
#define KPAGE_TS_MSB (0xf8ull << 56)

struct kpage {
	const uint8_t *data;		/* page + KPAGE_HDR */
	uint32_t size;			/* committed data bytes */
	uint32_t pos;			/* next record, from data */
	uint64_t ts;			/* time of the last record read */
	int64_t missed;			/* before this page: count, -1 unknown, 0 none */
};

static inline uint32_t kpage_ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t kpage_ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Loads the page of len bytes (what read(2) returned; nothing past it is
 * read). Returns -1 when len is too short to hold a header. */
static inline int kpage_load(struct kpage *p, const uint8_t *page, size_t len)
{
	if (len < KPAGE_HDR)
		return -1;
	uint64_t commit = kpage_ld64(page + 8);
	uint32_t size = (uint32_t)commit & KPAGE_COMMIT_MASK;
	p->data = page + KPAGE_HDR;
	p->ts = kpage_ld64(page);
	p->pos = 0;
	p->missed = 0;
	if (commit & KPAGE_MISSED) {
		p->missed = -1;
		if ((commit & KPAGE_MISSED_STORED) && len >= KPAGE_HDR + 8 &&
		    size <= len - KPAGE_HDR - 8)
			p->missed = (int64_t)kpage_ld64(p->data + size);
	}
	/* never past what was read */
	p->size = size < len - KPAGE_HDR ? size : (uint32_t)(len - KPAGE_HDR);
	return 0;
}

/* The next event's data and size, with its time in *ts; NULL at the end of
 * the page (also where a record would run past the committed data). */
static inline const uint8_t *kpage_next(struct kpage *p, uint64_t *ts, uint32_t *size)
{
	const uint8_t *d = p->data;
	uint32_t pos = p->pos, end = p->size;
	uint64_t t = p->ts;
	while (pos < end && end - pos >= 4) {
		uint32_t h = kpage_ld32(d + pos);
		uint32_t type = h & 31, delta = h >> 5;
		if (type - 1 < 28) {
			uint32_t len = type * 4;
			if (len > end - pos - 4)
				break;
			t += delta;
			p->pos = pos + 4 + len;
			p->ts = t;
			*ts = t;
			*size = len;
			return d + pos + 4;
		}
		if (end - pos < 8)
			break;
		uint32_t w = kpage_ld32(d + pos + 4);
		switch (type) {
		case 0: {
			if (w < 4)
				goto out;
			uint32_t len = ((w - 4) + 3) & ~3u;
			if (len > end - pos - 8)
				goto out;
			t += delta;
			p->pos = pos + 8 + len;
			p->ts = t;
			*ts = t;
			*size = len;
			return d + pos + 8;
		}
		case 29:	/* padding */
			if (!delta || w > end - pos - 4)
				goto out;
			t += delta;
			pos += 4 + (w < 4 ? 4 : w);
			break;
		case 30:	/* time extend */
			t += ((uint64_t)w << 27) + delta;
			pos += 8;
			break;
		default:	/* 31: absolute time stamp */
			t = (((uint64_t)w << 27) + delta) | (t & KPAGE_TS_MSB);
			pos += 8;
			break;
		}
	}
out:
	p->pos = end;
	p->ts = t;
	return NULL;
}

#endif
