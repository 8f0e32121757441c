/* SPDX-License-Identifier: MIT */
/*
 * trawl/pipe.h - reading traces: sources -> merge -> sinks.
 *
 * A reader (struct trawl_reader) merges, in time order, every stream of
 * the traces its sources give it: trace directories on disk, a live relay
 * session, buffers in memory. Consumers take the merged events in batches.
 *
 * Conventions as in trawl/ctf.h: int returns are 0 (or a count) or -errno,
 * pointer returns NULL with errno set, messages in (err, errlen); objects
 * from _new are released with _free, which accepts NULL.
 */
#ifndef TRAWL_PIPE_H
#define TRAWL_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trawl/ctf.h>
#include <trawl/xform.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* ----------------------------------------------------------------- reader */

struct trawl_reader;
struct trawl_reader_trace;	/* one CTF trace directory */
struct trawl_reader_stream;	/* one data stream file */


struct trawl_reader_opts {
	size_t sz;			/* sizeof(struct trawl_reader_opts) */
	const char *const *hosts;	/* globs on env.hostname; NULL: all */
	size_t nhosts;
	const char *const *events;	/* globs on event names; NULL: all */
	size_t nevents;
	int64_t begin, end;		/* ns since epoch; 0, 0: everything */
	/*
	 * 1: decode and merge in the calling thread. >= 2: a worker thread
	 * decodes the streams ahead in batches while trawl_reader_next() merges
	 * (one worker whatever the number; the calling thread also decodes
	 * when it would otherwise wait). 0 (or a struct without this field):
	 * a worker when the machine has 2 CPUs or more and the traces more
	 * than a few MiB of streams. Without a worker, such traces are still
	 * decoded in batches, by the calling thread. Events, order and errors
	 * are the same.
	 */
	unsigned threads;
	/*
	 * Clock corrections (what `trawl sync` stored): every event of a trace
	 * whose env.hostname equals fixes[i].host gets its ts mapped through
	 * fixes[i].xform (node time -> reference time, in ns since the epoch)
	 * before the merge, so the order is the corrected one; begin and end
	 * apply to corrected times. Events keep their raw cycles. NULL: none.
	 */
	const struct trawl_reader_clock_fix *fixes;
	size_t nfixes;
	/*
	 * A trace found under a directory above it (a session) that cannot be
	 * opened (an empty or broken metadata file, a stream file that cannot
	 * be mapped): its message to bad_trace (see trawl_source_opts), and it is skipped; the other
	 * traces are read. NULL: the source fails, as does a trace given
	 * itself (its own directory).
	 */
	void (*bad_trace)(void *arg, const char *msg);
	void *bad_trace_arg;
	/*
	 * Live: each node's clock corrected as the session's messages come
	 * (trawl/sync.h: trawl_sync_live_clock()), for the hosts fixes does
	 * not name. NULL: none. Copied; what it points to outlives the reader.
	 */
	const struct trawl_reader_clock *clock;
};

/*
 * A live reader's clock corrector. Its tap sees every event of each host
 * whose class it wants, in the host's own time, before the merge (each
 * stream in order, streams and hosts in any order): start() before the
 * first, then events(); wants() once per class. The reader asks
 * refresh() as it waits for its sources, once it decoded what came and
 * before it takes it (1: some correction changed, 0 (nothing new, or not
 * yet: the corrector limits its own cost), -errno; last: the sources
 * have ended, what was decoded is about all there is: the corrector
 * refreshes now whatever its cost limit, a new trace being news too)
 * and get() for each
 * host's correction (1
 * with *x node time -> reference time; 0: not synchronized yet, its own
 * clock). A new correction applies to the events decoded after it, and
 * never sets a host's time back: a host whose correction goes back stands
 * still until its new time passes what was given (docs/sync.md, "Live").
 */
struct trawl_reader_clock {
	size_t sz;			/* sizeof(struct trawl_reader_clock) */
	const struct trawl_sink_ops *tap;
	int (*refresh)(void *self, int last);
	int (*get)(void *self, const char *host, struct trawl_sync_xform *x);
	void *self;
};

