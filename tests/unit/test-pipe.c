/* SPDX-License-Identifier: MIT */
/*
 * test-pipe: the pipeline's seams (trawl/pipe.h).
 *  - field binding: fixed places, places after a sequence (walked), nested
 *    structs, the event context, globs over several classes; every value
 *    read through a binding equals the one written; the errors at bind
 *    time (bad spec, no event, no field, a type mismatch) and OPTIONAL;
 *  - trawl_pipe_run(): every event to every sink in order, in batches, the
 *    limit, a sink's error stops the run and every started sink finishes;
 *  - what the sinks want (trawl_sink_ops.wants): with a worker, the events
 *    of other classes are left out but for the ends of batches and
 *    streams; what comes is the whole run's, in order, values equal; a
 *    sink without wants() or a limit turns it off;
 *  - sources: a memory source reads as the files of the same trace; two
 *    sources in one reader merge in time order, each with its own clock
 *    correction and host filter; a source given twice is refused;
 *  - formats: the json format writes one object per line with the values;
 *    an unknown format is refused;
 *  - live reading, without a network: a scripted live source ("drip")
 *    hands out a trace's packets one poll at a time in time order, with
 *    beacons, polls with nothing new, a stream announced before its data
 *    and metadata that grows a class mid-way; the reader returns exactly
 *    the events of the finished files in the same order, says -EAGAIN
 *    when a wait brought nothing, its low (trawl_reader_low()) rises with
 *    the holds and no event comes below it, and a field of the class that
 *    came late is bound (OPTIONAL) and read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "pipe/pipe-internal.h"	/* the drip source: a live source, scripted */

static char root[] = "/tmp/trawl-test-pipe-XXXXXX";

enum { N = 3000 };

/*
 * A trace: stream class with event context { vtid }; events
 *   t:fix  { n: s32, s: string, big: u64 }                 every i
 *   t:var  { k: u8, q: u16[k], after: s32, in: { a: u8, b: s64 } }  i % 3 == 0
 *   t:str  { n: string }                                   i % 7 == 0
 * at ts = base + 10 * i (+1, +2). Values are functions of i.
 */
static int write_trace_of(const char *dir, const char *host, uint64_t base, const char *prefix,
			  int nev)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = host, .domain = "ust",
		.clock_offset_s = 1700000000, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *s64 = trawl_ctf_type_int(w, 64, true, 10);
	struct trawl_ctf_type *u16 = trawl_ctf_type_int(w, 16, false, 10);
	struct trawl_ctf_type *u8 = trawl_ctf_type_int(w, 8, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *ctx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, ctx, "vtid", s32);
	struct trawl_ctf_type *fx = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, fx, "n", s32);
	trawl_ctf_struct_add(w, fx, "s", str);
	trawl_ctf_struct_add(w, fx, "big", u64);
	struct trawl_ctf_type *in = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, in, "a", u8);
	trawl_ctf_struct_add(w, in, "b", s64);
	struct trawl_ctf_type *var = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, var, "k", u8);
	trawl_ctf_struct_add(w, var, "q", trawl_ctf_type_sequence(w, u16, "k"));
	trawl_ctf_struct_add(w, var, "after", s32);
	trawl_ctf_struct_add(w, var, "in", in);
	struct trawl_ctf_type *st = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, st, "n", str);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, ctx);
	char nfx[16], nvar[16], nstr[16];
	snprintf(nfx, sizeof(nfx), "%s:fix", prefix);
	snprintf(nvar, sizeof(nvar), "%s:var", prefix);
	snprintf(nstr, sizeof(nstr), "%s:str", prefix);
	struct trawl_ctf_event_class *efx = trawl_ctf_writer_event_class(w, sc, nfx, 0, fx);
	struct trawl_ctf_event_class *evar = trawl_ctf_writer_event_class(w, sc, nvar, 0, var);
	struct trawl_ctf_event_class *estr = trawl_ctf_writer_event_class(w, sc, nstr, 0, st);
	struct trawl_ctf_wstream *s = trawl_ctf_writer_stream(w, sc, "chan", 0);
	if (!efx || !evar || !estr || !s) {
		trawl_ctf_writer_free(w);
		return -1;
	}
	uint8_t buf[256];
	int rc = 0;
	for (int i = 0; i < nev && !rc; i++) {
		struct trawl_ctf_buf b;
		char sv[32];
		uint64_t ts = base + 10 * (uint64_t)i;
		snprintf(sv, sizeof(sv), "s%d", i);
		trawl_ctf_buf_init(&b, buf, sizeof(buf));
		trawl_ctf_buf_u32(&b, (uint32_t)(1000 + i % 4));	/* vtid */
		trawl_ctf_buf_u32(&b, (uint32_t)(i - 100));
		trawl_ctf_buf_str(&b, sv);
		trawl_ctf_buf_u64(&b, (uint64_t)i << 40);
		rc = trawl_ctf_wstream_event(s, efx, ts, buf, b.len);
		if (!rc && i % 3 == 0) {
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			trawl_ctf_buf_u32(&b, 7);
			trawl_ctf_buf_u8(&b, (uint8_t)(i % 5));
			for (int k = 0; k < i % 5; k++)
				trawl_ctf_buf_u16(&b, (uint16_t)(i + k));
			trawl_ctf_buf_u32(&b, (uint32_t)(-i));
			trawl_ctf_buf_u8(&b, (uint8_t)(i & 0xff));
			trawl_ctf_buf_u64(&b, (uint64_t)(-(int64_t)i * 3));
			rc = trawl_ctf_wstream_event(s, evar, ts + 1, buf, b.len);
		}
		if (!rc && i % 7 == 0) {
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			trawl_ctf_buf_u32(&b, 9);
			trawl_ctf_buf_str(&b, "seven");
			rc = trawl_ctf_wstream_event(s, estr, ts + 2, buf, b.len);
		}
	}
	if (!rc)
		rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

static int write_trace(const char *dir, const char *host, uint64_t base)
{
	return write_trace_of(dir, host, base, "t", N);
}

static struct trawl_reader *open_dir(const char *dir, char *err, size_t errlen)
{
	const char *p[] = { dir };
	return trawl_reader_new(p, 1, NULL, err, errlen);
}

/* ----------------------------------------------------------- binding */

struct sums {
	const struct trawl_field *n, *after, *b, *vtid, *s;
	int64_t sum_n, sum_after, sum_b, sum_vtid;
	uint64_t nn, nafter, nb, ns_ok, events, batches;
	int64_t last_ts;
	bool ordered;
};

