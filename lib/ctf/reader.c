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
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf/reader-internal.h"

#define CTF_MAGIC 0xC1FC1FC1u
#define RELEASE_CHUNK (8u << 20)	/* drop consumed pages every 8 MiB */
#define MAX_DIR_DEPTH 16
#define PREFETCH 1024		/* bytes ahead of the event being decoded */

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
	bool ghz;
	uint64_t base;			/* ghz: offset_s * 1e9 + offset */
	int64_t off_s_ns, off_cyc;
	uint64_t freq;
	struct trawl_event ev;
	struct trawl_reader_stream_stats st;
	uint32_t order;
	bool done;
	bool borrowed;			/* map belongs to the caller */
	int errcode;
	char err[384];
};

struct trawl_reader_trace {
	char *path;
	char *real;
	const char *hostname;
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

struct trawl_reader {
	struct trawl_reader_trace **traces;
	size_t ntraces;
	struct hent *heap;
	size_t nheap;
	struct trawl_reader_stream *pending;
	struct trawl_reader_stream **errq;
	size_t nerrq, errq_head;
	uint32_t nstreams;
	bool primed;
	unsigned nerrors;
	const char *lasterr;
	int64_t begin, end;
	bool has_begin, has_end;
	const char *const *hosts;
	size_t nhosts;
	const char *const *events;
	size_t nevents;
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

static inline int64_t to_ns(const struct trawl_reader_stream *s, uint64_t cyc)
{
	if (likely(s->ghz))
		return (int64_t)(s->base + cyc);
	__int128 c = (__int128)s->off_cyc + (__int128)cyc;
	/* wraps (not UB) on absurd values from corrupt data */
	return (int64_t)((uint64_t)s->off_s_ns + (uint64_t)(int64_t)(c * 1000000000 / (__int128)s->freq));
}

static void set_clock(struct trawl_reader_stream *s)
{
	const struct trawl_ctf_trace *t = s->trace->meta;
	int ci = s->scd->clock;
	const struct trawl_ctf_clock *ck = ci >= 0 ? &t->clocks[ci] : NULL;
	uint64_t freq = ck && ck->freq ? ck->freq : 1000000000;
	int64_t off_s = ck ? ck->offset_s : 0, off = ck ? ck->offset : 0;
	s->freq = freq;
	s->ghz = freq == 1000000000;
	s->base = (uint64_t)off_s * 1000000000u + (uint64_t)off;
	s->off_s_ns = (int64_t)((uint64_t)off_s * 1000000000u);
	s->off_cyc = off;
}

static const struct trawl_ctf_stream_class *find_sc(const struct trawl_ctf_trace *t, uint64_t id)
{
	for (size_t i = 0; i < t->nstreams; i++)
		if (t->streams[i]->id == id)
			return t->streams[i];
	return NULL;
}

static void release_pages(struct trawl_reader_stream *s, uint64_t off)
{
	if (off - s->advised < RELEASE_CHUNK || s->borrowed)
		return;
	uint64_t upto = off & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	if (upto > s->advised) {
		madvise((void *)(s->map + s->advised), upto - s->advised, MADV_DONTNEED);
		s->advised = upto;
	}
}

/* Opens the next packet: 1, 0 at the end of the stream, or -EBADMSG. */
static __attribute__((noinline)) int next_packet(struct trawl_reader *r, struct trawl_reader_stream *s)
{
	struct dctx *c = &s->d;
	struct trawl_reader_trace *tr = s->trace;
	const struct trawl_ctf_trace *t = tr->meta;

	for (;;) {
		uint64_t off = s->next_off;
		if (off >= s->size) {
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

/* Decodes the stream's next event: 1, 0 at the end, -errno on corruption. */
static __attribute__((noinline)) int stream_next(struct trawl_reader *r, struct trawl_reader_stream *s)
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
		} else {
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
		s->ev.ts = ts;
		s->ev.cycles = c->clock;
		s->ev.cls = ec;
		s->ev.values = c->tape;
		s->ev.nvalues = c->nv;
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
							   struct trawl_reader_stream *s)
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
	s->ev.ts = ts;
	s->ev.cycles = clock;
	s->ev.cls = ec;
	s->ev.values = c->tape;
	s->ev.nvalues = c->nv;
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
			int rc = stream_next(r, s);
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
		int rc = stream_next(r, s);
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

int trawl_reader_next(struct trawl_reader *r, const struct trawl_event **ev)
{
	struct trawl_reader_stream *s = r->pending;

	if (likely(s) && likely(fast_next(r, s))) {
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
	free(s->d.tape);
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
		       char *err, size_t errlen)
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
			rc = open_stream(r, t, p, err, errlen);
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
}

static int alloc_heap(struct trawl_reader *r, char *err, size_t errlen)
{
	r->heap = calloc(r->nstreams + 1, sizeof(*r->heap));
	r->errq = calloc(r->nstreams + 1, sizeof(*r->errq));
	if (!r->heap || !r->errq)
		return seterr(err, errlen, ENOMEM, "out of memory");
	return 0;
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
	t->path = strdup("mem");
	if (!t->path)
		goto err;
	if ((rc = ctf_compile_trace(meta, &t->td, r->events, r->nevents, err, errlen)))
		goto err;
	set_maxfix(t);
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
	*st = s->st;
}
