/* SPDX-License-Identifier: MIT */
/*
 * The CTF reader: finds traces under the given paths, maps their stream
 * files, walks packets and events with the compiled decoders of decode.c,
 * and merges every stream of every trace in timestamp order (a binary heap
 * keyed on (ts, stream order)).
 *
 * A stream's state is one decode context (reader-internal.h) plus the event
 * it holds for the merge. trawl_reader_next() advances the stream whose
 * event it returned last time, then returns the heap's top: the event and
 * its tape stay valid until the next call.
 *
 * With threads >= 2 (trawl_reader_opts), a worker decodes the streams ahead
 * into batches and trawl_reader_next() only merges them with a loser tree;
 * see "decode-ahead" below.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf/reader-internal.h"
#include "ctf/packet.h"	/* CTF_MAGIC */

#define RELEASE_CHUNK (1u << 20)	/* drop consumed pages every 1 MiB (each call costs TLB-shootdown IPIs) ... */
#define RELEASE_LAG (512u << 10)	/* ... this far behind the decoder */
#define MAX_DIR_DEPTH 16
#define PREFETCH 1024		/* bytes ahead of the event being decoded */

/* Decode-ahead (threads >= 2): see the comment before fill(). */
#define NQ 3			/* batches per stream */
#define BATCH_BUDGET (6u << 20)	/* bytes of batches, all streams together */
#define BATCH_MAX_EVENTS 4096u
#define BATCH_MIN_EVENTS 64u
#define AUTO_MIN_BYTES (2u << 20)	/* threads = 0: a worker from this much data */

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

struct batch {
	struct brec *rec;
	uint64_t *cyc;			/* per event the raw clock value, unless ghz */
	uint32_t *cpu;			/* per event the packet's cpu_id, unless onecpu */
	uint32_t n, cap;		/* events */
	bool ghz;			/* every event's cycles == ts - base */
	bool onecpu;			/* every event's cpu == cpu0 */
	uint32_t cpu0;
	uint64_t base;
	union trawl_ctf_value *vals;
	size_t nv, capv;		/* values of the events' tapes */
	int term;			/* 0; after the events: 1 end, -errno error */
	struct trawl_reader_stream_stats st;	/* the stream's, after the batch */
};

/* One packet of a stream's index file, in host order. */
struct ient {
	uint64_t off;			/* bytes */
	uint64_t psize, csize;		/* bits */
	uint64_t tsb, tse;		/* clock cycles */
};

struct trawl_reader_stream {
	struct trawl_reader_trace *trace;
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
	uint32_t order;
	bool done;
	bool borrowed;			/* map belongs to the caller */
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
	 * Decode-ahead. Everything above is the filler's: the one thread
	 * (worker or consumer) that has set qbusy, or the consumer alone when
	 * there is no worker. The q* fields are under r->mu. cur, cpos and pub
	 * are the consumer's (the thread calling trawl_reader_next()).
	 */
	struct batch *q;		/* NQ batches */
	uint32_t qhead, qtail;		/* batches filled / given back */
	bool qbusy;			/* q[qhead % NQ] is being filled */
	bool qfin;			/* the last batch (term != 0) is filled */
	bool carry;			/* filler: s->ev (own tape) goes first in the next batch */
	bool threaded;			/* the consumer reads pub, not st */
	struct batch *cur;		/* q[qtail % NQ] while being merged */
	struct trawl_reader_stream_stats pub;
};

struct trawl_reader_trace {
	char *path;
	char *real;
	const char *hostname;
	const struct trawl_sync_xform *fix; /* &fixv or NULL */
	struct trawl_sync_xform fixv;	/* from trawl_reader_opts.fixes */
	struct trawl_ctf_trace *meta;
	struct trace_dec td;
	uint32_t maxfix;
	struct trawl_reader_stream **streams;
	size_t nstreams;
	bool borrowed;			/* meta belongs to the caller */
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
	int64_t begin, end;
	bool has_begin, has_end;
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
	bool simd;			/* ctf_simd(): the AVX-512 fill loop */
	uint32_t batch_events;		/* 0: from BATCH_BUDGET */
	struct trawl_reader_stream **all;	/* by order */
	struct merge *m;		/* the consumer's, aligned */
	uint32_t rr;			/* r->mu: where the next pick starts */
	pthread_t wthread;
	pthread_mutex_t mu;
	pthread_cond_t wcv, mcv;	/* the worker / the consumer waits */
	bool widle, mwait, stop;	/* r->mu */
};

/* ------------------------------------------------------------ streams */

__attribute__((format(printf, 3, 4), noinline, cold))
static int stream_fail(struct trawl_reader_stream *s, uint64_t byte, const char *fmt, ...)
{
	int n = snprintf(s->err, sizeof(s->err), "%s: byte %" PRIu64 ": ", s->path, byte);
	if (n < 0 || (size_t)n >= sizeof(s->err))
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err + n, sizeof(s->err) - (size_t)n, fmt, ap);
	va_end(ap);
	s->done = true;
	s->errcode = EBADMSG;
	return -EBADMSG;
}

/*
 * Cycles to ns for a clock that is not 1 GHz, as babeltrace2 does it (so that
 * `trawl print` and babeltrace2 print the same nanosecond): a double product
 * and quotient, truncated. Monotonic in v; within 1 ns of the exact value.
 */
static inline uint64_t ns_from_cycles(uint64_t freq, uint64_t v)
{
	double ns = (1e9 * (double)v) / (double)freq;
	return ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ns;
}

static inline int64_t to_ns(const struct trawl_reader_stream *s, uint64_t cyc)
{
	if (likely(s->ghz))
		return (int64_t)(s->base + cyc);
	/* wraps (not UB) on absurd values from corrupt data */
	int64_t ns = (int64_t)(s->base + (s->freq == 1000000000 ? cyc : ns_from_cycles(s->freq, cyc)));
	return s->fix ? trawl_sync_xform_apply(s->fix, ns) : ns;
}

static void set_clock(struct trawl_reader_stream *s)
{
	const struct trawl_ctf_trace *t = s->trace->meta;
	int ci = s->scd->clock;
	const struct trawl_ctf_clock *ck = ci >= 0 ? &t->clocks[ci] : NULL;
	uint64_t freq = ck && ck->freq ? ck->freq : 1000000000;
	int64_t off_s = ck ? ck->offset_s : 0, off = ck ? ck->offset : 0;
	s->freq = freq;
	s->fix = s->trace->fix;
	s->ghz = freq == 1000000000 && !s->fix;
	if (freq == 1000000000) {
		s->base = (uint64_t)off_s * 1000000000u + (uint64_t)off;
		return;
	}
	/* Whole seconds of the cycle offset move to offset_s (floor, so the
	 * rest is in [0, freq)), then the rest converts as a value does. */
	int64_t q = off / (int64_t)freq, rem = off % (int64_t)freq;
	if (rem < 0) {
		rem += (int64_t)freq;
		q--;
	}
	s->base = (uint64_t)(off_s + q) * 1000000000u + ns_from_cycles(freq, (uint64_t)rem);
}

static const struct trawl_ctf_stream_class *find_sc(const struct trawl_ctf_trace *t, uint64_t id)
{
	for (size_t i = 0; i < t->nstreams; i++)
		if (t->streams[i]->id == id)
			return t->streams[i];
	return NULL;
}

/*
 * Drops the pages of the file below `off` - RELEASE_LAG, so that memory does
 * not grow with the trace. Events already handed out may still point there
 * (strings, in batches not merged yet, or copied by the caller): the map is
 * private and read-only, so touching such a page again reads it back.
 */
static void release_pages(struct trawl_reader_stream *s, uint64_t off)
{
	if (s->borrowed || off < RELEASE_LAG || off - RELEASE_LAG - s->advised < RELEASE_CHUNK)
		return;
	uint64_t upto = (off - RELEASE_LAG) & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	if (upto > s->advised) {
		madvise((void *)(s->map + s->advised), upto - s->advised, MADV_DONTNEED);
		s->advised = upto;
	}
}

/* ------------------------------------------------------------- indexes */

/*
 * index/<stream file>.idx (LTTng's format, big-endian): a 16-byte header
 * (magic, major 1, minor 0 or 1, entry size), then per packet: offset
 * (bytes), packet_size, content_size (bits), timestamp_begin, timestamp_end,
 * events_discarded, stream_id, and in 1.1 stream_instance_id and
 * packet_seq_num. The data file is the truth: an index that is malformed or
 * disagrees with a packet read is dropped with a warning in the stats.
 */

#define IDX_HDR 16u
#define IDX_V10 56u
#define IDX_V11 72u

/* Drops the index (once) with a warning for the stats. Filler-owned. */
__attribute__((format(printf, 2, 3), cold))
static void index_drop(struct trawl_reader_stream *s, const char *fmt, ...)
{
	if (s->st.index_bad)
		return;
	const char *base = strrchr(s->path, '/');
	int n = snprintf(s->iwarn, sizeof(s->iwarn), "index/%s.idx: ", base ? base + 1 : s->path);
	if (n < 0 || (size_t)n >= sizeof(s->iwarn))
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->iwarn + n, sizeof(s->iwarn) - (size_t)n, fmt, ap);
	va_end(ap);
	free(s->idx);
	s->idx = NULL;
	s->nidx = 0;
	s->iseek = false;
	s->st.index_used = false;
	s->st.index_bad = true;
	s->st.index_warning = s->iwarn;
}