static int sums_start(void *self, struct trawl_reader *r)
{
	struct sums *x = self;
	char err[256];
	x->n = trawl_field_bind(r, "t:fix.n", TRAWL_FIELD_INT, 0, err, sizeof(err));
	x->after = trawl_field_bind(r, "t:var.after", TRAWL_FIELD_INT, 0, err, sizeof(err));
	x->b = trawl_field_bind(r, "t:var.in.b", TRAWL_FIELD_INT, 0, err, sizeof(err));
	x->vtid = trawl_field_bind(r, "t:*.vtid", TRAWL_FIELD_INT, 0, err, sizeof(err));
	x->s = trawl_field_bind(r, "t:fix.s", TRAWL_FIELD_STRING, 0, err, sizeof(err));
	x->last_ts = INT64_MIN;
	x->ordered = true;
	return x->n && x->after && x->b && x->vtid && x->s ? 0 : -EINVAL;
}

static int sums_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct sums *x = self;
	x->batches++;
	for (size_t i = 0; i < n; i++) {
		const union trawl_ctf_value *v;
		x->events++;
		if (ev[i].ts < x->last_ts)
			x->ordered = false;
		x->last_ts = ev[i].ts;
		if ((v = trawl_field_value(x->n, &ev[i]))) {
			x->sum_n += v->i;
			x->nn++;
			const union trawl_ctf_value *s = trawl_field_value(x->s, &ev[i]);
			char want[32];
			snprintf(want, sizeof(want), "s%lld", (long long)(v->i + 100));
			if (s && s->s.len >= strlen(want) && !strncmp(s->s.p, want, strlen(want) + 1))
				x->ns_ok++;
		}
		if ((v = trawl_field_value(x->after, &ev[i]))) {
			x->sum_after += v->i;
			x->nafter++;
		}
		if ((v = trawl_field_value(x->b, &ev[i]))) {
			x->sum_b += v->i;
			x->nb++;
		}
		if ((v = trawl_field_value(x->vtid, &ev[i])))
			x->sum_vtid += v->i;
	}
	return 0;
}

static const struct trawl_sink_ops sums_ops = {
	.sz = sizeof(sums_ops), .name = "sums", .start = sums_start, .events = sums_events,
};

static void test_bind(const char *dir)
{
	char err[512] = "";
	struct trawl_reader *r = open_dir(dir, err, sizeof(err));
	ok(r, "open (%s)", err);
	if (!r)
		return;
	struct sums x = { 0 };
	struct trawl_sink k = { &sums_ops, &x };
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	is_int(trawl_pipe_run(r, &k, 1, &ro), 0, "run: 0");
	int64_t sn = 0, sa = 0, sb = 0, sv = 0;
	uint64_t na = 0, total = 0;
	for (int i = 0; i < N; i++) {
		sn += i - 100;
		sv += 1000 + i % 4;
		total++;
		if (i % 3 == 0) {
			sa += -i;
			sb += -(int64_t)i * 3;
			sv += 7;
			na++;
			total++;
		}
		if (i % 7 == 0) {
			sv += 9;
			total++;
		}
	}
	is_int(x.events, total, "every event reached the sink");
	ok(x.batches < x.events, "in batches (%llu batches)", (unsigned long long)x.batches);
	ok(x.ordered, "in time order");
	is_int(x.nn, N, "t:fix.n bound in every t:fix");
	is_int(x.sum_n, sn, "t:fix.n: the values written");
	is_int(x.ns_ok, N, "t:fix.s: the strings written, beside n");
	ok(x.n->slot[0] >= 0 || x.n->slot[1] >= 0 || x.n->slot[2] >= 0, "t:fix.n at a fixed place");
	is_int(x.nafter, na, "t:var.after (after a sequence) in every t:var");
	is_int(x.sum_after, sa, "t:var.after: the values written (walked past the sequence)");
	is_int(x.nb, na, "t:var.in.b (nested) in every t:var");
	is_int(x.sum_b, sb, "t:var.in.b: the values written");
	is_int(x.sum_vtid, sv, "t:*.vtid: the event context of every class");
	is_int(x.vtid->nmatched, 3, "t:*.vtid matched 3 classes");
	is_int(x.vtid->nbound, 3, "... and bound in 3");

	/* bind-time errors */
	const struct trawl_field *f;
	errno = 0;
	f = trawl_field_bind(r, "nodot", TRAWL_FIELD_INT, 0, err, sizeof(err));
	ok(!f && errno == EINVAL && strstr(err, "EVENT.FIELD"), "a spec without a dot: EINVAL (%s)", err);
	f = trawl_field_bind(r, "t:nosuch.n", TRAWL_FIELD_INT, 0, err, sizeof(err));
	ok(!f && errno == ENOENT && strstr(err, "no event matches 't:nosuch'"), "no such event: ENOENT (%s)", err);
	f = trawl_field_bind(r, "t:nosuch.n", TRAWL_FIELD_INT, TRAWL_FIELD_OPTIONAL, err, sizeof(err));
	ok(f && f->nmatched == 0 && f->nbound == 0, "... optional: bound to nothing");
	f = trawl_field_bind(r, "t:fix.nosuch", TRAWL_FIELD_INT, 0, err, sizeof(err));
	ok(!f && errno == ENOENT && strstr(err, "event t:fix has no field 'nosuch'"), "no such field: ENOENT (%s)", err);
	f = trawl_field_bind(r, "t:fix.s", TRAWL_FIELD_INT, 0, err, sizeof(err));
	ok(!f && errno == EINVAL && strstr(err, "t:fix.s is a string, not an integer"),
	   "a string bound as an integer: EINVAL (%s)", err);
	f = trawl_field_bind(r, "t:*.n", TRAWL_FIELD_INT, 0, err, sizeof(err));
	ok(!f && errno == EINVAL && strstr(err, "t:str.n is a string"),
	   "a glob where one class has the field as a string: EINVAL (%s)", err);
	f = trawl_field_bind(r, "t:var.q", TRAWL_FIELD_ANY, 0, err, sizeof(err));
	ok(!f && errno == EINVAL && strstr(err, "is a sequence"), "a sequence is not a value (%s)", err);
	f = trawl_field_bind(r, "t:*.n", TRAWL_FIELD_ANY, 0, err, sizeof(err));
	ok(f && f->nbound == 2, "t:*.n as any value: bound in t:fix and t:str");
	trawl_reader_free(r);
}

/* ------------------------------------------------------------- the run */

struct rec_sink {
	int id;
	int fail_at;			/* events() call that fails, 0: none */
	int calls, finished;
	uint64_t events;
	int *order;			/* shared log of ids */
	int *norder;
};

static int rec_start(void *self, struct trawl_reader *r)
{
	(void)r;
	(void)self;
	return 0;
}

static int rec_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct rec_sink *s = self;
	(void)ev;
	s->calls++;
	s->events += n;
	if (*s->norder < 64)
		s->order[(*s->norder)++] = s->id;
	return s->fail_at && s->calls == s->fail_at ? -EIO : 0;
}

