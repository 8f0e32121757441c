/* SPDX-License-Identifier: MIT */
/*
 * trawl probe: exchanges clock-sync probe messages (UDP) with peer nodes and
 * records them as sync points, DIR/HOST/sync/ (a CTF trace, see the sync
 * contract in docs/sync.md):
 *
 *   trawl_sync:probe_send { key, peer }  on the sender, peer = the receiver
 *   trawl_sync:probe_recv { key, peer }  on the receiver, peer = the sender
 *
 * A send's timestamp is taken immediately before the send system call, a
 * receive's immediately after the receive returns, so the recorded interval
 * always contains the true transit (what the convex-hull method needs).
 * Keys are (random 32-bit sender id << 32) | sequence number, unique per
 * sender. Clock: the node's CLOCK_MONOTONIC in ns (as seen in its time
 * namespace), epoch offset = CLOCK_REALTIME - CLOCK_MONOTONIC at start, or
 * --clock-offset.
 *
 * One thread, one UDP socket (it listens, and sends from the same port);
 * the loop waits in ppoll() until the next send tick or a datagram, with
 * SIGINT/SIGTERM unblocked only inside ppoll(), so a signal always ends the
 * loop at once and the trace is finalized (last packet, metadata, index).
 *
 * Datagram (big-endian, 16 + S + D bytes, D and S >= 1):
 *   "TRWP" | version 1 | type 1 | S | D | key u64 | sender[S] | receiver[D]
 * A probe naming another receiver (a peer's address mistaken for ours), or
 * this node as sender, or malformed, is counted and not recorded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "trawl/ctf.h"
#include "cli.h"
#include "config.h"

#define NS		1000000000LL
#define DEFAULT_PORT	"7077"
#define DEFAULT_LISTEN	"0.0.0.0:" DEFAULT_PORT
#define DEFAULT_RATE	100
#define MAX_RATE	100000
#define MAX_NAME	64
#define MAX_PEERS	4096
#define HDR_LEN		16
#define MAX_DGRAM	(HDR_LEN + 2 * 255)
#define VERSION		1
#define TYPE_PROBE	1

struct peer {
	char name[MAX_NAME + 1];
	char addr_text[256];		/* ADDR:PORT as given */
	const char *origin;		/* where it was set */
	struct sockaddr_storage addr;
	socklen_t alen;
	uint64_t sent, send_failed, received;
	bool warned;
};

struct probe {
	const char *out;
	char host[MAX_NAME + 1];
	char listen[256];
	char listen_origin[320];	/* where each setting came from */
	unsigned rate;
	char rate_origin[320];
	struct peer *peers;
	size_t npeers;
	char peers_origin[320];
	double duration;		/* seconds; 0: until a signal */
	bool have_offset;
	int64_t clock_offset;		/* ns, epoch -> clock zero */
	bool force;

