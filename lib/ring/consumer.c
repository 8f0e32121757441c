/* SPDX-License-Identifier: MIT */
/*
 * The consumer's side of a ring buffer: the agent's, for a ring another
 * process produces into (its memfd came with SCM_RIGHTS), and the
 * in-process session's (lib/ust/output.c): draining finished packets to a
 * CTF stream, the final flush once the producer is gone (it exited, was
 * stopped, or was killed: the shared memory still holds everything it
 * committed), and the flight-recorder snapshot. The protocol is the one
 * of ring.h.
 *
 * The shared memory is written by another process, maybe a broken one:
 * every offset and counter read from it is checked before use, and a ring
 * that breaks the protocol is abandoned (ust_cons.bad).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctf/ctf-internal.h"
#include "ring/ring.h"
#include "util/clock.h"
#include "ust/ust-internal.h"

/* Rewrites the packet's ids for the agent's trace (the producer does not
 * know them), then writes it: a packet of nev events (UINT64_MAX: not
 * known; a count no packet of size could hold is not known either). The
 * packet is not the producer's any more. */
static int put_ids(struct trawl_ctf_wstream *ws, uint8_t *pk, size_t size,
		   const uint8_t uuid[16], uint32_t stream_id, uint64_t nev)
{
	uint64_t inst = trawl_ctf_wstream_instance_id(ws);
	memcpy(pk + PK_UUID, uuid, 16);
	put_le32(pk + PK_STREAM_ID, stream_id);
	put_le64(pk + PK_INSTANCE_ID, inst);
	return tr_ctf_wstream_packet_n(ws, pk, size, nev <= size ? nev : UINT64_MAX);
}

/* The same for a ring's packet: the events of a packet the writer refused
 * (it failed before: the relay cut it off) counted in c->refused. */
static int put_packet_n(struct ust_cons *c, uint8_t *pk, size_t size, const uint8_t uuid[16],
			uint32_t stream_id, uint64_t nev)
{
	int r = put_ids(c->ws, pk, size, uuid, stream_id, nev);
	if (r < 0 && nev <= size)
		c->refused += nev;
	return r;
}

static int put_packet(struct trawl_ctf_wstream *ws, uint8_t *pk, size_t size,
		      const uint8_t uuid[16], uint32_t stream_id)
{
	return put_ids(ws, pk, size, uuid, stream_id, UINT64_MAX);
}

/* ------------------------------------------------------------ live parts */

int tr_ust_cons_live_init(struct ust_cons *c)
{
	if (c->part)
		return 0;
	c->part = malloc(c->ring.S);
	if (!c->part)
		return -ENOMEM;
	c->live_off = PK_HDR_END;
	return 0;
}

void tr_ust_cons_live_release(struct ust_cons *c)
{
	free(c->part);
	c->part = NULL;
}

/* The events of bytes [from, to) of packet pk (a copy: the walk checks
 * every length), or UINT64_MAX when they are not whole events of et (one
 * of an id the consumer does not know yet, or a broken producer). */
static uint64_t count_events(const struct ust_evtab *et, const uint8_t *pk, size_t from,
			     size_t to)
{
	uint64_t n = 0;
	size_t len;
	while (from < to && (len = tr_ust_event_len(et, pk + from, to - from))) {
		from += len;
		n++;
	}
	return from == to ? n : UINT64_MAX;
}

/* Writes bytes [from, to) of packet pk as a packet of its own, from tb to
 * te, with events_discarded disc: nev events, or with et those the walk
 * of the copy finds (then, when they are not whole events of et, nothing
 * is written: returns 1). */
static int put_part(struct ust_cons *c, const uint8_t *pk, size_t from, size_t to,
		    const struct ust_evtab *et, uint64_t nev, uint64_t tb, uint64_t te,
		    uint64_t disc, const uint8_t uuid[16], uint32_t stream_id)
{
	uint8_t *b = c->part;
	size_t content = PK_HDR_END + (to - from);
	size_t size = (content + 7) & ~(size_t)7;
	memcpy(b, pk, PK_HDR_END);
	memcpy(b + PK_HDR_END, pk + from, to - from);
	if (et && (nev = count_events(et, b, PK_HDR_END, content)) == UINT64_MAX)
		return 1;
	memset(b + content, 0, size - content);
	put_le64(b + PK_TS_BEGIN, tb);
	put_le64(b + PK_TS_END, te);
	put_le64(b + PK_CONTENT_SIZE, (uint64_t)content * 8);
	put_le64(b + PK_PACKET_SIZE, (uint64_t)size * 8);
	put_le64(b + PK_SEQ_NUM, c->out_seq++);
	put_le64(b + PK_DISCARDED, disc);
	c->live_end = te;
	if (nev != UINT64_MAX)
		c->live_nev += nev;
	return put_packet_n(c, b, size, uuid, stream_id, nev);
}

