/* SPDX-License-Identifier: MIT */
/*
 * test-agent: the pieces of the agent protocol that can be tested in one
 * process (lib/ust/proto.h, ring.c, consumer.c): messages built and read
 * back, short and malformed messages rejected without reading past their
 * end, a ring buffer's sealed memfd passed over a SOCK_SEQPACKET socket and
 * mapped by the receiver (an unsealed or forged one refused), and the
 * consumer reading every committed packet after the producer is gone,
 * with the discarded count carried by a last empty packet; and the live
 * timer on a thread's new buffer (no event, not yet marked quiet): nothing
 * goes to the relay until it has a time (no packet at time 0: a live
 * viewer would take it as an event from the past), and idle streams get
 * beacons, not empty packets, when another stream is created.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctf/dest.h"
#include "trawl/ctf.h"
#include "ust/proto.h"
#include "ust/ust-internal.h"

#include "tap.h"

static void test_messages(void)
{
	uint8_t buf[256];
	struct am_wr w;
	struct am_start st;
	memset(&st, 0, sizeof(st));
	st.session = 42;
	st.nsubbuf = 8;
	st.nglobs = 2;
	am_wr_init(&w, buf, sizeof(buf), AM_START);
	am_put(&w, &st, sizeof(st));
	int32_t ll = -1;
	am_put(&w, &ll, 4);
	am_put_str(&w, "app:*");
	ll = 6;
	am_put(&w, &ll, 4);
	am_put_str(&w, "other:ev");
	size_t len = am_wr_done(&w);
	ok(len == sizeof(struct am_hdr) + sizeof(st) + 4 + 6 + 4 + 9, "START: built (%zu bytes)", len);
	struct am_hdr h;
	memcpy(&h, buf, sizeof(h));
	is_int(h.type, AM_START, "START: type in the header");
	is_int(h.len, len, "START: length in the header");

	struct am_rd r;
	struct am_start got;
	am_rd_init(&r, buf, len);
	am_get(&r, &got, sizeof(got));
	int32_t l1, l2;
	am_get(&r, &l1, 4);
	const char *g1 = am_get_str(&r);
	am_get(&r, &l2, 4);
	const char *g2 = am_get_str(&r);
	ok(!r.bad && got.session == 42 && got.nglobs == 2 && l1 == -1 && l2 == 6 &&
	   !strcmp(g1, "app:*") && !strcmp(g2, "other:ev") && r.off == len,
	   "START: read back field by field, to the last byte");

	/* every truncation is caught, never read past */
	int caught = 0;
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *m = malloc(cut ? cut : 1);	/* exact size: ASan sees overreads */
		memcpy(m, buf, cut);
		am_rd_init(&r, m, cut);
		am_get(&r, &got, sizeof(got));
		am_get(&r, &l1, 4);
		am_get_str(&r);
		am_get(&r, &l2, 4);
		am_get_str(&r);
		caught += r.bad;
		free(m);
	}
	is_int(caught, len, "every one of the %zu truncations is flagged bad", len);

	/* a string without its NUL */
	uint8_t m2[sizeof(struct am_hdr) + 3];
	memset(m2, 'x', sizeof(m2));
	am_rd_init(&r, m2, sizeof(m2));
	const char *s = am_get_str(&r);
	ok(r.bad && *s == 0, "a string without its terminator: bad, empty");
	/* shorter than a header */
	am_rd_init(&r, m2, 3);
	ok(r.bad, "shorter than a header: bad");
	/* a reader stays bad */
	ok(!am_get(&r, &l1, 4) && l1 == 0, "a bad reader reads zeros");

	/* writer overflow */
	uint8_t small[16];
	am_wr_init(&w, small, sizeof(small), AM_EVREG);
	am_put_str(&w, "a very long event name that does not fit");
	is_int(am_wr_done(&w), 0, "a message larger than its buffer: not built");
}

/* A ring with a few packets, as a producer leaves them. */
static int mk_ring(struct ust_ring *r, uint32_t mode)
{
	uint8_t uuid[16] = { 1, 2, 3 };
	struct ust_ring_opts o = {
		.subbuf_size = 4096, .nsubbuf = 4, .mode = mode,
		.header = TRAWL_UST_HEADER_LARGE, .stream_id = 0, .instance_id = 0,
		.uuid = uuid, .pid = getpid(), .tid = getpid(),
	};
	return tr_ust_ring_create(r, &o);
}