static int rec_finish(void *self, struct trawl_reader *r)
{
	(void)r;
	((struct rec_sink *)self)->finished++;
	return 0;
}

static const struct trawl_sink_ops rec_ops = {
	.sz = sizeof(rec_ops), .name = "rec", .start = rec_start, .events = rec_events,
	.finish = rec_finish,
};

static void test_run(const char *dir)
{
	char err[512];
	int order[64], norder = 0;
	struct trawl_reader *r = open_dir(dir, err, sizeof(err));
	struct rec_sink a = { .id = 1, .order = order, .norder = &norder };
	struct rec_sink b = { .id = 2, .order = order, .norder = &norder };
	struct trawl_sink ks[2] = { { &rec_ops, &a }, { &rec_ops, &b } };
	struct trawl_run_opts ro = { .sz = sizeof(ro), .limit = 1234 };

	is_int(trawl_pipe_run(r, ks, 2, &ro), 0, "two sinks, limit 1234: 0");
	is_int(a.events, 1234, "the limit: 1234 events to the first sink");
	is_int(b.events, 1234, "... and to the second");
	ok(norder >= 2 && order[0] == 1 && order[1] == 2, "each batch to the sinks in their order");
	ok(a.finished == 1 && b.finished == 1, "both sinks finished once");
	trawl_reader_free(r);

	r = open_dir(dir, err, sizeof(err));
	struct rec_sink c = { .id = 3, .fail_at = 2, .order = order, .norder = &norder };
	struct rec_sink d = { .id = 4, .order = order, .norder = &norder };
	struct trawl_sink ks2[2] = { { &rec_ops, &c }, { &rec_ops, &d } };
	is_int(trawl_pipe_run(r, ks2, 2, NULL), -EIO, "a sink's error stops the run with it");
	ok(c.calls == 2 && d.calls == 1, "no batch after the error (%d, %d)", c.calls, d.calls);
	ok(c.finished == 1 && d.finished == 1, "every started sink still finishes");
	trawl_reader_free(r);
}

/* ---------------------------------------------- what the sinks want */

/* Every event a sink got, as a line: ts, class, vtid and its own field. */
struct got {
	const char *only;		/* wants(): this class only; NULL: no wants() */
	const struct trawl_field *vtid, *n, *after, *sn;
	char (*ev)[64];
	size_t n_ev, cap;
};

static int got_start(void *self, struct trawl_reader *r)
{
	struct got *g = self;
	char err[256];
	g->vtid = trawl_field_bind(r, "t:*.vtid", TRAWL_FIELD_INT, 0, err, sizeof(err));
	g->n = trawl_field_bind(r, "t:fix.n", TRAWL_FIELD_INT, 0, err, sizeof(err));
	g->after = trawl_field_bind(r, "t:var.after", TRAWL_FIELD_INT, 0, err, sizeof(err));
	g->sn = trawl_field_bind(r, "t:str.n", TRAWL_FIELD_STRING, 0, err, sizeof(err));
	return g->vtid && g->n && g->after && g->sn ? 0 : -EINVAL;
}

static int got_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct got *g = self;
	for (size_t i = 0; i < n; i++) {
		if (g->n_ev == g->cap) {
			size_t cap = g->cap ? 2 * g->cap : 1024;
			void *p = realloc(g->ev, cap * sizeof(*g->ev));
			if (!p)
				return -ENOMEM;
			g->ev = p;
			g->cap = cap;
		}
		const union trawl_ctf_value *v = trawl_field_value(g->vtid, &ev[i]);
		const union trawl_ctf_value *a = trawl_field_value(g->n, &ev[i]);
		if (!a)
			a = trawl_field_value(g->after, &ev[i]);
		const union trawl_ctf_value *s = trawl_field_value(g->sn, &ev[i]);
		snprintf(g->ev[g->n_ev++], sizeof(*g->ev), "%lld %s %lld %lld %.*s",
			 (long long)ev[i].ts, ev[i].cls->name, v ? (long long)v->i : -1,
			 a ? (long long)a->i : -1, s ? (int)s->s.len : 0, s ? s->s.p : "");
	}
	return 0;
}

static bool got_wants(void *self, const struct trawl_ctf_event_class *cls)
{
	return !strcmp(cls->name, ((struct got *)self)->only);
}

static const struct trawl_sink_ops got_ops = {
	.sz = sizeof(got_ops), .name = "got", .start = got_start, .events = got_events,
};
static const struct trawl_sink_ops got_wants_ops = {
	.sz = sizeof(got_wants_ops), .name = "got-wants", .start = got_start,
	.events = got_events, .wants = got_wants,
};

/* Traces merged, a worker, batches of 64 events (many batches), from
 * begin (ns; 0: all). dec (when not NULL): per trace, the events its
 * streams decoded, then (dec[np + t]) the packets they read. */
static int run_got_of(const char *const *p, size_t np, struct got *g, size_t ng,
		      const struct trawl_run_opts *ro, int64_t begin, uint64_t *dec)
{
	struct trawl_reader_opts o = { .sz = sizeof(o), .threads = 2, .begin = begin };
	char err[256];
	struct trawl_reader *r = trawl_reader_new(p, np, &o, err, sizeof(err));
	if (!r)
		return -1;
	r->batch_events = 64;
	struct trawl_sink ks[2];
	for (size_t i = 0; i < ng; i++)
		ks[i] = (struct trawl_sink){ g[i].only ? &got_wants_ops : &got_ops, &g[i] };
	int rc = trawl_pipe_run(r, ks, ng, ro);
	for (size_t t = 0; dec && t < trawl_reader_ntraces(r); t++) {
		const struct trawl_reader_trace *tr = trawl_reader_trace_at(r, t);
		dec[t] = dec[np + t] = 0;
		for (size_t j = 0; j < trawl_reader_trace_nstreams(tr); j++) {
			struct trawl_reader_stream_stats st;
			trawl_reader_stream_stats(trawl_reader_trace_stream(tr, j), &st);
			dec[t] += st.events;
			dec[np + t] += st.packets;
		}
	}
	trawl_reader_free(r);
	return rc;
}

static int run_got(const char *dir, const char *dir2, struct got *g, size_t ng,
		   const struct trawl_run_opts *ro)
{
	const char *p[] = { dir, dir2 };
	return run_got_of(p, 2, g, ng, ro, 0, NULL);
}

/* Of the events str got, those of class cls and the others (name in
 * the line's second word); *in: each of them is one of all's, in all's
 * order (values equal). */
static void wanted_of(const struct got *all, const struct got *str, const char *cls,
		      size_t *ncls, size_t *other, bool *in)
{
	size_t j = 0;
	char pat[32];
	snprintf(pat, sizeof(pat), " %s ", cls);
	*ncls = *other = 0;
	*in = true;
	for (size_t i = 0; i < str->n_ev && *in; i++) {
		while (j < all->n_ev && strcmp(all->ev[j], str->ev[i]))
			j++;
		*in = j++ < all->n_ev;
		if (strstr(str->ev[i], pat))
			(*ncls)++;
		else
			(*other)++;
	}
}

