/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the relay itself (lib/relay/relay.c and live.c, linked from
 * libtrawl.a; lib/relay/relay-internal.h drives its state without sockets)
 * on arbitrary bytes from two producers and two live viewers at once, as if
 * received from the network: HELLO creating traces on disk, metadata,
 * streams, packets and beacons, and every viewer request against that
 * state (attach, indexes, packets read back from the files, metadata, new
 * streams, detach). The relay must never crash, read outside its buffers
 * or leak, whatever the order; a connection it closes is replaced.
 *
 * Input: chunks of {u8 who, u16 length (little-endian), bytes}. who & 3:
 * producer 0, producer 1, viewer 0, viewer 1; who & 0x80: run the live
 * tick first; who & 0x40: close that connection first (a producer lost
 * before CLOSE, a viewer gone while attached). The first chunk's who &
 * 0x20 gives the relay a disk quota of 16 KiB per session. Traces are
 * written under a directory of the process, removed after each input.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relay/relay-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	remove(p);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[96];
	if (!dir[0]) {
		struct stat st;
		snprintf(dir, sizeof(dir), "%s/trawl-fuzz-relay-%d",
			 stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
	}
	mkdir(dir, 0700);
	struct trawl_relay_opts o = { .sz = sizeof(o), .output = dir, .max_conns = 100,
				      .max_session_size = size && (data[0] & 0x20) ? 16384 : 0 };
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!r)
		return 0;
	struct rconn *c[4] = { NULL };
	while (size >= 3) {
		unsigned who = data[0];
		size_t n = (size_t)data[1] | (size_t)data[2] << 8;
		data += 3;
		size -= 3;
		if (n > size)
			n = size;
		unsigned k = who & 3;
		if (who & 0x80)
			tr_live_tick(r);
		if (c[k] && ((who & 0x40) || c[k]->dead || c[k]->closing)) {
			tr_relay_conn_close(c[k]);
			c[k] = NULL;
		}
		if (!c[k] && !(c[k] = tr_relay_conn_new(r, k < 2 ? RC_PRODUCER : RC_VIEWER)))
			break;
		tr_relay_conn_feed(c[k], data, n);
		/* the replies would go to the network */
		c[k]->outoff = c[k]->outlen = 0;
		data += n;
		size -= n;
	}
	trawl_relay_free(r);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
