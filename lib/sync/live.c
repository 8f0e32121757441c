/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/live.c - clocks corrected while a live session flows: the
 * finder as a live reader's tap (it sees the sync events in each host's
 * own time, before the merge) and, when the reader asks and new sync
 * events came, each node's correction computed from what was found so
 * far, as `trawl sync --live` computes it (pairs, graph, reference kept
 * once chosen). See trawl/sync.h and docs/sync.md, "Live".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "trawl/pipe.h"
#include "trawl/sync.h"
#include "sync-internal.h"

struct lnode {
	char *host;
	char *ref;
	struct trawl_sync_live_node n;
	struct trawl_sync_live_node said;	/* as last given to changed() */
	char *said_ref;				/* its reference */
};

struct trawl_sync_live {
	struct trawl_sync_live_opts o;
	struct trawl_sync_points_opts po;
	struct trawl_sync_opts so;
	bool has_po, has_so;
	char *reference;		/* asked for, or the first one chosen */
	struct trawl_sync_finder *f;
	struct trawl_sink fs;		/* the finder's sink */
	struct trawl_reader_clock clock;
	struct lnode *nodes;
	size_t nnodes;
	bool dirty;			/* sync events since the last refresh */
	struct trawl_reader *r;		/* the reader tapped */
	size_t ntraces;			/* its traces at the last refresh */
	int64_t next_ns;		/* no refresh before (CLOCK_MONOTONIC) */
	int err;
	char msg[512];
};

static int fail(struct trawl_sync_live *l, int rc, const char *why)
{
	if (!l->err) {
		l->err = rc;
		snprintf(l->msg, sizeof(l->msg), "live sync: %.400s", why);
	}
	return rc;
}

/* ----------------------------------------------------------- the tap */

static int tap_start(void *self, struct trawl_reader *r)
{
	struct trawl_sync_live *l = self;
	int rc = l->fs.ops->start(l->fs.self, r);
	l->r = r;
	if (rc) {
		char m[300] = "";
		trawl_sync_points_free(trawl_sync_finder_points(l->f, m, sizeof(m)));
		return fail(l, rc, m[0] ? m : strerror(-rc));
	}
	return 0;
}

static int tap_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct trawl_sync_live *l = self;
	int rc = l->fs.ops->events(l->fs.self, ev, n);

	if (rc)
		return fail(l, rc, strerror(-rc));
	l->dirty = true;
	return 0;
}

static bool tap_wants(void *self, const struct trawl_ctf_event_class *cls)
{
	struct trawl_sync_live *l = self;
	int w = tr_sync_finder_wants(l->f, cls);
	if (w < 0) {
		fail(l, w, "out of memory");
		return true;	/* the finder says so again at the event */
	}
	return w;
}

static const struct trawl_sink_ops tap_ops = {
	.sz = sizeof(tap_ops),
	.name = "live-sync",
	.start = tap_start,
	.events = tap_events,
	.wants = tap_wants,
};

/* ------------------------------------------------------ the estimate */

static struct lnode *node_of(struct trawl_sync_live *l, const char *host)
{
	for (size_t i = 0; i < l->nnodes; i++)
		if (!strcmp(l->nodes[i].host, host))
			return &l->nodes[i];
	struct lnode *nn = realloc(l->nodes, (l->nnodes + 1) * sizeof(*nn));
	if (!nn)
		return NULL;
	l->nodes = nn;
	struct lnode *x = &nn[l->nnodes];
	*x = (struct lnode){ .host = strdup(host), .ref = strdup("") };
	if (!x->host || !x->ref) {
		free(x->host);
		free(x->ref);
		return NULL;
	}
	l->nnodes++;
	/* (the array moved: every node's strings are set again) */
	for (size_t i = 0; i < l->nnodes; i++) {
		nn[i].n.host = nn[i].host;
		nn[i].n.reference = nn[i].ref;
	}
	return x;
}

static int64_t sub_sat(int64_t a, int64_t b)
{
	__int128 d = (__int128)a - b;
	return d > INT64_MAX ? INT64_MAX : d < INT64_MIN ? INT64_MIN : (int64_t)d;
}

/* Has n moved from what was said (see trawl_sync_live_opts.changed)? */
static bool moved(const struct lnode *x)
{
	const struct trawl_sync_live_node *a = &x->said, *b = &x->n;
	if (!x->said_ref || a->quality != b->quality || strcmp(x->said_ref, x->ref))
		return true;
	if (b->quality == TRAWL_SYNC_ABSENT)
		return false;
	int64_t d = sub_sat(a->offset_ns, b->offset_ns), lim = b->bound_ns;
	if (d < 0)
		d = -d;
	if (lim == TRAWL_SYNC_UNBOUNDED || lim < 1000)
		lim = 1000;
	if (d > lim)
		return true;
	return a->bound_ns != b->bound_ns &&
	       (a->bound_ns == TRAWL_SYNC_UNBOUNDED || b->bound_ns == TRAWL_SYNC_UNBOUNDED ||
		b->bound_ns * 2 <= a->bound_ns || b->bound_ns >= 2 * a->bound_ns);
}