/* Whether str got the first and the last of all's events of classes
 * named prefix*. */
static bool got_ends(const struct got *all, const struct got *str, const char *prefix)
{
	const char *first = NULL, *last = NULL;
	for (size_t i = 0; i < all->n_ev; i++) {
		const char *name = strchr(all->ev[i], ' ');
		if (name && !strncmp(name + 1, prefix, strlen(prefix))) {
			if (!first)
				first = all->ev[i];
			last = all->ev[i];
		}
	}
	bool f = false, l = false;
	for (size_t i = 0; i < str->n_ev; i++) {
		f |= first && !strcmp(str->ev[i], first);
		l |= last && !strcmp(str->ev[i], last);
	}
	return f && l;
}

/* An index that lies but still chains to the end of the file: its last
 * entry starts 8 bytes early (and the one before ends there). */
static int index_lie(const char *path)
{
	size_t len = 0;
	uint8_t *b = slurp(path, &len);
	if (!b || len < 16)
		return -1;
	uint32_t esz = get_be32(b + 12);
	size_t n = esz ? (len - 16) / esz : 0;
	int rc = -1;
	if (n >= 3) {
		uint8_t *last = b + 16 + (n - 1) * esz, *prev = last - esz;
		put_be64(last, get_be64(last) - 8);
		put_be64(last + 8, get_be64(last + 8) + 64);
		put_be64(prev + 8, get_be64(prev + 8) - 64);
		FILE *f = fopen(path, "wb");
		rc = f && fwrite(b, 1, len, f) == len ? 0 : -1;
		if (f && fclose(f))
			rc = -1;
	}
	free(b);
	return rc;
}

/*
 * The decoder's two ways of leaving events out: as fill_run() decodes (a
 * 1 GHz clock, no range) and after the general path (a time range: begin
 * 1 ns, which takes everything); and the streams of a trace none of whose
 * classes is wanted, whose packets between the first batch and the last
 * packet are not decoded at all: a trace of many packets, and one of a
 * single packet (the first batch ends inside it).
 */
static void test_wants_paths(const char *dir, const char *dir2)
{
	const char *p2[] = { dir, dir2 };
	size_t total = 2 * (N + (N + 2) / 3 + (N + 6) / 7), nstr = 2 * ((N + 6) / 7);
	size_t dbatches = 2 * ((total / 2 + 63) / 64), ncls, other;
	bool in;
	struct got all = { 0 }, str = { .only = "t:str" };

	int rc = run_got_of(p2, 2, &all, 1, NULL, 1, NULL);
	rc |= run_got_of(p2, 2, &str, 1, NULL, 1, NULL);
	ok(rc == 0 && all.n_ev == total,
	   "wants, general path (a range): a run without and one with wants() (%zu events)",
	   all.n_ev);
	wanted_of(&all, &str, "t:str", &ncls, &other, &in);
	ok(in && ncls == nstr && other <= 2 * dbatches && other >= 4,
	   "wants, general path: every t:str (%zu of %zu), in order, values equal; of the others "
	   "only the ends of batches and streams (%zu, at most %zu)", ncls, nstr, other, 2 * dbatches);
	ok(got_ends(&all, &str, "t:"), "wants, general path: the first and the last events came");
	free(all.ev);
	free(str.ev);

	/* a third trace, of u:* classes only: none wanted; with its index
	 * (straight to the last packet), the same without (its packets'
	 * headers walked), one of a single packet */
	char dir3[600], dir3n[600], dir3l[600], dir4[600], idx[700], idxl[700];
	snprintf(dir3, sizeof(dir3), "%s/u", root);
	snprintf(dir3n, sizeof(dir3n), "%s/un", root);
	snprintf(dir3l, sizeof(dir3l), "%s/ul", root);
	snprintf(dir4, sizeof(dir4), "%s/u1", root);
	snprintf(idx, sizeof(idx), "%s/index/chan_0.idx", dir3n);
	snprintf(idxl, sizeof(idxl), "%s/index/chan_0.idx", dir3l);
	const int n4 = 50;
	ok(write_trace_of(dir3, "pc", 3, "u", N) == 0 && write_trace_of(dir3n, "pc", 3, "u", N) == 0 &&
	   unlink(idx) == 0 && write_trace_of(dir3l, "pc", 3, "u", N) == 0 && index_lie(idxl) == 0 &&
	   write_trace_of(dir4, "pd", 7, "u", n4) == 0,
	   "wants, skipped streams: a trace of u:* events (%d steps, many packets), with its index, "
	   "without, with one that lies, one of %d steps (one packet)", N, n4);
	const char *ps[4][2] = { { dir, dir3 }, { dir, dir3n }, { dir, dir3l }, { dir, dir4 } };
	const char *what[4] = { "skipped streams", "skipped streams, no index",
				"skipped streams, an index that lies", "one packet" };
	size_t nu = (size_t)(N + (N + 2) / 3 + (N + 6) / 7), nu4 = (size_t)(n4 + (n4 + 2) / 3 + (n4 + 6) / 7);
	for (int v = 0; v < 4; v++) {
		const char *const *p = ps[v];
		int k = v == 3;
		size_t want_u = k ? nu4 : nu;
		struct got a = { 0 }, w = { .only = "t:str" };
		uint64_t deca[4] = { 0 }, decw[4] = { 0 };
		rc = run_got_of(p, 2, &a, 1, NULL, 0, deca);
		rc |= run_got_of(p, 2, &w, 1, NULL, 0, decw);
		ok(rc == 0 && a.n_ev == total / 2 + want_u,
		   "wants, %s: a run without and one with wants() (%zu events)", what[v], a.n_ev);
		wanted_of(&a, &w, "t:str", &ncls, &other, &in);
		ok(in && ncls == nstr / 2, "wants, %s: every t:str (%zu of %zu), in order, values equal",
		   what[v], ncls, nstr / 2);
		ok(got_ends(&a, &w, "u:") && got_ends(&a, &w, "t:"),
		   "wants, %s: the first and the last events of each trace came", what[v]);
		size_t gotu = 0;
		for (size_t i = 0; i < w.n_ev; i++)
			gotu += strstr(w.ev[i], " u:") != NULL;
		ok(deca[0] == total / 2 && deca[1] == want_u && decw[0] == total / 2,
		   "wants, %s: without wants() every event decoded (%llu, %llu), the t trace's with it (%llu)",
		   what[v], (unsigned long long)deca[0],
		   (unsigned long long)deca[1], (unsigned long long)decw[0]);
		ok(deca[3] > (k ? 0u : 10u) && decw[3] == deca[3],
		   "wants, %s: the u trace's packets counted all the same (%llu, %llu)", what[v],
		   (unsigned long long)decw[3], (unsigned long long)deca[3]);
		if (k)
			ok(decw[1] == want_u && gotu >= 2 && gotu <= 4,
			   "wants, one packet: its events decoded all the same (%llu of %zu), %zu came",
			   (unsigned long long)decw[1], want_u, gotu);
		else
			ok(decw[1] < want_u / 4 && gotu >= 2 && gotu <= 8,
			   "wants, %s: the u trace's packets but its first batch and last "
			   "packet not decoded (%llu of %zu events), %zu of them came", what[v],
			   (unsigned long long)decw[1], want_u, gotu);
		free(a.ev);
		free(w.ev);
	}
	/* with a time range the decoder looks for its ends: nothing skipped */
	struct got w = { .only = "t:str" };
	uint64_t dec[4] = { 0 };
	rc = run_got_of(ps[0], 2, &w, 1, NULL, 1, dec);
	ok(rc == 0 && dec[1] == nu && dec[3] > 10,
	   "wants, a time range: the u trace decoded whole all the same (%llu of %zu events)",
	   (unsigned long long)dec[1], nu);
	free(w.ev);
}

