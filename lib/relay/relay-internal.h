/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/relay-internal.h - what the relay's data side (relay.c:
 * producers' traces to disk, the loop, the connections) and its live side
 * (live.c: LTTng live viewers) share, and what the fuzz target
 * (tests/fuzz/fuzz-relay.c) needs to drive a relay's state from bytes.
 * Hidden: none of it is in the shared library's ABI.
 *
 * One thread runs everything from one epoll loop. A producer's connection
 * carries one trace; the traces of one session name and one host name form
 * a viewer session (what `babeltrace2 -i lttng-live
 * net://RELAY/host/HOST/SESSION` attaches to). Everything a viewer reads
 * comes from the files on disk: the relay keeps no packet in memory. All
 * of a relay's state hangs off its struct trawl_relay: relays in one
 * process share nothing.
 */
#ifndef TRAWL_RELAY_INTERNAL_H
#define TRAWL_RELAY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"
#include "trawl/relay.h"

struct relay_msg;
struct rquota;

/* A stream of a trace: its files and what viewers need to know of it. */
struct rstream {
	uint64_t id;			/* relay-wide, for viewers */
	uint32_t handle;		/* the producer's */
	uint64_t class_id;		/* its stream class */
	char *name;			/* file name */
	int fd, idxfd;
	uint64_t size;			/* bytes in the stream file */
	uint64_t npackets;		/* index entries */
	uint64_t beacon;		/* no event before it is still to come:
					 * the last packet's end, or a later beacon */
	bool hup;			/* the producer is gone: no more packets */
	struct rtrace *trace;
	uint64_t next_seq;		/* the last packet's packet_seq_num + 1
					 * (a resumed trace skips packets below) */
	uint64_t discarded;		/* the last packet's events_discarded (a
					 * stream's running count) */
};

/* One producer's trace: SESSION/HOST/TRACE/. */
struct rtrace {
	uint64_t id;			/* relay-wide: the viewers' ctf_trace_id */
	char *name;			/* "kernel", "ust", ... */
	char *dir;
	int meta_fd;
	uint64_t meta_len;		/* bytes of metadata so far */
	struct rstream **streams;
	size_t nstreams;
	bool closed;			/* CLOSE received, or the producer is gone */
	struct rsession *session;
	/* Its files are open: always while the producer writes; once closed,
	 * only while a viewer is attached to its session (relay.c reopens
	 * them read-only then: the descriptor pool). */
	bool files_open;
	uint8_t uuid[16];		/* the HELLO's: a resume must show it */
	bool resumed;			/* a producer came back for it (resume.c) */
	bool made;			/* its directory and metadata file exist
					 * (made at its first METADATA or STREAM) */
	/* Its streams come as threads do (HELLO flag RELAY_HELLO_HORIZON):
	 * every stream with an event before horizon is announced; while it
	 * is open, no viewer of its session is given anything past it
	 * (live.c, docs/relay.md "Streams that join") */
	bool has_horizon;
	uint64_t horizon;
	int64_t held_since;		/* ms its horizon first held a viewer back
					 * since its last HORIZON; 0: none */
};

/* A viewer session: the traces of one session name from one host. */
struct rsession {
	uint64_t id;
	char *name, *host;
	uint64_t live_timer_us;
	struct rtrace **traces;
	size_t ntraces;
	int viewers;			/* attached now */
	bool wake_due;			/* tr_live_wake() deferred */
	struct rsession *next;
	bool files_for_viewers;		/* its ended traces' files were opened
					 * for viewers (relay.c's files_sync) */
	struct rquota *quota;		/* its session name's (quota.c); NULL:
					 * not looked up yet */
	/* what its producers sent this run (metrics.c) */
	uint64_t rx_bytes, rx_packets;
	int64_t rx_last_ms;		/* CLOCK_MONOTONIC ms of the last packet */
};

