/* SPDX-License-Identifier: MIT */
/*
 * test-text: trawl_text_event() / trawl_text_format() against lines that
 * babeltrace2 2.0.4 printed for the same values (a hand-made CTF trace with
 * the same types), plus the timestamp forms, the date cache and overflow.
 *
 * The events and model types are built by hand; the three reader functions
 * the formatter calls (stream -> trace -> hostname, metadata) are stubbed
 * here, so this test needs no trace on disk.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

/* ---- reader stubs */
struct trawl_reader_trace {
	const char *host;
	const struct trawl_ctf_trace *meta;
};
struct trawl_reader_stream {
	const struct trawl_reader_trace *tr;
};

const struct trawl_reader_trace *trawl_reader_stream_trace(const struct trawl_reader_stream *s)
{
	return s->tr;
}

const char *trawl_reader_trace_hostname(const struct trawl_reader_trace *t)
{
	return t->host;
}

const struct trawl_ctf_trace *trawl_reader_trace_meta(const struct trawl_reader_trace *t)
{
	return t->meta;
}

/* ---- model builders */
static struct trawl_ctf_arena *A;

static struct trawl_ctf_type *ty(enum trawl_ctf_kind k)
{
	struct trawl_ctf_type *t = tr_arena_alloc(A, sizeof(*t));

	t->kind = k;
	t->align = 8;
	return t;
}

static struct trawl_ctf_type *tint(unsigned size, bool sign, unsigned base)
{
	struct trawl_ctf_type *t = ty(TRAWL_CTF_INT);

	t->u.i.size = size;
	t->u.i.sign = sign;
	t->u.i.base = (uint8_t)base;
	t->u.i.clock = -1;
	return t;
}

static struct trawl_ctf_type *tclock(void)
{
	struct trawl_ctf_type *t = tint(64, false, 10);

	t->u.i.clock = 0;
	return t;
}

static struct trawl_ctf_type *tchar(void)
{
	struct trawl_ctf_type *t = tint(8, false, 10);

	t->u.i.encoding = TRAWL_CTF_ENC_UTF8;
	return t;
}

static struct trawl_ctf_type *tfloat(unsigned bits)
{
	struct trawl_ctf_type *t = ty(TRAWL_CTF_FLOAT);

	t->u.f.exp_dig = bits == 32 ? 8 : 11;
	t->u.f.mant_dig = bits == 32 ? 24 : 53;
	return t;
}

static struct trawl_ctf_type *tstr(void)
{
	return ty(TRAWL_CTF_STRING);
}

static struct trawl_ctf_type *tarray(struct trawl_ctf_type *elem, uint64_t n)
{
	struct trawl_ctf_type *t = ty(TRAWL_CTF_ARRAY);

	t->u.a.elem = elem;
	t->u.a.length = n;
	return t;
}

static struct trawl_ctf_type *tseq(struct trawl_ctf_type *elem, const char *len)
{
	struct trawl_ctf_type *t = ty(TRAWL_CTF_SEQUENCE);

	t->u.q.elem = elem;
	t->u.q.length = len;
	return t;
}

/* tstruct("a", type, "b", type, ..., NULL) */
static struct trawl_ctf_type *tstruct(const char *name, ...)
{
	struct trawl_ctf_type *t = ty(TRAWL_CTF_STRUCT);
	size_t cap = 0;
	va_list ap;

	va_start(ap, name);
	for (const char *n = name; n; n = va_arg(ap, const char *)) {
		struct trawl_ctf_field *f = tr_arena_push(A, &t->u.s.fields, &t->u.s.n, &cap,
						       sizeof(*f));
		f->name = n;
		f->type = va_arg(ap, struct trawl_ctf_type *);
	}
	va_end(ap);
	return t;
}

/* tenum(container, "L", lo, hi, ..., NULL) */
static struct trawl_ctf_type *tenum(struct trawl_ctf_type *c, const char *label, ...)
{
	struct trawl_ctf_type *t = ty(TRAWL_CTF_ENUM);
	size_t cap = 0;
	va_list ap;

	t->u.e.container = c;
	va_start(ap, label);
	for (const char *l = label; l; l = va_arg(ap, const char *)) {
		struct trawl_ctf_enum_range *r = tr_arena_push(A, &t->u.e.ranges, &t->u.e.n, &cap,
							    sizeof(*r));
		r->label = l;
		r->lo = (uint64_t)va_arg(ap, int64_t);
		r->hi = (uint64_t)va_arg(ap, int64_t);
	}
	va_end(ap);
	return t;
}

