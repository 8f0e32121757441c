/* SPDX-License-Identifier: MIT */
/*
 * lib/net/auth.c - credentials and the challenge-response of the relay
 * (auth.h, docs/auth.md). HMAC-SHA256 is nettle's (Debian's libnettle8,
 * which GnuTLS and so apt itself depend on); nothing here is written by
 * hand but the file format.
 *
 * libnettle is loaded when a credential is first used (dlopen of its
 * soname, the ABI of nettle 3.x), not linked: libtrawl links only libc,
 * libpthread and libm, so an application that links it to trace itself
 * (statically too) needs nothing more, and pays nothing for a relay's
 * authentication it never uses.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "net/auth.h"
#include "net/relay-proto.h"

#define MAC_LABEL "trawl-auth-1"
#define RELAY_LABEL "trawl-rely-1"	/* the relay's proof: never a peer's */
#define NODE_LABEL "trawl node key"
#define VIEWER_LABEL "trawl viewer key"
#define NETTLE_SONAME "libnettle.so.8"

/* nettle's functions, typed from its headers */
static struct {
	__typeof__(nettle_hmac_sha256_set_key) *set_key;
	__typeof__(nettle_hmac_sha256_update) *update;
	__typeof__(nettle_hmac_sha256_digest) *digest;
	__typeof__(nettle_memeql_sec) *memeql;
	char why[200];			/* empty: loaded */
} nt;
static pthread_once_t nt_once = PTHREAD_ONCE_INIT;

static void nt_load(void)
{
	void *h = dlopen(NETTLE_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(nt.why, sizeof(nt.why), "%s", dlerror());
		return;
	}
	*(void **)&nt.set_key = dlsym(h, "nettle_hmac_sha256_set_key");
	*(void **)&nt.update = dlsym(h, "nettle_hmac_sha256_update");
	*(void **)&nt.digest = dlsym(h, "nettle_hmac_sha256_digest");
	*(void **)&nt.memeql = dlsym(h, "nettle_memeql_sec");
	if (!nt.set_key || !nt.update || !nt.digest || !nt.memeql)
		snprintf(nt.why, sizeof(nt.why), "%s lacks HMAC-SHA256", NETTLE_SONAME);
}

int tr_auth_ready(char *err, size_t errlen)
{
	pthread_once(&nt_once, nt_load);
	if (nt.why[0])
		return tr_seterr(err, errlen, ENOSYS, "authentication needs nettle (Debian's "
				 "libnettle8): %s", nt.why);
	return 0;
}

const char *tr_auth_kind_name(uint32_t kind)
{
	switch (kind) {
	case AUTH_CLUSTER: return "cluster";
	case AUTH_NODE: return "node";
	case AUTH_VIEWER: return "viewer";
	}
	return "?";
}

static int hex_key(const char *s, size_t n, uint8_t key[AUTH_KEY_LEN])
{
	if (n != 2 * AUTH_KEY_LEN)
		return -1;
	for (size_t i = 0; i < AUTH_KEY_LEN; i++) {
		int hi = tr_hexval(s[2 * i]), lo = tr_hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* The next blank-separated word of [*p, end) on this line: its start and
 * length (0: none left on the line). */
static size_t word(const char **p, const char *end, const char **w)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	*w = *p;
	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	return (size_t)(*p - *w);
}

static int parse(const char *text, size_t len, struct auth_cred *c, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	int line = 0;
	bool have = false;
	memset(c, 0, sizeof(*c));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		line++;
		if (le > p && le[-1] == '\r')
			le--;
		const char *w[4];
		size_t wl[4], nw = 0;
		const char *q = p;
		while (nw < 4 && (wl[nw] = word(&q, le, &w[nw])) > 0 && w[nw][0] != '#')
			nw++;
		if (nw == 4)
			return tr_seterr(err, errlen, EINVAL, "line %d: too many words", line);
		p = nl ? nl + 1 : end;
		if (!nw)
			continue;
		if (have)
			return tr_seterr(err, errlen, EINVAL, "line %d: a second credential (one "
					 "per file)", line);
		const char *hex;
		size_t hexlen;
		if (wl[0] == 7 && memcmp(w[0], "cluster", 7) == 0 && nw == 2) {
			c->kind = AUTH_CLUSTER;
		} else if (wl[0] == 6 && memcmp(w[0], "viewer", 6) == 0 && nw == 2) {
			c->kind = AUTH_VIEWER;
		} else if (wl[0] == 4 && memcmp(w[0], "node", 4) == 0 && nw == 3) {
			c->kind = AUTH_NODE;
			if (wl[1] > AUTH_HOST_MAX)
				return tr_seterr(err, errlen, EINVAL, "line %d: a host name longer "
						 "than %d bytes", line, AUTH_HOST_MAX);
			memcpy(c->host, w[1], wl[1]);
			c->host[wl[1]] = 0;
			if (!tr_relay_name_ok(c->host))
				return tr_seterr(err, errlen, EINVAL, "line %d: '%s' is not a host "
						 "name of [A-Za-z0-9._-]", line, c->host);
		} else {
			return tr_seterr(err, errlen, EINVAL, "line %d: expected 'cluster HEX', "
					 "'node HOST HEX' or 'viewer HEX'", line);
		}
		hex = w[nw - 1];
		hexlen = wl[nw - 1];
		if (hex_key(hex, hexlen, c->key) < 0)
			return tr_seterr(err, errlen, EINVAL, "line %d: the key is not %d hex digits",
					 line, 2 * AUTH_KEY_LEN);
		have = true;
	}
	if (!have)
		return tr_seterr(err, errlen, EINVAL, "no credential in it");
	return 0;
}

