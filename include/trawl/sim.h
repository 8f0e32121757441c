/* SPDX-License-Identifier: MIT */
/*
 * trawl/sim.h - the cluster simulator: writes a synthetic multi-host
 * session (OUTPUT/host<i>/{kernel,ust}/, CTF 1.8) with the CTF writer,
 * deterministic for a given seed, and optionally streams every trace to a
 * relay. With sync on, each host has its own clock (offset, drift, an
 * optional drift change) and the hosts exchange probes and RPCs with
 * known delays; the truth (the clocks, the links) is written to
 * OUTPUT/truth.txt and exposed in the result. `trawl simulate` is a
 * program around it (docs/man/trawl-simulate.1 describes what is written).
 *
 *	struct trawl_sim_opts o = TRAWL_SIM_OPTS_INIT;
 *	o.output = "sess";
 *	o.hosts = 3;
 *	struct trawl_sim *s = trawl_sim_new(&o, err, sizeof(err));
 *	... trawl_sim_result(s)->clocks: the truth, known before the run ...
 *	trawl_sim_run(s, err, sizeof(err));
 *	trawl_sim_free(s);
 *
 * Conventions: int returns are 0 or -errno; pointer returns are NULL with
 * errno set; (err, errlen) receives a one-line message (err may be NULL).
 * Messages name an option by its `trawl simulate` flag (each field below
 * says which). The library never prints: the only warning (a relay lost
 * while a local copy is written) goes to opts.log.
 */
#ifndef TRAWL_SIM_H
#define TRAWL_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Limits of the options (trawl_sim_new() refuses values beyond them). */
#define TRAWL_SIM_MAX_HOSTS		100000
#define TRAWL_SIM_MAX_CPUS		1024
#define TRAWL_SIM_SYNC_MAX_HOSTS	256	/* with sync */
#define TRAWL_SIM_MAX_OFFSET_NS		1000000000000ull	/* 1000 s */
#define TRAWL_SIM_MAX_DRIFT_PPB		1000000			/* 1000 ppm */
#define TRAWL_SIM_MAX_RATE		1e7	/* messages per second */
#define TRAWL_SIM_MAX_DELAY_NS		1e10	/* delay and jitter */
#define TRAWL_SIM_MAX_ASYM		1000.0

/* Log levels of opts.log (syslog's numbers). */
enum { TRAWL_SIM_LOG_WARNING = 4 };

/* --topology: which directed pairs of hosts exchange messages. */
enum trawl_sim_topology {
	TRAWL_SIM_MESH,		/* every pair */
	TRAWL_SIM_STAR,		/* host0 and each other host */
	TRAWL_SIM_CHAIN,	/* host i and host i+1 */
	TRAWL_SIM_SPLIT,	/* two meshes (the first half, the rest), no link between */
};

/* --drift-change HOST:FRACTION:PPM */
struct trawl_sim_drift_change {
	unsigned host;
	double fraction;	/* 0..1 of the span: when the drift changes */
	int64_t ppb;		/* the drift after, parts per billion */
};

struct trawl_sim_opts {
	size_t sz;			/* sizeof(struct trawl_sim_opts) */
	const char *output;		/* -o: the session directory (created); NULL:
					 * to the relay only */
	bool force;			/* --force: output may be non-empty */
	unsigned hosts;			/* --hosts, 1..TRAWL_SIM_MAX_HOSTS; 0: 2 */
	unsigned cpus;			/* --cpus, 1..TRAWL_SIM_MAX_CPUS; 0: 2 */
	uint64_t events;		/* --events: in all hosts' traces (0: none) */
	uint64_t seed;			/* --seed */
	size_t packet_size;		/* --packet-size, bytes: 4096..1 GiB, a multiple
					 * of 8; 0: 256 KiB */
	bool shapes;			/* --shapes: every format corner case too */
	const char *relay;		/* --relay HOST[:PORT]: also stream every trace
					 * there; NULL: none */
	const char *session;		/* --session: the relay's session name (only
					 * with relay); NULL: "simulate" */

	/* --sync: host clocks and sync traffic (needs output: truth.txt) */
	bool sync;
	uint64_t max_offset_ns;		/* --max-offset: offsets uniform in +-this */
	int64_t max_drift_ppb;		/* --max-drift: drifts uniform in +-this */
	double rate, rpc_rate;		/* --sync-rate, --rpc-rate: probes and RPCs
					 * per second per directed pair */
	double delay_ns, jitter_ns;	/* --delay, --jitter: minimum one-way delay,
					 * mean of the exponential jitter added */
	double asym;			/* --asym: delay factor from higher- to
					 * lower-numbered hosts, > 0 */
	double loss, dup;		/* --loss, --dup: fractions 0..1 of receives
					 * lost, of messages sent twice with one key */
	bool one_way;			/* --one-way: only lower -> higher */
	enum trawl_sim_topology topology;	/* --topology */
	const struct trawl_sim_drift_change *changes;	/* --drift-change, at most
							 * one per host */
	size_t nchanges;