static void test_wants(const char *dir, const char *dir2)
{
	struct got all = { 0 }, str = { .only = "t:str" }, both[2] = { { 0 }, { .only = "t:str" } };
	struct got lim = { .only = "t:str" };
	struct trawl_run_opts ro = { .sz = sizeof(ro), .limit = 5000 };

	ok(run_got(dir, dir2, &all, 1, NULL) == 0 && run_got(dir, dir2, &str, 1, NULL) == 0,
	   "wants: a run without and one with wants()");
	/* N fix, N/3 var, N/7 str per trace; two traces */
	size_t total = 2 * (N + (N + 2) / 3 + (N + 6) / 7), nstr = 2 * ((N + 6) / 7);
	is_int(all.n_ev, total, "wants: without it, every event (%zu)", total);
	/* what came is in the same order, with the same values, as without */
	size_t j = 0, gotstr = 0, other = 0;
	bool sub = true;
	for (size_t i = 0; i < str.n_ev && sub; i++) {
		while (j < all.n_ev && strcmp(all.ev[j], str.ev[i]))
			j++;
		sub = j++ < all.n_ev;
		if (strstr(str.ev[i], " t:str "))
			gotstr++;
		else
			other++;
	}
	ok(sub, "wants: each event that came is one of the whole run's, in its order, values equal");
	is_int(gotstr, nstr, "wants: every event of the wanted class came (%zu)", nstr);
	ok(str.n_ev < total / 2, "wants: the others were left out (%zu of %zu came)", str.n_ev, total);
	/* the decoder's batches: 64 events, a trace's events in one stream */
	size_t dbatches = 2 * ((total / 2 + 63) / 64);
	ok(other <= 2 * dbatches && other >= 4,
	   "wants: of the others, only the ends of batches and streams (%zu, at most %zu)", other,
	   2 * dbatches);
	/* the span: each stream's first and last events came */
	ok(str.n_ev && all.n_ev && !strcmp(str.ev[0], all.ev[0]) &&
	   !strcmp(str.ev[str.n_ev - 1], all.ev[all.n_ev - 1]),
	   "wants: the first and the last events of the run came");
	bool ends = true;
	for (int t = 0; t < 2; t++) {
		const char *first = NULL, *last = NULL;
		/* a trace's events by their ts: base 0 (pa) is even-free of +5 */
		for (size_t i = 0; i < all.n_ev; i++) {
			long long ts = strtoll(all.ev[i], NULL, 10) % 10;
			bool of_b = ts >= 5;
			if (of_b == (t == 1)) {
				if (!first)
					first = all.ev[i];
				last = all.ev[i];
			}
		}
		bool f = false, l = false;
		for (size_t i = 0; i < str.n_ev; i++) {
			f |= first && !strcmp(str.ev[i], first);
			l |= last && !strcmp(str.ev[i], last);
		}
		ends &= f && l;
	}
	ok(ends, "wants: each trace's first and last events came");

	/* a sink without wants(): everything, to both */
	ok(run_got(dir, dir2, both, 2, NULL) == 0, "wants: two sinks, one without wants()");
	ok(both[0].n_ev == total && both[1].n_ev == total,
	   "wants: a sink that wants everything gets everything, the other too (%zu, %zu)",
	   both[0].n_ev, both[1].n_ev);
	/* a limit counts every event: no filter */
	int rc = run_got(dir, dir2, &lim, 1, &ro);
	ok(rc == 0 && lim.n_ev == 5000, "wants: with a limit, every event up to it (%zu)", lim.n_ev);
	free(all.ev);
	free(str.ev);
	free(both[0].ev);
	free(both[1].ev);
	free(lim.ev);
}

/* -------------------------------------------------------------- sources */

/* Events of r as "ts name vtid" lines, hashed: count and a checksum. */
static void digest(struct trawl_reader *r, uint64_t *n, uint64_t *sum)
{
	const struct trawl_event *ev;
	*n = *sum = 0;
	while (trawl_reader_next(r, &ev) > 0) {
		(*n)++;
		*sum = *sum * 1000003 + (uint64_t)ev->ts + ev->cls->id * 7 + ev->values[0].u;
	}
}