/* One node's clock correction, see trawl_reader_opts.fixes. */
struct trawl_reader_clock_fix {
	const char *host;
	struct trawl_sync_xform xform;
};

/* ---------------------------------------------------------------- sources */

/*
 * A source gives a reader traces: CTF trace directories on disk, a live
 * session of a relay, or buffers in memory. Each trace carries its host
 * (env.hostname), its clock correction and its streams' statistics
 * (events, discarded events); the reader merges the events of every
 * stream of every source in (corrected) time order.
 */
struct trawl_source;

struct trawl_source_opts {
	size_t sz;			/* sizeof(struct trawl_source_opts) */
	const char *const *hosts;	/* globs on env.hostname; NULL: all */
	size_t nhosts;
	const char *const *events;	/* globs on event names; NULL: all */
	size_t nevents;
	/* clock corrections by host, see trawl_reader_opts.fixes */
	const struct trawl_reader_clock_fix *fixes;
	size_t nfixes;
	/*
	 * A trace found under a directory above it (a session) that cannot be
	 * opened (an empty or broken metadata file, a stream file that cannot
	 * be mapped): its message to bad_trace, and it is skipped; the other
	 * traces are read. NULL: the source fails, as does a trace given
	 * itself (its own directory).
	 */
	void (*bad_trace)(void *arg, const char *msg);
	void *bad_trace_arg;
	/* Live: from the session's next packet on, not from its beginning (a
	 * trawl relay; lttng-relayd serves its SEEK_LAST, what it keeps). */
	bool live_from_now;
	/* Live: in no hurry (an aggregate per interval, a state): events at
	 * the producers' live timer are soon enough, so a trawl relay does
	 * not ask them to send each event at once for this reader (no
	 * DEMAND: fewer, larger packets, fewer round trips for both). */
	bool live_lazy;
};

/*
 * Every CTF trace found under each path (a trace directory holding a
 * `metadata` file, or any directory above some: a session). A trace that
 * cannot be opened is an error (NULL, errno, message in err), unless it is
 * below a path given and o->bad_trace is set: then it is reported there
 * and skipped (a path under which every trace was skipped is an error). The options
 * are copied. Free with trawl_source_free(), unless a reader took it.
 */
struct trawl_source *trawl_source_files(const char *const *paths, size_t npaths,
					const struct trawl_source_opts *o,
					char *err, size_t errlen);
/*
 * One trace in memory: its TSDL metadata text and the bytes of its data
 * streams (packets, as in a stream file), which must outlive the reader.
 * For tests, simulations and embedding. NULL + errno, message in err.
 */
struct trawl_source *trawl_source_memory(const char *metadata, size_t len,
					 const uint8_t *const *streams, const size_t *lens,
					 size_t nstreams, const struct trawl_source_opts *o,
					 char *err, size_t errlen);
/*
 * A live session of a relay (trawl relay, or lttng-relayd), read while it
 * is recorded, through the LTTng live viewer protocol 2.4:
 *   net://RELAY[:PORT]/host/HOST/SESSION   one host's session (babeltrace2's form)
 *   net://RELAY[:PORT]/session/SESSION     that session of every host
 * (PORT 5344 by default; RELAY a name, an IPv4 literal or [an IPv6 one]).
 * It attaches from the session's beginning; streams, traces and event
 * classes that come later join as they come. A reader over a live source
 * holds its merge back at each stream's beacon, and returns -EAGAIN from
 * trawl_reader_next() / _read() when it waited about 100 ms and nothing
 * came; it ends when the session has ended and everything is read.
 * NULL + errno (ENOENT: no such session listed; ECONNREFUSED, ETIMEDOUT,
 * EPROTO: not a relay), message in err.
 */
struct trawl_source *trawl_source_live(const char *url, const struct trawl_source_opts *o,
				       char *err, size_t errlen);
void trawl_source_free(struct trawl_source *src);

/*
 * A reader over the given sources, which it takes (also on failure: it
 * frees them then). The options' range and threads apply; its hosts,
 * events and fixes must be unset (they are the sources'). NULL + errno,
 * message in err.
 */
