/* SPDX-License-Identifier: MIT */
/*
 * lib/agg/agg.c - the aggregation sink (trawl/agg.h).
 *
 * Per event: for each aggregation, is the event one of its (a per-class
 * answer, cached by trawl_ctf_event_class.index), its value (a bound
 * field, or end ts - begin ts of a pair matched per host and tid), its
 * key (host, cpu, tid, comm, cgroup, event name, bound fields; strings
 * interned to numbers), then one cell of a hash table updated: count,
 * sum, min, max, mean and M2 (Welford, for the stddev), buckets.
 *
 * comm, pid and cgroup are not in kernel events: they are the kernel
 * model's (lib/kstate, one per host, fed the scheduler's switches, forks,
 * execs and the state dump's processes), and any event's procname
 * context names its thread.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agg/agg-internal.h"
#include "agg/agg-priv.h"

/* ------------------------------------------------------------- strings */

/* The id of s[0 .. len) in the model's string table (0: "", or ENOMEM). */
static uint32_t intern(struct trawl_agg *a, const char *s, size_t len)
{
	return tr_state_intern(&a->km.str, s, len);
}

static uint32_t intern_value(struct trawl_agg *a, const union trawl_ctf_value *v)
{
	return intern(a, v->s.p, v->s.len);
}

/* ------------------------------------------------------------- classes */

/* The per-class cache, grown to cover ec (live sources add classes). */
static struct cls *cls_of(struct trawl_agg *a, const struct trawl_ctf_event_class *ec)
{
	uint32_t i = ec->index;

	if (i >= a->ncls) {
		size_t n = (size_t)i + 64;
		struct cls *nc = realloc(a->cls, n * sizeof(*nc));
		if (!nc)
			return NULL;
		memset(nc + a->ncls, 0, (n - a->ncls) * sizeof(*nc));
		a->cls = nc;
		a->ncls = n;
	}
	struct cls *c = &a->cls[i];
	if (!c->known) {
		c->known = true;
		c->name = intern(a, ec->name ? ec->name : "", ec->name ? strlen(ec->name) : 0);
		for (size_t k = 0; k < a->n; k++) {
			struct one *o = &a->aggs[k];
			const struct tr_agg_stmt *s = o->s;
			uint8_t role = 0;
			uint32_t stem = 0;
			if (!ec->name)
				;
			else if (s->value == TR_AGG_V_EVENTS && tr_glob_match(s->glob, ec->name))
				role = ROLE_VALUE;
			else if (s->value == TR_AGG_V_FIELD && o->val) {
				enum trawl_field_type t = trawl_field_type(o->val, ec);
				role = t == TRAWL_FIELD_INT ? ROLE_INT : t == TRAWL_FIELD_FLOAT ? ROLE_FLOAT : 0;
			} else if (s->value == TR_AGG_V_LAT) {
				const char *st = NULL;
				size_t sl = 0;
				if (tr_glob_match(s->glob, ec->name)) {
					role = ROLE_BEGIN;
					st = stem_of(s->glob, ec->name, &sl);
				} else if (tr_glob_match(s->glob_end, ec->name)) {
					role = ROLE_END;
					st = stem_of(s->glob_end, ec->name, &sl);
				}
				if (st)
					stem = intern(a, st, sl);
			}
			c->role[k] = role;
			c->stem[k] = stem;
		}
	}
	return c;
}

/* ------------------------------------------------------------- threads */

/* A pending begin's key: the thread of a host (a lat() pair's). */
struct thread_key {
	uint32_t host;
	uint32_t pad;
	int64_t tid;
};

static int64_t int_of(const struct trawl_field *f, const struct trawl_event *ev, bool *ok)
{
	const union trawl_ctf_value *v = f ? trawl_field_value(f, ev) : NULL;
	*ok = v && trawl_field_type(f, ev->cls) == TRAWL_FIELD_INT;
	return *ok ? v->i : 0;
}

