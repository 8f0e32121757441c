/* SPDX-License-Identifier: MIT */
/*
 * cli/sim.h - shared by trawl simulate's files: the seeded random helpers,
 * and the simulated clocks and sync traffic of `trawl simulate --sync`
 * (cli/sim-sync.c).
 */
#ifndef TRAWL_CLI_SIM_H
#define TRAWL_CLI_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trawl/ctf.h"

/* ------------------------------------------------------------- random */

static inline uint64_t sim_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xorshift64*: the state must not be 0 */
static inline uint64_t sim_rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* A generator state for (seed, a, b, c), never 0. */
static inline uint64_t sim_seed_for(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t x = seed;
	uint64_t r = sim_splitmix(&x);
	x ^= a * 0x100000001b3ull;
	r ^= sim_splitmix(&x);
	x ^= b * 0xc6a4a7935bd1e995ull;
	r ^= sim_splitmix(&x);
	x ^= c * 0x87c37b91114253d5ull;
	r ^= sim_splitmix(&x);
	return r ? r : 1;
}

/* Uniform in [0, 1). */
static inline double sim_unit(uint64_t *s)
{
	return (double)(sim_rnd(s) >> 11) * 0x1p-53;
}

/* -------------------------------------------------------------- clocks */

/*
 * A host's clock against the true time t (ns since the epoch), with
 * t0 the session start:
 *	local(t) = t + off + ppb * 1e-9 * (t - t0)          (t < tchange)
 * and after a drift change, continuous at tchange,
 *	local(t) = t + off + (ppb * (tchange - t0) + ppb2 * (t - tchange)) * 1e-9
 * rounded to the nearest ns. Drifts are in parts per billion, so the truth
 * file prints them exactly in ppm with three decimals at most.
 */
struct sim_clock {
	int64_t off;		/* ns */
	int64_t ppb, ppb2;	/* drift before / after the change */
	int64_t dchange;	/* tchange - t0, ns; INT64_MAX: no change */
};

/* local(t) - t, for dt = t - t0. */
int64_t sim_clock_delta(const struct sim_clock *c, int64_t dt);

/* ------------------------------------------------------ sync traffic */

enum sim_topology { SIM_MESH, SIM_STAR, SIM_CHAIN, SIM_SPLIT };

#define SIM_SYNC_MAX_HOSTS 256

struct sim_drift_change {
	unsigned host;
	double fraction;	/* 0..1 of the span */
	int64_t ppb;
};

struct sim_sync_opts {
	uint64_t max_offset;	/* ns: offsets uniform in [-max, max] */
	int64_t max_drift_ppb;	/* drifts uniform in [-max, max] */
	double rate, rpc_rate;	/* messages per second per directed pair */
	double delay, jitter;	/* ns: minimum one-way delay, mean of the exponential jitter */
	double asym;		/* delay factor from the higher- to the lower-numbered host */
	double loss, dup;	/* probabilities */
	bool one_way;		/* only lower -> higher */
	enum sim_topology topo;
	struct sim_drift_change *changes;
	size_t nchanges;
};

struct sim_sync;

/*
 * The clocks and links of a session of `hosts` hosts from t0 (ns since the
 * epoch) over span ns. NULL with a message in err on bad options.
 */
struct sim_sync *sim_sync_new(const struct sim_sync_opts *o, unsigned hosts, uint64_t seed,
			      uint64_t t0, uint64_t span, char *err, size_t errlen);
void sim_sync_free(struct sim_sync *s);

/* Host h's clock. */
const struct sim_clock *sim_sync_clock(const struct sim_sync *s, unsigned h);

/*
 * Writes host h's sync stream (probes and RPCs sent and received, in time
 * order) into w, its user-space trace: stream class of its own, stream
 * file sync_0. The trace clock reads mono = t - t0 + mono0 at true time t
 * on a perfect clock (mono0: the host's monotonic time at t0), and
 * local time on the host's clock. Returns 0 or -errno.
 */
int sim_sync_write(struct sim_sync *s, unsigned h, struct trawl_ctf_writer *w, uint64_t mono0);

/* Writes the truth file at path. Returns 0 or -errno. */
int sim_sync_truth(const struct sim_sync *s, const char *path);

/* Totals over the session, once every host was written. */
struct sim_sync_stats {
	uint64_t probes, rpcs;		/* messages (first copies) */
	uint64_t sends, recvs, lost, dups;	/* events / copies, both kinds */
};
void sim_sync_stats(const struct sim_sync *s, struct sim_sync_stats *st);

#endif
