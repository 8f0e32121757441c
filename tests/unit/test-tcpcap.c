/* SPDX-License-Identifier: MIT */
/*
 * test-tcpcap: the TCP capture object (lib/kern/tcpcap.h) embedded in a
 * test program: options checked, then (root and eBPF needed, else the
 * rest is skipped) a capture of one port on loopback while this process
 * exchanges a few messages over TCP on it, stopped from another thread:
 * every segment is seen leaving and arriving (loopback), the counters
 * agree with the trace, and the trace's fields are the schema's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "kern/tcpcap.h"
#include "trawl/ctf.h"
#include "trawl/pipe.h"
#include "trawl/sync-schema.h"
#include "tap.h"

static char dir[] = "/tmp/test-tcpcap-XXXXXX";

static void *run_thread(void *arg)
{
	static char err[256];
	static int r;
	r = tr_tcpcap_run(arg, err, sizeof(err));
	if (r)
		fprintf(stderr, "# tr_tcpcap_run: %s\n", err);
	return &r;
}

/* A listener on 127.0.0.1, an ephemeral port. */
static int listener(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* n request/reply exchanges on port; 0 or -1. */
static int exchange(int lfd, uint16_t port, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s = -1, r = -1;
	char buf[64];
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) ||
	    (s = accept(lfd, NULL, NULL)) < 0)
		goto out;
	for (int i = 0; i < n; i++)
		if (write(c, "ping", 4) != 4 || read(s, buf, sizeof(buf)) != 4 ||
		    write(s, "pong!", 5) != 5 || read(c, buf, sizeof(buf)) != 5)
			goto out;
	r = 0;
out:
	if (s >= 0)
		close(s);
	if (c >= 0)
		close(c);
	return r;
}

/* Events of the trace: sends, receives, and whether the fields are the schema's. */
static int read_trace(const char *path, long *send, long *recv, int *fields_ok)
{
	char err[256];
	const char *paths[] = { path };
	struct trawl_reader *r = trawl_reader_new(paths, 1, NULL, err, sizeof(err));
	const struct trawl_event *ev;
#define NAME(n, bits, base) #n,
	static const char *const want[] = { TRAWL_SYNC_TCP_FIELDS(NAME) };
#undef NAME
	*send = *recv = 0;
	*fields_ok = 1;
	if (!r)
		return -1;
	while (trawl_reader_next(r, &ev) == 1) {
		const struct trawl_ctf_type *f = ev->cls->fields;
		*send += !strcmp(ev->cls->name, TRAWL_SYNC_TCP_SEND);
		*recv += !strcmp(ev->cls->name, TRAWL_SYNC_TCP_RECV);
		if (!f || f->u.s.n != sizeof(want) / sizeof(want[0]))
			*fields_ok = 0;
		for (size_t i = 0; f && *fields_ok && i < f->u.s.n; i++) {
			const char *n = f->u.s.fields[i].name;
			*fields_ok &= !strcmp(n[0] == '_' ? n + 1 : n, want[i]);
		}
	}
	trawl_reader_free(r);
	return 0;
}

int main(void)
{
	char err[512] = "", path[128];
	uint16_t port;
	int lfd = listener(&port);

	if (!mkdtemp(dir) || lfd < 0) {
		ok(0, "a directory and a listener");
		return done_testing();
	}
	snprintf(path, sizeof(path), "%s/h/tcp", dir);
	struct tcpcap_opts o = { .sz = sizeof(o), .path = path, .host = "h", .ports = &port,
				 .nports = 1, .has_clock_offset = true };

	/* options */
	struct tcpcap_opts bad = o;
	bad.ring_size = 5000;
	ok(!tr_tcpcap_new(&bad, err, sizeof(err)) && (errno == EINVAL || errno == ENOTSUP),
	   "a ring that is no power of two (%s)", err);
	bad = o;
	bad.nports = TCPCAP_MAX_PORTS + 1;
	ok(!tr_tcpcap_new(&bad, err, sizeof(err)) && (errno == EINVAL || errno == ENOTSUP),
	   "too many ports (%s)", err);
	tr_tcpcap_free(NULL);

	struct tcpcap *t = tr_tcpcap_new(&o, err, sizeof(err));
	if (!t) {
		printf("# tr_tcpcap_new: %s\n", err);
		printf("ok %d # SKIP cannot capture here\n", ++tap_n);
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", dir);
		return done_testing();
	}
	ok(1, "the program is loaded, the trace created");
	ok(tr_tcpcap_netns(t) != 0, "the namespace's inode (%llu)", (unsigned long long)tr_tcpcap_netns(t));
	struct tcpcap *t2 = tr_tcpcap_new(&o, err, sizeof(err));
	ok(!t2 && errno == EEXIST, "a second capture into the same trace: EEXIST (%s)", err);
	tr_tcpcap_free(t2);
	is_int(tr_tcpcap_run(t, err, sizeof(err)), -EINVAL, "run before start: EINVAL");
	is_int(tr_tcpcap_start(t, err, sizeof(err)), 0, "attached (%s)", err);

	pthread_t th;
	void *rc;
	pthread_create(&th, NULL, run_thread, t);
	is_int(exchange(lfd, port, 10), 0, "10 exchanges over TCP on port %u", port);
	usleep(100000);
	tr_tcpcap_stop(t);
	pthread_join(th, &rc);
	is_int(*(int *)rc, 0, "the run stops when told, from another thread");

	struct tr_tcpcap_stats st;
	tr_tcpcap_stats(t, &st);
	tr_tcpcap_free(t);
	/* connect (3), 10 pings and 10 pongs (20, ACKs ride along), close */
	ok(st.sent >= 23, "segments sent: %llu", (unsigned long long)st.sent);
	is_int(st.received, st.sent, "loopback: every segment sent was received");
	ok(!st.lost && !st.late && !st.negative, "none lost");
	long s, r;
	int fields_ok;
	ok(read_trace(path, &s, &r, &fields_ok) == 0, "the trace reads back");
	is_int(s, st.sent, "every send is in the trace");
	is_int(r, st.received, "every receive too");
	ok(fields_ok, "with the schema's fields, in order");

	close(lfd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", dir);
	return done_testing();
}