	int fd;
	struct sockaddr_storage laddr;
	socklen_t llen;
	struct trawl_ctf_writer *w;
	struct trawl_ctf_wstream *ws;
	const struct trawl_ctf_event_class *ec_send, *ec_recv;
	uint32_t sender_id;
	uint32_t seq;
	/* counters */
	uint64_t sent, send_failed, received, from_unlisted, invalid, misaddressed, from_self;
	int werr;			/* first writer error (-errno) */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static inline int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
	fputs("usage: trawl probe -o DIR [--host NAME] [--listen ADDR:PORT] [--peer NAME=ADDR:PORT]...\n"
	      "                   [--rate N] [--duration SECONDS] [--clock-offset NS] [--force]\n"
	      "       trawl probe --show-config [options]\n"
	      "\n"
	      "Exchanges clock-synchronization probes (UDP) with peer nodes and records\n"
	      "every send and receive in DIR/NAME/sync/, a CTF trace on this node's\n"
	      "CLOCK_MONOTONIC, for 'trawl sync'. Run one on every node, until --duration\n"
	      "or SIGINT/SIGTERM; the trace is then finalized. Settings also come from the\n"
	      "[probe] section of the configuration (trawl.conf; the options win).\n"
	      "\n"
	      "  -o, --output DIR          the session directory; the trace goes to DIR/NAME/sync/\n"
	      "  -H, --host NAME           this node's name (default: the system's host name)\n"
	      "  -l, --listen ADDR:PORT    where to receive probes (default " DEFAULT_LISTEN ";\n"
	      "                            [ADDR]:PORT for IPv6)\n"
	      "  -p, --peer NAME=ADDR:PORT a peer to probe (repeatable; replaces the\n"
	      "                            configuration's peers)\n"
	      "  -r, --rate N              probes per second to each peer, 0..100000 (default\n"
	      "                            100; 0: only receive)\n"
	      "  -d, --duration SECONDS    stop after this long (default: at SIGINT/SIGTERM)\n"
	      "      --clock-offset NS     the trace clock's offset from the epoch, in ns\n"
	      "                            (default: CLOCK_REALTIME - CLOCK_MONOTONIC now)\n"
	      "  -f, --force               overwrite an existing DIR/NAME/sync/ trace\n"
	      "      --show-config         print the settings in effect and where each comes\n"
	      "                            from, then exit\n"
	      "  -h, --help                this help\n", f);
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("trawl probe: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\nTry 'trawl probe --help'.\n", stderr);
	va_end(ap);
	return 2;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
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

static int parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

/*
 * Resolves "ADDR:PORT" ("[V6ADDR]:PORT"; an empty ADDR or "*": any) into
 * *ss. Names are resolved too (getaddrinfo). Returns 0, or -1 with a reason.
 */
static int parse_addr(const char *text, bool passive, struct sockaddr_storage *ss,
		      socklen_t *len, char *why, size_t whylen)
{
	char host[256], *port;
	size_t n = strlen(text);

	if (n == 0 || n >= sizeof(host)) {
		snprintf(why, whylen, "not ADDR:PORT");
		return -1;
	}
	memcpy(host, text, n + 1);
	char *h = host;
	if (host[0] == '[') {
		char *e = strchr(host, ']');
		if (!e || e[1] != ':') {
			snprintf(why, whylen, "not [ADDR]:PORT");
			return -1;
		}
		*e = 0;
		h = host + 1;
		port = e + 2;
	} else {
		port = strrchr(host, ':');
		if (!port) {
			snprintf(why, whylen, "no :PORT");
			return -1;
		}
		*port++ = 0;
		if (strchr(host, ':')) {
			snprintf(why, whylen, "an IPv6 address goes in brackets, [ADDR]:PORT");
			return -1;
		}
	}
	uint64_t p;
	if (parse_uint(port, 65535, &p) || (!passive && p == 0)) {
		snprintf(why, whylen, "bad port '%s' (%s)", port, passive ? "0..65535" : "1..65535");
		return -1;
	}
	if (!*h || !strcmp(h, "*"))
		h = passive ? NULL : (char *)"localhost";
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_DGRAM,
		.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
	}, *res = NULL;
	if (passive && !h)
		hints.ai_family = AF_INET;
	int r = getaddrinfo(h, port, &hints, &res);
	if (r || !res) {
		snprintf(why, whylen, "%s", r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -1;
	}
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

/* "NAME=ADDR:PORT" (command line, sep '=') or "NAME ADDR:PORT" (settings). */
static int add_peer(struct probe *P, const char *spec, int sep, const char *origin,
		    char *why, size_t whylen)
{
	const char *s = spec;
	while (sep == ' ' && (*s == ' ' || *s == '\t'))
		s++;
	const char *e = sep == '=' ? strchr(s, '=') : strpbrk(s, " \t");
	if (!e) {
		snprintf(why, whylen, "'%s' is not %s", spec,
			 sep == '=' ? "NAME=ADDR:PORT" : "'NAME ADDR:PORT'");
		return -1;
	}
	char name[MAX_NAME + 2];
	size_t n = (size_t)(e - s);
	if (n > MAX_NAME) {
		snprintf(why, whylen, "peer name longer than %d characters in '%s'", MAX_NAME, spec);
		return -1;
	}
	memcpy(name, s, n);
	name[n] = 0;
	if (!valid_name(name)) {
		snprintf(why, whylen, "bad peer name '%s' (letters, digits, '-', '_', '.')", name);
		return -1;
	}
	const char *addr = e + 1;
	while (sep == ' ' && (*addr == ' ' || *addr == '\t'))
		addr++;
	char a[256];
	snprintf(a, sizeof(a), "%s", addr);
	for (size_t k = strlen(a); sep == ' ' && k && (a[k - 1] == ' ' || a[k - 1] == '\t'); k--)
		a[k - 1] = 0;
	if (strpbrk(a, " \t")) {
		snprintf(why, whylen, "'%s' is not 'NAME ADDR:PORT'", spec);
		return -1;
	}
	for (size_t i = 0; i < P->npeers; i++)
		if (!strcmp(P->peers[i].name, name)) {
			snprintf(why, whylen, "peer '%s' given twice", name);
			return -1;
		}
	if (P->npeers >= MAX_PEERS) {
		snprintf(why, whylen, "more than %d peers", MAX_PEERS);
		return -1;
	}
	struct peer *np = realloc(P->peers, (P->npeers + 1) * sizeof(*np));
	if (!np) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	P->peers = np;
	struct peer *p = &np[P->npeers];
	memset(p, 0, sizeof(*p));
	memcpy(p->name, name, n + 1);
	snprintf(p->addr_text, sizeof(p->addr_text), "%s", a);
	p->origin = origin;
	char w2[200];
	if (parse_addr(a, false, &p->addr, &p->alen, w2, sizeof(w2))) {
		snprintf(why, whylen, "peer %s: address '%s': %s", name, a, w2);
		return -1;
	}
	P->npeers++;
	return 0;
}

/* ------------------------------------------------------------ the trace */

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
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	char line[128];
	long long s = 0, ns = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "monotonic %lld %lld", &s, &ns) == 2;
	fclose(f);
	if (!found || (s == 0 && ns == 0))
		return false;
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return false;
	char text[64] = "";
	bool ok = fgets(text, sizeof(text), f) != NULL;
	fclose(f);
	size_t k = 0;
	for (char *p = text; ok && *p && *p != '\n' && k < 32; p++) {
		if (*p == '-')
			continue;
		int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (v < 0)
			return false;
		uuid[k / 2] = (uint8_t)(k % 2 ? (uuid[k / 2] << 4) | v : v);
		k++;
	}
	if (!ok || k != 32)
		return false;
	uint64_t x = (uint64_t)s * 1000000000ull + (uint64_t)ns;
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

static int trace_open(struct probe *P, char *err, size_t errlen)
{
	char *path;
	if (asprintf(&path, "%s/%s/sync", P->out, P->host) < 0)
		return -ENOMEM;
	char *meta;
	if (asprintf(&meta, "%s/metadata", path) < 0) {
		free(path);
		return -ENOMEM;
	}
	struct stat st;
	bool exists = stat(meta, &st) == 0;
	free(meta);
	if (exists && !P->force) {
		snprintf(err, errlen, "%s already holds a trace (use --force to overwrite it)", path);
		free(path);
		return -EEXIST;
	}
	struct trawl_ctf_writer_opts o = {
		.sz = sizeof(o),
		.path = path,
		.hostname = P->host,
		.domain = "ust",
		.clock_name = "monotonic",
		/* a small packet: at most a few seconds of probes are lost in a crash */
		.packet_size = 64 * 1024,
	};
	uint8_t cuuid[16];
	if (timens_clock_uuid(cuuid))
		o.clock_uuid = cuuid;
	if (P->have_offset && P->clock_offset) {
		int64_t s = P->clock_offset / NS, r = P->clock_offset % NS;
		if (r < 0) {
			r += NS;
			s--;
		}
		o.clock_offset_s = s;
		o.clock_offset = r;
	}
	P->w = trawl_ctf_writer_new(&o);
	if (!P->w) {
		int ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(path);
		return ret;
	}
	if (P->have_offset && !P->clock_offset) {
		/* the writer measures the offset when both are 0: undo that */
		struct trawl_ctf_trace *t = trawl_ctf_writer_trace(P->w);
		t->clocks[0].offset_s = 0;
		t->clocks[0].offset = 0;
	}
	struct trawl_ctf_writer *w = P->w;
	struct trawl_ctf_type *u64 = trawl_ctf_type_int(w, 64, false, 10);
	struct trawl_ctf_type *str = trawl_ctf_type_string(w);
	struct trawl_ctf_type *f = trawl_ctf_type_struct(w);
	struct trawl_ctf_stream_class *sc = trawl_ctf_writer_stream_class(w, TRAWL_CTF_HEADER_LARGE, NULL);
	int ret = 0;
	if (!u64 || !str || !f || !sc)
		ret = -ENOMEM;
	if (!ret)
		ret = trawl_ctf_struct_add(w, f, "key", u64);
	if (!ret)
		ret = trawl_ctf_struct_add(w, f, "peer", str);
	if (!ret && (!(P->ec_send = trawl_ctf_writer_event_class(w, sc, "trawl_sync:probe_send", INT64_MIN, f)) ||
		     !(P->ec_recv = trawl_ctf_writer_event_class(w, sc, "trawl_sync:probe_recv", INT64_MIN, f)) ||
		     !(P->ws = trawl_ctf_writer_stream(w, sc, "channel0", 0))))
		ret = -errno;
	if (!ret)
		ret = trawl_ctf_writer_env_int(w, "probe_sender_id", P->sender_id);
	if (!ret)
		ret = trawl_ctf_writer_env_int(w, "probe_rate", P->rate);
	if (ret)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	free(path);
	return ret;
}

static void record(struct probe *P, const struct trawl_ctf_event_class *ec, int64_t ts,
		   uint64_t key, const char *peer)
{
	uint8_t mem[16 + MAX_NAME + 1];
	struct trawl_ctf_buf b;

	if (P->werr)
		return;
	trawl_ctf_buf_init(&b, mem, sizeof(mem));
	trawl_ctf_buf_u64(&b, key);
	trawl_ctf_buf_str(&b, peer);
	int r = trawl_ctf_wstream_event(P->ws, ec, (uint64_t)ts, mem, b.len);
	if (r < 0)
		P->werr = r;
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
	for (int i = 0; i < 8; i++)
		buf[8 + i] = (uint8_t)(key >> (56 - 8 * i));
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
	*key = 0;
	for (int i = 0; i < 8; i++)
		*key = (*key << 8) | buf[8 + i];
	memcpy(from, buf + HDR_LEN, s);
	from[s] = 0;
	memcpy(to, buf + HDR_LEN + s, d);
	to[d] = 0;
	return valid_name(from) && valid_name(to);
}

static void new_sender_id(struct probe *P)
{
	uint32_t old = P->sender_id;
	while (P->sender_id == old)
		if (getrandom(&P->sender_id, sizeof(P->sender_id), 0) != sizeof(P->sender_id))
			P->sender_id = (old + 0x9e3779b9u) ^ (uint32_t)mono_ns();
}

static void send_all(struct probe *P)
{
	uint8_t buf[MAX_DGRAM];

	for (size_t i = 0; i < P->npeers; i++) {
		struct peer *p = &P->peers[i];
		uint64_t key = ((uint64_t)P->sender_id << 32) | P->seq++;
		if (P->seq == 0)	/* wrapped: a new sender id keeps keys unique */
			new_sender_id(P);
		size_t len = build_probe(buf, key, P->host, p->name);
		int64_t ts = mono_ns();		/* immediately before the send */
		ssize_t r = sendto(P->fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&p->addr, p->alen);
		if (r == (ssize_t)len) {
			record(P, P->ec_send, ts, key, p->name);
			p->sent++;
			P->sent++;
			continue;
		}
		p->send_failed++;
		P->send_failed++;
		if (!p->warned) {
			fprintf(stderr, "trawl: probe: warning: sending to %s (%s): %s (counted; "
				"warned once per peer)\n", p->name, p->addr_text,
				r < 0 ? strerror(errno) : "short send");
			p->warned = true;
		}
	}
}

static void drain(struct probe *P)
{
	uint8_t buf[MAX_DGRAM + 1];
	char from[MAX_NAME + 1], to[MAX_NAME + 1];

	for (;;) {
		ssize_t r = recv(P->fd, buf, sizeof(buf), MSG_DONTWAIT);
		int64_t ts = mono_ns();		/* immediately after the receive */
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return;	/* EAGAIN, or an ICMP error report: nothing to read */
		}
		uint64_t key;
		if (!parse_probe(buf, (size_t)r, &key, from, to)) {
			P->invalid++;
			continue;
		}
		if (strcmp(to, P->host)) {
			if (!P->misaddressed++)
				fprintf(stderr, "trawl: probe: warning: %s sent a probe meant for '%s' to "
					"this node (%s): not recorded (counted)\n", from, to, P->host);
			continue;
		}
		if (!strcmp(from, P->host)) {
			P->from_self++;
			continue;
		}
		record(P, P->ec_recv, ts, key, from);
		P->received++;
		size_t i;
		for (i = 0; i < P->npeers; i++)
			if (!strcmp(P->peers[i].name, from)) {
				P->peers[i].received++;
				break;
			}
		if (i == P->npeers)
			P->from_unlisted++;
	}
}

