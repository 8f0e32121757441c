/* SPDX-License-Identifier: MIT */
/*
 * lib/state/window.c - the state system's window: its changes held as
 * runs (segments), each after a snapshot of the state, encoded in a few
 * bytes a change; views brought to their time from the nearest snapshot;
 * the changes that built an entity, decoded from the runs.
 *
 * A change is pushed: applied to the host's current state and appended to
 * the open segment. A new segment starts, with a snapshot of the current
 * state (whole every eighth segment, else what differs from the previous
 * one), when the open one is full (its mapping: at least 1 MiB, four times
 * what the snapshot costs, so that snapshots cost at most a quarter of the
 * changes they stand before) or when the change is in the next eighth of
 * a window of trace time (a grid from the host's first change, so that
 * the window slides by eighths). The oldest segment goes once all its
 * changes are older than the window. The state at t is the snapshot of
 * the segment holding the first change after t (a whole one patched by at
 * most seven), moved forward by that segment's changes before it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "state/state-internal.h"

/* ------------------------------------------------------------ coding */

/*
 * A change: a byte kind | SAME_TS, a byte of which fields follow, then
 * each as a varint: the time since the previous change's (zigzag), the
 * CPU when not the previous change's, the thread when not the one the
 * CPU last ran, tid2 when not -1, a (relative to tid for the kinds that
 * name a process), b, c (a read's or write's relative to the previous
 * change's b: the call's return), str (a system call exit's as the call
 * the CPU last entered), str2, when not 0.
 */
enum { SAME_TS = 0x80 };
enum { M_CPU = 1, M_TID = 2, M_TID2 = 4, M_A = 8, M_B = 16, M_C = 32, M_STR = 64, M_STR2 = 128 };
#define CHG_MAX 64			/* bytes a change takes at most */
#define SEG_MIN (1u << 20)

