/* SPDX-License-Identifier: MIT */
/*
 * lib/top/top.c - `trawl top` as a library object (trawl/top.h): a sink
 * that hands every batch of a reader to the five standard analyses
 * (lib/analysis) with the same slices of trace time, and keeps, per
 * slice, what they report (their rows, without histograms, and the
 * longest runs and waits) with a header per host (events, discarded,
 * newest event) in a ring bounded in trace time. Queries build a view's
 * rows from one slice: per thread, per process (the threads' tgids, as
 * the analyses' rows give them) or grouped across hosts by name.
 *
 * How the slices line up: every analysis opens its first slice at the
 * first event it is given and closes a slice when an event past its end
 * comes (or, live, when the beacons pass it: idle()); the top sink gives
 * them the same events, so their k-th period() calls are the same slice.
 * It splits each batch at the slices' ends, so that the events it counts
 * per host are those of the slice they fall in: the analyses close slice
 * k-1 at the first event of a chunk of slice k, before that chunk is
 * counted. A slice goes to the history once all five have reported it.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <trawl/analysis.h>
#include <trawl/top.h>

#include "internal.h"
#include "analysis/analysis-internal.h"
#include "kstate/kstate.h"	/* struct strtab: the cgroups' names */

/* A host without an event for this long (and 3 intervals) is down. */
#define DOWN_NS 5000000000LL

enum { AN_CPUTOP, AN_SCHEDLAT, AN_IOLATENCY, AN_IRQ, AN_SYSCALLS, NAN_ };
static const char *const an_names[NAN_] = { "cputop", "schedlat", "iolatency", "irq", "syscalls" };

/* One row of an analysis in a slice: what the views need of it. */
struct srow {
	uint8_t an, kind;		/* analysis, enum trawl_analysis_row_kind */
	uint16_t host;			/* index in t->hosts */
	uint32_t names;
	uint32_t cg;			/* its cgroup, in t->cg; 0 unknown */
	int64_t id, pid;
	uint64_t count, errors, bytes, rb, wb;
	int64_t max, sum;
	char label[64];
};

struct shost {
	int64_t newest;
	uint64_t events, discarded, discarded_total, unseen;
	double cpu_pct;
	unsigned ncpus;
	bool down;
};

struct slice {
	int64_t begin, end;
	struct srow *rows;
	size_t nrows, caprows;
	struct shost *hosts;		/* by host index, nhosts of them */
	size_t nhosts;
	struct trawl_top_sample *samples;
	size_t nsamples;
	bool ranged;
};

struct host {
	char *name;
	int64_t newest;
	uint64_t events;		/* in the slice being counted */
	uint64_t disc_seen;		/* discarded events at the last slice */
	unsigned ncpus;
};

struct trawl_top {
	struct trawl_top_opts o;
	char *comm;
	struct trawl_analysis *an[NAN_];
	struct trawl_reader *r;
	/* hosts, by first event */
	struct host *hosts;
	size_t nhosts;
	uint16_t *chost;		/* by event class index: host index + 1; 0 unknown */
	int64_t *clast;			/* by class index: its newest event's time */
	uint8_t *cwant;			/* by class index: the analyses that want it
					 * (bit i: an[i]'s wants()), WANT_KNOWN once asked */
	size_t nchost;
	/* a slice's chunk: each event's analyses, and the events one of them
	 * takes when it does not want them all */
	uint8_t *emask;
	struct trawl_event *sel;
	size_t capsel;
	/* counting: the slice the hosts' events counters are of */
	bool any;
	int64_t first;
	int64_t cidx;			/* slice index of the counters (-1: none yet) */
	/* slices the analyses reported, not all five yet */
	struct slice *pend;
	size_t npend, cappend;
	size_t pend_n[NAN_];
	int64_t done;			/* slices finalized */
	/* the history ring */
	struct slice **ring;
	size_t cap, head, n;		/* oldest at head */
	uint64_t dropped;
	int err;
	/* the hosts' view for trawl_top_host_at() */
	struct trawl_top_host hv;
	/* the cgroups seen, each once (a row's cg is its id; 0: unknown, or
	 * no memory to keep it) */
	struct strtab cg;
};

/* ------------------------------------------------------- names */

static const char *const view_names[TRAWL_TOP_NVIEWS] = { "cpu", "sched", "io", "irq", "syscalls" };
static const char *const col_names[TRAWL_TOP_NCOLS] = {
	"cpu_pct", "count", "errors", "sum_ns", "avg_ns", "max_ns", "read_bytes", "write_bytes",
	"threads",
};

const char *trawl_top_view_name(enum trawl_top_view v)
{
	return (unsigned)v < TRAWL_TOP_NVIEWS ? view_names[v] : NULL;
}

const char *trawl_top_column_name(enum trawl_top_column c)
{
	return (unsigned)c < TRAWL_TOP_NCOLS ? col_names[c] : NULL;
}

