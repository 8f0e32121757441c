/* SPDX-License-Identifier: MIT */
/*
 * Prints a trace model as CTF 1.8 TSDL text: the writer's `metadata` file,
 * and any model the parser built (the two round-trip).
 *
 * Every type is printed inline (no typealias), with what it needs to be
 * read back identically: integers always give size, align and signedness,
 * and byte_order only where it differs from the trace's; structs give
 * align(N) only where it exceeds their fields' alignment. Field and option
 * names are printed as they are in the model.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf/ctf-internal.h"
#include "internal.h"

struct printer {
	FILE *f;
	const struct trawl_ctf_trace *t;
};

static void indent(struct printer *p, int n)
{
	for (int i = 0; i < n; i++)
		fputc('\t', p->f);
}

/* A TSDL string literal, with C escapes. */
static void quoted(struct printer *p, const char *s)
{
	fputc('"', p->f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"': fputs("\\\"", p->f); break;
		case '\\': fputs("\\\\", p->f); break;
		case '\n': fputs("\\n", p->f); break;
		case '\t': fputs("\\t", p->f); break;
		case '\r': fputs("\\r", p->f); break;
		default:
			if (*c < 0x20 || *c == 0x7f)
				fprintf(p->f, "\\x%02x", *c);
			else
				fputc(*c, p->f);
		}
	}
	fputc('"', p->f);
}

static const char *const keywords[] = {
	"align", "callsite", "const", "char", "clock", "double", "enum", "env",
	"event", "floating_point", "float", "integer", "int", "long", "short",
	"signed", "stream", "string", "struct", "trace", "typealias", "typedef",
	"unsigned", "variant", "void", "_Bool", "_Complex", "_Imaginary",
};

static int is_ident(const char *s)
{
	if (!*s)
		return 0;
	for (const char *c = s; *c; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (c != s && *c >= '0' && *c <= '9')))
			return 0;
	for (size_t i = 0; i < ARRAY_SIZE(keywords); i++)
		if (strcmp(s, keywords[i]) == 0)
			return 0;
	return 1;
}

/* An identifier as is, anything else as a string literal. */
static void label(struct printer *p, const char *s)
{
	if (is_ident(s))
		fputs(s, p->f);
	else
		quoted(p, s);
}

static const char *enc_name(unsigned e)
{
	return e == TRAWL_CTF_ENC_UTF8 ? "UTF8" : e == TRAWL_CTF_ENC_ASCII ? "ASCII" : "none";
}

static void byte_order(struct printer *p, unsigned bo)
{
	if (bo != p->t->byte_order)
		fprintf(p->f, " byte_order = %s;", bo == TRAWL_CTF_BE ? "be" : "le");
}

static void print_field(struct printer *p, const char *name,
			const struct trawl_ctf_type *t, int ind);

static void print_int(struct printer *p, const struct trawl_ctf_type *t)
{
	fprintf(p->f, "integer { size = %" PRIu32 "; align = %" PRIu32 "; signed = %s;",
		t->u.i.size, t->align, t->u.i.sign ? "true" : "false");
	byte_order(p, t->u.i.byte_order);
	if (t->u.i.base && t->u.i.base != 10)
		fprintf(p->f, " base = %u;", t->u.i.base);
	if (t->u.i.encoding != TRAWL_CTF_ENC_NONE)
		fprintf(p->f, " encoding = %s;", enc_name(t->u.i.encoding));
	if (t->u.i.clock >= 0 && (size_t)t->u.i.clock < p->t->nclocks)
		fprintf(p->f, " map = clock.%s.value;", p->t->clocks[t->u.i.clock].name);
	fputs(" }", p->f);
}

static void print_bound(struct printer *p, uint64_t v, bool sign)
{
	if (sign)
		fprintf(p->f, "%" PRId64, (int64_t)v);
	else
		fprintf(p->f, "%" PRIu64, v);
}