/* Reads and checks index/<name>.idx under dir, if there is one. */
static void load_index(struct trawl_reader_stream *s, const char *dir, const char *name)
{
	char *ipath = malloc(strlen(dir) + strlen(name) + 16);
	struct stat st;
	uint8_t *m = MAP_FAILED;
	size_t sz = 0;

	if (!ipath)
		return;
	sprintf(ipath, "%s/index/%s.idx", dir, name);
	int fd = open(ipath, O_RDONLY | O_CLOEXEC);
	free(ipath);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			index_drop(s, "%s", strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		index_drop(s, "not a readable file");
		goto out;
	}
	sz = (size_t)st.st_size;
	if (sz < IDX_HDR) {
		index_drop(s, "truncated header (%zu bytes)", sz);
		goto out;
	}
	m = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		index_drop(s, "mmap: %s", strerror(errno));
		goto out;
	}
	uint32_t magic = get_be32(m), major = get_be32(m + 4), minor = get_be32(m + 8);
	uint32_t esz = get_be32(m + 12);
	if (magic != CTF_IDX_MAGIC) {
		index_drop(s, "bad magic 0x%08" PRIx32 " (want 0x%08x)", magic, CTF_IDX_MAGIC);
		goto out;
	}
	if (major != 1 || minor > 1) {
		index_drop(s, "unsupported version %" PRIu32 ".%" PRIu32, major, minor);
		goto out;
	}
	if (esz < (minor ? IDX_V11 : IDX_V10) || esz > 4096) {
		index_drop(s, "bad entry size %" PRIu32 " for version 1.%" PRIu32, esz, minor);
		goto out;
	}
	if ((sz - IDX_HDR) % esz) {
		index_drop(s, "truncated entry (%zu bytes after the header, entries of %" PRIu32 ")",
			   sz - IDX_HDR, esz);
		goto out;
	}
	size_t n = (sz - IDX_HDR) / esz;
	if (n > s->size || n > UINT32_MAX) {
		index_drop(s, "%zu entries for a file of %" PRIu64 " bytes", n, s->size);
		goto out;
	}
	s->idx = malloc((n ? n : 1) * sizeof(*s->idx));
	if (!s->idx) {
		index_drop(s, "out of memory");
		goto out;
	}
	uint64_t next = 0, sid = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = m + IDX_HDR + i * esz;
		struct ient *e = &s->idx[i];
		e->off = get_be64(p);
		e->psize = get_be64(p + 8);
		e->csize = get_be64(p + 16);
		e->tsb = get_be64(p + 24);
		e->tse = get_be64(p + 32);
		uint64_t id = get_be64(p + 48);
		const char *why = NULL;
		if (i == 0)
			sid = id;
		if (e->off != next)
			why = e->off < next ? "offset not increasing" : "offset leaves a gap";
		else if (!e->psize || (e->psize & 7))
			why = "bad packet_size";
		else if (e->psize / 8 > s->size - e->off)
			why = "packet goes past the end of the file";
		else if (e->csize > e->psize)
			why = "content_size > packet_size";
		else if (e->tsb > e->tse || (i && e->tse < s->idx[i - 1].tse))
			why = "timestamps out of order";
		else if (id != sid)
			why = "stream_id changes";
		if (why) {
			index_drop(s, "entry %zu (offset %" PRIu64 "): %s", i, e->off, why);
			goto out;
		}
		next = e->off + e->psize / 8;
	}
	s->nidx = (uint32_t)n;
	s->isid = sid;
	s->st.index_used = true;
out:
	if (m != MAP_FAILED)
		munmap(m, sz);
	close(fd);
}

/*
 * With a begin time: starts the stream at the first packet whose
 * timestamp_end is >= begin, as the index says (verified when read).
 */
static void index_seek(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	const struct trawl_ctf_trace *t = s->trace->meta;
	const struct trawl_ctf_stream_class *sc = find_sc(t, s->isid);

	if (!sc && t->nstreams == 1)
		sc = t->streams[0];
	if (!sc || !sc->priv || !s->nidx)
		return;		/* the first packet read will tell */
	s->sc = sc;
	s->scd = sc->priv;
	set_clock(s);
	uint32_t lo = 0, hi = s->nidx;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (to_ns(s, s->idx[mid].tse) < r->begin)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	const struct ient *last = &s->idx[lo - 1];
	s->next_off = lo < s->nidx ? s->idx[lo].off : last->off + last->psize / 8;
	s->advised = s->next_off & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	s->ipos = lo;
	s->iseek = true;
}

/*
 * Checks the packet just parsed at `off` against its index entry. Returns
 * true to go on with it, false when the reader had started through the
 * index at a packet that turns out not to match: then it starts over from
 * the beginning of the file, without the index.
 */
static bool index_check(struct trawl_reader_stream *s, uint64_t off, uint64_t psize, uint64_t csize)
{
	const struct dctx *c = &s->d;
	const struct ient *e = s->ipos < s->nidx ? &s->idx[s->ipos] : NULL;
	const char *why = NULL;

	if (!e)
		why = "no entry for this packet";
	else if (e->off != off)
		why = "offset differs";
	else if (e->psize != psize)
		why = "packet_size differs";
	else if (e->csize != csize)
		why = "content_size differs";
	else if ((c->rolemask & (1u << ROLE_TS_BEGIN)) && c->roles[ROLE_TS_BEGIN] != e->tsb)
		why = "timestamp_begin differs";
	else if ((c->rolemask & (1u << ROLE_TS_END)) && c->roles[ROLE_TS_END] != e->tse)
		why = "timestamp_end differs";
	else if ((c->rolemask & (1u << ROLE_STREAM_ID)) && c->roles[ROLE_STREAM_ID] != s->isid)
		why = "stream_id differs";
	if (likely(!why)) {
		s->ipos++;
		s->iseek = false;
		return true;
	}
	bool restart = s->iseek;
	index_drop(s, "disagrees with the packet at byte %" PRIu64 " (entry %" PRIu32 "): %s%s",
		   off, s->ipos, why, restart ? "; reading from the start" : "");
	if (!restart)
		return true;
	s->next_off = 0;
	s->advised = 0;
	return false;
}

/* Opens the next packet: 1, 0 at the end of the stream, or -EBADMSG. */
static __attribute__((noinline)) int next_packet(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	struct dctx *c = &s->d;
	struct trawl_reader_trace *tr = s->trace;
	const struct trawl_ctf_trace *t = tr->meta;

	if (unlikely(s->idx && !s->isought)) {
		s->isought = true;
		if (r->has_begin)
			index_seek(r, s);
	}
	for (;;) {
		uint64_t off = s->next_off;
		if (off >= s->size) {
			if (unlikely(s->idx && s->ipos < s->nidx))
				index_drop(s, "%" PRIu32 " entries for packets past the end of the data",
					   s->nidx - s->ipos);
			s->done = true;
			return 0;
		}
		release_pages(s, off);
		uint64_t avail = s->size - off;
		s->pkt_off = off;
		c->pkt = s->map + off;
		c->pos = 0;
		c->end = avail > UINT64_MAX / 8 ? UINT64_MAX : avail * 8;
		c->rolemask = 0;
		c->nv = 0;
		if (tr->td.ph.nops && ctf_exec(c, &tr->td.ph, 0, tr->td.ph.nops))
			return stream_fail(s, off + c->errpos / 8, "packet header: %s", c->why);
		if ((c->rolemask & (1u << ROLE_MAGIC)) && c->roles[ROLE_MAGIC] != CTF_MAGIC)
			return stream_fail(s, off, "bad packet magic 0x%08" PRIx64 " (want 0x%08x)",
					   c->roles[ROLE_MAGIC], CTF_MAGIC);
		if ((c->rolemask & (1u << ROLE_UUID)) && t->has_uuid) {
			uint64_t up = c->roles[ROLE_UUID];
			if (!(up & 7) && c->pos >= up + 128 &&
			    memcmp(c->pkt + up / 8, t->uuid, 16) != 0)
				return stream_fail(s, off + up / 8, "packet uuid differs from the trace uuid");
		}
		uint64_t scid = c->rolemask & (1u << ROLE_STREAM_ID) ? c->roles[ROLE_STREAM_ID] : 0;
		const struct trawl_ctf_stream_class *sc = s->sc && s->sc->id == scid ? s->sc : find_sc(t, scid);
		if (!sc && !(c->rolemask & (1u << ROLE_STREAM_ID)) && t->nstreams == 1)
			sc = t->streams[0];
		if (!sc || !sc->priv)
			return stream_fail(s, off, "unknown stream class id %" PRIu64, scid);
		if (sc != s->sc) {
			s->sc = sc;
			s->scd = sc->priv;
			set_clock(s);
		}
		s->st.stream_class_id = sc->id;
		if (c->rolemask & (1u << ROLE_STREAM_INSTANCE_ID))
			s->st.stream_instance_id = c->roles[ROLE_STREAM_INSTANCE_ID];
		const struct sc_dec *sd = s->scd;
		if (sd->pc.nops && ctf_exec(c, &sd->pc, 0, sd->pc.nops))
			return stream_fail(s, off + c->errpos / 8, "packet context: %s", c->why);
		uint64_t psize = c->end, csize;
		if (c->rolemask & (1u << ROLE_PACKET_SIZE)) {
			psize = c->roles[ROLE_PACKET_SIZE];
			if (psize & 7)
				return stream_fail(s, off, "packet_size %" PRIu64 " bits is not a whole number of bytes",
						   psize);
			if (psize / 8 > avail)
				return stream_fail(s, off, "packet_size %" PRIu64 " bytes goes past the end of the file (%" PRIu64 " bytes left)",
						   psize / 8, avail);
			if (psize == 0)
				return stream_fail(s, off, "packet_size is 0");
		}
		csize = psize;
		if (c->rolemask & (1u << ROLE_CONTENT_SIZE)) {
			csize = c->roles[ROLE_CONTENT_SIZE];
			if (csize > psize)
				return stream_fail(s, off, "content_size %" PRIu64 " > packet_size %" PRIu64 " bits",
						   csize, psize);
		}
		if (c->pos > csize)
			return stream_fail(s, off, "packet header and context (%" PRIu64 " bits) exceed content_size %" PRIu64,
					   c->pos, csize);
		if (s->idx && !index_check(s, off, psize, csize))
			continue;
		c->end = csize;
		s->next_off = off + psize / 8;
		if (c->rolemask & (1u << ROLE_TS_BEGIN))
			c->clock = c->roles[ROLE_TS_BEGIN];
		s->st.packets++;
		if (c->rolemask & (1u << ROLE_DISCARDED))
			s->st.discarded = c->roles[ROLE_DISCARDED];
		if (c->rolemask & (1u << ROLE_CPU)) {
			s->ev.cpu = (uint32_t)c->roles[ROLE_CPU];
			s->st.cpu = s->ev.cpu;
		}
		if (r->has_begin && (c->rolemask & (1u << ROLE_TS_END)) &&
		    to_ns(s, c->roles[ROLE_TS_END]) < r->begin)
			continue;	/* the whole packet is before the range */
		if (r->has_end && (c->rolemask & (1u << ROLE_TS_BEGIN)) &&
		    to_ns(s, c->roles[ROLE_TS_BEGIN]) > r->end) {
			s->done = true;
			return 0;
		}
		return 1;
	}
}

