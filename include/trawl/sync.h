/* SPDX-License-Identifier: MIT */
/*
 * trawl/sync.h - clock synchronization by the convex-hull method.
 *
 * Model: for a pair of nodes (A = the reference side, B), B's clock is a
 * line of A's: t_B = a * t_A + b. Every message gives one constraint:
 *   A->B (send on A, receive on B): P = (send_A, recv_B) is on or above it;
 *   B->A (send on B, receive on A): Q = (recv_A, send_B) is on or below it.
 * The feasible set F = {(a, b) : every P on or above, every Q on or below}
 * depends only on the lower hull of the P points and the upper hull of the
 * Q points. From F this module gives:
 *   - the extreme lines Lmin (flattest) and Lmax (steepest);
 *   - an estimate strictly inside F (so that, after correction, no message
 *     is received before it was sent), as a fixed-point transform;
 *   - a time-valued accuracy bound at any instant x: the largest distance
 *     between the applied estimate and any line of F at x, in ns;
 *   - a quality state, and a reported fallback when no line fits.
 * See docs/sync.md for the algorithm, the numerics and the test method.
 *
 * Times are int64 nanoseconds on each node's own clock (epoch-scale values
 * are fine). All cross products are exact (128-bit integers); the only
 * limit is that the times of one pair span less than 2^61 ns (73 years)
 * on each clock, else -ERANGE.
 *
 * Conventions: int returns are 0 or -errno; pointer returns are NULL with
 * errno set; (err, errlen) receives a one-line message. Results are
 * caller-owned; trawl_sync_pair_release() frees what a result holds.
 * Nothing here prints, allocates per message (the incremental form), or
 * uses threads; objects are not thread-safe (one user at a time).
 */
#ifndef TRAWL_SYNC_H
#define TRAWL_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include <trawl/xform.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* A bound or range end that does not exist (unbounded). */
#define TRAWL_SYNC_UNBOUNDED INT64_MAX

enum trawl_sync_quality {
	TRAWL_SYNC_ABSENT = 0,	/* no message: identity, no bound */
	TRAWL_SYNC_ONE_WAY,	/* one direction only: slope 1 and the
				 * tightest offset (zero minimum delay); only a
				 * one-sided range, no bound */
	TRAWL_SYNC_OFFSET_ONLY,	/* both directions, but the data bound the
				 * slope on one side only (e.g. all A->B
				 * traffic before all B->A): the slope is
				 * limited to 1 +- max_drift_ppm (an
				 * assumption, stated), the offset is bounded
				 * both ways */
	TRAWL_SYNC_ACCURATE,	/* F is bounded by the data alone */
	TRAWL_SYNC_FAIL,	/* the hulls cross: no line satisfies every
				 * message (a drift change, NTP slewing, a
				 * wrong match). The estimate is the fallback
				 * (see below); no bound; violations counted */
};

/* A short lower-case name ("accurate", "one-way", ...). */
const char *trawl_sync_quality_name(enum trawl_sync_quality q);

/* A line of (A, B) space: through (x, y), slope num/den (den > 0). */
struct trawl_sync_line {
	int64_t x, y;
	int64_t num, den;
};

/* Options; NULL means all defaults. Zero fields take their default. */
struct trawl_sync_opts {
	size_t size;		/* sizeof(struct trawl_sync_opts) */
	uint32_t max_drift_ppm;	/* the slope assumption of OFFSET_ONLY:
				 * |a - 1| <= this (default 500 ppm) */
	uint32_t hull_cap;	/* incremental form: vertices kept per hull
				 * (default 1024, minimum 8); a point that
				 * would need more is dropped and counted */
};

/*
 * The result for one pair (caller storage; trawl_sync_pair_release() frees
 * the vertex array). Everything is on (A, B) clocks: x on A, y on B.
 */