static void print_type(struct printer *p, const struct trawl_ctf_type *t, int ind)
{
	uint32_t natural = 1;

	switch (t->kind) {
	case TRAWL_CTF_INT:
		print_int(p, t);
		break;
	case TRAWL_CTF_FLOAT:
		fprintf(p->f, "floating_point { exp_dig = %" PRIu32 "; mant_dig = %" PRIu32
			"; align = %" PRIu32 ";", t->u.f.exp_dig, t->u.f.mant_dig, t->align);
		byte_order(p, t->u.f.byte_order);
		fputs(" }", p->f);
		break;
	case TRAWL_CTF_STRING:
		if (t->u.str.encoding == TRAWL_CTF_ENC_UTF8)
			fputs("string", p->f);
		else
			fprintf(p->f, "string { encoding = %s; }", enc_name(t->u.str.encoding));
		break;
	case TRAWL_CTF_ENUM: {
		const struct trawl_ctf_type *c = t->u.e.container;
		bool sign = c->kind == TRAWL_CTF_INT && c->u.i.sign;
		fputs("enum : ", p->f);
		print_type(p, c, ind);
		fputs(" {\n", p->f);
		for (size_t i = 0; i < t->u.e.n; i++) {
			const struct trawl_ctf_enum_range *r = &t->u.e.ranges[i];
			indent(p, ind + 1);
			label(p, r->label);
			fputs(" = ", p->f);
			print_bound(p, r->lo, sign);
			if (r->hi != r->lo) {
				fputs(" ... ", p->f);
				print_bound(p, r->hi, sign);
			}
			fputs(i + 1 < t->u.e.n ? ",\n" : "\n", p->f);
		}
		indent(p, ind);
		fputc('}', p->f);
		break;
	}
	case TRAWL_CTF_STRUCT:
		fputs("struct {\n", p->f);
		for (size_t i = 0; i < t->u.s.n; i++) {
			const struct trawl_ctf_field *f = &t->u.s.fields[i];
			if (f->type->align > natural)
				natural = f->type->align;
			print_field(p, f->name, f->type, ind + 1);
		}
		indent(p, ind);
		fputc('}', p->f);
		if (t->align > natural)
			fprintf(p->f, " align(%" PRIu32 ")", t->align);
		break;
	case TRAWL_CTF_VARIANT:
		fputs("variant <", p->f);
		fputs(t->u.v.tag ? t->u.v.tag : "", p->f);
		fputs("> {\n", p->f);
		for (size_t i = 0; i < t->u.v.n; i++)
			print_field(p, t->u.v.options[i].name, t->u.v.options[i].type, ind + 1);
		indent(p, ind);
		fputc('}', p->f);
		break;
	case TRAWL_CTF_ARRAY:
	case TRAWL_CTF_SEQUENCE:
		/* only reachable as a field: print_field peels them */
		print_type(p, trawl_ctf_type_elem(t), ind);
		break;
	}
}

/*
 * "type name;" - arrays and sequences become suffixes on the name, the
 * outermost first (C order: x[2][3] is two arrays of three).
 */
static void print_field(struct printer *p, const char *name,
			const struct trawl_ctf_type *t, int ind)
{
	const struct trawl_ctf_type *base = t;
	while (base->kind == TRAWL_CTF_ARRAY || base->kind == TRAWL_CTF_SEQUENCE)
		base = trawl_ctf_type_elem(base);
	indent(p, ind);
	print_type(p, base, ind);
	fprintf(p->f, " %s", name);
	for (const struct trawl_ctf_type *a = t; a != base;) {
		if (a->kind == TRAWL_CTF_ARRAY) {
			fprintf(p->f, "[%" PRIu64 "]", a->u.a.length);
			a = a->u.a.elem;
		} else {
			fprintf(p->f, "[%s]", a->u.q.length);
			a = a->u.q.elem;
		}
	}
	fputs(";\n", p->f);
}

/* "name := type;" for a scope such as packet.header or fields. */
static void print_scope(struct printer *p, const char *scope, const struct trawl_ctf_type *t)
{
	if (!t)
		return;
	fprintf(p->f, "\t%s := ", scope);
	print_type(p, t, 1);
	fputs(";\n", p->f);
}

static void print_uuid(struct printer *p, const uint8_t u[16])
{
	char s[37];
	tr_uuid_format(u, s);
	fprintf(p->f, "\tuuid = \"%s\";\n", s);
}

