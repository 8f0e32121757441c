/* SPDX-License-Identifier: MIT */
/*
 * trawl/xform.h - a node's clock correction: a linear transform from the
 * node's time to the reference's, what `trawl sync` computes (trawl/sync.h)
 * and every reader applies to a host's events (trawl/pipe.h).
 */
#ifndef TRAWL_XFORM_H
#define TRAWL_XFORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fixed-point slopes are scaled by 2^TRAWL_SYNC_SHIFT. */
#define TRAWL_SYNC_SHIFT 60
/*
 * A linear clock transform, applied as
 *	out = y0 + floor(slope * (t - t0) / 2^TRAWL_SYNC_SHIFT)
 * t0 is mid-trace on the source clock, y0 its image on the target clock
 * (not an intercept at t = 0, which would lose precision). The floor of a
 * line with slope > 0 is non-decreasing, so corrected times keep their
 * order; 128-bit products never overflow (|t - t0| < 2^64, slope < 2^63).
 */
struct trawl_sync_xform {
	int64_t t0;
	int64_t y0;
	int64_t slope;	/* > 0; 1.0 is 1 << TRAWL_SYNC_SHIFT */
};

/*
 * Applies a transform (see above). A result beyond int64 (a corrupt time
 * or clock offset, up to 2^64 ns from t0) saturates at INT64_MIN or
 * INT64_MAX: still in order, never an overflow.
 */
static inline int64_t trawl_sync_xform_apply(const struct trawl_sync_xform *x, int64_t t)
{
	__int128 d = (__int128)t - x->t0;
	__int128 y = (__int128)x->y0 + (((__int128)x->slope * d) >> TRAWL_SYNC_SHIFT);

	if (__builtin_expect(y > INT64_MAX, 0))
		return INT64_MAX;
	if (__builtin_expect(y < INT64_MIN, 0))
		return INT64_MIN;
	return (int64_t)y;
}

/* The identity transform. */
static inline struct trawl_sync_xform trawl_sync_xform_identity(void)
{
	struct trawl_sync_xform x = { 0, 0, (int64_t)1 << TRAWL_SYNC_SHIFT };
	return x;
}

/* The slope of a transform as a double (1.0 = same rate). */
static inline double trawl_sync_xform_rate(const struct trawl_sync_xform *x)
{
	return (double)x->slope / (double)((int64_t)1 << TRAWL_SYNC_SHIFT);
}

#ifdef __cplusplus
}
#endif
#endif