	/*
	 * Progress: called after every 65536 events of a stream and at its
	 * end, with the events written so far and the total; from the thread
	 * running trawl_sim_run(). Non-zero: the run stops, -ECANCELED.
	 * NULL: none.
	 */
	int (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	/* Warnings (a relay lost while the local copy goes on), one line
	 * without a newline. NULL: none. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

/* The options of `trawl simulate` run without any: 2 hosts x 2 CPUs,
 * 100000 events, seed 1, 256 KiB packets; with sync: offsets +-5 s,
 * drifts +-100 ppm, 200 probes and 50 RPCs per second per pair, delays of
 * 50 us plus 20 us of jitter on average, a mesh. Set output or relay. */
#define TRAWL_SIM_OPTS_INIT {						\
	.sz = sizeof(struct trawl_sim_opts), .hosts = 2, .cpus = 2,	\
	.events = 100000, .seed = 1, .packet_size = 256 * 1024,	\
	.max_offset_ns = 5000000000ull, .max_drift_ppb = 100000,	\
	.rate = 200, .rpc_rate = 50, .delay_ns = 50000, .jitter_ns = 20000, \
	.asym = 1, .topology = TRAWL_SIM_MESH,				\
}

/*
 * A host's clock against the true time t (ns since the epoch), with
 * start the session start and dt = t - start:
 *	local(t) = t + offset_ns + drift_ppb * 1e-9 * dt	(dt < change_ns)
 * and after a drift change, continuous at change_ns,
 *	local(t) = t + offset_ns + (drift_ppb * change_ns + drift2_ppb * (dt - change_ns)) * 1e-9
 * rounded to the nearest ns (halves up). host0 is the reference (0, 0).
 */
struct trawl_sim_clock {
	int64_t offset_ns;
	int64_t drift_ppb;
	int64_t change_ns;		/* since the start; INT64_MAX: no change */
	int64_t drift2_ppb;		/* the drift after change_ns */
};

/* local(t) - t for dt = t - start, as above. */
int64_t trawl_sim_clock_delta(const struct trawl_sim_clock *c, int64_t dt);

/* What a simulation is and wrote; owned by its trawl_sim. */
struct trawl_sim_result {
	unsigned hosts, cpus;
	uint64_t start_ns;		/* the session start, ns since the epoch */
	uint64_t span_ns;		/* the span every host covers */
	uint64_t events;		/* events of all traces: kernel + ust */
	uint64_t kernel_events, ust_events;
	/* With sync (else NULL and 0): each host's clock (the truth of
	 * truth.txt), known from trawl_sim_new() on; the path of truth.txt,
	 * and the totals of the traffic, once trawl_sim_run() returned 0. */
	const struct trawl_sim_clock *clocks;	/* [hosts] */
	const char *truth;
	uint64_t probes, rpcs;		/* messages (first copies) */
	uint64_t sends, recvs;		/* events, both kinds */
	uint64_t lost, dups;		/* copies lost, messages sent twice */
	/* What the run wrote, also when trawl_sim_run() failed: the events
	 * emitted (taken by the traces' writers; events above, when all went
	 * well); with a relay, the events streamed to it and those of them
	 * it did not store (cut off: the disk full, a quota, its buffers; or
	 * lost), counted as discarded: exact unless relay_inexact (the relay
	 * did not say where it cut: then at most that). */
	uint64_t emitted;
	uint64_t relay_events, relay_discarded;
	bool relay_inexact;
};

struct trawl_sim;

/*
 * Checks the options, that output is empty (unless force; it need not
 * exist), and computes the session: its start and span, every host's
 * clock. Writes nothing. The options are copied (changes too); their
 * strings must outlive the simulation, as must progress_arg and log_arg.
 * Returns the simulation (free it with trawl_sim_free()), or NULL with
 * errno set and a message in err: EINVAL (bad options), EEXIST (output
 * not empty), ENOMEM.
 */
struct trawl_sim *trawl_sim_new(const struct trawl_sim_opts *o, char *err, size_t errlen);

/*
 * Writes every host's traces (and streams them to the relay), then
 * truth.txt with sync. Once per simulation (again: -EINVAL). Returns 0,
 * or -errno with a message in err: the output or the relay failed,
 * -ECANCELED when progress asked to stop (what was written stays).
 */
int trawl_sim_run(struct trawl_sim *s, char *err, size_t errlen);

/* What the simulation is and (after trawl_sim_run()) wrote; valid until
 * trawl_sim_free(). */
const struct trawl_sim_result *trawl_sim_result(const struct trawl_sim *s);

/* Frees the simulation; accepts NULL. */
void trawl_sim_free(struct trawl_sim *s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
