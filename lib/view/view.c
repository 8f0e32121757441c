/* SPDX-License-Identifier: MIT */
/*
 * lib/view/view.c - the timeline sink: events -> rows of items, then levels
 * of detail and deflated tiles (docs/view.md).
 *
 * Items come in each row's start order (a row's intervals do not overlap,
 * and are emitted as they end), so a row is a byte stream of varints while
 * reading (about 4 bytes an item), decoded once per row when building.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "kstate/kstate.h"
#include "util/json.h"
#include "view-internal.h"

#define TILE_ITEMS 4096
#define DETAIL_BYTES 96
#define LOD_W1 64		/* ns: the finest bucket; each level 4x the last */
#define DENSITY_W 65536		/* ns: the host row's buckets at its finest */

/* ------------------------------------------------------------ buffers */

int tr_vbuf_put(struct tr_vbuf *b, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (tr_grow(&b->p, &b->cap, b->len + n - 1, 1))	/* room up to byte len + n - 1 */
		return -ENOMEM;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

int tr_vbuf_uv(struct tr_vbuf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	do {
		t[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		t[n] |= v ? 0x80 : 0;
		n++;
	} while (v);
	return tr_vbuf_put(b, t, n);
}

void tr_vbuf_release(struct tr_vbuf *b)
{
	free(b->p);
	*b = (struct tr_vbuf){ 0 };
}

static uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static uint64_t get_uv(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned sh = 0;

	while (*p < end && sh < 64) {
		uint8_t c = *(*p)++;

		v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			break;
		sh += 7;
	}
	return v;
}

/* ------------------------------------------------------------- the view */

enum ckind { CK_UNKNOWN, CK_OTHER, CK_SWITCH, CK_WAKE, CK_SYS_ENTRY, CK_SYS_EXIT, CK_BEGIN,
	     CK_END, CK_EXEC };

struct host {
	char *name;
	int64_t first, last;		/* raw ns */
	int64_t bucket;			/* density: the open bucket, its count */
	uint64_t count;
	bool has_fix;
	struct trawl_sync_store_entry fix;	/* host/reference/path not kept */
	char *reference;
};

struct open_slice {
	uint32_t host;
	int64_t vtid;
	uint32_t name;			/* the pair's name ("app:request") */
	int64_t key;			/* its id field, INT64_MIN: none */
	int64_t s;
	uint32_t depth;
	char *det;
	size_t detlen;
};

struct stream_host {
	const struct trawl_reader_stream *s;
	uint32_t host;
};

struct trawl_view {
	struct trawl_view_opts o;
	int64_t base;			/* ns: every time is relative to it */
	bool have_base;
	uint64_t events;
	/* strings */
	char **str;
	size_t nstr, strcap;
	uint32_t *strh;			/* hash -> id + 1 */
	size_t strhcap;
	/* hosts and rows */
	struct host *hosts;
	size_t nhosts, hostcap;
	struct tr_vrow **rows;
	size_t nrows, rowcap;
	uint32_t *rowh;			/* hash -> index + 1 */
	size_t rowhcap;
	struct stream_host *sh;
	size_t nsh, shcap, shlast;
	/* classes */
	uint8_t *ck;
	uint32_t *cname;		/* string id of the class (pair) name */
	size_t nck;
	const struct trawl_field *vtid, *pair_id;
	/* the kernel's model of each host (lib/kstate), and the scheduling
	 * rows read from it */
	struct tr_kmodel km;
	struct tr_vsched *sched;
	struct open_slice *open;
	size_t nopen, opencap;
	/* results */
	bool built;
	struct tr_vbuf tiles;		/* deflated tiles, back to back */
	struct tr_vtile **tile_by_id;
	uint64_t *blob_order;	/* tile ids in the page's blob order */
	uint64_t ntiles;
	struct trawl_view_stats st;
	uint64_t html_size;
	char detail[4096];
	/* the fast formatter (per class compiled), from start() to finish():
	 * it keeps pointers to the reader's classes */
	struct trawl_text *text;
};

static uint64_t strhash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static uint32_t intern(struct trawl_view *v, const char *s)
{
	if (2 * (v->nstr + 1) > v->strhcap) {
		size_t cap = v->strhcap ? v->strhcap * 2 : 1024;
		uint32_t *h = calloc(cap, sizeof(*h));

		if (!h)
			return 0;
		for (size_t i = 0; i < v->nstr; i++) {
			size_t j = strhash(v->str[i]) & (cap - 1);

			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = (uint32_t)i + 1;
		}
		free(v->strh);
		v->strh = h;
		v->strhcap = cap;
	}
	size_t j = strhash(s) & (v->strhcap - 1);

	for (; v->strh[j]; j = (j + 1) & (v->strhcap - 1))
		if (!strcmp(v->str[v->strh[j] - 1], s))
			return v->strh[j] - 1;
	char *d = strdup(s);

	if (!d || tr_grow(&v->str, &v->strcap, v->nstr + 1, sizeof(*v->str))) {
		free(d);
		return 0;	/* "" (string 0) stands in on ENOMEM */
	}
	v->str[v->nstr] = d;
	v->strh[j] = (uint32_t)++v->nstr;
	return (uint32_t)v->nstr - 1;
}

static uint64_t rowkey(enum tr_vrow_kind k, uint32_t host, int64_t id, uint32_t depth)
{
	return ((uint64_t)k * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)host << 40) ^
	       ((uint64_t)id * 0xc2b2ae3d27d4eb4full) ^ ((uint64_t)depth << 20);
}

static struct tr_vrow *row(struct trawl_view *v, enum tr_vrow_kind k, uint32_t host,
			   int64_t id, uint32_t depth)
{
	uint64_t key = rowkey(k, host, id, depth);

	if (2 * (v->nrows + 1) > v->rowhcap) {
		size_t cap = v->rowhcap ? v->rowhcap * 2 : 256;
		uint32_t *h = calloc(cap, sizeof(*h));

		if (!h)
			return NULL;
		for (size_t i = 0; i < v->nrows; i++) {
			struct tr_vrow *r = v->rows[i];
			size_t j = rowkey(r->kind, r->host, r->id, r->depth) & (cap - 1);

			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = (uint32_t)i + 1;
		}
		free(v->rowh);
		v->rowh = h;
		v->rowhcap = cap;
	}
	size_t j = key & (v->rowhcap - 1);

	for (; v->rowh[j]; j = (j + 1) & (v->rowhcap - 1)) {
		struct tr_vrow *r = v->rows[v->rowh[j] - 1];

		if (r->kind == k && r->host == host && r->id == id && r->depth == depth)
			return r;
	}
	struct tr_vrow *r = calloc(1, sizeof(*r));

	if (!r || tr_grow(&v->rows, &v->rowcap, v->nrows + 1, sizeof(*v->rows))) {
		free(r);
		return NULL;
	}
	r->kind = k;
	r->host = host;
	r->id = id;
	r->depth = depth;
	v->rows[v->nrows] = r;
	v->rowh[j] = (uint32_t)++v->nrows;
	return r;
}

static int add_item(struct tr_vrow *r, int64_t s, int64_t e, uint32_t val, uint32_t c,
		    const char *det, size_t detlen)
{
	int rc = 0;

	if (s < r->last_s)
		s = r->last_s;	/* never before the row's last (a lost event) */
	if (e < s && r->kind != TR_VROW_ARROWS)
		e = s;
	rc |= tr_vbuf_uv(&r->raw, (uint64_t)(s - r->last_s));
	rc |= tr_vbuf_uv(&r->raw, zz(e - s));
	rc |= tr_vbuf_uv(&r->raw, val);
	rc |= tr_vbuf_uv(&r->raw, c - 1);
	if (r->kind == TR_VROW_MARKS || r->kind == TR_VROW_SLICES) {
		rc |= tr_vbuf_uv(&r->raw, detlen);
		rc |= tr_vbuf_put(&r->raw, det, detlen);
	}
	r->last_s = s;
	r->n++;
	return rc ? -ENOMEM : 0;
}

static int sched_emit(void *arg, uint32_t host, enum tr_vrow_kind kind, int64_t id, int64_t s,
		      int64_t e, uint32_t val)
{
	struct trawl_view *v = arg;
	struct tr_vrow *r = row(v, kind, host, id, 0);

	if (!r)
		return -ENOMEM;
	return add_item(r, s - v->base, e - v->base, val, 1, NULL, 0);
}

static uint32_t sched_name(void *arg, const char *s)
{
	return intern(arg, s);
}

static int host_index(struct trawl_view *v, const char *name)
{
	for (size_t i = 0; i < v->nhosts; i++)
		if (!strcmp(v->hosts[i].name, name))
			return (int)i;
	if (tr_grow(&v->hosts, &v->hostcap, v->nhosts + 1, sizeof(*v->hosts)))
		return -ENOMEM;
	struct host *h = &v->hosts[v->nhosts];

	*h = (struct host){ .first = INT64_MAX, .last = INT64_MIN, .bucket = INT64_MIN };
	if (!(h->name = strdup(name)))
		return -ENOMEM;
	if (!row(v, TR_VROW_HOST, (uint32_t)v->nhosts, 0, 0))
		return -ENOMEM;
	return (int)v->nhosts++;
}

static int stream_host(struct trawl_view *v, const struct trawl_reader_stream *s)
{
	if (v->shlast < v->nsh && v->sh[v->shlast].s == s)
		return (int)v->sh[v->shlast].host;
	for (size_t i = 0; i < v->nsh; i++)
		if (v->sh[i].s == s) {
			v->shlast = i;
			return (int)v->sh[i].host;
		}
	const char *name = trawl_reader_trace_hostname(trawl_reader_stream_trace(s));
	int h = host_index(v, name && *name ? name : "(no host)");

	if (h < 0 || tr_grow(&v->sh, &v->shcap, v->nsh + 1, sizeof(*v->sh)))
		return -ENOMEM;
	v->sh[v->nsh] = (struct stream_host){ s, (uint32_t)h };
	v->shlast = v->nsh++;
	return h;
}

static bool suffix(const char *s, const char *suf, size_t *stem)
{
	size_t n = strlen(s), m = strlen(suf);

	if (n <= m || strcmp(s + n - m, suf))
		return false;
	*stem = n - m;
	return true;
}

static int classify(struct trawl_view *v, const struct trawl_ctf_event_class *c)
{
	size_t i = c->index;

	if (i >= v->nck) {
		size_t n = i + 64;
		uint8_t *k = realloc(v->ck, n);

		if (!k)
			return -ENOMEM;
		v->ck = k;
		uint32_t *cn = realloc(v->cname, n * sizeof(*cn));

		if (!cn)
			return -ENOMEM;
		v->cname = cn;
		memset(v->ck + v->nck, CK_UNKNOWN, n - v->nck);
		v->nck = n;
	}
	if (v->ck[i] != CK_UNKNOWN)
		return v->ck[i];
	const char *name = c->name ? c->name : "?";
	size_t stem;
	char buf[256];
	uint8_t k = CK_OTHER;

	v->cname[i] = intern(v, name);
	if (!strcmp(name, "sched_switch"))
		k = CK_SWITCH;
	else if (!strcmp(name, "sched_waking") || !strcmp(name, "sched_wakeup") ||
		 !strcmp(name, "sched_wakeup_new"))
		k = CK_WAKE;
	else if (!strcmp(name, "sched_process_exec"))
		k = CK_EXEC;
	else if (!strncmp(name, "syscall_entry_", 14) || !strncmp(name, "syscall_exit_", 13)) {
		k = name[8] == 'e' && name[9] == 'n' ? CK_SYS_ENTRY : CK_SYS_EXIT;
		v->cname[i] = intern(v, name + (k == CK_SYS_ENTRY ? 14 : 13));
	} else if (suffix(name, "_begin", &stem) || suffix(name, "_end", &stem)) {
		k = name[stem + 1] == 'b' ? CK_BEGIN : CK_END;
		snprintf(buf, sizeof(buf), "%.*s", (int)stem, name);
		v->cname[i] = intern(v, buf);
	}
	v->ck[i] = k;
	return k;
}

/* The event's fields as text ("{ cpu_id = 0 }, { vtid = 3 }, { id = 1, ... }"),
 * cut to detail_bytes. */
static size_t details(struct trawl_view *v, const struct trawl_event *ev, const char **out)
{
	size_t n = v->text ? trawl_text_format(v->text, v->detail, sizeof(v->detail) - 1, ev) : 0;
	const char *name = ev->cls->name ? ev->cls->name : "";
	char *p;

	if (n >= sizeof(v->detail) - 1)
		n = sizeof(v->detail) - 2;
	v->detail[n] = 0;
	p = strstr(v->detail, name);
	p = p ? p + strlen(name) : v->detail;
	if (*p == ':')
		p++;
	while (*p == ' ')
		p++;
	n = strlen(p);
	while (n && (p[n - 1] == '\n' || p[n - 1] == ' '))
		n--;
	if (n > v->o.detail_bytes) {
		n = v->o.detail_bytes;
		while (n && ((uint8_t)p[n] & 0xc0) == 0x80)
			n--;
	}
	*out = p;
	return n;
}

static int64_t ival(const struct trawl_field *f, const struct trawl_event *ev, int64_t dflt)
{
	const union trawl_ctf_value *x = f ? trawl_field_value(f, ev) : NULL;

	return x ? x->i : dflt;
}

/* The innermost open slice of the pair (host, vtid, name) and, when the
 * events have an id field, that id. */
static int slice_end(struct trawl_view *v, uint32_t host, int64_t vtid, uint32_t name,
		     int64_t key, int64_t ts)
{
	for (size_t i = v->nopen; i-- > 0;) {
		struct open_slice *o = &v->open[i];

		if (o->host != host || o->vtid != vtid || o->name != name ||
		    (key != INT64_MIN && o->key != INT64_MIN && o->key != key))
			continue;
		struct tr_vrow *r = row(v, TR_VROW_SLICES, host, vtid, o->depth);
		int rc = r ? add_item(r, o->s - v->base, ts - v->base, name, 1, o->det, o->detlen)
			   : -ENOMEM;

		free(o->det);
		memmove(o, o + 1, (v->nopen - i - 1) * sizeof(*o));
		v->nopen--;
		return rc;
	}
	return 0;	/* an end without its begin: left out */
}

/* A slice opens at the lowest depth its thread has free: a depth row's
 * slices never overlap, so they end in the order they start. */
static int slice_begin(struct trawl_view *v, uint32_t host, int64_t vtid, uint32_t name,
		       int64_t key, int64_t ts, const char *det, size_t detlen)
{
	uint32_t used = 0, depth = 0;

	for (size_t i = 0; i < v->nopen; i++)
		if (v->open[i].host == host && v->open[i].vtid == vtid)
			used |= 1u << v->open[i].depth;
	while (depth < 16 && used & (1u << depth))
		depth++;
	if (depth >= 16)
		return 0;
	if (tr_grow(&v->open, &v->opencap, v->nopen + 1, sizeof(*v->open)))
		return -ENOMEM;
	char *d = malloc(detlen + 1);

	if (!d)
		return -ENOMEM;
	memcpy(d, det, detlen);
	v->open[v->nopen++] = (struct open_slice){ host, vtid, name, key, ts, depth, d, detlen };
	return 0;
}

static int density(struct trawl_view *v, uint32_t hi, int64_t ts)
{
	struct host *h = &v->hosts[hi];
	int64_t b = (ts - v->base) / DENSITY_W * DENSITY_W;
	int rc = 0;

	if (b != h->bucket) {
		if (h->count)
			rc = add_item(row(v, TR_VROW_HOST, hi, 0, 0), h->bucket,
				      h->bucket + DENSITY_W, 0, (uint32_t)h->count, NULL, 0);
		h->bucket = b;
		h->count = 0;
	}
	h->count++;
	return rc;
}

/*
 * A scheduler's event into its host's model, then the rows: a thread's
 * row is named as the model names it when a switch names it (its latest
 * name) or an exec (the program's), and the intervals the change ended
 * are emitted (sched.c).
 */
static int sched(struct trawl_view *v, uint32_t hi, const struct trawl_event *ev)
{
	struct chg d[2];
	int n = tr_kmodel_take(&v->km, hi, ev, d), rc = 0;
	const struct tables *m = n > 0 ? &v->km.host[hi] : NULL;

	for (int i = 2 - n; i < 2 && n > 0 && !rc; i++) {
		const struct chg *c = &d[i];
		int64_t tid = c->kind == TRAWL_STATE_SWITCH ? c->tid2
			    : c->kind == TRAWL_STATE_EXEC && c->str2 ? c->tid : -1;
		/* a switch's next_comm, an exec's file name: the row's name */
		uint32_t named = c->kind == TRAWL_STATE_SWITCH ? c->str : c->str2;
		struct tr_vrow *tr;

		if (tid > 0 && named && (tr = row(v, TR_VROW_THREAD, hi, tid, 0)))
			tr->label = intern(v, tr_state_str(&v->km.str, tr_ks_comm(m, tid, 0)));
		rc = tr_vsched_change(v->sched, hi, m, &v->km.str, c);
	}
	return n < 0 ? n : rc;
}

static int one(struct trawl_view *v, const struct trawl_event *ev)
{
	int hi = stream_host(v, ev->stream);
	int k, rc;

	if (hi < 0)
		return hi;
	if (!v->have_base) {
		v->base = ev->ts;
		v->have_base = true;
	}
	if (ev->ts < v->base)
		return 0;	/* before the first event: cannot be (merged order) */
	int64_t rel;

	if (__builtin_sub_overflow(ev->ts, v->base, &rel)) {
		/* 2^63 ns or more after the first (a corrupt timestamp or
		 * clock offset): no place on the timeline; counted, said */
		v->st.impossible++;
		return 0;
	}
	struct host *h = &v->hosts[hi];

	if (ev->ts < h->first)
		h->first = ev->ts;
	if (ev->ts > h->last)
		h->last = ev->ts;
	if ((rc = density(v, (uint32_t)hi, ev->ts)))
		return rc;
	if ((k = classify(v, ev->cls)) < 0)
		return k;
	uint32_t name = v->cname[ev->cls->index];

	switch (k) {
	case CK_SWITCH:
	case CK_WAKE:
	case CK_EXEC:
	case CK_SYS_ENTRY:
	case CK_SYS_EXIT:
		return sched(v, (uint32_t)hi, ev);
	default:
		break;
	}
	int64_t vtid = ival(v->vtid, ev, -1);
	const char *det;
	size_t detlen;

	int64_t key = ival(v->pair_id, ev, INT64_MIN);

	if (k == CK_END)
		return slice_end(v, (uint32_t)hi, vtid, name, key, ev->ts);
	detlen = details(v, ev, &det);
	if (k == CK_BEGIN)
		return slice_begin(v, (uint32_t)hi, vtid, name, key, ev->ts, det, detlen);
	struct tr_vrow *r = row(v, TR_VROW_MARKS, (uint32_t)hi, vtid, 0);

	return r ? add_item(r, ev->ts - v->base, ev->ts - v->base, name, 1, det, detlen) : -ENOMEM;
}

static int v_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_view *v = self;
	int rc;

	for (size_t i = 0; i < n; i++) {
		v->events++;
		if ((rc = one(v, &ev[i])))
			return rc;
	}
	return 0;
}

