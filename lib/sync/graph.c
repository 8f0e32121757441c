/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/graph.c - N nodes: connected groups, a reference per group,
 * best paths (Floyd-Warshall over the pairs' bounds at mid-trace), and
 * transforms composed along them with their bounds added.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sync-internal.h"

/* A path cost, compared lexicographically: unbounded pairs first. */
struct cost {
	long bad;
	double w;
};

struct trawl_sync_graph {
	size_t n;
	struct trawl_sync_pair **pair;	/* n*n; [a*n+b] set for (a, b) as given */
	struct trawl_sync_node *node;
	double *slope_hi;		/* upper bound of node -> ref true slope */
	int solved;
};

struct trawl_sync_graph *trawl_sync_graph_new(size_t nnodes)
{
	struct trawl_sync_graph *g;
	if (!nnodes || nnodes > 4096) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->n = nnodes;
	g->pair = calloc(nnodes * nnodes, sizeof(*g->pair));
	g->node = calloc(nnodes, sizeof(*g->node));
	g->slope_hi = calloc(nnodes, sizeof(*g->slope_hi));
	if (!g->pair || !g->node || !g->slope_hi) {
		trawl_sync_graph_free(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

void trawl_sync_graph_free(struct trawl_sync_graph *g)
{
	if (!g)
		return;
	if (g->pair)
		for (size_t i = 0; i < g->n * g->n; i++) {
			trawl_sync_pair_release(g->pair[i]);
			free(g->pair[i]);
		}
	free(g->pair);
	free(g->node);
	free(g->slope_hi);
	free(g);
}

int trawl_sync_graph_set_pair(struct trawl_sync_graph *g, size_t a, size_t b,
			      const struct trawl_sync_pair *r)
{
	if (!g || !r || a >= g->n || b >= g->n || a == b)
		return -EINVAL;
	struct trawl_sync_pair *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (trawl_sync_pair_copy(c, r)) {
		free(c);
		return -ENOMEM;
	}
	/* One result per unordered pair: the latest wins. */
	for (int k = 0; k < 2; k++) {
		struct trawl_sync_pair **slot = &g->pair[k ? b * g->n + a : a * g->n + b];
		trawl_sync_pair_release(*slot);
		free(*slot);
		*slot = NULL;
	}
	g->pair[a * g->n + b] = c;
	g->solved = 0;
	return 0;
}

/* The pair between j and k, and whether j is its A side. */
static const struct trawl_sync_pair *edge(const struct trawl_sync_graph *g, size_t j, size_t k,
					  int *fwd)
{
	const struct trawl_sync_pair *r = g->pair[j * g->n + k];
	*fwd = 1;
	if (!r) {
		r = g->pair[k * g->n + j];
		*fwd = 0;
	}
	if (r && r->quality == TRAWL_SYNC_ABSENT)
		r = NULL;
	return r;
}

static int bounded(const struct trawl_sync_pair *r)
{
	return r->quality == TRAWL_SYNC_ACCURATE || r->quality == TRAWL_SYNC_OFFSET_ONLY;
}

/* Maps j time t to k time through the pair. */
static int64_t edge_apply(const struct trawl_sync_pair *r, int fwd, int64_t t)
{
	return trawl_sync_xform_apply(fwd ? &r->fwd : &r->inv, t);
}

static int64_t edge_bound(const struct trawl_sync_pair *r, int fwd, int64_t t)
{
	return fwd ? trawl_sync_pair_bound(r, t) : trawl_sync_pair_bound_inv(r, t);
}

/* Upper bound of the true slope of the j -> k map. */
static double edge_slope_hi(const struct trawl_sync_pair *r, int fwd)
{
	double lo = HUGE_VAL, hi = 0;
	if (!bounded(r) || !r->nlines) {
		double s = trawl_sync_xform_rate(fwd ? &r->fwd : &r->inv);
		return s * 1.01;
	}
	for (size_t i = 0; i < r->nlines; i++) {
		double s = (double)r->lines[i].num / (double)r->lines[i].den;
		if (s < lo)
			lo = s;
		if (s > hi)
			hi = s;
	}
	if (fwd)
		return hi * (1 + 1e-12);
	return lo > 0 ? (1 / lo) * (1 + 1e-12) : HUGE_VAL;
}

/* Middle of j's traffic with k, on j's clock. */
static int64_t edge_mid(const struct trawl_sync_pair *r, int fwd)
{
	return fwd ? r->fwd.t0 : r->inv.t0;
}

static struct cost edge_cost(const struct trawl_sync_pair *r, int fwd)
{
	struct cost c = { 1, 0 };
	if (bounded(r)) {
		int64_t b = edge_bound(r, fwd, edge_mid(r, fwd));
		if (b != TRAWL_SYNC_UNBOUNDED) {
			c.bad = 0;
			c.w = (double)b;
		}
	}
	return c;
}

static int cost_lt(struct cost a, struct cost b)
{
	return a.bad != b.bad ? a.bad < b.bad : a.w < b.w;
}

static int rank(enum trawl_sync_quality q)
{
	switch (q) {
	case TRAWL_SYNC_ACCURATE: return 0;
	case TRAWL_SYNC_OFFSET_ONLY: return 1;
	case TRAWL_SYNC_ONE_WAY: return 2;
	default: return 3;
	}
}

/* Composition of two transforms: outer(inner(t)). */
static struct trawl_sync_xform compose(const struct trawl_sync_xform *outer,
				       const struct trawl_sync_xform *inner)
{
	struct trawl_sync_xform c;
	c.t0 = inner->t0;
	c.y0 = trawl_sync_xform_apply(outer, inner->y0);
	c.slope = (int64_t)(((i128)outer->slope * inner->slope) >> TRAWL_SYNC_SHIFT);
	return c;
}

int trawl_sync_graph_solve(struct trawl_sync_graph *g, long ref, char *err, size_t errlen)
{
	size_t n, ngroups = 0;
	struct cost *d = NULL;
	size_t *nx = NULL, *order = NULL;
	int ret = 0;

	if (!g)
		return tr_seterr(err, errlen, EINVAL, "sync: no graph");
	n = g->n;
	if (ref >= (long)n)
		return tr_seterr(err, errlen, EINVAL, "sync: reference %ld out of range (%zu nodes)",
			      ref, n);
	d = malloc(n * n * sizeof(*d));
	nx = malloc(n * n * sizeof(*nx));
	order = malloc(n * sizeof(*order));
	if (!d || !nx || !order) {
		ret = tr_seterr(err, errlen, ENOMEM, "sync: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			struct cost c = { LONG_MAX, HUGE_VAL };
			int fwd;
			const struct trawl_sync_pair *r = i == j ? NULL : edge(g, i, j, &fwd);
			if (i == j)
				c.bad = 0, c.w = 0;
			else if (r)
				c = edge_cost(r, fwd);
			d[i * n + j] = c;
			nx[i * n + j] = (i == j || r) ? j : SIZE_MAX;
		}
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < n; i++) {
			if (nx[i * n + k] == SIZE_MAX)
				continue;
			for (size_t j = 0; j < n; j++) {
				if (nx[k * n + j] == SIZE_MAX)
					continue;
				struct cost c = { d[i * n + k].bad + d[k * n + j].bad,
						  d[i * n + k].w + d[k * n + j].w };
				if (nx[i * n + j] == SIZE_MAX || cost_lt(c, d[i * n + j])) {
					d[i * n + j] = c;
					nx[i * n + j] = nx[i * n + k];
				}
			}
		}

	/* Groups and references. */
	for (size_t i = 0; i < n; i++)
		g->node[i].group = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (g->node[i].group != SIZE_MAX)
			continue;
		size_t best = i;
		struct cost bc = { LONG_MAX, HUGE_VAL };
		int user = ref >= 0 && nx[i * n + (size_t)ref] != SIZE_MAX;
		for (size_t j = i; j < n; j++) {
			if (nx[i * n + j] == SIZE_MAX)
				continue;
			g->node[j].group = ngroups;
			struct cost s = { 0, 0 };
			for (size_t k = 0; k < n; k++)
				if (nx[j * n + k] != SIZE_MAX) {
					s.bad += d[j * n + k].bad;
					s.w += d[j * n + k].w;
				}
			if (!user && cost_lt(s, bc)) {
				bc = s;
				best = j;
			}
		}
		if (user)
			best = (size_t)ref;
		for (size_t j = i; j < n; j++)
			if (g->node[j].group == ngroups)
				g->node[j].ref = best;
		ngroups++;
	}

	/* Transforms, nearest nodes first (by hops to the reference). */
	for (size_t i = 0; i < n; i++) {
		size_t h = 0, j = i, r = g->node[i].ref;
		while (j != r) {
			j = nx[j * n + r];
			h++;
		}
		g->node[i].hops = h;
		g->node[i].next = i == r ? i : nx[i * n + r];
		order[i] = i;
	}
	for (size_t i = 1; i < n; i++) {	/* insertion sort by hops */
		size_t v = order[i], k = i;
		while (k && g->node[order[k - 1]].hops > g->node[v].hops) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = v;
	}
	for (size_t oi = 0; oi < n; oi++) {
		size_t i = order[oi];
		struct trawl_sync_node *nd = &g->node[i];
		if (nd->hops == 0) {
			nd->to_ref = trawl_sync_xform_identity();
			nd->quality = TRAWL_SYNC_ACCURATE;
			g->slope_hi[i] = 1;
			continue;
		}
		int fwd;
		const struct trawl_sync_pair *r = edge(g, i, nd->next, &fwd);
		const struct trawl_sync_node *up = &g->node[nd->next];
		nd->to_ref = compose(&up->to_ref, fwd ? &r->fwd : &r->inv);
		nd->quality = rank(r->quality) > rank(up->quality) ? r->quality : up->quality;
		g->slope_hi[i] = g->slope_hi[nd->next] * edge_slope_hi(r, fwd);
	}
	g->solved = 1;
	for (size_t i = 0; i < n; i++) {
		struct trawl_sync_node *nd = &g->node[i];
		int fwd;
		if (!nd->hops) {
			nd->bound_mid = 0;
			continue;
		}
		const struct trawl_sync_pair *r = edge(g, i, nd->next, &fwd);
		nd->bound_mid = trawl_sync_graph_bound(g, i, edge_mid(r, fwd));
	}
	ret = (int)ngroups;
out:
	free(d);
	free(nx);
	free(order);
	return ret;
}

int trawl_sync_graph_node(const struct trawl_sync_graph *g, size_t i, struct trawl_sync_node *out)
{
	if (!g || !out || i >= g->n || !g->solved)
		return -EINVAL;
	*out = g->node[i];
	return 0;
}

int64_t trawl_sync_graph_bound(const struct trawl_sync_graph *g, size_t i, int64_t t)
{
	if (!g || i >= g->n || !g->solved)
		return TRAWL_SYNC_UNBOUNDED;
	const struct trawl_sync_node *nd = &g->node[i];
	if (!nd->hops)
		return 0;
	/*
	 * With k = next, E the pair's applied map and C the composed ones:
	 * |T_k(T_jk t) - C_j(t)| <= slope_hi(k) * |T_jk t - E t|
	 *                         + |T_k(E t) - C_k(E t)| + |C_k(E t) - C_j(t)|.
	 */
	int fwd;
	const struct trawl_sync_pair *r = edge(g, i, nd->next, &fwd);
	int64_t u = edge_apply(r, fwd, t);
	int64_t b1 = edge_bound(r, fwd, t);
	if (b1 == TRAWL_SYNC_UNBOUNDED)
		return b1;
	int64_t b2 = trawl_sync_graph_bound(g, nd->next, u);
	if (b2 == TRAWL_SYNC_UNBOUNDED)
		return b2;
	i128 c = (i128)trawl_sync_xform_apply(&g->node[nd->next].to_ref, u) -
		 trawl_sync_xform_apply(&nd->to_ref, t);
	if (c < 0)
		c = -c;
	double tot = (double)b2 + ceil(g->slope_hi[nd->next] * (double)b1) + (double)c + 1;
	if (!(tot < 9e18))
		return TRAWL_SYNC_UNBOUNDED;
	return (int64_t)tot;
}

/*
 * Settling (see trawl/sync.h). With d_i the move of node i, a link (a, b)
 * whose pair puts a's present x between B times lo and hi asks that
 *   C_a(x) + d_a  lie within  [C_b(lo) + d_b, C_b(hi) + d_b],
 * i.e. d_a - d_b <= M and d_b - d_a <= -m (m, M: those ends less
 * C_a(x)). d = 0 is what solve() chose; when it breaks a link, the
 * largest moves the links allow are the shortest paths from the
 * reference (d_ref = 0) over edges b -> a of weight M and a -> b of
 * weight -m, the smallest the negated shortest paths to it, and since
 * both vectors meet every constraint, so does their middle (the system
 * is convex): each node goes there, as a pair's estimate is the middle
 * of its feasible lines.
 */
struct dcon {
	size_t u, v;	/* d_v - d_u <= w */
	i128 w;
};

#define DINF ((i128)1 << 100)

/* Shortest paths from src over cons (rev: edges turned). 0, or 1 on a
 * negative cycle. */
static int bellman_ford(const struct dcon *c, size_t nc, size_t n, size_t src, int rev, i128 *dist)
{
	for (size_t i = 0; i < n; i++)
		dist[i] = DINF;
	dist[src] = 0;
	for (size_t it = 0; it <= n; it++) {
		int moved = 0;
		for (size_t k = 0; k < nc; k++) {
			size_t u = rev ? c[k].v : c[k].u, v = rev ? c[k].u : c[k].v;
			if (dist[u] >= DINF)
				continue;
			if (dist[u] + c[k].w < dist[v]) {
				dist[v] = dist[u] + c[k].w;
				moved = 1;
			}
		}
		if (!moved)
			return 0;
	}
	return 1;
}

/* The constraints of pair (a, b) at a's time x, appended to *c; a group
 * marked broken when d = 0 breaks one. 0 or -ENOMEM. */
static int link_cons(const struct trawl_sync_graph *g, size_t a, size_t b, int64_t x,
		     struct dcon **c, size_t *nc, size_t *cap, unsigned char *broken)
{
	const struct trawl_sync_pair *r = g->pair[a * g->n + b];
	int64_t l, h;
	if (!r || x == INT64_MIN || g->node[a].group != g->node[b].group ||
	    (r->quality != TRAWL_SYNC_ACCURATE && r->quality != TRAWL_SYNC_OFFSET_ONLY &&
	     r->quality != TRAWL_SYNC_ONE_WAY) ||
	    trawl_sync_pair_range(r, x, &l, &h))
		return 0;
	i128 ca = trawl_sync_xform_apply(&g->node[a].to_ref, x);
	for (int side = 0; side < 2; side++) {
		int64_t e = side ? h : l;
		if (e == (side ? INT64_MAX : INT64_MIN))
			continue;
		if (*nc == *cap) {
			size_t nn = *cap ? 2 * *cap : 16;
			struct dcon *y = realloc(*c, nn * sizeof(*y));
			if (!y)
				return -ENOMEM;
			*c = y;
			*cap = nn;
		}
		i128 w = (i128)trawl_sync_xform_apply(&g->node[b].to_ref, e) - ca;
		/* hi: d_a - d_b <= w; lo: d_b - d_a <= -w (broken beyond the
		 * compositions' rounding, 1 ns) */
		struct dcon *d = &(*c)[(*nc)++];
		*d = side ? (struct dcon){ b, a, w } : (struct dcon){ a, b, -w };
		if (d->w < -1)
			broken[g->node[a].group] = 1;
	}
	return 0;
}

int trawl_sync_graph_settle(struct trawl_sync_graph *g, const int64_t *times, size_t nsets)
{
	if (!g || !times || !nsets || !g->solved)
		return -EINVAL;
	size_t n = g->n, nc = 0, cap = 0, moved = 0;
	struct dcon *c = NULL;
	i128 *up = malloc(n * sizeof(*up)), *lo = malloc(n * sizeof(*lo));
	unsigned char *broken = calloc(n, 1);
	int ret = 0;

	if (!up || !lo || !broken) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < nsets; k++)
		for (size_t a = 0; a < n; a++)
			for (size_t b = 0; b < n; b++)
				if ((ret = link_cons(g, a, b, times[k * n + a], &c, &nc, &cap, broken)))
					goto out;
	for (size_t i = 0; i < n; i++) {
		size_t gr = g->node[i].group, ref = g->node[i].ref;
		if (i != ref || !broken[gr])
			continue;
		/* the group's constraints only (others are in other groups) */
		if (bellman_ford(c, nc, n, ref, 0, up) || bellman_ford(c, nc, n, ref, 1, lo))
			continue;	/* nothing meets every link: as it was */
		int whole = 1;
		for (size_t j = 0; j < n; j++)
			if (g->node[j].group == gr && (up[j] >= DINF || lo[j] >= DINF))
				whole = 0;
		if (!whole)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (g->node[j].group != gr || j == ref)
				continue;
			/* between -lo[j] and up[j] */
			i128 d = (up[j] - lo[j]) / 2;
			if (d) {
				g->node[j].to_ref.y0 += (int64_t)d;
				moved++;
			}
		}
	}
	for (size_t i = 0; moved && i < n; i++) {
		struct trawl_sync_node *nd = &g->node[i];
		int fwd = 1;
		if (nd->hops)
			nd->bound_mid = trawl_sync_graph_bound(g, i, edge_mid(edge(g, i, nd->next, &fwd), fwd));
	}
	ret = (int)moved;
out:
	free(c);
	free(up);
	free(lo);
	free(broken);
	return ret;
}
