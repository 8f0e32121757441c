/* SPDX-License-Identifier: MIT */
/*
 * lib/util/json.h - writing JSON into a growing buffer: objects, arrays,
 * keys and scalars, with the commas placed for the caller. Used by every
 * JSON output (trawl info --json, trawl sync --json, the json event
 * format), so that JSON is written in one place.
 *
 * Out of memory is sticky (j->nomem) and checked once at the end.
 */
#ifndef TRAWL_UTIL_JSON_H
#define TRAWL_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"

#define JSON_MAX_DEPTH 64

struct json {
	char *buf;
	size_t len, cap;
	unsigned depth;
	bool nomem;
	bool comma[JSON_MAX_DEPTH];	/* a value was written at this depth */
	bool key;			/* a key was just written */
};

TRAWL_HIDDEN void tr_json_init(struct json *j);
TRAWL_HIDDEN void tr_json_release(struct json *j);
/* Empties the buffer and starts a new document. */
TRAWL_HIDDEN void tr_json_clear(struct json *j);
TRAWL_HIDDEN void tr_json_obj(struct json *j);
TRAWL_HIDDEN void tr_json_obj_end(struct json *j);
TRAWL_HIDDEN void tr_json_arr(struct json *j);
TRAWL_HIDDEN void tr_json_arr_end(struct json *j);
TRAWL_HIDDEN void tr_json_key(struct json *j, const char *k);
TRAWL_HIDDEN void tr_json_str(struct json *j, const char *s);
/* n bytes of s, up to its first NUL */
TRAWL_HIDDEN void tr_json_strn(struct json *j, const char *s, size_t n);
TRAWL_HIDDEN void tr_json_i64(struct json *j, int64_t v);
TRAWL_HIDDEN void tr_json_u64(struct json *j, uint64_t v);
/* NaN and infinities: null */
TRAWL_HIDDEN void tr_json_f64(struct json *j, double v);
/* A fixed number of decimals (a rate, seconds). */
TRAWL_HIDDEN void tr_json_fixed(struct json *j, double v, int decimals);
TRAWL_HIDDEN void tr_json_bool(struct json *j, bool v);
TRAWL_HIDDEN void tr_json_null(struct json *j);
/* A key and its value, in one call. */
TRAWL_HIDDEN void tr_json_kv_str(struct json *j, const char *k, const char *v);
TRAWL_HIDDEN void tr_json_kv_u64(struct json *j, const char *k, uint64_t v);
TRAWL_HIDDEN void tr_json_kv_i64(struct json *j, const char *k, int64_t v);
TRAWL_HIDDEN void tr_json_kv_f64(struct json *j, const char *k, double v);
/* A raw character (e.g. the '\n' ending a JSON line). */
TRAWL_HIDDEN void tr_json_char(struct json *j, char c);
/* Writes the buffer to f and empties it: 0, -ENOMEM (sticky) or -EIO. */
TRAWL_HIDDEN int tr_json_flush(struct json *j, FILE *f);

#endif
