/* SPDX-License-Identifier: MIT */
/*
 * lib/net/httpd.c - the small hostile-by-default HTTP server (httpd.h):
 * one thread, one poll(2) over the listener, a stop eventfd and at most
 * max_conns non-blocking connections.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/httpd.h"
#include "net/sock.h"
#include "util/clock.h"
#include "util/http.h"

struct hconn {
	int fd;				/* -1: free slot */
	int64_t deadline;		/* ms: the exchange ends then */
	char *in;			/* max_req + 1 bytes */
	size_t inlen;
	char *out;			/* the answer, header and body */
	size_t outlen, outoff;
	bool draining;			/* answered, our side shut: the peer's
					 * bytes are read and dropped until its
					 * EOF (a close with unread input would
					 * reset the connection, the answer lost) */
};

#define NREJECT 4	/* slots for 503s beyond max_conns */

struct tr_httpd {
	struct tr_httpd_opts o;
	char *token;
	int lfd, stopfd;
	char at[300];
	unsigned port;
	pthread_t thread;
	bool started;
	struct hconn *conns;
	struct tr_httpd_stats st;	/* written by the thread, read relaxed */
};

static void bump(unsigned long *n)
{
	__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
}

static void conn_close(struct hconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->out);
	c->out = NULL;
	c->inlen = c->outlen = c->outoff = 0;
	c->draining = false;
}

#define DRAIN_MS 1000	/* at most, after the answer */

static void conn_drain(struct hconn *c)
{
	char b[4096];

	for (;;) {
		ssize_t n = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		conn_close(c);	/* EOF, or an error */
		return;
	}
}

static const char *reason(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

/* Makes c's answer (header + body, taken: freed here); c then writes it. */
static void answer(struct hconn *c, int code, const char *type, char *body, size_t blen,
		   bool head)
{
	char hdr[512];
	int hl = snprintf(hdr, sizeof(hdr),
			  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			  "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n",
			  code, reason(code), type ? type : "text/plain; charset=utf-8", blen,
			  code == 401 ? "WWW-Authenticate: Bearer\r\n" : "");
	size_t n = (size_t)hl + (head ? 0 : blen);

	free(c->out);
	c->out = malloc(n ? n : 1);
	if (!c->out) {
		free(body);
		conn_close(c);
		return;
	}
	memcpy(c->out, hdr, (size_t)hl);
	if (!head && blen)
		memcpy(c->out + hl, body, blen);
	free(body);
	c->outlen = n;
	c->outoff = 0;
}

static void answer_text(struct hconn *c, int code, const char *text)
{
	char *b = strdup(text);

	answer(c, code, NULL, b, b ? strlen(b) : 0, false);
}

/* Constant-time: the token's bytes do not leak through the time taken. */
static bool token_ok(const char *want, const char *got)
{
	size_t n = strlen(want), m = strlen(got);
	unsigned char d = n != m;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(want[i] ^ (i < m ? got[i] : 0));
	return !d;
}

static void handle(struct tr_httpd *h, struct hconn *c)
{
	struct tr_httpd_req req = { 0 };
	int m = tr_http_request(c->in, c->inlen, req.path, sizeof(req.path));

	if (m == -EAGAIN) {
		if (c->inlen >= h->o.max_req) {
			bump(&h->st.too_large);
			answer_text(c, 431, "request too large\n");
		}
		return;
	}
	if (m < 0) {
		bump(&h->st.bad);
		answer_text(c, m == -ENOTSUP ? 405 : 400,
			    m == -ENOTSUP ? "only GET and HEAD\n" : "bad request\n");
		return;
	}
	req.method = m;
	if (h->token) {
		char auth[512];

		if (tr_http_header(c->in, c->inlen, "Authorization", auth, sizeof(auth)) < 0 ||
		    strncasecmp(auth, "Bearer ", 7) || !token_ok(h->token, auth + 7)) {
			bump(&h->st.unauthorized);
			answer_text(c, 401, "a bearer token is needed\n");
			return;
		}
	}
	if (tr_http_header(c->in, c->inlen, "Accept", req.accept, sizeof(req.accept)) < 0)
		req.accept[0] = 0;
	struct tr_httpd_resp resp = { 0 };

	h->o.handler(h->o.arg, &req, &resp);
	bump(&h->st.requests);
	answer(c, resp.code ? resp.code : 500, resp.type, resp.body, resp.len,
	       m == TR_HTTP_HEAD);
}

static void conn_input(struct tr_httpd *h, struct hconn *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->inlen, h->o.max_req - c->inlen, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(c);	/* gone before its request was whole */
			return;
		}
		c->inlen += (size_t)n;
		handle(h, c);
		if (c->fd < 0 || c->out || c->inlen >= h->o.max_req)
			return;
	}
}

