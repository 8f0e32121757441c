/* SPDX-License-Identifier: MIT */
/*
 * The live parts of a ring's open packet carry their event count (issue
 * 28 item 8; docs/relay.md, "Cut off by the relay"): the consumer walks
 * the events of the bytes it sends; a finished packet's rest carries the
 * ring's count less its parts'; bytes that are not whole events the
 * consumer knows are not sent as a part, they go with the rest, counted.
 * What the destination is given (ctf_index.events, the count a relay's
 * cut is measured with) is checked packet by packet.
 */
#include <string.h>
#include <unistd.h>

#include "ctf/dest.h"
#include "ring/ring.h"
#include "trawl/ctf.h"
#include "ust/ust-internal.h"

#include "tap.h"

#define MAXP 8
struct rec_dest {
	struct trawl_ctf_dest d;
	int packets;
	uint64_t events[MAXP];	/* ix->events of each packet */
	uint64_t bytes[MAXP];	/* its content, bytes */
};

static struct rec_dest *rec_of(struct trawl_ctf_dest *d)
{
	return (struct rec_dest *)d;
}

static int rec_open(struct trawl_ctf_dest *d, const struct ctf_dest_trace *t, char *err,
		    size_t errlen)
{
	(void)d, (void)t, (void)err, (void)errlen;
	return 0;
}

static int rec_metadata(struct trawl_ctf_dest *d, const char *text, size_t len)
{
	(void)d, (void)text, (void)len;
	return 0;
}

static int rec_stream(struct trawl_ctf_dest *d, uint32_t handle, uint32_t cpu, uint64_t class_id,
		      const char *name)
{
	(void)d, (void)handle, (void)cpu, (void)class_id, (void)name;
	return 0;
}

static int rec_packet(struct trawl_ctf_dest *d, uint32_t handle, const struct ctf_index *ix,
		      const void *pkt, size_t size)
{
	(void)handle, (void)pkt, (void)size;
	struct rec_dest *r = rec_of(d);
	if (r->packets < MAXP) {
		r->events[r->packets] = ix->events;
		r->bytes[r->packets] = ix->content_size / 8;
	}
	r->packets++;
	return 0;
}

static int rec_beacon(struct trawl_ctf_dest *d, uint32_t handle, uint64_t ts)
{
	(void)d, (void)handle, (void)ts;
	return 0;
}

static int rec_close(struct trawl_ctf_dest *d)
{
	(void)d;
	return 0;
}

static void rec_free(struct trawl_ctf_dest *d)
{
	(void)d;
}

static const struct ctf_dest_ops rec_ops = {
	.open = rec_open, .metadata = rec_metadata, .stream = rec_stream, .packet = rec_packet,
	.beacon = rec_beacon, .close = rec_close, .free = rec_free,
};

/* One event as the producer commits it (large header: id16, ts32; no
 * context), payload pl of len bytes. */
static void emit(struct ust_ring *r, uint16_t id, uint64_t ts, const void *pl, size_t len)
{
	struct ust_shm *h = r->shm;
	uint8_t *p = ust_ring_subbuf(r, h->produced) + h->pos;
	uint32_t ts32 = (uint32_t)ts;
	memcpy(p, &id, 2);
	memcpy(p + 2, &ts32, 4);
	memcpy(p + 6, pl, len);
	__atomic_store_n(&h->last_ts, ts, __ATOMIC_RELEASE);
	h->nev++;
	h->recorded++;
	__atomic_store_n(&h->pos, h->pos + 6 + len, __ATOMIC_RELEASE);
}

static const struct trawl_tp_field f_str[] = {
	{ .name = "msg", .kind = TRAWL_TP_STRING },
	{ .name = NULL },
};
static const struct trawl_tp_field f_u32[] = {
	{ .name = "v", .kind = TRAWL_TP_INT, .size = 4, .base = 10 },
	{ .name = NULL },
};