struct trawl_sync_pair {
	enum trawl_sync_quality quality;
	uint64_t n_ab, n_ba;		/* messages seen in each direction */
	int64_t x_first, x_last;	/* span of the messages on A's clock */
	struct trawl_sync_xform fwd;	/* the estimate, A time -> B time */
	struct trawl_sync_xform inv;	/* its inverse, B time -> A time */
	/* Slope limits of F as fractions; den == 0 means unbounded on that
	 * side. For ACCURATE, Lmin and Lmax are the extreme feasible lines. */
	int64_t amin_num, amin_den, amax_num, amax_den;
	struct trawl_sync_line lmin, lmax;
	/*
	 * Messages that the applied estimate shows received before they were
	 * sent (on either transform). 0 unless FAIL (or a degenerate F
	 * thinner than 2 ns). The batch form counts every message; the
	 * incremental form counts the hull vertices it keeps (0 there
	 * implies 0 for every message).
	 */
	uint64_t violations;
	uint64_t dropped;		/* incremental: points over hull_cap */
	size_t hull_ab, hull_ba;	/* hull vertices (kept) per direction */
	/* Private to the library: the lines through F's vertices (or, for
	 * ONE_WAY, the hull's edges) and the x span where they hold. */
	size_t nlines;
	struct trawl_sync_line *lines;
	int64_t span_lo, span_hi;
};

/* One message: send and receive times, each on its own node's clock. */
struct trawl_sync_msg {
	int64_t send, recv;
};

/*
 * Batch, exact. ab[n_ab]: messages A->B (send on A, recv on B); ba[n_ba]:
 * messages B->A (send on B, recv on A). Any order; duplicates are fine.
 * Fills *out (release it with trawl_sync_pair_release()). Returns 0;
 * -ENOMEM; -ERANGE (times of one clock span 2^61 ns or more); -EINVAL.
 */
int trawl_sync_pair_compute(const struct trawl_sync_msg *ab, size_t n_ab,
			    const struct trawl_sync_msg *ba, size_t n_ba,
			    const struct trawl_sync_opts *opts,
			    struct trawl_sync_pair *out, char *err, size_t errlen);

/* Frees what *r holds (not r itself); r may be NULL. */
void trawl_sync_pair_release(struct trawl_sync_pair *r);

/* Deep copy of src into *dst (release dst later). 0 or -ENOMEM. */
int trawl_sync_pair_copy(struct trawl_sync_pair *dst, const struct trawl_sync_pair *src);

/*
 * The range of B times that lines of F take at A time x, as integers that
 * enclose it: *lo <= a*x + b <= *hi for every (a, b) in F. An unbounded
 * side is INT64_MIN / INT64_MAX (ONE_WAY: one side; outside the span of
 * its hull both; ABSENT, FAIL: both). OFFSET_ONLY's range assumes its
 * slope limit. Returns 0 or -EINVAL.
 */
int trawl_sync_pair_range(const struct trawl_sync_pair *r, int64_t x, int64_t *lo, int64_t *hi);

/*
 * The accuracy bound at A time x, in ns: the true B time of A time x is
 * within this of trawl_sync_xform_apply(&r->fwd, x), whatever line of F is
 * the truth. TRAWL_SYNC_UNBOUNDED when F is unbounded at x (ABSENT,
 * ONE_WAY, FAIL).
 */
int64_t trawl_sync_pair_bound(const struct trawl_sync_pair *r, int64_t x);

/*
 * The same in the other direction, for B time y: the true A time of B
 * time y is within this of trawl_sync_xform_apply(&r->inv, y).
 */
int64_t trawl_sync_pair_bound_inv(const struct trawl_sync_pair *r, int64_t y);

/* -------------------------------------------------------- incremental */

/*
 * The same result, one message at a time, in constant memory: only hull
 * vertices that can still be tight for a feasible slope are kept, in two
 * arrays of hull_cap vertices allocated once. After the last message the
 * result equals the batch result (same quality, Lmin/Lmax, estimate and
 * bound), except when a hull would exceed hull_cap (counted in
 * `dropped`: the bound then stays valid but the estimate may violate the
 * dropped messages) and for FAIL's fallback, which sees the kept vertices.
 */
struct trawl_sync_inc;

/* NULL + errno (ENOMEM, EINVAL) on error; free with trawl_sync_inc_free(). */
struct trawl_sync_inc *trawl_sync_inc_new(const struct trawl_sync_opts *opts);
void trawl_sync_inc_free(struct trawl_sync_inc *s);