struct trawl_reader *trawl_reader_open(struct trawl_source *const *srcs, size_t nsrcs,
				       const struct trawl_reader_opts *o,
				       char *err, size_t errlen);

/*
 * A reader over trawl_source_files(paths) with the options' filters and
 * corrections: every CTF trace found under each path. A trace that cannot
 * be opened is an error (returned, message in err).
 */
struct trawl_reader *trawl_reader_new(const char *const *paths, size_t npaths,
				      const struct trawl_reader_opts *o,
				      char *err, size_t errlen);
void trawl_reader_free(struct trawl_reader *r);

/*
 * The next event in timestamp order across all streams of all traces.
 * Returns 1 with *ev set (valid until the next call), 0 at the end, or
 * -errno on a corrupt stream: the message (file and byte offset) is in
 * trawl_reader_error(); the corrupt stream stops there, and calling again
 * goes on with the others. A reader with a live source also returns
 * -EAGAIN when the merge waited (about 100 ms) for a stream that holds
 * it back and nothing came: call again (and see whether to stop); and
 * another -errno when the source failed for good (the relay went away, a
 * reply out of the protocol): the message is in trawl_reader_error(), and
 * every later call returns the same.
 */
int trawl_reader_next(struct trawl_reader *r, const struct trawl_event **ev);
/*
 * The next events in the same order, copied into out[0 .. max): returns
 * how many (at least 1, at most max), 0 at the end, or -errno as
 * trawl_reader_next() does (no event then). The events and their values
 * stay valid until the next call of either function; the two can be mixed.
 * With a worker it returns up to the end of some stream's batch, so that
 * the merge keeps its state in registers between events (cheaper than a
 * call per event); without one, one event per call.
 */
int trawl_reader_read(struct trawl_reader *r, struct trawl_event *out, unsigned max);
const char *trawl_reader_error(const struct trawl_reader *r);
/*
 * A live reader: the time (ns, corrected as events are) before which no
 * more event will come from any stream, as the streams' beacons said when
 * the merge last waited for one; INT64_MIN when none said yet, and for a
 * reader without a live source.
 */
int64_t trawl_reader_low(const struct trawl_reader *r);
/* Number of corrupt-stream errors met so far. */
unsigned trawl_reader_nerrors(const struct trawl_reader *r);

size_t trawl_reader_ntraces(const struct trawl_reader *r);
/* Number of event classes of every trace of the reader: see
 * trawl_ctf_event_class.index. */
size_t trawl_reader_nclasses(const struct trawl_reader *r);
const struct trawl_reader_trace *trawl_reader_trace_at(const struct trawl_reader *r, size_t i);

const char *trawl_reader_trace_path(const struct trawl_reader_trace *t);
const char *trawl_reader_trace_hostname(const struct trawl_reader_trace *t); /* "" if none */
const struct trawl_ctf_trace *trawl_reader_trace_meta(const struct trawl_reader_trace *t);
size_t trawl_reader_trace_nstreams(const struct trawl_reader_trace *t);
const struct trawl_reader_stream *trawl_reader_trace_stream(const struct trawl_reader_trace *t, size_t i);

const struct trawl_reader_trace *trawl_reader_stream_trace(const struct trawl_reader_stream *s);
const char *trawl_reader_stream_path(const struct trawl_reader_stream *s);

/*
 * Per-stream statistics, as far as the stream has been read. With a decode
 * worker (see trawl_reader_opts.threads) they are those at the end of the
 * batch being merged: they may run ahead of the events returned so far by
 * up to one batch (a few thousand events), and are complete once
 * trawl_reader_next() has returned 0. Call it from the thread that calls
 * trawl_reader_next().
 */
/* (struct trawl_reader_stream_stats: in trawl/ctf.h) */
void trawl_reader_stream_stats(const struct trawl_reader_stream *s,
			       struct trawl_reader_stream_stats *st);

/*
 * What a stream lost, as far as it has been read (the same caveats as the
 * statistics): the events its tracer discarded (the packets' cumulative
 * events_discarded) as time ranges: a packet whose count grew lost the
 * difference between the end of the packet before it (its own beginning
 * for the first) and its own end, as babeltrace2 reports it; consecutive
 * lossy packets make one range. With a time range, losses wholly outside
 * it are left out. Copies up to max ranges (at most 33 are kept: past 32
 * the last one grows to take the rest) to out and returns how many;
 * *events (if not NULL): the events lost in all.
 */
