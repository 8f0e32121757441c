/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/stream.h - decoding one CTF data stream: its packets (packet
 * header and context, index), its events (the compiled decoders of
 * decode.h), into events one at a time or into batches.
 *
 * A stream's bytes are a mapped file, or memory the caller owns (memory
 * and live sources). Whoever reads a stream (the merge, lib/pipe) embeds
 * a struct ctf_stream as the first member of its own per-stream state:
 * events carry that state's address as their `stream`.
 */
#ifndef TRAWL_CTF_STREAM_H
#define TRAWL_CTF_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "trawl/ctf.h"
#include "ctf/decode.h"
#include "trawl/xform.h"

/*
 * A decoded event in a batch, as the merging thread reads it: 16 bytes, so
 * that it pulls a quarter of a cache line per event from the decoding core
 * (a whole struct trawl_event is 48). The rest is in arrays it reads less
 * often or never: the values (consecutive on the batch's tape, so an
 * event's start is the sum of the previous ones' counts), the cpu, and the
 * raw clock value, needed only when it is not ts - base.
 */
struct brec {
	int64_t ts;
	uint32_t cls;			/* trawl_ctf_event_class.index */
	uint32_t nv;			/* values on the tape */
};

/*
 * What a stream lost and what was skipped of it, as far as it was read.
 * Losses: the events its tracer discarded (the packets' events_discarded),
 * as time ranges, consecutive lossy packets one range; the first
 * CTF_NLOSS ranges are kept in ctf_stream.loss, then the open one (cur)
 * grows to take the rest. Skips: bytes of the file that could not be read
 * (a packet that is not one, an event that does not decode, an event of
 * no bits): the reader went on at the next packet, and kept the first
 * CTF_NSKIP of them in ctf_stream.skips. The entries of the arrays below
 * nloss and nskip never change once written, so that a batch's copy of
 * this says which of them the consumer may read.
 */
#define CTF_NLOSS 32
#define CTF_NSKIP 16

struct ctf_loss {
	int64_t begin, end;		/* ns, as events' times; INT64_MIN: no time */
	uint64_t events;
};

struct ctf_skip {
	uint64_t off, bytes;		/* in the stream's bytes */
	char why[192];
};

struct ctf_dmg {
	uint64_t lost;			/* events, in every range */
	uint64_t nranges;		/* ranges found (cur included) */
	uint32_t nloss;			/* ranges in ctf_stream.loss */
	uint32_t nskip;			/* skips in ctf_stream.skips */
	bool open;			/* cur is a range */
	struct ctf_loss cur;
	uint64_t skipped, nskips;	/* bytes and skips, in all */
};

struct batch {
	struct brec *rec;
	uint64_t *cyc;			/* per event the raw clock value, unless ghz */
	uint32_t *cpu;			/* per event the packet's cpu_id, unless onecpu */
	uint32_t n, cap;		/* events */
	/*
	 * Leaving out the classes no sink wants (ctf_stream.want), so that
	 * only the first and the last of a batch come whatever their class:
	 * ndec, the events decoded into the batch, those left out included
	 * (a fill stops at cap of them); pend, fill_run() left such an event
	 * last, the next one it decodes takes its place; loose, the general
	 * path left some in, batch_compact() takes them out at the end.
	 */
	uint32_t ndec;
	bool pend, loose;
	bool ghz;			/* every event's cycles == ts - base */
	bool onecpu;			/* every event's cpu == cpu0 */
	uint32_t cpu0;
	uint64_t base;
	union trawl_ctf_value *vals;
	size_t nv, capv;		/* values of the events' tapes */
	int term;			/* 0; after the events: 1 end, -errno error */
	bool hold;			/* term 0: a live stream has nothing more yet */
	struct trawl_reader_stream_stats st;	/* the stream's, after the batch */
	struct ctf_dmg dmg;			/* its losses and skips, after the batch */
	uint64_t off;			/* ctf_stream_consumed() after the batch */
};

/* Does no sink want class ci's events (want, nwant: ctf_stream's)? */
static inline bool ctf_unwanted(const uint8_t *want, uint32_t nwant, uint32_t ci)
{
	return want && ci < nwant && !want[ci];
}

