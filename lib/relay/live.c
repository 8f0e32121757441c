/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/live.c - the relay's live port: the LTTng live viewer protocol
 * 2.4 (lib/net/live-proto.h), so that `babeltrace2 -i lttng-live
 * net://RELAY/host/HOST/SESSION` (and any viewer of lttng-relayd) follows
 * a session while its nodes record it (docs/relay.md).
 *
 * What a viewer may rely on, and how this side keeps it:
 * - Per stream, packets in order, each beginning at or after the previous
 *   one's end and after every beacon given before it (the data side
 *   refuses producers that break this).
 * - A stream with nothing new is answered at once when its beacon moved
 *   (INACTIVE, "no event before T"). Otherwise RETRY at once twice after
 *   anything new (babeltrace2's live source hands its batch on at a
 *   RETRY, but its muxer passes what it gathered to the output only when
 *   the source has nothing at all: a second RETRY), and then the request
 *   is held until a packet or a beacon comes, for at most live_hold_ms,
 *   then RETRY. Held, the viewer waits on the socket instead of sleeping
 *   its retry period (100 ms), so a packet reaches it, and its output, as
 *   soon as the producer sends it.
 * - Metadata: append-only, served from the trace's metadata file, each
 *   reply a whole number of the producer's chunks, each starting with the
 *   CTF 1.8 signature (babeltrace2 2.0.4 checks it on every reply).
 * - A trace is announced (its metadata stream with its data streams, in
 *   one reply) once it has a stream; NEW_STREAM and NEW_METADATA ride on
 *   OK index replies, the only ones whose flags babeltrace2 reads. While
 *   the viewer has streams to hear of, a stream with no new packet answers
 *   an OK of no packet (sizes 0) with NEW_STREAM: no beacon, no RETRY, no
 *   held request, so the viewer asks GET_NEW_STREAMS at its next request,
 *   whichever stream it waits on.
 * - A viewer reads from the session's first packet on (the relay has them
 *   all on disk); with SEEK_LAST and live_from_now, or trawl's own
 *   SEEK_TRAWL_NOW (a viewer's --from-now), from the next one.
 * - No beacon at the end of a packet given, nor two streams' last beacons
 *   at one time (distinct_beacon): babeltrace2 warns at such ties.
 * - A viewer's requests wait while LIVE_OUT_MAX of its replies do: it
 *   costs at most that plus one reply, however many it sends ahead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "net/live-proto.h"
#include "net/relay-proto.h"
#include "ctf/packet.h"
#include "util/clock.h"

#define SIG "/* CTF 1.8 */\n"

struct vstream {
	struct rstream *st;
	uint64_t next;			/* next packet to give */
	uint64_t beacon;		/* the last bound given: the end of the
					 * last packet given, or a later beacon */
	uint64_t pkt_end;		/* the end of the last packet given */
	bool inactive;			/* the last answer was a beacon (the
					 * viewer may hold it as its next message) */
	bool hup;			/* HUP given */
};

struct vtrace {
	struct rtrace *t;
	uint64_t meta_sent;		/* metadata bytes given */
	size_t nstreams;		/* of t->streams announced */
};

struct viewer {
	struct rconn *c;
	bool connected;
	struct rsession *s;		/* attached, or NULL */
	bool from_now;
	bool lazy;			/* in no hurry (LIVE_SEEK_TRAWL_LAZY): no DEMAND */
	struct vtrace *traces;
	size_t ntraces;
	struct vstream *streams;
	size_t nstreams;
	unsigned owed;			/* RETRYs to give before holding */
	bool held;			/* a GET_NEXT_INDEX waits for data */
	uint64_t held_id;
	int64_t held_until;		/* ms */
	uint64_t *taken;		/* distinct_beacon()'s scratch bitmap */
	size_t ntaken;			/* its words */
	uint64_t queued;		/* reply bytes queued, ever */
	uint64_t sent_seen;		/* queued - waiting, at the last check */
	int64_t stuck_since;		/* ms: over the cap and nothing read; 0: no */
	struct viewer *next;
};

/*
 * Replies waiting to be sent, at most: no request of a viewer is parsed
 * while this much of its replies waits (the loop stops reading it too).
 * Past the cap by one reply at most (one packet, LIVE_PACKET_MAX), so a
 * viewer costs the relay at most LIVE_OUT_MAX plus its largest packet,
 * however many requests it sends ahead.
 */
#define LIVE_OUT_MAX (4u << 20)
/* A viewer over the cap that reads nothing for this long is closed. */
#define LIVE_STALL_MS 10000

static size_t waiting(const struct rconn *c)
{
	return c->outlen - c->outoff;
}

/* Every reply goes through here (the viewer's bytes queued count). */
static int queue(struct viewer *v, const void *p, size_t n)
{
	int r = tr_rconn_queue(v->c, p, n);
	if (!r)
		v->queued += n;
	return r;
}

static void reply32(struct viewer *v, uint32_t x)
{
	uint8_t b[4];
	put_be32(b, x);
	queue(v, b, 4);
}

static bool session_listed(const struct rsession *s)
{
	for (size_t i = 0; i < s->ntraces; i++)
		if (!s->traces[i]->closed)
			return true;
	return false;
}

static size_t session_streams(const struct rsession *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->ntraces; i++)
		if (s->traces[i]->nstreams)
			n += s->traces[i]->nstreams + 1;	/* + its metadata */
	return n;
}

