/* SPDX-License-Identifier: MIT */
/*
 * The cluster control messages of the relay protocol (docs/cluster.md,
 * lib/net/relay-proto.h RELAY_CLUSTER_TYPES): built with lib/net/relay-wr
 * as the agent, the relay and the client build them, parsed back with
 * tr_relay_msg_parse (every field, the layout's bytes), and the malformed
 * ones refused.
 */
#include <errno.h>
#include <string.h>

#include "net/relay-proto.h"
#include "net/relay-wr.h"
#include "tap.h"

static struct relay_wr w;

/* Parses the message built in w; returns its size, m filled. */
static ssize_t parse(struct relay_msg *m, char *err, size_t errlen)
{
	size_t n = tr_relay_wr_done(&w);
	err[0] = 0;
	return n ? tr_relay_msg_parse(w.buf, n, m, err, errlen) : -1;
}

static void test_join_ping(void)
{
	struct relay_msg m;
	char err[256];
	tr_relay_wr_begin(&w, RELAY_JOIN);
	tr_relay_wr_32(&w, RELAY_VERSION);
	tr_relay_wr_32(&w, 0);
	tr_relay_wr_64(&w, 0x0102030405060708ull);
	tr_relay_wr_str(&w, "node-7");
	ssize_t r = parse(&m, err, sizeof(err));
	is_int(r, 8 + 16 + 7, "JOIN: header, version, flags, clock, host (%s)", err);
	static const uint8_t hdr[8] = { 32, 0, 0, 0, 23, 0, 0, 0 };
	ok(memcmp(w.buf, hdr, 8) == 0, "JOIN: type 32 and length 23, little-endian");
	ok(m.type == RELAY_JOIN && m.u.join.version == RELAY_VERSION &&
	   m.u.join.t == 0x0102030405060708ull && strcmp(m.u.join.host, "node-7") == 0,
	   "JOIN: every field back");
	is_str(tr_relay_type_name(RELAY_JOIN), "JOIN", "JOIN: its name");

	tr_relay_wr_begin(&w, RELAY_JOIN);
	tr_relay_wr_32(&w, RELAY_VERSION);
	tr_relay_wr_32(&w, 0);
	tr_relay_wr_64(&w, 1);
	tr_relay_wr_str(&w, "../etc");
	r = parse(&m, err, sizeof(err));
	ok(r == -EPROTO && strstr(err, "host name"), "JOIN: a host that is not a plain name is "
	   "refused (%s)", err);
	char h64[65];
	memset(h64, 'h', 64);
	h64[64] = 0;
	tr_relay_wr_begin(&w, RELAY_JOIN);
	tr_relay_wr_32(&w, RELAY_VERSION);
	tr_relay_wr_32(&w, 0);
	tr_relay_wr_64(&w, 1);
	tr_relay_wr_str(&w, h64);
	ok(parse(&m, err, sizeof(err)) == -EPROTO, "JOIN: a host of 64 bytes is refused "
	   "(the live protocol's names are 63)");

	tr_relay_wr_begin(&w, RELAY_PING);
	tr_relay_wr_64(&w, 42);
	r = parse(&m, err, sizeof(err));
	ok(r == 16 && m.type == RELAY_PING && m.u.ping.t_relay == 42, "PING: the relay's time");
	tr_relay_wr_begin(&w, RELAY_PONG);
	tr_relay_wr_64(&w, 42);
	tr_relay_wr_64(&w, 50);
	tr_relay_wr_64(&w, 3);
	tr_relay_wr_64(&w, 9);
	tr_relay_wr_str(&w, "web:active");
	r = parse(&m, err, sizeof(err));
	ok(r == 8 + 32 + 11 && m.u.ping.t_relay == 42 && m.u.ping.t_agent == 50 &&
	   m.u.ping.buffers == 3 && m.u.ping.discarded == 9 &&
	   strcmp(m.u.ping.sessions, "web:active") == 0, "PONG: every field back (%s)", err);
	tr_relay_wr_begin(&w, RELAY_PONG);
	tr_relay_wr_64(&w, 42);
	r = parse(&m, err, sizeof(err));
	ok(r == -EPROTO && strstr(err, "too short"), "PONG: too short is refused (%s)", err);
}

