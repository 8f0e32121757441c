/* SPDX-License-Identifier: MIT */
/*
 * trawl/cluster.h - cluster control (docs/cluster.md): asking a relay,
 * through its Unix control socket, for the nodes (agents) that joined it,
 * and having it run an agent verb (create, start, stop, snapshot,
 * destroy, ...) on every node or on the nodes whose names match a glob.
 * `trawl cluster` is the command around it.
 *
 * Conventions: int returns are 0 or -errno; (err, errlen) receives a
 * one-line message. The library never prints.
 */
#ifndef TRAWL_CLUSTER_H
#define TRAWL_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum trawl_cluster_state {
	TRAWL_CLUSTER_UP = 0,		/* joined: connected now */
	TRAWL_CLUSTER_DOWN = 1,		/* joined once, gone since */
	TRAWL_CLUSTER_UNKNOWN = 2,	/* never joined (a name asked for) */
};

#define TRAWL_CLUSTER_OFFSET 1u		/* offset_ns is estimated */
#define TRAWL_CLUSTER_ANSWER 2u		/* the node answered the verb */

/* One node, as the relay knows it, and its answer to the request. The
 * strings are owned by the library and valid during the callback. */
struct trawl_cluster_node {
	const char *name;		/* the agent's host name */
	const char *addr;		/* its address as the relay saw it */
	enum trawl_cluster_state state;
	unsigned flags;			/* TRAWL_CLUSTER_* */
	uint64_t since;			/* CLOCK_REALTIME ns it joined (UP) or left (DOWN) */
	/* the node's CLOCK_MONOTONIC minus the relay's, estimated from the
	 * ping with the shortest round trip (rtt_ns) of the last few */
	int64_t offset_ns;
	uint64_t rtt_ns;
	uint64_t buffers;		/* ring buffers the agent consumes */
	uint64_t discarded;		/* events they discarded (full buffers) */
	const char *sessions;		/* "NAME:STATE,..." */
	/* the answer (TRAWL_CLUSTER_ANSWER): the verb's exit status (0 done,
	 * 1 failed, 2 bad request; -1: no answer, see err), the node's
	 * CLOCK_MONOTONIC when the verb ran and when it answered, its output
	 * and error text */
	int status;
	uint64_t t_apply, t_done;
	const char *out, *err;
};

/*
 * Sends one request to the relay listening on the Unix socket path
 * (trawl_relay_opts.control): argv[0] "nodes" lists the nodes, any other
 * is an agent verb the relay forwards to every node whose name matches
 * glob (NULL: "*"), waiting for each answer at most timeout_ms (0: 15000,
 * counted at the relay). node() is called once per node, in name order.
 * Returns 0 when every node answered 0 (or, for "nodes", always), 1 when
 * one failed, did not answer, or is down, or -errno with the reason in err
 * (the relay unreachable, a broken reply).
 */
int trawl_cluster_request(const char *path, const char *glob, int argc, char **argv,
			  unsigned timeout_ms,
			  void (*node)(void *arg, const struct trawl_cluster_node *n), void *arg,
			  char *err, size_t errlen);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
