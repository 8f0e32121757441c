/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/auth.c - the relay's side of authentication (docs/auth.md):
 * with a secret (trawl_relay_opts.secret_file), a producer proves it
 * holds a credential that may write its HELLO's host before the HELLO is
 * taken, an agent one that may act as its JOIN's host before it joins
 * the cluster (docs/cluster.md), and a viewer on the live port proves it holds one that may read
 * before its CONNECT. The proofs and credentials are lib/net/auth.c's.
 *
 * Refusals say why (a producer or an agent in its WELCOME, a viewer in the reply to
 * its TRAWL_AUTH) and are logged once per episode (a flood of bad proofs
 * costs a line every 10 s, and an HMAC each: microseconds).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "relay/relay-internal.h"
#include "net/auth.h"
#include "net/live-proto.h"
#include "net/relay-proto.h"
#include "util/clock.h"

/* A challenge given, and what the proof must cover. */
struct rauth {
	uint8_t nonce[AUTH_NONCE_LEN];
	uint32_t type;			/* RELAY_HELLO or RELAY_JOIN: what is proven */
	uint8_t *hello;			/* its payload (the proof's context, with
					 * the header; parsed again once proven) */
	size_t hello_len;
	int64_t since;			/* ms the challenge was sent */
	bool used;			/* a proof came: one per challenge */
};

int tr_relay_auth_init(struct trawl_relay *r, const char *secret_file, char *err, size_t errlen)
{
	if (!secret_file)
		return 0;
	struct auth_cred *c = calloc(1, sizeof(*c));
	if (!c)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	int ret = tr_auth_ready(err, errlen);
	if (!ret)
		ret = tr_auth_load(secret_file, c, err, errlen);
	if (!ret && c->kind != AUTH_CLUSTER)
		ret = tr_seterr(err, errlen, EINVAL, "%s: a %s credential; the relay needs the "
				"cluster's secret ('cluster HEX': trawl secret new)", secret_file,
				tr_auth_kind_name(c->kind));
	if (ret) {
		tr_auth_wipe(c);
		free(c);
		return ret;
	}
	r->secret = c;
	return 0;
}

void tr_relay_auth_free(struct rconn *c)
{
	if (!c->auth)
		return;
	free(c->auth->hello);
	free(c->auth);
	c->auth = NULL;
}

bool tr_relay_auth_late(const struct rconn *c, int64_t now, unsigned ms)
{
	return !c->authed && c->auth && !c->auth->used && now - c->auth->since > (int64_t)ms;
}

int64_t tr_relay_auth_due(const struct rconn *c, unsigned ms)
{
	return !c->authed && c->auth && !c->auth->used ? c->auth->since + (int64_t)ms + 1 : INT64_MAX;
}

/* A challenge for c: its nonce drawn. NULL when out of memory or entropy. */
static struct rauth *challenge(struct rconn *c)
{
	tr_relay_auth_free(c);
	struct rauth *a = calloc(1, sizeof(*a));
	if (!a || tr_auth_nonce(a->nonce) < 0) {
		free(a);
		return NULL;
	}
	a->since = tr_mono_ms();
	c->auth = a;
	return a;
}

/* Refused: the reason to the peer (by the caller) and to the log, once
 * per episode for each kind of peer and of refusal (without a proof, or
 * with a bad one: bad). */
static void log_refusal(struct rconn *c, bool bad, const char *why)
{
	struct ratelog *rl = &c->r->rl_auth[(c->kind == RC_VIEWER) * 2 + bad];
	tr_relay_ratelog(c->r, rl, LOG_WARNING, "%s: refused: %s", c->peer, why);
}

void tr_relay_auth_log(struct rconn *c, const char *why)
{
	log_refusal(c, true, why);
}

/* The role a proof of message type has (net/auth.h). */
static uint32_t role_of(uint32_t type)
{
	return type == RELAY_JOIN ? AUTH_ROLE_NODE : AUTH_ROLE_PRODUCER;
}