static const struct trawl_field *opt_bind(struct trawl_reader *r, const char *spec,
					  enum trawl_field_type t)
{
	return trawl_field_bind(r, spec, t, TRAWL_FIELD_OPTIONAL, NULL, 0);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int v_start(void *self, struct trawl_reader *r)
{
	struct trawl_view *v = self;
	size_t nt = trawl_reader_ntraces(r);
	const char **names = calloc(nt ? nt : 1, sizeof(*names));

	if (!names)
		return -ENOMEM;
	/* the hosts (their rows, the sync table) in the order of their names,
	 * not of their first events */
	for (size_t i = 0; i < nt; i++) {
		const char *n = trawl_reader_trace_hostname(trawl_reader_trace_at(r, i));
		names[i] = n && *n ? n : "(no host)";
	}
	qsort(names, nt, sizeof(*names), cmp_name);
	for (size_t i = 0; i < nt; i++)
		if (host_index(v, names[i]) < 0) {
			free(names);
			return -ENOMEM;
		}
	free(names);
	trawl_text_free(v->text);
	if (!(v->text = trawl_text_new(TRAWL_TEXT_NO_DELTA | TRAWL_TEXT_CLOCK_SECONDS)))
		return -ENOMEM;
	/* Every field is optional: a trace without the scheduler's events
	 * (or a user-space one without vtid) shows what it has. */
	if (tr_kmodel_start(&v->km, r) < 0)
		return -ENOMEM;
	v->vtid = opt_bind(r, "*.vtid", TRAWL_FIELD_INT);
	/* begin/end pairs with an id field are matched by it */
	v->pair_id = opt_bind(r, "*_[be][en]*.id", TRAWL_FIELD_INT);
	return 0;
}

static int v_finish(void *self, struct trawl_reader *r)
{
	struct trawl_view *v = self;
	int rc;

	(void)r;
	trawl_text_free(v->text);
	v->text = NULL;
	for (size_t i = 0; i < v->nhosts; i++) {
		struct host *h = &v->hosts[i];

		if (h->count && (rc = add_item(row(v, TR_VROW_HOST, (uint32_t)i, 0, 0), h->bucket,
					       h->bucket + DENSITY_W, 0, (uint32_t)h->count,
					       NULL, 0)))
			return rc;
		h->count = 0;
		if (h->last != INT64_MIN && (rc = tr_vsched_close(v->sched, (uint32_t)i, h->last)))
			return rc;
	}
	while (v->nopen) {	/* begins without ends: up to their host's last event */
		struct open_slice *o = &v->open[v->nopen - 1];

		if ((rc = slice_end(v, o->host, o->vtid, o->name, o->key, v->hosts[o->host].last)))
			return rc;
	}
	return 0;
}

static const struct trawl_sink_ops view_ops = {
	.sz = sizeof(view_ops),
	.name = "view",
	.start = v_start,
	.events = v_events,
	.finish = v_finish,
};

struct trawl_sink trawl_view_sink(struct trawl_view *v)
{
	return (struct trawl_sink){ &view_ops, v };
}

struct trawl_view *trawl_view_new(const struct trawl_view_opts *o, char *err, size_t errlen)
{
	struct trawl_view *v = calloc(1, sizeof(*v));
	struct tr_vsched_ops ops;

