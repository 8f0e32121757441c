/* SPDX-License-Identifier: MIT */
/*
 * lib/ctf/packet.h - the packet header and context every trawl packet
 * starts with, as the writer declares them in its metadata (all LE, byte
 * aligned). The writer builds packets with it and the user-space ring
 * buffers lay their sub-buffers out with it, so the consumer writes them
 * without re-encoding.
 */
#ifndef TRAWL_CTF_PACKET_H
#define TRAWL_CTF_PACKET_H

#define CTF_MAGIC 0xC1FC1FC1u	/* first 4 bytes of every packet */

/* Byte offsets in a packet. */
enum {
	PK_MAGIC = 0,		/* u32 */
	PK_UUID = 4,		/* u8[16]: the trace's uuid */
	PK_STREAM_ID = 20,	/* u32 */
	PK_INSTANCE_ID = 24,	/* u64 */
	PK_TS_BEGIN = 32,	/* u64 */
	PK_TS_END = 40,		/* u64 */
	PK_CONTENT_SIZE = 48,	/* u64, bits */
	PK_PACKET_SIZE = 56,	/* u64, bits */
	PK_SEQ_NUM = 64,	/* u64 */
	PK_DISCARDED = 72,	/* u64, cumulative */
	PK_CPU_ID = 80,		/* u32 */
	PK_HDR_END = 84,	/* the first event */
};

#endif
