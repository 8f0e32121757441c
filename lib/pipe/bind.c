/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/bind.c - field binding: a consumer names a field once
 * ("sched_switch.prev_tid", "hello:greeting.seq", "syscall_entry_*.fd");
 * per event class the reader resolves it to its place on the event's tape
 * (trawl/ctf.h: the values in pre-order over stream event context, event
 * context, payload), so that reading it per event is a load
 * (trawl_field_value()).
 *
 * A field whose place depends on the event (after a sequence or a variant)
 * gets a negative slot below -1: trawl_field_value() then walks the tape
 * along the types, from the path kept here.
 *
 * Classes a live source adds later are resolved when the reader adopts
 * them (tr_reader_bind_new_classes()), before any of their events is handed
 * out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trawl/ctf.h"
#include "pipe/pipe-internal.h"

#define MAX_DEPTH 8

/* Where a field lies in one class: its scope and the field index at each
 * level of nested structs. */
struct fpath {
	uint8_t scope;			/* 0 stream event context, 1 event context, 2 payload */
	uint8_t depth;
	uint16_t idx[MAX_DEPTH];
};

struct field_priv {
	struct trawl_field pub;		/* first: what consumers see */
	char *event;			/* the glob on event names */
	char *path[MAX_DEPTH];		/* the field's name, split at dots */
	unsigned npath;
	enum trawl_field_type want;
	unsigned flags;
	int32_t *slot;			/* by class index */
	uint8_t *type;			/* by class index: enum trawl_field_type */
	struct fpath *paths;		/* by class index, where slot < -1 */
	size_t nclasses;		/* resolved so far */
	struct field_priv *next;	/* the reader's list */
};

static const char *type_word(const struct trawl_ctf_type *t)
{
	switch (t->kind) {
	case TRAWL_CTF_INT: return "an integer";
	case TRAWL_CTF_ENUM: return "an enumeration";
	case TRAWL_CTF_FLOAT: return "a floating-point number";
	case TRAWL_CTF_STRING: return "a string";
	case TRAWL_CTF_STRUCT: return "a structure";
	case TRAWL_CTF_VARIANT: return "a variant";
	case TRAWL_CTF_ARRAY:
		return tr_ctf_is_text_elem(t->u.a.elem) ? "a string" : "an array";
	case TRAWL_CTF_SEQUENCE:
		return tr_ctf_is_text_elem(t->u.q.elem) ? "a string" : "a sequence";
	}
	return "?";
}

static const char *want_word(enum trawl_field_type w)
{
	switch (w) {
	case TRAWL_FIELD_INT: return "an integer";
	case TRAWL_FIELD_FLOAT: return "a floating-point number";
	case TRAWL_FIELD_STRING: return "a string";
	default: return "a value";
	}
}

static bool is_text(const struct trawl_ctf_type *t)
{
	return (t->kind == TRAWL_CTF_ARRAY && tr_ctf_is_text_elem(t->u.a.elem)) ||
	       (t->kind == TRAWL_CTF_SEQUENCE && tr_ctf_is_text_elem(t->u.q.elem));
}

static bool type_ok(const struct trawl_ctf_type *t, enum trawl_field_type w)
{
	switch (w) {
	case TRAWL_FIELD_INT:
		return t->kind == TRAWL_CTF_INT || t->kind == TRAWL_CTF_ENUM;
	case TRAWL_FIELD_FLOAT:
		return t->kind == TRAWL_CTF_FLOAT;
	case TRAWL_FIELD_STRING:
		return t->kind == TRAWL_CTF_STRING || is_text(t);
	default:
		return t->kind == TRAWL_CTF_INT || t->kind == TRAWL_CTF_ENUM ||
		       t->kind == TRAWL_CTF_FLOAT || t->kind == TRAWL_CTF_STRING || is_text(t);
	}
}

