/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-join-auth.c - an agent's JOIN at a relay with a secret
 * (docs/auth.md, docs/cluster.md), on the relay's state without sockets
 * (lib/relay/relay-internal.h): a JOIN without the credential flag is
 * refused with the reason; with it, a CHALLENGE comes and the AUTH decides:
 * the host's node key and the cluster secret join (the connection becomes
 * a node's), another host's key, another secret, a viewer key, a
 * producer's proof (its role) and a MAC over another JOIN are refused with
 * the reason and join nothing; the relay proves the same key back (its
 * PROOF over the agent's nonce) to those it takes only. The AUTH is built
 * by lib/net/auth.c's tr_auth_put, as the agent does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trawl/relay.h>

#include "tap.h"
#include "internal.h"
#include "net/auth.h"
#include "net/relay-proto.h"
#include "net/relay-wr.h"
#include "relay/relay-internal.h"

static char trash[64];

/* A JOIN message as HOST (flags: RELAY_JOIN_AUTH or 0) in w. */
static size_t join_msg(struct relay_wr *w, const char *host, uint32_t flags)
{
	tr_relay_wr_begin(w, RELAY_JOIN);
	tr_relay_wr_32(w, RELAY_VERSION);
	tr_relay_wr_32(w, flags);
	tr_relay_wr_64(w, 1);
	tr_relay_wr_str(w, host);
	return tr_relay_wr_done(w);
}

static int proofs, proof_bad;	/* the relay's PROOFs seen, and how many were wrong */

/* The first message the relay queued for c, parsed (its type), or -1. */
static int reply(struct rconn *c, struct relay_msg *m)
{
	char why[128];
	if (tr_relay_msg_parse(c->out + c->outoff, c->outlen - c->outoff, m, why, sizeof(why)) <= 0)
		return -1;
	return (int)m->type;
}

/* A connection that says JOIN as host, then, when challenged, answers with
 * cred's proof in role over ctx (NULL: the JOIN itself). The WELCOME's
 * status and message in *st and msg; whether c became a node. */
static bool try_join(struct trawl_relay *r, const char *host, const struct auth_cred *cred,
		     uint32_t role, const char *ctx_host, int *st, char *msg, size_t len)
{
	struct rconn *c = tr_relay_conn_new(r, RC_PRODUCER);
	struct relay_wr w = { 0 }, w2 = { 0 };
	struct relay_msg m;
	size_t n = join_msg(&w, host, cred ? RELAY_JOIN_AUTH : 0);
	*st = 1;
	*msg = 0;
	if (!c || !n)
		return false;
	tr_relay_conn_feed(c, w.buf, n);
	if (cred && reply(c, &m) == RELAY_CHALLENGE) {
		uint8_t nonce[AUTH_NONCE_LEN], am[RELAY_HDR_LEN + RELAY_AUTH_LEN];
		memcpy(nonce, m.u.challenge.nonce, AUTH_NONCE_LEN);
		c->outoff = c->outlen = 0;
		size_t cn = ctx_host ? join_msg(&w2, ctx_host, RELAY_JOIN_AUTH) : n;
		const uint8_t *ctx = ctx_host ? w2.buf : w.buf;
		if (tr_auth_put(cred, role, nonce, ctx, cn, am) == 0)
			tr_relay_conn_feed(c, am, sizeof(am));
		/* a proof taken: the relay's own before its WELCOME, the same
		 * key over the agent's nonce (mutual, docs/auth.md) */
		if (reply(c, &m) == RELAY_PROOF) {
			if (!tr_auth_relay_check(cred->key, role, (uint32_t)cred->kind, nonce,
						 am + RELAY_HDR_LEN + 4, ctx, cn, m.u.proof.mac))
				proof_bad++;
			proofs++;
			c->outoff += RELAY_HDR_LEN + RELAY_PROOF_LEN;
		}
	}
	if (reply(c, &m) == RELAY_WELCOME) {
		*st = m.u.welcome.status;
		snprintf(msg, len, "%s", m.u.welcome.msg);
	}
	bool node = c->node != NULL;
	free(w.buf);
	free(w2.buf);
	tr_relay_conn_close(c);
	return node;
}

int main(void)
{
	char why[256];
	if (tr_auth_ready(why, sizeof(why)) < 0) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	snprintf(trash, sizeof(trash), "/tmp/test-join-auth-%d", (int)getpid());
	if (tr_mkdir_p(trash) < 0) {
		printf("Bail out! mkdir %s\n", trash);
		return 1;
	}
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = trash, .max_conns = 100 };
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!r) {
		printf("Bail out! no relay state\n");
		return 1;
	}
	struct auth_cred cl = { .kind = AUTH_CLUSTER }, other = { .kind = AUTH_CLUSTER };
	struct auth_cred n0, n1, v;
	memset(cl.key, 0x11, AUTH_KEY_LEN);
	memset(other.key, 0x22, AUTH_KEY_LEN);
	if (!(r->secret = calloc(1, sizeof(*r->secret))) ||
	    tr_auth_derive(&cl, AUTH_NODE, "h0", &n0) || tr_auth_derive(&cl, AUTH_NODE, "h1", &n1) ||
	    tr_auth_derive(&cl, AUTH_VIEWER, NULL, &v)) {
		printf("Bail out! no credentials\n");
		return 1;
	}
	*r->secret = cl;
	int st;
	char msg[256];

	bool node = try_join(r, "h0", NULL, 0, NULL, &st, msg, sizeof(msg));
	ok(!node && st == -EACCES && strstr(msg, "this relay requires authentication: give the "
					      "agent its node's key"),
	   "a JOIN without a credential: refused with the reason (%d %s)", st, msg);
	node = try_join(r, "h0", &n0, AUTH_ROLE_NODE, NULL, &st, msg, sizeof(msg));
	ok(node && st == 0, "h0's node key joins as h0 (%d %s)", st, msg);
	node = try_join(r, "h1", &n0, AUTH_ROLE_NODE, NULL, &st, msg, sizeof(msg));
	ok(!node && st == -EACCES && strstr(msg, "not host h1's node key"),
	   "h0's node key cannot join as h1 (%s)", msg);
	node = try_join(r, "h2", &other, AUTH_ROLE_NODE, NULL, &st, msg, sizeof(msg));
	ok(!node && st == -EACCES && strstr(msg, "not this relay's cluster secret"),
	   "another cluster's secret is refused (%s)", msg);
	node = try_join(r, "h2", &v, AUTH_ROLE_NODE, NULL, &st, msg, sizeof(msg));
	ok(!node && st == -EACCES && strstr(msg, "a viewer's credential cannot join"),
	   "a viewer key cannot join (%s)", msg);
	node = try_join(r, "h1", &n1, AUTH_ROLE_PRODUCER, NULL, &st, msg, sizeof(msg));
	ok(!node && st == -EACCES, "a producer's proof (its role) does not serve a JOIN (%s)", msg);
	node = try_join(r, "h1", &cl, AUTH_ROLE_NODE, "h3", &st, msg, sizeof(msg));
	ok(!node && st == -EACCES, "a MAC over another JOIN (h3's) does not prove h1's (%s)", msg);
	node = try_join(r, "h1", &n1, AUTH_ROLE_NODE, NULL, &st, msg, sizeof(msg));
	ok(node && st == 0, "h1's own node key joins as h1 (%d %s)", st, msg);
	node = try_join(r, "h4", &cl, AUTH_ROLE_NODE, NULL, &st, msg, sizeof(msg));
	ok(node && st == 0, "the cluster secret joins as any host (%d %s)", st, msg);
	ok(proofs == 3 && proof_bad == 0, "the relay proved the same key to each of the 3 it took, "
	   "over the agent's nonce, and to none it refused (%d proofs, %d wrong)", proofs,
	   proof_bad);

	tr_auth_wipe(&n0);
	tr_auth_wipe(&n1);
	tr_auth_wipe(&v);
	trawl_relay_free(r);
	tap_rm_tree(trash);
	return done_testing();
}
