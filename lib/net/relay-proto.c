/* SPDX-License-Identifier: MIT */
/*
 * lib/net/relay-proto.c - parsing the relay's data protocol (relay-proto.h).
 * The relay reads what any host on the network sends: every field is
 * checked against the payload's length before it is read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/relay-proto.h"

const char *tr_relay_type_name(uint32_t type)
{
	switch (type) {
#define RELAY_NAME(n, v) case v: return #n;
	RELAY_TYPES(RELAY_NAME)
#undef RELAY_NAME
	}
	return "?";
}

bool tr_relay_name_ok(const char *s)
{
	size_t n = 0;
	/* '.': ".", ".." and hidden files; '-': an option to whatever runs
	 * on the file later (rm, tar, a shell loop) */
	if (!s || !*s || *s == '.' || *s == '-')
		return false;
	for (; s[n]; n++) {
		char c = s[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
		if (n >= RELAY_NAME_MAX)
			return false;
	}
	return true;
}

void tr_relay_put_index(uint8_t *out, uint32_t handle, const struct ctf_index *ix)
{
	put_le32(out, handle);
	put_le32(out + 4, 0);
	const uint64_t v[8] = { ix->packet_size, ix->content_size, ix->ts_begin, ix->ts_end,
				ix->events_discarded, ix->stream_id, ix->instance_id, ix->seq };
	for (int i = 0; i < 8; i++)
		put_le64(out + 8 + 8 * i, v[i]);
}

/* A cursor over one payload. */
struct rd {
	const uint8_t *p;
	size_t off, len;
	bool bad;
};

static uint32_t rd32(struct rd *r)
{
	if (r->bad || r->len - r->off < 4) {
		r->bad = true;
		return 0;
	}
	uint32_t v = get_le32(r->p + r->off);
	r->off += 4;
	return v;
}

static uint64_t rd64(struct rd *r)
{
	if (r->bad || r->len - r->off < 8) {
		r->bad = true;
		return 0;
	}
	uint64_t v = get_le64(r->p + r->off);
	r->off += 8;
	return v;
}

static const uint8_t *rdbytes(struct rd *r, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = true;
		return NULL;
	}
	const uint8_t *v = r->p + r->off;
	r->off += n;
	return v;
}

/* A NUL-terminated string inside the payload. */
static const char *rdstr(struct rd *r)
{
	if (r->bad)
		return NULL;
	const uint8_t *nul = memchr(r->p + r->off, 0, r->len - r->off);
	if (!nul) {
		r->bad = true;
		return NULL;
	}
	const char *s = (const char *)r->p + r->off;
	r->off = (size_t)(nul - r->p) + 1;
	return s;
}

