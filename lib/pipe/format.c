/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/format.c - the output formats of events, one table: how a
 * printer (print.c) turns an event into a line. "text" is babeltrace2's
 * default text (text.c); "json" one JSON object per line:
 *
 *   {"ts":NS,"host":"H","cpu":C,"event":"NAME","context":{...},"fields":{...}}
 *
 * ts: ns since the epoch (corrected when the reader corrects clocks);
 * context: the stream's event context then the event's, when there are
 * any; fields: the payload. Integers are numbers; an enumeration is its
 * label when exactly one range holds the value, else its number; text
 * arrays and strings are strings; arrays and sequences are arrays; a
 * variant is its selected option's value; floats that are not finite are
 * null.
 *
 * Adding a format: a row in `formats` below (docs/CONTRIBUTING.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trawl/ctf.h"
#include "pipe/pipe-internal.h"
#include "util/json.h"

/* ------------------------------------------------------------------ text */

static void *text_new(unsigned flags)
{
	return trawl_text_new(flags);
}

static size_t text_event(void *f, char *buf, size_t cap, const struct trawl_event *ev)
{
	return trawl_text_format(f, buf, cap, ev);
}

static void text_prev(void *f, int64_t prev)
{
	trawl_text_set_prev(f, prev);
}

static void text_free(void *f)
{
	trawl_text_free(f);
}

/* ------------------------------------------------------------------ json */

struct jfmt {
	struct json j;
};

static void *json_new(unsigned flags)
{
	struct jfmt *f = calloc(1, sizeof(*f));

	(void)flags;
	if (f)
		tr_json_init(&f->j);
	return f;
}

static void json_free_(void *p)
{
	struct jfmt *f = p;

	if (f)
		tr_json_release(&f->j);
	free(f);
}

static void json_prev(void *f, int64_t prev)
{
	(void)f;
	(void)prev;
}

static const char *shown(const char *name)
{
	return name && name[0] == '_' ? name + 1 : name ? name : "";
}

static const char *enum_label(const struct trawl_ctf_type *t, uint64_t v)
{
	const struct trawl_ctf_type *c = t->u.e.container;
	bool sign = c && c->kind == TRAWL_CTF_INT && c->u.i.sign;
	const char *label = NULL;

	for (size_t i = 0; i < t->u.e.n; i++) {
		const struct trawl_ctf_enum_range *r = &t->u.e.ranges[i];
		bool in = sign ? (int64_t)v >= (int64_t)r->lo && (int64_t)v <= (int64_t)r->hi :
				 v >= r->lo && v <= r->hi;
		if (in) {
			if (label)
				return NULL;	/* several */
			label = r->label;
		}
	}
	return label;
}

/* Writes the value of type t at v[*pos]; false when the tape runs out. */
static bool jvalue(struct json *j, const struct trawl_ctf_type *t, const union trawl_ctf_value *v,
		   uint32_t nv, uint32_t *pos, int depth)
{
	if (depth > 32 || (*pos >= nv && t->kind != TRAWL_CTF_STRUCT))
		return false;
	switch (t->kind) {
	case TRAWL_CTF_INT:
		if (t->u.i.sign)
			tr_json_i64(j, v[*pos].i);
		else
			tr_json_u64(j, v[*pos].u);
		(*pos)++;
		return true;
	case TRAWL_CTF_ENUM: {
		const struct trawl_ctf_type *c = t->u.e.container;
		const char *l = enum_label(t, v[*pos].u);
		if (l)
			tr_json_str(j, l);
		else if (c && c->kind == TRAWL_CTF_INT && c->u.i.sign)
			tr_json_i64(j, v[*pos].i);
		else
			tr_json_u64(j, v[*pos].u);
		(*pos)++;
		return true;
	}
	case TRAWL_CTF_FLOAT:
		tr_json_f64(j, v[(*pos)++].d);
		return true;
	case TRAWL_CTF_STRING:
		tr_json_strn(j, v[*pos].s.p, v[*pos].s.len);
		(*pos)++;
		return true;
	case TRAWL_CTF_STRUCT:
		tr_json_obj(j);
		for (size_t i = 0; i < t->u.s.n; i++) {
			tr_json_key(j, shown(t->u.s.fields[i].name));
			if (!jvalue(j, t->u.s.fields[i].type, v, nv, pos, depth + 1))
				return false;
		}
		tr_json_obj_end(j);
		return true;
	case TRAWL_CTF_ARRAY:
	case TRAWL_CTF_SEQUENCE: {
		const struct trawl_ctf_type *e = trawl_ctf_type_elem(t);
		if (tr_ctf_is_text_elem(e)) {
			tr_json_strn(j, v[*pos].s.p, v[*pos].s.len);
			(*pos)++;
			return true;
		}
		uint64_t n = v[(*pos)++].n;
		tr_json_arr(j);
		for (uint64_t k = 0; k < n; k++)
			if (!jvalue(j, e, v, nv, pos, depth + 1))
				return false;
		tr_json_arr_end(j);
		return true;
	}
	case TRAWL_CTF_VARIANT: {
		uint64_t o = v[(*pos)++].n;
		if (o >= t->u.v.n)
			return false;
		return jvalue(j, t->u.v.options[o].type, v, nv, pos, depth + 1);
	}
	}
	return false;
}

static const struct trawl_ctf_stream_class *stream_class(const struct trawl_event *ev)
{
	const struct trawl_ctf_trace *m = trawl_reader_trace_meta(trawl_reader_stream_trace(ev->stream));

	for (size_t i = 0; m && i < m->nstreams; i++)
		if (m->streams[i]->id == ev->cls->stream_id)
			return m->streams[i];
	return NULL;
}

/* The fields of a struct scope into the open object. */
static bool jfields(struct json *j, const struct trawl_ctf_type *t, const union trawl_ctf_value *v,
		    uint32_t nv, uint32_t *pos)
{
	if (!t || t->kind != TRAWL_CTF_STRUCT)
		return !t;
	for (size_t i = 0; i < t->u.s.n; i++) {
		tr_json_key(j, shown(t->u.s.fields[i].name));
		if (!jvalue(j, t->u.s.fields[i].type, v, nv, pos, 1))
			return false;
	}
	return true;
}

bool tr_format_json_values(struct json *j, const struct trawl_event *ev)
{
	const struct trawl_ctf_stream_class *sc = stream_class(ev);
	uint32_t pos = 0;
	bool ok = true;

	if ((sc && sc->event_context) || ev->cls->context) {
		tr_json_key(j, "context");
		tr_json_obj(j);
		ok = jfields(j, sc ? sc->event_context : NULL, ev->values, ev->nvalues, &pos) &&
		     jfields(j, ev->cls->context, ev->values, ev->nvalues, &pos);
		tr_json_obj_end(j);
	}
	tr_json_key(j, "fields");
	tr_json_obj(j);
	ok = ok && jfields(j, ev->cls->fields, ev->values, ev->nvalues, &pos);
	tr_json_obj_end(j);
	return ok;
}

static size_t json_event(void *p, char *buf, size_t cap, const struct trawl_event *ev)
{
	struct jfmt *f = p;
	struct json *j = &f->j;

	if (!ev->cls)
		return 0;
	tr_json_clear(j);
	tr_json_obj(j);
	tr_json_kv_i64(j, "ts", ev->ts);
	tr_json_kv_str(j, "host", trawl_reader_trace_hostname(trawl_reader_stream_trace(ev->stream)));
	tr_json_kv_u64(j, "cpu", ev->cpu);
	tr_json_kv_str(j, "event", ev->cls->name);
	if (!tr_format_json_values(j, ev)) {
		tr_json_kv_str(j, "error", "the values do not match the event's types");
	}
	tr_json_obj_end(j);
	tr_json_char(j, '\n');
	if (j->nomem) {
		j->nomem = false;
		return 0;
	}
	if (j->len <= cap)
		memcpy(buf, j->buf, j->len);
	return j->len;
}

/* ------------------------------------------------------------------ table */

static const struct format formats[] = {
	{ "text", "babeltrace2's text: [time] (+delta) host event: { cpu_id }, { context }, { fields }",
	  text_new, text_event, text_prev, text_free },
	{ "json", "one JSON object per line: ts, host, cpu, event, context, fields",
	  json_new, json_event, json_prev, json_free_ },
};

const struct format *tr_format_find(const char *name)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

const char *trawl_format_name(size_t i, const char **help)
{
	if (i >= sizeof(formats) / sizeof(formats[0]))
		return NULL;
	if (help)
		*help = formats[i].help;
	return formats[i].name;
}