static struct trawl_ctf_type *tvariant(const char *tag, const char *name, ...)
{
	struct trawl_ctf_type *t = ty(TRAWL_CTF_VARIANT);
	size_t cap = 0;
	va_list ap;

	t->u.v.tag = tag;
	va_start(ap, name);
	for (const char *n = name; n; n = va_arg(ap, const char *)) {
		struct trawl_ctf_field *f = tr_arena_push(A, &t->u.v.options, &t->u.v.n, &cap,
						       sizeof(*f));
		f->name = n;
		f->type = va_arg(ap, struct trawl_ctf_type *);
	}
	va_end(ap);
	return t;
}

/* ---- the trace: one stream class like LTTng's user-space one */
static struct trawl_ctf_trace meta;
static struct trawl_ctf_stream_class sc0;
static struct trawl_ctf_stream_class *scs[1] = { &sc0 };
static struct trawl_reader_trace rtrace = { "node1", &meta };
static struct trawl_reader_stream rstream = { &rtrace };

static struct trawl_ctf_event_class *eclass(const char *name, struct trawl_ctf_type *ctx,
					    struct trawl_ctf_type *fields)
{
	struct trawl_ctf_event_class *c = tr_arena_alloc(A, sizeof(*c));

	c->name = name;
	c->stream_id = 0;
	c->loglevel = INT64_MIN;
	c->context = ctx;
	c->fields = fields;
	return c;
}

#define T0 INT64_C(1700000000000001000)	/* 22:13:20.000001000 UTC */

/* The tape: vpid, vtid, then the given values. */
static union trawl_ctf_value tape[64];
static uint32_t ntape;

static void tape_reset(bool sctx)
{
	ntape = 0;
	if (sctx) {
		tape[ntape++].i = 11;
		tape[ntape++].i = 22;
	}
}

static void U(uint64_t v) { tape[ntape++].u = v; }
static void I(int64_t v) { tape[ntape++].i = v; }
static void D(double v) { tape[ntape++].d = v; }
static void S(const char *p, uint32_t len)
{
	tape[ntape].s.p = p;
	tape[ntape++].s.len = len;
}
static void Z(const char *p) { S(p, (uint32_t)strlen(p)); }

static char line[4096];

/* Formats with the stateless API and returns the line without its '\n'. */
static const char *fmt(const struct trawl_ctf_event_class *c, int64_t ts, int64_t prev,
		       unsigned flags)
{
	struct trawl_event ev = {
		.ts = ts, .cls = c, .stream = &rstream, .values = tape,
		.nvalues = ntape, .cpu = 3,
	};
	size_t n = trawl_text_event(line, sizeof(line) - 1, &ev, prev, flags);

	if (n == 0 || n >= sizeof(line) || line[n - 1] != '\n')
		return "(bad length or no newline)";
	line[n - 1] = 0;
	return line;
}

#define HDR "[22:13:20.000001000] (+?.?????????" ") node1 "
#define CTX "{ cpu_id = 3 }, { vpid = 11, vtid = 22 }, "