/* ------------------------------------------------------------ the loop */

static int run(struct probe *P, sigset_t *waitmask)
{
	int64_t start = mono_ns();
	int64_t end = P->duration > 0 ? start + (int64_t)llround(P->duration * 1e9) : INT64_MAX;
	int64_t interval = P->rate ? NS / P->rate : 0;
	int64_t next = start;
	struct pollfd pfd = { .fd = P->fd, .events = POLLIN };

	while (!stop_signal && !P->werr) {
		int64_t now = mono_ns();
		if (now >= end)
			break;
		if (interval && P->npeers && now >= next) {
			send_all(P);
			next += interval;
			now = mono_ns();
			if (next < now - interval)	/* fell behind: skip, do not burst */
				next = now;
		}
		int64_t until = interval && P->npeers && next < end ? next : end;
		int64_t wait = until - now;
		if (wait < 0)
			wait = 0;
		struct timespec to = { .tv_sec = wait / NS, .tv_nsec = wait % NS };
		int r = ppoll(&pfd, 1, until == INT64_MAX ? NULL : &to, waitmask);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0 && (pfd.revents & (POLLIN | POLLERR)))
			drain(P);
	}
	/* what arrived before the end */
	drain(P);
	return 0;
}

/* ------------------------------------------------------------ settings */

