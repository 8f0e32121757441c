// SPDX-License-Identifier: MIT
/*
 * lib/export/chrome.c - the "chrome-json" export format: the Trace Event
 * JSON that chrome://tracing (and Perfetto's JSON importer) read, for
 * small sessions: {"traceEvents": [...], "displayTimeUnit": "ns"}.
 * Hosts share one pid space there, so host i's pid p is written as
 * (i + 1) * 10,000,000 + p (a Linux pid is below 2^22 = 4,194,304); each
 * host's CPUs and its events without a thread are the pseudo-process
 * (i + 1) * 10,000,000 + 9,999,999 ("HOST"), a thread per CPU.
 * Times are microseconds since the run's first event (a double keeps the
 * nanoseconds there). Written through lib/util/json.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/export-internal.h"

#define PID_STRIDE 10000000
#define PID_HOST (PID_STRIDE - 1)	/* the host's pseudo-process */
#define TID_EVENTS (PID_STRIDE - 1)	/* its thread of events without one */
#define FLUSH_BYTES (1024 * 1024)

#define F_NAMED 1u			/* tr_xthread/tr_xproc flags */

struct run {				/* what runs on a CPU since when */
	int64_t since;
	int32_t tid;
	char comm[TR_X_COMM];
};

struct ch_host {
	struct run *cpu;
	uint32_t ncpu;
};

struct ch {
	struct json j;
	struct ch_host *hosts;
	/* max_events: where the record being written began, to take it back
	 * when it is one too many; full: the file has its records */
	size_t mark;
	bool mark_comma, full;
};

/* A record (or two, bound) begins. */
static void rec_begin(struct tr_export *x)
{
	struct ch *c = x->priv;

	c->mark = c->j.len;
	c->mark_comma = c->j.comma[c->j.depth];
}

/* The n records since rec_begin() are written: counted, or, past
 * max_events, taken back (the file keeps the first max_events) and
 * -EFBIG. */
static int rec_end(struct tr_export *x, uint64_t n)
{
	struct ch *c = x->priv;
	int ret = tr_export_count(x, n);

	if (ret == -EFBIG) {
		c->j.len = c->mark;
		c->j.comma[c->j.depth] = c->mark_comma;
		x->st.written -= n;
		c->full = true;
	}
	return ret;
}

static int64_t pid_of(uint32_t host, int32_t pid)
{
	return (int64_t)(host + 1) * PID_STRIDE + pid;
}

static int flush(struct tr_export *x, bool force)
{
	struct ch *c = x->priv;

	if (!force && c->j.len < FLUSH_BYTES)
		return c->j.nomem ? -ENOMEM : 0;
	return tr_json_flush(&c->j, x->out);
}

/* {"ph": ph, "ts": us, "pid": pid, "tid": tid, "name": name, ... (open) */
static void ev_open(struct tr_export *x, const char *ph, int64_t ts, int64_t pid, int64_t tid,
		    const char *name, size_t n)
{
	struct ch *c = x->priv;

	tr_json_obj(&c->j);
	tr_json_kv_str(&c->j, "ph", ph);
	tr_json_key(&c->j, "ts");
	tr_json_fixed(&c->j, (double)(ts - x->first_ts) / 1e3, 3);
	tr_json_kv_i64(&c->j, "pid", pid);
	tr_json_kv_i64(&c->j, "tid", tid);
	if (name) {
		tr_json_key(&c->j, "name");
		tr_json_strn(&c->j, name, n);
	}
}

/* A metadata record naming a process or a thread. */
static int meta(struct tr_export *x, const char *what, int64_t pid, int64_t tid, const char *name)
{
	struct ch *c = x->priv;

	if (c->full)
		return -EFBIG;
	rec_begin(x);
	tr_json_obj(&c->j);
	tr_json_kv_str(&c->j, "ph", "M");
	tr_json_kv_str(&c->j, "name", what);
	tr_json_kv_i64(&c->j, "pid", pid);
	tr_json_kv_i64(&c->j, "tid", tid);
	tr_json_key(&c->j, "args");
	tr_json_obj(&c->j);
	tr_json_kv_str(&c->j, "name", name);
	tr_json_obj_end(&c->j);
	tr_json_obj_end(&c->j);
	return rec_end(x, 1);
}

static int ch_start(struct tr_export *x)
{
	struct ch *c = x->priv;
	int ret;

	tr_json_init(&c->j);
	if (!(c->hosts = calloc(x->nhosts ? x->nhosts : 1, sizeof(*c->hosts))))
		return -ENOMEM;
	tr_json_obj(&c->j);
	tr_json_kv_str(&c->j, "displayTimeUnit", "ns");
	tr_json_key(&c->j, "traceEvents");
	tr_json_arr(&c->j);
	for (size_t i = 0; i < x->nhosts; i++) {
		char name[300];

		snprintf(name, sizeof(name), "%s: messages", x->hosts[i].name);
		if ((ret = meta(x, "process_name", pid_of((uint32_t)i, PID_HOST), 0,
				x->hosts[i].name)) ||
		    (ret = meta(x, "thread_name", pid_of((uint32_t)i, PID_HOST), TID_EVENTS, name)))
			return ret;
	}
	return flush(x, false);
}