/* Tape values a type takes when that does not depend on the event; -1. */
static int64_t tape_count(const struct trawl_ctf_type *t)
{
	if (!t)
		return 0;
	switch (t->kind) {
	case TRAWL_CTF_INT:
	case TRAWL_CTF_ENUM:
	case TRAWL_CTF_FLOAT:
	case TRAWL_CTF_STRING:
		return 1;
	case TRAWL_CTF_STRUCT: {
		int64_t n = 0;
		for (size_t i = 0; i < t->u.s.n; i++) {
			int64_t c = tape_count(t->u.s.fields[i].type);
			if (c < 0)
				return -1;
			n += c;
		}
		return n;
	}
	case TRAWL_CTF_ARRAY: {
		if (tr_ctf_is_text_elem(t->u.a.elem))
			return 1;
		int64_t c = tape_count(t->u.a.elem);
		if (c < 0 || (c && t->u.a.length > (uint64_t)(INT32_MAX / c)))
			return -1;
		return 1 + c * (int64_t)t->u.a.length;
	}
	case TRAWL_CTF_SEQUENCE:
		return tr_ctf_is_text_elem(t->u.q.elem) ? 1 : -1;
	case TRAWL_CTF_VARIANT: {
		int64_t c = -2;
		for (size_t i = 0; i < t->u.v.n; i++) {
			int64_t o = tape_count(t->u.v.options[i].type);
			if (o < 0 || (c != -2 && o != c))
				return -1;
			c = o;
		}
		return c < 0 ? -1 : 1 + c;
	}
	}
	return -1;
}

/* A field's name as readers show it: one leading '_' dropped. */
static const char *shown(const char *name)
{
	return name && name[0] == '_' ? name + 1 : name ? name : "";
}

/* Walks the values of type t from v[pos]: the position after them, or
 * UINT32_MAX when the tape is shorter than the type says. */
static uint32_t walk(const struct trawl_ctf_type *t, const union trawl_ctf_value *v, uint32_t pos,
		     uint32_t nv)
{
	if (!t)
		return pos;
	if (pos >= nv && t->kind != TRAWL_CTF_STRUCT)
		return UINT32_MAX;
	switch (t->kind) {
	case TRAWL_CTF_STRUCT:
		for (size_t i = 0; i < t->u.s.n && pos != UINT32_MAX; i++)
			pos = walk(t->u.s.fields[i].type, v, pos, nv);
		return pos;
	case TRAWL_CTF_ARRAY:
	case TRAWL_CTF_SEQUENCE: {
		const struct trawl_ctf_type *e = trawl_ctf_type_elem(t);
		if (tr_ctf_is_text_elem(e))
			return pos + 1;
		uint64_t n = v[pos++].n;
		for (uint64_t k = 0; k < n && pos != UINT32_MAX; k++)
			pos = walk(e, v, pos, nv);
		return pos;
	}
	case TRAWL_CTF_VARIANT: {
		uint64_t o = v[pos++].n;
		if (o >= t->u.v.n)
			return UINT32_MAX;
		return walk(t->u.v.options[o].type, v, pos, nv);
	}
	default:
		return pos + 1;
	}
}

static void scopes_of(const struct trawl_ctf_event_class *ec, const struct trawl_ctf_stream_class *sc,
		      const struct trawl_ctf_type *s[3])
{
	s[0] = sc ? sc->event_context : NULL;
	s[1] = ec->context;
	s[2] = ec->fields;
}

const union trawl_ctf_value *trawl_field_value_slow(const struct trawl_field *f,
						     const struct trawl_event *ev)
{
	const struct field_priv *fp = (const struct field_priv *)f;
	uint32_t ci = ev->cls->index;

	if (ci >= fp->nclasses || fp->slot[ci] >= -1)
		return NULL;
	const struct fpath *p = &fp->paths[ci];
	const struct trawl_ctf_stream_class *sc = NULL;
	const struct trawl_ctf_trace *meta = trawl_reader_trace_meta(trawl_reader_stream_trace(ev->stream));
	for (size_t i = 0; meta && i < meta->nstreams && !sc; i++)
		if (meta->streams[i]->id == ev->cls->stream_id)
			sc = meta->streams[i];
	const struct trawl_ctf_type *sco[3];
	scopes_of(ev->cls, sc, sco);
	uint32_t pos = 0;
	for (unsigned s = 0; s < p->scope; s++)
		if ((pos = walk(sco[s], ev->values, pos, ev->nvalues)) == UINT32_MAX)
			return NULL;
	const struct trawl_ctf_type *t = sco[p->scope];
	for (unsigned d = 0; d < p->depth; d++) {
		for (unsigned i = 0; i < p->idx[d] && pos != UINT32_MAX; i++)
			pos = walk(t->u.s.fields[i].type, ev->values, pos, ev->nvalues);
		if (pos == UINT32_MAX)
			return NULL;
		t = t->u.s.fields[p->idx[d]].type;
	}
	return pos < ev->nvalues ? &ev->values[pos] : NULL;
}

