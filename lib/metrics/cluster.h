/* SPDX-License-Identifier: MIT */
/*
 * lib/metrics/cluster.h - the cluster as metrics (docs/metrics.md, "The
 * cluster"): per host, what its kernel trace says, computed by the
 * standard analyses (lib/analysis: cputop, schedlat, iolatency, irq,
 * syscalls) running as sinks over the relay's live sessions, read from the
 * relay's own live port like any viewer: one thread per session name,
 * never the relay's thread. Each analysis closes a slice every interval;
 * the slice's rows are added to counters and histograms kept per (session,
 * host), so the figures only grow, as Prometheus counters must.
 */
#ifndef TRAWL_METRICS_CLUSTER_H
#define TRAWL_METRICS_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "metrics/expo.h"

struct tr_cluster_opts {
	const char *live_addr;		/* "HOST:PORT" of the relay's live port */
	unsigned top_k;			/* syscalls with a series of their own per
					 * host (the rest: "other"); 0: 16 */
	unsigned max_sessions;		/* session names followed; 0: 16 */
	unsigned max_hosts;		/* hosts kept, all sessions; 0: 1024 */
	int64_t interval_ns;		/* the analyses' slice; 0: 250 ms */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
};

struct tr_cluster;

/* NULL + errno. Nothing is read before tr_cluster_sessions(). */
TRAWL_HIDDEN struct tr_cluster *tr_cluster_new(const struct tr_cluster_opts *o);
/* The session names the relay holds now (from its thread or any): a
 * reader starts for each new one (up to max_sessions); a name no longer
 * held has its reader stopped and its hosts' series dropped. */
TRAWL_HIDDEN void tr_cluster_sessions(struct tr_cluster *c, const char *const *names, size_t n);
/* Writes the cluster's families (from any thread). */
TRAWL_HIDDEN void tr_cluster_render(struct tr_cluster *c, struct tr_expo *e);
/* Tells every reader to stop (without waiting for it). */
TRAWL_HIDDEN void tr_cluster_stop(struct tr_cluster *c);
/* Stops the readers and frees everything. Accepts NULL. */
TRAWL_HIDDEN void tr_cluster_free(struct tr_cluster *c);

#endif