static inline uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t get(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;

	for (unsigned sh = 0; sh < 64; sh += 7) {
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	return v;
}

/* a names a process: held relative to the thread (mostly the same) */
static inline bool a_rel(uint8_t kind)
{
	return kind == TRAWL_STATE_EXEC || kind >= TRAWL_STATE_OPEN;
}

static void wctx_init(struct wctx *x)
{
	x->ts = 0;
	x->cpu = 0;
	x->b = 0;
	memset(x->tid, 0xff, sizeof(x->tid));
	memset(x->sc, 0, sizeof(x->sc));
}

static inline void wctx_step(struct wctx *x, const struct chg *c)
{
	x->ts = c->ts;
	x->cpu = c->cpu;
	x->b = c->b;
	if ((uint32_t)c->cpu < TR_WCTX_CPUS) {
		x->tid[c->cpu] = c->kind == TRAWL_STATE_SWITCH ? c->tid2 : c->tid;
		if (c->kind == TRAWL_STATE_SYSCALL_ENTRY)
			x->sc[c->cpu] = c->str;
	}
}

/* str as held: a system call's exit names the call its CPU last entered
 * (0 when it is that one, the id + 1 otherwise; an entry's is the id) */
static inline uint32_t str_rel(const struct wctx *x, const struct chg *c, bool cpu_ctx)
{
	if (c->kind != TRAWL_STATE_SYSCALL_EXIT || !cpu_ctx)
		return c->str;
	return c->str == x->sc[c->cpu] ? 0 : c->str + 1;
}

/* c as held: a read's or write's count as its distance to the previous
 * change's b (the system call's return, mostly the same) */
static inline bool c_rel(uint8_t kind)
{
	return kind == TRAWL_STATE_READ || kind == TRAWL_STATE_WRITE;
}

static size_t encode(struct wctx *x, const struct chg *c, uint8_t *out)
{
	uint8_t *p = out + 2, m = 0;
	bool cpu_ctx = (uint32_t)c->cpu < TR_WCTX_CPUS;
	int64_t a = a_rel(c->kind) ? (int64_t)((uint64_t)c->a - (uint64_t)(int64_t)c->tid) : c->a;

	out[0] = c->kind | (c->ts == x->ts ? SAME_TS : 0);
	if (c->ts != x->ts)
		p = put(p, zz((int64_t)((uint64_t)c->ts - (uint64_t)x->ts)));
	if (c->cpu != x->cpu) {
		m |= M_CPU;
		p = put(p, zz(c->cpu));
	}
	if (!cpu_ctx || c->tid != x->tid[c->cpu]) {
		m |= M_TID;
		p = put(p, zz(c->tid));
	}
	if (c->tid2 != -1) {
		m |= M_TID2;
		p = put(p, zz(c->tid2));
	}
	if (a) {
		m |= M_A;
		p = put(p, zz(a));
	}
	if (c->b) {
		m |= M_B;
		p = put(p, zz(c->b));
	}
	int64_t cv = c_rel(c->kind) ? (int64_t)c->c - x->b : (int64_t)c->c;
	if (cv) {
		m |= M_C;
		p = put(p, zz(cv));
	}
	uint32_t sv = str_rel(x, c, cpu_ctx);
	if (sv) {
		m |= M_STR;
		p = put(p, sv);
	}
	if (c->str2) {
		m |= M_STR2;
		p = put(p, c->str2);
	}
	out[1] = m;
	wctx_step(x, c);
	return (size_t)(p - out);
}

static const uint8_t *decode(struct wctx *x, const uint8_t *p, struct chg *c)
{
	uint8_t k = *p++, m = *p++;

	c->kind = k & 0x7f;
	c->ts = k & SAME_TS ? x->ts : (int64_t)((uint64_t)x->ts + (uint64_t)unzz(get(&p)));
	c->cpu = m & M_CPU ? (int16_t)unzz(get(&p)) : (int16_t)x->cpu;
	if (m & M_TID)
		c->tid = (int32_t)unzz(get(&p));
	else
		c->tid = x->tid[c->cpu];
	c->tid2 = m & M_TID2 ? (int32_t)unzz(get(&p)) : -1;
	c->a = m & M_A ? unzz(get(&p)) : 0;
	if (a_rel(c->kind))
		c->a = (int64_t)((uint64_t)c->a + (uint64_t)(int64_t)c->tid);
	c->b = m & M_B ? unzz(get(&p)) : 0;
	int64_t cv = m & M_C ? unzz(get(&p)) : 0;
	c->c = (uint32_t)(c_rel(c->kind) ? cv + x->b : cv);
	uint32_t sv = m & M_STR ? (uint32_t)get(&p) : 0;
	if (c->kind == TRAWL_STATE_SYSCALL_EXIT && (uint32_t)c->cpu < TR_WCTX_CPUS)
		c->str = sv ? sv - 1 : x->sc[c->cpu];
	else
		c->str = sv;
	c->str2 = m & M_STR2 ? (uint32_t)get(&p) : 0;
	wctx_step(x, c);
	return p;
}

/* The time of the change at p, not decoding the rest. */
static inline int64_t peek_ts(const struct wctx *x, const uint8_t *p)
{
	if (p[0] & SAME_TS)
		return x->ts;
	p += 2;
	return (int64_t)((uint64_t)x->ts + (uint64_t)unzz(get(&p)));
}

/* ---------------------------------------------------------- segments */

static void seg_unref(struct seg *g)
{
	if (!g || --g->refs)
		return;
	tr_tables_release(&g->snap);
	free(g->del);
	if (g->buf)
		munmap(g->buf, g->cap);
	free(g);
}

static inline uint64_t slot_key(const struct tab *t, size_t i)
{
	uint64_t k;

	memcpy(&k, t->rec + i * t->rsz, sizeof(k));
	return k;
}

/* out: the records of cur that old has not or has otherwise; *del: the
 * keys of old that cur has not (appended, *n of them). */
static int tab_diff(struct tab *out, uint64_t **del, size_t *n, size_t *cap,
		    const struct tab *cur, const struct tab *old)
{
	for (size_t i = 0; i < cur->cap; i++) {
		if (!cur->used[i])
			continue;
		const uint8_t *r = cur->rec + i * cur->rsz, *o = tr_tab_find(old, slot_key(cur, i));
		if (o && !memcmp(o, r, cur->rsz))
			continue;
		uint8_t *d = tr_tab_get(out, slot_key(cur, i), NULL);
		if (!d)
			return -ENOMEM;
		memcpy(d, r, cur->rsz);
	}
	for (size_t i = 0; i < old->cap; i++) {
		if (!old->used[i] || tr_tab_find(cur, slot_key(old, i)))
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			uint64_t *k = realloc(*del, c * sizeof(*k));
			if (!k)
				return -ENOMEM;
			*del = k;
			*cap = c;
		}
		(*del)[(*n)++] = slot_key(old, i);
	}
	return 0;
}

static int tab_patch(struct tab *t, const struct tab *d, const uint64_t *del, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tr_tab_del(t, del[i]);
	for (size_t i = 0; i < d->cap; i++) {
		if (!d->used[i])
			continue;
		uint8_t *r = tr_tab_get(t, slot_key(d, i), NULL);
		if (!r)
			return -ENOMEM;
		memcpy(r, d->rec + i * d->rsz, d->rsz);
	}
	return 0;
}