static void put_stream(uint8_t *b, uint64_t id, uint64_t trace_id, bool meta, const char *path,
		       const char *channel)
{
	put_be64(b, id);
	put_be64(b + 8, trace_id);
	put_be32(b + 16, meta ? 1 : 0);
	tr_live_put_str(b + 20, LIVE_PATH_MAX, path);
	tr_live_put_str(b + 20 + LIVE_PATH_MAX, LIVE_NAME_MAX, channel);
}

static struct vtrace *vtrace_of(struct viewer *v, const struct rtrace *t)
{
	for (size_t i = 0; i < v->ntraces; i++)
		if (v->traces[i].t == t)
			return &v->traces[i];
	return NULL;
}

/* Streams of the session this viewer has not been told of yet. */
static bool unannounced(struct viewer *v)
{
	for (size_t i = 0; i < v->s->ntraces; i++) {
		struct rtrace *t = v->s->traces[i];
		struct vtrace *vt = vtrace_of(v, t);
		if (t->nstreams > (vt ? vt->nstreams : 0))
			return true;
	}
	return false;
}

/*
 * Replies status, then the streams not announced yet (with each new
 * trace's metadata stream first), to ATTACH or GET_NEW_STREAMS. Returns
 * how many it announced, or -1 (out of memory: the viewer is closed).
 */
static int announce(struct viewer *v, uint32_t status, bool attach)
{
	struct rsession *s = v->s;
	size_t n = 0;
	for (size_t i = 0; i < s->ntraces; i++) {
		struct rtrace *t = s->traces[i];
		struct vtrace *vt = vtrace_of(v, t);
		size_t had = vt ? vt->nstreams : 0;
		if (t->nstreams > had)
			n += t->nstreams - had + (vt ? 0 : 1);
	}
	uint8_t *b = calloc(1, 8 + n * LIVE_STREAM_LEN);
	struct vtrace *tv = realloc(v->traces, (v->ntraces + s->ntraces) * sizeof(*tv));
	if (tv)
		v->traces = tv;
	struct vstream *sv = realloc(v->streams, (v->nstreams + n + 1) * sizeof(*sv));
	if (sv)
		v->streams = sv;
	if (!b || !tv || !sv) {
		free(b);
		return -1;
	}
	put_be32(b, status);
	put_be32(b + 4, (uint32_t)n);
	uint8_t *p = b + 8;
	for (size_t i = 0; i < s->ntraces; i++) {
		struct rtrace *t = s->traces[i];
		struct vtrace *vt = vtrace_of(v, t);
		if (t->nstreams == 0 || (vt && vt->nstreams == t->nstreams))
			continue;
		if (!vt) {
			vt = &v->traces[v->ntraces++];
			memset(vt, 0, sizeof(*vt));
			vt->t = t;
			put_stream(p, t->id, t->id, true, tr_relay_rel(v->c->r, t->dir), "metadata");
			p += LIVE_STREAM_LEN;
		}
		for (size_t j = vt->nstreams; j < t->nstreams; j++) {
			struct rstream *st = t->streams[j];
			struct vstream *vs = &v->streams[v->nstreams++];
			memset(vs, 0, sizeof(*vs));
			vs->st = st;
			/* from now: the streams there at attach; later ones
			 * from their first packet */
			if (attach && v->from_now)
				vs->next = st->npackets;
			put_stream(p, st->id, t->id, false, tr_relay_rel(v->c->r, t->dir), st->name);
			p += LIVE_STREAM_LEN;
		}
		vt->nstreams = t->nstreams;
	}
	int r = queue(v, b, 8 + n * LIVE_STREAM_LEN);
	free(b);
	return r ? -1 : (int)n;
}

static struct vstream *vstream_by_id(struct viewer *v, uint64_t id)
{
	for (size_t i = 0; i < v->nstreams; i++)
		if (v->streams[i].st->id == id)
			return &v->streams[i];
	return NULL;
}