/*
 * The event into its host's model (lib/kstate: the scheduler's names,
 * exec, forks and the state dump's processes give each thread its name,
 * tgid and cgroup), and an event's procname context names its thread.
 */
static int track(struct trawl_agg *a, const struct trawl_event *ev)
{
	struct chg c[2];
	int n = tr_kmodel_take(&a->km, a->last_hn, ev, c);
	bool ok;
	int64_t tid;

	if (n)
		return n < 0 ? n : 0;
	if (a->trk.procname && (tid = int_of(a->trk.tid, ev, &ok), ok)) {
		struct tables *t = tr_kmodel_host(&a->km, a->last_hn);
		return t ? tr_kin_context_name(&a->km.kin, &a->km.str, t, a->trk.procname, ev, tid)
			 : -ENOMEM;
	}
	return 0;
}

/* The model's thread tid of the event's host, NULL when it knows none. */
static const struct ithread *thread_of(struct trawl_agg *a, int64_t tid)
{
	return a->last_hn < a->km.nhost ? tr_ks_thread(&a->km.host[a->last_hn], tid) : NULL;
}

/* ------------------------------------------------------------- keys */

/* The event's host: its name's id, and its model's number in last_hn. */
static int host_of(struct trawl_agg *a, const struct trawl_event *ev, uint32_t *host)
{
	if (ev->stream != a->last_stream) {
		const struct trawl_reader_trace *t = ev->stream ? trawl_reader_stream_trace(ev->stream) : NULL;
		const char *h = t ? trawl_reader_trace_hostname(t) : "";
		uint32_t id = h ? intern(a, h, strlen(h)) : 0;
		bool isnew;
		uint32_t *hn = tr_table_get(&a->hosts, &id, &isnew);
		if (!hn)
			return -ENOMEM;
		if (isnew)
			*hn = (uint32_t)(a->hosts.n - 1);
		a->last_stream = ev->stream;
		a->last_host = id;
		a->last_hn = *hn;
	}
	*host = a->last_host;
	return 0;
}

static int64_t tid_of(struct trawl_agg *a, const struct trawl_event *ev, bool *ok)
{
	int64_t t = int_of(a->trk.tid, ev, ok);
	if (!*ok)
		t = int_of(a->trk.vtid, ev, ok);
	return t;
}

/* The key of ev for aggregation o into k (type, value pairs). */
static void key_of(struct trawl_agg *a, struct one *o, const struct trawl_event *ev, uint32_t host,
		   uint64_t *k)
{
	const struct tr_agg_stmt *s = o->s;
	bool ok;

	for (size_t i = 0; i < s->nkeys; i++) {
		uint64_t t = KEY_NONE, v = 0;
		switch (s->key[i].kind) {
		case TR_AGG_K_HOST:
			t = KEY_STR;
			v = host;
			break;
		case TR_AGG_K_CPU:
			t = KEY_INT;
			v = ev->cpu;
			break;
		case TR_AGG_K_TID: {
			int64_t tid = tid_of(a, ev, &ok);
			if (ok) {
				t = KEY_INT;
				v = (uint64_t)tid;
			}
			break;
		}
		case TR_AGG_K_COMM:
		case TR_AGG_K_CGROUP: {
			int64_t tid = tid_of(a, ev, &ok);
			uint32_t id = 0;
			if (ok && s->key[i].kind == TR_AGG_K_COMM) {
				id = a->last_hn < a->km.nhost
					? tr_ks_comm(&a->km.host[a->last_hn], tid, ev->cpu) : 0;
			} else if (ok) {
				const struct ithread *th = thread_of(a, tid);
				id = th ? th->cgroup : 0;
			}
			if (id) {
				t = KEY_STR;
				v = id;
			}
			break;
		}
		case TR_AGG_K_EVENT:
			t = KEY_STR;
			v = a->cls[ev->cls->index].name;
			break;
		case TR_AGG_K_PID: {
			/* user space's vpid context; the kernel's: its thread's process */
			int64_t pid = int_of(a->trk.vpid, ev, &ok), tid;
			if (ok) {
				t = KEY_INT;
				v = (uint64_t)pid;
				break;
			}
			tid = tid_of(a, ev, &ok);
			const struct ithread *th = ok ? thread_of(a, tid) : NULL;
			if (th && th->pid >= 0) {
				t = KEY_INT;
				v = (uint64_t)th->pid;
			}
			break;
		}
		case TR_AGG_K_FIELD: {
			const struct trawl_field *f = o->keyf[i];
			const union trawl_ctf_value *val = f ? trawl_field_value(f, ev) : NULL;
			enum trawl_field_type ft = val ? trawl_field_type(f, ev->cls) : TRAWL_FIELD_ANY;
			if (ft == TRAWL_FIELD_INT) {
				t = KEY_INT;
				v = val->u;
			} else if (ft == TRAWL_FIELD_STRING) {
				t = KEY_STR;
				v = intern_value(a, val);
			} else if (ft == TRAWL_FIELD_FLOAT) {
				t = KEY_FLOAT;
				memcpy(&v, &val->d, sizeof(v));
			}
			break;
		}
		}
		k[2 * i] = t;
		k[2 * i + 1] = v;
	}
}

