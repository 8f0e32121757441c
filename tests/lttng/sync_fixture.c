/* SPDX-License-Identifier: MIT */
/*
 * tests/lttng/sync_fixture.c - an LTTng-UST instrumented program whose two
 * processes pose as two nodes exchanging application messages, for the
 * clock synchronization tests on LTTng traces (record-sync.sh, t0640).
 *
 * Usage: sync-fixture COUNT GAP_US PEER_PROGRAM
 *   The requester (this process, "node A") makes a stream socket pair,
 *   starts PEER_PROGRAM --serve FD (the same program under another name,
 *   so the two processes have different procnames: "node B") and sends
 *   COUNT requests, one every GAP_US microseconds, once B said it is
 *   ready; B answers each with a reply. Request i has msg_id i
 *   (1..COUNT), its reply msg_id REPLY_BASE + i (REPLY_BASE = 1000000).
 *   Every sender emits app_sync:msg_send { msg_id, peer } immediately
 *   before writing a message, every receiver app_sync:msg_recv { msg_id }
 *   immediately after reading a whole one, so the two events bracket the
 *   message's transit. At the end the requester prints what was exchanged:
 *     A->B COUNT
 *     B->A COUNT
 *   and exits 0 when B exited 0 too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sync_fixture_tp.h"

#define REPLY_BASE UINT64_C(1000000)

static int tr_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 1 a whole message, 0 end of stream, -1 error. */
static int read_msg(int fd, uint64_t *id)
{
	char *p = (char *)id;
	size_t got = 0;

	while (got < sizeof(*id)) {
		ssize_t n = read(fd, p + got, sizeof(*id) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return got ? -1 : 0;
		got += (size_t)n;
	}
	return 1;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Node B: says it is ready (message 0, not traced: the requester waits for
 * it, so no request waits for B's start), then answers every request until
 * the requester closes the socket.
 */
static int serve(int fd)
{
	uint64_t id = 0;
	int rc;

	if (tr_write_all(fd, &id, sizeof(id)) < 0) {
		perror("sync-fixture: serve: write");
		return 1;
	}
	while ((rc = read_msg(fd, &id)) > 0) {
		uint64_t reply = REPLY_BASE + id;

		lttng_ust_tracepoint(app_sync, msg_recv, id);
		lttng_ust_tracepoint(app_sync, msg_send, reply, "nodeA");
		if (tr_write_all(fd, &reply, sizeof(reply)) < 0) {
			perror("sync-fixture: serve: write");
			return 1;
		}
	}
	if (rc < 0) {
		perror("sync-fixture: serve: read");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t count, i, id, sent = 0, replies = 0;
	long gap;
	int sv[2], status;
	pid_t pid;

	if (argc == 3 && strcmp(argv[1], "--serve") == 0)
		return serve(atoi(argv[2]));
	if (argc != 4) {
		fprintf(stderr, "usage: sync-fixture COUNT GAP_US PEER_PROGRAM\n");
		return 2;
	}
	count = strtoull(argv[1], NULL, 10);
	gap = atol(argv[2]);
	if (count == 0 || count >= REPLY_BASE || gap < 0) {
		fprintf(stderr, "sync-fixture: COUNT must be 1..%" PRIu64 ", GAP_US >= 0\n",
			REPLY_BASE - 1);
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("sync-fixture: socketpair");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("sync-fixture: fork");
		return 1;
	}
	if (pid == 0) {
		/* Only exec here: the child is traced as the program it runs. */
		char fdarg[16];
		int fd = dup(sv[1]);	/* without close-on-exec */

		if (fd < 0)
			_exit(127);
		snprintf(fdarg, sizeof(fdarg), "%d", fd);
		execl(argv[3], argv[3], "--serve", fdarg, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	if (read_msg(sv[0], &id) <= 0 || id != 0) {
		fprintf(stderr, "sync-fixture: %s did not start\n", argv[3]);
		return 1;
	}
	for (i = 1; i <= count; i++) {
		lttng_ust_tracepoint(app_sync, msg_send, i, "nodeB");
		if (tr_write_all(sv[0], &i, sizeof(i)) < 0) {
			perror("sync-fixture: write");
			break;
		}
		sent++;
		if (read_msg(sv[0], &id) <= 0) {
			fprintf(stderr, "sync-fixture: no reply to %" PRIu64 "\n", i);
			break;
		}
		lttng_ust_tracepoint(app_sync, msg_recv, id);
		if (id != REPLY_BASE + i) {
			fprintf(stderr, "sync-fixture: reply %" PRIu64 " to request %" PRIu64 "\n",
				id, i);
			break;
		}
		replies++;
		if (gap)
			sleep_us(gap);
	}
	close(sv[0]);
	if (waitpid(pid, &status, 0) < 0) {
		perror("sync-fixture: waitpid");
		return 1;
	}
	printf("A->B %" PRIu64 "\nB->A %" PRIu64 "\n", sent, replies);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "sync-fixture: %s failed (status %d)\n", argv[3], status);
		return 1;
	}
	return sent == count && replies == count ? 0 : 1;
}
