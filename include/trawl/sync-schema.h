/* SPDX-License-Identifier: MIT */
/*
 * trawl/sync-schema.h - the sync-point events: what a producer writes so
 * that `trawl sync` finds the messages nodes exchanged, and what the finder
 * (trawl_sync_points_read(), lib/sync/points.c) reads. Every producer
 * (trawl probe: lib/sync/probe.c; trawl tcpcap: lib/kern/tcpcap.c; trawl
 * simulate --sync: lib/sim/sim-sync.c) and the finder take the names from
 * here, so this file is the contract; docs/sync.md explains it.
 *
 * A node is a trace's env.hostname. A message is a send event on one node
 * and a receive event on another with the same key:
 *  - probes: PROBE_SEND on the sender and PROBE_RECV on the receiver, each
 *    with PROBE_KEY (an unsigned integer, unique per sender) and PROBE_PEER
 *    (a string: the other node's name), in this order;
 *  - TCP segments: TCP_SEND / TCP_RECV, whose key is every field of
 *    TRAWL_SYNC_TCP_FIELDS (unsigned integers, host byte order).
 * Only names and types are fixed: loglevels, stream classes and clocks are
 * the producer's.
 *
 * Macros only: nothing here is compiled into libtrawl.
 */
#ifndef TRAWL_SYNC_SCHEMA_H
#define TRAWL_SYNC_SCHEMA_H

/* ---- probes (trawl probe, trawl simulate --sync) */
#define TRAWL_SYNC_PROBE_SEND	"trawl_sync:probe_send"
#define TRAWL_SYNC_PROBE_RECV	"trawl_sync:probe_recv"
#define TRAWL_SYNC_PROBE_GLOB	"trawl_sync:probe_*"	/* both */
#define TRAWL_SYNC_PROBE_KEY	"key"	/* unsigned 64-bit integer */
#define TRAWL_SYNC_PROBE_PEER	"peer"	/* string */

/* ---- TCP segments (trawl tcpcap) */
#define TRAWL_SYNC_TCP_SEND	"trawl_sync:tcp_send"
#define TRAWL_SYNC_TCP_RECV	"trawl_sync:tcp_recv"
#define TRAWL_SYNC_TCP_GLOB	"trawl_sync:tcp_*"	/* both */
/*
 * The payload, in order: F(field, bits, display base) for each field, an
 * unsigned integer of that many bits. Writers build the payload type and
 * serialize a record with it (#field is the field's name); the finder
 * takes every field as part of the key.
 */
#define TRAWL_SYNC_TCP_FIELDS(F) \
	F(saddr, 32, 10) \
	F(daddr, 32, 10) \
	F(sport, 16, 10) \
	F(dport, 16, 10) \
	F(seq, 32, 10) \
	F(ack, 32, 10) \
	F(flags, 8, 16) \
	F(len, 32, 10)

#endif
