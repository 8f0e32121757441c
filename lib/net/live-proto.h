/* SPDX-License-Identifier: MIT */
/*
 * lib/net/live-proto.h - the LTTng live viewer protocol (2.4), as `trawl
 * relay` serves it to babeltrace2's lttng-live source and to any viewer
 * written for lttng-relayd (docs/relay.md).
 *
 * Requests: a 16-byte header {u64 data_size, u32 cmd, u32 cmd_version},
 * then data_size bytes. Replies: a fixed struct per command, no header,
 * then for some a variable part. Every integer big-endian; strings are
 * NUL-padded fixed arrays. Strictly request/response: the viewer sends one
 * request and waits for its reply.
 */
#ifndef TRAWL_NET_LIVE_PROTO_H
#define TRAWL_NET_LIVE_PROTO_H

#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

#define LIVE_PORT 5344
#define LIVE_MAJOR 2
#define LIVE_MINOR 4
#define LIVE_REQ_HDR 16
#define LIVE_REQ_MAX 128		/* the largest request payload we take */
#define LIVE_CONNECT_COMMAND 1		/* CONNECT's type: a command connection */

#define LIVE_HOST_MAX 64		/* char hostname[64] */
#define LIVE_NAME_MAX 255		/* char session_name[255], channel[255] */
#define LIVE_PATH_MAX 4096		/* char path_name[4096] */
#define LIVE_SESSION_LEN (8 + 4 + 4 + 4 + LIVE_HOST_MAX + LIVE_NAME_MAX)	/* 339 */
#define LIVE_STREAM_LEN (8 + 8 + 4 + LIVE_PATH_MAX + LIVE_NAME_MAX)	/* 4371 */
#define LIVE_INDEX_LEN 64
#define LIVE_PACKET_MAX (64u << 20)	/* the largest GET_PACKET we serve at once
					 * (babeltrace2 asks 256 KiB at most) */

#define LIVE_CMDS(X)			\
	X(CONNECT, 1, 20)		\
	X(LIST_SESSIONS, 2, 0)		\
	X(ATTACH_SESSION, 3, 20)	\
	X(GET_NEXT_INDEX, 4, 8)		\
	X(GET_PACKET, 5, 20)		\
	X(GET_METADATA, 6, 8)		\
	X(GET_NEW_STREAMS, 7, 8)	\
	X(CREATE_SESSION, 8, 0)		\
	X(DETACH_SESSION, 9, 8)		\
	X(TRAWL_CHALLENGE, 0x74720001, 0)	\
	X(TRAWL_AUTH, 0x74720002, 68)

enum live_cmd {
#define LIVE_ENUM(n, v, len) LIVE_##n = v,
	LIVE_CMDS(LIVE_ENUM)
#undef LIVE_ENUM
};

/* Reply statuses. */
enum { LIVE_CREATE_OK = 1, LIVE_CREATE_ERR = 2 };
enum { LIVE_ATTACH_OK = 1, LIVE_ATTACH_ALREADY, LIVE_ATTACH_UNK, LIVE_ATTACH_NOT_LIVE,
       LIVE_ATTACH_SEEK_ERR, LIVE_ATTACH_NO_SESSION };
enum { LIVE_SEEK_BEGINNING = 1, LIVE_SEEK_LAST = 2,
       /* trawl's: from the next packet, whatever the relay's --live-from-now
        * (lttng-relayd refuses it: the viewer asks SEEK_LAST then) */
       LIVE_SEEK_TRAWL_NOW = 3,
       /* trawl's, or'ed with any of the above: a viewer that follows the
        * session at the producers' live timer (an aggregate, a state):
        * the relay holds its requests without a DEMAND (docs/relay.md,
        * "Viewers in no hurry"); lttng-relayd refuses it, and the viewer
        * asks again without it */
       LIVE_SEEK_TRAWL_LAZY = 0x100 };
enum { LIVE_INDEX_OK = 1, LIVE_INDEX_RETRY, LIVE_INDEX_HUP, LIVE_INDEX_ERR,
       LIVE_INDEX_INACTIVE, LIVE_INDEX_EOF /* lttng-relayd's ABI has it; unused */ };
