/* SPDX-License-Identifier: MIT */
/*
 * lib/agg/agg-json.c - the results of the aggregations as one JSON object
 * (trawl_agg_write_json(), the format in trawl/agg.h): the rows in the
 * text's order (tr_agg_view_build()), their figures as trawl_agg_row()
 * gives them, histograms' buckets with their bounds. Written through
 * lib/util/json.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agg/agg-priv.h"
#include "util/json.h"

/* Bucket b's bounds of aggregation i, as trawl_agg_bucket_low() and
 * _high() say (the text's too); null where there is none (below the
 * first, past the last). */
static void bucket(struct json *j, const struct trawl_agg *a, size_t i, size_t b, uint64_t count)
{
	int64_t low = trawl_agg_bucket_low(a, i, b), high = trawl_agg_bucket_high(a, i, b);
	tr_json_obj(j);
	tr_json_key(j, "low");
	if (low == INT64_MIN)
		tr_json_null(j);
	else
		tr_json_i64(j, low);
	tr_json_key(j, "high");
	if (high == INT64_MAX)
		tr_json_null(j);
	else
		tr_json_i64(j, high);
	tr_json_kv_u64(j, "count", count);
	tr_json_obj_end(j);
}

static void key_value(struct json *j, const struct trawl_agg *a, const uint64_t *k)
{
	double d;
	switch (k[0]) {
	case KEY_INT:
		tr_json_i64(j, (int64_t)k[1]);
		break;
	case KEY_STR:
		tr_json_str(j, tr_state_str(&a->km.str, (uint32_t)k[1]));
		break;
	case KEY_FLOAT:
		memcpy(&d, &k[1], sizeof(d));
		tr_json_f64(j, d);
		break;
	default:
		tr_json_null(j);
		break;
	}
}

/* The heat map's columns: all of them, or in on_interval() the closing
 * interval's (none when it had no value). */
static void heat(struct json *j, struct trawl_agg *a, size_t i)
{
	size_t ncols = trawl_agg_heat_ncols(a, i), c0 = 0, c1 = ncols;
	int64_t width = trawl_agg_heat_col_width(a, i);

	tr_json_kv_i64(j, "width", width);
	if (a->closing) {
		size_t c;
		c1 = 0;
		if (tr_agg_heat_closing(a, i, &c)) {
			c0 = c;
			c1 = c + 1;
		}
	}
	tr_json_key(j, "columns");
	tr_json_arr(j);
	for (size_t c = c0; c < c1; c++) {
		tr_json_obj(j);
		tr_json_kv_i64(j, "begin", trawl_agg_heat_col_begin(a, i, c));
		tr_json_key(j, "buckets");
		tr_json_arr(j);
		for (size_t b = 0; b < TR_AGG_LOG2_BUCKETS; b++) {
			uint64_t n = trawl_agg_heat_cell(a, i, c, b);
			if (n)
				bucket(j, a, i, b, n);
		}
		tr_json_arr_end(j);
		tr_json_obj_end(j);
	}
	tr_json_arr_end(j);
}

/* A row's (or the total's) figures: "count" and the function's. */
static void figures(struct json *j, const struct trawl_agg *a, size_t i, const struct cell *c)
{
	const struct one *o = &a->aggs[i];
	const struct tr_agg_stmt *s = o->s;

	tr_json_kv_u64(j, "count", c->count);
	switch (s->func) {
	case TR_AGG_COUNT:
		break;
	case TR_AGG_SUM:
	case TR_AGG_MIN:
	case TR_AGG_MAX:
	case TR_AGG_AVG:
	case TR_AGG_STDDEV:	/* the figure, named as the function */
		tr_json_kv_f64(j, tr_agg_func_name(s->func), tr_agg_value_of(o, c));
		break;
	case TR_AGG_STATS:
		tr_json_kv_f64(j, "sum", c->sum);
		tr_json_kv_f64(j, "min", c->min);
		tr_json_kv_f64(j, "avg", c->mean);
		tr_json_kv_f64(j, "max", c->max);
		tr_json_kv_f64(j, "stddev", c->count ? sqrt(c->m2 / (double)c->count) : 0);
		break;
	default:	/* the histograms */
		tr_json_kv_f64(j, "avg", c->mean);
		tr_json_kv_f64(j, "min", c->min);
		tr_json_kv_f64(j, "max", c->max);
		tr_json_key(j, "buckets");
		tr_json_arr(j);
		for (size_t b = 0; b < o->nbuckets; b++)
			if (c->buckets[b])
				bucket(j, a, i, b, c->buckets[b]);
		tr_json_arr_end(j);
		break;
	}
}

static int rows(struct json *j, struct trawl_agg *a, size_t i)
{
	struct one *o = &a->aggs[i];
	const struct tr_agg_stmt *s = o->s;
	int rc = tr_agg_view_build(a, o);

	if (rc < 0)
		return rc;
	tr_json_key(j, "rows");
	tr_json_arr(j);
	for (size_t r = 0; r < o->nrows; r++) {
		tr_json_obj(j);
		tr_json_key(j, "key");
		tr_json_obj(j);
		for (size_t k = 0; k < s->nkeys; k++) {
			tr_json_key(j, s->key[k].name);
			key_value(j, a, (const uint64_t *)o->rows[r].key + 2 * k);
		}
		tr_json_obj_end(j);
		figures(j, a, i, o->rows[r].cell);
		tr_json_obj_end(j);
	}
	tr_json_arr_end(j);
	/* rows of several hosts: the cluster's figure, as analyze's "totals" */
	struct cell *tot = NULL;
	int nh = tr_agg_total(o, &tot);
	if (nh < 0)
		return nh;
	if (tot) {
		tr_json_key(j, "totals");
		tr_json_arr(j);
		tr_json_obj(j);
		tr_json_kv_u64(j, "hosts", (uint64_t)nh);
		figures(j, a, i, tot);
		tr_json_obj_end(j);
		tr_json_arr_end(j);
		free(tot);
	}
	return 0;
}

int trawl_agg_write_json(struct trawl_agg *a, int fd)
{
	struct json j;
	int rc = 0;

	tr_json_init(&j);
	tr_json_obj(&j);
	if (a->closing) {
		tr_json_kv_i64(&j, "begin", a->closing_col);
		tr_json_kv_i64(&j, "end", a->closing_col + a->interval);
	}
	tr_json_key(&j, "aggregations");
	tr_json_arr(&j);
	for (size_t i = 0; i < a->n && !rc; i++) {
		const struct tr_agg_stmt *s = a->aggs[i].s;
		tr_json_obj(&j);
		tr_json_kv_str(&j, "statement", s->text);
		tr_json_kv_str(&j, "function", tr_agg_func_name(s->func));
		tr_json_key(&j, "keys");
		tr_json_arr(&j);
		for (size_t k = 0; k < s->nkeys; k++)
			tr_json_str(&j, s->key[k].name);
		tr_json_arr_end(&j);
		if (s->func == TR_AGG_HEATMAP)
			heat(&j, a, i);
		else
			rc = rows(&j, a, i);
		tr_json_obj_end(&j);
	}
	tr_json_arr_end(&j);
	tr_json_obj_end(&j);
	tr_json_char(&j, '\n');
	if (!rc && j.nomem)
		rc = -ENOMEM;
	if (!rc)
		rc = tr_write_all(fd, j.buf, j.len);
	tr_json_release(&j);
	return rc;
}