static int send_fd(int sock, int fd)
{
	char b = 'x';
	struct iovec iov = { &b, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh;
	memset(&mh, 0, sizeof(mh));
	memset(&u, 0, sizeof(u));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char b;
	struct iovec iov = { &b, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void test_fd_passing(void)
{
	int sp[2];
	if (!ok(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair"))
		return;
	struct ust_ring prod, cons;
	if (!ok(mk_ring(&prod, TRAWL_UST_DISCARD) == 0, "a ring buffer (sealed memfd)"))
		return;
	ok(send_fd(sp[0], prod.fd) == 0, "its memfd sent with SCM_RIGHTS");
	int fd = recv_fd(sp[1]);
	ok(fd >= 0, "received");
	is_int(tr_ust_ring_map(&cons, fd), 0, "the receiver maps it");
	ok(cons.S == 4096 && cons.N == 4 && cons.shm->pid == getpid(), "geometry and owner as created");

	/* the producer writes three packets and goes away */
	cons.shm->active = 1;
	uint64_t ts = 100;
	for (int i = 0; i < 3; i++) {
		ok(tr_ust_ring_open(&prod, ts), "producer: packet %d opened", i);
		prod.shm->pos = PK_HDR_END;
		ts += 10;
		tr_ust_ring_finalize(&prod, ts);
	}
	tr_ust_ring_open(&prod, ts);		/* a fourth, left open */
	UST_ADD(prod.shm->discarded, 5);	/* dropped after the last packet */
	tr_ust_ring_destroy(&prod);		/* gone (as if killed) */

	struct ust_cons c;
	memset(&c, 0, sizeof(c));
	c.ring = cons;
	uint8_t uuid[16] = { 9 };
	is_int(tr_ust_cons_drain(&c, uuid, 0), 0, "consumer: drains after the producer is gone");
	is_int(c.packets, 3, "consumer: the 3 finished packets");
	is_int(c.ring.shm->consumed, 3, "consumer: consumed published");
	is_int(tr_ust_cons_final(&c, uuid, 0, false), 0, "consumer: final flush");
	is_int(c.packets, 4, "consumer: the open packet closed and drained (it carries the discards)");
	is_int(c.disc_written, 5, "consumer: the last packet carries the 5 discarded events");
	tr_ust_ring_destroy(&c.ring);

	/* a ring that lies about its counters is abandoned */
	struct ust_ring p2, c2;
	mk_ring(&p2, TRAWL_UST_DISCARD);
	int fd2 = dup(p2.fd);
	is_int(tr_ust_ring_map(&c2, fd2), 0, "a second ring mapped");
	struct ust_cons cc;
	memset(&cc, 0, sizeof(cc));
	cc.ring = c2;
	p2.shm->produced = 1000;	/* more than N packets ahead */
	is_int(tr_ust_cons_drain(&cc, uuid, 0), -EPROTO, "produced out of range: -EPROTO");
	ok(cc.bad && cc.packets == 0, "the ring is abandoned, nothing read");
	p2.shm->produced = 0;
	p2.shm->open = 1;
	p2.shm->pos = 1u << 30;		/* past the sub-buffer */
	cc.bad = false;
	is_int(tr_ust_cons_final(&cc, uuid, 0, false), -EPROTO, "open packet past its end: -EPROTO");
	tr_ust_ring_destroy(&cc.ring);
	tr_ust_ring_destroy(&p2);

	/* an unsealed memfd, or one whose header lies, is refused */
	int u = memfd_create("plain", MFD_CLOEXEC);
	ok(u >= 0 && ftruncate(u, 65536) == 0, "an unsealed memfd");
	struct ust_ring bad;
	is_int(tr_ust_ring_map(&bad, u), -EINVAL, "unsealed: refused");
	close(u);
	struct ust_ring p3;
	mk_ring(&p3, TRAWL_UST_DISCARD);
	p3.shm->nsubbuf = 64;		/* does not match the file size */
	is_int(tr_ust_ring_map(&bad, p3.fd), -EINVAL, "geometry not matching the size: refused");
	p3.shm->nsubbuf = 4;
	p3.shm->magic = 0;
	is_int(tr_ust_ring_map(&bad, p3.fd), -EINVAL, "bad magic: refused");
	tr_ust_ring_destroy(&p3);
	close(sp[0]);
	close(sp[1]);
}

/* A destination that records what the writer hands it. */
struct rec_dest {
	struct trawl_ctf_dest d;
	int streams, packets, beacons;
	uint64_t first_ts_begin;	/* of the first packet */
	uint64_t last_beacon;
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
	(void)handle, (void)cpu, (void)class_id, (void)name;
	rec_of(d)->streams++;
	return 0;
}

static int rec_packet(struct trawl_ctf_dest *d, uint32_t handle, const struct ctf_index *ix,
		      const void *pkt, size_t size)
{
	(void)handle, (void)pkt, (void)size;
	if (!rec_of(d)->packets++)
		rec_of(d)->first_ts_begin = ix->ts_begin;
	return 0;
}

static int rec_beacon(struct trawl_ctf_dest *d, uint32_t handle, uint64_t ts)
{
	(void)handle;
	rec_of(d)->beacons++;
	rec_of(d)->last_beacon = ts;
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

/*
 * The agent's live tick on a thread's buffer that was just handed over: no
 * event yet, and the application has not marked it quiet (that comes with
 * the next LIVE). Its stream is announced to the relay at once; the tick
 * must send nothing for it (no time is known: an empty packet "at 0" made
 * babeltrace2 fail on a message older than what it showed), a beacon once
 * it is quiet; and another stream of the writer, idle, gets its beacon as
 * always (the relay tells viewers of new streams itself).
 */
static void test_live_new_buffer(void)
{
	static struct rec_dest rd = { .d = { .ops = &rec_ops } };
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o), .hostname = "h", .domain = "ust", .clock_offset_s = 1700000000,
		.clock_offset = 1, .packet_size = 4096, .dest = &rd.d,
	};
	struct trawl_ctf_writer *w = trawl_ctf_writer_new(&o);
	if (!ok(w != NULL, "live: a writer streaming to a destination only"))
		return;
	struct trawl_ctf_stream_class *sc =
		trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	struct trawl_ctf_wstream *idle = sc ? trawl_ctf_writer_stream(w, sc, "ust_1", 1) : NULL;
	is_int(trawl_ctf_wstream_beacon(idle, 1000), 0, "live: an idle stream's beacon at 1000");
	struct ust_ring prod, cons;
	mk_ring(&prod, TRAWL_UST_DISCARD);
	is_int(tr_ust_ring_map(&cons, dup(prod.fd)), 0, "live: a thread's new buffer, mapped");
	struct ust_cons c;
	memset(&c, 0, sizeof(c));
	c.ring = cons;
	c.ws = trawl_ctf_writer_stream(w, sc, "ust_2", 2);
	ok(c.ws && tr_ust_cons_live_init(&c) == 0 && rd.streams == 2,
	   "live: its stream, announced at once (%d streams)", rd.streams);
	int beacons = rd.beacons;
	uint8_t uuid[16] = { 7 };
	is_int(tr_ust_cons_live(&c, uuid, 0, NULL), 0,
	       "live: the tick on it, before any event or quiet mark");
	ok(rd.packets == 0 && rd.beacons == beacons,
	   "  sends nothing (%d packets, the first at %llu; %d beacons)", rd.packets,
	   (unsigned long long)rd.first_ts_begin, rd.beacons - beacons);
	is_int(trawl_ctf_wstream_tick(idle, 2000), 0, "live: the idle stream's tick at 2000");
	ok(rd.packets == 0 && rd.last_beacon == 2000, "  a beacon at 2000, no empty packet (%d packets)",
	   rd.packets);
	__atomic_store_n(&prod.shm->quiet_ts, 2100, __ATOMIC_RELEASE);
	is_int(tr_ust_cons_live(&c, uuid, 0, NULL), 0,
	       "live: the tick once the buffer is marked quiet at 2100");
	ok(rd.packets == 0 && rd.last_beacon == 2100, "  a beacon at 2100 (%d packets)", rd.packets);
	tr_ust_cons_live_release(&c);
	tr_ust_ring_destroy(&c.ring);
	tr_ust_ring_destroy(&prod);
	is_int(trawl_ctf_writer_close(w), 0, "live: the writer closes");
	trawl_ctf_writer_free(w);
}

int main(void)
{
	test_messages();
	test_fd_passing();
	test_live_new_buffer();
	return done_testing();
}
