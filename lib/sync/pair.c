/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/pair.c - one pair of nodes: the solver on two half-hulls (shared
 * with the incremental form), the batch form, and the queries on a result
 * (range and bound at an instant). The method is described in docs/sync.md.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sync-internal.h"

const char *trawl_sync_quality_name(enum trawl_sync_quality q)
{
	switch (q) {
	case TRAWL_SYNC_ABSENT: return "absent";
	case TRAWL_SYNC_ONE_WAY: return "one-way";
	case TRAWL_SYNC_OFFSET_ONLY: return "offset-only";
	case TRAWL_SYNC_ACCURATE: return "accurate";
	case TRAWL_SYNC_FAIL: return "fail";
	}
	return "?";
}

/* ------------------------------------------------------------ slopes */

void tr_sync_range_init(struct srange *r)
{
	memset(r, 0, sizeof(*r));
}

void tr_sync_range_add(struct srange *r, struct pt p, struct pt q)
{
	if (r->fail)
		return;
	if (q.x < p.x) {		/* a <= slope(q, p) */
		struct rat s = slope_of(q, p);
		if (!r->hi.d || rat_cmp(s, r->hi) < 0)
			r->hi = s;
	} else if (q.x > p.x) {	/* a >= slope(p, q) */
		struct rat s = slope_of(p, q);
		if (!r->lo.d || rat_cmp(s, r->lo) > 0)
			r->lo = s;
	} else if (q.y > p.y) {
		r->fail = 1;
	}
	if (r->lo.d && r->hi.d && rat_cmp(r->lo, r->hi) > 0)
		r->fail = 1;
}

/* floor / ceil of r * 2^SHIFT, clamped to the int64 range. */
static int64_t rat_fp(struct rat r, int up)
{
	i128 v = (i128)r.n * SYNC_ONE;
	v = up ? ceildiv128(v, r.d) : floordiv128(v, r.d);
	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < -INT64_MAX)
		return -INT64_MAX;
	return (int64_t)v;
}

/* ------------------------------------------------------------- lines */

/* floor (up = 0) or ceil (up = 1) of line l at x; *ok = 0 if too far. */
static int64_t line_at(const struct trawl_sync_line *l, int64_t x, int up, int *ok)
{
	i128 dx = (i128)x - l->x;
	if (dx >= ((i128)1 << 62) || dx <= -((i128)1 << 62)) {
		*ok = 0;
		return 0;
	}
	i128 num = (i128)l->num * dx;
	i128 v = up ? ceildiv128(num, l->den) : floordiv128(num, l->den);
	v += l->y;
	if (v > INT64_MAX - 1 || v < INT64_MIN + 1) {
		*ok = 0;
		return 0;
	}
	return (int64_t)v;
}

static struct trawl_sync_line mkline(struct pt p, struct rat s)
{
	struct trawl_sync_line l = { p.x, p.y, s.n, s.d };
	return l;
}

/*
 * The vertex of a hull tangent at slope s: the argmin of y - s*x over the
 * lower hull (sgn = 1) or the argmax over the upper hull (sgn = -1).
 */
static size_t tangent(const struct pt *h, size_t n, struct rat s, int sgn)
{
	size_t best = 0;
	i128 bv = 0;
	for (size_t i = 0; i < n; i++) {
		i128 v = ((i128)h[i].y - h[0].y) * s.d - (i128)s.n * ((i128)h[i].x - h[0].x);
		v *= sgn;
		if (i == 0 || v < bv) {
			bv = v;
			best = i;
		}
	}
	return best;
}

/*
 * min over the lower hull (sgn = 1) / max over the upper hull (sgn = -1)
 * of (y - ypiv) * 2^SHIFT - a * (x - x_c), in units of 2^-SHIFT ns.
 */
static i128 envelope(const struct pt *h, size_t n, int64_t a, int64_t x_c, int64_t ypiv, int sgn)
{
	i128 best = 0;
	for (size_t i = 0; i < n; i++) {
		i128 v = ((i128)h[i].y - ypiv) * SYNC_ONE - (i128)a * ((i128)h[i].x - x_c);
		if (i == 0 || (sgn > 0 ? v < best : v > best))
			best = v;
	}
	return best;
}

