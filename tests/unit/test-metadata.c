/* SPDX-License-Identifier: MIT */
/*
 * CTF 1.8 metadata: reading (text and packetized files) and the TSDL
 * parser, field by field, on the example of the research notes and on a
 * real LTTng-UST 2.13 metadata file; error messages with their line;
 * hostile inputs (deep nesting, huge types, truncations, mutations).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctf/ctf-internal.h"
#include "internal.h"
#include "tap.h"

static char srcdir[4096];
static char tmpdir[4096];

static void find_dirs(void)
{
	const char *s = getenv("TRAWL_SRC");
	if (s && *s) {
		snprintf(srcdir, sizeof(srcdir), "%s", s);
	} else {
		/* This file is tests/unit/test-metadata.c under the source tree. */
		snprintf(srcdir, sizeof(srcdir), "%s", __FILE__);
		char *p = strstr(srcdir, "tests/unit/test-metadata.c");
		if (p)
			*(p == srcdir ? p : p - 1) = 0;
		if (!srcdir[0])
			strcpy(srcdir, ".");
	}
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/test-metadata-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static char *data_path(const char *name)
{
	static char buf[8192];
	snprintf(buf, sizeof(buf), "%s/tests/data/metadata/%s", srcdir, name);
	return buf;
}

static const char *write_tmp(const char *name, const void *data, size_t len)
{
	static char path[8192];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len) {
		perror(path);
		exit(1);
	}
	fclose(f);
	return path;
}

static char err[512];

static struct trawl_ctf_trace *parse(const char *text)
{
	err[0] = 0;
	struct trawl_ctf_trace *t = trawl_ctf_metadata_parse(text, strlen(text), err, sizeof(err));
	if (!t)
		printf("# parse error: %s\n", err);
	return t;
}

