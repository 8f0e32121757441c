/* SPDX-License-Identifier: MIT */
/*
 * lib/ring/ring.h - the shared-memory ring buffer of user-space tracing:
 * its layout (what an agent process maps), the producer's operations on it
 * (ring.c) and the consumer's (consumer.c: the agent drains a ring another
 * process produces into a CTF stream).
 *
 * One buffer = one memfd: a header page (struct ust_shm: configuration,
 * the producer's cache line, the consumer's cache line, one struct ust_sb
 * per sub-buffer), then N sub-buffers of S bytes (powers of two). Only
 * offsets and counters live in the shared memory, never pointers.
 *
 * Each sub-buffer is a complete CTF packet in the writer's layout (see
 * lib/ctf/writer.c): 84-byte packet header + context, events, zero padding.
 * The single producer (the thread that owns the buffer) fills it and, when
 * it switches to the next one, finalizes it (timestamp_end, content_size,
 * cumulative events_discarded) and publishes it by a release store of
 * `produced`; the consumer reads `produced` with acquire, writes the packet
 * with one write(2), then publishes `consumed` with release, which the
 * producer reads with acquire before reusing a sub-buffer (discard mode).
 *
 * Sequence numbers: packet k (k = 0, 1, ...) lives in sub-buffer k & (N-1);
 * produced = number of finalized packets; while `open`, packet `produced`
 * is being written at offset `pos`.
 */
#ifndef TRAWL_RING_H
#define TRAWL_RING_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "ctf/packet.h"	/* the packet layout, shared with the writer */

struct trawl_ctf_wstream;
#define UST_SHM_MAGIC 0x54524c55u	/* "ULRT" */
#define UST_SHM_VERSION 1
#define UST_CACHELINE 64

struct ust_sb {
	uint64_t gen;		/* overwrite mode: 2k+1 while packet k is written, 2k+2 done */
	uint64_t nev;		/* events in the packet (set at finalize) */
	uint64_t ev_before;	/* events committed in earlier packets */
	uint64_t pad;
};

struct ust_shm {
	/* configuration, written once by the creator */
	uint32_t magic, version;
	uint32_t subbuf_size, nsubbuf;
	uint32_t mode;			/* enum trawl_ust_mode */
	uint32_t header;		/* enum trawl_ust_header */
	uint32_t data_off;		/* offset of sub-buffer 0 from the start */
	uint32_t stream_id;
	uint64_t instance_id;
	uint8_t uuid[16];
	int32_t pid, tid;

	/* control: written by the consumer side */
	alignas(UST_CACHELINE) uint32_t active;	/* the producer may record */
	uint32_t exited;		/* the producer thread is gone (release) */
	/*
	 * Live sessions: every event of this buffer not committed yet will
	 * have a timestamp at or after quiet_ts (release; the application's
	 * live tick writes it when the thread is outside any event, see
	 * tr_ust_live_tick), so the agent may tell viewers so.
	 */
	uint64_t quiet_ts;
	/* packets opened (release, by the producer, after the packet's pos
	 * and last_ts): packet `produced` is open when opened == produced +
	 * 1. With pos and last_ts also stored with release, the live consumer
	 * reads a consistent (packet, pos, last_ts) without stopping the
	 * producer (tr_ust_cons_live). In this line, which had room, not the
	 * producer's: the layout stays version 1's (older peers read zeros
	 * and get no live parts); written once per packet. */
	uint64_t opened;

	/* producer line: written by the producer only (by the consumer only
	 * once the producer is quiescent or gone) */
	alignas(UST_CACHELINE) uint64_t pos;	/* in the open packet; release per commit */
	uint64_t produced;		/* finalized packets; release */
	uint64_t last_ts;		/* last event (or packet begin) timestamp */
	uint64_t nev;			/* events in the open packet */
	uint64_t recorded;		/* events committed, all packets */
	uint64_t discarded;		/* cumulative: full buffer, too big, nested */
	uint64_t overwritten;		/* overwrite mode: events in reused packets */
	uint32_t open;			/* a packet is open */

	/* consumer line */
	alignas(UST_CACHELINE) uint64_t consumed;	/* release; producer acquires */
	/*
	 * The consumer is about to sleep past its next turn (the agent's
	 * drain loop, docs/relay.md "Live latency"): set by the consumer,
	 * taken (exchanged to 0) by the producer's first commit after it,
	 * which then wakes the agent (lib/ust/app.c, tr_ust_app_wake). The
	 * producer reads it once per commit, relaxed; it is written only on
	 * the consumer's way to sleep and on that first commit. Zero for
	 * an older agent (never woken: it polls).
	 */
	uint32_t wake;

