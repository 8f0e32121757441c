/* SPDX-License-Identifier: MIT */
/*
 * test-agg: aggregations (trawl/agg.h) on a synthetic kernel-like trace
 * written here, with figures known exactly:
 *  - thread a (tid 10, cpu 0) reads 100 times, latency 100, 200, ...,
 *    10000 ns, ret = i; thread b (tid 20, cpu 1) writes 100 times,
 *    latency 1024, 2048, 4096, 8192 in turn; comms come from sched_switch;
 *    one write exit of tid 10 has no entry (unpaired), one read entry of
 *    tid 20 is followed by a write exit (another syscall: not a pair);
 *  - count, sum, min, max, avg, stats, hist (each log2 bucket), lhist,
 *    llhist, top N, keys by comm, cpu, tid, event and a field;
 *  - intervals: each closed interval's figures, then cleared;
 *  - a heat map's cells and its SVG (one rect per non-empty cell, one
 *    label per bucket row); the statement's errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/agg.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"

static char root[] = "/tmp/trawl-test-agg-XXXXXX";
static const uint64_t BASE = 1000;	/* ns after the clock's offset */

enum { N = 100 };

static int write_trace(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "h1", .domain = "kernel",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "tid", s32);
	struct trawl_ctf_type *fd = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, fd, "fd", s32);
	struct trawl_ctf_type *ret = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ret, "ret", s64);
	struct trawl_ctf_type *sw = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, sw, "prev_comm", str);
	trawl_ctf_struct_add(w, sw, "prev_tid", s32);
	trawl_ctf_struct_add(w, sw, "next_comm", str);
	trawl_ctf_struct_add(w, sw, "next_tid", s32);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, ctx);
	struct trawl_ctf_event_class *esw = trawl_ctf_writer_event_class(w, sc, "sched_switch", 0, sw);
	struct trawl_ctf_event_class *er = trawl_ctf_writer_event_class(w, sc, "syscall_entry_read", 0, fd);
	struct trawl_ctf_event_class *xr = trawl_ctf_writer_event_class(w, sc, "syscall_exit_read", 0, ret);
	struct trawl_ctf_event_class *ew = trawl_ctf_writer_event_class(w, sc, "syscall_entry_write", 0, fd);
	struct trawl_ctf_event_class *xw = trawl_ctf_writer_event_class(w, sc, "syscall_exit_write", 0, ret);
	struct trawl_ctf_wstream *s0 = trawl_ctf_writer_stream(w, sc, "channel0", 0);
	struct trawl_ctf_wstream *s1 = trawl_ctf_writer_stream(w, sc, "channel0", 1);
	if (!esw || !er || !xr || !ew || !xw || !s0 || !s1) {
		trawl_ctf_writer_free(w);
		return -1;
	}
	uint8_t buf[256];
	struct trawl_ctf_buf b;
	int rc = 0;
#define EV(s, cls, ts, ...) do { trawl_ctf_buf_init(&b, buf, sizeof(buf)); __VA_ARGS__; \
	if (!rc) rc = trawl_ctf_wstream_event(s, cls, ts, buf, b.len); } while (0)
	EV(s0, esw, 0, trawl_ctf_buf_u32(&b, 0); trawl_ctf_buf_str(&b, "swapper/0");
	   trawl_ctf_buf_u32(&b, 0); trawl_ctf_buf_str(&b, "a"); trawl_ctf_buf_u32(&b, 10));
	EV(s1, esw, 0, trawl_ctf_buf_u32(&b, 0); trawl_ctf_buf_str(&b, "swapper/1");
	   trawl_ctf_buf_u32(&b, 0); trawl_ctf_buf_str(&b, "b"); trawl_ctf_buf_u32(&b, 20));
	/* an exit of tid 10 without its entry */
	EV(s0, xw, 500, trawl_ctf_buf_u32(&b, 10); trawl_ctf_buf_u64(&b, 0));
	for (int i = 0; i < N; i++) {
		uint64_t t = BASE + 10000 * (uint64_t)i;
		EV(s0, er, t, trawl_ctf_buf_u32(&b, 10); trawl_ctf_buf_u32(&b, 3 + i % 2));
		EV(s0, xr, t + 100 * (uint64_t)(i + 1), trawl_ctf_buf_u32(&b, 10);
		   trawl_ctf_buf_u64(&b, (uint64_t)i));
	}
	for (int i = 0; i < N; i++) {
		uint64_t t = BASE + 10000 * (uint64_t)i + 5;
		EV(s1, ew, t, trawl_ctf_buf_u32(&b, 20); trawl_ctf_buf_u32(&b, 1));
		EV(s1, xw, t + (1024u << (i % 4)), trawl_ctf_buf_u32(&b, 20); trawl_ctf_buf_u64(&b, 8));
	}
	/* a read entry then a write exit: not a pair */
	EV(s1, er, BASE + 10000 * N + 100, trawl_ctf_buf_u32(&b, 20); trawl_ctf_buf_u32(&b, 1));
	EV(s1, xw, BASE + 10000 * N + 200, trawl_ctf_buf_u32(&b, 20); trawl_ctf_buf_u64(&b, 0));