	if (!v)
		goto nomem;
	if (o)
		memcpy(&v->o, o, o->sz < sizeof(v->o) ? o->sz : sizeof(v->o));
	v->o.sz = sizeof(v->o);
	if (!v->o.tile_items)
		v->o.tile_items = TILE_ITEMS;
	if (!v->o.detail_bytes)
		v->o.detail_bytes = DETAIL_BYTES;
	if (v->o.detail_bytes > sizeof(v->detail) / 2)
		v->o.detail_bytes = sizeof(v->detail) / 2;
	ops = (struct tr_vsched_ops){ sched_emit, sched_name, v };
	tr_kmodel_init(&v->km, TR_KIN_F_NAMES | TR_KIN_F_WAKEUP | TR_KIN_F_SYSCALL);
	if (!(v->sched = tr_vsched_new(&ops)))
		goto nomem;
	intern(v, "");
	if (v->nstr != 1)
		goto nomem;
	return v;
nomem:
	trawl_view_free(v);
	tr_seterr(err, errlen, ENOMEM, "out of memory");
	errno = ENOMEM;
	return NULL;
}

void trawl_view_free(struct trawl_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nstr; i++)
		free(v->str[i]);
	free(v->str);
	free(v->strh);
	for (size_t i = 0; i < v->nhosts; i++) {
		free(v->hosts[i].name);
		free(v->hosts[i].reference);
	}
	free(v->hosts);
	for (size_t i = 0; i < v->nrows; i++) {
		struct tr_vrow *r = v->rows[i];

		tr_vbuf_release(&r->raw);
		tr_vbuf_release(&r->det);
		for (size_t l = 0; l < r->nlevels; l++)
			free(r->levels[l].tiles);
		free(r->levels);
		free(r);
	}
	free(v->rows);
	free(v->rowh);
	free(v->sh);
	free(v->ck);
	free(v->cname);
	for (size_t i = 0; i < v->nopen; i++)
		free(v->open[i].det);
	free(v->open);
	tr_vsched_free(v->sched);
	tr_kmodel_release(&v->km);
	trawl_text_free(v->text);
	tr_vbuf_release(&v->tiles);
	free(v->tile_by_id);
	free(v->blob_order);
	free(v);
}