int main(void)
{
	static struct rec_dest rd = { .d = { .ops = &rec_ops } };
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .hostname = "h", .domain = "ust", .clock_offset_s = 1700000000,
		.clock_offset = 1, .packet_size = 4096, .dest = &rd.d,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!ok(w != NULL, "a writer streaming to a destination"))
		return done_testing();
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	uint8_t uuid[16] = { 1, 2, 3 };
	struct ust_ring_opts ro = {
		.subbuf_size = 4096, .nsubbuf = 4, .mode = TRAWL_UST_DISCARD,
		.header = TRAWL_UST_HEADER_LARGE, .uuid = uuid, .pid = getpid(), .tid = getpid(),
	};
	struct ust_ring prod, cons;
	is_int(tr_ust_ring_create(&prod, &ro), 0, "a discard ring");
	is_int(tr_ust_ring_map(&cons, dup(prod.fd)), 0, "mapped by its consumer");
	struct ust_cons c;
	memset(&c, 0, sizeof(c));
	c.ring = cons;
	c.ws = sc ? trawl_ctf_writer_stream(w, sc, "ust_1", 1) : NULL;
	ok(c.ws && tr_ust_cons_live_init(&c) == 0, "its stream, live");
	if (!c.ws)
		return done_testing();
	/* the packets go out with the writer's trace uuid and stream id */
	const uint8_t *tu = trawl_ctf_writer_trace(w)->uuid;
	uint32_t sid = (uint32_t)sc->id;

	/* events 0 (a string) and 1 (a u32) are known; 2 not yet */
	struct trawl_tp_event e0 = { .id = 0, .provider = "p", .name = "s", .fields = f_str };
	struct trawl_tp_event e1 = { .id = 1, .provider = "p", .name = "u", .fields = f_u32 };
	struct trawl_tp_event *evs[2] = { &e0, &e1 };
	const struct ust_evtab et = { evs, 2, TRAWL_UST_HEADER_LARGE, 0 };
	uint32_t v = 7;

	ok(tr_ust_ring_open(&prod, 1000), "packet 0 open at 1000");
	emit(&prod, 0, 1010, "hello", 6);
	emit(&prod, 1, 1020, &v, 4);
	emit(&prod, 0, 1030, "", 1);
	is_int(tr_ust_cons_live(&c, tu, sid, &et), 0, "a tick: the open packet's 3 events");
	ok(rd.packets == 1 && rd.events[0] == 3 && rd.bytes[0] == PK_HDR_END + 12 + 10 + 7,
	   "  one part of 3 events, 29 bytes of them (%d packets, %llu events, %llu bytes)",
	   rd.packets, (unsigned long long)rd.events[0],
	   (unsigned long long)(rd.bytes[0] - PK_HDR_END));

	emit(&prod, 1, 1040, &v, 4);
	is_int(tr_ust_cons_live(&c, tu, sid, &et), 0, "a tick: one more event");
	ok(rd.packets == 2 && rd.events[1] == 1, "  a part of 1 event (%d packets, %llu events)",
	   rd.packets, (unsigned long long)rd.events[1]);

	/* an event the consumer was not told of yet, then a known one */
	emit(&prod, 2, 1050, &v, 4);
	emit(&prod, 1, 1060, &v, 4);
	is_int(tr_ust_cons_live(&c, tu, sid, &et), 0, "a tick with an event of an id not known");
	is_int(rd.packets, 2, "  nothing sent: its bytes are not events the consumer can count");

	tr_ust_ring_finalize(&prod, 1100);
	is_int(tr_ust_cons_drain(&c, tu, sid), 0, "packet 0 finished, drained");
	ok(rd.packets == 3 && rd.events[2] == 2,
	   "  its rest: the ring's 6 events less the parts' 4 (%d packets, %llu events)",
	   rd.packets, (unsigned long long)rd.events[2]);
	uint64_t sum = 0;
	for (int i = 0; i < rd.packets && i < MAXP; i++)
		sum += rd.events[i];
	is_int((long long)sum, 6, "every event of the packet counted once, in its parts");

	ok(tr_ust_ring_open(&prod, 1200), "packet 1 open at 1200");
	emit(&prod, 0, 1210, "x", 2);
	is_int(tr_ust_cons_live(&c, tu, sid, &et), 0, "a tick on packet 1");
	ok(rd.packets == 4 && rd.events[3] == 1, "  a part of 1 event (%d packets, %llu events)",
	   rd.packets, (unsigned long long)rd.events[3]);
	tr_ust_ring_finalize(&prod, 1300);
	is_int(tr_ust_cons_drain(&c, tu, sid), 0, "packet 1 finished, drained");
	ok(rd.packets == 5 && rd.events[4] == 0 && rd.bytes[4] == PK_HDR_END,
	   "  its rest: nothing more, 0 events (%d packets, %llu events)", rd.packets,
	   (unsigned long long)rd.events[4]);

	tr_ust_cons_live_release(&c);
	tr_ust_ring_destroy(&c.ring);
	tr_ust_ring_destroy(&prod);
	is_int(trawl_ctf_writer_close(w), 0, "the writer closes");
	trawl_ctf_writer_free(w);
	return done_testing();
}
