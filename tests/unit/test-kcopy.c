/* SPDX-License-Identifier: MIT */
/*
 * test-kcopy: lib/kern/kcopy.h, the kernel converter's inline copies of a
 * field or span, against memcpy and memchr: kcopy_small on every length
 * 0..64 and kcopy_span on every length 0..100 at every source and
 * destination misalignment (the bytes copied, nothing written outside
 * them), kcopy_comm and kcopy_comm_here (in place) on char arrays of 1..32 bytes with the
 * first NUL at every position, several NULs, none, and random bytes
 * (0x01 and 0x80 among them: the zero-byte test's borrow makes false
 * flags above a NUL) — the text kept, every byte after the first NUL
 * zeroed, nothing written past the array.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kern/kcopy.h"
#include "tap.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint8_t rnd8(void)
{
	/* often the bytes that trouble a zero-byte test */
	static const uint8_t edge[] = { 0x00, 0x01, 0x80, 0x81, 0xff, 0x7f, 0xfe };
	uint64_t r = tap_xorshift(&rng);
	return (r & 3) ? (uint8_t)(r >> 8) : edge[(r >> 8) % sizeof(edge)];
}

/* comm as the kernel recorder wrote it before kcopy.h: memchr, memcpy, memset */
static void ref_comm(uint8_t *p, const uint8_t *s, size_t n)
{
	const uint8_t *z = memchr(s, 0, n);
	size_t k = z ? (size_t)(z - s) : n;
	memcpy(p, s, k);
	memset(p + k, 0, n - k);
}

#define CANARY 0xa5

/* dst (n bytes at off in a canary-filled buffer) against want: equal, and
 * the canaries around it untouched */
static bool same_guarded(const uint8_t *buf, size_t cap, size_t off, const uint8_t *want,
			 size_t n)
{
	if (memcmp(buf + off, want, n))
		return false;
	for (size_t i = 0; i < cap; i++)
		if ((i < off || i >= off + n) && buf[i] != CANARY)
			return false;
	return true;
}

int main(void)
{
	uint8_t src[160], dst[160], want[128];
	int bad = 0, cases = 0;

	/* kcopy_small: every length, every misalignment of either side */
	for (size_t n = 0; n <= 64; n++)
		for (size_t so = 0; so < 8; so++)
			for (size_t dof = 0; dof < 8; dof++) {
				for (size_t i = 0; i < sizeof(src); i++)
					src[i] = rnd8();
				memset(dst, CANARY, sizeof(dst));
				kcopy_small(dst + 16 + dof, src + so, n);
				memcpy(want, src + so, n);
				cases++;
				if (!same_guarded(dst, sizeof(dst), 16 + dof, want, n)) {
					if (bad++ < 5)
						printf("# kcopy_small n=%zu src+%zu dst+%zu differs\n", n, so, dof);
				}
			}
	is_int(bad, 0, "kcopy_small: %d copies (lengths 0..64, all misalignments) as memcpy",
	       cases);

	/* kcopy_span: every length up to past its 64-byte moves */
	bad = cases = 0;
	for (size_t n = 0; n <= 100; n++)
		for (size_t so = 0; so < 8; so++)
			for (size_t dof = 0; dof < 8; dof++) {
				for (size_t i = 0; i < sizeof(src); i++)
					src[i] = rnd8();
				memset(dst, CANARY, sizeof(dst));
				kcopy_span(dst + 16 + dof, src + so, n);
				memcpy(want, src + so, n);
				cases++;
				if (!same_guarded(dst, sizeof(dst), 16 + dof, want, n)) {
					if (bad++ < 5)
						printf("# kcopy_span n=%zu src+%zu dst+%zu differs\n", n, so, dof);
				}
			}
	is_int(bad, 0, "kcopy_span: %d copies (lengths 0..100, all misalignments) as memcpy",
	       cases);

	/* kcopy_comm: the first NUL at every position (or none), then
	 * anything after it */
	bad = cases = 0;
	for (size_t n = 1; n <= 32; n++)
		for (size_t at = 0; at <= n; at++)
			for (int rep = 0; rep < 40; rep++) {
				for (size_t i = 0; i < n; i++) {
					src[i] = rnd8();
					if (i < at && !src[i])
						src[i] = 0x01;	/* no NUL before at */
				}
				if (at < n)
					src[at] = 0;
				memset(dst, CANARY, sizeof(dst));
				kcopy_comm(dst + 8, src, n);
				ref_comm(want, src, n);
				cases++;
				if (!same_guarded(dst, sizeof(dst), 8, want, n)) {
					if (bad++ < 5)
						printf("# kcopy_comm n=%zu first NUL at %zu differs\n", n, at);
				}
				/* the same in place, over the record's bytes */
				memset(dst, CANARY, sizeof(dst));
				memcpy(dst + 8, src, n);
				kcopy_comm_here(dst + 8, n);
				if (!same_guarded(dst, sizeof(dst), 8, want, n)) {
					if (bad++ < 5)
						printf("# kcopy_comm_here n=%zu first NUL at %zu differs\n", n, at);
				}
			}
	is_int(bad, 0, "kcopy_comm, kcopy_comm_here: %d char arrays (1..32 bytes, first NUL anywhere or none) as memchr + memset",
	       cases);

	/* the kernel's comm: 16 bytes, the edge cases spelled out */
	static const char *const comms[] = { "", "a", "hackbench", "kworker/u8:1", "0123456789abcde",
					     "swapper/1" };
	bad = 0;
	for (size_t i = 0; i < sizeof(comms) / sizeof(*comms); i++) {
		uint8_t c[16];
		memset(c, 0x01, sizeof(c));	/* garbage after the NUL: zeroed */
		memcpy(c, comms[i], strlen(comms[i]) + 1);
		memset(dst, CANARY, sizeof(dst));
		kcopy_comm(dst, c, 16);
		uint8_t w[16] = { 0 };
		memcpy(w, comms[i], strlen(comms[i]));
		if (!same_guarded(dst, sizeof(dst), 0, w, 16)) {
			bad++;
			printf("# comm '%s' differs\n", comms[i]);
		}
	}
	uint8_t full[16];
	memcpy(full, "0123456789abcdef", 16);	/* no NUL: all 16 kept */
	kcopy_comm(dst, full, 16);
	bad += memcmp(dst, full, 16) != 0;
	is_int(bad, 0, "kcopy_comm: named comms, garbage after the NUL zeroed, a full one kept");
	return done_testing();
}
