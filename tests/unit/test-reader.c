/* SPDX-License-Identifier: MIT */
/*
 * The CTF reader: values of every type, bit-fields in both byte orders,
 * timestamp reconstruction, extended headers, the merge across streams and
 * traces, filters, corrupt inputs and statistics. Traces are written by hand
 * here (metadata text + bit-exact stream files) so the reader is checked
 * against the CTF 1.8 layout rules rather than against our own writer; a
 * last part reads back what the writer writes.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipe/pipe-internal.h"
#include "tap.h"
#include "reader-meta.h"
#include "ctf/packet.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[256];

/* ------------------------------------------------------------ bit writer */

/* CTF bit order: little-endian fields fill each byte from its LSB,
 * big-endian ones from its MSB; alignment is relative to the buffer start,
 * which is where each test packet starts (packets are multiples of 8 bytes). */
struct bw {
	uint8_t *b;
	size_t cap;
	uint64_t pos;	/* bits */
};

static void bw_init(struct bw *w, size_t cap)
{
	w->b = calloc(1, cap);
	w->cap = cap;
	w->pos = 0;
}

static void bw_align(struct bw *w, unsigned a)
{
	w->pos = (w->pos + a - 1) / a * a;
}

static void bw_put(struct bw *w, uint64_t v, unsigned size, bool be)
{
	for (unsigned k = 0; k < size; k++) {
		uint64_t p = w->pos + k;
		if (p / 8 >= w->cap)
			abort();
		if (!be) {
			if (v >> k & 1)
				w->b[p / 8] |= (uint8_t)(1u << (p % 8));
		} else {
			if (v >> (size - 1 - k) & 1)
				w->b[p / 8] |= (uint8_t)(0x80u >> (p % 8));
		}
	}
	w->pos += size;
}

static void bw_int(struct bw *w, uint64_t v, unsigned size, unsigned align)
{
	bw_align(w, align);
	bw_put(w, v, size, false);
}

static void bw_bytes(struct bw *w, const void *p, size_t n)
{
	bw_align(w, 8);
	for (size_t i = 0; i < n; i++)
		bw_put(w, ((const uint8_t *)p)[i], 8, false);
}

static void bw_set64(struct bw *w, uint64_t bitpos, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		w->b[bitpos / 8 + (unsigned)i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------- packets, events */

static const uint8_t UUID1[16] = { 0x0b, 0xad, 0xc0, 0xde, 0x12, 0x34, 0x43, 0x21,
				   0x88, 0x88, 0, 0, 0, 0, 0, 1 };

struct pk {
	uint64_t start, content_at, size_at;
};

static struct pk pkt_begin(struct bw *w, uint32_t magic, uint32_t sid, uint64_t tsb, uint64_t tse,
			   uint64_t disc, uint32_t cpu)
{
	struct pk p;
	bw_align(w, 64);
	p.start = w->pos;
	bw_int(w, magic, 32, 8);
	bw_bytes(w, UUID1, 16);
	bw_int(w, sid, 32, 8);
	bw_int(w, tsb, 64, 8);
	bw_int(w, tse, 64, 8);
	p.content_at = w->pos;
	bw_int(w, 0, 64, 8);
	p.size_at = w->pos;
	bw_int(w, 0, 64, 8);
	bw_int(w, disc, 64, 8);
	bw_int(w, cpu, 32, 8);
	return p;
}

/* Ends a packet: content ends here (or `content` bits from the start when
 * nonzero), padded to a multiple of 64 bytes plus `pad` bytes. */
static void pkt_end(struct bw *w, struct pk *p, uint64_t content, uint64_t pad)
{
	uint64_t c = content ? content : w->pos - p->start;
	bw_align(w, 512);
	w->pos += pad * 8;
	bw_set64(w, p->content_at, c);
	bw_set64(w, p->size_at, w->pos - p->start);
}

static void ev_compact(struct bw *w, uint32_t id, uint64_t ts, bool extended)
{
	bw_align(w, 8);
	if (!extended && id < 31) {
		bw_put(w, id, 5, false);
		bw_put(w, ts & ((1u << 27) - 1), 27, false);
	} else {
		bw_put(w, 31, 5, false);
		bw_int(w, id, 32, 8);
		bw_int(w, ts, 64, 8);
	}
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[512];
	mkdir(dir, 0777);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

static void write_bw(const char *dir, const char *name, struct bw *w)
{
	write_file(dir, name, w->b, (size_t)((w->pos + 7) / 8));
	free(w->b);
}

/* ------------------------------------------------------------- metadata */

static const char META_FMT[] =
	READER_META_HEAD
	"env { hostname = \"%s\"; domain = \"ust\"; };\n"
	"clock { name = \"mono\"; freq = %llu; offset_s = %lld; offset = %lld; absolute = true; };\n"
	READER_META_TYPES;

static void write_meta(const char *dir, const char *host, uint64_t freq, int64_t off_s, int64_t off)
{
	char buf[8192];
	int n = snprintf(buf, sizeof(buf), META_FMT, host, (unsigned long long)freq,
			 (long long)off_s, (long long)off);
	write_file(dir, "metadata", buf, (size_t)n);
}

static void ev_simple(struct bw *w, uint64_t ts, uint32_t a, int64_t b)
{
	ev_compact(w, 0, ts, false);
	bw_int(w, a, 32, 8);
	bw_int(w, (uint64_t)b, 64, 8);
}

static uint64_t f64bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

static void ev_types(struct bw *w, uint64_t ts, int tag)
{
	float f = 1.5f;
	uint32_t fb;
	memcpy(&fb, &f, 4);
	ev_compact(w, 1, ts, false);
	bw_align(w, 64);	/* the payload struct is aligned like its double */
	bw_int(w, 250, 8, 8);
	bw_int(w, (uint8_t)-100, 8, 8);
	bw_int(w, 65000, 16, 8);
	bw_int(w, (uint16_t)-30000, 16, 8);
	bw_int(w, 4000000000u, 32, 8);
	bw_int(w, (uint32_t)-2000000000, 32, 8);
	bw_int(w, UINT64_C(18000000000000000000), 64, 8);
	bw_int(w, (uint64_t)(INT64_MIN + 1), 64, 8);
	bw_put(w, 5, 3, false);			/* b3 */
	bw_put(w, (uint64_t)-37 & 0x7f, 7, false);	/* b7 */
	bw_put(w, 1, 1, false);			/* b1 */
	bw_put(w, UINT64_C(0x8123456789abcdef), 64, false);
	bw_put(w, (uint64_t)-9 & 0x1f, 5, false);	/* b5 */
	bw_align(w, 8);
	bw_put(w, 0x1abc, 13, true);
	bw_put(w, 6, 3, true);
	bw_put(w, (uint64_t)-200 & 0x1ff, 9, true);
	bw_put(w, UINT64_C(0x5a5a5a5a5a), 39, true);
	bw_int(w, fb, 32, 8);
	bw_int(w, f64bits(-2.25e100), 64, 64);
	bw_align(w, 8);
	bw_put(w, f64bits(3.0625), 64, true);
	bw_int(w, 3, 8, 8);			/* e: SOME */
	bw_bytes(w, "hello", 6);
	bw_bytes(w, "comm\0\0\0\0", 8);
	bw_int(w, 3, 16, 8);			/* n */
	bw_int(w, 11, 16, 8);
	bw_int(w, 22, 16, 8);
	bw_int(w, 33, 16, 8);
	bw_int(w, 7, 8, 8);			/* arr[0] */
	bw_int(w, (uint16_t)-7, 16, 8);
	bw_int(w, 8, 8, 8);			/* arr[1] */
	bw_int(w, 8000, 16, 8);
	bw_int(w, (uint64_t)tag, 8, 8);
	if (tag == 0)
		bw_int(w, (uint32_t)-123456, 32, 8);
	else
		bw_bytes(w, "variant!", 9);
	bw_int(w, 99, 8, 8);			/* nest.x */
	bw_int(w, 123456789, 32, 8);		/* nest.inner.y */
	bw_align(w, 8);
	bw_put(w, 0xdeadbeef, 32, true);	/* be32 */
	bw_int(w, 0xaa, 8, 8);			/* seq2 (cpu_id = 2) */
	bw_int(w, 0xbb, 8, 8);
	bw_int(w, 1, 8, 8);			/* seq3 (n = 3) */
	bw_int(w, 2, 8, 8);
	bw_int(w, 3, 8, 8);
}

static struct trawl_reader *open1(const char *path, const struct trawl_reader_opts *o,
				  char *err, size_t errlen)
{
	const char *paths[] = { path };
	return trawl_reader_new(paths, 1, o, err, errlen);
}

/* ------------------------------------------------------------ the tests */

#define BASE_NS INT64_C(1000000000000)	/* offset_s = 1000 */

static void test_types(void)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/types", root);
	write_meta(dir, "hostA", 1000000000, 1000, 0);

	struct bw w;
	bw_init(&w, 1 << 16);
	struct pk p = pkt_begin(&w, 0xC1FC1FC1, 0, 100, 500, 0, 2);
	ev_types(&w, 110, 0);
	ev_simple(&w, 120, 42, -42);
	ev_types(&w, 130, 1);
	ev_compact(&w, 40, 140, false);		/* id 40 needs the extended form */
	bw_int(&w, 4040, 16, 8);
	ev_compact(&w, 0, 150, true);		/* extended although id fits */
	bw_int(&w, 1, 32, 8);
	bw_int(&w, 2, 64, 8);
	pkt_end(&w, &p, 0, 0);
	write_bw(dir, "chan_0", &w);

	/* stream class 1: generic header, event context, align 32 field */
	bw_init(&w, 1 << 12);
	p = pkt_begin(&w, 0xC1FC1FC1, 1, 100, 500, 0, 3);
	for (int i = 0; i < 3; i++) {
		bw_int(&w, 7, 16, 8);
		bw_int(&w, 115 + (uint64_t)i * 20, 64, 8);
		bw_int(&w, 777, 32, 8);	/* vtid */
		bw_int(&w, (uint32_t)(-5 - i), 32, 32);
		bw_bytes(&w, i == 1 ? "" : "gen-string", i == 1 ? 1 : 11);
	}
	pkt_end(&w, &p, 0, 0);
	write_bw(dir, "chan_1", &w);

	struct trawl_reader *r = open1(dir, NULL, err, sizeof(err));
	ok(r, "open types trace (%s)", err);
	if (!r)
		return;
	is_int(trawl_reader_ntraces(r), 1, "one trace");
	is_str(trawl_reader_trace_hostname(trawl_reader_trace_at(r, 0)), "hostA", "hostname");
	is_int(trawl_reader_trace_nstreams(trawl_reader_trace_at(r, 0)), 2, "two streams");

	const struct trawl_event *ev;
	const char *want[] = { "types", "gen", "simple", "types", "gen", "other", "simple", "gen" };
	const int64_t want_ts[] = { 110, 115, 120, 130, 135, 140, 150, 155 };
	int n = 0, rc;
	while ((rc = trawl_reader_next(r, &ev)) == 1) {
		if (n < 8) {
			is_str(ev->cls->name, want[n], "event %d is %s", n, want[n]);
			is_int(ev->ts, BASE_NS + want_ts[n], "event %d ts", n);
			is_int(ev->cycles, want_ts[n], "event %d cycles", n);
		}
		const union trawl_ctf_value *v = ev->values;
		if (strcmp(ev->cls->name, "types") == 0) {
			int tag = n == 0 ? 0 : 1;
			is_int(ev->cpu, 2, "cpu from packet context");
			is_int(ev->nvalues, 46, "types: 46 values");
			is_int(v[0].u, 250, "u8");
			is_int(v[1].i, -100, "s8");
			is_int(v[2].u, 65000, "u16");
			is_int(v[3].i, -30000, "s16");
			is_int(v[4].u, 4000000000u, "u32");
			is_int(v[5].i, -2000000000, "s32");
			ok(v[6].u == UINT64_C(18000000000000000000), "u64");
			ok(v[7].i == INT64_MIN + 1, "s64");
			is_int(v[8].u, 5, "3-bit bit-field");
			is_int(v[9].i, -37, "7-bit signed bit-field");
			is_int(v[10].u, 1, "1-bit bit-field");
			ok(v[11].u == UINT64_C(0x8123456789abcdef), "64-bit field at bit offset 3 (%#llx)",
			   (unsigned long long)v[11].u);
			is_int(v[12].i, -9, "5-bit signed bit-field");
			is_int(v[13].u, 0x1abc, "13-bit big-endian bit-field");
			is_int(v[14].u, 6, "3-bit big-endian bit-field");
			is_int(v[15].i, -200, "9-bit signed big-endian bit-field");
			ok(v[16].u == UINT64_C(0x5a5a5a5a5a), "39-bit big-endian bit-field");
			ok(v[17].d == 1.5, "float");
			ok(v[18].d == -2.25e100, "double aligned on 64 bits");
			ok(v[19].d == 3.0625, "big-endian double");
			is_int(v[20].u, 3, "enum value");
			ok(v[21].s.len == 5 && memcmp(v[21].s.p, "hello", 5) == 0, "string");
			ok(v[22].s.len == 4 && memcmp(v[22].s.p, "comm", 4) == 0, "char array as text");
			is_int(v[23].u, 3, "sequence length field");
			is_int(v[24].n, 3, "sequence count");
			ok(v[25].u == 11 && v[26].u == 22 && v[27].u == 33, "sequence elements");
			is_int(v[28].n, 2, "array count");
			ok(v[29].u == 7 && v[30].i == -7 && v[31].u == 8 && v[32].i == 8000,
			   "array of structs");
			is_int(v[33].u, tag, "variant tag");
			is_int(v[34].n, tag, "variant option index");
			if (tag == 0)
				is_int(v[35].i, -123456, "variant int option");
			else
				ok(v[35].s.len == 8 && memcmp(v[35].s.p, "variant!", 8) == 0,
				   "variant string option");
			ok(v[36].u == 99 && v[37].u == 123456789, "nested structs");
			is_int(v[38].u, 0xdeadbeef, "big-endian u32");
			ok(v[39].n == 2 && v[40].u == 0xaa && v[41].u == 0xbb,
			   "sequence sized by stream.packet.context.cpu_id");
			ok(v[42].n == 3 && v[43].u == 1 && v[44].u == 2 && v[45].u == 3,
			   "sequence sized by event.fields._n");
		} else if (strcmp(ev->cls->name, "simple") == 0) {
			is_int(ev->nvalues, 2, "simple: 2 values");
			if (ev->ts == BASE_NS + 120)
				ok(v[0].u == 42 && v[1].i == -42, "simple values");
			else
				ok(v[0].u == 1 && v[1].i == 2, "simple values, extended header");
		} else if (strcmp(ev->cls->name, "other") == 0) {
			ok(ev->nvalues == 1 && v[0].u == 4040, "id 40 payload");
		} else if (strcmp(ev->cls->name, "gen") == 0) {
			is_int(ev->cpu, 3, "gen cpu");
			ok(ev->nvalues == 3 && v[0].u == 777, "event context before payload");
			int k = (int)((ev->cycles - 115) / 20);
			is_int(v[1].i, -5 - k, "align-32 signed field");
			is_str(k == 1 ? "" : "gen-string", v[2].s.p, "string %d", k);
		}
		n++;
	}
	is_int(rc, 0, "end without error (%s)", trawl_reader_error(r));
	is_int(n, 8, "8 events");
	trawl_reader_free(r);
}

/* Timestamps: 27-bit wraps, extended headers, a non-1-GHz clock. */
static void test_timestamps(void)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/wrap", root);
	/* 1 MHz clock: 1 cycle = 1000 ns; offset = 500 cycles */
	write_meta(dir, "hostW", 1000000, 1000, 500);
	const uint64_t M = UINT64_C(1) << 27;
	const uint64_t ts[] = { 5 * M - 10, 5 * M - 3, 5 * M + 2, 6 * M - 1, 6 * M + 100,
				7 * M + 5, 40 * M + 17, 40 * M + 20, 41 * M };
	const bool ext[] = { 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	struct bw w;
	bw_init(&w, 4096);
	struct pk p = pkt_begin(&w, 0xC1FC1FC1, 0, 5 * M - 20, 41 * M, 0, 0);
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		ev_compact(&w, 0, ts[i], ext[i]);
		bw_int(&w, (uint32_t)i, 32, 8);
		bw_int(&w, 0, 64, 8);
	}
	pkt_end(&w, &p, 0, 0);
	/* a second packet: timestamp_begin resets the reconstruction */
	p = pkt_begin(&w, 0xC1FC1FC1, 0, 100 * M + 7, 100 * M + 9, 0, 0);
	ev_compact(&w, 0, 100 * M + 8, false);
	bw_int(&w, 99, 32, 8);
	bw_int(&w, 0, 64, 8);
	pkt_end(&w, &p, 0, 0);
	write_bw(dir, "s_0", &w);

	struct trawl_reader *r = open1(dir, NULL, err, sizeof(err));
	ok(r, "open wrap trace (%s)", err);
	if (!r)
		return;
	const struct trawl_event *ev;
	size_t n = 0;
	bool all = true;
	while (trawl_reader_next(r, &ev) == 1) {
		uint64_t want = n < 9 ? ts[n] : 100 * M + 8;
		if (ev->cycles != want) {
			all = false;
			printf("# event %zu: cycles %llu, want %llu\n", n, (unsigned long long)ev->cycles,
			       (unsigned long long)want);
		}
		/* babeltrace2's conversion for a clock that is not 1 GHz: the
		 * offset's cycles (here < freq) and the value each become ns as
		 * (uint64_t)(1e9 * cycles / freq) in double, then add; it is
		 * within 1 ns of the exact value. */
		int64_t exact_ns = 1000 * INT64_C(1000000000) + (int64_t)(want + 500) * 1000;
		int64_t want_ns = 1000 * INT64_C(1000000000) +
				  (int64_t)(uint64_t)((1e9 * 500.0) / 1e6) +
				  (int64_t)(uint64_t)((1e9 * (double)want) / 1e6);
		if (ev->ts != want_ns || ev->ts > exact_ns || exact_ns - ev->ts > 1) {
			all = false;
			printf("# event %zu: ts %lld, want %lld (exact %lld)\n", n, (long long)ev->ts,
			       (long long)want_ns, (long long)exact_ns);
		}
		n++;
	}
	is_int(n, 10, "10 events");
	ok(all, "27-bit timestamps rebuilt across wraps and extended headers, 1 MHz clock converted");
	trawl_reader_free(r);
}

/* One trace: host, 2 streams, events (ts list) of class simple; a = index. */
static void write_merge_trace(const char *dir, const char *host, int64_t off_s,
			      const uint64_t *ts0, size_t n0, const uint64_t *ts1, size_t n1)
{
	write_meta(dir, host, 1000000000, off_s, 0);
	for (int s = 0; s < 2; s++) {
		const uint64_t *ts = s ? ts1 : ts0;
		size_t n = s ? n1 : n0;
		struct bw w;
		bw_init(&w, 1 << 16);
		/* a packet every 3 events */
		for (size_t i = 0; i < n; i += 3) {
			struct pk p = pkt_begin(&w, 0xC1FC1FC1, 0, ts[i], ts[i + 2 < n ? i + 2 : n - 1],
						i, (uint32_t)s);
			for (size_t j = i; j < n && j < i + 3; j++)
				ev_simple(&w, ts[j], (uint32_t)(s * 1000 + j), (int64_t)ts[j]);
			pkt_end(&w, &p, 0, 0);
		}
		char name[16];
		snprintf(name, sizeof(name), "chan_%d", s);
		write_bw(dir, name, &w);
	}
}

struct want {
	int64_t ts;
	int trace, stream;
	uint32_t a;
};

static int cmp_want(const void *x, const void *y)
{
	const struct want *a = x, *b = y;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->trace != b->trace)
		return a->trace - b->trace;
	if (a->stream != b->stream)
		return a->stream - b->stream;
	return a->a < b->a ? -1 : a->a > b->a;
}

