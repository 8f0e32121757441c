/* SPDX-License-Identifier: MIT */
/*
 * lib/net/live-client.h - a viewer of the LTTng live protocol 2.4 (the
 * messages are in live-proto.h): what babeltrace2's `-i lttng-live` speaks
 * to lttng-relayd, and what `trawl relay` serves on its live port. The
 * reading pipeline's live source is built on it.
 *
 * One client is one TCP connection, strictly request/response, used by one
 * thread at a time. A viewer:
 *   tr_live_client_connect()            CONNECT (2.4) and CREATE_SESSION
 *   tr_live_client_list()               the relay's live sessions
 *   tr_live_client_attach()             a session, and its streams (a trace's
 *                                    metadata stream with its data streams)
 *   loop: tr_live_client_metadata()     on the metadata streams until 0
 *         tr_live_client_next_index()   per data stream; OK: then
 *         tr_live_client_packet()       its bytes (none for an OK of packet
 *                                    size 0). The NEW_METADATA and
 *                                    NEW_STREAM flags of an index ask for
 *                                    tr_live_client_metadata() and
 *                                    tr_live_client_new_streams() before the
 *                                    next packet is read.
 *   tr_live_client_detach(), tr_live_client_free()
 *
 * Errors: every call waits at most the client's timeout for its reply
 * (each its own); integers are -errno: -ETIMEDOUT (no reply in time),
 * -ECONNRESET (the relay closed the connection), -EPROTO (a reply that
 * does not fit the protocol: a size or a count out of bounds, an unknown
 * status), -ENOMEM. After any of these the connection is out of step and
 * every later call fails with the same error at once: free the client and
 * connect again. A relay's refusal (attach to an unknown session, ...) is
 * an error of that call only. tr_live_client_errmsg() tells the last error.
 *
 * Every count and length of a reply is checked before it is used, and a
 * reply is never read past its end; a reply's lists are allocated as
 * their entries arrive (a count alone allocates nothing).
 */
#ifndef TRAWL_NET_LIVE_CLIENT_H
#define TRAWL_NET_LIVE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "net/live-proto.h"

#define LIVE_CLIENT_TIMEOUT_MS 10000	/* timeout_ms <= 0 */
#define LIVE_CLIENT_SESSIONS_MAX 65536	/* sessions in one LIST_SESSIONS reply */
#define LIVE_CLIENT_STREAMS_MAX 65536	/* streams in one ATTACH or GET_NEW_STREAMS */
#define LIVE_CLIENT_METADATA_MAX (64u << 20)	/* bytes of one GET_METADATA reply */

/* A session of LIST_SESSIONS (strings NUL-terminated, at most the
 * protocol's sizes). */
struct live_session_info {
	uint64_t id;
	uint32_t live_timer;		/* µs between the producers' flushes */
	uint32_t clients;		/* viewers attached */
	uint32_t streams;		/* streams of the session (metadata ones too) */
	char hostname[LIVE_HOST_MAX + 1];
	char name[LIVE_NAME_MAX + 1];
};

/* A stream announced by ATTACH_SESSION or GET_NEW_STREAMS. */
struct live_stream_info {
	uint64_t id;			/* for GET_NEXT_INDEX, GET_PACKET, GET_METADATA */
	uint64_t ctf_trace_id;		/* streams of one trace share it (and its
					 * metadata stream) */
	bool metadata;			/* the trace's metadata stream */
	char path[LIVE_PATH_MAX + 1];	/* the trace's directory on the relay */
	char channel[LIVE_NAME_MAX + 1];	/* the stream's file name there */
};

/* A GET_NEXT_INDEX reply. Sizes in bits, as on the wire. */
struct live_index {
	uint64_t offset;		/* of the packet in its stream, bytes */
	uint64_t packet_size;		/* bits */
	uint64_t content_size;		/* bits */
	uint64_t timestamp_begin, timestamp_end;	/* INACTIVE: timestamp_end is
							 * the stream's beacon */
	uint64_t events_discarded;	/* cumulative, as the packet context says */
	uint64_t stream_id;		/* the CTF stream class id */
	uint32_t status;		/* LIVE_INDEX_OK, _RETRY, _HUP, _ERR,
					 * _INACTIVE (_EOF) */
	uint32_t flags;			/* LIVE_FLAG_NEW_METADATA, LIVE_FLAG_NEW_STREAM */
};

