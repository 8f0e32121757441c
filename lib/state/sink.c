/* SPDX-License-Identifier: MIT */
/*
 * lib/state/sink.c - the state system's sink: kernel events turned into
 * the model's changes (lib/kstate/change.c) and taken into each host's
 * state and window, and the offline replay from a checkpoint.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/state-internal.h"

static int state_start(void *self, struct trawl_reader *r)
{
	struct trawl_state *s = self;

	memset(s->smap_key, 0, sizeof(s->smap_key));
	return tr_kin_start(&s->kin, r);
}

static struct host *host_of(struct trawl_state *s, const struct trawl_event *ev)
{
	size_t i = ((uintptr_t)ev->stream >> 4) & 63;

	if (s->smap_key[i] == ev->stream)
		return &s->hosts[s->smap_host[i]];
	const char *name = trawl_reader_trace_hostname(trawl_reader_stream_trace(ev->stream));
	struct host *h = tr_state_host_get(s, name ? name : "");
	if (h) {
		s->smap_key[i] = ev->stream;
		s->smap_host[i] = (uint32_t)(h - s->hosts);
	}
	return h;
}

/* ev's changes, from the host's current state, into the host. */
static int take(struct trawl_state *s, const struct trawl_event *ev,
		const struct tr_kin_class *ci)
{
	struct host *h = host_of(s, ev);
	struct chg c[2];
	int n, rc;

	if (!h)
		return -ENOMEM;
	if ((n = tr_kin_changes(&s->kin, &s->str, &h->cur, ev, ci, c)) < 0)
		return n;
	if (n == 2 && (rc = tr_state_push(s, h, &c[0])))
		return rc;
	return n ? tr_state_push(s, h, &c[1]) : 0;
}

/*
 * A checkpoint before the change at ts when it is due: on the grid of
 * intervals from the first event, or every ck_events events, but only
 * between two times (a checkpoint holds every change before its time, and
 * a replay from it takes every change from its time on). Times 2^63 ns or
 * more apart (a corrupt timestamp or clock offset) have no grid: the next
 * checkpoint is then interval after this event, or none near INT64_MAX.
 */
static int checkpoint_due(struct trawl_state *s, int64_t ts)
{
	int64_t since, next;
	int rc;

	/* (not due: the common case, one test; next_ck is INT64_MIN before
	 * the first event) */
	if (ts < s->next_ck && (!s->ck_events || s->since_ck < s->ck_events)) {
		s->since_ck++;
		s->last_taken = ts;
		return 0;
	}
	if (s->first_ts == INT64_MIN) {
		s->first_ts = s->last_taken = ts;
		s->next_ck = __builtin_add_overflow(ts, s->interval, &next) ? INT64_MAX : next;
		s->since_ck = 1;
		return 0;
	}
	if (ts > s->last_taken &&
	    (ts >= s->next_ck || (s->ck_events && s->since_ck >= s->ck_events))) {
		if ((rc = tr_state_checkpoint(s, ts)))
			return rc;
		s->since_ck = 0;
		if (ts >= s->next_ck) {
			if (__builtin_sub_overflow(ts, s->first_ts, &since))
				since = 0;
			s->next_ck = __builtin_add_overflow(ts, s->interval - since % s->interval, &next) ?
				     INT64_MAX : next;
		}
	}
	s->since_ck++;
	s->last_taken = ts;
	return 0;
}

static int state_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_state *s = self;
	int rc;

	for (size_t i = 0; i < n; i++) {
		const struct tr_kin_class *ci = tr_kin_class(&s->kin, &s->str, ev[i].cls);
		if (!ci)
			return -ENOMEM;
		if (ev[i].ts > s->newest)
			s->newest = ev[i].ts;	/* every event: the time the state is at */
		if (ci->kind == TR_KIN_NONE || ev[i].ts < s->replay_from)
			continue;
		if (s->interval && (rc = checkpoint_due(s, ev[i].ts)))
			return rc;
		s->events++;
		if ((rc = take(s, &ev[i], ci)))
			return rc;
	}
	return 0;
}

static int state_finish(void *self, struct trawl_reader *r)
{
	struct trawl_state *s = self;

	(void)r;
	/* the next run binds anew: classes are per reader */
	tr_kin_finish(&s->kin);
	return 0;
}

/*
 * The classes that make no change (TR_KIN_NONE: neither the model's nor a
 * system call's) are decoded but not merged (trawl_sink_ops.wants): for
 * state_events() they are only time, as the batch ends that still come
 * are. A class not classified for want of memory is wanted (events()
 * reports the ENOMEM).
 */