#undef EV
	if (!rc)
		rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

/* Runs spec over the trace; the agg (NULL on failure). */
static struct trawl_agg *run(const char *dir, const char *spec, int64_t interval,
			     void (*cb)(void *, struct trawl_agg *, int64_t, int64_t), void *arg)
{
	char err[512] = "";
	struct trawl_agg_opts ao = { .sz = sizeof(ao), .spec = spec, .interval = interval,
				     .on_interval = cb, .arg = arg };
	struct trawl_agg *a = trawl_agg_new(&ao, err, sizeof(err));
	const char *p[] = { dir };
	struct trawl_reader *r = trawl_reader_new(p, 1, NULL, err, sizeof(err));

	if (!a || !r) {
		ok(0, "%s: %s", spec, err);
		trawl_agg_free(a);
		trawl_reader_free(r);
		return NULL;
	}
	struct trawl_sink k = trawl_agg_sink(a);
	int rc = trawl_pipe_run(r, &k, 1, NULL);
	is_int(rc, 0, "%s: the run (%s)", spec, trawl_agg_error(a));
	trawl_reader_free(r);
	return a;
}

/* Row r of aggregation i, or a zeroed row. */
static struct trawl_agg_row row(struct trawl_agg *a, size_t i, size_t r)
{
	struct trawl_agg_row w = { .sz = sizeof(w) };
	static const char *none[] = { "?", "?" };
	if (trawl_agg_row(a, i, r, &w) < 0)
		w.key = none;
	return w;
}

static void test_tables(const char *dir)
{
	struct trawl_agg *a = run(dir,
		"count(syscall_entry_*) by comm; sum(syscall_exit_read.ret); "
		"stats(lat(syscall_entry_*, syscall_exit_*)) by comm, cpu; "
		"count(syscall_entry_read) by fd; max(syscall_exit_*.ret) by event, tid top 1",
		0, NULL, NULL);
	if (!a)
		return;
	is_int(trawl_agg_n(a), 5, "five aggregations");
	is_str(trawl_agg_text(a, 2), "stats(lat(syscall_entry_*, syscall_exit_*)) by comm, cpu",
	       "written back normalized");
	/* count by comm: b made one more entry (the read before a write exit) */
	is_int(trawl_agg_nrows(a, 0), 2, "count by comm: 2 rows");
	struct trawl_agg_row r0 = row(a, 0, 0), r1 = row(a, 0, 1);
	is_str(r0.key[0], "b", "... b first (the larger count)");
	is_int((long long)r0.count, N + 1, "... b: 101 entries");
	is_str(r1.key[0], "a", "... then a");
	is_int((long long)r1.count, N, "... a: 100 entries");
	/* sum of ret of reads: 0 + 1 + ... + 99 */
	r0 = row(a, 1, 0);
	is_int((long long)r0.sum, N * (N - 1) / 2, "sum(syscall_exit_read.ret) = 4950");
	is_int((long long)r0.count, N, "... over 100 values");
	/* latencies: a 100 .. 10000 step 100; b 1024, 2048, 4096, 8192 */
	is_int(trawl_agg_nrows(a, 2), 2, "stats(lat) by comm, cpu: 2 rows");
	for (size_t i = 0; i < 2; i++) {
		struct trawl_agg_row r = row(a, 2, i);
		bool isa = !strcmp(r.key[0], "a");
		is_str(r.key[1], isa ? "0" : "1", "... %s ran on cpu %d", r.key[0], isa ? 0 : 1);
		is_int((long long)r.count, N, "... %s: 100 pairs (the mismatched ones left out)", r.key[0]);
		is_int((long long)r.sum, isa ? 100 * 5050 : 25 * 15360, "... %s: sum", r.key[0]);
		is_int((long long)r.min, isa ? 100 : 1024, "... %s: min", r.key[0]);
		is_int((long long)r.max, isa ? 10000 : 8192, "... %s: max", r.key[0]);
		is_int((long long)llround(r.avg * 10), isa ? 50500 : 38400, "... %s: avg", r.key[0]);
		/* population stddev: a = 100 * sqrt((N^2 - 1) / 12); b: of 1, 2, 4, 8 K */
		double want = isa ? 100 * sqrt((N * N - 1) / 12.0) :
			1024 * sqrt((1 + 4 + 16 + 64) / 4.0 - 3.75 * 3.75);
		ok(fabs(r.stddev - want) < 1e-6 * want, "... %s: stddev %.3f (want %.3f)", r.key[0],
		   r.stddev, want);
	}
	is_int(trawl_agg_unpaired(a), 2, "two exits without their entry: unpaired");
	/* a field as key */
	is_int(trawl_agg_nrows(a, 3), 3, "count by fd: 3 rows");
	r0 = row(a, 3, 0);
	r1 = row(a, 3, 1);
	struct trawl_agg_row r2 = row(a, 3, 2);
	is_str(r0.key[0], "3", "... fd 3 first (tie: by key)");
	is_str(r2.key[0], "1", "... fd 1 last (b's one read)");
	is_int((long long)(r0.count * 1000000 + r1.count * 1000 + r2.count), 50050001LL,
	       "... 50, 50 and 1");
	/* top 1 of max(ret) by event, tid: read's 99 */
	is_int(trawl_agg_nrows(a, 4), 1, "top 1: one row");
	r0 = row(a, 4, 0);
	is_str(r0.key[0], "syscall_exit_read", "... syscall_exit_read");
	is_str(r0.key[1], "10", "... of tid 10");
	is_int((long long)r0.max, 99, "... its max ret: 99");
	trawl_agg_free(a);
}