static void test_sources(const char *dir, const char *dir2)
{
	char err[512] = "", path[400];
	size_t mlen = 0, slen = 0;
	snprintf(path, sizeof(path), "%s/metadata", dir);
	uint8_t *meta = slurp(path, &mlen);
	snprintf(path, sizeof(path), "%s/chan_0", dir);
	uint8_t *data = slurp(path, &slen);
	ok(meta && data, "the trace's metadata and stream read");
	if (!meta || !data) {
		free(meta);
		free(data);
		return;
	}
	const uint8_t *bufs[] = { data };
	struct trawl_source *ms = trawl_source_memory((const char *)meta, mlen, bufs, &slen, 1, NULL,
						      err, sizeof(err));
	ok(ms, "memory source (%s)", err);
	struct trawl_reader *rm = ms ? trawl_reader_open(&ms, 1, NULL, err, sizeof(err)) : NULL;
	struct trawl_reader *rf = open_dir(dir, err, sizeof(err));
	uint64_t n1 = 0, s1 = 0, n2 = 0, s2 = 0;
	if (rm && rf) {
		digest(rm, &n1, &s1);
		digest(rf, &n2, &s2);
	}
	ok(n1 > 0 && n1 == n2 && s1 == s2, "the memory source reads as the files (%llu events)",
	   (unsigned long long)n1);
	trawl_reader_free(rm);
	trawl_reader_free(rf);
	errno = 0;
	ms = trawl_source_memory("not tsdl", 8, bufs, &slen, 1, NULL, err, sizeof(err));
	ok(!ms && errno && strstr(err, "metadata"), "memory source with bad metadata: refused (%s)", err);

	/* two sources: dir (host pa, its clock corrected by +5 ns) and dir2
	 * (host pb, 5 ns later, uncorrected): the merge interleaves them */
	struct trawl_reader_clock_fix fix = { .host = "pa" };
	fix.xform = trawl_sync_xform_identity();
	fix.xform.y0 = 5;
	struct trawl_source_opts oa = { .sz = sizeof(oa), .fixes = &fix, .nfixes = 1 };
	const char *pa[] = { dir }, *pb[] = { dir2 };
	struct trawl_source *sa = trawl_source_files(pa, 1, &oa, err, sizeof(err));
	struct trawl_source *sb = trawl_source_files(pb, 1, NULL, err, sizeof(err));
	struct trawl_source *both[] = { sa, sb };
	struct trawl_reader *r = sa && sb ? trawl_reader_open(both, 2, NULL, err, sizeof(err)) : NULL;
	ok(r, "a reader over two sources (%s)", err);
	if (r) {
		const struct trawl_event *ev;
		int64_t last = INT64_MIN;
		uint64_t na = 0, nb = 0, ties = 0;
		bool ordered = true;
		const struct trawl_event *prev = NULL;
		int64_t prev_ts = 0;
		const char *prev_host = NULL;
		while (trawl_reader_next(r, &ev) > 0) {
			const char *h = trawl_reader_trace_hostname(trawl_reader_stream_trace(ev->stream));
			if (ev->ts < last)
				ordered = false;
			last = ev->ts;
			if (!strcmp(h, "pa"))
				na++;
			else
				nb++;
			if (prev && prev_ts == ev->ts && strcmp(prev_host, h))
				ties++;
			prev = ev;
			prev_ts = ev->ts;
			prev_host = h;
		}
		ok(ordered && na == n1 && nb == n1, "both traces, merged in time order (%llu + %llu)",
		   (unsigned long long)na, (unsigned long long)nb);
		ok(ties > (unsigned long long)N / 2, "pa's corrected times meet pb's (%llu ties)",
		   (unsigned long long)ties);
		trawl_reader_free(r);
	}

	const char *hb[] = { "pb" };
	struct trawl_source_opts ob = { .sz = sizeof(ob), .hosts = hb, .nhosts = 1 };
	sa = trawl_source_files(pa, 1, &ob, err, sizeof(err));
	ok(sa, "a files source filtered to host pb over pa's trace");
	r = sa ? trawl_reader_open(&sa, 1, NULL, err, sizeof(err)) : NULL;
	ok(r && trawl_reader_ntraces(r) == 0, "... has no trace");
	trawl_reader_free(r);

	sa = trawl_source_files(pa, 1, NULL, err, sizeof(err));
	struct trawl_source *twice[] = { sa, sa };
	errno = 0;
	r = trawl_reader_open(twice, 2, NULL, err, sizeof(err));
	ok(!r && errno == EBUSY, "a source given twice is refused (%s)", err);
	free(meta);
	free(data);
}

/* -------------------------------------------------------------- formats */

static void test_formats(const char *dir)
{
	char err[512] = "", path[400];
	snprintf(path, sizeof(path), "%s/out.json", root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct trawl_print_opts po = { .sz = sizeof(po), .fd = fd, .format = "json", .threads = 2 };
	struct trawl_print *p = trawl_print_new(&po, err, sizeof(err));
	ok(p, "a json printer (%s)", err);
	struct trawl_reader *r = open_dir(dir, err, sizeof(err));
	if (p && r) {
		struct trawl_sink k = trawl_print_sink(p);
		struct trawl_run_opts ro = { .sz = sizeof(ro), .limit = 10 };
		is_int(trawl_pipe_run(r, &k, 1, &ro), 0, "printed");
		is_int(trawl_print_count(p), 10, "10 events");
	}
	trawl_print_free(p);
	trawl_reader_free(r);
	close(fd);
	size_t len = 0;
	char *out = (char *)slurp(path, &len);
	int lines = 0;
	for (size_t i = 0; out && i < len; i++)
		lines += out[i] == '\n';
	is_int(lines, 10, "10 lines");
	const char *want = "{\"ts\":1700000000000000000,\"host\":\"pa\",\"cpu\":0,\"event\":\"t:fix\","
			   "\"context\":{\"vtid\":1000},\"fields\":{\"n\":-100,\"s\":\"s0\",\"big\":0}}\n";
	ok(out && !strncmp(out, want, strlen(want)), "the first line, every value as written");
	ok(out && strstr(out, "\"event\":\"t:var\",\"context\":{\"vtid\":7},\"fields\":{\"k\":0,\"q\":[],"
			      "\"after\":0,\"in\":{\"a\":0,\"b\":0}}"), "t:var: sequence, nested struct");
	free(out);

	errno = 0;
	po.format = "yaml";
	ok(!trawl_print_new(&po, err, sizeof(err)) && errno == EINVAL && strstr(err, "yaml"),
	   "an unknown format: EINVAL (%s)", err);
	const char *help = NULL;
	ok(trawl_format_name(0, &help) && !strcmp(trawl_format_name(0, NULL), "text") && help,
	   "the format table starts with text");
	ok(trawl_format_name(1, NULL) && !strcmp(trawl_format_name(1, NULL), "json") &&
	   !trawl_format_name(2, NULL), "then json, and nothing more");
}


/* ----------------------------------------------------------- live: drip */

/*
 * The trace: t:a { n: s32 } on chan_0 every 10 ns from i = 0 and on chan_1
 * (cpu 1) from i = 1500; t:b { m: s32, s: string } on chan_0 from i = 1000.
 * Its metadata without t:b is "v1".
 */
enum { DN = 2000 };

static int write_drip(const char *dir)
{
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .path = dir, .hostname = "dr", .domain = "ust",
		.clock_offset_s = 1700000000, .clock_offset = 0, .packet_size = 4096,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!w)
		return -1;
	struct trawl_ctf_type *s32 = trawl_ctf_type_int(w, 32, true, 10);
	struct trawl_ctf_type *fa = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, fa, "n", s32);
	struct trawl_ctf_type *fb = trawl_ctf_type_struct(w);
	trawl_ctf_struct_add(w, fb, "m", s32);
	trawl_ctf_struct_add(w, fb, "s", trawl_ctf_type_string(w));
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	struct trawl_ctf_event_class *ea = trawl_ctf_writer_event_class(w, sc, "t:a", 0, fa);
	struct trawl_ctf_event_class *eb = trawl_ctf_writer_event_class(w, sc, "t:b", 0, fb);
	struct trawl_ctf_wstream *s0 = trawl_ctf_writer_stream(w, sc, "chan", 0);
	struct trawl_ctf_wstream *s1 = trawl_ctf_writer_stream(w, sc, "chan", 1);
	int rc = !ea || !eb || !s0 || !s1;
	uint8_t buf[64];
	for (int i = 0; i < DN && !rc; i++) {
		struct trawl_ctf_buf b;
		uint64_t ts = 1000 + 10 * (uint64_t)i;
		trawl_ctf_buf_init(&b, buf, sizeof(buf));
		trawl_ctf_buf_u32(&b, (uint32_t)i);
		rc = trawl_ctf_wstream_event(s0, ea, ts, buf, b.len);
		if (!rc && i >= 1000) {
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			trawl_ctf_buf_u32(&b, (uint32_t)(2 * i));
			trawl_ctf_buf_str(&b, i % 2 ? "odd" : "even");
			rc = trawl_ctf_wstream_event(s0, eb, ts + 5, buf, b.len);
		}
		if (!rc && i >= 1500) {
			trawl_ctf_buf_init(&b, buf, sizeof(buf));
			trawl_ctf_buf_u32(&b, (uint32_t)(-i));
			rc = trawl_ctf_wstream_event(s1, ea, ts + 3, buf, b.len);
		}
	}
	if (!rc)
		rc = trawl_ctf_writer_close(w);
	trawl_ctf_writer_free(w);
	return rc;
}

