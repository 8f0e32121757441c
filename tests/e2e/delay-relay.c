/*
 * delay-relay: a user-space one-way delay emulator for UDP, for tests on
 * kernels without tc netem (t0620-sync-netns.sh builds and runs it).
 *
 *   delay-relay [-s SEED] [-r READY_FILE] [-t SECONDS] ROUTE...
 *   ROUTE = LADDR:LPORT=DADDR:DPORT:DELAY_US[:JITTER_US]
 *
 * Every ROUTE is one UDP socket bound to LADDR:LPORT (IPv4); each datagram
 * it receives is sent on to DADDR:DPORT, from that same socket, DELAY_US
 * microseconds after it was received, plus, with JITTER_US, an exponential
 * jitter of that mean (capped at 20 times the mean; seeded, so runs are
 * repeatable). A datagram is never sent early: its true transit is
 * always at least DELAY_US (the scheduler can only make it later; how much
 * later is reported). Datagrams of one route may overtake each other when
 * there is jitter, as on a real network.
 *
 * One thread, ppoll() with a nanosecond timeout to the next due datagram
 * (timer slack set to 1 ns). It runs until SIGINT/SIGTERM or -t SECONDS,
 * creates READY_FILE once every socket is bound, and prints one line per
 * route on exit. At SIGINT/SIGTERM it takes what its sockets still hold,
 * forwards every datagram it has when due, and only then exits: once the
 * senders are done and the relay has read what they sent, a signal loses
 * nothing (at -t SECONDS, it ends at once: "pending" counts what it had).
 *
 *   route LADDR:LPORT -> DADDR:DPORT delay D jitter J: forwarded N dropped N
 *   late_us min X mean X max X
 *
 * (dropped: queue full, datagram over 1500 bytes, or send error; late: when
 * it was sent minus when it was due.) Exit 0, or 1 on a setup error, 2 on
 * bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUTES 64
#define MAX_DGRAM 1500
#define QUEUE_LEN 4096

struct route {
	int fd;
	struct sockaddr_in local, dest;
	uint64_t delay_ns, jitter_ns;
	uint64_t forwarded, dropped;
	uint64_t late_min, late_max, late_sum;
};

struct pkt {
	uint64_t due, seq;
	int route;
	size_t len;
	unsigned char data[MAX_DGRAM];
};

static struct route routes[MAX_ROUTES];
static int nroutes;
static struct pkt pool[QUEUE_LEN];
static int heap[QUEUE_LEN], nheap;	/* min-heap of pool indexes by (due, seq) */
static int freelist[QUEUE_LEN], nfree;
static uint64_t rng_state, seq;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t splitmix64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t jitter(uint64_t mean)
{
	double u, j;

	if (!mean)
		return 0;
	u = ((double)(splitmix64() >> 11) + 1.0) / 9007199254740993.0;	/* (0, 1] */
	j = -log(u) * (double)mean;
	if (j > 20.0 * (double)mean)
		j = 20.0 * (double)mean;
	return (uint64_t)j;
}

static bool before(int a, int b)
{
	return pool[a].due < pool[b].due || (pool[a].due == pool[b].due && pool[a].seq < pool[b].seq);
}

static void heap_push(int p)
{
	int i = nheap++;

	heap[i] = p;
	while (i > 0 && before(heap[i], heap[(i - 1) / 2])) {
		int up = (i - 1) / 2, t = heap[up];

		heap[up] = heap[i];
		heap[i] = t;
		i = up;
	}
}

static int heap_pop(void)
{
	int top = heap[0], i = 0;

	heap[0] = heap[--nheap];
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < nheap && before(heap[l], heap[m]))
			m = l;
		if (r < nheap && before(heap[r], heap[m]))
			m = r;
		if (m == i)
			break;
		t = heap[m];
		heap[m] = heap[i];
		heap[i] = t;
		i = m;
	}
	return top;
}

static int parse_addr(char *s, struct sockaddr_in *sa)
{
	char *colon = strrchr(s, ':'), *end;
	unsigned long port;

	if (!colon)
		return -1;
	*colon = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, s, &sa->sin_addr) == 1 ? 0 : -1;
}

static int parse_us(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || end == s || v > 10000000ull)	/* at most 10 s */
		return -1;
	*ns = v * 1000u;
	return 0;
}

/* LADDR:LPORT=DADDR:DPORT:DELAY_US[:JITTER_US] */
static int parse_route(const char *arg, struct route *r)
{
	char buf[256], *eq, *dst, *f[4];
	int n = 0;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	eq = strchr(buf, '=');
	if (!eq)
		return -1;
	*eq = 0;
	if (parse_addr(buf, &r->local))
		return -1;
	dst = eq + 1;
	/* split the destination part at ':' : DADDR DPORT DELAY [JITTER] */
	f[n++] = dst;
	for (char *p = dst; *p; p++) {
		if (*p != ':')
			continue;
		if (n == 4)
			return -1;
		*p = 0;
		f[n++] = p + 1;
	}
	if (n < 3)
		return -1;
	if (parse_us(f[2], &r->delay_ns) || (n == 4 && parse_us(f[3], &r->jitter_ns)))
		return -1;
	f[1][-1] = ':';		/* DADDR:DPORT again */
	return parse_addr(f[0], &r->dest);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: delay-relay [-s SEED] [-r READY_FILE] [-t SECONDS] "
		   "LADDR:LPORT=DADDR:DPORT:DELAY_US[:JITTER_US]...\n");
}

