/* SPDX-License-Identifier: MIT */
/*
 * trawl/probe.h - clock-synchronization probes: a node exchanges UDP probe
 * messages with its peers and records every send and receive as a sync
 * point (<trawl/sync-schema.h>: trawl_sync:probe_send / probe_recv, with
 * key and peer) in the CTF trace DIR/HOST/sync/, on the node's
 * CLOCK_MONOTONIC, for trawl_sync_points_read() (`trawl sync`). `trawl
 * probe` is this object with options, settings and a summary
 * (docs/man/trawl-probe.1; the engine is lib/sync/probe.c).
 *
 * A send's timestamp is taken immediately before the send system call, a
 * receive's immediately after the receive returns, so the recorded interval
 * always contains the true transit (what the convex-hull method needs).
 * Keys are (random 32-bit sender id << 32) | sequence number, unique per
 * sender.
 *
 * Life cycle: trawl_probe_new() (addresses resolved, socket bound, trace
 * created), trawl_probe_run() (probes until the duration or
 * trawl_probe_stop(), then the trace is finalized), trawl_probe_free().
 * Conventions: int returns are 0 or -errno, pointer returns NULL with errno
 * set; (err, errlen) receives a one-line message. Nothing here prints:
 * warnings go to the logging hook of the options.
 */
#ifndef TRAWL_PROBE_H
#define TRAWL_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define TRAWL_PROBE_PORT		"7077"
#define TRAWL_PROBE_LISTEN		"0.0.0.0:" TRAWL_PROBE_PORT	/* the default */
#define TRAWL_PROBE_MAX_NAME		64	/* a node name's length */
#define TRAWL_PROBE_MAX_PEERS		4096
#define TRAWL_PROBE_MAX_RATE		100000	/* probes per second to each peer */

/* A peer: its node name and where it listens ("ADDR:PORT", see below). */
struct trawl_probe_peer {
	const char *name;
	const char *addr;
};

struct trawl_probe_opts {
	size_t sz;			/* sizeof(struct trawl_probe_opts) */
	const char *dir;		/* the session directory: the trace is DIR/HOST/sync */
	const char *host;		/* this node's name (trawl_probe_name_valid) */
	const char *listen;		/* "ADDR:PORT" to receive on; NULL: TRAWL_PROBE_LISTEN */
	const struct trawl_probe_peer *peers;	/* distinct names, none is host */
	size_t npeers;
	unsigned rate;			/* probes per second to each peer; 0: only receive */
	int64_t duration_ns;		/* run() returns after this; 0: at trawl_probe_stop() */
	bool has_clock_offset;		/* else CLOCK_REALTIME - CLOCK_MONOTONIC now */
	int64_t clock_offset;		/* the trace clock's offset from the epoch, ns */
	bool force;			/* overwrite an existing DIR/HOST/sync trace */
	/* Warnings (a peer unreachable, a probe meant for another node), one
	 * line without newline; NULL: none. Called from trawl_probe_run(). */
	void (*log)(void *arg, const char *msg);
	void *log_arg;
	/*
	 * Also (or, with dir NULL, only) stream the trace to a trawl relay,
	 * "HOST[:PORT]", as SESSION/HOST/sync there (session NULL: "trawl"),
	 * live: every live_timer_us (0: 100 ms) the events so far are sent,
	 * so that a live viewer (trawl sync --live) has them. secret_file:
	 * the relay's credential (trawl_relay_dest_opts). NULL: none.
	 */
	const char *relay, *session, *secret_file;
	uint64_t live_timer_us;
};

struct trawl_probe_stats {
	uint64_t sent, send_failed;	/* probes sent to every peer; sends that failed */
	uint64_t received;		/* probes recorded */
	uint64_t from_unlisted;		/* ... of them from nodes not among the peers */
	uint64_t invalid;		/* datagrams that are no probe (not recorded) */
	uint64_t misaddressed;		/* probes meant for another node (not recorded) */
	uint64_t from_self;		/* probes of this node's name (not recorded) */
	uint64_t ticks_late;		/* send ticks let go because the probe ran late (a
					 * loaded machine): each would have sent to every peer */
};

struct trawl_probe_peer_stats {
	uint64_t sent, send_failed, received;
};

struct trawl_probe;

/* Is s a node name: 1..TRAWL_PROBE_MAX_NAME letters, digits, '-', '_', '.'? */
bool trawl_probe_name_valid(const char *s);
/*
 * Resolves "ADDR:PORT" ("[V6ADDR]:PORT"; host names too, through
 * getaddrinfo) into *ss, *len. listen: an empty ADDR or "*" is any address
 * (IPv4) and port 0 is allowed; else they mean localhost and a port is
 * 1..65535. Returns 0, or -EINVAL with the reason in err.
 */
int trawl_probe_addr_parse(const char *text, bool listen, struct sockaddr_storage *ss,
			   socklen_t *len, char *err, size_t errlen);

/*
 * Resolves every address, binds the socket (IPv4 peers of an IPv6 socket
 * are reached at their v4-mapped address) and creates the trace
 * (-EEXIST if DIR/HOST/sync holds one and force is not set). Returns the
 * probe, which the caller frees with trawl_probe_free(); NULL with errno
 * and a message in err on error.
 */
struct trawl_probe *trawl_probe_new(const struct trawl_probe_opts *o, char *err, size_t errlen);
/*
 * Sends rate probes a second to each peer and records what arrives, until
 * the duration has passed or trawl_probe_stop() is called; then receives
 * what is queued and finalizes the trace (last packet, metadata, index).
 * Call it once. Returns 0, or -errno with a message in err (a poll or a
 * write error; the trace is finalized all the same, as far as it can be).
 */
int trawl_probe_run(struct trawl_probe *p, char *err, size_t errlen);
/*
 * Makes trawl_probe_run() return soon (before or while it runs). Safe from
 * another thread and from a signal handler.
 */
void trawl_probe_stop(struct trawl_probe *p);
/* Closes the socket and the trace (if still open); accepts NULL. */
void trawl_probe_free(struct trawl_probe *p);

/* The counters so far. */
void trawl_probe_stats(const struct trawl_probe *p, struct trawl_probe_stats *s);
/* Peer i's counters (i in the order of the options' peers): 0, or -ERANGE. */
int trawl_probe_peer_stats(const struct trawl_probe *p, size_t i,
			   struct trawl_probe_peer_stats *s);
/* The address the probe listens on ("127.0.0.1:7077", "[::1]:7077"). */
void trawl_probe_listen_addr(const struct trawl_probe *p, char *buf, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
