/* SPDX-License-Identifier: MIT */
/*
 * lib/view/serve.c - the page and its tiles over HTTP on loopback, for
 * sessions whose page would be too large for one file (docs/view.md):
 * GET / is the page without its tiles, GET /tile/ID one tile's deflated
 * bytes. One connection at a time (the page asks for a tile when it first
 * shows it), each closed after its answer; bound to 127.0.0.1 only.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "net/sock.h"
#include "util/http.h"
#include "view-internal.h"

#define REQ_MAX 8192

static void answer(int fd, const struct trawl_view *v, const struct tr_vbuf *page)
{
	char req[REQ_MAX], path[256], head[256];
	size_t len = 0;
	int m = -EAGAIN;
	const void *body = NULL;
	size_t blen = 0;
	const char *type = "text/plain", *status = "404 Not Found";

	while (len < sizeof(req) && m == -EAGAIN) {
		ssize_t n = read(fd, req + len, sizeof(req) - len);

		if (n <= 0)
			return;	/* closed, or the 2 s timeout */
		len += (size_t)n;
		m = tr_http_request(req, len, path, sizeof(path));
	}
	if (m < 0) {
		status = m == -ENOTSUP ? "405 Method Not Allowed" : "400 Bad Request";
	} else if (!strcmp(path, "/") || !strcmp(path, "/index.html")) {
		status = "200 OK";
		type = "text/html; charset=utf-8";
		body = page->p;
		blen = page->len;
	} else if (!strncmp(path, "/tile/", 6)) {
		char *end;
		unsigned long long id = strtoull(path + 6, &end, 10);
		const uint8_t *p;

		if (path[6] && !*end && !tr_view_tile(v, id, &p, &blen)) {
			status = "200 OK";
			type = "application/octet-stream";
			body = p;
		}
	}
	int hl = snprintf(head, sizeof(head),
			  "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			  "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
			  status, type, blen);

	if (m != TR_HTTP_GET)
		blen = 0;	/* HEAD, or an error: the header alone */
	(void)tr_net_send2(fd, head, (size_t)hl, body, blen);
}

int trawl_view_serve(struct trawl_view *v, unsigned port, const volatile int *stop,
		     void (*ready)(void *arg, unsigned port), void *arg, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct tr_vbuf page = { 0 };
	int one = 1, fd = -1, rc;

	if (port > 65535)
		return tr_seterr(err, errlen, EINVAL, "port %u: not a port", port);
	if ((rc = trawl_view_build(v, err, errlen)))
		return rc;
	if ((rc = tr_view_page(v, true, &page))) {
		tr_seterr(err, errlen, -rc, "the page: %s", strerror(-rc));
		goto out;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		rc = tr_seterr(err, errlen, errno, "127.0.0.1:%u: %s", port, strerror(errno));
		goto out;
	}
	if (ready)
		ready(arg, ntohs(sa.sin_port));
	while (!stop || !*stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, 200);

		if (n < 0 && errno != EINTR) {
			rc = tr_seterr(err, errlen, errno, "poll: %s", strerror(errno));
			goto out;
		}
		if (n <= 0)
			continue;
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			continue;
		struct timeval tv = { 2, 0 };

		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		answer(c, v, &page);
		close(c);
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	tr_vbuf_release(&page);
	return rc;
}