struct live_client;

/*
 * Connects to the live port host:port (a name, an IPv4 literal or an IPv6
 * literal without brackets; port 0: LIVE_PORT, 5344) and says CONNECT
 * (major 2, minor 4, a command connection) and CREATE_SESSION, all within
 * timeout_ms (<= 0: LIVE_CLIENT_TIMEOUT_MS), which is also every later
 * call's timeout: it must exceed the time a relay may hold a
 * GET_NEXT_INDEX (trawl relay: 1 s). Returns the client (free it with
 * tr_live_client_free()), or NULL with errno and the reason in err:
 * EHOSTUNREACH (the name does not resolve), ECONNREFUSED, ETIMEDOUT,
 * ECONNRESET, EPROTO (not a live relay, or one whose protocol is not 2.4
 * or later), EIO (the relay refused the viewer session), ENOMEM.
 */
TRAWL_HIDDEN struct live_client *tr_live_client_connect(const char *host, uint16_t port,
						     int timeout_ms, char *err, size_t errlen);

/*
 * The same on a connected stream socket fd (tests and fuzzing drive the
 * client through a socket pair). The client owns fd from the call on,
 * failure or not; it is made non-blocking.
 */
TRAWL_HIDDEN struct live_client *tr_live_client_from_fd(int fd, int timeout_ms, char *err,
						     size_t errlen);

/* The last error's message ("" before any). Valid until the next call. */
TRAWL_HIDDEN const char *tr_live_client_errmsg(const struct live_client *c);
/* The viewer session id the relay gave at CONNECT. */
TRAWL_HIDDEN uint64_t tr_live_client_viewer_id(const struct live_client *c);
/* The protocol minor agreed on (4). */
TRAWL_HIDDEN uint32_t tr_live_client_minor(const struct live_client *c);

/*
 * LIST_SESSIONS: the relay's live sessions in *out (malloc'd array of *n,
 * the caller frees it; NULL when *n is 0). A relay lists a session once
 * per tracing domain and bitness (lttng-relayd): several entries may share
 * a hostname and a name. Returns 0 or -errno (see the top).
 */
TRAWL_HIDDEN int tr_live_client_list(struct live_client *c, struct live_session_info **out,
				  size_t *n);

/*
 * ATTACH_SESSION: starts viewing session_id from its first packet
 * (from_beginning; lttng-relayd keeps only what is still in its files) or
 * from the next one (SEEK_LAST). The streams announced in *streams
 * (malloc'd array of *n, the caller frees it; NULL when *n is 0; more may
 * come through tr_live_client_new_streams()). Returns 0; the relay's refusal
 * as -ENOENT (unknown session), -EBUSY (another viewer is attached),
 * -EOPNOTSUPP (not a live session), -EINVAL (seek refused), -ENOTCONN (no
 * viewer session; connect makes one), with the status in the message; or
 * a transport or protocol error.
 */
TRAWL_HIDDEN int tr_live_client_attach(struct live_client *c, uint64_t session_id,
				    bool from_beginning, struct live_stream_info **streams,
				    size_t *n);
/* The same with the seek value itself (LIVE_SEEK_*: LIVE_SEEK_TRAWL_NOW,
 * which only trawl relays take). */
TRAWL_HIDDEN int tr_live_client_attach_seek(struct live_client *c, uint64_t session_id,
					 uint32_t seek, struct live_stream_info **streams,
					 size_t *n);

/*
 * GET_NEW_STREAMS: streams of the attached session not announced yet, as
 * for tr_live_client_attach() (*n 0 when none). *hup: the session ended
 * (every stream was read to its end; nothing more will come). Returns 0,
 * -EIO when the relay answers ERR (not attached to session_id), or a
 * transport or protocol error.
 */
TRAWL_HIDDEN int tr_live_client_new_streams(struct live_client *c, uint64_t session_id,
					 struct live_stream_info **streams, size_t *n,
					 bool *hup);

/*
 * GET_METADATA of a metadata stream: 1 with the next chunk of the trace's
 * TSDL in *buf (malloc'd, *len bytes, not NUL-terminated; the caller
 * appends it to the chunks before and frees it), 0 when there is nothing
 * new, -ENOENT when the relay answers ERR (the stream is unknown or gone),
 * or a transport or protocol error (-EPROTO: more than
 * LIVE_CLIENT_METADATA_MAX bytes).
 */
