/* SPDX-License-Identifier: MIT */
/*
 * trawl/ctf.h - the CTF 1.8 trace model, metadata parser, writer, and the
 * decoded form of events (what trawl/pipe.h's readers hand out).
 *
 * One model (struct trawl_ctf_trace and its types) is shared by the three:
 * the metadata parser builds it from TSDL text, the writer builds it through
 * the constructors below and prints it as TSDL, and the reader compiles a
 * decoder per event class from it.
 *
 * Conventions: functions returning int give 0 (or a count) on success and
 * -errno on failure; functions returning a pointer give NULL and set errno.
 * Where an error message is useful, the caller passes a buffer (err, errlen)
 * that receives one line naming the file and, where it applies, the byte
 * offset. Objects made by trawl_*_new are released by the matching _free,
 * which accepts NULL.
 */
#ifndef TRAWL_CTF_H
#define TRAWL_CTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <trawl/xform.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libtrawl is built with hidden visibility; its API is what this header
 * declares (the version script then keeps only trawl_* names). */
#pragma GCC visibility push(default)

/* ------------------------------------------------------------------ model */

enum trawl_ctf_kind {
	TRAWL_CTF_INT,
	TRAWL_CTF_FLOAT,
	TRAWL_CTF_ENUM,
	TRAWL_CTF_STRING,
	TRAWL_CTF_STRUCT,
	TRAWL_CTF_VARIANT,
	TRAWL_CTF_ARRAY,
	TRAWL_CTF_SEQUENCE,
};

enum trawl_ctf_byte_order { TRAWL_CTF_LE = 0, TRAWL_CTF_BE = 1 };

enum trawl_ctf_encoding {
	TRAWL_CTF_ENC_NONE = 0,
	TRAWL_CTF_ENC_UTF8,
	TRAWL_CTF_ENC_ASCII,
};

struct trawl_ctf_type;

struct trawl_ctf_field {
	const char *name;		/* as written in TSDL (a leading '_' kept) */
	struct trawl_ctf_type *type;
};

struct trawl_ctf_enum_range {
	const char *label;
	/* Bounds, inclusive; interpreted as signed when the container is. */
	uint64_t lo, hi;
};

struct trawl_ctf_type {
	enum trawl_ctf_kind kind;
	uint32_t align;			/* in bits, a power of two >= 1 */
	union {
		struct {
			uint32_t size;		/* bits, 1..64 */
			bool sign;
			uint8_t byte_order;	/* enum trawl_ctf_byte_order */
			uint8_t base;		/* 2, 8, 10 or 16 (display) */
			uint8_t encoding;	/* enum trawl_ctf_encoding */
			int32_t clock;		/* index in trace->clocks, or -1 */
		} i;
		struct {
			uint32_t exp_dig, mant_dig;	/* 8/24 float, 11/53 double */
			uint8_t byte_order;
		} f;
		struct {
			struct trawl_ctf_type *container;	/* an INT */
			struct trawl_ctf_enum_range *ranges;
			size_t n;
		} e;
		struct {
			struct trawl_ctf_field *fields;
			size_t n;
		} s;
		struct {
			const char *tag;	/* path of the tag, as written */
			struct trawl_ctf_field *options;
			size_t n;
		} v;
		struct {
			struct trawl_ctf_type *elem;
			uint64_t length;
		} a;
		struct {
			struct trawl_ctf_type *elem;
			const char *length;	/* path of the length field */
		} q;
		struct {
			uint8_t encoding;
		} str;
	} u;
};

/* The element type of an array or a sequence; NULL for other kinds. */
static inline struct trawl_ctf_type *trawl_ctf_type_elem(const struct trawl_ctf_type *t)
{
	return t->kind == TRAWL_CTF_ARRAY ? t->u.a.elem :
	       t->kind == TRAWL_CTF_SEQUENCE ? t->u.q.elem : NULL;
}

struct trawl_ctf_clock {
	const char *name;
	const char *description;	/* may be NULL */
	uint8_t uuid[16];
	bool has_uuid;
	bool absolute;
	uint64_t freq;			/* Hz, default 1e9 */
	uint64_t precision;
	int64_t offset_s;		/* epoch -> clock zero: seconds ... */
	int64_t offset;			/* ... plus cycles */
};

