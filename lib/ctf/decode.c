/* SPDX-License-Identifier: MIT */
/*
 * The CTF reader's decoder compiler and interpreter: turns the model's types
 * into flat op programs (see reader-internal.h), resolves sequence lengths
 * and variant tags to registers, detects fixed layouts and LTTng's compact
 * and large event headers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "trawl/ctf.h"
#include "ctf/decode.h"

#define MAX_DEPTH 64
#define MAX_FIXED 4096
#define TAPE_MAX (1u << 22)	/* values in one event */

enum scope { S_PH, S_PC, S_EH, S_SEC, S_EC, S_EP, NSCOPES };

static const char *const scope_prefix[NSCOPES] = {
	"trace.packet.header.", "stream.packet.context.", "stream.event.header.",
	"stream.event.context.", "event.context.", "event.fields.",
};

struct rec {
	const struct trawl_ctf_field *f;
	uint32_t scope;
	uint32_t idx;		/* first op of the field */
};

struct builder {
	struct op *ops;
	size_t n, cap;
	struct vrange *vr;
	size_t nvr, cvr;
	struct vopt *vo;
	size_t nvo, cvo;
	struct rec *recs;
	size_t nrec, crec;
};

struct frame {
	const struct trawl_ctf_type *st;
	size_t idx;
};

struct comp {
	struct trawl_ctf_trace *t;
	struct trace_dec *td;
	struct builder *bs[NSCOPES];
	const struct trawl_ctf_type *roots[NSCOPES];
	int scope;
	struct frame stack[MAX_DEPTH];
	int depth;
	int clock;		/* the stream clock, or -1 */
	const char *what;	/* for messages: "event foo" */
	char *err;
	size_t errlen;
};

/* ------------------------------------------------------------ helpers */

static void builder_release(struct builder *b)
{
	free(b->ops);
	free(b->vr);
	free(b->vo);
	free(b->recs);
	memset(b, 0, sizeof(*b));
}

static struct op *emit(struct comp *c, uint8_t code)
{
	struct builder *b = c->bs[c->scope];
	if (tr_grow(&b->ops, &b->cap, b->n, sizeof(*b->ops)))
		return NULL;
	struct op *o = &b->ops[b->n++];
	memset(o, 0, sizeof(*o));
	o->code = code;
	o->reg = -1;
	o->src = -1;
	o->align = 1;
	return o;
}

static int nomem(struct comp *c)
{
	return tr_seterr(c->err, c->errlen, ENOMEM, "out of memory");
}

static bool name_eq(const char *a, const char *b)
{
	if (strcmp(a, b) == 0)
		return true;
	if (*a == '_')
		a++;
	if (*b == '_')
		b++;
	return strcmp(a, b) == 0;
}

static uint32_t type_align(const struct trawl_ctf_type *t)
{
	uint32_t a = t->align ? t->align : 1;
	switch (t->kind) {
	case TRAWL_CTF_ENUM:
		if (t->u.e.container && t->u.e.container->align > a)
			a = t->u.e.container->align;
		break;
	case TRAWL_CTF_STRING:
		if (a < 8)
			a = 8;
		break;
	case TRAWL_CTF_STRUCT:
		for (size_t i = 0; i < t->u.s.n; i++) {
			uint32_t fa = type_align(t->u.s.fields[i].type);
			if (fa > a)
				a = fa;
		}
		break;
	case TRAWL_CTF_ARRAY:
	case TRAWL_CTF_SEQUENCE: {
		const struct trawl_ctf_type *e = trawl_ctf_type_elem(t);
		uint32_t ea = type_align(e);
		if (ea > a)
			a = ea;
		break;
	}
	case TRAWL_CTF_VARIANT:
		a = 1;	/* each option aligns itself */
		break;
	default:
		break;
	}
	if (a & (a - 1))
		a = 1;	/* not a power of two: rejected by the parser anyway */
	return a;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t min_bits(const struct trawl_ctf_type *t, int depth)
{
	if (depth > MAX_DEPTH)
		return 0;
	switch (t->kind) {
	case TRAWL_CTF_INT:
		return t->u.i.size;
	case TRAWL_CTF_FLOAT:
		return (uint64_t)t->u.f.exp_dig + t->u.f.mant_dig;
	case TRAWL_CTF_ENUM:
		return t->u.e.container ? t->u.e.container->u.i.size : 0;
	case TRAWL_CTF_STRING:
		return 8;
	case TRAWL_CTF_STRUCT: {
		uint64_t s = 0;
		for (size_t i = 0; i < t->u.s.n; i++)
			s = sat_add(s, min_bits(t->u.s.fields[i].type, depth + 1));
		return s;
	}
	case TRAWL_CTF_ARRAY: {
		uint64_t e = min_bits(t->u.a.elem, depth + 1);
		if (e && t->u.a.length > UINT64_MAX / e)
			return UINT64_MAX;
		return e * t->u.a.length;
	}
	case TRAWL_CTF_SEQUENCE:
		return 0;
	case TRAWL_CTF_VARIANT: {
		uint64_t m = UINT64_MAX;
		for (size_t i = 0; i < t->u.v.n; i++) {
			uint64_t o = min_bits(t->u.v.options[i].type, depth + 1);
			if (o < m)
				m = o;
		}
		return t->u.v.n ? m : 0;
	}
	}
	return 0;
}

static const struct trawl_ctf_type *int_type(const struct trawl_ctf_type *t)
{
	if (t->kind == TRAWL_CTF_ENUM)
		t = t->u.e.container;
	return t && t->kind == TRAWL_CTF_INT ? t : NULL;
}

bool tr_ctf_is_text_elem(const struct trawl_ctf_type *e)
{
	const struct trawl_ctf_type *i = e->kind == TRAWL_CTF_INT ? e : NULL;
	return i && i->u.i.size == 8 && i->u.i.encoding != TRAWL_CTF_ENC_NONE &&
	       type_align(i) % 8 == 0;
}

/* ------------------------------------------------------- path lookup */

static const struct trawl_ctf_field *struct_field(const struct trawl_ctf_type *st,
						  const char *name, size_t len, size_t limit)
{
	if (!st || st->kind != TRAWL_CTF_STRUCT)
		return NULL;
	char buf[256];
	if (len >= sizeof(buf))
		return NULL;
	memcpy(buf, name, len);
	buf[len] = 0;
	if (limit > st->u.s.n)
		limit = st->u.s.n;
	/* exact first, then without leading underscores */
	for (size_t i = limit; i-- > 0;)
		if (strcmp(st->u.s.fields[i].name, buf) == 0)
			return &st->u.s.fields[i];
	for (size_t i = limit; i-- > 0;)
		if (name_eq(st->u.s.fields[i].name, buf))
			return &st->u.s.fields[i];
	return NULL;
}

/* Follows ".b.c" from field f through nested structs. */
static const struct trawl_ctf_field *descend(const struct trawl_ctf_field *f, const char *rest)
{
	while (f && *rest == '.') {
		rest++;
		size_t l = strcspn(rest, ".");
		f = struct_field(f->type, rest, l, SIZE_MAX);
		rest += l;
	}
	return f && !*rest ? f : NULL;
}

static const struct rec *find_rec(struct comp *c, int scope, const struct trawl_ctf_field *f)
{
	struct builder *b = c->bs[scope];
	if (!b)
		return NULL;
	for (size_t i = b->nrec; i-- > 0;)
		if (b->recs[i].f == f && (int)b->recs[i].scope == scope)
			return &b->recs[i];
	return NULL;
}

/*
 * Resolves a sequence length or variant tag path to the register its field
 * stores into (allocating one), and returns the field's type in *type.
 */
static int resolve(struct comp *c, const char *path, const struct trawl_ctf_type **type)
{
	const struct trawl_ctf_field *f = NULL;
	int scope = -1;

	for (int s = 0; s < NSCOPES; s++) {
		size_t pl = strlen(scope_prefix[s]);
		if (strncmp(path, scope_prefix[s], pl) == 0) {
			if (s > c->scope)
				break;
			const char *rest = path + pl;
			size_t l = strcspn(rest, ".");
			/* a field of the current scope must precede the current one */
			size_t limit = SIZE_MAX;
			if (s == c->scope && c->depth > 0 && c->stack[0].st == c->roots[s])
				limit = c->stack[0].idx;
			f = descend(struct_field(c->roots[s], rest, l, limit), rest + l);
			scope = s;
			break;
		}
	}
	if (scope < 0) {
		size_t l = strcspn(path, ".");
		for (int d = c->depth - 1; d >= 0 && !f; d--)
			f = descend(struct_field(c->stack[d].st, path, l, c->stack[d].idx), path + l);
		if (f)
			scope = c->scope;
		/* not found lexically: the roots of the enclosing dynamic scopes */
		for (int s = c->scope - 1; s >= 0 && !f; s--) {
			f = descend(struct_field(c->roots[s], path, l, SIZE_MAX), path + l);
			scope = s;
		}
	}
	if (!f)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: cannot resolve `%s`", c->what, path);
	const struct rec *r = find_rec(c, scope, f);
	const struct trawl_ctf_type *it = int_type(f->type);
	if (!r || !it)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: `%s` is not an integer field decoded before",
			      c->what, path);
	struct op *o = &c->bs[scope]->ops[r->idx];
	if (o->code != OP_INT)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: `%s` is not an integer field", c->what, path);
	if (o->reg < 0)
		o->reg = (int32_t)c->td->nregs++;
	*type = f->type;
	return o->reg;
}

