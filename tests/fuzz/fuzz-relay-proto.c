/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the relay's data protocol parser (lib/net/relay-proto.h) on
 * arbitrary bytes, consumed the way `trawl relay` consumes a producer's
 * input (lib/relay/relay.c): message after message until the parser asks
 * for more bytes or refuses one. The input is copied to a buffer of its
 * exact size (ASan sees overreads). Invariants (abort otherwise):
 *  - a refusal is -EPROTO or -EMSGSIZE with a message;
 *  - a message is at least its header and never longer than what is left,
 *    its payload length is what it says, and every proper prefix of it asks
 *    for more bytes;
 *  - the same message alone in a buffer of its exact size parses the same
 *    (the parser never looks past the message);
 *  - strings point inside the payload and end there with a NUL; uuid and
 *    packet data lie inside the payload; names are plain file names;
 *    METADATA has no NUL; a packet's sizes agree with its bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/relay-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const void *p, size_t n, const uint8_t *lo, const uint8_t *hi)
{
	const uint8_t *q = p;
	if (!q || q < lo || q > hi || (size_t)(hi - q) < n)
		abort();
}

/* a NUL-terminated string inside [lo, hi) */
static void str_inside(const char *s, const uint8_t *lo, const uint8_t *hi)
{
	inside(s, 1, lo, hi);
	if (!memchr(s, 0, (size_t)(hi - (const uint8_t *)s)))
		abort();
}

