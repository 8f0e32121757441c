/* SPDX-License-Identifier: MIT */
/*
 * lib/net/reconnect.h - a resumable producer's sender (docs/relay.md,
 * "Cut off: reconnect and resume"): the messages of one trace to a relay,
 * from a thread of its own, kept until the relay says it wrote them
 * (PROGRESS). When the connection breaks (the relay restarted, the link
 * went down), the sender reconnects with a bounded, jittered backoff,
 * says HELLO again with RELAY_HELLO_RESUME, announces its streams again
 * and sends again what the relay did not confirm (the metadata from where
 * the relay's ends). Meanwhile the messages wait in its budget; once it is
 * full, tr_rsend_put() waits (the writer stalls, and the ring buffers
 * behind it discard and count, as for a slow disk).
 */
#ifndef TRAWL_NET_RECONNECT_H
#define TRAWL_NET_RECONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/*
 * Connects and says HELLO (with RELAY_HELLO_RESUME): the socket, with
 * *meta_len the metadata bytes the relay holds (RESUMED); or -errno with
 * the reason in err, *refused set when the relay answered with a refusal
 * (not retried).
 */
typedef int (*tr_rsend_hello_fn)(void *arg, uint64_t *meta_len, int *refused, char *err,
				 size_t errlen);

struct rsend_opts {
	size_t budget;			/* bytes of messages kept */
	int fd;				/* connected, after a WELCOME of 0 */
	tr_rsend_hello_fn hello;	/* to connect again */
	void *arg;
	unsigned resume_ms;		/* how long to try again before giving up */
	const char *addr;		/* the relay, for messages */
	/* Optional: called from q's thread at each DEMAND (after
	 * tr_rsend_demand() says it) and each ask for a horizon (after
	 * tr_rsend_horizon_asked() says it), e.g. to wake the writer's loop. */
	void (*on_demand)(void *arg);
	void *demand_arg;
};

struct rsend;

/* Takes o->fd (closed by tr_rsend_free). NULL and errno on failure (the
 * caller keeps fd then). */
TRAWL_HIDDEN struct rsend *tr_rsend_new(const struct rsend_opts *o);

/*
 * Queues one message (hlen bytes of header and fixed part, then blen of
 * body; a PACKET's events, else 0), waiting while the budget is full. 0, or the error that lost the
 * relay for good (-errno: refused, or unreachable for resume_ms).
 */
TRAWL_HIDDEN int tr_rsend_put(struct rsend *q, const void *hdr, size_t hlen, const void *body,
			      size_t blen, uint64_t events);

/* As tr_rsend_put (no body), but the thread is not woken for it: it goes
 * out with the next message put (a HORIZON ahead of a tick's beacons:
 * one send, one wake of the relay). */
TRAWL_HIDDEN int tr_rsend_put_later(struct rsend *q, const void *hdr, size_t hlen);

/*
 * Sends CLOSE after everything queued and waits for its ACK (again after
 * a resume). 0, or -errno with the relay's reason (or the loss's) in msg.
 */
TRAWL_HIDDEN int tr_rsend_close(struct rsend *q, char *msg, size_t msglen);

/* Until when (CLOCK_MONOTONIC ms) the relay said a live viewer waits on
 * the trace (its last DEMAND, read by q's thread); 0: never said. */
TRAWL_HIDDEN int64_t tr_rsend_demand(struct rsend *q);
/* Whether the relay asked for a newer horizon (an R->P HORIZON) since the
 * last call (which forgets it). */
TRAWL_HIDDEN bool tr_rsend_horizon_asked(struct rsend *q);
/*
 * The events of the PACKETs the relay wrote (each put's events, counted
 * once the relay confirmed it: PROGRESS, the ACK of CLOSE, or a cut's ACK
 * that says what was written) in *events: 0 when exact, -ENODATA when a
 * packet went out on a connection lost without the relay's word (it may
 * or may not be written). Any time; exact once the sender is done.
 */
TRAWL_HIDDEN int tr_rsend_stored(struct rsend *q, uint64_t *events);

/* Why the relay was lost ("" while it is not), owned by q. */
TRAWL_HIDDEN const char *tr_rsend_why(struct rsend *q);

/* Stops the thread (nothing more is sent) and frees. Accepts NULL. */
TRAWL_HIDDEN void tr_rsend_free(struct rsend *q);

#endif