static size_t merge_expect(struct want *wv, const uint64_t *ts[4], const size_t n[4],
			   const int64_t off_ns[2])
{
	size_t k = 0;
	for (int t = 0; t < 2; t++)
		for (int s = 0; s < 2; s++)
			for (size_t i = 0; i < n[t * 2 + s]; i++)
				wv[k++] = (struct want){ off_ns[t] + (int64_t)ts[t * 2 + s][i], t, s,
							 (uint32_t)(s * 1000 + i) };
	qsort(wv, k, sizeof(*wv), cmp_want);
	return k;
}

static void test_merge(void)
{
	char sess[300], da[320], db[320], err[512] = "";
	snprintf(sess, sizeof(sess), "%s/sess", root);
	mkdir(sess, 0777);
	snprintf(da, sizeof(da), "%s/alpha", sess);
	mkdir(da, 0777);
	snprintf(da, sizeof(da), "%s/alpha/ust", sess);
	snprintf(db, sizeof(db), "%s/beta", sess);
	mkdir(db, 0777);
	snprintf(db, sizeof(db), "%s/beta/kernel", sess);
	/* alpha: offset 1000 s; beta: offset 999 s, so its cycles are 1e9 later */
	static const uint64_t a0[] = { 10, 20, 30, 40, 50, 60, 70 };
	static const uint64_t a1[] = { 15, 20, 20, 45, 1000, 2000 };
	static const uint64_t b0[] = { 1000000010, 1000000020, 1000000055, 1000000056 };
	static const uint64_t b1[] = { 1000000005, 1000000020, 1000000070, 1000000071, 1000000072 };
	write_merge_trace(da, "alpha", 1000, a0, 7, a1, 6);
	write_merge_trace(db, "beta", 999, b0, 4, b1, 5);
	const uint64_t *ts[4] = { a0, a1, b0, b1 };
	const size_t n[4] = { 7, 6, 4, 5 };
	const int64_t off[2] = { 1000 * INT64_C(1000000000), 999 * INT64_C(1000000000) };
	struct want wv[32];
	size_t nw = merge_expect(wv, ts, n, off);

	struct trawl_reader *r = open1(sess, NULL, err, sizeof(err));
	ok(r, "open session (%s)", err);
	if (!r)
		return;
	is_int(trawl_reader_ntraces(r), 2, "two traces found under the session");
	is_str(trawl_reader_trace_hostname(trawl_reader_trace_at(r, 0)), "alpha", "trace 0 alpha");
	const struct trawl_event *ev;
	size_t k = 0;
	bool order = true;
	while (trawl_reader_next(r, &ev) == 1) {
		const struct trawl_reader_trace *t = trawl_reader_stream_trace(ev->stream);
		int ti = t == trawl_reader_trace_at(r, 0) ? 0 : 1;
		int si = ev->stream == trawl_reader_trace_stream(t, 0) ? 0 : 1;
		if (k >= nw || ev->ts != wv[k].ts || ti != wv[k].trace || si != wv[k].stream ||
		    ev->values[0].u != wv[k].a) {
			order = false;
			printf("# %zu: got ts %lld t%d s%d a%llu\n", k, (long long)ev->ts, ti, si,
			       (unsigned long long)ev->values[0].u);
		}
		k++;
	}
	is_int(k, nw, "all %zu events merged", nw);
	ok(order, "merged in (ts, trace, stream) order");

	struct trawl_reader_stream_stats st;
	trawl_reader_stream_stats(trawl_reader_trace_stream(trawl_reader_trace_at(r, 0), 0), &st);
	is_int(st.packets, 3, "stats: packets");
	is_int(st.events, 7, "stats: events");
	is_int(st.discarded, 6, "stats: discarded from the last packet");
	is_int(st.first_ts, off[0] + 10, "stats: first ts");
	is_int(st.last_ts, off[0] + 70, "stats: last ts");
	is_int(st.stream_class_id, 0, "stats: stream class");
	trawl_reader_stream_stats(trawl_reader_trace_stream(trawl_reader_trace_at(r, 0), 1), &st);
	is_int(st.cpu, 1, "stats: cpu");
	trawl_reader_free(r);

	/* host filter */
	const char *hosts[] = { "be*" };
	struct trawl_reader_opts o = { .sz = sizeof(o), .hosts = hosts, .nhosts = 1 };
	r = open1(sess, &o, err, sizeof(err));
	ok(r && trawl_reader_ntraces(r) == 1 &&
	   strcmp(trawl_reader_trace_hostname(trawl_reader_trace_at(r, 0)), "beta") == 0,
	   "host filter keeps beta only");
	k = 0;
	while (r && trawl_reader_next(r, &ev) == 1)
		k++;
	is_int(k, 9, "beta's 9 events");
	trawl_reader_free(r);

	/* time range: [1000 s + 20, 1000 s + 56] */
	o = (struct trawl_reader_opts){ .sz = sizeof(o), .begin = off[0] + 20, .end = off[0] + 56 };
	r = open1(sess, &o, err, sizeof(err));
	size_t want = 0;
	for (size_t i = 0; i < nw; i++)
		want += wv[i].ts >= o.begin && wv[i].ts <= o.end;
	k = 0;
	bool inrange = true;
	while (r && trawl_reader_next(r, &ev) == 1) {
		inrange &= ev->ts >= o.begin && ev->ts <= o.end;
		k++;
	}
	is_int(k, want, "time range keeps %zu events", want);
	ok(inrange, "every event inside the range");
	trawl_reader_free(r);

	/* the same trace given twice is read once; a file is not a trace */
	const char *two[] = { da, da };
	r = trawl_reader_new(two, 2, NULL, err, sizeof(err));
	ok(r && trawl_reader_ntraces(r) == 1, "same trace given twice: opened once");
	trawl_reader_free(r);
	r = open1(root, NULL, err, sizeof(err));
	ok(r && trawl_reader_ntraces(r) >= 4, "whole test dir: traces found recursively");
	trawl_reader_free(r);
	char nothing[320];
	snprintf(nothing, sizeof(nothing), "%s/empty-dir", root);
	mkdir(nothing, 0777);
	r = open1(nothing, NULL, err, sizeof(err));
	ok(!r && strstr(err, "empty-dir"), "no trace under a path: error (%s)", err);
}