/* A batch of cap events and capv values: 0 or -ENOMEM (then release it). */
TRAWL_HIDDEN int tr_ctf_batch_init(struct batch *b, uint32_t cap, size_t capv);
TRAWL_HIDDEN void tr_ctf_batch_release(struct batch *b);

/* One packet of a stream's index file, in host order. */
struct ient {
	uint64_t off;			/* bytes */
	uint64_t psize, csize;		/* bits */
	uint64_t tsb, tse;		/* clock cycles */
	uint64_t disc;			/* events_discarded */
};

/* What a reader keeps of the events (shared by all its streams). */
struct ctf_range {
	int64_t begin, end;		/* ns, when has_begin / has_end */
	bool has_begin, has_end;
	bool simd;			/* tr_ctf_simd(): the AVX-512 fill loop */
};

/* A trace's decoding state, shared by its streams. */
struct ctf_tdec {
	struct trawl_ctf_trace *meta;
	struct trace_dec td;
	uint32_t maxfix;		/* the most values of a fixed layout */
	const struct trawl_sync_xform *fix; /* the trace's correction, or NULL */
};

/* Compiles the trace's decoders (see tr_ctf_compile_trace()) and sets maxfix.
 * 0 or -errno with a message in err. */
TRAWL_HIDDEN int tr_ctf_tdec_init(struct ctf_tdec *t, struct trawl_ctf_trace *meta,
			       const char *const *events, size_t nevents, char *err, size_t errlen);
TRAWL_HIDDEN void tr_ctf_tdec_release(struct ctf_tdec *t);

struct ctf_stream {
	const struct trawl_reader_stream *handle;	/* events' stream */
	const struct ctf_tdec *tr;
	const struct ctf_range *rg;
	char *path;
	const uint8_t *map;
	uint64_t size;
	uint64_t next_off;		/* next packet, bytes */
	uint64_t advised;		/* pages released below this offset */
	uint64_t pkt_off;		/* current packet, bytes */
	struct dctx d;
	const struct trawl_ctf_stream_class *sc;
	const struct sc_dec *scd;
	/* clock conversion of the current stream class */
	bool ghz;			/* 1 GHz and no correction: ts = base + cycles */
	uint64_t base;			/* ns of the clock's offset from the epoch */
	uint64_t freq;
	const struct trawl_sync_xform *fix; /* the trace's correction, or NULL */
	struct trawl_event ev;
	struct trawl_reader_stream_stats st;
	bool done;
	bool borrowed;			/* map belongs to the caller */
	bool carry;			/* filler: ev (own tape) goes first in the next batch */
	/* filler: the classes (by index, nwant of them) the sinks want; NULL:
	 * all (trawl_sink_ops.wants); a class from nwant on is wanted */
	const uint8_t *want;
	uint32_t nwant;
	/* filler: no class of the stream's trace is wanted (and no time
	 * range): after its first batch, the packets up to the last are not
	 * decoded; cleared once done */
	bool skip;
	int errcode;
	char err[384];
	/*
	 * The index (NULL when absent or found bad). ipos: the entry the next
	 * packet read must match; iseek: the reader started at entry ipos
	 * through the index, not verified yet.
	 */
	struct ient *idx;
	uint32_t nidx, ipos;
	uint64_t isid;			/* the entries' stream_id */
	bool iseek, isought;
	char iwarn[200];		/* written once, before st.index_bad */
	/*
	 * Live streams: when the bytes run out, more(s) maps the next ones
	 * (returns 1 with map, size and next_off set; the bytes before stay
	 * valid until the batch holding their events is given back), says
	 * that the stream ended (0), or that nothing has come yet (-EAGAIN:
	 * hold_ns is then the time before which nothing more will come, ns,
	 * INT64_MIN when unknown). NULL: a file, which ends at its size.
	 */
	int (*more)(struct ctf_stream *s);
	void *more_arg;
	int64_t hold_ns;
	uint64_t fills;			/* tr_ctf_stream_fill() calls so far */
	/* losses and skips (see struct ctf_dmg); filler-owned */
	struct ctf_dmg dmg;
	struct ctf_loss *loss;		/* CTF_NLOSS, from the first range closed */
	struct ctf_skip *skips;		/* CTF_NSKIP, from the first skip */
	uint64_t disc;			/* the last packet's events_discarded */
	int64_t prev_end;		/* the last packet's end, ns (has_prev_end) */
	bool has_prev_end;
	bool seen_magic;		/* a packet header had a magic */
	bool bad_idx;			/* skipping: the index chose where to go on */
	uint64_t bad_off;		/* skipping from there; UINT64_MAX: not */
	char bad_why[192];
};