/* t (the previous segment's state) made the state of g's snapshot */
static int snap_patch(struct tables *t, const struct seg *g)
{
	const struct tables *d = &g->snap;
	int rc;

	if ((rc = tab_patch(&t->thr, &d->thr, g->del, g->ndel[0])) ||
	    (rc = tab_patch(&t->fd, &d->fd, g->del + g->ndel[0], g->ndel[1])) ||
	    (rc = tab_patch(&t->rq, &d->rq, g->del + g->ndel[0] + g->ndel[1], g->ndel[2])))
		return rc;
	if (d->ncpus != t->ncpus) {
		struct icpu *c = realloc(t->cpus, (d->ncpus ? d->ncpus : 1) * sizeof(*c));
		if (!c)
			return -ENOMEM;
		t->cpus = c;
		t->ncpus = d->ncpus;
	}
	if (d->ncpus)
		memcpy(t->cpus, d->cpus, d->ncpus * sizeof(*t->cpus));
	t->ts = d->ts;
	t->next_sweep = d->next_sweep;
	t->gc_requests = d->gc_requests;
	t->gc_syscalls = d->gc_syscalls;
	return 0;
}

/* g's snapshot as what differs from old (the previous snapshot's state) */
static int snap_diff(struct seg *g, const struct tables *cur, const struct tables *old)
{
	const struct tab *c[3] = { &cur->thr, &cur->fd, &cur->rq };
	const struct tab *o[3] = { &old->thr, &old->fd, &old->rq };
	struct tab *d[3];
	size_t n = 0, cap = 0;
	int rc;

	tr_tables_init(&g->snap);
	d[0] = &g->snap.thr;
	d[1] = &g->snap.fd;
	d[2] = &g->snap.rq;
	g->delta = true;
	for (int i = 0; i < 3; i++) {
		size_t at = n;
		if ((rc = tab_diff(d[i], &g->del, &n, &cap, c[i], o[i])))
			return rc;
		g->ndel[i] = n - at;
	}
	if (cur->ncpus) {
		if (!(g->snap.cpus = malloc(cur->ncpus * sizeof(*g->snap.cpus))))
			return -ENOMEM;
		memcpy(g->snap.cpus, cur->cpus, cur->ncpus * sizeof(*g->snap.cpus));
	}
	g->snap.ncpus = cur->ncpus;
	g->snap.ts = cur->ts;
	g->snap.next_sweep = cur->next_sweep;
	g->snap.gc_requests = cur->gc_requests;
	g->snap.gc_syscalls = cur->gc_syscalls;
	return 0;
}

/*
 * A new segment for host h: its snapshot whole when it is the first, or
 * every eighth, or when the differences would not be much smaller; else
 * what differs from the previous snapshot (h->shadow: that state, kept
 * whole and patched along). Its mapping: four times what the snapshot
 * costs (a whole one over eight segments), at least 1 MiB.
 */
static struct seg *seg_new(struct host *h)
{
	struct seg *g = calloc(1, sizeof(*g));
	const struct tables *cur = &h->cur;
	size_t whole = tr_tables_bytes(cur), cost;

	if (!g)
		return NULL;
	g->refs = 1;
	g->first = g->max = INT64_MIN;
	bool full = !h->nseg || h->since_full >= 7 || !h->shadow_ok;
	if (!full && snap_diff(g, cur, &h->shadow)) {
		tr_tables_release(&g->snap);
		free(g->del);
		free(g);
		return NULL;
	}
	if (!full && tr_tables_bytes(&g->snap) * 2 > whole) {
		/* most of it changed: whole */
		tr_tables_release(&g->snap);
		free(g->del);
		g->del = NULL;
		memset(g->ndel, 0, sizeof(g->ndel));
		g->delta = false;
		full = true;
	}
	if (full) {
		if (tr_tables_copy(&g->snap, cur)) {
			free(g);
			return NULL;
		}
		cost = whole / 8;
	} else {
		cost = tr_tables_bytes(&g->snap) + whole / 8;
	}
	/* the shadow: the state of this snapshot */
	if (full || snap_patch(&h->shadow, g)) {
		tr_tables_release(&h->shadow);
		h->shadow_ok = !tr_tables_copy(&h->shadow, cur);
	}
	h->since_full = full ? 0 : h->since_full + 1;
	size_t cap = cost * 4;
	cap = cap < SEG_MIN ? SEG_MIN : (cap + 4095) & ~(size_t)4095;
	void *b = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) {
		g->refs = 1;
		seg_unref(g);
		return NULL;
	}
	g->buf = b;
	g->cap = cap;
	return g;
}

/* t: the state of h->seg[k]'s snapshot (a whole one patched by the
 * differences after it) */