static void conn_output(struct hconn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			break;
		c->outoff += (size_t)n;
	}
	/* all sent (or the peer gone): our side shuts; the peer reads the
	 * end of the body, then EOF; what it still sends is dropped until
	 * its own EOF, for at most DRAIN_MS */
	shutdown(c->fd, SHUT_WR);
	free(c->out);
	c->out = NULL;
	c->draining = true;
	int64_t end = tr_mono_ms() + DRAIN_MS;

	if (end < c->deadline)
		c->deadline = end;
	conn_drain(c);
}

static void accept_some(struct tr_httpd *h)
{
	for (int i = 0; i < 16; i++) {
		int fd = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		struct hconn *c = NULL;

		for (int k = 0; k < h->o.max_conns && !c; k++)
			if (h->conns[k].fd < 0)
				c = &h->conns[k];
		if (!c) {
			/* over the limit: a 503 from one of the few slots kept
			 * for refusals (answered, then drained), else closed */
			bump(&h->st.too_many);
			for (int k = h->o.max_conns; k < h->o.max_conns + NREJECT && !c; k++)
				if (h->conns[k].fd < 0)
					c = &h->conns[k];
			if (!c) {
				close(fd);
				continue;
			}
			c->fd = fd;
			c->deadline = tr_mono_ms() + DRAIN_MS;
			answer_text(c, 503, "too many connections\n");
			continue;
		}
		c->fd = fd;
		c->inlen = 0;
		c->deadline = tr_mono_ms() + h->o.timeout_ms;
	}
}