static struct trawl_sync_xform xform_inverse(struct trawl_sync_xform f)
{
	struct trawl_sync_xform r;
	r.t0 = f.y0;
	r.y0 = f.t0;
	r.slope = (int64_t)(((i128)1 << (2 * TRAWL_SYNC_SHIFT)) / f.slope);
	return r;
}

/*
 * Checks the applied pair (fwd, inv) against hull vertices: P must not be
 * received before sent: fwd(x) <= y and inv(y) >= x; Q: fwd(x) >= y and
 * inv(y) <= x. Counts violations per side.
 */
static void check(const struct trawl_sync_xform *f, const struct trawl_sync_xform *iv,
		  const struct pt *hp, size_t np, const struct pt *hq, size_t nq,
		  uint64_t *vp, uint64_t *vq)
{
	*vp = *vq = 0;
	for (size_t i = 0; i < np; i++)
		if (trawl_sync_xform_apply(f, hp[i].x) > hp[i].y ||
		    trawl_sync_xform_apply(iv, hp[i].y) < hp[i].x)
			(*vp)++;
	for (size_t i = 0; i < nq; i++)
		if (trawl_sync_xform_apply(f, hq[i].x) < hq[i].y ||
		    trawl_sync_xform_apply(iv, hq[i].y) > hq[i].x)
			(*vq)++;
}

static int push_line(struct trawl_sync_pair *out, size_t *cap, struct trawl_sync_line l)
{
	if (tr_grow(&out->lines, cap, out->nlines, sizeof(*out->lines)))
		return -ENOMEM;
	out->lines[out->nlines++] = l;
	return 0;
}

/*
 * FAIL's fallback (Ashton 1995): among the lines through one P vertex and
 * one Q vertex, the one with the smallest sum of vertical violations over
 * the hull vertices. Returns 0 and *best, or -1 if there is no candidate.
 */
static int fallback(const struct pt *hp, size_t np, const struct pt *hq, size_t nq,
		    struct trawl_sync_line *best)
{
	long double bc = 0;
	int found = 0;
	for (size_t i = 0; i < np; i++) {
		for (size_t j = 0; j < nq; j++) {
			if (hp[i].x == hq[j].x)
				continue;
			struct pt a = hp[i].x < hq[j].x ? hp[i] : hq[j];
			struct pt b = hp[i].x < hq[j].x ? hq[j] : hp[i];
			struct rat s = slope_of(a, b);
			long double sl = (long double)s.n / s.d, c = 0;
			for (size_t k = 0; k < np; k++) {
				long double v = (long double)(hp[i].y - hp[k].y) +
						sl * (long double)(hp[k].x - hp[i].x);
				if (v > 0)
					c += v;
			}
			for (size_t k = 0; k < nq; k++) {
				long double v = (long double)(hq[k].y - hp[i].y) -
						sl * (long double)(hq[k].x - hp[i].x);
				if (v > 0)
					c += v;
			}
			if (!found || c < bc) {
				bc = c;
				*best = mkline(hp[i], s);
				found = 1;
			}
		}
	}
	return found ? 0 : -1;
}

/* Clamps an estimate's slope to [0.5, 2] (real clocks are far inside). */
static int64_t clamp_slope(int64_t a)
{
	if (a < SYNC_ONE / 2)
		return SYNC_ONE / 2;
	if (a > SYNC_ONE * 2)
		return SYNC_ONE * 2;
	return a;
}

int tr_sync_solve(const struct pt *hp, size_t np, const struct pt *hq, size_t nq,
	       const struct srange *range, int64_t x_c, uint32_t max_drift_ppm,
	       struct trawl_sync_pair *out)
{
	size_t cap = 0;
	int64_t ypiv = np ? hp[0].y : nq ? hq[0].y : 0;
	struct trawl_sync_xform f = trawl_sync_xform_identity();