static void test_hists(const char *dir)
{
	struct trawl_agg *a = run(dir,
		"hist(lat(syscall_entry_*, syscall_exit_*)) by comm; "
		"lhist(lat(syscall_entry_read, syscall_exit_read), 0, 10000, 1000); "
		"llhist(lat(syscall_entry_read, syscall_exit_read))", 0, NULL, NULL);
	if (!a)
		return;
	/* log2 buckets of a: [64,128) 1, [128,256) 1, [256,512) 3, [512,1K) 5,
	 * [1K,2K) 10, [2K,4K) 20, [4K,8K) 41 (4100 .. 8100), [8K,16K) 19; b:
	 * 25 in each of [1K,2K) .. [8K,16K) */
	static const uint64_t wa[] = { 1, 1, 3, 5, 10, 20, 41, 19 };
	for (size_t i = 0; i < 2; i++) {
		struct trawl_agg_row r = row(a, 0, i);
		bool isa = !strcmp(r.key[0], "a");
		char got[256] = "", want[256] = "";
		size_t g = 0, wl = 0;
		is_int(r.nbuckets, 66, "hist: 66 log2 buckets");
		for (size_t b = 0; b < r.nbuckets; b++)
			if (r.buckets[b])
				g += (size_t)snprintf(got + g, sizeof(got) - g, "%lld:%llu ",
					(long long)trawl_agg_bucket_low(a, 0, b),
					(unsigned long long)r.buckets[b]);
		for (size_t k = 0; k < 8; k++) {
			int64_t low = 64LL << k;
			if (isa)
				wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%lld:%llu ",
						       (long long)low, (unsigned long long)wa[k]);
			else if (low >= 1024)
				wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%lld:25 ",
						       (long long)low);
		}
		is_str(got, want, "hist of %s: every bucket", r.key[0]);
	}
	/* lhist(0, 10000, 1000): under, [0,1000) 9, then 10 each, >= 10000: 1 */
	struct trawl_agg_row r = row(a, 1, 0);
	is_int(r.nbuckets, 12, "lhist(0, 10000, 1000): 10 buckets + below + above");
	char got[256] = "";
	size_t g = 0;
	for (size_t b = 0; b < r.nbuckets; b++)
		g += (size_t)snprintf(got + g, sizeof(got) - g, "%llu ", (unsigned long long)r.buckets[b]);
	is_str(got, "0 9 10 10 10 10 10 10 10 10 10 1 ", "lhist: every bucket");
	is_int(trawl_agg_bucket_low(a, 1, 2), 1000, "lhist: bucket 2 starts at 1000");
	/* the bounds above, the text's and the JSON's: the next bucket's
	 * start, none for the last (log2: [2^62, 2^63), an int64's last) */
	is_int(trawl_agg_bucket_high(a, 0, 9), 256, "hist: [128, 256) ends at 256");
	is_int(trawl_agg_bucket_high(a, 0, 63), 1LL << 62, "hist: [2^61, 2^62) ends at 2^62");
	is_int(trawl_agg_bucket_high(a, 0, 64), INT64_MAX, "hist: [2^62, 2^63) is the last: no bound");
	is_int(trawl_agg_bucket_high(a, 1, 1), 1000, "lhist: [0, 1000) ends at 1000");
	is_int(trawl_agg_bucket_high(a, 1, 0), 0, "lhist: the bucket below ends at 0");
	is_int(trawl_agg_bucket_high(a, 1, 11), INT64_MAX, "lhist: >= 10000 is the last: no bound");
	/* llhist(10, 0, 9, 10): 100 .. 900 one each in [100,1000) by 100,
	 * 1000 .. 9000 by 1000: 10 each, 10000 in [10000, 20000) */
	r = row(a, 2, 0);
	g = 0;
	got[0] = 0;
	for (size_t b = 0; b < r.nbuckets; b++)
		if (r.buckets[b])
			g += (size_t)snprintf(got + g, sizeof(got) - g, "%lld:%llu ",
				(long long)trawl_agg_bucket_low(a, 2, b), (unsigned long long)r.buckets[b]);
	is_str(got, "100:1 200:1 300:1 400:1 500:1 600:1 700:1 800:1 900:1 1000:10 2000:10 "
	       "3000:10 4000:10 5000:10 6000:10 7000:10 8000:10 9000:10 10000:1 ",
	       "llhist: magnitudes of 10 in 10 steps");
	trawl_agg_free(a);
}