/* ------------------------------------------------------------- cells */

static size_t nbuckets_of(const struct tr_agg_stmt *s)
{
	switch (s->func) {
	case TR_AGG_HIST:
		return TR_AGG_LOG2_BUCKETS;
	case TR_AGG_LHIST:
		return tr_agg_lin_nbuckets(s->param);
	case TR_AGG_LLHIST:
		return tr_agg_ll_nbuckets(s->param);
	default:
		return 0;
	}
}

size_t tr_agg_bucket(const struct tr_agg_stmt *s, int64_t v)
{
	switch (s->func) {
	case TR_AGG_LHIST:
		return tr_agg_lin_bucket(s->param, v);
	case TR_AGG_LLHIST:
		return tr_agg_ll_bucket(s->param, v);
	default:
		return tr_agg_log2_bucket(v);
	}
}

static int64_t to_int(double x)
{
	return x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
}

/* A new value of a heat map at ts. */
static int heat_add(struct trawl_agg *a, struct one *o, int64_t ts, int64_t v)
{
	struct heat *h = &o->heat;

	if (!h->width) {
		h->width = a->interval ? a->interval : 1000000;	/* 1 ms, doubling */
		h->t0 = ts - (ts % h->width + h->width) % h->width;
	}
	if (ts < h->t0)
		ts = h->t0;	/* (files: only the first may be earlier; never in order) */
	size_t c = (size_t)((ts - h->t0) / h->width);
	while (!a->interval && c >= HEAT_MAX_ADAPTIVE) {
		/* twice as wide: pairs of columns merged */
		for (size_t i = 0; i < h->ncols; i++) {
			uint64_t *dst = h->cells + (i / 2) * TR_AGG_LOG2_BUCKETS;
			const uint64_t *src = h->cells + i * TR_AGG_LOG2_BUCKETS;
			if (i % 2 == 0) {
				if (dst != src)
					memcpy(dst, src, TR_AGG_LOG2_BUCKETS * sizeof(*dst));
			} else {
				for (size_t b = 0; b < TR_AGG_LOG2_BUCKETS; b++)
					dst[b] += src[b];
			}
		}
		h->ncols = (h->ncols + 1) / 2;
		h->width *= 2;
		c = (size_t)((ts - h->t0) / h->width);
	}
	if (a->interval && c >= h->ncols && c - h->first >= HEAT_MAX_LIVE) {
		/* with intervals (live): the columns before the last half go
		 * (all of them after a long gap) */
		size_t from = c - HEAT_MAX_LIVE / 2;
		if (from >= h->ncols) {
			h->first = h->ncols = from;
		} else {
			memmove(h->cells, h->cells + (from - h->first) * TR_AGG_LOG2_BUCKETS,
				(h->ncols - from) * TR_AGG_LOG2_BUCKETS * sizeof(*h->cells));
			h->first = from;
		}
	}
	if (c >= h->ncols) {
		size_t need = c - h->first + 1;
		if (need > h->cap) {
			size_t cap = need * 2;
			uint64_t *nc = realloc(h->cells, cap * TR_AGG_LOG2_BUCKETS * sizeof(*nc));
			if (!nc)
				return -ENOMEM;
			h->cells = nc;
			h->cap = cap;
		}
		memset(h->cells + (h->ncols - h->first) * TR_AGG_LOG2_BUCKETS, 0,
		       (c + 1 - h->ncols) * TR_AGG_LOG2_BUCKETS * sizeof(*h->cells));
		h->ncols = c + 1;
	}
	h->cells[(c - h->first) * TR_AGG_LOG2_BUCKETS + tr_agg_log2_bucket(v)]++;
	return 0;
}