/* ----------------------------------------------------------- compiler */

static int role_of(struct comp *c, const struct trawl_ctf_field *f)
{
	static const struct {
		int scope;
		const char *name;
		int role;
	} tab[] = {
		{ S_PH, "magic", ROLE_MAGIC },
		{ S_PH, "uuid", ROLE_UUID },
		{ S_PH, "stream_id", ROLE_STREAM_ID },
		{ S_PH, "stream_instance_id", ROLE_STREAM_INSTANCE_ID },
		{ S_PC, "timestamp_begin", ROLE_TS_BEGIN },
		{ S_PC, "timestamp_end", ROLE_TS_END },
		{ S_PC, "content_size", ROLE_CONTENT_SIZE },
		{ S_PC, "packet_size", ROLE_PACKET_SIZE },
		{ S_PC, "events_discarded", ROLE_DISCARDED },
		{ S_PC, "cpu_id", ROLE_CPU },
		{ S_PC, "packet_seq_num", ROLE_SEQ_NUM },
	};
	if (!f)
		return ROLE_NONE;
	if (c->scope == S_EH)
		return strcmp(f->name, "id") == 0 ? ROLE_EVENT_ID : ROLE_NONE;
	if (c->depth != 1 || c->stack[0].st != c->roots[c->scope])
		return ROLE_NONE;
	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (tab[i].scope == c->scope && strcmp(tab[i].name, f->name) == 0)
			return tab[i].role;
	return ROLE_NONE;
}

static int ctype(struct comp *c, const struct trawl_ctf_type *t, const struct trawl_ctf_field *f);

static int cint(struct comp *c, const struct trawl_ctf_type *t, const struct trawl_ctf_type *it,
		const struct trawl_ctf_field *f)
{
	if (!it || it->u.i.size < 1 || it->u.i.size > 64)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: field `%s`: integer size %u not supported",
			      c->what, f ? f->name : "?", it ? it->u.i.size : 0);
	struct op *o = emit(c, OP_INT);
	if (!o)
		return nomem(c);
	o->size = (uint8_t)it->u.i.size;
	o->align = type_align(t);
	if (it->u.i.sign)
		o->flags |= OPF_SIGN;
	if (it->u.i.byte_order == TRAWL_CTF_BE)
		o->flags |= OPF_BE;
	o->role = (uint8_t)role_of(c, f);
	if (it->u.i.clock >= 0 && it->u.i.clock == c->clock && c->scope != S_PC && c->scope != S_PH)
		o->flags |= OPF_CLOCK;
	return 0;
}

static int cseq(struct comp *c, const struct trawl_ctf_type *t, const struct trawl_ctf_field *f)
{
	bool seq = t->kind == TRAWL_CTF_SEQUENCE;
	const struct trawl_ctf_type *elem = seq ? t->u.q.elem : t->u.a.elem;
	int32_t src = -1;
	if (!elem)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: array without element type", c->what);
	if (seq) {
		const struct trawl_ctf_type *lt;
		int r = resolve(c, t->u.q.length ? t->u.q.length : "", &lt);
		if (r < 0)
			return r;
		src = r;
	}
	if (tr_ctf_is_text_elem(elem)) {
		struct op *o = emit(c, OP_TEXT);
		if (!o)
			return nomem(c);
		o->align = type_align(elem);
		o->src = src;
		o->count = seq ? 0 : t->u.a.length;
		o->role = (uint8_t)role_of(c, f);
		return 0;
	}
	struct builder *b = c->bs[c->scope];
	size_t k = b->n;
	struct op *o = emit(c, seq ? OP_SEQ : OP_ARRAY);
	if (!o)
		return nomem(c);
	o->src = src;
	o->count = seq ? 0 : t->u.a.length;
	o->align = type_align(elem);
	o->role = (uint8_t)role_of(c, f);
	uint64_t mb = min_bits(elem, 0);
	o->minbits = mb > UINT32_MAX ? UINT32_MAX : (uint32_t)mb;
	int r = ctype(c, elem, NULL);
	if (r)
		return r;
	b->ops[k].body = (uint32_t)(b->n - k - 1);
	return 0;
}

