/* SPDX-License-Identifier: MIT */
/*
 * lib/net/relay-out.c - a producer's connection to `trawl relay`: connect,
 * HELLO, WELCOME; then the writer sends METADATA, STREAM, PACKET and BEACON
 * messages (relay-proto.h), and CLOSE, whose ACK says the trace is on the
 * relay's disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "net/relay-proto.h"
#include "net/sock.h"

struct relay_out {
	int fd;
	char addr[300];
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A connection to ai (tr_net_connect_addr), blocking, with the options of
 * a producer's: the socket, or -errno. */
static int connect_one(const struct addrinfo *ai, int64_t deadline)
{
	int fd = tr_net_connect_addr(ai, deadline);
	if (fd < 0)
		return fd;
	int ret;
	/* blocking from now on: the writer's sends wait for the network */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		ret = -errno;
		goto err;
	}
	/* a relay that stops reading, or a network that swallows everything,
	 * fails the sends within seconds instead of stalling the recorder */
	int one = 1, idle = 10, intvl = 5, cnt = 3;
	unsigned user_ms = RELAY_SEND_TIMEOUT_MS;
	struct timeval tv = { RELAY_SEND_TIMEOUT_MS / 1000, 0 };
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof(user_ms));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
err:
	close(fd);
	return ret;
}

/* Reads one WELCOME or ACK: its status, the relay's message in msg. */
static int read_reply(int fd, enum relay_type want, int64_t deadline, char *msg, size_t msglen)
{
	uint8_t hdr[RELAY_HDR_LEN];
	int ret = tr_net_read_full(fd, hdr, sizeof(hdr), deadline);
	if (ret)
		return ret;
	uint32_t plen = get_le32(hdr + 4);
	if (get_le32(hdr) != want || plen > 4096 || plen < 5)
		return -EPROTO;
	uint8_t buf[RELAY_HDR_LEN + 4096];
	memcpy(buf, hdr, sizeof(hdr));
	ret = tr_net_read_full(fd, buf + RELAY_HDR_LEN, plen, deadline);
	if (ret)
		return ret;
	struct relay_msg m;
	char perr[128];
	if (relay_msg_parse(buf, RELAY_HDR_LEN + plen, &m, perr, sizeof(perr)) <= 0)
		return -EPROTO;
	snprintf(msg, msglen, "%s", m.u.welcome.msg);
	return m.u.welcome.status > 0 ? -EPROTO : m.u.welcome.status;
}

struct relay_out *relay_out_connect(const struct relay_hello *h, char *err, size_t errlen)
{
	char host[256], port[8];
	unsigned p;
	int timeout = h->timeout_ms > 0 ? h->timeout_ms : 5000;
	int64_t deadline = now_ms() + timeout;
	struct relay_out *ro = NULL;
	int ret;

	if (net_split_addr(h->addr, host, sizeof(host), &p, RELAY_DATA_PORT) < 0) {
		seterr(err, errlen, EINVAL, "relay address '%s': expected HOST[:PORT]", h->addr);
		return NULL;
	}
	if (!relay_name_ok(h->session) || !relay_name_ok(h->host) || !relay_name_ok(h->trace)) {
		seterr(err, errlen, EINVAL,
		       "relay: session, host and trace names must be of [A-Za-z0-9._-] ('%s', '%s', '%s')",
		       h->session ? h->session : "", h->host ? h->host : "",
		       h->trace ? h->trace : "");
		return NULL;
	}
	if (strlen(h->host) > RELAY_HOST_MAX) {
		seterr(err, errlen, ENAMETOOLONG,
		       "relay: host name longer than %d bytes (live viewers could not name it)",
		       RELAY_HOST_MAX);
		return NULL;
	}
	snprintf(port, sizeof(port), "%u", p);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC }, *res;
	int gr = getaddrinfo(host, port, &hints, &res);
	if (gr) {
		seterr(err, errlen, EHOSTUNREACH, "relay %s: %s", h->addr, gai_strerror(gr));
		return NULL;
	}
	int fd = -ECONNREFUSED;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = connect_one(ai, deadline);
		if (fd >= 0)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		seterr(err, errlen, -fd, "relay %s: cannot connect: %s", h->addr, strerror(-fd));
		return NULL;
	}

	size_t ls = strlen(h->session) + 1, lh = strlen(h->host) + 1, lt = strlen(h->trace) + 1;
	size_t plen = 4 + 4 + 8 + 16 + ls + lh + lt;
	uint8_t *b = calloc(1, RELAY_HDR_LEN + plen);
	if (!b) {
		ret = -ENOMEM;
		seterr(err, errlen, ENOMEM, "relay: out of memory");
		goto err;
	}
	relay_put_hdr(b, RELAY_HELLO, (uint32_t)plen);
	uint8_t *q = b + RELAY_HDR_LEN;
	put_le32(q, RELAY_VERSION);
	put_le32(q + 4, 0);
	put_le64(q + 8, h->live_timer_us);
	if (h->uuid)
		memcpy(q + 16, h->uuid, 16);
	q += 32;
	memcpy(q, h->session, ls);
	memcpy(q + ls, h->host, lh);
	memcpy(q + ls + lh, h->trace, lt);
	ro = calloc(1, sizeof(*ro));
	if (!ro) {
		free(b);
		ret = -ENOMEM;
		seterr(err, errlen, ENOMEM, "relay: out of memory");
		goto err;
	}
	ro->fd = fd;
	snprintf(ro->addr, sizeof(ro->addr), "%s", h->addr);
	ret = relay_out_send(ro, b, RELAY_HDR_LEN + plen, NULL, 0);
	free(b);
	if (ret) {
		seterr(err, errlen, -ret, "relay %s: %s", h->addr, strerror(-ret));
		goto err;
	}
	char msg[256] = "";
	ret = read_reply(fd, RELAY_WELCOME, deadline, msg, sizeof(msg));
	if (ret) {
		if (*msg)
			seterr(err, errlen, -ret, "relay %s refused %s/%s/%s: %s", h->addr, h->session,
			       h->host, h->trace, msg);
		else
			seterr(err, errlen, -ret, "relay %s: no welcome: %s", h->addr,
			       ret == -EPROTO ? "not a trawl relay" : strerror(-ret));
		goto err;
	}
	return ro;
err:
	free(ro);
	close(fd);
	errno = -ret;
	return NULL;
}

int relay_out_fd(const struct relay_out *ro)
{
	return ro ? ro->fd : -1;
}

int relay_out_send(struct relay_out *ro, const void *hdr, size_t hlen, const void *body,
		   size_t blen)
{
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)body, blen } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = blen ? 2 : 1 };
	while (iov[0].iov_len || iov[1].iov_len) {
		ssize_t r = sendmsg(ro->fd, &mh, MSG_NOSIGNAL);
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

int relay_out_close(struct relay_out *ro, int timeout_ms)
{
	uint8_t hdr[RELAY_HDR_LEN];
	relay_put_hdr(hdr, RELAY_CLOSE, 0);
	int ret = relay_out_send(ro, hdr, sizeof(hdr), NULL, 0);
	if (ret)
		return ret;
	char msg[256];
	return read_reply(ro->fd, RELAY_ACK, now_ms() + (timeout_ms > 0 ? timeout_ms : 10000), msg,
			  sizeof(msg));
}

void relay_out_free(struct relay_out *ro)
{
	if (!ro)
		return;
	close(ro->fd);
	free(ro);
}