/* Why a peer was refused or cut off (metrics.c counts them, label reason). */
enum rrefusal {
	RREF_PRODUCERS,			/* --max-producers */
	RREF_VIEWERS,			/* --max-viewers */
	RREF_CONNS,			/* --max-conns */
	RREF_FD_POOL,			/* the descriptor pool */
	RREF_OUT_OF_FDS,		/* EMFILE, ENFILE */
	RREF_PENDING,			/* too many unproven peers (of a kind, an address) */
	RREF_UNPROVEN,			/* proved nothing in time, or evicted for a newcomer */
	RREF_AUTH,			/* no proof, a bad one */
	RREF_QUOTA,			/* --max-session-size */
	RREF_DISK_FULL,			/* the disk's reserve */
	RREF_BUFFERS,			/* input buffers */
	RREF_PROTOCOL,			/* broke the protocol, a bad name, a trace that exists */
	RREF_TIMEOUT,			/* a message too slow, a viewer idle */
	RREF_OTHER,
	RREF_N
};
struct rmetrics;

/* A connection: a producer's or a viewer's. */
enum rconn_kind { RC_PRODUCER, RC_VIEWER };
struct rconn {
	struct trawl_relay *r;
	enum rconn_kind kind;
	int fd;				/* -1: fed by tr_relay_conn_feed */
	char peer[64];			/* address:port, for the log */
	uint8_t *in;			/* received, not yet parsed */
	size_t inlen, incap;
	uint8_t *out;			/* to send */
	size_t outoff, outlen, outcap;
	uint32_t events;		/* what the epoll waits for */
	bool closing;			/* close once out is sent */
	bool dead;			/* close now */
	struct rtrace *trace;		/* producer: after HELLO */
	struct viewer *viewer;		/* viewer: live.c's state */
	struct rconn *next;
	/* limits (relay.c) */
	int64_t msg_since;		/* CLOCK_MONOTONIC ms the message being
					 * received began (the first: the
					 * connection); 0: none */
	int64_t last_rx;		/* ms of the last bytes received */
	/* cluster control (control.c) */
	struct rnode *node;		/* an agent's connection, after its JOIN */
	bool local;			/* came on the Unix control socket */
	/* authentication (auth.c): whether the peer may use its port (always
	 * without a secret, and on the unauthenticated live port); the
	 * challenge it was given */
	bool authed;
	struct rauth *auth;
	/* a resumable producer (HELLO flag RELAY_HELLO_RESUME, resume.c) */
	bool resumable;
	bool counts;			/* HELLO flag RELAY_HELLO_COUNT: PROGRESS, and
					 * written in a cut's ACK */
	uint64_t written;		/* its messages after HELLO handled */
	size_t progress_at;		/* 1 + offset in out of the PROGRESS
					 * not sent yet (0: none) */
	uint64_t progress_told;		/* written, as the last PROGRESS said it */
	bool progress_due;		/* a counting producer's PROGRESS, for the sweep */
	/* live demand (HELLO flag RELAY_HELLO_DEMAND, live.c): the
	 * producer reads DEMAND; the last one was queued then (ms) */
	bool demand;
	int64_t demand_sent;
	/* its trace's horizon held a viewer back: asked for a newer one (an
	 * R->P HORIZON), not again until it comes */
	bool horizon_asked;
	/* unproven peers (relay.c, docs/relay.md "Peers that prove nothing"):
	 * a connection is pending until it proved what it is (a producer:
	 * its HELLO or JOIN taken, authenticated when the relay has a
	 * secret; a viewer: authenticated, and its CONNECT answered) */
	bool proven;
	int64_t born;			/* ms it was accepted */
	uint8_t addr[16];		/* its source address (IPv4 mapped) */
	bool has_addr;			/* addr is set (not a test's, nor Unix) */
	int64_t linger_until;		/* closing, its last reply sent and its
					 * side shut: input is read and dropped
					 * until the peer's EOF or then (ms), and
					 * at most linger_left bytes */
	size_t linger_left;
};

struct trawl_relay {
	bool wake_defer;		/* tr_live_wake() only notes (producer_input) */
	bool wake_pending;		/* and noted one: some session's wake_due */
	char *output;			/* the options, copied */
	int max_conns;
	bool live_from_now;
	unsigned live_hold_ms;
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;