/* Direction of a message. */
enum trawl_sync_dir { TRAWL_SYNC_AB = 0, TRAWL_SYNC_BA = 1 };

/*
 * Adds one message of direction dir (send on the sender's clock, recv on
 * the receiver's). O(log h) when the message changes nothing, O(h) when
 * it does (h = hull size). Returns 0, or -ERANGE (span too large; the
 * message is ignored), -EINVAL.
 */
int trawl_sync_inc_add(struct trawl_sync_inc *s, enum trawl_sync_dir dir,
		       int64_t send, int64_t recv);

/* The current result (release it). 0 or -ENOMEM. */
int trawl_sync_inc_result(const struct trawl_sync_inc *s, struct trawl_sync_pair *out);

/* Bytes held by s (constant after trawl_sync_inc_new()). */
size_t trawl_sync_inc_memory(const struct trawl_sync_inc *s);

/* ------------------------------------------------------------ N nodes */

/*
 * A graph of nodes 0..n-1 and pairwise results. solve() picks in every
 * connected group a reference (the caller's, if in the group, else the
 * node whose paths to all others have the smallest summed bound), and
 * composes the transforms along the best paths (Floyd-Warshall; edge
 * weight = the pair's bound at mid-trace; paths through FAIL or ONE_WAY
 * pairs only when no bounded path exists), with the bounds added.
 */
struct trawl_sync_graph;

struct trawl_sync_node {
	size_t group;			/* 0.. groups-1 */
	size_t ref;			/* reference node of the group */
	size_t next;			/* next node toward ref (ref: itself) */
	size_t hops;
	enum trawl_sync_quality quality;	/* worst along the path */
	struct trawl_sync_xform to_ref;	/* node time -> reference time */
	int64_t bound_mid;		/* bound at the middle of its traffic */
};

/* 1 <= nnodes <= 4096 (memory and solve() are O(n^2) and O(n^3)).
 * NULL + errno (EINVAL, ENOMEM) on error; free with trawl_sync_graph_free(). */
struct trawl_sync_graph *trawl_sync_graph_new(size_t nnodes);
void trawl_sync_graph_free(struct trawl_sync_graph *g);

/*
 * Sets the result of pair (a, b): r is as computed with a as the A side.
 * The graph keeps a copy. Returns 0, -EINVAL (bad index, a == b),
 * -ENOMEM.
 */
int trawl_sync_graph_set_pair(struct trawl_sync_graph *g, size_t a, size_t b,
			      const struct trawl_sync_pair *r);

/*
 * Computes references and transforms. ref: the preferred reference node,
 * or -1 for automatic. Returns the number of groups, or -errno.
 */
int trawl_sync_graph_solve(struct trawl_sync_graph *g, long ref, char *err, size_t errlen);

/* The solved node i (after solve()). 0 or -EINVAL. */
int trawl_sync_graph_node(const struct trawl_sync_graph *g, size_t i, struct trawl_sync_node *out);

/*
 * The accuracy bound of node i at its own time t: the true reference time
 * is within this of trawl_sync_xform_apply(&node.to_ref, t). 0 for a
 * reference; TRAWL_SYNC_UNBOUNDED if a pair on the path has no bound.
 */
int64_t trawl_sync_graph_bound(const struct trawl_sync_graph *g, size_t i, int64_t t);

/*
 * Settles the offsets over every link at given times (after solve()).
 * The transforms hold the pairs of the paths they were composed along;
 * a link off those paths (two nodes each corrected through a third) can
 * be off by the sum of both paths' errors, so that its messages show
 * received before sent. times holds nsets sets of n times: times[k * n +
 * i] is node i's k-th time on its own clock (INT64_MIN: none; its links
 * are left out there): a live session's present (one set), or points
 * across a trace. When a link is broken at one of them, every node of
 * its group is moved, offset only, to the middle of what all the links
 * allow at all those times together (difference constraints from the
 * pairs' ranges, solved from the reference); a group whose links allow
 * nothing together (or a node bounded on one side only) is left as it
 * was. The bounds count the move. Returns the number of nodes moved, or
 * -errno (-EINVAL before solve(), -ENOMEM).
 */