/* ------------------------------------------------------ messages, sync */

struct msg {
	int64_t s, e;
};

static int cmp_msg(const void *a, const void *b)
{
	const struct msg *x = a, *y = b;

	return (x->s > y->s) - (x->s < y->s);
}

static int add_arrows(struct trawl_view *v, uint32_t a, uint32_t b,
		      const struct trawl_sync_msg *m, size_t n)
{
	struct msg *ms = n ? malloc(n * sizeof(*ms)) : NULL;
	struct tr_vrow *r;
	int rc = 0;

	if (!n)
		return 0;
	if (!ms || !(r = row(v, TR_VROW_ARROWS, a, b, 0))) {
		free(ms);
		return -ENOMEM;
	}
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct msg x;
		int64_t d;

		/* ends 2^63 ns or more from the base or apart: impossible */
		if (__builtin_sub_overflow(m[i].send, v->base, &x.s) ||
		    __builtin_sub_overflow(m[i].recv, v->base, &x.e) ||
		    __builtin_sub_overflow(x.e, x.s, &d)) {
			v->st.impossible++;
			continue;
		}
		ms[k++] = x;
	}
	n = k;
	qsort(ms, n, sizeof(*ms), cmp_msg);
	for (size_t i = 0; i < n && !rc; i++) {
		int64_t d = ms[i].e - ms[i].s;

		if (!r->n || d < r->dmin)
			r->dmin = d;
		if (!r->n || d > r->dmax)
			r->dmax = d;
		rc = add_item(r, ms[i].s, ms[i].e, 0, 1, NULL, 0);
	}
	v->st.messages += n;
	free(ms);
	return rc;
}

