/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/ctf-internal.h - what lib/ctf shares with the rest of the
 * library and its tests beyond trawl/ctf.h: unpacking packetized metadata,
 * metadata printed in chunks (live streaming), the writer's live hint.
 */
#ifndef TRAWL_CTF_INTERNAL_H
#define TRAWL_CTF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"
#include "trawl/ctf.h"

/*
 * An event written in place (what trawl_ctf_wstream_event() does, without
 * the copy of a payload made elsewhere): its header written into s's
 * packet, room for up to max bytes of payload after it (the packet closed
 * first when it has not that room). Returns where the payload goes, or NULL
 * with *err: -EINVAL, -E2BIG (max bytes do not fit an empty packet), a
 * stream's error. tr_ctf_wstream_commit() then ends the event at end (the
 * payload's end, at most max bytes after its start), ts the reserve's;
 * without it nothing was written. Nothing else may be written to s between
 * the two.
 */
TRAWL_HIDDEN uint8_t *tr_ctf_wstream_reserve(struct trawl_ctf_wstream *s,
					     const struct trawl_ctf_event_class *ec,
					     uint64_t ts, size_t max, int *err);
TRAWL_HIDDEN void tr_ctf_wstream_commit(struct trawl_ctf_wstream *s, uint64_t ts,
				       const uint8_t *end);

/*
 * slow_ns > 0: the files of w's streams created from now on written with
 * O_DIRECT (when the filesystem takes it, the writer has no I/O queue and
 * no destination, and packets are a multiple of 4 KiB): a full packet goes
 * from its buffer to the device, not copied into the page cache. A stream
 * goes back to the page cache for good after a write direct I/O cannot
 * take, or one that took longer than slow_ns (a slow or busy device, whose
 * stalls the page cache absorbs); the writer's user may change slow_ns at
 * any time, from any thread (the kernel recorder: as long as its buffers
 * take to fill a quarter, docs/kernel.md). 0: the page cache.
 */
TRAWL_HIDDEN void tr_ctf_writer_direct(struct trawl_ctf_writer *w, uint64_t slow_ns);

/* ---- CTF metadata (lib/ctf/metadata.c) */
/* Packetized metadata in memory (size bytes, packets with magic 0x75D11D57
 * in either byte order) -> malloc'd NUL-terminated TSDL text; name is used
 * in error messages. NULL + errno on error. */
/* trawl_ctf_wstream_packet() of a packet of nev events (UINT64_MAX: not
 * known), for the writer's count of what its relay did not store
 * (trawl_ctf_writer_relay_discarded). */
TRAWL_HIDDEN int tr_ctf_wstream_packet_n(struct trawl_ctf_wstream *s, const void *pkt,
					 size_t size, uint64_t nev);
TRAWL_HIDDEN char *tr_ctf_metadata_unpack(const uint8_t *buf, size_t size, const char *name,
				       size_t *len, char *err, size_t errlen);

/*
 * Metadata in chunks (lib/ctf/metadata-print.c), for live streaming: a mark
 * remembers what was printed; tr_metadata_print_new() prints what the model
 * declared since (the header, trace, env and clocks the first time, then
 * new stream classes, then new event classes), as TSDL that appended to the
 * earlier chunks gives a valid whole. 0, -ENOMEM or -EIO.
 */
struct metadata_mark {
	bool header;
	size_t nstreams;
	size_t *nevents;		/* per stream class */
	size_t cap;
};
TRAWL_HIDDEN int tr_metadata_print_new(const struct trawl_ctf_trace *t, FILE *out,
				    struct metadata_mark *m);
/* Nothing new to print? */
/* Until when (CLOCK_MONOTONIC ms) w's destination was told a live viewer
 * waits on the trace (a relay's DEMAND, docs/relay.md "Live latency");
 * 0: never, or no destination. */
TRAWL_HIDDEN int64_t tr_ctf_writer_demand(const struct trawl_ctf_writer *w);
/* Every stream of w with an event before ts is announced (created): its
 * destination may let live viewers see the other traces of the session up
 * to ts (a relay's HORIZON, docs/relay.md "Streams that join"). Sent only
 * when ts moved; later: it may wait to go out with the next message (a
 * tick's, that follows). 0 or -errno (the destination lost, as for a
 * packet). */
TRAWL_HIDDEN int tr_ctf_writer_horizon(struct trawl_ctf_writer *w, uint64_t ts, bool later);
/* Whether w's destination asked for a newer horizon since the last call. */
TRAWL_HIDDEN bool tr_ctf_writer_horizon_asked(struct trawl_ctf_writer *w);
TRAWL_HIDDEN bool tr_metadata_mark_current(const struct trawl_ctf_trace *t,
					const struct metadata_mark *m);
TRAWL_HIDDEN void tr_metadata_mark_release(struct metadata_mark *m);

#endif
