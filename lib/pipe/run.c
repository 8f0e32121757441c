/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/run.c - the pipeline's loop: the reader's merged events, a
 * batch at a time, to every sink in order.
 *
 * A reader in batches returns hundreds of events a call
 * (trawl_reader_read()), valid until the next call: they go to the sinks
 * as they are. A reader that merges event by event (small traces) returns
 * one: those are copied, values and all, into a batch of the run's own
 * until it is full, so that sinks still get batches (one call per batch,
 * never one per event). A live reader's events go out as they come (a
 * viewer waits for nothing).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe-internal.h"

#define RUN_BATCH 1024u
#define RUN_DIRECT 64u		/* a read this large goes to the sinks as is */

struct acc {
	struct trawl_event *ev;
	size_t n;
	uint64_t given;			/* tr_reader_given() at its first event */
	union trawl_ctf_value *vals;
	size_t nv, capv;
};

/* given: tr_reader_given() now (see the run's loop) */
static int acc_add(struct acc *a, const struct trawl_event *e, uint64_t given)
{
	if (a->nv + e->nvalues > a->capv) {
		size_t cap = (a->nv + e->nvalues) * 2 + 1024;
		union trawl_ctf_value *nv = realloc(a->vals, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		a->vals = nv;
		a->capv = cap;
	}
	if (!a->n)
		a->given = given;
	a->ev[a->n] = *e;
	a->ev[a->n].values = (const union trawl_ctf_value *)(uintptr_t)a->nv;	/* until flushed */
	if (e->nvalues)	/* events without fields: values may be NULL, and so a->vals */
		memcpy(a->vals + a->nv, e->values, e->nvalues * sizeof(*e->values));
	a->nv += e->nvalues;
	a->n++;
	return 0;
}

static int deliver(const struct trawl_sink *sinks, size_t nsinks, const struct trawl_event *ev,
		   size_t n)
{
	for (size_t i = 0; i < nsinks; i++) {
		int rc = sinks[i].ops->events(sinks[i].self, ev, n);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The sinks' idle(), for those whose ops have it. */
static int idle(const struct trawl_sink *sinks, size_t nsinks, struct trawl_reader *r)
{
	for (size_t i = 0; i < nsinks; i++) {
		const struct trawl_sink_ops *k = sinks[i].ops;
		if (k->sz > offsetof(struct trawl_sink_ops, idle) && k->idle) {
			int rc = k->idle(sinks[i].self, r);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* The reader is about to wait (live): the sinks' caught_up(), for those
 * whose ops have it; the first error stops the run after the read. */
struct waiting {
	const struct trawl_sink *sinks;
	size_t nsinks;
	int err;
};

static void caught_up(void *arg)
{
	struct waiting *w = arg;
	for (size_t i = 0; i < w->nsinks && !w->err; i++) {
		const struct trawl_sink_ops *k = w->sinks[i].ops;
		if (k->sz > offsetof(struct trawl_sink_ops, caught_up) && k->caught_up) {
			int rc = k->caught_up(w->sinks[i].self);
			if (rc < 0)
				w->err = rc;
		}
	}
}

static int acc_flush(struct acc *a, const struct trawl_sink *sinks, size_t nsinks)
{
	if (!a->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)	/* (no arithmetic on a NULL a->vals) */
		a->ev[i].values = a->ev[i].nvalues ? a->vals + (uintptr_t)a->ev[i].values : NULL;
	int rc = deliver(sinks, nsinks, a->ev, a->n);
	a->n = 0;
	a->nv = 0;
	return rc;
}

int trawl_pipe_run(struct trawl_reader *r, const struct trawl_sink *sinks, size_t nsinks,
		   const struct trawl_run_opts *o)
{
	struct trawl_run_opts ro = { .sz = sizeof(ro) };
	struct trawl_event *ev = malloc(RUN_BATCH * sizeof(*ev));
	struct acc a = { .ev = malloc(RUN_BATCH * sizeof(*a.ev)) };
	bool live = tr_reader_is_live(r);
	struct waiting wt = { sinks, nsinks, 0 };
	uint64_t done = 0;
	size_t started = 0;
	int ret = 0, corrupt = 0;

	if (o)
		memcpy(&ro, o, o->sz < sizeof(ro) ? o->sz : sizeof(ro));
	if (!ev || !a.ev) {
		free(ev);
		free(a.ev);
		return -ENOMEM;
	}
	for (; started < nsinks; started++) {
		const struct trawl_sink *k = &sinks[started];
		if (k->ops->start && (ret = k->ops->start(k->self, r)) < 0)
			goto finish;
	}
	/* the decoder may leave out what no sink wants (not with a limit:
	 * it counts every event) */
	if (!ro.limit && (ret = tr_reader_want(r, sinks, nsinks)) < 0)
		goto finish;
	if (live) {
		r->on_wait = caught_up;
		r->on_wait_arg = &wt;
	}
	while (!(ro.stop && *ro.stop)) {
		unsigned max = RUN_BATCH;
		if (ro.limit) {
			if (done >= ro.limit)
				break;
			if (ro.limit - done < max)
				max = (unsigned)(ro.limit - done);
		}
		int n = trawl_reader_read(r, ev, max);
		if (wt.err) {
			ret = wt.err;	/* a sink's caught_up() failed */
			break;
		}
		if (n == 0)
			break;
		if (n == -EAGAIN) {
			/* live: nothing within a wait; see the stop flag */
			if ((ret = idle(sinks, nsinks, r)) < 0)
				goto finish;
			continue;
		}
		if (n < 0) {
			if (ro.error)
				ro.error(ro.arg, trawl_reader_error(r));
			if (n != -EBADMSG) {
				ret = n;	/* out of memory, a live source gone: the end */
				break;
			}
			corrupt = 1;	/* a corrupt stream: the others go on */
			continue;
		}
		done += (uint64_t)n;
		if (live || (unsigned)n >= RUN_DIRECT) {
			if ((ret = acc_flush(&a, sinks, nsinks)) < 0 ||
			    (ret = deliver(sinks, nsinks, ev, (size_t)n)) < 0)
				goto finish;
			continue;
		}
		/*
		 * Copied events keep pointing into the trace (strings): once a
		 * batch has been given back since the first of them, the
		 * decoder may drop its pages, and reading them would map them
		 * again for good (memory would grow with the trace when the
		 * decoder leaves most events out and short reads pile up).
		 */
		uint64_t given = tr_reader_given(r);
		if (a.n && given != a.given && (ret = acc_flush(&a, sinks, nsinks)) < 0)
			goto finish;
		for (int i = 0; i < n; i++) {
			if ((ret = acc_add(&a, &ev[i], given)) < 0)
				goto finish;
			if (a.n == RUN_BATCH && (ret = acc_flush(&a, sinks, nsinks)) < 0)
				goto finish;
		}
	}
	if (ret >= 0)
		ret = acc_flush(&a, sinks, nsinks);
finish:
	r->on_wait = NULL;
	for (size_t i = 0; i < started; i++) {
		const struct trawl_sink *k = &sinks[i];
		int rc = k->ops->finish ? k->ops->finish(k->self, r) : 0;
		if (rc < 0 && ret >= 0)
			ret = rc;
	}
	free(ev);
	free(a.ev);
	free(a.vals);
	return ret < 0 ? ret : corrupt;
}
