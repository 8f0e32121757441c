/* SPDX-License-Identifier: MIT */
/*
 * lib/net/relay-wr.h - building a message of the relay's protocol
 * (relay-proto.h) field by field, into a growing buffer: the cluster
 * control messages (docs/cluster.md) of the agent (lib/agent/join.c), the
 * relay (lib/relay/control.c) and the control client (lib/net/cluster.c).
 */
#ifndef TRAWL_NET_RELAY_WR_H
#define TRAWL_NET_RELAY_WR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/relay-proto.h"

struct relay_wr {
	uint8_t *buf;			/* malloc'd; the caller frees it */
	size_t len, cap;
	bool bad;			/* out of memory, or over RELAY_MSG_MAX */
};

/* Starts a message of the type (its header, the length filled by
 * tr_relay_wr_done). The buffer is reused from a previous message. */
TRAWL_HIDDEN void tr_relay_wr_begin(struct relay_wr *w, enum relay_type type);
TRAWL_HIDDEN void tr_relay_wr_32(struct relay_wr *w, uint32_t v);
TRAWL_HIDDEN void tr_relay_wr_64(struct relay_wr *w, uint64_t v);
/* A NUL-terminated string (NULL: an empty one). */
TRAWL_HIDDEN void tr_relay_wr_str(struct relay_wr *w, const char *s);
/* The message's length in its header: its size, or 0 (out of memory, or
 * too large). */
TRAWL_HIDDEN size_t tr_relay_wr_done(struct relay_wr *w);

#endif
