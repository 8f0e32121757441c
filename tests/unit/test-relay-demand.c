/* SPDX-License-Identifier: MIT */
/*
 * test-relay-demand - the relay tells producers that a live viewer waits
 * (DEMAND, docs/relay.md "Live latency"), driven without sockets as
 * test-relay-live is; and a resumable sender reads it.
 *
 * Checks: a viewer's request held makes the relay queue one DEMAND {2000}
 * to the session's producer whose HELLO had RELAY_HELLO_DEMAND, none to
 * the session's producer without the flag nor to another session's; held
 * again within the second, none more; a second later, one more; a request
 * answered at once (a packet there) sends none. The message parses (its
 * ms), and one short of its field is refused. A resumable sender (over a
 * socket pair) takes a DEMAND the relay sent as the time until which a
 * viewer waits (tr_rsend_demand), read by its thread without a send.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "net/live-proto.h"
#include "net/reconnect.h"
#include "net/relay-proto.h"
#include "ctf/packet.h"
#include "util/clock.h"

#include "tap.h"
#include "relay-conn.h"

/* ------------------------------------------------------------ producers */

static void p_hello_flags(struct rconn *c, const char *session, const char *trace, uint32_t flags)
{
	p_hello_opts(c, session, trace, flags, 100000);
}

/* The DEMANDs c's replies hold (then taken), -1 at anything else; *ms
 * the last one's. */
static int demands(struct rconn *c, uint32_t *ms)
{
	int n = 0;
	size_t off = c->outoff;
	while (off < c->outlen) {
		struct relay_msg m;
		char err[128];
		ssize_t k = tr_relay_msg_parse(c->out + off, c->outlen - off, &m, err, sizeof(err));
		if (k <= 0 || m.type != RELAY_DEMAND)
			return -1;
		*ms = m.u.demand.ms;
		n++;
		off += (size_t)k;
	}
	c->outoff = c->outlen = 0;
	return n;
}

/* Reads the viewer's stream until its request is held: the packets read. */
static int until_held(struct rconn *v, uint64_t stream)
{
	struct ix x;
	int packets = 0;
	for (int i = 0; i < 10; i++) {
		if (!next_index(v, stream, &x))
			return packets;
		if (x.status == LIVE_INDEX_OK && x.packet_size) {
			read_packet(v, stream, &x);
			packets++;
		}
	}
	return -1;
}

static int no_hello(void *arg, uint64_t *meta_len, int *refused, char *err, size_t errlen)
{
	(void)arg;
	(void)meta_len;
	*refused = 1;
	snprintf(err, errlen, "no resume in this test");
	return -ECONNREFUSED;
}

static void sender(void)
{
	int sv[2];
	if (!ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "a socket pair for a sender"))
		return;
	const struct rsend_opts so = { .budget = 1 << 20, .fd = sv[0], .hello = no_hello,
				       .resume_ms = 1000, .addr = "test" };
	struct rsend *q = tr_rsend_new(&so);
	ok(q && tr_rsend_demand(q) == 0, "a resumable sender, told of no viewer yet");
	uint8_t m[RELAY_HDR_LEN + RELAY_DEMAND_LEN];
	relay_put_hdr(m, RELAY_DEMAND, RELAY_DEMAND_LEN);
	put_le32(m + RELAY_HDR_LEN, 2000);
	int64_t t0 = tr_mono_ms();
	bool sent = write(sv[1], m, sizeof(m)) == (ssize_t)sizeof(m);
	int64_t until = 0;
	/* its thread reads it: at most 5 s */
	for (int i = 0; q && sent && i < 5000 && !(until = tr_rsend_demand(q)); i++)
		poll(NULL, 0, 1);
	int64_t t1 = tr_mono_ms();
	ok(sent && until >= t0 + 2000 && until <= t1 + 2000,
	   "its thread takes the relay's DEMAND {2000}: a viewer waits until %lld ms from then "
	   "(read within %lld ms)", (long long)(until - t0), (long long)(t1 - t0));
	tr_rsend_free(q);
	close(sv[1]);
}

