// SPDX-License-Identifier: MIT
/*
 * lib/export/export.c - the export sink (trawl/export.h): the formats'
 * table, and what every format shares. Each event is classified once per
 * event class (a context switch, a wake-up, the state dump's process, a
 * user-space slice's begin or end, an instant, a kernel event left out),
 * its fields read through bindings by name, the hosts, threads and
 * processes recorded, slices paired and messages tied, and the record
 * handed to the format's writer. docs/export.md says why so.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/export-internal.h"
#include "kstate/kstate.h"
#include "util/outfile.h"
#include "trawl/sync-schema.h"

static const struct tr_xformat *const formats[] = {
	&tr_xformat_perfetto,
	&tr_xformat_chrome,
};

const char *trawl_export_format_name(size_t i, const char **help)
{
	if (i >= ARRAY_SIZE(formats))
		return NULL;
	if (help)
		*help = formats[i]->help;
	return formats[i]->name;
}

/* ------------------------------------------------------------ u64 -> index */

/* Open addressing, linear probing; values are index + 1 (0: empty). */
struct xmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

static size_t map_slot(const struct xmap *m, uint64_t key)
{
	size_t i = (size_t)tr_xmix(key, 0) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static uint32_t map_get(const struct xmap *m, uint64_t key)
{
	return m->cap ? m->vals[map_slot(m, key)] : 0;
}

static int map_put(struct xmap *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct xmap b = { .cap = m->cap ? m->cap * 2 : 64 };

		b.keys = malloc(b.cap * sizeof(*b.keys));
		b.vals = calloc(b.cap, sizeof(*b.vals));
		if (!b.keys || !b.vals) {
			free(b.keys);
			free(b.vals);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i]) {
				size_t j = map_slot(&b, m->keys[i]);
				b.keys[j] = m->keys[i];
				b.vals[j] = m->vals[i];
			}
		b.n = m->n;
		free(m->keys);
		free(m->vals);
		*m = b;
	}
	size_t i = map_slot(m, key);

	m->n += !m->vals[i];
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