static const struct trawl_ctf_field *field(const struct trawl_ctf_type *s, const char *name)
{
	if (!s || (s->kind != TRAWL_CTF_STRUCT && s->kind != TRAWL_CTF_VARIANT))
		return NULL;
	const struct trawl_ctf_field *f = s->kind == TRAWL_CTF_STRUCT ? s->u.s.fields : s->u.v.options;
	size_t n = s->kind == TRAWL_CTF_STRUCT ? s->u.s.n : s->u.v.n;
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

static const struct trawl_ctf_type *ftype(const struct trawl_ctf_type *s, const char *name)
{
	const struct trawl_ctf_field *f = field(s, name);
	return f ? f->type : NULL;
}

static const struct trawl_ctf_event_class *event(const struct trawl_ctf_trace *t, const char *name)
{
	for (size_t i = 0; i < t->nstreams; i++)
		for (size_t j = 0; j < t->streams[i]->nevents; j++)
			if (strcmp(t->streams[i]->events[j]->name, name) == 0)
				return t->streams[i]->events[j];
	return NULL;
}

static bool is_uint(const struct trawl_ctf_type *t, unsigned size, unsigned align, bool sign)
{
	return t && t->kind == TRAWL_CTF_INT && t->u.i.size == size && t->align == align &&
	       t->u.i.sign == sign;
}

static void uuid_is(const uint8_t *u, const char *want, const char *what)
{
	char s[37];
	tr_uuid_format(u, s);
	is_str(s, want, "%s", what);
}

/* ------------------------------------------------------------- example */

static void test_example(void)
{
	size_t len;
	char *text = trawl_ctf_metadata_read(data_path("example.tsdl"), &len, err, sizeof(err));
	ok(text != NULL, "read example.tsdl (text metadata): %s", text ? "ok" : err);
	if (!text)
		return;
	is_int(len, strlen(text), "text length matches");
	struct trawl_ctf_trace *t = trawl_ctf_metadata_parse(text, len, err, sizeof(err));
	ok(t != NULL, "parse example: %s", t ? "ok" : err);
	free(text);
	if (!t)
		return;

	is_int(t->major, 1, "major");
	is_int(t->minor, 8, "minor");
	is_int(t->byte_order, TRAWL_CTF_LE, "trace byte order le");
	ok(t->has_uuid, "trace has uuid");
	uuid_is(t->uuid, "dbf56750-05d0-51e7-a92e-62744da1c219", "trace uuid");

	const struct trawl_ctf_type *ph = t->packet_header;
	ok(ph && ph->kind == TRAWL_CTF_STRUCT && ph->u.s.n == 4, "packet header: struct of 4");
	if (ph && ph->u.s.n == 4) {
		is_str(ph->u.s.fields[0].name, "magic", "field 0 magic");
		ok(is_uint(ph->u.s.fields[0].type, 32, 8, false), "magic u32 align 8");
		const struct trawl_ctf_type *u = ph->u.s.fields[1].type;
		ok(u->kind == TRAWL_CTF_ARRAY && u->u.a.length == 16 && is_uint(u->u.a.elem, 8, 8, false),
		   "uuid is uint8_t[16]");
		is_int(u->align, 8, "array align = element's");
		is_str(ph->u.s.fields[3].name, "stream_instance_id", "field 3 name");
		ok(is_uint(ph->u.s.fields[3].type, 64, 8, false), "stream_instance_id u64");
		is_int(ph->u.s.fields[0].type->u.i.byte_order, TRAWL_CTF_LE, "native -> le");
		is_int(ph->u.s.fields[0].type->u.i.clock, -1, "no clock");
		is_int(ph->u.s.fields[0].type->u.i.base, 10, "base 10 default");
		is_int(ph->align, 8, "struct align = max field align");
	}

	is_int(t->nenv, 5, "5 env entries");
	const struct trawl_ctf_env *e = trawl_ctf_trace_env(t, "hostname");
	ok(e && !e->is_int && strcmp(e->sval, "node1") == 0, "env hostname = node1");
	e = trawl_ctf_trace_env(t, "domain");
	ok(e && !e->is_int && strcmp(e->sval, "kernel") == 0, "env domain = kernel");
	e = trawl_ctf_trace_env(t, "tracer_minor");
	ok(e && e->is_int && e->ival == 1, "env tracer_minor = 1");
	e = trawl_ctf_trace_env(t, "tracer_major");
	ok(e && e->is_int && e->ival == 0, "env tracer_major = 0");
	is_str(t->env[0].key, "hostname", "env in declaration order");

	is_int(t->nclocks, 1, "one clock");
	const struct trawl_ctf_clock *c = &t->clocks[0];
	is_str(c->name, "monotonic", "clock name");
	is_str(c->description, "CLOCK_MONOTONIC", "clock description");
	ok(c->has_uuid, "clock has uuid");
	uuid_is(c->uuid, "52391d79-82f9-53a6-89e9-cc3902efefbb", "clock uuid");
	is_int(c->freq, 1000000000, "clock freq");
	is_int(c->precision, 1, "clock precision");
	is_int(c->offset_s, 1700000000, "clock offset_s");
	is_int(c->offset, 0, "clock offset");
	ok(c->absolute, "clock absolute");

	is_int(t->nstreams, 2, "two streams");
	if (t->nstreams != 2)
		goto out;
	const struct trawl_ctf_stream_class *s0 = t->streams[0], *s1 = t->streams[1];
	is_int(s0->id, 0, "stream 0 id");
	is_int(s1->id, 1, "stream 1 id");
	ok(s0->event_context == NULL, "stream 0 has no event context");

	const struct trawl_ctf_type *pc = s0->packet_context;
	ok(pc && pc->kind == TRAWL_CTF_STRUCT && pc->u.s.n == 7, "packet context: 7 fields");
	ok(pc == s1->packet_context, "named struct packet_context reused");
	const struct trawl_ctf_type *tb = ftype(pc, "timestamp_begin");
	ok(is_uint(tb, 64, 8, false) && tb->u.i.clock == 0, "timestamp_begin u64 mapped to clock 0");
	ok(is_uint(ftype(pc, "cpu_id"), 32, 8, false), "cpu_id u32");
	is_int(ftype(pc, "cpu_id")->u.i.clock, -1, "cpu_id not a clock");

	const struct trawl_ctf_type *eh = s0->event_header;
	ok(eh && eh->kind == TRAWL_CTF_STRUCT && eh->u.s.n == 2, "compact header: 2 fields");
	is_int(eh ? eh->align : 0, 8, "compact header align(8) = 8 bits");
	const struct trawl_ctf_type *id = ftype(eh, "id");
	ok(id && id->kind == TRAWL_CTF_ENUM, "header id is an enum");
	if (id && id->kind == TRAWL_CTF_ENUM) {
		ok(is_uint(id->u.e.container, 5, 1, false), "container uint5_t, align 1");
		is_int(id->align, 1, "enum align = container's");
		is_int(id->u.e.n, 2, "two enum ranges");
		is_str(id->u.e.ranges[0].label, "compact", "range 0 label");
		is_int(id->u.e.ranges[0].lo, 0, "compact lo");
		is_int(id->u.e.ranges[0].hi, 30, "compact hi");
		is_str(id->u.e.ranges[1].label, "extended", "range 1 label");
		ok(id->u.e.ranges[1].lo == 31 && id->u.e.ranges[1].hi == 31, "extended = 31");
	}
	const struct trawl_ctf_type *v = ftype(eh, "v");
	ok(v && v->kind == TRAWL_CTF_VARIANT, "v is a variant");
	if (v && v->kind == TRAWL_CTF_VARIANT) {
		is_str(v->u.v.tag, "id", "variant tag");
		is_int(v->u.v.n, 2, "two options");
		is_str(v->u.v.options[0].name, "compact", "option 0 compact");
		is_int(v->align, 1, "variant align 1");
		const struct trawl_ctf_type *ts = ftype(v->u.v.options[0].type, "timestamp");
		ok(is_uint(ts, 27, 1, false) && ts->u.i.clock == 0, "compact timestamp 27 bits, clock 0");
		const struct trawl_ctf_type *x = v->u.v.options[1].type;
		ok(is_uint(ftype(x, "id"), 32, 8, false), "extended id u32");
		ok(is_uint(ftype(x, "timestamp"), 64, 8, false), "extended timestamp u64");
	}
	const struct trawl_ctf_type *lh = ftype(s1->event_header, "id");
	ok(lh && lh->kind == TRAWL_CTF_ENUM && is_uint(lh->u.e.container, 16, 8, false) &&
	   lh->u.e.ranges[0].hi == 65534 && lh->u.e.ranges[1].lo == 65535,
	   "large header: u16 id, 0...65534 / 65535");
	const struct trawl_ctf_type *ec = s1->event_context;
	ok(ec && ec->u.s.n == 2 && is_uint(ftype(ec, "_vpid"), 32, 8, true) &&
	   is_uint(ftype(ec, "_vtid"), 32, 8, true), "stream 1 context: signed _vpid, _vtid");

	is_int(s0->nevents, 1, "one event in stream 0");
	is_int(s1->nevents, 1, "one event in stream 1");
	const struct trawl_ctf_event_class *ss = event(t, "sched_switch");
	ok(ss && ss->id == 0 && ss->stream_id == 0, "sched_switch id 0 stream 0");
	if (ss) {
		ok(ss == s0->events[0], "sched_switch in stream 0");
		is_int(ss->loglevel, INT64_MIN, "no loglevel");
		ok(ss->context == NULL && ss->model_emf_uri == NULL, "no context, no emf uri");
		ok(ss->fields && ss->fields->u.s.n == 7, "sched_switch: 7 fields");
		const struct trawl_ctf_type *comm = ftype(ss->fields, "_prev_comm");
		ok(comm && comm->kind == TRAWL_CTF_ARRAY && comm->u.a.length == 16 &&
		   comm->u.a.elem->u.i.encoding == TRAWL_CTF_ENC_UTF8, "_prev_comm utf8_t[16]");
		ok(is_uint(ftype(ss->fields, "_prev_state"), 64, 8, true), "_prev_state int64");
		is_str(ss->fields->u.s.fields[6].name, "_next_prio", "last field _next_prio");
	}
	const struct trawl_ctf_event_class *rq = event(t, "myapp:request");
	ok(rq && rq->id == 0 && rq->stream_id == 1 && rq == s1->events[0], "myapp:request in stream 1");
	if (rq) {
		is_int(rq->loglevel, 13, "loglevel 13");
		const struct trawl_ctf_type *pl = ftype(rq->fields, "_payload");
		ok(pl && pl->kind == TRAWL_CTF_SEQUENCE, "_payload is a sequence");
		if (pl && pl->kind == TRAWL_CTF_SEQUENCE) {
			is_str(pl->u.q.length, "__payload_length", "sequence length path");
			ok(is_uint(pl->u.q.elem, 8, 8, false), "sequence of uint8_t");
		}
		const struct trawl_ctf_type *path = ftype(rq->fields, "_path");
		ok(path && path->kind == TRAWL_CTF_STRING && path->align == 8 &&
		   path->u.str.encoding == TRAWL_CTF_ENC_UTF8, "_path string, align 8, UTF8");
	}
out:
	trawl_ctf_trace_free(t);
}

/* ---------------------------------------------------------- real LTTng */

static void test_lttng(void)
{
	size_t len;
	const char *path = data_path("lttng-ust-2.13.metadata");
	char *text = trawl_ctf_metadata_read(path, &len, err, sizeof(err));
	ok(text != NULL, "read LTTng-UST 2.13 packetized metadata: %s", text ? "ok" : err);
	if (!text)
		return;
	ok(strncmp(text, "/* CTF 1.8", 10) == 0, "unpacked text starts with the CTF header");
	ok(strstr(text, "\"prov:ev_simple\"") != NULL, "text spans both packets");
	is_int(len, 4096 - 37 + 258 - 37, "text = both packets' content");
	struct trawl_ctf_trace *t = trawl_ctf_metadata_parse(text, len, err, sizeof(err));
	ok(t != NULL, "parse LTTng metadata: %s", t ? "ok" : err);
	free(text);
	if (!t)
		return;
	uuid_is(t->uuid, "0a1c8617-8c51-4956-884f-ed7d9e8e56db", "trace uuid");
	const struct trawl_ctf_env *e = trawl_ctf_trace_env(t, "tracer_name");
	ok(e && !e->is_int && !strcmp(e->sval, "lttng-ust"), "tracer_name lttng-ust");
	e = trawl_ctf_trace_env(t, "tracer_major");
	ok(e && e->is_int && e->ival == 2, "tracer_major 2");
	is_int(t->nenv, 10, "10 env entries");
	is_int(t->nclocks, 1, "one clock");
	is_str(t->clocks[0].name, "monotonic", "clock monotonic");
	is_int(t->clocks[0].offset, 1795347387429036591LL, "clock offset (cycles)");
	ok(!t->clocks[0].absolute, "LTTng-UST clock not absolute");
	is_int(t->nstreams, 1, "one stream");
	if (t->nstreams != 1)
		goto out;
	const struct trawl_ctf_stream_class *s = t->streams[0];
	is_int(s->nevents, 2, "two events");
	ok(is_uint(ftype(s->packet_context, "events_discarded"), 64, 8, false),
	   "'unsigned long' alias: u64");
	const struct trawl_ctf_type *pn = ftype(s->event_context, "_procname");
	ok(pn && pn->kind == TRAWL_CTF_ARRAY && pn->u.a.length == 17 &&
	   is_uint(pn->u.a.elem, 8, 8, true) && pn->u.a.elem->u.i.encoding == TRAWL_CTF_ENC_UTF8,
	   "_procname: 17 UTF8 chars");
	const struct trawl_ctf_event_class *ev = event(t, "prov:ev_all");
	ok(ev && ev->id == 0 && ev->loglevel == 13 && ev->fields && ev->fields->u.s.n == 13,
	   "prov:ev_all: id 0, loglevel 13, 13 fields");
	if (!ev || !ev->fields)
		goto out;
	const struct trawl_ctf_type *f = ev->fields;
	const struct trawl_ctf_type *x = ftype(f, "_my_net");
	ok(is_uint(x, 32, 8, true) && x->u.i.byte_order == TRAWL_CTF_BE, "_my_net: be int32");
	x = ftype(f, "_my_int");
	ok(is_uint(x, 32, 8, true) && x->u.i.byte_order == TRAWL_CTF_LE, "_my_int: le int32");
	x = ftype(f, "_my_long_hex");
	ok(is_uint(x, 64, 8, true) && x->u.i.base == 16, "_my_long_hex: base 16");
	x = ftype(f, "_my_double");
	ok(x && x->kind == TRAWL_CTF_FLOAT && x->u.f.exp_dig == 11 && x->u.f.mant_dig == 53 &&
	   x->align == 8 && x->u.f.byte_order == TRAWL_CTF_LE, "_my_double: 11/53");
	x = ftype(f, "_my_float");
	ok(x && x->kind == TRAWL_CTF_FLOAT && x->u.f.exp_dig == 8 && x->u.f.mant_dig == 24,
	   "_my_float: 8/24");
	x = ftype(f, "_my_string");
	ok(x && x->kind == TRAWL_CTF_STRING, "_my_string");
	x = ftype(f, "_my_array");
	ok(x && x->kind == TRAWL_CTF_ARRAY && x->u.a.length == 3, "_my_array[3]");
	x = ftype(f, "_my_seqtext");
	ok(x && x->kind == TRAWL_CTF_SEQUENCE && !strcmp(x->u.q.length, "__my_seqtext_length") &&
	   x->u.q.elem->u.i.encoding == TRAWL_CTF_ENC_UTF8, "_my_seqtext: text sequence");
	x = ftype(f, "_my_enum");
	ok(x && x->kind == TRAWL_CTF_ENUM && x->u.e.n == 4 && x->u.e.container->u.i.sign,
	   "_my_enum: 4 ranges, signed container");
	if (x && x->kind == TRAWL_CTF_ENUM && x->u.e.n == 4) {
		ok(!strcmp(x->u.e.ranges[1].label, "GREEN") && x->u.e.ranges[1].lo == 1 &&
		   x->u.e.ranges[1].hi == 5, "GREEN = 1 ... 5");
		ok(!strcmp(x->u.e.ranges[2].label, "BLUE") && x->u.e.ranges[2].lo == 6 &&
		   x->u.e.ranges[2].hi == 6, "BLUE auto-increments to 6");
		is_int((int64_t)x->u.e.ranges[3].lo, -3, "NEG = -3 (signed)");
	}
	ev = event(t, "prov:ev_simple");
	ok(ev && ev->id == 1 && ev->loglevel == 4 && is_uint(ftype(ev->fields, "_small"), 8, 8, false),
	   "prov:ev_simple: id 1, loglevel 4, u8 _small");
out:
	trawl_ctf_trace_free(t);
}

/* ---------------------------------------------------------- packetized */

static void put32(uint8_t *b, uint32_t v, bool be)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(be ? v >> (24 - 8 * i) : v >> (8 * i));
}