struct iv {
	int n;
	int64_t first_begin, last_end;
	uint64_t counts[32];
	bool ok;
};

static void on_iv(void *arg, struct trawl_agg *a, int64_t begin, int64_t end)
{
	struct iv *v = arg;
	if (v->n == 0)
		v->first_begin = begin;
	else if (begin != v->last_end)
		v->ok = false;
	v->last_end = end;
	uint64_t c = 0;
	for (size_t r = 0; r < trawl_agg_nrows(a, 0); r++)
		c += row(a, 0, r).count;
	if (v->n < 32)
		v->counts[v->n] = c;
	v->n++;
}

static void test_intervals(const char *dir)
{
	struct iv v = { .ok = true };
	/* 100 us intervals: entries at BASE + 10 us * i (+5 ns): 10 of each
	 * thread per interval; the last (the unpaired read) alone */
	struct trawl_agg *a = run(dir, "count(syscall_entry_*) by comm", 100000, on_iv, &v);
	if (!a)
		return;
	is_int(v.n, 11, "11 intervals of 100 us");
	ok(v.ok, "... one after the other");
	is_int(v.first_begin, 1700000000LL * 1000000000, "... the first aligned on its length");
	char got[256] = "";
	size_t g = 0;
	for (int i = 0; i < v.n && i < 32; i++)
		g += (size_t)snprintf(got + g, sizeof(got) - g, "%llu ", (unsigned long long)v.counts[i]);
	is_str(got, "20 20 20 20 20 20 20 20 20 20 1 ", "... each interval's own count");
	trawl_agg_free(a);
}

