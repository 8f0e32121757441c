/* SPDX-License-Identifier: MIT */
/*
 * lib/agent/client.c - the client side of the agent protocol: one request
 * (CMD: the verb and its arguments), then the answer (OUT and ERR text,
 * END with the status) until the agent closes the connection. What the
 * session commands of `trawl` use, and any program driving an agent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"
#include "trawl/agent.h"
#include "ust/proto.h"

int trawl_agent_request(const char *socket_path, int argc, const char *const *argv,
			void (*out)(void *arg, int stream, const char *text, size_t len),
			void *arg, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	uint8_t *m = NULL;
	int fd = -1, ret;
	if (err && errlen)
		err[0] = 0;
	if (!socket_path || argc < 1 || !argv)
		return tr_seterr(err, errlen, EINVAL, "no socket or no request");
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return tr_seterr(err, errlen, ENAMETOOLONG, "socket path too long: %s", socket_path);
	strcpy(sa.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = tr_seterr(err, errlen, errno, "no agent at %s (%s)", socket_path, strerror(errno));
		goto out;
	}
	m = malloc(AM_MSG_MAX);
	if (!m) {
		ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	struct am_wr w;
	am_wr_init(&w, m, AM_MSG_MAX, AM_CMD);
	for (int i = 0; i < argc; i++)
		am_put_str(&w, argv[i]);
	size_t n = am_wr_done(&w);
	if (!n) {
		ret = tr_seterr(err, errlen, E2BIG, "request too large");
		goto out;
	}
	if (send(fd, m, n, MSG_NOSIGNAL) != (ssize_t)n) {
		ret = tr_seterr(err, errlen, errno ? errno : EIO, "cannot talk to the agent: %s",
			     strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t r = recv(fd, m, AM_MSG_MAX, 0);
		if (r < 0 && errno == EINTR)
			continue;
		struct am_hdr h;
		if (r < (ssize_t)sizeof(h)) {
			ret = tr_seterr(err, errlen, ECONNRESET, "the agent closed the connection");
			goto out;
		}
		memcpy(&h, m, sizeof(h));
		size_t tl = (size_t)r - sizeof(h);
		const char *text = (const char *)m + sizeof(h);
		if (h.type == AM_OUT && out) {
			out(arg, 1, text, tl);
		} else if (h.type == AM_ERR && out) {
			out(arg, 2, text, tl);
		} else if (h.type == AM_END && tl >= sizeof(struct am_end)) {
			struct am_end e;
			memcpy(&e, text, sizeof(e));
			ret = e.status;
			goto out;
		}
	}
out:
	free(m);
	if (fd >= 0)
		close(fd);
	return ret;
}
