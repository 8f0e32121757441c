/* SPDX-License-Identifier: MIT */
/*
 * lib/net/httpd.h - a small HTTP/1.x server on a thread of its own, for
 * endpoints a daemon exposes beside its real work (the relay's and the
 * agent's /metrics, docs/metrics.md). It is hostile by default: a request
 * is at most max_req bytes, the whole exchange (request and answer) must
 * be done within timeout_ms of the accept (a slowloris is closed then),
 * at most max_conns connections at once (a newcomer over it gets a 503
 * and is closed), one request per connection (closed after its answer),
 * every socket non-blocking: a slow or stalled client only holds its own
 * connection, never the thread, nor the daemon whose figures it serves.
 */
#ifndef TRAWL_NET_HTTPD_H
#define TRAWL_NET_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

struct tr_httpd_req {
	int method;			/* TR_HTTP_GET or TR_HTTP_HEAD (util/http.h) */
	char path[256];			/* without the query */
	char accept[512];		/* the Accept header ("" without) */
};

struct tr_httpd_resp {
	int code;			/* 200, 404, ... (set by the handler; 0: 500) */
	const char *type;		/* Content-Type (static storage); NULL: text/plain */
	char *body;			/* malloc'd by the handler, freed by the server */
	size_t len;
};

struct tr_httpd_opts {
	const char *addr;		/* "[HOST:]PORT"; a bare port: on 127.0.0.1 */
	int max_conns;			/* 0: 8 */
	size_t max_req;			/* bytes of a request; 0: 4096 */
	unsigned timeout_ms;		/* of an exchange; 0: 5000 */
	/* Bearer token a request must carry (Authorization: Bearer TOKEN;
	 * else 401); NULL: none asked. Copied. */
	const char *token;
	/* Called on the server's thread for each request that passed the
	 * checks above; fills resp. */
	void (*handler)(void *arg, const struct tr_httpd_req *req, struct tr_httpd_resp *resp);
	void *arg;
};

/* What the server refused, by reason, since it started (read by any
 * thread: relaxed atomics). */
struct tr_httpd_stats {
	unsigned long requests;		/* answered by the handler */
	unsigned long too_many;		/* over max_conns (503) */
	unsigned long too_large;	/* over max_req (431) */
	unsigned long timed_out;	/* closed at timeout_ms */
	unsigned long bad;		/* malformed (400), other methods (405) */
	unsigned long unauthorized;	/* no or a wrong token (401) */
};

struct tr_httpd;

/* Listens on o->addr and starts the thread. NULL + errno, the reason in
 * err. Free with tr_httpd_free (stops the thread, closes everything). */
TRAWL_HIDDEN struct tr_httpd *tr_httpd_new(const struct tr_httpd_opts *o, char *err,
					   size_t errlen);
/* The bound "HOST:PORT" (owned by h), its port. */
TRAWL_HIDDEN const char *tr_httpd_addr(const struct tr_httpd *h);
TRAWL_HIDDEN unsigned tr_httpd_port(const struct tr_httpd *h);
TRAWL_HIDDEN void tr_httpd_stats(const struct tr_httpd *h, struct tr_httpd_stats *s);
/* Whether addr ("[HOST:]PORT", a bare port) listens on loopback only. */
TRAWL_HIDDEN bool tr_httpd_addr_loopback(const char *addr);
TRAWL_HIDDEN void tr_httpd_free(struct tr_httpd *h);

#endif
