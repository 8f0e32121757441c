/* SPDX-License-Identifier: MIT */
/*
 * test-util: lib/util/util.c's tr_grow, the one way libtrawl grows a
 * malloc'd array: it makes room for the element asked for however far past
 * the capacity it is, keeps the array when it cannot, and leaves a
 * capacity that already holds the element alone.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

int main(void)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	is_int(tr_grow(&v, &cap, 0, sizeof(*v)), 0, "first element of an empty array");
	is_int(cap, 16, "an empty array starts at 16");
	v[0] = 7;

	/* far past twice the capacity: one call must still hold element n */
	is_int(tr_grow(&v, &cap, 1000, sizeof(*v)), 0, "element 1000 of 16");
	ok(cap > 1000, "capacity %zu holds element 1000", cap);
	is_int(cap, 1024, "doubled to the first power of two past 1000");
	memset(v, 0xab, cap * sizeof(*v));	/* the whole of it is ours (ASan checks) */
	v[1000] = 1;

	uint32_t *same = v;

	is_int(tr_grow(&v, &cap, 1023, sizeof(*v)), 0, "element 1023 of 1024");
	ok(v == same && cap == 1024, "no reallocation while it fits");
	is_int(tr_grow(&v, &cap, 1024, sizeof(*v)), 0, "element 1024 of 1024");
	is_int(cap, 2048, "doubled once when one past");

	/* a size that cannot be allocated: -ENOMEM, the array as it was */
	same = v;
	is_int(tr_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v)), -ENOMEM, "overflowing size");
	ok(v == same && cap == 2048, "array and capacity kept");
	is_int(tr_grow(&v, &cap, SIZE_MAX, 1), -ENOMEM, "element SIZE_MAX");
	ok(v == same && cap == 2048, "array and capacity kept");
	free(v);
	return done_testing();
}
