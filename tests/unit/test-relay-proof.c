/* SPDX-License-Identifier: MIT */
/*
 * test-relay-proof - a relay that cannot queue its own proof for a peer
 * that proved itself logs what happened (lib/relay/auth.c, relay.c): the
 * relay failed, not the peer's login (before: "refused: authentication
 * failed: not this relay's cluster secret", a failed login of a peer
 * whose proof was good). Driven without sockets (relay-internal.h); the
 * failure is the output buffer's realloc made to fail once (this file's
 * realloc, over the C library's), so not under AddressSanitizer or
 * ThreadSanitizer, whose allocators this cannot wrap.
 * Checks, for a producer with the cluster secret: a good AUTH whose proof
 * cannot be queued is logged as the relay's failure ("its proof was good,
 * but the relay's own could not be queued"), at LOG_ERR, not as a refusal
 * or a failed authentication, and the connection is closed; the same
 * AUTH with the buffer left alone gets the relay's proof then a WELCOME 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "tap.h"
#include "relay/relay-internal.h"
#include "net/auth.h"
#include "net/relay-proto.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_WRAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NO_WRAP 1
#endif
#endif

#ifndef NO_WRAP
extern void *__libc_realloc(void *p, size_t n);
static void *fail_ptr;		/* the next realloc of it fails */

void *realloc(void *p, size_t n)
{
	if (p && p == fail_ptr) {
		fail_ptr = NULL;
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

#define BAIL_OUT(...) do { printf("Bail out! "); printf(__VA_ARGS__); printf("\n"); \
			    exit(1); } while (0)

static char trash[64];
#define path(...) tap_path(trash, __VA_ARGS__)

static char logs[4096];
static int err_lines;
static void hook(void *arg, int level, const char *msg)
{
	(void)arg;
	size_t l = strlen(logs);
	snprintf(logs + l, sizeof(logs) - l, "%s\n", msg);
	err_lines += level == LOG_ERR;
}

static size_t m_hello(uint8_t *b)
{
	static const char names[] = "s\0h0\0ust";
	relay_put_hdr(b, RELAY_HELLO, 32 + sizeof(names));
	memset(b + RELAY_HDR_LEN, 0, 32);
	put_le32(b + RELAY_HDR_LEN, RELAY_VERSION);
	put_le32(b + RELAY_HDR_LEN + 4, RELAY_HELLO_AUTH);
	memcpy(b + RELAY_HDR_LEN + 32, names, sizeof(names));
	return RELAY_HDR_LEN + 32 + sizeof(names);
}

/* A producer with cred says HELLO and answers the challenge; with fail,
 * the output buffer cannot grow for the relay's proof. */
static struct rconn *login(struct trawl_relay *r, const struct auth_cred *cred, bool fail)
{
	uint8_t h[128], am[RELAY_HDR_LEN + RELAY_AUTH_LEN];
	size_t hl = m_hello(h);
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	tr_relay_conn_feed(c, h, hl);
	if (c->outlen < RELAY_HDR_LEN + RELAY_CHALLENGE_LEN ||
	    get_le32(c->out + c->outoff) != RELAY_CHALLENGE)
		return c;
	const uint8_t *nonce = c->out + c->outoff + RELAY_HDR_LEN + 4;
	if (tr_auth_put(cred, AUTH_ROLE_PRODUCER, nonce, h, hl, am) < 0)
		return c;
	c->outoff = c->outlen = 0;
	if (fail) {
		c->outlen = c->outcap;	/* full: the proof needs it to grow */
		fail_ptr = c->out;
	}
	logs[0] = 0;
	err_lines = 0;
	tr_relay_conn_feed(c, am, sizeof(am));
	return c;
}

int main(void)
{
	char why[256];
	if (tr_auth_ready(why, sizeof(why)) < 0) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	snprintf(trash, sizeof(trash), "/tmp/trawl-test-proof-XXXXXX");
	if (!mkdtemp(trash)) {
		perror("mkdtemp");
		return 1;
	}
	mkdir(path("out"), 0700);
	struct auth_cred cl = { .kind = AUTH_CLUSTER };
	char line[200];
	int n = tr_auth_nonce(cl.key) < 0 ? -1 : tr_auth_format(&cl, line, sizeof(line));
	FILE *f = n > 0 ? fopen(path("cluster.key"), "w") : NULL;
	if (!f || fwrite(line, 1, (size_t)n, f) != (size_t)n || fclose(f))
		BAIL_OUT("cannot write the secret");
	chmod(path("cluster.key"), 0600);
	struct trawl_relay_opts o = {
		.sz = sizeof(o), .output = path("out"), .secret_file = path("cluster.key"),
		.log = hook,
	};
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!r || tr_relay_auth_init(r, path("cluster.key"), why, sizeof(why)) < 0)
		BAIL_OUT("a relay's state with a secret: %s", why);

	struct rconn *c = login(r, &cl, true);
	ok(strstr(logs, "its proof was good, but the relay's own could not be queued: Cannot "
		       "allocate memory; closed") != NULL,
	   "its own proof not queued, the relay logs what happened (%s)", logs);
	ok(!strstr(logs, "refused") && !strstr(logs, "authentication failed"),
	   "... not a refusal, nor a failed login");
	is_int(err_lines, 1, "... once, as an error");
	ok(c->dead, "... and the connection is closed");

	tr_relay_conn_close(c);
	c = login(r, &cl, false);
	size_t off = c->outoff;
	bool proof = c->outlen - off >= RELAY_HDR_LEN + RELAY_PROOF_LEN &&
		     get_le32(c->out + off) == RELAY_PROOF;
	off += RELAY_HDR_LEN + RELAY_PROOF_LEN;
	ok(proof && c->outlen - off >= RELAY_HDR_LEN + 5 && get_le32(c->out + off) == RELAY_WELCOME &&
	   get_le32(c->out + off + RELAY_HDR_LEN) == 0 && !c->dead,
	   "the same login with room: the relay's proof, then a WELCOME 0 (%s)", logs);
	trawl_relay_free(r);
	tap_rm_tree(trash);
	return done_testing();
}
#else
int main(void)
{
	printf("1..0 # SKIP realloc cannot be wrapped under this sanitizer's allocator\n");
	return 0;
}
#endif