struct trawl_ctf_env {
	const char *key;
	bool is_int;
	int64_t ival;
	const char *sval;		/* when !is_int */
};

struct trawl_ctf_event_class {
	uint64_t id;
	uint64_t stream_id;
	const char *name;
	int64_t loglevel;		/* INT64_MIN when absent */
	const char *model_emf_uri;	/* may be NULL */
	struct trawl_ctf_type *context;	/* may be NULL */
	struct trawl_ctf_type *fields;	/* may be NULL (no payload) */
	void *priv;			/* the reader's compiled decoder */
	/* The reader's dense number of the class: 0 .. trawl_reader_nclasses()
	 * - 1 across every trace of the reader, set by trawl_reader_new() (so
	 * that consumers can count per class with an array); 0 elsewhere. */
	uint32_t index;
};

struct trawl_ctf_stream_class {
	uint64_t id;
	struct trawl_ctf_type *packet_context;	/* may be NULL */
	struct trawl_ctf_type *event_header;	/* may be NULL */
	struct trawl_ctf_type *event_context;	/* may be NULL */
	struct trawl_ctf_event_class **events;
	size_t nevents;
	void *priv;
};

struct trawl_ctf_arena;			/* bump allocator owning the model */

/* A trace's metadata: what one `metadata` file describes. */
struct trawl_ctf_trace {
	uint32_t major, minor;
	uint8_t byte_order;		/* the trace's native byte order */
	uint8_t uuid[16];
	bool has_uuid;
	struct trawl_ctf_type *packet_header;	/* may be NULL */
	struct trawl_ctf_clock *clocks;
	size_t nclocks;
	struct trawl_ctf_env *env;
	size_t nenv;
	struct trawl_ctf_stream_class **streams;
	size_t nstreams;
	struct trawl_ctf_arena *arena;
};

/* Looks up env[key]; NULL when absent. */
const struct trawl_ctf_env *trawl_ctf_trace_env(const struct trawl_ctf_trace *t,
						const char *key);

/* --------------------------------------------------------------- metadata */

/*
 * Reads a `metadata` file, text (starting with "/" "* CTF 1.8") or packetized
 * (packets with magic 0x75D11D57, either byte order), and returns the TSDL
 * text in a malloc'd, NUL-terminated buffer the caller frees.
 * Returns NULL and sets errno; err receives the reason, starting with
 * "PATH: " (and the byte offset where one applies).
 */
char *trawl_ctf_metadata_read(const char *path, size_t *len,
			      char *err, size_t errlen);

/*
 * Parses TSDL text into a new model. Returns NULL and sets errno (EINVAL on
 * a syntax or semantic error, with "line L: ..." in err).
 * Free with trawl_ctf_trace_free().
 */
struct trawl_ctf_trace *trawl_ctf_metadata_parse(const char *text, size_t len,
						 char *err, size_t errlen);

void trawl_ctf_trace_free(struct trawl_ctf_trace *t);

/* Prints the model as TSDL text (what the writer writes; the parser reads
 * it back to the same model). Returns 0, or -EIO on a write error. */
int trawl_ctf_metadata_print(const struct trawl_ctf_trace *t, FILE *out);

/* The values a clock declares (see trawl_ctf_metadata_set_clocks()). */
struct trawl_ctf_clock_values {
	uint64_t freq;
	int64_t offset_s, offset;
};

/*
 * Rewrites TSDL text: in the k-th top-level clock block (k < n), the freq,
 * offset_s and offset statements are replaced by vals[k] (after a comment
 * holding `note`, if not NULL); every other byte is kept. The text is read
 * with the parser's own lexer (comments and strings are never mistaken for
 * statements). Returns the new text (malloc'd, NUL-terminated; the caller
 * frees it), or NULL + errno with a message in err.
 */
char *trawl_ctf_metadata_set_clocks(const char *text, size_t len,
				    const struct trawl_ctf_clock_values *vals, size_t n,
				    const char *note, char *err, size_t errlen);

/* ----------------------------------------------------------------- writer */

/*
 * The writer always lays out fields byte-aligned (align = 8 bits, as LTTng
 * does on x86), little-endian, so an event's payload does not depend on
 * where in the packet it lands. Event headers are compact (5-bit id, 27-bit
 * timestamp) or large (16-bit id, 32-bit timestamp); the extended form is
 * written whenever the id does not fit or the timestamp delta since the
 * previous event of the stream would wrap.
 */