/* text split in packets of at most chunk bytes of text, padded by pad bytes */
static size_t packetize(uint8_t *out, const char *text, size_t len, bool be, size_t chunk,
			size_t pad)
{
	size_t o = 0;
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		uint8_t *h = out + o;
		memset(h, 0, 37 + n + pad);
		put32(h, 0x75D11D57, be);
		for (int i = 0; i < 16; i++)
			h[4 + i] = (uint8_t)(0xA0 + i);
		put32(h + 24, (uint32_t)(37 + n) * 8, be);
		put32(h + 28, (uint32_t)(37 + n + pad) * 8, be);
		h[35] = 1;
		h[36] = 8;
		memcpy(h + 37, text + off, n);
		o += 37 + n + pad;
	}
	return o;
}

static void test_packetized(void)
{
	size_t tlen;
	char *text = (char *)slurp(data_path("example.tsdl"), &tlen);
	ok(text != NULL, "example text for packets");
	if (!text)
		return;
	uint8_t *buf = malloc(tlen * 4 + 65536);
	for (int be = 0; be <= 1; be++) {
		size_t n = packetize(buf, text, tlen, be, 1000, 123);
		const char *path = write_tmp("packets", buf, n);
		size_t len = 0;
		char *got = trawl_ctf_metadata_read(path, &len, err, sizeof(err));
		ok(got && len == tlen && memcmp(got, text, tlen) == 0 && got[len] == 0,
		   "%s packets (4 of 1000 bytes + padding) -> the same text", be ? "big-endian" : "little-endian");
		struct trawl_ctf_trace *t = got ? trawl_ctf_metadata_parse(got, len, err, sizeof(err)) : NULL;
		ok(t && t->nstreams == 2, "and it parses");
		trawl_ctf_trace_free(t);
		free(got);
	}

	/* The last packet's padding may be missing; its content may not. */
	size_t n = packetize(buf, text, tlen, false, 1000, 100);
	const char *path = write_tmp("packets", buf, n - 50);
	size_t len = 0;
	char *got = trawl_ctf_metadata_read(path, &len, err, sizeof(err));
	ok(got && len == tlen, "missing padding of the last packet is accepted");
	free(got);

	size_t last = n - (tlen - 3000 + 37 + 100);	/* offset of the 4th packet */
	path = write_tmp("packets", buf, n - 100 - 10);
	got = trawl_ctf_metadata_read(path, &len, err, sizeof(err));
	ok(!got && errno == EINVAL, "truncated content -> error");
	char want[8192];
	snprintf(want, sizeof(want), "truncated packet at byte %zu", last);
	ok(strstr(err, want) && strstr(err, path), "message names the file and offset: %s", err);

	path = write_tmp("packets", buf, last + 20);
	got = trawl_ctf_metadata_read(path, &len, err, sizeof(err));
	snprintf(want, sizeof(want), "truncated packet header at byte %zu", last);
	ok(!got && strstr(err, want), "truncated header -> error with offset: %s", err);

	n = packetize(buf, text, tlen, false, 1000, 0);
	buf[1037 + 5] ^= 1;	/* second packet's uuid */
	got = trawl_ctf_metadata_read(write_tmp("packets", buf, n), &len, err, sizeof(err));
	ok(!got && strstr(err, "byte 1037") && strstr(err, "UUID"), "uuid mismatch: %s", err);
	buf[1037 + 5] ^= 1;
	buf[1037] = 0;		/* second packet's magic */
	got = trawl_ctf_metadata_read(write_tmp("packets", buf, n), &len, err, sizeof(err));
	ok(!got && strstr(err, "bad packet magic") && strstr(err, "byte 1037"), "bad magic: %s", err);
	buf[1037] = 0x57;
	buf[32] = 1;		/* compressed */
	got = trawl_ctf_metadata_read(write_tmp("packets", buf, n), &len, err, sizeof(err));
	ok(!got && errno == ENOTSUP, "compressed packet -> ENOTSUP: %s", err);
	buf[32] = 0;
	put32(buf + 24, 36 * 8, false);	/* content smaller than the header */
	got = trawl_ctf_metadata_read(write_tmp("packets", buf, n), &len, err, sizeof(err));
	ok(!got && strstr(err, "bad sizes") && strstr(err, "byte 0"), "content < header: %s", err);
	put32(buf + 24, 1037 * 8, false);
	put32(buf + 28, 1000 * 8, false);	/* packet smaller than its content */
	got = trawl_ctf_metadata_read(write_tmp("packets", buf, n), &len, err, sizeof(err));
	ok(!got && strstr(err, "bad sizes"), "packet < content: %s", err);
	put32(buf + 28, 1037 * 8 + 3, false);	/* not whole bytes */
	got = trawl_ctf_metadata_read(write_tmp("packets", buf, n), &len, err, sizeof(err));
	ok(!got && strstr(err, "bad sizes"), "packet size not in bytes: %s", err);

	/* The in-memory form, as the fuzz target uses it. */
	n = packetize(buf, text, tlen, true, 77, 3);
	got = tr_ctf_metadata_unpack(buf, n, NULL, &len, err, sizeof(err));
	ok(got && len == tlen && !memcmp(got, text, tlen), "unpack from memory (40 packets)");
	free(got);

	/* Text files and plain errors. */
	got = trawl_ctf_metadata_read(write_tmp("plain", "not metadata at all", 19), &len, err, sizeof(err));
	ok(!got && errno == EINVAL && strstr(err, "not CTF 1.8 metadata"), "not metadata: %s", err);
	got = trawl_ctf_metadata_read(write_tmp("empty", "", 0), &len, err, sizeof(err));
	ok(!got && strstr(err, "empty"), "empty file: %s", err);
	snprintf(want, sizeof(want), "%s/does-not-exist", tmpdir);
	got = trawl_ctf_metadata_read(want, &len, err, sizeof(err));
	ok(!got && errno == ENOENT && strstr(err, "does-not-exist"), "missing file -> ENOENT: %s", err);
	got = trawl_ctf_metadata_read(write_tmp("magic", "\x57\x1d\xd1\x75", 4), &len, err, sizeof(err));
	ok(!got && strstr(err, "truncated packet header at byte 0"), "magic alone: %s", err);
	free(buf);
	free(text);
}

