/* SPDX-License-Identifier: MIT */
/*
 * test-agent: the pieces of the agent protocol that can be tested in one
 * process (lib/ust/proto.h, ring.c, consumer.c): messages built and read
 * back, short and malformed messages rejected without reading past their
 * end, a ring buffer's sealed memfd passed over a SOCK_SEQPACKET socket and
 * mapped by the receiver (an unsealed or forged one refused), and the
 * consumer reading every committed packet after the producer is gone,
 * with the discarded count carried by a last empty packet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

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
	return ust_ring_create(r, &o);
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
	is_int(ust_ring_map(&cons, fd), 0, "the receiver maps it");
	ok(cons.S == 4096 && cons.N == 4 && cons.shm->pid == getpid(), "geometry and owner as created");

	/* the producer writes three packets and goes away */
	cons.shm->active = 1;
	uint64_t ts = 100;
	for (int i = 0; i < 3; i++) {
		ok(ust_ring_open(&prod, ts), "producer: packet %d opened", i);
		prod.shm->pos = PK_HDR_END;
		ts += 10;
		ust_ring_finalize(&prod, ts);
	}
	ust_ring_open(&prod, ts);		/* a fourth, left open */
	UST_ADD(prod.shm->discarded, 5);	/* dropped after the last packet */
	ust_ring_destroy(&prod);		/* gone (as if killed) */

	struct ust_cons c;
	memset(&c, 0, sizeof(c));
	c.ring = cons;
	uint8_t uuid[16] = { 9 };
	is_int(ust_cons_drain(&c, uuid, 0), 0, "consumer: drains after the producer is gone");
	is_int(c.packets, 3, "consumer: the 3 finished packets");
	is_int(c.ring.shm->consumed, 3, "consumer: consumed published");
	is_int(ust_cons_final(&c, uuid, 0, false), 0, "consumer: final flush");
	is_int(c.packets, 4, "consumer: the open packet closed and drained (it carries the discards)");
	is_int(c.disc_written, 5, "consumer: the last packet carries the 5 discarded events");
	ust_ring_destroy(&c.ring);

	/* a ring that lies about its counters is abandoned */
	struct ust_ring p2, c2;
	mk_ring(&p2, TRAWL_UST_DISCARD);
	int fd2 = dup(p2.fd);
	is_int(ust_ring_map(&c2, fd2), 0, "a second ring mapped");
	struct ust_cons cc;
	memset(&cc, 0, sizeof(cc));
	cc.ring = c2;
	p2.shm->produced = 1000;	/* more than N packets ahead */
	is_int(ust_cons_drain(&cc, uuid, 0), -EPROTO, "produced out of range: -EPROTO");
	ok(cc.bad && cc.packets == 0, "the ring is abandoned, nothing read");
	p2.shm->produced = 0;
	p2.shm->open = 1;
	p2.shm->pos = 1u << 30;		/* past the sub-buffer */
	cc.bad = false;
	is_int(ust_cons_final(&cc, uuid, 0, false), -EPROTO, "open packet past its end: -EPROTO");
	ust_ring_destroy(&cc.ring);
	ust_ring_destroy(&p2);

	/* an unsealed memfd, or one whose header lies, is refused */
	int u = memfd_create("plain", MFD_CLOEXEC);
	ok(u >= 0 && ftruncate(u, 65536) == 0, "an unsealed memfd");
	struct ust_ring bad;
	is_int(ust_ring_map(&bad, u), -EINVAL, "unsealed: refused");
	close(u);
	struct ust_ring p3;
	mk_ring(&p3, TRAWL_UST_DISCARD);
	p3.shm->nsubbuf = 64;		/* does not match the file size */
	is_int(ust_ring_map(&bad, p3.fd), -EINVAL, "geometry not matching the size: refused");
	p3.shm->nsubbuf = 4;
	p3.shm->magic = 0;
	is_int(ust_ring_map(&bad, p3.fd), -EINVAL, "bad magic: refused");
	ust_ring_destroy(&p3);
	close(sp[0]);
	close(sp[1]);
}

int main(void)
{
	test_messages();
	test_fd_passing();
	return done_testing();
}
