/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/ust-internal.h - user-space tracing internals: the shared-memory
 * ring buffer layout (what an agent process will map), and the producer and
 * consumer operations on it.
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
#ifndef TRAWL_UST_INTERNAL_H
#define TRAWL_UST_INTERNAL_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "trawl/tracepoint.h"

#include "ctf/packet.h"	/* the packet layout, shared with the writer */

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
TRAWL_HIDDEN int ust_ring_create(struct ust_ring *r, const struct ust_ring_opts *o);
TRAWL_HIDDEN void ust_ring_destroy(struct ust_ring *r);

static inline uint8_t *ust_ring_subbuf(const struct ust_ring *r, uint64_t k)
{
	return r->data + (size_t)(k & (r->N - 1)) * r->S;
}

/*
 * Producer side (the owner thread; or the consumer once the producer is
 * quiescent). ust_ring_finalize closes the open packet with timestamp_end;
 * ust_ring_open opens packet `produced` at timestamp ts, returning false
 * when the buffer is full (discard mode).
 */
TRAWL_HIDDEN void ust_ring_finalize(struct ust_ring *r, uint64_t ts_end);
TRAWL_HIDDEN bool ust_ring_open(struct ust_ring *r, uint64_t ts);

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

/* The clock used for timestamps (set by the session, read per event). */
TRAWL_HIDDEN uint64_t ust_clock_now(void);

#endif