TRAWL_HIDDEN int tr_live_client_metadata(struct live_client *c, uint64_t stream_id, uint8_t **buf,
				      size_t *len);

/*
 * GET_NEXT_INDEX of a data stream into *ix. Returns 0 whatever the status
 * (ix->status: OK, a packet to read; RETRY, nothing yet; INACTIVE, nothing
 * before ix->timestamp_end; HUP, the stream ended; ERR, an unknown stream),
 * or a transport or protocol error: -EPROTO for an unknown status or, with
 * OK, sizes that no packet has (content above packet size, a packet size
 * that is 0 with content, not whole bytes, or above 4 GiB - 1 bytes, or an
 * offset where it would end past 2^64). An OK whose packet and content
 * sizes are both 0 is no packet: nothing to read, only its flags count
 * (trawl's relay answers so, with NEW_STREAM, while the viewer has streams
 * to hear of and the stream asked has nothing new; ask it again after
 * tr_live_client_new_streams()).
 */
TRAWL_HIDDEN int tr_live_client_next_index(struct live_client *c, uint64_t stream_id,
					struct live_index *ix);

/*
 * GET_PACKET: len bytes of the stream at offset (an index's offset and
 * packet_size / 8) into buf. Returns 0 with *status LIVE_PACKET_OK (buf
 * holds the len bytes) or the relay's RETRY, ERR or EOF (buf untouched),
 * and *flags (NEW_METADATA, NEW_STREAM: ERR with these asks to read them
 * first and ask again); or a transport or protocol error (-EPROTO: an OK
 * reply of another length than len). status and flags may be NULL.
 */
TRAWL_HIDDEN int tr_live_client_packet(struct live_client *c, uint64_t stream_id, uint64_t offset,
				    uint32_t len, uint8_t *buf, uint32_t *status, uint32_t *flags);

/*
 * DETACH_SESSION: 0, -ENOENT (not attached to session_id), -EIO (the
 * relay's ERR), or a transport or protocol error. The connection stays
 * usable (attach again, another session).
 */
TRAWL_HIDDEN int tr_live_client_detach(struct live_client *c, uint64_t session_id);

/* Closes the connection (a viewer that did not detach is detached by the
 * relay). Accepts NULL. */
TRAWL_HIDDEN void tr_live_client_free(struct live_client *c);

/* --------------------------------------------------------------- URLs */

/*
 * A live URL, as babeltrace2's lttng-live source takes them, and one more:
 *   net://RELAY[:PORT]                      the relay (to list its sessions)
 *   net://RELAY[:PORT]/host/HOST/SESSION    the session SESSION of the
 *                                           traced host HOST
 *   net://RELAY[:PORT]/session/SESSION      the session SESSION of every
 *                                           host that has one (a cluster
 *                                           recorded with one session
 *                                           name; trawl's own form)
 * net4:// is taken as net:// (babeltrace2 spells it so). RELAY is a name,
 * an IPv4 literal or an IPv6 literal in brackets ([::1]); PORT defaults
 * to 5344. HOST and SESSION are taken as written (no %-decoding); they
 * must not be empty, nor longer than the protocol's 63 and 254 bytes.
 */
enum live_url_kind {
	LIVE_URL_RELAY,			/* no path */
	LIVE_URL_HOST_SESSION,		/* /host/HOST/SESSION */
	LIVE_URL_SESSION,		/* /session/SESSION: every host */
};

struct live_url {
	enum live_url_kind kind;
	char relay[256];		/* host to connect to, without brackets */
	uint16_t port;
	char hostname[LIVE_HOST_MAX];	/* LIVE_URL_HOST_SESSION */
	char session[LIVE_NAME_MAX];	/* LIVE_URL_HOST_SESSION, LIVE_URL_SESSION */
};

/* Parses url into *u: 0, or -EINVAL with the reason in err. */
TRAWL_HIDDEN int tr_live_url_parse(const char *url, struct live_url *u, char *err, size_t errlen);

/*
 * Does the listed session s belong to what u names (its session name, and
 * its hostname for /host/ URLs)? A viewer attaches to every session that
 * matches: a relay lists one per domain and bitness. Always false for a
 * LIVE_URL_RELAY URL.
 */
TRAWL_HIDDEN bool tr_live_url_matches(const struct live_url *u, const struct live_session_info *s);

#endif
