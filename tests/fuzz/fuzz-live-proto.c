/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the LTTng live viewer request parser (lib/net/live-proto.h)
 * on arbitrary bytes, consumed the way `trawl relay` consumes a viewer's
 * input (lib/relay/live.c): request after request until the parser asks
 * for more bytes or refuses one. The input is copied to a buffer of its
 * exact size (ASan sees overreads). Invariants (abort otherwise):
 *  - a refusal is -EPROTO with a message, and only for an unknown command
 *    or a payload size outside [what the command needs, LIVE_REQ_MAX];
 *  - a request is LIVE_REQ_HDR + its data_size bytes: at least 16, at most
 *    16 + LIVE_REQ_MAX and never longer than what is left; its proper
 *    prefixes ask for more;
 *  - the fields are the big-endian integers at their offsets; the same
 *    request alone in a buffer of its exact size parses the same; a
 *    tr_live_put_str of the command's name into a small array stays inside it
 *    and ends with a NUL.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/live-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t need(uint32_t cmd)
{
	switch (cmd) {
	case LIVE_CONNECT: case LIVE_ATTACH_SESSION: case LIVE_GET_PACKET:
		return 20;
	case LIVE_GET_NEXT_INDEX: case LIVE_GET_METADATA: case LIVE_GET_NEW_STREAMS:
	case LIVE_DETACH_SESSION:
		return 8;
	case LIVE_TRAWL_AUTH:
		return 68;
	default:
		return 0;
	}
}

static void check_req(const struct live_req *r, const uint8_t *q, size_t n)
{
	const uint8_t *p = q + LIVE_REQ_HDR;
	if ((uint32_t)r->cmd != get_be32(q + 8) || tr_live_cmd_name(r->cmd)[0] == '?' ||
	    get_be64(q) != n - LIVE_REQ_HDR || n - LIVE_REQ_HDR < need(r->cmd))
		abort();
	switch (r->cmd) {
	case LIVE_CONNECT:
		if (r->u.connect.viewer_session_id != get_be64(p) ||
		    r->u.connect.major != get_be32(p + 8) || r->u.connect.minor != get_be32(p + 12) ||
		    r->u.connect.type != get_be32(p + 16))
			abort();
		break;
	case LIVE_ATTACH_SESSION:
		if (r->u.attach.session_id != get_be64(p) || r->u.attach.offset != get_be64(p + 8) ||
		    r->u.attach.seek != get_be32(p + 16))
			abort();
		break;
	case LIVE_GET_PACKET:
		if (r->u.packet.stream_id != get_be64(p) || r->u.packet.offset != get_be64(p + 8) ||
		    r->u.packet.len != get_be32(p + 16))
			abort();
		break;
	case LIVE_GET_NEXT_INDEX:
	case LIVE_GET_METADATA:
	case LIVE_GET_NEW_STREAMS:
	case LIVE_DETACH_SESSION:
		if (r->u.id != get_be64(p))
			abort();
		break;
	case LIVE_TRAWL_AUTH:
		/* kind, then nonce and MAC: pointers into the request */
		if (r->u.auth.kind != get_be32(p) || r->u.auth.nonce != p + 4 || r->u.auth.mac != p + 36)
			abort();
		break;
	case LIVE_LIST_SESSIONS:
	case LIVE_CREATE_SESSION:
	case LIVE_TRAWL_CHALLENGE:
		break;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	size_t off = 0;
	while (off < size) {
		struct live_req r;
		char err[256];
		err[0] = 0;
		size_t left = size - off;
		ssize_t n = tr_live_req_parse(buf + off, left, &r, err, sizeof(err));
		if (n < 0) {
			if (n != -EPROTO || !err[0] || left < LIVE_REQ_HDR)
				abort();
			/* refused only for a bad command or data size */
			uint32_t cmd = get_be32(buf + off + 8);
			uint64_t ds = get_be64(buf + off);
			if (tr_live_cmd_name(cmd)[0] != '?' && ds >= need(cmd) && ds <= LIVE_REQ_MAX)
				abort();
			break;
		}
		if (n == 0) {
			if (left >= LIVE_REQ_HDR && get_be64(buf + off) <= left - LIVE_REQ_HDR)
				abort();
			break;
		}
		if (n < LIVE_REQ_HDR || n > LIVE_REQ_HDR + LIVE_REQ_MAX || (size_t)n > left)
			abort();
		check_req(&r, buf + off, (size_t)n);

		uint8_t *one = malloc((size_t)n);
		if (!one)
			break;
		memcpy(one, buf + off, (size_t)n);
		struct live_req r2;
		if (tr_live_req_parse(one, (size_t)n, &r2, err, sizeof(err)) != n)
			abort();
		if (r.cmd == LIVE_TRAWL_AUTH) {
			/* pointers into each buffer: the same bytes */
			if (r2.cmd != r.cmd || r2.u.auth.kind != r.u.auth.kind ||
			    r2.u.auth.nonce != one + LIVE_REQ_HDR + 4 ||
			    memcmp(r2.u.auth.nonce, r.u.auth.nonce, 32) != 0 ||
			    memcmp(r2.u.auth.mac, r.u.auth.mac, 32) != 0)
				abort();
		} else if (memcmp(&r, &r2, sizeof(r)) != 0) {
			abort();
		}
		if (tr_live_req_parse(one, (size_t)n - 1, &r2, err, sizeof(err)) != 0)
			abort();
		free(one);

		/* a name into a NUL-padded array sized by the input */
		size_t an = 1 + (buf[off + 12] & 15);
		uint8_t *arr = malloc(an);
		if (arr) {
			tr_live_put_str(arr, an, tr_live_cmd_name(r.cmd));
			if (arr[an - 1] != 0 ||
			    strncmp((char *)arr, tr_live_cmd_name(r.cmd), an - 1) != 0)
				abort();
			free(arr);
		}
		off += (size_t)n;
	}
	free(buf);
	return 0;
}
