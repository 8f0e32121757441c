/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/stream.c - one CTF data stream: packets (header, context, the
 * index beside the trace), events decoded one at a time (tr_ctf_stream_next)
 * or into batches (tr_ctf_stream_fill, with the fast loops of fill-run.h).
 * The merge (lib/pipe/merge.c) orders the streams; this file knows
 * nothing of the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "ctf/stream.h"
#include "ctf/packet.h"	/* CTF_MAGIC */

#define RELEASE_CHUNK (1u << 20)	/* drop consumed pages every 1 MiB (each call costs TLB-shootdown IPIs) ... */
#define RELEASE_LAG (512u << 10)	/* ... this far behind the decoder */

__attribute__((format(printf, 3, 4), noinline, cold))
static int stream_fail(struct ctf_stream *s, uint64_t byte, const char *fmt, ...)
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

static void set_clock(struct ctf_stream *s)
{
	const struct trawl_ctf_trace *t = s->tr->meta;
	int ci = s->scd->clock;
	const struct trawl_ctf_clock *ck = ci >= 0 ? &t->clocks[ci] : NULL;
	uint64_t freq = ck && ck->freq ? ck->freq : 1000000000;
	int64_t off_s = ck ? ck->offset_s : 0, off = ck ? ck->offset : 0;
	s->freq = freq;
	s->fix = s->tr->fix;
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
	s->base = (uint64_t)(off_s + q) * 1000000000u + ctf_ns_from_cycles(freq, (uint64_t)rem);
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
static void release_pages(struct ctf_stream *s, uint64_t off)
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
static void index_drop(struct ctf_stream *s, const char *fmt, ...)
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
static void load_index(struct ctf_stream *s, const char *dir, const char *name)
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
		e->disc = get_be64(p + 40);
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
static void index_seek(struct ctf_stream *s)
{
	const struct trawl_ctf_trace *t = s->tr->meta;
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
		if (ctf_to_ns(s, s->idx[mid].tse) < s->rg->begin)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	const struct ient *last = &s->idx[lo - 1];
	/* the losses so far are the packet before's */
	s->disc = last->disc;
	s->prev_end = ctf_to_ns(s, last->tse);
	s->has_prev_end = true;
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
static bool index_check(struct ctf_stream *s, uint64_t off, uint64_t psize, uint64_t csize)
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


/* ------------------------------------------------- losses and skipped bytes */

/*
 * Events the tracer lost: a packet's events_discarded is the count so far,
 * so a packet whose count grew lost the difference between the end of the
 * packet before it and its own end (babeltrace2's rule); the first packet
 * between its own begin and end. Consecutive lossy packets make one range.
 * Losses wholly outside the reader's time range are not counted.
 */
static void loss_note(struct ctf_stream *s, bool has_b, uint64_t tsb, bool has_e, uint64_t tse,
		      bool has_d, uint64_t disc)
{
	struct ctf_dmg *d = &s->dmg;
	int64_t b = has_b ? ctf_to_ns(s, tsb) : INT64_MIN;
	int64_t e = has_e ? ctf_to_ns(s, tse) : b;
	int64_t from = s->has_prev_end ? s->prev_end : b;
	uint64_t n = 0;

	if (has_d) {
		/* a counter that went down was reset (or wrapped): it counts anew */
		n = disc >= s->disc ? disc - s->disc : disc;
		s->disc = disc;
	}
	if (has_e) {
		s->prev_end = e;
		s->has_prev_end = true;
	}
	if (!n)
		return;
	if (from == INT64_MIN)
		from = e;
	if (e < from)
		e = from;
	if ((s->rg->has_begin && e != INT64_MIN && e < s->rg->begin) ||
	    (s->rg->has_end && from != INT64_MIN && from > s->rg->end))
		return;
	d->lost += n;
	if (d->open && d->cur.end == from) {
		d->cur.end = e;		/* the packet after a lossy one */
		d->cur.events += n;
		return;
	}
	if (d->open) {
		if (d->nloss >= CTF_NLOSS ||
		    (!s->loss && !(s->loss = malloc(CTF_NLOSS * sizeof(*s->loss))))) {
			d->cur.end = e;	/* no room: the last range takes the rest */
			d->cur.events += n;
			return;
		}
		s->loss[d->nloss++] = d->cur;
	}
	d->cur = (struct ctf_loss){ from, e, n };
	d->open = true;
	d->nranges++;
}

/* The bytes from `byte` on are bad: skipped up to where a packet reads
 * again (skip_end()). The reason is the first one's. */
__attribute__((format(printf, 3, 0), cold))
static void skip_begin(struct ctf_stream *s, uint64_t byte, const char *fmt, va_list ap)
{
	if (s->bad_off != UINT64_MAX)
		return;
	s->bad_off = byte;
	vsnprintf(s->bad_why, sizeof(s->bad_why), fmt, ap);
}

/* A packet reads at `upto` (or the bytes end there): the skip ends. */
static void skip_end(struct ctf_stream *s, uint64_t upto)
{
	struct ctf_dmg *d = &s->dmg;

	if (likely(s->bad_off == UINT64_MAX))
		return;
	uint64_t n = upto > s->bad_off ? upto - s->bad_off : 0;
	d->skipped += n;
	d->nskips++;
	if (d->nskip < CTF_NSKIP && (s->skips || (s->skips = malloc(CTF_NSKIP * sizeof(*s->skips))))) {
		struct ctf_skip *k = &s->skips[d->nskip++];
		k->off = s->bad_off;
		k->bytes = n;
		memcpy(k->why, s->bad_why, sizeof(k->why));
	}
	s->bad_off = UINT64_MAX;
	s->bad_idx = false;
}

/* The packet magic's bytes (either byte order) at or after `from`: its
 * offset, or the size. */
static uint64_t find_magic(const struct ctf_stream *s, uint64_t from)
{
	const uint8_t *m = s->map, *end = s->map + s->size;

	for (const uint8_t *p = m + from; p + 4 <= end; p++) {
		p = memchr(p, 0xC1, (size_t)(end - 3 - p));
		if (!p)
			break;
		if ((p[1] == 0x1F && p[2] == 0xFC && p[3] == 0xC1) ||
		    (p[1] == 0xFC && p[2] == 0x1F && p[3] == 0xC1))
			return (uint64_t)(p - m);
	}
	return s->size;
}

/*
 * The packet at `off` is bad: where to try the next one. The index's next
 * entry first; when that one is bad too (or there is no index), the next
 * packet magic after the bad bytes, checked by reading the packet there
 * (the bytes up to the one that reads are skipped). Without a magic in
 * the packet header: the rest of the file.
 */
__attribute__((format(printf, 3, 4), cold))
static void bad_packet(struct ctf_stream *s, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	bool skipping = s->bad_off != UINT64_MAX;
	uint64_t from = off + 1;

	va_start(ap, fmt);
	skip_begin(s, off, fmt, ap);
	va_end(ap);
	if (s->d.rolemask & (1u << ROLE_MAGIC))
		s->seen_magic = true;
	if (s->idx && skipping && s->bad_idx) {
		/* the index led to bytes that are no packet: it is dropped, and
		 * the search starts again after the first bad byte (once) */
		index_drop(s, "entry %" PRIu32 " (offset %" PRIu64 ") is no packet", s->ipos, off);
		if (s->bad_off < off)
			from = s->bad_off + 1;
	}
	s->bad_idx = false;
	if (s->idx) {
		uint32_t lo = 0, hi = s->nidx;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (s->idx[mid].off <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < s->nidx) {
			s->ipos = lo;
			s->iseek = false;
			s->bad_idx = true;
			s->next_off = s->idx[lo].off;
			return;
		}
	}
	s->next_off = s->seen_magic ? find_magic(s, from) : s->size;
}

/* The event at `byte` (of the current packet) is bad: the rest of the
 * packet is skipped; the next packet is read from its declared end. */
__attribute__((format(printf, 3, 4), cold))
static void bad_event(struct ctf_stream *s, uint64_t byte, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	skip_begin(s, byte, fmt, ap);
	va_end(ap);
	s->d.pos = s->d.end;
}

/* Opens the next packet: 1, 0 at the end of the stream, or -errno (ENOMEM; live: -EAGAIN); a bad packet is skipped. */
/* In next_packet(): the packet at off is bad (byte: where, inside it). */
#define BAD_PACKET(byte, ...) { (void)(byte); bad_packet(s, off, __VA_ARGS__); continue; }

static __attribute__((noinline)) int next_packet(struct ctf_stream *s)
{
	struct dctx *c = &s->d;
	const struct ctf_tdec *tr = s->tr;
	const struct trawl_ctf_trace *t = tr->meta;

	if (unlikely(s->idx && !s->isought)) {
		s->isought = true;
		if (s->rg->has_begin)
			index_seek(s);
	}
	for (;;) {
		uint64_t off = s->next_off;
		if (off >= s->size) {
			skip_end(s, s->size);
			if (s->more) {
				/* a live stream: its next bytes, or not yet */
				int m = s->more(s);
				if (m > 0)
					continue;
				if (m < 0)
					return m;	/* -EAGAIN; nothing changed */
			}
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
		if (tr->td.ph.nops && tr_ctf_exec(c, &tr->td.ph, 0, tr->td.ph.nops))
			BAD_PACKET(off + c->errpos / 8, "packet header: %s", c->why);
		if ((c->rolemask & (1u << ROLE_MAGIC)) && c->roles[ROLE_MAGIC] != CTF_MAGIC)
			BAD_PACKET(off, "bad packet magic 0x%08" PRIx64 " (want 0x%08x)",
					   c->roles[ROLE_MAGIC], CTF_MAGIC);
		if ((c->rolemask & (1u << ROLE_UUID)) && t->has_uuid) {
			uint64_t up = c->roles[ROLE_UUID];
			if (!(up & 7) && c->pos >= up + 128 &&
			    memcmp(c->pkt + up / 8, t->uuid, 16) != 0)
				BAD_PACKET(off + up / 8, "packet uuid differs from the trace uuid");
		}
		uint64_t scid = c->rolemask & (1u << ROLE_STREAM_ID) ? c->roles[ROLE_STREAM_ID] : 0;
		const struct trawl_ctf_stream_class *sc = s->sc && s->sc->id == scid ? s->sc : find_sc(t, scid);
		if (!sc && !(c->rolemask & (1u << ROLE_STREAM_ID)) && t->nstreams == 1)
			sc = t->streams[0];
		if (!sc || !sc->priv)
			BAD_PACKET(off, "unknown stream class id %" PRIu64, scid);
		if (sc != s->sc) {
			s->sc = sc;
			s->scd = sc->priv;
			set_clock(s);
		}
		s->st.stream_class_id = sc->id;
		if (c->rolemask & (1u << ROLE_STREAM_INSTANCE_ID))
			s->st.stream_instance_id = c->roles[ROLE_STREAM_INSTANCE_ID];
		const struct sc_dec *sd = s->scd;
		if (sd->pc.nops && tr_ctf_exec(c, &sd->pc, 0, sd->pc.nops))
			BAD_PACKET(off + c->errpos / 8, "packet context: %s", c->why);
		uint64_t psize = c->end, csize;
		if (c->rolemask & (1u << ROLE_PACKET_SIZE)) {
			psize = c->roles[ROLE_PACKET_SIZE];
			if (psize & 7)
				BAD_PACKET(off, "packet_size %" PRIu64 " bits is not a whole number of bytes",
						   psize);
			if (psize / 8 > avail)
				BAD_PACKET(off, "packet_size %" PRIu64 " bytes goes past the end of the file (%" PRIu64 " bytes left)",
						   psize / 8, avail);
			if (psize == 0)
				BAD_PACKET(off, "packet_size is 0");
		}
		csize = psize;
		if (c->rolemask & (1u << ROLE_CONTENT_SIZE)) {
			csize = c->roles[ROLE_CONTENT_SIZE];
			if (csize > psize)
				BAD_PACKET(off, "content_size %" PRIu64 " > packet_size %" PRIu64 " bits",
						   csize, psize);
		}
		if (c->pos > csize)
			BAD_PACKET(off, "packet header and context (%" PRIu64 " bits) exceed content_size %" PRIu64,
					   c->pos, csize);
		if (s->idx && !index_check(s, off, psize, csize))
			continue;
		skip_end(s, off);
		s->bad_idx = false;
		if (c->rolemask & (1u << ROLE_MAGIC))
			s->seen_magic = true;
		c->end = csize;
		s->next_off = off + psize / 8;
		if (c->rolemask & (1u << ROLE_TS_BEGIN))
			c->clock = c->roles[ROLE_TS_BEGIN];
		s->st.packets++;
		if (c->rolemask & (1u << ROLE_DISCARDED))
			s->st.discarded = c->roles[ROLE_DISCARDED];
		loss_note(s, c->rolemask & (1u << ROLE_TS_BEGIN), c->roles[ROLE_TS_BEGIN],
			  c->rolemask & (1u << ROLE_TS_END), c->roles[ROLE_TS_END],
			  c->rolemask & (1u << ROLE_DISCARDED), c->roles[ROLE_DISCARDED]);
		if (c->rolemask & (1u << ROLE_CPU)) {
			s->ev.cpu = (uint32_t)c->roles[ROLE_CPU];
			s->st.cpu = s->ev.cpu;
		}
		if (s->rg->has_begin && (c->rolemask & (1u << ROLE_TS_END)) &&
		    ctf_to_ns(s, c->roles[ROLE_TS_END]) < s->rg->begin)
			continue;	/* the whole packet is before the range */
		if (s->rg->has_end && (c->rolemask & (1u << ROLE_TS_BEGIN)) &&
		    ctf_to_ns(s, c->roles[ROLE_TS_BEGIN]) > s->rg->end) {
			s->done = true;
			return 0;
		}
		return 1;
	}
}
#undef BAD_PACKET

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
/* In tr_ctf_stream_next(): the event at byte is bad, the rest of its packet skipped. */
#define BAD_EVENT(byte, ...) { bad_event(s, byte, __VA_ARGS__); goto again; }

__attribute__((noinline)) int tr_ctf_stream_next(struct ctf_stream *s, struct trawl_event *e)
{
	struct dctx *c = &s->d;

	if (unlikely(s->done))
		return 0;
again:
	for (;;) {
		if (unlikely(c->pos >= c->end)) {
			int rc = next_packet(s);
			if (rc <= 0)
				return rc;
			continue;
		}
		const struct sc_dec *sd = s->scd;
		uint64_t evpos = c->pos, id = 0;
		bool has_id = true;
		switch (sd->hdr) {
		case HDR_COMPACT:
		case HDR_LARGE: {
			bool compact = sd->hdr == HDR_COMPACT;
			uint64_t p = (c->pos + 7) & ~(uint64_t)7, ncl;
			if (unlikely(p > c->end || c->end - p < CTF_HDR_BYTES(compact) * 8))
				goto truncated;
			const uint8_t *b = c->pkt + (p >> 3);
			__builtin_prefetch(b + CTF_PREFETCH);
			if (likely(ctf_hdr_short(compact, b, c->clock, &id, &ncl))) {
				c->clock = ncl;
				c->pos = p + CTF_HDR_BYTES(compact) * 8;
			} else {
				if (unlikely(c->end - p < CTF_HDR_EXT_BITS(compact)))
					goto truncated;
				ctf_hdr_ext(compact, b, &id, &c->clock);
				c->pos = p + CTF_HDR_EXT_BITS(compact);
			}
			break;
		}
		case HDR_GENERIC:
			c->nv = 0;
			c->rolemask &= ~(1u << ROLE_EVENT_ID);
			if (tr_ctf_exec(c, &sd->eh, 0, sd->eh.nops))
				BAD_EVENT(s->pkt_off + c->errpos / 8, "event header: %s", c->why);
			has_id = c->rolemask & (1u << ROLE_EVENT_ID);
			id = has_id ? c->roles[ROLE_EVENT_ID] : 0;
			break;
		case HDR_NONE:
			has_id = false;
			break;
		}
		const struct trawl_ctf_event_class *ec = lookup(sd, id, has_id);
		if (unlikely(!ec))
			BAD_EVENT(s->pkt_off + evpos / 8, "unknown event id %" PRIu64, id);
		int64_t ts = ctf_to_ns(s, c->clock);
		if (unlikely(s->rg->has_end && ts > s->rg->end)) {
			s->done = true;
			return 0;
		}
		const struct ec_dec *ed = ec->priv;
		bool keep = ed->wanted && (!s->rg->has_begin || ts >= s->rg->begin);
		uint64_t evbody = c->pos;
		const uint8_t *semi_end;
		if (likely(ed->fixed && !(c->pos & 7))) {
			if (unlikely((c->end - c->pos) >> 3 < ed->fixed_bytes))
				BAD_EVENT(s->pkt_off + evpos / 8,
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
			int rc = tr_ctf_exec(c, &ed->body, 0, ed->body.nops);
			if (unlikely(rc)) {
				if (rc == -ENOMEM) {
					stream_fail(s, s->pkt_off + evpos / 8, "%s", c->why);
					s->errcode = ENOMEM;
					return rc;
				}
				BAD_EVENT(s->pkt_off + c->errpos / 8, "event `%s`: %s",
						   ec->name, c->why);
			}
		}
		if (unlikely(c->pos == evpos))
			BAD_EVENT(s->pkt_off + evpos / 8,
				  "event `%s` takes no bits: the packet cannot advance", ec->name);
		s->st.events++;
		if (unlikely(s->st.first_ts == INT64_MAX))
			s->st.first_ts = ts;
		s->st.last_ts = ts;
		if (!keep)
			continue;
		e->ts = ts;
		e->cycles = c->clock;
		e->cls = ec;
		e->stream = s->handle;
		e->values = c->tape;
		e->nvalues = c->nv;
		e->cpu = s->ev.cpu;
		return 1;
	}
truncated:
	BAD_EVENT(s->pkt_off + c->pos / 8, "truncated event header (%" PRIu64 " bits left in the packet content)",
			   c->end - c->pos);
}
#undef BAD_EVENT

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

/*
 * Leaves out of b the events of classes no sink wants (s->want) that the
 * general path put there (b->loose), except b's first and last: records,
 * raw clocks, cpus and tapes move down over the holes, in place.
 * fill_run() leaves them out as it decodes.
 */
static __attribute__((noinline)) void batch_compact(const struct ctf_stream *s, struct batch *b)
{
	const uint8_t *want = s->want;
	const uint32_t n = b->n, nw = s->nwant;
	uint32_t o = 1;
	size_t vi = b->rec[0].nv, vo = vi;

	b->loose = false;
	if (n <= 2)
		return;
	/* each run of events kept moved at once (few are left out: a sink
	 * that wants most classes would move every event after the first
	 * one left out, one by one) */
	for (uint32_t i = 1; i < n;) {
		if (ctf_unwanted(want, nw, b->rec[i].cls) && i != n - 1) {
			vi += b->rec[i++].nv;
			continue;
		}
		uint32_t j = i;
		size_t nv = 0;
		while (j < n && (j == n - 1 || !ctf_unwanted(want, nw, b->rec[j].cls)))
			nv += b->rec[j++].nv;
		if (o != i) {
			memmove(&b->rec[o], &b->rec[i], (j - i) * sizeof(*b->rec));
			if (!b->ghz)
				memmove(&b->cyc[o], &b->cyc[i], (j - i) * sizeof(*b->cyc));
			if (!b->onecpu)
				memmove(&b->cpu[o], &b->cpu[i], (j - i) * sizeof(*b->cpu));
			if (vo != vi)
				memmove(b->vals + vo, b->vals + vi, nv * sizeof(*b->vals));
		}
		o += j - i;
		vi += nv;
		vo += nv;
		i = j;
	}
	b->n = o;
	b->nv = vo;
}

/* The general path's append: b's last event stays, whatever its class
 * (batch_compact() then). */
static inline void batch_add(const struct ctf_stream *s, struct batch *b,
			     const struct trawl_event *e)
{
	uint32_t ci = e->cls->index;

	b->loose |= b->pend;	/* fill_run()'s last, no longer the last */
	b->pend = false;
	batch_push(b, e);
	b->ndec++;
	b->loose |= ctf_unwanted(s->want, s->nwant, ci) && b->n > 1;
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

static uint32_t fill_run(struct ctf_stream *s, struct batch *b, size_t least)
{
	const struct sc_dec *sd = s->scd;

	if (!sd || !sd->fast || (s->rg->has_begin | s->rg->has_end) || !s->ghz)
		return 0;
#if defined(__x86_64__) && defined(__GNUC__)
	if (s->rg->simd) {
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

/* Grows b's values to hold need (b is empty): 0, or -ENOMEM as the
 * stream's error and b's end. */
static __attribute__((noinline, cold)) int batch_room(struct ctf_stream *s, struct batch *b,
							size_t need)
{
	if (need <= b->capv)
		return 0;
	union trawl_ctf_value *nv = realloc(b->vals, need * sizeof(*nv));
	if (!nv) {
		snprintf(s->err, sizeof(s->err), "%s: out of memory", s->path);
		s->errcode = ENOMEM;
		s->done = true;
		b->term = -ENOMEM;
		return -ENOMEM;
	}
	b->vals = nv;
	b->capv = need;
	return 0;
}

/* Where a stream's decoding is (skip_to_last() may go back there). */
struct spot {
	struct dctx c;
	uint64_t pkt_off, next_off, packets;
	uint32_t ipos;
	const struct trawl_ctf_stream_class *sc;
	const struct sc_dec *scd;
	struct ctf_dmg dmg;
	uint64_t disc, bad_off;
	int64_t prev_end;
	bool has_prev_end;
};

static void spot_save(const struct ctf_stream *s, struct spot *p)
{
	*p = (struct spot){ s->d, s->pkt_off, s->next_off, s->st.packets, s->ipos, s->sc, s->scd,
			    s->dmg, s->disc, s->bad_off, s->prev_end, s->has_prev_end };
}

/* Back to p, as if the packets read since were not (their errors too). */
static void spot_restore(struct ctf_stream *s, const struct spot *p)
{
	s->d = p->c;
	s->pkt_off = p->pkt_off;
	s->next_off = p->next_off;
	s->st.packets = p->packets;
	s->ipos = p->ipos;
	s->dmg = p->dmg;	/* entries past its counts are written again */
	s->disc = p->disc;
	s->bad_off = p->bad_off;
	s->prev_end = p->prev_end;
	s->has_prev_end = p->has_prev_end;
	s->done = false;
	s->errcode = 0;
	s->err[0] = 0;
	if (s->sc != p->sc) {
		s->sc = p->sc;
		s->scd = p->scd;
		set_clock(s);
	}
}

/*
 * A stream whose events no sink wants (s->skip), past its first batch:
 * goes to its last packet through the index, or else walks its packets'
 * headers and contexts (their events are not decoded) to the last one;
 * decoding goes on there, so that the stream's last event still comes.
 * Within the last packet already, or packets without a timestamp_begin:
 * nothing moves. 0 or -errno (the stream's error).
 */
static int skip_to_last(struct ctf_stream *s)
{
	struct dctx *c = &s->d;
	struct spot here;
	uint32_t ilast = s->ipos;
	uint64_t last = UINT64_MAX;

	s->skip = false;
	/* a packet's first event's time needs its timestamp_begin (compact
	 * headers carry the low bits only): without it, no skipping */
	if (s->done || !(c->rolemask & (1u << ROLE_TS_BEGIN)))
		return 0;
	spot_save(s, &here);
	/*
	 * With an index whose entries from the next packet on follow each
	 * other to the end of the file: straight to its last entry, no page
	 * of the packets between touched (the last packet's context has the
	 * lost events so far; it is checked against its entry when read).
	 */
	if (s->idx && s->ipos < s->nidx && s->idx[s->ipos].off == s->next_off) {
		uint32_t i = s->ipos;
		while (i + 1 < s->nidx && s->idx[i + 1].off == s->idx[i].off + s->idx[i].psize / 8)
			i++;
		if (i > here.ipos && s->idx[i].off + s->idx[i].psize / 8 == s->size) {
			/* the losses of the packets passed, from their entries */
			for (uint32_t j = here.ipos; j < i; j++)
				loss_note(s, true, s->idx[j].tsb, true, s->idx[j].tse, true,
					  s->idx[j].disc);
			s->next_off = s->idx[i].off;
			s->ipos = i;
			c->pos = c->end;
			if (next_packet(s) > 0) {
				s->st.packets += i - here.ipos;
				return 0;
			}
			spot_restore(s, &here);	/* no packet there: the index lied, walk */
		}
	}
	struct spot atlast;	/* the losses and skips as the last packet opened */
	for (;;) {
		uint32_t ip = s->ipos;
		c->pos = c->end;
		int rc = next_packet(s);
		if (rc < 0)
			return rc;
		if (!rc)
			break;
		last = s->pkt_off;
		/* its entry (bad packets skipped on the way move ipos) */
		ilast = s->idx && s->ipos ? s->ipos - 1 : ip;
		spot_save(s, &atlast);
	}
	if (last == UINT64_MAX) {
		spot_restore(s, &here);	/* no packet after this one: on with it */
		return 0;
	}
	/* what comes after the last packet (a bad tail) is found again when
	 * it is decoded: not twice */
	s->dmg = atlast.dmg;
	s->disc = atlast.disc;
	s->bad_off = UINT64_MAX;
	s->prev_end = atlast.prev_end;
	s->has_prev_end = atlast.has_prev_end;
	/* the last packet, opened again by the next decode */
	s->done = false;
	s->next_off = last;
	s->ipos = ilast;
	s->st.packets--;
	c->pos = c->end;
	return 0;
}

/*
 * Decodes the stream's next events into b, up to its capacity, then the
 * end or an error as b->term. Runs as the stream's one filler.
 */
void tr_ctf_stream_fill(struct ctf_stream *s, struct batch *b)
{
	struct dctx *c = &s->d;
	const size_t least = (size_t)s->tr->maxfix + 64;	/* what decoding assumes */

	b->n = 0;
	b->nv = 0;
	b->ndec = 0;
	b->pend = b->loose = false;
	b->term = 0;
	b->hold = false;
	s->fills++;
	/* a live trace's metadata grew larger events: the batch too */
	if (unlikely(b->capv < 2 * least) && batch_room(s, b, 2 * least))
		goto out;
	if (unlikely(s->skip && !s->carry && s->st.events)) {
		int rc = skip_to_last(s);
		if (rc < 0) {
			b->term = -(s->errcode ? s->errcode : EBADMSG);
			goto out;
		}
	}
	if (s->carry) {
		/* an event too large for the previous batch: b is empty */
		if (batch_room(s, b, s->ev.nvalues + least))
			goto out;
		memcpy(b->vals, s->ev.values, s->ev.nvalues * sizeof(*b->vals));
		batch_add(s, b, &s->ev);
		s->carry = false;
	}
	while (b->ndec < b->cap) {
		size_t room = b->capv - b->nv;
		if (room < least)
			break;
		if (fill_run(s, b, least))
			continue;
		union trawl_ctf_value *t = b->vals + b->nv;
		c->tape = t;
		c->cap = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
		struct trawl_event *e = &s->ev;	/* the consumer reads batches only */
		int rc = ctf_fast_next(s, e);
		if (!rc)
			rc = tr_ctf_stream_next(s, e);
		if (unlikely(rc <= 0)) {
			if (rc == -EAGAIN)
				b->hold = true;	/* a live stream has nothing more yet */
			else
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
		batch_add(s, b, e);
	}
out:
	c->tape = c->own;
	c->cap = c->owncap;
	if (b->loose)
		batch_compact(s, b);
	b->st = s->st;
	b->dmg = s->dmg;
	b->off = ctf_stream_consumed(s);
}

/* ------------------------------------------------------------ lifecycle */

int tr_ctf_batch_init(struct batch *b, uint32_t cap, size_t capv)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap;
	b->capv = capv;
	b->rec = malloc(cap * sizeof(*b->rec));
	b->cyc = malloc(cap * sizeof(*b->cyc));
	b->cpu = malloc(cap * sizeof(*b->cpu));
	b->vals = malloc(capv * sizeof(*b->vals));
	return b->rec && b->cyc && b->cpu && b->vals ? 0 : -ENOMEM;
}

void tr_ctf_batch_release(struct batch *b)
{
	free(b->rec);
	free(b->cyc);
	free(b->cpu);
	free(b->vals);
}

static void set_maxfix(struct ctf_tdec *t)
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

int tr_ctf_tdec_init(struct ctf_tdec *t, struct trawl_ctf_trace *meta,
		  const char *const *events, size_t nevents, char *err, size_t errlen)
{
	t->meta = meta;
	int rc = tr_ctf_compile_trace(meta, &t->td, events, nevents, err, errlen);
	if (rc)
		return rc;
	set_maxfix(t);
	return 0;
}

void tr_ctf_tdec_release(struct ctf_tdec *t)
{
	free(t->td.ph_mem);
	t->td.ph_mem = NULL;
}

int tr_ctf_stream_init(struct ctf_stream *s, const struct ctf_tdec *t, const struct ctf_range *rg,
		    const char *path, const struct trawl_reader_stream *handle)
{
	memset(s, 0, sizeof(*s));
	s->tr = t;
	s->rg = rg;
	s->handle = handle;
	s->ev.stream = handle;
	s->path = strdup(path);
	s->st.stream_instance_id = UINT64_MAX;
	s->st.first_ts = INT64_MAX;
	s->st.last_ts = INT64_MIN;
	s->bad_off = UINT64_MAX;
	s->d.cap = t->maxfix + 64;
	s->d.tape = malloc(s->d.cap * sizeof(*s->d.tape));
	s->d.own = s->d.tape;
	s->d.owncap = s->d.cap;
	s->d.regs = calloc(t->td.nregs + 1, sizeof(uint64_t));
	s->ev.values = s->d.tape;
	return s->path && s->d.tape && s->d.regs ? 0 : -ENOMEM;
}

void tr_ctf_stream_release(struct ctf_stream *s)
{
	if (s->map && s->size && !s->borrowed)
		munmap((void *)s->map, s->size);
	free(s->idx);
	free(s->loss);
	free(s->skips);
	free(s->d.own);
	free(s->d.regs);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

int tr_ctf_stream_map_file(struct ctf_stream *s, const char *dir, const char *name,
			char *err, size_t errlen)
{
	struct stat st;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = tr_seterr(err, errlen, errno, "%s: %s", s->path, strerror(errno));
		goto out;
	}
	s->size = (uint64_t)st.st_size;
	s->st.bytes = s->size;
	if (s->size) {
		void *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			rc = tr_seterr(err, errlen, errno, "%s: mmap: %s", s->path, strerror(errno));
			s->size = 0;
			goto out;
		}
		madvise(m, s->size, MADV_SEQUENTIAL);
		s->map = m;
	}
	load_index(s, dir, name);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}


int tr_ctf_stream_retarget(struct ctf_stream *s, const struct ctf_tdec *t, uint32_t oldregs)
{
	uint64_t *regs = calloc(t->td.nregs + 1, sizeof(uint64_t));

	if (!regs)
		return -ENOMEM;
	memcpy(regs, s->d.regs, (oldregs < t->td.nregs ? oldregs + 1 : t->td.nregs + 1) *
		     sizeof(uint64_t));
	free(s->d.regs);
	s->d.regs = regs;
	if (t->maxfix + 64 > s->d.owncap) {
		union trawl_ctf_value *own = realloc(s->d.own, (t->maxfix + 64) * sizeof(*own));
		if (!own)
			return -ENOMEM;
		if (s->d.tape == s->d.own)
			s->d.tape = own;
		if (s->ev.values == s->d.own)
			s->ev.values = own;
		s->d.own = own;
		s->d.owncap = t->maxfix + 64;
		if (s->d.tape == own)
			s->d.cap = s->d.owncap;
	}
	s->tr = t;
	if (s->sc) {
		/* the same class in the new model (else the old one goes on:
		 * its model stays until the reader is freed) */
		const struct trawl_ctf_stream_class *sc = find_sc(t->meta, s->sc->id);
		if (sc && sc->priv) {
			s->sc = sc;
			s->scd = sc->priv;
			set_clock(s);
		}
	}
	return 0;
}

int64_t tr_ctf_stream_cycles_ns(struct ctf_stream *s, uint64_t cycles)
{
	if (!s->scd) {
		const struct trawl_ctf_trace *m = s->tr->meta;
		const struct trawl_ctf_clock *ck = m && m->nclocks ? &m->clocks[0] : NULL;
		uint64_t freq = ck && ck->freq ? ck->freq : 1000000000;
		int64_t ns = (ck ? ck->offset_s : 0) * 1000000000 +
			     (int64_t)ctf_ns_from_cycles(freq, (uint64_t)(ck ? ck->offset : 0)) +
			     (int64_t)(freq == 1000000000 ? cycles : ctf_ns_from_cycles(freq, cycles));
		return s->tr->fix ? trawl_sync_xform_apply(s->tr->fix, ns) : ns;
	}
	return ctf_to_ns(s, cycles);
}