struct trawl_reader_loss {
	int64_t begin, end;		/* ns, as events' times; INT64_MIN: no time */
	uint64_t events;
};
size_t trawl_reader_stream_losses(const struct trawl_reader_stream *s,
				  struct trawl_reader_loss *out, size_t max, uint64_t *events);
/*
 * What the reader skipped of a stream as corrupt, as far as it has been
 * read: each bad region (a packet that is not one: bad magic, uuid, stream
 * class, sizes, or a truncated last packet; the rest of a packet from an
 * event that does not decode or takes no bits) with the byte offset where
 * it begins, its length (up to the next packet that reads, found through
 * the index or else the next packet magic, or the end of the file) and
 * the reason. The events before and after are read. Copies up to max of
 * the first 16 to out and returns how many; *bytes and *nskips (if not
 * NULL): the bytes and the regions skipped in all. `why` stays valid
 * until the reader is freed.
 */
struct trawl_reader_skip {
	uint64_t offset, bytes;
	const char *why;
};
size_t trawl_reader_stream_skips(const struct trawl_reader_stream *s,
				 struct trawl_reader_skip *out, size_t max, uint64_t *bytes,
				 uint64_t *nskips);

/*
 * How far the reader is through its traces, for a progress display:
 * *done is the bytes of stream data read so far (packets decoded, or
 * skipped through an index), *total the size of every stream; *done ==
 * *total once every stream has ended. Like the stream statistics it may
 * run ahead of the events returned by up to a batch per stream, and is
 * read from the thread that calls trawl_reader_next(). A cheap sum over
 * the streams (no lock, no system call): call it now and then, not per
 * event. A reader with a live source: 0 and 0 (the total is unknown).
 */
void trawl_reader_progress(const struct trawl_reader *r, uint64_t *done, uint64_t *total);

/* ---------------------------------------------------------- field binding */

/*
 * A consumer names the fields it reads once: "EVENT.FIELD", where EVENT is
 * a glob on event names ("sched_switch", "hello:greeting", "syscall_entry_*")
 * and FIELD a field name as readers show it (no leading '_'), dotted into
 * nested structures. The field is looked up in the payload, then the event
 * context, then the stream's event context. Per event class the reader
 * resolves it to its place on the event's tape; reading it per event is a
 * load (trawl_field_value()).
 */
enum trawl_field_type {
	TRAWL_FIELD_ANY,		/* any single value: integer, float, string */
	TRAWL_FIELD_INT,		/* integers and enumerations: .i / .u */
	TRAWL_FIELD_FLOAT,		/* .d */
	TRAWL_FIELD_STRING,		/* strings and text arrays: .s */
};

/* No event of the traces (yet) matching EVENT is not an error (live
 * sources add classes as they come; they are bound then). */
#define TRAWL_FIELD_OPTIONAL 1u

struct trawl_field {
	/* By event class index (trawl_ctf_event_class.index): the value's
	 * place on the tape; -1: the class has no such field; below -1: its
	 * place depends on the event (after a sequence). The array grows
	 * (and moves) when a live source adds classes. */
	const int32_t *slot;
	const char *spec;		/* as bound */
	const char *name;		/* the FIELD part */
	size_t nmatched;		/* event classes EVENT matched */
	size_t nbound;			/* those that have the field */
};

/*
 * Binds spec for every event class of the reader, and for those a live
 * source adds later. Returns the field (the reader's: valid until
 * trawl_reader_free()), or NULL with errno and a message in err: a bad
 * spec (EINVAL); no event matches EVENT (ENOENT, unless
 * TRAWL_FIELD_OPTIONAL); events match but none has FIELD (ENOENT); a
 * matching event has FIELD with another type than `want` (EINVAL).
 */
const struct trawl_field *trawl_field_bind(struct trawl_reader *r, const char *spec,
					   enum trawl_field_type want, unsigned flags,
					   char *err, size_t errlen);