/* The nodes from the points so far. 1: a correction changed, 0, -errno. */
static int estimate(struct trawl_sync_live *l, struct trawl_sync_points *p)
{
	struct trawl_sync_pair *pairs = calloc(p->nlinks + 1, sizeof(*pairs));
	struct trawl_sync_graph *g = NULL;
	uint64_t messages = 0;
	int64_t *now = NULL;
	char err[300];
	int rc = -ENOMEM, changed = 0;
	long ref = -1;
	size_t npairs = 0;

	if (!pairs)
		goto out;
	for (size_t i = 0; i < p->nlinks; i++, npairs++) {
		rc = trawl_sync_link_compute(&p->links[i], 1, l->has_so ? &l->so : NULL, &pairs[i],
					     err, sizeof(err));
		if (rc) {
			fail(l, rc, err);
			goto out;
		}
		messages += p->links[i].n_ab + p->links[i].n_ba;
	}
	if (!(g = trawl_sync_graph_new(p->nhosts))) {
		rc = -errno;
		goto out;
	}
	for (size_t i = 0; i < p->nlinks; i++)
		if ((rc = trawl_sync_graph_set_pair(g, p->links[i].a, p->links[i].b, &pairs[i])))
			goto out;
	for (size_t i = 0; l->reference && i < p->nhosts; i++)
		if (!strcmp(p->hosts[i].name, l->reference))
			ref = (long)i;
	if (l->reference && ref < 0) {
		rc = 0;		/* the reference is not there yet */
		goto out;
	}
	if ((rc = trawl_sync_graph_solve(g, ref, err, sizeof(err))) < 0) {
		fail(l, rc, err);
		goto out;
	}
	/* the events mapped next are the newest: every link holds there,
	 * those off the paths too (trawl_sync_graph_settle()) */
	if (!(now = malloc(p->nhosts * sizeof(*now)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->nhosts; i++)
		now[i] = p->hosts[i].last_ts;
	if ((rc = trawl_sync_graph_settle(g, now, 1)) < 0)
		goto out;
	rc = 0;
	for (size_t i = 0; i < p->nhosts; i++) {
		struct trawl_sync_node nd;
		size_t gsize = 0;
		trawl_sync_graph_node(g, i, &nd);
		for (size_t j = 0; j < p->nhosts; j++) {
			struct trawl_sync_node y;
			trawl_sync_graph_node(g, j, &y);
			gsize += y.group == nd.group;
		}
		struct lnode *x = node_of(l, p->hosts[i].name);
		if (!x) {
			rc = -ENOMEM;
			goto out;
		}
		enum trawl_sync_quality q = nd.quality;
		bool is_ref = nd.hops == 0;
		if (is_ref && gsize == 1)
			q = TRAWL_SYNC_ABSENT;	/* alone: not synchronized */
		const char *rn = q == TRAWL_SYNC_ABSENT ? "" : p->hosts[nd.ref].name;
		if (strcmp(x->ref, rn)) {
			char *d = strdup(rn);
			if (!d) {
				rc = -ENOMEM;
				goto out;
			}
			free(x->ref);
			x->ref = d;
		}
		/* at its newest event (a live trace decodes in its own time) */
		int64_t at = p->hosts[i].last_ts != INT64_MIN ? p->hosts[i].last_ts : nd.to_ref.t0;
		struct trawl_sync_xform xf = q == TRAWL_SYNC_ABSENT ? trawl_sync_xform_identity()
								    : nd.to_ref;
		changed |= memcmp(&xf, &x->n.to_ref, sizeof(xf)) != 0;
		x->n = (struct trawl_sync_live_node){
			.host = x->host, .reference = x->ref, .quality = q, .to_ref = xf, .at = at,
			.offset_ns = sub_sat(at, trawl_sync_xform_apply(&xf, at)),
			.bound_ns = q == TRAWL_SYNC_ABSENT ? TRAWL_SYNC_UNBOUNDED
							   : trawl_sync_graph_bound(g, i, at),
			.drift_ppm = (1.0 / trawl_sync_xform_rate(&xf) - 1.0) * 1e6,
			.messages = messages, .is_ref = is_ref && q != TRAWL_SYNC_ABSENT,
		};
		/* the reference chosen for the first node put on one: kept */
		if (!l->reference && q != TRAWL_SYNC_ABSENT && !is_ref) {
			if (!(l->reference = strdup(p->hosts[nd.ref].name))) {
				rc = -ENOMEM;
				goto out;
			}
		}
	}
	for (size_t i = 0; l->o.changed && i < l->nnodes; i++)
		if (moved(&l->nodes[i])) {
			struct lnode *x = &l->nodes[i];
			/* alone in its session: nothing to say (said once a
			 * second node comes) */
			if (x->n.quality == TRAWL_SYNC_ABSENT && p->nhosts < 2)
				continue;
			char *d = strdup(x->ref);
			if (!d) {
				rc = -ENOMEM;
				goto out;
			}
			free(x->said_ref);
			x->said_ref = d;
			x->said = x->n;
			l->o.changed(l->o.arg, &x->n);
		}
	rc = changed;
out:
	for (size_t i = 0; i < npairs; i++)
		trawl_sync_pair_release(&pairs[i]);
	free(pairs);
	free(now);
	trawl_sync_graph_free(g);
	if (rc == -ENOMEM)
		fail(l, rc, "out of memory");
	return rc;
}

static int64_t clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int live_refresh(void *self, int last)
{
	struct trawl_sync_live *l = self;
	char err[300];

	if (l->err)
		return l->err;
	/* a trace that came is news too: a node that exchanges no message
	 * (nor any event, its packets flushed at its end) is said alone */
	size_t nt = l->r ? trawl_reader_ntraces(l->r) : 0;
	if (nt != l->ntraces)
		l->dirty = true;
	int64_t t0 = mono_ns();
	if (!l->dirty || (!last && t0 < l->next_ns))
		return 0;
	l->ntraces = nt;
	int64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	l->dirty = false;
	struct trawl_sync_points *p = trawl_sync_finder_snapshot(l->f, err, sizeof(err));
	if (!p)
		return fail(l, -(errno ? errno : EINVAL), err);
	int rc = p->nhosts ? estimate(l, p) : 0;
	trawl_sync_points_free(p);
	/* a refresh computes every message again: the next one waits 19
	 * times as long as this one took, so that refreshing takes at most
	 * 5 % of the reader's thread however long the session grows. Its
	 * CPU time, not the clock's: on a loaded machine a refresh whose
	 * thread waited for a CPU would put the next one off by seconds (a
	 * 5 s session corrected once, early, from its first messages) */
	int64_t took = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	l->next_ns = t0 + 20 * took;
	return rc;
}

/* the node's own mind (the pointers of a node may move at a refresh) */
static int live_get(void *self, const char *host, struct trawl_sync_xform *x)
{
	const struct trawl_sync_live *l = self;
	for (size_t i = 0; i < l->nnodes; i++)
		if (!strcmp(l->nodes[i].host, host)) {
			if (l->nodes[i].n.quality == TRAWL_SYNC_ABSENT)
				return 0;
			*x = l->nodes[i].n.to_ref;
			return 1;
		}
	return 0;
}

/* --------------------------------------------------------------- API */

struct trawl_sync_live *trawl_sync_live_new(const struct trawl_sync_live_opts *o, char *err,
					    size_t errlen)
{
	struct trawl_sync_live *l = calloc(1, sizeof(*l));

	if (!l) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	if (o) {
		size_t n = o->size < sizeof(l->o) ? o->size : sizeof(l->o);
		memcpy(&l->o, o, n);
	}
	if (l->o.points) {
		size_t n = l->o.points->size < sizeof(l->po) ? l->o.points->size : sizeof(l->po);
		memcpy(&l->po, l->o.points, n);
		l->po.size = sizeof(l->po);
		l->po.sinks = NULL;
		l->po.nsinks = 0;
		l->has_po = true;
	}
	if (l->o.sync) {
		size_t n = l->o.sync->size < sizeof(l->so) ? l->o.sync->size : sizeof(l->so);
		memcpy(&l->so, l->o.sync, n);
		l->so.size = sizeof(l->so);
		l->has_so = true;
	}
	l->o.points = NULL;
	l->o.sync = NULL;
	if (l->o.reference && !(l->reference = strdup(l->o.reference))) {
		free(l);
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	l->o.reference = NULL;
	if (!(l->f = trawl_sync_finder_new(l->has_po ? &l->po : NULL, err, errlen))) {
		free(l->reference);
		free(l);
		return NULL;
	}
	l->fs = trawl_sync_finder_sink(l->f);
	l->clock = (struct trawl_reader_clock){ .sz = sizeof(l->clock), .tap = &tap_ops,
						.refresh = live_refresh, .get = live_get,
						.self = l };
	return l;
}

void trawl_sync_live_free(struct trawl_sync_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nnodes; i++) {
		free(l->nodes[i].host);
		free(l->nodes[i].ref);
		free(l->nodes[i].said_ref);
	}
	free(l->nodes);
	free(l->reference);
	trawl_sync_finder_free(l->f);
	free(l);
}

const struct trawl_reader_clock *trawl_sync_live_clock(struct trawl_sync_live *l)
{
	return l ? &l->clock : NULL;
}

int trawl_sync_live_node(const struct trawl_sync_live *l, const char *host,
			 struct trawl_sync_live_node *out)
{
	for (size_t i = 0; l && i < l->nnodes; i++)
		if (!strcmp(l->nodes[i].host, host)) {
			*out = l->nodes[i].n;
			return 1;
		}
	return 0;
}

int trawl_sync_live_error(const struct trawl_sync_live *l, char *err, size_t errlen)
{
	if (l && l->err && err && errlen)
		snprintf(err, errlen, "%s", l->msg);
	return l ? l->err : 0;
}
