/* SPDX-License-Identifier: MIT */
/*
 * test-export-exec: in an export, a thread that calls exec is its new name
 * from the exec on (issue 27.7). Two traces of host h1, written here with
 * LTTng's names (times in ns after T0):
 *
 *   kernel (CPU 0, the tid context)       ust (vpid, vtid)
 *   1000  sched_switch swapper/0 -> work.sh (501)
 *                                          2000  a:tick (501, 501)
 *                                          2100  a:req_begin, 2200 a:req_end
 *   3000  sched_process_exec 501 /usr/bin/curl
 *   3500  sched_process_exec 601 /opt/a-very-long-program-name
 *                                          4000  a:tick (501, 501)
 *                                          4500  a:tick (601, 601)
 *   6000  sched_switch curl (501) -> swapper/0
 *
 * perfetto (the file decoded here, field by field): thread 501's track
 * described as work.sh at 2000 and again, the same uuid, as curl at 3000
 * (its process's too); the tick at 4000 on that track; 601, first seen
 * after its exec, described with the kernel's comm (15 bytes of the base
 * name); the ProcessTree's names are curl. chrome-json: 501's thread and
 * process names work.sh then curl, the second before the tick at 4000;
 * CPU 0's slices work.sh [1000, 3000) and curl [3000, 6000).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/export.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-export-exec-XXXXXX";
#define T0 1000000000ull
#define BASE (1700000000ll * 1000000000ll + (long long)T0)

static int ev(struct trawl_ctf_wstream *s, struct trawl_ctf_event_class *ec, uint64_t t,
	      const char *fmt, ...)
{
	uint8_t buf[256];
	struct trawl_ctf_buf b;
	va_list ap;

	trawl_ctf_buf_init(&b, buf, sizeof(buf));
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++)
		switch (*f) {
		case 'i': trawl_ctf_buf_u32(&b, (uint32_t)va_arg(ap, int)); break;
		case 'l': trawl_ctf_buf_u64(&b, (uint64_t)va_arg(ap, long long)); break;
		case 's': trawl_ctf_buf_str(&b, va_arg(ap, const char *)); break;
		}
	va_end(ap);
	return trawl_ctf_wstream_event(s, ec, T0 + t, buf, b.len);
}

static int write_kernel(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "h1", .domain = "kernel",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w), *sw = trawl_ctf_type_struct(w),
			      *ex = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_comm", str);
	trawl_ctf_struct_add(w, sw, "prev_tid", s32);
	trawl_ctf_struct_add(w, sw, "prev_prio", s32);
	trawl_ctf_struct_add(w, sw, "prev_state", s64);
	trawl_ctf_struct_add(w, sw, "next_comm", str);
	trawl_ctf_struct_add(w, sw, "next_tid", s32);
	trawl_ctf_struct_add(w, sw, "next_prio", s32);
	trawl_ctf_struct_add(w, ex, "filename", str);
	trawl_ctf_struct_add(w, ex, "tid", s32);
	trawl_ctf_struct_add(w, ex, "old_tid", s32);
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, ctx);
	struct trawl_ctf_event_class
		*csw = trawl_ctf_writer_event_class(w, sc, "sched_switch", INT64_MIN, sw),
		*cex = trawl_ctf_writer_event_class(w, sc, "sched_process_exec", INT64_MIN, ex);
	struct trawl_ctf_wstream *c0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	int r = !c0 || !csw || !cex;
	r = r ?: ev(c0, csw, 1000, "i" "siil" "sii", 0, "swapper/0", 0, 20, 0ll, "work.sh", 501, 20);
	r = r ?: ev(c0, cex, 3000, "i" "sii", 501, "/usr/bin/curl", 501, 501);
	r = r ?: ev(c0, cex, 3500, "i" "sii", 601, "/opt/a-very-long-program-name", 601, 601);
	r = r ?: ev(c0, csw, 6000, "i" "siil" "sii", 501, "curl", 501, 20, 1ll, "swapper/0", 0, 20);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

static int write_ust(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "h1", .domain = "ust",
		.clock_offset_s = 1700000000,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "vpid", s32);
	trawl_ctf_struct_add(w, ctx, "vtid", s32);
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, ctx);
	struct trawl_ctf_event_class *tick = trawl_ctf_writer_event_class(w, sc, "a:tick", 0, NULL),
				     *beg = trawl_ctf_writer_event_class(w, sc, "a:req_begin", 0, NULL),
				     *end = trawl_ctf_writer_event_class(w, sc, "a:req_end", 0, NULL);
	struct trawl_ctf_wstream *s = trawl_ctf_writer_stream(w, sc, "chan", 0);
	int r = !s || !tick || !beg || !end;
	r = r ?: ev(s, tick, 2000, "ii", 501, 501);
	r = r ?: ev(s, beg, 2100, "ii", 501, 501);
	r = r ?: ev(s, end, 2200, "ii", 501, 501);
	r = r ?: ev(s, tick, 4000, "ii", 501, 501);
	r = r ?: ev(s, tick, 4500, "ii", 601, 601);
	r = r ?: trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return r;
}

static int run_export(const char *format, const char *out, char *err, size_t errlen)
{
	char k[600], u[600];
	snprintf(k, sizeof(k), "%s/kernel", root);
	snprintf(u, sizeof(u), "%s/ust", root);
	const char *p[] = { k, u };
	struct trawl_reader *r = trawl_reader_new(p, 2, NULL, err, errlen);
	struct trawl_export_opts o = { .sz = sizeof(o), .format = format, .path = out };
	struct trawl_export *x = r ? trawl_export_new(&o, err, errlen) : NULL;
	int rc = -1;

	if (x) {
		struct trawl_sink s = trawl_export_sink(x);
		rc = trawl_pipe_run(r, &s, 1, NULL);
		if (rc)
			snprintf(err, errlen, "%s", trawl_export_error(x));
	}
	trawl_export_free(x);
	trawl_reader_free(r);
	return rc;
}

/* ------------------------------------------------- a protobuf reader */