/* Removes key (backward shift: no tombstones). */
static void map_del(struct xmap *m, uint64_t key)
{
	if (!m->cap)
		return;
	size_t i = map_slot(m, key), j = i;

	if (!m->vals[i])
		return;
	m->vals[i] = 0;
	m->n--;
	for (;;) {
		j = (j + 1) & (m->cap - 1);
		if (!m->vals[j])
			return;
		size_t home = (size_t)tr_xmix(m->keys[j], 0) & (m->cap - 1);
		/* j's entry may move to i if its home is not in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = 0;
			i = j;
		}
	}
}

static void map_release(struct xmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ core */

enum ckind {
	K_NEW = 0,		/* not classified yet */
	K_SKIP,			/* a kernel event of no family exported */
	K_SWITCH,
	K_WAKE,
	K_STATEDUMP,		/* lttng_statedump_process_state */
	K_EXEC,			/* sched_process_exec: a thread's new name */
	K_BEGIN,
	K_END,
	K_INSTANT,
};

struct cinfo {
	uint8_t kind;
	uint8_t wake;		/* enum tr_xwake */
	bool msg_send, msg_recv;/* may be a message's end (see flows) */
	uint32_t host;
	uint32_t stem;		/* K_BEGIN, K_END: the pair's name */
	const char *name;	/* the event's, or its stem */
	size_t name_len;
};

/* A message's end: (sync points' host, direction, corrected time). */
struct flow_end {
	int64_t ts;
	uint32_t phost;
	bool recv, used;
	uint64_t flow;
	uint32_t next;		/* index + 1 of the next with the same key */
};

/* An open slice. */
struct open_slice {
	uint32_t host, stem;
	int32_t pid;
	uint64_t id;		/* the "id" field, or the tid when none */
	uint64_t slice;
	unsigned lane;
	uint32_t next;		/* index + 1: the one opened before with the same key */
};

struct tr_xcore {
	struct cinfo *ci;
	size_t nci;
	const struct trawl_field *sw[7], *wk[4];
	const struct trawl_field *vtid, *vpid, *procname, *id;
	/* the kernel's model of each host (by struct cinfo's host): the
	 * names and processes of threads, each CPU's thread */
	struct tr_kmodel km;
	struct xmap threads, procs;
	struct flow_end *flows;
	size_t nflows;
	struct xmap flow_map;
	char **stems;
	size_t nstems;
	struct open_slice *open;
	size_t nopen, capopen;
	uint32_t free_open;	/* index + 1 of a free entry (chained by next) */
	struct xmap open_map;
	uint64_t nslices;
	uint64_t nopen_live;	/* slices open now */
	const struct trawl_sync_match *matches;	/* trawl_export_opts.matches */
	size_t nmatches;
	char *path;
	struct tr_outfile of;	/* the output (util/outfile.h) */
	char err[256];
	bool finished_ok;
	int failed;
	char **phosts;		/* the sync points' host names (flow_end.phost) */
	size_t nphosts;
};

struct trawl_export {
	struct tr_export x;
	struct tr_xcore core;
};

/* The sink's first failure: "WHAT: strerror" kept for trawl_export_error(). */
static int fail(struct tr_export *x, int ret, const char *what)
{
	ret = tr_outfile_why(&x->core->of, ret);	/* a failed write's own errno */
	if (!x->core->failed) {
		x->core->failed = ret;
		snprintf(x->core->err, sizeof(x->core->err), "%s: %s", what, strerror(-ret));
	}
	return ret;
}

struct tr_xthread *tr_export_thread(struct tr_export *x, uint32_t host, int32_t tid)
{
	struct tr_xcore *c = x->core;
	uint64_t key = ((uint64_t)host << 32) | (uint32_t)tid;
	uint32_t v = map_get(&c->threads, key);

	if (v)
		return &x->threads[v - 1];
	if (tr_grow(&x->threads, &x->capthreads, x->nthreads, sizeof(*x->threads)) ||
	    map_put(&c->threads, key, (uint32_t)x->nthreads + 1))
		return NULL;
	struct tr_xthread *t = &x->threads[x->nthreads++];

	memset(t, 0, sizeof(*t));
	t->host = host;
	t->tid = tid;
	t->pid = -1;
	return t;
}

/* The thread (host, tid) if known; NULL. Creates nothing (no pointer moves). */
static struct tr_xthread *thread_find(struct tr_export *x, uint32_t host, int32_t tid)
{
	uint32_t v = map_get(&x->core->threads, ((uint64_t)host << 32) | (uint32_t)tid);

	return v ? &x->threads[v - 1] : NULL;
}

struct tr_xproc *tr_export_proc(struct tr_export *x, uint32_t host, int32_t pid)
{
	struct tr_xcore *c = x->core;
	uint64_t key = ((uint64_t)host << 32) | (uint32_t)pid;
	uint32_t v = map_get(&c->procs, key);

	if (v)
		return &x->procs[v - 1];
	if (tr_grow(&x->procs, &x->capprocs, x->nprocs, sizeof(*x->procs)) ||
	    map_put(&c->procs, key, (uint32_t)x->nprocs + 1))
		return NULL;
	struct tr_xproc *p = &x->procs[x->nprocs++];

	memset(p, 0, sizeof(*p));
	p->host = host;
	p->pid = pid;
	return p;
}

static void set_name(char *dst, const char *s, size_t n)
{
	if (n >= TR_X_COMM)
		n = TR_X_COMM - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

/* ---------------------------------------------------------------- flows */

static uint64_t flow_key(uint32_t phost, bool recv, int64_t ts)
{
	return tr_xmix(((uint64_t)phost << 1) | recv, (uint64_t)ts);
}

static int flow_add(struct tr_xcore *c, size_t *cap, uint32_t phost, bool recv, int64_t ts,
		    uint64_t flow)
{
	if (tr_grow(&c->flows, cap, c->nflows, sizeof(*c->flows)))
		return -ENOMEM;
	uint64_t key = flow_key(phost, recv, ts);
	struct flow_end *f = &c->flows[c->nflows];

	*f = (struct flow_end){ .ts = ts, .phost = phost, .recv = recv, .flow = flow };
	/* appended at the chain's end: equal keys are used in the order of the
	 * points (each direction's messages are in send order) */
	uint32_t v = map_get(&c->flow_map, key);
	if (!v)
		return map_put(&c->flow_map, key, (uint32_t)++c->nflows);
	while (c->flows[v - 1].next)
		v = c->flows[v - 1].next;
	c->flows[v - 1].next = (uint32_t)++c->nflows;
	return 0;
}

static const struct trawl_sync_xform *fix_of(const struct trawl_export_opts *o, const char *host)
{
	for (size_t i = 0; i < o->nfixes; i++)
		if (!strcmp(o->fixes[i].host, host))
			return &o->fixes[i].xform;
	return NULL;
}

static int64_t fixed(const struct trawl_sync_xform *x, int64_t t)
{
	return x ? trawl_sync_xform_apply(x, t) : t;
}

/* Every matched message of the points: its send and its receive, on the
 * reader's (corrected) clock, under one flow id. */
static int flows_build(struct tr_xcore *c, const struct trawl_export_opts *o)
{
	const struct trawl_sync_points *p = o->points;
	size_t cap = 0;
	uint64_t flow = 0;

	for (size_t l = 0; l < p->nlinks; l++) {
		const struct trawl_sync_link *k = &p->links[l];
		const struct trawl_sync_xform *xa = fix_of(o, p->hosts[k->a].name);
		const struct trawl_sync_xform *xb = fix_of(o, p->hosts[k->b].name);

		for (size_t i = 0; i < k->n_ab; i++) {
			flow++;
			if (flow_add(c, &cap, (uint32_t)k->a, false, fixed(xa, k->ab[i].send), flow) ||
			    flow_add(c, &cap, (uint32_t)k->b, true, fixed(xb, k->ab[i].recv), flow))
				return -ENOMEM;
		}
		for (size_t i = 0; i < k->n_ba; i++) {
			flow++;
			if (flow_add(c, &cap, (uint32_t)k->b, false, fixed(xb, k->ba[i].send), flow) ||
			    flow_add(c, &cap, (uint32_t)k->a, true, fixed(xa, k->ba[i].recv), flow))
				return -ENOMEM;
		}
	}
	return 0;
}

/* The flow whose send (or receive) is on host h at ts, once; 0: none. */
static uint64_t flow_take(struct tr_xcore *c, const struct tr_xhost *h, bool recv, int64_t ts)
{
	if (h->pindex < 0 || !c->nflows)
		return 0;
	uint32_t v = map_get(&c->flow_map, flow_key((uint32_t)h->pindex, recv, ts));

	for (; v; v = c->flows[v - 1].next) {
		struct flow_end *f = &c->flows[v - 1];

		if (!f->used && f->ts == ts && f->phost == (uint32_t)h->pindex && f->recv == recv) {
			f->used = true;
			return f->flow;
		}
	}
	return 0;
}

/* -------------------------------------------------------- classification */

static bool has_suffix(const char *s, size_t n, const char *suf, size_t *stem)
{
	size_t k = strlen(suf);

	if (n <= k || memcmp(s + n - k, suf, k))
		return false;
	*stem = n - k;
	return true;
}

static long stem_id(struct tr_xcore *c, const char *s, size_t n)
{
	for (size_t i = 0; i < c->nstems; i++)
		if (strlen(c->stems[i]) == n && !memcmp(c->stems[i], s, n))
			return (long)i;
	char **m = realloc(c->stems, (c->nstems + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	c->stems = m;
	if (!(m[c->nstems] = strndup(s, n)))
		return -ENOMEM;
	return (long)c->nstems++;
}

static long host_of(struct tr_export *x, const struct trawl_event *ev)
{
	const char *name = trawl_reader_trace_hostname(trawl_reader_stream_trace(ev->stream));

	for (size_t i = 0; i < x->nhosts; i++)
		if (!strcmp(x->hosts[i].name, name))
			return (long)i;
	return -1;
}

static int classify(struct tr_export *x, const struct trawl_event *ev, struct cinfo *ci)
{
	struct tr_xcore *c = x->core;
	const char *name = ev->cls->name;
	const struct trawl_ctf_env *dom =
		trawl_ctf_trace_env(trawl_reader_trace_meta(trawl_reader_stream_trace(ev->stream)),
				    "domain");
	bool kernel = dom && !dom->is_int && dom->sval && !strcmp(dom->sval, "kernel");
	long h = host_of(x, ev);
	size_t n = strlen(name), stem;

	if (h < 0)
		return -EINVAL;	/* every trace's host was listed in start() */
	memset(ci, 0, sizeof(*ci));
	ci->host = (uint32_t)h;
	ci->name = name;
	ci->name_len = n;
	/* the sync points' events (trawl/sync-schema.h) and --match's */
	ci->msg_send = !strcmp(name, TRAWL_SYNC_PROBE_SEND) || !strcmp(name, TRAWL_SYNC_TCP_SEND);
	ci->msg_recv = !strcmp(name, TRAWL_SYNC_PROBE_RECV) || !strcmp(name, TRAWL_SYNC_TCP_RECV);
	for (size_t i = 0; i < c->nmatches; i++) {
		ci->msg_send |= tr_glob_match(c->matches[i].send_event, name);
		ci->msg_recv |= tr_glob_match(c->matches[i].recv_event, name);
	}
	if (!strcmp(name, "sched_switch")) {
		ci->kind = K_SWITCH;
	} else if (!strcmp(name, "sched_waking") || !strcmp(name, "sched_wakeup") ||
		   !strcmp(name, "sched_wakeup_new")) {
		ci->kind = K_WAKE;
		ci->wake = name[7] == 'i' ? TR_XWAKE_WAKING :
			   name[12] ? TR_XWAKE_WAKEUP_NEW : TR_XWAKE_WAKEUP;
	} else if (!strcmp(name, "lttng_statedump_process_state")) {
		ci->kind = K_STATEDUMP;
	} else if (kernel && !strcmp(name, "sched_process_exec")) {
		ci->kind = K_EXEC;
	} else if (ci->msg_send || ci->msg_recv) {
		ci->kind = K_INSTANT;
	} else if (kernel) {
		ci->kind = K_SKIP;
	} else if (has_suffix(name, n, "_begin", &stem) || has_suffix(name, n, "_entry", &stem) ||
		   has_suffix(name, n, "_end", &stem) || has_suffix(name, n, "_exit", &stem)) {
		long s = stem_id(c, name, stem);

		if (s < 0)
			return (int)s;
		ci->kind = name[n - 1] == 'n' || name[n - 1] == 'y' ? K_BEGIN : K_END;
		ci->stem = (uint32_t)s;
		ci->name = c->stems[s];
		ci->name_len = stem;
	} else {
		ci->kind = K_INSTANT;
	}
	return 0;
}

/* --------------------------------------------------------------- values */

static bool get_int(const struct trawl_field *f, const struct trawl_event *ev, int64_t *v)
{
	const union trawl_ctf_value *p;

	if (!f || trawl_field_type(f, ev->cls) != TRAWL_FIELD_INT || !(p = trawl_field_value(f, ev)))
		return false;
	*v = p->i;
	return true;
}

static bool get_str(const struct trawl_field *f, const struct trawl_event *ev, const char **s,
		    size_t *n)
{
	const union trawl_ctf_value *p;

	if (!f || trawl_field_type(f, ev->cls) != TRAWL_FIELD_STRING ||
	    !(p = trawl_field_value(f, ev)) || !p->s.p) {
		*s = "";
		*n = 0;
		return false;
	}
	*s = p->s.p;
	*n = strnlen(p->s.p, p->s.len);
	return true;
}

static int32_t int_or(const struct trawl_field *f, const struct trawl_event *ev, int32_t dflt)
{
	int64_t v;

	return get_int(f, ev, &v) ? (int32_t)v : dflt;
}

/* ------------------------------------------------------------- the sink */

static const struct trawl_field *bind(struct trawl_reader *r, const char *spec)
{
	/* absent fields are fine: the events that lack them are written
	 * without (or not at all) */
	return trawl_field_bind(r, spec, TRAWL_FIELD_ANY, TRAWL_FIELD_OPTIONAL, NULL, 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A string of a trace's env, else dflt. */
static const char *env_str(const struct trawl_ctf_trace *meta, const char *key, const char *dflt)
{
	const struct trawl_ctf_env *e = trawl_ctf_trace_env(meta, key);

	return e && !e->is_int && e->sval ? e->sval : dflt;
}

static int x_start(void *self, struct trawl_reader *r)
{
	struct tr_export *x = self;
	struct tr_xcore *c = x->core;
	static const char *const sw[] = {
		"sched_switch.prev_comm", "sched_switch.prev_tid", "sched_switch.prev_prio",
		"sched_switch.prev_state", "sched_switch.next_comm", "sched_switch.next_tid",
		"sched_switch.next_prio",
	};
	static const char *const wk[] = {
		"sched_wak*.comm", "sched_wak*.tid", "sched_wak*.prio", "sched_wak*.target_cpu",
	};

	for (size_t i = 0; i < ARRAY_SIZE(sw); i++)
		c->sw[i] = bind(r, sw[i]);
	for (size_t i = 0; i < ARRAY_SIZE(wk); i++)
		c->wk[i] = bind(r, wk[i]);
	if (tr_kmodel_start(&c->km, r) < 0)
		return fail(x, -ENOMEM, "fields");
	c->vtid = bind(r, "*.vtid");
	c->vpid = bind(r, "*.vpid");
	c->procname = bind(r, "*.procname");
	c->id = bind(r, "*.id");

	/* the hosts: one machine each, numbered in the order of their names */
	size_t nt = trawl_reader_ntraces(r);
	char **names = calloc(nt ? nt : 1, sizeof(*names));
	size_t n = 0;

	if (!names)
		return fail(x, -ENOMEM, "hosts");
	for (size_t i = 0; i < nt; i++) {
		const char *hn = trawl_reader_trace_hostname(trawl_reader_trace_at(r, i));
		size_t k = 0;

		while (k < n && strcmp(names[k], hn))
			k++;
		if (k == n)
			names[n++] = (char *)hn;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	x->hosts = calloc(n ? n : 1, sizeof(*x->hosts));
	if (!x->hosts) {
		free(names);
		return fail(x, -ENOMEM, "hosts");
	}
	for (size_t i = 0; i < n; i++) {
		struct tr_xhost *h = &x->hosts[i];

		h->machine = (uint32_t)i + 1;
		h->pindex = -1;
		if (!(h->name = strdup(names[i]))) {
			free(names);
			return fail(x, -ENOMEM, "hosts");
		}
		for (size_t k = 0; k < c->nphosts; k++)
			if (!strcmp(c->phosts[k], h->name))
				h->pindex = (long)k;
	}
	x->nhosts = n;
	x->st.hosts = n;
	free(names);
	for (size_t i = 0; i < nt; i++) {
		const struct trawl_reader_trace *t = trawl_reader_trace_at(r, i);
		const struct trawl_ctf_trace *meta = trawl_reader_trace_meta(t);
		const char *hn = trawl_reader_trace_hostname(t);

		for (size_t k = 0; k < n; k++)
			if (!strcmp(x->hosts[k].name, hn)) {
				x->hosts[k].sysname = env_str(meta, "sysname", x->hosts[k].sysname);
				x->hosts[k].release = env_str(meta, "kernel_release", x->hosts[k].release);
				x->hosts[k].version = env_str(meta, "kernel_version", x->hosts[k].version);
			}
	}
	int ret = x->fmt->start(x);

	if (ret == -EFBIG && x->fmt->truncates) {
		/* the hosts' names alone reach max_events: a file of those */
		x->core->failed = ret;
		x->st.truncated = true;
		snprintf(x->core->err, sizeof(x->core->err), "more than %llu records",
			 (unsigned long long)x->max_events);
		return 0;	/* its events() ends the run at once */
	}
	return ret ? fail(x, ret, "start") : 0;
}

/* Host h's model (x_events() made it before the event's handler). */
static const struct tables *model_of(struct tr_export *x, uint32_t host)
{
	return &x->core->km.host[host];
}

/* Thread tid's name in the model of host ("" when unknown; tid 0: CPU
 * cpu's idle thread). */
static const char *model_name(struct tr_export *x, uint32_t host, int64_t tid, uint32_t cpu)
{
	return tr_state_str(&x->core->km.str, tr_ks_comm(model_of(x, host), tid, cpu));
}

static int on_switch(struct tr_export *x, const struct cinfo *ci, const struct trawl_event *ev)
{
	struct tr_xcore *c = x->core;
	struct tr_xhost *h = &x->hosts[ci->host];
	struct tr_xswitch s;
	int64_t st = 0;

	get_str(c->sw[0], ev, &s.prev_comm, &s.prev_len);
	get_str(c->sw[4], ev, &s.next_comm, &s.next_len);
	s.prev_tid = int_or(c->sw[1], ev, 0);
	s.next_tid = int_or(c->sw[5], ev, 0);
	/* LTTng shows priorities as the kernel's minus 100 */
	s.prev_prio = int_or(c->sw[2], ev, 20) + 100;
	s.next_prio = int_or(c->sw[6], ev, 20) + 100;
	get_int(c->sw[3], ev, &st);
	s.prev_state = st;
	struct tr_xthread *t;

	/* the thread switched in, named as the model has it from now on */
	s.next_name = model_name(x, ci->host, s.next_tid, ev->cpu);
	if (s.next_len && (t = tr_export_thread(x, ci->host, s.next_tid)))
		set_name(t->name, s.next_name, strlen(s.next_name));
	x->st.sched_switch++;
	return x->fmt->sched_switch(x, h, ev->cpu, ev->ts, &s);
}

static int on_wake(struct tr_export *x, const struct cinfo *ci, const struct trawl_event *ev)
{
	struct tr_xcore *c = x->core;
	struct tr_xhost *h = &x->hosts[ci->host];
	struct tr_xwakeup w = { .kind = ci->wake };

	get_str(c->wk[0], ev, &w.comm, &w.comm_len);
	w.tid = int_or(c->wk[1], ev, 0);
	w.prio = int_or(c->wk[2], ev, 20) + 100;
	w.target_cpu = int_or(c->wk[3], ev, (int32_t)ev->cpu);
	x->st.wakeups++;
	/* the waker: the thread the model has on the CPU */
	return x->fmt->wakeup(x, h, ev->cpu, ev->ts, tr_ks_cpu_tid(model_of(x, ci->host), ev->cpu),
			      &w);
}

/* The state dump's process state (the model's change d, applied): the
 * thread's process, and its name as the model has it (the process's too,
 * for its main thread). */
static int on_statedump(struct tr_export *x, const struct cinfo *ci, const struct chg *d)
{
	int64_t tid = d->tid2, pid = d->a;

	if (pid < 0)
		return 0;
	struct tr_xthread *t = tr_export_thread(x, ci->host, (int32_t)tid);

	if (!t)
		return -ENOMEM;
	t->pid = (int32_t)pid;
	const struct ithread *k = tr_ks_thread(model_of(x, ci->host), tid);
	const char *s = k ? tr_state_str(&x->core->km.str, k->comm) : "";
	size_t n = strlen(s);

	if (n) {
		set_name(t->name, s, n);
		if (tid == pid) {
			struct tr_xproc *p = tr_export_proc(x, ci->host, (int32_t)pid);

			if (!p)
				return -ENOMEM;
			set_name(p->name, s, n);
		}
	}
	return 0;
}

/*
 * sched_process_exec (the model's change d, applied): the thread is its
 * new name from here on, as the model names it (the kernel's comm: the
 * file's base name, 15 bytes), and the leader of its process (exec makes
 * it so: its tid is the pid); the process, named after its main thread,
 * is renamed too. The format names again what it had named (its
 * rename()).
 */
static int on_exec(struct tr_export *x, const struct cinfo *ci, const struct trawl_event *ev,
		   const struct chg *d)
{
	struct tr_xhost *h = &x->hosts[ci->host];
	int64_t tid = d->tid;

	if (!d->str2 || tid < 0)
		return 0;	/* no file name, or whose exec is unknown */
	struct tr_xproc *p = tr_export_proc(x, ci->host, (int32_t)tid);
	struct tr_xthread *t = p ? tr_export_thread(x, ci->host, (int32_t)tid) : NULL;
	const struct ithread *k = tr_ks_thread(model_of(x, ci->host), tid);

	if (!t || !k)
		return -ENOMEM;
	const char *s = tr_state_str(&x->core->km.str, k->comm);

	set_name(t->name, s, strlen(s));
	t->pid = k->pid;
	memcpy(p->name, t->name, TR_X_COMM);
	return x->fmt->rename(x, h, ev->cpu, ev->ts, t, p);
}

static uint64_t slice_key(uint32_t host, int32_t pid, uint32_t stem, uint64_t id)
{
	return tr_xmix(tr_xmix(host, (uint32_t)pid), tr_xmix(stem, id));
}

static int on_user(struct tr_export *x, const struct cinfo *ci, const struct trawl_event *ev)
{
	struct tr_xcore *c = x->core;
	struct tr_xhost *h = &x->hosts[ci->host];
	struct tr_xmark m = { .name = ci->name, .name_len = ci->name_len, .ev = ev };
	int64_t tid = -1, pid = -1;
	const char *s;
	size_t n;

	if (get_int(c->vtid, ev, &tid)) {
		if (!(m.thread = tr_export_thread(x, ci->host, (int32_t)tid)))
			return -ENOMEM;
		if (get_int(c->vpid, ev, &pid))
			m.thread->pid = (int32_t)pid;
		pid = m.thread->pid;
		if (get_str(c->procname, ev, &s, &n) && !m.thread->name[0])
			set_name(m.thread->name, s, n);
	}
	if (pid >= 0 && !(m.proc = tr_export_proc(x, ci->host, (int32_t)pid)))
		return -ENOMEM;
	if (m.proc && !m.proc->name[0]) {
		/* the process's name: its procname context, else what its main
		 * thread was called (sched_switch, the state dump) */
		struct tr_xthread *main_t;

		if (get_str(c->procname, ev, &s, &n))
			set_name(m.proc->name, s, n);
		else if ((uint32_t)pid != (uint32_t)tid &&
			 (main_t = thread_find(x, ci->host, (int32_t)pid)) && main_t->name[0])
			memcpy(m.proc->name, main_t->name, TR_X_COMM);
		else if (m.thread && pid == tid)
			memcpy(m.proc->name, m.thread->name, TR_X_COMM);
	}
	if (ci->msg_send)
		m.flow_out = flow_take(c, h, false, ev->ts);
	if (ci->msg_recv && (m.flow_in = flow_take(c, h, true, ev->ts)))
		x->st.flows++;

	if ((ci->kind == K_BEGIN || ci->kind == K_END) && m.proc) {
		int64_t idv;
		uint64_t id = get_int(c->id, ev, &idv) ? (uint64_t)idv : (uint64_t)tid;
		uint64_t key = slice_key(ci->host, (int32_t)pid, ci->stem, id);
		uint32_t v = map_get(&c->open_map, key);

		if (ci->kind == K_BEGIN && ~m.proc->lanes) {
			uint32_t e;

			if (c->free_open) {
				e = c->free_open - 1;
				c->free_open = c->open[e].next;
			} else {
				if (tr_grow(&c->open, &c->capopen, c->nopen, sizeof(*c->open)))
					return -ENOMEM;
				e = (uint32_t)c->nopen++;
			}
			struct open_slice *o = &c->open[e];

			o->host = ci->host;
			o->pid = (int32_t)pid;
			o->stem = ci->stem;
			o->id = id;
			o->slice = ++c->nslices;
			o->lane = (unsigned)__builtin_ctzll(~m.proc->lanes);
			o->next = v;
			if (map_put(&c->open_map, key, e + 1))
				return -ENOMEM;
			m.proc->lanes |= 1ull << o->lane;
			c->nopen_live++;
			m.lane = o->lane;
			m.slice = o->slice;
			return x->fmt->slice_begin(x, h, ev->ts, &m);
		}
		if (ci->kind == K_END && v) {
			struct open_slice *o = &c->open[v - 1];

			if (o->host == ci->host && o->pid == (int32_t)pid && o->stem == ci->stem &&
			    o->id == id) {
				if (!o->next)
					map_del(&c->open_map, key);
				else if (map_put(&c->open_map, key, o->next))
					return -ENOMEM;
				m.proc->lanes &= ~(1ull << o->lane);
				m.lane = o->lane;
				m.slice = o->slice;
				o->next = c->free_open;
				c->free_open = v;
				c->nopen_live--;
				x->st.slices++;
				return x->fmt->slice_end(x, h, ev->ts, &m);
			}
		}
		/* a begin with every lane busy, an end without its begin: an
		 * instant under the event's own name */
		x->st.unmatched++;
		m.name = ev->cls->name;
		m.name_len = strlen(m.name);
	}
	x->st.instants++;
	return x->fmt->instant(x, h, ev->ts, &m);
}

static int x_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct tr_export *x = self;
	struct tr_xcore *c = x->core;
	int ret = 0;

	if (c->failed)
		return c->failed;
	if (n && x->first_ts == INT64_MIN)
		x->first_ts = ev[0].ts;
	for (size_t i = 0; i < n && !ret; i++) {
		const struct trawl_event *e = &ev[i];
		uint32_t k = e->cls->index;

		if (k >= c->nci) {
			size_t nn = (size_t)k + 64;
			struct cinfo *ci = realloc(c->ci, nn * sizeof(*ci));

			if (!ci)
				return fail(x, -ENOMEM, "classes");
			memset(ci + c->nci, 0, (nn - c->nci) * sizeof(*ci));
			c->ci = ci;
			c->nci = nn;
		}
		struct cinfo *ci = &c->ci[k];

		if (ci->kind == K_NEW && (ret = classify(x, e, ci)))
			break;
		x->st.events++;
		x->last_ts = e->ts;
		if ((ci->kind == K_SWITCH || ci->kind == K_WAKE) && e->cpu >= TR_X_MAX_CPUS) {
			x->st.skipped++;	/* a CPU number no machine has */
			continue;
		}
		struct chg d[2];
		int nd = 0;

		/* the model first: the handlers read it after the event */
		if (ci->kind == K_SWITCH || ci->kind == K_WAKE || ci->kind == K_STATEDUMP ||
		    ci->kind == K_EXEC) {
			if (!tr_kmodel_host(&c->km, ci->host)) {
				ret = -ENOMEM;
				break;
			}
			if (ci->kind != K_WAKE && (ci->kind != K_EXEC || e->cpu < TR_X_MAX_CPUS) &&
			    (nd = tr_kmodel_take(&c->km, ci->host, e, d)) < 0) {
				ret = nd;
				break;
			}
		}
		switch (ci->kind) {
		case K_SWITCH:
			ret = on_switch(x, ci, e);
			break;
		case K_WAKE:
			ret = on_wake(x, ci, e);
			break;
		case K_STATEDUMP:
			ret = nd ? on_statedump(x, ci, &d[1]) : 0;
			break;
		case K_EXEC:
			ret = nd ? on_exec(x, ci, e, &d[1]) : 0;
			break;
		case K_SKIP:
			x->st.skipped++;
			break;
		default:
			ret = on_user(x, ci, e);
			break;
		}
	}
	if (ret == -EFBIG && !c->failed) {
		c->failed = ret;
		x->st.truncated = x->fmt->truncates;
		snprintf(c->err, sizeof(c->err), "more than %llu records",
			 (unsigned long long)x->max_events);
		return ret;
	}
	return ret ? fail(x, ret, c->path) : 0;
}

static int x_finish(void *self, struct trawl_reader *r)
{
	struct tr_export *x = self;
	struct tr_xcore *c = x->core;
	/* the first max_events records of a format that keeps them: a file */
	int ret = c->failed == -EFBIG && x->st.truncated ? 0 : c->failed;

	x->st.unmatched += c->nopen_live;	/* begins never ended */
	c->nopen_live = 0;
	if (!ret && x->hosts && (ret = x->fmt->finish(x)))
		ret = fail(x, ret, c->path);
	if (!ret) {
		/* flushed, and a regular file renamed over the target */
		ret = tr_outfile_commit(&c->of, c->err, sizeof(c->err));
		x->out = NULL;	/* closed by the commit */
		x->st.bytes = c->of.bytes;
		if (ret)
			c->failed = ret;
	}
	if (!ret)
		c->finished_ok = true;
	return ret;
}

static const struct trawl_sink_ops sink_ops = {
	.sz = sizeof(struct trawl_sink_ops),
	.name = "export",
	.start = x_start,
	.events = x_events,
	.finish = x_finish,
};

struct trawl_export *trawl_export_new(const struct trawl_export_opts *o, char *err,
				      size_t errlen)
{
	const char *name = o && o->format ? o->format : "perfetto";
	const struct tr_xformat *fmt = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(formats[i]->name, name))
			fmt = formats[i];
	if (!fmt) {
		tr_seterr(err, errlen, EINVAL, "unknown export format '%s'", name);
		errno = EINVAL;
		return NULL;
	}
	if (!o->path || !*o->path) {
		tr_seterr(err, errlen, EINVAL, "no output file");
		errno = EINVAL;
		return NULL;
	}
	struct trawl_export *e = calloc(1, sizeof(*e));
	struct tr_export *x = e ? &e->x : NULL;
	int ret = -ENOMEM;

	if (!e)
		goto err;
	x->core = &e->core;
	tr_kmodel_init(&e->core.km, TR_KIN_F_NAMES);
	x->fmt = fmt;
	x->first_ts = INT64_MIN;
	x->fields = o->sz >= offsetof(struct trawl_export_opts, fields) + sizeof(o->fields) &&
		    o->fields;
	x->max_events = o->max_events ? (o->max_events == UINT64_MAX ? 0 : o->max_events)
				      : fmt->max_events;
	if (fmt->priv_size && !(x->priv = calloc(1, fmt->priv_size)))
		goto err;
	e->core.of.fd = -1;
	if (!(e->core.path = strdup(o->path)))
		goto err;
	if (o->points) {
		if ((ret = flows_build(&e->core, o)))
			goto err;
		ret = -ENOMEM;
		if (!(e->core.phosts = calloc(o->points->nhosts + 1, sizeof(char *))))
			goto err;
		for (size_t i = 0; i < o->points->nhosts; i++)
			if (!(e->core.phosts[e->core.nphosts++] = strdup(o->points->hosts[i].name)))
				goto err;
	}
	e->core.matches = o->matches;
	e->core.nmatches = o->nmatches;
	/* a device, a FIFO or "-" written in place; a regular file replaced once
	 * complete; a symbolic link refused (util/outfile.h) */
	if ((ret = tr_outfile_open(&e->core.of, o->path, TR_OUTFILE_DASH, 0666, err, errlen))) {
		trawl_export_free(e);
		errno = -ret;
		return NULL;
	}
	ret = -ENOMEM;
	if (!(x->out = tr_outfile_stdio(&e->core.of)))
		goto err;
	return e;
err:
	tr_seterr(err, errlen, -ret, "out of memory");
	trawl_export_free(e);
	errno = -ret;
	return NULL;
}

struct trawl_sink trawl_export_sink(struct trawl_export *e)
{
	return (struct trawl_sink){ .ops = &sink_ops, .self = &e->x };
}

const struct trawl_export_stats *trawl_export_stats(const struct trawl_export *e)
{
	return &e->x.st;
}

const char *trawl_export_error(const struct trawl_export *e)
{
	return e->core.err;
}

void trawl_export_free(struct trawl_export *e)
{
	if (!e)
		return;
	struct tr_export *x = &e->x;
	struct tr_xcore *c = &e->core;

	tr_outfile_release(&c->of);	/* an unfinished temporary removed */
	x->out = NULL;
	if (x->fmt && x->fmt->release)
		x->fmt->release(x);
	free(x->priv);
	for (size_t i = 0; i < x->nhosts; i++)
		free(x->hosts[i].name);
	tr_kmodel_release(&c->km);
	free(x->hosts);
	free(x->threads);
	free(x->procs);
	free(c->ci);
	map_release(&c->threads);
	map_release(&c->procs);
	free(c->flows);
	map_release(&c->flow_map);
	for (size_t i = 0; i < c->nstems; i++)
		free(c->stems[i]);
	free(c->stems);
	free(c->open);
	map_release(&c->open_map);
	for (size_t i = 0; i < c->nphosts; i++)
		free(c->phosts[i]);
	free(c->phosts);
	free(c->path);
	free(e);
}