/* Bytes of the stream read so far: up to the event decoded last (its
 * size once it ended). Read by the stream's filler (or a batch's off). */
static inline uint64_t ctf_stream_consumed(const struct ctf_stream *s)
{
	uint64_t o = s->pkt_off + s->d.pos / 8;

	return s->done || o > s->size ? s->size : o;
}

/*
 * Sets up s to decode path's bytes with trace t's decoders and range rg
 * (both must outlive s); `handle`: what events carry as their stream (the
 * reader's state that embeds s). No bytes yet: map them with
 * tr_ctf_stream_map_file() or set map and size (borrowed). 0 or -ENOMEM.
 */
TRAWL_HIDDEN int tr_ctf_stream_init(struct ctf_stream *s, const struct ctf_tdec *t,
				 const struct ctf_range *rg, const char *path,
				 const struct trawl_reader_stream *handle);
TRAWL_HIDDEN void tr_ctf_stream_release(struct ctf_stream *s);
/* Maps the file at s->path, and its index (index/NAME.idx under dir) if
 * there is one. 0 or -errno with a message in err. */
TRAWL_HIDDEN int tr_ctf_stream_map_file(struct ctf_stream *s, const char *dir, const char *name,
				     char *err, size_t errlen);

/* Decodes the stream's next event into *e (s->ev, or a batch's): 1, 0 at
 * the end, -errno on corruption (the message in s->err), -EAGAIN when a
 * live stream has nothing more yet (nothing else changed). */
TRAWL_HIDDEN int tr_ctf_stream_next(struct ctf_stream *s, struct trawl_event *e);
/* Decodes the stream's next events into b, up to its capacity, then the
 * end or an error as b->term (or b->hold: a live stream has nothing more
 * yet); b->st gets the stream's stats. */
TRAWL_HIDDEN void tr_ctf_stream_fill(struct ctf_stream *s, struct batch *b);
/*
 * The trace's decoders were recompiled from a longer metadata (a live
 * trace whose metadata grew: the classes before are the same): s decodes
 * with t from now on, where it is (t may be where its decoders were
 * before, replaced: oldregs is the old register count). 0 or -ENOMEM.
 */
TRAWL_HIDDEN int tr_ctf_stream_retarget(struct ctf_stream *s, const struct ctf_tdec *t,
				     uint32_t oldregs);
/* A time in the stream's clock cycles in ns (corrected), as its events'
 * times are; before its first packet, with the trace's first clock. */
TRAWL_HIDDEN int64_t tr_ctf_stream_cycles_ns(struct ctf_stream *s, uint64_t cycles);

#define CTF_PREFETCH 1024		/* bytes ahead of the event being decoded */

/*
 * LTTng's event headers, decoded here only (tr_ctf_stream_next(), the fast
 * path below and the fill loops of fill-run.h). Compact: a 5-bit id and a
 * 27-bit timestamp in 4 bytes; large: a 16-bit id and a 32-bit timestamp
 * in 6 bytes. The id 31 (compact) or 65535 (large) escapes to the
 * extended form: a 32-bit id and a 64-bit timestamp after the escape.
 */
#define CTF_HDR_BYTES(compact) ((compact) ? 4u : 6u)
#define CTF_HDR_EXT_BITS(compact) ((compact) ? 104u : 112u)

/* The short form at b: its id and the clock it makes of `clock`; false
 * when the id escapes to the extended form (then *ncl means nothing). */
static inline __attribute__((always_inline)) bool ctf_hdr_short(bool compact, const uint8_t *b,
								uint64_t clock, uint64_t *id,
								uint64_t *ncl)
{
	uint32_t x;

	if (compact) {
		memcpy(&x, b, 4);
		x = le32toh(x);
		*id = x & 31;
		*ncl = ctf_clock_update(clock, x >> 5, 27);
		return *id != 31;
	}
	uint16_t h;
	memcpy(&h, b, 2);
	memcpy(&x, b + 2, 4);
	*id = le16toh(h);
	*ncl = ctf_clock_update(clock, le32toh(x), 32);
	return *id != 65535;
}

