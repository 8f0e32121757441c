/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-auth.c - the relay's credentials and proofs
 * (lib/net/auth.h, docs/auth.md): MACs and derived keys against values
 * computed with Python's hmac module (an independent HMAC-SHA256), a
 * proof refused when any of its inputs changes, credential files parsed,
 * formatted and refused with their reasons (a line, a mode others can
 * read, a symbolic link).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "internal.h"
#include "net/auth.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* python3: hmac.new(bytes(range(32)), ..., hashlib.sha256).hexdigest() */
static void test_known_answers(void)
{
	struct auth_cred cl = { .kind = AUTH_CLUSTER };
	uint8_t nr[32], np[32], mac[32], key[32];
	char h[65];
	for (int i = 0; i < 32; i++)
		cl.key[i] = (uint8_t)i;
	memset(nr, 0x11, 32);
	memset(np, 0x22, 32);
	tr_auth_mac(cl.key, AUTH_ROLE_PRODUCER, AUTH_NODE, nr, np, "ctx", 3, mac);
	hex(mac, 32, h);
	is_str(h, "87fd4cd1547c4d361828c56c1c017141e4faefb7194a9761f396adeac012250e",
	       "the proof's MAC: HMAC-SHA256(key, 'trawl-auth-1\\0' role kind nonces ctx)");
	ok(tr_auth_key_for(&cl, AUTH_NODE, "host0", key) == 0, "a node key for host0");
	hex(key, 32, h);
	is_str(h, "02eb881eb7b30309ebd2d44eefd3228a3ac8b824f7bb8c9159946653722fb65d",
	       "host0's node key: HMAC-SHA256(cluster, 'trawl node key\\0host0')");
	ok(tr_auth_key_for(&cl, AUTH_VIEWER, NULL, key) == 0, "the viewer key");
	hex(key, 32, h);
	is_str(h, "6bd8b9421c0be2db16d34c728d09a09410ff43fb1e4cf43d5df18906511f49fb",
	       "the viewer key: HMAC-SHA256(cluster, 'trawl viewer key\\0')");
	struct auth_cred n0, n1;
	ok(tr_auth_derive(&cl, AUTH_NODE, "host0", &n0) == 0 && n0.kind == AUTH_NODE &&
	   strcmp(n0.host, "host0") == 0 && tr_auth_key_for(&cl, AUTH_NODE, "host0", key) == 0 &&
	   memcmp(n0.key, key, 32) == 0, "tr_auth_derive: host0's node credential, its key");
	ok(tr_auth_derive(&cl, AUTH_NODE, "host1", &n1) == 0 && memcmp(n0.key, n1.key, 32) != 0,
	   "another host, another key");
	ok(tr_auth_derive(&cl, AUTH_NODE, "../x", &n1) == -EINVAL &&
	   tr_auth_derive(&cl, AUTH_NODE, NULL, &n1) == -EINVAL &&
	   tr_auth_derive(&n0, AUTH_VIEWER, NULL, &n1) == -EINVAL &&
	   tr_auth_key_for(&n0, AUTH_NODE, "host0", key) == -EINVAL &&
	   tr_auth_key_for(&cl, 9, NULL, key) == -EINVAL,
	   "no key for a host that is no plain name, from a node key, or of an unknown kind");
}

/* A proof holds for its own inputs only. */
static void test_check(void)
{
	uint8_t key[32], nr[32], np[32], mac[32], other[32];
	memset(key, 7, 32);
	memset(nr, 1, 32);
	memset(np, 2, 32);
	tr_auth_mac(key, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, nr, np, "hello", 5, mac);
	ok(tr_auth_check(key, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, nr, np, "hello", 5, mac),
	   "a proof checks with its own inputs");
	bool any = false;
	memcpy(other, key, 32);
	other[31] ^= 1;
	any |= tr_auth_check(other, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, nr, np, "hello", 5, mac);
	any |= tr_auth_check(key, AUTH_ROLE_VIEWER, AUTH_CLUSTER, nr, np, "hello", 5, mac);
	any |= tr_auth_check(key, AUTH_ROLE_PRODUCER, AUTH_NODE, nr, np, "hello", 5, mac);
	memcpy(other, nr, 32);
	other[0] ^= 0x80;
	any |= tr_auth_check(key, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, other, np, "hello", 5, mac);
	any |= tr_auth_check(key, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, nr, other, "hello", 5, mac);
	any |= tr_auth_check(key, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, nr, np, "hellp", 5, mac);
	any |= tr_auth_check(key, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, nr, np, "hello", 4, mac);
	memcpy(other, mac, 32);
	other[16] ^= 4;
	any |= tr_auth_check(key, AUTH_ROLE_PRODUCER, AUTH_CLUSTER, nr, np, "hello", 5, other);
	ok(!any, "refused when the key, role, kind, either nonce, the context or the MAC differs");
	uint8_t a[32], b[32];
	ok(tr_auth_nonce(a) == 0 && tr_auth_nonce(b) == 0 && memcmp(a, b, 32) != 0,
	   "two nonces differ");
}