static const struct trawl_ctf_event_class *lookup(const struct sc_dec *sd, uint64_t id, bool has_id)
{
	if (likely(id < sd->nbyid) && sd->byid[id])
		return sd->byid[id];
	if (sd->nsorted) {
		size_t lo = 0, hi = sd->nsorted;
		while (lo < hi) {
			size_t m = (lo + hi) / 2;
			if (sd->sorted[m]->id < id)
				lo = m + 1;
			else
				hi = m;
		}
		if (lo < sd->nsorted && sd->sorted[lo]->id == id)
			return sd->sorted[lo];
	}
	return has_id ? NULL : sd->only;
}

/* In ctf/fill-run.h, included below. */
static const uint8_t *semi_decode(struct dctx *c, const struct ec_dec *d, const uint8_t *p,
				  const uint8_t *limit);

/* Decodes the stream's next event into *e (s->ev, or a batch's): 1, 0 at
 * the end, -errno on corruption. */
static __attribute__((noinline)) int stream_next(struct trawl_reader *r, struct trawl_reader_stream *s,
						 struct trawl_event *e)
{
	struct dctx *c = &s->d;

	if (unlikely(s->done))
		return 0;
	for (;;) {
		if (unlikely(c->pos >= c->end)) {
			int rc = next_packet(r, s);
			if (rc <= 0)
				return rc;
			continue;
		}
		const struct sc_dec *sd = s->scd;
		uint64_t evpos = c->pos, id = 0;
		bool has_id = true;
		switch (sd->hdr) {
		case HDR_COMPACT: {
			uint64_t p = (c->pos + 7) & ~(uint64_t)7;
			if (unlikely(p > c->end || c->end - p < 32))
				goto truncated;
			const uint8_t *b = c->pkt + (p >> 3);
			uint32_t w;
			__builtin_prefetch(b + PREFETCH);
			memcpy(&w, b, 4);
			w = le32toh(w);
			id = w & 31;
			if (likely(id != 31)) {
				c->clock = ctf_clock_update(c->clock, w >> 5, 27);
				c->pos = p + 32;
			} else {
				if (unlikely(c->end - p < 104))
					goto truncated;
				uint32_t x;
				uint64_t ts;
				memcpy(&x, b + 1, 4);
				memcpy(&ts, b + 5, 8);
				id = le32toh(x);
				c->clock = le64toh(ts);
				c->pos = p + 104;
			}
			break;
		}
		case HDR_LARGE: {
			uint64_t p = (c->pos + 7) & ~(uint64_t)7;
			if (unlikely(p > c->end || c->end - p < 48))
				goto truncated;
			const uint8_t *b = c->pkt + (p >> 3);
			uint16_t h;
			__builtin_prefetch(b + PREFETCH);
			uint32_t x;
			memcpy(&h, b, 2);
			id = le16toh(h);
			if (likely(id != 65535)) {
				memcpy(&x, b + 2, 4);
				c->clock = ctf_clock_update(c->clock, le32toh(x), 32);
				c->pos = p + 48;
			} else {
				if (unlikely(c->end - p < 112))
					goto truncated;
				uint64_t ts;
				memcpy(&x, b + 2, 4);
				memcpy(&ts, b + 6, 8);
				id = le32toh(x);
				c->clock = le64toh(ts);
				c->pos = p + 112;
			}
			break;
		}
		case HDR_GENERIC:
			c->nv = 0;
			c->rolemask &= ~(1u << ROLE_EVENT_ID);
			if (ctf_exec(c, &sd->eh, 0, sd->eh.nops))
				return stream_fail(s, s->pkt_off + c->errpos / 8, "event header: %s", c->why);
			has_id = c->rolemask & (1u << ROLE_EVENT_ID);
			id = has_id ? c->roles[ROLE_EVENT_ID] : 0;
			break;
		case HDR_NONE:
			has_id = false;
			break;
		}
		const struct trawl_ctf_event_class *ec = lookup(sd, id, has_id);
		if (unlikely(!ec))
			return stream_fail(s, s->pkt_off + evpos / 8, "unknown event id %" PRIu64, id);
		int64_t ts = to_ns(s, c->clock);
		if (unlikely(r->has_end && ts > r->end)) {
			s->done = true;
			return 0;
		}
		const struct ec_dec *ed = ec->priv;
		bool keep = ed->wanted && (!r->has_begin || ts >= r->begin);
		uint64_t evbody = c->pos;
		const uint8_t *semi_end;
		if (likely(ed->fixed && !(c->pos & 7))) {
			if (unlikely((c->end - c->pos) >> 3 < ed->fixed_bytes))
				return stream_fail(s, s->pkt_off + evpos / 8,
						   "event `%s` truncated (needs %u bytes, %" PRIu64 " left in the packet content)",
						   ec->name, ed->fixed_bytes, (c->end - c->pos) >> 3);
			if (keep) {
				const uint8_t *b = c->pkt + (c->pos >> 3);
				ctf_decode_fixed(c, ed, b,
						 (uint64_t)(s->map + s->size - b) >= (uint64_t)ed->fixed_bytes + 8);
			}
			c->pos += (uint64_t)ed->fixed_bytes * 8;
		} else if (likely(ed->semi && !(c->pos & 7)) &&
			   likely(semi_end = semi_decode(c, ed, c->pkt + (c->pos >> 3),
							 s->map + s->size))) {
			c->pos = (uint64_t)(semi_end - c->pkt) * 8;
		} else {
			c->pos = evbody;
			c->nv = 0;
			int rc = ctf_exec(c, &ed->body, 0, ed->body.nops);
			if (unlikely(rc)) {
				if (rc == -ENOMEM) {
					stream_fail(s, s->pkt_off + evpos / 8, "%s", c->why);
					s->errcode = ENOMEM;
					return rc;
				}
				return stream_fail(s, s->pkt_off + c->errpos / 8, "event `%s`: %s",
						   ec->name, c->why);
			}
		}
		s->st.events++;
		if (unlikely(s->st.first_ts == INT64_MAX))
			s->st.first_ts = ts;
		s->st.last_ts = ts;
		if (!keep)
			continue;
		e->ts = ts;
		e->cycles = c->clock;
		e->cls = ec;
		e->stream = s;
		e->values = c->tape;
		e->nvalues = c->nv;
		e->cpu = s->ev.cpu;
		return 1;
	}
truncated:
	return stream_fail(s, s->pkt_off + c->pos / 8, "truncated event header (%" PRIu64 " bits left in the packet content)",
			   c->end - c->pos);
}