static void test_heatmap(const char *dir)
{
	struct trawl_agg *a = run(dir, "heatmap(lat(syscall_entry_*, syscall_exit_*))", 0, NULL, NULL);
	if (!a)
		return;
	size_t nc = trawl_agg_heat_ncols(a, 0);
	/* the last read ends at 1.001 ms: a second column, for it alone */
	is_int(nc, 2, "heat map of a 1 ms trace: two columns of 1 ms");
	is_int(trawl_agg_heat_col_width(a, 0), 1000000, "... 1 ms wide");
	is_int(trawl_agg_heat_col_begin(a, 0, 1), 1700000000LL * 1000000000 + 1000000,
	       "... aligned on their width");
	/* bucket [1K, 2K) = index 12: a's 10 + b's 25 */
	is_int(trawl_agg_heat_cell(a, 0, 0, 12), 35, "... its [1K, 2K) cell: 35");
	is_int(trawl_agg_heat_cell(a, 0, 0, 8), 1, "... its [64, 128) cell: 1");
	is_int(trawl_agg_heat_cell(a, 0, 0, 15) * 100 + trawl_agg_heat_cell(a, 0, 1, 15), (18 + 25) * 100 + 1,
	       "... [8K, 16K): 18 + 25 in the first column, the last read in the second");
	char path[256];
	snprintf(path, sizeof(path), "%s/h.svg", root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	is_int(trawl_agg_write_svg(a, 0, fd), 0, "the SVG written");
	close(fd);
	size_t len;
	char *svg = (char *)slurp(path, &len);
	int cells = 0, ylabels = 0, legend = 0;
	for (char *p = svg; p && (p = strstr(p, "class=\"")); p++) {
		cells += !strncmp(p, "class=\"cell\"", 12);
		ylabels += !strncmp(p, "class=\"ylabel\"", 14);
		legend += !strncmp(p, "class=\"swatch\"", 14);
	}
	/* non-empty buckets: [64,128) .. [8K,16K): 8 cells, 8 rows; 1 more */
	is_int(cells, 9, "SVG: one rect per non-empty cell");
	is_int(ylabels, 8, "SVG: one label per bucket row");
	is_int(legend, 6, "SVG: a legend of 6 swatches");
	ok(svg && strstr(svg, "<title>35</title>") && strstr(svg, "</svg>"),
	   "SVG: cells titled with their counts, closed");
	free(svg);
	ok(trawl_agg_write_svg(a, 1, 1) == -EINVAL, "no heat map 1: EINVAL");
	trawl_agg_free(a);

	/* with 100 ns intervals: 10010 columns, the oldest dropped beyond 4096 */
	a = run(dir, "heatmap(lat(syscall_entry_*, syscall_exit_*))", 100, NULL, NULL);
	if (!a)
		return;
	nc = trawl_agg_heat_ncols(a, 0);
	ok(nc > 0 && nc <= 4096, "100 ns intervals: at most 4096 columns kept (%zu)", nc);
	is_int(nc ? trawl_agg_heat_col_begin(a, 0, nc - 1) : 0, 1700000000LL * 1000000000 + 1001000,
	       "... the last is the last read's exit (at +1.001 ms)");
	uint64_t last = 0;
	for (size_t b = 0; nc && b < 66; b++)
		last += trawl_agg_heat_cell(a, 0, nc - 1, b);
	is_int(last, 1, "... holding that one value");
	trawl_agg_free(a);
}

static void test_errors(void)
{
	static const struct { const char *spec, *msg; } bad[] = {
		{ "", "no aggregation" },
		{ "cnt(x)", "column 1: a function is expected" },
		{ "sum(syscall_entry_read)", "only count() takes events" },
		{ "hist(lat(a b))", "',' is expected" },
		{ "lhist(x.y, 10, 0, 1)", "MIN < MAX" },
		{ "count(x) by", "a key is expected" },
		{ "count(x) top 0", "N > 0" },
		{ "count(x) count(y)", "';' or the end is expected" },
		{ "heatmap(x.y) by comm", "takes no keys" },
		{ "lhist(x.y, 0, 1000000, 1)", "more than 4096 buckets" },
		{ "hist(x.y, 5)", "takes no numbers" },
		{ "count(x) by a,b,c,d,e,f,g,h,i", "more than 8 keys" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		struct trawl_agg_opts ao = { .sz = sizeof(ao), .spec = bad[i].spec };
		struct trawl_agg *a = trawl_agg_new(&ao, err, sizeof(err));
		ok(!a && errno == EINVAL && strstr(err, bad[i].msg), "'%s': EINVAL, '%s' (%s)",
		   bad[i].spec, bad[i].msg, err);
		trawl_agg_free(a);
	}
	char err[256];
	struct trawl_agg_opts ao = { .sz = sizeof(ao), .spec = "lhist(x.y, 1ms, 1s, 10ms)" };
	struct trawl_agg *a = trawl_agg_new(&ao, err, sizeof(err));
	ok(a != NULL, "units: lhist(x.y, 1ms, 1s, 10ms)");
	is_str(a ? trawl_agg_text(a, 0) : "", "lhist(x.y, 1000000, 1000000000, 10000000)",
	       "... in ns");
	trawl_agg_free(a);
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/t", root);
	ok(write_trace(dir) == 0, "the trace written");
	test_tables(dir);
	test_hists(dir);
	test_intervals(dir);
	test_heatmap(dir);
	test_errors();
	tap_rm_tree(root);
	return done_testing();
}