/* Adds value x with key k to aggregation o. */
static int add(struct trawl_agg *a, struct one *o, const uint64_t *k, double x, int64_t ts)
{
	if (o->s->func == TR_AGG_HEATMAP)
		return heat_add(a, o, ts, to_int(x));
	bool isnew = false;
	struct cell *c;
	/* the same key as the last value (runs of one thread, one CPU): its
	 * cell, without hashing (the pointer holds until an insertion) */
	if (o->last && !memcmp(o->last_key, k, o->ksz)) {
		c = o->last;
	} else {
		if (!(c = tr_table_get(&o->cells, k, &isnew)))
			return -ENOMEM;
		o->last = c;
		memcpy(o->last_key, k, o->ksz);
	}
	o->dirty = true;
	if (isnew) {
		c->min = c->max = x;
	} else {
		if (x < c->min)
			c->min = x;
		if (x > c->max)
			c->max = x;
	}
	c->count++;
	c->sum += x;
	double d = x - c->mean;
	c->mean += d / (double)c->count;
	c->m2 += d * (x - c->mean);
	if (o->nbuckets)
		c->buckets[tr_agg_bucket(o->s, to_int(x))]++;
	return 0;
}

/* ------------------------------------------------------------- intervals */

static void clear_results(struct trawl_agg *a)
{
	for (size_t i = 0; i < a->n; i++) {
		tr_table_clear(&a->aggs[i].cells);
		a->aggs[i].last = NULL;
		a->aggs[i].dirty = true;
	}
}

/* Closes intervals until the one holding ts (wall: by the clock). */
static void close_until(struct trawl_agg *a, int64_t ts)
{
	while (ts >= a->cur + a->interval) {
		int64_t b = a->cur, e = b + a->interval;
		if (a->o.on_interval) {
			a->closing = true;
			a->closing_col = b;
			a->o.on_interval(a->o.arg, a, b, e);
			a->closing = false;
		}
		clear_results(a);
		a->cur = e;
		if ((ts - a->cur) / a->interval > 1000)	/* a long gap: skip it, silently */
			a->cur = ts - (ts % a->interval + a->interval) % a->interval;
	}
}

/* ------------------------------------------------------------- the sink */

static const struct trawl_field *bind_opt(struct trawl_reader *r, const char *glob,
					  const char *field, unsigned flags)
{
	char spec[512], err[256];
	snprintf(spec, sizeof(spec), "%s.%s", glob, field);
	return trawl_field_bind(r, spec, TRAWL_FIELD_ANY, flags, err, sizeof(err));
}

/*
 * A thread id or a CPU number is one host's: on traces of several hosts,
 * an aggregation keyed by tid or cpu without the host is keyed by host
 * too (the host key put before the first of them, the statement written
 * back with it), so that tid 12 of two hosts, CPU 1 of four are rows of
 * their own; the cluster's figure is the sum of them. A live source's
 * hosts are not known at the start: keyed by host too. 0 or -errno.
 */