static int snap_state(const struct host *h, size_t k, struct tables *t)
{
	size_t j = k;
	int rc;

	while (j && h->seg[j]->delta)
		j--;
	if (h->seg[j]->delta || tr_tables_copy(t, &h->seg[j]->snap))
		return -ENOMEM;
	for (size_t i = j + 1; i <= k; i++)
		if ((rc = snap_patch(t, h->seg[i])))
			return rc;
	return 0;
}

/* The oldest segment goes: the next one's snapshot is made whole first. */
static int seg_drop(struct host *h)
{
	struct seg *n = h->seg[1];

	if (n->delta) {
		struct tables t;
		if (tr_tables_copy(&t, &h->seg[0]->snap) || snap_patch(&t, n)) {
			tr_tables_release(&t);
			return -ENOMEM;
		}
		tr_tables_release(&n->snap);
		n->snap = t;
		free(n->del);
		n->del = NULL;
		memset(n->ndel, 0, sizeof(n->ndel));
		n->delta = false;
	}
	seg_unref(h->seg[0]);
	h->wb.g = NULL;		/* (another may come at its address) */
	memmove(h->seg, h->seg + 1, --h->nseg * sizeof(*h->seg));
	return 0;
}

void tr_state_window_release(struct host *h)
{
	for (size_t i = 0; i < h->nseg; i++)
		seg_unref(h->seg[i]);
	free(h->seg);
	h->seg = NULL;
	h->nseg = h->capseg = 0;
	h->wb.g = NULL;
	tr_tables_release(&h->shadow);
	h->shadow_ok = false;
}

/* Where the eighth of a window ts is in ends (a grid from the host's
 * first change); INT64_MAX past the last. */
static int64_t cell_end(const struct trawl_state *s, const struct host *h, int64_t ts)
{
	int64_t span = s->window / 8 > 0 ? s->window / 8 : 1, d, e;

	if (ts < h->grid0)
		return h->grid0;
	if (__builtin_sub_overflow(ts, h->grid0, &d) ||
	    __builtin_add_overflow(h->grid0, (d / span + 1) * span, &e))
		return INT64_MAX;
	return e;
}

static int seg_open(struct trawl_state *s, struct host *h)
{
	struct seg *g;

	if (h->nseg == h->capseg) {
		size_t cap = h->capseg ? h->capseg * 2 : 16;
		struct seg **n = realloc(h->seg, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		h->seg = n;
		h->capseg = cap;
	}
	if (!(g = seg_new(h)))
		return -ENOMEM;
	(void)s;
	h->seg[h->nseg++] = g;
	wctx_init(&h->enc);
	return 0;
}

int tr_state_window_push(struct trawl_state *s, struct host *h, const struct chg *c)
{
	struct seg *g = h->nseg ? h->seg[h->nseg - 1] : NULL;
	int rc;

	if (!g)
		h->grid0 = c->ts;
	if (!g || g->len + CHG_MAX > g->cap ||
	    (g->n && c->ts >= g->until)) {
		/* the snapshot: the state before c */
		if ((rc = seg_open(s, h)))
			return rc;
		g = h->seg[h->nseg - 1];
	}
	if ((rc = tr_state_apply(&h->cur, c, s->window)))
		return rc;
	g->len += encode(&h->enc, c, g->buf + g->len);
	if (!g->n++) {
		g->first = c->ts;
		g->until = cell_end(s, h, c->ts);
	}
	if (c->ts > g->max)
		g->max = c->ts;
	/* slide: a segment all older than the window goes */
	int64_t cut;
	if (__builtin_sub_overflow(c->ts, s->window, &cut))
		cut = INT64_MIN;
	if (cut > h->cut)
		h->cut = cut;
	while (h->nseg > 1 && h->seg[0]->max < h->cut)
		if ((rc = seg_drop(h)))
			return rc;
	return 0;
}

/*
 * Where the window's changes begin: the held changes before the cut that
 * lead the first segment are the ones the window has passed (a state
 * holding everything would have put them into its base). *from: how many
 * of segment 0's changes they are; returns the time of the latest of
 * them, or of segment 0's snapshot: the window's start.
 */
static int64_t window_begin(const struct host *hc, size_t *from)
{
	/* (a cache: moving it on changes no answer) */
	struct host *h = (struct host *)hc;
	const struct seg *g = h->seg[0];
	struct chg c;

	if (h->wb.g != g) {
		h->wb.g = g;
		h->wb.i = h->wb.off = 0;
		h->wb.start = g->snap.ts;
		wctx_init(&h->wb.x);
	}
	while (h->wb.i < g->n && peek_ts(&h->wb.x, g->buf + h->wb.off) < h->cut) {
		const uint8_t *q = decode(&h->wb.x, g->buf + h->wb.off, &c);
		h->wb.start = c.ts;
		h->wb.off = (size_t)(q - g->buf);
		h->wb.i++;
	}
	*from = h->wb.i;
	return h->wb.start;
}

/* ------------------------------------------------------------ public */

static const struct host *host_find(const struct trawl_state *s, const char *name)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i].name, name))
			return &s->hosts[i];
	return NULL;
}

