/* SPDX-License-Identifier: MIT */
/*
 * test-relay-live - the relay's live side (lib/relay/live.c) driven without
 * sockets (lib/relay/relay-internal.h, as fuzz-relay does): two producers
 * of one session (a "kernel" trace, then a "ust" trace that begins after
 * the viewer attached) and a viewer that asks what babeltrace2 2.0 asks,
 * in its order.
 *
 * The case: the viewer waits on a stream that gets no packet (the kernel's
 * statedump: one packet at the start, then only beacons) when the relay
 * hears of a new trace's stream. babeltrace2 reads the flags of OK index
 * replies only, asks GET_NEW_STREAMS only when one carries NEW_STREAM, and
 * after a RETRY asks the same stream again; the relay gives no beacon
 * while the viewer has streams to hear of. So every answer to that stream
 * must be an OK carrying NEW_STREAM (one of no packet: sizes 0), never a
 * RETRY (the viewer would ask forever, and show nothing until the
 * recording ends) nor a beacon. Checks that, a held request answered at
 * once when the new stream comes, GET_NEW_STREAMS announcing it, and then
 * the beacon the viewer was kept from.
 *
 * Those cases, and tied_beacons(), have another viewer attached from the
 * same address (beside()): a viewer the relay cannot tell does not merge
 * the session with another, so it gets every beacon. idle_beacons() checks
 * a viewer alone: a held request keeps a beacon that lets it show nothing
 * until the hold ends, and gets it at once when another stream has news.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "net/live-proto.h"
#include "net/relay-proto.h"
#include "ctf/packet.h"
#include "util/clock.h"

#include "tap.h"
#include "relay-conn.h"

/* ------------------------------------------------------------ producers */

static void p_hello_in(struct rconn *c, const char *session, const char *trace)
{
	p_hello_opts(c, session, trace, 0, 50000);
}

static void p_hello(struct rconn *c, const char *trace)
{
	p_hello_in(c, "s1", trace);
}

/* A packet of len bytes (zeros). */
static void p_packet_len(struct rconn *c, uint32_t handle, uint64_t tb, uint64_t te, size_t len)
{
	uint8_t *m = calloc(1, RELAY_HDR_LEN + RELAY_INDEX_LEN + len);
	if (!m)
		return;
	struct ctf_index ix = { .packet_size = len * 8, .content_size = len * 8, .ts_begin = tb,
				.ts_end = te };
	relay_put_hdr(m, RELAY_PACKET, (uint32_t)(RELAY_INDEX_LEN + len));
	tr_relay_put_index(m + RELAY_HDR_LEN, handle, &ix);
	feed(c, m, RELAY_HDR_LEN + RELAY_INDEX_LEN + len);
	free(m);
}

static void p_beacon(struct rconn *c, uint32_t handle, uint64_t ts)
{
	uint8_t m[RELAY_HDR_LEN + 16] = { 0 };
	relay_put_hdr(m, RELAY_BEACON, 16);
	put_le32(m + RELAY_HDR_LEN, handle);
	put_le64(m + RELAY_HDR_LEN + 8, ts);
	feed(c, m, sizeof(m));
}

/* Another viewer from the same address (fed connections have none: one
 * address), attached to a session of its own (one stream), and its
 * producer in *p: the first viewer may be merged with it, and gets every
 * beacon (live.c, beacon_needed). */
static struct rconn *beside(struct trawl_relay *r, struct rconn **p)
{
	static int n;
	char name[16];
	snprintf(name, sizeof(name), "beside%d", n++);
	*p = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello_in(*p, name, "ust");
	p_metadata(*p);
	p_stream(*p, 0, "x");
	struct rconn *v = tr_relay_conn_new(r, RC_VIEWER);
	uint64_t ids[2];
	bool meta[2];
	ok(attach_to(r, v, name, ids, meta, 2) == 2, "another viewer from the address, on %s", name);
	return v;
}

/*
 * A viewer alone on an idle session: beacons that let it show nothing
 * (no other stream has events given past the stream's bound, nor packets
 * to give) wait for the hold's end, so an idle session wakes its viewer
 * once per hold, not at every tick; a packet of another stream makes the
 * beacon needed (its events wait for this stream's bound), and so does a
 * second viewer from its address.
 */