const union trawl_ctf_value *trawl_field_value_slow(const struct trawl_field *f,
						     const struct trawl_event *ev);
/* What the field is in event class ec: TRAWL_FIELD_INT, _FLOAT or _STRING;
 * TRAWL_FIELD_ANY when ec has no such field. */
enum trawl_field_type trawl_field_type(const struct trawl_field *f,
				       const struct trawl_ctf_event_class *ec);

/* The field's value in ev, or NULL when ev's class has no such field. */
static inline const union trawl_ctf_value *trawl_field_value(const struct trawl_field *f,
							     const struct trawl_event *ev)
{
	int32_t s = f->slot[ev->cls->index];

	if (__builtin_expect(s >= 0, 1))
		return &ev->values[s];
	return s == -1 ? (const union trawl_ctf_value *)0 : trawl_field_value_slow(f, ev);
}

/* ------------------------------------------------------------------ sinks */

/*
 * A sink consumes merged events, a batch at a time: the text printer,
 * `trawl info`'s counters, the sync-point finder, analyses, views.
 * trawl_pipe_run() reads a reader and hands every batch to its sinks in
 * order. A sink binds the fields it needs in start().
 */
struct trawl_sink_ops {
	size_t sz;			/* sizeof(struct trawl_sink_ops) */
	const char *name;
	/* Before the first event: bind fields. 0 or -errno (the run stops). */
	int (*start)(void *self, struct trawl_reader *r);
	/* A batch of events in time order, valid during the call only.
	 * 0, or -errno to stop the run. */
	int (*events)(void *self, const struct trawl_event *ev, size_t n);
	/* After the last event (the end, the limit, a stop): 0 or -errno. */
	int (*finish)(void *self, struct trawl_reader *r);
	/* Optional (live): the reader waited (about 100 ms) and nothing came;
	 * e.g. close a time interval by the wall clock. 0 or -errno (the run
	 * stops). */
	int (*idle)(void *self, struct trawl_reader *r);
	/*
	 * Optional: does the sink need the events of class cls? Asked once
	 * per class after start(). When every sink of a run answers, the
	 * reader's decoder may leave out of its batches the events of
	 * classes none wants: it still decodes them (CTF is read in order)
	 * but does not merge them. Each stream's first and last events and
	 * the first and last of every decoded batch (a few thousand events)
	 * come whatever their class, so that a sink still sees the trace's
	 * span and time go by: a sink must take an event of a class it does
	 * not want as nothing but its time, and give the same results with
	 * or without the others. The streams of a trace none of whose
	 * classes is wanted are decoded only in their first batch and their
	 * last packet (their statistics count those events only). Not for
	 * live readers, nor with a limit.
	 */
	bool (*wants)(void *self, const struct trawl_ctf_event_class *cls);
	/* Optional (live): the reader gave every event it has and is about
	 * to wait for more (each time, however short the wait): e.g. write
	 * out held output. 0 or -errno (the run stops). */
	int (*caught_up)(void *self);
};

struct trawl_sink {
	const struct trawl_sink_ops *ops;
	void *self;
};

struct trawl_run_opts {
	size_t sz;			/* sizeof(struct trawl_run_opts) */
	uint64_t limit;			/* stop after this many events; 0: all */
	/* A corrupt stream: its message (the others go on). NULL: ignored,
	 * but counted (trawl_reader_nerrors()). */
	void (*error)(void *arg, const char *msg);
	void *arg;
	/* Set (to non-zero, e.g. by a signal handler): the run ends after the
	 * batch at hand; the sinks still finish. */
	const volatile int *stop;
};

/*
 * Runs the pipeline: start() of every sink, then every event of r to each
 * sink's events() in batches, then finish() of every sink (also after an
 * error of a sink). Returns 0, 1 when some stream was corrupt (each
 * reported through o->error; the others go on), or the first -errno of a
 * sink or of the reader (out of memory, a live source that failed:
 * reported through o->error too), which stops the run.
 */
int trawl_pipe_run(struct trawl_reader *r, const struct trawl_sink *sinks, size_t nsinks,
		   const struct trawl_run_opts *o);

