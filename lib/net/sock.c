/* SPDX-License-Identifier: MIT */
/* lib/net/sock.c - TCP helpers of the library's network clients (sock.h). */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "net/relay-proto.h"	/* tr_net_split_addr */
#include "net/sock.h"
#include "util/clock.h"

int tr_net_wait(int fd, short ev, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - tr_mono_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = ev };
		int r = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

int tr_net_connect_addr(const struct addrinfo *ai, int64_t deadline)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			ai->ai_protocol);
	if (fd < 0)
		return -errno;
	int ret = 0;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			ret = -errno;
			goto err;
		}
		ret = tr_net_wait(fd, POLLOUT, deadline);
		if (ret)
			goto err;
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			soerr = errno;
		if (soerr) {
			ret = -soerr;
			goto err;
		}
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
err:
	close(fd);
	return ret;
}

int tr_net_connect(const char *host, unsigned port, int64_t deadline, char *err, size_t errlen)
{
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC }, *res;
	int gr = getaddrinfo(host, ps, &hints, &res);
	if (gr) {
		if (errlen)
			snprintf(err, errlen, "%s", gai_strerror(gr));
		return -EHOSTUNREACH;
	}
	int fd = -ECONNREFUSED;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = tr_net_connect_addr(ai, deadline);
		if (fd >= 0 || fd == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	return fd;
}

/* Moves exactly n bytes before deadline: sent to fd (out), else received
 * from it. */
static int full(int fd, uint8_t *b, size_t n, int64_t deadline, bool out)
{
	while (n) {
		ssize_t r = out ? send(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL) :
				  recv(fd, b, n, MSG_DONTWAIT);
		if (r == 0 && !out)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return errno == EPIPE ? -ECONNRESET : -errno;
			int ret = tr_net_wait(fd, out ? POLLOUT : POLLIN, deadline);
			if (ret)
				return ret;
			continue;
		}
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

int tr_net_read_full(int fd, void *buf, size_t n, int64_t deadline)
{
	return full(fd, buf, n, deadline, false);
}

int tr_net_write_full(int fd, const void *buf, size_t n, int64_t deadline)
{
	return full(fd, (uint8_t *)buf, n, deadline, true);	/* (only read) */
}

int tr_net_send2(int fd, const void *hdr, size_t hlen, const void *body, size_t blen)
{
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)body, blen } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = blen ? 2 : 1 };
	while (iov[0].iov_len || iov[1].iov_len) {
		ssize_t r = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < 2 && r > 0; i++) {
			size_t k = (size_t)r < iov[i].iov_len ? (size_t)r : iov[i].iov_len;
			iov[i].iov_base = (char *)iov[i].iov_base + k;
			iov[i].iov_len -= k;
			r -= (ssize_t)k;
		}
		if (!iov[0].iov_len) {
			mh.msg_iov = iov + 1;
			mh.msg_iovlen = 1;
		}
	}
	return 0;
}

int tr_net_listen(const char *spec, const char *def_host, unsigned def_port, char *bound,
		     size_t blen, unsigned *bport, char *err, size_t errlen)
{
	char host[256];
	unsigned port;
	char tmp[300];
	const char *given = spec;
	/* a bare port */
	if (spec && *spec && strspn(spec, "0123456789") == strlen(spec)) {
		snprintf(tmp, sizeof(tmp), "%s:%s", def_host, spec);
		spec = tmp;
	}
	if (!spec || !*spec) {
		snprintf(tmp, sizeof(tmp), "%s:%u", def_host, def_port);
		spec = tmp;
	}
	/* port 0 is allowed here: the kernel picks one */
	char *colon = strrchr(spec, ':');
	bool zero = colon && strcmp(colon, ":0") == 0;
	char zspec[300];	/* not tmp: spec may be tmp already (a bare "0") */
	if (zero) {
		snprintf(zspec, sizeof(zspec), "%.*s:1", (int)(colon - spec), spec);
		spec = zspec;
	}
	if (tr_net_split_addr(spec, host, sizeof(host), &port, def_port) < 0)
		return tr_seterr(err, errlen, EINVAL, "'%s': expected [HOST:]PORT", given ? given : spec);
	if (zero)
		port = 0;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int gr = getaddrinfo(host, ps, &hints, &res);
	if (gr)
		return tr_seterr(err, errlen, EINVAL, "%s: %s", host, gai_strerror(gr));
	int fd = -1, e = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return tr_seterr(err, errlen, e, "%s:%u: %s", host, port, strerror(e));
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char h[INET6_ADDRSTRLEN], p[8];
	*bport = port;
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&sa, sl, h, sizeof(h), p, sizeof(p),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
		snprintf(bound, blen, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h, p);
		*bport = (unsigned)atoi(p);
	} else {
		snprintf(bound, blen, "%s:%u", host, port);
	}
	return fd;
}
