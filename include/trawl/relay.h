/* SPDX-License-Identifier: MIT */
/*
 * trawl/relay.h - the relay (docs/relay.md): the server that receives the
 * traces every node streams and serves them live on LTTng's viewer
 * protocol, as an object a program embeds (`trawl relay` is one); and the
 * producer's side, a destination for a CTF writer that streams its trace
 * to a relay.
 *
 * A relay writes each trace it receives to OUTPUT/SESSION/HOST/TRACE/ as
 * the same CTF trace a local recording gives, and keeps no packet in
 * memory: live viewers read from those files. One thread runs a relay
 * (trawl_relay_run); relays are independent of each other, any number in
 * one process. The library never prints: what the relay has to say goes
 * to the log hook of its options.
 */
#ifndef TRAWL_RELAY_H
#define TRAWL_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libtrawl is built with hidden visibility; its API is what this header
 * declares. */
#pragma GCC visibility push(default)

#define TRAWL_RELAY_DATA_PORT 5347	/* producers' default port */
#define TRAWL_RELAY_LIVE_PORT 5344	/* viewers' default (babeltrace2's) */
/* How long trawl's recorders (the agent, trawl record) try to resume a
 * trace whose relay connection broke (trawl_relay_dest_opts.resume_ms). */
#define TRAWL_RELAY_RESUME_MS 60000