static void test_event_filter(void)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/types", root);
	const char *evs[] = { "sim*", "gen" };
	struct trawl_reader_opts o = { .sz = sizeof(o), .events = evs, .nevents = 2 };
	struct trawl_reader *r = open1(dir, &o, err, sizeof(err));
	const struct trawl_event *ev;
	int ns = 0, ng = 0, other = 0, rc;
	while (r && (rc = trawl_reader_next(r, &ev)) == 1) {
		if (strcmp(ev->cls->name, "simple") == 0)
			ns++;
		else if (strcmp(ev->cls->name, "gen") == 0)
			ng++;
		else
			other++;
	}
	ok(r && ns == 2 && ng == 3 && other == 0, "event filter: simple x2, gen x3, nothing else");
	struct trawl_reader_stream_stats st;
	trawl_reader_stream_stats(trawl_reader_trace_stream(trawl_reader_trace_at(r, 0), 0), &st);
	is_int(st.events, 5, "filtered events are still read (stats)");
	trawl_reader_free(r);
}

static void test_corrupt(void)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/corrupt", root);
	write_meta(dir, "hostC", 1000000000, 1000, 0);
	struct bw w;
	struct pk p;

	/* 1. bad magic in the second packet: 3 good events first */
	bw_init(&w, 8192);
	p = pkt_begin(&w, 0xC1FC1FC1, 0, 10, 30, 0, 0);
	for (int i = 0; i < 3; i++)
		ev_simple(&w, 10 + (uint64_t)i * 10, 100 + (uint32_t)i, 0);
	pkt_end(&w, &p, 0, 0);
	uint64_t bad1 = w.pos / 8;
	p = pkt_begin(&w, 0xdeadbeef, 0, 40, 50, 0, 0);
	ev_simple(&w, 40, 999, 0);
	pkt_end(&w, &p, 0, 0);
	write_bw(dir, "a_magic", &w);

	/* 2. packet_size past the end of the file */
	bw_init(&w, 8192);
	p = pkt_begin(&w, 0xC1FC1FC1, 0, 11, 21, 0, 0);
	ev_simple(&w, 11, 200, 0);
	ev_simple(&w, 21, 201, 0);
	pkt_end(&w, &p, 0, 0);
	uint64_t bad2 = w.pos / 8;
	p = pkt_begin(&w, 0xC1FC1FC1, 0, 31, 41, 0, 0);
	ev_simple(&w, 31, 299, 0);
	pkt_end(&w, &p, 0, 0);
	bw_set64(&w, p.size_at, UINT64_C(1) << 23);
	write_bw(dir, "b_pastend", &w);

	/* 3. content_size cuts the third event */
	bw_init(&w, 8192);
	p = pkt_begin(&w, 0xC1FC1FC1, 0, 12, 32, 0, 0);
	ev_simple(&w, 12, 300, 0);
	ev_simple(&w, 22, 301, 0);
	uint64_t bad3 = w.pos / 8;
	ev_simple(&w, 32, 302, 0);
	pkt_end(&w, &p, w.pos - p.start - 40, 0);
	write_bw(dir, "c_trunc", &w);

	/* 4. garbage */
	uint8_t junk[1000];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	write_file(dir, "d_garbage", junk, sizeof(junk));

	/* 5. good, and an unknown event id in a second packet */
	bw_init(&w, 8192);
	p = pkt_begin(&w, 0xC1FC1FC1, 0, 5, 100, 0, 0);
	for (int i = 0; i < 5; i++)
		ev_simple(&w, 5 + (uint64_t)i * 20, 500 + (uint32_t)i, 0);
	pkt_end(&w, &p, 0, 0);
	p = pkt_begin(&w, 0xC1FC1FC1, 0, 200, 300, 0, 0);
	uint64_t bad5 = w.pos / 8;
	ev_compact(&w, 17, 200, false);
	bw_int(&w, 0, 64, 8);
	pkt_end(&w, &p, 0, 0);
	write_bw(dir, "e_good", &w);

	struct trawl_reader *r = open1(dir, NULL, err, sizeof(err));
	ok(r, "open corrupt trace (%s)", err);
	if (!r)
		return;
	const struct trawl_event *ev;
	int rc, good = 0, errs = 0;
	bool seen[5] = { 0 }, allgood = true;
	uint64_t nskips = 0;
	for (int guard = 0; guard < 100 && (rc = trawl_reader_next(r, &ev)) != 0; guard++) {
		if (rc == 1) {
			uint32_t a = (uint32_t)ev->values[0].u;
			if (a == 999 || a == 299 || a == 302)
				allgood = false;
			good++;
			continue;
		}
		errs++;
		printf("# error %d: %s\n", rc, trawl_reader_error(r));
	}
	/* each bad region is skipped (the reader goes on after it) and kept
	 * with its stream: file, byte offset, why */
	for (size_t i = 0; i < trawl_reader_ntraces(r); i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t j = 0; j < trawl_reader_trace_nstreams(t); j++) {
			const struct trawl_reader_stream *st = trawl_reader_trace_stream(t, j);
			const char *path = trawl_reader_stream_path(st);
			struct trawl_reader_skip sk[4];
			uint64_t n = 0;
			size_t k = trawl_reader_stream_skips(st, sk, 4, NULL, &n);
			nskips += n;
			for (size_t x = 0; x < k; x++) {
				printf("# %s: skipped %llu bytes at byte %llu: %s\n", path,
				       (unsigned long long)sk[x].bytes,
				       (unsigned long long)sk[x].offset, sk[x].why);
				if (strstr(path, "a_magic") && sk[x].offset == bad1 &&
				    strstr(sk[x].why, "magic"))
					seen[0] = true;
				if (strstr(path, "b_pastend") && sk[x].offset == bad2 &&
				    strstr(sk[x].why, "packet_size"))
					seen[1] = true;
				if (strstr(path, "c_trunc") && sk[x].offset == bad3 &&
				    strstr(sk[x].why, "truncated"))
					seen[2] = true;
				if (strstr(path, "e_good") && sk[x].offset == bad5 &&
				    strstr(sk[x].why, "unknown event id 17"))
					seen[3] = true;
				if (strstr(path, "d_garbage") && sk[x].offset == 0 &&
				    sk[x].bytes == sizeof(junk))
					seen[4] = true;
			}
		}
	}
	is_int(good, 3 + 2 + 2 + 5, "every valid event before the corruption is returned");
	ok(allgood, "no event from a corrupt packet");
	is_int(errs, 0, "no reader error: the bad regions are skipped");
	is_int(nskips, 5, "one region skipped per corrupt stream");
	ok(seen[0], "bad magic: file and packet offset kept");
	ok(seen[1], "packet_size past EOF: file and offset kept");
	ok(seen[2], "truncated event: file and event offset kept");
	ok(seen[3], "unknown event id: file and offset kept");
	ok(seen[4], "garbage: the whole file skipped from byte 0");
	is_int(trawl_reader_next(r, &ev), 0, "then the end");
	trawl_reader_free(r);
}

/* ------------------------------------------------- writer round trip */

