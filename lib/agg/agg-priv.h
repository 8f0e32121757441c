/* SPDX-License-Identifier: MIT */
/* lib/agg/agg-priv.h - the aggregation object, shared by agg.c and render.c. */
#ifndef TRAWL_AGG_PRIV_H
#define TRAWL_AGG_PRIV_H

#include "agg/agg-internal.h"
#include "kstate/kstate.h"
#include "trawl/pipe.h"

enum { ROLE_VALUE = 1, ROLE_INT, ROLE_FLOAT, ROLE_BEGIN, ROLE_END };
enum { KEY_NONE, KEY_INT, KEY_STR, KEY_FLOAT };

#define HEAT_MAX_ADAPTIVE 120	/* columns of a heat map without intervals */
#define HEAT_MAX_LIVE 4096	/* columns kept with intervals (the oldest go) */

/* Per event class (by its index): what it is to each aggregation. */
struct cls {
	bool known;
	uint32_t name;			/* interned */
	uint8_t role[TR_AGG_NMAX];
	uint32_t stem[TR_AGG_NMAX];	/* lat(): what the globs' '*' matched */
};

struct cell {
	uint64_t count;
	double sum, min, max, mean, m2;
	uint64_t buckets[];		/* nbuckets */
};

struct pending {
	bool active;
	uint32_t stem;
	int64_t ts;
	uint64_t key[2 * TR_AGG_MAX_KEYS + 1];	/* the begin event's */
};

struct heat {
	int64_t t0, width;		/* column c begins at t0 + c * width */
	size_t ncols, first, cap;	/* columns first .. ncols - 1 are in cells */
	uint64_t *cells;		/* (c - first) * TR_AGG_LOG2_BUCKETS + b */
	uint64_t max;			/* the largest cell written so far (text) */
	bool header;			/* text: the interval lines' header written */
	size_t lo, hi;			/* text: buckets shown with intervals */
};

/* The sorted rows handed out (trawl_agg_row). */
struct view_row {
	const void *key;		/* the cell's key */
	struct cell *cell;
	const char **keys;		/* formatted */
};

struct one {
	const struct tr_agg_stmt *s;
	const struct trawl_field *val;	/* V_FIELD */
	const struct trawl_field *keyf[TR_AGG_MAX_KEYS];
	size_t nbuckets, ksz;
	struct tr_table cells;		/* key -> struct cell */
	struct cell *last;		/* the cell of last_key, NULL: none */
	uint64_t last_key[2 * TR_AGG_MAX_KEYS + 1];
	struct tr_table pending;	/* (host, tid) -> struct pending */
	struct heat heat;
	bool dirty;			/* the view is stale */
	struct view_row *rows;
	size_t nrows;
	char *strs;			/* the formatted keys */
};

struct track {
	const struct trawl_field *tid, *vtid;
	const struct trawl_field *procname, *vpid;
};

struct trawl_agg {
	struct trawl_agg_opts o;
	struct tr_agg_spec spec;
	struct one aggs[TR_AGG_NMAX];
	size_t n;
	struct cls *cls;
	size_t ncls;
	/* the kernel's model of each host (lib/kstate): names, tgids and
	 * cgroups of the comm, pid and cgroup keys; its string table is
	 * every string of the aggregation's (km.str, id 0: "") */
	struct tr_kmodel km;
	struct tr_table hosts;		/* host name id -> the model's host number */
	struct track trk;
	bool tracking;
	const struct trawl_reader_stream *last_stream;
	uint32_t last_host;		/* its name's id */
	uint32_t last_hn;		/* its model's host number */
	int64_t interval, cur;		/* cur: the open interval's begin */
	int64_t low, low_wall;		/* the reader's low, and when it last rose */
	bool closing;			/* inside on_interval() */
	int64_t closing_col;
	uint64_t late, unpaired;
	char err[512];
};

TRAWL_HIDDEN size_t tr_agg_bucket(const struct tr_agg_stmt *s, int64_t v);
TRAWL_HIDDEN void tr_agg_view_release(struct one *o);
/* The figure of a single-figure function (sum, min, max, avg, stddev;
 * else the count) of cell c: the text's value column, the JSON's figure. */
TRAWL_HIDDEN double tr_agg_value_of(const struct one *o, const struct cell *c);
/* In on_interval(): the closing interval's column of heat map i, counted
 * from the first one kept (the text's line and the JSON's column); false
 * when it has none (no value yet, or not kept). */
TRAWL_HIDDEN bool tr_agg_heat_closing(const struct trawl_agg *a, size_t i, size_t *c);
/*
 * The cluster's figure of o: when o has a host key and its rows (all of
 * them, also those its `top` leaves out) have more than one host's value
 * there, *out is every row merged (a cell of o's size, the caller frees
 * it: counts, sums and buckets added, min of the mins, max of the maxes,
 * the mean weighted, the M2 of all the values) and the return is the
 * number of hosts; else 0 and *out NULL. -ENOMEM.
 */
TRAWL_HIDDEN int tr_agg_total(const struct one *o, struct cell **out);
/* o's sorted rows (o->rows, o->nrows), built again when stale: 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_agg_view_build(struct trawl_agg *a, struct one *o);

/* What glob's '*' matched in name (the part between its prefix and
 * suffix; all of name when glob has no single '*'): *len bytes. */
static inline const char *stem_of(const char *glob, const char *name, size_t *len)
{
	const char *star = strchr(glob, '*');
	size_t nl = strlen(name);

	if (!star || strchr(star + 1, '*')) {
		*len = 0;
		return name;
	}
	size_t pre = (size_t)(star - glob), suf = strlen(star + 1);
	if (pre + suf > nl) {
		*len = 0;
		return name;
	}
	*len = nl - pre - suf;
	return name + pre;
}

#endif