struct dpkt {
	int stream;
	const uint8_t *p;
	size_t len;
	int64_t tsb, tse;		/* ns */
};

struct drip {
	struct dpkt *pk;		/* every packet of both streams, by tsb */
	size_t npk, next;		/* delivered: pk[0 .. next) */
	size_t avail[2], used[2];	/* per stream: packets delivered, mapped */
	size_t *order[2];		/* per stream: indexes in pk, in its order */
	size_t n[2];
	struct trawl_reader_trace *t;
	struct trawl_reader_stream *rs[2];
	const char *meta2;
	size_t meta2len;
	size_t meta_at;			/* the delivery before which v2 comes */
	int64_t now;			/* the last delivered packet's tsb */
	unsigned polls, idles;
	bool updated;
};

static struct drip D;

static int drip_more(struct ctf_stream *cs)
{
	int k = (int)(intptr_t)cs->more_arg;
	if (D.used[k] < D.avail[k]) {
		const struct dpkt *p = &D.pk[D.order[k][D.used[k]++]];
		cs->map = p->p;
		cs->size = p->len;
		cs->next_off = 0;
		cs->st.bytes += p->len;
		return 1;
	}
	if (D.used[k] == D.n[k] && D.next == D.npk)
		return 0;
	cs->hold_ns = D.now;
	return -EAGAIN;
}

static struct trawl_reader_stream *drip_stream(struct trawl_source *src, int k)
{
	char name[32];
	snprintf(name, sizeof(name), "drip/chan_%d", k);
	struct trawl_reader_stream *s = tr_reader_stream_new(D.t, name);
	if (!s)
		return NULL;
	s->cs.borrowed = true;
	s->cs.more = drip_more;
	s->cs.more_arg = (void *)(intptr_t)k;
	s->cs.hold_ns = INT64_MIN;
	if (tr_source_add_stream(src, D.t, s)) {
		tr_reader_stream_free(s);
		return NULL;
	}
	return s;
}

static int drip_poll(struct trawl_source *src, int64_t deadline)
{
	(void)deadline;
	D.polls++;
	if (D.polls % 7 == 3) {
		D.idles++;
		return 0;	/* nothing new this time */
	}
	if (!D.rs[1] && D.next == 1) {
		/* chan_1 is announced before its data, after chan_0's first
		 * packet (the merge's tree then has a new winner while the
		 * stream it waited for gets its next batch) */
		D.rs[1] = drip_stream(src, 1);
		return D.rs[1] ? 1 : -ENOMEM;
	}
	if (D.next == D.npk) {
		src->ended = true;
		return 1;
	}
	if (D.next == D.meta_at && !D.updated) {
		char err[256];
		struct trawl_ctf_trace *m = trawl_ctf_metadata_parse(D.meta2, D.meta2len, err, sizeof(err));
		D.updated = true;
		if (!m || tr_reader_trace_update(src->r, D.t, m, NULL, 0, err, sizeof(err)))
			return -EINVAL;
		return 1;
	}
	const struct dpkt *p = &D.pk[D.next++];
	D.avail[p->stream]++;
	D.now = p->tsb;
	return 1;
}

static const struct source_ops drip_ops = { .kind = "live", .poll = drip_poll };

/* The packets of a stream file, with their times from its index. */
static int split(const char *dir, int k, const uint8_t *data)
{
	char path[400];
	size_t len;
	snprintf(path, sizeof(path), "%s/index/chan_%d.idx", dir, k);
	uint8_t *ix = slurp(path, &len);
	if (!ix || len < 16)
		return -1;
	uint32_t esz = (uint32_t)ix[12] << 24 | (uint32_t)ix[13] << 16 | (uint32_t)ix[14] << 8 | ix[15];
	for (size_t off = 16; off + esz <= len; off += esz) {
		uint64_t v[5];
		for (int f = 0; f < 5; f++) {
			v[f] = 0;
			for (int b = 0; b < 8; b++)
				v[f] = v[f] << 8 | ix[off + 8 * f + (size_t)b];
		}
		D.pk = realloc(D.pk, (D.npk + 1) * sizeof(*D.pk));
		D.pk[D.npk++] = (struct dpkt){ k, data + v[0], v[1] / 8,
					       1700000000000000000LL + (int64_t)v[3],
					       1700000000000000000LL + (int64_t)v[4] };
	}
	free(ix);
	return 0;
}

static int by_tsb(const void *a, const void *b)
{
	const struct dpkt *x = a, *y = b;
	return x->tsb < y->tsb ? -1 : x->tsb > y->tsb ? 1 : x->stream - y->stream;
}

struct bsum {
	const struct trawl_field *m;
	int64_t sum;
	uint64_t n;
};

static int bsum_start(void *self, struct trawl_reader *r)
{
	struct bsum *b = self;
	char err[256];
	b->m = trawl_field_bind(r, "t:b.m", TRAWL_FIELD_INT, TRAWL_FIELD_OPTIONAL, err, sizeof(err));
	return b->m ? 0 : -EINVAL;
}

static int bsum_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct bsum *b = self;
	for (size_t i = 0; i < n; i++) {
		const union trawl_ctf_value *v = trawl_field_value(b->m, &ev[i]);
		if (v) {
			b->sum += v->i;
			b->n++;
		}
	}
	return 0;
}