int64_t trawl_state_window_start(const struct trawl_state *s, const char *host)
{
	const struct host *h = host_find(s, host);
	size_t from;

	if (!h)
		return INT64_MIN;
	if (s->window < 0 || !h->nseg)
		return h->cur.ts;
	return window_begin(h, &from);
}

void trawl_state_stats(const struct trawl_state *s, struct trawl_state_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->events = s->events;
	st->checkpoints = s->nck;
	st->bytes = sizeof(*s) + s->str.bytes + s->str.nslot * sizeof(uint32_t);
	for (size_t i = 0; i < s->nhosts; i++) {
		const struct host *h = &s->hosts[i];
		size_t from = 0;
		if (h->nseg)
			window_begin(h, &from);
		for (size_t j = 0; j < h->nseg; j++) {
			const struct seg *g = h->seg[j];
			st->changes += g->n;
			/* the pages the changes touched, and the snapshot */
			st->bytes += sizeof(*g) + ((g->len + 4095) & ~(size_t)4095) +
				     tr_tables_bytes(&g->snap) +
				     (g->ndel[0] + g->ndel[1] + g->ndel[2]) * sizeof(*g->del);
		}
		st->changes -= from;
		st->threads += h->cur.thr.n;
		st->fds += h->cur.fd.n;
		st->requests += h->cur.rq.n;
		st->gc_requests += h->cur.gc_requests;
		st->gc_syscalls += h->cur.gc_syscalls;
		st->bytes += sizeof(*h) + h->capseg * sizeof(*h->seg) + tr_tables_bytes(&h->cur) +
			     tr_tables_bytes(&h->shadow);
	}
	st->bytes += tr_state_ck_bytes(s);
}

/* ------------------------------------------------------------- views */

struct vseg {
	struct seg *g;
	size_t len, n;			/* as the view saw it */
};

struct trawl_state_view {
	const struct strtab *str;
	char *host;
	int64_t t, base_ts;
	struct tables tb;
	struct vseg *segs;		/* the window's changes up to t */
	size_t nsegs, from;		/* from: segment 0's first change in it */
	struct trawl_state_cpu *cpus;
	size_t ncpus;
	struct trawl_state_thread *thr;
	size_t nthr;
	struct trawl_state_fd *fds;
	size_t nfds;
	struct trawl_state_request *rqs;
	size_t nrqs;
	struct trawl_state *owned;	/* a replay's state (trawl_state_at_files) */
	/* trawl_state_at_files(): the history replayed when asked */
	const struct trawl_state *lazy;
	char **paths;
	size_t npaths;
	struct trawl_reader_opts ro;
	struct trawl_state_view *hist;
	int hist_rc;
	char hist_err[256];
};

