/* SPDX-License-Identifier: MIT */
/*
 * test-state-window: the state system's window (docs/state.md, "The
 * window") answers as the full model does, on a real kernel trace.
 *
 * A hackbench run is recorded (`trawl record -k sched,syscalls --
 * hackbench`; without root, tracefs or hackbench, a simulated session
 * instead, said in the output). Then, at 13 times across the last
 * window of a state whose window is a third of the trace (so that it has
 * slid, its snapshots and runs of changes replaced):
 *  - every CPU, thread, fd and block request of trawl_state_at() equals,
 *    field by field, the state of a model that applied every event up to
 *    that time (a reader ending there; the same apply, the same sweep) and
 *    is read from its current tables, no window, no snapshot, no replay;
 *  - the changes of every entity of the window equal those that a state
 *    holding the whole trace gives for it, from the window's start on (at
 *    3 of the times: the window's start, middle and end);
 *  - the newest few of them (trawl_state_view_changes with a skip) are the
 *    tail of the whole list.
 * And the memory: a state holding the whole trace takes less than 16 bytes
 * a change held, snapshots included (a change was 48 bytes in a ring that
 * doubled); the snapshots of the window's segments (eight or nine of
 * them, more when full buffers end some early) take less than five copies
 * of the tables for nine segments (one whole, the others what changed).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state/state-internal.h"
#include "tap.h"
#include "trawl/pipe.h"
#include "trawl/state.h"

static char root[] = "/tmp/trawl-test-state-window-XXXXXX";

/* a sink that notes the first and last times */
struct range {
	int64_t lo, hi;
};

static int range_events(void *self, const struct trawl_event *ev, size_t n)
{
	struct range *r = self;

	for (size_t i = 0; i < n; i++) {
		if (ev[i].ts < r->lo)
			r->lo = ev[i].ts;
		if (ev[i].ts > r->hi)
			r->hi = ev[i].ts;
	}
	return 0;
}

static const struct trawl_sink_ops range_ops = {
	.sz = sizeof(range_ops), .name = "range", .events = range_events,
};

/* s fed with the trace up to end (0: all); the range too when asked */
static struct trawl_state *feed(const char *dir, int64_t window, int64_t end, struct range *rg)
{
	char err[256];
	const char *p[] = { dir };
	struct trawl_state_opts so = { .sz = sizeof(so), .window_ns = window };
	struct trawl_reader_opts ro = { .sz = sizeof(ro), .end = end, .threads = 1 };
	struct trawl_state *s = trawl_state_new(&so);
	struct trawl_reader *r = trawl_reader_new(p, 1, &ro, err, sizeof(err));

	if (!s || !r) {
		printf("# %s\n", r ? "no state" : err);
		trawl_reader_free(r);
		trawl_state_free(s);
		return NULL;
	}
	struct trawl_sink sinks[2] = { trawl_state_sink(s), { &range_ops, rg } };
	int rc = trawl_pipe_run(r, sinks, rg ? 2 : 1, NULL);
	trawl_reader_free(r);
	if (rc) {
		printf("# run: %d\n", rc);
		trawl_state_free(s);
		return NULL;
	}
	return s;
}

static bool streq(const char *a, const char *b)
{
	return !strcmp(a ? a : "(null)", b ? b : "(null)");
}

/* Every entity of a equals b's; the first difference said. */
static bool same_state(const struct trawl_state_view *a, const struct trawl_state_view *b)
{
	const struct trawl_state_cpu *c, *d;
	const struct trawl_state_thread *t, *u;
	const struct trawl_state_fd *f, *g;
	const struct trawl_state_request *q, *r;
	size_t i;

	for (i = 0; (c = trawl_state_view_cpu(a, i)); i++) {
		d = trawl_state_view_cpu(b, i);
		if (!d || c->cpu != d->cpu || c->tid != d->tid || c->mode != d->mode ||
		    c->irq != d->irq || c->since != d->since) {
			printf("# cpu %u differs\n", c->cpu);
			return false;
		}
	}
	if (trawl_state_view_cpu(b, i)) {
		printf("# more cpus in the model\n");
		return false;
	}
	for (i = 0; (t = trawl_state_view_thread(a, i)); i++) {
		u = trawl_state_view_thread(b, i);
		if (!u || t->tid != u->tid || t->pid != u->pid || t->ppid != u->ppid ||
		    !streq(t->comm, u->comm) || t->status != u->status || t->since != u->since ||
		    t->cpu != u->cpu || !streq(t->syscall, u->syscall) ||
		    t->syscall_since != u->syscall_since || t->io_inflight != u->io_inflight ||
		    t->blocked_io != u->blocked_io || t->created != u->created) {
			printf("# thread %lld differs\n", (long long)t->tid);
			return false;
		}
	}
	if (trawl_state_view_thread(b, i)) {
		printf("# more threads in the model\n");
		return false;
	}
	for (i = 0; (f = trawl_state_view_fd(a, i)); i++) {
		g = trawl_state_view_fd(b, i);
		if (!g || f->pid != g->pid || f->fd != g->fd || !streq(f->path, g->path) ||
		    f->opened != g->opened || f->bytes_read != g->bytes_read ||
		    f->bytes_written != g->bytes_written || f->reads != g->reads ||
		    f->writes != g->writes) {
			printf("# fd %lld/%lld differs\n", (long long)f->pid, (long long)f->fd);
			return false;
		}
	}
	if (trawl_state_view_fd(b, i)) {
		printf("# more fds in the model\n");
		return false;
	}
	for (i = 0; (q = trawl_state_view_request(a, i)); i++) {
		r = trawl_state_view_request(b, i);
		if (!r || q->dev != r->dev || q->sector != r->sector || q->nr_sector != r->nr_sector ||
		    q->write != r->write || q->tid != r->tid || q->inserted != r->inserted ||
		    q->issued != r->issued) {
			printf("# request %llu differs\n", (unsigned long long)q->sector);
			return false;
		}
	}
	return !trawl_state_view_request(b, i);
}