static void index_reply(struct viewer *v, const uint8_t *entry, uint64_t ts_end,
			uint64_t class_id, uint32_t status, uint32_t flags)
{
	uint8_t b[LIVE_INDEX_LEN] = { 0 };
	if (entry) {
		/* offset, packet_size, content_size, timestamp_begin,
		 * timestamp_end, events_discarded, stream_id: as the index
		 * file has them (big-endian) */
		memcpy(b, entry, 56);
	} else {
		put_be64(b + 32, ts_end);
		put_be64(b + 48, class_id);
	}
	put_be32(b + 56, status);
	put_be32(b + 60, flags);
	queue(v, b, sizeof(b));
}

/* An OK index of no packet, to carry the flags (see next_index): offset
 * the stream's end (or its next packet's, held back by the horizon), sizes
 * 0, both times the last bound given (the previous packet's end or the
 * last beacon: no new promise). */
static void empty_reply(struct viewer *v, struct vstream *vs, uint64_t off)
{
	struct rstream *st = vs->st;
	uint64_t ts = vs->beacon;
	uint8_t e[CTF_IDX_ENTRY_LEN];
	off_t at = CTF_IDX_HEADER_LEN + (off_t)(vs->next - 1) * CTF_IDX_ENTRY_LEN;
	if (vs->next && pread(st->idxfd, e, sizeof(e), at) == (ssize_t)sizeof(e) &&
	    get_be64(e + 32) > ts)
		ts = get_be64(e + 32);
	uint8_t b[56] = { 0 };
	put_be64(b, off);
	put_be64(b + 24, ts);
	put_be64(b + 32, ts);
	put_be64(b + 48, st->class_id);
	uint32_t flags = LIVE_FLAG_NEW_STREAM;
	struct vtrace *vt = vtrace_of(v, st->trace);
	if (vt && vt->meta_sent < st->trace->meta_len)
		flags |= LIVE_FLAG_NEW_METADATA;
	index_reply(v, b, 0, 0, LIVE_INDEX_OK, flags);
}

/*
 * The beacon to give vs for its stream's beacon ts: the latest time at or
 * before ts that is the beacon of none of the viewer's other streams whose
 * last answer was a beacon, or vs->beacon when every time after it is
 * taken (no beacon now). A promise of "no event before ts" holds for any
 * earlier time. Why: babeltrace2 2.0 turns a beacon into an inactivity
 * message, which has no stream; two of them at the same time are
 * identical to its muxer, which warns "Cannot deterministically pick next
 * live stream message iterator" at each. The agents and the kernel
 * recorder tick every stream at once, so their beacons share one time.
 * Of the n + 1 times ts - n .. ts, the n - 1 other streams take at most
 * n - 1: one bitmap pass.
 */
static uint64_t distinct_beacon(struct viewer *v, const struct vstream *vs, uint64_t ts)
{
	size_t n = v->nstreams + 1, words = (n + 63) / 64;
	if (v->ntaken < words) {
		uint64_t *t = realloc(v->taken, words * sizeof(*t));
		if (!t)
			return vs->beacon;
		v->taken = t;
		v->ntaken = words;
	}
	memset(v->taken, 0, words * sizeof(*v->taken));
	for (size_t i = 0; i < v->nstreams; i++) {
		const struct vstream *o = &v->streams[i];
		if (o != vs && o->inactive && o->beacon <= ts && ts - o->beacon < n)
			v->taken[(ts - o->beacon) / 64] |= UINT64_C(1) << ((ts - o->beacon) % 64);
	}
	for (size_t k = 0; k < n && ts - k > vs->beacon; k++)
		if (!(v->taken[k / 64] & (UINT64_C(1) << (k % 64))))
			return ts - k;
	return vs->beacon;
}

/* How long a DEMAND says a viewer waits (see demand()). */
#define LIVE_DEMAND_MS 2000

/* Whether a and b come from one address (viewers fed by a test: none). */
static bool same_addr(const struct rconn *a, const struct rconn *b)
{
	return a->has_addr == b->has_addr && (!a->has_addr || !memcmp(a->addr, b->addr, sizeof(a->addr)));
}

/*
 * Whether a newer beacon of vs lets the viewer show something: an event
 * it holds (given in another stream's packet that ends after vs's bound)
 * or will be given (another stream's packets not given yet) may wait for
 * vs's bound. Else the beacon only moves the viewer's clock, and a held
 * request keeps it until the hold ends (live_hold_ms): an idle session's
 * viewer is woken once per hold, not at every live tick (docs/relay.md,
 * "What an idle relay costs"). Unless the viewer may merge this session
 * with others, which the relay cannot see: another viewer attached from
 * its address (`trawl print --live net://R/session/S` attaches to each
 * host's session on a connection of its own, babeltrace2 to each of its
 * inputs) gets every beacon, as before. (The times are compared in
 * cycles: a session's streamed traces share CLOCK_MONOTONIC in ns.)
 */
