/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/sync-internal.h - hulls, slope ranges and the solver shared by
 * the batch and incremental forms (lib/sync/pair.c, lib/sync/inc.c).
 *
 * Points are absolute int64 ns; every difference is taken in 128 bits and
 * every input lies within 2^61 of the pair's first point, so differences
 * stay below 2^62 and products of two differences below 2^124.
 */
#ifndef TRAWL_SYNC_INTERNAL_H
#define TRAWL_SYNC_INTERNAL_H

#include <stdint.h>

#include "internal.h"
#include "trawl/sync.h"

typedef __int128 i128;

#define SYNC_LIMIT ((int64_t)1 << 61)
#define SYNC_ONE ((int64_t)1 << TRAWL_SYNC_SHIFT)

struct pt {
	int64_t x, y;
};

/* A slope num/den, den > 0; den == 0 means infinite (its side tells). */
struct rat {
	int64_t n, d;
};

/* The feasible slope interval [lo, hi] of F, from the data alone. */
struct srange {
	struct rat lo, hi;	/* d == 0: unbounded */
	int fail;		/* empty: no line satisfies every message */
};

/* cross((a - o), (b - o)): > 0 when o, a, b turn counter-clockwise. */
static inline i128 cross3(struct pt o, struct pt a, struct pt b)
{
	return ((i128)a.x - o.x) * ((i128)b.y - o.y) - ((i128)a.y - o.y) * ((i128)b.x - o.x);
}

/* sign of r1 - r2 (both finite). */
static inline int rat_cmp(struct rat r1, struct rat r2)
{
	i128 l = (i128)r1.n * r2.d, r = (i128)r2.n * r1.d;
	return (l > r) - (l < r);
}

/* Slope from a to b, a.x < b.x. */
static inline struct rat slope_of(struct pt a, struct pt b)
{
	struct rat r = { b.y - a.y, b.x - a.x };
	return r;
}

static inline i128 floordiv128(i128 a, i128 b)
{
	i128 q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static inline i128 ceildiv128(i128 a, i128 b)
{
	return -floordiv128(-a, b);
}

TRAWL_HIDDEN void tr_sync_range_init(struct srange *r);
/* Adds the constraint of P point p against Q point q. */
TRAWL_HIDDEN void tr_sync_range_add(struct srange *r, struct pt p, struct pt q);

/*
 * Everything after the hulls: quality, F's vertex lines, the estimate and
 * its inverse, Lmin/Lmax, and violations among the hull vertices.
 * hp: lower hull of P (x increasing), hq: upper hull of Q; x_c: mid-trace
 * on A's clock; fills out (out->lines malloc'd). 0 or -ENOMEM.
 */
TRAWL_HIDDEN int tr_sync_solve(const struct pt *hp, size_t np, const struct pt *hq, size_t nq,
			    const struct srange *range, int64_t x_c, uint32_t max_drift_ppm,
			    struct trawl_sync_pair *out);

/* Does the finder read the events of class ec (a sync event)? 1, 0, or
 * -ENOMEM (lib/sync/points.c; the live clock's tap asks, lib/sync/live.c). */
struct trawl_sync_finder;
struct trawl_ctf_event_class;
int tr_sync_finder_wants(struct trawl_sync_finder *c, const struct trawl_ctf_event_class *ec);

#endif