static bool same_change(const struct trawl_state_change *x, const struct trawl_state_change *y)
{
	return x->ts == y->ts && x->kind == y->kind && x->cpu == y->cpu && x->tid == y->tid &&
	       x->tid2 == y->tid2 && x->a == y->a && x->b == y->b && x->c == y->c &&
	       streq(x->str, y->str) && streq(x->str2, y->str2);
}

/* The entity's changes after start in a and in b are the same; and the
 * newest few through a skip are the tail of a's. */
static bool same_changes(const struct trawl_state_view *a, const struct trawl_state_view *b,
			 enum trawl_state_entity e, int64_t x, int64_t y, int64_t start)
{
	size_t na = trawl_state_view_changes(a, e, x, y, 0, NULL, 0);
	size_t nb = trawl_state_view_changes(b, e, x, y, 0, NULL, 0);
	struct trawl_state_change *ca = calloc(na + 1, sizeof(*ca));
	struct trawl_state_change *cb = calloc(nb + 1, sizeof(*cb));
	struct trawl_state_change tail[3];
	bool same = ca && cb;
	size_t i = 0, j = 0;

	if (same) {
		trawl_state_view_changes(a, e, x, y, 0, ca, na);
		trawl_state_view_changes(b, e, x, y, 0, cb, nb);
		while (i < na && ca[i].ts <= start)
			i++;
		while (j < nb && cb[j].ts <= start)
			j++;
		same = na - i == nb - j;
		for (; same && i < na; i++, j++)
			same = same_change(&ca[i], &cb[j]);
		if (!same)
			printf("# entity %d %lld/%lld: %zu and %zu changes differ\n", (int)e,
			       (long long)x, (long long)y, na, nb);
	}
	if (same && na >= 3) {
		same = trawl_state_view_changes(a, e, x, y, na - 3, tail, 3) == na;
		for (i = 0; same && i < 3; i++)
			same = same_change(&tail[i], &ca[na - 3 + i]);
		if (!same)
			printf("# entity %d %lld: the newest three through a skip differ\n", (int)e,
			       (long long)x);
	}
	free(ca);
	free(cb);
	return same;
}

/* tracefs mounted somewhere (any mount in /proc/mounts: libtracefs, which
 * the recorder uses, takes the first) */
static bool have_tracefs(void)
{
	FILE *f = fopen("/proc/mounts", "re");
	char dev[256], at[512], type[64], path[600];
	bool yes = false;

	while (f && !yes && fscanf(f, "%255s %511s %63s %*[^\n]", dev, at, type) == 3) {
		/* tracefs, or an old kernel's debugfs with tracing in it */
		bool deb = !strcmp(type, "debugfs");
		snprintf(path, sizeof(path), "%s%s/trace", at, deb ? "/tracing" : "");
		yes = (deb || !strcmp(type, "tracefs")) && !access(path, F_OK);
	}
	if (f)
		fclose(f);
	return yes;
}

static bool recorded;

