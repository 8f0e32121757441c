/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/clock.c - a live reader's clocks corrected while the session
 * flows (trawl_reader_opts.clock, docs/sync.md "Live").
 *
 * A live trace decodes in its host's own time (no fix: the decoder's fast
 * path, a batch's times its raw clock in ns as long as no correction is
 * known; from the first one on, a batch keeps its raw clock values apart,
 * for the events' cycles and for mapping them again). Every
 * batch a stream decodes goes to the corrector's tap, the events it wants
 * in that time, before the merge; the reader decodes ahead what came
 * (live_wait(): up to a stream's queue) so that the tap sees the messages
 * as they arrive, not as the merge reaches them. Then, before it takes
 * what it decoded, it asks the corrector for each host's correction
 * (trace.lx; the corrector computes anew only when messages came, and
 * limits its own cost); a batch's times are mapped through the host's
 * correction when the merge takes it, and so are its hold times: a
 * message decoded this way is in the correction its times are mapped
 * with.
 * The events the merge holds and has not given yet are mapped again
 * from their raw clock values (tr_clock_remap()). Time never goes back:
 * at a change the host's floor becomes the latest time the merge gave (of
 * any host: the merge's order holds), and no later time of the host is
 * put below it (a host set back stands still until its new time passes
 * the floor).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe-internal.h"

void tr_clock_adopt(struct trawl_reader *r, struct trawl_reader_trace *t)
{
	if (!r->has_clock || t->dec.fix || t->lclock)
		return;	/* a stored correction of this host stays */
	t->lx = trawl_sync_xform_identity();
	t->lclock = true;
	t->lfloor = INT64_MIN;
}

/* Does the tap want class ci? 2 yes, 1 no, -ENOMEM. */
static int tap_wants(struct trawl_reader *r, uint32_t ci, const struct trawl_ctf_event_class *c)
{
	if (ci >= r->nctap) {
		size_t n = (size_t)ci + 64;
		uint8_t *w = realloc(r->ctap, n);
		if (!w)
			return -ENOMEM;
		memset(w + r->nctap, 0, n - r->nctap);
		r->ctap = w;
		r->nctap = n;
	}
	if (!r->ctap[ci]) {
		const struct trawl_sink_ops *o = r->clock.tap;
		bool yes = !o->wants || !c || o->wants(r->clock.self, c);
		r->ctap[ci] = yes ? 2 : 1;
	}
	return r->ctap[ci];
}

int tr_clock_batch(struct trawl_reader *r, struct trawl_reader_stream *s, struct batch *b,
		   const struct trawl_ctf_event_class *const *cls)
{
	struct trawl_reader_trace *t = s->trace;
	const struct trawl_sink_ops *o = r->clock.tap;
	int rc;

	if (!t->lclock || !b->n)
		return 0;
	if (!r->clock_started) {
		r->clock_started = true;
		if (o->start && (rc = o->start(r->clock.self, r)))
			return rc;
	}
	size_t n = 0;
	const union trawl_ctf_value *v = b->vals;
	for (uint32_t i = 0; cls && o->events && i < b->n; v += b->rec[i].nv, i++) {
		const struct brec *x = &b->rec[i];
		int w = tap_wants(r, x->cls, cls[x->cls]);
		if (w < 0)
			return w;
		if (w != 2)
			continue;
		if (n == r->ntapev) {
			size_t nn = n ? 2 * n : 64;
			struct trawl_event *ne = realloc(r->tapev, nn * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			r->tapev = ne;
			r->ntapev = nn;
		}
		r->tapev[n++] = (struct trawl_event){
			.ts = x->ts,
			.cycles = b->ghz ? (uint64_t)x->ts - b->base : b->cyc[i],
			.cls = cls[x->cls], .stream = s, .values = v, .nvalues = x->nv,
			.cpu = b->onecpu ? b->cpu0 : b->cpu[i],
		};
	}
	return n ? o->events(r->clock.self, r->tapev, n) : 0;
}

/* A host time as the merge takes it: corrected, not below the floor. */
static inline int64_t taken(const struct trawl_reader_trace *t, int64_t ts)
{
	if (t->lsynced)
		ts = trawl_sync_xform_apply(&t->lx, ts);
	return ts < t->lfloor ? t->lfloor : ts;
}

void tr_clock_take(struct trawl_reader_stream *s, struct batch *b)
{
	const struct trawl_reader_trace *t = s->trace;

	if (!t->lclock || !b->n || !t->lsynced)
		return;	/* (no correction yet, nor a floor: its times are its clock's) */
	/* the raw clock values kept, the times to be mapped (as batch_split()) */
	if (b->ghz) {
		for (uint32_t i = 0; i < b->n; i++)
			b->cyc[i] = (uint64_t)b->rec[i].ts - b->base;
		b->ghz = false;
	}
	if (t->lsynced || t->lfloor != INT64_MIN)
		for (uint32_t i = 0; i < b->n; i++)
			b->rec[i].ts = taken(t, b->rec[i].ts);
}

void tr_clock_remap(struct trawl_reader_stream *s, struct batch *b, uint32_t from)
{
	const struct trawl_reader_trace *t = s->trace;

	if (!t->lclock || from >= b->n)
		return;
	if (b->ghz) {	/* taken before any correction: its times are its clock's */
		for (uint32_t i = 0; i < b->n; i++)
			b->cyc[i] = (uint64_t)b->rec[i].ts - b->base;
		b->ghz = false;
	}
	for (uint32_t i = from; i < b->n; i++)
		b->rec[i].ts = taken(t, ctf_to_ns(&s->cs, b->cyc[i]));
}

int64_t tr_clock_hold(struct trawl_reader_stream *s, int64_t hold)
{
	const struct trawl_reader_trace *t = s->trace;

	if (!t->lclock || hold == INT64_MIN)
		return hold;
	return taken(t, hold);
}

int tr_clock_refresh(struct trawl_reader *r, int64_t front, int last)
{
	if (!r->has_clock || !r->clock_started)
		return 0;
	int rc = r->clock.refresh ? r->clock.refresh(r->clock.self, last) : 1;
	if (rc <= 0)
		return rc;
	for (size_t i = 0; i < r->ntraces; i++) {
		struct trawl_reader_trace *t = r->traces[i];
		struct trawl_sync_xform x;
		if (!t->lclock)
			continue;
		if ((rc = r->clock.get(r->clock.self, t->hostname, &x)) < 0)
			return rc;
		if (!rc || x.slope <= 0 || (t->lsynced && !memcmp(&x, &t->lx, sizeof(x))))
			continue;
		/* what the merge gave so far: no time of the host below it */
		if (front > t->lfloor)
			t->lfloor = front;
		t->lx = x;
		t->lsynced = true;
		t->lchanged = true;

	}
	return 1;
}

void tr_clock_release(struct trawl_reader *r)
{
	free(r->ctap);
	free(r->tapev);
	r->ctap = NULL;
	r->tapev = NULL;
	r->nctap = r->ntapev = 0;
}