enum trawl_ctf_header {
	TRAWL_CTF_HEADER_COMPACT,
	TRAWL_CTF_HEADER_LARGE,
	/* struct { u16 id; u64 timestamp; }: 10 bytes, no escape (user space) */
	TRAWL_CTF_HEADER_FIXED,
};

struct trawl_ctf_writer_opts {
	size_t sz;			/* sizeof(struct trawl_ctf_writer_opts) */
	const char *path;		/* trace directory, created */
	const char *hostname;
	const char *domain;		/* "kernel" or "ust" */
	const char *tracer_name;	/* default "trawl" */
	const uint8_t *trace_uuid;	/* NULL: random */
	const uint8_t *clock_uuid;	/* NULL: this machine's boot_id */
	const char *clock_name;		/* default "monotonic" */
	uint64_t clock_freq;		/* default 1e9 */
	int64_t clock_offset_s;		/* epoch -> clock zero; when both are */
	int64_t clock_offset;		/* 0, measured at creation */
	size_t packet_size;		/* bytes, default 256 KiB, >= 4 KiB */
	/*
	 * 0: packets are written by the thread that finishes them. Else they
	 * are copied into a queue of this many bytes and written by a thread
	 * of the writer's own (with the scheduling policy of the thread that
	 * creates the writer), so that a slow disk stalls the caller only
	 * once the queue is full (a recorder draining buffers keeps going).
	 * Write errors then surface at a later call or at close.
	 */
	size_t io_queue;
	/*
	 * A second destination of the trace, as it is written: a trawl relay
	 * (trawl_relay_dest_new(), trawl/relay.h; docs/relay.md). The writer
	 * opens it at creation (refused or unreachable: NULL and errno, the
	 * reason in err) and hands it the metadata, each stream, each packet
	 * with its index entry, and beacons, through a write queue of its own
	 * when io_queue is set; with path NULL, the trace goes only there.
	 * The clock must be final before the first stream: the metadata goes
	 * out then, and only new stream and event classes after. The writer
	 * owns dest from trawl_ctf_writer_new() on, also when that fails.
	 */
	struct trawl_ctf_dest *dest;
	char *err;			/* a message on failure, if not NULL */
	size_t errlen;
	/*
	 * The directory the trace is written beneath (path is inside it),
	 * or NULL: path itself. What the writer makes or opens below root
	 * (the directories down to path, the stream, index and metadata
	 * files) is never reached through a symbolic link: a link there, or
	 * anything but a directory or a regular file with no other hard
	 * link, is refused (EPERM or ELOOP, the reason in err or
	 * trawl_ctf_writer_why()), so that a recorder writing into a
	 * directory others can write truncates nothing outside it.
	 */
	const char *root;
};

struct trawl_ctf_writer;
struct trawl_ctf_wstream;
/* A destination (see trawl_ctf_writer_opts.dest). */
struct trawl_ctf_dest;

/* Frees a destination that no writer took (a writer frees its own).
 * Accepts NULL. */
void trawl_ctf_dest_free(struct trawl_ctf_dest *d);

/*
 * Creates the trace directory (and its index/), and a model with env
 * hostname (default: this machine's), domain (default "ust"), tracer_name,
 * tracer_major, tracer_minor, and one clock (absolute = true). Stream files
 * are written packet by packet as events come; `metadata` at once, again
 * before a packet whose stream or event classes it does not declare yet
 * (so that a trace being written is readable up to its last complete
 * packet; the clock and environment are final at close). Returns NULL and
 * sets errno (EINVAL for bad options). Free with trawl_ctf_writer_free(),
 * which also frees the model and the streams.
 */
struct trawl_ctf_writer *trawl_ctf_writer_new(const struct trawl_ctf_writer_opts *o);
/* Why the last file or directory of the trace was refused (opts.root),
 * "" when none was. */
const char *trawl_ctf_writer_why(const struct trawl_ctf_writer *w);
/* Flushes every stream, writes metadata and indexes. Returns 0 or -errno. */
int trawl_ctf_writer_close(struct trawl_ctf_writer *w);
void trawl_ctf_writer_free(struct trawl_ctf_writer *w);	/* closes if open */