static int host_keys(struct trawl_agg *a, struct trawl_reader *r)
{
	const char *first = NULL;
	bool several = false;
	for (size_t i = 0; i < trawl_reader_ntraces(r) && !several; i++) {
		const char *h = trawl_reader_trace_hostname(trawl_reader_trace_at(r, i));
		h = h ? h : "";
		if (!first)
			first = h;
		else
			several = strcmp(first, h) != 0;
	}
	/* a live source (no size): its hosts come later, any number of them */
	uint64_t done, total;
	trawl_reader_progress(r, &done, &total);
	if (!several && total)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		struct one *o = &a->aggs[i];
		struct tr_agg_stmt *s = (struct tr_agg_stmt *)o->s;
		size_t at = s->nkeys;
		bool host = false;
		for (size_t k = 0; k < s->nkeys; k++) {
			host |= s->key[k].kind == TR_AGG_K_HOST;
			if (at == s->nkeys && (s->key[k].kind == TR_AGG_K_TID || s->key[k].kind == TR_AGG_K_CPU))
				at = k;
		}
		if (host || at == s->nkeys)
			continue;
		if (s->nkeys == TR_AGG_MAX_KEYS)
			return tr_seterr(a->err, sizeof(a->err), EINVAL,
					 "%s: the traces are of several hosts: a tid or cpu key needs "
					 "the host key too, and there are %d keys already",
					 s->text, TR_AGG_MAX_KEYS);
		char *name = strdup("host");
		if (!name)
			return -ENOMEM;
		memmove(&s->key[at + 1], &s->key[at], (s->nkeys - at) * sizeof(s->key[0]));
		s->key[at].kind = TR_AGG_K_HOST;
		s->key[at].name = name;
		s->nkeys++;
		/* the text with the key: "F(X) by k1, host, tid top N" */
		const char *by = strstr(s->text, ") by ");
		size_t pre = by ? (size_t)(by - s->text) + 1 : strlen(s->text), len = pre + 32;
		for (size_t k = 0; k < s->nkeys; k++)
			len += strlen(s->key[k].name) + 2;
		char *text = malloc(len);
		if (!text)
			return -ENOMEM;
		size_t n = (size_t)snprintf(text, len, "%.*s", (int)pre, s->text);
		for (size_t k = 0; k < s->nkeys; k++)
			n += (size_t)snprintf(text + n, len - n, "%s%s", k ? ", " : " by ", s->key[k].name);
		if (s->top)
			snprintf(text + n, len - n, " top %llu", (unsigned long long)s->top);
		free(s->text);
		s->text = text;
		/* the cells' key is longer: no cell yet */
		o->ksz = 2 * s->nkeys * sizeof(uint64_t) + sizeof(uint64_t);
		tr_table_release(&o->cells);
		tr_table_init(&o->cells, o->ksz, sizeof(struct cell) + o->nbuckets * sizeof(uint64_t));
		o->last = NULL;
	}
	return 0;
}