size_t trawl_top_view_columns(enum trawl_top_view v, enum trawl_top_column *out)
{
	static const enum trawl_top_column cols[TRAWL_TOP_NVIEWS][8] = {
		[TRAWL_TOP_CPU] = { TRAWL_TOP_COL_CPU_PCT, TRAWL_TOP_COL_SUM, TRAWL_TOP_COL_COUNT,
				    TRAWL_TOP_COL_THREADS, TRAWL_TOP_NCOLS },
		[TRAWL_TOP_SCHED] = { TRAWL_TOP_COL_MAX, TRAWL_TOP_COL_AVG, TRAWL_TOP_COL_COUNT,
				      TRAWL_TOP_COL_SUM, TRAWL_TOP_NCOLS },
		[TRAWL_TOP_IO] = { TRAWL_TOP_COL_SUM, TRAWL_TOP_COL_COUNT, TRAWL_TOP_COL_READ,
				   TRAWL_TOP_COL_WRITE, TRAWL_TOP_COL_AVG, TRAWL_TOP_COL_MAX,
				   TRAWL_TOP_COL_ERRORS, TRAWL_TOP_NCOLS },
		[TRAWL_TOP_IRQ] = { TRAWL_TOP_COL_COUNT, TRAWL_TOP_COL_SUM, TRAWL_TOP_COL_AVG,
				    TRAWL_TOP_COL_MAX, TRAWL_TOP_NCOLS },
		[TRAWL_TOP_SYSCALLS] = { TRAWL_TOP_COL_COUNT, TRAWL_TOP_COL_ERRORS, TRAWL_TOP_COL_SUM,
					 TRAWL_TOP_COL_AVG, TRAWL_TOP_COL_MAX, TRAWL_TOP_NCOLS },
	};
	if ((unsigned)v >= TRAWL_TOP_NVIEWS)
		return 0;
	size_t n = 0;
	while (n < 8 && cols[v][n] != TRAWL_TOP_NCOLS) {
		out[n] = cols[v][n];
		n++;
	}
	return n;
}

/* ------------------------------------------------------- slices */

static void slice_release(struct slice *s)
{
	free(s->rows);
	free(s->hosts);
	free(s->samples);
	memset(s, 0, sizeof(*s));
}