/* An env entry (set again: replaced). 0, -EINVAL, -ENOMEM, or -EBUSY once
 * a streaming writer sent its metadata (its first stream was created). */
int trawl_ctf_writer_env_str(struct trawl_ctf_writer *w, const char *key, const char *val);
int trawl_ctf_writer_env_int(struct trawl_ctf_writer *w, const char *key, int64_t val);

/* The model being built; its types are made with the constructors below. */
struct trawl_ctf_trace *trawl_ctf_writer_trace(struct trawl_ctf_writer *w);

/* Type constructors: the types live in the writer's arena. */
struct trawl_ctf_type *trawl_ctf_type_int(struct trawl_ctf_writer *w, unsigned bits,
					  bool sign, unsigned base);
struct trawl_ctf_type *trawl_ctf_type_float(struct trawl_ctf_writer *w, unsigned bits); /* 32, 64 */
struct trawl_ctf_type *trawl_ctf_type_string(struct trawl_ctf_writer *w);
struct trawl_ctf_type *trawl_ctf_type_enum(struct trawl_ctf_writer *w,
					   struct trawl_ctf_type *container);
int trawl_ctf_enum_add(struct trawl_ctf_writer *w, struct trawl_ctf_type *e,
		       const char *label, uint64_t lo, uint64_t hi);
struct trawl_ctf_type *trawl_ctf_type_array(struct trawl_ctf_writer *w,
					    struct trawl_ctf_type *elem, uint64_t n);
/*
 * A sequence whose length is the earlier sibling field named `length` (an
 * unsigned integer), given as the caller named it: the '_' is added as for
 * struct fields below.
 */
struct trawl_ctf_type *trawl_ctf_type_sequence(struct trawl_ctf_writer *w,
					       struct trawl_ctf_type *elem,
					       const char *length);
struct trawl_ctf_type *trawl_ctf_type_struct(struct trawl_ctf_writer *w);
/*
 * Appends field `name` (an identifier) of type t. LTTng convention: the model
 * (and so the metadata) stores the name with one leading '_' added, e.g. the
 * caller gives "prev_tid" and the model holds "_prev_tid"; readers (ours and
 * babeltrace2) strip one leading underscore, so events show "prev_tid".
 * Returns 0, -EINVAL (bad name; a sequence whose length is not an earlier
 * unsigned integer sibling), -EEXIST (duplicate name) or -ENOMEM.
 * Text: an 8-bit integer type with u.i.encoding set to TRAWL_CTF_ENC_UTF8
 * (the model is public) makes arrays/sequences of it print as strings.
 */
int trawl_ctf_struct_add(struct trawl_ctf_writer *w, struct trawl_ctf_type *s,
			 const char *name, struct trawl_ctf_type *t);

/*
 * A stream class: header form, and an optional event context struct (its
 * fields are written by the caller right after the header, before the
 * payload). Returns NULL on error.
 */
struct trawl_ctf_stream_class *
trawl_ctf_writer_stream_class(struct trawl_ctf_writer *w, enum trawl_ctf_header h,
			      struct trawl_ctf_type *event_context);

/* An event class: fields is a struct (or NULL for no payload). */
struct trawl_ctf_event_class *
trawl_ctf_writer_event_class(struct trawl_ctf_writer *w,
			     struct trawl_ctf_stream_class *sc, const char *name,
			     int64_t loglevel, struct trawl_ctf_type *fields);

/* A stream (one file `<name>_<cpu>`, e.g. channel0_1) of class sc. */
struct trawl_ctf_wstream *trawl_ctf_writer_stream(struct trawl_ctf_writer *w,
						  struct trawl_ctf_stream_class *sc,
						  const char *name, uint32_t cpu);

/*
 * Writes one event: ts in clock cycles (non-decreasing per stream), then the
 * serialized context + payload bytes, laid out as the writer's types say
 * (byte-aligned little-endian values, strings with their NUL, sequence
 * lengths before their elements). Use struct trawl_ctf_buf to build them.
 * Returns 0, or -EINVAL if ts goes backwards, -E2BIG if the event cannot fit
 * in an empty packet, -errno on I/O error.
 */