static int cmp_thr(const void *a, const void *b)
{
	const struct trawl_state_thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_fd(const void *a, const void *b)
{
	const struct trawl_state_fd *x = a, *y = b;
	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static int cmp_rq(const void *a, const void *b)
{
	const struct trawl_state_request *x = a, *y = b;
	if (x->dev != y->dev)
		return (x->dev > y->dev) - (x->dev < y->dev);
	return (x->sector > y->sector) - (x->sector < y->sector);
}

static int view_fill(struct trawl_state_view *v)
{
	const struct tables *t = &v->tb;

	v->cpus = calloc(t->ncpus + 1, sizeof(*v->cpus));
	v->thr = calloc(t->thr.n + 1, sizeof(*v->thr));
	v->fds = calloc(t->fd.n + 1, sizeof(*v->fds));
	v->rqs = calloc(t->rq.n + 1, sizeof(*v->rqs));
	if (!v->cpus || !v->thr || !v->fds || !v->rqs)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncpus; i++) {
		const struct icpu *c = &t->cpus[i];
		if (!c->seen)
			continue;
		v->cpus[v->ncpus++] = (struct trawl_state_cpu){
			.cpu = (uint32_t)i, .tid = c->tid, .mode = c->mode, .irq = c->irq,
			.since = c->since,
		};
	}
	for (size_t i = 0; i < t->thr.cap; i++) {
		const struct ithread *th = (const void *)(t->thr.rec + i * t->thr.rsz);
		if (!t->thr.used[i])
			continue;
		v->thr[v->nthr++] = (struct trawl_state_thread){
			.tid = th->tid, .pid = th->pid, .ppid = th->ppid,
			.comm = tr_state_str(v->str, th->comm), .status = th->status,
			.since = th->since, .cpu = th->cpu,
			.syscall = th->syscall ? tr_state_str(v->str, th->syscall) : NULL,
			.syscall_since = th->syscall ? th->syscall_since : INT64_MIN,
			.io_inflight = th->io_inflight,
			.blocked_io = th->status == TRAWL_STATE_THREAD_BLOCKED && th->io_inflight,
			.created = th->created,
		};
	}
	for (size_t i = 0; i < t->fd.cap; i++) {
		const struct ifd *f = (const void *)(t->fd.rec + i * t->fd.rsz);
		if (!t->fd.used[i])
			continue;
		v->fds[v->nfds++] = (struct trawl_state_fd){
			.pid = f->pid, .fd = f->fd, .path = tr_state_str(v->str, f->path),
			.opened = f->opened, .bytes_read = f->br, .bytes_written = f->bw,
			.reads = f->nr, .writes = f->nw,
		};
	}
	for (size_t i = 0; i < t->rq.cap; i++) {
		const struct irqst *q = (const void *)(t->rq.rec + i * t->rq.rsz);
		if (!t->rq.used[i])
			continue;
		v->rqs[v->nrqs++] = (struct trawl_state_request){
			.dev = q->dev, .sector = q->sector, .nr_sector = q->nr, .write = q->write,
			.tid = q->tid, .inserted = q->inserted, .issued = q->issued,
		};
	}
	qsort(v->thr, v->nthr, sizeof(*v->thr), cmp_thr);
	qsort(v->fds, v->nfds, sizeof(*v->fds), cmp_fd);
	qsort(v->rqs, v->nrqs, sizeof(*v->rqs), cmp_rq);
	return 0;
}

/*
 * The state at t: every held change up to the first one after t (the
 * order they came in), applied to what came before them. The segment
 * holding that first change after t (or the last) is the one replayed,
 * from its snapshot.
 */
static int view_bring(struct trawl_state_view *v, const struct trawl_state *s,
		      const struct host *h, int64_t t)
{
	size_t k = 0;

	while (k + 1 < h->nseg && h->seg[k]->max <= t)
		k++;
	if (!(v->segs = calloc(k + 1, sizeof(*v->segs))))
		return -ENOMEM;
	for (size_t i = 0; i <= k; i++) {
		v->segs[i] = (struct vseg){ h->seg[i], h->seg[i]->len, h->seg[i]->n };
		h->seg[i]->refs++;
		v->nsegs++;
	}
	const struct seg *g = h->seg[k];
	const uint8_t *p = g->buf;
	struct wctx x;
	struct chg c;
	int rc;

	if ((rc = snap_state(h, k, &v->tb)))
		return rc;
	wctx_init(&x);
	for (size_t i = 0; i < g->n; i++) {
		p = decode(&x, p, &c);
		if (c.ts > t)
			break;
		if ((rc = tr_state_apply(&v->tb, &c, s->window)))
			return rc;
	}
	return 0;
}

struct trawl_state_view *trawl_state_at(const struct trawl_state *s, const char *host, int64_t t)
{
	const struct host *h = host_find(s, host);
	struct trawl_state_view *v;
	int rc = -ENOMEM;

	if (!h) {
		errno = ENOENT;
		return NULL;
	}
	bool whole = s->window < 0 || !h->nseg;	/* nothing held: the current state */
	size_t from = 0;
	int64_t start = whole ? h->cur.ts : window_begin(h, &from);
	if (t < start) {
		errno = ERANGE;
		return NULL;
	}
	if (!(v = calloc(1, sizeof(*v))))
		return NULL;
	v->str = &s->str;
	v->t = t;
	v->base_ts = start;
	v->from = from;
	if (!(v->host = strdup(host)))
		goto err;
	if (whole) {
		if (tr_tables_copy(&v->tb, &h->cur))
			goto err;
	} else if ((rc = view_bring(v, s, h, t))) {
		goto err;
	}
	if ((rc = view_fill(v)))
		goto err;
	return v;
err:
	trawl_state_view_free(v);
	errno = -rc;
	return NULL;
}

void tr_state_view_own(struct trawl_state_view *v, struct trawl_state *s)
{
	v->owned = s;
}

int tr_state_view_lazy(struct trawl_state_view *v, const struct trawl_state *s,
		       const char *const *paths, size_t npaths, const struct trawl_reader_opts *ro)
{
	v->lazy = s;
	if (!(v->paths = calloc(npaths + 1, sizeof(*v->paths))))
		return -ENOMEM;
	for (size_t i = 0; i < npaths; i++, v->npaths++)
		if (!(v->paths[i] = strdup(paths[i])))
			return -ENOMEM;
	v->ro.sz = sizeof(v->ro);
	if (ro)
		memcpy(&v->ro, ro, ro->sz < sizeof(v->ro) ? ro->sz : sizeof(v->ro));
	v->ro.sz = sizeof(v->ro);
	v->ro.hosts = NULL;
	v->ro.nhosts = 0;
	return 0;
}

int trawl_state_view_history(struct trawl_state_view *v, char *err, size_t errlen)
{
	if (!v->lazy || v->hist || v->hist_rc) {
		if (v->hist_rc)
			snprintf(err, errlen, "%s", v->hist_err);
		return v->hist_rc;
	}
	/* the window before t, as a view of the window has it */
	int64_t from;
	if (v->lazy->window <= 0 || __builtin_sub_overflow(v->t, v->lazy->window, &from))
		from = v->lazy->window > 0 ? INT64_MIN : v->t;
	v->hist = tr_state_replay(v->lazy, v->host, from, v->t, true, (const char *const *)v->paths,
				  v->npaths, &v->ro, v->hist_err, sizeof(v->hist_err));
	if (!v->hist) {
		v->hist_rc = -(errno ? errno : ENOMEM);
		snprintf(err, errlen, "%s", v->hist_err);
	}
	return v->hist_rc;
}

void trawl_state_view_free(struct trawl_state_view *v)
{
	if (!v)
		return;
	free(v->host);
	tr_tables_release(&v->tb);
	for (size_t i = 0; i < v->nsegs; i++)
		seg_unref(v->segs[i].g);
	free(v->segs);
	free(v->cpus);
	free(v->thr);
	free(v->fds);
	free(v->rqs);
	trawl_state_view_free(v->hist);
	for (size_t i = 0; i < v->npaths; i++)
		free(v->paths[i]);
	free(v->paths);
	trawl_state_free(v->owned);
	free(v);
}

int64_t trawl_state_view_time(const struct trawl_state_view *v)
{
	return v->t;
}

const char *trawl_state_view_host(const struct trawl_state_view *v)
{
	return v->host;
}

const struct trawl_state_cpu *trawl_state_view_cpu(const struct trawl_state_view *v, size_t i)
{
	return i < v->ncpus ? &v->cpus[i] : NULL;
}

const struct trawl_state_thread *trawl_state_view_thread(const struct trawl_state_view *v, size_t i)
{
	return i < v->nthr ? &v->thr[i] : NULL;
}

const struct trawl_state_thread *trawl_state_view_thread_find(const struct trawl_state_view *v,
							      int64_t tid)
{
	struct trawl_state_thread k = { .tid = tid };
	return bsearch(&k, v->thr, v->nthr, sizeof(k), cmp_thr);
}

const struct trawl_state_fd *trawl_state_view_fd(const struct trawl_state_view *v, size_t i)
{
	return i < v->nfds ? &v->fds[i] : NULL;
}

const struct trawl_state_fd *trawl_state_view_fd_find(const struct trawl_state_view *v,
						      int64_t pid, int64_t fd)
{
	struct trawl_state_fd k = { .pid = pid, .fd = fd };
	return bsearch(&k, v->fds, v->nfds, sizeof(k), cmp_fd);
}

const struct trawl_state_request *trawl_state_view_request(const struct trawl_state_view *v,
							   size_t i)
{
	return i < v->nrqs ? &v->rqs[i] : NULL;
}

static void chg_out(const struct trawl_state_view *v, const struct chg *c,
		    struct trawl_state_change *o)
{
	*o = (struct trawl_state_change){
		.ts = c->ts, .kind = c->kind, .cpu = c->cpu, .tid = c->tid, .tid2 = c->tid2,
		.a = c->a, .b = c->b, .c = c->c,
		.str = tr_state_str(v->str, c->str), .str2 = tr_state_str(v->str, c->str2),
	};
}

static bool concerns(const struct chg *c, enum trawl_state_entity by, int64_t x, int64_t y)
{
	switch (by) {
	case TRAWL_STATE_ENTITY_CPU:
		return c->cpu == x && c->kind != TRAWL_STATE_DUMP_PROCESS &&
		       c->kind != TRAWL_STATE_DUMP_FD && c->kind < TRAWL_STATE_OPEN;
	case TRAWL_STATE_ENTITY_THREAD:
		return (c->tid == x && c->kind != TRAWL_STATE_DUMP_PROCESS &&
			c->kind != TRAWL_STATE_DUMP_FD) || c->tid2 == x;
	default:
		return c->kind >= TRAWL_STATE_DUMP_FD && c->a == x && c->b == y;
	}
}

/* Every change of the entity up to the view's time, oldest first, to
 * take(arg, i, c) (i: its rank); their number. */
static size_t scan(const struct trawl_state_view *v, enum trawl_state_entity by, int64_t x,
		   int64_t y, void (*take)(void *arg, size_t i, const struct chg *c), void *arg)
{
	const struct chg *origin = NULL;
	size_t n = 0;

	if (by == TRAWL_STATE_ENTITY_THREAD) {
		const struct ithread *th = tr_tab_find(&v->tb.thr, (uint64_t)x);
		origin = th ? &th->origin : NULL;
	} else if (by == TRAWL_STATE_ENTITY_FD) {
		const struct ifd *f = tr_tab_find(&v->tb.fd, tr_fd_key(x, y));
		origin = f ? &f->origin : NULL;
	} else if (by != TRAWL_STATE_ENTITY_CPU) {
		return 0;
	}
	/* the change that created it, when the window no longer holds it */
	if (origin && origin->ts <= v->base_ts && origin->ts != INT64_MIN)
		take(arg, n++, origin);
	for (size_t i = 0; i < v->nsegs; i++) {
		const uint8_t *p = v->segs[i].g->buf;
		struct wctx w;
		struct chg c;

		wctx_init(&w);
		for (size_t j = 0; j < v->segs[i].n; j++) {
			p = decode(&w, p, &c);
			if (!i && j < v->from)
				continue;
			if (c.ts > v->t)
				return n;
			if (concerns(&c, by, x, y))
				take(arg, n++, &c);
		}
	}
	return n;
}

/* the view's history: the window before its time, replayed the first
 * time (a lazy view), or the view itself */
static const struct trawl_state_view *history_of(const struct trawl_state_view *v)
{
	if (!v->lazy)
		return v;
	char e[8];
	struct trawl_state_view *w = (struct trawl_state_view *)v;
	if (trawl_state_view_history(w, e, sizeof(e)))
		return NULL;
	return v->hist;
}

struct range_out {
	const struct trawl_state_view *v;
	size_t skip, max;
	struct trawl_state_change *out;
};

static void take_range(void *arg, size_t i, const struct chg *c)
{
	struct range_out *r = arg;
	if (i >= r->skip && i - r->skip < r->max)
		chg_out(r->v, c, &r->out[i - r->skip]);
}

size_t trawl_state_view_changes(const struct trawl_state_view *v, enum trawl_state_entity by,
				int64_t x, int64_t y, size_t skip,
				struct trawl_state_change *out, size_t max)
{
	if (!(v = history_of(v)))
		return 0;
	struct range_out r = { v, skip, out ? max : 0, out };
	return scan(v, by, x, y, take_range, &r);
}

struct ends_out {
	struct chg first, *ring;	/* the newest: raw, made public at the end */
	size_t max;
};

static void take_ends(void *arg, size_t i, const struct chg *c)
{
	struct ends_out *r = arg;
	if (!i)
		r->first = *c;
	else if (r->max)
		r->ring[(i - 1) % r->max] = *c;
}

size_t trawl_state_view_changes_ends(const struct trawl_state_view *v,
				     enum trawl_state_entity by, int64_t x, int64_t y,
				     struct trawl_state_change *first,
				     struct trawl_state_change *newest, size_t max)
{
	if (!(v = history_of(v)))
		return 0;
	struct ends_out r = { .max = newest ? max : 0 };
	if (r.max && !(r.ring = malloc(r.max * sizeof(*r.ring)))) {
		errno = ENOMEM;
		return 0;
	}
	size_t n = scan(v, by, x, y, take_ends, &r);
	if (n && first)
		chg_out(v, &r.first, first);
	/* changes n - k .. n - 1, k of them, oldest first; the oldest of
	 * them at (n - 1) % max once the ring went round */
	size_t k = n > 1 ? (n - 1 < r.max ? n - 1 : r.max) : 0;
	size_t at = k == r.max && k ? (n - 1) % r.max : 0;
	for (size_t i = 0; i < k; i++)
		chg_out(v, &r.ring[(at + i) % r.max], &newest[i]);
	free(r.ring);
	return n;
}

size_t trawl_state_view_cpu_changes(const struct trawl_state_view *v, uint32_t cpu,
				    struct trawl_state_change *out, size_t max)
{
	return trawl_state_view_changes(v, TRAWL_STATE_ENTITY_CPU, cpu, 0, 0, out, max);
}

size_t trawl_state_view_thread_changes(const struct trawl_state_view *v, int64_t tid,
				       struct trawl_state_change *out, size_t max)
{
	return trawl_state_view_changes(v, TRAWL_STATE_ENTITY_THREAD, tid, 0, 0, out, max);
}

size_t trawl_state_view_fd_changes(const struct trawl_state_view *v, int64_t pid, int64_t fd,
				   struct trawl_state_change *out, size_t max)
{
	return trawl_state_view_changes(v, TRAWL_STATE_ENTITY_FD, pid, fd, 0, out, max);
}
