/* SPDX-License-Identifier: MIT */
/*
 * lib/sync/probe.c - the probe engine (<trawl/probe.h>): UDP probes
 * exchanged with peer nodes, recorded as sync points in DIR/HOST/sync/.
 *
 * One socket (it listens, and sends from the same port) and one loop in
 * the caller's thread: poll() until the next send tick, a datagram, or a
 * stop (trawl_probe_stop() sets a flag and writes an eventfd, both safe in
 * a signal handler, so a stop is never missed between the check and the
 * wait). Clock: the node's CLOCK_MONOTONIC in ns (as seen in its time
 * namespace), epoch offset = CLOCK_REALTIME - CLOCK_MONOTONIC at start,
 * or the options' offset.
 *
 * Datagram (big-endian, 16 + S + D bytes, D and S >= 1):
 *   "TRWP" | version 1 | type 1 | S | D | key u64 | sender[S] | receiver[D]
 * A probe naming another receiver (a peer's address mistaken for ours), or
 * this node as sender, or malformed, is counted and not recorded.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "internal.h"
#include "util/clock.h"
#include "trawl/ctf.h"
#include "trawl/probe.h"
#include "trawl/relay.h"
#include "trawl/sync-schema.h"

#define NS		1000000000LL
#define MAX_NAME	TRAWL_PROBE_MAX_NAME
#define HDR_LEN		16
#define MAX_DGRAM	(HDR_LEN + 2 * 255)
#define VERSION		1
#define TYPE_PROBE	1

struct peer {
	char name[MAX_NAME + 1];
	char addr_text[256];		/* ADDR:PORT as given */
	struct sockaddr_storage addr;
	socklen_t alen;
	struct trawl_probe_peer_stats st;
	bool warned;
};

struct trawl_probe {
	char *dir;
	char host[MAX_NAME + 1];
	char listen[256];
	unsigned rate;
	int64_t duration_ns;
	struct peer *peers;
	size_t npeers;
	void (*log)(void *arg, const char *msg);
	void *log_arg;

	int fd, wakefd;
	struct sockaddr_storage laddr;
	socklen_t llen;
	struct trawl_ctf_writer *w;
	struct trawl_ctf_wstream *ws;
	const struct trawl_ctf_event_class *ec_send, *ec_recv;
	uint32_t sender_id;
	uint32_t seq;
	struct trawl_probe_stats st;
	int64_t live_ns;		/* streamed to a relay: a live tick this often */
	char where[300];		/* the trace: "DIR/HOST/sync", or the relay's */
	int werr;			/* first writer error (-errno) */
	int stop;			/* atomic: trawl_probe_stop() was called */
	bool ran;
};

__attribute__((format(printf, 2, 3)))
static void warn(struct trawl_probe *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!p->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->log(p->log_arg, msg);
}

/* ------------------------------------------------------------ names, addresses */

bool trawl_probe_name_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n < 1 || n > MAX_NAME)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* A port number: digits only, <= 65535. */
static int parse_port(const char *s, unsigned *v)
{
	char *end;
	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (errno || *end || x > 65535)
		return -1;
	*v = (unsigned)x;
	return 0;
}

int trawl_probe_addr_parse(const char *text, bool listen, struct sockaddr_storage *ss,
			   socklen_t *len, char *err, size_t errlen)
{
	char host[256], *port;
	size_t n = text ? strlen(text) : 0;

	if (n == 0 || n >= sizeof(host))
		return tr_seterr(err, errlen, EINVAL, "not ADDR:PORT");
	memcpy(host, text, n + 1);
	char *h = host;
	if (host[0] == '[') {
		char *e = strchr(host, ']');
		if (!e || e[1] != ':')
			return tr_seterr(err, errlen, EINVAL, "not [ADDR]:PORT");
		*e = 0;
		h = host + 1;
		port = e + 2;
	} else {
		port = strrchr(host, ':');
		if (!port)
			return tr_seterr(err, errlen, EINVAL, "no :PORT");
		*port++ = 0;
		if (strchr(host, ':'))
			return tr_seterr(err, errlen, EINVAL,
				      "an IPv6 address goes in brackets, [ADDR]:PORT");
	}
	unsigned p;
	if (parse_port(port, &p) || (!listen && p == 0))
		return tr_seterr(err, errlen, EINVAL, "bad port '%s' (%s)", port,
			      listen ? "0..65535" : "1..65535");
	if (!*h || !strcmp(h, "*"))
		h = listen ? NULL : (char *)"localhost";
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_DGRAM,
		.ai_flags = AI_NUMERICSERV | (listen ? AI_PASSIVE : 0),
	}, *res = NULL;
	if (listen && !h)
		hints.ai_family = AF_INET;
	int r = getaddrinfo(h, port, &hints, &res);
	if (r || !res)
		return tr_seterr(err, errlen, EINVAL, "%s",
			      r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;
		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s->sin_port));
	} else {
		const struct sockaddr_in6 *s = (const void *)ss;
		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(s->sin6_port));
	}
}