	out->nlines = 0;
	out->lines = NULL;
	out->amin_num = out->amin_den = out->amax_num = out->amax_den = 0;
	memset(&out->lmin, 0, sizeof(out->lmin));
	memset(&out->lmax, 0, sizeof(out->lmax));
	out->hull_ab = np;
	out->hull_ba = nq;
	out->violations = 0;
	out->span_lo = out->span_hi = 0;

	if (!np && !nq) {
		out->quality = TRAWL_SYNC_ABSENT;
		out->fwd = out->inv = f;
		return 0;
	}
	if (!np || !nq) {
		/* One direction: slope 1, the offset that makes the tightest
		 * message's delay zero; the hull edges give a one-sided range. */
		const struct pt *h = np ? hp : hq;
		size_t n = np ? np : nq;
		int sgn = np ? 1 : -1;
		i128 e = envelope(h, n, SYNC_ONE, x_c, ypiv, sgn);
		out->quality = TRAWL_SYNC_ONE_WAY;
		f.t0 = x_c;
		f.slope = SYNC_ONE;
		f.y0 = ypiv + (int64_t)(e >> TRAWL_SYNC_SHIFT);
		out->span_lo = h[0].x;
		out->span_hi = h[n - 1].x;
		if (n == 1) {
			struct rat z = { 0, 1 };
			if (push_line(out, &cap, mkline(h[0], z)))
				return -ENOMEM;
		}
		for (size_t i = 0; i + 1 < n; i++)
			if (push_line(out, &cap, mkline(h[i], slope_of(h[i], h[i + 1]))))
				return -ENOMEM;
		out->fwd = f;
		out->inv = xform_inverse(f);
		return 0;
	}
	if (range->fail) {
		struct trawl_sync_line l = { 0, 0, 0, 1 };
		out->quality = TRAWL_SYNC_FAIL;
		f.t0 = x_c;
		if (fallback(hp, np, hq, nq, &l) == 0) {
			int ok = 1;
			f.slope = clamp_slope(rat_fp((struct rat){ l.num, l.den }, 0));
			f.y0 = line_at(&l, x_c, 0, &ok);
			if (!ok)
				f.y0 = l.y;
		} else {
			i128 u = envelope(hp, np, SYNC_ONE, x_c, ypiv, 1);
			i128 d = envelope(hq, nq, SYNC_ONE, x_c, ypiv, -1);
			f.y0 = ypiv + (int64_t)((u + d) >> (TRAWL_SYNC_SHIFT + 1));
		}
		out->fwd = f;
		out->inv = xform_inverse(f);
		uint64_t vp, vq;
		check(&out->fwd, &out->inv, hp, np, hq, nq, &vp, &vq);
		out->violations = vp + vq;
		return 0;
	}

	/* Bounded, by the data (ACCURATE) or by the drift limit. */
	struct rat lo = range->lo, hi = range->hi;
	struct rat dlo = { 1000000 - (int64_t)max_drift_ppm, 1000000 };
	struct rat dhi = { 1000000 + (int64_t)max_drift_ppm, 1000000 };
	out->quality = TRAWL_SYNC_ACCURATE;
	out->amin_num = lo.n;
	out->amin_den = lo.d;
	out->amax_num = hi.n;
	out->amax_den = hi.d;
	if (!lo.d || !hi.d) {
		out->quality = TRAWL_SYNC_OFFSET_ONLY;
		if (!lo.d)
			lo = (hi.d && rat_cmp(hi, dlo) < 0) ? hi : dlo;
		if (!hi.d)
			hi = rat_cmp(lo, dhi) > 0 ? lo : dhi;
	}