/* ------------------------------------------------------ parser details */

#define HDR "/* CTF 1.8 */\n" \
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n" \
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n" \
	"trace { major = 1; minor = 8; byte_order = le; };\n"
/* HDR is 4 lines: a snippet after it starts on line 5. */

static void test_details(void)
{
	struct trawl_ctf_trace *t;

	/* native resolved at the end; trace after the types; clock after map */
	t = parse("typealias integer { size = 16; byte_order = native; map = clock.c1.value; } := u16;\n"
		  "typealias floating_point { exp_dig = 8; mant_dig = 24; } := f32;\n"
		  "typealias integer { size = 3; signed = true; byte_order = network; } := s3;\n"
		  "typealias integer { size = 12; align = 32; byte_order = little_endian; base = x; } := u12;\n"
		  "clock { name = c0; }; clock { name = \"c1\"; freq = 0x3B9ACA00; offset_s = -12; offset = 077; absolute = TRUE; };\n"
		  "trace { byte_order = be; unknown_key = { 1, 2 }; other := struct { }; };\n"
		  "stream { event.header := struct { u16 a; f32 b; s3 c; u12 d; }; };\n"
		  "event { name = e; fields := struct { }; };\n");
	ok(t != NULL, "types before the trace block");
	if (t) {
		const struct trawl_ctf_type *h = t->streams[0]->event_header;
		const struct trawl_ctf_type *a = ftype(h, "a");
		ok(a && a->u.i.byte_order == TRAWL_CTF_BE && a->align == 8, "native -> be (declared later)");
		is_int(a ? a->u.i.clock : -2, 1, "map to the second clock, by name");
		const struct trawl_ctf_type *b = ftype(h, "b");
		ok(b && b->u.f.byte_order == TRAWL_CTF_BE && b->align == 8, "float: native -> be, align 8");
		const struct trawl_ctf_type *c = ftype(h, "c");
		ok(is_uint(c, 3, 1, true) && c->u.i.byte_order == TRAWL_CTF_BE, "3-bit: align 1, network = be");
		const struct trawl_ctf_type *d = ftype(h, "d");
		ok(is_uint(d, 12, 32, false) && d->u.i.byte_order == TRAWL_CTF_LE && d->u.i.base == 16,
		   "explicit align 32, little_endian, base x");
		is_int(h->align, 32, "struct align = largest field's");
		is_int(t->clocks[1].freq, 1000000000, "hex freq");
		is_int(t->clocks[1].offset_s, -12, "negative offset_s");
		is_int(t->clocks[1].offset, 077, "octal offset");
		ok(t->clocks[1].absolute && !t->clocks[0].absolute, "absolute = TRUE");
		is_int(t->clocks[0].freq, 1000000000, "default freq 1 GHz");
		ok(t->nstreams == 1 && t->streams[0]->id == 0 && t->streams[0]->nevents == 1,
		   "stream without id is 0, event without stream_id goes there");
		ok(t->streams[0]->events[0]->fields && t->streams[0]->events[0]->fields->u.s.n == 0,
		   "empty fields struct");
		trawl_ctf_trace_free(t);
	}

	/* enums: auto values, ranges, quoted labels, default int, named reuse */
	t = parse(HDR
		  "typealias integer { size = 32; align = 32; signed = true; } := int;\n"
		  "enum color { RED, GREEN = 5, \"light blue\", WIDE = -2 ... 2, NEXT, };\n"
		  "enum small : uint8_t { A = 0xff };\n"
		  "stream { id = 3; event.header := struct { enum color c; enum small s; }; };\n"
		  "event { name = \"x\"; stream_id = 3; id = 7; loglevel = -1; model.emf.uri = \"http://x/\\\"q\\\"\"; };\n");
	ok(t != NULL, "enums");
	if (t) {
		const struct trawl_ctf_type *c = ftype(t->streams[0]->event_header, "c");
		ok(c && c->kind == TRAWL_CTF_ENUM && c->u.e.n == 5 && c->align == 32 &&
		   is_uint(c->u.e.container, 32, 32, true), "enum without container uses int");
		if (c && c->u.e.n == 5) {
			ok(c->u.e.ranges[0].lo == 0 && c->u.e.ranges[1].lo == 5 && c->u.e.ranges[2].lo == 6,
			   "0, 5, then 6");
			is_str(c->u.e.ranges[2].label, "light blue", "quoted label");
			ok((int64_t)c->u.e.ranges[3].lo == -2 && c->u.e.ranges[3].hi == 2, "-2 ... 2");
			ok(c->u.e.ranges[4].lo == 3 && c->u.e.ranges[4].hi == 3, "after a range: end + 1");
		}
		const struct trawl_ctf_type *s = ftype(t->streams[0]->event_header, "s");
		ok(s && s->u.e.ranges[0].lo == 255, "uint8_t enum: 0xff");
		const struct trawl_ctf_event_class *e = t->streams[0]->events[0];
		ok(e->id == 7 && e->stream_id == 3 && e->loglevel == -1, "event id, stream_id, loglevel -1");
		is_str(e->model_emf_uri, "http://x/\"q\"", "string escapes");
		trawl_ctf_trace_free(t);
	}

	/* structs, variants, arrays, sequences, typedef, scopes */
	t = parse(HDR
		  "typealias integer { size = 64; align = 64; signed = false; } := unsigned long long;\n"
		  "struct pair { uint32_t a; uint8_t b; } align(64);\n"
		  "variant opt { uint32_t x; string y; struct pair z; };\n"
		  "typedef uint8_t row[3];\n"
		  "callsite { name = \"x\"; func = \"f\"; ip = 0x1; nested { a = 1; }; };\n"
		  "stream {\n"
		  "  event.header := struct { enum : uint8_t { x, y, z } tag; uint32_t n; };\n"
		  "  event.context := struct {\n"
		  "    typealias integer { size = 16; } := uint32_t; /* hides the outer one */\n"
		  "    uint32_t narrow;\n"
		  "    struct pair p1, p2[2];\n"
		  "    variant opt <stream.event.header.tag> v;\n"
		  "    variant <tag2> { uint8_t x; unsigned long long y; } w;\n"
		  "    uint8_t m[2][3];\n"
		  "    row r[4];\n"
		  "    string { encoding = ASCII; } s[stream.event.header.n];\n"
		  "    struct { uint8_t q; } align(16) inner;\n"
		  "  };\n"
		  "};\n"
		  "event { name = \"e\"; fields := struct { uint32_t wide; }; };\n");
	ok(t != NULL, "structs, variants, arrays");
	if (t) {
		const struct trawl_ctf_type *ctx = t->streams[0]->event_context;
		ok(is_uint(ftype(ctx, "narrow"), 16, 8, false), "typealias in a struct hides the outer");
		ok(is_uint(ftype(t->streams[0]->events[0]->fields, "wide"), 32, 8, false),
		   "outer typealias visible again after the struct");
		const struct trawl_ctf_type *p1 = ftype(ctx, "p1");
		ok(p1 && p1->kind == TRAWL_CTF_STRUCT && p1->align == 64 && p1->u.s.n == 2,
		   "struct pair align(64)");
		const struct trawl_ctf_type *p2 = ftype(ctx, "p2");
		ok(p2 && p2->kind == TRAWL_CTF_ARRAY && p2->u.a.length == 2 && p2->u.a.elem == p1 &&
		   p2->align == 64, "p2: pair[2], same struct");
		const struct trawl_ctf_type *v = ftype(ctx, "v");
		ok(v && v->kind == TRAWL_CTF_VARIANT && v->u.v.n == 3 &&
		   !strcmp(v->u.v.tag, "stream.event.header.tag"), "named variant, tag given at use");
		const struct trawl_ctf_type *w = ftype(ctx, "w");
		ok(w && !strcmp(w->u.v.tag, "tag2") && is_uint(ftype(w, "y"), 64, 64, false),
		   "anonymous variant; 'unsigned long long' alias");
		is_int(w ? w->align : 0, 1, "variant align 1");
		const struct trawl_ctf_type *m = ftype(ctx, "m");
		ok(m && m->kind == TRAWL_CTF_ARRAY && m->u.a.length == 2 &&
		   m->u.a.elem->kind == TRAWL_CTF_ARRAY && m->u.a.elem->u.a.length == 3 &&
		   is_uint(m->u.a.elem->u.a.elem, 8, 8, false), "m[2][3]: 2 arrays of 3");
		const struct trawl_ctf_type *r = ftype(ctx, "r");
		ok(r && r->u.a.length == 4 && r->u.a.elem->kind == TRAWL_CTF_ARRAY &&
		   r->u.a.elem->u.a.length == 3, "typedef row[3]; row r[4]: 4 rows of 3");
		const struct trawl_ctf_type *s = ftype(ctx, "s");
		ok(s && s->kind == TRAWL_CTF_SEQUENCE && !strcmp(s->u.q.length, "stream.event.header.n") &&
		   s->u.q.elem->kind == TRAWL_CTF_STRING && s->u.q.elem->u.str.encoding == TRAWL_CTF_ENC_ASCII &&
		   s->align == 8, "sequence of ASCII strings, dotted length");
		const struct trawl_ctf_type *in = ftype(ctx, "inner");
		ok(in && in->align == 16, "anonymous struct align(16)");
		is_int(ctx->align, 64, "context align = 64 (pairs), variants not counted");
		is_int(ctx->u.s.n, 9, "9 context fields");
		trawl_ctf_trace_free(t);
	}

	/* literals */
	t = parse(HDR "env { a = 0; b = -9223372036854775808; c = 18UL; d = 0x7fffffffffffffff;\n"
		  " e = \"tab\\there\\x41\\101\\u00e9\"; f = ident; g.h = 'A'; a = 5; };\n");
	ok(t != NULL, "env literals");
	if (t) {
		const struct trawl_ctf_env *e = trawl_ctf_trace_env(t, "b");
		ok(e && e->is_int && e->ival == INT64_MIN, "INT64_MIN");
		e = trawl_ctf_trace_env(t, "c");
		ok(e && e->ival == 18, "suffix UL");
		e = trawl_ctf_trace_env(t, "d");
		ok(e && e->ival == INT64_MAX, "hex INT64_MAX");
		e = trawl_ctf_trace_env(t, "e");
		is_str(e ? e->sval : NULL, "tab\there" "AA\xc3\xa9", "escapes \\t \\x41 \\101 \\u00e9");
		e = trawl_ctf_trace_env(t, "f");
		is_str(e ? e->sval : NULL, "ident", "identifier value");
		e = trawl_ctf_trace_env(t, "g.h");
		ok(e && e->is_int && e->ival == 'A', "dotted key, character constant");
		e = trawl_ctf_trace_env(t, "a");
		ok(e && e->ival == 5, "a repeated key: the later value wins");
		is_int(t->nenv, 7, "7 keys");
		is_int(t->nstreams, 0, "no stream, no event: no stream class");
		trawl_ctf_trace_free(t);
	}

	/* events without a stream block get an implicit stream 0 */
	t = parse(HDR "event { name = \"a\"; id = 1; }; event { name = \"b\"; id = 0; };\n");
	ok(t && t->nstreams == 1 && t->streams[0]->nevents == 2 &&
	   !strcmp(t->streams[0]->events[0]->name, "a"), "implicit stream 0, events in order");
	trawl_ctf_trace_free(t);
}

