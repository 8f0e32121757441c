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
	int n, rc = 0;

	if (!h)
		return -ENOMEM;
	if ((n = tr_kin_changes(&s->kin, &s->str, &h->cur, ev, ci, c)) < 0)
		return n;
	for (int i = 2 - n; i < 2 && !rc; i++)
		rc = tr_state_push(s, h, &c[i]);
	return rc;
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
		if (s->interval) {
			/*
			 * The next checkpoint on the grid from the first event;
			 * times 2^63 ns or more apart (a corrupt timestamp or
			 * clock offset) have no grid: the next checkpoint is
			 * then interval after this event, or none near INT64_MAX.
			 */
			int64_t since, next;
			if (s->first_ts == INT64_MIN) {
				s->first_ts = ev[i].ts;
				s->next_ck = __builtin_add_overflow(ev[i].ts, s->interval, &next) ?
					     INT64_MAX : next;
			} else if (ev[i].ts >= s->next_ck) {
				if ((rc = tr_state_checkpoint(s, ev[i].ts)))
					return rc;
				if (__builtin_sub_overflow(ev[i].ts, s->first_ts, &since))
					since = 0;
				s->next_ck = __builtin_add_overflow(ev[i].ts, s->interval -
								    since % s->interval, &next) ?
					     INT64_MAX : next;
			}
		}
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

struct trawl_state_view *trawl_state_at_files(const struct trawl_state *s,
					      const char *const *paths, size_t npaths,
					      const struct trawl_reader_opts *ro,
					      const char *host, int64_t t,
					      char *err, size_t errlen)
{
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = s->window };
	struct trawl_reader_opts o = { .sz = sizeof(o) };
	const struct ckpt *k = NULL;
	struct trawl_state *tmp = NULL;
	struct trawl_reader *r = NULL;
	struct trawl_state_view *v = NULL;
	size_t hi;
	int rc = -ENOMEM;

	for (hi = 0; hi < s->nhosts && strcmp(s->hosts[hi].name, host); hi++)
		;
	if (hi == s->nhosts) {
		snprintf(err, errlen, "no kernel events of host '%s'", host);
		errno = ENOENT;
		return NULL;
	}
	/* the latest checkpoint a window's length before t */
	int64_t want;
	if (s->window <= 0 || __builtin_sub_overflow(t, s->window, &want))
		want = s->window > 0 ? INT64_MIN : t;	/* (t near INT64_MIN: every checkpoint is after) */
	for (size_t i = 0; i < s->nck && s->ck[i].ts <= want; i++)
		k = &s->ck[i];
	if (!(tmp = trawl_state_new(&so)) || tr_state_strtab_copy(&tmp->str, &s->str))
		goto err;
	struct host *h = tr_state_host_get(tmp, host);
	if (!h)
		goto err;
	if (k && hi < k->nhosts) {
		/* (the window's first snapshot is taken from it at the first change) */
		tr_tables_release(&h->cur);
		if (tr_tables_copy(&h->cur, &k->t[hi]))
			goto err;
	}
	if (ro)
		memcpy(&o, ro, ro->sz < sizeof(o) ? ro->sz : sizeof(o));
	o.sz = sizeof(o);
	o.hosts = &host;
	o.nhosts = 1;
	o.begin = k ? k->ts : 0;
	o.end = t;
	tmp->replay_from = k ? k->ts : INT64_MIN;
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