static bool beacon_needed(const struct viewer *v, const struct vstream *vs)
{
	for (size_t i = 0; i < v->nstreams; i++) {
		const struct vstream *o = &v->streams[i];
		if (o != vs && (o->next < o->st->npackets || o->pkt_end > vs->beacon))
			return true;
	}
	for (const struct viewer *w = v->c->r->viewers; w; w = w->next)
		if (w != v && w->s && same_addr(w->c, v->c))
			return true;
	return false;
}

/*
 * The horizon of session s: the least of its open traces whose streams
 * come as threads do (RELAY_HELLO_HORIZON), UINT64_MAX when none; *at one
 * trace there. A viewer is given no packet that ends past it, and no
 * beacon past it: a stream announced later may begin there, and a viewer
 * shown other streams' events past its first would meet them late
 * (babeltrace2 2.0 stops: "late message"; docs/relay.md "Streams that
 * join"). Times compared in cycles, as beacon_needed() does.
 */
#define LIVE_HORIZON_WAIT_MS 5000	/* plus 10 live timers of the session */
static uint64_t session_horizon(const struct rsession *s, struct rtrace **at)
{
	uint64_t h = UINT64_MAX;
	int64_t now = -1, wait = LIVE_HORIZON_WAIT_MS + (int64_t)(s->live_timer_us / 100);
	for (size_t i = 0; i < s->ntraces; i++) {
		const struct rtrace *t = s->traces[i];
		if (!t->has_horizon || t->closed || t->horizon >= h)
			continue;
		/* a producer that holds viewers back and says nothing newer
		 * for LIVE_HORIZON_WAIT_MS and ten live timers (stopped,
		 * stuck, or a peer that asked to send horizons and never
		 * does) holds them no longer: the others' events go on (a
		 * stream it announces late may then come late, as without
		 * horizons) */
		if (t->held_since) {
			if (now < 0)
				now = tr_mono_ms();
			if (now - t->held_since > wait)
				continue;
		}
		h = t->horizon;
		*at = s->traces[i];
	}
	return h;
}

/* A viewer waits at trace t's horizon: its producer is asked for a newer
 * one (a HORIZON back, with the relay's: the agent's sender wakes its
 * loop, which says it at once), once until its next HORIZON; only one
 * that reads DEMAND (its sender's thread reads the relay at once). */
static void ask_horizon(struct trawl_relay *r, const struct rtrace *t)
{
	for (struct rconn *c = r->conns; c; c = c->next) {
		if (c->kind != RC_PRODUCER || c->trace != t || c->closing || c->dead)
			continue;
		/* only a producer that reads the relay's words as they come
		 * (DEMAND's): the others say their horizons unasked */
		if (c->horizon_asked || !c->demand)
			return;
		uint8_t m[RELAY_HDR_LEN + RELAY_HORIZON_LEN];
		relay_put_hdr(m, RELAY_HORIZON, RELAY_HORIZON_LEN);
		put_le64(m + RELAY_HDR_LEN, t->horizon);
		if (tr_rconn_queue(c, m, sizeof(m)) == 0)
			c->horizon_asked = true;
		return;
	}
}

/*
 * Answers GET_NEXT_INDEX for stream id, unless it should wait (may_hold
 * and nothing new, or only a beacon the viewer does not need): then
 * returns false and sends nothing.
 */
