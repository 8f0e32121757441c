/* SPDX-License-Identifier: MIT */
/*
 * lib/net/sock.h - TCP helpers of the library's network clients (the
 * producer's connection to a relay, relay-out.c; the live viewer client,
 * live-client.c). Deadlines are in ms of CLOCK_MONOTONIC (tr_mono_ms(),
 * util/clock.h).
 */
#ifndef TRAWL_NET_SOCK_H
#define TRAWL_NET_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Waits for ev (POLLIN, POLLOUT) on fd until deadline: 0 (ready, or an
 * error or hang-up to be found by the next call on fd), -ETIMEDOUT, or
 * -errno from poll. */
TRAWL_HIDDEN int tr_net_wait(int fd, short ev, int64_t deadline);

/* Connects to one address before deadline: the socket (non-blocking,
 * close-on-exec, TCP_NODELAY; the caller closes it) or -errno. */
struct addrinfo;
TRAWL_HIDDEN int tr_net_connect_addr(const struct addrinfo *ai, int64_t deadline);

/*
 * Resolves host (a name, an IPv4 literal or an IPv6 literal without
 * brackets) and connects to the first of its addresses that accepts before
 * deadline. Returns the socket (non-blocking, close-on-exec, TCP_NODELAY;
 * the caller closes it) or -errno: -EHOSTUNREACH with getaddrinfo's
 * message in err when the name does not resolve (err untouched
 * otherwise), else the error of the last address tried (-ECONNREFUSED,
 * -ETIMEDOUT, ...).
 */
TRAWL_HIDDEN int tr_net_connect(const char *host, unsigned port, int64_t deadline, char *err,
				size_t errlen);

/* Reads exactly n bytes before deadline: 0, -ETIMEDOUT, -ECONNRESET (the
 * peer closed or reset the connection), or -errno. */
TRAWL_HIDDEN int tr_net_read_full(int fd, void *buf, size_t n, int64_t deadline);

/* Writes all n bytes before deadline, without SIGPIPE: 0, -ETIMEDOUT,
 * -ECONNRESET (the peer closed: EPIPE or a reset), or -errno. */
TRAWL_HIDDEN int tr_net_write_full(int fd, const void *buf, size_t n, int64_t deadline);
/* Sends hdr then body (blen 0: none), whole, blocking, without SIGPIPE
 * (MSG_NOSIGNAL): 0 or -errno. */
TRAWL_HIDDEN int tr_net_send2(int fd, const void *hdr, size_t hlen, const void *body, size_t blen);

/*
 * Listens (non-blocking, close-on-exec, SO_REUSEADDR, backlog 64) on spec:
 * "[HOST:]PORT", a bare PORT (on def_host), or NULL / "" (def_host:
 * def_port); port 0: any free one. The bound address goes to bound[blen]
 * as "HOST:PORT" ("[V6]:PORT") and its port to *bport. Returns the socket,
 * or -errno with the reason in err (EINVAL: not an address).
 */
TRAWL_HIDDEN int tr_net_listen(const char *spec, const char *def_host, unsigned def_port,
			       char *bound, size_t blen, unsigned *bport, char *err,
			       size_t errlen);

#endif