	/* Vertex lines: tangents at both slope limits, and hull edges whose
	 * slope lies strictly between them. */
	size_t plo = tangent(hp, np, lo, 1), phi = tangent(hp, np, hi, 1);
	size_t qlo = tangent(hq, nq, lo, -1), qhi = tangent(hq, nq, hi, -1);
	out->lmin = mkline(hp[plo], lo);
	out->lmax = mkline(hp[phi], hi);
	if (push_line(out, &cap, out->lmin) || push_line(out, &cap, mkline(hq[qlo], lo)) ||
	    push_line(out, &cap, out->lmax) || push_line(out, &cap, mkline(hq[qhi], hi)))
		return -ENOMEM;
	for (size_t i = 0; i + 1 < np; i++) {
		struct rat s = slope_of(hp[i], hp[i + 1]);
		if (rat_cmp(s, lo) > 0 && rat_cmp(s, hi) < 0 &&
		    push_line(out, &cap, mkline(hp[i], s)))
			return -ENOMEM;
	}
	for (size_t i = 0; i + 1 < nq; i++) {
		struct rat s = slope_of(hq[i], hq[i + 1]);
		if (rat_cmp(s, lo) > 0 && rat_cmp(s, hi) < 0 &&
		    push_line(out, &cap, mkline(hq[i], s)))
			return -ENOMEM;
	}
	out->span_lo = hp[0].x < hq[0].x ? hp[0].x : hq[0].x;
	out->span_hi = hp[np - 1].x > hq[nq - 1].x ? hp[np - 1].x : hq[nq - 1].x;

	/* The estimate: the middle slope of F, and at that slope the middle
	 * of the feasible values at x_c; strictly inside F unless F is flat. */
	int64_t alo = rat_fp(lo, 1), ahi = rat_fp(hi, 0);
	int64_t a = alo <= ahi ? (int64_t)(((i128)alo + ahi) >> 1) : ahi;
	a = clamp_slope(a);
	i128 u = envelope(hp, np, a, x_c, ypiv, 1);
	i128 d = envelope(hq, nq, a, x_c, ypiv, -1);
	f.t0 = x_c;
	f.slope = a;
	f.y0 = ypiv + (int64_t)((u + d) >> (TRAWL_SYNC_SHIFT + 1));

	/* Rounding to whole ns may touch a thin F: nudge, then count. */
	uint64_t vp = 0, vq = 0;
	for (int i = 0; i < 4; i++) {
		struct trawl_sync_xform iv = xform_inverse(f);
		check(&f, &iv, hp, np, hq, nq, &vp, &vq);
		if ((vp && vq) || (!vp && !vq))
			break;
		f.y0 += vp ? -1 : 1;
	}
	out->fwd = f;
	out->inv = xform_inverse(f);
	check(&out->fwd, &out->inv, hp, np, hq, nq, &vp, &vq);
	out->violations = vp + vq;
	return 0;
}

/* ------------------------------------------------------------ queries */

int trawl_sync_pair_range(const struct trawl_sync_pair *r, int64_t x, int64_t *lo, int64_t *hi)
{
	if (!r || !lo || !hi)
		return -EINVAL;
	*lo = INT64_MIN;
	*hi = INT64_MAX;
	switch (r->quality) {
	case TRAWL_SYNC_ACCURATE:
	case TRAWL_SYNC_OFFSET_ONLY: {
		int64_t vmin = INT64_MAX, vmax = INT64_MIN;
		for (size_t i = 0; i < r->nlines; i++) {
			int ok = 1;
			int64_t a = line_at(&r->lines[i], x, 0, &ok);
			int64_t b = line_at(&r->lines[i], x, 1, &ok);
			if (!ok)
				return 0;
			if (a < vmin)
				vmin = a;
			if (b > vmax)
				vmax = b;
		}
		if (r->nlines) {
			*lo = vmin;
			*hi = vmax;
		}
		return 0;
	}
	case TRAWL_SYNC_ONE_WAY: {
		int up = r->n_ab > 0;	/* P only: true line below the hull */
		int64_t v = up ? INT64_MIN : INT64_MAX;
		if (x < r->span_lo || x > r->span_hi || !r->nlines)
			return 0;
		for (size_t i = 0; i < r->nlines; i++) {
			int ok = 1;
			int64_t w = line_at(&r->lines[i], x, up, &ok);
			if (!ok)
				return 0;
			if (up ? w > v : w < v)
				v = w;
		}
		if (up)
			*hi = v;
		else
			*lo = v;
		return 0;
	}
	default:
		return 0;
	}
}