/*
 * The fast path of stream_next() for the common event: an LTTng compact or
 * large header (not extended), a fixed-layout class that passes the filters,
 * well inside the packet and the file. Returns 1 with the event decoded, or
 * 0 having changed nothing: then stream_next() does the general work.
 */
static inline __attribute__((always_inline)) int fast_next(struct trawl_reader *r,
							   struct trawl_reader_stream *s,
							   struct trawl_event *e)
{
	struct dctx *c = &s->d;
	const struct sc_dec *sd = s->scd;
	uint64_t p = (c->pos + 7) & ~(uint64_t)7, id, clock;
	unsigned hb;

	if (unlikely(!sd || p >= c->end || c->end - p < 112))
		return 0;
	const uint8_t *b = c->pkt + (p >> 3);
	__builtin_prefetch(b + PREFETCH);
	if (sd->hdr == HDR_COMPACT) {
		uint32_t w;
		memcpy(&w, b, 4);
		w = le32toh(w);
		id = w & 31;
		if (unlikely(id == 31))
			return 0;
		clock = ctf_clock_update(c->clock, w >> 5, 27);
		hb = 4;
	} else if (sd->hdr == HDR_LARGE) {
		uint16_t h;
		uint32_t x;
		memcpy(&h, b, 2);
		memcpy(&x, b + 2, 4);
		id = le16toh(h);
		if (unlikely(id == 65535))
			return 0;
		clock = ctf_clock_update(c->clock, le32toh(x), 32);
		hb = 6;
	} else {
		return 0;
	}
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
	int64_t ts = to_ns(s, clock);
	if (unlikely(r->has_begin | r->has_end) &&
	    ((r->has_begin && ts < r->begin) || (r->has_end && ts > r->end)))
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
	e->stream = s;
	e->values = c->tape;
	e->nvalues = c->nv;
	e->cpu = s->ev.cpu;
	return 1;
}

/* --------------------------------------------------------------- merge */

static inline bool before(const struct hent *a, const struct hent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->order < b->order);
}

