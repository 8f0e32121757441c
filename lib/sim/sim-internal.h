/* SPDX-License-Identifier: MIT */
/*
 * lib/sim/sim-internal.h - what the simulator's files share: the seeded
 * random helpers, and the clocks and sync traffic of sync on
 * (lib/sim/sim-sync.c), which lib/sim/sim.c drives. Hidden: none of it is
 * in the shared library's ABI.
 */
#ifndef TRAWL_SIM_INTERNAL_H
#define TRAWL_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "trawl/ctf.h"
#include "trawl/sim.h"

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

/* ------------------------------------------------------ sync traffic */

struct tr_sim_sync;

/*
 * The clocks and links of a session of o->hosts hosts (o as trawl_sim_new()
 * completed it: hosts and cpus set) from t0 (ns since the epoch) over span
 * ns. NULL with errno and a message in err: EINVAL (bad options), ENOMEM.
 */
TRAWL_HIDDEN struct tr_sim_sync *tr_sim_sync_new(const struct trawl_sim_opts *o, uint64_t t0,
						 uint64_t span, char *err, size_t errlen);
TRAWL_HIDDEN void tr_sim_sync_free(struct tr_sim_sync *s);

/* Every host's clock: [hosts], owned by s. */
TRAWL_HIDDEN const struct trawl_sim_clock *tr_sim_sync_clocks(const struct tr_sim_sync *s);

/*
 * Writes host h's sync stream (probes and RPCs sent and received, in time
 * order) into w, its user-space trace: stream class of its own, stream
 * file sync_0. The trace clock reads mono = t - t0 + mono0 at true time t
 * on a perfect clock (mono0: the host's monotonic time at t0), and
 * local time on the host's clock. Returns 0 or -errno.
 */
TRAWL_HIDDEN int tr_sim_sync_write(struct tr_sim_sync *s, unsigned h, struct trawl_ctf_writer *w,
				   uint64_t mono0);

/* Writes the truth file at path (util/outfile.h). Returns 0 or -errno, the
 * message in err. */
TRAWL_HIDDEN int tr_sim_sync_truth(const struct tr_sim_sync *s, const char *path, char *err,
				   size_t errlen);

/* The traffic's totals (probes ... dups of r), once every host was written. */
TRAWL_HIDDEN void tr_sim_sync_stats(const struct tr_sim_sync *s, struct trawl_sim_result *r);

#endif