int trawl_ctf_wstream_event(struct trawl_ctf_wstream *s,
			    const struct trawl_ctf_event_class *ec, uint64_t ts,
			    const void *payload, size_t len);
/* Counts n events lost before the next one (cumulative events_discarded). */
void trawl_ctf_wstream_discarded(struct trawl_ctf_wstream *s, uint64_t n);
/* Closes the current packet now (an empty one if it holds no event), with
 * timestamp_end = ts. Returns 0 or -errno. */
int trawl_ctf_wstream_flush(struct trawl_ctf_wstream *s, uint64_t ts);

/*
 * Appends a ready-made packet of `size` bytes (the writer's packet layout,
 * see lib/ctf/writer.c: header with this stream's class id and instance id,
 * context filled in, events, zero padding) and its index entry, taken from
 * the packet's context. The packet is written as is, with one write.
 * Streams fed this way take no trawl_ctf_wstream_event(). Returns 0,
 * -EINVAL (bad magic, ids, sizes, or timestamps going backwards), -errno on
 * I/O error.
 */
int trawl_ctf_wstream_packet(struct trawl_ctf_wstream *s, const void *pkt, size_t size);
/*
 * Live streaming: tells the destination (a relay) that no event of s
 * before ts is still to come (live viewers then read past an idle
 * stream); ts must not be below the stream's last event. Without a
 * destination, nothing. Returns 0, -EBUSY
 * when events wait in the stream's open packet (flush it, or use
 * trawl_ctf_wstream_tick()), -EINVAL, or -errno.
 */
int trawl_ctf_wstream_beacon(struct trawl_ctf_wstream *s, uint64_t ts);
/*
 * 0, or the error (-errno) that made a writer with a local copy give up
 * its destination: a relay closed, or did not read for 10 s. The local
 * files go on and are complete. (Without a local copy the destination's
 * error is the writer's.)
 */
int trawl_ctf_writer_relay_error(const struct trawl_ctf_writer *w);
/*
 * What the destination (a relay) did not store, once the writer is
 * closed: *events, the events the writer took (written with
 * trawl_ctf_wstream_event(), whether or not their packet went out), and
 * *discarded, those of them the relay did not store (cut off at its last
 * whole packet: the disk full, a quota, its buffers; or lost; or left in a
 * packet that was never sent). Returns 0 when exact; -ENODATA when not
 * known (*discarded at most that): the relay did not say where it cut
 * (an older relay, a connection lost without its word), or the writer was
 * given packets whole (trawl_ctf_wstream_packet(), whose events it does
 * not count); -ENOENT without a destination; -EBUSY before
 * trawl_ctf_writer_close(); -EINVAL.
 */
int trawl_ctf_writer_relay_discarded(const struct trawl_ctf_writer *w, uint64_t *events,
				     uint64_t *discarded);
/*
 * Why the destination failed, in words ("relay HOST:PORT refused: session
 * S is at its disk quota ..."), with or without a local copy; "" while it
 * did not (or it gave no reason). Owned by w. The relay's words as they
 * came: escape them before printing (a peer's control characters).
 */
const char *trawl_ctf_writer_relay_why(const struct trawl_ctf_writer *w);
/*
 * A live timer's tick: closes the open packet at ts if it holds events
 * (trimmed to its content, see below), else sends a beacon at ts. Either
 * way, later events of s must not be before ts. Returns 0 or -errno.
 * A writer with a destination trims every packet it closes itself to its
 * content (rounded up to 8 bytes): live flushes send small packets.
 */
int trawl_ctf_wstream_tick(struct trawl_ctf_wstream *s, uint64_t ts);
/* Hands the destination the metadata declared since the last packet, now
 * (the writer does it before each packet anyway). 0, or -errno. */
int trawl_ctf_writer_sync_metadata(struct trawl_ctf_writer *w);
/* Writes the local metadata again now, whole (a clock refined while the
 * trace is written: readers of the growing trace see it). 0, or -errno. */
int trawl_ctf_writer_metadata_now(struct trawl_ctf_writer *w);
/* The stream_instance_id the writer gave the stream (in its packet headers). */
uint64_t trawl_ctf_wstream_instance_id(const struct trawl_ctf_wstream *s);

