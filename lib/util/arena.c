/* SPDX-License-Identifier: MIT */
/* Bump allocator owning a trace model: one free releases everything. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct block {
	struct block *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

struct trawl_ctf_arena {
	struct block *head;
};

struct trawl_ctf_arena *tr_arena_new(void)
{
	return calloc(1, sizeof(struct trawl_ctf_arena));
}

void tr_arena_free(struct trawl_ctf_arena *a)
{
	if (!a)
		return;
	for (struct block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

void *tr_arena_alloc(struct trawl_ctf_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	struct block *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 32768 ? n : 32768;
		b = malloc(sizeof(*b) + cap);
		if (!b) {
			errno = ENOMEM;
			return NULL;
		}
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->mem + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *tr_arena_strndup(struct trawl_ctf_arena *a, const char *s, size_t n)
{
	char *d = tr_arena_alloc(a, n + 1);
	if (d)
		memcpy(d, s, n);
	return d;
}

char *tr_arena_strdup(struct trawl_ctf_arena *a, const char *s)
{
	return tr_arena_strndup(a, s, strlen(s));
}

void *tr_arena_push(struct trawl_ctf_arena *a, void *arr, size_t *n, size_t *cap, size_t sz)
{
	void **parr = arr;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		void *m = tr_arena_alloc(a, ncap * sz);
		if (!m)
			return NULL;
		if (*n)
			memcpy(m, *parr, *n * sz);
		*parr = m;
		*cap = ncap;
	}
	void *el = (char *)*parr + (*n)++ * sz;
	memset(el, 0, sz);
	return el;
}