static void idle_beacons(struct trawl_relay *r)
{
	struct rconn *p = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello_in(p, "s4", "ust");
	p_metadata(p);
	p_stream(p, 0, "a");
	p_stream(p, 1, "b");
	p_packet(p, 0, 1000, 2000);
	p_packet(p, 1, 1000, 2000);
	struct rconn *v = tr_relay_conn_new(r, RC_VIEWER), *po = NULL, *vo = NULL;
	uint64_t ids[3];
	bool meta[3];
	struct ix x;
	uint8_t b[LIVE_INDEX_LEN];
	unsigned hold = r->live_hold_ms;
	if (!ok(attach_to(r, v, "s4", ids, meta, 3) == 3, "session s4: streams a and b"))
		goto out;
	bool good = true;
	for (int i = 1; i < 3; i++) {
		good = good && next_index(v, ids[i], &x) && x.status == LIVE_INDEX_OK;
		read_packet(v, ids[i], &x);
	}
	good = good && next_index(v, ids[1], &x) && x.status == LIVE_INDEX_RETRY &&
	       next_index(v, ids[1], &x) && x.status == LIVE_INDEX_RETRY && !next_index(v, ids[1], &x);
	ok(good && tr_live_holding(r), "both packets read (ending at 2000); a's next request held");
	p_beacon(p, 0, 3000);
	ok(tr_live_holding(r) && waiting(v) == 0,
	   "a beacon at 3000 on a: the request stays held (the viewer has nothing to show "
	   "past 2000; %zu bytes of replies)", waiting(v));
	p_packet(p, 1, 2500, 2600);
	ok(!tr_live_holding(r) && reply(v, b, sizeof(b)) && get_be32(b + 56) == LIVE_INDEX_INACTIVE &&
		   get_be64(b + 32) == 3000,
	   "a packet of b (2500-2600, its events wait for a's bound): a's beacon, 3000, at once");
	good = next_index(v, ids[2], &x) && x.status == LIVE_INDEX_OK;
	read_packet(v, ids[2], &x);
	/* a's bound 3000 is past every event given: RETRYs owed, then held */
	good = good && next_index(v, ids[1], &x) && x.status == LIVE_INDEX_RETRY &&
	       next_index(v, ids[1], &x) && x.status == LIVE_INDEX_RETRY;
	r->live_hold_ms = 1;
	good = good && !next_index(v, ids[1], &x);
	p_beacon(p, 0, 4000);
	ok(good && tr_live_holding(r) && waiting(v) == 0,
	   "b's packet read; a held again, a beacon at 4000: kept");
	int64_t t0 = tr_mono_ms();
	for (int i = 0; i < 1000 && tr_mono_ms() < t0 + 2; i++)
		usleep(1000);
	int64_t due = tr_live_due(r, tr_mono_ms());
	tr_live_tick(r);
	ok(due <= tr_mono_ms() && !tr_live_holding(r) && reply(v, b, sizeof(b)) &&
		   get_be32(b + 56) == LIVE_INDEX_INACTIVE && get_be64(b + 32) == 4000,
	   "the hold's end (live_hold_ms, due then): INACTIVE at 4000");
	r->live_hold_ms = hold;
	good = next_index(v, ids[1], &x) && x.status == LIVE_INDEX_RETRY &&
	       next_index(v, ids[1], &x) && x.status == LIVE_INDEX_RETRY && !next_index(v, ids[1], &x);
	vo = beside(r, &po);
	p_beacon(p, 0, 5000);
	ok(good && !tr_live_holding(r) && reply(v, b, sizeof(b)) &&
		   get_be32(b + 56) == LIVE_INDEX_INACTIVE && get_be64(b + 32) == 5000,
	   "held again; with another viewer from its address, a beacon at 5000 answers it at once");
out:
	r->live_hold_ms = hold;
	if (vo)
		tr_relay_conn_close(vo);
	if (po)
		tr_relay_conn_close(po);
	tr_relay_conn_close(v);
	tr_relay_conn_close(p);
}

/*
 * Three streams whose packets end at one time, then beacons of one time
 * (the agents' and the kernel recorder's ticks): no beacon at a packet's
 * end, and no two streams' beacons alike (babeltrace2 warns "Cannot
 * deterministically pick next live stream message iterator" at each tie).
 */
