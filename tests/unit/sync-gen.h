/* SPDX-License-Identifier: MIT */
/*
 * sync-gen.h - a seeded ground-truth generator for the clock
 * synchronization tests and benchmark: nodes with known offsets and drifts
 * against a true clock, and the messages they exchange, with one-way
 * minimum delays, jitter, loss, reordering and duplicates.
 *
 * Node i's clock at true time t (ns from the start of the trace):
 *	base + off + t * (1 + drift)           (t <= t_change)
 *	... + (t - t_change) * (1 + drift2)    (after a drift change)
 * rounded to whole ns.
 */
#ifndef TRAWL_SYNC_GEN_H
#define TRAWL_SYNC_GEN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "trawl/sync.h"

struct gen_rng {
	uint64_t s;
};

static inline uint64_t gen_next(struct gen_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double gen_u(struct gen_rng *r)
{
	return (double)(gen_next(r) >> 11) * 0x1p-53;
}

static inline double gen_normal(struct gen_rng *r)
{
	double u = gen_u(r), v = gen_u(r);
	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

enum gen_jitter { GEN_EXP, GEN_LOGNORMAL, GEN_PARETO, GEN_UNIFORM, GEN_NJITTER };

/* A delay jitter of mean about `mean` ns. */
static inline double gen_jitter(struct gen_rng *r, int kind, double mean)
{
	switch (kind) {
	case GEN_EXP:
		return -mean * log(1 - gen_u(r));
	case GEN_LOGNORMAL:	/* sigma 1: mean = exp(mu + 1/2) */
		return exp(log(mean) - 0.5 + gen_normal(r));
	case GEN_PARETO:	/* alpha 1.5, heavy tail: mean = 3 xm */
		return mean / 3 / pow(1 - gen_u(r), 1 / 1.5);
	default:
		return 2 * mean * gen_u(r);
	}
}

struct gen_clock {
	int64_t base;		/* epoch-scale part, exact */
	double off;		/* ns */
	double drift, drift2;	/* rate - 1 before / after t_change */
	double t_change;	/* ns of true time; <= 0: no change */
};

/* The clock's exact value at true time t, as a long double relative to base. */
static inline long double gen_local_rel(const struct gen_clock *c, long double t)
{
	if (c->t_change > 0 && t > c->t_change)
		return c->off + c->t_change * (1 + (long double)c->drift) +
		       (t - c->t_change) * (1 + (long double)c->drift2);
	return c->off + t * (1 + (long double)c->drift);
}

static inline int64_t gen_local(const struct gen_clock *c, long double t)
{
	return c->base + (int64_t)llroundl(gen_local_rel(c, t));
}

/* True time of local time v (the clock must not change drift). */
static inline long double gen_true(const struct gen_clock *c, int64_t v)
{
	return ((long double)(v - c->base) - c->off) / (1 + (long double)c->drift);
}

/*
 * The true time on clock `to` (relative to to->base) of local time v on
 * clock `from` (which must be linear).
 */
static inline long double gen_map(const struct gen_clock *from, const struct gen_clock *to,
				  int64_t v)
{
	return gen_local_rel(to, gen_true(from, v));
}

struct gen_link {
	double rate;		/* messages per second and direction */
	double t_begin, t_end;	/* true ns; messages sent within */
	double min_delay;	/* ns */
	double jitter;		/* mean, ns */
	int jitter_kind;
	double loss;		/* probability */
	double dup;		/* probability of a duplicated message */
	int periodic;		/* sends every 1/rate (+ a little noise) */
};

/*
 * Appends the messages from node clock s to node clock r over link l to
 * (*m, *n, *cap): send on s's clock, recv on r's. Returns 0 or -1.
 */
static inline int gen_messages(struct gen_rng *rng, const struct gen_clock *s,
			       const struct gen_clock *r, const struct gen_link *l,
			       struct trawl_sync_msg **m, size_t *n, size_t *cap)
{
	double span = l->t_end - l->t_begin;
	size_t count = (size_t)(l->rate * span / 1e9);
	for (size_t i = 0; i < count; i++) {
		double t = l->periodic ? l->t_begin + (i + 0.5 * gen_u(rng)) * 1e9 / l->rate
				       : l->t_begin + span * gen_u(rng);
		if (gen_u(rng) < l->loss)
			continue;
		double d = l->min_delay + gen_jitter(rng, l->jitter_kind, l->jitter);
		int copies = gen_u(rng) < l->dup ? 2 : 1;
		for (int k = 0; k < copies; k++) {
			if (*n == *cap) {
				size_t nc = *cap ? *cap * 2 : 256;
				struct trawl_sync_msg *nm = realloc(*m, nc * sizeof(*nm));
				if (!nm)
					return -1;
				*m = nm;
				*cap = nc;
			}
			(*m)[*n].send = gen_local(s, t);
			(*m)[*n].recv = gen_local(r, (long double)t + d);
			(*n)++;
			/* A duplicate key: the second copy is a retransmission,
			 * matched to the first send, received later. */
			d += gen_jitter(rng, GEN_EXP, l->jitter + 1000);
		}
	}
	return 0;
}

static inline void gen_shuffle(struct gen_rng *rng, struct trawl_sync_msg *m, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = gen_next(rng) % i;
		struct trawl_sync_msg t = m[i - 1];
		m[i - 1] = m[j];
		m[j] = t;
	}
}

/* Sorts by send time (then swaps a fraction of neighbours: mild reorder). */
static inline int gen_cmp_send(const void *a, const void *b)
{
	const struct trawl_sync_msg *x = a, *y = b;
	return (x->send > y->send) - (x->send < y->send);
}

#endif