/*
 * Resolves fp in class ec: *slot (>= 0, or -2 with *path), or -1 when the
 * class has no such field. -EINVAL with a message when it has it with a
 * type that does not fit.
 */
static int resolve(const struct field_priv *fp, const struct trawl_ctf_event_class *ec,
		   const struct trawl_ctf_stream_class *sc, int32_t *slot, struct fpath *path,
		   uint8_t *type, char *err, size_t errlen)
{
	const struct trawl_ctf_type *sco[3];

	scopes_of(ec, sc, sco);
	*slot = -1;
	/* payload first, then the event's context, then the stream's */
	static const uint8_t order[3] = { 2, 1, 0 };
	for (int k = 0; k < 3; k++) {
		unsigned s = order[k];
		const struct trawl_ctf_type *t = sco[s];
		struct fpath p = { .scope = (uint8_t)s };
		int64_t pos = 0;
		bool fixed = true;

		for (unsigned q = 0; q < s; q++) {
			int64_t c = tape_count(sco[q]);
			if (c < 0)
				fixed = false;
			else
				pos += c;
		}
		unsigned d;
		for (d = 0; d < fp->npath; d++) {
			if (!t || t->kind != TRAWL_CTF_STRUCT)
				break;
			size_t i;
			for (i = 0; i < t->u.s.n; i++)
				if (strcmp(shown(t->u.s.fields[i].name), fp->path[d]) == 0)
					break;
			if (i == t->u.s.n)
				break;
			for (size_t j = 0; j < i; j++) {
				int64_t c = tape_count(t->u.s.fields[j].type);
				if (c < 0)
					fixed = false;
				else
					pos += c;
			}
			p.idx[p.depth++] = (uint16_t)i;
			t = t->u.s.fields[i].type;
		}
		if (d < fp->npath)
			continue;	/* not in this scope */
		if (!type_ok(t, fp->want))
			return tr_seterr(err, errlen, EINVAL, "%s.%s is %s, not %s", ec->name,
				      fp->pub.name, type_word(t), want_word(fp->want));
		*type = t->kind == TRAWL_CTF_INT || t->kind == TRAWL_CTF_ENUM ? TRAWL_FIELD_INT :
			t->kind == TRAWL_CTF_FLOAT ? TRAWL_FIELD_FLOAT : TRAWL_FIELD_STRING;
		if (fixed && pos <= INT32_MAX) {
			*slot = (int32_t)pos;
		} else {
			*slot = -2;
			*path = p;
		}
		return 0;
	}
	return 0;
}

/* Resolves fp in the reader's classes from fp->nclasses on. */
static int resolve_new(struct trawl_reader *r, struct field_priv *fp, char *err, size_t errlen)
{
	size_t n = r->nclasses;

	if (n <= fp->nclasses)
		return 0;
	int32_t *ns = realloc(fp->slot, n * sizeof(*ns));
	if (!ns)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	fp->slot = ns;
	fp->pub.slot = ns;
	struct fpath *np = realloc(fp->paths, n * sizeof(*np));
	if (!np)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	fp->paths = np;
	uint8_t *nt = realloc(fp->type, n);
	if (!nt)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	fp->type = nt;
	for (size_t i = fp->nclasses; i < n; i++) {
		ns[i] = -1;
		nt[i] = TRAWL_FIELD_ANY;
	}
	size_t from = fp->nclasses;
	fp->nclasses = n;
	for (size_t ti = 0; ti < r->ntraces; ti++) {
		const struct trawl_ctf_trace *m = r->traces[ti]->dec.meta;
		for (size_t i = 0; i < m->nstreams; i++) {
			const struct trawl_ctf_stream_class *sc = m->streams[i];
			for (size_t j = 0; j < sc->nevents; j++) {
				const struct trawl_ctf_event_class *ec = sc->events[j];
				if (ec->index < from || !ec->name || !tr_glob_match(fp->event, ec->name))
					continue;
				fp->pub.nmatched++;
				int rc = resolve(fp, ec, sc, &ns[ec->index], &np[ec->index], &nt[ec->index], err,
						 errlen);
				if (rc)
					return rc;
				if (ns[ec->index] != -1)
					fp->pub.nbound++;
			}
		}
	}
	return 0;
}