struct pbr {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t varint(struct pbr *r)
{
	uint64_t v = 0;
	for (int s = 0; s < 64; s += 7) {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

/* The next field: its number, wire type, and value (a varint) or body. */
static bool field(struct pbr *r, uint32_t *num, uint64_t *v, struct pbr *body)
{
	if (r->bad || r->p >= r->end)
		return false;
	uint64_t key = varint(r);
	*num = (uint32_t)(key >> 3);
	switch (key & 7) {
	case 0:
		*v = varint(r);
		break;
	case 1:
		if (r->end - r->p < 8)
			r->bad = true;
		else
			r->p += 8;
		break;
	case 2:
		*v = varint(r);
		if ((uint64_t)(r->end - r->p) < *v) {
			r->bad = true;
			break;
		}
		body->p = r->p;
		body->end = r->p + *v;
		body->bad = false;
		r->p += *v;
		break;
	case 5:
		if (r->end - r->p < 4)
			r->bad = true;
		else
			r->p += 4;
		break;
	default:
		r->bad = true;
	}
	return !r->bad;
}

static void put(char *b, size_t n, const char *fmt, ...)
{
	size_t o = strlen(b);
	va_list ap;
	va_start(ap, fmt);
	if (o < n)
		vsnprintf(b + o, n - o, fmt, ap);
	va_end(ap);
}

struct decoded {
	char desc[1024];	/* "T|P ts pid/tid name uuid" of the thread and process tracks */
	char tree[512];		/* the ProcessTree: "p pid cmdline", "t tid name" */
	uint64_t tick4000;	/* the track of the event at 4000 */
	uint64_t u501, u501b;	/* thread 501's uuid, first and last described */
	bool bad;
};

static void str_of(const struct pbr *b, char *out, size_t n)
{
	size_t l = (size_t)(b->end - b->p);
	if (l >= n)
		l = n - 1;
	memcpy(out, b->p, l);
	out[l] = 0;
}

static void decode(const uint8_t *buf, size_t len, struct decoded *d)
{
	struct pbr tr = { buf, buf + len, false }, pk, x, y;
	uint32_t num;
	uint64_t v;

	memset(d, 0, sizeof(*d));
	while (field(&tr, &num, &v, &pk)) {
		if (num != 1)
			continue;
		int64_t ts = 0;
		struct pbr desc = { 0 }, te = { 0 }, tree = { 0 };
		while (field(&pk, &num, &v, &x)) {
			if (num == 8)
				ts = (int64_t)v - BASE;
			else if (num == 60)
				desc = x;
			else if (num == 11)
				te = x;
			else if (num == 2)
				tree = x;
		}
		d->bad |= pk.bad;
		if (desc.p) {
			uint64_t uuid = 0;
			char kind = 0, name[64] = "";
			int64_t pid = -1, tid = -1;
			while (field(&desc, &num, &v, &x)) {
				if (num == 1)
					uuid = v;
				if (num != 3 && num != 4)
					continue;
				kind = num == 3 ? 'P' : 'T';
				while (field(&x, &num, &v, &y)) {
					if (num == 1)
						pid = (int64_t)v;
					else if (num == 2 && kind == 'T')
						tid = (int64_t)v;
					else if ((num == 6 && kind == 'P') || (num == 5 && kind == 'T'))
						str_of(&y, name, sizeof(name));
				}
			}
			if (kind == 'T' && tid == 501) {
				if (!d->u501)
					d->u501 = uuid;
				d->u501b = uuid;
			}
			if (kind)
				put(d->desc, sizeof(d->desc), "%c %lld %lld/%lld %s|", kind, (long long)ts,
				    (long long)pid, (long long)tid, name);
		}
		if (te.p && ts == 4000)
			while (field(&te, &num, &v, &x))
				if (num == 11)
					d->tick4000 = v;
		if (tree.p)
			while (field(&tree, &num, &v, &x)) {
				char name[64] = "";
				int64_t id = -1;
				bool proc = num == 1;
				while (field(&x, &num, &v, &y)) {
					if (num == 1)
						id = (int64_t)v;
					else if ((proc && num == 3) || (!proc && num == 2))
						str_of(&y, name, sizeof(name));
				}
				put(d->tree, sizeof(d->tree), "%c %lld %s|", proc ? 'p' : 't',
				    (long long)id, name);
			}
	}
	d->bad |= tr.bad;
}

static void test_perfetto(void)
{
	char out[600], err[512] = "";
	snprintf(out, sizeof(out), "%s/t.pftrace", root);
	int rc = run_export("perfetto", out, err, sizeof(err));
	is_int(rc, 0, "perfetto: the run %s", err);
	size_t len;
	char *buf = (char *)slurp(out, &len);
	struct decoded d;
	decode((const uint8_t *)(buf ? buf : ""), buf ? len : 0, &d);
	ok(buf && !d.bad, "perfetto: the file decodes (%zu bytes)", len);
	is_str(d.desc,
	       "T 2000 501/501 work.sh|P 2100 501/-1 work.sh|T 3000 501/501 curl|"
	       "P 3000 501/-1 curl|T 4500 601/601 a-very-long-pro|",
	       "perfetto: 501's thread and process tracks work.sh, described again as curl "
	       "at the exec; 601 first seen after its exec: its new name (15 bytes)");
	ok(d.u501 && d.u501 == d.u501b, "perfetto: the same track (uuid %llu), renamed",
	   (unsigned long long)d.u501);
	is_int((long long)d.tick4000, (long long)d.u501,
	       "perfetto: the tick after the exec on that track (its latest name: curl)");
	is_str(d.tree, "p 501 curl|p 601 a-very-long-pro|t 501 curl|t 601 a-very-long-pro|",
	       "perfetto: the ProcessTree's names are the ones after exec (each exec'd "
	       "thread its process's main thread)");
	free(buf);
}

/* Where s is in buf, -1 when not. */
static long at(const char *buf, const char *s)
{
	const char *p = buf ? strstr(buf, s) : NULL;
	return p ? (long)(p - buf) : -1;
}

static void test_chrome(void)
{
	char out[600], err[512] = "";
	snprintf(out, sizeof(out), "%s/t.json", root);
	int rc = run_export("chrome-json", out, err, sizeof(err));
	is_int(rc, 0, "chrome-json: the run %s", err);
	size_t len;
	char *buf = (char *)slurp(out, &len);
	long tn_old = at(buf, "\"name\":\"thread_name\",\"pid\":10000501,\"tid\":501,"
			      "\"args\":{\"name\":\"work.sh\"}");
	long tn_new = at(buf, "\"name\":\"thread_name\",\"pid\":10000501,\"tid\":501,"
			      "\"args\":{\"name\":\"curl\"}");
	long pn_old = at(buf, "\"name\":\"process_name\",\"pid\":10000501,\"tid\":0,"
			      "\"args\":{\"name\":\"h1: work.sh\"}");
	long pn_new = at(buf, "\"name\":\"process_name\",\"pid\":10000501,\"tid\":0,"
			      "\"args\":{\"name\":\"h1: curl\"}");
	long tick = at(buf, "\"ts\":3.000,\"pid\":10000501,\"tid\":501,\"name\":\"a:tick\"");
	ok(tn_old >= 0 && tn_new > tn_old && tick > tn_new,
	   "chrome-json: 501's thread named work.sh, then curl before the tick after the exec "
	   "(%ld %ld %ld)", tn_old, tn_new, tick);
	ok(pn_old >= 0 && pn_new > pn_old && tick > pn_new,
	   "chrome-json: its process h1: work.sh, then h1: curl (%ld %ld)", pn_old, pn_new);
	ok(at(buf, "\"name\":\"thread_name\",\"pid\":10000601,\"tid\":601,"
		   "\"args\":{\"name\":\"a-very-long-pro\"}") >= 0,
	   "chrome-json: 601 named as after its exec");
	ok(at(buf, "\"ts\":0.000,\"pid\":19999999,\"tid\":0,\"name\":\"work.sh\",\"dur\":2.000") >= 0 &&
	   at(buf, "\"ts\":2.000,\"pid\":19999999,\"tid\":0,\"name\":\"curl\",\"dur\":3.000") >= 0,
	   "chrome-json: CPU 0 ran work.sh up to the exec, curl from it to the switch");
	free(buf);
}

int main(void)
{
	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/kernel", root);
	ok(write_kernel(dir) == 0, "a kernel trace with two execs");
	snprintf(dir, sizeof(dir), "%s/ust", root);
	ok(write_ust(dir) == 0, "a ust trace of the same host");
	test_perfetto();
	test_chrome();
	tap_rm_tree(root);
	return done_testing();
}