static int cvariant(struct comp *c, const struct trawl_ctf_type *t)
{
	const struct trawl_ctf_type *tt;
	int r = resolve(c, t->u.v.tag ? t->u.v.tag : "", &tt);
	if (r < 0)
		return r;
	if (tt->kind != TRAWL_CTF_ENUM)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: variant tag `%s` is not an enum",
			      c->what, t->u.v.tag);
	struct builder *b = c->bs[c->scope];
	size_t k = b->n;
	struct op *o = emit(c, OP_VARIANT);
	if (!o)
		return nomem(c);
	o->src = r;
	o->vr = (uint32_t)b->nvr;
	o->vo = (uint32_t)b->nvo;
	o->nvo = (uint32_t)t->u.v.n;
	bool sign = tt->u.e.container && tt->u.e.container->u.i.sign;
	for (size_t i = 0; i < tt->u.e.n; i++) {
		const struct trawl_ctf_enum_range *er = &tt->u.e.ranges[i];
		for (size_t j = 0; j < t->u.v.n; j++) {
			if (!er->label || !name_eq(t->u.v.options[j].name, er->label))
				continue;
			if (tr_grow(&b->vr, &b->cvr, b->nvr, sizeof(*b->vr)))
				return nomem(c);
			b->vr[b->nvr++] = (struct vrange){ er->lo, er->hi, (uint32_t)j, sign };
			break;
		}
	}
	b->ops[k].nvr = (uint32_t)(b->nvr - b->ops[k].vr);
	/* reserve the option table, then compile the options */
	size_t vo = b->nvo;
	for (size_t j = 0; j < t->u.v.n; j++) {
		if (tr_grow(&b->vo, &b->cvo, b->nvo, sizeof(*b->vo)))
			return nomem(c);
		b->vo[b->nvo++] = (struct vopt){ 0, 0 };
	}
	for (size_t j = 0; j < t->u.v.n; j++) {
		size_t start = b->n;
		r = ctype(c, t->u.v.options[j].type, &t->u.v.options[j]);
		if (r)
			return r;
		b->vo[vo + j].start = (uint32_t)(start - k - 1);
		b->vo[vo + j].len = (uint32_t)(b->n - start);
	}
	b->ops[k].body = (uint32_t)(b->n - k - 1);
	return 0;
}

static int cstruct(struct comp *c, const struct trawl_ctf_type *t)
{
	if (c->depth >= MAX_DEPTH)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: types nested too deeply", c->what);
	uint32_t a = type_align(t);
	if (a > 1) {
		struct op *o = emit(c, OP_ALIGN);
		if (!o)
			return nomem(c);
		o->align = a;
	}
	struct frame *fr = &c->stack[c->depth++];
	fr->st = t;
	for (size_t i = 0; i < t->u.s.n; i++) {
		const struct trawl_ctf_field *f = &t->u.s.fields[i];
		struct builder *b = c->bs[c->scope];
		fr->idx = i;
		if (tr_grow(&b->recs, &b->crec, b->nrec, sizeof(*b->recs)))
			return nomem(c);
		b->recs[b->nrec++] = (struct rec){ f, (uint32_t)c->scope, (uint32_t)b->n };
		int r = ctype(c, f->type, f);
		if (r)
			return r;
	}
	c->depth--;
	return 0;
}

static int ctype(struct comp *c, const struct trawl_ctf_type *t, const struct trawl_ctf_field *f)
{
	if (!t)
		return tr_seterr(c->err, c->errlen, EINVAL, "%s: field without a type", c->what);
	switch (t->kind) {
	case TRAWL_CTF_INT:
		return cint(c, t, t, f);
	case TRAWL_CTF_ENUM:
		return cint(c, t, int_type(t), f);
	case TRAWL_CTF_FLOAT: {
		unsigned bits = t->u.f.exp_dig + t->u.f.mant_dig;
		if (bits != 32 && bits != 64)
			return tr_seterr(c->err, c->errlen, EINVAL, "%s: %u-bit floats not supported",
				      c->what, bits);
		struct op *o = emit(c, OP_FLOAT);
		if (!o)
			return nomem(c);
		o->size = (uint8_t)bits;
		o->align = type_align(t);
		if (t->u.f.byte_order == TRAWL_CTF_BE)
			o->flags |= OPF_BE;
		return 0;
	}
	case TRAWL_CTF_STRING: {
		struct op *o = emit(c, OP_STRING);
		if (!o)
			return nomem(c);
		o->align = type_align(t);
		return 0;
	}
	case TRAWL_CTF_STRUCT:
		return cstruct(c, t);
	case TRAWL_CTF_VARIANT:
		return cvariant(c, t);
	case TRAWL_CTF_ARRAY:
	case TRAWL_CTF_SEQUENCE:
		return cseq(c, t, f);
	}
	return tr_seterr(c->err, c->errlen, EINVAL, "%s: unknown type kind %d", c->what, (int)t->kind);
}

/* Compiles the root type of a scope into the current builder. */
static int cscope(struct comp *c, int scope, const struct trawl_ctf_type *root)
{
	c->scope = scope;
	c->roots[scope] = root;
	c->depth = 0;
	if (!root)
		return 0;
	return ctype(c, root, NULL);
}

/* Packs a builder into one malloc'd block: [head][ops][ranges][vopts][extra]. */
static void *pack(const struct builder *b, size_t head, struct prog *p, size_t extra, void **extrap)
{
	size_t so = b->n * sizeof(struct op);
	size_t sr = b->nvr * sizeof(struct vrange);
	size_t sv = b->nvo * sizeof(struct vopt);
	head = (head + 15) & ~(size_t)15;
	char *m = calloc(1, head + so + sr + sv + extra + 16);
	if (!m)
		return NULL;
	struct op *ops = (struct op *)(m + head);
	struct vrange *vr = (struct vrange *)(m + head + so);
	struct vopt *vo = (struct vopt *)(m + head + so + sr);
	if (so)
		memcpy(ops, b->ops, so);
	if (sr)
		memcpy(vr, b->vr, sr);
	if (sv)
		memcpy(vo, b->vo, sv);
	p->ops = ops;
	p->nops = (uint32_t)b->n;
	p->ranges = vr;
	p->vopts = vo;
	if (extrap)
		*extrap = m + ((head + so + sr + sv + 15) & ~(size_t)15);
	return m;
}

/* ---------------------------------------------------- fixed layouts */

