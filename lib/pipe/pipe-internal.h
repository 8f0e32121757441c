/* SPDX-License-Identifier: MIT */
/*
 * lib/pipe/pipe-internal.h - the reader's state, shared by the merge
 * (merge.c: ordering every stream of every source by time, with a heap or,
 * in batches, a loser tree and a decode-ahead worker) and the sources that
 * fill it with traces and streams (files.c: trace directories; memory).
 */
#ifndef TRAWL_PIPE_INTERNAL_H
#define TRAWL_PIPE_INTERNAL_H

#include <pthread.h>

#include "ctf/stream.h"
#include "trawl/pipe.h"

/* Decode-ahead (threads >= 2): see the comment before take_next(). */
#define NQ 3			/* batches per stream */

struct trawl_reader_stream {
	struct ctf_stream cs;		/* the decode state (first) */
	struct trawl_reader_trace *trace;
	uint32_t order;
	/*
	 * Decode-ahead. cs is the filler's: the one thread (worker or
	 * consumer) that has set qbusy, or the consumer alone when there is
	 * no worker. The q* fields are under r->mu. cur and pub are the
	 * consumer's (the thread calling trawl_reader_next()).
	 */
	struct batch *q;		/* NQ batches */
	uint32_t qhead, qtail;		/* batches filled / given back */
	bool qbusy;			/* q[qhead % NQ] is being filled */
	bool qfin;			/* the last batch (term != 0) is filled */
	bool threaded;			/* the consumer reads pub, not cs.st */
	struct batch *cur;		/* q[qtail % NQ] while being merged */
	struct trawl_reader_stream_stats pub;
};

struct trawl_reader_trace {
	struct ctf_tdec dec;		/* its decoders and clock correction */
	char *path;
	char *real;
	const char *hostname;
	struct trawl_sync_xform fixv;	/* dec.fix points here, if set */
	struct trawl_reader_stream **streams;
	size_t nstreams;
	bool borrowed;			/* dec.meta belongs to the caller */
};

struct hent {
	int64_t ts;
	uint64_t order;
	struct trawl_reader_stream *s;
};

/* Merge key of the decode-ahead path: (ts, stream order) in one compare. */
typedef unsigned __int128 mkey;
#define KEY_INF (~(mkey)0)
#define NOLEAF UINT32_MAX

/*
 * The consumer's per-event state, apart from anything a filler writes (no
 * false sharing): a loser tree whose leaf i is the stream of order i.
 */
struct leaf {
	const struct brec *rec, *end;	/* next event of the current batch */
	/*
	 * The 64-bit merge key of rec[1], the event after the head, so that
	 * the common step replays at once and advances the leaf meanwhile;
	 * UINT64_MAX when that step cannot be taken (no rec[1] in the batch,
	 * out of the keys' range, wide keys, raw clock or cpu per event).
	 */
	uint64_t nk;
	struct trawl_event ev;		/* rec's, values and all (leaf_set()) */
	const struct batch *b;
	struct trawl_reader_stream *s;
	uint64_t base;			/* b->base when b->ghz */
	bool ghz;
	bool onecpu;
	uint32_t cpu0;			/* b->cpu0 when b->onecpu */
} __attribute__((aligned(64)));

struct merge {
	uint32_t win;			/* the leaf returned last, or NOLEAF */
	uint32_t k;			/* leaves, a power of two */
	/*
	 * Normally 64-bit keys: (ts - base) << lb | leaf, so that a match is
	 * one compare; UINT64_MAX: no event. A ts out of range rebuilds the
	 * tree with a new base (rekey()), or for good with 128-bit keys
	 * (wide) when the live events span too much time.
	 */
	uint32_t lb;			/* bits of a leaf number: k == 1 << lb */
	bool wide;
	uint64_t base;			/* ts ^ 1 << 63 (ordered unsigned) of key 0 */
	uint64_t range;			/* (ts ^ 1 << 63) - base must be below this */
	uint64_t *t64;			/* as tree, 64-bit keys */
	/*
	 * Keys, not leaf numbers, so that a replay reads one array: [0] the
	 * winner's, [1..k) the losers'. A key's low 32 bits are its leaf.
	 */
	mkey *tree;
	mkey *key;			/* per leaf, to build; KEY_INF: no event */
	struct leaf *leaf;
	const struct trawl_ctf_event_class **cls;	/* by index */
} __attribute__((aligned(64)));