/* Applies the [probe] settings the command line did not give, then defaults. */
static int apply_config(struct probe *P, bool cli_listen, bool cli_rate, bool cli_peers)
{
	char err[600] = "", why[400];
	struct trawl_conf *c = conf_load(err, sizeof(err));
	int ret = 0;

	if (!c)
		return die_msg("probe: settings: %s", err);
	if (!cli_listen) {
		const char *v = conf_get(c, "probe", "listen");
		if (v && *v) {
			if (strlen(v) >= sizeof(P->listen)) {
				ret = die_msg("probe: listen = '%.40s...' (%s): too long", v,
					      conf_origin(c, "probe", "listen"));
				goto out;
			}
			snprintf(P->listen, sizeof(P->listen), "%s", v);
			snprintf(P->listen_origin, sizeof(P->listen_origin), "%s",
				 conf_origin(c, "probe", "listen"));
		} else {
			snprintf(P->listen, sizeof(P->listen), "%s", DEFAULT_LISTEN);
			snprintf(P->listen_origin, sizeof(P->listen_origin), "default");
		}
	}
	if (!cli_rate) {
		const char *v = conf_get(c, "probe", "rate");
		uint64_t r;
		if (v) {
			if (parse_uint(v, MAX_RATE, &r)) {
				ret = die_msg("probe: rate = '%s' (%s): not a number in 0..%d", v,
					      conf_origin(c, "probe", "rate"), MAX_RATE);
				goto out;
			}
			P->rate = (unsigned)r;
			snprintf(P->rate_origin, sizeof(P->rate_origin), "%s",
				 conf_origin(c, "probe", "rate"));
		} else {
			P->rate = DEFAULT_RATE;
			snprintf(P->rate_origin, sizeof(P->rate_origin), "default");
		}
	}
	if (!cli_peers) {
		const char *const *vals;
		size_t n = conf_get_all(c, "probe", "peer", &vals);
		const char *origin = P->peers_origin;
		if (n)
			snprintf(P->peers_origin, sizeof(P->peers_origin), "%s",
				 conf_origin(c, "probe", "peer"));
		for (size_t i = 0; i < n; i++) {
			/* one value may list several peers, separated by commas */
			char *copy = strdup(vals[i]), *save = NULL;
			if (!copy) {
				ret = die_msg("probe: out of memory");
				goto out;
			}
			for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				bool blank = true;
				for (char *q = tok; *q; q++)
					blank = blank && (*q == ' ' || *q == '\t');
				if (blank)
					continue;
				if (add_peer(P, tok, ' ', origin, why, sizeof(why))) {
					ret = die_msg("probe: peer = '%s' (%s): %s", vals[i], origin, why);
					free(copy);
					goto out;
				}
			}
			free(copy);
		}
	}
