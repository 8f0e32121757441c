/* SPDX-License-Identifier: MIT */
/*
 * lib/agg/table.c - a hash table of fixed-size keys and values (open
 * addressing, linear probing, power-of-two capacity, at most 3/4 full),
 * and the buckets of the histograms. A slot is 8 bytes of "used", the
 * key, the value, each rounded up to 8 bytes: keys and values are aligned
 * for their uint64_t and double members.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agg/agg-internal.h"

uint64_t tr_hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	/* a word at a time (keys are mostly whole words), then the tail */
	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; n; b++, n--)
		h = (h ^ *b) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

#define R8(n) (((n) + 7) & ~(size_t)7)
#define KOFF 8
#define VOFF(t) (KOFF + R8((t)->ksz))
#define SSZ(t) (VOFF(t) + R8((t)->vsz))

void tr_table_init(struct tr_table *t, size_t ksz, size_t vsz)
{
	memset(t, 0, sizeof(*t));
	t->ksz = ksz;
	t->vsz = vsz;
}

void tr_table_release(struct tr_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

void tr_table_clear(struct tr_table *t)
{
	if (t->slots)
		memset(t->slots, 0, t->cap * SSZ(t));
	t->n = 0;
}

static uint8_t *slot(const struct tr_table *t, size_t i)
{
	return t->slots + i * SSZ(t);
}

static uint8_t *probe(const struct tr_table *t, const void *key)
{
	size_t mask = t->cap - 1, i = tr_hash_bytes(key, t->ksz) & mask;

	for (;; i = (i + 1) & mask) {
		uint8_t *s = slot(t, i);
		if (!s[0] || !memcmp(s + KOFF, key, t->ksz))
			return s;
	}
}

static int grow(struct tr_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64, ssz = SSZ(t);
	struct tr_table nt = *t;

	if (!(nt.slots = calloc(cap, ssz)))
		return -ENOMEM;
	nt.cap = cap;
	for (size_t i = 0; i < t->cap; i++) {
		uint8_t *s = slot(t, i);
		if (s[0])
			memcpy(probe(&nt, s + KOFF), s, ssz);
	}
	free(t->slots);
	*t = nt;
	return 0;
}

void *tr_table_get(struct tr_table *t, const void *key, bool *isnew)
{
	if ((t->n + 1) * 4 > t->cap * 3 && grow(t) < 0)
		return NULL;
	uint8_t *s = probe(t, key);
	*isnew = !s[0];
	if (!s[0]) {
		s[0] = 1;
		memcpy(s + KOFF, key, t->ksz);
		memset(s + VOFF(t), 0, t->vsz);
		t->n++;
	}
	return s + VOFF(t);
}

void *tr_table_find(const struct tr_table *t, const void *key)
{
	if (!t->cap)
		return NULL;
	uint8_t *s = probe(t, key);
	return s[0] ? s + VOFF(t) : NULL;
}

bool tr_table_next(const struct tr_table *t, size_t *i, const void **key, void **val)
{
	for (; *i < t->cap; (*i)++) {
		uint8_t *s = slot(t, *i);
		if (s[0]) {
			*key = s + KOFF;
			*val = s + VOFF(t);
			(*i)++;
			return true;
		}
	}
	return false;
}

/* ----------------------------------------------------------- buckets */

size_t tr_agg_log2_bucket(int64_t v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	return 2 + (size_t)(63 - __builtin_clzll((uint64_t)v));
}

int64_t tr_agg_log2_low(size_t b)
{
	if (b == 0)
		return INT64_MIN;
	if (b == 1)
		return 0;
	return (int64_t)(1ull << (b - 2));
}

size_t tr_agg_lin_nbuckets(const int64_t p[3])
{
	return (size_t)(((uint64_t)p[1] - (uint64_t)p[0] + (uint64_t)p[2] - 1) / (uint64_t)p[2]) + 2;
}

size_t tr_agg_lin_bucket(const int64_t p[3], int64_t v)
{
	if (v < p[0])
		return 0;
	if (v >= p[1])
		return tr_agg_lin_nbuckets(p) - 1;
	return 1 + (size_t)(((uint64_t)v - (uint64_t)p[0]) / (uint64_t)p[2]);
}

int64_t tr_agg_lin_low(const int64_t p[3], size_t b)
{
	if (b == 0)
		return INT64_MIN;
	if (b == tr_agg_lin_nbuckets(p) - 1)
		return p[1];
	return p[0] + (int64_t)(b - 1) * p[2];
}

/* factor^m */
static int64_t ipow(int64_t f, int64_t m)
{
	int64_t r = 1;
	while (m-- > 0)
		r *= f;
	return r;
}

/* A magnitude's width of bucket and number of buckets. */
static void magnitude(const int64_t p[4], int64_t m, int64_t *lo, int64_t *w, size_t *nb)
{
	int64_t hi = ipow(p[0], m + 1);
	*lo = ipow(p[0], m);
	*w = hi / p[3] > 0 ? hi / p[3] : 1;
	*nb = (size_t)((hi - *lo + *w - 1) / *w);
}

size_t tr_agg_ll_nbuckets(const int64_t p[4])
{
	size_t n = 2;
	for (int64_t m = p[1]; m <= p[2]; m++) {
		int64_t lo, w;
		size_t nb;
		magnitude(p, m, &lo, &w, &nb);
		n += nb;
	}
	return n;
}

size_t tr_agg_ll_bucket(const int64_t p[4], int64_t v)
{
	size_t b = 1;
	if (v < ipow(p[0], p[1]))
		return 0;
	for (int64_t m = p[1]; m <= p[2]; m++) {
		int64_t lo, w;
		size_t nb;
		magnitude(p, m, &lo, &w, &nb);
		if (v < lo + (int64_t)nb * w && v < ipow(p[0], m + 1))
			return b + (size_t)((v - lo) / w);
		b += nb;
	}
	return b;	/* the overflow bucket */
}

int64_t tr_agg_ll_low(const int64_t p[4], size_t b)
{
	if (b == 0)
		return INT64_MIN;
	b--;
	for (int64_t m = p[1]; m <= p[2]; m++) {
		int64_t lo, w;
		size_t nb;
		magnitude(p, m, &lo, &w, &nb);
		if (b < nb)
			return lo + (int64_t)b * w;
		b -= nb;
	}
	return ipow(p[0], p[2] + 1);
}