int64_t trawl_sync_pair_bound(const struct trawl_sync_pair *r, int64_t x)
{
	int64_t lo, hi;
	if (!r || (r->quality != TRAWL_SYNC_ACCURATE && r->quality != TRAWL_SYNC_OFFSET_ONLY))
		return TRAWL_SYNC_UNBOUNDED;
	if (trawl_sync_pair_range(r, x, &lo, &hi) || lo == INT64_MIN || hi == INT64_MAX)
		return TRAWL_SYNC_UNBOUNDED;
	i128 e = trawl_sync_xform_apply(&r->fwd, x);
	i128 b = (i128)hi - e > e - lo ? (i128)hi - e : e - lo;
	if (b < 0)
		b = 0;
	return b >= INT64_MAX ? TRAWL_SYNC_UNBOUNDED : (int64_t)b;
}

int64_t trawl_sync_pair_bound_inv(const struct trawl_sync_pair *r, int64_t y)
{
	if (!r || (r->quality != TRAWL_SYNC_ACCURATE && r->quality != TRAWL_SYNC_OFFSET_ONLY))
		return TRAWL_SYNC_UNBOUNDED;
	/* x_e = inv(y). The true line L* has |L*(x_e) - y| <= c, with
	 * c = bound(x_e) + |fwd(x_e) - y|, and slope >= the smallest slope
	 * of F, so the true A time of y is within c / amin of x_e. */
	int64_t xe = trawl_sync_xform_apply(&r->inv, y);
	int64_t b = trawl_sync_pair_bound(r, xe);
	if (b == TRAWL_SYNC_UNBOUNDED)
		return b;
	i128 d = (i128)trawl_sync_xform_apply(&r->fwd, xe) - y;
	if (d < 0)
		d = -d;
	double amin = HUGE_VAL;
	for (size_t i = 0; i < r->nlines; i++) {
		double s = (double)r->lines[i].num / (double)r->lines[i].den;
		if (s < amin)
			amin = s;
	}
	if (!(amin > 0))
		return TRAWL_SYNC_UNBOUNDED;
	double c = ((double)b + (double)d) / (amin * (1 - 1e-12));
	if (c >= 9e18)
		return TRAWL_SYNC_UNBOUNDED;
	return (int64_t)ceil(c) + 1;
}

void trawl_sync_pair_release(struct trawl_sync_pair *r)
{
	if (!r)
		return;
	free(r->lines);
	r->lines = NULL;
	r->nlines = 0;
}

int trawl_sync_pair_copy(struct trawl_sync_pair *dst, const struct trawl_sync_pair *src)
{
	*dst = *src;
	dst->lines = NULL;
	if (src->nlines) {
		dst->lines = malloc(src->nlines * sizeof(*dst->lines));
		if (!dst->lines) {
			dst->nlines = 0;
			return -ENOMEM;
		}
		memcpy(dst->lines, src->lines, src->nlines * sizeof(*dst->lines));
	}
	return 0;
}

/* -------------------------------------------------------------- batch */

static int cmp_lower(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return (p->y > q->y) - (p->y < q->y);
}

static int cmp_upper(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return (p->y < q->y) - (p->y > q->y);
}

/* Monotone chain over sorted points, in place; sgn 1: lower, -1: upper.
 * Of points sharing an x, the first (lowest / highest) is kept. */
static size_t hull_build(struct pt *v, size_t n, int sgn)
{
	size_t h = 0;
	for (size_t i = 0; i < n; i++) {
		if (h && v[h - 1].x == v[i].x)
			continue;
		while (h >= 2 && sgn * cross3(v[h - 2], v[h - 1], v[i]) <= 0)
			h--;
		v[h++] = v[i];
	}
	return h;
}

static int in_range(int64_t v, int64_t piv)
{
	i128 d = (i128)v - piv;
	return d < SYNC_LIMIT && d > -SYNC_LIMIT;
}

