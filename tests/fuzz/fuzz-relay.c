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
 * before CLOSE, a viewer gone while attached); who & 0x20 on producer 1:
 * it is a cluster control client (docs/cluster.md: agents JOIN on the
 * producers' connections, CLUSTER requests are forwarded to them, their
 * CTL_REPLY and PONG answered), and 0x80 also runs the control tick with
 * every deadline passed. Authentication
 * (lib/relay/auth.c): when the first chunk's who has 0x08, the relay has a
 * secret (every peer must prove it holds a credential first); who & 0x10:
 * before the chunk's bytes, the connection gets the right answer to its
 * pending challenge, if it has one (a fuzzer cannot find an HMAC), so what
 * follows a proof is reached too (a producer's HELLO, or an agent's JOIN
 * with its credential flag: seeds auth-join*). Traces are written under a directory of
 * the process, removed after each input. The first chunk's who & 0x04
 * gives the relay a disk quota of 16 KiB per session.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "net/auth.h"

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
				      .max_session_size = size && (data[0] & 0x04) ? 16384 : 0 };
	struct trawl_relay *r = tr_relay_state_new(&o);
	if (!r)
		return 0;
	struct rconn *c[4] = { NULL };
	if (size >= 3 && (data[0] & 0x08) && (r->secret = calloc(1, sizeof(*r->secret)))) {
		r->secret->kind = AUTH_CLUSTER;
		memset(r->secret->key, 0x5a, AUTH_KEY_LEN);
	}
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
		/* producer 1 with 0x20 at its creation: a cluster control client
		 * (the relay's Unix control socket, lib/relay/control.c) */
		if (k == 1 && (who & 0x20) && !c[k]->trace && !c[k]->node && !c[k]->inlen)
			c[k]->local = true;
		if (who & 0x80)
			tr_control_tick(r, (int64_t)1 << 50);	/* every deadline passed */
		uint8_t proof[128];
		size_t pn = (who & 0x10) ? tr_relay_auth_prove(c[k], proof) : 0;
		if (pn)
			tr_relay_conn_feed(c[k], proof, pn);
		if (c[k]->dead || c[k]->closing)
			c[k]->outoff = c[k]->outlen = 0;
		else
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