static void test_writer(void)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/written", root);
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "wr", .domain = "kernel",
		.clock_offset_s = 1700000000, .clock_offset = 1, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	ok(w, "writer");
	if (!w)
		return;
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *u8 = trawl_ctf_type_int(w, 8, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *f1 = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, f1, "a", u32);
	trawl_ctf_struct_add(w, f1, "b", s64);
	struct trawl_ctf_type *f2 = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, f2, "n", u8);
	trawl_ctf_struct_add(w, f2, "q", trawl_ctf_type_sequence(w, u32, "n"));
	trawl_ctf_struct_add(w, f2, "s", str);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "vtid", u32);
	struct trawl_ctf_stream_class *k = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	struct trawl_ctf_stream_class *u = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, ctx);
	struct trawl_ctf_event_class *e1 = trawl_ctf_writer_event_class(w, k, "fixed", 0, f1);
	struct trawl_ctf_event_class *e2 = trawl_ctf_writer_event_class(w, u, "var", 0, f2);
	struct trawl_ctf_wstream *s1 = trawl_ctf_writer_stream(w, k, "kchan", 0);
	struct trawl_ctf_wstream *s2 = trawl_ctf_writer_stream(w, u, "uchan", 1);
	ok(e1 && e2 && s1 && s2, "writer classes and streams");
	if (!(e1 && e2 && s1 && s2)) {
		trawl_ctf_writer_free(w);
		return;
	}
	enum { N = 20000 };
	uint8_t buf[256];
	uint64_t ts = 1000;
	for (int i = 0; i < N; i++) {
		struct trawl_ctf_buf b;
		ts += (uint64_t)(i % 100 == 99 ? 300000000 : 37);	/* some deltas wrap 27 bits */
		trawl_ctf_buf_init(&b, buf, sizeof(buf));
		trawl_ctf_buf_u32(&b, (uint32_t)i);
		trawl_ctf_buf_u64(&b, (uint64_t)(-(int64_t)i * 1000));
		if (trawl_ctf_wstream_event(s1, e1, ts, buf, b.len))
			break;
		if (i % 4 == 0) {
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			trawl_ctf_buf_u32(&b, 4242);
			trawl_ctf_buf_u8(&b, (uint8_t)(i % 5));
			for (int j = 0; j < i % 5; j++)
				trawl_ctf_buf_u32(&b, (uint32_t)(i + j));
			trawl_ctf_buf_str(&b, i % 8 ? "x" : "eight");
			if (trawl_ctf_wstream_event(s2, e2, ts + 1, buf, b.len))
				break;
		}
	}
	trawl_ctf_wstream_discarded(s1, 12);
	ok(trawl_ctf_writer_close(w) == 0, "writer close");
	trawl_ctf_writer_free(w);

	struct trawl_reader *r = open1(dir, NULL, err, sizeof(err));
	ok(r, "read the writer's trace (%s)", err);
	if (!r)
		return;
	const struct trawl_event *ev;
	int n1 = 0, n2 = 0, bad1 = 0, bad2 = 0, rc;
	int64_t prev = INT64_MIN;
	bool mono = true;
	while ((rc = trawl_reader_next(r, &ev)) == 1) {
		mono &= ev->ts >= prev;
		prev = ev->ts;
		const union trawl_ctf_value *v = ev->values;
		if (strcmp(ev->cls->name, "fixed") == 0) {
			if (ev->nvalues != 2 || v[0].u != (uint64_t)n1 || v[1].i != -(int64_t)n1 * 1000)
				bad1++;
			n1++;
		} else {
			int i = n2 * 4, m = i % 5;
			bool okv = ev->nvalues == (uint32_t)(4 + m) && v[0].u == 4242 &&
				   v[1].u == (uint64_t)m && v[2].n == (uint64_t)m;
			for (int j = 0; okv && j < m; j++)
				okv = v[3 + j].u == (uint64_t)(i + j);
			okv = okv && strcmp(v[3 + m].s.p, i % 8 ? "x" : "eight") == 0;
			bad2 += !okv;
			n2++;
		}
	}
	is_int(rc, 0, "no error (%s)", trawl_reader_error(r));
	is_int(n1, N, "compact-header stream: all events");
	is_int(n2, N / 4, "large-header stream: all events");
	is_int(bad1, 0, "fixed-layout values");
	is_int(bad2, 0, "sequence/string values after an event context");
	ok(mono, "timestamps non-decreasing");
	struct trawl_reader_stream_stats st;
	const struct trawl_reader_trace *t = trawl_reader_trace_at(r, 0);
	for (size_t i = 0; i < trawl_reader_trace_nstreams(t); i++) {
		trawl_reader_stream_stats(trawl_reader_trace_stream(t, i), &st);
		if (st.stream_class_id == 0) {
			is_int(st.discarded, 12, "discarded events counted");
			ok(st.packets > 10, "several packets (%llu)", (unsigned long long)st.packets);
		}
	}
	trawl_reader_free(r);
}

/* ------------------------------------------------------- decode-ahead */

/* Opens path with `threads` (and `batch` events per batch when nonzero). */
static struct trawl_reader *open_t(const char *path, struct trawl_reader_opts o, unsigned threads,
				   uint32_t batch)
{
	char err[512] = "";
	o.sz = sizeof(o);
	o.threads = threads;
	struct trawl_reader *r = open1(path, &o, err, sizeof(err));
	if (!r)
		printf("# open %s: %s\n", path, err);
	else if (batch)
		tr_reader_set_batch(r, batch);
	return r;
}

static int stream_index(const struct trawl_reader *r, const struct trawl_reader_stream *s)
{
	int k = 0;
	for (size_t i = 0; i < trawl_reader_ntraces(r); i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t j = 0; j < trawl_reader_trace_nstreams(t); j++, k++)
			if (trawl_reader_trace_stream(t, j) == s)
				return k;
	}
	return -1;
}

/*
 * The next event of r through trawl_reader_read(), up to 1 + calls % 8
 * events a call (several from one call when r has a worker), every third
 * call through trawl_reader_next() instead: the two mixed must give what
 * trawl_reader_next() alone gives. `most`: the most one call returned.
 */
struct rdbuf {
	struct trawl_event ev[8];
	int n, i, most;
	unsigned calls;
};

static int rdbuf_next(struct trawl_reader *r, struct rdbuf *q, const struct trawl_event **e)
{
	if (q->i < q->n) {
		*e = &q->ev[q->i++];
		return 1;
	}
	q->n = q->i = 0;
	if (++q->calls % 3 == 0)
		return trawl_reader_next(r, e);
	int rc = trawl_reader_read(r, q->ev, 1 + q->calls % 8);
	if (rc <= 0)
		return rc;
	if (rc > q->most)
		q->most = rc;
	q->n = rc;
	q->i = 1;
	*e = &q->ev[0];
	return 1;
}

static int same_most;	/* same_reading(): the most events one read returned */

/* ea of a and eb of b: the same event (strings by content where the class
 * says). */
static bool same_event(const struct trawl_reader *a, const struct trawl_event *ea,
		       const struct trawl_reader *b, const struct trawl_event *eb)
{
	bool same = ea->ts == eb->ts && ea->cycles == eb->cycles && ea->cpu == eb->cpu &&
		    ea->cls->id == eb->cls->id && strcmp(ea->cls->name, eb->cls->name) == 0 &&
		    stream_index(a, ea->stream) == stream_index(b, eb->stream) &&
		    ea->nvalues == eb->nvalues;
	uint32_t nv = same ? ea->nvalues : 0;
	if (same && strcmp(ea->cls->name, "var") == 0 && nv) {
		const union trawl_ctf_value *x = &ea->values[nv - 1], *y = &eb->values[nv - 1];
		same = x->s.len == y->s.len && memcmp(x->s.p, y->s.p, x->s.len) == 0;
		nv--;	/* the string: by content */
	}
	for (uint32_t i = 0; same && i < nv; i++)
		same = ea->values[i].u == eb->values[i].u;
	return same;
}

/* a's and b's streams: the same stats. */
static bool same_stats(const struct trawl_reader *a, const struct trawl_reader *b)
{
	bool stats = true;
	for (size_t i = 0; i < trawl_reader_ntraces(a); i++) {
		const struct trawl_reader_trace *ta = trawl_reader_trace_at(a, i);
		const struct trawl_reader_trace *tb = trawl_reader_trace_at(b, i);
		for (size_t j = 0; j < trawl_reader_trace_nstreams(ta); j++) {
			struct trawl_reader_stream_stats sa, sb;
			trawl_reader_stream_stats(trawl_reader_trace_stream(ta, j), &sa);
			trawl_reader_stream_stats(trawl_reader_trace_stream(tb, j), &sb);
			stats &= sa.packets == sb.packets && sa.events == sb.events &&
				 sa.discarded == sb.discarded && sa.first_ts == sb.first_ts &&
				 sa.last_ts == sb.last_ts && sa.cpu == sb.cpu && sa.bytes == sb.bytes;
		}
	}
	return stats;
}

/*
 * Reads path three ways side by side: event by event (READ_EVENTS,
 * trawl_reader_next()), with a worker (READ_WORKER) and in batches in the
 * calling thread (READ_BATCHES), both of these with batch events per
 * batch and trawl_reader_read() and trawl_reader_next() mixed (see
 * rdbuf_next()): the same events (stream, ts, cycles, cpu, class, values;
 * strings by content where the class says), errors (code and message) and
 * end, then the same per-stream stats. Returns the number of events.
 */
/* Every stream of a and b skipped the same regions and lost the same. */
static bool same_skips(const struct trawl_reader *a, const struct trawl_reader *b)
{
	if (trawl_reader_ntraces(a) != trawl_reader_ntraces(b))
		return false;
	for (size_t i = 0; i < trawl_reader_ntraces(a); i++) {
		const struct trawl_reader_trace *ta = trawl_reader_trace_at(a, i);
		const struct trawl_reader_trace *tb = trawl_reader_trace_at(b, i);
		for (size_t j = 0; j < trawl_reader_trace_nstreams(ta); j++) {
			const struct trawl_reader_stream *sa = trawl_reader_trace_stream(ta, j);
			const struct trawl_reader_stream *sb = trawl_reader_trace_stream(tb, j);
			struct trawl_reader_skip ka[16], kb[16];
			struct trawl_reader_loss la[40], lb[40];
			uint64_t ba, bb, na, nb, ea, eb;
			size_t nka = trawl_reader_stream_skips(sa, ka, 16, &ba, &na);
			size_t nkb = trawl_reader_stream_skips(sb, kb, 16, &bb, &nb);
			size_t nla = trawl_reader_stream_losses(sa, la, 40, &ea);
			size_t nlb = trawl_reader_stream_losses(sb, lb, 40, &eb);
			if (nka != nkb || ba != bb || na != nb || nla != nlb || ea != eb ||
			    memcmp(la, lb, nla * sizeof(*la)))
				return false;
			for (size_t k = 0; k < nka; k++)
				if (ka[k].offset != kb[k].offset || ka[k].bytes != kb[k].bytes ||
				    strcmp(ka[k].why, kb[k].why))
					return false;
		}
	}
	return true;
}