struct fixb {
	struct fent *e;
	size_t n;
	uint64_t off;
	bool ok;
	/* semi-fixed runs: integers storing into registers are recorded */
	bool regs_ok;
	struct rstore *rs;
	size_t nrs;
	size_t run0;		/* n at the start of the current run */
};

static void fix_add(struct fixb *x, uint8_t kind, unsigned bits, bool sign, uint64_t mask,
		    uint64_t bytes)
{
	if (x->n >= MAX_FIXED || x->off > UINT32_MAX - 64 - bytes) {
		x->ok = false;
		return;
	}
	if (x->e) {
		struct fent *f = &x->e[x->n];
		memset(f, 0, sizeof(*f));
		f->off = (uint32_t)x->off;
		f->kind = kind;
		f->mask = mask;
		f->slot = (uint16_t)(x->n - x->run0);	/* < MAX_FIXED */
		if (kind == FK_INT) {
			f->sh = (uint8_t)(64 - bits);
			f->mask = sign || bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
		}
	}
	x->n++;
	x->off += bytes;
}

/* Moves the FK_INT entries of f[0 .. n) first, in order (each keeps its
 * slot); returns how many. */
static uint32_t ints_first(struct fent *f, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (f[i].kind != FK_INT)
			continue;
		struct fent t = f[i];
		memmove(&f[k + 1], &f[k], (i - k) * sizeof(*f));
		f[k++] = t;
	}
	return k;
}

static void fix_walk(struct fixb *x, const struct op *ops, uint32_t i, uint32_t n)
{
	for (uint32_t e = i + n; i < e && x->ok; i++) {
		const struct op *o = &ops[i];
		if (o->align > 8 || o->role || (o->flags & (OPF_BE | OPF_CLOCK)) ||
		    (o->reg >= 0 && (!x->regs_ok || o->code != OP_INT))) {
			x->ok = false;
			return;
		}
		if (o->reg >= 0) {
			if (x->rs)
				x->rs[x->nrs] = (struct rstore){ o->reg, (uint32_t)x->off,
								 (uint8_t)(o->size / 8),
								 (uint8_t)(o->flags & OPF_SIGN) };
			x->nrs++;
		}
		switch (o->code) {
		case OP_ALIGN:
			break;
		case OP_INT:
			if (o->size != 8 && o->size != 16 && o->size != 32 && o->size != 64) {
				x->ok = false;
				return;
			}
			fix_add(x, FK_INT, o->size, o->flags & OPF_SIGN, 0, o->size / 8);
			break;
		case OP_FLOAT:
			if (o->size == 32)
				fix_add(x, FK_F32, 0, false, 0, 4);
			else
				fix_add(x, FK_INT, 64, false, 0, 8);	/* the bits as they are */
			break;
		case OP_TEXT:
			if (o->src >= 0 || o->count > 65536) {
				x->ok = false;
				return;
			}
			fix_add(x, FK_TEXT, 0, false, o->count, o->count);
			break;
		case OP_ARRAY:
			if (o->count > MAX_FIXED) {
				x->ok = false;
				return;
			}
			fix_add(x, FK_CONST, 0, false, o->count, 0);
			for (uint64_t k = 0; k < o->count && x->ok; k++)
				fix_walk(x, ops, i + 1, o->body);
			i += o->body;
			break;
		default:
			x->ok = false;
			return;
		}
	}
}

/*
 * Fills x for the layout's integers f[0 .. nint) (slots below VFIX_SLOTS,
 * bytes within the body's first 64). Returns false when the layout does
 * not qualify, or has one integer or none (plain loads do those for less).
 */
static bool vfix_build(struct vfix *x, const struct fent *f, uint32_t nint, uint32_t nfix)
{
	uint32_t end = 0, top = 0;

	if (nint < 2 || nfix > VFIX_SLOTS)
		return false;
	memset(x, 0, sizeof(*x));
	for (uint32_t i = 0; i < nint; i++) {
		uint32_t bytes = (64u - f[i].sh) / 8, g = f[i].slot / 8, lane = f[i].slot % 8;
		if (f[i].kind != FK_INT || f[i].slot >= VFIX_SLOTS || f[i].off > 64 - bytes)
			return false;
		for (uint32_t k = 0; k < bytes; k++) {
			x->idx[g][lane * 8 + k] = (uint8_t)(f[i].off + k);
			x->take[g] |= UINT64_C(1) << (lane * 8 + k);
		}
		/* signed narrower than 64 bits: mask is all ones, sh > 0 */
		x->shift[g][lane] = f[i].mask == ~UINT64_C(0) ? f[i].sh : 0;
		if (f[i].off + bytes > end)
			end = f[i].off + bytes;
		if (f[i].slot + 1u > top)
			top = f[i].slot + 1u;
	}
	x->load = end >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << end) - 1;
	x->nquads = (top + 3) / 4;
	return true;
}

bool tr_ctf_simd(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	static int have = -1;	/* benign race: every thread computes the same */
	int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
	if (h < 0) {
		__builtin_cpu_init();
		h = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512vbmi") && !getenv("TRAWL_NO_SIMD");
		__atomic_store_n(&have, h, __ATOMIC_RELAXED);
	}
	return h;
#else
	return false;
#endif
}

/* ---------------------------------------------------- semi-fixed layouts */

struct semib {
	struct fixb fx;		/* every run's entries, offsets per run */
	struct seg *segs;
	size_t nseg;
	bool open;		/* a run is open: segs[nseg - 1] */
};

static void semi_seg(struct semib *b, uint8_t kind, int32_t src, uint8_t esize, bool esign)
{
	if (b->segs)
		b->segs[b->nseg] = (struct seg){ .kind = kind, .src = src, .esize = esize,
						 .esign = esign };
	b->nseg++;
	b->open = false;
}

static void semi_close(struct semib *b)
{
	if (b->open && b->segs) {
		struct seg *g = &b->segs[b->nseg - 1];
		g->nfix = (uint32_t)(b->fx.n - g->fix);
		g->bytes = (uint32_t)b->fx.off;
		g->nrst = (uint32_t)(b->fx.nrs - g->rst);
	}
	b->open = false;
}

/*
 * A run of one integer becomes SG_INT, when the only register it stores is
 * its own value (an integer register holds what the tape does: sign- or
 * zero-extended alike).
 */
static void semi_int(struct seg *g, const struct fent *f, const struct rstore *rs)
{
	if (g->kind != SG_FIXED || g->nfix != 1 || g->nint != 1 || g->nrst > 1)
		return;
	if (g->nrst && (rs->off != f->off || rs->bytes * 8u != 64u - f->sh ||
			(rs->sign && f->mask != ~UINT64_C(0))))
		return;
	g->kind = SG_INT;
	g->dst = g->nrst ? rs->reg : -1;
	g->off = f->off;
	g->sh = f->sh;
	g->mask = f->mask;
}