	alignas(UST_CACHELINE) struct ust_sb sb[];
};

/* A mapped buffer, process-local view. */
struct ust_ring {
	struct ust_shm *shm;
	uint8_t *data;			/* sub-buffer 0 */
	size_t map_len;
	uint32_t S, N;
	int fd;
};

struct ust_ring_opts {
	uint32_t subbuf_size, nsubbuf, mode, header, stream_id;
	uint64_t instance_id;
	const uint8_t *uuid;
	int32_t pid, tid;
};

/* Creates the memfd and maps it. Returns 0 or -errno. */
TRAWL_HIDDEN int tr_ust_ring_create(struct ust_ring *r, const struct ust_ring_opts *o);
TRAWL_HIDDEN void tr_ust_ring_destroy(struct ust_ring *r);
/*
 * Maps a buffer another process created (its memfd, received by the agent):
 * checks the seals (the size cannot change), the magic, the version and
 * that the geometry matches the file size. Takes fd (closed by
 * tr_ust_ring_destroy) on success. Returns 0 or -EINVAL / -errno.
 */
TRAWL_HIDDEN int tr_ust_ring_map(struct ust_ring *r, int fd);

static inline uint8_t *ust_ring_subbuf(const struct ust_ring *r, uint64_t k)
{
	return r->data + (size_t)(k & (r->N - 1)) * r->S;
}

/*
 * Residency. A buffer's memory is only allocated where the producer wrote,
 * and a sub-buffer whose packet took longer than tr_ust_reclaim_ns to fill is
 * given back to the kernel once written out (MADV_REMOVE: the producer's
 * next use of it faults in zeroed pages, a few microseconds per sub-buffer
 * at such rates). A thread that traces slowly so keeps about two
 * sub-buffers resident whatever the buffer's size, and only threads fast
 * enough to need them hold the default's 8 MiB. The consumer calls
 * ust_reclaim_due with the time it writes packet k out (tr_mono_ns()) and
 * the time it wrote the previous one (*last_ns, updated), before it hands
 * the sub-buffer back (the producer cannot be in it then).
 */
TRAWL_HIDDEN extern uint64_t tr_ust_reclaim_ns;	/* 100 ms; tests lower it */
TRAWL_HIDDEN void tr_ust_ring_reclaim(struct ust_ring *r, uint64_t k);
static inline bool ust_reclaim_due(uint64_t now_ns, uint64_t *last_ns)
{
	bool due = *last_ns && now_ns - *last_ns > tr_ust_reclaim_ns;
	*last_ns = now_ns;
	return due;
}

/*
 * Producer side (the owner thread; or the consumer once the producer is
 * quiescent). tr_ust_ring_finalize closes the open packet with timestamp_end;
 * tr_ust_ring_open opens packet `produced` at timestamp ts, returning false
 * when the buffer is full (discard mode).
 */
TRAWL_HIDDEN void tr_ust_ring_finalize(struct ust_ring *r, uint64_t ts_end);
TRAWL_HIDDEN bool tr_ust_ring_open(struct ust_ring *r, uint64_t ts);

/*
 * Counters the producer updates and others read while it runs: relaxed
 * atomic stores (plain moves on x86, no read-modify-write).
 */
#define UST_ADD(x, n) __atomic_store_n(&(x), (x) + (n), __ATOMIC_RELAXED)

/*
 * The snapshot copies packets that a producer may be rewriting, and finds
 * out afterwards (seqlock). ThreadSanitizer does not model fences, and the
 * copy is a race by design: its reads are hidden from it.
 */
#if defined(__SANITIZE_THREAD__)
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define UST_RACY_READS_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define UST_RACY_READS_END() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#define UST_FENCE(order) __atomic_signal_fence(order)
#else
#define UST_RACY_READS_BEGIN() ((void)0)
#define UST_RACY_READS_END() ((void)0)
#define UST_FENCE(order) __atomic_thread_fence(order)
#endif

/* ---- consumer.c: the consumer's view of a ring (the agent's, of a ring
 * another process produces; the in-process session's, lib/ust/output.c) */
