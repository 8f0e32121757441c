/* SPDX-License-Identifier: MIT */
/*
 * lib/state/state-internal.h - the state system's insides (docs/state.md).
 *
 * A host's state is the kernel model's tables (lib/kstate/kstate.h: plain
 * records in flat arrays, strings are ids into the state's string table),
 * so that a copy of a state (the window's base, a checkpoint, a view) is
 * a few memcpy calls, and one function, tr_state_apply(), moves any of
 * them forward by one change: the live state, the window's base when the
 * window slides, a view being brought to its time, a checkpoint being
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

/* The changes of a window: a ring. */
struct ring {
	struct chg *c;
	size_t head, n, cap;		/* cap: a power of two */
};

struct ckpt {
	int64_t ts;			/* holds every change before ts */
	struct tables *t;		/* by host */
	size_t nhosts;
};

struct host {
	char *name;
	struct tables cur, base;	/* now, and the window's start */
	struct ring log;		/* changes after base, up to cur */
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
TRAWL_HIDDEN int tr_state_checkpoint(struct trawl_state *s, int64_t ts);
TRAWL_HIDDEN void tr_state_ingest_free(struct trawl_state *s);
/* The view frees s with itself (a replay's state, whose strings it shows). */
TRAWL_HIDDEN void tr_state_view_own(struct trawl_state_view *v, struct trawl_state *s);

#endif
