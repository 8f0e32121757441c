/* SPDX-License-Identifier: MIT */
/*
 * lib/state/state-internal.h - the state system's insides (docs/state.md).
 *
 * A host's state is the kernel model's tables (lib/kstate/kstate.h: plain
 * records in flat arrays, strings are ids into the state's string table),
 * so that a copy of a state (a snapshot of the window, a checkpoint, a
 * view) is a few memcpy calls, and one function, tr_state_apply(), moves
 * any of them forward by one change: the live state, a view being brought
 * to its time from the window's nearest snapshot, a checkpoint being
 * replayed.
 */
#ifndef TRAWL_STATE_INTERNAL_H
#define TRAWL_STATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "kstate/kstate.h"
#include "trawl/state.h"

/*
 * The window (window.c): runs of changes, each after a snapshot of the
 * state before its first change, encoded a few bytes a change (varints,
 * fields the same as the previous change's left out). A segment's buffer
 * is mapped at its full size once and only appended to, so a view reads
 * the bytes it saw while the state takes in more; segments are counted
 * (the host's reference and each view's) and go with the last.
 */
struct seg {
	struct tables snap;		/* every change before the first; or (delta) */
	bool delta;			/* the records that differ from the previous */
	uint64_t *del;			/* segment's snapshot, and these keys gone: */
	size_t ndel[3];			/* threads', fds', requests' */
	int64_t first, max;		/* its first change's time, its latest */
	int64_t until;			/* the end of the eighth of a window it is in */
	uint8_t *buf;
	size_t len, cap, n;		/* bytes used, mapped; changes */
	unsigned refs;
};

#define TR_WCTX_CPUS 256
/* What an encoder or decoder remembers of the previous changes. */
struct wctx {
	int64_t ts, b;
	int32_t cpu;
	int32_t tid[TR_WCTX_CPUS];	/* by CPU: the thread it ran, -1 */
	uint32_t sc[TR_WCTX_CPUS];	/* by CPU: the system call it entered */
};

struct ckpt {
	int64_t ts;			/* holds every change before ts */
	struct tables *t;		/* by host */
	size_t nhosts;
};

struct host {
	char *name;
	struct tables cur;		/* now */
	struct seg **seg;		/* the window, oldest first; the last open */
	size_t nseg, capseg;
	struct wctx enc;		/* the open segment's, at its end */
	int64_t cut;			/* the newest change's time less the window */
	int64_t grid0;			/* a segment spans a window / 8 from here */
	struct tables shadow;		/* the open segment's snapshot, whole */
	bool shadow_ok;
	unsigned since_full;		/* segments since a whole snapshot */
	struct {			/* where the window begins in segment 0, */
		const struct seg *g;	/* found by the last query and kept */
		size_t i, off;		/* changes, bytes passed */
		int64_t start;
		struct wctx x;
	} wb;
};

struct trawl_state {
	int64_t window, interval;
	struct strtab str;
	struct host *hosts;
	size_t nhosts;
	int64_t newest;
	uint64_t events;
	/* ingest */
	struct tr_kin kin;		/* events to changes (lib/kstate) */
	const void *smap_key[64];
	uint32_t smap_host[64];
	/* offline */
	struct ckpt *ck;
	size_t nck, capck;
	int64_t next_ck, first_ts;
	int64_t replay_from;		/* a replay: events before it are skipped */
};

TRAWL_HIDDEN struct host *tr_state_host_get(struct trawl_state *s, const char *name);
/* Takes a change into host h: applies it, holds it in the window, slides
 * the window. 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_state_push(struct trawl_state *s, struct host *h, const struct chg *c);
/* Lets go of h's window (its segments, unless a view holds them). */
TRAWL_HIDDEN void tr_state_window_release(struct host *h);
TRAWL_HIDDEN int tr_state_checkpoint(struct trawl_state *s, int64_t ts);
TRAWL_HIDDEN void tr_state_ingest_free(struct trawl_state *s);
/* The view frees s with itself (a replay's state, whose strings it shows). */
TRAWL_HIDDEN void tr_state_view_own(struct trawl_state_view *v, struct trawl_state *s);

#endif