static bool next_index(struct viewer *v, uint64_t id, bool may_hold)
{
	struct vstream *vs = v->s ? vstream_by_id(v, id) : NULL;
	if (!vs) {
		index_reply(v, NULL, 0, 0, LIVE_INDEX_ERR, 0);
		return true;
	}
	struct rstream *st = vs->st;
	struct rtrace *ht = NULL;
	uint64_t hz = session_horizon(v->s, &ht);
	bool capped = false;	/* the horizon holds back what came */
	uint8_t e[CTF_IDX_ENTRY_LEN];
	if (vs->next < st->npackets) {
		off_t at = CTF_IDX_HEADER_LEN + (off_t)vs->next * CTF_IDX_ENTRY_LEN;
		if (pread(st->idxfd, e, sizeof(e), at) != (ssize_t)sizeof(e)) {
			tr_relay_log(v->c->r, LOG_WARNING, "%s: %s/index/%s.idx: cannot read entry %llu",
				     v->c->peer, st->trace->dir, st->name, (unsigned long long)vs->next);
			index_reply(v, NULL, 0, st->class_id, LIVE_INDEX_ERR, 0);
			return true;
		}
		if (get_be64(e + 32) > hz) {
			capped = true;
			goto waits;
		}
		vs->next++;
		/* its end is known to the viewer now: a beacon there would
		 * say nothing new (and two streams' at the same time make
		 * babeltrace2 warn that it "cannot deterministically pick") */
		if (get_be64(e + 32) > vs->beacon)
			vs->beacon = get_be64(e + 32);
		if (get_be64(e + 32) > vs->pkt_end)
			vs->pkt_end = get_be64(e + 32);
		vs->inactive = false;
		uint32_t flags = 0;
		struct vtrace *vt = vtrace_of(v, st->trace);
		if (vt && vt->meta_sent < st->trace->meta_len)
			flags |= LIVE_FLAG_NEW_METADATA;
		if (unannounced(v))
			flags |= LIVE_FLAG_NEW_STREAM;
		index_reply(v, e, 0, 0, LIVE_INDEX_OK, flags);
		v->owed = 2;
		return true;
	}
	if (st->hup) {
		vs->hup = true;
		index_reply(v, NULL, 0, st->class_id, LIVE_INDEX_HUP, 0);
		return true;
	}
waits:
	/*
	 * Streams to hear of, and nothing new here: an OK of no packet (sizes
	 * 0, at the stream's end) with NEW_STREAM, never a beacon (it would
	 * let the viewer show other streams past the new ones' first events)
	 * nor a RETRY. babeltrace2 reads the flags of OK replies only, and
	 * asks GET_NEW_STREAMS only when one says so: RETRY after RETRY, it
	 * would wait on this stream until it gets a packet, forever for one
	 * that never does (the kernel's statedump). An empty OK is to it a
	 * packet that ends at once: it asks GET_NEW_STREAMS, then this stream
	 * again.
	 */
	if (unannounced(v)) {
		empty_reply(v, vs, capped ? get_be64(e) : st->size);
		return true;
	}
	/* a packet held back: no beacon past its beginning either */
	uint64_t sb = capped ? 0 : st->beacon < hz ? st->beacon : hz;
	if ((capped || sb < st->beacon) && ht) {
		if (!ht->held_since)
			ht->held_since = tr_mono_ms();
		ask_horizon(v->c->r, ht);
	}
	uint64_t b = sb > vs->beacon ? distinct_beacon(v, vs, sb) : 0;
	if (b > vs->beacon && (!may_hold || beacon_needed(v, vs))) {
		vs->beacon = b;
		vs->inactive = true;
		index_reply(v, NULL, b, st->class_id, LIVE_INDEX_INACTIVE, 0);
		v->owed = 2;
		return true;
	}
	if (may_hold && !v->owed)
		return false;
	index_reply(v, NULL, 0, st->class_id, LIVE_INDEX_RETRY, 0);
	if (v->owed)
		v->owed--;
	return true;
}

/* GET_PACKET: len bytes of the stream from off, read into the replies a
 * piece at a time (no copy of the whole on the side). */
static void get_packet(struct viewer *v, const struct live_req *r)
{
	enum { PIECE = 256 << 10 };
	uint8_t h[12] = { 0 };
	struct vstream *vs = v->s ? vstream_by_id(v, r->u.packet.stream_id) : NULL;
	uint32_t len = r->u.packet.len;
	uint64_t off = r->u.packet.offset;
	uint8_t *b = NULL;
	if (!vs || len == 0 || len > LIVE_PACKET_MAX || off > vs->st->size ||
	    vs->st->size - off < len || !(b = malloc(len < PIECE ? len : PIECE))) {
		put_be32(h, LIVE_PACKET_ERR);
		queue(v, h, sizeof(h));
		return;
	}
	put_be32(h, LIVE_PACKET_OK);
	put_be32(h + 4, len);
	queue(v, h, sizeof(h));
	for (uint32_t done = 0; done < len && !v->c->dead;) {
		size_t n = len - done < PIECE ? len - done : PIECE;
		if (pread(vs->st->fd, b, n, (off_t)(off + done)) != (ssize_t)n) {
			/* its header is out: the reply cannot be taken back */
			tr_relay_log(v->c->r, LOG_WARNING, "%s: %s/%s: cannot read %zu bytes at %llu; "
				     "connection closed", v->c->peer, vs->st->trace->dir, vs->st->name,
				     n, (unsigned long long)(off + done));
			v->c->dead = true;
			break;
		}
		queue(v, b, n);
		done += (uint32_t)n;
	}
	free(b);
}

static void get_metadata(struct viewer *v, uint64_t id)
{
	uint8_t h[12] = { 0 };
	struct vtrace *vt = NULL;
	for (size_t i = 0; v->s && i < v->ntraces; i++)
		if (v->traces[i].t->id == id)
			vt = &v->traces[i];
	if (!vt || vt->meta_sent >= vt->t->meta_len) {
		/* never ERR: babeltrace2 takes it as the end of the trace's
		 * metadata for good */
		put_be32(h + 8, LIVE_METADATA_NO_NEW);
		queue(v, h, sizeof(h));
		return;
	}
	size_t n = (size_t)(vt->t->meta_len - vt->meta_sent), sl = strlen(SIG);
	uint8_t *b = malloc(12 + sl + n);
	if (!b || pread(vt->t->meta_fd, b + 12 + sl, n, (off_t)vt->meta_sent) != (ssize_t)n) {
		free(b);
		put_be32(h + 8, LIVE_METADATA_NO_NEW);
		queue(v, h, sizeof(h));
		return;
	}
	/* the first chunk has the signature already */
	uint8_t *p = b + 12 + sl;
	if (n < 6 || memcmp(p, "/* CTF", 6) != 0) {
		p -= sl;
		memcpy(p, SIG, sl);
		n += sl;
	}
	p -= 12;
	put_be64(p, n);
	put_be32(p + 8, LIVE_METADATA_OK);
	queue(v, p, 12 + n);
	vt->meta_sent = vt->t->meta_len;
	free(b);
}