static struct run *run_of(struct tr_export *x, const struct tr_xhost *h, uint32_t cpu)
{
	struct ch *c = x->priv;
	struct ch_host *ch = &c->hosts[h - x->hosts];

	if (cpu >= ch->ncpu) {
		struct run *r = realloc(ch->cpu, (cpu + 1) * sizeof(*r));

		if (!r)
			return NULL;
		uint32_t first = ch->ncpu;

		for (uint32_t i = first; i <= cpu; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			r[i].since = INT64_MIN;
			r[i].tid = -1;
		}
		ch->cpu = r;
		ch->ncpu = cpu + 1;
		for (uint32_t i = first; i <= cpu; i++) {
			char name[32];

			snprintf(name, sizeof(name), "CPU %u", i);
			/* past max_events: not named (the file is full; the run ends) */
			int ret = meta(x, "thread_name", pid_of((uint32_t)(h - x->hosts), PID_HOST),
				       i, name);
			if (ret && ret != -EFBIG)
				return NULL;
		}
	}
	return &ch->cpu[cpu];
}

/* What ran on a CPU until ts, as a complete slice (not the idle task). */
static int run_end(struct tr_export *x, const struct tr_xhost *h, uint32_t cpu, struct run *r,
		   int64_t ts)
{
	struct ch *c = x->priv;

	if (r->since == INT64_MIN || r->tid <= 0)
		return 0;
	if (c->full)
		return -EFBIG;
	rec_begin(x);
	ev_open(x, "X", r->since, pid_of((uint32_t)(h - x->hosts), PID_HOST), cpu, r->comm,
		strlen(r->comm));
	tr_json_key(&c->j, "dur");
	tr_json_fixed(&c->j, (double)(ts - r->since) / 1e3, 3);
	tr_json_key(&c->j, "args");
	tr_json_obj(&c->j);
	tr_json_kv_i64(&c->j, "tid", r->tid);
	tr_json_obj_end(&c->j);
	tr_json_obj_end(&c->j);
	int ret = rec_end(x, 1);

	return ret ? ret : flush(x, false);
}

static int ch_switch(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		     const struct tr_xswitch *s)
{
	struct run *r = run_of(x, h, cpu);
	struct ch *c = x->priv;
	int ret;

	if (!r)
		return -ENOMEM;
	if (c->full)
		return -EFBIG;
	if ((ret = run_end(x, h, cpu, r, ts)))
		return ret;
	r->since = ts;
	r->tid = s->next_tid;
	/* the slice's name: the thread's, as the model names it */
	size_t n = strlen(s->next_name);

	n = n < TR_X_COMM ? n : TR_X_COMM - 1;
	memcpy(r->comm, s->next_name, n);
	r->comm[n] = 0;
	return 0;
}

static int ch_wakeup(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		     int32_t cur_tid, const struct tr_xwakeup *w)
{
	return 0;	/* chrome://tracing has no thread states */
}

/*
 * A thread renamed (exec): what it runs on its CPU is a slice of the old
 * name up to the exec and of the new one from there; its thread and
 * process, when already named, are named again (the format's names are
 * not in time: viewers take the last, the name from the exec on).
 */
static int ch_rename(struct tr_export *x, struct tr_xhost *h, uint32_t cpu, int64_t ts,
		     struct tr_xthread *t, struct tr_xproc *p)
{
	struct ch *c = x->priv;
	uint32_t hi = (uint32_t)(h - x->hosts);
	struct run *r = run_of(x, h, cpu);
	int ret;

	if (!r)
		return -ENOMEM;
	if (c->full)
		return -EFBIG;
	if (r->tid == t->tid && r->since != INT64_MIN && strcmp(r->comm, t->name)) {
		if ((ret = run_end(x, h, cpu, r, ts)))
			return ret;
		r->since = ts;
		memcpy(r->comm, t->name, TR_X_COMM);
	}
	if ((t->flags & F_NAMED) && t->pid >= 0 &&
	    (ret = meta(x, "thread_name", pid_of(hi, t->pid), t->tid, t->name)))
		return ret;
	if (p && (p->flags & F_NAMED)) {
		char name[300];

		snprintf(name, sizeof(name), "%s: %s", h->name, p->name);
		if ((ret = meta(x, "process_name", pid_of(hi, p->pid), 0, name)))
			return ret;
	}
	return 0;
}