/* ---------------------------------------------------------------- printer */

/*
 * The output formats of events, by name: "text" (babeltrace2's default
 * text, line for line) and "json" (one JSON object per line). The i-th
 * format's name (and a line of help in *help if not NULL), NULL past the
 * last.
 */
const char *trawl_format_name(size_t i, const char **help);

struct trawl_print_opts {
	size_t sz;			/* sizeof(struct trawl_print_opts) */
	int fd;				/* where the lines go */
	const char *format;		/* NULL: "text" */
	unsigned flags;			/* TRAWL_TEXT_* (text) */
	/* 1: format in the reading thread; 2 (0: default): also in a thread
	 * of the printer's own, which writes. */
	unsigned threads;
	/* Write out every batch as it comes (a live viewer): with one thread. */
	bool flush_batches;
};

/*
 * A sink that prints every event in a format. trawl_print_new(): NULL +
 * errno (EINVAL: an unknown format), message in err. Its sink's events()
 * and finish() return -EPIPE once the descriptor is a closed pipe (stop
 * quietly), another -errno on a write error. Free it after the run.
 */
struct trawl_print;
struct trawl_print *trawl_print_new(const struct trawl_print_opts *o, char *err, size_t errlen);
struct trawl_sink trawl_print_sink(struct trawl_print *p);
uint64_t trawl_print_count(const struct trawl_print *p);	/* events printed */
/* The errno of the printer's first write error (EPIPE: a closed pipe), 0. */
int trawl_print_error(const struct trawl_print *p);
void trawl_print_free(struct trawl_print *p);

/* ---------------------------------------------------------------- counter */

/*
 * A sink that counts events per event class (trawl_ctf_event_class.index)
 * and in all: what `trawl info` reports. NULL + ENOMEM.
 */
struct trawl_count;
struct trawl_count *trawl_count_new(void);
struct trawl_sink trawl_count_sink(struct trawl_count *c);
uint64_t trawl_count_class(const struct trawl_count *c, size_t index);
uint64_t trawl_count_total(const struct trawl_count *c);
void trawl_count_free(struct trawl_count *c);

/* ------------------------------------------------------------------- text */

/*
 * Formats one event as babeltrace2's text sink does by default:
 *   [HH:MM:SS.nnnnnnnnn] (+S.nnnnnnnnn) HOST NAME: { cpu_id = C }, { ctx }, { fields }
 * prev_ts is the previous printed event's ts (INT64_MIN: the first, printed
 * as "(+?.?????????)"). Writes at most cap bytes (no NUL, with '\n');
 * returns the length, or the length needed when it is > cap.
 */
enum {
	TRAWL_TEXT_CLOCK_SECONDS = 1 << 0,	/* [SSSSSSSSSS.nnnnnnnnn] */
	TRAWL_TEXT_CLOCK_GMT = 1 << 1,		/* UTC instead of local time */
	TRAWL_TEXT_NO_DELTA = 1 << 2,
};
size_t trawl_text_event(char *buf, size_t cap, const struct trawl_event *ev,
			int64_t prev_ts, unsigned flags);

/*
 * The fast form of trawl_text_event() for printing many events: a formatter
 * that compiles each event class once into a list of literal pieces and
 * value formatters, caches the date of the current minute, and keeps the
 * previous event's timestamp for the delta (updated only when the line fit
 * in cap). It keeps pointers to the event classes and hostnames it has
 * seen: free it before the reader the events come from. Not thread-safe;
 * use one per thread.
 * trawl_text_new() returns NULL (errno ENOMEM) on failure.
 * trawl_text_format() returns as trawl_text_event() does; both return 0 on
 * ENOMEM or when ev->cls is NULL.
 */
struct trawl_text;
struct trawl_text *trawl_text_new(unsigned flags);
void trawl_text_free(struct trawl_text *t);
size_t trawl_text_format(struct trawl_text *t, char *buf, size_t cap,
			 const struct trawl_event *ev);
/* Sets the previous event's timestamp (INT64_MIN: the next is the first),
 * e.g. when several formatters share one stream of events. */
void trawl_text_set_prev(struct trawl_text *t, int64_t prev_ts);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
