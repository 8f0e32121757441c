/* SPDX-License-Identifier: MIT */
/*
 * lib/net/auth.h - the relay's credentials and its challenge-response
 * (docs/auth.md). Both ends use it: the relay (lib/relay/auth.c) and its
 * peers (lib/net/relay-out.c for producers, lib/net/live-client.c for
 * viewers).
 *
 * A credential is a key of 32 bytes and what it may do:
 *   cluster        the relay's own secret: writes any host's traces and
 *                  reads every session;
 *   node HOST      derived from the cluster secret for one host: writes
 *                  only traces of that host name, reads nothing;
 *   viewer         derived from the cluster secret: reads (live port),
 *                  writes nothing.
 * Derived keys are HMAC-SHA256(cluster, label): the relay, which holds the
 * cluster secret, computes any of them; a node given only its own cannot
 * compute another's, nor the cluster's.
 *
 * The proof: the relay sends a fresh random nonce (32 bytes, getrandom);
 * the peer answers its own nonce and HMAC-SHA256(key, "trawl-auth-1" ||
 * role || credential kind || relay nonce || peer nonce || context), where
 * the context is the producer's whole HELLO message, header and payload
 * (session, host, trace, trace UUID), an agent's whole JOIN (its host
 * name), and empty for a viewer. The secret never crosses the network; an
 * answer is good for one challenge, one role and one HELLO only. The relay
 * then proves the same key to the peer over the peer's nonce
 * (tr_auth_relay_mac): a peer with a credential refuses a relay that asks
 * no proof, or whose own proof is missing or wrong.
 *
 * A credential file is text: '#' comments, blank lines, and one line
 * "cluster HEX", "node HOST HEX" or "viewer HEX" (HEX: 64 hex digits).
 * It must not be readable or writable by group or others (as ssh's keys).
 */
#ifndef TRAWL_NET_AUTH_H
#define TRAWL_NET_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define AUTH_KEY_LEN 32
#define AUTH_NONCE_LEN 32
#define AUTH_MAC_LEN 32
#define AUTH_HOST_MAX 63		/* as the relay's host names */
#define AUTH_FILE_MAX 4096		/* a credential file's bytes, at most */

enum auth_kind { AUTH_CLUSTER = 1, AUTH_NODE = 2, AUTH_VIEWER = 3 };
/* What the proof is for: it is part of the MAC, so a producer's answer
 * cannot serve a viewer or an agent joining, and the other way round.
 * AUTH_ROLE_NODE: an agent joining the cluster (its JOIN is the context). */
enum auth_role { AUTH_ROLE_PRODUCER = 1, AUTH_ROLE_VIEWER = 2, AUTH_ROLE_NODE = 3 };

struct auth_cred {
	enum auth_kind kind;
	char host[AUTH_HOST_MAX + 1];	/* AUTH_NODE: the host it writes */
	uint8_t key[AUTH_KEY_LEN];
};

/* Whether HMAC-SHA256 is at hand (libnettle, loaded at the first call):
 * 0, or -ENOSYS with the reason in err. Every other function works
 * without it but the MACs: a relay or a peer checks it before it counts on
 * them (without it tr_auth_check is always false). */
TRAWL_HIDDEN int tr_auth_ready(char *err, size_t errlen);

/* "cluster", "node", "viewer"; "?" otherwise. */
TRAWL_HIDDEN const char *tr_auth_kind_name(uint32_t kind);

/* Parses a credential file's text (len bytes, need not be NUL-terminated).
 * 0, or -EINVAL with the reason in err (line number and what is wrong). */
TRAWL_HIDDEN int tr_auth_parse(const char *text, size_t len, struct auth_cred *c, char *err,
			       size_t errlen);

/* Reads and parses the file at path: no symbolic link followed, a regular
 * file of at most AUTH_FILE_MAX bytes, not accessible by group or others
 * (-EPERM: "chmod 600"). 0, or -errno with the reason in err (the path
 * first). */