void trawl_probe_listen_addr(const struct trawl_probe *p, char *buf, size_t len)
{
	format_addr(&p->laddr, buf, len);
}

/* ------------------------------------------------------------ setting up */

static int add_peers(struct trawl_probe *p, const struct trawl_probe_opts *o, char *err,
		     size_t errlen)
{
	if (o->npeers > TRAWL_PROBE_MAX_PEERS)
		return tr_seterr(err, errlen, EINVAL, "more than %d peers", TRAWL_PROBE_MAX_PEERS);
	if (o->npeers && !(p->peers = calloc(o->npeers, sizeof(*p->peers))))
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	for (size_t i = 0; i < o->npeers; i++) {
		const struct trawl_probe_peer *in = &o->peers[i];
		struct peer *q = &p->peers[i];
		char why[200];
		if (!trawl_probe_name_valid(in->name))
			return tr_seterr(err, errlen, EINVAL,
				      "bad peer name '%s' (letters, digits, '-', '_', '.')",
				      in->name ? in->name : "");
		if (!strcmp(in->name, p->host))
			return tr_seterr(err, errlen, EINVAL, "peer '%s' is this node", in->name);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(p->peers[j].name, in->name))
				return tr_seterr(err, errlen, EINVAL, "peer '%s' given twice", in->name);
		memcpy(q->name, in->name, strlen(in->name) + 1);
		snprintf(q->addr_text, sizeof(q->addr_text), "%s", in->addr ? in->addr : "");
		if (trawl_probe_addr_parse(in->addr, false, &q->addr, &q->alen, why, sizeof(why)))
			return tr_seterr(err, errlen, EINVAL, "peer %s: address '%s': %s", q->name,
				      q->addr_text, why);
		p->npeers++;
	}
	return 0;
}

static int setup_socket(struct trawl_probe *p, char *err, size_t errlen)
{
	char why[300];
	if (trawl_probe_addr_parse(p->listen, true, &p->laddr, &p->llen, why, sizeof(why)))
		return tr_seterr(err, errlen, EINVAL, "listen address '%s': %s", p->listen, why);
	int fam = p->laddr.ss_family;
	for (size_t i = 0; i < p->npeers; i++) {
		struct peer *q = &p->peers[i];
		if (q->addr.ss_family == fam)
			continue;
		if (fam == AF_INET6 && q->addr.ss_family == AF_INET) {
			/* an IPv4 peer from an IPv6 socket: the v4-mapped address */
			struct sockaddr_in v4;
			struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
			memcpy(&v4, &q->addr, sizeof(v4));
			v6.sin6_port = v4.sin_port;
			v6.sin6_addr.s6_addr[10] = v6.sin6_addr.s6_addr[11] = 0xff;
			memcpy(&v6.sin6_addr.s6_addr[12], &v4.sin_addr, 4);
			memcpy(&q->addr, &v6, sizeof(v6));
			q->alen = sizeof(v6);
			continue;
		}
		return tr_seterr(err, errlen, EINVAL,
			      "peer %s (%s) is IPv6 but the listen address %s is IPv4 "
			      "(use --listen [::]:PORT)", q->name, q->addr_text, p->listen);
	}
	p->fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return tr_seterr(err, errlen, errno, "socket: %s", strerror(errno));
	int off = 0, rcvbuf = 1 << 20;
	if (fam == AF_INET6)
		setsockopt(p->fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	/* room for bursts while we send; the kernel caps it at rmem_max */
	setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(p->fd, (struct sockaddr *)&p->laddr, p->llen) < 0)
		return tr_seterr(err, errlen, errno, "cannot listen on %s: %s", p->listen,
			      strerror(errno));
	p->llen = sizeof(p->laddr);
	getsockname(p->fd, (struct sockaddr *)&p->laddr, &p->llen);
	return 0;
}

