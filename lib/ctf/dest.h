/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/dest.h - a second destination of a CTF writer's trace (the
 * writer's own files are the first): an ops table the writer calls as it
 * writes, implemented elsewhere (lib/net/relay-out.c: a trawl relay), so
 * that the writer knows nothing of where the trace goes.
 *
 * What the writer hands a destination, in this order: open once (at
 * trawl_ctf_writer_new); the metadata in chunks, each appended to the
 * previous ones (the first has the header, trace, env and clock blocks;
 * later ones only new stream and event classes), before anything that
 * needs them; each stream once, before its first packet or beacon; then
 * packets (with their index entry) and beacons of announced streams;
 * close once (at trawl_ctf_writer_close), after everything; free last.
 * Calls come from the threads that call the writer: when several write
 * streams of one writer at once, the ops are called at once too (the
 * relay's keeps messages whole only through its queue, made when the
 * writer has an io_queue).
 *
 * Every op but free returns 0 or -errno. The first error loses the
 * destination: a writer with a local copy frees it and goes on
 * (trawl_ctf_writer_relay_error() tells), one without keeps the error.
 */
#ifndef TRAWL_CTF_DEST_H
#define TRAWL_CTF_DEST_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "ctf/packet.h"		/* struct ctf_index */

/* The trace a destination receives, as the writer knows it at open. */
struct ctf_dest_trace {
	const uint8_t *uuid;		/* 16 bytes */
	const char *hostname;
	const char *domain;		/* "kernel", "ust" */
	/* The writer's io_queue option: 0, or the budget of a write queue of
	 * the destination's own (a slow destination then stalls the writer
	 * only once it is full). */
	size_t io_queue;
};

struct trawl_ctf_dest;

struct ctf_dest_ops {
	/* The trace begins. Refused or unreachable: -errno with the reason
	 * in err, and the writer fails (nothing is left on the disk). */
	int (*open)(struct trawl_ctf_dest *d, const struct ctf_dest_trace *t, char *err,
		    size_t errlen);
	/* TSDL text to append to the trace's metadata. */
	int (*metadata)(struct trawl_ctf_dest *d, const char *text, size_t len);
	/* A stream: the writer's handle (0, 1, ...), its CPU, its stream
	 * class, its file name. */
	int (*stream)(struct trawl_ctf_dest *d, uint32_t handle, uint32_t cpu, uint64_t class_id,
		      const char *name);
	/* A stream's next packet (size bytes) and its index entry. */
	int (*packet)(struct trawl_ctf_dest *d, uint32_t handle, const struct ctf_index *ix,
		      const void *pkt, size_t size);
	/* No event of the stream before ts is still to come. */
	int (*beacon)(struct trawl_ctf_dest *d, uint32_t handle, uint64_t ts);
	/* The trace is complete: returns once the destination has it all. */
	int (*close)(struct trawl_ctf_dest *d);
	/* Frees d (whatever was or was not called before). */
	void (*free)(struct trawl_ctf_dest *d);
	/* Optional: why the last op failed, in words ("" or NULL: no reason
	 * known); owned by d. */
	const char *(*why)(struct trawl_ctf_dest *d);
	/* Optional: until when (CLOCK_MONOTONIC ms) a live viewer waits on
	 * the trace, as the destination was told (a relay's DEMAND); 0: none
	 * known. Called from the writer's thread. */
	int64_t (*demand)(struct trawl_ctf_dest *d);
	/* Optional: the events (ix->events of the packets given) the
	 * destination confirmed it stored, in *events: 0 when exact,
	 * -ENODATA when it cannot tell (it was cut off and not told where:
	 * then *events is what it knows stored, at least). Called before
	 * free, whatever came before. */
	int (*stored)(struct trawl_ctf_dest *d, uint64_t *events);
	/* Optional: every stream with an event before ts is announced (a
	 * writer whose streams come as threads do; a relay's HORIZON); later:
	 * it may go out with the next message instead of at once. 0 when the
	 * destination takes none. */
	int (*horizon)(struct trawl_ctf_dest *d, uint64_t ts, int later);
	/* Optional: whether the destination asked for a newer horizon since
	 * the last call (a relay's viewer waits past it). */
	bool (*horizon_asked)(struct trawl_ctf_dest *d);
};

/* A destination: implementations embed it first in their own struct. */
struct trawl_ctf_dest {
	const struct ctf_dest_ops *ops;
};

#endif