int tr_auth_parse(const char *text, size_t len, struct auth_cred *c, char *err, size_t errlen)
{
	/* a refusal leaves nothing of a key behind: a good line followed by
	 * a bad one, or a key whose digits went wrong half-way */
	int ret = parse(text, len, c, err, errlen);
	if (ret < 0)
		tr_auth_wipe(c);
	return ret;
}

/* What a file that is not a regular one is, for a refusal. */
static const char *file_type(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

int tr_auth_load(const char *path, struct auth_cred *c, char *err, size_t errlen)
{
	char buf[AUTH_FILE_MAX + 1], why[200];
	/* O_NONBLOCK: a FIFO (or a device) would block the open until a
	 * writer comes; it is refused below, once fstat says what it is */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return tr_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
	struct stat st;
	int ret = 0;
	ssize_t n = 0;
	if (fstat(fd, &st) < 0) {
		ret = tr_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		ret = tr_seterr(err, errlen, EINVAL, "%s: not a regular file (%s)", path,
				file_type(st.st_mode));
	} else if (st.st_mode & 077) {
		ret = tr_seterr(err, errlen, EPERM, "%s: readable or writable by others (mode "
				"%03o): chmod 600 it", path, (unsigned)(st.st_mode & 0777));
	} else {
		size_t got = 0;
		while (got < sizeof(buf) && (n = read(fd, buf + got, sizeof(buf) - got)) > 0)
			got += (size_t)n;
		if (n < 0)
			ret = tr_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
		else if (got > AUTH_FILE_MAX)
			ret = tr_seterr(err, errlen, EFBIG, "%s: more than %d bytes", path,
					AUTH_FILE_MAX);
		else if (tr_auth_parse(buf, got, c, why, sizeof(why)) < 0)
			ret = tr_seterr(err, errlen, EINVAL, "%s: %s", path, why);
	}
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return ret;
}

int tr_auth_format(const struct auth_cred *c, char *buf, size_t len)
{
	char hex[2 * AUTH_KEY_LEN + 1];
	for (int i = 0; i < AUTH_KEY_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", c->key[i]);
	int n = c->kind == AUTH_NODE ? snprintf(buf, len, "node %s %s\n", c->host, hex) :
		snprintf(buf, len, "%s %s\n", tr_auth_kind_name(c->kind), hex);
	explicit_bzero(hex, sizeof(hex));
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

static void hmac(const uint8_t *key, const void *a, size_t alen, const void *b, size_t blen,
		 uint8_t out[AUTH_KEY_LEN])
{
	struct hmac_sha256_ctx h;
	/* without nettle: a key nobody can match (callers check
	 * tr_auth_ready first; tr_auth_check refuses anyway) */
	if (tr_auth_ready(NULL, 0) < 0) {
		tr_auth_nonce(out);
		return;
	}
	nt.set_key(&h, AUTH_KEY_LEN, key);
	nt.update(&h, alen, a);
	if (blen)
		nt.update(&h, blen, b);
	nt.digest(&h, AUTH_KEY_LEN, out);
	explicit_bzero(&h, sizeof(h));
}

int tr_auth_key_for(const struct auth_cred *cluster, uint32_t kind, const char *host,
		    uint8_t key[AUTH_KEY_LEN])
{
	if (cluster->kind != AUTH_CLUSTER)
		return -EINVAL;
	switch (kind) {
	case AUTH_CLUSTER:
		memcpy(key, cluster->key, AUTH_KEY_LEN);
		return 0;
	case AUTH_NODE:
		/* the label's NUL separates it from the host name */
		if (!host || !tr_relay_name_ok(host) || strlen(host) > AUTH_HOST_MAX)
			return -EINVAL;
		hmac(cluster->key, NODE_LABEL, sizeof(NODE_LABEL), host, strlen(host), key);
		return 0;
	case AUTH_VIEWER:
		hmac(cluster->key, VIEWER_LABEL, sizeof(VIEWER_LABEL), NULL, 0, key);
		return 0;
	}
	return -EINVAL;
}

int tr_auth_derive(const struct auth_cred *cluster, enum auth_kind kind, const char *host,
		   struct auth_cred *out)
{
	struct auth_cred d = { .kind = kind };
	if (kind == AUTH_CLUSTER || tr_auth_key_for(cluster, kind, host, d.key) < 0)
		return -EINVAL;
	if (kind == AUTH_NODE)
		snprintf(d.host, sizeof(d.host), "%s", host);
	*out = d;
	tr_auth_wipe(&d);
	return 0;
}

int tr_auth_nonce(uint8_t nonce[AUTH_NONCE_LEN])
{
	size_t got = 0;
	while (got < AUTH_NONCE_LEN) {
		ssize_t n = getrandom(nonce + got, AUTH_NONCE_LEN - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

/* The MAC of either side: label (both labels are as long) and the rest. */
static void mac_of(const char *label, const uint8_t key[AUTH_KEY_LEN], uint32_t role,
		   uint32_t kind, const uint8_t relay_nonce[AUTH_NONCE_LEN],
		   const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx, size_t ctxlen,
		   uint8_t mac[AUTH_MAC_LEN])
{
	_Static_assert(sizeof(MAC_LABEL) == sizeof(RELAY_LABEL), "labels of one length");
	uint8_t head[sizeof(MAC_LABEL) + 8 + 2 * AUTH_NONCE_LEN];
	memcpy(head, label, sizeof(MAC_LABEL));	/* with its NUL */
	put_le32(head + sizeof(MAC_LABEL), role);
	put_le32(head + sizeof(MAC_LABEL) + 4, kind);
	memcpy(head + sizeof(MAC_LABEL) + 8, relay_nonce, AUTH_NONCE_LEN);
	memcpy(head + sizeof(MAC_LABEL) + 8 + AUTH_NONCE_LEN, peer_nonce, AUTH_NONCE_LEN);
	hmac(key, head, sizeof(head), ctx, ctxlen, mac);
}

static bool check_of(const char *label, const uint8_t key[AUTH_KEY_LEN], uint32_t role,
		     uint32_t kind, const uint8_t relay_nonce[AUTH_NONCE_LEN],
		     const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx, size_t ctxlen,
		     const uint8_t mac[AUTH_MAC_LEN])
{
	uint8_t want[AUTH_MAC_LEN];
	mac_of(label, key, role, kind, relay_nonce, peer_nonce, ctx, ctxlen, want);
	bool ok = tr_auth_ready(NULL, 0) == 0 && nt.memeql(want, mac, AUTH_MAC_LEN);
	explicit_bzero(want, sizeof(want));
	return ok;
}

void tr_auth_mac(const uint8_t key[AUTH_KEY_LEN], uint32_t role, uint32_t kind,
		 const uint8_t relay_nonce[AUTH_NONCE_LEN], const uint8_t peer_nonce[AUTH_NONCE_LEN],
		 const void *ctx, size_t ctxlen, uint8_t mac[AUTH_MAC_LEN])
{
	mac_of(MAC_LABEL, key, role, kind, relay_nonce, peer_nonce, ctx, ctxlen, mac);
}

bool tr_auth_check(const uint8_t key[AUTH_KEY_LEN], uint32_t role, uint32_t kind,
		   const uint8_t relay_nonce[AUTH_NONCE_LEN], const uint8_t peer_nonce[AUTH_NONCE_LEN],
		   const void *ctx, size_t ctxlen, const uint8_t mac[AUTH_MAC_LEN])
{
	return check_of(MAC_LABEL, key, role, kind, relay_nonce, peer_nonce, ctx, ctxlen, mac);
}

void tr_auth_relay_mac(const uint8_t key[AUTH_KEY_LEN], uint32_t role, uint32_t kind,
		       const uint8_t relay_nonce[AUTH_NONCE_LEN],
		       const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx, size_t ctxlen,
		       uint8_t mac[AUTH_MAC_LEN])
{
	mac_of(RELAY_LABEL, key, role, kind, relay_nonce, peer_nonce, ctx, ctxlen, mac);
}

bool tr_auth_relay_check(const uint8_t key[AUTH_KEY_LEN], uint32_t role, uint32_t kind,
			 const uint8_t relay_nonce[AUTH_NONCE_LEN],
			 const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx, size_t ctxlen,
			 const uint8_t mac[AUTH_MAC_LEN])
{
	return check_of(RELAY_LABEL, key, role, kind, relay_nonce, peer_nonce, ctx, ctxlen, mac);
}

int tr_auth_put(const struct auth_cred *c, uint32_t role, const uint8_t relay_nonce[AUTH_NONCE_LEN],
		const void *msg, size_t len, uint8_t *out)
{
	uint8_t *q = out + RELAY_HDR_LEN;
	int ret = tr_auth_ready(NULL, 0);
	if (!ret)
		ret = tr_auth_nonce(q + 4);
	if (ret < 0)
		return ret;
	relay_put_hdr(out, RELAY_AUTH, RELAY_AUTH_LEN);
	put_le32(q, (uint32_t)c->kind);
	tr_auth_mac(c->key, role, (uint32_t)c->kind, relay_nonce, q + 4, msg, len,
		    q + 4 + AUTH_NONCE_LEN);
	return 0;
}

void tr_auth_wipe(struct auth_cred *c)
{
	explicit_bzero(c, sizeof(*c));
}