/*
 * The clock's uuid. Outside a time namespace (or in one that does not shift
 * CLOCK_MONOTONIC) it is the writer's default, the boot_id, shared with the
 * node's other traces. In a namespace whose CLOCK_MONOTONIC is shifted the
 * clock is another one: the boot_id mixed with the offset (so every such
 * namespace of a boot has its own uuid, the same for all its traces).
 * Returns false when the default applies.
 */
static bool timens_clock_uuid(uint8_t uuid[16])
{
	int64_t off;
	if (tr_timens_monotonic(&off) < 0 || off == 0)
		return false;
	tr_uuid_boot_id(uuid);
	uint64_t x = (uint64_t)off;
	for (int i = 0; i < 8; i++) {	/* splitmix-like mixing of the offset */
		x ^= x >> 31;
		x *= 0x9e3779b97f4a7c15ull;
		uuid[i] ^= (uint8_t)(x >> 56);
		uuid[8 + i] ^= (uint8_t)(x >> 48);
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
	return true;
}

static int trace_open(struct trawl_probe *p, const struct trawl_probe_opts *o, char *err,
		      size_t errlen)
{
	char *path = NULL, *meta = NULL;
	int ret = 0;
	const char *relay = o->relay;	/* (o: trawl_probe_new()'s whole copy) */

	if (p->dir && asprintf(&path, "%s/%s/sync", p->dir, p->host) < 0) {
		path = NULL;
		goto nomem;
	}
	if (path && asprintf(&meta, "%s/metadata", path) < 0) {
		meta = NULL;
		goto nomem;
	}
	struct stat st;
	if (meta && stat(meta, &st) == 0 && !o->force) {
		ret = tr_seterr(err, errlen, EEXIST,
			     "%s already holds a trace (use --force to overwrite it)", path);
		goto out;
	}
	struct trawl_ctf_dest *dest = NULL;
	char rerr[300] = "";
	if (relay) {
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = relay, .session = o->session, .trace = "sync",
			.live_timer_us = o->live_timer_us ? o->live_timer_us : 100000,
			.secret_file = o->secret_file,
		};
		if (!(dest = trawl_relay_dest_new(&ro)))
			goto nomem;
		p->live_ns = (int64_t)ro.live_timer_us * 1000;
	}
	snprintf(p->where, sizeof(p->where), "%s%s%s%s", path ? path : "",
		 path && relay ? " and " : "", relay ? "relay " : "", relay ? relay : "");
	struct trawl_ctf_writer_opts wo = {
		.sz = sizeof(wo),
		.path = path,
		.hostname = p->host,
		.domain = "ust",
		.clock_name = "monotonic",
		/* a small packet: at most a few seconds of probes are lost in a crash */
		.packet_size = 64 * 1024,
		.dest = dest,
		.err = rerr,
		.errlen = sizeof(rerr),
	};
	uint8_t cuuid[16];
	if (timens_clock_uuid(cuuid))
		wo.clock_uuid = cuuid;
	if (o->has_clock_offset && o->clock_offset) {
		int64_t s = o->clock_offset / NS, r = o->clock_offset % NS;
		if (r < 0) {
			r += NS;
			s--;
		}
		wo.clock_offset_s = s;
		wo.clock_offset = r;
	}
	if (!(p->w = trawl_ctf_writer_new(&wo))) {
		/* (the writer freed dest) */
		ret = *rerr ? tr_seterr(err, errlen, errno, "%s", rerr)
			    : tr_seterr(err, errlen, errno, "%s: %s", p->where, strerror(errno));
		goto out;
	}
	if (o->has_clock_offset && !o->clock_offset) {
		/* the writer measures the offset when both are 0: undo that */
		struct trawl_ctf_trace *t = trawl_ctf_writer_trace(p->w);
		t->clocks[0].offset_s = 0;
		t->clocks[0].offset = 0;
	}
	struct trawl_ctf_writer *w = p->w;
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *f = trawl_ctf_type_struct(w);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	if (!u64 || !str || !f || !sc)
		ret = -ENOMEM;
	if (!ret)
		ret = trawl_ctf_struct_add(w, f, TRAWL_SYNC_PROBE_KEY, u64);
	if (!ret)
		ret = trawl_ctf_struct_add(w, f, TRAWL_SYNC_PROBE_PEER, str);
	/* the env before the stream: streamed, the metadata leaves with it */
	if (!ret)
		ret = trawl_ctf_writer_env_int(w, "probe_sender_id", p->sender_id);
	if (!ret)
		ret = trawl_ctf_writer_env_int(w, "probe_rate", p->rate);
	if (!ret &&
	    (!(p->ec_send = trawl_ctf_writer_event_class(w, sc, TRAWL_SYNC_PROBE_SEND, INT64_MIN, f)) ||
	     !(p->ec_recv = trawl_ctf_writer_event_class(w, sc, TRAWL_SYNC_PROBE_RECV, INT64_MIN, f)) ||
	     !(p->ws = trawl_ctf_writer_stream(w, sc, "channel0", 0))))
		ret = -errno;
	if (ret && *rerr)
		tr_seterr(err, errlen, -ret, "%s", rerr);
	else if (ret)
		tr_seterr(err, errlen, -ret, "%s: %s", p->where, strerror(-ret));
	goto out;
nomem:
	ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
out:
	free(meta);
	free(path);
	return ret;
}

