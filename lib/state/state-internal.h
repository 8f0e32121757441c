/* SPDX-License-Identifier: MIT */
/*
 * lib/state/state-internal.h - the state system's insides (docs/state.md).
 *
 * Everything a host's state is made of is plain records in flat arrays
 * (strings are ids into the state's string table), so that a copy of a
 * state (a snapshot of the window, a checkpoint, a view) is a few memcpy
 * calls, and one function, tr_state_apply(), moves any of them forward by
 * one change: the live state, a view being brought to its time from the
 * window's nearest snapshot, a checkpoint being replayed.
 */
#ifndef TRAWL_STATE_INTERNAL_H
#define TRAWL_STATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "trawl/state.h"

/* A change, as held in a window (struct trawl_state_change, packed). */
struct chg {
	int64_t ts;
	int64_t a, b;
	uint32_t c;			/* a byte count (<= 2 GiB a call), sectors, a status */
	int32_t tid, tid2;
	uint32_t str, str2;
	int16_t cpu;
	uint8_t kind;
};				/* 48 bytes */

/* Strings: id 0 is "". */
struct strtab {
	char **s;
	size_t n, cap;
	uint32_t *slot;			/* hash -> id + 1; 0 empty */
	size_t nslot;
	size_t bytes;
};

/* An open-addressing table of fixed-size records, each starting with its
 * uint64_t key; linear probing, deletion by backward shift. */
struct tab {
	uint8_t *rec;
	uint8_t *used;
	size_t rsz, cap, n;		/* cap: a power of two, or 0 */
};

struct icpu {
	int32_t tid;			/* -1 unknown */
	uint8_t mode, saved_mode;	/* the mode an IRQ interrupted */
	bool seen;
	int64_t irq;
	int64_t since;
	uint32_t depth;			/* nested IRQ / softirq */
};

struct ithread {
	uint64_t key;			/* tid */
	int32_t tid, pid, ppid, cpu;
	uint32_t comm;
	uint8_t status;
	bool exited;
	uint32_t syscall;		/* pending system call name, 0 none */
	int64_t since, syscall_since, created;
	int64_t sc_fd, sc_arg;		/* the pending call's fd and count/flags */
	uint32_t sc_path;		/* its path argument, when a string */
	uint32_t io_inflight;
	struct chg origin;
};

struct ifd {
	uint64_t key;			/* pid << 32 | fd */
	int32_t pid, fd;
	uint32_t path;
	int64_t opened;
	uint64_t br, bw, nr, nw;
	struct chg origin;
};

struct irqst {
	uint64_t key;			/* dev << 40 ^ sector */
	uint64_t dev, sector;
	uint32_t nr;
	bool write;
	int32_t tid;
	int64_t inserted, issued;
};

/* One host's state at one time. */
struct tables {
	struct icpu *cpus;
	size_t ncpus;
	struct tab thr, fd, rq;
	int64_t ts;			/* of the last change applied */
	int64_t next_sweep;
	uint64_t gc_requests, gc_syscalls;
};

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

struct cinfo;
struct state_fields;

struct trawl_state {
	int64_t window, interval;
	struct strtab str;
	struct host *hosts;
	size_t nhosts;
	int64_t newest;
	uint64_t events;
	/* ingest */
	struct cinfo *ci;
	size_t nci;
	struct state_fields *f;
	const void *smap_key[64];
	uint32_t smap_host[64];
	struct {			/* names of threads seen lately -> their ids */
		uint64_t w[2];
		uint32_t len, id;	/* len + 1; 0: empty */
	} comm[256];
	/* offline */
	struct ckpt *ck;
	size_t nck, capck;
	int64_t next_ck, first_ts;
	int64_t replay_from;		/* a replay: events before it are skipped */
};

TRAWL_HIDDEN uint32_t tr_state_intern(struct strtab *st, const char *s, size_t len);
TRAWL_HIDDEN const char *tr_state_str(const struct strtab *st, uint32_t id);
TRAWL_HIDDEN int tr_state_strtab_copy(struct strtab *dst, const struct strtab *src);
TRAWL_HIDDEN void tr_state_strtab_release(struct strtab *st);

TRAWL_HIDDEN void *tr_tab_find(const struct tab *t, uint64_t key);
/* The record of key, created zeroed (key set) when absent; NULL: ENOMEM. */
TRAWL_HIDDEN void *tr_tab_get(struct tab *t, uint64_t key, bool *created);
TRAWL_HIDDEN void tr_tab_del(struct tab *t, uint64_t key);

TRAWL_HIDDEN int tr_tables_init(struct tables *t);
TRAWL_HIDDEN int tr_tables_copy(struct tables *dst, const struct tables *src);
TRAWL_HIDDEN void tr_tables_release(struct tables *t);
TRAWL_HIDDEN size_t tr_tables_bytes(const struct tables *t);
/* Moves t forward by one change: 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_state_apply(struct tables *t, const struct chg *c, int64_t window);

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

static inline uint64_t tr_fd_key(int64_t pid, int64_t fd)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)fd;
}

#endif