static void check_msg(const struct relay_msg *m, const uint8_t *msg, size_t n)
{
	const uint8_t *lo = msg + RELAY_HDR_LEN, *hi = msg + n;
	if (m->len != n - RELAY_HDR_LEN || m->len != get_le32(msg + 4) ||
	    (uint32_t)m->type != get_le32(msg) || m->len > RELAY_MSG_MAX || m->payload != lo)
		abort();
	switch (m->type) {
	case RELAY_HELLO:
		if (m->len < 32 + 6)
			abort();
		inside(m->u.hello.uuid, 16, lo, hi);
		str_inside(m->u.hello.session, lo, hi);
		str_inside(m->u.hello.host, lo, hi);
		str_inside(m->u.hello.trace, lo, hi);
		if (!tr_relay_name_ok(m->u.hello.session) || !tr_relay_name_ok(m->u.hello.host) ||
		    !tr_relay_name_ok(m->u.hello.trace))
			abort();
		/* the three strings end the payload */
		if ((const uint8_t *)m->u.hello.trace + strlen(m->u.hello.trace) + 1 != hi)
			abort();
		break;
	case RELAY_WELCOME:
	case RELAY_ACK:
		str_inside(m->u.welcome.msg, lo, hi);
		if (m->u.welcome.status != (int32_t)get_le32(lo) ||
		    (const uint8_t *)m->u.welcome.msg + strlen(m->u.welcome.msg) + 1 != hi)
			abort();
		break;
	case RELAY_METADATA:
		if (m->u.meta.data != lo || m->u.meta.len != m->len)
			abort();
		if (m->u.meta.len)
			inside(m->u.meta.data, m->u.meta.len, lo, hi);
		if (memchr(m->u.meta.data, 0, m->u.meta.len))
			abort();
		break;
	case RELAY_STREAM:
		str_inside(m->u.stream.name, lo, hi);
		if (!tr_relay_name_ok(m->u.stream.name) || !strcmp(m->u.stream.name, "metadata") ||
		    !strcmp(m->u.stream.name, "index") ||
		    (const uint8_t *)m->u.stream.name + strlen(m->u.stream.name) + 1 != hi)
			abort();
		break;
	case RELAY_PACKET: {
		const struct ctf_index *ix = &m->u.packet.ix;
		if (m->len < RELAY_INDEX_LEN + 1 || m->u.packet.size == 0 ||
		    m->u.packet.size != m->len - RELAY_INDEX_LEN)
			abort();
		inside(m->u.packet.data, m->u.packet.size, lo, hi);
		if (m->u.packet.data + m->u.packet.size != hi)
			abort();
		if (ix->packet_size != (uint64_t)m->u.packet.size * 8 ||
		    ix->content_size > ix->packet_size || ix->ts_end < ix->ts_begin)
			abort();
		/* the index as tr_relay_put_index would write it again */
		uint8_t again[RELAY_INDEX_LEN];
		tr_relay_put_index(again, m->u.packet.handle, ix);
		if (memcmp(again, lo, 4) || memcmp(again + 8, lo + 8, RELAY_INDEX_LEN - 8))
			abort();
		break;
	}
	case RELAY_BEACON:
		if (m->len != 16 || m->u.beacon.handle != get_le32(lo) ||
		    m->u.beacon.ts != get_le64(lo + 8))
			abort();
		break;
	case RELAY_CLOSE:
		if (m->len != 0)
			abort();
		break;
	case RELAY_JOIN:
		str_inside(m->u.join.host, lo, hi);
		if (!tr_relay_name_ok(m->u.join.host) || strlen(m->u.join.host) > RELAY_HOST_MAX ||
		    (const uint8_t *)m->u.join.host + strlen(m->u.join.host) + 1 != hi)
			abort();
		break;
	case RELAY_PING:
		if (m->len != 8)
			abort();
		break;
	case RELAY_PONG:
		str_inside(m->u.ping.sessions, lo, hi);
		if ((const uint8_t *)m->u.ping.sessions + strlen(m->u.ping.sessions) + 1 != hi)
			abort();
		break;
	case RELAY_CTL:
	case RELAY_CLUSTER: {
		if (m->u.ctl.argc == 0 || m->u.ctl.argc > RELAY_CTL_ARGS_MAX)
			abort();
		if (m->type == RELAY_CLUSTER)
			str_inside(m->u.ctl.glob, lo, hi);
		/* argc strings, the last ending the payload */
		const char *p = m->u.ctl.args;
		for (uint32_t i = 0; i < m->u.ctl.argc; i++) {
			str_inside(p, lo, hi);
			p += strlen(p) + 1;
		}
		if ((const uint8_t *)p != hi)
			abort();
		break;
	}
	case RELAY_CTL_REPLY:
		str_inside(m->u.reply.out, lo, hi);
		str_inside(m->u.reply.err, lo, hi);
		if ((const uint8_t *)m->u.reply.err + strlen(m->u.reply.err) + 1 != hi)
			abort();
		break;
	case RELAY_NODE:
		str_inside(m->u.node.name, lo, hi);
		str_inside(m->u.node.addr, lo, hi);
		str_inside(m->u.node.sessions, lo, hi);
		str_inside(m->u.node.out, lo, hi);
		str_inside(m->u.node.err, lo, hi);
		if ((const uint8_t *)m->u.node.err + strlen(m->u.node.err) + 1 != hi)
			abort();
		break;
	case RELAY_CHALLENGE:
		if (m->len != RELAY_CHALLENGE_LEN || m->u.challenge.version != get_le32(lo) ||
		    m->u.challenge.nonce != lo + 4)
			abort();
		break;
	case RELAY_AUTH:
		if (m->len != RELAY_AUTH_LEN || m->u.auth.kind != get_le32(lo) ||
		    m->u.auth.nonce != lo + 4 || m->u.auth.mac != lo + 36)
			abort();
		break;
	case RELAY_PROOF:
		if (m->len != RELAY_PROOF_LEN || m->u.proof.mac != lo)
			abort();
		break;
	case RELAY_RESUMED:
		if (m->len != 8 || m->u.resumed.meta_len != get_le64(lo))
			abort();
		break;
	case RELAY_PROGRESS:
		if (m->len != 8 || m->u.progress.written != get_le64(lo))
			abort();
		break;
	default:
		abort();
	}
	if (tr_relay_type_name(m->type)[0] == '?')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	size_t off = 0;
	while (off < size) {
		struct relay_msg m;
		char err[512];
		err[0] = 0;
		size_t left = size - off;
		ssize_t n = tr_relay_msg_parse(buf + off, left, &m, err, sizeof(err));
		if (n < 0) {
			if ((n != -EPROTO && n != -EMSGSIZE) || !err[0] ||
			    !memchr(err, 0, sizeof(err)))
				abort();
			break;
		}
		if (n == 0) {
			/* only a header or a message still incomplete */
			if (left >= RELAY_HDR_LEN &&
			    (uint64_t)get_le32(buf + off + 4) + RELAY_HDR_LEN <= left)
				abort();
			break;
		}
		if (n < RELAY_HDR_LEN || (size_t)n > left)
			abort();
		check_msg(&m, buf + off, (size_t)n);

		/* the message alone, in a buffer of its exact size: the same */
		uint8_t *one = malloc((size_t)n);
		if (!one)
			break;
		memcpy(one, buf + off, (size_t)n);
		struct relay_msg m2;
		ssize_t n2 = tr_relay_msg_parse(one, (size_t)n, &m2, err, sizeof(err));
		if (n2 != n || m2.type != m.type || m2.len != m.len)
			abort();
		check_msg(&m2, one, (size_t)n);
		/* a proper prefix asks for more (the header and one byte short) */
		if (tr_relay_msg_parse(one, (size_t)n - 1, &m2, err, sizeof(err)) != 0 ||
		    tr_relay_msg_parse(one, n > RELAY_HDR_LEN ? RELAY_HDR_LEN : (size_t)n - 1, &m2,
				    err, sizeof(err)) != 0)
			abort();
		free(one);
		off += (size_t)n;
	}
	free(buf);
	return 0;
}