static void test_parse(void)
{
	struct auth_cred c;
	char err[256], line[200];
	const char *k = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	snprintf(line, sizeof(line), "# a comment\n\n  node web-1.a\t%s  # trailing\r\n", k);
	ok(tr_auth_parse(line, strlen(line), &c, err, sizeof(err)) == 0 && c.kind == AUTH_NODE &&
	   strcmp(c.host, "web-1.a") == 0 && c.key[0] == 0x00 && c.key[1] == 0x11 &&
	   c.key[31] == 0xff, "a node line among comments, blanks, tabs and CRLF (%s)", err);
	char out[200];
	int n = tr_auth_format(&c, out, sizeof(out));
	snprintf(line, sizeof(line), "node web-1.a %s\n", k);
	ok(n == (int)strlen(line) && strcmp(out, line) == 0, "formatted back: '%.*s'", n - 1, out);
	ok(tr_auth_format(&c, out, 20) == -ENOSPC, "formatting into too little room: -ENOSPC");
	static const struct { const char *text, *why; } bad[] = {
		{ "", "no credential" },
		{ "# nothing\n", "no credential" },
		{ "cluster 0011\n", "line 1: the key is not 64 hex digits" },
		{ "\nviewer zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
		  "line 2: the key is not 64" },
		{ "node ../x 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
		  "line 1: '../x' is not a host name" },
		{ "cluster h 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
		  "line 1: expected" },
		{ "cluster a b c d\n", "too many words" },
		{ "admin 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
		  "expected 'cluster HEX', 'node HOST HEX' or 'viewer HEX'" },
		{ "viewer 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
		  "viewer 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
		  "line 2: a second credential" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = 0;
		int r = tr_auth_parse(bad[i].text, strlen(bad[i].text), &c, err, sizeof(err));
		ok(r == -EINVAL && strstr(err, bad[i].why), "refused: %s", err);
	}
	/* not NUL-terminated: the length is the end */
	snprintf(line, sizeof(line), "viewer %s", k);
	ok(tr_auth_parse(line, strlen(line) - 1, &c, err, sizeof(err)) == -EINVAL,
	   "a key cut by the length given is refused (%s)", err);
}

static void test_load(void)
{
	char dir[] = "/tmp/test-auth-XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	const char *f = tap_path(dir, "key"), *l = tap_path(dir, "link");
	const char *text = "cluster 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ok(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && close(fd) == 0,
	   "a credential file, mode 600");
	struct auth_cred c;
	char err[400];
	ok(tr_auth_load(f, &c, err, sizeof(err)) == 0 && c.kind == AUTH_CLUSTER,
	   "loaded (%s)", err);
	chmod(f, 0640);
	int r = tr_auth_load(f, &c, err, sizeof(err));
	ok(r == -EPERM && strstr(err, "mode 640") && strstr(err, "chmod 600"),
	   "mode 640 (the group reads it): refused, %s", err);
	chmod(f, 0600);
	ok(symlink(f, l) == 0, "a symbolic link to it");
	r = tr_auth_load(l, &c, err, sizeof(err));
	ok(r == -ELOOP, "a symbolic link is not followed (%d: %s)", r, err);
	r = tr_auth_load(dir, &c, err, sizeof(err));
	ok(r < 0, "a directory is refused (%s)", err);
	fd = open(f, O_WRONLY | O_APPEND);
	char big[5000];
	memset(big, '#', sizeof(big));
	ok(fd >= 0 && write(fd, big, sizeof(big)) == (ssize_t)sizeof(big) && close(fd) == 0 &&
	   tr_auth_load(f, &c, err, sizeof(err)) == -EFBIG, "a file over 4096 bytes: %s", err);
	tap_rm_tree(dir);
}

int main(void)
{
	char why[256];
	if (tr_auth_ready(why, sizeof(why)) < 0) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	test_known_answers();
	test_check();
	test_parse();
	test_load();
	return done_testing();
}