static void field_free(struct field_priv *fp)
{
	if (!fp)
		return;
	free(fp->event);
	for (unsigned i = 0; i < fp->npath; i++)
		free(fp->path[i]);
	free(fp->slot);
	free(fp->type);
	free(fp->paths);
	free((char *)fp->pub.name);
	free((char *)fp->pub.spec);
	free(fp);
}

const struct trawl_field *trawl_field_bind(struct trawl_reader *r, const char *spec,
					   enum trawl_field_type want, unsigned flags,
					   char *err, size_t errlen)
{
	struct field_priv *fp = calloc(1, sizeof(*fp));
	int rc = -ENOMEM;

	if (!fp || !(fp->pub.spec = strdup(spec ? spec : "")))
		goto nomem;
	const char *dot = spec ? strchr(spec, '.') : NULL;
	if (!dot || dot == spec || !dot[1]) {
		rc = tr_seterr(err, errlen, EINVAL, "'%s': a field is named EVENT.FIELD", spec ? spec : "");
		goto err;
	}
	if (!(fp->event = strndup(spec, (size_t)(dot - spec))) || !(fp->pub.name = strdup(dot + 1)))
		goto nomem;
	for (const char *p = dot + 1; *p;) {
		const char *e = strchr(p, '.');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (!n || fp->npath == MAX_DEPTH) {
			rc = tr_seterr(err, errlen, EINVAL, "'%s': a bad field path", spec);
			goto err;
		}
		if (!(fp->path[fp->npath++] = strndup(p, n)))
			goto nomem;
		p += n + (e ? 1 : 0);
	}
	fp->want = want;
	fp->flags = flags;
	if ((rc = resolve_new(r, fp, err, errlen)))
		goto err;
	if (!fp->pub.nmatched && !(flags & TRAWL_FIELD_OPTIONAL)) {
		rc = tr_seterr(err, errlen, ENOENT, "no event matches '%s' (for %s)", fp->event, spec);
		goto err;
	}
	if (fp->pub.nmatched && !fp->pub.nbound) {
		rc = tr_seterr(err, errlen, ENOENT, "%s%s has no field '%s'",
			    strpbrk(fp->event, "*?[") ? "no event matching " : "event ", fp->event,
			    fp->pub.name);
		goto err;
	}
	fp->next = r->fields;
	r->fields = fp;
	return &fp->pub;
nomem:
	rc = tr_seterr(err, errlen, ENOMEM, "out of memory");
err:
	field_free(fp);
	errno = -rc;
	return NULL;
}

enum trawl_field_type trawl_field_type(const struct trawl_field *f,
				       const struct trawl_ctf_event_class *ec)
{
	const struct field_priv *fp = (const struct field_priv *)f;

	return ec->index < fp->nclasses ? (enum trawl_field_type)fp->type[ec->index] : TRAWL_FIELD_ANY;
}

int tr_reader_bind_new_classes(struct trawl_reader *r, char *err, size_t errlen)
{
	for (struct field_priv *fp = r->fields; fp; fp = fp->next) {
		int rc = resolve_new(r, fp, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

void tr_reader_fields_free(struct trawl_reader *r)
{
	struct field_priv *fp = r->fields, *n;

	for (; fp; fp = n) {
		n = fp->next;
		field_free(fp);
	}
	r->fields = NULL;
}
