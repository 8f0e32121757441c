/* SPDX-License-Identifier: MIT */
/*
 * lib/net/cluster.c - the control client of a relay (trawl/cluster.h,
 * docs/cluster.md): one CLUSTER request on the relay's Unix control
 * socket, its NODE answers, the closing ACK.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "trawl/cluster.h"
#include "net/relay-wr.h"
#include "net/sock.h"
#include "util/clock.h"

/* A reply arrives within the relay's timeout and this margin. */
#define CLIENT_MARGIN_MS 5000

static int connect_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return tr_seterr(err, errlen, EINVAL, "bad control socket path");
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tr_seterr(err, errlen, errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return tr_seterr(err, errlen, e, "%s: %s (is the relay running with --control?)",
				 path, strerror(e));
	}
	return fd;
}

int trawl_cluster_request(const char *path, const char *glob, int argc, char **argv,
			  unsigned timeout_ms,
			  void (*node)(void *arg, const struct trawl_cluster_node *n), void *arg,
			  char *err, size_t errlen)
{
	if (argc < 1 || argc > RELAY_CTL_ARGS_MAX || !argv)
		return tr_seterr(err, errlen, EINVAL, "no request");
	if (!timeout_ms)
		timeout_ms = 15000;
	struct relay_wr w = { 0 };
	tr_relay_wr_begin(&w, RELAY_CLUSTER);
	tr_relay_wr_32(&w, (uint32_t)argc);
	tr_relay_wr_32(&w, timeout_ms);
	tr_relay_wr_str(&w, glob && *glob ? glob : "*");
	for (int i = 0; i < argc; i++)
		tr_relay_wr_str(&w, argv[i]);
	size_t n = tr_relay_wr_done(&w);
	if (!n) {
		free(w.buf);
		return tr_seterr(err, errlen, E2BIG, "the request is too large");
	}
	int fd = connect_unix(path, err, errlen);
	if (fd < 0) {
		free(w.buf);
		return fd;
	}
	int64_t deadline = tr_mono_ms() + timeout_ms + CLIENT_MARGIN_MS;
	int ret = tr_net_write_full(fd, w.buf, n, deadline);
	free(w.buf);
	uint8_t *buf = NULL;
	if (ret < 0) {
		tr_seterr(err, errlen, -ret, "%s: %s", path, strerror(-ret));
		goto out;
	}
	for (;;) {
		uint8_t hdr[RELAY_HDR_LEN];
		ret = tr_net_read_full(fd, hdr, sizeof(hdr), deadline);
		if (ret < 0) {
			tr_seterr(err, errlen, -ret, "the relay's answer: %s", strerror(-ret));
			break;
		}
		uint32_t len = get_le32(hdr + 4);
		if (len > (1u << 24)) {
			ret = tr_seterr(err, errlen, EPROTO, "the relay's answer: a message of %u bytes",
					len);
			break;
		}
		uint8_t *b = realloc(buf, RELAY_HDR_LEN + (size_t)len);
		if (!b) {
			ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
			break;
		}
		buf = b;
		memcpy(buf, hdr, sizeof(hdr));
		ret = tr_net_read_full(fd, buf + RELAY_HDR_LEN, len, deadline);
		if (ret < 0) {
			tr_seterr(err, errlen, -ret, "the relay's answer: %s", strerror(-ret));
			break;
		}
		struct relay_msg m;
		char why[256];
		ssize_t k = tr_relay_msg_parse(buf, RELAY_HDR_LEN + (size_t)len, &m, why, sizeof(why));
		if (k <= 0 || (m.type != RELAY_NODE && m.type != RELAY_ACK)) {
			ret = tr_seterr(err, errlen, EPROTO, "the relay's answer: %s",
					k < 0 ? why : "not a cluster answer");
			break;
		}
		if (m.type == RELAY_ACK) {
			if (m.u.ack.status < 0)
				ret = tr_seterr(err, errlen, -m.u.ack.status, "%s", m.u.ack.msg);
			else
				ret = m.u.ack.status ? 1 : 0;
			break;
		}
		const struct trawl_cluster_node nd = {
			.name = m.u.node.name, .addr = m.u.node.addr,
			.state = (enum trawl_cluster_state)m.u.node.state, .flags = m.u.node.flags,
			.since = m.u.node.since, .offset_ns = m.u.node.offset_ns,
			.rtt_ns = m.u.node.rtt_ns, .buffers = m.u.node.buffers,
			.discarded = m.u.node.discarded, .sessions = m.u.node.sessions,
			.status = m.u.node.status, .t_apply = m.u.node.t_apply,
			.t_done = m.u.node.t_done, .out = m.u.node.out, .err = m.u.node.err,
		};
		if (node)
			node(arg, &nd);
	}
out:
	free(buf);
	close(fd);
	return ret;
}