enum { LIVE_FLAG_NEW_METADATA = 1, LIVE_FLAG_NEW_STREAM = 2 };
enum { LIVE_PACKET_OK = 1, LIVE_PACKET_RETRY, LIVE_PACKET_ERR, LIVE_PACKET_EOF };
enum { LIVE_METADATA_OK = 1, LIVE_METADATA_NO_NEW, LIVE_METADATA_ERR };
enum { LIVE_NEW_STREAMS_OK = 1, LIVE_NEW_STREAMS_NO_NEW, LIVE_NEW_STREAMS_ERR,
       LIVE_NEW_STREAMS_HUP };
enum { LIVE_DETACH_OK = 1, LIVE_DETACH_UNK, LIVE_DETACH_ERR };
/*
 * trawl's own commands (not LTTng's), for a relay that authenticates its
 * viewers (docs/auth.md), sent before CONNECT:
 *   TRAWL_CHALLENGE  no payload; reply {u32 status, u32 version, u8
 *                    nonce[32]}: LIVE_AUTH_OK and the relay's nonce, or
 *                    LIVE_AUTH_NONE (this port needs no proof; the rest
 *                    zero)
 *   TRAWL_AUTH       {u32 credential kind (net/auth.h), u8 nonce[32], u8
 *                    mac[32]}; reply {u32 status, char reason[256], u8
 *                    mac[32]}: LIVE_AUTH_OK and the relay's own proof
 *                    (net/auth.h, tr_auth_relay_mac: the same key over the
 *                    viewer's nonce), or LIVE_AUTH_REFUSED and the reason
 *                    (mac zero), then the relay closes the connection
 */
enum { LIVE_AUTH_OK = 1, LIVE_AUTH_NONE, LIVE_AUTH_REFUSED };
#define LIVE_CHALLENGE_REPLY_LEN (4 + 4 + 32)
#define LIVE_AUTH_REPLY_LEN (4 + 256 + 32)

/*
 * trawl's word to a viewer refused as it connects (the relay at its
 * --max-viewers or --max-conns, its descriptor pool full), sent in place
 * of the first reply, whichever the viewer's first request was, then the
 * relay closes: {u32 LIVE_REFUSED, u32 errno, u32 0, u32 0, u32 0, char
 * reason[256]}. As a CONNECT reply its major is 0 (an LTTng viewer says
 * the protocol is not its own); as a TRAWL_CHALLENGE reply its status is
 * LIVE_REFUSED. trawl's viewers print the reason.
 */
#define LIVE_REFUSED 0x74725246u	/* "trRF" */
#define LIVE_REFUSED_LEN (20 + 256)
static inline size_t tr_live_refusal(uint8_t b[LIVE_REFUSED_LEN], int e, const char *why)
{
	memset(b, 0, LIVE_REFUSED_LEN);
	put_be32(b, LIVE_REFUSED);
	put_be32(b + 4, (uint32_t)e);
	size_t l = strnlen(why, 255);
	memcpy(b + 20, why, l);
	return LIVE_REFUSED_LEN;
}

/* A parsed request. */
struct live_req {
	enum live_cmd cmd;
	union {
		struct { uint64_t viewer_session_id; uint32_t major, minor, type; } connect;
		struct { uint64_t session_id, offset; uint32_t seek; } attach;
		struct { uint64_t stream_id, offset; uint32_t len; } packet;
		struct { uint32_t kind; const uint8_t *nonce, *mac; } auth;	/* into
					 * the parsed buffer */
		uint64_t id;		/* GET_NEXT_INDEX, GET_METADATA: a stream;
					 * GET_NEW_STREAMS, DETACH: a session */
	} u;
};

/* "CONNECT", ...; "?" for an unknown command. */
TRAWL_HIDDEN const char *tr_live_cmd_name(uint32_t cmd);

/*
 * Parses the request at the start of buf (len bytes): its size (header +
 * payload) with *r filled in, 0 when more bytes are needed, or -EPROTO with
 * a message in err (an unknown command, a payload shorter than the command
 * needs or longer than LIVE_REQ_MAX). Longer payloads than a command needs
 * are accepted (later protocol minors add fields) and their tail ignored.
 */
TRAWL_HIDDEN ssize_t tr_live_req_parse(const uint8_t *buf, size_t len, struct live_req *r,
				    char *err, size_t errlen);

/* Fills a NUL-padded fixed array of n bytes with s (truncated, always
 * NUL-terminated). */
TRAWL_HIDDEN void tr_live_put_str(uint8_t *out, size_t n, const char *s);

#endif