int trawl_view_set_messages(struct trawl_view *v, const struct trawl_sync_points *p)
{
	int rc;

	if (!p || !v->have_base)
		return 0;
	for (size_t i = 0; i < p->nlinks; i++) {
		const struct trawl_sync_link *l = &p->links[i];
		int a = host_index(v, p->hosts[l->a].name), b = host_index(v, p->hosts[l->b].name);

		if (a < 0 || b < 0)
			return -ENOMEM;
		if ((rc = add_arrows(v, (uint32_t)a, (uint32_t)b, l->ab, l->n_ab)) ||
		    (rc = add_arrows(v, (uint32_t)b, (uint32_t)a, l->ba, l->n_ba)))
			return rc;
	}
	return 0;
}

int trawl_view_set_sync(struct trawl_view *v, const struct trawl_sync_store *s)
{
	if (!s)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct trawl_sync_store_entry *e = &s->entries[i];
		int h = host_index(v, e->host);

		if (h < 0)
			return -ENOMEM;
		struct host *hp = &v->hosts[h];

		hp->fix = *e;
		hp->fix.host = hp->fix.reference = hp->fix.path = NULL;
		free(hp->reference);
		if (!(hp->reference = strdup(e->reference ? e->reference : "")))
			return -ENOMEM;
		hp->has_fix = true;
	}
	return 0;
}

/* ---------------------------------------------------- levels and tiles */

static int decode_row(const struct tr_vrow *r, struct tr_vitem **out)
{
	struct tr_vitem *it = r->n ? malloc(r->n * sizeof(*it)) : NULL;
	const uint8_t *p = r->raw.p, *end = p + r->raw.len;
	int64_t s = 0;
	bool det = r->kind == TR_VROW_MARKS || r->kind == TR_VROW_SLICES;

	if (r->n && !it)
		return -ENOMEM;
	for (uint64_t i = 0; i < r->n; i++) {
		s += (int64_t)get_uv(&p, end);
		it[i].s = s;
		it[i].e = s + unzz(get_uv(&p, end));
		it[i].v = (uint32_t)get_uv(&p, end);
		it[i].c = (uint32_t)get_uv(&p, end) + 1;
		it[i].det = it[i].detlen = 0;
		if (det) {
			uint64_t n = get_uv(&p, end);

			if (n > (uint64_t)(end - p))
				n = (uint64_t)(end - p);
			it[i].det = (uint32_t)(p - r->raw.p);
			it[i].detlen = (uint32_t)n;
			p += n;
		}
	}
	*out = it;
	return 0;
}