int trawl_sync_graph_settle(struct trawl_sync_graph *g, const int64_t *times, size_t nsets);

/* ------------------------------------------------ sync points (traces) */

/*
 * Finding the messages in traces (lib/sync/points.c). A node is a trace's
 * env.hostname; a message is a send event on one node and a receive event
 * on another with the same key:
 *   - trawl_sync:probe_send / probe_recv, fields key (integer) and peer
 *     (string: the other node), key unique per sender;
 *   - trawl_sync:tcp_send / tcp_recv, key (saddr, daddr, sport, dport,
 *     seq, ack, flags, len);
 *   - user matches SEND_EVENT.FIELD = RECV_EVENT.FIELD (integer or string
 *     fields; see trawl_sync_match_parse()).
 * A key seen more than once on a side is ignored entirely (duplicates,
 * counted: the copies cannot be told apart); a send without receive is
 * lost (counted); a receive without send is unmatched (counted); a key
 * sent and received on one node is ignored (counted).
 */

/* A user match: SEND_EVENT.FIELD = RECV_EVENT.FIELD. */
struct trawl_sync_match {
	char *send_event, *send_field;
	char *recv_event, *recv_field;
};

/*
 * Parses "SEND_EVENT.FIELD = RECV_EVENT.FIELD" (spaces optional; the event
 * name is everything before the last '.'). Fills *m (strings malloc'd;
 * trawl_sync_match_release() frees them). 0, -EINVAL (message in err),
 * -ENOMEM.
 */
int trawl_sync_match_parse(const char *spec, struct trawl_sync_match *m,
			   char *err, size_t errlen);
void trawl_sync_match_release(struct trawl_sync_match *m);

/* Which messages to look for; NULL means probes and TCP. */
struct trawl_sink;
struct trawl_sync_points_opts {
	size_t size;				/* sizeof(struct trawl_sync_points_opts) */
	const struct trawl_sync_match *matches;	/* user matches */
	size_t nmatches;
	int no_probes, no_tcp;			/* non-zero: skip those events */
	unsigned threads;			/* trawl_reader_opts.threads */
	/* trawl_sync_points_read(): more sinks that get the same events after
	 * the finder (e.g. a progress display, which can ask the reader how
	 * far it is: trawl_reader_progress()). NULL: none. */
	const struct trawl_sink *sinks;
	size_t nsinks;
	/* A trace under a session that cannot be opened: its message here,
	 * and it is skipped (trawl_reader_opts.bad_trace). NULL: an error. */
	void (*bad_trace)(void *arg, const char *msg);
	void *bad_trace_arg;
};

/* A node (one hostname) and its traces. */
struct trawl_sync_host {
	char *name;
	char **paths;			/* its trace directories */
	size_t npaths;
	int64_t first_ts, last_ts;	/* its events' span, raw (ns since the
					 * epoch); INT64_MAX/INT64_MIN: none */
	uint64_t sends, recvs;		/* sync events seen on it */
	uint64_t unmatched_sends;	/* sends to unknown peers, never received */
	uint64_t unmatched_recvs;	/* receives whose send is not in the traces */
};

/* The messages between hosts a < b (indexes into hosts). */
struct trawl_sync_link {
	size_t a, b;
	struct trawl_sync_msg *ab, *ba;	/* a->b (send on a) and b->a */
	size_t n_ab, n_ba;
	/* Order in which each message became complete while reading the
	 * traces in time order (what a live relay would see): the order in
	 * which the incremental form is fed. */
	uint64_t *seq_ab, *seq_ba;
	uint64_t lost_ab, lost_ba;	/* sends whose receive is missing */
	uint64_t dup_ab, dup_ba;	/* keys ignored: seen twice on a side */
};