static void new_sender_id(struct trawl_probe *p)
{
	uint32_t old = p->sender_id;
	while (p->sender_id == old)
		if (getrandom(&p->sender_id, sizeof(p->sender_id), 0) != sizeof(p->sender_id))
			p->sender_id = (old + 0x9e3779b9u) ^ (uint32_t)tr_clock_ns(CLOCK_MONOTONIC);
}

struct trawl_probe *trawl_probe_new(const struct trawl_probe_opts *o, char *err, size_t errlen)
{
	struct trawl_probe *p = NULL;
	int ret;

	/* the caller's options as far as its struct goes, the rest zero (a
	 * caller built before the relay's options has none) */
	struct trawl_probe_opts oo = { 0 };
	size_t base = offsetof(struct trawl_probe_opts, log_arg) + sizeof(oo.log_arg);
	if (o && o->sz >= base)
		memcpy(&oo, o, o->sz < sizeof(oo) ? o->sz : sizeof(oo));
	if (!o || o->sz < base || ((!o->dir || !*o->dir) && !oo.relay)) {
		ret = tr_seterr(err, errlen, EINVAL, "no options, or no directory and no relay");
		goto err;
	}
	o = &oo;
	if (!trawl_probe_name_valid(o->host)) {
		ret = tr_seterr(err, errlen, EINVAL,
			     "bad host name '%s' (1..%d letters, digits, '-', '_', '.')",
			     o->host ? o->host : "", MAX_NAME);
		goto err;
	}
	if (o->rate > TRAWL_PROBE_MAX_RATE || o->duration_ns < 0) {
		ret = tr_seterr(err, errlen, EINVAL, "rate %u is not in 0..%d, or a negative duration",
			     o->rate, TRAWL_PROBE_MAX_RATE);
		goto err;
	}
	if (!(p = calloc(1, sizeof(*p))) || (o->dir && *o->dir && !(p->dir = strdup(o->dir)))) {
		ret = tr_seterr(err, errlen, ENOMEM, "out of memory");
		goto err;
	}
	p->fd = p->wakefd = -1;
	memcpy(p->host, o->host, strlen(o->host) + 1);
	snprintf(p->listen, sizeof(p->listen), "%s", o->listen ? o->listen : TRAWL_PROBE_LISTEN);
	p->rate = o->rate;
	p->duration_ns = o->duration_ns;
	p->log = o->log;
	p->log_arg = o->log_arg;
	if ((ret = add_peers(p, o, err, errlen)))
		goto err;
	if ((p->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		ret = tr_seterr(err, errlen, errno, "eventfd: %s", strerror(errno));
		goto err;
	}
	new_sender_id(p);
	if ((ret = setup_socket(p, err, errlen)) || (ret = trace_open(p, o, err, errlen)))
		goto err;
	return p;
err:
	trawl_probe_free(p);
	errno = -ret;
	return NULL;
}

void trawl_probe_free(struct trawl_probe *p)
{
	if (!p)
		return;
	trawl_ctf_writer_free(p->w);
	if (p->fd >= 0)
		close(p->fd);
	if (p->wakefd >= 0)
		close(p->wakefd);
	free(p->peers);
	free(p->dir);
	free(p);
}

void trawl_probe_stop(struct trawl_probe *p)
{
	uint64_t one = 1;
	int e = errno;		/* a signal handler must leave errno alone */

	/* release: pairs with the acquire load in trawl_probe_run() */
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	if (write(p->wakefd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, poll() sees it */
	}
	errno = e;
}

void trawl_probe_stats(const struct trawl_probe *p, struct trawl_probe_stats *s)
{
	*s = p->st;
}

int trawl_probe_peer_stats(const struct trawl_probe *p, size_t i,
			   struct trawl_probe_peer_stats *s)
{
	if (i >= p->npeers)
		return -ERANGE;
	*s = p->peers[i].st;
	return 0;
}

/* ------------------------------------------------------------ the trace */

static void record(struct trawl_probe *p, const struct trawl_ctf_event_class *ec, int64_t ts,
		   uint64_t key, const char *peer)
{
	uint8_t mem[16 + MAX_NAME + 1];
	struct trawl_ctf_buf b;

	if (p->werr)
		return;
	trawl_ctf_buf_init(&b, mem, sizeof(mem));
	trawl_ctf_buf_u64(&b, key);
	trawl_ctf_buf_str(&b, peer);
	int r = trawl_ctf_wstream_event(p->ws, ec, (uint64_t)ts, mem, b.len);
	if (r < 0)
		p->werr = r;
}

/* ------------------------------------------------------------ messages */

static size_t build_probe(uint8_t *buf, uint64_t key, const char *from, const char *to)
{
	size_t s = strlen(from), d = strlen(to);
	memcpy(buf, "TRWP", 4);
	buf[4] = VERSION;
	buf[5] = TYPE_PROBE;
	buf[6] = (uint8_t)s;
	buf[7] = (uint8_t)d;
	put_be64(buf + 8, key);
	memcpy(buf + HDR_LEN, from, s);
	memcpy(buf + HDR_LEN + s, to, d);
	return HDR_LEN + s + d;
}

/* Validates a datagram; fills key, sender and receiver names. */
static bool parse_probe(const uint8_t *buf, size_t len, uint64_t *key, char *from, char *to)
{
	if (len < HDR_LEN || memcmp(buf, "TRWP", 4) || buf[4] != VERSION || buf[5] != TYPE_PROBE)
		return false;
	size_t s = buf[6], d = buf[7];
	if (!s || !d || s > MAX_NAME || d > MAX_NAME || len != HDR_LEN + s + d)
		return false;
	*key = get_be64(buf + 8);
	memcpy(from, buf + HDR_LEN, s);
	from[s] = 0;
	memcpy(to, buf + HDR_LEN + s, d);
	to[d] = 0;
	return trawl_probe_name_valid(from) && trawl_probe_name_valid(to);
}

static void send_all(struct trawl_probe *p)
{
	uint8_t buf[MAX_DGRAM];

	for (size_t i = 0; i < p->npeers; i++) {
		struct peer *q = &p->peers[i];
		uint64_t key = ((uint64_t)p->sender_id << 32) | p->seq++;
		if (p->seq == 0)	/* wrapped: a new sender id keeps keys unique */
			new_sender_id(p);
		size_t len = build_probe(buf, key, p->host, q->name);
		int64_t ts = tr_clock_ns(CLOCK_MONOTONIC);	/* immediately before the send */
		ssize_t r = sendto(p->fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&q->addr, q->alen);
		if (r == (ssize_t)len) {
			record(p, p->ec_send, ts, key, q->name);
			q->st.sent++;
			p->st.sent++;
			continue;
		}
		q->st.send_failed++;
		p->st.send_failed++;
		if (!q->warned) {
			warn(p, "sending to %s (%s): %s (counted; warned once per peer)", q->name,
			     q->addr_text, r < 0 ? strerror(errno) : "short send");
			q->warned = true;
		}
	}
}

static void drain(struct trawl_probe *p)
{
	uint8_t buf[MAX_DGRAM + 1];
	char from[MAX_NAME + 1], to[MAX_NAME + 1];

	for (;;) {
		ssize_t r = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);
		int64_t ts = tr_clock_ns(CLOCK_MONOTONIC);	/* immediately after the receive */
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return;	/* EAGAIN, or an ICMP error report: nothing to read */
		}
		uint64_t key;
		if (!parse_probe(buf, (size_t)r, &key, from, to)) {
			p->st.invalid++;
			continue;
		}
		if (strcmp(to, p->host)) {
			if (!p->st.misaddressed++)
				warn(p, "%s sent a probe meant for '%s' to this node (%s): not "
				     "recorded (counted)", from, to, p->host);
			continue;
		}
		if (!strcmp(from, p->host)) {
			p->st.from_self++;
			continue;
		}
		record(p, p->ec_recv, ts, key, from);
		p->st.received++;
		size_t i;
		for (i = 0; i < p->npeers; i++)
			if (!strcmp(p->peers[i].name, from)) {
				p->peers[i].st.received++;
				break;
			}
		if (i == p->npeers)
			p->st.from_unlisted++;
	}
}