static int host_index(struct trawl_top *t, const char *name)
{
	for (size_t i = 0; i < t->nhosts; i++)
		if (!strcmp(t->hosts[i].name, name))
			return (int)i;
	if (t->nhosts >= UINT16_MAX - 1)
		return -E2BIG;
	struct host *n = realloc(t->hosts, (t->nhosts + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->hosts = n;
	struct host *h = &n[t->nhosts];
	memset(h, 0, sizeof(*h));
	if (!(h->name = strdup(name)))
		return -ENOMEM;
	h->newest = INT64_MIN;
	return (int)t->nhosts++;
}

static struct slice *pend_slot(struct trawl_top *t, size_t k)
{
	while (t->npend <= k) {
		if (t->npend == t->cappend) {
			size_t cap = t->cappend ? 2 * t->cappend : 8;
			struct slice *p = realloc(t->pend, cap * sizeof(*p));
			if (!p)
				return NULL;
			t->pend = p;
			t->cappend = cap;
		}
		memset(&t->pend[t->npend++], 0, sizeof(struct slice));
	}
	return &t->pend[k];
}

/* An analysis closed a slice: its rows (and samples) into the pending one. */
static void on_period(struct trawl_top *t, int an, const struct trawl_analysis *a)
{
	if (t->err)
		return;
	struct slice *s = pend_slot(t, t->pend_n[an]++);
	if (!s) {
		t->err = -ENOMEM;
		return;
	}
	if (!s->ranged) {
		trawl_analysis_range(a, &s->begin, &s->end);
		s->ranged = true;
	}
	size_t n = trawl_analysis_nrows(a);
	if (s->nrows + n > s->caprows) {
		size_t cap = s->nrows + n + 16;
		struct srow *r = realloc(s->rows, cap * sizeof(*r));
		if (!r) {
			t->err = -ENOMEM;
			return;
		}
		s->rows = r;
		s->caprows = cap;
	}
	const char *lasth = NULL;
	int hi = 0;
	for (size_t i = 0; i < n; i++) {
		const struct trawl_analysis_row *ar = trawl_analysis_row_at(a, i);
		if (ar->host != lasth) {
			hi = host_index(t, ar->host);
			if (hi < 0) {
				t->err = hi;
				return;
			}
			lasth = ar->host;
		}
		struct srow *r = &s->rows[s->nrows++];
		r->an = (uint8_t)an;
		r->kind = (uint8_t)ar->kind;
		r->host = (uint16_t)hi;
		r->names = ar->names;
		r->cg = ar->cgroup ? tr_state_intern(&t->cg, ar->cgroup, SIZE_MAX) : 0;
		r->id = ar->id;
		r->pid = ar->pid;
		r->count = ar->count;
		r->errors = ar->errors;
		r->bytes = ar->bytes;
		r->rb = ar->read_bytes;
		r->wb = ar->write_bytes;
		r->max = ar->max;
		r->sum = ar->sum;
		memcpy(r->label, ar->label, sizeof(r->label));
		r->label[sizeof(r->label) - 1] = 0;
	}
	if (an != AN_CPUTOP && an != AN_SCHEDLAT)
		return;
	size_t ns = trawl_analysis_nsamples(a);
	if (!ns)
		return;
	struct trawl_top_sample *p = realloc(s->samples, (s->nsamples + ns) * sizeof(*p));
	if (!p) {
		t->err = -ENOMEM;
		return;
	}
	s->samples = p;
	for (size_t i = 0; i < ns; i++) {
		const struct trawl_analysis_sample *as = trawl_analysis_sample_at(a, i);
		struct trawl_top_sample *o = &p[s->nsamples++];
		memset(o, 0, sizeof(*o));
		hi = host_index(t, as->host ? as->host : "");
		if (hi < 0) {
			t->err = hi;
			return;
		}
		o->host = t->hosts[hi].name;
		o->what = an == AN_CPUTOP ? "ran" : "waited";
		o->ts = as->ts;
		o->dur = as->dur;
		o->tid = as->tid;
		o->pid = as->row ? as->row->pid : -1;
		o->cpu = as->cpu;
		memcpy(o->comm, as->comm, sizeof(o->comm));
		o->comm[sizeof(o->comm) - 1] = 0;
	}
}

#define PERIOD_FN(N)                                                    \
	static void period_##N(void *arg, const struct trawl_analysis *a) \
	{                                                               \
		on_period(arg, N, a);                                   \
	}
PERIOD_FN(0)
PERIOD_FN(1)
PERIOD_FN(2)
PERIOD_FN(3)
PERIOD_FN(4)
static void (*const period_fns[NAN_])(void *, const struct trawl_analysis *) = {
	period_0, period_1, period_2, period_3, period_4,
};

/* The rows of a kind that compete for the history's places: the larger
 * first (CPU time, latency or time summed, then count) */
static int keep_cmp(const void *pa, const void *pb)
{
	const struct srow *a = pa, *b = pb;
	if (a->host != b->host)
		return a->host < b->host ? -1 : 1;
	if (a->an != b->an)
		return a->an < b->an ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->sum != b->sum)
		return a->sum > b->sum ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * A slice no longer the newest: per (host, analysis, kind), the first K
 * rows (keep_cmp), the others summed into one "other" row. CPU rows stay
 * (as many as the host's CPUs: the header's CPU share is theirs).
 */
static void compact(struct slice *s, size_t K)
{
	if (s->nrows <= K)
		return;
	qsort(s->rows, s->nrows, sizeof(*s->rows), keep_cmp);
	size_t w = 0;
	for (size_t i = 0; i < s->nrows;) {
		size_t j = i;
		while (j < s->nrows && s->rows[j].host == s->rows[i].host &&
		       s->rows[j].an == s->rows[i].an && s->rows[j].kind == s->rows[i].kind)
			j++;
		size_t keep = s->rows[i].kind == TRAWL_ANALYSIS_CPU || j - i <= K + 1 ? j - i : K;
		for (size_t k = i; k < i + keep; k++)
			s->rows[w++] = s->rows[k];
		if (keep < j - i) {
			struct srow o = s->rows[i + keep];
			for (size_t k = i + keep + 1; k < j; k++) {
				const struct srow *r = &s->rows[k];
				o.count += r->count;
				o.errors += r->errors;
				o.bytes += r->bytes;
				o.rb += r->rb;
				o.wb += r->wb;
				o.sum += r->sum;
				o.max = r->max > o.max ? r->max : o.max;
			}
			o.id = o.pid = -1;
			o.names = 0;
			o.cg = 0;
			snprintf(o.label, sizeof(o.label), "other");
			s->rows[w++] = o;
		}
		i = j;
	}
	s->nrows = w;
	struct srow *r = realloc(s->rows, (w ? w : 1) * sizeof(*r));
	if (r) {
		s->rows = r;
		s->caprows = w ? w : 1;
	}
}

static void ring_push(struct trawl_top *t, struct slice *s)
{
	if (t->n)	/* the newest so far is history now */
		compact(t->ring[(t->head + t->n - 1) % t->cap], t->o.history_rows);
	if (t->n == t->cap) {
		struct slice *old = t->ring[t->head];
		slice_release(old);
		free(old);
		t->head = (t->head + 1) % t->cap;
		t->n--;
		t->dropped++;
	}
	t->ring[(t->head + t->n) % t->cap] = s;
	t->n++;
}

/* Slice k (== t->done) is complete: its hosts' header, into the history. */
static int finalize_one(struct trawl_top *t, struct slice *src)
{
	struct slice *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = *src;
	s->nhosts = t->nhosts;
	s->hosts = calloc(t->nhosts ? t->nhosts : 1, sizeof(*s->hosts));
	if (!s->hosts) {
		free(s);
		return -ENOMEM;
	}
	bool counted = t->cidx == t->done;
	/* the tracers' discarded events, per host, from the streams' statistics */
	uint64_t *disc = calloc(t->nhosts ? t->nhosts : 1, sizeof(*disc));
	if (!disc) {
		free(s->hosts);
		free(s);
		return -ENOMEM;
	}
	if (t->r) {
		for (size_t i = 0; i < trawl_reader_ntraces(t->r); i++) {
			const struct trawl_reader_trace *tr = trawl_reader_trace_at(t->r, i);
			const char *hn = trawl_reader_trace_hostname(tr);
			size_t h;
			for (h = 0; h < t->nhosts && strcmp(t->hosts[h].name, hn); h++)
				;
			if (h == t->nhosts)
				continue;	/* no event of it yet */
			for (size_t j = 0; j < trawl_reader_trace_nstreams(tr); j++) {
				struct trawl_reader_stream_stats st;
				trawl_reader_stream_stats(trawl_reader_trace_stream(tr, j), &st);
				disc[h] += st.discarded;
			}
		}
	}
	int64_t dur = s->end - s->begin;
	for (size_t h = 0; h < t->nhosts; h++) {
		struct host *ho = &t->hosts[h];
		struct shost *sh = &s->hosts[h];
		sh->newest = ho->newest;
		sh->events = counted ? ho->events : 0;
		if (counted)
			ho->events = 0;
		sh->discarded = disc[h] > ho->disc_seen ? disc[h] - ho->disc_seen : 0;
		if (disc[h] > ho->disc_seen)
			ho->disc_seen = disc[h];
		sh->discarded_total = ho->disc_seen;
		sh->unseen = t->an[AN_CPUTOP] ? trawl_analysis_unseen_switches(t->an[AN_CPUTOP], ho->name)
					      : 0;
		unsigned ncpu = 0;
		int64_t busy = 0;
		for (size_t i = 0; i < s->nrows; i++)
			if (s->rows[i].an == AN_CPUTOP && s->rows[i].kind == TRAWL_ANALYSIS_CPU &&
			    s->rows[i].host == h) {
				busy += s->rows[i].sum;
				ncpu++;
			}
		if (ncpu > ho->ncpus)
			ho->ncpus = ncpu;
		sh->ncpus = ho->ncpus;
		sh->down = ho->newest != INT64_MIN && s->end - ho->newest > DOWN_NS &&
			   s->end - ho->newest > 3 * t->o.interval_ns;
		sh->cpu_pct = dur > 0 && !sh->down ? 100.0 * (double)busy / (double)dur : 0;
	}
	free(disc);
	memset(src, 0, sizeof(*src));
	ring_push(t, s);
	t->done++;
	if (t->o.slice)
		t->o.slice(t->o.arg, t);
	return 0;
}

/* Every slice all five analyses have reported goes to the history. */
static int finalize(struct trawl_top *t)
{
	if (t->err)
		return t->err;
	size_t m = SIZE_MAX;
	for (int i = 0; i < NAN_; i++)
		m = t->pend_n[i] < m ? t->pend_n[i] : m;
	for (size_t k = 0; k < m; k++) {
		int r = finalize_one(t, &t->pend[k]);
		if (r < 0)
			return r;
	}
	if (m) {
		for (size_t k = m; k < t->npend; k++)
			t->pend[k - m] = t->pend[k];
		t->npend -= m;
		for (int i = 0; i < NAN_; i++)
			t->pend_n[i] -= m;
	}
	return 0;
}

/* ------------------------------------------------------- the sink */

static int start(void *self, struct trawl_reader *r)
{
	struct trawl_top *t = self;
	t->r = r;
	for (int i = 0; i < NAN_; i++) {
		struct trawl_sink s = trawl_analysis_sink(t->an[i]);
		int rc = s.ops->start(s.self, r);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * A chunk of one slice to the analyses (want[i]: how many of its events
 * an[i] wants, t->emask[] each event's). An analysis that wants only some
 * takes those, and the chunk's first and last events whatever their class
 * (as the reader's wants() contract gives them: time only, so that it
 * closes its slices and sees time go by as it would with all), not each
 * event of the others only to pass over it (five analyses, most events
 * of interest to one or two).
 */
static int feed(struct trawl_top *t, const struct trawl_event *ev, size_t n,
		const size_t want[NAN_])
{
	for (int i = 0; i < NAN_; i++) {
		struct trawl_sink s = trawl_analysis_sink(t->an[i]);
		const struct trawl_event *e = ev;
		size_t m = n;
		if (want[i] + 2 < n) {
			const uint8_t bit = (uint8_t)(1u << i);
			struct trawl_event *o = t->sel;
			m = 0;
			o[m++] = ev[0];
			for (size_t j = 1; j + 1 < n; j++)
				if (t->emask[j] & bit)
					o[m++] = ev[j];
			o[m++] = ev[n - 1];
			e = o;
		}
		int rc = s.ops->events(s.self, e, m);
		if (rc < 0)
			return rc;
	}
	return finalize(t);
}

#define WANT_KNOWN 0x80u

static int want_of(struct trawl_top *t, const struct trawl_event *e)
{
	uint32_t ci = e->cls->index;
	uint8_t w = t->cwant[ci];
	if (likely(w & WANT_KNOWN))
		return w;
	w = WANT_KNOWN;
	for (int i = 0; i < NAN_; i++) {
		struct trawl_sink s = trawl_analysis_sink(t->an[i]);
		if (!s.ops->wants || s.ops->wants(s.self, e->cls))
			w |= (uint8_t)(1u << i);
	}
	t->cwant[ci] = w;
	/* a class's first event to every analysis: a host's first event
	 * is one (its span starts there, as the analysis alone sees it) */
	return WANT_KNOWN | ((1u << NAN_) - 1);
}

static int host_of(struct trawl_top *t, const struct trawl_event *e)
{
	uint32_t ci = e->cls->index;
	if (ci >= t->nchost) {
		size_t nc = ci + 64;
		uint16_t *c = realloc(t->chost, nc * sizeof(*c));
		if (!c)
			return -ENOMEM;
		t->chost = c;
		uint8_t *w = realloc(t->cwant, nc);
		if (!w)
			return -ENOMEM;
		t->cwant = w;
		int64_t *l = realloc(t->clast, nc * sizeof(*l));
		if (!l)
			return -ENOMEM;
		t->clast = l;
		memset(c + t->nchost, 0, (nc - t->nchost) * sizeof(*c));
		memset(w + t->nchost, 0, nc - t->nchost);
		for (size_t k = t->nchost; k < nc; k++)
			l[k] = INT64_MIN;	/* (none yet: finish() after a failed feed) */
		t->nchost = nc;
	}
	if (!t->chost[ci]) {
		int h = host_index(t, trawl_reader_trace_hostname(trawl_reader_stream_trace(e->stream)));
		if (h < 0)
			return h;
		t->chost[ci] = (uint16_t)(h + 1);
	}
	return t->chost[ci] - 1;
}

static int events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_top *t = self;
	size_t i = 0;
	if (!n)
		return 0;
	if (!t->any) {
		t->any = true;
		t->first = ev[0].ts;
	}
	if (n > t->capsel) {
		uint8_t *m = realloc(t->emask, n);
		if (!m)
			return -ENOMEM;
		t->emask = m;
		struct trawl_event *o = realloc(t->sel, n * sizeof(*o));
		if (!o)
			return -ENOMEM;
		t->sel = o;
		t->capsel = n;
	}
	while (i < n) {
		/* a chunk of one slice: [i, j) */
		int64_t k = ev[i].ts >= t->first ? (ev[i].ts - t->first) / t->o.interval_ns : 0;
		int64_t end = t->first + (k + 1) * t->o.interval_ns;
		size_t j = i + 1;
		while (j < n && ev[j].ts < end)
			j++;
		size_t want[NAN_] = { 0 };
		for (size_t x = i; x < j; x++) {
			int h = host_of(t, &ev[x]);	/* (also sizes cwant) */
			if (h < 0)
				return h;
			uint8_t w = (uint8_t)want_of(t, &ev[x]);
			t->emask[x - i] = w;
			for (int a = 0; a < NAN_; a++)
				want[a] += w >> a & 1;
		}
		int rc = feed(t, ev + i, j - i, want);	/* closes the slices before k */
		if (rc < 0)
			return rc;
		if (t->cidx != k) {
			/* (the counters of an earlier slice were taken by finalize) */
			for (size_t h = 0; h < t->nhosts; h++)
				t->hosts[h].events = 0;
			t->cidx = k;
		}
		for (size_t x = i; x < j; x++) {
			uint32_t ci = ev[x].cls->index;
			struct host *h = &t->hosts[t->chost[ci] - 1];
			h->events++;
			h->newest = t->clast[ci] = ev[x].ts;
		}
		i = j;
	}
	return 0;
}

static int finish(void *self, struct trawl_reader *r)
{
	struct trawl_top *t = self;
	int ret = 0;
	/* each class's newest time to the analyses that were not given it
	 * (feed()): a host's last slice ends at its last event */
	for (size_t c = 0; c < t->nchost; c++)
		for (int i = 0; t->chost[c] && i < NAN_; i++)
			tr_analysis_class_seen(t->an[i], (uint32_t)c, t->clast[c]);
	for (int i = 0; i < NAN_; i++) {
		struct trawl_sink s = trawl_analysis_sink(t->an[i]);
		int rc = s.ops->finish(s.self, r);
		if (rc < 0 && !ret)
			ret = rc;
	}
	int rc = finalize(t);
	return ret ? ret : rc;
}

static int idle(void *self, struct trawl_reader *r)
{
	struct trawl_top *t = self;
	for (int i = 0; i < NAN_; i++) {
		struct trawl_sink s = trawl_analysis_sink(t->an[i]);
		int rc = s.ops->idle(s.self, r);
		if (rc < 0)
			return rc;
	}
	int rc = finalize(t);
	if (rc < 0)
		return rc;
	return t->o.idle ? t->o.idle(t->o.arg, t) : 0;
}

/* (no wants(): every event is counted in its host's events/s) */
static const struct trawl_sink_ops sink_ops = {
	.sz = sizeof(sink_ops), .name = "top", .start = start, .events = events,
	.finish = finish, .idle = idle,
};

struct trawl_sink trawl_top_sink(struct trawl_top *t)
{
	return (struct trawl_sink){ .ops = &sink_ops, .self = t };
}

struct trawl_top *trawl_top_new(const struct trawl_top_opts *o, char *err, size_t errlen)
{
	if (!o || o->sz < offsetof(struct trawl_top_opts, samples) + sizeof(o->samples)) {
		snprintf(err, errlen, "top: bad options");
		errno = EINVAL;
		return NULL;
	}
	if (o->interval_ns && o->interval_ns < 1000000) {
		snprintf(err, errlen, "top: an interval of at least 1 ms");
		errno = EINVAL;
		return NULL;
	}
	struct trawl_top *t = calloc(1, sizeof(*t));
	if (!t)
		goto nomem;
	t->o = *o;
	t->cidx = -1;
	if (!t->o.interval_ns)
		t->o.interval_ns = 1000000000;
	if (!t->o.history_ns)
		t->o.history_ns = 600 * (int64_t)1000000000;
	if (!t->o.samples)
		t->o.samples = 32;
	if (o->sz < offsetof(struct trawl_top_opts, history_rows) + sizeof(o->history_rows))
		t->o.history_rows = 0;
	if (!t->o.history_rows)
		t->o.history_rows = 64;
	if (o->comm && !(t->comm = strdup(o->comm)))
		goto nomem;
	t->o.comm = t->comm;
	int64_t cap = t->o.history_ns / t->o.interval_ns;
	t->cap = cap < 1 ? 1 : cap > 1000000 ? 1000000 : (size_t)cap;
	if (!(t->ring = calloc(t->cap, sizeof(*t->ring))))
		goto nomem;
	for (int i = 0; i < NAN_; i++) {
		struct trawl_analysis_opts ao = {
			.sz = sizeof(ao), .name = an_names[i], .tid = -1, .cpu = -1,
			.comm = t->comm, .interval_ns = t->o.interval_ns,
			.period = period_fns[i], .arg = t,
			.keep_samples = i == AN_CPUTOP || i == AN_SCHEDLAT,
			.keep_longest = t->o.samples,
		};
		if (!(t->an[i] = trawl_analysis_new(&ao, err, errlen))) {
			int e = errno;
			trawl_top_free(t);
			errno = e;
			return NULL;
		}
	}
	return t;
nomem:
	trawl_top_free(t);
	snprintf(err, errlen, "top: out of memory");
	errno = ENOMEM;
	return NULL;
}

void trawl_top_free(struct trawl_top *t)
{
	if (!t)
		return;
	for (int i = 0; i < NAN_; i++)
		trawl_analysis_free(t->an[i]);
	for (size_t i = 0; i < t->npend; i++)
		slice_release(&t->pend[i]);
	free(t->pend);
	for (size_t i = 0; i < t->n; i++) {
		struct slice *s = t->ring[(t->head + i) % t->cap];
		slice_release(s);
		free(s);
	}
	free(t->ring);
	for (size_t i = 0; i < t->nhosts; i++)
		free(t->hosts[i].name);
	free(t->hosts);
	free(t->chost);
	free(t->cwant);
	free(t->clast);
	free(t->emask);
	free(t->sel);
	free(t->comm);
	tr_state_strtab_release(&t->cg);
	free(t);
}

/* ------------------------------------------------------- reading */

static const struct slice *slice_at(const struct trawl_top *t, size_t i)
{
	return i < t->n ? t->ring[(t->head + i) % t->cap] : NULL;
}

size_t trawl_top_nslices(const struct trawl_top *t)
{
	return t->n;
}

uint64_t trawl_top_dropped(const struct trawl_top *t)
{
	return t->dropped;
}

int trawl_top_slice_range(const struct trawl_top *t, size_t i, int64_t *begin, int64_t *end)
{
	const struct slice *s = slice_at(t, i);
	if (!s)
		return -ERANGE;
	*begin = s->begin;
	*end = s->end;
	return 0;
}

size_t trawl_top_nhosts(const struct trawl_top *t, size_t slice)
{
	const struct slice *s = slice_at(t, slice);
	return s ? s->nhosts : 0;
}

const struct trawl_top_host *trawl_top_host_at(const struct trawl_top *t, size_t slice, size_t j)
{
	const struct slice *s = slice_at(t, slice);
	if (!s || j >= s->nhosts)
		return NULL;
	struct trawl_top *m = (struct trawl_top *)t;	/* (the one view it keeps) */
	struct trawl_top_host *h = &m->hv;
	const struct shost *sh = &s->hosts[j];
	h->name = t->hosts[j].name;
	h->newest = sh->newest;
	h->age_ns = -1;
	if (t->o.live && sh->newest != INT64_MIN) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		h->age_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - t->hosts[j].newest;
		if (h->age_ns < 0)
			h->age_ns = 0;
	}
	h->down = sh->down;
	h->events = sh->events;
	int64_t dur = s->end - s->begin;
	h->events_per_s = dur > 0 ? (double)sh->events * 1e9 / (double)dur : 0;
	h->discarded = sh->discarded;
	h->discarded_total = sh->discarded_total;
	h->unseen_switches = sh->unseen;
	h->cpu_pct = sh->cpu_pct;
	h->ncpus = sh->ncpus;
	return h;
}

size_t trawl_top_nsamples(const struct trawl_top *t, size_t slice)
{
	const struct slice *s = slice_at(t, slice);
	return s ? s->nsamples : 0;
}

const struct trawl_top_sample *trawl_top_sample_at(const struct trawl_top *t, size_t slice,
						   size_t j)
{
	const struct slice *s = slice_at(t, slice);
	return s && j < s->nsamples ? &s->samples[j] : NULL;
}

/* A candidate row with its merge key. */
struct cand {
	char key[160];
	struct trawl_top_row row;
	bool main;			/* a process row's name from its main thread */
	uint32_t names;			/* its thread's name generation (after exec:
					 * one more) */
	const char *host;		/* its host (the row's is "*" when grouped) */
};

/* "comm (tid)" -> "comm" (the label the analyses give a thread, a process) */
static void label_name(char *out, size_t cap, const char *label, int64_t id)
{
	char suf[32];
	snprintf(suf, sizeof(suf), " (%" PRId64 ")", id);
	size_t n = strlen(label), s = strlen(suf);
	if (n >= s && !strcmp(label + n - s, suf))
		n -= s;
	n = n < cap - 1 ? n : cap - 1;
	memcpy(out, label, n);
	out[n] = 0;
}

/* By key; among equal keys (rows merged into one), the main thread's
 * first, then the newest name (a thread after exec is its new program):
 * the merged row's name, whatever order qsort leaves them in. */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);
	if (c)
		return c;
	if (a->main != b->main)
		return a->main ? -1 : 1;
	if (a->names != b->names)
		return a->names > b->names ? -1 : 1;
	c = strcmp(a->row.name, b->row.name);
	return c ? c : strcmp(a->host, b->host);
}

struct sort_by {
	enum trawl_top_column col;
	bool asc;
};

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct trawl_top_row *a = pa, *b = pb;
	const struct sort_by *by = arg;
	double x = a->v[by->col], y = b->v[by->col];
	if (x != y)
		return (x < y) == by->asc ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	c = strcmp(a->host, b->host);
	if (c)
		return c;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int trawl_top_query(const struct trawl_top *t, const struct trawl_top_query *q,
		    struct trawl_top_row **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!q || q->sz < offsetof(struct trawl_top_query, limit) + sizeof(q->limit) ||
	    (unsigned)q->view >= TRAWL_TOP_NVIEWS)
		return -EINVAL;
	const struct slice *s = slice_at(t, q->slice);
	if (!s)
		return -ERANGE;
	enum trawl_top_column cols[TRAWL_TOP_NCOLS];
	size_t ncols = trawl_top_view_columns(q->view, cols);
	enum trawl_top_column sc = q->sort;
	bool known = false;
	for (size_t i = 0; i < ncols; i++)
		known |= cols[i] == sc;
	if (!known)
		sc = cols[0];
	struct cand *c = calloc(s->nrows ? s->nrows : 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	size_t nc = 0;
	int64_t dur = s->end - s->begin;
	for (size_t i = 0; i < s->nrows; i++) {
		const struct srow *r = &s->rows[i];
		const char *kind;
		bool task = false;	/* a thread's or process's row */
		switch (q->view) {
		case TRAWL_TOP_CPU:
		case TRAWL_TOP_SCHED:
			if (r->an != (q->view == TRAWL_TOP_CPU ? AN_CPUTOP : AN_SCHEDLAT) ||
			    r->kind != TRAWL_ANALYSIS_THREAD)
				continue;
			kind = q->threads ? "thread" : "process";
			task = true;
			break;
		case TRAWL_TOP_IO:
			if (r->an != AN_IOLATENCY ||
			    (r->kind != TRAWL_ANALYSIS_PROCESS && r->kind != TRAWL_ANALYSIS_DISK))
				continue;
			task = r->kind == TRAWL_ANALYSIS_PROCESS;
			kind = task ? "process" : "disk";
			break;
		case TRAWL_TOP_IRQ:
			if (r->an != AN_IRQ ||
			    (r->kind != TRAWL_ANALYSIS_HARDIRQ && r->kind != TRAWL_ANALYSIS_SOFTIRQ))
				continue;
			kind = r->kind == TRAWL_ANALYSIS_HARDIRQ ? "irq" : "softirq";
			break;
		default:
			if (r->an != AN_SYSCALLS || r->kind != TRAWL_ANALYSIS_SYSCALL)
				continue;
			kind = "syscall";
			break;
		}
		const char *host = t->hosts[r->host].name;
		if ((q->host && fnmatch(q->host, host, 0)) ||
		    (r->host < s->nhosts && s->hosts[r->host].down))
			continue;
		struct cand *x = &c[nc];
		memset(x, 0, sizeof(*x));
		struct trawl_top_row *o = &x->row;
		o->host = x->host = host;
		o->kind = kind;
		o->nhosts = 1;
		o->begin = s->begin;
		o->end = s->end;
		o->pid = o->tid = -1;
		x->names = r->names;
		bool by_cg = q->group && task && q->sz >= offsetof(struct trawl_top_query, by_cgroup) +
							  sizeof(q->by_cgroup) && q->by_cgroup;
		if (task)
			o->cgroup = r->cg ? tr_state_str(&t->cg, r->cg) : NULL;
		if (task) {
			label_name(o->name, sizeof(o->name), r->label, r->id);
			if (r->kind == TRAWL_ANALYSIS_PROCESS) {
				o->pid = r->id;
				x->main = true;
			} else {
				o->tid = r->id;
				o->pid = r->pid >= 0 ? r->pid : r->id;
				x->main = o->pid == o->tid;
			}
			if (q->comm && fnmatch(q->comm, o->name, 0))
				continue;
			if (q->pid > 0 && o->pid != q->pid)
				continue;
			if (!q->threads)
				o->tid = -1;
		} else {
			if (q->pid > 0)
				continue;
			snprintf(o->name, sizeof(o->name), "%s", r->label);
		}
		double cnt = (double)r->count, sum = (double)r->sum;
		o->v[TRAWL_TOP_COL_COUNT] = cnt;
		o->v[TRAWL_TOP_COL_ERRORS] = (double)r->errors;
		o->v[TRAWL_TOP_COL_SUM] = sum;
		o->v[TRAWL_TOP_COL_MAX] = r->count ? (double)r->max : 0;
		if (r->kind == TRAWL_ANALYSIS_PROCESS) {
			o->v[TRAWL_TOP_COL_READ] = (double)r->rb;
			o->v[TRAWL_TOP_COL_WRITE] = (double)r->wb;
		} else if (r->kind == TRAWL_ANALYSIS_DISK) {
			o->v[TRAWL_TOP_COL_WRITE] = (double)r->bytes;
		}
		o->v[TRAWL_TOP_COL_THREADS] = r->kind == TRAWL_ANALYSIS_THREAD ? 1 : 0;
		/* the merge key: per host or grouped ("*"), then the entity */
		const char *kh = q->group ? "*" : host;
		if (!task)
			snprintf(x->key, sizeof(x->key), "%s\x1f%s\x1f%s", kh, kind, o->name);
		else if (by_cg) {
			const char *g = o->cgroup ? o->cgroup : "-";
			size_t gl = strlen(g);
			snprintf(o->name, sizeof(o->name), "%s",
				 gl >= sizeof(o->name) ? g + gl - (sizeof(o->name) - 1) : g);
			snprintf(x->key, sizeof(x->key), "*\x1f" "cg\x1f%s",
				 gl >= sizeof(x->key) - 5 ? g + gl - (sizeof(x->key) - 5) : g);
			x->main = true;	/* (the name is the group's, whichever row) */
		} else if (q->group)
			snprintf(x->key, sizeof(x->key), "*\x1f%s", o->name);
		else if (q->threads)
			snprintf(x->key, sizeof(x->key), "%s\x1f%020" PRId64, kh, o->tid);
		else
			snprintf(x->key, sizeof(x->key), "%s\x1f%020" PRId64, kh, o->pid);
		if (q->group) {
			o->host = "*";
			o->pid = o->tid = -1;
		}
		nc++;
	}
	qsort(c, nc, sizeof(*c), cand_cmp);
	/* merge equal keys */
	struct trawl_top_row *rows = calloc(nc ? nc : 1, sizeof(*rows));
	if (!rows) {
		free(c);
		return -ENOMEM;
	}
	size_t nr = 0;
	for (size_t i = 0; i < nc;) {
		size_t j = i + 1;
		struct trawl_top_row *o = &rows[nr++];
		*o = c[i].row;
		bool main = c[i].main;
		for (; j < nc && !strcmp(c[j].key, c[i].key); j++) {
			const struct trawl_top_row *y = &c[j].row;
			for (int k = 0; k < TRAWL_TOP_NCOLS; k++)
				if (k == TRAWL_TOP_COL_MAX)
					o->v[k] = y->v[k] > o->v[k] ? y->v[k] : o->v[k];
				else
					o->v[k] += y->v[k];
			if (c[j].main && !main) {
				memcpy(o->name, y->name, sizeof(o->name));
				main = true;
			}
		}
		/* grouped: the hosts among the rows summed */
		if (q->group) {
			unsigned nh = 0;
			for (size_t x = i; x < j; x++) {
				bool seen = false;
				for (size_t y = i; y < x && !seen; y++)
					seen = c[y].host == c[x].host;
				nh += !seen;
			}
			o->nhosts = nh;
		}
		double cnt = o->v[TRAWL_TOP_COL_COUNT];
		o->v[TRAWL_TOP_COL_AVG] = cnt > 0 ? o->v[TRAWL_TOP_COL_SUM] / cnt : 0;
		if (q->view == TRAWL_TOP_CPU)
			o->v[TRAWL_TOP_COL_CPU_PCT] =
				dur > 0 ? 100.0 * o->v[TRAWL_TOP_COL_SUM] / (double)dur : 0;
		i = j;
	}
	free(c);
	struct sort_by by = { sc, q->ascending };
	qsort_r(rows, nr, sizeof(*rows), row_cmp, &by);
	if (q->limit && nr > q->limit)
		nr = q->limit;
	*out = rows;
	*n = nr;
	return 0;
}
