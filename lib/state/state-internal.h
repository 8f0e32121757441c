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

/*
 * Offline checkpoints (ckpt.c): a host's state every interval of trace
 * time or every so many events, each encoded into the state's one buffer
 * (ckbuf) as what differs from the host's previous checkpoint (its
 * records XORed with the previous version, zero runs left out; the keys
 * gone), every TR_CK_KEY-th whole: so that restoring one decodes at most
 * TR_CK_KEY of them, and an hour of trace costs what changed, not the
 * whole state each time. The same bytes are what a checkpoint file holds.
 */
#define TR_CK_KEY 16
/* Hosts a checkpoint file may name (a session's; a file naming more is corrupt). */
#define TR_CK_MAX_HOSTS 65536
struct ckpt {
	int64_t ts;			/* holds every change before ts */
	uint64_t off;			/* its bytes in ckbuf */
	uint32_t len;
	uint32_t key;			/* the whole one it is decoded from: index */
	uint64_t sum;			/* of its bytes (tr_state_ck_sum) */
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
	/* offline: its checkpoints (oldest first) and the state of the last */
	struct ckpt *ck;
	size_t nck, capck;
	struct tables ckshadow;
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
	bool nowin;			/* no window: only cur and the checkpoints */
	uint64_t ck_events, since_ck;	/* a checkpoint every ck_events events */
	int64_t last_taken;		/* the time of the last event taken */
	uint8_t *ckbuf;			/* every host's checkpoints, encoded */
	size_t cklen, ckcap;
	void *ckmap;			/* loaded: the file, mapped (ckbuf inside) */
	size_t ckmap_len;
	uint64_t nck;
	int64_t next_ck, first_ts;
	int64_t replay_from;		/* a replay: events before it are skipped */
	bool ck_loaded;			/* from a file: s read nothing itself */
};

TRAWL_HIDDEN struct host *tr_state_host_get(struct trawl_state *s, const char *name);
/* tr_state_push() of a state that keeps a window. */
TRAWL_HIDDEN int tr_state_window_push(struct trawl_state *s, struct host *h, const struct chg *c);
/* Takes a change into host h: applies it, holds it in the window (when
 * s keeps one), slides the window. 0 or -ENOMEM. */
static inline int tr_state_push(struct trawl_state *s, struct host *h, const struct chg *c)
{
	if (s->window < 0 || s->nowin)
		return tr_state_apply(&h->cur, c, s->window);
	return tr_state_window_push(s, h, c);
}
/* Lets go of h's window (its segments, unless a view holds them). */
TRAWL_HIDDEN void tr_state_window_release(struct host *h);
/* A checkpoint of every host at ts (before the change at ts). 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_state_checkpoint(struct trawl_state *s, int64_t ts);
/* out: the state of h's checkpoint i (a whole one and the differences
 * after it decoded); 0, -ENOMEM or -EBADMSG (bytes that are not one). */
TRAWL_HIDDEN int tr_state_ck_restore(const struct trawl_state *s, const struct host *h, size_t i,
				     struct tables *out);
TRAWL_HIDDEN void tr_state_ck_release(struct trawl_state *s);
TRAWL_HIDDEN size_t tr_state_ck_bytes(const struct trawl_state *s);
/* The checkpoint file (ckpt.c): its checksums (64-bit FNV-1a); the text
 * that identifies the traces under paths (*out: the caller frees); s's
 * checkpoints as the file's bytes (*out: the caller frees); and the
 * file's bytes (buf, len: all of it) taken into s (a new state: its window
 * set; ident NULL: not checked; sum false: the header's checksum not
 * checked, for the fuzz target; borrow: s's checkpoints point into buf,
 * which must outlive s, else they are copied): 0, -EBADMSG, -ESTALE
 * (another model, window or trace), -ENOMEM, the message in err. Each
 * checkpoint's own checksum is checked when it is restored. */
TRAWL_HIDDEN uint64_t tr_state_ck_sum(const uint8_t *b, size_t n);
TRAWL_HIDDEN int tr_state_identity(const char *const *paths, size_t npaths, char **out,
				   char *err, size_t errlen);
TRAWL_HIDDEN int tr_state_ck_format(const struct trawl_state *s, const char *ident,
				    uint8_t **out, size_t *len);
TRAWL_HIDDEN int tr_state_ck_parse(struct trawl_state *s, const uint8_t *buf, size_t len,
				   const char *ident, bool sum, bool borrow, char *err, size_t errlen);
TRAWL_HIDDEN void tr_state_ingest_free(struct trawl_state *s);
/* The view frees s with itself (a replay's state, whose strings it shows). */
TRAWL_HIDDEN void tr_state_view_own(struct trawl_state_view *v, struct trawl_state *s);
/*
 * The state of host at t replayed from s's latest checkpoint at or before
 * from (none: the start), the events to t read again: with the window
 * (the view has the history since from) or without (the state alone).
 * The view owns the replay's state. NULL + errno, message in err.
 */
TRAWL_HIDDEN struct trawl_state_view *tr_state_replay(const struct trawl_state *s,
						      const char *host, int64_t from, int64_t t,
						      bool window, const char *const *paths,
						      size_t npaths, const struct trawl_reader_opts *ro,
						      char *err, size_t errlen);
/* v's history to be replayed from s when asked (paths and ro copied):
 * 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_state_view_lazy(struct trawl_state_view *v, const struct trawl_state *s,
				    const char *const *paths, size_t npaths,
				    const struct trawl_reader_opts *ro);

#endif