static void test_ctl(void)
{
	struct relay_msg m;
	char err[256];
	tr_relay_wr_begin(&w, RELAY_CTL);
	tr_relay_wr_32(&w, 7);
	tr_relay_wr_32(&w, 3);
	tr_relay_wr_str(&w, "create");
	tr_relay_wr_str(&w, "web");
	tr_relay_wr_str(&w, "relay=.");
	ssize_t r = parse(&m, err, sizeof(err));
	is_int(r, 8 + 8 + 7 + 4 + 8, "CTL: id, argc, three strings (%s)", err);
	ok(m.u.ctl.id == 7 && m.u.ctl.argc == 3 && strcmp(m.u.ctl.args, "create") == 0 &&
	   strcmp(m.u.ctl.args + 7, "web") == 0 && strcmp(m.u.ctl.args + 11, "relay=.") == 0,
	   "CTL: id, argc and argv back");

	tr_relay_wr_begin(&w, RELAY_CTL);
	tr_relay_wr_32(&w, 7);
	tr_relay_wr_32(&w, 3);
	tr_relay_wr_str(&w, "create");
	tr_relay_wr_str(&w, "web");
	ok(parse(&m, err, sizeof(err)) == -EPROTO, "CTL: fewer strings than argc is refused");
	tr_relay_wr_begin(&w, RELAY_CTL);
	tr_relay_wr_32(&w, 7);
	tr_relay_wr_32(&w, 1);
	tr_relay_wr_str(&w, "start");
	tr_relay_wr_str(&w, "extra");
	r = parse(&m, err, sizeof(err));
	ok(r == -EPROTO && strstr(err, "after its fields"), "CTL: more strings than argc is "
	   "refused (%s)", err);
	tr_relay_wr_begin(&w, RELAY_CTL);
	tr_relay_wr_32(&w, 7);
	tr_relay_wr_32(&w, 0);
	ok(parse(&m, err, sizeof(err)) == -EPROTO, "CTL: no argument is refused");
	tr_relay_wr_begin(&w, RELAY_CTL);
	tr_relay_wr_32(&w, 7);
	tr_relay_wr_32(&w, RELAY_CTL_ARGS_MAX + 1);
	for (int i = 0; i < RELAY_CTL_ARGS_MAX + 1; i++)
		tr_relay_wr_str(&w, "x");
	r = parse(&m, err, sizeof(err));
	ok(r == -EPROTO && strstr(err, "more than 256"), "CTL: 257 arguments are refused (%s)",
	   err);

	tr_relay_wr_begin(&w, RELAY_CLUSTER);
	tr_relay_wr_32(&w, 2);
	tr_relay_wr_32(&w, 15000);
	tr_relay_wr_str(&w, "web*");
	tr_relay_wr_str(&w, "stop");
	tr_relay_wr_str(&w, "shop");
	r = parse(&m, err, sizeof(err));
	ok(r == 8 + 8 + 5 + 5 + 5 && m.u.ctl.argc == 2 && m.u.ctl.timeout_ms == 15000 &&
	   strcmp(m.u.ctl.glob, "web*") == 0 && strcmp(m.u.ctl.args, "stop") == 0 &&
	   strcmp(m.u.ctl.args + 5, "shop") == 0, "CLUSTER: argc, timeout, glob, argv back (%s)",
	   err);

	tr_relay_wr_begin(&w, RELAY_CTL_REPLY);
	tr_relay_wr_32(&w, 7);
	tr_relay_wr_32(&w, (uint32_t)-1);
	tr_relay_wr_64(&w, 1000);
	tr_relay_wr_64(&w, 2000);
	tr_relay_wr_str(&w, "out\n");
	tr_relay_wr_str(&w, "err\n");
	r = parse(&m, err, sizeof(err));
	ok(r == 8 + 24 + 5 + 5 && m.u.reply.id == 7 && m.u.reply.status == -1 &&
	   m.u.reply.t_apply == 1000 && m.u.reply.t_done == 2000 &&
	   strcmp(m.u.reply.out, "out\n") == 0 && strcmp(m.u.reply.err, "err\n") == 0,
	   "CTL_REPLY: every field back, a negative status too (%s)", err);
}

static void test_node(void)
{
	struct relay_msg m;
	char err[256];
	tr_relay_wr_begin(&w, RELAY_NODE);
	tr_relay_wr_32(&w, RELAY_NODE_DOWN);
	tr_relay_wr_32(&w, RELAY_NODE_OFFSET | RELAY_NODE_ANSWER);
	tr_relay_wr_32(&w, 1);
	tr_relay_wr_32(&w, 0);
	tr_relay_wr_64(&w, 11);
	tr_relay_wr_64(&w, (uint64_t)-12345);
	tr_relay_wr_64(&w, 13);
	tr_relay_wr_64(&w, 14);
	tr_relay_wr_64(&w, 15);
	tr_relay_wr_64(&w, 16);
	tr_relay_wr_64(&w, 17);
	tr_relay_wr_str(&w, "n1");
	tr_relay_wr_str(&w, "10.0.0.1:9");
	tr_relay_wr_str(&w, "a:new");
	tr_relay_wr_str(&w, "");
	tr_relay_wr_str(&w, "no session a");
	ssize_t r = parse(&m, err, sizeof(err));
	ok(r > 0 && m.u.node.state == RELAY_NODE_DOWN && m.u.node.flags == 3 &&
	   m.u.node.status == 1 && m.u.node.since == 11 && m.u.node.offset_ns == -12345 &&
	   m.u.node.rtt_ns == 13 && m.u.node.t_apply == 14 && m.u.node.t_done == 15 &&
	   m.u.node.buffers == 16 && m.u.node.discarded == 17, "NODE: the numbers back, a "
	   "negative offset too (%s)", err);
	ok(r > 0 && strcmp(m.u.node.name, "n1") == 0 && strcmp(m.u.node.addr, "10.0.0.1:9") == 0 &&
	   strcmp(m.u.node.sessions, "a:new") == 0 && *m.u.node.out == 0 &&
	   strcmp(m.u.node.err, "no session a") == 0, "NODE: the five strings back");
	/* the last string without its NUL */
	size_t n = tr_relay_wr_done(&w);
	w.buf[n - 1] = 'x';
	r = tr_relay_msg_parse(w.buf, n, &m, err, sizeof(err));
	ok(r == -EPROTO, "NODE: a string without its NUL is refused (%s)", err);
}

int main(void)
{
	test_join_ping();
	test_ctl();
	test_node();
	free(w.buf);
	return done_testing();
}