static void test_types(void)
{
	struct trawl_ctf_event_class *c;

	/* integers and names: one '_' stripped */
	c = eclass("ints", NULL, tstruct("_a", tint(8, false, 10), "_b", tint(8, true, 10),
					 "c", tint(32, true, 10), "_d", tint(64, true, 10),
					 "__e", tint(64, false, 10), NULL));
	tape_reset(true);
	U(255); I(-1); I(-2147483648LL); I(INT64_MIN); U(UINT64_MAX);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "ints: " CTX
	       "{ a = 255, b = -1, c = -2147483648, d = -9223372036854775808, _e = 18446744073709551615 }",
	       "integers, first event delta");
	tape_reset(true);
	U(0); I(0); I(0); I(0); U(0);
	is_str(fmt(c, T0 + 1000, T0, 0),
	       "[22:13:20.000002000] (+0.000001000) node1 ints: " CTX
	       "{ a = 0, b = 0, c = 0, d = 0, _e = 0 }", "zeros, delta");

	/* display bases */
	c = eclass("bases", NULL, tstruct("h8", tint(8, false, 16), "h12s", tint(12, true, 16),
					  "o32", tint(32, false, 8), "o8s", tint(8, true, 8),
					  "b6", tint(6, false, 2), "b7s", tint(7, true, 2),
					  "h64s", tint(64, true, 16), NULL));
	tape_reset(true);
	U(0xab); I(-1); U(8); I(-1); U(5); I(-1); I(-2);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "bases: " CTX
	       "{ h8 = 0xAB, h12s = 0xFFF, o32 = 010, o8s = 0777, b6 = 0b000101, b7s = 0b1111111, h64s = 0xFFFFFFFFFFFFFFFE }",
	       "hex, octal, binary (signed masked)");
	tape_reset(true);
	for (int i = 0; i < 7; i++)
		U(0);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "bases: " CTX
	       "{ h8 = 0x0, h12s = 0x0, o32 = 00, o8s = 00, b6 = 0b000000, b7s = 0b0000000, h64s = 0x0 }",
	       "bases, zero");

	/* strings, escapes, text arrays and sequences */
	c = eclass("strs", NULL, tstruct("s", tstr(), "_t", tstr(), "arr", tarray(tchar(), 8),
					 "_n", tint(32, false, 10), "seq", tseq(tchar(), "_n"), NULL));
	tape_reset(true);
	Z("hello");
	Z("a\nb\tc\"d\\e'f?g\001h\177i\xc3\xa9\033");
	S("abc\0\0\0\0\0", 8);
	U(3);
	S("xyz", 3);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "strs: " CTX
	       "{ s = \"hello\", t = \"a\\nb\\tc\\\"d\\\\e\\'f\\?g\\x01h\\x7fi\xc3\xa9\\e\", arr = \"abc\", n = 3, seq = \"xyz\" }",
	       "strings: escapes, text array cut at NUL");
	tape_reset(true);
	Z(""); Z(""); S("12345678", 8); U(0); S("", 0);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "strs: " CTX
	       "{ s = \"\", t = \"\", arr = \"12345678\", n = 0, seq = \"\" }",
	       "empty strings, full text array");
	tape_reset(true);
	Z("x"); Z("y"); S("ab\0cd\0\0\0", 8); U(4); S("p\0q\0", 4);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "strs: " CTX
	       "{ s = \"x\", t = \"y\", arr = \"ab\", n = 4, seq = \"p\" }",
	       "text sequence cut at its first NUL");
	{
		static const char ctl[] = "\a\b\f\r\v\002\037";

		tape_reset(true);
		Z(ctl); Z(""); S("", 0); U(0); S("", 0);
		is_str(fmt(c, T0, INT64_MIN, 0), HDR "strs: " CTX
		       "{ s = \"\\a\\b\\f\\r\\v\\x02\\x1f\", t = \"\", arr = \"\", n = 0, seq = \"\" }",
		       "other control characters");
	}

	/* floats, as %g */
	c = eclass("floats", NULL, tstruct("f", tfloat(32), "d", tfloat(64), NULL));
	static const struct { double f, d; const char *want; } fl[] = {
		{ 1.5, 3.141592653589793, "{ f = 1.5, d = 3.14159 }" },
		{ 0.0, -0.0, "{ f = 0, d = -0 }" },
		{ 1e10, 1e-10, "{ f = 1e+10, d = 1e-10 }" },
		{ 123456.0, 1234567.0, "{ f = 123456, d = 1.23457e+06 }" },
		{ (float)0.1, 100.0, "{ f = 0.1, d = 100 }" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(fl); i++) {
		char want[256];

		tape_reset(true);
		D(fl[i].f); D(fl[i].d);
		snprintf(want, sizeof(want), HDR "floats: " CTX "%s", fl[i].want);
		is_str(fmt(c, T0, INT64_MIN, 0), want, "floats %zu", i);
	}
	tape_reset(true);
	D(INFINITY); D(NAN);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "floats: " CTX "{ f = inf, d = nan }", "inf, nan");

	/* enumerations */
	c = eclass("enums", NULL, tstruct(
		"e", tenum(tint(8, false, 10), "ZERO", (int64_t)0, (int64_t)0, "ONE", (int64_t)1, (int64_t)1,
			   "TWO", (int64_t)2, (int64_t)2, "RANGE", (int64_t)10, (int64_t)20,
			   "DUP", (int64_t)15, (int64_t)15, "quo\"te", (int64_t)30, (int64_t)30, NULL),
		"se", tenum(tint(32, true, 10), "NEG", (int64_t)-5, (int64_t)-5, "POS", (int64_t)5, (int64_t)5, NULL),
		"he", tenum(tint(8, false, 16), "HX", (int64_t)1, (int64_t)1, NULL), NULL));
	static const struct { uint64_t e; int64_t se; uint64_t he; const char *want; } en[] = {
		{ 0, -5, 1, "{ e = ( \"ZERO\" : container = 0 ), se = ( \"NEG\" : container = -5 ), he = ( \"HX\" : container = 0x1 ) }" },
		{ 15, 5, 2, "{ e = ( \"RANGE\", \"DUP\" : container = 15 ), se = ( \"POS\" : container = 5 ), he = ( <unknown> : container = 0x2 ) }" },
		{ 99, 3, 1, "{ e = ( <unknown> : container = 99 ), se = ( <unknown> : container = 3 ), he = ( \"HX\" : container = 0x1 ) }" },
		{ 30, -5, 1, "{ e = ( \"quo\\\"te\" : container = 30 ), se = ( \"NEG\" : container = -5 ), he = ( \"HX\" : container = 0x1 ) }" },
		{ 12, 5, 1, "{ e = ( \"RANGE\" : container = 12 ), se = ( \"POS\" : container = 5 ), he = ( \"HX\" : container = 0x1 ) }" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(en); i++) {
		char want[512];

		tape_reset(true);
		U(en[i].e); I(en[i].se); U(en[i].he);
		snprintf(want, sizeof(want), HDR "enums: " CTX "%s", en[i].want);
		is_str(fmt(c, T0, INT64_MIN, 0), want, "enum %zu", i);
	}
	/* several labels: in the order each label first appears */
	c = eclass("e", NULL, tstruct("e", tenum(tint(8, false, 10),
		"B", (int64_t)5, (int64_t)6, "A", (int64_t)0, (int64_t)10, "C", (int64_t)6, (int64_t)6,
		"B", (int64_t)20, (int64_t)30, NULL), NULL));
	static const struct { uint64_t v; const char *want; } en2[] = {
		{ 6, "( \"B\", \"A\", \"C\" : container = 6 )" },
		{ 25, "( \"B\" : container = 25 )" },
		{ 5, "( \"B\", \"A\" : container = 5 )" },
		{ 3, "( \"A\" : container = 3 )" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(en2); i++) {
		char want[512];

		tape_reset(true);
		U(en2[i].v);
		snprintf(want, sizeof(want), HDR "e: " CTX "{ e = %s }", en2[i].want);
		is_str(fmt(c, T0, INT64_MIN, 0), want, "enum labels in order, %zu", i);
	}

	/* arrays, sequences, arrays of strings and structs */
	c = eclass("arrays", NULL, tstruct(
		"a", tarray(tint(16, false, 10), 3), "e", tarray(tint(8, true, 10), 0),
		"n", tint(32, false, 10), "s", tseq(tint(32, true, 10), "n"),
		"m", tint(32, false, 10), "ss", tseq(tstr(), "m"),
		"st", tarray(tstruct("x", tint(8, false, 10), "y", tstr(), NULL), 2), NULL));
	tape_reset(true);
	U(3); U(1); U(2); U(3); U(0); U(2); U(2); I(-1); I(7); U(2); U(2); Z("u"); Z("v");
	U(2); U(1); Z("a"); U(2); Z("b");
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "arrays: " CTX
	       "{ a = [ [0] = 1, [1] = 2, [2] = 3 ], e = [ ], n = 2, s = [ [0] = -1, [1] = 7 ], m = 2, ss = [ [0] = \"u\", [1] = \"v\" ], st = [ [0] = { x = 1, y = \"a\" }, [1] = { x = 2, y = \"b\" } ] }",
	       "arrays and sequences");
	tape_reset(true);
	U(3); U(0); U(0); U(0); U(0); U(0); U(0); U(0); U(0);
	U(2); U(1); Z("a"); U(2); Z("b");
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "arrays: " CTX
	       "{ a = [ [0] = 0, [1] = 0, [2] = 0 ], e = [ ], n = 0, s = [ ], m = 0, ss = [ ], st = [ [0] = { x = 1, y = \"a\" }, [1] = { x = 2, y = \"b\" } ] }",
	       "empty sequences");
	{
		struct trawl_ctf_event_class *big = eclass("big", NULL, tstruct(
			"v", tarray(tint(8, false, 10), 12), NULL));

		tape_reset(true);
		U(12);
		for (int i = 0; i < 12; i++)
			U((uint64_t)i * 10);
		is_str(fmt(big, T0, INT64_MIN, 0), HDR "big: " CTX
		       "{ v = [ [0] = 0, [1] = 10, [2] = 20, [3] = 30, [4] = 40, [5] = 50, [6] = 60, [7] = 70, [8] = 80, [9] = 90, [10] = 100, [11] = 110 ] }",
		       "two-digit array indexes");
	}

	/* nested and empty structs */
	c = eclass("nested", NULL, tstruct("a", tint(8, false, 10),
		"b", tstruct("c", tint(8, false, 10), "e", tstruct("d", tstr(), NULL), NULL),
		"empty", tstruct(NULL), NULL));
	tape_reset(true);
	U(1); U(2); Z("dd");
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "nested: " CTX
	       "{ a = 1, b = { c = 2, e = { d = \"dd\" } }, empty = { } }", "nested structs");

	/* variants */
	c = eclass("variant", NULL, tstruct(
		"tag", tenum(tint(8, false, 10), "A", (int64_t)0, (int64_t)0, "B", (int64_t)1, (int64_t)1,
			     "C", (int64_t)2, (int64_t)2, NULL),
		"v", tvariant("tag", "A", tint(32, false, 10), "B", tstr(),
			      "C", tstruct("x", tint(8, false, 10), "y", tint(8, false, 10), NULL), NULL),
		NULL));
	tape_reset(true);
	U(0); U(0); U(42);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "variant: " CTX
	       "{ tag = ( \"A\" : container = 0 ), v = { 42 } }", "variant: integer");
	tape_reset(true);
	U(1); U(1); Z("bee");
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "variant: " CTX
	       "{ tag = ( \"B\" : container = 1 ), v = { \"bee\" } }", "variant: string");
	tape_reset(true);
	U(2); U(2); U(7); U(8);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "variant: " CTX
	       "{ tag = ( \"C\" : container = 2 ), v = { { x = 7, y = 8 } } }", "variant: struct");

	/* no payload, empty payload, contexts */
	c = eclass("nopayload", NULL, NULL);
	tape_reset(true);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "nopayload: { cpu_id = 3 }, { vpid = 11, vtid = 22 }",
	       "no payload");
	c = eclass("emptypayload", NULL, tstruct(NULL));
	tape_reset(true);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "emptypayload: " CTX "{ }", "empty payload");
	c = eclass("withctx", tstruct("_ectx", tint(32, true, 10), NULL),
		   tstruct("p", tint(8, false, 10), NULL));
	tape_reset(true);
	I(-3); U(9);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "withctx: " CTX "{ ectx = -3 }, { p = 9 }",
	       "event context");
	c = eclass("ctxonly", tstruct("ectx", tint(32, true, 10), NULL), NULL);
	tape_reset(true);
	I(4);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "ctxonly: " CTX "{ ectx = 4 }", "context only");

	/* integers mapped to a clock are hidden, as babeltrace2 does */
	c = eclass("clockfield", NULL, tstruct("ts", tclock(), "after", tint(8, false, 10), NULL));
	tape_reset(true);
	U(5); U(6);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "clockfield: " CTX "{ after = 6 }",
	       "clock-mapped field hidden");
	c = eclass("onlyclock", NULL, tstruct("ts", tclock(), NULL));
	tape_reset(true);
	U(5);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "onlyclock: { cpu_id = 3 }, { vpid = 11, vtid = 22 }",
	       "payload of clock fields only: no payload");
	c = eclass("cseq", NULL, tstruct("n", tclock(), "s", tseq(tint(8, false, 10), "n"),
					  "z", tint(8, false, 10), NULL));
	tape_reset(true);
	U(2); U(2); U(4); U(5); U(6);
	is_str(fmt(c, T0, INT64_MIN, 0), HDR "cseq: " CTX
	       "{ n = 2, s = [ [0] = 4, [1] = 5 ], z = 6 }",
	       "clock-mapped sequence length is shown");

	/* without stream (no host, no stream contexts) */
	c = eclass("a", NULL, tstruct("x", tint(8, false, 10), NULL));
	{
		union trawl_ctf_value v[1] = { { .u = 1 } };
		struct trawl_event ev = { .ts = T0, .cls = c, .values = v, .nvalues = 1 };
		size_t n = trawl_text_event(line, sizeof(line), &ev, INT64_MIN, 0);

		line[n] = 0;
		is_str(line, "[22:13:20.000001000] (+?.?????????" ") a: { x = 1 }\n", "no host, no stream");
		ev.cls = eclass("b", NULL, NULL);
		ev.nvalues = 0;
		n = trawl_text_event(line, sizeof(line), &ev, INT64_MIN, 0);
		line[n] = 0;
		is_str(line, "[22:13:20.000001000] (+?.?????????" ") b: \n",
		       "nothing after the name: line ends with ': '");
	}

	/* a tape shorter than the types: no crash, still one line */
	c = eclass("short", NULL, tstruct("x", tint(8, false, 10), "y", tstr(), NULL));
	tape_reset(true);
	U(1);
	{
		struct trawl_event ev = { .ts = T0, .cls = c, .stream = &rstream, .values = tape,
					  .nvalues = ntape, .cpu = 3 };
		size_t n = trawl_text_event(line, sizeof(line), &ev, INT64_MIN, 0);

		ok(n > 0 && n < sizeof(line) && line[n - 1] == '\n' && !memchr(line, '\n', n - 1),
		   "short tape: one line");
	}
}