static int agg_start(void *self, struct trawl_reader *r)
{
	struct trawl_agg *a = self;
	bool threads = false;
	int rc = host_keys(a, r);
	if (rc < 0)
		return rc;

	for (size_t i = 0; i < a->n; i++) {
		struct one *o = &a->aggs[i];
		const struct tr_agg_stmt *s = o->s;
		if (s->value == TR_AGG_V_FIELD) {
			char spec[512];
			snprintf(spec, sizeof(spec), "%s.%s", s->glob, s->field);
			o->val = trawl_field_bind(r, spec, TRAWL_FIELD_ANY, TRAWL_FIELD_OPTIONAL,
						  a->err, sizeof(a->err));
			if (!o->val)
				return -errno;
		}
		for (size_t k = 0; k < s->nkeys; k++) {
			if (s->key[k].kind == TR_AGG_K_COMM || s->key[k].kind == TR_AGG_K_CGROUP ||
			    s->key[k].kind == TR_AGG_K_PID)
				threads = true;
			if (s->key[k].kind != TR_AGG_K_FIELD)
				continue;
			o->keyf[k] = bind_opt(r, s->glob, s->key[k].name, TRAWL_FIELD_OPTIONAL);
			if (!o->keyf[k] && errno != ENOENT)
				return tr_seterr(a->err, sizeof(a->err), errno, "key %s: %s",
						 s->key[k].name, strerror(errno));
		}
	}
	/* the thread of any event: the kernel's tid context, user space's vtid */
	a->trk.tid = bind_opt(r, "*", "tid", TRAWL_FIELD_OPTIONAL);
	a->trk.vtid = bind_opt(r, "*", "vtid", TRAWL_FIELD_OPTIONAL);
	if (threads) {
		/* the model's fields (names, tgids, cgroups), and the
		 * procname and vpid contexts */
		if ((rc = tr_kmodel_start(&a->km, r)) < 0)
			return rc;
		a->trk.procname = bind_opt(r, "*", "procname", TRAWL_FIELD_OPTIONAL);
		a->trk.vpid = bind_opt(r, "*", "vpid", TRAWL_FIELD_OPTIONAL);
		a->tracking = true;
	}
	return 0;
}

/* One event through aggregation o. */
static int one_event(struct trawl_agg *a, struct one *o, size_t k, const struct cls *c,
		     const struct trawl_event *ev, uint32_t host)
{
	uint64_t key[2 * TR_AGG_MAX_KEYS + 1] = { 0 };
	uint8_t role = c->role[k];
	bool ok;

	switch (role) {
	case ROLE_VALUE:
		key_of(a, o, ev, host, key);
		return add(a, o, key, 1, ev->ts);
	case ROLE_INT:
	case ROLE_FLOAT: {
		const union trawl_ctf_value *v = trawl_field_value(o->val, ev);
		if (!v)
			return 0;
		key_of(a, o, ev, host, key);
		return add(a, o, key, role == ROLE_INT ? (double)v->i : v->d, ev->ts);
	}
	case ROLE_BEGIN:
	case ROLE_END: {
		int64_t tid = tid_of(a, ev, &ok);
		if (!ok)
			return 0;
		struct thread_key tk = { .host = host, .tid = tid };
		bool isnew;
		struct pending *p = tr_table_get(&o->pending, &tk, &isnew);
		if (!p)
			return -ENOMEM;
		if (role == ROLE_BEGIN) {
			if (p->active)
				a->unpaired++;
			p->active = true;
			p->ts = ev->ts;
			p->stem = c->stem[k];
			key_of(a, o, ev, host, p->key);
			return 0;
		}
		if (!p->active || p->stem != c->stem[k]) {
			a->unpaired++;
			p->active = false;
			return 0;
		}
		p->active = false;
		memcpy(key, p->key, sizeof(p->key));
		return add(a, o, key, (double)(ev->ts - p->ts), ev->ts);
	}
	default:
		return 0;
	}
}