TRAWL_HIDDEN int tr_auth_load(const char *path, struct auth_cred *c, char *err, size_t errlen);

/* The line a credential file holds for c (with a newline), in buf; its
 * length, or -ENOSPC. */
TRAWL_HIDDEN int tr_auth_format(const struct auth_cred *c, char *buf, size_t len);

/* A node's (host given) or a viewer's credential derived from the cluster
 * secret. 0, or -EINVAL (not a cluster credential, or a host name that is
 * not a relay name). */
TRAWL_HIDDEN int tr_auth_derive(const struct auth_cred *cluster, enum auth_kind kind,
				const char *host, struct auth_cred *out);

/* The key a relay holding the cluster secret expects for a proof of kind
 * (and host, for a node). 0, or -EINVAL. */
TRAWL_HIDDEN int tr_auth_key_for(const struct auth_cred *cluster, uint32_t kind, const char *host,
				 uint8_t key[AUTH_KEY_LEN]);

/* A fresh nonce from getrandom(2). 0, or -errno. */
TRAWL_HIDDEN int tr_auth_nonce(uint8_t nonce[AUTH_NONCE_LEN]);

/* The proof's MAC (above); ctx may be NULL when ctxlen is 0. */
TRAWL_HIDDEN void tr_auth_mac(const uint8_t key[AUTH_KEY_LEN], uint32_t role, uint32_t kind,
			      const uint8_t relay_nonce[AUTH_NONCE_LEN],
			      const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx,
			      size_t ctxlen, uint8_t mac[AUTH_MAC_LEN]);

/* Whether mac is the proof's MAC, compared in constant time. */
TRAWL_HIDDEN bool tr_auth_check(const uint8_t key[AUTH_KEY_LEN], uint32_t role, uint32_t kind,
				const uint8_t relay_nonce[AUTH_NONCE_LEN],
				const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx,
				size_t ctxlen, const uint8_t mac[AUTH_MAC_LEN]);

/* The relay's proof to a peer (mutual authentication, docs/auth.md):
 * HMAC-SHA256(key, "trawl-rely-1" || role || kind || relay nonce || peer
 * nonce || context), the same inputs as the peer's proof under another
 * label, so that no peer's answer can serve as a relay's nor the other way
 * round. The relay sends it once the peer's proof is good; a peer holding
 * a credential takes nothing from a relay (no WELCOME, no request) before
 * this proof checks. */
TRAWL_HIDDEN void tr_auth_relay_mac(const uint8_t key[AUTH_KEY_LEN], uint32_t role, uint32_t kind,
				    const uint8_t relay_nonce[AUTH_NONCE_LEN],
				    const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx,
				    size_t ctxlen, uint8_t mac[AUTH_MAC_LEN]);
TRAWL_HIDDEN bool tr_auth_relay_check(const uint8_t key[AUTH_KEY_LEN], uint32_t role,
				      uint32_t kind, const uint8_t relay_nonce[AUTH_NONCE_LEN],
				      const uint8_t peer_nonce[AUTH_NONCE_LEN], const void *ctx,
				      size_t ctxlen, const uint8_t mac[AUTH_MAC_LEN]);

/* The AUTH message (lib/net/relay-proto.h) of a producer (role
 * AUTH_ROLE_PRODUCER, msg its HELLO) or of an agent joining
 * (AUTH_ROLE_NODE, msg its JOIN) proving c for msg (len bytes, header
 * included) against the relay's nonce: RELAY_HDR_LEN + RELAY_AUTH_LEN
 * bytes in out. 0, or -errno (no HMAC, no randomness). */
TRAWL_HIDDEN int tr_auth_put(const struct auth_cred *c, uint32_t role,
			     const uint8_t relay_nonce[AUTH_NONCE_LEN], const void *msg, size_t len,
			     uint8_t *out);

/* Forgets a key (explicit_bzero: not optimized away). */
TRAWL_HIDDEN void tr_auth_wipe(struct auth_cred *c);

#endif