struct ust_cons {
	struct ust_ring ring;		/* mapped with tr_ust_ring_map */
	struct trawl_ctf_wstream *ws;	/* where drained packets go (may be NULL) */
	uint64_t consumed;		/* packets written out */
	uint64_t disc_written;		/* events_discarded of the last one */
	uint64_t packets;
	uint64_t last_ns;		/* CLOCK_MONOTONIC of the last packet out */
	bool flushed;			/* final packet written */
	bool bad;			/* broke the protocol: abandoned */
	/* live (tr_ust_cons_live_init): packets go out in parts as they fill */
	uint8_t *part;			/* S bytes to build a part in */
	uint64_t live_off;		/* bytes of packet `consumed` already out */
	uint64_t live_nev;		/* and their events */
	uint64_t live_end;		/* the last part's end or beacon */
	uint64_t out_seq;		/* packet_seq_num of the parts */
	/* events of packets (whole or parts) the writer refused, having
	 * failed before (a relay that cut it off, no local copy): neither
	 * among the events it took nor among those it counts discarded */
	uint64_t refused;
};
/*
 * Live mode (discard rings of a live session): a finished packet goes out
 * as its part not sent yet; tr_ust_cons_live, every live period, sends the
 * open packet's committed events as a part of their own, or a beacon when
 * there are none. Each part is a CTF packet: the packet's header, a range
 * of its events, timestamp_begin the previous part's end, timestamp_end a
 * time no earlier event is after and no later one before, packet_seq_num
 * counting parts. 0 or -ENOMEM.
 */
TRAWL_HIDDEN int tr_ust_cons_live_init(struct ust_cons *c);
/* Every part carries its event count (the writer counts what a relay
 * did not store, docs/relay.md "Cut off by the relay"): a finished
 * packet's rest, the ring's count of the packet less its parts' out
 * already; the open packet's part, the events the consumer walks in the
 * bytes it sends, with et (what the stream's events are; NULL: not
 * counted). Bytes that are not whole events of et (an event whose id the
 * consumer does not know yet) are left for the packet's rest: nothing is
 * sent then. 0, -EPROTO (the ring is abandoned) or the writer's -errno. */
struct ust_evtab;
TRAWL_HIDDEN int tr_ust_cons_live(struct ust_cons *c, const uint8_t uuid[16], uint32_t stream_id,
				  const struct ust_evtab *et);
/* Whether the open packet holds committed events not sent yet (a live
 * ring that tr_ust_cons_live would cut now, not give a beacon): three
 * loads of the producer's counters, nothing written. */
TRAWL_HIDDEN bool tr_ust_cons_live_pending(const struct ust_cons *c);
/* A ring whose producer is gone for good: nothing more will come before
 * ts (a beacon, if the stream is live and ts is later than its last).
 * 0 or the writer's -errno. */
TRAWL_HIDDEN int tr_ust_cons_live_end(struct ust_cons *c, uint64_t ts);
TRAWL_HIDDEN void tr_ust_cons_live_release(struct ust_cons *c);
/* Discard mode: writes every finalized packet to c->ws (uuid and stream id
 * rewritten for the agent's trace) and frees their sub-buffers. 0, -EPROTO
 * (counters out of range: the ring is abandoned) or the writer's -errno. */
TRAWL_HIDDEN int tr_ust_cons_drain(struct ust_cons *c, const uint8_t uuid[16], uint32_t stream_id);
/* The producer is gone or quiescent: closes its open packet (unless stuck:
 * it may still be inside an event), drains (discard mode), and adds an
 * empty packet if events were discarded after the last one, so that the
 * stream's last events_discarded is exact. Once per ring. */
TRAWL_HIDDEN int tr_ust_cons_final(struct ust_cons *c, const uint8_t uuid[16], uint32_t stream_id,
				bool stuck);
/* Copies the newest packets (while the producer may write; a packet
 * rewritten during its copy ends the window and counts in *torn) into a
 * stream made by mkws(arg) (called only if there is a packet); copy holds
 * S x N bytes. In overwrite mode, with et (what the stream's events are),
 * the newest is the open packet's committed events, as a packet of its
 * own, as LTTng's snapshot flushes the current sub-buffer; then the
 * finished packets before it. The events before the window are counted
 * in the copies' events_discarded. Adds the copied events to *events:
 * what a reader of the stream then reads. */
TRAWL_HIDDEN int tr_ust_cons_snapshot(struct ust_cons *c, uint8_t *copy,
				   struct trawl_ctf_wstream *(*mkws)(void *), void *arg,
				   const uint8_t uuid[16], uint32_t stream_id,
				   const struct ust_evtab *et, uint64_t *events, uint64_t *torn);
#endif
