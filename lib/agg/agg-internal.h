/* SPDX-License-Identifier: MIT */
/*
 * lib/agg/agg-internal.h - aggregations (trawl/agg.h): the parsed
 * statement, the tables of cells, the thread names, the heat maps.
 *
 *   parse.c   the statement language (docs/aggregations.md) -> tr_agg_spec
 *   table.c   a hash table of fixed-size keys (cells, threads, strings)
 *   agg.c     the sink: binding, keys, latency pairs, intervals
 *   render.c  text tables, histograms, heat maps (text and SVG)
 *   agg-json.c  the results as JSON (trawl_agg_write_json)
 */
#ifndef TRAWL_AGG_INTERNAL_H
#define TRAWL_AGG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "trawl/agg.h"

#define TR_AGG_MAX_KEYS 8
#define TR_AGG_NMAX 16		/* aggregations in one statement */
#define TR_AGG_LOG2_BUCKETS 66	/* < 0, 0, then [2^k, 2^(k+1)) for k = 0 .. 63 */
#define TR_AGG_MAX_BUCKETS 4096	/* lhist / llhist */

enum tr_agg_func {
	TR_AGG_COUNT, TR_AGG_SUM, TR_AGG_MIN, TR_AGG_MAX, TR_AGG_AVG, TR_AGG_STDDEV,
	TR_AGG_STATS, TR_AGG_HIST, TR_AGG_LHIST, TR_AGG_LLHIST, TR_AGG_HEATMAP,
};

enum tr_agg_value {
	TR_AGG_V_EVENTS,	/* count(GLOB): the events themselves */
	TR_AGG_V_FIELD,		/* GLOB.FIELD */
	TR_AGG_V_LAT,		/* lat(BEGIN, END): end ts - begin ts, per tid */
};

enum tr_agg_key_kind {
	TR_AGG_K_HOST, TR_AGG_K_CPU, TR_AGG_K_TID, TR_AGG_K_COMM, TR_AGG_K_CGROUP,
	TR_AGG_K_EVENT, TR_AGG_K_PID,	/* pid: the thread's process (thread group) id */
	TR_AGG_K_FIELD,
};

/* One aggregation of a statement, as parsed (the strings are its own). */
struct tr_agg_stmt {
	enum tr_agg_func func;
	enum tr_agg_value value;
	char *glob;			/* events (V_EVENTS, V_FIELD), begin (V_LAT) */
	char *field;			/* V_FIELD: the field, dotted */
	char *glob_end;			/* V_LAT */
	int64_t param[4];		/* lhist: min max step; llhist: factor low high steps;
					 * heatmap: low high (0 0: what is seen) */
	size_t nparam;
	struct {
		enum tr_agg_key_kind kind;
		char *name;		/* as written */
	} key[TR_AGG_MAX_KEYS];
	size_t nkeys;
	uint64_t top;			/* 0: every row */
	char *text;			/* the aggregation written back, normalized */
};

struct tr_agg_spec {
	struct tr_agg_stmt stmt[TR_AGG_NMAX];
	size_t n;
};

/* Parses a statement (one or more aggregations separated by ';'). 0, or
 * -EINVAL with the message (and the column) in err, -ENOMEM. Release
 * with tr_agg_spec_release() in either case. */
TRAWL_HIDDEN int tr_agg_parse(struct tr_agg_spec *s, const char *text, size_t len,
			      char *err, size_t errlen);
TRAWL_HIDDEN void tr_agg_spec_release(struct tr_agg_spec *s);
/* The key words (host, cpu, tid, comm, cgroup, event, pid), by kind. */
TRAWL_HIDDEN const char *tr_agg_key_name(enum tr_agg_key_kind k);
TRAWL_HIDDEN const char *tr_agg_func_name(enum tr_agg_func f);

/* ---- buckets: index of a value, and the lowest value of a bucket */
TRAWL_HIDDEN size_t tr_agg_log2_bucket(int64_t v);
TRAWL_HIDDEN int64_t tr_agg_log2_low(size_t b);	/* INT64_MIN for the "< 0" bucket */
/* lhist(min, max, step): bucket 0 is < min, the last >= max */
TRAWL_HIDDEN size_t tr_agg_lin_nbuckets(const int64_t p[3]);
TRAWL_HIDDEN size_t tr_agg_lin_bucket(const int64_t p[3], int64_t v);
TRAWL_HIDDEN int64_t tr_agg_lin_low(const int64_t p[3], size_t b);
/* llhist(factor, low, high, steps): bucket 0 is < factor^low, the last
 * >= factor^(high+1); each magnitude factor^m .. factor^(m+1) in steps
 * equal buckets (those below factor^m belong to the magnitude under). */
TRAWL_HIDDEN size_t tr_agg_ll_nbuckets(const int64_t p[4]);
TRAWL_HIDDEN size_t tr_agg_ll_bucket(const int64_t p[4], int64_t v);
TRAWL_HIDDEN int64_t tr_agg_ll_low(const int64_t p[4], size_t b);

/* ---- a hash table of fixed-size keys, each with a fixed-size value */
struct tr_table {
	uint8_t *slots;			/* cap slots: used, key, value (8-byte aligned) */
	size_t cap, n, ksz, vsz;
};
TRAWL_HIDDEN void tr_table_init(struct tr_table *t, size_t ksz, size_t vsz);
TRAWL_HIDDEN void tr_table_release(struct tr_table *t);
TRAWL_HIDDEN void tr_table_clear(struct tr_table *t);
/* The value of key (zeroed when new, *isnew set), NULL on ENOMEM. The
 * pointer is valid until the next insertion. */
TRAWL_HIDDEN void *tr_table_get(struct tr_table *t, const void *key, bool *isnew);
TRAWL_HIDDEN void *tr_table_find(const struct tr_table *t, const void *key);
/* The i-th used slot from i: its key and value; false past the end. */
TRAWL_HIDDEN bool tr_table_next(const struct tr_table *t, size_t *i, const void **key,
				void **val);
TRAWL_HIDDEN uint64_t tr_hash_bytes(const void *p, size_t n);

#endif