static int record(const char *dir, char *what, size_t n)
{
	const char *trawl = getenv("TRAWL");
	char cmd[1024];

	if (!trawl)
		return -1;
	if (geteuid() == 0 && have_tracefs() && !system("command -v hackbench > /dev/null 2>&1")) {
		recorded = true;
		snprintf(what, n, "a recorded hackbench run");
		snprintf(cmd, sizeof(cmd), "'%s' record -q -o '%s' -k sched,syscalls -- "
			 "hackbench -p -g 1 -l 100 > /dev/null 2>&1", trawl, dir);
	} else {
		snprintf(what, n, "a simulated session (no root, tracefs or hackbench to record)");
		snprintf(cmd, sizeof(cmd), "'%s' simulate -q -o '%s' -n 1 -c 2 -e 100000 "
			 "> /dev/null 2>&1", trawl, dir);
	}
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	char dir[300], what[128];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/t", root);
	if (!ok(record(dir, what, sizeof(what)) == 0, "a trace: %s", what)) {
		tap_rm_tree(root);
		return done_testing();
	}
	struct range rg = { INT64_MAX, INT64_MIN };
	struct trawl_state *all = feed(dir, 3600 * 1000000000LL, 0, &rg);
	if (!ok(all && trawl_state_nhosts(all) >= 1 && rg.hi > rg.lo, "the whole trace taken in")) {
		trawl_state_free(all);
		tap_rm_tree(root);
		return done_testing();
	}
	const char *host = trawl_state_host(all, 0);
	int64_t window = (rg.hi - rg.lo) / 3;
	struct trawl_state *win = feed(dir, window, 0, NULL);
	struct trawl_state_stats st;

	trawl_state_stats(all, &st);
	ok(st.changes > 10000 && st.bytes < 16 * st.changes,
	   "the whole trace held in %llu bytes for %llu changes (%.1f a change)",
	   (unsigned long long)st.bytes, (unsigned long long)st.changes,
	   st.changes ? (double)st.bytes / (double)st.changes : 0.0);
	int64_t start = win ? trawl_state_window_start(win, host) : INT64_MIN;
	if (!ok(win && start > rg.lo + window && start <= rg.hi - window,
		"a window of %.3f s has slid: it starts %.3f s into the trace", window / 1e9,
		(start - rg.lo) / 1e9)) {
		trawl_state_free(win);
		trawl_state_free(all);
		tap_rm_tree(root);
		return done_testing();
	}
	/* the snapshots of a window: a whole one, then what changed */
	const struct host *h = &win->hosts[0];
	size_t snaps = 0, whole = tr_tables_bytes(&h->cur), nwhole = 0, maxdelta = 0;
	for (size_t i = 0; i < h->nseg; i++) {
		size_t b = tr_tables_bytes(&h->seg[i]->snap);
		snaps += b;
		if (!h->seg[i]->delta) {
			nwhole++;
			whole = b > whole ? b : whole;	/* the tables at their largest */
		} else if (b > maxdelta) {
			maxdelta = b;
		}
	}
	/* a segment also ends when its buffer is full (a busy machine records
	 * more in the same time): the cost is per segment, five copies of the
	 * tables over nine. A simulated session's threads all change between
	 * two snapshots: each is then whole (a difference is kept only when
	 * it is less than half the tables), at most a copy per segment. */
	size_t per = h->nseg > 9 ? h->nseg : 9;
	size_t allowed = recorded ? 5 * whole * per / 9 : whole * h->nseg;
	ok(h->nseg >= 8 && snaps <= allowed && maxdelta * 2 <= whole,
	   "%zu segments in the window (%zu whole), their snapshots %zu bytes (the tables at most: "
	   "%zu; allowed %zu%s), the largest difference %zu", h->nseg, nwhole, snaps, whole,
	   allowed, recorded ? "" : ", a simulated session", maxdelta);
	int states = 0, lists = 0, nl = 0, entities = 0, n = 13;
	for (int k = 0; k < n; k++) {
		int64_t t = start + (rg.hi - start) / (n - 1) * k;
		if (k == n - 1)
			t = rg.hi;
		struct trawl_state *full = feed(dir, window, t, NULL);
		if (full)
			full->window = -1;	/* its views: copies of its current tables */
		struct trawl_state_view *a = trawl_state_at(win, host, t);
		struct trawl_state_view *b = full ? trawl_state_at(full, host, t) : NULL;
		struct trawl_state_view *c = trawl_state_at(all, host, t);
		if (!a || !b || !c) {
			printf("# at %lld: no view (%s)\n", (long long)t, strerror(errno));
		} else {
			states += same_state(a, b);
		}
		if (a && b && c && k % 6 == 0) {
			/* the changes at three of the times: the start, the middle, the end */
			bool same = true;
			const struct trawl_state_cpu *cp;
			const struct trawl_state_thread *th;
			const struct trawl_state_fd *f;
			for (size_t i = 0; same && (cp = trawl_state_view_cpu(a, i)); i++, entities++)
				same = same_changes(a, c, TRAWL_STATE_ENTITY_CPU, cp->cpu, 0, start);
			for (size_t i = 0; same && (th = trawl_state_view_thread(a, i)); i++, entities++)
				same = same_changes(a, c, TRAWL_STATE_ENTITY_THREAD, th->tid, 0, start);
			for (size_t i = 0; same && (f = trawl_state_view_fd(a, i)); i++, entities++)
				same = same_changes(a, c, TRAWL_STATE_ENTITY_FD, f->pid, f->fd, start);
			lists += same;
			nl++;
		}
		trawl_state_view_free(a);
		trawl_state_view_free(b);
		trawl_state_view_free(c);
		trawl_state_free(full);
	}
	is_int(states, n, "the window's state equals the full model's at %d times", n);
	ok(nl == 3 && lists == nl, "every entity's changes equal the whole trace's, at %d of 3 times "
	   "(%d entities)", lists, entities);
	trawl_state_free(win);
	trawl_state_free(all);
	tap_rm_tree(root);
	return done_testing();
}