struct trawl_sync_points {
	struct trawl_sync_host *hosts;	/* sorted by name */
	size_t nhosts;
	struct trawl_sync_link *links;	/* only pairs with any message */
	size_t nlinks;
	uint64_t events;		/* sync events read */
	uint64_t by_kind[3];		/* matched messages: probes, tcp, user matches */
	uint64_t same_host;		/* keys sent and received on one node */
	uint64_t bad_events;		/* sync events lacking a field (skipped) */
	unsigned reader_errors;		/* corrupt streams met (the rest is used) */
	char first_error[256];		/* the first of them, "" if none */
};

/*
 * Reads the traces under paths (a session, or trace directories) and
 * collects the messages. Returns NULL + errno (message in err); free with
 * trawl_sync_points_free(). Corrupt streams do not fail the call: they
 * are counted in reader_errors.
 */
struct trawl_sync_points *trawl_sync_points_read(const char *const *paths, size_t npaths,
						 const struct trawl_sync_points_opts *o,
						 char *err, size_t errlen);
void trawl_sync_points_free(struct trawl_sync_points *p);

/*
 * The finder as a sink of a reader's pipeline (trawl/pipe.h), for any
 * source, a live one included: trawl_sync_points_read() is a files reader
 * running it. It binds the fields it reads when the run starts (a match's
 * event with no such field fails the run then). After the run,
 * trawl_sync_finder_points() gives the points (NULL + errno, message in
 * err: what failed the run); free them with trawl_sync_points_free() and
 * the finder with trawl_sync_finder_free().
 */
struct trawl_sync_finder;
struct trawl_sink;
struct trawl_sync_finder *trawl_sync_finder_new(const struct trawl_sync_points_opts *o,
						char *err, size_t errlen);
struct trawl_sink trawl_sync_finder_sink(struct trawl_sync_finder *f);
struct trawl_sync_points *trawl_sync_finder_points(struct trawl_sync_finder *f, char *err,
						   size_t errlen);
void trawl_sync_finder_free(struct trawl_sync_finder *f);
/*
 * The points found so far, during the run (a live one: `trawl sync
 * --live`), as trawl_sync_finder_points() would give them if the run
 * ended now (each host's span: its streams' events so far); the finder
 * goes on. A new copy: free it with trawl_sync_points_free(). NULL +
 * errno, the message in err.
 */
struct trawl_sync_points *trawl_sync_finder_snapshot(struct trawl_sync_finder *f, char *err,
						     size_t errlen);

/*
 * Computes the pair result of link l (A = hosts[l->a], B = hosts[l->b]):
 * batch (trawl_sync_pair_compute()) or, when incremental is non-zero, the
 * incremental form fed in the seq order. Release *out. 0 or -errno.
 */
int trawl_sync_link_compute(const struct trawl_sync_link *l, int incremental,
			    const struct trawl_sync_opts *opts, struct trawl_sync_pair *out,
			    char *err, size_t errlen);

/* ------------------------------------------------ live (lib/sync/live.c) */

/*
 * Clocks corrected while a live session flows: the finder over the events
 * a live reader decodes (its tap, before the merge), and, when the reader
 * asks and new sync events came, each node's correction to the
 * reference from what was found so far (the pairs, the graph), as `trawl
 * sync --live` computes them. trawl_sync_live_clock() is what a reader
 * takes (trawl_reader_opts.clock). Every message is kept: memory grows
 * with the messages of the session, and each refresh computes them all
 * again, so a refresh waits at least 19 times as long as the last one
 * took (at most 5 % of the reader's thread; docs/sync.md, "Live"), but
 * for the last refresh, once the sources have ended. A trace that came
 * counts as news (a node alone is said to be).
 */
struct trawl_sync_live;
struct trawl_reader_clock;

struct trawl_sync_live_node {
	const char *host;
	const char *reference;		/* its reference ("" unsynchronized) */
	enum trawl_sync_quality quality;	/* ABSENT: no message yet */
	struct trawl_sync_xform to_ref;	/* node time -> reference time */
	int64_t at;			/* node time of its newest event so far */
	int64_t offset_ns;		/* node minus reference, at `at` */
	int64_t bound_ns;		/* at `at`; TRAWL_SYNC_UNBOUNDED: none */
	double drift_ppm;
	uint64_t messages;		/* on the links of the session */
	int is_ref;
};

