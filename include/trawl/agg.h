/* SPDX-License-Identifier: MIT */
/*
 * trawl/agg.h - aggregations: DTrace / bpftrace style figures over any
 * event and any bound field, keyed by fields, host, cpu, comm, tid or
 * cgroup, and heat maps (a histogram per time interval), as a sink of the
 * reading pipeline: on trace files and on a live relay session alike.
 *
 * A statement names the aggregations (docs/aggregations.md), e.g.
 *   "hist(lat(syscall_entry_*, syscall_exit_*)) by comm"
 *   "count(sched_switch) by host, cpu; sum(syscall_exit_read.ret) by comm top 5"
 *   "heatmap(lat(syscall_entry_*, syscall_exit_*))"
 *
 * Conventions as in trawl/pipe.h: int returns are 0 or -errno, pointer
 * returns NULL with errno set, messages in (err, errlen); _free accepts
 * NULL.
 */
#ifndef TRAWL_AGG_H
#define TRAWL_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trawl/pipe.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct trawl_agg;

struct trawl_agg_opts {
	size_t sz;			/* sizeof(struct trawl_agg_opts) */
	const char *spec;		/* the statement */
	/*
	 * > 0: results per interval of this many ns (aligned on multiples of
	 * it since the epoch): when an event at or past an interval's end
	 * comes, on_interval() is called for it (and for the empty ones
	 * between), then the figures are cleared (heat maps keep their
	 * columns: one per interval). The last interval is handed over by
	 * finish(). 0: one set of figures for the whole run.
	 */
	int64_t interval;
	/*
	 * Live, the reader waiting: an interval closes once every stream has
	 * passed its end (trawl_reader_low(), the streams' beacons). grace >
	 * 0: also once the wall clock (CLOCK_REALTIME) is this many ns past
	 * its end, when no stream says anything of its time (no beacons) or
	 * their low has not risen for 4 x grace; events that come later for
	 * it are counted as late (trawl_agg_late()) and left out.
	 */
	int64_t grace;
	/* An interval [begin, end) closed; the results are those of it. */
	void (*on_interval)(void *arg, struct trawl_agg *a, int64_t begin, int64_t end);
	void *arg;
};

/*
 * The aggregations of o->spec. NULL + errno: EINVAL (a bad statement:
 * the message gives the column), ENOMEM. The fields are bound when the
 * sink starts (its start() fails with the message in trawl_agg_error()).
 */
struct trawl_agg *trawl_agg_new(const struct trawl_agg_opts *o, char *err, size_t errlen);
struct trawl_sink trawl_agg_sink(struct trawl_agg *a);
/*
 * Can every aggregation match the events of reader r (before it runs)? Its
 * event globs match some event class, its GLOB.FIELD is a number in some
 * of them, each field key is a field of the events matched. 0; -ENOENT (an
 * event, field or key that matches nothing: the message names it and the
 * nearest there is) or -EINVAL (a field that is no number) with the
 * message in err; -ENOMEM. A live reader, whose classes come as it goes,
 * is not checked (0).
 */
struct trawl_reader;
int trawl_agg_check(const struct trawl_agg *a, struct trawl_reader *r, char *err, size_t errlen);
/* The message of the sink's last failure ("" if none). */
const char *trawl_agg_error(const struct trawl_agg *a);
void trawl_agg_free(struct trawl_agg *a);

/* ---- results (of the interval being handed over, or of the run) */

/* Number of aggregations of the statement. */
size_t trawl_agg_n(const struct trawl_agg *a);
/* Aggregation i written back, normalized ("hist(lat(a, b)) by comm"). */
const char *trawl_agg_text(const struct trawl_agg *a, size_t i);
size_t trawl_agg_nkeys(const struct trawl_agg *a, size_t i);
const char *trawl_agg_key_name(const struct trawl_agg *a, size_t i, size_t k);