/* Floats: the fast %g against printf's, over many magnitudes and ties. */
static void test_float_format(void)
{
	struct trawl_ctf_event_class *c = eclass("f", NULL, tstruct("d", tfloat(64), NULL));
	struct trawl_text *t = trawl_text_new(TRAWL_TEXT_NO_DELTA | TRAWL_TEXT_CLOCK_SECONDS);
	union trawl_ctf_value v[3] = { { .i = 11 }, { .i = 22 } };
	struct trawl_event ev = { .ts = T0, .cls = c, .stream = &rstream, .values = v, .nvalues = 3, .cpu = 3 };
	static const double fixed[] = {
		0.5, 1, 9.999995, 9.9999949, 99999.95, 999999.5, 999999.4, 1e6, 1e-4, 9.99999e-5,
		0.000123456789, 123456789, 1e14, 9.999995e14, 1e15, 1e16, 1e100, 1e-300,
		5e-324, 2.5, 0.15, 0.25, 1.0000005, 1.0000015, 123.4565, 100000, 1234565,
	};
	char pre[128], want[256];
	uint64_t seed = 42;
	int bad = 0, n = 0;
	size_t plen;

	plen = (size_t)snprintf(pre, sizeof(pre), "[1700000000.000001000] node1 f: " CTX "{ d = ");
	for (int i = 0; i < 400000; i++) {
		double d;

		if (i < (int)ARRAY_SIZE(fixed) * 2) {
			d = fixed[i / 2] * (i & 1 ? -1 : 1);
		} else {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* mantissa with few digits (ties) or random bits, any exponent */
			if (seed >> 63)
				d = (double)((seed >> 20) % 2000000) / 2 * pow(10, (int)((seed >> 8) % 30) - 12);
			else
				d = ldexp((double)(seed >> 11), (int)((seed >> 3) % 120) - 100);
			if (i % 3 == 0)
				d = (float)d;
			if (i % 5 == 0)
				d = -d;
		}
		v[2].d = d;
		size_t len = trawl_text_format(t, line, sizeof(line), &ev);

		snprintf(want, sizeof(want), "%s%g }\n", pre, d);
		n++;
		if (len != strlen(want) || memcmp(line, want, len) != 0 || memcmp(line, pre, plen)) {
			if (!bad++)
				printf("# %.17g: got %.*s", d, (int)len, line);
		}
	}
	is_int(bad, 0, "%%g of %d doubles as printf", n);
	trawl_text_free(t);
}