struct trawl_sync_live_opts {
	size_t size;			/* sizeof(struct trawl_sync_live_opts) */
	const struct trawl_sync_points_opts *points;	/* NULL: defaults */
	const struct trawl_sync_opts *sync;		/* NULL: defaults */
	const char *reference;		/* NULL: automatic, then kept */
	/* Called from the reader's refresh for each node whose estimate
	 * changed: its quality, its reference, or its offset by more than its
	 * bound (or 1 us), or its bound by half. NULL: none. */
	void (*changed)(void *arg, const struct trawl_sync_live_node *n);
	void *arg;
};

/* NULL + errno, the message in err. The options are copied. */
struct trawl_sync_live *trawl_sync_live_new(const struct trawl_sync_live_opts *o, char *err,
					    size_t errlen);
void trawl_sync_live_free(struct trawl_sync_live *l);
/* What a live reader takes as trawl_reader_opts.clock; as long as l lives. */
const struct trawl_reader_clock *trawl_sync_live_clock(struct trawl_sync_live *l);
/* The estimate of host as of the last refresh: 1 (out set), 0 no such
 * host yet. Strings as long as l lives and until its next refresh. */
int trawl_sync_live_node(const struct trawl_sync_live *l, const char *host,
			 struct trawl_sync_live_node *out);
/* The first error (-errno), its message in err; 0 none. */
int trawl_sync_live_error(const struct trawl_sync_live *l, char *err, size_t errlen);

/* -------------------------------------------- the stored result (sync.txt) */

/*
 * `trawl sync SESSION` stores its result as SESSION/sync.txt
 * (lib/sync/store.c; the format is described in docs/sync.md): one line
 * per node with its transform node time -> reference time.
 */
#define TRAWL_SYNC_STORE_NAME "sync.txt"
#define TRAWL_SYNC_STORE_VERSION 1

struct trawl_sync_store_entry {
	char *host;
	struct trawl_sync_xform xform;	/* node time -> reference time */
	/* Quality: the worst along the node's path to its reference (the
	 * reference itself: ACCURATE with is_ref set). */
	enum trawl_sync_quality quality;
	int is_ref;
	char *reference;		/* its reference node */
	size_t group;			/* connected group (0..) */
	size_t hops;
	char *path;			/* "host2,host1,host0": the nodes to the reference */
	int64_t first_ts, last_ts;	/* the node's span, raw ns */
	/* The accuracy bound at the start, middle and end of the span and its
	 * maximum over it, ns; TRAWL_SYNC_UNBOUNDED when there is none. */
	int64_t bound_start, bound_mid, bound_end, bound_max;
};

struct trawl_reader_clock_fix;		/* <trawl/pipe.h> */

struct trawl_sync_store {
	struct trawl_sync_store_entry *entries;
	size_t n;
	size_t groups;
	/* The same as reader corrections (host points into entries[i]). */
	struct trawl_reader_clock_fix *fixes;
	size_t nfixes;
};

/*
 * Writes path (a new file written beside, under a random name, synced and
 * renamed over: readers never see half of it; a symbolic link at path is
 * refused, -ELOOP, a device or FIFO written in place). Host names must be
 * free of white space. 0 or -errno, the message in err.
 */
int trawl_sync_store_write(const char *path, const struct trawl_sync_store_entry *e, size_t n,
			   char *err, size_t errlen);

/*
 * Loads path. NULL + errno (ENOENT: no such file; EINVAL: malformed, with
 * "FILE:LINE: why" in err); free with trawl_sync_store_free().
 */
struct trawl_sync_store *trawl_sync_store_load(const char *path, char *err, size_t errlen);
void trawl_sync_store_free(struct trawl_sync_store *s);

/*
 * The stored result that applies to traces read from paths: PATH/sync.txt
 * for the first path that has one in it or in one of its two parent
 * directories (SESSION/HOST/DOMAIN is a trace), or the first path that is
 * a file (a stored result named itself). Returns a malloc'd path,
 * or NULL (errno ENOENT when there is none, ENOMEM).
 */
char *trawl_sync_store_find(const char *const *paths, size_t npaths);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
