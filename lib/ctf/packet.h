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

#include <stdint.h>

#include "internal.h"

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

/*
 * A packet's index entry (LTTng's index files: `index/<stream>.idx`, a
 * 16-byte header {magic, major 1, minor 1, entry length}, then one 72-byte
 * big-endian entry per packet: offset, then the fields below; sizes in
 * bits).
 */
#define CTF_IDX_MAGIC		0xC1F1DCC1u
#define CTF_IDX_HEADER_LEN	16
#define CTF_IDX_ENTRY_LEN	72

struct ctf_index {
	uint64_t packet_size, content_size;
	uint64_t ts_begin, ts_end;
	uint64_t events_discarded;
	uint64_t stream_id, instance_id, seq;
	/* not in the index file: the packet's events as its writer counted
	 * them, for a destination that counts what it could not deliver
	 * (lib/ctf/dest.h); 0 when not known */
	uint64_t events;
};

static inline void ctf_index_put_header(uint8_t out[CTF_IDX_HEADER_LEN])
{
	put_be32(out, CTF_IDX_MAGIC);
	put_be32(out + 4, 1);
	put_be32(out + 8, 1);
	put_be32(out + 12, CTF_IDX_ENTRY_LEN);
}

static inline void ctf_index_put_entry(uint8_t out[CTF_IDX_ENTRY_LEN], uint64_t offset,
				       const struct ctf_index *ix)
{
	put_be64(out + 0, offset);
	put_be64(out + 8, ix->packet_size);
	put_be64(out + 16, ix->content_size);
	put_be64(out + 24, ix->ts_begin);
	put_be64(out + 32, ix->ts_end);
	put_be64(out + 40, ix->events_discarded);
	put_be64(out + 48, ix->stream_id);
	put_be64(out + 56, ix->instance_id);
	put_be64(out + 64, ix->seq);
}

#endif