static void test_time_forms(void)
{
	struct trawl_ctf_event_class *c = eclass("t", NULL, tstruct("x", tint(8, false, 10), NULL));

	tape_reset(true);
	U(1);
	is_str(fmt(c, T0, INT64_MIN, TRAWL_TEXT_CLOCK_SECONDS),
	       "[1700000000.000001000] (+?.?????????" ") node1 t: " CTX "{ x = 1 }", "--clock-seconds");
	is_str(fmt(c, T0, T0 - 2500000000LL, TRAWL_TEXT_NO_DELTA),
	       "[22:13:20.000001000] node1 t: " CTX "{ x = 1 }", "--no-delta");
	is_str(fmt(c, T0, T0 - 12500000000LL, 0),
	       "[22:13:20.000001000] (+12.500000000) node1 t: " CTX "{ x = 1 }", "delta over seconds");
	is_str(fmt(c, 5, INT64_MIN, 0),
	       "[00:00:00.000000005] (+?.?????????" ") node1 t: " CTX "{ x = 1 }", "epoch");
	is_str(fmt(c, -1500000000LL, INT64_MIN, 0),
	       "[-1.500000000] (+?.?????????" ") node1 t: " CTX "{ x = 1 }", "negative time: seconds");

	setenv("TZ", "America/New_York", 1);
	tzset();
	is_str(fmt(c, T0, INT64_MIN, 0),
	       "[17:13:20.000001000] (+?.?????????" ") node1 t: " CTX "{ x = 1 }", "local time");
	is_str(fmt(c, T0, INT64_MIN, TRAWL_TEXT_CLOCK_GMT),
	       "[22:13:20.000001000] (+?.?????????" ") node1 t: " CTX "{ x = 1 }", "--clock-gmt");
	setenv("TZ", "UTC", 1);
	tzset();
}