static void list_sessions(struct viewer *v)
{
	size_t n = 0;
	for (struct rsession *s = v->c->r->sessions; s; s = s->next)
		n += session_listed(s);
	uint8_t *b = calloc(1, 4 + n * LIVE_SESSION_LEN);
	if (!b) {
		v->c->dead = true;
		return;
	}
	put_be32(b, (uint32_t)n);
	uint8_t *p = b + 4;
	for (struct rsession *s = v->c->r->sessions; s; s = s->next) {
		if (!session_listed(s))
			continue;
		put_be64(p, s->id);
		put_be32(p + 8, s->live_timer_us > UINT32_MAX ? UINT32_MAX :
				(uint32_t)s->live_timer_us);
		put_be32(p + 12, (uint32_t)s->viewers);
		put_be32(p + 16, (uint32_t)session_streams(s));
		tr_live_put_str(p + 20, LIVE_HOST_MAX, s->host);
		tr_live_put_str(p + 20 + LIVE_HOST_MAX, LIVE_NAME_MAX, s->name);
		p += LIVE_SESSION_LEN;
	}
	queue(v, b, 4 + n * LIVE_SESSION_LEN);
	free(b);
}

static void detach(struct viewer *v)
{
	if (!v->s)
		return;
	v->s->viewers--;
	v->s = NULL;
	free(v->traces);
	free(v->streams);
	v->traces = NULL;
	v->streams = NULL;
	v->ntraces = v->nstreams = 0;
	free(v->taken);
	v->taken = NULL;
	v->ntaken = 0;
	v->held = false;
	tr_relay_session_gc(v->c->r);
}

static void attach(struct viewer *v, const struct live_req *r)
{
	struct rsession *s = tr_relay_session_by_id(v->c->r, r->u.attach.session_id);
	uint8_t b[8] = { 0 };
	if (v->s || !s || !session_listed(s)) {
		put_be32(b, v->s ? LIVE_ATTACH_ALREADY : LIVE_ATTACH_UNK);
		queue(v, b, sizeof(b));
		return;
	}
	/* a session takes any number of viewers (each its own positions;
	 * lttng-relayd takes one): a connection, one session */
	uint32_t seek = r->u.attach.seek & ~(uint32_t)LIVE_SEEK_TRAWL_LAZY;
	if (seek != LIVE_SEEK_BEGINNING && seek != LIVE_SEEK_LAST && seek != LIVE_SEEK_TRAWL_NOW) {
		put_be32(b, LIVE_ATTACH_SEEK_ERR);
		queue(v, b, sizeof(b));
		return;
	}
	v->s = s;
	s->viewers++;
	/* trawl's viewers ask from now themselves (--from-now) */
	v->from_now = (v->c->r->live_from_now && seek == LIVE_SEEK_LAST) ||
		      seek == LIVE_SEEK_TRAWL_NOW;
	v->lazy = (r->u.attach.seek & LIVE_SEEK_TRAWL_LAZY) != 0;
	if (announce(v, LIVE_ATTACH_OK, true) < 0)
		v->c->dead = true;
	tr_relay_log(v->c->r, LOG_INFO, "%s: attached to %s/%s", v->c->peer, s->host, s->name);
}

static void new_streams(struct viewer *v, uint64_t id)
{
	uint8_t b[8] = { 0 };
	if (!v->s || v->s->id != id) {
		put_be32(b, LIVE_NEW_STREAMS_ERR);
		queue(v, b, sizeof(b));
		return;
	}
	/* HUP only once every trace ended and every stream gave its HUP:
	 * babeltrace2 drops the streams of a closed session at once */
	bool done = !session_listed(v->s) && !unannounced(v);
	for (size_t i = 0; done && i < v->nstreams; i++)
		done = v->streams[i].hup;
	if (done) {
		put_be32(b, LIVE_NEW_STREAMS_HUP);
		queue(v, b, sizeof(b));
		return;
	}
	if (!unannounced(v)) {
		put_be32(b, LIVE_NEW_STREAMS_NO_NEW);
		queue(v, b, sizeof(b));
		return;
	}
	if (announce(v, LIVE_NEW_STREAMS_OK, false) < 0)
		v->c->dead = true;
}