static void print_header(struct printer *p)
{
	const struct trawl_ctf_trace *t = p->t;
	FILE *out = p->f;

	fputs("/* CTF 1.8 */\n\n", out);
	fputs("trace {\n", out);
	fprintf(out, "\tmajor = %" PRIu32 ";\n\tminor = %" PRIu32 ";\n", t->major, t->minor);
	if (t->has_uuid)
		print_uuid(p, t->uuid);
	fprintf(out, "\tbyte_order = %s;\n", t->byte_order == TRAWL_CTF_BE ? "be" : "le");
	print_scope(p, "packet.header", t->packet_header);
	fputs("};\n\n", out);

	if (t->nenv) {
		fputs("env {\n", out);
		for (size_t i = 0; i < t->nenv; i++) {
			const struct trawl_ctf_env *e = &t->env[i];
			fprintf(out, "\t%s = ", e->key);
			if (e->is_int)
				fprintf(out, "%" PRId64, e->ival);
			else
				quoted(p, e->sval ? e->sval : "");
			fputs(";\n", out);
		}
		fputs("};\n\n", out);
	}

	for (size_t i = 0; i < t->nclocks; i++) {
		const struct trawl_ctf_clock *c = &t->clocks[i];
		fputs("clock {\n\tname = ", out);
		label(p, c->name);
		fputs(";\n", out);
		if (c->has_uuid)
			print_uuid(p, c->uuid);
		if (c->description) {
			fputs("\tdescription = ", out);
			quoted(p, c->description);
			fputs(";\n", out);
		}
		fprintf(out, "\tfreq = %" PRIu64 ";\n\tprecision = %" PRIu64 ";\n"
			"\toffset_s = %" PRId64 ";\n\toffset = %" PRId64 ";\n"
			"\tabsolute = %s;\n};\n\n",
			c->freq, c->precision, c->offset_s, c->offset,
			c->absolute ? "true" : "false");
	}
}

static void print_stream(struct printer *p, const struct trawl_ctf_stream_class *sc)
{
	fprintf(p->f, "stream {\n\tid = %" PRIu64 ";\n", sc->id);
	print_scope(p, "packet.context", sc->packet_context);
	print_scope(p, "event.header", sc->event_header);
	print_scope(p, "event.context", sc->event_context);
	fputs("};\n\n", p->f);
}

static void print_event(struct printer *p, const struct trawl_ctf_event_class *ec)
{
	FILE *out = p->f;

	fputs("event {\n\tname = ", out);
	quoted(p, ec->name);
	fprintf(out, ";\n\tid = %" PRIu64 ";\n\tstream_id = %" PRIu64 ";\n",
		ec->id, ec->stream_id);
	if (ec->loglevel != INT64_MIN)
		fprintf(out, "\tloglevel = %" PRId64 ";\n", ec->loglevel);
	if (ec->model_emf_uri) {
		fputs("\tmodel.emf.uri = ", out);
		quoted(p, ec->model_emf_uri);
		fputs(";\n", out);
	}
	print_scope(p, "context", ec->context);
	print_scope(p, "fields", ec->fields);
	fputs("};\n\n", out);
}

int trawl_ctf_metadata_print(const struct trawl_ctf_trace *t, FILE *out)
{
	if (!t || !out)
		return -EINVAL;
	struct printer pr = { .f = out, .t = t };

	print_header(&pr);
	for (size_t i = 0; i < t->nstreams; i++)
		print_stream(&pr, t->streams[i]);
	for (size_t i = 0; i < t->nstreams; i++) {
		const struct trawl_ctf_stream_class *sc = t->streams[i];
		for (size_t j = 0; j < sc->nevents; j++)
			print_event(&pr, sc->events[j]);
	}
	fflush(out);
	return ferror(out) ? -EIO : 0;
}

int tr_metadata_print_new(const struct trawl_ctf_trace *t, FILE *out, struct metadata_mark *m)
{
	if (!t || !out || !m)
		return -EINVAL;
	if (t->nstreams > m->cap) {
		size_t ncap = t->nstreams + 8;
		size_t *n = realloc(m->nevents, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + m->cap, 0, (ncap - m->cap) * sizeof(*n));
		m->nevents = n;
		m->cap = ncap;
	}
	struct printer pr = { .f = out, .t = t };

	if (!m->header)
		print_header(&pr);
	for (size_t i = m->nstreams; i < t->nstreams; i++)
		print_stream(&pr, t->streams[i]);
	for (size_t i = 0; i < t->nstreams; i++) {
		const struct trawl_ctf_stream_class *sc = t->streams[i];
		for (size_t j = m->nevents[i]; j < sc->nevents; j++)
			print_event(&pr, sc->events[j]);
	}
	fflush(out);
	if (ferror(out))
		return -EIO;
	m->header = true;
	m->nstreams = t->nstreams;
	for (size_t i = 0; i < t->nstreams; i++)
		m->nevents[i] = t->streams[i]->nevents;
	return 0;
}

bool tr_metadata_mark_current(const struct trawl_ctf_trace *t, const struct metadata_mark *m)
{
	if (!m->header || m->nstreams != t->nstreams)
		return false;
	for (size_t i = 0; i < t->nstreams; i++)
		if (m->nevents[i] != t->streams[i]->nevents)
			return false;
	return true;
}

void tr_metadata_mark_release(struct metadata_mark *m)
{
	free(m->nevents);
	memset(m, 0, sizeof(*m));
}