/* The pid and tid a mark goes on, named the first time. */
static int place(struct tr_export *x, const struct tr_xhost *h, const struct tr_xmark *m,
		 int64_t *pid, int64_t *tid)
{
	uint32_t hi = (uint32_t)(h - x->hosts);
	int ret;

	if (!m->thread || m->thread->pid < 0) {
		*pid = pid_of(hi, PID_HOST);
		*tid = TID_EVENTS;
		return 0;
	}
	*pid = pid_of(hi, m->thread->pid);
	*tid = m->thread->tid;
	if (m->proc && !(m->proc->flags & F_NAMED)) {
		char name[300];

		snprintf(name, sizeof(name), "%s: %s", h->name,
			 m->proc->name[0] ? m->proc->name : m->thread->name);
		m->proc->flags |= F_NAMED;
		if ((ret = meta(x, "process_name", *pid, 0, name)))
			return ret;
	}
	if (!(m->thread->flags & F_NAMED) && m->thread->name[0]) {
		m->thread->flags |= F_NAMED;
		if ((ret = meta(x, "thread_name", *pid, *tid, m->thread->name)))
			return ret;
	}
	return 0;
}

/* --fields: the event's context and fields as the record's args. */
static void args(struct tr_export *x, const struct tr_xmark *m)
{
	struct ch *c = x->priv;

	if (!x->fields)
		return;
	tr_json_key(&c->j, "args");
	tr_json_obj(&c->j);
	tr_format_json_values(&c->j, m->ev);
	tr_json_obj_end(&c->j);
}

static int slice(struct tr_export *x, struct tr_xhost *h, int64_t ts, const struct tr_xmark *m,
		 const char *ph)
{
	struct ch *c = x->priv;
	int64_t pid, tid;
	int ret = place(x, h, m, &pid, &tid);

	if (ret)
		return ret;
	rec_begin(x);
	ev_open(x, ph, ts, pid, tid, m->name, m->name_len);
	tr_json_kv_str(&c->j, "cat", "trawl");
	tr_json_kv_u64(&c->j, "id", m->slice);
	args(x, m);
	tr_json_obj_end(&c->j);
	ret = rec_end(x, 1);
	return ret ? ret : flush(x, false);
}

static int ch_begin(struct tr_export *x, struct tr_xhost *h, int64_t ts, const struct tr_xmark *m)
{
	return slice(x, h, ts, m, "b");
}

static int ch_end(struct tr_export *x, struct tr_xhost *h, int64_t ts, const struct tr_xmark *m)
{
	return slice(x, h, ts, m, "e");
}

static int ch_instant(struct tr_export *x, struct tr_xhost *h, int64_t ts,
		      const struct tr_xmark *m)
{
	struct ch *c = x->priv;
	int64_t pid, tid;
	int ret = place(x, h, m, &pid, &tid);

	if (ret)
		return ret;
	rec_begin(x);
	if (!m->flow_out && !m->flow_in) {
		ev_open(x, "i", ts, pid, tid, m->name, m->name_len);
		tr_json_kv_str(&c->j, "s", "t");
		args(x, m);
		tr_json_obj_end(&c->j);
		ret = rec_end(x, 1);
		return ret ? ret : flush(x, false);
	}
	/* a message's end: a slice of a nanosecond that the flow binds to */
	ev_open(x, "X", ts, pid, tid, m->name, m->name_len);
	tr_json_key(&c->j, "dur");
	tr_json_fixed(&c->j, 0.001, 3);
	args(x, m);
	tr_json_obj_end(&c->j);
	ev_open(x, m->flow_out ? "s" : "f", ts, pid, tid, "message", 7);
	tr_json_kv_str(&c->j, "cat", "message");
	tr_json_kv_u64(&c->j, "id", m->flow_out ? m->flow_out : m->flow_in);
	if (!m->flow_out)
		tr_json_kv_str(&c->j, "bp", "e");
	tr_json_obj_end(&c->j);
	ret = rec_end(x, 2);
	return ret ? ret : flush(x, false);
}

static int ch_finish(struct tr_export *x)
{
	struct ch *c = x->priv;
	int ret;

	/* what still runs on each CPU: as far as max_events lets it */
	for (size_t i = 0; i < x->nhosts && !c->full; i++)
		for (uint32_t k = 0; k < c->hosts[i].ncpu; k++)
			if ((ret = run_end(x, &x->hosts[i], k, &c->hosts[i].cpu[k], x->last_ts)) &&
			    ret != -EFBIG)
				return ret;
	tr_json_arr_end(&c->j);
	tr_json_obj_end(&c->j);
	tr_json_char(&c->j, '\n');
	return flush(x, true);
}

static void ch_release(struct tr_export *x)
{
	struct ch *c = x->priv;

	if (!c)
		return;
	tr_json_release(&c->j);
	for (size_t i = 0; c->hosts && i < x->nhosts; i++)
		free(c->hosts[i].cpu);
	free(c->hosts);
}

const struct tr_xformat tr_xformat_chrome = {
	.name = "chrome-json",
	.help = "chrome://tracing JSON, first 1 M records",
	.max_events = TRAWL_EXPORT_CHROME_MAX_EVENTS,
	.truncates = true,
	.priv_size = sizeof(struct ch),
	.start = ch_start,
	.sched_switch = ch_switch,
	.wakeup = ch_wakeup,
	.slice_begin = ch_begin,
	.slice_end = ch_end,
	.instant = ch_instant,
	.rename = ch_rename,
	.finish = ch_finish,
	.release = ch_release,
};