static void *run(void *arg)
{
	struct tr_httpd *h = arg;
	int nc = h->o.max_conns + NREJECT;
	struct pollfd *p = calloc((size_t)nc + 2, sizeof(*p));

	if (!p)
		return NULL;
	for (;;) {
		int64_t now = tr_mono_ms(), wait = 1000;

		p[0] = (struct pollfd){ .fd = h->stopfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = h->lfd, .events = POLLIN };
		for (int i = 0; i < nc; i++) {
			struct hconn *c = &h->conns[i];

			p[i + 2] = (struct pollfd){ .fd = c->fd, .events = c->out ? POLLOUT : POLLIN };
			if (c->fd >= 0 && c->out && !c->outoff)
				p[i + 2].events = POLLOUT;
			if (c->fd >= 0 && c->deadline - now < wait)
				wait = c->deadline - now < 0 ? 0 : c->deadline - now;
		}
		int n = poll(p, (nfds_t)nc + 2, (int)wait);

		if (n < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		now = tr_mono_ms();
		for (int i = 0; i < nc; i++) {
			struct hconn *c = &h->conns[i];

			if (c->fd < 0 || p[i + 2].fd != c->fd)
				continue;
			if (c->draining) {
				if (p[i + 2].revents)
					conn_drain(c);
				if (c->fd >= 0 && now >= c->deadline)
					conn_close(c);
				continue;
			}
			if (p[i + 2].revents & (POLLIN | POLLHUP | POLLERR) && !c->out)
				conn_input(h, c);
			if (c->fd >= 0 && c->out && p[i + 2].revents & (POLLOUT | POLLHUP | POLLERR))
				conn_output(c);
			else if (c->fd >= 0 && c->out && !c->outoff)
				conn_output(c);	/* just answered: try at once */
			if (c->fd >= 0 && now >= c->deadline) {
				bump(&h->st.timed_out);
				conn_close(c);
			}
		}
		if (p[1].revents & POLLIN)
			accept_some(h);
	}
	free(p);
	return NULL;
}

bool tr_httpd_addr_loopback(const char *addr)
{
	char host[256];

	if (!addr || !*addr || strspn(addr, "0123456789") == strlen(addr))
		return true;	/* a bare port: 127.0.0.1 */
	const char *colon = strrchr(addr, ':');
	size_t n = colon ? (size_t)(colon - addr) : strlen(addr);

	if (*addr == '[' && n >= 2 && addr[n - 1] == ']') {
		addr++;
		n -= 2;
	}
	if (n >= sizeof(host))
		return false;
	memcpy(host, addr, n);
	host[n] = 0;
	return !strncmp(host, "127.", 4) || !strcmp(host, "::1") || !strcmp(host, "localhost");
}

struct tr_httpd *tr_httpd_new(const struct tr_httpd_opts *o, char *err, size_t errlen)
{
	struct tr_httpd *h = calloc(1, sizeof(*h));

	if (!h || !o || !o->handler) {
		free(h);
		errno = h ? EINVAL : ENOMEM;
		tr_seterr(err, errlen, errno, "metrics server: %s", strerror(errno));
		return NULL;
	}
	h->o = *o;
	h->lfd = h->stopfd = -1;
	if (h->o.max_conns <= 0)
		h->o.max_conns = 8;
	if (!h->o.max_req)
		h->o.max_req = 4096;
	if (!h->o.timeout_ms)
		h->o.timeout_ms = 5000;
	h->o.addr = NULL;
	h->conns = calloc((size_t)h->o.max_conns + NREJECT, sizeof(*h->conns));
	if (o->token && !(h->token = strdup(o->token)))
		goto nomem;
	if (!h->conns)
		goto nomem;
	for (int i = 0; i < h->o.max_conns + NREJECT; i++) {
		h->conns[i].fd = -1;
		if (!(h->conns[i].in = malloc(h->o.max_req + 1)))
			goto nomem;
	}
	int fd = tr_net_listen(o->addr, "127.0.0.1", 0, h->at, sizeof(h->at), &h->port, err,
			       errlen);

	if (fd < 0) {
		errno = -fd;
		goto fail;
	}
	h->lfd = fd;
	h->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->stopfd < 0 || (errno = pthread_create(&h->thread, NULL, run, h))) {
		tr_seterr(err, errlen, errno, "metrics server: %s", strerror(errno));
		goto fail;
	}
	h->started = true;
	return h;
nomem:
	errno = ENOMEM;
	tr_seterr(err, errlen, ENOMEM, "metrics server: out of memory");
fail: {
	int e = errno;

	tr_httpd_free(h);
	errno = e;
	return NULL;
}
}

const char *tr_httpd_addr(const struct tr_httpd *h)
{
	return h->at;
}

unsigned tr_httpd_port(const struct tr_httpd *h)
{
	return h->port;
}

void tr_httpd_stats(const struct tr_httpd *h, struct tr_httpd_stats *s)
{
	const unsigned long *src = (const unsigned long *)&h->st;
	unsigned long *dst = (unsigned long *)s;

	for (size_t i = 0; i < sizeof(*s) / sizeof(unsigned long); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void tr_httpd_free(struct tr_httpd *h)
{
	if (!h)
		return;
	if (h->started) {
		uint64_t one = 1;

		if (write(h->stopfd, &one, sizeof(one)) < 0) {
			/* cannot fail on an eventfd below its maximum */
		}
		pthread_join(h->thread, NULL);
	}
	for (int i = 0; h->conns && i < h->o.max_conns + NREJECT; i++) {
		conn_close(&h->conns[i]);
		free(h->conns[i].in);
	}
	free(h->conns);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->stopfd >= 0)
		close(h->stopfd);
	free(h->token);
	free(h);
}
