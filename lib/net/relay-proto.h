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
 * A relay that authenticates its peers (docs/auth.md) answers a HELLO
 * whose flags have RELAY_HELLO_AUTH with a challenge instead of WELCOME
 * (a HELLO without it gets a WELCOME refusing it, with the reason):
 *   R->P CHALLENGE  version (1), the relay's nonce (32 bytes)
 *   P->R AUTH       the credential's kind (net/auth.h), the producer's
 *                   nonce (32 bytes), the MAC (32 bytes) over both nonces
 *                   and the HELLO's payload
 *   R->P PROOF      once the AUTH is good: the relay's MAC (32 bytes) over
 *                   the same, under its own label (net/auth.h,
 *                   tr_auth_relay_mac); then WELCOME as above. A producer
 *                   with a credential takes no WELCOME of 0 without it
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
 * Live demand (docs/relay.md, "Live latency"): HELLO's flag
 * RELAY_HELLO_DEMAND says the producer reads
 *   R->P DEMAND     a live viewer waits on the trace's session: for the
 *                   next ms milliseconds, send new events as they come
 *                   (the producer's fast cut) instead of at the live timer
 * at any time after the WELCOME; the relay sends it when it holds a
 * viewer's request, at most once per half of ms while the viewer keeps
 * asking. A producer without the flag is never sent one.
 *
 * Producers that count what a cut costs (docs/relay.md, "Cut off by the
 * relay"): HELLO's flag RELAY_HELLO_COUNT asks the relay for
 *   R->P PROGRESS   as for a resumable producer (above), and
 *   R->P ACK        with an error (the relay cut the trace off: the disk
 *                   full, a quota, its buffers, its descriptors): after the
 *                   reason's NUL, a u64, the messages after HELLO it wrote
 *                   on this connection (every one before the one it
 *                   failed at); so the producer knows which packets are
 *                   stored and counts the events of the others as
 *                   discarded.
 * Streams that come as threads do (the agent's, one per thread): HELLO's
 * flag RELAY_HELLO_HORIZON says the producer sends, once the relay's
 * WELCOME (status 0) granted it (after the message's NUL, a u32 with the
 * flag set again; a relay that does not know it grants nothing),
 *   P->R HORIZON    u64 ts: every stream of the trace with an event
 *                   before ts is announced (a later STREAM begins at or
 *                   after ts)
 *   R->P HORIZON    u64 ts (the relay's): a viewer waits past it, say
 *                   a newer one as soon as you can
 * and the relay gives live viewers of the session nothing past the
 * horizon of any of its open traces that sends them: a viewer shown
 * another trace's events past ts would meet the new stream's older
 * events too late (babeltrace2 stops at such a "late" message;
 * docs/relay.md, "Streams that join").
 * Compatibility: the protocol's version stays 1; a new message, a longer
 * message or a new behaviour is only for a peer that asked by a HELLO
 * flag (a relay ignores flags it does not know). So an older producer
 * gets the ACK it parses (no count), and a producer whose relay is older
 * gets no count and says its discarded events are not known.
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
#define RELAY_HELLO_AUTH 1u		/* HELLO flag: the producer holds a credential */
#define RELAY_AUTH_VERSION 1		/* CHALLENGE's version */
#define RELAY_CHALLENGE_LEN (4 + 32)	/* version, nonce */
#define RELAY_AUTH_LEN (4 + 32 + 32)	/* kind, nonce, MAC */
#define RELAY_PROOF_LEN 32		/* the relay's MAC */
#define RELAY_HELLO_RESUME 2u		/* HELLO flag: a resumable producer */
#define RELAY_HELLO_DEMAND 4u		/* HELLO flag: the producer reads DEMAND */
#define RELAY_DEMAND_LEN 4		/* DEMAND's payload: u32 ms */
#define RELAY_HORIZON_LEN 8		/* HORIZON's payload: u64 ts */
#define RELAY_HELLO_COUNT 8u		/* HELLO flag: PROGRESS, and a cut's ACK says
					 * the messages written (above) */
#define RELAY_HELLO_HORIZON 16u		/* HELLO flag: the producer sends HORIZON
					 * once the WELCOME grants it (above) */

#define RELAY_TYPES(X)		\
	X(HELLO, 1)		\
	X(WELCOME, 2)		\
	X(METADATA, 3)		\
	X(STREAM, 4)		\
	X(PACKET, 5)		\
	X(BEACON, 6)		\
	X(CLOSE, 7)		\
	X(ACK, 8)		\
	X(CHALLENGE, 9)		\
	X(AUTH, 10)		\
	X(RESUMED, 11)		\
	X(PROGRESS, 12)		\
	X(PROOF, 13)		\
	X(DEMAND, 14)		\
	X(HORIZON, 15)		\
	RELAY_CLUSTER_TYPES(X)

/*
 * Cluster control (docs/cluster.md), numbered apart so that other
 * additions to the data protocol do not collide with them. An agent (A)
 * joins the relay on the data port, a control client (C, `trawl cluster`)
 * talks to the relay on its Unix control socket, the relay (R) forwards:
 *   A->R JOIN         version, flags, the agent's CLOCK_MONOTONIC (ns),
 *                     its host name; R->A WELCOME (status, reason); at a
 *                     relay with a secret, CHALLENGE and AUTH between them
 *                     as for a HELLO (flag RELAY_JOIN_AUTH, below)
 *   R->A PING         the relay's CLOCK_MONOTONIC (ns) at send
 *   A->R PONG         that time, the agent's clock when it answered, its
 *                     buffers in use, events discarded, sessions ("a:state,...")
 *   R->A CTL          a request id and argv: an agent verb (docs/agent.md)
 *   A->R CTL_REPLY    the id, the verb's exit status, the agent's clock when
 *                     the verb ran and when it answered, its output, errors
 *   C->R CLUSTER      argc, a timeout (ms), a glob of node names, argv ("nodes" or a verb)
 *   R->C NODE         one node: its state and figures, and its answer
 *   R->C ACK          the end of the answer (status 0, or 1 when a node
 *                     failed or was not reached)
 */
#define RELAY_CLUSTER_TYPES(X)	\
	X(JOIN, 32)		\
	X(PING, 33)		\
	X(PONG, 34)		\
	X(CTL, 35)		\
	X(CTL_REPLY, 36)	\
	X(CLUSTER, 37)		\
	X(NODE, 38)

#define RELAY_JOIN_AUTH 1u		/* JOIN flag: the agent holds a credential; a
					 * relay with a secret answers CHALLENGE, the
					 * agent AUTH (its MAC covering the JOIN), as
					 * for a HELLO (docs/auth.md) */
#define RELAY_CTL_ARGS_MAX 256		/* argv of one CTL or CLUSTER */
#define RELAY_JOIN_MAX 1024		/* a JOIN before it is welcome */

/* A node's state in NODE */
enum { RELAY_NODE_UP = 0, RELAY_NODE_DOWN = 1, RELAY_NODE_UNKNOWN = 2 };
/* NODE flags */
#define RELAY_NODE_OFFSET 1u		/* offset_ns is estimated */
#define RELAY_NODE_ANSWER 2u		/* status, t_apply, t_done, out, err hold an answer */

enum relay_type {
#define RELAY_ENUM(n, v) RELAY_##n = v,
	RELAY_TYPES(RELAY_ENUM)
#undef RELAY_ENUM
};

/* A parsed message: pointers into the buffer given to tr_relay_msg_parse. */
struct relay_msg {
	enum relay_type type;
	uint32_t len;			/* payload bytes */
	const uint8_t *payload;		/* its len bytes (after the header) */
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
			bool counted;		/* ACK: written is there */
			uint64_t written;	/* messages after HELLO written */
			uint32_t granted;	/* WELCOME: the HELLO flags granted */
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
			uint32_t version, flags;
			uint64_t t;
			const char *host;
		} join;
		struct {			/* PING and PONG */
			uint64_t t_relay, t_agent, buffers, discarded;
			const char *sessions;
		} ping;
		struct {			/* CTL and CLUSTER */
			uint32_t id, argc;
			uint32_t timeout_ms;	/* CLUSTER: for the answers */
			const char *glob;	/* CLUSTER */
			const char *args;	/* argc NUL-terminated strings */
		} ctl;
		struct {
			uint32_t id;
			int32_t status;
			uint64_t t_apply, t_done;
			const char *out, *err;
		} reply;
		struct {
			uint32_t state, flags;
			int32_t status;
			uint64_t since, rtt_ns, t_apply, t_done, buffers, discarded;
			int64_t offset_ns;
			const char *name, *addr, *sessions, *out, *err;
		} node;
		struct {
			uint32_t version;
			const uint8_t *nonce;	/* 32 bytes */
		} challenge;
		struct {
			uint32_t kind;
			const uint8_t *nonce, *mac;	/* 32 bytes each */
		} auth;
		struct {
			const uint8_t *mac;	/* 32 bytes */
		} proof;
		struct {
			uint64_t meta_len;
		} resumed;
		struct {
			uint64_t written;	/* messages after HELLO */
		} progress;
		struct {
			uint32_t ms;		/* how long the demand lasts */
		} demand;
		struct {
			uint64_t ts;
		} horizon;
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
