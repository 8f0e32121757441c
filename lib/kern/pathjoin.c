/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/pathjoin.c - the path records of each thread, found by the
 * interval that holds an entry event's time (pathjoin.h).
 *
 * Records are kept per thread in an open-addressing table (linear probing,
 * a power-of-two size at most half full), each thread's in the order they
 * came, which is the order of their calls' exits: increasing hi, in
 * v[h..n). Events mostly take their thread's oldest record: that is
 * v[h++], without moving the others (a thread's records can pile up by
 * thousands while the reader is behind).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kern/pathjoin.h"
#include "kern/pathnames-bpf.h"

struct prec {
	uint64_t lo, hi, ptr;
	int32_t nr, len;		/* len < 0: the copy failed */
	char *s;			/* len - 1 bytes and a NUL; NULL when len < 0 */
};

struct tq {
	int32_t tid;
	bool used;
	size_t h, n, cap;		/* the records: v[h..n) */
	struct prec *v;
};

struct tr_pjoin {
	struct tq *tab;
	size_t mask;			/* table size - 1 */
	size_t nused;			/* slots with a thread */
	size_t nrec;
	char *last;			/* the last found path (valid until the next call) */
};

static size_t slot_of(int32_t tid, size_t mask)
{
	return ((uint32_t)tid * 2654435761u) & mask;
}