static const struct trawl_sink_ops bsum_ops = {
	.sz = sizeof(bsum_ops), .name = "bsum", .start = bsum_start, .events = bsum_events,
};

/* A drip source over dir's trace, the reader over it. */
static struct trawl_reader *drip_open(const char *dir, uint8_t **keep, char *err, size_t errlen)
{
	char path[400];
	size_t mlen, l0, l1;
	memset(&D, 0, sizeof(D));
	snprintf(path, sizeof(path), "%s/metadata", dir);
	char *meta = (char *)slurp(path, &mlen);
	snprintf(path, sizeof(path), "%s/chan_0", dir);
	keep[0] = slurp(path, &l0);
	snprintf(path, sizeof(path), "%s/chan_1", dir);
	keep[1] = slurp(path, &l1);
	keep[2] = (uint8_t *)meta;
	if (!meta || !keep[0] || !keep[1] || split(dir, 0, keep[0]) || split(dir, 1, keep[1]))
		return NULL;
	qsort(D.pk, D.npk, sizeof(*D.pk), by_tsb);
	for (size_t i = 0; i < D.npk; i++) {
		int k = D.pk[i].stream;
		D.order[k] = realloc(D.order[k], (D.n[k] + 1) * sizeof(size_t));
		D.order[k][D.n[k]++] = i;
		/* v2 comes before the first chan_0 packet that reaches t:b */
		if (k == 0 && !D.meta_at && D.pk[i].tse >= 1700000000000000000LL + 1000 + 10 * 1000)
			D.meta_at = i;
	}
	D.meta2 = meta;
	D.meta2len = mlen;
	/* v1: the metadata without t:b's block */
	char *b = strstr(meta, "event {\n\tname = \"t:b\";");
	if (!b)
		return NULL;
	char *e = strstr(b, "\n};\n");
	if (!e)
		return NULL;
	size_t v1len = (size_t)(b - meta) + (mlen - (size_t)(e + 4 - meta));
	char *v1 = malloc(v1len + 1);
	memcpy(v1, meta, (size_t)(b - meta));
	memcpy(v1 + (b - meta), e + 4, mlen - (size_t)(e + 4 - meta));
	v1[v1len] = 0;
	struct trawl_ctf_trace *m1 = trawl_ctf_metadata_parse(v1, v1len, err, errlen);
	free(v1);
	struct trawl_source *src = tr_source_alloc(&drip_ops, NULL);
	D.t = calloc(1, sizeof(*D.t));
	if (!m1 || !src || !D.t)
		return NULL;
	D.t->dec.meta = m1;
	D.t->hostname = "dr";
	D.t->path = strdup("drip");
	if (tr_ctf_tdec_init(&D.t->dec, m1, NULL, 0, err, errlen) || tr_source_add_trace(src, D.t) ||
	    !(D.rs[0] = drip_stream(src, 0)))
		return NULL;
	return trawl_reader_open(&src, 1, NULL, err, errlen);
}

static void test_live_drip(void)
{
	char dir[300], err[512] = "";
	uint8_t *keep[3] = { NULL };
	snprintf(dir, sizeof(dir), "%s/drip", root);
	ok(write_drip(dir) == 0, "drip: the trace written");

	/* the truth: the finished files */
	struct trawl_reader *rf = open_dir(dir, err, sizeof(err));
	struct trawl_reader *rd = drip_open(dir, keep, err, sizeof(err));
	ok(rf && rd, "drip: a reader over the scripted live source (%s)", err);
	ok(D.npk > 10 && D.meta_at > 0, "drip: %zu packets, metadata grows before packet %zu",
	   D.npk, D.meta_at);
	if (rf && rd) {
		const struct trawl_event *a, *b;
		uint64_t n = 0, same = 0, again = 0, below = 0;
		int64_t low = INT64_MIN;
		bool moved = false;
		int ra, rb;
		for (;;) {
			ra = trawl_reader_next(rf, &a);
			while ((rb = trawl_reader_next(rd, &b)) == -EAGAIN)
				again++;
			if (ra <= 0 || rb <= 0)
				break;
			/* nothing before the reader's low (the holds) comes later */
			below += b->ts < low;
			if (trawl_reader_low(rd) > low) {
				low = trawl_reader_low(rd);
				moved = true;
			}
			n++;
			if (a->ts == b->ts && !strcmp(a->cls->name, b->cls->name) &&
			    a->cpu == b->cpu && a->values[0].i == b->values[0].i)
				same++;
		}
		ok(ra == 0 && rb == 0, "drip: both end together (%d, %d)", ra, rb);
		ok(n > DN && same == n, "drip: the same %llu events in the same order (%llu equal)",
		   (unsigned long long)n, (unsigned long long)same);
		ok(again > 0 && again <= D.idles, "drip: -EAGAIN when a wait brought nothing (%llu times)",
		   (unsigned long long)again);
		ok(moved && below == 0 && trawl_reader_low(rf) == INT64_MIN,
		   "drip: the reader's low rises with the holds, no event comes below it (%llu did); "
		   "INT64_MIN for files", (unsigned long long)below);
		ok(D.updated && trawl_reader_nclasses(rd) == 2, "drip: t:b came with the metadata (%zu classes)",
		   trawl_reader_nclasses(rd));
	}
	trawl_reader_free(rf);
	trawl_reader_free(rd);
	for (int k = 0; k < 2; k++)
		free(D.order[k]);
	free(D.pk);
	for (int j = 0; j < 3; j++)
		free(keep[j]);

	/* the same through a sink, with a field of the class that came late */
	rd = drip_open(dir, keep, err, sizeof(err));
	struct bsum bs = { 0 };
	struct trawl_sink k = { &bsum_ops, &bs };
	int rc = rd ? trawl_pipe_run(rd, &k, 1, NULL) : -1;
	int64_t want = 0;
	for (int i = 1000; i < DN; i++)
		want += 2 * i;
	ok(rc == 0 && bs.n == DN - 1000 && bs.sum == want,
	   "drip: t:b.m, bound before t:b existed, read in every t:b (%llu, sum %lld)",
	   (unsigned long long)bs.n, (long long)bs.sum);
	trawl_reader_free(rd);
	for (int j = 0; j < 2; j++)
		free(D.order[j]);
	free(D.pk);
	for (int j = 0; j < 3; j++)
		free(keep[j]);
}

int main(void)
{
	char dir[300], dir2[300];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/a", root);
	snprintf(dir2, sizeof(dir2), "%s/b", root);
	ok(write_trace(dir, "pa", 0) == 0 && write_trace(dir2, "pb", 5) == 0, "two traces written");
	test_bind(dir);
	test_run(dir);
	test_wants(dir, dir2);
	test_wants_paths(dir, dir2);
	test_sources(dir, dir2);
	test_formats(dir);
	test_live_drip();
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd)) {
	}
	return done_testing();
}