static int64_t floor_w(int64_t t, int64_t w)
{
	return (t >= 0 ? t : t - w + 1) / w * w;
}

/* Appends [s, e] of value v to the runs, merged into the last one when it
 * has the same value and is near enough. */
static void run(struct tr_vitem *out, size_t *m, int64_t s, int64_t e, uint32_t v, uint32_t c,
		int64_t w)
{
	if (*m && out[*m - 1].v == v && out[*m - 1].e >= s - w) {
		if (e > out[*m - 1].e)
			out[*m - 1].e = e;
		out[*m - 1].c += c;
		return;
	}
	out[(*m)++] = (struct tr_vitem){ s, e, v, c ? c : 1, 0, 0 };
}

/*
 * One level coarser: buckets of width w. Spans (CPU, thread): the value
 * covering most of each bucket, clipped to what the bucket's items cover,
 * runs of one value merged. Density: counts summed. Marks and arrows: the
 * first of the bucket, counting the others. Slices: the longest starting
 * in the bucket.
 */
static size_t coarsen(enum tr_vrow_kind k, const struct tr_vitem *in, size_t n, int64_t w,
		      struct tr_vitem *out)
{
	size_t m = 0;

	if (k == TR_VROW_CPU || k == TR_VROW_THREAD) {
		size_t i = 0;
		int64_t b = floor_w(in[0].s, w);

		while (i < n) {
			int64_t be = b + w, lo = INT64_MAX, hi = INT64_MIN, cd[4] = { 0 };
			uint32_t cv[4] = { 0 }, cn = 0, c = 0, best = 0;

			/* every item overlapping [b, be) */
			for (size_t j = i; j < n && in[j].s < be; j++) {
				int64_t s = in[j].s > b ? in[j].s : b, e = in[j].e < be ? in[j].e : be;
				uint32_t x;

				if (in[j].e < b)
					continue;
				for (x = 0; x < cn && cv[x] != in[j].v; x++)
					;
				if (x == cn && cn < 4)
					cv[cn++] = in[j].v;
				if (x < cn)
					cd[x] += e - s + 1;
				lo = s < lo ? s : lo;
				hi = e > hi ? e : hi;
				c += in[j].c;
			}
			for (uint32_t x = 1; x < cn; x++)
				if (cd[x] > cd[best])
					best = x;
			if (cn)
				run(out, &m, lo, hi, cv[best], c, w);
			while (i < n && in[i].e < be)
				i++;
			if (i == n)
				break;
			int64_t nb = floor_w(in[i].s, w);

			if (nb < be)
				nb = be;
			/* buckets that in[i] covers alone: one step */
			int64_t lim = in[i].e;

			if (i + 1 < n && in[i + 1].s < lim)
				lim = in[i + 1].s;
			if (in[i].s <= nb && floor_w(lim, w) > nb) {
				run(out, &m, nb, floor_w(lim, w), in[i].v, 0, w);
				nb = floor_w(lim, w);
			}
			b = nb;
		}
		return m;
	}
	for (size_t i = 0; i < n;) {
		int64_t b = floor_w(in[i].s, w), be = b + w;
		struct tr_vitem o = in[i];
		size_t j = i + 1;

		o.det = o.detlen = 0;
		for (; j < n && in[j].s < be; j++) {
			if (k == TR_VROW_SLICES && in[j].e - in[j].s > o.e - o.s) {
				uint32_t c = o.c;

				o = in[j];
				o.c = c;
				o.det = o.detlen = 0;
			} else if (k == TR_VROW_HOST || k == TR_VROW_MARKS) {
				if (in[j].e > o.e)
					o.e = in[j].e;
			}
			o.c += in[j].c;
		}
		if (k == TR_VROW_HOST) {
			o.s = b;
			o.e = be;
		}
		out[m++] = o;
		i = j;
	}
	return m;
}