int main(void)
{
	char dir[96];
	snprintf(dir, sizeof(dir), "/tmp/trawl-test-relay-demand-%d", (int)getpid());
	mkdir(dir, 0700);
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = dir };
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!ok(r != NULL, "a relay's state without sockets"))
		return done_testing();

	/* session s1: a user-space trace that asks for DEMAND, a kernel trace
	 * that does not; session s2: one that asks */
	struct rconn *pa = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello_flags(pa, "s1", "ust", RELAY_HELLO_DEMAND);
	p_metadata(pa);
	p_stream(pa, 0, "ust_0");
	p_packet(pa, 0, 1000, 2000);
	struct rconn *pb = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello_flags(pb, "s1", "kernel", 0);
	p_metadata(pb);
	p_stream(pb, 0, "channel0_0");
	p_packet(pb, 0, 1000, 2000);
	struct rconn *pc = tr_relay_conn_new(r, RC_PRODUCER);
	p_hello_flags(pc, "s2", "ust", RELAY_HELLO_DEMAND);
	p_metadata(pc);
	p_stream(pc, 0, "ust_0");
	ok(!pa->dead && !pb->dead && !pc->dead && pa->demand && !pb->demand && pc->demand,
	   "three producers: s1 ust (DEMAND asked), s1 kernel (not), s2 ust (asked)");

	struct rconn *v = tr_relay_conn_new(r, RC_VIEWER);
	uint64_t ids[8];
	bool meta[8];
	int n = attach_to(r, v, "s1", ids, meta, 8);
	ok(n == 4, "a viewer attached to s1: 2 traces, a metadata and a data stream each (%d)", n);
	if (n != 4)
		goto out;
	uint64_t ust = 0;
	for (int i = 0; i < n; i++)
		if (meta[i])
			read_metadata(v, ids[i]);
		else if (!ust)
			ust = ids[i];
	uint32_t ms = 0;
	is_int(demands(pa, &ms), 0, "no DEMAND while the viewer is answered at once");
	int got = until_held(v, ust);
	int da = demands(pa, &ms);
	ok(got == 1 && da == 1 && ms == 2000,
	   "the viewer read its packet, then its request is held: one DEMAND {2000} to s1's ust "
	   "producer (%d, %u)", da, ms);
	is_int(demands(pb, &ms) + 10 * demands(pc, &ms), 0,
	       "none to s1's kernel producer (no flag), none to s2's");

	/* a packet answers the held request; held again within the second */
	p_packet(pa, 0, 2000, 3000);
	struct ix x;
	ok(reply(v, NULL, LIVE_INDEX_LEN), "a packet answers the held request");
	got = until_held(v, ust);
	is_int(demands(pa, &ms), 0, "held again at once: no second DEMAND within a second");
	/* a second later (the relay's clock of the last one, moved back) */
	pa->demand_sent -= 1000;
	p_packet(pa, 0, 3000, 4000);
	reply(v, NULL, LIVE_INDEX_LEN);
	got = until_held(v, ust);
	is_int(demands(pa, &ms), 1, "held again a second after the last DEMAND: one more");
	(void)x;

	/* the message itself */
	uint8_t m[RELAY_HDR_LEN + RELAY_DEMAND_LEN];
	relay_put_hdr(m, RELAY_DEMAND, RELAY_DEMAND_LEN);
	put_le32(m + RELAY_HDR_LEN, 1234);
	struct relay_msg rm;
	char err[128] = "";
	ssize_t k = tr_relay_msg_parse(m, sizeof(m), &rm, err, sizeof(err));
	ok(k == (ssize_t)sizeof(m) && rm.type == RELAY_DEMAND && rm.u.demand.ms == 1234,
	   "DEMAND {1234} parses (%zd bytes)", k);
	relay_put_hdr(m, RELAY_DEMAND, RELAY_DEMAND_LEN - 1);
	k = tr_relay_msg_parse(m, sizeof(m) - 1, &rm, err, sizeof(err));
	ok(k == -EPROTO && strstr(err, "DEMAND of 3 bytes"), "a DEMAND of 3 bytes is refused (%s)",
	   err);
out:
	tr_relay_conn_close(v);
	tr_relay_conn_close(pc);
	tr_relay_conn_close(pb);
	tr_relay_conn_close(pa);
	trawl_relay_free(r);
	tap_rm_tree(dir);
	sender();
	return done_testing();
}