static void tied_beacons(struct trawl_relay *r)
{
	struct rconn *p = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello_in(p, "s2", "ust");
	p_metadata(p);
	p_stream(p, 0, "a");
	p_stream(p, 1, "b");
	p_stream(p, 2, "c");
	for (uint32_t h = 0; h < 3; h++)
		p_packet(p, h, 1000 + h, 2000);
	struct rconn *v = tr_relay_conn_new(r, RC_VIEWER);
	uint64_t ids[4];
	bool meta[4];
	struct ix x;
	int n = attach_to(r, v, "s2", ids, meta, 4);
	struct rconn *po = NULL, *vo = beside(r, &po);
	if (!ok(n == 4 && meta[0], "session s2: 3 streams whose packets end at 2000 (%d)", n))
		goto out;
	bool good = true;
	for (int i = 1; i < 4; i++) {
		good = good && next_index(v, ids[i], &x) && x.status == LIVE_INDEX_OK;
		read_packet(v, ids[i], &x);
	}
	/* two RETRYs owed, then held: never INACTIVE at 2000 */
	good = good && next_index(v, ids[1], &x) && x.status == LIVE_INDEX_RETRY &&
	       next_index(v, ids[2], &x) && x.status == LIVE_INDEX_RETRY && !next_index(v, ids[3], &x);
	ok(good, "their packets read: RETRY, RETRY, held; no beacon at the packets' end");
	p_beacon(p, 2, 3000);
	p_beacon(p, 0, 3000);
	p_beacon(p, 1, 3000);
	uint8_t b[LIVE_INDEX_LEN];
	uint64_t t[3] = { 0 };
	good = reply(v, b, sizeof(b)) && get_be32(b + 56) == LIVE_INDEX_INACTIVE;
	t[2] = get_be64(b + 32);
	good = good && next_index(v, ids[1], &x) && x.status == LIVE_INDEX_INACTIVE;
	t[0] = x.ts_end;
	good = good && next_index(v, ids[2], &x) && x.status == LIVE_INDEX_INACTIVE;
	t[1] = x.ts_end;
	ok(good && t[2] == 3000 && t[0] == 2999 && t[1] == 2998,
	   "beacons at 3000 on all three: INACTIVE at %llu, %llu, %llu (3000, 2999, 2998: each "
	   "the latest time no other stream's beacon has)", (unsigned long long)t[2],
	   (unsigned long long)t[0], (unsigned long long)t[1]);
	p_beacon(p, 0, 4000);
	p_beacon(p, 1, 4000);
	good = next_index(v, ids[1], &x) && x.status == LIVE_INDEX_INACTIVE && x.ts_end == 4000 &&
	       next_index(v, ids[2], &x) && x.status == LIVE_INDEX_INACTIVE && x.ts_end == 3999;
	ok(good, "the next tick's beacons (4000): 4000, then 3999");
	p_beacon(p, 2, 4000);
	good = next_index(v, ids[3], &x);
	ok(good && x.status == LIVE_INDEX_INACTIVE && x.ts_end == 3998,
	   "the third's beacon at 4000 too: 3998 (%llu)", (unsigned long long)x.ts_end);
	/* no free time above the stream's last bound: no beacon now */
	good = next_index(v, ids[2], &x);
	ok(good && x.status == LIVE_INDEX_RETRY,
	   "the second asked again (its beacon 4000 the first's, 3999 its own last): no "
	   "beacon, RETRY (status %u)", x.status);
out:
	tr_relay_conn_close(vo);
	tr_relay_conn_close(po);
	tr_relay_conn_close(v);
	tr_relay_conn_close(p);
}

/*
 * A viewer that sends 50 GET_PACKET requests ahead for a whole 5 MiB
 * stream: one reply waits at a time (the 4 MiB cap reached), the next
 * once it is read, until all 50 are.
 */
static void requests_ahead(struct trawl_relay *r)
{
	enum { PK = 1 << 20, NPK = 5, NREQ = 50 };
	struct rconn *p = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello_in(p, "s3", "ust");
	p_metadata(p);
	p_stream(p, 0, "big");
	for (int i = 0; i < NPK; i++)
		p_packet_len(p, 0, 1000 + (uint64_t)i * 1000, 2000 + (uint64_t)i * 1000, PK);
	struct rconn *v = tr_relay_conn_new(r, RC_VIEWER);
	uint64_t ids[2];
	bool meta[2];
	int n = attach_to(r, v, "s3", ids, meta, 2);
	if (!ok(n == 2 && !meta[1], "session s3: a stream of %d MiB (%d)", NPK, n))
		goto out;
	uint8_t q[NREQ][16 + 20];
	for (int i = 0; i < NREQ; i++) {
		put_be64(q[i], 20);
		put_be32(q[i] + 8, LIVE_GET_PACKET);
		put_be32(q[i] + 12, 0);
		put_be64(q[i] + 16, ids[1]);
		put_be64(q[i] + 24, 0);
		put_be32(q[i] + 32, NPK * PK);
	}
	tr_relay_conn_feed(v, q, sizeof(q));
	size_t one = 12 + (size_t)NPK * PK;
	ok(!v->dead && waiting(v) == one && v->inlen == (NREQ - 1) * sizeof(q[0]),
	   "%d GET_PACKET of %d MiB in one go: one reply waits (%zu bytes), %d requests stay "
	   "unread (%zu bytes)", NREQ, NPK, waiting(v), NREQ - 1, v->inlen);
	ok(!tr_live_wants_input(v), "  and the loop reads no more of the viewer");
	int served = 0;
	size_t most = 0;
	uint8_t h[12];
	for (int i = 0; i < NREQ + 2 && !v->dead; i++) {
		if (waiting(v) > most)
			most = waiting(v);
		if (!reply(v, h, 12))
			break;
		if (get_be32(h) != LIVE_PACKET_OK || get_be32(h + 4) != NPK * PK ||
		    !reply(v, NULL, one - 12))
			break;
		served++;
		tr_live_tick(r);	/* the loop's turn: the next request */
	}
	ok(served == NREQ && most == one && !v->inlen && tr_live_wants_input(v),
	   "each read, the next is answered: %d of %d, never more than one waiting (%zu bytes)",
	   served, NREQ, most);
out:
	tr_relay_conn_close(v);
	tr_relay_conn_close(p);
}