/* The cached date against localtime_r for every event, across minutes, a DST
 * change and a zone whose offset is not a whole minute. */
static void test_date_cache(void)
{
	static const char *const zones[] = { "UTC", "America/New_York", "Africa/Monrovia" };
	static const int64_t starts[] = { 1700000039, 1699162000, 31535000 };
	struct trawl_ctf_event_class *c = eclass("t", NULL, tstruct("x", tint(8, false, 10), NULL));
	union trawl_ctf_value v[3] = { { .i = 11 }, { .i = 22 }, { .u = 1 } };
	struct trawl_event ev = { .cls = c, .stream = &rstream, .values = v, .nvalues = 3, .cpu = 3 };
	unsigned seed = 12345;

	for (size_t z = 0; z < ARRAY_SIZE(zones); z++) {
		struct trawl_text *t;
		int bad = 0, n = 0;
		int64_t prev = INT64_MIN;

		setenv("TZ", zones[z], 1);
		tzset();
		t = trawl_text_new(0);
		int64_t ts = starts[z] * 1000000000LL;

		for (int i = 0; i < 20000; i++) {
			char want[64], got[64];
			time_t s;
			struct tm tm;

			/* mostly forward by up to 2 s, sometimes back or a jump */
			seed = seed * 1103515245 + 12345;
			int64_t step = (int64_t)(seed >> 8) % 2000000000;

			if (i % 997 == 0)
				step = -step * 50;
			ts += step;
			ev.ts = ts;
			size_t len = trawl_text_format(t, line, sizeof(line), &ev);

			s = (time_t)(ts / 1000000000);
			localtime_r(&s, &tm);
			snprintf(want, sizeof(want), "[%02d:%02d:%02d.%09lld] ", tm.tm_hour, tm.tm_min,
				 tm.tm_sec, (long long)(ts % 1000000000));
			memcpy(got, line, strlen(want));
			got[strlen(want)] = 0;
			n++;
			if (len == 0 || strcmp(got, want) != 0) {
				if (!bad++)
					printf("# %s ts %lld: got %s want %s\n", zones[z],
					       (long long)ts, got, want);
			}
			/* the delta follows the previous event */
			if (prev != INT64_MIN) {
				/* negative when time went back (every 997th step) */
				bool back = ts < prev;
				uint64_t d = back ? (uint64_t)prev - (uint64_t)ts
						  : (uint64_t)ts - (uint64_t)prev;

				snprintf(want, sizeof(want), "(%c%llu.%09llu) ", back ? '-' : '+',
					 (unsigned long long)(d / 1000000000),
					 (unsigned long long)(d % 1000000000));
				if (!strstr(line, want) && !bad++)
					printf("# delta: %s\n", line);
			}
			prev = ts;
		}
		is_int(bad, 0, "date cache in %s over %d events", zones[z], n);
		trawl_text_free(t);
	}
	setenv("TZ", "UTC", 1);
	tzset();
}