static int agg_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_agg *a = self;

	for (size_t i = 0; i < n; i++) {
		const struct trawl_event *e = &ev[i];
		const struct cls *c = e->cls->index < a->ncls && a->cls[e->cls->index].known ?
			&a->cls[e->cls->index] : cls_of(a, e->cls);
		if (!c)
			return -ENOMEM;
		if (a->interval) {
			if (a->cur == INT64_MIN)
				a->cur = e->ts - (e->ts % a->interval + a->interval) % a->interval;
			if (e->ts < a->cur) {
				a->late++;
				continue;
			}
			close_until(a, e->ts);
		}
		uint32_t host;
		int rc = host_of(a, e, &host);
		if (!rc && a->tracking)
			rc = track(a, e);
		if (rc < 0)
			return rc;
		for (size_t k = 0; k < a->n; k++) {
			if (!c->role[k])
				continue;
			rc = one_event(a, &a->aggs[k], k, c, e, host);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int agg_idle(void *self, struct trawl_reader *r)
{
	struct trawl_agg *a = self;
	struct timespec now;

	if (!a->interval || a->cur == INT64_MIN)
		return 0;
	/* what the streams' beacons say: nothing before it is to come */
	int64_t t = trawl_reader_low(r);
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t wall = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	if (t > a->low) {
		a->low = t;
		a->low_wall = wall;
	}
	/* the clock only when no stream has said anything of its time (no
	 * low: no beacons), or the low has not risen for four graces (a
	 * producer gone quiet): a slow one on a loaded machine, whose
	 * beacons come late, loses no value */
	if (a->o.grace && (t == INT64_MIN || wall - a->low_wall >= 4 * a->o.grace) &&
	    wall - a->o.grace > t)
		t = wall - a->o.grace;
	if (t >= a->cur + a->interval)
		close_until(a, t);
	return 0;
}

static int agg_finish(void *self, struct trawl_reader *r)
{
	struct trawl_agg *a = self;

	if (a->interval && a->cur != INT64_MIN)
		close_until(a, a->cur + a->interval);
	return 0;
}

static const struct trawl_sink_ops agg_ops = {
	.sz = sizeof(agg_ops), .name = "agg", .start = agg_start, .events = agg_events,
	.finish = agg_finish, .idle = agg_idle,
};

struct trawl_sink trawl_agg_sink(struct trawl_agg *a)
{
	return (struct trawl_sink){ &agg_ops, a };
}

struct trawl_agg *trawl_agg_new(const struct trawl_agg_opts *o, char *err, size_t errlen)
{
	struct trawl_agg *a = calloc(1, sizeof(*a));
	int rc;

	if (!a) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	memcpy(&a->o, o, o->sz < sizeof(a->o) ? o->sz : sizeof(a->o));
	a->o.sz = sizeof(a->o);
	a->interval = a->o.interval > 0 ? a->o.interval : 0;
	a->cur = INT64_MIN;
	a->low = INT64_MIN;
	tr_kmodel_init(&a->km, TR_KIN_F_NAMES);
	tr_table_init(&a->hosts, sizeof(uint32_t), sizeof(uint32_t));
	if (!a->o.spec) {
		rc = tr_seterr(err, errlen, EINVAL, "no statement");
		goto fail;
	}
	if ((rc = tr_agg_parse(&a->spec, a->o.spec, strlen(a->o.spec), err, errlen)) < 0)
		goto fail;
	a->n = a->spec.n;
	for (size_t i = 0; i < a->n; i++) {
		struct one *g = &a->aggs[i];
		g->s = &a->spec.stmt[i];
		g->nbuckets = nbuckets_of(g->s);
		g->ksz = 2 * g->s->nkeys * sizeof(uint64_t) + sizeof(uint64_t);
		tr_table_init(&g->cells, g->ksz, sizeof(struct cell) + g->nbuckets * sizeof(uint64_t));
		tr_table_init(&g->pending, sizeof(struct thread_key), sizeof(struct pending));
	}
	return a;
fail:
	trawl_agg_free(a);
	errno = -rc;
	return NULL;
}

const char *trawl_agg_error(const struct trawl_agg *a)
{
	return a->err;
}

void trawl_agg_free(struct trawl_agg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		struct one *g = &a->aggs[i];
		tr_table_release(&g->cells);
		tr_table_release(&g->pending);
		free(g->heat.cells);
		tr_agg_view_release(g);
	}
	tr_kmodel_release(&a->km);
	tr_table_release(&a->hosts);
	tr_agg_spec_release(&a->spec);
	free(a->cls);
	free(a);
}

uint64_t trawl_agg_late(const struct trawl_agg *a)
{
	return a->late;
}

uint64_t trawl_agg_unpaired(const struct trawl_agg *a)
{
	return a->unpaired;
}