struct trawl_reader {
	struct trawl_reader_trace **traces;
	size_t ntraces;
	struct hent *heap;
	size_t nheap;
	struct trawl_reader_stream *pending;
	struct trawl_reader_stream **errq;
	size_t nerrq, errq_head;
	uint32_t nstreams;
	uint32_t nclasses;		/* event classes of every trace */
	bool primed;
	unsigned nerrors;
	const char *lasterr;
	struct ctf_range rg;		/* what streams decode (begin, end, simd) */
	/* only while traces are opened (trawl_reader_new) */
	const struct trawl_reader_clock_fix *fixes;
	size_t nfixes;
	const char *const *hosts;
	size_t nhosts;
	const char *const *events;
	size_t nevents;
	unsigned threads;		/* as asked; 0: auto */
	/*
	 * Batches (threaded): streams decoded a batch at a time, merged by a
	 * loser tree over the batch heads; with `worker`, a second thread
	 * decodes ahead (started: r->mu and the cvs exist; worker_on: the
	 * thread runs). Without a worker the calling thread fills each batch
	 * when it needs it: the same code, never a wait.
	 */
	bool threaded, worker, started, worker_on;
	uint32_t batch_events;		/* 0: from BATCH_BUDGET */
	struct trawl_reader_stream **all;	/* by order */
	struct merge *m;		/* the consumer's, aligned */
	uint32_t rr;			/* r->mu: where the next pick starts */
	pthread_t wthread;
	pthread_mutex_t mu;
	pthread_cond_t wcv, mcv;	/* the worker / the consumer waits */
	bool widle, mwait, stop;	/* r->mu */
};


/* ---- merge.c */
/* A new, empty reader with the options o (hosts, events, range, threads,
 * fixes); NULL on ENOMEM. */
TRAWL_HIDDEN struct trawl_reader *reader_alloc(const struct trawl_reader_opts *o);
/* Once every trace is added: numbers, queues, the read mode. 0 or -errno. */
TRAWL_HIDDEN int reader_ready(struct trawl_reader *r, char *err, size_t errlen);
/* A new stream of trace t, named path (not yet added). NULL on ENOMEM. */
TRAWL_HIDDEN struct trawl_reader_stream *reader_stream_new(struct trawl_reader_trace *t,
							   const char *path,
							   const struct ctf_range *rg);
TRAWL_HIDDEN void reader_stream_free(struct trawl_reader_stream *s);
/* Adds s to t and gives it the reader's next order. 0 or -ENOMEM. */
TRAWL_HIDDEN int reader_add_stream(struct trawl_reader *r, struct trawl_reader_trace *t,
				   struct trawl_reader_stream *s);
/* Adds t to r (numbering its event classes after the others'). 0 or -ENOMEM. */
TRAWL_HIDDEN int reader_add_trace(struct trawl_reader *r, struct trawl_reader_trace *t);
TRAWL_HIDDEN void reader_trace_free(struct trawl_reader_trace *t);
/* The correction of host (from the reader's fixes) into t, if any. */
TRAWL_HIDDEN void reader_trace_fix(const struct trawl_reader *r, struct trawl_reader_trace *t);

/*
 * A reader over in-memory stream buffers of one trace whose model the caller
 * owns (parsed once; must outlive the reader; its decoders are recompiled
 * for these options). Streams are named "mem/s_N". For fuzzing and tests.
 */
TRAWL_HIDDEN struct trawl_reader *reader_new_mem(struct trawl_ctf_trace *meta,
						 const uint8_t *const *bufs, const size_t *lens,
						 size_t n, const struct trawl_reader_opts *o,
						 char *err, size_t errlen);

/* Events per decode-ahead batch (0: the default), before the first
 * trawl_reader_next(). For tests. */
TRAWL_HIDDEN void reader_set_batch(struct trawl_reader *r, uint32_t events);

/*
 * How a reader reads (set at open from trawl_reader_opts.threads and the
 * traces' size): event by event with a heap (READ_EVENTS), in batches
 * merged by a loser tree in the calling thread (READ_BATCHES), or the
 * same with a worker thread decoding ahead (READ_WORKER).
 */
enum read_mode { READ_EVENTS, READ_BATCHES, READ_WORKER };

/* Forces a mode, before the first trawl_reader_next(). For tests. */
TRAWL_HIDDEN void reader_set_mode(struct trawl_reader *r, enum read_mode m);

#endif
