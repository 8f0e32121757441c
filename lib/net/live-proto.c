/* SPDX-License-Identifier: MIT */
/* lib/net/live-proto.c - parsing LTTng live viewer requests (live-proto.h). */
#include <errno.h>
#include <string.h>

#include "net/live-proto.h"

const char *tr_live_cmd_name(uint32_t cmd)
{
	switch (cmd) {
#define LIVE_NAME(n, v, len) case v: return #n;
	LIVE_CMDS(LIVE_NAME)
#undef LIVE_NAME
	}
	return "?";
}

/* The payload a command needs, or -1 for an unknown one. */
static int need_len(uint32_t cmd)
{
	switch (cmd) {
#define LIVE_LEN(n, v, len) case v: return len;
	LIVE_CMDS(LIVE_LEN)
#undef LIVE_LEN
	}
	return -1;
}

ssize_t tr_live_req_parse(const uint8_t *buf, size_t len, struct live_req *r, char *err,
		       size_t errlen)
{
	if (len < LIVE_REQ_HDR)
		return 0;
	uint64_t size = get_be64(buf);
	uint32_t cmd = get_be32(buf + 8);
	int need = need_len(cmd);
	if (need < 0)
		return tr_seterr(err, errlen, EPROTO, "unknown command %u", cmd);
	if (size < (uint64_t)need || size > LIVE_REQ_MAX)
		return tr_seterr(err, errlen, EPROTO, "%s with %llu bytes of data (it takes %d)",
			      tr_live_cmd_name(cmd), (unsigned long long)size, need);
	if (len - LIVE_REQ_HDR < size)
		return 0;
	const uint8_t *p = buf + LIVE_REQ_HDR;
	memset(r, 0, sizeof(*r));
	r->cmd = (enum live_cmd)cmd;
	switch (r->cmd) {
	case LIVE_CONNECT:
		r->u.connect.viewer_session_id = get_be64(p);
		r->u.connect.major = get_be32(p + 8);
		r->u.connect.minor = get_be32(p + 12);
		r->u.connect.type = get_be32(p + 16);
		break;
	case LIVE_ATTACH_SESSION:
		r->u.attach.session_id = get_be64(p);
		r->u.attach.offset = get_be64(p + 8);
		r->u.attach.seek = get_be32(p + 16);
		break;
	case LIVE_GET_PACKET:
		r->u.packet.stream_id = get_be64(p);
		r->u.packet.offset = get_be64(p + 8);
		r->u.packet.len = get_be32(p + 16);
		break;
	case LIVE_GET_NEXT_INDEX:
	case LIVE_GET_METADATA:
	case LIVE_GET_NEW_STREAMS:
	case LIVE_DETACH_SESSION:
		r->u.id = get_be64(p);
		break;
	case LIVE_TRAWL_AUTH:
		r->u.auth.kind = get_be32(p);
		r->u.auth.nonce = p + 4;
		r->u.auth.mac = p + 36;
		break;
	case LIVE_LIST_SESSIONS:
	case LIVE_CREATE_SESSION:
	case LIVE_TRAWL_CHALLENGE:
		break;
	}
	return (ssize_t)(LIVE_REQ_HDR + size);
}

void tr_live_put_str(uint8_t *out, size_t n, const char *s)
{
	size_t l = strnlen(s, n - 1);
	memcpy(out, s, l);
	memset(out + l, 0, n - l);
}
