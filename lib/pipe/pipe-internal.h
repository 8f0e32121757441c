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
	struct ctf_dmg pubdmg;		/* cs.dmg as of pub (threaded) */
	uint64_t puboff;		/* the bytes read as of pub (threaded) */
	int64_t lgiven;			/* live clock: the last time of the batches given back */
	uint32_t lpend;			/* live: packets come, not yet decoded */
};

struct trawl_reader_trace {
	struct ctf_tdec dec;		/* its decoders and clock correction */
	char *path;
	char *real;
	const char *hostname;
	struct trawl_sync_xform fixv;	/* dec.fix points here, if set */
	/* live clock (reader's clock, lib/pipe/clock.c): no dec.fix, lx its
	 * correction once lsynced; no time of its streams below lfloor */
	bool lclock, lsynced, lchanged;	/* lchanged: at the last refresh */
	struct trawl_sync_xform lx;
	int64_t lfloor;
	struct trawl_reader_stream **streams;
	size_t nstreams;
	size_t nadopted;		/* streams the reader has taken */
	bool borrowed;			/* dec.meta belongs to the caller */
	/* the models before its metadata grew (live): their classes may be
	 * in events still in flight; freed with the trace */
	struct ctf_tdec *olddec;
	size_t nolddec;
	void *priv;			/* the source's (live: its stream ids) */
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
	 * out of the keys' range, wide keys or cpu per event).
	 */
	uint64_t nk;
	struct trawl_event ev;		/* rec's, values and all (leaf_set()) */
	const struct batch *b;
	struct trawl_reader_stream *s;
	uint64_t base;			/* b->base when b->ghz */
	bool ghz;
	bool onecpu;
	/* A live stream with nothing yet: no event (rec == end), but its key
	 * is hold_ts, the time before which nothing more will come from it,
	 * so that the merge waits for it there. */
	bool hold;
	uint32_t cpu0;			/* b->cpu0 when b->onecpu */
	int64_t hold_ts;
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
	/* nclasses entries: the run's sinks want the class's events (NULL:
	 * all; see trawl_sink_ops.wants; never on a live reader, whose
	 * classes grow) */
	uint8_t *want;
	uint64_t given;			/* batches given back so far (the consumer's) */
	bool primed;
	unsigned nerrors;
	const char *lasterr;
	struct ctf_range rg;		/* what streams decode (begin, end, simd) */
	struct trawl_source **srcs;	/* the reader's, freed with it */
	struct field_priv *fields;	/* bound fields (bind.c) */
	bool live;			/* a source is live (live_wait()) */
	/* live: called as the reader is about to wait for its sources, every
	 * event it had given (trawl_pipe_run: the sinks' caught_up) */
	void (*on_wait)(void *arg);
	void *on_wait_arg;
	int64_t low;			/* live: no event before it is to come (holds) */
	int failed;			/* -errno: a live source failed for good */
	size_t nsrcs;
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
	/* live clock (lib/pipe/clock.c): the corrector, its tap's classes
	 * (0 not asked, 1 no, 2 yes) and events of a batch */
	struct trawl_reader_clock clock;
	bool has_clock, clock_started;
	uint8_t *ctap;
	size_t nctap;
	struct trawl_event *tapev;
	size_t ntapev;
};

/* lib/pipe/clock.c: the live clock applied (trawl_reader_opts.clock) */
void tr_clock_adopt(struct trawl_reader *r, struct trawl_reader_trace *t);
int tr_clock_batch(struct trawl_reader *r, struct trawl_reader_stream *s, struct batch *b,
		   const struct trawl_ctf_event_class *const *cls);
void tr_clock_take(struct trawl_reader_stream *s, struct batch *b);
void tr_clock_remap(struct trawl_reader_stream *s, struct batch *b, uint32_t from);
int64_t tr_clock_hold(struct trawl_reader_stream *s, int64_t hold);
int tr_clock_refresh(struct trawl_reader *r, int64_t front, int last);
void tr_clock_release(struct trawl_reader *r);


/* Asks the sinks which event classes they want (trawl_sink_ops.wants)
 * and lets the decoder leave the others out: only when every sink
 * answers, before the first event is read, on a reader that is not live.
 * 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_reader_want(struct trawl_reader *r, const struct trawl_sink *sinks,
				size_t nsinks);

/* Batches the consumer has given back to the decoder so far: their pages
 * go once the decoder is past them (release_pages() in ctf/stream.c). */
TRAWL_HIDDEN uint64_t tr_reader_given(const struct trawl_reader *r);

/* ---- sources (source.c, files.c, live.c) */
struct trawl_source;
struct source_ops {
	const char *kind;		/* "files", "memory", "live" */
	/*
	 * Live sources only (NULL otherwise): waits until deadline (ns,
	 * CLOCK_MONOTONIC; 0: do not wait) for something new: traces,
	 * streams, packets, beacons. 1 when there is, 0 at the deadline, -errno.
	 */
	int (*poll)(struct trawl_source *src, int64_t deadline);
	void (*release)(struct trawl_source *src);
};

struct trawl_source {
	const struct source_ops *ops;
	/* the options, copied: host and event globs, clock corrections */
	char **hosts, **events;
	size_t nhosts, nevents;
	struct trawl_reader_clock_fix *fixes;
	size_t nfixes;
	void (*bad_trace)(void *arg, const char *msg);	/* files: skipped traces */
	void *bad_trace_arg;
	size_t nbad;			/* files: traces skipped */
	struct trawl_reader_trace **traces;	/* the source's, in order */
	size_t ntraces;
	size_t nadopted;		/* traces[0 .. nadopted) are the reader's */
	bool ended;			/* live: nothing more will come */
	char err[320];			/* live: why poll() failed */
	struct trawl_reader *r;		/* the reader that took it, or NULL */
	void *priv;			/* the kind's own state */
};