/*
 * A viewer's request is held: it waits on session s. Each producer of s
 * that reads DEMAND (HELLO flag RELAY_HELLO_DEMAND) is told so, at most
 * once per half of LIVE_DEMAND_MS; for LIVE_DEMAND_MS it then sends new
 * events at its next look at them (the agent's turn, about 2 ms) instead
 * of at its live timer (docs/relay.md, "Live latency"). A viewer that
 * keeps asking keeps the demand up; one gone lets it lapse. The relay's
 * messages to a producer cost it one read per DEMAND: an idle session
 * with a viewer costs its producers about one message a second.
 */
static void demand(struct trawl_relay *r, const struct rsession *s)
{
	int64_t now = -1;
	for (struct rconn *c = r->conns; c; c = c->next) {
		if (c->kind != RC_PRODUCER || !c->demand || !c->trace || c->trace->session != s ||
		    c->trace->closed || c->closing || c->dead)
			continue;
		if (now < 0)
			now = tr_mono_ms();
		if (c->demand_sent && now - c->demand_sent < LIVE_DEMAND_MS / 2)
			continue;
		uint8_t m[RELAY_HDR_LEN + RELAY_DEMAND_LEN];
		relay_put_hdr(m, RELAY_DEMAND, RELAY_DEMAND_LEN);
		put_le32(m + RELAY_HDR_LEN, LIVE_DEMAND_MS);
		if (tr_rconn_queue(c, m, sizeof(m)) == 0)
			c->demand_sent = now;
	}
}

static void hold(struct viewer *v, uint64_t id)
{
	v->held = true;
	v->held_id = id;
	v->held_until = tr_mono_ms() + (int64_t)v->c->r->live_hold_ms;
	/* a viewer in no hurry takes what the live timer brings */
	if (!v->lazy)
		demand(v->c->r, v->s);
}

/* One request; false when the viewer must be closed. */
static bool request(struct viewer *v, const struct live_req *r)
{
	if (!v->connected && r->cmd != LIVE_CONNECT) {
		tr_relay_log(v->c->r, LOG_WARNING, "%s: %s before CONNECT", v->c->peer,
			     tr_live_cmd_name(r->cmd));
		return false;
	}
	switch (r->cmd) {
	case LIVE_CONNECT: {
		if (r->u.connect.major != LIVE_MAJOR) {
			tr_relay_log(v->c->r, LOG_WARNING, "%s: live protocol %u.%u, this relay speaks "
				     "%d.%d", v->c->peer, r->u.connect.major, r->u.connect.minor,
				     LIVE_MAJOR, LIVE_MINOR);
			return false;
		}
		uint8_t b[20] = { 0 };
		put_be64(b, v->c->r->next_viewer++);
		put_be32(b + 8, LIVE_MAJOR);
		put_be32(b + 12, r->u.connect.minor < LIVE_MINOR ? r->u.connect.minor : LIVE_MINOR);
		queue(v, b, sizeof(b));
		v->connected = true;
		return true;
	}
	case LIVE_CREATE_SESSION:
		reply32(v, LIVE_CREATE_OK);
		return true;
	case LIVE_LIST_SESSIONS:
		list_sessions(v);
		return true;
	case LIVE_ATTACH_SESSION:
		attach(v, r);
		return true;
	case LIVE_GET_NEW_STREAMS:
		new_streams(v, r->u.id);
		return true;
	case LIVE_GET_METADATA:
		get_metadata(v, r->u.id);
		return true;
	case LIVE_GET_NEXT_INDEX:
		if (!next_index(v, r->u.id, true))
			hold(v, r->u.id);
		return true;
	case LIVE_GET_PACKET:
		get_packet(v, r);
		return true;
	case LIVE_DETACH_SESSION:
		if (v->s && v->s->id == r->u.id) {
			detach(v);
			reply32(v, LIVE_DETACH_OK);
		} else {
			reply32(v, LIVE_DETACH_UNK);
		}
		return true;
	case LIVE_TRAWL_CHALLENGE:
	case LIVE_TRAWL_AUTH:
		break;	/* answered by auth.c before */
	}
	return false;
}

long tr_live_input(struct rconn *c)
{
	struct viewer *v = c->viewer;
	if (!v) {
		v = calloc(1, sizeof(*v));
		if (!v)
			return -1;
		v->c = c;
		c->viewer = v;
		v->next = c->r->viewers;
		c->r->viewers = v;
	}
	size_t off = 0;
	char err[256];
	/* one request at a time: a held one is answered before the next;
	 * none while the replies waiting reach the cap (the rest of c->in
	 * waits: tr_live_tick parses it once they are read) */
	while (!v->held && !c->dead && !c->closing && off < c->inlen && waiting(c) < LIVE_OUT_MAX) {
		struct live_req r;
		ssize_t n = tr_live_req_parse(c->in + off, c->inlen - off, &r, err, sizeof(err));
		if (n == 0)
			break;
		if (n < 0) {
			tr_relay_log(c->r, LOG_WARNING, "%s: %s; connection closed", c->peer, err);
			return -1;
		}
		off += (size_t)n;
		/* a relay with a secret: the viewer proves it may read first */
		int a = tr_relay_auth_live(c, &r);
		if (a < 0)
			return -1;
		if (a == 0 && !request(v, &r))
			return -1;
	}
	return (long)off;
}