static long same_reading(const char *what, const char *path, struct trawl_reader_opts o,
			 uint32_t batch, int *nerr)
{
	struct trawl_reader *a = open_t(path, o, 1, 0), *b = open_t(path, o, 2, batch),
			    *c = open_t(path, o, 1, batch);
	const struct trawl_event *ea, *eb, *ec;
	static struct rdbuf q, qc;
	long n = 0, bad = 0;
	int ra, rb, rc;

	memset(&q, 0, sizeof(q));
	memset(&qc, 0, sizeof(qc));

	*nerr = 0;
	if (!a || !b || !c) {
		ok(false, "%s: open", what);
		trawl_reader_free(a);
		trawl_reader_free(b);
		trawl_reader_free(c);
		return -1;
	}
	tr_reader_set_mode(a, READ_EVENTS);
	tr_reader_set_mode(b, READ_WORKER);
	tr_reader_set_mode(c, READ_BATCHES);
	do {
		ra = trawl_reader_next(a, &ea);
		rb = rdbuf_next(b, &q, &eb);
		rc = rdbuf_next(c, &qc, &ec);
		if (ra != rb || ra != rc) {
			printf("# %s: at %ld: %d vs %d vs %d (%s | %s | %s)\n", what, n, ra, rb, rc,
			       trawl_reader_error(a), trawl_reader_error(b), trawl_reader_error(c));
			bad++;
			break;
		}
		if (ra < 0) {
			(*nerr)++;
			if (strcmp(trawl_reader_error(a), trawl_reader_error(b)) != 0 ||
			    strcmp(trawl_reader_error(a), trawl_reader_error(c)) != 0) {
				printf("# %s: errors differ: %s | %s | %s\n", what, trawl_reader_error(a),
				       trawl_reader_error(b), trawl_reader_error(c));
				bad++;
			}
			continue;
		}
		if (ra == 0)
			break;
		bool sb = same_event(a, ea, b, eb), sc = same_event(a, ea, c, ec);
		if ((!sb || !sc) && bad++ < 5)
			printf("# %s: event %ld differs (ts %lld vs %lld vs %lld)\n", what, n,
			       (long long)ea->ts, (long long)eb->ts, (long long)ec->ts);
		n++;
	} while (bad < 5);
	is_int(bad, 0, "%s: event by event, the worker and batches in one thread (batch %u) agree "
	       "on %ld events", what, batch, n);
	is_int(trawl_reader_next(b, &eb), 0, "%s: the worker's reader stays at the end", what);
	is_int(trawl_reader_next(c, &ec), 0, "%s: the one-thread batch reader stays at the end", what);
	is_int(trawl_reader_nerrors(a), trawl_reader_nerrors(b), "%s: same error count", what);
	is_int(trawl_reader_nerrors(a), trawl_reader_nerrors(c), "%s: same error count in one thread",
	       what);
	ok(same_skips(a, b) && same_skips(a, c), "%s: the same regions skipped and events lost, "
	   "in the three ways", what);
	ok(same_stats(a, b), "%s: same stream stats at the end", what);
	ok(same_stats(a, c), "%s: same stream stats at the end, batches in one thread", what);
	same_most = q.most < qc.most ? q.most : qc.most;
	trawl_reader_free(a);
	trawl_reader_free(b);
	trawl_reader_free(c);
	return n;
}

/* A writer trace with many streams: fixed and variable events, ts ties. */
static void write_many(const char *dir, int nstreams, int nev)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "many", .domain = "ust",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		abort();
	struct trawl_ctf_type *u32 = trawl_ctf_type_int(w, 32, false, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *u8 = trawl_ctf_type_int(w, 8, false, 10);
	struct trawl_ctf_type *f1 = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, f1, "a", u32);
	trawl_ctf_struct_add(w, f1, "b", s64);
	struct trawl_ctf_type *f2 = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, f2, "n", u8);
	trawl_ctf_struct_add(w, f2, "q", trawl_ctf_type_sequence(w, u8, "n"));
	trawl_ctf_struct_add(w, f2, "s", trawl_ctf_type_string(w));
	struct trawl_ctf_stream_class *k = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL);
	struct trawl_ctf_stream_class *u = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	struct trawl_ctf_event_class *e1 = trawl_ctf_writer_event_class(w, k, "fixed", 0, f1);
	struct trawl_ctf_event_class *e1u = trawl_ctf_writer_event_class(w, u, "fixed", 0, f1);
	struct trawl_ctf_event_class *e2 = trawl_ctf_writer_event_class(w, u, "var", 0, f2);
	struct trawl_ctf_wstream *s[64];
	for (int i = 0; i < nstreams; i++)
		s[i] = trawl_ctf_writer_stream(w, i % 2 ? u : k, "chan", (uint32_t)i);
	uint8_t buf[512];
	for (int j = 0; j < nev; j++) {
		for (int i = 0; i < nstreams; i++) {
			struct trawl_ctf_buf b;
			/* every 4th event is at the same ts on every stream */
			uint64_t ts = 1000 + (uint64_t)j * 1000 + (j % 4 ? (uint64_t)((i * 37 + j * 11) % 997) : 0);
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			if (i % 2 && j % 3 == 0) {
				int m = (i + j) % 40;	/* up to 40 bytes: long tapes */
				trawl_ctf_buf_u8(&b, (uint8_t)m);
				for (int q = 0; q < m; q++)
					trawl_ctf_buf_u8(&b, (uint8_t)(i + j + q));
				trawl_ctf_buf_str(&b, j % 2 ? "odd" : "even-string");
				trawl_ctf_wstream_event(s[i], e2, ts, buf, b.len);
			} else {
				trawl_ctf_buf_u32(&b, (uint32_t)(i * 100000 + j));
				trawl_ctf_buf_u64(&b, (uint64_t)(-(int64_t)j));
				trawl_ctf_wstream_event(s[i], i % 2 ? e1u : e1, ts, buf, b.len);
			}
		}
	}
	if (trawl_ctf_writer_close(w))
		abort();
	trawl_ctf_writer_free(w);
}

/*
 * trawl_reader_progress() in every read mode: 0 of the streams' bytes
 * before the first event, never backwards, never past the total, somewhere
 * in between on the way, the total at the end (the "many" trace of
 * test_threaded(): 64 streams of 4 KiB packets).
 */
static void test_progress(void)
{
	static const char *const name[] = { "event by event", "a worker", "batches in one thread" };
	static const enum read_mode mode[] = { READ_EVENTS, READ_WORKER, READ_BATCHES };
	struct trawl_reader_opts o = { .sz = sizeof(o) };
	char dir[300];

	snprintf(dir, sizeof(dir), "%s/many", root);
	for (int m = 0; m < 3; m++) {
		struct trawl_reader *r = open_t(dir, o, m == 1 ? 2 : 1, m ? 16 : 0);
		const struct trawl_event *ev;
		uint64_t done, total, bytes = 0, prev = 0, mid = 0, n = 0;
		bool back = false;
		int rc;

		if (!r) {
			ok(false, "progress, %s: open", name[m]);
			continue;
		}
		tr_reader_set_mode(r, mode[m]);
		for (size_t i = 0; i < trawl_reader_ntraces(r); i++) {
			const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
			for (size_t j = 0; j < trawl_reader_trace_nstreams(t); j++) {
				struct trawl_reader_stream_stats st;
				trawl_reader_stream_stats(trawl_reader_trace_stream(t, j), &st);
				bytes += st.bytes;
			}
		}
		trawl_reader_progress(r, &done, &total);
		ok(done == 0 && total == bytes && bytes > 0,
		   "progress, %s: 0 of %" PRIu64 " bytes (the streams' sizes) before reading: %" PRIu64
		   " of %" PRIu64, name[m], bytes, done, total);
		while ((rc = trawl_reader_next(r, &ev)) > 0) {
			trawl_reader_progress(r, &done, &total);
			back |= done < prev || done > total;
			if (done > 0 && done < total)
				mid++;
			prev = done;
			n++;
		}
		trawl_reader_progress(r, &done, &total);
		ok(rc == 0 && !back && mid > n / 2 && done == total && total == bytes,
		   "progress, %s: %" PRIu64 " events, never backwards, between 0 and the total for %"
		   PRIu64 " of them, %" PRIu64 " of %" PRIu64 " at the end", name[m], n, mid, done,
		   total);
		trawl_reader_free(r);
	}
}

/*
 * One stream file whose packets change cpu_id halfway (two writer streams,
 * cpu 0 then cpu 1, one after the other in one file): a decode-ahead
 * batch that spans the change keeps each event's own cpu.
 */
static void test_cpu_change(void)
{
	char src[300], dir[300];
	struct trawl_reader_opts o = { .sz = sizeof(o) };
	int nerr;

	snprintf(src, sizeof(src), "%s/twocpu-src", root);
	write_many(src, 2, 2000);	/* chan_0 compact, chan_1 large: keep chan_0 twice */
	size_t nm, n0;
	char path[400];
	snprintf(path, sizeof(path), "%s/metadata", src);
	uint8_t *meta = slurp(path, &nm);
	snprintf(path, sizeof(path), "%s/chan_0", src);
	uint8_t *c0 = slurp(path, &n0);
	uint8_t *both = malloc(2 * n0 + 1);
	if (!meta || !c0 || !both)
		abort();
	memcpy(both, c0, n0);
	memcpy(both + n0, c0, n0);
	/* the second copy's packets say cpu_id = 1 */
	size_t fixed = 0;
	for (size_t off = 0; off + PK_HDR_END <= n0;) {
		uint64_t bits;
		uint32_t one32 = 1;
		memcpy(&bits, c0 + off + PK_PACKET_SIZE, 8);	/* little-endian host */
		memcpy(both + n0 + off + PK_CPU_ID, &one32, 4);
		fixed++;
		if (bits < 8 * PK_HDR_END)
			abort();
		off += bits / 8;
	}
	snprintf(dir, sizeof(dir), "%s/twocpu", root);
	write_file(dir, "metadata", meta, nm);
	write_file(dir, "chan_0", both, 2 * n0);
	free(meta);
	free(c0);
	free(both);
	long n = same_reading("cpu_id changing mid-stream, tiny batches", dir, o, 7, &nerr);
	is_int(n, 2 * 2000, "cpu change: every event of both halves");
	same_reading("cpu_id changing mid-stream, default batches", dir, o, 0, &nerr);
	/* and the values themselves, from the worker */
	o.threads = 2;
	char err[256];
	const char *p2[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p2, 1, &o, err, sizeof(err));
	const struct trawl_event *ev;
	long c[2] = { 0, 0 }, other = 0;
	while (r && trawl_reader_next(r, &ev) > 0) {
		if (ev->cpu < 2)
			c[ev->cpu]++;
		else
			other++;
	}
	trawl_reader_free(r);
	ok(c[0] == 2000 && c[1] == 2000 && other == 0 && fixed > 1,
	   "cpu change: 2000 events on cpu 0, 2000 on cpu 1 (%ld, %ld, %ld other; %zu packets)",
	   c[0], c[1], other, fixed);
}

