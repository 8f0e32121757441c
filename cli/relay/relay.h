/* SPDX-License-Identifier: MIT */
/*
 * cli/relay/relay.h - `trawl relay` (docs/relay.md): what the data side
 * (relay.c: producers' traces to disk) and the live side (live.c: LTTng
 * live viewers) share.
 *
 * One thread runs everything from one epoll loop. A producer's connection
 * carries one trace; the traces of one session name and one host name form
 * a viewer session (what `babeltrace2 -i lttng-live
 * net://RELAY/host/HOST/SESSION` attaches to). Everything a viewer reads
 * comes from the files on disk: the relay keeps no packet in memory.
 */
#ifndef TRAWL_CLI_RELAY_H
#define TRAWL_CLI_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct relay_opts {
	const char *output;		/* directory of the sessions */
	const char *data_addr;		/* [HOST:]PORT producers connect to */
	const char *live_addr;		/* [HOST:]PORT live viewers connect to */
	bool foreground;
	const char *pidfile;
	int ready_fd;			/* -1, or "ready\n" written there and closed */
	int max_conns;			/* producers + viewers at once */
};

/* Runs the relay until SIGTERM/SIGINT; returns the exit status. */
int relay_run(const struct relay_opts *o);

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
};

/* A viewer session: the traces of one session name from one host. */
struct rsession {
	uint64_t id;
	char *name, *host;
	uint64_t live_timer_us;
	struct rtrace **traces;
	size_t ntraces;
	int viewers;			/* attached now */
	struct rsession *next;
};

/* A connection: a producer's or a viewer's. */
enum rconn_kind { RC_PRODUCER, RC_VIEWER };
struct rconn {
	enum rconn_kind kind;
	int fd;
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
};

/* Appends n bytes to c's output (sent by the loop). 0, or -ENOMEM (then
 * the connection is closed: its peer would lose its place). */
int rconn_queue(struct rconn *c, const void *p, size_t n);
/* Whether the loop should read more from c (live.c: not while a request
 * of c is held, nor while much of its replies waits to be sent). */
bool live_wants_input(const struct rconn *c);
/* The relay's log (stderr in the foreground, else nowhere). */
void relay_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* live.c: the LTTng live viewer protocol. */
/* Parses and answers every whole request in c->in; returns the bytes
 * consumed, or -1 when the viewer broke the protocol (closed). */
long live_input(struct rconn *c);
void live_conn_free(struct rconn *c);	/* the viewer's state */
/* A trace got packets or beacons, or ended: viewers waiting on it can
 * be answered (live.c keeps requests that wait for data). */
void live_wake(struct rsession *s);
/* Called every loop turn: answers held requests whose wait is over, and
 * requests received while one was held. */
void live_tick(void);
/* Whether a request is held (the loop then wakes often enough). */
bool live_holding(void);

extern struct rsession *relay_sessions;

/*
 * The relay's state without its loop or sockets, for the fuzz target:
 * relay_state_init(), connections made with relay_conn_new() and fed bytes
 * as if received (relay_conn_feed: 0, or -1 once the relay would close
 * it; replies pile up in c->out), relay_conn_close(), relay_state_free().
 */
void relay_state_init(const struct relay_opts *o);
struct rconn *relay_conn_new(enum rconn_kind kind);
int relay_conn_feed(struct rconn *c, const void *p, size_t n);
void relay_conn_close(struct rconn *c);
void relay_state_free(void);

/* Sessions and traces the relay knows (relay.c). */
struct rsession *relay_session_by_id(uint64_t id);
/* Forgets the sessions whose traces all ended and that no viewer reads
 * (their files stay). */
void relay_session_gc(void);
/* SEEK_LAST starts a viewer at the next packet, as lttng-relayd does
 * (else every viewer reads from the first packet). */
extern bool live_from_now;

#endif