bool tr_live_connected(const struct rconn *c)
{
	return c->viewer && c->viewer->connected;
}

void tr_live_conn_free(struct rconn *c)
{
	struct viewer *v = c->viewer;
	if (!v)
		return;
	for (struct viewer **pp = &c->r->viewers; *pp; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			break;
		}
	detach(v);
	free(v);
	c->viewer = NULL;
}

void tr_live_wake(struct trawl_relay *r, struct rsession *s)
{
	if (r->wake_defer) {
		s->wake_due = r->wake_pending = true;
		return;
	}
	for (struct viewer *v = r->viewers; v; v = v->next)
		if (v->held && v->s == s && next_index(v, v->held_id, true))
			v->held = false;
}

void tr_live_wake_due(struct trawl_relay *r)
{
	if (!r->wake_pending)
		return;	/* (a read of data without news: no walk of the sessions) */
	r->wake_pending = false;
	for (struct rsession *s = r->sessions; s; s = s->next)
		if (s->wake_due) {
			s->wake_due = false;
			tr_live_wake(r, s);
		}
}

/* Requests that came while one was held: answered now. */
static void pending_input(struct viewer *v)
{
	struct rconn *c = v->c;
	if (v->held || !c->inlen || c->dead)
		return;
	long used = tr_live_input(c);
	if (used < 0) {
		c->dead = true;
		return;
	}
	memmove(c->in, c->in + used, c->inlen - (size_t)used);
	c->inlen -= (size_t)used;
}

/*
 * A viewer over the cap whose replies do not move for LIVE_STALL_MS is
 * closed: it sent requests ahead and reads nothing (its place at the cap
 * would be held for good). Under the cap a viewer may take its time: it
 * costs little, and babeltrace2 blocked on its output is one.
 */
static void check_stall(struct viewer *v, int64_t *now)
{
	struct rconn *c = v->c;
	uint64_t sent = v->queued - waiting(c);
	if (waiting(c) < LIVE_OUT_MAX || sent != v->sent_seen) {
		v->sent_seen = sent;
		v->stuck_since = 0;
		return;
	}
	if (*now < 0)
		*now = tr_mono_ms();
	if (!v->stuck_since) {
		v->stuck_since = *now;
		return;
	}
	if (*now - v->stuck_since < LIVE_STALL_MS)
		return;
	tr_relay_log(c->r, LOG_WARNING, "%s: reads none of its %zu bytes of replies for %d s "
		     "(requests sent ahead: %zu bytes); closed", c->peer, waiting(c),
		     LIVE_STALL_MS / 1000, c->inlen);
	c->dead = true;
}

void tr_live_tick(struct trawl_relay *r)
{
	int64_t now = -1;
	for (struct viewer *v = r->viewers; v; v = v->next) {
		struct rconn *c = v->c;
		if (v->held) {
			if (now < 0)
				now = tr_mono_ms();
			if (now < v->held_until)
				continue;
			next_index(v, v->held_id, false);
			v->held = false;
		}
		pending_input(v);
		check_stall(v, &now);
		/* a large reply does not keep its buffer once sent */
		if (!waiting(c) && c->outcap > LIVE_OUT_MAX) {
			free(c->out);
			c->out = NULL;
			c->outcap = c->outoff = c->outlen = 0;
		}
	}
}

bool tr_live_holding(const struct trawl_relay *r)
{
	for (const struct viewer *v = r->viewers; v; v = v->next)
		if (v->held)
			return true;
	return false;
}

int64_t tr_live_due(const struct trawl_relay *r, int64_t now)
{
	int64_t due = INT64_MAX;
	for (const struct viewer *v = r->viewers; v; v = v->next) {
		const struct rconn *c = v->c;
		/* (requests that came while one was held, or while the
		 * replies were at the cap, are parsed at the tick of the turn
		 * that ended the hold or sent the replies) */
		if (v->held && v->held_until < due)
			due = v->held_until;
		/* over the cap: check_stall() counts its time */
		if (waiting(c) >= LIVE_OUT_MAX) {
			int64_t t = v->stuck_since ? v->stuck_since + LIVE_STALL_MS : now;
			if (t < due)
				due = t;
		}
	}
	return due;
}

bool tr_live_wants_input(const struct rconn *c)
{
	const struct viewer *v = c->viewer;
	return !v || (!v->held && waiting(c) < LIVE_OUT_MAX);
}
