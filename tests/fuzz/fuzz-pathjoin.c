/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the join of the path records (lib/kern/pathjoin.c) on raw
 * bytes: a sequence of operations, each [op u8][len u16 LE][len bytes]:
 * op % 3 == 0 adds the bytes as a ring buffer record (as the eBPF program
 * queues them; malformed ones must be refused), 1 looks an entry event up
 * (tid i32, nr i32, ptr u64, t u64, eps u16 from the bytes), 2 expires up
 * to a time (u64). A path found must be its length, NUL-terminated.
 * (pathjoin.c is in libtrawl-kern.a, which the fuzz builds do not link:
 * the Makefile links its one object, FUZZ_KERN_pathjoin; it needs nothing
 * but lib/util.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kern/pathjoin.h"
#include "kern/pathnames-bpf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t ld(const uint8_t *p, size_t len, size_t off, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n && off + i < len; i++)
		v |= (uint64_t)p[off + i] << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_pjoin *p = tr_pjoin_new();
	size_t at = 0;

	if (!p)
		return 0;
	while (at + 3 <= size) {
		uint8_t op = data[at];
		size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
		at += 3;
		if (len > size - at)
			len = size - at;
		/* a copy of exactly len bytes: ASan sees any read past them */
		uint8_t *b = malloc(len ? len : 1);
		if (!b)
			break;
		memcpy(b, data + at, len);
		at += len;
		if (op % 3 == 0) {
			tr_pjoin_add(p, b, len);
		} else if (op % 3 == 1) {
			const char *s;
			size_t n;
			enum tr_pj_result r = tr_pjoin_find(p, (int32_t)ld(b, len, 0, 4),
							    (int32_t)ld(b, len, 4, 4), ld(b, len, 8, 8),
							    ld(b, len, 16, 8), ld(b, len, 24, 2), &s, &n);
			if (r == TR_PJ_FOUND && (!s || strlen(s) != n))
				abort();
		} else {
			size_t before = tr_pjoin_count(p);
			if (tr_pjoin_expire(p, ld(b, len, 0, 8)) > before)
				abort();
		}
		free(b);
	}
	tr_pjoin_free(p);
	return 0;
}