/* ------------------------------------------------------------------ test */

int main(void)
{
	char dir[96];
	snprintf(dir, sizeof(dir), "/tmp/trawl-test-relay-live-%d", (int)getpid());
	mkdir(dir, 0700);
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = dir };
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!ok(r != NULL, "a relay's state without sockets"))
		return done_testing();

	/* the kernel trace: a CPU stream and the statedump, a packet each */
	struct rconn *pk = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(pk, "kernel");
	p_metadata(pk);
	p_stream(pk, 0, "channel0_0");
	p_stream(pk, 1, "statedump_0");
	p_packet(pk, 0, 1000, 2000);
	p_packet(pk, 1, 1100, 2000);
	/* the user-space trace is connected, without streams yet */
	struct rconn *pu = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello(pu, "ust");
	p_metadata(pu);
	ok(r->sessions && r->sessions->ntraces == 2 && !pk->dead && !pu->dead,
	   "two producers of session s1 on host n1: kernel (2 streams), ust (none yet)");

	/* a viewer attaches from the beginning */
	struct rconn *v = tr_relay_conn_new(r, RC_VIEWER), *po = NULL, *vo = NULL;
	uint8_t cp[20] = { 0 };
	put_be32(cp + 8, LIVE_MAJOR);
	put_be32(cp + 12, LIVE_MINOR);
	put_be32(cp + 16, LIVE_CONNECT_COMMAND);
	ask(v, LIVE_CONNECT, cp, 20);
	ask(v, LIVE_CREATE_SESSION, NULL, 0);
	reply(v, NULL, waiting(v));
	uint64_t sid = r->sessions ? r->sessions->id : 0;
	uint8_t ap[20] = { 0 };
	put_be64(ap, sid);
	put_be32(ap + 16, LIVE_SEEK_BEGINNING);
	ask(v, LIVE_ATTACH_SESSION, ap, 20);
	uint64_t ids[8];
	bool meta[8];
	int n = streams(v, ids, meta, 8);
	ok(n == 3 && meta[0] && !meta[1] && !meta[2],
	   "ATTACH: the kernel trace's metadata stream and its 2 data streams (%d)", n);
	if (n != 3)
		goto out;
	uint64_t cpu = ids[1], sd = ids[2];
	read_metadata(v, ids[0]);
	vo = beside(r, &po);

	/* both packets read; then no beacon at the statedump's packet end
	 * (the viewer knows it: babeltrace2 warns at two streams' beacons of
	 * one time, and packets of several streams end at one tick), two
	 * RETRYs at once (the viewer's muxer hands its events on), and the
	 * next request held */
	struct ix x;
	ok(next_index(v, cpu, &x) && x.status == LIVE_INDEX_OK && x.flags == 0,
	   "channel0_0: OK, its packet");
	read_packet(v, cpu, &x);
	ok(next_index(v, sd, &x) && x.status == LIVE_INDEX_OK && x.flags == 0,
	   "statedump_0: OK, its packet");
	read_packet(v, sd, &x);
	bool got6 = next_index(v, sd, &x);
	ok(got6 && x.status == LIVE_INDEX_RETRY,
	   "statedump_0, nothing new: RETRY, no beacon at its packet's end (status %u)",
	   x.status);
	ok(next_index(v, sd, &x) && x.status == LIVE_INDEX_RETRY,
	   "  then RETRY once more");
	ok(!next_index(v, sd, &x) && tr_live_holding(r),
	   "  then the request is held (the viewer waits on its socket)");
	p_beacon(pk, 1, 2500);
	uint8_t b[LIVE_INDEX_LEN];
	ok(!tr_live_holding(r) && waiting(v) == LIVE_INDEX_LEN && reply(v, b, sizeof(b)) &&
		   get_be32(b + 56) == LIVE_INDEX_INACTIVE && get_be64(b + 32) == 2500,
	   "a beacon of statedump_0 answers the held request: INACTIVE at 2500");
	ok(next_index(v, sd, &x) && x.status == LIVE_INDEX_RETRY &&
		   next_index(v, sd, &x) && x.status == LIVE_INDEX_RETRY && !next_index(v, sd, &x) &&
		   tr_live_holding(r),
	   "statedump_0 asked again: RETRY twice, then held");

	/* a thread of the traced program starts: the ust trace's first
	 * stream, no packet yet. The held request is answered at once, with
	 * an OK of no packet that tells of it */
	p_stream(pu, 0, "ust_100_100");
	ok(!tr_live_holding(r) && reply(v, b, sizeof(b)),
	   "a new stream of another trace: the held request is answered at once");
	uint32_t st = get_be32(b + 56), fl = get_be32(b + 60);
	ok(st == LIVE_INDEX_OK && (fl & LIVE_FLAG_NEW_STREAM),
	   "  OK with NEW_STREAM (status %u, flags %u; RETRY is 2: babeltrace2 would ask "
	   "statedump_0 forever)", st, fl);
	ok(get_be64(b + 8) == 0 && get_be64(b + 16) == 0 && get_be64(b) == 64 &&
		   get_be64(b + 32) == 2500,
	   "  of no packet: sizes 0, offset the stream's end (64), time the last bound given "
	   "(2500)");

	/* babeltrace2 would ask GET_NEW_STREAMS now; a viewer that asks
	 * statedump_0 again first, or whose statedump got a newer beacon,
	 * still hears of the new stream and gets no beacon */
	p_beacon(pk, 1, 3000);
	for (int i = 0; i < 4; i++) {
		bool got1 = next_index(v, sd, &x);
		if (!got1 || x.status != LIVE_INDEX_OK ||
		    !(x.flags & LIVE_FLAG_NEW_STREAM) || x.packet_size != 0) {
			ok(0, "statedump_0 asked again (%d): status %u flags %u size %llu", i,
			   x.status, x.flags, (unsigned long long)x.packet_size);
			goto out;
		}
	}
	ok(1, "statedump_0 asked 4 times more, a newer beacon there: OK of no packet with "
	   "NEW_STREAM each time, never RETRY, never a held request, never INACTIVE");
	p_packet(pk, 0, 2000, 3000);
	ok(next_index(v, cpu, &x) && x.status == LIVE_INDEX_OK &&
		   (x.flags & LIVE_FLAG_NEW_STREAM) && x.packet_size == 64 * 8,
	   "channel0_0 with a new packet: OK of the packet, with NEW_STREAM");
	read_packet(v, cpu, &x);

	/* GET_NEW_STREAMS: the ust trace (its metadata stream first) */
	ask_id(v, LIVE_GET_NEW_STREAMS, sid);
	uint64_t nids[4];
	bool nmeta[4];
	n = streams(v, nids, nmeta, 4);
	ok(n == 2 && nmeta[0] && !nmeta[1], "GET_NEW_STREAMS: the ust trace's metadata and "
	   "ust_100_100 (%d)", n);
	if (n != 2)
		goto out;
	read_metadata(v, nids[0]);
	/* now the beacon the viewer was kept from */
	bool got = next_index(v, sd, &x);
	ok(got && x.status == LIVE_INDEX_INACTIVE && x.ts_end == 3000,
	   "statedump_0 after that: INACTIVE at 3000 (status %u)", x.status);
	ok(next_index(v, nids[1], &x) && x.status == LIVE_INDEX_RETRY,
	   "ust_100_100, no packet yet: RETRY");
	ask_id(v, LIVE_GET_NEW_STREAMS, sid);
	ok(reply(v, b, 8) && get_be32(b) == LIVE_NEW_STREAMS_NO_NEW,
	   "GET_NEW_STREAMS again: nothing new");
out:
	if (vo)
		tr_relay_conn_close(vo);
	if (po)
		tr_relay_conn_close(po);
	tr_relay_conn_close(v);
	tr_relay_conn_close(pu);
	tr_relay_conn_close(pk);
	tied_beacons(r);
	idle_beacons(r);
	requests_ahead(r);
	trawl_relay_free(r);
	tap_rm_tree(dir);
	return done_testing();
}