int trawl_sync_pair_compute(const struct trawl_sync_msg *ab, size_t n_ab,
			    const struct trawl_sync_msg *ba, size_t n_ba,
			    const struct trawl_sync_opts *opts,
			    struct trawl_sync_pair *out, char *err, size_t errlen)
{
	struct pt *p = NULL, *q = NULL;
	int64_t x0 = 0, y0 = 0, xmin = INT64_MAX, xmax = INT64_MIN;
	uint32_t ppm = 500;
	int ret;

	if (!out || (n_ab && !ab) || (n_ba && !ba))
		return tr_seterr(err, errlen, EINVAL, "sync: invalid arguments");
	memset(out, 0, sizeof(*out));
	if (opts && opts->size >= offsetof(struct trawl_sync_opts, max_drift_ppm) + 4 &&
	    opts->max_drift_ppm)
		ppm = opts->max_drift_ppm;
	if (ppm >= 1000000)
		return tr_seterr(err, errlen, EINVAL, "sync: max_drift_ppm %u too large", ppm);
	out->n_ab = n_ab;
	out->n_ba = n_ba;
	if (n_ab) {
		x0 = ab[0].send;
		y0 = ab[0].recv;
	} else if (n_ba) {
		x0 = ba[0].recv;
		y0 = ba[0].send;
	}
	p = malloc((n_ab ? n_ab : 1) * sizeof(*p));
	q = malloc((n_ba ? n_ba : 1) * sizeof(*q));
	if (!p || !q) {
		ret = tr_seterr(err, errlen, ENOMEM, "sync: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_ab; i++) {
		p[i].x = ab[i].send;
		p[i].y = ab[i].recv;
	}
	for (size_t i = 0; i < n_ba; i++) {
		q[i].x = ba[i].recv;
		q[i].y = ba[i].send;
	}
	for (int k = 0; k < 2; k++) {
		struct pt *v = k ? q : p;
		size_t n = k ? n_ba : n_ab;
		for (size_t i = 0; i < n; i++) {
			if (!in_range(v[i].x, x0) || !in_range(v[i].y, y0)) {
				ret = tr_seterr(err, errlen, ERANGE,
					     "sync: message %zu (%s) is 2^61 ns or more from the first",
					     i, k ? "B->A" : "A->B");
				goto out;
			}
			if (v[i].x < xmin)
				xmin = v[i].x;
			if (v[i].x > xmax)
				xmax = v[i].x;
		}
	}
	qsort(p, n_ab, sizeof(*p), cmp_lower);
	qsort(q, n_ba, sizeof(*q), cmp_upper);
	size_t np = hull_build(p, n_ab, 1), nq = hull_build(q, n_ba, -1);

	struct srange rg;
	tr_sync_range_init(&rg);
	for (size_t i = 0; i < np; i++)
		for (size_t j = 0; j < nq; j++)
			tr_sync_range_add(&rg, p[i], q[j]);

	int64_t x_c = n_ab + n_ba ? (int64_t)(((i128)xmin + xmax) >> 1) : 0;
	ret = tr_sync_solve(p, np, q, nq, &rg, x_c, ppm, out);
	if (ret) {
		trawl_sync_pair_release(out);
		ret = tr_seterr(err, errlen, -ret, "sync: out of memory");
		goto out;
	}
	out->x_first = n_ab + n_ba ? xmin : 0;
	out->x_last = n_ab + n_ba ? xmax : 0;
	/* Count every message the applied estimate inverts. */
	if (out->quality != TRAWL_SYNC_ABSENT) {
		uint64_t v = 0;
		for (size_t i = 0; i < n_ab; i++)
			v += trawl_sync_xform_apply(&out->fwd, ab[i].send) > ab[i].recv ||
			     trawl_sync_xform_apply(&out->inv, ab[i].recv) < ab[i].send;
		for (size_t i = 0; i < n_ba; i++)
			v += trawl_sync_xform_apply(&out->fwd, ba[i].recv) < ba[i].send ||
			     trawl_sync_xform_apply(&out->inv, ba[i].send) > ba[i].recv;
		out->violations = v;
	}
	ret = 0;
out:
	free(p);
	free(q);
	return ret;
}