/* Walks the top-level ops of a body; b->fx.ok = false when not semi-fixed. */
static void semi_walk(struct semib *b, const struct op *ops, uint32_t n)
{
	bool var = false;
	for (uint32_t i = 0; i < n && b->fx.ok; i++) {
		const struct op *o = &ops[i];
		const struct op *eo = o + 1;
		int kind = -1;
		if (o->code == OP_STRING && o->align <= 8 && !o->role)
			kind = SG_STRING;
		else if (o->code == OP_TEXT && o->src >= 0 && o->align <= 8 && !o->role)
			kind = SG_TEXTSEQ;
		else if (o->code == OP_SEQ && o->body == 1 && !o->role && i + 1 < n &&
			 eo->code == OP_INT && eo->align <= 8 && eo->reg < 0 && !eo->role &&
			 !(eo->flags & (OPF_BE | OPF_CLOCK)) &&
			 (eo->size == 8 || eo->size == 16 || eo->size == 32 || eo->size == 64))
			kind = SG_SEQ;
		if (kind >= 0) {
			semi_close(b);
			semi_seg(b, (uint8_t)kind, o->src, kind == SG_SEQ ? eo->size / 8 : 0,
				 kind == SG_SEQ && (eo->flags & OPF_SIGN));
			if (kind == SG_SEQ)
				i++;
			var = true;
			continue;
		}
		if (o->code == OP_ALIGN && o->align <= 8)
			continue;
		if (!b->open) {
			if (b->segs)
				b->segs[b->nseg] = (struct seg){ .kind = SG_FIXED, .src = -1,
								 .fix = (uint32_t)b->fx.n,
								 .rst = (uint32_t)b->fx.nrs };
			b->nseg++;
			b->open = true;
			b->fx.off = 0;
			b->fx.run0 = b->fx.n;
		}
		uint32_t span = o->code == OP_ARRAY ? 1 + o->body : 1;
		fix_walk(&b->fx, ops, i, span);
		i += span - 1;
	}
	semi_close(b);
	if (!var || b->nseg > 64)
		b->fx.ok = false;
}

/* ------------------------------------------------- LTTng event headers */

static bool lt_int(const struct trawl_ctf_type *t, unsigned size, uint32_t maxalign)
{
	const struct trawl_ctf_type *i = int_type(t);
	return i && i->u.i.size == size && !i->u.i.sign && i->u.i.byte_order == TRAWL_CTF_LE &&
	       type_align(t) <= maxalign;
}

static const struct trawl_ctf_field *opt_named(const struct trawl_ctf_type *v, const char *name)
{
	for (size_t i = 0; i < v->u.v.n; i++)
		if (name_eq(v->u.v.options[i].name, name))
			return &v->u.v.options[i];
	return NULL;
}

static bool enum_maps(const struct trawl_ctf_type *e, const char *label, uint64_t lo, uint64_t hi)
{
	/* every value of [lo, hi] has the label, and the label nothing else */
	uint64_t covered = 0;
	for (size_t i = 0; i < e->u.e.n; i++) {
		const struct trawl_ctf_enum_range *r = &e->u.e.ranges[i];
		if (!r->label || strcmp(r->label, label) != 0)
			continue;
		if (r->lo < lo || r->hi > hi || r->lo > r->hi)
			return false;
		covered += r->hi - r->lo + 1;
	}
	return covered == hi - lo + 1;
}

/* Compact (5-bit id) or large (16-bit id) LTTng header on clock `clock`? */
static enum hdr_kind lttng_header(const struct trawl_ctf_type *h, int clock)
{
	if (!h || h->kind != TRAWL_CTF_STRUCT || h->u.s.n != 2 || type_align(h) != 8)
		return HDR_GENERIC;
	const struct trawl_ctf_field *id = &h->u.s.fields[0], *v = &h->u.s.fields[1];
	if (strcmp(id->name, "id") != 0 || id->type->kind != TRAWL_CTF_ENUM ||
	    v->type->kind != TRAWL_CTF_VARIANT || !v->type->u.v.tag ||
	    strcmp(v->type->u.v.tag, "id") != 0 || v->type->u.v.n != 2)
		return HDR_GENERIC;
	const struct trawl_ctf_field *oc = opt_named(v->type, "compact");
	const struct trawl_ctf_field *oe = opt_named(v->type, "extended");
	if (!oc || !oe || oc->type->kind != TRAWL_CTF_STRUCT || oe->type->kind != TRAWL_CTF_STRUCT ||
	    oc->type->u.s.n != 1 || oe->type->u.s.n != 2)
		return HDR_GENERIC;
	const struct trawl_ctf_type *cts = oc->type->u.s.fields[0].type;
	const struct trawl_ctf_type *eid = oe->type->u.s.fields[0].type;
	const struct trawl_ctf_type *ets = oe->type->u.s.fields[1].type;
	if (strcmp(oc->type->u.s.fields[0].name, "timestamp") != 0 ||
	    strcmp(oe->type->u.s.fields[0].name, "id") != 0 ||
	    strcmp(oe->type->u.s.fields[1].name, "timestamp") != 0 ||
	    !lt_int(eid, 32, 8) || type_align(eid) != 8 || !lt_int(ets, 64, 8) ||
	    cts->kind != TRAWL_CTF_INT || ets->kind != TRAWL_CTF_INT ||
	    cts->u.i.clock != clock || ets->u.i.clock != clock || clock < 0)
		return HDR_GENERIC;
	if (lt_int(id->type, 5, 8) && lt_int(cts, 27, 1) && type_align(oc->type) == 1 &&
	    enum_maps(id->type, "compact", 0, 30) && enum_maps(id->type, "extended", 31, 31))
		return HDR_COMPACT;
	if (lt_int(id->type, 16, 8) && lt_int(cts, 32, 8) &&
	    enum_maps(id->type, "compact", 0, 65534) && enum_maps(id->type, "extended", 65535, 65535))
		return HDR_LARGE;
	return HDR_GENERIC;
}

/* The clock of a stream class: timestamp_begin's, else the header's. */
static int find_clock(const struct trawl_ctf_type *t, int depth)
{
	if (!t || depth > MAX_DEPTH)
		return -1;
	const struct trawl_ctf_type *i = int_type(t);
	if (i)
		return i->u.i.clock;
	int r = -1;
	switch (t->kind) {
	case TRAWL_CTF_STRUCT:
		for (size_t k = 0; k < t->u.s.n && r < 0; k++)
			r = find_clock(t->u.s.fields[k].type, depth + 1);
		break;
	case TRAWL_CTF_VARIANT:
		for (size_t k = 0; k < t->u.v.n && r < 0; k++)
			r = find_clock(t->u.v.options[k].type, depth + 1);
		break;
	default:
		break;
	}
	return r;
}