struct trawl_relay_opts {
	size_t sz;			/* sizeof(struct trawl_relay_opts) */
	const char *output;		/* directory of the sessions (created) */
	/*
	 * "[HOST:]PORT" or "PORT" to listen on; port 0: any free port (see
	 * trawl_relay_data_port). NULL (or a bare port): 127.0.0.1:5347 for
	 * producers, 127.0.0.1:5344 for live viewers: loopback only, other
	 * machines need an address given (and a secret_file, docs/auth.md).
	 */
	const char *data_addr;
	const char *live_addr;
	/* connections at once, producers and viewers together; 0: the sum
	 * of max_producers and max_viewers (each kind has its own limit, so
	 * that one kind cannot lock the other out) */
	int max_conns;
	/* A viewer attaching with SEEK_LAST starts at the next packet, as
	 * with lttng-relayd (else every viewer reads from the first). */
	bool live_from_now;
	/* How long a viewer's request for the next packet of a stream with
	 * nothing new waits for one before it is answered "retry"; 0: 1000. */
	unsigned live_hold_ms;
	/*
	 * Log lines (a connection refused, a trace begun or complete, a
	 * producer that broke the protocol, ...), without a trailing newline,
	 * from the thread that runs the relay; level is a syslog(3) priority
	 * (LOG_ERR, LOG_WARNING, LOG_INFO). NULL: nothing is logged.
	 */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	/*
	 * Limits that hold against a peer that misbehaves (docs/relay.md,
	 * "Limits"); 0 gives the default. A newcomer over a limit is refused
	 * with the reason (a producer in a WELCOME, a viewer in the log), a
	 * connection over its limit is closed with the reason in the log; the
	 * others are served on.
	 */
	int max_producers;		/* producers' connections; 0: 1000 */
	int max_viewers;		/* viewers' connections; 0: 100 */
	/* Descriptors the relay holds for connections and trace files (an fd
	 * pool, as lttng-relayd's --fd-pool-size); 0: the soft RLIMIT_NOFILE
	 * at trawl_relay_new() minus a tenth of it (16 to 1024 kept for the
	 * rest of the process). A trace's files are closed when it ends (and
	 * reopened while a viewer reads its session). */
	int fd_pool_size;
	/* Bytes received and not yet handled: per connection (0: the largest
	 * message, 64 MiB + 80) and all connections together (0: 256 MiB).
	 * Before its HELLO a producer may only send a HELLO (at most 1 KiB). */
	size_t max_conn_buffer;
	size_t max_total_buffer;
	/* A message must arrive whole within msg_timeout_ms of its first byte
	 * (the first one: of the connection); 0: 30000. A viewer from which
	 * nothing came for idle_timeout_ms is closed; 0: 300000 (a producer
	 * is never closed for silence: it may have nothing to send). */
	unsigned msg_timeout_ms;
	unsigned idle_timeout_ms;
	/* Cluster control (docs/cluster.md): the Unix socket (made mode 0600;
	 * peers must be the relay's user or root) on which `trawl cluster`
	 * (trawl/cluster.h) asks for the nodes that joined and has them run
	 * verbs; NULL: none. Agents join on the data port either way. */
	const char *control;
	/*
	 * Authentication (docs/auth.md). secret_file: a file holding the
	 * cluster's secret ("cluster HEX", mode 600; `trawl secret new`); then
	 * every producer proves it holds that secret or its host's node key
	 * (derived from it) before its HELLO is taken, and every viewer of
	 * the live port the secret or the viewer key; refusals say why. NULL:
	 * anyone who reaches the ports may write and read. live_open_addr:
	 * "[HOST:]PORT" of a second live port on which viewers prove nothing
	 * (babeltrace2 cannot), read-only as every live port; NULL: none
	 * (a bare port listens on 127.0.0.1).
	 */
	const char *secret_file;
	const char *live_open_addr;
	/* Disk quota of each host of a session name (its traces, what its
	 * directory held before included): a message that would go over it
	 * is refused with the reason (its producer's connection closed), a
	 * HELLO once it is reached; other hosts and sessions are served on.
	 * 0: none. */
	uint64_t max_session_size;
	/*
	 * Peers that prove nothing (docs/relay.md, "Peers that prove
	 * nothing"): a connection is pending until its HELLO or JOIN is taken
	 * (authenticated, with a secret) or, a viewer's, until it is
	 * authenticated and its CONNECT answered. At most max_pending pending
	 * connections of each kind (0: 256; at most a quarter of that kind's
	 * limit, that no lower than 8, and never more than a quarter of the
	 * descriptor pool, at least 1: the oldest is closed for a newcomer), max_pending_per_addr from one source address (0: 64;
	 * over it the newcomer is refused), each for at most
	 * proof_timeout_ms from its connection (0: 10000).
	 */
	int max_pending;
	int max_pending_per_addr;
	unsigned proof_timeout_ms;
	/* The group (a name or a number) of the directories (mode 0750) and
	 * files (0640) the relay makes; NULL: the relay's own. */
	const char *group;
	/* The disk's reserve, in bytes (0: 1 % of the output's file system,
	 * at most 1 GiB): once less is free, the session that wrote the most
	 * in this run is refused (its producers told "disk full"), the
	 * others write on. */
	uint64_t disk_reserve;
	/*
	 * Metrics for Prometheus (docs/metrics.md): "[HOST:]PORT" (a bare
	 * port: on 127.0.0.1) on which GET /metrics gives the relay's health
	 * per node and the cluster's figures from its kernel traces, in the
	 * text format 0.0.4 or OpenMetrics 1.0 (the scraper's Accept); served
	 * by threads of their own, never the relay's. NULL: none. An address
	 * other than loopback needs metrics_token (EINVAL without).
	 * metrics_token: the bearer token every scrape must carry; NULL: none.
	 * metrics_top_k: syscalls with a series of their own per host (0: 16).
	 */
	const char *metrics_addr;
	const char *metrics_token;
	unsigned metrics_top_k;
};

struct trawl_relay;

/*
 * Listens on both ports and creates the output directory; nothing is
 * served before trawl_relay_run(). Returns the relay, or NULL with errno
 * set and the reason in err (errlen bytes; err may be NULL): bad options
 * (EINVAL), a port taken (EADDRINUSE), the directory not writable. Free
 * with trawl_relay_free(). The options are copied: o and its strings need
 * not outlive the call (log_arg must outlive the relay).
 */
struct trawl_relay *trawl_relay_new(const struct trawl_relay_opts *o, char *err, size_t errlen);

/* The ports the relay listens on (the kernel's choice for port 0). */
unsigned trawl_relay_data_port(const struct trawl_relay *r);
unsigned trawl_relay_live_port(const struct trawl_relay *r);
/* The same as "HOST:PORT" ("[V6]:PORT"), owned by r. */
const char *trawl_relay_data_addr(const struct trawl_relay *r);
const char *trawl_relay_live_addr(const struct trawl_relay *r);
/* The metrics endpoint's "HOST:PORT" (trawl_relay_opts.metrics_addr,
 * the kernel's port for port 0), or NULL when there is none. Owned by r. */