	int dfd, lfd;			/* listening: producers, viewers (-1: none) */
	int stopfd;			/* eventfd: trawl_relay_stop() */
	int epfd;			/* -1: a state without sockets (fuzzing) */
	int spare_fd;			/* given up to refuse a connection at EMFILE */
	char data_at[300], live_at[300];	/* the bound addresses */
	unsigned data_port, live_port;

	struct rsession *sessions;
	struct rconn *conns;
	int nconns;
	uint64_t next_id;		/* sessions, traces and streams */
	struct viewer *viewers;		/* live.c's */
	uint64_t next_viewer;

	/* limits against peers that misbehave (relay.c; the options') */
	int max_producers, max_viewers;
	int nproducers, nviewers;
	int fd_pool;			/* descriptors for connections and files */
	int nfds;			/* of them in use */
	size_t max_conn_buf, max_total_buf;
	size_t buffered;		/* input buffers' bytes, all connections */
	unsigned msg_timeout_ms, idle_timeout_ms;
	int64_t paused_until;		/* out of descriptors (EMFILE): the
					 * listeners are off until then, or
					 * until a descriptor is freed; 0: on */
	int64_t next_sweep;		/* timeouts are checked then */
	struct ratelog {		/* one log line per episode */
		int64_t last;		/* ms of the last line */
		unsigned long quiet;	/* refusals since, not logged */
	} rl_emfile, rl_pool, rl_producers, rl_viewers, rl_buffers;

	/* cluster control (control.c, docs/cluster.md) */
	int cfd;			/* the Unix control socket (-1: none) */
	char *control;			/* its path */
	struct rnode *nodes;		/* every node that joined, by name */
	struct rreq *reqs;		/* control requests waiting for nodes */
	uint32_t next_req;
	/* authentication (auth.c): the cluster's secret (NULL: none asked);
	 * the read-only live port that asks none (-1: off) */
	struct auth_cred *secret;
	int ofd;
	char open_at[300];
	unsigned open_port;
	struct ratelog rl_auth[4];	/* refusals: producers, viewers (x2);
					 * without a proof, with a bad one (+1) */
	/* peers that prove nothing (relay.c): at most max_pending pending
	 * connections of each kind (less: a quarter of that kind's limit and
	 * of the descriptor pool), max_pending_addr from one address, each
	 * for at most proof_ms; one address holds at most half of the
	 * descriptor pool and of the input budget */
	int max_pending, max_pending_addr;
	unsigned proof_ms;
	struct ratelog rl_pending, rl_evict, rl_share;
	/* disk quota per session name (quota.c) */
	uint64_t max_session_size;	/* bytes, per host of a session; 0: none */
	/* the disk's reserve (quota.c): the option (0: 1 % of the file
	 * system, at most 1 GiB), what it is, the free bytes when asked,
	 * then (ms), the bytes charged since */
	uint64_t disk_reserve, disk_reserve_now, disk_free, disk_since_ask;
	int64_t disk_asked;
	struct ratelog rl_disk;
	/* files beneath the output (relay.c): the output directory, opened
	 * once (-1: not yet); the group of what is made ((gid_t)-1: none) */
	int rootfd;
	gid_t gid;
	struct rquota *quotas;
	/* metrics (metrics.c, docs/metrics.md): refusals by reason; the
	 * endpoint (NULL: none) and the eventfd its scrapes wake the loop
	 * with (-1: none) */
	uint64_t refused[RREF_N];
	struct rmetrics *metrics;
	int mfd;
};

/* metrics.c: counts a refusal; the reason of a refusal's errno. */
TRAWL_HIDDEN void tr_relay_refused(struct trawl_relay *r, enum rrefusal why);
TRAWL_HIDDEN enum rrefusal tr_relay_refusal_of(int e);
/* Starts the endpoint of o (metrics_addr set): 0, or -errno with err. */
TRAWL_HIDDEN int tr_relay_metrics_start(struct trawl_relay *r, const char *addr,
					const char *token, unsigned top_k, char *err,
					size_t errlen);
/* The loop: its eventfd was readable (a scrape waits for a snapshot). */
TRAWL_HIDDEN void tr_relay_metrics_snap(struct trawl_relay *r);
/* The loop, every turn: the session names to the cluster's readers, once
 * a second. */
