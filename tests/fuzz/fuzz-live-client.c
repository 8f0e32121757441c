/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the LTTng live viewer client (lib/net/live-client.h) reading
 * arbitrary replies. The input is
 *   byte 0          the number of calls - 1 (low 3 bits: 1 to 8)
 *   bytes 1..N      one byte per call: low 3 bits the call (0 list,
 *                   1 attach, 2 new streams, 3 metadata, 4 next index,
 *                   5 packet, 6 detach, 7 attach from the last packet);
 *                   for a packet, the higher bits size the buffer when the
 *                   last index gave none
 *   the rest        the relay's bytes: written at once into one end of a
 *                   socket pair, that end then shut for writing; the
 *                   client (tr_live_client_from_fd: CONNECT, CREATE_SESSION)
 *                   reads the other end, then makes the calls.
 * Invariants (abort otherwise):
 *  - every result is one the header documents, with a message on failure;
 *  - after a transport or protocol error (-ECONNRESET, -EPROTO,
 *    -ETIMEDOUT, -ENOMEM) every later call fails with the same error;
 *  - lists: counts within bounds, strings NUL-terminated within their
 *    arrays, metadata flags booleans; a chunk of metadata: 1 to
 *    LIVE_CLIENT_METADATA_MAX bytes, every one readable (ASan); an OK
 *    index: sizes a packet can have; a packet read into a buffer of the
 *    exact size asked (ASan sees any write past it).
 * The client reads what the relay wrote and then the end of the stream
 * (-ECONNRESET): it never waits for its timeout here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/live-client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define INPUT_MAX 60000		/* fits a socket pair's buffer: one write */

static bool broken_err(int r)
{
	return r == -ECONNRESET || r == -EPROTO || r == -ETIMEDOUT || r == -ENOMEM;
}

static void check_streams(const struct live_stream_info *s, size_t n)
{
	if (n > LIVE_CLIENT_STREAMS_MAX || (n && !s) || (!n && s))
		abort();
	for (size_t i = 0; i < n; i++)
		if (strnlen(s[i].path, sizeof(s[i].path)) > LIVE_PATH_MAX ||
		    strnlen(s[i].channel, sizeof(s[i].channel)) > LIVE_NAME_MAX ||
		    (s[i].metadata != true && s[i].metadata != false))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > INPUT_MAX)
		return 0;
	size_t ncalls = (size_t)(data[0] & 7) + 1;
	if (size < 1 + ncalls)
		return 0;
	const uint8_t *calls = data + 1, *reply = data + 1 + ncalls;
	size_t rlen = size - 1 - ncalls;

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	int big = 1 << 20;
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if (rlen && write(sv[1], reply, rlen) != (ssize_t)rlen) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	shutdown(sv[1], SHUT_WR);

	char err[256] = "";
	errno = 0;
	struct live_client *c = tr_live_client_from_fd(sv[0], 5000, err, sizeof(err));
	if (!c) {
		if (!err[0] || (errno != ECONNRESET && errno != EPROTO && errno != EIO &&
				errno != ENOMEM && errno != ETIMEDOUT))
			abort();
		close(sv[1]);
		return 0;
	}
	if (tr_live_client_minor(c) != LIVE_MINOR)
		abort();

	int broken = 0;
	uint64_t last_packet = 0;	/* bytes of the last OK index */
	uint64_t last_offset = 0;
	for (size_t i = 0; i < ncalls; i++) {
		uint8_t op = calls[i];
		int r = 0;
		switch (op & 7) {
		case 0: {
			struct live_session_info *s = NULL;
			size_t n = 99;
			r = tr_live_client_list(c, &s, &n);
			if (r == 0) {
				if (n > LIVE_CLIENT_SESSIONS_MAX || (n && !s) || (!n && s))
					abort();
				for (size_t k = 0; k < n; k++)
					if (strnlen(s[k].hostname, sizeof(s[k].hostname)) > LIVE_HOST_MAX ||
					    strnlen(s[k].name, sizeof(s[k].name)) > LIVE_NAME_MAX)
						abort();
			} else if (s || n) {
				abort();
			}
			free(s);
			if (r && r != -ECONNRESET && r != -EPROTO && r != -ETIMEDOUT && r != -ENOMEM)
				abort();
			break;
		}
		case 1:
		case 7: {
			struct live_stream_info *s = NULL;
			size_t n = 99;
			r = tr_live_client_attach(c, op, (op & 7) == 1, &s, &n);
			if (r == 0)
				check_streams(s, n);
			else if (s || n)
				abort();
			free(s);
			if (r && !broken_err(r) && r != -ENOENT && r != -EBUSY && r != -EOPNOTSUPP &&
			    r != -EINVAL && r != -ENOTCONN)
				abort();
			break;
		}
		case 2: {
			struct live_stream_info *s = NULL;
			size_t n = 99;
			bool hup = true;
			r = tr_live_client_new_streams(c, op, &s, &n, &hup);
			if (r == 0)
				check_streams(s, n);
			else if (s || n)
				abort();
			if (hup && (r || n))
				abort();
			free(s);
			if (r && !broken_err(r) && r != -EIO)
				abort();
			break;
		}
		case 3: {
			uint8_t *b = NULL;
			size_t n = 99;
			r = tr_live_client_metadata(c, op, &b, &n);
			if (r == 1) {
				if (!b || n == 0 || n > LIVE_CLIENT_METADATA_MAX)
					abort();
				volatile uint8_t sum = 0;
				for (size_t k = 0; k < n; k++)
					sum ^= b[k];
				(void)sum;
				r = 0;
			} else if (b || n) {
				abort();
			}
			free(b);
			if (r && !broken_err(r) && r != -ENOENT)
				abort();
			break;
		}
		case 4: {
			struct live_index ix;
			r = tr_live_client_next_index(c, op, &ix);
			if (r == 0) {
				if (ix.status < LIVE_INDEX_OK || ix.status > LIVE_INDEX_EOF)
					abort();
				if (ix.status == LIVE_INDEX_OK &&
				    (ix.packet_size || ix.content_size)) {
					if (!ix.packet_size || ix.packet_size % 8 ||
					    ix.packet_size / 8 > UINT32_MAX ||
					    ix.content_size > ix.packet_size ||
					    ix.offset > UINT64_MAX - ix.packet_size / 8)
						abort();
					last_packet = ix.packet_size / 8;
					last_offset = ix.offset;
				}
			} else if (!broken_err(r)) {
				abort();
			}
			break;
		}
		case 5: {
			uint32_t len = last_packet && last_packet <= 65536 ? (uint32_t)last_packet
									  : (uint32_t)(op >> 3) * 16u;
			uint8_t *b = malloc(len ? len : 1);
			uint32_t st = 99, fl = 99;
			if (!b)
				break;
			r = tr_live_client_packet(c, op, last_offset, len, b, &st, &fl);
			if (r == 0 && (st < LIVE_PACKET_OK || st > LIVE_PACKET_EOF))
				abort();
			if (r && (st != 0 || fl != 0 || !broken_err(r)))
				abort();
			free(b);
			break;
		}
		case 6:
			r = tr_live_client_detach(c, op);
			if (r && !broken_err(r) && r != -ENOENT && r != -EIO)
				abort();
			break;
		}
		if (r && !tr_live_client_errmsg(c)[0])
			abort();
		if (broken && r != broken)
			abort();
		if (broken_err(r))
			broken = r;
	}
	tr_live_client_free(c);
	close(sv[1]);
	return 0;
}