static void receive(int ri)
{
	struct route *r = &routes[ri];

	for (;;) {
		unsigned char tmp[MAX_DGRAM + 1];
		int p = nfree ? freelist[nfree - 1] : -1;
		unsigned char *buf = p >= 0 ? pool[p].data : tmp;
		ssize_t n = recv(r->fd, buf, MAX_DGRAM, MSG_DONTWAIT | MSG_TRUNC);
		uint64_t now = mono_ns();

		if (n < 0)
			return;		/* EAGAIN: drained (or an error: retried on the next poll) */
		if (p < 0 || n > MAX_DGRAM) {
			r->dropped++;
			continue;
		}
		nfree--;
		pool[p].due = now + r->delay_ns + jitter(r->jitter_ns);
		pool[p].seq = seq++;
		pool[p].route = ri;
		pool[p].len = (size_t)n;
		heap_push(p);
	}
}

static void forward_due(void)
{
	while (nheap && pool[heap[0]].due <= mono_ns()) {
		int p = heap_pop();
		struct route *r = &routes[pool[p].route];
		ssize_t n = sendto(r->fd, pool[p].data, pool[p].len, MSG_DONTWAIT,
				   (struct sockaddr *)&r->dest, sizeof(r->dest));
		uint64_t late = mono_ns() - pool[p].due;

		if (n < 0) {
			r->dropped++;
		} else {
			if (!r->forwarded || late < r->late_min)
				r->late_min = late;
			if (late > r->late_max)
				r->late_max = late;
			r->late_sum += late;
			r->forwarded++;
		}
		freelist[nfree++] = p;
	}
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	double secs = 0;
	uint64_t end = 0;
	struct pollfd pfd[MAX_ROUTES];
	struct sigaction sa;
	sigset_t block, empty;
	int opt;

	rng_state = 1;
	while ((opt = getopt(argc, argv, "hs:r:t:")) != -1) {
		switch (opt) {
		case 's':
			rng_state = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			ready = optarg;
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc || argc - optind > MAX_ROUTES) {
		usage(stderr);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		struct route *r = &routes[nroutes++];

		if (parse_route(argv[i], r)) {
			fprintf(stderr, "delay-relay: bad route '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	for (int i = 0; i < QUEUE_LEN; i++)
		freelist[nfree++] = QUEUE_LEN - 1 - i;
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);	/* delivered only inside ppoll */
	sigemptyset(&empty);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	for (int i = 0; i < nroutes; i++) {
		struct route *r = &routes[i];
		int one = 1;

		r->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (r->fd < 0 || setsockopt(r->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(r->fd, (struct sockaddr *)&r->local, sizeof(r->local))) {
			fprintf(stderr, "delay-relay: route %d: socket/bind: %s\n", i, strerror(errno));
			return 1;
		}
		pfd[i].fd = r->fd;
		pfd[i].events = POLLIN;
	}
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || write(fd, "ready\n", 6) != 6 || close(fd)) {
			fprintf(stderr, "delay-relay: %s: %s\n", ready, strerror(errno));
			return 1;
		}
	}
	if (secs > 0)
		end = mono_ns() + (uint64_t)(secs * 1e9);

	while (!stop) {
		uint64_t now, wait = 100000000;	/* 100 ms when idle */
		struct timespec ts;
		int n;

		forward_due();
		now = mono_ns();
		if (end && now >= end)
			break;
		if (nheap)
			wait = pool[heap[0]].due > now ? pool[heap[0]].due - now : 0;
		if (end && end - now < wait)
			wait = end - now;
		ts.tv_sec = (time_t)(wait / 1000000000u);
		ts.tv_nsec = (long)(wait % 1000000000u);
		n = ppoll(pfd, (nfds_t)nroutes, &ts, &empty);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "delay-relay: ppoll: %s\n", strerror(errno));
			return 1;
		}
		for (int i = 0; n > 0 && i < nroutes; i++)
			if (pfd[i].revents & POLLIN)
				receive(i);
	}

	if (stop) {	/* the rest, each when due */
		for (int i = 0; i < nroutes; i++)
			receive(i);
		while (nheap) {
			uint64_t now = mono_ns(), due = pool[heap[0]].due;

			if (due > now) {
				struct timespec ts = { .tv_sec = (time_t)((due - now) / 1000000000u),
						       .tv_nsec = (long)((due - now) % 1000000000u) };

				nanosleep(&ts, NULL);
			}
			forward_due();
		}
	}
	for (int i = 0; i < nroutes; i++) {
		struct route *r = &routes[i];
		char la[INET_ADDRSTRLEN], da[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &r->local.sin_addr, la, sizeof(la));
		inet_ntop(AF_INET, &r->dest.sin_addr, da, sizeof(da));
		printf("route %s:%u -> %s:%u delay %" PRIu64 " jitter %" PRIu64 ": forwarded %" PRIu64
		       " dropped %" PRIu64 " late_us min %.1f mean %.1f max %.1f\n",
		       la, ntohs(r->local.sin_port), da, ntohs(r->dest.sin_port), r->delay_ns / 1000,
		       r->jitter_ns / 1000, r->forwarded, r->dropped, r->late_min / 1e3,
		       r->forwarded ? (double)r->late_sum / (double)r->forwarded / 1e3 : 0.0,
		       r->late_max / 1e3);
		close(r->fd);
	}
	printf("pending %d\n", nheap);
	return 0;
}