static int put_tiles(struct trawl_view *v, struct tr_vrow *r, int64_t width,
		     const struct tr_vitem *it, size_t n)
{
	struct tr_vlevel *l;
	struct tr_vbuf b = { 0 };
	bool det = width == 0 && (r->kind == TR_VROW_MARKS || r->kind == TR_VROW_SLICES);
	uint8_t *z = NULL;
	int rc = -ENOMEM;

	if (!(l = realloc(r->levels, (r->nlevels + 1) * sizeof(*l))))
		return -ENOMEM;
	r->levels = l;
	l = &r->levels[r->nlevels++];
	*l = (struct tr_vlevel){ .width = width };
	size_t per = v->o.tile_items, nt = (n + per - 1) / per;

	if (!(l->tiles = calloc(nt ? nt : 1, sizeof(*l->tiles))))
		return -ENOMEM;
	for (size_t t = 0; t < nt; t++) {
		size_t a = t * per, e = a + per < n ? a + per : n;
		int64_t prev = it[a].s, hi = INT64_MIN;
		int x = 0;

		/* by columns (docs/view.md): times, durations, values, counts,
		 * then the fields' text; deflate finds each column's repeats */
		b.len = 0;
		for (size_t i = a; i < e; i++) {
			x |= tr_vbuf_uv(&b, zz(it[i].s - prev));
			prev = r->kind == TR_VROW_ARROWS ? it[i].s : it[i].e;
			if (it[i].e > hi)
				hi = it[i].e;
			if (it[i].s > hi)
				hi = it[i].s;
		}
		for (size_t i = a; i < e; i++)
			x |= tr_vbuf_uv(&b, zz(it[i].e - it[i].s));
		for (size_t i = a; i < e; i++)
			x |= tr_vbuf_uv(&b, it[i].v);
		for (size_t i = a; i < e; i++)
			x |= tr_vbuf_uv(&b, it[i].c - 1);
		for (size_t i = a; det && i < e; i++)
			x |= tr_vbuf_uv(&b, it[i].detlen);
		for (size_t i = a; det && i < e; i++)
			x |= tr_vbuf_put(&b, r->raw.p + it[i].det, it[i].detlen);
		if (x)
			goto out;
		uLongf zl = compressBound(b.len);

		free(z);
		if (!(z = malloc(zl)))
			goto out;
		if (compress2(z, &zl, b.p, b.len, 6) != Z_OK)
			goto out;
		struct tr_vtile *tl = &l->tiles[t];

		*tl = (struct tr_vtile){ it[a].s, hi, (uint32_t)(e - a), v->tiles.len, (uint32_t)zl, 0, 0 };
		if (tr_vbuf_put(&v->tiles, z, zl))
			goto out;
		l->ntiles++;
		v->st.tiles++;
		v->st.tile_bytes += zl;
	}
	rc = 0;
out:
	free(z);
	tr_vbuf_release(&b);
	return rc;
}

