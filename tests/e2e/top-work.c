/* SPDX-License-Identifier: MIT */
/*
 * The workload of trawl top's ground-truth tests (t1210, t1230): a thread
 * named "burner" that spins 5 ms of each 10 ms (half of one CPU) for
 * SECONDS, and a thread named "caller" that makes exactly N getppid calls
 * (one every CALL_US microseconds). Prints, when done:
 *   burner TID CPU_NS WALL_NS   (its thread CPU clock, its run's wall time)
 *   caller TID N
 * Usage: top-work SECONDS N [CALL_US [GO [END]]]: with GO, waits for that
 * file to exist before starting (a live test's "go"); with END (a fifo),
 * once done, blocks opening it until the test opens it (quiet: no event).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double seconds = 3;
static long ncalls = 1000, call_us = 1000;

static long long now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void nap(long long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static void *burner(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "burner");
	nap(20000000);		/* a switch: the kernel's events carry the new name */
	long long t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
	long long end = t0 + (long long)(seconds * 1e9);
	for (long long p = t0; p < end; p += 10000000) {
		while (now(CLOCK_MONOTONIC) < p + 5000000)
			;
		struct timespec ts = { (p + 10000000) / 1000000000, (p + 10000000) % 1000000000 };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	printf("burner %ld %lld %lld\n", (long)syscall(SYS_gettid),
	       now(CLOCK_THREAD_CPUTIME_ID) - c0, now(CLOCK_MONOTONIC) - t0);
	return NULL;
}

static void *caller(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "caller");
	nap(20000000);
	for (long i = 0; i < ncalls; i++) {
		syscall(SYS_getppid);
		nap(call_us * 1000);
	}
	printf("caller %ld %ld\n", (long)syscall(SYS_gettid), ncalls);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		ncalls = atol(argv[2]);
	if (argc > 3)
		call_us = atol(argv[3]);
	if (argc > 4)
		while (access(argv[4], F_OK))
			nap(10000000);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&a, NULL, burner, NULL);
	pthread_create(&b, NULL, caller, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (argc > 5) {
		int fd = open(argv[5], O_RDONLY);
		if (fd < 0)
			return 1;
		close(fd);
	}
	return 0;
}
