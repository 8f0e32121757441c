/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/inc.c - the incremental form: one message at a time, constant
 * memory per pair, the same result as the batch form.
 *
 * State: the lower hull of P and the upper hull of Q (arrays of hull_cap
 * vertices, sorted by x), and the feasible slope interval R = [lo, hi].
 * Invariant: on R, the envelopes U(a) = min_P (y - a x) and
 * D(a) = max_Q (y - a x) of the kept vertices equal those of every point
 * seen. Hence:
 *   - a point on or above the lower hull (below the upper) changes
 *     nothing and is discarded;
 *   - a new hull vertex narrows R by its constraints against the kept
 *     vertices of the other hull only (the others are implied on R);
 *   - a hull vertex that is the tangent for no slope of R is dropped: R
 *     only narrows, so it never matters again. Only the vertices near the
 *     tangents at lo and hi, and those between, stay.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sync-internal.h"

struct trawl_sync_inc {
	struct pt *h[2];	/* 0: P lower hull, 1: Q upper hull */
	size_t n[2];
	size_t cap;
	struct srange r;
	uint32_t ppm;
	int have_pivot;
	int64_t x0, y0, xmin, xmax;
	uint64_t count[2], dropped;
};

struct trawl_sync_inc *trawl_sync_inc_new(const struct trawl_sync_opts *opts)
{
	struct trawl_sync_inc *s = calloc(1, sizeof(*s));
	size_t cap = 1024;
	if (!s)
		return NULL;
	s->ppm = 500;
	if (opts && opts->size >= offsetof(struct trawl_sync_opts, max_drift_ppm) + 4 &&
	    opts->max_drift_ppm)
		s->ppm = opts->max_drift_ppm;
	if (opts && opts->size >= offsetof(struct trawl_sync_opts, hull_cap) + 4 &&
	    opts->hull_cap)
		cap = opts->hull_cap < 8 ? 8 : opts->hull_cap;
	if (s->ppm >= 1000000) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	s->cap = cap;
	s->h[0] = malloc(cap * sizeof(struct pt));
	s->h[1] = malloc(cap * sizeof(struct pt));
	if (!s->h[0] || !s->h[1]) {
		trawl_sync_inc_free(s);
		errno = ENOMEM;
		return NULL;
	}
	tr_sync_range_init(&s->r);
	s->xmin = INT64_MAX;
	s->xmax = INT64_MIN;
	return s;
}

void trawl_sync_inc_free(struct trawl_sync_inc *s)
{
	if (!s)
		return;
	free(s->h[0]);
	free(s->h[1]);
	free(s);
}

size_t trawl_sync_inc_memory(const struct trawl_sync_inc *s)
{
	return s ? sizeof(*s) + 2 * s->cap * sizeof(struct pt) : 0;
}

static void del_at(struct pt *h, size_t *n, size_t i)
{
	memmove(h + i, h + i + 1, (*n - i - 1) * sizeof(*h));
	(*n)--;
}

/*
 * Inserts p into the hull (sgn 1: lower, -1: upper). Returns 1 if p is
 * now a vertex, 0 if it changes nothing, -1 if the hull is full.
 */
static int hull_insert(struct pt *h, size_t *n, size_t cap, struct pt p, int sgn)
{
	size_t lo = 0, hi = *n;
	while (lo < hi) {	/* first vertex with x >= p.x */
		size_t mid = (lo + hi) / 2;
		if (h[mid].x < p.x)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i = lo;
	if (i < *n && h[i].x == p.x) {
		if (sgn * ((i128)p.y - h[i].y) >= 0)
			return 0;
		del_at(h, n, i);
	} else if (i > 0 && i < *n && sgn * cross3(h[i - 1], h[i], p) >= 0) {
		return 0;
	}
	if (*n == cap)
		return -1;
	memmove(h + i + 1, h + i, (*n - i) * sizeof(*h));
	h[i] = p;
	(*n)++;
	while (i >= 2 && sgn * cross3(h[i - 2], h[i - 1], h[i]) <= 0) {
		del_at(h, n, i - 1);
		i--;
	}
	while (i + 2 < *n && sgn * cross3(h[i], h[i + 1], h[i + 2]) <= 0)
		del_at(h, n, i + 1);
	return 1;
}

/* Drops the vertices that are the tangent for no slope of R. */
static void prune(struct trawl_sync_inc *s)
{
	struct pt *p = s->h[0], *q = s->h[1];
	size_t *np = &s->n[0], *nq = &s->n[1];
	struct rat lo = s->r.lo, hi = s->r.hi;

	/* Lower hull: vertex i is the tangent for slopes in
	 * [slope(i-1, i), slope(i, i+1)], increasing along the hull. */
	if (lo.d)
		while (*np >= 2 && rat_cmp(slope_of(p[0], p[1]), lo) < 0)
			del_at(p, np, 0);
	if (hi.d)
		while (*np >= 2 && rat_cmp(slope_of(p[*np - 2], p[*np - 1]), hi) > 0)
			(*np)--;
	/* Upper hull: edge slopes decrease along it. */
	if (hi.d)
		while (*nq >= 2 && rat_cmp(slope_of(q[0], q[1]), hi) > 0)
			del_at(q, nq, 0);
	if (lo.d)
		while (*nq >= 2 && rat_cmp(slope_of(q[*nq - 2], q[*nq - 1]), lo) < 0)
			(*nq)--;
}

static int in_range(int64_t v, int64_t piv)
{
	i128 d = (i128)v - piv;
	return d < SYNC_LIMIT && d > -SYNC_LIMIT;
}

int trawl_sync_inc_add(struct trawl_sync_inc *s, enum trawl_sync_dir dir,
		       int64_t send, int64_t recv)
{
	struct pt p;
	int k = dir == TRAWL_SYNC_BA;

	if (!s || (dir != TRAWL_SYNC_AB && dir != TRAWL_SYNC_BA))
		return -EINVAL;
	p.x = k ? recv : send;
	p.y = k ? send : recv;
	if (!s->have_pivot) {
		s->x0 = p.x;
		s->y0 = p.y;
		s->have_pivot = 1;
	} else if (!in_range(p.x, s->x0) || !in_range(p.y, s->y0)) {
		return -ERANGE;
	}
	s->count[k]++;
	if (p.x < s->xmin)
		s->xmin = p.x;
	if (p.x > s->xmax)
		s->xmax = p.x;

	int r = hull_insert(s->h[k], &s->n[k], s->cap, p, k ? -1 : 1);
	if (r < 0) {
		s->dropped++;
		return 0;
	}
	if (r == 0 || s->r.fail)
		return 0;
	const struct pt *o = s->h[!k];
	for (size_t i = 0; i < s->n[!k]; i++)
		tr_sync_range_add(&s->r, k ? o[i] : p, k ? p : o[i]);
	if (!s->r.fail)
		prune(s);
	return 0;
}

int trawl_sync_inc_result(const struct trawl_sync_inc *s, struct trawl_sync_pair *out)
{
	if (!s || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	int64_t x_c = s->count[0] + s->count[1] ? (int64_t)(((i128)s->xmin + s->xmax) >> 1) : 0;
	int ret = tr_sync_solve(s->h[0], s->n[0], s->h[1], s->n[1], &s->r, x_c, s->ppm, out);
	if (ret) {
		trawl_sync_pair_release(out);
		return ret;
	}
	out->n_ab = s->count[0];
	out->n_ba = s->count[1];
	out->x_first = s->count[0] + s->count[1] ? s->xmin : 0;
	out->x_last = s->count[0] + s->count[1] ? s->xmax : 0;
	out->dropped = s->dropped;
	return 0;
}