TRAWL_HIDDEN void tr_relay_metrics_tick(struct trawl_relay *r, int64_t now_ms);
/* The loop ends: scrapes no longer wait for it (they get the last snapshot). */
TRAWL_HIDDEN void tr_relay_metrics_stopped(struct trawl_relay *r);
/* Stops the endpoint and the cluster's readers (trawl_relay_free). */
TRAWL_HIDDEN void tr_relay_metrics_free(struct trawl_relay *r);

/* Appends n bytes to c's output (sent by the loop). 0, or -ENOMEM (then
 * the connection is closed: its peer would lose its place). */
TRAWL_HIDDEN int tr_rconn_queue(struct rconn *c, const void *p, size_t n);
/* Queues a WELCOME refusing the producer or agent c (status -e, the
 * reason why, cut at 255 bytes) and closes c once it is sent. */
TRAWL_HIDDEN void tr_relay_refuse(struct rconn *c, int e, const char *why);
/* The relay's log, through its hook (nothing without one). */
TRAWL_HIDDEN void tr_relay_log(struct trawl_relay *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A refusal of one kind, logged once per episode: the first, then at most
 * a line every 10 s counting those since. */
TRAWL_HIDDEN void tr_relay_ratelog(struct trawl_relay *r, struct ratelog *rl, int level,
				   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Sessions and traces the relay knows (relay.c). */
TRAWL_HIDDEN struct rsession *tr_relay_session_by_id(struct trawl_relay *r, uint64_t id);
/* Forgets the sessions whose traces all ended and that no viewer reads
 * (their files stay). */
TRAWL_HIDDEN void tr_relay_session_gc(struct trawl_relay *r);

/* control.c: cluster control (docs/cluster.md). Agents join on the data
 * port (JOIN instead of HELLO); `trawl cluster` asks on the control
 * socket, whose peers must be the relay's user or root. */
struct relay_msg;
/* Listens on the Unix socket path (mode 0600): 0 or -errno with err. */
TRAWL_HIDDEN int tr_control_listen(struct trawl_relay *r, const char *path, char *err,
				   size_t errlen);
/* Accepts the control socket's newcomers. */
TRAWL_HIDDEN void tr_control_accept(struct trawl_relay *r);
/* A JOIN, or any message of a node's or a control connection: 0, or
 * -errno with the reason in err (the connection is then closed). */
TRAWL_HIDDEN int tr_control_msg(struct rconn *c, const struct relay_msg *m, char *err,
				size_t errlen);
/* c (a node's or a control client's) is being closed. */
TRAWL_HIDDEN void tr_control_conn_gone(struct rconn *c);
/* Pings, and answers whose time ran out: every loop turn. */
TRAWL_HIDDEN void tr_control_tick(struct trawl_relay *r, int64_t now_ms);
/* When tr_control_tick() next has something to do (ms): the next ping
 * or answer's deadline; INT64_MAX: nothing. */
TRAWL_HIDDEN int64_t tr_control_due(const struct trawl_relay *r);
/* Closes the control socket, forgets the nodes. */
TRAWL_HIDDEN void tr_control_free(struct trawl_relay *r);

/* A connection on fd (accepted, non-blocking) added to the loop, or NULL
 * (fd closed). */
TRAWL_HIDDEN struct rconn *tr_relay_conn_add(struct trawl_relay *r, int fd, enum rconn_kind kind,
					     const char *peer);

/* repair.c: cuts every trace under r->output back to its last complete
 * packet listed in its index (torn tails of a relay killed mid-write),
 * logging each cut. Called by trawl_relay_new before the loop runs. */
TRAWL_HIDDEN void tr_relay_repair(struct trawl_relay *r);

/* auth.c: the challenge-response (docs/auth.md). */
struct relay_msg;
struct live_req;
/* A producer's HELLO, or an agent's JOIN, at a relay with a secret: a
 * CHALLENGE queued (the message kept for the proof), or a WELCOME refusing
 * it (no credential; c closing, logged). 0, or -ENOMEM. */
TRAWL_HIDDEN int tr_relay_auth_hello(struct rconn *c, const struct relay_msg *m);
/* A producer's or an agent's AUTH: 0 with *hello the HELLO or JOIN it
 * proves (c->authed), or -errno with the reason in err (the caller refuses
 * and logs it). */
TRAWL_HIDDEN int tr_relay_auth_answer(struct rconn *c, const struct relay_msg *m,
				      struct relay_msg *hello, char *err, size_t errlen);
/* A viewer's request before it is authed: 1 when it was the
 * authentication's (answered; c closing when refused), 0 when c may go on
 * with it, -1 when c must be closed (logged). */
TRAWL_HIDDEN int tr_relay_auth_live(struct rconn *c, const struct live_req *req);
/* Logs a bad proof of c (once per episode). */
TRAWL_HIDDEN void tr_relay_auth_log(struct rconn *c, const char *why);
/* Whether c has waited for its proof longer than ms (the sweep closes it). */
TRAWL_HIDDEN bool tr_relay_auth_late(const struct rconn *c, int64_t now, unsigned ms);
/* When tr_relay_auth_late() turns true for c (ms): INT64_MAX if it never
 * will (no challenge out, or answered). */
TRAWL_HIDDEN int64_t tr_relay_auth_due(const struct rconn *c, unsigned ms);
TRAWL_HIDDEN void tr_relay_auth_free(struct rconn *c);
/* For tests and fuzzing: the bytes a holder of the relay's cluster secret
 * sends to answer c's pending challenge (a producer's AUTH message, a
 * viewer's TRAWL_AUTH request) in out (at least 96 bytes); their length,
 * or 0 when c has no challenge pending. */
TRAWL_HIDDEN size_t tr_relay_auth_prove(const struct rconn *c, uint8_t *out);
/* Loads o's secret file into r->secret: 0, or -errno with err set. */
TRAWL_HIDDEN int tr_relay_auth_init(struct trawl_relay *r, const char *secret_file, char *err,
				    size_t errlen);
/* relay.c's helpers that resume.c and quota.c use. */
/* path (beneath r->output) as it is under the output: what peers are told. */
TRAWL_HIDDEN const char *tr_relay_rel(const struct trawl_relay *r, const char *path);
/* Opens dir/name, or dir/index/name.idx (idx), with flags (close-on-exec
 * added): the descriptor (not counted in the pool), or -errno. */
TRAWL_HIDDEN int tr_relay_file_open(const char *dir, const char *name, bool idx, int flags);
TRAWL_HIDDEN bool tr_relay_pool_has(const struct trawl_relay *r, int n);
TRAWL_HIDDEN struct rsession *tr_relay_session_get(struct trawl_relay *r, const char *name,
						   const char *host, uint64_t live_us);
TRAWL_HIDDEN void tr_relay_trace_files_close(struct trawl_relay *r, struct rtrace *t);

/*
 * resume.c: a resumable producer back for a trace the relay holds
 * (docs/relay.md, "Cut off: reconnect and resume").
 *
 * tr_relay_resume: the HELLO m (flag RELAY_HELLO_RESUME) names dir, which
 * exists. When the HELLO's UUID is the trace's (the one in memory, or the
 * one its metadata file declares), c takes the trace over: from the
 * connection that still holds it (closed), or from the disk, its files
 * opened to append. 0, or -errno with the reason in err (refused).
 */
TRAWL_HIDDEN int tr_relay_resume(struct rconn *c, const struct relay_msg *m, const char *dir,
				 char *err, size_t errlen);
/* A STREAM of a resumed trace: 0 when the relay has it in memory (taken
 * as it is), 1 when not (relay.c's on_stream adds it), -errno with err
 * set when it contradicts one the relay has. */
TRAWL_HIDDEN int tr_relay_stream_resume(struct rtrace *t, const struct relay_msg *m, char *err,
					size_t errlen);
/* The files of st (st->name, a stream of the resumed trace t) opened to
 * append, its size, packets and last packet read from them: 0; 1 when the
 * disk has no such stream (a new one, created by the caller); -errno with
 * err set. The caller closes what was opened (st->fd, st->idxfd >= 0). */
TRAWL_HIDDEN int tr_relay_stream_reopen(const struct rtrace *t, struct rstream *st, char *err,
					size_t errlen);
/* Queues (or updates, while unsent) c's PROGRESS: c->written. */
TRAWL_HIDDEN void tr_relay_progress(struct rconn *c);

/*
 * quota.c: bytes written per session name, against max_session_size.
 * tr_relay_quota_charge: n more bytes for s's session: 0, or -EDQUOT with
 * the reason in err (nothing counted). The first call of a session name
 * counts what its directory holds already. tr_relay_quota_clear frees
 * the counts (the next run counts again).
 */
TRAWL_HIDDEN int tr_relay_quota_charge(struct trawl_relay *r, struct rsession *s, uint64_t n,
				       char *err, size_t errlen);
TRAWL_HIDDEN void tr_relay_quota_clear(struct trawl_relay *r);
/* The bytes s's session name holds on this host's disk as its quota counts
 * them (what its directory held when first charged, and since); 0 before. */
TRAWL_HIDDEN uint64_t tr_relay_quota_used(const struct rsession *s);

/* live.c: the LTTng live viewer protocol. */
/* Parses and answers every whole request in c->in; returns the bytes
 * consumed, or -1 when the viewer broke the protocol (closed). */
TRAWL_HIDDEN long tr_live_input(struct rconn *c);
TRAWL_HIDDEN void tr_live_conn_free(struct rconn *c);	/* the viewer's state */
/* A trace got packets or beacons, or ended: viewers waiting on it can
 * be answered (live.c keeps requests that wait for data). While r's
 * wake_defer is set (a producer's messages of one read being handled),
 * only noted: tr_live_wake_due() answers them once, after the last (a
 * beacon and the horizon that covers it, sent together, are one news). */
TRAWL_HIDDEN void tr_live_wake(struct trawl_relay *r, struct rsession *s);
TRAWL_HIDDEN void tr_live_wake_due(struct trawl_relay *r);
/* Called every loop turn: answers held requests whose wait is over, and
 * requests received while one was held. */
TRAWL_HIDDEN void tr_live_tick(struct trawl_relay *r);
/* Whether a request is held. */
TRAWL_HIDDEN bool tr_live_holding(const struct trawl_relay *r);
/* When tr_live_tick() next has something to do without any input (ms):
 * a held request's wait ends, a viewer over its cap is closed; INT64_MAX:
 * nothing. The loop sleeps until then (docs/relay.md, "What an idle relay
 * costs"). */
TRAWL_HIDDEN int64_t tr_live_due(const struct trawl_relay *r, int64_t now_ms);
/* Whether the loop should read more from c (not while a request of c is
 * held, nor while much of its replies waits to be sent). */
TRAWL_HIDDEN bool tr_live_wants_input(const struct rconn *c);
/* Whether the viewer c's CONNECT was answered. */
TRAWL_HIDDEN bool tr_live_connected(const struct rconn *c);
/* A producer that only counts a cut's cost (HELLO flag RELAY_HELLO_COUNT,
 * not resumable) is told PROGRESS every this many messages, and at the
 * sweep when some are untold (resumable ones at every read). */
#define RELAY_PROGRESS_EVERY 32

/*
 * The relay's state without its loop or sockets, for the fuzz target:
 * tr_relay_state_new() (o->output must exist; nothing is bound; free with
 * trawl_relay_free), connections made with tr_relay_conn_new() and fed
 * bytes as if received (tr_relay_conn_feed: 0, or -1 once the relay would
 * close it; replies pile up in c->out), tr_relay_conn_close(), and
 * tr_live_tick() as the loop would call it.
 */
TRAWL_HIDDEN struct trawl_relay *tr_relay_state_new(const struct trawl_relay_opts *o);
TRAWL_HIDDEN struct rconn *tr_relay_conn_new(struct trawl_relay *r, enum rconn_kind kind);
TRAWL_HIDDEN int tr_relay_conn_feed(struct rconn *c, const void *p, size_t n);
TRAWL_HIDDEN void tr_relay_conn_close(struct rconn *c);
/* The cap of pending connections of a kind (relay.c, "Peers that prove
 * nothing"). */
TRAWL_HIDDEN int tr_relay_pending_cap(const struct trawl_relay *r, enum rconn_kind kind);

#endif