static void test_object(void)
{
	struct trawl_ctf_event_class *c1 = eclass("one", NULL, tstruct("x", tint(8, false, 10), NULL));
	struct trawl_ctf_event_class *c2 = eclass("two", NULL, tstruct("s", tstr(), NULL));
	struct trawl_text *t = trawl_text_new(0);
	union trawl_ctf_value v1[3] = { { .i = 11 }, { .i = 22 }, { .u = 7 } };
	union trawl_ctf_value v2[3] = { { .i = 11 }, { .i = 22 } };
	struct trawl_event e1 = { .ts = T0, .cls = c1, .stream = &rstream, .values = v1, .nvalues = 3, .cpu = 3 };
	struct trawl_event e2 = { .ts = T0 + 1000000000, .cls = c2, .stream = &rstream, .values = v2, .nvalues = 3, .cpu = 1 };
	char small[40];
	size_t n;

	v2[2].s.p = "a long string that will not fit in the small buffer";
	v2[2].s.len = (uint32_t)strlen(v2[2].s.p);
	n = trawl_text_format(t, line, sizeof(line), &e1);
	line[n] = 0;
	is_str(line, HDR "one: " CTX "{ x = 7 }\n", "object: first line");
	memset(small, '#', sizeof(small));
	n = trawl_text_format(t, small, 30, &e2);
	is_int(n, strlen("[22:13:21.000001000] (+1.000000000) node1 two: { cpu_id = 1 }, { vpid = 11, vtid = 22 }, { s = \"a long string that will not fit in the small buffer\" }\n"),
	       "too small: returns the length needed");
	ok(small[30] == '#' && small[39] == '#', "too small: nothing written past cap");
	n = trawl_text_format(t, line, sizeof(line), &e2);
	line[n] = 0;
	is_str(line, "[22:13:21.000001000] (+1.000000000) node1 two: { cpu_id = 1 }, { vpid = 11, vtid = 22 }, { s = \"a long string that will not fit in the small buffer\" }\n",
	       "retry: delta still from the last printed event");
	e1.ts = e2.ts;
	for (int i = 0; i < 3; i++) {
		e1.ts += 1;
		n = trawl_text_format(t, line, sizeof(line), &e1);
		line[n] = 0;
	}
	is_str(line, "[22:13:21.000001003] (+0.000000001) node1 one: " CTX "{ x = 7 }\n",
	       "cached class programs reused");
	/* the stateless and the cached forms agree */
	{
		char a[512], b[512];
		size_t na = trawl_text_event(a, sizeof(a), &e2, e1.ts, 0);
		size_t nb;

		nb = trawl_text_format(t, b, sizeof(b), &e2);
		ok(na == nb && na < sizeof(a) && memcmp(a, b, na) == 0,
		   "trawl_text_event == trawl_text_format");
		a[na < sizeof(a) ? na : 0] = 0;
		/*
		 * Time going back (e2 3 ns before e1) prints a negative delta.
		 * babeltrace2 2.0 prints the unsigned 64-bit difference there,
		 * "(+18446744073.709551613)": an oracle defect, not followed
		 * (the oracle tests' normalize.sh maps its form to this one).
		 */
		is_str(a, "[22:13:21.000001000] (-0.000000003) node1 two: { cpu_id = 1 }, { vpid = 11, vtid = 22 }, { s = \"a long string that will not fit in the small buffer\" }\n",
		       "time going back: a negative delta (not babeltrace2's unsigned difference)");
	}
	/* deltas between the ends of the int64 range: no overflow, either way */
	{
		struct trawl_event lo = e2, hi = e2;
		char a[512];
		size_t na;

		lo.ts = INT64_MIN + 1;
		hi.ts = INT64_MAX;
		na = trawl_text_event(a, sizeof(a), &hi, lo.ts, TRAWL_TEXT_CLOCK_SECONDS);
		a[na < sizeof(a) ? na : 0] = 0;
		ok(strncmp(a, "[9223372036.854775807] (+18446744073.709551614) ", 48) == 0,
		   "from INT64_MIN + 1 to INT64_MAX: +(2^64 - 2) ns (%.48s)", a);
		na = trawl_text_event(a, sizeof(a), &lo, hi.ts, TRAWL_TEXT_CLOCK_SECONDS);
		a[na < sizeof(a) ? na : 0] = 0;
		ok(strncmp(a, "[-9223372036.854775807] (-18446744073.709551614) ", 49) == 0,
		   "back from INT64_MAX to INT64_MIN + 1: -(2^64 - 2) ns (%.49s)", a);
	}
	trawl_text_free(t);
	trawl_text_free(NULL);
}

int main(void)
{
	A = tr_arena_new();
	setenv("TZ", "UTC", 1);
	tzset();
	meta.streams = scs;
	meta.nstreams = 1;
	sc0.id = 0;
	sc0.packet_context = tstruct("timestamp_begin", tclock(), "timestamp_end", tclock(),
				     "content_size", tint(64, false, 10),
				     "packet_size", tint(64, false, 10),
				     "packet_seq_num", tint(64, false, 10),
				     "events_discarded", tint(64, false, 10),
				     "cpu_id", tint(32, false, 10), NULL);
	sc0.event_context = tstruct("_vpid", tint(32, true, 10), "_vtid", tint(32, true, 10), NULL);

	test_types();
	test_float_format();
	test_time_forms();
	test_date_cache();
	test_object();
	tr_arena_free(A);
	return done_testing();
}