int tr_relay_auth_hello(struct rconn *c, const struct relay_msg *m)
{
	bool join = m->type == RELAY_JOIN;
	uint32_t flags = join ? m->u.join.flags : m->u.hello.flags;
	if (!(flags & (join ? RELAY_JOIN_AUTH : RELAY_HELLO_AUTH))) {
		const char *why = join ?
			"this relay requires authentication: give the agent its node's key "
			"or the cluster's secret (trawl secret; agent --secret-file, "
			"TRAWL_SECRET_FILE, [relay] secret-file)" :
			"this relay requires authentication: give the producer its "
			"node's key or the cluster's secret (trawl secret; record, "
			"simulate, agent --secret-file, TRAWL_SECRET_FILE, [relay] "
			"secret-file)";
		log_refusal(c, false, join ? "a JOIN without a credential" :
			    "a HELLO without a credential");
		tr_relay_refuse(c, EACCES, why);
		return 0;
	}
	if (c->auth) {
		tr_relay_refuse(c, EPROTO, join ? "a JOIN after a HELLO or JOIN" : "a second HELLO");
		return 0;
	}
	struct rauth *a = challenge(c);
	if (!a || !(a->hello = malloc(m->len))) {
		tr_relay_auth_free(c);
		tr_relay_refuse(c, ENOMEM, "the relay is out of memory");
		return -ENOMEM;
	}
	memcpy(a->hello, m->payload, m->len);
	a->hello_len = m->len;
	a->type = m->type;
	uint8_t b[RELAY_HDR_LEN + RELAY_CHALLENGE_LEN];
	relay_put_hdr(b, RELAY_CHALLENGE, RELAY_CHALLENGE_LEN);
	put_le32(b + RELAY_HDR_LEN, RELAY_AUTH_VERSION);
	memcpy(b + RELAY_HDR_LEN + 4, a->nonce, AUTH_NONCE_LEN);
	return tr_rconn_queue(c, b, sizeof(b));
}

int tr_relay_auth_answer(struct rconn *c, const struct relay_msg *m, struct relay_msg *hello,
			 char *err, size_t errlen)
{
	struct rauth *a = c->auth;
	if (!a || !a->hello || a->used || c->authed)
		return tr_seterr(err, errlen, EPROTO, "AUTH without a challenge");
	a->used = true;
	/* the HELLO it proves, as it came (the parser accepted it then) */
	uint8_t *buf = malloc(RELAY_HDR_LEN + a->hello_len);
	if (!buf)
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	relay_put_hdr(buf, a->type, (uint32_t)a->hello_len);
	memcpy(buf + RELAY_HDR_LEN, a->hello, a->hello_len);
	free(a->hello);
	a->hello = buf;
	char perr[128];
	bool join = a->type == RELAY_JOIN;
	if (tr_relay_msg_parse(buf, RELAY_HDR_LEN + a->hello_len, hello, perr, sizeof(perr)) <= 0)
		return tr_seterr(err, errlen, EPROTO, "%s: %s", join ? "JOIN" : "HELLO", perr);
	const char *host = join ? hello->u.join.host : hello->u.hello.host;
	uint32_t kind = m->u.auth.kind;
	uint8_t key[AUTH_KEY_LEN];
	if (kind == AUTH_VIEWER && join)
		return tr_seterr(err, errlen, EACCES, "a viewer's credential cannot join the "
				 "cluster: give the agent its node's key or the cluster's secret");
	if (kind == AUTH_VIEWER)
		return tr_seterr(err, errlen, EACCES, "a viewer's credential cannot write: "
				 "give the producer its node's or the cluster's secret");
	if (tr_auth_key_for(c->r->secret, kind, host, key) < 0)
		return tr_seterr(err, errlen, EACCES, "a credential of unknown kind %u", kind);
	bool ok = tr_auth_check(key, role_of(a->type), kind, a->nonce, m->u.auth.nonce,
				a->hello, a->hello_len + RELAY_HDR_LEN, m->u.auth.mac);
	if (ok) {
		/* the relay's own proof, before the WELCOME the caller queues:
		 * the same key over the peer's nonce (mutual, net/auth.h) */
		uint8_t b[RELAY_HDR_LEN + RELAY_PROOF_LEN];
		relay_put_hdr(b, RELAY_PROOF, RELAY_PROOF_LEN);
		tr_auth_relay_mac(key, role_of(a->type), kind, a->nonce, m->u.auth.nonce, a->hello,
				  a->hello_len + RELAY_HDR_LEN, b + RELAY_HDR_LEN);
		int q = tr_rconn_queue(c, b, sizeof(b));
		explicit_bzero(b, sizeof(b));
		explicit_bzero(key, sizeof(key));
		/* the peer proved itself: the relay failed, not its login */
		if (q < 0)
			return tr_seterr(err, errlen, -q, "its proof was good, but the relay's "
					 "own could not be queued: %s", strerror(-q));
	}
	explicit_bzero(key, sizeof(key));
	if (!ok && kind == AUTH_NODE)
		return tr_seterr(err, errlen, EACCES, "authentication failed: not host %s's node "
				 "key from this relay's secret (a wrong secret, or another host's "
				 "key)", host);
	if (!ok)
		return tr_seterr(err, errlen, EACCES, "authentication failed: not this relay's "
				 "cluster secret");
	c->authed = true;
	return 0;
}

/* The reply to a TRAWL_AUTH: status and reason, and the relay's proof
 * when the viewer's was good (mac; NULL: zeros). */
