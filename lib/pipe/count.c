/* SPDX-License-Identifier: MIT */
/* lib/pipe/count.c - the counting sink: events per event class. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe-internal.h"

struct trawl_count {
	uint64_t *n;			/* by class index */
	size_t cap;
	uint64_t total;
	const struct trawl_reader *r;
};

static int grow(struct trawl_count *c, size_t need)
{
	size_t cap = c->cap ? c->cap : 64;
	while (cap < need)
		cap *= 2;
	uint64_t *nn = realloc(c->n, cap * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	memset(nn + c->cap, 0, (cap - c->cap) * sizeof(*nn));
	c->n = nn;
	c->cap = cap;
	return 0;
}

static int count_start(void *self, struct trawl_reader *r)
{
	struct trawl_count *c = self;
	size_t n = trawl_reader_nclasses(r);

	c->r = r;
	return n > c->cap ? grow(c, n) : 0;
}

/* A class beyond the array (a live source added it). */
static __attribute__((noinline)) int count_slow(struct trawl_count *c, uint32_t i)
{
	int rc = grow(c, (size_t)i + 1);
	if (!rc)
		c->n[i]++;
	return rc;
}

static int count_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_count *c = self;
	uint64_t *cnt = c->n;
	size_t cap = c->cap;

	c->total += n;
	if (__builtin_expect(c->r && trawl_reader_nclasses(c->r) <= cap, 1)) {
		for (size_t i = 0; i < n; i++)
			cnt[ev[i].cls->index]++;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t k = ev[i].cls->index;
		if (__builtin_expect(k < cap, 1)) {
			cnt[k]++;
		} else {
			int rc = count_slow(c, k);
			if (rc)
				return rc;
			cnt = c->n;
			cap = c->cap;
		}
	}
	return 0;
}

static const struct trawl_sink_ops count_ops = {
	.sz = sizeof(count_ops),
	.name = "count",
	.start = count_start,
	.events = count_events,
};

struct trawl_count *trawl_count_new(void)
{
	struct trawl_count *c = calloc(1, sizeof(*c));

	if (!c)
		errno = ENOMEM;
	return c;
}

struct trawl_sink trawl_count_sink(struct trawl_count *c)
{
	return (struct trawl_sink){ &count_ops, c };
}

uint64_t trawl_count_class(const struct trawl_count *c, size_t index)
{
	return index < c->cap ? c->n[index] : 0;
}

uint64_t trawl_count_total(const struct trawl_count *c)
{
	return c->total;
}

void trawl_count_free(struct trawl_count *c)
{
	if (!c)
		return;
	free(c->n);
	free(c);
}