/* A finished packet, live: what of it is not out yet, its events those
 * the ring counted in the packet (finalize) less those of its parts out
 * already. */
static int put_rest(struct ust_cons *c, const uint8_t *pk, uint64_t nev, const uint8_t uuid[16],
		    uint32_t stream_id)
{
	uint64_t content = get_le64(pk + PK_CONTENT_SIZE) / 8;
	if (content < c->live_off || content > c->ring.S) {
		c->bad = true;
		return -EPROTO;
	}
	uint64_t tb = get_le64(pk + PK_TS_BEGIN), te = get_le64(pk + PK_TS_END);
	if (tb < c->live_end)
		tb = c->live_end;
	if (te < tb)
		te = tb;
	int r = put_part(c, pk, c->live_off, content, NULL,
			 nev >= c->live_nev ? nev - c->live_nev : UINT64_MAX, tb, te,
			 get_le64(pk + PK_DISCARDED), uuid, stream_id);
	c->live_off = PK_HDR_END;
	c->live_nev = 0;
	return r;
}

static uint64_t acq(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

int tr_ust_cons_live(struct ust_cons *c, const uint8_t uuid[16], uint32_t stream_id,
		     const struct ust_evtab *et)
{
	struct ust_shm *h = c->ring.shm;
	if (c->bad || !c->part || !c->ws || h->mode != TRAWL_UST_DISCARD)
		return 0;
	/*
	 * A consistent (open packet, pos, last_ts) without stopping the
	 * producer: pos and last_ts re-read until neither packet nor pos
	 * moved. Partners: the release stores of quiet_ts (tr_ust_live_tick),
	 * produced (finalize), opened and pos (open, commit), last_ts
	 * (reserve, before pos). Then last_ts is the stamp of the event at
	 * pos or of the one being written after it: no committed event is
	 * after it, no later one before it.
	 */
	uint64_t q = acq(&h->quiet_ts), p1, o1, pos, last;
	uint32_t open;
	for (int i = 0;; i++) {
		p1 = acq(&h->produced);
		o1 = acq(&h->opened);
		open = __atomic_load_n(&h->open, __ATOMIC_RELAXED);
		pos = acq(&h->pos);
		last = acq(&h->last_ts);
		uint64_t pos2 = acq(&h->pos), p2 = acq(&h->produced), o2 = acq(&h->opened);
		if (p1 == p2 && o1 == o2 && pos == pos2)
			break;
		if (i == 3)
			return 0;	/* a busy producer: its packets fill up anyway */
	}
	if (p1 != c->consumed)
		return 0;	/* a packet to drain first: next time */
	/* a packet open that `opened` does not count: a producer of an older
	 * libtrawl (it never stores opened), or one opening a packet now */
	if (o1 != p1 + 1 && open)
		return 0;
	/* no event not yet out is before x, none out is after it */
	uint64_t x = last > q ? last : q;
	if (x < c->live_end)
		x = c->live_end;
	if (o1 == p1 + 1 && pos > c->live_off) {
		if (pos > c->ring.S) {
			c->bad = true;
			return -EPROTO;
		}
		const uint8_t *pk = ust_ring_subbuf(&c->ring, p1);
		uint64_t tb = get_le64(pk + PK_TS_BEGIN);
		if (tb < c->live_end)
			tb = c->live_end;
		if (x < tb)
			x = tb;
		/* its events counted in the copy (below pos, the bytes stay
		 * as they are while the packet is open); not whole events of
		 * et (an id not known yet): they go with the rest of the
		 * packet, counted by the ring, once it is finished */
		int r = put_part(c, pk, c->live_off, pos, et, et ? 0 : UINT64_MAX, tb, x,
				 c->disc_written, uuid, stream_id);
		if (r == 1)
			return 0;
		c->live_off = pos;
		return r;
	}
	return tr_ust_cons_live_end(c, x);
}

bool tr_ust_cons_live_pending(const struct ust_cons *c)
{
	const struct ust_shm *h = c->ring.shm;
	if (c->bad || !c->part || !c->ws || !h || h->mode != TRAWL_UST_DISCARD)
		return false;
	/* a packet open, the one partly out (drained up to it), with more
	 * committed than is out (a hint: tr_ust_cons_live reads it all
	 * consistently) */
	uint64_t p = acq(&h->produced);
	return p == c->consumed && acq(&h->opened) == p + 1 && acq(&h->pos) > c->live_off;
}

int tr_ust_cons_live_end(struct ust_cons *c, uint64_t ts)
{
	if (!c->ws || ts <= c->live_end)
		return 0;
	c->live_end = ts;
	return trawl_ctf_wstream_beacon(c->ws, ts);
}

/* ------------------------------------------------------------ draining */

int tr_ust_cons_drain(struct ust_cons *c, const uint8_t uuid[16], uint32_t stream_id)
{
	struct ust_shm *h = c->ring.shm;
	int ret = 0;
	if (c->bad || h->mode != TRAWL_UST_DISCARD)
		return 0;
	/* partner: tr_ust_ring_finalize's release store of produced */
	uint64_t P = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
	if (P < c->consumed || P - c->consumed > c->ring.N) {
		c->bad = true;
		return -EPROTO;
	}
	uint64_t now = c->consumed < P ? tr_mono_ns() : 0;
	while (c->consumed < P) {
		uint8_t *pk = ust_ring_subbuf(&c->ring, c->consumed);
		if (c->ws) {
			/* whole, its events counted (finalize stored them
			 * before its release of produced) */
			uint64_t nev = h->sb[c->consumed & (c->ring.N - 1)].nev;
			int r = c->part ? put_rest(c, pk, nev, uuid, stream_id) :
				put_packet_n(c, pk, c->ring.S, uuid, stream_id, nev);
			if (r < 0 && !ret)
				ret = r;
			if (c->bad)
				return ret;
		}
		c->disc_written = get_le64(pk + PK_DISCARDED);
		if (ust_reclaim_due(now, &c->last_ns))
			tr_ust_ring_reclaim(&c->ring, c->consumed);
		c->consumed++;
		c->packets++;
		/* partner: tr_ust_ring_open's acquire load of consumed */
		__atomic_store_n(&h->consumed, c->consumed, __ATOMIC_RELEASE);
	}
	return ret;
}

int tr_ust_cons_final(struct ust_cons *c, const uint8_t uuid[16], uint32_t stream_id,
		   bool stuck)
{
	struct ust_shm *h = c->ring.shm;
	bool discard = h->mode == TRAWL_UST_DISCARD;
	int ret = 0, r;
	if (c->flushed || c->bad)
		goto out;
	/* partner: commit's release store of pos */
	uint64_t pos = __atomic_load_n(&h->pos, __ATOMIC_ACQUIRE);
	if (stuck) {
		/* the producer may still be inside an event: leave it */
		ret = tr_ust_cons_drain(c, uuid, stream_id);
		goto out;
	}
	if (h->open) {
		if (pos < PK_HDR_END || pos > c->ring.S) {
			c->bad = true;
			ret = -EPROTO;
			goto out;
		}
		tr_ust_ring_finalize(&c->ring, h->last_ts);
	}
	if (discard && (r = tr_ust_cons_drain(c, uuid, stream_id)) < 0 && !ret)
		ret = r;
	uint64_t last = discard ? c->disc_written :
			h->produced ? get_le64(ust_ring_subbuf(&c->ring, h->produced - 1) +
					       PK_DISCARDED) : 0;
	/* discards after the last packet: one more, empty, to carry them */
	if (!c->bad && h->discarded != last && tr_ust_ring_open(&c->ring, h->last_ts)) {
		tr_ust_ring_finalize(&c->ring, h->last_ts);
		if (discard && (r = tr_ust_cons_drain(c, uuid, stream_id)) < 0 && !ret)
			ret = r;
	}
out:
	c->flushed = true;
	return ret;
}

/*
 * The committed events of the open packet (overwrite mode), copied to pk
 * as a packet of their own, ending at the last whole event: returns its
 * size in bytes (0: no open packet, or it could not be read now), with
 * its sequence number in *seq, its events in *nev and the events before
 * it in *ev_before. The producer
 * goes on meanwhile: `produced` read again after `pos` tells that pos is
 * the open packet's (finalize stores produced before the next open stores
 * pos), and the generation of its sub-buffer, before and after the copy,
 * that the copy is not of a reused one (*torn then counts it).
 */
static size_t copy_open(struct ust_cons *c, uint8_t *pk, const struct ust_evtab *et,
			uint64_t *seq, uint64_t *nev, uint64_t *ev_before, uint64_t *torn)
{
	struct ust_ring *r = &c->ring;
	struct ust_shm *h = r->shm;
	uint64_t k, pos, last, disc;
	for (int i = 0;; i++) {
		/* partners: the release stores of opened (open), produced
		 * (finalize), pos (open, commit) and last_ts (reserve) */
		uint64_t o = acq(&h->opened);
		k = acq(&h->produced);
		pos = acq(&h->pos);
		last = acq(&h->last_ts);
		disc = __atomic_load_n(&h->discarded, __ATOMIC_RELAXED);
		if (o == k + 1 && acq(&h->produced) == k)
			break;
		/* no packet open (between two, or a producer of an older
		 * libtrawl that never stores opened), or it moved on */
		if (o != k + 1 || i == 3)
			return 0;
	}
	if (pos <= PK_HDR_END || pos > r->S)
		return 0;
	struct ust_sb *sb = &h->sb[k & (r->N - 1)];
	/* 2k+1 while packet k is written, 2k+2 once finalized: either way
	 * its bytes before pos stay */
	uint64_t g1 = acq(&sb->gen);
	if (g1 != 2 * k + 1 && g1 != 2 * k + 2)
		return 0;
	UST_RACY_READS_BEGIN();
	memcpy(pk, ust_ring_subbuf(r, k), (size_t)pos);
	uint64_t eb = sb->ev_before;
	UST_RACY_READS_END();
	/* partner: the release fence after the odd gen in tr_ust_ring_open */
	UST_FENCE(__ATOMIC_ACQUIRE);
	uint64_t g2 = __atomic_load_n(&sb->gen, __ATOMIC_RELAXED);
	if (g2 != 2 * k + 1 && g2 != 2 * k + 2) {
		(*torn)++;
		return 0;
	}
	/* the events: the copy is ours now, but still written by another
	 * process: walked with every length checked */
	size_t end = PK_HDR_END, len;
	uint64_t n = 0;
	while (end < pos && (len = tr_ust_event_len(et, pk + end, (size_t)pos - end))) {
		end += len;
		n++;
	}
	if (!n)
		return 0;
	size_t size = (end + 7) & ~(size_t)7;
	memset(pk + end, 0, size - end);
	uint64_t tb = get_le64(pk + PK_TS_BEGIN);
	put_le64(pk + PK_TS_END, last > tb ? last : tb);
	put_le64(pk + PK_CONTENT_SIZE, (uint64_t)end * 8);
	put_le64(pk + PK_PACKET_SIZE, (uint64_t)size * 8);
	put_le64(pk + PK_DISCARDED, disc);
	*seq = k;
	*nev = n;
	*ev_before = eb;
	return size;
}

int tr_ust_cons_snapshot(struct ust_cons *c, uint8_t *copy, struct trawl_ctf_wstream *(*mkws)(void *),
		      void *arg, const uint8_t uuid[16], uint32_t stream_id,
		      const struct ust_evtab *et, uint64_t *events, uint64_t *torn)
{
	struct ust_ring *r = &c->ring;
	struct ust_shm *h = r->shm;
	bool over = h->mode == TRAWL_UST_OVERWRITE;
	if (c->bad)
		return 0;
	/* the open packet first (the newest), then the finished ones before
	 * it: a packet finished meanwhile is the open one's, the copy of its
	 * beginning stays the newest; at most N packets in all (the open
	 * packet's sub-buffer is the oldest finished one's) */
	size_t open_size = 0;
	uint64_t ev_before = 0, nev = 0, P;
	if (over && et)
		open_size = copy_open(c, copy, et, &P, &nev, &ev_before, torn);
	size_t n = open_size ? 1 : 0;
	if (!n)	/* partner: tr_ust_ring_finalize's release store of produced */
		P = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
	uint64_t lo = P > r->N - n ? P - (r->N - n) : 0;
	if (!over && lo < c->consumed)
		lo = c->consumed;	/* discard mode: the rest is written out */
	/* newest first, so that a torn packet ends the window */
	for (uint64_t k = P; k-- > lo;) {
		struct ust_sb *sb = &h->sb[k & (r->N - 1)];
		/* partner: the release store of gen in tr_ust_ring_finalize */
		uint64_t g1 = __atomic_load_n(&sb->gen, __ATOMIC_ACQUIRE);
		if (over && g1 != 2 * k + 2)
			break;	/* already reused: the window starts after it */
		uint8_t *dst = copy + n * r->S;
		UST_RACY_READS_BEGIN();
		memcpy(dst, ust_ring_subbuf(r, k), r->S);
		uint64_t eb = sb->ev_before, ne = sb->nev;
		UST_RACY_READS_END();
		/* partner: the release fence after the odd gen in tr_ust_ring_open */
		UST_FENCE(__ATOMIC_ACQUIRE);
		if (over && __atomic_load_n(&sb->gen, __ATOMIC_RELAXED) != g1) {
			(*torn)++;
			break;
		}
		n++;
		ev_before = eb;
		nev += ne;
	}
	if (!n)
		return 0;
	struct trawl_ctf_wstream *ws = mkws(arg);
	if (!ws)
		return -errno;
	int ret = 0;
	for (size_t i = n; i-- > 0 && !ret;) {
		uint8_t *pk = copy + i * r->S;
		/* the events before the window count as discarded */
		put_le64(pk + PK_DISCARDED, get_le64(pk + PK_DISCARDED) + ev_before);
		ret = put_packet(ws, pk, i == 0 && open_size ? open_size : r->S, uuid, stream_id);
	}
	*events += nev;
	return ret;
}