out:
	conf_free(c);
	return ret;
}

static void show_config(const struct probe *P)
{
	printf("# trawl probe: the settings in effect, each after where it comes from\n"
	       "[probe]\n"
	       "# from: %s\n"
	       "listen = %s\n"
	       "# from: %s\n"
	       "rate = %u\n", P->listen_origin, P->listen, P->rate_origin, P->rate);
	if (P->npeers)
		printf("# from: %s\n", P->peers_origin);
	else
		printf("# no peers\n");
	for (size_t i = 0; i < P->npeers; i++)
		printf("peer = %s %s\n", P->peers[i].name, P->peers[i].addr_text);
}

static int setup_socket(struct probe *P)
{
	char why[300];
	if (parse_addr(P->listen, true, &P->laddr, &P->llen, why, sizeof(why)))
		return die_msg("probe: listen address '%s' (%s): %s", P->listen, P->listen_origin, why);
	int fam = P->laddr.ss_family;
	for (size_t i = 0; i < P->npeers; i++) {
		struct peer *p = &P->peers[i];
		if (p->addr.ss_family == fam)
			continue;
		if (fam == AF_INET6 && p->addr.ss_family == AF_INET) {
			/* an IPv4 peer from an IPv6 socket: the v4-mapped address */
			struct sockaddr_in v4;
			struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
			memcpy(&v4, &p->addr, sizeof(v4));
			v6.sin6_port = v4.sin_port;
			v6.sin6_addr.s6_addr[10] = v6.sin6_addr.s6_addr[11] = 0xff;
			memcpy(&v6.sin6_addr.s6_addr[12], &v4.sin_addr, 4);
			memcpy(&p->addr, &v6, sizeof(v6));
			p->alen = sizeof(v6);
			continue;
		}
		return die_msg("probe: peer %s (%s) is IPv6 but the listen address %s is IPv4 "
			       "(use --listen [::]:PORT)", p->name, p->addr_text, P->listen);
	}
	P->fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (P->fd < 0)
		return die_msg("probe: socket: %s", strerror(errno));
	int off = 0, rcvbuf = 1 << 20;
	if (fam == AF_INET6)
		setsockopt(P->fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	/* room for bursts while we send; the kernel caps it at rmem_max */
	setsockopt(P->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(P->fd, (struct sockaddr *)&P->laddr, P->llen) < 0)
		return die_msg("probe: cannot listen on %s: %s", P->listen, strerror(errno));
	P->llen = sizeof(P->laddr);
	getsockname(P->fd, (struct sockaddr *)&P->laddr, &P->llen);
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	enum { OPT_OFFSET = 256, OPT_SHOW };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "host", required_argument, NULL, 'H' },
		{ "listen", required_argument, NULL, 'l' },
		{ "peer", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "clock-offset", required_argument, NULL, OPT_OFFSET },
		{ "force", no_argument, NULL, 'f' },
		{ "show-config", no_argument, NULL, OPT_SHOW },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct probe P = { .fd = -1 };
	bool cli_listen = false, cli_rate = false, cli_peers = false, show = false;
	const char **cli_peer_specs = NULL;
	size_t ncli_peers = 0;
	char why[400];
	uint64_t v;
	int c, ret = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:H:l:p:r:d:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return usage_error("empty output directory");
			P.out = optarg;
			break;
		case 'H':
			if (!valid_name(optarg))
				return usage_error("--host: bad name '%s' (1..%d letters, digits, '-', '_', '.')",
						   optarg, MAX_NAME);
			snprintf(P.host, sizeof(P.host), "%s", optarg);
			break;
		case 'l':
			if (strlen(optarg) >= sizeof(P.listen) || !*optarg)
				return usage_error("--listen: '%s' is not ADDR:PORT", optarg);
			snprintf(P.listen, sizeof(P.listen), "%s", optarg);
			snprintf(P.listen_origin, sizeof(P.listen_origin), "command line");
			cli_listen = true;
			break;
		case 'p': {
			const char **np = realloc(cli_peer_specs, (ncli_peers + 1) * sizeof(*np));
			if (!np)
				return die_msg("probe: out of memory");
			cli_peer_specs = np;
			cli_peer_specs[ncli_peers++] = optarg;
			cli_peers = true;
			break;
		}
		case 'r':
			if (parse_uint(optarg, MAX_RATE, &v)) {
				free(cli_peer_specs);
				return usage_error("--rate: '%s' is not a number in 0..%d", optarg, MAX_RATE);
			}
			P.rate = (unsigned)v;
			snprintf(P.rate_origin, sizeof(P.rate_origin), "command line");
			cli_rate = true;
			break;
		case 'd': {
			char *end;
			errno = 0;
			double d = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(d) || d <= 0 || d > 1e9) {
				free(cli_peer_specs);
				return usage_error("--duration: '%s' is not a number of seconds > 0", optarg);
			}
			P.duration = d;
			break;
		}
		case OPT_OFFSET: {
			char *end;
			errno = 0;
			long long x = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end) {
				free(cli_peer_specs);
				return usage_error("--clock-offset: '%s' is not an integer (ns)", optarg);
			}
			P.clock_offset = x;
			P.have_offset = true;
			break;
		}
		case 'f':
			P.force = true;
			break;
		case OPT_SHOW:
			show = true;
			break;
		case 'h':
			free(cli_peer_specs);
			usage(stdout);
			return 0;
		case ':':
			free(cli_peer_specs);
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			free(cli_peer_specs);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		free(cli_peer_specs);
		return usage_error("unexpected argument '%s'", argv[optind]);
	}
	if (!P.out && !show) {
		free(cli_peer_specs);
		return usage_error("no output directory (-o DIR)");
	}
	if (!P.host[0]) {
		char h[256] = "";
		if (gethostname(h, sizeof(h) - 1) < 0 || !valid_name(h)) {
			free(cli_peer_specs);
			return die_msg("probe: the host name '%s' is not usable as a node name: give --host NAME", h);
		}
		/* valid_name() bounded it to MAX_NAME: the copy is whole */
		memcpy(P.host, h, strlen(h) + 1);
	}
	if (cli_peers)
		snprintf(P.peers_origin, sizeof(P.peers_origin), "command line");
	for (size_t i = 0; i < ncli_peers; i++)
		if (add_peer(&P, cli_peer_specs[i], '=', P.peers_origin, why, sizeof(why))) {
			free(cli_peer_specs);
			free(P.peers);
			return usage_error("--peer: %s", why);
		}
	free(cli_peer_specs);

	sigset_t block, orig;
	char laddr[300];
	if ((ret = apply_config(&P, cli_listen, cli_rate, cli_peers)))
		goto out;
	for (size_t i = 0; i < P.npeers; i++) {
		if (strcmp(P.peers[i].name, P.host))
			continue;
		if (cli_peers) {
			ret = usage_error("--peer: '%s' is this node", P.host);
			goto out;
		}
		/* one settings file can serve every node: each skips itself */
		memmove(&P.peers[i], &P.peers[i + 1], (P.npeers - i - 1) * sizeof(P.peers[0]));
		P.npeers--;
		break;
	}
	if (show) {
		show_config(&P);
		goto out;
	}
	new_sender_id(&P);

	if ((ret = setup_socket(&P)))
		goto out;
	char err[600] = "";
	int r = trace_open(&P, err, sizeof(err));
	if (r < 0) {
		ret = die_msg("probe: %s", err);
		goto out;
	}

	/* SIGINT/SIGTERM: blocked except inside ppoll(), so none is missed */
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigset_t waitmask = orig;
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);

	format_addr(&P.laddr, laddr, sizeof(laddr));
	fprintf(stderr, "trawl probe: %s listening on %s, probing %zu peer%s at %u/s\n",
		P.host, laddr, P.npeers, P.npeers == 1 ? "" : "s", P.rate);
	if (!P.npeers)
		fprintf(stderr, "trawl: probe: warning: no peers (--peer or [probe] peer): only receiving\n");
	int64_t t0 = mono_ns();
	r = run(&P, &waitmask);
	double secs = (double)(mono_ns() - t0) / 1e9;
	if (r < 0)
		fprintf(stderr, "trawl: probe: poll: %s\n", strerror(-r));
	int cr = trawl_ctf_writer_close(P.w);
	if (!P.werr && cr < 0)
		P.werr = cr;
	sigprocmask(SIG_SETMASK, &orig, NULL);
	if (P.werr) {
		ret = die_msg("probe: writing %s/%s/sync: %s", P.out, P.host, strerror(-P.werr));
	} else if (r < 0) {
		ret = 1;
	}
	printf("trawl probe: %s: %" PRIu64 " probes sent to %zu peer%s (%" PRIu64 " failed), %" PRIu64
	       " received (%" PRIu64 " from unlisted nodes; %" PRIu64 " invalid, %" PRIu64
	       " misaddressed, %" PRIu64 " from itself, not recorded), %.2f s%s, in %s/%s/sync\n",
	       P.host, P.sent, P.npeers, P.npeers == 1 ? "" : "s", P.send_failed, P.received, P.from_unlisted, P.invalid,
	       P.misaddressed, P.from_self, secs, stop_signal ? " (stopped by a signal)" : "",
	       P.out, P.host);
	for (size_t i = 0; i < P.npeers; i++)
		printf("  peer %s %s: sent %" PRIu64 " (%" PRIu64 " failed), received %" PRIu64 "\n",
		       P.peers[i].name, P.peers[i].addr_text, P.peers[i].sent, P.peers[i].send_failed,
		       P.peers[i].received);
out:
	if (P.w)
		trawl_ctf_writer_free(P.w);
	if (P.fd >= 0)
		close(P.fd);
	free(P.peers);
	return ret;
}