struct trawl_agg_row {
	size_t sz;			/* sizeof(struct trawl_agg_row) */
	const char *const *key;		/* trawl_agg_nkeys() strings ("-": none) */
	uint64_t count;
	double sum, min, max, avg, stddev;	/* population stddev */
	const uint64_t *buckets;	/* hist, lhist, llhist: the counts */
	size_t nbuckets;
};

/*
 * The rows of aggregation i, in order (count, or the function's value,
 * largest first; ties by key), at most its `top N`. trawl_agg_row() fills
 * *row (pointers valid until the results change or the agg is freed);
 * -ERANGE past the last, -ENOMEM.
 */
size_t trawl_agg_nrows(struct trawl_agg *a, size_t i);
int trawl_agg_row(struct trawl_agg *a, size_t i, size_t r, struct trawl_agg_row *row);
/* The least value of bucket b of aggregation i (INT64_MIN: the bucket of
 * the values below the first). */
int64_t trawl_agg_bucket_low(const struct trawl_agg *a, size_t i, size_t b);
/* Its bound above, the next bucket's least value (not in b); INT64_MAX for
 * the last bucket, which has none (for log2 buckets, [2^62, 2^63): an
 * int64 reaches no further). */
int64_t trawl_agg_bucket_high(const struct trawl_agg *a, size_t i, size_t b);

/* A heat map (heatmap()): columns of time, rows of log2 buckets (as
 * hist()). ncols 0 for other functions. Cell (c, b): its count. */
size_t trawl_agg_heat_ncols(const struct trawl_agg *a, size_t i);
int64_t trawl_agg_heat_col_begin(const struct trawl_agg *a, size_t i, size_t c);
int64_t trawl_agg_heat_col_width(const struct trawl_agg *a, size_t i);
uint64_t trawl_agg_heat_cell(const struct trawl_agg *a, size_t i, size_t c, size_t b);

/* Values left out: events of closed intervals (late), end events with
 * no begin (unpaired), begins replaced by another before their end. */
uint64_t trawl_agg_late(const struct trawl_agg *a);
uint64_t trawl_agg_unpaired(const struct trawl_agg *a);

/*
 * Writes the results as text to fd: for each aggregation its statement,
 * then a table (count, sum, ..., stats), ASCII histograms (hist, lhist,
 * llhist, bpftrace's look) or a heat map (a line per column of time,
 * latency across in shades, a legend); rows of more than one host's end
 * with a "total (N hosts)" row (see trawl_agg_write_json()). Inside
 * on_interval(), a heat map writes only the interval's line (its header
 * first when it is the first). 0 or -errno of write(2).
 */
int trawl_agg_write_text(struct trawl_agg *a, int fd);
/*
 * Writes the results as one JSON object on one line to fd (as the text:
 * inside on_interval(), the interval's): "begin" and "end" (ns since the
 * epoch, with intervals only), then "aggregations", one object each:
 * "statement", "function", "keys" (their names) and "rows" (in the text's
 * order): "key" (name -> value: a number, a string, null for none),
 * "count" and the function's figures ("sum", "min", "max", "avg",
 * "stddev"; stats: all of them; histograms: "avg", "min", "max" and
 * "buckets", the non-empty ones as {"low", "high", "count"}, the value v
 * in low <= v < high, null for no bound). Rows of more than one host's
 * (a host key) are followed by "totals": one object, "hosts" (how many)
 * and the same figures of every row merged (top N's left out too: counts,
 * sums and buckets added, min of the mins, max of the maxes, avg weighted,
 * stddev of all the values; the text's "total (N hosts)" row). A heat
 * map has "width" (ns) and "columns" instead of rows: {"begin",
 * "buckets"}. 0 or -errno of write(2), -ENOMEM.
 */
int trawl_agg_write_json(struct trawl_agg *a, int fd);
/* Heat map i as an SVG picture (axes, labels, a legend). 0, -EINVAL (not a
 * heat map), -errno of write(2). */
int trawl_agg_write_svg(struct trawl_agg *a, size_t i, int fd);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