/* A little serializer for payloads. */
struct trawl_ctf_buf {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};
static inline void trawl_ctf_buf_init(struct trawl_ctf_buf *b, void *mem, size_t cap)
{
	b->p = (uint8_t *)mem; b->len = 0; b->cap = cap; b->overflow = false;
}
static inline void trawl_ctf_buf_put(struct trawl_ctf_buf *b, const void *v, size_t n)
{
	if (b->len + n > b->cap) { b->overflow = true; return; }
	for (size_t i = 0; i < n; i++)
		b->p[b->len + i] = ((const uint8_t *)v)[i];
	b->len += n;
}
static inline void trawl_ctf_buf_u8(struct trawl_ctf_buf *b, uint8_t v) { trawl_ctf_buf_put(b, &v, 1); }
static inline void trawl_ctf_buf_u16(struct trawl_ctf_buf *b, uint16_t v) { trawl_ctf_buf_put(b, &v, 2); }
static inline void trawl_ctf_buf_u32(struct trawl_ctf_buf *b, uint32_t v) { trawl_ctf_buf_put(b, &v, 4); }
static inline void trawl_ctf_buf_u64(struct trawl_ctf_buf *b, uint64_t v) { trawl_ctf_buf_put(b, &v, 8); }
static inline void trawl_ctf_buf_f32(struct trawl_ctf_buf *b, float v) { trawl_ctf_buf_put(b, &v, 4); }
static inline void trawl_ctf_buf_f64(struct trawl_ctf_buf *b, double v) { trawl_ctf_buf_put(b, &v, 8); }
void trawl_ctf_buf_str(struct trawl_ctf_buf *b, const char *s);	/* with its NUL */

/* --------------------------------------------------------- decoded events */

/*
 * Decoded values: one flat "tape" per event, in pre-order over the event's
 * types (stream event context, then event context, then payload):
 *  INT, ENUM -> .u / .i (sign-extended when signed)
 *  FLOAT     -> .d
 *  STRING    -> .s (points into the mapped trace; not NUL-terminated when
 *               it came from a byte array/sequence of encoded chars)
 *  ARRAY, SEQUENCE of encoded 8-bit ints (text) -> one .s entry
 *  ARRAY, SEQUENCE otherwise -> .n (element count), then the elements
 *  VARIANT   -> .n (selected option index), then that option's value
 *  STRUCT    -> nothing of its own, then its fields in order
 */
union trawl_ctf_value {
	uint64_t u;
	int64_t i;
	double d;
	uint64_t n;
	struct {
		const char *p;
		uint32_t len;
	} s;
};

struct trawl_reader_stream;	/* one data stream (trawl/pipe.h) */

/* A stream's statistics (see trawl_reader_stream_stats() in trawl/pipe.h). */
struct trawl_reader_stream_stats {
	uint64_t packets;
	uint64_t events;
	uint64_t discarded;		/* from the last packet's events_discarded */
	uint64_t bytes;			/* file size */
	uint64_t stream_class_id;
	uint64_t stream_instance_id;	/* or UINT64_MAX */
	int64_t first_ts, last_ts;	/* ns; INT64_MAX/INT64_MIN if no event */
	uint32_t cpu;
	/*
	 * The stream's index (index/<file>.idx beside the trace, LTTng format
	 * 1.0 or 1.1). index_used: present, valid and agreeing with every
	 * packet read so far; with a begin time the reader started at the
	 * first packet whose timestamp_end is >= begin, without reading the
	 * earlier ones (packets, events and first_ts then count only what
	 * was read). index_bad: present but malformed, or disagreeing with
	 * the data, so ignored from then on (the data file is the truth):
	 * index_warning says why (NULL otherwise; valid until the reader is
	 * freed). Neither: no index file.
	 */
	bool index_used, index_bad;
	const char *index_warning;
};

/* A decoded event. */
struct trawl_event {
	int64_t ts;			/* ns since the epoch (clock offset applied) */
	uint64_t cycles;		/* the raw clock value */
	const struct trawl_ctf_event_class *cls;
	const struct trawl_reader_stream *stream;
	const union trawl_ctf_value *values;	/* the tape, see above */
	uint32_t nvalues;
	uint32_t cpu;			/* packet context cpu_id, or 0 */
};

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