/* ------------------------------------------------------------ the loop */

int trawl_probe_run(struct trawl_probe *p, char *err, size_t errlen)
{
	if (p->ran)
		return tr_seterr(err, errlen, EALREADY, "the probe already ran");
	p->ran = true;

	int64_t start = tr_clock_ns(CLOCK_MONOTONIC);
	int64_t end = p->duration_ns > 0 ? start + p->duration_ns : INT64_MAX;
	int64_t interval = p->rate ? NS / p->rate : 0;
	int64_t next = start, next_live = p->live_ns ? start + p->live_ns : INT64_MAX;
	struct pollfd pfd[2] = { { .fd = p->fd, .events = POLLIN },
				 { .fd = p->wakefd, .events = POLLIN } };
	int ret = 0;

	/* acquire: pairs with the release store in trawl_probe_stop() */
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) && !p->werr) {
		int64_t now = tr_clock_ns(CLOCK_MONOTONIC);
		if (now >= end)
			break;
		if (interval && p->npeers && now >= next) {
			send_all(p);
			next += interval;
			now = tr_clock_ns(CLOCK_MONOTONIC);
			if (next < now - interval) {	/* fell behind: skip, do not burst */
				p->st.ticks_late += (uint64_t)((now - next) / interval);
				next = now;
			}
		}
		if (now >= next_live) {
			/* streamed live: what was recorded goes to the relay now
			 * (a packet, or a beacon: nothing before now) */
			int tr = trawl_ctf_wstream_tick(p->ws, (uint64_t)now);
			if (tr < 0 && tr != -EINVAL && !p->werr)
				p->werr = tr;
			next_live = now + p->live_ns;
		}
		int64_t until = interval && p->npeers && next < end ? next : end;
		if (next_live < until)
			until = next_live;
		int64_t wait = until - now;
		if (wait < 0)
			wait = 0;
		struct timespec to = { .tv_sec = wait / NS, .tv_nsec = wait % NS };
		int r = ppoll(pfd, 2, until == INT64_MAX ? NULL : &to, NULL);
		if (r < 0 && errno != EINTR) {
			ret = tr_seterr(err, errlen, errno, "poll: %s", strerror(errno));
			break;
		}
		if (r > 0 && (pfd[0].revents & (POLLIN | POLLERR)))
			drain(p);
	}
	/* what arrived before the end */
	drain(p);
	int cr = trawl_ctf_writer_close(p->w);
	if (!p->werr && cr < 0)
		p->werr = cr;
	if (p->werr && !ret)
		ret = tr_seterr(err, errlen, -p->werr, "writing %s: %s", p->where,
			     strerror(-p->werr));
	return ret;
}