/* A new source of this kind with copies of o's filters; NULL on ENOMEM. */
TRAWL_HIDDEN struct trawl_source *tr_source_alloc(const struct source_ops *ops,
					       const struct trawl_source_opts *o);
/* Does the host pass the source's host globs? */
TRAWL_HIDDEN bool tr_source_wants_host(const struct trawl_source *src, const char *host);
/* Sets t's clock correction from the source's fixes, if its host has one. */
TRAWL_HIDDEN void tr_source_trace_fix(const struct trawl_source *src, struct trawl_reader_trace *t);
/* Appends t to the source's traces. 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_source_add_trace(struct trawl_source *src, struct trawl_reader_trace *t);
/* Adds stream s to trace t (of src); once adopted, the reader orders it. */
TRAWL_HIDDEN int tr_source_add_stream(struct trawl_source *src, struct trawl_reader_trace *t,
				   struct trawl_reader_stream *s);

/* ---- format.c: the output formats of events, one table */
struct format {
	const char *name, *help;
	/* A formatter with TRAWL_TEXT_* flags; NULL on ENOMEM. */
	void *(*new)(unsigned flags);
	/* As trawl_text_format(): the line's length (written when <= cap), 0 on ENOMEM. */
	size_t (*event)(void *f, char *buf, size_t cap, const struct trawl_event *ev);
	/* The previous event's time (for deltas), INT64_MIN: none. */
	void (*set_prev)(void *f, int64_t prev);
	void (*free)(void *f);
};
TRAWL_HIDDEN const struct format *tr_format_find(const char *name);
/* The json format's "context" (if any) and "fields" members of ev, into
 * the object open in j (also what exports write as an event's
 * arguments); false when the values do not match the types. */
struct json;
TRAWL_HIDDEN bool tr_format_json_values(struct json *j, const struct trawl_event *ev);

/* ---- bind.c */
struct field_priv;
/* Resolves every bound field in the classes adopted since. 0 or -errno. */
TRAWL_HIDDEN int tr_reader_bind_new_classes(struct trawl_reader *r, char *err, size_t errlen);
TRAWL_HIDDEN void tr_reader_fields_free(struct trawl_reader *r);

/* ---- merge.c */
/* A new, empty reader with the options o (range, threads); NULL on ENOMEM. */
TRAWL_HIDDEN struct trawl_reader *tr_reader_alloc(const struct trawl_reader_opts *o);
/* Once every source is adopted: the read mode, the merge's arrays.
 * 0 or -errno. */
TRAWL_HIDDEN int tr_reader_ready(struct trawl_reader *r, char *err, size_t errlen);
/* A new stream of trace t, named path (not yet added). NULL on ENOMEM. */
TRAWL_HIDDEN struct trawl_reader_stream *tr_reader_stream_new(struct trawl_reader_trace *t,
							   const char *path);
TRAWL_HIDDEN void tr_reader_stream_free(struct trawl_reader_stream *s);
TRAWL_HIDDEN void tr_reader_trace_free(struct trawl_reader_trace *t);
/*
 * A live trace's metadata grew: meta (taken, also on failure) replaces its
 * model; classes it had keep their numbers, new ones get the next (r NULL:
 * not yet taken by a reader, nothing to number); its streams go on with
 * the new decoders. The old model stays until the trace is freed. Between
 * batches, in the consumer thread. 0 or -errno with a message in err.
 */
TRAWL_HIDDEN int tr_reader_trace_update(struct trawl_reader *r, struct trawl_reader_trace *t,
				     struct trawl_ctf_trace *meta, const char *const *events,
				     size_t nevents, char *err, size_t errlen);
/* Does the reader have a live source (events come as they are made)? */
TRAWL_HIDDEN bool tr_reader_is_live(const struct trawl_reader *r);
/* Takes the traces and streams src has that r does not have yet:
 * numbers their classes and orders their streams. 0 or -ENOMEM. */
TRAWL_HIDDEN int tr_reader_adopt(struct trawl_reader *r, struct trawl_source *src);

/* The source made of the filters of reader options (hosts, events, fixes). */
TRAWL_HIDDEN void tr_reader_opts_source(const struct trawl_reader_opts *o,
				     struct trawl_source_opts *so);

/*
 * A reader over in-memory stream buffers of one trace whose model the caller
 * owns (parsed once; must outlive the reader; its decoders are recompiled
 * for these options). Streams are named "mem/s_N". For fuzzing and tests.
 */
TRAWL_HIDDEN struct trawl_reader *tr_reader_new_mem(struct trawl_ctf_trace *meta,
						 const uint8_t *const *bufs, const size_t *lens,
						 size_t n, const struct trawl_reader_opts *o,
						 char *err, size_t errlen);

/* Events per decode-ahead batch (0: the default), before the first
 * trawl_reader_next(). For tests. */
TRAWL_HIDDEN void tr_reader_set_batch(struct trawl_reader *r, uint32_t events);

/*
 * How a reader reads (set at open from trawl_reader_opts.threads and the
 * traces' size): event by event with a heap (READ_EVENTS), in batches
 * merged by a loser tree in the calling thread (READ_BATCHES), or the
 * same with a worker thread decoding ahead (READ_WORKER).
 */
enum read_mode { READ_EVENTS, READ_BATCHES, READ_WORKER };

/* Forces a mode, before the first trawl_reader_next(). For tests. */
TRAWL_HIDDEN void tr_reader_set_mode(struct trawl_reader *r, enum read_mode m);

#endif