static void auth_reply(struct rconn *c, uint32_t status, const char *why, const uint8_t *mac)
{
	uint8_t b[LIVE_AUTH_REPLY_LEN] = { 0 };
	put_be32(b, status);
	tr_live_put_str(b + 4, 256, why);
	if (mac)
		memcpy(b + 4 + 256, mac, AUTH_MAC_LEN);
	tr_rconn_queue(c, b, sizeof(b));
}

size_t tr_relay_auth_prove(const struct rconn *c, uint8_t *out)
{
	struct rauth *a = c->auth;
	if (!a || a->used || !c->r->secret)
		return 0;
	if (c->kind == RC_PRODUCER) {
		if (!a->hello)
			return 0;
		uint8_t *h = malloc(RELAY_HDR_LEN + a->hello_len);
		if (!h)
			return 0;
		relay_put_hdr(h, a->type, (uint32_t)a->hello_len);
		memcpy(h + RELAY_HDR_LEN, a->hello, a->hello_len);
		int ret = tr_auth_put(c->r->secret, role_of(a->type), a->nonce, h,
				      RELAY_HDR_LEN + a->hello_len, out);
		free(h);
		return ret ? 0 : RELAY_HDR_LEN + RELAY_AUTH_LEN;
	}
	uint8_t *p = out + LIVE_REQ_HDR;
	put_be64(out, 68);
	put_be32(out + 8, LIVE_TRAWL_AUTH);
	put_be32(out + 12, 0);
	put_be32(p, AUTH_CLUSTER);
	if (tr_auth_nonce(p + 4) < 0)
		return 0;
	tr_auth_mac(c->r->secret->key, AUTH_ROLE_VIEWER, AUTH_CLUSTER, a->nonce, p + 4, NULL, 0,
		    p + 36);
	return LIVE_REQ_HDR + 68;
}

int tr_relay_auth_live(struct rconn *c, const struct live_req *req)
{
	if (req->cmd == LIVE_TRAWL_CHALLENGE) {
		uint8_t b[LIVE_CHALLENGE_REPLY_LEN] = { 0 };
		if (c->authed) {
			put_be32(b, LIVE_AUTH_NONE);
			tr_rconn_queue(c, b, sizeof(b));
			return 1;
		}
		struct rauth *a = challenge(c);
		if (!a)
			return -1;
		put_be32(b, LIVE_AUTH_OK);
		put_be32(b + 4, RELAY_AUTH_VERSION);
		memcpy(b + 8, a->nonce, AUTH_NONCE_LEN);
		tr_rconn_queue(c, b, sizeof(b));
		return 1;
	}
	if (req->cmd != LIVE_TRAWL_AUTH) {
		if (c->authed)
			return 0;
		/* babeltrace2, or a viewer without a credential: the live
		 * protocol has no word for a refusal */
		log_refusal(c, false, "a viewer without a credential (this live port requires one; "
			    "babeltrace2 can read a --live-open port)");
		return -1;
	}
	char why[256];
	struct rauth *a = c->auth;
	uint32_t kind = req->u.auth.kind;
	uint8_t key[AUTH_KEY_LEN];
	if (c->authed) {
		/* already proven (no challenge to prove the relay by again) */
		auth_reply(c, LIVE_AUTH_OK, "", NULL);
		return 1;
	}
	if (!a || a->used) {
		snprintf(why, sizeof(why), "TRAWL_AUTH without a challenge");
	} else if (kind == AUTH_NODE) {
		snprintf(why, sizeof(why), "a node's credential cannot read: give the viewer the "
			 "viewer secret or the cluster's");
	} else if (tr_auth_key_for(c->r->secret, kind, NULL, key) < 0) {
		snprintf(why, sizeof(why), "a credential of unknown kind %u", kind);
	} else {
		a->used = true;
		bool ok = tr_auth_check(key, AUTH_ROLE_VIEWER, kind, a->nonce, req->u.auth.nonce,
					NULL, 0, req->u.auth.mac);
		uint8_t mac[AUTH_MAC_LEN];
		if (ok)	/* the relay's proof: the same key over the viewer's nonce */
			tr_auth_relay_mac(key, AUTH_ROLE_VIEWER, kind, a->nonce, req->u.auth.nonce,
					  NULL, 0, mac);
		explicit_bzero(key, sizeof(key));
		if (ok) {
			c->authed = true;
			auth_reply(c, LIVE_AUTH_OK, "", mac);
			explicit_bzero(mac, sizeof(mac));
			return 1;
		}
		snprintf(why, sizeof(why), "authentication failed: not this relay's %s secret",
			 tr_auth_kind_name(kind));
	}
	if (a)
		a->used = true;
	log_refusal(c, true, why);
	auth_reply(c, LIVE_AUTH_REFUSED, why, NULL);
	c->closing = true;
	return 1;
}
