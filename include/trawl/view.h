/* SPDX-License-Identifier: MIT */
/*
 * trawl/view.h - the cluster timeline (`trawl view`): a sink that turns
 * merged events into rows (a host, its CPUs, its threads' states, its
 * user-space marks and slices) and messages between hosts, kept at several
 * levels of detail in deflated tiles, then written as one self-contained
 * HTML page, or served with its tiles on loopback. docs/view.md has the
 * design.
 *
 * It lives in its own archive, libtrawl-view.a (it links zlib); libtrawl
 * stays free of it.
 *
 *	struct trawl_view *v = trawl_view_new(&opts, err, sizeof(err));
 *	trawl_pipe_run(reader, (struct trawl_sink[]){ trawl_view_sink(v), ... }, n, &run);
 *	trawl_view_set_messages(v, points);	(optional: trawl_sync_finder's)
 *	trawl_view_set_sync(v, store);		(optional: sync.txt)
 *	trawl_view_write_html(v, fd, err, sizeof(err));
 *	trawl_view_free(v);
 *
 * Conventions: int returns are 0 or -errno, messages in (err, errlen);
 * pointer returns NULL with errno set; _free accepts NULL.
 */
#ifndef TRAWL_VIEW_H
#define TRAWL_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include <trawl/pipe.h>
#include <trawl/sync.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * The largest page `trawl view -o` writes (256 MiB); above it, serve it.
 * A browser keeps the whole file, the DOM text of the tiles and the
 * JavaScript string read from it in memory at once (three copies), and
 * V8 caps one string at 2^29 - 24 characters (512 MiB); at 8 bytes per
 * event this is about 30 M events.
 */
#define TRAWL_VIEW_MAX_HTML (256ull << 20)

struct trawl_view_opts {
	size_t sz;		/* sizeof(struct trawl_view_opts) */
	const char *title;	/* shown in the page; NULL: "trawl view" */
	/* Items per tile at the finest level (0: 4096). */
	unsigned tile_items;
	/* Bytes of an event's fields kept for the page (0: 96). */
	unsigned detail_bytes;
};

/* Statistics of a view, once trawl_view_build() has run. */
struct trawl_view_stats {
	uint64_t events;	/* events seen */
	uint64_t items;		/* spans, marks, slices at the finest level */
	uint64_t lod_items;	/* items of every coarser level stored */
	uint64_t messages;	/* arrows */
	uint64_t tiles;
	uint64_t tile_bytes;	/* deflated */
	size_t rows, hosts;
	uint64_t impossible;	/* events and arrows left out: 2^63 ns or more after
				 * the first event (a corrupt timestamp or clock offset) */
};

struct trawl_view;
/* NULL + errno (ENOMEM), message in err. */
struct trawl_view *trawl_view_new(const struct trawl_view_opts *o, char *err, size_t errlen);
/* The sink to run on a reader without clock corrections (raw times: the
 * page applies the corrections itself, to show both). */
struct trawl_sink trawl_view_sink(struct trawl_view *v);
/* Messages between hosts, drawn as arrows (copied). 0 or -ENOMEM. */
int trawl_view_set_messages(struct trawl_view *v, const struct trawl_sync_points *p);
/* The clock corrections and their factors (copied). 0 or -ENOMEM. */
int trawl_view_set_sync(struct trawl_view *v, const struct trawl_sync_store *s);
/* Builds the levels of detail and the tiles (called by the writers when
 * not yet done). 0 or -errno. */
int trawl_view_build(struct trawl_view *v, char *err, size_t errlen);
void trawl_view_stats(const struct trawl_view *v, struct trawl_view_stats *st);
/* Size in bytes of the self-contained page, after trawl_view_build(). */
uint64_t trawl_view_html_size(const struct trawl_view *v);
/* Writes the self-contained page to fd. 0 or -errno. */
int trawl_view_write_html(struct trawl_view *v, int fd, char *err, size_t errlen);

/*
 * Serves the page (with its tiles fetched one by one) over HTTP on
 * loopback (127.0.0.1:port; 0: any free port) until *stop is set (checked
 * at least every 200 ms). ready(arg, port) is called once listening.
 * 0 or -errno.
 */
int trawl_view_serve(struct trawl_view *v, unsigned port, const volatile int *stop,
		     void (*ready)(void *arg, unsigned port), void *arg,
		     char *err, size_t errlen);
void trawl_view_free(struct trawl_view *v);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