static void test_threaded(void)
{
	char dir[300], sess[300];
	struct trawl_reader_opts o = { .sz = sizeof(o) };
	int nerr;
	long n;

	snprintf(dir, sizeof(dir), "%s/many", root);
	write_many(dir, 64, 300);
	n = same_reading("64 streams, tiny batches", dir, o, 5, &nerr);
	is_int(n, 64 * 300, "64 streams: every event");
	same_reading("64 streams, batches of 1", dir, o, 1, &nerr);
	same_reading("64 streams, default batches", dir, o, 0, &nerr);
	is_int(same_most, 8, "64 streams: trawl_reader_read() returned 8 events from one call");

	/* errors mid-stream: events before, then each error once, in place */
	snprintf(dir, sizeof(dir), "%s/corrupt", root);
	n = same_reading("corrupt streams", dir, o, 2, &nerr);
	is_int(n, 3 + 2 + 2 + 5, "corrupt: every valid event before the damage");
	is_int(nerr, 0, "corrupt: no error, the bad regions are skipped (same_skips: the same)");
	same_reading("corrupt streams, default batches", dir, o, 0, &nerr);

	/* filters in the worker */
	snprintf(sess, sizeof(sess), "%s/sess", root);
	const char *hosts[] = { "be*" };
	o = (struct trawl_reader_opts){ .sz = sizeof(o), .hosts = hosts, .nhosts = 1 };
	is_int(same_reading("host filter", sess, o, 2, &nerr), 9, "host filter: beta's 9 events");
	o = (struct trawl_reader_opts){ .sz = sizeof(o), .begin = 1000 * INT64_C(1000000000) + 20,
					.end = 1000 * INT64_C(1000000000) + 56 };
	same_reading("time range", sess, o, 2, &nerr);
	const char *evs[] = { "var" };
	o = (struct trawl_reader_opts){ .sz = sizeof(o), .events = evs, .nevents = 1 };
	snprintf(dir, sizeof(dir), "%s/many", root);
	n = same_reading("event filter", dir, o, 3, &nerr);
	ok(n > 0 && n < 64 * 300 / 2, "event filter: only `var` events (%ld)", n);
	o = (struct trawl_reader_opts){ .sz = sizeof(o), .begin = 1700000000 * INT64_C(1000000000) + 50000,
					.end = 1700000000 * INT64_C(1000000000) + 90000 };
	n = same_reading("time range, many streams", dir, o, 4, &nerr);
	ok(n > 0 && n < 64 * 300, "time range, many streams: a part (%ld)", n);

	/*
	 * Merge keys: timestamps that go back below every stream's first one,
	 * jump forward far enough to need a new base, or spread so far apart
	 * (near both ends of the int64 range) that the worker's merge must
	 * fall back to wide keys: the same order as threads = 1.
	 */
	{
		const uint64_t H = UINT64_C(1) << 63, Q = UINT64_C(1) << 62;
		static const uint64_t back0[] = { 100, 101, 102, 1, 2, 3, 400, 401, 402 };
		static const uint64_t back1[] = { 50, 60, 70, 80, 90, 95, 200, 300, 400 };
		/* as unsigned orders of ts (ts ^ H): forward by more than the range */
		const uint64_t fwd0[] = { H ^ 1, H ^ 2, H ^ 3, H ^ (Q + 10), H ^ (Q + 11), H ^ (Q + 12),
					  H ^ (H + 1), H ^ (H + 2), H ^ (H + 3) };
		const uint64_t fwd1[] = { H ^ 4, H ^ 5, H ^ 6, H ^ (Q + 20), H ^ (Q + 21), H ^ (Q + 22),
					  H ^ (H + 30), H ^ (H + 31), H ^ (H + 32) };
		const uint64_t wide0[] = { 5, 6, 7, H + 5, H + 6, H + 7, H - 30, H - 20, H - 10 };
		const uint64_t wide1[] = { 10, 11, 12, 20, 21, 22, H + 8, H + 9, H + 10 };
		o = (struct trawl_reader_opts){ .sz = sizeof(o) };
		snprintf(dir, sizeof(dir), "%s/keys-back", root);
		write_merge_trace(dir, "keys", 0, back0, 9, back1, 9);
		is_int(same_reading("merge keys: ts back below the base", dir, o, 2, &nerr), 18,
		       "merge keys: ts back below the base: every event");
		snprintf(dir, sizeof(dir), "%s/keys-fwd", root);
		write_merge_trace(dir, "keys", 0, fwd0, 9, fwd1, 9);
		is_int(same_reading("merge keys: ts forward past the range", dir, o, 2, &nerr), 18,
		       "merge keys: ts forward past the range: every event");
		snprintf(dir, sizeof(dir), "%s/keys-wide", root);
		write_merge_trace(dir, "keys", 0, wide0, 9, wide1, 9);
		is_int(same_reading("merge keys: ts at both ends of int64", dir, o, 2, &nerr), 18,
		       "merge keys: ts at both ends of int64: every event");
		snprintf(dir, sizeof(dir), "%s/many", root);
	}

	/* freeing while the worker runs: no hang, no leak (sanitizers) */
	o = (struct trawl_reader_opts){ .sz = sizeof(o) };
	struct trawl_reader *r = open_t(dir, o, 2, 3);
	const struct trawl_event *ev;
	int k = 0;
	while (r && k < 100 && trawl_reader_next(r, &ev) == 1)
		k++;
	is_int(k, 100, "worker: 100 events, then free mid-way");
	trawl_reader_free(r);
	r = open_t(dir, o, 2, 0);
	ok(r && trawl_reader_next(r, &ev) == 1, "worker: free after the first event");
	trawl_reader_free(r);
	r = open_t(dir, o, 2, 0);
	ok(r, "worker: free before reading");
	trawl_reader_free(r);

	/* stats while reading: never behind what was returned */
	r = open_t(dir, o, 2, 7);
	bool ahead = true;
	const struct trawl_reader_stream *s0 = NULL;
	long from0 = 0;
	while (r && trawl_reader_next(r, &ev) == 1) {
		if (!s0)
			s0 = ev->stream;
		if (ev->stream == s0) {
			struct trawl_reader_stream_stats st;
			from0++;
			trawl_reader_stream_stats(s0, &st);
			ahead &= st.events >= (uint64_t)from0 && st.events <= (uint64_t)from0 + 7;
		}
	}
	ok(r && ahead, "worker: stats count the returned events, at most one batch ahead");
	trawl_reader_free(r);
}

/* ------------------------------------------------------------- indexes */

struct evsum {
	int64_t ts;
	int stream;
	uint64_t h;
};

struct reading {
	struct evsum *ev;
	long n;
	int nerr;
	uint64_t packets;	/* all streams */
	int used, bad;		/* streams with index_used / index_bad */
	int nskip;		/* streams with a region skipped */
	char warn[256];		/* the first warning */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* Every event of path (strings of `var` by content) and the stats. */
static void read_all(const char *path, int64_t begin, unsigned threads, uint32_t batch,
		     struct reading *rd)
{
	struct trawl_reader_opts o = { .sz = sizeof(o), .begin = begin };
	struct trawl_reader *r = open_t(path, o, threads, batch);
	const struct trawl_event *ev;
	long cap = 0;
	int rc;

	memset(rd, 0, sizeof(*rd));
	if (!r)
		return;
	while ((rc = trawl_reader_next(r, &ev)) != 0) {
		if (rc < 0) {
			rd->nerr++;
			continue;
		}
		if (rd->n == cap) {
			cap = cap ? 2 * cap : 1024;
			rd->ev = realloc(rd->ev, (size_t)cap * sizeof(*rd->ev));
			if (!rd->ev)
				abort();
		}
		struct evsum *e = &rd->ev[rd->n++];
		uint32_t nv = ev->nvalues;
		e->ts = ev->ts;
		e->stream = stream_index(r, ev->stream);
		e->h = fnv(UINT64_C(0xcbf29ce484222325), &ev->cycles, 8);
		e->h = fnv(e->h, ev->cls->name, strlen(ev->cls->name));
		if (strcmp(ev->cls->name, "var") == 0 && nv) {
			nv--;
			e->h = fnv(e->h, ev->values[nv].s.p, ev->values[nv].s.len);
		}
		for (uint32_t i = 0; i < nv; i++)
			e->h = fnv(e->h, &ev->values[i].u, 8);
	}
	for (size_t i = 0; i < trawl_reader_ntraces(r); i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		for (size_t j = 0; j < trawl_reader_trace_nstreams(t); j++) {
			struct trawl_reader_stream_stats st;
			trawl_reader_stream_stats(trawl_reader_trace_stream(t, j), &st);
			rd->packets += st.packets;
			uint64_t nsk = 0;
			trawl_reader_stream_skips(trawl_reader_trace_stream(t, j), NULL, 0, NULL, &nsk);
			rd->nskip += nsk > 0;
			rd->used += st.index_used;
			rd->bad += st.index_bad;
			if (st.index_bad && !rd->warn[0])
				snprintf(rd->warn, sizeof(rd->warn), "%s",
					 st.index_warning ? st.index_warning : "(null)");
		}
	}
	trawl_reader_free(r);
}

static bool same_events(const struct reading *a, const struct reading *b)
{
	if (a->n != b->n)
		return false;
	for (long i = 0; i < a->n; i++)
		if (a->ev[i].ts != b->ev[i].ts || a->ev[i].stream != b->ev[i].stream ||
		    a->ev[i].h != b->ev[i].h)
			return false;
	return true;
}

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		printf("# failed: %s\n", cmd);
}

static void spew(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n)
		printf("# cannot write %s\n", path);
	if (f)
		fclose(f);
}

