/* SPDX-License-Identifier: MIT */
/*
 * lib/net/relay-proto.h - the data protocol between a producer (a trace
 * writer of trawl record, the agent, the kernel recorder) and `trawl relay`
 * (docs/relay.md).
 *
 * One TCP connection carries one CTF trace. Every message is an 8-byte
 * header {u32 type, u32 length of the payload}, then the payload; all
 * integers little-endian (both ends are trawl, and the packets inside are
 * little-endian CTF). Strings are NUL-terminated inside the payload. Every
 * length and offset is checked before a field is read (tr_relay_msg_parse).
 *
 * Producer (P) and relay (R):
 *   P->R HELLO      version, flags, live timer, trace UUID, then the
 *                   session name, the host name and the trace name
 *                   ("kernel", "ust", ...): the trace is written to
 *                   OUTPUT/SESSION/HOST/TRACE/
 *   R->P WELCOME    status (0 or -errno) and a message; on an error the
 *                   relay closes the connection
 *   P->R METADATA   TSDL text to append to the trace's metadata (the first
 *                   one starts with the CTF 1.8 header; later ones only
 *                   declare new stream and event classes)
 *   P->R STREAM     a stream: the producer's handle, cpu, stream class id,
 *                   file name
 *   P->R PACKET     a stream's next packet: handle, its index entry, bytes
 *   P->R BEACON     a stream's handle and a time: no event of the stream
 *                   before it is still to come (live viewers move past
 *                   idle streams)
 *   P->R CLOSE      the trace is complete
 *   R->P ACK        reply to CLOSE: status once everything is written
 *                   (to the page cache: no fsync)
 *
 * Resumable producers (docs/relay.md, "Cut off: reconnect and resume"):
 * HELLO's flag RELAY_HELLO_RESUME says the producer keeps what it sent
 * until the relay has written it, and may come back for the same trace:
 *   R->P RESUMED    after a WELCOME of 0 to such a HELLO: the bytes of
 *                   metadata the relay holds for the trace (0: a new one)
 *   R->P PROGRESS   the messages after HELLO the relay has written so far
 *                   (cumulative, on this connection): the producer forgets
 *                   them
 * A HELLO with the flag for a trace the relay holds (on disk, or whose
 * connection is still open) is a resume when its UUID is the trace's; the
 * producer then announces its streams again (a STREAM the relay has is
 * taken again) and sends again what it was not told was written (a
 * PACKET the relay has, by packet_seq_num, is skipped).
 */
#ifndef TRAWL_NET_RELAY_PROTO_H
#define TRAWL_NET_RELAY_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"
#include "trawl/relay.h"
#include "ctf/packet.h"	/* struct ctf_index */

#define RELAY_VERSION 1
#define RELAY_DATA_PORT TRAWL_RELAY_DATA_PORT	/* default data port of trawl relay */
#define RELAY_HDR_LEN 8
#define RELAY_INDEX_LEN 72		/* handle, reserved, 8 x u64 */
#define RELAY_MSG_MAX ((64u << 20) + RELAY_INDEX_LEN)	/* largest payload */
#define RELAY_NAME_MAX 255		/* session, host and trace names */
#define RELAY_STREAM_NAME_MAX (RELAY_NAME_MAX - 4)	/* and NAME.idx fits */
#define RELAY_HOST_MAX 63		/* host names (the live protocol's 64 bytes) */
#define RELAY_STREAMS_MAX 4096		/* streams in one trace */
#define RELAY_METADATA_MAX (64u << 20)	/* metadata bytes of one trace */
#define RELAY_SEND_TIMEOUT_MS 10000	/* a send that waits longer fails */
#define RELAY_HELLO_RESUME 1u		/* HELLO flag: a resumable producer */

#define RELAY_TYPES(X)		\
	X(HELLO, 1)		\
	X(WELCOME, 2)		\
	X(METADATA, 3)		\
	X(STREAM, 4)		\
	X(PACKET, 5)		\
	X(BEACON, 6)		\
	X(CLOSE, 7)		\
	X(ACK, 8)		\
	X(RESUMED, 9)		\
	X(PROGRESS, 10)

enum relay_type {
#define RELAY_ENUM(n, v) RELAY_##n = v,
	RELAY_TYPES(RELAY_ENUM)
#undef RELAY_ENUM
};

/* A parsed message: pointers into the buffer given to tr_relay_msg_parse. */
struct relay_msg {
	enum relay_type type;
	uint32_t len;			/* payload bytes */
	union {
		struct {
			uint32_t version, flags;
			uint64_t live_timer_us;
			const uint8_t *uuid;	/* 16 bytes */
			const char *session, *host, *trace;
		} hello;
		struct {
			int32_t status;
			const char *msg;
		} welcome, ack;
		struct {
			const uint8_t *data;
			size_t len;
		} meta;
		struct {
			uint32_t handle, cpu;
			uint64_t class_id;
			const char *name;
		} stream;
		struct {
			uint32_t handle;
			struct ctf_index ix;
			const uint8_t *data;
			size_t size;		/* bytes: ix.packet_size / 8 */
		} packet;
		struct {
			uint32_t handle;
			uint64_t ts;
		} beacon;
		struct {
			uint64_t meta_len;
		} resumed;
		struct {
			uint64_t written;	/* messages after HELLO */
		} progress;
	} u;
};

/* "HELLO", ...; "?" for an unknown type. */
TRAWL_HIDDEN const char *tr_relay_type_name(uint32_t type);

/*
 * Parses the message at the start of buf (len bytes). Returns its size
 * (header + payload) with *m filled in, 0 when more bytes are needed (a
 * message is never larger than RELAY_HDR_LEN + RELAY_MSG_MAX), or -EPROTO
 * / -EMSGSIZE with a message in err: an unknown type, a payload too short
 * for its fields or too long, a string without its NUL, a name with
 * characters other than [A-Za-z0-9._-] or starting with '.' or '-' (a
 * stream name also "metadata", "index", or longer than
 * RELAY_STREAM_NAME_MAX), a packet whose sizes disagree with its bytes.
 */
TRAWL_HIDDEN ssize_t tr_relay_msg_parse(const uint8_t *buf, size_t len, struct relay_msg *m,
				     char *err, size_t errlen);

/* A safe file or directory name: 1..RELAY_NAME_MAX of [A-Za-z0-9._-], not
 * starting with '.' or '-'. The one check of session, host, trace and
 * stream names, at the relay and at the producer. */
TRAWL_HIDDEN bool tr_relay_name_ok(const char *s);

/* Writes the 8-byte header. */
static inline void relay_put_hdr(uint8_t *out, enum relay_type type, uint32_t len)
{
	put_le32(out, (uint32_t)type);
	put_le32(out + 4, len);
}

/* Writes a PACKET's fixed part (RELAY_INDEX_LEN bytes) after its header. */
TRAWL_HIDDEN void tr_relay_put_index(uint8_t *out, uint32_t handle, const struct ctf_index *ix);

/* The producer's side is lib/net/relay-out.c: trawl_relay_dest_new()
 * (trawl/relay.h), a destination of the CTF writer (lib/ctf/dest.h). */

/* Splits "HOST", "HOST:PORT" or "[V6]:PORT" into host and port (default
 * def_port). 0 or -EINVAL. */
TRAWL_HIDDEN int tr_net_split_addr(const char *addr, char *host, size_t hostlen,
				unsigned *port, unsigned def_port);

#endif