static bool state_wants(void *self, const struct trawl_ctf_event_class *cls)
{
	struct trawl_state *s = self;
	const struct tr_kin_class *ci = tr_kin_class(&s->kin, &s->str, cls);

	return !ci || ci->kind != TR_KIN_NONE;
}

static const struct trawl_sink_ops state_ops = {
	.sz = sizeof(state_ops),
	.name = "state",
	.start = state_start,
	.events = state_events,
	.finish = state_finish,
	.wants = state_wants,
};

struct trawl_sink trawl_state_sink(struct trawl_state *s)
{
	return (struct trawl_sink){ &state_ops, s };
}

void tr_state_ingest_free(struct trawl_state *s)
{
	tr_kin_free(&s->kin);
}

/* ------------------------------------------------------------ replay */

/* The latest of h's checkpoints at or before t: its index, or -1. */
static ptrdiff_t ck_find(const struct host *h, int64_t t)
{
	size_t lo = 0, hi = h->nck;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (h->ck[m].ts <= t)
			lo = m + 1;
		else
			hi = m;
	}
	return (ptrdiff_t)lo - 1;
}

struct trawl_state_view *tr_state_replay(const struct trawl_state *s, const char *host,
					 int64_t from, int64_t t, bool window,
					 const char *const *paths, size_t npaths,
					 const struct trawl_reader_opts *ro, char *err, size_t errlen)
{
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = s->window,
				       .no_window = !window };
	struct trawl_reader_opts o = { .sz = sizeof(o) };
	struct trawl_state *tmp = NULL;
	struct trawl_reader *r = NULL;
	struct trawl_state_view *v = NULL;
	const struct host *sh = NULL;
	ptrdiff_t k = -1;
	int rc = -ENOMEM;

	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i].name, host))
			sh = &s->hosts[i];
	if (!sh) {
		snprintf(err, errlen, "no kernel events of host '%s'", host);
		errno = ENOENT;
		return NULL;
	}
	k = ck_find(sh, from);
	if (!(tmp = trawl_state_new(&so)) || tr_state_strtab_copy(&tmp->str, &s->str))
		goto err;
	struct host *h = tr_state_host_get(tmp, host);
	if (!h)
		goto err;
	if (k >= 0) {
		/* (the window's first snapshot is taken from it at the first change) */
		tr_tables_release(&h->cur);
		if ((rc = tr_state_ck_restore(s, sh, (size_t)k, &h->cur))) {
			snprintf(err, errlen, "%s", rc == -EBADMSG ? "a checkpoint that does not decode"
				 : strerror(-rc));
			goto out;
		}
	}
	if (ro)
		memcpy(&o, ro, ro->sz < sizeof(o) ? ro->sz : sizeof(o));
	o.sz = sizeof(o);
	o.hosts = &host;
	o.nhosts = 1;
	o.begin = k >= 0 ? sh->ck[k].ts : 0;
	o.end = t;
	tmp->replay_from = k >= 0 ? sh->ck[k].ts : INT64_MIN;
	if (!(r = trawl_reader_new(paths, npaths, &o, err, errlen))) {
		rc = -errno;
		goto out;
	}
	struct trawl_sink sink = trawl_state_sink(tmp);
	if ((rc = trawl_pipe_run(r, &sink, 1, NULL)) < 0) {
		snprintf(err, errlen, "replay: %s", strerror(-rc));
		goto out;
	}
	if (!(v = trawl_state_at(tmp, host, t))) {
		rc = -errno;
		snprintf(err, errlen, "no state at that time: %s", strerror(errno));
		goto out;
	}
	/* the view keeps the replay's strings */
	tr_state_view_own(v, tmp);
	trawl_reader_free(r);
	return v;
err:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
out:
	trawl_reader_free(r);
	trawl_state_free(tmp);
	errno = -rc;
	return NULL;
}

struct trawl_state_view *trawl_state_at_files(const struct trawl_state *s,
					      const char *const *paths, size_t npaths,
					      const struct trawl_reader_opts *ro,
					      const char *host, int64_t t,
					      char *err, size_t errlen)
{
	/* the state: from the latest checkpoint at or before t; its history
	 * (the window before t) when asked (trawl_state_view_history) */
	struct trawl_state_view *v = tr_state_replay(s, host, t, t, false, paths, npaths, ro,
						     err, errlen);

	if (v && tr_state_view_lazy(v, s, paths, npaths, ro)) {
		trawl_state_view_free(v);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	return v;
}