static uint64_t be64_at(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void be64_put(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* A copy of the trace at src with one stream's index edited by `how`. */
enum ix_edit { IX_MAGIC, IX_TRUNC, IX_ORDER, IX_PAST, IX_CSIZE, IX_SEEKCSIZE, IX_V10 };

static void edit_index(const char *dir, const char *file, enum ix_edit how, int64_t seek_cyc)
{
	char p[400];
	size_t n;
	snprintf(p, sizeof(p), "%s/index/%s.idx", dir, file);
	uint8_t *b = slurp(p, &n);
	if (!b || n < 16 + 4 * 72) {
		ok(false, "index %s readable with 4 entries or more", p);
		free(b);
		return;
	}
	size_t ne = (n - 16) / 72;
	uint8_t *e = b + 16;
	switch (how) {
	case IX_MAGIC:
		b[0] ^= 0x40;
		break;
	case IX_TRUNC:
		n -= 10;
		break;
	case IX_ORDER: {	/* entries 1 and 2 swapped */
		uint8_t t[72];
		memcpy(t, e + 72, 72);
		memcpy(e + 72, e + 144, 72);
		memcpy(e + 144, t, 72);
		break;
	}
	case IX_PAST:	/* the last packet twice as long */
		be64_put(e + (ne - 1) * 72 + 8, 2 * be64_at(e + (ne - 1) * 72 + 8));
		break;
	case IX_CSIZE:	/* entry 2's content_size 8 bits short: only the data tells */
		be64_put(e + 2 * 72 + 16, be64_at(e + 2 * 72 + 16) - 8);
		break;
	case IX_SEEKCSIZE:	/* the same on the entry a seek to seek_cyc lands on */
		for (size_t i = 0; i < ne; i++)
			if (be64_at(e + i * 72 + 32) >= (uint64_t)seek_cyc) {
				be64_put(e + i * 72 + 16, be64_at(e + i * 72 + 16) - 8);
				break;
			}
		break;
	case IX_V10:	/* LTTng 1.0: 56-byte entries */
		b[11] = 0;
		b[15] = 56;
		for (size_t i = 0; i < ne; i++)
			memmove(b + 16 + i * 56, e + i * 72, 56);
		n = 16 + ne * 56;
		break;
	}
	spew(p, b, n);
	free(b);
}

static void test_index(void)
{
	char dir[300], noidx[300], bad[300];
	struct reading full, a1, a2, b1, c, cf, d, v;
	/* write_many: clock offset 1700000000 s, events every ~1000 cycles */
	const int64_t off = 1700000000 * INT64_C(1000000000);
	const int64_t begin = off + 2200000;	/* about 3/4 into the streams */

	snprintf(dir, sizeof(dir), "%s/ix", root);
	snprintf(noidx, sizeof(noidx), "%s/ix-noidx", root);
	snprintf(bad, sizeof(bad), "%s/ix-bad", root);
	write_many(dir, 4, 3000);
	sh("rm -rf '%s' && cp -r '%s' '%s' && rm -rf '%s/index'", noidx, dir, noidx, noidx);

	read_all(dir, 0, 1, 0, &full);
	ok(full.n == 4 * 3000 && full.nerr == 0 && full.used == 4 && full.bad == 0,
	   "index: whole trace read, every stream's index used (%ld events, %d used, %d bad: %s)",
	   full.n, full.used, full.bad, full.warn);
	ok(full.packets >= 4 * 8, "index: several packets per stream (%llu)",
	   (unsigned long long)full.packets);

	/* begin: the same events with and without the index, fewer packets read */
	read_all(dir, begin, 1, 0, &a1);
	read_all(dir, begin, 2, 7, &a2);
	read_all(noidx, begin, 1, 0, &b1);
	ok(b1.n > 0 && b1.n < full.n && b1.used == 0 && b1.bad == 0,
	   "no index: %ld events from begin, no index reported", b1.n);
	ok(same_events(&a1, &b1) && a1.nerr == 0, "begin seek through the index: the same %ld events as without",
	   a1.n);
	ok(same_events(&a2, &b1) && a2.nerr == 0, "begin seek, decode-ahead worker: the same events");
	ok(a1.used == 4 && a1.bad == 0 && a2.used == 4, "begin seek: every index used");
	ok(a1.packets * 2 < b1.packets && a1.packets == a2.packets,
	   "begin seek: earlier packets not read (%llu packets vs %llu without the index)",
	   (unsigned long long)a1.packets, (unsigned long long)b1.packets);

	/* the skipped packets are never touched: garbage there changes nothing */
	sh("rm -rf '%s' && cp -r '%s' '%s'", bad, dir, bad);
	for (int i = 0; i < 4; i++) {
		char p[400];
		size_t n;
		snprintf(p, sizeof(p), "%s/chan_%d", bad, i);
		uint8_t *b = slurp(p, &n);
		if (b && n > 8192) {
			memset(b, 0xa5, 8192);	/* the first two 4 KiB packets */
			spew(p, b, n);
		}
		free(b);
	}
	read_all(bad, begin, 1, 0, &c);
	ok(same_events(&c, &b1) && c.nerr == 0 && c.used == 4,
	   "garbage in the skipped packets: the same events, no error (%d errors)", c.nerr);
	read_all(bad, 0, 1, 0, &cf);
	ok(cf.nskip == 4, "... which are garbage indeed: reading from the start skips them (%d "
	   "streams with a region skipped)", cf.nskip);
	free(c.ev);
	free(cf.ev);

	/* bad indexes: ignored with a warning, every event read */
	static const struct {
		enum ix_edit how;
		const char *what, *warn;
	} cases[] = {
		{ IX_MAGIC, "bad magic", "bad magic" },
		{ IX_TRUNC, "truncated", "truncated entry" },
		{ IX_ORDER, "offsets not increasing", "offset" },
		{ IX_PAST, "entry past the end of the file", "past the end of the file" },
		{ IX_CSIZE, "content_size disagreeing with the data", "content_size differs" },
	};
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		sh("rm -rf '%s' && cp -r '%s' '%s'", bad, dir, bad);
		edit_index(bad, "chan_1", cases[k].how, 0);
		read_all(bad, 0, 1, 0, &d);
		ok(same_events(&d, &full) && d.nerr == 0,
		   "index %s: every event read, no error (%ld)", cases[k].what, d.n);
		ok(d.bad == 1 && d.used == 3 && strstr(d.warn, "chan_1.idx") &&
		   strstr(d.warn, cases[k].warn),
		   "index %s: ignored with a warning (%s)", cases[k].what, d.warn);
		free(d.ev);
		read_all(bad, 0, 2, 5, &d);
		ok(same_events(&d, &full) && d.bad == 1, "index %s: the same with the worker",
		   cases[k].what);
		free(d.ev);
	}
	/* an index wrong where the seek lands: start over from the data */
	sh("rm -rf '%s' && cp -r '%s' '%s'", bad, dir, bad);
	edit_index(bad, "chan_2", IX_SEEKCSIZE, begin - off);
	read_all(bad, begin, 1, 0, &d);
	ok(same_events(&d, &b1) && d.nerr == 0 && d.bad == 1 && strstr(d.warn, "from the start"),
	   "index wrong at the seek target: read from the start, the same events (%s)", d.warn);
	free(d.ev);

	/* LTTng 1.0 indexes (56-byte entries) */
	sh("rm -rf '%s' && cp -r '%s' '%s'", bad, dir, bad);
	for (int i = 0; i < 4; i++) {
		char f[32];
		snprintf(f, sizeof(f), "chan_%d", i);
		edit_index(bad, f, IX_V10, 0);
	}
	read_all(bad, begin, 1, 0, &v);
	ok(same_events(&v, &b1) && v.used == 4 && v.bad == 0 && v.packets == a1.packets,
	   "1.0 indexes (56-byte entries): used for the seek (%d used, %d bad: %s)", v.used, v.bad,
	   v.warn);
	free(v.ev);
	read_all(bad, 0, 1, 0, &v);
	ok(same_events(&v, &full) && v.used == 4, "1.0 indexes: every event");
	free(v.ev);

	free(full.ev);
	free(a1.ev);
	free(a2.ev);
	free(b1.ev);
}


/*
 * Clock corrections (trawl_reader_opts.fixes): every event of a corrected
 * host has ts = xform(raw ts); the merge follows the corrected times; the
 * time range applies to them; threads or not, the same events.
 */
struct fixev {
	int64_t ts;
	uint64_t cycles;
	uint32_t a;
	char host[16];
};

static size_t read_fix(const char *const *paths, size_t np, struct trawl_reader_opts o,
		       struct fixev *out, size_t cap)
{
	char err[512] = "";
	struct trawl_reader *r = trawl_reader_new(paths, np, &o, err, sizeof(err));
	size_t n = 0;
	if (!r) {
		printf("# open: %s\n", err);
		return 0;
	}
	const struct trawl_event *ev;
	while (trawl_reader_next(r, &ev) == 1) {
		if (n < cap) {
			out[n].ts = ev->ts;
			out[n].cycles = ev->cycles;
			out[n].a = ev->nvalues ? (uint32_t)ev->values[0].u : 0;
			snprintf(out[n].host, sizeof(out[n].host), "%s",
				 trawl_reader_trace_hostname(trawl_reader_stream_trace(ev->stream)));
		}
		n++;
	}
	trawl_reader_free(r);
	return n;
}

static void test_fixes(void)
{
	char da[300], db[300];
	snprintf(da, sizeof(da), "%s/fix/hostA", root);
	snprintf(db, sizeof(db), "%s/fix/hostB", root);
	uint64_t a0[30], a1[30], b0[30], b1[30];
	for (int i = 0; i < 30; i++) {
		a0[i] = 1000 + 100 * (uint64_t)i;
		a1[i] = 1050 + 100 * (uint64_t)i;
		b0[i] = 5000 + 100 * (uint64_t)i;	/* B's clock runs 4000 ns ahead */
		b1[i] = 5020 + 100 * (uint64_t)i;
	}
	char top[300];
	snprintf(top, sizeof(top), "%s/fix", root);
	mkdir(top, 0755);
	mkdir(da, 0755);
	mkdir(db, 0755);
	write_merge_trace(da, "hostA", 1000, a0, 30, a1, 30);
	write_merge_trace(db, "hostB", 1000, b0, 30, b1, 30);
	const char *paths[] = { top };
	static struct fixev raw[200], cor[200], cor2[200];
	struct trawl_reader_opts o = { .sz = sizeof(o), .threads = 1 };
	size_t nraw = read_fix(paths, 1, o, raw, 200);
	is_int(nraw, 120, "120 events without correction");
	/* B -> reference: minus 4000 ns, and 1.001 times as fast around t0 */
	struct trawl_reader_clock_fix fx[2] = {
		{ "nohost", trawl_sync_xform_identity() },
		{ "hostB", { BASE_NS + 6000, BASE_NS + 2000, (int64_t)((1.0 + 1e-3) * (double)(INT64_C(1) << TRAWL_SYNC_SHIFT)) } },
	};
	o.fixes = fx;
	o.nfixes = 2;
	size_t ncor = read_fix(paths, 1, o, cor, 200);
	is_int(ncor, 120, "120 events with correction");
	bool vals = true, order = true;
	size_t nb = 0;
	for (size_t i = 0; i < ncor && i < 200; i++) {
		/* find the same event (host, a) in the raw reading */
		const struct fixev *m = NULL;
		for (size_t j = 0; j < nraw && !m; j++)
			if (raw[j].a == cor[i].a && strcmp(raw[j].host, cor[i].host) == 0)
				m = &raw[j];
		int64_t want = !m ? -1 : strcmp(cor[i].host, "hostB") ? m->ts
				      : trawl_sync_xform_apply(&fx[1].xform, m->ts);
		if (!m || cor[i].ts != want || cor[i].cycles != m->cycles) {
			if (vals)
				printf("# event %zu (%s a=%u): ts %lld want %lld\n", i, cor[i].host,
				       cor[i].a, (long long)cor[i].ts, (long long)want);
			vals = false;
		}
		if (i && cor[i].ts < cor[i - 1].ts)
			order = false;
		nb += strcmp(cor[i].host, "hostB") == 0;
	}
	ok(vals, "corrected host: ts = xform(raw ts), raw cycles kept; other host untouched");
	ok(order, "merged in corrected time order");
	is_int(nb, 60, "60 events of hostB");
	/* hostB's first event (raw 5000) now lands at 2000 + 1.001 * -1000 = 999 */
	ok(cor[0].ts == BASE_NS + 999 && strcmp(cor[0].host, "hostB") == 0,
	   "hostB's first event is first after correction (%lld)", (long long)(cor[0].ts - BASE_NS));
	/* same with the decode-ahead worker */
	o.threads = 2;
	size_t n2 = read_fix(paths, 1, o, cor2, 200);
	ok(n2 == ncor && memcmp(cor, cor2, sizeof(cor[0]) * ncor) == 0,
	   "the same events with a worker thread");
	/* the time range applies to corrected times */
	o.threads = 1;
	o.begin = BASE_NS + 1000;
	o.end = BASE_NS + 1500;
	size_t nr = read_fix(paths, 1, o, cor2, 200);
	size_t want_r = 0;
	for (size_t i = 0; i < ncor; i++)
		want_r += cor[i].ts >= o.begin && cor[i].ts <= o.end;
	ok(nr == want_r && nr > 0, "begin/end on corrected times: %zu events (want %zu)", nr, want_r);
	bool inr = true;
	for (size_t i = 0; i < nr && i < 200; i++)
		inr &= cor2[i].ts >= o.begin && cor2[i].ts <= o.end;
	ok(inr, "every event in the range");
}

/* ------------------------------------------------- random layouts */

/*
 * Event classes of random fixed and semi-fixed layouts (integers of every
 * byte size and sign, floats, char arrays with and without their NUL,
 * static arrays, strings, byte and 16-bit sequences), long enough to pass
 * the 64 bytes and 16 values the vector decoder takes; random values
 * written by the writer, read back with a worker (the fast fill loop, with
 * vectors when the CPU has them, see TRAWL_NO_SIMD) and compared value by
 * value with what was written.
 */
enum { RK_U, RK_S, RK_F32, RK_F64, RK_TEXT, RK_ARR, RK_STR, RK_SEQ8, RK_SEQ16, RK_N };

struct rfield {
	int kind;
	unsigned bits;		/* RK_U, RK_S */
	unsigned n;		/* RK_TEXT: bytes */
};

struct rclass {
	struct rfield f[28];
	int nf;
	struct trawl_ctf_event_class *ec[2];
};

struct rval {
	int kind;		/* 0: .u, 1: .d bits, 2: string */
	uint64_t u;
	uint32_t soff, slen;	/* kind 2: in the pool */
};

static uint64_t rl_state = 88172645463325252ull;

static void test_random_layouts(void)
{
	enum { NCLS = 14, NSTREAMS = 4, NEV = 6000 };
	char dir[300];
	struct trawl_ctf_writer_opts wo = {
		.sz = sizeof(wo), .path = dir, .hostname = "layouts", .domain = "ust",
		.clock_offset_s = 1700000000, .packet_size = 16384,
	};
	static struct rclass cl[NCLS];
	/* grown before each event by what one event can take at most */
	size_t capw = 1 << 16, capp = 1 << 16, npool = 0, nwant = 0;
	struct rval *want = malloc(capw * sizeof(*want));
	uint32_t *wstart = calloc(NEV + 1, sizeof(*wstart)), *wcls = calloc(NEV, sizeof(*wcls));
	char *pool = malloc(capp);

	snprintf(dir, sizeof(dir), "%s/layouts", root);
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&wo);
	if (!w || !want || !wstart || !wcls || !pool)
		abort();
	struct trawl_ctf_type *ch = trawl_ctf_type_int(w, 8, false, 10);
	ch->u.i.encoding = TRAWL_CTF_ENC_UTF8;
	struct trawl_ctf_type *u16 = trawl_ctf_type_int(w, 16, false, 10);
	struct trawl_ctf_stream_class *sc[2] = {
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_COMPACT, NULL),
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL),
	};
	for (int c = 0; c < NCLS; c++) {
		struct rclass *k = &cl[c];
		bool semi = c % 2;
		struct trawl_ctf_type *st = trawl_ctf_type_struct(w);
		/* a few short ones; two of 9 to 16 narrow fields (two vector
		 * groups within 64 bytes); the others up to 28 fields */
		bool narrow = c == 4 || c == 5;
		k->nf = narrow ? 9 + (int)(tap_xorshift(&rl_state) % 8) : 1 + (int)(tap_xorshift(&rl_state) % (c < 4 ? 6 : 28));
		for (int i = 0; i < k->nf; i++) {
			struct rfield *f = &k->f[i];
			char name[16], len[16];
			struct trawl_ctf_type *t = NULL;
			snprintf(name, sizeof(name), "f%d", i);
			do
				f->kind = (int)(tap_xorshift(&rl_state) % RK_N);
			while ((!semi && f->kind >= RK_STR) || (semi && i < 2 && f->kind >= RK_STR) ||
			       (narrow && f->kind != RK_U && f->kind != RK_S && f->kind != RK_F32));
			f->bits = 8u << (tap_xorshift(&rl_state) % (narrow ? 3 : 4));
			f->n = 1 + (unsigned)(tap_xorshift(&rl_state) % 70);
			switch (f->kind) {
			case RK_U: case RK_S:
				t = trawl_ctf_type_int(w, f->bits, f->kind == RK_S, 10);
				break;
			case RK_F32: t = trawl_ctf_type_float(w, 32); break;
			case RK_F64: t = trawl_ctf_type_float(w, 64); break;
			case RK_TEXT: t = trawl_ctf_type_array(w, ch, f->n); break;
			case RK_ARR: t = trawl_ctf_type_array(w, u16, 3); break;
			case RK_STR: t = trawl_ctf_type_string(w); break;
			case RK_SEQ8: case RK_SEQ16:
				snprintf(len, sizeof(len), "n%d", i);
				if (trawl_ctf_struct_add(w, st, len, trawl_ctf_type_int(w, 32, false, 10)))
					abort();
				t = trawl_ctf_type_sequence(w, f->kind == RK_SEQ8 ?
							       trawl_ctf_type_int(w, 8, false, 10) : u16, len);
				break;
			}
			if (!t || trawl_ctf_struct_add(w, st, name, t))
				abort();
		}
		char cname[16];
		snprintf(cname, sizeof(cname), "l%d", c);
		k->ec[0] = trawl_ctf_writer_event_class(w, sc[0], cname, 0, st);
		k->ec[1] = trawl_ctf_writer_event_class(w, sc[1], cname, 0, st);
		if (!k->ec[0] || !k->ec[1])
			abort();
	}
	struct trawl_ctf_wstream *ws[NSTREAMS];
	for (int i = 0; i < NSTREAMS; i++)
		ws[i] = trawl_ctf_writer_stream(w, sc[i % 2], "chan", (uint32_t)i);
	static uint8_t buf[8192];
	for (int e = 0; e < NEV; e++) {
		int c = (int)(tap_xorshift(&rl_state) % NCLS), si = (int)(tap_xorshift(&rl_state) % NSTREAMS);
		const struct rclass *k = &cl[c];
		struct trawl_ctf_buf b;
		trawl_ctf_buf_init(&b, buf, sizeof(buf));
		if (nwant + 28 * 102 > capw && !(want = realloc(want, (capw *= 2) * sizeof(*want))))
			abort();
		if (npool + 28 * 151 > capp && !(pool = realloc(pool, capp *= 2)))
			abort();
		wstart[e] = (uint32_t)nwant;
		wcls[e] = (uint32_t)c;
		for (int i = 0; i < k->nf; i++) {
			const struct rfield *f = &k->f[i];
			uint64_t r = tap_xorshift(&rl_state), u;
			struct rval *v = &want[nwant++];
			switch (f->kind) {
			case RK_U: case RK_S:
				u = f->bits == 64 ? r : r & ((UINT64_C(1) << f->bits) - 1);
				trawl_ctf_buf_put(&b, &u, f->bits / 8);
				if (f->kind == RK_S && f->bits < 64 && (u >> (f->bits - 1) & 1))
					u |= ~UINT64_C(0) << f->bits;	/* sign-extended */
				*v = (struct rval){ 0, u, 0, 0 };
				break;
			case RK_F32: {
				float x = (float)(int32_t)r / 7.0f;
				double d = x;
				trawl_ctf_buf_f32(&b, x);
				memcpy(&u, &d, 8);
				*v = (struct rval){ 1, u, 0, 0 };
				break;
			}
			case RK_F64: {
				double d = (double)(int64_t)r / 3.0;
				trawl_ctf_buf_f64(&b, d);
				memcpy(&u, &d, 8);
				*v = (struct rval){ 1, u, 0, 0 };
				break;
			}
			case RK_TEXT: {
				/* a NUL somewhere, or none in a third of them */
				unsigned nul = r % 3 ? (unsigned)(r >> 8) % f->n : f->n;
				for (unsigned j = 0; j < f->n; j++)
					pool[npool + j] = j == nul ? 0 : (char)('a' + (r >> (j % 40)) % 26);
				trawl_ctf_buf_put(&b, pool + npool, f->n);
				*v = (struct rval){ 2, 0, (uint32_t)npool, nul };
				npool += f->n;
				break;
			}
			case RK_ARR:
				*v = (struct rval){ 0, 3, 0, 0 };
				for (int j = 0; j < 3; j++) {
					uint16_t x = (uint16_t)(r >> (16 * j));
					trawl_ctf_buf_u16(&b, x);
					want[nwant++] = (struct rval){ 0, x, 0, 0 };
				}
				break;
			case RK_STR: {
				/* some past 64; some at the ends of the decoders' first
				 * scan (32 bytes plain, 64 vector) */
				static const unsigned edge[] = { 31, 32, 33, 63, 64, 65 };
				unsigned n = (unsigned)(r % 5 == 0 ? r % 150 : r % 5 == 1 ? edge[(r >> 8) % 6]
										 : r % 20);
				for (unsigned j = 0; j < n; j++)
					pool[npool + j] = (char)('A' + (r >> (j % 50)) % 26);
				pool[npool + n] = 0;
				trawl_ctf_buf_str(&b, pool + npool);
				*v = (struct rval){ 2, 0, (uint32_t)npool, n };
				npool += n + 1;
				break;
			}
			case RK_SEQ8: case RK_SEQ16: {
				uint32_t n = (uint32_t)(r % 4 ? r % 20 : r % 100);
				trawl_ctf_buf_u32(&b, n);
				*v = (struct rval){ 0, n, 0, 0 };
				want[nwant++] = (struct rval){ 0, n, 0, 0 };	/* the count */
				for (uint32_t j = 0; j < n; j++) {
					uint64_t x = tap_xorshift(&rl_state) & (f->kind == RK_SEQ8 ? 0xff : 0xffff);
					trawl_ctf_buf_put(&b, &x, f->kind == RK_SEQ8 ? 1 : 2);
					want[nwant++] = (struct rval){ 0, x, 0, 0 };
				}
				break;
			}
			}
		}
		if (trawl_ctf_wstream_event(ws[si], k->ec[si % 2], 1000 + (uint64_t)e * 10, buf, b.len))
			abort();
	}
	wstart[NEV] = (uint32_t)nwant;
	if (trawl_ctf_writer_close(w))
		abort();
	trawl_ctf_writer_free(w);

	for (int threads = 1; threads <= 2; threads++) {
		struct trawl_reader_opts o = { .sz = sizeof(o) };
		struct trawl_reader *r = open_t(dir, o, (unsigned)threads, 0);
		const struct trawl_event *ev;
		long n = 0, bad = 0;
		while (r && trawl_reader_next(r, &ev) == 1 && n < NEV) {
			const struct rval *x = &want[wstart[n]];
			uint32_t nv = wstart[n + 1] - wstart[n];
			char cname[16];
			snprintf(cname, sizeof(cname), "l%u", wcls[n]);
			bool same = ev->ts - 1700000000 * INT64_C(1000000000) == 1000 + n * 10 &&
				    strcmp(ev->cls->name, cname) == 0 && ev->nvalues == nv;
			for (uint32_t i = 0; same && i < nv; i++) {
				const union trawl_ctf_value *y = &ev->values[i];
				if (x[i].kind == 2)
					same = y->s.len == x[i].slen &&
					       memcmp(y->s.p, pool + x[i].soff, x[i].slen) == 0;
				else
					same = y->u == x[i].u;
				if (!same)
					printf("# threads %d: event %ld (%s) value %u: %#llx, want %#llx\n",
					       threads, n, cname, i, (unsigned long long)y->u,
					       (unsigned long long)x[i].u);
			}
			if (!same && bad++ < 3)
				printf("# threads %d: event %ld differs\n", threads, n);
			n++;
		}
		is_int(n, NEV, "random layouts, threads %d: every event", threads);
		is_int(bad, 0, "random layouts, threads %d: every value as written", threads);
		trawl_reader_free(r);
	}
	free(want);
	free(wstart);
	free(wcls);
	free(pool);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/test-reader-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_types();
	test_timestamps();
	test_merge();
	test_event_filter();
	test_corrupt();
	test_writer();
	test_threaded();
	test_progress();
	test_cpu_change();
	test_index();
	test_fixes();
	test_random_layouts();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (!getenv("TEST_READER_KEEP") && system(cmd) != 0)
		printf("# could not remove %s\n", root);
	return done_testing();
}