static __attribute__((noinline)) void sift_down(struct trawl_reader *r, size_t i)
{
	struct hent *h = r->heap, x = h[i];
	size_t n = r->nheap;
	for (;;) {
		size_t l = 2 * i + 1;
		if (l >= n)
			break;
		size_t m = l + 1 < n && before(&h[l + 1], &h[l]) ? l + 1 : l;
		if (!before(&h[m], &x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

static int report(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	r->nerrors++;
	r->lasterr = s->err;
	return -(s->errcode ? s->errcode : EBADMSG);
}

static void prime(struct trawl_reader *r)
{
	r->primed = true;
	for (size_t i = 0; i < r->ntraces; i++) {
		struct trawl_reader_trace *t = r->traces[i];
		for (size_t j = 0; j < t->nstreams; j++) {
			struct trawl_reader_stream *s = t->streams[j];
			int rc = stream_next(r, s, &s->ev);
			if (rc > 0)
				r->heap[r->nheap++] = (struct hent){ s->ev.ts, s->order, s };
			else if (rc < 0)
				r->errq[r->nerrq++] = s;
		}
	}
	for (size_t i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
}

/* After the top stream got a new event: restores the heap order. */
static inline void top_changed(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	struct hent *h = r->heap;
	h[0].ts = s->ev.ts;
	/* still the earliest: no heap work (one stream, or a burst in one) */
	if (r->nheap > 1) {
		size_t m = r->nheap > 2 && before(&h[2], &h[1]) ? 2 : 1;
		if (before(&h[m], &h[0]))
			sift_down(r, 0);
	}
}

/* trawl_reader_next() beyond the fast path; `advanced`: the pending stream
 * has already moved to its next event and the heap is in order. */
static __attribute__((noinline)) int next_slow(struct trawl_reader *r, const struct trawl_event **ev,
					       bool advanced)
{
	struct trawl_reader_stream *s = r->pending;

	r->pending = NULL;
	if (s && !advanced) {
		int rc = stream_next(r, s, &s->ev);
		if (likely(rc > 0)) {
			top_changed(r, s);
		} else {
			r->heap[0] = r->heap[--r->nheap];
			if (r->nheap)
				sift_down(r, 0);
			if (rc < 0)
				return report(r, s);
		}
	} else if (!s && !r->primed) {
		prime(r);
	}
	if (r->errq_head < r->nerrq)
		return report(r, r->errq[r->errq_head++]);
	if (!r->nheap)
		return 0;
	s = r->heap[0].s;
	r->pending = s;
	*ev = &s->ev;
	return 1;
}

/* ---------------------------------------------------------- decode-ahead */

/*
 * With a worker (threads >= 2), the streams are decoded ahead into batches:
 * per stream a queue of NQ batches, each an array of events plus the values
 * of their tapes, decoded straight into the batch (the tape is lent to the
 * decode context). Whoever fills a batch (the worker, or the consumer when
 * it would otherwise wait) owns the stream's decode state while qbusy is
 * set. The consumer (the thread calling trawl_reader_next()) only merges:
 * it walks the current batch of each stream and keeps a loser tree over
 * the streams' next events. A batch goes back to the queue when the
 * consumer has moved past its last event, i.e. at the call after the one
 * that returned it. Errors and the end of a stream travel as the `term` of
 * its last batch, after the events decoded before them.
 *
 * Synchronization: one mutex (r->mu) at batch granularity. A filler writes
 * a batch without the lock, then publishes it with qhead++ under r->mu; the
 * consumer reads qhead under r->mu before reading the batch. The consumer
 * gives a batch back with qtail++ under r->mu, after which the filler may
 * write it again. The stream's decode state passes between fillers through
 * qbusy, set and cleared under r->mu.
 */

static uint32_t batch_events(const struct trawl_reader *r)
{
	if (r->batch_events)
		return r->batch_events;
	/* an event and its tape: 16 + 12 + 8 * 16 bytes */
	uint64_t n = BATCH_BUDGET / ((uint64_t)r->nstreams * NQ * 156);
	return n > BATCH_MAX_EVENTS ? BATCH_MAX_EVENTS : n < BATCH_MIN_EVENTS ? BATCH_MIN_EVENTS : (uint32_t)n;
}

static int alloc_queue(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	uint32_t nev = batch_events(r);
	size_t capv = (size_t)nev * 8, need = 2 * ((size_t)s->trace->maxfix + 64);

	if (capv < need)
		capv = need;
	s->q = calloc(NQ, sizeof(*s->q));
	if (!s->q)
		return -ENOMEM;
	for (int i = 0; i < NQ; i++) {
		struct batch *b = &s->q[i];
		b->cap = nev;
		b->capv = capv;
		b->rec = malloc(nev * sizeof(*b->rec));
		b->cyc = malloc(nev * sizeof(*b->cyc));
		b->cpu = malloc(nev * sizeof(*b->cpu));
		b->vals = malloc(capv * sizeof(*b->vals));
		if (!b->rec || !b->cyc || !b->cpu || !b->vals)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The next events of b have cycles == ts - base and this cpu. A batch
 * stores each event's raw clock value and cpu only once they stop being
 * the same for all (almost never: a stream's clock and cpu_id rarely
 * change), writing those of the events before then.
 */
static __attribute__((noinline, cold)) void batch_split(struct batch *b, uint64_t base, uint32_t cpu)
{
	if (b->ghz && b->base != base) {
		b->ghz = false;
		for (uint32_t i = 0; i < b->n; i++)
			b->cyc[i] = (uint64_t)b->rec[i].ts - b->base;
	}
	if (b->onecpu && b->cpu0 != cpu) {
		b->onecpu = false;
		for (uint32_t i = 0; i < b->n; i++)
			b->cpu[i] = b->cpu0;
	}
}

static inline void batch_same(struct batch *b, uint64_t base, uint32_t cpu)
{
	if (!b->n) {
		b->ghz = b->onecpu = true;
		b->base = base;
		b->cpu0 = cpu;
	} else if (unlikely((b->ghz && b->base != base) || (b->onecpu && b->cpu0 != cpu))) {
		batch_split(b, base, cpu);
	}
}

/* Appends e (its values already on b's tape) to b. */
static inline void batch_push(struct batch *b, const struct trawl_event *e)
{
	uint32_t i = b->n;

	batch_same(b, (uint64_t)e->ts - e->cycles, e->cpu);
	b->rec[i] = (struct brec){ e->ts, e->cls->index, e->nvalues };
	if (!b->ghz)
		b->cyc[i] = e->cycles;
	if (!b->onecpu)
		b->cpu[i] = e->cpu;
	b->n = i + 1;
	b->nv += e->nvalues;
}

#define FR_SIMD 0
#define FR_NAME(x) x
#define FR_ATTR
#include "ctf/fill-run.h"
#if defined(__x86_64__) && defined(__GNUC__)
#define FR_SIMD 1
#define FR_NAME(x) x##_vbmi
#define FR_ATTR __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#include "ctf/fill-run.h"
#endif

static uint32_t fill_run(struct trawl_reader *r, struct trawl_reader_stream *s, struct batch *b,
			 size_t least)
{
	const struct sc_dec *sd = s->scd;

	if (!sd || !sd->fast || (r->has_begin | r->has_end) || !s->ghz)
		return 0;
#if defined(__x86_64__) && defined(__GNUC__)
	if (r->simd) {
		if (sd->hdr == HDR_COMPACT)
			return fill_run_compact_vbmi(s, b, least);
		if (sd->hdr == HDR_LARGE)
			return fill_run_large_vbmi(s, b, least);
		return 0;
	}
#endif
	if (sd->hdr == HDR_COMPACT)
		return fill_run_compact(s, b, least);
	if (sd->hdr == HDR_LARGE)
		return fill_run_large(s, b, least);
	return 0;
}

/*
 * Decodes the stream's next events into b, up to its capacity, then the
 * end or an error as b->term. Runs without r->mu, as the stream's filler.
 */
static void fill(struct trawl_reader *r, struct trawl_reader_stream *s, struct batch *b)
{
	struct dctx *c = &s->d;
	const size_t least = (size_t)s->trace->maxfix + 64;	/* what decoding assumes */

	b->n = 0;
	b->nv = 0;
	b->term = 0;
	if (s->carry) {
		/* an event too large for the previous batch: b is empty */
		size_t need = s->ev.nvalues + least;
		if (need > b->capv) {
			union trawl_ctf_value *nv = realloc(b->vals, need * sizeof(*nv));
			if (!nv) {
				snprintf(s->err, sizeof(s->err), "%s: out of memory", s->path);
				s->errcode = ENOMEM;
				s->done = true;
				b->term = -ENOMEM;
				goto out;
			}
			b->vals = nv;
			b->capv = need;
		}
		memcpy(b->vals, s->ev.values, s->ev.nvalues * sizeof(*b->vals));
		batch_push(b, &s->ev);
		s->carry = false;
	}
	while (b->n < b->cap) {
		size_t room = b->capv - b->nv;
		if (room < least)
			break;
		if (fill_run(r, s, b, least))
			continue;
		union trawl_ctf_value *t = b->vals + b->nv;
		c->tape = t;
		c->cap = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
		struct trawl_event *e = &s->ev;	/* the consumer reads batches only */
		int rc = fast_next(r, s, e);
		if (!rc)
			rc = stream_next(r, s, e);
		if (unlikely(rc <= 0)) {
			b->term = rc < 0 ? -(s->errcode ? s->errcode : EBADMSG) : 1;
			break;
		}
		if (unlikely(e->values != t)) {
			/* the tape outgrew the room: the event is in c->own */
			if (e->nvalues > room) {
				s->carry = true;	/* s->ev goes first in the next batch */
				break;
			}
			memcpy(t, e->values, e->nvalues * sizeof(*t));
		}
		batch_push(b, e);
	}
out:
	c->tape = c->own;
	c->cap = c->owncap;
	b->st = s->st;
}

static bool fillable(const struct trawl_reader_stream *s)
{
	return !s->qbusy && !s->qfin && s->qhead - s->qtail < NQ;
}

/* The fillable stream with the fewest batches ready (r->mu held), or NULL. */
static struct trawl_reader_stream *pick(struct trawl_reader *r)
{
	struct trawl_reader_stream *best = NULL;
	uint32_t n = r->nstreams, bready = NQ;

	for (uint32_t k = 0; k < n; k++) {
		struct trawl_reader_stream *s = r->all[(r->rr + k) % n];
		if (fillable(s) && s->qhead - s->qtail < bready) {
			best = s;
			bready = s->qhead - s->qtail;
			if (!bready)
				break;
		}
	}
	if (best)
		r->rr = (best->order + 1) % n;
	return best;
}

/* Fills the next batch of s (fillable; r->mu held, released meanwhile). */
static void fill_locked(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	struct batch *b = &s->q[s->qhead % NQ];

	s->qbusy = true;
	pthread_mutex_unlock(&r->mu);
	fill(r, s, b);
	pthread_mutex_lock(&r->mu);
	s->qbusy = false;
	s->qhead++;	/* publishes b: the consumer reads qhead under r->mu */
	if (b->term)
		s->qfin = true;
	if (r->mwait)
		pthread_cond_signal(&r->mcv);
}

static void *worker_main(void *arg)
{
	struct trawl_reader *r = arg;

	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		struct trawl_reader_stream *s = pick(r);
		if (!s) {
			r->widle = true;
			pthread_cond_wait(&r->wcv, &r->mu);
			r->widle = false;
			continue;
		}
		fill_locked(r, s);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/*
 * Moves the consumer of s to its next batch holding an event, giving the
 * current one back. Returns 1, 0 at the end of the stream, or -errno (the
 * stream's error). While the batch is not there, decodes some batch itself
 * (this stream's if nobody is on it, else the one most behind) or waits.
 */
static int take_next(struct trawl_reader *r, struct trawl_reader_stream *s, struct leaf *L)
{
	struct batch *b = s->cur;

	if (b && b->term)
		return b->term < 0 ? b->term : 0;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		if (b) {
			s->qtail++;	/* gives b back: the filler reads qtail under r->mu */
			s->cur = b = NULL;
			if (r->widle)
				pthread_cond_signal(&r->wcv);
		}
		if (s->qhead != s->qtail) {
			b = &s->q[s->qtail % NQ];
			s->cur = b;
			L->rec = b->rec;
			L->end = b->rec + b->n;
			L->ev.values = b->vals;
			L->b = b;
			L->ghz = b->ghz;
			L->onecpu = b->onecpu;
			L->cpu0 = b->cpu0;
			L->base = b->base;
			s->pub = b->st;
			if (b->n || b->term) {
				pthread_mutex_unlock(&r->mu);
				return b->n ? 1 : b->term < 0 ? b->term : 0;
			}
			continue;	/* empty: next one */
		}
		struct trawl_reader_stream *h = fillable(s) ? s : pick(r);
		if (h) {
			fill_locked(r, h);
		} else {
			r->mwait = true;
			pthread_cond_wait(&r->mcv, &r->mu);
			r->mwait = false;
		}
	}
}

static inline mkey mkkey(int64_t ts, uint32_t order)
{
	return (mkey)((uint64_t)ts ^ (UINT64_C(1) << 63)) << 64 | order;
}

static mkey lt_build(struct merge *m, uint32_t p)
{
	if (p >= m->k)
		return m->key[p - m->k];
	mkey a = lt_build(m, 2 * p), b = lt_build(m, 2 * p + 1);
	if (b < a) {
		m->tree[p] = a;
		return b;
	}
	m->tree[p] = b;
	return a;
}

/* Leaf w's key changed to kw: plays its matches up to the root. */
static inline void lt_replay(struct merge *m, uint32_t w, mkey kw)
{
	mkey *tree = m->tree;

	for (uint32_t p = (w + m->k) >> 1; p; p >>= 1) {
		mkey kl = tree[p];
		bool sw = kl < kw;
		tree[p] = sw ? kw : kl;
		kw = sw ? kl : kw;
	}
	tree[0] = kw;
}

static uint64_t lt_build64(struct merge *m, uint32_t p)
{
	if (p >= m->k) {
		mkey x = m->key[p - m->k];
		return x == KEY_INF ? UINT64_MAX : ((uint64_t)(x >> 64) - m->base) << m->lb | (uint32_t)x;
	}
	uint64_t a = lt_build64(m, 2 * p), b = lt_build64(m, 2 * p + 1);
	if (b < a) {
		m->t64[p] = a;
		return b;
	}
	m->t64[p] = b;
	return a;
}

/* The same with 64-bit keys. */
static inline void lt_replay64(struct merge *m, uint32_t w, uint64_t kw)
{
	uint64_t *tree = m->t64;

	/* size_t p: one addressing mode for the load and the store */
	for (size_t p = ((size_t)w + m->k) >> 1; p; p >>= 1) {
		uint64_t kl = tree[p];
		bool sw = kl < kw;
		tree[p] = sw ? kw : kl;
		kw = sw ? kl : kw;
	}
	tree[0] = kw;
}

/* The 64-bit key of an event at ts of leaf w; UINT64_MAX out of range. */
static inline uint64_t key64(const struct merge *m, int64_t ts, uint32_t w)
{
	uint64_t d = ((uint64_t)ts ^ (UINT64_C(1) << 63)) - m->base;
	return d < m->range ? d << m->lb | w : UINT64_MAX;
}

/* Leaf w's nk, from its current head (see struct leaf). */
static inline uint64_t next_key(const struct merge *m, const struct leaf *L, uint32_t w)
{
	const struct brec *x = L->rec;

	if (m->wide || !L->ghz || !L->onecpu || !x || x + 1 >= L->end)
		return UINT64_MAX;
	return key64(m, x[1].ts, w);
}

/*
 * Rebuilds the tree from the leaves' current events: 64-bit keys from the
 * earliest of them when they span less than half the range (room to go
 * on), else 128-bit keys from now on.
 */
static __attribute__((noinline)) void rekey(struct merge *m)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (uint32_t i = 0; i < m->k; i++) {
		const struct leaf *L = &m->leaf[i];
		if (L->rec < L->end) {
			uint64_t u = (uint64_t)L->rec->ts ^ (UINT64_C(1) << 63);	/* ordered */
			m->key[i] = (mkey)u << 64 | i;
			lo = u < lo ? u : lo;
			hi = u > hi ? u : hi;
		} else {
			m->key[i] = KEY_INF;
		}
	}
	if (!m->wide && (lo > hi || hi - lo < m->range / 2)) {
		m->base = lo > hi ? 0 : lo;
		m->t64[0] = lt_build64(m, 1);
	} else {
		m->wide = true;
		m->tree[0] = lt_build(m, 1);
	}
	for (uint32_t i = 0; i < m->k; i++)
		m->leaf[i].nk = next_key(m, &m->leaf[i], i);
}

/* The winner w has a new event (live) or none: replays it. */
static inline void merge_update(struct merge *m, uint32_t w, bool live)
{
	if (likely(!m->wide)) {
		uint64_t kw = live ? key64(m, m->leaf[w].rec->ts, w) : UINT64_MAX;
		if (live && unlikely(kw == UINT64_MAX))
			rekey(m);	/* out of range */
		else
			lt_replay64(m, w, kw);
		return;
	}
	lt_replay(m, w, live ? mkkey(m->leaf[w].rec->ts, w) : KEY_INF);
}

/*
 * Makes L->ev the event of L->rec (L->ev.values already its values).
 * `same`: the leaf only moved to the next event of a batch that is ghz
 * and onecpu, so its stream and cpu stay.
 */
static inline __attribute__((always_inline)) void leaf_set(const struct merge *m, struct leaf *L,
							   const bool same)
{
	const struct brec *x = L->rec;
	struct trawl_event *o = &L->ev;

	o->ts = x->ts;
	o->cycles = same || L->ghz ? (uint64_t)x->ts - L->base : L->b->cyc[x - L->b->rec];
	o->cls = m->cls[x->cls];
	o->nvalues = x->nv;
	if (!same) {
		o->stream = L->s;
		o->cpu = L->onecpu ? L->cpu0 : L->b->cpu[x - L->b->rec];
	}
}

/* Starts the worker and takes every stream's first batch. */
static int prime_threaded(struct trawl_reader *r)
{
	struct merge *m;
	uint32_t k = 1;

	r->primed = true;
	while (k < r->nstreams)
		k *= 2;
	m = r->m = aligned_alloc(64, sizeof(*m));
	if (!m)
		goto single;
	memset(m, 0, sizeof(*m));
	m->k = k;
	m->win = NOLEAF;
	while ((UINT32_C(1) << m->lb) < k)
		m->lb++;
	m->range = UINT64_MAX >> m->lb;
	m->t64 = aligned_alloc(64, ((k * sizeof(*m->t64)) + 63) & ~(size_t)63);
	m->tree = aligned_alloc(64, ((k * sizeof(*m->tree)) + 63) & ~(size_t)63);
	m->key = aligned_alloc(64, ((k * sizeof(*m->key)) + 63) & ~(size_t)63);
	m->leaf = aligned_alloc(64, ((k * sizeof(*m->leaf)) + 63) & ~(size_t)63);
	m->cls = malloc((r->nclasses ? r->nclasses : 1) * sizeof(*m->cls));
	if (!m->t64 || !m->tree || !m->key || !m->leaf || !m->cls)
		goto single;
	for (size_t i = 0; i < r->ntraces; i++) {
		const struct trawl_ctf_trace *t = r->traces[i]->meta;
		for (size_t j = 0; j < t->nstreams; j++)
			for (size_t e = 0; e < t->streams[j]->nevents; e++)
				m->cls[t->streams[j]->events[e]->index] = t->streams[j]->events[e];
	}
	memset(m->leaf, 0, k * sizeof(*m->leaf));
	for (uint32_t i = 0; i < r->nstreams; i++)
		if (alloc_queue(r, r->all[i]))
			goto single;
	for (uint32_t i = 0; i < r->nstreams; i++) {
		r->all[i]->pub = r->all[i]->st;	/* before the first batch */
		r->all[i]->threaded = true;
	}
	if (pthread_mutex_init(&r->mu, NULL))
		goto single;
	if (pthread_cond_init(&r->wcv, NULL) || pthread_cond_init(&r->mcv, NULL) ||
	    (r->worker && pthread_create(&r->wthread, NULL, worker_main, r))) {
		/* cannot happen on Linux once the mutex exists; don't leak it */
		pthread_mutex_destroy(&r->mu);
		goto single;
	}
	r->started = true;
	r->worker_on = r->worker;
	for (uint32_t i = 0; i < r->nstreams; i++) {
		struct leaf *L = &m->leaf[i];
		L->s = r->all[i];
		int rc = take_next(r, L->s, L);
		if (rc > 0)
			leaf_set(m, L, false);
		else if (rc < 0)
			r->errq[r->nerrq++] = L->s;
	}
	rekey(m);
	return 0;
single:
	/* no memory for batches or no thread: read in this thread */
	for (uint32_t i = 0; i < r->nstreams; i++)
		r->all[i]->threaded = false;
	r->threaded = false;
	r->primed = false;
	return -1;
}

/*
 * The merge's common step: leaf w, the last winner, has nk set (its next
 * event is in its batch, which is ghz and onecpu, and its key is narrow).
 * Replays it first (what the next step waits for), advances the leaf and
 * returns the new winner. `mask`: m->k - 1, which a caller looping over
 * steps loads once.
 */
static inline __attribute__((always_inline)) uint32_t merge_step(struct merge *m, uint32_t w,
								  uint32_t mask)
{
	struct leaf *L = &m->leaf[w];

	lt_replay64(m, w, L->nk);
	const struct brec *x = L->rec;
	L->ev.values += x->nv;
	L->rec = ++x;
	leaf_set(m, L, true);
	/* the batch was written by the other core: fetch ahead */
	__builtin_prefetch(x + 32);
	L->nk = likely(x + 1 < L->end) ? key64(m, x[1].ts, w) : UINT64_MAX;
	return (uint32_t)(m->t64[0] & mask);
}

/* Returns the event of leaf w, the winner. */
static inline __attribute__((always_inline)) int emit(struct merge *m, uint32_t w,
						      const struct trawl_event **ev)
{
	m->win = w;
	*ev = &m->leaf[w].ev;
	return 1;
}

static __attribute__((noinline)) int next_threaded_slow(struct trawl_reader *r,
							const struct trawl_event **ev)
{
	struct merge *m = r->m;
	uint32_t w = m ? m->win : NOLEAF;

	if (likely(w != NOLEAF)) {
		struct leaf *L = &m->leaf[w];
		bool live = true;
		L->ev.values += L->rec->nv;
		if (likely(++L->rec < L->end)) {
			/* the batch was written by the other core: fetch ahead */
			__builtin_prefetch(L->rec + 8);
			leaf_set(m, L, false);
		} else {
			int rc = take_next(r, L->s, L);
			if (rc > 0) {
				leaf_set(m, L, false);
			} else {
				live = false;
				if (rc < 0)
					r->errq[r->nerrq++] = L->s;
			}
		}
		merge_update(m, w, live);
		L->nk = live ? next_key(m, L, w) : UINT64_MAX;
	} else if (!r->primed) {
		if (prime_threaded(r))
			return trawl_reader_next(r, ev);	/* single-threaded after all */
		m = r->m;
	}
	if (unlikely(r->errq_head < r->nerrq)) {
		m->win = NOLEAF;
		return report(r, r->errq[r->errq_head++]);
	}
	if (likely(!m->wide)) {
		uint64_t top = m->t64[0];
		if (top == UINT64_MAX) {
			m->win = NOLEAF;
			return 0;
		}
		w = (uint32_t)(top & ((UINT64_C(1) << m->lb) - 1));
	} else {
		mkey top = m->tree[0];
		if (top == KEY_INF) {
			m->win = NOLEAF;
			return 0;
		}
		w = (uint32_t)top;
	}
	return emit(m, w, ev);
}

/*
 * The common case of next_threaded_slow(): the last winner has another
 * event in its batch, within the range of the 64-bit keys. (An error to
 * report always leaves m->win at NOLEAF.)
 */
static inline __attribute__((always_inline)) int next_threaded(struct trawl_reader *r,
							       const struct trawl_event **ev)
{
	struct merge *m = r->m;
	uint32_t w;

	if (likely(m && (w = m->win) != NOLEAF) && likely(m->leaf[w].nk != UINT64_MAX))
		return emit(m, merge_step(m, w, m->k - 1), ev);
	return next_threaded_slow(r, ev);
}

/* trawl_reader_next() without a worker. */
static __attribute__((noinline)) int next_single(struct trawl_reader *r, const struct trawl_event **ev)
{
	struct trawl_reader_stream *s = r->pending;

	if (likely(s) && likely(fast_next(r, s, &s->ev))) {
		top_changed(r, s);
		if (likely(r->errq_head == r->nerrq)) {
			s = r->heap[0].s;
			r->pending = s;
			*ev = &s->ev;
			return 1;
		}
		return next_slow(r, ev, true);
	}
	return next_slow(r, ev, false);
}

int trawl_reader_next(struct trawl_reader *r, const struct trawl_event **ev)
{
	if (likely(r->threaded)) {
		return next_threaded(r, ev);
	}
	return next_single(r, ev);
}

int trawl_reader_read(struct trawl_reader *r, struct trawl_event *out, unsigned max)
{
	const struct trawl_event *ev;

	if (!max)
		return 0;
	int rc = trawl_reader_next(r, &ev);
	if (rc <= 0)
		return rc;
	out[0] = *ev;
	if (!r->threaded)
		return 1;	/* the next event reuses the stream's tape */
	/*
	 * merge_step() in a loop, the merge's state in registers, until the
	 * winner's batch ends (or keys leave the 64-bit range): the next
	 * call's first step then takes the slow path. No batch goes back to
	 * the filler meanwhile, so every event of out[] stays valid.
	 */
	struct merge *m = r->m;
	const uint32_t mask = m->k - 1;
	uint32_t w = m->win, n = 1;
	while (n < max && m->leaf[w].nk != UINT64_MAX) {
		w = merge_step(m, w, mask);
		out[n++] = m->leaf[w].ev;
	}
	m->win = w;
	return (int)n;
}

const char *trawl_reader_error(const struct trawl_reader *r)
{
	return r->lasterr ? r->lasterr : "";
}

unsigned trawl_reader_nerrors(const struct trawl_reader *r)
{
	return r->nerrors;
}

/* ------------------------------------------------------------ opening */

static void stream_free(struct trawl_reader_stream *s)
{
	if (!s)
		return;
	if (s->map && s->size && !s->borrowed)
		munmap((void *)s->map, s->size);
	for (int i = 0; s->q && i < NQ; i++) {
		free(s->q[i].rec);
		free(s->q[i].cyc);
		free(s->q[i].cpu);
		free(s->q[i].vals);
	}
	free(s->q);
	free(s->idx);
	free(s->d.own);
	free(s->d.regs);
	free(s->path);
	free(s);
}

static void trace_free(struct trawl_reader_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstreams; i++)
		stream_free(t->streams[i]);
	free(t->streams);
	if (!t->borrowed)
		trawl_ctf_trace_free(t->meta);
	free(t->td.ph_mem);
	free(t->path);
	free(t->real);
	free(t);
}

void trawl_reader_free(struct trawl_reader *r)
{
	if (!r)
		return;
	if (r->started) {
		if (r->worker_on) {
			pthread_mutex_lock(&r->mu);
			r->stop = true;
			pthread_cond_signal(&r->wcv);
			pthread_mutex_unlock(&r->mu);
			pthread_join(r->wthread, NULL);
		}
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->wcv);
		pthread_cond_destroy(&r->mcv);
	}
	free(r->all);
	if (r->m) {
		free(r->m->t64);
		free(r->m->tree);
		free(r->m->key);
		free(r->m->leaf);
		free(r->m->cls);
		free(r->m);
	}
	for (size_t i = 0; i < r->ntraces; i++)
		trace_free(r->traces[i]);
	free(r->traces);
	free(r->heap);
	free(r->errq);
	free(r);
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);
	if (!p)
		return NULL;
	memcpy(p, a, la);
	size_t o = la;
	if (!la || a[la - 1] != '/')
		p[o++] = '/';
	memcpy(p + o, b, lb + 1);
	return p;
}

static struct trawl_reader_stream *new_stream(struct trawl_reader *r, struct trawl_reader_trace *t,
					     const char *path)
{
	struct trawl_reader_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->trace = t;
	s->ev.stream = s;
	s->path = strdup(path);
	s->st.stream_instance_id = UINT64_MAX;
	s->st.first_ts = INT64_MAX;
	s->st.last_ts = INT64_MIN;
	s->d.cap = t->maxfix + 64;
	s->d.tape = malloc(s->d.cap * sizeof(*s->d.tape));
	s->d.own = s->d.tape;
	s->d.owncap = s->d.cap;
	s->d.regs = calloc(t->td.nregs + 1, sizeof(uint64_t));
	s->ev.values = s->d.tape;
	if (!s->path || !s->d.tape || !s->d.regs) {
		stream_free(s);
		return NULL;
	}
	return s;
}

static int add_stream(struct trawl_reader *r, struct trawl_reader_trace *t,
		      struct trawl_reader_stream *s)
{
	void *ns = realloc(t->streams, (t->nstreams + 1) * sizeof(*t->streams));
	if (!ns)
		return -ENOMEM;
	s->order = r->nstreams++;
	t->streams = ns;
	t->streams[t->nstreams++] = s;
	return 0;
}

static int open_stream(struct trawl_reader *r, struct trawl_reader_trace *t, const char *path,
		       const char *name, char *err, size_t errlen)
{
	struct trawl_reader_stream *s = new_stream(r, t, path);
	int fd = -1, rc;
	struct stat st;

	if (!s)
		return seterr(err, errlen, ENOMEM, "out of memory");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
		goto err;
	}
	s->size = (uint64_t)st.st_size;
	s->st.bytes = s->size;
	if (s->size) {
		void *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			rc = seterr(err, errlen, errno, "%s: mmap: %s", path, strerror(errno));
			goto err;
		}
		madvise(m, s->size, MADV_SEQUENTIAL);
		s->map = m;
	}
	close(fd);
	fd = -1;
	load_index(s, t->path, name);
	if (add_stream(r, t, s)) {
		rc = seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	return 0;
err:
	if (fd >= 0)
		close(fd);
	stream_free(s);
	return rc;
}

/* Numbers the trace's event classes after those of the traces before
 * (also in the decoders' fast tables). */
static void number_classes(struct trawl_reader *r, struct trawl_reader_trace *t)
{
	for (size_t i = 0; i < t->meta->nstreams; i++) {
		const struct trawl_ctf_stream_class *sc = t->meta->streams[i];
		for (size_t j = 0; j < sc->nevents; j++)
			sc->events[j]->index = r->nclasses++;
		const struct sc_dec *sd = sc->priv;
		if (sd && sd->fast) {
			struct fastent *fe = (struct fastent *)sd->fast;	/* the reader's own */
			for (uint64_t id = 0; id < sd->nbyid; id++)
				fe[id].cls = fe[id].ec ? fe[id].ec->index : 0;
		}
	}
}

static void set_maxfix(struct trawl_reader_trace *t)
{
	for (size_t i = 0; i < t->meta->nstreams; i++) {
		const struct trawl_ctf_stream_class *sc = t->meta->streams[i];
		for (size_t j = 0; j < sc->nevents; j++) {
			const struct ec_dec *d = sc->events[j]->priv;
			if (d && d->fixed && d->nfix > t->maxfix)
				t->maxfix = d->nfix;
		}
	}
}

static int stream_file(const struct dirent *d)
{
	return d->d_name[0] != '.' && strcmp(d->d_name, "metadata") != 0;
}

static int open_trace(struct trawl_reader *r, const char *dir, char *err, size_t errlen)
{
	char msg[512] = "";
	struct trawl_reader_trace *t = NULL;
	struct dirent **ents = NULL;
	int nents = 0, rc;
	char *mpath = join(dir, "metadata"), *text = NULL, *real = realpath(dir, NULL);

	if (!mpath || !real) {
		rc = seterr(err, errlen, errno ? errno : ENOMEM, "%s: %s", dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < r->ntraces; i++) {
		if (strcmp(r->traces[i]->real, real) == 0) {
			rc = 0;	/* given twice */
			goto out;
		}
	}
	size_t len = 0;
	text = trawl_ctf_metadata_read(mpath, &len, msg, sizeof(msg));
	if (!text) {
		rc = seterr(err, errlen, errno ? errno : EINVAL, "%s: %s", mpath, msg);
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		rc = seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	t->meta = trawl_ctf_metadata_parse(text, len, msg, sizeof(msg));
	if (!t->meta) {
		rc = seterr(err, errlen, errno ? errno : EINVAL, "%s: %s", mpath, msg);
		goto out;
	}
	const struct trawl_ctf_env *h = trawl_ctf_trace_env(t->meta, "hostname");
	t->hostname = h && !h->is_int && h->sval ? h->sval : "";
	for (size_t i = 0; i < r->nfixes; i++)
		if (r->fixes[i].host && strcmp(r->fixes[i].host, t->hostname) == 0)
			t->fixv = r->fixes[i].xform, t->fix = &t->fixv;
	if (r->nhosts) {
		bool match = false;
		for (size_t i = 0; i < r->nhosts && !match; i++)
			match = glob_match(r->hosts[i], t->hostname);
		if (!match) {
			rc = 0;
			goto out;
		}
	}
	rc = ctf_compile_trace(t->meta, &t->td, r->events, r->nevents, msg, sizeof(msg));
	if (rc) {
		rc = seterr(err, errlen, -rc, "%s: %s", mpath, msg);
		goto out;
	}
	set_maxfix(t);
	t->path = strdup(dir);
	t->real = real;
	real = NULL;
	if (!t->path) {
		rc = seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	nents = scandir(dir, &ents, stream_file, versionsort);
	if (nents < 0) {
		rc = seterr(err, errlen, errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	for (int i = 0; i < nents; i++) {
		char *p = join(dir, ents[i]->d_name);
		struct stat st;
		if (!p) {
			rc = seterr(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			rc = open_stream(r, t, p, ents[i]->d_name, err, errlen);
			if (rc) {
				free(p);
				goto out;
			}
		}
		free(p);
	}
	void *nt = realloc(r->traces, (r->ntraces + 1) * sizeof(*r->traces));
	if (!nt) {
		rc = seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	r->traces = nt;
	r->traces[r->ntraces++] = t;
	number_classes(r, t);
	t = NULL;
	rc = 1;
out:
	for (int i = 0; i < nents; i++)
		free(ents[i]);
	free(ents);
	trace_free(t);
	free(text);
	free(mpath);
	free(real);
	return rc;
}

static bool is_trace_dir(const char *dir)
{
	char *m = join(dir, "metadata");
	struct stat st;
	bool yes = m && stat(m, &st) == 0 && S_ISREG(st.st_mode);
	free(m);
	return yes;
}

static int subdir(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Opens every trace at or under dir; returns how many or -errno. */
static int discover(struct trawl_reader *r, const char *dir, int depth, char *err, size_t errlen)
{
	if (is_trace_dir(dir)) {
		int rc = open_trace(r, dir, err, errlen);
		return rc < 0 ? rc : 1;	/* a skipped trace still counts as found */
	}
	if (depth >= MAX_DIR_DEPTH)
		return 0;
	struct dirent **ents;
	int n = scandir(dir, &ents, subdir, versionsort), found = 0, rc = 0;
	if (n < 0)
		return depth ? 0 : seterr(err, errlen, errno, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		if (rc >= 0) {
			char *p = join(dir, ents[i]->d_name);
			struct stat st;
			if (!p)
				rc = seterr(err, errlen, ENOMEM, "out of memory");
			else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
				rc = discover(r, p, depth + 1, err, errlen);
				if (rc > 0)
					found += rc;
			}
			free(p);
		}
		free(ents[i]);
	}
	free(ents);
	return rc < 0 ? rc : found;
}

static void set_opts(struct trawl_reader *r, const struct trawl_reader_opts *o)
{
	r->simd = ctf_simd();
	if (o && o->sz >= offsetof(struct trawl_reader_opts, end) + sizeof(o->end)) {
		r->hosts = o->hosts;
		r->nhosts = o->hosts ? o->nhosts : 0;
		r->events = o->events;
		r->nevents = o->events ? o->nevents : 0;
		r->begin = o->begin;
		r->has_begin = o->begin != 0;
		r->end = o->end;
		r->has_end = o->end != 0;
	}
	if (o && o->sz >= offsetof(struct trawl_reader_opts, threads) + sizeof(o->threads))
		r->threads = o->threads;
	if (o && o->sz >= offsetof(struct trawl_reader_opts, nfixes) + sizeof(o->nfixes)) {
		r->fixes = o->fixes;
		r->nfixes = o->fixes ? o->nfixes : 0;
	}
}

static int alloc_heap(struct trawl_reader *r, char *err, size_t errlen)
{
	uint64_t bytes = 0;

	r->heap = calloc(r->nstreams + 1, sizeof(*r->heap));
	r->errq = calloc(r->nstreams + 1, sizeof(*r->errq));
	r->all = calloc(r->nstreams + 1, sizeof(*r->all));
	if (!r->heap || !r->errq || !r->all)
		return seterr(err, errlen, ENOMEM, "out of memory");
	for (size_t i = 0; i < r->ntraces; i++) {
		struct trawl_reader_trace *t = r->traces[i];
		for (size_t j = 0; j < t->nstreams; j++) {
			r->all[t->streams[j]->order] = t->streams[j];
			bytes += t->streams[j]->size;
		}
	}
	/*
	 * Batches from a few MiB of streams on (below, their setup costs more
	 * than they save); a worker when asked, or by default on 2 CPUs and
	 * more. In one thread, batches decode with the same fast loops as
	 * the worker: `trawl info --threads 1` on the benchmark session took
	 * 0.49-0.59 s instead of 1.19-1.38 s event by event.
	 */
	if (r->threads >= 2)
		reader_set_mode(r, READ_WORKER);
	else if (bytes < AUTO_MIN_BYTES)
		reader_set_mode(r, READ_EVENTS);
	else if (r->threads == 0 && sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		reader_set_mode(r, READ_WORKER);
	else
		reader_set_mode(r, READ_BATCHES);
	if (!r->nstreams)
		reader_set_mode(r, READ_EVENTS);
	return 0;
}

void reader_set_batch(struct trawl_reader *r, uint32_t events)
{
	r->batch_events = events;
}

void reader_set_mode(struct trawl_reader *r, enum read_mode m)
{
	r->threaded = m != READ_EVENTS;
	r->worker = m == READ_WORKER;
}

struct trawl_reader *trawl_reader_new(const char *const *paths, size_t npaths,
				      const struct trawl_reader_opts *o, char *err, size_t errlen)
{
	struct trawl_reader *r = calloc(1, sizeof(*r));
	int rc;

	if (!r) {
		seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	set_opts(r, o);
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		if (stat(paths[i], &st) < 0) {
			rc = seterr(err, errlen, errno, "%s: %s", paths[i], strerror(errno));
			goto err;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc = seterr(err, errlen, ENOTDIR, "%s: not a directory", paths[i]);
			goto err;
		}
		rc = discover(r, paths[i], 0, err, errlen);
		if (rc < 0)
			goto err;
		if (rc == 0) {
			rc = seterr(err, errlen, ENOENT, "%s: no CTF trace found (no `metadata` file)", paths[i]);
			goto err;
		}
	}
	r->fixes = NULL;
	r->nfixes = 0;
	if ((rc = alloc_heap(r, err, errlen)))
		goto err;
	return r;
err:
	trawl_reader_free(r);
	errno = -rc;
	return NULL;
}

struct trawl_reader *reader_new_mem(struct trawl_ctf_trace *meta, const uint8_t *const *bufs,
				    const size_t *lens, size_t n, const struct trawl_reader_opts *o,
				    char *err, size_t errlen)
{
	struct trawl_reader *r = calloc(1, sizeof(*r));
	struct trawl_reader_trace *t = calloc(1, sizeof(*t));
	int rc = -ENOMEM;

	if (!r || !t || !(r->traces = malloc(sizeof(*r->traces)))) {
		free(t);
		seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	t->borrowed = true;
	t->meta = meta;
	r->traces[r->ntraces++] = t;
	set_opts(r, o);
	const struct trawl_ctf_env *h = trawl_ctf_trace_env(meta, "hostname");
	t->hostname = h && !h->is_int && h->sval ? h->sval : "";
	for (size_t i = 0; i < r->nfixes; i++)
		if (r->fixes[i].host && strcmp(r->fixes[i].host, t->hostname) == 0)
			t->fixv = r->fixes[i].xform, t->fix = &t->fixv;
	r->fixes = NULL;
	r->nfixes = 0;
	t->path = strdup("mem");
	if (!t->path)
		goto err;
	if ((rc = ctf_compile_trace(meta, &t->td, r->events, r->nevents, err, errlen)))
		goto err;
	set_maxfix(t);
	number_classes(r, t);
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "mem/s_%zu", i);
		struct trawl_reader_stream *s = new_stream(r, t, name);
		if (!s) {
			rc = -ENOMEM;
			goto err;
		}
		s->borrowed = true;
		s->map = bufs[i];
		s->size = lens[i];
		s->st.bytes = lens[i];
		if ((rc = add_stream(r, t, s))) {
			stream_free(s);
			goto err;
		}
	}
	if ((rc = alloc_heap(r, err, errlen)))
		goto err;
	return r;
err:
	trawl_reader_free(r);
	errno = -rc;
	return NULL;
}

/* ----------------------------------------------------------- accessors */

size_t trawl_reader_ntraces(const struct trawl_reader *r)
{
	return r->ntraces;
}

size_t trawl_reader_nclasses(const struct trawl_reader *r)
{
	return r->nclasses;
}

const struct trawl_reader_trace *trawl_reader_trace_at(const struct trawl_reader *r, size_t i)
{
	return i < r->ntraces ? r->traces[i] : NULL;
}

const char *trawl_reader_trace_path(const struct trawl_reader_trace *t)
{
	return t->path;
}

const char *trawl_reader_trace_hostname(const struct trawl_reader_trace *t)
{
	return t->hostname;
}

const struct trawl_ctf_trace *trawl_reader_trace_meta(const struct trawl_reader_trace *t)
{
	return t->meta;
}

size_t trawl_reader_trace_nstreams(const struct trawl_reader_trace *t)
{
	return t->nstreams;
}

const struct trawl_reader_stream *trawl_reader_trace_stream(const struct trawl_reader_trace *t, size_t i)
{
	return i < t->nstreams ? t->streams[i] : NULL;
}

const struct trawl_reader_trace *trawl_reader_stream_trace(const struct trawl_reader_stream *s)
{
	return s->trace;
}

const char *trawl_reader_stream_path(const struct trawl_reader_stream *s)
{
	return s->path;
}

void trawl_reader_stream_stats(const struct trawl_reader_stream *s,
			       struct trawl_reader_stream_stats *st)
{
	*st = s->threaded ? s->pub : s->st;
}
