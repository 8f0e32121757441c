/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/kcopy.h - the converter's copies of one field or span of an
 * event (convert.c), inline: an event's fields are a few bytes each, and a
 * call to memcpy per field cost more than the copy (a fifth of the
 * converter's time under hackbench). tests/unit/test-kcopy.c checks them
 * against memcpy and memchr on every length and NUL position.
 */
#ifndef TRAWL_KERN_KCOPY_H
#define TRAWL_KERN_KCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Small copies inline (the fields of an event are a few bytes each: a
 * call to memcpy per field cost more than the copy): n bytes from s to d,
 * as memcpy, by overlapping 8- or 4-byte moves up to 16 bytes.
 */
static inline void kcopy_small(uint8_t *d, const uint8_t *s, size_t n)
{
	uint64_t a, b;
	uint32_t x, y;
	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		memcpy(d, s, n);
	}
}

/*
 * A span of an event's record (n bytes from s to d, as memcpy, s and d
 * apart): up to 64 bytes by overlapping 16-byte moves (a sched_switch's
 * payload is one span of 60), memcpy above.
 */
static inline void kcopy_16(uint8_t *d, const uint8_t *s)
{
	uint64_t a, b;
	memcpy(&a, s, 8);
	memcpy(&b, s + 8, 8);
	memcpy(d, &a, 8);
	memcpy(d + 8, &b, 8);
}

static inline void kcopy_span(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n <= 16) {
		kcopy_small(d, s, n);
	} else if (n <= 32) {
		kcopy_16(d, s);
		kcopy_16(d + n - 16, s + n - 16);
	} else if (n <= 64) {
		kcopy_16(d, s);
		kcopy_16(d + 16, s + 16);
		kcopy_16(d + n - 32, s + n - 32);
		kcopy_16(d + n - 16, s + n - 16);
	} else {
		memcpy(d, s, n);
	}
}

/* The bytes of v before its first NUL kept, the others zeroed; *nul: v had
 * one. Little-endian: byte i of v is bits 8i..8i+7. */
static inline uint64_t kcopy_upto_nul(uint64_t v, bool *nul)
{
	uint64_t z = (v - 0x0101010101010101ull) & ~v & 0x8080808080808080ull;
	*nul = z != 0;
	if (!z)
		return v;
	/* the lowest flagged byte is the first NUL (flags above it may be
	 * false ones, below it never) */
	unsigned at = (unsigned)__builtin_ctzll(z) / 8;
	return at ? v & (~0ull >> (64 - 8 * at)) : 0;
}

/* A char[n] field (comm): its text, the bytes after the first NUL zeroed. */
static inline void kcopy_comm(uint8_t *p, const uint8_t *s, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n == 16) {
		uint64_t a, b;
		bool nul;
		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		a = kcopy_upto_nul(a, &nul);
		b = nul ? 0 : kcopy_upto_nul(b, &nul);
		memcpy(p, &a, 8);
		memcpy(p + 8, &b, 8);
		return;
	}
#endif
	const uint8_t *z = memchr(s, 0, n);
	size_t k = z ? (size_t)(z - s) : n;
	memcpy(p, s, k);
	memset(p + k, 0, n - k);
}

/* kcopy_comm's result in place: the n bytes at p kept up to the first
 * NUL, those after it zeroed. */
static inline void kcopy_comm_here(uint8_t *p, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n == 16) {
		uint64_t a, b;
		bool nul;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		a = kcopy_upto_nul(a, &nul);
		b = nul ? 0 : kcopy_upto_nul(b, &nul);
		memcpy(p, &a, 8);
		memcpy(p + 8, &b, 8);
		return;
	}
#endif
	uint8_t *z = memchr(p, 0, n);
	if (z)
		memset(z, 0, n - (size_t)(z - p));
}

#endif
