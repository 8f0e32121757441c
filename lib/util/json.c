/* SPDX-License-Identifier: MIT */
/* lib/util/json.c - see json.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

void tr_json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
}

void tr_json_release(struct json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

void tr_json_clear(struct json *j)
{
	j->len = 0;
	j->depth = 0;
	j->comma[0] = false;
	j->key = false;
}

static bool room(struct json *j, size_t n)
{
	if (j->nomem)
		return false;
	if (j->len + n <= j->cap)
		return true;
	size_t cap = j->cap ? j->cap : 256;
	while (cap < j->len + n)
		cap *= 2;
	char *nb = realloc(j->buf, cap);
	if (!nb) {
		j->nomem = true;
		return false;
	}
	j->buf = nb;
	j->cap = cap;
	return true;
}

static void put(struct json *j, const char *s, size_t n)
{
	if (room(j, n)) {
		memcpy(j->buf + j->len, s, n);
		j->len += n;
	}
}

/* Before a value: the comma after a sibling, unless a key precedes. */
static void value(struct json *j)
{
	if (j->key) {
		j->key = false;
		return;
	}
	if (j->comma[j->depth])
		put(j, ",", 1);
	j->comma[j->depth] = true;
}

static void open(struct json *j, char c)
{
	value(j);
	put(j, &c, 1);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->comma[j->depth] = false;
}

static void close_(struct json *j, char c)
{
	put(j, &c, 1);
	if (j->depth)
		j->depth--;
}

void tr_json_obj(struct json *j) { open(j, '{'); }
void tr_json_obj_end(struct json *j) { close_(j, '}'); }
void tr_json_arr(struct json *j) { open(j, '['); }
void tr_json_arr_end(struct json *j) { close_(j, ']'); }

static void quoted(struct json *j, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	put(j, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(j, s + run, i - run);
		run = i + 1;
		char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
		switch (c) {
		case '"': put(j, "\\\"", 2); break;
		case '\\': put(j, "\\\\", 2); break;
		case '\n': put(j, "\\n", 2); break;
		case '\t': put(j, "\\t", 2); break;
		case '\r': put(j, "\\r", 2); break;
		default: put(j, e, 6); break;
		}
	}
	put(j, s + run, n - run);
	put(j, "\"", 1);
}

void tr_json_key(struct json *j, const char *k)
{
	value(j);
	quoted(j, k, strlen(k));
	put(j, ":", 1);
	j->key = true;
}

void tr_json_str(struct json *j, const char *s)
{
	value(j);
	quoted(j, s ? s : "", s ? strlen(s) : 0);
}

void tr_json_strn(struct json *j, const char *s, size_t n)
{
	value(j);
	quoted(j, s ? s : "", s ? strnlen(s, n) : 0);
}

void tr_json_i64(struct json *j, int64_t v)
{
	char b[24];
	value(j);
	put(j, b, (size_t)snprintf(b, sizeof(b), "%" PRId64, v));
}

void tr_json_u64(struct json *j, uint64_t v)
{
	char b[24];
	value(j);
	put(j, b, (size_t)snprintf(b, sizeof(b), "%" PRIu64, v));
}

void tr_json_f64(struct json *j, double v)
{
	char b[32];
	value(j);
	if (!isfinite(v))
		put(j, "null", 4);
	else
		put(j, b, (size_t)snprintf(b, sizeof(b), "%.17g", v));
}

void tr_json_fixed(struct json *j, double v, int decimals)
{
	char b[64];
	value(j);
	if (!isfinite(v))
		put(j, "null", 4);
	else
		put(j, b, (size_t)snprintf(b, sizeof(b), "%.*f", decimals, v));
}

void tr_json_bool(struct json *j, bool v)
{
	value(j);
	put(j, v ? "true" : "false", v ? 4 : 5);
}

void tr_json_null(struct json *j)
{
	value(j);
	put(j, "null", 4);
}

void tr_json_kv_str(struct json *j, const char *k, const char *v)
{
	tr_json_key(j, k);
	tr_json_str(j, v);
}

void tr_json_kv_u64(struct json *j, const char *k, uint64_t v)
{
	tr_json_key(j, k);
	tr_json_u64(j, v);
}

void tr_json_kv_i64(struct json *j, const char *k, int64_t v)
{
	tr_json_key(j, k);
	tr_json_i64(j, v);
}

void tr_json_kv_f64(struct json *j, const char *k, double v)
{
	tr_json_key(j, k);
	tr_json_f64(j, v);
}

void tr_json_char(struct json *j, char c)
{
	put(j, &c, 1);
}

int tr_json_flush(struct json *j, FILE *f)
{
	if (j->nomem)
		return -ENOMEM;
	if (j->len && fwrite(j->buf, 1, j->len, f) != j->len)
		return -EIO;
	j->len = 0;
	return 0;
}