static int stream_clock(const struct trawl_ctf_trace *t, const struct trawl_ctf_stream_class *sc)
{
	const struct trawl_ctf_type *pc = sc->packet_context;
	int clk = -1;
	if (pc && pc->kind == TRAWL_CTF_STRUCT)
		for (size_t i = 0; i < pc->u.s.n; i++)
			if (strcmp(pc->u.s.fields[i].name, "timestamp_begin") == 0 &&
			    int_type(pc->u.s.fields[i].type))
				clk = int_type(pc->u.s.fields[i].type)->u.i.clock;
	if (clk < 0)
		clk = find_clock(sc->event_header, 0);
	if (clk >= (int)t->nclocks)
		clk = -1;
	return clk;
}

/* ----------------------------------------------------- event classes */

static int cmp_id(const void *a, const void *b)
{
	const struct trawl_ctf_event_class *x = *(const struct trawl_ctf_event_class *const *)a;
	const struct trawl_ctf_event_class *y = *(const struct trawl_ctf_event_class *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int compile_event(struct comp *c, struct trawl_ctf_stream_class *sc,
			 struct trawl_ctf_event_class *ec, const char *const *events, size_t nevents)
{
	struct builder body = { 0 };
	char what[160];
	int r;

	snprintf(what, sizeof(what), "event `%s`", ec->name ? ec->name : "?");
	c->what = what;
	c->bs[S_SEC] = c->bs[S_EC] = c->bs[S_EP] = &body;
	if ((r = cscope(c, S_SEC, sc->event_context)) ||
	    (r = cscope(c, S_EC, ec->context)) ||
	    (r = cscope(c, S_EP, ec->fields)))
		goto out;

	struct fixb fx = { .ok = true };
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	fix_walk(&fx, body.ops, 0, (uint32_t)body.n);
#else
	fx.ok = false;
#endif
	size_t nfix = fx.ok ? fx.n : 0;
	struct semib sb = { .fx = { .ok = true, .regs_ok = true } };
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (!fx.ok)
		semi_walk(&sb, body.ops, (uint32_t)body.n);
	else
		sb.fx.ok = false;
#else
	sb.fx.ok = false;
#endif
	size_t semisz = 0;
	if (sb.fx.ok)
		semisz = sb.fx.n * sizeof(struct fent) + sb.nseg * sizeof(struct seg) +
			 sb.fx.nrs * sizeof(struct rstore) + 32 +
			 (tr_ctf_simd() ? sb.nseg * sizeof(struct vfix) + 64 : 0);
	void *extra;
	struct prog p;
	size_t vxsz = fx.ok && tr_ctf_simd() ? sizeof(struct vfix) + 64 : 0;
	struct ec_dec *d = pack(&body, sizeof(*d), &p, nfix * sizeof(struct fent) + semisz + vxsz,
				&extra);
	if (!d) {
		r = nomem(c);
		goto out;
	}
	free(ec->priv);
	ec->priv = d;
	d->body = p;
	d->empty = body.n == 0;
	if (fx.ok) {
		struct fixb f2 = { .e = extra, .ok = true };
		fix_walk(&f2, p.ops, 0, p.nops);
		d->fix = extra;
		d->nfix = (uint32_t)f2.n;
		d->fixed_bytes = (uint32_t)f2.off;
		d->fixed = true;
		d->nint = ints_first(extra, d->nfix);
		if (vxsz) {
			uintptr_t a = (uintptr_t)((char *)extra + d->nfix * sizeof(struct fent));
			struct vfix *vx = (struct vfix *)((a + 63) & ~(uintptr_t)63);
			if (vfix_build(vx, d->fix, d->nint, d->nfix))
				d->vx = vx;
		}
	}
	if (sb.fx.ok) {
		char *m = extra;
		size_t nf = sb.fx.n, ns = sb.nseg, nr = sb.fx.nrs;
		struct semib s2 = { .fx = { .ok = true, .regs_ok = true } };
		s2.fx.e = (struct fent *)m;
		s2.segs = (struct seg *)(m + nf * sizeof(struct fent));
		s2.fx.rs = (struct rstore *)((char *)s2.segs + ns * sizeof(struct seg));
		semi_walk(&s2, p.ops, p.nops);
		if (s2.fx.ok && s2.fx.n == nf && s2.nseg == ns && s2.fx.nrs == nr) {
			uintptr_t a = (uintptr_t)(s2.fx.rs + nr);
			struct vfix *vx = (struct vfix *)((a + 63) & ~(uintptr_t)63);
			for (size_t k = 0; k < ns; k++) {
				struct seg *g = &s2.segs[k];
				if (g->kind != SG_FIXED)
					continue;
				g->nint = ints_first(s2.fx.e + g->fix, g->nfix);
				semi_int(g, s2.fx.e + g->fix, s2.fx.rs + g->rst);
				if (g->kind == SG_FIXED && tr_ctf_simd() &&
				    vfix_build(vx, s2.fx.e + g->fix, g->nint, g->nfix))
					g->vx = vx++;
			}
			d->semi = true;
			d->nseg = (uint32_t)ns;
			for (size_t k = 0; k < ns; k++)
				d->semi_min += s2.segs[k].kind <= SG_INT ? s2.segs[k].nfix : 1;
			d->segs = s2.segs;
			d->semifix = s2.fx.e;
			d->rst = s2.fx.rs;
		}
	}
	d->wanted = nevents == 0;
	for (size_t i = 0; i < nevents && !d->wanted; i++)
		d->wanted = ec->name && tr_glob_match(events[i], ec->name);
	d->fast = d->fixed && d->wanted;
	r = 0;
out:
	c->bs[S_SEC] = c->bs[S_EC] = c->bs[S_EP] = NULL;
	builder_release(&body);
	return r;
}

static int compile_stream(struct comp *c, struct trawl_ctf_stream_class *sc,
			  const char *const *events, size_t nevents)
{
	struct builder bpc = { 0 }, beh = { 0 };
	char what[64];
	int r;

	snprintf(what, sizeof(what), "stream class %llu", (unsigned long long)sc->id);
	c->what = what;
	c->clock = stream_clock(c->t, sc);
	c->bs[S_PC] = &bpc;
	c->bs[S_EH] = &beh;
	if ((r = cscope(c, S_PC, sc->packet_context)))
		goto out;
	c->what = what;
	if ((r = cscope(c, S_EH, sc->event_header)))
		goto out;
	for (size_t i = 0; i < sc->nevents; i++)
		if ((r = compile_event(c, sc, sc->events[i], events, nevents)))
			goto out;

	/* id -> class table */
	uint64_t maxid = 0;
	for (size_t i = 0; i < sc->nevents; i++)
		if (sc->events[i]->id > maxid)
			maxid = sc->events[i]->id;
	bool dense = sc->nevents && maxid < 4 * (uint64_t)sc->nevents + 1024;
	size_t ntab = dense ? (size_t)maxid + 1 : sc->nevents;
	struct prog ppc, peh;
	void *extra;
	/* one block: pc ops, then eh ops + tables appended as "extra" */
	size_t ehsz = beh.n * sizeof(struct op) + beh.nvr * sizeof(struct vrange) +
		      beh.nvo * sizeof(struct vopt);
	ehsz = (ehsz + 15) & ~(size_t)15;
	/* at least 32 entries (zeroed: no fast path), so that a compact
	 * header's id (5 bits) needs no bound check */
	size_t nfast = ntab < 32 ? 32 : ntab;
	size_t fastsz = dense ? nfast * sizeof(struct fastent) : 0;
	struct sc_dec *d = pack(&bpc, sizeof(*d), &ppc,
				ehsz + ntab * sizeof(void *) + 16 + fastsz + 16, &extra);
	if (!d) {
		r = nomem(c);
		goto out;
	}
	free(sc->priv);
	sc->priv = d;
	d->pc = ppc;
	{
		char *m = extra;
		struct op *ops = (struct op *)m;
		struct vrange *vr = (struct vrange *)(m + beh.n * sizeof(struct op));
		struct vopt *vo = (struct vopt *)((char *)vr + beh.nvr * sizeof(struct vrange));
		if (beh.n)
			memcpy(ops, beh.ops, beh.n * sizeof(struct op));
		if (beh.nvr)
			memcpy(vr, beh.vr, beh.nvr * sizeof(struct vrange));
		if (beh.nvo)
			memcpy(vo, beh.vo, beh.nvo * sizeof(struct vopt));
		peh = (struct prog){ ops, (uint32_t)beh.n, vr, vo };
		d->eh = peh;
		const struct trawl_ctf_event_class **tab = (void *)(m + ehsz);
		for (size_t i = 0; i < sc->nevents; i++) {
			if (dense)
				tab[sc->events[i]->id] = sc->events[i];
			else
				tab[i] = sc->events[i];
		}
		if (dense) {
			d->byid = tab;
			d->nbyid = ntab;
			size_t fo = (ehsz + ntab * sizeof(void *) + 15) & ~(size_t)15;
			struct fastent *fe = (struct fastent *)(m + fo);
			for (size_t i = 0; i < ntab; i++) {
				const struct ec_dec *ed = tab[i] ? tab[i]->priv : NULL;
				fe[i].ec = tab[i];
				if (ed && ed->fast) {
					fe[i].ed = ed;
					fe[i].bytes = ed->fixed_bytes;
					fe[i].nfix = ed->nfix;
				} else if (ed && ed->semi && ed->wanted) {
					fe[i].semi = ed;
				}
			}
			d->fast = fe;
		} else {
			qsort(tab, ntab, sizeof(*tab), cmp_id);
			d->sorted = tab;
			d->nsorted = ntab;
		}
	}
	d->clock = c->clock;
	d->hdr = !sc->event_header ? HDR_NONE : lttng_header(sc->event_header, c->clock);
	d->only = sc->nevents == 1 ? sc->events[0] : NULL;
	r = 0;
out:
	c->bs[S_PC] = c->bs[S_EH] = NULL;
	builder_release(&bpc);
	builder_release(&beh);
	return r;
}

int tr_ctf_compile_trace(struct trawl_ctf_trace *t, struct trace_dec *td,
		      const char *const *events, size_t nevents, char *err, size_t errlen)
{
	struct builder bph = { 0 };
	struct comp c = { .t = t, .td = td, .clock = -1, .err = err, .errlen = errlen };
	int r;

	c.what = "trace packet header";
	c.bs[S_PH] = &bph;
	td->nregs = 0;
	if ((r = cscope(&c, S_PH, t->packet_header)))
		goto out;
	for (size_t i = 0; i < t->nstreams; i++)
		if ((r = compile_stream(&c, t->streams[i], events, nevents)))
			goto out;
	free(td->ph_mem);
	td->ph_mem = pack(&bph, 0, &td->ph, 0, NULL);
	r = td->ph_mem ? 0 : nomem(&c);
out:
	builder_release(&bph);
	return r;
}

/* -------------------------------------------------------- interpreter */

int tr_ctf_tape_grow(struct dctx *c)
{
	if (c->cap >= TAPE_MAX) {
		c->why = "event has too many values";
		return -EBADMSG;
	}
	uint32_t nc = c->cap ? c->cap * 2 : 64;
	union trawl_ctf_value *t;
	if (c->tape != c->own) {
		/* a lent tape is full: go on in our own, the caller copies back */
		if (c->owncap < nc) {
			t = realloc(c->own, nc * sizeof(*t));
			if (!t) {
				c->why = "out of memory";
				return -ENOMEM;
			}
			c->own = t;
			c->owncap = nc;
		}
		if (c->nv)
			memcpy(c->own, c->tape, c->nv * sizeof(*t));
		c->tape = c->own;
		c->cap = c->owncap;
		return 0;
	}
	t = realloc(c->tape, nc * sizeof(*t));
	if (!t) {
		c->why = "out of memory";
		return -ENOMEM;
	}
	c->tape = c->own = t;
	c->cap = c->owncap = nc;
	return 0;
}

static inline uint64_t readbits(const uint8_t *pkt, uint64_t pos, unsigned size, bool be)
{
	const uint8_t *b = pkt + (pos >> 3);
	unsigned sh = (unsigned)(pos & 7);
	uint64_t v;
	if (!sh && !(size & 7)) {
		unsigned n = size >> 3;
		v = 0;
		if (be)
			for (unsigned k = 0; k < n; k++)
				v = v << 8 | b[k];
		else
			for (unsigned k = n; k-- > 0;)
				v = v << 8 | b[k];
		return v;
	}
	unsigned nb = (sh + size + 7) >> 3;
	unsigned __int128 acc = 0;
	if (be) {
		for (unsigned k = 0; k < nb; k++)
			acc = acc << 8 | b[k];
		v = (uint64_t)(acc >> (nb * 8 - sh - size));
	} else {
		for (unsigned k = nb; k-- > 0;)
			acc = acc << 8 | b[k];
		v = (uint64_t)(acc >> sh);
	}
	return size == 64 ? v : v & ((UINT64_C(1) << size) - 1);
}

#define FAIL(msg) do { c->why = (msg); c->errpos = c->pos; return -EBADMSG; } while (0)
#define PUT(val) do {							\
		if (unlikely(c->nv >= c->cap) && tr_ctf_tape_grow(c)) {	\
			c->errpos = c->pos;				\
			return -EBADMSG;				\
		}							\
		c->tape[c->nv++] = (val);				\
	} while (0)

static inline int do_align(struct dctx *c, uint32_t a)
{
	uint64_t p = (c->pos + a - 1) & ~(uint64_t)(a - 1);
	if (p > c->end || p < c->pos) {
		c->why = "truncated (alignment past the end of the packet content)";
		c->errpos = c->pos;
		return -EBADMSG;
	}
	c->pos = p;
	return 0;
}

int tr_ctf_exec(struct dctx *c, const struct prog *p, uint32_t i, uint32_t n)
{
	uint32_t e = i + n;
	union trawl_ctf_value val;
	int r;

	while (i < e) {
		const struct op *o = &p->ops[i];
		if (o->align > 1 && (r = do_align(c, o->align)))
			return r;
		switch (o->code) {
		case OP_ALIGN:
			i++;
			break;
		case OP_INT: {
			if (c->end - c->pos < o->size)
				FAIL("truncated integer");
			uint64_t v = readbits(c->pkt, c->pos, o->size, o->flags & OPF_BE);
			c->pos += o->size;
			if ((o->flags & OPF_SIGN) && o->size < 64 && (v >> (o->size - 1)))
				v |= ~UINT64_C(0) << o->size;
			if (o->reg >= 0)
				c->regs[o->reg] = v;
			if (o->role) {
				c->roles[o->role] = v;
				c->rolemask |= 1u << o->role;
			}
			if (o->flags & OPF_CLOCK)
				c->clock = ctf_clock_update(c->clock, v, o->size);
			val.u = v;
			PUT(val);
			i++;
			break;
		}
		case OP_FLOAT: {
			if (c->end - c->pos < o->size)
				FAIL("truncated floating point number");
			uint64_t v = readbits(c->pkt, c->pos, o->size, o->flags & OPF_BE);
			c->pos += o->size;
			if (o->size == 32) {
				float f;
				uint32_t w = (uint32_t)v;
				memcpy(&f, &w, 4);
				val.d = f;
			} else {
				memcpy(&val.d, &v, 8);
			}
			PUT(val);
			i++;
			break;
		}
		case OP_STRING: {
			if (c->pos & 7)
				FAIL("string not byte-aligned");
			const char *s = (const char *)c->pkt + (c->pos >> 3);
			uint64_t avail = (c->end - c->pos) >> 3;
			const char *z = memchr(s, 0, avail);
			if (!z)
				FAIL("unterminated string");
			val.s.p = s;
			val.s.len = (uint32_t)(z - s);
			PUT(val);
			c->pos += (uint64_t)(z - s + 1) * 8;
			i++;
			break;
		}
		case OP_TEXT: {
			if (c->pos & 7)
				FAIL("text array not byte-aligned");
			uint64_t cnt = o->src >= 0 ? c->regs[o->src] : o->count;
			if (cnt > (c->end - c->pos) >> 3)
				FAIL("truncated text array");
			const char *s = (const char *)c->pkt + (c->pos >> 3);
			if (o->role) {
				c->roles[o->role] = c->pos;
				c->rolemask |= 1u << o->role;
			}
			val.s.p = s;
			val.s.len = (uint32_t)strnlen(s, cnt > UINT32_MAX ? UINT32_MAX : cnt);
			PUT(val);
			c->pos += cnt * 8;
			i++;
			break;
		}
		case OP_ARRAY:
		case OP_SEQ: {
			uint64_t cnt = o->src >= 0 ? c->regs[o->src] : o->count;
			if (o->minbits) {
				if (cnt > (c->end - c->pos) / o->minbits)
					FAIL(o->code == OP_SEQ ? "truncated sequence" : "truncated array");
			} else if (cnt > TAPE_MAX) {
				FAIL("sequence too long");
			}
			if (o->role) {
				c->roles[o->role] = c->pos;
				c->rolemask |= 1u << o->role;
			}
			val.n = cnt;
			PUT(val);
			const struct op *eo = o + 1;
			if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&
			    o->body == 1 && eo->code == OP_INT && !(c->pos & 7) && eo->align <= 8 &&
			    !(eo->size & 7) && eo->reg < 0 && !eo->role &&
			    !(eo->flags & (OPF_BE | OPF_CLOCK))) {
				/* byte-aligned little-endian integers: a tight loop */
				while (unlikely(c->cap - c->nv < cnt))
					if ((r = tr_ctf_tape_grow(c))) {
						c->errpos = c->pos;
						return r;
					}
				const uint8_t *b = c->pkt + (c->pos >> 3);
				union trawl_ctf_value *t = c->tape + c->nv;
				unsigned sz = eo->size, nb = sz >> 3, sh = 64 - sz;
				bool sign = eo->flags & OPF_SIGN;
				if (nb == 1 && !sign) {
					for (uint64_t k = 0; k < cnt; k++)
						t[k].u = b[k];
				} else {
					for (uint64_t k = 0; k < cnt; k++, b += nb) {
						uint64_t v = 0;
						memcpy(&v, b, nb);	/* little-endian host */
						t[k].u = sign ? (uint64_t)((int64_t)(v << sh) >> sh) : v;
					}
				}
				c->nv += (uint32_t)cnt;
				c->pos += cnt * sz;
				i += 2;
				break;
			}
			if (o->body) {
				for (uint64_t k = 0; k < cnt; k++)
					if ((r = tr_ctf_exec(c, p, i + 1, o->body)))
						return r;
			}
			i += 1 + o->body;
			break;
		}
		case OP_VARIANT: {
			uint64_t tag = c->regs[o->src];
			uint32_t opt = UINT32_MAX;
			for (uint32_t k = 0; k < o->nvr; k++) {
				const struct vrange *vr = &p->ranges[o->vr + k];
				bool in = vr->sign ? (int64_t)tag >= (int64_t)vr->lo && (int64_t)tag <= (int64_t)vr->hi
						   : tag >= vr->lo && tag <= vr->hi;
				if (in) {
					opt = vr->opt;
					break;
				}
			}
			if (opt >= o->nvo) {
				snprintf(c->whybuf, sizeof(c->whybuf),
					 "variant tag value %lld selects no option", (long long)tag);
				c->why = c->whybuf;
				c->errpos = c->pos;
				return -EBADMSG;
			}
			val.n = opt;
			PUT(val);
			const struct vopt *vo = &p->vopts[o->vo + opt];
			if (vo->len && (r = tr_ctf_exec(c, p, i + 1 + vo->start, vo->len)))
				return r;
			i += 1 + o->body;
			break;
		}
		default:
			FAIL("bad decoder op");
		}
	}
	return 0;
}
