/* SPDX-License-Identifier: MIT */
/*
 * lib/view/view-internal.h - the timeline's model: rows of items kept at
 * levels of detail in deflated tiles (docs/view.md).
 */
#ifndef TRAWL_VIEW_INTERNAL_H
#define TRAWL_VIEW_INTERNAL_H

/* Characters of the tiles per element of the page (docs/view.md). */
#define TR_VIEW_CHUNK (1u << 20)

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trawl/view.h>

#include "internal.h"

/* What a row shows; the page draws each kind its own way. */
enum tr_vrow_kind {
	TR_VROW_HOST,		/* events per time bucket (the collapsed host) */
	TR_VROW_CPU,		/* what ran: value = string id of "comm tid" */
	TR_VROW_THREAD,		/* a thread's state: value = TR_VST_* | name << 3 */
	TR_VROW_MARKS,		/* user-space (or other) events: value = name */
	TR_VROW_SLICES,		/* begin/end pairs of one depth: value = name */
	TR_VROW_ARROWS,		/* messages host -> id: start = send, end = receive */
};

/* Thread states (the low 3 bits of a thread row's value). */
enum { TR_VST_RUNNING = 1, TR_VST_RUNNABLE, TR_VST_BLOCKED, TR_VST_SYSCALL };

/* A growing byte buffer. */
struct tr_vbuf {
	uint8_t *p;
	size_t len, cap;
};

/* One item at some level: [start, end] (ns from the view's base, on the
 * row's host clock), a value, how many raw items it stands for, and (at
 * the finest level of marks and slices) the event's fields. */
struct tr_vitem {
	int64_t s, e;
	uint32_t v, c;
	uint32_t det, detlen;	/* offset and length in the row's details */
};

struct tr_vtile {
	int64_t s, e;		/* first start, last end */
	uint32_t n;		/* items */
	uint64_t off;		/* in the view's tile bytes */
	uint32_t len;
	uint64_t boff, blen;	/* in the page's blob (escaped characters) */
};

struct tr_vlevel {
	int64_t width;		/* bucket width in ns; 0: the raw items */
	struct tr_vtile *tiles;
	size_t ntiles;
};

struct tr_vrow {
	enum tr_vrow_kind kind;
	uint32_t host;
	int64_t id;		/* cpu, tid, vtid, receiving host, ... */
	uint32_t depth;		/* slices */
	uint32_t label;		/* string id of its name */
	/* The raw items as they come, encoded (tr_vbuf_item()) */
	struct tr_vbuf raw;
	struct tr_vbuf det;	/* the fields' text of marks and slices */
	int64_t last_s;
	uint64_t n;
	int64_t dmin, dmax;	/* arrows: the least and most end - start */
	struct tr_vlevel *levels;
	size_t nlevels;
};

TRAWL_HIDDEN int tr_vbuf_put(struct tr_vbuf *b, const void *p, size_t n);
TRAWL_HIDDEN int tr_vbuf_uv(struct tr_vbuf *b, uint64_t v);
TRAWL_HIDDEN void tr_vbuf_release(struct tr_vbuf *b);

/*
 * ----- the scheduling rows (lib/view/sched.c)
 *
 * CPU rows and thread states, as intervals, read from the kernel model
 * (lib/kstate) after each change it took from sched_switch, sched_waking /
 * sched_wakeup, sched_process_exec and syscall_entry_* / syscall_exit_*.
 */
struct tr_vsched;
struct tables;
struct strtab;
struct chg;
/* emit(arg, host, kind, id, start, end, value): a finished interval of the
 * CPU row (kind TR_VROW_CPU, id = cpu) or thread row (TR_VROW_THREAD, id =
 * tid); value as the rows define it. name(arg, s) interns a string. */
struct tr_vsched_ops {
	int (*emit)(void *arg, uint32_t host, enum tr_vrow_kind kind, int64_t id,
		    int64_t s, int64_t e, uint32_t v);
	uint32_t (*name)(void *arg, const char *s);
	void *arg;
};
TRAWL_HIDDEN struct tr_vsched *tr_vsched_new(const struct tr_vsched_ops *ops);
TRAWL_HIDDEN void tr_vsched_free(struct tr_vsched *s);
/* Change c of host's model m (strings st) was applied: the intervals it
 * ended are emitted. 0 or the first -errno of emit(), -ENOMEM. */
TRAWL_HIDDEN int tr_vsched_change(struct tr_vsched *s, uint32_t host, const struct tables *m,
				  const struct strtab *st, const struct chg *c);
/* Closes every open interval of host at ts (the end of its trace). */
TRAWL_HIDDEN int tr_vsched_close(struct tr_vsched *s, uint32_t host, int64_t ts);

/* ----- the page (lib/view/page.c) and its assets (generated) */
struct trawl_view;
TRAWL_HIDDEN extern const unsigned char tr_view_asset_html[], tr_view_asset_js[],
	tr_view_asset_css[];
TRAWL_HIDDEN extern const unsigned int tr_view_asset_html_len, tr_view_asset_js_len,
	tr_view_asset_css_len;

/* The index (JSON: hosts, strings, rows, levels, tiles) the page reads. */
TRAWL_HIDDEN int tr_view_index(const struct trawl_view *v, bool served, char **out, size_t *len);
/* A tile's deflated bytes. */
TRAWL_HIDDEN int tr_view_tile(const struct trawl_view *v, uint64_t id, const uint8_t **p,
			      size_t *len);
/* Length of a tile once escaped in the page (page.c). */
TRAWL_HIDDEN size_t tr_view_blob_len(const uint8_t *p, size_t n);
/* The id of the k-th tile in the page's blob: coarsest levels first. */
TRAWL_HIDDEN uint64_t tr_view_blob_id(const struct trawl_view *v, uint64_t k);
/* Writes the page, its tiles embedded (fd) or fetched (served). */
TRAWL_HIDDEN int tr_view_page(const struct trawl_view *v, bool served, struct tr_vbuf *out);

#endif