const char *trawl_relay_metrics_addr(const struct trawl_relay *r);
/* The open (unauthenticated, read-only) live port's "HOST:PORT", or NULL
 * when there is none (trawl_relay_opts.live_open_addr). Owned by r. */
const char *trawl_relay_live_open_addr(const struct trawl_relay *r);

/*
 * Serves producers and viewers until trawl_relay_stop(). Then closes
 * every connection (each trace keeps what reached it; the files stay)
 * and returns 0, or -errno when the loop failed. The relay may run again
 * after (same ports, no session remembered). One thread at a time.
 */
int trawl_relay_run(struct trawl_relay *r);

/*
 * Makes trawl_relay_run() return soon: the current run, or the next one
 * if none runs. Safe from any thread and from a signal handler (it writes
 * an eventfd the loop polls). Returns 0, or -errno.
 */
int trawl_relay_stop(struct trawl_relay *r);

/* Closes the ports and frees the relay (not while it runs). Accepts NULL. */
void trawl_relay_free(struct trawl_relay *r);

/* ------------------------------------------------ streaming to a relay */

struct trawl_ctf_dest;

struct trawl_relay_dest_opts {
	size_t sz;			/* sizeof(struct trawl_relay_dest_opts) */
	const char *addr;		/* "HOST[:PORT]" ("[V6]:PORT"), port 5347 */
	/* The trace is stored as SESSION/HOST/TRACE/ at the relay: session
	 * (default "trawl"), the writer's hostname, trace (default the
	 * writer's domain). Names of [A-Za-z0-9._-], not starting with '.' or '-'. */
	const char *session;
	const char *trace;
	uint64_t live_timer_us;		/* shown to live viewers; 0: not live */
	int timeout_ms;			/* connecting and HELLO; 0: 5000 */
	/* A credential file (docs/auth.md: the cluster's secret, or this
	 * host's node key; mode 600): the relay asks for a proof of it before
	 * taking the HELLO. NULL: the environment's TRAWL_SECRET_FILE, if set;
	 * else none (a relay with a secret then refuses, with the reason). */
	const char *secret_file;
	/* Cut off (the relay restarted, the link went down), try to
	 * reconnect and resume the trace for this long, keeping what the
	 * relay has not confirmed (at most the writer's io_queue, else 16
	 * MiB; the writer waits once it is full); 0: no resume, the relay is
	 * lost at the first error (docs/relay.md, "Cut off"). */
	unsigned resume_ms;
	/* With resume_ms: the HELLO asks the relay to say when a live viewer
	 * waits on the trace (DEMAND, docs/relay.md "Live latency"; the agent
	 * then sends new events at once). 0: never told. */
	int live_demand;
	/* Optional, with live_demand: called from the sender's thread at each
	 * DEMAND (e.g. to wake the loop that feeds the writer). */
	void (*on_demand)(void *arg);
	void *demand_arg;
	/* The writer's streams come as threads do: the HELLO asks to send
	 * HORIZONs, so that the relay shows live viewers nothing a stream
	 * announced later could precede. The library's own writers (the
	 * agent's) send them; a writer set so that sends none holds the
	 * session's viewers back for a while (docs/relay.md "New streams"). */
	int horizon;
};

/*
 * A relay as the destination of a CTF writer (trawl/ctf.h:
 * trawl_ctf_writer_opts.dest). Nothing is sent yet: trawl_ctf_writer_new()
 * connects and says HELLO (unreachable or refused: the writer fails, the
 * reason in its err), then the writer sends the metadata, each stream,
 * each packet with its index entry, and beacons; trawl_ctf_writer_close()
 * returns once the relay has written everything. A send that cannot go on
 * for 10 s fails (the relay is then lost, see
 * trawl_ctf_writer_relay_error()). Returns NULL and errno (EINVAL: no
 * addr; ENOMEM). The options are copied. The writer given it frees it;
 * one never given to a writer is freed with trawl_ctf_dest_free().
 */
struct trawl_ctf_dest *trawl_relay_dest_new(const struct trawl_relay_dest_opts *o);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