static int build_row(struct trawl_view *v, struct tr_vrow *r)
{
	struct tr_vitem *it = NULL, *next = NULL;
	size_t n = r->n, stored;
	int rc;

	if ((rc = decode_row(r, &it)))
		return rc;
	if (!n)
		goto out;
	if ((rc = put_tiles(v, r, 0, it, n)))
		goto out;
	v->st.items += r->kind == TR_VROW_HOST || r->kind == TR_VROW_ARROWS ? 0 : n;
	stored = n;
	if (!(next = malloc((n * 4 + 4) * sizeof(*next)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (int64_t w = LOD_W1; n > 1 && w < ((int64_t)1 << 60); w *= 4) {
		if (r->kind == TR_VROW_HOST && w <= DENSITY_W)
			continue;
		size_t m = coarsen(r->kind, it, n, w, next);
		struct tr_vitem *t = it;

		it = next;
		next = t;
		n = m;
		if (n * 2 <= stored || n <= 1) {
			if ((rc = put_tiles(v, r, w, it, n)))
				goto out;
			v->st.lod_items += n;
			stored = n;
		}
	}
out:
	free(it);
	free(next);
	/* the raw bytes stay: the finest tiles of marks and slices were cut
	 * from them (already copied), so they can go now */
	tr_vbuf_release(&r->raw);
	return rc;
}

struct blob_key {
	int64_t width;
	uint64_t id;
};

/* Wider buckets first, then by id. */
static int blob_key_cmp(const void *a, const void *b)
{
	const struct blob_key *x = a, *y = b;

	if (x->width != y->width)
		return x->width > y->width ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int trawl_view_build(struct trawl_view *v, char *err, size_t errlen)
{
	int rc;

	if (v->built)
		return 0;
	for (size_t i = 0; i < v->nrows; i++)
		if ((rc = build_row(v, v->rows[i])))
			return tr_seterr(err, errlen, -rc, "building the view: %s", strerror(-rc));
	v->ntiles = v->st.tiles;
	v->st.events = v->events;
	v->st.rows = v->nrows;
	v->st.hosts = v->nhosts;
	if (!(v->tile_by_id = calloc(v->ntiles ? v->ntiles : 1, sizeof(*v->tile_by_id))))
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	struct blob_key *keys = calloc(v->ntiles ? v->ntiles : 1, sizeof(*keys));

	if (!keys || !(v->blob_order = calloc(v->ntiles ? v->ntiles : 1, sizeof(*v->blob_order)))) {
		free(keys);
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	}
	uint64_t id = 0;

	for (size_t i = 0; i < v->nrows; i++)
		for (size_t l = 0; l < v->rows[i]->nlevels; l++)
			for (size_t t = 0; t < v->rows[i]->levels[l].ntiles; t++) {
				keys[id] = (struct blob_key){ v->rows[i]->levels[l].width, id };
				v->tile_by_id[id++] = &v->rows[i]->levels[l].tiles[t];
			}
	/* The page's blob holds the tiles coarsest level first: a frame of
	 * the whole trace needs only the first elements of it, so the page
	 * draws before the parser has read the rest (docs/view.md). */
	qsort(keys, v->ntiles, sizeof(*keys), blob_key_cmp);
	uint64_t at = 0;

	for (uint64_t k = 0; k < v->ntiles; k++) {
		struct tr_vtile *tl = v->tile_by_id[keys[k].id];

		v->blob_order[k] = keys[k].id;
		tl->boff = at;
		tl->blen = tr_view_blob_len(v->tiles.p + tl->off, tl->len);
		at += tl->blen;
	}
	free(keys);
	v->built = true;
	return 0;
}

uint64_t tr_view_blob_id(const struct trawl_view *v, uint64_t k)
{
	return v->blob_order[k];
}

void trawl_view_stats(const struct trawl_view *v, struct trawl_view_stats *st)
{
	*st = v->st;
	st->events = v->events;
}

int tr_view_tile(const struct trawl_view *v, uint64_t id, const uint8_t **p, size_t *len)
{
	if (!v->built || id >= v->ntiles)
		return -ENOENT;
	*p = v->tiles.p + v->tile_by_id[id]->off;
	*len = v->tile_by_id[id]->len;
	return 0;
}

/* ---------------------------------------------------------------- index */

/* a - b, or INT64_MIN / INT64_MAX beyond int64 */
static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return d;
}

static const char *kind_name[] = { "host", "cpu", "thread", "marks", "slices", "arrows" };
static const char *quality_name(enum trawl_sync_quality q);

int tr_view_index(const struct trawl_view *v, bool served, char **out, size_t *len)
{
	struct json j;
	uint64_t id = 0;

	tr_json_init(&j);
	tr_json_obj(&j);
	tr_json_kv_str(&j, "title", v->o.title ? v->o.title : "trawl view");
	/* base in two parts: a double holds 53 bits, ns since 1970 need 61 */
	tr_json_kv_i64(&j, "base_s", v->base / 1000000000);
	tr_json_kv_i64(&j, "base_ns", v->base % 1000000000);
	tr_json_kv_u64(&j, "events", v->events);
	tr_json_key(&j, "served");
	tr_json_bool(&j, served);
	tr_json_kv_u64(&j, "chunk", TR_VIEW_CHUNK);
	tr_json_key(&j, "hosts");
	tr_json_arr(&j);
	for (size_t i = 0; i < v->nhosts; i++) {
		struct host *h = &v->hosts[i];

		tr_json_obj(&j);
		tr_json_kv_str(&j, "name", h->name);
		tr_json_kv_i64(&j, "first", h->first == INT64_MAX ? 0 : h->first - v->base);
		tr_json_kv_i64(&j, "last", h->last == INT64_MIN ? 0 : h->last - v->base);
		if (h->has_fix) {
			const struct trawl_sync_store_entry *e = &h->fix;
			double rate = trawl_sync_xform_rate(&e->xform);

			tr_json_key(&j, "sync");
			tr_json_obj(&j);
			/* saturated: a correction 2^63 ns or more from the
			 * base (a corrupt clock offset) is off the page anyway */
			tr_json_kv_i64(&j, "t0", sat_sub(e->xform.t0, v->base));
			tr_json_kv_i64(&j, "y0", sat_sub(e->xform.y0, v->base));
			tr_json_key(&j, "slope");
			tr_json_f64(&j, rate);
			/* trawl sync's convention: the host's clock minus the
			 * reference's, at the host's first event; the host clock's
			 * rate against the reference's, in ppm */
			int64_t at = h->first != INT64_MAX ? h->first : e->xform.t0;
			tr_json_kv_i64(&j, "offset", sat_sub(at, trawl_sync_xform_apply(&e->xform, at)));
			tr_json_key(&j, "drift_ppm");
			tr_json_fixed(&j, rate > 0 ? (1.0 / rate - 1.0) * 1e6 : 0.0, 3);
			tr_json_kv_i64(&j, "bound", e->bound_max);
			tr_json_kv_str(&j, "quality", quality_name(e->quality));
			tr_json_kv_str(&j, "reference", h->reference ? h->reference : "");
			tr_json_key(&j, "is_ref");
			tr_json_bool(&j, e->is_ref);
			tr_json_obj_end(&j);
		}
		tr_json_obj_end(&j);
	}
	tr_json_arr_end(&j);
	tr_json_key(&j, "strings");
	tr_json_arr(&j);
	for (size_t i = 0; i < v->nstr; i++)
		tr_json_str(&j, v->str[i]);
	tr_json_arr_end(&j);
	tr_json_key(&j, "rows");
	tr_json_arr(&j);
	for (size_t i = 0; i < v->nrows; i++) {
		struct tr_vrow *r = v->rows[i];

		tr_json_obj(&j);
		tr_json_kv_str(&j, "kind", kind_name[r->kind]);
		tr_json_kv_u64(&j, "host", r->host);
		tr_json_kv_i64(&j, "id", r->id);
		tr_json_kv_u64(&j, "depth", r->depth);
		tr_json_kv_u64(&j, "n", r->n);
		tr_json_kv_u64(&j, "label", r->label);
		if (r->kind == TR_VROW_ARROWS) {
			tr_json_kv_i64(&j, "dmin", r->dmin);
			tr_json_kv_i64(&j, "dmax", r->dmax);
		}
		tr_json_key(&j, "levels");
		tr_json_arr(&j);
		for (size_t l = 0; l < r->nlevels; l++) {
			tr_json_arr(&j);
			tr_json_i64(&j, r->levels[l].width);
			tr_json_arr(&j);
			for (size_t t = 0; t < r->levels[l].ntiles; t++) {
				struct tr_vtile *tl = &r->levels[l].tiles[t];

				/* [start, end, items, tile id, offset and length
				 * in the page's blob] */
				tr_json_arr(&j);
				tr_json_i64(&j, tl->s);
				tr_json_i64(&j, tl->e);
				tr_json_u64(&j, tl->n);
				tr_json_u64(&j, id++);
				tr_json_u64(&j, tl->boff);
				tr_json_u64(&j, tl->blen);
				tr_json_arr_end(&j);
			}
			tr_json_arr_end(&j);
			tr_json_arr_end(&j);
		}
		tr_json_arr_end(&j);
		tr_json_obj_end(&j);
	}
	tr_json_arr_end(&j);
	tr_json_obj_end(&j);
	if (j.nomem) {
		tr_json_release(&j);
		return -ENOMEM;
	}
	*out = j.buf;
	*len = j.len;
	return 0;
}

static const char *quality_name(enum trawl_sync_quality q)
{
	switch (q) {
	case TRAWL_SYNC_ABSENT:
		return "absent";
	case TRAWL_SYNC_ONE_WAY:
		return "one-way";
	case TRAWL_SYNC_OFFSET_ONLY:
		return "offset-only";
	case TRAWL_SYNC_ACCURATE:
		return "accurate";
	case TRAWL_SYNC_FAIL:
		return "fail";
	}
	return "?";
}