ssize_t tr_relay_msg_parse(const uint8_t *buf, size_t len, struct relay_msg *m, char *err,
			size_t errlen)
{
	if (len < RELAY_HDR_LEN)
		return 0;
	uint32_t type = get_le32(buf), plen = get_le32(buf + 4);
	const char *name = tr_relay_type_name(type);
	if (name[0] == '?')
		return tr_seterr(err, errlen, EPROTO, "unknown message type %u", type);
	if (plen > RELAY_MSG_MAX)
		return tr_seterr(err, errlen, EMSGSIZE, "%s of %u bytes (at most %u)", name, plen,
			      RELAY_MSG_MAX);
	if (len - RELAY_HDR_LEN < plen)
		return 0;
	memset(m, 0, sizeof(*m));
	m->type = (enum relay_type)type;
	m->len = plen;
	m->payload = buf + RELAY_HDR_LEN;
	struct rd r = { .p = buf + RELAY_HDR_LEN, .len = plen };
	const char *what = NULL;

	switch (m->type) {
	case RELAY_HELLO:
		m->u.hello.version = rd32(&r);
		m->u.hello.flags = rd32(&r);
		m->u.hello.live_timer_us = rd64(&r);
		m->u.hello.uuid = rdbytes(&r, 16);
		m->u.hello.session = rdstr(&r);
		m->u.hello.host = rdstr(&r);
		m->u.hello.trace = rdstr(&r);
		if (!r.bad && (!tr_relay_name_ok(m->u.hello.session) ||
			       !tr_relay_name_ok(m->u.hello.host) || !tr_relay_name_ok(m->u.hello.trace)))
			what = "a session, host or trace name that is not a plain file name";
		break;
	case RELAY_WELCOME:
	case RELAY_ACK:
		m->u.welcome.status = (int32_t)rd32(&r);
		m->u.welcome.msg = rdstr(&r);
		/* a cut's ACK to a producer that counts (RELAY_HELLO_COUNT) */
		if (m->type == RELAY_ACK && !r.bad && plen - r.off == 8) {
			m->u.ack.written = rd64(&r);
			m->u.ack.counted = true;
		}
		/* what the relay grants of the HELLO's asks (HORIZON) */
		if (m->type == RELAY_WELCOME && !r.bad && plen - r.off == 4)
			m->u.welcome.granted = rd32(&r);
		break;
	case RELAY_METADATA:
		m->u.meta.data = r.p;
		m->u.meta.len = plen;
		r.off = plen;
		if (memchr(r.p, 0, plen))
			what = "metadata with a NUL byte";
		break;
	case RELAY_STREAM:
		m->u.stream.handle = rd32(&r);
		m->u.stream.cpu = rd32(&r);
		m->u.stream.class_id = rd64(&r);
		m->u.stream.name = rdstr(&r);
		if (!r.bad && (!tr_relay_name_ok(m->u.stream.name) ||
			       strcmp(m->u.stream.name, "metadata") == 0 ||
			       strcmp(m->u.stream.name, "index") == 0))
			what = "a stream file name that is not a plain file name";
		else if (!r.bad && strlen(m->u.stream.name) > RELAY_STREAM_NAME_MAX)
			what = "a stream file name longer than 251 bytes (its index, NAME.idx, "
			       "would not be a file name)";
		break;
	case RELAY_PACKET: {
		struct ctf_index *ix = &m->u.packet.ix;
		m->u.packet.handle = rd32(&r);
		(void)rd32(&r);
		ix->packet_size = rd64(&r);
		ix->content_size = rd64(&r);
		ix->ts_begin = rd64(&r);
		ix->ts_end = rd64(&r);
		ix->events_discarded = rd64(&r);
		ix->stream_id = rd64(&r);
		ix->instance_id = rd64(&r);
		ix->seq = rd64(&r);
		if (r.bad)
			break;
		m->u.packet.data = r.p + r.off;
		m->u.packet.size = plen - r.off;
		r.off = plen;
		if (ix->packet_size != (uint64_t)m->u.packet.size * 8 || m->u.packet.size == 0)
			what = "a packet whose packet_size is not its length";
		else if (ix->content_size > ix->packet_size)
			what = "a packet whose content_size exceeds its packet_size";
		else if (ix->ts_end < ix->ts_begin)
			what = "a packet that ends before it begins";
		break;
	}
	case RELAY_BEACON:
		m->u.beacon.handle = rd32(&r);
		(void)rd32(&r);
		m->u.beacon.ts = rd64(&r);
		break;
	case RELAY_CLOSE:
		break;
	case RELAY_JOIN:
		m->u.join.version = rd32(&r);
		m->u.join.flags = rd32(&r);
		m->u.join.t = rd64(&r);
		m->u.join.host = rdstr(&r);
		if (!r.bad && (!tr_relay_name_ok(m->u.join.host) ||
			       strlen(m->u.join.host) > RELAY_HOST_MAX))
			what = "a host name that is not a plain file name of at most 63 bytes";
		break;
	case RELAY_PING:
	case RELAY_PONG:
		m->u.ping.t_relay = rd64(&r);
		if (m->type == RELAY_PING)
			break;
		m->u.ping.t_agent = rd64(&r);
		m->u.ping.buffers = rd64(&r);
		m->u.ping.discarded = rd64(&r);
		m->u.ping.sessions = rdstr(&r);
		break;
	case RELAY_CTL:
	case RELAY_CLUSTER:
		if (m->type == RELAY_CTL)
			m->u.ctl.id = rd32(&r);
		m->u.ctl.argc = rd32(&r);
		if (m->type == RELAY_CLUSTER) {
			m->u.ctl.timeout_ms = rd32(&r);
			m->u.ctl.glob = rdstr(&r);
		}
		if (r.bad)
			break;
		m->u.ctl.args = (const char *)r.p + r.off;
		for (uint32_t i = 0; i < m->u.ctl.argc && !r.bad; i++)
			rdstr(&r);
		if (!r.bad && (m->u.ctl.argc == 0 || m->u.ctl.argc > RELAY_CTL_ARGS_MAX))
			what = "no arguments, or more than 256";
		break;
	case RELAY_CTL_REPLY:
		m->u.reply.id = rd32(&r);
		m->u.reply.status = (int32_t)rd32(&r);
		m->u.reply.t_apply = rd64(&r);
		m->u.reply.t_done = rd64(&r);
		m->u.reply.out = rdstr(&r);
		m->u.reply.err = rdstr(&r);
		break;
	case RELAY_NODE:
		m->u.node.state = rd32(&r);
		m->u.node.flags = rd32(&r);
		m->u.node.status = (int32_t)rd32(&r);
		(void)rd32(&r);
		m->u.node.since = rd64(&r);
		m->u.node.offset_ns = (int64_t)rd64(&r);
		m->u.node.rtt_ns = rd64(&r);
		m->u.node.t_apply = rd64(&r);
		m->u.node.t_done = rd64(&r);
		m->u.node.buffers = rd64(&r);
		m->u.node.discarded = rd64(&r);
		m->u.node.name = rdstr(&r);
		m->u.node.addr = rdstr(&r);
		m->u.node.sessions = rdstr(&r);
		m->u.node.out = rdstr(&r);
		m->u.node.err = rdstr(&r);
		break;
	case RELAY_CHALLENGE:
		m->u.challenge.version = rd32(&r);
		m->u.challenge.nonce = rdbytes(&r, 32);
		break;
	case RELAY_AUTH:
		m->u.auth.kind = rd32(&r);
		m->u.auth.nonce = rdbytes(&r, 32);
		m->u.auth.mac = rdbytes(&r, 32);
		break;
	case RELAY_PROOF:
		m->u.proof.mac = rdbytes(&r, RELAY_PROOF_LEN);
		break;
	case RELAY_RESUMED:
		m->u.resumed.meta_len = rd64(&r);
		break;
	case RELAY_PROGRESS:
		m->u.progress.written = rd64(&r);
		break;
	case RELAY_DEMAND:
		m->u.demand.ms = rd32(&r);
		break;
	case RELAY_HORIZON:
		m->u.horizon.ts = rd64(&r);
		break;
	}
	if (r.bad)
		return tr_seterr(err, errlen, EPROTO, "%s of %u bytes: too short for its fields", name,
			      plen);
	if (what)
		return tr_seterr(err, errlen, EPROTO, "%s: %s", name, what);
	if (r.off != plen)
		return tr_seterr(err, errlen, EPROTO, "%s: %zu bytes after its fields", name,
			      plen - r.off);
	return (ssize_t)(RELAY_HDR_LEN + plen);
}

int tr_net_split_addr(const char *addr, char *host, size_t hostlen, unsigned *port,
		   unsigned def_port)
{
	const char *colon, *h = addr;
	size_t hl;
	if (!addr || !*addr)
		return -EINVAL;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (!close || close == addr + 1)
			return -EINVAL;
		h = addr + 1;
		hl = (size_t)(close - h);
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] && !colon)
			return -EINVAL;
	} else {
		colon = strrchr(addr, ':');
		if (colon && strchr(addr, ':') != colon)
			colon = NULL;	/* a bare IPv6 address: no port */
		hl = colon ? (size_t)(colon - addr) : strlen(addr);
	}
	if (hl == 0 || hl >= hostlen)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	*port = def_port;
	if (colon) {
		char *end;
		if (colon[1] < '0' || colon[1] > '9')
			return -EINVAL;	/* strtoul would take spaces and signs */
		unsigned long v = strtoul(colon + 1, &end, 10);
		if (*end || v == 0 || v > 65535)
			return -EINVAL;
		*port = (unsigned)v;
	}
	return 0;
}