struct tr_pjoin *tr_pjoin_new(void)
{
	struct tr_pjoin *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->mask = 63;
	p->tab = calloc(p->mask + 1, sizeof(*p->tab));
	if (!p->tab) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static void tq_release(struct tq *q)
{
	for (size_t i = q->h; i < q->n; i++)
		free(q->v[i].s);
	free(q->v);
	q->v = NULL;
	q->h = q->n = q->cap = 0;
}

void tr_pjoin_free(struct tr_pjoin *p)
{
	if (!p)
		return;
	for (size_t i = 0; i <= p->mask; i++)
		tq_release(&p->tab[i]);
	free(p->tab);
	free(p->last);
	free(p);
}

size_t tr_pjoin_count(const struct tr_pjoin *p)
{
	return p->nrec;
}

static struct tq *lookup(struct tr_pjoin *p, int32_t tid)
{
	for (size_t i = slot_of(tid, p->mask);; i = (i + 1) & p->mask) {
		struct tq *q = &p->tab[i];

		if (!q->used)
			return NULL;
		if (q->tid == tid)
			return q;
	}
}

/* Rebuilds the table at size `size`, without the threads that have no record. */
static int rehash(struct tr_pjoin *p, size_t size)
{
	struct tq *tab = calloc(size, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	p->nused = 0;
	for (size_t i = 0; i <= p->mask; i++) {
		struct tq *q = &p->tab[i];

		if (!q->used)
			continue;
		if (q->h == q->n) {
			free(q->v);
			continue;
		}
		size_t j = slot_of(q->tid, size - 1);
		while (tab[j].used)
			j = (j + 1) & (size - 1);
		tab[j] = *q;
		p->nused++;
	}
	free(p->tab);
	p->tab = tab;
	p->mask = size - 1;
	return 0;
}

static struct tq *get(struct tr_pjoin *p, int32_t tid)
{
	struct tq *q = lookup(p, tid);

	if (q)
		return q;
	if ((p->nused + 1) * 2 > p->mask + 1 && rehash(p, (p->mask + 1) * 2) < 0)
		return NULL;
	size_t i = slot_of(tid, p->mask);
	while (p->tab[i].used)
		i = (i + 1) & p->mask;
	q = &p->tab[i];
	q->used = true;
	q->tid = tid;
	p->nused++;
	return q;
}

int tr_pjoin_add(struct tr_pjoin *p, const void *data, size_t size)
{
	struct pn_rec h;
	struct prec r;

	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, data, sizeof(h));
	if (h.lo >= h.hi || h.len == 0 || h.len > PN_PATH_MAX)
		return -EINVAL;
	if (h.len > 0) {
		/* the path, its NUL last and no other before it */
		const char *s = (const char *)data + sizeof(h);

		if (size - sizeof(h) < (size_t)h.len || s[h.len - 1] ||
		    memchr(s, 0, (size_t)h.len - 1))
			return -EINVAL;
	}
	if (p->nrec >= TR_PJOIN_MAX_RECORDS)
		return -ENOSPC;
	r = (struct prec){ .lo = h.lo, .hi = h.hi, .ptr = h.ptr, .nr = h.nr, .len = h.len };
	if (h.len > 0 && !(r.s = malloc((size_t)h.len)))
		return -ENOMEM;
	if (r.s)
		memcpy(r.s, (const char *)data + sizeof(h), (size_t)h.len);
	struct tq *q = get(p, (int32_t)h.tid);
	if (q && q->h && q->n == q->cap) {	/* the taken ones' room first */
		memmove(q->v, q->v + q->h, (q->n - q->h) * sizeof(*q->v));
		q->n -= q->h;
		q->h = 0;
	}
	if (!q || tr_grow(&q->v, &q->cap, q->n, sizeof(*q->v)) < 0) {
		free(r.s);
		return -ENOMEM;
	}
	/* a thread's records come in the order of their exits; keep it so
	 * even if they did not (a record is never moved across another) */
	size_t i = q->n;
	while (i > q->h && q->v[i - 1].hi > r.hi)
		i--;
	memmove(&q->v[i + 1], &q->v[i], (q->n - i) * sizeof(*q->v));
	q->v[i] = r;
	q->n++;
	p->nrec++;
	return 0;
}

static void take(struct tr_pjoin *p, struct tq *q, size_t i)
{
	free(p->last);
	p->last = q->v[i].s;
	/* the records before it move up one: none, mostly */
	memmove(&q->v[q->h + 1], &q->v[q->h], (i - q->h) * sizeof(*q->v));
	q->h++;
	if (q->h == q->n)
		q->h = q->n = 0;
	p->nrec--;
}

enum tr_pj_result tr_pjoin_find(struct tr_pjoin *p, int32_t tid, int32_t nr, uint64_t ptr,
				uint64_t t, uint64_t eps, const char **s, size_t *n)
{
	struct tq *q = lookup(p, tid);

	*s = NULL;
	*n = 0;
	if (!q)
		return TR_PJ_WAIT;
	for (size_t i = q->h; i < q->n; i++) {
		const struct prec *r = &q->v[i];

		/* wholly before t: an earlier call's */
		if (r->hi < t && t - r->hi >= eps)
			continue;
		/* wholly after t: a later call has a record, t's call none */
		if (r->lo > t && r->lo - t >= eps)
			return TR_PJ_LOST;
		/* t in (lo, hi], eps away from both bounds */
		if (t > r->lo && t - r->lo > eps && t <= r->hi && r->hi - t >= eps) {
			if (r->nr != nr || r->ptr != ptr)
				return TR_PJ_MISMATCH;
			if (r->len < 0) {
				take(p, q, i);
				return TR_PJ_FAULT;
			}
			*n = (size_t)r->len - 1;
			take(p, q, i);
			*s = p->last;
			return TR_PJ_FOUND;
		}
		return TR_PJ_AMBIGUOUS;
	}
	return TR_PJ_WAIT;
}

size_t tr_pjoin_expire(struct tr_pjoin *p, uint64_t before)
{
	size_t gone = 0, empty = 0;

	for (size_t i = 0; i <= p->mask; i++) {
		struct tq *q = &p->tab[i];
		if (!q->used)
			continue;
		size_t k = q->h;
		while (k < q->n && q->v[k].hi < before)
			free(q->v[k++].s);
		gone += k - q->h;
		q->h = k;
		if (q->h == q->n) {
			q->h = q->n = 0;
			empty++;
		}
	}
	p->nrec -= gone;
	/* threads gone: shrink when most slots hold nothing */
	if (empty * 2 > p->nused && p->nused > 32) {
		size_t live = p->nused - empty, size = 64;

		while (size < live * 4)
			size *= 2;
		rehash(p, size);
	}
	return gone;
}
