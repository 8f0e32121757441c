/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the kernel recorder's ring-buffer page iterator
 * (lib/kern/kpage.h) on the raw bytes as one page, read whole and cut
 * short. Every event it returns must lie inside the bytes read, and the
 * walk must end.
 */
#include <stdint.h>
#include <stdlib.h>

#include "kern/kpage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *page, size_t len)
{
	struct kpage p;
	if (kpage_load(&p, page, len) < 0)
		return;
	uint64_t ts;
	uint32_t n;
	size_t events = 0;
	for (const uint8_t *d; (d = kpage_next(&p, &ts, &n));) {
		if (d < page + KPAGE_HDR || d + n > page + len)
			abort();
		if (++events > len / 4)
			abort();	/* every record takes at least 4 bytes */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes: ASan sees any read past them */
	uint8_t *page = malloc(size ? size : 1);
	if (!page)
		return 0;
	memcpy(page, data, size);
	walk(page, size);
	walk(page, size / 2);
	free(page);
	return 0;
}