/* ------------------------------------------------------------- errors */

struct bad {
	const char *text;
	const char *want;	/* in the message */
};

static void test_errors(void)
{
	static const struct bad bad[] = {
		{ HDR "trace { byte_order = le; };", "line 5: a second trace block" },
		{ "trace {\n major = 1;\n byte_order = middle;\n};", "line 3: the trace's byte_order must be be or le" },
		{ "trace {\n byte_order = native;\n};", "line 2: the trace's byte_order must be be or le" },
		{ HDR "typealias integer { size = 8; byte_order = middle; } := x;", "line 5: byte_order must be native, network, be or le" },
		{ HDR "\ntypealias integer { align = 8; } := x;", "line 6: integer without a size" },
		{ HDR "typealias integer { size = 65; } := x;", "line 5: integer size must be 1..64" },
		{ HDR "typealias integer { size = 8; align = 3; } := x;", "line 5: align must be a power of two" },
		{ HDR "typealias integer { size = 8; sined = true; } := x;", "line 5: unknown integer attribute 'sined'" },
		{ HDR "typealias integer { size = 8; base = 7; } := x;", "line 5: base must be" },
		{ HDR "typealias integer { size = 8; encoding = EBCDIC; } := x;", "line 5: encoding must be" },
		{ HDR "typealias integer { size = 8; signed = maybe; } := x;", "line 5: signed must be true or false" },
		{ HDR "typealias integer { size = 8; map = clock.x; } := x;", "line 5: map must be clock.NAME.value" },
		{ HDR "typealias floating_point { exp_dig = 8; } := x;", "line 5: floating_point needs" },
		{ HDR "stream {\n event.header := struct {\n  foo_t a;\n };\n};", "line 7: unknown type 'foo_t'" },
		{ HDR "typealias integer { size = 8; map = clock.nope.value; } := x;\n", "line 5: unknown clock 'nope'" },
		{ HDR "struct s {\n uint8_t a;\n uint32_t a;\n};", "line 7: field 'a' declared twice" },
		{ HDR "struct s {\n uint8_t a\n};", "line 7: expected ';' or ',' after a field, found '}'" },
		{ HDR "/* open\n\n comment", "line 5: unterminated comment" },
		{ HDR "env { a = \"open\n\"; };", "line 5: newline in string literal" },
		{ HDR "env { a = \"\\q\"; };", "line 5: bad escape sequence" },
		{ HDR "env { a = 99999999999999999999; };", "line 5: integer constant too large" },
		{ HDR "env { a = 09; };", "line 5: bad digit '9'" },
		{ HDR "env { a = 12ab; };", "line 5: bad integer constant" },
		{ HDR "env {\n a = @;\n};", "line 6: unexpected character '@'" },
		{ "/* CTF 1.8 */ typealias integer { size = 8; } := u8;", "line 1: no trace block" },
		{ HDR "\nevent {\n name = \"e\";\n stream_id = 4;\n};", "line 6: event 'e': no stream with id 4" },
		{ HDR "stream { id = 0; };\nevent { name = \"a\"; };\nevent { name = \"b\"; };",
		  "line 7: event 'b': id 0 already used in stream 0" },
		{ HDR "stream { id = 0; };\nstream { };", "line 6: stream without an id (there are 2 streams)" },
		{ HDR "stream { id = 1; };\nstream { id = 1; };", "line 6: stream id 1 declared twice" },
		{ HDR "event { id = 1; };", "line 5: event without a name" },
		{ HDR "clock { freq = 1; };", "line 5: clock without a name" },
		{ HDR "clock { name = a; };\nclock { name = a; };", "line 6: clock 'a' declared twice" },
		{ HDR "clock { name = a; freq = 0; };", "line 5: freq must not be 0" },
		{ HDR "clock { name = a; uuid = \"1234\"; };", "line 5: clock uuid must be" },
		{ HDR "enum e : uint8_t { A = 256 };", "line 5: enumerator value 256 does not fit an unsigned 8-bit" },
		{ HDR "enum e : uint8_t { A = -1 };", "line 5: enumerator value -1 does not fit" },
		{ HDR "enum e : uint8_t { A = 255, B };", "line 5: enumerator 'B': value out of the container's range" },
		{ HDR "enum e : uint8_t { A = 5 ... 4 };", "line 5: enumerator 'A': range end below its start" },
		{ HDR "enum e : uint8_t { };", "line 5: enum without enumerators" },
		{ HDR "enum e { A };", "line 5: enum without a container type" },
		{ HDR "typealias floating_point { exp_dig = 8; mant_dig = 24; } := f;\nenum e : f { A };",
		  "line 6: an enum's container must be an integer" },
		{ HDR "variant v { uint8_t a; };\nstruct s { variant v x; };", "line 6: variant 'x' has no tag" },
		{ HDR "variant v <t> { };", "line 5: variant without options" },
		{ HDR "typealias uint8_t := byte;\ntypealias uint32_t := byte;", "line 6: type 'byte' declared twice" },
		{ HDR "struct s { uint8_t a : 3; };", "line 5: bit-field 'a': not supported" },
		{ HDR "struct s { uint8_t a[4294967296]; };", "line 5: array length 4294967296 too large" },
		{ HDR "struct s { uint8_t a[]; };", "line 5: expected an array length or a length field, found ']'" },
		{ HDR "stream { event.header := uint32_t; };", "line 5: stream.event.header must be a struct" },
		{ HDR "event { name = \"e\"; fields = 3; };", "line 5: 'fields' takes ':= type'" },
		{ HDR "struct nope x;", "line 5: unknown struct 'nope'" },
		{ HDR "trace2 = 3;", "line 5: expected a declaration, found 'trace2'" },
		{ "trace { major = 2; byte_order = le; };", "line 1: unsupported CTF major version 2" },
		{ "trace { uuid = \"zz\"; byte_order = le; };", "line 1: trace uuid must be" },
		{ HDR "callsite { a = 1; ", "line 5: expected '}', found end of text" },
		{ HDR "env { a = 1 }", "line 5: expected ';', found '}'" },
		{ "trace { };", "line 1: the trace block has no byte_order" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = 0;
		errno = 0;
		struct trawl_ctf_trace *t = trawl_ctf_metadata_parse(bad[i].text, strlen(bad[i].text),
								     err, sizeof(err));
		ok(!t && errno == EINVAL && strstr(err, bad[i].want), "error %zu: %s", i, err);
		if (t || !strstr(err, bad[i].want))
			printf("#   want \"%s\"\n", bad[i].want);
		trawl_ctf_trace_free(t);
	}
	const char nul[] = HDR "env { a = 1; }; \0 env { b = 2; };";
	ok(!trawl_ctf_metadata_parse(nul, sizeof(nul) - 1, err, sizeof(err)) &&
	   strstr(err, "unexpected byte 0x00"), "NUL byte: %s", err);
	ok(!trawl_ctf_metadata_parse(NULL, 0, err, sizeof(err)) && strstr(err, "no trace block"),
	   "empty text: %s", err);
}

/* ------------------------------------------------------------- hostile */

static char *repeat(const char *pre, const char *unit, size_t n, const char *post)
{
	size_t lp = strlen(pre), lu = strlen(unit), lq = strlen(post);
	char *s = malloc(lp + lu * n + lq + 1), *o = s;
	memcpy(o, pre, lp);
	o += lp;
	for (size_t i = 0; i < n; i++, o += lu)
		memcpy(o, unit, lu);
	memcpy(o, post, lq + 1);
	return s;
}

static uint64_t rng = 88172645463325252ull;

static void test_hostile(void)
{
	char *s = repeat(HDR "typealias ", "struct { ", 100000, "");
	struct trawl_ctf_trace *t = trawl_ctf_metadata_parse(s, strlen(s), err, sizeof(err));
	ok(!t && strstr(err, "line 5: nesting deeper than 64"), "100000 nested structs: %s", err);
	free(s);

	s = repeat(HDR "typealias ", "enum : ", 10000, "");
	t = trawl_ctf_metadata_parse(s, strlen(s), err, sizeof(err));
	ok(!t && strstr(err, "nesting deeper than 64"), "nested enum containers: %s", err);
	free(s);

	/* Depth through typedef chains (no parser recursion at all). */
	char *buf = malloc(1 << 16);
	size_t o = (size_t)sprintf(buf, HDR "typedef uint8_t a0[1];\n");
	for (int i = 1; i < 80; i++)
		o += (size_t)sprintf(buf + o, "typedef a%d a%d[1];\n", i - 1, i);
	t = trawl_ctf_metadata_parse(buf, o, err, sizeof(err));
	ok(!t && strstr(err, "line 68: types nested deeper than 64"), "typedef chain 80 deep: %s", err);

	/* Exponential size: each struct holds two of the previous one. */
	o = (size_t)sprintf(buf, HDR "typedef struct { } s0;\n");
	for (int i = 1; i < 64; i++)
		o += (size_t)sprintf(buf + o, "typedef struct { s%d a; s%d b; } s%d;\n", i - 1, i - 1, i);
	t = trawl_ctf_metadata_parse(buf, o, err, sizeof(err));
	ok(!t && strstr(err, "type too large"), "2^64 fields once expanded: %s", err);
	o = (size_t)sprintf(buf, HDR "struct s { struct { } e[4294967295]; };\n");
	t = trawl_ctf_metadata_parse(buf, o, err, sizeof(err));
	ok(!t && strstr(err, "line 5: type too large"), "4G empty structs: %s", err);
	o = (size_t)sprintf(buf, HDR "struct s { uint8_t e[16777216]; };\n");
	t = trawl_ctf_metadata_parse(buf, o, err, sizeof(err));
	ok(t != NULL, "a 16 MiB byte array is fine");
	trawl_ctf_trace_free(t);
	free(buf);

	s = calloc(1, ((size_t)64 << 20) + 2);
	t = trawl_ctf_metadata_parse(s, ((size_t)64 << 20) + 1, err, sizeof(err));
	ok(!t && errno == E2BIG, "more than 64 MiB of text -> E2BIG: %s", err);
	free(s);

	/* Many declarations: hashed, so this is quick. */
	s = malloc(200000 * 80);
	o = (size_t)sprintf(s, HDR);
	for (int i = 0; i < 200000; i++)
		o += (size_t)sprintf(s + o, "typealias uint8_t := t%d; enum e%d : t%d { A };\n", i, i, i);
	o += (size_t)sprintf(s + o, "struct s { t199999 x; enum e5 y; };\n");
	t = trawl_ctf_metadata_parse(s, o, err, sizeof(err));
	ok(t != NULL, "200000 typealiases and enums: %s", t ? "ok" : err);
	trawl_ctf_trace_free(t);
	free(s);

	/* Every prefix and thousands of mutations of the example: no crash,
	 * and every failure says where. */
	size_t len;
	char *text = (char *)slurp(data_path("example.tsdl"), &len);
	if (!text) {
		ok(0, "example for mutations");
		return;
	}
	size_t nok = 0, nbad = 0;
	for (size_t i = 0; i < len; i++) {
		t = trawl_ctf_metadata_parse(text, i, err, sizeof(err));
		nok += t != NULL;
		nbad += !t && strncmp(err, "line ", 5) != 0;
		trawl_ctf_trace_free(t);
	}
	ok(nbad == 0, "every prefix: failures name a line (%zu bad)", nbad);
	ok(nok < len / 10, "few prefixes parse (%zu)", nok);
	char *m = malloc(len);
	static const char pool[] = "{}[]();:=<>.,*-+0123456789\"'/\\ \n_aZ\x80\xff";
	nok = nbad = 0;
	for (int i = 0; i < 3000; i++) {
		memcpy(m, text, len);
		int k = 1 + (int)(tap_xorshift(&rng) % 4);
		for (int j = 0; j < k; j++) {
			size_t at = tap_xorshift(&rng) % len;
			if (tap_xorshift(&rng) & 1)
				m[at] = pool[tap_xorshift(&rng) % (sizeof(pool) - 1)];
			else
				memmove(m + at, m + at + 1, len - at - 1);
		}
		t = trawl_ctf_metadata_parse(m, len, err, sizeof(err));
		nok += t != NULL;
		nbad += !t && strncmp(err, "line ", 5) != 0;
		trawl_ctf_trace_free(t);
	}
	ok(nbad == 0, "3000 mutations: every failure names a line (%zu bad, %zu parsed)", nbad, nok);
	free(m);
	free(text);
}

/* The printer writes what the parser reads: print(parse(print(x))) == print(x). */
static void test_roundtrip(void)
{
	const char *files[] = { "example.tsdl", "lttng-ust-2.13.metadata" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		size_t len, l1 = 0, l2 = 0;
		char *text = trawl_ctf_metadata_read(data_path(files[i]), &len, err, sizeof(err));
		struct trawl_ctf_trace *t = text ? trawl_ctf_metadata_parse(text, len, err, sizeof(err)) : NULL;
		char *p1 = NULL, *p2 = NULL;
		FILE *f = open_memstream(&p1, &l1);
		if (t)
			trawl_ctf_metadata_print(t, f);
		fclose(f);
		struct trawl_ctf_trace *t2 = trawl_ctf_metadata_parse(p1, l1, err, sizeof(err));
		f = open_memstream(&p2, &l2);
		if (t2)
			trawl_ctf_metadata_print(t2, f);
		fclose(f);
		ok(t && t2 && l1 > 100 && l1 == l2 && !memcmp(p1, p2, l1),
		   "%s: parse -> print -> parse -> print is stable", files[i]);
		trawl_ctf_trace_free(t);
		trawl_ctf_trace_free(t2);
		free(p1);
		free(p2);
		free(text);
	}
}

int main(void)
{
	find_dirs();
	test_example();
	test_lttng();
	test_packetized();
	test_details();
	test_errors();
	test_hostile();
	test_roundtrip();
	char cmd[8300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