/* The extended form at b (the header's start): its id and timestamp. */
static inline void ctf_hdr_ext(bool compact, const uint8_t *b, uint64_t *id, uint64_t *clock)
{
	const uint8_t *p = b + (compact ? 1 : 2);
	uint32_t x;
	uint64_t ts;

	memcpy(&x, p, 4);
	memcpy(&ts, p + 4, 8);
	*id = le32toh(x);
	*clock = le64toh(ts);
}

/*
 * Cycles to ns for a clock that is not 1 GHz, as babeltrace2 does it (so that
 * `trawl print` and babeltrace2 print the same nanosecond): a double product
 * and quotient, truncated. Monotonic in v; within 1 ns of the exact value.
 */
static inline uint64_t ctf_ns_from_cycles(uint64_t freq, uint64_t v)
{
	double ns = (1e9 * (double)v) / (double)freq;
	return ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ns;
}

static inline int64_t ctf_to_ns(const struct ctf_stream *s, uint64_t cyc)
{
	if (likely(s->ghz))
		return (int64_t)(s->base + cyc);
	/* wraps (not UB) on absurd values from corrupt data */
	int64_t ns = (int64_t)(s->base + (s->freq == 1000000000 ? cyc : ctf_ns_from_cycles(s->freq, cyc)));
	return s->fix ? trawl_sync_xform_apply(s->fix, ns) : ns;
}

/*
 * The fast path of tr_ctf_stream_next() for the common event: an LTTng compact or
 * large header (not extended), a fixed-layout class that passes the filters,
 * well inside the packet and the file. Returns 1 with the event decoded, or
 * 0 having changed nothing: then tr_ctf_stream_next() does the general work.
 */
static inline __attribute__((always_inline)) int ctf_fast_next(struct ctf_stream *s,
							       struct trawl_event *e)
{
	struct dctx *c = &s->d;
	const struct sc_dec *sd = s->scd;
	uint64_t p = (c->pos + 7) & ~(uint64_t)7, id, clock;
	unsigned hb;

	if (unlikely(!sd || p >= c->end || c->end - p < 112))
		return 0;
	const uint8_t *b = c->pkt + (p >> 3);
	__builtin_prefetch(b + CTF_PREFETCH);
	if (sd->hdr != HDR_COMPACT && sd->hdr != HDR_LARGE)
		return 0;
	bool compact = sd->hdr == HDR_COMPACT;
	if (unlikely(!ctf_hdr_short(compact, b, c->clock, &id, &clock)))
		return 0;
	hb = CTF_HDR_BYTES(compact);
	if (unlikely(id >= sd->nbyid))
		return 0;
	const struct trawl_ctf_event_class *ec = sd->byid[id];
	if (unlikely(!ec))
		return 0;
	const struct ec_dec *ed = ec->priv;
	const uint8_t *body = b + hb;
	uint64_t end = p + ((uint64_t)hb + ed->fixed_bytes) * 8;
	if (unlikely(!ed->fast || end > c->end ||
		     (uint64_t)(s->map + s->size - body) < (uint64_t)ed->fixed_bytes + 8))
		return 0;
	int64_t ts = ctf_to_ns(s, clock);
	if (unlikely(s->rg->has_begin | s->rg->has_end) &&
	    ((s->rg->has_begin && ts < s->rg->begin) || (s->rg->has_end && ts > s->rg->end)))
		return 0;
	c->clock = clock;
	c->pos = end;
	ctf_decode_fixed(c, ed, body, true);
	s->st.events++;
	if (unlikely(s->st.first_ts == INT64_MAX))
		s->st.first_ts = ts;
	s->st.last_ts = ts;
	e->ts = ts;
	e->cycles = clock;
	e->cls = ec;
	e->stream = s->handle;
	e->values = c->tape;
	e->nvalues = c->nv;
	e->cpu = s->ev.cpu;
	return 1;
}

#endif
